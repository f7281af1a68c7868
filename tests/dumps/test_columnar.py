"""kgroup.dumps.columnar: runs of batches decoded with numpy give exactly the rows of the per-record way.

The reference is `read_dump` (every entry turned into a row by `ranges.add_entry`), which shares
no code with the column-wise decoder.
"""
from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
from crc32c import crc32c
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dumps_fixtures import T0, oc, raw_record, reference_rows, task_rows
from kgroup.dumps import DumpReport, columnar, ranges
from kgroup.log import Compression, ControlType, TimestampType, encode_batch, encode_control_batch
from kgroup.log.batch import read_varint
from kgroup.records import RECORD_TYPES, OffsetCommit, OffsetCommitKey, OffsetCommitValue
from records_strategies import records

HEADER = 61  # magic-2 batch header bytes


def write_log(root: Path, batches: list[bytes]) -> Path:
    """The batches as they are (no checks, no index) in a partition directory."""
    d = root / "__consumer_offsets-0"
    d.mkdir(parents=True, exist_ok=True)
    path = d / "00000000000000000000.log"
    path.write_bytes(b"".join(batches))
    return path


def blocks(path: Path, chunk_rows: int = 32 * 1024) -> list:
    plan = ranges.plan_scan(path)
    return [c for i in range(len(plan.tasks)) for c in ranges.run_task(plan, i, chunk_rows)
            if isinstance(c, columnar.Block)]


def recrc(batch: bytearray) -> bytes:
    """A batch whose CRC is made right again after its contents were changed."""
    batch[17:21] = struct.pack(">I", crc32c(bytes(batch[21:])))
    return bytes(batch)


# ------------------------------------------------------------------------------------------ examples


def test_plain_offset_commits_are_all_decoded_column_wise(tmp_path):
    recs = [oc(f"group-{g}", "orders", p, 100 * g + p, leader_epoch=g - 1,
               metadata='{"checkpoint":"x\\\\y"}' if p % 2 else "")
            for g in range(5) for p in range(8)]
    batches = [encode_batch([(*r.encode(), T0 + i) for i, r in enumerate(recs[b:b + 8])], base_offset=b,
                            compression=Compression.LZ4) for b in range(0, len(recs), 8)]
    path = write_log(tmp_path, batches)
    (block,) = blocks(path)
    assert len(block.fast_rows) == len(recs) and not block.slow_rows  # quotes and backslashes included
    rows = task_rows(ranges.plan_scan(path))
    assert rows == reference_rows(path)
    assert [r["json"] for r in rows] == [str(r.to_json()) for r in recs]


def test_odd_strings_tombstones_and_other_types_take_the_long_way_in_place(tmp_path):
    odd = [oc("g\u0007", "t", 0, 1), oc("ünï", "t", 1, 2), oc("g", "t", 2, 3, metadata="tab\there"),
           oc("g", "t", 3, 4, metadata="✓")]
    plain = [oc("g", "t", p, 10 + p) for p in range(4)]
    other = [OffsetCommit.tombstone(OffsetCommitKey(group="g", topic="t", partition=9)),
             oc("g", "t", 5, 6, version=1), oc("g", "t", 6, 7, version=4)]
    recs = [plain[0], odd[0], plain[1], other[0], odd[1], other[1], plain[2], odd[2], other[2], odd[3], plain[3]]
    encoded = [(*r.encode(), T0) for r in recs] + [(*raw_record(99, b"?"), T0), (None, b"keyless", T0)]
    path = write_log(tmp_path, [encode_batch(encoded, base_offset=0)])
    (block,) = blocks(path)
    assert block.fast_rows.tolist() == [0, 2, 6, 10]
    assert reference_rows(path) == task_rows(ranges.plan_scan(path))


def test_many_batches_walked_side_by_side_and_big_records_one_by_one(tmp_path):
    """More batches than `_LOCKSTEP_MIN`, with uneven counts, and records long enough to need
    3-byte lengths (walked one record at a time) in the middle of a batch."""
    batches, offset = [], 0
    for b in range(3 * columnar._LOCKSTEP_MIN):
        n = 1 + (b * 7) % 23
        recs = [oc(f"g{b % 5}", "t", p, offset + p, metadata="m" * (20_000 if b % 11 == 3 and p == n // 2 else 3))
                for p in range(n)]
        batches.append(encode_batch([(*r.encode(), T0 + offset) for r in recs], base_offset=offset,
                                    compression=Compression.ZSTD if b % 4 == 0 else Compression.NONE))
        offset += n
    path = write_log(tmp_path, batches)
    assert sum(len(b.fast_rows) for b in blocks(path)) == offset
    assert task_rows(ranges.plan_scan(path)) == reference_rows(path)


def test_record_heads_are_where_the_records_start():
    recs = [(*oc("g", "t", p, p, metadata="x" * (p * 500)).encode(), T0) for p in range(40)]
    batch = encode_batch(recs, base_offset=0)
    body = batch[HEADER:]
    expected, pos = [], 0
    while pos < len(body):
        expected.append(pos)
        length, after = read_varint(body, pos)
        pos = after + length
    buf = body + bytes(16)
    heads = columnar._record_heads(buf, np.frombuffer(buf, np.uint8), np.array([len(body)]), np.array([40]))
    assert heads.tolist() == expected
    for count in (39, 41):  # the batch header's count must be right
        assert columnar._record_heads(buf, np.frombuffer(buf, np.uint8), np.array([len(body)]),
                                      np.array([count])) is None


def test_a_checksummed_batch_whose_records_do_not_add_up_is_read_like_read_dump(tmp_path):
    """The CRC only says the bytes are the producer's: a record length that lies, or a count
    that does not match, must still be reported exactly as the per-record reader reports it,
    within a run long enough to be walked side by side."""
    good = [encode_batch([(*oc("g", "t", p, 2 * b + p).encode(), T0) for p in range(2)], base_offset=2 * b)
            for b in range(50)]
    lying = bytearray(encode_batch([(*oc("g", "t", 0, 1).encode(), T0), (*oc("g", "t", 1, 2).encode(), T0)],
                                   base_offset=200))
    lying[HEADER] += 2  # the first record's length varint (zigzag: +1 byte)
    too_few = bytearray(encode_batch([(*oc("g", "t", 2, 3).encode(), T0)], base_offset=202))
    too_few[57:61] = struct.pack(">i", 2)
    too_many = bytearray(encode_batch([(*oc("g", "t", 3, 4).encode(), T0), (*oc("g", "t", 4, 5).encode(), T0)],
                                      base_offset=203))
    too_many[57:61] = struct.pack(">i", 1)
    with_headers = encode_batch([(*oc("g", "t", 3, 4).encode(), T0, [("h", b"v")])], base_offset=205)
    path = write_log(tmp_path, good[:40] + [recrc(lying)] + good[40:45] + [recrc(too_few), with_headers]
                     + good[45:] + [recrc(too_many)])
    rows = task_rows(ranges.plan_scan(path))
    report = DumpReport()
    assert [r for r in rows if r["problem"] is None] == reference_rows(path, report=report)
    spans = [(r["position"], r["error"]) for r in rows if r["problem"] == "corrupt_span"]
    assert len(spans) == report.corrupt_spans == 3
    assert [(pos, error) for pos, error in spans] == [(p.position, p.reason) for p in report.problems]
    assert [r["offset"] for r in rows if r["problem"] is None] == list(range(90)) + [205] + list(range(90, 100))
    # alone in a run of good batches, each of these sends the whole run the per-record way
    for bad in (lying, too_few, too_many):
        path = write_log(tmp_path / str(bad[7]), good[:40] + [recrc(bad)])
        assert not blocks(path)
        rows = task_rows(ranges.plan_scan(path))
        assert [r for r in rows if r["problem"] is None] == reference_rows(path)
        assert [r["problem"] for r in rows[80:]] == ["corrupt_span"]


def empty_batch(base_offset: int, pid: int = -1) -> bytes:
    """A batch holding no records, as the log cleaner leaves one to keep a producer's state."""
    batch = bytearray(encode_batch([(*oc("g", "t", 0, 0).encode(), T0)], base_offset=base_offset, producer_id=pid,
                                   producer_epoch=0 if pid >= 0 else -1, transactional=pid >= 0))
    del batch[HEADER:]
    batch[8:12] = struct.pack(">i", HEADER - 12)
    batch[57:61] = struct.pack(">i", 0)
    return recrc(batch)


def test_empty_batches_left_by_the_cleaner(tmp_path, monkeypatch):
    def no_lookahead(*_a):  # an empty transactional batch waits for no marker
        raise AssertionError("a task looked for markers")

    monkeypatch.setattr(ranges, "find_markers", no_lookahead)
    for runs in (3, 2 * columnar._LOCKSTEP_MIN):
        batches = []
        for b in range(runs):
            batches.append(encode_batch([(*oc("g", "t", p, 3 * b + p).encode(), T0) for p in range(2)],
                                        base_offset=3 * b))
            batches.append(empty_batch(3 * b + 2, pid=9 if b % 2 else -1))
        path = write_log(tmp_path / str(runs), batches)
        assert sum(len(b.fast_rows) for b in blocks(path)) == 2 * runs
        assert task_rows(ranges.plan_scan(path)) == reference_rows(path)
    only_empty = write_log(tmp_path / "compacted", [empty_batch(b, pid=9) for b in range(40)])
    assert task_rows(ranges.plan_scan(only_empty)) == reference_rows(only_empty) == []


# ------------------------------------------------------------------------------------ any batches

PLAIN = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=10)
ANY_TEXT = st.text(max_size=10)
INT32 = st.integers(-2**31, 2**31 - 1)
INT64 = st.integers(-2**63, 2**63 - 1)

offset_commits = st.builds(
    lambda g, t, p, o, e, m, ts: OffsetCommit(OffsetCommitKey(group=g, topic=t, partition=p),
                                              OffsetCommitValue(offset=o, leader_epoch=e, metadata=m,
                                                                commit_timestamp=ts)),
    st.one_of(PLAIN, ANY_TEXT), st.one_of(PLAIN, ANY_TEXT), INT32, INT64, INT32, st.one_of(PLAIN, ANY_TEXT), INT64)
other_records = st.sampled_from(sorted(RECORD_TYPES)).flatmap(lambda t: records(RECORD_TYPES[t]))
odd_pairs = st.sampled_from([raw_record(99, b"?"), (None, b"keyless"), (b"\x00\x01\xff", b"\x00\x03"),
                             (b"\x00\x01\x00\x01g\x00\x01t\x00\x00\x00\x01", b"\x00\x03short")])
pairs = st.one_of(offset_commits.map(lambda r: r.encode()), offset_commits.map(lambda r: r.encode()),
                  other_records.map(lambda r: r.encode()), odd_pairs)
data_batches = st.tuples(st.just("data"), st.lists(pairs, min_size=0, max_size=12), st.sampled_from(list(Compression)),
                         st.sampled_from([-1, -1, 7, 8]), st.booleans())
control_batches = st.tuples(st.just("control"), st.sampled_from([7, 8]), st.booleans())


def build(specs: list) -> list[bytes]:
    out, offset = [], 0
    for spec in specs:
        if spec[0] == "control":
            _, pid, commit = spec
            out.append(encode_control_batch(ControlType.COMMIT if commit else ControlType.ABORT, base_offset=offset,
                                            producer_id=pid, producer_epoch=0, timestamp=T0 + offset))
            offset += 1
            continue
        _, kvs, codec, pid, append_time = spec
        if not kvs:
            continue
        recs = [(k, v, T0 + offset + i) for i, (k, v) in enumerate(kvs)]
        out.append(encode_batch(recs, base_offset=offset, compression=codec, producer_id=pid,
                                producer_epoch=0 if pid >= 0 else -1, transactional=pid >= 0,
                                timestamp_type=TimestampType.LOG_APPEND_TIME if append_time
                                else TimestampType.CREATE_TIME, log_append_time=T0 - 1 if append_time else None))
        offset += len(recs)
    return out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                                                  HealthCheck.function_scoped_fixture])
@given(specs=st.lists(st.one_of(data_batches, data_batches, control_batches), min_size=1, max_size=40),
       chunk_rows=st.sampled_from([1, 5, 1000]), split_bytes=st.sampled_from([200, 1 << 20]))
def test_any_run_of_batches_gives_the_rows_of_the_per_record_reader(tmp_path_factory, specs, chunk_rows, split_bytes):
    path = write_log(tmp_path_factory.mktemp("columnar"), build(specs))
    plan = ranges.plan_scan(path, split_bytes=split_bytes)
    assert task_rows(plan, chunk_rows) == reference_rows(path)
