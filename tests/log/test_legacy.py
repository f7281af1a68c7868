"""Magic 0/1 message sets, plain and compressed."""
from __future__ import annotations

import struct
import zlib

import pytest

from kgroup.log import (
    Compression,
    CorruptBatch,
    LogRecord,
    RecordBatch,
    TimestampType,
    compress,
    encode_batch,
    encode_message,
    encode_message_set,
    iter_records,
    read_batches,
)

LEGACY_CODECS = [Compression.NONE, Compression.GZIP, Compression.SNAPPY, Compression.LZ4]
MESSAGES = [(b"key-%d" % i, b"value-%d" % i * 20, 1_600_000_000_000 + i) for i in range(12)] + [
    (None, b"null key", 1_600_000_000_100), (b"tombstone", None, 1_600_000_000_050)]


def batches(data: bytes) -> list[RecordBatch]:
    items = list(read_batches(data))
    assert all(isinstance(i, RecordBatch) for i in items), items
    return items


def records(data: bytes) -> list[LogRecord]:
    return [r for b in batches(data) for r in b.records]


def test_known_answer_magic0_message():
    body = bytes.fromhex("00" "00" "00000001" "6b" "00000001" "76")  # magic, attributes, key 'k', value 'v'
    raw = struct.pack(">qi", 7, 4 + len(body)) + zlib.crc32(body).to_bytes(4, "big") + body
    assert encode_message(7, magic=0, key=b"k", value=b"v") == raw
    (b,) = batches(raw)
    assert (b.magic, b.base_offset, b.last_offset, b.batch_length, b.crc) == (0, 7, 7, 16, zlib.crc32(body))
    assert b.timestamp_type is TimestampType.NO_TIMESTAMP_TYPE
    assert (b.partition_leader_epoch, b.producer_id, b.producer_epoch, b.base_sequence) == (-1, -1, -1, -1)
    assert not b.is_transactional and not b.is_control
    assert b.records == (LogRecord(7, -1, b"k", b"v", ()),)


@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("codec", LEGACY_CODECS, ids=lambda c: c.label)
def test_round_trip(magic, codec):
    data = encode_message_set(MESSAGES, magic=magic, base_offset=40, compression=codec)
    got = batches(data)
    if codec is Compression.NONE:
        assert len(got) == len(MESSAGES)
    else:
        (wrapper,) = got
        assert wrapper.compression is codec
        assert (wrapper.base_offset, wrapper.last_offset, wrapper.record_count) == (40, 53, 14)
        if magic == 1:
            assert wrapper.max_timestamp == max(m[2] for m in MESSAGES)
    assert all(b.magic == magic for b in got)
    expected = [LogRecord(40 + i, ts if magic == 1 else -1, k, v, ()) for i, (k, v, ts) in enumerate(MESSAGES)]
    assert [r for b in got for r in b.records] == expected
    assert list(iter_records(data)) == [tuple(r[:4]) for r in expected]


def test_magic1_log_append_time_overrides_inner_timestamps():
    data = encode_message_set(MESSAGES, magic=1, base_offset=0, compression=Compression.GZIP,
                              timestamp_type=TimestampType.LOG_APPEND_TIME, log_append_time=1_700_000_000_000)
    (b,) = batches(data)
    assert b.timestamp_type is TimestampType.LOG_APPEND_TIME
    assert {r.timestamp for r in b.records} == {1_700_000_000_000}


def test_magic1_relative_offsets_after_compaction():
    # Inner relative offsets 0, 2, 5 (compacted); the wrapper holds the absolute last offset 105.
    inner = b"".join(encode_message(rel, magic=1, key=b"k%d" % rel, value=b"v", timestamp=10 + rel)
                     for rel in (0, 2, 5))
    wrapper = encode_message(105, magic=1, key=None, value=compress(Compression.GZIP, inner), timestamp=15,
                             attributes=int(Compression.GZIP))
    (b,) = batches(wrapper)
    assert [r.offset for r in b.records] == [100, 102, 105]
    assert (b.base_offset, b.last_offset) == (100, 105)


def test_magic0_compressed_inner_offsets_are_absolute():
    inner = b"".join(encode_message(o, magic=0, key=b"k", value=b"v") for o in (7, 8, 11))
    wrapper = encode_message(11, magic=0, key=None, value=compress(Compression.SNAPPY, inner),
                             attributes=int(Compression.SNAPPY))
    assert [r.offset for r in records(wrapper)] == [7, 8, 11]


def test_magic0_lz4_uses_kafkas_legacy_frame_checksum():
    data = encode_message_set(MESSAGES, magic=0, compression=Compression.LZ4)
    (b,) = batches(data)
    assert len(b.records) == len(MESSAGES)


def test_mixed_formats_in_one_segment():
    data = (encode_message_set(MESSAGES[:3], magic=0, base_offset=0)
            + encode_message_set(MESSAGES[3:6], magic=1, base_offset=3, compression=Compression.GZIP)
            + encode_batch([(k, v, ts) for k, v, ts in MESSAGES[6:]], base_offset=6))
    got = batches(data)
    assert [b.magic for b in got] == [0, 0, 0, 1, 2]
    assert [r.offset for b in got for r in b.records] == list(range(len(MESSAGES)))


def test_crc_mismatch_is_reported():
    data = bytearray(encode_message_set(MESSAGES[:3], magic=1, base_offset=0))
    first_size = 12 + struct.unpack_from(">i", data, 8)[0]
    data[first_size + 30] ^= 0x01  # a byte inside the second message's key
    items = list(read_batches(bytes(data)))
    assert [type(i).__name__ for i in items] == ["RecordBatch", "CorruptBatch", "RecordBatch"]
    assert items[1].position == first_size
    assert "CRC-32 mismatch" in items[1].reason


def test_nested_compression_is_corrupt():
    inner_wrapper = encode_message_set(MESSAGES[:2], magic=1, compression=Compression.GZIP)
    outer = encode_message(1, magic=1, key=None, value=compress(Compression.GZIP, inner_wrapper), timestamp=0,
                           attributes=int(Compression.GZIP))
    (item,) = list(read_batches(outer))
    assert isinstance(item, CorruptBatch) and "nested" in item.reason


# ---- kafka-python as the oracle --------------------------------------------------------------

ORACLE = [(m, c) for m in (0, 1) for c in LEGACY_CODECS if not (m == 0 and c is Compression.LZ4)]
# (kafka-python needs the xxhash package for magic-0 LZ4; that combination is covered above)


@pytest.mark.parametrize("magic,codec", ORACLE, ids=lambda x: str(getattr(x, "label", x)))
def test_kafka_python_reads_what_we_write(kafka_python, magic, codec):
    data = encode_message_set(MESSAGES, magic=magic, base_offset=10, compression=codec)
    got = []
    for kb in kafka_python.MemoryRecords(data):
        assert kb.magic == magic and kb.validate_crc()
        got.extend((r.offset, r.timestamp if magic else -1, r.key, r.value) for r in kb)
    assert got == [(10 + i, ts if magic else -1, k, v) for i, (k, v, ts) in enumerate(MESSAGES)]


@pytest.mark.parametrize("magic,codec", ORACLE, ids=lambda x: str(getattr(x, "label", x)))
def test_we_read_what_kafka_python_writes(kafka_python, magic, codec):
    builder = kafka_python.MemoryRecordsBuilder(magic=magic, compression_type=int(codec), batch_size=1 << 20,
                                                offset=10)
    for k, v, ts in MESSAGES:
        assert builder.append(ts, k, v) is not None
    builder.close()
    data = bytearray(builder.buffer())
    if codec is not Compression.NONE:
        # A producer leaves the wrapper offset at 0; the broker sets it to the last offset
        # (outside the CRC), which is what segment files hold.
        data[0:8] = struct.pack(">q", 10 + len(MESSAGES) - 1)
    got = records(bytes(data))
    assert [(r.offset, r.key, r.value) for r in got] == [(10 + i, k, v) for i, (k, v, _ts) in enumerate(MESSAGES)]
    if magic == 1:
        assert [r.timestamp for r in got] == [ts for _k, _v, ts in MESSAGES]
