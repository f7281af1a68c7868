"""Apache Kafka's GroupMetadataManagerShareGroupTest (trunk, commit 80eb7f11), case by case, through
kgroup's public contract: `Coordinator.handle`, `Coordinator.load` of the records Kafka's tests
replay, `Coordinator.advance`, and the records in `c.log`.

Kafka's MockPartitionAssignor is `share_kafka.MockAssignor` (a fixed assignment); where a Kafka
test calls an internal step (shareGroupBuildPartitionDeleteRequest, sharePartitionsEligibleFor
OffsetDeletion, completeDeleteShareGroupOffsets, initializeShareGroupState), the kgroup test drives
the request that runs it (DeleteGroups, DeleteShareGroupOffsets, a heartbeat) and checks the same
records and share-coordinator calls. The table of every case is GroupMetadataManagerShareGroupTest.md.
Every case runs under both profiles: the seeds say nothing different about any of them."""
from __future__ import annotations

import uuid

import pytest

from kgroup import ErrorCode
from kgroup import records as R
from kgroup.groups.share import group as G
from kgroup.protocol import ms, request
from share_kafka import (CLIENT_HOST, CLIENT_ID, GROUP, HEARTBEAT_INTERVAL_MS, PROFILES, SESSION_TIMEOUT_MS, T0,
                         MockAssignor, accept_deletes, answer, cluster, coordinator, deleted, describe, group_hash, group_records, hb,
                         frozen, initialized, member, ok, session_timeout, share_group, state_record,
                         target_epoch_tombstone, tid, written)

E = ErrorCode
pytestmark = pytest.mark.parametrize("profile", PROFILES)

M1, M2 = (str(uuid.UUID(int=0xA000 + i)) for i in (1, 2))
T1, T2, T3, T4 = (uuid.UUID(int=0xB000 + i) for i in (1, 2, 3, 4))


def types(records: list) -> list[str]:
    return [("~" if r.value is None else "") + type(r).__name__ for r in records]


def fence_records(group_id: str, member_id: str, epoch: int, metadata_hash: int = 0, last: bool = True) -> list:
    """Kafka's shareGroupFenceMember: the member's tombstones and the new group epoch; when it was
    the last member, the assignment epoch catches up (timestamp 0)."""
    out = [G.current_assignment_tombstone(group_id, member_id), G.target_member_tombstone(group_id, member_id),
           G.member_tombstone(group_id, member_id), G.group_epoch_record(group_id, epoch, metadata_hash)]
    return out + ([G.target_epoch_record(group_id, epoch, 0)] if last else [])


# -- rejoin, session timeouts, onLoaded -----------------------------------------------------------

def test_share_group_member_can_rejoin_with_epoch_zero(profile):
    clu = cluster({"foo": 3})
    foo = tid(clu, "foo")
    m = member(M1, epoch=100, previous=99, topics=["foo"], assigned={foo: [0, 1, 2]})
    c = coordinator(profile, clu, group_records(GROUP, 100, [m], {M1: {foo: [0, 1, 2]}},
                                                metadata_hash=group_hash(clu, "foo"), assignment_timestamp=12345),
                    assignor=MockAssignor("share"))
    before = c.position
    r = hb(c, M1, 0, ["foo"])
    # the member gets its epoch and assignment back; subscription and metadata unchanged: no bump
    assert answer(r) == ok(M1, 100, {foo: [0, 1, 2]})
    assert share_group(c).group_epoch == 100
    # only the share-partitions' durable state is set up (record 15: initialising, then initialised)
    assert types(written(c, before)) == ["ShareGroupStatePartitionMetadata"] * 2


def test_session_timeout_expiration_for_share_member(profile):
    c = coordinator(profile, cluster({"foo": 6}), assignor=MockAssignor("range"))
    c.soft_state["share.assignor"].prepare({M1: {tid(c, "foo"): range(6)}})
    assert hb(c, M1, 0, ["foo"]).member_epoch == 2
    assert session_timeout(c, M1) == SESSION_TIMEOUT_MS
    before = c.position
    c.advance(SESSION_TIMEOUT_MS + 1)
    assert written(c, before) == fence_records(GROUP, M1, 3)
    assert session_timeout(c, M1) is None


def test_on_loaded_session_timeout_expiration_for_share_member(profile):
    clu = cluster({"foo": 6})
    foo = tid(clu, "foo")
    m = member("foo-1", epoch=9, previous=9, topics=["foo"], assigned={foo: range(6)})
    c = coordinator(profile, clu, group_records("group", 10, [m], {"foo-1": {foo: range(6)}},
                                                metadata_hash=group_hash(clu, "foo")))
    # the load re-arms every member's session (Kafka's onLoaded)
    assert session_timeout(c, "foo-1", "group") == SESSION_TIMEOUT_MS
    before = c.position
    c.advance(SESSION_TIMEOUT_MS + 1)
    assert written(c, before) == fence_records("group", "foo-1", 11)
    assert session_timeout(c, "foo-1", "group") is None


def test_on_loaded_with_share_group(profile):
    clu = cluster({"foo": 6, "bar": 3})
    foo = tid(clu, "foo")
    members = [member("foo-1", epoch=9, previous=9, topics=["foo"], assigned={foo: [0, 1, 2]}),
               member("foo-2", epoch=10, previous=10, topics=["foo"])]
    c = coordinator(profile, clu, group_records("foo", 10, members, {"foo-1": {foo: [3, 4, 5]}}))
    assert session_timeout(c, "foo-1", "foo") == session_timeout(c, "foo-2", "foo") == SESSION_TIMEOUT_MS


# -- ShareGroupDescribe --------------------------------------------------------------------------

def test_share_group_describe_request(profile):
    c = coordinator(profile, cluster())
    assert list(describe(c)) == []
    (d,) = describe(c, "unknown-group")
    assert d.error_code == E.group_id_not_found


def test_share_group_describe_no_errors(profile):
    clu = cluster({"foo": 1})
    foo = tid(clu, "foo")
    records = [G.group_epoch_record("group-id-1", 100, 0), G.group_epoch_record("group-id-2", 15, 0)]
    c = coordinator(profile, clu, records, assignor=MockAssignor("share-range").prepare({}))
    r = hb(c, M1, 0, ["foo"], group="group-id-2")
    assert r.member_id == M1
    assert initialized(c) == ({"group-id-2"}, {foo: {0}}, {16})
    d1, d2 = describe(c, "group-id-1", "group-id-2")
    # a group made by its epoch record alone keeps the initial assignment epoch (1)
    assert (d1.error_code, d1.group_id, d1.group_state, d1.group_epoch, d1.assignment_epoch, d1.assignor_name,
            list(d1.members)) == (E.none, "group-id-1", "Empty", 100, 1, "share-range", [])
    assert (d2.error_code, d2.group_id, d2.group_state, d2.group_epoch, d2.assignment_epoch, d2.assignor_name) == \
        (E.none, "group-id-2", "Stable", 16, 16, "share-range")
    (m,) = d2.members
    assert (m.member_id, m.member_epoch, m.client_id, m.client_host, list(m.subscribed_topic_names), m.rack_id,
            list(m.assignment.topic_partitions)) == (M1, 16, CLIENT_ID, CLIENT_HOST, ["foo"], None, [])


# -- joining -------------------------------------------------------------------------------------

def test_share_group_member_id_generation(profile):
    c = coordinator(profile, cluster({"foo": 1, "bar": 1}), assignor=MockAssignor("share").prepare({}))
    r = hb(c, M1, 0, ["foo", "bar"], group="group-foo")
    assert initialized(c) == ({"group-foo"}, {tid(c, "foo"): {0}, tid(c, "bar"): {0}}, {2})
    # the member id is the consumer's own; the assignment is there (empty: the mock assigns nothing)
    assert answer(r) == ok(M1, 2, {})


def test_share_group_unknown_group_id(profile):
    c = coordinator(profile, cluster({"foo": 1, "bar": 1}), assignor=MockAssignor("share"))
    r = hb(c, M1, 100, ["foo", "bar"])
    assert r.error_code == E.group_id_not_found and c.position == 0


def test_share_group_unknown_member_id_joins(profile):
    c = coordinator(profile, cluster({"foo": 1, "bar": 1}), assignor=MockAssignor("share").prepare({}))
    hb(c, M1, 0, ["foo", "bar"])
    assert initialized(c) == ({GROUP}, {tid(c, "foo"): {0}, tid(c, "bar"): {0}}, {2})
    before = c.position
    r = hb(c, M2, 1, ["foo", "bar"])
    assert r.error_code == E.unknown_member_id and c.position == before


def test_share_group_member_joins_empty_group_with_assignments(profile):
    clu = cluster({"foo": 6, "bar": 3})
    foo, bar = tid(clu, "foo"), tid(clu, "bar")
    target = {foo: range(6), bar: range(3)}
    c = coordinator(profile, clu, assignor=MockAssignor("share").prepare({M1: target}))
    assert describe(c, GROUP)[0].error_code == E.group_id_not_found
    r = hb(c, M1, 0, ["foo", "bar"])
    assert initialized(c) == ({GROUP}, {foo: set(range(6)), bar: set(range(3))}, {2})
    assert answer(r) == ok(M1, 2, target)
    expected = member(M1, epoch=2, previous=0, topics=["foo", "bar"], assigned=target)
    state = {foo: ("foo", range(6)), bar: ("bar", range(3))}
    assert written(c, 0) == [
        G.member_record(GROUP, expected),
        G.group_epoch_record(GROUP, 2, group_hash(clu, "foo", "bar")),
        G.target_member_record(GROUP, M1, expected.assigned_partitions),
        G.target_epoch_record(GROUP, 2, c.now()),
        G.current_assignment_record(GROUP, expected),
        state_record(GROUP, initializing=state),
        # the share coordinator's answer (Kafka's initializeShareGroupState, the next write)
        state_record(GROUP, initialized=state)]


def test_share_group_leaving_member_bumps_group_epoch(profile):
    clu = cluster({"foo": 6, "bar": 3, "zar": 1})
    foo, bar = tid(clu, "foo"), tid(clu, "bar")
    a1, a2 = {foo: [0, 1, 2], bar: [0, 1]}, {foo: [3, 4, 5], bar: [2]}
    members = [member(M1, epoch=10, previous=9, topics=["foo", "bar"], assigned=a1),
               # zar only here, so the metadata hash must be computed again when it leaves
               member(M2, epoch=10, previous=9, topics=["foo", "bar", "zar"], assigned=a2)]
    c = coordinator(profile, clu, group_records(GROUP, 10, members, {M1: a1, M2: a2},
                                                metadata_hash=group_hash(clu, "foo", "bar", "zar")),
                    assignor=MockAssignor("share"))
    before = c.position
    r = hb(c, M2, -1, ["foo", "bar"])
    assert answer(r) == (E.none, M2, -1, 0, None)
    assert written(c, before) == fence_records(GROUP, M2, 11, group_hash(clu, "foo", "bar"), last=False)
    assert initialized(c) == (set(), {}, set())


def test_share_group_new_member_is_rejected_with_maximum_members_is_reached(profile):
    clu = cluster({"foo": 1, "bar": 1})
    c = coordinator(profile, clu, [G.group_epoch_record(GROUP, 100, 0)], assignor=MockAssignor("share").prepare({}),
                    config={"group.share.max.size": 1})
    assert hb(c, M1, 0, ["foo", "bar"]).member_epoch == 101
    assert initialized(c) == ({GROUP}, {tid(c, "foo"): {0}, tid(c, "bar"): {0}}, {101})
    before = c.position
    assert hb(c, M2, 0, ["foo", "bar"]).error_code == E.group_max_size_reached
    assert c.position == before


# -- deleting a group, states, configs ----------------------------------------------------------

def test_share_group_delete_tombstones(profile):
    c = coordinator(profile, cluster(), group_records("share-group-id", 10))
    before = c.position
    r = c.handle(request("DeleteGroups", 2, groups_names=["share-group-id"]))
    assert r.results[0].error_code == E.none
    assert written(c, before) == [target_epoch_tombstone("share-group-id"), G.state_metadata_tombstone("share-group-id"),
                                  R.ShareGroupMetadata.tombstone(R.ShareGroupMetadataKey(group_id="share-group-id"))]


def test_share_group_states(profile):
    clu = cluster({"foo": 4})
    foo = tid(clu, "foo")
    log = group_records(GROUP, 10) + [G.group_epoch_record(GROUP, 10, 0)]
    steps = [("Empty", []),
             ("Stable", [G.member_record(GROUP, member(M1, topics=["foo"], client_id="", client_host="")),
                         G.group_epoch_record(GROUP, 11, 0)]),
             ("Stable", [G.target_member_record(GROUP, M1, {foo: frozenset({1, 2, 3})}),
                         G.target_epoch_record(GROUP, 11, 12345)]),
             ("Stable", [G.current_assignment_record(GROUP, member(M1, epoch=11, previous=10, assigned={foo: [1, 2]}))]),
             ("Stable", [G.current_assignment_record(GROUP, member(M1, epoch=11, previous=10,
                                                                  assigned={foo: [1, 2, 3]}))])]
    for state, records in steps:
        log += records
        assert describe(coordinator(profile, clu, log), GROUP)[0].group_state == state


def _join_then_update_configs(profile, group_configs: dict):
    """Kafka's testShareGroupDynamicConfigs / EvaluatedConfigs: a member joins, the group's configs
    change, the member heartbeats again."""
    c = coordinator(profile, cluster({"foo": 6}), assignor=MockAssignor("simple"))
    foo = tid(c, "foo")
    c.soft_state["share.assignor"].prepare({M1: {foo: range(6)}})
    r = hb(c, M1, 0, ["foo"])
    assert r.member_epoch == 2 and ms(r.heartbeat_interval) == HEARTBEAT_INTERVAL_MS
    assert initialized(c) == ({GROUP}, {foo: set(range(6))}, {2})
    assert session_timeout(c, M1) == SESSION_TIMEOUT_MS
    before = c.position
    c.advance(HEARTBEAT_INTERVAL_MS)
    assert c.position == before
    c.cluster.group_configs[GROUP] = group_configs
    calls = len(c.soft_state["share.persister"].calls)
    r = hb(c, M1, 2)
    assert r.member_epoch == 2 and initialized(c, calls) == (set(), {}, set())
    return c, r


def test_share_group_dynamic_configs(profile):
    c, r = _join_then_update_configs(profile, {"share.session.timeout.ms": 50_000,
                                               "share.heartbeat.interval.ms": 10_000})
    assert ms(r.heartbeat_interval) == 10_000 and session_timeout(c, M1) == 50_000
    before = c.position
    c.advance(10_000)
    assert c.position == before
    calls = len(c.soft_state["share.persister"].calls)
    assert hb(c, M1, -1).member_epoch == -1
    assert initialized(c, calls) == (set(), {}, set())
    assert session_timeout(c, M1) is None


def test_share_group_evaluated_configs(profile):
    # out of the coordinator's bounds (share session timeout at most 60 s, heartbeat interval at
    # least 5 s): the bounds apply
    c, r = _join_then_update_configs(profile, {"share.session.timeout.ms": 70_000,
                                               "share.heartbeat.interval.ms": 1})
    assert ms(r.heartbeat_interval) == c.config["group.share.min.heartbeat.interval.ms"] == 5000
    assert session_timeout(c, M1) == c.config["group.share.max.session.timeout.ms"] == 60_000


# -- replaying the target assignment metadata -----------------------------------------------------

def test_replay_share_group_target_assignment_metadata(profile):
    c = coordinator(profile, cluster(), [G.target_epoch_record("foo", 10, 12345)])
    g = share_group(c, "foo")  # the record creates the group
    assert (g.assignment_epoch, g.assignment_timestamp) == (10, 12345)
    assert describe(c, "foo")[0].assignment_epoch == 10


def test_replay_share_group_target_assignment_metadata_tombstone(profile):
    c = coordinator(profile, cluster(), [target_epoch_tombstone("foo")])
    assert "foo" not in c.groups and describe(c, "foo")[0].error_code == E.group_id_not_found


def test_replay_share_group_target_assignment_metadata_tombstone_existing(profile):
    c = coordinator(profile, cluster(), [G.target_epoch_record("foo", 10, 12345), target_epoch_tombstone("foo")])
    g = share_group(c, "foo")
    assert (g.assignment_epoch, g.assignment_timestamp) == (-1, 0)


# -- DeleteGroups: the share-state delete request (shareGroupBuildPartitionDeleteRequest) -----------

def _delete_group(profile, topics: dict, initializing: dict, initialized_: dict, deleting: dict):
    """An empty group with record 15 as given, deleted: the first record written (record 15
    marking what is being deleted), and the share-state deletes."""
    clu = cluster(topics, ids={"t1": T1, "t2": T2, "t3": T3})
    records = [G.group_epoch_record("share-group", 0, 0),
               state_record("share-group", initializing, initialized_, deleting)]
    c = coordinator(profile, clu, records)
    accept_deletes(c)  # Kafka's test never reaches a share coordinator: its deletes succeed
    before = c.position
    r = c.handle(request("DeleteGroups", 2, groups_names=["share-group"]))
    assert r.results[0].error_code == E.none
    out = written(c, before)
    tombstones = [target_epoch_tombstone("share-group"), G.state_metadata_tombstone("share-group"),
                  R.ShareGroupMetadata.tombstone(R.ShareGroupMetadataKey(group_id="share-group"))]
    assert out[1:] == tombstones  # then the group goes
    return out[0], deleted(c)


INIT1, INIT2 = {T1: ("t1", [0, 1])}, {T2: ("t2", [0, 1])}


def test_share_group_delete_request_no_deleting_topics(profile):
    record, deletes = _delete_group(profile, {"t1": 2, "t2": 2}, INIT1, INIT2, {})
    assert deletes == {T1: {0, 1}, T2: {0, 1}}
    assert record == state_record("share-group", deleting={T1: "t1", T2: "t2"})


def test_share_group_delete_request_with_already_deleting_topics(profile):
    record, deletes = _delete_group(profile, {"t1": 2, "t2": 2, "t3": 2}, INIT1, INIT2, {T3: "t3"})
    assert deletes == {T1: {0, 1}, T2: {0, 1}, T3: {0, 1}}
    assert record == state_record("share-group", deleting={T1: "t1", T2: "t2", T3: "t3"})


def test_share_group_delete_request_with_already_deleting_topics_but_not_in_metadata(profile):
    # t3 is gone from the cluster: its deletion is forgotten
    record, deletes = _delete_group(profile, {"t1": 2, "t2": 2}, INIT1, INIT2, {T3: "t3"})
    assert deletes == {T1: {0, 1}, T2: {0, 1}}
    assert record == state_record("share-group", deleting={T1: "t1", T2: "t2"})


def test_share_group_delete_request_with_already_deleting_topics_but_metadata_is_empty(profile):
    # t1 and t2 are asked for by their partitions in record 15 (a real share coordinator would then
    # refuse them: it checks its metadata, as Kafka's ShareCoordinatorShard does)
    record, deletes = _delete_group(profile, {}, INIT1, INIT2, {T3: "t3"})
    assert deletes == {T1: {0, 1}, T2: {0, 1}}
    assert record == state_record("share-group", deleting={T1: "t1", T2: "t2"})


# -- DeleteShareGroupOffsets (sharePartitionsEligibleForOffsetDeletion, completeDeleteShareGroupOffsets)

def _delete_offsets(profile, topics: dict, initializing: dict, initialized_: dict, deleting: dict, names: list):
    """An empty group with record 15 as given; DeleteShareGroupOffsets of `names`:
    (response topics as (name, topic id, error, message), records written, share-state deletes)."""
    clu = cluster(topics, ids={"topic-1": T1, "topic-2": T2, "topic-3": T3, "topic-4": T4})
    records = [G.group_epoch_record("share-group", 0, 0),
               state_record("share-group", initializing, initialized_, deleting)]
    c = coordinator(profile, clu, records, assignor=MockAssignor("range").prepare({}))
    before = c.position
    r = c.handle(request("DeleteShareGroupOffsets", 0, group_id="share-group",
                         topics=[{"topic_name": n} for n in names]))
    assert r.error_code == E.none
    answers = [(t.topic_name, t.topic_id, t.error_code, t.error_message) for t in r.responses]
    return answers, written(c, before), deleted(c)


UNKNOWN = (E.unknown_topic_or_partition, "This server does not host this topic-partition.")
NO_OFFSETS = (E.unknown_topic_or_partition, "There is no offset information to delete.")
ZERO = uuid.UUID(int=0)


def test_share_partitions_eligible_for_offset_deletion_success(profile):
    answers, records, deletes = _delete_offsets(
        profile, {"topic-1": 3, "topic-2": 2}, {}, {T1: ("topic-1", [0, 1, 2]), T2: ("topic-2", [0, 1])}, {},
        ["topic-1", "topic-2"])
    assert deletes == {T1: {0, 1, 2}, T2: {0, 1}}
    assert records[0] == state_record("share-group", deleting={T1: "topic-1", T2: "topic-2"})
    assert answers == [("topic-1", T1, E.none, None), ("topic-2", T2, E.none, None)]


def test_share_partitions_eligible_for_offset_deletion_contains_deleting_topics(profile):
    # topic-3 is not initialised but being deleted: deleted again (all its partitions); topic-4 is
    # being deleted but not asked for: it stays in the record
    answers, records, deletes = _delete_offsets(
        profile, {"topic-1": 3, "topic-2": 2, "topic-3": 2, "topic-4": 2}, {},
        {T1: ("topic-1", [0, 1, 2]), T2: ("topic-2", [0, 1])}, {T3: "topic-3", T4: "topic-4"},
        ["topic-1", "topic-2", "topic-3"])
    assert deletes == {T1: {0, 1, 2}, T2: {0, 1}, T3: {0, 1}}
    assert records[0] == state_record("share-group", deleting={T1: "topic-1", T2: "topic-2", T3: "topic-3",
                                                               T4: "topic-4"})
    assert [a[2] for a in answers] == [E.none] * 3


def test_share_partitions_eligible_for_offset_deletion_error_topics(profile):
    answers, records, deletes = _delete_offsets(
        profile, {"topic-1": 3}, {}, {T1: ("topic-1", [0, 1, 2])}, {}, ["topic-1", "topic-2"])
    assert answers[0] == ("topic-2", ZERO, *UNKNOWN)
    assert deletes == {T1: {0, 1, 2}}
    assert records[0] == state_record("share-group", deleting={T1: "topic-1"})


def test_share_partitions_eligible_for_offset_deletion_uninitialized_topics(profile):
    # topic-2 is only being initialised: there is nothing to delete, and it stays initialising
    answers, records, deletes = _delete_offsets(
        profile, {"topic-1": 3, "topic-2": 2}, {T2: ("topic-2", [0, 1])}, {T1: ("topic-1", [0, 1, 2])}, {},
        ["topic-1", "topic-2"])
    assert answers[0] == ("topic-2", ZERO, *NO_OFFSETS)
    assert deletes == {T1: {0, 1, 2}}
    assert records[0] == state_record("share-group", initializing={T2: ("topic-2", [0, 1])}, deleting={T1: "topic-1"})


def test_share_partitions_eligible_for_offset_deletion_uninitialized_and_error_topics(profile):
    answers, records, deletes = _delete_offsets(
        profile, {"topic-1": 3, "topic-2": 2}, {T2: ("topic-2", [0, 1])}, {T1: ("topic-1", [0, 1, 2])}, {},
        ["topic-1", "topic-2", "topic-3"])
    assert answers[:2] == [("topic-2", ZERO, *NO_OFFSETS), ("topic-3", ZERO, *UNKNOWN)]
    assert deletes == {T1: {0, 1, 2}}
    assert records[0] == state_record("share-group", initializing={T2: ("topic-2", [0, 1])}, deleting={T1: "topic-1"})


def test_complete_delete_share_group_offsets(profile):
    # once the share coordinator has deleted them, the topics leave record 15
    answers, records, deletes = _delete_offsets(
        profile, {"topic-1": 3, "topic-2": 2}, {}, {}, {T1: "topic-1", T2: "topic-2"}, ["topic-1", "topic-2"])
    assert deletes == {T1: {0, 1, 2}, T2: {0, 1}}
    assert records[1:] == [state_record("share-group")]
    assert sorted(answers) == [("topic-1", T1, E.none, None), ("topic-2", T2, E.none, None)]


# -- initialising share-partitions ---------------------------------------------------------------

def _state_records(records: list) -> list:
    return [r for r in records if isinstance(r, R.ShareGroupStatePartitionMetadata)]


def test_share_group_heartbeat_initialize_on_partition_update(profile):
    clu = cluster({"t1": 2, "t2": 2}, ids={"t1": T1, "t2": T2})
    mock = MockAssignor("range").prepare({})
    c = coordinator(profile, clu, assignor=mock)
    hb(c, M1, 0, ["t1", "t2"], group="share-group")
    both = {T1: ("t1", [0, 1]), T2: ("t2", [0, 1])}
    assert _state_records(written(c, 0)) == [state_record("share-group", initializing=both),
                                             state_record("share-group", initialized=both)]
    assert initialized(c) == ({"share-group"}, {T1: {0, 1}, T2: {0, 1}}, {2})
    clu.increase_partitions("t1", 4)
    mock.prepare({M1: {T1: range(4), T2: range(2)}})
    before, calls = c.position, len(c.soft_state["share.persister"].calls)
    hb(c, M1, 2, group="share-group")
    # the new partitions initialise under the new group epoch
    assert _state_records(written(c, before)) == [
        state_record("share-group", initializing={T1: ("t1", [2, 3])}, initialized=both),
        state_record("share-group", initialized={T1: ("t1", range(4)), T2: ("t2", [0, 1])})]
    assert initialized(c, calls) == ({"share-group"}, {T1: {2, 3}}, {3})


def test_share_group_heartbeat_does_not_bump_group_epoch_during_assignment_delay(profile):
    # Kafka's clock starts at 0, so its assignment timestamp Integer.MAX_VALUE suppresses assignments
    # (Kafka's default interval, 1000 ms, has not passed); here the clock starts at T0: T0 does
    clu = cluster({"t1": 2}, ids={"t1": T1})
    m = member(M1, epoch=2, topics=["t1"])
    records = group_records("share-group", 2, [m], {M1: {}}, metadata_hash=group_hash(clu, "t1"),
                            assignment_timestamp=T0)
    c = coordinator(profile, clu, records + [state_record("share-group", initialized={T1: ("t1", [0, 1])})])
    before = c.position
    hb(c, M1, 2, group="share-group")
    if profile == "kafka":
        # t1-0/1 are initialised and nobody's target: the group epoch is bumped, the assignment waits
        assert written(c, before) == [G.group_epoch_record("share-group", 3, group_hash(clu, "t1"))]
    else:
        # kip assigns every subscribed partition, initialised or not: nothing is pending
        assert written(c, before) == []
    before = c.position
    hb(c, M1, 2, group="share-group")
    assert written(c, before) == []  # not bumped again while that assignment waits (PR #21721)


def test_share_group_heartbeat_persister_request_with_initializing(profile):
    # kgroup's retry interval is Kafka's default group.share.initialize.retry.interval.ms (30 s)
    clu = cluster({"t1": 2}, ids={"t1": T1})
    initializing = {T1: ("t1", [0, 1])}
    records = [G.group_epoch_record("share-group", 1, 0), state_record("share-group", initializing)]
    c = coordinator(profile, clu, records, assignor=MockAssignor("range").prepare({}))
    before = c.position
    hb(c, M1, 0, ["t1"], group="share-group")
    # still initialising (and recently): not asked again
    assert _state_records(written(c, before)) == [] and initialized(c) == (set(), {}, set())
    c.advance(30_000 + 1)
    before = c.position
    hb(c, M2, 0, ["t1"], group="share-group")
    assert _state_records(written(c, before))[0] == state_record("share-group", initializing, timestamp=c.now())
    assert initialized(c) == ({"share-group"}, {T1: {0, 1}}, {3})


def test_share_group_initializing_clears_common_deleting(profile):
    clu = cluster({"t1": 2}, ids={"t1": T1})
    records = [G.group_epoch_record("share-group", 0, 0), state_record("share-group", deleting={T1: "t1"})]
    c = coordinator(profile, clu, records, assignor=MockAssignor("range").prepare({}))
    before = c.position
    hb(c, M1, 0, ["t1"], group="share-group")
    assert _state_records(written(c, before))[0] == state_record("share-group", initializing={T1: ("t1", [0, 1])})


def test_share_group_initialize_success(profile):
    # initialising since T0; a heartbeat past the retry interval asks again, and the share
    # coordinator's success moves the partitions to initialised, at the time of that request
    clu = cluster({"t1": 2}, ids={"t1": T1})
    records = [G.group_epoch_record("groupId", 0, 0), state_record("groupId", {T1: ("t1", [0, 1])})]
    c = coordinator(profile, clu, records, assignor=MockAssignor("range").prepare({}))
    c.advance(30_000 + 1)
    hb(c, M1, 0, ["t1"], group="groupId")
    assert _state_records(written(c, 0))[-1] == state_record("groupId", initialized={T1: ("t1", [0, 1])},
                                                             timestamp=c.now())


# -- topics deleted from the cluster (onMetadataUpdate -> maybeCleanupShareGroupState) ----------------

def test_maybe_cleanup_share_group_state_empty_topic_ids(profile):
    # the coordinator hears of every metadata change: none deleting a topic, or a deletion with
    # no share group to clean up, writes nothing
    clu = cluster({"t1": 2})
    c = coordinator(profile, clu)
    clu.create_topic("t2", 1)
    hb(c, M1, -1)  # any request (here one for no group) comes after the change was heard of
    clu.delete_topic("t1")
    c.advance(0)   # so does any timer
    assert c.position == 0


def test_maybe_cleanup_share_group_state_init_deleted_topics_present(profile):
    names = [f"t{i}" for i in range(1, 7)]
    ids = {n: uuid.UUID(int=0xC000 + i) for i, n in enumerate(names, 1)}
    clu = cluster({n: 2 if n == "t1" else 3 for n in names}, ids=ids)
    t1, t2, t3, t4, t5, t6 = (ids[n] for n in names)
    records = [G.group_epoch_record("sharegroup", 0, 0),
               state_record("sharegroup", initializing={t1: ("t1", [0, 1]), t3: ("t3", [0, 1, 2])},
                            initialized={t2: ("t2", [0, 1, 2]), t4: ("t4", [0, 1, 2])},
                            deleting={t5: "t5", t6: "t6"})]
    c = coordinator(profile, clu, records)
    before = c.position
    for name in ("t1", "t2", "t6"):
        clu.delete_topic(name)
    c.advance(0)  # the coordinator hears of the three deletions at once, as one metadata delta
    # record 15 forgets the deleted topics, wherever it had them
    assert written(c, before) == [state_record("sharegroup", initializing={t3: ("t3", [0, 1, 2])},
                                               initialized={t4: ("t4", [0, 1, 2])}, deleting={t5: "t5"})]
    assert not deleted(c)  # the share coordinator drops a deleted topic's state itself
    # and a coordinator loaded from that log agrees
    assert c.load(c.log, cluster=clu).groups["sharegroup"].state_metadata == share_group(c, "sharegroup").state_metadata


# -- replay --------------------------------------------------------------------------------------

def _replayed_records() -> list:
    g, m, t = "groupId", M1, uuid.UUID(int=7)
    return [
        G.member_tombstone(g, m),
        R.ShareGroupMetadata.tombstone(R.ShareGroupMetadataKey(group_id=g)),
        G.target_member_tombstone(g, m),
        target_epoch_tombstone(g),
        G.current_assignment_tombstone(g, m),
        G.state_metadata_tombstone(g),
        G.member_record(g, member(m, topics=["tp1"], client_id="", client_host="")),
        G.group_epoch_record(g, 1, 2),
        G.target_epoch_record(g, 5),
        G.target_member_record(g, m, {t: frozenset({0, 1, 2})}),
        G.current_assignment_record(g, member(m, epoch=5, previous=4, assigned={t: [0, 1, 2]})),
        state_record(g),
    ]


@pytest.mark.parametrize("record", _replayed_records(), ids=lambda r: types([r])[0])
def test_share_group_records_no_exception_on_replay(profile, record):
    c = coordinator(profile, cluster(), [record])
    assert c.position == 1


def test_share_group_assignment_interval(profile):
    # KIP-1263 with the test's 5000 ms (a configured interval applies under both profiles)
    clu = cluster({"foo": 6}, ids={"foo": T1})
    mock = MockAssignor("range").prepare({M1: {T1: range(6)}})
    c = coordinator(profile, clu, assignor=mock, config={"group.share.assignment.interval.ms": 5000})
    assert answer(hb(c, M1, 0, ["foo"])) == ok(M1, 2, {T1: range(6)})
    m1 = member(M1, epoch=2, topics=["foo"], assigned={T1: range(6)})
    got = written(c, 0)
    assert got[:6] == [G.member_record(GROUP, m1), G.group_epoch_record(GROUP, 2, group_hash(clu, "foo")),
                       G.target_member_record(GROUP, M1, frozen({T1: range(6)})), G.target_epoch_record(GROUP, 2, T0),
                       G.current_assignment_record(GROUP, m1),
                       state_record(GROUP, initializing={T1: ("foo", range(6))})]

    # Just before the interval: member 2 joins, the group epoch moves on, the assignment does not
    c.advance(4995)
    mock.prepare({M1: {T1: range(6)}, M2: {T1: range(6)}})
    before = c.position
    assert answer(hb(c, M2, 0, ["foo"])) == ok(M2, 2, {})
    m2 = member(M2, epoch=2, topics=["foo"])
    assert written(c, before) == [G.member_record(GROUP, m2), G.group_epoch_record(GROUP, 3, group_hash(clu, "foo")),
                                  G.current_assignment_record(GROUP, m2)]

    # The interval has passed: member 2's next heartbeat computes epoch 3 (member 1's target is unchanged)
    c.advance(10)
    before = c.position
    assert answer(hb(c, M2, 2)) == ok(M2, 3, {T1: range(6)})
    assert written(c, before) == [
        G.target_member_record(GROUP, M2, frozen({T1: range(6)})), G.target_epoch_record(GROUP, 3, c.now()),
        G.current_assignment_record(GROUP, member(M2, epoch=3, previous=2, topics=["foo"], assigned={T1: range(6)}))]
