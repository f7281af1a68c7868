"""Dumps from brokers newer than kgroup, through every reader.

- KIP-915: a value version above the highest kgroup knows, of a record type whose values are
  flexible, is read with the highest known layout (Kafka's CoordinatorRecordSerde and its
  console formatters do the same): the version as written, the known fields, new tagged fields
  kept as unknown tagged fields.
- A record type kgroup does not know is skipped with a warning and the rest is loaded, as
  Kafka's CoordinatorLoaderImpl does ("It could be a left over from an aborted upgrade"); the
  formatter JSON prints nothing for it.
"""
from __future__ import annotations

import json
import warnings

import pytest

from kgroup import Coordinator
from kgroup.cli import main
from kgroup.dumps import DumpReport, describe_groups, ranges, read_dump, render_dump_log, render_jsonl, replay
from kgroup.log import OffsetsLog, encode_batch, write_segment
from kgroup.records import RECORD_TYPES, SHARE_STATE_RECORD_TYPES
from kgroup.records.records import CONSUMER_OFFSETS

from dumps_fixtures import T0, consumer_group_metadata, kip848_records, oc, raw_record, reference_rows, task_rows

NEW_TAG, NEW_PAYLOAD = 77, b"\x2a"
FLEXIBLE = [cls for table in (RECORD_TYPES, SHARE_STATE_RECORD_TYPES) for cls in table.values()
            if cls.FORWARD_COMPATIBLE]


def at_highest(rec):
    """The record at the highest value version kgroup knows (tombstones as they are)."""
    if rec.value is None:
        return rec
    return type(rec)(rec.key, rec.value, type(rec).HIGHEST_VERSION)


def newer(rec, bump: int = 1):
    """(key, value) bytes as a newer broker writes the record: a version `bump` above the highest
    kgroup knows, with a tagged field kgroup has never heard of (built from the highest known
    version's bytes, only the version prefix changed)."""
    rec = at_highest(rec)
    if rec.value is None:
        return rec.encode()
    value = rec.value.replace(unknown_tagged_fields={NEW_TAG: NEW_PAYLOAD})
    key, data = type(rec)(rec.key, value, rec.version).encode()
    return key, (rec.version + bump).to_bytes(2, "big") + data[2:]


def expected_json(rec, bump: int = 1) -> dict:
    obj = at_highest(rec).json_obj()
    if obj["value"] is not None:
        obj["value"]["version"] += bump
    return obj


def sample(cls):
    """A record of every flexible type: default value, key strings filled in."""
    key = cls.Key(**{f.attr: "g" for f in cls.SCHEMA.key.fields if f.elem == "string"})
    return cls(key, cls.Value(), cls.HIGHEST_VERSION)


def write_log(tmp_path, items_by_topic):
    """Segment dirs for each coordinator topic, one batch per item list, partition 0."""
    for topic, batches in items_by_topic.items():
        log = OffsetsLog(1, topic=topic)
        for i, items in enumerate(batches):
            log.append(0, items, timestamp=T0 + i)
        log.write(tmp_path)
    return tmp_path


@pytest.fixture
def every_type_dir(tmp_path):
    by_topic = {}
    for cls in FLEXIBLE:
        by_topic.setdefault(cls.TOPIC, [[]])[0].append(newer(sample(cls)))
    return write_log(tmp_path / "dump", by_topic)


def test_every_flexible_type_at_a_newer_version_reads_from_segments(every_type_dir):
    report = DumpReport()
    entries = list(read_dump(every_type_dir, report=report))
    assert report.ok and report.records == len(FLEXIBLE) and report.warnings == []
    by_name = {e.record.NAME: e.record for e in entries}
    for cls in FLEXIBLE:
        got = by_name[cls.NAME]
        assert got.version == cls.HIGHEST_VERSION + 1
        assert dict(got.value.unknown_tagged_fields) == {NEW_TAG: NEW_PAYLOAD}
        assert json.loads(render_jsonl(got)) == expected_json(sample(cls))
        assert got.encode() == newer(sample(cls))


def test_the_formatter_json_and_dump_log_text_of_newer_versions_read_back(every_type_dir, tmp_path):
    entries = list(read_dump(every_type_dir))
    console = tmp_path / "console.txt"
    console.write_text("\n".join(render_jsonl(e) for e in entries) + "\n")
    dump_log = tmp_path / "dump-log.txt"
    dump_log.write_text("\n".join(render_dump_log(entries)) + "\n")
    for path, kind in ((console, "console"), (dump_log, "dump-log")):
        report = DumpReport()
        back = list(read_dump(path, report=report))
        assert report.ok and {e.kind for e in back} == {kind}
        # text carries the fields, not the unknown tagged bytes (Kafka's JSON does not print them)
        assert [(e.record.NAME, e.record.version, e.record.key, e.record.value) for e in back] == [
            (e.record.NAME, e.record.version, e.record.key, e.record.value.replace(unknown_tagged_fields={}))
            for e in entries]


def _offsets_dir(tmp_path, with_header: bool):
    """One partition: v3 commits (the columnar fast path's shape) around a v5 one and a newer
    GroupMetadata; `with_header` puts a record header in the run, which sends it record by record."""
    items = [(*oc("g", "t", p, 10 + p).encode(), T0 + p) for p in range(6)]
    items[2] = (*newer(oc("g", "t", 2, 12, version=4)), T0 + 2)
    items[4] = (*newer(consumer_group_metadata("g", 3, ["m-1"]), bump=3), T0 + 4)
    if with_header:
        items[5] = (*items[5][:3], [("h", b"v")])
    path = write_segment(tmp_path / "__consumer_offsets-0", 0, [encode_batch(items, base_offset=0)])
    return path, items


@pytest.mark.parametrize("with_header", [False, True], ids=["columnar-run", "per-record"])
def test_spark_rows_of_newer_versions_are_read_dumps_rows(tmp_path, with_header):
    path, items = _offsets_dir(tmp_path, with_header)
    rows = task_rows(ranges.plan_scan(path))
    assert rows == reference_rows(path)
    assert [r["error"] for r in rows] == [None] * 6
    v5, group = rows[2], rows[4]
    assert v5["record_type"] == "OffsetCommit" and v5["committed_offset"] == 12
    assert json.loads(v5["json"])["value"]["version"] == 5
    assert json.loads(group["json"]) == expected_json(consumer_group_metadata("g", 3, ["m-1"]), bump=3)
    assert [json.loads(r["json"])["value"]["version"] for r in rows] == [3, 3, 5, 3, 7, 3]


def _group_records():
    return [oc("app", "orders", 0, 41), consumer_group_metadata("classic-app", 4, ["m-1", "m-2"]),
            *kip848_records("app"), oc("app", "orders", 1, 42, version=4), oc("classic-app", "orders", 0, 7)]


def test_replay_of_newer_versions_gives_the_groups_of_the_known_versions(tmp_path):
    recs = _group_records()
    old = write_log(tmp_path / "old", {CONSUMER_OFFSETS: [[at_highest(r).encode() for r in recs]]})
    new = write_log(tmp_path / "new", {CONSUMER_OFFSETS: [[newer(r) for r in recs]]})
    kw = dict(num_partitions=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing to warn about: everything is read
        expected = describe_groups(replay(old, **kw))
        c = replay(new, **kw)
    assert describe_groups(c) == expected
    assert {d["group_id"] for d in expected} >= {"app", "classic-app"}
    assert c.replay_stats.skipped == {} and c.replay_stats.records == len(recs)
    assert describe_groups(Coordinator.load(new)) == describe_groups(Coordinator.load(old))


def _with_unknown_type_in_the_middle(tmp_path):
    recs = _group_records()
    unknown = raw_record(99, b"\x00\x03new", b"\x00\x00\x00")  # type 99: a future record type
    items = [r.encode() for r in recs]
    with_unknown = write_log(tmp_path / "with", {CONSUMER_OFFSETS: [items[:3], [unknown], items[3:]]})
    without = write_log(tmp_path / "without", {CONSUMER_OFFSETS: [items[:3], [], items[3:]]})
    return with_unknown, without


def test_an_unknown_record_type_in_the_middle_is_skipped_and_everything_else_replays(tmp_path):
    with_unknown, without = _with_unknown_type_in_the_middle(tmp_path)
    expected = describe_groups(replay(without, num_partitions=1))
    report = DumpReport()
    with pytest.warns(UserWarning, match=r"skipped 1 records of unknown type 99, as Kafka's coordinator loader does"):
        c = replay(with_unknown, num_partitions=1, report=report)
    assert describe_groups(c) == expected
    assert c.replay_stats.unknown_types == {99: 1} and report.unknown_types == {99: 1}
    assert report.ok and len(report.warnings) == 1 and "offset 3" in report.warnings[0].reason
    # the formatter JSON prints nothing for it, as Kafka's does
    entries = list(read_dump(with_unknown))
    assert [render_jsonl(e) for e in entries].count("") == 1
    # Coordinator.load reads the log itself: it ignores the record and counts it (CoordinatorLoaderImpl)
    with pytest.warns(UserWarning, match="unknown record type 99 in __consumer_offsets-0 at offset 3; ignored"):
        loaded = Coordinator.load(with_unknown)
    assert loaded.unknown_record_types == {99: 1}
    assert describe_groups(loaded) == describe_groups(Coordinator.load(without))


def test_cli_says_what_it_skipped_and_exits_0(tmp_path, capsys):
    with_unknown, _ = _with_unknown_type_in_the_middle(tmp_path)
    assert main(["dump", "describe", str(with_unknown), "--partitions", "1"]) == 0
    out, err = capsys.readouterr()
    assert "skipped records of unknown type (as Kafka's coordinator loader does" in out and "type 99 x1" in out
    assert "kgroup: warning:" in err and "unknown record type 99 at offset 3; skipped" in err
    assert main(["dump", "stats", str(with_unknown)]) == 0
    out, err = capsys.readouterr()
    assert "unknown record types (skipped, as Kafka's coordinator loader skips them): 99 (x1)" in out
    assert main(["dump", "decode", str(with_unknown)]) == 0
    out, _ = capsys.readouterr()
    assert len(out.splitlines()) == len(_group_records())
    assert main(["dump", "describe", str(with_unknown), "--partitions", "1", "--json"]) == 0
    out, _ = capsys.readouterr()
    assert json.loads(out)["replay"]["unknown_types"] == {"99": 1}
