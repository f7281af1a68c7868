"""Kafka's server-side (KIP-848) partition assignors, as pure functions.

The consumer-group coordinator calls ``assignor.assign(group_spec, topics)`` to compute a
new target assignment. Two assignors ship with Kafka and here, in the order of Kafka's
``group.consumer.assignors`` default (the first is the default): ``uniform`` and
``range``. :class:`FixedAssignor` returns a given assignment, for tests and what-ifs.

What was checked against Apache Kafka's sources (``group-coordinator``, package
``org.apache.kafka.coordinator.group.assignor``, trunk as of 2025-2026):

* ``UniformAssignor`` chooses ``UniformHomogeneousAssignmentBuilder`` when the group's
  subscription type is HOMOGENEOUS and ``UniformHeterogeneousAssignmentBuilder``
  otherwise; an empty group gets an empty assignment.
* Homogeneous builder: the version after KAFKA-18688 ("Fix uniform homogeneous assignor
  stability", apache/kafka#19677, merged May 2025): a member that cannot fill the extra
  partition it was offered gives it back, and the extras left go to the *last* members
  below quota. Before it the first members in iteration order took the extras, so a
  reassignment depended on the member order. The expected assignments of
  ``UniformHomogeneousAssignmentBuilderTest`` (and ``CommonAssignorTests``'
  order-independence test) are reproduced in ``tests/assignors/test_uniform.py``.
* Heterogeneous builder: the KAFKA-17710 rewrite (apache/kafka#17385): sticky pass,
  least-loaded fill per topic (topics by partitions-per-subscriber descending, then
  subscriber count, then topic id), then per-topic balancing with at most 16 sweeps.
  ``UniformHeterogeneousAssignmentBuilderTest``'s cases are reproduced.
* ``RangeAssignor``: the KAFKA-16944 rewrite (apache/kafka#16504, 3.9): members sorted
  with static members first (by instance id), then by member id; contiguous ranges,
  the first ``n % k`` subscribers getting one more. It is **not sticky** any more (the
  2023 version kept current partitions within quota; the rewrite dropped that) and
  does not require co-partitioned topics. ``RangeAssignorTest``'s first-assignment
  cases are reproduced.
* A subscription to a topic id whose ``num_partitions`` is -1 raises
  :class:`PartitionAssignorException` in both assignors (Kafka's
  ``testOneMemberSubscribedToNonexistentTopic``); such topics are not ignored. In Kafka
  the coordinator only passes topic ids that resolve in the metadata image, so the
  coordinator here should drop unknown topics from subscriptions before assigning.
* Rack awareness: **neither assignor uses racks.** Rack-aware assignment was removed
  from the uniform assignor when it was rewritten for 3.8 (KAFKA-16864,
  apache/kafka#16088) and the range rewrite has none. KIP-1101 (4.1) puts racks back
  into the describer (``racksForPartition`` reads the metadata image) and
  apache/kafka#20000 (KAFKA-19909, "Add rack awareness assignment to
  UniformHomogeneousAssignmentBuilder") proposes rack-aware homogeneous assignment, but
  it was still open in the sources consulted. ``MemberSubscription.rack_id`` and
  ``racks_for_partition`` exist so the interface matches; the assignors ignore them.

Iteration orders (the tests compare exact assignments):

* Members: Kafka iterates ``groupSpec.memberIds()``, the key order of the map the
  coordinator passes (a ``HashMap`` in the broker, a ``TreeMap`` or a sorted list in
  Kafka's unit tests). Here it is the insertion order of ``GroupSpec.members``; pass
  members sorted by id to reproduce Kafka's tests. Since KAFKA-18688 a reassignment of
  an already balanced homogeneous group does not depend on it; a first assignment does.
  The range assignor sorts members itself, as Kafka does.
* Topics in the homogeneous builder: Kafka walks a ``java.util.HashSet<Uuid>``;
  :func:`java_hashset_order` reproduces that order from ``Uuid.hashCode``.
* Partitions of a member's current assignment are read in ascending order (Java's
  ``HashSet<Integer>`` of small partition numbers iterates that way); topics of a
  member's current assignment in the dict's order.

Robustness beyond Kafka: partitions outside ``[0, partition count)`` in a current
assignment are dropped; in the heterogeneous builder a partition held twice stays with
the first member. The homogeneous builder assumes current assignments are disjoint (as
target assignments always are; Kafka assumes it too).

Performance (``benchmarks/assignors.py``, CPython 3.11, one core): a 10,000-member,
100,000-partition, 1,000-topic group takes about 10 ms (homogeneous) and 100-170 ms
(heterogeneous, first assignment) per ``assign()``; reassignments are cheaper. The
assignors pause the cyclic garbage collector while they run (:func:`kgroup.gcpause.gc_paused`):
they create no reference cycles, and a running collector re-traversed the group's
whole live assignment over and over.
"""
from __future__ import annotations

from .api import (GroupAssignment, GroupSpec, MemberSubscription, PartitionAssignorException,
                  ServerAssignor, SubscribedTopicDescriber, SubscriptionType, TopicId,
                  TopicMetadata, subscription_type_of)
from .fixed import FixedAssignor
from .range import RangeAssignor
from .uniform import UniformAssignor, java_hashset_order

__all__ = ["TopicId", "SubscriptionType", "MemberSubscription", "GroupSpec", "SubscribedTopicDescriber",
           "TopicMetadata", "GroupAssignment", "PartitionAssignorException", "ServerAssignor", "UniformAssignor",
           "RangeAssignor", "FixedAssignor", "SERVER_ASSIGNORS", "get_server_assignor", "subscription_type_of",
           "java_hashset_order"]

#: The built-in server-side assignors by name, in the order of Kafka's
#: ``group.consumer.assignors`` default: the first one is the default.
SERVER_ASSIGNORS: dict[str, type] = {
    UniformAssignor.name: UniformAssignor,
    RangeAssignor.name: RangeAssignor,
}


def get_server_assignor(name: str) -> ServerAssignor:
    """A new instance of the built-in assignor called ``name``."""
    cls = SERVER_ASSIGNORS.get(name)
    if cls is None:
        known = ", ".join(SERVER_ASSIGNORS)
        raise ValueError(f"Unknown server-side assignor {name!r}; known assignors: {known}")
    return cls()
