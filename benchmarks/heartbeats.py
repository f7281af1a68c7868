#!/usr/bin/env python3
"""How fast does the coordinator serve heartbeats, per group type?

    python benchmarks/heartbeats.py [--members 10 1000 10000] [--partitions 1000]
                                    [--types consumer streams share classic] [--profile kip] [--quick]
                                    [--repeat 3]
    python benchmarks/heartbeats.py --rolling [--members 1000 10000] [--profiles kip kafka]

`--rolling`: the time to Stable of a rolling start, under both profiles (`kgroup.clients.rolling_start`).

For each group type and size: N members join at once (each join bumps the group epoch and runs
the server-side assignor: uniform for a KIP-848 consumer group, sticky for a stateless Streams
group with one task per partition, simple for a share group; a classic group joins through
JoinGroup/SyncGroup with the leader's assignment), every member heartbeats until the group is
Stable, then steady heartbeats that change nothing.

A steady heartbeat is sent as the real client sends it: only the fields that changed since the
last request, everything else null (Kafka's `ConsumerHeartbeatRequestManager`,
`StreamsGroupHeartbeatRequestManager`, `ShareHeartbeatRequestManager`: subscription, topology,
owned partitions/tasks, process id and client tags only when they changed or on join;
rebalance timeout -1). The requests are built once, before the clock starts: building a
request is the client's cost, not the coordinator's. Between rounds the clock moves 100 ms so
that each heartbeat really moves its member's session deadline.

Prints ms per join, ms per reconciling heartbeat, the heartbeats to Stable, µs per steady
heartbeat (process CPU time, the best of `--repeat` timed runs: other processes share the CPU), steady
heartbeats per second, the records in the log (which steady heartbeats must not grow). No
assertion: the numbers are printed.
"""
from __future__ import annotations

import argparse
import platform
import time
import uuid

from kgroup import Cluster, Coordinator
from kgroup.clients import crowd
from kgroup.protocol import request

GROUP = "bench"
SHARE_MAX_SIZE = 1000  # the largest group.share.max.size Kafka accepts
STEADY_HEARTBEATS = 20_000  # per timed run, at least one round
JOIN_EVERY_MS = 5      # rolling start: coordinator time between two joins
ROUND_MS = 100         # coordinator time between two rounds of heartbeats


# -- KIP-848 consumer group ----------------------------------------------------------------

def _consumer_hb(c, member_id, epoch, owned, *, join=False):
    return crowd.consumer_heartbeat(c, GROUP, member_id, epoch, owned, topics=["t"] if join else None)


def setup_consumer(members: int, partitions: int, profile: str):
    """A Stable KIP-848 group; returns (coordinator, steady requests, stats)."""
    c = Coordinator(Cluster({"t": partitions}, seed=1), profile=profile,
                    config={"group.consumer.session.timeout.ms": 60_000,
                            "group.consumer.max.session.timeout.ms": 60_000,
                            "group.consumer.max.size": max(members, 1000)})
    ids = [str(uuid.UUID(int=i + 1)) for i in range(members)]  # client-generated, as KIP-1082 clients do
    owned: dict[str, dict] = {m: {} for m in ids}
    sent: dict[str, dict | None] = {}
    epochs = {}

    def take(m, r):
        epochs[m] = r.member_epoch
        if r.assignment is not None:
            owned[m] = {tp.topic_id: set(tp.partitions) for tp in r.assignment.topic_partitions}

    t0 = time.perf_counter()
    for m in ids:
        take(m, _consumer_hb(c, m, 0, {}, join=True))
        sent[m] = {}
    join_s = time.perf_counter() - t0
    t0, reconciling = time.perf_counter(), 0
    group = c.groups[GROUP]
    while group.state != "Stable" or any(epochs[m] != group.group_epoch for m in ids):
        c.advance(ROUND_MS)   # a batched assignment (KIP-1263) comes due only as time passes
        for m in ids:
            changed = owned[m] != sent[m]
            sent[m] = {t: set(ps) for t, ps in owned[m].items()}
            take(m, _consumer_hb(c, m, epochs[m], sent[m] if changed else None))
            reconciling += 1
    reconcile_s = time.perf_counter() - t0
    steady = [request("ConsumerGroupHeartbeat", 1, group_id=GROUP, member_id=m, member_epoch=epochs[m],
                      rebalance_timeout=-1) for m in ids]
    return c, steady, join_s, reconcile_s, reconciling


# -- KIP-1071 Streams group ----------------------------------------------------------------

def _streams_hb(c, member_id, epoch, owned, *, join=False):
    return crowd.streams_heartbeat(c, GROUP, member_id, epoch, owned, topics=["t"] if join else None)


def setup_streams(members: int, partitions: int, profile: str):
    """A Stable Streams group (stateless, one subtopology); returns as `setup_consumer`."""
    c = Coordinator(Cluster({"t": partitions}, seed=1), profile=profile,
                    config={"group.streams.session.timeout.ms": 60_000,
                            "group.streams.max.session.timeout.ms": 60_000,
                            "group.streams.max.size": max(members, 1000)})
    ids = [str(uuid.UUID(int=i + 1)) for i in range(members)]
    owned: dict[str, dict] = {m: {} for m in ids}
    sent: dict[str, dict | None] = {}
    epochs = {}

    def take(m, r):
        epochs[m] = r.member_epoch
        if r.active_tasks is not None:
            owned[m] = {t.subtopology_id: set(t.partitions) for t in r.active_tasks}

    t0 = time.perf_counter()
    for m in ids:
        take(m, _streams_hb(c, m, 0, {}, join=True))
        sent[m] = {}
    join_s = time.perf_counter() - t0
    t0, reconciling = time.perf_counter(), 0
    group = c.groups[GROUP]
    while group.state != "Stable" or any(epochs[m] != group.group_epoch for m in ids):
        c.advance(ROUND_MS)   # a batched assignment (KIP-1263) comes due only as time passes
        for m in ids:
            changed = owned[m] != sent[m]
            sent[m] = {s: set(ps) for s, ps in owned[m].items()}
            take(m, _streams_hb(c, m, epochs[m], sent[m] if changed else None))
            reconciling += 1
    reconcile_s = time.perf_counter() - t0
    steady = [request("StreamsGroupHeartbeat", 0, group_id=GROUP, member_id=m, member_epoch=epochs[m],
                      endpoint_information_epoch=0, rebalance_timeout=-1) for m in ids]
    return c, steady, join_s, reconcile_s, reconciling


# -- KIP-932 share group -------------------------------------------------------------------

def setup_share(members: int, partitions: int, profile: str):
    """A Stable share group: no reconciliation (a member takes its target at once); under
    kafka the share-partitions get assigned on the heartbeat after their initialisation."""
    c = Coordinator(Cluster({"t": partitions}, seed=1), profile=profile,
                    config={"group.share.max.size": min(max(members, 200), SHARE_MAX_SIZE),
                            "group.share.session.timeout.ms": 60_000,
                            "group.share.max.session.timeout.ms": 60_000})
    ids = [str(uuid.UUID(int=i + 1)) for i in range(members)]  # client-generated, as the share consumer does
    epochs = {}

    def hb(m, *, join=False):
        return c.handle(request("ShareGroupHeartbeat", 1, group_id=GROUP, member_id=m, member_epoch=epochs.get(m, 0),
                                subscribed_topic_names=["t"] if join else None))
    t0 = time.perf_counter()
    for m in ids:
        epochs[m] = hb(m, join=True).member_epoch
    join_s = time.perf_counter() - t0
    t0, reconciling = time.perf_counter(), 0
    group = c.groups[GROUP]
    while reconciling == 0 or any(epochs[m] != group.group_epoch for m in ids):
        c.advance(ROUND_MS)   # as above
        for m in ids:
            epochs[m] = hb(m).member_epoch
            reconciling += 1
    reconcile_s = time.perf_counter() - t0
    steady = [request("ShareGroupHeartbeat", 1, group_id=GROUP, member_id=m, member_epoch=epochs[m]) for m in ids]
    return c, steady, join_s, reconcile_s, reconciling


# -- classic group -------------------------------------------------------------------------

def setup_classic(members: int, partitions: int, profile: str):
    """A Stable classic group: every member joins (v9: MEMBER_ID_REQUIRED, then with its id), the
    initial rebalance delay passes, the leader syncs an assignment, the followers sync."""
    c = Coordinator(Cluster({"t": partitions}, seed=1), profile=profile,
                    config={"group.max.size": max(members, 1000)})
    meta = b"\x00\x00\x00\x00\x00\x01\x00\x01t\xff\xff\xff\xff"  # ConsumerProtocolSubscription v0, topic t

    def join(member_id=""):
        return c.handle(request("JoinGroup", 9, group_id=GROUP, session_timeout=60_000, rebalance_timeout=60_000,
                                member_id=member_id, group_instance_id=None, protocol_type="consumer",
                                protocols=[{"name": "range", "metadata": meta}]))
    t0 = time.perf_counter()
    joins = [join(join().response.member_id) for _ in range(members)]
    c.advance(c.config["group.initial.rebalance.delay.ms"] * 3 + 1)
    join_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    answers = [j.response for j in joins]
    leader = answers[0].leader
    generation = answers[0].generation_id

    def sync(member_id, assignments):
        return c.handle(request("SyncGroup", 5, group_id=GROUP, generation_id=generation, member_id=member_id,
                                group_instance_id=None, protocol_type="consumer", protocol_name="range",
                                assignments=assignments))
    ids = [a.member_id for a in answers]
    sync(leader, [{"member_id": m, "assignment": b""} for m in ids])
    for m in ids:
        if m != leader:
            sync(m, [])
    reconcile_s = time.perf_counter() - t0
    steady = [request("Heartbeat", 4, group_id=GROUP, generation_id=generation, member_id=m, group_instance_id=None)
              for m in ids]
    return c, steady, join_s, reconcile_s, members


SETUPS = {"consumer": setup_consumer, "streams": setup_streams, "share": setup_share, "classic": setup_classic}


# -- a rolling start: time to Stable -------------------------------------------------------



def rolling_start(kind: str, members: int, partitions: int, profile: str) -> dict:
    """`kgroup.clients.rolling_start` on a fresh coordinator: wall seconds to Stable. The members
    send nothing while the others join (a 60 s session outlasts 10,000 joins), so what is timed is
    the joins and the heartbeats to Stable."""
    c = Coordinator(Cluster({"t": partitions}, seed=1), profile=profile, config={
        f"group.{kind}.session.timeout.ms": 60_000, f"group.{kind}.max.session.timeout.ms": 60_000,
        f"group.{kind}.max.size": min(max(members, 200), SHARE_MAX_SIZE) if kind == "share" else max(members, 1000)})
    t0 = time.perf_counter()
    run = crowd.rolling_start(c, GROUP, kind, members=members, topics=["t"], join_every_ms=JOIN_EVERY_MS,
                              round_ms=ROUND_MS, heartbeat_ms=None, sample_every=members)
    return {"stable_s": time.perf_counter() - t0, "coordinator_s": run.stable_ms / 1000, "rounds": run.rounds,
            "epoch": c.groups[GROUP].group_epoch}


def rolling_main(args) -> None:
    print(f"# rolling start: a join every {JOIN_EVERY_MS} ms of coordinator time, then rounds of heartbeats "
          f"{ROUND_MS} ms apart until Stable; one topic of {args.partitions} partitions "
          f"({platform.python_implementation()} {platform.python_version()})")
    print(f"{'group':>8} {'members':>8} {'profile':>8} {'to Stable (s)':>14} {'coordinator s':>14} {'rounds':>7} "
          f"{'group epoch':>12}")
    for kind in [k for k in args.types if k != "classic"]:
        for n in args.members:
            if kind == "share" and n > SHARE_MAX_SIZE:
                continue
            for profile in args.profiles:
                r = rolling_start(kind, n, args.partitions, profile)
                print(f"{kind:>8} {n:>8} {profile:>8} {r['stable_s']:>14.1f} {r['coordinator_s']:>14.1f} "
                      f"{r['rounds']:>7} {r['epoch']:>12}", flush=True)


def steady_us(c: Coordinator, steady: list, repeat: int) -> float:
    """µs per steady heartbeat: the best of `repeat` timed runs of whole rounds."""
    rounds = max(1, STEADY_HEARTBEATS // len(steady))
    handle = c.handle
    best = float("inf")
    for _ in range(repeat):
        t0 = time.process_time()  # CPU time of this process: other processes share the machine
        for _ in range(rounds):
            for req in steady:
                handle(req)
            c.advance(100)
        best = min(best, time.process_time() - t0)
    return best * 1e6 / (rounds * len(steady))


def bench(kind: str, members: int, partitions: int, profile: str, repeat: int) -> dict:
    c, steady, join_s, reconcile_s, reconciling = SETUPS[kind](members, partitions, profile)
    before = c.position
    # warm up, and check that a steady heartbeat is what it claims: an answer without error
    # that writes nothing
    for req in steady:
        code = c.handle(req).error_code
        assert int(code) == 0, (kind, req, code)
    us = steady_us(c, steady, repeat)
    assert c.position == before, f"{kind}: steady heartbeats wrote {c.position - before} records"
    return {"members": members, "join_ms": join_s * 1000 / members, "reconcile_ms": reconcile_s * 1000 / reconciling,
            "reconciling": reconciling, "steady_us": us, "records": c.position}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--members", type=int, nargs="*", default=[10, 1000, 10000])
    ap.add_argument("--partitions", type=int, default=1000)
    ap.add_argument("--types", nargs="*", default=list(SETUPS), choices=list(SETUPS))
    ap.add_argument("--profile", default="kip", choices=["kip", "kafka"])
    ap.add_argument("--repeat", type=int, default=3, help="timed runs per size; the best is printed")
    ap.add_argument("--quick", action="store_true", help="10 and 1000 members only")
    ap.add_argument("--rolling", action="store_true",
                    help="time to Stable of a rolling start instead (both profiles unless --profiles)")
    ap.add_argument("--profiles", nargs="*", default=["kip", "kafka"], choices=["kip", "kafka"],
                    help="with --rolling: the profiles to run")
    args = ap.parse_args()
    if args.quick:
        args.members = [n for n in args.members if n <= 1000]
    if args.rolling:
        rolling_main(args)
        return
    sizes = args.members
    print(f"# heartbeats, one topic of {args.partitions} partitions, profile {args.profile} "
          f"({platform.python_implementation()} {platform.python_version()}; best of {args.repeat})")
    print(f"{'group':>8} {'members':>8} {'ms/join':>9} {'ms/reconcile hb':>16} {'hb to Stable':>13} "
          f"{'µs/steady hb':>13} {'steady hb/s':>12} {'records':>8}")
    for kind in args.types:
        for n in sizes:
            if kind == "share" and n > SHARE_MAX_SIZE:
                print(f"{kind:>8} {n:>8}   (a share group has at most {SHARE_MAX_SIZE:,} members: "
                      "group.share.max.size)", flush=True)
                continue
            r = bench(kind, n, args.partitions, args.profile, args.repeat)
            print(f"{kind:>8} {r['members']:>8} {r['join_ms']:>9.2f} {r['reconcile_ms']:>16.3f} "
                  f"{r['reconciling']:>13} {r['steady_us']:>13.1f} {1e6 / r['steady_us']:>12,.0f} "
                  f"{r['records']:>8}", flush=True)


if __name__ == "__main__":
    main()
