"""Apache Kafka's GroupMetadataManagerConsumerGroupTest (trunk, mid-2026), through kgroup's public
contract: `Coordinator.handle`, `Coordinator.load`, `Coordinator.advance` and the records in the log.

Groups Kafka's tests build with ConsumerGroupBuilder are loaded here from the same records
(`group_records`), so every case also checks that a coordinator loaded from a Kafka-written log
continues as Kafka does. KIP-848 is not a seed: trunk applies under both profiles.
The parity table is GroupMetadataManagerConsumerGroupTest.md next to this file."""
from __future__ import annotations

import uuid

import pytest

from kgroup import Coordinator
from kgroup import ErrorCode as E
from kgroup import records as R
from kgroup.assignors import SERVER_ASSIGNORS, FixedAssignor
from kgroup.groups.consumer import ConsumerGroupMember, ResolvedRegularExpression
from kgroup.groups.consumer import group as G
from kgroup.groups.consumer.protocol import rebalance_key, session_key
from kgroup.groups.modern import MemberState
from kgroup.protocol import ms, request
from kgroup.protocol.consumer_protocol import Assignment, Subscription, encode_assignment, encode_subscription
from tests.kafka_parity.consumer_kafka import (PROFILES, SESSION_TIMEOUT_MS, answer, classic_group_records,
                                               cluster, consumer_group, frozen,
                                               coordinator, group_hash, group_records, hb, join, member,
                                               mock_assignor, mock_assignors, ok, tid, timeout_of, with_epochs, written)

__all__ = ["mock_assignor", "mock_assignors"]  # the fixtures, used by name
GID = "fooup"
pytestmark = pytest.mark.parametrize("profile", PROFILES)
STABLE, UNREVOKED, UNRELEASED = MemberState.STABLE, MemberState.UNREVOKED_PARTITIONS, MemberState.UNRELEASED_PARTITIONS


def two_member_group(profile, *, instances=(None, None), m2_topics=("foo", "bar"), **config):
    """Kafka's usual set-up: members 1 and 2 at epoch 10 owning foo 0-2/bar 0-1 and foo 3-5/bar 2."""
    clu = cluster(foo=6, bar=3, zar=1)
    foo, bar = clu.topic_id("foo"), clu.topic_id("bar")
    m1 = member("m1", instance=instances[0], rebalance_ms=5000, assigned={foo: [0, 1, 2], bar: [0, 1]})
    m2 = member("m2", instance=instances[1], rebalance_ms=5000, topics=m2_topics, assigned={foo: [3, 4, 5], bar: [2]})
    records = group_records(GID, 10, [m1, m2], {"m1": {foo: [0, 1, 2], bar: [0, 1]}, "m2": {foo: [3, 4, 5], bar: [2]}},
                            metadata_hash=group_hash(clu, "foo", "bar", *m2_topics))
    return coordinator(profile, clu, records, **config), foo, bar


def test_unknown_member_id_joins_consumer_group(profile, mock_assignor):
    c = coordinator(profile)
    assert join(c, "m1", assignor="range").error_code == E.none
    r = hb(c, "m2", 1, topics=["foo", "bar"], rebalance_ms=5000, owned={})
    assert r.error_code == E.unknown_member_id


def _member_at_100(profile, instance=None):
    clu = cluster(foo=6, bar=3)
    foo = clu.topic_id("foo")
    m = member("m", epoch=100, previous=99, rebalance_ms=5000, instance=instance, assigned={foo: [1, 2, 3]})
    c = coordinator(profile, clu, group_records(GID, 100, [m], {"m": {foo: [1, 2, 3]}}, assignment_timestamp=12345))
    return c, foo


def _epoch_validation(c, foo, instance=None):
    kw = dict(topics=["foo", "bar"], rebalance_ms=5000, instance=instance)
    assert hb(c, "m", 200, **kw).error_code == E.fenced_member_epoch   # ahead of the coordinator
    assert hb(c, "m", 50, **kw).error_code == E.fenced_member_epoch    # behind it
    assert hb(c, "m", 99, **kw).error_code == E.fenced_member_epoch    # previous epoch, no partitions
    # The previous epoch with a subset of the partitions: the answer that moved it was lost.
    assert hb(c, "m", 99, owned={foo: [1, 2]}, **kw).member_epoch == 100


def test_consumer_group_member_epoch_validation(profile, mock_assignor):
    _epoch_validation(*_member_at_100(profile))


def test_consumer_group_member_epoch_validation_for_static_member(profile, mock_assignor):
    _epoch_validation(*_member_at_100(profile, instance="m"), instance="m")


# ---------------------------------------------------------------------------------------
# KAFKA-19233: a member rejoining with epoch 0 and its own id gets its state back

def _one_member(profile, state, epoch, group_epoch, target, assigned, pending=(), others=lambda foo: []):
    clu = cluster(foo=3)
    foo = clu.topic_id("foo")
    m = member("m", epoch=epoch, previous=epoch - 1, state=state, topics=["foo"], rebalance_ms=5000,
               assigned={foo: assigned}, pending={foo: list(pending)}, assigned_epoch=11)
    members, targets = [m, *others(foo)], {"m": {foo: target}}
    targets.update({o.member_id: {} for o in members[1:]})
    records = group_records(GID, group_epoch, members, targets, metadata_hash=group_hash(clu, "foo"),
                            assignment_timestamp=12345)
    return coordinator(profile, clu, records), foo


def test_member_can_rejoin_with_epoch_zero_in_stable_state(profile, mock_assignor):
    c, foo = _one_member(profile, STABLE, 100, 100, [0, 1, 2], [0, 1, 2])
    # (assigned at epoch 100 in Kafka's test; the epoch of a kept partition does not show here)
    pos = c.position
    r = join(c, "m", topics=["foo"])
    assert answer(r) == ok("m", 100, {foo: [0, 1, 2]})
    assert written(c, pos) == []                       # nothing bumped, nothing written


def test_member_can_rejoin_with_epoch_zero_in_unrevoked_partitions_state(profile, mock_assignor):
    c, foo = _one_member(profile, UNREVOKED, 100, 101, [0, 1], [0, 1], pending=[2])
    r = join(c, "m", topics=["foo"])
    assert answer(r) == ok("m", 101, {foo: [0, 1]})
    assert consumer_group(c).group_epoch == 101


def test_member_can_rejoin_with_epoch_zero_in_unreleased_partitions_state(profile, mock_assignor):
    c, foo = _one_member(profile, UNRELEASED, 100, 100, [0, 1, 2], [0])
    r = join(c, "m", topics=["foo"])
    assert answer(r) == ok("m", 100, {foo: [0, 1, 2]})
    assert consumer_group(c).group_epoch == 100


def _full(c, member_id, epoch, owned):
    return hb(c, member_id, epoch, topics=["foo"], rebalance_ms=5000, assignor="range", owned=owned)


def _duplicate(c, member_id, epoch, owned, expected, state_after):
    first = _full(c, member_id, epoch, owned)
    assert answer(first) == expected
    pos = c.position
    again = _full(c, member_id, epoch, owned)
    assert answer(again) == answer(first) and written(c, pos) == []
    assert consumer_group(c).members[member_id].state == state_after


def test_duplicate_full_heartbeat_in_stable_state(profile, mock_assignor):
    c, foo = _one_member(profile, STABLE, 100, 100, [0, 1, 2], [0, 1, 2])
    _duplicate(c, "m", 100, {foo: [0, 1, 2]}, ok("m", 100, {foo: [0, 1, 2]}), STABLE)


def test_duplicate_full_heartbeat_in_unrevoked_partitions_state(profile, mock_assignor):
    c, foo = _one_member(profile, UNREVOKED, 100, 101, [0, 1], [0, 1], pending=[2])
    _duplicate(c, "m", 100, {foo: [0, 1, 2]}, ok("m", 100, {foo: [0, 1]}), UNREVOKED)


def test_duplicate_full_heartbeat_in_unreleased_partitions_state(profile, mock_assignor):
    def m2(foo):
        return [member("m2", epoch=99, previous=98, state=UNREVOKED, topics=["foo"], rebalance_ms=5000,
                       pending={foo: [1, 2]}, assigned_epoch=11)]
    c, foo = _one_member(profile, UNRELEASED, 100, 100, [0, 1, 2], [0], others=m2)
    _duplicate(c, "m", 100, {foo: [0]}, ok("m", 100, {foo: [0]}), UNRELEASED)


def test_duplicate_full_heartbeat_with_revocation_ack(profile, mock_assignor):
    c, foo = _one_member(profile, UNREVOKED, 100, 101, [0, 1], [0, 1], pending=[2])
    _duplicate(c, "m", 100, {foo: [0, 1]}, ok("m", 101, {foo: [0, 1]}), STABLE)


# ---------------------------------------------------------------------------------------
# Epochs and records

def test_member_joins_empty_consumer_group(profile, mock_assignor):
    c = coordinator(profile)
    foo, bar = tid(c, "foo"), tid(c, "bar")
    target = {foo: range(6), bar: range(3)}
    mock_assignor.prepare({"m": target})
    assert "fooup" not in c.groups
    r = join(c, "m", assignor="range")
    # KAFKA-20268: the group is created at epoch 1, so its first assignment is epoch 2.
    assert answer(r) == ok("m", 2, target)
    expected = member("m", epoch=2, previous=0, rebalance_ms=5000, assigned=target)
    assert written(c, 0) == [
        G.member_record(GID, expected),
        G.group_epoch_record(GID, 2, group_hash(c.cluster, "foo", "bar")),
        G.target_member_record(GID, "m", {foo: frozenset(range(6)), bar: frozenset(range(3))}),
        G.target_epoch_record(GID, 2, c.now()),
        G.current_assignment_record(GID, expected)]


def test_updating_subscription_triggers_new_target_assignment(profile, mock_assignor):
    clu = cluster(foo=6, bar=3)
    foo, bar = clu.topic_id("foo"), clu.topic_id("bar")
    m = member("m", topics=["foo"], assigned={foo: range(6)})
    c = coordinator(profile, clu, group_records(GID, 10, [m], {"m": {foo: range(6)}},
                                                metadata_hash=group_hash(clu, "foo")))
    mock_assignor.prepare({"m": {foo: range(6), bar: range(3)}})
    pos = c.position
    r = hb(c, "m", 10, topics=["foo", "bar"])
    assert answer(r) == ok("m", 11, {foo: range(6), bar: range(3)})
    expected = m.replace(subscribed_topic_names=frozenset({"foo", "bar"}), member_epoch=11, previous_member_epoch=10,
                         assigned_partitions={foo: dict.fromkeys(range(6), 10), bar: dict.fromkeys(range(3), 11)})
    assert written(c, pos) == [
        G.member_record(GID, expected), G.group_epoch_record(GID, 11, group_hash(clu, "foo", "bar")),
        G.target_member_record(GID, "m", {foo: frozenset(range(6)), bar: frozenset(range(3))}),
        G.target_epoch_record(GID, 11, c.now()), G.current_assignment_record(GID, expected)]


def _new_member_joins(profile, mock_assignor, instance=None):
    c, foo, bar = two_member_group(profile, instances=("m1", "m2") if instance else (None, None))
    targets = {"m1": {foo: [0, 1], bar: [0]}, "m2": {foo: [2, 3], bar: [1]}, "m3": {foo: [4, 5], bar: [2]}}
    mock_assignor.prepare(targets)
    pos = c.position
    r = join(c, "m3", assignor="range", instance="m3" if instance else None)
    assert answer(r) == ok("m3", 11, {})
    m3 = member("m3", epoch=11, previous=0, state=UNRELEASED, rebalance_ms=5000, instance="m3" if instance else None)
    got = written(c, pos)
    assert got[:2] == [G.member_record(GID, m3), G.group_epoch_record(GID, 11, group_hash(c.cluster, "foo", "bar"))]
    # Kafka compares the target records in any order (assertUnorderedRecordsEquals)
    assert sorted(got[2:5], key=lambda r: r.key.member_id) == [
        G.target_member_record(GID, m, {t: frozenset(ps) for t, ps in a.items()}) for m, a in sorted(targets.items())]
    assert got[5:] == [G.target_epoch_record(GID, 11, c.now()), G.current_assignment_record(GID, m3)]


def test_new_joining_member_triggers_new_target_assignment(profile, mock_assignor):
    _new_member_joins(profile, mock_assignor)


def test_group_epoch_bump_when_new_static_member_joins(profile, mock_assignor):
    _new_member_joins(profile, mock_assignor, instance=True)


def _leave(profile, instance):
    c, foo, bar = two_member_group(profile, instances=("m1", "m2") if instance else (None, None),
                                   m2_topics=("foo", "bar", "zar"))
    pos = c.position
    r = hb(c, "m2", -1, instance="m2" if instance else None, topics=["foo", "bar"], rebalance_ms=5000, owned={})
    assert answer(r) == (E.none, "m2", -1, 0, None)
    # The group's metadata hash is recomputed without zar. The group is not empty: no
    # target-assignment-metadata record (KAFKA-20442 writes one only when it empties).
    assert written(c, pos) == [G.current_assignment_tombstone(GID, "m2"), G.target_member_tombstone(GID, "m2"),
                               G.member_tombstone(GID, "m2"),
                               G.group_epoch_record(GID, 11, group_hash(c.cluster, "foo", "bar"))]


def test_leaving_member_bumps_group_epoch(profile, mock_assignor):
    _leave(profile, instance=False)


def test_leaving_static_member_bumps_group_epoch(profile, mock_assignor):
    _leave(profile, instance=True)


def test_no_group_epoch_bump_when_static_member_temporarily_leaves(profile, mock_assignor):
    c, foo, bar = two_member_group(profile, instances=("m1", "m2"))
    m2 = consumer_group(c).members["m2"]
    pos = c.position
    r = hb(c, "m2", -2, instance="m2", topics=["foo", "bar"], rebalance_ms=5000, owned={})
    assert answer(r) == (E.none, "m2", -2, 0, None)
    # Kafka resets the partitions' assignment epochs to 0 (resetAssignedPartitionsEpochsToZero).
    leaving = m2.replace(member_epoch=-2, assigned_partitions={foo: dict.fromkeys([3, 4, 5], 0), bar: {2: 0}})
    assert written(c, pos) == [G.current_assignment_record(GID, leaving)]


def test_static_member_gets_back_assignment_upon_rejoin(profile, mock_assignor):
    c, foo, bar = two_member_group(profile, instances=("m1", "m2"))
    hb(c, "m2", -2, instance="m2", topics=["foo", "bar"], owned={})
    pos = c.position
    r = join(c, "m2b", instance="m2", assignor="range")
    assert answer(r) == ok("m2b", 10, {foo: [3, 4, 5], bar: [2]})
    copied = member("m2b", epoch=0, previous=0, instance="m2", rebalance_ms=5000,
                    assigned={foo: [3, 4, 5], bar: [2]}, assigned_epoch=0)
    assert written(c, pos) == [
        G.current_assignment_tombstone(GID, "m2"), G.target_member_tombstone(GID, "m2"), G.member_tombstone(GID, "m2"),
        G.member_record(GID, copied), G.target_member_record(GID, "m2b", {foo: frozenset({3, 4, 5}), bar: frozenset({2})}),
        G.current_assignment_record(GID, copied),
        G.current_assignment_record(GID, copied.replace(member_epoch=10))]
    assert timeout_of(c, session_key(GID, "m2")) is None and timeout_of(c, rebalance_key(GID, "m2")) is None


def test_static_member_rejoins_with_new_subscribed_topics(profile, mock_assignor):
    clu = cluster(foo=6, bar=3)
    foo, bar = clu.topic_id("foo"), clu.topic_id("bar")
    m1 = member("m1", instance="i1", topics=["foo"], rebalance_ms=5000, assigned={foo: [0, 1, 2]})
    m2 = member("m2", instance="i2", topics=["foo"], rebalance_ms=5000, assigned={foo: [3, 4, 5]})
    c = coordinator(profile, clu, group_records(GID, 10, [m1, m2], {"m1": {foo: [0, 1, 2]}, "m2": {foo: [3, 4, 5]}},
                                                metadata_hash=group_hash(clu, "foo")))
    mock_assignor.prepare({"m1": {foo: [0, 1, 2]}, "m2b": {foo: [3, 4, 5], bar: [0, 1, 2]}})
    assert answer(hb(c, "m2", -2, instance="i2")) == (E.none, "m2", -2, 0, None)
    pos = c.position
    r = join(c, "m2b", instance="i2", assignor="range")
    assert answer(r) == ok("m2b", 11, {foo: [3, 4, 5], bar: [0, 1, 2]})
    copied = member("m2b", epoch=0, previous=0, instance="i2", topics=["foo"], rebalance_ms=5000,
                    assigned={foo: [3, 4, 5]}, assigned_epoch=0)
    rejoined = copied.replace(subscribed_topic_names=frozenset({"foo", "bar"}), member_epoch=11,
                              assigned_partitions={foo: dict.fromkeys([3, 4, 5], 0), bar: dict.fromkeys(range(3), 11)})
    assert written(c, pos) == [
        G.current_assignment_tombstone(GID, "m2"), G.target_member_tombstone(GID, "m2"), G.member_tombstone(GID, "m2"),
        G.member_record(GID, copied), G.target_member_record(GID, "m2b", {foo: frozenset({3, 4, 5})}),
        G.current_assignment_record(GID, copied),
        G.member_record(GID, rejoined), G.group_epoch_record(GID, 11, group_hash(clu, "foo", "bar")),
        G.target_member_record(GID, "m2b", {foo: frozenset({3, 4, 5}), bar: frozenset(range(3))}),
        G.target_epoch_record(GID, 11, c.now()), G.current_assignment_record(GID, rejoined)]


def test_static_members_rejoin_with_new_server_assignor(profile, mock_assignors):
    clu = cluster(foo=6)
    foo = clu.topic_id("foo")
    parts = {"m1": [0, 1], "m2": [2, 3], "m3": [4, 5]}
    members = [member(m, instance=f"i{m[1]}", topics=["foo"], rebalance_ms=5000, assignor="uniform",
                      assigned={foo: ps}) for m, ps in parts.items()]
    c = coordinator(profile, clu, group_records(GID, 10, members, {m: {foo: ps} for m, ps in parts.items()},
                                                metadata_hash=group_hash(clu, "foo")),
                    group_consumer_assignors=["uniform", "range"])
    for m in parts:
        assert answer(hb(c, m, -2, instance=f"i{m[1]}")) == (E.none, m, -2, 0, None)
    # m2 rejoins asking for "range": uniform is still preferred (2 to 1), nothing is bumped.
    r = join(c, "m2b", topics=["foo"], instance="i2", assignor="range")
    assert answer(r) == ok("m2b", 10, {foo: [2, 3]})
    # m3 too: range is preferred now (KAFKA-20434), so the epoch is bumped and range assigns.
    mock_assignors["range"].prepare({"m1": {foo: [0, 1]}, "m2b": {foo: [2, 3]}, "m3b": {foo: [4, 5]}})
    r = join(c, "m3b", topics=["foo"], instance="i3", assignor="range")
    assert answer(r) == ok("m3b", 11, {foo: [4, 5]})
    g = consumer_group(c)
    assert (g.group_epoch, g.assignment_epoch) == (11, 11)


# ---------------------------------------------------------------------------------------
# Static member errors

def _one_static(profile):
    clu = cluster(foo=6)
    foo = clu.topic_id("foo")
    m1 = member("m1", instance="m1", assigned={foo: [0, 1, 2]})
    return coordinator(profile, clu, group_records(GID, 10, [m1], {"m1": {foo: [0, 1, 2]}},
                                                   metadata_hash=group_hash(clu, "foo")))


def test_should_thrown_unreleased_instance_id_exception_when_new_member_joins_with_in_use_instance_id(profile, mock_assignor):
    assert join(_one_static(profile), "m2", instance="m1", assignor="range").error_code == E.unreleased_instance_id


def test_should_thrown_unknown_member_id_exception_when_unknown_static_member_joins(profile, mock_assignor):
    r = hb(_one_static(profile), "m2", 10, instance="m2", topics=["foo", "bar"], rebalance_ms=5000, owned={})
    assert r.error_code == E.unknown_member_id


def test_should_throw_fenced_instance_id_exception_when_static_member_with_different_member_id_joins(profile, mock_assignor):
    r = hb(_one_static(profile), "unknown-m1", 11, instance="m1", topics=["foo", "bar"], rebalance_ms=5000, owned={})
    assert r.error_code == E.fenced_instance_id


def test_should_throw_unknown_member_id_exception_when_unknown_static_member_leaves(profile, mock_assignor):
    r = hb(_one_static(profile), "m1", -2, instance="unknown-m1", topics=["foo", "bar"], rebalance_ms=5000, owned={})
    assert r.error_code == E.unknown_member_id


def test_should_throw_fenced_instance_id_exception_when_static_member_with_different_member_id_leaves(profile, mock_assignor):
    r = hb(_one_static(profile), "unknown-m1", -2, instance="m1", topics=["foo", "bar"], rebalance_ms=5000, owned={})
    assert r.error_code == E.fenced_instance_id


# ---------------------------------------------------------------------------------------
# Responses and reconciliation

def test_consumer_group_heartbeat_full_response(profile, mock_assignor):
    c = coordinator(profile, cluster(foo=2))
    foo = tid(c, "foo")
    mock_assignor.prepare({"m": {foo: [0, 1]}})
    assert answer(join(c, "m", assignor="range")) == ok("m", 2, {foo: [0, 1]})       # full on joining
    assert answer(hb(c, "m", 2)) == ok("m", 2)                                         # partial otherwise
    full = dict(rebalance_ms=5000, assignor="range", owned={})
    assert answer(hb(c, "m", 2, topics=["foo", "bar"], **full)) == ok("m", 2, {foo: [0, 1]})
    assert answer(hb(c, "m", 2, regex="foo.*", **full)) == ok("m", 2, {foo: [0, 1]})


def test_reconciliation_process(profile, mock_assignor):
    c, foo, bar = two_member_group(profile)
    g = consumer_group(c)
    mock_assignor.prepare({"m1": {foo: [0, 1], bar: [0]}, "m2": {foo: [2, 3], bar: [2]}, "m3": {foo: [4, 5], bar: [1]}})
    assert g.state == "Stable"
    r = join(c, "m3", assignor="range")
    assert answer(r) == ok("m3", 11, {})
    assert written(c, c.position - 1) == [G.current_assignment_record(GID, member(
        "m3", epoch=11, previous=0, state=UNRELEASED, rebalance_ms=5000))]
    assert g.state == "Reconciling"

    def step(member_id, epoch, expected, record=None, owned=None):
        pos = c.position
        assert answer(hb(c, member_id, epoch, owned=owned)) == expected
        got = written(c, pos)
        if record is None:
            assert got == []
        else:
            assert [(r.value.member_epoch, r.value.previous_member_epoch, MemberState(r.value.state)) for r in got] \
                == [record[:3]]
            assert G.current_assignment_record(GID, g.members[member_id]) == got[0]
            assert {t: dict(ps) for t, ps in g.members[member_id].assigned_partitions.items()} == record[3]

    step("m1", 10, ok("m1", 10, {foo: [0, 1], bar: [0]}), (10, 10, UNREVOKED, {foo: {0: 10, 1: 10}, bar: {0: 10}}))
    step("m2", 10, ok("m2", 10, {foo: [3], bar: [2]}), (10, 10, UNREVOKED, {foo: {3: 10}, bar: {2: 10}}))
    step("m3", 11, ok("m3", 11), (11, 11, UNRELEASED, {}))
    step("m1", 10, ok("m1", 11), (11, 10, STABLE, {foo: {0: 10, 1: 10}, bar: {0: 10}}), owned={foo: [0, 1], bar: [0]})
    step("m2", 10, ok("m2", 10))                                        # no ack yet: nothing moves
    step("m3", 11, ok("m3", 11, {bar: [1]}), (11, 11, UNRELEASED, {bar: {1: 11}}))
    step("m3", 11, ok("m3", 11))
    step("m2", 10, ok("m2", 11, {foo: [2, 3], bar: [2]}), (11, 10, STABLE, {foo: {2: 11, 3: 10}, bar: {2: 10}}),
         owned={foo: [3], bar: [2]})
    assert g.state == "Reconciling"
    step("m3", 11, ok("m3", 11, {foo: [4, 5], bar: [1]}), (11, 11, STABLE, {foo: {4: 11, 5: 11}, bar: {1: 11}}),
         owned={bar: [1]})
    assert g.state == "Stable"


def test_new_member_is_rejected_with_maximum_members_is_reached(profile, mock_assignor):
    c, foo, bar = two_member_group(profile, group_consumer_max_size=2)
    assert join(c, "m3", assignor="range").error_code == E.group_max_size_reached


def test_consumer_group_states(profile, mock_assignor):
    clu = cluster(foo=6)
    foo = clu.topic_id("foo")
    c = coordinator(profile, clu, group_records(GID, 10))
    assert consumer_group(c).state == "Empty"
    # Kafka replays one record after the other; here each step loads the log so far.
    c2 = coordinator(profile, clu, group_records(GID, 10) + [
        G.member_record(GID, member("m", epoch=0, previous=0, topics=["foo"], assignor=None)),
        G.group_epoch_record(GID, 11, group_hash(clu, "foo"))])
    assert consumer_group(c2).state == "Assigning"
    c3 = coordinator(profile, clu, written(c2, 0) + [G.target_member_record(GID, "m", {foo: frozenset({1, 2, 3})}),
                                                     G.target_epoch_record(GID, 11, 12345)])
    assert consumer_group(c3).state == "Reconciling"
    unrevoked = member("m", epoch=11, previous=10, state=UNREVOKED, topics=["foo"], assignor=None,
                       assigned={foo: [1, 2, 3]}, assigned_epoch=10)
    c4 = coordinator(profile, clu, written(c3, 0) + [G.current_assignment_record(GID, unrevoked)])
    assert consumer_group(c4).state == "Reconciling"
    c5 = coordinator(profile, clu, written(c4, 0) + [G.current_assignment_record(GID, unrevoked.replace(state=STABLE))])
    assert consumer_group(c5).state == "Stable"


def test_partition_assignor_exception_on_regular_heartbeat(profile, mock_assignor):
    c = coordinator(profile)
    mock_assignor.prepare({"not-a-member": {}})        # kgroup's fixed assignor fails on it
    r = join(c, "m1", assignor="range")
    assert r.error_code == E.unknown_server_error and c.position == 0


def test_subscription_metadata_refreshed_after_group_is_loaded(profile, mock_assignor):
    clu = cluster(foo=3)
    foo = clu.topic_id("foo")
    m = member("m", previous=10, rebalance_ms=-1, assigned={foo: [0, 1, 2]})
    records = group_records(GID, 10, [m], {"m": {foo: [0, 1, 2]}}, metadata_hash=group_hash(clu, "foo"))
    clu.increase_partitions("foo", 6)                # the hash stored is foo's with 3 partitions
    c = coordinator(profile, clu, records)
    mock_assignor.prepare({"m": {foo: range(6)}})
    r = hb(c, "m", 10)
    assert answer(r) == ok("m", 11, {foo: range(6)})
    expected = m.replace(member_epoch=11, previous_member_epoch=10,
                         assigned_partitions={foo: {0: 10, 1: 10, 2: 10, 3: 11, 4: 11, 5: 11}})
    assert written(c, len(records)) == [
        G.group_epoch_record(GID, 11, group_hash(clu, "foo")), G.target_member_record(GID, "m", {foo: frozenset(range(6))}),
        G.target_epoch_record(GID, 11, c.now()), G.current_assignment_record(GID, expected)]


# ---------------------------------------------------------------------------------------
# Timers (KAFKA-20442: an emptied group levels its assignment epoch)

def _join_alone(profile, mock_assignor, instance=None):
    c = coordinator(profile)
    foo = tid(c, "foo")
    mock_assignor.prepare({"m": {foo: range(6)}})
    r = join(c, "m", topics=["foo"], rebalance_ms=90_000, instance=instance)
    assert r.member_epoch == 2 and timeout_of(c, session_key(GID, "m")) == SESSION_TIMEOUT_MS
    return c


def _expired_to_empty(c, epoch):
    pos = c.position
    c.advance(SESSION_TIMEOUT_MS + 1)
    assert written(c, pos) == [G.current_assignment_tombstone(GID, "m"), G.target_member_tombstone(GID, "m"),
                               G.member_tombstone(GID, "m"), G.group_epoch_record(GID, epoch, 0),
                               G.target_epoch_record(GID, epoch, 0)]
    assert timeout_of(c, session_key(GID, "m")) is None and timeout_of(c, rebalance_key(GID, "m")) is None
    g = consumer_group(c)
    assert (g.state, g.group_epoch, g.assignment_epoch) == ("Empty", epoch, epoch)


def test_session_timeout_lifecycle(profile, mock_assignor):
    c = _join_alone(profile, mock_assignor)
    c.advance(5000)
    assert hb(c, "m", 2).member_epoch == 2 and timeout_of(c, session_key(GID, "m")) == SESSION_TIMEOUT_MS
    c.advance(5000)
    assert hb(c, "m", -1).member_epoch == -1
    assert timeout_of(c, session_key(GID, "m")) is None and timeout_of(c, rebalance_key(GID, "m")) is None


def test_session_timeout_expiration(profile, mock_assignor):
    _expired_to_empty(_join_alone(profile, mock_assignor), 3)


def test_session_timeout_expiration_static_member(profile, mock_assignor):
    c = _join_alone(profile, mock_assignor, instance="m")
    r = hb(c, "m", -2, instance="m", topics=["foo"], rebalance_ms=90_000, owned={})
    assert r.member_epoch == -2 and timeout_of(c, session_key(GID, "m")) == SESSION_TIMEOUT_MS
    _expired_to_empty(c, 3)


def _two_joined(profile, mock_assignor, rebalance_ms):
    c = coordinator(profile, cluster(foo=3))
    foo = tid(c, "foo")
    mock_assignor.prepare({"m1": {foo: [0, 1, 2]}})
    assert answer(join(c, "m1", topics=["foo"], rebalance_ms=rebalance_ms)) == ok("m1", 2, {foo: [0, 1, 2]})
    c.advance(5000)
    mock_assignor.prepare({"m1": {foo: [0, 1]}, "m2": {foo: [2]}})
    assert answer(join(c, "m2", topics=["foo"], rebalance_ms=rebalance_ms)) == ok("m2", 3, {})
    c.advance(5000)
    return c, foo


def test_rebalance_timeout_lifecycle(profile, mock_assignor):
    c, foo = _two_joined(profile, mock_assignor, 180_000)
    r = hb(c, "m1", 2, rebalance_ms=12_000, topics=["foo"])
    assert answer(r) == ok("m1", 2, {foo: [0, 1]}) and timeout_of(c, rebalance_key(GID, "m1")) == 12_000
    c.advance(5000)
    assert answer(hb(c, "m1", 2, owned={foo: [0, 1]})) == ok("m1", 3)
    assert timeout_of(c, rebalance_key(GID, "m1")) is None


def test_rebalance_timeout_expiration(profile, mock_assignor):
    c, foo = _two_joined(profile, mock_assignor, 10_000)
    assert answer(hb(c, "m1", 2)) == ok("m1", 2, {foo: [0, 1]})
    pos = c.position
    c.advance(10_001)
    fenced = [r for r in written(c, pos) if getattr(r.key, "member_id", "m1") == "m1"]
    assert fenced == [G.current_assignment_tombstone(GID, "m1"), G.target_member_tombstone(GID, "m1"),
                      G.member_tombstone(GID, "m1"), G.group_epoch_record(GID, 4, group_hash(c.cluster, "foo"))]
    assert timeout_of(c, session_key(GID, "m1")) is None and timeout_of(c, rebalance_key(GID, "m1")) is None


# ---------------------------------------------------------------------------------------
# Describe, classic groups, regular expressions

def test_consumer_group_describe_with_errors(profile, mock_assignor):
    c = coordinator(profile)
    d = c.handle(request("ConsumerGroupDescribe", 1, group_ids=["groupId"], include_authorized_operations=False))
    assert (d.groups[0].error_code, d.groups[0].error_message) == (E.group_id_not_found, "Group groupId not found.")


def test_consumer_group_heartbeat_with_empty_classic_group(profile, mock_assignor):
    from tests.kgroup_testing import join_until_member_id, leave
    c = coordinator(profile)
    joined = join_until_member_id(c, "classic-group-id")
    c.advance(3001)                                   # the initial rebalance delay ends the join phase
    leave(c, "classic-group-id", (joined.response.member_id, None))
    assert c.groups["classic-group-id"].is_empty()
    pos = c.position
    r = join(c, "m", group="classic-group-id", assignor="range")
    assert r.error_code == E.none
    expected = member("m", epoch=2, previous=0, rebalance_ms=5000)
    got = written(c, pos)
    assert isinstance(got[0], R.GroupMetadata) and got[0].value is None
    # (Kafka's test subscribes to topics its image lacks, hash 0; here foo and bar exist)
    assert got[1:] == [G.member_record("classic-group-id", expected),
                       G.group_epoch_record("classic-group-id", 2, group_hash(c.cluster, "foo", "bar")),
                       G.target_member_record("classic-group-id", "m", {}),
                       G.target_epoch_record("classic-group-id", 2, c.now()),
                       G.current_assignment_record("classic-group-id", expected)]
    assert str(c.groups["classic-group-id"].type) == "consumer"


def _classic_to_upgrade(profile, subscription: bytes, assignment: bytes):
    """Kafka's stable classic group "group-id" of member-id-1 (foo and bar of one partition each),
    upgrades allowed."""
    clu = cluster(foo=1, bar=1)
    records = classic_group_records("group-id", [("member-id-1", None, subscription, assignment)])
    return coordinator(profile, clu, records, group_consumer_migration_policy="upgrade")


def _converted(member_id, protocols, assigned, topics=("foo", "bar")):
    """A classic member as the upgrade rebuilds it: epoch 0 (the generation), Kafka's test client;
    no regex, written "" (Kafka 4.4.0's records of a converted librdkafka member)."""
    from kgroup.groups.consumer import ClassicMemberMetadata
    return member(member_id, epoch=0, previous=0, topics=topics, rebalance_ms=10_000, assignor=None,
                  client_id="client-id", client_host="client-host", assigned=assigned).replace(
        classic_member_metadata=ClassicMemberMetadata(5000, tuple(protocols)), subscribed_topic_regex="")


def _upgrade_records(c, classic, joining, targets):
    """The records of an upgrade by `joining` (Kafka's order): the classic tombstone, the
    converted group at epoch 0, then the join's bump to 1 with the `targets` that changed."""
    h = group_hash(c.cluster, "foo", "bar")
    return ([R.GroupMetadata.tombstone(R.GroupMetadataKey(group="group-id"))]
            + [G.member_record("group-id", m) for m in classic] + [G.group_epoch_record("group-id", 0, h)]
            + [G.target_member_record("group-id", m.member_id, {t: frozenset(ps) for t, ps in
                                                                  m.assigned_partitions.items()}) for m in classic]
            + [G.target_epoch_record("group-id", 0, 0)] + [G.current_assignment_record("group-id", m) for m in classic]
            + [G.member_record("group-id", joining), G.group_epoch_record("group-id", 1, h)]
            + [G.target_member_record("group-id", m, {t: frozenset(ps) for t, ps in a.items()}) for m, a in targets]
            + [G.target_epoch_record("group-id", 1, c.now()), G.current_assignment_record("group-id", joining)])


def _subscription(*owned):
    return encode_subscription(Subscription(("foo", "bar"), owned_partitions=list(owned)))


def test_consumer_group_heartbeat_with_stable_classic_group(profile, mock_assignor):
    sub = _subscription(("foo", 0), ("bar", 0))
    c = _classic_to_upgrade(profile, sub, encode_assignment(Assignment([("foo", 0), ("bar", 0)])))
    foo, bar = tid(c, "foo"), tid(c, "bar")
    mock_assignor.prepare({"member-id-1": {foo: [0]}, "member-id-2": {bar: [0]}})
    r = hb(c, "member-id-2", 0, group="group-id", topics=["foo", "bar"], rebalance_ms=5000, assignor="range", owned={})
    assert r.error_code == E.none
    m1 = _converted("member-id-1", [("range", sub)], {foo: [0], bar: [0]})
    m2 = member("member-id-2", epoch=1, previous=0, state=UNRELEASED, rebalance_ms=5000)
    # Kafka writes member-id-2's target before member-id-1's (its HashMap order)
    assert written(c, 1) == _upgrade_records(c, [m1], m2, [("member-id-2", {bar: [0]}), ("member-id-1", {foo: [0]})])
    assert timeout_of(c, session_key("group-id", "member-id-1")) == 5000
    assert timeout_of(c, session_key("group-id", "member-id-2")) == SESSION_TIMEOUT_MS


@pytest.mark.parametrize("user_data, upgrades", [(None, True), (b"", True), (b"\x00", False)])
def test_consumer_group_heartbeat_with_custom_assignor_classic_group(profile, mock_assignor, user_data, upgrades):
    owned = [("foo", 0), ("bar", 0)]
    c = _classic_to_upgrade(profile, encode_subscription(Subscription(("foo", "bar"), owned_partitions=owned)),
                            encode_assignment(Assignment(owned, user_data)))
    mock_assignor.prepare({"member-id-1": {tid(c, "foo"): [0]}, "member-id-2": {tid(c, "bar"): [0]}})
    r = hb(c, "member-id-2", 0, group="group-id", topics=["foo", "bar"], rebalance_ms=5000, assignor="range", owned={})
    if upgrades:
        assert r.error_code == E.none and str(c.groups["group-id"].type) == "consumer"
    else:
        # A custom assignor's user data cannot be carried into a consumer group (fixed: kgroup upgraded).
        assert (r.error_code, r.error_message) == (E.group_id_not_found, (
            "Cannot upgrade classic group group-id to consumer group because an unsupported custom assignor is in "
            "use. Please refer to the documentation or switch to a default assignor before re-attempting the upgrade."))
        assert str(c.groups["group-id"].type) == "classic"


def test_consumer_group_heartbeat_with_stable_classic_group_fails_on_malformed_protocol(profile, mock_assignor):
    poison = bytes([0, 1, 0xFF, 0xFF, 0xFF, 0xFF])     # a v1 subscription whose topic array has length -1
    c = _classic_to_upgrade(profile, poison, encode_assignment(Assignment([("foo", 0)])))
    pos = c.position
    r = hb(c, "member-id-2", 0, group="group-id", topics=["foo"], rebalance_ms=5000, assignor="range", owned={})
    assert (r.error_code, r.error_message) == (E.group_id_not_found, "Cannot upgrade classic group group-id to "
                                               "consumer group because the embedded consumer protocol is malformed.")
    assert written(c, pos) == []


def test_consumer_group_member_joins_with_regex_and_updates_it_before_resolution_completed(profile, mock_assignor):
    c = coordinator(profile)
    r = hb(c, "m1", 0, regex="foo*", assignor="range", rebalance_ms=5000, owned={})
    # The new group stays at epoch 1 until the regex is resolved: no group or target records.
    assert answer(r) == ok("m1", 1, {})
    joined = member("m1", epoch=1, previous=0, topics=(), regex="foo*", rebalance_ms=5000)
    mine, resolution = _split(c, 0, 2)
    assert mine == [G.member_record(GID, joined), G.current_assignment_record(GID, joined)]
    # kgroup has no pending task: foo* is resolved right after the join (Kafka's task still runs)
    version, now = c.cluster.metadata_version, c.now()
    assert resolution == [G.regex_record(GID, "foo*", ResolvedRegularExpression(frozenset({"foo"}), version, now)),
                          G.group_epoch_record(GID, 2, group_hash(c.cluster, "foo"))]
    pos = c.position
    assert answer(hb(c, "m1", 1, regex="foo*|bar*")) == ok("m1", 2)
    updated = joined.replace(subscribed_topic_regex="foo*|bar*", member_epoch=2, previous_member_epoch=1)
    assert written(c, pos) == [G.member_record(GID, updated), G.regex_tombstone(GID, "foo*"),
                               G.target_member_record(GID, "m1", {}), G.target_epoch_record(GID, 2, now),
                               G.current_assignment_record(GID, updated)]
    # Within 10 s of foo*'s resolution, but no regex is resolved any more: the next heartbeat
    # resolves the new one at once, as Kafka's does (fixed: kgroup waited for the 10 s).
    pos = c.position
    assert answer(hb(c, "m1", 2, regex="foo*|bar*")) == ok("m1", 2)
    assert written(c, pos) == [
        G.regex_record(GID, "foo*|bar*", ResolvedRegularExpression(frozenset({"foo", "bar"}), version, now)),
        G.group_epoch_record(GID, 3, group_hash(c.cluster, "foo", "bar"))]


def test_resolved_regular_expressions_removed_when_members_leave_or_fenced(profile, mock_assignor):
    clu = cluster(foo=6, bar=3)
    foo, bar = clu.topic_id("foo"), clu.topic_id("bar")
    m1 = member("m1", previous=10, topics=(), regex="foo*", rebalance_ms=5000, assigned={foo: range(6)})
    m2 = member("m2", previous=10, topics=(), regex="bar*", rebalance_ms=5000, assigned={bar: range(3)})
    regexes = {"foo*": ResolvedRegularExpression(frozenset({"foo"}), 0, 0),
               "bar*": ResolvedRegularExpression(frozenset({"bar"}), 0, 0)}
    c = coordinator(profile, clu, group_records(GID, 10, [m1, m2], {"m1": {foo: range(6)}, "m2": {bar: range(3)}},
                                                metadata_hash=group_hash(clu, "foo", "bar"), regexes=regexes))
    pos = c.position
    assert answer(hb(c, "m1", -1)) == (E.none, "m1", -1, 0, None)
    assert written(c, pos) == [G.current_assignment_tombstone(GID, "m1"), G.target_member_tombstone(GID, "m1"),
                               G.member_tombstone(GID, "m1"), G.regex_tombstone(GID, "foo*"),
                               G.group_epoch_record(GID, 11, group_hash(clu, "bar"))]
    assert timeout_of(c, session_key(GID, "m2")) == SESSION_TIMEOUT_MS     # set when the group was loaded
    pos = c.position
    c.advance(SESSION_TIMEOUT_MS + 1)
    assert written(c, pos) == [G.current_assignment_tombstone(GID, "m2"), G.target_member_tombstone(GID, "m2"),
                               G.member_tombstone(GID, "m2"), G.regex_tombstone(GID, "bar*"),
                               G.group_epoch_record(GID, 12, 0), G.target_epoch_record(GID, 12, 0)]


# ---------------------------------------------------------------------------------------
# Replay of Kafka-written records

def test_replay_consumer_group_metadata(profile, mock_assignor):
    c = coordinator(profile, records=[G.group_epoch_record("foo", 10, 0)])
    assert consumer_group(c, "foo").group_epoch == 10


def test_replay_consumer_group_metadata_tombstone(profile, mock_assignor):
    c = coordinator(profile, records=[R.ConsumerGroupMetadata.tombstone(R.ConsumerGroupMetadataKey(group_id="foo"))])
    assert "foo" not in c.groups


def test_replay_consumer_group_target_assignment_metadata(profile, mock_assignor):
    g = consumer_group(coordinator(profile, records=[G.target_epoch_record("foo", 10, 12345)]), "foo")
    assert (g.assignment_epoch, g.assignment_timestamp) == (10, 12345)


def test_replay_consumer_group_target_assignment_metadata_tombstone_existing(profile, mock_assignor):
    tomb = R.ConsumerGroupTargetAssignmentMetadata.tombstone(R.ConsumerGroupTargetAssignmentMetadataKey(group_id="foo"))
    g = consumer_group(coordinator(profile, records=[G.target_epoch_record("foo", 10, 12345), tomb]), "foo")
    assert (g.assignment_epoch, g.assignment_timestamp) == (-1, 0)


def test_replay_consumer_group_current_member_assignment_with_compaction(profile, mock_assignor):
    clu = cluster(foo=2)
    t = clu.topic_id("foo")
    c = coordinator(profile, clu, [
        G.current_assignment_record(GID, member("A", epoch=11, previous=10, topics=(), assigned={t: [0]})),
        G.current_assignment_record(GID, member("B", epoch=12, previous=11, topics=(), assigned={t: [0]})),
        G.current_assignment_record(GID, member("A", epoch=13, previous=12, topics=(), assigned={t: [1]}))])
    g = consumer_group(c)
    assert (g.current_partition_epoch(t, 0), g.current_partition_epoch(t, 1)) == (12, 13)


def test_replay_consumer_group_current_member_assignment_unowned_topic_with_compaction(profile, mock_assignor):
    # The record unassigning foo-0 from A was compacted away: B took foo-0 over and gave it up,
    # then A's next record (bar-0 only) must not fail on foo-0, now owned by nobody.
    clu = cluster(foo=1, bar=1)
    foo, bar = clu.topic_id("foo"), clu.topic_id("bar")
    c = coordinator(profile, clu, [
        G.current_assignment_record(GID, member("A", epoch=11, previous=10, topics=(), assigned={foo: [0]})),
        G.current_assignment_record(GID, member("B", epoch=12, previous=11, topics=(), assigned={foo: [0]},
                                                assigned_epoch=11)),
        G.current_assignment_record(GID, member("B", epoch=13, previous=12, topics=())),
        G.current_assignment_record(GID, member("A", epoch=14, previous=13, topics=(), assigned={bar: [0]}))])
    g = consumer_group(c)
    assert (g.current_partition_epoch(foo, 0), g.current_partition_epoch(bar, 0)) == (-1, 14)


# ---------------------------------------------------------------------------------------
# ConsumerGroupDescribe, and the group's own configs

def describe(c, *group_ids):
    return c.handle(request("ConsumerGroupDescribe", 1, group_ids=list(group_ids),
                            include_authorized_operations=False)).groups


def test_consumer_group_describe_no_errors(profile, mock_assignor):
    # ConsumerGroupBuilder(id, 10) without an assignment: the assignment epoch a group starts at (1)
    m = ConsumerGroupMember("member-id", subscribed_topic_names=frozenset({"topicName"}),
                            server_assignor_name="assignorName")
    c = coordinator(profile, records=group_records("group-id-1", 10, assignment_epoch=1)
                    + group_records("group-id-2", 10, [m], assignment_epoch=1))
    d1, d2 = describe(c, "group-id-1", "group-id-2")
    assert (d1.error_code, d1.group_id, d1.group_state, d1.group_epoch, d1.assignment_epoch, d1.assignor_name,
            list(d1.members)) == (E.none, "group-id-1", "Empty", 10, 1, "range", [])
    assert (d2.error_code, d2.group_id, d2.group_state, d2.group_epoch, d2.assignment_epoch, d2.assignor_name) \
        == (E.none, "group-id-2", "Assigning", 10, 1, "assignorName")
    [dm] = d2.members
    assert (dm.member_id, dm.instance_id, dm.rack_id, dm.member_epoch, dm.client_id, dm.client_host,
            list(dm.subscribed_topic_names), dm.subscribed_topic_regex, list(dm.assignment.topic_partitions),
            list(dm.target_assignment.topic_partitions), dm.member_type) \
        == ("member-id", None, None, 0, "", "", ["topicName"], None, [], [], 1)
    assert d1.authorized_operations == d2.authorized_operations == -2147483648


# ---------------------------------------------------------------------------------------
# Replay of Kafka-written records (continued)

def test_replay_consumer_group_member_metadata(profile, mock_assignor):
    m = ConsumerGroupMember("member", client_id="clientid", client_host="clienthost", server_assignor_name="range",
                            rack_id="rackid", subscribed_topic_names=frozenset({"foo"}))
    c = coordinator(profile, records=[G.member_record("foo", m)])   # the record creates group and member
    assert consumer_group(c, "foo").members == {"member": m}
    [dm] = describe(c, "foo")[0].members
    assert (dm.member_id, dm.client_id, dm.client_host, dm.rack_id, list(dm.subscribed_topic_names)) \
        == ("member", "clientid", "clienthost", "rackid", ["foo"])


def test_replay_consumer_group_member_metadata_tombstone(profile, mock_assignor):
    c = coordinator(profile, records=[G.group_epoch_record("foo", 10, 0), G.member_tombstone("foo", "m1"),
                                      G.member_tombstone("bar", "m1")])
    assert consumer_group(c, "foo").members == {}          # the member was already gone: a no-op
    assert "bar" not in c.groups                            # no group: a no-op too
    assert describe(c, "bar")[0].error_code == E.group_id_not_found


def _partition_metadata_record(group_id, topic_id, name, partitions):
    V = R.ConsumerGroupPartitionMetadataValue
    return R.ConsumerGroupPartitionMetadata(
        R.ConsumerGroupPartitionMetadataKey(group_id=group_id),
        V(topics=[V.TopicMetadata(topic_id=topic_id, topic_name=name, num_partitions=partitions)]), 0)


def _first_join_writes(c, group_id):
    pos = c.position
    assert join(c, "m", group=group_id, topics=["foo"], assignor="range").error_code == E.none
    return written(c, pos)


def test_replay_consumer_group_partition_metadata(profile, mock_assignor):
    # The subscription metadata Kafka wrote before 4.1: the record creates the group, and the
    # group remembers it, so its next metadata update deletes it (Kafka's hasSubscriptionMetadataRecord).
    c = coordinator(profile, records=[_partition_metadata_record("foo", uuid.uuid4(), "bar", 10)])
    assert consumer_group(c, "foo").state == "Empty"
    got = _first_join_writes(c, "foo")
    assert got[1:3] == [G.group_epoch_record("foo", 2, group_hash(c.cluster, "foo")),
                        G.partition_metadata_tombstone("foo")]


def test_replay_consumer_group_partition_metadata_tombstone(profile, mock_assignor):
    c = coordinator(profile, records=[G.partition_metadata_tombstone("foo")])
    assert "foo" not in c.groups and describe(c, "foo")[0].error_code == E.group_id_not_found


def test_replay_consumer_group_partition_metadata_tombstone_with_existent_group(profile, mock_assignor):
    c = coordinator(profile, records=group_records("foo", 10) + [G.partition_metadata_tombstone("foo")])
    got = _first_join_writes(c, "foo")
    assert G.partition_metadata_tombstone("foo") not in got


def test_replay_consumer_group_target_assignment_member(profile, mock_assignor):
    t = uuid.uuid4()
    c = coordinator(profile, records=[G.target_member_record("foo", "m1", {t: frozenset({0, 1, 2})})])
    assert consumer_group(c, "foo").target_assignment == {"m1": {t: frozenset({0, 1, 2})}}


def test_replay_consumer_group_target_assignment_member_tombstone(profile, mock_assignor):
    c = coordinator(profile, records=[G.target_member_tombstone("foo", "m1")])
    assert "foo" not in c.groups and describe(c, "foo")[0].error_code == E.group_id_not_found


def test_replay_consumer_group_target_assignment_metadata_tombstone(profile, mock_assignor):
    tomb = R.ConsumerGroupTargetAssignmentMetadata.tombstone(R.ConsumerGroupTargetAssignmentMetadataKey(group_id="foo"))
    c = coordinator(profile, records=[tomb])
    assert "foo" not in c.groups and describe(c, "foo")[0].error_code == E.group_id_not_found


def test_replay_consumer_group_current_member_assignment(profile, mock_assignor):
    t = uuid.uuid4()
    m = ConsumerGroupMember("member", member_epoch=10, previous_member_epoch=9, state=UNRELEASED,
                            assigned_partitions=with_epochs({t: [0, 1, 2]}, 10))
    c = coordinator(profile, records=[G.current_assignment_record("bar", m)])   # creates group and member
    assert consumer_group(c, "bar").members == {"member": m}


def test_replay_consumer_group_current_member_assignment_tombstone(profile, mock_assignor):
    c = coordinator(profile, records=[G.group_epoch_record("foo", 10, 0), G.current_assignment_tombstone("foo", "m1"),
                                      G.current_assignment_tombstone("bar", "m1")])
    assert consumer_group(c, "foo").members == {}
    assert "bar" not in c.groups and describe(c, "bar")[0].error_code == E.group_id_not_found


def _subscribed_to(c, group_id, topic):
    """Kafka's groupsSubscribedToTopic, as a client sees it: OffsetDelete refuses to delete the
    offsets of a topic the group is subscribed to."""
    r = c.handle(request("OffsetDelete", 0, group_id=group_id,
                         topics=[{"name": topic, "partitions": [{"partition_index": 0}]}]))
    assert r.error_code == E.none
    return r.topics[0].partitions[0].error_code == E.group_subscribed_to_topic


def test_replay_consumer_group_regular_expression(profile, mock_assignor):
    resolved = ResolvedRegularExpression(frozenset({"abc", "abcd"}), 10, 12345)
    c = coordinator(profile, records=[G.regex_record("foo", "abc*", resolved)])
    assert consumer_group(c, "foo").resolved_regexes == {"abc*": resolved}
    assert _subscribed_to(c, "foo", "abc")


def test_replay_consumer_group_regular_expression_tombstone(profile, mock_assignor):
    c = coordinator(profile, records=[G.regex_tombstone("foo", "abc*")])
    assert "foo" not in c.groups and describe(c, "foo")[0].error_code == E.group_id_not_found
    resolved = ResolvedRegularExpression(frozenset({"abc", "abcd"}), 10, 12345)
    c = coordinator(profile, records=[G.regex_record("foo", "abc*", resolved)])
    assert _subscribed_to(c, "foo", "abc")
    c = coordinator(profile, records=written(c, 0) + [G.regex_tombstone("foo", "abc*")])
    assert consumer_group(c, "foo").resolved_regexes == {}
    assert not _subscribed_to(c, "foo", "abc")


def _join_then_update_configs(profile, mock_assignor, group_configs):
    """Kafka's testConsumerGroupDynamicConfigs / EvaluatedConfigs: a member joins, the group's own
    configs change (set on the cluster, as Kafka's GroupConfigManager is fed by the controller),
    the member heartbeats again."""
    c = coordinator(profile, cluster(foo=6))
    mock_assignor.prepare({"m": {tid(c, "foo"): range(6)}})
    r = join(c, "m", topics=["foo"], rebalance_ms=90_000)
    assert (r.member_epoch, ms(r.heartbeat_interval)) == (2, 5000)
    assert timeout_of(c, session_key(GID, "m")) == SESSION_TIMEOUT_MS
    pos = c.position
    c.advance(ms(r.heartbeat_interval))
    assert c.position == pos
    c.cluster.group_configs[GID] = group_configs
    r = hb(c, "m", 2)
    assert r.member_epoch == 2
    return c, r


def test_consumer_group_dynamic_configs(profile, mock_assignor):
    c, r = _join_then_update_configs(profile, mock_assignor, {"consumer.session.timeout.ms": 50_000,
                                                              "consumer.heartbeat.interval.ms": 10_000})
    assert ms(r.heartbeat_interval) == 10_000 and timeout_of(c, session_key(GID, "m")) == 50_000
    pos = c.position
    c.advance(10_000)
    assert c.position == pos
    assert hb(c, "m", -1).member_epoch == -1
    assert timeout_of(c, session_key(GID, "m")) is None and timeout_of(c, rebalance_key(GID, "m")) is None


def test_consumer_group_evaluated_configs(profile, mock_assignor):
    # out of the coordinator's bounds (session timeout at most 60 s, heartbeat interval at least 5 s)
    c, r = _join_then_update_configs(profile, mock_assignor, {"consumer.session.timeout.ms": 70_000,
                                                              "consumer.heartbeat.interval.ms": 1})
    assert ms(r.heartbeat_interval) == c.config["group.consumer.min.heartbeat.interval.ms"] == 5000
    assert timeout_of(c, session_key(GID, "m")) == c.config["group.consumer.max.session.timeout.ms"] == 60_000


# ---------------------------------------------------------------------------------------
# Regular expressions: resolved right after the heartbeat that needs it (Kafka's "<group>-regex"
# executor task), in a write of its own; `_split` tells the heartbeat's records from the task's.
# Kafka's test clock starts at 0 and its resolved regexes at timestamp 0, i.e. "now"; here they
# are stamped with the coordinator's start time.

def _regex_group(profile, members, targets, regexes=None, hash_topics=(), authorizer=False, **config):
    """A group at epoch 10 (assignment epoch 10) of `members` (epoch 10, previous 10, rebalance 5 s),
    foo with 6 partitions and bar with 3; `regexes` maps a regex to its topics, resolved at the
    cluster's metadata version when the coordinator starts."""
    clu = cluster(foo=6, bar=3)
    start = Coordinator(clu).now()
    resolved = {r: ResolvedRegularExpression(frozenset(ts), clu.metadata_version, start)
                for r, ts in (regexes or {}).items()}
    records = group_records(GID, 10, members, targets, metadata_hash=group_hash(clu, *hash_topics) if hash_topics
                            else 0, regexes=resolved)
    conf = {"group.consumer.assignors": ["range"], **{k.replace("_", "."): v for k, v in config.items()}}
    return Coordinator.load(records, cluster=clu, profile=profile, config=conf, authorizer=authorizer or None)


def _regex_member(member_id, regex, assigned, **kw):
    return member(member_id, previous=10, topics=kw.pop("topics", ()), regex=regex, rebalance_ms=5000,
                  assigned=assigned, **kw)


def _split(c, pos, n):
    """The heartbeat's `n` records, and what the regex resolution wrote after them."""
    got = written(c, pos)
    return got[:n], got[n:]


def test_consumer_group_member_picks_up_existing_resolved_regular_expression(profile, monkeypatch):
    clu = cluster(foo=2)
    foo = clu.topic_id("foo")
    seen = []

    class Assignor(FixedAssignor):
        def assign(self, group_spec, topics):
            seen.append({m: s.subscribed_topic_ids for m, s in group_spec.members.items()})
            return super().assign(group_spec, topics)
    monkeypatch.setitem(SERVER_ASSIGNORS, "range", lambda: Assignor({"m1": {foo: [0]}, "m2": {foo: [1]}}))
    m1 = member("m1", previous=10, topics=(), regex="foo*", assigned={foo: [0, 1]})
    c = coordinator(profile, clu, group_records(GID, 10, [m1], {"m1": {foo: [0, 1]}}, regexes={
        "foo*": ResolvedRegularExpression(frozenset({"foo"}), 100, 12345)}))
    r = hb(c, "m2", 0, regex="foo*", rebalance_ms=10_000, owned={})
    assert answer(r) == ok("m2", 11, {})
    assert seen == [{"m1": frozenset({foo}), "m2": frozenset({foo})}]     # both subscribed through foo*


def test_consumer_group_member_joins_with_new_regex(profile, mock_assignor):
    clu_foo = cluster(foo=6, bar=3).topic_id("foo")
    m1 = member("m1", previous=10, topics=["foo"], rebalance_ms=5000, assigned={clu_foo: range(6)})
    c = _regex_group(profile, [m1], {"m1": {clu_foo: range(6)}}, hash_topics=["foo"])
    pos = c.position
    r = hb(c, "m2", 0, regex="foo*", rebalance_ms=5000, assignor="range", owned={})
    assert answer(r) == ok("m2", 10, {})
    m2 = member("m2", previous=0, topics=(), regex="foo*", rebalance_ms=5000)
    mine, resolution = _split(c, pos, 2)
    assert mine == [G.member_record(GID, m2), G.current_assignment_record(GID, m2)]
    # the new regex is resolved, and the group epoch bumped
    assert resolution == [
        G.regex_record(GID, "foo*", ResolvedRegularExpression(frozenset({"foo"}), c.cluster.metadata_version, c.now())),
        G.group_epoch_record(GID, 11, group_hash(c.cluster, "foo"))]


def test_consumer_group_member_joins_with_updated_regex(profile, mock_assignor):
    foo, bar = (cluster(foo=6, bar=3).topic_id(t) for t in ("foo", "bar"))
    m1 = _regex_member("m1", "foo*", {foo: range(6)})
    c = _regex_group(profile, [m1], {"m1": {foo: range(6)}})
    pos = c.position
    r = hb(c, "m1", 10, regex="foo*|bar*", rebalance_ms=5000, assignor="range", owned={})
    assert answer(r) == ok("m1", 10, {})
    # not subscribed to foo any more until the new regex is resolved: foo's partitions go at once
    updated = _regex_member("m1", "foo*|bar*", {})
    mine, resolution = _split(c, pos, 3)
    assert mine == [G.member_record(GID, updated), G.regex_tombstone(GID, "foo*"),
                    G.current_assignment_record(GID, updated)]
    assert resolution == [
        G.regex_record(GID, "foo*|bar*", ResolvedRegularExpression(frozenset({"foo", "bar"}),
                                                                   c.cluster.metadata_version, c.now())),
        G.group_epoch_record(GID, 11, group_hash(c.cluster, "foo", "bar"))]
    mock_assignor.prepare({"m1": {foo: range(6), bar: range(3)}})
    pos = c.position
    r = hb(c, "m1", 10, regex="foo*|bar*", rebalance_ms=5000, assignor="range", owned={})
    assert answer(r) == ok("m1", 11, {foo: range(6), bar: range(3)})
    reconciled = member("m1", epoch=11, previous=10, topics=(), regex="foo*|bar*", rebalance_ms=5000,
                        assigned={foo: range(6), bar: range(3)})
    assert written(c, pos) == [G.target_member_record(GID, "m1", {foo: frozenset(range(6)), bar: frozenset(range(3))}),
                               G.target_epoch_record(GID, 11, c.now()), G.current_assignment_record(GID, reconciled)]


def test_consumer_group_member_join_refreshes_expired_regexes(profile, mock_assignor):
    foo, bar = (cluster(foo=6, bar=3).topic_id(t) for t in ("foo", "bar"))
    members = [_regex_member("m1", "foo*", {foo: range(6)}), _regex_member("m2", "bar*", {bar: range(3)})]
    c = _regex_group(profile, members, {"m1": {foo: range(6)}, "m2": {bar: range(3)}},
                     regexes={"foo*": ["foo"], "bar*": ["bar"]}, hash_topics=["foo", "bar"])
    c.cluster.create_topic("fooo", 1)
    pos = c.position
    hb(c, "m1", 10)
    assert written(c, pos) == []            # within REGEX_BATCH_REFRESH_MIN_INTERVAL_MS of the last refresh
    c.advance(11_000)
    pos = c.position
    hb(c, "m1", 10)
    got = written(c, pos)
    version, now = c.cluster.metadata_version, c.now()
    # Kafka compares the two regex records in any order
    assert sorted(got[:2], key=lambda r: r.key.regular_expression) == [
        G.regex_record(GID, "bar*", ResolvedRegularExpression(frozenset({"bar"}), version, now)),
        G.regex_record(GID, "foo*", ResolvedRegularExpression(frozenset({"foo", "fooo"}), version, now))]
    assert got[2:] == [G.group_epoch_record(GID, 11, group_hash(c.cluster, "foo", "bar", "fooo"))]


def test_consumer_group_member_clears_regex(profile, mock_assignor):
    foo = cluster(foo=6, bar=3).topic_id("foo")
    c = _regex_group(profile, [_regex_member("m1", "foo*", {foo: range(6)})], {"m1": {foo: range(6)}})
    pos = c.position
    r = hb(c, "m1", 10, regex="", rebalance_ms=5000, assignor="range", owned={})
    assert answer(r) == ok("m1", 11, {})
    cleared = member("m1", epoch=11, previous=10, topics=(), regex="", rebalance_ms=5000)
    assert written(c, pos) == [G.member_record(GID, cleared), G.regex_tombstone(GID, "foo*"),
                               G.group_epoch_record(GID, 11, 0), G.target_member_record(GID, "m1", {}),
                               G.target_epoch_record(GID, 11, c.now()), G.current_assignment_record(GID, cleared)]


def _authorized_regex_group(profile, **config):
    """Kafka's set-up for the topic-authorization cases: m1 on foo by name, m2 on foo* (resolved),
    foo 0-2 / 3-5; the members' principal may describe foo, not bar."""
    foo = cluster(foo=6, bar=3).topic_id("foo")
    members = [member("m1", previous=10, topics=["foo"], rebalance_ms=5000, assigned={foo: [0, 1, 2]}),
               _regex_member("m2", "foo*", {foo: [3, 4, 5]})]
    c = _regex_group(profile, members, {"m1": {foo: [0, 1, 2]}, "m2": {foo: [3, 4, 5]}},
                     regexes={"foo*": ["foo"]}, hash_topics=["foo"], authorizer=True, **config)
    c.cluster.authorizer.allow(PRINCIPAL, "GROUP", GID, "READ")
    c.cluster.authorizer.allow(PRINCIPAL, "TOPIC", "foo", "DESCRIBE")
    return c, foo


PRINCIPAL = "User:consumer"


def _regex_hb(c, regex):
    return c.handle(request("ConsumerGroupHeartbeat", 1, group_id=GID, member_id="m2", member_epoch=10,
                            instance_id=None, rack_id=None, rebalance_timeout=5000, subscribed_topic_names=None,
                            subscribed_topic_regex=regex, server_assignor="range", topic_partitions=[]),
                    principal=PRINCIPAL)


def _regex_denied_bar(c):
    """m2 moves to foo*|bar*: resolved to foo alone (bar may not be described); epoch 11."""
    c.advance(10_001)                               # past REGEX_BATCH_REFRESH_MIN_INTERVAL_MS
    pos = c.position
    assert answer(_regex_hb(c, "foo*|bar*")) == ok("m2", 10, {})
    m2 = _regex_member("m2", "foo*|bar*", {})
    mine, resolution = _split(c, pos, 3)
    assert mine == [G.member_record(GID, m2), G.regex_tombstone(GID, "foo*"), G.current_assignment_record(GID, m2)]
    assert resolution == [G.regex_record(GID, "foo*|bar*", ResolvedRegularExpression(
        frozenset({"foo"}), c.cluster.metadata_version, c.now())), G.group_epoch_record(GID, 11, group_hash(c.cluster, "foo"))]


def _bar_allowed_resolution(c, regex):
    return [G.regex_record(GID, regex, ResolvedRegularExpression(frozenset({"foo", "bar"}), c.cluster.metadata_version,
                                                                 c.now())),
            G.group_epoch_record(GID, 12, group_hash(c.cluster, "foo", "bar"))]


def test_consumer_group_member_joins_with_regex_with_topic_authorization_failure(profile, mock_assignor):
    c, foo = _authorized_regex_group(profile)
    _regex_denied_bar(c)
    c.advance(10_001)
    c.cluster.authorizer.allow(PRINCIPAL, "TOPIC", "bar", "DESCRIBE")
    mock_assignor.prepare({"m1": {foo: [0, 1, 2]}, "m2": {foo: [3, 4, 5]}})
    pos = c.position
    assert answer(_regex_hb(c, "foo|bar*")) == ok("m2", 11, {})
    m2 = member("m2", epoch=11, previous=10, topics=(), regex="foo|bar*", rebalance_ms=5000)
    mine, resolution = _split(c, pos, 4)
    assert mine == [G.member_record(GID, m2), G.regex_tombstone(GID, "foo*|bar*"),
                    G.target_epoch_record(GID, 11, c.now()), G.current_assignment_record(GID, m2)]
    assert resolution == _bar_allowed_resolution(c, "foo|bar*")


def test_consumer_group_member_joins_refresh_topic_authorization(profile, mock_assignor):
    # Kafka's test moves its clock without firing timers (context.time.sleep): sessions long
    # enough here that nobody is fenced while 70 s pass
    c, foo = _authorized_regex_group(profile, group_consumer_regex_refresh_interval_ms=60_000,
                                     group_consumer_session_timeout_ms=120_000,
                                     group_consumer_max_session_timeout_ms=120_000)
    _regex_denied_bar(c)
    c.advance(60_001)                               # past the regex refresh interval
    c.cluster.authorizer.allow(PRINCIPAL, "TOPIC", "bar", "DESCRIBE")
    mock_assignor.prepare({"m1": {foo: [0, 1, 2]}, "m2": {foo: [3, 4, 5]}})
    pos = c.position
    assert answer(_regex_hb(c, "foo*|bar*")) == ok("m2", 11, {foo: [3, 4, 5]})
    m2 = member("m2", epoch=11, previous=10, topics=(), regex="foo*|bar*", rebalance_ms=5000, assigned={foo: [3, 4, 5]})
    mine, resolution = _split(c, pos, 2)
    assert mine == [G.target_epoch_record(GID, 11, c.now()), G.current_assignment_record(GID, m2)]
    assert resolution == _bar_allowed_resolution(c, "foo*|bar*")


def test_static_consumer_group_member_joins_with_updated_regex(profile, mock_assignor):
    foo, bar = (cluster(foo=6, bar=3).topic_id(t) for t in ("foo", "bar"))
    both = {foo: range(6), bar: range(3)}
    c = _regex_group(profile, [_regex_member("m1", "foo*|bar*", both, instance="instance-id")], {"m1": both})
    assert answer(hb(c, "m1", -2, instance="instance-id")) == (E.none, "m1", -2, 0, None)
    pos = c.position
    r = join(c, "m2", topics=None, regex="foo*", instance="instance-id", assignor="range")
    # the answer leaves out the partitions of topics the new regex does not (yet) match
    assert answer(r) == ok("m2", 10, {})
    copied = member("m2", epoch=0, previous=0, topics=(), regex="foo*|bar*", instance="instance-id",
                    rebalance_ms=5000, assigned=both, assigned_epoch=0)
    rejoined = member("m2", epoch=10, previous=0, topics=(), regex="foo*", instance="instance-id", rebalance_ms=5000)
    mine, resolution = _split(c, pos, 9)
    assert mine == [
        G.current_assignment_tombstone(GID, "m1"), G.target_member_tombstone(GID, "m1"), G.member_tombstone(GID, "m1"),
        G.member_record(GID, copied), G.target_member_record(GID, "m2", frozen(both)),
        G.current_assignment_record(GID, copied),
        G.member_record(GID, rejoined), G.regex_tombstone(GID, "foo*|bar*"), G.current_assignment_record(GID, rejoined)]
    assert resolution == [
        G.regex_record(GID, "foo*", ResolvedRegularExpression(frozenset({"foo"}), c.cluster.metadata_version, c.now())),
        G.group_epoch_record(GID, 11, group_hash(c.cluster, "foo"))]
    mock_assignor.prepare({"m2": {foo: range(6)}})
    pos = c.position
    r = hb(c, "m2", 10, instance="instance-id", regex="foo*", rebalance_ms=5000, assignor="range", owned={})
    assert answer(r) == ok("m2", 11, {foo: range(6)})
    reconciled = rejoined.replace(member_epoch=11, previous_member_epoch=10, assigned_partitions=with_epochs({foo: range(6)}, 11))
    assert written(c, pos) == [G.target_member_record(GID, "m2", {foo: frozenset(range(6))}),
                               G.target_epoch_record(GID, 11, c.now()), G.current_assignment_record(GID, reconciled)]


def test_resolved_regular_expressions_removed_when_consumer_members_removed_by_admin_api(profile, mock_assignor):
    foo, bar = (cluster(foo=6, bar=3).topic_id(t) for t in ("foo", "bar"))
    owned = {"m1": ("foo*", {foo: [0, 1, 2]}), "m2": ("foo*", {foo: [3, 4, 5]}), "m3": ("bar*", {bar: [0, 1]}),
             "m4": ("bar*", {bar: [2]})}
    members = [_regex_member(m, regex, a, instance=m) for m, (regex, a) in owned.items()]
    c = _regex_group(profile, members, {"m1": {foo: range(6)}, "m2": {bar: range(3)}},
                     regexes={"foo*": ["foo"], "bar*": ["bar"]}, hash_topics=["foo", "bar"])
    pos = c.position
    r = c.handle(request("LeaveGroup", 5, group_id=GID, members=[
        {"member_id": "m1", "group_instance_id": None}, {"member_id": "m2", "group_instance_id": "m2"},
        {"member_id": "", "group_instance_id": "m3"}]))
    assert r.error_code == E.none
    assert [(m.member_id, m.group_instance_id, m.error_code) for m in r.members] == [
        ("m1", None, E.none), ("m2", "m2", E.none), ("", "m3", E.none)]
    got = written(c, pos)
    # Kafka compares the removals in any order, then the regex tombstone and the bump
    removals = [rec(GID, m) for m in ("m1", "m2", "m3")
                for rec in (G.current_assignment_tombstone, G.target_member_tombstone, G.member_tombstone)]
    assert sorted(got[:9], key=repr) == sorted(removals, key=repr)
    assert got[9:] == [G.regex_tombstone(GID, "foo*"), G.group_epoch_record(GID, 11, group_hash(c.cluster, "bar"))]


def test_consumer_group_assignment_interval(profile, mock_assignor):
    # KIP-1263: the next target waits 5 s after the last one; a configured interval applies under both profiles
    c = coordinator(profile, cluster(foo=6), group_consumer_assignment_interval_ms=5000)
    foo = tid(c, "foo")
    mock_assignor.prepare({"m1": {foo: range(6)}})
    r = join(c, "m1", topics=["foo"], assignor="range")
    assert answer(r) == ok("m1", 2, {foo: range(6)})
    m1 = member("m1", epoch=2, previous=0, topics=["foo"], rebalance_ms=5000, assigned={foo: range(6)})
    assert written(c, 0) == [G.member_record(GID, m1), G.group_epoch_record(GID, 2, group_hash(c.cluster, "foo")),
                             G.target_member_record(GID, "m1", {foo: frozenset(range(6))}),
                             G.target_epoch_record(GID, 2, c.now()), G.current_assignment_record(GID, m1)]

    # Just before the interval: member 2 joins, the group epoch moves on, the assignment does not
    c.advance(4995)
    mock_assignor.prepare({"m1": {foo: [0, 1, 2]}, "m2": {foo: [3, 4, 5]}})
    pos = c.position
    r = join(c, "m2", topics=["foo"], assignor="range")
    assert answer(r) == ok("m2", 2, {})
    m2 = member("m2", epoch=2, previous=0, topics=["foo"], rebalance_ms=5000)
    assert written(c, pos) == [G.member_record(GID, m2), G.group_epoch_record(GID, 3, group_hash(c.cluster, "foo")),
                               G.current_assignment_record(GID, m2)]

    # The interval has passed: member 2's next heartbeat computes the assignment of epoch 3
    c.advance(10)
    pos = c.position
    r = hb(c, "m2", 2)
    assert answer(r) == ok("m2", 3)
    got = written(c, pos)
    assert sorted(got[:2], key=lambda rec: rec.key.member_id) == [
        G.target_member_record(GID, "m1", {foo: frozenset({0, 1, 2})}),
        G.target_member_record(GID, "m2", {foo: frozenset({3, 4, 5})})]
    # m1 still owns foo 3-5: m2 waits for them
    assert got[2:] == [G.target_epoch_record(GID, 3, c.now()),
                       G.current_assignment_record(GID, m2.replace(member_epoch=3, previous_member_epoch=2,
                                                                    state=UNRELEASED))]
