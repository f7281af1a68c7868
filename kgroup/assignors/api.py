"""The types every server-side assignor shares (Kafka's ``group-coordinator-api`` package).

Mirrors ``org.apache.kafka.coordinator.group.api.assignor``: ``GroupSpec``,
``MemberSubscription``, ``SubscribedTopicDescriber``, ``SubscriptionType``,
``PartitionAssignorException`` and ``ConsumerGroupPartitionAssignor`` (here
:class:`ServerAssignor`). An assignment is a plain ``dict``: member id ->
``{topic id: frozenset of partitions}``; topics a member has nothing of are left out.
"""
from __future__ import annotations

import enum
import uuid
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from kgroup.gcpause import gc_paused  # noqa: F401  (the assignors import it from here)

__all__ = ["TopicId", "SubscriptionType", "MemberSubscription", "GroupSpec", "SubscribedTopicDescriber",
           "TopicMetadata", "GroupAssignment", "PartitionAssignorException", "ServerAssignor", "subscription_type_of"]

TopicId = uuid.UUID

#: member id -> partitions per topic. Members that get nothing map to ``{}``.
GroupAssignment = dict[str, dict[TopicId, frozenset[int]]]


class SubscriptionType(enum.Enum):
    """Whether all members subscribe to the same topics (Kafka's ``SubscriptionType``)."""
    HOMOGENEOUS = "HOMOGENEOUS"
    HETEROGENEOUS = "HETEROGENEOUS"


class PartitionAssignorException(Exception):
    """The assignor cannot compute an assignment (Kafka's ``PartitionAssignorException``).

    Kafka's uniform and range assignors raise it when a member subscribes to a topic id
    the describer does not know (``num_partitions == -1``).
    """


@dataclass(frozen=True)
class MemberSubscription:
    """What the assignor knows about one member (Kafka's ``MemberSubscription``)."""
    subscribed_topic_ids: frozenset[TopicId]
    rack_id: str | None = None
    instance_id: str | None = None


@dataclass
class GroupSpec:
    """The input of an assignment (Kafka's ``GroupSpec``/``GroupSpecImpl``).

    ``members`` is iterated in insertion order wherever Kafka iterates
    ``groupSpec.memberIds()`` (see the package docstring for why that matters).
    ``current_assignment`` holds each member's target assignment of the previous
    epoch; members absent from it have nothing. The assignors treat it, and the
    dicts they return, as read-only: an unchanged member's dict is returned as the
    very object passed in (Kafka's assignors reuse unchanged assignment maps too).
    """
    members: dict[str, MemberSubscription]
    subscription_type: SubscriptionType
    current_assignment: dict[str, dict[TopicId, frozenset[int]]] = field(default_factory=dict)
    _inverted: dict[TopicId, dict[int, str]] | None = field(
        default=None, init=False, repr=False, compare=False)

    def member_assignment(self, member_id: str) -> Mapping[TopicId, frozenset[int]]:
        """The member's current assignment; ``{}`` for unknown members (as Kafka)."""
        if member_id not in self.members:
            return {}
        return self.current_assignment.get(member_id) or {}

    def is_partition_assigned(self, topic_id: TopicId, partition: int) -> bool:
        """Whether some member of the group holds the partition in its current assignment.

        Kafka answers from the inverted target assignment the coordinator passes in;
        here it is built (once, lazily) from ``current_assignment`` of the members of
        the spec, so partitions of members no longer in the group count as unassigned.
        """
        inverted = self._inverted
        if inverted is None:
            inverted = {}
            for member_id in self.members:
                for tid, parts in (self.current_assignment.get(member_id) or {}).items():
                    owners = inverted.setdefault(tid, {})
                    for p in parts:
                        owners[p] = member_id
            self._inverted = inverted
        owners = inverted.get(topic_id)
        return owners is not None and partition in owners


@runtime_checkable
class SubscribedTopicDescriber(Protocol):
    """Topic metadata as the assignor sees it (Kafka's ``SubscribedTopicDescriber``)."""

    def num_partitions(self, topic_id: TopicId) -> int:
        """The partition count, or -1 when the topic does not exist."""
        ...

    def racks_for_partition(self, topic_id: TopicId, partition: int) -> set[str]:
        """Racks of the partition's replicas; empty when unknown."""
        ...


@dataclass
class TopicMetadata(SubscribedTopicDescriber):
    """A simple describer: ``{topic_id: (name, num_partitions)}`` plus optional racks.

    ``racks`` maps ``(topic_id, partition)`` to the set of racks of its replicas.
    """
    topics: dict[TopicId, tuple[str, int]]
    racks: dict[tuple[TopicId, int], set[str]] = field(default_factory=dict)

    @classmethod
    def from_counts(cls, counts: Mapping[TopicId, int]) -> TopicMetadata:
        """Topics named after their ids, from ``{topic_id: num_partitions}``."""
        return cls({tid: (str(tid), n) for tid, n in counts.items()})

    def num_partitions(self, topic_id: TopicId) -> int:
        entry = self.topics.get(topic_id)
        return -1 if entry is None else entry[1]

    def racks_for_partition(self, topic_id: TopicId, partition: int) -> set[str]:
        return set(self.racks.get((topic_id, partition), ()))


class ServerAssignor(ABC):
    """A server-side (KIP-848) partition assignor: a pure function of its inputs."""
    name: str

    @abstractmethod
    def assign(self, group_spec: GroupSpec, topics: SubscribedTopicDescriber) -> GroupAssignment:
        """The new target assignment: every member of ``group_spec`` maps to a dict."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def subscription_type_of(members: Mapping[str, MemberSubscription]) -> SubscriptionType:
    """HOMOGENEOUS when every member subscribes to the same topic ids (an empty group too)."""
    first = None
    for sub in members.values():
        topics = sub.subscribed_topic_ids
        if first is None:
            first = topics
        elif topics is not first and topics != first:
            return SubscriptionType.HETEROGENEOUS
    return SubscriptionType.HOMOGENEOUS
