"""Streams groups on the coordinator (KIP-1071): joining, the epochs, NOT_READY and its
statuses in the KIP's precedence, internal-topic creation, reconciliation of active,
standby and warm-up tasks, fencing, timeouts, shutdown, describe, records and reload.

Test names end in `_kip` / `_kafka` where the profiles differ (the README's profile table)."""
from __future__ import annotations

import pytest

from kgroup import Cluster, Coordinator, ErrorCode
from kgroup.groups.modern import INITIAL_GROUP_EPOCH
from kgroup.groups.streams import StreamsGroupState, Subtopology, TopicInfo, Topology
from kgroup.protocol import request, to_data
from tests.streams_testing import STATEFUL, STATELESS, describe, sgroup, shb, statuses, tasks_of, written

E = ErrorCode
#: the first computed assignment's epoch: a new group starts at epoch 1 (KAFKA-20268), a join bumps it
FIRST = INITIAL_GROUP_EPOCH + 1
MISSING_SOURCE, INCORRECTLY_PARTITIONED, MISSING_INTERNAL, SHUTDOWN, DELAYED = 1, 2, 3, 4, 5


def coord(profile: str = "kip", config: dict | None = None, **topics: int) -> Coordinator:
    return Coordinator(cluster=Cluster(topics or {"orders": 3}, seed=1), profile=profile, config=config)


def assert_reload_equal(c: Coordinator) -> None:
    """KIP-1071 records are the truth: a coordinator rebuilt from the log describes the same."""
    reloaded = Coordinator.load(c.log, cluster=c.cluster, profile=c.profile)
    for gid in c.groups:
        if str(c.groups[gid].type) == "streams":
            assert to_data(describe(reloaded, gid)) == to_data(describe(c, gid))


# -- joining ---------------------------------------------------------------------------

def test_first_member_gets_every_task_and_the_records_in_kafkas_order():
    c = coord()
    r = shb(c, "A", 0)
    assert (r.error_code, r.member_id, r.member_epoch) == (E.none, "A", FIRST)
    assert tasks_of(r.active_tasks) == {"0": {0, 1, 2}} and tasks_of(r.standby_tasks) == {}
    assert r.heartbeat_interval.total_seconds() == 5 and r.status == ()   # Kafka: an empty list, never null
    assert written(c, 0) == ["StreamsGroupMemberMetadata", "StreamsGroupTopology", "StreamsGroupMetadata",
                             "StreamsGroupTargetAssignmentMember", "StreamsGroupTargetAssignmentMetadata",
                             "StreamsGroupCurrentMemberAssignment"]
    g = sgroup(c)
    assert (g.group_epoch, g.assignment_epoch, g.state) == (FIRST, FIRST, StreamsGroupState.STABLE)
    assert_reload_equal(c)


def test_unchanged_heartbeat_writes_nothing_and_omits_tasks():
    c = coord()
    shb(c, "A", 0)
    before = c.position
    r = shb(c, "A", FIRST)
    assert r.error_code == E.none and r.active_tasks is None and c.position == before


def test_tasks_are_sent_on_join_and_change_only():
    # Kafka (GroupMetadataManager.streamsGroupHeartbeat): "The assignment is only provided in the
    # following cases: 1. The member is joining. 2. The member's assignment has been updated."
    c = coord()
    shb(c, "A", 0)
    r = shb(c, "A", FIRST, active={"0": [0, 1, 2]}, standby={}, warmup={}, process="p-A", rebalance_ms=30_000)
    assert r.active_tasks is None
    assert shb(c, "A", 0).active_tasks is not None      # a (re)join always gets the task lists


def test_second_member_revoke_then_assign_active_tasks():
    c = coord()
    shb(c, "A", 0)
    b = shb(c, "B", 0)
    assert b.member_epoch == FIRST + 1 and tasks_of(b.active_tasks) == {}    # A still owns everything
    a = shb(c, "A", FIRST, active={"0": [0, 1, 2]}, standby={}, warmup={})
    kept = tasks_of(a.active_tasks)["0"]
    assert a.member_epoch == FIRST and len(kept) in (1, 2)                 # revoke first, epoch kept
    a = shb(c, "A", FIRST, active={"0": sorted(kept)}, standby={}, warmup={})
    assert a.member_epoch == FIRST + 1
    b = shb(c, "B", FIRST + 1, active={}, standby={}, warmup={})
    assert tasks_of(b.active_tasks)["0"] == {0, 1, 2} - kept
    assert sgroup(c).state == StreamsGroupState.STABLE
    assert_reload_equal(c)


def test_list_groups_shows_type_streams_and_not_ready():
    c = coord()
    shb(c, "A", 0, topology=Topology(0, (Subtopology("0", ("nope",)),)))
    r = c.handle(request("ListGroups", 5, states_filter=[], types_filter=["streams"]))
    assert [(g.group_id, g.group_state, g.group_type) for g in r.groups] == [("app", "NotReady", "streams")]


def test_consumer_heartbeat_to_a_streams_group_and_back():
    c = coord()
    shb(c, "A", 0)
    r = c.handle(request("ConsumerGroupHeartbeat", 1, group_id="app", member_id="x", member_epoch=0,
                         rebalance_timeout=1000, subscribed_topic_names=["orders"], topic_partitions=[]))
    assert r.error_code == E.group_id_not_found
    c.handle(request("ConsumerGroupHeartbeat", 1, group_id="cg", member_id="x", member_epoch=0,
                     rebalance_timeout=1000, subscribed_topic_names=["orders"], topic_partitions=[]))
    r = shb(c, "A", 0, group="cg")
    assert (r.error_code, r.error_message) == (E.group_id_not_found, "Group cg is not a streams group.")


def test_unknown_member():
    c = coord()
    shb(c, "A", 0)
    r = shb(c, "Z", FIRST)
    assert (r.error_code, r.error_message) == (E.unknown_member_id, "Member Z is not a member of group app.")


def test_group_max_size():
    c = coord(config={"group.streams.max.size": 1})
    shb(c, "A", 0)
    assert shb(c, "B", 0).error_code == E.group_max_size_reached
    assert shb(c, "A", 0).error_code == E.none   # a known member may rejoin


def test_unknown_group_for_a_heartbeat():
    r = shb(coord(), "A", 3)
    assert (r.error_code, r.error_message) == (E.group_id_not_found, "Streams group app not found.")


# -- fencing ---------------------------------------------------------------------------

def test_lost_response_previous_epoch_with_subset_is_accepted():
    c = coord()
    shb(c, "A", 0)
    shb(c, "B", 0)
    shb(c, "A", FIRST, active={"0": [0, 1, 2]}, standby={}, warmup={})   # revoking, epoch kept
    kept = sgroup(c).members["A"].assigned.active["0"]
    shb(c, "A", FIRST, active={"0": sorted(kept)}, standby={}, warmup={})  # -> next epoch, response lost
    assert sgroup(c).members["A"].member_epoch == FIRST + 1
    r = shb(c, "A", FIRST, active={"0": sorted(kept)}, standby={}, warmup={})
    assert r.error_code == E.none and r.member_epoch == FIRST + 1


def test_fenced_epoch_removes_the_member_kip():
    c = coord("kip")
    shb(c, "A", 0)
    epoch = sgroup(c).group_epoch
    r = shb(c, "A", 7)
    assert r.error_code == E.fenced_member_epoch
    assert "A" not in sgroup(c).members and sgroup(c).group_epoch == epoch + 1


def test_fenced_epoch_writes_nothing_kafka():
    c = coord("kafka", config={"group.streams.initial.rebalance.delay.ms": 0})
    shb(c, "A", 0)
    before = c.position
    r = shb(c, "A", 7)
    assert r.error_code == E.fenced_member_epoch and c.position == before and "A" in sgroup(c).members


def test_session_timeout_removes_the_member():
    c = coord()
    shb(c, "A", 0)
    shb(c, "B", 0)
    c.advance(44_000)
    shb(c, "A", FIRST, active={"0": [0, 1, 2]}, standby={}, warmup={})
    c.advance(2_000)                                   # B never heartbeat again: 46 s > 45 s
    assert "B" not in sgroup(c).members and "A" in sgroup(c).members
    assert_reload_equal(c)


def test_rebalance_timeout_fences_a_member_that_does_not_revoke():
    c = coord()
    shb(c, "A", 0, rebalance_ms=10_000)
    shb(c, "B", 0)
    shb(c, "A", FIRST, active={"0": [0, 1, 2]}, standby={}, warmup={})   # asked to revoke
    for _ in range(3):
        c.advance(4_000)
        shb(c, "B", FIRST + 1)
        shb(c, "A", FIRST, active={"0": [0, 1, 2]}, standby={}, warmup={}) if "A" in sgroup(c).members else None
    assert "A" not in sgroup(c).members


# -- NOT_READY, in the KIP's precedence ------------------------------------------------

def test_missing_source_topic_status_names_the_topics():
    c = coord(orders=3)
    t = Topology(0, (Subtopology("0", ("orders", "clicks", "views")),))
    r = shb(c, "A", 0, topology=t)
    assert statuses(r) == {MISSING_SOURCE: "Source topics clicks, views are missing."}
    assert tasks_of(r.active_tasks) == {} and sgroup(c).state == StreamsGroupState.NOT_READY
    # Not configured: described as the members sent it (Kafka's StreamsGroup.asDescribedGroup).
    assert [list(s.source_topics) for s in describe(c).topology.subtopologies] == [["orders", "clicks", "views"]]
    c.cluster.create_topic("clicks", 3)
    c.cluster.create_topic("views", 3)
    r = shb(c, "A", r.member_epoch)
    assert statuses(r) == {} and tasks_of(r.active_tasks) == {"0": {0, 1, 2}}


def test_regex_matching_nothing_is_a_missing_source_kip():
    c = coord(orders=3)
    r = shb(c, "A", 0, topology=Topology(0, (Subtopology("0", source_topic_regex=("click.*",)),)))
    assert statuses(r) == {MISSING_SOURCE: "Source topic regular expressions click.* match no topic."}


def test_incorrectly_partitioned_copartition_group():
    from kgroup.groups.streams import CopartitionGroup
    c = coord(orders=3, clicks=2)
    t = Topology(0, (Subtopology("0", ("orders", "clicks"), copartition_groups=(CopartitionGroup((0, 1)),)),))
    r = shb(c, "A", 0, topology=t)
    assert statuses(r) == {INCORRECTLY_PARTITIONED:
                           "Following topics do not have the same number of partitions: [{clicks=2, orders=3}]"}


def test_missing_sources_take_precedence_over_partitioning_and_internal_topics():
    from kgroup.groups.streams import CopartitionGroup
    c = coord(orders=3, clicks=2)
    t = Topology(0, (Subtopology("0", ("orders", "clicks", "gone"), copartition_groups=(CopartitionGroup((0, 1)),),
                                 state_changelog_topics=(TopicInfo("app-s-changelog"),)),))
    assert set(statuses(shb(c, "A", 0, topology=t))) == {MISSING_SOURCE}


def test_internal_topics_created_sized_from_the_sources_then_tasks_assigned():
    c = coord(orders=4)
    r = shb(c, "A", 0, topology=STATEFUL)
    assert statuses(r) == {MISSING_INTERNAL: "Internal topics app-store-changelog are missing. "
                                             "Creating them: app-store-changelog (attempt 1)."}
    assert tasks_of(r.active_tasks) == {}
    epoch = sgroup(c).group_epoch
    c.advance(0)                                        # the CreateTopics "request" completes
    assert c.cluster.partitions("app-store-changelog") == 4
    r = shb(c, "A", r.member_epoch)
    assert statuses(r) == {} and sgroup(c).group_epoch == epoch + 1
    assert tasks_of(r.active_tasks) == {"0": {0, 1, 2, 3}}


def test_one_creation_in_flight_and_its_detail():
    c = coord(orders=2)
    c.cluster.topic_creation_delay_ms = 1_000
    r = shb(c, "A", 0, topology=STATEFUL)
    r = shb(c, "B", 0, topology=STATEFUL)
    assert "Creating them: app-store-changelog (attempt 1)." in statuses(r)[MISSING_INTERNAL]
    assert sum(k.startswith("streams-create-topics") for k in c.timers.pending()) == 1
    c.advance(1_000)
    assert "app-store-changelog" in c.cluster


def test_failed_creation_backs_off_and_says_why():
    c = coord(orders=2)
    c.cluster.topic_creation_delay_ms = 100
    real_create = c.cluster.create_topic

    def refuse(name, partitions, topic_id=None):
        raise PermissionError("TOPIC_AUTHORIZATION_FAILED")
    c.cluster.create_topic = refuse
    r = shb(c, "A", 0, topology=STATEFUL)
    c.advance(100)                                      # the first attempt fails
    r = shb(c, "A", r.member_epoch)
    assert "The last attempt to create them failed (app-store-changelog: TOPIC_AUTHORIZATION_FAILED)" \
        in statuses(r)[MISSING_INTERNAL]
    c.advance(500)
    shb(c, "A", r.member_epoch)                         # still backing off: no new attempt
    assert not any(k.startswith("streams-create-topics") for k in c.timers.pending())
    c.cluster.create_topic = real_create
    c.advance(1_000)
    shb(c, "A", r.member_epoch)                         # back-off over: attempt 2
    c.advance(100)
    assert c.cluster.partitions("app-store-changelog") == 2


def test_internal_topic_with_the_wrong_partition_count():
    c = coord(orders=2)
    c.cluster.create_topic("app-store-changelog", 5)    # exists with the wrong partition count
    r = shb(c, "A", 0, topology=STATEFUL)
    assert statuses(r) == {INCORRECTLY_PARTITIONED: "Internal topics are incorrectly partitioned: "
                                                    "app-store-changelog has 5 partitions, expected 2."}


def test_repartition_topic_derived_from_upstream_and_created():
    c = coord(orders=3, clicks=6)
    t = Topology(0, (Subtopology("0", ("orders", "clicks"), repartition_sink_topics=("app-r",)),
                     Subtopology("1", repartition_source_topics=(TopicInfo("app-r"),),
                                 state_changelog_topics=(TopicInfo("app-agg-changelog"),))))
    shb(c, "A", 0, topology=t)
    c.advance(0)
    assert (c.cluster.partitions("app-r"), c.cluster.partitions("app-agg-changelog")) == (6, 6)
    d = describe(c)
    assert [s.subtopology_id for s in d.topology.subtopologies] == ["0", "1"]
    assert d.topology.subtopologies[1].repartition_source_topics[0].partitions == 6


def test_declared_repartition_partitions_win():
    c = coord(orders=3)
    t = Topology(0, (Subtopology("0", ("orders",), repartition_sink_topics=("app-r",)),
                     Subtopology("1", repartition_source_topics=(TopicInfo("app-r", 8),))))
    shb(c, "A", 0, topology=t)
    c.advance(0)
    assert c.cluster.partitions("app-r") == 8


def test_new_partitions_bump_exactly_the_groups_reading_the_topic():
    c = coord(orders=3, payments=2)
    shb(c, "A", 0, group="app")
    shb(c, "A", 0, group="pay", topology=Topology(0, (Subtopology("0", ("payments",)),)))
    app, pay = sgroup(c, "app").group_epoch, sgroup(c, "pay").group_epoch
    c.cluster.increase_partitions("orders", 5)
    r = shb(c, "A", FIRST, group="app")
    shb(c, "A", FIRST, group="pay")
    assert sgroup(c, "app").group_epoch == app + 1 and sgroup(c, "pay").group_epoch == pay
    assert tasks_of(r.active_tasks) == {"0": {0, 1, 2, 3, 4}}


def test_a_new_topic_matching_the_regex_bumps_the_group_kip():
    c = coord(**{"orders-eu": 1})
    r = shb(c, "A", 0, topology=Topology(0, (Subtopology("0", source_topic_regex=("orders-.*",)),)))
    epoch = sgroup(c).group_epoch
    c.cluster.create_topic("orders-us", 4)
    r = shb(c, "A", r.member_epoch)
    assert sgroup(c).group_epoch == epoch + 1 and tasks_of(r.active_tasks) == {"0": {0, 1, 2, 3}}
    assert list(describe(c).topology.subtopologies[0].source_topics) == ["orders-eu", "orders-us"]


# -- standby and warm-up tasks ---------------------------------------------------------

def test_standbys_on_another_process_and_blocked_within_one():
    c = coord(config={"group.streams.num.standby.replicas": 1}, orders=2)
    c.cluster.create_topic("app-store-changelog", 2)
    shb(c, "A1", 0, topology=STATEFUL, process="p1")
    r = shb(c, "B1", 0, topology=STATEFUL, process="p2")
    g = sgroup(c)
    for task in [("0", 0), ("0", 1)]:
        holders = [m.process_id for m in g.members.values() for ts in (g.target_assignment[m.member_id],)
                   if task in ts.active_ids() or task in ts.standby_ids()]
        assert sorted(holders) == ["p1", "p2"]       # one active and one standby, never one process twice
    assert_reload_equal(c)


def test_dynamic_group_config_applies_on_the_next_heartbeat():
    c = coord(orders=2)
    c.cluster.create_topic("app-store-changelog", 2)
    shb(c, "A", 0, topology=STATEFUL, process="p1")
    shb(c, "B", 0, topology=STATEFUL, process="p2")
    epoch = sgroup(c).group_epoch
    r = c.handle(request("IncrementalAlterConfigs", 1, validate_only=False, resources=[
        {"resource_type": 32, "resource_name": "app",
         "configs": [{"name": "streams.num.standby.replicas", "config_operation": 0, "value": "1"}]}]))
    assert r.responses[0].error_code == E.none
    shb(c, "A", sgroup(c).members["A"].member_epoch)
    g = sgroup(c)
    assert g.group_epoch == epoch + 1 and g.assignment_configs["num.standby.replicas"] == "1"
    assert sum(len(t.standby_ids()) for t in g.target_assignment.values()) == 2


def test_kips_group_config_spelling_is_accepted():
    c = coord()
    r = c.handle(request("IncrementalAlterConfigs", 1, validate_only=False, resources=[
        {"resource_type": 32, "resource_name": "app",
         "configs": [{"name": "group.streams.heartbeat.interval.ms", "config_operation": 0, "value": "7000"}]}]))
    assert r.responses[0].error_code == E.none
    assert shb(c, "A", 0).heartbeat_interval.total_seconds() == 7


# -- shutdown, delay, endpoints --------------------------------------------------------

def test_shutdown_application_reaches_every_member_also_after_the_requester_left():
    c = coord()
    shb(c, "A", 0)
    shb(c, "B", 0)
    r = shb(c, "A", -1, shutdown=True)
    assert r.error_code == E.none
    r = shb(c, "B", sgroup(c).members["B"].member_epoch)
    assert "Streams group member A encountered a fatal error" in statuses(r)[SHUTDOWN]


def test_initial_rebalance_delay_kafka():
    c = coord("kafka")                                  # group.streams.initial.rebalance.delay.ms = 3000
    r = shb(c, "A", 0)
    assert DELAYED in statuses(r) and tasks_of(r.active_tasks) == {}
    c.advance(3_000)
    r = shb(c, "A", r.member_epoch)
    assert DELAYED not in statuses(r) and tasks_of(r.active_tasks) == {"0": {0, 1, 2}}


def test_no_initial_delay_kip():
    assert tasks_of(shb(coord("kip"), "A", 0).active_tasks) == {"0": {0, 1, 2}}


def test_endpoint_information_only_when_the_member_is_behind():
    c = coord()
    r = shb(c, "A", 0, endpoint=("a.example", 8080))
    # The epoch is soft state: the group this join created starts from its records at 0 (PR #20854).
    assert r.endpoint_information_epoch == 0
    info = r.partitions_by_user_endpoint
    assert [(e.user_endpoint.host, [(p.topic, list(p.partitions)) for p in e.active_partitions]) for e in info] == \
        [("a.example", [("orders", [0, 1, 2])])]
    r = shb(c, "A", FIRST, endpoint_epoch=r.endpoint_information_epoch)
    assert r.partitions_by_user_endpoint is None
    b = shb(c, "B", 0, endpoint=("b.example", 8080))   # B's tasks moved: the map changed
    assert b.endpoint_information_epoch == 1 and len(b.partitions_by_user_endpoint) == 2
    assert shb(c, "A", FIRST, endpoint_epoch=0).partitions_by_user_endpoint is not None


# -- describe --------------------------------------------------------------------------

def test_describe_errors_per_group():
    c = coord()
    shb(c, "A", 0)
    c.handle(request("ConsumerGroupHeartbeat", 1, group_id="cg", member_id="x", member_epoch=0,
                     rebalance_timeout=1000, subscribed_topic_names=["orders"], topic_partitions=[]))
    r = c.handle(request("StreamsGroupDescribe", 0, group_ids=["app", "", "nope", "cg"],
                         include_authorized_operations=False))
    # Kafka answers the empty id first, then partition by partition (GroupCoordinatorService)
    assert r.groups[0].group_id == ""
    assert {g.group_id: g.error_code for g in r.groups} == {
        "app": E.none, "": E.invalid_group_id, "nope": E.group_id_not_found, "cg": E.group_id_not_found}


def test_describe_every_field():
    c = coord()
    shb(c, "A", 0, instance="i-1", rack="r1", endpoint=("h", 1), client_tags={"zone": "a"},
        task_offsets={("0", 0): 5}, task_end_offsets={("0", 0): 9}, client_id="cli")
    d = describe(c)
    assert (d.group_state, d.group_epoch, d.assignment_epoch, d.topology.epoch) == ("Stable", FIRST, FIRST, 0)
    m = d.members[0]
    assert (m.member_id, m.instance_id, m.rack_id, m.client_id, m.process_id, m.topology_epoch, m.is_classic) == \
        ("A", "i-1", "r1", "cli", "p-A", 0, False)
    assert (m.user_endpoint.host, m.user_endpoint.port) == ("h", 1)
    assert [(kv.key, kv.value) for kv in m.client_tags] == [("zone", "a")]
    assert [(t.subtopology_id, t.partition, t.offset) for t in m.task_offsets] == [("0", 0, 5)]
    assert [(t.subtopology_id, t.partition, t.offset) for t in m.task_end_offsets] == [("0", 0, 9)]
    assert tasks_of(m.assignment.active_tasks) == tasks_of(m.target_assignment.active_tasks) == {"0": {0, 1, 2}}


def test_delete_streams_group_only_when_empty():
    c = coord()
    shb(c, "A", 0)
    r = c.handle(request("DeleteGroups", 2, groups_names=["app"]))
    assert r.results[0].error_code == E.non_empty_group
    shb(c, "A", -1)
    r = c.handle(request("DeleteGroups", 2, groups_names=["app"]))
    assert r.results[0].error_code == E.none and "app" not in c.groups


@pytest.mark.parametrize("profile", ["kip", "kafka"])
def test_every_record_round_trips_and_reload_equals_live(profile):
    from kgroup.records import decode_record
    c = coord(profile, config={"group.streams.initial.rebalance.delay.ms": 0}, orders=3)
    shb(c, "A", 0, topology=STATEFUL)
    c.advance(0)
    shb(c, "A", sgroup(c).members["A"].member_epoch)
    shb(c, "B", 0, topology=STATEFUL)
    for entry in c.log:
        assert decode_record(*entry.record.encode()) == entry.record
    assert_reload_equal(c)


def test_group_metrics_by_protocol_state_and_rebalances():
    from kgroup.metrics import PREFIX
    c = coord(orders=3)
    shb(c, "A", 0)
    shb(c, "A", 0, group="broken", topology=Topology(0, (Subtopology("0", ("nope",)),)))
    c.handle(request("ConsumerGroupHeartbeat", 1, group_id="cg", member_id="x", member_epoch=0,
                     rebalance_timeout=1000, subscribed_topic_names=["orders"], topic_partitions=[]))
    m = c.metrics()
    assert m[f"{PREFIX},name=group-count,protocol=streams"] == 2
    assert m[f"{PREFIX},name=group-count,protocol=consumer"] == 1
    assert m[f"{PREFIX},name=streams-group-count,state=stable"] == 1
    assert m[f"{PREFIX},name=streams-group-count,state=not_ready"] == 1
    shb(c, "B", 0)                                       # app: epoch 1 -> 2
    m = c.metrics()
    assert m[f"{PREFIX},name=streams-group-rebalance-count"] == 3
    assert m[f"{PREFIX},name=streams-group-rebalance-rate"] == 3 / 30
    c.advance(31_000)
    assert c.metrics()[f"{PREFIX},name=streams-group-rebalance-rate"] == 0
