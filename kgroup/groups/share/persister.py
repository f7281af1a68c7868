"""The boundary between a share-partition leader and the share coordinator (KIP-932).

In Kafka the share-partition leader (on the topic-partition's broker) keeps the in-flight
records in memory and persists what must survive a leader move through the `Persister`
(`DefaultStatePersister`), which sends Initialize/Read/Write/Delete share-group-state RPCs
to the share coordinator; the share coordinator writes ShareSnapshot/ShareUpdate records to
`__share_group_state`. kgroup keeps the same split: the leader only sees this interface, and
the share coordinator's implementation sends the very same kio requests through
`Coordinator.handle`, so every persisted change is a real request and real records.

Only durable state crosses this boundary: Acquired is never persisted (a record in flight
when a leader moves is Available again, its delivery count kept).
"""
from __future__ import annotations

import enum
import uuid
from dataclasses import dataclass, field
from typing import Protocol

from kgroup.errors import ErrorCode


class DeliveryState(enum.IntEnum):
    """A record's state as persisted in a state batch (Kafka's `RecordState` ids).

    Acquired (1) exists only in the leader's memory; it is never written."""

    AVAILABLE = 0
    ACQUIRED = 1
    ACKNOWLEDGED = 2
    ARCHIVED = 4


@dataclass(frozen=True)
class StateBatch:
    """A run of offsets sharing one state and delivery count (Kafka's `PersisterStateBatch`)."""

    first_offset: int
    last_offset: int
    delivery_state: DeliveryState
    delivery_count: int


@dataclass(frozen=True)
class PartitionState:
    """What ReadShareGroupState answers for one share-partition."""

    error_code: ErrorCode = ErrorCode.none
    error_message: str | None = None
    #: bumped by an admin reset (AlterShareGroupOffsets): a leader holding an older epoch
    #: must drop its in-flight state and read again
    state_epoch: int = 0
    #: the share-partition start offset (SPSO); -1 when not initialised yet
    start_offset: int = -1
    state_batches: tuple[StateBatch, ...] = field(default_factory=tuple)


class Persister(Protocol):
    """The share-partition leader's view of the share coordinator (Kafka's `Persister`).

    Errors come back as Kafka error codes, never as exceptions."""

    def initialize_state(self, group_id: str, topic_id: uuid.UUID, partition: int, state_epoch: int,
                         start_offset: int) -> ErrorCode:
        """InitializeShareGroupState: create the share-partition's state at `start_offset`."""

    def read_state(self, group_id: str, topic_id: uuid.UUID, partition: int,
                   leader_epoch: int = 0) -> PartitionState:
        """ReadShareGroupState: the durable state, as a new leader loads it."""

    def write_state(self, group_id: str, topic_id: uuid.UUID, partition: int, state_epoch: int, leader_epoch: int,
                    start_offset: int, state_batches: tuple[StateBatch, ...]) -> ErrorCode:
        """WriteShareGroupState: the SPSO (-1: unchanged) and the batches whose state changed."""

    def delete_state(self, group_id: str, topic_id: uuid.UUID, partition: int) -> ErrorCode:
        """DeleteShareGroupState: forget the share-partition (group or offsets deleted)."""


__all__ = ["DeliveryState", "StateBatch", "PartitionState", "Persister"]
