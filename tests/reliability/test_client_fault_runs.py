"""Randomized runs of each group type's simulated clients over a faulty network
(`FaultyTransport`: seeded drops, duplicates, reorders, plus member restarts), checking the
safety invariants Kafka's clients and coordinator keep under such faults:

- no partition (classic, KIP-848) and no active task (KIP-1071) owned by two running clients at
  any sampled tick — Kafka's revoke-before-assign (KIP-429, KIP-848 reconciliation);
- liveness: once the network heals, the group stabilises with everything owned exactly once;
- nothing acknowledged lost: an offset commit a client saw succeed is what the coordinator
  returns (until the owner commits again); a share record whose ACCEPT a client saw succeed is
  Acknowledged for good (KIP-932), and every produced record is in the end acknowledged.

Counts "steps explored", "faults injected" and "records lost" in the `reliability` fixture."""
from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import profile_settings
from kgroup import Cluster, Coordinator, ErrorCode
from kgroup.clients import (ClassicConsumer, ConsumerConfig, ConsumerGroupConsumer, FaultyTransport, Simulation,
                            StreamsApplication, StreamsConfig)
from kgroup.clients.share import ShareConsumer
from kgroup.clients.streams_topology import stateless
from kgroup.groups.share.partition import share_partition
from kgroup.protocol import request

E = ErrorCode
SEEDS = st.integers(min_value=0, max_value=2**32 - 1)
RUN_MS = 40_000
#: the profile's settings; the `reliability` fixture is a run-wide Counter, shared on purpose
FAULT_RUNS = settings(profile_settings(), suppress_health_check=[*profile_settings().suppress_health_check,
                                                                 HealthCheck.function_scoped_fixture])


def faulty(c: Coordinator, seed: int) -> FaultyTransport:
    rng = random.Random(seed)
    return FaultyTransport(c, seed=seed, drop=rng.choice([0.02, 0.05, 0.1]), duplicate=rng.choice([0.0, 0.05]),
                           reorder=rng.choice([0.0, 0.05]), hold_ms=rng.choice([200, 1_000, 3_000]))


def churn(sim: Simulation, seed: int) -> None:
    """Restart one member mid-run (close, then start), as a rolling bounce does."""
    rng = random.Random(seed ^ 0x5EED)
    victim = rng.choice(sim.consumers)
    at = rng.randrange(5_000, RUN_MS // 2)
    sim.at(at, f"stop {victim.name}", victim.close)
    sim.at(at + rng.randrange(1_000, 10_000), f"start {victim.name}", victim.start)


def members_double_owned(sim: Simulation, group_id: str) -> list:
    """What two running clients that are both members of the group (as the coordinator sees
    it) own at once. A client the coordinator removed is a zombie until its next heartbeat
    tells it; Kafka does not keep it from running its tasks meanwhile (its commits and
    transactions are fenced), so it does not count here."""
    members = sim.c.groups[group_id].members if group_id in sim.c.groups else {}
    seen: dict = {}
    for k in sim.consumers:
        if k.running and k.member_id in members:
            for tp in k.owned:
                seen.setdefault(tp, []).append(k.name)
    return [(tp, names) for tp, names in seen.items() if len(names) > 1]


def run_and_heal(sim: Simulation, t: FaultyTransport, group_id: str, reliability, *, complete: bool = True,
                 zombies: bool = False) -> None:
    """Run under faults checking no double ownership, then heal the network and stabilise.
    `zombies`: check exclusivity among the group's members only (see `members_double_owned`)."""
    ticks = 0

    def step() -> None:
        sim.step()
        if zombies:
            assert not members_double_owned(sim, group_id), (sim.c.now(), members_double_owned(sim, group_id))

    for _ in range(RUN_MS // sim.tick_ms):
        step()
        ticks += 1
    assert zombies or sim.double_owned_samples() == 0, sim.double_owned_partitions()[:5]
    t.p = dict.fromkeys(t.p, 0.0)
    t.flush()
    t0 = sim.c.now()
    while not _stable(sim, group_id):
        assert sim.c.now() - t0 < 240_000, f"group {group_id} did not stabilise"
        step()
    ms = sim.c.now() - t0
    assert zombies or sim.double_owned_samples() == 0, sim.double_owned_partitions()[:5]
    owned = sorted(tp for k in sim.consumers if k.running for tp in k.owned)
    if complete:
        assert owned == sorted(sim.partitions())
    reliability["steps explored"] += ticks + ms // sim.tick_ms
    reliability["faults injected"] += t.injected


def _stable(sim: Simulation, group_id: str) -> bool:
    g = sim.c.groups.get(group_id)
    return (g is not None and g.state == "Stable"
            and all(not k.rejoin_needed and str(k.state) == "stable" and not getattr(k, "unsettled", False)
                    for k in sim.consumers if k.running))


def committed_offsets(c: Coordinator, group_id: str) -> dict:
    resp = c.handle(request("OffsetFetch", 8, groups=[{"group_id": group_id, "topics": None}]))
    return {(x.name, p.partition_index): p.committed_offset for x in resp.groups[0].topics for p in x.partitions}


def check_commits_kept(sim: Simulation, reliability) -> None:
    """After the heal, each owner commits once more; what it saw acknowledged is what is stored."""
    c = sim.c
    for k in sim.consumers:
        if k.running:
            k.commit() if hasattr(k, "commit") else k._commit_sync()
    stored = committed_offsets(c, sim.consumers[0].config.group_id)
    lost = [(k.name, tp) for k in sim.consumers if k.running for tp in k.owned
            if tp in k.committed and stored.get(tp) != k.committed[tp]]
    reliability["records lost"] += len(lost)
    assert not lost, lost


@given(seed=SEEDS)
@FAULT_RUNS
def test_kip848_consumers_keep_exclusive_ownership_under_network_faults(seed, reliability):
    c = Coordinator(cluster=Cluster({"foo": 6, "bar": 3}, seed=1))
    t = faulty(c, seed)
    sim = Simulation(c, transport=t)
    for n in "ABC":
        sim.add(ConsumerGroupConsumer(c, "g", ("bar", "foo"), name=n, seed=f"{seed}/{n}"))
    churn(sim, seed)
    run_and_heal(sim, t, "g", reliability)
    check_commits_kept(sim, reliability)


@given(seed=SEEDS)
@FAULT_RUNS
def test_classic_consumers_keep_exclusive_ownership_under_network_faults(seed, reliability):
    c = Coordinator(cluster=Cluster({"foo": 6}, seed=1))
    t = faulty(c, seed)
    sim = Simulation(c, transport=t)
    assignors = random.Random(seed).choice([("range", "cooperative-sticky"), ("cooperative-sticky",)])
    for n in "ABC":
        # max.poll.interval.ms 30 s: a JoinGroup abandoned by the coordinator times out after 35 s
        sim.add(ClassicConsumer(c, ConsumerConfig("g", ("foo",), client_id=n, assignors=assignors,
                                                  max_poll_interval_ms=30_000)))
    churn(sim, seed)
    run_and_heal(sim, t, "g", reliability)
    check_commits_kept(sim, reliability)


@given(seed=SEEDS)
@FAULT_RUNS
def test_streams_threads_never_run_an_active_task_twice_under_network_faults(seed, reliability):
    # Kafka's profile: under the seed's (kip) a stale heartbeat removes a running member, which
    # breaks exclusivity by design (test_client_faults: the kip hazard, shown on its own).
    c = Coordinator(cluster=Cluster({"orders": 6}, seed=1), profile="kafka")
    t = faulty(c, seed)
    sim = Simulation(c, transport=t)
    for n in ("one", "two"):
        # A lost answer that revoked a task leaves the member owing a revocation it never heard
        # of (see below): its rebalance timeout fences it; 20 s keeps that within the run.
        cfg = StreamsConfig("app", stateless("app", "orders"), num_stream_threads=2, rebalance_timeout_ms=20_000)
        sim.add(StreamsApplication(c, cfg, name=n, seed=f"{seed}/{n}"))
    churn(sim, seed)
    run_and_heal(sim, t, "app", reliability, complete=False, zombies=True)
    # Kafka's coordinator sends a member its tasks only when it joins or they change
    # (GroupMetadataManager.streamsGroupHeartbeat), not on the full request it retries with after
    # a lost answer (unlike KAFKA-16367 for consumer groups): a task in a lost answer stays idle
    # on the member it went to. Every task is run by a thread, or is such a task.
    group = c.groups["app"]
    by_member = {k.member_id: k for k in sim.consumers if k.running}
    owned = {tp for k in by_member.values() for tp in k.owned}
    for task in set(sim.partitions()) - owned:
        holder = next(m for m in group.members.values() if task in m.assigned.active_ids())
        client = by_member[holder.member_id]
        assert task not in client.target.active
        assert any(e.kind == "error" and ("no answer" in e.detail or "lost" in e.detail) for e in client.events)


@given(seed=SEEDS)
@FAULT_RUNS
def test_share_consumers_lose_no_acknowledged_record_under_network_faults(seed, reliability):
    """KIP-932: an ACCEPT the consumer saw succeed stays Acknowledged; every record produced is in
    the end delivered and acknowledged (a record whose ack was lost comes back after its lock)."""
    c = Coordinator(cluster=Cluster({"foo": 2}, seed=1))
    t = faulty(c, seed)
    consumers = [ShareConsumer(c, "s", ["foo"], name=n, seed=seed * 2 + i) for i, n in enumerate("AB")]
    sim = Simulation(c, consumers, transport=t)
    for k in consumers:
        k.start()
    rng = random.Random(seed)
    tid = c.cluster.topic_id("foo")
    confirmed: set[tuple[int, int]] = set()
    seen = dict.fromkeys((k.name for k in consumers), 0)
    lost: set = set()
    ticks = 0

    def check_confirmed() -> None:
        for k in consumers:
            for _, api, req, resp in k.exchanges[seen[k.name]:]:
                if resp is None or api not in ("ShareFetch", "ShareAcknowledge") or resp.error_code != E.none:
                    continue
                errors = {(x.topic_id, p.partition_index): (p.acknowledge_error_code if api == "ShareFetch"
                                                            else p.error_code)
                          for x in resp.responses for p in x.partitions}
                for x in req.topics:
                    for p in x.partitions:
                        if errors.get((x.topic_id, p.partition_index), E.none) != E.none:
                            continue
                        for b in p.acknowledgement_batches:
                            if list(b.acknowledge_types) == [1]:        # ACCEPT
                                confirmed.update((p.partition_index, o)
                                                 for o in range(b.first_offset, b.last_offset + 1))
            seen[k.name] = len(k.exchanges)
        for part, offset in sorted(confirmed):
            sp = share_partition(c, "s", tid, part)
            state = {v.offset: v.state for v in sp.records()}.get(offset)
            if offset >= sp.spso and state != "Acknowledged":
                lost.add((part, offset))

    for i in range(RUN_MS // sim.tick_ms):
        if i % 10 == 0:
            c.cluster.produce("foo", rng.randrange(2), [b"v%d" % i] * rng.randrange(1, 4))
        sim.step()
        ticks += 1
        check_confirmed()
    t.p = dict.fromkeys(t.p, 0.0)
    t.flush()
    ends = [c.cluster.end_offset("foo", p) for p in range(2)]
    ms = sim.run_until(lambda: [share_partition(c, "s", tid, p).spso for p in range(2)] == ends, timeout_ms=240_000)
    check_confirmed()
    reliability["steps explored"] += ticks + ms // sim.tick_ms
    reliability["faults injected"] += t.injected
    reliability["records lost"] += len(lost)
    assert not lost, lost
