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
from functools import lru_cache
from typing import Generic, TypeVar

from kgroup.gcpause import gc_paused
from kgroup.javaorder import cached_string_hashcode, compute_if_absent_order, java_hash_order

from .api import GroupSpec, TaskAssignorException, TaskSets
from .placement import Placement, sticky_rank

__all__ = ["StickyTaskAssignor", "JavaPriorityQueue"]

T = TypeVar("T")

# Java's PriorityQueue as two parallel lists, the elements and their keys (an element's key must
# not change while it is queued: the assignor polls a process or member, gives it a task and
# offers it again). Equal keys leave the heap in the order Java's siftUp/siftDown give them, which
# is what breaks the assignor's ties, so these follow java.util.PriorityQueue line for line.


def _sift_up(q: list, keys: list, k: int, x, kx) -> None:
    """``siftUp`` of ``x`` from slot ``k``: each parent greater than ``x`` moves down, up to
    the first parent not greater."""
    while k:
        parent = (k - 1) >> 1
        ke = keys[parent]
        if kx >= ke:
            break
        q[k] = q[parent]
        keys[k] = ke
        k = parent
    q[k] = x
    keys[k] = kx


def _sift_down(q: list, keys: list, x, kx, n: int) -> None:
    """``siftDown`` of ``x`` from the root of the first ``n`` slots: the smaller child moves up
    (the left one on a tie) until no child is smaller than ``x``. Slot ``n`` must hold ``x``
    (the element the poll takes from the end): a right child there compares as ``x`` itself, so
    it never moves up, and no bounds check is needed."""
    k, half = 0, n >> 1
    while k < half:
        child = 2 * k + 1
        kc = keys[child]
        kr = keys[child + 1]
        if kc > kr:
            child += 1
            kc = kr
        if kx <= kc:
            break
        q[k] = q[child]
        keys[k] = kc
        k = child
    q[k] = x
    keys[k] = kx


def _heap_add(q: list, keys: list, x, kx) -> None:
    """``offer``: ``siftUp`` from the end."""
    q.append(x)
    keys.append(kx)
    _sift_up(q, keys, len(q) - 1, x, kx)


def _heap_poll(q: list, keys: list):
    """``poll`` of a non-empty heap: the last element goes to the root and sifts down."""
    result = q[0]
    n = len(q) - 1
    if n:
        _sift_down(q, keys, q[n], keys[n], n)
    q.pop()
    keys.pop()
    return result


def _heap_requeue(q: list, keys: list, key) -> None:
    """``poll`` of the head, then ``offer`` of it again with ``key``: the same moves as the two
    calls (the head's new key must be known before it is polled)."""
    head = q[0]
    n = len(q) - 1
    if n:
        # poll: the last element (which stays in slot n meanwhile) sifts down from the root
        _sift_down(q, keys, q[n], keys[n], n)
    # offer: the head comes back in slot n, the one the poll emptied, and sifts up
    _sift_up(q, keys, n, head, key)


# A heap whose keys are all equal, each poll followed by an offer of the polled element with one
# common larger key (processes of as many members each receiving a task, members of one process
# likewise), goes through a *round*: after n such steps every key is the larger one again. Java's
# comparisons see only keys, so a round moves the slots the same way whoever is in them: it is
# simulated once on slot numbers, then replayed.

@lru_cache(maxsize=16)
def _round(n: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """For a round of a heap of ``n`` equal keys: the slot (at the round's start) of the head
    polled at each step, and the slot (at the round's start) of what each slot holds at its end.
    Costs one round of the heap itself, the first time."""
    slots, keys = list(range(n)), [0] * n
    polled = []
    for _ in range(n):
        polled.append(slots[0])
        _heap_requeue(slots, keys, 1)
    return tuple(polled), tuple(slots)


def _partial_round(layout: list, steps: int) -> list:
    """The heap, as its elements stand after ``steps`` steps of a round begun with ``layout``."""
    slots, keys = list(range(len(layout))), [0] * len(layout)
    for _ in range(steps):
        _heap_requeue(slots, keys, 1)
    return [layout[s] for s in slots]


class JavaPriorityQueue(Generic[T]):
    """``java.util.PriorityQueue`` with a comparator given as a key: the same binary heap
    (``siftUp``/``siftDown``), so equal keys come out in the order Java's would."""

    __slots__ = ("queue", "keys", "key")

    def __init__(self, key: Callable[[T], float]) -> None:
        self.queue: list[T] = []
        self.keys: list = []
        self.key = key

    def __len__(self) -> int:
        return len(self.queue)

    def add(self, x: T) -> None:
        _heap_add(self.queue, self.keys, x, self.key(x))

    def poll(self) -> T | None:
        return _heap_poll(self.queue, self.keys) if self.queue else None


_SINGLETONS: list[frozenset[int]] = []


def _singletons(n: int) -> list[frozenset[int]]:
    """``frozenset({p})`` for p < n, made once (frozensets are immutable: members share them)."""
    if len(_SINGLETONS) < n:
        _SINGLETONS.extend(frozenset((p,)) for p in range(len(_SINGLETONS), n))
    return _SINGLETONS


def _ceil_div(tasks: int, members: int) -> int:
    return -(-tasks // members) if members > 0 else 0


class _Sticky:
    """One run of the assignor (Kafka's ``LocalState`` and its ``ProcessState``s).

    Everything is numbered and kept in lists: members in Kafka's iteration order, processes
    in the order of Kafka's ``processIdToState`` map, tasks in (subtopology, partition) order.
    """

    def __init__(self, spec: GroupSpec) -> None:
        specs = spec.members
        # TargetAssignmentBuilder puts the members into a new HashMap<>(); the assignor iterates it.
        self.ids = ids = java_hash_order(specs, cached_string_hashcode)
        n_members = len(ids)
        process_ids = [specs[m].process_id for m in ids]
        # processIdToState: a new HashMap<>(number of members), filled by computeIfAbsent per member
        order = compute_if_absent_order(process_ids, cached_string_hashcode, n_members)
        index = {p: i for i, p in enumerate(order)}
        #: member -> process
        self.proc = proc = [index[p] for p in process_ids]
        by_process: list[list[str]] = [[] for _ in order]
        for m, p in zip(ids, proc):
            by_process[p].append(m)
        index = {m: i for i, m in enumerate(ids)}
        # per process: members, tasks, load (tasks per member), the tasks it holds
        self.capacity = [len(ms) for ms in by_process]
        self.process_tasks = [0] * len(order)
        self.load = [0.0] * len(order)
        self.holds: list[set[int]] = [set() for _ in order]
        #: per process, its members in the order of its member -> task count HashMap
        self.members_of = [[index[m] for m in java_hash_order(ms, cached_string_hashcode)]
                           if len(ms) > 1 else [index[ms[0]]] for ms in by_process]
        #: per process, that map as a PriorityQueue, kept across least-loaded additions and
        #: dropped when a task goes to a given member: [members, counts], or a round replayed
        #: (see :func:`_round`) [members at the round's start, step, *_round(members)]
        self.member_heap: list[list | None] = [None] * len(order)
        #: per member: active plus standby tasks, and the tasks of each role in the order given
        self.count = [0] * n_members
        self.active: list[list[int]] = [[] for _ in ids]
        self.standby: list[list[int]] = [[] for _ in ids]

        self.standbys = n_standby = spec.num_standby_replicas
        subs = spec.subtopologies
        self.sub_ids = sorted(subs)   # TopologyMetadata's SortedMap
        #: subtopology -> (task number of its partition 0, partitions)
        self.span = span = {}
        self.task_sub: list[str] = []
        self.task_partition: list[int] = []
        for s in self.sub_ids:
            n = subs[s].num_partitions
            span[s] = (len(self.task_sub), n)
            self.task_sub += [s] * n
            self.task_partition += range(n)
        self.stateful = [s for s in self.sub_ids if subs[s].stateful]
        n_tasks = len(self.task_sub)
        total = n_tasks + n_standby * sum(span[s][1] for s in self.stateful)
        self.active_left, self.active_members = n_tasks, n_members
        self.total_left, self.total_members = total, n_members
        self.active_quota = _ceil_div(n_tasks, n_members)
        self.total_quota = _ceil_div(total, n_members)

        # The last member (in iteration order) claiming a task as active wins. Tasks outside
        # the topology are never looked up, so they are dropped.
        self.prev_active = prev_active = [-1] * n_tasks
        # STANDBY_CANDIDATE_ORDER: previous standbys first, then by offset sum, largest first, in
        # a stable sort (members in iteration order otherwise). A member adds at most one entry
        # per task, in iteration order, so sorting (kind, -offset, member) tuples is that sort;
        # without offsets it is the iteration order, and members are listed as they come.
        self.prev_standby = prev_standby = [None] * n_tasks
        by_offset = any(specs[m].task_offsets for m in ids)
        for i, m in enumerate(ids):
            member = specs[m]
            current = member.current
            for s, ps in current.active.items():
                where = span.get(s)
                if where is not None:
                    b, n = where
                    for p in ps:
                        if 0 <= p < n:
                            prev_active[b + p] = i
            standby = current.standby
            offsets = member.task_offsets
            for s, ps in standby.items():
                where = span.get(s)
                if where is not None:
                    b, n = where
                    for p in ps:
                        if 0 <= p < n:
                            entry = (0, -offsets.get((s, p), 0), i) if by_offset else i
                            cs = prev_standby[b + p]
                            if cs is None:
                                prev_standby[b + p] = [entry]
                            else:
                                cs.append(entry)
            for (s, p), offset in offsets.items():
                where = span.get(s)
                if where is not None and 0 <= p < where[1] and p not in standby.get(s, ()):
                    cs = prev_standby[where[0] + p]
                    if cs is None:
                        prev_standby[where[0] + p] = [(1, -offset, i)]
                    else:
                        cs.append((1, -offset, i))
        if by_offset:
            for t, cs in enumerate(prev_standby):
                if cs is not None:
                    if len(cs) > 1:
                        cs.sort()
                    prev_standby[t] = [c[2] for c in cs]

    # -- tasks to members ----------------------------------------------------------------------
    def _add(self, m: int, t: int, active: bool) -> None:
        """``ProcessState.addTask`` to a given member (the process's member heap is rebuilt next
        time), then ``maybeUpdateActiveTasksPerMember`` (for an active task) and
        ``maybeUpdateTotalTasksPerMember``: a member that reaches a quota exactly leaves its pool."""
        p = self.proc[m]
        self.member_heap[p] = None
        n = self.process_tasks[p] + 1
        self.process_tasks[p] = n
        self.load[p] = n / self.capacity[p]
        self.holds[p].add(t)
        (self.active if active else self.standby)[m].append(t)
        n = self.count[m] = self.count[m] + 1
        if n == self.active_quota and active:
            self.active_members -= 1
            self.active_left -= n
            self.active_quota = _ceil_div(self.active_left, self.active_members)
        if n == self.total_quota:
            self.total_members -= 1
            self.total_left -= n
            self.total_quota = _ceil_div(self.total_left, self.total_members)

    def _least_loaded_previous(self, members: list[int], standby: int) -> int:
        """``findPrevMemberWithLeastLoad``: the first candidate, replaced only by one whose process
        load *and* member load are both lower (for a standby, ``standby`` >= 0, processes holding
        the task are skipped); -1 for none."""
        proc, load, count, holds = self.proc, self.load, self.count, self.holds
        best, best_process_load, best_member_load = -1, 0.0, 0
        for m in members:
            p = proc[m]
            if standby >= 0 and standby in holds[p]:
                continue
            process_load, c = load[p], count[m]
            if best < 0 or (process_load < best_process_load and c < best_member_load):
                best, best_process_load, best_member_load = m, process_load, c
        return best

    def _by_partition(self, subtopologies: list[str]) -> list[int]:
        """The tasks of ``subtopologies`` (sorted) in (partition, subtopology) order."""
        spans = [self.span[s] for s in subtopologies]
        widest = max((n for _, n in spans), default=0)
        return [b + p for p in range(widest) for b, n in spans if p < n]

    def _by_load(self, tasks: list[int], active: bool) -> None:
        """Each task to the least-loaded process that does not hold it, and there to the
        least-loaded member: a new PriorityQueue of the processes by load (offered in
        ``processIdToState`` order), polled past the processes that hold the task, which are
        offered again afterwards, the last polled first (``assignActiveTasksToLeastLoadedProcess``
        and ``assignStandbyToMemberWithLeastLoad``, the latter's recursion unrolled). A task
        appears once per copy; when no process can take a standby copy, Kafka moves on to the
        next task.

        While the processes are of one size and equally loaded, the heap goes in rounds (see
        :func:`_round`), replayed until a process polled holds the task; then the real heap
        takes over, and hands back to the replay when a round is complete. The quota updates
        are inlined: this runs once per task so placed."""
        process_tasks, capacity, load, holds = self.process_tasks, self.capacity, self.load, self.holds
        members_of, member_heap, count = self.members_of, self.member_heap, self.count
        placed = self.active if active else self.standby
        active_quota, active_left, active_members = self.active_quota, self.active_left, self.active_members
        total_quota, total_left, total_members = self.total_quota, self.total_left, self.total_members
        q: list[int] = []
        keys: list[float] = []
        for p, key in enumerate(load):
            _heap_add(q, keys, p, key)
        n_processes = len(q)
        # replayed only when that saves a round at least, even if _round must be computed
        even = 0 < 2 * n_processes <= len(tasks) and capacity.count(capacity[0]) == n_processes
        step = 0 if even and keys.count(keys[0]) == n_processes else -1   # of the round replayed
        requeued = 0   # polled and offered again since the last check for a round (real heap)
        layout = q     # the heap at the start of the round replayed
        polled_slots, end_slots = _round(n_processes) if even else ((), ())
        skip = -1
        for t in tasks:
            if t == skip:
                continue
            holders = None
            if step >= 0:
                p = layout[polled_slots[step]]
                if t in holds[p]:   # leave the replay: the real heap as it stands
                    q = _partial_round(layout, step)
                    keys = [load[x] for x in q]
                    requeued, step = step, -1
                else:
                    step += 1
                    if step == n_processes:
                        layout = [layout[s] for s in end_slots]
                        step = 0
            if step < 0:
                if not q:
                    if active:
                        raise TaskAssignorException(
                            f"No process available to assign active task {self.task_sub[t]}_{self.task_partition[t]}.")
                    skip = t
                    continue
                p = q[0]
                if t in holds[p]:   # only for standbys: poll the processes holding the task
                    holders = []
                    while q and t in holds[q[0]]:
                        holders.append(_heap_poll(q, keys))
                    if not q:
                        for h in reversed(holders):
                            _heap_add(q, keys, h, load[h])
                        skip = t   # Kafka logs "There is not enough available capacity" and moves on
                        continue
                    p = q[0]
                # polled, given the task below, offered again
                _heap_requeue(q, keys, (process_tasks[p] + 1) / capacity[p])
                requeued += 1
            # the process's load
            n = process_tasks[p] + 1
            process_tasks[p] = n
            load[p] = n / capacity[p]
            holds[p].add(t)
            # the member (addTaskToLeastLoadedMember): polled from the member heap, offered again
            members = members_of[p]
            if len(members) == 1:
                m = members[0]
                n = count[m] = count[m] + 1
            else:
                heap = member_heap[p]
                if heap is None:
                    # a new PriorityQueue of the member -> count map's entries, offered in its
                    # order; replayed by rounds while the counts are equal
                    q_m: list[int] = []
                    keys_m: list[int] = []
                    for m in members:
                        _heap_add(q_m, keys_m, m, count[m])
                    heap = member_heap[p] = (
                        [q_m, 0, *_round(len(q_m))] if keys_m.count(keys_m[0]) == len(q_m) else [q_m, keys_m])
                if len(heap) == 2:
                    m = heap[0][0]
                    n = count[m] = count[m] + 1
                    _heap_requeue(heap[0], heap[1], n)
                else:   # [the heap at the round's start, step, _round(members)]
                    layout_m, step_m, polled_m, end_m = heap
                    m = layout_m[polled_m[step_m]]
                    n = count[m] = count[m] + 1
                    step_m += 1
                    if step_m == len(layout_m):
                        heap[0] = [layout_m[x] for x in end_m]
                        step_m = 0
                    heap[1] = step_m
            placed[m].append(t)
            if n == active_quota and active:
                active_members -= 1
                active_left -= n
                active_quota = _ceil_div(active_left, active_members)
            if n == total_quota:
                total_members -= 1
                total_left -= n
                total_quota = _ceil_div(total_left, total_members)
            if holders:
                for h in reversed(holders):
                    _heap_add(q, keys, h, load[h])
            if requeued == n_processes:   # the real heap: a round's worth of steps, back to a replay?
                requeued = 0
                if even and keys.count(keys[0]) == n_processes:
                    layout, step = q, 0
        self.active_quota, self.active_left, self.active_members = active_quota, active_left, active_members
        self.total_quota, self.total_left, self.total_members = total_quota, total_left, total_members

    # -- active tasks --------------------------------------------------------------------------
    def assign_active(self) -> None:
        prev_active, prev_standby, count = self.prev_active, self.prev_standby, self.count
        rest = []
        for t in self._by_partition(self.sub_ids):
            m = prev_active[t]
            if m >= 0 and count[m] < self.active_quota:
                self._add(m, t, True)
            else:
                rest.append(t)
        tasks, rest = rest, []
        for t in tasks:
            cs = prev_standby[t]
            m = -1 if cs is None else self._least_loaded_previous(cs, -1)
            if m >= 0 and count[m] < self.active_quota:
                self._add(m, t, True)
            else:
                rest.append(t)
        rest.sort()   # (subtopology, partition) order
        self._by_load(rest, True)

    # -- standby tasks -------------------------------------------------------------------------
    def assign_standby(self) -> None:
        replicas = self.standbys
        prev_active, prev_standby, proc, count, holds = (
            self.prev_active, self.prev_standby, self.proc, self.count, self.holds)
        left_over: list[int] = []
        for t in reversed(self._by_partition(self.stateful)):
            i = 0
            while i < replicas:
                m = prev_active[t]
                if m >= 0 and t not in holds[proc[m]] and count[m] < self.total_quota:
                    self._add(m, t, False)
                    i += 1
                    continue
                cs = prev_standby[t]
                m = -1 if cs is None else self._least_loaded_previous(cs, t)
                if m < 0 or count[m] >= self.total_quota:
                    break
                self._add(m, t, False)
                i += 1
            if i < replicas:
                left_over += [t] * (replicas - i)
        left_over.sort(reverse=True)   # (subtopology, partition) order descending
        self._by_load(left_over, False)

    # -- the result ----------------------------------------------------------------------------
    def result(self) -> dict[str, TaskSets]:
        task_sub, task_partition = self.task_sub, self.task_partition
        single = _singletons(max(task_partition, default=0) + 1)

        def grouped(tasks: list[int]) -> dict[str, frozenset[int]]:
            # subtopologies in the order their first task was given; most members have one
            # partition per subtopology, so a shared singleton stands until a second comes
            by_sub: dict = {}
            several = []
            for t in tasks:
                s = task_sub[t]
                ps = by_sub.get(s)
                if ps is None:
                    by_sub[s] = single[task_partition[t]]
                elif ps.__class__ is list:
                    ps.append(task_partition[t])
                else:
                    by_sub[s] = [*ps, task_partition[t]]
                    several.append(s)
            for s in several:
                by_sub[s] = frozenset(by_sub[s])
            return by_sub
        trusted = TaskSets._trusted
        return {m: trusted(grouped(a) if a else {}, grouped(s) if s else {}, {})
                for m, a, s in zip(self.ids, self.active, self.standby)}

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
