"""What KIP-848 groups share with the groups built on them (KIP-1071 streams, KIP-932 share).

The three epochs of KIP-848, in one place:

- the **group epoch** moves when the group's membership or subscriptions change, or when
  the metadata of a subscribed topic changes (persisted in the group's metadata record);
- the **assignment epoch** (target assignment epoch) catches up with the group epoch when
  a new target assignment is computed;
- each **member epoch** catches up with the assignment epoch when the member has reconciled
  (revoked what it must give up) and moves to the target.

Kafka's names are used throughout: `MemberState`, the leave epochs, `ModernGroup`.
"""
from __future__ import annotations

import dataclasses
import enum
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from kgroup.assignors.api import GroupSpec, PartitionAssignorException, subscription_type_of
from kgroup.errors import ErrorCode, KafkaError
from kgroup.group_configs import assignment_interval_ms
from kgroup.groups.base import Group
from kgroup.javaorder import java_hash_order, java_uuid_hash, service_order
from kgroup.runtime import Result, handles, on_loaded

#: How long subscribed topic metadata is trusted before a heartbeat checks it again. Kafka also
#: refreshes at once when a subscribed topic changes; kgroup notices any cluster change.
METADATA_REFRESH_INTERVAL_MS = 2**31 - 1
#: A new consumer, share or Streams group starts at group epoch 1 with assignment epoch 1 (an
#: empty assignment), so the first computed assignment is epoch 2 (KAFKA-20268): epoch 0 is
#: reserved for joining members, and a member can reconcile to epoch 1 while epoch 2 is computed.
INITIAL_GROUP_EPOCH = 1
#: A member leaving for good sends this epoch (KIP-848).
LEAVE_GROUP_MEMBER_EPOCH = -1
#: A static member leaving temporarily sends this epoch: it keeps its identity and
#: partitions until its session times out (KIP-848, "static membership").
LEAVE_GROUP_STATIC_MEMBER_EPOCH = -2

#: partitions of a topic, by topic id
Assignment = dict[uuid.UUID, frozenset[int]]
#: assigned partitions with the epoch each was assigned at (KIP-1251), by topic id
EpochAssignment = dict[uuid.UUID, dict[int, int]]


def client_member_id(c: Any) -> str:
    """A member id as a KIP-848-style client makes one (`Uuid.randomUuid().toString()`),
    from the coordinator's seeded generator (used where the coordinator picks the id)."""
    from kgroup.records.uuids import uuid_to_kafka_str
    return uuid_to_kafka_str(uuid.UUID(int=c._ids.getrandbits(128)))


class ReplayError(RuntimeError):
    """A record that contradicts the group it applies to (Kafka raises IllegalStateException)."""


def can_compute_next_target_assignment(assignment_timestamp: int, interval_ms: int, now: int) -> bool:
    """KIP-1263 assignment batching (Kafka's `canComputeNextTargetAssignment`): a new target
    assignment may be computed once `interval_ms` has passed since the last one was computed
    (`assignment_timestamp`, kept in the target-assignment metadata record), at once when there
    was none (0) or batching is off (interval 0)."""
    return assignment_timestamp == 0 or interval_ms == 0 or now >= assignment_timestamp + interval_ms


def target_assignment_due(c: Any, group: "ModernGroup", kind: str) -> bool:
    """Whether a heartbeat that finds the group epoch ahead of the assignment epoch computes the
    next target assignment now (`kind`: "consumer", "share" or "streams"). Until it may, the
    group epoch moves on alone and members reconcile to the current assignment epoch; no timer
    waits for the interval, the next heartbeat after it computes the assignment (as Kafka)."""
    interval = assignment_interval_ms(c, group.group_id, kind)
    return can_compute_next_target_assignment(group.assignment_timestamp, interval, c.now())


def assign_partitions(c: Any, kind: Any, group_id: str, group_epoch: int, assignor: Any, topics: Any,
                      specs: Mapping[str, Any], previous: Mapping[str, Any], records: list) -> dict[str, Assignment]:
    """Kafka's `TargetAssignmentBuilder` for the types that assign partitions (consumer, share):
    `assignor` over the member `specs` (in the HashMap order they were built in) with their
    `previous` targets; a target-member record for each member whose target is new or changed,
    then the new assignment epoch, stamped with the time the assignor ran (KIP-1263)."""
    spec = GroupSpec(specs, subscription_type_of(specs), {mid: previous.get(mid, {}) for mid in specs})
    try:
        new = assignor.assign(spec, topics) if specs else {}
    except PartitionAssignorException as e:
        raise KafkaError(ErrorCode.unknown_server_error,
                         f"Failed to compute a new target assignment for epoch {group_epoch}: {e}") from None
    out: dict[str, Assignment] = {}
    for mid in specs:
        assignment = frozen(new.get(mid, {}))
        out[mid] = assignment
        if mid not in previous or assignment != frozen(previous[mid]):
            records.append(kind.partitions_target_member(group_id, mid, assignment))
    records.append(kind.target_epoch(group_id, group_epoch, c.now()))
    return out


#: what Java's String.trim() strips: every char <= U+0020 (Python's strip() differs both ways)
_TRIMMED = "".join(chr(i) for i in range(33))


def throw_if_empty_string(value: str | None, field: str) -> None:
    """Kafka's `throwIfEmptyString`: INVALID_REQUEST "<field> can't be empty." for a value that is
    set and has nothing left once trimmed as Java trims."""
    if value is not None and value.strip(_TRIMMED) == "":
        raise KafkaError(ErrorCode.invalid_request, f"{field} can't be empty.")


def heartbeat_error(e: KafkaError) -> dict:
    """A ConsumerGroupHeartbeat or ShareGroupHeartbeat answer carrying only the error."""
    return {"throttle_time": 0, "error_code": e.code, "error_message": e.message or None, "member_id": None,
            "member_epoch": 0, "heartbeat_interval": 0, "assignment": None}


def fence_by_id(c: Any, group_type: type, group_id: str, member_id: str, reason: str, fence_members: Any) -> Any:
    """A timer's fencing (a session or rebalance timeout): `fence_members` of the type on the
    member, nothing when the group or member is already gone; `reason` is kept for display."""
    group = c.groups.get(group_id)
    if not isinstance(group, group_type) or member_id not in group.members:
        return None
    group.last_fence_reason = reason
    return fence_members(c, group, [group.members[member_id]], None)


def restarts_sessions_on_load(kind: Any, restart: Any) -> None:
    """Register a type's part of Kafka's `onLoaded`: `restart(c, group, member)` for every member
    of its groups on the partitions just loaded (timers are soft state: a fresh session, and
    members still revoking their rebalance timeout again)."""
    @on_loaded
    def _after_load(c: Any) -> None:
        for group in kind.hosted(c):
            for m in group.members.values():
                restart(c, group, m)


def handles_describe(api_key: int, describe_group: Any) -> Any:
    """Register a type's Describe API (ConsumerGroupDescribe & co.): `describe_group(c, group_id,
    request)` for each group id, in Kafka's order (the empty ids first, then partition by
    partition, as GroupCoordinatorService asks its shards). Returns the handler."""
    def describe(c: Any, req: Any, version: int) -> Result:
        ids = service_order(req.group_ids, c.partition_for, invalid=lambda g: not g)
        return Result({"throttle_time": 0, "groups": [describe_group(c, g, req) for g in ids]})
    return handles(api_key)(describe)


def assignment_of(topic_partitions: Iterable[Any]) -> Assignment:
    """Partitions by topic id from a record's TopicPartitions list (empty topics dropped)."""
    out: dict[uuid.UUID, set[int]] = {}
    for tp in topic_partitions:
        out.setdefault(tp.topic_id, set()).update(tp.partitions)
    return {t: frozenset(ps) for t, ps in out.items() if ps}


def topic_partitions(cls: type, assignment: Mapping[uuid.UUID, Any], with_epochs: bool = False) -> list:
    """An assignment as the records' TopicPartitions structs, topics in Java `HashMap` order,
    partitions ascending (with each partition's assignment epoch when `with_epochs`)."""
    out = []
    for tid in topic_order(assignment):
        parts = sorted(assignment[tid])
        if not parts:
            continue
        kw = {"topic_id": tid, "partitions": parts}
        if with_epochs:
            kw["assignment_epochs"] = [assignment[tid][p] for p in parts]
        out.append(cls(**kw))
    return out


def described_assignment(c: Any, assignment: Mapping[uuid.UUID, Any]) -> dict:
    """An assignment as the Describe APIs answer it: topic id, name and partitions; deleted
    topics are left out, as Kafka's metadata-image lookup does."""
    out = []
    for tid in topic_order(assignment):
        try:
            name = c.cluster.topic_name(tid)
        except KeyError:
            continue
        out.append({"topic_id": tid, "topic_name": name, "partitions": sorted(assignment[tid])})
    return {"topic_partitions": out}


class MemberState(enum.IntEnum):
    """Where a member is in its reconciliation (Kafka's `MemberState`). The values are the bytes
    consumer and share groups persist; a Streams group persists its own (`STREAMS_MEMBER_STATE`),
    so records go through a group type's `MemberStateBytes`, never `int(state)`."""

    STABLE = 0
    UNREVOKED_PARTITIONS = 1
    UNRELEASED_PARTITIONS = 2
    UNKNOWN = 127

    @classmethod
    def of(cls, value: int) -> "MemberState":
        try:
            return cls(value)
        except ValueError:
            return cls.UNKNOWN

    @property
    def label(self) -> str:
        return self.name.lower()


@dataclass(frozen=True)
class MemberStateBytes:
    """How one group type writes `MemberState` into its current-assignment record (the `State`
    field). Kafka keeps two enums with different bytes: `modern.MemberState` (consumer and share
    groups) and `streams.MemberState` (STABLE=1, UNREVOKED_TASKS=2, UNRELEASED_TASKS=3)."""

    stable: int
    unrevoked: int
    unreleased: int
    unknown: int = 127

    def encode(self, state: MemberState) -> int:
        return {MemberState.STABLE: self.stable, MemberState.UNREVOKED_PARTITIONS: self.unrevoked,
                MemberState.UNRELEASED_PARTITIONS: self.unreleased}.get(state, self.unknown)

    def decode(self, value: int) -> MemberState:
        """The state a persisted byte stands for; a byte this type never writes is UNKNOWN (as
        Kafka's `fromValue` answers, and the member is then fenced on its next heartbeat)."""
        return {self.stable: MemberState.STABLE, self.unrevoked: MemberState.UNREVOKED_PARTITIONS,
                self.unreleased: MemberState.UNRELEASED_PARTITIONS}.get(value, MemberState.UNKNOWN)


#: consumer and share groups (Kafka's `coordinator.group.modern.MemberState`)
CONSUMER_MEMBER_STATE = MemberStateBytes(stable=0, unrevoked=1, unreleased=2)
#: Streams groups (Kafka's `coordinator.group.streams.MemberState`; byte 0 is not a state there)
STREAMS_MEMBER_STATE = MemberStateBytes(stable=1, unrevoked=2, unreleased=3)


class ModernMember:
    """What a member of every modern group answers; each type's frozen dataclass adds its fields
    (`member_id`, `instance_id`, `member_epoch`, `previous_member_epoch`, `state`, and
    `classic_member_metadata` where its members may speak the classic protocol)."""

    #: members of types without classic members (share) never have any
    classic_member_metadata: Any = None

    def replace(self, **changes: Any) -> Any:
        return dataclasses.replace(self, **changes)

    def with_epoch(self, epoch: int) -> Any:
        """Kafka's `Builder.updateMemberEpoch`: the current epoch becomes the previous one."""
        return dataclasses.replace(self, previous_member_epoch=self.member_epoch, member_epoch=epoch)

    @property
    def is_static(self) -> bool:
        return self.instance_id is not None

    @property
    def uses_classic_protocol(self) -> bool:
        return self.classic_member_metadata is not None

    def is_reconciled_to(self, target_epoch: int) -> bool:
        return self.state == MemberState.STABLE and self.member_epoch == target_epoch


class ModernGroupState(enum.StrEnum):
    """The state of a KIP-848-style group, derived from its epochs and members."""

    EMPTY = "Empty"
    ASSIGNING = "Assigning"
    RECONCILING = "Reconciling"
    STABLE = "Stable"
    DEAD = "Dead"


def topic_order(topic_ids: Iterable[uuid.UUID]) -> list[uuid.UUID]:
    """Topic ids in the order a Java `HashMap<Uuid, ...>` lists them (the order of
    topics inside the records and responses Kafka builds from such maps)."""
    return java_hash_order(topic_ids, java_uuid_hash)


def frozen(assignment: Mapping[uuid.UUID, Iterable[int]]) -> Assignment:
    """An assignment with frozensets and without empty topics (assignments compare equal)."""
    return {t: frozenset(ps) for t, ps in assignment.items() if ps}


def partitions_of(assignment: Mapping[uuid.UUID, Any]) -> Assignment:
    """The plain partitions of an assignment that may carry per-partition epochs."""
    return {t: frozenset(ps) for t, ps in assignment.items() if ps}


#: a type's member dataclass and what its target assignment holds for a member
M = TypeVar("M")
T = TypeVar("T")


class ModernGroup(Group, Generic[M, T]):
    """The epochs, members and target assignment every KIP-848-style group keeps.

    Subclasses name their member type and what a member's target is
    (`ModernGroup[ConsumerGroupMember, Assignment]`); this class only needs `member_epoch`, `state`
    (a `MemberState`) and `instance_id` on a member. Each sets `kind`, its declaration
    (`kgroup.groups.kinds`): what differs between the modern group types.
    """

    kind: Any

    def __init_subclass__(cls, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        if "kind" in cls.__dict__:
            cls.type = cls.kind.type  # the GroupType a group type declares

    def __init__(self, group_id: str) -> None:
        self.group_id = group_id
        self.group_epoch = INITIAL_GROUP_EPOCH
        self.assignment_epoch = INITIAL_GROUP_EPOCH
        self.assignment_timestamp = 0
        self.metadata_hash = 0
        self.creation_time_ms = -1
        self.members: dict[str, M] = {}
        #: instance id -> member id of static members
        self.static_members: dict[str, str] = {}
        #: member id -> target assignment
        self.target_assignment: dict[str, T] = {}
        # Soft state (not persisted, as in Kafka): when the subscribed topics' metadata must
        # be checked again. A freshly loaded group checks it on its first heartbeat.
        self.metadata_refresh_deadline = 0
        self.metadata_refresh_epoch = -1
        self.metadata_version_seen = -1
        self.deleted = False

    # -- epochs and state ---------------------------------------------------------------
    @property
    def epoch(self) -> int:
        return self.group_epoch

    @property
    def state(self) -> str:
        return str(self.modern_state)

    @property
    def modern_state(self) -> ModernGroupState:
        """Kafka's `maybeUpdateGroupState`: derived, never stored."""
        if self.deleted:
            return ModernGroupState.DEAD
        if not self.members:
            return ModernGroupState.EMPTY
        if self.group_epoch > self.assignment_epoch:
            return ModernGroupState.ASSIGNING
        for m in self.members.values():
            if m.member_epoch != self.assignment_epoch or m.state != MemberState.STABLE:
                return ModernGroupState.RECONCILING
        return ModernGroupState.STABLE

    def is_empty(self) -> bool:
        return not self.members

    def validate_offset_fetch(self, member_id: str | None, member_epoch: int) -> None:
        """Kafka's `ConsumerGroup`/`StreamsGroup.validateOffsetFetch`: a member fetches with its
        current epoch; no member id and a negative epoch is an admin fetch."""
        if member_epoch < 0 and member_id is None:
            return
        member = self.members.get(member_id or "")
        if member is None:
            raise KafkaError(ErrorCode.unknown_member_id)
        if member_epoch != member.member_epoch:
            raise KafkaError(ErrorCode.stale_member_epoch)

    def has_metadata_expired(self, now: int, cluster_version: int) -> bool:
        """Kafka's `hasMetadataExpired`, plus a changed cluster (Kafka's metadata listener
        asks subscribed groups for a refresh when topics change)."""
        return (now >= self.metadata_refresh_deadline or self.group_epoch != self.metadata_refresh_epoch
                or cluster_version != self.metadata_version_seen)

    def set_metadata_refresh_deadline(self, deadline: int, epoch: int, cluster_version: int) -> None:
        self.metadata_refresh_deadline = deadline
        self.metadata_refresh_epoch = epoch
        self.metadata_version_seen = cluster_version

    # -- members ------------------------------------------------------------------------
    def has_member(self, member_id: str) -> bool:
        return member_id in self.members

    def static_member(self, instance_id: str | None) -> Any:
        member_id = self.static_members.get(instance_id) if instance_id is not None else None
        return self.members.get(member_id) if member_id is not None else None

    def member(self, member_id: str) -> Any:
        """The member, or UNKNOWN_MEMBER_ID in Kafka's words."""
        member = self.members.get(member_id)
        if member is None:
            raise KafkaError(ErrorCode.unknown_member_id, f"Member {member_id} is not a member of group {self.group_id}.")
        return member

    def checked_static_member(self, instance_id: str, member_id: str) -> Any:
        """The static member holding `instance_id`, which must be `member_id` (Kafka's
        `throwIfStaticMemberIsUnknown` and `throwIfInstanceIdIsFenced`)."""
        member = self.static_member(instance_id)
        if member is None:
            raise KafkaError(ErrorCode.unknown_member_id, f"Instance id {instance_id} is unknown.")
        if member.member_id != member_id:
            raise KafkaError(ErrorCode.fenced_instance_id, f"Static member {member_id} with instance id "
                             f"{instance_id} was fenced by member {member.member_id}.")
        return member

    def static_member_id(self, instance_id: str | None) -> str | None:
        return self.static_members.get(instance_id) if instance_id is not None else None

    def _index_member(self, old: Any, new: Any) -> None:
        """Keep the static-member index in line with a member update or removal."""
        if old is not None and old.instance_id is not None and \
                self.static_members.get(old.instance_id) == old.member_id and \
                (new is None or new.instance_id != old.instance_id):
            del self.static_members[old.instance_id]
        if new is not None and new.instance_id is not None:
            self.static_members[new.instance_id] = new.member_id


__all__ = ["METADATA_REFRESH_INTERVAL_MS", "INITIAL_GROUP_EPOCH", "LEAVE_GROUP_MEMBER_EPOCH",
           "LEAVE_GROUP_STATIC_MEMBER_EPOCH", "Assignment", "EpochAssignment", "ReplayError", "client_member_id",
           "can_compute_next_target_assignment", "target_assignment_due", "assign_partitions", "throw_if_empty_string", "heartbeat_error", "fence_by_id",
           "restarts_sessions_on_load", "handles_describe", "assignment_of", "topic_partitions",
           "described_assignment", "MemberState", "MemberStateBytes", "CONSUMER_MEMBER_STATE", "STREAMS_MEMBER_STATE",
           "ModernMember", "ModernGroupState", "ModernGroup", "topic_order", "frozen", "partitions_of"]
