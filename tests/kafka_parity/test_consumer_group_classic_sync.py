"""Apache Kafka's GroupMetadataManagerConsumerGroupTest, its classic members inside a consumer group
(KIP-848 online migration): a classic member's JoinGroup reconciling, its SyncGroup, Heartbeat and
LeaveGroup with their errors, fencing by session and join timeout, batch and admin leaves, and a
consumer member with a regex replaced by a classic one. Through `Coordinator.handle`,
`Coordinator.load` (groups built from Kafka-shaped records), `Coordinator.advance` and `c.log`.
KIP-848 is not a seed: trunk applies under both profiles.

Kafka's test context calls the GroupMetadataManager directly, below GroupCoordinatorService's
session-timeout check; its JoinGroup requests carry a 500 ms session timeout, so these coordinators
accept one (`group.min.session.timeout.ms`). The parity table is GroupMetadataManagerConsumerGroupTest.md."""
from __future__ import annotations

import uuid

import pytest

from kgroup import ErrorCode as E
from kgroup import records as R
from kgroup.groups.classic import ClassicGroup
from kgroup.groups.classic.protocol import heartbeat_key as classic_heartbeat_key
from kgroup.groups.classic_bridge import join_key, sync_key
from kgroup.groups.consumer import ConsumerGroupMember, ResolvedRegularExpression
from kgroup.groups.consumer import group as G
from kgroup.groups.consumer.protocol import session_key
from kgroup.groups.modern import MemberState
from kgroup.protocol import request
from kgroup.protocol.consumer_protocol import (HIGHEST_VERSION, Assignment, Subscription, encode_assignment,
                                               encode_subscription)
from tests.kafka_parity.consumer_kafka import (CLIENT_ID, PROFILES, answer, classic_member, cluster, consumer_group,
                                               coordinator, group_hash, group_records, hb, member, mock_assignor, ok,
                                               timeout_of, with_epochs, written)

__all__ = ["mock_assignor"]  # the fixture, used by name
GID = "group-id"
pytestmark = pytest.mark.parametrize("profile", PROFILES)
STABLE, UNREVOKED, UNRELEASED = MemberState.STABLE, MemberState.UNREVOKED_PARTITIONS, MemberState.UNRELEASED_PARTITIONS
#: Kafka's test context sits below the service's session-timeout check (its joins ask for 500 ms)
LOW_MIN_SESSION = {"group_min_session_timeout_ms": 500}


# ---------------------------------------------------------------------------------------
# Kafka's GroupMetadataManagerTestContext for classic requests

def protocols(topics, owned=(), version: int = HIGHEST_VERSION) -> tuple[tuple[str, bytes], ...]:
    """Kafka's `toConsumerProtocol`: one "range" protocol with the subscription (and owned partitions)."""
    return (("range", encode_subscription(Subscription(tuple(topics), owned_partitions=tuple(owned)), version)),)


def bare(member_id: str, **fields) -> ConsumerGroupMember:
    """Kafka's `new ConsumerGroupMember.Builder(id)` with only the fields a test sets."""
    return ConsumerGroupMember(member_id, **fields)


def cjoin(c, member_id: str, protos, *, instance: str | None = None, session_ms: int = 500,
          rebalance_ms: int = 500, group: str = GID):
    """A JoinGroup as Kafka's JoinGroupRequestBuilder makes it (protocol type "consumer", 500 ms timeouts)."""
    return c.handle(request("JoinGroup", 9, group_id=group, member_id=member_id, group_instance_id=instance,
                            session_timeout=session_ms, rebalance_timeout=rebalance_ms, protocol_type="consumer",
                            protocols=[{"name": n, "metadata": m} for n, m in protos]), client_id=CLIENT_ID)


def csync(c, member_id: str, generation: int, *, instance: str | None = None, protocol_type: str | None = "consumer",
          protocol_name: str | None = "range"):
    """A SyncGroup as Kafka's SyncGroupRequestBuilder makes it (latest version, no assignments)."""
    return c.handle(request("SyncGroup", 5, group_id=GID, member_id=member_id, group_instance_id=instance,
                            generation_id=generation, protocol_type=protocol_type, protocol_name=protocol_name,
                            assignments=[]))


def cheartbeat(c, member_id: str, generation: int, *, instance: str | None = None):
    return c.handle(request("Heartbeat", 4, group_id=GID, member_id=member_id, group_instance_id=instance,
                            generation_id=generation))


def cleave(c, *identities: tuple[str, str | None]):
    return c.handle(request("LeaveGroup", 5, group_id=GID,
                            members=[{"member_id": m, "group_instance_id": i} for m, i in identities]))


def assert_synced(c, member_id: str, generation: int, pairs, *, name: str | None = "range",
                  ptype: str | None = "consumer", version: int = HIGHEST_VERSION, session_ms: int = 5000):
    """Kafka's `verifyClassicGroupSyncToConsumerGroup`: nothing written, the member's assignment as
    ConsumerProtocol bytes, the protocol type and name echoed, a fresh session and no sync deadline."""
    pos = c.position
    s = csync(c, member_id, generation, protocol_type=ptype, protocol_name=name)
    assert s.done and written(c, pos) == []
    r = s.response
    assert (r.error_code, r.protocol_type, r.protocol_name) == (E.none, ptype, name)
    assert bytes(r.assignment) == encode_assignment(Assignment(tuple(pairs)), version)
    assert timeout_of(c, session_key(GID, member_id)) == session_ms
    assert timeout_of(c, sync_key("consumer", GID, member_id)) is None


def joined(j, member_id: str, generation: int) -> None:
    """A JoinGroup answered at once, as Kafka answers a classic member of a consumer group."""
    assert j.done
    r = j.response
    assert (r.error_code, r.member_id, r.generation_id, r.protocol_type, r.protocol_name, r.leader, list(r.members)) \
        == (E.none, member_id, generation, "consumer", "range", "", [])


# ---------------------------------------------------------------------------------------
# A classic member's JoinGroup reconciles it (eager: owns nothing; cooperative: owns its partitions)

def _reconciling_group(profile):
    """Kafka's set-up: classic m1 (foo-0, bar-0) and consumer m2 (foo-1) at epoch 10; the next target
    gives m1 foo-0/1 and zar-0, m2 bar-0 (each must give up what the other gets)."""
    clu = cluster(foo=2, bar=1, zar=1)
    foo, bar, zar = (clu.topic_id(t) for t in ("foo", "bar", "zar"))
    m1 = classic_member(member("m1", previous=10, rebalance_ms=500, assignor=None, assigned={foo: [0], bar: [0]}),
                        5000, protocols(["foo", "bar"], [("foo", 0), ("bar", 0)]))
    m2 = member("m2", previous=10, rebalance_ms=500, assignor=None, assigned={foo: [1]})
    records = group_records(GID, 10, [m1, m2], {"m1": {foo: [0], bar: [0]}, "m2": {foo: [1]}},
                            metadata_hash=group_hash(clu, "foo", "bar"))
    return coordinator(profile, clu, records, **LOW_MIN_SESSION), foo, bar, zar


def _new_target_records(c, got, joiner, foo, bar, zar):
    """The join's records up to the target: the member, epoch 11, both targets (any order), their epoch."""
    assert got[:2] == [G.member_record(GID, joiner),
                       G.group_epoch_record(GID, 11, group_hash(c.cluster, "foo", "bar", "zar"))]
    assert sorted(got[2:4], key=lambda r: r.key.member_id) == [
        G.target_member_record(GID, "m1", {foo: frozenset({0, 1}), zar: frozenset({0})}),
        G.target_member_record(GID, "m2", {bar: frozenset({0})})]
    assert got[4] == G.target_epoch_record(GID, 11, c.now())


def _rejoin_notified(c, member_id, generation):
    """The classic member's heartbeat tells it to rejoin, within its rebalance timeout."""
    assert cheartbeat(c, member_id, generation).error_code == E.rebalance_in_progress
    assert timeout_of(c, join_key("consumer", GID, member_id)) == 500


def _timers_after_join(c, member_id):
    assert timeout_of(c, session_key(GID, member_id)) == 5000
    assert timeout_of(c, sync_key("consumer", GID, member_id)) == 500


def test_reconciliation_in_joining_consumer_group_with_eager_protocol(profile, mock_assignor):
    c, foo, bar, zar = _reconciling_group(profile)
    mock_assignor.prepare({"m1": {foo: [0, 1], zar: [0]}, "m2": {bar: [0]}})
    # m1 rejoins with a new subscription and owns nothing (eager): it waits for foo-1.
    protos = protocols(["foo", "bar", "zar"])
    pos = c.position
    j = cjoin(c, "m1", protos, session_ms=5000)
    expected1 = classic_member(member("m1", epoch=11, previous=10, state=UNRELEASED, topics=["foo", "bar", "zar"],
                               rebalance_ms=500, assignor=None), 5000, protos).replace(
        assigned_partitions={foo: {0: 10}, zar: {0: 11}})
    got = written(c, pos)
    _new_target_records(c, got, expected1, foo, bar, zar)
    assert got[5:] == [G.current_assignment_record(GID, expected1)]
    assert consumer_group(c, GID).members["m1"].state == UNRELEASED
    joined(j, "m1", 11)
    _timers_after_join(c, "m1")
    assert_synced(c, "m1", 11, [("foo", 0), ("zar", 0)])
    # m2 revokes foo-1; m1 learns from its heartbeat that it must rejoin.
    hb(c, "m2", 10, group=GID, owned={})
    _rejoin_notified(c, "m1", 11)
    pos = c.position
    j = cjoin(c, "m1", protos, session_ms=5000)
    expected2 = expected1.replace(state=STABLE, previous_member_epoch=11,
                                  assigned_partitions={foo: {0: 10, 1: 11}, zar: {0: 11}})
    assert written(c, pos) == [G.current_assignment_record(GID, expected2)]
    assert timeout_of(c, join_key("consumer", GID, "m1")) is None
    joined(j, "m1", 11)
    _timers_after_join(c, "m1")
    assert_synced(c, "m1", 11, [("foo", 0), ("foo", 1), ("zar", 0)])


def test_reconciliation_in_joining_consumer_group_with_cooperative_protocol(profile, mock_assignor):
    c, foo, bar, zar = _reconciling_group(profile)
    mock_assignor.prepare({"m1": {foo: [0, 1], zar: [0]}, "m2": {bar: [0]}})
    # m1 rejoins with a new subscription, still owning foo-0 and bar-0: it must revoke bar-0 first.
    protos1 = protocols(["foo", "bar", "zar"], [("foo", 0), ("bar", 0)])
    pos = c.position
    j = cjoin(c, "m1", protos1, session_ms=5000)
    expected1 = classic_member(member("m1", epoch=10, previous=10, state=UNREVOKED, topics=["foo", "bar", "zar"],
                               rebalance_ms=500, assignor=None, assigned={foo: [0]}, pending={bar: [0]}), 5000, protos1)
    got = written(c, pos)
    _new_target_records(c, got, expected1, foo, bar, zar)
    assert got[5:] == [G.current_assignment_record(GID, expected1)]
    joined(j, "m1", 10)
    _timers_after_join(c, "m1")
    assert_synced(c, "m1", 10, [("foo", 0)])
    _rejoin_notified(c, "m1", 10)
    # Revoked: UNRELEASED_PARTITIONS at epoch 11 with zar-0 (foo-1 is still m2's).
    protos2 = protocols(["foo", "bar", "zar"], [("foo", 0)])
    pos = c.position
    j = cjoin(c, "m1", protos2, session_ms=5000)
    expected2 = classic_member(expected1.replace(member_epoch=11, state=UNRELEASED, partitions_pending_revocation={},
                                          assigned_partitions={foo: {0: 10}, zar: {0: 11}}), 5000, protos2)
    assert written(c, pos) == [G.member_record(GID, expected2), G.current_assignment_record(GID, expected2)]
    assert timeout_of(c, join_key("consumer", GID, "m1")) is None
    joined(j, "m1", 11)
    _timers_after_join(c, "m1")
    assert_synced(c, "m1", 11, [("foo", 0), ("zar", 0)])
    hb(c, "m2", 10, group=GID, owned={})
    _rejoin_notified(c, "m1", 11)
    protos3 = protocols(["foo", "bar", "zar"], [("foo", 0), ("zar", 0)])
    pos = c.position
    j = cjoin(c, "m1", protos3, session_ms=5000)
    expected3 = classic_member(expected2.replace(state=STABLE, previous_member_epoch=11,
                                          assigned_partitions={foo: {0: 10, 1: 11}, zar: {0: 11}}), 5000, protos3)
    assert written(c, pos) == [G.member_record(GID, expected3), G.current_assignment_record(GID, expected3)]
    assert timeout_of(c, join_key("consumer", GID, "m1")) is None
    joined(j, "m1", 11)
    _timers_after_join(c, "m1")
    assert_synced(c, "m1", 11, [("foo", 0), ("foo", 1), ("zar", 0)])


# ---------------------------------------------------------------------------------------
# SyncGroup from a classic member

def _one_classic(profile, *, epoch=10, group_epoch=10, assignment_epoch=0, instance=None, rebalance_ms=-1, **config):
    """Kafka's one classic member (subscribing foo in its protocol) at `epoch`."""
    m = classic_member(bare("m", instance_id=instance, member_epoch=epoch, rebalance_timeout_ms=rebalance_ms), 5000,
                       protocols(["foo"]))
    return coordinator(profile, cluster(foo=6), group_records(GID, group_epoch, [m], assignment_epoch=assignment_epoch),
                       **config)


def test_classic_group_sync_to_consumer_group_with_all_consumer_protocol_versions(profile, mock_assignor):
    for version in range(HIGHEST_VERSION + 1):
        clu = cluster(foo=6, bar=3)
        foo, bar = clu.topic_id("foo"), clu.topic_id("bar")
        pairs = [("foo", 0), ("foo", 1), ("foo", 2), ("bar", 0), ("bar", 1)]
        plain = dict(previous=9, assignor=None, client_id="", client_host="")
        m1 = classic_member(member("m1", assigned={foo: [0, 1, 2], bar: [0, 1]}, **plain), 5000,
                            protocols(["foo", "bar"], pairs, version))
        m2 = member("m2", assigned={foo: [3, 4, 5], bar: [2]}, **plain)
        targets = {"m1": {foo: [0, 1, 2], bar: [0, 1]}, "m2": {foo: [3, 4, 5], bar: [2]}}
        records = group_records(GID, 10, [m1, m2], targets)
        c = coordinator(profile, clu, records, group_consumer_migration_policy="downgrade")
        assert_synced(c, "m1", 10, pairs, version=version)


def test_classic_group_sync_to_consumer_group_with_unknown_member_id(profile, mock_assignor):
    c = coordinator(profile, cluster(foo=6), group_records(GID, 10, [bare("m")], assignment_epoch=0),
                    group_consumer_migration_policy="downgrade")
    assert csync(c, "unknown", 10).response.error_code == E.unknown_member_id
    assert csync(c, "m", 10, instance="unknown-instance-id").response.error_code == E.unknown_member_id
    # a member that does not speak the classic protocol
    assert csync(c, "m", 10).response.error_code == E.unknown_member_id


def test_classic_group_sync_to_consumer_group_with_fenced_instance_id(profile, mock_assignor):
    c = coordinator(profile, cluster(foo=6), group_records(GID, 10, [bare("m", instance_id="instance-id")],
                                                           assignment_epoch=0),
                    group_consumer_migration_policy="downgrade")
    assert csync(c, "other", 10, instance="instance-id").response.error_code == E.fenced_instance_id


def test_classic_group_sync_to_consumer_group_with_inconsistent_group_protocol(profile, mock_assignor):
    c = _one_classic(profile, group_consumer_migration_policy="downgrade")
    assert csync(c, "m", 10, protocol_name="roundrobin").response.error_code == E.inconsistent_group_protocol
    assert csync(c, "m", 10, protocol_type="connect").response.error_code == E.inconsistent_group_protocol
    # null protocol type and name pass the check (and are echoed as null)
    assert_synced(c, "m", 10, [], name=None, ptype=None)


def test_classic_group_sync_to_consumer_group_with_illegal_generation(profile, mock_assignor):
    c = _one_classic(profile, group_consumer_migration_policy="downgrade")
    assert csync(c, "m", 9).response.error_code == E.illegal_generation


def test_classic_group_sync_to_consumer_group_rebalance_in_progress(profile, mock_assignor):
    # the target assignment (epoch 11) is ahead of the member (10)
    c = _one_classic(profile, group_epoch=11, assignment_epoch=11, rebalance_ms=10_000,
                     group_consumer_migration_policy="downgrade")
    assert csync(c, "m", 10).response.error_code == E.rebalance_in_progress
    assert timeout_of(c, join_key("consumer", GID, "m")) == 10_000


def _assignment_delayed(profile, mock_assignor):
    """Kafka's set-up: classic m1 (foo-0..2) and consumer m2 at epoch 10; m2 has just moved from foo
    to bar, so the group is at epoch 11 and its assignment still at 10 (the next one not computed:
    KIP-1263's interval). The next target: m1 all of foo, m2 all of bar."""
    clu = cluster(foo=6, bar=3)
    foo, bar = clu.topic_id("foo"), clu.topic_id("bar")
    m1 = classic_member(member("m1", topics=["foo"], rebalance_ms=45_000, assigned={foo: [0, 1, 2]}), 5000,
                        protocols(["foo"], [("foo", 0), ("foo", 1), ("foo", 2)]))
    m2 = member("m2", topics=["bar"], rebalance_ms=45_000)
    records = group_records(GID, 11, [m1, m2], {"m1": {foo: [0, 1, 2]}, "m2": {foo: [3, 4, 5]}},
                            assignment_epoch=10, metadata_hash=group_hash(clu, "foo", "bar"))
    mock_assignor.prepare({"m1": {foo: range(6)}, "m2": {bar: range(3)}})
    return coordinator(profile, clu, records), bar


def _new_assignment_computed(c, bar) -> None:
    """m2's heartbeat computes the delayed assignment (epoch 11; the loaded group has no timestamp)."""
    r = hb(c, "m2", 10, group=GID)
    assert answer(r) == ok("m2", 11, {bar: [0, 1, 2]})


def test_classic_group_sync_to_consumer_group_during_assignment_delay(profile, mock_assignor):
    # the group epoch (11) is ahead of m1 (10), its assignment epoch is not: nothing to rejoin for
    c, bar = _assignment_delayed(profile, mock_assignor)
    assert csync(c, "m1", 10, protocol_type=None, protocol_name=None).response.error_code == E.none
    _new_assignment_computed(c, bar)
    assert csync(c, "m1", 10, protocol_type=None, protocol_name=None).response.error_code == E.rebalance_in_progress


# ---------------------------------------------------------------------------------------
# Heartbeat from a classic member

def test_classic_group_heartbeat_to_consumer_group_maintains_session(profile, mock_assignor):
    c = _one_classic(profile)
    for _ in range(3):
        assert cheartbeat(c, "m", 10).error_code == E.none
        assert timeout_of(c, session_key(GID, "m")) == 5000
        assert c.advance(2500) == []


def test_classic_group_heartbeat_to_consumer_group_rebalance_in_progress(profile, mock_assignor):
    foo, bar = uuid.UUID(int=1), uuid.UUID(int=2)       # topics the (empty) cluster does not have
    protos = protocols(["foo"])
    # m1 is behind the target epoch, m2 must revoke, all m3 waits for is free
    m1 = classic_member(bare("m1", rebalance_timeout_ms=10_000, member_epoch=9), 5000, protos)
    m2 = classic_member(bare("m2", rebalance_timeout_ms=10_000, member_epoch=10, state=UNREVOKED,
                      partitions_pending_revocation=with_epochs({foo: [0]}, 10)), 5000, protos)
    m3 = classic_member(bare("m3", rebalance_timeout_ms=10_000, member_epoch=10, state=UNRELEASED,
                      assigned_partitions=with_epochs({bar: [0]}, 10)), 5000, protos)
    records = group_records(GID, 10, [m1, m2, m3], {"m3": {bar: [0, 1, 2]}}, assignment_epoch=10)
    c = coordinator(profile, cluster(), records)
    for m in ("m1", "m2", "m3"):
        pos = c.position
        assert cheartbeat(c, m, 9 if m == "m1" else 10).error_code == E.rebalance_in_progress
        assert written(c, pos) == []
        assert timeout_of(c, session_key(GID, m)) == 5000
        assert timeout_of(c, join_key("consumer", GID, m)) == 10_000


def test_classic_group_heartbeat_to_consumer_with_unknown_member(profile, mock_assignor):
    c = coordinator(profile, cluster(), group_records(GID, 10, assignment_epoch=0))
    assert cheartbeat(c, "unknown-member-id", 10).error_code == E.unknown_member_id
    assert cheartbeat(c, "unknown-member-id", 10, instance="unknown-instance-id").error_code == E.unknown_member_id


def test_classic_group_heartbeat_to_consumer_with_fenced_instance_id(profile, mock_assignor):
    m = classic_member(bare("member-id", instance_id="instance-id", member_epoch=10), 5000, ())
    c = coordinator(profile, cluster(), group_records(GID, 10, [m], assignment_epoch=0))
    assert cheartbeat(c, "unknown-member-id", 10, instance="instance-id").error_code == E.fenced_instance_id


def test_classic_group_heartbeat_to_consumer_with_illegal_generation_id(profile, mock_assignor):
    m = classic_member(bare("member-id", member_epoch=10), 5000, ())
    c = coordinator(profile, cluster(), group_records(GID, 10, [m], assignment_epoch=0))
    assert cheartbeat(c, "member-id", 9).error_code == E.illegal_generation


def test_classic_group_heartbeat_to_consumer_with_member_not_using_classic_protocol(profile, mock_assignor):
    records = group_records(GID, 10, [bare("member-id", member_epoch=10)], assignment_epoch=0)
    c = coordinator(profile, cluster(), records)
    assert cheartbeat(c, "member-id", 10).error_code == E.unknown_member_id


def test_classic_group_heartbeat_to_consumer_group_during_assignment_delay(profile, mock_assignor):
    # the rejoin signal follows the assignment epoch, not the group epoch
    c, bar = _assignment_delayed(profile, mock_assignor)
    assert cheartbeat(c, "m1", 10).error_code == E.none
    _new_assignment_computed(c, bar)
    assert cheartbeat(c, "m1", 10).error_code == E.rebalance_in_progress


# ---------------------------------------------------------------------------------------
# Fencing a classic member by its session or its join deadline

def _fenced_records():
    """The last member out: its tombstones, epoch 11 over no topics, the assignment epoch caught up."""
    return [G.current_assignment_tombstone(GID, "m"), G.target_member_tombstone(GID, "m"),
            G.member_tombstone(GID, "m"), G.group_epoch_record(GID, 11, 0), G.target_epoch_record(GID, 11, 0)]


def test_consumer_group_member_using_classic_protocol_fenced_when_session_timeout(profile, mock_assignor):
    c = _one_classic(profile)
    cheartbeat(c, "m", 10)
    assert timeout_of(c, session_key(GID, "m")) == 5000
    pos = c.position
    c.advance(5001)
    assert written(c, pos) == _fenced_records()
    assert "m" not in consumer_group(c, GID).members and timeout_of(c, session_key(GID, "m")) is None


def test_consumer_group_member_using_classic_protocol_fenced_when_join_timeout(profile, mock_assignor):
    # the member (epoch 9) is behind the target assignment (epoch 10)
    c = _one_classic(profile, epoch=9, assignment_epoch=10, rebalance_ms=500)
    assert cheartbeat(c, "m", 9).error_code == E.rebalance_in_progress
    assert timeout_of(c, session_key(GID, "m")) == 5000
    assert timeout_of(c, join_key("consumer", GID, "m")) == 500
    pos = c.position
    c.advance(501)
    assert written(c, pos) == _fenced_records()
    assert timeout_of(c, join_key("consumer", GID, "m")) is None
    assert timeout_of(c, session_key(GID, "m")) is None


# ---------------------------------------------------------------------------------------
# LeaveGroup from classic members

def _classic_m1(foo):
    """Kafka's dynamic classic member 1 of the leave cases: foo-0 (assigned at 11), subscribing foo and bar."""
    return classic_member(member("m1", previous=9, rebalance_ms=45_000, assigned={foo: [0]}, assigned_epoch=11), 5000,
                          protocols(["foo", "bar"], [("foo", 0)]))


def _two_classic_and_a_consumer(profile, **config):
    """Kafka's batch-leave group: dynamic classic m1 (foo-0), static classic m2 (instance-id-2, foo-1,
    one epoch behind) and static consumer m3 (instance-id-3, bar-0)."""
    clu = cluster(foo=2, bar=1)
    foo, bar = clu.topic_id("foo"), clu.topic_id("bar")
    m1 = _classic_m1(foo)
    m2 = classic_member(member("m2", instance="instance-id-2", epoch=9, previous=8, rebalance_ms=45_000,
                               assigned={foo: [1]},
                        assigned_epoch=10), 5000, protocols(["foo", "bar"], [("foo", 1)]))
    m3 = member("m3", instance="instance-id-3", previous=9, rebalance_ms=45_000, assigned={bar: [0]})
    records = group_records(GID, 10, [m1, m2, m3], {"m1": {foo: [0]}, "m2": {foo: [1]}, "m3": {bar: [0]}},
                            metadata_hash=group_hash(clu, "foo", "bar"))
    return coordinator(profile, clu, records, **config), m1, m2


def test_consumer_group_member_using_classic_protocol_batch_leave_group(profile, mock_assignor):
    c, m1, m2 = _two_classic_and_a_consumer(profile, **LOW_MIN_SESSION)
    # m1 joins (sync and session deadlines), m2 heartbeats behind the group (join and session deadlines)
    cjoin(c, "m1", m1.classic_member_metadata.supported_protocols, session_ms=5000, rebalance_ms=45_000)
    assert timeout_of(c, sync_key("consumer", GID, "m1")) == 45_000
    assert timeout_of(c, session_key(GID, "m1")) == 5000
    cheartbeat(c, "m2", 9)
    assert timeout_of(c, join_key("consumer", GID, "m2")) == 45_000
    assert timeout_of(c, session_key(GID, "m2")) == 5000
    pos = c.position
    r = cleave(c, ("m1", None), ("", "instance-id-2"), ("m3", "instance-id-3"),   # m3 speaks the consumer protocol
               ("unknown-member-id", None), ("", "unknown-instance-id"), ("unknown-member-id", "instance-id-3"))
    assert r.error_code == E.none
    assert [(m.member_id, m.group_instance_id, m.error_code) for m in r.members] == [
        ("m1", None, E.none), ("", "instance-id-2", E.none), ("m3", "instance-id-3", E.none),
        ("unknown-member-id", None, E.unknown_member_id), ("", "unknown-instance-id", E.unknown_member_id),
        ("unknown-member-id", "instance-id-3", E.fenced_instance_id)]
    got = written(c, pos)
    # Kafka compares the tombstones in any order; then the group epoch, and (the group is empty) the assignment epoch
    assert sorted(map(repr, got[:9])) == sorted(repr(t) for m in ("m1", "m2", "m3") for t in (
        G.current_assignment_tombstone(GID, m), G.target_member_tombstone(GID, m), G.member_tombstone(GID, m)))
    assert got[9:] == [G.group_epoch_record(GID, 11, 0), G.target_epoch_record(GID, 11, 0)]
    for key in (session_key(GID, "m1"), sync_key("consumer", GID, "m1"), session_key(GID, "m2"),
                join_key("consumer", GID, "m2")):
        assert timeout_of(c, key) is None


def test_consumer_group_member_using_classic_protocol_batch_leave_group_updating_subscription_metadata(
        profile, mock_assignor):
    clu = cluster(foo=2, bar=1)
    foo, bar = clu.topic_id("foo"), clu.topic_id("bar")
    m1 = _classic_m1(foo)
    m2 = member("m2", previous=9, topics=["foo"], rebalance_ms=45_000, assigned={bar: [0]})
    c = coordinator(profile, clu, group_records(GID, 10, [m1, m2], {"m1": {foo: [0]}, "m2": {bar: [0]}},
                                                metadata_hash=group_hash(clu, "foo", "bar")))
    pos = c.position
    r = cleave(c, ("m1", None))
    assert [(m.member_id, m.group_instance_id, m.error_code) for m in r.members] == [("m1", None, E.none)]
    # m2 subscribes to foo only: the group's hash follows
    assert written(c, pos) == [G.current_assignment_tombstone(GID, "m1"), G.target_member_tombstone(GID, "m1"),
                               G.member_tombstone(GID, "m1"), G.group_epoch_record(GID, 11, group_hash(clu, "foo"))]


def test_classic_group_leave_to_consumer_group_without_valid_leave_group_member(profile, mock_assignor):
    c = coordinator(profile, cluster(), group_records(GID, 10, [bare("m")], assignment_epoch=0))
    pos = c.position
    r = cleave(c, ("unknown-member-id", None))
    assert [(m.member_id, m.group_instance_id, m.error_code) for m in r.members] == [
        ("unknown-member-id", None, E.unknown_member_id)]
    assert written(c, pos) == []


def test_last_consumer_protocol_member_leaving_consumer_group_by_admin_api(profile, mock_assignor):
    clu = cluster(foo=2, bar=2)
    foo, bar = clu.topic_id("foo"), clu.topic_id("bar")
    m1 = _classic_m1(foo)
    m2 = classic_member(member("m2", instance="instance-id-2", previous=9, rebalance_ms=45_000, assigned={foo: [1]}),
                        5000, protocols(["foo", "bar"], [("foo", 1)]))
    m3 = member("m3", previous=9, rebalance_ms=45_000, assigned={bar: [0]})
    m4 = member("m4", instance="instance-id-4", previous=9, rebalance_ms=45_000, assigned={bar: [1]})
    targets = {"m1": {foo: [0]}, "m2": {foo: [1]}, "m3": {bar: [0]}, "m4": {bar: [1]}}
    c = coordinator(profile, clu, group_records(GID, 10, [m1, m2, m3, m4], targets,
                                                metadata_hash=group_hash(clu, "foo", "bar")),
                    group_consumer_migration_policy="downgrade")
    pos = c.position
    # m2 (static classic), m3 (dynamic consumer) and m4 (static consumer, by instance id) leave: only
    # the classic m1 remains, so the group goes back to the classic protocol
    r = cleave(c, ("m2", None), ("m3", None), ("", "instance-id-4"))
    assert [(m.member_id, m.group_instance_id, m.error_code) for m in r.members] == [
        ("m2", None, E.none), ("m3", None, E.none), ("", "instance-id-4", E.none)]
    got = written(c, pos)
    members = ("m1", "m2", "m3", "m4")
    # Kafka compares each kind of tombstone in any order, the kinds in this order
    kinds = [sorted(map(repr, got[0:4])), sorted(map(repr, got[4:8])), got[8], sorted(map(repr, got[9:13]))]
    assert kinds == [sorted(repr(G.current_assignment_tombstone(GID, m)) for m in members),
                     sorted(repr(G.target_member_tombstone(GID, m)) for m in members),
                     R.ConsumerGroupTargetAssignmentMetadata.tombstone(
                         R.ConsumerGroupTargetAssignmentMetadataKey(group_id=GID)),
                     sorted(repr(G.member_tombstone(GID, m)) for m in members)]
    assert got[13:15] == [G.partition_metadata_tombstone(GID),
                          R.ConsumerGroupMetadata.tombstone(R.ConsumerGroupMetadataKey(group_id=GID))]
    back = c.groups[GID]
    assert isinstance(back, ClassicGroup)
    assignment = encode_assignment(Assignment((("foo", 0),)))
    meta = got[15].value
    assert (meta.protocol_type, meta.generation, meta.protocol, meta.leader, meta.current_state_timestamp) == \
        ("consumer", 10, "range", "m1", c.now())
    assert [(m.member_id, m.group_instance_id, m.client_id, m.client_host, m.rebalance_timeout, m.session_timeout,
             bytes(m.subscription), bytes(m.assignment)) for m in meta.members] == [
        ("m1", None, CLIENT_ID, m1.client_host, 45_000, 5000, m1.classic_member_metadata.supported_protocols[0][1],
         assignment)]
    assert len(got) == 16
    # the classic member has a heartbeat deadline, and a rebalance starts (with its join deadline)
    assert timeout_of(c, classic_heartbeat_key(GID, "m1")) is not None
    assert back.state == "PreparingRebalance" and timeout_of(c, f"classic-join-{GID}") is not None


def test_no_conversion_when_size_exceeds_classic_max_group_size(profile, mock_assignor):
    protos = (("range", b""),)
    members = [bare("1"), classic_member(bare("2"), 0, protos), classic_member(bare("3"), 0, protos)]
    c = coordinator(profile, cluster(), group_records(GID, 10, members, assignment_epoch=0),
                    group_max_size=1, group_consumer_migration_policy="downgrade")
    assert str(c.groups[GID].type) == "consumer"
    hb(c, "1", -1, group=GID, rebalance_ms=5000)
    # two classic members would remain, more than a classic group may hold
    assert str(c.groups[GID].type) == "consumer"


# ---------------------------------------------------------------------------------------
# A consumer member with a regex replaced by a classic member (same instance id)

def _regex_member_replaced(profile, clu, m1_names, regex, resolved, m1_assigned, join_topics):
    """Kafka's set-up: static consumer m1 subscribing `m1_names` and `regex` (resolved to `resolved`),
    m2 foo-3..5; m1's instance is taken over by a classic JoinGroup subscribing `join_topics`, and the
    assignor (prepared empty) gives nobody anything."""
    foo = clu.topic_id("foo")
    m1 = member("m1", instance="instance-id", previous=10, rebalance_ms=5000, topics=m1_names, regex=regex,
                assigned=m1_assigned)
    m2 = member("m2", previous=10, rebalance_ms=5000, topics=["foo"], assigned={foo: [3, 4, 5]})
    records = group_records("fooup", 10, [m1, m2], {"m1": m1_assigned, "m2": {foo: [3, 4, 5]}}, assignment_epoch=10,
                            regexes={regex: ResolvedRegularExpression(frozenset({resolved}), 0, 0)})
    c = coordinator(profile, clu, records, **LOW_MIN_SESSION)
    protos = (("range", encode_subscription(Subscription(tuple(join_topics)))),)
    pos = c.position
    j = cjoin(c, "", protos, instance="instance-id", rebalance_ms=5000, group="fooup")
    new_id = consumer_group(c, "fooup").static_member("instance-id").member_id
    assert j.done and j.response.error_code == E.none and j.response.member_id == new_id
    # the new member id takes m1's place (regex included), then the classic join updates it
    copied = m1.replace(member_id=new_id, member_epoch=0, previous_member_epoch=0)
    # a classic member keeps no regex: it is cleared (''), its resolution tombstoned, and nothing is assigned
    expected = classic_member(copied.replace(member_epoch=11, subscribed_topic_regex="", assigned_partitions={},
                                             subscribed_topic_names=frozenset(join_topics)), 500, protos)
    got = written(c, pos)
    assert got[:6] == [G.current_assignment_tombstone("fooup", "m1"), G.target_member_tombstone("fooup", "m1"),
                       G.member_tombstone("fooup", "m1"), G.member_record("fooup", copied),
                       G.target_member_record("fooup", new_id, {t: frozenset(ps) for t, ps in m1_assigned.items()}),
                       G.current_assignment_record("fooup", copied)]
    assert got[6:9] == [G.member_record("fooup", expected), G.regex_tombstone("fooup", regex),
                        G.group_epoch_record("fooup", 11, group_hash(clu, "foo"))]
    # Kafka compares the two target records in any order
    assert sorted(got[9:11], key=lambda r: r.key.member_id != new_id) == [
        G.target_member_record("fooup", new_id, {}), G.target_member_record("fooup", "m2", {})]
    assert got[11:] == [G.target_epoch_record("fooup", 11, c.now()), G.current_assignment_record("fooup", expected)]


def test_consumer_member_with_regex_replaced_by_classic_member_with_same_subscription(profile, mock_assignor):
    clu = cluster(foo=6, bar=1)
    m1_assigned = {clu.topic_id("foo"): [0, 1, 2], clu.topic_id("bar"): [0]}
    _regex_member_replaced(profile, clu, ["foo"], "bar*", "bar", m1_assigned, ["foo"])


def test_consumer_member_with_regex_replaced_by_classic_member_with_changed_subscription(profile, mock_assignor):
    clu = cluster(foo=6)
    _regex_member_replaced(profile, clu, [], "foo*", "foo", {clu.topic_id("foo"): [0, 1, 2]}, [])


def test_classic_member_clearing_a_regex_bumps_the_epoch_with_fresh_metadata(profile, mock_assignor):
    """Not a Kafka case of its own: the same-subscription case with the group's metadata fresh (Kafka's
    test fixes it with setMetadataRefreshDeadline; here m2's steady heartbeat refreshes it) and bar still
    subscribed by m2, so the group's topics do not change. The cleared regex alone bumps the epoch, as
    a ConsumerGroupHeartbeat clearing its regex does (Kafka's testConsumerGroupMemberClearsRegex)."""
    clu = cluster(foo=6, bar=1)
    foo, bar = clu.topic_id("foo"), clu.topic_id("bar")
    m1 = member("m1", instance="instance-id", previous=10, rebalance_ms=5000, topics=["foo"], regex="bar*",
                assigned={foo: [0, 1, 2], bar: [0]})
    m2 = member("m2", previous=10, rebalance_ms=5000, topics=["foo", "bar"], assigned={foo: [3, 4, 5]})
    records = group_records("fooup", 10, [m1, m2], {"m1": {foo: [0, 1, 2], bar: [0]}, "m2": {foo: [3, 4, 5]}},
                            metadata_hash=group_hash(clu, "foo", "bar"),
                            regexes={"bar*": ResolvedRegularExpression(frozenset({"bar"}), 0, 0)})
    c = coordinator(profile, clu, records, **LOW_MIN_SESSION)
    assert hb(c, "m2", 10).member_epoch == 10 and consumer_group(c, "fooup").group_epoch == 10   # metadata fresh
    pos = c.position
    j = cjoin(c, "", protocols(["foo"]), instance="instance-id", rebalance_ms=5000, group="fooup")
    assert j.response.error_code == E.none and j.response.generation_id == 11
    assert G.group_epoch_record("fooup", 11, group_hash(clu, "foo", "bar")) in written(c, pos)
