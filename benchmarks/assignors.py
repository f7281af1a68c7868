#!/usr/bin/env python3
"""How long does one server-side assignment take? (Kafka's ServerSideAssignorBenchmark)

    python benchmarks/assignors.py [--quick] [--repeat N] [--assignor uniform|range]

Prints milliseconds per full ``assignor.assign(...)`` call, the median (and minimum) of N
runs, on points of the grid of Kafka's jmh ``ServerSideAssignorBenchmark``
(``jmh-benchmarks/.../assignor/``):

* members 100, 1,000, 10,000; topics 10, 100, 1,000; partitions per topic
  ``members * 10 / topics`` (``partitionsToMemberRatio`` = 10, one of Kafka's 5/10/50);
* HOMOGENEOUS: every member subscribes to every topic. HETEROGENEOUS: as Kafka's
  ``AssignorBenchmarkUtils.createHeterogeneousBucketedMembers``, members and topics are
  cut into min(5, members) buckets (``ceil`` sized) and each bucket's members subscribe
  to that bucket's topics;
* FULL: a first assignment of all members. INCREMENTAL: ``members - 1`` members are
  assigned, then ``newMember`` joins (subscribed like ``member{members-2}``) and the
  timed call reassigns with the previous result as current assignment (the sticky path);
* member ids ``member0`` ... as in Kafka; topic ids random (seeded); racks off (neither
  assignor is rack-aware);
* each timed run starts after a ``gc.collect()``; ``assign()`` itself pauses the cyclic
  GC while it runs (see ``kgroup.gcpause.gc_paused``).

--quick runs 100 and 1,000 members and the two 10,000-member goal points (3 runs each).
Goals (kgroup issue): uniform HOMOGENEOUS 10,000 members x 100,000 partitions x 1,000
topics <= 50 ms; HETEROGENEOUS same size <= 1 s. No assertion: the numbers are printed.
"""
from __future__ import annotations

import argparse
import gc
import math
import os
import platform
import random
import statistics
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kgroup.assignors import (GroupSpec, MemberSubscription, SubscriptionType,  # noqa: E402
                              TopicMetadata, get_server_assignor)

RATIO = 10
MAX_BUCKETS = 5
GOALS = {  # (subscription, members, topics) -> milliseconds
    ("HOMOGENEOUS", 10_000, 1_000): 50.0,
    ("HETEROGENEOUS", 10_000, 1_000): 1_000.0,
}


def make_case(members: int, topic_count: int, subscription: str, kind: str, assignor_name: str):
    rng = random.Random(members * 7919 + topic_count)
    topic_ids = [uuid.UUID(int=rng.getrandbits(128), version=4) for _ in range(topic_count)]
    per_topic = members * RATIO // topic_count
    describer = TopicMetadata({tid: (f"topic{i}", per_topic) for i, tid in enumerate(topic_ids)})
    count = members - 1 if kind == "INCREMENTAL" else members
    subs: dict[str, MemberSubscription] = {}
    if subscription == "HOMOGENEOUS":
        everything = MemberSubscription(frozenset(topic_ids))
        for i in range(count):
            subs[f"member{i}"] = everything
    else:
        buckets = min(MAX_BUCKETS, count)
        topics_per_bucket = math.ceil(topic_count / buckets)
        members_per_bucket = math.ceil(count / buckets)
        for b in range(buckets):
            bucket_sub = MemberSubscription(
                frozenset(topic_ids[b * topics_per_bucket:(b + 1) * topics_per_bucket]))
            for i in range(b * members_per_bucket, min((b + 1) * members_per_bucket, count)):
                subs[f"member{i}"] = bucket_sub
    stype = SubscriptionType[subscription]
    assignor = get_server_assignor(assignor_name)
    spec = GroupSpec(subs, stype)
    if kind == "INCREMENTAL":
        previous = assignor.assign(spec, describer)
        joined = dict(subs)
        joined["newMember"] = (subs[f"member{members - 2}"] if subscription == "HETEROGENEOUS"
                               else MemberSubscription(frozenset(topic_ids)))
        spec = GroupSpec(joined, stype, previous)
    return assignor, spec, describer, per_topic * topic_count


def time_case(assignor, spec, describer, repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        assignor.assign(spec, describer)
        times.append((time.perf_counter() - start) * 1000)
    return times


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (f"{platform.python_implementation()} {platform.python_version()} on "
            f"{platform.system()} {platform.machine()}, {os.cpu_count()} cores ({cpu})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small grid + the goal points, 3 runs")
    parser.add_argument("--repeat", type=int, help="runs per point (default 7, 3 with --quick)")
    parser.add_argument("--assignor", choices=["uniform", "range"], action="append",
                        help="only this assignor (repeatable); default both")
    args = parser.parse_args()
    repeat = args.repeat or (3 if args.quick else 7)
    assignors = args.assignor or ["uniform", "range"]

    points = []
    for assignor_name in assignors:
        for subscription in ("HOMOGENEOUS", "HETEROGENEOUS"):
            for members in (100, 1_000, 10_000):
                for topic_count in (10, 100, 1_000):
                    if args.quick and members == 10_000 and (
                            topic_count != 1_000 or assignor_name != "uniform"):
                        continue
                    for kind in ("FULL", "INCREMENTAL"):
                        points.append((assignor_name, subscription, members, topic_count, kind))

    print(f"kgroup server-side assignors: {machine()}")
    print(f"ms per assign() call: median of N={repeat} runs (min in brackets); "
          f"partitions = members x {RATIO}")
    header = f"{'assignor':8} {'subscription':13} {'members':>7} {'topics':>6} {'partitions':>10} " \
             f"{'type':11} {'median ms':>10} {'(min)':>9}  goal"
    print(header)
    print("-" * len(header))
    for assignor_name, subscription, members, topic_count, kind in points:
        assignor, spec, describer, partitions = make_case(
            members, topic_count, subscription, kind, assignor_name)
        times = time_case(assignor, spec, describer, repeat)
        median = statistics.median(times)
        goal = GOALS.get((subscription, members, topic_count)) if assignor_name == "uniform" else None
        verdict = "" if goal is None else f"<= {goal:g} ms: {'met' if median <= goal else 'NOT met'}"
        print(f"{assignor_name:8} {subscription:13} {members:>7,} {topic_count:>6,} {partitions:>10,} "
              f"{kind:11} {median:>10.2f} {'(' + format(min(times), '.2f') + ')':>9}  {verdict}",
              flush=True)


if __name__ == "__main__":
    main()
