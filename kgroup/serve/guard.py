"""A pre-flight walk of a request frame before kio's native reader sees it.

kio's reader (Rust) reserves an array's whole declared size up front: a hostile count such as
0x7ffffffe asks for hundreds of gigabytes and aborts the process, which no `except` can catch.
Kafka's own readers refuse such a frame ("Tried to allocate a collection of size N, but there
are only M bytes remaining"); this walk applies the same rule, to every array count and every
string or bytes length, using kio's schema classes. It only checks sizes: kio still decodes.
It reads the schemas with kio's own field introspection (`kio.serial._introspect`, private: kio
is pinned below 0.7; tests/serve/test_serve_guard.py walks every served version against kio).
"""
from __future__ import annotations

import dataclasses
import functools
import struct
from typing import Any

from kio.serial._introspect import (EntityField, EntityTupleField, PrimitiveTupleField,
                                    classify_field, get_field_tag, get_schema_field_type, is_optional)

_FIXED = {"int8": 1, "uint8": 1, "bool": 1, "int16": 2, "uint16": 2, "error_code": 2, "int32": 4, "uint32": 4,
          "timedelta_i32": 4, "int64": 8, "uint64": 8, "float64": 8, "timedelta_i64": 8, "datetime_i64": 8,
          "uuid": 16}
_I16, _I32 = struct.Struct(">h"), struct.Struct(">i")


class OversizedField(ValueError):
    """A declared length or count larger than what is left of the frame."""


def _uvarint(buf: bytes, pos: int, end: int) -> tuple[int, int]:
    value = shift = 0
    for i in range(5):
        if pos >= end:
            raise OversizedField("truncated varint")
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, pos
        shift += 7
    raise OversizedField("varint longer than 5 bytes")


def _need(n: int, pos: int, end: int, what: str) -> int:
    if n < 0 or n > end - pos:
        raise OversizedField(f"{what} of {n} with only {end - pos} bytes remaining")
    return pos + n


def _length(buf: bytes, pos: int, end: int, flexible: bool, wide: bool) -> tuple[int, int]:
    """A string/bytes/array length: -1 for null."""
    if flexible:
        n, pos = _uvarint(buf, pos, end)
        return n - 1, pos
    fmt = _I32 if wide else _I16
    _need(fmt.size, pos, end, "length")
    return fmt.unpack_from(buf, pos)[0], pos + fmt.size


def _primitive(kafka_type: str, flexible: bool) -> Any:
    if kafka_type in _FIXED:
        size = _FIXED[kafka_type]
        return lambda buf, pos, end: _need(size, pos, end, kafka_type)
    if kafka_type not in ("string", "bytes", "records"):
        raise TypeError(f"no size rule for {kafka_type}")
    wide = kafka_type != "string"

    def step(buf: bytes, pos: int, end: int) -> int:
        n, pos = _length(buf, pos, end, flexible, wide)
        return pos if n == -1 else _need(n, pos, end, kafka_type)
    return step


def _array(item: Any, flexible: bool) -> Any:
    def step(buf: bytes, pos: int, end: int) -> int:
        n, pos = _length(buf, pos, end, flexible, True)
        if n == -1:
            return pos
        _need(n, pos, end, "array")  # every item takes at least a byte
        for _ in range(n):
            pos = item(buf, pos, end)
        return pos
    return step


def _field_step(field: dataclasses.Field, flexible: bool, tagged: bool, header: bool) -> Any:
    if header and field.name == "client_id":  # always a legacy string (RequestHeader.json)
        return _primitive("string", False)
    kind = classify_field(field)
    if isinstance(kind, (EntityField, EntityTupleField)):
        inner = walker(kind.type_)
        if isinstance(kind, EntityField) and not tagged and is_optional(field):
            def nullable(buf: bytes, pos: int, end: int, inner: Any = inner) -> int:
                _need(1, pos, end, "null marker")
                return pos + 1 if buf[pos] == 0xFF else inner(buf, pos + 1, end)
            one = nullable
        else:
            one = inner
        return _array(one, flexible) if isinstance(kind, EntityTupleField) else one
    step = _primitive(get_schema_field_type(field), flexible)
    return _array(step, flexible) if isinstance(kind, PrimitiveTupleField) else step


@functools.cache
def walker(cls: type) -> Any:
    """`walk(buf, pos, end) -> pos` for one kio entity class; OversizedField on a bad size."""
    flexible = cls.__flexible__
    header = cls.__name__ == "RequestHeader"
    regular, tagged = [], {}
    for field in dataclasses.fields(cls):
        tag = get_field_tag(field)
        if tag is None:
            regular.append(_field_step(field, flexible, False, header))
        else:
            tagged[int(tag)] = _field_step(field, flexible, True, header)

    def walk(buf: bytes, pos: int, end: int) -> int:
        for step in regular:
            pos = step(buf, pos, end)
        if flexible:
            count, pos = _uvarint(buf, pos, end)
            _need(count, pos, end, "tagged field count")
            for _ in range(count):
                tag, pos = _uvarint(buf, pos, end)
                size, pos = _uvarint(buf, pos, end)
                stop = _need(size, pos, end, "tagged field")
                if tag in tagged:
                    tagged[tag](buf, pos, stop)
                pos = stop
        return pos
    return walk


def check_sizes(frame: bytes, request_cls: type) -> None:
    """Raise OversizedField when a length in the header or body exceeds the frame."""
    pos = walker(request_cls.__header_schema__)(frame, 0, len(frame))
    walker(request_cls)(frame, pos, len(frame))
