"""Segment file names, the sparse .index/.timeindex, writing and reading back."""
from __future__ import annotations

import struct

import pytest

from kgroup.log import (
    CorruptBatch,
    RecordBatch,
    encode_batch,
    parse_partition_dir_name,
    parse_segment_file_name,
    partition_dir_name,
    read_batches,
    read_offset_index,
    read_partition_dir,
    read_segment,
    read_time_index,
    segment_file_name,
    segment_files,
    write_segment,
)


def sized_batch(offset: int, timestamp: int, size: int = 1500) -> bytes:
    """A one-record batch of exactly `size` bytes (61 header + 10 record overhead + value)."""
    data = encode_batch([(b"k", b"v" * (size - 71), timestamp)], base_offset=offset)
    assert len(data) == size
    return data


def test_file_names():
    assert segment_file_name(0) == "00000000000000000000.log"
    assert segment_file_name(42) == "00000000000000000042.log"
    assert segment_file_name(368769, ".index") == "00000000000000368769.index"
    assert parse_segment_file_name("00000000000000368769.log") == 368769
    assert parse_segment_file_name("/x/y/00000000000000000042.log") == 42
    for not_a_segment in ("00000000000000000042.index", "42.log", "00000000000000000042.log.deleted",
                          "00000000000000000042.log.swap", "leader-epoch-checkpoint"):
        assert parse_segment_file_name(not_a_segment) is None
    with pytest.raises(ValueError):
        segment_file_name(-1)


def test_partition_dir_names():
    assert partition_dir_name(7) == "__consumer_offsets-7"
    assert parse_partition_dir_name("__consumer_offsets-12") == ("__consumer_offsets", 12)
    assert parse_partition_dir_name("/data/kafka-logs/__consumer_offsets-0") == ("__consumer_offsets", 0)
    assert parse_partition_dir_name("my-topic-3") == ("my-topic", 3)
    assert parse_partition_dir_name("__share_group_state-49") == ("__share_group_state", 49)
    for other in ("__consumer_offsets", "__consumer_offsets-1.0f1e2d3c4b5a69788796a5b4c3d2e1f0-delete",
                  "__consumer_offsets-1.0f1e2d3c4b5a69788796a5b4c3d2e1f0-future", "cleaner-offset-checkpoint"):
        assert parse_partition_dir_name(other) is None


def test_write_and_read_back_byte_identical(tmp_path):
    batches = [sized_batch(i, 1000 + i) for i in range(10)]
    path = write_segment(tmp_path / "__consumer_offsets-3", 0, batches)
    assert path == tmp_path / "__consumer_offsets-3" / "00000000000000000000.log"
    assert path.read_bytes() == b"".join(batches)
    got = list(read_segment(path))
    assert all(isinstance(b, RecordBatch) for b in got)
    assert [path.read_bytes()[b.position:b.position + b.size] for b in got] == batches
    assert [b.source for b in got] == [str(path)] * 10


def test_sparse_index_entries(tmp_path):
    # 10 batches of 1500 bytes at positions 0, 1500, 3000, ...: an entry is added before the
    # batch that starts when more than 4096 bytes were written since the last entry.
    path = write_segment(tmp_path, 0, [sized_batch(i, 1000 + i) for i in range(10)])
    index = (tmp_path / "00000000000000000000.index").read_bytes()
    assert index == struct.pack(">iiiiii", 3, 4500, 6, 9000, 9, 13500)
    timeindex = (tmp_path / "00000000000000000000.timeindex").read_bytes()
    assert timeindex == struct.pack(">qiqiqi", 1003, 3, 1006, 6, 1009, 9)
    assert read_offset_index(path.with_suffix(".index")) == [(3, 4500), (6, 9000), (9, 13500)]
    assert read_time_index(path.with_suffix(".timeindex")) == [(1003, 3), (1006, 6), (1009, 9)]


def test_index_offsets_are_relative_and_final_time_entry(tmp_path):
    # Timestamps that stop growing: no time entry unless the max grew; a final entry for the max.
    batches = [sized_batch(100 + i, 5000 if i < 8 else 7000 + i) for i in range(10)]
    write_segment(tmp_path, 100, batches)
    index = (tmp_path / "00000000000000000100.index").read_bytes()
    assert list(struct.iter_unpack(">ii", index)) == [(3, 4500), (6, 9000), (9, 13500)]
    timeindex = (tmp_path / "00000000000000000100.timeindex").read_bytes()
    assert list(struct.iter_unpack(">qi", timeindex)) == [(5000, 0), (7009, 9)]
    assert read_offset_index(tmp_path / "00000000000000000100.index") == [(103, 4500), (106, 9000), (109, 13500)]


def test_small_segment_has_empty_offset_index(tmp_path):
    path = write_segment(tmp_path, 0, [sized_batch(0, 10), sized_batch(1, 20)])
    assert path.with_suffix(".index").read_bytes() == b""
    assert path.with_suffix(".timeindex").read_bytes() == struct.pack(">qi", 20, 1)


def test_preallocated_index_files_are_trimmed_on_read(tmp_path):
    (tmp_path / "00000000000000000000.index").write_bytes(struct.pack(">ii", 3, 4500) + bytes(800))
    (tmp_path / "00000000000000000000.timeindex").write_bytes(struct.pack(">qi", 1003, 3) + bytes(1200))
    assert read_offset_index(tmp_path / "00000000000000000000.index") == [(3, 4500)]
    assert read_time_index(tmp_path / "00000000000000000000.timeindex") == [(1003, 3)]


def test_write_refuses_bad_batches(tmp_path):
    good = sized_batch(0, 1)
    with pytest.raises(ValueError, match="bad batch"):
        write_segment(tmp_path, 0, [good, good[:-1]])


def test_read_partition_dir_in_base_offset_order(tmp_path):
    d = tmp_path / "__consumer_offsets-0"
    write_segment(d, 10, [sized_batch(10 + i, 10 + i) for i in range(3)])
    write_segment(d, 0, [sized_batch(i, i) for i in range(10)])
    (d / "leader-epoch-checkpoint").write_text("0\n1\n0 0\n")
    (d / "00000000000000000005.log.deleted").write_bytes(b"junk")
    assert [p.name for p in segment_files(d)] == ["00000000000000000000.log", "00000000000000000010.log"]
    got = list(read_partition_dir(d))
    assert [b.base_offset for b in got] == list(range(13))
    assert {b.source for b in got} == {str(d / "00000000000000000000.log"), str(d / "00000000000000000010.log")}


def test_corrupt_segment_reports_path_and_position(tmp_path):
    path = write_segment(tmp_path, 0, [sized_batch(i, i) for i in range(3)])
    raw = bytearray(path.read_bytes())
    raw[1500 + 40] ^= 1
    path.write_bytes(bytes(raw))
    items = list(read_segment(path))
    assert [type(i) for i in items] == [RecordBatch, CorruptBatch, RecordBatch]
    assert items[1].source == str(path) and items[1].position == 1500
    assert f"{path} at byte 1500" in str(items[1])


def test_legacy_batches_in_segments(tmp_path):
    from kgroup.log import encode_message_set

    data = encode_message_set([(b"k", b"v", 5)] * 3, magic=1, base_offset=0, compression="gzip")
    path = write_segment(tmp_path, 0, data)
    (b,) = list(read_batches(path.read_bytes()))
    assert b.magic == 1 and b.last_offset == 2
