"""Replay of the share-group records (types 9-15): the only code that changes a `ShareGroup`.

Tombstones follow Kafka's checks (as for consumer groups): a member is deleted only after its
current and target assignments were, a group only when it has no members left.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kgroup import records as R
from kgroup.groups.modern import (CONSUMER_MEMBER_STATE, LEAVE_GROUP_MEMBER_EPOCH, member_tombstone_allowed,
                                  replay_group_tombstone, replay_target, replay_target_epoch, replay_target_member)
from kgroup.runtime import replays

from .group import (ShareGroup, ShareGroupMember, StatePartitionMetadata, assignment_of, member_from_value,
                    state_metadata_from_value)

if TYPE_CHECKING:
    from kgroup.coordinator import Coordinator


def _target(c: "Coordinator", entry: Any) -> tuple[Any, Any, ShareGroup | None]:
    return replay_target(c, entry, ShareGroup, lambda: ShareGroup(entry.record.key.group_id))


@replays(R.ShareGroupMetadata)
def _metadata(c: "Coordinator", entry: Any) -> None:
    key, value, group = _target(c, entry)
    if group is None:
        return
    if value is None:
        replay_group_tombstone(c, group, key.group_id)
        return
    group.group_epoch = value.epoch
    group.metadata_hash = value.metadata_hash


@replays(R.ShareGroupPartitionMetadata)
def _partition_metadata(c: "Coordinator", entry: Any) -> None:
    """Obsolete (Kafka wrote it before the metadata hash): only its presence is kept, so the
    next epoch update deletes it, as Kafka does with the consumer-group equivalent."""
    key, value, group = _target(c, entry)
    if group is not None:
        group.has_partition_metadata_record = value is not None


@replays(R.ShareGroupMemberMetadata)
def _member(c: "Coordinator", entry: Any) -> None:
    key, value, group = _target(c, entry)
    if group is None:
        return
    if value is None:
        if member_tombstone_allowed(group, key.member_id, "ShareGroup"):
            group.remove_member(key.member_id, entry.timestamp if entry.timestamp is not None else c.now())
        return
    group.update_member(member_from_value(key.member_id, group.members.get(key.member_id), value))


@replays(R.ShareGroupTargetAssignmentMetadata)
def _target_epoch(c: "Coordinator", entry: Any) -> None:
    key, value, group = _target(c, entry)
    if group is not None:
        replay_target_epoch(group, key.group_id, value)


@replays(R.ShareGroupTargetAssignmentMember)
def _target_member(c: "Coordinator", entry: Any) -> None:
    key, value, group = _target(c, entry)
    if group is not None:
        replay_target_member(group, key.member_id, value, lambda v: assignment_of(v.topic_partitions))


@replays(R.ShareGroupCurrentMemberAssignment)
def _current(c: "Coordinator", entry: Any) -> None:
    key, value, group = _target(c, entry)
    if group is None:
        return
    old = group.members.get(key.member_id)
    if value is None:
        if old is not None:
            group.update_member(old.replace(member_epoch=LEAVE_GROUP_MEMBER_EPOCH,
                                            previous_member_epoch=LEAVE_GROUP_MEMBER_EPOCH, assigned_partitions={}))
        return
    base = old if old is not None else ShareGroupMember(key.member_id)
    group.update_member(base.replace(member_epoch=value.member_epoch, previous_member_epoch=value.previous_member_epoch,
                                     state=CONSUMER_MEMBER_STATE.decode(value.state),
                                     assigned_partitions=assignment_of(value.assigned_partitions)))


@replays(R.ShareGroupStatePartitionMetadata)
def _state_metadata(c: "Coordinator", entry: Any) -> None:
    key, value, group = _target(c, entry)
    if group is None:
        return
    group.state_metadata = StatePartitionMetadata() if value is None else state_metadata_from_value(value, c.now())
