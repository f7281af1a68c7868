"""Topic names from a KRaft broker's metadata log (`__cluster_metadata-0`), and replay with it.

Layouts follow Kafka's metadata schemas (TopicRecord.json, PartitionRecord.json,
RemoveTopicRecord.json) framed as AbstractApiMessageSerde writes them: unsigned varints frame
version 1, record type, record version, then the message. A broker loads the newest snapshot and
then the log from the snapshot's end offset (KafkaRaftClient / MetadataLoader).
"""
from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from kgroup import Cluster
from kgroup.cli import main
from kgroup.dumps import DumpError, describe_groups, read_dump, replay
from kgroup.dumps.metadata import (PartitionRecord, TopicRecord, encode_metadata_record,
                                   read_cluster_metadata, read_offset_checkpoint, write_cluster_metadata)
from kgroup.log import encode_batch, write_segment

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "data" / "samples" / "kip848-log-dir"
ORDERS = uuid.UUID("6513270e-269e-0d37-f2a7-4de452e6b438")


def test_a_topic_record_frame_byte_for_byte():
    tid = uuid.UUID(int=0x0102030405060708090A0B0C0D0E0F10)
    frame = encode_metadata_record(2, 0, TopicRecord(name="orders", topic_id=tid))
    assert frame == bytes.fromhex("01" "02" "00"              # frame version 1, TopicRecord, v0
                                  "07" + b"orders".hex() +   # compact string
                                  "0102030405060708090a0b0c0d0e0f10"
                                  "00")                      # no tagged fields
    part = encode_metadata_record(3, 0, PartitionRecord(partition_id=2, topic_id=tid, replicas=[1], isr=[1],
                                                        leader=1, leader_epoch=0, partition_epoch=0))
    assert part[:3] == b"\x01\x03\x00" and part[3:7] == (2).to_bytes(4, "big") and part[7:23] == tid.bytes


def _log_dir(tmp_path, records_by_batch, *, base=0):
    d = tmp_path / "__cluster_metadata-0"
    batches, offset = [], base
    for recs in records_by_batch:
        batches.append(encode_batch([(None, r, 0) for r in recs], base_offset=offset))
        offset += len(recs)
    write_segment(d, base, batches)
    return tmp_path


def _topic(name, tid, partitions, version=0):
    return [encode_metadata_record(2, 0, TopicRecord(name=name, topic_id=tid))] + [
        encode_metadata_record(3, version, PartitionRecord(partition_id=p, topic_id=tid)) for p in range(partitions)]


def test_the_log_alone_every_partition_record_version_and_a_deletion(tmp_path):
    a, b = uuid.UUID(int=1), uuid.UUID(int=2)
    removed = b"\x01\x09\x01" + b.bytes + b"\x00"         # RemoveTopicRecord v1 (flexible)
    other = b"\x01\x04\x00" + b"\x00" * 8                 # a record type this reader does not need
    path = _log_dir(tmp_path, [_topic("a", a, 2), _topic("b", b, 1, version=2), [other, removed],
                               [encode_metadata_record(3, 1, PartitionRecord(partition_id=2, topic_id=a))]])
    md = read_cluster_metadata(path)
    assert md.problems == [] and md.snapshot is None
    assert {t.name: t.partition_count for t in md.topics.values()} == {"a": 3}  # CreatePartitions grew it
    assert md.skipped == {"type 4": 1} and md.applied["RemoveTopicRecord"] == 1
    assert md.cluster().topic_id("a") == a


def test_the_newest_snapshot_then_the_log_from_its_end_offset(tmp_path):
    c = Cluster({"early": 2, "late": 4}, seed=3)
    c.set_end_offset("early", 1, 77)
    write_cluster_metadata(c, tmp_path, in_snapshot=["early"])
    d = tmp_path / "__cluster_metadata-0"
    (d / "00000000000000000000-0000000000.checkpoint").write_bytes(b"")  # an older, empty snapshot
    md = read_cluster_metadata(d)
    assert Path(md.snapshot).name.startswith("00000000000000000005-")
    assert md.skipped["SNAPSHOT_HEADER"] == 1 and md.skipped["LEADER_CHANGE"] == 1
    # the snapshot's records are in the log too: applied once, from the snapshot
    assert md.applied == {"TopicRecord": 2, "PartitionRecord": 6}
    cl = md.cluster()
    assert [(t.name, t.topic_id, t.partitions) for t in cl.topics()] == [
        (t.name, t.topic_id, t.partitions) for t in c.topics()]
    assert cl.end_offset("early", 1) == 77


def test_unreadable_parts_are_listed_not_raised(tmp_path):
    a = uuid.UUID(int=1)
    bad = [b"\x00\x02\x00",                                   # frame version 0 (KRaft's 2.8 preview)
           encode_metadata_record(3, 0, PartitionRecord(partition_id=0, topic_id=uuid.UUID(int=9))),
           encode_metadata_record(2, 0, TopicRecord(name="cut", topic_id=uuid.UUID(int=8)))[:-3]]
    path = _log_dir(tmp_path, [_topic("a", a, 1), bad], base=10)
    md = read_cluster_metadata(path)
    assert any("frame version 0" in p for p in md.problems)
    assert any("unknown topic id" in p for p in md.problems)
    assert any("offset 14: unexpected end of data" in p for p in md.problems)
    assert any("log starts at offset 10 and no snapshot" in p for p in md.problems)
    assert md.cluster().partitions("a") == 1
    with pytest.raises(DumpError, match="no __cluster_metadata-0"):
        read_cluster_metadata(ROOT / "data")


def test_offset_checkpoint_file(tmp_path):
    p = tmp_path / "replication-offset-checkpoint"
    p.write_text("0\n2\norders 0 10\nmy-topic 3 7\n")
    assert read_offset_checkpoint(p) == {("orders", 0): 10, ("my-topic", 3): 7}
    p.write_text("0\n3\norders 0 10\n")
    with pytest.raises(DumpError, match="says 3 entries but holds 1"):
        read_offset_checkpoint(p)


# --------------------------------------------------------------------------- replay with it


def test_replaying_a_log_dir_with_its_metadata_log_names_kip848_members_topics():
    c = replay(SAMPLE)
    (g,) = describe_groups(c)
    assert g["group_id"] == "billing-app" and g["type"] == "consumer"
    assigned = {k for m in g["members"] for k in m["assigned"]}
    assert assigned == {"orders", "invoices"}  # names, not topic ids
    assert sorted(p for m in g["members"] for p in m["assigned"].get("orders", [])) == list(range(6))
    assert {t["name"]: t["partitions"] for t in g["topics"]} == {"invoices": 3, "orders": 6}
    assert "unnamed_topic_ids" not in g
    # invoices was created after the snapshot: only the log's segment names it
    md = c.replay_stats.cluster_metadata
    assert md["snapshot"].endswith(".checkpoint") and "invoices" in [t["name"] for t in md["topics"]]
    assert c.replay_stats.num_partitions == 50 and "cluster metadata" in c.replay_stats.num_partitions_reason
    # lag from the high watermarks in the log dir's replication-offset-checkpoint
    rows = {(r["topic"], r["partition"]): r for r in g["offsets"]}
    assert rows[("orders", 5)]["lag"] == 30 and rows[("orders", 5)]["log_end_offset"] == rows[("orders", 5)]["offset"] + 30


def test_without_the_metadata_log_topics_stay_ids_and_the_output_says_how_to_name_them(capsys):
    (g,) = describe_groups(replay(SAMPLE, metadata=False))
    assert str(ORDERS) in g["unnamed_topic_ids"] and "topics" not in g
    assert all("lag" not in r for r in g["offsets"])
    assert main(["dump", "describe", str(SAMPLE / "__consumer_offsets-43")]) == 0
    out = capsys.readouterr().out
    assert "topics are shown by id: the dump holds no cluster metadata" in out and "--metadata" in out
    # pointed at it with the option, the same segment directory is named
    assert main(["dump", "describe", str(SAMPLE / "__consumer_offsets-43"),
                 "--metadata", str(SAMPLE / "__cluster_metadata-0")]) == 0
    out = capsys.readouterr().out
    assert "topics: invoices (3 partitions), orders (6 partitions)" in out and "{'orders': [2, 3, 4, 5]}" in out
    assert "log end offset  lag" in out


def test_the_metadata_log_is_not_read_as_a_coordinator_topic(capsys):
    with pytest.raises(DumpError, match="the KRaft metadata log, not a coordinator topic"):
        list(read_dump(SAMPLE / "__cluster_metadata-0"))
    assert {e.topic for e in read_dump(SAMPLE)} == {"__consumer_offsets"}  # a log dir: only the coordinator's
    assert main(["dump", "describe", str(SAMPLE / "__consumer_offsets-43"), str(SAMPLE / "__cluster_metadata-0"),
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["replay"]["cluster_metadata"]["source"].endswith("__cluster_metadata-0")
    assert main(["dump", "stats", str(SAMPLE)]) == 0
    assert "cluster metadata: 5 topics" in capsys.readouterr().out
