"""The uniform assignor against Kafka's own tests, plus property tests.

Kafka test classes reproduced (apache/kafka, group-coordinator/src/test/java/org/apache/
kafka/coordinator/group/assignor/): UniformHomogeneousAssignmentBuilderTest,
UniformHeterogeneousAssignmentBuilderTest and CommonAssignorTests. Kafka's tests put
members in a TreeMap (or sort them), so members are given sorted here.
"""
from __future__ import annotations

import itertools
import uuid

import pytest
from assignor_testing import (HETEROGENEOUS, HOMOGENEOUS, T1, T2, T3, T4, assign_valid, assignment,
                              check_balanced, expect, readable, sizes, spec, topics, with_current)
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from kgroup.assignors import (GroupSpec, MemberSubscription, PartitionAssignorException,
                              TopicMetadata, UniformAssignor, java_hashset_order)

UNIFORM = UniformAssignor()


def run(group: GroupSpec, describer: TopicMetadata):
    return assign_valid(UNIFORM, group, describer)


# --------------------------------------------------------------------------------------
# Java hash order of Kafka's test topic ids
# --------------------------------------------------------------------------------------

def test_java_hashset_order_of_kafka_test_topic_ids():
    # Uuid.hashCode spread into a 16-bucket table: T2 -> 1, T4 -> 5, T3 -> 9, T1 -> 10.
    assert java_hashset_order([T1, T2, T3, T4]) == [T2, T4, T3, T1]
    assert java_hashset_order({T1, T3}) == [T3, T1]


def test_java_hashset_order_grows_the_table():
    ids = [uuid.uuid5(uuid.NAMESPACE_OID, f"topic-{i}") for i in range(1, 40)]
    ordered = java_hashset_order(ids)
    assert sorted(ordered) == sorted(ids) and len(ordered) == 39


# --------------------------------------------------------------------------------------
# UniformHomogeneousAssignmentBuilderTest
# --------------------------------------------------------------------------------------

def test_one_member_no_topic_subscription():
    # testOneMemberNoTopicSubscription (Kafka returns an empty map; here the member maps to {}).
    result = UNIFORM.assign(spec(HOMOGENEOUS, {"A": ((), None)}), topics(T1=3))
    assert result == {"A": {}}


def test_one_member_subscribed_to_nonexistent_topic():
    # testOneMemberSubscribedToNonexistentTopic
    with pytest.raises(PartitionAssignorException):
        UNIFORM.assign(spec(HOMOGENEOUS, {"A": ((T2,), None)}), topics(T1=3))


def test_first_assignment_two_members_two_topics_no_member_racks():
    # testFirstAssignmentTwoMembersTwoTopicsNoMemberRacks: T3 comes first in the Java
    # HashSet, and the extra partition goes to the last member (KAFKA-18688).
    group = spec(HOMOGENEOUS, {"A": ((T1, T3), None), "B": ((T1, T3), None)})
    result = run(group, topics(T1=3, T3=2))
    expect(result, A=assignment(T3=[0, 1]), B=assignment(T1=[0, 1, 2]))
    check_balanced(result)


def test_first_assignment_num_members_greater_than_total_num_partitions():
    # testFirstAssignmentNumMembersGreaterThanTotalNumPartitions
    group = spec(HOMOGENEOUS, {m: ((T3,), None) for m in "ABC"})
    result = run(group, topics(T3=2))
    expect(result, A={}, B=assignment(T3=[0]), C=assignment(T3=[1]))


def test_validity_and_balance_for_large_sample_set():
    # testValidityAndBalanceForLargeSampleSet: 100 topics x 3 partitions, 49 members.
    ids = [uuid.uuid5(uuid.NAMESPACE_OID, f"topic-{i}") for i in range(1, 101)]
    describer = TopicMetadata({t: (f"topic-{i}", 3) for i, t in enumerate(ids)})
    members = {f"member{i}": MemberSubscription(frozenset(ids)) for i in sorted(range(1, 50), key=str)}
    result = run(GroupSpec(members, HOMOGENEOUS), describer)
    check_balanced(result)


def test_reassignment_two_members_two_topics_unbalanced_prev_assignment():
    # testReassignmentForTwoMembersTwoTopicsGivenUnbalancedPrevAssignment (ordered maps).
    group = spec(HOMOGENEOUS, {
        "A": ((T1, T2), assignment(T1=[0, 1], T2=[0, 1])),
        "B": ((T1, T2), assignment(T1=[2], T2=[2])),
    })
    result = run(group, topics(T1=3, T2=3))
    expect(result, A=assignment(T1=[0, 1], T2=[0]), B=assignment(T1=[2], T2=[1, 2]))


def test_reassignment_when_partitions_are_added_two_members_two_topics():
    # testReassignmentWhenPartitionsAreAddedForTwoMembersTwoTopics
    group = spec(HOMOGENEOUS, {
        "A": ((T1, T2), assignment(T1=[0, 2], T2=[0])),
        "B": ((T1, T2), assignment(T1=[1], T2=[1, 2])),
    })
    result = run(group, topics(T1=6, T2=5))
    expect(result, A=assignment(T1=[0, 2], T2=[0, 3, 4]), B=assignment(T1=[1, 3, 4, 5], T2=[1, 2]))


def test_reassignment_when_one_member_added_two_members_two_topics():
    # testReassignmentWhenOneMemberAddedAfterInitialAssignmentWithTwoMembersTwoTopics
    group = spec(HOMOGENEOUS, {
        "A": ((T1, T2), assignment(T1=[0, 2], T2=[0])),
        "B": ((T1, T2), assignment(T1=[1], T2=[1, 2])),
        "C": ((T1, T2), None),
    })
    result = run(group, topics(T1=3, T2=3))
    expect(result, A=assignment(T1=[0, 2]), B=assignment(T1=[1], T2=[1]), C=assignment(T2=[0, 2]))


def test_reassignment_when_one_member_removed_three_members_two_topics():
    # testReassignmentWhenOneMemberRemovedAfterInitialAssignmentWithThreeMembersTwoTopics
    group = spec(HOMOGENEOUS, {
        "A": ((T1, T2), assignment(T1=[0], T2=[0])),
        "B": ((T1, T2), assignment(T1=[1], T2=[1])),
    })
    result = run(group, topics(T1=3, T2=3))
    expect(result, A=assignment(T1=[0], T2=[0, 2]), B=assignment(T1=[1, 2], T2=[1]))


def test_reassignment_when_one_subscription_removed_two_members_two_topics():
    # testReassignmentWhenOneSubscriptionRemovedAfterInitialAssignmentWithTwoMembersTwoTopics
    group = spec(HOMOGENEOUS, {
        "A": ((T2,), assignment(T1=[0], T2=[0])),
        "B": ((T2,), assignment(T1=[1], T2=[1])),
    })
    result = run(group, topics(T1=2, T2=2))
    expect(result, A=assignment(T2=[0]), B=assignment(T2=[1]))


# --------------------------------------------------------------------------------------
# UniformHeterogeneousAssignmentBuilderTest
# --------------------------------------------------------------------------------------

def test_two_members_no_topic_subscription():
    # testTwoMembersNoTopicSubscription
    result = UNIFORM.assign(spec(HETEROGENEOUS, {"A": ((), None), "B": ((), None)}), topics(T1=3))
    assert result == {"A": {}, "B": {}}


def test_two_members_subscribed_to_nonexistent_topics():
    # testTwoMembersSubscribedToNonexistentTopics
    with pytest.raises(PartitionAssignorException):
        UNIFORM.assign(spec(HETEROGENEOUS, {"A": ((T3,), None), "B": ((T2,), None)}), topics(T1=3))


def test_heterogeneous_first_assignment_two_members_two_topics():
    # testFirstAssignmentTwoMembersTwoTopics
    group = spec(HETEROGENEOUS, {"A": ((T1, T3), None), "B": ((T3,), None)})
    result = run(group, topics(T1=3, T3=6))
    expect(result, A=assignment(T1=[0, 1, 2], T3=[4]), B=assignment(T3=[0, 1, 2, 3, 5]))


def test_heterogeneous_first_assignment_num_members_greater_than_partitions():
    # testFirstAssignmentNumMembersGreaterThanTotalNumPartitions
    group = spec(HETEROGENEOUS, {"A": ((T3,), None), "B": ((T3,), None), "C": ((T1,), None)})
    result = run(group, topics(T3=1, T1=2))
    expect(result, A=assignment(T3=[0]), B={}, C=assignment(T1=[0, 1]))


def test_heterogeneous_reassignment_two_members_three_topics_unbalanced():
    # testReassignmentForTwoMembersThreeTopicsGivenUnbalancedPrevAssignment
    group = spec(HETEROGENEOUS, {
        "A": ((T1,), assignment(T1=[0, 1, 2])),
        "B": ((T1, T2), assignment(T1=[3], T2=[0])),
        "C": ((T1, T2, T3), assignment(T1=[4, 5], T2=[1, 2, 3], T3=[0, 1, 2, 3])),
    })
    result = run(group, topics(T1=6, T2=4, T3=4))
    expect(result, A=assignment(T1=[0, 1, 2, 5]), B=assignment(T1=[3], T2=[0, 1, 2, 3]),
           C=assignment(T1=[4], T3=[0, 1, 2, 3]))


def test_heterogeneous_reassignment_when_partitions_are_added():
    # testReassignmentWhenPartitionsAreAddedForTwoMembers
    group = spec(HETEROGENEOUS, {
        "A": ((T1, T3), assignment(T1=[0, 1, 2, 3], T3=[0, 1])),
        "B": ((T1, T2, T3, T4), assignment(T2=[0, 1, 2], T4=[0, 1, 2])),
    })
    result = run(group, topics(T1=6, T2=5, T3=3, T4=3))
    expect(result, A=assignment(T1=[0, 1, 2, 3, 4, 5], T3=[0, 1, 2]),
           B=assignment(T2=[0, 1, 2, 3, 4], T4=[0, 1, 2]))


def test_heterogeneous_reassignment_member_and_partitions_added():
    # testReassignmentWhenOneMemberAddedAndPartitionsAddedTwoMembersTwoTopics
    group = spec(HETEROGENEOUS, {
        "A": ((T1,), assignment(T1=[0, 2], T2=[0])),
        "B": ((T1, T2), assignment(T1=[1], T2=[1, 2])),
        "C": ((T1, T2), None),
    })
    result = run(group, topics(T1=6, T2=7))
    expect(result, A=assignment(T1=[0, 2, 3, 4, 5]), B=assignment(T1=[1], T2=[1, 2, 6]),
           C=assignment(T2=[0, 3, 4, 5]))


def test_heterogeneous_reassignment_member_removed_three_topics():
    # testReassignmentWhenOneMemberRemovedAfterInitialAssignmentWithThreeMembersThreeTopics
    group = spec(HETEROGENEOUS, {
        "A": ((T1, T3), assignment(T1=[0, 1, 2], T3=[0, 1])),
        "B": ((T2,), assignment(T2=[3, 4, 5, 6])),
    })
    result = run(group, topics(T1=3, T2=8, T3=3))
    expect(result, A=assignment(T1=[0, 1, 2], T3=[0, 1, 2]), B=assignment(T2=list(range(8))))


def test_heterogeneous_reassignment_subscription_removed():
    # testReassignmentWhenOneSubscriptionRemovedAfterInitialAssignmentWithTwoMembersTwoTopics
    group = spec(HETEROGENEOUS, {
        "A": ((T1,), assignment(T1=[0, 2], T2=[1, 3])),
        "B": ((T1, T2), assignment(T1=[1], T2=[0, 2, 4])),
    })
    result = run(group, topics(T1=3, T2=5))
    expect(result, A=assignment(T1=[0, 1, 2]), B=assignment(T2=[0, 1, 2, 3, 4]))


def test_heterogeneous_partitions_run_out_and_members_have_none():
    # testReassignmentWhenTopicPartitionsRunOutAndMembersHaveNoPartitions
    group = spec(HETEROGENEOUS, {
        "A": ((T1, T2, T3), assignment(T1=[0, 1], T2=[0, 1], T3=[0, 1])),
        "B": ((T1, T2, T3), None),
    })
    result = run(group, topics(T1=2, T2=2, T3=2))
    expect(result, A=assignment(T2=[0], T3=[0, 1]), B=assignment(T1=[0, 1], T2=[1]))


def test_heterogeneous_first_assignment_one_member_without_subscriptions():
    # testFirstAssignmentWithTwoMembersIncludingOneWithoutSubscriptions
    group = spec(HETEROGENEOUS, {"A": ((T1,), None), "B": ((), None)})
    result = run(group, topics(T1=3))
    expect(result, A=assignment(T1=[0, 1, 2]), B={})


# --------------------------------------------------------------------------------------
# CommonAssignorTests
# --------------------------------------------------------------------------------------

COMMON_TOPICS = topics(T1=2, T2=5, T3=7)


@pytest.mark.parametrize("subscription_type", [HOMOGENEOUS, HETEROGENEOUS])
def test_assignment_reuse(subscription_type):
    # CommonAssignorTests.testAssignmentReuse: unchanged assignments come back as the
    # very objects passed in.
    group = spec(subscription_type, {m: ((T1, T2, T3), None) for m in "ABC"})
    first = run(group, COMMON_TOPICS)
    second = UNIFORM.assign(with_current(group, first), COMMON_TOPICS)
    for member_id in "ABC":
        assert second[member_id] is first[member_id]


@pytest.mark.parametrize("subscription_type", [HOMOGENEOUS, HETEROGENEOUS])
def test_reassignment_stickiness_any_member_order(subscription_type):
    # CommonAssignorTests.testReassignmentStickiness: the same result for every member order.
    group = spec(subscription_type, {m: ((T1, T2, T3), None) for m in "ABC"})
    first = run(group, COMMON_TOPICS)
    for order in itertools.permutations("ABC"):
        again = UNIFORM.assign(with_current(group, first, order=order), COMMON_TOPICS)
        assert readable(again) == readable(first), order


def test_homogeneous_static_member_replacement_keeps_assignment():
    # The coordinator hands a replacing static member its predecessor's assignment
    # (TargetAssignmentBuilder); the new member id sorts elsewhere, nothing moves.
    group = spec(HOMOGENEOUS, {m: ((T1, T2, T3), None) for m in "ABC"})
    first = run(group, COMMON_TOPICS)
    replaced = GroupSpec({"B": group.members["B"], "C": group.members["C"], "Z": group.members["A"]},
                         HOMOGENEOUS, {"B": first["B"], "C": first["C"], "Z": first["A"]})
    again = UNIFORM.assign(replaced, COMMON_TOPICS)
    assert again["Z"] == first["A"] and again["B"] == first["B"] and again["C"] == first["C"]


# --------------------------------------------------------------------------------------
# Beyond Kafka's tests
# --------------------------------------------------------------------------------------

def test_group_without_members():
    assert UNIFORM.assign(GroupSpec({}, HOMOGENEOUS), topics(T1=3)) == {}
    assert UNIFORM.assign(GroupSpec({}, HETEROGENEOUS), topics(T1=3)) == {}


@pytest.mark.parametrize("subscription_type", [HOMOGENEOUS, HETEROGENEOUS])
def test_partitions_outside_the_partition_count_are_dropped(subscription_type):
    group = spec(subscription_type, {
        "A": ((T1,), assignment(T1=[0, 5])),
        "B": ((T1,), assignment(T1=[1, 9, -1])),
    })
    result = run(group, topics(T1=3))
    check_balanced(result)
    assert result["A"][T1] >= {0} and result["B"][T1] >= {1}


@pytest.mark.parametrize("subscription_type", [HOMOGENEOUS, HETEROGENEOUS])
def test_current_assignment_as_sets_or_lists(subscription_type):
    group = GroupSpec({"A": MemberSubscription(frozenset({T1})), "B": MemberSubscription(frozenset({T1}))},
                      subscription_type, {"A": {T1: {0, 1}}, "B": {T1: [2, 3]}})
    result = run(group, topics(T1=4))
    expect(result, A=assignment(T1=[0, 1]), B=assignment(T1=[2, 3]))


def test_heterogeneous_partition_held_twice_stays_with_first_member():
    group = spec(HETEROGENEOUS, {"A": ((T1,), assignment(T1=[0, 1])), "B": ((T1, T2), assignment(T1=[1]))})
    result = run(group, topics(T1=2, T2=2))
    assert 1 in result["A"][T1]


def test_homogeneous_keeps_partitions_of_departed_members_assignable():
    # A current assignment of a member no longer in the group is ignored.
    group = GroupSpec({"A": MemberSubscription(frozenset({T1}))}, HOMOGENEOUS,
                      {"A": assignment(T1=[0]), "gone": assignment(T1=[1, 2])})
    expect(run(group, topics(T1=3)), A=assignment(T1=[0, 1, 2]))


def test_homogeneous_extra_partitions_go_to_the_last_members_below_quota():
    # KAFKA-18688: members that already hold min + 1 keep it, whatever their position.
    group = spec(HOMOGENEOUS, {
        "A": ((T1,), assignment(T1=[0])),
        "B": ((T1,), assignment(T1=[1])),
        "C": ((T1,), assignment(T1=[2, 3])),
        "D": ((T1,), None),
    })
    result = run(group, topics(T1=5))
    expect(result, A=assignment(T1=[0]), B=assignment(T1=[1]), C=assignment(T1=[2, 3]),
           D=assignment(T1=[4]))


# --------------------------------------------------------------------------------------
# Properties
# --------------------------------------------------------------------------------------

TOPIC_IDS = [uuid.uuid5(uuid.NAMESPACE_OID, f"prop-topic-{i}") for i in range(6)]
MEMBER_IDS = [f"m{i}" for i in range(9)]
PROPS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def homogeneous_groups(draw):
    counts = draw(st.lists(st.integers(0, 12), min_size=1, max_size=5))
    describer = TopicMetadata({TOPIC_IDS[i]: (f"t{i}", n) for i, n in enumerate(counts)})
    subscribed = frozenset(draw(st.sets(st.sampled_from(list(describer.topics)), min_size=1)))
    members = draw(st.lists(st.sampled_from(MEMBER_IDS), min_size=1, max_size=8, unique=True))
    group = GroupSpec({m: MemberSubscription(subscribed) for m in members}, HOMOGENEOUS)
    return group, describer


@st.composite
def heterogeneous_groups(draw):
    counts = draw(st.lists(st.integers(0, 10), min_size=1, max_size=5))
    describer = TopicMetadata({TOPIC_IDS[i]: (f"t{i}", n) for i, n in enumerate(counts)})
    ids = list(describer.topics)
    members = draw(st.lists(st.sampled_from(MEMBER_IDS), min_size=1, max_size=8, unique=True))
    group = GroupSpec({m: MemberSubscription(frozenset(draw(st.sets(st.sampled_from(ids)))))
                       for m in members}, HETEROGENEOUS)
    return group, describer


@st.composite
def bucketed_groups(draw):
    """Members in buckets; each bucket subscribes to its own topics (Kafka's benchmark shape)."""
    buckets = draw(st.integers(1, 3))
    counts = draw(st.lists(st.integers(0, 9), min_size=buckets, max_size=6))
    describer = TopicMetadata({TOPIC_IDS[i]: (f"t{i}", n) for i, n in enumerate(counts)})
    ids = list(describer.topics)
    members = draw(st.lists(st.sampled_from(MEMBER_IDS), min_size=buckets, max_size=8, unique=True))
    subs = {m: MemberSubscription(frozenset(ids[b::buckets])) for b in range(buckets)
            for m in members[b::buckets]}
    return GroupSpec(subs, HETEROGENEOUS), describer


def _subscribers_balanced(group, result):
    """Per topic, no subscriber holding one of its partitions has 2+ more than another subscriber."""
    count = sizes(result)
    for tid in set().union(*(s.subscribed_topic_ids for s in group.members.values())):
        subs = [m for m, s in group.members.items() if tid in s.subscribed_topic_ids]
        low = min(count[m] for m in subs)
        for m in subs:
            if tid in result[m]:
                assert count[m] - low <= 1, (m, tid, count)


@PROPS
@given(homogeneous_groups())
def test_homogeneous_properties(case):
    group, describer = case
    first = run(group, describer)
    check_balanced(first)
    # Sticky: the output as current assignment is a fixed point, in any member order.
    again = UNIFORM.assign(with_current(group, first), describer)
    assert again == first
    reverse = UNIFORM.assign(with_current(group, first, order=reversed(list(group.members))), describer)
    assert reverse == first


@PROPS
@given(homogeneous_groups(), st.data())
def test_homogeneous_member_leaves(case, data):
    group, describer = case
    assume(len(group.members) >= 2)
    first = run(group, describer)
    gone = data.draw(st.sampled_from(list(group.members)))
    after = run(with_current(group, first, drop=[gone]), describer)
    check_balanced(after)
    # Only the leaver's partitions move: every survivor keeps all it had.
    for member_id, per_topic in after.items():
        for tid, parts in first[member_id].items():
            assert parts <= per_topic.get(tid, frozenset()), member_id


@PROPS
@given(homogeneous_groups())
def test_homogeneous_member_joins(case):
    group, describer = case
    first = run(group, describer)
    newcomer = next(m for m in MEMBER_IDS if m not in group.members)
    joined = with_current(group, first, add={newcomer: next(iter(group.members.values()))})
    after = run(joined, describer)
    check_balanced(after)
    # Old members only give partitions up, and only what the newcomer takes.
    moved = 0
    for member_id in group.members:
        for tid, parts in after[member_id].items():
            assert parts <= first[member_id].get(tid, frozenset())
        moved += sizes(first)[member_id] - sizes(after)[member_id]
    assert moved == sizes(after)[newcomer]


@PROPS
@given(heterogeneous_groups())
def test_heterogeneous_properties(case):
    group, describer = case
    first = run(group, describer)
    _subscribers_balanced(group, first)
    again = UNIFORM.assign(with_current(group, first), describer)
    assert again == first


@PROPS
@given(heterogeneous_groups(), st.data())
def test_heterogeneous_membership_churn_stays_valid(case, data):
    group, describer = case
    first = run(group, describer)
    gone = data.draw(st.sampled_from(list(group.members)))
    after = run(with_current(group, first, drop=[gone]), describer)
    _subscribers_balanced(GroupSpec({m: s for m, s in group.members.items() if m != gone},
                                    HETEROGENEOUS), after)


@PROPS
@given(bucketed_groups(), st.data())
def test_bucketed_heterogeneous_member_leaves(case, data):
    group, describer = case
    first = run(group, describer)
    # Within a bucket every member is balanced with the others.
    by_bucket: dict[frozenset, list[int]] = {}
    for member_id, sub in group.members.items():
        by_bucket.setdefault(sub.subscribed_topic_ids, []).append(sizes(first)[member_id])
    for counts in by_bucket.values():
        assert max(counts) - min(counts) <= 1
    gone = data.draw(st.sampled_from(list(group.members)))
    after = run(with_current(group, first, drop=[gone]), describer)
    for member_id, per_topic in after.items():
        for tid, parts in first[member_id].items():
            assert parts <= per_topic.get(tid, frozenset()), member_id


def test_builder_follows_the_spec_subscription_type():
    # UniformAssignor.assign picks the builder from groupSpec.subscriptionType(): the same
    # members give the homogeneous result or the heterogeneous one.
    members = {m: ((T1, T3), None) for m in "AB"}
    homogeneous = run(spec(HOMOGENEOUS, members), topics(T1=3, T3=2))
    heterogeneous = run(spec(HETEROGENEOUS, members), topics(T1=3, T3=2))
    expect(homogeneous, A=assignment(T3=[0, 1]), B=assignment(T1=[0, 1, 2]))
    expect(heterogeneous, A=assignment(T1=[0, 2]), B=assignment(T1=[1], T3=[0, 1]))


# --------------------------------------------------------------------------------------
# Differential: the optimised builders against a plain model (reference_uniform.py)
# --------------------------------------------------------------------------------------

@st.composite
def messy_groups(draw, subscription_type):
    """Random groups with current assignments as a broker (or a what-if) may leave them:
    partitions of topics no longer subscribed, beyond the partition count, missing, and
    (heterogeneous only) held twice."""
    counts = draw(st.lists(st.integers(0, 8), min_size=1, max_size=4))
    describer = TopicMetadata({TOPIC_IDS[i]: (f"t{i}", n) for i, n in enumerate(counts)})
    ids = list(describer.topics)
    members = draw(st.lists(st.sampled_from(MEMBER_IDS), min_size=1, max_size=6, unique=True))
    if subscription_type is HOMOGENEOUS:
        shared = frozenset(draw(st.sets(st.sampled_from(ids))))
        subs = {m: MemberSubscription(shared) for m in members}
    else:
        subs = {m: MemberSubscription(frozenset(draw(st.sets(st.sampled_from(ids))))) for m in members}
    holder = st.sampled_from([None, *members])
    current: dict = {}
    for i, n in enumerate(counts):
        for p in range(n + 2):                 # two beyond the count
            owners = [draw(holder)]
            if subscription_type is HETEROGENEOUS and draw(st.integers(0, 9)) == 0:
                owners.append(draw(holder))    # held twice
            for m in owners:
                if m is not None:
                    current.setdefault(m, {}).setdefault(ids[i], set()).add(p)
    current = {m: {t: frozenset(ps) for t, ps in d.items()} for m, d in current.items()}
    return GroupSpec(subs, subscription_type, current), describer


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_homogeneous_matches_reference_model(data):
    from reference_uniform import reference_homogeneous
    group, describer = data.draw(messy_groups(HOMOGENEOUS))
    assert UNIFORM.assign(group, describer) == reference_homogeneous(group, describer)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_heterogeneous_matches_reference_model(data):
    from reference_uniform import reference_heterogeneous
    group, describer = data.draw(messy_groups(HETEROGENEOUS))
    assert UNIFORM.assign(group, describer) == reference_heterogeneous(group, describer)
