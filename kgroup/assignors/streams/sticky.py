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

from collections import deque
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
        self.held: set[tuple[str, TaskId]] = set()            # (process, stateful task) held in any role
        # previous holders, from the members' current tasks (invalid tasks dropped)
        self.prev_active: dict[TaskId, list[str]] = {}
        self.prev_standby: dict[TaskId, list[str]] = {}
        self.prev_warmup: dict[TaskId, list[str]] = {}
        #: each member's current active tasks that are still valid, in order
        self.current_active: dict[str, list[TaskId]] = {}
        valid = self.valid
        for m in self.members:
            cur = spec.members[m].current
            mine: list[TaskId] = []
            for tasks, into in ((cur.active, self.prev_active), (cur.standby, self.prev_standby),
                                (cur.warmup, self.prev_warmup)):
                for sub, ps in tasks.items():
                    for p in ps:
                        t = (sub, p)
                        if t in valid:
                            holders = into.get(t)
                            if holders is None:
                                into[t] = [m]
                            else:
                                holders.append(m)
                            if into is self.prev_active:
                                mine.append(t)
            mine.sort()
            self.current_active[m] = mine

    # -- quotas and loads ----------------------------------------------------------------
    def active_quotas(self) -> dict[str, int]:
        """⌈N/M⌉ for the members that keep most of what they have, ⌊N/M⌋ for the others."""
        n, members = len(self.tasks), self.members
        if not members:
            return {}
        floor, extra = divmod(n, len(members))
        kept = {m: len(self.current_active[m]) for m in members}
        by_keep = sorted(members, key=lambda m: (-kept[m], m))
        return {m: floor + (1 if i < extra else 0) for i, m in enumerate(by_keep)}

    def holds(self, process: str, task: TaskId) -> bool:
        return (process, task) in self.held

    def give_active(self, member: str, task: TaskId) -> None:
        self.active[member].append(task)
        self.owner[task] = member
        if task[0] in self.stateful:
            self.held.add((self.process[member], task))

    def take_active(self, member: str, task: TaskId) -> None:
        self.active[member].remove(task)
        del self.owner[task]
        self.held.discard((self.process[member], task))

    def give_standby(self, member: str, task: TaskId) -> None:
        self.standby[member].append(task)
        self.held.add((self.process[member], task))

    def give_warmup(self, member: str, task: TaskId) -> None:
        self.warmup[member].append(task)
        self.held.add((self.process[member], task))

    # -- the phases every assignor shares -------------------------------------------------
    def keep_active(self, quotas: dict[str, int], keep: Iterable[TaskId] | None = None) -> None:
        """Previous active owners keep their tasks within quota (the first owner in member
        order wins a task claimed twice)."""
        allowed = None if keep is None else set(keep)
        for m in self.members:
            room = quotas.get(m, 0)
            for t in self.current_active[m]:
                if room <= 0:
                    break
                if t not in self.owner and (allowed is None or t in allowed):
                    self.give_active(m, t)
                    room -= 1

    def fill_active(self, tasks: Iterable[TaskId]) -> None:
        """The tasks nobody kept go to eligible members, evening out their loads: first to a
        member that had the task as a standby or warm-up (its state is warm) while it is below
        the balanced level, then by water-filling the least-loaded members. With nobody
        eligible, a task goes back to a previous owner (stale members may keep tasks)."""
        orphans = [t for t in tasks if t not in self.owner]
        if not self.eligible:
            for t in orphans:
                prev = self.prev_active.get(t)
                if prev:
                    self.give_active(prev[0], t)
            return
        quota = self._levels(len(orphans))
        rest = []
        eligible = set(self.eligible)
        for t in orphans:
            warm = self.prev_standby.get(t, []) + self.prev_warmup.get(t, []) if (
                t in self.prev_standby or t in self.prev_warmup) else ()
            best = None
            for m in warm:
                if m in eligible and quota[m] > 0 and (best is None or quota[m] > quota[best]):
                    best = m
            if best is not None:
                quota[best] -= 1
                self.give_active(best, t)
            else:
                rest.append(t)
        slots = [m for m in self.eligible for _ in range(quota[m])]
        active, owner, held, process, stateful = self.active, self.owner, self.held, self.process, self.stateful
        for m, t in zip(slots, rest):       # give_active, inlined: the hot loop of a first assignment
            active[m].append(t)
            owner[t] = m
            if t[0] in stateful:
                held.add((process[m], t))

    def _levels(self, n: int, loads_of: dict[str, list] | None = None) -> dict[str, int]:
        """How many of `n` new tasks each eligible member takes so the loads (of `loads_of`,
        active tasks by default) even out: water-filling, the least loaded first, the last
        few one each in load then id order."""
        loads_of = self.active if loads_of is None else loads_of
        loads = sorted((len(loads_of[m]), m) for m in self.eligible)
        level, remaining, width = loads[0][0], n, 0
        while width < len(loads):
            width += 1
            next_level = loads[width][0] if width < len(loads) else None
            if next_level is not None and (next_level - level) * width <= remaining:
                remaining -= (next_level - level) * width
                level = next_level
                continue
            level += remaining // width
            remaining %= width
            break
        take = {}
        for load, m in loads:
            take[m] = max(0, level - load)
        for load, m in loads[:width]:      # members at the level take the remainder, one each
            if remaining <= 0:
                break
            take[m] += 1
            remaining -= 1
        return take

    def place_standbys(self, rank=None) -> None:
        """Up to `num_standby_replicas` standbys per stateful task on distinct processes
        without the task: previous holders first (`rank` may order candidates further), then
        members below their share of standbys in turn (a ring that skips members whose
        process already holds the task), else any member whose process does not."""
        k = self.spec.num_standby_replicas
        if k <= 0 or not self.stateful or not self.eligible:
            return
        eligible = set(self.eligible)
        process, held = self.process, self.held
        wanted = sum(1 for t in self.tasks if t[0] in self.stateful and t in self.owner) * k
        share = -(-wanted // len(self.eligible))     # a previous holder keeps standbys up to this
        pending: list[tuple[TaskId, int]] = []
        for t in self.tasks:
            if t[0] not in self.stateful or t not in self.owner:
                continue
            need = k
            if t in self.prev_standby or t in self.prev_warmup:
                for m in self.prev_standby.get(t, []) + self.prev_warmup.get(t, []):
                    if need and m in self.active and (process[m], t) not in held and len(self.standby[m]) < share:
                        self.give_standby(m, t)   # keeping a standby is allowed for stale members too
                        need -= 1
            if need and rank is not None:
                for m in rank(t):
                    if not need:
                        break
                    if m in eligible and (process[m], t) not in held:
                        self.give_standby(m, t)
                        need -= 1
            if need:
                pending.append((t, need))
        quota = self._levels(sum(n for _, n in pending), self.standby)
        ring = deque(m for m in self.eligible if quota[m] > 0)
        standby = self.standby
        for t, need in pending:
            checked = 0
            while need and ring and checked < len(ring):
                m = ring[0]
                if (process[m], t) in held:
                    ring.rotate(-1)
                    checked += 1
                    continue
                standby[m].append(t)          # give_standby, inlined
                held.add((process[m], t))
                need -= 1
                checked = 0
                quota[m] -= 1
                if quota[m] == 0:
                    ring.popleft()
                else:
                    ring.rotate(-1)
            if need:                          # only members over their share are left for it
                for m in sorted(self.eligible, key=lambda m: (len(standby[m]), m)):
                    if not need:
                        break
                    if (process[m], t) not in held:
                        self.give_standby(m, t)
                        need -= 1

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
