"""Replay of the Streams-group records (types 17-23): the only code that changes a
`StreamsGroup`. Tombstones follow Kafka's checks: a member is deleted only after its
current and target assignments were.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kgroup import records as R
from kgroup.groups.modern import (LEAVE_GROUP_MEMBER_EPOCH, ReplayError, member_tombstone_allowed,
                                  replay_group_tombstone, replay_target, replay_target_epoch, replay_target_member)
from kgroup.groups.modern import persisted_group as modern_persisted_group
from kgroup.metrics import record_streams_rebalance
from kgroup.runtime import replays

from .group import (EMPTY_TASKS, StreamsGroup, StreamsGroupMember,
                    assignment_from_value, member_from_value, target_from_value)
from .topology import Topology

if TYPE_CHECKING:
    from kgroup.coordinator import Coordinator


def persisted_group(c: "Coordinator", group_id: str, create: bool) -> StreamsGroup | None:
    return modern_persisted_group(c, group_id, create, StreamsGroup, lambda: StreamsGroup(group_id, c.cluster))


def _target(c: "Coordinator", entry: Any) -> tuple[Any, Any, StreamsGroup | None]:
    return replay_target(c, entry, StreamsGroup, lambda: StreamsGroup(entry.record.key.group_id, c.cluster))


@replays(R.StreamsGroupMetadata)
def _metadata(c: "Coordinator", entry: Any) -> None:
    key, value, group = _target(c, entry)
    if group is None:
        return
    if value is None:
        # Kafka's checks and words (the members, then the target-assignment metadata, go first).
        if group.members:
            raise ReplayError(f"Received a tombstone record to delete group {key.group_id} but the group still "
                              f"has {len(group.members)} members.")
        if group.assignment_epoch != -1:
            raise ReplayError(f"Received a tombstone record to delete group {key.group_id} but did not receive "
                              "StreamsGroupTargetAssignmentMetadataValue tombstone.")
        replay_group_tombstone(c, group, key.group_id)
        return
    if value.epoch > group.group_epoch:
        group.rebalances += 1
        record_streams_rebalance(c, entry.timestamp if entry.timestamp is not None else c.now())
    group.group_epoch = value.epoch
    group.metadata_hash = value.metadata_hash
    group.validated_topology_epoch = value.validated_topology_epoch
    # Either layout; none kept (null: written before Kafka 4.2 kept them) is an empty map, as Kafka's
    # replay leaves it: the next heartbeat sees the configs changed and bumps once, as Kafka does.
    group.assignment_configs = entry.record.assignment_configs() or {}
    group.stored_description_topology_epoch = value.stored_description_topology_epoch
    group.failed_description_topology_epoch = value.failed_description_topology_epoch


@replays(R.StreamsGroupPartitionMetadata, R.StreamsGroupTargetAssignmentResolvedTopicIds)
def _obsolete(c: "Coordinator", entry: Any) -> None:
    """Records older (or newer) coordinators wrote that hold nothing kgroup derives from:
    partition metadata was replaced by the metadata hash; resolved topic ids are derived."""
    _target(c, entry)


@replays(R.StreamsGroupTopology)
def _topology(c: "Coordinator", entry: Any) -> None:
    key, value, group = _target(c, entry)
    if group is None:
        return
    group.topology = None if value is None else Topology.from_record(value)


@replays(R.StreamsGroupMemberMetadata)
def _member(c: "Coordinator", entry: Any) -> None:
    key, value, group = _target(c, entry)
    if group is None:
        return
    old = group.members.get(key.member_id)
    if value is None:
        if member_tombstone_allowed(group, key.member_id, "StreamsGroup"):
            group.remove_member(key.member_id)
        return
    # (The endpoint-information epoch is soft state the heartbeat moves, as in Kafka: not replayed.)
    group.update_member(member_from_value(key.member_id, old, value))


@replays(R.StreamsGroupTargetAssignmentMetadata)
def _target_epoch(c: "Coordinator", entry: Any) -> None:
    key, value, group = _target(c, entry)
    if group is None:
        return
    if value is None and group.target_assignment:
        raise ReplayError(f"Received a tombstone record to delete target assignment of {key.group_id} but the "
                          f"assignment still has {len(group.target_assignment)} members.")
    replay_target_epoch(group, key.group_id, value)


@replays(R.StreamsGroupTargetAssignmentMember)
def _target_member(c: "Coordinator", entry: Any) -> None:
    key, value, group = _target(c, entry)
    if group is not None:
        replay_target_member(group, key.member_id, value, target_from_value)


@replays(R.StreamsGroupCurrentMemberAssignment)
def _current(c: "Coordinator", entry: Any) -> None:
    key, value, group = _target(c, entry)
    if group is None:
        return
    old = group.members.get(key.member_id)
    if value is None:
        if old is not None:
            group.update_member(old.replace(member_epoch=LEAVE_GROUP_MEMBER_EPOCH,
                                            previous_member_epoch=LEAVE_GROUP_MEMBER_EPOCH,
                                            assigned=EMPTY_TASKS, pending_revocation=EMPTY_TASKS))
        return
    group.update_member(assignment_from_value(old if old is not None else StreamsGroupMember(key.member_id), value))


__all__ = ["persisted_group"]
