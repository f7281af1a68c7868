"""The size guard walks every request kgroup serve accepts exactly as kio lays it out: a fully
populated request of every served API and version (every array with items, every optional and
tagged field set) passes the guard and decodes; a count blown up in any of them is refused
before kio's native reader (which would abort the process) sees it."""
from __future__ import annotations

import dataclasses
import datetime
import struct
import types
import typing
import uuid

import pytest

from kgroup.errors import ErrorCode
from kgroup.protocol import _request_schema, api_name
from kgroup.serve.framing import FrameError, decode_request, encode_request
from kgroup.serve.guard import OversizedField, check_sizes
from kgroup.serve.server import _served_apis


def _value(tp: typing.Any, depth: int) -> typing.Any:
    origin = typing.get_origin(tp)
    if origin in (types.UnionType, typing.Union):
        return _value(next(a for a in typing.get_args(tp) if a is not type(None)), depth)
    if origin is tuple:
        item = typing.get_args(tp)[0]
        return tuple(_value(item, depth) for _ in range(2))
    if dataclasses.is_dataclass(tp):
        return _sample(tp, depth + 1)
    if tp is ErrorCode:
        return ErrorCode.unknown_server_error
    if tp is uuid.UUID:
        return uuid.UUID(int=7)
    if isinstance(tp, type) and issubclass(tp, bool):
        return True
    if isinstance(tp, type) and issubclass(tp, datetime.timedelta):
        return tp.parse(datetime.timedelta(milliseconds=5))
    if isinstance(tp, type) and issubclass(tp, datetime.datetime):
        return tp.parse(datetime.datetime(2024, 6, 10, tzinfo=datetime.timezone.utc))
    if isinstance(tp, type) and issubclass(tp, bytes):
        return tp(b"xy") if tp is not bytes else b"xy"
    if isinstance(tp, type) and issubclass(tp, str):
        return tp("ab") if tp is not str else "ab"
    if isinstance(tp, type) and issubclass(tp, float):
        return tp(1.5)
    if isinstance(tp, type) and issubclass(tp, int):
        return tp(3)
    raise TypeError(tp)


def _sample(cls: type, depth: int = 0) -> typing.Any:
    hints = typing.get_type_hints(cls)
    return cls(**{f.name: _value(hints[f.name], depth) for f in dataclasses.fields(cls)})


CASES = [(k, v) for k, (lo, hi) in sorted(_served_apis().items()) for v in range(lo, hi + 1)]


@pytest.mark.parametrize(("api_key", "version"), CASES, ids=[f"{api_name(k)}-v{v}" for k, v in CASES])
def test_full_requests_pass_and_blown_counts_are_refused(api_key, version):
    cls = _request_schema(api_key, version)
    frame = encode_request(9, _sample(cls), client_id="guard")[4:]
    check_sizes(frame, cls)
    decoded = decode_request(frame, cls)
    assert decoded.body == _sample(cls) and decoded.correlation_id == 9
    # a huge legacy count (int32) or compact count (a 5-byte varint) written at every position
    # after the fixed header part: refused or read, never a crash
    huge_varint = bytes([0xFE, 0xFF, 0xFF, 0xFF, 0x07])
    for at in range(8, len(frame) - 3):
        for patch in (struct.pack(">i", 0x7FFFFFFE), huge_varint):
            _refused_or_read(frame[:at] + patch + frame[at + len(patch):], cls)


def _refused_or_read(bad: bytes, cls: type) -> None:
    try:
        check_sizes(bad, cls)
    except OversizedField:
        return
    try:
        decode_request(bad, cls)
    except FrameError:
        pass
