"""Typed records rebuilt from the JSON Kafka's tools print (the inverse of `record.json_obj()`).

Kafka's generated `...JsonConverter.write` names each field with the schema name, first letter
lower-cased, writes bytes as base64, uuids in Kafka's 22-character base64url form, and leaves out
tagged fields that hold their default. `record_from_json` reads that back for any record type and
value version: every non-tagged field of the version must be present (as Kafka's own `read`
demands), tagged fields default when absent, unknown JSON keys are ignored.

`kafka-dump-log.sh --offsets-decoder` additionally expands the `subscription`/`assignment` bytes
of classic groups with protocolType "consumer" into JSON; those are packed back into bytes by
`consumer_json.collapse_group_metadata_json`.
"""
from __future__ import annotations

import base64
import binascii
from typing import Any

from kgroup.config import parse_int
from kgroup.records import RECORD_TYPES, SHARE_STATE_RECORD_TYPES, UnsupportedVersionError, kafka_str_to_uuid
from kgroup.records.records import CONSUMER_OFFSETS, SHARE_GROUP_STATE, CoordinatorRecord
from kgroup.records.schema import Field, Struct

from .consumer_json import collapse_group_metadata_json

__all__ = ["JsonRecordError", "UnknownJsonRecordType", "record_from_json", "key_from_json", "value_from_json",
           "struct_from_json", "record_class"]

_INT_RANGES = {
    "int8": (-(1 << 7), (1 << 7) - 1),
    "int16": (-(1 << 15), (1 << 15) - 1),
    "uint16": (0, (1 << 16) - 1),
    "int32": (-(1 << 31), (1 << 31) - 1),
    "int64": (-(1 << 63), (1 << 63) - 1),
}
_TABLES = {CONSUMER_OFFSETS: RECORD_TYPES, SHARE_GROUP_STATE: SHARE_STATE_RECORD_TYPES}


class JsonRecordError(ValueError):
    """The JSON does not describe a record of the given type/version."""


class UnknownJsonRecordType(JsonRecordError):
    """The record type number is not one the topic defines."""

    def __init__(self, record_type: int, topic: str):
        super().__init__(f"unknown {topic} record type {record_type}")
        self.record_type = record_type
        self.topic = topic


def record_class(record_type: int, topic: str = CONSUMER_OFFSETS) -> type[CoordinatorRecord] | None:
    """The record class of a type number on `topic`, or None."""
    return _TABLES.get(topic, {}).get(record_type)


def _prim(elem: str, value: Any, f: Field, where: str) -> Any:
    if elem in _INT_RANGES:
        try:
            n = parse_int(value)
        except ValueError:
            raise JsonRecordError(f"{where}: expected an integer, got {value!r}") from None
        lo, hi = _INT_RANGES[elem]
        if not lo <= n <= hi:
            raise JsonRecordError(f"{where}: {n} does not fit {elem}")
        return n
    if elem == "string":
        if not isinstance(value, str):
            raise JsonRecordError(f"{where}: expected a string, got {value!r}")
        return value
    if elem == "bytes":
        if not isinstance(value, str):
            raise JsonRecordError(f"{where}: expected base64 text, got {value!r}")
        try:
            return base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            try:  # Jackson also reads the url-safe alphabet and missing padding
                return base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))
            except (binascii.Error, ValueError):
                raise JsonRecordError(f"{where}: not base64: {value!r}") from None
    if elem == "uuid":
        try:
            return kafka_str_to_uuid(value)
        except ValueError as exc:
            raise JsonRecordError(f"{where}: {exc}") from None
    if elem == "bool":
        if not isinstance(value, bool):
            raise JsonRecordError(f"{where}: expected true/false, got {value!r}")
        return value
    if elem == "float64":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise JsonRecordError(f"{where}: expected a number, got {value!r}")
        return float(value)
    raise JsonRecordError(f"{where}: unsupported type {elem}")  # pragma: no cover


def _field_value(f: Field, version: int, value: Any, where: str) -> Any:
    if f.kind == "prim":
        # fast paths for the common cases; everything else goes through the checks
        t = type(value)
        if t is int and f.elem in _INT_RANGES:
            lo, hi = _INT_RANGES[f.elem]
            if lo <= value <= hi:
                return value
        elif t is str and f.elem == "string":
            return value
    if value is None:
        if f.is_nullable(version):
            return None
        raise JsonRecordError(f"{where}: null is not allowed in version {version}")
    if f.kind == "prim":
        return _prim(f.elem, value, f, where)
    if f.kind == "struct":
        return struct_from_json(f.elem, version, value, where)
    if not isinstance(value, list):
        raise JsonRecordError(f"{where}: expected an array, got {type(value).__name__}")
    if isinstance(f.elem, Struct):
        return [struct_from_json(f.elem, version, v, f"{where}[{i}]") for i, v in enumerate(value)]
    return [_prim(f.elem, v, f, f"{where}[{i}]") for i, v in enumerate(value)]


_PLANS: dict[tuple[int, int], list[tuple[str, str, bool, Field]]] = {}


def _plan(s: Struct, version: int) -> list[tuple[str, str, bool, Field]]:
    key = (id(s), version)
    plan = _PLANS.get(key)
    if plan is None:
        plan = _PLANS[key] = [(f.json_key, f.attr, f.is_tagged(version), f)
                              for f in s.fields if version in f.version_range]
    return plan


def struct_from_json(s: Struct, version: int, data: Any, where: str | None = None) -> Any:
    """An instance of `s`'s struct class from its JSON object at `version`."""
    if type(data) is not dict:
        raise JsonRecordError(f"{where or s.name}: expected a JSON object, got {type(data).__name__}")
    kwargs: dict[str, Any] = {}
    for json_key, attr, tagged, f in _plan(s, version):
        try:
            value = data[json_key]
        except KeyError:
            if tagged:
                continue  # a tagged field at its default is not written
            raise JsonRecordError(f"{where or s.name}: missing field {json_key!r}, which version {version} "
                                  f"requires") from None
        kwargs[attr] = _field_value(f, version, value, f"{where or s.name}.{json_key}")
    try:
        return s.cls(**kwargs)
    except (TypeError, ValueError) as exc:  # pragma: no cover - the checks above should catch it
        raise JsonRecordError(f"{where or s.name}: {exc}") from None


def _collapse_consumer_protocol(value_data: dict) -> dict:
    """Members' expanded `subscription`/`assignment` JSON back to base64 (dump-log 3.8+ form)."""
    members = value_data.get("members")
    if value_data.get("protocolType") != "consumer" or not isinstance(members, list):
        return value_data
    if not any(isinstance(m, dict) and (isinstance(m.get("subscription"), dict)
                                        or isinstance(m.get("assignment"), dict)) for m in members):
        return value_data
    try:
        return collapse_group_metadata_json(value_data, "consumer")
    except ValueError as exc:
        raise JsonRecordError(f"cannot pack consumer-protocol JSON back into bytes: {exc}") from None


_KEY_CACHE: dict[tuple[str, int, str], tuple[type[CoordinatorRecord], Any]] = {}
_KEY_CACHE_LIMIT = 100_000


def key_from_json(record_type: int | str, key_data: Any, topic: str = CONSUMER_OFFSETS, *,
                  cache_text: str | None = None) -> tuple[type[CoordinatorRecord], Any]:
    """(record class, key struct) of a key type + key JSON; `cache_text` (the key's JSON text)
    lets repeated keys be built once."""
    try:
        rtype = int(record_type)
    except (TypeError, ValueError):
        raise JsonRecordError(f"record type must be a number, got {record_type!r}") from None
    if cache_text is not None:
        hit = _KEY_CACHE.get((topic, rtype, cache_text))
        if hit is not None:
            return hit
    cls = record_class(rtype, topic)
    if cls is None:
        if topic not in _TABLES:
            raise JsonRecordError(f"unknown coordinator topic {topic!r}")
        raise UnknownJsonRecordType(rtype, topic)
    out = (cls, struct_from_json(cls.SCHEMA.key, 0, key_data, f"{cls.NAME} key"))
    if cache_text is not None:
        if len(_KEY_CACHE) >= _KEY_CACHE_LIMIT:
            _KEY_CACHE.clear()
        _KEY_CACHE[(topic, rtype, cache_text)] = out
    return out


def value_from_json(cls: type[CoordinatorRecord], key: Any, version: int | str | None,
                    value_data: Any) -> CoordinatorRecord:
    """The record of class `cls` with `key` and the value JSON at `version` (None: a tombstone)."""
    if value_data is None:
        return cls.tombstone(key)
    try:
        v = int(version)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise JsonRecordError(f"{cls.NAME}: value version must be a number, got {version!r}") from None
    try:
        layout = cls.layout_version(v)  # KIP-915: a newer version of a flexible value reads as the newest known
    except UnsupportedVersionError as exc:
        raise JsonRecordError(str(exc)) from None
    if cls.NAME == "GroupMetadata" and isinstance(value_data, dict):
        value_data = _collapse_consumer_protocol(value_data)
    value = struct_from_json(_value_layout(cls, layout, value_data), layout, value_data, f"{cls.NAME} value v{v}")
    return cls(key, value, v)


def _value_layout(cls: type[CoordinatorRecord], version: int, value_data: Any) -> Any:
    """The value message whose fields the JSON names: the current layout, or an earlier layout of
    the same version (`RecordSchema.earlier_values`, e.g. Kafka 4.1's StreamsGroupMetadata with its
    `assignmentConfigs`) when the JSON has a field only that layout has. No version number tells
    the layouts apart, so only the field names can."""
    current = cls.SCHEMA.value
    if not cls.SCHEMA.earlier_values or type(value_data) is not dict:
        return current
    names = set(value_data)
    if names <= {k for k, *_ in _plan(current, version)}:
        return current
    for earlier in cls.SCHEMA.earlier_values:
        if version in earlier.valid and names <= {k for k, *_ in _plan(earlier, version)}:
            return earlier
    return current


def record_from_json(record_type: int | str, key_data: Any, version: int | str | None, value_data: Any, *,
                     topic: str = CONSUMER_OFFSETS) -> CoordinatorRecord:
    """The typed record for a key type + key JSON and a value version + value JSON.

    `version`/`value_data` None means a tombstone. Type and version may be strings (as
    `kafka-dump-log.sh` prints them). Raises `JsonRecordError` (`UnknownJsonRecordType` for a
    type the topic does not define).
    """
    cls, key = key_from_json(record_type, key_data, topic)
    return value_from_json(cls, key, version, value_data)
