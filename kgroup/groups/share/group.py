"""A KIP-932 share group as the coordinator keeps it: members, epochs, the target assignment,
and which share-partitions have durable state (initializing, initialized, deleting).

Everything here is rebuilt by replaying records 9-15; the handlers (`protocol.py`,
`offsets.py`) only read it. Record 15's types and builders live with the rest of the durable
share-partition state in `state.py` (re-exported here). A share group is a KIP-848 group without reconciliation: a
member takes its target assignment at once (no fencing, no revocation), so the group is
EMPTY, STABLE or DEAD (the KIP's "Share group states").
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kgroup import records as R
from kgroup.errors import ErrorCode, KafkaError
from kgroup.groups.base import GroupType, OffsetCommitContext
from kgroup.groups.modern import (CONSUMER_MEMBER_STATE, Assignment, MemberState, ModernGroup, ModernGroupState,
                                  assignment_of, topic_partitions)
from kgroup.javaorder import java_string_set_order

from .state import (InitTopic, StatePartitionMetadata, before_delete_group, delete_group_state, delete_request,
                    state_metadata_from_value, state_metadata_record, state_metadata_tombstone, state_partitions)

SHARE_PROTOCOL_TYPE = "share"


@dataclass(frozen=True)
class ShareGroupMember:
    """One member (Kafka's `ShareGroupMember`): subscription + assignment, no instance id."""

    member_id: str
    rack_id: str | None = None
    client_id: str = ""
    client_host: str = ""
    subscribed_topic_names: frozenset[str] = frozenset()
    member_epoch: int = 0
    previous_member_epoch: int = 0
    state: MemberState = MemberState.STABLE
    assigned_partitions: Assignment = field(default_factory=dict)
    #: share groups have no static members (the KIP: "Share groups do not support static membership")
    instance_id: None = None

    def replace(self, **changes: Any) -> "ShareGroupMember":
        return dataclasses.replace(self, **changes)

    def is_reconciled_to(self, target_epoch: int) -> bool:
        return self.state == MemberState.STABLE and self.member_epoch == target_epoch


class ShareGroup(ModernGroup):
    """A KIP-932 share group."""

    type = GroupType.SHARE

    def __init__(self, group_id: str) -> None:
        super().__init__(group_id)
        self.members: dict[str, ShareGroupMember] = {}
        self.target_assignment: dict[str, Assignment] = {}
        self.state_metadata = StatePartitionMetadata()
        #: an obsolete ShareGroupPartitionMetadata record (9) is in the log (Kafka wrote it
        #: before the metadata hash); a heartbeat deletes it
        self.has_partition_metadata_record = False
        #: when the last member left (the timestamp of that record; -1 while members are in)
        self.empty_since_ms = -1
        #: the union of the members' subscriptions (a cache, reset by the replay helpers below)
        self._subscribed: frozenset[str] | None = None

    # -- Group interface ----------------------------------------------------------------
    @property
    def protocol_type(self) -> str:
        return SHARE_PROTOCOL_TYPE

    @property
    def modern_state(self) -> ModernGroupState:
        """EMPTY, STABLE or DEAD: no ASSIGNING or RECONCILING (KIP-932 "Share group states")."""
        if self.deleted:
            return ModernGroupState.DEAD
        return ModernGroupState.EMPTY if not self.members else ModernGroupState.STABLE

    def validate_offset_commit(self, ctx: OffsetCommitContext) -> None:
        # Share groups keep no committed offsets (their SPSO lives in the share coordinator).
        raise KafkaError(ErrorCode.group_id_not_found, f"Group {self.group_id} is not a consumer group.")

    def validate_offset_fetch(self, member_id: str | None, member_epoch: int) -> None:
        raise KafkaError(ErrorCode.group_id_not_found, f"Group {self.group_id} is not a consumer group.")

    def validate_offset_delete(self) -> None:
        raise KafkaError(ErrorCode.group_id_not_found, f"Group {self.group_id} is not a consumer group.")

    def validate_delete_group(self) -> None:
        if self.members:
            raise KafkaError(ErrorCode.non_empty_group, f"group {self.group_id} is not empty")

    def offset_expiration_base(self, commit_timestamp: int) -> int | None:
        return None

    def should_expire(self, coordinator: Any) -> bool:
        """The draft KIP: a group "EMPTY for a configured period" goes DEAD and is deleted
        (here offsets.retention.minutes, counted from when the last member left); Kafka's
        `ShareGroup.shouldExpire` is false: share groups stay until deleted."""
        if not coordinator.profile.share_empty_group_expires:
            return False
        retention_ms = coordinator.config["offsets.retention.minutes"] * 60_000
        return self.empty_since_ms >= 0 and coordinator.now() - self.empty_since_ms >= retention_ms

    def before_delete(self, coordinator: Any) -> list:
        """Deleted in one go (the periodic clean-up): the share coordinator forgets the group's
        share-partitions first."""
        return before_delete_group(coordinator, self)

    def prepare_delete(self, coordinator: Any) -> tuple[list, Callable[[], ErrorCode] | None]:
        """DeleteGroups' first step for a share group (Kafka's `sharePartitionDeleteRequests`, a
        write of its own): record 15 with the share-partitions to delete moved to deleting, and the
        share coordinator's delete to run once it is written (None: nothing to delete). The
        tombstones follow in a second write, only when that delete succeeded."""
        records, topics = delete_request(coordinator, self)
        if not topics:
            return records, None
        partitions = state_partitions(coordinator, self.state_metadata, topics)
        return records, lambda: delete_group_state(coordinator, self.group_id, topics, partitions)

    def is_subscribed_to_topic(self, topic: str) -> bool:
        return any(topic in m.subscribed_topic_names for m in self.members.values())

    def tombstones(self) -> list:
        """Kafka's `ShareGroup.createGroupTombstoneRecords`, in its order."""
        g = self.group_id
        out: list[Any] = [current_assignment_tombstone(g, m) for m in self.members]
        out += [target_member_tombstone(g, m) for m in self.members]
        out.append(R.ShareGroupTargetAssignmentMetadata.tombstone(R.ShareGroupTargetAssignmentMetadataKey(group_id=g)))
        out += [member_tombstone(g, m) for m in self.members]
        if self.has_partition_metadata_record:
            out.append(partition_metadata_tombstone(g))
        out.append(state_metadata_tombstone(g))
        out.append(R.ShareGroupMetadata.tombstone(R.ShareGroupMetadataKey(group_id=g)))
        return out

    # -- what the group subscribes to -----------------------------------------------------
    def subscribed_topic_names(self, members: Mapping[str, ShareGroupMember] | None = None) -> set[str]:
        if members is None:
            # every heartbeat asks: kept until a member record is replayed
            if self._subscribed is None:
                self._subscribed = frozenset(self.subscribed_topic_names(self.members))
            return set(self._subscribed)
        names: set[str] = set()
        for m in members.values():
            names |= m.subscribed_topic_names
        return names

    # -- replay helpers -------------------------------------------------------------------
    def update_member(self, member: ShareGroupMember) -> None:
        self.members[member.member_id] = member
        self.empty_since_ms = -1
        self._subscribed = None

    def remove_member(self, member_id: str, timestamp: int) -> None:
        self.members.pop(member_id, None)
        self._subscribed = None
        if not self.members:
            self.empty_since_ms = timestamp

    # -- display ------------------------------------------------------------------------
    def describe_members(self) -> list[dict]:
        return [{"member_id": m.member_id, "client_id": m.client_id, "rack_id": m.rack_id,
                 "member_epoch": m.member_epoch, "state": m.state.label, "protocol": "share",
                 "subscribed_topic_names": sorted(m.subscribed_topic_names),
                 "assigned": {str(t): sorted(ps) for t, ps in m.assigned_partitions.items()},
                 "target": {str(t): sorted(ps) for t, ps in self.target_assignment.get(m.member_id, {}).items()}}
                for m in self.members.values()]

    def describe(self) -> dict:
        out = super().describe()
        sm = self.state_metadata
        out.update(assignment_epoch=self.assignment_epoch, metadata_hash=self.metadata_hash,
                   initialized={str(t): sorted(v.partitions) for t, v in sm.initialized.items()},
                   initializing={str(t): sorted(v.partitions) for t, v in sm.initializing.items()},
                   deleting=sorted(sm.deleting.values()))
        return out

    def __repr__(self) -> str:
        return (f"ShareGroup({self.group_id!r}, {self.state}, epoch={self.group_epoch}, "
                f"assignment_epoch={self.assignment_epoch}, members={list(self.members)})")


def share_group(c: "Coordinator", group_id: str) -> ShareGroup:
    """Kafka's `shareGroup(groupId)`: GROUP_ID_NOT_FOUND for a missing group or another type."""
    group = c.groups.get(group_id)
    if group is None:
        raise KafkaError(ErrorCode.group_id_not_found, f"Group {group_id} not found.")
    if not isinstance(group, ShareGroup):
        raise KafkaError(ErrorCode.group_id_not_found, f"Group {group_id} is not a share group.")
    return group


# ---------------------------------------------------------------------------------------
# Records (Kafka's GroupCoordinatorRecordHelpers for share groups)

def group_epoch_record(group_id: str, epoch: int, metadata_hash: int) -> Any:
    return R.ShareGroupMetadata(R.ShareGroupMetadataKey(group_id=group_id),
                                R.ShareGroupMetadataValue(epoch=epoch, metadata_hash=metadata_hash))


def member_record(group_id: str, m: ShareGroupMember) -> Any:
    return R.ShareGroupMemberMetadata(
        R.ShareGroupMemberMetadataKey(group_id=group_id, member_id=m.member_id),
        R.ShareGroupMemberMetadataValue(rack_id=m.rack_id, client_id=m.client_id, client_host=m.client_host,
                                        subscribed_topic_names=java_string_set_order(m.subscribed_topic_names)))


def member_tombstone(group_id: str, member_id: str) -> Any:
    return R.ShareGroupMemberMetadata.tombstone(R.ShareGroupMemberMetadataKey(group_id=group_id, member_id=member_id))


def target_member_record(group_id: str, member_id: str, assignment: Assignment) -> Any:
    V = R.ShareGroupTargetAssignmentMemberValue
    return R.ShareGroupTargetAssignmentMember(
        R.ShareGroupTargetAssignmentMemberKey(group_id=group_id, member_id=member_id),
        V(topic_partitions=topic_partitions(V.TopicPartition, assignment)))


def target_member_tombstone(group_id: str, member_id: str) -> Any:
    return R.ShareGroupTargetAssignmentMember.tombstone(
        R.ShareGroupTargetAssignmentMemberKey(group_id=group_id, member_id=member_id))


def target_epoch_record(group_id: str, epoch: int, timestamp: int = 0) -> Any:
    """The assignment epoch, and when that assignment was computed (KIP-1263; 0 when no
    assignment was computed, as when the last member left)."""
    return R.ShareGroupTargetAssignmentMetadata(
        R.ShareGroupTargetAssignmentMetadataKey(group_id=group_id),
        R.ShareGroupTargetAssignmentMetadataValue(assignment_epoch=epoch, assignment_timestamp=timestamp))


def current_assignment_record(group_id: str, m: ShareGroupMember) -> Any:
    V = R.ShareGroupCurrentMemberAssignmentValue
    return R.ShareGroupCurrentMemberAssignment(
        R.ShareGroupCurrentMemberAssignmentKey(group_id=group_id, member_id=m.member_id),
        V(member_epoch=m.member_epoch, previous_member_epoch=m.previous_member_epoch,
          state=CONSUMER_MEMBER_STATE.encode(m.state),
          assigned_partitions=topic_partitions(V.TopicPartitions, m.assigned_partitions)))


def current_assignment_tombstone(group_id: str, member_id: str) -> Any:
    return R.ShareGroupCurrentMemberAssignment.tombstone(
        R.ShareGroupCurrentMemberAssignmentKey(group_id=group_id, member_id=member_id))


def partition_metadata_tombstone(group_id: str) -> Any:
    return R.ShareGroupPartitionMetadata.tombstone(R.ShareGroupPartitionMetadataKey(group_id=group_id))


def member_from_value(member_id: str, old: ShareGroupMember | None, value: Any) -> ShareGroupMember:
    base = old if old is not None else ShareGroupMember(member_id)
    return base.replace(rack_id=value.rack_id, client_id=value.client_id, client_host=value.client_host,
                        subscribed_topic_names=frozenset(value.subscribed_topic_names))


__all__ = ["ShareGroup", "ShareGroupMember", "StatePartitionMetadata", "InitTopic", "SHARE_PROTOCOL_TYPE",
           "share_group",
           "group_epoch_record", "member_record", "member_tombstone", "target_member_record",
           "target_member_tombstone", "target_epoch_record", "current_assignment_record",
           "current_assignment_tombstone", "partition_metadata_tombstone", "state_metadata_record",
           "state_metadata_tombstone", "member_from_value", "assignment_of", "state_metadata_from_value"]
