"""Replay of the records every modern group writes, once for consumer, share and Streams groups.

Each type's `replay.py` declares how a record's value becomes its member, its current assignment
and its target (`replay_members`), and replays its own records (regexes, topology, share state)
with `replay_of`. Tombstones follow Kafka's checks: a member is deleted only after its current and
target assignments were; a group only when its members and targets were.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kgroup.groups.modern import LEAVE_GROUP_MEMBER_EPOCH, ModernGroup, ReplayError
from kgroup.runtime import replays

#: fn(coordinator, entry) -> the record's group of one type (created by a value, never by a tombstone)
Resolve = Callable[[Any, Any], "ModernGroup | None"]


def persisted_group(c: Any, group_id: str, create: bool, group_type: type, make: Callable[[], Any]) -> Any:
    """Kafka's `getOrMaybeCreatePersisted...Group` for replay: the group of `group_type`, created
    with `make()` when a record creates it (never a tombstone); a simple classic group (one that
    only holds offsets) gives way; any other group type is an error."""
    group = c.groups.get(group_id)
    if isinstance(group, group_type):
        return group
    if group is None and not create:
        return None
    if group is None or (str(group.type) == "classic" and group.is_simple()):
        group = c.groups[group_id] = make()
        return group
    raise ReplayError(f"Group {group_id} is not a {group_type.type} group")


def resolver(group_type: type, make: Callable[[Any, str], Any]) -> Resolve:
    """The `Resolve` of one group type: `make(coordinator, group_id)` builds a new group."""
    def resolve(c: Any, entry: Any) -> Any:
        key = entry.record.key
        return persisted_group(c, key.group_id, entry.record.value is not None, group_type,
                               lambda: make(c, key.group_id))
    return resolve


def replay_of(resolve: Resolve, *record_classes: type):
    """Register ``fn(c, entry, key, value, group)`` as the replay of `record_classes`; it runs only
    when the group exists or the record creates it (a tombstone for a missing group does nothing)."""
    def register(fn: Callable[[Any, Any, Any, Any, Any], None]):
        def replay(c: Any, entry: Any) -> None:
            group = resolve(c, entry)
            if group is not None:
                fn(c, entry, entry.record.key, entry.record.value, group)
        replays(*record_classes)(replay)
        return fn
    return register


def replay_group_tombstone(c: Any, group: ModernGroup, group_id: str) -> None:
    """The group-metadata tombstone: the group goes (DEAD) once its members and target
    assignments were deleted first (Kafka's check in `replay(...GroupMetadataKey, null)`)."""
    if group.members or group.target_assignment:
        raise ReplayError(f"Received a tombstone record to delete group {group_id} but the group still "
                          "has members or target assignments.")
    group.deleted = True
    del c.groups[group_id]


def member_tombstone_allowed(group: ModernGroup, member_id: str) -> bool:
    """Whether a member-metadata tombstone removes the member: it must be there, and its
    current assignment (epoch -1) and target assignment must have been deleted before."""
    old = group.members.get(member_id)
    if old is None:
        return False
    family = group.kind.family
    if old.member_epoch != LEAVE_GROUP_MEMBER_EPOCH:
        raise ReplayError(f"Received a tombstone record to delete member {member_id} but did not receive "
                          f"{family}CurrentMemberAssignmentValue tombstone.")
    if member_id in group.target_assignment:
        raise ReplayError(f"Received a tombstone record to delete member {member_id} but did not receive "
                          f"{family}TargetAssignmentMetadataValue tombstone.")
    return True


def replay_members(kind: Any, group_type: type, make: Callable[[Any, str], Any], *,
                   member: Callable[[str, Any, Any], Any], assignment: Callable[[Any, Any], Any],
                   target: Callable[[Any], Any], new_member: Callable[[str], Any],
                   metadata: Callable[[Any, Any, Any, Any], None] | None = None,
                   check_tombstone: Callable[[Any, str], None] | None = None) -> Resolve:
    """Register the replay of the five records every modern group writes, and return the type's
    `Resolve` for its own records. The type declares only how a group is made, `make(coordinator,
    group_id)`, and its conversions: `member(member_id, old or None, value)`, `assignment(member,
    value)` (its current assignment), `target(value)`, `new_member(member_id)`; what else its group
    metadata record holds, `metadata(c, entry, value, group)` (before the epoch moves), and its own
    checks of that record's tombstone, `check_tombstone(group, group_id)` (Kafka's words). Its
    members answer `with_assignment_deleted()` and its group `remove_member(id, timestamp)`."""
    records = kind.records
    resolve = resolver(group_type, make)

    @replay_of(resolve, records["Metadata"])
    def _metadata(c: Any, entry: Any, key: Any, value: Any, group: Any) -> None:
        if value is None:
            if check_tombstone is not None:
                check_tombstone(group, key.group_id)
            replay_group_tombstone(c, group, key.group_id)
            return
        if metadata is not None:
            metadata(c, entry, value, group)
        group.group_epoch = value.epoch
        group.metadata_hash = value.metadata_hash

    @replay_of(resolve, records["MemberMetadata"])
    def _member(c: Any, entry: Any, key: Any, value: Any, group: Any) -> None:
        if value is None:
            if member_tombstone_allowed(group, key.member_id):
                group.remove_member(key.member_id, entry.timestamp if entry.timestamp is not None else c.now())
            return
        group.update_member(member(key.member_id, group.members.get(key.member_id), value))

    @replay_of(resolve, records["TargetAssignmentMetadata"])
    def _target_epoch(c: Any, entry: Any, key: Any, value: Any, group: Any) -> None:
        """The assignment epoch and timestamp (its tombstone: -1 and 0, allowed only once no
        member has a target assignment left; Kafka's words differ by type)."""
        if value is None:
            if group.target_assignment:
                raise ReplayError(kind.target_epoch_tombstone_refused.format(
                    group_id=key.group_id, members=len(group.target_assignment)))
            group.assignment_epoch = -1
            group.assignment_timestamp = 0
            return
        group.assignment_epoch = value.assignment_epoch
        timestamp = getattr(value, "assignment_timestamp", None)
        if timestamp is not None:
            group.assignment_timestamp = timestamp

    @replay_of(resolve, records["TargetAssignmentMember"])
    def _target_member(c: Any, entry: Any, key: Any, value: Any, group: Any) -> None:
        if value is None:
            group.target_assignment.pop(key.member_id, None)
        else:
            group.target_assignment[key.member_id] = target(value)

    @replay_of(resolve, records["CurrentMemberAssignment"])
    def _current(c: Any, entry: Any, key: Any, value: Any, group: Any) -> None:
        old = group.members.get(key.member_id)
        if value is None:
            if old is not None:
                group.update_member(old.with_assignment_deleted())
            return
        group.update_member(assignment(old if old is not None else new_member(key.member_id), value))

    return resolve


__all__ = ["Resolve", "persisted_group", "resolver", "replay_of", "replay_group_tombstone",
           "member_tombstone_allowed", "replay_members"]
