"""Simulated cluster metadata: topics, topic ids, partitions, racks, log end offsets."""
from __future__ import annotations

import random
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field


class UnknownTopicError(KeyError):
    """No topic of that name (or id) exists in the simulated cluster."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


@dataclass
class Topic:
    name: str
    topic_id: uuid.UUID
    partitions: int
    #: racks of each partition's replicas (for rack-aware assignors); partition -> racks
    racks: dict[int, list[str]] = field(default_factory=dict)
    #: log end offset per partition (for lag)
    end_offsets: dict[int, int] = field(default_factory=dict)


class Cluster:
    """Topic metadata the coordinator consults. Changes bump `metadata_version`.

    Topic ids are random unless given; pass `seed` for reproducible ids.
    """

    def __init__(self, topics: dict[str, int] | None = None, *, racks: Iterable[str] = (), seed: int | None = None) -> None:
        self._topics: dict[str, Topic] = {}
        self._by_id: dict[uuid.UUID, Topic] = {}
        self.racks = list(racks)
        self._rng = random.Random(seed) if seed is not None else None
        self.metadata_version = 0
        #: the metadata version of the last topic creation (Kafka's `lastMetadataImageWithNewTopics`):
        #: regular expressions resolved before it may match more now
        self.last_version_with_new_topics = 0
        #: dynamic group configurations (Kafka keeps them in the cluster metadata):
        #: group id -> {per-group config name: value}; see kgroup.group_configs
        self.group_configs: dict[str, dict[str, object]] = {}
        #: simulated latency of a CreateTopics request sent by the coordinator (Streams internal topics)
        self.topic_creation_delay_ms = 0
        for name, partitions in (topics or {}).items():
            self.create_topic(name, partitions)

    # -- topics -------------------------------------------------------------------
    def create_topic(self, name: str, partitions: int, topic_id: uuid.UUID | None = None) -> uuid.UUID:
        """Create a topic (as CreateTopics does); returns its topic id."""
        if not name or len(name) > 249:
            raise ValueError(f"invalid topic name {name!r}")
        if name in self._topics:
            raise ValueError(f"topic {name!r} already exists")
        if partitions < 1:
            raise ValueError(f"topic {name!r} needs at least one partition, got {partitions}")
        if topic_id is None:
            topic_id = uuid.UUID(int=self._rng.getrandbits(128)) if self._rng else uuid.uuid4()
        if topic_id in self._by_id:
            raise ValueError(f"topic id {topic_id} is already used by {self._by_id[topic_id].name!r}")
        topic = Topic(name, topic_id, partitions)
        self._assign_racks(topic, range(partitions))
        self._topics[name] = topic
        self._by_id[topic_id] = topic
        self.metadata_version += 1
        self.last_version_with_new_topics = self.metadata_version
        return topic_id

    def delete_topic(self, name: str) -> None:
        topic = self.topic(name)
        del self._topics[name]
        del self._by_id[topic.topic_id]
        self.metadata_version += 1

    def increase_partitions(self, name: str, total: int) -> None:
        """Grow `name` to `total` partitions, as Kafka's CreatePartitions does (never shrinks)."""
        topic = self.topic(name)
        if total <= topic.partitions:
            raise ValueError(f"topic {name!r} has {topic.partitions} partitions; the new total must be larger, got {total}")
        self._assign_racks(topic, range(topic.partitions, total))
        topic.partitions = total
        self.metadata_version += 1

    def _assign_racks(self, topic: Topic, partitions: range) -> None:
        # Replicas spread round-robin over racks, like a rack-aware replica placement.
        if self.racks:
            for p in partitions:
                topic.racks[p] = [self.racks[p % len(self.racks)], self.racks[(p + 1) % len(self.racks)]]

    # -- lookups ------------------------------------------------------------------
    def topic(self, name: str) -> Topic:
        try:
            return self._topics[name]
        except KeyError:
            raise UnknownTopicError(f"unknown topic {name!r}") from None

    def topic_id(self, name: str) -> uuid.UUID:
        return self.topic(name).topic_id

    def topic_name(self, topic_id: uuid.UUID) -> str:
        try:
            return self._by_id[topic_id].name
        except KeyError:
            raise UnknownTopicError(f"unknown topic id {topic_id}") from None

    def partitions(self, name: str) -> int:
        return self.topic(name).partitions

    def __contains__(self, name: object) -> bool:
        return name in self._topics

    def topics(self) -> list[Topic]:
        return sorted(self._topics.values(), key=lambda t: t.name)

    def topic_names(self) -> list[str]:
        return sorted(self._topics)

    # -- log end offsets (for lag) ------------------------------------------------
    def set_end_offset(self, name: str, partition: int, end_offset: int) -> None:
        topic = self.topic(name)
        if not 0 <= partition < topic.partitions:
            raise ValueError(f"{name!r} has no partition {partition}")
        topic.end_offsets[partition] = end_offset

    def end_offset(self, name: str, partition: int) -> int:
        return self.topic(name).end_offsets.get(partition, 0)

    def __repr__(self) -> str:
        return f"Cluster({ {t.name: t.partitions for t in self.topics()} })"
