"""StreamsGroupHeartbeat request validation and topology invariants (KIP-1071 "Request
Validation"), and the join rules for topology epochs under both profiles (the README's profile table).

Test names end in `_kip` or `_kafka` where the profiles differ; no suffix: both agree."""
from __future__ import annotations

import pytest

from kgroup import Cluster, Coordinator, ErrorCode
from kgroup.groups.streams import CopartitionGroup, Subtopology, TopicInfo, Topology
from tests.streams_testing import STATEFUL, STATELESS, sgroup, shb, statuses, written

E = ErrorCode


@pytest.fixture(params=["kip", "kafka"])
def profile(request) -> str:
    return request.param


def coord(profile: str = "kip", **topics: int) -> Coordinator:
    # No initial rebalance delay (Kafka's ASSIGNMENT_DELAYED): these tests are about validation.
    return Coordinator(cluster=Cluster(topics or {"orders": 3}, seed=1), profile=profile,
                       config={"group.streams.initial.rebalance.delay.ms": 0})


def joined(c: Coordinator, member: str = "A", **kw):
    r = shb(c, member, 0, **kw)
    assert r.error_code == E.none, r.error_message
    return r


# -- INVALID_REQUEST: one test per rule ------------------------------------------------

def test_group_id_must_be_non_empty(profile):
    c = coord(profile)
    r = shb(c, "A", 0, group="")
    assert (r.error_code, r.error_message) == (E.invalid_request, "GroupId can't be empty.")
    assert c.position == 0


def test_empty_member_id_allowed_when_joining_kip():
    c = coord("kip")
    r = shb(c, "", 0)
    assert r.error_code == E.none and r.member_id  # the coordinator names the member


def test_member_id_always_required_kafka():
    r = shb(coord("kafka"), "", 0)
    assert (r.error_code, r.error_message) == (E.invalid_request, "MemberId can't be empty.")


def test_member_id_required_after_join(profile):
    r = shb(coord(profile), "", 3)
    assert (r.error_code, r.error_message) == (E.invalid_request, "MemberId can't be empty.")


def test_member_epoch_below_minus_two_is_invalid(profile):
    r = shb(coord(profile), "A", -3)
    assert (r.error_code, r.error_message) == (E.invalid_request,
                                               "MemberEpoch is -3, but must be greater than or equal to -2.")


def test_instance_id_must_be_non_empty(profile):
    r = shb(coord(profile), "A", 0, instance=" ")
    assert (r.error_code, r.error_message) == (E.invalid_request, "InstanceId can't be empty.")


def test_rack_id_must_be_non_empty(profile):
    r = shb(coord(profile), "A", 0, rack="")
    assert (r.error_code, r.error_message) == (E.invalid_request, "RackId can't be empty.")


def test_rebalance_timeout_must_be_positive_on_join_kip():
    r = shb(coord("kip"), "A", 0, rebalance_ms=0)
    assert r.error_code == E.invalid_request
    assert r.error_message == "RebalanceTimeoutMs must be larger than zero in the first heartbeat request."


def test_only_missing_rebalance_timeout_rejected_on_join_kafka():
    c = coord("kafka")
    assert shb(c, "A", 0, rebalance_ms=-1).error_message == "RebalanceTimeoutMs must be provided in first request."
    assert shb(c, "A", 0, rebalance_ms=0).error_code == E.none


def test_task_sets_must_be_empty_when_joining(profile):
    r = shb(coord(profile), "A", 0, active={"0": [0]})
    assert (r.error_code, r.error_message) == (E.invalid_request, "ActiveTasks must be empty when (re-)joining.")
    r = shb(coord(profile), "A", 0, standby_tasks=None)
    # KIP-1071 and Kafka (throwIfNotEmptyCollection): non-null and empty
    assert (r.error_code, r.error_message) == (E.invalid_request, "StandbyTasks must be empty when (re-)joining.")


def test_topology_required_when_joining(profile):
    r = shb(coord(profile), "A", 0, raw={"topology": None})
    assert (r.error_code, r.error_message) == (E.invalid_request, "Topology must be non-null when (re-)joining.")


def test_all_task_lists_or_none(profile):
    c = coord(profile)
    r = shb(c, "A", 0)
    r = shb(c, "A", r.member_epoch, active={"0": [0]}, standby=None, warmup={})
    assert (r.error_code, r.error_message) == (E.invalid_request, "If one task-type is non-null, all must be non-null.")


def test_topology_only_when_joining_kafka():
    c = coord("kafka")
    r = shb(c, "A", 0)
    r = shb(c, "A", r.member_epoch, topology=STATELESS)
    assert (r.error_code, r.error_message) == (E.invalid_request, "Topology can only be provided when (re-)joining.")


def test_null_task_lists_on_join_are_refused(profile):
    # KIP-1071: "non-null and empty when joining"; Kafka's throwIfNotEmptyCollection refuses null too.
    raw = {"active_tasks": None, "standby_tasks": None, "warmup_tasks": None}
    c = coord(profile)
    r = shb(c, "A", 0, raw=raw)
    assert (r.error_code, r.error_message) == (E.invalid_request, "ActiveTasks must be empty when (re-)joining.")
    assert c.position == 0


def test_a_task_entry_without_partitions_is_not_empty_on_join(profile):
    # Kafka checks the list of TaskIds, not the partitions in it.
    r = shb(coord(profile), "A", 0, raw={"active_tasks": [{"subtopology_id": "0", "partitions": []}]})
    assert (r.error_code, r.error_message) == (E.invalid_request, "ActiveTasks must be empty when (re-)joining.")


def test_ids_are_blank_as_java_trims_them(profile):
    # Kafka's throwIfEmptyString uses String.trim(): chars <= U+0020 go, U+00A0 stays.
    r = shb(coord(profile), "A", 0, group="\x01 \x1f")
    assert (r.error_code, r.error_message) == (E.invalid_request, "GroupId can't be empty.")
    r = shb(coord(profile), "A", 0, rack="\x00")
    assert (r.error_code, r.error_message) == (E.invalid_request, "RackId can't be empty.")
    assert shb(coord(profile), "A", 0, instance="\xa0").error_code == E.none


def test_errors_carry_no_member_id(profile):
    # Kafka answers a refused heartbeat with only its error code and message.
    r = shb(coord(profile), "A", -3)
    assert (r.error_code, r.member_id, r.member_epoch) == (E.invalid_request, "", 0)


def test_regex_check_comes_first_kafka():
    # Kafka checks unsupported features before anything else, even an empty member id.
    t = Topology(0, (Subtopology("0", source_topic_regex=("x.*",)),))
    r = shb(coord("kafka"), "", 0, topology=t)
    assert r.error_message == "Regular expressions for source topics are not supported yet."


def test_topology_only_when_joining_kip():
    c = coord("kip")
    r = joined(c)
    r = shb(c, "A", r.member_epoch, topology=STATELESS)
    assert (r.error_code, r.error_message) == (E.invalid_request, "Topology can only be provided when (re-)joining.")


def test_task_sets_must_be_disjoint_kip():
    c = coord("kip")
    r = joined(c)
    r = shb(c, "A", r.member_epoch, active={"0": [0]}, standby={"0": [0]}, warmup={})
    assert (r.error_code, r.error_message) == (E.invalid_request,
                                               "ActiveTasks, StandbyTasks and WarmupTasks must be disjoint.")


def test_task_ids_must_belong_to_the_topology_kip():
    c = coord("kip")
    epoch = joined(c).member_epoch
    r = shb(c, "A", epoch, active={"9": [0]}, standby={}, warmup={})
    assert (r.error_code, r.error_message) == (E.invalid_request, "Subtopology 9 does not exist in the topology.")
    r = shb(c, "A", epoch, active={"0": [7]}, standby={}, warmup={})  # orders has 3 partitions
    assert r.error_message == "Task 7 for subtopology 0 is invalid. Number of tasks for this subtopology: 3"


def test_task_ids_checked_only_once_configured_kafka():
    c = coord("kafka", payments=1)  # "orders" is missing: the topology cannot be configured
    r = joined(c)
    assert shb(c, "A", r.member_epoch, active={"9": [0]}, standby={}, warmup={}).error_code == E.none
    c.cluster.create_topic("orders", 3)
    assert shb(c, "A", r.member_epoch, active={"9": [0]}, standby={}, warmup={}).error_code == E.invalid_request


def test_static_leave_needs_an_instance_id(profile):
    r = shb(coord(profile), "A", -2)
    assert (r.error_code, r.error_message) == (E.invalid_request, "InstanceId can't be null.")


# -- STREAMS_INVALID_TOPOLOGY: one test per invariant ----------------------------------

def _rejected(topology: Topology, profile: str = "kip") -> str:
    c = coord(profile, orders=3, clicks=3)
    r = shb(c, "A", 0, topology=topology)
    assert r.error_code == E.streams_invalid_topology, (r.error_code, r.error_message)
    assert c.position == 0 and "app" not in c.groups
    return r.error_message


def test_changelog_topic_must_not_fix_its_partitions():
    t = Topology(0, (Subtopology("0", ("orders",), state_changelog_topics=(TopicInfo("app-s-changelog", 3),)),))
    assert _rejected(t) == "Changelog topic app-s-changelog must have an undefined partition count, but it is set to 3."


def test_repartition_source_is_not_a_source_or_changelog_topic():
    t = Topology(0, (Subtopology("0", ("orders",), repartition_sink_topics=("orders",)),
                     Subtopology("1", repartition_source_topics=(TopicInfo("orders"),))))
    assert "must not also be source or changelog topics" in _rejected(t)


def test_changelog_is_not_a_repartition_topic():
    t = Topology(0, (Subtopology("0", ("orders",), repartition_sink_topics=("app-r",),
                                 state_changelog_topics=(TopicInfo("app-r"),)),
                     Subtopology("1", repartition_source_topics=(TopicInfo("app-r"),))))
    assert "must not also be source or" in _rejected(t)


def test_changelog_that_is_a_source_topic_is_invalid_kip():
    t = Topology(0, (Subtopology("0", ("orders",), state_changelog_topics=(TopicInfo("orders"),)),))
    assert "Changelog topics orders must not also be source or repartition topics." == _rejected(t)


def test_changelog_that_is_a_source_topic_is_accepted_kafka():
    # Kafka Streams' source-topic optimisation reuses a source topic as a table's changelog.
    c = coord("kafka")
    t = Topology(0, (Subtopology("0", ("orders",), state_changelog_topics=(TopicInfo("orders"),)),))
    r = joined(c, topology=t)
    assert not statuses(r)                       # ready: nothing to create
    assert "orders" in c.cluster and len(c.cluster.topic_names()) == 1


def test_repartition_source_must_be_sunk_by_another_subtopology():
    t = Topology(0, (Subtopology("0", ("orders",)), Subtopology("1", repartition_source_topics=(TopicInfo("app-r"),))))
    assert "not a repartition sink topic of any other subtopology" in _rejected(t)


def test_copartition_indexes_must_be_valid():
    t = Topology(0, (Subtopology("0", ("orders", "clicks"), copartition_groups=(CopartitionGroup((0, 2)),)),))
    assert "index 2 out of range" in _rejected(t)


def test_repartition_loop_without_sources_is_invalid():
    t = Topology(0, (Subtopology("0", repartition_sink_topics=("app-b",), repartition_source_topics=(TopicInfo("app-a"),)),
                     Subtopology("1", repartition_sink_topics=("app-a",), repartition_source_topics=(TopicInfo("app-b"),))))
    assert "cannot be derived" in _rejected(t)


def test_source_topic_regex_rejected_kafka():
    c = coord("kafka")
    r = shb(c, "A", 0, topology=Topology(0, (Subtopology("0", source_topic_regex=("ord.*",)),)))
    assert (r.error_code, r.error_message) == (E.invalid_request,
                                               "Regular expressions for source topics are not supported yet.")


# -- topology epochs on join (the README's profile table, first row) -----------------------------

OTHER = Topology(0, (Subtopology("0", ("orders",)), Subtopology("1", ("orders",))))


def test_new_group_takes_the_members_topology_epoch(profile):
    c = coord(profile)
    joined(c, topology=STATELESS.with_epoch(4))
    assert sgroup(c).topology.epoch == 4
    assert written(c, 0)[:2] == ["StreamsGroupMemberMetadata", "StreamsGroupTopology"]  # Kafka's order


def test_same_epoch_same_topology_joins(profile):
    c = coord(profile)
    joined(c, "A")
    r = joined(c, "B")
    assert sgroup(c).topology.epoch == 0 and not statuses(r).get(0)


def test_same_epoch_other_topology_is_invalid_topology_epoch_kip():
    c = coord("kip")
    joined(c, "A")
    r = shb(c, "B", 0, topology=OTHER)
    assert r.error_code == E.streams_invalid_topology_epoch


def test_same_epoch_other_topology_is_invalid_request_kafka():
    c = coord("kafka")
    joined(c, "A")
    r = shb(c, "B", 0, topology=OTHER)
    assert (r.error_code, r.error_message) == (E.invalid_request, "Topology updates are not supported yet.")


def test_older_topology_epoch_is_fenced_kip():
    c = coord("kip")
    joined(c, "A", topology=STATELESS.with_epoch(2))
    before = c.position
    r = shb(c, "B", 0, topology=STATELESS.with_epoch(1))
    assert r.error_code == E.streams_topology_fenced and c.position == before


def test_older_topology_epoch_joins_stale_kafka():
    c = coord("kafka")
    joined(c, "A", topology=STATELESS.with_epoch(2))
    r = joined(c, "B", topology=STATELESS.with_epoch(1))
    assert 0 in statuses(r)                          # STALE_TOPOLOGY
    assert sgroup(c).topology.epoch == 2 and sgroup(c).members["B"].topology_epoch == 1


def test_epoch_plus_one_updates_the_topology_kip():
    c = coord("kip")
    joined(c, "A")
    before = c.position
    r = joined(c, "B", topology=OTHER.with_epoch(1))
    g = sgroup(c)
    assert g.topology.epoch == 1 and g.topology.same_as(OTHER)
    assert "StreamsGroupTopology" in written(c, before)
    a = shb(c, "A", sgroup(c).members["A"].member_epoch)
    assert statuses(a)[0].startswith("The member's topology epoch 0 is behind")   # STALE_TOPOLOGY for A
    assert 0 not in statuses(r)


def test_epoch_plus_one_is_refused_kafka():
    c = coord("kafka")
    joined(c, "A")
    assert shb(c, "B", 0, topology=OTHER.with_epoch(1)).error_code == E.invalid_request


def test_skipping_topology_epochs_is_invalid_kip():
    c = coord("kip")
    joined(c, "A")
    assert shb(c, "B", 0, topology=STATELESS.with_epoch(2)).error_code == E.streams_invalid_topology_epoch


def test_topology_compared_as_sets():
    a = Topology(0, (Subtopology("0", ("orders", "clicks")), Subtopology("1", ("x",))))
    b = Topology(3, (Subtopology("1", ("x",)), Subtopology("0", ("clicks", "orders"))))
    assert a.same_as(b) and not a.same_as(OTHER)


def test_stateful_topology_helper():
    assert STATEFUL.subtopologies[0].stateful and not STATELESS.subtopologies[0].stateful
