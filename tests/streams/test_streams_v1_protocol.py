"""StreamsGroupHeartbeat and StreamsGroupDescribe version 1 (Kafka 4.4.0: KIP-1331's topology
descriptions, KIP-1357's AssignorName), and StreamsGroupTopologyDescriptionUpdate v0.

The wire layouts are checked byte for byte against frames written out by hand from Kafka
4.4.0's JSON definitions (every version flexible: compact strings and arrays are length + 1 as
an unsigned varint, a null one is 0; a nullable struct is -1 (null) or 1 then its fields; each
struct ends with its tagged fields, here none: 0)."""
from __future__ import annotations

import io

import pytest

from kgroup import Cluster, Coordinator, ErrorCode
from kgroup.protocol import build, request, response_class, supported_versions
from kgroup.serve.framing import _reader, _writer
from tests.streams_testing import STATELESS, describe, shb, statuses

E = ErrorCode
MISSING_SOURCE = 1


def encoded(entity) -> bytes:
    buf = io.BytesIO()
    _writer(type(entity))(buf, entity)
    return buf.getvalue()


def round_trips(entity, wire: bytes) -> None:
    """`entity` writes as `wire`, and `wire` reads back as `entity`."""
    assert encoded(entity).hex(" ") == wire.hex(" ")
    decoded, used = _reader(type(entity))(wire, 0)
    assert decoded == entity and used == len(wire)


def hexbytes(text: str) -> bytes:
    """Hex with spaces, and `#` comments to the end of a line."""
    return bytes.fromhex("".join(line.split("#")[0] for line in text.splitlines()))


# -- the layouts ------------------------------------------------------------------------

JOIN = dict(group_id="g", member_id="m", member_epoch=0, endpoint_information_epoch=0, instance_id=None,
            rack_id=None, rebalance_timeout=30_000,
            topology={"epoch": 0, "subtopologies": [{
                "subtopology_id": "0", "source_topics": ["t"], "source_topic_regex": [],
                "state_changelog_topics": [], "repartition_sink_topics": [], "repartition_source_topics": [],
                "copartition_groups": []}]},
            active_tasks=[], standby_tasks=[], warmup_tasks=[], process_id="p", user_endpoint=None,
            client_tags=[], task_offsets=None, task_end_offsets=None, shutdown_application=False)

JOIN_BYTES = hexbytes("""
    02 67                   # GroupId "g"
    02 6d                   # MemberId "m"
    00 00 00 00             # MemberEpoch 0
    00 00 00 00             # EndpointInformationEpoch 0
    00                      # InstanceId null
    00                      # RackId null
    00 00 75 30             # RebalanceTimeoutMs 30000
    01                      # Topology: present
      00 00 00 00           #   Epoch 0
      02                    #   Subtopologies: 1
        02 30               #     SubtopologyId "0"
        02 02 74            #     SourceTopics ["t"]
        01 01 01 01 01      #     SourceTopicRegex, StateChangelogTopics, RepartitionSinkTopics,
                            #     RepartitionSourceTopics, CopartitionGroups: []
        00                  #     (tagged fields)
      00                    #   (tagged fields)
    01 01 01                # ActiveTasks, StandbyTasks, WarmupTasks: []
    02 70                   # ProcessId "p"
    ff                      # UserEndpoint null
    01                      # ClientTags []
    00 00                   # TaskOffsets, TaskEndOffsets null
    00                      # ShutdownApplication false
    00                      # (tagged fields)
""")


def test_heartbeat_request_v1_is_v0_on_the_wire():
    """v1 changed no request field (it allows the MISSING_CLIENT_TAGS status in answers)."""
    assert supported_versions("StreamsGroupHeartbeat") == [0, 1]
    v1 = request("StreamsGroupHeartbeat", 1, **JOIN)
    assert type(v1).__version__ == 1 and type(v1).__module__.startswith("kgroup.protocol.schema")
    round_trips(v1, JOIN_BYTES)
    round_trips(request("StreamsGroupHeartbeat", 0, **JOIN), JOIN_BYTES)


ANSWER = dict(throttle_time=0, error_code=0, error_message=None, member_id="m", member_epoch=2,
              heartbeat_interval=5000, task_offset_interval=60_000, acceptable_recovery_lag=10_000, status=[],
              active_tasks=[{"subtopology_id": "0", "partitions": [0, 1]}], standby_tasks=[], warmup_tasks=[],
              endpoint_information_epoch=0, partitions_by_user_endpoint=None)


def test_heartbeat_response_v1_layout():
    """v1: AcceptableRecoveryLagLegacy (int32, v0 only) gone; AcceptableRecoveryLag (int64) after
    TaskOffsetIntervalMs; TopologyDescriptionRequired after WarmupTasks."""
    head = hexbytes("""
        00 00 00 00         # ThrottleTimeMs 0
        00 00               # ErrorCode 0
        00                  # ErrorMessage null
        02 6d               # MemberId "m"
        00 00 00 02         # MemberEpoch 2
        00 00 13 88         # HeartbeatIntervalMs 5000
    """)
    tasks = hexbytes("""
        01                  # Status []
        02 02 30 03 00 00 00 00 00 00 00 01 00   # ActiveTasks [{"0", [0, 1]}]
        01 01               # StandbyTasks, WarmupTasks []
    """)
    tail = hexbytes("""
        00 00 00 00         # EndpointInformationEpoch 0
        00                  # PartitionsByUserEndpoint null
        00                  # (tagged fields)
    """)
    v1 = build(response_class("StreamsGroupHeartbeat", 1), {**ANSWER, "topology_description_required": True})
    round_trips(v1, head + hexbytes("""
        00 00 ea 60                 # TaskOffsetIntervalMs 60000
        00 00 00 00 00 00 27 10     # AcceptableRecoveryLag 10000 (int64)
    """) + tasks + hexbytes("01      # TopologyDescriptionRequired true") + tail)
    v0 = build(response_class("StreamsGroupHeartbeat", 0), ANSWER)
    round_trips(v0, head + hexbytes("""
        00 00 27 10                 # AcceptableRecoveryLagLegacy 10000 (int32)
        00 00 ea 60                 # TaskOffsetIntervalMs 60000
    """) + tasks + tail)
    # the fields' defaults: AcceptableRecoveryLag -1 ("the broker does not support this configuration")
    bare = build(response_class("StreamsGroupHeartbeat", 1), {"member_id": "m"})
    assert bare.acceptable_recovery_lag == -1 and bare.topology_description_required is False


def test_describe_request_v1_layout():
    v1 = request("StreamsGroupDescribe", 1, group_ids=["g"], include_authorized_operations=False,
                 include_topology_description=True)
    round_trips(v1, hexbytes("""
        02 02 67            # GroupIds ["g"]
        00                  # IncludeAuthorizedOperations false
        01                  # IncludeTopologyDescription true
        00                  # (tagged fields)
    """))
    assert request("StreamsGroupDescribe", 1, group_ids=[], include_authorized_operations=False) \
        .include_topology_description is False


DESCRIBED = dict(error_code=0, error_message=None, group_id="g", group_state="NotReady", group_epoch=2,
                 assignment_epoch=1, topology={"epoch": 0, "subtopologies": None}, members=[],
                 authorized_operations=-2147483648)
DESCRIBED_BYTES = hexbytes("""
    00 00               # ErrorCode 0
    00                  # ErrorMessage null
    02 67               # GroupId "g"
    09 4e 6f 74 52 65 61 64 79   # GroupState "NotReady"
    00 00 00 02         # GroupEpoch 2
    00 00 00 01         # AssignmentEpoch 1
    01 00 00 00 00 00 00         # Topology: present, Epoch 0, Subtopologies null, (tagged fields)
    01                  # Members []
    80 00 00 00         # AuthorizedOperations: not asked for
""")


def test_describe_response_v1_layout():
    """v1 adds TopologyDescription, TopologyDescriptionStatus and AssignorName after AuthorizedOperations."""
    v1 = build(response_class("StreamsGroupDescribe", 1), {"throttle_time": 0, "groups": [
        {**DESCRIBED, "topology_description_status": 1, "assignor_name": "sticky"}]})
    round_trips(v1, hexbytes("00 00 00 00  02   # ThrottleTimeMs 0, Groups: 1") + DESCRIBED_BYTES + hexbytes("""
        ff                  # TopologyDescription null
        01                  # TopologyDescriptionStatus 1 (NOT_STORED)
        07 73 74 69 63 6b 79         # AssignorName "sticky"
        00                  # (tagged fields of the group)
        00                  # (tagged fields)
    """))
    v0 = build(response_class("StreamsGroupDescribe", 0), {"throttle_time": 0, "groups": [DESCRIBED]})
    round_trips(v0, hexbytes("00 00 00 00  02") + DESCRIBED_BYTES + hexbytes("00 00"))


def test_describe_response_v1_topology_description_layout():
    node = {"name": "S", "node_type": 1, "source_topics": ["t"], "sink_topic": None, "stores": [],
            "successors": ["P"]}
    v1 = build(response_class("StreamsGroupDescribe", 1), {"throttle_time": 0, "groups": [
        {**DESCRIBED, "topology_description": {"subtopologies": [{"subtopology_id": "0", "nodes": [node]}],
                                               "global_stores": []},
         "topology_description_status": 3, "assignor_name": None}]})
    round_trips(v1, hexbytes("00 00 00 00  02") + DESCRIBED_BYTES + hexbytes("""
        01                  # TopologyDescription: present
          02                #   Subtopologies: 1
            02 30           #     SubtopologyId "0"
            02              #     Nodes: 1
              02 53         #       Name "S"
              01            #       NodeType 1 (SOURCE)
              02 02 74      #       SourceTopics ["t"]
              00            #       SinkTopic null
              01            #       Stores []
              02 02 50      #       Successors ["P"]
              00            #       (tagged fields)
            00              #     (tagged fields)
          01                #   GlobalStores []
          00                #   (tagged fields)
        03                  # TopologyDescriptionStatus 3 (AVAILABLE)
        00                  # AssignorName null
        00 00               # (tagged fields of the group, of the response)
    """))


def test_topology_description_update_v0_layout():
    node = {"name": "P", "node_type": 2, "source_topics": [], "sink_topic": None, "stores": ["s"],
            "successors": []}
    req = request("StreamsGroupTopologyDescriptionUpdate", 0, group_id="g", member_id="m", topology_epoch=1,
                  topology_description={"subtopologies": [],
                                        "global_stores": [{"source": {**node, "name": "S", "node_type": 1,
                                                                      "stores": []},
                                                           "processor": node}]})
    round_trips(req, hexbytes("""
        02 67               # GroupId "g"
        02 6d               # MemberId "m"
        00 00 00 01         # TopologyEpoch 1
        01                  # TopologyDescription.Subtopologies []
        02                  # GlobalStores: 1
          02 53 01 01 00 01 01 00        # Source: "S", SOURCE, [], null, [], [], (tags)
          02 50 02 01 00 02 02 73 01 00  # Processor: "P", PROCESSOR, [], null, ["s"], [], (tags)
          00                # (tagged fields of the store)
        00                  # (tagged fields of the description)
        00                  # (tagged fields)
    """))
    resp = build(response_class(93, 0), {"throttle_time": 0, "error_code": 35, "error_message": "x"})
    round_trips(resp, hexbytes("00 00 00 00  00 23  02 78  00"))


# -- what the coordinator answers -----------------------------------------------------------

def coord(profile: str = "kafka", config: dict | None = None, **topics: int) -> Coordinator:
    return Coordinator(cluster=Cluster(topics or {"orders": 3}, seed=1), profile=profile, config=config)


@pytest.mark.parametrize("profile", ["kafka", "kip"])
def test_describe_v1_names_the_assignor_the_next_assignment_uses(profile):
    c = coord(profile)
    shb(c, "A", 0)
    d = describe(c, version=1)
    assert (d.error_code, d.assignor_name) == (E.none, "sticky")
    assert d.topology_description_status == 0 and d.topology_description is None   # not asked for
    c.cluster.group_configs["app"] = {"streams.assignor.name": "highly_available"}
    assert describe(c, version=1).assignor_name == "highly_available"


def test_describe_v1_names_the_assignor_of_a_not_ready_group():
    """Kafka's describe asks the coordinator for the group's assignor whatever its state."""
    c = coord(other=1)
    r = shb(c, "A", 0)
    assert MISSING_SOURCE in statuses(r)
    d = describe(c, version=1)
    assert (d.group_state, d.assignor_name) == ("NotReady", "sticky")


def test_describe_v1_topology_description_is_not_stored_without_a_plugin():
    """Kafka 4.4.0 keeps descriptions in group.streams.topology.description.plugin.class, unset
    by default: a described group asked for its description is NOT_STORED (1), one with an error
    keeps NOT_REQUESTED (0) and, like every error, a null AssignorName."""
    c = coord()
    shb(c, "A", 0)
    d = describe(c, version=1, include_topology_description=True)
    assert (d.topology_description_status, d.topology_description, d.assignor_name) == (1, None, "sticky")
    missing = describe(c, "nope", version=1, include_topology_description=True)
    assert missing.error_code == E.group_id_not_found
    assert (missing.topology_description_status, missing.assignor_name) == (0, None)


def test_describe_v0_still_answers_v0():
    c = coord()
    shb(c, "A", 0)
    d = describe(c)
    assert type(d).__version__ == 0 and not hasattr(d, "assignor_name")


@pytest.mark.parametrize("profile", ["kafka", "kip"])
def test_heartbeat_v1_carries_the_acceptable_recovery_lag(profile):
    """v1's AcceptableRecoveryLag is the group's streams.acceptable.recovery.lag; Kafka 4.4.0 leaves
    v0's legacy field at 0 (the kip profile fills it); errors and leaves keep the default, -1."""
    c = coord(profile, config={"group.streams.acceptable.recovery.lag": 1234})
    r = shb(c, "A", 0, version=1)
    assert type(r).__version__ == 1 and r.error_code == E.none
    assert (r.acceptable_recovery_lag, r.topology_description_required) == (1234, False)
    assert shb(c, "A", r.member_epoch).acceptable_recovery_lag == (0 if profile == "kafka" else 1234)
    left = shb(c, "A", -1, version=1)
    assert left.error_code == E.none and left.acceptable_recovery_lag == -1
    fenced = shb(c, "B", 7, version=1)
    assert fenced.error_code == E.unknown_member_id and fenced.acceptable_recovery_lag == -1


def test_topology_description_update_is_refused_without_a_plugin():
    c = coord()
    shb(c, "A", 0)
    r = c.handle(request("StreamsGroupTopologyDescriptionUpdate", 0, group_id="app", member_id="A",
                         topology_epoch=0, topology_description={"subtopologies": [], "global_stores": []}))
    assert r.error_code == E.unsupported_version
    assert r.error_message == "The broker has no streams group topology description plugin configured."


def test_a_kafka_answer_with_missing_client_tags_reads_by_name_in_the_stepper():
    """Kafka 4.4's status 6 (rack-aware standby tags; kgroup assigns no tags and never sends it):
    a recorded answer from a Kafka broker still reads by name, not as a bare number."""
    from widgets.stepper_words import describe_response
    answer = build(response_class("StreamsGroupHeartbeat", 1),
                   {**ANSWER, "status": [{"status_code": 6, "status_detail": "client tags [zone] missing"}]})
    assert "status MISSING_CLIENT_TAGS (client tags [zone] missing)" in describe_response(answer)
