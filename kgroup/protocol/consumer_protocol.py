"""Kafka's embedded consumer protocol: the bytes a classic group carries for protocolType "consumer".

A JoinGroup member's protocol metadata is a ``ConsumerProtocolSubscription`` and a
SyncGroup assignment is a ``ConsumerProtocolAssignment``; both are an int16 version
followed by a *non-flexible* struct (no tagged fields, int32 array lengths, int16 string
lengths, int32 bytes lengths). ``GroupMetadataValue`` records keep those blobs verbatim.

    Subscription v0: Topics [string], UserData nullable bytes
                 v1: + OwnedPartitions [{Topic string, Partitions [int32]}]   (ignorable)
                 v2: + GenerationId int32, default -1                          (ignorable)
                 v3: + RackId nullable string, default null                    (ignorable)
    Assignment v0-3: AssignedPartitions [{Topic, Partitions [int32]}], UserData nullable bytes

Two readers, because Kafka has two:

* `decode_subscription` / `decode_assignment` follow ``ConsumerProtocol.deserialize*``: a
  negative version is an error, a version newer than 3 is read *as* v3 (newer versions
  may only append fields) and trailing bytes are ignored.
* `subscription_json` / `assignment_json` follow kafka-dump-log's ``OffsetsMessageParser``,
  which hands the raw header version to the generated reader and JSON converter. A
  too-new version then reads the v3 fields, but a nested TopicPartition refuses versions
  above 3, so such blobs only render when they carry no partitions.
"""
from __future__ import annotations

import base64
import binascii
import copy
import struct
from dataclasses import dataclass
from typing import Any, Iterable

from kgroup.javaorder import java_spread_hash

__all__ = ["ConsumerProtocolError", "Subscription", "Assignment", "HIGHEST_VERSION", "encode_subscription",
           "decode_subscription", "encode_assignment", "decode_assignment", "subscription_json", "assignment_json",
           "expand_group_metadata_json"]

#: Highest ConsumerProtocolSubscription / ConsumerProtocolAssignment version (Kafka 3.5+, KIP-881).
HIGHEST_VERSION = 3


class ConsumerProtocolError(ValueError):
    """Consumer-protocol bytes that cannot be read (or a value that cannot be written)."""


def _pairs(value: Iterable[Any], what: str) -> tuple[tuple[str, int], ...]:
    try:
        out = tuple(sorted((str(t), int(p)) for t, p in value))
    except (TypeError, ValueError):
        raise TypeError(f"{what} must be (topic, partition) pairs") from None
    return out


@dataclass(frozen=True)
class Subscription:
    """One member's subscription. `owned_partitions` is normalised to sorted pairs."""

    topics: tuple[str, ...]
    user_data: bytes | None = None
    owned_partitions: tuple[tuple[str, int], ...] = ()
    generation_id: int = -1
    rack_id: str | None = None

    def __post_init__(self) -> None:
        if isinstance(self.topics, str):
            raise TypeError("topics must be a sequence of topic names, not one string")
        object.__setattr__(self, "topics", tuple(self.topics))
        object.__setattr__(self, "owned_partitions", _pairs(self.owned_partitions, "owned_partitions"))
        if self.user_data is not None:
            object.__setattr__(self, "user_data", bytes(self.user_data))


@dataclass(frozen=True)
class Assignment:
    """One member's assignment. `partitions` is normalised to sorted pairs."""

    partitions: tuple[tuple[str, int], ...]
    user_data: bytes | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "partitions", _pairs(self.partitions, "partitions"))
        if self.user_data is not None:
            object.__setattr__(self, "user_data", bytes(self.user_data))


# --- Java HashMap iteration order ---------------------------------------------------------
#
# ConsumerProtocol.serialize* groups partitions with CollectionUtils.groupPartitionsByTopic,
# i.e. HashMap.computeIfAbsent per partition, then iterates the map. To be byte-exact we
# replay that: String.hashCode, HashMap's hash spreading, lazy resizes (computeIfAbsent
# resizes at the *start* of a call once size > threshold), and head-of-bin insertion.


def _java_hashmap_order(keys_in_call_order: Iterable[str]) -> list[str]:
    """Keys in the order a java.util.HashMap filled by computeIfAbsent iterates them.

    Exact unless 9+ keys share one bucket of a table of 64+ slots (Java then turns the
    bucket into a red-black tree whose iteration order this does not model)."""
    table: list[list[tuple[int, str]]] = []
    size = threshold = 0

    def resize() -> None:
        nonlocal table, threshold
        if not table:
            table, threshold = [[] for _ in range(16)], 12
            return
        old, n = table, len(table) * 2
        table, threshold = [[] for _ in range(n)], threshold * 2
        for bucket in old:                       # a split keeps each bucket's order
            for node in bucket:
                table[node[0] & (n - 1)].append(node)

    for key in keys_in_call_order:
        if size > threshold or not table:
            resize()
        h = java_spread_hash(key)
        bucket = table[h & (len(table) - 1)]
        if any(k == key for _, k in bucket):
            continue
        bin_count = len(bucket)
        bucket.insert(0, (h, key))               # computeIfAbsent links the new node first
        if bin_count >= 7 and len(table) < 64:   # treeifyBin on a small table just resizes
            resize()
        size += 1
    return [k for bucket in table for _, k in bucket]


def _group_by_topic(pairs: Iterable[tuple[str, int]]) -> list[tuple[str, list[int]]]:
    pairs = list(pairs)
    by_topic: dict[str, list[int]] = {}
    for topic, partition in pairs:
        by_topic.setdefault(topic, []).append(partition)
    return [(t, by_topic[t]) for t in _java_hashmap_order(t for t, _ in pairs)]


# --- writing ------------------------------------------------------------------------------


class _Writer:
    def __init__(self) -> None:
        self.parts: list[bytes] = []

    def int16(self, v: int) -> None:
        self.parts.append(struct.pack(">h", v))

    def int32(self, v: int) -> None:
        try:
            self.parts.append(struct.pack(">i", v))
        except struct.error:
            raise ConsumerProtocolError(f"{v} does not fit an int32") from None

    def string(self, s: str) -> None:
        try:
            b = s.encode("utf-8")
        except (UnicodeEncodeError, AttributeError):
            raise ConsumerProtocolError(f"cannot encode string {s!r} as UTF-8") from None
        if len(b) > 0x7FFF:
            raise ConsumerProtocolError(f"string of {len(b)} bytes is too long to be serialized")
        self.int16(len(b))
        self.parts.append(b)

    def nullable_string(self, s: str | None) -> None:
        if s is None:
            self.int16(-1)
        else:
            self.string(s)

    def nullable_bytes(self, b: bytes | None) -> None:
        if b is None:
            self.int32(-1)
        else:
            self.int32(len(b))
            self.parts.append(bytes(b))

    def topic_partitions(self, pairs: Iterable[tuple[str, int]]) -> None:
        grouped = _group_by_topic(pairs)
        self.int32(len(grouped))
        for topic, partitions in grouped:
            self.string(topic)
            self.int32(len(partitions))
            for p in partitions:
                self.int32(p)

    def bytes(self) -> bytes:
        return b"".join(self.parts)


def _write_version(version: int, what: str) -> int:
    if not isinstance(version, int) or isinstance(version, bool):
        raise TypeError(f"{what} version must be an int")
    if version < 0:
        raise ConsumerProtocolError(f"unsupported {what} version: {version}")
    # ConsumerProtocol.check*Version: a newer version is written as (and labelled) the highest.
    return min(version, HIGHEST_VERSION)


def encode_subscription(sub: Subscription, version: int = HIGHEST_VERSION) -> bytes:
    """Kafka's bytes for `sub` at `version` (fields newer than `version` are dropped:
    they are all ignorable). A version above 3 is written as 3, as Kafka does."""
    version = _write_version(version, "subscription")
    w = _Writer()
    w.int16(version)
    w.int32(len(sub.topics))
    for t in sub.topics:
        w.string(t)
    w.nullable_bytes(sub.user_data)
    if version >= 1:
        w.topic_partitions(sub.owned_partitions)
    if version >= 2:
        w.int32(sub.generation_id)
    if version >= 3:
        w.nullable_string(sub.rack_id)
    return w.bytes()


def encode_assignment(a: Assignment, version: int = HIGHEST_VERSION) -> bytes:
    """Kafka's bytes for `a` (the layout is the same in v0-3; only the header differs)."""
    version = _write_version(version, "assignment")
    w = _Writer()
    w.int16(version)
    w.topic_partitions(a.partitions)
    w.nullable_bytes(a.user_data)
    return w.bytes()


# --- reading ------------------------------------------------------------------------------


class _Reader:
    def __init__(self, data: bytes, what: str) -> None:
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"{what} must be bytes, not {type(data).__name__}")
        self.buf = bytes(data)
        self.pos = 0
        self.what = what

    def fail(self, msg: str, at: int | None = None) -> ConsumerProtocolError:
        return ConsumerProtocolError(
            f"{self.what}: {msg} at byte {self.pos if at is None else at} "
            f"(of {len(self.buf)})")

    def take(self, n: int, field: str) -> bytes:
        end = self.pos + n
        if end > len(self.buf):
            raise self.fail(f"{field} needs {n} bytes, only {len(self.buf) - self.pos} left")
        out = self.buf[self.pos:end]
        self.pos = end
        return out

    def int16(self, field: str) -> int:
        return struct.unpack(">h", self.take(2, field))[0]

    def int32(self, field: str) -> int:
        return struct.unpack(">i", self.take(4, field))[0]

    def string(self, field: str) -> str:
        at = self.pos
        n = self.int16(field + " length")
        if n < 0:
            raise self.fail(f"non-nullable {field} has length {n}", at)
        # Java's new String(bytes, UTF_8) replaces malformed input rather than failing.
        return self.take(n, field).decode("utf-8", "replace")

    def nullable_string(self, field: str) -> str | None:
        n = self.int16(field + " length")
        if n < 0:                                # the generated reader: any negative is null
            return None
        return self.take(n, field).decode("utf-8", "replace")

    def nullable_bytes(self, field: str) -> bytes | None:
        n = self.int32(field + " length")
        if n < 0:
            return None
        return self.take(n, field)

    def array_len(self, field: str) -> int:
        at = self.pos
        n = self.int32(field + " length")
        if n < 0:
            raise self.fail(f"non-nullable array {field} has length {n}", at)
        return n

    def version(self, what: str, clamp: bool) -> tuple[int, int]:
        """The header's version, and the version to read the rest as: with ``clamp`` a negative
        version is refused and one above `HIGHEST_VERSION` is read as it (ConsumerProtocol's
        deserializers); without, as it says."""
        version = self.int16("version")
        if not clamp:
            return version, version
        if version < 0:
            raise self.fail(f"unsupported {what} version: {version}", 0)
        return version, min(version, HIGHEST_VERSION)

    def topic_partitions(self, field: str, version: int) -> list[tuple[str, list[int]]]:
        out = []
        for _ in range(self.array_len(field)):
            if version > HIGHEST_VERSION:
                # The generated TopicPartition.read refuses versions it does not know.
                raise self.fail(f"can't read version {version} of TopicPartition")
            topic = self.string(field + " topic")
            partitions = [self.int32(field + " partition") for _ in range(self.array_len(field + " partitions"))]
            out.append((topic, partitions))
        return out


def _read_subscription(data: bytes, clamp: bool) -> tuple[dict[str, Any], int]:
    r = _Reader(data, "ConsumerProtocolSubscription")
    version, read_as = r.version("subscription", clamp)
    fields: dict[str, Any] = {}
    fields["topics"] = [r.string("topic") for _ in range(r.array_len("topics"))]
    fields["userData"] = r.nullable_bytes("userData")
    if read_as >= 1:
        fields["ownedPartitions"] = r.topic_partitions("ownedPartitions", read_as)
    if read_as >= 2:
        fields["generationId"] = r.int32("generationId")
    if read_as >= 3:
        fields["rackId"] = r.nullable_string("rackId")
    return fields, version


def _read_assignment(data: bytes, clamp: bool) -> tuple[dict[str, Any], int]:
    r = _Reader(data, "ConsumerProtocolAssignment")
    version, read_as = r.version("assignment", clamp)
    fields: dict[str, Any] = {}
    fields["assignedPartitions"] = r.topic_partitions("assignedPartitions", read_as)
    fields["userData"] = r.nullable_bytes("userData")
    return fields, version


def _flatten(grouped: list[tuple[str, list[int]]]) -> list[tuple[str, int]]:
    return [(t, p) for t, ps in grouped for p in ps]


def decode_subscription(data: bytes) -> tuple[Subscription, int]:
    """(subscription, header version). Versions above 3 are read as v3; trailing bytes are
    ignored (both as ConsumerProtocol.deserializeSubscription does)."""
    f, version = _read_subscription(data, clamp=True)
    return Subscription(
        topics=tuple(f["topics"]),
        user_data=f["userData"],
        owned_partitions=_flatten(f.get("ownedPartitions", [])),
        generation_id=f.get("generationId", -1),
        rack_id=f.get("rackId"),
    ), version


def decode_assignment(data: bytes) -> tuple[Assignment, int]:
    """(assignment, header version), read like ConsumerProtocol.deserializeAssignment."""
    f, version = _read_assignment(data, clamp=True)
    return Assignment(partitions=_flatten(f["assignedPartitions"]), user_data=f["userData"]), version


# --- JSON (ConsumerProtocol*JsonConverter.write) --------------------------------------------


def _b64(b: bytes | None) -> str | None:
    return None if b is None else base64.b64encode(b).decode("ascii")


def _tp_json(grouped: list[tuple[str, list[int]]]) -> list[dict[str, Any]]:
    return [{"topic": t, "partitions": list(ps)} for t, ps in grouped]


def subscription_json(data: bytes) -> dict:
    """What ConsumerProtocolSubscriptionJsonConverter.write(data, version) gives for the
    header version of `data`, read the way kafka-dump-log reads it (raw version)."""
    f, _ = _read_subscription(data, clamp=False)
    out: dict[str, Any] = {"topics": f["topics"], "userData": _b64(f["userData"])}
    if "ownedPartitions" in f:
        out["ownedPartitions"] = _tp_json(f["ownedPartitions"])
    if "generationId" in f:
        out["generationId"] = f["generationId"]
    if "rackId" in f:
        out["rackId"] = f["rackId"]
    return out


def assignment_json(data: bytes) -> dict:
    """What ConsumerProtocolAssignmentJsonConverter.write(data, version) gives."""
    f, _ = _read_assignment(data, clamp=False)
    return {"assignedPartitions": _tp_json(f["assignedPartitions"]), "userData": _b64(f["userData"])}


def _expand_field(member: dict[str, Any], field: str, render) -> None:
    value = member.get(field)
    if not isinstance(value, str):
        return
    try:
        raw = base64.b64decode(value, validate=True)
        member[field] = render(raw)          # same key, so its position in the dict is kept
    except (binascii.Error, ValueError):
        pass                                 # kafka-dump-log swallows the error: keep the bytes


def expand_group_metadata_json(value_data: dict, protocol_type: str) -> dict:
    """A copy of a GroupMetadataValue's JSON "data" with each member's subscription and
    assignment decoded, as kafka-dump-log's OffsetsMessageParser prints them for
    protocolType "consumer"; bytes that do not parse stay base64 strings."""
    out = copy.deepcopy(value_data)
    if protocol_type != "consumer":
        return out
    members = out.get("members")
    if isinstance(members, list):
        for member in members:
            if isinstance(member, dict):
                _expand_field(member, "subscription", subscription_json)
                _expand_field(member, "assignment", assignment_json)
    return out
