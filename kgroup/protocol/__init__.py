"""Protocol glue over `kio`: build requests/responses of any version from plain data.

Handlers speak version-neutral dicts; `build()` turns them into the kio dataclass of
the exact API version asked for, dropping fields that version does not have. That is
how one handler serves every version (Kafka does the same with its generated
`...Data` classes and version-aware serializers).

    req = request("OffsetFetch", 8, groups=[{"group_id": "g", "topics": None}])
"""
from __future__ import annotations

import dataclasses
import datetime
import functools
import types
import typing
import uuid
from typing import Any

from kio.index import load_request_schema, load_response_schema
from kio.schema.errors import ErrorCode
from kio.schema.index import api_key_map
from kio.static.primitive import i32Timedelta, i64Timedelta

from kgroup.protocol import schema

__all__ = ["API_KEYS", "api_name", "build", "request", "response_class", "supported_versions", "get", "ms", "to_data"]

#: "OffsetFetch" -> 9, and so on for every API kio knows and those `kgroup.protocol.schema` adds.
_API_KEY_MAP = {**api_key_map, **schema.API_NAMES}
API_KEYS: dict[str, int] = {
    "".join(part.capitalize() for part in name.split("_")): key for key, name in _API_KEY_MAP.items()
}
_NAMES = {v: k for k, v in API_KEYS.items()}


def api_name(api_key: int) -> str:
    return _NAMES.get(api_key, f"api {api_key}")


def _key(api: str | int) -> int:
    if isinstance(api, int):
        return api
    try:
        return API_KEYS[api]
    except KeyError:
        raise ValueError(f"unknown Kafka API {api!r}") from None


def supported_versions(api: str | int) -> list[int]:
    """The versions kio has for an API, and those `kgroup.protocol.schema` adds."""
    from kio.schema.index import schema_name_map

    key = _key(api)
    kio_versions = schema_name_map[api_key_map[key]] if key in api_key_map else ()
    return sorted({*kio_versions, *schema.versions(key)})


# kio resolves a schema through importlib on every lookup; the classes never change
@functools.cache
def _request_schema(api_key: int, version: int) -> type:
    return schema.request_class(api_key, version) or load_request_schema(api_key, version)


@functools.cache
def _response_schema(api_key: int, version: int) -> type:
    return schema.response_class(api_key, version) or load_response_schema(api_key, version)


def response_class(api: str | int, version: int) -> type:
    return _response_schema(_key(api), version)


def request(api: str | int, version: int, **data: Any) -> Any:
    """A kio request of `api` at `version`, built from plain data (nested dicts/lists)."""
    return build(_request_schema(_key(api), version), data)


@functools.cache
def _fields(cls: type) -> list[tuple[str, Any, bool, Any]]:
    """(name, type, has default, converter or None for values taken as they are) per field."""
    hints = typing.get_type_hints(cls)
    out = []
    for f in dataclasses.fields(cls):
        has_default = f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
        out.append((f.name, hints[f.name], has_default, _converter(hints[f.name])))
    return out


@functools.cache
def _converter(tp: Any) -> Any:
    """A function turning plain data into a value of `tp`, or None when values are taken as
    they are. Worked out once per type: building requests on hot paths stays cheap."""
    origin = typing.get_origin(tp)
    if origin in (types.UnionType, typing.Union):
        inner = [a for a in typing.get_args(tp) if a is not type(None)]
        return _converter(inner[0]) if len(inner) == 1 else None
    if origin is tuple:
        (item_tp, *_rest) = typing.get_args(tp)
        item = _converter(item_tp)
        if item is None:
            return tuple
        return lambda value: tuple(None if v is None else item(v) for v in value)
    if isinstance(tp, type):
        if dataclasses.is_dataclass(tp):
            return lambda value: value if isinstance(value, tp) else build(tp, value)
        if issubclass(tp, (i32Timedelta, i64Timedelta)):
            # parsing a phantom type validates its range: do it once per distinct millisecond
            # count (responses carry the same few: throttle time 0, the heartbeat interval)
            from_ms = functools.lru_cache(maxsize=1024)(lambda v: tp.parse(datetime.timedelta(milliseconds=v)))
            return lambda value: (tp.parse(value) if isinstance(value, datetime.timedelta)
                                  else from_ms(value))
        if tp is ErrorCode:
            return lambda value: value if value.__class__ is ErrorCode else ErrorCode(int(value))
        if tp is uuid.UUID:
            return lambda value: uuid.UUID(value) if isinstance(value, str) else value
    return None


def _convert(tp: Any, value: Any) -> Any:
    if value is None:
        return None
    conv = _converter(tp)
    return value if conv is None else conv(value)


def build(cls: type, data: Any) -> Any:
    """Build kio dataclass `cls` from a mapping; keys the version lacks are dropped."""
    if type(data) is not dict and dataclasses.is_dataclass(data):
        data = to_data(data)
    return _builder(cls)(data)


_MISSING = object()


@functools.cache
def _builder(cls: type) -> Any:
    """`build` for one class, as straight-line code (every heartbeat's answer is built: a loop
    over the fields with their conversions cost a third of a steady heartbeat's time). For each
    field: the value converted when given, Kafka's zero value when absent and without default."""
    env: dict[str, Any] = {"cls": cls, "_M": _MISSING}
    lines = ["def build_(data):", "    get = data.get", "    kw = {}"]
    for i, (name, tp, has_default, conv) in enumerate(_fields(cls)):
        env[f"c{i}"] = conv
        lines.append(f"    v = get({name!r}, _M)")
        if conv is None:
            lines.append(f"    if v is not _M: kw[{name!r}] = v")
        else:
            lines.append(f"    if v is not _M: kw[{name!r}] = v if v is None else c{i}(v)")
        if not has_default:
            try:
                env[f"z{i}"] = _zero(tp)
                lines.append(f"    else: kw[{name!r}] = z{i}")
            except TypeError:    # no zero value (a nested entity): the same error as before, when used
                env[f"t{i}"], env["_zero"] = tp, _zero
                lines.append(f"    else: kw[{name!r}] = _zero(t{i})")
    lines.append("    return cls(**kw)")
    exec("\n".join(lines), env)  # noqa: S102 - code built from the class's own field names
    return env["build_"]


def _zero(tp: Any) -> Any:
    """The value Kafka's generated classes start with for a field nobody set."""
    origin = typing.get_origin(tp)
    if origin in (types.UnionType, typing.Union):
        return None
    if origin is tuple:
        return ()
    if isinstance(tp, type):
        if issubclass(tp, (i32Timedelta, i64Timedelta)):
            return tp.parse(datetime.timedelta(0))
        if tp is ErrorCode:
            return ErrorCode.none
        if issubclass(tp, bool):
            return False
        if issubclass(tp, int):
            return 0
        if issubclass(tp, str):
            return ""
        if issubclass(tp, bytes):
            return b""
        if tp is uuid.UUID:
            return uuid.UUID(int=0)
    raise TypeError(f"no zero value for {tp!r}")


def to_data(entity: Any) -> Any:
    """A kio entity as plain data (dicts, lists, ints, strs), e.g. for display or diffs."""
    if dataclasses.is_dataclass(entity):
        return {f.name: to_data(getattr(entity, f.name)) for f in dataclasses.fields(entity)}
    if isinstance(entity, tuple):
        return [to_data(v) for v in entity]
    if isinstance(entity, ErrorCode):
        return int(entity)
    if isinstance(entity, datetime.timedelta):
        return ms(entity)
    return entity


def get(entity: Any, name: str, default: Any = None) -> Any:
    """A request field, or `default` when this version does not have it."""
    return getattr(entity, name, default)


def ms(value: Any) -> int:
    """Milliseconds from a kio timedelta field (or an int)."""
    if isinstance(value, datetime.timedelta):
        # floor(total µs / 1000) in int arithmetic (timedelta // timedelta is several times slower):
        # days and seconds are whole milliseconds, microseconds is always in [0, 10**6)
        return value.days * 86_400_000 + value.seconds * 1000 + value.microseconds // 1000
    return int(value)
