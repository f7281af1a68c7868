"""`open_dump` (which kind of dump is this?) and `read_dump` (stream its entries)."""
from __future__ import annotations

import gzip
import io
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO

from kgroup.log.segment import parse_partition_dir_name, parse_segment_file_name
from kgroup.records.records import CONSUMER_OFFSETS, SHARE_GROUP_STATE

from .console import looks_like_console, read_console_lines
from .dumplog import looks_like_dump_log, read_dump_log_lines
from .model import DumpEntry, DumpError, DumpReport, reading
from .segments import SegmentUnit, looks_like_segment, read_units, segment_units

__all__ = ["open_dump", "read_dump"]

_HEAD = 64 * 1024
_SCAN_LINES = 50
_GZIP_MAGIC = b"\x1f\x8b"


def _head(path: Path) -> tuple[bytes, bool]:
    """The first bytes of a file (decompressed if gzip) and whether it was gzip."""
    with reading(path):
        with open(path, "rb") as f:
            raw = f.read(_HEAD)
        if raw.startswith(_GZIP_MAGIC):
            with gzip.open(path, "rb") as g:
                try:
                    return g.read(_HEAD), True
                except (OSError, EOFError):
                    return b"", True
        return raw, False


_CONTROL = bytes(range(0, 9)) + bytes(range(14, 32))


def _binary(head: bytes) -> bool:
    """Binary data (a segment starts with NUL-heavy offsets), not text with a stray control byte."""
    if b"\x00" in head[:64]:
        return True
    sample = head[:4096]
    return bool(sample) and sum(sample.count(c) for c in _CONTROL) > len(sample) // 10


def _text_kind(head: bytes) -> str | None:
    text = head.decode("utf-8", errors="replace")
    lines = text.splitlines()
    if len(head) == _HEAD and lines:
        lines = lines[:-1]  # the last one may be cut
    seen = 0
    for line in lines:
        if not line.strip():
            continue
        if looks_like_dump_log(line):
            return "dump-log"
        if looks_like_console(line):
            return "console"
        seen += 1
        if seen >= _SCAN_LINES:
            break
    return None


def open_dump(path: str | os.PathLike[str]) -> str:
    """The kind of dump at `path`: "segment", "dump-log" or "console".

    Directories (a broker log dir, a partition dir, a folder of `.log` files) and binary files
    whose first batch header looks right (magic 0-2 at byte 16) are segments. Text files (plain
    or gzip) are recognised by their first lines: kafka-dump-log output starts with `Dumping`,
    a batch header or a record line; console-consumer output with a formatter's JSON object or
    `[g,t,p]::` / `g::GroupMetadata(` / `::NULL`. Raises FileNotFoundError for a missing path
    and DumpError when the kind cannot be told.
    """
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"no such file or directory: {p}")
    if p.is_dir():
        return "segment"
    head, gz = _head(p)
    is_binary = _binary(head)
    named_segment = parse_segment_file_name(p.name) is not None
    if not gz and (is_binary or named_segment) and looks_like_segment(head):
        return "segment"
    if not gz and named_segment and (is_binary or not head or _text_kind(head) is None):
        # named like a segment but its first batch header is damaged (or it is an empty active
        # segment): read it as one, so the damage is reported with its position and every
        # intact batch after it is still decoded, as a directory of segments would be
        return "segment"
    if is_binary:
        raise DumpError(f"{p}: binary data that does not start with a record batch")
    kind = _text_kind(head)
    if kind is None:
        if not head.strip():
            raise DumpError(f"{p}: empty file, cannot tell what kind of dump it is")
        raise DumpError(f"{p}: neither a segment nor kafka-dump-log / console-consumer output")
    return kind


def _open_text(path: Path) -> IO[str]:
    with open(path, "rb") as f:
        gz = f.read(2) == _GZIP_MAGIC
    if gz:
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8", errors="replace", newline="")
    return open(path, encoding="utf-8", errors="replace", newline="")


def _plan(paths: Iterable[Path], topic: str | None) -> list[tuple[str, Path | SegmentUnit]]:
    plan: list[tuple[str, Path | SegmentUnit]] = []
    for p in paths:
        parsed = parse_partition_dir_name((p if p.is_dir() else p.parent).name)
        if parsed is not None and parsed[0] == "__cluster_metadata":
            raise DumpError(f"{p}: the KRaft metadata log, not a coordinator topic: replay (kgroup dump describe) "
                            f"reads it for topic names")
        kind = open_dump(p)
        if kind == "segment":
            units = segment_units(p, topic)
            if not units:
                if p.is_dir():
                    raise DumpError(f"{p}: no {topic or '__consumer_offsets / __share_group_state'} "
                                    f"segment files found")
                continue
            for u in units:
                last = plan[-1][1] if plan and plan[-1][0] == "segment" else None
                if (isinstance(last, SegmentUnit) and u.partition is not None
                        and (last.topic, last.partition) == (u.topic, u.partition)):
                    last.files.extend(u.files)  # consecutive files of one partition: one unit
                else:
                    plan.append(("segment", u))
        else:
            plan.append((kind, p))
    return plan


def _path_list(paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]], topic: str | None) -> list[Path]:
    """`paths` (one path or many) as a list, once it and `topic` pass the checks that `read_dump`
    (and `ranges.plan_scan`) make before reading anything."""
    if topic not in (None, CONSUMER_OFFSETS, SHARE_GROUP_STATE):
        raise DumpError(f"topic must be {CONSUMER_OFFSETS!r} or {SHARE_GROUP_STATE!r}, not {topic!r}")
    if isinstance(paths, (str, os.PathLike)):
        path_list = [Path(paths)]
    else:
        path_list = [Path(p) for p in paths]
    if not path_list:
        raise DumpError("no dump paths given")
    return path_list


def _size(p: Path) -> int:
    try:
        return p.stat().st_size
    except OSError:
        return 0


def read_dump(paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]], *, topic: str | None = None,
              report: DumpReport | None = None, progress: bool = False) -> Iterator[DumpEntry]:
    """Stream the entries of dumps of any kind, in order, never raising on bad content.

    `paths`: one path or a list; each is a segment directory / partition directory / `.log`
    file, or a saved kafka-dump-log or console-consumer output (see `open_dump`). `topic`
    (`"__consumer_offsets"` or `"__share_group_state"`) selects the topic's partition dirs and
    says how to decode text dumps that do not name it; by default both coordinator topics are
    read and text dumps are decoded as `__consumer_offsets` unless their `Dumping` paths (or the
    JSON keys) tell otherwise.

    Unreadable content is counted in `report` and listed as problems with file and byte
    position or line (pass a `DumpReport` to see them). Missing paths raise FileNotFoundError
    and unreadable or unrecognisable ones DumpError, right away (before the first entry).
    `progress=True` shows a tqdm bar by bytes.

    Entries of a partition come in log order; transactional ones carry their outcome, which
    means holding back the entries that follow an undecided transaction until its marker (see
    `kgroup.dumps.txn` for the memory bound). Memory otherwise: one segment file at a time;
    text dumps are read line by line.
    """
    plan = _plan(_path_list(paths, topic), topic)
    rep = report if report is not None else DumpReport()
    total = 0
    for kind, item in plan:
        total += sum(_size(f) for f in item.files) if isinstance(item, SegmentUnit) else _size(item)
    return _stream(plan, topic, rep, progress, total)


def _stream(plan: list[tuple[str, Path | SegmentUnit]], topic: str | None, report: DumpReport, progress: bool,
            total: int) -> Iterator[DumpEntry]:
    bar = None
    if progress:
        from tqdm.auto import tqdm  # lazy: only when asked for

        bar = tqdm(total=total, unit="B", unit_scale=True, desc="reading dump")
        tick = bar.update
    else:
        def tick(n: int) -> None:
            return None
    try:
        i = 0
        while i < len(plan):
            kind, item = plan[i]
            if kind == "segment":
                units = []
                while i < len(plan) and plan[i][0] == "segment":
                    units.append(plan[i][1])
                    i += 1
                entries: Iterator[DumpEntry] = read_units(units, report, tick)  # type: ignore[arg-type]
            else:
                i += 1
                entries = _read_text(kind, item, topic, report, tick)  # type: ignore[arg-type]
            for entry in entries:
                report.count_txn(entry)
                yield entry
    finally:
        if bar is not None:
            bar.close()


def _read_text(kind: str, path: Path, topic: str | None, report: DumpReport, tick) -> Iterator[DumpEntry]:
    with reading(path):
        f = _open_text(path)
    report.files += 1
    report.bytes_read += _size(path)
    with f:
        reader = read_dump_log_lines if kind == "dump-log" else read_console_lines
        try:
            yield from reader(f, str(path), report, topic=topic, tick=tick)
        except (OSError, EOFError) as exc:  # e.g. a truncated gzip file: keep what was read
            report.corrupt_spans += 1
            report.problem(str(path), f"text stopped being readable: {exc}", line=report.lines_read)
