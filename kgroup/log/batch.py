"""Magic-2 record batches: byte-exact encoding, and a resynchronising reader for segment data.

Layout (61-byte header, CRC-32C over attributes..end, zigzag varints inside records) follows
Kafka's `DefaultRecordBatch`/`DefaultRecord`. The reader also accepts magic 0/1 message sets
(dispatching on the magic byte at offset 16, see `legacy`), so one call reads any segment.

Reading never raises on bad data unless asked to (`strict=True`): a bad byte range is yielded
as a `CorruptBatch` carrying its position and length, and reading goes on with the next good
batch, so good batches plus reported ranges always cover the input exactly.
"""
from __future__ import annotations

import re
import struct
import zlib
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from crc32c import crc32c

from . import legacy
from .compression import Compression, CompressionError, compress, decompress
from .model import (ATTR_CONTROL, ATTR_DELETE_HORIZON, ATTR_TIMESTAMP_TYPE, ATTR_TRANSACTIONAL, NO_SEQUENCE, BadBatch,
                    ControlType, CorruptBatch, CorruptBatchError, LogRecord, RecordBatch, TimestampType)

__all__ = ["encode_batch", "encode_control_batch", "encode_records", "read_batches", "iter_records", "V2_HEADER_SIZE",
           "LOG_OVERHEAD"]

LOG_OVERHEAD = 12  # baseOffset int64 + batchLength int32
V2_HEADER_SIZE = 61
_V2_MIN_LENGTH = V2_HEADER_SIZE - LOG_OVERHEAD
_CRC_START = 21  # attributes onwards are covered by the CRC
_MAGIC_OFFSET = 16

_HEADER = struct.Struct(">qiibIhiqqqhii")
_PREFIX = struct.Struct(">qiib")
_CRC_COVERED = struct.Struct(">hiqqqhii")
_CONTROL_KEY = struct.Struct(">hh")
_MARKER_VALUE = struct.Struct(">hi")
assert _HEADER.size == V2_HEADER_SIZE

_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1

# ------------------------------------------------------------------------------------------
# zigzag varints


def _zigzag_bytes(n: int) -> bytes:
    if not _INT64_MIN <= n <= _INT64_MAX:
        raise ValueError(f"{n} does not fit a varlong")
    v = (n << 1) ^ (n >> 63)
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


_SMALL_LIMIT = 1 << 13  # values in [-8192, 8192) take at most 2 bytes: cache them
_SMALL = [_zigzag_bytes(i) for i in range(-_SMALL_LIMIT, _SMALL_LIMIT)]


def zigzag(n: int) -> bytes:
    """Kafka's signed varint/varlong encoding (`ByteUtils.writeVarint/Varlong`)."""
    if -_SMALL_LIMIT <= n < _SMALL_LIMIT:
        return _SMALL[n + _SMALL_LIMIT]
    return _zigzag_bytes(n)


# Single-byte zigzag values, indexed by the byte (< 0x80).
_ZZ1 = tuple((b >> 1) ^ -(b & 1) for b in range(128))
# Two-byte zigzag values, indexed by (second byte << 7) | (first byte & 0x7f).
_ZZ2 = tuple((u >> 1) ^ -(u & 1) for u in range(1 << 14))


def read_varint(buf: bytes, pos: int) -> tuple[int, int]:
    """Decode a zigzag varint/varlong at `pos`; returns (value, position after it)."""
    b = buf[pos]
    pos += 1
    result = b & 0x7F
    shift = 7
    while b & 0x80:
        if shift > 63:
            raise ValueError("varint longer than 10 bytes")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        shift += 7
    return (result >> 1) ^ -(result & 1), pos


# ------------------------------------------------------------------------------------------
# encoding

_NULL = zigzag(-1)
_ZERO = zigzag(0)


def _as_bytes(b: Any, what: str) -> bytes | None:
    if b is None or isinstance(b, bytes):
        return b
    if isinstance(b, (bytearray, memoryview)):
        return bytes(b)
    raise TypeError(f"record {what} must be bytes or None, not {type(b).__name__}")


def _encode_record(offset_delta: int, timestamp_delta: int, key: bytes | None, value: bytes | None,
                   headers: Sequence[tuple[str, bytes | None]]) -> bytes:
    parts = [b"\x00", zigzag(timestamp_delta), zigzag(offset_delta)]
    if key is None:
        parts.append(_NULL)
    else:
        parts.append(zigzag(len(key)))
        parts.append(key)
    if value is None:
        parts.append(_NULL)
    else:
        parts.append(zigzag(len(value)))
        parts.append(value)
    if headers:
        parts.append(zigzag(len(headers)))
        for hkey, hvalue in headers:
            if hkey is None:
                raise ValueError("record header keys cannot be null")
            hk = hkey.encode("utf-8") if isinstance(hkey, str) else bytes(hkey)
            parts.append(zigzag(len(hk)))
            parts.append(hk)
            hv = _as_bytes(hvalue, "header value")
            if hv is None:
                parts.append(_NULL)
            else:
                parts.append(zigzag(len(hv)))
                parts.append(hv)
    else:
        parts.append(_ZERO)
    body = b"".join(parts)
    return zigzag(len(body)) + body


def _split(rec: Sequence[Any]) -> tuple[bytes | None, bytes | None, int, Sequence[tuple[str, bytes | None]]]:
    if len(rec) == 3:
        key, value, ts = rec
        headers: Sequence[tuple[str, bytes | None]] = ()
    elif len(rec) == 4:
        key, value, ts, headers = rec
        headers = headers or ()
    else:
        raise ValueError(f"a record is (key, value, timestamp[, headers]), got {len(rec)} items")
    return _as_bytes(key, "key"), _as_bytes(value, "value"), int(ts), headers


def encode_records(records: Iterable[Sequence[Any]], *,
                   base_timestamp: int | None = None) -> tuple[bytes, int, int, int]:
    """Encode (key, value, timestamp[, headers]) items as the records area of a batch.

    Returns (uncompressed bytes, count, first timestamp, max timestamp); deltas are relative
    to `base_timestamp` (default: the first record's timestamp, as Kafka does).
    """
    parts = []
    count = 0
    first_ts: int | None = None
    max_ts = -1
    for rec in records:
        key, value, ts, headers = _split(rec)
        if first_ts is None:
            first_ts = ts
            if base_timestamp is None:
                base_timestamp = ts
        if ts > max_ts:
            max_ts = ts
        parts.append(_encode_record(count, ts - base_timestamp, key, value, headers))
        count += 1
    return b"".join(parts), count, (-1 if first_ts is None else first_ts), max_ts


def _assemble(body: bytes, *, base_offset: int, count: int, last_offset_delta: int, attributes: int,
              base_timestamp: int, max_timestamp: int, producer_id: int, producer_epoch: int,
              base_sequence: int, partition_leader_epoch: int) -> bytes:
    covered = _CRC_COVERED.pack(attributes, last_offset_delta, base_timestamp, max_timestamp,
                                producer_id, producer_epoch, base_sequence, count) + body
    crc = crc32c(covered)
    length = 4 + 1 + 4 + len(covered)  # partitionLeaderEpoch + magic + crc + covered part
    return _PREFIX.pack(base_offset, length, partition_leader_epoch, 2) + crc.to_bytes(4, "big") + covered


def encode_batch(records: Iterable[Sequence[Any]], *, base_offset: int,
                 compression: Compression | int | str = Compression.NONE,
                 producer_id: int = -1, producer_epoch: int = -1, base_sequence: int = -1,
                 transactional: bool = False, partition_leader_epoch: int = 0,
                 timestamp_type: TimestampType | int = TimestampType.CREATE_TIME,
                 log_append_time: int | None = None, delete_horizon_ms: int | None = None) -> bytes:
    """Encode one magic-2 batch of (key, value, timestamp[, headers]) records, byte-exact.

    Offsets are consecutive from `base_offset`. baseTimestamp is the first record's timestamp
    and maxTimestamp the largest (for LOG_APPEND_TIME: `log_append_time`, default the largest
    timestamp). `delete_horizon_ms` sets attribute bit 6 and stores the horizon in
    baseTimestamp, as Kafka's log cleaner does.
    """
    codec = Compression.parse(compression)
    timestamp_type = TimestampType(timestamp_type)
    if timestamp_type is TimestampType.NO_TIMESTAMP_TYPE:
        raise ValueError("magic-2 batches need CREATE_TIME or LOG_APPEND_TIME")
    records = list(records)
    if not records:
        raise ValueError("a batch needs at least one record")
    base_ts_override = delete_horizon_ms
    body, count, first_ts, max_ts = encode_records(records, base_timestamp=base_ts_override)
    attributes = int(codec)
    if timestamp_type is TimestampType.LOG_APPEND_TIME:
        attributes |= ATTR_TIMESTAMP_TYPE
        if log_append_time is not None:
            max_ts = log_append_time
    if transactional:
        attributes |= ATTR_TRANSACTIONAL
    base_ts = first_ts
    if delete_horizon_ms is not None:
        attributes |= ATTR_DELETE_HORIZON
        base_ts = delete_horizon_ms
    if codec is not Compression.NONE:
        body = compress(codec, body)
    return _assemble(body, base_offset=base_offset, count=count, last_offset_delta=count - 1,
                     attributes=attributes, base_timestamp=base_ts, max_timestamp=max_ts,
                     producer_id=producer_id, producer_epoch=producer_epoch, base_sequence=base_sequence,
                     partition_leader_epoch=partition_leader_epoch)


def encode_control_batch(type: ControlType | int, *, base_offset: int, producer_id: int, producer_epoch: int,
                         coordinator_epoch: int = 0, timestamp: int, partition_leader_epoch: int = 0,
                         value: bytes | None = None) -> bytes:
    """Encode a control batch holding one control record, as the broker writes transaction markers.

    For ABORT/COMMIT the batch is transactional + control, the key is `int16 0 | int16 type` and
    the value `int16 0 | int32 coordinatorEpoch` (Kafka's `EndTransactionMarker`). Other control
    types (KRaft records) need an explicit `value` and are not transactional.
    """
    ctype = int(type)
    key = _CONTROL_KEY.pack(0, ctype)
    attributes = ATTR_CONTROL
    if ctype in (ControlType.ABORT, ControlType.COMMIT):
        attributes |= ATTR_TRANSACTIONAL
        if value is None:
            value = _MARKER_VALUE.pack(0, coordinator_epoch)
    elif value is None:
        raise ValueError(f"control type {ctype} needs an explicit value")
    body = _encode_record(0, 0, key, value, ())
    return _assemble(body, base_offset=base_offset, count=1, last_offset_delta=0, attributes=attributes,
                     base_timestamp=timestamp, max_timestamp=timestamp, producer_id=producer_id,
                     producer_epoch=producer_epoch, base_sequence=NO_SEQUENCE,
                     partition_leader_epoch=partition_leader_epoch)


# ------------------------------------------------------------------------------------------
# decoding


def _read_headers(buf: bytes, pos: int) -> tuple[tuple[tuple[str, bytes | None], ...], int]:
    count, pos = read_varint(buf, pos)
    if count < 0:
        raise ValueError(f"invalid header count {count}")
    headers = []
    for _ in range(count):
        klen, pos = read_varint(buf, pos)
        if klen < 0:
            raise ValueError(f"invalid header key length {klen}")
        hkey = buf[pos:pos + klen].decode("utf-8")
        pos += klen
        vlen, pos = read_varint(buf, pos)
        if vlen >= 0:
            hval: bytes | None = buf[pos:pos + vlen]
            pos += vlen
        elif vlen == -1:
            hval = None
        else:
            raise ValueError(f"invalid header value length {vlen}")
        headers.append((hkey, hval))
    return tuple(headers), pos


def _decode_records(buf: bytes, pos: int, end: int, count: int, base_offset: int, base_ts: int,
                    fixed_ts: int | None, full: bool) -> list:
    """The hot loop: decode `count` records from buf[pos:end].

    Varints of one or two bytes (all but huge lengths/deltas) are decoded inline through
    lookup tables; longer ones call `read_varint`. `full` builds `LogRecord`s, otherwise
    plain (offset, timestamp, key, value) tuples.
    """
    out: list = []
    append = out.append
    zz1 = _ZZ1
    zz2 = _ZZ2
    varint = read_varint
    new = tuple.__new__
    LR = LogRecord
    for _ in range(count):
        b = buf[pos]
        if b < 128:
            length = zz1[b]
            pos += 1
        else:
            c = buf[pos + 1]
            if c < 128:
                length = zz2[(c << 7) | (b & 127)]
                pos += 2
            else:
                length, pos = varint(buf, pos)
        start = pos
        b = buf[pos + 1]  # skip the (unused) attributes byte
        if b < 128:
            tsd = zz1[b]
            pos += 2
        else:
            tsd, pos = varint(buf, pos + 1)
        b = buf[pos]
        if b < 128:
            od = zz1[b]
            pos += 1
        else:
            c = buf[pos + 1]
            if c < 128:
                od = zz2[(c << 7) | (b & 127)]
                pos += 2
            else:
                od, pos = varint(buf, pos)
        b = buf[pos]
        if b < 128:
            n = zz1[b]
            pos += 1
        else:
            n, pos = varint(buf, pos)
        if n >= 0:
            key = buf[pos:pos + n]
            pos += n
        elif n == -1:
            key = None
        else:
            raise ValueError(f"invalid key length {n}")
        b = buf[pos]
        if b < 128:
            n = zz1[b]
            pos += 1
        else:
            c = buf[pos + 1]
            if c < 128:
                n = zz2[(c << 7) | (b & 127)]
                pos += 2
            else:
                n, pos = varint(buf, pos)
        if n >= 0:
            value = buf[pos:pos + n]
            pos += n
        elif n == -1:
            value = None
        else:
            raise ValueError(f"invalid value length {n}")
        if buf[pos] == 0:
            headers = ()
            pos += 1
        else:
            headers, pos = _read_headers(buf, pos)
        if pos - start != length:
            raise ValueError(f"record {od} declares {length} bytes but its fields take {pos - start}")
        if full:
            append(new(LR, (base_offset + od, base_ts + tsd if fixed_ts is None else fixed_ts, key, value, headers)))
        else:
            append((base_offset + od, base_ts + tsd if fixed_ts is None else fixed_ts, key, value))
    if pos != end:
        raise ValueError(f"{end - pos} bytes left over after {count} records" if pos < end
                         else f"records run {pos - end} bytes past the end of the batch")
    return out


def _parse_v2(data: bytes, pos: int, n: int, base_position: int, source: str | None, full: bool) -> RecordBatch:
    if n - pos < V2_HEADER_SIZE:
        raise BadBatch("header", f"truncated batch header ({n - pos} bytes left, a v2 header takes {V2_HEADER_SIZE})")
    (base_offset, length, ple, magic, crc, attributes, last_offset_delta, base_ts, max_ts,
     producer_id, producer_epoch, base_sequence, count) = _HEADER.unpack_from(data, pos)
    if length < _V2_MIN_LENGTH:
        raise BadBatch("header", f"invalid batch length {length} (a v2 batch needs at least {_V2_MIN_LENGTH})")
    size = length + LOG_OVERHEAD
    end = pos + size
    if end > n:
        raise BadBatch("header", f"truncated batch: header declares {size} bytes but only {n - pos} remain")
    computed = crc32c(memoryview(data)[pos + _CRC_START:end])
    if computed != crc:
        raise BadBatch("crc", f"CRC-32C mismatch (stored 0x{crc:08x}, computed 0x{computed:08x})", size)
    codec = attributes & 0x07
    if codec > 4:
        raise BadBatch("body", f"unknown compression codec {codec}", size)
    if count < 0 or last_offset_delta < 0:
        raise BadBatch("body", f"invalid record count {count} / last offset delta {last_offset_delta}", size)
    fixed_ts = max_ts if attributes & ATTR_TIMESTAMP_TYPE else None
    try:
        if codec:
            buf = decompress(codec, data[pos + V2_HEADER_SIZE:end])
            records = _decode_records(buf, 0, len(buf), count, base_offset, base_ts, fixed_ts, full)
        else:
            records = _decode_records(data, pos + V2_HEADER_SIZE, end, count, base_offset, base_ts, fixed_ts, full)
    except CompressionError as exc:
        raise BadBatch("body", f"cannot decompress records: {exc}", size) from None
    except (ValueError, IndexError, UnicodeDecodeError) as exc:
        if not codec and end < n:
            # Read in place, bad records may run on into the next batch; the reason must be the
            # one the batch gives alone, whatever follows it.
            try:
                _decode_records(data[pos + V2_HEADER_SIZE:end], 0, end - pos - V2_HEADER_SIZE, count, base_offset,
                                base_ts, fixed_ts, full)
            except (ValueError, IndexError, UnicodeDecodeError) as alone:
                exc = alone
        what = str(exc) if not isinstance(exc, IndexError) else "records run past the end of the data"
        raise BadBatch("body", f"invalid records: {what}", size) from None
    return RecordBatch(base_offset, length, ple, magic, crc, attributes, last_offset_delta, base_ts, max_ts,
                       producer_id, producer_epoch, base_sequence, tuple(records), count,
                       base_position + pos, size, source)


def _probe(data: bytes, mv: memoryview, q: int, n: int) -> int:
    """Size of a header-valid, CRC-valid batch (any magic) starting at `q`, else 0."""
    if q + LOG_OVERHEAD + legacy.MIN_MESSAGE_SIZE[0] > n:
        return 0
    magic = data[q + _MAGIC_OFFSET]
    if magic > 2:
        return 0
    length = int.from_bytes(data[q + 8:q + 12], "big", signed=True)
    end = q + LOG_OVERHEAD + length
    if end > n:
        return 0
    if magic == 2:
        if length < _V2_MIN_LENGTH:
            return 0
        if crc32c(mv[q + _CRC_START:end]) != int.from_bytes(data[q + 17:q + 21], "big"):
            return 0
    else:
        if length < legacy.MIN_MESSAGE_SIZE[magic]:
            return 0
        if zlib.crc32(mv[q + 16:end]) != int.from_bytes(data[q + 12:q + 16], "big"):
            return 0
    return length + LOG_OVERHEAD


_NONZERO = re.compile(rb"[^\x00]")


def _scan(data: bytes, mv: memoryview, q: int, n: int) -> int | None:
    """First position >= q where a valid batch starts, scanning byte by byte."""
    limit = n - LOG_OVERHEAD - legacy.MIN_MESSAGE_SIZE[0]
    while q <= limit:
        if data[q + _MAGIC_OFFSET] <= 2:
            if data[q + 8:q + 12] == b"\x00\x00\x00\x00":
                # A batch's length field is never zero: jump over zero-filled stretches.
                m = _NONZERO.search(data, q + 12)
                if m is None:
                    return None
                q = max(q + 1, m.start() - 11)
                continue
            if _probe(data, mv, q, n):
                return q
        q += 1
    return None


def _parse_at(data: bytes, pos: int, n: int, base_position: int, source: str | None, full: bool) -> RecordBatch:
    if n - pos < _MAGIC_OFFSET + 1:
        raise BadBatch("header", f"truncated batch header ({n - pos} bytes left)")
    magic = data[pos + _MAGIC_OFFSET]
    if magic == 2:
        return _parse_v2(data, pos, n, base_position, source, full)
    if magic <= 1:
        return legacy.parse_entry(data, pos, n, magic, base_position=base_position, source=source)
    length = int.from_bytes(data[pos + 8:pos + 12], "big", signed=True)
    raise BadBatch("header", f"unknown magic {magic} (batch length field {length})")


def _corruption(data: bytes, mv: memoryview, pos: int, n: int, bad: BadBatch) -> tuple[int, str]:
    """Where reading resumes after the bad batch at `pos`, and the reason to report."""
    if bad.kind == "body":
        return pos + bad.size, bad.reason
    if bad.kind == "crc":
        nxt = pos + bad.size
        if nxt == n or _probe(data, mv, nxt, n):
            return nxt, bad.reason
    if data.count(0, pos) == n - pos:
        return n, f"{n - pos} zero bytes up to the end (preallocated or unwritten space)"
    found = _scan(data, mv, pos + 1, n)
    if found is None:
        return n, bad.reason
    return found, bad.reason


def read_batches(data: bytes | bytearray | memoryview, *, source: str | None = None, base_position: int = 0,
                 strict: bool = False, _full: bool = True) -> Iterator[RecordBatch | CorruptBatch]:
    """Read every batch (magic 0, 1 or 2) in `data`, yielding `RecordBatch` or `CorruptBatch`.

    Positions are `base_position` + the byte offset in `data`; `source` names the data in
    reports (a file path). After a bad batch, reading resumes after it when its length field
    is trustworthy (checksum mismatch and a valid batch follows), otherwise at the next byte
    position where a batch with a valid header and CRC starts. With `strict=True` the first
    bad range raises `CorruptBatchError` instead.
    """
    if not isinstance(data, bytes):
        data = bytes(data)
    n = len(data)
    mv = memoryview(data)
    pos = 0
    while pos < n:
        try:
            batch = _parse_at(data, pos, n, base_position, source, _full)
        except BadBatch as bad:
            resume, reason = _corruption(data, mv, pos, n, bad)
            corrupt = CorruptBatch(source, base_position + pos, reason, resume - pos)
            if strict:
                raise CorruptBatchError(corrupt) from None
            yield corrupt
            pos = resume
            continue
        yield batch
        pos += batch.size


def iter_records(data: bytes | bytearray | memoryview, *, source: str | None = None,
                 errors: list[CorruptBatch] | None = None,
                 include_control: bool = False) -> Iterator[tuple[int, int, bytes | None, bytes | None]]:
    """Fast path: (offset, timestamp, key, value) of every data record in `data`.

    Control batches are skipped unless `include_control`. A corrupt range raises
    `CorruptBatchError`, unless an `errors` list is given: then it is appended there and
    reading goes on.
    """
    for item in read_batches(data, source=source, _full=False):
        if type(item) is CorruptBatch:
            if errors is None:
                raise CorruptBatchError(item)
            errors.append(item)
            continue
        if item.is_control and not include_control:
            continue
        if item.magic == 2:
            yield from item.records
        else:
            for r in item.records:
                yield r[0], r[1], r[2], r[3]
