"""The range assignor against Kafka's RangeAssignorTest, plus property tests.

Kafka's server-side RangeAssignor was rewritten by KAFKA-16944 (3.9): ranges over the
members sorted with static members first; the current assignment is not used. The
expected assignments below come from RangeAssignorTest after that rewrite.
"""
from __future__ import annotations

import uuid

import pytest
from assignor_testing import (HETEROGENEOUS, HOMOGENEOUS, T1, T2, T3, assign_valid, assignment, expect, spec,
                              topics, with_current)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kgroup.assignors import (GroupSpec, MemberSubscription, PartitionAssignorException,
                              RangeAssignor, TopicMetadata)
from kgroup.assignors.range import sorted_member_ids

RANGE = RangeAssignor()


def run(group, describer):
    return assign_valid(RANGE, group, describer)


def test_one_member_no_topic():
    # testOneMemberNoTopic (Kafka: empty map; here the member maps to {}).
    assert RANGE.assign(spec(HOMOGENEOUS, {"A": ((), None)}), topics(T1=3)) == {"A": {}}


def test_one_member_subscribed_to_nonexistent_topic():
    # testOneMemberSubscribedToNonExistentTopic
    with pytest.raises(PartitionAssignorException):
        RANGE.assign(spec(HOMOGENEOUS, {"A": ((T2,), None)}), topics(T1=3))
    with pytest.raises(PartitionAssignorException):
        RANGE.assign(spec(HETEROGENEOUS, {"A": ((T1,), None), "B": ((T2,), None)}), topics(T1=3))


def test_first_assignment_two_members_two_topics_same_subscriptions():
    # testFirstAssignmentTwoMembersTwoTopicsSameSubscriptions
    group = spec(HOMOGENEOUS, {"A": ((T1, T3), None), "B": ((T1, T3), None)})
    expect(run(group, topics(T1=3, T3=2)),
           A=assignment(T1=[0, 1], T3=[0]), B=assignment(T1=[2], T3=[1]))


def test_first_assignment_three_members_three_topics_different_subscriptions():
    # testFirstAssignmentThreeMembersThreeTopicsDifferentSubscriptions
    group = spec(HETEROGENEOUS, {"A": ((T1, T2), None), "B": ((T3,), None), "C": ((T2, T3), None)})
    expect(run(group, topics(T1=3, T2=3, T3=2)),
           A=assignment(T1=[0, 1, 2], T2=[0, 1]), B=assignment(T3=[0]),
           C=assignment(T2=[2], T3=[1]))


def test_first_assignment_num_members_greater_than_num_partitions():
    # testFirstAssignmentNumMembersGreaterThanNumPartitions
    group = spec(HOMOGENEOUS, {m: ((T1, T3), None) for m in "ABC"})
    expect(run(group, topics(T1=3, T3=2)),
           A=assignment(T1=[0], T3=[0]), B=assignment(T1=[1], T3=[1]), C=assignment(T1=[2]))


def test_static_membership():
    # testStaticMembership: a static member rejoining with a new member id keeps its ranges.
    group = spec(HOMOGENEOUS, {"A": ((T1,), None), "B": ((T1,), None)},
                 instance_ids={"A": "instanceA", "B": "instanceB"})
    first = run(group, topics(T1=3))
    rejoined = GroupSpec({"B": group.members["B"],
                          "memberA1": MemberSubscription(frozenset({T1}), instance_id="instanceA")},
                         HOMOGENEOUS)
    second = run(rejoined, topics(T1=3))
    assert second["memberA1"] == first["A"] and second["B"] == first["B"]


def test_mixed_static_membership():
    # testMixedStaticMembership: static members first (by instance id), then B.
    group = spec(HOMOGENEOUS, {m: ((T1,), None) for m in "ABC"},
                 instance_ids={"A": "instanceA", "C": "instanceC"})
    first = run(group, topics(T1=5))
    expect(first, A=assignment(T1=[0, 1]), C=assignment(T1=[2, 3]), B=assignment(T1=[4]))
    rejoined = GroupSpec({"C": group.members["C"], "B": group.members["B"],
                          "memberA1": MemberSubscription(frozenset({T1}), instance_id="instanceA")},
                         HOMOGENEOUS)
    second = run(rejoined, topics(T1=5))
    assert (second["memberA1"], second["B"], second["C"]) == (first["A"], first["B"], first["C"])


def test_reassignment_num_members_greater_than_num_partitions_when_one_member_added():
    # testReassignmentNumMembersGreaterThanNumPartitionsWhenOneMemberAdded
    group = spec(HOMOGENEOUS, {
        "A": ((T1, T2), assignment(T1=[0], T2=[0])),
        "B": ((T1, T2), assignment(T1=[1], T2=[1])),
        "C": ((T1, T2), None),
    })
    expect(run(group, topics(T1=2, T2=2)),
           A=assignment(T1=[0], T2=[0]), B=assignment(T1=[1], T2=[1]), C={})


def test_reassignment_when_one_partition_added_two_members_two_topics():
    # testReassignmentWhenOnePartitionAddedForTwoMembersTwoTopics
    group = spec(HOMOGENEOUS, {
        "A": ((T1, T2), assignment(T1=[0, 1], T2=[0, 1])),
        "B": ((T1, T2), assignment(T1=[2], T2=[2])),
    })
    expect(run(group, topics(T1=4, T2=4)),
           A=assignment(T1=[0, 1], T2=[0, 1]), B=assignment(T1=[2, 3], T2=[2, 3]))


def test_reassignment_when_one_member_added_two_members_two_topics():
    # testReassignmentWhenOneMemberAddedAfterInitialAssignmentWithTwoMembersTwoTopics:
    # not sticky -- plain ranges over A, B, C.
    group = spec(HOMOGENEOUS, {
        "A": ((T1, T2), assignment(T1=[0, 1], T2=[0, 1])),
        "B": ((T1, T2), assignment(T1=[2], T2=[2])),
        "C": ((T1, T2), None),
    })
    expect(run(group, topics(T1=3, T2=3)),
           A=assignment(T1=[0], T2=[0]), B=assignment(T1=[1], T2=[1]), C=assignment(T1=[2], T2=[2]))


def test_reassignment_when_one_member_and_one_partition_added():
    # testReassignmentWhenOneMemberAddedAndOnePartitionAfterInitialAssignmentWithTwoMembersTwoTopics
    group = spec(HETEROGENEOUS, {
        "A": ((T1, T2), assignment(T1=[0, 1], T2=[0, 1])),
        "B": ((T1, T2), assignment(T1=[2], T2=[2])),
        "C": ((T1,), None),
    })
    expect(run(group, topics(T1=4, T2=3)),
           A=assignment(T1=[0, 1], T2=[0, 1]), B=assignment(T1=[2], T2=[2]), C=assignment(T1=[3]))


def test_reassignment_when_one_member_removed():
    # testReassignmentWhenOneMemberRemovedAfterInitialAssignmentWithTwoMembersTwoTopics
    group = spec(HOMOGENEOUS, {"B": ((T1, T2), assignment(T1=[2], T2=[2]))})
    expect(run(group, topics(T1=3, T2=3)), B=assignment(T1=[0, 1, 2], T2=[0, 1, 2]))


def test_reassignment_when_multiple_subscriptions_removed():
    # testReassignmentWhenMultipleSubscriptionsRemovedAfterInitialAssignmentWithThreeMembersTwoTopics
    group = spec(HETEROGENEOUS, {
        "A": ((T1,), assignment(T1=[0, 1, 2], T2=[0])),
        "B": ((T1, T2, T3), assignment(T2=[1])),
        "C": ((T2,), assignment(T2=[2], T3=[0, 1])),
    })
    expect(run(group, topics(T1=3, T2=3, T3=2)),
           A=assignment(T1=[0, 1]), B=assignment(T1=[2], T2=[0, 1], T3=[0, 1]), C=assignment(T2=[2]))


def test_sorted_member_ids_static_first():
    members = {"d": MemberSubscription(frozenset()), "a": MemberSubscription(frozenset()),
               "z": MemberSubscription(frozenset(), instance_id="i1"),
               "b": MemberSubscription(frozenset(), instance_id="i2")}
    assert sorted_member_ids(members) == ["z", "b", "a", "d"]


def test_result_keeps_the_spec_member_order():
    group = spec(HOMOGENEOUS, {m: ((T1,), None) for m in "CAB"})
    assert list(run(group, topics(T1=3))) == ["C", "A", "B"]


def test_group_without_members():
    assert RANGE.assign(GroupSpec({}, HOMOGENEOUS), topics(T1=1)) == {}


TOPIC_IDS = [uuid.uuid5(uuid.NAMESPACE_OID, f"range-topic-{i}") for i in range(5)]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.integers(0, 9), min_size=1, max_size=5), st.data())
def test_range_properties(counts, data):
    describer = TopicMetadata({TOPIC_IDS[i]: (f"t{i}", n) for i, n in enumerate(counts)})
    ids = list(describer.topics)
    members = data.draw(st.lists(st.sampled_from([f"m{i}" for i in range(8)]), min_size=1,
                                 max_size=7, unique=True))
    homogeneous = data.draw(st.booleans())
    shared = frozenset(data.draw(st.sets(st.sampled_from(ids), min_size=1)))
    group = GroupSpec({m: MemberSubscription(shared if homogeneous else
                                             frozenset(data.draw(st.sets(st.sampled_from(ids)))))
                       for m in members}, HOMOGENEOUS if homogeneous else HETEROGENEOUS)
    first = run(group, describer)
    # Deterministic, independent of the current assignment and of the member order.
    assert RANGE.assign(with_current(group, first), describer) == first
    assert RANGE.assign(with_current(group, {}, order=reversed(members)), describer) == first
    ordered = sorted_member_ids(group.members)
    for tid in ids:
        subs = [m for m in ordered if tid in group.members[m].subscribed_topic_ids]
        if not subs:
            continue
        n = describer.num_partitions(tid)
        got = [sorted(first[m].get(tid, ())) for m in subs]
        # Contiguous ranges in member order, the first n % k one longer.
        assert [p for r in got for p in r] == list(range(n))
        q, r = divmod(n, len(subs))
        assert [len(x) for x in got] == [q + 1] * r + [q] * (len(subs) - r)
    if homogeneous and len({describer.num_partitions(t) for t in shared}) == 1:
        # Co-partitioned: each member gets the same partition numbers of every topic.
        for m in members:
            assert len({first[m].get(t, frozenset()) for t in shared}) == 1
