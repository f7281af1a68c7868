"""The `highly_available` task assignor (KIP-1071; in the spirit of Kafka Streams'
`HighAvailabilityTaskAssignor`, on the broker and per member).

The aim is that a stateful task is always processed by a member whose state is caught up
(its lag within acceptable.recovery.lag), while the load still evens out over time:

1. the balanced, sticky assignment is computed first (as `sticky` does): that is where every
   active task *should* run;
2. a stateful task whose balanced owner is **not** caught up, while another eligible member's
   process is, stays active on the caught-up member (its previous owner first) and the balanced
   owner gets a **warm-up** task instead — at most `num_warmup_replicas` in the whole group,
   existing warm-ups kept first;
3. standbys go to the most caught-up processes first (then the least loaded).

So a warm-up that has caught up is next time balanced onto its member as the active task (or
kept as a standby, or dropped): KIP-1071's invariant. Stateless tasks are placed as by `sticky`.
"""
from __future__ import annotations

from .api import GroupSpec, TaskId, TaskSets, is_caught_up
from .sticky import Placement


class HighlyAvailableTaskAssignor:
    """See the module docstring."""

    name = "highly_available"

    def assign(self, spec: GroupSpec) -> dict[str, TaskSets]:
        p = Placement(spec)
        p.keep_active(p.active_quotas())
        p.fill_active(p.tasks)
        eligible = set(p.eligible)

        def caught_up(member: str, task: TaskId) -> bool:
            return is_caught_up(spec, p.process[member], task)

        def offset(member: str, task: TaskId) -> int:
            return spec.task_offsets.get(p.process[member], {}).get(task, -1)

        # Which processes are caught up on which task, and their members (one pass over the offsets).
        members_of: dict[str, list[str]] = {}
        for m in p.members:
            members_of.setdefault(p.process[m], []).append(m)
        caught_up_on: dict[TaskId, list[str]] = {}
        for process, offsets in spec.task_offsets.items():
            if process in members_of:
                for t in offsets:
                    if t in p.valid and t[0] in p.stateful and is_caught_up(spec, process, t):
                        caught_up_on.setdefault(t, []).append(process)

        # 2. Keep (or put) a stateful task on a caught-up member while its balanced owner warms up.
        budget = spec.num_warmup_replicas
        moves: list[tuple[TaskId, str, str]] = []   # (task, balanced owner, caught-up member)
        for t, processes in caught_up_on.items():
            owner = p.owner.get(t)
            if owner is None or p.process[owner] in processes:
                continue
            previous = p.prev_active.get(t, [])
            candidates = [m for proc in processes for m in members_of[proc] if m in eligible or m in previous]
            if not candidates:
                continue
            keeper = min(candidates, key=lambda m: (m not in previous, m not in p.prev_standby.get(t, []),
                                                    -offset(m, t), len(p.active[m]), m))
            moves.append((t, owner, keeper))
        # Existing warm-ups first, so a warm-up in progress is not restarted elsewhere.
        moves.sort(key=lambda mv: (mv[1] not in p.prev_warmup.get(mv[0], []), mv[0]))
        for t, owner, keeper in moves:
            if budget <= 0:
                break
            if p.process[keeper] == p.process[owner]:
                continue
            p.take_active(owner, t)
            p.give_active(keeper, t)
            if owner in eligible:
                p.give_warmup(owner, t)
                budget -= 1

        # 3. Standbys on the most caught-up processes first.
        def rank(t: TaskId) -> list[str]:
            return sorted(p.eligible, key=lambda m: (not caught_up(m, t), -offset(m, t), len(p.standby[m]), m))
        p.place_standbys(rank if spec.task_offsets else None)
        return p.result()


__all__ = ["HighlyAvailableTaskAssignor"]
