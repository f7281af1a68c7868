"""Kafka's wire framing over kio: size-prefixed frames, request and response headers.

A request frame is `int32 size | header | body`; the header's version follows from the API
and its version (v1 for non-flexible versions, v2 for flexible ones; kio names it as each
class's `__header_schema__`), and so does the response header's (v0/v1; ApiVersions always
answers with v0 so that any client can read the error of a version it asked too high).
Request header v0 (no client id) belongs to ControlledShutdown v0 only, which kio does not
have and this server does not serve.
"""
from __future__ import annotations

import functools
import io
import struct
from dataclasses import dataclass
from typing import Any

from kio.serial import entity_reader, entity_writer

from kgroup.protocol import _request_schema, response_class
from kgroup.serve.guard import check_sizes

#: Kafka's socket.request.max.bytes default: bigger frames close the connection
MAX_REQUEST_BYTES = 100 * 1024 * 1024
_SIZE = struct.Struct(">i")
#: api key, api version, correlation id: the part of every request header that never changes
_HEADER_START = struct.Struct(">hhi")


class FrameError(Exception):
    """A frame the server cannot read; Kafka closes the connection on these."""


@dataclass(frozen=True)
class RequestFrame:
    """One decoded request: its header fields and the kio request body."""

    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None
    body: Any


def frame_size(prefix: bytes, max_bytes: int = MAX_REQUEST_BYTES) -> int:
    """The size a 4-byte prefix announces; FrameError when Kafka would refuse it."""
    (size,) = _SIZE.unpack(prefix)
    if size < _HEADER_START.size or size > max_bytes:
        raise FrameError(f"invalid request size {size} (allowed: {_HEADER_START.size}..{max_bytes})")
    return size


def peek_header(frame: bytes) -> tuple[int, int, int]:
    """(api key, api version, correlation id) of a frame, before knowing its header version."""
    return _HEADER_START.unpack_from(frame, 0)


@functools.cache
def _reader(cls: type) -> Any:
    return entity_reader(cls)


@functools.cache
def _writer(cls: type) -> Any:
    return entity_writer(cls)


def request_class(api_key: int, api_version: int) -> type | None:
    """kio's request class for the API version, or None when kio has none."""
    try:
        return _request_schema(api_key, api_version)
    except Exception:  # kio's UnknownAPIKey / UnknownEntity
        return None


def decode_request(frame: bytes, cls: type) -> RequestFrame:
    """Header and body of a request frame whose class is known; FrameError when malformed."""
    try:
        check_sizes(frame, cls)  # before kio's native reader, which aborts on absurd counts
        header, used = _reader(cls.__header_schema__)(frame, 0)
        body, _ = _reader(cls)(frame, used)
    except Exception as exc:  # kio raises BufferUnderflow, ValueError, UnicodeDecodeError, ...
        raise FrameError(f"cannot read {cls.__name__}: {type(exc).__name__}: {exc}") from None
    # Kafka's parser ignores bytes after the body; so does this one
    return RequestFrame(int(header.request_api_key), int(header.request_api_version),
                        int(header.correlation_id), header.client_id, body)


def encode_response(correlation_id: int, response: Any) -> bytes:
    """A whole response frame (size prefix included) for a kio response object."""
    cls = type(response)
    buf = io.BytesIO()
    buf.write(b"\0\0\0\0")
    header_cls = cls.__header_schema__
    _writer(header_cls)(buf, header_cls(correlation_id=correlation_id))
    _writer(cls)(buf, response)
    data = buf.getbuffer()
    _SIZE.pack_into(data, 0, len(data) - 4)
    return bytes(data)


def encode_request(correlation_id: int, request: Any, client_id: str | None = "kgroup") -> bytes:
    """A whole request frame for a kio request (what a client sends; for tests and tools)."""
    cls = type(request)
    header_cls = cls.__header_schema__
    buf = io.BytesIO()
    buf.write(b"\0\0\0\0")
    _writer(header_cls)(buf, header_cls(request_api_key=cls.__api_key__, request_api_version=cls.__version__,
                                        correlation_id=correlation_id, client_id=client_id))
    _writer(cls)(buf, request)
    data = buf.getbuffer()
    _SIZE.pack_into(data, 0, len(data) - 4)
    return bytes(data)


def decode_response(frame: bytes, cls: type) -> tuple[int, Any]:
    """(correlation id, kio response) of a response frame without its size prefix."""
    header, used = _reader(cls.__header_schema__)(frame, 0)
    body, _ = _reader(cls)(frame, used)
    return int(header.correlation_id), body
