"""A transaction coordinator for `kgroup serve`, so that transactional producers (exactly-once
consume-transform-produce) run against kgroup's group coordinator: InitProducerId with a
transactional id, AddPartitionsToTxn, AddOffsetsToTxn, EndTxn (Kafka's transaction protocol
version 1: the producer epoch stays until the next InitProducerId).

EndTxn writes the markers Kafka's transaction coordinator would: COMMIT/ABORT control batches
on the data partitions (the simulated cluster's `end_transaction`) and a WriteTxnMarkers request
to the group coordinator for the `__consumer_offsets` partitions of the groups that committed
offsets in the transaction, which completes (or drops) their TxnOffsetCommits.

Soft state only: unlike Kafka's `__transaction_state`, nothing here is logged. A transaction
open longer than its timeout is aborted and its producer fenced (the epoch bumped), as Kafka's
coordinator does (`expire_timed_out`, run by the server's clock).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from kgroup.errors import ErrorCode
from kgroup.protocol import ms, request

CONSUMER_OFFSETS = "__consumer_offsets"

#: hands a WriteTxnMarkers request to the group coordinator, as Kafka's transaction coordinator
#: sends one to the `__consumer_offsets` partitions' leader (`Server._write_txn_markers` provides
#: it: through `Coordinator.handle`, recorded like any request)
SendMarkers = Callable[[Any], None]
#: the markers moved the last stable offset: wakes the fetches waiting for data
#: (`Broker.data_arrived` provides it)
MarkersWritten = Callable[[], None]


@dataclass
class Transaction:
    """One transactional id's producer and its transaction in progress."""

    transactional_id: str
    producer_id: int
    producer_epoch: int
    timeout_ms: int
    #: data partitions added (topic, partition)
    partitions: set[tuple[str, int]] = field(default_factory=set)
    #: groups whose offsets are part of the transaction (AddOffsetsToTxn)
    groups: set[str] = field(default_factory=set)
    #: when the transaction began (its first partition or group added), coordinator time
    started_ms: int | None = None

    @property
    def state(self) -> str:
        return "Ongoing" if self.partitions or self.groups else "Empty"


class TransactionCoordinator:
    """The transactions of the clients of `coordinator`'s cluster: `send_markers` reaches the
    group coordinator, `markers_written` the fetches waiting on the data partitions."""

    def __init__(self, coordinator: Any, send_markers: SendMarkers, markers_written: MarkersWritten) -> None:
        self.coordinator = coordinator
        self.cluster = coordinator.cluster
        self.send_markers = send_markers
        self.markers_written = markers_written
        self.transactions: dict[str, Transaction] = {}

    def _fenced(self, txn: Transaction | None, producer_id: int, epoch: int) -> ErrorCode | None:
        if txn is None or txn.producer_id != producer_id:
            return ErrorCode.invalid_producer_id_mapping
        if txn.producer_epoch != epoch:
            return ErrorCode.producer_fenced if epoch < txn.producer_epoch else ErrorCode.invalid_producer_epoch
        return None

    def init_producer_id(self, req: Any, version: int) -> dict:
        """A producer id for a transactional id; a new epoch (and the open transaction aborted)
        when it had one, which fences the previous incarnation."""
        txn = self.transactions.get(req.transactional_id)
        if txn is None:
            txn = Transaction(req.transactional_id, self.cluster.new_producer_id(), 0, ms(req.transaction_timeout))
            self.transactions[req.transactional_id] = txn
        else:
            if txn.state == "Ongoing":
                self._complete(txn, commit=False)
            txn.producer_epoch += 1
            txn.timeout_ms = ms(req.transaction_timeout)
        return {"throttle_time": 0, "error_code": ErrorCode.none, "producer_id": txn.producer_id,
                "producer_epoch": txn.producer_epoch}

    def add_partitions(self, req: Any, version: int) -> dict:
        txn = self.transactions.get(req.v3_and_below_transactional_id)
        fenced = self._fenced(txn, req.v3_and_below_producer_id, req.v3_and_below_producer_epoch)
        results = []
        for t in req.v3_and_below_topics:
            rows = []
            for p in t.partitions:
                code = fenced
                if code is None and (t.name not in self.cluster or not 0 <= p < self.cluster.partitions(t.name)):
                    code = ErrorCode.unknown_topic_or_partition
                rows.append({"partition_index": p, "partition_error_code": code or ErrorCode.none})
            results.append({"name": t.name, "results_by_partition": rows})
        if all(r["partition_error_code"] == ErrorCode.none for t in results for r in t["results_by_partition"]):
            self._begin(txn)
            txn.partitions |= {(t.name, p) for t in req.v3_and_below_topics for p in t.partitions}
        else:  # all or nothing, as Kafka: the others are OPERATION_NOT_ATTEMPTED
            for t in results:
                for r in t["results_by_partition"]:
                    if r["partition_error_code"] == ErrorCode.none:
                        r["partition_error_code"] = ErrorCode.operation_not_attempted
        return {"throttle_time": 0, "results_by_topic_v3_and_below": results}

    def add_offsets(self, req: Any, version: int) -> dict:
        txn = self.transactions.get(req.transactional_id)
        code = self._fenced(txn, req.producer_id, req.producer_epoch)
        if code is None:
            self._begin(txn)
            txn.groups.add(req.group_id)
        return {"throttle_time": 0, "error_code": code or ErrorCode.none}

    def end_txn(self, req: Any, version: int) -> dict:
        txn = self.transactions.get(req.transactional_id)
        code = self._fenced(txn, req.producer_id, req.producer_epoch)
        if code is None and txn.state == "Empty":
            code = ErrorCode.invalid_txn_state
        if code is None:
            self._complete(txn, commit=bool(req.committed))
        return {"throttle_time": 0, "error_code": code or ErrorCode.none}

    def _begin(self, txn: Transaction) -> None:
        if txn.state == "Empty":
            txn.started_ms = self.coordinator.now()

    def expire_timed_out(self) -> None:
        """Abort the transactions open longer than their timeout and fence their producers."""
        now = self.coordinator.now()
        for txn in self.transactions.values():
            if txn.state == "Ongoing" and txn.started_ms is not None and now - txn.started_ms > txn.timeout_ms:
                self._complete(txn, commit=False)
                txn.producer_epoch += 1

    def _complete(self, txn: Transaction, *, commit: bool) -> None:
        for topic, partition in sorted(txn.partitions):
            if topic in self.cluster and txn.producer_id in self.cluster.open_transactions(topic, partition):
                self.cluster.end_transaction(topic, partition, txn.producer_id, commit=commit)
        offsets_partitions = sorted({self.coordinator.partition_for(g) for g in txn.groups})
        if offsets_partitions:
            self.send_markers(request("WriteTxnMarkers", 1, markers=[{
                "producer_id": txn.producer_id, "producer_epoch": txn.producer_epoch,
                "transaction_result": commit, "coordinator_epoch": 0,
                "topics": [{"name": CONSUMER_OFFSETS, "partition_indexes": offsets_partitions}]}]))
        txn.partitions.clear()
        txn.groups.clear()
        txn.started_ms = None
        self.markers_written()  # the last stable offset moved: waiting read_committed fetches
