"""Dumps cut into independent byte ranges, decoded into column chunks (no Spark here).

`kgroup.dumps.spark` plans on the driver with `plan_scan` and runs `run_task` on executors;
both are plain Python so they can be tested and profiled without a cluster.

- Planning: the inputs are grouped into units exactly as `read_dump` groups them (one per
  partition). A segment file larger than `split_bytes` is cut at batch starts: the broker's
  `.index` gives candidate positions, otherwise batch headers are hopped over (base offset +
  length, seeking, nothing decoded); every cut is checked to be a CRC-valid batch. Text dumps
  are one task per file.
- Running a segment task: magic-2 batches (header and CRC checked, data or control) gather into
  runs that `kgroup.dumps.columnar` decodes column-wise with numpy; a run it declines is read
  record by record. Everything else (magic 0/1, anything odd) goes through kgroup's
  resynchronising reader exactly where a reader of the whole file meets it, so a corrupt span
  inside a range is a row with `problem="corrupt_span"` (the span `read_dump` reports) and
  every intact batch around it is still decoded. Transaction status
  is decided by the COMMIT/ABORT markers that follow in the same task; for the few records
  whose marker lies beyond the range, the task looks ahead through the following ranges of its
  partition, hopping over batch headers and reading control batches only (no other task, no
  shuffle, nothing collected).
- Rows come out as `columnar.Block`s and `Chunk`s, turned into Arrow record batches (`COLUMNS`,
  `arrow_schema`, from `kgroup.dumps.columns`). Plain OffsetCommit records (the bulk of any dump) never become Python
  objects: their JSON (exactly `record.to_json()`) is assembled by Arrow. Other records are
  decoded to typed records and rendered with a reused JSON encoder (`record_json`), identical
  to `to_json`.
"""
from __future__ import annotations

import bisect
import gc
import mmap
import os
import struct
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cramjam
import numpy as np
import pyarrow as pa
from crc32c import crc32c

from kgroup.log import ControlMarker, ControlType, CorruptBatch, read_batches
from kgroup.log.batch import _decode_records, _probe
from kgroup.log.compression import CompressionError, decompress
from kgroup.log.segment import parse_segment_file_name, read_offset_index
from kgroup.records import (RECORD_TYPES, SHARE_STATE_RECORD_TYPES, RecordError, UnknownRecordTypeError,
                            decode_record)
from kgroup.records.jsondoc import json_text
from kgroup.records.records import (CONSUMER_OFFSETS, SHARE_GROUP_STATE, key_renderer, record_type_name,
                                    value_renderer)
from kgroup.records.uuids import uuid_to_kafka_str

from .columnar import Block, RunBatch, parse_run
from .columns import COLUMNS, CONST_COLUMNS, arrow_schema, const_arrays
from .model import DumpEntry, DumpReport
from .reader import _path_list, _plan, _size, read_dump
from .segments import SegmentUnit

__all__ = ["COLUMNS", "ScanTask", "ScanPlan", "plan_scan", "batch_cuts", "run_task", "Chunk", "add_entry",
           "arrow_schema", "find_markers", "record_json", "DEFAULT_SPLIT_BYTES", "DEFAULT_CHUNK_ROWS"]

DEFAULT_SPLIT_BYTES = 64 * 1024 * 1024
DEFAULT_CHUNK_ROWS = 32 * 1024

# Column groups of a Chunk besides the per-task CONST_COLUMNS: per record from the key (see Chunk for the rest).
_KEYCOLS = ("record_type", "record_type_id", "key", "group_id", "member_id", "topic_name", "topic_partition")
_NO_KEY = (None, None, None, None, None, None, None)
_UNDECIDED = "?"


# ------------------------------------------------------------------------------------------------
# planning (driver)


@dataclass(frozen=True)
class ScanTask:
    """One unit of work: a byte range of a segment file, or a whole text dump."""

    kind: str                   # segment | dump-log | console
    path: str
    topic: str | None
    partition: int | None = None
    start: int = 0
    end: int = 0                # segments: the range is [start, end)
    unit: int = -1              # segments: index into ScanPlan.units
    index: int = -1             # segments: this range's place in its unit


@dataclass
class ScanPlan:
    """Tasks in read order; for each segment unit (partition) its ranges in log order."""

    tasks: list[ScanTask] = field(default_factory=list)
    units: list[list[tuple[str, int, int]]] = field(default_factory=list)
    topic: str | None = None


def plan_scan(paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]], *, topic: str | None = None,
              split_bytes: int = DEFAULT_SPLIT_BYTES) -> ScanPlan:
    """Tasks for `paths` (anything `read_dump` takes), segments cut at batch starts near `split_bytes`.

    Raises like `read_dump`: FileNotFoundError for a missing path (named), DumpError for an
    unreadable or unrecognisable one.
    """
    if split_bytes <= 0:
        raise ValueError(f"split_bytes must be positive, got {split_bytes}")
    path_list = _path_list(paths, topic)
    plan = ScanPlan(topic=topic)
    for kind, item in _plan(path_list, topic):
        if kind != "segment":
            plan.tasks.append(ScanTask(kind, str(item), topic))
            continue
        assert isinstance(item, SegmentUnit)
        unit_no = len(plan.units)
        ranges: list[tuple[str, int, int]] = []
        for f in item.files:
            size = _size(f)
            cuts = batch_cuts(f, split_bytes, size=size)
            for s, e in zip(cuts, cuts[1:] + [size]):
                ranges.append((str(f), s, e))
        plan.units.append(ranges)
        for i, (p, s, e) in enumerate(ranges):
            plan.tasks.append(ScanTask("segment", p, item.topic, item.partition, s, e, unit_no, i))
    return plan


def batch_cuts(path: str | os.PathLike[str], split_bytes: int, *, size: int | None = None) -> list[int]:
    """Start positions of ranges of about `split_bytes` each: 0, then CRC-valid batch starts.

    Candidates come from the segment's `.index` (positions of batch starts) when there is one;
    otherwise batch headers are hopped over from the previous cut. Where no valid batch start can
    be found (corruption, a truncated tail) the rest of the file stays in one range.
    """
    path = Path(path)
    if size is None:
        size = _size(path)
    if size <= split_bytes:
        return [0]
    index_positions = _index_positions(path)
    cuts = [0]
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        mv = memoryview(mm)
        try:
            target = split_bytes
            while target < size:
                cut = None
                if index_positions:
                    cut = _cut_from_index(index_positions, cuts[-1], target, mm, mv, size)
                if cut is None:
                    cut = _cut_by_hopping(mm, mv, cuts[-1], target, size)
                if cut is None or cut >= size:
                    break
                cuts.append(cut)
                target = cut + split_bytes
        finally:
            mv.release()
    return cuts


def _index_positions(log: Path) -> list[int]:
    base = parse_segment_file_name(log.name)
    index = log.with_suffix(".index")
    if base is None or not index.is_file():
        return []
    try:
        return sorted({pos for _off, pos in read_offset_index(index, base)})
    except OSError:
        return []


def _cut_from_index(positions: list[int], last: int, target: int, mm: Any, mv: memoryview, size: int) -> int | None:
    i = bisect.bisect_right(positions, target) - 1
    while i >= 0 and positions[i] > last:
        pos = positions[i]
        if pos < size and _probe(mm, mv, pos, size):
            return pos
        i -= 1  # a stale or damaged index entry: try the one before
    return None


_MIN_ENTRY = 14  # the smallest magic-0 message after the 12-byte log overhead


def _cut_by_hopping(mm: Any, mv: memoryview, start: int, target: int, size: int) -> int | None:
    """The first batch start >= target, hopping over headers from `start` (a batch start)."""
    pos = start
    while pos < target:
        if pos + 17 > size or mm[pos + 16] > 2:
            return None
        length = int.from_bytes(mm[pos + 8:pos + 12], "big", signed=True)
        if length < _MIN_ENTRY:
            return None
        pos += 12 + length
        if pos > size:
            return None
    if pos >= size:
        return size
    return pos if _probe(mm, mv, pos, size) else None


# ------------------------------------------------------------------------------------------------
# rows

_RENDERERS: dict[tuple, Any] = {}


def _value_json(record: Any) -> str:
    """The `"value"` part of `record.to_json()` (the whole document is compositional)."""
    if record[1] is None:
        return "null"
    cls, version = type(record), record[2]
    render = _RENDERERS.get((cls, version))
    if render is None:
        render = _RENDERERS[(cls, version)] = value_renderer(cls, version)
    return json_text({"version": version, "data": render(record[1])})


def _key_json(record: Any) -> str:
    cls = type(record)
    render = _RENDERERS.get(cls)
    if render is None:
        render = _RENDERERS[cls] = key_renderer(cls)
    return json_text({"type": cls.TYPE, "data": render(record[0])})


def record_json(record: Any) -> str:
    """`str(record.to_json())`, put together from the key and value parts the row decoder
    caches separately (the test that they agree guards that split)."""
    return '{"key":' + _key_json(record) + ',"value":' + _value_json(record) + "}"


class Chunk:
    """Up to about `DEFAULT_CHUNK_ROWS` rows of one task, column by column, turned into Arrow.

    Key columns come from a small dictionary: `uniq` holds the distinct key descriptions of the
    chunk (see `_key_info`: built once per distinct key bytes, shared by every record with that
    key) and `kidx` each row's index into it. Other columns are lists appended to per row or
    extended per batch; columns that are mostly null live in `sparse` (column -> {row index:
    value}). The bulk of a segment's records does not come through here but through
    `kgroup.dumps.columnar` (a `Block`); a Chunk holds the rest.
    """

    __slots__ = ("const", "const_rows", "uniq", "kidx", "offset", "timestamp", "committed_offset", "leader_epoch",
                 "commit_timestamp", "position", "producer_id", "txn", "sparse", "undecided")

    def __init__(self, const: tuple | None) -> None:
        self.const = const                 # source, kind, topic, partition of every row; or None:
        self.const_rows: list[tuple] = []  # ... then given per row (text dumps mix partitions)
        self.uniq: list[list] = []
        self.kidx: list[int] = []
        self.offset: list = []
        self.timestamp: list = []
        self.committed_offset: list = []
        self.leader_epoch: list = []
        self.commit_timestamp: list = []
        self.position: list = []
        self.producer_id: list = []
        self.txn: list = []
        self.sparse: dict[str, dict[int, Any]] = {name: {} for name in _SPARSE}
        self.undecided = 0

    def __len__(self) -> int:
        return len(self.offset)

    def add(self, keys: tuple, offset: Any = None, timestamp: Any = None, *, position: Any = None,
            producer_id: Any = None, txn: Any = None, committed_offset: Any = None, leader_epoch: Any = None,
            commit_timestamp: Any = None, **sparse: Any) -> None:
        """One row (the slow way: for anything but the bulk of data records); `keys`: key columns."""
        i = len(self.offset)
        ki = [keys, self.uniq, None, None, None, len(self.uniq)]
        self.uniq.append(ki)
        self.kidx.append(ki[5])
        self.offset.append(offset)
        self.timestamp.append(timestamp)
        self.committed_offset.append(committed_offset)
        self.leader_epoch.append(leader_epoch)
        self.commit_timestamp.append(commit_timestamp)
        self.position.append(position)
        self.producer_id.append(producer_id)
        self.txn.append(txn)
        tomb = sparse.pop("tombstone", False)
        if tomb is not False:
            self.sparse["tombstone"][i] = tomb
        for name, value in sparse.items():
            if value is not None:
                self.sparse[name][i] = value

    def columns(self) -> dict[str, list]:
        """Column name -> list of values, in `COLUMNS` order (through `to_arrow`)."""
        batch = self.to_arrow()
        return {name: batch.column(name).to_pylist() for name, _ in COLUMNS}

    def to_arrow(self) -> Any:
        """The rows as a `pyarrow.RecordBatch` with `arrow_schema()`."""
        schema = arrow_schema()
        n = len(self)
        if self.const is not None:
            cols = const_arrays(self.const, n)
        else:
            cols = {}
            per_row = list(zip(*self.const_rows)) if n else [()] * len(CONST_COLUMNS)
            for name, col in zip(CONST_COLUMNS, per_row):
                cols[name] = pa.array(col, schema.field(name).type)
        # key columns: the chunk's distinct keys, taken per row
        idx = pa.array(self.kidx, pa.int32())
        uniq = self.uniq
        for j, name in enumerate(_KEYCOLS):
            cols[name] = pa.array([u[0][j] for u in uniq], schema.field(name).type).take(idx)
        for name in _DENSE:
            cols[name] = pa.array(getattr(self, name), schema.field(name).type)
        for name, values in self.sparse.items():
            typ = schema.field(name).type
            if name == "tombstone":
                col = [False] * n
            elif not values:
                cols[name] = pa.nulls(n, typ)
                continue
            else:
                col = [None] * n
            for i, v in values.items():
                col[i] = v
            cols[name] = pa.array(col, typ)
        return pa.RecordBatch.from_arrays([cols[f.name] for f in schema], schema=schema)


_DENSE = ("offset", "timestamp", "committed_offset", "leader_epoch", "commit_timestamp", "position",
          "producer_id", "txn")
_SPARSE = ("line", "topic_id", "generation", "member_epoch", "tombstone", "control", "json", "error", "problem",
           "corrupt_bytes")
assert sorted(CONST_COLUMNS + _KEYCOLS + _DENSE + _SPARSE) == sorted(n for n, _ in COLUMNS)


# -- record fields ----------------------------------------------------------------------------------

_NAME_TO_TYPE = {cls.NAME: t for t, cls in RECORD_TYPES.items()}
_NAME_TO_TYPE.update({cls.NAME: t for t, cls in SHARE_STATE_RECORD_TYPES.items()})
_GENERATION_FIELD = {
    "GroupMetadata": "generation", "ConsumerGroupMetadata": "epoch", "ShareGroupMetadata": "epoch",
    "StreamsGroupMetadata": "epoch", "ConsumerGroupTargetAssignmentMetadata": "assignment_epoch",
    "ShareGroupTargetAssignmentMetadata": "assignment_epoch",
    "StreamsGroupTargetAssignmentMetadata": "assignment_epoch",
}
_MEMBER_EPOCH_RECORDS = {"ConsumerGroupCurrentMemberAssignment", "ShareGroupCurrentMemberAssignment",
                         "StreamsGroupCurrentMemberAssignment"}


def _key_columns(record: Any) -> tuple:
    """(record_type, type id, key JSON, group, member, topic, partition) of a typed record."""
    key = record.key
    group = getattr(key, "group", None)
    if group is None:
        group = getattr(key, "group_id", None)
    topic = getattr(key, "topic", None)
    partition = getattr(key, "partition", None)
    return (record.NAME, record.TYPE, _key_json(record), group, getattr(key, "member_id", None),
            topic if isinstance(topic, str) else None, partition)


def _record_values(record: Any) -> dict[str, Any]:
    """The value-derived columns of a typed record (those that are set)."""
    name = record.NAME
    value = record.value
    out: dict[str, Any] = {"tombstone": value is None}
    key_tid = getattr(record.key, "topic_id", None)
    if key_tid is not None:
        out["topic_id"] = uuid_to_kafka_str(key_tid)
    if value is None:
        return out
    if name in ("OffsetCommit", "LegacyOffsetCommit"):
        tid = getattr(value, "topic_id", None)
        if record.version >= 4 and tid is not None and tid.int != 0:
            out["topic_id"] = uuid_to_kafka_str(tid)
        out["committed_offset"] = value.offset
        out["commit_timestamp"] = value.commit_timestamp
        if name == "OffsetCommit" and record.version >= 3:
            out["leader_epoch"] = value.leader_epoch
        return out
    gf = _GENERATION_FIELD.get(name)
    if gf is not None:
        out["generation"] = getattr(value, gf)
    if name in _MEMBER_EPOCH_RECORDS:
        out["member_epoch"] = value.member_epoch
    if name in ("ShareSnapshot", "ShareUpdate"):
        out["leader_epoch"] = value.leader_epoch
    return out


def _partial_key(fields: dict) -> tuple:
    """Key columns of a partial record (older text forms), with the key JSON a full record would have."""
    name = fields.get("record_type")
    group = fields.get("group")
    if name == "OffsetCommit":
        data = {"group": group, "topic": fields.get("topic"), "partition": fields.get("partition")}
    else:
        data = {"group": group}
    t = _NAME_TO_TYPE.get(name) if name else None
    key = json_text({"type": t, "data": data}) if t is not None else None
    return (name, t, key, group, None, fields.get("topic"), fields.get("partition"))


def add_entry(chunk: Chunk, entry: DumpEntry) -> None:
    """Append the row of a `DumpEntry` (text dumps; and reference rows for tests)."""
    common = dict(position=entry.position, producer_id=entry.producer_id, txn=entry.txn, line=entry.line,
                  control=entry.control, error=entry.error)
    if entry.record is not None:
        chunk.add(_key_columns(entry.record), entry.offset, entry.timestamp, json=record_json(entry.record),
                  **_record_values(entry.record), **common)
        return
    fields = entry.fields or {}
    keys = _NO_KEY
    extra: dict[str, Any] = {}
    if entry.control is None:
        if entry.key is not None:  # an undecodable record read from a segment: what its key says
            keys = _key_info(entry.key, entry.topic)[0]
        elif fields.get("unknown_type") is not None:
            keys = (None, fields["unknown_type"], None, None, None, None, None)
        elif fields.get("record_type"):
            keys = _partial_key(fields)
            extra = {"committed_offset": fields.get("offset"), "generation": fields.get("generation")}
    chunk.add(keys, entry.offset, entry.timestamp, tombstone=entry.is_tombstone, **extra, **common)


# ------------------------------------------------------------------------------------------------
# running a task (executors)

_ATTR_CONTROL = 0x20
_KEY_CACHE_LIMIT = 200_000
_VALUE_CACHE_LIMIT = 4096
_VALUE_CACHE_BYTES = 2048
# (record type, value bytes) -> (value JSON, value columns) for __consumer_offsets records off the fast path.
_VALUE_CACHE: dict[tuple[int, bytes], tuple[str, tuple]] = {}
# Key bytes -> _key_info, per topic, shared by the tasks a (reused) Python worker runs.
_KEY_CACHE: dict[str, dict[bytes, list]] = {CONSUMER_OFFSETS: {}, SHARE_GROUP_STATE: {}}


def _key_info(key: bytes | None, topic: str) -> list:
    """What every record with these key bytes shares; built once per distinct key.

    [key columns, the Chunk.uniq it was last added to, JSON up to the value, key error, unknown
    type, its index in that Chunk.uniq] (a list: the second and the last change).
    """
    try:
        rec = decode_record(key, None, topic=topic)
    except UnknownRecordTypeError as exc:
        return [(None, exc.record_type, None, None, None, None, None), None, None, "unknown", exc.record_type, 0]
    except RecordError as exc:  # a known type whose key bytes are bad
        t = struct.unpack(">h", key[:2])[0] if key is not None and len(key) >= 2 else None
        name = record_type_name(t, topic) if t is not None else None
        return [(name, t, None, None, None, None, None), None, None, str(exc), None, 0]
    kcols = _key_columns(rec)
    head = '{"key":' + kcols[2] + ',"value":'
    return [kcols, None, head, None, None, 0]


_HEADER = struct.Struct(">qiibIhiqqqhii")  # the magic-2 batch header (kgroup.log.batch)
_V2_HEADER = _HEADER.size
_ATTR_TRANSACTIONAL = 0x10
_ATTR_LOG_APPEND_TIME = 0x08


def _body(data: bytes, pos: int, end: int, attrs: int) -> tuple[bytes, int, int] | None:
    """(buffer, start, stop) of the records area of a checked magic-2 batch, decompressed; None
    when that fails (the batch then goes the long way, which says why)."""
    codec = attrs & 0x07
    if codec == 0:
        return data, pos + _V2_HEADER, end
    body = data[pos + _V2_HEADER:end]
    try:
        buf = decompress(codec, body)
    except (CompressionError, ValueError, cramjam.DecompressionError):
        return None
    return buf, 0, len(buf)


class _TaskReader:
    """Decodes one segment range into Chunks (see the module docstring)."""

    def __init__(self, plan: ScanPlan, task: ScanTask, chunk_rows: int) -> None:
        self.plan, self.task, self.chunk_rows = plan, task, chunk_rows
        self.topic = task.topic or CONSUMER_OFFSETS
        self.const = (task.path, "segment", self.topic, task.partition)
        self.keycache = _KEY_CACHE.setdefault(self.topic, {})
        # value-derived columns do not depend on the key, except share-state keys' topic id
        self.cache_values = self.topic == CONSUMER_OFFSETS
        self.values = _VALUE_CACHE
        self.queue: list[Chunk | Block] = []   # finished, in log order; released once their txn is known
        self.chunk = Chunk(self.const)          # rows read the long way
        self.run_batches: list[RunBatch] = []   # batches waiting to be decoded column-wise
        self.run_rows = 0
        self.pending: dict[int, list[tuple[Chunk | Block, int, int]]] = {}

    # -- chunks and transaction status --------------------------------------------------------------
    def _close_chunk(self) -> None:
        if len(self.chunk):
            self.queue.append(self.chunk)
            self.chunk = Chunk(self.const)

    def _ready(self) -> Iterator[Chunk | Block]:
        q = self.queue
        while q and q[0].undecided == 0:
            yield q.pop(0)

    def _resolve(self, pid: int, outcome: str) -> None:
        for chunk, start, count in self.pending.pop(pid, ()):
            chunk.txn[start:start + count] = [outcome] * count
            chunk.undecided -= count

    def finish(self) -> Iterator[Chunk | Block]:
        """Look ahead for the markers still missing, call the rest open, release everything."""
        if self.pending:
            found = find_markers(self.plan.units[self.task.unit][self.task.index + 1:], set(self.pending))
            for pid in list(self.pending):
                self._resolve(pid, found.get(pid, "open"))
        self._close_chunk()
        yield from self._ready()

    # -- reading ---------------------------------------------------------------------------------------
    def run(self) -> Iterator[Chunk | Block]:
        """Rows of the range, batch by batch.

        CRC-checked magic-2 batches join a run, decoded column-wise when the run is long enough
        or something else comes (`_flush`); anything else (older formats, a bad batch) goes
        through `read_batches` exactly as a reader of the whole file meets it, so corrupt spans
        are the ones `read_dump` reports.
        """
        t = self.task
        try:
            with open(t.path, "rb") as f:
                f.seek(t.start)
                data = f.read(t.end - t.start)
        except FileNotFoundError:
            raise FileNotFoundError(f"no such file or directory: {t.path}") from None
        n = len(data)
        mv = memoryview(data)
        header = _HEADER.unpack_from
        base = t.start
        pos = 0
        while pos < n:
            size = 0
            if n - pos >= _V2_HEADER:
                (base_offset, length, _ple, magic, crc, attrs, last_delta, base_ts, max_ts, pid, _pe, _bs,
                 count) = header(data, pos)
                end = pos + 12 + length
                if (magic == 2 and length >= _V2_HEADER - 12 and end <= n and count >= 0 and last_delta >= 0
                        and crc32c(mv[pos + 21:end]) == crc):
                    body = _body(data, pos, end, attrs)
                    if body is not None:
                        self.run_batches.append(RunBatch(body[0], body[1], body[2], count, base_offset, base_ts,
                                            max_ts if attrs & _ATTR_LOG_APPEND_TIME else None, base + pos, pid,
                                            bool(attrs & _ATTR_TRANSACTIONAL), bool(attrs & _ATTR_CONTROL), pos))
                        self.run_rows += count
                        size = end - pos
            if not size:
                self._flush(data, mv)
                size = self._generic(data, mv, pos, n)
            pos += size
            if self.run_rows >= self.chunk_rows:
                self._flush(data, mv)
            if len(self.chunk) >= self.chunk_rows:
                self._close_chunk()
            if self.queue:
                yield from self._ready()
        self._flush(data, mv)
        mv.release()
        del data
        yield from self.finish()

    def _flush(self, data: bytes, mv: memoryview) -> None:
        """The waiting run as a `Block`; batch by batch the long way when it is not plain enough."""
        batches = self.run_batches
        if not batches:
            return
        self.run_batches = []
        self.run_rows = 0
        layout = parse_run(batches)
        if layout is None:
            for b in batches:
                if b.control or not self._data_records(b):
                    self._generic(data, mv, b.at, len(data))
            return
        if not len(layout):  # only empty batches
            return
        self._close_chunk()
        fast_rows, fast = layout.offset_commits()
        slow = Chunk(self.const)
        slow_rows: list[int] = []
        block = Block(self.const, layout, fast_rows, fast, slow_rows, slow, batches)
        is_fast = np.zeros(len(layout), np.bool_)
        is_fast[fast_rows] = True
        # Transactional batches wait for their marker; a marker settles only the batches before it.
        # (An empty one, as the log cleaner leaves, has no rows to settle: it must not hold the queue.)
        waiting = [bi for bi, b in enumerate(batches) if not b.control and b.transactional and b.pid >= 0 and b.count]
        w = 0
        for r in np.flatnonzero(~is_fast).tolist():
            bi = int(layout.batch[r])
            b = batches[bi]
            key, value, offset, ts = layout.key(r), layout.value(r), int(layout.offset[r]), int(layout.timestamp[r])
            slow_rows.append(r)
            if b.control:
                while w < len(waiting) and waiting[w] < bi:
                    self._wait(block, batches, waiting[w])
                    w += 1
                block.row_txn[r] = self._control_row(slow, offset, ts, key, value, b.pid, b.position)
                continue
            ki = self.keycache.get(key) if key is not None else None
            if ki is None:
                ki = self._new_key(key)
            self._general(slow, len(slow), ki, key, value, offset, ts)
        for bi in waiting[w:]:
            self._wait(block, batches, bi)
        self.queue.append(block)

    def _wait(self, block: Block, batches: list[RunBatch], bi: int) -> None:
        block.txn[bi] = _UNDECIDED
        self.pending.setdefault(batches[bi].pid, []).append((block, bi, 1))
        block.undecided += 1

    def _generic(self, data: bytes, mv: memoryview, pos: int, n: int) -> int:
        """The batch (or corrupt span) at `pos` through `read_batches`; returns the bytes it covers."""
        t = self.task
        size = _probe(data, mv, pos, n)
        if size:  # a valid header and checksum: the batch alone tells everything
            items = read_batches(data[pos:pos + size], source=t.path, base_position=t.start + pos, _full=False)
        else:  # where reading resumes depends on what follows: give it the rest
            items = read_batches(data[pos:], source=t.path, base_position=t.start + pos, _full=False)
        item = next(iter(items))
        if type(item) is CorruptBatch:
            self.chunk.add(_NO_KEY, position=item.position, problem="corrupt_span", corrupt_bytes=item.length,
                           tombstone=None, error=f"corrupt span of {item.length} bytes: {item.reason}")
            return item.length
        if item.is_control:
            self._control(item)
        else:
            self._data(item.records, item.position, item.producer_id, item.is_transactional)
        return item.size

    def _control(self, batch: Any) -> None:
        for rec in batch.records:
            self._control_row(self.chunk, rec[0], rec[1], rec[2], rec[3], batch.producer_id, batch.position)

    def _control_row(self, chunk: Chunk, offset: int, ts: int, key: bytes | None, value: bytes | None, pid: int,
                     position: int) -> str:
        """The row of a control record; a COMMIT/ABORT settles its producer's waiting batches.
        Returns the row's `txn`."""
        try:
            marker = ControlMarker.from_record(key, value)
        except ValueError as exc:
            chunk.add(_NO_KEY, offset, ts, position=position, producer_id=pid, txn="none",
                      tombstone=value is None, error=f"invalid control record at offset {offset}: {exc}")
            return "none"
        mt = marker.type
        name = mt.name if isinstance(mt, ControlType) else f"UNKNOWN({mt})"
        outcome = "committed" if marker.is_commit else "aborted" if marker.is_abort else None
        if outcome is not None:
            self._resolve(pid, outcome)
        chunk.add(_NO_KEY, offset, ts, position=position, producer_id=pid, txn=outcome or "none", control=name)
        return outcome or "none"

    def _data_records(self, b: RunBatch) -> bool:
        """The rows of a data batch that `parse_run` declined, its records decoded by kgroup's own
        batch decoder; False (and nothing added) when they are not valid: the batch then goes the
        long way, which reports it."""
        try:
            records = _decode_records(b.buf, b.start, b.stop, b.count, b.base_offset, b.base_ts, b.fixed_ts, False)
        except (ValueError, IndexError, UnicodeDecodeError):
            return False
        self._data(records, b.position, b.pid, b.transactional)
        return True

    def _data(self, records: list, position: int, pid: int, transactional: bool) -> None:
        """Rows of data records (offset, timestamp, key, value) of one batch, decoded one by one."""
        chunk = self.chunk
        start = len(chunk)
        kget = self.keycache.get
        for i, rec in enumerate(records, start):
            key = rec[2]
            ki = kget(key)
            if ki is None:
                ki = self._new_key(key)
            self._general(chunk, i, ki, key, rec[3], rec[0], rec[1])
        self._batch_columns(chunk, start, len(records), position, pid, transactional)

    def _batch_columns(self, chunk: Chunk, start: int, n: int, position: int, pid: int,
                       transactional: bool) -> None:
        """The columns every row of a batch shares; a transactional batch waits for its marker."""
        txn = "none"
        if transactional and pid >= 0:
            txn = _UNDECIDED
            self.pending.setdefault(pid, []).append((chunk, start, n))
            chunk.undecided += n
        chunk.position.extend([position] * n)
        chunk.producer_id.extend([pid] * n)
        chunk.txn.extend([txn] * n)

    def _new_key(self, key: bytes) -> tuple:
        if len(self.keycache) >= _KEY_CACHE_LIMIT:
            self.keycache.clear()
        ki = _key_info(key, self.topic)
        if key is not None:
            self.keycache[key] = ki
        return ki

    def _general(self, chunk: Chunk, i: int, ki: tuple, key: bytes | None, value: bytes | None, offset: int,
                 ts: int) -> None:
        """Any other data record: tombstones, other types and versions, undecodable ones."""
        co = le = ct = js = None
        sparse = chunk.sparse
        if value is None and key is not None:  # like DumpEntry.is_tombstone: a keyless record is not one
            sparse["tombstone"][i] = True
        if ki[3] is not None:  # the key itself could not be decoded
            if ki[4] is not None:
                sparse["error"][i] = f"unknown record type {ki[4]} at offset {offset}"
            else:
                sparse["error"][i] = f"cannot decode record at offset {offset}: {ki[3]}"
        elif value is None:
            js = ki[2] + "null}"
            if ki[0][0] in _TOPIC_ID_KEYS:
                sparse["topic_id"][i] = _key_topic_id(key, self.topic)
        else:
            # Values repeat (a target assignment rewritten as is, ...): decoded and rendered once.
            cache_key = (ki[0][1], value)
            decoded = self.values.get(cache_key) if self.cache_values else None
            if decoded is None:
                try:
                    record = decode_record(key, value, topic=self.topic)
                except RecordError as exc:
                    sparse["error"][i] = f"cannot decode record at offset {offset}: {exc}"
                else:
                    decoded = (_value_json(record), tuple(_record_values(record).items()))
                    if self.cache_values and len(value) <= _VALUE_CACHE_BYTES:
                        if len(self.values) >= _VALUE_CACHE_LIMIT:
                            self.values.clear()
                        self.values[cache_key] = decoded
            if decoded is not None:
                js = ki[2] + decoded[0] + "}"
                for name, v in decoded[1]:
                    if name == "committed_offset":
                        co = v
                    elif name == "leader_epoch":
                        le = v
                    elif name == "commit_timestamp":
                        ct = v
                    elif name != "tombstone" and v is not None:
                        sparse[name][i] = v
        if js is not None:
            sparse["json"][i] = js
        if ki[1] is not chunk.uniq:
            ki[1] = chunk.uniq
            ki[5] = len(chunk.uniq)
            chunk.uniq.append(ki)
        chunk.kidx.append(ki[5])
        chunk.offset.append(offset)
        chunk.timestamp.append(ts)
        chunk.committed_offset.append(co)
        chunk.leader_epoch.append(le)
        chunk.commit_timestamp.append(ct)


_TOPIC_ID_KEYS = {"ShareSnapshot", "ShareUpdate"}


def _key_topic_id(key: bytes, topic: str) -> str | None:
    tid = getattr(decode_record(key, None, topic=topic).key, "topic_id", None)
    return uuid_to_kafka_str(tid) if tid is not None else None


def find_markers(ranges: list[tuple[str, int, int]], pids: set[int]) -> dict[int, str]:
    """The outcome of the first COMMIT/ABORT marker of each producer id in `ranges` (in order).

    Batch headers are hopped over with their CRC checked (the file is memory-mapped, so only
    the pages touched are read); only control batches are decoded. From a position where no
    valid batch starts, the rest of the range is read with the resynchronising reader, as the
    task owning that range reads it.
    """
    found: dict[int, str] = {}
    left = set(pids)
    for path, start, end in ranges:
        if not left:
            break
        if end <= start:
            continue
        with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            mv = memoryview(mm)
            try:
                _hop_for_markers(mm, mv, path, start, min(end, len(mm)), left, found)
            finally:
                mv.release()
    return found


def _hop_for_markers(mm: Any, mv: memoryview, path: str, start: int, end: int, left: set[int],
                     found: dict[int, str]) -> None:
    pos = start
    while pos < end and left:
        size = _probe(mm, mv, pos, end)
        if not size:
            for item in read_batches(mm[pos:end], source=path, base_position=pos):
                if type(item) is not CorruptBatch and item.is_control:
                    _markers_of(item, left, found)
                    if not left:
                        break
            return
        if mm[pos + 16] == 2 and int.from_bytes(mm[pos + 21:pos + 23], "big") & _ATTR_CONTROL:
            for item in read_batches(mm[pos:pos + size], source=path, base_position=pos):
                if type(item) is not CorruptBatch:
                    _markers_of(item, left, found)
        pos += size


def _markers_of(batch: Any, left: set[int], found: dict[int, str]) -> None:
    pid = batch.producer_id
    for rec in batch.records:
        if pid not in left:
            return
        try:
            marker = ControlMarker.from_record(rec[2], rec[3])
        except ValueError:
            continue
        if marker.is_commit or marker.is_abort:
            found[pid] = "committed" if marker.is_commit else "aborted"
            left.discard(pid)


class _ProblemReport(DumpReport):
    """A DumpReport that also keeps the problems that are not entries (garbage lines, corrupt spans)."""

    def __init__(self) -> None:
        super().__init__(max_problems=0)
        self.extra: list[tuple[int | None, int | None, str, str, int | None]] = []
        self._seen = (0, 0, 0)

    def problem(self, file: str, reason: str, *, position: int | None = None, line: int | None = None) -> None:
        garbage, spans, nbytes = self.garbage_lines, self.corrupt_spans, self.corrupt_bytes
        if garbage > self._seen[0]:
            self.extra.append((position, line, reason, "garbage_line", None))
        elif spans > self._seen[1]:
            self.extra.append((position, line, reason, "corrupt_span", nbytes - self._seen[2]))
        self._seen = (garbage, spans, nbytes)
        self.problems_dropped += 1


def _text_task(task: ScanTask, chunk_rows: int) -> Iterator[Chunk]:
    """A text dump through `read_dump`, plus rows for its garbage lines and corrupt spans."""
    report = _ProblemReport()
    chunk = Chunk(None)
    for entry in read_dump(task.path, topic=task.topic, report=report):
        add_entry(chunk, entry)
        chunk.const_rows.append((entry.source, entry.kind, entry.topic, entry.partition))
        if len(chunk) >= chunk_rows:
            yield chunk
            chunk = Chunk(None)
    topic = task.topic or CONSUMER_OFFSETS
    for position, line, reason, problem, nbytes in report.extra:
        chunk.add(_NO_KEY, position=position, line=line, problem=problem, corrupt_bytes=nbytes, tombstone=None,
                  error=reason)
        chunk.const_rows.append((task.path, task.kind, topic, None))
    if len(chunk):
        yield chunk


def run_task(plan: ScanPlan, i: int, chunk_rows: int = DEFAULT_CHUNK_ROWS) -> Iterator[Chunk]:
    """The rows of task `i` of `plan`, in chunks of at most about `chunk_rows` rows.

    The cyclic garbage collector is paused while a chunk is being filled: a chunk is hundreds of
    thousands of small objects, and collecting them over and over would cost more than decoding
    them (the few cycles, key descriptions pointing at their chunk's key list, wait for the next
    collection).
    """
    task = plan.tasks[i]
    it = _TaskReader(plan, task, chunk_rows).run() if task.kind == "segment" else _text_task(task, chunk_rows)
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        for chunk in it:
            if was_enabled:
                gc.enable()
            yield chunk
            gc.disable()
    finally:
        if was_enabled:
            gc.enable()
