"""Embedded protocol bytes, decoded for display the way Kafka's own tools show them.

A classic group with protocol type "consumer" carries a ConsumerProtocolSubscription in each
JoinGroup protocol's metadata and a ConsumerProtocolAssignment in each SyncGroup assignment;
GroupMetadata records keep both. kafka-dump-log (3.8+) prints them decoded
(`kgroup.protocol.consumer_protocol.subscription_json` / `assignment_json`). Kafka Streams on
the classic protocol (protocol name "stream") puts a SubscriptionInfo / AssignmentInfo in the
userData; that is decoded too (`kgroup.protocol.streams_protocol`).

`decode_entity(data, ...)` takes `kgroup.protocol.to_data` output and puts the decoded
structures where the bytes were; `plain(data)` turns any bytes left into base64 (the raw view).
Bytes that do not parse stay base64, with the reason beside them.
"""
from __future__ import annotations

import base64
import copy
from typing import Any

from kgroup.protocol.consumer_protocol import assignment_json, subscription_json
from kgroup.protocol.streams_protocol import (NO_FOLLOWUP_REBALANCE, STREAMS_PROTOCOL_NAME, decode_assignment_info,
                                              decode_subscription_info)

__all__ = ["plain", "decode_entity", "decode_subscription", "decode_assignment", "expand_group_metadata",
           "assigned_partitions", "subscribed_topics"]

CONSUMER = "consumer"


def _b64(b: bytes) -> str:
    return base64.b64encode(bytes(b)).decode("ascii")


def plain(data: Any) -> Any:
    """`data` with bytes as base64 text (what Kafka's JSON forms print for bytes)."""
    if isinstance(data, (bytes, bytearray, memoryview)):
        return _b64(bytes(data))
    if isinstance(data, dict):
        return {k: plain(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [plain(v) for v in data]
    return data


def _task(t: tuple[str, int]) -> str:
    return f"{t[0]}_{t[1]}"


def _tps(pairs: Any) -> list[str]:
    return [f"{t}-{p}" for t, p in pairs]


def _subscription_info(raw: bytes) -> dict:
    info = decode_subscription_info(raw)
    return {"SubscriptionInfo": {
        "version": info.version, "latestSupportedVersion": info.latest_supported_version,
        "processId": str(info.process_id),
        "userEndPoint": None if info.user_endpoint is None else f"{info.user_endpoint[0]}:{info.user_endpoint[1]}",
        "activeTasks": [_task(t) for t in info.active_tasks],
        "standbyTaskOffsetSums": {_task(t): info.task_offset_sums[t] for t in info.standby_tasks},
        "clientTags": {k: v for k, v in info.client_tags}, "uniqueField": info.unique_field,
        "errorCode": info.error_code}}


def _assignment_info(raw: bytes) -> dict:
    info = decode_assignment_info(raw)

    def by_host(d: dict) -> dict:
        return {f"{h}:{p}": _tps(tps) for (h, p), tps in sorted(d.items())}
    return {"AssignmentInfo": {
        "version": info.version, "commonlySupportedVersion": info.commonly_supported_version,
        "activeTasks": [_task(t) for t in info.active_tasks],
        "standbyTasks": {_task(t): _tps(tps) for t, tps in sorted(info.standby_tasks.items())},
        "partitionsByHost": by_host(info.partitions_by_host),
        "standbyPartitionsByHost": by_host(info.standby_partitions_by_host),
        "errorCode": info.error_code,
        "nextRebalanceMs": None if info.next_rebalance_ms == NO_FOLLOWUP_REBALANCE else info.next_rebalance_ms}}


def _user_data(out: dict, protocol_name: str | None, reader) -> dict:
    """Replace the base64 userData of a Streams subscription/assignment by its decoded form."""
    if protocol_name != STREAMS_PROTOCOL_NAME or not isinstance(out.get("userData"), str):
        return out
    try:
        out["userData"] = reader(base64.b64decode(out["userData"]))
    except (ValueError, IndexError) as e:  # keep the bytes: the reader says why
        out["userDataError"] = str(e)
    return out


def decode_subscription(raw: bytes | None, protocol_name: str | None = None) -> Any:
    """A ConsumerProtocolSubscription as kafka-dump-log prints it (Streams userData decoded);
    base64 with the reason when it does not parse."""
    if raw is None:
        return None
    try:
        return _user_data(subscription_json(bytes(raw)), protocol_name, _subscription_info)
    except (ValueError, IndexError) as e:
        return {"undecodable": str(e), "base64": _b64(raw)}


def decode_assignment(raw: bytes | None, protocol_name: str | None = None) -> Any:
    """A ConsumerProtocolAssignment as kafka-dump-log prints it (Streams userData decoded)."""
    if raw is None:
        return None
    if not len(raw):
        return {"assignedPartitions": [], "userData": None, "note": "no assignment (empty bytes)"}
    try:
        return _user_data(assignment_json(bytes(raw)), protocol_name, _assignment_info)
    except (ValueError, IndexError) as e:
        return {"undecodable": str(e), "base64": _b64(raw)}


def subscribed_topics(raw: bytes | None) -> list[str]:
    """The topics of a subscription's bytes ([] when they do not parse)."""
    d = decode_subscription(raw)
    return list(d.get("topics", [])) if isinstance(d, dict) else []


def assigned_partitions(raw: bytes | None) -> list[str]:
    """"topic-partition" names of an assignment's bytes ([] when empty or unreadable)."""
    d = decode_assignment(raw)
    if not isinstance(d, dict):
        return []
    return [f"{tp['topic']}-{p}" for tp in d.get("assignedPartitions", []) for p in tp["partitions"]]


def decode_entity(data: Any, name: str, request: Any = None) -> Any:
    """`to_data` output of a request or response named `name` (its class name) with the
    consumer-protocol bytes decoded in place; `request`: the request it answers (for the
    protocol type of responses that do not repeat it)."""
    if not isinstance(data, dict):
        return data
    protocol_type = data.get("protocol_type") or getattr(request, "protocol_type", None)
    if protocol_type is not None and protocol_type != CONSUMER:
        return data
    # versions that do not carry the protocol type (SyncGroup < v5, JoinGroup answers < v7):
    # decoded only when the bytes read cleanly as the consumer protocol
    known = protocol_type == CONSUMER

    def put(holder: dict, field: str, decode, protocol: str | None) -> None:
        value = decode(holder.get(field), protocol)
        if known or not (isinstance(value, dict) and "undecodable" in value):
            holder[field] = value

    out = copy.deepcopy(data)
    if name == "JoinGroupRequest":
        for p in out.get("protocols") or []:
            put(p, "metadata", decode_subscription, p.get("name"))
    elif name == "JoinGroupResponse":
        for m in out.get("members") or []:
            put(m, "metadata", decode_subscription, out.get("protocol_name"))
    elif name == "SyncGroupRequest":
        for a in out.get("assignments") or []:
            put(a, "assignment", decode_assignment, out.get("protocol_name"))
    elif name == "SyncGroupResponse":
        put(out, "assignment", decode_assignment, out.get("protocol_name") or getattr(request, "protocol_name", None))
    return out


def expand_group_metadata(value: Any) -> Any:
    """A GroupMetadataValue's JSON with member subscription/assignment decoded (kafka-dump-log's
    --offsets-decoder form), Streams userData included."""
    if not isinstance(value, dict) or value.get("protocolType") != CONSUMER:
        return value
    out = copy.deepcopy(value)
    protocol = out.get("protocol")
    for m in out.get("members") or []:
        if not isinstance(m, dict):
            continue
        for field, decode in (("subscription", decode_subscription), ("assignment", decode_assignment)):
            if isinstance(m.get(field), str):
                try:
                    raw = base64.b64decode(m[field], validate=True)
                except ValueError:
                    continue
                m[field] = decode(raw, protocol)
    return out
