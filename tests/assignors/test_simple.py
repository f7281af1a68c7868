"""The share-group simple assignor: Kafka's `SimpleAssignorTest` cases as the oracle (profile
kafka), and the draft KIP's "all partitions of all subscribed topics to all members" (kip).

Topic ids are chosen so that a Java `HashSet<Uuid>` lists them as Kafka's test lists its
`LinkedHashSet` (T1 before T2 before T3 before T4)."""
from __future__ import annotations

import uuid

import pytest

from kgroup.assignors import GroupSpec, MemberSubscription, PartitionAssignorException, SubscriptionType, TopicMetadata
from kgroup.assignors.simple import SimpleAssignor, _member_hash, _round_robin, _round_robin_with_count

T1, T2, T3, T4 = (uuid.UUID(int=i) for i in (1, 2, 3, 4))
HOMO, HETERO = SubscriptionType.HOMOGENEOUS, SubscriptionType.HETEROGENEOUS


def spec(members: dict, kind=HOMO, current: dict | None = None) -> GroupSpec:
    return GroupSpec({m: MemberSubscription(frozenset(ts)) for m, ts in members.items()}, kind, current or {})


def a(**topics) -> dict:
    return {globals()[t]: frozenset(ps) for t, ps in topics.items()}


def test_name_is_simple():
    assert SimpleAssignor().name == "simple"


def test_empty_group_gets_nothing():
    for kind in (HOMO, HETERO):
        assert SimpleAssignor().assign(spec({}, kind), TopicMetadata.from_counts({T1: 3})) == {}


def test_no_subscribed_topic_gets_nothing():
    # SimpleAssignorTest.testAssignWithNoSubscribedTopic
    assert SimpleAssignor().assign(spec({"A": []}), TopicMetadata.from_counts({T1: 3})) == {}


def test_subscribed_to_nonexistent_topic_raises():
    # SimpleAssignorTest.testAssignWithSubscribedToNonExistentTopic
    with pytest.raises(PartitionAssignorException):
        SimpleAssignor().assign(spec({"A": [T2]}), TopicMetadata.from_counts({T1: 3}))


def test_two_members_two_topics_homogeneous():
    # SimpleAssignorTest.testAssignWithTwoMembersAndTwoTopicsHomogeneous: hash("A")=65 -> T1:0,
    # hash("B")=66 -> T1:1, then round-robin T1:2 -> A, T3:0 -> B, T3:1 -> A
    out = SimpleAssignor().assign(spec({"A": [T1, T3], "B": [T1, T3]}), TopicMetadata.from_counts({T1: 3, T3: 2}))
    assert out == {"A": a(T1=[0, 2], T3=[1]), "B": a(T1=[1], T3=[0])}


def test_three_members_three_topics_heterogeneous():
    # SimpleAssignorTest.testAssignWithThreeMembersThreeTopicsHeterogeneous
    out = SimpleAssignor().assign(spec({"A": [T1, T2], "B": [T3], "C": [T2, T3]}, HETERO),
                                  TopicMetadata.from_counts({T1: 3, T2: 3, T3: 2}))
    assert out == {"A": a(T1=[0, 1, 2], T2=[0, 2]), "B": a(T3=[0, 1]), "C": a(T2=[1, 2])}


def test_one_member_without_topics_heterogeneous():
    # SimpleAssignorTest.testAssignWithOneMemberNoAssignedTopicHeterogeneous
    out = SimpleAssignor().assign(spec({"A": [T1, T2], "B": []}, HETERO), TopicMetadata.from_counts({T1: 3, T2: 2}))
    assert out == {"A": a(T1=[0, 1, 2], T2=[0, 1]), "B": {}}


def test_member_hash_assignment():
    # SimpleAssignorTest.testMemberHashAssignment ("AaAaAaAa" has a negative hash code)
    parts = [(T1, 0), (T2, 0), (T3, 0)]
    out: dict = {}
    _member_hash(parts, ["member1", "member2", "member3", "member4", "AaAaAaAa"], out)
    assert out == {(T1, 0): ["member3"], (T2, 0): ["member1", "member4"], (T3, 0): ["member2", "AaAaAaAa"]}


def test_round_robin_assignment():
    # SimpleAssignorTest.testRoundRobinAssignment
    out = {(T1, 0): ["member1"]}
    _round_robin(["member1", "member2"], [(T2, 0), (T3, 0), (T4, 0)], out)
    assert out == {(T1, 0): ["member1"], (T2, 0): ["member1"], (T3, 0): ["member2"], (T4, 0): ["member1"]}


def test_round_robin_with_count():
    # SimpleAssignorTest.testRoundRobinAssignmentWithCount: a member may reach desired + 1
    out = {"member1": {(T1, 0)}, "member2": {(T1, 0)}}
    _round_robin_with_count(["member1", "member2"], [(T2, 0), (T3, 0), (T4, 0)], out, 2)
    assert out == {"member1": {(T1, 0), (T2, 0), (T4, 0)}, "member2": {(T1, 0), (T3, 0)}}


def test_round_robin_with_count_too_many_partitions():
    # SimpleAssignorTest.testRoundRobinAssignmentWithCountTooManyPartitions
    out = {"member1": {(T1, 0)}, "member2": {(T1, 0)}}
    with pytest.raises(PartitionAssignorException):
        _round_robin_with_count(["member1", "member2"], [(T2, 0), (T3, 0), (T4, 0), (T4, 1), (T4, 2)], out, 2)


def test_current_assignment_homogeneous():
    # SimpleAssignorTest.testAssignWithCurrentAssignmentHomogeneous: A and B move from {T1, T2}
    # to {T2, T3} and C joins; what hashing handed out is not kept from the current assignment
    first = SimpleAssignor().assign(spec({"A": [T1, T2], "B": [T1, T2]}), TopicMetadata.from_counts({T1: 3, T2: 2}))
    assert first == {"A": a(T1=[0, 2], T2=[1]), "B": a(T1=[1], T2=[0])}
    second = SimpleAssignor().assign(spec({"A": [T2, T3], "B": [T2, T3], "C": [T2, T3]}, HOMO,
                                          {"A": first["A"], "B": first["B"]}),
                                     TopicMetadata.from_counts({T2: 2, T3: 3}))
    assert second == {"A": a(T2=[0], T3=[1]), "B": a(T2=[1], T3=[2]), "C": a(T3=[0])}


def test_current_assignment_heterogeneous():
    # SimpleAssignorTest.testAssignWithCurrentAssignmentHeterogeneous
    topics = TopicMetadata.from_counts({T1: 3, T2: 3, T3: 2, T4: 1})
    first = SimpleAssignor().assign(spec({"A": [T1, T2], "B": [T3], "C": [T2, T3]}, HETERO), topics)
    second = SimpleAssignor().assign(spec({"A": [T1, T2, T3], "B": [T3, T4]}, HETERO,
                                          {"A": first["A"], "B": first["B"]}), topics)
    assert second == {"A": a(T1=[0, 1, 2], T2=[0, 1, 2]), "B": a(T3=[0, 1], T4=[0])}


def test_balanced_when_members_outnumber_partitions():
    # Kafka's SimpleAssignor: every member gets a partition even with more members than partitions
    members = {f"m{i}": [T1] for i in range(7)}
    out = SimpleAssignor().assign(spec(members), TopicMetadata.from_counts({T1: 3}))
    assert all(len(out[m][T1]) >= 1 for m in members)
    assert set().union(*(out[m][T1] for m in members)) == {0, 1, 2}


def test_only_assignable_partitions_are_handed_out():
    # Kafka assigns only initialised share-partitions (GroupSpec.isPartitionAssignable)
    class Describer(TopicMetadata):
        def assignable_partitions(self, tid):
            return {0, 2}
    out = SimpleAssignor().assign(spec({"A": [T1]}), Describer({T1: ("t1", 4)}))
    assert out == {"A": a(T1=[0, 2])}


def test_draft_kip_gives_all_partitions_to_all_members():
    # Seed 002, "Share group membership": "assigns all partitions of all subscribed topics to all members"
    out = SimpleAssignor(all_partitions=True).assign(spec({"A": [T1, T2], "B": [T2]}, HETERO),
                                                    TopicMetadata.from_counts({T1: 2, T2: 3}))
    assert out == {"A": a(T1=[0, 1], T2=[0, 1, 2]), "B": a(T2=[0, 1, 2])}
