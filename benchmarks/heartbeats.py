#!/usr/bin/env python3
"""How fast does the coordinator serve KIP-848 and KIP-1071 (Streams) heartbeats?

    python benchmarks/heartbeats.py [--members 10 100 1000] [--partitions 1000] [--quick]

For each group type and size: N members join one by one (each join bumps the group epoch and
runs the server-side assignor over every member: uniform for a consumer group, sticky for a
stateless Streams group with one task per partition), then every member heartbeats until the
group is Stable (reconciliation: revocations, then assignments), then steady-state heartbeats
that change nothing. Prints milliseconds per join, per reconciling heartbeat, microseconds per
steady heartbeat and steady heartbeats per second, with the records written. No assertion:
the numbers are printed.
"""
from __future__ import annotations

import argparse
import platform
import time

from kgroup import Cluster, Coordinator
from kgroup.protocol import request


def heartbeat(c, member_id, epoch, owned, *, join=False):
    kw = dict(group_id="bench", member_id=member_id, member_epoch=epoch, rebalance_timeout=30_000 if join else -1,
              subscribed_topic_names=["t"] if join else None,
              topic_partitions=[{"topic_id": t, "partitions": sorted(ps)} for t, ps in owned.items()])
    return c.handle(request("ConsumerGroupHeartbeat", 1, **kw))


def streams_heartbeat(c, member_id, epoch, owned, *, join=False):
    kw = dict(group_id="bench", member_id=member_id, member_epoch=epoch, endpoint_information_epoch=0,
              rebalance_timeout=30_000 if join else -1,
              topology={"epoch": 0, "subtopologies": [{"subtopology_id": "0", "source_topics": ["t"],
                                                       "state_changelog_topics": [], "repartition_source_topics": [],
                                                       "copartition_groups": []}]} if join else None,
              active_tasks=[{"subtopology_id": s, "partitions": sorted(ps)} for s, ps in owned.items()],
              standby_tasks=[], warmup_tasks=[], process_id=member_id if join else None,
              client_tags=[] if join else None)
    return c.handle(request("StreamsGroupHeartbeat", 0, **kw))


def run_streams(members: int, partitions: int) -> dict:
    c = Coordinator(Cluster({"t": partitions}, seed=1),
                    config={"group.streams.session.timeout.ms": 60_000, "group.streams.max.session.timeout.ms": 60_000})
    ids = [f"member-{i}" for i in range(members)]
    owned: dict[str, dict] = {m: {} for m in ids}
    epochs = {}

    def take(m, r):
        epochs[m] = r.member_epoch
        if r.active_tasks is not None:
            owned[m] = {t.subtopology_id: set(t.partitions) for t in r.active_tasks}
    t0 = time.perf_counter()
    for m in ids:
        take(m, streams_heartbeat(c, m, 0, {}, join=True))
    join_s = time.perf_counter() - t0
    records_after_join = c.position
    t0, reconciling = time.perf_counter(), 0
    group = c.groups["bench"]
    while group.state != "Stable":
        for m in ids:
            take(m, streams_heartbeat(c, m, epochs[m], owned[m]))
            reconciling += 1
    reconcile_s = time.perf_counter() - t0
    rounds = max(1, 2000 // members)
    t0 = time.perf_counter()
    for _ in range(rounds):
        for m in ids:
            streams_heartbeat(c, m, epochs[m], owned[m])
    steady_s = time.perf_counter() - t0
    return {"members": members, "join_ms": join_s * 1000 / members, "reconcile_ms": reconcile_s * 1000 / reconciling,
            "reconciling_heartbeats": reconciling, "steady_us": steady_s * 1e6 / (rounds * members),
            "records": c.position, "records_joining": records_after_join}


def run(members: int, partitions: int) -> dict:
    c = Coordinator(Cluster({"t": partitions}, seed=1),
                    config={"group.consumer.session.timeout.ms": 60_000, "group.consumer.max.session.timeout.ms": 60_000})
    ids = [f"member-{i}" for i in range(members)]
    owned = {m: {} for m in ids}
    epochs = {}
    t0 = time.perf_counter()
    for m in ids:
        r = heartbeat(c, m, 0, {}, join=True)
        epochs[m] = r.member_epoch
        owned[m] = {tp.topic_id: set(tp.partitions) for tp in r.assignment.topic_partitions}
    join_s = time.perf_counter() - t0
    records_after_join = c.position

    t0, reconciling = time.perf_counter(), 0
    group = c.groups["bench"]
    while group.state != "Stable":
        for m in ids:
            r = heartbeat(c, m, epochs[m], owned[m])
            reconciling += 1
            epochs[m] = r.member_epoch
            if r.assignment is not None:
                owned[m] = {tp.topic_id: set(tp.partitions) for tp in r.assignment.topic_partitions}
    reconcile_s = time.perf_counter() - t0

    rounds = max(1, 2000 // members)
    t0 = time.perf_counter()
    for _ in range(rounds):
        for m in ids:
            heartbeat(c, m, epochs[m], owned[m])
    steady_s = time.perf_counter() - t0
    return {"members": members, "join_ms": join_s * 1000 / members, "reconcile_ms": reconcile_s * 1000 / reconciling,
            "reconciling_heartbeats": reconciling, "steady_us": steady_s * 1e6 / (rounds * members),
            "records": c.position, "records_joining": records_after_join}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--members", type=int, nargs="*", default=[10, 100, 1000])
    ap.add_argument("--partitions", type=int, default=1000)
    ap.add_argument("--quick", action="store_true", help="10 and 100 members only")
    args = ap.parse_args()
    sizes = [10, 100] if args.quick else args.members
    print(f"# heartbeats, one topic of {args.partitions} partitions "
          f"({platform.python_implementation()} {platform.python_version()})")
    print(f"{'group':>8} {'members':>8} {'ms/join':>9} {'ms/reconcile hb':>16} {'hb to Stable':>13} "
          f"{'µs/steady hb':>13} {'steady hb/s':>12} {'records':>8}")
    for kind, fn in (("consumer", run), ("streams", run_streams)):
        for n in sizes:
            r = fn(n, args.partitions)
            print(f"{kind:>8} {r['members']:>8} {r['join_ms']:>9.2f} {r['reconcile_ms']:>16.3f} "
                  f"{r['reconciling_heartbeats']:>13} {r['steady_us']:>13.1f} {1e6 / r['steady_us']:>12,.0f} "
                  f"{r['records']:>8}")


if __name__ == "__main__":
    main()
