"""Coordinator records: one class per record type, and `decode_record`.

A record is a typed key plus a typed value (or None: a tombstone) and the value
version it was/will be written at:

    >>> rec = decode_record(key_bytes, value_bytes)
    >>> rec.NAME, rec.key.group, rec.value.offset, rec.version
    ('OffsetCommit', 'orders', 1042, 3)
    >>> rec.encode() == (key_bytes, value_bytes)
    True

Records are immutable tuples underneath, like the structs.
"""
from __future__ import annotations

import struct
from typing import Any, Callable, ClassVar

from . import definitions as defs
from .codec import DecodeFailure, EncodeFailure, get_decoder, get_encoder, get_renderer
from .errors import (RecordDecodeError, RecordEncodeError, UnknownRecordTypeError,
                     UnsupportedVersionError)
from .jsondoc import JsonDoc
from .schema import ZERO_UUID, RecordSchema
from .structs import StructBase, _tuplegetter, build_message_classes

CONSUMER_OFFSETS = defs.CONSUMER_OFFSETS
SHARE_GROUP_STATE = defs.SHARE_GROUP_STATE

RECORD_TYPES: dict[int, type["CoordinatorRecord"]] = {}
SHARE_STATE_RECORD_TYPES: dict[int, type["CoordinatorRecord"]] = {}
_TABLES = {CONSUMER_OFFSETS: RECORD_TYPES, SHARE_GROUP_STATE: SHARE_STATE_RECORD_TYPES}

# Decoded keys by key bytes, per topic. Keys repeat massively in __consumer_offsets
# (every commit of a partition has the same key) and are immutable, so one shared
# object per distinct key is safe. Cleared wholesale when full.
KEY_CACHE_LIMIT = 100_000
_KEY_CACHES: dict[str, dict[bytes, tuple]] = {CONSUMER_OFFSETS: {}, SHARE_GROUP_STATE: {}}

_tnew = tuple.__new__
_unpack_h = struct.Struct(">h").unpack_from


class CoordinatorRecord(tuple):
    """Base of the record classes. Subclasses set everything from their `schema=`."""

    __slots__ = ()
    TYPE: ClassVar[int]                    # the int16 key prefix
    NAME: ClassVar[str]
    TOPIC: ClassVar[str]
    Key: ClassVar[type[StructBase]]
    Value: ClassVar[type[StructBase]]
    VALUE_VERSIONS: ClassVar[tuple[int, ...]]
    HIGHEST_VERSION: ClassVar[int]         # the highest value version kgroup knows
    #: KIP-915: values at the highest known version are flexible, so a newer version is read
    #: with that version's layout (its unknown tagged fields kept)
    FORWARD_COMPATIBLE: ClassVar[bool]
    DEFAULT_VERSION: ClassVar[int]         # the value version Kafka writes today
    #: value classes of earlier layouts of the same versions (`RecordSchema.earlier_values`): a
    #: record holding one re-encodes and renders in that layout
    EARLIER_VALUES: ClassVar[tuple[type[StructBase], ...]]
    SCHEMA: ClassVar[RecordSchema]
    _VALUE_DECODERS: ClassVar[dict[int, Callable]]

    key = _tuplegetter(0, "The key struct.")
    value = _tuplegetter(1, "The value struct, or None for a tombstone.")
    version = _tuplegetter(2, "The value version, or None for a tombstone.")

    def __init_subclass__(cls, schema: RecordSchema | None = None, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        if schema is None:
            return
        cls.SCHEMA = schema
        cls.TYPE = schema.type
        cls.NAME = schema.name
        cls.TOPIC = schema.topic
        cls.Key = build_message_classes(schema.key)
        cls.Value = build_message_classes(schema.value)
        cls.EARLIER_VALUES = tuple(build_message_classes(m) for m in schema.earlier_values)
        cls.VALUE_VERSIONS = schema.value.version_list
        cls.HIGHEST_VERSION = schema.value.version_list[-1]
        cls.FORWARD_COMPATIBLE = schema.value.is_flexible(cls.HIGHEST_VERSION)
        cls.DEFAULT_VERSION = schema.default_version
        cls._VALUE_DECODERS = {}
        cls._KEY_DECODER = staticmethod(get_decoder(schema.key, 0, False, True))
        cls._KEY_ENCODER = staticmethod(get_encoder(schema.key, 0, False, True, prefix=schema.type))
        table = _TABLES[schema.topic]
        if schema.type in table:
            raise ValueError(f"record type {schema.type} defined twice for {schema.topic}")
        table[schema.type] = cls

    def __new__(cls, key: StructBase, value: StructBase | None, version: int | None = None):
        if not hasattr(cls, "SCHEMA"):
            raise TypeError("CoordinatorRecord is abstract; use a record class such as OffsetCommit")
        if key.__class__ is not cls.Key:
            raise TypeError(f"{cls.NAME} key must be a {cls.Key.__name__}, not {type(key).__name__}")
        if value is None:
            if version is not None:
                raise ValueError(f"a {cls.NAME} tombstone has no value version (got {version})")
        else:
            if value.__class__ is not cls.Value and value.__class__ not in cls.EARLIER_VALUES:
                raise TypeError(f"{cls.NAME} value must be a {cls.Value.__name__}, "
                                f"not {type(value).__name__}")
            if version is None:
                version = cls._version_for(value)
            elif version not in cls.VALUE_VERSIONS:
                cls.layout_version(version)  # raises unless a newer version of a flexible value
        return _tnew(cls, (key, value, version))

    @classmethod
    def layout_version(cls, version: int) -> int:
        """The known value version whose layout reads (and writes) `version`.

        A known version reads as itself. A version above the highest known one reads as the
        highest known one when that is flexible (KIP-915: newer versions only add tagged fields,
        which are kept as unknown tagged fields), as Kafka's coordinator loader and its console
        formatters do. Anything else raises `UnsupportedVersionError`.
        """
        if version in cls.VALUE_VERSIONS:
            return version
        if version > cls.HIGHEST_VERSION and cls.FORWARD_COMPATIBLE:
            return cls.HIGHEST_VERSION
        raise UnsupportedVersionError(cls.NAME, version, cls.VALUE_VERSIONS)

    @classmethod
    def _version_for(cls, value: StructBase) -> int:
        return cls.DEFAULT_VERSION

    @classmethod
    def tombstone(cls, key: StructBase) -> "CoordinatorRecord":
        """The record that deletes `key` (null value)."""
        return cls(key, None)

    @property
    def is_tombstone(self) -> bool:
        return self[1] is None

    def replace(self, **changes: Any) -> "CoordinatorRecord":
        """A copy with `key`, `value` and/or `version` changed."""
        key = changes.pop("key", self[0])
        value = changes.pop("value", self[1])
        version = changes.pop("version", self[2] if value is not None else None)
        if changes:
            raise TypeError(f"unexpected fields {sorted(changes)}")
        return type(self)(key, value, version)

    # --- bytes

    def encode(self) -> tuple[bytes, bytes | None]:
        """(key bytes, value bytes or None), exactly as Kafka lays them out."""
        cls = type(self)
        key, value, version = self
        try:
            key_bytes = cls._KEY_ENCODER(key)
        except EncodeFailure as exc:
            raise RecordEncodeError(f"cannot encode {cls.NAME} key: {exc}") from None
        if value is None:
            return key_bytes, None
        try:
            return key_bytes, value_encoder(cls, version)(value)
        except EncodeFailure as exc:
            raise RecordEncodeError(f"cannot encode {cls.NAME} value v{version}: {exc}") from None

    # --- JSON

    def json_obj(self) -> dict[str, Any]:
        """The parsed form of `to_json()` (a fresh dict)."""
        cls = type(self)
        key, value, version = self
        out: dict[str, Any] = {"key": {"type": cls.TYPE, "data": key_renderer(cls)(key)}}
        if value is None:
            out["value"] = None
        else:
            out["value"] = {"version": version, "data": value_renderer(cls, version)(value)}
        return out

    def to_json(self) -> JsonDoc:
        """Kafka's console-formatter JSON (`CoordinatorRecordMessageFormatter`)."""
        return JsonDoc.dumps(self.json_obj())

    # --- object protocol

    def __eq__(self, other: object) -> bool:
        return other.__class__ is self.__class__ and tuple.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return hash((self.TYPE, *self))

    def __repr__(self) -> str:
        if self[1] is None:
            return f"{type(self).__name__}.tombstone({self[0]!r})"
        return f"{type(self).__name__}(key={self[0]!r}, value={self[1]!r}, version={self[2]!r})"

    def __reduce__(self) -> tuple:
        return (type(self), tuple(self))

    def __copy__(self) -> "CoordinatorRecord":
        return self


def value_decoder(cls: type[CoordinatorRecord], version: int) -> Callable:
    """``decode(value_bytes, key) -> record`` for one value version (compiled once); a version
    newer than kgroup knows reads with `layout_version`'s layout and keeps its own number."""
    dec = cls._VALUE_DECODERS.get(version)
    if dec is None:
        m = cls.SCHEMA.value
        layout = cls.layout_version(version)
        dec = get_decoder(m, layout, m.is_flexible(layout), True, wrap=cls)
        if layout != version:
            dec = _newer_version_decoder(cls, dec, version)
        earlier = [get_decoder(e, version, e.is_flexible(version), True, wrap=cls)
                   for e in cls.SCHEMA.earlier_values if version in e.valid]
        if earlier:
            dec = _either_layout_decoder(dec, earlier)
        cls._VALUE_DECODERS[version] = dec
    return dec


def _either_layout_decoder(dec: Callable, earlier: list[Callable]) -> Callable:
    """The current layout first; when it does not read the bytes exactly (a failure, trailing
    bytes), each earlier layout of that version in turn. No version number tells the layouts
    apart, so only the bytes can; if none reads them, the current layout's failure stands."""
    def decode(buf: bytes, key: StructBase) -> CoordinatorRecord:
        try:
            return dec(buf, key)
        except DecodeFailure as failure:
            for other in earlier:
                try:
                    return other(buf, key)
                except DecodeFailure:
                    pass
            raise failure from None
    return decode


def _newer_version_decoder(cls: type[CoordinatorRecord], dec: Callable, version: int) -> Callable:
    def decode(buf: bytes, key: StructBase) -> CoordinatorRecord:
        rec = dec(buf, key)
        return _tnew(cls, (rec[0], rec[1], version))
    return decode


def value_encoder(cls: type[CoordinatorRecord], version: int) -> Callable:
    """``encode(value) -> bytes`` at `version` (a newer one: its number, `layout_version`'s layout)."""
    m = cls.SCHEMA.value
    layout = cls.layout_version(version)
    enc = get_encoder(m, layout, m.is_flexible(layout), True, prefix=None if layout == version else version)
    if not cls.EARLIER_VALUES:
        return enc
    return _by_layout(cls, enc, lambda e: get_encoder(e, layout, e.is_flexible(layout), True))


def value_renderer(cls: type[CoordinatorRecord], version: int) -> Callable:
    """The value's JSON renderer at `version` (a newer one renders the fields kgroup knows, as
    Kafka's converters do; unknown tagged fields are never printed)."""
    m = cls.SCHEMA.value
    layout = cls.layout_version(version)
    render = get_renderer(m, layout, m.is_flexible(layout))
    if not cls.EARLIER_VALUES:
        return render
    return _by_layout(cls, render, lambda e: get_renderer(e, layout, e.is_flexible(layout)))


def _by_layout(cls: type[CoordinatorRecord], current: Callable, compile_: Callable) -> Callable:
    """`current` for a value of the current layout, `compile_(message)` for one of an earlier layout."""
    others = {e.cls: compile_(e) for e in cls.SCHEMA.earlier_values}

    def dispatch(value: StructBase) -> Any:
        return others.get(value.__class__, current)(value)
    return dispatch


def key_renderer(cls: type[CoordinatorRecord]) -> Callable:
    return get_renderer(cls.SCHEMA.key, 0, False)


# --------------------------------------------------------------------------- decoding


def decode_record(key: bytes, value: bytes | None, *,
                  topic: str = CONSUMER_OFFSETS) -> CoordinatorRecord:
    """Decode one `__consumer_offsets` (or `__share_group_state`) record.

    `value=None` gives a tombstone. A value version newer than kgroup knows is read with the
    highest known layout when that is flexible (KIP-915, see `CoordinatorRecord.layout_version`):
    the record keeps its version, unknown tagged fields are kept. Raises
    `UnknownRecordTypeError`, `UnsupportedVersionError` or `RecordDecodeError` (all `RecordError`).
    """
    try:
        cls, k, decoders = _KEY_CACHES[topic][key]
    except (KeyError, TypeError):
        cls, k, decoders = _decode_key(key, topic)
    if value.__class__ is not bytes:
        if value is None:
            return _tnew(cls, (k, None, None))
        value = bytes(value)  # bytearray/memoryview: decoded bytes fields must be bytes
    try:
        return decoders[value[0] << 8 | value[1]](value, k)
    except Exception:
        # anything unusual (first use of a version, bytearray input, bad data):
        # redo it carefully and raise the proper error
        return _decode_value_slow(cls, k, value)


def _decode_key(key: Any, topic: str) -> tuple:
    table = _TABLES.get(topic)
    if table is None:
        raise ValueError(f"unknown coordinator topic {topic!r}; "
                         f"expected {CONSUMER_OFFSETS!r} or {SHARE_GROUP_STATE!r}")
    if key is None:
        raise RecordDecodeError(f"{topic} record without a key", part="key", position=0)
    if key.__class__ is not bytes:
        key = bytes(key)
    if len(key) < 2:
        raise RecordDecodeError(f"{topic} record key is {len(key)} bytes, too short for "
                                f"the int16 record type (key)", part="key", position=0)
    (record_type,) = _unpack_h(key)
    cls = table.get(record_type)
    if cls is None:
        raise UnknownRecordTypeError(record_type, topic)
    try:
        k = cls._KEY_DECODER(key)
    except DecodeFailure as f:
        raise RecordDecodeError(
            f"cannot decode {cls.NAME} key at byte {f.pos} of {len(key)}: {f.reason}",
            part="key", position=f.pos, record_name=cls.NAME) from None
    cache = _KEY_CACHES[topic]
    if len(cache) >= KEY_CACHE_LIMIT:
        cache.clear()
    entry = cache[key] = (cls, k, cls._VALUE_DECODERS)
    return entry


def _decode_value_slow(cls: type[CoordinatorRecord], k: StructBase, value: Any) -> CoordinatorRecord:
    if value.__class__ is not bytes:
        value = bytes(value)
    if len(value) < 2:
        raise RecordDecodeError(
            f"{cls.NAME} value is {len(value)} bytes, too short for the int16 version (value)",
            part="value", position=0, record_name=cls.NAME)
    (version,) = _unpack_h(value)
    layout = cls.layout_version(version)  # raises UnsupportedVersionError
    try:
        return value_decoder(cls, version)(value, k)
    except DecodeFailure as f:
        read_as = "" if layout == version else f" (read as v{layout}, KIP-915)"
        raise RecordDecodeError(
            f"cannot decode {cls.NAME} value v{version}{read_as} at byte {f.pos} of {len(value)}: {f.reason}",
            part="value", position=f.pos, record_name=cls.NAME) from None


def record_type_name(record_type: int, topic: str = CONSUMER_OFFSETS) -> str:
    """'OffsetCommit' for 1, ...; 'unknown(42)' for a prefix the topic does not define."""
    cls = _TABLES.get(topic, {}).get(record_type)
    return cls.NAME if cls is not None else f"unknown({record_type})"


def clear_key_cache() -> None:
    """Forget the decoded keys (tests, memory)."""
    for cache in _KEY_CACHES.values():
        cache.clear()


# --------------------------------------------------------------------------- record types


class LegacyOffsetCommit(CoordinatorRecord, schema=defs.LEGACY_OFFSET_COMMIT):
    """A committed offset written by a 0.8.2 broker (newer coordinators read it as an OffsetCommit)."""


class OffsetCommit(CoordinatorRecord, schema=defs.OFFSET_COMMIT):
    """A group's committed offset for one partition."""

    @classmethod
    def _version_for(cls, value: StructBase) -> int:
        # Like the broker: v1 is the only version that can carry an expire timestamp,
        # v4 the only one with a topic id; otherwise v3.
        if value.expire_timestamp != -1:
            return 1
        if value.topic_id != ZERO_UUID:
            return 4
        return cls.DEFAULT_VERSION


class GroupMetadata(CoordinatorRecord, schema=defs.GROUP_METADATA):
    """A classic group: protocol, generation, leader and members."""


class ConsumerGroupMetadata(CoordinatorRecord, schema=defs.CONSUMER_GROUP_METADATA):
    """A consumer group (KIP-848): group epoch and metadata hash."""


class ConsumerGroupPartitionMetadata(CoordinatorRecord, schema=defs.CONSUMER_GROUP_PARTITION_METADATA):
    """Subscribed topics' metadata of a consumer group (deprecated after 4.0)."""


class ConsumerGroupMemberMetadata(CoordinatorRecord, schema=defs.CONSUMER_GROUP_MEMBER_METADATA):
    """A consumer group member: client, subscription, assignor."""


class ConsumerGroupTargetAssignmentMetadata(CoordinatorRecord,
                                            schema=defs.CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA):
    """The epoch of a consumer group's target assignment."""


class ConsumerGroupTargetAssignmentMember(CoordinatorRecord,
                                          schema=defs.CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER):
    """One member's target assignment in a consumer group."""


class ConsumerGroupCurrentMemberAssignment(CoordinatorRecord,
                                           schema=defs.CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT):
    """One member's current assignment, epochs and state in a consumer group."""


class ShareGroupPartitionMetadata(CoordinatorRecord, schema=defs.SHARE_GROUP_PARTITION_METADATA):
    """Subscribed topics' metadata of a share group (obsolete)."""


class ShareGroupMemberMetadata(CoordinatorRecord, schema=defs.SHARE_GROUP_MEMBER_METADATA):
    """A share group member (KIP-932)."""


class ShareGroupMetadata(CoordinatorRecord, schema=defs.SHARE_GROUP_METADATA):
    """A share group: group epoch and metadata hash."""


class ShareGroupTargetAssignmentMetadata(CoordinatorRecord,
                                         schema=defs.SHARE_GROUP_TARGET_ASSIGNMENT_METADATA):
    """The epoch of a share group's target assignment."""


class ShareGroupTargetAssignmentMember(CoordinatorRecord,
                                       schema=defs.SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER):
    """One member's target assignment in a share group."""


class ShareGroupCurrentMemberAssignment(CoordinatorRecord,
                                        schema=defs.SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT):
    """One member's current assignment in a share group."""


class ShareGroupStatePartitionMetadata(CoordinatorRecord,
                                       schema=defs.SHARE_GROUP_STATE_PARTITION_METADATA):
    """Which topic-partitions have share-group state initializing, initialized or being deleted."""


class ConsumerGroupRegularExpression(CoordinatorRecord, schema=defs.CONSUMER_GROUP_REGULAR_EXPRESSION):
    """The topics a consumer group's subscription regex resolved to."""


class StreamsGroupMetadata(CoordinatorRecord, schema=defs.STREAMS_GROUP_METADATA):
    """A streams group (KIP-1071): epoch, metadata hash, the last assignment configs.

    Its value is a `StreamsGroupMetadataValue` (Kafka 4.2+: the configs in tagged
    `last_assignment_configs`, None when not kept) or, read from a 4.1-era log, a
    `StreamsGroupMetadataValue41` (untagged `assignment_configs`); `assignment_configs()` reads either.
    """

    def assignment_configs(self) -> dict[str, str] | None:
        """The configs the record keeps as a dict; None when it keeps none (Kafka: the defaults)."""
        value = self[1]
        if value is None:
            return None
        kvs = value.assignment_configs if value.__class__ is not self.Value else value.last_assignment_configs
        return None if kvs is None else {kv.key: kv.value for kv in kvs}


class StreamsGroupPartitionMetadata(CoordinatorRecord, schema=defs.STREAMS_GROUP_PARTITION_METADATA):
    """Subscribed topics' metadata of a streams group (obsolete)."""


class StreamsGroupMemberMetadata(CoordinatorRecord, schema=defs.STREAMS_GROUP_MEMBER_METADATA):
    """A streams group member: client, topology epoch, process, endpoint."""


class StreamsGroupTargetAssignmentMetadata(CoordinatorRecord,
                                           schema=defs.STREAMS_GROUP_TARGET_ASSIGNMENT_METADATA):
    """The epoch of a streams group's target assignment."""


class StreamsGroupTargetAssignmentMember(CoordinatorRecord,
                                         schema=defs.STREAMS_GROUP_TARGET_ASSIGNMENT_MEMBER):
    """One member's target task assignment in a streams group."""


class StreamsGroupCurrentMemberAssignment(CoordinatorRecord,
                                          schema=defs.STREAMS_GROUP_CURRENT_MEMBER_ASSIGNMENT):
    """One member's current tasks, epochs and state in a streams group."""


class StreamsGroupTopology(CoordinatorRecord, schema=defs.STREAMS_GROUP_TOPOLOGY):
    """A streams group's topology: subtopologies and their topics."""


class StreamsGroupTargetAssignmentResolvedTopicIds(
        CoordinatorRecord, schema=defs.STREAMS_GROUP_TARGET_ASSIGNMENT_RESOLVED_TOPIC_IDS):
    """Topic ids resolved per subtopology for a target assignment (provenance uncertain)."""


class ShareSnapshot(CoordinatorRecord, schema=defs.SHARE_SNAPSHOT):
    """`__share_group_state`: the complete durable state of one share-partition."""


class ShareUpdate(CoordinatorRecord, schema=defs.SHARE_UPDATE):
    """`__share_group_state`: a delta on top of the snapshot with the same snapshot epoch."""


# Precompile the hot paths so the first records decode at full speed.
for _cls in (*RECORD_TYPES.values(), *SHARE_STATE_RECORD_TYPES.values()):
    value_decoder(_cls, _cls.DEFAULT_VERSION)
del _cls
