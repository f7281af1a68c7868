"""A KIP-932 share group as the coordinator keeps it: members, epochs, the target assignment,
and which share-partitions have durable state (initializing, initialized, deleting).

Everything here is rebuilt by replaying records 9-15; the handlers (`protocol.py`,
`offsets.py`) only read it. Record 15's types and builders live with the rest of the durable
share-partition state in `state.py` (re-exported here). A share group is a KIP-848 group without reconciliation: a
member takes its target assignment at once (no fencing, no revocation), so the group is
EMPTY, STABLE or DEAD (the KIP's "Share group states").
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kgroup import records as R
from kgroup.errors import ErrorCode, KafkaError
from kgroup.groups.base import OffsetCommitContext
from kgroup.groups.kinds import SHARE
from kgroup.groups.modern import (LEAVE_GROUP_MEMBER_EPOCH, Assignment, MemberState, ModernGroup, ModernGroupState,
                                  ModernMember, assignment_of, topic_partitions)
from kgroup.javaorder import java_string_set_order

from .state import (InitTopic, StatePartitionMetadata, before_delete_group, delete_group_state, delete_request,
                    state_metadata_from_value, state_metadata_record, state_metadata_tombstone, state_partitions)

SHARE_PROTOCOL_TYPE = "share"


@dataclass(frozen=True)
class ShareGroupMember(ModernMember):
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

    def with_assignment_deleted(self) -> "ShareGroupMember":
        """The member once its current-assignment tombstone is replayed (Kafka's replay)."""
        return self.replace(member_epoch=LEAVE_GROUP_MEMBER_EPOCH, previous_member_epoch=LEAVE_GROUP_MEMBER_EPOCH,
                            assigned_partitions={})


class ShareGroup(ModernGroup[ShareGroupMember, Assignment]):
    """A KIP-932 share group."""

    kind = SHARE

    def __init__(self, group_id: str) -> None:
        super().__init__(group_id)
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
        out = SHARE.group_tombstones(g, self.members)
        if self.has_partition_metadata_record:
            out.append(partition_metadata_tombstone(g))
        out.append(state_metadata_tombstone(g))
        out.append(SHARE.metadata_tombstone(g))
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
    return SHARE.group(c, group_id)


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


member_tombstone = SHARE.member_tombstone
target_member_tombstone = SHARE.target_member_tombstone
target_epoch_record = SHARE.target_epoch
current_assignment_tombstone = SHARE.current_assignment_tombstone
target_member_record = SHARE.partitions_target_member


def current_assignment_record(group_id: str, m: ShareGroupMember) -> Any:
    TP = R.ShareGroupCurrentMemberAssignmentValue.TopicPartitions
    return SHARE.current_assignment(group_id, m, assigned_partitions=topic_partitions(TP, m.assigned_partitions))


def partition_metadata_tombstone(group_id: str) -> Any:
    return R.ShareGroupPartitionMetadata.tombstone(R.ShareGroupPartitionMetadataKey(group_id=group_id))


def member_from_value(member_id: str, old: ShareGroupMember | None, value: Any) -> ShareGroupMember:
    base = old if old is not None else ShareGroupMember(member_id)
    return base.replace(rack_id=value.rack_id, client_id=value.client_id, client_host=value.client_host,
                        subscribed_topic_names=frozenset(value.subscribed_topic_names))


def assignment_from_value(old: ShareGroupMember, value: Any) -> ShareGroupMember:
    """A member with the current assignment of a ShareGroupCurrentMemberAssignmentValue."""
    return old.replace(member_epoch=value.member_epoch, previous_member_epoch=value.previous_member_epoch,
                       state=SHARE.member_state.decode(value.state),
                       assigned_partitions=assignment_of(value.assigned_partitions))


__all__ = ["ShareGroup", "ShareGroupMember", "StatePartitionMetadata", "InitTopic", "SHARE_PROTOCOL_TYPE",
           "share_group",
           "group_epoch_record", "member_record", "member_tombstone", "target_member_record",
           "target_member_tombstone", "target_epoch_record", "current_assignment_record",
           "current_assignment_tombstone", "partition_metadata_tombstone", "state_metadata_record",
           "state_metadata_tombstone", "member_from_value", "assignment_from_value", "assignment_of", "state_metadata_from_value"]
