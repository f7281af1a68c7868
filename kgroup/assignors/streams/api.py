"""The interface of KIP-1071's task assignors (Kafka's `org.apache.kafka.coordinator.group.
streams.assignor`: `TaskAssignor`, `GroupSpec`, `AssignmentMemberSpec`, `TopologyDescriber`).

A task is a subtopology id and a partition. Each member runs tasks in three roles: *active*
(processing), *standby* (a replica of a stateful task's state) and *warm-up* (a standby placed
to catch up before it takes over the active task). Members of one Kafka Streams process share
a process id; the assignors balance per member and never put one stateful task twice on a
process.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

TaskId = tuple[str, int]  # (subtopology id, partition)

_EMPTY: Mapping[str, frozenset[int]] = {}


def _normalised(tasks: Mapping[str, Iterable[int]] | None) -> dict[str, frozenset[int]]:
    return {s: frozenset(ps) for s, ps in (tasks or {}).items() if ps}


def _grouped(ids: Iterable[TaskId]) -> dict[str, set[int]]:
    out: dict[str, set[int]] = {}
    for s, p in ids:
        ps = out.get(s)
        if ps is None:
            out[s] = {p}
        else:
            ps.add(p)
    return out


class TaskSets:
    """One member's tasks in the three roles (subtopology id -> partitions), immutable and
    compared by value (empty subtopologies are dropped, so they never make two sets differ)."""

    __slots__ = ("active", "standby", "warmup", "_hash")

    def __init__(self, active: Mapping[str, Iterable[int]] | None = None,
                 standby: Mapping[str, Iterable[int]] | None = None,
                 warmup: Mapping[str, Iterable[int]] | None = None) -> None:
        object.__setattr__(self, "active", _normalised(active))
        object.__setattr__(self, "standby", _normalised(standby))
        object.__setattr__(self, "warmup", _normalised(warmup))
        object.__setattr__(self, "_hash", None)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("TaskSets is immutable")

    # immutable: a copy is the same object (copy's default would set the slots and fail)
    def __copy__(self) -> "TaskSets":
        return self

    def __deepcopy__(self, memo: dict) -> "TaskSets":
        return self

    @classmethod
    def of(cls, active: Iterable[TaskId] = (), standby: Iterable[TaskId] = (),
           warmup: Iterable[TaskId] = ()) -> "TaskSets":
        """From task ids: `TaskSets.of(active=[("0", 1)], standby=[("0", 2)])`."""
        return cls(_grouped(active), _grouped(standby), _grouped(warmup))

    @staticmethod
    def _ids(tasks: Mapping[str, frozenset[int]]) -> frozenset[TaskId]:
        return frozenset((s, p) for s, ps in tasks.items() for p in ps)

    def active_ids(self) -> frozenset[TaskId]:
        return self._ids(self.active)

    def standby_ids(self) -> frozenset[TaskId]:
        return self._ids(self.standby)

    def warmup_ids(self) -> frozenset[TaskId]:
        return self._ids(self.warmup)

    def all_ids(self) -> frozenset[TaskId]:
        return self.active_ids() | self.standby_ids() | self.warmup_ids()

    @property
    def is_empty(self) -> bool:
        return not (self.active or self.standby or self.warmup)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TaskSets):
            return NotImplemented
        return self.active == other.active and self.standby == other.standby and self.warmup == other.warmup

    def __hash__(self) -> int:
        h = self._hash
        if h is None:
            h = hash((frozenset(self.active.items()), frozenset(self.standby.items()),
                      frozenset(self.warmup.items())))
            object.__setattr__(self, "_hash", h)
        return h

    def __repr__(self) -> str:
        def fmt(tasks: Mapping[str, frozenset[int]]) -> str:
            return "[" + ", ".join(f"{s}_{p}" for s in sorted(tasks) for p in sorted(tasks[s])) + "]"
        return f"TaskSets(active={fmt(self.active)}, standby={fmt(self.standby)}, warmup={fmt(self.warmup)})"


@dataclass(frozen=True)
class SubtopologySpec:
    """What the assignor needs of a subtopology (Kafka's `TopologyDescriber`)."""

    num_partitions: int   # its tasks are partitions 0 .. num_partitions-1
    stateful: bool        # has state stores: only stateful tasks get standby and warm-up tasks


@dataclass(frozen=True)
class MemberSpec:
    """One member (Kafka's `AssignmentMemberSpec`)."""

    member_id: str
    process_id: str
    #: a member whose topology epoch is not the group's is *stale*: it may keep tasks it has,
    #: but gets no new task in any role (KIP-1071 "Topology updates")
    topology_epoch: int
    #: the member's current tasks (assigned and pending revocation)
    current: TaskSets = field(default_factory=TaskSets)
    instance_id: str | None = None
    rack_id: str | None = None
    client_tags: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class GroupSpec:
    """The group as the assignor sees it (Kafka's `GroupSpec` plus the KIP's assignment configs)."""

    members: Mapping[str, MemberSpec]
    subtopologies: Mapping[str, SubtopologySpec]
    topology_epoch: int = 0
    num_standby_replicas: int = 0
    #: the most warm-up tasks in the whole group at once (KIP-1071 num.warmup.replicas)
    num_warmup_replicas: int = 2
    acceptable_recovery_lag: int = 10_000
    #: cumulative task changelog offsets per process (the most recent report wins)
    task_offsets: Mapping[str, Mapping[TaskId, int]] = field(default_factory=dict)
    #: cumulative task changelog end offsets, known anywhere in the group (missing: unknown)
    task_end_offsets: Mapping[TaskId, int] = field(default_factory=dict)

    def tasks(self) -> list[TaskId]:
        return [(s, p) for s in sorted(self.subtopologies) for p in range(self.subtopologies[s].num_partitions)]


class TaskAssignorException(Exception):
    """The assignor cannot compute an assignment for this group."""


class TaskAssignor(Protocol):
    name: str

    def assign(self, spec: GroupSpec) -> dict[str, TaskSets]:
        """Member id -> target tasks, for every member of `spec.members` (possibly empty)."""


def is_caught_up(spec: GroupSpec, process_id: str, task: TaskId) -> bool:
    """KIP-1071: a task is caught up on a process when its lag (end offset - the process's
    offset) is within acceptable.recovery.lag; an unknown end offset is never caught up."""
    end = spec.task_end_offsets.get(task)
    offset = spec.task_offsets.get(process_id, {}).get(task)
    return end is not None and offset is not None and end - offset <= spec.acceptable_recovery_lag


__all__ = ["TaskId", "TaskSets", "SubtopologySpec", "MemberSpec", "GroupSpec", "TaskAssignor",
           "TaskAssignorException", "is_caught_up"]
