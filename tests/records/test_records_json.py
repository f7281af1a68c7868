"""to_json(): Kafka's console-formatter shape, and the JsonDoc type."""
from __future__ import annotations

import json
import uuid

import pytest

from kgroup.records import (ConsumerGroupMetadata, ConsumerGroupMetadataKey, ConsumerGroupMetadataValue,
                            GroupMetadata, GroupMetadataKey, GroupMetadataValue, JsonDoc, OffsetCommit,
                            OffsetCommitKey, OffsetCommitValue, ShareUpdate, ShareUpdateKey,
                            ShareUpdateValue, ZERO_UUID, kafka_str_to_uuid, uuid_to_kafka_str)

OC_KEY = OffsetCommitKey(group="g", topic="t", partition=0)


def test_uuid_helpers_match_kafka_uuid_to_string():
    u = uuid.UUID("30a5f1d5-f224-432d-89f6-35c784af26d7")
    assert uuid_to_kafka_str(u) == "MKXx1fIkQy2J9jXHhK8m1w"  # Kafka's OffsetMessageFormatterTest
    assert kafka_str_to_uuid("MKXx1fIkQy2J9jXHhK8m1w") == u
    assert uuid_to_kafka_str(ZERO_UUID) == "AAAAAAAAAAAAAAAAAAAAAA"
    # base64url alphabet: '-' and '_' instead of '+' and '/'
    assert uuid_to_kafka_str(uuid.UUID(int=(1 << 128) - 1)) == "_____________________w"
    for bad in ("", "MKXx1fIkQy2J9jXHhK8m1", "MKXx1fIkQy2J9jXHhK8m1w==", "MKXx1fIkQy2J9jXHhK8m1+", 42):
        with pytest.raises(ValueError):
            kafka_str_to_uuid(bad)


def test_uuid_in_json():
    u = uuid.UUID("30a5f1d5-f224-432d-89f6-35c784af26d7")
    rec = ShareUpdate(ShareUpdateKey(group_id="g", topic_id=u, partition=1), ShareUpdateValue())
    assert rec.to_json()["key"]["data"]["topicId"] == "MKXx1fIkQy2J9jXHhK8m1w"
    rec = OffsetCommit(OC_KEY, OffsetCommitValue(topic_id=u), 4)
    assert rec.to_json()["value"]["data"]["topicId"] == "MKXx1fIkQy2J9jXHhK8m1w"


def test_bytes_are_standard_base64_with_padding():
    member = GroupMetadataValue.MemberMetadata(member_id="m", subscription=b"\xfb\xff", assignment=b"\x00")
    rec = GroupMetadata(GroupMetadataKey(group="g"), GroupMetadataValue(members=[member]), 0)
    data = rec.to_json()["value"]["data"]["members"][0]
    assert data["subscription"] == "+/8="
    assert data["assignment"] == "AA=="


def test_tagged_fields_at_their_default_are_omitted():
    key = ConsumerGroupMetadataKey(group_id="g")
    doc = ConsumerGroupMetadata(key, ConsumerGroupMetadataValue(epoch=1, metadata_hash=0)).to_json()
    assert doc["value"]["data"] == {"epoch": 1}
    doc = ConsumerGroupMetadata(key, ConsumerGroupMetadataValue(epoch=1, creation_time_ms=0)).to_json()
    # CreationTimeMs defaults to -1, so 0 is rendered; MetadataHash defaults to 0, so it is not
    assert doc["value"]["data"] == {"epoch": 1, "creationTimeMs": 0}
    assert str(doc).endswith('"data":{"epoch":1,"creationTimeMs":0}}}')


def test_fields_absent_from_the_version_are_omitted():
    value = OffsetCommitValue(offset=1, leader_epoch=7, metadata="", commit_timestamp=2, expire_timestamp=9)
    rendered = {v: list(OffsetCommit(OC_KEY, value, v).to_json()["value"]["data"]) for v in range(5)}
    assert rendered == {
        0: ["offset", "metadata", "commitTimestamp"],
        1: ["offset", "metadata", "commitTimestamp", "expireTimestamp"],
        2: ["offset", "metadata", "commitTimestamp"],
        3: ["offset", "leaderEpoch", "metadata", "commitTimestamp"],
        4: ["offset", "leaderEpoch", "metadata", "commitTimestamp"],
    }
    member = GroupMetadataValue.MemberMetadata(member_id="m", group_instance_id="i", rebalance_timeout=5)
    value = GroupMetadataValue(members=[member], current_state_timestamp=3)
    v0 = GroupMetadata(GroupMetadataKey(group="g"), value, 0).to_json()["value"]["data"]
    v3 = GroupMetadata(GroupMetadataKey(group="g"), value, 3).to_json()["value"]["data"]
    assert "currentStateTimestamp" not in v0 and v3["currentStateTimestamp"] == 3
    assert list(v0["members"][0]) == ["memberId", "clientId", "clientHost", "sessionTimeout",
                                      "subscription", "assignment"]
    assert v3["members"][0]["groupInstanceId"] == "i" and v3["members"][0]["rebalanceTimeout"] == 5


def test_tombstone_renders_value_null():
    doc = OffsetCommit.tombstone(OC_KEY).to_json()
    assert doc == '{"key":{"type":1,"data":{"group":"g","topic":"t","partition":0}},"value":null}'
    assert doc["value"] is None


def test_type_and_version_are_numbers():
    doc = OffsetCommit(OC_KEY, OffsetCommitValue(), 3).to_json()
    assert doc.startswith('{"key":{"type":1,') and '"value":{"version":3,' in doc


def test_json_doc_is_text_and_mapping():
    rec = OffsetCommit(OC_KEY, OffsetCommitValue(offset=5, metadata="é"), 3)
    doc = rec.to_json()
    assert isinstance(doc, str) and isinstance(doc, JsonDoc)
    assert doc["key"]["type"] == 1 and doc.get("value")["version"] == 3 and doc.get("nope") is None
    assert list(doc.keys()) == ["key", "value"]
    assert '"group":"g"' in doc and len(doc) == len(str(doc))  # otherwise a plain str
    assert dict(doc.items()) == doc.data == rec.json_obj() == json.loads(doc)
    assert doc == rec.json_obj()          # compares the parsed object
    assert doc == str(doc)                # compares text
    assert doc != str(doc).replace(":", ": ")
    assert hash(doc) == hash(str(doc))
    assert '"metadata":"é"' in doc        # raw UTF-8, like Jackson
    assert JsonDoc('{"a": [1, 2]}') == {"a": [1, 2]}  # parsed when built from text
    assert json.loads(json.dumps({"d": doc}))["d"] == str(doc)


def test_control_characters_are_escaped_like_jackson():
    rec = OffsetCommit(OC_KEY, OffsetCommitValue(metadata="a\x1f\n\\u001f\"b"), 3)
    text = str(rec.to_json())
    assert '"metadata":"a\\u001F\\n\\\\u001f\\"b"' in text  # upper-case hex; escaped text untouched
    assert rec.to_json()["value"]["data"]["metadata"] == "a\x1f\n\\u001f\"b"


def test_json_of_every_share_update_field_order():
    value = ShareUpdateValue(snapshot_epoch=1, leader_epoch=2, start_offset=3, delivery_complete_count=4,
                             state_batches=[ShareUpdateValue.StateBatch(first_offset=1, last_offset=2,
                                                                        delivery_state=0, delivery_count=1)])
    doc = ShareUpdate(ShareUpdateKey(group_id="g"), value).to_json()
    assert list(doc["value"]["data"]) == ["snapshotEpoch", "leaderEpoch", "startOffset",
                                          "deliveryCompleteCount", "stateBatches"]


def test_matches_kafka_offset_message_formatter_test():
    """Expected texts of apache/kafka's OffsetMessageFormatterTest (whitespace removed)."""
    key = OffsetCommitKey(group="group-id", topic="foo", partition=1)
    value = OffsetCommitValue(offset=100, leader_epoch=10, metadata="metadata", commit_timestamp=1234,
                              expire_timestamp=5678, topic_id=kafka_str_to_uuid("MKXx1fIkQy2J9jXHhK8m1w"))
    head = '{"key":{"type":1,"data":{"group":"group-id","topic":"foo","partition":1}},'
    expected = {
        0: '"value":{"version":0,"data":{"offset":100,"metadata":"metadata","commitTimestamp":1234}}}',
        1: '"value":{"version":1,"data":{"offset":100,"metadata":"metadata","commitTimestamp":1234,'
           '"expireTimestamp":5678}}}',
        2: '"value":{"version":2,"data":{"offset":100,"metadata":"metadata","commitTimestamp":1234}}}',
        3: '"value":{"version":3,"data":{"offset":100,"leaderEpoch":10,"metadata":"metadata",'
           '"commitTimestamp":1234}}}',
        4: '"value":{"version":4,"data":{"offset":100,"leaderEpoch":10,"metadata":"metadata",'
           '"commitTimestamp":1234,"topicId":"MKXx1fIkQy2J9jXHhK8m1w"}}}',
    }
    for version, tail in expected.items():
        assert OffsetCommit(key, value, version).to_json() == head + tail
    assert OffsetCommit.tombstone(key).to_json() == head + '"value":null}'
