"""TxnOffsetCommit + WriteTxnMarkers: pending offsets become visible only on COMMIT (kafka rule)."""
from __future__ import annotations

from kgroup import Coordinator, ErrorCode
from kgroup.protocol import request

from kgroup_testing import commit, fetch


def txn_commit(c, group, offset, producer_id=1000, partition=0):
    return c.handle(request("TxnOffsetCommit", 3, transactional_id="tx", group_id=group, producer_id=producer_id,
                            producer_epoch=0, generation_id=-1, member_id="", topics=[
                                {"name": "orders", "partitions": [{"partition_index": partition, "committed_offset": offset,
                                                                   "committed_metadata": ""}]}]))


def markers(c, group, commit_: bool, producer_id=1000):
    return c.handle(request("WriteTxnMarkers", 1, markers=[{
        "producer_id": producer_id, "producer_epoch": 0, "transaction_result": commit_, "coordinator_epoch": 3,
        "topics": [{"name": "__consumer_offsets", "partition_indexes": [c.partition_for(group)]}]}]))


def committed(c, group):
    r = fetch(c, group, {"orders": [0]})
    return r.topics[0].partitions[0].committed_offset


def test_pending_then_commit_marker(coord):
    commit(coord, "g", {("orders", 0): 5})
    txn_commit(coord, "g", 9)
    entry = coord.log.entry_at(len(coord.log) - 1)
    assert entry.is_transactional and entry.producer_id == 1000
    assert committed(coord, "g") == 5
    assert fetch(coord, "g", {"orders": [0]}, require_stable=True).topics[0].partitions[0].error_code == \
        ErrorCode.unstable_offset_commit
    r = markers(coord, "g", True)
    assert r.markers[0].topics[0].partitions[0].error_code == ErrorCode.none
    assert coord.log.entry_at(len(coord.log) - 1).control is not None
    assert committed(coord, "g") == 9


def test_abort_marker_discards_pending_offsets(coord):
    commit(coord, "g", {("orders", 0): 5})
    txn_commit(coord, "g", 9)
    markers(coord, "g", False)
    assert committed(coord, "g") == 5
    assert fetch(coord, "g", {"orders": [0]}, require_stable=True).topics[0].partitions[0].error_code == ErrorCode.none


def test_a_later_plain_commit_beats_an_earlier_transactional_one(coord):
    txn_commit(coord, "g", 9)
    commit(coord, "g", {("orders", 0): 12})
    markers(coord, "g", True)
    assert committed(coord, "g") == 12  # Kafka keeps the record written last in the log


def test_markers_for_other_topics_are_not_ours(coord):
    r = coord.handle(request("WriteTxnMarkers", 1, markers=[{
        "producer_id": 1, "producer_epoch": 0, "transaction_result": True, "coordinator_epoch": 0,
        "topics": [{"name": "orders", "partition_indexes": [0]}]}]))
    assert r.markers[0].topics[0].partitions[0].error_code == ErrorCode.unknown_topic_or_partition


def test_reload_keeps_open_transactions_pending(coord):
    commit(coord, "g", {("orders", 0): 5})
    txn_commit(coord, "g", 9)
    reloaded = Coordinator.load(coord.log, cluster=coord.cluster)
    assert committed(reloaded, "g") == 5
    markers(reloaded, "g", True)
    assert committed(reloaded, "g") == 9


def test_a_marker_settles_only_the_offsets_written_on_its_partition(coord):
    """One transaction commits offsets for two groups on different __consumer_offsets partitions;
    the transaction coordinator writes a marker to each partition, one after the other (Kafka:
    every partition is its own coordinator shard and sees only its own markers)."""
    a, b = "orders-app", next(g for g in (f"billing-{i}" for i in range(100))
                              if coord.partition_for(g) != coord.partition_for("orders-app"))
    txn_commit(coord, a, 7)
    txn_commit(coord, b, 8)
    markers(coord, a, True)
    assert committed(coord, a) == 7 and committed(coord, b) == -1  # b's marker is not written yet
    replayed = coord.as_of(coord.position).offsets.store  # the same, rebuilt from the log
    assert replayed.get(a, "orders", 0).offset == 7 and replayed.get(b, "orders", 0) is None
    markers(coord, b, True)
    assert committed(coord, b) == 8
    assert committed(Coordinator.load(coord.log, cluster=coord.cluster), b) == 8


# -- producer id -1 (RecordBatch.NO_PRODUCER_ID) -------------------------------------------------

def _codes(resp, field="topics"):
    return {p.error_code for t in getattr(resp, field) for p in t.partitions}


def test_txn_commit_without_producer_id_is_refused_by_transaction_verification(coord):
    # Kafka: GroupCoordinatorService.commitTransactionalOffsets verifies the transaction before the
    # group is looked at; TransactionCoordinator.handleVerifyPartitionsInTransaction finds no
    # transactional id mapped to producer id -1 -> INVALID_PRODUCER_ID_MAPPING on every partition
    commit(coord, "g", {("orders", 0): 5})
    r = txn_commit(coord, "g", 9, producer_id=-1)
    assert _codes(r) == {ErrorCode.invalid_producer_id_mapping}
    assert committed(coord, "g") == 5 and not coord.offsets.store.has_pending("g", "orders", 0)


def test_txn_commit_without_producer_id_checks_group_id_and_coordinator_first():
    # GroupCoordinatorService.commitTransactionalOffsets: INVALID_GROUP_ID comes before the
    # verification, and the verification needs the partition led here (NOT_LEADER_OR_FOLLOWER,
    # answered as NOT_COORDINATOR by handleOperationException)
    from kgroup import Cluster
    c = Coordinator(cluster=Cluster({"orders": 2}, seed=1), hosted_partitions=[0])
    away = next(g for g in (f"g{i}" for i in range(100)) if c.partition_for(g) != 0)
    here = next(g for g in (f"g{i}" for i in range(100)) if c.partition_for(g) == 0)
    assert _codes(txn_commit(c, "", 1, producer_id=-1)) == {ErrorCode.invalid_group_id}
    assert _codes(txn_commit(c, away, 1, producer_id=-1)) == {ErrorCode.not_coordinator}
    assert _codes(txn_commit(c, here, 1, producer_id=-1)) == {ErrorCode.invalid_producer_id_mapping}
    assert c.position == 0


def test_marker_without_producer_id_cannot_be_written(coord):
    # Kafka: CoordinatorRuntime.completeTransaction builds the marker with MemoryRecords.
    # withEndTransactionMarker; MemoryRecordsBuilder refuses a transactional batch without a
    # producer id (IllegalArgumentException) -> UNKNOWN_SERVER_ERROR in KafkaApis.
    # handleWriteTxnMarkersRequest; nothing is written and pending offsets stay pending
    txn_commit(coord, "g", 9)
    position = coord.position
    r = markers(coord, "g", True, producer_id=-1)
    assert _codes(r.markers[0], "topics") == {ErrorCode.unknown_server_error}
    assert coord.position == position and coord.offsets.store.has_pending("g", "orders", 0)
    markers(coord, "g", True)
    assert committed(coord, "g") == 9


def test_an_offset_tombstone_drops_the_pending_transactional_offset_too(coord):
    # Kafka's OffsetMetadataManager.replay: a (non-transactional) tombstone removes the partition's
    # offsets from the pending transactional stores of the group too, so the marker commits nothing.
    commit(coord, "g", {("orders", 0): 5})
    txn_commit(coord, "g", 9)
    coord.handle(request("OffsetDelete", 0, group_id="g", topics=[{"name": "orders", "partitions": [
        {"partition_index": 0}]}]))
    markers(coord, "g", True)
    assert committed(coord, "g") == -1
    assert committed(Coordinator.load(coord.log, cluster=coord.cluster), "g") == -1
