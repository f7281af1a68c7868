"""Known-answer tests: bytes written out by hand from Kafka's schemas, one field per line.

Each test decodes the bytes, checks the typed fields, the exact `to_json()` text
(Kafka's CoordinatorRecordMessageFormatter shape) and that re-encoding gives the
same bytes. Nothing here is produced by kgroup's encoder.
"""
from __future__ import annotations

import uuid

from kgroup.records import (ConsumerGroupCurrentMemberAssignment, ConsumerGroupMemberMetadata,
                            ConsumerGroupMetadata, ConsumerGroupTargetAssignmentMember,
                            ConsumerGroupTargetAssignmentMetadata, GroupMetadata, LegacyOffsetCommit,
                            OffsetCommit, ShareGroupMetadata, ShareSnapshot, ShareUpdate,
                            StreamsGroupMemberMetadata, StreamsGroupTopology, decode_record)


def h(*fields: str) -> bytes:
    """Hex fields (spaces allowed) -> bytes."""
    return bytes.fromhex("".join(fields))


# Kafka's OffsetMessageFormatterTest uses this topic id.
TOPIC_ID_STR = "MKXx1fIkQy2J9jXHhK8m1w"
TOPIC_ID_HEX = "30a5f1d5f224432d89f635c784af26d7"
TOPIC_ID = uuid.UUID(TOPIC_ID_HEX)

OFFSET_COMMIT_KEY = h(
    "0001",            # record type 1 (OffsetCommit)
    "0006 6f7264657273",  # group "orders"
    "0008 7061796d656e7473",  # topic "payments"
    "00000003",        # partition 3
)
OFFSET_COMMIT_KEY_JSON = '{"type":1,"data":{"group":"orders","topic":"payments","partition":3}}'


def check(key: bytes, value: bytes | None, json_text: str, *, topic: str = "__consumer_offsets"):
    rec = decode_record(key, value, topic=topic)
    assert rec.to_json() == json_text
    assert str(rec.to_json()) == json_text
    assert rec.encode() == (key, value)
    return rec


def test_offset_commit_v0():
    value = h(
        "0000",                 # version 0
        "0000000000000064",     # offset 100
        "0001 6d",              # metadata "m"
        "00000000000004d2",     # commitTimestamp 1234
    )
    rec = check(OFFSET_COMMIT_KEY, value,
                '{"key":' + OFFSET_COMMIT_KEY_JSON + ',"value":{"version":0,'
                '"data":{"offset":100,"metadata":"m","commitTimestamp":1234}}}')
    assert type(rec) is OffsetCommit and rec.version == 0
    assert (rec.key.group, rec.key.topic, rec.key.partition) == ("orders", "payments", 3)
    assert (rec.value.offset, rec.value.metadata, rec.value.commit_timestamp) == (100, "m", 1234)
    assert rec.value.leader_epoch == -1 and rec.value.expire_timestamp == -1  # not in v0: defaults


def test_offset_commit_v1_expire_timestamp():
    value = h(
        "0001",                 # version 1
        "0000000000000064",     # offset 100
        "0000",                 # metadata ""
        "00000000000004d2",     # commitTimestamp 1234
        "000000000000162e",     # expireTimestamp 5678 (v1 only)
    )
    rec = check(OFFSET_COMMIT_KEY, value,
                '{"key":' + OFFSET_COMMIT_KEY_JSON + ',"value":{"version":1,'
                '"data":{"offset":100,"metadata":"","commitTimestamp":1234,"expireTimestamp":5678}}}')
    assert rec.value.expire_timestamp == 5678


def test_offset_commit_v2_has_the_v0_layout():
    value = h("0002", "0000000000000064", "0001 6d", "00000000000004d2")
    check(OFFSET_COMMIT_KEY, value,
          '{"key":' + OFFSET_COMMIT_KEY_JSON + ',"value":{"version":2,'
          '"data":{"offset":100,"metadata":"m","commitTimestamp":1234}}}')


def test_offset_commit_v3_fact_sheet_example():
    value = h(
        "0003",                 # version 3
        "0000000000000412",     # offset 1042
        "00000007",             # leaderEpoch 7 (v3+)
        "0000",                 # metadata ""
        "0000019000c79c78",     # commitTimestamp 1718000000120
    )
    assert len(OFFSET_COMMIT_KEY) == 24 and len(value) == 24  # keySize/valueSize of the dump example
    rec = check(OFFSET_COMMIT_KEY, value,
                '{"key":{"type":1,"data":{"group":"orders","topic":"payments","partition":3}},'
                '"value":{"version":3,"data":{"offset":1042,"leaderEpoch":7,"metadata":"",'
                '"commitTimestamp":1718000000120}}}')
    assert rec.value.leader_epoch == 7 and rec.value.commit_timestamp == 1718000000120


def test_offset_commit_v4_flexible_with_tagged_topic_id():
    value = h(
        "0004",                 # version 4 (flexible)
        "0000000000000064",     # offset 100
        "0000000a",             # leaderEpoch 10
        "09 6d65746164617461",  # metadata "metadata" (compact: length + 1)
        "00000000000004d2",     # commitTimestamp 1234
        "01",                   # 1 tagged field
        "00 10", TOPIC_ID_HEX,  # tag 0 (topicId), 16 bytes
    )
    rec = check(OFFSET_COMMIT_KEY, value,
                '{"key":' + OFFSET_COMMIT_KEY_JSON + ',"value":{"version":4,"data":{"offset":100,'
                '"leaderEpoch":10,"metadata":"metadata","commitTimestamp":1234,'
                '"topicId":"' + TOPIC_ID_STR + '"}}}')
    assert rec.value.topic_id == TOPIC_ID


def test_offset_commit_v4_without_tags():
    value = h("0004", "0000000000000064", "ffffffff", "01", "00000000000004d2",
              "00")                 # no tagged fields: topicId stays all-zero and is not rendered
    rec = check(OFFSET_COMMIT_KEY, value,
                '{"key":' + OFFSET_COMMIT_KEY_JSON + ',"value":{"version":4,"data":{"offset":100,'
                '"leaderEpoch":-1,"metadata":"","commitTimestamp":1234}}}')
    assert rec.value.topic_id == uuid.UUID(int=0)


def test_legacy_offset_commit():
    key = h(
        "0000",                 # record type 0 (LegacyOffsetCommit)
        "0001 67",              # group "g"
        "0001 74",              # topic "t"
        "00000000",             # partition 0
    )
    value = h(
        "0000",                 # version 0
        "0000000000000005",     # offset 5
        "0001 78",              # metadata "x"
        "0000000000000010",     # commitTimestamp 16
    )
    rec = check(key, value,
                '{"key":{"type":0,"data":{"group":"g","topic":"t","partition":0}},'
                '"value":{"version":0,"data":{"offset":5,"metadata":"x","commitTimestamp":16}}}')
    assert type(rec) is LegacyOffsetCommit


GROUP_KEY = h("0002", "0002 6731")  # type 2 (GroupMetadata), group "g1"


def test_group_metadata_v0():
    value = h(
        "0000",                     # version 0
        "0008 636f6e73756d6572",    # protocolType "consumer"
        "00000001",                 # generation 1
        "0005 72616e6765",          # protocol "range"
        "0002 6d31",                # leader "m1"
        "00000001",                 # members: 1 element
        "0002 6d31",                #   memberId "m1"
        "0001 63",                  #   clientId "c"
        "0002 2f68",                #   clientHost "/h"
        "00002710",                 #   sessionTimeout 10000
        "00000002 0102",            #   subscription 0x0102
        "00000000",                 #   assignment (empty)
    )
    rec = check(GROUP_KEY, value,
                '{"key":{"type":2,"data":{"group":"g1"}},"value":{"version":0,"data":{'
                '"protocolType":"consumer","generation":1,"protocol":"range","leader":"m1",'
                '"members":[{"memberId":"m1","clientId":"c","clientHost":"/h","sessionTimeout":10000,'
                '"subscription":"AQI=","assignment":""}]}}}')
    assert type(rec) is GroupMetadata
    (member,) = rec.value.members
    assert type(member) is GroupMetadata.Value.MemberMetadata
    assert member.subscription == b"\x01\x02" and member.assignment == b""
    assert member.rebalance_timeout == -1 and member.group_instance_id is None  # absent in v0
    assert rec.value.current_state_timestamp == -1


def test_group_metadata_v3_nulls_and_two_members():
    value = h(
        "0003",                     # version 3
        "0000",                     # protocolType ""
        "00000000",                 # generation 0
        "ffff",                     # protocol null
        "ffff",                     # leader null
        "0000018bcfe56800",         # currentStateTimestamp 1700000000000 (v2+)
        "00000002",                 # members: 2 elements
        "0001 61",                  #   memberId "a"
        "ffff",                     #   groupInstanceId null (v3+)
        "0001 63",                  #   clientId "c"
        "0001 68",                  #   clientHost "h"
        "000493e0",                 #   rebalanceTimeout 300000 (v1+)
        "0000afc8",                 #   sessionTimeout 45000
        "00000000",                 #   subscription (empty)
        "00000001 ff",              #   assignment 0xff
        "0001 62",                  #   memberId "b"
        "0001 69",                  #   groupInstanceId "i"
        "0001 63",                  #   clientId "c"
        "0001 68",                  #   clientHost "h"
        "00000064",                 #   rebalanceTimeout 100
        "000000c8",                 #   sessionTimeout 200
        "00000000",                 #   subscription (empty)
        "00000000",                 #   assignment (empty)
    )
    member_json = ('{{"memberId":"{m}","groupInstanceId":{i},"clientId":"c","clientHost":"h",'
                   '"rebalanceTimeout":{r},"sessionTimeout":{s},"subscription":"","assignment":"{a}"}}')
    rec = check(GROUP_KEY, value,
                '{"key":{"type":2,"data":{"group":"g1"}},"value":{"version":3,"data":{'
                '"protocolType":"","generation":0,"protocol":null,"leader":null,'
                '"currentStateTimestamp":1700000000000,"members":['
                + member_json.format(m="a", i="null", r=300000, s=45000, a="/w==") + ","
                + member_json.format(m="b", i='"i"', r=100, s=200, a="") + "]}}}")
    assert rec.value.protocol is None and rec.value.leader is None
    assert [m.group_instance_id for m in rec.value.members] == [None, "i"]


def test_group_metadata_v4_flexible():
    value = h(
        "0004",                     # version 4 (flexible)
        "09 636f6e73756d6572",      # protocolType "consumer"
        "00000002",                 # generation 2
        "00",                       # protocol null
        "00",                       # leader null
        "ffffffffffffffff",         # currentStateTimestamp -1
        "01",                       # members: empty compact array
        "00",                       # no tagged fields
    )
    check(GROUP_KEY, value,
          '{"key":{"type":2,"data":{"group":"g1"}},"value":{"version":4,"data":{'
          '"protocolType":"consumer","generation":2,"protocol":null,"leader":null,'
          '"currentStateTimestamp":-1,"members":[]}}}')


def test_consumer_group_metadata_with_metadata_hash_tag():
    key = h("0003", "0001 67")      # type 3, GroupId "g"
    value = h(
        "0000",                     # version 0 (flexible)
        "00000005",                 # Epoch 5
        "01",                       # 1 tagged field
        "00 08 0123456789abcdef",   # tag 0 MetadataHash, 8 bytes
    )                               # (tag 1 CreationTimeMs absent: default -1, not rendered)
    rec = check(key, value,
                '{"key":{"type":3,"data":{"groupId":"g"}},'
                '"value":{"version":0,"data":{"epoch":5,"metadataHash":81985529216486895}}}')
    assert type(rec) is ConsumerGroupMetadata
    assert rec.value.metadata_hash == 0x0123456789ABCDEF and rec.value.creation_time_ms == -1


def test_consumer_group_member_metadata_null_instance_and_classic_metadata():
    key = h("0005", "0001 67", "0001 6d")  # type 5, GroupId "g", MemberId "m"
    value = h(
        "0000",                     # version 0 (flexible)
        "00",                       # InstanceId null
        "02 72",                    # RackId "r"
        "02 63",                    # ClientId "c"
        "02 68",                    # ClientHost "h"
        "03 03 7431 03 7432",       # SubscribedTopicNames ["t1", "t2"]
        "00",                       # SubscribedTopicRegex null
        "000493e0",                 # RebalanceTimeoutMs 300000
        "08 756e69666f726d",        # ServerAssignor "uniform"
        "01",                       # 1 tagged field
        "00 11",                    # tag 0 ClassicMemberMetadata, 17 bytes:
        "01",                       #   varint 1: not null
        "0000afc8",                 #   SessionTimeoutMs 45000
        "02",                       #   SupportedProtocols: 1 element
        "06 72616e6765",            #     Name "range"
        "03 0001",                  #     Metadata 0x0001
        "00",                       #     (element's tagged fields)
        "00",                       #   (ClassicMemberMetadata's tagged fields)
    )
    rec = check(key, value,
                '{"key":{"type":5,"data":{"groupId":"g","memberId":"m"}},"value":{"version":0,"data":{'
                '"instanceId":null,"rackId":"r","clientId":"c","clientHost":"h",'
                '"subscribedTopicNames":["t1","t2"],"subscribedTopicRegex":null,'
                '"rebalanceTimeoutMs":300000,"serverAssignor":"uniform",'
                '"classicMemberMetadata":{"sessionTimeoutMs":45000,'
                '"supportedProtocols":[{"name":"range","metadata":"AAE="}]}}}}')
    assert type(rec) is ConsumerGroupMemberMetadata
    v = rec.value
    assert v.instance_id is None and v.subscribed_topic_names == ["t1", "t2"]
    assert v.classic_member_metadata.session_timeout_ms == 45000
    (proto,) = v.classic_member_metadata.supported_protocols
    assert (proto.name, proto.metadata) == ("range", b"\x00\x01")


def test_consumer_group_current_member_assignment():
    key = h("0008", "0001 67", "0001 6d")  # type 8, GroupId "g", MemberId "m"
    value = h(
        "0000",                     # version 0 (flexible)
        "0000000a",                 # MemberEpoch 10
        "00000009",                 # PreviousMemberEpoch 9
        "01",                       # State 1
        "02",                       # AssignedPartitions: 1 element
        TOPIC_ID_HEX,               #   TopicId
        "03 00000000 00000001",     #   Partitions [0, 1]
        "01",                       #   1 tagged field
        "00 09",                    #   tag 0 AssignmentEpochs, 9 bytes:
        "03 0000000a 00000009",     #     [10, 9]
        "01",                       # PartitionsPendingRevocation: empty
        "00",                       # no tagged fields
    )
    rec = check(key, value,
                '{"key":{"type":8,"data":{"groupId":"g","memberId":"m"}},"value":{"version":0,"data":{'
                '"memberEpoch":10,"previousMemberEpoch":9,"state":1,"assignedPartitions":[{"topicId":"'
                + TOPIC_ID_STR + '","partitions":[0,1],"assignmentEpochs":[10,9]}],'
                '"partitionsPendingRevocation":[]}}}')
    assert type(rec) is ConsumerGroupCurrentMemberAssignment
    (tp,) = rec.value.assigned_partitions
    assert (tp.topic_id, tp.partitions, tp.assignment_epochs) == (TOPIC_ID, [0, 1], [10, 9])


def test_share_group_metadata():
    key = h("000b", "0001 67")      # type 11, GroupId "g"
    value = h(
        "0000",                     # version 0 (flexible)
        "00000003",                 # Epoch 3
        "000000000000002a",         # MetadataHash 42 (plain field)
        "00",                       # no tagged fields
    )
    rec = check(key, value, '{"key":{"type":11,"data":{"groupId":"g"}},'
                            '"value":{"version":0,"data":{"epoch":3,"metadataHash":42}}}')
    assert type(rec) is ShareGroupMetadata


STREAMS_MEMBER_KEY = h("0013", "0001 67", "0001 6d")  # type 19, GroupId "g", MemberId "m"


def test_streams_group_member_metadata_with_user_endpoint():
    value = h(
        "0000",                     # version 0 (flexible)
        "02 69",                    # InstanceId "i"
        "00",                       # RackId null
        "02 63",                    # ClientId "c"
        "02 68",                    # ClientHost "h"
        "000003e8",                 # RebalanceTimeoutMs 1000
        "00000002",                 # TopologyEpoch 2
        "02 70",                    # ProcessId "p"
        "01",                       # UserEndpoint: int8 marker 1 (present)
        "0a 6c6f63616c686f7374",    #   Host "localhost"
        "ffff",                     #   Port 65535 (uint16)
        "00",                       #   (Endpoint's tagged fields)
        "02",                       # ClientTags: 1 element
        "03 617a",                  #   Key "az"
        "02 31",                    #   Value "1"
        "00",                       #   (element's tagged fields)
        "00",                       # no tagged fields
    )
    rec = check(STREAMS_MEMBER_KEY, value,
                '{"key":{"type":19,"data":{"groupId":"g","memberId":"m"}},"value":{"version":0,"data":{'
                '"instanceId":"i","rackId":null,"clientId":"c","clientHost":"h","rebalanceTimeoutMs":1000,'
                '"topologyEpoch":2,"processId":"p","userEndpoint":{"host":"localhost","port":65535},'
                '"clientTags":[{"key":"az","value":"1"}]}}}')
    assert type(rec) is StreamsGroupMemberMetadata
    assert rec.value.user_endpoint.port == 65535


def test_streams_group_member_metadata_null_user_endpoint():
    value = h("0000", "00", "00", "01", "01", "ffffffff", "00000000", "01",
              "ff",                 # UserEndpoint: int8 marker -1 (null)
              "01", "00")
    rec = check(STREAMS_MEMBER_KEY, value,
                '{"key":{"type":19,"data":{"groupId":"g","memberId":"m"}},"value":{"version":0,"data":{'
                '"instanceId":null,"rackId":null,"clientId":"","clientHost":"","rebalanceTimeoutMs":-1,'
                '"topologyEpoch":0,"processId":"","userEndpoint":null,"clientTags":[]}}}')
    assert rec.value.user_endpoint is None


def test_streams_group_topology_nested():
    key = h("0017", "0001 67")      # type 23, GroupId "g"
    value = h(
        "0000",                     # version 0 (flexible)
        "00000001",                 # Epoch 1
        "02",                       # Subtopologies: 1 element
        "02 30",                    #   SubtopologyId "0"
        "02 03 696e",               #   SourceTopics ["in"]
        "01",                       #   SourceTopicRegex []
        "02",                       #   StateChangelogTopics: 1 TopicInfo
        "03 636c",                  #     Name "cl"
        "00000000",                 #     Partitions 0
        "0003",                     #     ReplicationFactor 3 (int16)
        "02",                       #     TopicConfigs: 1 element
        "02 6b",                    #       key "k"
        "02 76",                    #       value "v"
        "00",                       #       (TopicConfig's tagged fields)
        "00",                       #     (TopicInfo's tagged fields)
        "01",                       #   RepartitionSinkTopics []
        "01",                       #   RepartitionSourceTopics []
        "02",                       #   CopartitionGroups: 1 element
        "02 0000",                  #     SourceTopics [0] (int16)
        "01",                       #     SourceTopicRegex []
        "01",                       #     RepartitionSourceTopics []
        "00",                       #     (CopartitionGroup's tagged fields)
        "00",                       #   (Subtopology's tagged fields)
        "00",                       # no tagged fields
    )
    rec = check(key, value,
                '{"key":{"type":23,"data":{"groupId":"g"}},"value":{"version":0,"data":{"epoch":1,'
                '"subtopologies":[{"subtopologyId":"0","sourceTopics":["in"],"sourceTopicRegex":[],'
                '"stateChangelogTopics":[{"name":"cl","partitions":0,"replicationFactor":3,'
                '"topicConfigs":[{"key":"k","value":"v"}]}],"repartitionSinkTopics":[],'
                '"repartitionSourceTopics":[],"copartitionGroups":[{"sourceTopics":[0],'
                '"sourceTopicRegex":[],"repartitionSourceTopics":[]}]}]}}}')
    assert type(rec) is StreamsGroupTopology
    (sub,) = rec.value.subtopologies
    assert sub.state_changelog_topics[0].topic_configs[0].value == "v"
    assert type(sub) is StreamsGroupTopology.Value.Subtopology


SHARE_KEY_FIELDS = ("0001 67", TOPIC_ID_HEX, "00000005")  # GroupId "g", TopicId, Partition 5
SHARE_KEY_JSON = '"data":{"groupId":"g","topicId":"' + TOPIC_ID_STR + '","partition":5}}'


def test_share_snapshot():
    key = h("0000", *SHARE_KEY_FIELDS)  # __share_group_state type 0
    value = h(
        "0000",                     # version 0 (flexible)
        "00000001",                 # SnapshotEpoch 1
        "00000002",                 # StateEpoch 2
        "00000003",                 # LeaderEpoch 3
        "0000000000000064",         # StartOffset 100
        "00000000000003e8",         # CreateTimestamp 1000
        "00000000000007d0",         # WriteTimestamp 2000
        "02",                       # StateBatches: 1 element
        "0000000000000064",         #   FirstOffset 100
        "000000000000006d",         #   LastOffset 109
        "02",                       #   DeliveryState 2 (int8)
        "0001",                     #   DeliveryCount 1 (int16)
        "00",                       #   (StateBatch's tagged fields)
        "01",                       # 1 tagged field
        "00 04 0000000a",           # tag 0 DeliveryCompleteCount 10
    )
    # the tagged field is rendered at its schema position (between startOffset and createTimestamp)
    rec = check(key, value,
                '{"key":{"type":0,' + SHARE_KEY_JSON + ',"value":{"version":0,"data":{"snapshotEpoch":1,'
                '"stateEpoch":2,"leaderEpoch":3,"startOffset":100,"deliveryCompleteCount":10,'
                '"createTimestamp":1000,"writeTimestamp":2000,"stateBatches":[{"firstOffset":100,'
                '"lastOffset":109,"deliveryState":2,"deliveryCount":1}]}}}',
                topic="__share_group_state")
    assert type(rec) is ShareSnapshot
    assert rec.key.topic_id == TOPIC_ID and rec.value.delivery_complete_count == 10


def test_share_update():
    key = h("0001", *SHARE_KEY_FIELDS)  # __share_group_state type 1
    value = h(
        "0000",                     # version 0 (flexible)
        "00000001",                 # SnapshotEpoch 1
        "00000003",                 # LeaderEpoch 3
        "ffffffffffffffff",         # StartOffset -1 (unchanged)
        "01",                       # StateBatches []
        "00",                       # no tagged fields (DeliveryCompleteCount -1, not rendered)
    )
    rec = check(key, value,
                '{"key":{"type":1,' + SHARE_KEY_JSON + ',"value":{"version":0,"data":{"snapshotEpoch":1,'
                '"leaderEpoch":3,"startOffset":-1,"stateBatches":[]}}}',
                topic="__share_group_state")
    assert type(rec) is ShareUpdate and rec.value.delivery_complete_count == -1


def test_tombstones_of_each_key_shape():
    cases = [
        (OFFSET_COMMIT_KEY, OFFSET_COMMIT_KEY_JSON, "__consumer_offsets", OffsetCommit),
        (GROUP_KEY, '{"type":2,"data":{"group":"g1"}}', "__consumer_offsets", GroupMetadata),
        (h("0003", "0001 67"), '{"type":3,"data":{"groupId":"g"}}', "__consumer_offsets",
         ConsumerGroupMetadata),
        (STREAMS_MEMBER_KEY, '{"type":19,"data":{"groupId":"g","memberId":"m"}}', "__consumer_offsets",
         StreamsGroupMemberMetadata),
        (h("0010", "0001 67", "0003 742e2a"),  # type 16, GroupId "g", RegularExpression "t.*"
         '{"type":16,"data":{"groupId":"g","regularExpression":"t.*"}}', "__consumer_offsets", None),
        (h("0000", *SHARE_KEY_FIELDS), '{"type":0,' + SHARE_KEY_JSON, "__share_group_state", ShareSnapshot),
    ]
    for key, key_json, topic, cls in cases:
        rec = check(key, None, '{"key":' + key_json + ',"value":null}', topic=topic)
        assert rec.is_tombstone and rec.value is None and rec.version is None
        if cls is not None:
            assert type(rec) is cls


def test_unknown_tagged_fields_are_kept_and_not_rendered():
    key = h("0006", "0001 67")      # type 6, GroupId "g"
    value = h(
        "0000",                     # version 0 (flexible)
        "00000004",                 # AssignmentEpoch 4
        "02",                       # 2 tagged fields
        "00 08 0000018bcfe56800",   # tag 0 AssignmentTimestamp 1700000000000
        "07 03 aabbcc",             # tag 7: unknown to kgroup, 3 bytes
    )
    rec = check(key, value, '{"key":{"type":6,"data":{"groupId":"g"}},'
                            '"value":{"version":0,"data":{"assignmentEpoch":4,'
                            '"assignmentTimestamp":1700000000000}}}')
    assert type(rec) is ConsumerGroupTargetAssignmentMetadata
    assert dict(rec.value.unknown_tagged_fields) == {7: b"\xaa\xbb\xcc"}


def test_unknown_tagged_field_in_a_nested_struct():
    key = h("0007", "0001 67", "0001 6d")  # type 7, GroupId "g", MemberId "m"
    value = h(
        "0000",                     # version 0 (flexible)
        "02",                       # TopicPartitions: 1 element
        TOPIC_ID_HEX,               #   TopicId
        "02 00000007",              #   Partitions [7]
        "01 2a 01 ff",              #   1 tagged field: tag 42, 1 byte 0xff (unknown)
        "01 00 00",                 # 1 tagged field: tag 0, 0 bytes (unknown at top level)
    )
    rec = check(key, value, '{"key":{"type":7,"data":{"groupId":"g","memberId":"m"}},"value":{"version":0,'
                            '"data":{"topicPartitions":[{"topicId":"' + TOPIC_ID_STR + '","partitions":[7]}]}}}')
    assert type(rec) is ConsumerGroupTargetAssignmentMember
    assert dict(rec.value.topic_partitions[0].unknown_tagged_fields) == {42: b"\xff"}
    assert dict(rec.value.unknown_tagged_fields) == {0: b""}
