"""Kafka's server-side ``range`` assignor (KAFKA-16944, "Rewrite Range Assignor", 3.9+).

Contiguous ranges, topic by topic, to the topic's subscribers sorted as Kafka sorts
them: static members first by ``instance_id``, then dynamic members by member id. With
``n`` partitions and ``k`` subscribers the first ``n % k`` get ``n // k + 1`` partitions,
the others ``n // k``. When all members subscribe to the same co-partitioned topics,
every member gets the same partition numbers of every topic.

The rewrite made it deterministic rather than sticky: the current assignment is not
read (stickiness comes from static members keeping their instance ids). Topics are
not required to be co-partitioned; a subscription to an unknown topic id raises
:class:`PartitionAssignorException`, as in Kafka.
"""
from __future__ import annotations

from itertools import chain

from .api import (GroupAssignment, GroupSpec, MemberSubscription, PartitionAssignorException,
                  ServerAssignor, SubscribedTopicDescriber, SubscriptionType, TopicId, gc_paused)

__all__ = ["RangeAssignor", "sorted_member_ids"]


def sorted_member_ids(members: dict[str, MemberSubscription]) -> list[str]:
    """Kafka's ``RangeAssignor.sortMemberIds``: static members (by instance id) first."""
    static = sorted((sub.instance_id, member_id) for member_id, sub in members.items()
                    if sub.instance_id is not None)
    dynamic = sorted(member_id for member_id, sub in members.items() if sub.instance_id is None)
    return [member_id for _, member_id in static] + dynamic


def _partition_count(topics: SubscribedTopicDescriber, tid: TopicId) -> int:
    n = topics.num_partitions(tid)
    if n < 0:
        raise PartitionAssignorException("Member is subscribed to a non-existent topic")
    return n


class RangeAssignor(ServerAssignor):
    """Kafka's server-side ``RangeAssignor`` ("range")."""
    name = "range"

    def assign(self, group_spec: GroupSpec, topics: SubscribedTopicDescriber) -> GroupAssignment:
        members = group_spec.members
        if not members:
            return {}
        with gc_paused():
            ordered = sorted_member_ids(members)
            result: GroupAssignment = {member_id: {} for member_id in ordered}
            if group_spec.subscription_type is SubscriptionType.HOMOGENEOUS:
                self._homogeneous(ordered, members[ordered[0]].subscribed_topic_ids, topics, result)
            else:
                self._heterogeneous(ordered, members, topics, result)
            return {member_id: result[member_id] for member_id in members}

    @staticmethod
    def _homogeneous(ordered: list[str], subscribed: frozenset[TopicId],
                     topics: SubscribedTopicDescriber, result: GroupAssignment) -> None:
        # The ranges depend only on the partition count: compute them once per count.
        by_count: dict[int, list[TopicId]] = {}
        for tid in subscribed:
            by_count.setdefault(_partition_count(topics, tid), []).append(tid)
        for n, tids in by_count.items():
            _hand_out(ordered, n, tids, result)

    @staticmethod
    def _heterogeneous(ordered: list[str], members: dict[str, MemberSubscription],
                       topics: SubscribedTopicDescriber, result: GroupAssignment) -> None:
        # Members with the same subscription share one list (one pass over the members),
        # and topics with the same subscribers and partition count share their ranges.
        groups: dict[frozenset, list[str]] = {}
        for member_id in ordered:
            groups.setdefault(members[member_id].subscribed_topic_ids, []).append(member_id)
        per_topic: dict[TopicId, list[list[str]]] = {}
        for subs, group in groups.items():
            for tid in subs:
                per_topic.setdefault(tid, []).append(group)
        position = {member_id: i for i, member_id in enumerate(ordered)} if len(groups) > 1 else {}
        alike: dict[tuple[int, int], tuple[list[str], list[TopicId]]] = {}
        lists: dict[tuple[int, ...], list[str]] = {}
        for tid, sharing in per_topic.items():
            n = _partition_count(topics, tid)
            if len(sharing) == 1:
                subscribers = sharing[0]
            else:
                key = tuple(map(id, sharing))
                subscribers = lists.get(key)
                if subscribers is None:
                    subscribers = lists[key] = sorted(chain.from_iterable(sharing),
                                                      key=position.__getitem__)
            entry = alike.get((id(subscribers), n))
            if entry is None:
                alike[(id(subscribers), n)] = (subscribers, [tid])
            else:
                entry[1].append(tid)
        for (_, n), (subscribers, tids) in alike.items():
            _hand_out(subscribers, n, tids, result)


def _hand_out(subscribers: list[str], n: int, tids: list[TopicId], result: GroupAssignment) -> None:
    """Ranges of ``n`` partitions to ``subscribers``, the same for every topic of ``tids``.

    ``dict.fromkeys`` of a set reuses the set's stored hashes: no ``UUID.__hash__`` calls.
    """
    quota, extra = divmod(n, len(subscribers))
    keys: frozenset[TopicId] | list[TopicId] = frozenset(tids) if len(tids) > 1 else tids
    start = 0
    for index, member_id in enumerate(subscribers):
        size = quota + 1 if index < extra else quota
        if not size:
            break
        partitions = frozenset(range(start, start + size))
        start += size
        d = result[member_id]
        if d:
            d.update(dict.fromkeys(keys, partitions))
        else:
            result[member_id] = dict.fromkeys(keys, partitions)
