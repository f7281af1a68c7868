"""Print entries the way Kafka's tools print them.

- `render_jsonl`: the newest console formatter (`CoordinatorRecordMessageFormatter`):
  `{"key":{"type":<n>,"data":{..}},"value":{"version":<v>,"data":{..}}}`, `"value":null` for a
  tombstone; "" where Kafka prints nothing (control records, unknown record types).
- `render_dump_log`: `kafka-dump-log.sh --offsets-decoder --print-data-log` as Kafka 3.8+ prints
  it (tools `DumpLogSegments.java`): `Dumping <file>`, `Log starting offset: <n>`, one header
  line per batch, one `| offset: ...` line per record with the JSON key (`"type"` as a string) and
  payload (`"version"` as a string, `<DELETE>` for tombstones), `endTxnMarker: ...` for
  transaction markers. GroupMetadata values of protocolType "consumer" get their members'
  subscription/assignment expanded (`kgroup.protocol.consumer_protocol.expand_group_metadata_json`).

Entries read from segments carry their batch header, so the output is what Kafka prints for the
same file. Entries without one (console dumps) are shown one record per batch, as if written
by a producer with no producer id; entries that only have partial fields (older text forms) keep
their original key/payload text, or are shown in the 3.7 form.
"""
from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from kgroup.log import ControlMarker, encode_batch, read_batches
from kgroup.log.segment import parse_segment_file_name
from kgroup.records import CoordinatorRecord, JsonDoc

from .model import BatchInfo, DumpEntry, DumpError

__all__ = ["render_jsonl", "render_dump_log", "dump_log_key_payload", "batch_header_line"]


def render_jsonl(entry_or_record: DumpEntry | CoordinatorRecord) -> str:
    """The console formatter's JSON for one record (one line, no line separator).

    Returns "" for what Kafka's formatter does not print (control records, records of an
    unknown type). Raises `DumpError` for entries that have no typed record to print
    (partial records from older text forms, undecodable records).
    """
    if isinstance(entry_or_record, CoordinatorRecord):
        return str(entry_or_record.to_json())
    entry = entry_or_record
    if entry.record is not None:
        return str(entry.record.to_json())
    if entry.control is not None:
        return ""
    if entry.fields is not None and entry.fields.get("unknown_type") is not None:
        return ""
    where = f"{entry.source}" + (f":{entry.line}" if entry.line is not None else "")
    if entry.error is not None:
        raise DumpError(f"{where}: cannot print an undecodable record: {entry.error}")
    raise DumpError(f"{where}: cannot print a partial {entry.fields and entry.fields.get('record_type')} record "
                    f"(an older text form only carries some of its fields)")


def _expand(value_data: dict) -> dict:
    if value_data.get("protocolType") != "consumer":
        return value_data
    try:
        from kgroup.protocol.consumer_protocol import expand_group_metadata_json  # lazy: sibling module
    except ImportError:  # pragma: no cover - only while that module is missing
        return value_data
    return expand_group_metadata_json(value_data, "consumer")


def dump_log_key_payload(record: CoordinatorRecord) -> tuple[str, str]:
    """The `key:` and `payload:` texts of kafka-dump-log 3.8+ for a typed record."""
    obj = record.json_obj()
    key = JsonDoc.dumps({"type": str(obj["key"]["type"]), "data": obj["key"]["data"]})
    value = obj["value"]
    if value is None:
        return str(key), "<DELETE>"
    data = value["data"]
    if record.NAME == "GroupMetadata":
        data = _expand(data)
    return str(key), str(JsonDoc.dumps({"version": str(value["version"]), "data": data}))


def _legacy_texts(fields: dict) -> tuple[str, str | None]:
    """Partial fields in the 3.7 dump-log form."""
    tomb = fields.get("tombstone")
    if fields.get("record_type") == "OffsetCommit":
        key = f"offset_commit::group={fields.get('group')},partition={fields.get('topic')}-{fields.get('partition')}"
        if tomb:
            return key, "<DELETE>"
        meta = fields.get("metadata") or ""
        return key, f"offset={fields.get('offset')}" + (f",metadata={meta}" if meta else "")
    if fields.get("record_type") == "GroupMetadata":
        key = f"group_metadata::group={fields.get('group')}"
        if tomb:
            return key, "<DELETE>"
        body = {"protocolType": fields.get("protocol_type") or "", "protocol": fields.get("protocol"),
                "generationId": fields.get("generation")}
        return key, json.dumps(body, separators=(",", ":"))
    if fields.get("unknown_type") is not None:
        return f"unknown::version={fields['unknown_type']}", None
    return "unknown::version=-1", None


def _s(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def batch_header_line(b: BatchInfo) -> str:
    """The batch line of kafka-dump-log (magic 2, or the `offset: ...` line of magic 0/1)."""
    if b.magic >= 2:
        horizon = "OptionalLong.empty" if b.delete_horizon_ms is None else f"OptionalLong[{b.delete_horizon_ms}]"
        head = (f"baseOffset: {_s(b.base_offset)} lastOffset: {_s(b.last_offset)} count: {_s(b.count)} "
                f"baseSequence: {b.base_sequence} lastSequence: {b.last_sequence} producerId: {b.producer_id} "
                f"producerEpoch: {b.producer_epoch} partitionLeaderEpoch: {b.partition_leader_epoch} "
                f"isTransactional: {_s(b.is_transactional)} isControl: {_s(b.is_control)} "
                f"deleteHorizonMs: {horizon}")
    else:
        head = f"offset: {_s(b.last_offset)}"
    return (f"{head} position: {_s(b.position)} {b.timestamp_type}: {_s(b.max_timestamp)} size: {_s(b.size)} "
            f"magic: {b.magic} compresscodec: {b.compression} crc: {_s(b.crc)} isvalid: {_s(b.is_valid)}")


def _size(e: DumpEntry, which: str) -> int:
    raw = e.key if which == "key" else e.value
    if raw is not None:
        return len(raw)
    if e.meta and e.meta.get(f"{which}_size") is not None:
        return e.meta[f"{which}_size"]
    if e.record is not None:
        k, v = e.record.encode()
        blob = k if which == "key" else v
        return -1 if blob is None else len(blob)
    if which == "value" and e.is_tombstone:
        return -1
    return -1


def _sequence(e: DumpEntry, b: BatchInfo) -> int:
    if e.meta and e.meta.get("sequence") is not None:
        return e.meta["sequence"]
    if b.base_sequence < 0 or b.base_offset is None or e.offset is None:
        return -1
    return (b.base_sequence + (e.offset - b.base_offset)) & 0x7FFFFFFF


def _control_text(e: DumpEntry) -> str:
    if e.meta and e.meta.get("control_text"):
        return f" controlType: {e.meta['control_text']}"
    epoch = e.meta.get("coordinator_epoch") if e.meta else None
    if epoch is None and e.key is not None:
        try:
            epoch = ControlMarker.from_record(e.key, e.value).coordinator_epoch
        except ValueError:
            epoch = None
    if e.control in ("COMMIT", "ABORT"):
        return f" endTxnMarker: {e.control} coordinatorEpoch: {_s(epoch)}"
    return f" controlType: {e.control}"


def _contents(e: DumpEntry) -> tuple[str | None, str | None]:
    if e.record is not None:
        return dump_log_key_payload(e.record)
    meta = e.meta or {}
    if "key_text" in meta:
        return meta["key_text"], meta.get("payload_text")
    if e.fields is not None and e.fields.get("unknown_type") is not None and e.offset is not None:
        return f"Unknown record type {e.fields['unknown_type']} at offset {e.offset}, skipping.", None
    if e.error is not None:
        return f"Error at offset {_s(e.offset)}, skipping. {e.error}", None
    if e.fields is not None and e.fields.get("record_type"):
        return _legacy_texts(e.fields)
    return None, None


def _record_line(e: DumpEntry, b: BatchInfo) -> str:
    meta = e.meta or {}
    out = []
    if meta.get("skip_metadata"):
        prefix = "| "
    else:
        ts_type = meta.get("timestamp_type") or b.timestamp_type
        ts = e.timestamp if e.timestamp is not None else -1
        out.append(f"| offset: {_s(e.offset)} {ts_type}: {ts} keySize: {_size(e, 'key')} "
                   f"valueSize: {_size(e, 'value')}")
        if b.magic >= 2:
            out.append(f" sequence: {_sequence(e, b)} headerKeys: {meta.get('header_keys') or '[]'}")
        else:
            out.append(f" isValid: true crc: {_s(meta.get('crc', b.crc))}")
        if e.control is not None:
            out.append(_control_text(e))
        prefix = " "
    if e.control is None:
        key, payload = _contents(e)
        if key is not None:
            out.append(f"{prefix}key: {key}")
            prefix = " "
        if payload is not None:
            out.append(f"{prefix}payload: {payload}")
    return "".join(out)


def _synthesize(e: DumpEntry, offset: int, position: int) -> BatchInfo:
    """A one-record batch header for an entry read without one (as a plain producer writes it)."""
    ts = e.timestamp if e.timestamp is not None else -1
    if e.record is not None:
        key, value = e.record.encode()
        data = encode_batch([(key, value, ts)], base_offset=offset, base_sequence=-1)
        batch = next(b for b in read_batches(data))
        info = BatchInfo.from_batch(batch)
        return dataclasses.replace(info, position=position)
    return BatchInfo(base_offset=offset, last_offset=offset, count=1, position=position, max_timestamp=ts)


def _dumped_name(e: DumpEntry) -> str:
    if e.meta and e.meta.get("dumped"):
        return e.meta["dumped"]
    return e.source


def _starting_offset(name: str, e: DumpEntry) -> int:
    base = parse_segment_file_name(Path(name).name)
    if base is not None:
        return base
    if e.meta and e.meta.get("starting_offset") is not None:
        return e.meta["starting_offset"]
    if e.batch is not None and e.batch.base_offset is not None:
        return e.batch.base_offset
    return e.offset if e.offset is not None else 0


def render_dump_log(entries: Iterable[DumpEntry], *, source_name: str | None = None) -> Iterator[str]:
    """kafka-dump-log.sh --offsets-decoder --print-data-log (3.8+ form) lines, without newlines.

    A `Dumping <file>` / `Log starting offset: <n>` pair starts every source file (with
    `source_name`, all entries are shown as one file of that name); a batch header line precedes
    the records of each batch.
    """
    current_source: str | None = None
    current_batch: BatchInfo | None = None
    next_offset = 0
    next_position = 0
    started = False
    for e in entries:
        name = _dumped_name(e)
        if not started or (source_name is None and name != current_source):
            shown = source_name if source_name is not None else name
            yield f"Dumping {shown}"
            yield f"Log starting offset: {_starting_offset(shown, e)}"
            current_source, current_batch, started = name, None, True
            next_offset = _starting_offset(shown, e)
            next_position = 0
        b = e.batch
        if b is None:
            offset = e.offset if e.offset is not None else next_offset
            b = _synthesize(e, offset, next_position)
            if e.offset is None:
                e = dataclasses.replace(e, offset=offset)
        if b is not current_batch:
            yield batch_header_line(b)
            current_batch = b
            if b.size is not None and b.position is not None:
                next_position = b.position + b.size
        if e.offset is not None:
            next_offset = e.offset + 1
        yield _record_line(e, b)
