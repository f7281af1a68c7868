"""FixedAssignor, the registry, and the API types."""
from __future__ import annotations

import pytest
from assignor_testing import HETEROGENEOUS, HOMOGENEOUS, T1, T2, T3, assignment, spec, topics

from kgroup import assignors
from kgroup.assignors import (SERVER_ASSIGNORS, FixedAssignor, GroupSpec, MemberSubscription,
                              PartitionAssignorException, RangeAssignor, ServerAssignor,
                              SubscribedTopicDescriber, SubscriptionType, TopicMetadata,
                              UniformAssignor, get_server_assignor, subscription_type_of)


def test_fixed_returns_the_assignment_and_fills_missing_members():
    fixed = FixedAssignor({"A": {T1: [0, 2], T2: []}, "B": {T1: {1}}})
    group = spec(HOMOGENEOUS, {m: ((T1,), None) for m in "ABC"})
    result = fixed.assign(group, topics(T1=3))
    assert result == {"A": {T1: frozenset({0, 2})}, "B": {T1: frozenset({1})}, "C": {}}
    assert list(result) == ["A", "B", "C"]
    assert all(isinstance(p, frozenset) for d in result.values() for p in d.values())


def test_fixed_rejects_unknown_members():
    fixed = FixedAssignor({"A": assignment(T1=[0]), "X": assignment(T1=[1])})
    with pytest.raises(PartitionAssignorException, match="X"):
        fixed.assign(spec(HOMOGENEOUS, {"A": ((T1,), None)}), topics(T1=2))


def test_fixed_results_are_independent_copies():
    fixed = FixedAssignor({"A": assignment(T1=[0])})
    group = spec(HOMOGENEOUS, {"A": ((T1,), None)})
    first = fixed.assign(group, topics(T1=1))
    first["A"].clear()
    assert fixed.assign(group, topics(T1=1)) == {"A": assignment(T1=[0])}
    assert fixed.name == "fixed" and isinstance(fixed, ServerAssignor)


def test_registry_order_and_lookup():
    # Kafka's group.consumer.assignors default: uniform first (the default), then range.
    assert list(SERVER_ASSIGNORS) == ["uniform", "range"]
    assert isinstance(get_server_assignor("uniform"), UniformAssignor)
    assert isinstance(get_server_assignor("range"), RangeAssignor)
    with pytest.raises(ValueError, match="uniform, range"):
        get_server_assignor("sticky")


def test_public_api_is_reexported():
    for name in ["TopicId", "SubscriptionType", "MemberSubscription", "GroupSpec",
                 "SubscribedTopicDescriber", "TopicMetadata", "GroupAssignment",
                 "PartitionAssignorException", "ServerAssignor", "UniformAssignor",
                 "RangeAssignor", "FixedAssignor", "SERVER_ASSIGNORS", "get_server_assignor"]:
        assert hasattr(assignors, name), name


def test_topic_metadata_describer():
    describer = TopicMetadata({T1: ("orders", 3)}, racks={(T1, 0): {"r1", "r2"}})
    assert isinstance(describer, SubscribedTopicDescriber)
    assert describer.num_partitions(T1) == 3 and describer.num_partitions(T2) == -1
    assert describer.racks_for_partition(T1, 0) == {"r1", "r2"}
    assert describer.racks_for_partition(T1, 1) == set()
    assert TopicMetadata.from_counts({T2: 4}).num_partitions(T2) == 4


def test_group_spec_is_partition_assigned():
    group = GroupSpec({"A": MemberSubscription(frozenset({T1})), "B": MemberSubscription(frozenset({T1}))},
                      HOMOGENEOUS, {"A": assignment(T1=[0]), "gone": assignment(T1=[1])})
    assert group.is_partition_assigned(T1, 0)
    assert not group.is_partition_assigned(T1, 1)     # held by a member not in the group
    assert not group.is_partition_assigned(T2, 0)
    assert group.member_assignment("A") == assignment(T1=[0])
    assert group.member_assignment("B") == {} and group.member_assignment("gone") == {}


def test_subscription_type_of():
    same = frozenset({T1, T2})
    assert subscription_type_of({}) is SubscriptionType.HOMOGENEOUS
    assert subscription_type_of({"A": MemberSubscription(same),
                                 "B": MemberSubscription(frozenset({T2, T1}))}) is HOMOGENEOUS
    assert subscription_type_of({"A": MemberSubscription(same),
                                 "B": MemberSubscription(frozenset({T3}))}) is HETEROGENEOUS


def test_rack_ids_do_not_change_the_assignment():
    # Neither assignor is rack-aware (see the package docstring).
    racks = {(t, p): {f"rack{p % 3}"} for t in (T1, T2) for p in range(6)}
    plain = TopicMetadata({T1: ("a", 6), T2: ("b", 6)})
    racked = TopicMetadata(plain.topics, racks)
    for assignor in (UniformAssignor(), RangeAssignor()):
        for kind in (HOMOGENEOUS, HETEROGENEOUS):
            without = GroupSpec({m: MemberSubscription(frozenset({T1, T2})) for m in "ABC"}, kind)
            with_racks = GroupSpec({m: MemberSubscription(frozenset({T1, T2}), rack_id=f"rack{i}")
                                    for i, m in enumerate("ABC")}, kind)
            assert assignor.assign(with_racks, racked) == assignor.assign(without, plain)


def test_assign_restores_the_garbage_collector_state():
    import gc
    group = spec(HOMOGENEOUS, {m: ((T1,), None) for m in "AB"})
    was = gc.isenabled()
    try:
        for enabled in (True, False):
            (gc.enable if enabled else gc.disable)()
            for assignor in (UniformAssignor(), RangeAssignor()):
                assignor.assign(group, topics(T1=2))
                assert gc.isenabled() is enabled
            with pytest.raises(PartitionAssignorException):
                UniformAssignor().assign(spec(HOMOGENEOUS, {"A": ((T2,), None)}), topics(T1=1))
            assert gc.isenabled() is enabled
    finally:
        (gc.enable if was else gc.disable)()
