"""The share-group admin APIs (KIP-932 "AdminClient"): DescribeShareGroupOffsets (start offset and
lag), AlterShareGroupOffsets (reset an empty group's SPSO), DeleteShareGroupOffsets, and the
`kgroup.admin.Admin` methods named after Kafka's Admin (listShareGroupOffsets,
alterShareGroupOffsets, deleteShareGroupOffsets, describeShareGroups, deleteShareGroups,
listGroups with type share) plus the kafka-share-groups.sh reset."""
from __future__ import annotations

import pytest

from kgroup import ErrorCode
from kgroup.admin import Admin, KafkaException, ListShareGroupOffsetsSpec, SharePartitionOffsetInfo, TopicPartition
from kgroup.groups.share.persister import DeliveryState, StateBatch
from kgroup.protocol import request
from tests.share.share_testing import FIRST, M1, M2, assert_reload_equal, coord, describe, has_state, hb, join, summary, written

E = ErrorCode


def empty_group(profile: str = "kafka", **kw):
    """A share group whose member came and went: orders' share-partitions have state, the group is empty."""
    c = coord(profile, **kw)
    join(c, M1)
    hb(c, M1, -1)
    return c


def describe_offsets(c, group: str = "g", topics=None, version: int = 1):
    return c.handle(request("DescribeShareGroupOffsets", version, groups=[{"group_id": group, "topics": topics}])).groups[0]


def alter(c, group: str = "g", **offsets):
    topics = {}
    for key, off in offsets.items():
        t, p = key.rsplit("_", 1)
        topics.setdefault(t, []).append({"partition_index": int(p), "start_offset": off})
    return c.handle(request("AlterShareGroupOffsets", 0, group_id=group,
                            topics=[{"topic_name": t, "partitions": ps} for t, ps in topics.items()]))


def delete_offsets(c, *topics: str, group: str = "g"):
    return c.handle(request("DeleteShareGroupOffsets", 0, group_id=group, topics=[{"topic_name": t} for t in topics]))


# -- DescribeShareGroupOffsets ------------------------------------------------------------------

@pytest.mark.parametrize("members", [0, 1])
def test_describe_all_offsets_of_an_empty_and_a_non_empty_group(members):
    c = empty_group()
    if members:
        join(c, M2)
    g = describe_offsets(c)
    assert (g.group_id, g.error_code, g.error_message) == ("g", E.none, None)
    (t,) = g.topics
    assert (t.topic_name, t.topic_id) == ("orders", c.cluster.topic_id("orders"))
    # initialised without a start offset yet: the share-partition leader picks it (auto.offset.reset);
    # the initialising snapshot has leader epoch 0 (Kafka 4.4.0)
    assert [(p.partition_index, p.start_offset, p.leader_epoch, p.lag, p.error_code) for p in t.partitions] == [
        (0, -1, 0, -1, E.none), (1, -1, 0, -1, E.none), (2, -1, 0, -1, E.none)]


def test_describe_start_offset_and_lag():
    # KIP-1226: lag = log end - SPSO - delivery-complete count (as the share-partition leader wrote it)
    c = empty_group()
    c.cluster.set_end_offset("orders", 0, 100)
    p = c.soft_state["share.persister"]
    tid = c.cluster.topic_id("orders")
    epoch = summary(c, "orders", 0).state_epoch
    assert p.read_state("g", tid, 0, 1).error_code == E.none  # a leader takes the share-partition
    batches = (StateBatch(40, 44, DeliveryState.ACKNOWLEDGED, 1), StateBatch(45, 45, DeliveryState.AVAILABLE, 2),
               StateBatch(46, 47, DeliveryState.ARCHIVED, 5))
    assert p.write_state("g", tid, 0, epoch, 1, 40, batches, delivery_complete_count=7) == E.none
    g = describe_offsets(c, topics=[{"topic_name": "orders", "partitions": [0]}])
    (part,) = g.topics[0].partitions
    assert (part.start_offset, part.leader_epoch, part.lag) == (40, 1, 100 - 40 - 7)
    v0 = describe_offsets(c, topics=[{"topic_name": "orders", "partitions": [0]}], version=0)
    assert v0.topics[0].partitions[0].start_offset == 40


def test_describe_offsets_absent_data_is_no_error():
    # GroupCoordinatorService.describeShareGroupOffsets: an unknown topic, partition or group is
    # "absence of data, rather than an error" (start offset -1, lag -1), as OffsetFetch answers it
    c = empty_group()
    assert describe_offsets(c, group="").error_code == E.invalid_group_id
    g = describe_offsets(c, group="nope")
    assert (g.error_code, g.topics) == (E.none, ())
    g = describe_offsets(c, topics=[{"topic_name": "missing", "partitions": [0]}, {"topic_name": "orders", "partitions": [9]},
                                    {"topic_name": "payments", "partitions": [0]}])
    assert [(t.topic_name, t.topic_id.int if t.topic_name == "missing" else None,
             [(p.partition_index, p.start_offset, p.leader_epoch, p.lag, p.error_code) for p in t.partitions])
            for t in g.topics] == [
        ("orders", None, [(9, -1, 0, -1, E.none)]),
        ("payments", None, [(0, -1, 0, -1, E.none)]),
        ("missing", 0, [(0, -1, 0, -1, E.none)])]


# -- AlterShareGroupOffsets ------------------------------------------------------------------------

def test_alter_a_non_empty_group_is_refused():
    c = coord("kafka")
    join(c, M1)
    before = c.position
    r = alter(c, orders_0=10)
    assert (r.error_code, r.error_message, r.responses) == (E.non_empty_group, "The group is not empty.", ())
    assert c.position == before


def test_alter_an_empty_group_resets_the_spso_with_a_new_state_epoch():
    c = empty_group()
    p = c.soft_state["share.persister"]
    tid = c.cluster.topic_id("orders")
    epoch = c.groups["g"].group_epoch
    old_state_epoch = summary(c, "orders", 0).state_epoch
    before = c.position
    r = alter(c, orders_0=10, orders_2=30)
    assert r.error_code == E.none
    assert [(t.topic_name, t.topic_id, [(q.partition_index, q.error_code) for q in t.partitions]) for t in r.responses] \
        == [("orders", tid, [(0, E.none), (2, E.none)])]
    # the share coordinator gets the group epoch as the state epoch (fencing older leaders); the
    # group epoch itself does not move (Kafka 4.4.0's records: no ShareGroupMetadata record)
    assert c.groups["g"].group_epoch == epoch > old_state_epoch
    assert (summary(c, "orders", 0).start_offset, summary(c, "orders", 0).state_epoch) == (10, epoch)
    assert summary(c, "orders", 2).start_offset == 30 and summary(c, "orders", 1).start_offset == -1
    assert written(c, before) == ["ShareGroupStatePartitionMetadata", "ShareGroupStatePartitionMetadata"]
    assert not c.groups["g"].state_metadata.initializing
    assert [q.start_offset for q in describe_offsets(c).topics[0].partitions] == [10, -1, 30]
    assert_reload_equal(c)


def test_alter_unknown_topics_and_partitions():
    c = empty_group()
    r = c.handle(request("AlterShareGroupOffsets", 0, group_id="g", topics=[
        {"topic_name": "missing", "partitions": [{"partition_index": 0, "start_offset": 1}]},
        {"topic_name": "orders", "partitions": [{"partition_index": 7, "start_offset": 1}]}]))
    assert [(t.topic_name, [(q.partition_index, q.error_code, q.error_message) for q in t.partitions])
            for t in r.responses] == [
        ("missing", [(0, E.unknown_topic_or_partition, "This server does not host this topic-partition.")]),
        ("orders", [(7, E.unknown_topic_or_partition, "This server does not host this topic-partition.")])]


def test_alter_errors_of_the_group():
    c = empty_group()
    assert alter(c, group="", orders_0=1).error_code == E.invalid_group_id
    r = alter(c, group="nope", orders_0=1)
    assert (r.error_code, r.error_message) == (E.group_id_not_found, "Group nope not found.")


def test_alter_reports_the_share_coordinator_refusal():
    c = empty_group()
    c.soft_state["share.persister"].fail_with = E.coordinator_load_in_progress
    r = alter(c, orders_1=5)
    assert r.responses[0].partitions[0].error_code == E.coordinator_load_in_progress


def test_alter_a_subscribed_topic_never_initialised_kip():
    # a topic the group never consumed gets state at the given offset
    c = empty_group("kip")
    assert alter(c, payments_1=7).error_code == E.none
    tid = c.cluster.topic_id("payments")
    assert c.groups["g"].state_metadata.partitions()[tid] == frozenset({1})
    assert summary(c, "payments", 1).start_offset == 7


# -- DeleteShareGroupOffsets -----------------------------------------------------------------------

def test_delete_offsets_of_a_non_empty_group_is_refused():
    c = coord()
    join(c, M1)
    r = delete_offsets(c, "orders")
    assert (r.error_code, r.error_message) == (E.non_empty_group, "The group is not empty.")


def test_delete_offsets_of_an_empty_group_forgets_whole_topics():
    c = empty_group()
    p = c.soft_state["share.persister"]
    tid = c.cluster.topic_id("orders")
    before = c.position
    r = delete_offsets(c, "orders", "payments", "missing")
    assert r.error_code == E.none
    assert sorted((t.topic_name, t.error_code) for t in r.responses) == [
        ("missing", E.unknown_topic_or_partition), ("orders", E.none), ("payments", E.unknown_topic_or_partition)]
    assert [call[3] for call in p.calls if call[0] == "delete"] == [0, 1, 2]
    assert not any(has_state(c, "orders", i) for i in range(3))
    sm = c.groups["g"].state_metadata
    assert not sm.initialized and not sm.deleting
    # record 15 marks the topic deleting, then forgets it
    assert written(c, before) == ["ShareGroupStatePartitionMetadata", "ShareGroupStatePartitionMetadata"]
    assert c.log.entry_at(before).record.value.deleting_topics[0].topic_id == tid
    assert_reload_equal(c)


def test_delete_offsets_errors_and_failures():
    c = empty_group()
    assert delete_offsets(c, "orders", group="").error_code == E.invalid_group_id
    assert delete_offsets(c, "orders", group="nope").error_code == E.group_id_not_found
    c.soft_state["share.persister"].fail_with = E.coordinator_load_in_progress
    r = delete_offsets(c, "orders")
    assert [(t.topic_name, t.error_code) for t in r.responses] == [("orders", E.coordinator_load_in_progress)]
    # the topic stays "deleting" until a delete succeeds
    assert c.groups["g"].state_metadata.deleting == {c.cluster.topic_id("orders"): "orders"}
    c.soft_state["share.persister"].fail_with = E.none
    assert delete_offsets(c, "orders").responses[0].error_code == E.none
    assert not c.groups["g"].state_metadata.deleting


# -- kgroup.admin.Admin ------------------------------------------------------------------------------

def test_admin_describe_list_and_delete_share_groups():
    c = coord("kip")
    join(c, M1)
    admin = Admin(c)
    result = admin.describe_share_groups(["g", "nope"])
    d = result.described_groups()["g"].get()
    assert (d.group_id, d.group_state, d.group_epoch, d.target_assignment_epoch, d.partition_assignor) == \
        ("g", "Stable", FIRST, FIRST, "simple")
    (m,) = d.members
    assert (m.member_id, m.client_id, m.member_epoch) == (M1, "share-consumer", FIRST)
    assert m.assignment == [TopicPartition("orders", p) for p in range(3)]
    with pytest.raises(KafkaException):
        result.all().get()
    assert admin.list_share_groups() == [{"group_id": "g", "protocol_type": "share", "state": "Stable", "type": "share"}]
    assert admin.delete_share_groups(["g"]) == {"g": E.non_empty_group}
    hb(c, M1, -1)
    assert admin.delete_share_groups(["g"]) == {"g": E.none}
    assert admin.list_share_groups() == []


def test_admin_list_alter_delete_share_group_offsets():
    c = empty_group()
    c.cluster.set_end_offset("orders", 1, 50)
    admin = Admin(c)
    assert admin.alter_share_group_offsets("g", {TopicPartition("orders", 1): 20}) == {TopicPartition("orders", 1): E.none}
    # the draft KIP's Map<TopicPartition, OffsetAndMetadata> is accepted too
    from kgroup.admin import OffsetAndMetadata
    assert admin.alter_share_group_offsets("g", {TopicPartition("orders", 2): OffsetAndMetadata(0)}) == {
        TopicPartition("orders", 2): E.none}
    listed = admin.list_share_group_offsets("g")
    info = listed.partitions_to_offset_info("g").get()
    # the reset's snapshot has leader epoch 0 and, having a start offset, a delivery-complete count
    # of 0 (Kafka 4.4.0's ShareGroupOffset.fromRequest), so the lag is known: 50 - 20 - 0
    assert info[TopicPartition("orders", 1)] == SharePartitionOffsetInfo(20, 0, 30)
    assert info[TopicPartition("orders", 0)] is None
    oam = listed.partitions_to_offset_and_metadata("g").get()
    assert oam[TopicPartition("orders", 1)].offset == 20
    some = admin.list_share_group_offsets({"g": ListShareGroupOffsetsSpec([TopicPartition("orders", 1)])})
    assert list(some.all().get()["g"]) == [TopicPartition("orders", 1)]
    assert admin.delete_share_group_offsets("g", ["orders"]) == {"orders": E.none}
    join(c, M2)
    assert admin.alter_share_group_offsets("g", {TopicPartition("orders", 1): 0}) == E.non_empty_group
    assert admin.delete_share_group_offsets("g", ["orders"]) == E.non_empty_group


def test_admin_reset_share_group_offsets():
    # kafka-share-groups.sh --reset-offsets --to-earliest/--to-latest/--to-datetime/--to-offset, --dry-run,
    # against the partition's log (log start offset moved by DeleteRecords)
    c = empty_group()
    c.cluster.produce("orders", 0, [b"v%d" % i for i in range(10)], timestamp=[1000 + 100 * i for i in range(10)])
    c.cluster.delete_records("orders", 0, 3)
    admin = Admin(c)
    tp = TopicPartition("orders", 0)
    assert admin.reset_share_group_offsets("g", [tp], to_earliest=True, dry_run=True) == {tp: 3}
    assert admin.reset_share_group_offsets("g", [tp], to_latest=True, dry_run=True) == {tp: 10}
    assert admin.reset_share_group_offsets("g", [tp], to_datetime=1450, dry_run=True) == {tp: 5}
    assert admin.reset_share_group_offsets("g", [tp], to_datetime=99_999, dry_run=True) == {tp: 10}
    assert admin.reset_share_group_offsets("g", [tp], to_datetime="1970-01-01T00:00:01.450", dry_run=True) == {tp: 5}
    # an offset outside the log is clamped to it, as the tool does
    assert admin.reset_share_group_offsets("g", [tp], to_offset=1, dry_run=True) == {tp: 3}
    assert admin.reset_share_group_offsets("g", [tp], to_offset=42, dry_run=True) == {tp: 10}
    # a topic name resets every partition
    assert set(admin.reset_share_group_offsets("g", ["orders"], to_latest=True, dry_run=True)) == {
        TopicPartition("orders", p) for p in range(3)}
    assert admin.reset_share_group_offsets("g", [tp], to_datetime=1250) == {tp: E.none}
    assert summary(c, "orders", 0).start_offset == 3
    assert admin.list_share_group_offsets("g").partitions_to_offset_and_metadata("g").get()[tp].offset == 3
    with pytest.raises(ValueError):
        admin.reset_share_group_offsets("g", ["orders"], to_earliest=True, to_latest=True)
    join(c, M1)
    assert admin.reset_share_group_offsets("g", ["orders"], to_latest=True) == E.non_empty_group
    assert describe(c)[0].group_state == "Stable"


# -- in-flight state (the share-partition leader's soft state) ---------------------------------------

def _acquired(c, response) -> list[tuple[int, int, int]]:
    return [(a.first_offset, a.last_offset, a.delivery_count)
            for t in response.responses for p in t.partitions for a in p.acquired_records]


def test_alter_discards_in_flight_records():
    # KIP-932: resetting the SPSO discards the in-flight state; the leader reloads the new state
    from kgroup.groups.share.partition import LEADERS
    from tests.share.partition_testing import fetch_req
    c = empty_group()
    tid = c.cluster.topic_id("orders")
    fetch_req(c, [("orders", 0)], epoch=0)                      # the leader starts at the log end (0)
    c.cluster.produce("orders", 0, [b"a", b"b", b"c", b"d", b"e"])
    assert _acquired(c, fetch_req(c, [("orders", 0)], epoch=1)) == [(0, 4, 1)]
    assert alter(c, orders_0=2).responses[0].partitions[0].error_code == E.none
    assert ("g", tid, 0) not in c.soft_state[LEADERS].partitions
    # the records from the new SPSO are delivered again, as first deliveries
    assert _acquired(c, fetch_req(c, [("orders", 0)], epoch=2)) == [(2, 4, 1)]


def test_delete_group_discards_in_flight_records():
    from kgroup.groups.share.partition import LEADERS
    from tests.share.partition_testing import fetch_req
    c = empty_group()
    fetch_req(c, [("orders", 0)], epoch=0)
    c.cluster.produce("orders", 0, [b"a", b"b"])
    assert _acquired(c, fetch_req(c, [("orders", 0)], epoch=1)) == [(0, 1, 1)]
    assert c.handle(request("DeleteGroups", 2, groups_names=["g"])).results[0].error_code == E.none
    assert not [k for k in c.soft_state[LEADERS].partitions if k[0] == "g"]
    assert not has_state(c, "orders", 0)
