"""The `sticky` task assignor (KIP-1071; Kafka's broker-side `StickyTaskAssignor`).

Active tasks, then standby tasks; no warm-up tasks:

1. **keep**: every member keeps its current active tasks up to its quota (the group's tasks
   spread over all members: ⌈N/M⌉ for the members keeping most, ⌊N/M⌋ for the rest);
2. **fill**: the other active tasks go, each, to the least-loaded eligible member — the
   member that had it as a standby first (its state is warm), then fewest tasks, then id;
3. **standbys**: each stateful task gets `num_standby_replicas` standbys on distinct
   processes other than its active's process: previous holders first, then least loaded.

KIP-1071 on top of Kafka's assignor: a member whose topology epoch is stale keeps what it has
within its quota but gets nothing new; when no member is eligible, tasks stay with whoever had
them (or unassigned).
"""
from __future__ import annotations

import heapq
from collections.abc import Iterable

from .api import GroupSpec, MemberSpec, TaskId, TaskSets


class Placement:
    """Working state shared by the assignors: who runs what, loads, and which process holds
    which stateful task (so no process ever holds one twice)."""

    def __init__(self, spec: GroupSpec) -> None:
        self.spec = spec
        self.members = sorted(spec.members)                    # deterministic order
        self.process = {m: spec.members[m].process_id for m in self.members}
        self.eligible = [m for m in self.members if spec.members[m].topology_epoch == spec.topology_epoch]
        self.tasks = spec.tasks()
        self.valid = set(self.tasks)
        self.stateful = {s for s, sub in spec.subtopologies.items() if sub.stateful}
        self.active: dict[str, list[TaskId]] = {m: [] for m in self.members}
        self.standby: dict[str, list[TaskId]] = {m: [] for m in self.members}
        self.warmup: dict[str, list[TaskId]] = {m: [] for m in self.members}
        self.owner: dict[TaskId, str] = {}                    # active owner
        self.held: dict[TaskId, set[str]] = {}                # processes holding a stateful task (any role)
        # previous holders, from the members' current tasks (invalid tasks dropped)
        self.prev_active: dict[TaskId, list[str]] = {}
        self.prev_standby: dict[TaskId, list[str]] = {}
        self.prev_warmup: dict[TaskId, list[str]] = {}
        for m in self.members:
            cur = spec.members[m].current
            for tasks, into in ((cur.active_ids(), self.prev_active), (cur.standby_ids(), self.prev_standby),
                                (cur.warmup_ids(), self.prev_warmup)):
                for t in tasks:
                    if t in self.valid:
                        into.setdefault(t, []).append(m)

    # -- quotas and loads ----------------------------------------------------------------
    def active_quotas(self) -> dict[str, int]:
        """⌈N/M⌉ for the members that keep most of what they have, ⌊N/M⌋ for the others."""
        n, members = len(self.tasks), self.members
        if not members:
            return {}
        floor, extra = divmod(n, len(members))
        kept = {m: sum(1 for t in self.spec.members[m].current.active_ids() if t in self.valid) for m in members}
        by_keep = sorted(members, key=lambda m: (-kept[m], m))
        return {m: floor + (1 if i < extra else 0) for i, m in enumerate(by_keep)}

    def holds(self, process: str, task: TaskId) -> bool:
        return task[0] in self.stateful and process in self.held.get(task, ())

    def _hold(self, member: str, task: TaskId) -> None:
        if task[0] in self.stateful:
            self.held.setdefault(task, set()).add(self.process[member])

    def give_active(self, member: str, task: TaskId) -> None:
        self.active[member].append(task)
        self.owner[task] = member
        self._hold(member, task)

    def give_standby(self, member: str, task: TaskId) -> None:
        self.standby[member].append(task)
        self._hold(member, task)

    def give_warmup(self, member: str, task: TaskId) -> None:
        self.warmup[member].append(task)
        self._hold(member, task)

    # -- the phases every assignor shares -------------------------------------------------
    def keep_active(self, quotas: dict[str, int], keep: Iterable[TaskId] | None = None) -> None:
        """Previous active owners keep their tasks within quota (the first owner in member
        order wins a task claimed twice)."""
        allowed = None if keep is None else set(keep)
        for m in self.members:
            room = quotas.get(m, 0)
            for t in sorted(self.spec.members[m].current.active_ids()):
                if room <= 0:
                    break
                if t in self.valid and t not in self.owner and (allowed is None or t in allowed):
                    self.give_active(m, t)
                    room -= 1

    def fill_active(self, tasks: Iterable[TaskId]) -> None:
        """Each task to the least-loaded eligible member (a previous standby holder first);
        with nobody eligible, back to a previous owner (stale members may keep tasks)."""
        heap = [(len(self.active[m]), m) for m in self.eligible]
        heapq.heapify(heap)
        for t in tasks:
            if t in self.owner:
                continue
            warm = [m for m in self.prev_standby.get(t, []) + self.prev_warmup.get(t, [])
                    if m in self.active and self.spec.members[m].topology_epoch == self.spec.topology_epoch]
            if warm:
                best = min(warm, key=lambda m: (len(self.active[m]), m))
                if heap and len(self.active[best]) <= heap[0][0]:
                    self.give_active(best, t)
                    continue
            if heap:
                load, m = heapq.heappop(heap)
                while load != len(self.active[m]):          # stale entry: re-push with the real load
                    heapq.heappush(heap, (len(self.active[m]), m))
                    load, m = heapq.heappop(heap)
                self.give_active(m, t)
                heapq.heappush(heap, (load + 1, m))
            else:
                prev = self.prev_active.get(t)
                if prev:
                    self.give_active(prev[0], t)

    def place_standbys(self, rank=None) -> None:
        """Up to `num_standby_replicas` standbys per stateful task on distinct processes
        without the task; previous holders first (`rank` may order candidates further)."""
        k = self.spec.num_standby_replicas
        if k <= 0 or not self.stateful:
            return
        eligible = set(self.eligible)
        heap = [(0, m) for m in self.eligible]
        heapq.heapify(heap)
        for t in self.tasks:
            if t[0] not in self.stateful or t not in self.owner:
                continue
            need = k
            for m in self.prev_standby.get(t, []) + self.prev_warmup.get(t, []):
                if need and m in self.active and not self.holds(self.process[m], t):
                    self.give_standby(m, t)   # keeping a standby is allowed for stale members too
                    need -= 1
            if need and rank is not None:
                for m in rank(t):
                    if not need:
                        break
                    if m in eligible and not self.holds(self.process[m], t):
                        self.give_standby(m, t)
                        need -= 1
            skipped = []
            while need and heap:
                load, m = heapq.heappop(heap)
                if load != len(self.standby[m]):
                    heapq.heappush(heap, (len(self.standby[m]), m))
                    continue
                if self.holds(self.process[m], t):
                    skipped.append((load, m))
                    continue
                self.give_standby(m, t)
                need -= 1
                heapq.heappush(heap, (load + 1, m))
            for item in skipped:
                heapq.heappush(heap, item)

    def result(self) -> dict[str, TaskSets]:
        return {m: TaskSets.of(self.active[m], self.standby[m], self.warmup[m]) for m in self.members}


class StickyTaskAssignor:
    """See the module docstring."""

    name = "sticky"

    def assign(self, spec: GroupSpec) -> dict[str, TaskSets]:
        p = Placement(spec)
        p.keep_active(p.active_quotas())
        p.fill_active(p.tasks)
        p.place_standbys()
        return p.result()


def member_spec(member_id: str, process_id: str | None = None, topology_epoch: int = 0,
                current: TaskSets | None = None) -> MemberSpec:
    """A MemberSpec with defaults (for tests and what-ifs)."""
    return MemberSpec(member_id, process_id or member_id, topology_epoch, current or TaskSets())


__all__ = ["StickyTaskAssignor", "Placement", "member_spec"]
