"""The interface of KIP-1071's server-side task assignors.

Follows Kafka's ``org.apache.kafka.coordinator.group.api.streams.assignor`` package
(``TaskAssignor``, ``GroupSpec``, ``AssignmentMemberSpec``/``MemberAssignmentState``,
``TopologyDescriber``, ``GroupAssignment``), flattened into plain frozen dataclasses: the
topology describer is :class:`SubtopologySpec` per subtopology, the assignment configs are
fields of :class:`GroupSpec`, and an assignment is one :class:`TaskSets` per member.

A task is a subtopology id and a partition (:data:`TaskId`). A member runs tasks in three
roles: *active* (processing), *standby* (a replica of a stateful task's state stores) and
*warm-up* (a standby placed so that it catches up before it takes over the active task).
Members of one Kafka Streams client share a *process id*; the assignors never put one
stateful task twice on a process. A member whose *topology epoch* is behind the group's is
stale: it may keep tasks it has but gets no new task.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

__all__ = ["TaskId", "TaskSets", "SubtopologySpec", "MemberSpec", "GroupSpec", "TaskAssignor",
           "TaskAssignorException", "is_caught_up", "task_offset"]

TaskId = tuple[str, int]  # (subtopology id, partition)


def _normalised(tasks: Mapping[str, Iterable[int]] | None) -> dict[str, frozenset[int]]:
    # Empty entries are dropped so that {"0": {}} and {} are the same task set.
    out = {}
    if tasks:
        for sub, partitions in tasks.items():
            if partitions:
                out[sub] = partitions if type(partitions) is frozenset else frozenset(partitions)
    return out


def _grouped(ids: Iterable[TaskId]) -> dict[str, list[int]]:
    """Task ids as subtopology -> partitions, in the order they come."""
    out: dict[str, list[int]] = {}
    for sub, partition in ids:
        partitions = out.get(sub)
        if partitions is None:
            out[sub] = [partition]
        else:
            partitions.append(partition)
    return out


def _ids(tasks: Mapping[str, frozenset[int]]) -> frozenset[TaskId]:
    return frozenset((sub, p) for sub, partitions in tasks.items() for p in partitions)


@dataclass(frozen=True, repr=False)
class TaskSets:
    """One member's tasks in the three roles, as subtopology id -> partitions.

    Immutable and compared by value: the mappings are normalised on construction (values
    become frozensets, empty subtopology entries are dropped), so two task sets holding the
    same tasks are equal (and hash alike) however they were built.
    """

    active: Mapping[str, frozenset[int]] = field(default_factory=dict)
    standby: Mapping[str, frozenset[int]] = field(default_factory=dict)
    warmup: Mapping[str, frozenset[int]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "active", _normalised(self.active))
        object.__setattr__(self, "standby", _normalised(self.standby))
        object.__setattr__(self, "warmup", _normalised(self.warmup))

    # immutable: a copy is the same object (copy's default would set the slots and fail)
    def __copy__(self) -> "TaskSets":
        return self

    def __deepcopy__(self, memo: dict) -> "TaskSets":
        return self

    @classmethod
    def of(cls, active: Iterable[TaskId] = (), standby: Iterable[TaskId] = (),
           warmup: Iterable[TaskId] = ()) -> "TaskSets":
        """From task ids: ``TaskSets.of(active=[("0", 1)], standby=[("0", 2)])``."""
        return cls(_grouped(active), _grouped(standby), _grouped(warmup))

    @classmethod
    def _trusted(cls, active: dict[str, frozenset[int]], standby: dict[str, frozenset[int]],
                 warmup: dict[str, frozenset[int]]) -> "TaskSets":
        # The assignors build thousands of these from already-normalised dicts: skip the copy.
        self = object.__new__(cls)
        object.__setattr__(self, "active", active)
        object.__setattr__(self, "standby", standby)
        object.__setattr__(self, "warmup", warmup)
        return self

    def active_ids(self) -> frozenset[TaskId]:
        """The active tasks as (subtopology, partition) ids."""
        return _ids(self.active)

    def standby_ids(self) -> frozenset[TaskId]:
        """The standby tasks as (subtopology, partition) ids."""
        return _ids(self.standby)

    def warmup_ids(self) -> frozenset[TaskId]:
        """The warm-up tasks as (subtopology, partition) ids."""
        return _ids(self.warmup)

    def all_ids(self) -> frozenset[TaskId]:
        """Every task of the member, in any role."""
        return self.active_ids() | self.standby_ids() | self.warmup_ids()

    @property
    def is_empty(self) -> bool:
        """No task in any role."""
        return not (self.active or self.standby or self.warmup)

    def __eq__(self, other: object) -> bool:
        if other is self:
            return True    # a steady heartbeat compares a member's tasks with themselves
        if not isinstance(other, TaskSets):
            return NotImplemented
        return self.active == other.active and self.standby == other.standby and self.warmup == other.warmup

    def __hash__(self) -> int:
        return hash((frozenset(self.active.items()), frozenset(self.standby.items()),
                     frozenset(self.warmup.items())))

    def __repr__(self) -> str:
        # KIP-1071's notation: <subtopology>_<partition>.
        def fmt(tasks: Mapping[str, frozenset[int]]) -> str:
            return "[" + ", ".join(f"{s}_{p}" for s in sorted(tasks) for p in sorted(tasks[s])) + "]"
        return f"TaskSets(active={fmt(self.active)}, standby={fmt(self.standby)}, warmup={fmt(self.warmup)})"


@dataclass(frozen=True)
class SubtopologySpec:
    """What the assignor needs of a subtopology (Kafka's ``TopologyDescriber``)."""

    #: the number of tasks of this subtopology: partitions 0 .. num_partitions-1
    num_partitions: int
    #: has state stores (changelogs): only stateful tasks get standby and warm-up tasks
    stateful: bool


@dataclass(frozen=True)
class MemberSpec:
    """One member (Kafka's ``AssignmentMemberSpec``: metadata plus current assignment)."""

    member_id: str
    process_id: str
    #: a member whose topology epoch is not the group's is *stale*: it may keep tasks it has,
    #: but gets no new task in any role (KIP-1071 "Topology updates")
    topology_epoch: int
    #: what the member has now: its current assignment (Kafka's ``StreamsGroupMember.assignedTasks``:
    #: not the target it is heading to, nor the tasks it is still revoking)
    current: TaskSets = field(default_factory=TaskSets)
    instance_id: str | None = None
    rack_id: str | None = None
    client_tags: Mapping[str, str] = field(default_factory=dict)
    #: the changelog offset sums this member last reported, task -> offset (Kafka's
    #: ``MemberAssignmentState.taskOffsets``; the ``sticky`` assignor reads these, not the
    #: group's per-process merge in :attr:`GroupSpec.task_offsets`)
    task_offsets: Mapping[TaskId, int] = field(default_factory=dict)


@dataclass(frozen=True)
class GroupSpec:
    """The group as the assignor sees it (Kafka's ``GroupSpec`` plus the KIP's assignment configs)."""

    #: member id -> member; the assignors sort members by id, so the order here does not matter
    members: Mapping[str, MemberSpec]
    subtopologies: Mapping[str, SubtopologySpec]
    topology_epoch: int = 0
    num_standby_replicas: int = 0
    #: the most warm-up tasks in the whole group at once (KIP-1071 num.warmup.replicas)
    num_warmup_replicas: int = 2
    acceptable_recovery_lag: int = 10_000
    #: cumulative task changelog offsets per *process* (the coordinator merged the reports of
    #: a process's members, the most recent winning): process id -> task -> offset sum
    task_offsets: Mapping[str, Mapping[TaskId, int]] = field(default_factory=dict)
    #: task -> cumulative changelog end offset (the largest any member reported); missing: unknown
    task_end_offsets: Mapping[TaskId, int] = field(default_factory=dict)

    def tasks(self) -> list[TaskId]:
        """Every task of the topology, by subtopology id then partition."""
        return [(s, p) for s in sorted(self.subtopologies) for p in range(self.subtopologies[s].num_partitions)]


class TaskAssignorException(Exception):
    """The assignor cannot compute an assignment for this group."""


class TaskAssignor(Protocol):
    """A KIP-1071 task assignor (Kafka's ``TaskAssignor``): a pure function of the group."""

    name: str

    def assign(self, spec: GroupSpec) -> dict[str, TaskSets]:
        """Member id -> target tasks, for every member of ``spec.members`` (possibly empty)."""
        ...


def task_offset(spec: GroupSpec, process_id: str, task: TaskId) -> int | None:
    """The changelog offset sum ``process_id`` reported for ``task``, or None."""
    offsets = spec.task_offsets.get(process_id)
    return None if offsets is None else offsets.get(task)


def is_caught_up(spec: GroupSpec, process_id: str, task: TaskId) -> bool:
    """KIP-1071: a task is caught up on a process when its lag (end offset minus the process's
    offset) is within ``acceptable_recovery_lag``. Tasks with unknown end offsets (or no offset
    from the process) are never caught up."""
    end = spec.task_end_offsets.get(task)
    if end is None:
        return False
    offset = task_offset(spec, process_id, task)
    return offset is not None and end - offset <= spec.acceptable_recovery_lag
