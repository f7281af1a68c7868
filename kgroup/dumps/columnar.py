"""Runs of magic-2 batches decoded column-wise with numpy: the Spark tasks' fast path.

A `__consumer_offsets` dump is mostly OffsetCommit records with a v1 key and a v3 value. Decoding
them one Python object at a time costs microseconds per record; here a whole run of batches
(tens of thousands of records) is decoded with a handful of array operations:

1. `parse_run`: the records areas of the run's batches are joined into one buffer and the record
   boundaries found, the batches walked side by side (`_record_heads`). The fields of every
   record (deltas, key, value, headers count) are then read for all records at once, with the
   record layout checks of `kgroup.log.batch`. Anything unusual (a varint longer than Kafka
   writes, a header, lengths that do not add up) makes the whole run go back to the per-record
   decoder, which handles and reports every case; so what is decoded here is exactly what that
   decoder would produce.
2. `Layout.offset_commits`: records that are plainly OffsetCommit v1 key + v3 value, whose
   strings are ASCII without control characters, become columns directly (strings are cut
   from the buffer into Arrow string arrays; their JSON text is assembled by Arrow). Every
   other record (other types, tombstones, other strings, control records) is a "slow" row,
   decoded by the caller the usual way.
3. `Block`: the run's rows, fast and slow merged back into log order, as one Arrow batch.

numpy and pyarrow are imported here; both come with pandas and pyspark.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from kgroup.log.batch import _ZZ1, _ZZ2, read_varint

from .columns import arrow_schema, const_arrays

__all__ = ["RunBatch", "Layout", "Block", "parse_run"]

_PAD = bytes(16)  # lets the vectorised reads run a few bytes past the end without bounds checks


# How far a record reaches from its one- or two-byte length varint (the varint and the record); a
# negative length (invalid) jumps far past the end, so the walk in `parse_run` stops.
_STEP1 = tuple(1 + v if v >= 0 else 1 << 62 for v in _ZZ1)
_STEP2 = tuple(2 + v if v >= 0 else 1 << 62 for v in _ZZ2)


class RunBatch(NamedTuple):
    """A CRC-checked magic-2 batch waiting in a run (records area `buf[start:stop]`, decompressed)."""

    buf: bytes
    start: int
    stop: int
    count: int
    base_offset: int
    base_ts: int
    fixed_ts: int | None   # the batch's max timestamp when it uses log-append time
    position: int          # of the batch in its file
    pid: int
    transactional: bool
    control: bool
    at: int                # where the batch starts in the task's bytes (to read it again the long way)


class _Invalid(Exception):
    """The run is not plain enough for the array decoder."""


def _varints(a: np.ndarray, pos: np.ndarray, max_bytes: int) -> tuple[np.ndarray, np.ndarray]:
    """Zigzag varints at `pos` (int64 values, positions after them); at most `max_bytes` each."""
    b = a[pos]
    value = (b & 0x7F).astype(np.uint64)
    width = np.ones(len(pos), np.int64)
    more = np.flatnonzero(b & 0x80)
    shift = 7
    while more.size:
        if shift >= 7 * max_bytes:
            raise _Invalid("varint too long")
        b = a[pos[more] + width[more]]
        value[more] |= (b & 0x7F).astype(np.uint64) << np.uint64(shift)
        width[more] += 1
        more = more[(b & 0x80) != 0]
        shift += 7
    signed = (value >> np.uint64(1)).astype(np.int64) ^ -(value & np.uint64(1)).astype(np.int64)
    return signed, pos + width


def _int16(a: np.ndarray, pos: np.ndarray) -> np.ndarray:
    return ((a[pos].astype(np.uint16) << 8) | a[pos + 1]).view(np.int16).astype(np.int64)


_SPREAD = {4: np.arange(4), 8: np.arange(8)}


def _big_endian(a: np.ndarray, pos: np.ndarray, width: int) -> np.ndarray:
    """Big-endian signed ints of `width` bytes at `pos`, as native int32/int64."""
    raw = a[pos[:, None] + _SPREAD[width]]
    return raw.view(f">i{width}").ravel().astype(np.int32 if width == 4 else np.int64)


def _slices(buffer: pa.Buffer, starts: np.ndarray, lengths: np.ndarray) -> tuple[pa.Array, np.ndarray]:
    """The byte strings buffer[s:s+l] (in buffer order, not overlapping) as one compact binary
    array, and its bytes. They are cut out by Arrow: a binary array over the whole buffer whose
    elements alternate between the strings and the gaps between them, of which every other
    element is taken."""
    n = len(starts)
    offsets = np.empty(2 * n + 1, np.int32)
    offsets[0:2 * n:2] = starts
    offsets[1:2 * n:2] = starts + lengths
    offsets[2 * n] = offsets[2 * n - 1] if n else 0
    spread = pa.Array.from_buffers(pa.binary(), 2 * n, [None, pa.py_buffer(offsets), buffer])
    compact = spread.take(pa.array(np.arange(0, 2 * n, 2, dtype=np.int32)))
    data = compact.buffers()[2]
    size = int(_offsets(compact)[-1]) if n else 0
    return compact, np.frombuffer(data, np.uint8)[:size] if size else np.zeros(0, np.uint8)


def _offsets(strings: pa.Array) -> np.ndarray:
    return np.frombuffer(strings.buffers()[1], np.int32)[strings.offset:strings.offset + len(strings) + 1]


def _simple_rows(strings: pa.Array, data: np.ndarray) -> np.ndarray:
    """Per string: True when every byte is ASCII from space on (0x20-0x7F). Of those JSON escapes
    only '"' and '\\' (`_json_text`); anything else (control characters, UTF-8, invalid bytes)
    takes the per-record way, which escapes or reports it exactly as `to_json` does."""
    ok = np.ones(len(strings), np.bool_)
    bad = np.flatnonzero((data - np.uint8(0x20)) >= 0x60)
    if bad.size:
        ok[np.searchsorted(_offsets(strings), bad, side="right") - 1] = False
    return ok


def _json_text(strings: pa.Array, data: np.ndarray) -> pa.Array:
    """Simple strings as they stand inside JSON quotes (`data`: their bytes): '"' and '\\' get a
    backslash. The bytes are escaped in one go and the offsets moved by the escapes before each."""
    special = np.flatnonzero((data == 0x22) | (data == 0x5C))
    if not special.size:
        return strings
    escaped = data.tobytes().replace(b"\\", b"\\\\").replace(b'"', b'\\"')
    offsets = _offsets(strings)
    moved = (offsets + np.searchsorted(special, offsets)).astype(np.int32)
    return pa.Array.from_buffers(pa.string(), len(strings), [None, pa.py_buffer(moved), pa.py_buffer(escaped)])


@dataclass
class Layout:
    """Where every record of a run lies in `a` (the joined records areas), and its batch."""

    a: np.ndarray
    buf: bytes
    batch: np.ndarray       # row -> index of its batch in the run
    offset: np.ndarray      # absolute offsets
    timestamp: np.ndarray
    key_start: np.ndarray
    key_len: np.ndarray     # -1: null key
    value_start: np.ndarray
    value_len: np.ndarray   # -1: null value (a tombstone)
    control: np.ndarray     # bool: the row is in a control batch

    def __len__(self) -> int:
        return len(self.batch)

    def key(self, i: int) -> bytes | None:
        kl = int(self.key_len[i])
        return None if kl < 0 else self.buf[int(self.key_start[i]):int(self.key_start[i]) + kl]

    def value(self, i: int) -> bytes | None:
        vl = int(self.value_len[i])
        return None if vl < 0 else self.buf[int(self.value_start[i]):int(self.value_start[i]) + vl]

    def offset_commits(self) -> tuple[np.ndarray, dict[str, Any]]:
        """(rows, columns) of the OffsetCommit v1-key/v3-value records with simple strings, in row
        order; their `json` column is `record.to_json()` exactly (checked by the tests)."""
        a = self.a
        ks, kl, vs, vl = self.key_start, self.key_len, self.value_start, self.value_len
        cand = ~self.control & (kl >= 10) & (vl >= 24)
        rows = np.flatnonzero(cand)
        ks_c, vs_c = ks[rows], vs[rows]
        ok = (a[ks_c] == 0) & (a[ks_c + 1] == 1) & (a[vs_c] == 0) & (a[vs_c + 1] == 3)
        rows, ks_c, vs_c = rows[ok], ks_c[ok], vs_c[ok]
        # key: int16 type, string group, string topic, int32 partition; exactly that long
        gl = _int16(a, ks_c + 2)
        tl = _int16(a, np.minimum(ks_c + 4 + np.maximum(gl, 0), len(a) - 2))
        ml = _int16(a, vs_c + 14)
        ok = (gl >= 0) & (tl >= 0) & (ml >= 0) & (kl[rows] == 10 + gl + tl) & (vl[rows] == 24 + ml)
        if not ok.all():
            rows, ks_c, vs_c, gl, tl, ml = rows[ok], ks_c[ok], vs_c[ok], gl[ok], tl[ok], ml[ok]
        buffer = pa.py_buffer(self.buf)
        parts = [(ks_c + 4, gl), (ks_c + 6 + gl, tl), (vs_c + 16, ml)]
        cut = [_slices(buffer, s, n) for s, n in parts]
        simple = _simple_rows(*cut[0]) & _simple_rows(*cut[1]) & _simple_rows(*cut[2])
        if not simple.all():  # rare: control characters or UTF-8 go the long way
            rows, ks_c, vs_c, gl, tl, ml = (x[simple] for x in (rows, ks_c, vs_c, gl, tl, ml))
            parts = [(ks_c + 4, gl), (ks_c + 6 + gl, tl), (vs_c + 16, ml)]
            cut = [_slices(buffer, s, n) for s, n in parts]
        # simple strings are ASCII: valid UTF-8 as they stand
        group, topic, meta = (c[0].view(pa.string()) for c in cut)
        group_js, topic_js, meta_js = (_json_text(x, c[1]) for x, c in zip((group, topic, meta), cut))
        partition = _big_endian(a, ks_c + 6 + gl + tl, 4)
        committed = _big_endian(a, vs_c + 2, 8)
        epoch = _big_endian(a, vs_c + 10, 4)
        commit_ts = _big_endian(a, vs_c + 16 + ml, 8)
        text = pa.string()
        p_text, c_text = pc.cast(pa.array(partition), text), pc.cast(pa.array(committed), text)
        key = pc.binary_join_element_wise('{"type":1,"data":{"group":"', group_js, '","topic":"', topic_js,
                                          '","partition":', p_text, "}}", "")
        json = pc.binary_join_element_wise(
            '{"key":', key, ',"value":{"version":3,"data":{"offset":', c_text, ',"leaderEpoch":',
            pc.cast(pa.array(epoch), text), ',"metadata":"', meta_js, '","commitTimestamp":',
            pc.cast(pa.array(commit_ts), text), "}}}", "")
        n = len(rows)
        cols = {
            "record_type": pa.repeat(pa.scalar("OffsetCommit"), n),
            "record_type_id": pa.repeat(pa.scalar(1, pa.int16()), n),
            "key": key, "group_id": group, "topic_name": topic, "topic_partition": pa.array(partition),
            "committed_offset": pa.array(committed), "leader_epoch": pa.array(epoch),
            "commit_timestamp": pa.array(commit_ts), "tombstone": pa.repeat(pa.scalar(False), n), "json": json,
        }
        return rows, cols


_LOCKSTEP_MIN = 32  # batches walked together; fewer, and a plain loop is cheaper


def _record_heads(buf: bytes, a: np.ndarray, stops: np.ndarray, counts: np.ndarray) -> np.ndarray | None:
    """Where each record starts (its length varint), batch after batch; None unless the records
    of every batch (`counts[i]` of them) tile its records area exactly (ending at `stops[i]`).

    Records follow one another, so within a batch this is a walk; the batches are walked side by
    side, one record each per step, while many are left; the few longest are then finished one
    record at a time.
    """
    starts = np.zeros(len(stops), np.int64)
    starts[1:] = stops[:-1]
    first = np.cumsum(counts) - counts  # row of each batch's first record
    heads = np.empty(int(counts.sum()), np.int64)
    live = np.flatnonzero(stops > starts)
    if ((counts == 0) != (stops == starts)).any():
        return None
    p, k = starts[live], 0
    rest: list[tuple[int, int, int]] = []  # (batch, position, records walked) left to the loop below
    while len(live) >= _LOCKSTEP_MIN:
        if (k >= counts[live]).any():
            return None  # more records than the batch says
        c, d = a[p].astype(np.int64), a[p + 1].astype(np.int64)
        long = (c >= 128) & (d >= 128)
        if long.any():  # a length of 3+ bytes (a big record): walked one by one
            rest += zip(live[long].tolist(), p[long].tolist(), [k] * int(long.sum()))
            live, p, c, d = live[~long], p[~long], c[~long], d[~long]
        heads[first[live] + k] = p
        one = c < 128
        raw = np.where(one, c, ((d & 127) << 7) | (c & 127))
        length = (raw >> 1) ^ -(raw & 1)
        if (length < 0).any():
            return None
        p = p + np.where(one, 1, 2) + length
        k += 1
        done = p >= stops[live]
        if done.any():
            ended = live[done]
            if (p[done] != stops[ended]).any() or (counts[ended] != k).any():
                return None
            live, p = live[~done], p[~done]
    rest += zip(live.tolist(), p.tolist(), [k] * len(live))
    step1, step2, varint = _STEP1, _STEP2, read_varint
    try:
        for bi, q, walked in rest:
            row, stop, last = int(first[bi]) + walked, int(stops[bi]), int(first[bi] + counts[bi])
            while q < stop:
                if row >= last:
                    return None
                heads[row] = q
                row += 1
                c = buf[q]
                if c < 128:
                    q += step1[c]
                else:
                    d = buf[q + 1]
                    if d < 128:
                        q += step2[(d << 7) | (c & 127)]
                    else:
                        length, q = varint(buf, q)
                        if length < 0:
                            return None
                        q += length
            if q != stop or row != last:
                return None
    except (ValueError, IndexError):
        return None
    return heads


def parse_run(batches: list[RunBatch]) -> Layout | None:
    """The layout of every record of `batches`, or None when the run must be read record by record."""
    parts = [b.buf if b.start == 0 and b.stop == len(b.buf) else b.buf[b.start:b.stop] for b in batches]
    parts.append(_PAD)
    buf = b"".join(parts)
    if len(buf) >= 1 << 31:  # Arrow string offsets are int32: the per-record way copes with anything
        return None
    counts = np.fromiter((b.count for b in batches), np.int64, len(batches))
    stops = np.cumsum(np.fromiter((b.stop - b.start for b in batches), np.int64, len(batches)))
    heads = _record_heads(buf, np.frombuffer(buf, np.uint8), stops, counts)
    if heads is None:
        return None
    a = np.frombuffer(buf, np.uint8)
    batch = np.repeat(np.arange(len(batches)), counts)
    limit = len(buf) - len(_PAD)
    try:
        length, start = _varints(a, heads, 5)
        end = start + length  # the walk above made sure records tile each batch exactly
        pos = np.minimum(start + 1, limit)  # after the attributes byte
        ts_delta, pos = _varints(a, pos, 9)
        off_delta, pos = _varints(a, np.minimum(pos, limit), 5)
        key_len, pos = _varints(a, np.minimum(pos, limit), 5)
        key_start = pos
        pos = np.minimum(pos + np.maximum(key_len, 0), limit)
        value_len, pos = _varints(a, pos, 5)
        value_start = pos
        pos = np.minimum(pos + np.maximum(value_len, 0), limit)
    except _Invalid:
        return None
    # No headers (count 0, one byte), and the fields take exactly the record's declared length.
    if not ((a[pos] == 0) & (pos + 1 == end) & (key_len >= -1) & (value_len >= -1)).all():
        return None
    base_offset = np.fromiter((b.base_offset for b in batches), np.int64, len(batches))
    base_ts = np.fromiter((b.base_ts for b in batches), np.int64, len(batches))
    fixed = np.fromiter((b.fixed_ts is not None for b in batches), np.bool_, len(batches))
    fixed_ts = np.fromiter((b.fixed_ts or 0 for b in batches), np.int64, len(batches))
    timestamp = np.where(fixed[batch], fixed_ts[batch], base_ts[batch] + ts_delta)
    control = np.fromiter((b.control for b in batches), np.bool_, len(batches))[batch]
    return Layout(a, buf, batch, base_offset[batch] + off_delta, timestamp, key_start, key_len, value_start,
                  value_len, control)


def _runs(is_fast: np.ndarray) -> tuple[list[int], list[int], list[bool]]:
    """The stretches of fast and of slow rows, in order: for each, the index of its first row
    among the fast (or the slow) rows, the index after its last, and whether it is fast."""
    if not len(is_fast):
        return [], [], []
    cuts = np.flatnonzero(is_fast[1:] != is_fast[:-1]) + 1
    starts = np.concatenate(([0], cuts))
    stops = np.concatenate((cuts, [len(is_fast)]))
    fast = is_fast[starts]
    # rows of the same kind before each stretch = its first index among that kind
    before = np.cumsum(np.where(fast, stops - starts, 0)) - np.where(fast, stops - starts, 0)
    before_slow = np.cumsum(np.where(fast, 0, stops - starts)) - np.where(fast, 0, stops - starts)
    first = np.where(fast, before, before_slow)
    return first.tolist(), (first + stops - starts).tolist(), fast.tolist()


def _interleave(fast: pa.Array, slow: pa.Array, is_fast: np.ndarray,
                runs: tuple[list[int], list[int], list[bool]]) -> pa.Array:
    """Strings of the fast rows (none null) and of the slow rows merged into row order: one copy
    per stretch of rows (a take would copy string by string, several times slower)."""
    n = len(is_fast)
    fo, so = _offsets(fast), _offsets(slow)
    fd, sd = (memoryview(a.buffers()[2] or b"") for a in (fast, slow))
    lengths = np.empty(n, np.int64)
    lengths[is_fast] = np.diff(fo)
    lengths[~is_fast] = np.diff(so)
    first, after, from_fast = runs
    fa = np.array(first)
    fb = np.array(after)
    kind = np.array(from_fast, np.bool_)
    lo = np.where(kind, fo[np.minimum(fa, len(fo) - 1)], so[np.minimum(fa, len(so) - 1)]).tolist()
    hi = np.where(kind, fo[np.minimum(fb, len(fo) - 1)], so[np.minimum(fb, len(so) - 1)]).tolist()
    pieces = [(fd if f else sd)[a:b] for a, b, f in zip(lo, hi, from_fast)]
    offsets = np.zeros(n + 1, np.int32)
    np.cumsum(lengths, out=offsets[1:])
    validity = None
    if slow.null_count:
        valid = np.ones(n, np.bool_)
        valid[~is_fast] = slow.is_valid().to_numpy(zero_copy_only=False)
        validity = pa.py_buffer(np.packbits(valid, bitorder="little"))
    return pa.Array.from_buffers(pa.string(), n, [validity, pa.py_buffer(offsets), pa.py_buffer(b"".join(pieces))])


class Block:
    """The rows of one run: fast rows as columns, slow rows as a per-record `Chunk`, and the
    columns every row of a batch shares (position, producer id, transaction status), kept per
    batch so that a COMMIT/ABORT marker read later can still settle them (see `txn`)."""

    def __init__(self, const: tuple, layout: Layout, fast_rows: np.ndarray, fast: dict[str, Any],
                 slow_rows: list[int], slow: Any, batches: list[RunBatch]) -> None:
        self.const = const
        self.layout = layout
        self.fast_rows, self.fast = fast_rows, fast
        self.slow_rows, self.slow = slow_rows, slow
        self.position = [b.position for b in batches]
        self.producer_id = [b.pid for b in batches]
        self.txn: list[str] = ["none"] * len(batches)   # per batch; settled through `_resolve`
        self.row_txn: dict[int, str] = {}               # per row, for control records
        self.undecided = 0

    def __len__(self) -> int:
        return len(self.layout)

    def columns(self) -> dict[str, list]:
        """Column name -> list of values, in `COLUMNS` order (as `Chunk.columns`)."""
        batch = self.to_arrow()
        return {name: batch.column(name).to_pylist() for name in batch.schema.names}

    def to_arrow(self) -> Any:
        """The rows as a `pyarrow.RecordBatch` with `columns.arrow_schema()`, in log order."""
        schema = arrow_schema()
        layout = self.layout
        n = len(layout)
        cols = const_arrays(self.const, n)
        batch = pa.array(layout.batch)
        cols["offset"] = pa.array(layout.offset)
        cols["timestamp"] = pa.array(layout.timestamp)
        cols["position"] = pa.array(self.position, pa.int64()).take(batch)
        cols["producer_id"] = pa.array(self.producer_id, pa.int64()).take(batch)
        txn = pa.array(self.txn, pa.string()).take(batch)
        if self.row_txn:
            mask = np.zeros(n, np.bool_)
            rows = sorted(self.row_txn)
            mask[rows] = True
            txn = pc.replace_with_mask(txn, pa.array(mask), pa.array([self.row_txn[r] for r in rows], pa.string()))
        cols["txn"] = txn
        record_cols = [f.name for f in schema if f.name not in cols]
        ns = len(self.slow_rows)
        if ns == 0:
            for name in record_cols:
                fast = self.fast.get(name)
                cols[name] = pa.nulls(n, schema.field(name).type) if fast is None else fast
        else:
            slow = self.slow
            slow.position = slow.producer_id = slow.txn = [None] * ns  # the block's own columns win
            slow_batch = slow.to_arrow()
            nf = len(self.fast_rows)
            order = np.empty(n, np.int64)  # row -> its place in fast + slow
            order[self.fast_rows] = np.arange(nf)
            order[np.array(self.slow_rows, np.int64)] = nf + np.arange(ns)
            take = pa.array(order)
            is_fast = np.zeros(n, np.bool_)
            is_fast[self.fast_rows] = True
            runs = _runs(is_fast)
            for name in record_cols:
                typ = schema.field(name).type
                fast, slow_col = self.fast.get(name), slow_batch.column(name)
                if fast is None:
                    if slow_col.null_count == ns:  # null in every row: nothing to merge
                        cols[name] = pa.nulls(n, typ)
                        continue
                    fast = pa.nulls(nf, typ)
                if typ == pa.string() and fast.null_count == 0:
                    cols[name] = _interleave(fast, slow_col, is_fast, runs)
                else:
                    cols[name] = pa.concat_arrays([fast, slow_col]).take(take)
        return pa.RecordBatch.from_arrays([cols[f.name] for f in schema], schema=schema)
