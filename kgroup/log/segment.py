"""Segment files: `<20-digit base offset>.log` with its sparse `.index` and `.timeindex`.

The indexes are built the way a broker builds them when it appends one batch at a time (and
the way `LogSegment.recover` rebuilds them): an offset-index entry (relative last offset of the
batch, byte position of the batch) whenever more than `index_interval_bytes` (4096) have been
written since the previous entry, a time-index entry (max timestamp so far, relative offset
where it was seen) at the same moments when the max timestamp grew, plus the final time-index
entry a broker adds when the segment stops being the active one. Files are written trimmed
(a broker preallocates the active segment's indexes and trims them on roll).
"""
from __future__ import annotations

import os
import re
import struct
from collections.abc import Iterable, Iterator
from pathlib import Path

from .batch import read_batches
from .model import CorruptBatch, RecordBatch

__all__ = ["segment_file_name", "parse_segment_file_name", "write_segment", "read_segment", "read_partition_dir",
           "partition_dir_name", "parse_partition_dir_name", "build_indexes", "read_offset_index", "read_time_index",
           "INDEX_INTERVAL_BYTES"]

INDEX_INTERVAL_BYTES = 4096
_OFFSET_ENTRY = struct.Struct(">ii")
_TIME_ENTRY = struct.Struct(">qi")
_SEGMENT_RE = re.compile(r"^(\d{20})\.log$")
_PARTITION_DIR_RE = re.compile(r"^(?P<topic>.+)-(?P<partition>\d+)$")


def segment_file_name(base_offset: int, suffix: str = ".log") -> str:
    """`00000000000000000042.log` for base offset 42 (Kafka's 20-digit zero padding)."""
    if base_offset < 0:
        raise ValueError(f"negative base offset {base_offset}")
    return f"{base_offset:020d}{suffix}"


def parse_segment_file_name(name: str | os.PathLike[str]) -> int | None:
    """Base offset of a `.log` segment file name, or None if it is not one."""
    m = _SEGMENT_RE.match(Path(name).name)
    return int(m.group(1)) if m else None


def partition_dir_name(partition: int, topic: str = "__consumer_offsets") -> str:
    """`__consumer_offsets-7`: a partition's directory name in a broker's log dir."""
    return f"{topic}-{partition}"


def parse_partition_dir_name(name: str | os.PathLike[str]) -> tuple[str, int] | None:
    """(topic, partition) of a partition directory such as `__consumer_offsets-12`, else None.

    Directories being deleted or moved (`<topic>-<p>.<uuid>-delete`, `-future`, `-stray`) are
    not partition directories and give None.
    """
    m = _PARTITION_DIR_RE.match(Path(name).name)
    if not m:
        return None
    return m.group("topic"), int(m.group("partition"))


def build_indexes(batches: Iterable[RecordBatch], base_offset: int,
                  index_interval_bytes: int = INDEX_INTERVAL_BYTES) -> tuple[bytes, bytes]:
    """The `.index` and `.timeindex` contents for a segment holding `batches` in order."""
    offset_entries: list[bytes] = []
    time_entries: list[bytes] = []
    last_time_entry = (-1, base_offset)  # an empty time index "ends" at (NO_TIMESTAMP, baseOffset)
    max_ts, max_ts_offset = -1, base_offset
    valid_bytes = last_index_entry = 0

    def maybe_append_time(ts: int, offset: int) -> None:
        nonlocal last_time_entry
        if ts > last_time_entry[0]:
            time_entries.append(_TIME_ENTRY.pack(ts, offset - base_offset))
            last_time_entry = (ts, offset)

    for batch in batches:
        if batch.max_timestamp > max_ts:
            max_ts, max_ts_offset = batch.max_timestamp, batch.last_offset
        if valid_bytes - last_index_entry > index_interval_bytes:
            offset_entries.append(_OFFSET_ENTRY.pack(batch.last_offset - base_offset, valid_bytes))
            maybe_append_time(max_ts, max_ts_offset)
            last_index_entry = valid_bytes
        valid_bytes += batch.size
    maybe_append_time(max_ts, max_ts_offset)
    return b"".join(offset_entries), b"".join(time_entries)


def write_segment(directory: str | os.PathLike[str], base_offset: int, batches_bytes: bytes | Iterable[bytes], *,
                  index_interval_bytes: int = INDEX_INTERVAL_BYTES) -> Path:
    """Write `<base_offset>.log` (the batches, concatenated) plus `.index` and `.timeindex`.

    Returns the path of the `.log` file. The batches must be valid (they are read back to
    build the indexes); the directory is created if needed.
    """
    data = batches_bytes if isinstance(batches_bytes, (bytes, bytearray, memoryview)) else b"".join(batches_bytes)
    data = bytes(data)
    batches = []
    for item in read_batches(data):
        if isinstance(item, CorruptBatch):
            raise ValueError(f"refusing to write a segment with a bad batch: {item}")
        batches.append(item)
    if batches and batches[0].base_offset < base_offset:
        raise ValueError(f"first batch offset {batches[0].base_offset} is below the segment base offset {base_offset}")
    index, timeindex = build_indexes(batches, base_offset, index_interval_bytes)
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    log_path = directory / segment_file_name(base_offset)
    log_path.write_bytes(data)
    (directory / segment_file_name(base_offset, ".index")).write_bytes(index)
    (directory / segment_file_name(base_offset, ".timeindex")).write_bytes(timeindex)
    return log_path


def read_segment(path: str | os.PathLike[str], *, strict: bool = False) -> Iterator[RecordBatch | CorruptBatch]:
    """Batches of one `.log` file; reports carry the file path as their source."""
    path = Path(path)
    yield from read_batches(path.read_bytes(), source=str(path), strict=strict)


def segment_files(directory: str | os.PathLike[str]) -> list[Path]:
    """The `*.log` segment files of a partition directory, in base-offset order."""
    found = [(parse_segment_file_name(p.name), p) for p in Path(directory).iterdir() if p.is_file()]
    return [p for base, p in sorted((b, p) for b, p in found if b is not None)]


def read_partition_dir(path: str | os.PathLike[str], *, strict: bool = False) -> Iterator[RecordBatch | CorruptBatch]:
    """Batches of every segment of a partition directory, segments in base-offset order."""
    for seg in segment_files(path):
        yield from read_segment(seg, strict=strict)


def read_offset_index(path: str | os.PathLike[str], base_offset: int | None = None) -> list[tuple[int, int]]:
    """(absolute offset, position) entries of an `.index` file; trailing zero (preallocated) entries dropped."""
    base_offset, entries = _read_index(path, base_offset, _OFFSET_ENTRY)
    return [(base_offset + rel, pos) for rel, pos in entries]


def read_time_index(path: str | os.PathLike[str], base_offset: int | None = None) -> list[tuple[int, int]]:
    """(timestamp, absolute offset) entries of a `.timeindex` file; zero entries at the end dropped."""
    base_offset, entries = _read_index(path, base_offset, _TIME_ENTRY)
    return [(ts, base_offset + rel) for ts, rel in entries]


def _read_index(path: str | os.PathLike[str], base_offset: int | None,
                entry: struct.Struct) -> tuple[int, list[tuple[int, int]]]:
    """The base offset (given, else the segment's from the file name, else 0) and the index's
    entries without the zero (preallocated) ones at the end; a partial last entry is ignored."""
    data = Path(path).read_bytes()
    if base_offset is None:
        base_offset = parse_segment_file_name(Path(path).with_suffix(".log")) or 0
    entries = list(entry.iter_unpack(data[:len(data) // entry.size * entry.size]))
    # A real offset-index entry never has position 0 (the first one comes after index_interval_bytes).
    while entries and entries[-1] == (0, 0):
        entries.pop()
    return base_offset, entries
