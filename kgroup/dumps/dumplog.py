"""Reading saved `kafka-dump-log.sh --offsets-decoder` (or `--print-data-log`) output.

Lines understood (everything else is reported as an unreadable line, and reading goes on):

- `Dumping <file>`: a new segment; its `<topic>-<partition>` parent directory names the
  partition of the records that follow.
- `Log starting offset: <n>` (3.x+) / `Starting offset: <n>` (older).
- batch headers: `baseOffset: .. lastOffset: .. count: .. ... isvalid: ..` (magic 2) and
  `offset: .. position: .. <tsType>: .. size: .. magic: .. compresscodec: .. crc: .. isvalid: ..`
  (magic 0/1).
- record lines: `| offset: .. <tsType>: .. keySize: .. valueSize: .. [sequence: .. headerKeys: [..]]
  [isValid: .. crc: ..] key: .. payload: ..` or `| key: .. payload: ..` (--skip-record-metadata),
  `... endTxnMarker: COMMIT|ABORT coordinatorEpoch: ..` for transaction markers; also the 0.11-2.0
  one-line form `offset: .. position: .. CreateTime: .. isvalid: .. keysize: .. ... key: .. payload: ..`.
- `Found <n> invalid bytes at the end of <file>` (reported as a corrupt span), and the stderr
  notes about non-consecutive offsets (ignored).

Transaction status comes from the batch headers (producerId, isTransactional) and the
endTxnMarker lines, decided per partition exactly as for segments (see `txn`).
"""
from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import PurePath, PurePosixPath, PureWindowsPath
from typing import Any

from kgroup.log.segment import parse_partition_dir_name
from kgroup.records.records import CONSUMER_OFFSETS, SHARE_GROUP_STATE

from .model import BatchInfo, DumpEntry, DumpReport, text_lines
from .textforms import parse_dump_key_payload
from .txn import TxnOrder

__all__ = ["read_dump_log_lines", "looks_like_dump_log"]

_COORD_TOPICS = (CONSUMER_OFFSETS, SHARE_GROUP_STATE)
_TS_TYPES = ("CreateTime", "LogAppendTime", "NoTimestampType")
_NAME = re.compile(r"\s*([A-Za-z]+): ?")
_INT = re.compile(r"^-?\d+$")
_MARKER = re.compile(r"^(\w+) coordinatorEpoch: (-?\d+)")
_FOUND_INVALID = re.compile(r"^Found (\d+) invalid bytes at the end of (.*)$")
_IGNORED = (
    re.compile(r"^Non-consecutive offsets in "),
    re.compile(r"^\s+-?\d+ is followed by -?\d+$"),
    re.compile(r"^Ignoring unknown file "),
    re.compile(r"^kafka\.serializer\.\w+ is deprecated"),
    re.compile(r"^KRaft bootstrap snapshot$"),
    re.compile(r"^Snapshot end offset: "),
)
_STOP = ("key", "payload", "endTxnMarker", "controlType")
_DECODER = json.JSONDecoder()
# The usual magic-2 record line, read in one go (anything else goes through `_tokens`).
_FAST_V2 = re.compile(r"offset: (-?\d+) (CreateTime|LogAppendTime|NoTimestampType): (-?\d+) keySize: (-?\d+) "
                      r"valueSize: (-?\d+) sequence: (-?\d+) headerKeys: (\[[^\]]*\]) (key|endTxnMarker): ")


def looks_like_dump_log(line: str) -> bool:
    """Whether a (first non-empty) line is kafka-dump-log output."""
    return (line.startswith(("Dumping ", "Log starting offset: ", "Starting offset: ", "baseOffset: ", "| offset: ",
                             "| key: "))
            or (line.startswith("offset: ") and " position: " in line))


def _tokens(body: str) -> tuple[dict[str, str], int, str | None]:
    """`name: value` pairs up to a key/payload/marker part: (pairs, where it starts, its name)."""
    out: dict[str, str] = {}
    pos = 0
    n = len(body)
    while pos < n:
        m = _NAME.match(body, pos)
        if not m:
            return out, pos, "?"
        name = m.group(1)
        if name in _STOP:
            return out, m.end(), name
        pos = m.end()
        if name == "headerKeys" and body.startswith("[", pos):
            close = body.find("]", pos)
            close = n - 1 if close < 0 else close
            out[name] = body[pos:close + 1]
            pos = close + 1
            continue
        end = body.find(" ", pos)
        end = n if end < 0 else end
        out[name] = body[pos:end]
        pos = end
    return out, n, None


def _int(v: str | None) -> int | None:
    if v is None:
        return None
    v = v.rstrip("}")  # Kafka 3.8/3.9 print a stray "}" after a legacy record's crc
    return int(v) if _INT.match(v) else None


def _bool(v: str | None) -> bool | None:
    return None if v is None else v == "true"


def _ts(tokens: dict[str, str]) -> tuple[str | None, int | None]:
    for t in _TS_TYPES:
        if t in tokens:
            return t, _int(tokens[t])
    return None, None


def _horizon(v: str | None) -> int | None:
    if v is None or v == "OptionalLong.empty":
        return None
    m = re.fullmatch(r"OptionalLong\[(-?\d+)\]", v)
    return int(m.group(1)) if m else None


def _batch_info(tokens: dict[str, str], magic_default: int) -> BatchInfo:
    ts_type, max_ts = _ts(tokens)
    magic = _int(tokens.get("magic"))
    magic = magic_default if magic is None else magic
    last = _int(tokens.get("lastOffset"))
    if last is None:
        last = _int(tokens.get("offset"))
    return BatchInfo(
        base_offset=_int(tokens.get("baseOffset")), last_offset=last, count=_int(tokens.get("count")),
        base_sequence=_int(tokens.get("baseSequence")) if "baseSequence" in tokens else -1,
        last_sequence=_int(tokens.get("lastSequence")) if "lastSequence" in tokens else -1,
        producer_id=_int(tokens.get("producerId")) if "producerId" in tokens else -1,
        producer_epoch=_int(tokens.get("producerEpoch")) if "producerEpoch" in tokens else -1,
        partition_leader_epoch=(_int(tokens.get("partitionLeaderEpoch"))
                                if "partitionLeaderEpoch" in tokens else -1),
        is_transactional=bool(_bool(tokens.get("isTransactional"))),
        is_control=bool(_bool(tokens.get("isControl"))),
        delete_horizon_ms=_horizon(tokens.get("deleteHorizonMs")),
        position=_int(tokens.get("position")), timestamp_type=ts_type or "CreateTime", max_timestamp=max_ts,
        size=_int(tokens.get("size")), magic=magic, compression=(tokens.get("compresscodec") or "none").lower(),
        crc=_int(tokens.get("crc")), is_valid=_bool(tokens.get("isvalid")) is not False)


class _Section:
    """Where the records being read come from (set by `Dumping <file>`)."""

    def __init__(self, source: str, topic: str, partition: int | None, skip: bool = False):
        self.source = source
        self.topic = topic
        self.partition = partition
        self.skip = skip  # an index / snapshot dump: no records in it
        self.starting_offset: int | None = None


def _dumped_path(dumped: str) -> PurePath:
    return PureWindowsPath(dumped) if "\\" in dumped and "/" not in dumped else PurePosixPath(dumped)


def _section_for(dumped: str, default_source: str, topic: str | None) -> _Section:
    p = _dumped_path(dumped)
    skip = p.suffix in (".index", ".timeindex", ".txnindex", ".snapshot", ".checkpoint")
    parsed = parse_partition_dir_name(p.parent.name) if dumped else None
    if parsed is not None and parsed[0] in _COORD_TOPICS:
        return _Section(dumped, topic or parsed[0], parsed[1], skip)
    return _Section(dumped or default_source, topic or CONSUMER_OFFSETS, parsed[1] if parsed else None, skip)


def _split_key_payload(rest: str) -> tuple[str, str | None, Any]:
    """Key text, payload text (None if absent) and the key's JSON if it is JSON."""
    if rest.startswith("{"):
        try:
            obj, end = _DECODER.raw_decode(rest)
        except ValueError:
            end = -1
        if end > 0:
            tail = rest[end:]
            if tail.startswith(" payload: "):
                return rest[:end], tail[len(" payload: "):], obj
            if not tail.strip():
                return rest[:end], None, obj
    at = rest.find(" payload: ")
    if at < 0:
        return rest, None, None
    return rest[:at], rest[at + len(" payload: "):], None


def read_dump_log_lines(lines: Iterable[str], source: str, report: DumpReport, *, topic: str | None = None,
                        tick: Callable[[int], None] = lambda n: None) -> Iterator[DumpEntry]:
    """Entries of one saved kafka-dump-log output (an iterable of its lines)."""
    section = _Section(source, topic or CONSUMER_OFFSETS, None)
    explicit_topic = topic
    order = TxnOrder()
    batch: BatchInfo | None = None
    text_topic_known = topic is not None

    for lineno, line in text_lines(lines, report, tick):
        if line.startswith("Dumping "):
            new = _section_for(line[len("Dumping "):].strip(), source, explicit_topic)
            if (new.topic, new.partition) != (section.topic, section.partition):
                yield from order.finish()
                order = TxnOrder()
            section = new
            parsed_dir = parse_partition_dir_name(_dumped_path(new.source).parent.name)
            text_topic_known = explicit_topic is not None or (parsed_dir is not None and parsed_dir[0] in _COORD_TOPICS)
            batch = None
            continue
        if section.skip:
            continue
        if line.startswith(("Log starting offset: ", "Starting offset: ")):
            section.starting_offset = _int(line.rsplit(" ", 1)[-1])
            continue
        if line.startswith("baseOffset: "):
            tokens, _pos, _stop = _tokens(line)
            batch = _batch_info(tokens, 2)
            _check_batch(batch, source, lineno, report)
            continue
        m = _FOUND_INVALID.match(line) if line.startswith("Found ") else None
        if m:
            report.corrupt_spans += 1
            report.corrupt_bytes += int(m.group(1))
            report.problem(source, f"kafka-dump-log found {m.group(1)} invalid bytes at the end of {m.group(2)}",
                           line=lineno)
            continue
        if line.startswith("| "):
            body, one_line = line[2:], False
        elif line.startswith("offset: ") and " position: " in line:
            tokens, pos, stop = _tokens(line)
            if stop is None and "keysize" not in tokens and "keySize" not in tokens:
                batch = _batch_info(tokens, 1)  # a magic 0/1 "batch" header
                _check_batch(batch, source, lineno, report)
                continue
            body, one_line = line, True
        elif any(p.match(line) for p in _IGNORED):
            continue
        else:
            report.garbage_lines += 1
            report.problem(source, f"unreadable line: {line[:120]!r}", line=lineno)
            continue
        yield from _record_line(body, one_line, lineno, source, section, batch, report, order,
                                None if not text_topic_known else section.topic)
    yield from order.finish()


def _check_batch(batch: BatchInfo, source: str, lineno: int, report: DumpReport) -> None:
    if not batch.is_valid:
        report.corrupt_spans += 1
        report.corrupt_bytes += batch.size or 0
        report.problem(source, f"the batch at byte {batch.position} of the dumped segment is marked invalid "
                               f"(isvalid: false)", line=lineno)


def _record_line(body: str, one_line: bool, lineno: int, source: str, section: _Section, batch: BatchInfo | None,
                 report: DumpReport, order: TxnOrder, topic: str | None) -> Iterator[DumpEntry]:
    fast = None if one_line else _FAST_V2.match(body)
    if fast is not None:
        tokens = {"offset": fast[1], fast[2]: fast[3], "keySize": fast[4], "valueSize": fast[5],
                  "sequence": fast[6], "headerKeys": fast[7]}
        pos, stop = fast.end(), fast[8]
    else:
        tokens, pos, stop = _tokens(body)
    if one_line:  # 0.11-2.0: the batch fields are on the record line itself
        batch = _batch_info(tokens, _int(tokens.get("magic")) or 2)
    ts_type, ts = _ts(tokens)
    offset = _int(tokens.get("offset"))
    meta: dict[str, Any] = {"line": body, "timestamp_type": ts_type,
                            "key_size": _int(tokens.get("keySize", tokens.get("keysize"))),
                            "value_size": _int(tokens.get("valueSize", tokens.get("valuesize"))),
                            "sequence": _int(tokens.get("sequence")), "header_keys": tokens.get("headerKeys"),
                            "crc": _int(tokens.get("crc")), "skip_metadata": not tokens,
                            "dumped": section.source, "starting_offset": section.starting_offset}
    pid = batch.producer_id if batch else -1
    pepoch = batch.producer_epoch if batch else -1
    transactional = bool(batch and batch.is_transactional)
    entry = DumpEntry(source, "dump-log", topic or section.topic, section.partition, offset, ts, None, lineno,
                      None, None, None, pid, pepoch, batch=batch, meta=meta)
    rest = body[pos:]
    if stop == "endTxnMarker":
        m = _MARKER.match(rest)
        if not m:
            entry.error = f"unreadable transaction marker {rest[:80]!r}"
            report.problem(source, entry.error, line=lineno)
            report.count_entry(entry)
            yield from order.data(entry, False)
            return
        entry.control = m.group(1)
        meta["coordinator_epoch"] = int(m.group(2))
        report.count_entry(entry)
        commit = True if entry.control == "COMMIT" else False if entry.control == "ABORT" else None
        yield from order.marker(entry, commit)
        return
    if stop == "controlType":
        entry.control = rest.split("(", 1)[0].strip() or "UNKNOWN"
        meta["control_text"] = rest
        report.count_entry(entry)
        yield from order.marker(entry, None)
        return
    if stop == "?":
        entry.error = f"unreadable record line: {body[:120]!r}"
        report.problem(source, entry.error, line=lineno)
        report.count_entry(entry)
        yield from order.data(entry, False)
        return
    if stop is None:
        # No key and no payload: a pre-1.0 dump of a tombstone, or a record without a key.
        entry.fields = {"record_type": None, "tombstone": True}
        report.count_entry(entry)
        yield from order.data(entry, transactional)
        return
    if stop == "payload":
        key_text, payload_text, key_obj = "", rest, None
    else:
        key_text, payload_text, key_obj = _split_key_payload(rest)
    meta["key_text"], meta["payload_text"] = key_text, payload_text
    parsed = parse_dump_key_payload(key_text, payload_text, topic, key_obj=key_obj)
    if parsed.topic is not None:
        entry.topic = parsed.topic
    entry.record, entry.fields, entry.error = parsed.record, parsed.fields, parsed.error
    if parsed.error is not None:
        report.unreadable(entry, source, line=lineno)
    report.count_entry(entry)
    yield from order.data(entry, transactional)
