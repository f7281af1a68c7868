"""What online migration between a classic group and a modern group (KIP-848 consumer groups,
KIP-1071 Streams groups) needs whichever modern group it is:

- `ClassicMemberMetadata`: what a member still speaking JoinGroup/SyncGroup brought along;
- `ClassicJoin`: who a classic JoinGroup says it is, checked as Kafka checks it in both;
- `serve_classic_members`: the hooks the classic handlers find on a modern group type;
- `join_error` and `release_waiting_members`: telling classic members waiting in a join or
  sync phase to rejoin, when their group changes type under them;
- per-member join and sync deadlines for classic members inside a modern group;
- `describe_as_classic`: DescribeGroups on a modern group;
- `classic_group_for_downgrade`: the classic group a modern group turns back into.

The group-specific parts (how a subscription becomes member metadata, how tasks or
partitions are encoded) stay in `consumer/migration.py` and `streams/migration.py`.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kgroup.errors import ErrorCode, KafkaError
from kgroup.groups.classic import ClassicGroup, ClassicGroupState, ClassicMember
from kgroup.groups.classic.group import CONSUMER_PROTOCOL_TYPE
from kgroup.groups.modern import MemberState
from kgroup.protocol import get
from kgroup.runtime import group_timer

if TYPE_CHECKING:
    from kgroup.coordinator import Coordinator


@dataclass(frozen=True)
class ClassicMemberMetadata:
    """What a member speaking the classic protocol inside a modern group brought with its
    JoinGroup (KIP-848 online migration; KIP-1071 reuses it)."""

    session_timeout_ms: int
    supported_protocols: tuple[tuple[str, bytes], ...]


#: what the classic handlers call on a modern group whose members may speak the classic protocol
CLASSIC_HOOKS = ("classic_join", "classic_sync", "classic_heartbeat", "classic_leave", "describe_as_classic")


def serve_classic_members(group_class: type, hooks: Any) -> None:
    """Let `group_class`'s classic-protocol members be served by `hooks` (a module defining
    `CLASSIC_HOOKS`): the classic handlers look them up on the group."""
    for name in CLASSIC_HOOKS:
        setattr(group_class, name, getattr(hooks, name))


@dataclass(frozen=True)
class ClassicJoin:
    """Who a classic JoinGroup into a modern group says it is (Kafka's first steps of
    `classicGroupJoinToConsumerGroup`, shared by the Streams side)."""

    member_id: str
    #: the member came without an id and got a new one
    unknown: bool
    instance_id: str | None
    protocols: list[tuple[str, bytes]]

    @classmethod
    def of(cls, c: "Coordinator", req: Any, new_member_id: Callable[[Any], str]) -> "ClassicJoin":
        unknown = req.member_id == ""
        return cls(new_member_id(c) if unknown else req.member_id, unknown, get(req, "group_instance_id"),
                   [(p.name, bytes(p.metadata)) for p in req.protocols])

    def check_protocols(self, group: Any, req: Any) -> None:
        """INCONSISTENT_GROUP_PROTOCOL unless it speaks the consumer protocol type with one protocol
        every classic member of the group supports (Kafka's `supportsClassicProtocols`; any will do
        while there is none)."""
        classic = [m for m in group.members.values() if m.uses_classic_protocol]
        supported = bool(self.protocols) if not classic else any(
            all(name in {n for n, _ in m.classic_member_metadata.supported_protocols} for m in classic)
            for name, _ in self.protocols)
        if req.protocol_type != CONSUMER_PROTOCOL_TYPE or not self.protocols or not supported:
            raise KafkaError(ErrorCode.inconsistent_group_protocol,
                             f"Member {self.member_id}'s protocols are not supported.")

    def member_id_required(self, version: int) -> bool:
        """A dynamic member's first JoinGroup (v4+) only learns its new id (MEMBER_ID_REQUIRED)."""
        return self.unknown and self.instance_id is None and version >= 4


def join_error(member_id: str, code: ErrorCode) -> dict:
    """A JoinGroup answer carrying only an error."""
    return {"error_code": code, "generation_id": -1, "protocol_type": None, "protocol_name": None, "leader": "",
            "skip_assignment": False, "member_id": member_id, "members": [], "throttle_time": 0}


def release_waiting_members(classic: ClassicGroup) -> None:
    """Members waiting in a join or sync phase of a classic group that is being converted
    are told to rejoin (REBALANCE_IN_PROGRESS): the new group serves them from now on."""
    for m in classic.members.values():
        if m.awaiting_join is not None:
            m.awaiting_join.complete(join_error(m.member_id, ErrorCode.rebalance_in_progress))
            m.awaiting_join = None
        if m.awaiting_sync is not None:
            m.awaiting_sync.complete({"error_code": ErrorCode.rebalance_in_progress, "assignment": b"",
                                      "protocol_type": None, "protocol_name": None})
            m.awaiting_sync = None


def join_key(kind: str, group_id: str, member_id: str) -> str:
    return group_timer(f"{kind}-join-{group_id}-{member_id}", group_id)


def sync_key(kind: str, group_id: str, member_id: str) -> str:
    return group_timer(f"{kind}-sync-{group_id}-{member_id}", group_id)


Fence = Callable[["Coordinator", str, str, str], Any]


def schedule_sync_timeout(c: "Coordinator", kind: str, group_id: str, member_id: str, timeout_ms: int,
                          fence: Fence) -> None:
    """A classic member that joined must sync within its rebalance timeout (Kafka's sync timer)."""
    c.timers.schedule(sync_key(kind, group_id, member_id), c.now() + timeout_ms,
                      lambda: fence(c, group_id, member_id, "the member failed to sync within timeout"))


def schedule_join_timeout_if_absent(c: "Coordinator", kind: str, group_id: str, member_id: str, timeout_ms: int,
                                    fence: Fence) -> None:
    """A classic member told to rejoin must do so within its rebalance timeout."""
    key = join_key(kind, group_id, member_id)
    if key not in c.timers:
        c.timers.schedule(key, c.now() + timeout_ms, lambda: fence(
            c, group_id, member_id, "the classic member failed to join within the rebalance timeout"))


def classic_member(group: Any, member_id: str, instance_id: str | None) -> Any:
    """The member a classic request names (by instance id when static), which must speak the
    classic protocol: UNKNOWN_MEMBER_ID or FENCED_INSTANCE_ID otherwise, in Kafka's words."""
    if instance_id is None:
        member = group.members.get(member_id)
        if member is None:
            raise KafkaError(ErrorCode.unknown_member_id, f"Member {member_id} is not a member of group "
                             f"{group.group_id}.")
    else:
        member = group.static_member(instance_id)
        if member is None:
            raise KafkaError(ErrorCode.unknown_member_id, f"Instance id {instance_id} is unknown.")
        if member.member_id != member_id:
            raise KafkaError(ErrorCode.fenced_instance_id)
    if not member.uses_classic_protocol:
        raise KafkaError(ErrorCode.unknown_member_id, f"Member {member.member_id} does not use the classic protocol.")
    return member


def check_classic_sync(c: "Coordinator", kind: str, group: Any, member: Any, req: Any,
                       fence: Callable[..., Any]) -> str:
    """Kafka's checks of a classic member's SyncGroup served by a modern group: its generation,
    the protocol type and name it synced with, and REBALANCE_IN_PROGRESS (with a join timeout,
    `fence` on expiry) when the group moved on and it has nothing left to revoke. Returns the
    protocol name; raises KafkaError otherwise."""
    if req.generation_id != member.member_epoch:
        raise KafkaError(ErrorCode.illegal_generation)
    protocol_name = member.classic_member_metadata.supported_protocols[0][0]
    ptype, pname = get(req, "protocol_type"), get(req, "protocol_name")
    if (ptype is not None and ptype != "consumer") or (pname is not None and pname != protocol_name):
        raise KafkaError(ErrorCode.inconsistent_group_protocol)
    # a newer assignment, not a bare epoch bump (KIP-1263: its assignment may wait for the interval)
    if group.assignment_epoch > member.member_epoch and member.state != MemberState.UNREVOKED_PARTITIONS:
        schedule_join_timeout_if_absent(c, kind, group.group_id, member.member_id, member.rebalance_timeout_ms, fence)
        raise KafkaError(ErrorCode.rebalance_in_progress)
    return protocol_name


def leaving_members(group: Any, identities: list[tuple[str, str | None]]) -> tuple[list[dict], list[Any]]:
    """A classic LeaveGroup served by a modern group: the per-member answers (UNKNOWN_MEMBER_ID,
    FENCED_INSTANCE_ID as Kafka's `classicGroupLeaveToConsumerGroup`) and the members that leave."""
    answers, leaving = [], []
    for member_id, instance_id in identities:
        code = ErrorCode.none
        try:
            if instance_id is None:
                member = group.members.get(member_id)
                if member is None:
                    raise KafkaError(ErrorCode.unknown_member_id)
            else:
                member = group.static_member(instance_id)
                if member is None:
                    raise KafkaError(ErrorCode.unknown_member_id)
                if member_id and member.member_id != member_id:
                    raise KafkaError(ErrorCode.fenced_instance_id)
            if member not in leaving:
                leaving.append(member)
        except KafkaError as e:
            code = e.code
        answers.append({"member_id": member_id, "group_instance_id": instance_id, "error_code": code})
    return answers, leaving


def describe_as_classic(group: Any, c: "Coordinator", version: int) -> dict:
    """DescribeGroups on a modern group: Kafka answers GROUP_ID_NOT_FOUND (v6+) or Dead."""
    if version >= 6:
        return {"group_state": "Dead", "error_code": ErrorCode.group_id_not_found,
                "error_message": f"Group {group.group_id} is not a classic group."}
    return {"group_state": "Dead"}


def classic_group_for_downgrade(c: "Coordinator", group_id: str, generation: int, protocol_type: str,
                                members: Iterable[tuple[Any, ClassicMemberMetadata]],
                                assignment_of: Callable[[Any, bytes], bytes]) -> ClassicGroup:
    """Kafka's `ClassicGroup.fromConsumerGroup`: a classic group, Stable at the modern group's
    epoch, whose members carry their protocols and `assignment_of(member, chosen protocol's
    metadata)` as assignment bytes."""
    classic = ClassicGroup(group_id, current_state=ClassicGroupState.STABLE, current_state_timestamp=c.now())
    classic.generation_id = generation
    modern = {}
    for m, meta in members:
        classic.add(ClassicMember(m.member_id, m.instance_id, m.client_id, m.client_host, m.rebalance_timeout_ms,
                                  meta.session_timeout_ms, protocol_type, list(meta.supported_protocols)))
        modern[m.member_id] = m
    classic.protocol_name = classic.select_protocol()
    classic.subscribed_topics = classic.compute_subscribed_topics()
    for cm in classic.members.values():
        cm.assignment = assignment_of(modern[cm.member_id], cm.metadata(classic.protocol_name))
    return classic


__all__ = ["ClassicMemberMetadata", "join_error", "release_waiting_members", "join_key", "sync_key",
           "schedule_sync_timeout", "schedule_join_timeout_if_absent", "describe_as_classic",
           "classic_group_for_downgrade"]
