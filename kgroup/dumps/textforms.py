"""The key/payload texts Kafka's tools have printed for coordinator records, across releases.

kafka-dump-log.sh `--offsets-decoder` (key text / payload text of one record line):

- 3.8+: key `{"type":"<n>","data":{...}}`, payload `{"version":"<v>","data":{...}}` or
  `<DELETE>`; `Unknown record type <n> at offset <o>, skipping.`; `Error at offset <o>,
  skipping. <message>` (DumpLogSegments.scala 3.8/3.9, tools DumpLogSegments.java 4.x).
- 3.7 and earlier: `offset_commit::group=<g>,partition=<topic>-<p>` with `offset=<n>` or
  `offset=<n>,metadata=<m>`; `group_metadata::group=<g>` with a JSON object (protocolType,
  protocol, generationId, assignment `{member=[t-0, t-1],...}`); `<DELETE>`; `unknown::version=<n>`
  (GroupMetadataManager.formatRecordKeyAndValue).
- 0.11-2.0: `offset::<g>:<t>:<p>` with `<n>` or `<n>:<metadata>`, `metadata::<g>` with
  `<protocolType>:<protocol>:<generation>:<assignment>` (DumpLogSegments.OffsetsMessageParser).

kafka-console-consumer.sh `--formatter` (one printed record):

- 4.x: `{"key":{"type":<n>,"data":{...}},"value":{"version":<v>,"data":{...}}}` with
  `"value":null` for tombstones (CoordinatorRecordMessageFormatter); the 2024 ApiMessageFormatter
  wrote the same shape, `"data":"unknown"` for unreadable parts (some builds `"version"` in the key).
- 2.1-3.x: `[g,t,p]::OffsetAndMetadata(offset=.., leaderEpoch=Optional[..]|Optional.empty,
  metadata=.., commitTimestamp=.., expireTimestamp=None|Some(..))`, `g::GroupMetadata(groupId=..,
  generation=.., protocolType=Some(..)|None, currentState=.., members=Map(.. -> MemberMetadata(..)))`,
  `::NULL` for tombstones.
- 0.10-2.0: `[g,t,p]::[OffsetMetadata[<n>,NO_METADATA|<m>],CommitTime <c>,ExpirationTime <x>]`,
  `g::[g,Some(consumer),Stable,Map(...)]`; 0.8.2: `OffsetAndMetadata[<n>,<ts>,<m>]`.

What the older forms carry is returned as `fields` (snake_case record field names, plus
`record_type` and `tombstone`); the 3.8+/4.x JSON is rebuilt into typed records.
"""
from __future__ import annotations

import json
import re
from typing import Any, NamedTuple

from kgroup.records.records import CONSUMER_OFFSETS, SHARE_GROUP_STATE

from .fromjson import JsonRecordError, UnknownJsonRecordType, key_from_json, value_from_json

__all__ = ["Parsed", "parse_dump_key_payload", "parse_console_json", "parse_console_legacy", "guess_topic"]


class Parsed(NamedTuple):
    """What one printed record says: a typed record, partial fields, or why neither."""

    record: Any = None
    fields: dict | None = None
    error: str | None = None
    unknown_type: int | None = None
    topic: str | None = None


def guess_topic(record_type: int, key_data: Any, topic: str | None) -> str:
    """The topic a JSON key belongs to: `topic` if known, else by its fields.

    Types 0/1 exist on both topics; share-state keys (ShareSnapshot/ShareUpdate) carry a
    `topicId`, offset-commit keys a `topic`.
    """
    if topic is not None:
        return topic
    if record_type in (0, 1) and isinstance(key_data, dict) and "topicId" in key_data and "topic" not in key_data:
        return SHARE_GROUP_STATE
    return CONSUMER_OFFSETS


def _from_json(rtype: Any, key_data: Any, version: Any, value_data: Any, topic: str | None,
               tombstone: bool, key_text: str | None = None) -> Parsed:
    try:
        rtype_n = int(rtype)
    except (TypeError, ValueError):
        return Parsed(error=f"record type is not a number: {rtype!r}")
    t = guess_topic(rtype_n, key_data, topic)
    raw = {"type": rtype_n, "key": key_data, "version": version, "value": value_data}
    if key_data == "unknown":
        return Parsed(fields={"unknown_type": rtype_n, **raw},
                      error=f"the formatter could not read the key of record type {rtype_n}",
                      unknown_type=rtype_n, topic=t)
    if value_data == "unknown":
        return Parsed(fields=raw, error=f"the formatter could not read the value of record type {rtype_n}",
                      topic=t)
    try:
        cls, key = key_from_json(rtype_n, key_data, t, cache_text=key_text)
        rec = value_from_json(cls, key, None if tombstone else version, None if tombstone else value_data)
    except UnknownJsonRecordType as exc:
        return Parsed(fields={"unknown_type": rtype_n, **raw}, error=str(exc), unknown_type=rtype_n, topic=t)
    except JsonRecordError as exc:
        return Parsed(fields=raw, error=f"cannot rebuild the record from its JSON: {exc}", topic=t)
    return Parsed(record=rec, topic=t)


# --------------------------------------------------------------------------- dump-log

_UNKNOWN_TYPE = re.compile(r"^Unknown record type (-?\d+) at offset (-?\d+), skipping\.$")
_ERROR_AT = re.compile(r"^Error at offset (-?\d+), skipping\. ?(.*)$", re.S)
_UNKNOWN_VERSION = re.compile(r"^unknown::version=(-?\d+)$")
_OFFSET_VALUE_37 = re.compile(r"^offset=(-?\d+)(?:,metadata=(.*))?$", re.S)
_OFFSET_VALUE_011 = re.compile(r"^(-?\d+)(?::(.*))?$", re.S)


def _split_tp(tp: str) -> tuple[str, int] | None:
    topic, sep, p = tp.rpartition("-")
    if not sep or not re.fullmatch(r"-?\d+", p):
        return None
    return topic, int(p)


def _offset_fields(group: str, topic: str, partition: int, value: str | None, form: str) -> Parsed:
    fields: dict[str, Any] = {"record_type": "OffsetCommit", "group": group, "topic": topic,
                              "partition": partition, "tombstone": False}
    if value is None or value == "<DELETE>":
        fields["tombstone"] = True
        return Parsed(fields=fields)
    m = (_OFFSET_VALUE_37 if form == "3.7" else _OFFSET_VALUE_011).match(value)
    if not m:
        return Parsed(fields=fields, error=f"unreadable offset payload {value!r}")
    fields["offset"] = int(m.group(1))
    fields["metadata"] = m.group(2) if m.group(2) is not None else ""
    return Parsed(fields=fields)


def parse_assignment_text(text: str) -> dict[str, Any]:
    """`{member=[t-0, t-1],other=[t-2]:CAFE}` (or `{member=HEX}`) as {member: partitions | hex}.

    Consumer members map to a list of [topic, partition] pairs (and `:HEX` user data is kept
    under `<member>#userData`); other protocols map to the hex string of the assignment bytes.
    """
    body = text.strip()
    if body.startswith("{") and body.endswith("}"):
        body = body[1:-1]
    items, depth, start = [], 0, 0
    for i, ch in enumerate(body):
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        elif ch == "," and depth == 0:
            items.append(body[start:i])
            start = i + 1
    if body[start:]:
        items.append(body[start:])
    out: dict[str, Any] = {}
    for item in items:
        at = item.find("=[")
        if at >= 0:
            member = item[:at]
            close = item.rfind("]")
            parts = [p.strip() for p in item[at + 2:close].split(",") if p.strip()]
            out[member] = [list(tp) if (tp := _split_tp(p)) else p for p in parts]
            if item[close + 1:].startswith(":"):
                out[f"{member}#userData"] = item[close + 2:]
        else:
            member, _, hexdata = item.rpartition("=")
            out[member or item] = hexdata
    return out


def _group_37(group: str, value: str | None) -> Parsed:
    fields: dict[str, Any] = {"record_type": "GroupMetadata", "group": group, "tombstone": False}
    if value is None or value == "<DELETE>":
        fields["tombstone"] = True
        return Parsed(fields=fields)
    try:
        obj = json.loads(value)
    except ValueError:
        return Parsed(fields=fields, error=f"unreadable group metadata payload {value[:80]!r}")
    if not isinstance(obj, dict):
        return Parsed(fields=fields, error=f"unreadable group metadata payload {value[:80]!r}")
    fields["protocol_type"] = obj.get("protocolType")
    fields["protocol"] = obj.get("protocol")
    if "generationId" in obj:
        fields["generation"] = obj.get("generationId")
    if isinstance(obj.get("assignment"), str):
        fields["assignment"] = parse_assignment_text(obj["assignment"])
    return Parsed(fields=fields)


def _group_011(group: str, value: str | None) -> Parsed:
    fields: dict[str, Any] = {"record_type": "GroupMetadata", "group": group, "tombstone": False}
    if value is None or value == "<DELETE>":
        fields["tombstone"] = True
        return Parsed(fields=fields)
    parts = value.split(":", 3)
    if len(parts) != 4 or not re.fullmatch(r"-?\d+", parts[2]):
        return Parsed(fields=fields, error=f"unreadable group metadata payload {value[:80]!r}")
    fields.update(protocol_type=parts[0], protocol=parts[1], generation=int(parts[2]),
                  assignment=parse_assignment_text(parts[3]))
    return Parsed(fields=fields)


def parse_dump_key_payload(key: str, payload: str | None, topic: str | None, *, key_obj: Any = None) -> Parsed:
    """Interpret the `key: ... payload: ...` texts of one kafka-dump-log record line
    (`key_obj`: the key's JSON, when the caller already parsed it)."""
    key = key.strip()
    if key.startswith("{"):
        if key_obj is not None:
            kobj = key_obj
        else:
            try:
                kobj = json.loads(key)
            except ValueError:
                return Parsed(error=f"unreadable JSON key {key[:80]!r}")
        if not isinstance(kobj, dict) or "data" not in kobj or not ("type" in kobj or "version" in kobj):
            return Parsed(error=f"unexpected JSON key {key[:80]!r}")
        rtype = kobj.get("type", kobj.get("version"))
        if payload is None:
            return Parsed(error="record line has a key but no payload")
        if payload == "<DELETE>":
            return _from_json(rtype, kobj["data"], None, None, topic, True, key)
        try:
            vobj = json.loads(payload)
        except ValueError:
            return Parsed(error=f"unreadable JSON payload {payload[:80]!r}")
        if not isinstance(vobj, dict) or "version" not in vobj or "data" not in vobj:
            return Parsed(error=f"unexpected JSON payload {payload[:80]!r}")
        return _from_json(rtype, kobj["data"], vobj["version"], vobj["data"], topic, False, key)
    if m := _UNKNOWN_TYPE.match(key):
        n = int(m.group(1))
        return Parsed(fields={"unknown_type": n}, error=key, unknown_type=n)
    if m := _ERROR_AT.match(key):
        return Parsed(error=key)
    if key.startswith("offset_commit::group="):
        body = key[len("offset_commit::group="):]
        at = body.rfind(",partition=")
        tp = _split_tp(body[at + len(",partition="):]) if at >= 0 else None
        if tp is None:
            return Parsed(error=f"unreadable offset commit key {key[:80]!r}")
        return _offset_fields(body[:at], tp[0], tp[1], payload, "3.7")
    if key.startswith("group_metadata::group="):
        return _group_37(key[len("group_metadata::group="):], payload)
    if m := _UNKNOWN_VERSION.match(key):
        n = int(m.group(1))
        return Parsed(fields={"unknown_type": n}, error=f"unknown record type {n} ({key})", unknown_type=n)
    if key.startswith("offset::"):
        parts = key[len("offset::"):].rsplit(":", 2)
        if len(parts) != 3 or not re.fullmatch(r"-?\d+", parts[2]):
            return Parsed(error=f"unreadable offset key {key[:80]!r}")
        return _offset_fields(parts[0], parts[1], int(parts[2]), payload, "0.11")
    if key.startswith("metadata::"):
        return _group_011(key[len("metadata::"):], payload)
    return Parsed(error=f"unrecognised record key {key[:80]!r}")


# --------------------------------------------------------------------------- console


def parse_console_json(obj: Any, topic: str | None) -> Parsed:
    """One `{"key":{...},"value":{...}|null}` object of the console formatters."""
    if not isinstance(obj, dict) or not isinstance(obj.get("key"), dict) or "value" not in obj:
        return Parsed(error="JSON object is not a formatted coordinator record")
    k = obj["key"]
    rtype = k.get("type", k.get("version"))
    if rtype is None or "data" not in k:
        return Parsed(error="JSON key has no type/data")
    v = obj["value"]
    if v is None:
        return _from_json(rtype, k["data"], None, None, topic, True)
    if not isinstance(v, dict) or "version" not in v or "data" not in v:
        return Parsed(error="JSON value has no version/data")
    return _from_json(rtype, k["data"], v["version"], v["data"], topic, False)


_OFFSET_LINE = re.compile(r"^\[(?P<g>.*),(?P<t>[A-Za-z0-9._-]+),(?P<p>-?\d+)\]::(?P<v>.*)$", re.S)
_OAM_21 = re.compile(
    r"^OffsetAndMetadata\(offset=(?P<o>-?\d+), leaderEpoch=(?:Optional\[(?P<e>-?\d+)\]|Optional\.empty), "
    r"metadata=(?P<m>.*), commitTimestamp=(?P<c>-?\d+), expireTimestamp=(?:None|Some\((?P<x>-?\d+)\))\)$", re.S)
_OAM_010 = re.compile(
    r"^\[OffsetMetadata\[(?P<o>-?\d+),(?P<m>.*)\],CommitTime (?P<c>-?\d+),ExpirationTime (?P<x>-?\d+)\]$", re.S)
_OAM_082 = re.compile(r"^OffsetAndMetadata\[(?P<o>-?\d+),(?P<c>-?\d+),(?P<m>.*)\]$", re.S)
_LOOSE_OFFSET = re.compile(r"offset=(-?\d+)")
_GM_HEAD = re.compile(r"^GroupMetadata\(groupId=(?P<g>.*?), generation=(?P<gen>-?\d+), "
                      r"protocolType=(?P<pt>Some\(.*?\)|None), currentState=(?P<st>\w+), members=", re.S)
_MEMBER = re.compile(
    r"MemberMetadata\(memberId=(?P<id>.*?), (?:groupInstanceId=(?P<gi>Some\(.*?\)|None), )?clientId=(?P<cid>.*?), "
    r"clientHost=(?P<host>.*?), sessionTimeoutMs=(?P<st>-?\d+), rebalanceTimeoutMs=(?P<rt>-?\d+), "
    r"supportedProtocols=List\((?P<sp>.*?)\)", re.S)
_GM_010 = re.compile(r"^\[(?P<g>.*?),(?P<pt>Some\(.*?\)|None),(?P<st>\w+),(?P<members>.*)\]$", re.S)


def _scala_option(text: str | None) -> str | None:
    if text is None or text == "None" or text == "Some(null)":
        return None
    if text.startswith("Some(") and text.endswith(")"):
        return text[5:-1]
    return text


def _offset_and_metadata(group: str, topic: str, partition: int, value: str) -> Parsed:
    fields: dict[str, Any] = {"record_type": "OffsetCommit", "group": group, "topic": topic,
                              "partition": partition, "tombstone": False}
    if value == "NULL":
        fields["tombstone"] = True
        return Parsed(fields=fields)
    if m := _OAM_21.match(value):
        fields.update(offset=int(m["o"]), leader_epoch=int(m["e"]) if m["e"] is not None else -1,
                      metadata=m["m"], commit_timestamp=int(m["c"]),
                      expire_timestamp=int(m["x"]) if m["x"] is not None else -1)
    elif m := _OAM_010.match(value):
        fields.update(offset=int(m["o"]), metadata="" if m["m"] == "NO_METADATA" else m["m"],
                      commit_timestamp=int(m["c"]), expire_timestamp=int(m["x"]))
    elif m := _OAM_082.match(value):
        fields.update(offset=int(m["o"]), commit_timestamp=int(m["c"]), metadata=m["m"])
    elif m := _LOOSE_OFFSET.search(value):
        fields["offset"] = int(m.group(1))
    else:
        return Parsed(fields=fields, error=f"unreadable offset value {value[:80]!r}")
    return Parsed(fields=fields)


def _group_metadata_text(group: str, value: str) -> Parsed:
    fields: dict[str, Any] = {"record_type": "GroupMetadata", "group": group, "tombstone": False}
    if value == "NULL":
        fields["tombstone"] = True
        return Parsed(fields=fields)
    if m := _GM_HEAD.match(value):
        fields.update(generation=int(m["gen"]), protocol_type=_scala_option(m["pt"]), current_state=m["st"])
        fields["members"] = [
            {"member_id": mm["id"], "group_instance_id": _scala_option(mm["gi"]), "client_id": mm["cid"],
             "client_host": mm["host"], "session_timeout": int(mm["st"]), "rebalance_timeout": int(mm["rt"]),
             "supported_protocols": [p.strip() for p in mm["sp"].split(",") if p.strip()]}
            for mm in _MEMBER.finditer(value[m.end():])]
        return Parsed(fields=fields)
    if m := _GM_010.match(value):
        fields.update(protocol_type=_scala_option(m["pt"]), current_state=m["st"])
        fields["members"] = [{"member_id": mid} for mid in re.findall(r"(?:Map\(|, )([^\s,()]+) -> ", m["members"])]
        return Parsed(fields=fields)
    return Parsed(fields=fields, error=f"unreadable group metadata value {value[:80]!r}")


def parse_console_legacy(text: str) -> Parsed | None:
    """`[g,t,p]::...` / `g::GroupMetadata(...)` / `g::NULL` lines; None if it is neither."""
    if m := _OFFSET_LINE.match(text):
        return _offset_and_metadata(m["g"], m["t"], int(m["p"]), m["v"])
    for marker in ("::GroupMetadata(", "::["):
        at = text.find(marker)
        if at >= 0:
            return _group_metadata_text(text[:at], text[at + 2:])
    if text.endswith("::NULL"):
        return _group_metadata_text(text[:-len("::NULL")], "NULL")
    return None
