"""The classic group (JoinGroup/SyncGroup protocol): its members, states and generations.

Classic groups are the one group type whose in-memory state is mostly *soft*, as in
Kafka: members waiting in JoinGroup/SyncGroup, pending members, heartbeat deadlines,
even the state name between rebalances live only in memory. The GroupMetadata record
persists what survives a failover (generation, protocol, leader, members with their
subscription and assignment bytes); `replay_metadata` rebuilds a group from it the
way Kafka's loader does (members present → Stable, none → Empty).

"Simple" groups (created by a standalone offset commit, generation -1) are empty
classic groups without a protocol type, as in Kafka.
"""
from __future__ import annotations

import enum
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from kgroup.errors import ErrorCode, KafkaError
from kgroup.groups.base import Group, GroupType, OffsetCommitContext
from kgroup.javaorder import JavaHashMap
from kgroup.records import GroupMetadata, GroupMetadataKey, GroupMetadataValue
from kgroup.runtime import PendingResponse

CONSUMER_PROTOCOL_TYPE = "consumer"
#: MetadataVersion.groupMetadataValueVersion() for every metadata version Kafka 4.x supports.
GROUP_METADATA_VALUE_VERSION = 3


class ClassicGroupState(enum.StrEnum):
    EMPTY = "Empty"
    PREPARING_REBALANCE = "PreparingRebalance"
    COMPLETING_REBALANCE = "CompletingRebalance"
    STABLE = "Stable"
    DEAD = "Dead"


S = ClassicGroupState
#: Kafka's ClassicGroupState.validPreviousStates.
_VALID_PREVIOUS = {
    S.EMPTY: {S.PREPARING_REBALANCE},
    S.PREPARING_REBALANCE: {S.STABLE, S.COMPLETING_REBALANCE, S.EMPTY},
    S.COMPLETING_REBALANCE: {S.PREPARING_REBALANCE},
    S.STABLE: {S.COMPLETING_REBALANCE},
    S.DEAD: {S.STABLE, S.PREPARING_REBALANCE, S.COMPLETING_REBALANCE, S.EMPTY, S.DEAD},
}


def subscription_topics(data: bytes) -> list[str]:
    """The topics of consumer-protocol subscription bytes, read as version 0 — the prefix
    every version shares, which is how Kafka's coordinator reads them (any version)."""
    if len(data) < 6:
        raise ValueError("consumer protocol subscription too short")
    count = int.from_bytes(data[2:6], "big", signed=True)
    pos, topics = 6, []
    for _ in range(max(count, 0)):
        if pos + 2 > len(data):
            raise ValueError("truncated consumer protocol subscription")
        n = int.from_bytes(data[pos:pos + 2], "big", signed=True)
        if n < 0 or pos + 2 + n > len(data):
            raise ValueError("bad topic length in consumer protocol subscription")
        topics.append(data[pos + 2:pos + 2 + n].decode("utf-8"))
        pos += 2 + n
    return topics


@dataclass(eq=False)
class ClassicMember:
    """One member of a classic group; `protocols` are (name, metadata) in preference order."""

    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    protocol_type: str
    protocols: list[tuple[str, bytes]]
    assignment: bytes = b""
    #: soft state: the JoinGroup / SyncGroup answers this member is waiting for
    awaiting_join: PendingResponse | None = None
    awaiting_sync: PendingResponse | None = None
    #: joined during the current join phase and not yet through it (Kafka: isNew)
    is_new: bool = False

    @property
    def is_static(self) -> bool:
        return self.group_instance_id is not None

    @property
    def is_awaiting_join(self) -> bool:
        return self.awaiting_join is not None

    @property
    def is_awaiting_sync(self) -> bool:
        return self.awaiting_sync is not None

    def metadata(self, protocol: str | None) -> bytes:
        for name, meta in self.protocols:
            if name == protocol:
                return meta
        raise KeyError(f"member {self.member_id} does not support protocol {protocol!r}")

    def matches(self, protocols: list[tuple[str, bytes]]) -> bool:
        """Same protocols with the same metadata in the same order (Kafka: matches)."""
        return list(protocols) == list(self.protocols)

    def vote(self, candidates: set[str]) -> str:
        """The member's most preferred protocol among the candidates."""
        for name, _ in self.protocols:
            if name in candidates:
                return name
        raise ValueError(f"member {self.member_id} does not support any of {sorted(candidates)}")

    def has_satisfied_heartbeat(self) -> bool:
        """Whether the member survives its heartbeat deadline (members in a join or sync
        phase do, unless they are new)."""
        if self.is_new:
            return False
        return self.is_awaiting_join or self.is_awaiting_sync


@dataclass(eq=False)
class ClassicGroup(Group):
    group_id: str
    protocol_type: str | None = None  # type: ignore[assignment]  # None for a simple group
    generation_id: int = 0
    protocol_name: str | None = None
    leader_id: str | None = None
    current_state: ClassicGroupState = ClassicGroupState.EMPTY
    previous_state: ClassicGroupState = ClassicGroupState.DEAD
    current_state_timestamp: int | None = None
    members: JavaHashMap[ClassicMember] = field(default_factory=JavaHashMap)
    static_members: dict[str, str] = field(default_factory=dict)          # instance id -> member id
    pending_join_members: set[str] = field(default_factory=set)           # MEMBER_ID_REQUIRED given
    pending_sync_members: set[str] = field(default_factory=set)
    supported_protocols: Counter[str] = field(default_factory=Counter)
    subscribed_topics: set[str] | None = None
    new_member_added: bool = False
    num_awaiting_join: int = 0
    #: soft counters for notebooks: rebalances started, static members replaced in place
    rebalances: int = 0
    static_replacements: int = 0
    last_rebalance_reason: str | None = None
    type = GroupType.CLASSIC

    # -- basics -------------------------------------------------------------------
    @property
    def state(self) -> str:
        return self.current_state.value

    def is_in_state(self, *states: ClassicGroupState) -> bool:
        return self.current_state in states

    def is_empty(self) -> bool:
        return self.current_state is ClassicGroupState.EMPTY

    def is_simple(self) -> bool:
        """A group that only holds offsets (Kafka's `isSimpleGroup`): no protocol, nobody in it."""
        return self.protocol_type is None and not self.members and not self.pending_join_members

    def has_member(self, member_id: str) -> bool:
        return member_id in self.members

    def member(self, member_id: str) -> ClassicMember:
        return self.members[member_id]

    def is_leader(self, member_id: str) -> bool:
        return self.leader_id is not None and self.leader_id == member_id

    def static_member_id(self, group_instance_id: str | None) -> str | None:
        return self.static_members.get(group_instance_id) if group_instance_id is not None else None

    def is_pending_member(self, member_id: str) -> bool:
        return member_id in self.pending_join_members

    def uses_consumer_protocol(self) -> bool:
        return self.protocol_type == CONSUMER_PROTOCOL_TYPE

    def can_rebalance(self) -> bool:
        return self.current_state in _VALID_PREVIOUS[S.PREPARING_REBALANCE]

    def rebalance_timeout_ms(self) -> int:
        """The longest rebalance timeout of the members: how long a join phase may take."""
        return max((m.rebalance_timeout_ms for m in self.members.values()), default=0)

    def has_all_members_joined(self) -> bool:
        return len(self.members) == self.num_awaiting_join and not self.pending_join_members

    def not_yet_rejoined_members(self) -> list[ClassicMember]:
        return [m for m in self.members.values() if not m.is_awaiting_join]

    def transition_to(self, state: ClassicGroupState, now: int) -> None:
        if self.current_state not in _VALID_PREVIOUS[state]:
            raise RuntimeError(f"group {self.group_id} cannot move from {self.current_state} to {state}")
        self.previous_state, self.current_state = self.current_state, state
        self.current_state_timestamp = now

    # -- membership -----------------------------------------------------------------
    def supports_protocols(self, protocol_type: str, protocols: list[tuple[str, bytes]]) -> bool:
        """A joining member fits if the group is empty (and it names a protocol) or it shares
        the protocol type and at least one protocol every member supports."""
        names = {name for name, _ in protocols}
        if self.is_in_state(S.EMPTY):
            return bool(protocol_type) and bool(names)
        return (self.protocol_type == protocol_type
                and any(self.supported_protocols[n] == len(self.members) for n in names))

    def add(self, member: ClassicMember, future: PendingResponse | None = None) -> None:
        if member.group_instance_id is not None:
            if member.group_instance_id in self.static_members:
                raise RuntimeError(f"static member {member.group_instance_id} is already in group {self.group_id}")
            self.static_members[member.group_instance_id] = member.member_id
        if not self.members:
            self.protocol_type = member.protocol_type
        if self.leader_id is None:
            self.leader_id = member.member_id
        self.members[member.member_id] = member
        self.supported_protocols.update(_protocol_names(member))
        member.awaiting_join = future
        if future is not None:
            self.num_awaiting_join += 1
        self.pending_join_members.discard(member.member_id)

    def remove(self, member_id: str) -> None:
        member = self.members.pop(member_id, None)
        if member is not None:
            self.supported_protocols.subtract(_protocol_names(member))
            if member.is_awaiting_join:
                self.num_awaiting_join -= 1
            if member.group_instance_id is not None:
                self.static_members.pop(member.group_instance_id, None)
        if self.is_leader(member_id):
            # Kafka takes the first member in HashMap order.
            self.leader_id = self.members.first_key()
        self.pending_join_members.discard(member_id)
        self.pending_sync_members.discard(member_id)

    def update_member(self, member: ClassicMember, protocols: list[tuple[str, bytes]], rebalance_timeout_ms: int,
                      session_timeout_ms: int, future: PendingResponse | None) -> None:
        self.supported_protocols.subtract(_protocol_names(member))
        member.protocols = list(protocols)
        self.supported_protocols.update(_protocol_names(member))
        member.rebalance_timeout_ms = rebalance_timeout_ms
        member.session_timeout_ms = session_timeout_ms
        if future is not None and not member.is_awaiting_join:
            self.num_awaiting_join += 1
        elif future is None and member.is_awaiting_join:
            self.num_awaiting_join -= 1
        member.awaiting_join = future

    def replace_static_member(self, group_instance_id: str, old_member_id: str, new_member_id: str) -> ClassicMember:
        """KIP-345: a restarted static member takes over its old identity under a new
        member id; whoever still waits under the old id is fenced."""
        old = self.members.pop(old_member_id)
        self.complete_join(old, {"members": [], "member_id": old_member_id, "generation_id": -1,
                                 "protocol_name": None, "protocol_type": None, "leader": "",
                                 "skip_assignment": False, "error_code": ErrorCode.fenced_instance_id})
        self.complete_sync(old, {"assignment": b"", "protocol_name": None, "protocol_type": None,
                                 "error_code": ErrorCode.fenced_instance_id})
        new = ClassicMember(new_member_id, old.group_instance_id, old.client_id, old.client_host,
                            old.rebalance_timeout_ms, old.session_timeout_ms, old.protocol_type,
                            list(old.protocols), old.assignment)
        self.members[new_member_id] = new
        if self.is_leader(old_member_id):
            self.leader_id = new_member_id
        self.static_members[group_instance_id] = new_member_id
        return new

    def maybe_elect_new_joined_leader(self) -> bool:
        """Keep the leader if it rejoined, else pick a member that did; False if none did."""
        if self.leader_id is None:
            return False
        if self.members[self.leader_id].is_awaiting_join:
            return True
        for m in self.members.values():
            if m.is_awaiting_join:
                self.leader_id = m.member_id
                return True
        return False

    def validate_member(self, member_id: str, group_instance_id: str | None) -> None:
        """UNKNOWN_MEMBER_ID / FENCED_INSTANCE_ID checks shared by every classic API."""
        if group_instance_id is not None:
            existing = self.static_members.get(group_instance_id)
            if existing is None:
                raise KafkaError(ErrorCode.unknown_member_id, f"no static member with instance id {group_instance_id!r}")
            if existing != member_id:
                raise KafkaError(ErrorCode.fenced_instance_id,
                                 f"instance {group_instance_id!r} is now member {existing}, not {member_id}")
        if member_id not in self.members:
            raise KafkaError(ErrorCode.unknown_member_id, f"unknown member {member_id!r}")

    # -- answers ---------------------------------------------------------------------
    def complete_join(self, member: ClassicMember, data: dict) -> bool:
        if member.awaiting_join is None:
            return False
        future, member.awaiting_join = member.awaiting_join, None
        self.num_awaiting_join -= 1
        future.complete(data)
        return True

    def complete_sync(self, member: ClassicMember, data: dict) -> bool:
        if member.awaiting_sync is None:
            return False
        future, member.awaiting_sync = member.awaiting_sync, None
        future.complete(data)
        return True

    # -- generations -------------------------------------------------------------------
    def select_protocol(self) -> str:
        """Each member votes for its favourite protocol that all members support; the most
        votes win (ties: the first in HashMap order, as Kafka's stream max keeps)."""
        if not self.members:
            raise RuntimeError(f"cannot select a protocol for empty group {self.group_id}")
        candidates = {n for n, c in self.supported_protocols.items() if c == len(self.members)}
        votes: JavaHashMap[int] = JavaHashMap()
        for m in self.members.values():
            choice = m.vote(candidates)
            votes[choice] = votes.get(choice, 0) + 1
        best, best_count = None, -1
        for name, count in votes.items():
            if count > best_count:
                best, best_count = name, count
        return best  # type: ignore[return-value]

    def init_next_generation(self, now: int) -> None:
        self.generation_id += 1
        if self.members:
            self.protocol_name = self.select_protocol()
            self.subscribed_topics = self.compute_subscribed_topics()
            self.transition_to(S.COMPLETING_REBALANCE, now)
        else:
            self.protocol_name = None
            self.subscribed_topics = self.compute_subscribed_topics()
            self.transition_to(S.EMPTY, now)
        self.pending_sync_members.clear()

    def compute_subscribed_topics(self) -> set[str] | None:
        """Topics the consumer-protocol members subscribe to; None when unknown."""
        if self.protocol_type != CONSUMER_PROTOCOL_TYPE:
            return None
        if not self.members:
            return set()
        if self.protocol_name is None:
            return None
        topics: set[str] = set()
        try:
            for m in self.members.values():
                topics.update(subscription_topics(m.metadata(self.protocol_name)))
        except (ValueError, KeyError):
            return None  # Kafka logs and stays unaware of the subscriptions
        return topics

    def current_members_for_join(self) -> list[dict]:
        """The member list the leader gets in its JoinGroup answer."""
        return [{"member_id": m.member_id, "group_instance_id": m.group_instance_id,
                 "metadata": m.metadata(self.protocol_name)} for m in self.members.values()]

    def group_assignment(self) -> dict[str, bytes]:
        return {m.member_id: m.assignment for m in self.members.values()}

    # -- records ------------------------------------------------------------------------
    def metadata_record(self, assignment: dict[str, bytes]) -> GroupMetadata:
        """The GroupMetadata record Kafka writes for this group (newGroupMetadataRecord)."""
        members = []
        for m in self.members.values():
            if self.protocol_name is None:
                raise RuntimeError("non-empty group metadata needs a protocol")
            members.append(GroupMetadataValue.MemberMetadata(
                member_id=m.member_id, group_instance_id=m.group_instance_id, client_id=m.client_id,
                client_host=m.client_host, rebalance_timeout=m.rebalance_timeout_ms,
                session_timeout=m.session_timeout_ms, subscription=m.metadata(self.protocol_name),
                assignment=assignment[m.member_id]))
        value = GroupMetadataValue(
            protocol_type=self.protocol_type or "", generation=self.generation_id, protocol=self.protocol_name,
            leader=self.leader_id, current_state_timestamp=(self.current_state_timestamp
                                                            if self.current_state_timestamp is not None else -1),
            members=members)
        return GroupMetadata(GroupMetadataKey(group=self.group_id), value, GROUP_METADATA_VALUE_VERSION)

    def empty_metadata_record(self, now: int) -> GroupMetadata:
        """What Kafka writes when JoinGroup creates the group (newEmptyGroupMetadataRecord): the
        group as created, before its first member, so with no protocol type even when a static
        member joined in the same request (Kafka 4.4.0's records)."""
        value = GroupMetadataValue(protocol_type="", generation=0, protocol=None,
                                   leader=None, current_state_timestamp=now, members=[])
        return GroupMetadata(GroupMetadataKey(group=self.group_id), value, GROUP_METADATA_VALUE_VERSION)

    # -- replay (a coordinator loading its log) -------------------------------------------
    @classmethod
    def from_metadata(cls, group_id: str, value: Any) -> "ClassicGroup":
        """The group as Kafka's loader rebuilds it from a GroupMetadata value."""
        cst = getattr(value, "current_state_timestamp", -1)
        group = cls(group_id, protocol_type=value.protocol_type or None, generation_id=value.generation,
                    protocol_name=value.protocol, leader_id=value.leader,
                    current_state=S.STABLE if value.members else S.EMPTY,
                    current_state_timestamp=cst if cst is not None and cst >= 0 else None)
        for m in value.members:
            rebalance = getattr(m, "rebalance_timeout", -1)
            group.add(ClassicMember(
                member_id=m.member_id, group_instance_id=getattr(m, "group_instance_id", None),
                client_id=m.client_id, client_host=m.client_host,
                rebalance_timeout_ms=m.session_timeout if rebalance in (None, -1) else rebalance,
                session_timeout_ms=m.session_timeout, protocol_type=value.protocol_type,
                protocols=[(value.protocol, m.subscription)], assignment=m.assignment))
        if value.leader is not None:
            group.leader_id = value.leader  # add() made the first member leader
        group.subscribed_topics = group.compute_subscribed_topics()
        return group

    # -- offsets (Kafka ClassicGroup.validateOffsetCommit) ------------------------------
    def validate_offset_commit(self, ctx: OffsetCommitContext) -> None:
        if self.current_state is S.DEAD:
            raise KafkaError(ErrorCode.coordinator_not_available, f"group {self.group_id} is dead")
        generation = ctx.generation_id_or_member_epoch
        if generation < 0 and self.is_empty():
            # Admin clients and consumers without group management commit into empty groups.
            return
        if generation >= 0 or ctx.member_id or ctx.group_instance_id is not None:
            self.validate_member(ctx.member_id, ctx.group_instance_id)
            if generation != self.generation_id:
                raise KafkaError(ErrorCode.illegal_generation,
                                 f"generation {generation} is not the group's generation {self.generation_id}")
        elif not ctx.is_transactional and not self.is_empty():
            raise KafkaError(ErrorCode.unknown_member_id,
                             "a commit without member id and generation needs an empty group")
        if not ctx.is_transactional and self.current_state is S.COMPLETING_REBALANCE:
            raise KafkaError(ErrorCode.rebalance_in_progress)

    def validate_offset_fetch(self, member_id: str | None, member_epoch: int) -> None:
        if self.current_state is S.DEAD:
            raise KafkaError(ErrorCode.group_id_not_found, f"group {self.group_id} is dead")

    def validate_offset_delete(self) -> None:
        if self.current_state is S.DEAD:
            raise KafkaError(ErrorCode.group_id_not_found, f"group {self.group_id} is dead")
        if not self.is_empty() and not self.uses_consumer_protocol():
            # Only consumer-protocol groups know their subscriptions, so only they may
            # delete offsets of unsubscribed topics while members are active.
            raise KafkaError(ErrorCode.non_empty_group, f"group {self.group_id} is {self.state}")

    def validate_delete_group(self) -> None:
        if self.current_state is S.DEAD:
            raise KafkaError(ErrorCode.group_id_not_found, f"group {self.group_id} is dead")
        if not self.is_empty():
            raise KafkaError(ErrorCode.non_empty_group, f"group {self.group_id} is {self.state}")

    def is_subscribed_to_topic(self, topic: str) -> bool:
        # Unknown subscriptions count as "subscribed" for consumer-protocol groups (Kafka).
        if self.subscribed_topics is not None:
            return topic in self.subscribed_topics
        return self.uses_consumer_protocol()

    def offset_expiration_base(self, commit_timestamp: int) -> int | None:
        # Kafka offsetExpirationCondition: simple groups count from the commit; groups with a
        # protocol type expire only while Empty (from when they became Empty), or while
        # Stable with known consumer subscriptions (unsubscribed topics, from the commit).
        if not self.protocol_type:
            return commit_timestamp
        if self.is_empty():
            return self.current_state_timestamp if self.current_state_timestamp is not None else commit_timestamp
        if self.uses_consumer_protocol() and self.subscribed_topics is not None and self.is_in_state(S.STABLE):
            return commit_timestamp
        return None

    def tombstones(self) -> list:
        return [GroupMetadata.tombstone(GroupMetadataKey(group=self.group_id))]

    # -- display ---------------------------------------------------------------------------
    @property
    def epoch(self) -> int:
        return self.generation_id

    def describe_members(self) -> list[dict]:
        """Members as rows (for tables and widgets)."""
        return [{"member_id": m.member_id, "group_instance_id": m.group_instance_id, "client_id": m.client_id,
                 "leader": self.is_leader(m.member_id), "awaiting_join": m.is_awaiting_join,
                 "awaiting_sync": m.is_awaiting_sync, "pending_sync": m.member_id in self.pending_sync_members,
                 "session_timeout_ms": m.session_timeout_ms, "rebalance_timeout_ms": m.rebalance_timeout_ms,
                 "assignment_bytes": len(m.assignment)} for m in self.members.values()]

    def __repr__(self) -> str:
        return (f"ClassicGroup({self.group_id!r}, {self.state}, generation={self.generation_id}, "
                f"protocol={self.protocol_name!r}, leader={self.leader_id!r}, members={list(self.members)})")


__all__ = ["ClassicGroup", "ClassicGroupState", "ClassicMember", "CONSUMER_PROTOCOL_TYPE",
           "GROUP_METADATA_VALUE_VERSION"]


def _protocol_names(member: ClassicMember) -> set[str]:
    """The protocol names a member supports, each once: `supported_protocols` counts members
    per protocol (Kafka's candidate check compares it with the member count), so a JoinGroup
    naming a protocol twice must not count twice, or no protocol is a candidate any more."""
    return {name for name, _ in member.protocols}
