"""What differs between the three modern group types, declared in one place.

Consumer (KIP-848), share (KIP-932) and Streams (KIP-1071) groups are one machine: epochs,
members, a target assignment, the same five records per group (metadata, member metadata,
target-assignment metadata, target-assignment member, current member assignment) and the same
replay rules (`modern.py`, `modern_replay.py`). Each type *declares* itself here: its record
family, the bytes it persists a member's state with, its APIs, Kafka's words for it, and what its
assignment and membership are. Everything a reader needs to tell the three apart is the table
`_DECLARED` below, one row per question read across the three; `table()` prints it (the README's
Design section shows it).

Adding a group type is one more column there and the per-type parts it names (its member
dataclass, how a record's value becomes a member, its heartbeat).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kgroup import records as R
from kgroup.errors import ErrorCode, KafkaError
from kgroup.groups.base import GroupType
from kgroup.groups.modern import CONSUMER_MEMBER_STATE, STREAMS_MEMBER_STATE, MemberStateBytes, topic_partitions

#: the record parts every modern group writes, after its family prefix ("ConsumerGroup" + part)
RECORD_PARTS = ("Metadata", "MemberMetadata", "TargetAssignmentMetadata", "TargetAssignmentMember",
                "CurrentMemberAssignment")


@dataclass(frozen=True)
class ModernGroupKind:
    """One modern group type's declaration (Kafka keeps these per type beside `ModernGroup`)."""

    type: GroupType
    #: the word in Kafka's messages: "Consumer group g not found."
    label: str
    #: the prefix of its `__consumer_offsets` record types (ConsumerGroupMetadata, ...)
    family: str
    #: the `State` byte of its current-assignment record (Streams keeps its own enum)
    member_state: MemberStateBytes
    heartbeat_api: int
    describe_api: int
    #: what the target assignment hands out
    assigns: str
    #: members revoke before they get what another member held (share: a member takes its target at once)
    reconciles: bool
    #: `group.instance.id` members (KIP-345 for consumers, Kafka PR #22245 for Streams)
    static_members: bool
    #: classic-protocol members inside the group, and conversion from/to a classic group
    classic_members: str
    #: what the current-assignment record keeps an assignment epoch for (KIP-1251)
    assignment_epochs: str
    #: where the group's progress lives
    offsets: str
    #: the states it reports besides Empty, Stable and Dead
    other_states: tuple[str, ...]
    #: Kafka's words when a target-epoch tombstone comes while members still have a target
    target_epoch_tombstone_refused: str
    records: dict[str, type] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # resolved once: the builders below run on every heartbeat that writes
        object.__setattr__(self, "records", {p: getattr(R, self.family + p) for p in RECORD_PARTS})

    # -- the lookups (Kafka's words) -------------------------------------------------------
    def group(self, c: Any, group_id: str) -> Any:
        """Kafka's `consumerGroup(groupId)` & co.: the group, or GROUP_ID_NOT_FOUND when it is
        missing or of another type."""
        group = c.groups.get(group_id)
        if group is None:
            raise KafkaError(ErrorCode.group_id_not_found, f"Group {group_id} not found.")
        if group.type != self.type:
            raise self.not_this_type(group_id)
        return group

    def not_this_type(self, group_id: str) -> KafkaError:
        return KafkaError(ErrorCode.group_id_not_found, f"Group {group_id} is not a {self.type} group.")

    def get_or_maybe_create(self, c: Any, group_id: str, create: bool, make: Callable[[], Any],
                            from_classic: Callable[[Any], Any] | None = None) -> Any:
        """Kafka's `getOrMaybeCreate...Group`: the group; a new one from `make()` when `create`
        (it lives only in the handler until its records are replayed); a classic group handed to
        `from_classic` when the type can take one over (None from it: it cannot); otherwise
        GROUP_ID_NOT_FOUND ("Consumer group g not found." for a missing one)."""
        group = c.groups.get(group_id)
        if group is None:
            if not create:
                raise KafkaError(ErrorCode.group_id_not_found, f"{self.label} group {group_id} not found.")
            return make()
        if group.type == self.type:
            return group
        if create and from_classic is not None and group.type == GroupType.CLASSIC:
            taken = from_classic(group)
            if taken is not None:
                return taken
        raise self.not_this_type(group_id)

    def describe(self, c: Any, group_id: str, answer: Callable[[Any], dict], **empty: Any) -> dict:
        """One group of a Describe answer: the fields every type answers (its state and epochs),
        this type's `empty` ones, then `answer(group)`; or only the error (Kafka's order of checks:
        an empty id, the coordinator, the group)."""
        base = {"error_code": ErrorCode.none, "error_message": None, "group_id": group_id, "group_state": "",
                "group_epoch": 0, "assignment_epoch": 0, **empty, "members": [],
                "authorized_operations": -2147483648}
        try:
            if not group_id:
                raise KafkaError(ErrorCode.invalid_group_id, None)  # Kafka sets no message here
            c.check_coordinator(group_id)
            group = self.group(c, group_id)
        except KafkaError as e:
            return {**base, "error_code": e.code, "error_message": e.message or None}
        return {**base, "group_state": group.state, "group_epoch": group.group_epoch,
                "assignment_epoch": group.assignment_epoch, **answer(group)}

    def hosted(self, c: Any) -> list:
        """This type's groups on the partitions the coordinator hosts (what `onLoaded` walks)."""
        return [g for g in list(c.groups.values())
                if g.type == self.type and c.partition_for(g.group_id) in c.hosted_partitions]

    # -- records (Kafka's GroupCoordinatorRecordHelpers, the parts all three share) -----------
    def record(self, part: str, value: Any, **key: Any) -> Any:
        """The `part` record of this family (one of `RECORD_PARTS`) keyed by `key`; a tombstone
        when `value` is None."""
        cls = self.records[part]
        return cls(cls.Key(**key), value) if value is not None else cls.tombstone(cls.Key(**key))

    def metadata_tombstone(self, group_id: str) -> Any:
        return self.record("Metadata", None, group_id=group_id)

    def member_tombstone(self, group_id: str, member_id: str) -> Any:
        return self.record("MemberMetadata", None, group_id=group_id, member_id=member_id)

    def target_member(self, group_id: str, member_id: str, value: Any) -> Any:
        return self.record("TargetAssignmentMember", value, group_id=group_id, member_id=member_id)

    def target_member_tombstone(self, group_id: str, member_id: str) -> Any:
        return self.record("TargetAssignmentMember", None, group_id=group_id, member_id=member_id)

    def partitions_target_member(self, group_id: str, member_id: str, assignment: Any) -> Any:
        """The target-assignment-member record of a type that assigns partitions (consumer, share)."""
        V = self.records["TargetAssignmentMember"].Value
        return self.target_member(group_id, member_id, V(topic_partitions=topic_partitions(V.TopicPartition, assignment)))

    def target_epoch(self, group_id: str, epoch: int, timestamp: int = 0) -> Any:
        """The assignment epoch, and when that assignment was computed (KIP-1263; 0 when no
        assignor ran: a converted group, an emptied one)."""
        V = self.records["TargetAssignmentMetadata"].Value
        return self.record("TargetAssignmentMetadata", V(assignment_epoch=epoch, assignment_timestamp=timestamp),
                           group_id=group_id)

    def target_epoch_tombstone(self, group_id: str) -> Any:
        return self.record("TargetAssignmentMetadata", None, group_id=group_id)

    def current_assignment(self, group_id: str, member: Any, **assignment: Any) -> Any:
        """A member's current-assignment record: its epochs and its state in this type's bytes
        (`member_state`), with the type's `assignment` fields."""
        V = self.records["CurrentMemberAssignment"].Value
        value = V(member_epoch=member.member_epoch, previous_member_epoch=member.previous_member_epoch,
                  state=self.member_state.encode(member.state), **assignment)
        return self.record("CurrentMemberAssignment", value, group_id=group_id, member_id=member.member_id)

    def current_assignment_tombstone(self, group_id: str, member_id: str) -> Any:
        return self.record("CurrentMemberAssignment", None, group_id=group_id, member_id=member_id)

    def group_tombstones(self, group_id: str, member_ids: Any) -> list:
        """The first part of Kafka's `createGroupTombstoneRecords`, the same for all three, in its
        order: current assignments, targets, the target epoch, members (the type adds its own)."""
        out: list[Any] = [self.current_assignment_tombstone(group_id, m) for m in member_ids]
        out += [self.target_member_tombstone(group_id, m) for m in member_ids]
        out.append(self.target_epoch_tombstone(group_id))
        return out + [self.member_tombstone(group_id, m) for m in member_ids]

_REFUSED = ("Received a tombstone record to delete the target assignment epoch of group {group_id} but members "
            "still have a target assignment.")

#: The declarations: one row per question, one column per type (consumer, share, Streams), so that
#: a row reads across what differs.
_DECLARED: dict[str, tuple[Any, Any, Any]] = {
    "type": (GroupType.CONSUMER, GroupType.SHARE, GroupType.STREAMS),
    "label": ("Consumer", "Share", "Streams"),
    "family": ("ConsumerGroup", "ShareGroup", "StreamsGroup"),
    "member_state": (CONSUMER_MEMBER_STATE, CONSUMER_MEMBER_STATE, STREAMS_MEMBER_STATE),
    "heartbeat_api": (68, 76, 88),
    "describe_api": (69, 77, 89),
    "assigns": ("partitions, each to one member (server-side `uniform` or `range`)",
                "partitions, one partition possibly to several members (`simple`)",
                "tasks of a topology: active, standby and warm-up (`sticky`; `highly_available` under `kip`)"),
    "reconciles": (True, False, True),
    "static_members": (True, False, True),
    "classic_members": ("yes: online migration both ways (KIP-848)", "no",
                        "online migration under `kip` (KIP-1071); under `kafka` offline only, as Kafka 4.4.0"),
    "assignment_epochs": ("each assigned or revoking partition", "nothing", "each assigned or revoking active task"),
    "offsets": ("OffsetCommit in `__consumer_offsets`",
                "share-partition state (SPSO, record states) in `__share_group_state`",
                "OffsetCommit in `__consumer_offsets`"),
    "other_states": (("Assigning", "Reconciling"), (), ("NotReady", "Assigning", "Reconciling")),
    "target_epoch_tombstone_refused": (_REFUSED, _REFUSED, "Received a tombstone record to delete target assignment "
                                       "of {group_id} but the assignment still has {members} members."),
}
CONSUMER, SHARE, STREAMS = (ModernGroupKind(**{name: row[i] for name, row in _DECLARED.items()}) for i in range(3))

#: the modern group types, by `GroupType`
KINDS = {k.type: k for k in (CONSUMER, SHARE, STREAMS)}


def table() -> str:
    """The declarations side by side, as a Markdown table (what the README shows)."""
    def states(k: ModernGroupKind) -> str:
        return ", ".join(("Empty", *k.other_states, "Stable", "Dead"))

    rows = [("records", lambda k: f"`{k.family}*` (types {_record_types(k)})"),
            ("member state bytes", lambda k: "STABLE={}, UNREVOKED={}, UNRELEASED={}".format(
                k.member_state.stable, k.member_state.unrevoked, k.member_state.unreleased)),
            ("heartbeat / describe API", lambda k: f"{k.heartbeat_api} / {k.describe_api}"),
            ("assigns", lambda k: k.assigns),
            ("revokes before reassigning", lambda k: "yes" if k.reconciles else "no"),
            ("static members", lambda k: "yes" if k.static_members else "no"),
            ("classic members, migration", lambda k: k.classic_members),
            ("assignment epochs kept for", lambda k: k.assignment_epochs),
            ("progress kept in", lambda k: k.offsets),
            ("states", states)]
    kinds = list(KINDS.values())
    out = ["| | " + " | ".join(f"{k.label} (`{k.type}`)" for k in kinds) + " |",
           "|---" * (len(kinds) + 1) + "|"]
    out += [f"| {name} | " + " | ".join(cell(k) for k in kinds) + " |" for name, cell in rows]
    return "\n".join(out)


def _record_types(kind: ModernGroupKind) -> str:
    """The `__consumer_offsets` record types of a family, as ranges ("3-8, 16")."""
    numbers = sorted({cls.TYPE for name in dir(R) if name.startswith(kind.family)
                      and isinstance(cls := getattr(R, name), type) and issubclass(cls, R.CoordinatorRecord)})
    runs: list[list[int]] = []
    for n in numbers:
        if runs and n == runs[-1][-1] + 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    return ", ".join(f"{r[0]}-{r[-1]}" if len(r) > 1 else str(r[0]) for r in runs)


__all__ = ["ModernGroupKind", "CONSUMER", "SHARE", "STREAMS", "KINDS", "RECORD_PARTS", "table"]
