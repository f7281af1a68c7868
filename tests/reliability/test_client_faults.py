"""Fault injection in the simulated clients' network (`FaultyTransport`): each test reproduces
one behaviour of Apache Kafka under a lost, duplicated, reordered or delayed request, and names
it (KIP section, or Kafka class/test)."""
from __future__ import annotations

import dataclasses

import pytest

from kgroup import Cluster, Coordinator, ErrorCode
from kgroup.clients import (ClassicConsumer, ConsumerConfig, ConsumerGroupConsumer, FaultyTransport, Simulation,
                            StreamsApplication, StreamsConfig)
from kgroup.clients.consumer import ConsumerMemberState
from kgroup.clients.share import AcknowledgeType, ShareConsumer
from kgroup.clients.streams_topology import stateless
from kgroup.groups.share.partition import share_partition
from kgroup.protocol import request

E = ErrorCode
TOPICS = ("bar", "foo")
_NETS: list[FaultyTransport] = []


def net(c: Coordinator) -> FaultyTransport:
    """A faulty network whose injected faults this module counts."""
    t = FaultyTransport(c, seed=1)
    _NETS.append(t)
    return t


@pytest.fixture(autouse=True)
def _count_faults(reliability):
    yield
    reliability["faults injected"] += sum(t.injected for t in _NETS)
    reliability["steps explored"] += sum(len(t.sent) for t in _NETS)
    _NETS.clear()


def consumer_sim(names="AB", **kw) -> tuple[Coordinator, Simulation, FaultyTransport]:
    c = Coordinator(cluster=Cluster({"foo": 6, "bar": 3}, seed=1))
    t = net(c)
    sim = Simulation(c, transport=t)
    for n in names:
        sim.add(ConsumerGroupConsumer(c, "g", TOPICS, name=n, **kw))
    sim.run_until_stable("g")
    return c, sim, t


def exclusive_and_complete(sim: Simulation) -> None:
    parts = sorted(tp for k in sim.consumers if k.running for tp in k.owned)
    assert parts == sorted(sim.partitions())


def test_kip848_lost_response_retry_with_previous_epoch_and_a_subset_of_partitions_is_accepted():
    """KIP-848 "the coordinator accepts the previous epoch if the owned partitions are a subset of
    the assigned ones" (Kafka's GroupMetadataManager.throwIfConsumerGroupMemberEpochIsInvalid,
    GroupMetadataManagerTest.testConsumerGroupHeartbeatWithPreviousEpoch... lost response)."""
    c, sim, t = consumer_sim("A")
    a = sim.consumer("A")
    sim.add(ConsumerGroupConsumer(c, "g", TOPICS, name="B"))
    # Run until A has revoked what goes to B and is about to acknowledge: lose that answer.
    sim.run_until(lambda: a.state is ConsumerMemberState.ACKNOWLEDGING)
    epoch = a.member_epoch
    t.plan("drop", "ConsumerGroupHeartbeat", client_id="A")
    sim.step()                                           # the ack is served, its answer lost
    member = c.groups["g"].members[a.member_id]
    assert member.member_epoch > epoch and member.previous_member_epoch == epoch
    assert a.member_epoch == epoch                       # the client never saw the bump
    sim.run_until_stable("g")
    retry = next(x for x in a.heartbeats if x.request.member_epoch == epoch and x.time > t.sent[-1][0] - 1_000
                 and x.request.topic_partitions is not None)
    assert retry.response.error_code == E.none and retry.response.member_epoch == member.member_epoch
    assert t.faults["drop"] == 1 and a.member_epoch == c.groups["g"].members[a.member_id].member_epoch
    exclusive_and_complete(sim)
    assert sim.double_owned_samples() == 0


def test_kip1071_lost_response_retry_with_previous_epoch_and_a_subset_of_tasks_is_accepted():
    """KIP-1071 reuses KIP-848's rule: a heartbeat with the previous member epoch whose active
    tasks are a subset of the assigned ones is accepted (Kafka's StreamsGroup
    throwIfStreamsGroupMemberEpochIsInvalid)."""
    c = Coordinator(cluster=Cluster({"orders": 8}, seed=1))
    t = net(c)
    sim = Simulation(c, transport=t)
    sim.add(StreamsApplication(c, StreamsConfig("app", stateless("app", "orders")), name="one"))
    sim.run_until_stable("app")
    a = sim.consumers[0]
    sim.add(StreamsApplication(c, StreamsConfig("app", stateless("app", "orders")), name="two"))
    sim.run_until(lambda: str(a.state) == "acknowledging")
    epoch = a.member_epoch
    t.plan("drop", "StreamsGroupHeartbeat", client_id=a.client_id)
    sim.step()
    member = c.groups["app"].members[a.member_id]
    assert member.member_epoch > epoch and member.previous_member_epoch == epoch and a.member_epoch == epoch
    sim.run_until_stable("app")
    retries = [x for x in a.heartbeats if x.request.member_epoch == epoch]
    assert retries and retries[-1].response.error_code == E.none
    assert retries[-1].response.member_epoch == member.member_epoch
    assert sim.double_owned_samples() == 0
    assert sorted(tp for k in sim.consumers for tp in k.owned) == sorted(sim.partitions())


def test_classic_join_group_response_lost_the_member_retries_with_its_member_id():
    """Kafka's AbstractCoordinator.joinGroupIfNeeded: a JoinGroup without an answer is retried
    (same member id); the coordinator takes it as the same member (GroupMetadataManager
    classicGroupJoinExistingMember), so the group does not grow a ghost member."""
    c = Coordinator(cluster=Cluster({"foo": 6}, seed=1))
    t = net(c)
    sim = Simulation(c, transport=t)
    for n in "AB":
        sim.add(ClassicConsumer(c, ConsumerConfig("g", ("foo",), client_id=n)))
    sim.run_until_stable("g")
    # C's first JoinGroup gets MEMBER_ID_REQUIRED; lose the answer to the second (with its id).
    t.plan("drop", "JoinGroup", client_id="C", after=1)
    sim.add(ClassicConsumer(c, ConsumerConfig("g", ("foo",), client_id="C")))
    sim.run_until_stable("g")
    cc = sim.consumer("C")
    assert t.faults["drop"] == 1 and any(e.kind == "error" and "join" in e.detail for e in cc.events)
    g = c.groups["g"]
    assert len(g.members) == 3 and cc.member_id in g.members
    exclusive_and_complete(sim)
    assert sim.double_owned_samples() == 0


def test_a_duplicated_offset_commit_is_idempotent():
    """OffsetCommit is idempotent: the same offsets committed twice (a retry whose original did
    arrive, or a retry after a lost answer) leave the same committed offsets (Kafka's OffsetMetadataManager writes a
    second identical record; the last one wins)."""
    c, sim, t = consumer_sim("A", auto_commit_interval_ms=None)
    a = sim.consumer("A")
    sim.run(1_000)
    t.plan("duplicate", "OffsetCommit", client_id="A")
    assert a.commit()
    assert t.faults["duplicate"] == 1
    _, api, _, late = t.late[-1]
    assert api == "OffsetCommit" and {p.error_code for x in late.topics for p in x.partitions} == {E.none}
    fetched = c.handle(request("OffsetFetch", 8, groups=[{"group_id": "g", "topics": None}]))
    got = {(x.name, p.partition_index): p.committed_offset for x in fetched.groups[0].topics for p in x.partitions}
    assert got == a.committed and got
    # Lost answer: the commit is not known to have happened, so it is sent again (and taken).
    sim.run(500)
    t.plan("drop", "OffsetCommit", client_id="A")
    assert not a.commit()
    assert a.commit()
    fetched = c.handle(request("OffsetFetch", 8, groups=[{"group_id": "g", "topics": None}]))
    got = {(x.name, p.partition_index): p.committed_offset for x in fetched.groups[0].topics for p in x.partitions}
    assert got == a.committed == {tp: a.positions[tp] for tp in a.owned}


def test_a_reordered_old_heartbeat_gets_fenced_member_epoch_and_changes_nothing():
    """KIP-848: a heartbeat with an epoch older than the member's (and not its previous epoch
    with a subset of partitions) gets FENCED_MEMBER_EPOCH (GroupMetadataManagerTest
    testConsumerGroupMemberEpochValidation); arriving late, its answer reaches no one and the
    member carries on."""
    c, sim, t = consumer_sim("A")
    a = sim.consumer("A")
    old_epoch = a.member_epoch
    t.plan("reorder", "ConsumerGroupHeartbeat", client_id="A", hold_ms=30_000)
    sim.run_until(lambda: t.faults["reorder"] == 1)
    for n in "BC":           # two rebalances: the held epoch is neither the current nor the previous
        sim.add(ConsumerGroupConsumer(c, "g", TOPICS, name=n))
        sim.run_until_stable("g")
    assert a.member_epoch > old_epoch + 1
    sim.run_until(lambda: not t.held)
    _, api, req, late = t.late[-1]
    assert api == "ConsumerGroupHeartbeat" and req.member_epoch == old_epoch
    assert late.error_code == E.fenced_member_epoch
    member = c.groups["g"].members[a.member_id]
    assert member.member_epoch == a.member_epoch and a.state is ConsumerMemberState.STABLE
    sim.run(5_000)
    exclusive_and_complete(sim)
    assert sim.double_owned_samples() == 0


def test_heartbeats_delayed_past_the_session_timeout_remove_the_member_which_rejoins():
    """KIP-848 session timeout: a member whose heartbeats do not arrive within
    group.consumer.session.timeout.ms (45 s) is removed and its partitions reassigned; the
    delayed heartbeats then get UNKNOWN_MEMBER_ID, the member gives its partitions up as lost
    (ConsumerMembershipManager.transitionToFenced) and rejoins with epoch 0. Meanwhile it is a
    zombie that believes it owns them, as in Kafka; its commits are refused (zombie fencing)."""
    c, sim, t = consumer_sim("AB")
    a, b = sim.consumer("A"), sim.consumer("B")
    start = c.now()
    t.plan("delay", "ConsumerGroupHeartbeat", client_id="A", end_ms=start + 60_000, count=None)
    sim.run_until(lambda: a.member_id not in c.groups["g"].members, timeout_ms=60_000)
    last_heard = max(at for at, cid, api, what in t.sent
                     if cid == "A" and api == "ConsumerGroupHeartbeat" and what == "delivered")
    assert 45_000 <= c.now() - last_heard <= 45_000 + sim.tick_ms and c.now() < start + 60_000
    sim.run_until(lambda: b.owned == set(sim.partitions()))
    assert not a.commit() or not a.positions       # a zombie's commit is refused
    assert any(e.kind == "error" and "commit" in e.detail for e in a.events)
    sim.run_until(lambda: not t.held)
    assert {late.error_code for _, api, _, late in t.late if api == "ConsumerGroupHeartbeat"} \
        == {E.unknown_member_id}
    sim.run_until_stable("g")
    assert any(e.kind == "lost" for e in a.events) and a.member_id in c.groups["g"].members
    exclusive_and_complete(sim)


def test_revocation_slower_than_the_rebalance_timeout_fences_the_member_without_double_processing():
    """KIP-848: a member that does not revoke within its rebalance timeout is fenced and its
    partitions reassigned (Kafka's GroupMetadataManager scheduleConsumerGroupRebalanceTimeout).
    The slow member has paused what it revokes (Kafka pauses partitions pending revocation), so
    no partition is processed by two consumers at once; its commit at the end is refused."""
    c, sim, t = consumer_sim("A", revocation_delay_ms=20_000, rebalance_timeout_ms=5_000, auto_commit_interval_ms=None)
    a = sim.consumer("A")
    sim.add(ConsumerGroupConsumer(c, "g", TOPICS, name="B", rebalance_timeout_ms=5_000))
    sim.run_until(lambda: a.busy)
    frozen = {tp: a.positions.get(tp) for tp in a._revoking}
    fenced_at = c.now()
    sim.run_until(lambda: a.member_id not in c.groups["g"].members)
    assert c.now() - fenced_at <= 5_000 + sim.tick_ms
    b = sim.consumer("B")
    sim.run_until(lambda: b.owned == set(sim.partitions()))
    # While both "own" them, only B processes: A's revoking partitions stand still.
    assert {tp: a.positions.get(tp) for tp in frozen} == frozen
    sim.run_until_stable("g", timeout_ms=120_000)
    assert any(e.kind == "error" and "commit" in e.detail for e in a.events)
    assert any(e.kind == "fenced" for e in a.events)
    exclusive_and_complete(sim)


def test_a_share_acknowledgement_after_the_lock_expired_is_refused_and_the_record_redelivered():
    """KIP-932: a record whose acquisition lock expired goes back to Available and is delivered
    again with delivery count + 1; an acknowledgement arriving afterwards gets
    INVALID_RECORD_STATE (Kafka's SharePartition.acknowledge, SharePartitionTest
    testAcknowledgeAfterLockTimeout...)."""
    c = Coordinator(cluster=Cluster({"foo": 1}, seed=1))
    t = net(c)
    a = ShareConsumer(c, "s", ["foo"], name="A", acknowledgement_mode="explicit", processing_ms_per_record=20_000)
    b = ShareConsumer(c, "s", ["foo"], name="B", acknowledgement_mode="explicit")
    sim = Simulation(c, [a], transport=t)
    a.start()
    sim.run(2_000)
    c.cluster.produce("foo", 0, [b"x", b"y"])
    records = a.poll()
    assert [(r.offset, r.delivery_count) for r in records] == [(0, 1), (1, 1)]
    for r in records:
        a.acknowledge(r, AcknowledgeType.ACCEPT)
    t.plan("delay", "ShareAcknowledge", client_id="A", end_ms=c.now() + 35_000)
    assert a.commit_sync() == {("foo", 0): E.request_timed_out}
    sim.add(b)
    b.start()
    sim.run(36_000)
    _, api, _, late = t.late[-1]
    assert api == "ShareAcknowledge"
    assert [p.error_code for x in late.responses for p in x.partitions] == [E.invalid_record_state]
    assert [(r.offset, r.delivery_count) for r in b.delivered] == [(0, 2), (1, 2)]
    sp = share_partition(c, "s", c.cluster.topic_id("foo"), 0)
    assert {v.offset: (v.state, v.delivery_count) for v in sp.records()} == {0: ("Acquired", 2), 1: ("Acquired", 2)}


def _streams_pair(profile: str):
    c = Coordinator(cluster=Cluster({"orders": 4}, seed=1), profile=profile)
    t = net(c)
    sim = Simulation(c, transport=t)
    for n in ("one", "two"):
        sim.add(StreamsApplication(c, StreamsConfig("app", stateless("app", "orders")), name=n))
    sim.run_until_stable("app")
    return c, sim, t


def test_a_stale_streams_heartbeat_removes_a_running_member_under_kip_but_not_under_kafka():
    """Found by the fault runs. KIP-1071 (profile kip): "FENCED_MEMBER_EPOCH ... The member is
    also removed": a copy of an old heartbeat arriving after the member moved on evicts a live
    member, whose tasks go to others while it runs them until its next heartbeat. Kafka
    (profile kafka, GroupMetadataManager throwIfStreamsGroupMemberEpochIsInvalid) only answers
    FENCED_MEMBER_EPOCH and writes nothing: the member stays."""
    outcomes = {}
    for profile in ("kip", "kafka"):
        c, sim, t = _streams_pair(profile)
        a = sim.consumers[0]
        # an old regular heartbeat of a (its epoch then, no task lists)
        stale = dataclasses.replace(a.heartbeats[-1].request, member_epoch=a.member_epoch, active_tasks=None,
                                    standby_tasks=None, warmup_tasks=None)
        sim.add(StreamsApplication(c, StreamsConfig("app", stateless("app", "orders")), name="three"))
        sim.run_until_stable("app")
        assert a.member_epoch > stale.member_epoch
        late = c.handle(stale, client_id=a.client_id)  # the network delivers the copy now
        t.faults["duplicate"] += 1
        assert late.error_code == E.fenced_member_epoch
        outcomes[profile] = a.member_id in c.groups["app"].members
        if profile == "kip":
            # a still runs its tasks, a zombie: the coordinator will give them to the others
            assert a.owned and str(a.state) == "stable"
            sim.run_until_stable("app")
            assert any(e.kind == "fenced" for e in a.events)
        else:
            sim.run(10_000)
            assert sim.double_owned_samples() == 0
    assert outcomes == {"kip": False, "kafka": True}


@pytest.mark.parametrize("kind", ["consumer", "streams"])
def test_a_join_group_answer_the_coordinator_dropped_times_out_and_the_member_rejoins(kind):
    """A JoinGroup of C held by the network arrives after C's retry: Kafka's coordinator keeps one
    awaiting future per member (ClassicGroup.updateMember replaces it), so the retry's answer
    never comes. Kafka's client times the JoinGroup out (AbstractCoordinator: max(request.timeout.ms,
    rebalance timeout + 5 s)) and rejoins; without that timeout it would wait for ever."""
    c = Coordinator(cluster=Cluster({"foo": 4}, seed=1))
    t = net(c)
    sim = Simulation(c, transport=t)

    def member(name: str):
        if kind == "consumer":
            return ClassicConsumer(c, ConsumerConfig("g", ("foo",), client_id=name, max_poll_interval_ms=20_000))
        return StreamsApplication(c, StreamsConfig("g", stateless("g", "foo"), group_protocol="classic",
                                                   rebalance_timeout_ms=20_000), name=name)

    sim.add(member("A"))
    sim.run_until_stable("g")
    newcomer = member("C")
    cid = newcomer.config.client_id if kind == "consumer" else newcomer.threads[0].client_id
    t.plan("reorder", "JoinGroup", client_id=cid, after=1, hold_ms=2_000)
    sim.add(newcomer)
    sim.run_until_stable("g", timeout_ms=120_000)
    k = sim.consumers[-1]
    assert t.faults["reorder"] == 1 and any("JoinGroup timeout" in e.detail for e in k.events)
    assert k.member_id in c.groups["g"].members and len(c.groups["g"].members) == 2
    exclusive_and_complete(sim)
