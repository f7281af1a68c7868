"""The share-group assignor (KIP-932): Kafka's `SimpleAssignor` and the draft KIP's rule.

The draft KIP (seed 002) says the simple assignor "assigns all partitions of all subscribed
topics to all members": every member fetches from every share-partition it subscribes to
(`all_partitions=True`, profile "kip").

Kafka's `org.apache.kafka.coordinator.group.assignor.SimpleAssignor` ("simple", the
balanced version: "Balance is prioritized above stickiness") spreads the members instead
(profile "kafka"). For a homogeneous group, with `desired = ceil(partitions / members)`:

1. each member is hashed onto one partition (`abs(memberId.hashCode() % n)`), so a partition
   may go to several members and with more members than partitions every member gets one;
2. members keep partitions of their current assignment that step 1 did not hand out, while
   they hold fewer than `desired`;
3. partitions still without a member go round-robin to the members, a member taking at most
   `desired + 1` (one more allows for hash collisions).

A heterogeneous group hashes each member onto its own subscribed partitions, hands the
partitions nobody got and nobody held round-robin to each topic's subscribers, then adds the
current assignment where step 1 did not hand the partition out.

Orders follow Kafka's collections: the members in `GroupSpec.members` order (the coordinator
passes them in Java `HashMap` order), a member's subscribed topic ids as a Java
`HashSet<Uuid>` iterates them, partitions ascending.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from kgroup.javaorder import java_hash_order, java_uuid_hash
from kgroup.log.partitioner import java_string_hashcode

from .api import (GroupAssignment, GroupSpec, PartitionAssignorException, ServerAssignor,
                  SubscribedTopicDescriber, SubscriptionType, TopicId)

TopicIdPartition = tuple[TopicId, int]


def _java_rem(a: int, n: int) -> int:
    """Java's `%` on a signed int: the remainder takes the dividend's sign."""
    r = abs(a) % n
    return -r if a < 0 else r


class SimpleAssignor(ServerAssignor):
    """Kafka's share-group `SimpleAssignor`; `all_partitions=True` is the draft KIP's rule."""

    name = "simple"

    def __init__(self, all_partitions: bool = False) -> None:
        self.all_partitions = all_partitions

    def assign(self, group_spec: GroupSpec, topics: SubscribedTopicDescriber) -> GroupAssignment:
        members = list(group_spec.members)
        if not members:
            return {}
        if self.all_partitions:
            return self._assign_all(group_spec, topics)
        if group_spec.subscription_type == SubscriptionType.HOMOGENEOUS:
            return self._homogeneous(group_spec, topics)
        return self._heterogeneous(group_spec, topics)

    # -- the draft KIP: all partitions to all members -------------------------------------
    def _assign_all(self, spec: GroupSpec, topics: SubscribedTopicDescriber) -> GroupAssignment:
        out: GroupAssignment = {}
        for mid, sub in spec.members.items():
            out[mid] = {}
            for tid in sub.subscribed_topic_ids:
                n = _num_partitions(topics, tid)
                if n:
                    out[mid][tid] = frozenset(range(n))
        return out

    # -- Kafka ---------------------------------------------------------------------------
    def _homogeneous(self, spec: GroupSpec, topics: SubscribedTopicDescriber) -> GroupAssignment:
        member_ids = list(spec.members)
        subscribed = spec.members[member_ids[0]].subscribed_topic_ids
        if not subscribed:
            return {}
        targets = _target_partitions(subscribed, topics)
        desired = (len(targets) + len(member_ids) - 1) // len(member_ids)
        hashed: dict[TopicIdPartition, list[str]] = {}
        _member_hash(targets, member_ids, hashed)
        final: dict[str, set[TopicIdPartition]] = {}
        by_partition: dict[TopicIdPartition, set[str]] = {}
        for tp, holders in hashed.items():
            for m in holders:
                final.setdefault(m, set()).add(tp)
                by_partition.setdefault(tp, set()).add(m)
        for tp, holders in _current_by_partition(spec).items():
            if tp[0] not in subscribed:
                continue
            for m in holders:
                mine = final.setdefault(m, set())
                if len(mine) < desired and tp not in hashed:
                    mine.add(tp)
                    by_partition.setdefault(tp, set()).add(m)
        unassigned = [tp for tp in targets if tp not in by_partition]
        _round_robin_with_count(member_ids, unassigned, final, desired)
        return _group_assignment(final, member_ids)

    def _heterogeneous(self, spec: GroupSpec, topics: SubscribedTopicDescriber) -> GroupAssignment:
        member_ids = list(spec.members)
        by_member: dict[str, list[TopicIdPartition]] = {}
        for mid in member_ids:
            sub = spec.members[mid].subscribed_topic_ids
            if sub:
                by_member[mid] = _target_partitions(sub, topics)
        targets: dict[TopicIdPartition, None] = {}
        subscribers: dict[TopicId, dict[str, None]] = {}
        for mid, parts in by_member.items():
            for tp in parts:
                targets.setdefault(tp, None)
                subscribers.setdefault(tp[0], {}).setdefault(mid, None)
        current = _current_by_partition(spec)
        new: dict[TopicIdPartition, list[str]] = {}
        for mid, parts in by_member.items():
            _member_hash(parts, [mid], new)
        unassigned: dict[TopicId, list[TopicIdPartition]] = {}
        for tp in targets:
            if tp not in new and tp not in current:
                unassigned.setdefault(tp[0], []).append(tp)
        for tid, parts in unassigned.items():
            _round_robin(list(subscribers[tid]), parts, new)
        final: dict[str, set[TopicIdPartition]] = {}
        for tp, holders in new.items():
            for m in holders:
                final.setdefault(m, set()).add(tp)
        for tp, holders in current.items():
            for m in holders:
                if m in subscribers.get(tp[0], {}) and tp not in new:
                    final.setdefault(m, set()).add(tp)
        return _group_assignment(final, member_ids)


def _num_partitions(topics: SubscribedTopicDescriber, tid: TopicId) -> int:
    n = topics.num_partitions(tid)
    if n == -1:
        raise PartitionAssignorException(
            f"Members are subscribed to topic {tid} which doesn't exist in the topic metadata.")
    return n


def _target_partitions(topic_ids: Iterable[TopicId], topics: SubscribedTopicDescriber) -> list[TopicIdPartition]:
    """Every partition of the topics, topics in Java `HashSet<Uuid>` order (Kafka iterates one)."""
    out: list[TopicIdPartition] = []
    for tid in java_hash_order(topic_ids, java_uuid_hash):
        out += [(tid, p) for p in _assignable(topics, tid)]
    return out


def _assignable(topics: SubscribedTopicDescriber, tid: TopicId) -> Sequence[int]:
    """The partitions the assignor may give out: all of them, or only those a describer
    with `assignable_partitions` allows (Kafka: only initialized share-partitions)."""
    n = _num_partitions(topics, tid)
    allowed = getattr(topics, "assignable_partitions", None)
    if allowed is None:
        return range(n)
    return sorted(p for p in allowed(tid) if 0 <= p < n)


def _current_by_partition(spec: GroupSpec) -> dict[TopicIdPartition, list[str]]:
    """Who holds each partition now, partitions by topic (Java hash order) then number.
    (Kafka walks a `HashMap<TopicIdPartition, ...>`: the order only matters when a member
    holds more than its share, to pick which partitions it keeps.)"""
    out: dict[TopicIdPartition, list[str]] = {}
    for mid in spec.members:
        for tid, parts in spec.member_assignment(mid).items():
            for p in parts:
                out.setdefault((tid, p), []).append(mid)
    rank = {t: i for i, t in enumerate(java_hash_order({t for t, _ in out}, java_uuid_hash))}
    return {tp: out[tp] for tp in sorted(out, key=lambda tp: (rank[tp[0]], tp[1]))}


def _member_hash(targets: Sequence[TopicIdPartition], member_ids: Sequence[str],
                 assignment: dict[TopicIdPartition, list[str]]) -> None:
    """Each member to the partition its id hashes to (`Math.abs(hashCode % n)`)."""
    if not targets:
        return
    for mid in member_ids:
        tp = targets[abs(_java_rem(java_string_hashcode(mid), len(targets)))]
        assignment.setdefault(tp, []).append(mid)


def _round_robin(member_ids: Sequence[str], targets: Sequence[TopicIdPartition],
                 assignment: dict[TopicIdPartition, list[str]]) -> None:
    if not member_ids:
        return
    for i, tp in enumerate(targets):
        assignment.setdefault(tp, []).append(member_ids[i % len(member_ids)])


def _round_robin_with_count(member_ids: Sequence[str], targets: Sequence[TopicIdPartition],
                            assignment: dict[str, set[TopicIdPartition]], desired: int) -> None:
    """Round-robin where a member holding more than `desired` partitions drops out of the
    rotation and the partition goes to the next member (Kafka's `roundRobinAssignmentWithCount`)."""
    members = list(member_ids)
    i = 0
    k = 0
    while k < len(targets):
        if not members:
            raise PartitionAssignorException("Inconsistent number of member IDs")
        if i >= len(members):
            i = 0
        mid = members[i]
        mine = assignment.setdefault(mid, set())
        if len(mine) <= desired:
            mine.add(targets[k])
            k += 1
            i += 1
        else:
            members.pop(i)


def _group_assignment(by_member: Mapping[str, set[TopicIdPartition]], member_ids: Iterable[str]) -> GroupAssignment:
    out: GroupAssignment = {}
    for mid in member_ids:
        parts: dict[TopicId, set[int]] = {}
        for tid, p in by_member.get(mid, ()):
            parts.setdefault(tid, set()).add(p)
        out[mid] = {t: frozenset(ps) for t, ps in parts.items()}
    return out


__all__ = ["SimpleAssignor"]
