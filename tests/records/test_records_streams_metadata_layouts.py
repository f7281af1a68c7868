"""StreamsGroupMetadataValue's two layouts of version 0, from hand-written bytes.

Kafka 4.2+ (KAFKA-19765) keeps the assignment configs the last target assignment was computed with
in `LastAssignmentConfigs`, a tagged (tag 1), nullable array, null by default; Kafka 4.1 had them in
an untagged `AssignmentConfigs` array, and kgroup wrote that layout (with KIP-1331's tags 2 and 3)
until it followed 4.2. The version number does not tell them apart: kgroup reads 4.2's layout and,
when those bytes do not parse exactly, 4.1's; either re-encodes byte for byte and prints the field
names Kafka's formatter of that layout prints. kgroup writes 4.2's.
"""
from __future__ import annotations

import pytest

from kgroup import Coordinator
from kgroup.groups.streams import group as G
from kgroup.records import (RecordDecodeError, StreamsGroupMetadata, StreamsGroupMetadataKey,
                            StreamsGroupMetadataValue, StreamsGroupMetadataValue41, decode_record)


def h(*fields: str) -> bytes:
    return bytes.fromhex("".join(fields).replace(" ", ""))


KEY = h("0011", "0001 67")          # type 17, GroupId "g"
KEY_JSON = '{"type":17,"data":{"groupId":"g"}}'
HEAD = h("0000",                    # version 0
         "00000005",                # Epoch 5
         "000000000000002a")        # MetadataHash 42
NSR_1 = ("15 6e756d2e7374616e6462792e7265706c69636173"   # Key "num.standby.replicas"
         "02 31"                                         # Value "1"
         "00")                                           # no tagged fields


def record(value: bytes):
    rec = decode_record(KEY, value)
    assert rec.encode() == (KEY, value)
    return rec


def test_kafka_4_2_layout_last_assignment_configs_in_tag_1():
    value = HEAD + h("02",                     # two tagged fields
                     "00 04 00000000",         # tag 0 ValidatedTopologyEpoch 0
                     "01 19 02", NSR_1)        # tag 1, 25 bytes: LastAssignmentConfigs, one entry
    rec = record(value)
    assert type(rec.value) is StreamsGroupMetadataValue
    assert (rec.value.epoch, rec.value.metadata_hash, rec.value.validated_topology_epoch) == (5, 42, 0)
    assert [(c.key, c.value) for c in rec.value.last_assignment_configs] == [("num.standby.replicas", "1")]
    assert rec.assignment_configs() == {"num.standby.replicas": "1"}
    assert rec.to_json() == ('{"key":' + KEY_JSON + ',"value":{"version":0,"data":{"epoch":5,"metadataHash":42,'
                             '"validatedTopologyEpoch":0,"lastAssignmentConfigs":'
                             '[{"key":"num.standby.replicas","value":"1"}]}}}')
    # what kgroup writes for that group: the same bytes
    assert G.group_epoch_record("g", 5, 42, 0, {"num.standby.replicas": "1"}).encode() == (KEY, value)


def test_no_last_assignment_configs_is_null_and_empty_ones_are_written():
    value = HEAD + h("00")
    rec = record(value)
    assert rec.value.last_assignment_configs is None and rec.assignment_configs() is None
    assert rec.to_json() == '{"key":' + KEY_JSON + ',"value":{"version":0,"data":{"epoch":5,"metadataHash":42}}}'
    assert G.group_epoch_record("g", 5, 42, -1, None).encode() == (KEY, value)
    # Kafka's newStreamsGroupMetadataRecord turns an empty map into an empty (not null) list
    empty = HEAD + h("01", "01 01 01")
    assert record(empty).assignment_configs() == {}
    assert G.group_epoch_record("g", 5, 42, -1, {}).encode() == (KEY, empty)


@pytest.mark.parametrize("configs, tags", [
    # Kafka 4.1: num.standby.replicas alone, ValidatedTopologyEpoch 0
    ("02" + NSR_1, "01 00 04 00000000"),
    # kgroup before it followed 4.2: the three KIP-1071 configs, sorted
    ("04"
     "18 61636365707461626c652e7265636f766572792e6c6167 07 313030303030 00" + NSR_1 +
     "14 6e756d2e7761726d75702e7265706c69636173 02 32 00", "00"),
    # kgroup with KIP-1331's description epochs (tags 2 and 3) after the untagged array
    ("01", "02 02 04 00000007 03 04 00000005"),
])
def test_kafka_4_1_layout_untagged_assignment_configs_still_decodes(configs, tags):
    value = HEAD + h(configs, tags)
    rec = record(value)
    assert type(rec.value) is StreamsGroupMetadataValue41
    assert (rec.value.epoch, rec.value.metadata_hash) == (5, 42)
    assert rec.assignment_configs() == {c.key: c.value for c in rec.value.assignment_configs}
    data = rec.json_obj()["value"]["data"]
    assert "assignmentConfigs" in data and "lastAssignmentConfigs" not in data
    # replay reads either layout
    group = Coordinator.load([rec]).groups["g"]
    assert group.assignment_configs == rec.assignment_configs()


def test_kgroups_older_streams_app_sample_record_round_trips():
    """A record of data/samples/streams-app as kgroup wrote it in the 4.1 layout."""
    key = h("0011", "000b 636c69636b73747265616d")                 # "clickstream"
    value = h("0000", "00000004", "c1e020bdd1e17aec",
              "02", NSR_1,                                      # [num.standby.replicas = "1"]
              "01 00 04 00000000")                              # ValidatedTopologyEpoch 0
    rec = decode_record(key, value)
    assert type(rec.value) is StreamsGroupMetadataValue41 and rec.encode() == (key, value)
    assert rec.to_json() == ('{"key":{"type":17,"data":{"groupId":"clickstream"}},"value":{"version":0,"data":'
                             '{"epoch":4,"metadataHash":-4476542029964150036,"validatedTopologyEpoch":0,'
                             '"assignmentConfigs":[{"key":"num.standby.replicas","value":"1"}]}}}')


def test_bytes_neither_layout_reads_report_the_current_layouts_failure():
    with pytest.raises(RecordDecodeError, match="StreamsGroupMetadata value v0"):
        decode_record(KEY, HEAD + h("01 01 05 02"))


def test_either_value_class_makes_a_record():
    key = StreamsGroupMetadataKey(group_id="g")
    old = StreamsGroupMetadata(key, StreamsGroupMetadataValue41(epoch=5, metadata_hash=42))
    assert old.encode() == (KEY, HEAD + h("01 00"))
    new = StreamsGroupMetadata(key, StreamsGroupMetadataValue(epoch=5, metadata_hash=42))
    assert new.encode() == (KEY, HEAD + h("00"))
    assert old != new
