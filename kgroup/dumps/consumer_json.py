"""Pack kafka-dump-log's expanded consumer-protocol JSON back into the bytes it came from.

For classic groups with protocolType "consumer", `kafka-dump-log.sh --offsets-decoder` (3.8+)
replaces each member's `subscription` and `assignment` bytes by the JSON of the decoded
ConsumerProtocolSubscription / ConsumerProtocolAssignment (`kgroup.protocol.consumer_protocol.
expand_group_metadata_json` renders exactly that). The JSON keeps the wire order of every
list, so writing it back field by field gives the original bytes, except for the int16 version
header, which the JSON does not show:

- subscription: the fields present tell the version (v0 topics+userData, v1 +ownedPartitions,
  v2 +generationId, v3 +rackId); exact for the versions Kafka has written so far (0-3);
- assignment: versions 0-3 have identical fields, so the version is taken from the group
  leader's subscription (the leader's client serialises every assignment with the highest
  version it knows, the same as its own subscription), else the member's own, else 3.
"""
from __future__ import annotations

import base64
import binascii
import copy
import struct
from typing import Any

__all__ = ["collapse_group_metadata_json", "subscription_bytes", "assignment_bytes", "subscription_version"]

_H = struct.Struct(">h")
_I = struct.Struct(">i")


def _string(out: bytearray, s: Any, what: str, nullable: bool = False) -> None:
    if s is None:
        if not nullable:
            raise ValueError(f"{what} cannot be null")
        out += _H.pack(-1)
        return
    if not isinstance(s, str):
        raise ValueError(f"{what} must be a string, got {s!r}")
    b = s.encode("utf-8")
    if len(b) > 0x7FFF:
        raise ValueError(f"{what} is longer than 32767 bytes")
    out += _H.pack(len(b)) + b


def _bytes(out: bytearray, s: Any, what: str) -> None:
    if s is None:
        out += _I.pack(-1)
        return
    if not isinstance(s, str):
        raise ValueError(f"{what} must be base64 text or null, got {s!r}")
    try:
        b = base64.b64decode(s, validate=True)
    except (binascii.Error, ValueError):
        raise ValueError(f"{what} is not base64: {s!r}") from None
    out += _I.pack(len(b)) + b


def _int32(out: bytearray, v: Any, what: str) -> None:
    if isinstance(v, bool) or not isinstance(v, int) or not -(1 << 31) <= v < (1 << 31):
        raise ValueError(f"{what} must be an int32, got {v!r}")
    out += _I.pack(v)


def _list(v: Any, what: str) -> list:
    if not isinstance(v, list):
        raise ValueError(f"{what} must be an array, got {v!r}")
    return v


def _topic_partitions(out: bytearray, v: Any, what: str) -> None:
    items = _list(v, what)
    out += _I.pack(len(items))
    for i, tp in enumerate(items):
        if not isinstance(tp, dict):
            raise ValueError(f"{what}[{i}] must be an object")
        _string(out, tp.get("topic"), f"{what}[{i}].topic")
        parts = _list(tp.get("partitions"), f"{what}[{i}].partitions")
        out += _I.pack(len(parts))
        for p in parts:
            _int32(out, p, f"{what}[{i}].partitions")


def subscription_version(sub: dict) -> int:
    """The ConsumerProtocolSubscription version whose JSON has exactly these fields."""
    if "rackId" in sub:
        return 3
    if "generationId" in sub:
        return 2
    if "ownedPartitions" in sub:
        return 1
    return 0


def subscription_bytes(sub: dict, version: int | None = None) -> bytes:
    """The bytes of an expanded subscription (version from its fields unless given)."""
    if not isinstance(sub, dict):
        raise ValueError("subscription JSON must be an object")
    v = subscription_version(sub) if version is None else version
    out = bytearray(_H.pack(v))
    topics = _list(sub.get("topics"), "subscription.topics")
    out += _I.pack(len(topics))
    for t in topics:
        _string(out, t, "subscription.topics")
    _bytes(out, sub.get("userData"), "subscription.userData")
    if v >= 1:
        _topic_partitions(out, sub.get("ownedPartitions", []), "subscription.ownedPartitions")
    if v >= 2:
        _int32(out, sub.get("generationId", -1), "subscription.generationId")
    if v >= 3:
        _string(out, sub.get("rackId"), "subscription.rackId", nullable=True)
    return bytes(out)


def assignment_bytes(assignment: dict, version: int = 3) -> bytes:
    """The bytes of an expanded assignment at `version` (the JSON does not tell it)."""
    if not isinstance(assignment, dict):
        raise ValueError("assignment JSON must be an object")
    out = bytearray(_H.pack(version))
    _topic_partitions(out, assignment.get("assignedPartitions"), "assignment.assignedPartitions")
    _bytes(out, assignment.get("userData"), "assignment.userData")
    return bytes(out)


def _b64(b: bytes) -> str:
    return base64.b64encode(b).decode("ascii")


def collapse_group_metadata_json(value_data: dict, protocol_type: str = "consumer") -> dict:
    """A copy of a GroupMetadataValue's JSON data with expanded subscriptions/assignments
    replaced by the base64 of their bytes (the inverse of `expand_group_metadata_json`)."""
    out = copy.deepcopy(value_data)
    members = out.get("members")
    if protocol_type != "consumer" or not isinstance(members, list):
        return out
    leader_version = None
    for m in members:
        if isinstance(m, dict) and m.get("memberId") == out.get("leader") and isinstance(m.get("subscription"), dict):
            leader_version = subscription_version(m["subscription"])
    for m in members:
        if not isinstance(m, dict):
            continue
        own = None
        if isinstance(m.get("subscription"), dict):
            own = subscription_version(m["subscription"])
            m["subscription"] = _b64(subscription_bytes(m["subscription"]))
        if isinstance(m.get("assignment"), dict):
            version = leader_version if leader_version is not None else own if own is not None else 3
            m["assignment"] = _b64(assignment_bytes(m["assignment"], version))
    return out
