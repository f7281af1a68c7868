"""A KIP-848 consumer group as the coordinator keeps it: members, epochs, target assignment,
who owns which partition at which epoch, and resolved regular expressions.

Everything here is rebuilt by replaying records 3-8 and 16; the heartbeat handler
(`protocol.py`) only reads it and decides which records to write.
"""
from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kgroup.errors import ErrorCode, KafkaError
from kgroup.groups.base import CommitPartitionValidator, OffsetCommitContext
from kgroup.groups.classic_bridge import ClassicMemberMetadata
from kgroup.groups.kinds import CONSUMER
from kgroup.groups.modern import (LEAVE_GROUP_MEMBER_EPOCH, LEAVE_GROUP_STATIC_MEMBER_EPOCH,
                                  Assignment, EpochAssignment, MemberState, ModernGroup, ModernGroupState, ModernMember,
                                  partitions_of, topic_partitions)
from kgroup.javaorder import java_order, java_string_set_order
from kgroup import records as R

CONSUMER_PROTOCOL_TYPE = "consumer"


@dataclass(frozen=True)
class ConsumerGroupMember(ModernMember):
    """One member (Kafka's `ConsumerGroupMember`): subscription + current assignment."""

    member_id: str
    instance_id: str | None = None
    rack_id: str | None = None
    rebalance_timeout_ms: int = -1
    client_id: str = ""
    client_host: str = ""
    subscribed_topic_names: frozenset[str] = frozenset()
    subscribed_topic_regex: str | None = None
    server_assignor_name: str | None = None
    member_epoch: int = 0
    previous_member_epoch: int = 0
    state: MemberState = MemberState.STABLE
    #: topic id -> {partition: epoch it was assigned at}
    assigned_partitions: EpochAssignment = field(default_factory=dict)
    partitions_pending_revocation: EpochAssignment = field(default_factory=dict)
    classic_member_metadata: ClassicMemberMetadata | None = None

    def with_assignment_deleted(self) -> "ConsumerGroupMember":
        """The member once its current-assignment tombstone is replayed (Kafka's replay)."""
        return self.replace(member_epoch=LEAVE_GROUP_MEMBER_EPOCH, previous_member_epoch=LEAVE_GROUP_MEMBER_EPOCH,
                            assigned_partitions={}, partitions_pending_revocation={})

    @property
    def assigned(self) -> Assignment:
        """The assigned partitions without their epochs."""
        return partitions_of(self.assigned_partitions)

    @property
    def pending_revocation(self) -> Assignment:
        return partitions_of(self.partitions_pending_revocation)

    def subscribed_topics(self, resolved_regexes: Mapping[str, "ResolvedRegularExpression"]) -> frozenset[str]:
        """Topic names subscribed by name or through its resolved regex (unresolved: none)."""
        names = self.subscribed_topic_names
        if self.subscribed_topic_regex:
            resolved = resolved_regexes.get(self.subscribed_topic_regex)
            if resolved is not None and resolved.topics:
                names = names | resolved.topics
        return names


@dataclass(frozen=True)
class ResolvedRegularExpression:
    """A subscribed regex resolved against the cluster's topics (record 16)."""

    topics: frozenset[str]
    version: int
    timestamp: int


EMPTY_RESOLVED = ResolvedRegularExpression(frozenset(), -1, -1)


def track_subscription(names: Counter, regexes: Counter, member: "ConsumerGroupMember | None", sign: int) -> None:
    """Count `member`'s subscription in (`sign` +1) or out (-1) of the per-name and per-regex counts."""
    if member is None:
        return
    for n in member.subscribed_topic_names:
        names[n] += sign
        if names[n] <= 0:
            del names[n]
    r = member.subscribed_topic_regex
    if r:
        regexes[r] += sign
        if regexes[r] <= 0:
            del regexes[r]


def topics_of(names: Iterable[str], regexes: Iterable[str], resolved: Mapping[str, ResolvedRegularExpression]) -> set[str]:
    """The topic names subscribed to by name, and those the subscribed regexes resolved to."""
    out = set(names)
    for r in regexes:
        out |= resolved.get(r, EMPTY_RESOLVED).topics
    return out


class ConsumerGroup(ModernGroup[ConsumerGroupMember, Assignment]):
    """A KIP-848 consumer group."""

    kind = CONSUMER

    def __init__(self, group_id: str) -> None:
        super().__init__(group_id)
        #: topic id -> {partition: epoch of the member owning it (assigned or pending revocation)}
        self.partition_epochs: dict[uuid.UUID, dict[int, int]] = {}
        self.resolved_regexes: dict[str, ResolvedRegularExpression] = {}
        #: regex -> number of members subscribed with it
        self.subscribed_regexes: Counter[str] = Counter()
        #: topic name -> number of members subscribed to it by name (Kafka's subscribedTopicNames)
        self.subscribed_names: Counter[str] = Counter()
        #: the old (before Kafka 4.1) subscription metadata record is in the log (record 4)
        self.partition_metadata: dict[str, tuple[uuid.UUID, int]] | None = None
        #: why the last member was fenced by a timer (for display)
        self.last_fence_reason: str | None = None

    # -- Group interface ----------------------------------------------------------------
    @property
    def protocol_type(self) -> str:
        return CONSUMER_PROTOCOL_TYPE

    def validate_offset_commit(self, ctx: OffsetCommitContext) -> CommitPartitionValidator | None:
        """Kafka's `ConsumerGroup.validateOffsetCommit`. The member's epoch commits everything; a
        newer one is refused; an older one (KIP-1251: the member has not heard of its new epoch
        yet) commits only partitions it still holds since that epoch or before."""
        epoch = ctx.generation_id_or_member_epoch
        if epoch < 0 and not self.members:
            return None  # an admin-style commit to an empty group
        if ctx.is_transactional and epoch == -1 and not ctx.member_id and ctx.group_instance_id is None:
            return None  # TxnOffsetCommit does not require the member's fields
        member = self.members.get(ctx.member_id)
        if member is None:
            raise KafkaError(ErrorCode.unknown_member_id, f"member {ctx.member_id} is not in group {self.group_id}")
        if not ctx.is_transactional and not member.uses_classic_protocol and ctx.api_version < 9:
            raise KafkaError(ErrorCode.unsupported_version,
                             "OffsetCommit version 9 or above must be used by members using the consumer group protocol")
        # a classic member commits with its generation: refused as a classic group refuses it
        refused = ErrorCode.illegal_generation if member.uses_classic_protocol else ErrorCode.stale_member_epoch
        if epoch == member.member_epoch:
            return None
        if epoch > member.member_epoch:
            raise KafkaError(refused, f"Received member epoch {epoch} is newer than current member epoch "
                                      f"{member.member_epoch}.")

        def check(topic: str, topic_id: Any, partition: int) -> None:
            """Kafka's `createAssignmentEpochValidator`: the partition is the member's (assigned or
            pending revocation) since `epoch` or before."""
            held = member.assigned_partitions.get(topic_id, {}).get(partition)
            if held is None:
                held = member.partitions_pending_revocation.get(topic_id, {}).get(partition)
            if held is None:
                raise KafkaError(refused, f"Partition {topic}-{partition} is not assigned or pending revocation "
                                          "for member.")
            if epoch < held:
                raise KafkaError(refused, f"Received member epoch {epoch} is older than assignment epoch {held} "
                                          f"for partition {topic}-{partition}.")
        return check

    def validate_delete_group(self) -> None:
        if self.modern_state != ModernGroupState.EMPTY:
            raise KafkaError(ErrorCode.non_empty_group, f"group {self.group_id} is not empty")

    def is_subscribed_to_topic(self, topic: str) -> bool:
        # Kafka counts every resolved regex's topics, whoever is still subscribed to the regex
        # (ConsumerGroup.updateResolvedRegularExpression feeds subscribedTopicNames).
        return topic in self.subscribed_topic_names() or any(
            topic in r.topics for r in self.resolved_regexes.values())

    def offset_expiration_base(self, commit_timestamp: int) -> int | None:
        return commit_timestamp

    def tombstones(self) -> list:
        """Kafka's `createGroupTombstoneRecords`, in its order."""
        g = self.group_id
        out = CONSUMER.group_tombstones(g, self.members)
        out += [regex_tombstone(g, r) for r in self.resolved_regexes]
        # Kafka tombstones the pre-4.1 subscription metadata whether or not it was ever written
        out.append(partition_metadata_tombstone(g))
        out.append(CONSUMER.metadata_tombstone(g))
        return out

    # -- what the group subscribes to -----------------------------------------------------
    def subscribed_topic_names(self, members: Mapping[str, ConsumerGroupMember] | None = None,
                               resolved: Mapping[str, ResolvedRegularExpression] | None = None) -> set[str]:
        """Topic names some member subscribes to, by name or through a resolved regex: the group's
        own from its subscription counts, or those of `members` (a group as it would be)."""
        resolved = self.resolved_regexes if resolved is None else resolved
        if members is None:
            return topics_of(self.subscribed_names, self.subscribed_regexes, resolved)
        names: set[str] = set()
        regexes: set[str] = set()
        for m in members.values():
            names |= m.subscribed_topic_names
            if m.subscribed_topic_regex:
                regexes.add(m.subscribed_topic_regex)
        return topics_of(names, regexes, resolved)

    def num_subscribed_members(self, regex: str) -> int:
        return self.subscribed_regexes.get(regex, 0)

    @property
    def last_regex_refresh_ms(self) -> int | None:
        """When the regexes were last resolved (they are resolved together), None when none is
        resolved: a group whose regexes were all deleted resolves a new one at once (Kafka's
        lastResolvedRegularExpressionRefreshTimeMs, Long.MIN_VALUE then)."""
        return max((r.timestamp for r in self.resolved_regexes.values()), default=None)

    @property
    def last_regex_version(self) -> int:
        """The metadata version the regexes were resolved at (the oldest; 0 when none is resolved)."""
        return min((r.version for r in self.resolved_regexes.values()), default=0)

    def current_partition_epoch(self, topic_id: uuid.UUID, partition: int) -> int:
        """The epoch of the member owning the partition, or -1 when nobody owns it."""
        return self.partition_epochs.get(topic_id, {}).get(partition, -1)

    def preferred_server_assignor(self, members: Mapping[str, ConsumerGroupMember]) -> str | None:
        """The assignor most members ask for (Kafka's `computePreferredServerAssignor`;
        ties go to the first in Java `HashMap` order, as `Collections.max` does)."""
        counts = Counter(m.server_assignor_name for m in members.values() if m.server_assignor_name)
        if not counts:
            return None
        best = None
        for name in java_order(counts, 16):
            if best is None or counts[name] > counts[best]:
                best = name
        return best

    # -- replay helpers (called only from the replay functions) --------------------------
    def update_member(self, member: ConsumerGroupMember) -> None:
        old = self.members.get(member.member_id)
        self.members[member.member_id] = member
        self._track_subscription(old, member)
        self._index_member(old, member)
        self._update_partition_epochs(old, member)

    def remove_member(self, member_id: str, timestamp: int | None = None) -> None:
        """(`timestamp`, when the member record was deleted, matters to share groups only.)"""
        old = self.members.pop(member_id, None)
        if old is not None:
            self._track_subscription(old, None)
            self._index_member(old, None)
            self._update_partition_epochs(old, None)

    def _track_subscription(self, old: ConsumerGroupMember | None, new: ConsumerGroupMember | None) -> None:
        """Keep the subscription counts (regexes and names) as members come, change and go."""
        track_subscription(self.subscribed_names, self.subscribed_regexes, old, -1)
        track_subscription(self.subscribed_names, self.subscribed_regexes, new, +1)

    def _update_partition_epochs(self, old: ConsumerGroupMember | None, new: ConsumerGroupMember | None) -> None:
        if old is not None:
            for assignment in (old.assigned_partitions, old.partitions_pending_revocation):
                for tid, parts in assignment.items():
                    owners = self.partition_epochs.get(tid)
                    if owners is None:
                        continue
                    for p in parts:
                        if owners.get(p) == old.member_epoch:
                            del owners[p]
                    if not owners:
                        del self.partition_epochs[tid]
        if new is not None:
            for assignment in (new.assigned_partitions, new.partitions_pending_revocation):
                for tid, parts in assignment.items():
                    owners = self.partition_epochs.setdefault(tid, {})
                    for p in parts:
                        owners[p] = new.member_epoch

    # -- display ------------------------------------------------------------------------
    def describe_members(self) -> list[dict]:
        return [{"member_id": m.member_id, "instance_id": m.instance_id, "client_id": m.client_id,
                 "member_epoch": m.member_epoch, "state": m.state.label,
                 "protocol": "classic" if m.uses_classic_protocol else "consumer",
                 "subscribed_topic_names": sorted(m.subscribed_topic_names),
                 "subscribed_topic_regex": m.subscribed_topic_regex,
                 "assigned": {str(t): sorted(ps) for t, ps in m.assigned_partitions.items()},
                 "pending_revocation": {str(t): sorted(ps) for t, ps in m.partitions_pending_revocation.items()},
                 "target": {str(t): sorted(ps) for t, ps in self.target_assignment.get(m.member_id, {}).items()}}
                for m in self.members.values()]

    def describe(self) -> dict:
        out = super().describe()
        out.update(assignment_epoch=self.assignment_epoch, metadata_hash=self.metadata_hash)
        return out

    def __repr__(self) -> str:
        return (f"ConsumerGroup({self.group_id!r}, {self.state}, epoch={self.group_epoch}, "
                f"assignment_epoch={self.assignment_epoch}, members={list(self.members)})")


# ---------------------------------------------------------------------------------------
# Records (Kafka's GroupCoordinatorRecordHelpers for consumer groups)

def group_epoch_record(group_id: str, epoch: int, metadata_hash: int) -> Any:
    return R.ConsumerGroupMetadata(R.ConsumerGroupMetadataKey(group_id=group_id),
                                   R.ConsumerGroupMetadataValue(epoch=epoch, metadata_hash=metadata_hash))


def member_record(group_id: str, m: ConsumerGroupMember) -> Any:
    V = R.ConsumerGroupMemberMetadataValue
    classic = None
    if m.classic_member_metadata is not None:
        classic = V.ClassicMemberMetadata(
            session_timeout_ms=m.classic_member_metadata.session_timeout_ms,
            supported_protocols=[V.ClassicProtocol(name=n, metadata=md)
                                 for n, md in m.classic_member_metadata.supported_protocols])
    return R.ConsumerGroupMemberMetadata(
        R.ConsumerGroupMemberMetadataKey(group_id=group_id, member_id=m.member_id),
        V(instance_id=m.instance_id, rack_id=m.rack_id, client_id=m.client_id, client_host=m.client_host,
          subscribed_topic_names=java_string_set_order(m.subscribed_topic_names),
          subscribed_topic_regex=m.subscribed_topic_regex, rebalance_timeout_ms=m.rebalance_timeout_ms,
          server_assignor=m.server_assignor_name, classic_member_metadata=classic))


member_tombstone = CONSUMER.member_tombstone
target_member_tombstone = CONSUMER.target_member_tombstone
target_epoch_record = CONSUMER.target_epoch
current_assignment_tombstone = CONSUMER.current_assignment_tombstone
target_member_record = CONSUMER.partitions_target_member


def current_assignment_record(group_id: str, m: ConsumerGroupMember) -> Any:
    TP = R.ConsumerGroupCurrentMemberAssignmentValue.TopicPartitions
    return CONSUMER.current_assignment(
        group_id, m, assigned_partitions=topic_partitions(TP, m.assigned_partitions, with_epochs=True),
        # Kafka 4.4.0 keeps the assignment epochs of the partitions being revoked too
        partitions_pending_revocation=topic_partitions(TP, m.partitions_pending_revocation, with_epochs=True))


def regex_record(group_id: str, regex: str, resolved: ResolvedRegularExpression) -> Any:
    return R.ConsumerGroupRegularExpression(
        R.ConsumerGroupRegularExpressionKey(group_id=group_id, regular_expression=regex),
        # sorted: Kafka 4.4.0's record helper sorts the resolved topics (Collections.sort)
        R.ConsumerGroupRegularExpressionValue(topics=sorted(resolved.topics),
                                              version=resolved.version, timestamp=resolved.timestamp))


def regex_tombstone(group_id: str, regex: str) -> Any:
    return R.ConsumerGroupRegularExpression.tombstone(
        R.ConsumerGroupRegularExpressionKey(group_id=group_id, regular_expression=regex))


def partition_metadata_tombstone(group_id: str) -> Any:
    return R.ConsumerGroupPartitionMetadata.tombstone(R.ConsumerGroupPartitionMetadataKey(group_id=group_id))


def member_from_value(member_id: str, old: ConsumerGroupMember | None, value: Any) -> ConsumerGroupMember:
    """A member updated with a ConsumerGroupMemberMetadataValue (Kafka's `Builder.updateWith`)."""
    classic = None
    cm = value.classic_member_metadata
    # absent from the bytes it reads as an empty struct (Kafka always writes the tag, null for a
    # consumer-protocol member); an empty one is taken as no classic metadata, so logs written
    # without the tag (kgroup before 4.4's bytes) still load
    if cm is not None and (cm.session_timeout_ms or cm.supported_protocols):
        classic = ClassicMemberMetadata(cm.session_timeout_ms,
                                        tuple((p.name, bytes(p.metadata)) for p in cm.supported_protocols))
    base = old if old is not None else ConsumerGroupMember(member_id)
    return base.replace(instance_id=value.instance_id, rack_id=value.rack_id, client_id=value.client_id,
                        client_host=value.client_host,
                        subscribed_topic_names=frozenset(value.subscribed_topic_names),
                        subscribed_topic_regex=value.subscribed_topic_regex,
                        rebalance_timeout_ms=value.rebalance_timeout_ms,
                        server_assignor_name=value.server_assignor, classic_member_metadata=classic)


def _epoch_assignment(topic_partitions: Iterable[Any], default_epoch: int) -> EpochAssignment:
    out: EpochAssignment = {}
    for tp in topic_partitions:
        epochs = tp.assignment_epochs if getattr(tp, "assignment_epochs", None) is not None else None
        parts = out.setdefault(tp.topic_id, {})
        for i, p in enumerate(tp.partitions):
            parts[p] = epochs[i] if epochs is not None and i < len(epochs) else default_epoch
    return {t: ps for t, ps in out.items() if ps}


def member_assignment_from_value(old: ConsumerGroupMember, value: Any) -> ConsumerGroupMember:
    """A member with the current assignment of a ConsumerGroupCurrentMemberAssignmentValue.
    Records written before KIP-1251 carry no per-partition epochs: the member epoch stands in."""
    return old.replace(member_epoch=value.member_epoch, previous_member_epoch=value.previous_member_epoch,
                       state=CONSUMER.member_state.decode(value.state),
                       assigned_partitions=_epoch_assignment(value.assigned_partitions, value.member_epoch),
                       partitions_pending_revocation=_epoch_assignment(value.partitions_pending_revocation,
                                                                       value.member_epoch))


__all__ = ["ConsumerGroup", "ConsumerGroupMember", "ClassicMemberMetadata", "ResolvedRegularExpression",
           "EMPTY_RESOLVED", "CONSUMER_PROTOCOL_TYPE", "LEAVE_GROUP_MEMBER_EPOCH", "LEAVE_GROUP_STATIC_MEMBER_EPOCH",
           "group_epoch_record", "member_record", "member_tombstone", "target_member_record",
           "target_member_tombstone", "target_epoch_record", "current_assignment_record",
           "current_assignment_tombstone", "regex_record", "regex_tombstone", "partition_metadata_tombstone",
           "member_from_value", "member_assignment_from_value"]
