"""The ``highly_available`` task assignor of KIP-1071: in the spirit of Kafka Streams'
client-side ``HighAvailabilityTaskAssignor`` (KIP-441), applied per member on the broker with
a sticky placement engine (:mod:`.placement`).

A stateful task should be processed by a member whose process is *caught up* on it (changelog
lag within ``acceptable_recovery_lag``, see :func:`~.api.is_caught_up`), while the load evens
out over a few assignments with the help of *warm-up* tasks:

1. **active, caught up first**: as ``sticky`` (dynamic per-member quota), but a previous owner
   whose process is not caught up keeps the task only until an eligible member of a caught-up
   process with room takes it; unowned tasks go to caught-up processes first (previous
   standby/warm-up holders first), else — nobody caught up — to the process with the most
   state (largest offset), else to the least-loaded member. Stateless tasks: as ``sticky``.
2. **warm-ups**: where the balanced owner is *not* caught up while a caught-up process exists
   (whose members were over quota), the caught-up member — the previous owner first — keeps
   the active task and the balanced owner gets a warm-up task instead, to catch up. At most
   ``num_warmup_replicas`` warm-ups in the whole group; existing warm-ups first. Without a
   warm-up left, balance wins and the task moves to the not-caught-up member.
3. **standbys**: as ``sticky``, but candidates ranked caught up first, then by offset
   (most state first), then previous role; the rest go to the least loaded.

So a warm-up that has caught up becomes the active task next time (if balance allows), or a
standby (it ranks first for one), or is dropped: it is never kept as a warm-up. Warm-ups go
only to members with the group's topology epoch, and count towards no quota.

Deviation from Kafka Streams: its assignor balances per client (process) and lets a caught-up
client keep the task however unbalanced the group is; here balance (the sticky quota) wins once
the warm-up budget is used up, as KIP-1071's broker-side assignors balance per member.
"""
from __future__ import annotations

from kgroup.gcpause import gc_paused

from .api import GroupSpec, TaskId, TaskSets
from .placement import Candidate, Placement, Quota

__all__ = ["HighlyAvailableTaskAssignor"]


def _caught_up_processes(placement: Placement) -> dict[TaskId, set[str]]:
    """Stateful task -> the processes of this group caught up on it."""
    spec = placement.spec
    ends, lag, stateful = spec.task_end_offsets, spec.acceptable_recovery_lag, placement.stateful
    caught: dict[TaskId, set[str]] = {}
    if not ends:
        return caught                      # unknown end offsets are never caught up
    for t, entries in placement.offset_processes.items():
        end = ends.get(t)
        if end is None or t[0] not in stateful:
            continue
        for offset, p in entries:
            if end - offset <= lag:
                caught.setdefault(t, set()).add(p)
    return caught


def active_rank(placement: Placement, task: TaskId, holders: list[str],
                offset_processes: list[tuple[int, str]]) -> list[Candidate]:
    """Caught-up previous standby/warm-up holders, then other caught-up processes (most
    caught up first); then the rest by offset (most state first), members before processes."""
    process, offset = placement.process, placement.offset
    caught = placement.caught.get(task, ())
    keyed = []
    for m in holders:
        p = process[m]
        up = p in caught
        keyed.append((0, 0, -offset(p, task), m, m, p) if up else (1, -offset(p, task), 0, m, m, p))
    for o, p in offset_processes:
        keyed.append((0, 1, -o, p, None, p) if p in caught else (1, -o, 1, p, None, p))
    keyed.sort(key=lambda k: k[:4])
    return [(k[4], k[5]) for k in keyed]


def standby_rank(placement: Placement, task: TaskId, holders: list[str],
                 offset_processes: list[tuple[int, str]]) -> list[Candidate]:
    """Caught-up first, then the most state (largest offset); among equals the previous active
    owner, then previous standby/warm-up holders, then processes known by offsets only."""
    process, offset = placement.process, placement.offset
    owner = placement.prev_active.get(task)
    if not placement.spec.task_offsets:
        # No offsets anywhere: nothing is caught up and every offset is 0, so the order below
        # is the previous owner, then the holders (already in member id order), no sort needed.
        ranked: list[Candidate] = [(m, process[m]) for m in holders]
        if owner is not None and owner in placement.is_eligible:
            ranked.insert(0, (owner, process[owner]))
        return ranked
    caught = placement.caught.get(task, ())
    keyed = []
    if owner is not None and owner in placement.is_eligible:
        p = process[owner]
        keyed.append((p not in caught, -offset(p, task), 0, owner, owner, p))
    for m in holders:
        p = process[m]
        keyed.append((p not in caught, -offset(p, task), 1, m, m, p))
    for o, p in offset_processes:
        keyed.append((p not in caught, -o, 2, p, None, p))
    keyed.sort(key=lambda k: k[:4])
    return [(k[4], k[5]) for k in keyed]


class HighlyAvailableTaskAssignor:
    """KIP-1071's ``highly_available`` assignor: see the module docstring."""

    name = "highly_available"

    def assign(self, spec: GroupSpec) -> dict[str, TaskSets]:
        """Member id -> active, standby and warm-up tasks, for every member of ``spec``."""
        with gc_paused():
            placement = Placement(spec)
            placement.caught = _caught_up_processes(placement)
            self._assign_active(placement)
            self._place_warmups(placement)
            placement.assign_standby(standby_rank, prefer_previous_owner=False)
            return placement.result()

    def __repr__(self) -> str:
        return self.name

    # -- active tasks --------------------------------------------------------------------
    @staticmethod
    def _caught_up_elsewhere(placement: Placement, task: TaskId, member: str) -> bool:
        """Is ``member``'s process not caught up on ``task`` while an eligible member's is?"""
        caught = placement.caught.get(task)
        if not caught or placement.process[member] in caught:
            return False
        return any(p in placement.eligible_of for p in caught)

    def _assign_active(self, placement: Placement) -> None:
        quota = Quota(len(placement.tasks), len(placement.members))
        placement.keep_previous_active(quota)
        if placement.caught:
            # A previous owner that is not caught up keeps the task only while no caught-up
            # member has room for it.
            soft = [t for t in placement.owner
                    if self._caught_up_elsewhere(placement, t, placement.owner[t])]
            soft.sort()
            soft.sort(key=lambda t: t[1])
            for t in soft:
                owner = placement.owner[t]
                for m, p in placement.candidates(t, active_rank):
                    if p not in placement.caught[t]:
                        break                  # candidates are ranked caught-up first
                    if m is None:
                        m = placement.room_in(p, quota.value)
                        if m is None:
                            continue
                    elif m not in placement.is_eligible or placement.count[m] >= quota.value:
                        continue
                    placement.take_active(owner, t)
                    quota.reached(placement.give_active(m, t))
                    break
        placement.place_with_candidates(quota, active_rank)
        placement.fill_active()

    # -- warm-up tasks -------------------------------------------------------------------
    def _place_warmups(self, placement: Placement) -> None:
        budget = placement.spec.num_warmup_replicas
        if budget <= 0 or not placement.caught:
            return
        moves = []
        for t, owner in placement.owner.items():
            if owner in placement.is_eligible and self._caught_up_elsewhere(placement, t, owner):
                # existing warm-ups first, so a restore in progress is not restarted elsewhere
                moves.append((owner not in placement.prev_warmup.get(t, ()), t[1], t[0], t, owner))
        moves.sort()
        for *_, t, target in moves:
            if budget <= 0:
                break
            keeper = self._keeper(placement, t)
            if keeper is None:
                continue
            placement.take_active(target, t)
            placement.give_active(keeper, t)
            placement.give_warmup(target, t)
            budget -= 1

    @staticmethod
    def _keeper(placement: Placement, task: TaskId) -> str | None:
        """The caught-up member that processes ``task`` while its target warms up: the previous
        owner (even a stale one: it keeps a task it had), else an eligible member of a caught-up
        process, previous standby/warm-up holders first, most caught up, least loaded."""
        caught = placement.caught[task]
        process = placement.process
        previous = placement.prev_active.get(task)
        if previous is not None and process[previous] in caught:
            return previous
        holders = set(placement.prev_standby.get(task, ()))
        best, best_key = None, None
        for p in caught:
            for m in placement.eligible_of.get(p, ()):
                key = (m not in holders, -placement.offset(p, task), placement.count[m], m)
                if best_key is None or key < best_key:
                    best, best_key = m, key
        return best
