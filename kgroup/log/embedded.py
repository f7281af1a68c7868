"""The embedded `__consumer_offsets` log: what the coordinator appends to and replays from.

Every `append` encodes exactly one magic-2 batch, as Kafka's coordinator runtime writes one
batch per append, and keeps its bytes, so `write()` produces segment files holding exactly
those batches and `read()` rebuilds the log from segment files (ours or a broker's).

Batch details follow Kafka's `CoordinatorRuntime`: CreateTime, every record stamped with the
append time, baseSequence 0 (Kafka passes 0 whether or not there is a producer id), the
producer id/epoch of a transactional offset commit, and the partition leader epoch the broker
would stamp. Transaction markers are control batches as the broker writes them
(`MemoryRecords.withEndTransactionMarker`: baseSequence -1).
"""
from __future__ import annotations

import heapq
import os
import struct
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from .batch import encode_batch, encode_control_batch, read_batches
from .compression import Compression
from .model import ControlMarker, ControlType, CorruptBatch, RecordBatch
from .partitioner import DEFAULT_OFFSETS_PARTITIONS
from .segment import parse_partition_dir_name, parse_segment_file_name, partition_dir_name, write_segment

__all__ = ["OffsetsLog", "LogEntry"]

_UNSET: Any = object()
_CONTROL_KEY = struct.Struct(">hh")
_MARKER_VALUE = struct.Struct(">hi")
_COORDINATOR_BASE_SEQUENCE = 0
_DEFAULT_TOPIC = "__consumer_offsets"
_tnew = tuple.__new__


class _EntryFields(NamedTuple):
    position: int
    partition: int
    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    producer_id: int = -1
    producer_epoch: int = -1
    is_transactional: bool = False
    control: ControlMarker | None = None


class LogEntry(_EntryFields):
    """One record of the embedded log (immutable; a named tuple of the ten public fields).

    `position` is the 0-based global append sequence number, `offset` the Kafka offset within
    `partition`. `record` is the typed coordinator record: the object that was appended, or
    decoded on first access with `kgroup.records.decode_record` (which raises its
    `RecordError` on bad bytes) and cached; None for control records, whose `control` is set.
    Equality and hashing use the ten fields only.
    """

    # No __slots__: the instance dict (created lazily by CPython) caches the typed record and,
    # for a topic other than __consumer_offsets, remembers the topic to decode with.

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"LogEntry is immutable (cannot set {name})")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"LogEntry is immutable (cannot delete {name})")

    @property
    def record(self) -> Any:
        state = self.__dict__
        rec = state.get("_record", _UNSET)
        if rec is _UNSET:
            if self.control is not None:
                return None
            from kgroup.records import decode_record  # lazy: kgroup.records sits above this layer

            rec = decode_record(self.key, self.value, topic=state.get("_topic", _DEFAULT_TOPIC))
            state["_record"] = rec
        return rec

    @property
    def is_control(self) -> bool:
        return self.control is not None

    @property
    def is_tombstone(self) -> bool:
        return self.control is None and self.value is None

    def __repr__(self) -> str:
        what = f"control={self.control!r}" if self.control else f"key={self.key!r}, value={self.value!r}"
        txn = f", producer_id={self.producer_id}, producer_epoch={self.producer_epoch}" if self.producer_id >= 0 else ""
        return (f"LogEntry(position={self.position}, partition={self.partition}, offset={self.offset}, "
                f"timestamp={self.timestamp}, {what}{txn}{', transactional' if self.is_transactional else ''})")


def _attach(entry: LogEntry, record: Any, topic: str) -> LogEntry:
    """Remember the typed record (if known) and a non-default topic on `entry`."""
    if record is not _UNSET:
        entry.__dict__["_record"] = record
    if topic != _DEFAULT_TOPIC:
        entry.__dict__["_topic"] = topic
    return entry


def _pair(item: Any) -> tuple[Any, bytes, bytes | None]:
    """(typed record or _UNSET, key, value) of one item given to `append`."""
    encode = getattr(item, "encode", None)
    if encode is not None and not isinstance(item, (str, bytes)):  # typed records may be tuples too
        key, value = encode()
        typed = item
    elif isinstance(item, (tuple, list)):
        if len(item) != 2:
            raise ValueError(f"a raw record is a (key, value) pair, got {len(item)} items")
        key, value = item
        typed = _UNSET
    else:
        raise TypeError(f"cannot append {type(item).__name__}: expected a typed record or a (key, value) pair")
    if key is None:
        raise ValueError("coordinator records always have a key")
    key = bytes(key)
    value = None if value is None else bytes(value)
    return typed, key, value


class OffsetsLog:
    """An in-memory `__consumer_offsets` (or `__share_group_state`) topic made of encoded batches."""

    def __init__(self, num_partitions: int = DEFAULT_OFFSETS_PARTITIONS, *, topic: str = "__consumer_offsets",
                 compression: Compression | int | str = Compression.NONE, partition_leader_epoch: int = 0):
        if num_partitions <= 0:
            raise ValueError(f"num_partitions must be positive, got {num_partitions}")
        self.num_partitions = num_partitions
        self.topic = topic
        self.compression = Compression.parse(compression)
        self.partition_leader_epoch = partition_leader_epoch
        #: how many coordinators loaded this log (or the log it was copied from) to take it over
        self.takeovers = 0
        self._entries: list[LogEntry] = []
        self._by_partition: dict[int, list[LogEntry]] = {}
        self._batches: dict[int, list[bytes]] = {}
        self._end: dict[int, int] = {}

    # ---- appending -----------------------------------------------------------------------
    def _check_partition(self, partition: int) -> None:
        if not 0 <= partition < self.num_partitions:
            raise ValueError(f"partition {partition} outside 0..{self.num_partitions - 1}")

    def _store(self, partition: int, data: bytes, entries: list[LogEntry], next_offset: int) -> None:
        self._batches.setdefault(partition, []).append(data)
        self._entries.extend(entries)
        self._by_partition.setdefault(partition, []).extend(entries)
        self._end[partition] = next_offset

    def append(self, partition: int, records: Iterable[Any], *, timestamp: int, producer_id: int = -1,
               producer_epoch: int = -1, transactional: bool = False,
               max_batch_bytes: int | None = None) -> list[LogEntry]:
        """Append `records` (typed records with `.encode()` or raw (key, value) pairs) as one batch.

        Returns the new entries; an empty `records` appends nothing. A batch larger than
        `max_batch_bytes` raises RecordTooLargeError and appends nothing.
        """
        self._check_partition(partition)
        if transactional and producer_id < 0:
            raise ValueError("a transactional append needs a producer id")
        items = [_pair(r) for r in records]
        if not items:
            return []
        base = self._end.get(partition, 0)
        data = encode_batch([(k, v, timestamp) for _t, k, v in items], base_offset=base,
                            compression=self.compression, producer_id=producer_id, producer_epoch=producer_epoch,
                            base_sequence=_COORDINATOR_BASE_SEQUENCE, transactional=transactional,
                            partition_leader_epoch=self.partition_leader_epoch)
        if max_batch_bytes is not None and len(data) > max_batch_bytes:
            from kgroup.errors import RecordTooLargeError
            raise RecordTooLargeError(len(data), partition, max_batch_bytes)
        start = len(self._entries)
        topic = self.topic
        entries = [_attach(_tnew(LogEntry, (start + i, partition, base + i, timestamp, k, v, producer_id,
                                            producer_epoch, transactional, None)), typed, topic)
                   for i, (typed, k, v) in enumerate(items)]
        self._store(partition, data, entries, base + len(entries))
        return entries

    def append_marker(self, partition: int, *, commit: bool, producer_id: int, producer_epoch: int,
                      coordinator_epoch: int = 0, timestamp: int) -> LogEntry:
        """Append a COMMIT or ABORT transaction marker (a control batch) for `producer_id`."""
        self._check_partition(partition)
        if producer_id < 0:
            raise ValueError("a transaction marker needs a producer id")
        ctype = ControlType.COMMIT if commit else ControlType.ABORT
        offset = self._end.get(partition, 0)
        data = encode_control_batch(ctype, base_offset=offset, producer_id=producer_id,
                                    producer_epoch=producer_epoch, coordinator_epoch=coordinator_epoch,
                                    timestamp=timestamp, partition_leader_epoch=self.partition_leader_epoch)
        marker = ControlMarker(ctype, coordinator_epoch)
        key = _CONTROL_KEY.pack(0, int(ctype))
        value = _MARKER_VALUE.pack(0, coordinator_epoch)
        entry = _attach(LogEntry(len(self._entries), partition, offset, timestamp, key, value, producer_id,
                                 producer_epoch, True, marker), _UNSET, self.topic)
        self._store(partition, data, [entry], offset + 1)
        return entry

    def append_batch_bytes(self, partition: int, data: bytes) -> list[LogEntry]:
        """Append one already-encoded batch (any magic) as is, e.g. a batch read from a dump."""
        self._check_partition(partition)
        items = list(read_batches(data))
        if len(items) != 1 or isinstance(items[0], CorruptBatch) or items[0].size != len(data):
            raise ValueError(f"expected exactly one valid batch, got {items!r:.200}")
        return self._add_read_batch(partition, bytes(data), items[0])

    def _add_read_batch(self, partition: int, data: bytes, batch: RecordBatch) -> list[LogEntry]:
        end = self._end.get(partition, 0)
        if batch.base_offset < end:
            raise ValueError(f"batch at offset {batch.base_offset} is below the end offset {end} "
                             f"of partition {partition}")
        control = batch.control_marker if batch.is_control else None
        start = len(self._entries)
        txn = batch.is_transactional
        pid, pepoch = batch.producer_id, batch.producer_epoch
        entries = [_tnew(LogEntry, (start + i, partition, r[0], r[1], r[2], r[3], pid, pepoch, txn, control))
                   for i, r in enumerate(batch.records)]
        if self.topic != _DEFAULT_TOPIC:
            for e in entries:
                _attach(e, _UNSET, self.topic)
        self._store(partition, data, entries, max(end, batch.next_offset))
        return entries

    # ---- reading -------------------------------------------------------------------------
    def entries(self, partition: int | None = None) -> list[LogEntry]:
        """Entries in global append order, or one partition's in offset order."""
        if partition is None:
            return list(self._entries)
        return list(self._by_partition.get(partition, ()))

    def __iter__(self) -> Iterator[LogEntry]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def entry_at(self, position: int) -> LogEntry:
        """The entry with global position `position`."""
        if position < 0:
            raise IndexError(f"negative log position {position}")
        return self._entries[position]

    def end_offset(self, partition: int) -> int:
        """The next offset `partition` will assign (its log end offset)."""
        self._check_partition(partition)
        return self._end.get(partition, 0)

    def partitions_in_use(self) -> list[int]:
        """Partitions holding at least one batch, ascending."""
        return sorted(p for p, batches in self._batches.items() if batches)

    def batches(self, partition: int) -> list[bytes]:
        """The encoded batches of `partition`, in offset order."""
        return list(self._batches.get(partition, ()))

    def __repr__(self) -> str:
        return (f"OffsetsLog(topic={self.topic!r}, num_partitions={self.num_partitions}, entries={len(self)}, "
                f"partitions_in_use={self.partitions_in_use()})")

    # ---- files ---------------------------------------------------------------------------
    def write(self, directory: str | os.PathLike[str]) -> list[Path]:
        """Write `<topic>-<p>/<base offset>.log` (+ `.index`, `.timeindex`) for every non-empty partition.

        The segment holds the very bytes `append` produced; it is named by the first batch's base
        offset (0 for a log built by appending). Returns the `.log` paths.
        """
        root = Path(directory)
        paths = []
        for p in self.partitions_in_use():
            batches = self._batches[p]
            first = next(b for b in read_batches(batches[0]) if isinstance(b, RecordBatch))
            paths.append(write_segment(root / partition_dir_name(p, self.topic), first.base_offset, batches))
        return paths

    @classmethod
    def read(cls, source: str | os.PathLike[str] | Sequence[str | os.PathLike[str]], *,
             num_partitions: int | None = None, topic: str | None = None,
             compression: Compression | int | str = Compression.NONE,
             partition_leader_epoch: int = 0) -> tuple[OffsetsLog, list[CorruptBatch]]:
        """Rebuild a log from segment files; returns it with the corrupt ranges found.

        `source`: a directory holding `<topic>-<p>` partition directories (a broker log dir or
        what `write` produced), a partition directory, a `.log` file inside one, or a list of
        those. Each partition's segments are read in base-offset order.

        Global order: the partitions' batches are merged by (timestamp of the batch's first
        record, partition, base offset) -- each partition stays in offset order and a batch's
        records stay together -- so a log whose appends had non-decreasing timestamps reads
        back in its original order. `num_partitions` defaults to 50, or more if a higher
        partition number is found. A control batch whose control record cannot be decoded, or
        a batch whose offsets go back below what was already read for its partition (e.g. the
        same segment given twice), is reported as corrupt and left out. `compression`/`partition_leader_epoch` apply to
        later appends.
        """
        segments = _collect_segments(source, topic)
        chosen_topic = segments[0] if segments else (topic or "__consumer_offsets")
        by_partition: dict[int, list[Path]] = segments[1] if segments else {}
        if num_partitions is None:
            num_partitions = max([DEFAULT_OFFSETS_PARTITIONS, *(p + 1 for p in by_partition)])
        log = cls(num_partitions, topic=chosen_topic, compression=compression,
                  partition_leader_epoch=partition_leader_epoch)
        corrupt: list[CorruptBatch] = []
        streams = []
        for partition, files in sorted(by_partition.items()):
            if partition >= num_partitions:
                raise ValueError(f"partition {partition} found but num_partitions is {num_partitions}")
            good = []
            for path in sorted(files, key=lambda f: parse_segment_file_name(f) or 0):
                data = path.read_bytes()
                for item in read_batches(data, source=str(path)):
                    if isinstance(item, CorruptBatch):
                        corrupt.append(item)
                        continue
                    if item.is_control:
                        try:
                            item.control_marker
                        except ValueError as exc:
                            corrupt.append(CorruptBatch(str(path), item.position, f"invalid control record: {exc}",
                                                        item.size))
                            continue
                    first_ts = item.records[0].timestamp if item.records else item.max_timestamp
                    good.append(((first_ts, partition, item.base_offset), partition,
                                 data[item.position:item.position + item.size], item))
            streams.append(good)
        for _key, partition, raw, batch in heapq.merge(*streams, key=lambda g: g[0]):
            try:
                log._add_read_batch(partition, raw, batch)
            except ValueError as exc:  # e.g. the same segment given twice
                corrupt.append(CorruptBatch(batch.source, batch.position, f"not appended: {exc}", batch.size))
        return log, corrupt


def _collect_segments(source: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
                      topic: str | None) -> tuple[str, dict[int, list[Path]]] | None:
    """(topic, {partition: [.log paths]}) for the inputs `OffsetsLog.read` accepts."""
    if isinstance(source, (str, os.PathLike)):
        sources = [Path(source)]
    else:
        sources = [Path(s) for s in source]
    found: dict[str, dict[int, list[Path]]] = {}

    def add(topic_name: str, partition: int, path: Path) -> None:
        found.setdefault(topic_name, {}).setdefault(partition, []).append(path)

    def add_partition_dir(d: Path, parsed: tuple[str, int]) -> None:
        for f in d.iterdir():
            if f.is_file() and parse_segment_file_name(f.name) is not None:
                add(parsed[0], parsed[1], f)

    for s in sources:
        if s.is_file():
            parsed = parse_partition_dir_name(s.parent.name)
            if parsed is None or parse_segment_file_name(s.name) is None:
                raise ValueError(f"{s}: expected a <20-digit offset>.log file inside a <topic>-<partition> directory")
            add(parsed[0], parsed[1], s)
        elif s.is_dir():
            parsed = parse_partition_dir_name(s.name)
            if parsed is not None and not any(parse_partition_dir_name(c.name) for c in s.iterdir() if c.is_dir()):
                add_partition_dir(s, parsed)
                continue
            for child in sorted(s.iterdir()):
                child_parsed = parse_partition_dir_name(child.name) if child.is_dir() else None
                if child_parsed is not None:
                    add_partition_dir(child, child_parsed)
                    found.setdefault(child_parsed[0], {}).setdefault(child_parsed[1], [])
        else:
            raise FileNotFoundError(s)
    if not found:
        return None
    if topic is None:
        if "__consumer_offsets" in found:
            topic = "__consumer_offsets"
        elif len(found) == 1:
            topic = next(iter(found))
        else:
            raise ValueError(f"several topics found ({', '.join(sorted(found))}); pass topic=")
    if topic not in found:
        raise ValueError(f"no partition directories of topic {topic!r} found (found: {', '.join(sorted(found))})")
    return topic, {p: files for p, files in found[topic].items() if files}
