"""Which partition of `__consumer_offsets` / `__share_group_state` a key lives on.

Kafka: `Utils.abs(key.hashCode()) % numPartitions`, where `hashCode` is Java's
`String.hashCode` (over UTF-16 code units, int32 arithmetic) and `Utils.abs(x)` is
`Math.abs(x)`, except that Integer.MIN_VALUE maps to 0 (not `x & 0x7fffffff`, the producer's
`toPositive`: a running Kafka 4.4.0 puts a group whose hash is negative where `Math.abs` says).
"""
from __future__ import annotations

import base64
import functools
import uuid

__all__ = ["java_string_hashcode", "java_abs", "partition_for", "share_state_partition_for", "share_partition_key",
           "kafka_uuid_str", "parse_kafka_uuid", "DEFAULT_OFFSETS_PARTITIONS", "DEFAULT_SHARE_STATE_PARTITIONS"]

DEFAULT_OFFSETS_PARTITIONS = 50  # offsets.topic.num.partitions
DEFAULT_SHARE_STATE_PARTITIONS = 50  # share.coordinator.state.topic.num.partitions


@functools.lru_cache(maxsize=1 << 16)  # group and member ids: hashed on every request and assignment
def java_string_hashcode(s: str) -> int:
    """Java's `String.hashCode()`: s[0]*31^(n-1) + ... over UTF-16 code units, as a signed int32.

    Characters outside the BMP count as their two surrogate code units, as in Java.
    """
    data = s.encode("utf-16-be", "surrogatepass")
    h = 0
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def java_abs(x: int) -> int:
    """Kafka's `Utils.abs`: `Math.abs(x)`, and 0 for Integer.MIN_VALUE."""
    return 0 if x == -2**31 else abs(x)


def partition_for(group_id: str, num_partitions: int = DEFAULT_OFFSETS_PARTITIONS) -> int:
    """The `__consumer_offsets` partition of a group (`GroupCoordinatorService.partitionFor`)."""
    if num_partitions <= 0:
        raise ValueError(f"num_partitions must be positive, got {num_partitions}")
    return java_abs(java_string_hashcode(group_id)) % num_partitions


def kafka_uuid_str(topic_id: uuid.UUID | str) -> str:
    """Kafka's `Uuid.toString()`: URL-safe base64 of the 16 bytes without padding (22 chars)."""
    u = parse_kafka_uuid(topic_id) if isinstance(topic_id, str) else topic_id
    return base64.urlsafe_b64encode(u.bytes).decode("ascii").rstrip("=")


def parse_kafka_uuid(text: str) -> uuid.UUID:
    """Accept Kafka's 22-character form or the canonical 36-character UUID form."""
    if len(text) == 22:
        try:
            raw = base64.urlsafe_b64decode(text + "==")
        except ValueError:
            raise ValueError(f"not a Kafka uuid: {text!r}") from None
        if len(raw) != 16:
            raise ValueError(f"not a Kafka uuid: {text!r}")
        return uuid.UUID(bytes=raw)
    return uuid.UUID(text)


def share_partition_key(group_id: str, topic_id: uuid.UUID | str, partition: int) -> str:
    """`SharePartitionKey.asCoordinatorKey`: `"<groupId>:<topicId>:<partition>"`."""
    return f"{group_id}:{kafka_uuid_str(topic_id)}:{partition}"


def share_state_partition_for(group_id: str, topic_id: uuid.UUID | str, partition: int,
                              num_partitions: int = DEFAULT_SHARE_STATE_PARTITIONS) -> int:
    """The `__share_group_state` partition holding one share-partition's state."""
    if num_partitions <= 0:
        raise ValueError(f"num_partitions must be positive, got {num_partitions}")
    key = share_partition_key(group_id, topic_id, partition)
    return java_abs(java_string_hashcode(key)) % num_partitions
