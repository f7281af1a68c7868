"""The broker APIs `kgroup serve` answers from the simulated cluster (`kgroup.cluster`): one
broker (node 0) leading every partition at leader epoch 0, or with `Server(brokers=N)` the brokers
0..N-1 of one cluster, leading the partitions as `kgroup.lab.Leadership` says (a request for a
partition another broker leads gets NOT_LEADER_OR_FOLLOWER).

Each handler takes the request and its version and returns version-neutral data (built into
the kio response of that version by the server), None for a Produce with acks=0 (Kafka sends
no answer), or a coroutine (Fetch long polls). Group and offsets APIs are not here: the
server routes them to `Coordinator.handle`.
"""
from __future__ import annotations

import asyncio
import re
import struct
from typing import Any

from crc32c import crc32c

from kgroup.cluster import UnknownTopicError
from kgroup.errors import ErrorCode
from kgroup.lab import Leadership
from kgroup.log import partition_for
from kgroup.log.batch import read_batches
from kgroup.protocol import get, ms
from kgroup.serve.share_polls import Wakeup
from kgroup.serve.transactions import SendMarkers, TransactionCoordinator

NODE_ID = 0
_CONSUMER_OFFSETS, _TRANSACTION_STATE, _SHARE_GROUP_STATE = "__consumer_offsets", "__transaction_state", "__share_group_state"
#: Kafka's transaction.state.log.num.partitions default
_TRANSACTION_PARTITIONS = 50
#: "no authorized operations asked for" (Kafka's Integer.MIN_VALUE)
_NO_OPERATIONS = -(2 ** 31)
_LEGAL_TOPIC = re.compile(r"[a-zA-Z0-9._-]{1,249}")
#: baseOffset, batchLength, partitionLeaderEpoch, magic, crc, attributes, lastOffsetDelta,
#: baseTimestamp, maxTimestamp, producerId, producerEpoch, baseSequence, recordCount
_BATCH = struct.Struct(">qiibIhiqqqhii")
#: how many batches per producer and partition Kafka remembers to spot duplicates
_DEDUP_BATCHES = 5
_CRC_START = 21
_TRANSACTIONAL, _CONTROL = 0x10, 0x20
#: ListOffsets special timestamps
_LATEST, _EARLIEST, _MAX_TIMESTAMP = -1, -2, -3

#: api key -> (handler method name, lowest version served, highest or None for kio's highest)
BROKER_APIS: dict[int, tuple[str, int, int | None]] = {
    0: ("produce", 3, None),
    1: ("fetch", 4, None),
    2: ("list_offsets", 1, None),
    3: ("metadata", 0, None),
    10: ("find_coordinator", 0, None),
    18: ("api_versions", 0, None),
    19: ("create_topics", 2, None),
    20: ("delete_topics", 1, None),
    21: ("delete_records", 0, None),
    # transactions as Kafka's transaction protocol version 1 has them (kgroup.serve.transactions):
    # InitProducerId v6 is two-phase commit (KIP-939), AddPartitionsToTxn v4+ brokers' only,
    # EndTxn v5 the version 2 protocol
    22: ("init_producer_id", 0, 5),
    23: ("offset_for_leader_epoch", 2, None),
    24: ("add_partitions_to_txn", 0, 3),
    25: ("add_offsets_to_txn", 0, None),
    26: ("end_txn", 0, 4),
    37: ("create_partitions", 0, None),
    60: ("describe_cluster", 0, None),
}
#: Kafka's controller creates at most this many partitions in one CreateTopics (POLICY_VIOLATION)
_MAX_PARTITIONS_PER_REQUEST = 10_000


class Broker:
    """The broker side of the server: cluster metadata and partition data for real clients.

    `served` (api key -> (min, max)) is what ApiVersions advertises; the server fills it
    with every API it routes. `auto_create_topics`: Metadata creates unknown topics (Kafka's
    auto.create.topics.enable, on by default as in Kafka) with `default_partitions`.
    `send_markers`: the group coordinator's door for the transaction coordinator (None: no
    transactions served); `on_data`: called after every produce that appended data (and every
    transaction's markers)."""

    def __init__(self, coordinator: Any, host: str, port: int, *, cluster_id: str = "kgroup",
                 auto_create_topics: bool = True, default_partitions: int = 1,
                 leadership: Leadership | None = None, ports: list[int] | None = None,
                 send_markers: SendMarkers | None = None, on_data: Wakeup | None = None) -> None:
        self.coordinator = coordinator
        self.cluster = coordinator.cluster
        self.host, self.port = host, port
        self.leadership = leadership if leadership is not None else Leadership(1)
        #: each broker's port (the server fills them in as it binds)
        self.ports = ports if ports is not None else [port]
        #: the broker the request being served came to (the server sets it)
        self.receiving = NODE_ID
        self.cluster_id = cluster_id
        self.auto_create_topics = auto_create_topics
        self.default_partitions = default_partitions
        self.served: dict[int, tuple[int, int]] = {}
        #: finalized feature -> level, advertised in ApiVersions (the server sets them)
        self.features: dict[str, int] = {"group.version": 1}
        #: resolved on the next produce; long-polling fetches wait on it
        self._produced: asyncio.Future | None = None
        #: called after data arrived (a produce, a transaction's markers): the server's share long polls
        self.on_data = on_data
        self.transactions = (TransactionCoordinator(coordinator, send_markers, self.data_arrived)
                             if send_markers is not None else None)
        #: idempotent producers (Kafka's ProducerStateManager, soft state here):
        #: (topic id, partition, producer id) -> (epoch, [(first seq, last seq, base offset)...])
        self._producers: dict[tuple[Any, int, int], tuple[int, list[tuple[int, int, int]]]] = {}

    # -- helpers ------------------------------------------------------------------------
    def _broker(self, id_field: str = "node_id", broker_id: int = NODE_ID) -> dict:
        if broker_id < 0:
            return {id_field: -1, "host": "", "port": -1, "rack": None}
        port = self.ports[broker_id] if len(self.ports) > 1 else self.port
        return {id_field: broker_id, "host": self.host, "port": port, "rack": None}

    def _live(self) -> list[int]:
        return sorted(self.leadership.live)

    def _leader(self, topic: str, partition: int) -> int:
        return self.leadership.leader(topic, partition) if self.leadership.brokers > 1 else NODE_ID

    def data_arrived(self) -> None:
        """New data (or a moved last stable offset): wake the waiting fetches."""
        if self.on_data is not None:
            self.on_data()
        if self._produced is not None and not self._produced.done():
            self._produced.set_result(None)
        self._produced = None

    def _next_produce(self) -> asyncio.Future:
        if self._produced is None:
            self._produced = asyncio.get_running_loop().create_future()
        return self._produced

    def _partition(self, name: str, p: int) -> ErrorCode:
        if name not in self.cluster or not 0 <= p < self.cluster.partitions(name):
            return ErrorCode.unknown_topic_or_partition
        if self._leader(name, p) != self.receiving:
            return ErrorCode.not_leader_or_follower
        return ErrorCode.none

    def _name_of(self, topic_id: Any) -> str | None:
        try:
            return self.cluster.topic_name(topic_id)
        except UnknownTopicError:
            return None

    # -- ApiVersions (18) ----------------------------------------------------------------
    def api_versions(self, req: Any, version: int) -> dict:
        keys = [{"api_key": k, "min_version": lo, "max_version": hi} for k, (lo, hi) in sorted(self.served.items())]
        # KIP-848 clients look for the group.version feature (1: the consumer protocol)
        features = sorted(self.features.items())
        return {"error_code": ErrorCode.none, "api_keys": keys, "throttle_time": 0,
                "supported_features": [{"name": n, "min_version": 0, "max_version": v} for n, v in features],
                "finalized_features_epoch": 0,
                "finalized_features": [{"name": n, "min_version_level": v, "max_version_level": v}
                                       for n, v in features]}

    # -- Metadata (3) --------------------------------------------------------------------
    def metadata(self, req: Any, version: int) -> dict:
        asked = req.topics
        if asked is None or (version == 0 and not asked):
            wanted: list[tuple[str | None, Any]] = [(t.name, t.topic_id) for t in self.cluster.topics()]
        else:
            wanted = [(get(t, "name"), get(t, "topic_id")) for t in asked]
        create = self.auto_create_topics and (version < 4 or req.allow_auto_topic_creation)
        topics = []
        for name, topic_id in wanted:
            if name is None and topic_id is not None:
                name = self._name_of(topic_id)
                if name is None:
                    topics.append({"error_code": ErrorCode.unknown_topic_id, "name": None, "topic_id": topic_id,
                                   "partitions": [], "topic_authorized_operations": _NO_OPERATIONS})
                    continue
            if name not in self.cluster and create and _LEGAL_TOPIC.fullmatch(name or "") and name not in (".", ".."):
                self.cluster.create_topic(name, self.default_partitions)
            if name not in self.cluster:
                topics.append({"error_code": ErrorCode.unknown_topic_or_partition, "name": name, "topic_id": None,
                               "partitions": [], "topic_authorized_operations": _NO_OPERATIONS})
                continue
            t = self.cluster.topic(name)
            parts = [self._partition_metadata(name, p) for p in range(t.partitions)]
            topics.append({"error_code": ErrorCode.none, "name": name, "topic_id": t.topic_id, "is_internal": False,
                           "partitions": parts, "topic_authorized_operations": _NO_OPERATIONS})
        return {"throttle_time": 0, "brokers": [self._broker(broker_id=b) for b in self._live()],
                "cluster_id": self.cluster_id, "controller_id": min(self._live(), default=-1), "topics": topics,
                "cluster_authorized_operations": _NO_OPERATIONS, "error_code": ErrorCode.none}

    def _partition_metadata(self, name: str, p: int) -> dict:
        """Every broker holds a replica (the live ones in sync), the leader first."""
        leader = self._leader(name, p)
        n = self.leadership.brokers
        replicas = [leader, *[b for b in range(n) if b != leader]] if leader >= 0 else list(range(n))
        live = self.leadership.live
        return {"error_code": ErrorCode.none if leader >= 0 else ErrorCode.leader_not_available,
                "partition_index": p, "leader_id": leader, "leader_epoch": 0, "replica_nodes": replicas,
                "isr_nodes": [b for b in replicas if b in live],
                "offline_replicas": [b for b in replicas if b not in live]}

    # -- FindCoordinator (10) ------------------------------------------------------------
    def find_coordinator(self, req: Any, version: int) -> dict:
        key_type = get(req, "key_type", 0)
        if version >= 4:
            return {"throttle_time": 0,
                    "coordinators": [{"key": k, **self._coordinator(key_type, k)} for k in req.coordinator_keys]}
        return {"throttle_time": 0, **self._coordinator(key_type, req.key)}

    def _coordinator(self, key_type: int, key: str) -> dict:
        if key_type in (0, 1, 2):  # GROUP, TRANSACTION, SHARE ("group:topicId:partition")
            if self.leadership.brokers == 1:
                return {"error_code": ErrorCode.none, "error_message": None, **self._broker()}
            # the leader of the key's partition of the coordinator's topic
            topic, partitions = {0: (_CONSUMER_OFFSETS, self.coordinator.num_partitions),
                                 1: (_TRANSACTION_STATE, _TRANSACTION_PARTITIONS),
                                 2: (_SHARE_GROUP_STATE,
                                     self.coordinator.config["share.coordinator.state.topic.num.partitions"])}[key_type]
            leader = self.leadership.leader(topic, partition_for(key, partitions))
            if leader < 0:
                return {"error_code": ErrorCode.coordinator_not_available,
                        "error_message": "The coordinator is not available.", **self._broker(broker_id=-1)}
            return {"error_code": ErrorCode.none, "error_message": None, **self._broker(broker_id=leader)}
        return {"error_code": ErrorCode.invalid_request, "error_message": f"unknown coordinator key type {key_type}",
                "node_id": -1, "host": "", "port": -1}

    # -- DescribeCluster (60) ------------------------------------------------------------
    def describe_cluster(self, req: Any, version: int) -> dict:
        endpoint_type = get(req, "endpoint_type", 1)
        if endpoint_type != 1:  # only brokers here, no controllers to describe
            return {"throttle_time": 0, "error_code": ErrorCode.unsupported_endpoint_type,
                    "error_message": "The target server does not support the requested endpoint type.",
                    "endpoint_type": endpoint_type, "cluster_id": self.cluster_id, "controller_id": -1,
                    "brokers": [], "cluster_authorized_operations": _NO_OPERATIONS}
        brokers = [{**self._broker("broker_id", b), "is_fenced": False} for b in self._live()]
        return {"throttle_time": 0, "error_code": ErrorCode.none, "error_message": None, "endpoint_type": 1,
                "cluster_id": self.cluster_id, "controller_id": min(self._live(), default=-1), "brokers": brokers,
                "cluster_authorized_operations": _NO_OPERATIONS}

    # -- CreateTopics (19) / DeleteTopics (20) -------------------------------------------
    def create_topics(self, req: Any, version: int) -> dict:
        results = []
        def asked(t: Any) -> int:
            return t.num_partitions if t.num_partitions != -1 else self.default_partitions
        total = sum(len(t.assignments) if t.assignments else asked(t) for t in req.topics)
        if total > _MAX_PARTITIONS_PER_REQUEST:   # the controller refuses the whole request
            return {"throttle_time": 0, "topics": [
                {"name": t.name, "topic_id": None, "error_code": ErrorCode.policy_violation,
                 "error_message": "Excessively large number of partitions per request.", "num_partitions": -1,
                 "replication_factor": -1, "configs": None} for t in req.topics]}
        for t in req.topics:
            partitions = asked(t)
            code, message = ErrorCode.none, None
            if t.name in self.cluster:
                code, message = ErrorCode.topic_already_exists, f"Topic '{t.name}' already exists."
            elif not _LEGAL_TOPIC.fullmatch(t.name) or t.name in (".", ".."):
                code, message = ErrorCode.invalid_topic_exception, f"Topic name {t.name!r} is illegal"
            elif t.assignments:
                code, message = ErrorCode.invalid_request, "kgroup serve places replicas itself"
            elif partitions < 1:
                code, message = ErrorCode.invalid_partitions, "Number of partitions must be larger than 0."
            elif t.replication_factor != -1 and not 1 <= t.replication_factor <= len(self.leadership.live):
                code, message = (ErrorCode.invalid_replication_factor,
                                 f"Unable to replicate the partition {t.replication_factor} time(s): "
                                 f"The target replication factor of {t.replication_factor} cannot be reached because "
                                 f"only {len(self.leadership.live)} broker(s) are registered.")
            topic_id = None
            if code == ErrorCode.none and not req.validate_only:
                topic_id = self.cluster.create_topic(t.name, partitions)
            ok = code == ErrorCode.none
            results.append({"name": t.name, "topic_id": topic_id, "error_code": code, "error_message": message,
                            "num_partitions": partitions if ok else -1, "replication_factor": max(t.replication_factor, 1) if ok else -1,
                            "configs": [] if ok else None})
        return {"throttle_time": 0, "topics": results}

    def delete_topics(self, req: Any, version: int) -> dict:
        asked = ([(n, None) for n in req.topic_names] if version < 6
                 else [(t.name, t.topic_id) for t in req.topics])
        results = []
        for name, topic_id in asked:
            if name is None and topic_id is not None:
                name = self._name_of(topic_id)
                if name is None:
                    results.append({"name": None, "topic_id": topic_id, "error_code": ErrorCode.unknown_topic_id,
                                    "error_message": None})
                    continue
            if name not in self.cluster:
                results.append({"name": name, "topic_id": topic_id, "error_code": ErrorCode.unknown_topic_or_partition,
                                "error_message": "This server does not host this topic-partition."})
                continue
            topic_id = self.cluster.topic_id(name)
            self.cluster.delete_topic(name)
            results.append({"name": name, "topic_id": topic_id, "error_code": ErrorCode.none, "error_message": None})
        return {"throttle_time": 0, "responses": results}

    # -- CreatePartitions (37) / DeleteRecords (21) --------------------------------------
    def create_partitions(self, req: Any, version: int) -> dict:
        results = []
        for t in req.topics:
            code, message = ErrorCode.none, None
            if t.name not in self.cluster:
                code, message = ErrorCode.unknown_topic_or_partition, "This server does not host this topic-partition."
            elif t.count <= self.cluster.partitions(t.name):
                code, message = (ErrorCode.invalid_partitions, f"Topic currently has {self.cluster.partitions(t.name)} "
                                 f"partitions, which is higher than the requested {t.count}.")
            elif t.assignments is not None and any(list(a.broker_ids) != [NODE_ID] for a in t.assignments):
                code, message = ErrorCode.invalid_replica_assignment, f"only broker {NODE_ID} exists"
            elif not req.validate_only:
                self.cluster.increase_partitions(t.name, t.count)
            results.append({"name": t.name, "error_code": code, "error_message": message})
        return {"throttle_time": 0, "results": results}

    def delete_records(self, req: Any, version: int) -> dict:
        topics = []
        for t in req.topics:
            parts = []
            for p in t.partitions:
                row = {"partition_index": p.partition_index, "low_watermark": -1,
                       "error_code": self._partition(t.name, p.partition_index)}
                if row["error_code"] == ErrorCode.none:
                    try:
                        row["low_watermark"] = self.cluster.delete_records(t.name, p.partition_index, p.offset)
                    except ValueError:  # beyond the high watermark
                        row["error_code"] = ErrorCode.offset_out_of_range
                parts.append(row)
            topics.append({"name": t.name, "partitions": parts})
        return {"throttle_time": 0, "topics": topics}

    # -- InitProducerId (22) -------------------------------------------------------------
    def init_producer_id(self, req: Any, version: int) -> dict:
        if req.transactional_id is not None:
            return self.transactions.init_producer_id(req, version)
        # idempotent producers: a fresh id each time (sequence numbers are kept, not checked)
        return {"throttle_time": 0, "error_code": ErrorCode.none, "producer_id": self.cluster.new_producer_id(),
                "producer_epoch": 0}

    # -- AddPartitionsToTxn (24), AddOffsetsToTxn (25), EndTxn (26) ------------------------
    def add_partitions_to_txn(self, req: Any, version: int) -> dict:
        return self.transactions.add_partitions(req, version)

    def add_offsets_to_txn(self, req: Any, version: int) -> dict:
        return self.transactions.add_offsets(req, version)

    def end_txn(self, req: Any, version: int) -> dict:
        return self.transactions.end_txn(req, version)

    # -- Produce (0) ---------------------------------------------------------------------
    def produce(self, req: Any, version: int) -> dict | None:
        acks = req.acks
        topics = []
        for t in req.topic_data:
            name = get(t, "name")
            topic_id = get(t, "topic_id")
            if name is None and topic_id is not None:
                name = self._name_of(topic_id)
            parts = []
            for p in t.partition_data:
                if acks not in (0, 1, -1):
                    row = {"error_code": ErrorCode.invalid_required_acks}
                elif name is None:
                    row = {"error_code": ErrorCode.unknown_topic_id}
                elif (code := self._partition(name, p.index)) != ErrorCode.none:
                    row = {"error_code": code}
                else:
                    row = self._append(name, p.index, bytes(p.records or b""))
                parts.append({"index": p.index, "base_offset": -1, "log_append_time": None, "log_start_offset": -1,
                              "record_errors": [], **row})
            topics.append({"name": name or "", "topic_id": topic_id, "partition_responses": parts})
        if acks == 0:
            return None
        return {"responses": topics, "throttle_time": 0}

    def _append(self, topic: str, partition: int, records: bytes) -> dict:
        """Check every batch (magic 2, sizes, CRC) before appending any, as Kafka validates
        the whole produce of a partition at once."""
        batches = []
        pos = 0
        while pos < len(records):
            if len(records) - pos < _BATCH.size:
                return {"error_code": ErrorCode.corrupt_message, "error_message": "truncated record batch"}
            (base, length, _ple, magic, crc, attributes, lod, _bts, max_ts, pid, epoch, seq,
             _count) = _BATCH.unpack_from(records, pos)
            end = pos + 12 + length
            if magic != 2:
                return {"error_code": ErrorCode.unsupported_for_message_format,
                        "error_message": f"record batch magic {magic}: produce v3+ takes magic 2 only"}
            if length < _BATCH.size - 12 or end > len(records) or lod < 0:
                return {"error_code": ErrorCode.corrupt_message, "error_message": "bad record batch size"}
            if crc32c(memoryview(records)[pos + _CRC_START:end]) != crc:
                return {"error_code": ErrorCode.corrupt_message, "error_message": "record batch CRC mismatch"}
            if attributes & _CONTROL:
                return {"error_code": ErrorCode.invalid_record, "error_message": "clients may not produce control batches"}
            batches.append((records[pos:end], lod, max_ts, pid, epoch, seq, bool(attributes & _TRANSACTIONAL)))
            pos = end
        if not batches:
            return {"error_code": ErrorCode.invalid_record, "error_message": "no record batch"}
        first = None
        topic_id = self.cluster.topic_id(topic)
        for data, lod, max_ts, pid, epoch, seq, txn in batches:
            if pid >= 0 and seq >= 0:
                verdict = self._check_sequence((topic_id, partition, pid), epoch, seq, lod)
                if isinstance(verdict, dict):
                    return verdict
                if verdict is not None:  # a retried batch already in the log: its offset again
                    first = verdict if first is None else first
                    continue
            base = self.cluster.append_batch(topic, partition, data, last_offset_delta=lod, max_timestamp=max_ts,
                                             producer_id=pid, transactional=txn)
            if pid >= 0 and seq >= 0:
                self._remember((topic_id, partition, pid), epoch, seq, lod, base)
            first = base if first is None else first
        self.data_arrived()
        return {"error_code": ErrorCode.none, "base_offset": first,
                "log_start_offset": self.cluster.log_start_offset(topic, partition)}

    def _check_sequence(self, key: tuple, epoch: int, seq: int, lod: int) -> dict | int | None:
        """Kafka's ProducerStateManager check of an idempotent batch: None to append it, the
        base offset of the same batch appended before (a retry), or an error row."""
        state = self._producers.get(key)
        if state is None or epoch > state[0]:
            if seq != 0:  # a new producer (or epoch) starts at sequence 0
                return {"error_code": ErrorCode.out_of_order_sequence_number,
                        "error_message": f"Out of order sequence number for producer {key[2]} at epoch {epoch}: "
                                         f"{seq} (expected 0)"}
            return None
        if epoch < state[0]:
            return {"error_code": ErrorCode.invalid_producer_epoch,
                    "error_message": f"Epoch of producer {key[2]} is {epoch}, which is smaller than the last "
                                     f"seen epoch {state[0]}"}
        last = (seq + lod) % 2 ** 31
        for first_seq, last_seq, base in state[1]:
            if (first_seq, last_seq) == (seq, last):
                return base
        expected = (state[1][-1][1] + 1) % 2 ** 31
        if seq != expected:
            return {"error_code": ErrorCode.out_of_order_sequence_number,
                    "error_message": f"Out of order sequence number for producer {key[2]}: {seq} (expected {expected})"}
        return None

    def _remember(self, key: tuple, epoch: int, seq: int, lod: int, base: int) -> None:
        state = self._producers.get(key)
        recent = state[1] if state is not None and state[0] == epoch else []
        recent = (recent + [(seq, (seq + lod) % 2 ** 31, base)])[-_DEDUP_BATCHES:]
        self._producers[key] = (epoch, recent)

    # -- ListOffsets (2) -----------------------------------------------------------------
    def list_offsets(self, req: Any, version: int) -> dict:
        committed = get(req, "isolation_level", 0) == 1
        topics = []
        for t in req.topics:
            parts = []
            for p in t.partitions:
                row = {"partition_index": p.partition_index, "error_code": ErrorCode.none, "timestamp": -1,
                       "offset": -1, "leader_epoch": 0}
                if (code := self._partition(t.name, p.partition_index)) != ErrorCode.none:
                    row["error_code"], row["leader_epoch"] = code, -1
                else:
                    row["offset"], row["timestamp"] = self._offset_for(t.name, p.partition_index, p.timestamp, committed)
                parts.append(row)
            topics.append({"name": t.name, "partitions": parts})
        return {"throttle_time": 0, "topics": topics}

    def _offset_for(self, topic: str, partition: int, timestamp: int, committed: bool) -> tuple[int, int]:
        c = self.cluster
        if timestamp == _LATEST:
            return (c.last_stable_offset(topic, partition) if committed else c.end_offset(topic, partition)), -1
        if timestamp < -1 and timestamp != _MAX_TIMESTAMP:  # earliest, earliest-local, earliest-tiered
            return c.log_start_offset(topic, partition), -1
        best: tuple[int, int] = (-1, -1)
        start = c.log_start_offset(topic, partition)
        for b in c.read(topic, partition, start, read_committed=committed):
            if b.control:
                continue
            for batch in read_batches(b.data, strict=True):
                for r in batch.records:
                    if r.offset < start:  # the first batch may straddle the log start
                        continue
                    if timestamp == _MAX_TIMESTAMP:
                        if r.timestamp > best[1]:
                            best = (r.offset, r.timestamp)
                    elif r.timestamp >= timestamp:
                        return r.offset, r.timestamp
        return best

    # -- OffsetForLeaderEpoch (23) -----------------------------------------------------------
    def offset_for_leader_epoch(self, req: Any, version: int) -> dict:
        """Consumers validate their positions (KIP-320): every partition has had one leader
        epoch, 0, which ends at the log end offset."""
        topics = []
        for t in req.topics:
            parts = []
            for p in t.partitions:
                row = {"partition": p.partition, "error_code": self._partition(t.topic, p.partition),
                       "leader_epoch": -1, "end_offset": -1}
                if row["error_code"] == ErrorCode.none:
                    if p.current_leader_epoch > 0:
                        row["error_code"] = ErrorCode.unknown_leader_epoch  # newer than this leader's
                    elif p.leader_epoch == 0:
                        row["leader_epoch"], row["end_offset"] = 0, self.cluster.end_offset(t.topic, p.partition)
                parts.append(row)
            topics.append({"topic": t.topic, "partitions": parts})
        return {"throttle_time": 0, "topics": topics}

    # -- Fetch (1) -----------------------------------------------------------------------
    async def fetch(self, req: Any, version: int) -> dict:
        """Answer at once when min_bytes are there (or an error is); else wait for produces
        until MaxWaitMs passes, as Kafka's fetch purgatory does."""
        if req.session_id != 0 or req.session_epoch not in (0, -1):
            # no fetch sessions are created (every answer says session 0), so none can be found
            return {"throttle_time": 0, "error_code": ErrorCode.fetch_session_id_not_found, "session_id": 0,
                    "responses": []}
        loop = asyncio.get_running_loop()
        deadline = loop.time() + ms(req.max_wait) / 1000
        receiving = self.receiving   # other requests set it while this one waits
        while True:
            self.receiving = receiving
            data, size, errors = self._fetch_once(req, version)
            remaining = deadline - loop.time()
            if size >= req.min_bytes or errors or remaining <= 0:
                return data
            try:
                await asyncio.wait_for(asyncio.shield(self._next_produce()), remaining)
            except asyncio.TimeoutError:
                pass

    def _fetch_once(self, req: Any, version: int) -> tuple[dict, int, bool]:
        committed = req.isolation_level == 1
        by_id = version >= 13
        budget = req.max_bytes
        size, errors = 0, False
        responses = []
        for t in req.topics:
            name = self._name_of(t.topic_id) if by_id else t.topic
            parts = []
            for p in t.partitions:
                row: dict[str, Any] = {"partition_index": p.partition, "error_code": ErrorCode.none,
                                       "high_watermark": -1, "last_stable_offset": -1, "log_start_offset": -1,
                                       "aborted_transactions": None, "preferred_read_replica": -1, "records": b""}
                parts.append(row)
                if name is None:
                    row["error_code"] = ErrorCode.unknown_topic_id
                elif (code := self._partition(name, p.partition)) != ErrorCode.none:
                    row["error_code"] = code
                if row["error_code"] != ErrorCode.none:
                    errors = True
                    continue
                c = self.cluster
                hwm, start = c.end_offset(name, p.partition), c.log_start_offset(name, p.partition)
                row.update(high_watermark=hwm, last_stable_offset=c.last_stable_offset(name, p.partition),
                           log_start_offset=start)
                if not start <= p.fetch_offset <= hwm:
                    row["error_code"], errors = ErrorCode.offset_out_of_range, True
                    continue
                chunks, used, aborted = [], 0, {}
                for b in c.read(name, p.partition, p.fetch_offset, read_committed=committed):
                    limit = min(p.partition_max_bytes, budget - used)
                    # the first batch goes out even when too big, so that a consumer always
                    # progresses (KIP-74); later ones only while they fit both limits
                    if chunks or size:
                        if len(b.data) > limit:
                            break
                    chunks.append(b.data)
                    used += len(b.data)
                    if committed and b.aborted:
                        aborted.setdefault(b.producer_id, b.base_offset)
                if committed:
                    row["aborted_transactions"] = [{"producer_id": pid, "first_offset": first}
                                                   for pid, first in aborted.items()]
                row["records"] = b"".join(chunks)
                size += used
                budget -= used
            key = {"topic_id": t.topic_id} if by_id else {"topic": t.topic}
            responses.append({**key, "partitions": parts})
        return {"throttle_time": 0, "error_code": ErrorCode.none, "session_id": 0, "responses": responses}, size, errors
