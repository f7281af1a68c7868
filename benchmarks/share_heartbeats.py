#!/usr/bin/env python3
"""How fast does the coordinator serve KIP-932 ShareGroupHeartbeats?

    python benchmarks/share_heartbeats.py [--members 10 100 1000] [--partitions 1000] [--quick]

For each profile and size: N members join one share group one by one (each join bumps the group
epoch and runs the simple assignor over every member; the first join initialises every
share-partition in the real share coordinator), then every member heartbeats once more (under
kafka that is when the initialised share-partitions get assigned and each member takes its new
target at once: no reconciliation), then steady heartbeats that change nothing. Prints ms per
join, ms per catch-up heartbeat, µs per steady heartbeat and steady heartbeats per second, with
the records written to __consumer_offsets. No assertion: the numbers are printed.
"""
from __future__ import annotations

import argparse
import platform
import time
import uuid

from kgroup import Cluster, Coordinator
from kgroup.protocol import request


def heartbeat(c: Coordinator, member_id: str, epoch: int, *, join: bool = False):
    return c.handle(request("ShareGroupHeartbeat", 1, group_id="bench", member_id=member_id, member_epoch=epoch,
                            subscribed_topic_names=["t"] if join else None))


def run(profile: str, members: int, partitions: int) -> dict:
    c = Coordinator(Cluster({"t": partitions}, seed=1), profile=profile,
                    config={"group.share.max.size": max(members, 200)})
    ids = [str(uuid.UUID(int=i + 1)) for i in range(members)]  # client-generated, as the share consumer does
    epochs = {}
    t0 = time.perf_counter()
    for m in ids:
        epochs[m] = heartbeat(c, m, 0, join=True).member_epoch
    join_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    for m in ids:
        epochs[m] = heartbeat(c, m, epochs[m]).member_epoch
    catch_up_s = time.perf_counter() - t0
    rounds = max(1, 2000 // members)
    t0 = time.perf_counter()
    for _ in range(rounds):
        for m in ids:
            heartbeat(c, m, epochs[m])
    steady_s = time.perf_counter() - t0
    return {"members": members, "join_ms": join_s * 1000 / members, "catch_up_ms": catch_up_s * 1000 / members,
            "steady_us": steady_s * 1e6 / (rounds * members), "records": c.position}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--members", type=int, nargs="*", default=[10, 100, 1000])
    ap.add_argument("--partitions", type=int, default=1000)
    ap.add_argument("--quick", action="store_true", help="10 and 100 members only")
    args = ap.parse_args()
    sizes = [10, 100] if args.quick else args.members
    print(f"# share-group heartbeats, one topic of {args.partitions} partitions "
          f"({platform.python_implementation()} {platform.python_version()})")
    print(f"{'profile':>8} {'members':>8} {'ms/join':>9} {'ms/catch-up hb':>15} {'µs/steady hb':>13} "
          f"{'steady hb/s':>12} {'records':>8}")
    for profile in ("kip", "kafka"):
        for n in sizes:
            r = run(profile, n, args.partitions)
            print(f"{profile:>8} {r['members']:>8} {r['join_ms']:>9.2f} {r['catch_up_ms']:>15.3f} "
                  f"{r['steady_us']:>13.1f} {1e6 / r['steady_us']:>12,.0f} {r['records']:>8}")


if __name__ == "__main__":
    main()
