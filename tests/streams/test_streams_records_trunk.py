"""The Streams records' fields Kafka trunk (2026) added as tagged fields, from hand-written bytes:
a record without them (what older coordinators and kgroup before them wrote) decodes to the
defaults and re-encodes byte for byte; with them, each sits in its tag.

- StreamsGroupCurrentMemberAssignment: `AssignmentEpochs` (tag 0 of `TaskIds`), the assignment
  epoch of each assigned active task; absent, the member epoch stands in;
- StreamsGroupTargetAssignmentMetadata: `AssignmentTimestamp` (tag 0, KIP-1263);
- StreamsGroupMetadata: KIP-1331's `StoredDescriptionTopologyEpoch` / `FailedDescriptionTopologyEpoch`
  (tags 2 and 3, default -1), after 4.2's `LastAssignmentConfigs` (tag 1).
"""
from __future__ import annotations

import pytest

from kgroup import Coordinator
from kgroup.groups.modern import ReplayError
from kgroup.groups.streams import group as G
from kgroup.protocol import request
from kgroup.records import decode_record

from tests.kafka_parity.streams_kafka import kafka_member, streams_group_records


def h(*fields: str) -> bytes:
    return bytes.fromhex("".join(fields).replace(" ", ""))


CURRENT_KEY = h("0016", "0001 67", "0001 6d")   # type 22, GroupId "g", MemberId "m"
TARGET_EPOCH_KEY = h("0014", "0001 67")         # type 20, GroupId "g"
METADATA_KEY = h("0011", "0001 67")             # type 17, GroupId "g"


def current_value(active_tags: str) -> bytes:
    return h("0000",                    # version 0 (flexible)
             "0000000a", "00000009",    # MemberEpoch 10, PreviousMemberEpoch 9
             "01",                      # State 1: STABLE as a Streams group writes it
             "02",                      # ActiveTasks: 1 element
             "03 7331",                 #   SubtopologyId "s1" (compact: length + 1)
             "03 00000000 00000001",    #   Partitions [0, 1]
             active_tags,               #   the element's tagged fields
             "01 01 01 01 01",          # Standby, Warmup and the three pending lists: empty
             "00")                      # no tagged fields


def test_a_current_assignment_without_epochs_decodes_at_the_member_epoch_and_round_trips():
    value = current_value("00")
    rec = decode_record(CURRENT_KEY, value)
    assert rec.value.active_tasks[0].assignment_epochs is None
    assert rec.encode() == (CURRENT_KEY, value)
    m = Coordinator.load([rec]).groups["g"].members["m"]
    assert m.assigned_active_epochs() == {("s1", 0): 10, ("s1", 1): 10}


def test_a_current_assignment_with_epochs_keeps_them_in_tag_0():
    value = current_value("01 00 09 03 00000007 0000000a")   # tag 0, 9 bytes: [7, 10]
    rec = decode_record(CURRENT_KEY, value)
    assert rec.value.active_tasks[0].assignment_epochs == [7, 10]
    assert rec.encode() == (CURRENT_KEY, value)
    m = Coordinator.load([rec]).groups["g"].members["m"]
    assert m.assigned_active_epochs() == {("s1", 0): 7, ("s1", 1): 10}
    # kgroup writes the same bytes for that member
    assert G.current_assignment_record("g", m).encode() == (CURRENT_KEY, value)


def test_epochs_that_do_not_match_the_partitions_are_refused():
    value = current_value("01 00 05 02 00000007")            # one epoch for two partitions
    with pytest.raises(ReplayError, match="does not match the number of partitions"):
        Coordinator.load([decode_record(CURRENT_KEY, value)])


@pytest.mark.parametrize("timestamp, tags", [(0, "00"), (12345, "01 00 08 0000000000003039")])
def test_the_target_assignment_metadata_timestamp_is_tag_0(timestamp, tags):
    value = h("0000", "0000000b", tags)          # AssignmentEpoch 11
    rec = decode_record(TARGET_EPOCH_KEY, value)
    assert (rec.value.assignment_epoch, rec.value.assignment_timestamp) == (11, timestamp)
    assert G.target_epoch_record("g", 11, timestamp).encode() == (TARGET_EPOCH_KEY, value)
    assert Coordinator.load([rec]).groups["g"].assignment_timestamp == timestamp


@pytest.mark.parametrize("stored, failed, tags", [
    (-1, -1, ""),
    (7, -1, "02 04 00000007"),
    (-2, 5, "02 04 fffffffe 03 04 00000005"),
])
def test_the_description_epochs_are_tags_2_and_3(stored, failed, tags):
    count = "%02x" % (1 + len(tags.split()) // 3)
    value = h("0000", "00000003", "0000000000000000",   # Epoch 3, MetadataHash 0
              count, "01 01 01",                        # LastAssignmentConfigs (tag 1, 1 byte): empty
              tags)                                     # ValidatedTopologyEpoch -1 (default) is not written
    rec = decode_record(METADATA_KEY, value)
    assert (rec.value.stored_description_topology_epoch, rec.value.failed_description_topology_epoch) == \
        (stored, failed)
    assert G.group_epoch_record("g", 3, 0, -1, {}, stored, failed).encode() == (METADATA_KEY, value)
    # kgroup wrote them after Kafka 4.1's untagged AssignmentConfigs for a while: still read, kept as written
    old = h("0000", "00000003", "0000000000000000", "01", "%02x" % (len(tags.split()) // 3), tags)
    rec = decode_record(METADATA_KEY, old)
    assert (rec.value.stored_description_topology_epoch, rec.value.failed_description_topology_epoch,
            rec.value.assignment_configs, rec.encode()) == (stored, failed, [], (METADATA_KEY, old))


def test_a_metadata_record_kgroup_writes_keeps_the_groups_description_epochs():
    """Kafka reads them from the group when it bumps or fences, so a routine write preserves them."""
    m = kafka_member("m", member_epoch=10, previous_member_epoch=9)
    records = streams_group_records("g", 10, members=[m])
    records[-3] = G.group_epoch_record("g", 10, 0, -1, {}, 4, 3)   # the group metadata record
    c = Coordinator.load(records)
    c.handle(request("StreamsGroupHeartbeat", 0, group_id="g", member_id="m", member_epoch=-1))
    (metadata,) = [e.record for e in list(c.log)[len(records):] if type(e.record).__name__ == "StreamsGroupMetadata"]
    assert (metadata.value.epoch, metadata.value.stored_description_topology_epoch,
            metadata.value.failed_description_topology_epoch) == (11, 4, 3)


# Kafka 4.4.0 (running broker, streams.MemberState): STABLE=1, UNREVOKED_TASKS=2, UNRELEASED_TASKS=3,
# not the consumer group's 0/1/2; a byte Streams never writes reads as UNKNOWN.
@pytest.mark.parametrize("byte, state", [("01", "STABLE"), ("02", "UNREVOKED_PARTITIONS"),
                                         ("03", "UNRELEASED_PARTITIONS"), ("00", "UNKNOWN")])
def test_streams_member_state_bytes_are_streams_own(byte, state):
    value = current_value("01 00 09 03 00000007 0000000a")
    value = value[:10] + bytes.fromhex(byte) + value[11:]
    m = Coordinator.load([decode_record(CURRENT_KEY, value)]).groups["g"].members["m"]
    assert m.state.name == state
    if state != "UNKNOWN":
        assert G.current_assignment_record("g", m).encode() == (CURRENT_KEY, value)


def test_tasks_pending_revocation_keep_their_assignment_epochs_in_the_record():
    # Kafka 4.4.0 (seen by the oracle with real Kafka Streams): a revoking member's record lists
    # the tasks it must give up with the epochs they were assigned in, as it does its kept tasks
    from tests.streams_testing import shb
    c = Coordinator()
    c.cluster.create_topic("orders", 4)
    epoch = shb(c, "a", 0).member_epoch    # a owns 0..3, assigned in this epoch
    shb(c, "b", 0)                         # b joins: a must give up two tasks
    before = c.position
    shb(c, "a", epoch, active={"0": [0, 1, 2, 3]}, standby={}, warmup={})
    records = [c.log.entry_at(i).record for i in range(before, c.position)]
    current = [r for r in records if type(r).__name__ == "StreamsGroupCurrentMemberAssignment"]
    assert current, "a's revocation wrote no current-assignment record"
    v = current[-1].value
    assert [(t.partitions, t.assignment_epochs) for t in v.active_tasks] == [([0, 1], [epoch, epoch])]
    assert [(t.partitions, t.assignment_epochs) for t in v.active_tasks_pending_revocation] == \
        [([2, 3], [epoch, epoch])]
    # and a reload keeps them
    g = Coordinator.load([c.log.entry_at(i).record for i in range(c.position)]).groups["app"]
    assert g.members["a"].active_epoch_of(("0", 2)) == epoch
