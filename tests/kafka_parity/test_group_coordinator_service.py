"""Apache Kafka's GroupCoordinatorServiceTest, ported: what the service checks before a request
reaches a group (validation in Kafka's order and words, INVALID_GROUP_ID, INVALID_SESSION_TIMEOUT),
and how its answers look when the group's partition is not led here (NOT_COORDINATOR).

Kafka's requests are built as the Java test builds them (`request()` fills Kafka's defaults like
`new XxxRequestData()` does). Most of the Kafka file drives a mocked runtime; those cases are listed
as not applicable in GroupCoordinatorServiceTest.md. Both profiles run unless the README's profile table forks
the behaviour ("Streams: request validation", "Streams: source topics as regular expressions")."""
from __future__ import annotations

import uuid

import pytest

from kgroup import Cluster, Coordinator, ErrorCode
from kgroup.groups.streams import Subtopology, TopicInfo, Topology
from kgroup.log import partition_for
from kgroup.protocol import request
from kgroup.groups.share.persister import CoordinatorPersister
from kgroup.groups.share.state import PERSISTER_KEY
from tests.kgroup_testing import commit, fetch, group_on_partition, heartbeat, join, leave, sync
from tests.share.share_testing import RecordingPersister

E = ErrorCode
MEMBER = str(uuid.UUID(int=7))
TOPIC = "test-topic"


@pytest.fixture(params=["kip", "kafka"])
def profile(request) -> str:
    return request.param


def coord(profile: str = "kafka", **kw) -> Coordinator:
    return Coordinator(cluster=Cluster({"foo": 3, "bar": 2, TOPIC: 1}, seed=1), profile=profile,
                       config={"group.streams.initial.rebalance.delay.ms": 0, **kw.pop("config", {})}, **kw)


def not_led(c: Coordinator) -> str:
    """A group id on a `__consumer_offsets` partition `c` does not lead."""
    partition = next(p for p in range(c.num_partitions) if p not in c.hosted_partitions)
    return group_on_partition(partition, c.num_partitions, prefix="elsewhere-")


def leading_only(group_id: str, profile: str = "kafka") -> Coordinator:
    """A coordinator leading every partition but `group_id`'s."""
    others = set(range(50)) - {partition_for(group_id, 50)}
    return coord(profile, hosted_partitions=others)


def send(c: Coordinator, api: str, version: int, **fields):
    """`request` answered, and nothing written for it."""
    before = c.position
    response = c.handle(request(api, version, **fields))
    assert c.position == before, "a refused request wrote records"
    return response


def refused(response) -> tuple:
    """(code, message) of a refused heartbeat whose other fields keep Kafka's defaults."""
    kind = type(response).__name__
    if kind == "StreamsGroupHeartbeatResponse":
        assert (response.member_id, response.member_epoch, response.active_tasks, response.standby_tasks,
                response.warmup_tasks, response.status) == ("", 0, None, None, None, None)
    else:  # consumer and share: a nullable member id, no assignment
        assert (response.member_id, response.member_epoch, response.assignment) == (None, 0, None)
    return response.error_code, response.error_message


def heartbeat_refusal(c: Coordinator, api: str, version: int):
    """`api` sent with the given fields and refused: its (code, message)."""
    return lambda **fields: refused(send(c, api, version, **fields))


def check_member_and_group_ids_required(hb) -> None:
    """The first checks of a KIP-848 or KIP-932 heartbeat (`hb`: its `heartbeat_refusal`): a member
    id, then a group id that is not blank."""
    assert hb() == (E.invalid_request, "MemberId can't be empty.")
    assert hb(member_id=MEMBER) == (E.invalid_request, "GroupId can't be empty.")
    assert hb(member_id=MEMBER, group_id="   ") == (E.invalid_request, "GroupId can't be empty.")


# -- ConsumerGroupHeartbeat ------------------------------------------------------------------

CONSUMER_JOIN = dict(group_id="foo", member_id=MEMBER, member_epoch=0, rebalance_timeout=5000,
                     subscribed_topic_names=["foo", "bar"], topic_partitions=[])


def test_consumer_group_heartbeat(profile):
    c = coord(profile)
    r = c.handle(request("ConsumerGroupHeartbeat", 1, **CONSUMER_JOIN))
    assert (r.error_code, r.member_id) == (E.none, MEMBER)
    assert c.position > 0  # the request reached the group and changed it


def test_consumer_group_heartbeat_with_exception(profile):
    # Of the runtime failures Kafka maps, kgroup can cause two: the group's partition is not led
    # here (the runtime's NotCoordinatorException, passed through with its message) ...
    c = coord(profile, hosted_partitions=range(1))
    group = not_led(c)
    r = send(c, "ConsumerGroupHeartbeat", 1, **{**CONSUMER_JOIN, "group_id": group})
    assert refused(r) == (E.not_coordinator, "This is not the correct coordinator.")
    # ... and a write larger than one batch (RecordTooLargeException: UNKNOWN_SERVER_ERROR, no
    # message; Kafka 4.4.0 answers so in the oracle scenario write-too-large)
    r = send(coord(profile), "ConsumerGroupHeartbeat", 1, **{**CONSUMER_JOIN, "subscribed_topic_names": HUGE})
    assert refused(r) == (E.unknown_server_error, None)


#: topic names whose member record is bigger than a __consumer_offsets batch may be (1 MB)
HUGE = [f"topic-{i:05d}-" + "x" * 200 for i in range(6000)]


@pytest.mark.parametrize("kafka_error, answered", [
    # CoordinatorOperationExceptionHelper.handleOperationException, case by case
    (E.unknown_topic_or_partition, E.coordinator_not_available), (E.not_enough_replicas, E.coordinator_not_available),
    (E.request_timed_out, E.coordinator_not_available), (E.not_leader_or_follower, E.not_coordinator),
    (E.kafka_storage_error, E.not_coordinator), (E.message_too_large, E.unknown_server_error),
    (E.record_list_too_large, E.unknown_server_error), (E.invalid_fetch_size, E.unknown_server_error),
    (E.network_exception, E.coordinator_load_in_progress), (E.unknown_server_error, E.unknown_server_error)])
def test_a_failed_operation_answers_the_error_a_client_retries_without_a_message(kafka_error, answered):
    from kgroup.errors import operation_error
    assert operation_error(kafka_error, "storage said so") == (answered, None)


def test_an_error_the_helper_does_not_map_keeps_its_message():
    from kgroup.errors import operation_error
    assert operation_error(E.not_coordinator, "This is not the correct coordinator.") == \
        (E.not_coordinator, "This is not the correct coordinator.")


def test_an_offset_commit_too_large_for_one_batch_fails_every_partition_and_writes_nothing(profile):
    c = coord(profile)
    c.cluster.create_topic("wide", 400)
    topics = lambda n: [{"name": "wide", "partitions": [  # noqa: E731
        {"partition_index": p, "committed_offset": p, "committed_metadata": "m" * 4000} for p in range(n)]}]
    r = send(c, "OffsetCommit", 8, group_id="g", generation_id_or_member_epoch=-1, topics=topics(400))
    assert {p.error_code for p in r.topics[0].partitions} == {E.unknown_server_error}
    assert len(r.topics[0].partitions) == 400
    r = c.handle(request("OffsetCommit", 8, group_id="g", generation_id_or_member_epoch=-1, topics=topics(200)))
    assert {p.error_code for p in r.topics[0].partitions} == {E.none}


def test_consumer_heartbeat_request_validation(profile):
    c = coord(profile, config={"group.consumer.assignors": ["range"]})
    hb = heartbeat_refusal(c, "ConsumerGroupHeartbeat", 1)
    invalid = E.invalid_request
    check_member_and_group_ids_required(hb)
    assert hb(member_id=MEMBER, group_id="foo", member_epoch=0) == \
        (invalid, "RebalanceTimeoutMs must be provided in first request.")
    assert hb(member_id=MEMBER, group_id="foo", member_epoch=0, rebalance_timeout=5000) == \
        (invalid, "TopicPartitions must be empty when (re-)joining.")
    assert hb(member_id=MEMBER, group_id="foo", member_epoch=0, rebalance_timeout=5000, topic_partitions=[]) == \
        (invalid, "Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when (re-)joining.")
    assert hb(group_id="foo", member_id=MEMBER, member_epoch=1, instance_id="") == \
        (invalid, "InstanceId can't be empty.")
    assert hb(group_id="foo", member_id=MEMBER, member_epoch=1, rack_id="") == (invalid, "RackId can't be empty.")
    assert hb(group_id="foo", member_id=MEMBER, member_epoch=1, server_assignor="bar") == \
        (E.unsupported_assignor, "ServerAssignor bar is not supported. Supported assignors: range.")
    assert hb(group_id="foo", member_id=MEMBER, member_epoch=-2, rebalance_timeout=5000,
              subscribed_topic_names=["foo", "bar"], topic_partitions=[]) == (invalid, "InstanceId can't be null.")


def test_consumer_heartbeat_ids_are_blank_as_java_trims_them(profile):
    # beyond the Kafka file: throwIfEmptyString trims as String.trim() does (chars <= U+0020)
    c = coord(profile)
    r = send(c, "ConsumerGroupHeartbeat", 1, **{**CONSUMER_JOIN, "group_id": "\x01\x1f"})
    assert refused(r) == (E.invalid_request, "GroupId can't be empty.")
    r = c.handle(request("ConsumerGroupHeartbeat", 1, **{**CONSUMER_JOIN, "rack_id": "\xa0"}))
    assert r.error_code == E.none


def test_consumer_heartbeat_lists_the_assignors_in_kafkas_set_order(profile):
    # beyond the Kafka file: the names come from a Java HashSet, whatever order the config gives
    c = coord(profile, config={"group.consumer.assignors": ["range", "uniform"]})
    r = send(c, "ConsumerGroupHeartbeat", 1, **{**CONSUMER_JOIN, "server_assignor": "sticky"})
    assert refused(r) == (E.unsupported_assignor,
                          "ServerAssignor sticky is not supported. Supported assignors: uniform, range.")


# -- StreamsGroupHeartbeat -------------------------------------------------------------------

EMPTY_TOPOLOGY = {"epoch": 0, "subtopologies": []}
STREAMS_JOIN = dict(group_id="foo", member_id=MEMBER, member_epoch=0, rebalance_timeout=1500,
                    active_tasks=[], standby_tasks=[], warmup_tasks=[], topology=EMPTY_TOPOLOGY)


def test_streams_group_heartbeat():
    # kafka only: the KIP wants a non-empty topology on join ("Streams: request validation")
    c = coord("kafka")
    r = c.handle(request("StreamsGroupHeartbeat", 0, **STREAMS_JOIN))
    assert (r.error_code, r.member_id) == (E.none, MEMBER)
    assert c.position > 0


def test_streams_group_heartbeat_with_exception():
    # kafka only: the KIP wants a non-empty topology on join ("Streams: request validation")
    c = coord("kafka", hosted_partitions=range(1))
    r = send(c, "StreamsGroupHeartbeat", 0, **{**STREAMS_JOIN, "group_id": not_led(c)})
    assert refused(r) == (E.not_coordinator, "This is not the correct coordinator.")
    topology = {"epoch": 0, "subtopologies": [{"subtopology_id": "0", "source_topics": HUGE}]}
    r = send(coord("kafka"), "StreamsGroupHeartbeat", 0, **{**STREAMS_JOIN, "topology": topology})
    assert refused(r) == (E.unknown_server_error, None)


def test_streams_group_heartbeat_fails_for_unsupported_features():
    # kafka only (the README's profile table: the KIP resolves source-topic regexes). Trunk no longer
    # refuses static members, task offsets or warm-up tasks: only this check is left.
    topology = {"epoch": 0, "subtopologies": [{"subtopology_id": "0", "source_topic_regex": ["foo.*"]}]}
    r = send(coord("kafka"), "StreamsGroupHeartbeat", 0, topology=topology)
    assert refused(r) == (E.invalid_request, "Regular expressions for source topics are not supported yet.")


def test_streams_heartbeat_request_validation(profile):
    c = coord(profile)
    kip = profile == "kip"
    hb = heartbeat_refusal(c, "StreamsGroupHeartbeat", 0)
    invalid = E.invalid_request
    # the README's profile table "Streams: request validation": the KIP lets a join (epoch 0) come without a
    # member id, and wants a positive rebalance timeout; the rest is common.
    no_member = (invalid, "GroupId can't be empty.") if kip else (invalid, "MemberId can't be empty.")
    assert hb() == no_member
    assert hb(member_id="   ") == no_member
    assert hb(member_id=MEMBER) == (invalid, "GroupId can't be empty.")
    assert hb(member_id=MEMBER, group_id="   ") == (invalid, "GroupId can't be empty.")
    assert hb(member_id=MEMBER, group_id="foo", instance_id=" ") == (invalid, "InstanceId can't be empty.")
    assert hb(member_id=MEMBER, group_id="foo", member_epoch=0) == (
        (invalid, "RebalanceTimeoutMs must be larger than zero in the first heartbeat request.") if kip
        else (invalid, "RebalanceTimeoutMs must be provided in first request."))
    join = dict(member_id=MEMBER, group_id="foo", member_epoch=0, rebalance_timeout=1500)
    assert hb(**join) == (invalid, "ActiveTasks must be empty when (re-)joining.")
    assert hb(**join, active_tasks=[]) == (invalid, "StandbyTasks must be empty when (re-)joining.")
    assert hb(**join, active_tasks=[], standby_tasks=[]) == (invalid, "WarmupTasks must be empty when (re-)joining.")
    assert hb(**join, active_tasks=[], standby_tasks=[], warmup_tasks=[]) == \
        (invalid, "Topology must be non-null when (re-)joining.")
    assert hb(group_id="foo", member_id=MEMBER, member_epoch=1, rack_id="") == (invalid, "RackId can't be empty.")
    assert hb(group_id="foo", member_id=MEMBER, member_epoch=-2, rebalance_timeout=1500, topology=EMPTY_TOPOLOGY,
              active_tasks=[], standby_tasks=[], warmup_tasks=[]) == (invalid, "InstanceId can't be null.")
    assert hb(member_id=MEMBER, group_id="foo", member_epoch=-3, rebalance_timeout=1500) == \
        (invalid, "MemberEpoch is -3, but must be greater than or equal to -2.")
    assert hb(member_id=MEMBER, group_id="foo", member_epoch=1, rebalance_timeout=1500, active_tasks=[],
              standby_tasks=[], warmup_tasks=[], topology=EMPTY_TOPOLOGY) == \
        (invalid, "Topology can only be provided when (re-)joining.")
    fixed_changelog = {"epoch": 0, "subtopologies": [{"subtopology_id": "0", "state_changelog_topics": [
        {"name": "changelog_topic_with_fixed_partition", "partitions": 3}]}]}
    assert hb(**join, active_tasks=[], standby_tasks=[], warmup_tasks=[], topology=fixed_changelog) == \
        (E.streams_invalid_topology, "Changelog topic changelog_topic_with_fixed_partition must have an "
                                     "undefined partition count, but it is set to 3.")


def test_streams_heartbeat_a_null_task_list_on_join_is_refused(profile):
    # beyond the Kafka file (issue 20, item 7): a real client's join with the lists left out
    topology = Topology(0, (Subtopology("0", ("foo",), state_changelog_topics=(TopicInfo("app-changelog"),)),))
    for missing, field in (("active_tasks", "ActiveTasks"), ("standby_tasks", "StandbyTasks"),
                           ("warmup_tasks", "WarmupTasks")):
        r = send(coord(profile), "StreamsGroupHeartbeat", 0,
                 **{**STREAMS_JOIN, "topology": topology.to_request_data(), missing: None})
        assert refused(r) == (E.invalid_request, f"{field} must be empty when (re-)joining.")


# -- ShareGroupHeartbeat ---------------------------------------------------------------------

SHARE_JOIN = dict(group_id="foo", member_id=MEMBER, member_epoch=0, subscribed_topic_names=["foo", "bar"])


def test_share_group_heartbeat(profile):
    c = coord(profile)
    r = c.handle(request("ShareGroupHeartbeat", 1, **SHARE_JOIN))
    assert (r.error_code, r.member_id) == (E.none, MEMBER)
    assert c.position > 0


def test_share_group_heartbeat_with_exception(profile):
    c = coord(profile, hosted_partitions=range(1))
    r = send(c, "ShareGroupHeartbeat", 1, **{**SHARE_JOIN, "group_id": not_led(c)})
    assert refused(r) == (E.not_coordinator, "This is not the correct coordinator.")
    r = send(coord(profile), "ShareGroupHeartbeat", 1, **{**SHARE_JOIN, "subscribed_topic_names": HUGE})
    assert refused(r) == (E.unknown_server_error, None)


def test_share_group_heartbeat_request_validation(profile):
    c = coord(profile)
    hb = heartbeat_refusal(c, "ShareGroupHeartbeat", 1)
    invalid = E.invalid_request
    check_member_and_group_ids_required(hb)
    assert hb(member_id=MEMBER, group_id="foo", member_epoch=0) == \
        (invalid, "SubscribedTopicNames must be set in first request.")
    assert hb(group_id="foo", member_epoch=1) == (invalid, "MemberId can't be empty.")
    assert hb(member_id=MEMBER, group_id="foo", member_epoch=1, rack_id="") == (invalid, "RackId can't be empty.")
    assert hb(member_id=MEMBER, group_id="foo", member_epoch=-10) == (invalid, "MemberEpoch is invalid.")


# -- classic group protocol ------------------------------------------------------------------

def test_join_group(profile):
    # A first member's JoinGroup is held until the initial rebalance delay ends.
    c = coord(profile)
    pending = join(c, "foo", version=3)
    assert not pending.done
    c.advance(c.config["group.initial.rebalance.delay.ms"])
    assert pending.done and pending.response.error_code == E.none


def test_join_group_invalid_group_id(profile):
    c = coord(profile)
    for member_id in ("", "member-1"):  # Kafka answers with the request's member id
        pending = join(c, "", member_id)
        assert pending.done and (pending.response.error_code, pending.response.member_id) == \
            (E.invalid_group_id, member_id)
    assert c.position == 0


@pytest.mark.parametrize("session_ms", [120 - 1, 10 * 5 * 1000 + 1])
def test_join_group_invalid_session_timeout(profile, session_ms):
    c = coord(profile, config={"group.min.session.timeout.ms": 120, "group.max.session.timeout.ms": 50_000})
    pending = join(c, "group-id", session_ms=session_ms)
    assert pending.done and (pending.response.error_code, pending.response.member_id) == \
        (E.invalid_session_timeout, "")
    assert c.position == 0


def test_join_group_session_timeout_is_checked_before_the_partition(profile):
    # beyond the Kafka file: the service checks the timeout, the runtime then finds the
    # partition not led (and answers without the member id, as handleOperationException does)
    c = leading_only("group-id", profile)
    assert join(c, "group-id", "m-1", session_ms=1).response.error_code == E.invalid_session_timeout
    r = join(c, "group-id", "m-1").response
    assert (r.error_code, r.member_id) == (E.not_coordinator, "")


def _stable_pair(c: Coordinator, group: str = "foo") -> tuple[str, str, int]:
    """Two v3 classic members through their first rebalance: (leader, follower, generation)."""
    a, b = join(c, group, version=3), join(c, group, version=3)
    c.advance(2 * c.config["group.initial.rebalance.delay.ms"])  # the second join extends the delay
    ra, rb = a.response, b.response
    leader = ra.leader
    follower = rb.member_id if leader == ra.member_id else ra.member_id
    return leader, follower, ra.generation_id


def test_sync_group(profile):
    # A follower's SyncGroup waits for the leader's assignment.
    c = coord(profile)
    leader, follower, generation = _stable_pair(c)
    pending = sync(c, "foo", follower, generation)
    assert not pending.done
    sync(c, "foo", leader, generation, assignments={leader: b"a", follower: b"b"})
    assert pending.done and (pending.response.error_code, bytes(pending.response.assignment)) == (E.none, b"b")


def test_sync_group_invalid_group_id(profile):
    c = coord(profile)
    pending = sync(c, "", "", 1)
    assert pending.done and pending.response.error_code == E.invalid_group_id
    assert c.position == 0


def test_heartbeat(profile):
    c = coord(profile)
    leader, follower, generation = _stable_pair(c)
    sync(c, "foo", leader, generation, assignments={leader: b"a", follower: b"b"})
    assert heartbeat(c, "foo", follower, generation).error_code == E.none


def test_heartbeat_coordinator_exception(profile):
    # REBALANCE_IN_PROGRESS from the group, passed through as its code
    c = coord(profile)
    leader, follower, generation = _stable_pair(c)
    sync(c, "foo", leader, generation, assignments={leader: b"a", follower: b"b"})
    join(c, "foo", version=3)  # a third member: the group prepares a rebalance
    assert heartbeat(c, "foo", follower, generation).error_code == E.rebalance_in_progress


def test_heartbeat_invalid_group_id(profile):
    # beyond the Kafka file: Heartbeat checks the group id as JoinGroup and SyncGroup do
    assert heartbeat(coord(profile), "", "m", 1).error_code == E.invalid_group_id


def test_leave_group(profile):
    c = coord(profile)
    leader, follower, generation = _stable_pair(c)
    r = leave(c, "foo", (follower, None))
    assert (r.error_code, [(m.member_id, m.error_code) for m in r.members]) == (E.none, [(follower, E.none)])


def test_leave_group_throws_unknown_member_id_exception(profile):
    r = leave(coord(profile), "foo", ("member-1", "instance-1"), ("member-2", "instance-2"))
    assert r.error_code == E.none
    assert [(m.member_id, m.group_instance_id, m.error_code) for m in r.members] == [
        ("member-1", "instance-1", E.unknown_member_id), ("member-2", "instance-2", E.unknown_member_id)]


# -- ListGroups, DescribeGroups, the describe APIs -----------------------------------------

def test_list_groups_failed_with_not_coordinator_exception(profile):
    # Groups on partitions not led here are left out (Kafka drops NOT_COORDINATOR answers).
    c = coord(profile)
    led, other = group_on_partition(0, prefix="group"), group_on_partition(1, prefix="group")
    for g in (led, other):
        commit(c, g, {("foo", 0): 1})
    c2 = Coordinator.load(c.log, cluster=c.cluster, profile=profile, hosted_partitions=[0])
    r = c2.handle(request("ListGroups", 5, states_filter=[], types_filter=[]))
    assert r.error_code == E.none
    assert [(g.group_id, g.group_state, g.group_type) for g in r.groups] == [(led, "Empty", "classic")]


def test_list_groups_with_empty_topic_partitions(profile):
    r = coord(profile, hosted_partitions=[]).handle(request("ListGroups", 5, states_filter=[], types_filter=[]))
    assert (r.error_code, list(r.groups)) == (E.none, [])


# -- describes and DeleteGroups: in Kafka's order -------------------------------------------------
# GroupCoordinatorService splits the ids by __consumer_offsets partition (a HashMap<TopicPartition,
# List<String>>) and combines the partitions' answers in the order it walks that map, whichever
# answers first: a coordinator holding every partition answers in that order too. With 2 or 3
# partitions it walks them 0, 1, 2; "group-id-1" is on partition 1 of 2 (2 of 3), "group-id-2" on 0.

def two_partitions(profile: str) -> Coordinator:
    return coord(profile, config={"offsets.topic.num.partitions": 2})


def test_describe_groups(profile):
    c = two_partitions(profile)
    groups = send(c, "DescribeGroups", 5, groups=["group-id-1", "group-id-2"],
                  include_authorized_operations=False).groups
    assert [g.group_id for g in groups] == ["group-id-2", "group-id-1"]


def _kip848_describe(profile: str, api: str, version: int, prefix: str = "") -> None:
    c = two_partitions(profile)
    first, second = f"{prefix}group-id-1", f"{prefix}group-id-2"  # partitions 1 and 0
    # beyond the Kafka case: the empty id, which the service answers itself, comes first
    groups = send(c, api, version, group_ids=[first, "", second], include_authorized_operations=False).groups
    assert [(g.group_id, g.error_code) for g in groups] == [
        ("", E.invalid_group_id), (second, E.group_id_not_found), (first, E.group_id_not_found)]


def test_consumer_group_describe(profile):
    _kip848_describe(profile, "ConsumerGroupDescribe", 1)


def test_streams_group_describe(profile):
    _kip848_describe(profile, "StreamsGroupDescribe", 0)


def test_share_group_describe(profile):
    _kip848_describe(profile, "ShareGroupDescribe", 1, prefix="share-")


def test_describe_groups_invalid_group_id(profile):
    # Only a null group id is INVALID_GROUP_ID, and the wire cannot carry one: the empty id is
    # described like any unknown group.
    c = coord(profile)
    (g,) = send(c, "DescribeGroups", 5, groups=[""], include_authorized_operations=False).groups
    assert (g.group_id, g.error_code, g.group_state) == ("", E.none, "Dead")
    (g,) = send(c, "DescribeGroups", 6, groups=[""], include_authorized_operations=False).groups
    assert (g.error_code, g.group_state, g.error_message) == (E.group_id_not_found, "Dead", "Group  not found.")


@pytest.mark.parametrize("api,version", [("ConsumerGroupDescribe", 1), ("StreamsGroupDescribe", 0),
                                         ("ShareGroupDescribe", 1)])
def test_describe_invalid_group_id(profile, api, version):
    # Kafka's testConsumerGroupDescribeInvalidGroupId, testStreamsGroupDescribeInvalidGroupId and
    # testShareGroupDescribeInvalidGroupId: an empty id is INVALID_GROUP_ID, with no message.
    (g,) = send(coord(profile), api, version, group_ids=[""], include_authorized_operations=False).groups
    assert (g.group_id, g.error_code, g.error_message) == ("", E.invalid_group_id, None)


# -- offsets ---------------------------------------------------------------------------------

@pytest.mark.parametrize("fetch_all,require_stable", [(False, False), (False, True), (True, False), (True, True)])
def test_fetch_offsets(profile, fetch_all, require_stable):
    c = coord(profile)
    commit(c, "group", {("foo", 0): 100})
    r = fetch(c, "group", None if fetch_all else {"foo": [0]}, require_stable=require_stable)
    assert r.error_code == E.none
    assert [(t.name, [(p.partition_index, p.committed_offset, p.error_code) for p in t.partitions])
            for t in r.topics] == [("foo", [(0, 100, E.none)])]


@pytest.mark.parametrize("fetch_all", [False, True])
def test_fetch_offsets_with_wrapped_error(profile, fetch_all):
    # The NOT_COORDINATOR case: the group's partition is not led here.
    c = leading_only("group", profile)
    r = fetch(c, "group", None if fetch_all else {"foo": [0]}, require_stable=True)
    assert (r.error_code, list(r.topics)) == (E.not_coordinator, [])


def test_delete_offsets(profile):
    c = coord(profile)
    commit(c, "group", {(TOPIC, 0): 5})
    before = c.position
    r = c.handle(request("OffsetDelete", 0, group_id="group",
                         topics=[{"name": TOPIC, "partitions": [{"partition_index": 0}]}]))
    assert r.error_code == E.none
    assert [(t.name, [(p.partition_index, p.error_code) for p in t.partitions]) for t in r.topics] == \
        [(TOPIC, [(0, E.none)])]
    assert [e.record.value for e in list(c.log)[before:]] == [None]  # the offset's tombstone


def test_delete_offsets_invalid_group_id(profile):
    r = send(coord(profile), "OffsetDelete", 0, group_id="",
             topics=[{"name": TOPIC, "partitions": [{"partition_index": 0}]}])
    assert (r.error_code, list(r.topics)) == (E.invalid_group_id, [])


def test_delete_groups_empty_group_id(profile):
    # beyond the Kafka file: Kafka's deleteGroups refuses only a null id (not on the wire); the
    # empty one is looked up and, as no group has it, is GROUP_ID_NOT_FOUND
    (r,) = send(coord(profile), "DeleteGroups", 2, groups_names=[""]).results
    assert (r.group_id, r.error_code) == ("", E.group_id_not_found)


def _records(c: Coordinator, since: int) -> list[tuple[str, str]]:
    """The records written since `since`: (type, "~" for a tombstone, group id)."""
    out = []
    for i in range(since, c.position):
        r = c.log.entry_at(i).record
        out.append((("~" if r.value is None else "") + type(r).__name__, getattr(r.key, "group", None) or r.key.group_id))
    return out


def test_delete_groups(profile):
    # Kafka's third partition fails with COORDINATOR_LOAD_IN_PROGRESS; here it is not led (NOT_COORDINATOR)
    c = coord(profile, config={"offsets.topic.num.partitions": 3}, hosted_partitions=[0, 2])
    for g in ("group-id-1", "group-id-2"):  # partitions 2 and 0
        commit(c, g, {(TOPIC, 0): 5})
    before = c.position
    r = c.handle(request("DeleteGroups", 2, groups_names=["group-id-1", "group-id-2", "group-id-3"]))
    assert [(x.group_id, x.error_code) for x in r.results] == [
        ("group-id-2", E.none), ("group-id-3", E.not_coordinator), ("group-id-1", E.none)]
    assert _records(c, before) == [("~OffsetCommit", "group-id-2"), ("~GroupMetadata", "group-id-2"),
                                   ("~OffsetCommit", "group-id-1"), ("~GroupMetadata", "group-id-1")]


def test_delete_groups_asks_for_each_id_once(profile):
    # beyond the Kafka file: KafkaApis drops repeated ids (`distinct`) before asking the service
    c = coord(profile)
    commit(c, "group-id-1", {(TOPIC, 0): 5})
    before = c.position
    r = c.handle(request("DeleteGroups", 2, groups_names=["group-id-1", "group-id-1"]))
    assert [(x.group_id, x.error_code) for x in r.results] == [("group-id-1", E.none)]
    assert _records(c, before) == [("~OffsetCommit", "group-id-1"), ("~GroupMetadata", "group-id-1")]


def _empty_share_group(c: Coordinator, group_id: str) -> None:
    """A share group whose share-partitions were initialised, and whose member left."""
    c.handle(request("ShareGroupHeartbeat", 1, **{**SHARE_JOIN, "group_id": group_id}))
    c.handle(request("ShareGroupHeartbeat", 1, **{**SHARE_JOIN, "group_id": group_id, "member_epoch": -1}))
    assert c.groups[group_id].state_metadata.initialized


SHARE_TOMBSTONES = ["~ShareGroupTargetAssignmentMetadata", "~ShareGroupStatePartitionMetadata", "~ShareGroupMetadata"]


def test_delete_with_share_groups(profile):
    c = coord(profile, config={"offsets.topic.num.partitions": 3})
    _empty_share_group(c, "share-group-id-1")  # partition 1
    commit(c, "group-id-2", {(TOPIC, 0): 5})    # partition 0
    before = c.position
    r = c.handle(request("DeleteGroups", 2, groups_names=["share-group-id-1", "group-id-2"]))
    assert [(x.group_id, x.error_code) for x in r.results] == [("group-id-2", E.none), ("share-group-id-1", E.none)]
    # the share group's record 15 (all deleting) is a write of its own, before the share coordinator
    # deletes the state; the tombstones come in the second write, partition by partition
    assert _records(c, before) == [("ShareGroupStatePartitionMetadata", "share-group-id-1"),
                                   ("~OffsetCommit", "group-id-2"), ("~GroupMetadata", "group-id-2")] + \
        [(t, "share-group-id-1") for t in SHARE_TOMBSTONES]
    assert not c.groups.get("share-group-id-1")


class _FailingFor(RecordingPersister):
    """The share coordinator refuses to delete one group's state (UNKNOWN_SERVER_ERROR)."""

    def __init__(self, c: Coordinator, group_id: str) -> None:
        super().__init__(CoordinatorPersister(c))
        self.group_id = group_id

    def delete_state(self, group_id, topic_id, partition):
        if group_id == self.group_id:
            self.calls.append(("delete", group_id, topic_id, partition))
            return E.unknown_server_error
        return super().delete_state(group_id, topic_id, partition)


def test_delete_share_group_persister_error(profile):
    c = coord(profile, config={"offsets.topic.num.partitions": 3})
    c.soft_state[PERSISTER_KEY] = _FailingFor(c, "share-group-id-1")
    _empty_share_group(c, "share-group-id-1")  # partition 1
    _empty_share_group(c, "share-group-id-2")  # partition 2
    before = c.position
    r = c.handle(request("DeleteGroups", 2, groups_names=["share-group-id-1", "share-group-id-2"]))
    assert [(x.group_id, x.error_code) for x in r.results] == [
        ("share-group-id-1", E.unknown_server_error), ("share-group-id-2", E.none)]
    # Kafka writes record 15 (deleting) of both groups first; the one the share coordinator
    # refused keeps it, and stays
    assert _records(c, before) == [("ShareGroupStatePartitionMetadata", "share-group-id-1"),
                                   ("ShareGroupStatePartitionMetadata", "share-group-id-2")] + \
        [(t, "share-group-id-2") for t in SHARE_TOMBSTONES]
    sm = c.groups["share-group-id-1"].state_metadata
    assert (sm.initializing, sm.initialized, set(sm.deleting.values())) == ({}, {}, {"foo", "bar"})
    # a retry deletes it, and the group, once the share coordinator accepts
    c.soft_state[PERSISTER_KEY].group_id = None
    r = c.handle(request("DeleteGroups", 2, groups_names=["share-group-id-1"]))
    assert [(x.group_id, x.error_code) for x in r.results] == [("share-group-id-1", E.none)]
    assert "share-group-id-1" not in c.groups


def test_delete_share_group_not_empty_error(profile):
    c = coord(profile)
    c.handle(request("ShareGroupHeartbeat", 1, **{**SHARE_JOIN, "group_id": "share-group-id-1"}))
    (r,) = send(c, "DeleteGroups", 2, groups_names=["share-group-id-1"]).results
    assert (r.group_id, r.error_code) == ("share-group-id-1", E.non_empty_group)


def test_delete_groups_with_exception(profile):
    # The NOT_COORDINATOR case, per group.
    c = leading_only("group-id", profile)
    (r,) = send(c, "DeleteGroups", 2, groups_names=["group-id"]).results
    assert (r.group_id, r.error_code) == ("group-id", E.not_coordinator)


def _txn_commit(c: Coordinator, group_id: str, version: int = 4):
    return c.handle(request("TxnOffsetCommit", version, transactional_id="transactional-id", group_id=group_id,
                            producer_id=10, producer_epoch=5, generation_id=-1, member_id="", group_instance_id=None,
                            topics=[{"name": TOPIC, "partitions": [
                                {"partition_index": 0, "committed_offset": 100, "committed_leader_epoch": -1,
                                 "committed_metadata": ""}]}]))


def test_commit_transactional_offsets_with_invalid_group_id(profile):
    c = coord(profile)
    r = _txn_commit(c, "")
    assert [(t.name, [(p.partition_index, p.error_code) for p in t.partitions]) for t in r.topics] == \
        [(TOPIC, [(0, E.invalid_group_id)])]
    assert c.position == 0


@pytest.mark.parametrize("version", [4, 5])
def test_commit_transactional_offsets(profile, version):
    c = coord(profile)
    r = _txn_commit(c, "foo", version)
    assert [(t.name, [(p.partition_index, p.error_code) for p in t.partitions]) for t in r.topics] == \
        [(TOPIC, [(0, E.none)])]
    (entry,) = list(c.log)
    assert (entry.producer_id, entry.producer_epoch, type(entry.record).__name__) == (10, 5, "OffsetCommit")


# -- share group offsets ---------------------------------------------------------------------

def _share_group_with_a_member(profile: str) -> Coordinator:
    c = coord(profile)
    c.handle(request("ShareGroupHeartbeat", 1, **{**SHARE_JOIN, "group_id": "share-group-id"}))
    return c


INVALID_GROUP_ID_MESSAGE = "The configured groupId is invalid."


def test_delete_share_group_offsets_invalid_group_id(profile):
    r = send(coord(profile), "DeleteShareGroupOffsets", 0, group_id="", topics=[{"topic_name": TOPIC}])
    assert (r.error_code, r.error_message, list(r.responses)) == (E.invalid_group_id, INVALID_GROUP_ID_MESSAGE, [])


def test_alter_share_group_offsets_invalid_group_id(profile):
    r = send(coord(profile), "AlterShareGroupOffsets", 0, group_id="",
             topics=[{"topic_name": TOPIC, "partitions": [{"partition_index": 0, "start_offset": 0}]}])
    assert (r.error_code, r.error_message, list(r.responses)) == (E.invalid_group_id, INVALID_GROUP_ID_MESSAGE, [])


def test_delete_share_group_offsets_request_returns_group_not_empty(profile):
    r = send(_share_group_with_a_member(profile), "DeleteShareGroupOffsets", 0, group_id="share-group-id",
             topics=[{"topic_name": TOPIC}])
    assert (r.error_code, r.error_message, list(r.responses)) == (E.non_empty_group, "The group is not empty.", [])


def test_alter_share_group_offsets_request_returns_group_not_empty(profile):
    r = send(_share_group_with_a_member(profile), "AlterShareGroupOffsets", 0, group_id="share-group-id",
             topics=[{"topic_name": TOPIC, "partitions": [{"partition_index": 0, "start_offset": 0}]}])
    assert (r.error_code, list(r.responses)) == (E.non_empty_group, [])


def test_on_metadata_update_schedules_operations_when_topics_deleted(profile):
    # Trunk's onMetadataUpdate: for deleted topics, first "on-topics-deleted" (the offsets of their
    # partitions are tombstoned in every group), then "maybe-cleanup-share-group-state" (record 15
    # forgets them); kgroup runs both before it serves the next request or timer.
    from kgroup.groups.share import group as SG
    from kgroup.groups.share.group import InitTopic, StatePartitionMetadata

    c = coord(profile)
    foo = c.cluster.topic_id("foo")
    commit(c, "consumer-app", {("foo", 0): 10, ("foo", 2): 12, ("bar", 1): 3})
    share_group = group_on_partition(c.partition_for("consumer-app"), prefix="share-app")
    c2 = Coordinator.load([*(e.record for e in c.log), SG.group_epoch_record(share_group, 1, 0),
                           SG.state_metadata_record(share_group, StatePartitionMetadata(
                               initialized={foo: InitTopic("foo", frozenset({0, 1, 2}))}))],
                          cluster=c.cluster, profile=profile)
    before = len(c2.log)
    c2.cluster.delete_topic("foo")
    c2.advance(0)
    written = [e.record for e in list(c2.log)[before:]]
    assert [(type(r).__name__, getattr(r.key, "topic", None), getattr(r.key, "partition", None)) for r in written] == [
        ("OffsetCommit", "foo", 0), ("OffsetCommit", "foo", 2), ("ShareGroupStatePartitionMetadata", None, None)]
    assert all(r.value is None for r in written[:2])
    assert c2.groups[share_group].state_metadata.initialized == {}
    assert fetch(c2, "consumer-app", {"bar": [1]}).topics[0].partitions[0].committed_offset == 3
