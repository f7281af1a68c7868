"""Reconciliation: move one member from its current assignment towards its target (KIP-848).

A partition goes to its new owner only after the old owner has confirmed its revocation
(it stops listing it in `TopicPartitions`). Kafka's `CurrentAssignmentBuilder`:

- STABLE: when a newer target epoch exists, compute the next step;
- UNREVOKED_PARTITIONS: wait until none of the partitions pending revocation is still
  owned, then compute the next step;
- UNRELEASED_PARTITIONS: at the target epoch, waiting for partitions other members still
  hold; each heartbeat picks up the ones released since;
- UNKNOWN: fence unless the member owns nothing.

The next step keeps `current ∩ target`, asks to revoke `current − target` (member stays in
its epoch), or else moves to the target epoch with `target` minus what others still own.
"""
from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Mapping

from kgroup.errors import ErrorCode, KafkaError
from kgroup.groups.modern import Assignment, EpochAssignment, MemberState

from .group import ConsumerGroupMember

#: (topic id, partition) -> the epoch of its current owner, or -1
PartitionEpochs = Callable[[uuid.UUID, int], int]
#: what the member says it owns: topic id -> partitions (None: not sent in this heartbeat)
Owned = Mapping[uuid.UUID, Iterable[int]] | None


def _owns_any(owned: Owned, pending: EpochAssignment) -> bool:
    if owned is None:
        return True  # unknown: assume it still owns them
    for tid, parts in owned.items():
        pend = pending.get(tid)
        if pend and any(p in pend for p in parts):
            return True
    return False


def reconcile(member: ConsumerGroupMember, target_epoch: int, target: Assignment, *,
              partition_epoch: PartitionEpochs, owned: Owned, subscribed_topic_ids: frozenset[uuid.UUID],
              enforce_subscription: bool = False) -> ConsumerGroupMember:
    """The member's next state (or `member` itself when it cannot move)."""
    state = member.state
    if state == MemberState.STABLE:
        if member.member_epoch != target_epoch:
            return _next(member, member.member_epoch, target_epoch, target, partition_epoch, owned, subscribed_topic_ids)
        if enforce_subscription:
            return _drop_unsubscribed(member, owned, subscribed_topic_ids)
        return member
    if state == MemberState.UNREVOKED_PARTITIONS:
        if _owns_any(owned, member.partitions_pending_revocation):
            return _drop_unsubscribed(member, owned, subscribed_topic_ids) if enforce_subscription else member
        return _next(member, member.member_epoch, target_epoch, target, partition_epoch, owned, subscribed_topic_ids)
    if state == MemberState.UNRELEASED_PARTITIONS:
        return _next(member, member.member_epoch, target_epoch, target, partition_epoch, owned, subscribed_topic_ids)
    # UNKNOWN: a state written by a newer coordinator; start again from nothing.
    if owned is None or any(list(ps) for ps in owned.values()):
        raise KafkaError(ErrorCode.fenced_member_epoch, "The consumer group member is in a unknown state. "
                         "The member must abandon all its partitions and rejoin.")
    return _next(member, target_epoch, target_epoch, target, partition_epoch, owned, subscribed_topic_ids)


def _drop_unsubscribed(member: ConsumerGroupMember, owned: Owned,
                       subscribed: frozenset[uuid.UUID]) -> ConsumerGroupMember:
    """Kafka's `updateCurrentAssignment`: topics no longer subscribed are revoked at once."""
    assigned = member.assigned_partitions
    if not subscribed and not member.partitions_pending_revocation:
        new_assigned: EpochAssignment = {}
        new_pending = assigned
    else:
        gone = [t for t in assigned if t not in subscribed]
        if not gone:
            return member
        new_assigned = {t: ps for t, ps in assigned.items() if t in subscribed}
        new_pending = {t: dict(ps) for t, ps in member.partitions_pending_revocation.items()}
        for t in gone:
            new_pending.setdefault(t, {}).update(assigned[t])
    if new_assigned == assigned:
        return member
    if new_pending and _owns_any(owned, new_pending):
        return member.with_epoch(member.member_epoch).replace(
            state=MemberState.UNREVOKED_PARTITIONS, assigned_partitions=new_assigned,
            partitions_pending_revocation=new_pending)
    return member.with_epoch(member.member_epoch).replace(assigned_partitions=new_assigned)


def _next(member: ConsumerGroupMember, member_epoch: int, target_epoch: int, target: Assignment,
          partition_epoch: PartitionEpochs, owned: Owned, subscribed: frozenset[uuid.UUID]) -> ConsumerGroupMember:
    """Kafka's `computeNextAssignment`."""
    unreleased = False
    new_assigned: EpochAssignment = {}
    new_pending: EpochAssignment = {}
    to_assign: dict[uuid.UUID, set[int]] = {}
    pending_before = member.partitions_pending_revocation
    for tid in set(target) | set(member.assigned_partitions):
        wanted = target.get(tid, frozenset()) if tid in subscribed else frozenset()
        current = member.assigned_partitions.get(tid, {})
        kept = {p: e for p, e in current.items() if p in wanted}
        revoking = {p: e for p, e in current.items() if p not in wanted}
        adding = set(wanted) - kept.keys()
        held_elsewhere = {p for p in adding
                          if partition_epoch(tid, p) != -1 and p not in pending_before.get(tid, {})}
        if held_elsewhere:
            unreleased = True
            adding -= held_elsewhere
        if kept:
            new_assigned[tid] = kept
        if revoking:
            new_pending[tid] = revoking
        if adding:
            to_assign[tid] = adding

    if new_pending and _owns_any(owned, new_pending):
        # Revoke first: the member stays in its epoch until it confirms.
        return member.with_epoch(member_epoch).replace(
            state=MemberState.UNREVOKED_PARTITIONS, assigned_partitions=new_assigned,
            partitions_pending_revocation=new_pending)
    for tid, parts in to_assign.items():
        new_assigned.setdefault(tid, {}).update({p: target_epoch for p in parts})
    return member.with_epoch(target_epoch).replace(
        state=MemberState.UNRELEASED_PARTITIONS if unreleased else MemberState.STABLE,
        assigned_partitions=new_assigned, partitions_pending_revocation={})


__all__ = ["reconcile"]
