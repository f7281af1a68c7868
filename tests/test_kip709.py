"""KIP-709: batched OffsetFetch (v8+) with per-group errors, and the Admin facade."""
from __future__ import annotations

import pytest

from kgroup import Coordinator, ErrorCode
from kgroup.admin import (Admin, KafkaException, ListConsumerGroupOffsetsOptions, ListConsumerGroupOffsetsSpec,
                          OffsetAndMetadata, TopicPartition)
from kgroup.protocol import request

from kgroup_testing import commit, group_on_partition

HOSTED = set(range(50)) - {7}


@pytest.fixture
def c(cluster):
    c = Coordinator(cluster=cluster, hosted_partitions=HOSTED)
    commit(c, "orders-app", {("orders", 0): 10, ("orders", 1): 11})
    commit(c, "billing", {("payments", 0): 20})
    return c


def by_group(response):
    return {g.group_id: g for g in response.groups}


@pytest.mark.parametrize("version", [8, 9])
def test_several_groups_in_one_request(c, version):
    r = c.handle(request("OffsetFetch", version, groups=[
        {"group_id": "orders-app", "topics": [{"name": "orders", "partition_indexes": [0, 1]}]},
        {"group_id": "billing", "topics": [{"name": "payments", "partition_indexes": [0]}]},
    ]))
    g = by_group(r)
    assert [p.committed_offset for p in g["orders-app"].topics[0].partitions] == [10, 11]
    assert [p.committed_offset for p in g["billing"].topics[0].partitions] == [20]
    assert {x.error_code for x in r.groups} == {ErrorCode.none}


def test_an_erroring_group_does_not_hide_the_others(c):
    bad = group_on_partition(7)  # this coordinator does not lead partition 7
    r = c.handle(request("OffsetFetch", 8, groups=[
        {"group_id": "orders-app", "topics": None},
        {"group_id": bad, "topics": [{"name": "orders", "partition_indexes": [0]}]},
        {"group_id": "billing", "topics": None},
    ]))
    g = by_group(r)
    assert [x.group_id for x in r.groups] == ["orders-app", bad, "billing"]  # request order kept
    assert g[bad].error_code == ErrorCode.not_coordinator and g[bad].topics == ()
    assert g["orders-app"].error_code == ErrorCode.none
    assert {(t.name, p.partition_index, p.committed_offset) for t in g["orders-app"].topics for p in t.partitions} == \
        {("orders", 0, 10), ("orders", 1, 11)}
    assert g["billing"].topics[0].partitions[0].committed_offset == 20


def test_null_topics_means_all_partitions(c):
    r = c.handle(request("OffsetFetch", 8, groups=[{"group_id": "orders-app", "topics": None}]))
    (g,) = r.groups
    assert sorted((t.name, p.partition_index) for t in g.topics for p in t.partitions) == [("orders", 0), ("orders", 1)]


def test_unknown_group_among_known_ones_answers_minus_one_kafka_rule(c):
    r = c.handle(request("OffsetFetch", 8, groups=[
        {"group_id": "nobody", "topics": [{"name": "orders", "partition_indexes": [0]}]},
        {"group_id": "billing", "topics": [{"name": "payments", "partition_indexes": [0]}]}]))
    g = by_group(r)
    assert g["nobody"].error_code == ErrorCode.none
    assert g["nobody"].topics[0].partitions[0].committed_offset == -1
    assert g["billing"].topics[0].partitions[0].committed_offset == 20


@pytest.mark.parametrize("version", [2, 3, 7])
def test_older_versions_single_group_error_is_top_level(c, version):
    bad = group_on_partition(7)
    r = c.handle(request("OffsetFetch", version, group_id=bad, topics=[{"name": "orders", "partition_indexes": [0]}]))
    assert r.error_code == ErrorCode.not_coordinator and r.topics == ()


def test_version_1_puts_the_group_error_on_every_partition(c):
    bad = group_on_partition(7)
    r = c.handle(request("OffsetFetch", 1, group_id=bad, topics=[{"name": "orders", "partition_indexes": [0, 1]}]))
    assert [(p.partition_index, p.error_code, p.committed_offset) for p in r.topics[0].partitions] == \
        [(0, ErrorCode.not_coordinator, -1), (1, ErrorCode.not_coordinator, -1)]


def test_v10_names_topics_by_id(c, cluster):
    r = c.handle(request("OffsetFetch", 10, groups=[
        {"group_id": "orders-app", "topics": [{"topic_id": cluster.topic_id("orders"), "partition_indexes": [1]}]}]))
    (g,) = r.groups
    assert g.topics[0].topic_id == cluster.topic_id("orders")
    assert g.topics[0].partitions[0].committed_offset == 11


# -- the Admin facade -----------------------------------------------------------------

def test_admin_lists_many_groups_in_one_request(c):
    admin = Admin(c)
    before = c.position
    result = admin.list_consumer_group_offsets({
        "orders-app": ListConsumerGroupOffsetsSpec(),
        "billing": ListConsumerGroupOffsetsSpec([TopicPartition("payments", 0), TopicPartition("payments", 1)]),
    })
    assert c.position == before  # a fetch writes nothing
    assert result.partitions_to_offset_and_metadata("orders-app").get() == {
        TopicPartition("orders", 0): OffsetAndMetadata(10, 4, ""), TopicPartition("orders", 1): OffsetAndMetadata(11, 4, "")}
    assert result.partitions_to_offset_and_metadata("billing").get() == {
        TopicPartition("payments", 0): OffsetAndMetadata(20, 4, ""), TopicPartition("payments", 1): None}
    assert set(result.all().get()) == {"orders-app", "billing"}


def test_admin_failing_group_fails_all_but_not_the_others(c):
    bad = group_on_partition(7)
    result = Admin(c).list_consumer_group_offsets({"billing": None, bad: None})
    assert result.partitions_to_offset_and_metadata("billing").get()[TopicPartition("payments", 0)].offset == 20
    with pytest.raises(KafkaException) as e:
        result.partitions_to_offset_and_metadata(bad).get()
    assert e.value.code == ErrorCode.not_coordinator
    with pytest.raises(KafkaException):
        result.all().get()


def test_admin_falls_back_to_one_request_per_group_on_old_versions(c):
    new = Admin(c).list_consumer_group_offsets({"orders-app": None, "billing": None}).all().get()
    old = Admin(c, offset_fetch_version=7).list_consumer_group_offsets({"orders-app": None, "billing": None}).all().get()
    assert new == old


def test_require_stable_reports_pending_transactional_offsets(c):
    c.handle(request("TxnOffsetCommit", 3, transactional_id="tx", group_id="billing", producer_id=1000, producer_epoch=0,
                     generation_id=-1, member_id="", topics=[{"name": "payments", "partitions": [
                         {"partition_index": 0, "committed_offset": 25, "committed_metadata": ""}]}]))
    stable = Admin(c).list_consumer_group_offsets({"billing": None}, ListConsumerGroupOffsetsOptions(require_stable=True))
    with pytest.raises(KafkaException) as e:
        stable.all().get()
    assert e.value.code == ErrorCode.unstable_offset_commit
    # without require_stable the last committed (not pending) offset shows
    plain = Admin(c).list_consumer_group_offsets("billing").partitions_to_offset_and_metadata().get()
    assert plain[TopicPartition("payments", 0)].offset == 20
