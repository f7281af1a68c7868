"""Records a real Apache Kafka 4.4.0 wrote (data/kafka-4.4.0, made by data/make_kafka_samples.py
with the oracle's real-client scenarios), and what Kafka's own dump tool printed for them: kgroup
reads them byte for byte, prints what Kafka printed, and replays them into the groups the
scenarios left. No JVM needed: the bytes and Kafka's output are committed."""
from __future__ import annotations

from pathlib import Path

import pytest

from kgroup.dumps import DumpReport, read_dump, render_dump_log
from kgroup.dumps.replay import describe_groups, describe_share_partitions, replay
from kgroup.log.partitioner import partition_for, share_state_partition_for
from kgroup.records import decode_record

KAFKA = Path(__file__).resolve().parent.parent / "data" / "kafka-4.4.0"


def entries(topic: str) -> list:
    report = DumpReport()
    out = list(read_dump(KAFKA, topic=topic, report=report))
    assert not report.problems, report.problems
    return out


@pytest.mark.parametrize("topic", ["__consumer_offsets", "__share_group_state"])
def test_every_record_kafka_wrote_decodes_and_encodes_to_the_same_bytes(topic):
    got = entries(topic)
    assert got
    for e in got:
        if e.control is not None:
            continue
        assert e.record is not None, e.error
        assert decode_record(e.key, e.value, topic=topic).encode() == (e.key, e.value), (e.offset, e.record)


@pytest.mark.parametrize("topic, saved", [("__consumer_offsets", "dump-log.txt"),
                                          ("__share_group_state", "share-dump-log.txt")])
def test_kgroup_prints_what_kafkas_dump_tool_printed(topic, saved, monkeypatch):
    monkeypatch.chdir(KAFKA)   # Kafka's tool ran from there: the paths it printed are relative
    files = [f.relative_to(KAFKA) for f in sorted(KAFKA.glob(f"{topic}-*/*.log"),
                                                   key=lambda f: int(f.parent.name.rsplit("-", 1)[1]))]
    ours = "".join(line + "\n" for line in render_dump_log(read_dump([str(f) for f in files], topic=topic)))
    assert ours == (KAFKA / saved).read_text()


def test_every_group_is_on_the_partition_kafka_put_it_on():
    # Kafka's Utils.abs is Math.abs (0 for Integer.MIN_VALUE): half of all group ids hash negative
    seen = {(e.record.key.group if hasattr(e.record.key, "group") else e.record.key.group_id, e.partition)
            for e in entries("__consumer_offsets") if e.record is not None}
    assert len({g for g, _ in seen}) >= 8
    assert all(partition_for(g, 50) == p for g, p in seen), sorted(seen)
    for e in entries("__share_group_state"):
        k = e.record.key
        assert share_state_partition_for(k.group_id, k.topic_id, k.partition, 50) == e.partition


def test_replayed_the_groups_are_as_the_scenarios_left_them():
    c = replay(KAFKA)
    groups = {d["group_id"]: d for d in describe_groups(c)}
    eager = groups["classic-range-classic-eager"]
    assert (eager["type"], eager["state"]) == ("classic", "Empty")
    assert {(o["partition"], o["offset"]) for o in eager["offsets"]} == {(0, 7), (1, 10), (2, 10)}
    kip848 = groups["kip848-kip848-join-leave"]
    assert (kip848["type"], kip848["state"]) == ("consumer", "Empty")
    assert {(o["partition"], o["offset"]) for o in kip848["offsets"]} == {(0, 5), (1, 6), (2, 7), (3, 8)}
    # the static members left no LeaveGroup: their sessions ran out before the broker stopped
    assert groups["static-kip345-static-restart"]["type"] == "classic"
    # the committed transaction's offset counts; the aborted one's (8) never does
    txn = groups["txn-transactional-offsets"]
    assert [(o["partition"], o["offset"]) for o in txn["offsets"]] == [(0, 5)] and not txn["pending_offsets"]
    # converted to a consumer group and back: classic again
    assert groups["upgrade-classic-to-consumer-migration"]["type"] == "classic"
    assert groups["regex-kip848-regex-subscription"]["type"] == "consumer"
    assert "deleted-offsets-delete" not in groups        # DeleteGroups tombstoned it
    (share,) = describe_share_partitions(c, "share-share-explicit-acks")
    # the last write carries the SPSO before offset 2's acknowledgement moved it (kafka profile)
    assert share["start_offset"] == 2
    assert [(b["first_offset"], b["delivery_state"], b["delivery_count"]) for b in share["state_batches"]] == [
        (2, "Acknowledged", 2), (3, "Acknowledged", 1), (4, "Archived", 1), (5, "Acknowledged", 1)]


def test_the_kafka_streams_groups_kafka_wrote_replay():
    """The Kafka Streams 4.4.0 applications' groups (kgroup.oracle.streams_scenarios), as Kafka
    wrote them: Streams records of every type, replayed into Streams groups with their offsets."""
    c = replay(KAFKA)
    groups = {d["group_id"]: d for d in describe_groups(c)}
    three = groups["app-streams-three-instances"]
    assert three["type"] == "streams"
    # 60 records over 6 partitions, all processed and committed
    assert {(o["partition"], o["offset"]) for o in three["offsets"]} == {(p, 10) for p in range(6)}
    # exactly_once_v2: the offsets came through committed transactions, none left pending
    eos = groups["app-streams-exactly-once"]
    assert eos["type"] == "streams" and not eos["pending_offsets"]
    assert {(o["partition"], o["offset"]) for o in eos["offsets"]} == {(p, 10) for p in range(4)}
    # group.protocol classic, streams, classic: a classic group at the end
    assert groups["app-streams-offline-migration"]["type"] == "classic"
    names = {type(e.record).__name__ for e in entries("__consumer_offsets")}
    assert {"StreamsGroupMetadata", "StreamsGroupTopology", "StreamsGroupMemberMetadata",
            "StreamsGroupTargetAssignmentMember", "StreamsGroupTargetAssignmentMetadata",
            "StreamsGroupCurrentMemberAssignment"} <= names
