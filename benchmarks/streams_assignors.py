#!/usr/bin/env python3
"""How fast are KIP-1071's task assignors? Points of Kafka's StreamsStickyAssignorBenchmark grid.

    python benchmarks/streams_assignors.py [--quick] [--repeat 5]

For members × subtopologies × partitions × standby replicas × members per process, prints the
milliseconds of a full assignment (nobody owns anything yet) and of an incremental one (one
member joins a balanced group), best of `--repeat`, for `sticky` and `highly_available`.
Every other subtopology is stateful (so one standby replica gives half as many standbys as
active tasks). The goal row: 1,000 members, 10,000 active + 5,000 standby tasks.
No assertion: the numbers are printed.
"""
from __future__ import annotations

import argparse
import itertools
import platform
import time

from kgroup.assignors.streams import GroupSpec, MemberSpec, SubtopologySpec, TaskSets, get_task_assignor
from kgroup.gcpause import gc_paused


def spec_of(members: int, subtopologies: int, partitions: int, standbys: int, per_process: int,
            current: dict[str, TaskSets] | None = None) -> GroupSpec:
    subs = {str(i): SubtopologySpec(partitions, i % 2 == 0) for i in range(subtopologies)}
    ms = {f"member-{i:05d}": MemberSpec(f"member-{i:05d}", f"process-{i // per_process:05d}", 0,
                                        (current or {}).get(f"member-{i:05d}", TaskSets()))
          for i in range(members)}
    return GroupSpec(members=ms, subtopologies=subs, num_standby_replicas=standbys)


def best_ms(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        with gc_paused():
            t0 = time.perf_counter()
            fn()
            best = min(best, time.perf_counter() - t0)
    return best * 1000


def measure(name: str, members: int, subtopologies: int, partitions: int, standbys: int, per_process: int,
            repeat: int) -> dict:
    assignor = get_task_assignor(name)
    full = spec_of(members, subtopologies, partitions, standbys, per_process)
    result = assignor.assign(full)
    # one more member joins the balanced group
    grown = spec_of(members + 1, subtopologies, partitions, standbys, per_process, result)
    return {"full_ms": best_ms(lambda: assignor.assign(full), repeat),
            "incremental_ms": best_ms(lambda: assignor.assign(grown), repeat),
            "active": sum(len(r.active_ids()) for r in result.values()),
            "standby": sum(len(r.standby_ids()) for r in result.values())}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="the goal row and a few small points only")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--assignors", nargs="*", default=["sticky", "highly_available"])
    args = ap.parse_args()
    if args.quick:
        grid = [(100, 10, 10, 0, 1), (100, 10, 10, 1, 1), (1000, 100, 100, 1, 1), (1000, 100, 100, 1, 50)]
    else:
        grid = list(itertools.product([100, 1000], [10, 100], [10, 100], [0, 1], [1, 50]))
    print(f"# KIP-1071 task assignors, best of {args.repeat} "
          f"({platform.python_implementation()} {platform.python_version()}); half the subtopologies stateful")
    print(f"{'assignor':>17} {'members':>8} {'subtops':>8} {'parts':>6} {'standby':>8} {'per proc':>9} "
          f"{'active':>7} {'standbys':>9} {'full ms':>9} {'incr ms':>9}")
    for name in args.assignors:
        for members, subs, parts, standbys, per_process in grid:
            r = measure(name, members, subs, parts, standbys, per_process, args.repeat)
            goal = "  <- goal: <= 25 ms" if (members, subs, parts, standbys) == (1000, 100, 100, 1) else ""
            print(f"{name:>17} {members:>8} {subs:>8} {parts:>6} {standbys:>8} {per_process:>9} {r['active']:>7} "
                  f"{r['standby']:>9} {r['full_ms']:>9.1f} {r['incremental_ms']:>9.1f}{goal}")


if __name__ == "__main__":
    main()
