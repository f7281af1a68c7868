"""Simulated KIP-848 consumers (`ConsumerGroupConsumer`) against the coordinator: whole-group
behaviour, sampled every tick by the `Simulation` driver.

Client rules follow Apache Kafka's `ConsumerMembershipManager` / `AbstractMembershipManager` /
`ConsumerHeartbeatRequestManager`; the coordinator's are KIP-848's (and Kafka's
`GroupMetadataManager` where the KIP is silent)."""
from __future__ import annotations

from kgroup import Cluster, Coordinator
from kgroup.clients import (ClassicConsumer, ConsumerConfig, ConsumerGroupConsumer, ConsumerMemberState, Simulation,
                            rolling_restart, rolling_upgrade)
from kgroup.groups.consumer import ConsumerGroup
from kgroup.groups.classic import ClassicGroup
from kgroup.protocol import ms

from simulation_testing import assert_owned_once, heartbeat_after_not_coordinator, owned

TOPICS = ("bar", "foo")


def group_of(n: int = 3, *, partitions=None, names="ABCDEFG", **kw) -> tuple[Coordinator, Simulation]:
    c = Coordinator(cluster=Cluster(partitions or {"foo": 6, "bar": 3}, seed=1))
    sim = Simulation(c)
    for name in names[:n]:
        sim.add(ConsumerGroupConsumer(c, "g", TOPICS, name=name, **kw))
    sim.run_until_stable("g")
    return c, sim


def revocations(sim: Simulation, since: int) -> dict[str, list]:
    return {k.name: [tp for e in k.events if e.kind == "revoked" and e.time >= since for tp in e.partitions]
            for k in sim.consumers}


def test_three_members_over_two_topics_stabilise_with_every_partition_owned_once():
    c, sim = group_of(3)
    assert_owned_once(sim)
    g = c.groups["g"]
    assert isinstance(g, ConsumerGroup) and g.state == "Stable"
    assert sorted(len(tps) for tps in owned(sim).values()) == [3, 3, 3]   # uniform: 9 partitions, 3 each
    # The three epochs line up once stable: every member at the assignment epoch = group epoch.
    assert {k.member_epoch for k in sim.consumers} == {g.group_epoch} == {g.assignment_epoch}
    # The client and the coordinator agree on who owns what.
    for k in sim.consumers:
        member = g.members[k.member_id]
        server = {(c.cluster.topic_name(t), p) for t, ps in member.assigned_partitions.items() for p in ps}
        assert server == k.owned and str(k.state) == "stable"


def test_member_ids_are_kafka_uuids_generated_by_the_client_seeded_and_new_per_process():
    _, sim = group_of(2)
    a = sim.consumer("A")
    assert len(a.member_id) == 22 and not a.member_id.startswith("-")
    _, again = group_of(2)
    assert again.consumer("A").member_id == a.member_id            # same seed, same run
    first = a.member_id
    a.close()
    a.start()
    assert a.member_id != first and a.incarnation == 2             # a new process, a new incarnation id


def test_join_is_a_full_request_then_only_changed_fields_and_full_again_after_an_error():
    c, sim = group_of(1)
    sim.run(6_000)
    a = sim.consumer("A")
    join, *later = [h.request for h in a.heartbeats]
    assert join.member_epoch == 0 and ms(join.rebalance_timeout) == 300_000
    assert join.subscribed_topic_names == TOPICS and join.topic_partitions == ()
    keepalive = later[-1]
    assert ms(keepalive.rebalance_timeout) == -1 and keepalive.subscribed_topic_names is None
    assert keepalive.topic_partitions is None                       # nothing new to report
    acks = [r for r in later if r.topic_partitions is not None]
    assert acks and {(p.topic_id, p.partitions) for p in acks[0].topic_partitions} == {
        (c.cluster.topic_id("foo"), tuple(range(6))), (c.cluster.topic_id("bar"), (0, 1, 2))}
    # A heartbeat that fails (here: the coordinator lost the group's partition) resets the sent fields.
    after = heartbeat_after_not_coordinator(sim, a)
    assert ms(after.rebalance_timeout) == 300_000 and after.subscribed_topic_names == TOPICS
    assert after.topic_partitions is not None and after.member_epoch == a.member_epoch > 0


def test_a_new_member_takes_partitions_only_from_members_above_their_share():
    c, sim = group_of(3)
    sim.reset_measurements()
    before, t = owned(sim), c.now()
    sim.add(ConsumerGroupConsumer(c, "g", TOPICS, name="D"))
    sim.run_until_stable("g")
    after = owned(sim)
    assert_owned_once(sim)
    assert sim.rebalances("g") == 1
    # Sticky and incremental: the only partitions that moved are the ones D got.
    moved = {tp for name in "ABC" for tp in before[name] - after[name]}
    assert moved == after["D"] and len(moved) == 2
    assert all(after[name] <= before[name] for name in "ABC")
    assert sum(len(v) for v in revocations(sim, t).values()) == len(moved)


def test_a_member_leaving_moves_only_its_own_partitions():
    c, sim = group_of(4)
    sim.reset_measurements()
    before, t = owned(sim), c.now()
    sim.consumer("B").close()
    sim.run_until_stable("g")
    after = owned(sim)
    assert_owned_once(sim)
    assert "B" not in after and all(after[n] >= before[n] for n in "ACD")
    assert {tp for n in "ACD" for tp in after[n] - before[n]} == before["B"]
    assert not any(revocations(sim, t)[n] for n in "ACD")          # nobody else revoked anything
    assert sim.consumer("B").member_id not in c.groups["g"].members


def test_more_partitions_are_spread_without_moving_the_old_ones():
    c, sim = group_of(3)
    sim.reset_measurements()
    before, t = owned(sim), c.now()
    c.cluster.increase_partitions("bar", 6)
    sim.run_until(lambda: len({tp for tps in owned(sim).values() for tp in tps}) == 12, 60_000)
    sim.run_until_stable("g")
    after = owned(sim)
    assert_owned_once(sim)
    assert sorted(len(v) for v in after.values()) == [4, 4, 4]
    assert all(after[n] >= before[n] for n in "ABC")               # each one only gained
    assert not any(revocations(sim, t).values())
    assert sim.rebalances("g") == 1                                 # the metadata hash moved the group epoch


def test_the_same_scenarios_never_own_a_partition_twice_with_slow_poll_loops_and_callbacks():
    """Revocation callbacks that take a while (well within the rebalance timeout) only delay."""
    c = Coordinator(cluster=Cluster({"foo": 8, "bar": 4}, seed=3))
    sim = Simulation(c, processing_ms=700)
    for name in "ABC":
        sim.add(ConsumerGroupConsumer(c, "g", TOPICS, name=name, revocation_delay_ms=2_500))
    sim.at(20_000, "D joins",
           lambda: sim.add(ConsumerGroupConsumer(c, "g", TOPICS, name="D", revocation_delay_ms=2_500)))
    sim.at(45_000, "A leaves", lambda: sim.consumer("A").close())
    sim.at(60_000, "foo grows", lambda: c.cluster.increase_partitions("foo", 12))
    sim.at(80_000, "B crashes", lambda: sim.consumer("B").crash())
    sim.run(150_000)
    assert_owned_once(sim)
    assert sim.consumer("B").member_id not in c.groups["g"].members   # its session timed out
    # Each revocation took the callback's 2.5 s, and the partitions moved only after it.
    pairs = []
    for k in sim.consumers:
        started = None
        for e in k.events:
            if e.kind == "revoking":
                started = e
            elif e.kind == "revoked" and started is not None:
                pairs.append((started, e))
                started = None
    assert len(pairs) >= 3 and all(done.time - start.time >= 2_500 for start, done in pairs)


def test_a_member_that_does_not_revoke_within_its_rebalance_timeout_is_fenced_and_its_partitions_move():
    c = Coordinator(cluster=Cluster({"foo": 6}, seed=1))
    sim = Simulation(c)
    a = sim.add(ConsumerGroupConsumer(c, "g", ["foo"], name="A", rebalance_timeout_ms=10_000,
                                      revocation_delay_ms=25_000, auto_commit_interval_ms=None))
    sim.run_until_stable("g")
    first_epoch = a.member_epoch
    b = sim.add(ConsumerGroupConsumer(c, "g", ["foo"], name="B"))
    sim.run(60_000)
    kinds = [e.kind for e in a.events]
    last_join = max(i for i, k in enumerate(kinds) if k == "joined")
    revoking = next(e for e in a.events if e.kind == "revoking")
    fenced = next(e for e in a.events if e.kind == "fenced")
    # The coordinator fenced A after its rebalance timeout (it stayed in its epoch, unrevoked)...
    assert "it failed to transition from epoch" in c.groups["g"].last_fence_reason
    assert fenced.time - revoking.time >= 10_000
    assert kinds.index("fenced") < kinds.index("revoked") < kinds.index("lost") < last_join
    # ...B got A's partitions while A was still inside its callback (a zombie), and the zombie's
    # commit at the end of the callback was rejected: it is no longer a member.
    commit_error = next(e for e in a.events if e.kind == "error" and e.detail.startswith("commit"))
    assert commit_error.detail == "commit: UNKNOWN_MEMBER_ID"
    overlap = sim.double_owned_partitions()
    assert overlap and all("A" in owners for _, _, owners in overlap)
    assert all(fenced.time - sim.start <= t <= commit_error.time - sim.start for t, _, _ in overlap)
    # A released everything (on_partitions_lost), rejoined with epoch 0 and the same member id.
    rejoin = [h.request for h in a.heartbeats if h.request.member_epoch == 0]
    assert len(rejoin) == 2 and rejoin[0].member_id == rejoin[1].member_id == a.member_id
    assert a.member_epoch > first_epoch and str(a.state) == "stable"
    parts = sorted(a.owned | b.owned)
    assert parts == [("foo", p) for p in range(6)] and not a.owned & b.owned


def test_a_static_member_restarting_within_the_session_timeout_gets_its_partitions_back_and_nobody_moves():
    c = Coordinator(cluster=Cluster({"foo": 6, "bar": 3}, seed=1))
    sim = Simulation(c)
    for name in "ABC":
        sim.add(ConsumerGroupConsumer(c, "g", TOPICS, name=name, instance_id=name))
    sim.run_until_stable("g")
    sim.reset_measurements()
    before, epoch, t0 = owned(sim), c.groups["g"].group_epoch, c.now()
    b = sim.consumer("B")
    old_id = b.member_id
    end = rolling_restart(sim, gap_ms=10_000, settle_ms=5_000, names=["B"])
    sim.run(end)
    leave = next(h.request for h in b.heartbeats if h.request.member_epoch < 0)
    assert leave.member_epoch == -2 and leave.instance_id == "B"   # a static member leaves "for a moment"
    sim.run_until_stable("g")
    assert owned(sim) == before and b.member_id != old_id
    assert c.groups["g"].group_epoch == epoch and sim.rebalances("g") == 0
    assert c.groups["g"].static_member("B").member_id == b.member_id
    assert not any(e.kind in ("revoked", "assigned", "target") for n in "AC" for e in sim.consumer(n).events
                   if e.time >= t0)
    # Only B's partitions were without an owner, and only while it was down.
    assert max(n for _, n in sim.unowned_series()) == len(before["B"])
    assert sim.unowned_partition_ms() == 10_000 * len(before["B"])
    assert sim.double_owned_samples() == 0


def test_a_crashed_static_member_restarting_before_its_session_ends_gets_unreleased_instance_id():
    c = Coordinator(cluster=Cluster({"foo": 4}, seed=1))
    sim = Simulation(c)
    a = sim.add(ConsumerGroupConsumer(c, "g", ["foo"], name="A", instance_id="a"))
    sim.run_until_stable("g")
    a.crash()
    sim.run(1_000)
    a.start()
    sim.run(1_000)
    assert a.state is ConsumerMemberState.FATAL and not a.running
    assert [e.detail for e in a.events if e.kind == "fatal"] == ["UNRELEASED_INSTANCE_ID"]


def test_a_regex_subscription_picks_up_a_new_matching_topic():
    c = Coordinator(cluster=Cluster({"orders-eu": 2, "payments": 2}, seed=1))
    sim = Simulation(c)
    for name in "AB":
        sim.add(ConsumerGroupConsumer(c, "g", pattern="orders-.*", name=name))
    sim.run_until_stable("g")
    join = sim.consumer("A").heartbeats[0].request
    assert join.subscribed_topic_regex == "orders-.*" and join.subscribed_topic_names == ()
    assert sorted(tp for tps in owned(sim).values() for tp in tps) == [("orders-eu", 0), ("orders-eu", 1)]
    before = owned(sim)
    c.cluster.create_topic("orders-us", 2)
    c.cluster.create_topic("audit", 1)
    sim.run_until(lambda: sum(len(v) for v in owned(sim).values()) == 4, 120_000)
    sim.run_until_stable("g")
    assert_owned_once(sim)
    assert {t for tps in owned(sim).values() for t, _ in tps} == {"orders-eu", "orders-us"}
    assert all(owned(sim)[n] >= before[n] for n in "AB")
    assert c.groups["g"].resolved_regexes["orders-.*"].topics == {"orders-eu", "orders-us"}


def test_a_subscription_change_revokes_the_topic_left_and_gets_the_new_one():
    c, sim = group_of(2)
    a = sim.consumer("A")
    b_before, t0 = set(sim.consumer("B").owned), c.now()
    a.subscribe(["foo"])
    sim.run_until(lambda: any(h.request.subscribed_topic_names == ("foo",) for h in a.heartbeats), 10_000)
    sim.run_until_stable("g")
    assert {t for t, _ in a.owned} == {"foo"}
    assert {tp for tp in b_before if tp[0] == "bar"} <= sim.consumer("B").owned   # B takes bar over
    revoked = [tp for e in a.events if e.kind == "revoked" and e.time >= t0 for tp in e.partitions]
    assert revoked and {t for t, _ in revoked} == {"bar"}
    assert_owned_once(sim)


def test_a_rolling_upgrade_from_classic_to_kip848_migrates_online_and_keeps_ownership_exclusive():
    c = Coordinator(cluster=Cluster({"foo": 6, "bar": 2}, seed=1))
    sim = Simulation(c, processing_ms=200)
    for name in "ABC":
        sim.add(ClassicConsumer(c, ConsumerConfig("g", TOPICS, client_id=name, assignors=("cooperative-sticky",))))
    sim.run_until_stable("g")
    assert isinstance(c.groups["g"], ClassicGroup)
    sim.reset_measurements()
    end = rolling_upgrade(sim, lambda old: ConsumerGroupConsumer(c, "g", TOPICS, name=old.name),
                          gap_ms=5_000, settle_ms=20_000, names=["A"])
    sim.run(end)
    # Mixed: one KIP-848 member, two classic members still speaking JoinGroup/SyncGroup/Heartbeat.
    g = c.groups["g"]
    assert isinstance(g, ConsumerGroup)
    assert sorted(m.uses_classic_protocol for m in g.members.values()) == [False, True, True]
    # A rolling restart of the mixed group: classic members restart as classic, A as KIP-848
    # (when A, the only KIP-848 member, leaves the group goes back to classic, and up again).
    end = rolling_restart(sim, gap_ms=5_000, settle_ms=20_000)
    sim.run(end)
    end = rolling_upgrade(sim, lambda old: ConsumerGroupConsumer(c, "g", TOPICS, name=old.name),
                          gap_ms=5_000, settle_ms=20_000, names=["B", "C"])
    sim.run(end)
    sim.run_until_stable("g")
    g = c.groups["g"]
    assert isinstance(g, ConsumerGroup) and not any(m.uses_classic_protocol for m in g.members.values())
    assert all(isinstance(k, ConsumerGroupConsumer) for k in sim.consumers)
    assert_owned_once(sim)
    assert sim.rebalances("g") > 0 and len({t for t, _ in sim.generations("g")}) > 1


def test_a_rolling_upgrade_of_static_members_moves_no_partition():
    c = Coordinator(cluster=Cluster({"foo": 6}, seed=1))
    sim = Simulation(c)
    for name in "ABC":
        sim.add(ClassicConsumer(c, ConsumerConfig("g", ("foo",), client_id=name, group_instance_id=name,
                                                  assignors=("cooperative-sticky",))))
    sim.run_until_stable("g")
    sim.reset_measurements()
    before = owned(sim)
    end = rolling_upgrade(sim, lambda old: ConsumerGroupConsumer(c, "g", ["foo"], name=old.name, instance_id=old.name),
                          gap_ms=5_000, settle_ms=10_000)
    sim.run(end + 10_000)
    assert isinstance(c.groups["g"], ConsumerGroup) and owned(sim) == before
    assert sim.rebalances("g") == 0 and sim.double_owned_samples() == 0


def test_heartbeats_and_timer_writes_reach_observers():
    """`Simulation.observe` sees every heartbeat exchange (and records written by timers)."""
    c = Coordinator(cluster=Cluster({"foo": 2}, seed=1))
    sim = Simulation(c)
    seen = []
    sim.observe(seen.append)
    a = sim.add(ConsumerGroupConsumer(c, "g", ["foo"], name="A"))
    sim.run_until_stable("g")
    a.crash()
    sim.run(50_000)
    heartbeats = [e for e in seen if e.kind == "heartbeat"]
    assert heartbeats == a.heartbeats and heartbeats[0].end_position > heartbeats[0].start_position
    timers = [e for e in seen if e.kind == "timer"]
    assert timers and c.log.entry_at(timers[-1].start_position).record.value is None  # the session expired
