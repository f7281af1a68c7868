"""The bad-input catalogue (reliability issue, part 4): for every API kgroup serves, requests with
missing, empty, negative, oversized and inconsistent fields, each answered with the error Kafka
gives, and nothing written to `__consumer_offsets` or `__share_group_state`.

Each row names the Kafka rule it follows (class or test of Apache Kafka, or the seed). Every
request goes to a copy of the same realistic coordinator (`badinput_world`), so a row that
wrote a record or changed a group would show.
"""
from __future__ import annotations

import pytest

from badinput_world import CLASSIC, CONSUMER, SHARE, STREAMS, world
from kgroup.errors import ErrorCode as E
from kgroup.groups.share.session import sessions
from kgroup.protocol import request, to_data
from kgroup.runtime import PendingResponse


def _ids(c, group: str) -> list[str]:
    return list(c.groups[group].members)


def _static_classic(c) -> tuple[str, str]:
    g = c.groups[CLASSIC]
    return next((m.member_id, m.group_instance_id) for m in g.members.values() if m.group_instance_id)


def _dynamic_classic(c) -> str:
    return next(m.member_id for m in c.groups[CLASSIC].members.values() if m.group_instance_id is None)


def join(c, *, group=CLASSIC, member="", instance=None, protocols=(("range", b"\x00\x00\x00\x00\x00\x00"),),
         session=45_000, protocol_type="consumer"):
    return request("JoinGroup", 9, group_id=group, session_timeout=session, rebalance_timeout=300_000,
                   member_id=member, group_instance_id=instance, protocol_type=protocol_type,
                   protocols=[{"name": n, "metadata": m} for n, m in protocols])


def cgh(c, **kw):
    data = dict(group_id=CONSUMER, member_id="m-new", member_epoch=0, rebalance_timeout=300_000,
                subscribed_topic_names=["foo"], topic_partitions=[], instance_id=None, rack_id=None,
                server_assignor=None, subscribed_topic_regex=None)
    data.update(kw)
    return request("ConsumerGroupHeartbeat", 1, **data)


def sgh(c, **kw):
    data = dict(group_id=SHARE, member_id="s-new", member_epoch=0, subscribed_topic_names=["foo"], rack_id=None)
    data.update(kw)
    return request("ShareGroupHeartbeat", 1, **data)


def stgh(c, **kw):
    data = dict(group_id=STREAMS, member_id="t-new", member_epoch=0, endpoint_information_epoch=0,
                instance_id=None, rack_id=None, rebalance_timeout=30_000,
                topology={"epoch": 0, "subtopologies": [{"subtopology_id": "0", "source_topics": ["orders"],
                                                         "source_topic_regex": [], "state_changelog_topics": [],
                                                         "repartition_sink_topics": [],
                                                         "repartition_source_topics": [],
                                                         "copartition_groups": []}]},
                active_tasks=[], standby_tasks=[], warmup_tasks=[], process_id="p-new", user_endpoint=None,
                client_tags=[], task_offsets=None, task_end_offsets=None, shutdown_application=False)
    data.update(kw)
    return request("StreamsGroupHeartbeat", 0, **data)


def _changelog_with_partitions(c):
    sub = {"subtopology_id": "0", "source_topics": ["orders"], "source_topic_regex": [],
           "state_changelog_topics": [{"name": "app-store-changelog", "partitions": 4, "replication_factor": 0,
                                       "topic_configs": []}],
           "repartition_sink_topics": [], "repartition_source_topics": [], "copartition_groups": []}
    return stgh(c, topology={"epoch": 0, "subtopologies": [sub]})


def commit(c, *, group="admin-g", metadata="", partition=0, generation=-1, member=""):
    return request("OffsetCommit", 9, group_id=group, generation_id_or_member_epoch=generation, member_id=member,
                   topics=[{"name": "foo", "partitions": [{"partition_index": partition, "committed_offset": 9,
                                                           "committed_leader_epoch": -1,
                                                           "committed_metadata": metadata}]}])


def share_state(api, version, c, group=SHARE, partition=0, **part):
    return request(api, version, group_id=group, topics=[
        {"topic_id": c.cluster.topic_id("foo"), "partitions": [{"partition": partition, **part}]}])


def share_fetch(c, **kw):
    data = dict(group_id=SHARE, member_id=_ids(c, SHARE)[0], share_session_epoch=0, max_wait=0, min_bytes=1,
                max_bytes=1 << 20, max_records=100, batch_size=100,
                topics=[{"topic_id": c.cluster.topic_id("foo"), "partitions": [
                    {"partition_index": 0, "acknowledgement_batches": []}]}], forgotten_topics_data=[])
    data.update(kw)
    return request("ShareFetch", 1, **data)


def share_ack(c, ack_type=1, first=0, last=0, **kw):
    member = _ids(c, SHARE)[0]
    session = sessions(c).get(SHARE, member)
    data = dict(group_id=SHARE, member_id=member, share_session_epoch=session.epoch if session else 1,
                topics=[{"topic_id": c.cluster.topic_id("foo"), "partitions": [
                    {"partition_index": 0, "acknowledgement_batches": [
                        {"first_offset": first, "last_offset": last, "acknowledge_types": [ack_type]}]}]}])
    data.update(kw)
    return request("ShareAcknowledge", 1, **data)


#: (name, request builder, path to the error code in the response data, expected code).
#: The name says the rule; the builders take the world's coordinator.
CASES = [
    # -- classic group protocol (Kafka: GroupMetadataManager.classicGroupJoin and friends) --------
    ("JoinGroup empty group id -> INVALID_GROUP_ID", lambda c: join(c, group=""), "error_code", E.invalid_group_id),
    ("JoinGroup session timeout under group.min.session.timeout.ms -> INVALID_SESSION_TIMEOUT",
     lambda c: join(c, session=1), "error_code", E.invalid_session_timeout),
    ("JoinGroup negative session timeout -> INVALID_SESSION_TIMEOUT",
     lambda c: join(c, session=-1), "error_code", E.invalid_session_timeout),
    # (a JoinGroup creating a group writes its empty metadata even when refused, as Kafka's
    # classicGroupJoin does: these rows join the existing Empty group instead)
    ("JoinGroup Empty group with no protocol -> INCONSISTENT_GROUP_PROTOCOL (supportsProtocols, Empty group)",
     lambda c: join(c, group="admin-g", protocols=()), "error_code", E.inconsistent_group_protocol),
    ("JoinGroup Empty group with an empty protocol type -> INCONSISTENT_GROUP_PROTOCOL",
     lambda c: join(c, group="admin-g", protocol_type=""), "error_code", E.inconsistent_group_protocol),
    ("JoinGroup protocol nobody in the group supports -> INCONSISTENT_GROUP_PROTOCOL",
     lambda c: join(c, protocols=(("roundrobin", b""),)), "error_code", E.inconsistent_group_protocol),
    ("JoinGroup static member rejoins a Stable group with no protocol -> INCONSISTENT_GROUP_PROTOCOL",
     lambda c: join(c, instance=_static_classic(c)[1], protocols=()), "error_code", E.inconsistent_group_protocol),
    ("JoinGroup other protocol type than the group's -> INCONSISTENT_GROUP_PROTOCOL",
     lambda c: join(c, protocol_type="connect"), "error_code", E.inconsistent_group_protocol),
    ("JoinGroup unknown member id -> UNKNOWN_MEMBER_ID",
     lambda c: join(c, member="nobody"), "error_code", E.unknown_member_id),
    ("JoinGroup a share group's id -> INCONSISTENT_GROUP_PROTOCOL (Kafka: classicGroupJoin of a group "
     "that is neither classic nor consumer)", lambda c: join(c, group=SHARE), "error_code",
     E.inconsistent_group_protocol),
    ("Heartbeat empty group id -> INVALID_GROUP_ID",
     lambda c: request("Heartbeat", 4, group_id="", generation_id=1, member_id="x", group_instance_id=None),
     "error_code", E.invalid_group_id),
    ("Heartbeat negative generation -> ILLEGAL_GENERATION",
     lambda c: request("Heartbeat", 4, group_id=CLASSIC, generation_id=-5, member_id=_dynamic_classic(c),
                       group_instance_id=None), "error_code", E.illegal_generation),
    ("Heartbeat unknown member -> UNKNOWN_MEMBER_ID",
     lambda c: request("Heartbeat", 4, group_id=CLASSIC, generation_id=1, member_id="nobody",
                       group_instance_id=None), "error_code", E.unknown_member_id),
    ("Heartbeat static member with another member id -> FENCED_INSTANCE_ID",
     lambda c: request("Heartbeat", 4, group_id=CLASSIC, generation_id=c.groups[CLASSIC].generation_id,
                       member_id=_dynamic_classic(c), group_instance_id=_static_classic(c)[1]),
     "error_code", E.fenced_instance_id),
    ("SyncGroup wrong generation -> ILLEGAL_GENERATION",
     lambda c: request("SyncGroup", 5, group_id=CLASSIC, generation_id=99_999, member_id=_dynamic_classic(c),
                       group_instance_id=None, protocol_type="consumer", protocol_name="range", assignments=[]),
     "error_code", E.illegal_generation),
    ("SyncGroup other protocol type than the group's -> INCONSISTENT_GROUP_PROTOCOL",
     lambda c: request("SyncGroup", 5, group_id=CLASSIC, generation_id=c.groups[CLASSIC].generation_id,
                       member_id=_dynamic_classic(c), group_instance_id=None, protocol_type="connect",
                       protocol_name=None, assignments=[]), "error_code", E.inconsistent_group_protocol),
    ("LeaveGroup empty group id -> INVALID_GROUP_ID",
     lambda c: request("LeaveGroup", 5, group_id="", members=[{"member_id": "x", "group_instance_id": None}]),
     "error_code", E.invalid_group_id),
    ("LeaveGroup unknown member -> UNKNOWN_MEMBER_ID for that member",
     lambda c: request("LeaveGroup", 5, group_id=CLASSIC, members=[{"member_id": "nobody",
                                                                     "group_instance_id": None}]),
     "members.0.error_code", E.unknown_member_id),
    # -- offsets (Kafka: OffsetMetadataManager, GroupCoordinatorService) ---------------------
    ("OffsetCommit empty group id -> INVALID_GROUP_ID",
     lambda c: commit(c, group=""), "topics.0.partitions.0.error_code", E.invalid_group_id),
    ("OffsetCommit metadata over offset.metadata.max.bytes -> OFFSET_METADATA_TOO_LARGE",
     lambda c: commit(c, metadata="m" * 5000), "topics.0.partitions.0.error_code", E.offset_metadata_too_large),
    ("OffsetCommit to a Stable classic group without its generation -> ILLEGAL_GENERATION? no: UNKNOWN_MEMBER_ID "
     "(an empty member id is no member of the group)", lambda c: commit(c, group=CLASSIC, generation=1),
     "topics.0.partitions.0.error_code", E.unknown_member_id),
    ("OffsetFetch empty group id -> NONE (Kafka's GroupCoordinatorService.fetchOffsets: \"for backwards "
     "compatibility, we support fetch commits for the empty group id\")",
     lambda c: request("OffsetFetch", 9, groups=[{"group_id": "", "member_id": None, "member_epoch": -1,
                                                  "topics": None}], require_stable=False),
     "groups.0.error_code", E.none),
    ("OffsetDelete empty group id -> INVALID_GROUP_ID (GroupCoordinatorServiceTest.testDeleteOffsetsInvalidGroupId)",
     lambda c: request("OffsetDelete", 0, group_id="", topics=[]), "error_code", E.invalid_group_id),
    ("OffsetDelete unknown group -> GROUP_ID_NOT_FOUND",
     lambda c: request("OffsetDelete", 0, group_id="nope", topics=[]), "error_code", E.group_id_not_found),
    ("TxnOffsetCommit empty group id -> INVALID_GROUP_ID",
     lambda c: request("TxnOffsetCommit", 3, transactional_id="tx", group_id="", producer_id=7, producer_epoch=0,
                       generation_id=-1, member_id="", group_instance_id=None, topics=[
                           {"name": "foo", "partitions": [{"partition_index": 0, "committed_offset": 1,
                                                           "committed_leader_epoch": -1,
                                                           "committed_metadata": ""}]}]),
     "topics.0.partitions.0.error_code", E.invalid_group_id),
    ("TxnOffsetCommit producer id -1 -> INVALID_PRODUCER_ID_MAPPING (found by the fuzzer: the log refused "
     "a transactional batch without a producer id with a ValueError)",
     lambda c: request("TxnOffsetCommit", 3, transactional_id="tx", group_id="admin-g", producer_id=-1,
                       producer_epoch=0, generation_id=-1, member_id="", group_instance_id=None, topics=[
                           {"name": "foo", "partitions": [{"partition_index": 0, "committed_offset": 1,
                                                           "committed_leader_epoch": -1,
                                                           "committed_metadata": ""}]}]),
     "topics.0.partitions.0.error_code", E.invalid_producer_id_mapping),
    # -- admin ----------------------------------------------------------------------------
    # Kafka looks the empty group id up like any other there (only a null one is INVALID_GROUP_ID)
    ("DescribeGroups empty group id -> an unknown group (Dead)",
     lambda c: request("DescribeGroups", 5, groups=[""], include_authorized_operations=False),
     "groups.0.group_state", "Dead"),
    ("DeleteGroups empty group id -> GROUP_ID_NOT_FOUND",
     lambda c: request("DeleteGroups", 2, groups_names=[""]), "results.0.error_code", E.group_id_not_found),
    ("DeleteGroups unknown group -> GROUP_ID_NOT_FOUND",
     lambda c: request("DeleteGroups", 2, groups_names=["nope"]), "results.0.error_code", E.group_id_not_found),
    ("DeleteGroups a group with members -> NON_EMPTY_GROUP",
     lambda c: request("DeleteGroups", 2, groups_names=[CONSUMER]), "results.0.error_code", E.non_empty_group),
    ("ConsumerGroupDescribe unknown group -> GROUP_ID_NOT_FOUND",
     lambda c: request("ConsumerGroupDescribe", 1, group_ids=["nope"], include_authorized_operations=False),
     "groups.0.error_code", E.group_id_not_found),
    ("ConsumerGroupDescribe empty group id -> INVALID_GROUP_ID",
     lambda c: request("ConsumerGroupDescribe", 1, group_ids=[""], include_authorized_operations=False),
     "groups.0.error_code", E.invalid_group_id),
    ("ShareGroupDescribe a consumer group -> GROUP_ID_NOT_FOUND",
     lambda c: request("ShareGroupDescribe", 1, group_ids=[CONSUMER], include_authorized_operations=False),
     "groups.0.error_code", E.group_id_not_found),
    ("StreamsGroupDescribe unknown group -> GROUP_ID_NOT_FOUND",
     lambda c: request("StreamsGroupDescribe", 0, group_ids=["nope"], include_authorized_operations=False),
     "groups.0.error_code", E.group_id_not_found),
    # -- KIP-848 consumer groups (Kafka: throwIfConsumerGroupHeartbeatRequestIsInvalid) ----------
    ("ConsumerGroupHeartbeat empty group id -> INVALID_REQUEST",
     lambda c: cgh(c, group_id=""), "error_code", E.invalid_request),
    ("ConsumerGroupHeartbeat v1 empty member id -> INVALID_REQUEST",
     lambda c: cgh(c, member_id=""), "error_code", E.invalid_request),
    ("ConsumerGroupHeartbeat join without rebalance timeout -> INVALID_REQUEST",
     lambda c: cgh(c, rebalance_timeout=-1), "error_code", E.invalid_request),
    ("ConsumerGroupHeartbeat join without a subscription -> INVALID_REQUEST",
     lambda c: cgh(c, subscribed_topic_names=None), "error_code", E.invalid_request),
    ("ConsumerGroupHeartbeat join with owned partitions null -> INVALID_REQUEST",
     lambda c: cgh(c, topic_partitions=None), "error_code", E.invalid_request),
    ("ConsumerGroupHeartbeat empty instance id -> INVALID_REQUEST",
     lambda c: cgh(c, instance_id=""), "error_code", E.invalid_request),
    ("ConsumerGroupHeartbeat empty rack id -> INVALID_REQUEST",
     lambda c: cgh(c, rack_id=""), "error_code", E.invalid_request),
    ("ConsumerGroupHeartbeat member epoch -3 -> INVALID_REQUEST",
     lambda c: cgh(c, member_epoch=-3), "error_code", E.invalid_request),
    ("ConsumerGroupHeartbeat static leave (-2) without instance id -> INVALID_REQUEST",
     lambda c: cgh(c, member_epoch=-2, member_id=_ids(c, CONSUMER)[0]), "error_code", E.invalid_request),
    ("ConsumerGroupHeartbeat unknown member with epoch 5 -> UNKNOWN_MEMBER_ID",
     lambda c: cgh(c, member_epoch=5), "error_code", E.unknown_member_id),
    ("ConsumerGroupHeartbeat known member, epoch ahead -> FENCED_MEMBER_EPOCH",
     lambda c: cgh(c, member_id=_ids(c, CONSUMER)[0], member_epoch=10_000), "error_code", E.fenced_member_epoch),
    ("ConsumerGroupHeartbeat unknown server assignor -> UNSUPPORTED_ASSIGNOR",
     lambda c: cgh(c, server_assignor="nope"), "error_code", E.unsupported_assignor),
    ("ConsumerGroupHeartbeat invalid regular expression -> INVALID_REGULAR_EXPRESSION",
     lambda c: cgh(c, subscribed_topic_names=None, subscribed_topic_regex="["), "error_code",
     E.invalid_regular_expression),
    ("ConsumerGroupHeartbeat on a share group's id -> GROUP_ID_NOT_FOUND (not a consumer group)",
     lambda c: cgh(c, group_id=SHARE), "error_code", E.group_id_not_found),
    # -- KIP-932 share groups (Kafka: throwIfShareGroupHeartbeatRequestIsInvalid) ----------------
    ("ShareGroupHeartbeat empty group id -> INVALID_REQUEST",
     lambda c: sgh(c, group_id=""), "error_code", E.invalid_request),
    ("ShareGroupHeartbeat empty member id -> INVALID_REQUEST",
     lambda c: sgh(c, member_id=""), "error_code", E.invalid_request),
    ("ShareGroupHeartbeat join without subscription -> INVALID_REQUEST",
     lambda c: sgh(c, subscribed_topic_names=None), "error_code", E.invalid_request),
    ("ShareGroupHeartbeat join with an empty subscription -> INVALID_REQUEST",
     lambda c: sgh(c, subscribed_topic_names=[]), "error_code", E.invalid_request),
    ("ShareGroupHeartbeat member epoch -2 -> INVALID_REQUEST (share groups have no static members)",
     lambda c: sgh(c, member_epoch=-2), "error_code", E.invalid_request),
    ("ShareGroupHeartbeat unknown member with epoch 3 -> UNKNOWN_MEMBER_ID",
     lambda c: sgh(c, member_epoch=3), "error_code", E.unknown_member_id),
    ("ShareFetch with share session epoch 5 and no session -> SHARE_SESSION_NOT_FOUND",
     lambda c: share_fetch(c, member_id="nobody", share_session_epoch=5), "error_code",
     E.share_session_not_found),
    ("ShareAcknowledge unknown acknowledge type 9 -> INVALID_REQUEST for the partition",
     lambda c: share_ack(c, ack_type=9), "responses.0.partitions.0.error_code", E.invalid_request),
    ("ShareAcknowledge first offset after last offset -> INVALID_REQUEST for the partition",
     lambda c: share_ack(c, first=3, last=1), "responses.0.partitions.0.error_code", E.invalid_request),
    ("ShareAcknowledge without a share session -> SHARE_SESSION_NOT_FOUND",
     lambda c: share_ack(c, member_id="nobody"), "error_code", E.share_session_not_found),
    # -- the share coordinator (Kafka: ShareCoordinatorService) ----------------------------------
    ("ReadShareGroupState empty group id -> an empty response (ShareCoordinatorService)",
     lambda c: share_state("ReadShareGroupState", 0, c, group="", leader_epoch=0),
     "results", []),
    ("WriteShareGroupState empty group id -> an empty response (ShareCoordinatorService)",
     lambda c: share_state("WriteShareGroupState", 1, c, group="", state_epoch=0, leader_epoch=0, start_offset=0,
                           delivery_complete_count=0, state_batches=[]),
     "results", []),
    ("InitializeShareGroupState empty group id -> an empty response (ShareCoordinatorService)",
     lambda c: share_state("InitializeShareGroupState", 0, c, group="", state_epoch=0, start_offset=0),
     "results", []),
    ("DeleteShareGroupState empty group id -> an empty response (ShareCoordinatorService)",
     lambda c: share_state("DeleteShareGroupState", 0, c, group=""), "results", []),
    ("ReadShareGroupStateSummary empty group id -> an empty response (ShareCoordinatorService)",
     lambda c: share_state("ReadShareGroupStateSummary", 1, c, group="", leader_epoch=0),
     "results", []),
    ("AlterShareGroupOffsets on a group with members -> NON_EMPTY_GROUP",
     lambda c: request("AlterShareGroupOffsets", 0, group_id=SHARE, topics=[
         {"topic_name": "foo", "partitions": [{"partition_index": 0, "start_offset": 0}]}]),
     "error_code", E.non_empty_group),
    ("DeleteShareGroupOffsets on a group with members -> NON_EMPTY_GROUP",
     lambda c: request("DeleteShareGroupOffsets", 0, group_id=SHARE, topics=[{"topic_name": "foo"}]),
     "error_code", E.non_empty_group),
    # -- KIP-1071 Streams groups (seed "Request Validation"; Kafka: StreamsGroupHeartbeatRequestManager) --
    ("StreamsGroupHeartbeat empty group id -> INVALID_REQUEST",
     lambda c: stgh(c, group_id=""), "error_code", E.invalid_request),
    ("StreamsGroupHeartbeat join without a topology -> INVALID_REQUEST",
     lambda c: stgh(c, topology=None), "error_code", E.invalid_request),
    ("StreamsGroupHeartbeat negative rebalance timeout on join -> INVALID_REQUEST",
     lambda c: stgh(c, rebalance_timeout=-5), "error_code", E.invalid_request),
    ("StreamsGroupHeartbeat member epoch -3 -> INVALID_REQUEST",
     lambda c: stgh(c, member_epoch=-3, topology=None), "error_code", E.invalid_request),
    ("StreamsGroupHeartbeat changelog topic with a partition count -> STREAMS_INVALID_TOPOLOGY",
     _changelog_with_partitions, "error_code", E.streams_invalid_topology),
    ("StreamsGroupHeartbeat topology on a heartbeat -> INVALID_REQUEST",
     lambda c: stgh(c, member_id=_ids(c, STREAMS)[0], member_epoch=1), "error_code", E.invalid_request),
    # -- strings longer than Kafka reads (32,767 bytes; its generated readers refuse the request:
    #    "string field ... had invalid length"); they used to fail when the record key was encoded --
    ("ConsumerGroupHeartbeat group id of 40,000 bytes -> INVALID_REQUEST",
     lambda c: cgh(c, group_id="g" * 40_000), "error_code", E.invalid_request),
    ("ConsumerGroupHeartbeat member id of 32,768 bytes -> INVALID_REQUEST",
     lambda c: cgh(c, member_id="m" * 32_768), "error_code", E.invalid_request),
    ("ConsumerGroupHeartbeat subscribed topic of 12,000 three-byte characters -> INVALID_REQUEST",
     lambda c: cgh(c, subscribed_topic_names=["€" * 12_000]), "error_code", E.invalid_request),
    ("ShareGroupHeartbeat member id of 40,000 bytes -> INVALID_REQUEST",
     lambda c: sgh(c, member_id="s" * 40_000), "error_code", E.invalid_request),
    ("StreamsGroupHeartbeat process id of 40,000 bytes -> INVALID_REQUEST",
     lambda c: stgh(c, process_id="p" * 40_000), "error_code", E.invalid_request),
    ("JoinGroup instance id of 40,000 bytes -> INVALID_REQUEST",
     lambda c: join(c, instance="i" * 40_000), "error_code", E.invalid_request),
    ("OffsetCommit topic name of 40,000 bytes -> INVALID_REQUEST on every partition",
     lambda c: request("OffsetCommit", 9, group_id=CONSUMER, generation_id_or_member_epoch=-1, member_id="",
                       topics=[{"name": "t" * 40_000, "partitions": [{"partition_index": 0, "committed_offset": 1}]},
                               {"name": "foo", "partitions": [{"partition_index": 0, "committed_offset": 1}]}]),
     "topics.1.partitions.0.error_code", E.invalid_request),
    # -- configs (Kafka: GroupConfig validation) -------------------------------------------------
    ("IncrementalAlterConfigs non-numeric session timeout -> INVALID_CONFIG",
     lambda c: request("IncrementalAlterConfigs", 1, resources=[{"resource_type": 32, "resource_name": CONSUMER,
                                                                 "configs": [{"name": "consumer.session.timeout.ms",
                                                                              "config_operation": 0,
                                                                              "value": "soon"}]}],
                       validate_only=False), "responses.0.error_code", E.invalid_config),
    ("IncrementalAlterConfigs unknown group config -> INVALID_CONFIG",
     lambda c: request("IncrementalAlterConfigs", 1, resources=[{"resource_type": 32, "resource_name": CONSUMER,
                                                                 "configs": [{"name": "no.such.config",
                                                                              "config_operation": 0,
                                                                              "value": "1"}]}],
                       validate_only=False), "responses.0.error_code", E.invalid_config),
]


def _at(data, path: str):
    for step in path.split("."):
        data = data[int(step)] if step.isdigit() else data[step]
    return data


@pytest.mark.parametrize("name,build,path,expected", CASES, ids=[c[0].split(" ->")[0] for c in CASES])
def test_bad_input_gets_kafkas_error_and_writes_nothing(name, build, path, expected, reliability):
    w = world()
    c = w.c
    before = (len(c.log), len(c.share_state_log), {g: repr(to_data_group(c, g)) for g in c.groups})
    response = c.handle(build(c))
    reliability["bad inputs tried"] += 1
    if isinstance(response, PendingResponse):
        assert response.done, f"{name}: a bad JoinGroup/SyncGroup must be answered at once"
        response = response.response
    got = _at(to_data(response), path)
    assert (E(got) if isinstance(expected, E) else got) == expected, name
    assert (len(c.log), len(c.share_state_log)) == before[:2], f"{name}: wrote records"


def to_data_group(c, group_id: str):
    """What a bad request must leave alone: the group's members and epochs."""
    g = c.groups[group_id]
    return sorted(g.members), getattr(g, "generation_id", None), getattr(g, "group_epoch", None)


def test_static_member_rejoining_with_a_protocol_named_twice_is_answered(reliability):
    """Found by the mutation fuzzer: a static member rejoining a Stable classic group with its
    protocol listed twice made `select_protocol` raise (the group counted the protocol twice, so
    no protocol had as many supporters as members). Kafka counts supporters per member
    (ClassicGroup.supportedProtocols), so the rejoin is an ordinary KIP-345 static rejoin."""
    c = world().c
    member_id, instance = _static_classic(c)
    reliability["bad inputs tried"] += 1
    join_ = c.handle(join(c, instance=instance, protocols=(("range", b""), ("range", b""))))
    assert join_.done and join_.response.error_code == E.none
    g = c.groups[CLASSIC]
    assert g.protocol_name == "range" and g.supported_protocols["range"] == len(g.members)
    reloaded = type(c).load(c.log, share_state_log=c.share_state_log)
    assert sorted(reloaded.groups[CLASSIC].members) == sorted(g.members)
