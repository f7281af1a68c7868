"""OffsetCommit / OffsetFetch / OffsetDelete / DeleteGroups / ListGroups / expiration,
against Kafka's group coordinator behaviour (the seeds are silent here: rule = kafka)."""
from __future__ import annotations

import pytest

from kgroup import Coordinator, ErrorCode
from kgroup.protocol import request, supported_versions
from kgroup.records import OffsetCommit, GroupMetadata

from kgroup_testing import commit, fetch


def partition_errors(response):
    return {(getattr(t, "name", None) or t.topic_id, p.partition_index): p.error_code for t in response.topics for p in t.partitions}


@pytest.mark.parametrize("version", supported_versions("OffsetCommit"))
def test_standalone_commit_every_version_creates_a_simple_group(coord, version):
    r = commit(coord, "solo", {("orders", 0): 10, ("orders", 1): 11}, version=version)
    assert set(partition_errors(r).values()) == {ErrorCode.none}
    assert {(row["topic"], row["partition"], row["offset"]) for row in coord.offsets_table()} == \
        {("orders", 0, 10), ("orders", 1, 11)}
    # Kafka: a commit without membership makes an empty classic group with no protocol type
    (g,) = coord.groups_table()
    assert (g["group"], g["type"], g["state"]) == ("solo", "classic", "Empty")


# Kafka 4.4.0 (running broker): value v4, with the topic id the metadata held for the name
def test_commit_writes_offset_commit_v4_records_with_the_topic_id_on_the_groups_partition(coord):
    commit(coord, "solo", {("orders", 2): 42}, metadata="m")
    (entry,) = list(coord.log)
    assert entry.partition == coord.partition_for("solo")
    assert isinstance(entry.record, OffsetCommit) and entry.record.version == 4
    v = entry.record.value
    assert (v.offset, v.leader_epoch, v.metadata, v.commit_timestamp) == (42, 4, "m", coord.now())
    assert v.topic_id == coord.cluster.topic_id("orders")


def test_a_commit_for_a_topic_the_cluster_does_not_know_carries_the_zero_topic_id(coord):
    commit(coord, "solo", {("nowhere", 0): 1})
    (entry,) = list(coord.log)
    assert entry.record.version == 4 and entry.record.value.topic_id.int == 0
    assert len(entry.record.encode()[1]) == 24     # the zero id is left out of the tagged fields


def test_commit_with_retention_writes_value_v1_with_expire_timestamp(coord):
    commit(coord, "solo", {("orders", 0): 1}, version=2, retention_ms=60_000)
    (entry,) = list(coord.log)
    assert entry.record.version == 1
    assert entry.record.value.expire_timestamp == coord.now() + 60_000


def test_metadata_too_large_fails_only_that_partition(coord):
    coord2 = Coordinator(cluster=coord.cluster, config={"offset.metadata.max.bytes": 3})
    r = commit(coord2, "g", {("orders", 0): 1}, metadata="abcd")
    assert partition_errors(r) == {("orders", 0): ErrorCode.offset_metadata_too_large}
    assert len(coord2.log) == 0


def test_commit_with_generation_to_unknown_group_is_illegal_generation_before_v9(coord):
    r = commit(coord, "ghost", {("orders", 0): 1}, version=8, generation=3, member_id="m")
    assert set(partition_errors(r).values()) == {ErrorCode.illegal_generation}


def test_commit_with_generation_to_unknown_group_is_group_id_not_found_from_v9(coord):
    r = commit(coord, "ghost", {("orders", 0): 1}, version=9, generation=3, member_id="m")
    assert set(partition_errors(r).values()) == {ErrorCode.group_id_not_found}


def test_commit_with_unknown_member_into_a_simple_group_is_unknown_member_id(coord):
    commit(coord, "g", {("orders", 0): 1})
    r = commit(coord, "g", {("orders", 0): 2}, generation=1, member_id="nobody")
    assert set(partition_errors(r).values()) == {ErrorCode.unknown_member_id}


def test_commit_empty_group_id_is_invalid_group_id(coord):
    r = commit(coord, "", {("orders", 0): 1})
    assert set(partition_errors(r).values()) == {ErrorCode.invalid_group_id}


def test_commit_v10_names_topics_by_id_and_unknown_ids_fail(coord, cluster):
    import uuid
    topics = [{"topic_id": cluster.topic_id("orders"), "partitions": [{"partition_index": 0, "committed_offset": 7, "committed_metadata": ""}]},
              {"topic_id": uuid.UUID(int=99), "partitions": [{"partition_index": 0, "committed_offset": 7, "committed_metadata": ""}]}]
    r = coord.handle(request("OffsetCommit", 10, group_id="g", generation_id_or_member_epoch=-1, member_id="", topics=topics))
    codes = [p.error_code for t in r.topics for p in t.partitions]
    assert codes == [ErrorCode.none, ErrorCode.unknown_topic_id]
    assert coord.offsets_table()[0]["topic"] == "orders"


@pytest.mark.parametrize("version", [1, 2, 5, 6, 7])
def test_single_group_fetch_older_versions(coord, version):
    commit(coord, "g", {("orders", 0): 5, ("orders", 1): 6})
    r = fetch(coord, "g", {"orders": [0, 1, 2]}, version=version)
    got = {(t.name, p.partition_index): p.committed_offset for t in r.topics for p in t.partitions}
    assert got == {("orders", 0): 5, ("orders", 1): 6, ("orders", 2): -1}


def test_fetch_of_unknown_group_answers_minus_one_without_error_kafka_rule(coord):
    r = fetch(coord, "nobody", {"orders": [0]}, version=7)
    assert r.error_code == ErrorCode.none
    assert r.topics[0].partitions[0].committed_offset == -1


def test_fetch_all_with_null_topics(coord):
    commit(coord, "g", {("orders", 2): 5, ("audit", 0): 1})
    r = fetch(coord, "g", None, version=7)
    assert {(t.name, p.partition_index) for t in r.topics for p in t.partitions} == {("orders", 2), ("audit", 0)}


def test_offset_delete_removes_offsets_with_tombstones(coord):
    commit(coord, "g", {("orders", 0): 5, ("orders", 1): 6})
    r = coord.handle(request("OffsetDelete", 0, group_id="g", topics=[{"name": "orders", "partitions": [{"partition_index": 0}]}]))
    assert r.error_code == ErrorCode.none
    assert coord.log.entry_at(len(coord.log) - 1).record.is_tombstone
    assert [(row["topic"], row["partition"]) for row in coord.offsets_table()] == [("orders", 1)]


def test_offset_delete_unknown_group(coord):
    r = coord.handle(request("OffsetDelete", 0, group_id="nope", topics=[]))
    assert r.error_code == ErrorCode.group_id_not_found


def test_delete_groups_writes_offset_and_group_tombstones(coord):
    commit(coord, "g", {("orders", 0): 5})
    commit(coord, "h", {("orders", 0): 5})
    r = coord.handle(request("DeleteGroups", 2, groups_names=["g", "missing"]))
    assert {x.group_id: x.error_code for x in r.results} == {"g": ErrorCode.none, "missing": ErrorCode.group_id_not_found}
    tail = [e.record for e in list(coord.log)[-2:]]
    assert isinstance(tail[0], OffsetCommit) and tail[0].is_tombstone
    assert isinstance(tail[1], GroupMetadata) and tail[1].is_tombstone
    assert [g["group"] for g in coord.groups_table()] == ["h"]


def test_list_groups_filters_by_state_and_type(coord):
    commit(coord, "a", {("orders", 0): 1})
    commit(coord, "b", {("orders", 0): 1})
    r = coord.handle(request("ListGroups", 5, states_filter=["empty"], types_filter=["classic"]))
    assert [(g.group_id, g.group_state, g.group_type) for g in r.groups] == [("a", "Empty", "classic"), ("b", "Empty", "classic")]
    assert coord.handle(request("ListGroups", 5, states_filter=["Stable"])).groups == ()
    assert coord.handle(request("ListGroups", 5, types_filter=["consumer"])).groups == ()
    assert [g.group_id for g in coord.handle(request("ListGroups", 0)).groups] == ["a", "b"]


def test_offsets_expire_after_retention_and_the_empty_group_is_deleted(cluster):
    c = Coordinator(cluster=cluster, config={"offsets.retention.minutes": 1, "offsets.retention.check.interval.ms": 10_000})
    commit(c, "g", {("orders", 0): 5})
    c.advance(50_000)
    assert len(c.offsets_table()) == 1  # 50 s < 1 min
    written = c.advance(20_000)
    assert [type(e.record).__name__ for e in written] == ["OffsetCommit", "GroupMetadata"]
    assert all(e.record.is_tombstone for e in written)
    assert c.offsets_table() == [] and c.groups_table() == []


def test_explicit_expire_timestamp_wins_over_retention_config(cluster):
    c = Coordinator(cluster=cluster, config={"offsets.retention.check.interval.ms": 1000})
    commit(c, "g", {("orders", 0): 5}, version=2, retention_ms=5_000)
    c.advance(4_000)
    assert c.offsets_table()
    c.advance(2_000)
    assert c.offsets_table() == []


def test_deleting_a_topic_deletes_its_offsets_in_every_group(coord):
    # Kafka's onPartitionsDeleted (a metadata delta deleting a topic): a tombstone per committed
    # offset of the topic, in every group led here, before the next request is served.
    commit(coord, "g1", {("orders", 0): 5, ("orders", 2): 7, ("payments", 0): 3})
    commit(coord, "g2", {("orders", 1): 9})
    end = len(coord.log)
    coord.cluster.delete_topic("orders")
    r = fetch(coord, "g1", {"payments": [0]})
    assert r.topics[0].partitions[0].committed_offset == 3
    written = [(e.record.key.group, e.record.key.topic, e.record.key.partition, e.record.value)
               for e in list(coord.log)[end:]]
    assert sorted(written) == [("g1", "orders", 0, None), ("g1", "orders", 2, None), ("g2", "orders", 1, None)]
    assert sorted(coord.offsets.store.group_offsets("g1")) == [("payments", 0)]
    assert "g2" not in coord.offsets.store.committed
    coord.advance(1)   # noticed once: nothing more is written
    assert len(coord.log) == end + 3
