"""The user data Kafka Streams puts inside the embedded consumer protocol of a classic group.

A Kafka Streams member on the classic protocol joins with protocol type ``consumer`` and
protocol name ``stream``; its ``ConsumerProtocolSubscription`` carries a *SubscriptionInfo*
and the leader's ``ConsumerProtocolAssignment`` carries an *AssignmentInfo* as user data.
KIP-1071's online migration reads the first (process id, owned tasks, task offset sums) and
writes the second (the tasks the Streams group gives a classic member).

Both are written here at version 11, what Kafka Streams sends since 3.0
(``StreamsAssignmentProtocolVersions.LATEST_SUPPORTED_VERSION``):

    SubscriptionInfoData v11 (generated, non-flexible; streams/.../SubscriptionInfoData.json):
        version int32, latestSupportedVersion int32, processId uuid (16 bytes),
        userEndPoint bytes ("host:port", int32 length),
        taskOffsetSums [ {topicGroupId int32, partition int32, offsetSum int64,
                          namedTopology nullable string (int16 length)} ],
        uniqueField int8, errorCode int32,
        clientTags [ {key bytes, value bytes} ]
    AssignmentInfo v7-11 (hand-written DataOutputStream, AssignmentInfo.java):
        version int32, commonlySupportedVersion int32,
        activeTasks [ taskId ]   (one entry per assigned partition, in partition order),
        standbyTasks [ taskId, [ (topic utf, partition int32) ] ],
        topic dictionary [ (index int32, topic utf) ],
        partitionsByHost [ (host utf, port int32, [ (topic index int32, partition int32) ]) ],
        standbyPartitionsByHost (same), errCode int32, nextRebalanceMs int64
    taskId (v10+): topicGroupId int32, partition int32, named-topology length int32 (0: none)

In a SubscriptionInfo the tasks a member runs as active carry the offset sum -2
(``Task.LATEST_OFFSET``); every other task with local state carries its offset sum.
"""
from __future__ import annotations

import struct
import uuid
from dataclasses import dataclass, field

__all__ = ["StreamsProtocolError", "SubscriptionInfo", "AssignmentInfo", "LATEST_SUPPORTED_VERSION",
           "LATEST_OFFSET", "NO_FOLLOWUP_REBALANCE", "STREAMS_PROTOCOL_NAME", "encode_subscription_info",
           "decode_subscription_info", "encode_assignment_info", "decode_assignment_info"]

#: What Kafka Streams sends (StreamsAssignmentProtocolVersions.LATEST_SUPPORTED_VERSION).
LATEST_SUPPORTED_VERSION = 11
#: The offset sum of a task the member runs as active (Task.LATEST_OFFSET).
LATEST_OFFSET = -2
#: AssignmentInfo.nextRebalanceMs when no probing rebalance is scheduled (Long.MAX_VALUE).
NO_FOLLOWUP_REBALANCE = 2**63 - 1
#: The classic protocol name of StreamsPartitionAssignor.
STREAMS_PROTOCOL_NAME = "stream"

Task = tuple[str, int]


class StreamsProtocolError(ValueError):
    """Kafka Streams user data that cannot be read."""


@dataclass(frozen=True)
class SubscriptionInfo:
    """What one Kafka Streams consumer tells the group when it joins (classic protocol)."""

    process_id: str
    #: task -> offset sum (LATEST_OFFSET for tasks running as active)
    task_offset_sums: dict[Task, int] = field(default_factory=dict)
    user_endpoint: tuple[str, int] | None = None
    client_tags: tuple[tuple[str, str], ...] = ()
    unique_field: int = 0
    error_code: int = 0
    version: int = LATEST_SUPPORTED_VERSION
    latest_supported_version: int = LATEST_SUPPORTED_VERSION

    @property
    def active_tasks(self) -> list[Task]:
        """SubscriptionInfo.prevTasks(): the tasks it runs as active."""
        return sorted(t for t, o in self.task_offset_sums.items() if o == LATEST_OFFSET)

    @property
    def standby_tasks(self) -> list[Task]:
        """SubscriptionInfo.standbyTasks(): every other task with local state."""
        return sorted(t for t, o in self.task_offset_sums.items() if o != LATEST_OFFSET)


@dataclass(frozen=True)
class AssignmentInfo:
    """What the group gives one Kafka Streams consumer in its SyncGroup answer."""

    #: one entry per assigned partition, aligned with the consumer assignment's partitions
    active_tasks: tuple[Task, ...] = ()
    #: standby task -> its source partitions (warm-up tasks are standbys here: KIP-1071)
    standby_tasks: dict[Task, tuple[tuple[str, int], ...]] = field(default_factory=dict)
    partitions_by_host: dict[tuple[str, int], tuple[tuple[str, int], ...]] = field(default_factory=dict)
    standby_partitions_by_host: dict[tuple[str, int], tuple[tuple[str, int], ...]] = field(default_factory=dict)
    error_code: int = 0
    next_rebalance_ms: int = NO_FOLLOWUP_REBALANCE
    version: int = LATEST_SUPPORTED_VERSION
    commonly_supported_version: int = LATEST_SUPPORTED_VERSION


# --- writing ------------------------------------------------------------------------------

class _W:
    def __init__(self) -> None:
        self.parts: list[bytes] = []

    def fmt(self, f: str, *v: int) -> None:
        self.parts.append(struct.pack(">" + f, *v))

    def utf(self, s: str) -> None:          # DataOutputStream.writeUTF (ASCII names)
        b = s.encode("utf-8")
        self.fmt("H", len(b))
        self.parts.append(b)

    def bytes_(self, b: bytes) -> None:     # generated `bytes`: int32 length
        self.fmt("i", len(b))
        self.parts.append(b)

    def task(self, t: Task) -> None:        # AssignmentInfo's TaskId, v10+ (no named topology)
        self.fmt("iii", int(t[0]), t[1], 0)

    def value(self) -> bytes:
        return b"".join(self.parts)


def _sub_int(subtopology: str) -> int:
    try:
        return int(subtopology)
    except ValueError:
        raise StreamsProtocolError(f"subtopology {subtopology!r} is not a classic topic group id") from None


def encode_subscription_info(info: SubscriptionInfo) -> bytes:
    """SubscriptionInfoData at version 11 (the only version written here)."""
    if info.version != LATEST_SUPPORTED_VERSION:
        raise StreamsProtocolError(f"only SubscriptionInfo version {LATEST_SUPPORTED_VERSION} is written")
    w = _W()
    w.fmt("ii", info.version, info.latest_supported_version)
    w.parts.append(uuid.UUID(info.process_id).bytes)
    w.bytes_(b"" if info.user_endpoint is None else f"{info.user_endpoint[0]}:{info.user_endpoint[1]}".encode())
    w.fmt("i", len(info.task_offset_sums))
    for (s, p), offset in sorted(info.task_offset_sums.items(), key=lambda kv: (_sub_int(kv[0][0]), kv[0][1])):
        w.fmt("iiqh", _sub_int(s), p, offset, -1)   # namedTopology null
    w.fmt("bi", info.unique_field, info.error_code)
    w.fmt("i", len(info.client_tags))
    for k, v in info.client_tags:
        w.bytes_(k.encode())
        w.bytes_(v.encode())
    return w.value()


def _partitions_by_host(w: _W, index: dict[str, int], by_host: dict) -> None:
    w.fmt("i", len(by_host))
    for (host, port), parts in sorted(by_host.items()):
        w.utf(host)
        w.fmt("i", port)
        w.fmt("i", len(parts))
        for topic, p in sorted(parts):
            w.fmt("ii", index[topic], p)


def encode_assignment_info(info: AssignmentInfo) -> bytes:
    """AssignmentInfo at version 7-11 (same layout)."""
    if not 7 <= info.version <= LATEST_SUPPORTED_VERSION:
        raise StreamsProtocolError(f"AssignmentInfo version {info.version} is not written here (7-11 are)")
    w = _W()
    w.fmt("ii", info.version, info.commonly_supported_version)
    w.fmt("i", len(info.active_tasks))
    for t in info.active_tasks:
        w.task(t)
    w.fmt("i", len(info.standby_tasks))
    for t, parts in sorted(info.standby_tasks.items(), key=lambda kv: (_sub_int(kv[0][0]), kv[0][1])):
        w.task(t)
        w.fmt("i", len(parts))
        for topic, p in sorted(parts):
            w.utf(topic)
            w.fmt("i", p)
    topics = sorted({t for d in (info.partitions_by_host, info.standby_partitions_by_host)
                     for parts in d.values() for t, _ in parts})
    index = {t: i for i, t in enumerate(topics)}
    w.fmt("i", len(topics))
    for t in topics:
        w.fmt("i", index[t])
        w.utf(t)
    _partitions_by_host(w, index, info.partitions_by_host)
    _partitions_by_host(w, index, info.standby_partitions_by_host)
    w.fmt("iq", info.error_code, info.next_rebalance_ms)
    return w.value()


# --- reading ------------------------------------------------------------------------------

class _R:
    def __init__(self, data: bytes, what: str) -> None:
        self.data, self.pos, self.what = bytes(data), 0, what

    def take(self, n: int) -> bytes:
        if self.pos + n > len(self.data):
            raise StreamsProtocolError(f"{self.what}: truncated at byte {self.pos} (needs {n} more)")
        b = self.data[self.pos:self.pos + n]
        self.pos += n
        return b

    def fmt(self, f: str) -> tuple:
        return struct.unpack(">" + f, self.take(struct.calcsize(">" + f)))

    def i32(self) -> int:
        return self.fmt("i")[0]

    def count(self) -> int:
        n = self.i32()
        if n < 0 or n > len(self.data):
            raise StreamsProtocolError(f"{self.what}: bad array length {n} at byte {self.pos - 4}")
        return n

    def utf(self) -> str:
        (n,) = self.fmt("H")
        return self.take(n).decode("utf-8")

    def bytes_(self) -> bytes:
        return self.take(self.count())

    def task(self) -> Task:
        s, p, named = self.fmt("iii")
        if named:
            self.take(2 * named)   # writeChars: a named topology (never written here)
        return (str(s), p)


def decode_subscription_info(data: bytes) -> SubscriptionInfo:
    """SubscriptionInfoData versions 10 and 11 (Kafka Streams 3.0+)."""
    r = _R(data, "SubscriptionInfo")
    version, latest = r.fmt("ii")
    if version not in (10, 11):
        raise StreamsProtocolError(f"SubscriptionInfo version {version} is not read here (10 and 11 are)")
    process_id = str(uuid.UUID(bytes=r.take(16)))
    endpoint_text = r.bytes_().decode()
    endpoint = None
    if endpoint_text:
        host, _, port = endpoint_text.rpartition(":")
        endpoint = (host, int(port))
    offsets: dict[Task, int] = {}
    for _ in range(r.count()):
        s, p, offset, named = r.fmt("iiqh")
        if named >= 0:
            r.take(named)
        offsets[(str(s), p)] = offset
    unique, error = r.fmt("bi")
    tags: tuple[tuple[str, str], ...] = ()
    if version >= 11:
        tags = tuple((r.bytes_().decode(), r.bytes_().decode()) for _ in range(r.count()))
    return SubscriptionInfo(process_id, offsets, endpoint, tags, unique, error, version, latest)


def _read_by_host(r: _R, topics: dict[int, str]) -> dict[tuple[str, int], tuple[tuple[str, int], ...]]:
    out = {}
    for _ in range(r.count()):
        host = r.utf()
        port = r.i32()
        out[(host, port)] = tuple(sorted((topics[i], p) for i, p in (r.fmt("ii") for _ in range(r.count()))))
    return out


def decode_assignment_info(data: bytes) -> AssignmentInfo:
    """AssignmentInfo versions 10 and 11 (the layout of 7-11 with v10's task ids)."""
    r = _R(data, "AssignmentInfo")
    version, common = r.fmt("ii")
    if version not in (10, 11):
        raise StreamsProtocolError(f"AssignmentInfo version {version} is not read here (10 and 11 are)")
    active = tuple(r.task() for _ in range(r.count()))
    standby = {}
    for _ in range(r.count()):
        t = r.task()
        standby[t] = tuple(sorted((r.utf(), r.i32()) for _ in range(r.count())))
    topics = {}
    for _ in range(r.count()):
        i = r.i32()
        topics[i] = r.utf()
    by_host = _read_by_host(r, topics)
    standby_by_host = _read_by_host(r, topics)
    error, next_ms = r.fmt("iq")
    return AssignmentInfo(active, standby, by_host, standby_by_host, error, next_ms, version, common)
