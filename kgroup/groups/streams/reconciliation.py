"""Reconciliation of one Streams member towards its target tasks (KIP-1071 "Reconciliation
of the group"), step for step as Kafka 4.4.0's streams `CurrentAssignmentBuilder` computes it
(the KIP does not spell the internals out, so Kafka is the reference under both profiles;
tests/streams/test_streams_reconciliation_vs_kafka.py checks it against the real class).

One step, per role (active, standby, warm-up) and subtopology:

- current ∩ target is kept (an active task keeps its assignment epoch), current - target is to
  be revoked, target - current is to be assigned (an active task at the target epoch) unless it
  is *unreleased*:
  - an active task while any member still runs it as active, or another member of this
    process holds it as standby or warm-up;
  - a standby task while another member of this process runs it as active, this process
    already holds it as standby (any member, this one included: it is not assigned to it), or
    another member of this process holds it as warm-up;
  - a warm-up task while this process runs it as active (any member), another member of this
    process holds it as standby, or this process already holds it as warm-up.
- role changes on the member itself are granted at once: an active task becoming standby
  (demotion), standby <-> warm-up (the outgoing role is then not revoked);
- a standby or warm-up task becoming active (promotion) is not revoked, and stays in its old
  role until the active task is granted in this very step.

Then: anything to revoke that the member still reports (unknown: yes) -> UNREVOKED_TASKS at
the member epoch, nothing new assigned; else the target epoch, STABLE or UNRELEASED_TASKS.

States (persisted as in Kafka): STABLE, UNREVOKED_TASKS, UNRELEASED_TASKS, UNKNOWN.
"""
from __future__ import annotations

from collections.abc import Set as AbstractSet
from typing import Protocol

from kgroup.assignors.streams.api import TaskId, TaskSets
from kgroup.errors import ErrorCode, KafkaError
from kgroup.groups.modern import MemberState

from .group import EMPTY_TASKS, ROLES, StreamsGroupMember

_NONE: frozenset = frozenset()


class TaskOwners(Protocol):
    """Who runs each task now, by process (Kafka's StreamsGroup `currentActiveTaskProcessId`,
    `currentStandbyTaskProcessIds`, `currentWarmupTaskProcessIds`): `StreamsGroup` is one."""

    def current_active_task_process_id(self, task: TaskId) -> str | None: ...

    def current_standby_task_process_ids(self, task: TaskId) -> AbstractSet[str]: ...

    def current_warmup_task_process_ids(self, task: TaskId) -> AbstractSet[str]: ...


def still_owns_any(owned: TaskSets | None, pending: TaskSets) -> bool:
    """Whether the member still reports a task it was asked to revoke, role by role (unknown: yes)."""
    if owned is None:
        return True
    for r in ROLES:
        mine = getattr(owned, r)
        for s, ps in getattr(pending, r).items():
            if ps & mine.get(s, _NONE):
                return True
    return False


def is_unreleased(role: str, member: StreamsGroupMember, task: TaskId, owners: TaskOwners) -> bool:
    """Whether `task` cannot be handed to `member` in `role` yet (Kafka's isUnreleased*Task)."""
    process = member.process_id
    s, p = task
    mine = member.assigned

    def held_by_another(processes: AbstractSet[str], own: str) -> bool:
        return process in processes and p not in getattr(mine, own).get(s, _NONE)

    active_process = owners.current_active_task_process_id(task)
    if role == "active":
        return (active_process is not None
                or held_by_another(owners.current_standby_task_process_ids(task), "standby")
                or held_by_another(owners.current_warmup_task_process_ids(task), "warmup"))
    if role == "standby":
        return ((active_process == process and p not in mine.active.get(s, _NONE))
                or process in owners.current_standby_task_process_ids(task)
                or held_by_another(owners.current_warmup_task_process_ids(task), "warmup"))
    return (active_process == process
            or held_by_another(owners.current_standby_task_process_ids(task), "standby")
            or process in owners.current_warmup_task_process_ids(task))


def reconcile(member: StreamsGroupMember, target_epoch: int, target: TaskSets, *, owners: TaskOwners,
              owned: TaskSets | None, keep_promoted_role: bool = True) -> StreamsGroupMember:
    """The member's next state (`member` itself when it cannot move).

    `owned` is what the member reported in this heartbeat (None: not reported).
    `keep_promoted_role` False: a standby or warm-up task becoming active is revoked from its
    old role like any other (the `kip` profile, `streams_promotion_keeps_old_role`)."""
    if member.state == MemberState.STABLE:
        if member.member_epoch == target_epoch:
            return member
        return _next(member, member.member_epoch, target_epoch, target, owners, owned, keep_promoted_role)
    if member.state == MemberState.UNREVOKED_PARTITIONS:
        if still_owns_any(owned, member.pending_revocation):
            return member
        # Kafka moves on from the member epoch + 1 (it shows when more is still to revoke).
        return _next(member, member.member_epoch + 1, target_epoch, target, owners, owned, keep_promoted_role)
    if member.state == MemberState.UNRELEASED_PARTITIONS:
        return _next(member, member.member_epoch, target_epoch, target, owners, owned, keep_promoted_role)
    # UNKNOWN: written by a newer coordinator; fence unless the member reports owning nothing
    # (its recorded tasks are then reconciled as they are).
    if owned is None or not owned.is_empty:
        raise KafkaError(ErrorCode.fenced_member_epoch, "The streams group member is in a unknown state. "
                         "The member must abandon all its tasks and rejoin.")
    return _next(member, target_epoch, target_epoch, target, owners, owned, keep_promoted_role)


def _next(member: StreamsGroupMember, member_epoch: int, target_epoch: int, target: TaskSets,
          owners: TaskOwners, owned: TaskSets | None, keep_promoted_role: bool) -> StreamsGroupMember:
    current = member.assigned
    assigned: dict[str, dict[str, set[int]]] = {}
    revoking: dict[str, dict[str, set[int]]] = {}
    adding: dict[str, dict[str, set[int]]] = {}
    unreleased = False
    for r in ROLES:
        cur, tgt = getattr(current, r), getattr(target, r)
        assigned[r], revoking[r], adding[r] = {}, {}, {}
        for s in set(cur) | set(tgt):
            c, t = cur.get(s, _NONE), tgt.get(s, _NONE)
            kept = c & t
            gone = c - kept
            new = {p for p in t - kept if not is_unreleased(r, member, (s, p), owners)}
            unreleased |= len(new) != len(t - kept)
            for out, ps in ((assigned[r], kept), (revoking[r], gone), (adding[r], new)):
                if ps:
                    out[s] = set(ps)

    def take(tasks: dict[str, set[int]], s: str, p: int) -> bool:
        ps = tasks.get(s)
        if ps is None or p not in ps:
            return False
        ps.discard(p)
        if not ps:
            del tasks[s]
        return True

    # Demotion: an active task of the member that becomes standby is granted at once.
    for s, p in current.active_ids():
        if take(adding["standby"], s, p):
            assigned["standby"].setdefault(s, set()).add(p)
    # Standby <-> warm-up on the member: granted at once, the old role is not revoked.
    for old, new_role in (("standby", "warmup"), ("warmup", "standby")):
        for s, p in getattr(current, old + "_ids")():
            if take(adding[new_role], s, p):
                assigned[new_role].setdefault(s, set()).add(p)
                take(revoking[old], s, p)
    # Promotion: a standby or warm-up task becoming active is not revoked ...
    # (not under `kip`: KIP-1071's migration example revokes the old role first)
    target_active = target.active if keep_promoted_role else {}
    for r in ("standby", "warmup"):
        for s, p in getattr(current, r + "_ids")():
            if p in target_active.get(s, _NONE):
                take(revoking[r], s, p)
    pending = TaskSets(**revoking)
    must_revoke = not pending.is_empty and still_owns_any(owned, pending)
    # ... and keeps its old role until the active task is granted in this step.
    for r in ("standby", "warmup"):
        for s, p in getattr(current, r + "_ids")():
            promoted_now = not must_revoke and p in adding["active"].get(s, _NONE)
            if p in target_active.get(s, _NONE) and not promoted_now:
                assigned[r].setdefault(s, set()).add(p)

    kept_epochs = {(s, p): member.active_epoch_of((s, p)) for s, ps in assigned["active"].items() for p in ps}
    if must_revoke:
        epochs = {**kept_epochs, **{(s, p): member.active_epoch_of((s, p))
                                    for s, ps in revoking["active"].items() for p in ps}}
        return member.with_epoch(member_epoch).replace(
            state=MemberState.UNREVOKED_PARTITIONS, assigned=TaskSets(**assigned), pending_revocation=pending,
            active_epochs=epochs)
    for r in ROLES:
        for s, ps in adding[r].items():
            assigned[r].setdefault(s, set()).update(ps)
    epochs = {**kept_epochs, **{(s, p): target_epoch for s, ps in adding["active"].items() for p in ps}}
    return member.with_epoch(target_epoch).replace(
        state=MemberState.UNRELEASED_PARTITIONS if unreleased else MemberState.STABLE,
        assigned=TaskSets(**assigned), pending_revocation=EMPTY_TASKS, active_epochs=epochs)


__all__ = ["TaskOwners", "is_unreleased", "reconcile", "still_owns_any"]
