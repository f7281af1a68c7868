"""Replay of the consumer-group records (types 3-8 and 16): the only code that changes a
`ConsumerGroup`. Tombstones follow Kafka's checks: a member is deleted only after its
current and target assignments were.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kgroup import records as R
from kgroup.groups.modern import (LEAVE_GROUP_MEMBER_EPOCH, assignment_of, member_tombstone_allowed,
                                  replay_group_tombstone, replay_target, replay_target_epoch, replay_target_member)
from kgroup.groups.modern import persisted_group as modern_persisted_group
from kgroup.runtime import replays

from .group import ConsumerGroup, ResolvedRegularExpression, member_assignment_from_value, member_from_value

if TYPE_CHECKING:
    from kgroup.coordinator import Coordinator


def persisted_group(c: "Coordinator", group_id: str, create: bool) -> ConsumerGroup | None:
    return modern_persisted_group(c, group_id, create, ConsumerGroup, lambda: ConsumerGroup(group_id))


def _target(c: "Coordinator", entry: Any) -> tuple[Any, Any, ConsumerGroup | None]:
    """The record's key and value, and its group (created by a value, never by a tombstone)."""
    return replay_target(c, entry, ConsumerGroup, lambda: ConsumerGroup(entry.record.key.group_id))


@replays(R.ConsumerGroupMetadata)
def _metadata(c: "Coordinator", entry: Any) -> None:
    key, value, group = _target(c, entry)
    if group is None:
        return
    if value is None:
        replay_group_tombstone(c, group, key.group_id)
        return
    group.group_epoch = value.epoch
    group.metadata_hash = value.metadata_hash
    if value.creation_time_ms != -1:
        group.creation_time_ms = value.creation_time_ms


@replays(R.ConsumerGroupPartitionMetadata)
def _partition_metadata(c: "Coordinator", entry: Any) -> None:
    """The subscription metadata Kafka wrote before 4.1 (replaced by the metadata hash)."""
    key, value, group = _target(c, entry)
    if group is None:
        return
    group.partition_metadata = None if value is None else {
        t.topic_name: (t.topic_id, t.num_partitions) for t in value.topics}


@replays(R.ConsumerGroupMemberMetadata)
def _member(c: "Coordinator", entry: Any) -> None:
    key, value, group = _target(c, entry)
    if group is None:
        return
    if value is None:
        if member_tombstone_allowed(group, key.member_id, "ConsumerGroup"):
            group.remove_member(key.member_id)
        return
    group.update_member(member_from_value(key.member_id, group.members.get(key.member_id), value))


@replays(R.ConsumerGroupTargetAssignmentMetadata)
def _target_epoch(c: "Coordinator", entry: Any) -> None:
    key, value, group = _target(c, entry)
    if group is not None:
        replay_target_epoch(group, key.group_id, value)


@replays(R.ConsumerGroupTargetAssignmentMember)
def _target_member(c: "Coordinator", entry: Any) -> None:
    key, value, group = _target(c, entry)
    if group is not None:
        replay_target_member(group, key.member_id, value, lambda v: assignment_of(v.topic_partitions))


@replays(R.ConsumerGroupCurrentMemberAssignment)
def _current(c: "Coordinator", entry: Any) -> None:
    key, value, group = _target(c, entry)
    if group is None:
        return
    old = group.members.get(key.member_id)
    if value is None:
        if old is not None:
            group.update_member(old.replace(member_epoch=LEAVE_GROUP_MEMBER_EPOCH,
                                            previous_member_epoch=LEAVE_GROUP_MEMBER_EPOCH,
                                            assigned_partitions={}, partitions_pending_revocation={}))
        return
    if old is None:
        from .group import ConsumerGroupMember
        old = ConsumerGroupMember(key.member_id)
    group.update_member(member_assignment_from_value(old, value))


@replays(R.ConsumerGroupRegularExpression)
def _regex(c: "Coordinator", entry: Any) -> None:
    key, value, group = _target(c, entry)
    if group is None:
        return
    if value is None:
        group.resolved_regexes.pop(key.regular_expression, None)
        return
    group.resolved_regexes[key.regular_expression] = ResolvedRegularExpression(
        frozenset(value.topics), value.version, value.timestamp)
