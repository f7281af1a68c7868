"""Apache Kafka's GroupMetadataManagerStreamsGroupTest (trunk, commit 4c51ea9b), ported: each
case is driven through `Coordinator.handle`, `Coordinator.load` and `Coordinator.advance` only,
and asserts the responses and the records written, in order, as Kafka's test does.

Kafka sets a group up with `StreamsGroupBuilder` or `replay(...)` of its record helpers; here the
same records are built with the Streams group package's record builders and loaded
(`streams_kafka.py`). Kafka's `MockTaskAssignor` is kgroup's `FixedTaskAssignor`.
Cases run under both profiles unless the README's profile table forks them (then a comment says which row).
The table of every Kafka case is GroupMetadataManagerStreamsGroupTest.md beside this file."""
from __future__ import annotations

import pytest

from streams_kafka import (ASSIGNMENT_DELAYED, DEFAULT_ASSIGNMENT_CONFIGS, DEFAULT_PROCESS_ID,
                           INCORRECTLY_PARTITIONED_TOPICS, MISSING_INTERNAL_TOPICS, MISSING_SOURCE_TOPICS,
                           SHUTDOWN_APPLICATION, STALE_TOPOLOGY, expected_heartbeat, kafka_member,
                           load_streams_group, prepare_assignment, records_since, streams_group_records,
                           streams_heartbeat, streams_join, with_task_epochs)
from kgroup import Cluster, Coordinator, ErrorCode
from kgroup.assignors.streams import TASK_ASSIGNOR_OVERRIDE, FixedTaskAssignor, TaskAssignorException, TaskSets
from kgroup.groups.metadata_hash import metadata_hash
from kgroup.groups.modern import LEAVE_GROUP_MEMBER_EPOCH, MemberState, ReplayError
from kgroup.groups.streams import StreamsGroupState, Subtopology, TopicInfo, Topology
from kgroup.groups.streams import group as G
from kgroup.groups.streams.protocol import initial_delay_key
from kgroup.groups.streams.topology import CopartitionGroup
from kgroup.offsets import offset_commit_record
from kgroup.protocol import ms, request, to_data

E = ErrorCode
GROUP = "fooup"
S1, S2 = "subtopology1", "subtopology2"
NO_DELAY = {"group.streams.initial.rebalance.delay.ms": 0}
both = pytest.mark.parametrize("profile", ["kip", "kafka"])

#: subtopology1 reads foo, subtopology2 reads bar (most of Kafka's cases)
FOO_BAR = Topology(0, (Subtopology(S1, source_topics=("foo",)), Subtopology(S2, source_topics=("bar",))))
FOO = Topology(0, (Subtopology(S1, source_topics=("foo",)),))


def cluster(**topics: int) -> Cluster:
    return Cluster(topics, seed=1)


def group_hash(c: Cluster, *topics: str) -> int:
    """`computeGroupHash(Map.of(topic, computeTopicHash(topic, image), ...))`."""
    return metadata_hash(topics, c)


def active(**tasks) -> TaskSets:
    """`mkTasksTuple(TaskRole.ACTIVE, mkTasks(subtopology, partitions...), ...)`."""
    return TaskSets(active={s.replace("s", "subtopology"): frozenset(ps) for s, ps in tasks.items()})


def new_coordinator(profile: str, topics: dict, config: dict | None = None, assignment: dict | None = None):
    c = Coordinator(cluster=cluster(**topics), profile=profile, config=config)
    if assignment is not None:
        prepare_assignment(c, assignment)
    return c


def member_records(at: int, gid: str, member, target: TaskSets | None, epoch: int, *,
                   topology: Topology | None = None, metadata: tuple | None = None) -> list:
    """A join's records in Kafka's order: member, topology, group metadata, target, its epoch (computed
    at time `at`), current."""
    out = [G.member_record(gid, member)]
    if topology is not None:
        out.append(topology.to_record(gid))
    if metadata is not None:
        out.append(G.group_epoch_record(gid, *metadata))
    if target is not None:
        out += [G.target_member_record(gid, member.member_id, target), G.target_epoch_record(gid, epoch, at)]
    out.append(G.current_assignment_record(gid, member))
    return out


def two_members_at_epoch_10(cl: Cluster, *, configs=None, validated: int = -1, with_hash: bool = True) -> list:
    """The group most cases start from: A owns 0-2 of subtopology1 and 0-1 of subtopology2, B the rest."""
    a = kafka_member("A", member_epoch=10, previous_member_epoch=9,
                     assigned=TaskSets(active={S1: frozenset({0, 1, 2}), S2: frozenset({0, 1})}))
    b = kafka_member("B", member_epoch=10, previous_member_epoch=9,
                     assigned=TaskSets(active={S1: frozenset({3, 4, 5}), S2: frozenset({2})}))
    return streams_group_records(GROUP, 10, members=[a, b], targets={"A": a.assigned, "B": b.assigned},
                                 target_epoch=10, topology=FOO_BAR,
                                 metadata_hash=group_hash(cl, "foo", "bar") if with_hash else 0,
                                 validated_topology_epoch=validated, assignment_configs=configs)


# -- KIP-1331 description epochs ----------------------------------------------------------------

@both
def test_streams_group_metadata_replay_round_trips_topology_description_epochs(profile):
    first = G.group_epoch_record("streams-group", 1, 0, -1, {}, 7, 5)
    g = load([first], profile).groups["streams-group"]
    assert (g.stored_description_topology_epoch, g.failed_description_topology_epoch) == (7, 5)
    # A later record carrying the defaults overwrites them: the latest record wins.
    g = load([first, G.group_epoch_record("streams-group", 2, 0, -1, {}, -1, -1)], profile).groups["streams-group"]
    assert (g.stored_description_topology_epoch, g.failed_description_topology_epoch) == (-1, -1)


# -- rejoin, load, describe ---------------------------------------------------------------------

@both
def test_streams_group_member_can_rejoin_with_epoch_zero(profile):
    # KAFKA-19233: a member rejoining with epoch 0 and its own member id gets its state back.
    cl = cluster(foo=3)
    topology = FOO.with_epoch(1)
    m = kafka_member("m", member_epoch=100, previous_member_epoch=99, topology_epoch=1,
                     assigned=TaskSets(active={S1: frozenset({0, 1, 2})}))
    c = load_streams_group(streams_group_records(
        GROUP, 100, members=[m], targets={"m": m.assigned}, target_epoch=100, topology=topology,
        metadata_hash=group_hash(cl, "foo"), validated_topology_epoch=1,
        assignment_configs=DEFAULT_ASSIGNMENT_CONFIGS), cl, profile=profile)
    before = c.position
    r = streams_join(c, GROUP, "m", topology)
    assert to_data(r) == expected_heartbeat(profile, "m", 100, active={S1: [0, 1, 2]}, standby={}, warmup={})
    assert records_since(c, before) == []      # nothing bumped, nothing rewritten


@both
def test_on_loaded_with_streams_group(profile):
    # Every member gets a session timeout on load; foo-1, still revoking, its rebalance timeout (100 ms).
    cl = cluster(foo=6, bar=3)
    foo1 = kafka_member("foo-1", member_epoch=9, previous_member_epoch=9, state=MemberState.UNREVOKED_PARTITIONS,
                        rebalance_timeout_ms=100, topology_epoch=1, process_id="process-id",
                        assigned=TaskSets(active={"foo": frozenset({0, 1, 2})}),
                        pending_revocation=TaskSets(active={"foo": frozenset({3, 4, 5})}))
    foo2 = kafka_member("foo-2", member_epoch=10, previous_member_epoch=10, rebalance_timeout_ms=100,
                        topology_epoch=1, process_id="process-id")
    c = load_streams_group(streams_group_records(
        "foo", 10, members=[foo1, foo2], targets={"foo-1": TaskSets(active={"foo": frozenset({3, 4, 5})})},
        target_epoch=10), cl, profile=profile)
    assert set(c.groups["foo"].members) == {"foo-1", "foo-2"}
    c.advance(101)                                  # the rebalance timeout fences foo-1 only
    assert set(c.groups["foo"].members) == {"foo-2"}
    c.advance(45_000)                               # then the session timeout fences foo-2
    assert not c.groups["foo"].members


def describe(c: Coordinator, *groups: str):
    return c.handle(request("StreamsGroupDescribe", 0, group_ids=list(groups), include_authorized_operations=False))


def described_topology(subtopology: str, *sources: str, epoch: int = 0) -> dict:
    return {"epoch": epoch, "subtopologies": [{"subtopology_id": subtopology, "source_topics": list(sources),
                                                "repartition_sink_topics": [], "state_changelog_topics": [],
                                                "repartition_source_topics": []}]}


def described_member(m, target: TaskSets = TaskSets()) -> dict:
    """`member.asStreamsGroupDescribeMember(targetAssignment)`."""
    def tasks(t: TaskSets) -> dict:
        return {"active_tasks": _ids(t.active), "standby_tasks": _ids(t.standby), "warmup_tasks": _ids(t.warmup)}
    return {"member_id": m.member_id, "member_epoch": m.member_epoch, "instance_id": m.instance_id,
            "rack_id": m.rack_id, "client_id": m.client_id, "client_host": m.client_host,
            "topology_epoch": m.topology_epoch, "process_id": m.process_id, "user_endpoint": None,
            "client_tags": [{"key": k, "value": v} for k, v in m.client_tags], "task_offsets": [],
            "task_end_offsets": [], "assignment": tasks(m.assigned), "target_assignment": tasks(target),
            "is_classic": False}


def _ids(tasks) -> list:
    return [{"subtopology_id": s, "partitions": sorted(ps)} for s, ps in sorted(tasks.items())]


def described(gid: str, state: str, epoch: int, assignment_epoch: int, topology: dict | None, members=()) -> dict:
    return {"error_code": 0, "error_message": None, "group_id": gid, "group_state": state, "group_epoch": epoch,
            "assignment_epoch": assignment_epoch, "topology": topology, "members": list(members),
            "authorized_operations": -2147483648}


@both
def test_update_streams_group_size_counter(profile):
    # Kafka's setStreamsGroupGauges is kgroup's streams-group-count metric, per state.
    def member(mid, epoch=1):
        return kafka_member(mid, member_epoch=epoch)

    def counts(c):
        from kgroup.metrics import PREFIX
        prefix = f"{PREFIX},name=streams-group-count,state="
        return {k[len(prefix):]: v for k, v in c.metrics().items() if k.startswith(prefix) and v}

    topology = Topology(1, ())
    records = (streams_group_records("group-0", 10)                                            # empty
               + streams_group_records("group-1", 10, members=[member("m0", 10)], topology=topology,
                                       validated_topology_epoch=1)                             # stable
               + streams_group_records("group-2", 10, members=[member("m1", 9)], target_epoch=9,
                                       topology=topology, validated_topology_epoch=1)          # assigning
               + streams_group_records("group-3", 10, members=[member("m2", 9)], topology=topology,
                                       validated_topology_epoch=1)                             # reconciling
               + streams_group_records("group-4", 10, members=[member("m3")], topology=topology))  # not ready
    c = load_streams_group(records, cluster(), profile=profile)
    assert counts(c) == {"empty": 1, "assigning": 1, "reconciling": 1, "not_ready": 1, "stable": 1}
    # group-1's member goes (its records deleted), group-3's member reaches the target epoch
    c = load_streams_group(records + [G.current_assignment_tombstone("group-1", "m0"),
                                      G.member_tombstone("group-1", "m0"),
                                      G.current_assignment_record("group-3", member("m2", 10))],
                           cluster(), profile=profile)
    assert counts(c) == {"empty": 2, "assigning": 1, "not_ready": 1, "stable": 1}


@both
def test_streams_group_describe_no_errors(profile):
    topology = FOO
    m = kafka_member("member-id", member_epoch=10, previous_member_epoch=9, process_id="processId",
                     client_tags=(("clientTag", "clientValue"),))
    records = streams_group_records("group-id-1", 10, topology=topology, target_epoch=1) + \
        streams_group_records("group-id-2", 10, members=[m], topology=topology, target_epoch=1)
    c = load_streams_group(records, cluster(), profile=profile)
    got = [to_data(g) for g in describe(c, "group-id-1", "group-id-2").groups]
    assert got == [described("group-id-1", "Empty", 10, 1, described_topology(S1, "foo")),
                   described("group-id-2", "NotReady", 10, 1, described_topology(S1, "foo"),
                             [described_member(m)])]


@both
def test_streams_group_describe_with_errors(profile):
    r = describe(Coordinator(profile=profile), "groupId")
    assert [(g.error_code, g.error_message) for g in r.groups] == [(E.group_id_not_found, "Group groupId not found.")]


@both
def test_streams_group_describe_before_and_after_committing_offset(profile):
    # kgroup has no uncommitted state (a write is replayed when appended): only the committed half.
    topology = FOO
    m1, m2 = kafka_member("memberId1"), kafka_member("memberId2")
    assignment = TaskSets(active={S1: frozenset({0, 1})}, standby={S1: frozenset({0, 1})},
                          warmup={S1: frozenset({0, 1})})
    records = [G.member_record("g", m1), G.current_assignment_record("g", m1),
               G.group_epoch_record("g", 11, 0, -1, {}), topology.to_record("g"),
               G.member_record("g", m2), G.target_member_record("g", "memberId2", assignment),
               G.target_epoch_record("g", 11), G.current_assignment_record("g", m2),
               G.group_epoch_record("g", 12, 0, 0, {})]
    c = load_streams_group(records, cluster(), profile=profile)
    got = to_data(describe(c, "g").groups[0])
    assert got == described("g", "Assigning", 12, 11, described_topology(S1, "foo"),
                            [described_member(m1), described_member(m2, assignment)])


def test_streams_group_delete_cancels_initial_rebalance_timer():
    # kafka: the initial rebalance delay is Kafka's (the README's profile table, statuses row).
    c = new_coordinator("kafka", {"foo": 2}, {"group.streams.initial.rebalance.delay.ms": 1000},
                        {"m": active(s1=[0, 1])})
    streams_join(c, GROUP, "m", FOO)
    assert initial_delay_key(GROUP) in c.timers
    streams_heartbeat(c, GROUP, "m", LEAVE_GROUP_MEMBER_EPOCH)   # DeleteGroups takes empty groups only
    before = c.position
    r = c.handle(request("DeleteGroups", 2, groups_names=[GROUP]))
    assert r.results[0].error_code == E.none and initial_delay_key(GROUP) not in c.timers
    # The group's tombstones in Kafka's order: target epoch, group metadata, topology.
    assert records_since(c, before) == [
        G.StreamsGroup(GROUP).tombstones()[0], R_metadata_tombstone(GROUP), R_topology_tombstone(GROUP)]


def R_metadata_tombstone(gid: str):
    from kgroup import records as R
    return R.StreamsGroupMetadata.tombstone(R.StreamsGroupMetadataKey(group_id=gid))


def R_topology_tombstone(gid: str):
    from kgroup import records as R
    return R.StreamsGroupTopology.tombstone(R.StreamsGroupTopologyKey(group_id=gid))


# -- errors ------------------------------------------------------------------------------------

@both
def test_unknown_streams_group_id(profile):
    r = streams_heartbeat(Coordinator(profile=profile), GROUP, "m", 100, rebalance_timeout=1500,
                          active={}, standby={}, warmup={})
    assert (r.error_code, r.error_message) == (E.group_id_not_found, "Streams group fooup not found.")


def test_unknown_member_id_joins_streams_group():
    # kafka: Kafka's test joins with an empty topology, which the KIP refuses (validation row).
    c = new_coordinator("kafka", {}, None, {"m1": TaskSets()})
    streams_join(c, GROUP, "m1", Topology(0, ()))
    r = streams_heartbeat(c, GROUP, "m2", 1, rebalance_timeout=1500, active={}, standby={}, warmup={})
    assert (r.error_code, r.error_message) == (E.unknown_member_id, "Member m2 is not a member of group fooup.")


def test_streams_group_member_epoch_validation():
    # kafka: under kip a fenced member is also removed (the README's profile table, fenced member epoch row).
    cl = cluster(foo=6)
    m = kafka_member("m", member_epoch=100, previous_member_epoch=99, assigned=active(s1=[1, 2, 3]))
    c = load_streams_group(streams_group_records(GROUP, 100, members=[m], targets={"m": m.assigned},
                                                 target_epoch=100, topology=FOO, validated_topology_epoch=0),
                           cl, profile="kafka", assignment={"m": TaskSets()})
    tail = "The member must abandon all its partitions and rejoin."
    for epoch, words in ((200, "greater member epoch (200)"), (50, "smaller member epoch (50)"),
                         (99, "smaller member epoch (99)")):      # 99 without its tasks is fenced too
        r = streams_heartbeat(c, GROUP, "m", epoch, rebalance_timeout=1500)
        assert (r.error_code, r.error_message) == (
            E.fenced_member_epoch, f"The streams group member has a {words} than the one known by the group "
                                   f"coordinator (100). {tail}")
    # The previous epoch with a subset of its tasks: the response with the new epoch may have been lost.
    r = streams_heartbeat(c, GROUP, "m", 99, rebalance_timeout=1500, active={S1: [1, 2]}, standby={}, warmup={})
    assert (r.error_code, r.member_epoch) == (E.none, 100)


@both
def test_streams_owned_tasks_validation(profile):
    m = kafka_member("m", member_epoch=10, previous_member_epoch=10, assigned=active(s1=[0, 1, 2]))
    c = load_streams_group(streams_group_records(GROUP, 10, members=[m], targets={"m": m.assigned},
                                                 target_epoch=10, topology=FOO), cluster(foo=3), profile=profile)
    r = streams_heartbeat(c, GROUP, "m", 10, active={"subtopologyMissing": [0]}, standby={}, warmup={})
    assert (r.error_code, r.error_message) == (E.invalid_request,
                                               "Subtopology subtopologyMissing does not exist in the topology.")
    r = streams_heartbeat(c, GROUP, "m", 10, active={S1: [3]}, standby={}, warmup={})
    assert (r.error_code, r.error_message) == (
        E.invalid_request, "Task 3 for subtopology subtopology1 is invalid. Number of tasks for this subtopology: 3")


def test_streams_new_member_is_rejected_with_maximum_members_is_reached():
    # kafka: Kafka's test joins with an empty topology, which the KIP refuses (validation row).
    empty = Topology(0, ())
    members = [kafka_member(m, member_epoch=10, previous_member_epoch=9) for m in ("m1", "m2")]
    c = load_streams_group(streams_group_records(GROUP, 10, members=members, target_epoch=10, topology=empty),
                           cluster(), profile="kafka", config={"group.streams.max.size": 2})
    r = streams_join(c, GROUP, "m3", empty, process_id="process-id")
    assert r.error_code == E.group_max_size_reached


# -- joining -----------------------------------------------------------------------------------

@both
def test_member_joins_empty_streams_group(profile):
    target = active(s1=[0, 1, 2, 3, 4, 5], s2=[0, 1, 2])
    c = new_coordinator(profile, {"foo": 6, "bar": 3}, NO_DELAY, {"m": target})
    r = streams_join(c, GROUP, "m", FOO_BAR, process_id="process-id")
    assert to_data(r) == expected_heartbeat(profile, "m", 2, active={S1: range(6), S2: range(3)}, standby={},
                                            warmup={})
    m = kafka_member("m", member_epoch=2, assigned=target)
    assert records_since(c, 0) == member_records(c.now(), 
        GROUP, m, target, 2, topology=FOO_BAR,
        metadata=(2, group_hash(c.cluster, "foo", "bar"), 0, DEFAULT_ASSIGNMENT_CONFIGS))


@both
def test_join_empty_streams_group_and_describe(profile):
    target = active(s1=range(6))
    c = new_coordinator(profile, {"foo": 6}, NO_DELAY, {"m": target})
    r = streams_join(c, GROUP, "m", FOO, process_id="process-id")
    assert to_data(r) == expected_heartbeat(profile, "m", 2, active={S1: range(6)}, standby={}, warmup={})
    m = kafka_member("m", member_epoch=2, assigned=target)
    assert to_data(describe(c, GROUP).groups[0]) == described(GROUP, "Stable", 2, 2, described_topology(S1, "foo"),
                                                              [described_member(m, target)])


@both
def test_streams_group_member_joining_with_missing_source_topic(profile):
    c = new_coordinator(profile, {"foo": 6}, NO_DELAY)
    r = streams_join(c, GROUP, "m", FOO_BAR, process_id=DEFAULT_PROCESS_ID)
    assert to_data(r) == expected_heartbeat(profile, "m", 2, active={}, standby={}, warmup={},
                                            status=[(MISSING_SOURCE_TOPICS, "Source topics bar are missing.")])
    m = kafka_member("m", member_epoch=2)
    assert records_since(c, 0) == member_records(c.now(), 
        GROUP, m, TaskSets(), 2, topology=FOO_BAR,
        metadata=(2, group_hash(c.cluster, "foo"), -1, DEFAULT_ASSIGNMENT_CONFIGS))


def test_streams_group_member_joining_with_missing_internal_topic():
    # kafka: the status detail; kgroup's `kip` detail also says how the topic creation stands
    # (KIP-1071: "whether an attempt to create the topics was made").
    topology = Topology(0, (Subtopology(S1, source_topics=("foo",), state_changelog_topics=(TopicInfo("bar"),)),))
    c = new_coordinator("kafka", {"foo": 6}, NO_DELAY)
    r = streams_join(c, GROUP, "m", topology, process_id=DEFAULT_PROCESS_ID)
    assert to_data(r) == expected_heartbeat("kafka", "m", 2, active={}, standby={}, warmup={},
                                            status=[(MISSING_INTERNAL_TOPICS, "Internal topics are missing: bar")])
    assert c.groups[GROUP].state == StreamsGroupState.NOT_READY
    m = kafka_member("m", member_epoch=2)
    assert records_since(c, 0)[:6] == member_records(c.now(), 
        GROUP, m, TaskSets(), 2, topology=topology,
        metadata=(2, group_hash(c.cluster, "foo"), -1, DEFAULT_ASSIGNMENT_CONFIGS))
    c.advance(0)                                     # the CreateTopics "request" completes
    assert c.cluster.partitions("bar") == 6          # Kafka's creatableTopics: bar, 6 partitions


@both
def test_streams_group_member_joining_with_incorrectly_partitioned_topic(profile):
    topology = Topology(0, (Subtopology(S1, source_topics=("foo", "bar"),
                                        copartition_groups=(CopartitionGroup(source_topics=(0, 1)),)),))
    c = new_coordinator(profile, {"foo": 6, "bar": 3}, NO_DELAY)
    r = streams_join(c, GROUP, "m", topology, process_id=DEFAULT_PROCESS_ID)
    detail = "Following topics do not have the same number of partitions: [{bar=3, foo=6}]"
    assert to_data(r) == expected_heartbeat(profile, "m", 2, active={}, standby={}, warmup={},
                                            status=[(INCORRECTLY_PARTITIONED_TOPICS, detail)])
    assert c.groups[GROUP].state == StreamsGroupState.NOT_READY
    assert records_since(c, 0) == member_records(c.now(), 
        GROUP, kafka_member("m", member_epoch=2), TaskSets(), 2, topology=topology,
        metadata=(2, group_hash(c.cluster, "foo", "bar"), -1, DEFAULT_ASSIGNMENT_CONFIGS))


def test_streams_group_member_joining_with_stale_topology():
    # kafka: an older topology epoch joins with STALE_TOPOLOGY (kip: STREAMS_TOPOLOGY_FENCED; topology row).
    cl = cluster(foo=6, bar=3)
    topology1 = Topology(1, (Subtopology(S1, source_topics=("foo", "bar")),))
    c = load_streams_group(streams_group_records(GROUP, 10, topology=topology1, validated_topology_epoch=1,
                                                 target_epoch=1), cl, profile="kafka", config=NO_DELAY,
                           assignment={"m": TaskSets()})
    r = streams_join(c, GROUP, "m", Topology(0, (Subtopology(S1, source_topics=("foo",)),)),
                     process_id=DEFAULT_PROCESS_ID)
    assert to_data(r) == expected_heartbeat("kafka", "m", 11, active={}, standby={}, warmup={}, status=[
        (STALE_TOPOLOGY, "The member's topology epoch 0 is behind the group's topology epoch 1.")])
    assert records_since(c, len(c.log) - 5) == member_records(c.now(), 
        GROUP, kafka_member("m", member_epoch=11), TaskSets(), 11,
        metadata=(11, group_hash(cl, "foo", "bar"), 1, DEFAULT_ASSIGNMENT_CONFIGS))


# -- shutdown ----------------------------------------------------------------------------------

def shutdown_group(profile: str, partitions: int, tasks: bool):
    cl = cluster(foo=partitions)
    a = kafka_member("A", member_epoch=10, previous_member_epoch=9, assigned=active(s1=[0, 1, 2]) if tasks else TaskSets())
    b = kafka_member("B", member_epoch=10, previous_member_epoch=9, assigned=active(s1=[3, 4, 5]) if tasks else TaskSets())
    records = streams_group_records(GROUP, 10, members=[a, b], targets={"A": a.assigned, "B": b.assigned},
                                    target_epoch=10, topology=FOO, metadata_hash=group_hash(cl, "foo"),
                                    validated_topology_epoch=0, assignment_configs=DEFAULT_ASSIGNMENT_CONFIGS)
    return load_streams_group(records, cl, profile=profile), cl


def shutdown_detail(member_id: str) -> str:
    return (f"Streams group member {member_id} encountered a fatal error and requested a shutdown for the entire "
            "application.")


@both
def test_streams_group_member_requesting_shutdown_application(profile):
    c, _ = shutdown_group(profile, 6, True)
    before = c.position
    r = streams_heartbeat(c, GROUP, "A", 10, shutdown_application=True)
    assert to_data(r) == expected_heartbeat(profile, "A", 10, status=[(SHUTDOWN_APPLICATION, shutdown_detail("A"))])
    r = streams_heartbeat(c, GROUP, "B", 10)
    assert to_data(r) == expected_heartbeat(profile, "B", 10, status=[(SHUTDOWN_APPLICATION, shutdown_detail("A"))])
    assert records_since(c, before) == []            # a shutdown request is soft state


@both
def test_streams_group_member_requesting_shutdown_application_upon_leaving(profile):
    c, cl = shutdown_group(profile, 2, False)
    before = c.position
    r = streams_heartbeat(c, GROUP, "A", LEAVE_GROUP_MEMBER_EPOCH, shutdown_application=True)
    assert to_data(r) == expected_heartbeat(profile, "A", -1, heartbeat_interval=0, lag=0)
    assert records_since(c, before) == [
        G.current_assignment_tombstone(GROUP, "A"), G.target_member_tombstone(GROUP, "A"),
        G.member_tombstone(GROUP, "A"),
        G.group_epoch_record(GROUP, 11, group_hash(cl, "foo"), 0, DEFAULT_ASSIGNMENT_CONFIGS)]
    prepare_assignment(c, {})
    r = streams_heartbeat(c, GROUP, "B", 10)
    assert to_data(r) == expected_heartbeat(profile, "B", 11, status=[(SHUTDOWN_APPLICATION, shutdown_detail("A"))])


# -- what bumps the group epoch ------------------------------------------------------------------

def one_member_group(profile: str, cl: Cluster, hash_cluster: Cluster | None = None, **records_kw):
    m = kafka_member("m", member_epoch=10, previous_member_epoch=9, assigned=active(s1=range(6)))
    return load_streams_group(streams_group_records(
        GROUP, 10, members=[m], targets={"m": m.assigned}, target_epoch=10, topology=FOO_BAR,
        metadata_hash=group_hash(hash_cluster or cl, "foo", "bar"), **records_kw), cl, profile=profile)


@both
def test_streams_updating_member_metadata_triggers_new_target_assignment(profile):
    cl = cluster(foo=6, bar=3)
    c = one_member_group(profile, cl)
    target = active(s1=range(6), s2=range(3))
    prepare_assignment(c, {"m": target})
    before = c.position
    r = streams_heartbeat(c, GROUP, "m", 10, process_id="process-id2")
    assert to_data(r) == expected_heartbeat(profile, "m", 11, active={S1: range(6), S2: range(3)}, standby={},
                                            warmup={})
    m = kafka_member("m", member_epoch=11, previous_member_epoch=10, assigned=target, process_id="process-id2")
    m = with_task_epochs(m, 10, dict.fromkeys(active(s2=range(3)).active_ids(), 11))   # bar's tasks are new
    assert records_since(c, before) == member_records(c.now(), GROUP, m, target, 11, metadata=(
        11, group_hash(cl, "foo", "bar"), 0, DEFAULT_ASSIGNMENT_CONFIGS))


@both
def test_streams_updating_partition_metadata_triggers_new_target_assignment(profile):
    cl = cluster(foo=6, bar=6)
    c = one_member_group(profile, cl, hash_cluster=cluster(foo=6, bar=3))
    target = active(s1=range(6), s2=range(3))
    prepare_assignment(c, {"m": target})
    before = c.position
    r = streams_heartbeat(c, GROUP, "m", 10)
    assert to_data(r) == expected_heartbeat(profile, "m", 11, active={S1: range(6), S2: range(3)}, standby={},
                                            warmup={})
    m = kafka_member("m", member_epoch=11, previous_member_epoch=10, assigned=target)
    m = with_task_epochs(m, 10, dict.fromkeys(active(s2=range(3)).active_ids(), 11))   # bar's tasks are new
    assert records_since(c, before) == member_records(c.now(), GROUP, m, target, 11, metadata=(
        11, group_hash(cl, "foo", "bar"), 0, DEFAULT_ASSIGNMENT_CONFIGS))[1:]


@both
def test_streams_new_joining_member_triggers_new_target_assignment(profile):
    cl = cluster(foo=6, bar=3)
    c = load_streams_group(two_members_at_epoch_10(cl), cl, profile=profile)
    prepare_assignment(c, {"A": active(s1=[0, 1], s2=[0]), "B": active(s1=[2, 3], s2=[1]),
                           "C": active(s1=[4, 5], s2=[2])})
    r = streams_join(c, GROUP, "C", FOO_BAR, process_id=DEFAULT_PROCESS_ID)
    assert to_data(r) == expected_heartbeat(profile, "C", 11, active={}, standby={}, warmup={})


@both
def test_streams_leaving_member_removes_member_and_bumps_group_epoch(profile):
    cl = cluster(foo=6, bar=3)
    records = [r for r in two_members_at_epoch_10(cl, with_hash=False) if type(r).__name__ != "StreamsGroupTopology"]
    c = load_streams_group(records, cl, profile=profile)
    before = c.position
    r = streams_heartbeat(c, GROUP, "B", LEAVE_GROUP_MEMBER_EPOCH, rebalance_timeout=1500, active={}, standby={},
                          warmup={})
    assert to_data(r) == expected_heartbeat(profile, "B", -1, heartbeat_interval=0, lag=0)
    assert records_since(c, before) == [
        G.current_assignment_tombstone(GROUP, "B"), G.target_member_tombstone(GROUP, "B"),
        G.member_tombstone(GROUP, "B"), G.group_epoch_record(GROUP, 11, 0, -1, {})]


# -- partial responses and the status -------------------------------------------------------------

@both
def test_streams_group_heartbeat_partial_response_when_nothing_changes(profile):
    c = new_coordinator(profile, {"foo": 2}, NO_DELAY, {"m": active(s1=[0, 1])})
    r = streams_join(c, GROUP, "m", FOO)
    assert to_data(r) == expected_heartbeat(profile, "m", 2, active={S1: [0, 1]}, standby={}, warmup={})
    r = streams_heartbeat(c, GROUP, "m", r.member_epoch)
    assert to_data(r) == expected_heartbeat(profile, "m", 2)


@both
def test_streams_group_heartbeat_response_version0(profile):
    # v0 carries AcceptableRecoveryLag in its int32 field under `kip` only (the README's profile table).
    c = new_coordinator(profile, {"foo": 2}, NO_DELAY, {"m": active(s1=[0, 1])})
    r = streams_join(c, GROUP, "m", FOO)
    assert (r.member_id, r.member_epoch, r.heartbeat_interval.total_seconds(), r.task_offset_interval.total_seconds(),
            r.acceptable_recovery_lag) == ("m", 2, 5, 60, 10_000 if profile == "kip" else 0)


@both
def test_streams_group_heartbeat_always_sets_status(profile):
    c = new_coordinator(profile, {"foo": 2}, NO_DELAY, {"m": active(s1=[0, 1])})
    r = streams_join(c, GROUP, "m", FOO)
    assert r.status == () and r.active_tasks is not None
    r = streams_heartbeat(c, GROUP, "m", r.member_epoch)
    assert to_data(r) == expected_heartbeat(profile, "m", 2) and r.status == ()


# -- the initial rebalance delay (kafka: the README's profile table, statuses row) ---------------------------

def test_streams_initial_rebalance_delay_empty_during_delay_assigns_after_timer():
    c = new_coordinator("kafka", {"foo": 2}, {"group.streams.initial.rebalance.delay.ms": 1000})
    r = streams_join(c, GROUP, "m", FOO)
    assert to_data(r) == expected_heartbeat("kafka", "m", 1, active={}, standby={}, warmup={}, status=[
        (ASSIGNMENT_DELAYED, "Assignment delayed due to the configured initial rebalance delay.")])
    prepare_assignment(c, {"m": active(s1=[0, 1])})
    c.advance(10_000)
    r = streams_heartbeat(c, GROUP, "m", 1, active={}, standby={}, warmup={})
    assert to_data(r) == expected_heartbeat("kafka", "m", 2, active={S1: [0, 1]}, standby={}, warmup={})


def test_streams_rebalance_delay_when_joining_empty_group_with_non_zero_epoch():
    c = load_streams_group(streams_group_records(GROUP, 10, target_epoch=1), cluster(foo=2), profile="kafka",
                           config={"group.streams.initial.rebalance.delay.ms": 1000},
                           assignment={"m": active(s1=[0, 1])})
    assert not c.groups[GROUP].members and c.groups[GROUP].group_epoch == 10
    r = streams_join(c, GROUP, "m", FOO, rebalance_timeout=10_000)
    assert tasks(r.active_tasks) == {}
    c.advance(2000)
    r = streams_heartbeat(c, GROUP, "m", r.member_epoch, active={}, standby={}, warmup={})
    assert tasks(r.active_tasks) == {S1: {0, 1}}


def tasks(field) -> dict:
    return {t.subtopology_id: set(t.partitions) for t in field}


# -- reconciliation ------------------------------------------------------------------------------

@both
def test_streams_reconciliation_process(profile):
    cl = cluster(foo=6, bar=3)
    c = load_streams_group(two_members_at_epoch_10(cl, validated=0), cl, profile=profile)
    prepare_assignment(c, {"A": active(s1=[0, 1], s2=[0]), "B": active(s1=[2, 3], s2=[2]),
                           "C": active(s1=[4, 5], s2=[1])})
    g = c.groups[GROUP]
    assert g.state == StreamsGroupState.STABLE

    def step(member, epoch, expect_epoch, expect_active=None, records=(), **kw):
        before = c.position
        r = streams_heartbeat(c, GROUP, member, epoch, **kw)
        extra = {} if expect_active is None else dict(active=expect_active, standby={}, warmup={})
        assert to_data(r) == expected_heartbeat(profile, member, expect_epoch, **extra)
        assert records_since(c, before) == [G.current_assignment_record(GROUP, m) for m in records]

    def member(mid, epoch, prev, state=MemberState.STABLE, assigned=TaskSets(), pending=TaskSets()):
        return kafka_member(mid, member_epoch=epoch, previous_member_epoch=prev, state=state, assigned=assigned,
                            pending_revocation=pending)

    unreleased, unrevoked = MemberState.UNRELEASED_PARTITIONS, MemberState.UNREVOKED_PARTITIONS
    r = streams_join(c, GROUP, "C", FOO_BAR)          # C gets nothing yet: all tasks are owned
    assert to_data(r) == expected_heartbeat(profile, "C", 11, active={}, standby={}, warmup={})
    assert records_since(c, len(c.log) - 1) == [G.current_assignment_record(GROUP, member("C", 11, 0, unreleased))]
    assert g.members["C"].state == unreleased and g.state == StreamsGroupState.RECONCILING
    step("A", 10, 10, {S1: [0, 1], S2: [0]},
         [member("A", 10, 10, unrevoked, active(s1=[0, 1], s2=[0]), active(s1=[2], s2=[1]))])
    step("B", 10, 10, {S1: [3], S2: [2]},
         [member("B", 10, 10, unrevoked, active(s1=[3], s2=[2]), active(s1=[4, 5]))])
    step("C", 11, 11, None, [member("C", 11, 11, unreleased)])
    # The tasks a member keeps keep the epoch they were assigned in; new ones get the target epoch.
    step("A", 10, 11, None, [with_task_epochs(member("A", 11, 10, assigned=active(s1=[0, 1], s2=[0])), 10)],
         active={S1: [0, 1], S2: [0]}, standby={}, warmup={})
    step("B", 10, 10, None, [])                        # not acknowledged yet: nothing happens
    step("C", 11, 11, {S2: [1]}, [member("C", 11, 11, unreleased, active(s2=[1]))])
    step("C", 11, 11, None, [])
    step("B", 10, 11, {S1: [2, 3], S2: [2]},
         [with_task_epochs(member("B", 11, 10, assigned=active(s1=[2, 3], s2=[2])), 10, {(S1, 2): 11})],
         active={S1: [3], S2: [2]}, standby={}, warmup={})
    step("C", 11, 11, {S1: [4, 5], S2: [1]}, [member("C", 11, 11, assigned=active(s1=[4, 5], s2=[1]))],
         active={S2: [1]}, standby={}, warmup={})
    assert g.state == StreamsGroupState.STABLE


@both
def test_streams_streams_group_states(profile):
    cl = cluster(foo=6, bar=3)
    h = group_hash(cl, "foo", "bar")
    m = kafka_member("m")
    base = streams_group_records(GROUP, 10, target_epoch=10) + [FOO_BAR.to_record(GROUP), G.member_record(GROUP, m)]
    states = []
    for extra in ([G.group_epoch_record(GROUP, 11, h, -1, {})],
                  [G.group_epoch_record(GROUP, 11, h, 0, {})],   # Kafka sets ValidatedTopologyEpoch directly
                  [G.target_member_record(GROUP, "m", active(s1=[1, 2, 3])), G.target_epoch_record(GROUP, 11)],
                  [G.current_assignment_record(GROUP, kafka_member("m", member_epoch=11, previous_member_epoch=10,
                                                                   state=MemberState.UNREVOKED_PARTITIONS,
                                                                   assigned=active(s1=[1, 2, 3])))],
                  [G.current_assignment_record(GROUP, kafka_member("m", member_epoch=11, previous_member_epoch=10,
                                                                   assigned=active(s1=[1, 2, 3])))]):
        base = base + extra
        states.append(load_streams_group(base, cl, profile=profile).groups[GROUP].state)
    assert load_streams_group(streams_group_records(GROUP, 10), cl).groups[GROUP].state == "Empty"
    assert states == ["NotReady", "Assigning", "Reconciling", "Reconciling", "Stable"]


class FailingAssignor:
    name = "sticky"

    def assign(self, spec):
        raise TaskAssignorException("Assignment failed.")


@both
def test_streams_task_assignor_exception_on_regular_heartbeat(profile):
    c = new_coordinator(profile, {"foo": 6, "bar": 3}, NO_DELAY)
    c.soft_state[TASK_ASSIGNOR_OVERRIDE] = FailingAssignor()
    r = streams_join(c, GROUP, "m", FOO_BAR)
    assert (r.error_code, r.error_message) == (E.unknown_server_error,
                                               "Failed to compute a new target assignment for epoch 2: "
                                               "Assignment failed.")
    assert c.position == 0


@both
def test_streams_partition_metadata_refreshed_after_group_is_loaded(profile):
    cl = cluster(foo=6)
    m = kafka_member("m", member_epoch=10, previous_member_epoch=10, assigned=active(s1=[0, 1, 2]))
    c = load_streams_group(streams_group_records(
        GROUP, 10, members=[m], targets={"m": m.assigned}, target_epoch=10, topology=FOO,
        metadata_hash=group_hash(cluster(foo=3), "foo")), cl, profile=profile)
    target = active(s1=range(6))
    prepare_assignment(c, {"m": target})
    before = c.position
    r = streams_heartbeat(c, GROUP, "m", 10)
    assert to_data(r) == expected_heartbeat(profile, "m", 11, active={S1: range(6)}, standby={}, warmup={})
    m = kafka_member("m", member_epoch=11, previous_member_epoch=10, assigned=target)
    m = with_task_epochs(m, 10, dict.fromkeys(active(s1=[3, 4, 5]).active_ids(), 11))   # the new partitions' tasks
    assert records_since(c, before) == member_records(c.now(), GROUP, m, target, 11, metadata=(
        11, group_hash(cl, "foo"), 0, DEFAULT_ASSIGNMENT_CONFIGS))[1:]


# -- timeouts ----------------------------------------------------------------------------------

@both
def test_streams_session_timeout_lifecycle(profile):
    c = new_coordinator(profile, {"foo": 6}, NO_DELAY, {"m": active(s1=range(6))})
    r = streams_join(c, GROUP, "m", FOO, rebalance_timeout=90_000)
    assert r.member_epoch == 2
    for _ in range(2):                                 # each heartbeat starts the 45 s session again
        c.advance(44_000)
        r = streams_heartbeat(c, GROUP, "m", r.member_epoch)
        assert (r.error_code, r.member_epoch) == (E.none, 2)
    r = streams_heartbeat(c, GROUP, "m", LEAVE_GROUP_MEMBER_EPOCH)
    assert r.member_epoch == LEAVE_GROUP_MEMBER_EPOCH
    before = c.position
    c.advance(100_000)                                 # no timer is left to fire
    assert records_since(c, before) == []


@both
def test_streams_session_timeout_expiration(profile):
    c = new_coordinator(profile, {"foo": 6}, NO_DELAY, {"m": active(s1=range(6))})
    assert streams_join(c, GROUP, "m", FOO, rebalance_timeout=90_000).member_epoch == 2
    before = c.position
    c.advance(45_001)
    # KAFKA-20442: the last member gone, the assignment epoch catches up with the group epoch.
    assert records_since(c, before) == [
        G.current_assignment_tombstone(GROUP, "m"), G.target_member_tombstone(GROUP, "m"),
        G.member_tombstone(GROUP, "m"),
        G.group_epoch_record(GROUP, 3, group_hash(c.cluster, "foo"), 0, DEFAULT_ASSIGNMENT_CONFIGS),
        G.target_epoch_record(GROUP, 3)]
    before = c.position
    c.advance(100_000)
    assert records_since(c, before) == []


@both
def test_streams_rebalance_timeout_lifecycle(profile):
    c = new_coordinator(profile, {"foo": 3}, NO_DELAY, {"m1": active(s1=[0, 1, 2])})
    r = streams_join(c, GROUP, "m1", FOO, rebalance_timeout=12_000)
    assert to_data(r) == expected_heartbeat(profile, "m1", 2, active={S1: [0, 1, 2]}, standby={}, warmup={})
    c.advance(5000)
    prepare_assignment(c, {"m1": active(s1=[0, 1]), "m2": active(s1=[2])})
    r = streams_join(c, GROUP, "m2", FOO, rebalance_timeout=90_000)
    assert to_data(r) == expected_heartbeat(profile, "m2", 3, active={}, standby={}, warmup={})
    c.advance(5000)
    r = streams_heartbeat(c, GROUP, "m1", 2, rebalance_timeout=12_000)
    assert to_data(r) == expected_heartbeat(profile, "m1", 2, active={S1: [0, 1]}, standby={}, warmup={})
    c.advance(5000)
    r = streams_heartbeat(c, GROUP, "m1", 2, active={S1: [0, 1]}, standby={}, warmup={})
    assert to_data(r) == expected_heartbeat(profile, "m1", 3)
    before = c.position
    c.advance(12_000)                                  # the revocation timer was cancelled: nothing fires
    assert records_since(c, before) == [] and "m1" in c.groups[GROUP].members


@both
def test_streams_rebalance_timeout_expiration(profile):
    c = new_coordinator(profile, {"foo": 6}, NO_DELAY, {"m1": active(s1=[0, 1, 2])})
    streams_join(c, GROUP, "m1", FOO, rebalance_timeout=10_000)
    c.advance(5000)
    prepare_assignment(c, {"m1": active(s1=[0, 1]), "m2": active(s1=[2])})
    assert streams_join(c, GROUP, "m2", FOO, rebalance_timeout=10_000).member_epoch == 3
    c.advance(5000)
    r = streams_heartbeat(c, GROUP, "m1", 2)
    assert to_data(r) == expected_heartbeat(profile, "m1", 2, active={S1: [0, 1]}, standby={}, warmup={})
    before = c.position
    c.advance(10_001)
    assert records_since(c, before) == [
        G.current_assignment_tombstone(GROUP, "m1"), G.target_member_tombstone(GROUP, "m1"),
        G.member_tombstone(GROUP, "m1"),
        G.group_epoch_record(GROUP, 4, group_hash(c.cluster, "foo"), 0, DEFAULT_ASSIGNMENT_CONFIGS)]


# -- Interactive Queries endpoints (PR #20854) -------------------------------------------------

@both
def test_streams_group_endpoint_information_only_when_epoch_greater(profile):
    c = new_coordinator(profile, {"foo": 2}, NO_DELAY, {"m": active(s1=[0, 1])})
    endpoint = {"host": "localhost", "port": 9092}
    r = streams_join(c, GROUP, "m", FOO, user_endpoint=endpoint, endpoint_information_epoch=0)
    assert to_data(r) == expected_heartbeat(profile, "m", 2, active={S1: [0, 1]}, standby={}, warmup={},
                                            partitions_by_user_endpoint=[{
                                                "user_endpoint": endpoint,
                                                "active_partitions": [{"topic": "foo", "partitions": [0, 1]}],
                                                "standby_partitions": []}])
    r = streams_heartbeat(c, GROUP, "m", r.member_epoch, user_endpoint=endpoint,
                          endpoint_information_epoch=r.endpoint_information_epoch)
    assert r.partitions_by_user_endpoint is None


@both
def test_streams_group_endpoint_information_includes_new_member(profile):
    # Kafka's test sets STREAMS_GROUP_ASSIGNMENT_INTERVAL_MS_CONFIG 0: m2's join computes at once
    c = new_coordinator(profile, {"foo": 4}, {**NO_DELAY, "group.streams.assignment.interval.ms": 0},
                        {"m1": active(s1=[0, 1])})
    r = streams_join(c, GROUP, "m1", FOO, user_endpoint={"host": "host1", "port": 9092})
    assert r.member_epoch == 2
    prepare_assignment(c, {"m1": active(s1=[0, 1]), "m2": active(s1=[2, 3])})
    r = streams_join(c, GROUP, "m2", FOO, user_endpoint={"host": "host2", "port": 9093})
    got = sorted((e.user_endpoint.host, e.user_endpoint.port, [(p.topic, sorted(p.partitions)) for p in
                                                                e.active_partitions])
                 for e in r.partitions_by_user_endpoint)
    assert got == [("host1", 9092, [("foo", [0, 1])]), ("host2", 9093, [("foo", [2, 3])])]


# -- assignment configs ------------------------------------------------------------------------

def alter_group_config(c: Coordinator, group_id: str, **configs) -> None:
    r = c.handle(request("IncrementalAlterConfigs", 1, validate_only=False, resources=[
        {"resource_type": 32, "resource_name": group_id,
         "configs": [{"name": k.replace("_", "."), "config_operation": 0, "value": str(v)}
                     for k, v in configs.items()]}]))
    assert r.responses[0].error_code == E.none


@both
def test_streams_group_epoch_increase_with_num_standby_replicas_config_changes(profile):
    m = kafka_member("m", member_epoch=10, previous_member_epoch=9, assigned=active(s1=range(6)))
    c = load_streams_group(streams_group_records(GROUP, 10, members=[m], targets={"m": m.assigned},
                                                 target_epoch=10, topology=FOO, validated_topology_epoch=0),
                           cluster(foo=6), profile=profile, config={"group.streams.num.standby.replicas": 0})
    alter_group_config(c, GROUP, streams_num_standby_replicas=2)
    prepare_assignment(c, {"m": active(s1=[0, 1, 2])})
    before = c.position
    r = streams_heartbeat(c, GROUP, "m", 10, active={S1: [0, 1, 2]}, standby={}, warmup={})
    assert to_data(r) == expected_heartbeat(profile, "m", 11, active={S1: [0, 1, 2]}, standby={}, warmup={})
    metadata = [x for x in records_since(c, before) if type(x).__name__ == "StreamsGroupMetadata"]
    assert [(v.epoch, [(kv.key, kv.value) for kv in v.last_assignment_configs]) for v in (x.value for x in metadata)] \
        == [(11, [("num.standby.replicas", "2")])]
    assert c.groups[GROUP].group_epoch == 11


@both
def test_streams_group_epoch_should_not_increase_with_acceptable_recovery_lag_config_change(profile):
    # The record keeps num.standby.replicas only. Here the group was loaded without configs, so the
    # first heartbeat writes them (epoch 11) under both profiles; under `kip` a lag change alone
    # bumps too (KIP-1071 "an assignment configuration is updated"; profile streams_bump_on_every_assignment_config).
    m = kafka_member("m", member_epoch=10, previous_member_epoch=9, assigned=active(s1=range(6)))
    c = load_streams_group(streams_group_records(GROUP, 10, members=[m], targets={"m": m.assigned},
                                                 target_epoch=10, topology=FOO, validated_topology_epoch=0),
                           cluster(foo=6), profile=profile)
    alter_group_config(c, GROUP, streams_acceptable_recovery_lag=50_000)
    prepare_assignment(c, {"m": active(s1=range(6))})
    before = c.position
    r = streams_heartbeat(c, GROUP, "m", 10, active={S1: range(6)}, standby={}, warmup={})
    assert to_data(r) == expected_heartbeat(profile, "m", 11, lag=50_000)
    metadata = [x.value for x in records_since(c, before) if type(x).__name__ == "StreamsGroupMetadata"]
    assert [(v.epoch, [kv.key for kv in v.last_assignment_configs]) for v in metadata] \
        == [(11, ["num.standby.replicas"])]
    alter_group_config(c, GROUP, streams_acceptable_recovery_lag=60_000)
    streams_heartbeat(c, GROUP, "m", 11)
    assert c.groups[GROUP].group_epoch == (12 if profile == "kip" else 11)


# -- classic groups ----------------------------------------------------------------------------

def test_streams_group_heartbeat_with_non_empty_classic_group():
    # kafka: under kip a classic group with members converts (the README's profile table, online migration row).
    from tests.kgroup_testing import join_until_member_id
    c = Coordinator(profile="kafka")
    join_until_member_id(c, "classic-group-id")
    r = streams_join(c, "classic-group-id", "m", FOO, rebalance_timeout=12_000)
    assert r.error_code == E.group_id_not_found


@both
def test_streams_group_heartbeat_with_empty_classic_group(profile):
    from tests.kgroup_testing import join_until_member_id, leave
    c = Coordinator(profile=profile, config=NO_DELAY)
    joined = join_until_member_id(c, "classic-group-id")
    c.advance(3000)
    leave(c, "classic-group-id", (joined.response.member_id, None))   # an empty classic group is left
    before = c.position
    r = streams_join(c, "classic-group-id", "m", FOO, rebalance_timeout=12_000)
    assert r.error_code == E.none and str(c.groups["classic-group-id"].type) == "streams"
    got = records_since(c, before)
    assert type(got[0]).__name__ == "GroupMetadata" and got[0].value is None    # the classic group's tombstone
    m = kafka_member("m", member_epoch=2, rebalance_timeout_ms=12_000, process_id="")
    assert got[1:] == member_records(c.now(), "classic-group-id", m, TaskSets(), 2, topology=FOO,
                                     metadata=(2, 0, -1, DEFAULT_ASSIGNMENT_CONFIGS))


@both
def test_classic_group_join_with_empty_streams_group(profile):
    # Both profiles: an empty group has nobody to migrate (Kafka's maybeDeleteEmptyStreamsGroup).
    from kgroup import records as R
    from tests.kgroup_testing import join
    c = load_streams_group(streams_group_records("streams-group-id", 10), cluster(), profile=profile)
    before = c.position
    r = join(c, "streams-group-id")
    assert r.done and r.response.error_code == E.member_id_required and r.response.member_id
    written = records_since(c, before)
    assert written[:3] == [
        R.StreamsGroupTargetAssignmentMetadata.tombstone(R.StreamsGroupTargetAssignmentMetadataKey(
            group_id="streams-group-id")),
        R.StreamsGroupMetadata.tombstone(R.StreamsGroupMetadataKey(group_id="streams-group-id")),
        R_topology_tombstone("streams-group-id")]
    assert [type(rec).__name__ for rec in written[3:]] == ["GroupMetadata"]   # the new classic group
    assert str(c.groups["streams-group-id"].type) == "classic"
    # The member joins the classic group with the id it was given; a reload sees the same group.
    j = join(c, "streams-group-id", r.response.member_id)
    c.advance(3000)   # group.initial.rebalance.delay.ms
    assert (j.response.error_code, j.response.generation_id) == (E.none, 1)
    assert str(Coordinator.load(c.log, profile=profile).groups["streams-group-id"].type) == "classic"


def test_classic_group_join_with_non_empty_streams_group():
    # kafka: under kip classic members join a Streams group (the README's profile table, online migration row).
    from tests.kgroup_testing import join
    m = kafka_member("m", member_epoch=10, previous_member_epoch=10)
    c = load_streams_group(streams_group_records("streams-group-id", 10, members=[m]), cluster(), profile="kafka")
    assert join(c, "streams-group-id").response.error_code == E.inconsistent_group_protocol


# -- dynamic group configs ---------------------------------------------------------------------

class RecordingAssignor(FixedTaskAssignor):
    """Kafka's `MockTaskAssignor.lastPassedAssignmentConfigs`: what the assignor was given."""

    def assign(self, spec):
        self.num_standby_replicas = spec.num_standby_replicas
        return super().assign(spec)


@both
def test_streams_group_dynamic_configs(profile):
    c = new_coordinator(profile, {"foo": 6}, NO_DELAY)
    assignor = c.soft_state[TASK_ASSIGNOR_OVERRIDE] = RecordingAssignor({"m": active(s1=[0, 1, 2])})
    r = streams_join(c, GROUP, "m", FOO, rebalance_timeout=10_000)
    assert (r.member_epoch, r.heartbeat_interval.total_seconds(), assignor.num_standby_replicas) == (2, 5, 0)
    c.advance(44_000)
    assert "m" in c.groups[GROUP].members             # the 45 s session
    alter_group_config(c, GROUP, streams_session_timeout_ms=50_000, streams_heartbeat_interval_ms=10_000,
                       streams_num_standby_replicas=2)
    r = streams_heartbeat(c, GROUP, "m", r.member_epoch, rack_id="bla")
    assert (r.heartbeat_interval.total_seconds(), assignor.num_standby_replicas) == (10, 2)
    c.advance(49_000)
    assert "m" in c.groups[GROUP].members             # now 50 s
    r = streams_heartbeat(c, GROUP, "m", LEAVE_GROUP_MEMBER_EPOCH)
    assert r.member_epoch == LEAVE_GROUP_MEMBER_EPOCH and "m" not in c.groups[GROUP].members


@both
def test_streams_group_evaluated_configs(profile):
    from kgroup.groups.streams.protocol import session_key
    c = new_coordinator(profile, {"foo": 6}, NO_DELAY)
    assignor = c.soft_state[TASK_ASSIGNOR_OVERRIDE] = RecordingAssignor({"m": active(s1=[0, 1, 2])})
    r = streams_join(c, GROUP, "m", FOO, rebalance_timeout=10_000)
    assert (r.member_epoch, ms(r.heartbeat_interval), ms(r.task_offset_interval), assignor.num_standby_replicas) \
        == (2, 5000, 60_000, 0)
    assert c.timers.pending()[session_key(GROUP, "m")] - c.now() == 45_000
    c.advance(5000)
    # Overrides outside the coordinator's bounds, stored as Kafka's updateGroupConfig stores them
    # (kgroup's IncrementalAlterConfigs refuses them; the bounds may also have moved since).
    c.cluster.group_configs[GROUP] = {"streams.session.timeout.ms": 70_000, "streams.heartbeat.interval.ms": 1,
                                      "streams.num.standby.replicas": 100, "streams.task.offset.interval.ms": 100}
    r = streams_heartbeat(c, GROUP, "m", r.member_epoch, rack_id="bla")
    # each evaluated to the bound it crossed: max session 60 s, min interval 5 s, max 2 standbys,
    # min task offset interval 15 s
    assert (ms(r.heartbeat_interval), ms(r.task_offset_interval), assignor.num_standby_replicas) == (5000, 15_000, 2)
    assert c.timers.pending()[session_key(GROUP, "m")] - c.now() == 60_000


# -- replay --------------------------------------------------------------------------------------

def load(records, profile="kip"):
    return Coordinator.load(records, profile=profile)


def full_member(member_id: str = "member"):
    from kgroup.groups.streams.group import Endpoint
    return kafka_member(member_id, client_id="clientid", client_host="clienthost", rack_id="rackid",
                        instance_id="instanceid", rebalance_timeout_ms=1000, topology_epoch=10,
                        process_id="processid", user_endpoint=Endpoint("localhost", 9999),
                        client_tags=(("key", "value"),), member_epoch=0, previous_member_epoch=0)


TASKS = TaskSets(active={"subtopology-1": frozenset({0, 1, 2})}, standby={"subtopology-1": frozenset({3, 4, 5})},
                 warmup={"subtopology-1": frozenset({6, 7, 8})})


@both
def test_replay_streams_group_member_metadata(profile):
    m = full_member()
    c = load([G.member_record("foo", m)], profile)
    assert c.groups["foo"].members["member"] == m


@both
def test_replay_streams_group_member_metadata_with_simple_classic_group(profile):
    m = full_member()
    c = load([offset_commit_record("foo", "orders", 0, 5, -1, "", 0, None), G.member_record("foo", m)], profile)
    assert str(c.groups["foo"].type) == "streams" and c.groups["foo"].members["member"] == m


@both
def test_replay_streams_group_member_metadata_tombstone_not_existing(profile):
    c = load([G.group_epoch_record("foo", 10, 0, 0, DEFAULT_ASSIGNMENT_CONFIGS), G.member_tombstone("foo", "m1"),
              G.member_tombstone("bar", "m1")], profile)
    assert "m1" not in c.groups["foo"].members and "bar" not in c.groups


@both
def test_replay_streams_group_member_metadata_tombstone_existing(profile):
    base = streams_group_records("foo", 10, members=[kafka_member("m1")], targets={"m1": TASKS})
    with pytest.raises(ReplayError, match="Received a tombstone record to delete member m1 but did not receive "
                                          "StreamsGroupCurrentMemberAssignmentValue tombstone."):
        load(base + [G.member_tombstone("foo", "m1")], profile)
    base.append(G.current_assignment_tombstone("foo", "m1"))
    with pytest.raises(ReplayError, match="Received a tombstone record to delete member m1 but did not receive "
                                          "StreamsGroupTargetAssignmentMetadataValue tombstone."):
        load(base + [G.member_tombstone("foo", "m1")], profile)
    c = load(base + [G.target_member_tombstone("foo", "m1"), G.member_tombstone("foo", "m1")], profile)
    assert "m1" not in c.groups["foo"].members


@both
def test_replay_streams_group_metadata(profile):
    assert load([G.group_epoch_record("foo", 10, 0, 0, DEFAULT_ASSIGNMENT_CONFIGS)], profile).groups["foo"].group_epoch == 10


@both
def test_replay_streams_group_epoch_tombstone_not_existing(profile):
    assert "foo" not in load([R_metadata_tombstone("foo")], profile).groups


@both
def test_replay_streams_group_epoch_tombstone_existing(profile):
    base = streams_group_records("foo", 10, members=[kafka_member("m1")], targets={"m1": TASKS}, target_epoch=10)
    with pytest.raises(ReplayError, match="Received a tombstone record to delete group foo but the group still "
                                          "has 1 members."):
        load(base + [R_metadata_tombstone("foo")], profile)
    base += [G.target_member_tombstone("foo", "m1"), G.current_assignment_tombstone("foo", "m1"),
             G.member_tombstone("foo", "m1")]
    with pytest.raises(ReplayError, match="Received a tombstone record to delete group foo but did not receive "
                                          "StreamsGroupTargetAssignmentMetadataValue tombstone."):
        load(base + [R_metadata_tombstone("foo")], profile)
    from kgroup import records as R
    target_meta_tombstone = R.StreamsGroupTargetAssignmentMetadata.tombstone(
        R.StreamsGroupTargetAssignmentMetadataKey(group_id="foo"))
    assert "foo" not in load(base + [target_meta_tombstone, R_metadata_tombstone("foo")], profile).groups


@both
def test_replay_streams_group_target_assignment_member(profile):
    assert load([G.target_member_record("foo", "m1", TASKS)], profile).groups["foo"].target_assignment["m1"] == TASKS


@both
def test_replay_streams_group_target_assignment_member_tombstone_non_existing(profile):
    assert "foo" not in load([G.target_member_tombstone("foo", "m1")], profile).groups


@both
def test_replay_streams_group_target_assignment_member_tombstone_existing(profile):
    c = load(streams_group_records("foo", 10, targets={"m1": TASKS}) + [G.target_member_tombstone("foo", "m1")],
             profile)
    assert "m1" not in c.groups["foo"].target_assignment


@both
def test_replay_streams_group_target_assignment_metadata(profile):
    g = load([G.target_epoch_record("foo", 10, 12345)], profile).groups["foo"]
    assert (g.assignment_epoch, g.assignment_timestamp) == (10, 12345)


@both
def test_replay_streams_group_target_assignment_metadata_tombstone_not_existing(profile):
    from kgroup import records as R
    tombstone = R.StreamsGroupTargetAssignmentMetadata.tombstone(R.StreamsGroupTargetAssignmentMetadataKey(group_id="foo"))
    assert "foo" not in load([tombstone], profile).groups


@both
def test_replay_streams_group_target_assignment_metadata_tombstone_existing(profile):
    from kgroup import records as R
    tombstone = R.StreamsGroupTargetAssignmentMetadata.tombstone(R.StreamsGroupTargetAssignmentMetadataKey(group_id="foo"))
    base = streams_group_records("foo", 10, targets={"m1": TASKS}, target_epoch=10, assignment_timestamp=12345)
    with pytest.raises(ReplayError, match="Received a tombstone record to delete target assignment of foo but the "
                                          "assignment still has 1 members."):
        load(base + [tombstone], profile)
    c = load(base + [G.target_member_tombstone("foo", "m1"), tombstone], profile)
    assert (c.groups["foo"].assignment_epoch, c.groups["foo"].assignment_timestamp) == (-1, 0)


@both
def test_replay_streams_group_current_member_assignment(profile):
    m = G.StreamsGroupMember("member", member_epoch=10, previous_member_epoch=9,
                             state=MemberState.UNRELEASED_PARTITIONS, assigned=TASKS)
    m = with_task_epochs(m, 9, {min(TASKS.active_ids()): 7})   # Kafka's mkTasksWithEpochs
    loaded = load([G.current_assignment_record("bar", m)], profile).groups["bar"].members["member"]
    assert loaded == m and loaded.assigned_active_epochs() == m.active_epochs


@both
def test_replay_streams_group_current_member_assignment_tombstone_not_existing(profile):
    c = load([G.group_epoch_record("foo", 10, 0, 0, DEFAULT_ASSIGNMENT_CONFIGS),
              G.current_assignment_tombstone("foo", "m1"), G.current_assignment_tombstone("bar", "m1")], profile)
    assert "m1" not in c.groups["foo"].members and "bar" not in c.groups


@both
def test_replay_streams_group_current_member_assignment_tombstone_existing(profile):
    base = streams_group_records("foo", 10, members=[kafka_member("m1", assigned=TASKS)])
    m = load(base + [G.current_assignment_tombstone("foo", "m1")], profile).groups["foo"].members["m1"]
    assert (m.member_epoch, m.previous_member_epoch, m.assigned.is_empty, m.pending_revocation.is_empty) == \
        (LEAVE_GROUP_MEMBER_EPOCH, LEAVE_GROUP_MEMBER_EPOCH, True, True)


@both
def test_replay_streams_group_topology(profile):
    topology = Topology(12, (Subtopology("subtopology-1", source_topics=("source-topic",),
                                         repartition_sink_topics=("sink-topic",)),))
    assert load([topology.to_record("bar")], profile).groups["bar"].topology == topology


@both
def test_replay_streams_group_topology_tombstone_not_exists(profile):
    c = load([G.group_epoch_record("foo", 10, 0, 0, DEFAULT_ASSIGNMENT_CONFIGS), R_topology_tombstone("foo"),
              R_topology_tombstone("bar")], profile)
    assert c.groups["foo"].topology is None and "bar" not in c.groups


@both
def test_replay_streams_group_topology_tombstone_exists(profile):
    c = load(streams_group_records("foo", 10, topology=Topology(10, ())) + [R_topology_tombstone("foo")], profile)
    assert c.groups["foo"].topology is None


def compaction_group(*assignments) -> "G.StreamsGroup":
    a = kafka_member("memberIdA", process_id="processIdA")
    b = kafka_member("memberIdB", process_id="processIdB")
    records = [G.member_record("fooup", a), G.member_record("fooup", b)]
    for mid, epoch, tasks in assignments:
        m = kafka_member(mid, process_id="processIdA" if mid.endswith("A") else "processIdB", member_epoch=epoch,
                         previous_member_epoch=epoch - 1, assigned=tasks)
        records.append(G.current_assignment_record("fooup", m))
    return load(records).groups["fooup"]


def test_replay_streams_group_current_member_assignment_with_compaction():
    # An unassignment record lost to compaction must not take a task from its newer owner.
    g = compaction_group(("memberIdA", 11, TaskSets(active={"subtopology": frozenset({0})})),
                         ("memberIdB", 12, TaskSets(active={"subtopology": frozenset({0})})),
                         ("memberIdA", 13, TaskSets(active={"subtopology": frozenset({1})})))
    assert g.current_active_task_process_id(("subtopology", 0)) == "processIdB"
    assert g.current_active_task_process_id(("subtopology", 1)) == "processIdA"


def test_replay_streams_group_current_member_assignment_unowned_topology_with_compaction():
    g = compaction_group(("memberIdA", 11, TaskSets(active={"subtopologyFoo": frozenset({0})})),
                         ("memberIdB", 12, TaskSets(active={"subtopologyFoo": frozenset({0})})),
                         ("memberIdB", 13, TaskSets()),
                         ("memberIdA", 14, TaskSets(active={"subtopologyBar": frozenset({0})})))
    assert g.current_active_task_process_id(("subtopologyFoo", 0)) is None
    assert g.current_active_task_process_id(("subtopologyBar", 0)) == "processIdA"


@both
def test_streams_group_assignment_interval(profile):
    # KIP-1263 with the test's 5000 ms (a configured interval applies under both profiles); the
    # ASSIGNMENT_DELAYED status is Kafka's (the README's profile table: Streams statuses)
    topology = Topology(0, (Subtopology("subtopology", source_topics=("foo",)),))
    c = new_coordinator(profile, {"foo": 6}, {**NO_DELAY, "group.streams.assignment.interval.ms": 5000},
                        {"m1": TaskSets(active={"subtopology": frozenset(range(6))})})
    r = streams_join(c, GROUP, "m1", topology, process_id="process-id")
    assert to_data(r) == expected_heartbeat(profile, "m1", 2, active={"subtopology": range(6)}, standby={},
                                            warmup={})
    target1 = TaskSets(active={"subtopology": frozenset(range(6))})
    m1 = with_task_epochs(kafka_member("m1", member_epoch=2, assigned=target1), 2)
    assert records_since(c, 0) == member_records(c.now(), GROUP, m1, target1, 2, topology=topology,
                                                 metadata=(2, group_hash(c.cluster, "foo"), 0,
                                                           DEFAULT_ASSIGNMENT_CONFIGS))

    # Just before the interval: member 2 joins, the group epoch moves on, the assignment does not
    c.advance(4995)
    prepare_assignment(c, {"m1": TaskSets(active={"subtopology": frozenset({0, 1, 2})}),
                           "m2": TaskSets(active={"subtopology": frozenset({3, 4, 5})})})
    before = c.position
    r = streams_join(c, GROUP, "m2", topology, process_id="process-id")
    delayed = [(ASSIGNMENT_DELAYED, "Assignment delayed due to the configured assignment interval.")]
    assert to_data(r) == expected_heartbeat(profile, "m2", 2, active={}, standby={}, warmup={},
                                            status=delayed if profile == "kafka" else ())
    m2 = kafka_member("m2", member_epoch=2)
    assert records_since(c, before) == [
        G.member_record(GROUP, m2),
        G.group_epoch_record(GROUP, 3, group_hash(c.cluster, "foo"), 0, DEFAULT_ASSIGNMENT_CONFIGS),
        G.current_assignment_record(GROUP, m2)]

    # The interval has passed: member 2's next heartbeat computes epoch 3 (m2 waits for m1's tasks)
    c.advance(10)
    before = c.position
    r = streams_heartbeat(c, GROUP, "m2", 2)
    assert to_data(r) == expected_heartbeat(profile, "m2", 3)
    got = records_since(c, before)
    assert sorted(got[:2], key=lambda rec: rec.key.member_id) == [
        G.target_member_record(GROUP, "m1", TaskSets(active={"subtopology": frozenset({0, 1, 2})})),
        G.target_member_record(GROUP, "m2", TaskSets(active={"subtopology": frozenset({3, 4, 5})}))]
    assert got[2:] == [G.target_epoch_record(GROUP, 3, c.now()), G.current_assignment_record(
        GROUP, m2.replace(member_epoch=3, previous_member_epoch=2, state=MemberState.UNRELEASED_PARTITIONS))]
