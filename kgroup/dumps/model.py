"""The value types of the dump readers (entries, problems, batch headers and the running report),
and what every reader does alike: open a file (`reading`), count text lines (`text_lines`)."""
from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

__all__ = ["DumpError", "DumpProblem", "DumpEntry", "DumpReport", "BatchInfo", "TXN_STATES", "KINDS"]

#: What `DumpEntry.txn` can say about a record's transaction.
TXN_STATES = ("none", "committed", "aborted", "open")
#: The dump kinds `open_dump` tells apart.
KINDS = ("segment", "dump-log", "console")


class DumpError(Exception):
    """A dump path that cannot be read at all (unreadable, undetectable kind, bad argument).

    Bad *content* never raises: it is counted in the `DumpReport` and listed as a `DumpProblem`.
    """


@contextmanager
def reading(path: Any) -> Iterator[None]:
    """Around opening or reading `path`: a missing file stays FileNotFoundError (the caller names
    it), any other OSError becomes a DumpError that says which path could not be read."""
    try:
        yield
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise DumpError(f"cannot read {path}: {exc}") from exc


@dataclass(frozen=True)
class DumpProblem:
    """Something in a dump that could not be read: where it is and why.

    `position` is a byte position in `file` (segments), `line` a 1-based line number (text dumps).
    """

    file: str
    position: int | None
    line: int | None
    reason: str

    def __str__(self) -> str:
        where = self.file
        if self.line is not None:
            where += f":{self.line}"
        if self.position is not None:
            where += f" @ byte {self.position}"
        return f"{where}: {self.reason}"


@dataclass(frozen=True)
class BatchInfo:
    """The header of the batch a record came in, as `kafka-dump-log.sh` prints it.

    For magic 0/1 entries (one top-level message = one "batch") only `last_offset`, `position`,
    `timestamp_type`, `max_timestamp`, `size`, `magic`, `compression`, `crc` and `is_valid` mean
    anything. Values a text dump did not show are None.
    """

    base_offset: int | None = None
    last_offset: int | None = None
    count: int | None = None
    base_sequence: int = -1
    last_sequence: int = -1
    producer_id: int = -1
    producer_epoch: int = -1
    partition_leader_epoch: int = -1
    is_transactional: bool = False
    is_control: bool = False
    delete_horizon_ms: int | None = None
    position: int | None = None
    timestamp_type: str = "CreateTime"      # CreateTime | LogAppendTime | NoTimestampType
    max_timestamp: int | None = None
    size: int | None = None
    magic: int = 2
    compression: str = "none"
    crc: int | None = None
    is_valid: bool = True

    @classmethod
    def from_batch(cls, batch: Any) -> BatchInfo:
        """From a `kgroup.log.RecordBatch`."""
        return cls(
            base_offset=batch.base_offset, last_offset=batch.last_offset,
            count=batch.record_count if batch.record_count >= 0 else len(batch.records),
            base_sequence=batch.base_sequence, last_sequence=batch.last_sequence,
            producer_id=batch.producer_id, producer_epoch=batch.producer_epoch,
            partition_leader_epoch=batch.partition_leader_epoch,
            is_transactional=batch.is_transactional, is_control=batch.is_control,
            delete_horizon_ms=batch.delete_horizon_ms, position=batch.position,
            timestamp_type=batch.timestamp_type.label, max_timestamp=batch.max_timestamp,
            size=batch.size, magic=batch.magic, compression=batch.compression.label, crc=batch.crc,
            is_valid=True)


@dataclass
class DumpEntry:
    """One record of a dump (a data record or a control record), wherever it was read from.

    - `record`: the typed `kgroup.records` record, or None for control records, partial records
      (older text forms, see `fields`) and records that could not be decoded (see `error`).
    - `key`/`value`: the raw bytes when known (segments); None for text dumps.
    - `txn`: "none" (not transactional), "committed"/"aborted" (a marker for its producer id
      followed in the same partition), "open" (no marker before the end of the partition); a
      COMMIT/ABORT marker entry itself says "committed"/"aborted".
    - `control`: "COMMIT"/"ABORT" (or another control type name) for control records.
    - `fields`: what an older text form carries (snake_case names of the record's fields, plus
      `record_type` and `tombstone`), when `record` could not be rebuilt.
    - `error`: why the record could not be decoded (unknown type, bad bytes, bad JSON), else None;
      for an unknown record type `fields["unknown_type"]` holds the type number.
    """

    source: str
    kind: str
    topic: str
    partition: int | None
    offset: int | None
    timestamp: int | None
    position: int | None
    line: int | None
    record: Any | None
    key: bytes | None
    value: bytes | None
    producer_id: int = -1
    producer_epoch: int = -1
    txn: str = "none"
    control: str | None = None
    fields: dict | None = None
    error: str | None = None
    # Rendering details (batch header, record metadata, original text); not part of equality.
    batch: BatchInfo | None = field(default=None, repr=False, compare=False)
    meta: dict | None = field(default=None, repr=False, compare=False)

    @property
    def is_control(self) -> bool:
        return self.control is not None

    @property
    def is_tombstone(self) -> bool:
        """A data record with a null value (None when that is unknown)."""
        if self.control is not None:
            return False
        if self.record is not None:
            return self.record.value is None
        if self.fields is not None and "tombstone" in self.fields:
            return bool(self.fields["tombstone"])
        if self.key is not None:
            return self.value is None
        return False

    @property
    def record_type_name(self) -> str | None:
        """'OffsetCommit', ...; for partial records the type they stand for; None if unknown."""
        if self.record is not None:
            return self.record.NAME
        if self.fields is not None:
            return self.fields.get("record_type")
        return None


class DumpReport:
    """Running counts of a read, and the problems found (with file and byte position / line).

    Every entry yielded is counted in exactly one of `records` (typed record), `partial`
    (older text forms), `control`, `unknown` (unknown record type) and `decode_errors`, so
    ``entries == records + partial + control + unknown + decode_errors``. Problems are decode
    errors, corrupt byte spans (`corrupt_spans`, `corrupt_bytes`) and text lines that are not
    part of any dump form (`garbage_lines`). Records of a type kgroup does not know are not
    problems but `warnings` (same form, counted by type in `unknown_types`): Kafka's coordinator
    loader skips them with a warning too (a newer broker's type, or one left over from an aborted
    upgrade). At most `max_problems` problems (and as many warnings) are kept in `problems` and
    `warnings` (the counts stay exact; `problems_dropped`/`warnings_dropped` say how many were
    left out).
    """

    def __init__(self, max_problems: int = 100_000):
        self.max_problems = max_problems
        self.files = 0
        self.entries = 0
        self.records = 0
        self.partial = 0
        self.control = 0
        self.tombstones = 0
        self.decode_errors = 0
        self.corrupt_spans = 0
        self.corrupt_bytes = 0
        self.garbage_lines = 0
        self.bytes_read = 0
        self.lines_read = 0
        self.by_type: Counter[str] = Counter()
        self.unknown_types: Counter[int] = Counter()
        self.txn: Counter[str] = Counter()
        self.kinds: Counter[str] = Counter()
        self.problems: list[DumpProblem] = []
        self.problems_dropped = 0
        self.warnings: list[DumpProblem] = []
        self.warnings_dropped = 0

    # ---- counting (used by the readers) --------------------------------------------------
    def problem(self, file: str, reason: str, *, position: int | None = None, line: int | None = None) -> None:
        if not self._keep(self.problems, DumpProblem(file, position, line, reason)):
            self.problems_dropped += 1

    def warning(self, file: str, reason: str, *, position: int | None = None, line: int | None = None) -> None:
        """Something skipped on purpose, as Kafka skips it (a record of an unknown type)."""
        if not self._keep(self.warnings, DumpProblem(file, position, line, reason)):
            self.warnings_dropped += 1

    def _keep(self, kept: list[DumpProblem], item: DumpProblem) -> bool:
        """Add `item` to `kept` unless that holds `max_problems` already; False: left out."""
        if len(kept) < self.max_problems:
            kept.append(item)
            return True
        return False

    def unreadable(self, entry: DumpEntry, file: str, *, position: int | None = None,
                   line: int | None = None) -> None:
        """Report why `entry` has no record: a warning for an unknown record type, else a problem."""
        if entry.fields is not None and entry.fields.get("unknown_type") is not None:
            self.warning(file, f"{entry.error}; skipped, as Kafka's coordinator loader skips a record type it "
                               f"does not know", position=position, line=line)
        else:
            self.problem(file, entry.error or "unreadable entry", position=position, line=line)

    def count_entry(self, entry: DumpEntry) -> None:
        self.entries += 1
        self.kinds[entry.kind] += 1
        if entry.control is not None:
            self.control += 1
        elif entry.record is not None:
            self.records += 1
            self.by_type[entry.record.NAME] += 1
            if entry.record.value is None:
                self.tombstones += 1
        elif entry.error is not None:
            if entry.fields is not None and entry.fields.get("unknown_type") is not None:
                self.unknown_types[entry.fields["unknown_type"]] += 1
            else:
                self.decode_errors += 1
        else:
            self.partial += 1
            name = (entry.fields or {}).get("record_type")
            self.by_type[name or "unknown"] += 1
            if (entry.fields or {}).get("tombstone"):
                self.tombstones += 1

    def count_txn(self, entry: DumpEntry) -> None:
        if entry.control is None:
            self.txn[entry.txn] += 1

    # ---- reading the report --------------------------------------------------------------
    @property
    def unknown(self) -> int:
        """Records of a record type the topic does not define."""
        return sum(self.unknown_types.values())

    @property
    def problem_count(self) -> int:
        """Unreadable parts (records of unknown types are not: see `warnings`)."""
        return self.decode_errors + self.corrupt_spans + self.garbage_lines

    @property
    def ok(self) -> bool:
        """True when nothing was unreadable."""
        return self.problem_count == 0 and not self.problems

    def as_dict(self) -> dict[str, Any]:
        """The counts as plain data (for JSON, DataFrames, Spark accumulators)."""
        return {
            "files": self.files, "entries": self.entries, "records": self.records, "partial": self.partial,
            "control": self.control, "tombstones": self.tombstones, "unknown": self.unknown,
            "decode_errors": self.decode_errors, "corrupt_spans": self.corrupt_spans,
            "corrupt_bytes": self.corrupt_bytes, "garbage_lines": self.garbage_lines,
            "bytes_read": self.bytes_read, "lines_read": self.lines_read,
            "by_type": dict(self.by_type), "unknown_types": dict(self.unknown_types), "txn": dict(self.txn),
            "kinds": dict(self.kinds), "problems": len(self.problems) + self.problems_dropped,
            "warnings": len(self.warnings) + self.warnings_dropped,
        }

    def summary(self) -> str:
        """A few human-readable lines: what was read, what could not be, and where."""
        lines = [f"{self.entries} entries from {self.files} file(s) "
                 f"({self.bytes_read} bytes, {self.lines_read} text lines): "
                 f"{self.records} records, {self.partial} partial, {self.control} control, "
                 f"{self.unknown} of unknown type, {self.decode_errors} undecodable"]
        if self.by_type:
            lines.append("by type: " + ", ".join(f"{n} {c}" for n, c in sorted(self.by_type.items(),
                                                                               key=lambda kv: (-kv[1], kv[0]))))
        if self.tombstones:
            lines.append(f"tombstones: {self.tombstones}")
        txn = {k: v for k, v in self.txn.items() if k != "none"}
        if txn:
            lines.append("transactional: " + ", ".join(f"{c} {k}" for k, c in sorted(txn.items())))
        if self.unknown_types:
            lines.append("unknown record types (skipped, as Kafka's coordinator loader skips them): "
                         + ", ".join(f"{t} (x{c})" for t, c in sorted(self.unknown_types.items())))
        if self.corrupt_spans:
            lines.append(f"corrupt: {self.corrupt_spans} span(s), {self.corrupt_bytes} bytes")
        if self.garbage_lines:
            lines.append(f"unreadable text lines: {self.garbage_lines}")
        shown = self.problems[:10]
        if shown:
            total = len(self.problems) + self.problems_dropped
            lines.append(f"problems ({total}):")
            lines.extend(f"  {p}" for p in shown)
            if total > len(shown):
                lines.append(f"  ... and {total - len(shown)} more")
        else:
            lines.append("no problems")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (f"DumpReport(entries={self.entries}, records={self.records}, partial={self.partial}, "
                f"control={self.control}, unknown={self.unknown}, decode_errors={self.decode_errors}, "
                f"corrupt_spans={self.corrupt_spans}, garbage_lines={self.garbage_lines})")


def text_lines(lines: Iterable[str], report: DumpReport, tick: Callable[[int], None]) -> Iterator[tuple[int, str]]:
    """(1-based number, text without its line end) of each non-blank line of a text dump; every
    line read, blank or not, is counted in `report.lines_read` and its length told to `tick`."""
    for lineno, raw in enumerate(lines, 1):
        tick(len(raw))
        report.lines_read += 1
        line = raw.rstrip("\r\n")
        if line.strip():
            yield lineno, line
