"""The ``sticky`` task assignor of KIP-1071, step for step Kafka 4.4.0's broker-side
``org.apache.kafka.coordinator.group.streams.assignor.StickyTaskAssignor`` (checked against
that class by ``tests/assignors/test_streams_sticky_vs_kafka.py``).

Active tasks first, then standby tasks for stateful subtopologies; no warm-up tasks, and the
members' warm-up tasks, rack ids and client tags play no part. One addition: when some member's
topology epoch is not the group's, KIP-1071's rule that stale members get no new task applies
(Kafka 4.4.0 has no such rule), with the engine of :mod:`.placement`. Each member
has a quota that is *dynamic*: ⌈remaining tasks / members still below it⌉, and a member that
reaches it exactly leaves the pool with its tasks (Kafka's ``computeTasksPerMember`` and
``maybeUpdate...TasksPerMember``). Two quotas run side by side: active tasks, and all tasks
(active plus ``num_standby_replicas`` per stateful task); one counter per member counts both
roles.

Active tasks:

1. in (partition, subtopology) order, the previous active owner keeps the task while below
   the active quota;
2. the rest, same order, go to the best *previous standby* (members that had it as a standby
   first, then members that reported an offset for it; each by offset, largest first) while
   below the active quota;
3. the rest, in (subtopology, partition) order, go to the least-loaded process (tasks per
   member) and there to its least-loaded member.

Standby tasks, in (partition, subtopology) order descending, each replica to: the previous
active owner when its process does not hold the task and it is below the total quota, else
the best previous standby whose process does not hold it, while below the total quota; the
replicas left over, in (subtopology, partition) order descending, to the least-loaded process
that does not hold the task. A task gets fewer standbys when the processes run out.

Ties are broken as Kafka's data structures break them, which this module reproduces: members
are iterated in the order of a ``java.util.HashMap`` filled with ``spec.members`` in dict order
(the coordinator's ``TargetAssignmentBuilder``), processes in the order of a ``HashMap`` sized
for the member count, and the least loaded is what a ``java.util.PriorityQueue`` polls.
"""
from __future__ import annotations

from collections.abc import Callable
from operator import attrgetter, itemgetter
from typing import Generic, TypeVar

from kgroup.gcpause import gc_paused
from kgroup.javaorder import compute_if_absent_order, java_hash_order
from kgroup.log.partitioner import java_string_hashcode

from .api import GroupSpec, TaskAssignorException, TaskId, TaskSets
from .placement import Placement, sticky_rank

__all__ = ["StickyTaskAssignor", "JavaPriorityQueue"]

T = TypeVar("T")


class JavaPriorityQueue(Generic[T]):
    """``java.util.PriorityQueue`` with a comparator given as a key: the same binary heap
    (``siftUp``/``siftDown``), so equal keys come out in the order Java's would."""

    __slots__ = ("queue", "key")

    def __init__(self, key: Callable[[T], float]) -> None:
        self.queue: list[T] = []
        self.key = key

    def __len__(self) -> int:
        return len(self.queue)

    def add(self, x: T) -> None:
        q, key = self.queue, self.key
        q.append(x)
        k, kx = len(q) - 1, key(x)
        while k > 0:
            parent = (k - 1) >> 1
            e = q[parent]
            if kx >= key(e):
                break
            q[k] = e
            k = parent
        q[k] = x

    def poll(self) -> T | None:
        q, key = self.queue, self.key
        if not q:
            return None
        result, x = q[0], q.pop()
        n = len(q)
        if n:
            k, half, kx = 0, n >> 1, key(x)
            while k < half:
                child = 2 * k + 1
                c = q[child]
                right = child + 1
                if right < n and key(c) > key(q[right]):
                    child, c = right, q[right]
                if kx <= key(c):
                    break
                q[k] = c
                k = child
            q[k] = x
        return result


def _ceil_div(tasks: int, members: int) -> int:
    return -(-tasks // members) if members > 0 else 0


class _Process:
    """Kafka's ``ProcessState``: one process's members, their task counts, and its load."""

    __slots__ = ("capacity", "load", "task_count", "counts", "active", "standby", "tasks", "by_load")

    def __init__(self, members: list[str]) -> None:
        self.capacity = len(members)
        self.load = 0.0
        self.task_count = 0
        #: member -> active plus standby tasks; in the order of Kafka's HashMap of them
        self.counts = dict.fromkeys(java_hash_order(members, java_string_hashcode), 0)
        self.active: dict[str, list[TaskId]] = {}
        self.standby: dict[str, list[TaskId]] = {}
        self.tasks: set[TaskId] = set()
        #: the members as a heap of [member, count] (kept across least-loaded additions only)
        self.by_load: JavaPriorityQueue[list] | None = None

    def _add(self, member: str, task: TaskId, active: bool) -> int:
        self.task_count += 1
        self.tasks.add(task)
        (self.active if active else self.standby).setdefault(member, []).append(task)
        n = self.counts[member] + 1
        self.counts[member] = n
        self.load = self.task_count / self.capacity
        return n

    def add(self, member: str, task: TaskId, active: bool) -> int:
        """``addTask``: to a given member; the member heap is rebuilt next time."""
        self.by_load = None
        return self._add(member, task, active)

    def add_to_least_loaded(self, task: TaskId, active: bool) -> int:
        """``addTaskToLeastLoadedMember``."""
        counts = self.counts
        if len(counts) == 1:
            return self._add(next(iter(counts)), task, active)
        heap = self.by_load
        if heap is None:
            heap = self.by_load = JavaPriorityQueue(_COUNT)
            for entry in counts.items():
                heap.add(list(entry))
        entry = heap.poll()
        entry[1] = self._add(entry[0], task, active)
        heap.add(entry)
        return entry[1]


_COUNT = itemgetter(1)
_LOAD = attrgetter("load")


def _task_name(task: TaskId) -> str:
    return f"{task[0]}_{task[1]}"


class _Sticky:
    """One run of the assignor (Kafka's ``LocalState``)."""

    def __init__(self, spec: GroupSpec) -> None:
        specs = spec.members
        # TargetAssignmentBuilder puts the members into a new HashMap<>(); the assignor iterates it.
        self.members = members = java_hash_order(specs, java_string_hashcode)
        self.process_of = {m: specs[m].process_id for m in members}
        self.standbys = n_standby = spec.num_standby_replicas
        subs = spec.subtopologies
        self.subtopologies = sorted(subs)   # TopologyMetadata's SortedMap
        self.partitions = {s: sub.num_partitions for s, sub in subs.items()}
        self.stateful = {s for s, sub in subs.items() if sub.stateful}
        total_active = sum(sub.num_partitions for sub in subs.values())
        total = total_active + sum(sub.num_partitions * n_standby for sub in subs.values() if sub.stateful)
        self.active_left, self.active_members = total_active, len(members)
        self.total_left, self.total_members = total, len(members)
        self.active_quota = _ceil_div(total_active, len(members))
        self.total_quota = _ceil_div(total, len(members))

        by_process: dict[str, list[str]] = {}
        for m in members:
            by_process.setdefault(self.process_of[m], []).append(m)
        # processIdToState: a new HashMap<>(number of members), filled by computeIfAbsent per member
        order = compute_if_absent_order((self.process_of[m] for m in members), java_string_hashcode, len(members))
        self.processes = {p: _Process(by_process[p]) for p in order}

        # The last member (in iteration order) claiming a task as active wins.
        self.prev_active: dict[TaskId, str] = {}
        candidates: dict[TaskId, list[tuple[int, int, str]]] = {}
        for m in members:
            current = specs[m].current
            for s, ps in current.active.items():
                for p in ps:
                    self.prev_active[(s, p)] = m
            offsets = specs[m].task_offsets
            for s, ps in current.standby.items():
                for p in ps:
                    candidates.setdefault((s, p), []).append((0, -offsets.get((s, p), 0), m))
            for t, offset in offsets.items():
                if t[1] not in current.standby.get(t[0], ()):
                    candidates.setdefault(t, []).append((1, -offset, m))
        # STANDBY_CANDIDATE_ORDER: previous standbys first, then by offset sum, largest first
        # (a stable sort: members in iteration order otherwise).
        self.prev_standby: dict[TaskId, list[str]] = {
            t: [m for *_, m in sorted(cs, key=lambda c: (c[0], c[1]))] for t, cs in candidates.items()}

    # -- quotas --------------------------------------------------------------------------------
    def _counted(self, n: int, active: bool) -> None:
        """``maybeUpdateActiveTasksPerMember`` (for an active task) and ``maybeUpdateTotalTasksPerMember``:
        a member that reaches a quota exactly leaves its pool."""
        if active and n == self.active_quota:
            self.active_members -= 1
            self.active_left -= n
            self.active_quota = _ceil_div(self.active_left, self.active_members)
        if n == self.total_quota:
            self.total_members -= 1
            self.total_left -= n
            self.total_quota = _ceil_div(self.total_left, self.total_members)

    def _least_loaded_previous(self, members: list[str] | None, standby: TaskId | None) -> str | None:
        """``findPrevMemberWithLeastLoad``: the first candidate, replaced only by one whose process
        load *and* member load are both lower (for a standby, processes holding the task are skipped)."""
        if not members:
            return None
        best, best_process_load, best_member_load = None, 0.0, 0
        for m in members:
            process = self.processes[self.process_of[m]]
            if standby is not None and standby in process.tasks:
                continue
            load, count = process.load, process.counts[m]
            if best is None or (load < best_process_load and count < best_member_load):
                best, best_process_load, best_member_load = m, load, count
        return best

    # -- active tasks --------------------------------------------------------------------------
    def assign_active(self) -> None:
        tasks = sorted(((s, p) for s in self.subtopologies for p in range(self.partitions[s])),
                       key=lambda t: (t[1], t[0]))
        processes, process_of = self.processes, self.process_of
        for previous in (lambda t: self.prev_active.get(t),
                         lambda t: self._least_loaded_previous(self.prev_standby.get(t), None)):
            rest = []
            for t in tasks:
                m = previous(t)
                if m is not None:
                    process = processes[process_of[m]]
                    if process.counts[m] < self.active_quota:
                        self._counted(process.add(m, t, True), True)
                        continue
                rest.append(t)
            tasks = rest
        tasks.sort()
        heap: JavaPriorityQueue[_Process] = JavaPriorityQueue(_LOAD)
        for process in processes.values():
            heap.add(process)
        for t in tasks:
            process = heap.poll()
            if process is None:
                raise TaskAssignorException(f"No process available to assign active task {_task_name(t)}.")
            self._counted(process.add_to_least_loaded(t, True), True)
            heap.add(process)

    # -- standby tasks -------------------------------------------------------------------------
    def assign_standby(self) -> None:
        replicas = self.standbys
        processes, process_of = self.processes, self.process_of
        tasks = sorted(((s, p) for s in self.subtopologies if s in self.stateful
                        for p in range(self.partitions[s])), key=lambda t: (t[1], t[0]), reverse=True)
        left_over: list[tuple[TaskId, int]] = []
        for t in tasks:
            i = 0
            while i < replicas:
                m = self.prev_active.get(t)
                if m is not None:
                    process = processes[process_of[m]]
                    if t not in process.tasks and process.counts[m] < self.total_quota:
                        self._counted(process.add(m, t, False), False)
                        i += 1
                        continue
                m = self._least_loaded_previous(self.prev_standby.get(t), t)
                if m is None:
                    break
                process = processes[process_of[m]]
                if process.counts[m] >= self.total_quota:
                    break
                self._counted(process.add(m, t, False), False)
                i += 1
            left_over.append((t, replicas - i))
        left_over.sort(reverse=True)
        heap: JavaPriorityQueue[_Process] = JavaPriorityQueue(_LOAD)
        for process in processes.values():
            heap.add(process)
        for t, remaining in left_over:
            for _ in range(remaining):
                if not self._standby_to_least_loaded(heap, t):
                    break   # Kafka logs "There is not enough available capacity" and moves on

    def _standby_to_least_loaded(self, heap: JavaPriorityQueue[_Process], task: TaskId) -> bool:
        """``assignStandbyToMemberWithLeastLoad`` without its recursion: poll processes until one
        does not hold the task, then put the polled ones back, the last polled first."""
        polled, found = [], False
        while True:
            process = heap.poll()
            if process is None:
                break
            polled.append(process)
            if task not in process.tasks:
                self._counted(process.add_to_least_loaded(task, False), False)
                found = True
                break
            if not len(heap):
                break
        for process in reversed(polled):
            heap.add(process)
        return found

    # -- the result ----------------------------------------------------------------------------
    def result(self) -> dict[str, TaskSets]:
        def grouped(tasks: list[TaskId] | None) -> dict[str, frozenset[int]]:
            by_sub: dict[str, list[int]] = {}
            for s, p in tasks or ():
                by_sub.setdefault(s, []).append(p)
            return {s: frozenset(ps) for s, ps in by_sub.items()}
        out = {}
        for m in self.members:
            process = self.processes[self.process_of[m]]
            out[m] = TaskSets._trusted(grouped(process.active.get(m)), grouped(process.standby.get(m)), {})
        return out

    def run(self) -> dict[str, TaskSets]:
        self.assign_active()
        if self.standbys > 0:
            self.assign_standby()
        return self.result()


class StickyTaskAssignor:
    """KIP-1071's ``sticky`` assignor: see the module docstring."""

    name = "sticky"

    def assign(self, spec: GroupSpec) -> dict[str, TaskSets]:
        """Member id -> active and standby tasks (no warm-ups), for every member of ``spec``;
        ``TaskAssignorException`` when there are tasks but no member, as Kafka."""
        with gc_paused():
            epoch = spec.topology_epoch
            if any(m.topology_epoch != epoch for m in spec.members.values()):
                # KIP-1071's rule for stale members, which Kafka 4.4.0 does not implement.
                placement = Placement(spec)
                placement.assign_active(sticky_rank)
                placement.assign_standby(sticky_rank)
                return placement.result()
            return _Sticky(spec).run()

    def __repr__(self) -> str:
        return self.name
