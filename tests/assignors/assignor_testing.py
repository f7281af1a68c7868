"""Helpers for the assignor tests: Kafka's test topic ids, spec builders, checks."""
from __future__ import annotations

import base64
import uuid
from collections.abc import Iterable, Mapping

from kgroup.assignors import (GroupAssignment, GroupSpec, MemberSubscription, SubscriptionType,
                              TopicMetadata)


def kafka_uuid(text: str) -> uuid.UUID:
    """A Kafka ``Uuid.fromString`` (URL-safe base64, no padding) as a ``uuid.UUID``."""
    return uuid.UUID(bytes=base64.urlsafe_b64decode(text + "=="))


# The fixed topic ids of Kafka's UniformHomogeneous/HeterogeneousAssignmentBuilderTest:
# the homogeneous builder's output depends on their Java hash order.
T1 = kafka_uuid("T1-A4s3VTwiI5CTbEp6POw")
T2 = kafka_uuid("T2-B4s3VTwiI5YHbPp6YUe")
T3 = kafka_uuid("T3-CU8fVTLCz5YMkLoDQsa")
T4 = kafka_uuid("T4-Tw9fVTLCz5HbPp6YQsa")
NAMES = {T1: "T1", T2: "T2", T3: "T3", T4: "T4"}

HOMOGENEOUS = SubscriptionType.HOMOGENEOUS
HETEROGENEOUS = SubscriptionType.HETEROGENEOUS


def topics(**counts: int) -> TopicMetadata:
    """``topics(T1=3, T3=2)`` -> a describer for the named test topics."""
    ids = {"T1": T1, "T2": T2, "T3": T3, "T4": T4}
    return TopicMetadata({ids[name]: (name, n) for name, n in counts.items()})


def assignment(**per_topic: Iterable[int]) -> dict[uuid.UUID, frozenset[int]]:
    """Kafka's ``mkAssignment(mkTopicAssignment(...))``: ``assignment(T1=[0, 1], T2=[2])``."""
    ids = {"T1": T1, "T2": T2, "T3": T3, "T4": T4}
    return {ids[name]: frozenset(parts) for name, parts in per_topic.items()}


def spec(subscription_type: SubscriptionType,
         members: Mapping[str, tuple[Iterable[uuid.UUID], Mapping | None]],
         instance_ids: Mapping[str, str] | None = None) -> GroupSpec:
    """A GroupSpec from ``{member: (subscribed topic ids, current assignment or None)}``.

    Members keep the given order (Kafka's tests use a TreeMap: pass them sorted).
    """
    instance_ids = instance_ids or {}
    subs = {m: MemberSubscription(frozenset(t), instance_id=instance_ids.get(m))
            for m, (t, _) in members.items()}
    current = {m: dict(cur) for m, (_, cur) in members.items() if cur}
    return GroupSpec(subs, subscription_type, current)


def readable(result: GroupAssignment) -> dict[str, dict[str, list[int]]]:
    """Test topic ids by name, partitions sorted: for readable assertion failures."""
    return {m: {NAMES.get(t, str(t)): sorted(p) for t, p in sorted(d.items(), key=lambda kv: str(kv[0]))}
            for m, d in result.items()}


def check_valid(group: GroupSpec, describer: TopicMetadata, result: GroupAssignment) -> None:
    """Every partition of every subscribed topic assigned exactly once, to a subscriber."""
    assert set(result) == set(group.members)
    owner: dict[tuple[uuid.UUID, int], str] = {}
    for member_id, per_topic in result.items():
        subscribed = group.members[member_id].subscribed_topic_ids
        for tid, parts in per_topic.items():
            assert isinstance(parts, frozenset)
            assert parts, f"{member_id} has an empty entry for {tid}"
            assert tid in subscribed, f"{member_id} got {tid} it does not subscribe to"
            n = describer.num_partitions(tid)
            for p in parts:
                assert 0 <= p < n
                assert (tid, p) not in owner, f"{tid}-{p} owned by {owner[(tid, p)]} and {member_id}"
                owner[(tid, p)] = member_id
    wanted = set()
    for sub in group.members.values():
        wanted |= sub.subscribed_topic_ids
    for tid in wanted:
        for p in range(describer.num_partitions(tid)):
            assert (tid, p) in owner, f"{tid}-{p} unassigned"


def assign_valid(assignor, group: GroupSpec, describer: TopicMetadata) -> GroupAssignment:
    """`assignor`'s assignment of `group`, checked valid (`check_valid`)."""
    result = assignor.assign(group, describer)
    check_valid(group, describer, result)
    return result


def expect(result: GroupAssignment, **members) -> None:
    """`result` is `members` ({member: {topic id: partitions}}), compared by `readable`."""
    assert readable(result) == readable(members)


def sizes(result: GroupAssignment) -> dict[str, int]:
    return {m: sum(map(len, d.values())) for m, d in result.items()}


def check_balanced(result: GroupAssignment) -> None:
    """Kafka's checkValidityAndBalance balance part: sizes differ by at most one."""
    counts = sizes(result).values()
    assert max(counts) - min(counts) <= 1, sorted(counts)


def with_current(group: GroupSpec, current: GroupAssignment, *, order: Iterable[str] | None = None,
                 drop: Iterable[str] = (), add: Mapping[str, MemberSubscription] | None = None
                 ) -> GroupSpec:
    """The next epoch's spec: ``current`` as current assignment, members reordered/removed/added."""
    order = list(order) if order is not None else list(group.members)
    dropped = set(drop)
    members = {m: group.members[m] for m in order if m not in dropped}
    members.update(add or {})
    return GroupSpec(members, group.subscription_type,
                     {m: a for m, a in current.items() if m in members})
