"""Reading segment files: every partition, codec and message format, transaction status, corruption."""
from __future__ import annotations

import struct

import pytest

from dumps_fixtures import T0, Expected, build_log_dir, flat, oc, raw_record
from kgroup.dumps import DumpEntry, DumpError, DumpReport, open_dump, read_dump
from kgroup.dumps.txn import TxnOrder
from kgroup.log import Compression, OffsetsLog, read_batches, write_segment
from kgroup.records import decode_record


@pytest.fixture(scope="module")
def log_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("logs")
    return root, build_log_dir(root)


def _key(e: DumpEntry):
    return (e.topic, e.partition, e.offset, e.txn, e.control, e.record)


def _expected_key(t, p, ex: Expected):
    return (t, p, ex.offset, ex.txn, ex.control, ex.record)


def test_a_log_dir_reads_back_every_record_in_log_order_with_its_transaction_status(log_dir):
    root, expected = log_dir
    report = DumpReport()
    entries = list(read_dump(root, report=report))
    assert [_key(e) for e in entries] == [_expected_key(*x) for x in flat(expected)]
    assert report.ok, report.summary()
    assert {e.kind for e in entries} == {"segment"}


def test_the_report_accounts_for_every_entry(log_dir):
    root, expected = log_dir
    report = DumpReport()
    entries = list(read_dump(root, report=report))
    n = len(flat(expected))
    assert report.entries == n == len(entries)
    assert report.entries == report.records + report.partial + report.control + report.unknown + report.decode_errors
    assert report.control == 2
    assert report.txn == {"none": 66, "committed": 3, "aborted": 1, "open": 1}
    assert report.by_type["ShareSnapshot"] == 1 and report.by_type["StreamsGroupMetadata"] == 1
    assert report.tombstones == 3
    assert report.files == 7  # 4 + 2 legacy + 1 share segment; the user topic is not read
    assert "no problems" in report.summary()


def test_raw_bytes_positions_and_batches_are_kept(log_dir):
    root, _ = log_dir
    for e in read_dump(root):
        assert e.key is not None
        if e.record is not None:
            assert decode_record(e.key, e.value, topic=e.topic) == e.record
            assert e.record.encode() == (e.key, e.value)
        assert e.position is not None and e.line is None
        assert e.batch is not None and e.batch.position == e.position
        assert e.batch.base_offset <= e.offset <= e.batch.last_offset


def test_transactional_entries_carry_producer_ids(log_dir):
    root, _ = log_dir
    p2 = [e for e in read_dump(root / "__consumer_offsets-2")]
    by_offset = {e.offset: e for e in p2}
    assert [(o, by_offset[o].txn) for o in sorted(by_offset)] == [
        (0, "committed"), (1, "committed"), (2, "none"), (3, "aborted"), (4, "committed"), (5, "committed"),
        (6, "none"), (7, "aborted"), (8, "open"), (9, "none")]
    assert by_offset[5].control == "COMMIT" and by_offset[7].control == "ABORT"
    assert by_offset[0].producer_id == 100 and by_offset[3].producer_id == 101 and by_offset[8].producer_id == 102
    assert by_offset[2].producer_id == -1


def test_legacy_message_formats_are_read(log_dir):
    root, expected = log_dir
    m1 = list(read_dump(root / "__consumer_offsets-5"))
    m0 = list(read_dump(root / "__consumer_offsets-6"))
    assert [e.record for e in m1] == [x.record for x in expected[("__consumer_offsets", 5)]]
    assert [e.record for e in m0] == [x.record for x in expected[("__consumer_offsets", 6)]]
    assert {e.batch.magic for e in m1} == {1} and {e.batch.magic for e in m0} == {0}
    assert m0[1].is_tombstone and m0[0].timestamp == -1 and m1[0].timestamp == T0


def test_only_coordinator_topics_are_read_and_topic_selects_one(log_dir):
    root, expected = log_dir
    share = list(read_dump(root, topic="__share_group_state"))
    assert [e.record for e in share] == [x.record for x in expected[("__share_group_state", 0)]]
    assert {e.topic for e in read_dump(root, topic="__consumer_offsets")} == {"__consumer_offsets"}
    with pytest.raises(DumpError):
        read_dump(root, topic="orders")


def test_single_files_of_one_partition_form_one_stream(tmp_path):
    """A transaction that spans two segment files is decided across them."""
    log = OffsetsLog(1)
    log.append(0, [oc("g", "t", 0, 1)], timestamp=T0, producer_id=7, producer_epoch=0, transactional=True)
    log.append(0, [oc("g", "t", 0, 2)], timestamp=T0 + 1)
    log.append(0, [oc("g", "t", 0, 3)], timestamp=T0 + 2)
    log.append_marker(0, commit=False, producer_id=7, producer_epoch=0, timestamp=T0 + 3)
    batches = log.batches(0)
    d = tmp_path / "__consumer_offsets-0"
    first = write_segment(d, 0, batches[:2])
    second = write_segment(d, 2, batches[2:])
    assert open_dump(first) == "segment"
    together = list(read_dump([first, second]))
    assert [(e.offset, e.txn) for e in together] == [(0, "aborted"), (1, "none"), (2, "none"), (3, "aborted")]
    alone = list(read_dump(first))
    assert [(e.offset, e.txn) for e in alone] == [(0, "open"), (1, "none")]
    assert [e.offset for e in read_dump(d)] == [0, 1, 2, 3]


def test_unknown_types_and_undecodable_records_are_reported_not_raised(tmp_path):
    log = OffsetsLog(1)
    good = oc("g", "t", 0, 1)
    bad_value = (good.encode()[0], b"\x00\x03\x00")        # OffsetCommit v3 cut short
    bad_version = (good.encode()[0], b"\x00\x63" + bytes(30))  # value version 99
    log.append(0, [good, raw_record(99, b"whatever"), bad_value, bad_version, raw_record(42, value=None)],
               timestamp=T0)
    log.append(0, [oc("g", "t", 0, 2)], timestamp=T0 + 1)
    log.write(tmp_path)
    report = DumpReport()
    entries = list(read_dump(tmp_path, report=report))
    assert len(entries) == 6
    assert [e.record is not None for e in entries] == [True, False, False, False, False, True]
    assert entries[1].fields == {"unknown_type": 99} and "unknown record type 99" in entries[1].error
    assert entries[4].fields == {"unknown_type": 42}
    assert report.unknown_types == {99: 1, 42: 1} and report.decode_errors == 2 and report.records == 2
    assert report.entries == report.records + report.unknown + report.decode_errors
    seg = str(tmp_path / "__consumer_offsets-0" / "00000000000000000000.log")
    assert [(p.file, p.position) for p in report.problems] == [(seg, 0)] * 2
    assert "offset 2" in report.problems[0].reason and "offset 3" in report.problems[1].reason
    # unknown types are skipped with a warning, as Kafka's CoordinatorLoaderImpl does: not problems
    assert [(p.file, p.position) for p in report.warnings] == [(seg, 0)] * 2
    assert "unknown record type 99 at offset 1; skipped" in report.warnings[0].reason


# --------------------------------------------------------------------------- corruption


def _five_batches(tmp_path, codec=Compression.NONE):
    log = OffsetsLog(1, compression=codec)
    for b in range(5):
        log.append(0, [oc("g", "t", p, 100 * b + p) for p in range(3)], timestamp=T0 + b)
    path = log.write(tmp_path)[0]
    positions = [b.position for b in read_batches(path.read_bytes())]
    return path, positions


@pytest.mark.parametrize("codec", [Compression.NONE, Compression.ZSTD])
def test_a_flipped_byte_loses_only_its_batch(tmp_path, codec):
    path, positions = _five_batches(tmp_path, codec)
    data = bytearray(path.read_bytes())
    data[positions[2] + 70] ^= 0xFF
    path.write_bytes(bytes(data))
    report = DumpReport()
    entries = list(read_dump(path, report=report))
    assert [e.record.value.offset for e in entries] == [0, 1, 2, 100, 101, 102, 300, 301, 302, 400, 401, 402]
    assert report.corrupt_spans == 1 and report.corrupt_bytes == positions[3] - positions[2]
    (problem,) = report.problems
    assert problem.file == str(path) and problem.position == positions[2] and "CRC" in problem.reason
    # 15 records written: 12 decoded + the 3 of the one reported span
    assert report.records + 3 == 15


def test_a_truncated_segment_keeps_everything_before_the_cut(tmp_path):
    path, positions = _five_batches(tmp_path)
    data = path.read_bytes()
    path.write_bytes(data[:positions[4] + 30])
    report = DumpReport()
    entries = list(read_dump(path, report=report))
    assert len(entries) == 12 and entries[-1].offset == 11
    (problem,) = report.problems
    assert problem.position == positions[4] and "truncated" in problem.reason
    assert report.corrupt_bytes == 30


def test_a_garbage_length_field_is_skipped_and_reading_resynchronises(tmp_path):
    path, positions = _five_batches(tmp_path)
    data = bytearray(path.read_bytes())
    data[positions[1] + 8:positions[1] + 12] = struct.pack(">i", 0x7FFFFFF0)
    path.write_bytes(bytes(data))
    report = DumpReport()
    entries = list(read_dump(path, report=report))
    assert [e.offset for e in entries] == [0, 1, 2, 6, 7, 8, 9, 10, 11, 12, 13, 14]
    (problem,) = report.problems
    assert problem.position == positions[1] and problem.file == str(path)
    assert report.corrupt_bytes == positions[2] - positions[1]


def test_a_corrupt_marker_batch_leaves_its_transaction_open(tmp_path):
    log = OffsetsLog(1)
    log.append(0, [oc("g", "t", 0, 1)], timestamp=T0, producer_id=9, producer_epoch=0, transactional=True)
    log.append_marker(0, commit=True, producer_id=9, producer_epoch=0, timestamp=T0 + 1)
    log.append(0, [oc("g", "t", 0, 2)], timestamp=T0 + 2)
    path = log.write(tmp_path)[0]
    positions = [b.position for b in read_batches(path.read_bytes())]
    data = bytearray(path.read_bytes())
    data[positions[1] + 40] ^= 1
    path.write_bytes(bytes(data))
    report = DumpReport()
    assert [(e.offset, e.txn) for e in read_dump(path, report=report)] == [(0, "open"), (2, "none")]
    assert report.problems[0].position == positions[1]


# --------------------------------------------------------------------------- paths


def test_missing_empty_and_unreadable_paths_raise_before_reading(tmp_path):
    with pytest.raises(FileNotFoundError):
        read_dump(tmp_path / "nope")
    with pytest.raises(DumpError):
        read_dump(tmp_path)  # an empty directory
    (tmp_path / "blob.bin").write_bytes(b"\x00\x01\x02\x03" * 3)
    with pytest.raises(DumpError):
        read_dump(tmp_path / "blob.bin")
    with pytest.raises(DumpError):
        read_dump([])


def test_progress_bar_by_bytes(log_dir, capsys):
    root, expected = log_dir
    assert len(list(read_dump(root, progress=True))) == len(flat(expected))
    assert "reading dump" in capsys.readouterr().err


# --------------------------------------------------------------------------- TxnOrder


def _e(offset: int, pid: int = -1) -> DumpEntry:
    return DumpEntry("f", "segment", "__consumer_offsets", 0, offset, 0, 0, None, None, b"k", b"v", pid, 0)


def test_txn_order_holds_back_only_while_a_transaction_is_undecided():
    order = TxnOrder()
    out = list(order.data(_e(0), False))
    assert [e.offset for e in out] == [0] and order.held == 0
    assert list(order.data(_e(1, 5), True)) == []
    assert list(order.data(_e(2), False)) == [] and order.held == 2
    marker = _e(3, 5)
    marker.control = "COMMIT"
    released = list(order.marker(marker, True))
    assert [(e.offset, e.txn) for e in released] == [(1, "committed"), (2, "none"), (3, "committed")]
    assert order.held == 0 and order.held_max == 3
    assert [e.offset for e in order.data(_e(4), False)] == [4]


def test_txn_order_memory_is_bounded_by_the_oldest_open_transaction():
    order = TxnOrder()
    list(order.data(_e(0, 1), True))
    for i in range(1, 50):
        list(order.data(_e(i, 2), True))
        m = _e(100 + i, 2)
        m.control = "ABORT"
        list(order.marker(m, False))
    assert order.held == 99  # everything after offset 0 waits for pid 1
    tail = list(order.finish())
    assert tail[0].txn == "open" and {e.txn for e in tail[1:]} == {"aborted"}
    assert order.held == 0
