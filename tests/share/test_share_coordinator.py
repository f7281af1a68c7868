"""The share coordinator (KIP-932 durable share-partition state, `__share_group_state`).

The seed draft only says what the durable state holds (SPSO, non-Acquired states, delivery
counts); the APIs, their validation and the records follow Kafka: ShareCoordinatorShard /
ShareCoordinatorService and their tests (ShareCoordinatorShardTest) are the oracle."""
from __future__ import annotations

import uuid

import pytest

from kgroup import Cluster, Coordinator, ErrorCode
from kgroup.groups.share.coordinator import (NEGATIVE_PARTITION_ID, READ_UNINITIALIZED_SHARE_PARTITION,
                                             WRITE_UNINITIALIZED_SHARE_PARTITION, SharePartitionKey,
                                             share_coordinator)
from kgroup.groups.share.persister import (CoordinatorPersister, DeliveryState, PartitionState,
                                           PartitionSummary, StateBatch)
from kgroup.groups.share.state_batches import Batch
from kgroup.log import share_state_partition_for
from kgroup.protocol import request
from kgroup.records import ShareSnapshot, ShareUpdate, decode_record

E = ErrorCode
G = "group1"
FENCED_LEADER = "The leader epoch in the request is older than the epoch on the broker."
FENCED_STATE = "The share coordinator rejected the request because the share-group state epoch did not match."
UNKNOWN_TP = "This server does not host this topic-partition."


def coord(**config) -> Coordinator:
    return Coordinator(cluster=Cluster({"orders": 3, "payments": 2}, seed=7), config=config or None)


def tid(c: Coordinator, topic: str = "orders") -> uuid.UUID:
    return c.cluster.topic_id(topic)


def batch(first, last, state, count) -> dict:
    return {"first_offset": first, "last_offset": last, "delivery_state": state, "delivery_count": count}


def one(response):
    """The single partition result of a one-partition response."""
    (result,) = response.results
    (p,) = result.partitions
    return p


def init(c, partition=0, *, state_epoch=0, start_offset=0, topic_id=None, group=G):
    return c.handle(request("InitializeShareGroupState", 0, group_id=group, topics=[{
        "topic_id": tid(c) if topic_id is None else topic_id,
        "partitions": [{"partition": partition, "state_epoch": state_epoch, "start_offset": start_offset}]}]))


def write(c, partition=0, *, batches=(), start_offset=-1, leader_epoch=0, state_epoch=0, topic_id=None, group=G,
          delivery_complete_count=-1, version=1):
    p = {"partition": partition, "state_epoch": state_epoch, "leader_epoch": leader_epoch,
         "start_offset": start_offset, "state_batches": list(batches)}
    if version >= 1:
        p["delivery_complete_count"] = delivery_complete_count
    return c.handle(request("WriteShareGroupState", version, group_id=group, topics=[{
        "topic_id": tid(c) if topic_id is None else topic_id, "partitions": [p]}]))


def read(c, partition=0, *, leader_epoch=0, topic_id=None, group=G):
    return c.handle(request("ReadShareGroupState", 0, group_id=group, topics=[{
        "topic_id": tid(c) if topic_id is None else topic_id,
        "partitions": [{"partition": partition, "leader_epoch": leader_epoch}]}]))


def summary(c, partition=0, *, leader_epoch=0, topic_id=None, group=G, version=1):
    return c.handle(request("ReadShareGroupStateSummary", version, group_id=group, topics=[{
        "topic_id": tid(c) if topic_id is None else topic_id,
        "partitions": [{"partition": partition, "leader_epoch": leader_epoch}]}]))


def delete(c, partition=0, *, topic_id=None, group=G):
    return c.handle(request("DeleteShareGroupState", 0, group_id=group, topics=[{
        "topic_id": tid(c) if topic_id is None else topic_id, "partitions": [{"partition": partition}]}]))


def records(c, start=0):
    return [e.record for e in list(c.share_state_log)[start:]]


def state(c, partition=0, topic="orders", group=G):
    return share_coordinator(c).state(group, tid(c, topic), partition)


def ok(p):
    assert (p.error_code, p.error_message) == (E.none, None)
    return p


# -- InitializeShareGroupState ------------------------------------------------------------

def test_initialize_writes_a_snapshot_with_no_batches_and_leader_epoch_0(coord=coord):
    # ShareCoordinatorShardTest.testInitializeStateSuccess / ShareGroupOffset.fromRequest(Initialize...);
    # leader epoch 0 as Kafka 4.4.0 (running broker) writes it, not -1 as read from older code
    c = coord()
    ok(one(init(c, start_offset=10, state_epoch=5)))
    (rec,) = records(c)
    assert isinstance(rec, ShareSnapshot)
    v = rec.value
    assert (v.snapshot_epoch, v.state_epoch, v.leader_epoch, v.start_offset, v.state_batches) == (0, 5, 0, 10, [])
    assert v.delivery_complete_count == 0   # -1 only while there is no start offset
    assert v.create_timestamp == v.write_timestamp == c.now()
    assert (rec.key.group_id, rec.key.topic_id, rec.key.partition) == (G, tid(c), 0)
    assert c.position == 0  # nothing in __consumer_offsets
    assert share_coordinator(c).state_epochs[SharePartitionKey(G, tid(c), 0)] == 5


def test_record_lands_on_the_partition_kafka_picks_for_group_topic_partition():
    # ShareCoordinatorService.partitionFor: abs("group:topicId:partition".hashCode()) % 50
    c = coord()
    for p in range(3):
        ok(one(init(c, p)))
    for entry, p in zip(c.share_state_log, range(3)):
        assert entry.partition == share_state_partition_for(G, tid(c), p, 50)
    assert len({e.partition for e in c.share_state_log}) > 1  # not all on one partition


def test_state_topic_partitions_follow_the_config():
    c = coord(**{"share.coordinator.state.topic.num.partitions": 3})
    assert c.share_state_log.num_partitions == 3
    ok(one(init(c, 1)))
    assert c.share_state_log.entry_at(0).partition == share_state_partition_for(G, tid(c), 1, 3)


def test_reinitialize_with_a_bumped_state_epoch_starts_over():
    # an admin reset (AlterShareGroupOffsets): a new snapshot, epoch+1, previous batches dropped
    c = coord()
    init(c, start_offset=0)
    ok(one(write(c, batches=[batch(0, 9, 2, 1)])))
    ok(one(init(c, start_offset=50, state_epoch=1)))
    rec = records(c)[-1]
    assert isinstance(rec, ShareSnapshot)
    assert (rec.value.snapshot_epoch, rec.value.state_epoch, rec.value.start_offset, rec.value.state_batches) == \
        (1, 1, 50, [])
    s = state(c)
    assert (s.state_epoch, s.start_offset, s.state_batches) == (1, 50, ())


def test_initialize_with_an_older_state_epoch_is_fenced():
    # ShareCoordinatorShardTest.testInitializeStateInvalidRequestData (state epoch part)
    c = coord()
    init(c, state_epoch=5)
    p = one(init(c, state_epoch=0))
    assert (p.error_code, p.error_message) == (E.fenced_state_epoch, FENCED_STATE)
    assert len(c.share_state_log) == 1


def test_initialize_negative_partition_is_an_invalid_request():
    c = coord()
    p = one(init(c, -1))
    assert (p.error_code, p.error_message, p.partition) == (E.invalid_request, NEGATIVE_PARTITION_ID, -1)
    assert len(c.share_state_log) == 0


@pytest.mark.parametrize("api", [init, write, read, summary, delete])
def test_share_partition_of_a_deleted_topic_is_unknown(api):
    # the shard's metadata-image check (testWriteNullMetadataImage, testDeleteTopicIdNonExistentInMetadataImage...)
    c = coord()
    t = tid(c)
    init(c, 0)
    n = len(c.share_state_log)
    c.cluster.delete_topic("orders")
    p = one(api(c, 0, topic_id=t))
    assert (p.error_code, p.error_message) == (E.unknown_topic_or_partition, UNKNOWN_TP)
    assert len(c.share_state_log) == n


def test_unknown_partition_of_a_known_topic_initialize():
    c = coord()
    p = one(init(c, 3))
    assert (p.error_code, p.error_message) == (E.unknown_topic_or_partition, UNKNOWN_TP)


@pytest.mark.parametrize("api", [init, write, read, summary, delete])
def test_negative_partition_is_an_invalid_request_for_every_api(api):
    c = coord()
    init(c, 0)
    p = one(api(c, -1))
    assert (p.error_code, p.error_message) == (E.invalid_request, NEGATIVE_PARTITION_ID)


# -- WriteShareGroupState ------------------------------------------------------------------

def test_write_to_an_uninitialized_share_partition_is_refused():
    # ShareCoordinatorShardTest.testWriteFailsOnUninitializedPartition
    c = coord()
    p = one(write(c, batches=[batch(0, 10, 0, 1)]))
    assert (p.error_code, p.error_message) == (E.invalid_request, WRITE_UNINITIALIZED_SHARE_PARTITION)
    assert len(c.share_state_log) == 0


def test_write_after_initialize_is_a_share_update_and_batches_combine():
    # ShareCoordinatorShardTest.testSubsequentWriteStateSnapshotEpochUpdatesSuccessfully
    c = coord()
    init(c)
    # "Read is necessary before write!"; at leader epoch 0 it writes nothing: the snapshot holds 0
    read(c, leader_epoch=0)
    ok(one(write(c, start_offset=0, batches=[batch(0, 10, 0, 1)], delivery_complete_count=11)))
    ok(one(write(c, start_offset=0, batches=[batch(11, 20, 0, 1)], delivery_complete_count=21)))
    up1, up2 = records(c)[1:]
    assert isinstance(up1, ShareUpdate) and isinstance(up2, ShareUpdate)
    assert (up2.value.snapshot_epoch, up2.value.leader_epoch, up2.value.start_offset) == (0, 0, 0)
    assert [(b.first_offset, b.last_offset) for b in up2.value.state_batches] == [(11, 20)]
    s = state(c)
    assert s.state_batches == (Batch(0, 20, 0, 1),)  # same state: one batch
    assert (s.snapshot_epoch, s.leader_epoch, s.delivery_complete_count) == (0, 0, 21)


def test_write_update_merges_only_its_own_batches_and_keeps_minus_one_start_offset():
    # generateShareStateRecord: an update carries the request's batches (merged among
    # themselves) and start offset as given; replay folds them in
    c = coord()
    init(c, start_offset=100)
    write(c, batches=[batch(100, 104, 0, 1), batch(103, 109, 2, 1)])
    up = records(c)[-1]
    assert up.value.start_offset == -1
    assert [(b.first_offset, b.last_offset, b.delivery_state) for b in up.value.state_batches] == \
        [(100, 102, 0), (103, 109, 2)]
    assert state(c).start_offset == 100


def test_write_with_an_older_leader_epoch_is_fenced():
    # ShareCoordinatorShardTest.testWriteStateFencedLeaderEpochError
    c = coord()
    init(c)
    ok(one(read(c, leader_epoch=1)))
    ok(one(write(c, leader_epoch=1, batches=[batch(0, 10, 0, 1)])))
    n = len(c.share_state_log)
    p = one(write(c, leader_epoch=0, batches=[batch(0, 10, 0, 1)]))
    assert (p.error_code, p.error_message) == (E.fenced_leader_epoch, FENCED_LEADER)
    assert len(c.share_state_log) == n
    assert share_coordinator(c).leader_epochs[SharePartitionKey(G, tid(c), 0)] == 1


def test_write_with_an_older_state_epoch_is_fenced():
    # ShareCoordinatorShardTest.testWriteStateFencedStateEpochError
    c = coord()
    init(c, state_epoch=1)
    p = one(write(c, state_epoch=0, leader_epoch=5, batches=[batch(11, 20, 0, 1)]))
    assert (p.error_code, p.error_message) == (E.fenced_state_epoch, FENCED_STATE)
    sc = share_coordinator(c)
    key = SharePartitionKey(G, tid(c), 0)
    assert sc.state_epochs[key] == 1 and sc.leader_epochs[key] == 0   # the initial snapshot's


def test_minus_one_epochs_are_not_fenced():
    # -1 means "not given": neither epoch is checked (maybeGetWriteStateError)
    c = coord()
    init(c, state_epoch=3)
    read(c, leader_epoch=4)
    ok(one(write(c, leader_epoch=-1, state_epoch=-1, batches=[batch(0, 0, 2, 1)])))
    assert state(c).leader_epoch == 4


def test_a_write_never_moves_the_leader_epoch():
    # generateShareStateRecord(..., updateLeaderEpoch=false): only a read by a new leader does
    c = coord()
    init(c)
    read(c, leader_epoch=2)
    ok(one(write(c, leader_epoch=7, batches=[batch(0, 0, 2, 1)])))
    assert records(c)[-1].value.leader_epoch == 2
    assert state(c).leader_epoch == 2
    ok(one(write(c, leader_epoch=2)))  # so the leader that read is not fenced by its own higher write


def test_write_v0_has_no_delivery_complete_count():
    c = coord()
    init(c)
    ok(one(write(c, version=0, batches=[batch(0, 3, 2, 1)])))
    assert records(c)[-1].value.delivery_complete_count == -1


# -- ReadShareGroupState -------------------------------------------------------------------

def test_read_of_an_uninitialized_share_partition_is_refused():
    # ShareCoordinatorShardTest.testReadFailsOnUninitializedPartition
    c = coord()
    p = one(read(c, leader_epoch=1))
    assert (p.error_code, p.error_message) == (E.invalid_request, READ_UNINITIALIZED_SHARE_PARTITION)
    assert len(c.share_state_log) == 0


def test_read_returns_the_state_and_a_new_leader_epoch_is_written():
    # testReadStateSuccess / testReadStateLeaderEpochUpdateSuccess: a newer leader fences older ones
    c = coord()
    init(c, start_offset=7, state_epoch=2)
    p = ok(one(read(c, leader_epoch=2)))
    assert (p.state_epoch, p.start_offset, p.state_batches) == (2, 7, ())
    up = records(c)[-1]
    assert isinstance(up, ShareUpdate)
    assert (up.value.leader_epoch, up.value.start_offset, up.value.state_batches, up.value.snapshot_epoch) == \
        (2, 7, [], 0)
    n = len(c.share_state_log)
    ok(one(read(c, leader_epoch=2)))   # same epoch: nothing written
    ok(one(read(c, leader_epoch=-1)))  # -1: nothing written, not fenced
    assert len(c.share_state_log) == n
    p = one(read(c, leader_epoch=1))
    assert (p.error_code, p.error_message) == (E.fenced_leader_epoch, FENCED_LEADER)


def test_read_returns_combined_batches():
    c = coord()
    init(c, start_offset=0)
    write(c, batches=[batch(0, 10, 0, 1)])
    p = ok(one(read(c, leader_epoch=0)))
    assert [(b.first_offset, b.last_offset, b.delivery_state, b.delivery_count) for b in p.state_batches] == \
        [(0, 10, 0, 1)]


# -- ReadShareGroupStateSummary --------------------------------------------------------------

def test_summary_has_the_epochs_and_start_offset_and_writes_nothing():
    # testReadStateSummarySuccess
    c = coord()
    init(c, start_offset=0)
    read(c, leader_epoch=0)
    write(c, start_offset=0, batches=[batch(0, 10, 0, 1)], delivery_complete_count=0)
    n = len(c.share_state_log)
    p = ok(one(summary(c, leader_epoch=1)))
    assert (p.start_offset, p.delivery_complete_count, p.leader_epoch, p.state_epoch) == (0, 0, 0, 0)
    assert len(c.share_state_log) == n


def test_summary_of_an_unknown_share_partition_is_uninitialized():
    c = coord()
    p = ok(one(summary(c)))
    # PartitionFactory: UNINITIALIZED_START_OFFSET, DEFAULT_STATE_EPOCH, DEFAULT_LEADER_EPOCH, -1
    assert (p.start_offset, p.state_epoch, p.leader_epoch, p.delivery_complete_count) == (-1, 0, 0, -1)


def test_summary_v0_has_no_delivery_complete_count():
    c = coord()
    init(c, start_offset=4)
    p = ok(one(summary(c, version=0)))
    assert p.start_offset == 4 and not hasattr(p, "delivery_complete_count")


# -- DeleteShareGroupState -------------------------------------------------------------------

def test_delete_writes_a_share_snapshot_tombstone_and_forgets_everything():
    # testDeleteStateSuccess: newShareStateTombstoneRecord uses the ShareSnapshot key
    c = coord()
    init(c)
    write(c, leader_epoch=3, batches=[batch(0, 1, 2, 1)])
    ok(one(delete(c)))
    rec = records(c)[-1]
    assert isinstance(rec, ShareSnapshot) and rec.is_tombstone
    sc = share_coordinator(c)
    key = SharePartitionKey(G, tid(c), 0)
    assert all(key not in m for m in (sc.states, sc.leader_epochs, sc.state_epochs, sc.update_counts))
    p = one(read(c))
    assert p.error_code == E.invalid_request  # uninitialized again


def test_delete_of_an_unknown_share_partition_succeeds_and_writes_nothing():
    # testDeleteStateUninitializedRecord
    c = coord()
    ok(one(delete(c)))
    assert len(c.share_state_log) == 0


# -- the service: request shape, availability, hosting --------------------------------------

@pytest.mark.parametrize("api", ["InitializeShareGroupState", "ReadShareGroupState", "WriteShareGroupState",
                                 "DeleteShareGroupState", "ReadShareGroupStateSummary"])
def test_empty_group_id_or_topics_or_partitions_get_an_empty_response(api):
    # ShareCoordinatorService: "Send an empty response if ... is empty"
    c = coord()
    assert c.handle(request(api, 0, group_id="", topics=[{"topic_id": tid(c), "partitions": [{"partition": 0}]}])) \
        .results == ()
    assert c.handle(request(api, 0, group_id=G, topics=[])).results == ()
    assert c.handle(request(api, 0, group_id=G, topics=[{"topic_id": tid(c), "partitions": []}])).results == ()
    assert len(c.share_state_log) == 0


def test_inactive_share_coordinator_answers_coordinator_not_available_for_every_partition():
    c = coord()
    share_coordinator(c).active = False
    r = c.handle(request("WriteShareGroupState", 1, group_id=G, topics=[
        {"topic_id": tid(c), "partitions": [{"partition": 0, "state_epoch": 0, "leader_epoch": 0,
                                             "start_offset": 0, "delivery_complete_count": -1,
                                             "state_batches": []}]},
        {"topic_id": tid(c, "payments"), "partitions": [{"partition": 1, "state_epoch": 0, "leader_epoch": 0,
                                                          "start_offset": 0, "delivery_complete_count": -1,
                                                          "state_batches": []}]}]))
    answers = [(res.topic_id, p.partition, p.error_code, p.error_message) for res in r.results for p in res.partitions]
    assert answers == [(tid(c), 0, E.coordinator_not_available, "Share coordinator is not available."),
                       (tid(c, "payments"), 1, E.coordinator_not_available, "Share coordinator is not available.")]


def test_share_partition_on_a_state_partition_not_led_here_gets_not_coordinator():
    c = coord()
    sc = share_coordinator(c)
    home = sc.partition_for(G, tid(c), 0)
    sc.hosted_partitions = frozenset(range(50)) - {home}
    p = one(init(c, 0))
    assert p.error_code == E.not_coordinator
    assert len(c.share_state_log) == 0


def test_one_request_many_share_partitions_each_decided_in_turn():
    # the service splits a request into one shard operation per share-partition
    c = coord()
    r = c.handle(request("InitializeShareGroupState", 0, group_id=G, topics=[
        {"topic_id": tid(c), "partitions": [{"partition": p, "state_epoch": 0, "start_offset": 5} for p in (0, 1, 2)]},
        {"topic_id": tid(c, "payments"), "partitions": [{"partition": 9, "state_epoch": 0, "start_offset": 0}]}]))
    got = [(res.topic_id, p.partition, p.error_code) for res in r.results for p in res.partitions]
    assert got == [(tid(c), 0, E.none), (tid(c), 1, E.none), (tid(c), 2, E.none),
                   (tid(c, "payments"), 9, E.unknown_topic_or_partition)]
    assert len(c.share_state_log) == 3
    # the same share-partition twice in one request: the second sees the first applied
    r = c.handle(request("InitializeShareGroupState", 0, group_id="g2", topics=[
        {"topic_id": tid(c), "partitions": [{"partition": 0, "state_epoch": 4, "start_offset": 0},
                                            {"partition": 0, "state_epoch": 3, "start_offset": 0}]}]))
    assert [p.error_code for p in r.results[0].partitions] == [E.none, E.fenced_state_epoch]


def test_share_state_records_never_touch_consumer_offsets():
    c = coord()
    init(c)
    write(c, batches=[batch(0, 0, 2, 1)])
    read(c, leader_epoch=3)
    assert len(c.log) == 0 and len(c.share_state_log) == 3
    assert all(e.record.TOPIC == "__share_group_state" for e in c.share_state_log)


# -- snapshotting -------------------------------------------------------------------------

def _kinds(c, start=0):
    return ["S" if isinstance(r, ShareSnapshot) else "U" for r in records(c, start)]


def test_snapshot_after_records_per_snapshot_updates():
    # share.coordinator.snapshot.update.records.per.snapshot=3: three ShareUpdates, then the
    # next write is a ShareSnapshot of the whole state (generateShareStateRecord)
    c = coord(**{"share.coordinator.snapshot.update.records.per.snapshot": 3})
    init(c, start_offset=0)
    for i in range(12):
        c.advance(10)
        ok(one(write(c, batches=[batch(i, i, 2, 1)], delivery_complete_count=i + 1)))
    assert _kinds(c) == list("S" "UUUS" "UUUS" "UUUS")
    snaps = [r for r in records(c) if isinstance(r, ShareSnapshot)]
    assert [s.value.snapshot_epoch for s in snaps] == [0, 1, 2, 3]
    # a snapshot is the complete state: offsets 0..7 acknowledged in one batch
    assert [(b.first_offset, b.last_offset, b.delivery_state) for b in snaps[2].value.state_batches] == [(0, 7, 2)]
    assert snaps[2].value.delivery_complete_count == 8
    assert snaps[2].value.create_timestamp == snaps[2].value.write_timestamp == snaps[0].value.create_timestamp + 80
    # updates carry the snapshot epoch they build on
    assert {r.value.snapshot_epoch for r in records(c)[-4:-1]} == {2}
    assert share_coordinator(c).update_counts[SharePartitionKey(G, tid(c), 0)] == 0


def test_default_is_a_snapshot_after_500_updates():
    c = coord()
    init(c)
    for i in range(501):
        write(c, batches=[batch(i, i, 2, 1)])
    kinds = _kinds(c)
    assert kinds[0] == "S" and kinds[1:501] == ["U"] * 500 and kinds[501] == "S"
    assert state(c).state_batches == (Batch(0, 500, 2, 1),)


def test_records_per_snapshot_zero_snapshots_every_write_and_keeps_unacknowledged_batches():
    # ShareCoordinatorShardTest.testNonSequentialBatchUpdates: batch 2 is not lost when the
    # SPSO moves past batch 1 and batch 3 is acknowledged
    c = coord(**{"share.coordinator.snapshot.update.records.per.snapshot": 0})
    init(c)
    read(c, leader_epoch=0)
    write(c, start_offset=0, batches=[batch(0, 10, 0, 1)])
    write(c, start_offset=100, batches=[batch(100, 109, 1, 1), batch(110, 119, 1, 2), batch(120, 129, 1, 0)])
    assert records(c)[-1].value.snapshot_epoch == 2   # the read at leader epoch 0 wrote nothing
    write(c, start_offset=-1, batches=[batch(100, 109, 2, 1)])
    write(c, start_offset=110, batches=[batch(120, 129, 2, 1)])
    assert _kinds(c) == ["S"] * 5
    last = records(c)[-1].value
    assert (last.snapshot_epoch, last.start_offset, last.leader_epoch, last.state_epoch) == (4, 110, 0, 0)
    assert [(b.first_offset, b.last_offset, b.delivery_state, b.delivery_count) for b in last.state_batches] == \
        [(110, 119, 1, 2), (120, 129, 2, 1)]


# -- reload, look-back, bytes --------------------------------------------------------------

def _busy(c):
    init(c, 0, start_offset=0)
    init(c, 1, start_offset=5, state_epoch=2)
    read(c, 0, leader_epoch=1)
    for i in range(6):
        write(c, 0, leader_epoch=1, batches=[batch(i * 2, i * 2 + 1, [0, 2, 4][i % 3], 1 + i % 2)],
              start_offset=i if i % 2 else -1, delivery_complete_count=i)
    write(c, 1, leader_epoch=0, state_epoch=2, batches=[batch(5, 9, 4, 3)])
    delete(c, 1)
    init(c, 1, start_offset=9, state_epoch=3)


def _same_state(a, b):
    sa, sb = share_coordinator(a), share_coordinator(b)
    assert sa.states == sb.states
    assert (sa.leader_epochs, sa.state_epochs, sa.update_counts) == (sb.leader_epochs, sb.state_epochs,
                                                                      sb.update_counts)


def test_reload_equals_live_at_every_step():
    c = coord(**{"share.coordinator.snapshot.update.records.per.snapshot": 2})
    _busy(c)
    assert share_coordinator(c).states  # something to compare
    _same_state(Coordinator.load(c.log, share_state_log=c.share_state_log, cluster=c.cluster, config=c.config), c)
    _same_state(Coordinator.load(c.share_state_log, cluster=c.cluster, config=c.config), c)  # the share log alone
    # and every prefix is a state the live coordinator went through
    for n in range(len(c.share_state_log) + 1):
        snap = c.as_of(0, share_position=n)
        replayed = Coordinator(cluster=c.cluster, config=c.config)
        for e in list(c.share_state_log)[:n]:
            replayed._replay(e)
        _same_state(snap, replayed)


def test_reload_then_continue_writes_the_same_records():
    # a failover mid-way: the new coordinator's next decisions equal the old one's
    c = coord(**{"share.coordinator.snapshot.update.records.per.snapshot": 2})
    _busy(c)
    d = Coordinator.load(c.share_state_log, cluster=c.cluster, config=c.config)
    for x in (c, d):
        write(x, 0, leader_epoch=1, batches=[batch(20, 25, 2, 1)])
        write(x, 0, leader_epoch=1, batches=[batch(26, 27, 0, 2)])
        read(x, 0, leader_epoch=4)
    assert [e.record for e in c.share_state_log][-3:] == [e.record for e in d.share_state_log][-3:]


def test_load_from_a_directory_with_both_logs(tmp_path):
    from tests.kgroup_testing import commit
    c = coord()
    commit(c, "offsets-group", {("orders", 0): 5})
    _busy(c)
    c.log.write(tmp_path)
    c.share_state_log.write(tmp_path)
    d = Coordinator.load(tmp_path, cluster=c.cluster)
    _same_state(d, c)
    assert d.offsets_table() == c.offsets_table()
    # segments keep each partition's order (the global order across partitions is by timestamp)
    for part in c.share_state_log.partitions_in_use():
        assert [e.record for e in d.share_state_log.entries(part)] == [e.record for e in c.share_state_log.entries(part)]


def test_load_rejects_a_share_log_with_another_partition_count():
    c = coord()
    init(c)
    with pytest.raises(ValueError, match="share.coordinator.state.topic.num.partitions"):
        Coordinator.load(c.share_state_log, cluster=c.cluster,
                         config={"share.coordinator.state.topic.num.partitions": 10})


def test_as_of_cuts_both_logs_at_the_same_moment():
    from tests.kgroup_testing import commit
    c = coord()
    commit(c, "g0", {("orders", 0): 1})      # __consumer_offsets entry 0
    init(c, 0, start_offset=3)               # share entry 0, after it
    commit(c, "g0", {("orders", 0): 2})      # __consumer_offsets entry 1
    write(c, 0, batches=[batch(3, 4, 2, 1)])  # share entry 1
    assert share_coordinator(c.as_of(0)).states == {}
    assert state(c.as_of(1)).state_batches == ()
    assert state(c.as_of(2)).state_batches == (Batch(3, 4, 2, 1),)
    assert state(c.as_of(1, share_position=2)).state_batches == (Batch(3, 4, 2, 1),)
    assert len(c.as_of(1).share_state_log) == 1
    with pytest.raises(RuntimeError):
        init(c.as_of(1), 2)


def test_records_round_trip_byte_exact():
    c = coord(**{"share.coordinator.snapshot.update.records.per.snapshot": 2})
    _busy(c)
    for e in c.share_state_log:
        rec = decode_record(e.key, e.value, topic="__share_group_state")
        assert rec == e.record
        assert rec.encode() == (e.key, e.value)
    # the key layout: int16 type, string group id, 16-byte uuid, int32 partition
    first = c.share_state_log.entry_at(0)
    assert first.key == (b"\x00\x00" + len(G).to_bytes(2, "big") + G.encode() + tid(c).bytes
                         + (0).to_bytes(4, "big"))


# -- the persister (what the share-partition leader and the group coordinator call) -----------

def test_persister_round_trip():
    c = coord()
    p = CoordinatorPersister(c)
    t = tid(c)
    assert p.read_state(G, t, 0) == PartitionState(E.invalid_request, READ_UNINITIALIZED_SHARE_PARTITION)
    assert p.initialize_state(G, t, 0, state_epoch=0, start_offset=100) == E.none
    assert p.read_state(G, t, 0, leader_epoch=1) == PartitionState(start_offset=100)  # the leader loads
    batches = (StateBatch(100, 104, DeliveryState.ACKNOWLEDGED, 1), StateBatch(105, 105, DeliveryState.ARCHIVED, 5))
    assert p.write_state(G, t, 0, state_epoch=0, leader_epoch=1, start_offset=-1, state_batches=batches) == E.none
    got = p.read_state(G, t, 0, leader_epoch=1)
    assert got == PartitionState(state_epoch=0, start_offset=100, state_batches=batches)
    assert all(isinstance(b.delivery_state, DeliveryState) for b in got.state_batches)
    assert p.write_state(G, t, 0, 0, 1, 105, (), delivery_complete_count=0) == E.none
    assert p.read_summary(G, t, 0) == PartitionSummary(state_epoch=0, leader_epoch=1, start_offset=105,
                                                       delivery_complete_count=0)
    assert p.read_state(G, t, 0, leader_epoch=1).state_batches == (StateBatch(105, 105, DeliveryState.ARCHIVED, 5),)
    # errors come back as codes
    assert p.write_state(G, t, 0, 0, 0, -1, ()) == E.fenced_leader_epoch
    assert p.initialize_state(G, t, 0, state_epoch=-2, start_offset=0) == E.fenced_state_epoch
    assert p.read_state(G, t, 0, leader_epoch=0).error_code == E.fenced_leader_epoch
    assert p.initialize_state("", t, 0, 0, 0) == E.unknown_server_error  # Kafka answers nothing to an empty group id
    # an admin reset: initialize again with a bumped state epoch; the old leader is fenced
    assert p.initialize_state(G, t, 0, state_epoch=1, start_offset=200) == E.none
    assert p.write_state(G, t, 0, state_epoch=0, leader_epoch=1, start_offset=-1, state_batches=()) == \
        E.fenced_state_epoch
    assert p.read_state(G, t, 0, leader_epoch=1) == PartitionState(state_epoch=1, start_offset=200)
    assert p.delete_state(G, t, 0) == E.none
    assert p.read_summary(G, t, 0).start_offset == -1
    # every call was a real request: the records are in __share_group_state
    assert len(c.share_state_log) == 6  # init, read as leader 1, 2 writes, init, tombstone


def test_persister_v0_writes():
    c = coord()
    p = CoordinatorPersister(c, write_version=0, summary_version=0)
    t = tid(c)
    p.initialize_state(G, t, 1, 0, 0)
    assert p.write_state(G, t, 1, 0, 0, 3, (StateBatch(3, 4, DeliveryState.AVAILABLE, 2),),
                         delivery_complete_count=9) == E.none
    assert records(c)[-1].value.delivery_complete_count == -1  # v0 cannot carry it
    # no leader has read it yet: the leader epoch is still the initial snapshot's 0
    assert p.read_summary(G, t, 1) == PartitionSummary(state_epoch=0, leader_epoch=0, start_offset=3)


# -- the KIP's durable-state example ------------------------------------------------------------

ACK, AVAIL = DeliveryState.ACKNOWLEDGED, DeliveryState.AVAILABLE


def test_kip_durable_state_example_table():
    """KIP-932 "Managing durable share-partition state", Examples: the writes the table implies.

    Acquired records are never persisted, so a fetch writes nothing and the durable state is
    the table's cumulative state without its acquired records (their delivery count is
    persisted with their next state change). SPEO is not durable."""
    c = coord()
    p = CoordinatorPersister(c)
    t = tid(c)

    def durable():
        s = p.read_state(G, t, 0, leader_epoch=0)
        return s.start_offset, [(b.first_offset, b.last_offset, b.delivery_state, b.delivery_count)
                                for b in s.state_batches]

    def w(start, *batches):
        assert p.write_state(G, t, 0, 0, 0, start, tuple(StateBatch(*b) for b in batches)) == E.none

    # Starting state of topic-partition with latest offset 100: SPSO=100, SPEO=100
    assert p.initialize_state(G, t, 0, state_epoch=0, start_offset=100) == E.none
    assert durable() == (100, [])  # the first read as leader, at epoch 0: the snapshot has it
    n = len(c.share_state_log)
    # Fetch records 100-109 (acquired): nothing durable
    assert len(c.share_state_log) == n
    # Acknowledge 100-109: SPSO=110
    w(110, (100, 109, ACK, 1))
    assert durable() == (110, [])
    # Fetch records 110-119: nothing durable. Release 110: record 110 (available, delivery count 1)
    w(-1, (110, 110, AVAIL, 1))
    assert durable() == (110, [(110, 110, AVAIL, 1)])
    # Acknowledge 119
    w(-1, (119, 119, ACK, 1))
    assert durable() == (110, [(110, 110, AVAIL, 1), (119, 119, ACK, 1)])
    # Fetch records 110, 120 (acquired, delivery counts 2 and 1): nothing durable
    # Lock timeout elapsed 111, 112: records 111-112 (available, delivery count 1)
    w(-1, (111, 112, AVAIL, 1))
    assert durable() == (110, [(110, 112, AVAIL, 1), (119, 119, ACK, 1)])  # same state: one run
    # Acknowledge 113-118
    w(-1, (113, 118, ACK, 1))
    assert durable() == (110, [(110, 112, AVAIL, 1), (113, 119, ACK, 1)])
    # Fetch records 111, 112 (acquired, delivery count 2): nothing durable
    # Acknowledge 110: SPSO=111
    w(111, (110, 110, ACK, 2))
    assert durable() == (111, [(111, 112, AVAIL, 1), (113, 119, ACK, 1)])
    # Acknowledge 111, 112: SPSO=120 (record 120 stays acquired: not durable)
    w(120, (111, 112, ACK, 2))
    assert durable() == (120, [])
    # the records: the initializing snapshot, then one ShareUpdate per durable change
    # (the initialising snapshot and seven writes: under the default 500)
    assert _kinds(c) == ["S"] + ["U"] * 7
    final = Coordinator.load(c.share_state_log, cluster=c.cluster)
    assert state(final).start_offset == 120 and state(final).state_batches == ()


# -- cold-partition snapshots (ShareCoordinatorShard.snapshotColdPartitions) ------------------

def test_no_cold_snapshot_timer_without_share_state():
    c = coord()
    assert not any(k.startswith("share-coordinator") for k in c.timers.pending())
    p = one(read(c))  # a refused request leaves no state either
    assert p.error_code == E.invalid_request
    assert not any(k.startswith("share-coordinator") for k in c.timers.pending())


def test_cold_partitions_are_snapshotted_once_per_quiet_period():
    # testSnapshotColdPartitionsPartialEligiblePartitions / ...DoesNotPerpetuallySnapshot
    interval = 10_000
    c = coord(**{"share.coordinator.cold.partition.snapshot.interval.ms": interval})
    t0 = c.now()
    init(c, 0, start_offset=1)
    c.advance(6_000)
    init(c, 1, start_offset=2)
    written = c.advance(4_000)  # partition 0 is 10 s old, partition 1 only 4 s
    (rec,) = [e.record for e in written]
    assert isinstance(rec, ShareSnapshot) and rec.key.partition == 0
    assert (rec.value.snapshot_epoch, rec.value.create_timestamp, rec.value.write_timestamp, rec.value.start_offset) \
        == (1, t0, t0 + interval, 1)
    # partition 1 is old now too; while one share-partition has not been re-snapshotted,
    # every old one is (partition 0 a second time)
    written = c.advance(interval)
    assert [(e.record.key.partition, e.record.value.snapshot_epoch) for e in written] == [(0, 2), (1, 1)]
    # every share-partition's last snapshot is a re-snapshot: the system is quiet, nothing more
    assert c.advance(5 * interval) == []
    # updates keep the snapshot's timestamps: still quiet
    read(c, 0, leader_epoch=0)
    assert c.advance(interval) == []
    # a fresh snapshot (here a re-initialisation) makes the share coordinator active again
    init(c, 0, state_epoch=1, start_offset=5)
    assert [e.record.key.partition for e in c.advance(interval)] == [0, 1]


def test_cold_snapshot_timer_comes_back_after_a_reload():
    c = coord(**{"share.coordinator.cold.partition.snapshot.interval.ms": 1000})
    init(c)
    d = Coordinator.load(c.share_state_log, cluster=c.cluster, config=c.config)
    assert "share-coordinator-cold-partition-snapshot" in d.timers
    assert [type(e.record) for e in d.advance(1000)] == [ShareSnapshot]


def test_as_of_now_holds_every_share_state_record():
    c = coord()
    init(c)
    write(c, batches=[batch(0, 0, 2, 1)])
    assert share_coordinator(c.as_of(c.position)).states == share_coordinator(c).states


def test_share_update_value_bytes_known_answer():
    # ShareUpdateValue v0 (flexible): SnapshotEpoch, LeaderEpoch, StartOffset, compact StateBatches
    # (each with its own empty tag buffer), then the tag buffer holding DeliveryCompleteCount
    # (tag 0) only when it is not the default -1
    c = coord()
    init(c, start_offset=100)
    read(c, leader_epoch=3)
    write(c, leader_epoch=3, batches=[batch(110, 110, 0, 1)], delivery_complete_count=5)
    rec = records(c)[-1]
    assert rec.encode()[1] == (
        b"\x00\x00"                          # value version 0
        + (0).to_bytes(4, "big")             # SnapshotEpoch
        + (3).to_bytes(4, "big")             # LeaderEpoch
        + b"\xff" * 8                        # StartOffset -1 (unchanged)
        + b"\x02"                            # one batch (compact array: n + 1)
        + (110).to_bytes(8, "big") * 2 + b"\x00" + (1).to_bytes(2, "big") + b"\x00"
        + b"\x01\x00\x04" + (5).to_bytes(4, "big"))  # tagged: DeliveryCompleteCount = 5
    write(c, leader_epoch=3, delivery_complete_count=-1)
    assert records(c)[-1].encode()[1].endswith(b"\xff" * 8 + b"\x01" + b"\x00")  # no batches, no tags


@pytest.mark.parametrize("api", ["InitializeShareGroupState", "ReadShareGroupState", "WriteShareGroupState",
                                 "DeleteShareGroupState", "ReadShareGroupStateSummary"])
def test_null_topic_id_is_an_invalid_request(api):
    # ShareCoordinatorShard.NULL_TOPIC_ID, checked first
    c = coord()
    fields = {"partition": 0, "state_epoch": 0, "start_offset": 0, "leader_epoch": 0, "state_batches": []}
    r = c.handle(request(api, 0, group_id=G, topics=[{"topic_id": None, "partitions": [fields]}]))
    p = one(r)
    assert (r.results[0].topic_id, p.error_code, p.error_message) == \
        (None, E.invalid_request, "The topic id cannot be null.")
    assert len(c.share_state_log) == 0


def test_load_from_plain_records_routes_share_state_records_to_their_log():
    c = coord()
    _busy(c)
    d = Coordinator.load([e.record for e in c.share_state_log], cluster=c.cluster, config=c.config)
    _same_state(d, c)
    assert len(d.log) == 0 and len(d.share_state_log) == len(c.share_state_log)
    assert "share-coordinator-cold-partition-snapshot" in d.timers
