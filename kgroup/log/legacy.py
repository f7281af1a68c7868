"""Magic 0/1 message sets (Kafka before 0.11, or an old `message.format.version`).

Each entry: `offset int64 | size int32 | crc uint32 | magic int8 | attributes int8 |
timestamp int64 (magic 1) | key bytes | value bytes` with a CRC-32 (IEEE) over magic..end.
A compressed entry is a wrapper whose value is a compressed inner message set; for magic 1
the inner offsets are relative and the wrapper holds the absolute offset of the last inner
message (Kafka's `AbstractLegacyRecordBatch`), for magic 0 they are absolute.

Readers get each top-level entry as a `RecordBatch` with magic 0/1 (see `model.RecordBatch`).
"""
from __future__ import annotations

import struct
import zlib
from collections.abc import Iterable, Sequence
from typing import Any

from .compression import Compression, CompressionError, compress, decompress
from .model import ATTR_TIMESTAMP_TYPE, NO_TIMESTAMP, BadBatch, LogRecord, RecordBatch, TimestampType

__all__ = ["encode_message_set", "encode_message", "parse_entry", "MIN_MESSAGE_SIZE"]

# crc + magic + attributes (+ timestamp) + key length + value length
MIN_MESSAGE_SIZE = (14, 22)
_ENTRY = struct.Struct(">qiIbb")  # offset, size, crc, magic, attributes
_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")


def _fields(buf: bytes, pos: int, end: int, magic: int) -> tuple[int, bytes | None, bytes | None]:
    """(timestamp, key, value) of the message body starting at `pos` (just after attributes)."""
    if magic == 1:
        (ts,) = _I64.unpack_from(buf, pos)
        pos += 8
    else:
        ts = NO_TIMESTAMP
    key, pos = _blob(buf, pos, end, "key")
    value, pos = _blob(buf, pos, end, "value")
    if pos != end:
        raise ValueError(f"{end - pos} unexpected bytes after the value")
    return ts, key, value


def _blob(buf: bytes, pos: int, end: int, what: str) -> tuple[bytes | None, int]:
    """The key or value at `pos` (int32 length, -1 for null, then the bytes) and where it ends.

    (For the key the first check never fires: the callers' `MIN_MESSAGE_SIZE` check leaves room
    for both lengths.)
    """
    if pos + 4 > end:
        raise ValueError(f"message ends inside the {what} length")
    (n,) = _I32.unpack_from(buf, pos)
    pos += 4
    if n == -1:
        return None, pos
    if n < 0 or pos + n > end:
        raise ValueError(f"invalid {what} length {n}")
    return buf[pos:pos + n], pos + n


def _inner_messages(buf: bytes, wrapper_magic: int) -> list[tuple[int, int, int, bytes | None, bytes | None]]:
    """(offset, magic, timestamp, key, value) of each message of a decompressed inner set."""
    out = []
    pos, n = 0, len(buf)
    while pos < n:
        if n - pos < 18:
            raise ValueError(f"inner message set ends with a truncated entry ({n - pos} bytes)")
        offset, size, crc, magic, attributes = _ENTRY.unpack_from(buf, pos)
        if magic not in (0, 1) or size < MIN_MESSAGE_SIZE[magic]:
            raise ValueError(f"inner message at byte {pos}: invalid magic {magic} or size {size}")
        end = pos + 12 + size
        if end > n:
            raise ValueError(f"inner message at byte {pos} runs past the end of the inner set")
        computed = zlib.crc32(memoryview(buf)[pos + 16:end])
        if computed != crc:
            raise ValueError(f"inner message at byte {pos}: CRC-32 mismatch "
                             f"(stored 0x{crc:08x}, computed 0x{computed:08x})")
        if attributes & 0x07:
            raise ValueError("compressed message nested inside a compressed message")
        ts, key, value = _fields(buf, pos + 18, end, magic)
        out.append((offset, magic, ts, key, value))
        pos = end
    if not out:
        raise ValueError("compressed wrapper holds no inner messages")
    return out


def parse_entry(data: bytes, pos: int, n: int, magic: int, *, base_position: int = 0,
                source: str | None = None) -> RecordBatch:
    """Parse the top-level magic 0/1 entry at `pos`; raises `BadBatch` (see `batch.read_batches`)."""
    if n - pos < 18:
        raise BadBatch("header", f"truncated message header ({n - pos} bytes left)")
    offset, size, crc, _magic, attributes = _ENTRY.unpack_from(data, pos)
    if size < MIN_MESSAGE_SIZE[magic]:
        raise BadBatch("header", f"invalid message size {size} (a magic {magic} message needs at least "
                                 f"{MIN_MESSAGE_SIZE[magic]})")
    end = pos + 12 + size
    if end > n:
        raise BadBatch("header", f"truncated message: header declares {size + 12} bytes but only {n - pos} remain")
    computed = zlib.crc32(memoryview(data)[pos + 16:end])
    if computed != crc:
        raise BadBatch("crc", f"magic {magic} message: CRC-32 mismatch "
                              f"(stored 0x{crc:08x}, computed 0x{computed:08x})", size + 12)
    codec = attributes & 0x07
    try:
        ts, key, value = _fields(data, pos + 18, end, magic)
        if codec == 0:
            records: tuple[LogRecord, ...] = (LogRecord(offset, ts, key, value),)
        else:
            if codec > 3:
                raise ValueError(f"compression codec {codec} is not allowed in magic {magic} messages")
            if value is None:
                raise ValueError("compressed wrapper message has a null value")
            inner = _inner_messages(decompress(codec, value), magic)
            if magic >= 1:
                # Relative inner offsets; the wrapper carries the absolute offset of the last one.
                shift = offset - inner[-1][0]
            else:
                shift = 0
            log_append = magic >= 1 and bool(attributes & ATTR_TIMESTAMP_TYPE)
            records = tuple(LogRecord(o + shift, ts if log_append else its, k, v)
                            for o, _m, its, k, v in inner)
    except CompressionError as exc:
        raise BadBatch("body", f"cannot decompress wrapper value: {exc}", size + 12) from None
    except (ValueError, struct.error) as exc:
        raise BadBatch("body", f"invalid message: {exc}", size + 12) from None
    base_offset = records[0].offset
    return RecordBatch(base_offset, size, -1, magic, crc, attributes, offset - base_offset, ts, ts,
                       -1, -1, -1, records, len(records), base_position + pos, size + 12, source)


# ------------------------------------------------------------------------------------------
# writing (for fixtures and sample dumps)


def encode_message(offset: int, *, magic: int, key: bytes | None, value: bytes | None,
                   timestamp: int = NO_TIMESTAMP, attributes: int = 0) -> bytes:
    """One log entry (offset + size + message) in magic 0 or 1."""
    if magic not in (0, 1):
        raise ValueError(f"magic must be 0 or 1, not {magic}")
    parts = [bytes((magic, attributes & 0xFF))]
    if magic == 1:
        parts.append(_I64.pack(timestamp))
    for blob in (key, value):
        if blob is None:
            parts.append(_I32.pack(-1))
        else:
            blob = bytes(blob)
            parts.append(_I32.pack(len(blob)))
            parts.append(blob)
    body = b"".join(parts)
    message = zlib.crc32(body).to_bytes(4, "big") + body
    return _I64.pack(offset) + _I32.pack(len(message)) + message


def _split(msg: Sequence[Any]) -> tuple[bytes | None, bytes | None, int]:
    if len(msg) == 2:
        return msg[0], msg[1], NO_TIMESTAMP
    if len(msg) == 3:
        return msg[0], msg[1], int(msg[2])
    raise ValueError(f"a message is (key, value[, timestamp]), got {len(msg)} items")


def encode_message_set(messages: Iterable[Sequence[Any]], *, magic: int, base_offset: int = 0,
                       compression: Compression | int | str = Compression.NONE,
                       timestamp_type: TimestampType | int = TimestampType.CREATE_TIME,
                       log_append_time: int | None = None) -> bytes:
    """Encode (key, value[, timestamp]) messages as a magic 0/1 message set.

    Uncompressed: one entry per message, offsets from `base_offset`. Compressed: one wrapper
    entry (offset = the last inner offset) whose value is the compressed inner set, with
    relative inner offsets for magic 1 and absolute ones for magic 0; magic-0 LZ4 uses Kafka's
    historic wrong frame-descriptor checksum, as Kafka does. For magic 1, LOG_APPEND_TIME
    marks the wrapper (or each plain message) and stamps it with `log_append_time`.
    """
    codec = Compression.parse(compression)
    if magic not in (0, 1):
        raise ValueError(f"magic must be 0 or 1, not {magic}")
    if codec is Compression.ZSTD:
        raise ValueError("zstd is not allowed in magic 0/1 message sets")
    msgs = [_split(m) for m in messages]
    if not msgs:
        raise ValueError("a message set needs at least one message")
    log_append = magic == 1 and TimestampType(timestamp_type) is TimestampType.LOG_APPEND_TIME
    ts_attr = ATTR_TIMESTAMP_TYPE if log_append else 0
    if magic == 0:
        msgs = [(k, v, NO_TIMESTAMP) for k, v, _ts in msgs]
    if codec is Compression.NONE:
        return b"".join(
            encode_message(base_offset + i, magic=magic, key=k, value=v, attributes=ts_attr,
                           timestamp=(log_append_time if log_append and log_append_time is not None else ts))
            for i, (k, v, ts) in enumerate(msgs))
    inner = b"".join(
        encode_message(i if magic == 1 else base_offset + i, magic=magic, key=k, value=v, timestamp=ts)
        for i, (k, v, ts) in enumerate(msgs))
    packed = compress(codec, inner, legacy_lz4_checksum=(magic == 0))
    wrapper_ts = NO_TIMESTAMP
    if magic == 1:
        wrapper_ts = log_append_time if log_append and log_append_time is not None else max(ts for _k, _v, ts in msgs)
    return encode_message(base_offset + len(msgs) - 1, magic=magic, key=None, value=packed,
                          timestamp=wrapper_ts, attributes=int(codec) | ts_attr)
