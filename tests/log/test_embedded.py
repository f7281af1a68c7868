"""The embedded __consumer_offsets log: appends, markers, files, reading back."""
from __future__ import annotations

import struct
import sys
import types

import pytest

from kgroup.log import (
    Compression,
    ControlMarker,
    ControlType,
    CorruptBatch,
    LogEntry,
    OffsetsLog,
    RecordBatch,
    TimestampType,
    read_batches,
    read_segment,
)


def key(group: str, topic: str = "t", partition: int = 0) -> bytes:
    g, t = group.encode(), topic.encode()
    return struct.pack(">hh", 1, len(g)) + g + struct.pack(">h", len(t)) + t + struct.pack(">i", partition)


def value(offset: int) -> bytes:
    return struct.pack(">hqih", 3, offset, -1, 0) + struct.pack(">q", 1000)


class FakeRecord:
    """Stands in for a kgroup.records record: anything with .encode() -> (key, value)."""

    def __init__(self, group: str, offset: int | None):
        self.group, self.offset = group, offset

    def encode(self):
        return key(self.group), None if self.offset is None else value(self.offset)


@pytest.fixture
def fake_records(monkeypatch):
    """A stand-in `kgroup.records` that records what decode_record is asked."""
    calls = []
    mod = types.ModuleType("kgroup.records")

    def decode_record(k, v, *, topic="__consumer_offsets"):
        calls.append((k, v, topic))
        return ("decoded", k, v)

    mod.decode_record = decode_record
    monkeypatch.setitem(sys.modules, "kgroup.records", mod)
    return calls


def only_batch(data: bytes) -> RecordBatch:
    (b,) = list(read_batches(data))
    assert isinstance(b, RecordBatch)
    return b


def test_append_raw_pairs_one_batch_per_call():
    log = OffsetsLog(10, partition_leader_epoch=4)
    e1 = log.append(3, [(key("g1"), value(5)), (key("g2"), value(6))], timestamp=1000)
    e2 = log.append(3, [(key("g1"), None)], timestamp=1001)
    e3 = log.append(7, [(key("g3"), value(1))], timestamp=1002)
    assert [(e.position, e.partition, e.offset, e.timestamp) for e in e1 + e2 + e3] == [
        (0, 3, 0, 1000), (1, 3, 1, 1000), (2, 3, 2, 1001), (3, 7, 0, 1002)]
    assert e2[0].is_tombstone and e2[0].value is None
    assert len(log) == 4 and list(log) == log.entries() == e1 + e2 + e3
    assert log.entries(3) == e1 + e2 and log.entries(5) == []
    assert (log.end_offset(3), log.end_offset(7), log.end_offset(0)) == (3, 1, 0)
    assert log.partitions_in_use() == [3, 7]
    assert log.entry_at(2) is e2[0]
    with pytest.raises(IndexError):
        log.entry_at(4)
    batches = log.batches(3)
    assert len(batches) == 2
    b = only_batch(batches[0])
    # what Kafka's coordinator runtime writes: CreateTime, baseSequence 0, no producer
    assert (b.base_offset, b.last_offset, b.record_count) == (0, 1, 2)
    assert b.timestamp_type is TimestampType.CREATE_TIME
    assert (b.producer_id, b.producer_epoch, b.base_sequence) == (-1, -1, 0)
    assert b.partition_leader_epoch == 4 and b.compression is Compression.NONE
    assert [(r.key, r.value, r.timestamp) for r in b.records] == [(key("g1"), value(5), 1000),
                                                                  (key("g2"), value(6), 1000)]
    assert only_batch(batches[1]).base_offset == 2


def test_typed_records_are_kept(fake_records):
    log = OffsetsLog()
    rec = FakeRecord("g", 42)
    (entry,) = log.append(1, [rec], timestamp=5)
    assert entry.record is rec
    assert (entry.key, entry.value) == rec.encode()
    assert fake_records == []


def test_raw_records_decode_lazily_once(fake_records):
    log = OffsetsLog(topic="__consumer_offsets")
    (entry,) = log.append(1, [(key("g"), value(1))], timestamp=5)
    assert fake_records == []
    assert entry.record == ("decoded", key("g"), value(1))
    assert entry.record == ("decoded", key("g"), value(1))
    assert fake_records == [(key("g"), value(1), "__consumer_offsets")]


def test_share_state_topic_is_passed_to_the_decoder(fake_records):
    log = OffsetsLog(50, topic="__share_group_state")
    (entry,) = log.append(0, [(b"\x00\x00xyz", b"\x00\x00")], timestamp=1)
    entry.record
    assert fake_records[0][2] == "__share_group_state"


def test_transactional_append_and_markers(fake_records):
    log = OffsetsLog(5)
    txn = log.append(2, [(key("g"), value(9))], timestamp=10, producer_id=77, producer_epoch=3, transactional=True)
    marker = log.append_marker(2, commit=True, producer_id=77, producer_epoch=3, coordinator_epoch=8, timestamp=11)
    abort = log.append_marker(2, commit=False, producer_id=78, producer_epoch=0, timestamp=12)
    assert txn[0].is_transactional and (txn[0].producer_id, txn[0].producer_epoch) == (77, 3)
    assert marker.control == ControlMarker(ControlType.COMMIT, 8) and marker.is_control
    assert abort.control == ControlMarker(ControlType.ABORT, 0)
    assert marker.record is None and abort.record is None and fake_records == []
    assert (marker.offset, abort.offset, marker.position) == (1, 2, 1)
    assert marker.key == struct.pack(">hh", 0, 1) and marker.value == struct.pack(">hi", 0, 8)
    tb, mb, ab = (only_batch(b) for b in log.batches(2))
    assert tb.is_transactional and not tb.is_control and (tb.producer_id, tb.producer_epoch) == (77, 3)
    assert mb.is_control and mb.is_transactional and mb.control_marker == marker.control
    assert (mb.producer_id, mb.producer_epoch, mb.base_sequence) == (77, 3, -1)
    assert ab.control_marker.type is ControlType.ABORT


def test_validation():
    log = OffsetsLog(3)
    with pytest.raises(ValueError):
        log.append(3, [(b"k", b"v")], timestamp=0)
    with pytest.raises(ValueError):
        log.append(0, [(None, b"v")], timestamp=0)
    with pytest.raises(ValueError):
        log.append(0, [(b"k", b"v")], timestamp=0, transactional=True)
    with pytest.raises(TypeError):
        log.append(0, [42], timestamp=0)
    assert log.append(0, [], timestamp=0) == [] and len(log) == 0 and log.partitions_in_use() == []


def test_entries_are_immutable():
    log = OffsetsLog()
    (e,) = log.append(0, [(b"k", b"v")], timestamp=0)
    with pytest.raises(AttributeError):
        e.offset = 5
    assert isinstance(e, LogEntry) and hash(e) == hash(e)


@pytest.mark.parametrize("codec", [Compression.NONE, Compression.ZSTD, Compression.LZ4], ids=lambda c: c.label)
def test_write_and_read_round_trip(tmp_path, codec):
    log = OffsetsLog(50, compression=codec, partition_leader_epoch=2)
    ts = 1_718_000_000_000
    for i in range(40):
        p = (i * 7) % 5
        log.append(p, [(key(f"g{i}", partition=j), value(i * 10 + j)) for j in range(1 + i % 3)], timestamp=ts + i)
        if i % 10 == 9:
            log.append(p, [(key(f"g{i}"), value(1))], timestamp=ts + i, producer_id=500 + i, producer_epoch=0,
                       transactional=True)
            log.append_marker(p, commit=i % 20 == 9, producer_id=500 + i, producer_epoch=0, coordinator_epoch=1,
                              timestamp=ts + i)
    paths = log.write(tmp_path)
    assert sorted(p.parent.name for p in paths) == [f"__consumer_offsets-{p}" for p in range(5)]
    for p in log.partitions_in_use():
        seg = tmp_path / f"__consumer_offsets-{p}" / "00000000000000000000.log"
        assert seg.read_bytes() == b"".join(log.batches(p))  # byte-identical batches
        assert seg.with_suffix(".index").exists() and seg.with_suffix(".timeindex").exists()
        assert all(isinstance(b, RecordBatch) for b in read_segment(seg))

    again, corrupt = OffsetsLog.read(tmp_path)
    assert corrupt == []
    assert again.num_partitions == 50 and again.topic == "__consumer_offsets"
    assert list(again) == list(log)  # same global order: timestamps never go down
    assert [again.end_offset(p) for p in range(5)] == [log.end_offset(p) for p in range(5)]
    assert all(again.batches(p) == log.batches(p) for p in range(5))
    # appending after a read continues at the end offsets
    (nxt,) = again.append(0, [(b"k", b"v")], timestamp=ts + 100)
    assert nxt.offset == log.end_offset(0) and nxt.position == len(log)


def test_read_orders_by_timestamp_then_partition_then_offset(tmp_path):
    log = OffsetsLog(10)
    log.append(4, [(b"a", b"1")], timestamp=200)
    log.append(2, [(b"b", b"1"), (b"c", b"1")], timestamp=200)
    log.append(4, [(b"d", b"1")], timestamp=100)  # an older timestamp stays after its partition's earlier batch
    log.append(9, [(b"e", b"1")], timestamp=50)
    log.write(tmp_path)
    again, _ = OffsetsLog.read(tmp_path, num_partitions=10)
    assert [(e.partition, e.offset, e.key) for e in again] == [
        (9, 0, b"e"), (2, 0, b"b"), (2, 1, b"c"), (4, 0, b"a"), (4, 1, b"d")]
    assert [e.position for e in again] == list(range(5))


def test_read_single_partition_dir_and_files(tmp_path):
    log = OffsetsLog()
    log.append(3, [(b"a", b"1")], timestamp=1)
    log.append(8, [(b"b", b"1")], timestamp=2)
    paths = log.write(tmp_path)
    one, _ = OffsetsLog.read(tmp_path / "__consumer_offsets-8")
    assert [(e.partition, e.key) for e in one] == [(8, b"b")]
    both, _ = OffsetsLog.read(paths)
    assert [(e.partition, e.key) for e in both] == [(3, b"a"), (8, b"b")]
    wide, _ = OffsetsLog.read(tmp_path, num_partitions=None)
    assert wide.num_partitions == 50
    with pytest.raises(ValueError):
        OffsetsLog.read(tmp_path, num_partitions=5)


def test_read_reports_corruption_and_keeps_the_rest(tmp_path):
    log = OffsetsLog()
    for i in range(3):
        log.append(0, [(key(f"g{i}"), value(i))], timestamp=i)
    (seg,) = log.write(tmp_path)
    raw = bytearray(seg.read_bytes())
    second = len(log.batches(0)[0])
    raw[second + 40] ^= 0xFF
    seg.write_bytes(bytes(raw))
    again, corrupt = OffsetsLog.read(tmp_path)
    assert [e.offset for e in again] == [0, 2]
    assert len(corrupt) == 1 and isinstance(corrupt[0], CorruptBatch)
    assert corrupt[0].position == second and corrupt[0].source == str(seg)
    assert again.end_offset(0) == 3


def test_segment_named_after_first_offset_when_read_from_a_later_segment(tmp_path):
    from kgroup.log import encode_batch, write_segment

    d = tmp_path / "__consumer_offsets-1"
    write_segment(d, 368769, [encode_batch([(b"k", b"v", 7)], base_offset=368769)])
    log, _ = OffsetsLog.read(tmp_path)
    assert log.end_offset(1) == 368770
    (path,) = log.write(tmp_path / "out")
    assert path.name == "00000000000000368769.log"


def test_append_batch_bytes():
    from kgroup.log import encode_batch

    log = OffsetsLog()
    entries = log.append_batch_bytes(5, encode_batch([(b"k", b"v", 3)], base_offset=10))
    assert [(e.offset, e.position) for e in entries] == [(10, 0)] and log.end_offset(5) == 11
    with pytest.raises(ValueError):
        log.append_batch_bytes(5, encode_batch([(b"k", b"v", 3)], base_offset=4))


def test_round_trip_with_real_coordinator_records(tmp_path):
    records = pytest.importorskip("kgroup.records")
    from kgroup.log import partition_for

    rec = records.OffsetCommit(records.OffsetCommitKey(group="orders", topic="payments", partition=3),
                               records.OffsetCommitValue(offset=1042, leader_epoch=7, commit_timestamp=1718000000120))
    tomb = records.decode_record(rec.encode()[0], None)
    p = partition_for("orders")
    log = OffsetsLog()
    log.append(p, [rec, tomb], timestamp=1718000000123)
    log.write(tmp_path)
    again, corrupt = OffsetsLog.read(tmp_path)
    assert corrupt == []
    first, second = again.entries(p)
    assert first.record == rec and first.record is not rec  # decoded from the segment
    assert second.is_tombstone and second.record == tomb


def test_same_segment_twice_is_reported_not_fatal(tmp_path):
    log = OffsetsLog()
    log.append(0, [(b"a", b"1")], timestamp=1)
    log.append(0, [(b"b", b"1")], timestamp=2)
    (seg,) = log.write(tmp_path)
    again, corrupt = OffsetsLog.read([seg, seg])
    assert [e.key for e in again] == [b"a", b"b"]
    assert len(corrupt) == 2 and all("not appended" in c.reason for c in corrupt)
