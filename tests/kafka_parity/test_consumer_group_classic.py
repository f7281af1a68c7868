"""Apache Kafka's GroupMetadataManagerConsumerGroupTest (trunk, mid-2026), the cases about
classic-protocol members in or around a consumer group: the upgrade of a classic group by a
ConsumerGroupHeartbeat, the downgrade when the last consumer-protocol member goes, and JoinGroup
served by a consumer group. Through kgroup's public contract only (`Coordinator.handle`,
`Coordinator.load`, `Coordinator.advance`, the records in the log); groups Kafka builds with its
builders are loaded from the same records. KIP-848 is not a seed: trunk applies under both
profiles. The parity table is GroupMetadataManagerConsumerGroupTest.md next to this file."""
from __future__ import annotations

import pytest

from kgroup import ErrorCode as E
from kgroup import records as R
from kgroup.groups.classic import ClassicGroup, ClassicGroupState
from kgroup.groups.classic.protocol import heartbeat_key as classic_heartbeat_key
from kgroup.groups.classic_bridge import sync_key
from kgroup.groups.consumer import group as G
from kgroup.groups.consumer.protocol import rebalance_key, session_key
from kgroup.groups.modern import MemberState
from kgroup.protocol.consumer_protocol import Assignment, Subscription, encode_assignment, encode_subscription
from tests.kafka_parity import consumer_kafka
from tests.kafka_parity.consumer_kafka import (CLIENT_HOST, CLIENT_ID, PROFILES, SESSION_TIMEOUT_MS, classic_group_records,
                                               classic_member, cluster, group_hash, group_records, hb,
                                               join, member, mock_assignor, noop_assignor, tid, timeout_of, written)
from tests.kgroup_testing import join as classic_join
from tests.kgroup_testing import heartbeat, join_until_member_id, sync

__all__ = ["mock_assignor", "noop_assignor"]  # the fixtures, used by name
GID = "group-id"
pytestmark = pytest.mark.parametrize("profile", PROFILES)
STABLE, UNRELEASED = MemberState.STABLE, MemberState.UNRELEASED_PARTITIONS


def coordinator(profile, clu=None, records=None, **config):
    """Kafka's test context: classic members may ask for short session timeouts."""
    return consumer_kafka.coordinator(profile, clu, records, group_min_session_timeout_ms=10, **config)


def subscription(*topics: str, owned=(), version: int = 3) -> bytes:
    """ConsumerProtocol subscription bytes (Kafka's `serializeSubscription`, latest version by default)."""
    return encode_subscription(Subscription(tuple(topics), owned_partitions=list(owned)), version)


def assignment(*partitions) -> bytes:
    return encode_assignment(Assignment(list(partitions)))


def cjoin(c, member_id: str, protocols, *, instance=None, session_ms: int = 5000, rebalance_ms: int = 10_000,
          protocol_type: str = "consumer", group: str = GID):
    """A classic JoinGroup (latest version) from Kafka's default test client."""
    return classic_join(c, group, member_id, instance=instance, protocols=protocols, session_ms=session_ms,
                        rebalance_ms=rebalance_ms, protocol_type=protocol_type, client_id=CLIENT_ID)


def converted(member_id, protocols, assigned, *, epoch=0, topics=("foo", "bar"), instance=None,
              client=("client-id", "client-host"), state=STABLE):
    """A classic member as the upgrade rebuilds it: at the classic generation, rebalance timeout 10 s,
    session timeout 5 s, its protocols and last assignment."""
    return classic_member(member(member_id, epoch=epoch, previous=epoch, topics=topics, rebalance_ms=10_000,
                                 assignor=None, client_id=client[0], client_host=client[1], instance=instance,
                                 state=state, assigned=assigned), 5000, protocols)


def conversion_records(c, members, epoch, names=("foo", "bar")):
    """The records of an upgrade up to the converted group (Kafka's order): the classic tombstone,
    the members, the group epoch (the generation), the targets (what each member has), the
    assignment epoch (timestamp 0) and the current assignments."""
    return ([R.GroupMetadata.tombstone(R.GroupMetadataKey(group=GID))]
            + [G.member_record(GID, m) for m in members]
            + [G.group_epoch_record(GID, epoch, group_hash(c.cluster, *names))]
            + [G.target_member_record(GID, m.member_id, {t: frozenset(ps) for t, ps in m.assigned_partitions.items()})
               for m in members]
            + [G.target_epoch_record(GID, epoch, 0)] + [G.current_assignment_record(GID, m) for m in members])


def join_records(c, joining, epoch, targets, names=("foo", "bar")):
    """A new member's join: its record, the bump, the targets that changed, the assignment epoch
    (stamped now) and its current assignment."""
    return ([G.member_record(GID, joining), G.group_epoch_record(GID, epoch, group_hash(c.cluster, *names))]
            + [G.target_member_record(GID, m, {t: frozenset(ps) for t, ps in a.items()}) for m, a in targets]
            + [G.target_epoch_record(GID, epoch, c.now()), G.current_assignment_record(GID, joining)])


# ---------------------------------------------------------------------------------------
# Upgrade: a ConsumerGroupHeartbeat to a classic group

def test_consumer_group_heartbeat_with_non_empty_classic_group(profile, mock_assignor):
    # Kafka's classic group is PreparingRebalance with no member, which a coordinator cannot be
    # brought to from outside; here a member of another protocol type makes it non-empty (Kafka
    # refuses the upgrade of a group not using the consumer embedded protocol the same way).
    c = coordinator(profile)
    first = cjoin(c, "", [("range", b"")], protocol_type="connect", group="classic-group-id")
    cjoin(c, first.response.member_id, [("range", b"")], protocol_type="connect", group="classic-group-id")
    assert not c.groups["classic-group-id"].is_empty()
    pos = c.position
    r = join(c, "m", group="classic-group-id", assignor="range")
    assert r.error_code == E.group_id_not_found
    assert written(c, pos) == [] and isinstance(c.groups["classic-group-id"], ClassicGroup)


def _two_classic_members(profile):
    """Kafka's stable classic group of member-id-1 (foo-0, foo-1) and member-id-2 (bar-0), generation 0."""
    clu = cluster(foo=2, bar=1)
    p1 = [("range", subscription("foo", "bar", owned=[("foo", 0), ("foo", 1)]))]
    p2 = [("range", subscription("foo", "bar", owned=[("bar", 0)]))]
    records = classic_group_records(GID, [("member-id-1", None, p1[0][1], assignment(("foo", 0), ("foo", 1))),
                                          ("member-id-2", None, p2[0][1], assignment(("bar", 0)))])
    c = coordinator(profile, clu, records, group_consumer_migration_policy="upgrade")
    return c, p1, p2


def _member_3_upgrades(c, mock_assignor):
    foo, bar = tid(c, "foo"), tid(c, "bar")
    mock_assignor.prepare({"member-id-1": {foo: [0]}, "member-id-2": {bar: [0]}, "member-id-3": {foo: [1]}})
    pos = c.position
    r = hb(c, "member-id-3", 0, group=GID, topics=["foo", "bar"], rebalance_ms=5000, assignor="range", owned={})
    assert r.error_code == E.none
    return written(c, pos)


def _after_upgrade_of_two(c, got, p1, p2, epoch):
    foo, bar = tid(c, "foo"), tid(c, "bar")
    m1 = converted("member-id-1", p1, {foo: [0, 1]}, epoch=epoch)
    m2 = converted("member-id-2", p2, {bar: [0]}, epoch=epoch)
    m3 = member("member-id-3", epoch=epoch + 1, previous=0, state=UNRELEASED, rebalance_ms=5000)
    assert got == conversion_records(c, [m1, m2], epoch) + join_records(
        c, m3, epoch + 1, [("member-id-1", {foo: [0]}), ("member-id-3", {foo: [1]})])
    assert timeout_of(c, session_key(GID, "member-id-1")) == 5000
    assert timeout_of(c, session_key(GID, "member-id-2")) == 5000
    assert timeout_of(c, session_key(GID, "member-id-3")) == SESSION_TIMEOUT_MS


def test_consumer_group_heartbeat_with_preparing_rebalance_classic_group(profile, mock_assignor):
    c, p1, p2 = _two_classic_members(profile)
    rejoin = cjoin(c, "member-id-1", p1)                       # the leader rejoins: PreparingRebalance
    assert c.groups[GID].state == ClassicGroupState.PREPARING_REBALANCE and not rejoin.done
    got = _member_3_upgrades(c, mock_assignor)
    _after_upgrade_of_two(c, got, p1, p2, 0)
    assert rejoin.done and rejoin.response.error_code == E.rebalance_in_progress


def test_consumer_group_heartbeat_with_completing_rebalance_classic_group(profile, mock_assignor):
    c, p1, p2 = _two_classic_members(profile)
    cjoin(c, "member-id-1", p1)
    cjoin(c, "member-id-2", p2)                                # all rejoined: CompletingRebalance
    assert c.groups[GID].state == ClassicGroupState.COMPLETING_REBALANCE
    follower = sync(c, GID, "member-id-2", 1)
    assert not follower.done
    got = _member_3_upgrades(c, mock_assignor)
    _after_upgrade_of_two(c, got, p1, p2, 1)
    assert follower.done and follower.response.error_code == E.rebalance_in_progress


def test_classic_group_join_to_consumer_group_fails_on_malformed_subscription_metadata(profile, mock_assignor):
    clu = cluster(foo=1)
    foo = clu.topic_id("foo")
    existing = member("existing", topics=["foo"], rebalance_ms=45_000, assigned={foo: [0]})
    c = coordinator(profile, clu, group_records(GID, 10, [existing], {"existing": {foo: [0]}},
                                                metadata_hash=group_hash(clu, "foo")),
                    group_consumer_migration_policy="upgrade")
    poison = bytes([0, 1, 0xFF, 0xFF, 0xFF, 0xFF])     # a v1 subscription whose topic array has length -1
    pos = c.position
    r = cjoin(c, "new-member", [("range", poison)], rebalance_ms=45_000)
    # Kafka throws IllegalStateException("Malformed embedded consumer protocol in subscription
    # deserialization."), which the service answers as UNKNOWN_SERVER_ERROR.
    assert r.done and (r.response.error_code, r.response.member_id) == (E.unknown_server_error, "new-member")
    assert written(c, pos) == []


def test_consumer_group_heartbeat_to_classic_group_from_existing_static_member(profile, noop_assignor):
    clu = cluster(foo=1)
    foo = clu.topic_id("foo")
    protocols = [("no-op", subscription("foo", owned=[("foo", 0)]))]
    records = classic_group_records(GID, [("member-id", "instance-id", protocols[0][1], assignment(("foo", 0)))],
                                    generation=1, protocol="no-op", client_id=CLIENT_ID, client_host=CLIENT_HOST)
    c = coordinator(profile, clu, records, group_consumer_migration_policy="upgrade", group_consumer_assignors=["no-op"])
    pos = c.position
    # The static member comes back after a restart, with a member id of its own and the new protocol.
    r = hb(c, "new-member-id", 0, group=GID, instance="instance-id", topics=["foo"], rebalance_ms=5000,
           assignor="no-op", owned={})
    assert (r.error_code, r.member_id) == (E.none, "new-member-id")
    old = converted("member-id", protocols, {foo: [0]}, epoch=1, topics=["foo"], instance="instance-id",
                    client=(CLIENT_ID, CLIENT_HOST))
    copied = old.replace(member_id="new-member-id", member_epoch=0, previous_member_epoch=0)
    final = copied.replace(member_epoch=1, server_assignor_name="no-op", rebalance_timeout_ms=5000,
                           classic_member_metadata=None)
    assert written(c, pos) == conversion_records(c, [old], 1, names=["foo"]) + [
        G.current_assignment_tombstone(GID, "member-id"), G.target_member_tombstone(GID, "member-id"),
        G.member_tombstone(GID, "member-id"),
        G.member_record(GID, copied), G.target_member_record(GID, "new-member-id", {foo: frozenset([0])}),
        G.current_assignment_record(GID, copied),
        G.member_record(GID, final), G.current_assignment_record(GID, final)]
    assert timeout_of(c, session_key(GID, "new-member-id")) == SESSION_TIMEOUT_MS


def test_consumer_group_heartbeat_to_classic_group_with_empty_assignment_member(profile, noop_assignor):
    c = coordinator(profile, cluster(foo=1, bar=1), group_consumer_migration_policy="upgrade",
                    group_consumer_assignors=["no-op"])
    protocols = [("range", subscription("foo", "bar"))]
    joined = join_until_member_id(c, GID, protocols=protocols, session_ms=5000, rebalance_ms=10_000,
                                  client_id=CLIENT_ID)
    c.advance(3001)                  # the initial rebalance delay ends: CompletingRebalance, never synced
    m1_id = joined.response.member_id
    assert c.groups[GID].state == ClassicGroupState.COMPLETING_REBALANCE
    pos = c.position
    r = hb(c, "member-id-2", 0, group=GID, topics=["foo", "bar"], rebalance_ms=5000, assignor="no-op", owned={})
    assert r.error_code == E.none
    m1 = converted(m1_id, protocols, {}, epoch=1, client=(CLIENT_ID, CLIENT_HOST))
    m2 = member("member-id-2", epoch=2, previous=0, rebalance_ms=5000, assignor="no-op")
    assert written(c, pos) == conversion_records(c, [m1], 1) + join_records(c, m2, 2, [("member-id-2", {})])
    assert timeout_of(c, session_key(GID, m1_id)) == 5000
    assert timeout_of(c, session_key(GID, "member-id-2")) == SESSION_TIMEOUT_MS


def test_consumer_group_heartbeat_from_existing_classic_static_member(profile, noop_assignor):
    clu = cluster(foo=6, bar=3)
    foo, bar = clu.topic_id("foo"), clu.topic_id("bar")
    owned = [("foo", p) for p in (0, 1, 2)] + [("bar", 0), ("bar", 1)]
    protocols = [("range", subscription("foo", "bar", owned=owned))]
    m1 = classic_member(member("m1", instance="instance-id-1", rebalance_ms=45_000, assignor="no-op",
                               assigned={foo: [0, 1, 2], bar: [0, 1]}), 5000, protocols)
    m2 = member("m2", instance="instance-id-2", rebalance_ms=45_000, assignor="no-op", assigned={foo: [3, 4, 5], bar: [2]})
    c = coordinator(profile, clu, group_records(GID, 10, [m1, m2], {"m1": {foo: [0, 1, 2], bar: [0, 1]},
                                                                   "m2": {foo: [3, 4, 5], bar: [2]}},
                                                metadata_hash=group_hash(clu, "foo", "bar")),
                    group_consumer_migration_policy="upgrade", group_consumer_assignors=["no-op"])
    pos = c.position
    # Member 1 moves to the consumer protocol under the member id it had.
    r = hb(c, "m1", 0, group=GID, instance="instance-id-1", topics=["foo", "bar"], rebalance_ms=5000,
           assignor="no-op", owned={})
    assert (r.error_code, r.member_id) == (E.none, "m1")
    copied = m1.replace(member_epoch=0, previous_member_epoch=0)
    final = copied.replace(member_epoch=10, rebalance_timeout_ms=5000, classic_member_metadata=None)
    assert written(c, pos) == [
        G.current_assignment_tombstone(GID, "m1"), G.target_member_tombstone(GID, "m1"), G.member_tombstone(GID, "m1"),
        G.member_record(GID, copied),
        G.target_member_record(GID, "m1", {foo: frozenset([0, 1, 2]), bar: frozenset([0, 1])}),
        G.current_assignment_record(GID, copied), G.member_record(GID, final), G.current_assignment_record(GID, final)]
    assert timeout_of(c, session_key(GID, "m1")) == SESSION_TIMEOUT_MS


# ---------------------------------------------------------------------------------------
# Downgrade: the last consumer-protocol member goes

def in_groups(got: list, groups: list[list]) -> bool:
    """Kafka's assertUnorderedRecordsEquals: `got` is the `groups` in order, each group in any order."""
    at = 0
    for group in groups:
        chunk = got[at:at + len(group)]
        if len(chunk) != len(group) or any(chunk.count(r) != group.count(r) for r in group):
            return False
        at += len(group)
    return at == len(got)


def _classic_and_consumer_member(profile, rebalance_ms=45_000, m2_topics=("foo", "bar")):
    """Kafka's group of member 1 (classic protocol: foo 0-2, bar 0-1) and member 2 (consumer
    protocol: foo 3-5, bar 2) at epoch 10, downgrades allowed."""
    clu = cluster(foo=6, bar=3, zar=1)
    foo, bar = clu.topic_id("foo"), clu.topic_id("bar")
    owned = [("foo", 0), ("foo", 1), ("foo", 2), ("bar", 0), ("bar", 1)]
    protocols = [("range", subscription("foo", "bar", owned=owned))]
    m1 = classic_member(member("m1", rebalance_ms=rebalance_ms, assigned={foo: [0, 1, 2], bar: [0, 1]}), 5000, protocols)
    m2 = member("m2", rebalance_ms=rebalance_ms, topics=m2_topics, assigned={foo: [3, 4, 5], bar: [2]})
    records = group_records(GID, 10, [m1, m2], {"m1": {foo: [0, 1, 2], bar: [0, 1]}, "m2": {foo: [3, 4, 5], bar: [2]}},
                            metadata_hash=group_hash(clu, "foo", "bar", *m2_topics))
    c = coordinator(profile, clu, records, group_consumer_migration_policy="downgrade")
    return c, m1, owned


def downgrade_records(c, generation, classic_members, at=None, gone=("m2",)):
    """Kafka's records of a downgrade: the tombstones of the consumer group and its members (the
    classic ones and the `gone` one; each kind in any order), then the classic group, Stable at
    `generation` since `at` (now by default), of `classic_members`: (member, assignment bytes)."""
    ids = [m.member_id for m, _ in classic_members] + list(gone)
    V = R.GroupMetadataValue
    classic = R.GroupMetadata(R.GroupMetadataKey(group=GID), V(
        protocol_type="consumer", generation=generation, protocol=classic_members[0][0].classic_member_metadata
        .supported_protocols[0][0], leader=classic_members[0][0].member_id,
        current_state_timestamp=c.now() if at is None else at,
        members=[V.MemberMetadata(member_id=m.member_id, group_instance_id=m.instance_id, client_id=m.client_id,
                                  client_host=m.client_host, rebalance_timeout=m.rebalance_timeout_ms,
                                  session_timeout=m.classic_member_metadata.session_timeout_ms,
                                  subscription=m.classic_member_metadata.supported_protocols[0][1], assignment=a)
                 for m, a in classic_members]), 3)
    return [[G.current_assignment_tombstone(GID, m) for m in ids], [G.target_member_tombstone(GID, m) for m in ids],
            [R.ConsumerGroupTargetAssignmentMetadata.tombstone(R.ConsumerGroupTargetAssignmentMetadataKey(group_id=GID))],
            [G.member_tombstone(GID, m) for m in ids], [G.partition_metadata_tombstone(GID)],
            [R.ConsumerGroupMetadata.tombstone(R.ConsumerGroupMetadataKey(group_id=GID))], [classic]]


def _downgraded(c, got, m1, owned, generation, at=None):
    assert in_groups(got, downgrade_records(c, generation, [(m1, assignment(*owned))], at)), got
    g = c.groups[GID]
    assert isinstance(g, ClassicGroup) and g.state == ClassicGroupState.PREPARING_REBALANCE  # a new rebalance
    assert classic_heartbeat_key(GID, "m1") in c.timers.pending() and f"classic-join-{GID}" in c.timers.pending()


def advance_while_m1_heartbeats(c, ms: int) -> int:
    """Let `ms` pass while classic member 1 heartbeats every 4 s (its session is 5 s: a loaded
    group arms it, which Kafka's test context does not); returns the log position before the
    last step, whose records are the expiry's."""
    while ms > 4000:
        assert heartbeat(c, GID, "m1", c.groups[GID].members["m1"].member_epoch).error_code in (
            E.none, E.rebalance_in_progress)
        c.advance(4000)
        ms -= 4000
    heartbeat(c, GID, "m1", c.groups[GID].members["m1"].member_epoch)
    pos = c.position
    c.advance(ms)
    return pos


def test_last_consumer_protocol_member_leaving_consumer_group(profile, mock_assignor):
    c, m1, owned = _classic_and_consumer_member(profile)
    pos = c.position
    r = hb(c, "m2", -1, group=GID, topics=["foo", "bar"], rebalance_ms=5000, owned={})
    assert r.error_code == E.none
    _downgraded(c, written(c, pos), m1, owned, 10)


def test_last_consumer_protocol_member_session_timeout_in_consumer_group(profile, mock_assignor):
    c, m1, owned = _classic_and_consumer_member(profile)
    hb(c, "m2", 10, group=GID, topics=["foo", "bar"], owned={})
    assert timeout_of(c, session_key(GID, "m2")) == SESSION_TIMEOUT_MS
    # (kgroup's timers fire at their deadline: the classic group is Stable since then)
    expiry = c.now() + SESSION_TIMEOUT_MS
    pos = advance_while_m1_heartbeats(c, SESSION_TIMEOUT_MS + 1)     # member 2 is fenced: the downgrade
    _downgraded(c, written(c, pos), m1, owned, 10, at=expiry)


def test_last_consumer_protocol_member_rebalance_timeout_in_consumer_group(profile, mock_assignor):
    c, m1, owned = _classic_and_consumer_member(profile, rebalance_ms=30_000, m2_topics=("foo", "bar", "zar"))
    foo, bar = tid(c, "foo"), tid(c, "bar")
    mock_assignor.prepare({"m1": {foo: [0, 1, 2], bar: [0, 1]}, "m2": {foo: [3, 4, 5]}})
    # Member 2 drops zar: a new assignment where it must revoke bar-2.
    hb(c, "m2", 10, group=GID, topics=["foo", "bar"], owned={foo: [3, 4, 5], bar: [2]})
    assert timeout_of(c, rebalance_key(GID, "m2")) == 30_000
    expiry = c.now() + 30_000
    pos = advance_while_m1_heartbeats(c, 30_001)      # member 2 is fenced: the downgrade
    _downgraded(c, written(c, pos), m1, owned, 11, at=expiry)


# ---------------------------------------------------------------------------------------
# JoinGroup to a consumer group

def consumer_protocol(*topics, owned=(), version=3):
    """Kafka's test `toConsumerProtocol`: the protocol "range" with a subscription."""
    return [("range", subscription(*topics, owned=owned, version=version))]


def _one_member_group(profile, **config):
    """Kafka's consumer group of one member at epoch 10 with foo 0-1 (no subscription of its own)."""
    clu = cluster(foo=2, bar=1)
    foo = clu.topic_id("foo")
    m = member("m", previous=10, topics=(), rebalance_ms=-1, assignor=None, client_id="", client_host="",
               assigned={foo: [0, 1]})
    records = group_records(GID, 10, [m], {"m": {foo: [0, 1]}}, metadata_hash=group_hash(clu, "foo"))
    return coordinator(profile, clu, records, **config), foo, m


def test_joining_consumer_group_throws_exception_if_group_over_max_size(profile, mock_assignor):
    c, _, _ = _one_member_group(profile, group_consumer_max_size=1)
    pos = c.position
    r = cjoin(c, "", [("range", b"")], rebalance_ms=500)
    # (Kafka's message, "The consumer group has reached its maximum capacity of 1 members.", is not on the wire)
    assert r.done and r.response.error_code == E.group_max_size_reached
    assert written(c, pos) == []


def _roundrobin_member_group(profile):
    """A consumer group whose only member speaks the classic protocol with "roundrobin" alone."""
    m = classic_member(member("m", previous=10, topics=(), assignor=None), 5000, [("roundrobin", b"")])
    return coordinator(profile, cluster(foo=2, bar=1), group_records(GID, 10, [m]))


def test_joining_consumer_group_throws_exception_if_protocol_is_not_supported(profile, mock_assignor):
    c = _roundrobin_member_group(profile)
    pos = c.position
    assert cjoin(c, "", [("range", b"")], rebalance_ms=500).response.error_code == E.inconsistent_group_protocol
    assert cjoin(c, "", [("range", b"")], rebalance_ms=500, protocol_type="connect").response.error_code \
        == E.inconsistent_group_protocol
    assert written(c, pos) == []


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_joining_consumer_group_with_new_dynamic_member(profile, mock_assignor, version):
    c, foo, _ = _one_member_group(profile)
    bar = tid(c, "bar")
    protocols = consumer_protocol("foo", "bar", version=version)
    pos = c.position
    first = cjoin(c, "", protocols, rebalance_ms=500)
    assert first.response.error_code == E.member_id_required and written(c, pos) == []
    new_id = first.response.member_id
    assert new_id != ""
    mock_assignor.prepare({"m": {foo: [0]}, new_id: {bar: [0]}})
    second = cjoin(c, new_id, protocols, rebalance_ms=500)
    expected = classic_member(member(new_id, epoch=11, previous=0, rebalance_ms=500, assignor=None,
                                     assigned={bar: [0]}), 5000, protocols)
    assert in_groups(written(c, pos), [
        [G.member_record(GID, expected)], [G.group_epoch_record(GID, 11, group_hash(c.cluster, "foo", "bar"))],
        [G.target_member_record(GID, "m", {foo: frozenset([0])}),
         G.target_member_record(GID, new_id, {bar: frozenset([0])})],
        [G.target_epoch_record(GID, 11, c.now())], [G.current_assignment_record(GID, expected)]])
    assert second.done
    resp = second.response
    assert (resp.error_code, resp.member_id, resp.generation_id, resp.protocol_type, resp.protocol_name) == (
        E.none, new_id, 11, "consumer", "range")
    assert timeout_of(c, session_key(GID, new_id)) == 5000
    assert timeout_of(c, sync_key("consumer", GID, new_id)) == 500


def test_joining_consumer_group_with_new_static_member(profile, noop_assignor):
    c, foo, _ = _one_member_group(profile, group_consumer_assignors=["no-op"])
    protocols = consumer_protocol("foo", "bar")
    pos = c.position
    r = cjoin(c, "", protocols, instance="instance-id", rebalance_ms=500)
    assert r.done and r.response.error_code == E.none
    new_id = r.response.member_id
    assert new_id != ""
    expected = classic_member(member(new_id, epoch=11, previous=0, instance="instance-id", rebalance_ms=500,
                                     assignor=None), 5000, protocols)
    assert written(c, pos) == [
        G.member_record(GID, expected), G.group_epoch_record(GID, 11, group_hash(c.cluster, "foo", "bar")),
        G.target_member_record(GID, new_id, {}), G.target_epoch_record(GID, 11, c.now()),
        G.current_assignment_record(GID, expected)]
    resp = r.response
    assert (resp.generation_id, resp.protocol_type, resp.protocol_name) == (11, "consumer", "range")
    assert timeout_of(c, session_key(GID, new_id)) == 5000
    assert timeout_of(c, sync_key("consumer", GID, new_id)) == 500


def test_joining_consumer_group_replacing_existing_static_member(profile, noop_assignor):
    clu = cluster(foo=2)
    foo = clu.topic_id("foo")
    old = member("old", previous=10, instance="instance-id", topics=["foo"], rebalance_ms=500, assignor=None,
                 client_id="", client_host="", assigned={foo: [0, 1]})
    c = coordinator(profile, clu, group_records(GID, 10, [old], {"old": {foo: [0, 1]}},
                                                metadata_hash=group_hash(clu, "foo")),
                    group_consumer_migration_policy="disabled", group_consumer_assignors=["no-op"])
    protocols = consumer_protocol("foo")
    pos = c.position
    r = cjoin(c, "", protocols, instance="instance-id", rebalance_ms=500)
    assert r.done and r.response.error_code == E.none
    new_id = r.response.member_id
    copied = old.replace(member_id=new_id, member_epoch=0, previous_member_epoch=0)
    expected = classic_member(copied.replace(member_epoch=10, client_id=CLIENT_ID, client_host=CLIENT_HOST),
                              5000, protocols)
    assert written(c, pos) == [
        G.current_assignment_tombstone(GID, "old"), G.target_member_tombstone(GID, "old"), G.member_tombstone(GID, "old"),
        G.member_record(GID, copied), G.target_member_record(GID, new_id, {foo: frozenset([0, 1])}),
        G.current_assignment_record(GID, copied), G.member_record(GID, expected),
        G.current_assignment_record(GID, expected)]
    resp = r.response
    assert (resp.member_id, resp.generation_id, resp.protocol_type, resp.protocol_name) == (new_id, 10, "consumer", "range")
    assert timeout_of(c, session_key(GID, new_id)) == 5000
    assert timeout_of(c, sync_key("consumer", GID, new_id)) == 500


def test_joining_consumer_group_with_existing_static_member_and_new_subscription(profile, mock_assignor):
    clu = cluster(foo=2, bar=1, zar=1)
    foo, bar, zar = clu.topic_id("foo"), clu.topic_id("bar"), clu.topic_id("zar")
    h = group_hash(clu, "foo", "bar", "zar")
    m1 = classic_member(member("m1", previous=10, instance="instance-id", rebalance_ms=500, assignor=None,
                               assigned={foo: [0], bar: [0]}),
                        5000, consumer_protocol("foo", "bar", owned=[("foo", 0), ("foo", 1)]))
    m2 = member("m2", previous=10, rebalance_ms=500, assignor=None, assigned={foo: [1]})
    c = coordinator(profile, clu, group_records(GID, 10, [m1, m2], {"m1": {foo: [0], bar: [0]}, "m2": {foo: [1]}},
                                                metadata_hash=h))
    mock_assignor.prepare({"m1": {foo: [0], zar: [0]}, "m2": {bar: [0], foo: [1]}})
    protocols = consumer_protocol("foo", "bar", "zar")
    pos = c.position
    r = cjoin(c, "m1", protocols, rebalance_ms=500)     # member 1 rejoins with a new subscription
    # foo-0 keeps its epoch 10; zar-0 comes at 11
    expected = m1.replace(member_epoch=11, previous_member_epoch=10, subscribed_topic_names=frozenset(["foo", "bar", "zar"]),
                          assigned_partitions={foo: {0: 10}, zar: {0: 11}})
    expected = classic_member(expected, 5000, protocols)
    assert in_groups(written(c, pos), [
        [G.member_record(GID, expected)], [G.group_epoch_record(GID, 11, h)],
        [G.target_member_record(GID, "m1", {foo: frozenset([0]), zar: frozenset([0])}),
         G.target_member_record(GID, "m2", {bar: frozenset([0]), foo: frozenset([1])})],
        [G.target_epoch_record(GID, 11, c.now())], [G.current_assignment_record(GID, expected)]])
    resp = r.response
    assert (resp.error_code, resp.member_id, resp.generation_id, resp.protocol_type, resp.protocol_name) == (
        E.none, "m1", 11, "consumer", "range")
    assert timeout_of(c, session_key(GID, "m1")) == 5000
    assert timeout_of(c, sync_key("consumer", GID, "m1")) == 500


def _static_candidates(profile, instance):
    protocols = consumer_protocol("foo", "bar", owned=[("foo", 0), ("foo", 1)])
    m1 = classic_member(member("m1", previous=10, topics=(), instance=instance, assignor=None), 5000, protocols)
    m2 = member("m2", previous=10, topics=(), assignor=None)
    return coordinator(profile, cluster(foo=2, bar=1), group_records(GID, 10, [m1, m2])), protocols


def test_static_member_joining_consumer_group_with_unknown_instance_id(profile, mock_assignor):
    c, protocols = _static_candidates(profile, None)
    pos = c.position
    r = cjoin(c, "m1", protocols, instance="instance-id", rebalance_ms=500)
    assert r.response.error_code == E.unknown_member_id and written(c, pos) == []


def test_static_member_joining_consumer_group_with_unmatched_member_id(profile, mock_assignor):
    c, protocols = _static_candidates(profile, "instance-id")
    pos = c.position
    r = cjoin(c, "another-member-id", protocols, instance="instance-id", rebalance_ms=500)
    assert r.response.error_code == E.fenced_instance_id and written(c, pos) == []


# ---------------------------------------------------------------------------------------
# The last static consumer-protocol member replaced by a classic one: the downgrade

def _static_consumer_member_and_classic_member(profile, *, group_epoch=10, m1_assigned=None, m2_topics=("foo",),
                                               m2_assigned=None, targets=None):
    """Kafka's group of member 1 (classic protocol "no-op") and static member 2 ("instance-id",
    consumer protocol); downgrades allowed, the no-op assignor."""
    clu = cluster(foo=6, bar=2)
    foo, bar = clu.topic_id("foo"), clu.topic_id("bar")
    m1_assigned = {foo: [0, 1, 2], bar: [0, 1]} if m1_assigned is None else m1_assigned
    owned = [("foo" if t == foo else "bar", p) for t, ps in m1_assigned.items() for p in ps]
    p1 = [("no-op", subscription("foo", "bar", owned=owned))]
    m1 = classic_member(member("m1", rebalance_ms=45_000, assignor="no-op", assigned=m1_assigned), 5000, p1)
    m2 = member("old-m2", instance="instance-id", topics=m2_topics, rebalance_ms=45_000, assignor="no-op",
                assigned={foo: [3, 4, 5]} if m2_assigned is None else m2_assigned)
    targets = {"m1": m1_assigned, "old-m2": m2.assigned} if targets is None else targets
    records = group_records(GID, group_epoch, [m1, m2], targets, assignment_epoch=10,
                            metadata_hash=group_hash(clu, "foo", "bar"))
    c = coordinator(profile, clu, records, group_consumer_migration_policy="downgrade",
                    group_consumer_assignors=["no-op"])
    return c, m1, m2, owned


def _classic_record_equal(got, expected) -> bool:
    """GroupMetadata records equal but for the order of their members (Kafka's test does not pin the leader)."""
    g, e = got.value, expected.value
    key = lambda m: m.member_id  # noqa: E731
    return (got.key == expected.key and sorted(g.members, key=key) == sorted(e.members, key=key)
            and (g.protocol_type, g.generation, g.protocol, g.current_state_timestamp)
            == (e.protocol_type, e.generation, e.protocol, e.current_state_timestamp))


@pytest.mark.parametrize("subscription_changed", [True, False])
def test_last_static_consumer_protocol_member_replaced_by_classic_protocol_member(profile, noop_assignor,
                                                                                  subscription_changed):
    c, m1, old, owned = _static_consumer_member_and_classic_member(profile)
    foo = tid(c, "foo")
    topics = ("foo", "bar") if subscription_changed else ("foo",)
    p2 = [("no-op", subscription(*topics))]
    pos = c.position
    r = cjoin(c, "", p2, instance="instance-id", rebalance_ms=500)
    assert r.done and r.response.error_code == E.none
    new_id = r.response.member_id
    copied = old.replace(member_id=new_id, member_epoch=0, previous_member_epoch=0)
    # (its epoch shows only where it reconciles: to the unchanged group's 10)
    joined = classic_member(old.replace(member_id=new_id, previous_member_epoch=0, member_epoch=10,
                                        subscribed_topic_names=frozenset(topics), rebalance_timeout_ms=500), 5000, p2)
    replacing = [[G.current_assignment_tombstone(GID, "old-m2")], [G.target_member_tombstone(GID, "old-m2")],
                 [G.member_tombstone(GID, "old-m2")], [G.member_record(GID, copied)],
                 [G.target_member_record(GID, new_id, {foo: frozenset([3, 4, 5])})],
                 [G.current_assignment_record(GID, copied)]]
    if subscription_changed:
        update = [[G.member_record(GID, joined)], [G.group_epoch_record(GID, 11, group_hash(c.cluster, "foo", "bar"))]]
    else:
        update = [[G.member_record(GID, joined)], [G.current_assignment_record(GID, joined)]]
    # the group's tombstones name the joining member in the replaced one's place
    downgrade = downgrade_records(c, 10, [(m1, assignment(*owned)),
                                          (joined, assignment(("foo", 3), ("foo", 4), ("foo", 5)))], gone=())
    got = written(c, pos)
    assert in_groups(got[:-1], replacing + update + downgrade[:-1]), got
    assert _classic_record_equal(got[-1], downgrade[-1][0])
    g = c.groups[GID]
    assert isinstance(g, ClassicGroup) and g.leader_id in ("m1", new_id)
    assert classic_heartbeat_key(GID, "m1") in c.timers.pending()
    # A rebalance when the subscription changed
    assert g.state == (ClassicGroupState.PREPARING_REBALANCE if subscription_changed else ClassicGroupState.STABLE)


def _replaced_with_a_rebalance(c):
    pos = c.position
    r = cjoin(c, "", [("no-op", subscription("foo", "bar"))], instance="instance-id", rebalance_ms=500)
    assert r.done and r.response.error_code == E.none
    g = c.groups[GID]
    # A rebalance is triggered.
    assert isinstance(g, ClassicGroup) and g.state == ClassicGroupState.PREPARING_REBALANCE
    assert isinstance(written(c, pos)[-1], R.GroupMetadata)


def test_last_static_consumer_protocol_member_replaced_by_classic_protocol_member_when_target_assignment_is_stale(
        profile, noop_assignor):
    # Member 2 has just changed its subscription from foo to bar; the new assignment is not computed yet.
    c, *_ = _static_consumer_member_and_classic_member(profile, group_epoch=11, m2_topics=("foo", "bar"))
    _replaced_with_a_rebalance(c)


def test_last_static_consumer_protocol_member_replaced_by_classic_protocol_member_when_target_assignment_is_missing(
        profile, noop_assignor):
    # Member 1 has just joined and has no assignment yet.
    clu = cluster(foo=6, bar=2)                        # the helper's cluster (same seed): the same topic ids
    foo, bar = clu.topic_id("foo"), clu.topic_id("bar")
    c, *_ = _static_consumer_member_and_classic_member(
        profile, group_epoch=11, m1_assigned={}, m2_topics=("foo", "bar"), m2_assigned={foo: range(6), bar: [0, 1]},
        targets={"old-m2": {foo: range(6), bar: [0, 1]}})
    _replaced_with_a_rebalance(c)
