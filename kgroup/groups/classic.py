"""Classic groups (JoinGroup/SyncGroup protocol), as rebuilt from GroupMetadata records.

This module holds the classic group's persistent shape and Kafka's offset-commit rules
for it. "Simple" groups — created by a standalone offset commit (generation -1) — are
empty classic groups without a protocol type, as in Kafka.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field

from kgroup.errors import ErrorCode, KafkaError
from kgroup.groups.base import Group, GroupType, OffsetCommitContext
from kgroup.records import GroupMetadata, GroupMetadataKey


class ClassicGroupState(str, enum.Enum):
    EMPTY = "Empty"
    PREPARING_REBALANCE = "PreparingRebalance"
    COMPLETING_REBALANCE = "CompletingRebalance"
    STABLE = "Stable"
    DEAD = "Dead"

    def __str__(self) -> str:
        return self.value


@dataclass
class ClassicMember:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    subscription: bytes
    assignment: bytes


@dataclass
class ClassicGroup(Group):
    group_id: str
    protocol_type: str | None = None  # type: ignore[assignment]  # None for a simple group
    generation_id: int = 0
    protocol_name: str | None = None
    leader_id: str | None = None
    current_state: ClassicGroupState = ClassicGroupState.EMPTY
    current_state_timestamp: int | None = None
    members: dict[str, ClassicMember] = field(default_factory=dict)
    type = GroupType.CLASSIC

    @property
    def state(self) -> str:
        return self.current_state.value

    def is_empty(self) -> bool:
        return self.current_state is ClassicGroupState.EMPTY

    # -- replay -----------------------------------------------------------------
    def replay_metadata(self, value, timestamp: int) -> None:
        """Apply a GroupMetadataValue (what a coordinator reload does)."""
        self.protocol_type = value.protocol_type
        self.generation_id = value.generation
        self.protocol_name = value.protocol
        self.leader_id = value.leader
        cst = getattr(value, "current_state_timestamp", -1)
        self.current_state_timestamp = cst if cst is not None and cst >= 0 else timestamp
        self.members = {
            m.member_id: ClassicMember(
                member_id=m.member_id,
                group_instance_id=getattr(m, "group_instance_id", None),
                client_id=m.client_id,
                client_host=m.client_host,
                rebalance_timeout_ms=getattr(m, "rebalance_timeout", -1),
                session_timeout_ms=m.session_timeout,
                subscription=m.subscription,
                assignment=m.assignment,
            )
            for m in value.members
        }
        # A loaded group with members is Stable until its members heartbeat (Kafka: loadGroup).
        self.current_state = ClassicGroupState.STABLE if self.members else ClassicGroupState.EMPTY

    # -- offsets (Kafka ClassicGroup.validateOffsetCommit) ------------------------
    def validate_offset_commit(self, ctx: OffsetCommitContext) -> None:
        if self.current_state is ClassicGroupState.DEAD:
            raise KafkaError(ErrorCode.coordinator_not_available, f"group {self.group_id} is dead")
        generation = ctx.generation_id_or_member_epoch
        if generation < 0 and self.is_empty():
            # Admin clients and consumers without group management commit into empty groups.
            return
        if generation >= 0 or ctx.member_id or ctx.group_instance_id is not None:
            self._validate_member(ctx.member_id, ctx.group_instance_id)
            if generation != self.generation_id:
                raise KafkaError(ErrorCode.illegal_generation,
                                 f"generation {generation} is not the group's generation {self.generation_id}")
        elif not ctx.is_transactional and not self.is_empty():
            raise KafkaError(ErrorCode.unknown_member_id,
                             "a commit without member id and generation needs an empty group")
        if not ctx.is_transactional and self.current_state is ClassicGroupState.COMPLETING_REBALANCE:
            raise KafkaError(ErrorCode.rebalance_in_progress)

    def _validate_member(self, member_id: str, group_instance_id: str | None) -> None:
        member = self.members.get(member_id)
        if group_instance_id is not None:
            static = next((m for m in self.members.values() if m.group_instance_id == group_instance_id), None)
            if static is None:
                raise KafkaError(ErrorCode.unknown_member_id, f"unknown instance id {group_instance_id}")
            if static.member_id != member_id:
                raise KafkaError(ErrorCode.fenced_instance_id,
                                 f"instance {group_instance_id} is now member {static.member_id}, not {member_id}")
        elif member is None:
            raise KafkaError(ErrorCode.unknown_member_id, f"unknown member {member_id!r}")

    def validate_offset_fetch(self, member_id: str | None, member_epoch: int) -> None:
        if self.current_state is ClassicGroupState.DEAD:
            raise KafkaError(ErrorCode.group_id_not_found, f"group {self.group_id} is dead")

    def validate_offset_delete(self) -> None:
        if self.current_state is ClassicGroupState.DEAD:
            raise KafkaError(ErrorCode.group_id_not_found, f"group {self.group_id} is dead")
        if not self.is_empty() and self.protocol_type != "consumer":
            # Only consumer-protocol groups know their subscriptions, so only they may
            # delete offsets of unsubscribed topics while members are active.
            raise KafkaError(ErrorCode.non_empty_group, f"group {self.group_id} is {self.state}")

    def validate_delete_group(self) -> None:
        if self.current_state is ClassicGroupState.DEAD:
            raise KafkaError(ErrorCode.group_id_not_found, f"group {self.group_id} is dead")
        if not self.is_empty():
            raise KafkaError(ErrorCode.non_empty_group, f"group {self.group_id} is {self.state}")

    def is_subscribed_to_topic(self, topic: str) -> bool:
        # Needs the members' decoded subscriptions (consumer protocol); classic-group issue.
        return False

    def offset_expiration_base(self, commit_timestamp: int) -> int | None:
        # Kafka: simple groups count from the commit; consumer groups only expire while
        # Empty, counting from when they became Empty.
        if self.protocol_type is None or self.protocol_type == "":
            return commit_timestamp
        if self.is_empty():
            return self.current_state_timestamp if self.current_state_timestamp is not None else commit_timestamp
        return None

    def tombstones(self) -> list:
        return [GroupMetadata.tombstone(GroupMetadataKey(group=self.group_id))]
