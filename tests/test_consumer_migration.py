"""Online migration classic -> consumer -> classic (KIP-848; Kafka's GroupMetadataManager is
the reference for the details): the assignment survives both conversions."""
from __future__ import annotations

import pytest

from kgroup import Cluster, Coordinator, ErrorCode
from kgroup.groups.classic import ClassicGroup
from kgroup.groups.consumer import ConsumerGroup
from kgroup.groups.modern import MemberState
from kgroup.protocol import request
from kgroup.protocol.consumer_protocol import Assignment, Subscription, decode_assignment, encode_assignment, \
    encode_subscription
from tests.kgroup_testing import heartbeat, join, join_until_member_id, leave, sync


def sub(version: int = 1, owned=()) -> bytes:
    return encode_subscription(Subscription(("foo",), owned_partitions=owned), version)


def classic_group(c: Coordinator) -> tuple[str, str, dict]:
    """A Stable classic group of two consumer-protocol members with foo-0..2 and foo-3..5."""
    j1 = join_until_member_id(c, "g", protocols=(("range", sub()),))
    j2 = join_until_member_id(c, "g", protocols=(("range", sub()),))
    c.advance(6000)  # the initial rebalance delay, extended once by the second join
    m1, m2 = j1.response.member_id, j2.response.member_id
    gen = j1.response.generation_id
    plan = {m1: [("foo", p) for p in (0, 1, 2)], m2: [("foo", p) for p in (3, 4, 5)]}
    leader = j1.response.leader
    follower = m2 if leader == m1 else m1
    s_leader = sync(c, "g", leader, gen, assignments={m: encode_assignment(Assignment(ps), 1) for m, ps in plan.items()})
    s_follower = sync(c, "g", follower, gen)
    assert s_leader.response.error_code == s_follower.response.error_code == ErrorCode.none
    return m1, m2, plan


def cgh(c, member_id, epoch, **kw):
    base = dict(group_id="g", member_id=member_id, member_epoch=epoch, rebalance_timeout=30_000 if epoch == 0 else -1,
                subscribed_topic_names=["foo"] if epoch == 0 else None, topic_partitions=[] if epoch == 0 else None)
    base.update(kw)
    return c.handle(request("ConsumerGroupHeartbeat", 1, **base))


@pytest.fixture
def c():
    return Coordinator(Cluster({"foo": 6}, seed=5))


def test_upgrade_keeps_the_classic_assignment_then_rebalances(c):
    m1, m2, plan = classic_group(c)
    foo = c.cluster.topic_id("foo")
    generation = c.groups["g"].generation_id
    pos = c.position
    r = cgh(c, "new", 0)
    assert r.error_code == ErrorCode.none
    g = c.groups["g"]
    assert isinstance(g, ConsumerGroup)
    # The classic group is deleted first, then rebuilt as a consumer group in Kafka's order.
    names = [type(c.log.entry_at(i).record).__name__ for i in range(pos, pos + 9)]
    assert names[0] == "GroupMetadata" and c.log.entry_at(pos).record.value is None
    assert names[1:4] == ["ConsumerGroupMemberMetadata"] * 2 + ["ConsumerGroupMetadata"]
    # Classic members keep their partitions, at the classic generation.
    for m, parts in ((m1, {0, 1, 2}), (m2, {3, 4, 5})):
        member = g.members[m]
        assert member.uses_classic_protocol and member.member_epoch == generation
        assert member.assigned == {foo: frozenset(parts)}
    # The new member's join moved the group epoch: a new target over three members.
    assert g.group_epoch == generation + 1 == g.assignment_epoch
    assert sorted(len(t.get(foo, ())) for t in g.target_assignment.values()) == [2, 2, 2]
    # Classic members learn of the rebalance through their heartbeat, then rejoin.
    for m in (m1, m2):
        assert heartbeat(c, "g", m, generation).error_code == ErrorCode.rebalance_in_progress
    for m in (m1, m2):
        owned = tuple(plan[m])
        j = join(c, "g", m, protocols=(("range", sub(1, owned)),))
        assert j.done and j.response.error_code == ErrorCode.none
        # Still owning partitions it must give up: the same epoch, revoke first.
        assert j.response.generation_id == generation
        assert g.members[m].state == MemberState.UNREVOKED_PARTITIONS
        s = sync(c, "g", m, generation)
        kept = set(p for _, p in decode_assignment(s.response.assignment)[0].partitions)
        assert kept == set(g.target_assignment[m][foo])
        j = join(c, "g", m, protocols=(("range", sub(1, tuple(("foo", p) for p in kept))),))
        assert j.response.generation_id == generation + 1
    r = cgh(c, "new", r.member_epoch, topic_partitions=[])
    assert {tp.topic_id: set(tp.partitions) for tp in r.assignment.topic_partitions} == {foo: set(g.target_assignment["new"][foo])}
    assert g.state == "Stable"


def test_last_consumer_member_leaving_converts_back_with_the_target_assignment(c):
    m1, m2, _ = classic_group(c)
    cgh(c, "new", 0)
    g = c.groups["g"]
    targets = {m: g.target_assignment[m] for m in (m1, m2)}
    epoch = g.group_epoch
    pos = c.position
    cgh(c, "new", -1)
    back = c.groups["g"]
    assert isinstance(back, ClassicGroup)
    assert set(back.members) == {m1, m2} and back.generation_id == epoch
    # The GroupMetadata record written carries the consumer group's target assignment.
    meta = [c.log.entry_at(i).record for i in range(pos, c.position)
            if type(c.log.entry_at(i).record).__name__ == "GroupMetadata"][-1]
    foo = c.cluster.topic_id("foo")
    for mm in meta.value.members:
        parts = {p for _, p in decode_assignment(mm.assignment)[0].partitions}
        assert parts == set(targets[mm.member_id].get(foo, ()))
    # ... and a rebalance starts so the classic members agree on a new generation.
    assert back.state == "PreparingRebalance"
    reloaded = Coordinator.load(c.log, cluster=c.cluster)
    assert isinstance(reloaded.groups["g"], ClassicGroup)
    assert set(reloaded.groups["g"].members) == {m1, m2}


def test_upgrade_refused_when_the_policy_forbids_it():
    c = Coordinator(Cluster({"foo": 6}, seed=5), config={"group.consumer.migration.policy": "downgrade"})
    classic_group(c)
    r = cgh(c, "new", 0)
    assert r.error_code == ErrorCode.group_id_not_found
    assert "online upgrade is disabled" in r.error_message
    assert isinstance(c.groups["g"], ClassicGroup)


def test_classic_member_leave_and_unknown_members_in_a_consumer_group(c):
    m1, m2, _ = classic_group(c)
    r = cgh(c, "new", 0)
    resp = leave(c, "g", (m1, None), ("ghost", None))
    codes = {m.member_id: m.error_code for m in resp.members}
    assert codes == {m1: ErrorCode.none, "ghost": ErrorCode.unknown_member_id}
    g = c.groups["g"]
    assert isinstance(g, ConsumerGroup) and m1 not in g.members
    # A consumer-protocol member is not reachable through the classic Heartbeat.
    assert heartbeat(c, "g", "new", r.member_epoch).error_code == ErrorCode.unknown_member_id


def test_classic_join_needs_a_protocol_every_classic_member_supports(c):
    classic_group(c)                                     # members speak "range"
    cgh(c, "new", 0)
    j = join(c, "g", "", protocols=(("roundrobin", sub()),))
    assert j.done and j.response.error_code == ErrorCode.inconsistent_group_protocol
    j = join(c, "g", "", protocols=(("roundrobin", sub()), ("range", sub())))
    assert j.response.error_code == ErrorCode.member_id_required   # then joins as usual
