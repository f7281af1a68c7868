"""Share groups on the group coordinator (KIP-932 membership): validation, join/leave, session
timeout, max size, states, assignment without fencing, epochs, records and reload, describe,
ListGroups/DeleteGroups, and GROUP_ID_NOT_FOUND across group types.

Kafka's behaviour is GroupCoordinatorService.throwIfShareGroupHeartbeatRequestIsInvalid and
GroupMetadataManager.shareGroupHeartbeat. Test names end in `_kip` / `_kafka` where the
profiles differ (the README's profile table)."""
from __future__ import annotations

import pytest

from kgroup import ErrorCode
from kgroup.dumps.replay import describe_groups
from kgroup.groups.share.group import ShareGroup
from kgroup.metrics import PREFIX
from kgroup.protocol import ms, request
from tests.share.share_testing import (FIRST, M1, M2, M3, M4, assert_reload_equal, assignment, coord, describe, has_state, hb,
                                      join, parts, written)

E = ErrorCode


# -- validation (GroupCoordinatorService.throwIfShareGroupHeartbeatRequestIsInvalid) -----------

@pytest.mark.parametrize("fields, message", [
    (dict(member_id="", member_epoch=0, subscribed_topic_names=["orders"]), "MemberId can't be empty."),
    (dict(member_id=" \t", member_epoch=1), "MemberId can't be empty."),
    # MemberId is checked before GroupId, as Kafka does
    (dict(group_id="", member_id="", member_epoch=0, subscribed_topic_names=["orders"]), "MemberId can't be empty."),
    (dict(group_id="  ", member_id=M1, member_epoch=0, subscribed_topic_names=["orders"]), "GroupId can't be empty."),
    (dict(member_id=M1, member_epoch=0, rack_id="", subscribed_topic_names=["orders"]), "RackId can't be empty."),
    (dict(member_id=M1, member_epoch=0, subscribed_topic_names=None), "SubscribedTopicNames must be set in first request."),
    (dict(member_id=M1, member_epoch=0, subscribed_topic_names=[]), "SubscribedTopicNames must be set in first request."),
    (dict(member_id=M1, member_epoch=-2), "MemberEpoch is invalid."),
    (dict(member_id=M1, member_epoch=-7), "MemberEpoch is invalid."),
])
@pytest.mark.parametrize("profile", ["kip", "kafka"])
def test_invalid_heartbeats_are_rejected_and_write_nothing(profile, fields, message):
    c = coord(profile)
    r = c.handle(request("ShareGroupHeartbeat", 1, **{"group_id": "g", **fields}))
    assert (r.error_code, r.error_message) == (E.invalid_request, message)
    assert (r.member_id, r.member_epoch, ms(r.heartbeat_interval), r.assignment) == (None, 0, 0, None)
    assert c.position == 0


def test_not_coordinator_for_a_group_on_another_partition():
    from kgroup import Cluster, Coordinator
    c = Coordinator(cluster=Cluster({"orders": 1}, seed=1), hosted_partitions=[0])
    gid = next(f"g{i}" for i in range(100) if c.partition_for(f"g{i}") != 0)
    assert join(c, M1, group=gid).error_code == E.not_coordinator


# -- join, heartbeat, leave ---------------------------------------------------------------------

def test_join_gets_the_first_epoch_the_interval_and_records_kip():
    # seed: the simple assignor gives all partitions of the subscribed topics at once; the new
    # group starts at epoch 1, so its first assignment is epoch 2 (KAFKA-20268)
    c = coord("kip")
    r = join(c, M1)
    assert (r.error_code, r.member_id, r.member_epoch, ms(r.heartbeat_interval)) == (E.none, M1, FIRST, 5000)
    assert parts(c, r) == [0, 1, 2]
    assert written(c, 0) == ["ShareGroupMemberMetadata", "ShareGroupMetadata", "ShareGroupTargetAssignmentMember",
                             "ShareGroupTargetAssignmentMetadata", "ShareGroupCurrentMemberAssignment",
                             "ShareGroupStatePartitionMetadata", "ShareGroupStatePartitionMetadata"]
    g = c.groups["g"]
    assert isinstance(g, ShareGroup) and (g.group_epoch, g.assignment_epoch, g.state) == (FIRST, FIRST, "Stable")
    assert g.state_metadata.partitions() == {c.cluster.topic_id("orders"): frozenset({0, 1, 2})}
    assert not g.state_metadata.initializing
    assert_reload_equal(c)


def test_join_waits_for_initialized_share_partitions_kafka():
    # GroupMetadataManager: only initialised share-partitions are assignable; the next heartbeat
    # finds them initialised (initializedAssignmentPending), bumps the epoch and assigns them
    c = coord("kafka")
    r = join(c, M1)
    assert (r.error_code, r.member_epoch, assignment(r)) == (E.none, FIRST, {})
    init = [call for call in c.soft_state["share.persister"].calls if call[0] == "initialize"]
    # the state epoch is the group epoch that asked for the initialisation
    assert [(call[3], call[4], call[5]) for call in init] == [(0, FIRST, -1), (1, FIRST, -1), (2, FIRST, -1)]
    r = hb(c, M1, FIRST)
    assert (r.member_epoch, parts(c, r)) == (FIRST + 1, [0, 1, 2])
    assert_reload_equal(c)


def test_steady_heartbeat_writes_nothing_and_sends_no_assignment():
    c = coord("kip")
    join(c, M1)
    before = c.position
    r = hb(c, M1, FIRST)
    assert (r.error_code, r.member_epoch, r.assignment) == (E.none, FIRST, None)
    assert c.position == before


def test_full_heartbeat_repeats_the_assignment():
    # isFullRequest: SubscribedTopicNames set -> the assignment is in the response
    c = coord("kip")
    join(c, M1)
    r = hb(c, M1, FIRST, ["orders"])
    assert parts(c, r) == [0, 1, 2] and c.groups["g"].group_epoch == FIRST


def test_unknown_group_and_unknown_member():
    c = coord()
    r = hb(c, M1, 1)
    assert (r.error_code, r.error_message) == (E.group_id_not_found, "Share group g not found.")
    join(c, M1)
    r = hb(c, M2, FIRST)
    assert (r.error_code, r.error_message) == (E.unknown_member_id, f"Member {M2} is not a member of group g.")


def test_fenced_member_epochs():
    c = coord("kip")
    join(c, M1)
    join(c, M2)
    hb(c, M1, FIRST)  # M1 takes M2's join's epoch, previous FIRST
    assert c.groups["g"].members[M1].member_epoch == FIRST + 1
    r = hb(c, M1, FIRST + 5)
    assert r.error_code == E.fenced_member_epoch
    assert r.error_message == (f"The share group member has a greater member epoch ({FIRST + 5}) than the one known "
                               f"by the group coordinator ({FIRST + 1}). The member must abandon all its partitions "
                               "and rejoin.")
    # the previous epoch is accepted (the response that moved it may have been lost)
    assert hb(c, M1, FIRST).error_code == E.none
    r = hb(c, M2, 0, ["orders"])  # epoch 0 with its own member id: a rejoin, always accepted
    assert r.error_code == E.none
    c2 = coord("kip")
    join(c2, M1)
    join(c2, M2)
    hb(c2, M1, FIRST)
    hb(c2, M1, FIRST + 1, ["payments"])  # a new subscription: epoch FIRST + 2, previous FIRST + 1
    r = hb(c2, M1, FIRST)
    assert r.error_code == E.fenced_member_epoch
    assert r.error_message.endswith(f"({FIRST + 2}), and it does not match the previous member epoch ({FIRST + 1}). "
                                    "The member must abandon all its partitions and rejoin.")


def test_a_fenced_member_rejoins_with_epoch_0_and_gets_its_state_back():
    # issue 20 item 3 (Kafka's testShareGroupMemberCanRejoinWithEpochZero, share counterpart of
    # KAFKA-19233): FENCED_MEMBER_EPOCH, then epoch 0 under the same member id -> the member's
    # epoch and assignment, nothing written, nothing bumped
    c = coord("kip")
    join(c, M1)
    assert hb(c, M1, FIRST + 7).error_code == E.fenced_member_epoch
    before = c.position
    r = join(c, M1)
    assert (r.error_code, r.member_id, r.member_epoch, parts(c, r)) == (E.none, M1, FIRST, [0, 1, 2])
    assert c.position == before and c.groups["g"].group_epoch == FIRST


def test_leave_removes_the_member_and_bumps_the_epoch():
    c = coord("kip")
    join(c, M1)
    join(c, M2)
    before = c.position
    r = hb(c, M1, -1)
    assert (r.error_code, r.member_id, r.member_epoch, ms(r.heartbeat_interval)) == (E.none, M1, -1, 0)
    assert written(c, before) == ["~ShareGroupCurrentMemberAssignment", "~ShareGroupTargetAssignmentMember",
                                  "~ShareGroupMemberMetadata", "ShareGroupMetadata"]
    g = c.groups["g"]
    assert list(g.members) == [M2] and g.group_epoch == FIRST + 2
    before = c.position
    hb(c, M2, -1)
    # the last member out: the assignment epoch catches up, so the empty group has group epoch ==
    # assignment epoch (KAFKA-20442's share counterpart)
    assert written(c, before) == ["~ShareGroupCurrentMemberAssignment", "~ShareGroupTargetAssignmentMember",
                                  "~ShareGroupMemberMetadata", "ShareGroupMetadata", "ShareGroupTargetAssignmentMetadata"]
    assert (g.state, g.group_epoch, g.assignment_epoch, g.metadata_hash) == ("Empty", FIRST + 3, FIRST + 3, 0)
    assert_reload_equal(c)


def test_leave_of_an_unknown_member_or_group():
    c = coord()
    r = hb(c, M1, -1)
    assert (r.error_code, r.error_message) == (E.group_id_not_found, "Group g not found.")
    join(c, M1)
    r = hb(c, M2, -1)
    assert r.error_code == E.unknown_member_id and c.groups["g"].members.keys() == {M1}


def test_a_member_rejoins_after_leaving():
    c = coord("kip")
    join(c, M1)
    hb(c, M1, -1)
    r = join(c, M1)
    assert (r.error_code, r.member_epoch) == (E.none, FIRST + 2)
    assert parts(c, r) == [0, 1, 2]


# -- session timeout ------------------------------------------------------------------------------

def test_session_timeout_removes_a_silent_member():
    c = coord("kip")
    join(c, M1)
    join(c, M2)
    c.advance(40_000)
    hb(c, M1, FIRST)  # M1 stays alive
    c.advance(5_001)  # M2's 45 s session (group.share.session.timeout.ms) ends
    g = c.groups["g"]
    assert list(g.members) == [M1] and g.group_epoch == FIRST + 2
    c.advance(40_000)
    assert not g.members and g.state == "Empty"
    assert g.group_epoch == g.assignment_epoch == FIRST + 3  # fenced last: the epochs meet again
    # seed: a member kicked out "realises it's been kicked out" on its next heartbeat
    assert hb(c, M2, FIRST).error_code == E.unknown_member_id
    assert_reload_equal(c)


def test_session_timeout_per_group_config():
    # share.session.timeout.ms / share.heartbeat.interval.ms are dynamic group configs
    c = coord("kip")
    c.cluster.group_configs["g"] = {"share.session.timeout.ms": 50_000, "share.heartbeat.interval.ms": 7000}
    r = join(c, M1)
    assert ms(r.heartbeat_interval) == 7000
    c.advance(49_000)
    assert M1 in c.groups["g"].members
    c.advance(1_000)
    assert M1 not in c.groups["g"].members


def test_reload_gives_members_a_fresh_session():
    from kgroup import Coordinator
    c = coord("kip")
    join(c, M1)
    c.advance(30_000)
    reloaded = Coordinator.load(c.log, cluster=c.cluster, profile=c.profile)
    reloaded.advance(44_000)
    assert M1 in reloaded.groups["g"].members
    reloaded.advance(1_001)
    assert M1 not in reloaded.groups["g"].members


# -- max size -------------------------------------------------------------------------------------

def test_group_max_size_reached():
    c = coord("kip", config={"group.share.max.size": 2})
    join(c, M1)
    join(c, M2)
    before = c.position
    r = join(c, M3)
    assert (r.error_code, r.error_message) == (E.group_max_size_reached,
                                               "The share group has reached its maximum capacity of 2 members.")
    assert c.position == before
    assert hb(c, M1, FIRST).error_code == E.none  # members already in keep heartbeating
    hb(c, M2, -1)
    assert join(c, M3).error_code == E.none


# -- states and assignment without fencing ------------------------------------------------------------

def test_states_are_only_empty_stable_dead_kafka():
    # KIP-932 "Share group states": no ASSIGNING or RECONCILING, even while members lag behind
    c = coord("kafka")
    join(c, M1)
    hb(c, M1, FIRST)  # its share-partitions are initialised now: a new assignment, epoch FIRST + 1
    join(c, M2)
    g = c.groups["g"]
    assert g.members[M1].member_epoch == FIRST + 1 < g.group_epoch
    assert g.state == "Stable"
    hb(c, M1, FIRST + 1, None)
    hb(c, M1, -1)
    hb(c, M2, -1)
    assert g.state == "Empty"
    assert c.handle(request("DeleteGroups", 2, groups_names=["g"])).results[0].error_code == E.none
    assert g.state == "Dead" and "g" not in c.groups


def test_members_take_a_new_assignment_at_once_kafka():
    # No fencing, no revocation: M1 gives up partitions and takes the new epoch in one heartbeat
    c = coord("kafka")
    join(c, M1)
    hb(c, M1, FIRST)
    assert parts(c, describe(c)[0].members[0]) == [0, 1, 2]
    r = join(c, M2)
    assert r.member_epoch == FIRST + 2
    r1 = hb(c, M1, FIRST + 1)
    g = c.groups["g"]
    assert r1.member_epoch == FIRST + 2 and g.members[M1].previous_member_epoch == FIRST + 1
    together = set(parts(c, r1)) | set(parts(c, r))
    assert together == {0, 1, 2} and set(parts(c, r1)) & set(parts(c, r)) == set()
    assert_reload_equal(c)


def test_every_member_gets_every_partition_kip():
    # seed: "assigns all partitions of all subscribed topics to all members"
    c = coord("kip")
    rs = [join(c, m) for m in (M1, M2, M3, M4)]
    assert [parts(c, hb(c, m, r.member_epoch, ["orders"])) for m, r in zip((M1, M2, M3, M4), rs)] == [[0, 1, 2]] * 4


def test_more_members_than_partitions_all_get_one_kafka():
    c = coord("kafka")
    join(c, M1)
    for m in (M2, M3, M4):
        join(c, m)
    for m in (M1, M2, M3, M4):
        r = hb(c, m, c.groups["g"].members[m].member_epoch, ["orders"])
        assert len(parts(c, r)) >= 1


# -- epochs ------------------------------------------------------------------------------------

def test_subscription_change_bumps_the_epoch():
    c = coord("kip")
    join(c, M1)
    r = hb(c, M1, FIRST, ["orders", "payments"])
    assert (r.member_epoch, parts(c, r, "payments")) == (FIRST + 1, [0, 1])
    r = hb(c, M1, FIRST + 1, ["orders", "payments"])  # same subscription: no bump
    assert r.member_epoch == FIRST + 1 and c.groups["g"].group_epoch == FIRST + 1


def test_metadata_change_bumps_the_epoch_and_initializes_new_partitions():
    # the metadata hash of the subscribed topics (as consumer groups); new partitions get state
    c = coord("kip")
    join(c, M1)
    c.cluster.increase_partitions("orders", 5)
    r = hb(c, M1, FIRST)
    assert (r.member_epoch, parts(c, r)) == (FIRST + 1, [0, 1, 2, 3, 4])
    tid = c.cluster.topic_id("orders")
    assert c.groups["g"].state_metadata.partitions()[tid] == frozenset(range(5))
    assert_reload_equal(c)


@pytest.mark.parametrize("profile", ["kip", "kafka"])
def test_a_deleted_topic_leaves_record_15_before_the_next_request(profile):
    # Kafka's onMetadataUpdate -> maybeCleanupShareGroupState: the coordinator hears of the deletion
    # before it serves the next request, so record 15 forgets the topic first; the heartbeat that
    # follows sees the new metadata (bump, no partitions of the topic)
    c = coord(profile)
    join(c, M1, "orders", "payments")
    r = hb(c, M1, FIRST)
    payments = c.cluster.topic_id("payments")
    assert payments in c.groups["g"].state_metadata.partitions()
    epoch, before = r.member_epoch, c.position
    c.cluster.delete_topic("payments")
    r = hb(c, M1, epoch)
    assert written(c, before)[0] == "ShareGroupStatePartitionMetadata"
    assert c.log.entry_at(before).record.value.initialized_topics[0].topic_name == "orders"
    assert payments not in c.groups["g"].state_metadata.partitions()
    assert (r.member_epoch, parts(c, r)) == (epoch + 1, [0, 1, 2])
    assert_reload_equal(c)


def test_unchanged_rack_and_client_do_not_write():
    c = coord("kip")
    join(c, M1)
    before = c.position
    hb(c, M1, FIRST, rack=None)
    assert c.position == before
    hb(c, M1, FIRST, rack="r1")
    assert written(c, before) == ["ShareGroupMemberMetadata"]
    assert c.groups["g"].group_epoch == FIRST  # a rack change does not bump the epoch


# -- durable share state: record 15 ---------------------------------------------------------------

def test_failed_initialization_leaves_partitions_uninitialized_and_retries_kafka():
    c = coord("kafka")
    p = c.soft_state["share.persister"]
    p.fail_with = E.coordinator_not_available
    join(c, M1)
    g = c.groups["g"]
    assert not g.state_metadata.initialized and not g.state_metadata.initializing
    p.fail_with = E.none
    r = hb(c, M1, FIRST)  # nothing initialising any more: the heartbeat asks again
    assert assignment(r) is None
    r = hb(c, M1, FIRST)
    assert parts(c, r) == [0, 1, 2]


def test_without_a_share_coordinator_state_stays_initializing(monkeypatch):
    from kgroup.groups.share import state
    monkeypatch.setattr(state, "persister", lambda c: None)
    c = coord("kip", persister=False)
    join(c, M1)
    g = c.groups["g"]
    assert g.state_metadata.partitions("initializing") and not g.state_metadata.initialized


# -- ShareGroupDescribe ----------------------------------------------------------------------------

def test_describe_every_field_kip():
    c = coord("kip")
    join(c, M1)
    hb(c, M2, 0, ["orders", "payments"], rack="rack-b", client_id="c2")
    d = describe(c, "g")[0]
    assert (d.error_code, d.error_message, d.group_id, d.group_state, d.group_epoch, d.assignment_epoch,
            d.assignor_name, d.authorized_operations) == (E.none, None, "g", "Stable", FIRST + 1, FIRST + 1, "simple", -2147483648)
    m1, m2 = sorted(d.members, key=lambda m: m.member_id)
    assert (m1.member_id, m1.rack_id, m1.member_epoch, m1.client_id, m1.client_host, list(m1.subscribed_topic_names)) \
        == (M1, None, FIRST, "share-consumer", "/127.0.0.1", ["orders"])
    assert (m2.rack_id, m2.member_epoch, m2.client_id, list(m2.subscribed_topic_names)) == \
        ("rack-b", FIRST + 1, "c2", ["orders", "payments"])
    assert {(t.topic_name, t.topic_id, tuple(t.partitions)) for t in m2.assignment.topic_partitions} == {
        ("orders", c.cluster.topic_id("orders"), (0, 1, 2)), ("payments", c.cluster.topic_id("payments"), (0, 1))}


def test_describe_errors():
    c = coord()
    c.handle(request("ConsumerGroupHeartbeat", 1, group_id="cg", member_id=M1, member_epoch=0, rebalance_timeout=1000,
                     subscribed_topic_names=["orders"], topic_partitions=[]))
    # Kafka's order: the empty id first, then partition by partition ("cg" before "nope")
    empty, other, missing = describe(c, "", "nope", "cg")
    assert (empty.error_code, empty.group_state) == (E.invalid_group_id, "")
    assert (missing.error_code, missing.error_message) == (E.group_id_not_found, "Group nope not found.")
    assert (other.error_code, other.error_message) == (E.group_id_not_found, "Group cg is not a share group.")


# -- ListGroups, DeleteGroups, metrics ---------------------------------------------------------------

def test_list_groups_type_share():
    c = coord("kip")
    join(c, M1, group="s1")
    join(c, M1, group="s2")
    hb(c, M1, -1, group="s2")
    c.handle(request("ConsumerGroupHeartbeat", 1, group_id="cg", member_id=M1, member_epoch=0, rebalance_timeout=1000,
                     subscribed_topic_names=["orders"], topic_partitions=[]))
    groups = c.handle(request("ListGroups", 5, types_filter=["share"])).groups
    assert [(g.group_id, g.protocol_type, g.group_state, g.group_type) for g in groups] == [
        ("s1", "share", "Stable", "share"), ("s2", "share", "Empty", "share")]
    empty = c.handle(request("ListGroups", 5, types_filter=["share"], states_filter=["Empty"])).groups
    assert [g.group_id for g in empty] == ["s2"]


def test_delete_groups_only_when_empty_and_deletes_share_state():
    c = coord("kip")
    p = c.soft_state["share.persister"]
    join(c, M1)
    r = c.handle(request("DeleteGroups", 2, groups_names=["g"])).results[0]
    assert r.error_code == E.non_empty_group and "g" in c.groups
    hb(c, M1, -1)
    before = c.position
    r = c.handle(request("DeleteGroups", 2, groups_names=["g"])).results[0]
    assert r.error_code == E.none and "g" not in c.groups
    tid = c.cluster.topic_id("orders")
    assert [call for call in p.calls if call[0] == "delete"] == [("delete", "g", tid, i) for i in range(3)]
    assert not any(has_state(c, "orders", i) for i in range(3))
    assert written(c, before) == ["ShareGroupStatePartitionMetadata", "~ShareGroupTargetAssignmentMetadata",
                                  "~ShareGroupStatePartitionMetadata", "~ShareGroupMetadata"]
    from kgroup import Coordinator
    assert "g" not in Coordinator.load(c.log, cluster=c.cluster).groups


def test_delete_group_keeps_the_group_when_the_share_coordinator_fails():
    c = coord("kip")
    join(c, M1)
    hb(c, M1, -1)
    c.soft_state["share.persister"].fail_with = E.coordinator_load_in_progress
    before = c.position
    r = c.handle(request("DeleteGroups", 2, groups_names=["g"])).results[0]
    assert r.error_code == E.coordinator_load_in_progress and "g" in c.groups
    # as Kafka: record 15 marked the share-partitions deleting first, in a write of its own, and stays
    assert written(c, before) == ["ShareGroupStatePartitionMetadata"]
    sm = c.groups["g"].state_metadata
    assert (sm.initialized, sm.deleting) == ({}, {c.cluster.topic_id("orders"): "orders"})


def test_share_group_metrics_by_state():
    c = coord("kip")
    join(c, M1, group="a")
    join(c, M1, group="b")
    hb(c, M1, -1, group="b")
    m = c.metrics()
    assert m[f"{PREFIX},name=group-count,protocol=share"] == 2
    assert (m[f"{PREFIX},name=share-group-count,state=stable"], m[f"{PREFIX},name=share-group-count,state=empty"],
            m[f"{PREFIX},name=share-group-count,state=dead"]) == (1, 1, 0)


# -- GROUP_ID_NOT_FOUND across group types ------------------------------------------------------------

def test_consumer_heartbeat_to_a_share_group():
    c = coord()
    join(c, M1)
    r = c.handle(request("ConsumerGroupHeartbeat", 1, group_id="g", member_id=M2, member_epoch=0,
                         rebalance_timeout=1000, subscribed_topic_names=["orders"], topic_partitions=[]))
    assert (r.error_code, r.error_message) == (E.group_id_not_found, "Group g is not a consumer group.")


def test_share_heartbeat_to_a_consumer_group():
    c = coord()
    c.handle(request("ConsumerGroupHeartbeat", 1, group_id="g", member_id=M2, member_epoch=0, rebalance_timeout=1000,
                     subscribed_topic_names=["orders"], topic_partitions=[]))
    before = c.position
    r = join(c, M1)
    assert (r.error_code, r.error_message) == (E.group_id_not_found, "Group g is not a share group.")
    assert c.position == before


def test_streams_heartbeat_to_a_share_group():
    c = coord()
    join(c, M1)
    topology = {"epoch": 0, "subtopologies": [{"subtopology_id": "0", "source_topics": ["orders"],
                                                "source_topic_regex": [], "state_changelog_topics": [],
                                                "repartition_sink_topics": [], "repartition_source_topics": [],
                                                "copartition_groups": []}]}
    r = c.handle(request("StreamsGroupHeartbeat", 0, group_id="g", member_id=M2, member_epoch=0,
                         rebalance_timeout=1000, topology=topology, process_id="p", active_tasks=[],
                         standby_tasks=[], warmup_tasks=[], client_tags=[], endpoint_information_epoch=0))
    assert r.error_code == E.group_id_not_found


def test_offset_commit_to_a_share_group():
    c = coord()
    join(c, M1)
    from tests.kgroup_testing import commit
    r = commit(c, "g", {("orders", 0): 5})
    assert r.topics[0].partitions[0].error_code == E.group_id_not_found
    # ShareGroup.validateOffsetDelete / validateOffsetFetch: "Group g is not a consumer group."
    r = c.handle(request("OffsetDelete", 0, group_id="g", topics=[{"name": "orders", "partitions": [{"partition_index": 0}]}]))
    assert r.error_code == E.group_id_not_found
    # OffsetFetch answers a group that is not a consumer group like an unknown one: no offsets
    r = c.handle(request("OffsetFetch", 9, groups=[{"group_id": "g", "member_id": M1, "member_epoch": 1,
                                                    "topics": [{"name": "orders", "partition_indexes": [0]}]}]))
    (g,) = r.groups
    assert g.error_code == E.none and g.topics[0].partitions[0].committed_offset == -1


# -- records and reload, dumps ------------------------------------------------------------------------

@pytest.mark.parametrize("profile", ["kip", "kafka"])
def test_reload_equals_live_at_every_step(profile):
    c = coord(profile)
    steps = [lambda: join(c, M1), lambda: hb(c, M1, c.groups["g"].members[M1].member_epoch),
             lambda: join(c, M2, "orders", "payments"), lambda: hb(c, M1, c.groups["g"].members[M1].member_epoch),
             lambda: hb(c, M2, c.groups["g"].members[M2].member_epoch, ["payments"]),
             lambda: hb(c, M1, -1), lambda: c.advance(46_000), lambda: join(c, M3)]
    for step in steps:
        step()
        assert_reload_equal(c)
        for pos in range(c.position + 1):
            c.as_of(pos)  # every prefix replays
    assert c.groups["g"].members.keys() == {M3}


def test_obsolete_partition_metadata_record_is_deleted_by_the_next_heartbeat():
    # record 9 (ShareGroupPartitionMetadata) was replaced by the metadata hash
    from kgroup import Coordinator
    from kgroup import records as R
    c = coord("kip")
    join(c, M1)
    old = R.ShareGroupPartitionMetadata(R.ShareGroupPartitionMetadataKey(group_id="g"),
                                        R.ShareGroupPartitionMetadataValue(topics=[]))
    reloaded = Coordinator.load(list(c.log) + [old], cluster=c.cluster, profile="kip")
    assert reloaded.groups["g"].has_partition_metadata_record
    reloaded.soft_state["share.persister"] = c.soft_state["share.persister"]
    before = reloaded.position
    hb(reloaded, M1, FIRST)
    assert "~ShareGroupPartitionMetadata" in written(reloaded, before)
    assert not reloaded.groups["g"].has_partition_metadata_record


def test_dump_describe_shows_share_groups():
    c = coord("kip")
    join(c, M1)
    (d,) = describe_groups(c, "g")
    assert (d["type"], d["state"], d["epoch"], d["assignment_epoch"]) == ("share", "Stable", FIRST, FIRST)
    # the coordinator's cluster knows the topic, so describe_groups names it (issue 14)
    assert d["members"][0]["member_id"] == M1 and d["members"][0]["assigned"] == {"orders": [0, 1, 2]}
    assert d["initialized"] == {"orders": [0, 1, 2]}


# -- an empty group over time ----------------------------------------------------------------------

def test_empty_group_expires_after_the_retention_kip():
    # seed, "Share group states": "DEAD - When the share group remains EMPTY for a configured period,
    # the group coordinator transitions it to DEAD to delete it" (here offsets.retention.minutes)
    c = coord("kip", config={"offsets.retention.minutes": 60})
    join(c, M1)
    c.advance(20_000)
    hb(c, M1, -1)
    c.advance(59 * 60_000)
    assert "g" in c.groups and has_state(c, "orders", 0)
    c.advance(11 * 60_000)  # one hour empty, then the next clean-up
    assert "g" not in c.groups
    assert not any(has_state(c, "orders", p) for p in range(3))
    assert_reload_equal(c)


def test_empty_group_never_expires_kafka():
    # Kafka's ShareGroup.shouldExpire() is false: only DeleteGroups deletes a share group
    c = coord("kafka", config={"offsets.retention.minutes": 60})
    join(c, M1)
    hb(c, M1, -1)
    c.advance(10 * 24 * 3600_000)
    assert c.groups["g"].state == "Empty" and has_state(c, "orders", 0)


def test_kgroup_dump_describe_shows_a_share_group(capsys, tmp_path):
    # the __consumer_offsets log written as segments, replayed by `kgroup dump describe`
    import json

    from kgroup.cli import main
    c = coord("kip")
    join(c, M1)
    hb(c, M2, 0, ["orders", "payments"])
    c.log.write(tmp_path)
    assert main(["dump", "describe", str(tmp_path), "--group", "g", "--json"]) == 0
    (g,) = json.loads(capsys.readouterr().out)["groups"]
    assert (g["type"], g["state"], g["epoch"], g["assignment_epoch"]) == ("share", "Stable", FIRST + 1, FIRST + 1)
    assert {m["member_id"]: m["member_epoch"] for m in g["members"]} == {M1: FIRST, M2: FIRST + 1}
    assert main(["dump", "describe", str(tmp_path), "--group", "g"]) == 0
    out = capsys.readouterr().out
    assert (f"g  share  state Stable  protocol type share  epoch {FIRST + 1}  on __consumer_offsets-3  "
            f"assignment epoch {FIRST + 1}") in out
    orders, payments = c.cluster.topic_id("orders"), c.cluster.topic_id("payments")
    assert f"  share-partitions initialized: {payments}:0,1  {orders}:0,1,2" in out
    assert "  members (2):" in out


def test_share_heartbeat_to_a_streams_group_and_to_a_group_holding_offsets():
    # getOrMaybeCreateShareGroup: any group of another type, even an empty classic group that
    # only holds committed offsets, is "not a share group"
    from tests.kgroup_testing import commit
    c = coord()
    topology = {"epoch": 0, "subtopologies": [{"subtopology_id": "0", "source_topics": ["orders"],
                                                "source_topic_regex": [], "state_changelog_topics": [],
                                                "repartition_sink_topics": [], "repartition_source_topics": [],
                                                "copartition_groups": []}]}
    r = c.handle(request("StreamsGroupHeartbeat", 0, group_id="app", member_id=M2, member_epoch=0,
                         rebalance_timeout=1000, topology=topology, process_id="p", active_tasks=[],
                         standby_tasks=[], warmup_tasks=[], client_tags=[], endpoint_information_epoch=0))
    assert r.error_code == E.none
    r = join(c, M1, group="app")
    assert (r.error_code, r.error_message) == (E.group_id_not_found, "Group app is not a share group.")
    commit(c, "legacy", {("orders", 0): 5})
    r = join(c, M1, group="legacy")
    assert (r.error_code, r.error_message) == (E.group_id_not_found, "Group legacy is not a share group.")
