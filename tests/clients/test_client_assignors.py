"""kgroup.clients.assignors against cases from Kafka's own assignor unit tests, plus properties."""
from __future__ import annotations

import struct

import pytest
from hypothesis import assume, given, settings, strategies as st

from kgroup.clients.assignors import (ASSIGNORS, CooperativeStickyAssignor, MemberSubscription,
                                      RangeAssignor, RebalanceProtocol, RoundRobinAssignor,
                                      StickyAssignor, get_assignor)
from kgroup.protocol.consumer_protocol import Subscription

ALL_RACKS = ["a", "b", "c", "d", "e", "f"]


def racks(n):
    return [ALL_RACKS[i % len(ALL_RACKS)] for i in range(n)]


def null_racks(n):
    return [None] * n


def M(member_id, topics, owned=(), generation=-1, rack=None, instance=None, user_data=None):
    return MemberSubscription(member_id, instance, Subscription(tuple(topics), user_data, owned, generation, rack))


def parts(spec: str):
    return [(s.rsplit("-", 1)[0], int(s.rsplit("-", 1)[1])) for s in spec.split(", ") if s]


def flat(result):
    return {m: ", ".join(sorted(f"{t}-{p}" for t, p in a.partitions)) for m, a in result.items()}


def replica_racks(topics: dict[str, int], rf: int, broker_racks: list):
    """AbstractPartitionAssignorTest.partitionsPerTopic: replicas of partition i of the k-th
    topic sit on brokers (i + j + partitions of earlier topics) % brokers."""
    out, nxt = {}, 0
    for t, n in topics.items():
        for i in range(n):
            out[(t, i)] = {broker_racks[(i + j + nxt) % len(broker_racks)] for j in range(rf)} - {None}
        nxt += n
    return out


def verify_rack_assignment(assignor, topics, rf, broker_racks, consumer_racks, consumer_topics, owned, expected):
    """AbstractPartitionAssignorTest.verifyRackAssignment."""
    members = [M(f"consumer{i}", consumer_topics[i], parts(owned[i]) if owned else (), rack=consumer_racks[i])
               for i in range(len(consumer_racks))]
    result = assignor.assign(topics, members, replica_racks(topics, rf, broker_racks))
    assert flat(result) == {f"consumer{i}": e for i, e in enumerate(expected)}


# --- registry ----------------------------------------------------------------------------

def test_registry_and_protocols():
    assert list(ASSIGNORS) == ["range", "roundrobin", "sticky", "cooperative-sticky"]
    assert isinstance(get_assignor("range"), RangeAssignor)
    assert get_assignor("cooperative-sticky").supported_protocols == (
        RebalanceProtocol.COOPERATIVE, RebalanceProtocol.EAGER)
    assert get_assignor("sticky").supported_protocols == (RebalanceProtocol.EAGER,)
    with pytest.raises(ValueError, match="known: range, roundrobin, sticky, cooperative-sticky"):
        get_assignor("nope")


def test_user_data():
    assert RangeAssignor().subscription_user_data({"t"}, [], 3) is None
    assert RoundRobinAssignor().subscription_user_data({"t"}, [], 3) is None
    # CooperativeStickyAssignor: COOPERATIVE_STICKY_ASSIGNOR_USER_DATA_V0 = int32 generation.
    assert CooperativeStickyAssignor().subscription_user_data({"t"}, [], 10) == struct.pack(">i", 10)
    assert CooperativeStickyAssignor().subscription_user_data({"t"}, [], -1) == b"\xff\xff\xff\xff"
    # StickyAssignor: nothing before the first assignment, then STICKY_ASSIGNOR_USER_DATA_V1.
    sticky = StickyAssignor()
    assert sticky.subscription_user_data({"t"}, [], -1) is None
    assert sticky.subscription_user_data({"t"}, [("t", 1), ("t", 0)], 4) == bytes.fromhex(
        "00000001 0001 74 00000002 00000001 00000000 00000004".replace(" ", ""))


def test_sticky_member_data_round_trip():
    # CooperativeStickyAssignorTest.testEncodeAndDecodeGeneration / StickyAssignorTest user data.
    sticky = StickyAssignor()
    ud = sticky.subscription_user_data({"t"}, [("t", 0), ("u", 2)], 7)
    data = sticky._member_data(Subscription(("t",), ud))
    assert sorted(data.partitions) == [("t", 0), ("u", 2)] and data.generation == 7
    assert sticky._member_data(Subscription(("t",), ud[:-4])).generation is None     # V0 layout
    assert sticky._member_data(Subscription(("t",), b"\x01")).generation == -1       # unreadable
    coop = CooperativeStickyAssignor()
    assert coop._member_data(Subscription(("t",))).generation is None                # testDecodeGeneration
    assert coop._member_data(Subscription(("t",), coop.subscription_user_data({"t"}, [], 10))).generation == 10
    assert coop._member_data(Subscription(("t",), b"", generation_id=3)).generation == 3


# --- range (RangeAssignorTest) -----------------------------------------------------------

def test_range_javadoc_example():
    r = RangeAssignor().assign({"t0": 3, "t1": 3}, [M("C0", ["t0", "t1"]), M("C1", ["t0", "t1"])])
    assert flat(r) == {"C0": "t0-0, t0-1, t1-0, t1-1", "C1": "t0-2, t1-2"}


def test_range_multiple_consumers_mixed_topics():
    # RangeAssignorTest.testMultipleConsumersMixedTopics
    r = RangeAssignor().assign({"topic1": 3, "topic2": 2}, [
        M("consumer1", ["topic1"]), M("consumer2", ["topic1", "topic2"]), M("consumer3", ["topic1"])])
    assert flat(r) == {"consumer1": "topic1-0", "consumer2": "topic1-1, topic2-0, topic2-1",
                       "consumer3": "topic1-2"}


def test_range_edge_cases():
    # testOneConsumerNonexistentTopic, testOnlyAssignsPartitionsFromSubscribedTopics,
    # testTwoConsumersOneTopicOnePartition
    assert flat(RangeAssignor().assign({}, [M("c", ["t"])])) == {"c": ""}
    assert flat(RangeAssignor().assign({"t": 3, "other": 3}, [M("c", ["t"])])) == {"c": "t-0, t-1, t-2"}
    assert flat(RangeAssignor().assign({"t": 1}, [M("c1", ["t"]), M("c2", ["t"])])) == {"c1": "t-0", "c2": ""}


def test_range_static_members_sort_by_instance_id():
    # AbstractPartitionAssignorTest.testMemberInfoSortingSomeGroupInstanceId: static members
    # (by group.instance.id) come before dynamic ones, whatever their member ids.
    members = [M("a", ["t"]), M("b", ["t"], instance="y"), M("c", ["t"], instance="x")]
    assert flat(RangeAssignor().assign({"t": 3}, members)) == {"a": "t-2", "b": "t-1", "c": "t-0"}


UNIFORM = {"t1": 6, "t2": 7, "t3": 2}
ALL3 = ["t1", "t2", "t3"]


@pytest.mark.parametrize("rf, brokers, consumers, expected", [
    # RangeAssignorTest.testRackAwareAssignmentWithUniformSubscription
    (3, null_racks(3), racks(3), ["t1-0, t1-1, t2-0, t2-1, t2-2, t3-0", "t1-2, t1-3, t2-3, t2-4, t3-1", "t1-4, t1-5, t2-5, t2-6"]),
    (3, racks(3), null_racks(3), ["t1-0, t1-1, t2-0, t2-1, t2-2, t3-0", "t1-2, t1-3, t2-3, t2-4, t3-1", "t1-4, t1-5, t2-5, t2-6"]),
    (4, racks(4), racks(3), ["t1-0, t1-1, t2-0, t2-1, t2-2, t3-0", "t1-2, t1-3, t2-3, t2-4, t3-1", "t1-4, t1-5, t2-5, t2-6"]),
    (3, racks(3), ["d", "e", "f"], ["t1-0, t1-1, t2-0, t2-1, t2-2, t3-0", "t1-2, t1-3, t2-3, t2-4, t3-1", "t1-4, t1-5, t2-5, t2-6"]),
    (1, racks(3), racks(3), ["t1-0, t1-3, t2-0, t2-3, t2-6", "t1-1, t1-4, t2-1, t2-4, t3-0", "t1-2, t1-5, t2-2, t2-5, t3-1"]),
    (2, racks(3), racks(3), ["t1-0, t1-2, t2-0, t2-2, t2-3, t3-1", "t1-1, t1-3, t2-1, t2-4, t3-0", "t1-4, t1-5, t2-5, t2-6"]),
    (3, racks(2), racks(3), ["t1-0, t1-1, t2-0, t2-1, t2-2, t3-0", "t1-2, t1-3, t2-3, t2-4, t3-1", "t1-4, t1-5, t2-5, t2-6"]),
])
def test_range_rack_aware_uniform_subscription(rf, brokers, consumers, expected):
    verify_rack_assignment(RangeAssignor(), UNIFORM, rf, brokers, consumers, [ALL3] * 3, None, expected)


def test_range_rack_aware_non_equal_subscription():
    # RangeAssignorTest.testRackAwareAssignmentWithNonEqualSubscription
    topics = [ALL3, ALL3, ["t1", "t3"]]
    verify_rack_assignment(RangeAssignor(), UNIFORM, 1, racks(3), racks(3), topics, None,
                           ["t1-0, t1-3, t2-0, t2-2, t2-3, t2-6", "t1-1, t1-4, t2-1, t2-4, t2-5, t3-0", "t1-2, t1-5, t3-1"])
    verify_rack_assignment(RangeAssignor(), UNIFORM, 2, racks(3), racks(3), topics, None,
                           ["t1-0, t1-2, t2-0, t2-2, t2-3, t2-5, t3-1", "t1-1, t1-3, t2-1, t2-4, t2-6, t3-0", "t1-4, t1-5"])


def test_range_rack_aware_co_partitioning():
    # RangeAssignorTest.testRackAwareAssignmentWithCoPartitioning and
    # testRackAwareAssignmentWithUniformPartitionsNonEqualSubscription
    topics = {"t1": 6, "t2": 6, "t3": 2, "t4": 2}
    consumer_racks = ["a", "b", "b", "a"]
    subs = [["t1", "t2"], ["t1", "t2"], ["t3", "t4"], ["t3", "t4"]]
    verify_rack_assignment(RangeAssignor(), topics, 1, racks(2), consumer_racks, subs, None,
                           ["t1-0, t1-2, t1-4, t2-0, t2-2, t2-4", "t1-1, t1-3, t1-5, t2-1, t2-3, t2-5", "t3-1, t4-1", "t3-0, t4-0"])
    all4 = [["t1", "t2", "t3", "t4"]] * 4
    verify_rack_assignment(RangeAssignor(), topics, 1, racks(3), consumer_racks, all4, None,
                           ["t1-0, t1-3, t2-0, t2-3, t3-0, t4-0", "t1-1, t1-4, t2-1, t2-4, t3-1, t4-1", "t1-2, t2-2", "t1-5, t2-5"])
    five = {"t1": 5, "t2": 5, "t3": 5}
    verify_rack_assignment(RangeAssignor(), five, 2, racks(3), racks(3), [ALL3, ALL3, ["t1", "t3"]], None,
                           ["t1-2, t2-0, t2-1, t2-3, t3-2", "t1-0, t1-3, t2-2, t2-4, t3-0, t3-3", "t1-1, t1-4, t3-1, t3-4"])


# --- round robin (RoundRobinAssignorTest) ------------------------------------------------

def test_roundrobin_javadoc_examples():
    r = RoundRobinAssignor().assign({"t0": 3, "t1": 3}, [M("C0", ["t0", "t1"]), M("C1", ["t0", "t1"])])
    assert flat(r) == {"C0": "t0-0, t0-2, t1-1", "C1": "t0-1, t1-0, t1-2"}
    r = RoundRobinAssignor().assign({"t0": 1, "t1": 2, "t2": 3}, [
        M("C0", ["t0"]), M("C1", ["t0", "t1"]), M("C2", ["t0", "t1", "t2"])])
    assert flat(r) == {"C0": "t0-0", "C1": "t1-0", "C2": "t1-1, t2-0, t2-1, t2-2"}


def test_roundrobin_multiple_consumers_mixed_topics():
    # RoundRobinAssignorTest.testMultipleConsumersMixedTopics
    r = RoundRobinAssignor().assign({"topic": 3, "topic2": 2}, [
        M("consumer1", ["topic"]), M("consumer2", ["topic", "topic2"]), M("consumer3", ["topic"])])
    assert flat(r) == {"consumer1": "topic-0", "consumer2": "topic-1, topic2-0, topic2-1", "consumer3": "topic-2"}


def test_roundrobin_static_members():
    # RoundRobinAssignorTest.testStaticMemberRoundRobinAssignmentPersistent (in spirit): with
    # instance ids the result follows the instance ids, not the ephemeral member ids.
    members = [M("C5", ["t0", "t1"], instance="I0"), M("C3", ["t0", "t1"], instance="I1"),
               M("C4", ["t0", "t1"], instance="I2")]
    r = RoundRobinAssignor().assign({"t0": 3, "t1": 3}, members)
    assert flat(r) == {"C5": "t0-0, t1-0", "C3": "t0-1, t1-1", "C4": "t0-2, t1-2"}


# --- sticky (StickyAssignor javadoc, AbstractStickyAssignorTest) --------------------------

@pytest.mark.parametrize("cls", [StickyAssignor, CooperativeStickyAssignor])
def test_sticky_javadoc_example_1(cls):
    four = {"t0": 2, "t1": 2, "t2": 2, "t3": 2}
    topics = list(four)
    r = cls().assign(four, [M("C0", topics), M("C1", topics), M("C2", topics)])
    assert flat(r) == {"C0": "t0-0, t1-1, t3-0", "C1": "t0-1, t2-0, t3-1", "C2": "t1-0, t2-1"}
    # C1 leaves: everything C0 and C2 had stays put (eager sticky reads it from user data).
    sticky = StickyAssignor()
    r = sticky.assign(four, [
        M("C0", topics, user_data=sticky.subscription_user_data(set(topics), parts("t0-0, t1-1, t3-0"), 1)),
        M("C2", topics, user_data=sticky.subscription_user_data(set(topics), parts("t1-0, t2-1"), 1))])
    # (The javadoc's "C0 [t0p0, t1p1, t3p0, t2p0]" predates the constrained algorithm, which
    # deals the freed t0-1, t2-0, t3-1 round-robin to the members under quota, in name order.)
    assert flat(r) == {"C0": "t0-0, t0-1, t1-1, t3-0", "C2": "t1-0, t2-0, t2-1, t3-1"}


def test_sticky_javadoc_example_2():
    three = {"t0": 1, "t1": 2, "t2": 3}
    r = StickyAssignor().assign(three, [M("C0", ["t0"]), M("C1", ["t0", "t1"]), M("C2", ["t0", "t1", "t2"])])
    assert flat(r) == {"C0": "t0-0", "C1": "t1-0, t1-1", "C2": "t2-0, t2-1, t2-2"}
    sticky = StickyAssignor()
    r = sticky.assign(three, [
        M("C1", ["t0", "t1"], user_data=sticky.subscription_user_data(set(), parts("t1-0, t1-1"), 1)),
        M("C2", ["t0", "t1", "t2"], user_data=sticky.subscription_user_data(set(), parts("t2-0, t2-1, t2-2"), 1))])
    assert flat(r) == {"C1": "t0-0, t1-0, t1-1", "C2": "t2-0, t2-1, t2-2"}


def test_same_generation_double_claims():
    # testAllConsumersHaveOwnedPartitionInvalidatedWhenClaimedByMultipleConsumersInSameGenerationWithEqualPartitionsPerConsumer
    def members():
        return [M("consumer1", ["topic"], parts("topic-0, topic-1"), 1),
                M("consumer2", ["topic"], parts("topic-0, topic-2"), 1),
                M("consumer3", ["topic"], (), 1)]
    # StickyAssignorTest: the eager assignor reads user data, so build it as the test does
    sticky = StickyAssignor()
    eager = [MemberSubscription(m.member_id, None, Subscription(
        m.subscription.topics, sticky.subscription_user_data(set(), list(m.subscription.owned_partitions), 1),
        m.subscription.owned_partitions, 1)) for m in members()]
    assert flat(sticky.assign({"topic": 3}, eager)) == {"consumer1": "topic-1", "consumer2": "topic-2",
                                                          "consumer3": "topic-0"}
    # CooperativeStickyAssignorTest: topic-0 is still "owned", so nobody gets it yet
    coop = CooperativeStickyAssignor()
    assert flat(coop.assign({"topic": 3}, members())) == {"consumer1": "topic-1", "consumer2": "topic-2",
                                                           "consumer3": ""}


def test_newer_generation_wins_conflicting_claim():
    # AbstractStickyAssignorTest.testOwnedPartitionsInvalidatedForConsumerWithMultipleGeneration (shape):
    # the claim of the member with the newer generation is kept.
    coop = CooperativeStickyAssignor()
    r = coop.assign({"topic": 3, "topic2": 3}, [
        M("consumer1", ["topic", "topic2"], parts("topic-0, topic2-1, topic-1"), 5),
        M("consumer2", ["topic", "topic2"], parts("topic-0, topic2-1, topic2-2"), 3)])
    assert flat(r) == {"consumer1": "topic-0, topic-1, topic2-1", "consumer2": "topic-2, topic2-0, topic2-2"}
    assert coop.partitions_transferring_ownership == {}


NR_UNIFORM = ["t1-0, t1-3, t2-0, t2-3, t2-6", "t1-1, t1-4, t2-1, t2-4, t3-0", "t1-2, t1-5, t2-2, t2-5, t3-1"]


@pytest.mark.parametrize("cls", [StickyAssignor, CooperativeStickyAssignor])
@pytest.mark.parametrize("rf, brokers, consumers", [
    # AbstractStickyAssignorTest.testRackAwareAssignmentWithUniformSubscription
    (3, null_racks(3), racks(3)), (3, racks(3), null_racks(3)), (3, racks(3), racks(3)),
    (3, racks(3), ["d", "e", "f"]), (3, racks(3), [None, "e", "f"]),
    (1, racks(3), racks(3)), (2, racks(3), racks(3)), (3, racks(2), racks(3)),
])
def test_sticky_rack_aware_uniform_subscription(cls, rf, brokers, consumers):
    verify_rack_assignment(cls(), UNIFORM, rf, brokers, consumers, [ALL3] * 3, None, NR_UNIFORM)
    verify_rack_assignment(cls(), UNIFORM, rf, brokers, consumers, [ALL3] * 3, NR_UNIFORM, NR_UNIFORM)


NR_NON_EQUAL = ["t1-5, t2-0, t2-2, t2-4, t2-6", "t1-3, t2-1, t2-3, t2-5, t3-0", "t1-0, t1-1, t1-2, t1-4, t3-1"]
NON_EQUAL = [ALL3, ALL3, ["t1", "t3"]]


@pytest.mark.parametrize("cls", [StickyAssignor, CooperativeStickyAssignor])
@pytest.mark.parametrize("rf, brokers, consumers, expected", [
    # AbstractStickyAssignorTest.testRackAwareAssignmentWithNonEqualSubscription
    (3, null_racks(3), racks(3), NR_NON_EQUAL), (3, racks(3), null_racks(3), NR_NON_EQUAL),
    (3, racks(3), racks(3), NR_NON_EQUAL), (3, racks(3), ["d", "e", "f"], NR_NON_EQUAL),
    (3, racks(3), [None, "e", "f"], NR_NON_EQUAL),
    (1, racks(3), racks(3), ["t1-3, t2-0, t2-2, t2-3, t2-6", "t1-4, t2-1, t2-4, t2-5, t3-0", "t1-0, t1-1, t1-2, t1-5, t3-1"]),
    (2, racks(3), racks(3), ["t1-3, t2-0, t2-2, t2-5, t2-6", "t1-0, t2-1, t2-3, t2-4, t3-0", "t1-1, t1-2, t1-4, t1-5, t3-1"]),
    (3, racks(2), racks(3), NR_NON_EQUAL),
])
def test_sticky_rack_aware_non_equal_subscription(cls, rf, brokers, consumers, expected):
    verify_rack_assignment(cls(), UNIFORM, rf, brokers, consumers, NON_EQUAL, None, expected)
    verify_rack_assignment(cls(), UNIFORM, rf, brokers, consumers, NON_EQUAL, expected, expected)


def test_cooperative_withholds_moving_partitions():
    # AbstractStickyAssignorTest.testRackAwareAssignmentWithNonEqualSubscription, cooperative branch:
    # partitions changing owner are first only revoked, then handed on in the next rebalance.
    owned = ["t1-0, t1-1, t1-2, t1-3, t1-4", "t1-5, t2-0, t2-1, t2-2, t2-3", "t2-4, t2-5, t2-6, t3-0, t3-1"]
    intermediate = ["t1-3", "t2-1", "t3-1"]
    final = ["t1-3, t2-0, t2-2, t2-3, t2-6", "t1-4, t2-1, t2-4, t2-5, t3-0", "t1-0, t1-1, t1-2, t1-5, t3-1"]
    verify_rack_assignment(CooperativeStickyAssignor(), UNIFORM, 1, racks(3), racks(3), NON_EQUAL, owned, intermediate)
    verify_rack_assignment(CooperativeStickyAssignor(), UNIFORM, 1, racks(3), racks(3), NON_EQUAL, intermediate, final)
    intermediate = ["t1-2, t1-3, t1-4", "t2-0, t2-1, t2-2, t2-3", "t3-0, t3-1"]
    final = ["t1-2, t1-3, t1-4, t2-4, t2-5", "t2-0, t2-1, t2-2, t2-3, t2-6", "t1-0, t1-1, t1-5, t3-0, t3-1"]
    verify_rack_assignment(CooperativeStickyAssignor(), UNIFORM, 3, racks(3), racks(3), NON_EQUAL, owned, intermediate)
    verify_rack_assignment(CooperativeStickyAssignor(), UNIFORM, 3, racks(3), racks(3), NON_EQUAL, intermediate, final)
    # The eager sticky assignor ignores ownedPartitions (it reads user data, null here).
    verify_rack_assignment(StickyAssignor(), UNIFORM, 3, racks(3), racks(3), NON_EQUAL, owned, NR_NON_EQUAL)


def test_cooperative_rack_mismatch_is_revoked_first():
    # KAFKA-15170: an owned partition dropped for a rack mismatch is withheld from its new owner.
    owned = ["t1-0, t1-1, t1-2, t1-3, t1-4", "t1-5, t2-0, t2-1, t2-2, t2-3", "t2-4, t2-5, t2-6, t3-0, t3-1"]
    members = [M(f"consumer{i}", ALL3, parts(owned[i]), rack=racks(3)[i]) for i in range(3)]
    coop = CooperativeStickyAssignor()
    result = coop.assign(UNIFORM, members, replica_racks(UNIFORM, 1, racks(3)))
    previous = {tp: m.member_id for m in members for tp in m.subscription.owned_partitions}
    for mid, a in result.items():
        assert all(previous.get(tp, mid) == mid for tp in a.partitions)
    assert coop.partitions_transferring_ownership


def test_general_assign_deterministic_over_member_order():
    members = [M("b", ["x", "y"]), M("a", ["x"]), M("c", ["y", "z"])]
    ppt = {"x": 4, "y": 3, "z": 2}
    for cls in ASSIGNORS.values():
        first = cls().assign(ppt, members)
        assert cls().assign(ppt, members) == first


# --- properties --------------------------------------------------------------------------

TOPICS = ["t0", "t1", "t2", "t3"]


@st.composite
def groups(draw, identical: bool = False):
    ppt = {t: draw(st.integers(0, 6)) for t in TOPICS[:draw(st.integers(1, 4))]}
    n = draw(st.integers(1, 5))
    common = draw(st.lists(st.sampled_from(list(ppt)), min_size=1, unique=True))
    members = []
    for i in range(n):
        topics = common if identical else draw(st.lists(st.sampled_from(list(ppt)), min_size=1, unique=True))
        rack = draw(st.sampled_from([None, "a", "b"]))
        inst = draw(st.sampled_from([None, f"i{i}"]))
        members.append(M(f"m{draw(st.integers(0, 99)):02d}-{i}", topics, rack=rack, instance=inst))
    rack_map = draw(st.sampled_from([None, "split"]))
    racks_pp = None
    if rack_map:
        racks_pp = {(t, p): {"a", "b"} if p % 3 == 0 else {"a" if p % 3 == 1 else "b"}
                    for t, c in ppt.items() for p in range(c)}
    return ppt, members, racks_pp


def _check_valid(ppt, members, result, complete=True):
    subs = {m.member_id: set(m.subscription.topics) for m in members}
    seen = {}
    for mid, a in result.items():
        for tp in a.partitions:
            assert tp[0] in subs[mid], f"{tp} given to non-subscriber {mid}"
            assert tp not in seen, f"{tp} given twice"
            seen[tp] = mid
    if complete:
        wanted = {(t, p) for t, c in ppt.items() if any(t in s for s in subs.values()) for p in range(c)}
        assert set(seen) == wanted


@settings(max_examples=60, deadline=None)
@given(groups(), st.sampled_from(list(ASSIGNORS)))
def test_every_subscribed_partition_assigned_once(group, name):
    ppt, members, racks_pp = group
    result = get_assignor(name).assign(ppt, members, racks_pp)
    assert set(result) == {m.member_id for m in members}
    _check_valid(ppt, members, result)


@settings(max_examples=60, deadline=None)
@given(groups(identical=True), st.sampled_from(["roundrobin", "sticky", "cooperative-sticky"]))
def test_balanced_for_identical_subscriptions(group, name):
    ppt, members, racks_pp = group
    sizes = [len(a.partitions) for a in get_assignor(name).assign(ppt, members, racks_pp).values()]
    assert max(sizes) - min(sizes) <= 1


@settings(max_examples=40, deadline=None)
@given(groups(), st.sampled_from(["sticky", "cooperative-sticky"]))
def test_sticky_keeps_assignment_when_nothing_changes(group, name):
    ppt, members, racks_pp = group
    first = get_assignor(name).assign(ppt, members, racks_pp)
    if racks_pp is not None:
        # Kafka moves an owned partition off a member whose rack has no replica of it
        # ("owned partitions may be reassigned to improve rack locality"): only rack-aligned
        # assignments must stay put.
        rack_of = {m.member_id: m.subscription.rack_id for m in members}
        assume(all(rack_of[mid] is None or rack_of[mid] in racks_pp[tp]
                   for mid, a in first.items() for tp in a.partitions))
    assignor = get_assignor(name)
    again = [MemberSubscription(m.member_id, m.group_instance_id, Subscription(
        m.subscription.topics,
        assignor.subscription_user_data(set(m.subscription.topics), list(first[m.member_id].partitions), 1),
        first[m.member_id].partitions, 1, m.subscription.rack_id)) for m in members]
    assert assignor.assign(ppt, again, racks_pp) == first


@settings(max_examples=80, deadline=None)
@given(groups(), st.data())
def test_cooperative_never_hands_over_in_the_same_rebalance(group, data):
    ppt, members, racks_pp = group
    all_tps = [(t, p) for t, c in ppt.items() for p in range(c)]
    # Random previous ownership (each partition to at most one member), all in generation 1.
    owners = {tp: data.draw(st.sampled_from([None] + [m.member_id for m in members])) for tp in all_tps}
    with_owned = [MemberSubscription(m.member_id, m.group_instance_id, Subscription(
        m.subscription.topics, None, [tp for tp, o in owners.items() if o == m.member_id], 1,
        m.subscription.rack_id)) for m in members]
    result = CooperativeStickyAssignor().assign(ppt, with_owned, racks_pp)
    _check_valid(ppt, with_owned, result, complete=False)
    for mid, a in result.items():
        for tp in a.partitions:
            assert owners[tp] in (None, mid), f"{tp} moves {owners[tp]} -> {mid} without being revoked first"
