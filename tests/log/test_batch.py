"""Magic-2 batches: known answer, round trips with every codec, kafka-python as the oracle."""
from __future__ import annotations

import struct

import pytest
from crc32c import crc32c

from kgroup.log import (
    Compression,
    ControlMarker,
    ControlType,
    CorruptBatch,
    LogRecord,
    RecordBatch,
    TimestampType,
    encode_batch,
    encode_control_batch,
    iter_records,
    read_batches,
)

CODECS = list(Compression)
TS = 1718000000123


def one(data: bytes) -> RecordBatch:
    items = list(read_batches(data))
    assert len(items) == 1, items
    assert isinstance(items[0], RecordBatch), items[0]
    return items[0]


def sample_records(n: int = 50) -> list[tuple]:
    """Compressible records with null keys/values and headers mixed in."""
    out = []
    for i in range(n):
        key = None if i % 7 == 3 else b"\x00\x01" + f"group-{i % 5}/topic-{i % 3}".encode()
        value = None if i % 11 == 4 else b"\x00\x03" + struct.pack(">qi", 1000 + i, 7) + b"metadata" * (i % 4)
        headers = [("trace", f"id-{i}".encode()), ("empty", None), ("ünï", b"")] if i % 6 == 0 else []
        out.append((key, value, TS + (i % 9) * 3, headers))
    return out


# ---- known answer -------------------------------------------------------------------------

# One uncompressed batch, written out field by field. The CRC (bytes 17..20) is left as
# 00000000 here and computed below, independently of kgroup, over attributes..end.
KNOWN_HEX = (
    "0000000000000005"  # baseOffset 5
    "0000003a"  # batchLength 58 = 61 - 12 + 9
    "00000011"  # partitionLeaderEpoch 17
    "02"  # magic 2
    "00000000"  # crc (filled in below)
    "0000"  # attributes: no compression, CreateTime, not transactional/control
    "00000000"  # lastOffsetDelta 0
    "0000019000c79c7b"  # baseTimestamp 1718000000123
    "0000019000c79c7b"  # maxTimestamp
    "ffffffffffffffff"  # producerId -1
    "ffff"  # producerEpoch -1
    "ffffffff"  # baseSequence -1
    "00000001"  # recordsCount 1
    # record: length 8 (zigzag 0x10), attributes 0, timestampDelta 0, offsetDelta 0,
    # keyLength 1 (zigzag 0x02) 'k', valueLength 1 'v', headerCount 0
    "10" "00" "00" "00" "02" "6b" "02" "76" "00"
)


def known_batch() -> bytes:
    raw = bytearray(bytes.fromhex(KNOWN_HEX))
    raw[17:21] = crc32c(bytes(raw[21:])).to_bytes(4, "big")
    return bytes(raw)


def test_known_answer_batch_decodes_field_by_field():
    raw = known_batch()
    assert len(raw) == 70
    b = one(raw)
    assert b.base_offset == 5
    assert b.batch_length == 58
    assert b.partition_leader_epoch == 17
    assert b.magic == 2
    assert b.crc == crc32c(raw[21:])
    assert b.attributes == 0
    assert b.last_offset_delta == 0 and b.last_offset == 5
    assert b.base_timestamp == b.max_timestamp == TS
    assert (b.producer_id, b.producer_epoch, b.base_sequence) == (-1, -1, -1)
    assert b.record_count == 1
    assert b.compression is Compression.NONE
    assert b.timestamp_type is TimestampType.CREATE_TIME
    assert not b.is_transactional and not b.is_control and not b.has_delete_horizon
    assert b.delete_horizon_ms is None
    assert b.control_marker is None
    assert (b.position, b.size) == (0, 70)
    assert b.records == (LogRecord(5, TS, b"k", b"v", ()),)


def test_known_answer_batch_is_what_we_encode():
    ours = encode_batch([(b"k", b"v", TS)], base_offset=5, partition_leader_epoch=17)
    assert ours == known_batch()


# ---- round trips ----------------------------------------------------------------------------


@pytest.mark.parametrize("codec", CODECS, ids=lambda c: c.label)
def test_round_trip_every_codec(codec):
    recs = sample_records()
    data = encode_batch(recs, base_offset=1000, compression=codec, producer_id=42, producer_epoch=3,
                        base_sequence=17, partition_leader_epoch=9)
    b = one(data)
    assert b.compression is codec
    assert b.attributes == int(codec)
    assert (b.base_offset, b.last_offset, b.record_count) == (1000, 1049, 50)
    assert (b.producer_id, b.producer_epoch, b.base_sequence, b.last_sequence) == (42, 3, 17, 66)
    assert b.partition_leader_epoch == 9
    assert b.base_timestamp == TS and b.max_timestamp == max(r[2] for r in recs)
    assert b.size == len(data) == b.batch_length + 12
    assert b.crc == crc32c(data[21:])
    for i, (rec, (k, v, ts, hs)) in enumerate(zip(b.records, recs)):
        assert rec == LogRecord(1000 + i, ts, k, v, tuple(hs))
    # the fast path sees the same records
    assert list(iter_records(data)) == [(r.offset, r.timestamp, r.key, r.value) for r in b.records]


def test_transactional_and_log_append_time_bits():
    data = encode_batch([(b"k", b"v", 5), (b"k2", b"v2", 9)], base_offset=0, producer_id=7, producer_epoch=1,
                        base_sequence=0, transactional=True, timestamp_type=TimestampType.LOG_APPEND_TIME,
                        log_append_time=12345)
    b = one(data)
    assert b.is_transactional and not b.is_control
    assert b.attributes == 0x18
    assert b.timestamp_type is TimestampType.LOG_APPEND_TIME
    assert b.max_timestamp == 12345
    assert [r.timestamp for r in b.records] == [12345, 12345]  # LogAppendTime: maxTimestamp for all


def test_delete_horizon():
    data = encode_batch([(b"k", None, 100), (b"k2", None, 150)], base_offset=3, delete_horizon_ms=5000)
    b = one(data)
    assert b.has_delete_horizon and b.delete_horizon_ms == 5000 == b.base_timestamp
    assert [r.timestamp for r in b.records] == [100, 150]


@pytest.mark.parametrize("ctype", [ControlType.COMMIT, ControlType.ABORT])
def test_control_batches(ctype):
    data = encode_control_batch(ctype, base_offset=77, producer_id=1234, producer_epoch=5, coordinator_epoch=9,
                                timestamp=TS, partition_leader_epoch=2)
    b = one(data)
    assert b.is_control and b.is_transactional
    assert b.attributes == 0x30
    assert (b.producer_id, b.producer_epoch, b.base_sequence) == (1234, 5, -1)
    assert b.partition_leader_epoch == 2
    assert b.control_marker == ControlMarker(ctype, 9)
    (rec,) = b.records
    assert rec.key == struct.pack(">hh", 0, int(ctype))
    assert rec.value == struct.pack(">hi", 0, 9)
    assert rec.offset == 77 and rec.timestamp == TS
    # control records are not data: the fast path skips them unless asked
    assert list(iter_records(data)) == []
    assert list(iter_records(data, include_control=True)) == [(77, TS, rec.key, rec.value)]


def test_multi_byte_varints_and_large_values():
    big = bytes(range(256)) * 100  # length needs a 3-byte varint
    recs = [(b"k" * 200, big, TS - 10_000_000), (None, None, TS + 10_000_000)]
    b = one(encode_batch(recs, base_offset=2**40))
    assert b.records[0] == LogRecord(2**40, TS - 10_000_000, b"k" * 200, big, ())
    assert b.records[1] == LogRecord(2**40 + 1, TS + 10_000_000, None, None, ())


def test_empty_batch_rejected():
    with pytest.raises(ValueError):
        encode_batch([], base_offset=0)


def test_positions_and_source():
    a = encode_batch([(b"a", b"1", 1)], base_offset=0)
    b = encode_batch([(b"b", b"2", 2)], base_offset=1)
    items = list(read_batches(a + b, source="x.log", base_position=4096))
    assert [(i.position, i.size, i.source) for i in items] == [
        (4096, len(a), "x.log"), (4096 + len(a), len(b), "x.log")]


def test_memoryview_input():
    data = encode_batch(sample_records(5), base_offset=0)
    assert one(memoryview(data)).records == one(data).records


# ---- kafka-python as the oracle ---------------------------------------------------------------


@pytest.mark.parametrize("codec", CODECS, ids=lambda c: c.label)
def test_kafka_python_reads_what_we_write(kafka_python, codec):
    recs = sample_records()
    data = encode_batch(recs, base_offset=500, compression=codec, producer_id=9, producer_epoch=2, base_sequence=40,
                        transactional=True, partition_leader_epoch=4)
    batches = list(kafka_python.MemoryRecords(data))
    assert len(batches) == 1
    kb = batches[0]
    assert kb.validate_crc()
    assert kb.compression_type == int(codec)
    assert (kb.base_offset, kb.last_offset_delta, kb.producer_id, kb.producer_epoch, kb.base_sequence) == (
        500, 49, 9, 2, 40)
    assert kb.is_transactional and not kb.is_control_batch
    assert kb.leader_epoch == 4
    got = [(r.offset, r.timestamp, r.key, r.value, [tuple(h) for h in r.headers]) for r in kb]
    assert got == [(500 + i, ts, k, v, list(hs)) for i, (k, v, ts, hs) in enumerate(recs)]


def test_kafka_python_reads_our_control_batch(kafka_python):
    data = encode_control_batch(ControlType.ABORT, base_offset=3, producer_id=8, producer_epoch=1,
                                coordinator_epoch=6, timestamp=TS)
    (kb,) = list(kafka_python.MemoryRecords(data))
    assert kb.validate_crc() and kb.is_control_batch and kb.is_transactional
    (rec,) = list(kb)
    assert rec.abort and rec.type == 0


@pytest.mark.parametrize("codec", CODECS, ids=lambda c: c.label)
def test_we_read_what_kafka_python_writes(kafka_python, codec):
    recs = sample_records()
    # kafka-python (like a producer) writes baseOffset 0 and puts the offsets in the deltas
    builder = kafka_python.MemoryRecordsBuilder(magic=2, compression_type=int(codec), batch_size=1 << 20,
                                                offset=300)
    for k, v, ts, hs in recs:
        assert builder.append(ts, k, v, hs) is not None
    builder.close()
    data = bytes(builder.buffer())
    b = one(data)
    assert b.compression is codec  # compressible data: kafka-python kept the codec
    assert (b.base_offset, b.last_offset, b.record_count) == (0, 349, 50)
    assert b.records == tuple(LogRecord(300 + i, ts, k, v, tuple(hs)) for i, (k, v, ts, hs) in enumerate(recs))


def test_uncompressed_bytes_match_kafka_python(kafka_python):
    recs = sample_records(20)
    builder = kafka_python.MemoryRecordsBuilder(magic=2, compression_type=0, batch_size=1 << 20, offset=0)
    for k, v, ts, hs in recs:
        builder.append(ts, k, v, hs)
    builder.close()
    theirs = bytes(builder.buffer())
    ple = struct.unpack_from(">i", theirs, 12)[0]
    assert encode_batch(recs, base_offset=0, partition_leader_epoch=ple) == theirs


def test_reading_is_not_fooled_by_a_corrupt_record_area():
    data = bytearray(encode_batch([(b"k", b"v", 1)], base_offset=0))
    data[-3] = 0x7F  # value length -> 63 bytes that are not there; fix the CRC so only records are bad
    data[17:21] = crc32c(bytes(data[21:])).to_bytes(4, "big")
    (item,) = list(read_batches(bytes(data)))
    assert isinstance(item, CorruptBatch)
    assert item.position == 0 and item.length == len(data)
    assert "invalid records" in item.reason
