"""Reading `.log` segment files (magic 0, 1 and 2, every codec) into `DumpEntry`s.

Inputs are grouped into *units*, one per partition: a partition directory (its segments in
base-offset order), or `.log` files given one by one (consecutive files of the same partition
directory form one unit). Units are read one after another; entries of a unit come in log order
with their transaction status (see `txn`). Memory: one segment file's bytes at a time (Kafka's
default segment size is 100 MiB) plus what `TxnOrder` holds back.

Corrupt byte ranges come from kgroup.log's resynchronising reader: each is reported with its
file and byte position, and every intact batch before and after it is still decoded.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from kgroup.log import ControlMarker, ControlType, CorruptBatch, RecordBatch, read_batches
from kgroup.log.legacy import encode_message
from kgroup.log.segment import parse_partition_dir_name, parse_segment_file_name
from kgroup.records import RecordError, UnknownRecordTypeError, decode_record
from kgroup.records.records import CONSUMER_OFFSETS, SHARE_GROUP_STATE

from .model import BatchInfo, DumpEntry, DumpReport, reading
from .txn import TxnOrder

__all__ = ["SegmentUnit", "segment_units", "read_units", "COORDINATOR_TOPICS", "looks_like_segment"]

COORDINATOR_TOPICS = (CONSUMER_OFFSETS, SHARE_GROUP_STATE)


@dataclass
class SegmentUnit:
    """The segment files of one partition, in the order to read them."""

    topic: str
    partition: int | None
    files: list[Path] = field(default_factory=list)


def looks_like_segment(head: bytes) -> bool:
    """Whether the first bytes of a file look like a batch / message set (magic 0-2 at byte 16)."""
    if not head:
        return True  # an empty segment (a freshly rolled one) is still a segment
    if len(head) < 17:
        return False
    if head[16] > 2:
        return False
    length = int.from_bytes(head[8:12], "big", signed=True)
    return length >= 14  # the smallest magic-0 message


def _sorted_segments(directory: Path) -> list[Path]:
    found = [(parse_segment_file_name(p.name), p) for p in directory.iterdir() if p.is_file()]
    return [p for base, p in sorted((b, p) for b, p in found if b is not None)]


def _topic_ok(name: str, topic: str | None) -> bool:
    return name == topic if topic is not None else name in COORDINATOR_TOPICS


def segment_units(path: Path, topic: str | None) -> list[SegmentUnit]:
    """The units under a directory (a log dir, a partition dir) or for one `.log` file."""
    if path.is_file():
        parsed = parse_partition_dir_name(path.parent.name)
        if parsed is not None and parsed[0] in COORDINATOR_TOPICS and topic in (None, parsed[0]):
            return [SegmentUnit(parsed[0], parsed[1], [path])]
        return [SegmentUnit(topic or CONSUMER_OFFSETS, parsed[1] if parsed else None, [path])]
    parsed = parse_partition_dir_name(path.name)
    segs = _sorted_segments(path)
    if parsed is not None and segs:
        if not _topic_ok(parsed[0], topic) and parsed[0] in COORDINATOR_TOPICS:
            return []
        t = parsed[0] if parsed[0] in COORDINATOR_TOPICS else (topic or CONSUMER_OFFSETS)
        return [SegmentUnit(t, parsed[1], segs)]
    units = []
    children = []
    for child in path.iterdir():
        if child.is_dir():
            p = parse_partition_dir_name(child.name)
            if p is not None and _topic_ok(p[0], topic):
                children.append((p[0] != CONSUMER_OFFSETS, p[0], p[1], child))
    for _order, t, partition, child in sorted(children):
        files = _sorted_segments(child)
        if files:
            units.append(SegmentUnit(t, partition, files))
    if not units and segs:  # a plain directory of copied segment files
        units.append(SegmentUnit(topic or CONSUMER_OFFSETS, parsed[1] if parsed else None, segs))
    return units


def _control_name(marker: ControlMarker) -> str:
    t = marker.type
    return t.name if isinstance(t, ControlType) else f"UNKNOWN({t})"


def _legacy_crc(batch: RecordBatch, rec) -> int:
    """CRC-32 of one magic 0/1 message (for a compressed wrapper: of the inner message)."""
    if batch.compression == 0:
        return batch.crc
    raw = encode_message(0, magic=batch.magic, key=rec[2], value=rec[3], timestamp=rec[1])
    return int.from_bytes(raw[12:16], "big")


def _decode(entry: DumpEntry, path: str, position: int, report: DumpReport) -> None:
    try:
        entry.record = decode_record(entry.key, entry.value, topic=entry.topic)
    except UnknownRecordTypeError as exc:
        entry.error = f"unknown record type {exc.record_type} at offset {entry.offset}"
        entry.fields = {"unknown_type": exc.record_type}
        report.unreadable(entry, path, position=position)
    except RecordError as exc:
        entry.error = f"cannot decode record at offset {entry.offset}: {exc}"
        report.problem(path, entry.error, position=position)


def _entries_of_batch(path: str, unit: SegmentUnit, batch: RecordBatch, report: DumpReport,
                      order: TxnOrder) -> Iterator[DumpEntry]:
    info = BatchInfo.from_batch(batch)
    topic, partition = unit.topic, unit.partition
    pid, pepoch = batch.producer_id, batch.producer_epoch
    legacy = batch.magic < 2
    for rec in batch.records:
        offset, ts, key, value = rec[0], rec[1], rec[2], rec[3]
        meta = {"crc": _legacy_crc(batch, rec)} if legacy else None
        if not legacy and len(rec) > 4 and rec[4]:
            meta = {"header_keys": "[" + ",".join(h[0] for h in rec[4]) + "]"}
        entry = DumpEntry(path, "segment", topic, partition, offset, ts, batch.position, None, None, key, value,
                          pid, pepoch, batch=info, meta=meta)
        if batch.is_control:
            try:
                marker = ControlMarker.from_record(key, value)
            except ValueError as exc:
                entry.error = f"invalid control record at offset {offset}: {exc}"
                report.problem(path, entry.error, position=batch.position)
                report.count_entry(entry)
                yield from order.data(entry, False)
                continue
            entry.control = _control_name(marker)
            commit = True if marker.is_commit else False if marker.is_abort else None
            report.count_entry(entry)
            yield from order.marker(entry, commit)
            continue
        _decode(entry, path, batch.position, report)
        report.count_entry(entry)
        yield from order.data(entry, batch.is_transactional)


def read_units(units: list[SegmentUnit], report: DumpReport, tick: Callable[[int], None]) -> Iterator[DumpEntry]:
    """Entries of every unit, in order; `tick(n)` is told about every n bytes consumed."""
    for unit in units:
        order = TxnOrder()
        for seg in unit.files:
            path = str(seg)
            with reading(path):
                data = seg.read_bytes()
            report.files += 1
            report.bytes_read += len(data)
            for item in read_batches(data, source=path):
                if type(item) is CorruptBatch:
                    report.corrupt_spans += 1
                    report.corrupt_bytes += item.length
                    report.problem(path, f"corrupt span of {item.length} bytes: {item.reason}", position=item.position)
                    tick(item.length)
                    continue
                yield from _entries_of_batch(path, unit, item, report, order)
                tick(item.size)
            del data
        yield from order.finish()

