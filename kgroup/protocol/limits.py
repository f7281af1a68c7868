"""Kafka's wire limits that a kio object does not enforce, checked at `Coordinator.handle`'s door.

A Kafka string is at most `Short.MAX_VALUE` (32,767) bytes of UTF-8 in every version: the
generated readers refuse a longer one ("string field groupId had invalid length"), even in
flexible versions whose compact strings could say more, so such a request never reaches the
coordinator. A kio request built in Python can hold any string; without this check a long id
got as far as the record key and failed there, a Python exception out of `handle`.
"""
from __future__ import annotations

import dataclasses
import functools
import operator
import types
import typing
from typing import Any

from kio.schema.errors import ErrorCode

from kgroup.protocol import _fields, build, response_class, to_data

__all__ = ["MAX_STRING_BYTES", "oversized_string", "error_response"]

MAX_STRING_BYTES = 0x7FFF
# a string of at most this many characters cannot pass the limit (UTF-8 needs <= 3 bytes per
# UTF-16 unit that a Python character of the BMP is; 4 bytes for the others, counted as 2 units)
_SAFE_CHARS = MAX_STRING_BYTES // 4


def _unwrap(tp: Any) -> Any:
    if typing.get_origin(tp) in (types.UnionType, typing.Union):
        inner = [a for a in typing.get_args(tp) if a is not type(None)]
        return inner[0] if len(inner) == 1 else None
    return tp


@functools.cache
def _string_paths(cls: type) -> tuple[tuple[str, str, Any], ...]:
    """Where strings are in a kio entity: (field, kind, nested class) with kind "s" a string,
    "ss" a list of strings, "e" an entity and "es" a list of entities that hold strings."""
    out = []
    for name, tp, _default, _conv in _fields(cls):
        tp = _unwrap(tp)
        if typing.get_origin(tp) is tuple:
            item = _unwrap(typing.get_args(tp)[0])
            if isinstance(item, type) and issubclass(item, str):
                out.append((name, "ss", None))
            elif isinstance(item, type) and dataclasses.is_dataclass(item) and _string_paths(item):
                out.append((name, "es", item))
        elif isinstance(tp, type) and issubclass(tp, str):
            out.append((name, "s", None))
        elif isinstance(tp, type) and dataclasses.is_dataclass(tp) and _string_paths(tp):
            out.append((name, "e", tp))
    return tuple(out)


def _too_long(value: Any) -> int | None:
    if value is None or len(value) <= _SAFE_CHARS:
        return None
    n = len(value.encode("utf-8", "surrogatepass"))
    return n if n > MAX_STRING_BYTES else None


def oversized_string(entity: Any, where: str = "") -> tuple[str, int] | None:
    """(field path, UTF-8 length) of the first string longer than Kafka reads, or None."""
    strings, nested, nested_paths = _getters(type(entity))
    # every request passes here: the common case (short strings, no lists) costs two C calls
    if strings is not None and max(map(len, filter(None, strings(entity))), default=0) > _SAFE_CHARS:
        for name, kind, _sub in _string_paths(type(entity)):
            if kind == "s":
                n = _too_long(getattr(entity, name))
                if n is not None:
                    return f"{where}{name}", n
    if nested is None:
        return None
    values = nested(entity)
    if not any(values):
        return None
    for (name, kind, _sub), value in zip(nested_paths, values):
        if not value:
            continue
        if kind == "ss":
            for i, item in enumerate(value):
                n = _too_long(item)
                if n is not None:
                    return f"{where}{name}[{i}]", n
        elif kind == "e":
            found = oversized_string(value, f"{where}{name}.")
            if found:
                return found
        else:
            for i, item in enumerate(value):
                found = oversized_string(item, f"{where}{name}[{i}].")
                if found:
                    return found
    return None


@functools.cache
def _nested_paths(cls: type) -> tuple[tuple[str, str, Any], ...]:
    return tuple(p for p in _string_paths(cls) if p[1] != "s")


@functools.cache
def _getters(cls: type) -> tuple[Any, Any, Any]:
    """Two C-level getters: the entity's string fields as a tuple, and its nested ones (with
    their paths)."""
    def getter(names: list[str]) -> Any:
        if not names:
            return None
        get = operator.attrgetter(*names)
        return get if len(names) > 1 else (lambda entity: (get(entity),))
    return (getter([n for n, kind, _ in _string_paths(cls) if kind == "s"]),
            getter([n for n, _, _ in _nested_paths(cls)]), _nested_paths(cls))


def error_response(request: Any, code: ErrorCode, message: str | None = None) -> Any:
    """The response of `request`'s API and version saying `code` everywhere it can, as Kafka's
    `AbstractRequest.getErrorResponse` does: every error code of the response set, and the
    entities the request named (groups, topics, partitions) mirrored with the error."""
    api_key, version = int(type(request).__api_key__), int(type(request).__version__)
    cls = response_class(api_key, version)
    data = _error_data(cls, to_data(request), code, message)
    if api_key == _OFFSET_FETCH and version >= 2:
        # Kafka's OffsetFetchRequest.getErrorResponse names no topic from v2 on: the error alone
        # (v2-v7), or each group with its error and no topics (v8+)
        data.pop("topics", None)
        for group in data.get("groups", ()):
            group["topics"] = []
    elif api_key == _PRODUCE:
        # ProduceRequest.getErrorResponse: every partition written to, with the error and no offsets
        data["responses"] = [
            {"name": t.name, "topic_id": getattr(t, "topic_id", None), "partition_responses": [
                {"index": pd.index, "error_code": int(code), "base_offset": -1, "log_append_time": None,
                 "log_start_offset": -1, "record_errors": [], "error_message": message}
                for pd in t.partition_data]}
            for t in request.topic_data]
    elif api_key == _FIND_COORDINATOR:
        # FindCoordinatorResponse.prepareErrorResponse: each key asked (v4+) with no node
        no_node = {"node_id": -1, "host": "", "port": -1}
        if version >= 4:
            data["coordinators"] = [{"key": key, "error_code": int(code), "error_message": message, **no_node}
                                    for key in request.coordinator_keys]
        else:
            data.update(no_node)
    return build(cls, data)


_PRODUCE, _OFFSET_FETCH, _FIND_COORDINATOR = 0, 9, 10


def _error_data(cls: type, asked: dict, code: ErrorCode, message: str | None) -> dict:
    data: dict[str, Any] = {}
    for name, tp, _default, _conv in _fields(cls):
        tp = _unwrap(tp)
        if name.endswith("error_code"):
            data[name] = int(code)
        elif name.endswith("error_message"):
            data[name] = message
        elif typing.get_origin(tp) is tuple:
            item = _unwrap(typing.get_args(tp)[0])
            given = asked.get(name)
            if isinstance(item, type) and dataclasses.is_dataclass(item) and isinstance(given, list) \
                    and all(isinstance(x, dict) for x in given):
                data[name] = [_error_data(item, x, code, message) for x in given]
        elif name in asked and isinstance(asked[name], (str, int)) and not isinstance(asked[name], bool) \
                and isinstance(tp, type) and issubclass(tp, type(asked[name])) \
                and not (isinstance(asked[name], str) and _too_long(asked[name])):
            data[name] = asked[name]     # the names that say what the error is about (group id, partition)
    return data
