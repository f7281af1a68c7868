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
from typing import Any, Protocol

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


@dataclass(frozen=True)
class PartitionSummary:
    """What ReadShareGroupStateSummary answers for one share-partition (no batches):
    what DescribeShareGroupOffsets shows."""

    error_code: ErrorCode = ErrorCode.none
    error_message: str | None = None
    state_epoch: int = 0
    leader_epoch: int = 0
    #: the SPSO; -1 when not initialised
    start_offset: int = -1
    #: KIP-1226: offsets at or above the SPSO whose delivery is complete; -1 when unknown
    delivery_complete_count: int = -1


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

    def read_summary(self, group_id: str, topic_id: uuid.UUID, partition: int,
                     leader_epoch: int = -1) -> PartitionSummary:
        """ReadShareGroupStateSummary: the SPSO and epochs, for DescribeShareGroupOffsets."""


class CoordinatorPersister:
    """The `Persister` over a kgroup `Coordinator`'s share coordinator (Kafka's
    `DefaultStatePersister`): every call builds the kio request Kafka's persister sends
    (Initialize/Read/Write/DeleteShareGroupState, ReadShareGroupStateSummary, one
    share-partition each) and sends it through `coordinator.handle`, so every persisted
    change is a real request writing real `__share_group_state` records.

    Kafka's persister retries NOT_COORDINATOR / COORDINATOR_NOT_AVAILABLE /
    COORDINATOR_LOAD_IN_PROGRESS after finding the coordinator again; in-process there is
    nothing to find, so those codes come back to the caller as they are.
    `write_version` picks WriteShareGroupState v1 (with DeliveryCompleteCount, KIP-1226) or v0.
    """

    def __init__(self, coordinator: Any, *, write_version: int = 1, summary_version: int = 1) -> None:
        self.coordinator = coordinator
        self.write_version = write_version
        self.summary_version = summary_version

    def _send(self, api: str, version: int, group_id: str, topic_id: uuid.UUID, partition: dict) -> Any:
        from kgroup.protocol import request
        req = request(api, version, group_id=group_id, topics=[{"topic_id": topic_id, "partitions": [partition]}])
        from kgroup.authorizer import BROKER_PRINCIPAL
        response = self.coordinator.handle(req, principal=BROKER_PRINCIPAL)  # broker to share coordinator
        for result in response.results:
            if result.topic_id == topic_id:
                for p in result.partitions:
                    if p.partition == partition["partition"]:
                        return p
        return None  # an empty response: Kafka's answer to a malformed request

    def initialize_state(self, group_id: str, topic_id: uuid.UUID, partition: int, state_epoch: int,
                         start_offset: int) -> ErrorCode:
        p = self._send("InitializeShareGroupState", 0, group_id, topic_id,
                       {"partition": partition, "state_epoch": state_epoch, "start_offset": start_offset})
        return _code(p)

    def read_state(self, group_id: str, topic_id: uuid.UUID, partition: int,
                   leader_epoch: int = 0) -> PartitionState:
        p = self._send("ReadShareGroupState", 0, group_id, topic_id,
                       {"partition": partition, "leader_epoch": leader_epoch})
        if p is None:
            return PartitionState(ErrorCode.unknown_server_error, _NO_ANSWER)
        if p.error_code != ErrorCode.none:
            return PartitionState(ErrorCode(p.error_code), p.error_message)
        return PartitionState(
            state_epoch=int(p.state_epoch), start_offset=int(p.start_offset),
            state_batches=tuple(StateBatch(int(b.first_offset), int(b.last_offset), _state(b.delivery_state),
                                           int(b.delivery_count)) for b in p.state_batches))

    def write_state(self, group_id: str, topic_id: uuid.UUID, partition: int, state_epoch: int, leader_epoch: int,
                    start_offset: int, state_batches: tuple[StateBatch, ...], *,
                    delivery_complete_count: int = -1) -> ErrorCode:
        data = {"partition": partition, "state_epoch": state_epoch, "leader_epoch": leader_epoch,
                "start_offset": start_offset,
                "state_batches": [{"first_offset": b.first_offset, "last_offset": b.last_offset,
                                   "delivery_state": int(b.delivery_state), "delivery_count": b.delivery_count}
                                  for b in state_batches]}
        if self.write_version >= 1:
            data["delivery_complete_count"] = delivery_complete_count
        return _code(self._send("WriteShareGroupState", self.write_version, group_id, topic_id, data))

    def delete_state(self, group_id: str, topic_id: uuid.UUID, partition: int) -> ErrorCode:
        return _code(self._send("DeleteShareGroupState", 0, group_id, topic_id, {"partition": partition}))

    def read_summary(self, group_id: str, topic_id: uuid.UUID, partition: int,
                     leader_epoch: int = -1) -> PartitionSummary:
        p = self._send("ReadShareGroupStateSummary", self.summary_version, group_id, topic_id,
                       {"partition": partition, "leader_epoch": leader_epoch})
        if p is None:
            return PartitionSummary(ErrorCode.unknown_server_error, _NO_ANSWER)
        if p.error_code != ErrorCode.none:
            return PartitionSummary(ErrorCode(p.error_code), p.error_message)
        return PartitionSummary(state_epoch=int(p.state_epoch), leader_epoch=int(p.leader_epoch),
                                start_offset=int(p.start_offset),
                                delivery_complete_count=int(getattr(p, "delivery_complete_count", -1)))


_NO_ANSWER = "The share coordinator answered nothing for this share-partition."


def _code(p: Any) -> ErrorCode:
    # an empty response (empty group id, no partitions) is no success: Kafka's persister
    # reports an unexpected response as UNKNOWN_SERVER_ERROR
    return ErrorCode.unknown_server_error if p is None else ErrorCode(p.error_code)


def _state(value: int) -> DeliveryState | int:
    try:
        return DeliveryState(int(value))
    except ValueError:  # a state kgroup has no name for (e.g. Kafka's ARCHIVING, 3): kept as is
        return int(value)


__all__ = ["DeliveryState", "StateBatch", "PartitionState", "PartitionSummary", "Persister", "CoordinatorPersister"]
