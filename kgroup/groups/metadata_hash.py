"""The metadata hash a modern group stores in its group metadata record, bit for bit as Kafka.

Kafka 4.1+ writes `MetadataHash` into `ConsumerGroupMetadataValue` (tagged field 0) and the
share and streams group metadata values. When a group's subscription changes, or a subscribed
topic changed in the metadata image, the coordinator computes the hash again and bumps the
group epoch if it differs from the stored one. A group loaded from a real `__consumer_offsets`
dump must therefore hash exactly as Kafka does, or the first heartbeat rebalances it for nothing.

Kafka's code (`group-coordinator/.../group/Utils.java`, `computeTopicHash` and
`computeGroupHash`, and `modern/ModernGroup.computeMetadataHash`) streams values into
hash4j's XXH3-64 with seed 0 (`Hashing.xxh3_64().hashStream()`). hash4j writes

* `putByte(b)`  as the one byte;
* `putInt(i)`   as 4 bytes, little-endian;
* `putLong(l)`  as 8 bytes, little-endian;
* `putString(s)` as the string's UTF-16 code units, each 2 bytes little-endian, then
  `putInt(s.length())`, the number of UTF-16 code units (not of code points).

XXH3 streaming gives the same result as one-shot hashing of the concatenated bytes, so this
module builds the byte string and hashes it once with the `xxhash` package.

A topic's bytes: `putByte(0)` (TOPIC_HASH_MAGIC_BYTE), `putLong(id.msb)`, `putLong(id.lsb)`,
`putString(name)`, `putInt(partitionCount)`, then for each partition `i` in `0..n-1`:
`putInt(i)` and, for each rack of the partition's replicas in Java `String` order,
`putInt(rack.length())` and `putString(rack)` (the length is therefore written twice).
The racks are those of the replica brokers that have one, one entry per replica, duplicates kept.
A topic that does not exist hashes to 0.

The group hash: 0 without topics; otherwise the topic hashes, ordered by topic name
(Java `String.compareTo`, i.e. UTF-16 code unit order), each `putLong`, into a fresh stream.
`ModernGroup.computeMetadataHash` leaves subscribed topics that do not exist out of the map
(they do not contribute a 0), so creating such a topic changes the group hash.
"""
from __future__ import annotations

import struct
import uuid
import weakref
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING

import xxhash

from kgroup.cluster import UnknownTopicError

if TYPE_CHECKING:
    from kgroup.cluster import Cluster

__all__ = ["TOPIC_HASH_MAGIC_BYTE", "TopicHashCache", "group_metadata_hash", "metadata_hash", "topic_hash",
           "topic_hash_bytes"]

#: Kafka's `Utils.TOPIC_HASH_MAGIC_BYTE`: the version of the topic hash layout.
TOPIC_HASH_MAGIC_BYTE = 0

_INT = struct.Struct("<i")
_LONG = struct.Struct("<q")
_ULONG = struct.Struct("<Q")
_MASK64 = (1 << 64) - 1

PartitionRacks = Callable[[int], "list[str] | None"] | Mapping[int, "list[str]"] | None


def _signed64(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def _utf16(s: str) -> bytes:
    # Java's String is UTF-16; `surrogatepass` keeps a lone surrogate as Java would.
    return s.encode("utf-16-le", "surrogatepass")


def _java_order(s: str) -> bytes:
    """Sort key giving Java's `String.compareTo` order (UTF-16 code units, not code points)."""
    return s.encode("utf-16-be", "surrogatepass")


def _put_string(out: bytearray, s: str) -> int:
    """hash4j `putString`: the UTF-16LE code units, then their count as an int. Returns the count."""
    units = _utf16(s)
    out += units
    length = len(units) >> 1
    out += _INT.pack(length)
    return length


def _racks_of(partition_racks: PartitionRacks) -> Callable[[int], Iterable[str]]:
    if partition_racks is None:
        return lambda _p: ()
    if isinstance(partition_racks, Mapping):
        return lambda p: partition_racks.get(p) or ()
    if callable(partition_racks):
        return lambda p: partition_racks(p) or ()
    raise TypeError(f"partition_racks must be a callable, a mapping or None, not {type(partition_racks).__name__}")


def topic_hash_bytes(
    topic_id: uuid.UUID,
    name: str,
    num_partitions: int,
    partition_racks: PartitionRacks = None,
) -> bytes:
    """The exact bytes Kafka's `Utils.computeTopicHash` streams into XXH3 for an existing topic."""
    if not isinstance(topic_id, uuid.UUID):
        raise TypeError(f"topic_id must be a uuid.UUID, not {type(topic_id).__name__}")
    if not isinstance(num_partitions, int) or not 0 <= num_partitions <= 0x7FFFFFFF:
        raise ValueError(f"num_partitions must be an int in [0, 2^31), got {num_partitions!r}")
    racks_of = _racks_of(partition_racks)
    out = bytearray()
    out.append(TOPIC_HASH_MAGIC_BYTE)
    out += _ULONG.pack(topic_id.int >> 64)       # getMostSignificantBits()
    out += _ULONG.pack(topic_id.int & _MASK64)   # getLeastSignificantBits()
    _put_string(out, name)
    out += _INT.pack(num_partitions)
    for partition in range(num_partitions):
        out += _INT.pack(partition)
        for rack in sorted(racks_of(partition), key=_java_order):
            units = _utf16(rack)
            out += _INT.pack(len(units) >> 1)    # putInt(rack.length())
            out += units                         # putString(rack): chars ...
            out += _INT.pack(len(units) >> 1)    # ... then its length again
    return bytes(out)


def topic_hash(
    topic_id: uuid.UUID,
    name: str,
    num_partitions: int,
    partition_racks: PartitionRacks = None,
) -> int:
    """Kafka's `Utils.computeTopicHash` for an existing topic, as a signed 64-bit int (a Java long).

    `partition_racks` gives each partition's replica racks (one per replica that has a rack,
    in any order): a callable `partition -> list[str]`, a mapping, or None for no racks.
    A partition the mapping lacks, or for which the callable returns None, has no racks.
    """
    return _signed64(xxhash.xxh3_64_intdigest(topic_hash_bytes(topic_id, name, num_partitions, partition_racks)))


def group_metadata_hash(topic_hashes: Mapping[str, int]) -> int:
    """Kafka's `Utils.computeGroupHash`: 0 for no topics, else XXH3 over the hashes sorted by name."""
    if not topic_hashes:
        return 0
    out = bytearray()
    for name in sorted(topic_hashes, key=_java_order):
        out += _ULONG.pack(topic_hashes[name] & _MASK64)
    return _signed64(xxhash.xxh3_64_intdigest(bytes(out)))


def _cluster_topic_hash(cluster: Cluster, name: str) -> int | None:
    """The topic's hash, or None when the cluster has no such topic."""
    try:
        topic = cluster.topic(name)
    except UnknownTopicError:
        return None
    return topic_hash(topic.topic_id, topic.name, topic.partitions, topic.racks)


class TopicHashCache:
    """Kafka's `GroupMetadataManager.topicHashCache`: topic hashes by topic name, for one cluster.

    Kafka drops a topic's entry when the topic changes in a new metadata image. `Cluster` only
    has one `metadata_version` for everything, so the whole cache is dropped when it changes.
    (Editing `Topic.racks` in place does not bump the version: call `clear()` after doing so.)
    Missing topics are never cached.
    """

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self._version = cluster.metadata_version
        self._hashes: dict[str, int] = {}
        #: how many hashes were computed (a cache miss each); for tests and the curious
        self.computed = 0

    def _check_version(self) -> None:
        if self.cluster.metadata_version != self._version:
            self._hashes.clear()
            self._version = self.cluster.metadata_version

    def get(self, name: str) -> int | None:
        """The topic's hash, or None when the topic does not exist (Kafka then leaves it out)."""
        self._check_version()
        cached = self._hashes.get(name)
        if cached is not None:
            return cached
        value = _cluster_topic_hash(self.cluster, name)
        if value is not None:
            self.computed += 1
            self._hashes[name] = value
        return value

    def topic_hash(self, name: str) -> int:
        """Kafka's `Utils.computeTopicHash(name, image)`: 0 for a topic that does not exist."""
        value = self.get(name)
        return 0 if value is None else value

    def metadata_hash(self, topic_names: Iterable[str]) -> int:
        """Kafka's `ModernGroup.computeMetadataHash` over the subscribed topic names."""
        hashes: dict[str, int] = {}
        for name in topic_names:
            if name not in hashes:
                value = self.get(name)
                if value is not None:
                    hashes[name] = value
        return group_metadata_hash(hashes)

    def invalidate(self, name: str | None = None) -> None:
        """Forget one topic's hash (Kafka does this when no group subscribes to it any more), or all."""
        if name is None:
            self._hashes.clear()
        else:
            self._hashes.pop(name, None)

    def clear(self) -> None:
        self._hashes.clear()

    def __contains__(self, name: object) -> bool:
        self._check_version()
        return name in self._hashes

    def __len__(self) -> int:
        self._check_version()
        return len(self._hashes)

    def __repr__(self) -> str:
        return f"TopicHashCache({len(self)} topics, metadata_version={self._version})"


def metadata_hash(topic_names: Iterable[str], cluster: Cluster, cache: TopicHashCache | None = None) -> int:
    """Kafka's `ModernGroup.computeMetadataHash`: the group hash of the subscribed topics that exist.

    Topics missing from `cluster` are skipped (not hashed as 0); no existing topic gives 0.
    Topic hashes are reused across calls, as Kafka's coordinator does, from `cache` or else the
    cluster's own cache (dropped whenever its metadata version moves).
    """
    if cache is None:
        cache = _CACHES.get(cluster)
        if cache is None:
            cache = _CACHES[cluster] = TopicHashCache(cluster)
    elif cache.cluster is not cluster:
        raise ValueError("the TopicHashCache belongs to another cluster")
    return cache.metadata_hash(topic_names)


#: one topic-hash cache per cluster (a coordinator's failover successor shares it, as it shares
#: the cluster's metadata)
_CACHES: "weakref.WeakKeyDictionary[Cluster, TopicHashCache]" = weakref.WeakKeyDictionary()
