"""The placement engine of the ``highly_available`` assignor: a quota-based sticky placement
modelled on Kafka's broker-side ``StickyTaskAssignor`` (the ``sticky`` assignor itself, in
:mod:`.sticky`, follows Kafka 4.4.0 step by step instead; this engine keeps its own,
id-ordered tie-breaking and KIP-1071's topology-epoch rule, which ``highly_available`` relies on).

Active tasks first, then standby tasks; no warm-up tasks. Kafka's quotas are per member and
*dynamic*: the quota is ⌈remaining tasks / members still below it⌉, and a member that reaches
it leaves the pool with its tasks, so the quota of the others shrinks (Kafka's
``computeTasksPerMember``/``maybeUpdate...TasksPerMember``). Active tasks:

1. **previous owner**: tasks in (partition, subtopology) order; the member that had the task
   as active keeps it while it is below the active quota;
2. **previous standby**: the rest, same order, go to a member that had the task as a standby
   or warm-up (the most caught-up first), else to a member of a process that reported a
   changelog offset for it (the most caught-up process first; Kafka's cold-start
   KAFKA-20719), while that member is below the quota;
3. **least loaded**: the rest, in (subtopology, partition) order, each to the member with the
   fewest active tasks; ties go to the least-loaded process (tasks per member of the
   process) then the smallest process and member id. Consecutive tasks so go round the
   members (Kafka's "range-based" initial assignment) and processes with more members get
   proportionally more tasks.

Standby tasks, for stateful tasks, with the quota counting active plus standby tasks, in
(partition, subtopology) order descending: the previous active owner while below the quota,
then previous standby/warm-up holders, then processes that reported offsets; the
remaining replicas, in (subtopology, partition) order descending, go to the least-loaded
members (by active plus standby tasks) whose process does not hold the task yet. Every
stateful task is held at most once per process, in any role; a task gets fewer standbys
when there are not enough processes.

KIP-1071's topology epochs on top of Kafka's assignor: a member whose topology epoch is not
the group's (*stale*) keeps its active tasks within its quota (step 1) and its standby tasks
(when the rules for standbys allow), but gets nothing else; steps 2-3 and new standbys only
consider members with the group's topology epoch. Since a stale member can take nothing
more, it does not count as capacity: step 1 runs for the stale members first, then they
leave the quota's pool with what they kept, and the others share the rest (for standbys,
a stale member leaves the pool at once with its active tasks and the standbys it may keep).
Counted as capacity, they would shrink the others' quota and the assignor would move tasks
back and forth between the other members on every assignment. When no member has the
group's epoch, an active task stays with its previous owner even over quota, or stays
unassigned.

A task gets fewer standbys than ``num_standby_replicas`` when fewer processes without it
are left (as Kafka, which gives up a replica when its heap of processes runs out). Kafka's
standby pass is greedy and not idempotent: fed its own result, the assignor never moves an
active task and gives each task as many standbys, but it may move standbys (a previous
standby is kept only while its member is below the quota; the rest go to the least loaded
again).

Where this deviates from Kafka:

* Step 3 picks the least-loaded *member* (process load only breaks ties); Kafka picks the
  least-loaded *process* then its least-loaded member, which after stickiness can leave a
  member two tasks behind another. Ties are broken by ids, not by a ``HashMap``'s order.
* Step 2 tries the ranked candidates in turn until one is below the quota; Kafka checks only
  the one ``findPrevMemberWithLeastLoad`` picks. Offsets are per process here (the
  coordinator merged its members' reports), so a process candidate gives the task to its
  least-loaded member with room.
* Stateful and stateless active tasks share one quota (as Kafka until 2026); Kafka trunk now
  balances the two flavours separately, which would let a member keep fewer than ⌊N/M⌋ of
  its tasks.
* The standby quota is computed when standbys are placed, from the members' active counts
  (Kafka updates it while placing active tasks too: it only differs for members holding more
  active tasks than the standby-inclusive quota).
* Rack-aware standby placement (``rack.aware.assignment.tags``, client tags) is not done.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from itertools import islice
from operator import itemgetter

from .api import GroupSpec, TaskId, TaskSets, _grouped

__all__ = ["Placement", "Quota", "least_loaded", "sticky_rank"]

_PARTITION = itemgetter(1)
_task_of = itemgetter(0)

#: A candidate for a task: a member, or (member None) a process whose least-loaded member with
#: room takes it.
Candidate = tuple["str | None", str]
#: ranks a task's candidates: (placement, task, previous standby/warm-up holders, processes with an
#: offset for the task as (offset, process)) -> candidates, best first
Ranker = Callable[["Placement", TaskId, list[str], list[tuple[int, str]]], list[Candidate]]


def _ceil_div(tasks: int, members: int) -> int:
    return -(-tasks // members) if members > 0 else 0


class Quota:
    """Kafka's dynamic per-member quota: ⌈tasks / members⌉ over the members that have not
    reached it yet; a member reaching it leaves the pool together with its tasks."""

    __slots__ = ("value", "tasks", "members")

    def __init__(self, tasks: int, members: int) -> None:
        self.tasks, self.members = tasks, members
        self.value = _ceil_div(tasks, members)

    def reached(self, count: int) -> None:
        """A member now has ``count`` tasks."""
        if count == self.value:
            self.members -= 1
            self.tasks -= count
            self.value = _ceil_div(self.tasks, self.members)


def least_loaded(members: list[str], load: dict[str, int], process: dict[str, str],
                 capacity: dict[str, int], process_load: dict[str, int]) -> Iterator[str]:
    """Yield ``members`` in the order a heap keyed (member load, process load per member,
    process id, member id) would pop them if each pop gave the member one more task.

    Computed level by level instead of with a heap: at load level L every member with at
    most L tasks takes one, members of a process in id order, processes interleaved by their
    load ((tasks + j) / members for the j-th member served). ``load`` and ``process_load``
    are read once, at the start; the iterator is endless (stop consuming it).
    """
    if not members:
        return
    by_load: dict[int, list[str]] = {}
    for m in members:
        by_load.setdefault(load[m], []).append(m)
    pending = sorted(by_load, reverse=True)
    level = pending[-1]
    singletons = all(capacity[process[m]] == 1 for m in members)
    totals = dict(process_load)
    at_level: dict[str, list[str]] = {}
    order: list[str] = []
    while True:
        joined = False
        while pending and pending[-1] <= level:
            for m in by_load[pending.pop()]:
                at_level.setdefault(process[m], []).append(m)
            joined = True
        if singletons:
            # One member per process: every process at this level has load == level, so the
            # order is by process id, the same for every level until members join.
            if joined:
                order = [at_level[p][0] for p in sorted(at_level)]
            yield from order
        else:
            if joined:
                for ms in at_level.values():
                    ms.sort()
            keyed = []
            for p, ms in at_level.items():
                base, cap = totals[p], capacity[p]
                keyed.extend(((base + j) / cap, p, j, m) for j, m in enumerate(ms))
                totals[p] = base + len(ms)
            keyed.sort()
            for key in keyed:
                yield key[3]
        level += 1


class Placement:
    """The working state of one assignment: the group sorted out (members by id, processes,
    previous holders of every task) and who gets what so far."""

    def __init__(self, spec: GroupSpec) -> None:
        self.spec = spec
        specs = spec.members
        self.members = members = sorted(specs)
        self.process = process = {m: specs[m].process_id for m in members}
        epoch = spec.topology_epoch
        self.eligible = [m for m in members if specs[m].topology_epoch == epoch]
        self.is_eligible = set(self.eligible)
        self.capacity: dict[str, int] = {}          # process -> members (all, stale ones too)
        for m in members:
            p = process[m]
            self.capacity[p] = self.capacity.get(p, 0) + 1
        self.eligible_of: dict[str, list[str]] = {}  # process -> its eligible members, by id
        for m in self.eligible:
            self.eligible_of.setdefault(process[m], []).append(m)
        subs = spec.subtopologies
        self.partitions = {s: sub.num_partitions for s, sub in subs.items()}
        self.stateful = frozenset(s for s, sub in subs.items() if sub.stateful)
        #: subtopology -> its tasks by partition (one tuple per task, shared by all structures)
        self.task_ids: dict[str, list[TaskId]] = {s: [(s, p) for p in range(subs[s].num_partitions)]
                                                  for s in sorted(subs)}
        #: every task, by subtopology then partition
        self.tasks: list[TaskId] = [t for ids in self.task_ids.values() for t in ids]
        # -- the assignment being built
        self.active: dict[str, list[TaskId]] = {m: [] for m in members}
        self.standby: dict[str, list[TaskId]] = {m: [] for m in members}
        self.warmup: dict[str, list[TaskId]] = {m: [] for m in members}
        self.count: dict[str, int] = dict.fromkeys(members, 0)   # active (+ standby) tasks per member
        self.owner: dict[TaskId, str] = {}                        # active owner
        #: stateful task -> the processes holding it in any role (never one twice)
        self.holders: dict[TaskId, list[str]] = {}
        self._read_current()
        self._candidates: dict[Ranker, dict[TaskId, list[Candidate]]] = {}
        #: stateful task -> processes caught up on it (filled in by ``highly_available`` only)
        self.caught: dict[TaskId, set[str]] = {}

    # -- the members' current assignments ----------------------------------------------------
    def _read_current(self) -> None:
        """Previous holders of each task; tasks outside the topology are dropped, and a task
        that two members claim as active goes to the first by member id."""
        is_eligible, task_ids = self.is_eligible, self.task_ids
        prev_active: dict[TaskId, str] = {}
        prev_standby: dict[TaskId, list[str]] = {}    # standby or warm-up holders
        prev_warmup: dict[TaskId, list[str]] = {}
        had_standby: set[tuple[str, TaskId]] = set()  # (stale member, task) it had as standby
        for m in reversed(self.members):              # smaller ids overwrite: the first claimant wins
            current = self.spec.members[m].current
            for s, ps in current.active.items():
                ids = task_ids.get(s)
                if ids is not None:
                    n = len(ids)
                    for p in ps:
                        if 0 <= p < n:
                            prev_active[ids[p]] = m
            stale = m not in is_eligible
            for role in (current.standby, current.warmup):
                warm = role is current.warmup
                for s, ps in role.items():
                    ids = task_ids.get(s)
                    if ids is None:
                        continue
                    n = len(ids)
                    for p in ps:
                        if 0 <= p < n:
                            t = ids[p]
                            holders = prev_standby.get(t)
                            if holders is None:
                                prev_standby[t] = [m]
                            elif holders[-1] != m:
                                holders.append(m)
                            if warm:
                                prev_warmup.setdefault(t, []).append(m)
                            elif stale:
                                had_standby.add((m, t))
        for holders in prev_standby.values():
            if len(holders) > 1:
                holders.reverse()                     # member id order
        for holders in prev_warmup.values():
            holders.reverse()
        self.prev_active, self.prev_standby, self.prev_warmup = prev_active, prev_standby, prev_warmup
        self.had_standby = had_standby
        # Processes (of this group) that reported an offset for a task: (offset, process).
        self.offset_processes: dict[TaskId, list[tuple[int, str]]] = {}
        partitions = self.partitions
        for p, offsets in self.spec.task_offsets.items():
            if p not in self.capacity:
                continue
            for t, offset in offsets.items():
                n = partitions.get(t[0])
                if n is not None and 0 <= t[1] < n:
                    self.offset_processes.setdefault(t, []).append((offset, p))

    def offset(self, process: str, task: TaskId, default: int = 0) -> int:
        offsets = self.spec.task_offsets.get(process)
        if offsets is None:
            return default
        return offsets.get(task, default)

    def candidates(self, task: TaskId, rank: Ranker) -> list[Candidate]:
        """The members and processes with state for ``task``, best first (cached per task)."""
        cache = self._candidates.get(rank)
        if cache is None:
            cache = self._candidates[rank] = {}
        cands = cache.get(task)
        if cands is None:
            cands = cache[task] = rank(self, task, self.prev_standby.get(task, []),
                                       self.offset_processes.get(task, []))
        return cands

    # -- giving tasks ----------------------------------------------------------------------
    def give_active(self, member: str, task: TaskId) -> int:
        self.active[member].append(task)
        self.owner[task] = member
        if task[0] in self.stateful:
            self.holders[task] = [self.process[member]]
        c = self.count[member] + 1
        self.count[member] = c
        return c

    def take_active(self, member: str, task: TaskId) -> None:
        self.active[member].remove(task)
        del self.owner[task]
        holders = self.holders.get(task)
        if holders is not None:
            holders.remove(self.process[member])
        self.count[member] -= 1

    def give_standby(self, member: str, task: TaskId) -> int:
        self.standby[member].append(task)
        self.holders[task].append(self.process[member])
        c = self.count[member] + 1
        self.count[member] = c
        return c

    def give_warmup(self, member: str, task: TaskId) -> None:
        # Warm-ups do not count towards the load (Kafka Streams does not count them either).
        self.warmup[member].append(task)
        self.holders[task].append(self.process[member])

    def process_loads(self) -> dict[str, int]:
        loads = dict.fromkeys(self.capacity, 0)
        for m, c in self.count.items():
            loads[self.process[m]] += c
        return loads

    def room_in(self, process: str, below: int) -> str | None:
        """The least-loaded eligible member of ``process`` with fewer than ``below`` tasks."""
        best = None
        for m in self.eligible_of.get(process, ()):
            c = self.count[m]
            if c < below and (best is None or c < self.count[best]):
                best = m
        return best

    # -- active tasks ------------------------------------------------------------------------
    def keep_previous_active(self, quota: Quota) -> None:
        """Step 1: previous owners keep their tasks while below the quota, tasks in (partition,
        subtopology) order. Stale members keep theirs first and then leave the quota's pool
        with what they kept, since they can take nothing more: otherwise they would count as
        capacity that never fills, the quota of the others would be too small and a member's
        own result, fed back as its current assignment, would lose tasks (no fixed point)."""
        prev = self.prev_active
        if len(self.eligible) == len(self.members) or not self.eligible:
            if prev:
                self._keep(quota, prev)
            return
        is_eligible = self.is_eligible
        if prev:
            left = self._keep(quota, {t: o for t, o in prev.items() if o not in is_eligible})
        else:
            left = set()
        count = self.count
        for m in self.members:
            if m not in is_eligible and m not in left:
                quota.members -= 1
                quota.tasks -= count[m]
        quota.value = _ceil_div(quota.tasks, quota.members)
        if prev:
            self._keep(quota, {t: o for t, o in prev.items() if o in is_eligible})

    def _keep(self, quota: Quota, prev: dict[TaskId, str]) -> set[str]:
        """Previous owners (task -> member) keep their tasks while below the quota; returns
        the members that reached it (they left the pool)."""
        active, owner, holders, count, process, stateful = (
            self.active, self.owner, self.holders, self.count, self.process, self.stateful)
        reached: set[str] = set()
        q = quota.value
        for t in sorted(self.tasks, key=_PARTITION):   # stable: (partition, subtopology)
            o = prev.get(t)
            if o is None:
                continue
            c = count[o]
            if c < q:                                  # give_active, inlined
                active[o].append(t)
                owner[t] = o
                if t[0] in stateful:
                    holders[t] = [process[o]]
                c += 1
                count[o] = c
                if c == q:
                    quota.reached(c)
                    reached.add(o)
                    q = quota.value
        return reached

    def place_with_candidates(self, quota: Quota, rank: Ranker) -> None:
        """Step 2: tasks nobody kept go to the first candidate (a previous standby/warm-up
        holder, a process with state) below the quota; only eligible members take new tasks."""
        if not self.prev_standby and not self.offset_processes:
            return
        owner = self.owner
        tasks = [t for t in self.prev_standby if t not in owner]
        tasks.extend(t for t in self.offset_processes if t not in owner and t not in self.prev_standby)
        tasks.sort()
        tasks.sort(key=_PARTITION)
        is_eligible, count = self.is_eligible, self.count
        for t in tasks:
            for m, p in self.candidates(t, rank):
                if m is None:
                    m = self.room_in(p, quota.value)
                    if m is None:
                        continue
                elif m not in is_eligible or count[m] >= quota.value:
                    continue
                quota.reached(self.give_active(m, t))
                break

    def fill_active(self) -> None:
        """Step 3: every task still without an owner, in (subtopology, partition) order, to the
        least-loaded eligible member. Without eligible members a task goes back to its
        previous owner (over quota), or stays unassigned."""
        owner = self.owner
        rest = [t for t in self.tasks if t not in owner] if owner else self.tasks
        if not rest:
            return
        if not self.eligible:
            for t in rest:
                o = self.prev_active.get(t)
                if o is not None:
                    self.give_active(o, t)
            return
        # The hot loop of a first assignment: give_active, spread over a few bulk operations.
        active, count, process, holders, stateful = self.active, self.count, self.process, self.holders, self.stateful
        members = list(islice(least_loaded(self.eligible, count, process, self.capacity, self.process_loads()),
                              len(rest)))
        owner.update(zip(rest, members))
        for t, m in zip(rest, members):
            active[m].append(t)
        for m in self.eligible:
            count[m] = len(active[m])
        for t, m in zip(rest, members):
            if t[0] in stateful:
                holders[t] = [process[m]]

    def assign_active(self, rank: Ranker) -> None:
        """Kafka's three steps for active tasks (see the module docstring)."""
        quota = Quota(len(self.tasks), len(self.members))
        self.keep_previous_active(quota)
        self.place_with_candidates(quota, rank)
        self.fill_active()

    # -- standby tasks -----------------------------------------------------------------------
    def standby_quota(self) -> Quota:
        """Kafka's quota of active plus standby tasks per member, with the members that
        already hold at least the quota in active tasks taken out of the pool. Stale members
        leave the pool at once with their active tasks and the standbys they may keep (they
        take no new one), so that they do not count as capacity that never fills."""
        k = self.spec.num_standby_replicas
        stateful_owned = sum(1 for t in self.owner if t[0] in self.stateful)
        quota = Quota(len(self.owner) + stateful_owned * k, len(self.members))
        count, eligible = self.count, self.eligible
        #: stale member -> the load up to which it keeps its standbys (it is out of the pool)
        self.stale_cap: dict[str, int] = {}
        if eligible and len(eligible) != len(self.members):
            may_keep = dict.fromkeys(self.members, 0)
            for m, t in self.had_standby:
                if t in self.owner:
                    may_keep[m] += 1
            for m in self.members:
                if m not in self.is_eligible:
                    cap = self.stale_cap[m] = min(count[m] + may_keep[m], quota.value)
                    quota.members -= 1
                    quota.tasks = max(0, quota.tasks - cap)
            quota.value = _ceil_div(quota.tasks, quota.members)
        for c in sorted((count[m] for m in eligible), reverse=True):
            if c < quota.value:
                break
            quota.members -= 1
            quota.tasks -= c
            quota.value = _ceil_div(quota.tasks, quota.members)
        return quota

    def may_hold_standby(self, member: str, task: TaskId) -> bool:
        """Eligible members may get any standby; stale ones only keep a standby they had."""
        return member in self.is_eligible or (member, task) in self.had_standby

    def assign_standby(self, rank: Ranker, prefer_previous_owner: bool = True) -> None:
        """Up to ``num_standby_replicas`` standbys per stateful task on distinct processes
        without it: previous holders first while below the quota, then the least loaded."""
        k = self.spec.num_standby_replicas
        if k <= 0 or not self.stateful or not self.owner:
            return
        owner, stateful = self.owner, self.stateful
        prev_active, prev_standby, offset_processes = self.prev_active, self.prev_standby, self.offset_processes
        if not (prev_active or prev_standby or offset_processes):
            # A first assignment: every replica goes to the least loaded, in (subtopology,
            # partition) order descending.
            deferred = [(t, k) for t in reversed(self.tasks) if t[0] in stateful and t in owner]
        else:
            deferred = self._sticky_standbys(rank, prefer_previous_owner)
            deferred.sort(key=_task_of, reverse=True)   # Kafka: (subtopology, partition) descending
        if deferred and self.eligible:
            self._fill_standby(deferred)

    def _sticky_standbys(self, rank: Ranker, prefer_previous_owner: bool) -> list[tuple[TaskId, int]]:
        """Standbys for previous holders, tasks in (partition, subtopology) order descending:
        the previous active owner (when ``prefer_previous_owner``), then the ranked
        candidates, while below the quota. Returns the (task, replicas) still to place."""
        k = self.spec.num_standby_replicas
        quota = self.standby_quota()
        count, process, holders, owner = self.count, self.process, self.holders, self.owner
        prev_active, prev_standby, offset_processes = self.prev_active, self.prev_standby, self.offset_processes
        is_eligible, stateful = self.is_eligible, self.stateful
        # with eligible members, stale ones are out of the quota's pool (see standby_quota)
        in_pool = is_eligible if self.eligible else set(self.members)
        stale_cap = self.stale_cap
        tasks = [t for t in self.tasks if t[0] in stateful and t in owner]
        tasks.sort(key=_PARTITION)
        tasks.reverse()
        fast = rank is sticky_rank
        deferred: list[tuple[TaskId, int]] = []
        for t in tasks:
            need = k
            held = holders[t]
            if prefer_previous_owner:
                o = prev_active.get(t)
                if o is not None and o in is_eligible and process[o] not in held and count[o] < quota.value:
                    quota.reached(self.give_standby(o, t))
                    need -= 1
            if not need:
                continue
            hs = prev_standby.get(t)
            if fast and hs is not None and len(hs) == 1 and t not in offset_processes:
                # The usual case, without building a candidate list: one previous standby.
                m = hs[0]
                p = process[m]
                if p not in held and count[m] < stale_cap.get(m, quota.value) and (
                        m in is_eligible or (m, t) in self.had_standby):
                    c = self.give_standby(m, t)
                    if m in in_pool:
                        quota.reached(c)
                    need -= 1
            elif hs is not None or t in offset_processes or (not prefer_previous_owner and t in prev_active):
                for m, p in self.candidates(t, rank):
                    if p in held:
                        continue
                    if m is None:
                        m = self.room_in(p, quota.value)
                        if m is None:
                            continue
                    elif count[m] >= stale_cap.get(m, quota.value) or not self.may_hold_standby(m, t):
                        continue
                    c = self.give_standby(m, t)
                    if m in in_pool:
                        quota.reached(c)
                    need -= 1
                    if not need:
                        break
            if need:
                deferred.append((t, need))
        return deferred

    def _fill_standby(self, deferred: list[tuple[TaskId, int]]) -> None:
        """The remaining replicas to the least-loaded eligible members whose process does not
        hold the task: a member popped for a task its process holds waits, first in line,
        for the next task (Kafka's heap poll-and-put-back)."""
        process, holders, count, standby = self.process, self.holders, self.count, self.standby
        members = least_loaded(self.eligible, count, process, self.capacity, self.process_loads())
        n = len(self.eligible)
        waiting: list[str] = []
        for t, need in deferred:
            held = holders[t]
            if waiting:
                i = 0
                while need and i < len(waiting):
                    m = waiting[i]
                    p = process[m]
                    if p in held:
                        i += 1
                        continue
                    del waiting[i]
                    standby[m].append(t)          # give_standby, inlined
                    held.append(p)
                    count[m] += 1
                    need -= 1
            misses = 0
            while need:
                m = next(members)
                p = process[m]
                if p in held:
                    waiting.append(m)
                    misses += 1
                    if misses > n:
                        # Every member came round without a free process: the task gets at most
                        # one more replica per eligible process that does not hold it (Kafka
                        # gives up on a replica when its heap of processes runs out). After this
                        # each replica still wanted has a free process whose members the endless
                        # iterator reaches, so no further check is needed; without the cap a
                        # task wanting more replicas than free processes would loop forever.
                        free = sum(1 for q in self.eligible_of if q not in held)
                        if free < need:
                            need = free
                        if not need:
                            break
                        misses = -(1 << 62)
                    continue
                standby[m].append(t)
                held.append(p)
                count[m] += 1
                need -= 1

    # -- the result --------------------------------------------------------------------------
    def result(self) -> dict[str, TaskSets]:
        def grouped(tasks: list[TaskId]) -> dict[str, frozenset[int]]:
            if not tasks:
                return {}
            return {s: frozenset(ps) for s, ps in _grouped(tasks).items()}
        trusted = TaskSets._trusted
        active, standby, warmup = self.active, self.standby, self.warmup
        return {m: trusted(grouped(active[m]), grouped(standby[m]), grouped(warmup[m])) for m in self.members}


def sticky_rank(placement: Placement, task: TaskId, holders: list[str],
                offset_processes: list[tuple[int, str]]) -> list[Candidate]:
    """Kafka's ``STANDBY_CANDIDATE_ORDER``: members that hold the task as a standby or warm-up
    first, then processes only known to have state through a reported offset; each group the
    most caught-up first (largest offset sum, 0 when unknown), then by id."""
    process = placement.process
    if not offset_processes and len(holders) == 1:
        m = holders[0]
        return [(m, process[m])]
    offset = placement.offset
    ranked: list[Candidate] = [
        (m, process[m]) for _, m in sorted((-offset(process[m], task), m) for m in holders)]
    ranked.extend((None, p) for _, p in sorted((-o, p) for o, p in offset_processes))
    return ranked

