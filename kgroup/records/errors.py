"""Errors raised while decoding or encoding coordinator records."""
from __future__ import annotations


class RecordError(ValueError):
    """Base class: a record key or value that cannot be read or written."""


class UnknownRecordTypeError(RecordError):
    """The int16 key prefix is not a record type of the topic."""

    def __init__(self, record_type: int, topic: str = "__consumer_offsets") -> None:
        self.record_type = record_type
        self.topic = topic
        super().__init__(
            f"unknown {topic} record type {record_type} (key prefix 0x{record_type & 0xFFFF:04x})")


class UnsupportedVersionError(RecordError):
    """The value's int16 version prefix is not a version of the record type."""

    def __init__(self, record_name: str, version: int, supported: tuple[int, ...]) -> None:
        self.record_name = record_name
        self.version = version
        self.supported = supported
        known = ", ".join(map(str, supported))
        super().__init__(f"unsupported {record_name} value version {version} (known: {known})")


class RecordDecodeError(RecordError):
    """Truncated, malformed or over-long key/value bytes."""

    def __init__(self, message: str, *, part: str | None = None, position: int | None = None,
                 record_name: str | None = None) -> None:
        self.part = part              # "key" or "value"
        self.position = position      # byte offset in the key/value bytes (prefix included)
        self.record_name = record_name
        super().__init__(message)


class RecordEncodeError(RecordError):
    """A struct holds a value its schema cannot encode (wrong type, null, out of range)."""
