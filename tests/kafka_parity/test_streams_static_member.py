"""Kafka's StreamsGroupStaticMemberGroupMetadataManagerTest (Streams static membership, PR #22245
as merged and followed up in trunk), driven through `Coordinator.load` (Kafka's
`StreamsGroupBuilder` state as records) and `Coordinator.handle`.

Every case runs under both profiles: the README's profile table says Streams static membership is the same
under both, except the state a -2 leave leaves a revoking member in (profile flag
`streams_static_leave_revokes_pending`), which the two cases about it check per profile.
The parity table is StreamsGroupStaticMemberGroupMetadataManagerTest.md next to this file.
"""
from __future__ import annotations

import pytest

from kgroup import Coordinator
from kgroup.errors import ErrorCode as E
from kgroup.groups.modern import MemberState
from kgroup.groups.streams import Endpoint
from kgroup.groups.streams import group as G
from tests.kafka_parity.streams_kafka import (DEFAULT_ASSIGNMENT_CONFIGS, DEFAULT_PROCESS_ID,
                                              DEFAULT_REBALANCE_TIMEOUT_MS, StreamsTopicFixture, heartbeat_answer,
                                              kafka_member, leave_answer, load_streams_group, prepare_assignment,
                                              records_since, streams_answer, streams_group_records,
                                              with_task_epochs)
from tests.streams_testing import sgroup, shb

GROUP_EPOCH = MEMBER_EPOCH = 10          # Kafka's DEFAULT_GROUP_EPOCH / DEFAULT_MEMBER_EPOCH
LEAVE_STATIC = -2                        # LEAVE_GROUP_STATIC_MEMBER_EPOCH
NO_DELAY = {"group.streams.initial.rebalance.delay.ms": 0}


@pytest.fixture(params=["kip", "kafka"])
def profile(request) -> str:
    return request.param


def ready_group(topic: StreamsTopicFixture, group_id: str, *, members=(), targets=None, configs=True,
                profile: str = "kip", config: dict | None = None, assignment=None,
                group_epoch: int = GROUP_EPOCH) -> Coordinator:
    """Kafka's usual fixture: a group at epoch 10 with the topic's topology, validated at topology
    epoch 0, its metadata hash, the target assignment epoch 10 and (unless `configs` is False,
    as when a Kafka test leaves `withLastAssignmentConfigs` out) the default assignment configs."""
    records = streams_group_records(group_id, group_epoch, members=members, targets=targets,
                                    topology=topic.topology, metadata_hash=topic.metadata_hash,
                                    validated_topology_epoch=0,
                                    assignment_configs=DEFAULT_ASSIGNMENT_CONFIGS if configs else {})
    return load_streams_group(records, topic.cluster, profile=profile, config=config, assignment=assignment)


def join(c, group_id, member_id, instance_id, topic, *, process=DEFAULT_PROCESS_ID,
         rebalance_ms=DEFAULT_REBALANCE_TIMEOUT_MS, **kw):
    """Kafka's `staticJoinHeartbeat(groupId, memberId, instanceId, topic)` (its variant without a
    topology sends none; kgroup's door requires one on every join, so the group's is sent)."""
    return shb(c, member_id, 0, group=group_id, instance=instance_id, topology=topic.topology, process=process,
               rebalance_ms=rebalance_ms, **kw)


def beat(c, group_id, member_id, instance_id, epoch, **kw):
    """Kafka's `staticHeartbeat(groupId, memberId, instanceId, epoch)`: every other field null."""
    return shb(c, member_id, epoch, group=group_id, instance=instance_id, **kw)


def no_status(r) -> bool:
    """Kafka's `.setStatus(List.of())`: a status list, empty."""
    return r.status is not None and len(r.status) == 0


def left_member(member_id, instance_id, *, epochs=GROUP_EPOCH, **fields):
    """A static member that left with -2, its active tasks at assignment epoch `epochs`: Kafka's
    fixtures build it with `assignedTasks(groupEpoch, ...)`; the record a -2 leave writes has them
    at 0 (Kafka's resetAssignedTasksEpochsToZero)."""
    return with_task_epochs(kafka_member(member_id, instance_id, member_epoch=LEAVE_STATIC, **fields), epochs)


# ---------------------------------------------------------------------------------------------

def test_unknown_static_member_leave_streams_group(profile):
    topic = StreamsTopicFixture("subtopology1", "foo", 1)
    c = ready_group(topic, "streams-group", profile=profile, members=[
        kafka_member("active-member", "active-instance", member_epoch=MEMBER_EPOCH, previous_member_epoch=9)])
    before = c.position
    r = beat(c, "streams-group", "unknown-member-id", "unknown-instance-id", LEAVE_STATIC)
    assert (r.error_code, r.error_message) == (E.unknown_member_id, "Instance id unknown-instance-id is unknown.")
    assert c.position == before


def two_members_one_left(topic, max_size, profile, configs=True):
    """An active static member and one that left with -2, in a group of at most `max_size`."""
    return ready_group(topic, "streams-group", profile=profile, configs=configs,
                       config={"group.streams.max.size": max_size}, assignment={}, members=[
                           kafka_member("active-member", "active-instance", member_epoch=MEMBER_EPOCH,
                                        previous_member_epoch=9),
                           left_member("left-member", "left-instance", previous_member_epoch=9)])


def test_streams_static_join_with_new_instance_at_max_size_throws_group_max_size_reached(profile):
    topic = StreamsTopicFixture("subtopology1", "foo", 1)
    c = two_members_one_left(topic, 2, profile, configs=False)
    r = join(c, "streams-group", "new-member", "new-instance", topic)
    assert r.error_code == E.group_max_size_reached


def test_streams_static_rejoin_with_leave_group_static_epoch_at_max_size_succeeds(profile):
    # A static member at -2 is replaced by its rejoin, so the group does not grow.
    topic = StreamsTopicFixture("subtopology1", "foo", 1)
    c = two_members_one_left(topic, 2, profile)
    r = join(c, "streams-group", "new-join-member", "left-instance", topic)
    assert r.error_code == E.none
    assert sorted(sgroup(c, "streams-group").members) == ["active-member", "new-join-member"]


def test_streams_static_join_with_unreleased_instance_throws_unreleased_instance_id_at_max_size(profile):
    topic = StreamsTopicFixture("subtopology1", "foo", 1)
    c = ready_group(topic, "streams-group", profile=profile, config={"group.streams.max.size": 1}, assignment={},
                    members=[kafka_member("active-member", "active-instance", member_epoch=MEMBER_EPOCH,
                                          previous_member_epoch=9)])
    r = join(c, "streams-group", "new-member", "active-instance", topic)
    assert r.error_code == E.unreleased_instance_id


@pytest.mark.parametrize("epoch, error", [(0, E.unreleased_instance_id), (1000, E.fenced_instance_id)])
def test_static_member_send_heartbeat_with_various_epoch_then_throw_error(profile, epoch, error):
    # The instance id of an active member, sent with another member id.
    topic = StreamsTopicFixture("subtopology1", "foo", 1)
    c = ready_group(topic, "streams-group", profile=profile, config={"group.streams.max.size": 2}, assignment={},
                    members=[kafka_member("active-member", "active-instance", member_epoch=MEMBER_EPOCH,
                                          previous_member_epoch=9)])
    before = c.position
    if epoch == 0:
        r = join(c, "streams-group", "new-member", "active-instance", topic)
    else:
        r = beat(c, "streams-group", "new-member", "active-instance", epoch)
    assert r.error_code == error and c.position == before


def join_then_revoke_and_receive_tasks(max_size, profile):
    gid = "fooup"
    topic = StreamsTopicFixture("subtopology1", "foo", 4)
    c = ready_group(topic, gid, profile=profile, configs=False, config={"group.streams.max.size": max_size},
                    members=[kafka_member("member1", "instance1", member_epoch=10, previous_member_epoch=9,
                                          assigned=topic.tasks(0, 1, 2, 3))],
                    targets={"member1": topic.tasks(0, 1, 2, 3)})
    prepare_assignment(c, {"member1": topic.tasks(0, 1), "member2": topic.tasks(2, 3)})
    # 1) member2 joins: no active tasks yet, member1 still owns them.
    r = join(c, gid, "member2", "instance2", topic)
    assert heartbeat_answer(r) == streams_answer("member2", 11, {})
    # 2) member1 is told to keep only [0, 1].
    r = beat(c, gid, "member1", "instance1", 10)
    assert heartbeat_answer(r) == streams_answer("member1", 10, topic.response_tasks(0, 1))
    # 3) member1 confirms the revocation by reporting [0, 1].
    r = beat(c, gid, "member1", "instance1", 10, active={"subtopology1": [0, 1]}, standby={}, warmup={})
    assert heartbeat_answer(r) == streams_answer("member1", 11)
    # 4) member2 gets [2, 3].
    r = beat(c, gid, "member2", "instance2", 11)
    assert heartbeat_answer(r) == streams_answer("member2", 11, topic.response_tasks(2, 3))
    # 5) member2 leaves for a while...
    r = beat(c, gid, "member2", "instance2", LEAVE_STATIC)
    assert heartbeat_answer(r) == leave_answer("member2", LEAVE_STATIC) and no_status(r)
    # 6) ...and comes back under another member id, with its tasks.
    r = join(c, gid, "other-member2", "instance2", topic)
    assert heartbeat_answer(r) == streams_answer("other-member2", 11, topic.response_tasks(2, 3))


def test_static_member_join_then_revoke_and_receive_tasks(profile):
    join_then_revoke_and_receive_tasks(100, profile)


def test_static_member_join_then_revoke_and_receive_tasks_in_max_size_boundary(profile):
    join_then_revoke_and_receive_tasks(2, profile)


def left_group(topic, old_member, *, profile, targets, **kw):
    return ready_group(topic, "fooup", profile=profile, members=[old_member], targets=targets, **kw)


def left_for_a_rejoin(process_id: str, profile):
    """Kafka's rejoin tests: "old" (instance "instance", process `process_id`) left with -2 holding
    foo's four tasks, which the assignor gives to "rejoin". Returns the topic and the coordinator."""
    topic = StreamsTopicFixture("subtopology1", "foo", 4)
    old = left_member("old", "instance", previous_member_epoch=GROUP_EPOCH, process_id=process_id,
                      assigned=topic.tasks(0, 1, 2, 3))
    return topic, left_group(topic, old, profile=profile, targets={"old": topic.tasks(0, 1, 2, 3)},
                             assignment={"rejoin": topic.tasks(0, 1, 2, 3)})


def test_static_member_rejoin_with_updated_process_id_bumps_streams_group_epoch(profile):
    topic, c = left_for_a_rejoin("old-process-id", profile)
    before = c.position
    r = join(c, "fooup", "rejoin", "instance", topic, process="new-process-id")
    assert (r.member_id, r.member_epoch) == ("rejoin", GROUP_EPOCH + 1)
    metadata = [rec for rec in records_since(c, before) if type(rec).__name__ == "StreamsGroupMetadata"]
    assert metadata == [G.group_epoch_record("fooup", GROUP_EPOCH + 1, topic.metadata_hash, 0,
                                             DEFAULT_ASSIGNMENT_CONFIGS)]


def test_static_member_rejoin_with_same_process_id_does_not_bump_streams_group_epoch(profile):
    topic, c = left_for_a_rejoin("process-id", profile)
    before = c.position
    r = shb(c, "rejoin", 0, group="fooup", instance="instance", topology=topic.topology, process="process-id",
            rebalance_ms=DEFAULT_REBALANCE_TIMEOUT_MS, client_id="new-client-id")
    assert (r.member_id, r.member_epoch) == ("rejoin", GROUP_EPOCH)
    # The target is still filed under the old member id when the rejoin reconciles: tasks come back.
    assert heartbeat_answer(r)["active_tasks"] == topic.response_tasks(0, 1, 2, 3)
    written = records_since(c, before)
    assert any(type(rec).__name__ == "StreamsGroupMemberMetadata" and rec.key.member_id == "rejoin"
               and rec.value is not None and rec.value.client_id == "new-client-id" for rec in written)
    assert not any(type(rec).__name__ == "StreamsGroupMetadata" for rec in written)


def test_static_member_leave_with_minus_one_fences_member_and_bumps_streams_group_epoch(profile):
    topic = StreamsTopicFixture("subtopology1", "foo", 4)
    member = kafka_member("member", "instance", member_epoch=GROUP_EPOCH, previous_member_epoch=GROUP_EPOCH - 1,
                          assigned=topic.tasks(0, 1, 2, 3))
    c = left_group(topic, member, profile=profile, targets={"member": topic.tasks(0, 1, 2, 3)})
    before = c.position
    r = beat(c, "fooup", "member", "instance", -1)
    assert heartbeat_answer(r) == leave_answer("member", -1) and no_status(r)
    assert records_since(c, before) == [
        G.current_assignment_tombstone("fooup", "member"), G.target_member_tombstone("fooup", "member"),
        G.member_tombstone("fooup", "member"),
        G.group_epoch_record("fooup", GROUP_EPOCH + 1, topic.metadata_hash, 0, DEFAULT_ASSIGNMENT_CONFIGS),
        G.target_epoch_record("fooup", GROUP_EPOCH + 1)]


def test_static_member_leave_with_leave_group_static_member_epoch(profile):
    # The -2 leave keeps the member and its tasks; what it was revoking is dropped; no bump.
    topic = StreamsTopicFixture("subtopology1", "foo", 4)
    member = kafka_member("member", "instance", member_epoch=MEMBER_EPOCH, previous_member_epoch=MEMBER_EPOCH - 1,
                          assigned=topic.tasks(0, 1, 2, 3), pending_revocation=topic.tasks(2, 3))
    c = left_group(topic, member, profile=profile, targets={"member": topic.tasks(0, 1, 2, 3)})
    before = c.position
    r = beat(c, "fooup", "member", "instance", LEAVE_STATIC)
    assert heartbeat_answer(r) == leave_answer("member", LEAVE_STATIC) and no_status(r)
    left = left_member("member", "instance", epochs=0, previous_member_epoch=MEMBER_EPOCH - 1,
                       assigned=topic.tasks(0, 1, 2, 3))
    assert records_since(c, before) == [G.current_assignment_record("fooup", left)]
    assert sgroup(c, "fooup").group_epoch == GROUP_EPOCH


def test_static_member_leave_with_leave_group_static_member_epoch_then_should_be_idempotence(profile):
    # A second -2 leave writes the member's current assignment again, as it is.
    topic = StreamsTopicFixture("subtopology1", "foo", 4)
    left = left_member("member", "instance", previous_member_epoch=MEMBER_EPOCH - 1, assigned=topic.tasks(0, 1, 2, 3))
    c = left_group(topic, left, profile=profile, targets={"member": topic.tasks(0, 1, 2, 3)})
    before = c.position
    r = beat(c, "fooup", "member", "instance", LEAVE_STATIC)
    assert heartbeat_answer(r) == leave_answer("member", LEAVE_STATIC) and no_status(r)
    assert records_since(c, before) == [G.current_assignment_record("fooup", with_task_epochs(left, 0))]
    assert sgroup(c, "fooup").group_epoch == GROUP_EPOCH


def leave_and_rejoin_no_group_bump(profile, old_id, new_id):
    """-2 leave, then a rejoin (new or same member id): no bump, the epoch and tasks come back,
    the old member's records are replaced by the new one's."""
    topic = StreamsTopicFixture("subtopology1", "foo", 4)
    member = kafka_member(old_id, "instance", member_epoch=MEMBER_EPOCH, previous_member_epoch=MEMBER_EPOCH - 1,
                          assigned=topic.tasks(0, 1, 2, 3))
    c = left_group(topic, member, profile=profile, targets={old_id: topic.tasks(0, 1, 2, 3)})
    r = beat(c, "fooup", old_id, "instance", MEMBER_EPOCH)
    assert heartbeat_answer(r) == streams_answer(old_id, MEMBER_EPOCH)
    assert sgroup(c, "fooup").group_epoch == GROUP_EPOCH
    r = beat(c, "fooup", old_id, "instance", LEAVE_STATIC)
    assert heartbeat_answer(r) == leave_answer(old_id, LEAVE_STATIC) and no_status(r)
    assert sgroup(c, "fooup").group_epoch == GROUP_EPOCH
    before = c.position
    r = join(c, "fooup", new_id, "instance", topic)
    assert heartbeat_answer(r) == streams_answer(new_id, MEMBER_EPOCH, topic.response_tasks(0, 1, 2, 3))
    assert sgroup(c, "fooup").group_epoch == GROUP_EPOCH
    # The copy keeps the tasks at the assignment epoch 0 the -2 leave reset them to.
    joined = with_task_epochs(kafka_member(new_id, "instance", member_epoch=0, previous_member_epoch=0,
                                           assigned=topic.tasks(0, 1, 2, 3)), 0)
    assert records_since(c, before) == [
        G.current_assignment_tombstone("fooup", old_id), G.target_member_tombstone("fooup", old_id),
        G.member_tombstone("fooup", old_id),
        G.member_record("fooup", joined), G.target_member_record("fooup", new_id, topic.tasks(0, 1, 2, 3)),
        G.current_assignment_record("fooup", joined),
        G.current_assignment_record("fooup", joined.replace(member_epoch=MEMBER_EPOCH))]


def test_static_member_leave_with_leave_group_static_member_epoch_and_rejoin_with_new_member_id(profile):
    leave_and_rejoin_no_group_bump(profile, "old-member", "new-member")


def test_static_member_leave_with_leave_group_static_member_epoch_and_rejoin_with_same_member_id(profile):
    leave_and_rejoin_no_group_bump(profile, "member", "member")


def test_static_member_leave_with_leave_group_static_member_epoch_from_unrevoked_state(profile):
    # Kafka as merged keeps the member UNREVOKED_TASKS (the fix-up was taken out, KAFKA-20680);
    # under `kip` the tasks it was revoking count as revoked: STABLE (streams_static_leave_revokes_pending).
    topic = StreamsTopicFixture("subtopology1", "foo", 4)
    member = kafka_member("member", "instance", member_epoch=MEMBER_EPOCH, previous_member_epoch=MEMBER_EPOCH - 1,
                          state=MemberState.UNREVOKED_PARTITIONS, assigned=topic.tasks(0, 1),
                          pending_revocation=topic.tasks(2, 3))
    c = left_group(topic, member, profile=profile, targets={"member": topic.tasks(0, 1)})
    before = c.position
    r = beat(c, "fooup", "member", "instance", LEAVE_STATIC)
    state = MemberState.STABLE if c.profile.streams_static_leave_revokes_pending else MemberState.UNREVOKED_PARTITIONS
    left = left_member("member", "instance", epochs=0, previous_member_epoch=MEMBER_EPOCH - 1, state=state,
                       assigned=topic.tasks(0, 1))
    assert heartbeat_answer(r) == leave_answer("member", LEAVE_STATIC) and no_status(r)
    assert records_since(c, before) == [G.current_assignment_record("fooup", left)]
    assert sgroup(c, "fooup").members["member"].state == state
    assert sgroup(c, "fooup").group_epoch == GROUP_EPOCH


def test_static_member_rejoins_after_temporary_leave(profile):
    topic = StreamsTopicFixture("subtopology1", "foo", 4)
    old = left_member("old-member", "instance", previous_member_epoch=MEMBER_EPOCH - 1, assigned=topic.tasks(0, 1))
    c = left_group(topic, old, profile=profile, targets={"old-member": topic.tasks(0, 1)})
    # The -2 member is at the assignment epoch it left with: Kafka's builder writes the member
    # epoch 10 nowhere else, so the rejoin reconciles to the group's assignment epoch 10.
    r = join(c, "fooup", "new-member", "instance", topic)
    assert heartbeat_answer(r) == streams_answer("new-member", MEMBER_EPOCH, topic.response_tasks(0, 1))
    assert sgroup(c, "fooup").members["new-member"].state == MemberState.STABLE
    assert sgroup(c, "fooup").group_epoch == GROUP_EPOCH


def test_static_member_leave_with_leave_group_static_member_epoch_from_unreleased_state(profile):
    topic = StreamsTopicFixture("subtopology1", "foo", 3)
    member = kafka_member("member", "instance", process_id="process", member_epoch=MEMBER_EPOCH,
                          previous_member_epoch=MEMBER_EPOCH - 1, state=MemberState.UNRELEASED_PARTITIONS,
                          assigned=topic.tasks(0, 1))
    c = left_group(topic, member, profile=profile, targets={"member": topic.tasks(0, 1, 2)})
    before = c.position
    r = beat(c, "fooup", "member", "instance", LEAVE_STATIC)
    assert heartbeat_answer(r) == leave_answer("member", LEAVE_STATIC) and no_status(r)
    left = with_task_epochs(member.replace(member_epoch=LEAVE_STATIC), 0)
    assert records_since(c, before) == [G.current_assignment_record("fooup", left)]
    assert sgroup(c, "fooup").members["member"].state == MemberState.UNRELEASED_PARTITIONS
    assert sgroup(c, "fooup").group_epoch == GROUP_EPOCH


def test_static_member_rejoins_after_temporary_leave_from_unreleased_state(profile):
    # Task 2 of the rejoining member's target is still being revoked by another member.
    topic = StreamsTopicFixture("subtopology1", "foo", 3)
    old = left_member("old-member-id", "instance", process_id="old-process-id",
                      previous_member_epoch=MEMBER_EPOCH - 1, state=MemberState.UNRELEASED_PARTITIONS,
                      assigned=topic.tasks(0, 1))
    other = kafka_member("other-member-id", process_id="other-process-id", member_epoch=MEMBER_EPOCH,
                         previous_member_epoch=MEMBER_EPOCH - 1, state=MemberState.UNREVOKED_PARTITIONS,
                         pending_revocation=topic.tasks(2))
    c = ready_group(topic, "fooup", profile=profile, members=[old, other],
                    targets={"old-member-id": topic.tasks(0, 1, 2), "other-member-id": topic.tasks()})
    r = join(c, "fooup", "new-member-id", "instance", topic, process="old-process-id")
    assert heartbeat_answer(r) == streams_answer("new-member-id", MEMBER_EPOCH, topic.response_tasks(0, 1))
    assert sgroup(c, "fooup").members["new-member-id"].state == MemberState.UNRELEASED_PARTITIONS
    assert sgroup(c, "fooup").group_epoch == GROUP_EPOCH


def test_static_member_leave_with_leave_group_static_member_epoch_from_unrevoked_state_allows_unreleased_member_to_progress(profile):  # noqa: E501
    topic = StreamsTopicFixture("subtopology1", "foo", 3)
    leaving = kafka_member("leaving", "instance", member_epoch=MEMBER_EPOCH, previous_member_epoch=MEMBER_EPOCH - 1,
                           state=MemberState.UNREVOKED_PARTITIONS, assigned=topic.tasks(0, 1),
                           pending_revocation=topic.tasks(2))
    waiting = kafka_member("waiting", member_epoch=MEMBER_EPOCH, previous_member_epoch=MEMBER_EPOCH,
                           state=MemberState.UNRELEASED_PARTITIONS)
    c = ready_group(topic, "fooup", profile=profile, members=[leaving, waiting],
                    targets={"leaving": topic.tasks(0, 1), "waiting": topic.tasks(2)})
    before = c.position
    r = beat(c, "fooup", "leaving", "instance", LEAVE_STATIC)
    assert heartbeat_answer(r) == leave_answer("leaving", LEAVE_STATIC) and no_status(r)
    state = MemberState.STABLE if c.profile.streams_static_leave_revokes_pending else MemberState.UNREVOKED_PARTITIONS
    assert records_since(c, before) == [G.current_assignment_record("fooup", with_task_epochs(leaving.replace(
        member_epoch=LEAVE_STATIC, state=state, pending_revocation=G.EMPTY_TASKS), 0))]
    before = c.position
    r = beat(c, "fooup", "waiting", None, MEMBER_EPOCH)
    assert heartbeat_answer(r) == streams_answer("waiting", MEMBER_EPOCH, topic.response_tasks(2))
    assert records_since(c, before) == [G.current_assignment_record("fooup", waiting.replace(
        state=MemberState.STABLE, assigned=topic.tasks(2)))]
    assert sgroup(c, "fooup").members["waiting"].state == MemberState.STABLE
    assert sgroup(c, "fooup").group_epoch == GROUP_EPOCH


def test_static_member_leave_with_leave_group_static_member_epoch_and_rejoin_and_other_rack_id_then_group_bump_occur(profile):  # noqa: E501
    topic = StreamsTopicFixture("subtopology1", "foo", 4)
    member = kafka_member("member", "instance", rack_id="rack", member_epoch=MEMBER_EPOCH,
                          previous_member_epoch=MEMBER_EPOCH - 1, assigned=topic.tasks(0, 1, 2, 3))
    c = left_group(topic, member, profile=profile, targets={"member": topic.tasks(0, 1, 2, 3)})
    r = beat(c, "fooup", "member", "instance", MEMBER_EPOCH, rack="rack")
    assert heartbeat_answer(r) == streams_answer("member", MEMBER_EPOCH)
    assert sgroup(c, "fooup").group_epoch == GROUP_EPOCH
    r = beat(c, "fooup", "member", "instance", LEAVE_STATIC, rack="rack")
    assert heartbeat_answer(r) == leave_answer("member", LEAVE_STATIC) and no_status(r)
    assert sgroup(c, "fooup").group_epoch == GROUP_EPOCH
    prepare_assignment(c, {"new-member": topic.tasks(0, 1, 2, 3)})
    before = c.position
    r = join(c, "fooup", "new-member", "instance", topic, rack="new-rack")
    # The member and group epochs move: the rack is one of KIP-1071's epoch-relevant fields.
    assert heartbeat_answer(r) == streams_answer("new-member", GROUP_EPOCH + 1, topic.response_tasks(0, 1, 2, 3))
    assert sgroup(c, "fooup").group_epoch == GROUP_EPOCH + 1
    copied = with_task_epochs(kafka_member("new-member", "instance", rack_id="rack", member_epoch=0,
                                           previous_member_epoch=0, assigned=topic.tasks(0, 1, 2, 3)), 0)
    updated = copied.replace(rack_id="new-rack")
    assert records_since(c, before) == [
        # the replacement: the old member's records deleted, a copy under the new member id
        G.current_assignment_tombstone("fooup", "member"), G.target_member_tombstone("fooup", "member"),
        G.member_tombstone("fooup", "member"),
        G.member_record("fooup", copied), G.target_member_record("fooup", "new-member", topic.tasks(0, 1, 2, 3)),
        G.current_assignment_record("fooup", copied),
        # then the heartbeat itself: the new rack, the bump, the (unchanged) target, the reconciled member
        G.member_record("fooup", updated),
        G.group_epoch_record("fooup", GROUP_EPOCH + 1, topic.metadata_hash, 0, DEFAULT_ASSIGNMENT_CONFIGS),
        G.target_epoch_record("fooup", GROUP_EPOCH + 1, c.now()),
        G.current_assignment_record("fooup", updated.replace(member_epoch=GROUP_EPOCH + 1))]


def test_static_member_rejoin_writes_replacement_records_in_streams_group(profile):
    topic = StreamsTopicFixture("subtopology1", "foo", 4)
    old = left_member("old", "instance", previous_member_epoch=GROUP_EPOCH, assigned=topic.tasks(0, 1, 2, 3))
    c = left_group(topic, old, profile=profile, targets={"old": topic.tasks(0, 1, 2, 3)})
    before = c.position
    r = join(c, "fooup", "rejoin", "instance", topic)
    assert (r.member_id, r.member_epoch) == ("rejoin", GROUP_EPOCH)
    copied = old.replace(member_id="rejoin", member_epoch=0, previous_member_epoch=0)
    written = records_since(c, before)
    for rec in (G.current_assignment_tombstone("fooup", "old"), G.target_member_tombstone("fooup", "old"),
                G.member_tombstone("fooup", "old"), G.member_record("fooup", copied),
                G.target_member_record("fooup", "rejoin", topic.tasks(0, 1, 2, 3)),
                G.current_assignment_record("fooup", copied)):
        assert rec in written


def test_static_member_rejoins_with_same_member_id_and_different_instance_id(profile):
    # A known member id joining with an instance id nobody holds becomes that static member.
    topic = StreamsTopicFixture("subtopology1", "foo", 4)
    member = kafka_member("member", "instance-1", member_epoch=GROUP_EPOCH, previous_member_epoch=GROUP_EPOCH - 1,
                          assigned=topic.tasks(0, 1, 2, 3))
    c = left_group(topic, member, profile=profile, targets={"member": topic.tasks(0, 1, 2, 3)})
    assert sgroup(c, "fooup").static_members == {"instance-1": "member"}
    r = join(c, "fooup", "member", "instance-2", topic)
    assert r.error_code == E.none
    assert sgroup(c, "fooup").static_members == {"instance-2": "member"}


def no_topology_group(profile):
    """Kafka's `StreamsGroupBuilder(groupId, 10).withMember(...).withTargetAssignmentEpoch(10)`."""
    member = kafka_member("member", "instance", member_epoch=10, previous_member_epoch=9)
    topic = StreamsTopicFixture("subtopology1", "foo", 1)
    return load_streams_group(streams_group_records("fooup", 10, members=[member]), topic.cluster, profile=profile)


def test_static_member_leave_with_mismatched_member_id_throws_fenced_instance_id_in_streams_group(profile):
    c = no_topology_group(profile)
    r = beat(c, "fooup", "different-member", "instance", LEAVE_STATIC)
    assert (r.error_code, r.error_message) == (
        E.fenced_instance_id, "Static member different-member with instance id instance was fenced by member member.")


def test_unknown_static_member_heartbeat_with_positive_epoch_throws_unknown_member_id_in_streams_group(profile):
    c = no_topology_group(profile)
    r = beat(c, "fooup", "unknown-member", "unknown-instance", 1)
    assert (r.error_code, r.error_message) == (E.unknown_member_id, "Instance id unknown-instance is unknown.")


@pytest.mark.parametrize("owned, error", [([0, 1, 2], E.none), ([0, 1, 2, 3], E.none),
                                          ([0, 1, 2, 3, 4], E.fenced_member_epoch)])
def test_streams_static_member_heartbeat_with_previous_epoch_and_owned_active_tasks(profile, owned, error):
    # Kafka's request also carries the topology, which kgroup's door refuses outside a join
    # ("Topology can only be provided when (re-)joining."): it is left out here.
    topic = StreamsTopicFixture("subtopology1", "foo", 5)
    member = kafka_member("member", "instance", member_epoch=10, previous_member_epoch=9,
                          assigned=topic.tasks(0, 1, 2, 3))
    c = left_group(topic, member, profile=profile, targets={"member": topic.tasks(0, 1, 2, 3)})
    r = beat(c, "fooup", "member", "instance", 9, process="process-id", rebalance_ms=1500,
             active={"subtopology1": owned}, standby={}, warmup={})
    assert r.error_code == error


def test_streams_static_member_temporary_leave_session_timeout_expiration(profile):
    topic = StreamsTopicFixture("subtopology1", "foo", 4)
    c = load_streams_group([], topic.cluster, profile=profile, config=NO_DELAY,
                           assignment={"member": topic.tasks(0, 1, 2, 3)})
    r = join(c, "fooup", "member", "instance", topic, rebalance_ms=90_000)
    assert r.member_epoch == 2                               # a new group's first assignment (KAFKA-20268)
    r = beat(c, "fooup", "member", "instance", LEAVE_STATIC)
    assert heartbeat_answer(r) == leave_answer("member", LEAVE_STATIC) and no_status(r)
    before = c.position
    c.advance(45_000 + 1)                                    # the session (45 s) set at the join runs out
    assert records_since(c, before) == [
        G.current_assignment_tombstone("fooup", "member"), G.target_member_tombstone("fooup", "member"),
        G.member_tombstone("fooup", "member"),
        G.group_epoch_record("fooup", 3, topic.metadata_hash, 0, DEFAULT_ASSIGNMENT_CONFIGS),
        G.target_epoch_record("fooup", 3)]
    from kgroup.groups.streams.protocol import rebalance_key, session_key
    assert session_key("fooup", "member") not in c.timers and rebalance_key("fooup", "member") not in c.timers


def test_static_member_join_empty_streams_group_registers_static_member1():
    # Kafka only: its join carries an empty topology, which KIP-1071 refuses ("Topology must be
    # non-empty", the README's profile table's request-validation row).
    from kgroup import Cluster
    from kgroup.groups.streams import Topology
    c = Coordinator(cluster=Cluster(seed=1), profile="kafka", config=NO_DELAY)
    assert "fooup" not in c.groups
    r = shb(c, "member", 0, group="fooup", instance="instance", topology=Topology(0, ()), process=DEFAULT_PROCESS_ID,
            rebalance_ms=1500)
    assert r.error_code == E.none
    group = sgroup(c, "fooup")
    assert group.static_member("instance").member_id == "member"
    assert group.members["member"].instance_id == "instance"


def _endpoints(host, port, partitions):
    return [{"user_endpoint": {"host": host, "port": port},
             "active_partitions": [{"topic": "foo", "partitions": partitions}], "standby_partitions": []}]


@pytest.mark.parametrize("first, first_epoch, first_partitions, second, second_epoch, second_partitions", [
    (None, 0, None, ("bar.com", 8080), 1, _endpoints("bar.com", 8080, [0, 1, 2])),
    (None, 0, None, None, 0, None),
    (("foo.com", 8080), 1, _endpoints("foo.com", 8080, [0, 1, 2]), None, 2, []),
    (("foo.com", 8080), 1, _endpoints("foo.com", 8080, [0, 1, 2]), ("foo.com", 8080), 1,
     _endpoints("foo.com", 8080, [0, 1, 2])),
    (("foo.com", 8080), 1, _endpoints("foo.com", 8080, [0, 1, 2]), ("bar.com", 8080), 2,
     _endpoints("bar.com", 8080, [0, 1, 2])),
])
def test_static_member_rejoin_updates_user_endpoint_information_epoch(profile, first, first_epoch, first_partitions,
                                                                      second, second_epoch, second_partitions):
    from kgroup.protocol import to_data
    topic = StreamsTopicFixture("subtopology1", "foo", 3)
    c = ready_group(topic, "fooup", profile=profile, config=NO_DELAY, targets={"old-member-id": topic.tasks(0, 1, 2)},
                    assignment={"old-member-id": topic.tasks(0, 1, 2)})
    assert sgroup(c, "fooup").endpoint_information_epoch == 0

    def joins(member_id, endpoint, epoch, partitions):
        """`member_id` joins as instance "instance" with `endpoint`: its answer, its endpoint and the
        group's endpoint information epoch."""
        r = join(c, "fooup", member_id, "instance", topic, endpoint=endpoint)
        assert heartbeat_answer(r) == streams_answer(member_id, MEMBER_EPOCH + 1, topic.response_tasks(0, 1, 2),
                                                     endpoint_information_epoch=epoch)
        assert to_data(r).get("partitions_by_user_endpoint") == partitions
        assert sgroup(c, "fooup").members[member_id].user_endpoint == (endpoint and Endpoint(*endpoint))
        assert sgroup(c, "fooup").endpoint_information_epoch == epoch

    joins("old-member-id", first, first_epoch, first_partitions)
    beat(c, "fooup", "old-member-id", "instance", LEAVE_STATIC)
    joins("new-member-id", second, second_epoch, second_partitions)
