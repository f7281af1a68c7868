"""kio-style schema classes built from a message definition in Kafka's own JSON format.

kio generates its classes from Kafka's `common/message/*.json`; for the versions it lacks,
kgroup keeps those files in `message/` and builds the classes at import, by the same rules, so
kio's readers and writers, `kgroup.protocol.build` and the server's size guard take them as they
take kio's own:

- one frozen, slotted, keyword-only dataclass per struct (the message's, each nested and each
  common struct's), with the ClassVars `__type__`, `__version__`, `__flexible__`, `__api_key__`
  and `__header_schema__`;
- a field is named by its Kafka name in snake_case (`ThrottleTimeMs` -> `throttle_time`: kio
  drops the `Ms` of durations, which are `i32Timedelta`/`i64Timedelta`); `ErrorCode` is kio's
  `ErrorCode`, an `entityType` its type in `kio.schema.types`;
- a primitive (or an array of them) carries its `kafka_type` in the field's metadata and
  defaults to the definition's `default`, an array without one to `()`; a struct or an array of
  them has no metadata, and only a nullable struct a default (None).

Tagged fields are refused: none of kgroup's definitions has one, and kio's layout for them
(implicit nullability, default instances of tagged structs) is not reproduced here.
"""
from __future__ import annotations

import builtins
import dataclasses
import datetime
import json
import re
from importlib import resources
from typing import Any, ClassVar

from kio.schema import types as entity_types
from kio.schema.errors import ErrorCode
from kio.schema.request_header.v1.header import RequestHeader as RequestHeaderV1
from kio.schema.request_header.v2.header import RequestHeader as RequestHeaderV2
from kio.schema.response_header.v0.header import ResponseHeader as ResponseHeaderV0
from kio.schema.response_header.v1.header import ResponseHeader as ResponseHeaderV1
from kio.static.constants import EntityType
from kio.static.primitive import i8, i16, i32, i32Timedelta, i64, i64Timedelta, u16, u32

__all__ = ["message_classes"]

#: Kafka's primitive types -> kio's
_PRIMITIVES: dict[str, type] = {
    "bool": bool, "int8": i8, "int16": i16, "int32": i32, "int64": i64, "uint16": u16, "uint32": u32,
    "string": str, "bytes": bytes,
}
#: the `...Ms` fields kio takes for durations (it refuses any other name ending in Ms)
_DURATIONS = frozenset({"ThrottleTimeMs", "RebalanceTimeoutMs", "HeartbeatIntervalMs", "TaskOffsetIntervalMs"})
_TIMEDELTAS = {"int32": ("timedelta_i32", i32Timedelta), "int64": ("timedelta_i64", i64Timedelta)}
_ERROR_CODES = frozenset({"ErrorCode", "PartitionErrorCode"})
#: (message type, flexible version) -> header (KIP-482: flexible versions have the headers with tagged fields)
_HEADERS: dict[tuple[str, bool], type] = {
    ("request", True): RequestHeaderV2, ("request", False): RequestHeaderV1,
    ("response", True): ResponseHeaderV1, ("response", False): ResponseHeaderV0,
}
_WORDS = re.compile(r"(?<=[a-z])(?=[A-Z])|(?<=[A-Z0-9])(?=[A-Z][a-z])")
_BUILTINS = frozenset(dir(builtins))


def message_classes(name: str, version: int, module: str) -> dict[str, type]:
    """The classes of message `name` (`message/<name>.json`) at `version`, by class name, the
    message's own last; `module` is where they are imported from (their `__module__`)."""
    spec = _definition(name)
    if not _in(spec["validVersions"], version):
        raise ValueError(f"{name} has no version {version} (valid: {spec['validVersions']})")
    flexible = _in(spec["flexibleVersions"], version)
    common = {struct["name"]: struct["fields"] for struct in spec.get("commonStructs", ())}
    classvars = {"__version__": i16(version), "__flexible__": flexible, "__api_key__": i16(spec["apiKey"]),
                 "__header_schema__": _HEADERS[spec["type"], flexible]}
    classes: dict[str, type] = {}

    def struct(struct_name: str, fields: list[dict[str, Any]], entity_type: EntityType) -> type:
        if struct_name not in classes:
            members = [_field(f, version, nested) for f in fields if _in(f["versions"], version)]
            classes[struct_name] = _dataclass(struct_name, module, entity_type, classvars, members)
        return classes[struct_name]

    def nested(field: dict[str, Any], struct_name: str) -> type:
        fields = field["fields"] if "fields" in field else common[struct_name]
        return struct(struct_name, fields, EntityType.nested)

    struct(spec["name"], spec["fields"], EntityType[spec["type"]])
    return classes


def _definition(name: str) -> dict[str, Any]:
    """A definition as Kafka writes them: JSON with whole-line `//` comments."""
    text = resources.files(__package__).joinpath("message", f"{name}.json").read_text(encoding="utf-8")
    return json.loads("\n".join(line for line in text.splitlines() if not line.lstrip().startswith("//")))


def _in(versions: str, version: int) -> bool:
    """Whether `version` is in a Kafka version range: "none", "3", "1-4" or "2+"."""
    if versions == "none":
        return False
    if versions.endswith("+"):
        return version >= int(versions[:-1])
    low, _, high = versions.partition("-")
    return int(low) <= version <= int(high or low)


def _snake_case(name: str) -> str:
    """kio's field names: `SubtopologyId` -> `subtopology_id`, a builtin's name gets a `_`."""
    snake = _WORDS.sub("_", name).lower()
    return snake + "_" if snake in _BUILTINS else snake


def _field(field: dict[str, Any], version: int, nested: Any) -> tuple[str, Any, dataclasses.Field | None]:
    """(name, type, `dataclasses.field` or None for a bare annotation) of one field at `version`."""
    name, kafka_type = field["name"], field["type"]
    if "taggedVersions" in field and _in(field["taggedVersions"], version):
        raise NotImplementedError(f"tagged field {name}: kio's layout for tagged fields is not built here")
    nullable = "nullableVersions" in field and _in(field["nullableVersions"], version)
    is_array = kafka_type.startswith("[]")
    item = kafka_type.removeprefix("[]")
    if item[0].isupper():    # Kafka's structs are named in CamelCase, its primitives in lower case
        tp = nested(field, item)
        tp = tuple[tp, ...] if is_array else tp
        if not nullable:
            return _snake_case(name), tp, None
        # kio gives a nullable struct its default (null), never an array of them
        spec = dataclasses.field(default=None) if not is_array and field.get("default") == "null" else None
        return _snake_case(name), tp | None, spec
    if name in _DURATIONS:
        name, (item, tp) = name.removesuffix("Ms"), _TIMEDELTAS[item]
    elif name.endswith("Ms"):
        raise NotImplementedError(f"{name}: kio takes only known ...Ms fields for durations")
    elif name in _ERROR_CODES:
        item, tp = "error_code", ErrorCode
    elif "entityType" in field:
        tp = getattr(entity_types, field["entityType"][0].upper() + field["entityType"][1:])
    elif item in _PRIMITIVES:
        tp = _PRIMITIVES[item]
    else:
        raise NotImplementedError(f"{name}: {item} fields are not built here")
    metadata = {"kafka_type": item}
    if is_array:
        default = _default(field["default"], item, tp) if "default" in field else ()
        tp = tuple[tp, ...]
    elif "default" in field:
        default = _default(field["default"], item, tp)
    else:
        default = dataclasses.MISSING
    return _snake_case(name), tp | None if nullable else tp, dataclasses.field(metadata=metadata, default=default)


def _default(value: Any, kafka_type: str, tp: Any) -> Any:
    """A definition's `default` (a JSON value or its text) as kio's generator writes it."""
    if value == "null":
        return None
    if kafka_type.startswith("timedelta"):
        return tp.parse(datetime.timedelta(milliseconds=int(str(value), 0)))
    if kafka_type == "bool":
        if str(value).lower() not in ("true", "false"):
            raise ValueError(f"not a bool default: {value!r}")
        return tp(str(value).lower() == "true")
    if kafka_type == "string":
        return tp(value)
    if kafka_type.startswith(("int", "uint")) or kafka_type == "error_code":
        return tp(int(str(value), 0))
    raise NotImplementedError(f"a default for a {kafka_type} field")


def _dataclass(name: str, module: str, entity_type: EntityType, classvars: dict[str, Any],
               members: list[tuple[str, Any, dataclasses.Field | None]]) -> type:
    """The class as kio's generator writes it: ClassVars, then the fields in the definition's order."""
    header = classvars["__header_schema__"]
    annotations: dict[str, Any] = {"__type__": ClassVar, "__version__": ClassVar[i16],
                                   "__flexible__": ClassVar[bool], "__api_key__": ClassVar[i16],
                                   "__header_schema__": ClassVar[type[header]]}
    namespace: dict[str, Any] = {"__module__": module, "__qualname__": name, "__annotations__": annotations,
                                 "__type__": entity_type, **classvars}
    for field_name, tp, spec in members:
        annotations[field_name] = tp
        if spec is not None:
            namespace[field_name] = spec
    return dataclasses.dataclass(frozen=True, slots=True, kw_only=True)(type(name, (), namespace))
