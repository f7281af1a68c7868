"""Simulated cluster metadata: topics, topic ids, partitions, racks, log end offsets, and the
partitions' data (real magic-2 record batches) for share groups to fetch."""
from __future__ import annotations

import bisect
import random
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from kgroup.authorizer import Authorizer


class UnknownTopicError(KeyError):
    """No topic of that name (or id) exists in the simulated cluster."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


@dataclass
class Topic:
    name: str
    topic_id: uuid.UUID
    partitions: int
    #: racks of each partition's replicas (for rack-aware assignors); partition -> racks
    racks: dict[int, list[str]] = field(default_factory=dict)
    #: log end offset per partition (for lag); `Cluster.produce` keeps it at the data's end
    end_offsets: dict[int, int] = field(default_factory=dict)
    #: produced data per partition (only partitions something was produced to)
    logs: dict[int, "PartitionLog"] = field(default_factory=dict)


@dataclass(slots=True)
class StoredBatch:
    """One record batch of a partition's log: its encoded bytes (magic 2) and what a reader
    needs without decoding them."""

    base_offset: int
    last_offset: int
    data: bytes
    max_timestamp: int
    producer_id: int = -1
    transactional: bool = False
    #: a transaction marker (control batch)
    control: bool = False
    #: for transactional data: None while the transaction is open, True committed, False aborted
    committed: bool | None = None

    @property
    def aborted(self) -> bool:
        return self.transactional and not self.control and self.committed is False

    @property
    def record_count(self) -> int:
        return self.last_offset - self.base_offset + 1


@dataclass
class PartitionLog:
    """The data of one topic-partition: batches in offset order, the log start offset (moved
    by DeleteRecords) and the open transactions (they hold the last stable offset back)."""

    batches: list[StoredBatch] = field(default_factory=list)
    #: base offset of each batch, for bisect
    bases: list[int] = field(default_factory=list)
    log_start_offset: int = 0
    #: producer id -> first offset of its open transaction
    open_transactions: dict[int, int] = field(default_factory=dict)


class Cluster:
    """Topic metadata the coordinator consults. Changes bump `metadata_version`.

    Topic ids are random unless given; pass `seed` for reproducible ids.
    """

    def __init__(self, topics: dict[str, int] | None = None, *, racks: Iterable[str] = (), seed: int | None = None) -> None:
        self._topics: dict[str, Topic] = {}
        self._by_id: dict[uuid.UUID, Topic] = {}
        self.racks = list(racks)
        self._rng = random.Random(seed) if seed is not None else None
        self.metadata_version = 0
        #: the metadata version of the last topic creation (Kafka's `lastMetadataImageWithNewTopics`):
        #: regular expressions resolved before it may match more now
        self.last_version_with_new_topics = 0
        #: dynamic group configurations (Kafka keeps them in the cluster metadata):
        #: group id -> {per-group config name: value}; see kgroup.group_configs
        self.group_configs: dict[str, dict[str, object]] = {}
        #: simulated latency of a CreateTopics request sent by the coordinator (Streams internal topics)
        self.topic_creation_delay_ms = 0
        #: the clock giving produced records their CreateTime when none is given (the
        #: coordinator attaches its own); None: timestamp 0
        self.clock: Any = None
        self._next_producer_id = 1000
        #: the cluster's ACLs (Kafka keeps them in the cluster metadata); coordinators check
        #: them only when built with `authorizer=True`
        self.authorizer = Authorizer()
        for name, partitions in (topics or {}).items():
            self.create_topic(name, partitions)

    # -- topics -------------------------------------------------------------------
    def create_topic(self, name: str, partitions: int, topic_id: uuid.UUID | None = None) -> uuid.UUID:
        """Create a topic (as CreateTopics does); returns its topic id."""
        if not name or len(name) > 249:
            raise ValueError(f"invalid topic name {name!r}")
        if name in self._topics:
            raise ValueError(f"topic {name!r} already exists")
        if partitions < 1:
            raise ValueError(f"topic {name!r} needs at least one partition, got {partitions}")
        if topic_id is None:
            topic_id = uuid.UUID(int=self._rng.getrandbits(128)) if self._rng else uuid.uuid4()
        if topic_id in self._by_id:
            raise ValueError(f"topic id {topic_id} is already used by {self._by_id[topic_id].name!r}")
        topic = Topic(name, topic_id, partitions)
        self._assign_racks(topic, range(partitions))
        self._topics[name] = topic
        self._by_id[topic_id] = topic
        self.metadata_version += 1
        self.last_version_with_new_topics = self.metadata_version
        return topic_id

    def delete_topic(self, name: str) -> None:
        topic = self.topic(name)
        del self._topics[name]
        del self._by_id[topic.topic_id]
        self.metadata_version += 1

    def increase_partitions(self, name: str, total: int) -> None:
        """Grow `name` to `total` partitions, as Kafka's CreatePartitions does (never shrinks)."""
        topic = self.topic(name)
        if total <= topic.partitions:
            raise ValueError(f"topic {name!r} has {topic.partitions} partitions; the new total must be larger, got {total}")
        self._assign_racks(topic, range(topic.partitions, total))
        topic.partitions = total
        self.metadata_version += 1

    def _assign_racks(self, topic: Topic, partitions: range) -> None:
        # Replicas spread round-robin over racks, like a rack-aware replica placement.
        if self.racks:
            for p in partitions:
                topic.racks[p] = [self.racks[p % len(self.racks)], self.racks[(p + 1) % len(self.racks)]]

    # -- lookups ------------------------------------------------------------------
    def topic(self, name: str) -> Topic:
        try:
            return self._topics[name]
        except KeyError:
            raise UnknownTopicError(f"unknown topic {name!r}") from None

    def topic_id(self, name: str) -> uuid.UUID:
        return self.topic(name).topic_id

    def topic_name(self, topic_id: uuid.UUID) -> str:
        try:
            return self._by_id[topic_id].name
        except KeyError:
            raise UnknownTopicError(f"unknown topic id {topic_id}") from None

    def partitions(self, name: str) -> int:
        return self.topic(name).partitions

    def __contains__(self, name: object) -> bool:
        return name in self._topics

    def topics(self) -> list[Topic]:
        return sorted(self._topics.values(), key=lambda t: t.name)

    def topic_names(self) -> list[str]:
        return sorted(self._topics)

    # -- log end offsets (for lag) ------------------------------------------------
    def set_end_offset(self, name: str, partition: int, end_offset: int) -> None:
        topic = self.topic(name)
        if not 0 <= partition < topic.partitions:
            raise ValueError(f"{name!r} has no partition {partition}")
        topic.end_offsets[partition] = end_offset

    def end_offset(self, name: str, partition: int) -> int:
        return self.topic(name).end_offsets.get(partition, 0)

    # -- data: produce, read, delete records ----------------------------------------
    def _log(self, name: str, partition: int) -> tuple[Topic, PartitionLog]:
        topic = self.topic(name)
        if not 0 <= partition < topic.partitions:
            raise ValueError(f"{name!r} has no partition {partition}")
        log = topic.logs.get(partition)
        if log is None:
            log = topic.logs[partition] = PartitionLog()
            # data starts where the lag bookkeeping says the log ends (set_end_offset)
            end = topic.end_offsets.get(partition, 0)
            log.log_start_offset = end
        return topic, log

    def produce(self, topic: str, partition: int, values: Sequence[Any], keys: Sequence[Any] | None = None,
                headers: Sequence[Any] | None = None, timestamp: int | Sequence[int] | None = None,
                transactional: str | None = None, *, producer_id: int | None = None) -> int:
        """Append ONE record batch (magic 2) of `values` to `topic`-`partition`; returns its base offset.

        Values and keys are bytes, str (UTF-8) or None; `keys`/`headers` run parallel to `values`; `timestamp` is one CreateTime for all
        records or one per record (default: the cluster clock). `transactional`: None (plain),
        "commit" or "abort" (the batch and its marker, so the transaction is decided at once),
        or "open" (the transaction stays open, holding the last stable offset, until
        `end_transaction`); `producer_id` reuses an open transaction's producer."""
        from kgroup.log.batch import encode_batch
        t, log = self._log(topic, partition)
        values = list(values)
        if not values:
            raise ValueError("produce needs at least one record")
        n = len(values)
        keys = list(keys) if keys is not None else [None] * n
        hdrs = list(headers) if headers is not None else [()] * n
        if len(keys) != n or len(hdrs) != n:
            raise ValueError("keys and headers must be as many as values")
        if timestamp is None:
            ts: list[int] = [self.clock.now_ms() if self.clock is not None else 0] * n
        elif isinstance(timestamp, int):
            ts = [timestamp] * n
        else:
            ts = [int(x) for x in timestamp]
            if len(ts) != n:
                raise ValueError("one timestamp per record, or one for all")
        if transactional not in (None, "commit", "abort", "open"):
            raise ValueError(f"transactional is None, 'commit', 'abort' or 'open', got {transactional!r}")
        base = self.end_offset(topic, partition)
        pid = -1
        if transactional is not None:
            if producer_id is None:
                pid = self._next_producer_id
                self._next_producer_id += 1
            else:
                pid = producer_id
        elif producer_id is not None:
            raise ValueError("producer_id is for transactional batches")
        def b(x: Any) -> Any:  # str keys and values are UTF-8, as a StringSerializer writes them
            return x.encode() if isinstance(x, str) else x
        records = [(b(k), b(v), x, h) for k, v, x, h in zip(keys, values, ts, hdrs)]
        data = encode_batch(records, base_offset=base, producer_id=pid, producer_epoch=0 if pid >= 0 else -1,
                            base_sequence=0 if pid >= 0 else -1, transactional=transactional is not None)
        batch = StoredBatch(base, base + n - 1, data, max(ts), pid, transactional is not None)
        self._append(t, partition, log, batch)
        if transactional is not None:
            log.open_transactions.setdefault(pid, base)
            if transactional != "open":
                self.end_transaction(topic, partition, pid, commit=transactional == "commit")
        return base

    def append_batch(self, topic: str, partition: int, data: bytes, *, last_offset_delta: int, max_timestamp: int,
                     producer_id: int = -1, transactional: bool = False) -> int:
        """Append one record batch (magic 2) exactly as a producer sent it, at the log end;
        returns its base offset. Only the base offset and partition leader epoch (0) are
        rewritten, as a leader does: both lie outside the batch CRC. The caller checked it."""
        t, log = self._log(topic, partition)
        base = self.end_offset(topic, partition)
        data = base.to_bytes(8, "big", signed=True) + data[8:12] + b"\0\0\0\0" + data[16:]
        self._append(t, partition, log, StoredBatch(base, base + last_offset_delta, data, max_timestamp,
                                                    producer_id, transactional))
        if transactional:
            log.open_transactions.setdefault(producer_id, base)
        return base

    def new_producer_id(self) -> int:
        """A producer id no other producer of this cluster was given (InitProducerId)."""
        pid = self._next_producer_id
        self._next_producer_id += 1
        return pid

    def _append(self, t: Topic, partition: int, log: PartitionLog, batch: StoredBatch) -> None:
        log.batches.append(batch)
        log.bases.append(batch.base_offset)
        t.end_offsets[partition] = batch.last_offset + 1

    def end_transaction(self, topic: str, partition: int, producer_id: int, *, commit: bool) -> int:
        """Write the COMMIT or ABORT marker of `producer_id`'s open transaction; returns its offset."""
        from kgroup.log.batch import ControlType, encode_control_batch
        t, log = self._log(topic, partition)
        if producer_id not in log.open_transactions:
            raise ValueError(f"producer {producer_id} has no open transaction on {topic}-{partition}")
        first = log.open_transactions.pop(producer_id)
        for b in log.batches[bisect.bisect_left(log.bases, first):]:
            if b.producer_id == producer_id and b.transactional and not b.control and b.committed is None:
                b.committed = commit
        offset = self.end_offset(topic, partition)
        now = self.clock.now_ms() if self.clock is not None else 0
        data = encode_control_batch(ControlType.COMMIT if commit else ControlType.ABORT, base_offset=offset,
                                    producer_id=producer_id, producer_epoch=0, timestamp=now)
        self._append(t, partition, log, StoredBatch(offset, offset, data, now, producer_id, True, True, commit))
        return offset

    def open_transactions(self, topic: str, partition: int) -> dict[int, int]:
        """producer id -> first offset of each open transaction on the partition."""
        return dict(self._log(topic, partition)[1].open_transactions)

    def log_start_offset(self, topic: str, partition: int) -> int:
        """The partition's log start offset (earliest readable offset)."""
        t = self.topic(topic)
        log = t.logs.get(partition)
        return log.log_start_offset if log is not None else t.end_offsets.get(partition, 0)

    def last_stable_offset(self, topic: str, partition: int) -> int:
        """The first offset of the earliest open transaction, else the log end offset."""
        t = self.topic(topic)
        log = t.logs.get(partition)
        end = t.end_offsets.get(partition, 0)
        if log is None or not log.open_transactions:
            return end
        return min(min(log.open_transactions.values()), end)

    def read(self, topic: str, partition: int, offset: int, *, max_offset: int | None = None,
             read_committed: bool = False, max_records: int | None = None) -> list[StoredBatch]:
        """The batches holding offsets from `offset` on (the first one may start before it),
        up to the high watermark, or the last stable offset with `read_committed`, and below
        `max_offset` when given; whole batches until they hold `max_records` offsets from
        `offset` on (at least one batch). Empty when nothing is there yet."""
        t = self.topic(topic)
        log = t.logs.get(partition)
        if log is None:
            return []
        limit = self.last_stable_offset(topic, partition) if read_committed else t.end_offsets.get(partition, 0)
        if max_offset is not None:
            limit = min(limit, max_offset)
        offset = max(offset, log.log_start_offset)
        i = bisect.bisect_right(log.bases, offset) - 1
        if i < 0:
            i = 0
        out = []
        batches = log.batches
        while i < len(batches):
            b = batches[i]
            if b.base_offset >= limit:
                break
            if b.last_offset >= offset:
                if read_committed and b.last_offset >= limit:
                    break
                out.append(b)
                if max_records is not None and b.last_offset - offset + 1 >= max_records:
                    break
            i += 1
        return out

    def offset_for_timestamp(self, topic: str, partition: int, timestamp: int) -> int:
        """The earliest offset whose record timestamp is >= `timestamp` (ListOffsets by
        timestamp); the log end offset when there is none."""
        from kgroup.log.batch import read_batches
        t = self.topic(topic)
        log = t.logs.get(partition)
        end = t.end_offsets.get(partition, 0)
        if log is None:
            return end
        for b in log.batches:
            if b.control or b.max_timestamp < timestamp or b.last_offset < log.log_start_offset:
                continue
            for batch in read_batches(b.data, strict=True):
                for r in batch.records:
                    if r.timestamp >= timestamp and r.offset >= log.log_start_offset:
                        return r.offset
        return end

    def delete_records(self, topic: str, partition: int, before_offset: int) -> int:
        """Move the log start offset to `before_offset` (DeleteRecords); returns the new low
        watermark. Batches wholly below it are dropped. Beyond the high watermark: ValueError
        (Kafka's OFFSET_OUT_OF_RANGE); -1 means the high watermark."""
        t, log = self._log(topic, partition)
        end = t.end_offsets.get(partition, 0)
        if before_offset == -1:
            before_offset = end
        if not 0 <= before_offset <= end:
            raise ValueError(f"offset {before_offset} is outside {topic}-{partition} (high watermark {end})")
        if before_offset > log.log_start_offset:
            log.log_start_offset = before_offset
            i = bisect.bisect_right(log.bases, before_offset) - 1
            keep = 0 if i < 0 else (i if log.batches[i].last_offset >= before_offset else i + 1)
            del log.batches[:keep]
            del log.bases[:keep]
        return log.log_start_offset

    def __repr__(self) -> str:
        return f"Cluster({ {t.name: t.partitions for t in self.topics()} })"
