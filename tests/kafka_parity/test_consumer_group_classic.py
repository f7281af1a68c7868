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
from tests.kgroup_testing import join_until_member_id, sync

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
