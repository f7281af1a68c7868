"""The value types of the log layer: records, batches, control markers and corruption reports.

They live in their own module so that the magic-2 reader (`batch`) and the magic 0/1 reader
(`legacy`) can share them without importing each other.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from enum import IntEnum
from typing import NamedTuple

from .compression import Compression

__all__ = ["TimestampType", "ControlType", "ControlMarker", "LogRecord", "RecordBatch", "CorruptBatch",
           "CorruptBatchError", "NO_PRODUCER_ID", "NO_PRODUCER_EPOCH", "NO_SEQUENCE", "NO_TIMESTAMP",
           "NO_PARTITION_LEADER_EPOCH"]

NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
NO_SEQUENCE = -1
NO_TIMESTAMP = -1
NO_PARTITION_LEADER_EPOCH = -1

# Attribute bits of a magic-2 batch (bits 0-2 are the codec).
ATTR_COMPRESSION_MASK = 0x07
ATTR_TIMESTAMP_TYPE = 0x08
ATTR_TRANSACTIONAL = 0x10
ATTR_CONTROL = 0x20
ATTR_DELETE_HORIZON = 0x40


class TimestampType(IntEnum):
    """Kafka's `TimestampType`; magic-0 messages have no timestamp at all."""

    NO_TIMESTAMP_TYPE = -1
    CREATE_TIME = 0
    LOG_APPEND_TIME = 1

    @property
    def label(self) -> str:
        """The name Kafka's tools print (`CreateTime`, `LogAppendTime`, `NoTimestampType`)."""
        return {-1: "NoTimestampType", 0: "CreateTime", 1: "LogAppendTime"}[self.value]


class ControlType(IntEnum):
    """Type of a control record (`ControlRecordType`); only ABORT/COMMIT occur in __consumer_offsets."""

    ABORT = 0
    COMMIT = 1
    LEADER_CHANGE = 2
    SNAPSHOT_HEADER = 3
    SNAPSHOT_FOOTER = 4
    KRAFT_VERSION = 5
    KRAFT_VOTERS = 6


_CONTROL_KEY = struct.Struct(">hh")
_MARKER_VALUE = struct.Struct(">hi")


class ControlMarker(NamedTuple):
    """The content of a control record.

    `type` is a `ControlType` (a plain int for a type this code does not know);
    `coordinator_epoch` is set for ABORT/COMMIT transaction markers and None otherwise.
    """

    type: ControlType | int
    coordinator_epoch: int | None = None
    version: int = 0

    @property
    def is_commit(self) -> bool:
        return self.type == ControlType.COMMIT

    @property
    def is_abort(self) -> bool:
        return self.type == ControlType.ABORT

    @classmethod
    def from_record(cls, key: bytes | None, value: bytes | None) -> ControlMarker:
        """Decode a control record's key (`int16 version | int16 type`) and, for markers, its value."""
        if key is None or len(key) < 4:
            raise ValueError(f"control record key must be at least 4 bytes, got {None if key is None else len(key)}")
        _key_version, raw_type = _CONTROL_KEY.unpack_from(key)
        try:
            ctype: ControlType | int = ControlType(raw_type)
        except ValueError:
            ctype = raw_type
        if ctype in (ControlType.ABORT, ControlType.COMMIT):
            if value is None or len(value) < 6:
                raise ValueError("transaction marker value must be at least 6 bytes "
                                 "(int16 version, int32 coordinatorEpoch)")
            version, epoch = _MARKER_VALUE.unpack_from(value)
            return cls(ctype, epoch, version)
        return cls(ctype, None, _key_version)


class LogRecord(NamedTuple):
    """One record of a batch, with absolute offset and timestamp resolved."""

    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...] = ()


@dataclass(slots=True)
class RecordBatch:
    """A decoded batch: every header field as stored, the decoded records and where it was read.

    Magic 0/1 message-set entries are presented with the same shape: one top-level message
    (plain or compressed wrapper) is one batch; `crc` is its CRC-32, `batch_length` its
    message size, `partition_leader_epoch`/producer fields are -1, `base_offset` is the offset of
    the first inner message and `last_offset_delta` reaches the wrapper's (last) offset.
    """

    base_offset: int
    batch_length: int
    partition_leader_epoch: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    records: tuple[LogRecord, ...]
    record_count: int = -1
    position: int = 0
    size: int = 0
    source: str | None = None

    # ---- derived header properties -------------------------------------------------------
    @property
    def compression(self) -> Compression:
        return Compression(self.attributes & ATTR_COMPRESSION_MASK)

    @property
    def timestamp_type(self) -> TimestampType:
        if self.magic == 0:
            return TimestampType.NO_TIMESTAMP_TYPE
        return TimestampType.LOG_APPEND_TIME if self.attributes & ATTR_TIMESTAMP_TYPE else TimestampType.CREATE_TIME

    @property
    def is_transactional(self) -> bool:
        return self.magic >= 2 and bool(self.attributes & ATTR_TRANSACTIONAL)

    @property
    def is_control(self) -> bool:
        return self.magic >= 2 and bool(self.attributes & ATTR_CONTROL)

    @property
    def has_delete_horizon(self) -> bool:
        return self.magic >= 2 and bool(self.attributes & ATTR_DELETE_HORIZON)

    @property
    def delete_horizon_ms(self) -> int | None:
        """The log cleaner's delete horizon (stored in baseTimestamp), or None when not set."""
        return self.base_timestamp if self.has_delete_horizon else None

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def next_offset(self) -> int:
        return self.last_offset + 1

    @property
    def has_producer_id(self) -> bool:
        return self.producer_id > NO_PRODUCER_ID

    @property
    def last_sequence(self) -> int:
        """Sequence of the last record, with Kafka's int32 wrap-around; -1 when there is none."""
        if self.base_sequence == NO_SEQUENCE:
            return NO_SEQUENCE
        return (self.base_sequence + self.last_offset_delta) & 0x7FFFFFFF

    @property
    def control_marker(self) -> ControlMarker | None:
        """The control record of a control batch (e.g. a COMMIT/ABORT marker), else None."""
        if not self.is_control or not self.records:
            return None
        first = self.records[0]
        return ControlMarker.from_record(first.key, first.value)

    @property
    def end_position(self) -> int:
        return self.position + self.size

    def __iter__(self):
        return iter(self.records)


@dataclass(frozen=True, slots=True)
class CorruptBatch:
    """A byte range that is not a valid batch, reported instead of raised.

    `position` is where the bad range starts (absolute, including the reader's base position)
    and `length` how many bytes it covers; the reader resumes right after it.
    """

    source: str | None
    position: int
    reason: str
    length: int = 0

    @property
    def end_position(self) -> int:
        return self.position + self.length

    def __str__(self) -> str:
        where = f" in {self.source}" if self.source else ""
        return f"corrupt batch{where} at byte {self.position}: {self.reason}"


class CorruptBatchError(ValueError):
    """Raised (instead of yielding a `CorruptBatch`) by strict readers."""

    def __init__(self, corrupt: CorruptBatch):
        super().__init__(str(corrupt))
        self.corrupt = corrupt


class BadBatch(Exception):
    """Internal: why the batch at a position could not be read.

    `kind` tells the reader how far it may trust the length field:
    "header" - not at all (bad magic/length, truncated); "crc" - plausibly (checksum
    mismatch); "body" - fully (checksum fine but the records inside are invalid).
    """

    def __init__(self, kind: str, reason: str, size: int = 0):
        super().__init__(reason)
        self.kind = kind
        self.reason = reason
        self.size = size
