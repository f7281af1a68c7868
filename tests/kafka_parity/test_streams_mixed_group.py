"""Kafka's StreamsGroupMixedGroupMetadataManagerTest (apache/kafka trunk, commit 7335a5fb): Streams
groups *mixing* a static and a dynamic member (PR #22245 and its follow-ups). A static member that
left for a moment (epoch -2) keeps its identity and tasks; the dynamic member is not given them;
the static member's return under a new member id copies its old records, and only a changed
process id bumps the group epoch.

Each group is set up as Kafka's `StreamsGroupBuilder` does (records loaded into a fresh
coordinator), so every case is also "a coordinator loaded from Kafka's records continues as Kafka".
Both profiles: the README's profile table forks none of this; the one fork these responses show is where v0
carries AcceptableRecoveryLag (`recovery_lag`). Kafka's manager-level tests send joins that its
GroupCoordinatorService would refuse (no topology, no rebalance timeout); here a join carries them,
unchanged from what the group has, so nothing else moves.
"""
from __future__ import annotations

import pytest

from kgroup import Coordinator, ErrorCode
from kgroup.groups.modern import LEAVE_GROUP_STATIC_MEMBER_EPOCH
from kgroup.groups.streams import group as G
from kgroup.groups.streams.protocol import session_key
from kgroup.protocol import ms
from streams_kafka import (DEFAULT_ASSIGNMENT_CONFIGS, DEFAULT_PROCESS_ID, DEFAULT_REBALANCE_TIMEOUT_MS,
                           StreamsTopicFixture, kafka_member, load_streams_group, prepare_assignment,
                           streams_group_records, with_task_epochs)
from tests.streams_testing import sgroup, shb, tasks_of

E = ErrorCode
GROUP = "fooup"
DEFAULT_GROUP_EPOCH = 10
SESSION_TIMEOUT_MS = 45_000
PROFILES = pytest.mark.parametrize("profile", ["kip", "kafka"])


def recovery_lag(c: Coordinator) -> int:
    """AcceptableRecoveryLag as StreamsGroupHeartbeat v0 carries it (the README's profile table)."""
    return 10_000 if c.profile.streams_acceptable_recovery_lag_in_v0 else 0


def answer(r) -> dict:
    """The fields Kafka's tests set on an expected StreamsGroupHeartbeatResponseData."""
    return {"error_code": r.error_code, "member_id": r.member_id, "member_epoch": r.member_epoch,
            "heartbeat_interval": ms(r.heartbeat_interval), "task_offset_interval": ms(r.task_offset_interval),
            "acceptable_recovery_lag": r.acceptable_recovery_lag,
            "status": None if r.status is None else [(s.status_code, s.status_detail) for s in r.status],
            "active": tasks_of(r.active_tasks), "standby": tasks_of(r.standby_tasks),
            "warmup": tasks_of(r.warmup_tasks)}


def expected(c: Coordinator, member_id: str, epoch: int, active=None) -> dict:
    """A heartbeat's answer with Kafka's default intervals; `active` None: no task lists (nothing
    changed), else the active tasks with empty standby and warm-up lists."""
    tasks = ({"active": None, "standby": None, "warmup": None} if active is None
             else {"active": active, "standby": {}, "warmup": {}})
    return {"error_code": E.none, "member_id": member_id, "member_epoch": epoch, "heartbeat_interval": 5000,
            "task_offset_interval": 60_000, "acceptable_recovery_lag": recovery_lag(c), "status": [], **tasks}


def left_for_a_moment(member_id: str) -> dict:
    """The answer to a -2 leave: the epoch echoed, an empty status, nothing else."""
    return {"error_code": E.none, "member_id": member_id, "member_epoch": LEAVE_GROUP_STATIC_MEMBER_EPOCH,
            "heartbeat_interval": 0, "task_offset_interval": 0, "acceptable_recovery_lag": 0, "status": [],
            "active": None, "standby": None, "warmup": None}


def records_since(c: Coordinator, since: int) -> list:
    return [c.log.entry_at(i).record for i in range(since, c.position)]


def join(c: Coordinator, topic: StreamsTopicFixture, member_id: str, instance: str | None, process: str):
    """Kafka's `staticJoinHeartbeat(groupId, memberId, instanceId, processId)`, with the group's
    topology and the members' rebalance timeout."""
    return shb(c, member_id, 0, group=GROUP, instance=instance, process=process, topology=topic.topology,
               rebalance_ms=DEFAULT_REBALANCE_TIMEOUT_MS)


def heartbeat(c: Coordinator, member_id: str, instance: str | None, epoch: int):
    """Kafka's `staticHeartbeat(groupId, memberId, instanceId, memberEpoch)`: nothing else set."""
    return shb(c, member_id, epoch, group=GROUP, instance=instance)


def mixed_group(profile: str, topic: StreamsTopicFixture, static, dynamic, *, config=None,
                assignment=None, validated: bool = True) -> Coordinator:
    """A group at DEFAULT_GROUP_EPOCH holding `static` and `dynamic`, each targeted at the tasks
    it has, as Kafka's tests build it."""
    records = streams_group_records(
        GROUP, DEFAULT_GROUP_EPOCH, members=[static, dynamic],
        targets={m.member_id: m.assigned for m in (static, dynamic) if m.assigned.active},
        topology=topic.topology, metadata_hash=topic.metadata_hash if validated else 0,
        validated_topology_epoch=0 if validated else -1,
        assignment_configs=DEFAULT_ASSIGNMENT_CONFIGS if validated else None)
    return load_streams_group(records, topic.cluster, profile=profile, config=config, assignment=assignment)


def static_left(member_id: str, instance: str, topic: StreamsTopicFixture, *partitions: int, process=DEFAULT_PROCESS_ID):
    """A static member that left with -2 after epoch 10, still holding its tasks (assigned in epoch
    10: Kafka's fixture `assignedTasks(groupEpoch, ...)`)."""
    return with_task_epochs(kafka_member(member_id, instance, member_epoch=LEAVE_GROUP_STATIC_MEMBER_EPOCH,
                                         previous_member_epoch=DEFAULT_GROUP_EPOCH, process_id=process,
                                         assigned=topic.tasks(*partitions)), DEFAULT_GROUP_EPOCH)


def stable(member_id: str, topic: StreamsTopicFixture, *partitions: int, instance=None, process=DEFAULT_PROCESS_ID):
    """A member at epoch 10 (previous 9) holding `partitions`."""
    return kafka_member(member_id, instance, member_epoch=DEFAULT_GROUP_EPOCH,
                        previous_member_epoch=DEFAULT_GROUP_EPOCH - 1, process_id=process,
                        assigned=topic.tasks(*partitions))


@PROFILES
def test_dynamic_join_fails_at_max_size_while_static_member_is_temporarily_left_and_dynamic_member_still_exists(profile):
    # Kafka's group has an empty topology, which a join under `kip` may not send; the size check
    # comes first either way.
    topic = StreamsTopicFixture("subtopology-1", "foo", 4)
    c = mixed_group(profile, topic, static_left("static", "instance", topic), stable("dynamic", topic),
                    config={"group.streams.max.size": 2}, validated=False)
    before = c.position
    r = shb(c, "new-dynamic", 0, group=GROUP, process="new-process-id", topology=topic.topology, rebalance_ms=1500)
    assert r.error_code == E.group_max_size_reached
    assert c.position == before and set(sgroup(c, GROUP).members) == {"static", "dynamic"}


@PROFILES
def test_static_rejoin_succeeds_at_max_size_while_dynamic_member_still_exists(profile):
    topic = StreamsTopicFixture("subtopology-1", "foo", 4)
    c = mixed_group(profile, topic, static_left("old-static", "instance", topic, 0, 1), stable("dynamic", topic, 2, 3),
                    config={"group.streams.max.size": 2})
    r = join(c, topic, "new-static", "instance", DEFAULT_PROCESS_ID)
    assert answer(r) == expected(c, "new-static", DEFAULT_GROUP_EPOCH, topic.response_tasks(0, 1))
    g = sgroup(c, GROUP)
    assert set(g.members) == {"new-static", "dynamic"} and g.static_member("instance").member_id == "new-static"
    assert g.members["dynamic"].assigned == topic.tasks(2, 3) and g.target_assignment["dynamic"] == topic.tasks(2, 3)
    assert g.group_epoch == DEFAULT_GROUP_EPOCH


@PROFILES
def test_dynamic_join_succeeds_after_temporarily_left_static_member_session_timeout_in_mixed_group(profile):
    topic = StreamsTopicFixture("subtopology-1", "foo", 4)
    timeout_epoch, join_epoch = DEFAULT_GROUP_EPOCH + 1, DEFAULT_GROUP_EPOCH + 2
    c = mixed_group(profile, topic, stable("static", topic, 0, 1, instance="instance", process="static-process-id"),
                    stable("dynamic", topic, 2, 3, process="dynamic-process-id"),
                    config={"group.streams.max.size": 2})          # loaded: session timers start now
    start = c.now()
    assert answer(heartbeat(c, "static", "instance", LEAVE_GROUP_STATIC_MEMBER_EPOCH)) == left_for_a_moment("static")

    assert c.advance(1) == []
    before = c.position
    assert answer(heartbeat(c, "dynamic", None, DEFAULT_GROUP_EPOCH)) == expected(c, "dynamic", DEFAULT_GROUP_EPOCH)
    assert c.position == before

    # The -2 leave did not extend the static member's session: it ends 45 s after the load.
    assert c.timers.pending()[session_key(GROUP, "static")] == start + SESSION_TIMEOUT_MS
    fired = c.advance(SESSION_TIMEOUT_MS - 1)
    assert [e.record for e in fired] == [
        G.current_assignment_tombstone(GROUP, "static"), G.target_member_tombstone(GROUP, "static"),
        G.member_tombstone(GROUP, "static"),
        G.group_epoch_record(GROUP, timeout_epoch, topic.metadata_hash, 0, DEFAULT_ASSIGNMENT_CONFIGS)]
    g = sgroup(c, GROUP)
    assert set(g.members) == {"dynamic"} and g.group_epoch == timeout_epoch

    prepare_assignment(c, {"dynamic": topic.tasks(2, 3), "new-dynamic": topic.tasks(0, 1)})
    before = c.position
    r = join(c, topic, "new-dynamic", None, "new-dynamic-process-id")
    assert answer(r) == expected(c, "new-dynamic", join_epoch, topic.response_tasks(0, 1))
    joining = kafka_member("new-dynamic", process_id="new-dynamic-process-id", member_epoch=0)
    assert records_since(c, before) == [
        G.member_record(GROUP, joining),
        G.group_epoch_record(GROUP, join_epoch, topic.metadata_hash, 0, DEFAULT_ASSIGNMENT_CONFIGS),
        G.target_member_record(GROUP, "new-dynamic", topic.tasks(0, 1)),
        G.target_epoch_record(GROUP, join_epoch, c.now()),
        G.current_assignment_record(GROUP, joining.replace(member_epoch=join_epoch, assigned=topic.tasks(0, 1)))]
    g = sgroup(c, GROUP)
    assert set(g.members) == {"dynamic", "new-dynamic"} and g.group_epoch == join_epoch
    assert g.target_assignment == {"dynamic": topic.tasks(2, 3), "new-dynamic": topic.tasks(0, 1)}


@PROFILES
def test_static_temporary_leave_does_not_transfer_tasks_to_existing_dynamic_member(profile):
    topic = StreamsTopicFixture("subtopology-1", "foo", 3)
    c = mixed_group(profile, topic, stable("static", topic, 0, 1, instance="instance"), stable("dynamic", topic, 2))
    assert answer(heartbeat(c, "static", "instance", LEAVE_GROUP_STATIC_MEMBER_EPOCH)) == left_for_a_moment("static")

    before = c.position
    r = heartbeat(c, "dynamic", None, DEFAULT_GROUP_EPOCH)
    assert answer(r) == expected(c, "dynamic", DEFAULT_GROUP_EPOCH)          # no new assignment
    assert c.position == before
    g = sgroup(c, GROUP)
    assert g.members["dynamic"].assigned == topic.tasks(2) and g.target_assignment["dynamic"] == topic.tasks(2)
    assert g.group_epoch == DEFAULT_GROUP_EPOCH


@PROFILES
def test_static_rejoin_with_updated_process_id_recomputes_target_assignment_and_dynamic_member_reconciles_in_mixed_group(profile):
    topic = StreamsTopicFixture("subtopology-1", "foo", 4)
    bumped = DEFAULT_GROUP_EPOCH + 1
    old = static_left("old-static", "instance", topic, 0, 1, process="old-process-id")
    c = mixed_group(profile, topic, old, stable("dynamic", topic, 2, 3),
                    assignment={"new-static": topic.tasks(0), "dynamic": topic.tasks(1, 2, 3)})
    before = c.position
    r = join(c, topic, "new-static", "instance", "new-process-id")
    assert answer(r) == expected(c, "new-static", bumped, topic.response_tasks(0))

    copied = old.replace(member_id="new-static", member_epoch=0, previous_member_epoch=0)
    updated = copied.replace(process_id="new-process-id")
    written = records_since(c, before)
    assert written[:8] == [
        G.current_assignment_tombstone(GROUP, "old-static"), G.target_member_tombstone(GROUP, "old-static"),
        G.member_tombstone(GROUP, "old-static"),
        G.member_record(GROUP, copied), G.target_member_record(GROUP, "new-static", topic.tasks(0, 1)),
        G.current_assignment_record(GROUP, copied),
        G.member_record(GROUP, updated),
        G.group_epoch_record(GROUP, bumped, topic.metadata_hash, 0, DEFAULT_ASSIGNMENT_CONFIGS)]
    assert sorted(written[8:10], key=lambda r: r.key.member_id) == [
        G.target_member_record(GROUP, "dynamic", topic.tasks(1, 2, 3)),
        G.target_member_record(GROUP, "new-static", topic.tasks(0))]
    assert written[10:] == [
        G.target_epoch_record(GROUP, bumped, c.now()),
        G.current_assignment_record(GROUP, updated.replace(member_epoch=bumped, assigned=topic.tasks(0)))]
    g = sgroup(c, GROUP)
    assert g.group_epoch == bumped and set(g.members) == {"new-static", "dynamic"}
    assert g.static_member("instance").member_id == "new-static"
    assert g.target_assignment == {"new-static": topic.tasks(0), "dynamic": topic.tasks(1, 2, 3)}
    assert (g.members["dynamic"].member_epoch, g.members["dynamic"].assigned) == (DEFAULT_GROUP_EPOCH, topic.tasks(2, 3))

    # The dynamic member reconciles on its next heartbeat: task 1 was let go by the rejoin.
    before = c.position
    r = heartbeat(c, "dynamic", None, DEFAULT_GROUP_EPOCH)
    assert answer(r) == expected(c, "dynamic", bumped, topic.response_tasks(1, 2, 3))
    reconciled = stable("dynamic", topic, 1, 2, 3).replace(member_epoch=bumped, previous_member_epoch=DEFAULT_GROUP_EPOCH)
    # tasks 2 and 3 kept from epoch 10, task 1 assigned in the bumped epoch
    reconciled = with_task_epochs(reconciled, DEFAULT_GROUP_EPOCH, {(topic.subtopology_id, 1): bumped})
    assert records_since(c, before) == [G.current_assignment_record(GROUP, reconciled)]


@PROFILES
def test_static_rejoin_with_same_process_id_does_not_bump_epoch_and_dynamic_heartbeat_remains_no_op_in_mixed_group(profile):
    topic = StreamsTopicFixture("subtopology-1", "foo", 4)
    old = static_left("old-static", "instance", topic, 0, 1, process="static-process-id")
    c = mixed_group(profile, topic, old, stable("dynamic", topic, 2, 3, process="dynamic-process-id"))
    before = c.position
    r = join(c, topic, "new-static", "instance", "static-process-id")
    assert answer(r) == expected(c, "new-static", DEFAULT_GROUP_EPOCH, topic.response_tasks(0, 1))

    copied = old.replace(member_id="new-static", member_epoch=0, previous_member_epoch=0)
    assert records_since(c, before) == [                                     # no new target assignment
        G.current_assignment_tombstone(GROUP, "old-static"), G.target_member_tombstone(GROUP, "old-static"),
        G.member_tombstone(GROUP, "old-static"),
        G.member_record(GROUP, copied), G.target_member_record(GROUP, "new-static", topic.tasks(0, 1)),
        G.current_assignment_record(GROUP, copied),
        G.current_assignment_record(GROUP, copied.replace(member_epoch=DEFAULT_GROUP_EPOCH))]
    g = sgroup(c, GROUP)
    assert g.group_epoch == DEFAULT_GROUP_EPOCH and set(g.members) == {"new-static", "dynamic"}
    assert g.static_member("instance").member_id == "new-static"
    assert g.target_assignment == {"new-static": topic.tasks(0, 1), "dynamic": topic.tasks(2, 3)}

    before = c.position
    r = heartbeat(c, "dynamic", None, DEFAULT_GROUP_EPOCH)
    assert answer(r) == expected(c, "dynamic", DEFAULT_GROUP_EPOCH)          # no new assignment
    assert c.position == before
    assert (g.members["dynamic"].member_epoch, g.members["dynamic"].assigned) == (DEFAULT_GROUP_EPOCH, topic.tasks(2, 3))


@PROFILES
def test_old_static_member_id_is_fenced_after_replacement_in_mixed_group(profile):
    topic = StreamsTopicFixture("subtopology-1", "foo", 4)
    c = mixed_group(profile, topic, static_left("old-static", "instance", topic, 0, 1, process="static-process-id"),
                    stable("dynamic", topic, 2, 3, process="dynamic-process-id"))
    assert join(c, topic, "new-static", "instance", "static-process-id").error_code == E.none
    before = c.position
    r = heartbeat(c, "old-static", "instance", DEFAULT_GROUP_EPOCH)
    assert r.error_code == E.fenced_instance_id and c.position == before
    g = sgroup(c, GROUP)
    assert set(g.members) == {"new-static", "dynamic"} and g.static_member("instance").member_id == "new-static"
