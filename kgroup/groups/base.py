"""What every group type shares: identity, type, state, and the offset-validation hooks.

The offsets manager asks the group (never the other way round) whether a commit, fetch
or delete is allowed, exactly where Kafka's `Group.validateOffsetCommit` & co. sit.
Each group type answers with its own rules by raising `KafkaError`.
"""
from __future__ import annotations

import enum
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Callable


class GroupType(enum.StrEnum):
    CLASSIC = "classic"
    CONSUMER = "consumer"
    STREAMS = "streams"
    SHARE = "share"


@dataclass(frozen=True)
class OffsetCommitContext:
    """Who is committing: the fields OffsetCommit/TxnOffsetCommit carry about the member."""

    member_id: str
    group_instance_id: str | None
    generation_id_or_member_epoch: int
    is_transactional: bool
    api_version: int


#: Kafka's `CommitPartitionValidator` (KIP-1251): called as ``check(topic name, topic id or None,
#: partition)`` for each partition an accepted commit would write; raises KafkaError to refuse it,
#: and with it the whole commit (Kafka's validator throws out of the commit's loop)
CommitPartitionValidator = Callable[[str, Any, int], None]


class Group(ABC):
    """A group as the coordinator keeps it (rebuilt by record replay)."""

    group_id: str
    type: GroupType

    @property
    @abstractmethod
    def state(self) -> str:
        """The state name Kafka reports (ListGroups / Describe)."""

    @property
    def protocol_type(self) -> str:
        """The protocol type ListGroups reports."""
        return str(self.type)

    @abstractmethod
    def is_empty(self) -> bool: ...

    @abstractmethod
    def validate_offset_commit(self, ctx: OffsetCommitContext) -> CommitPartitionValidator | None:
        """Raise KafkaError when this member may not commit offsets now; otherwise None (every
        partition may be committed) or a per-partition check (a member committing with an older
        epoch, KIP-1251)."""

    def after_offset_commit(self, coordinator: Any, ctx: OffsetCommitContext) -> None:
        """Called after a valid (non-transactional) OffsetCommit; classic members keep
        their session alive this way."""

    def validate_offset_fetch(self, member_id: str | None, member_epoch: int) -> None:
        """Raise KafkaError when this member may not fetch offsets (KIP-848 v9+ checks)."""

    def validate_offset_delete(self) -> None:
        """Raise KafkaError when offsets may not be deleted now."""

    @abstractmethod
    def validate_delete_group(self) -> None:
        """Raise KafkaError (e.g. NON_EMPTY_GROUP) when the group may not be deleted."""

    def should_expire(self, coordinator: Any) -> bool:
        """Whether the periodic clean-up may delete this group once it is empty and has no
        offsets left (Kafka's `Group.shouldExpire`)."""
        return True

    def before_delete(self, coordinator: Any) -> list:
        """DeleteGroups, after `validate_delete_group`: work done before the tombstones and the
        records it writes (raise KafkaError to keep the group). Share groups delete their
        share-partition state here."""
        return []

    def is_subscribed_to_topic(self, topic: str) -> bool:
        return False

    def offset_expiration_base(self, commit_timestamp: int) -> int | None:
        """The time an offset's retention counts from, or None when offsets do not expire now."""
        return commit_timestamp

    @abstractmethod
    def tombstones(self) -> list:
        """Records that delete this group (its offsets are deleted separately)."""

    # -- display ---------------------------------------------------------------------------
    @property
    def epoch(self) -> int:
        """The group's generation (classic) or group epoch (consumer, streams, share)."""
        return 0

    def describe_members(self) -> list[dict]:
        """Members as rows (for tables, widgets and dump replay)."""
        return []

    def describe(self) -> dict:
        """The group as plain data: what its Describe API would say, in one shape for every
        group type (used by dump replay, the `kgroup` command and notebooks)."""
        return {"group_id": self.group_id, "type": str(self.type), "state": self.state,
                "protocol_type": self.protocol_type, "epoch": self.epoch,
                "members": self.describe_members()}
