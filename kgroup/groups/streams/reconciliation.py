"""Reconciliation of one Streams member towards its target tasks (KIP-1071 "Reconciliation
of the group"; Kafka's streams `CurrentAssignmentBuilder`).

- Active tasks move like KIP-848 partitions: tasks no longer in the target are revoked
  first (the member stays in its epoch until it stops reporting them); a new active task
  is handed over only once its previous owner confirmed the revocation.
- Standby and warm-up tasks are reconciled in parallel with them: removed ones leave at
  once, and a new one waits only while another member *of the same process* still holds
  that task in some role (two threads of one process never run one stateful task twice).

States (persisted as in Kafka): STABLE, UNREVOKED_TASKS (waiting for revocations),
UNRELEASED_TASKS (at the target epoch, waiting for tasks others still hold), UNKNOWN.
"""
from __future__ import annotations

from collections.abc import Callable

from kgroup.assignors.streams.api import TaskId, TaskSets
from kgroup.errors import ErrorCode, KafkaError
from kgroup.groups.modern import MemberState

from .group import EMPTY_TASKS, ROLES, StreamsGroupMember, difference

#: task -> epoch of its current active owner, or -1
ActiveEpoch = Callable[[TaskId], int]
#: (process id, task, member id) -> another member of that process holds the task
HeldInProcess = Callable[[str, TaskId, str], bool]


def _intersect(a: TaskSets, b: TaskSets) -> TaskSets:
    return TaskSets(**{r: {s: ps & getattr(b, r).get(s, frozenset()) for s, ps in getattr(a, r).items()
                           if ps & getattr(b, r).get(s, frozenset())} for r in ROLES})


def still_owns_any(owned: TaskSets | None, pending: TaskSets) -> bool:
    """Whether the member still reports a task it was asked to revoke (unknown: yes)."""
    if owned is None:
        return True
    for r in ROLES:
        mine = getattr(owned, r)
        for s, ps in getattr(pending, r).items():
            if ps & mine.get(s, frozenset()):
                return True
    return False


def reconcile(member: StreamsGroupMember, target_epoch: int, target: TaskSets, *, active_epoch: ActiveEpoch,
              held_in_process: HeldInProcess, owned: TaskSets | None) -> StreamsGroupMember:
    """The member's next state (`member` itself when it cannot move).

    `owned` is what the member reported in this heartbeat (None: not reported)."""
    if member.state == MemberState.STABLE:
        if member.member_epoch == target_epoch:
            return member
        return _next(member, target_epoch, target, active_epoch, held_in_process, owned)
    if member.state == MemberState.UNREVOKED_PARTITIONS:
        if still_owns_any(owned, member.pending_revocation):
            return member
        return _next(member, target_epoch, target, active_epoch, held_in_process, owned)
    if member.state == MemberState.UNRELEASED_PARTITIONS:
        return _next(member, target_epoch, target, active_epoch, held_in_process, owned)
    # UNKNOWN: written by a newer coordinator; fence unless the member owns nothing.
    if owned is None or not owned.is_empty:
        raise KafkaError(ErrorCode.fenced_member_epoch, "The streams group member is in an unknown state. "
                         "The member must abandon all its tasks and rejoin.")
    return _next(member.replace(assigned=EMPTY_TASKS, pending_revocation=EMPTY_TASKS), target_epoch, target,
                 active_epoch, held_in_process, owned)


def _next(member: StreamsGroupMember, target_epoch: int, target: TaskSets, active_epoch: ActiveEpoch,
          held_in_process: HeldInProcess, owned: TaskSets | None) -> StreamsGroupMember:
    current = member.assigned
    kept = _intersect(current, target)
    revoking = difference(current, target)
    new = difference(target, current)
    unreleased = False
    adding: dict[str, dict[str, set[int]]] = {r: {} for r in ROLES}
    pending_before = member.pending_revocation
    for r in ROLES:
        for s, ps in getattr(new, r).items():
            for p in ps:
                task = (s, p)
                if r == "active":
                    blocked = active_epoch(task) != -1 and p not in pending_before.active.get(s, frozenset())
                else:
                    blocked = False
                # Any role: another thread of the same process must let go of the task first.
                blocked = blocked or held_in_process(member.process_id, task, member.member_id)
                if blocked:
                    unreleased = True
                else:
                    adding[r].setdefault(s, set()).add(p)
    # A kept active task keeps its assignment epoch; a new one is assigned in the target epoch.
    epochs = {task: member.active_epoch_of(task) for task in kept.active_ids()}
    if not revoking.is_empty and still_owns_any(owned, revoking):
        # Revoke first: the member keeps its epoch until it confirms (KIP-848 rules for actives;
        # standby and warm-up removals ride along in the same response).
        # the revoked tasks keep their assignment epochs while pending (Kafka writes them)
        epochs.update((task, member.active_epoch_of(task)) for task in revoking.active_ids())
        return member.with_epoch(member.member_epoch).replace(
            state=MemberState.UNREVOKED_PARTITIONS, assigned=kept, pending_revocation=revoking,
            active_epochs=epochs)
    assigned = TaskSets(**{r: {s: frozenset(getattr(kept, r).get(s, frozenset()) | adding[r].get(s, set()))
                               for s in set(getattr(kept, r)) | set(adding[r])} for r in ROLES})
    for s, ps in adding["active"].items():
        epochs.update(((s, p), target_epoch) for p in ps)
    return member.with_epoch(target_epoch).replace(
        state=MemberState.UNRELEASED_PARTITIONS if unreleased else MemberState.STABLE,
        assigned=assigned, pending_revocation=EMPTY_TASKS, active_epochs=epochs)


__all__ = ["reconcile", "still_owns_any"]
