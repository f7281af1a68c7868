"""Segments -> Kafka's text forms (render_dump_log / render_jsonl) -> read back -> the same records."""
from __future__ import annotations

import gzip

import pytest
from hypothesis import HealthCheck, given, settings

from dumps_fixtures import build_log_dir, consumer_group_metadata, oc, raw_record, share_records
from kgroup.dumps import (
    DumpError,
    DumpReport,
    open_dump,
    read_dump,
    record_from_json,
    render_dump_log,
    render_jsonl,
)
from kgroup.dumps.render import dump_log_key_payload
from kgroup.dumps.textforms import parse_console_json, parse_dump_key_payload
from kgroup.log import Compression, OffsetsLog
from kgroup.records import GroupMetadata, GroupMetadataKey, StructBase
from records_strategies import every_record_version, records

T0 = 1_718_000_000_000


@pytest.fixture(scope="module")
def segments(tmp_path_factory):
    root = tmp_path_factory.mktemp("logs")
    expected = build_log_dir(root)
    report = DumpReport()
    entries = list(read_dump(root, report=report))
    assert report.ok
    return root, expected, entries


def _essentials(e):
    return (e.topic, e.partition, e.offset, e.timestamp, e.txn, e.control, e.record, e.producer_id)


def test_dump_log_text_reads_back_as_the_same_entries(segments, tmp_path):
    _root, _expected, entries = segments
    lines = list(render_dump_log(entries))
    text = tmp_path / "dump.txt"
    text.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert open_dump(text) == "dump-log"
    report = DumpReport()
    back = list(read_dump(text, report=report))
    assert report.ok, report.summary()
    assert [_essentials(e) for e in back] == [_essentials(e) for e in entries]
    assert {e.kind for e in back} == {"dump-log"}
    assert all(e.line is not None and e.position is None for e in back)
    # and printing what was read gives the very same text
    assert list(render_dump_log(back)) == lines
    assert report.entries == len(entries)
    assert report.txn == {"none": 66, "committed": 3, "aborted": 1, "open": 1}


def test_dump_log_lines_look_like_kafkas(segments):
    _root, _expected, entries = segments
    lines = list(render_dump_log([e for e in entries if e.partition == 2]))
    assert lines[0].startswith("Dumping ") and lines[0].endswith("__consumer_offsets-2/00000000000000000000.log")
    assert lines[1] == "Log starting offset: 0"
    assert lines[2].startswith("baseOffset: 0 lastOffset: 1 count: 2 baseSequence: 0 lastSequence: 1 "
                               "producerId: 100 producerEpoch: 0 partitionLeaderEpoch: 0 isTransactional: true "
                               "isControl: false deleteHorizonMs: OptionalLong.empty position: 0 CreateTime: ")
    assert lines[3].startswith("| offset: 0 CreateTime: ") and " keySize: 19 valueSize: 24 sequence: 0 headerKeys: [] "\
        'key: {"type":"1","data":{"group":"txn-app","topic":"in","partition":0}} payload: {"version":"3","data":' \
        in lines[3]
    marker = next(line for line in lines if "endTxnMarker" in line)
    assert marker.endswith(" keySize: 4 valueSize: 6 sequence: -1 headerKeys: [] endTxnMarker: COMMIT coordinatorEpoch: 7")
    assert "compresscodec: zstd" in "\n".join(lines)


def test_console_jsonl_reads_back_as_the_same_records(segments, tmp_path):
    _root, _expected, entries = segments
    lines = [render_jsonl(e) for e in entries]
    assert sum(1 for line in lines if line == "") == 2  # the markers: the formatter prints nothing
    for topic in ("__consumer_offsets", "__share_group_state"):
        path = tmp_path / f"{topic}.jsonl"
        path.write_text("\n".join(line for e, line in zip(entries, lines) if line and e.topic == topic) + "\n")
        assert open_dump(path) == "console"
        report = DumpReport()
        back = list(read_dump(path, report=report))
        assert report.ok, report.summary()
        assert [e.record for e in back] == [e.record for e in entries if e.control is None and e.topic == topic]
        assert {e.topic for e in back} == {topic}  # share-state keys are recognised by their topicId
        assert [render_jsonl(e) for e in back] == [line for e, line in zip(entries, lines) if line and e.topic == topic]


def test_console_output_without_line_separators(segments, tmp_path):
    """The formatters print no newline: a whole dump can be one line of JSON objects."""
    _root, _expected, entries = segments
    data = [e for e in entries if e.topic == "__consumer_offsets" and e.control is None]
    path = tmp_path / "one-line.txt"
    path.write_text("".join(render_jsonl(e) for e in data[:30]) + "\n" + " ".join(render_jsonl(e) for e in data[30:]))
    back = list(read_dump(path))
    assert [e.record for e in back] == [e.record for e in data]
    assert {e.line for e in back} == {1, 2}


def test_gzip_text_dumps_are_read(segments, tmp_path):
    _root, _expected, entries = segments
    path = tmp_path / "dump.txt.gz"
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.write("\n".join(render_dump_log(entries)) + "\n")
    assert open_dump(path) == "dump-log"
    assert [e.record for e in read_dump(path)] == [e.record for e in entries]


def test_console_entries_render_as_a_dump_with_one_batch_per_record(segments, tmp_path):
    _root, _expected, entries = segments
    data = [e for e in entries if e.partition == 0]
    path = tmp_path / "c.jsonl"
    path.write_text("\n".join(render_jsonl(e) for e in data) + "\n")
    console = list(read_dump(path))
    lines = list(render_dump_log(console, source_name="00000000000000000000.log"))
    assert lines[:2] == ["Dumping 00000000000000000000.log", "Log starting offset: 0"]
    assert sum(line.startswith("baseOffset: ") for line in lines) == len(data)
    text = tmp_path / "d.txt"
    text.write_text("\n".join(lines) + "\n")
    assert [e.record for e in read_dump(text)] == [e.record for e in data]
    assert [e.offset for e in read_dump(text)] == list(range(len(data)))


# --------------------------------------------------------------------------- Kafka's own expectations


def test_group_metadata_subscriptions_are_expanded_exactly_as_kafka_prints_them():
    """DumpLogSegmentsTest.testOffsetsMessageParser, 'Consumer embedded protocol is parsed if possible'."""
    from kgroup.protocol.consumer_protocol import Assignment, Subscription, encode_assignment, encode_subscription
    from kgroup.records import GroupMetadataValue

    member = GroupMetadataValue.MemberMetadata(
        member_id="member", client_id="client", client_host="host", group_instance_id="instance",
        session_timeout=100, rebalance_timeout=1000,
        subscription=encode_subscription(Subscription(topics=["foo"], owned_partitions=[("foo", 0)], generation_id=0,
                                                      rack_id="rack"), 3),
        assignment=encode_assignment(Assignment(partitions=[("foo", 0)]), 3))
    value = GroupMetadataValue(protocol_type="consumer", protocol="range", leader="member", generation=10,
                               members=[member])
    rec = GroupMetadata(GroupMetadataKey(group="group"), value, 4)
    key, payload = dump_log_key_payload(rec)
    assert key == '{"type":"2","data":{"group":"group"}}'
    assert payload == (
        '{"version":"4","data":{"protocolType":"consumer","generation":10,"protocol":"range",'
        '"leader":"member","currentStateTimestamp":-1,"members":[{"memberId":"member",'
        '"groupInstanceId":"instance","clientId":"client","clientHost":"host",'
        '"rebalanceTimeout":1000,"sessionTimeout":100,"subscription":{"topics":["foo"],'
        '"userData":null,"ownedPartitions":[{"topic":"foo","partitions":[0]}],'
        '"generationId":0,"rackId":"rack"},"assignment":{"assignedPartitions":'
        '[{"topic":"foo","partitions":[0]}],"userData":null}}]}}')
    assert parse_dump_key_payload(key, payload, None).record == rec  # packed back byte for byte

    # "Consumer embedded protocol is not parsed if malformed."
    bad = rec.replace(value=value.replace(members=[member.replace(subscription=b"Subscription",
                                                                  assignment=b"Assignment")]))
    key, payload = dump_log_key_payload(bad)
    assert payload.endswith('"subscription":"U3Vic2NyaXB0aW9u","assignment":"QXNzaWdubWVudA=="}]}}')
    assert parse_dump_key_payload(key, payload, None).record == bad


@pytest.mark.parametrize("sub_version", [0, 1, 2, 3])
def test_every_subscription_version_packs_back_exactly(sub_version):
    rec = consumer_group_metadata("g", 4, ["a", "b", "c"], version=3, sub_version=sub_version)
    key, payload = dump_log_key_payload(rec)
    assert '"subscription":{"topics":' in payload
    assert parse_dump_key_payload(key, payload, None).record == rec


def test_render_jsonl_matches_the_console_formatter_and_refuses_partial_entries(tmp_path):
    rec = oc("group-id", "foo", 1, 100, leader_epoch=10, metadata="metadata")
    rec = rec.replace(value=rec.value.replace(commit_timestamp=1234))
    assert render_jsonl(rec) == ('{"key":{"type":1,"data":{"group":"group-id","topic":"foo","partition":1}},'
                                 '"value":{"version":3,"data":{"offset":100,"leaderEpoch":10,"metadata":"metadata",'
                                 '"commitTimestamp":1234}}}')
    assert render_jsonl(rec.tombstone(rec.key)).endswith('"value":null}')
    path = tmp_path / "old.txt"
    path.write_text("[g,t,0]::OffsetAndMetadata(offset=1, leaderEpoch=Optional.empty, metadata=, "
                    "commitTimestamp=5, expireTimestamp=None)\n")
    (entry,) = read_dump(path)
    with pytest.raises(DumpError):
        render_jsonl(entry)
    # a partial entry still prints in the 3.7 dump-log form
    assert list(render_dump_log([entry]))[-1].endswith("key: offset_commit::group=g,partition=t-0 payload: offset=1")


def test_unknown_types_render_as_kafka_reports_them(tmp_path):
    log = OffsetsLog(1, compression=Compression.GZIP)
    log.append(0, [raw_record(77, b"x"), oc("g", "t", 0, 1)], timestamp=T0)
    log.write(tmp_path)
    entries = list(read_dump(tmp_path))
    assert render_jsonl(entries[0]) == ""
    lines = list(render_dump_log(entries))
    assert lines[3].endswith("keySize: 3 valueSize: 2 sequence: 0 headerKeys: [] "
                             "key: Unknown record type 77 at offset 0, skipping.")
    text = tmp_path / "d.txt"
    text.write_text("\n".join(lines))
    report = DumpReport()
    back = list(read_dump(text, report=report))
    assert back[0].fields == {"unknown_type": 77} and back[1].record == entries[1].record
    assert report.unknown_types == {77: 1} and report.warnings[0].line == 4 and report.ok


def test_share_group_state_text_without_a_path_is_recognised(tmp_path):
    lines = []
    for rec in share_records():
        k, p = dump_log_key_payload(rec)
        lines.append(f"| key: {k} payload: {p}")
    path = tmp_path / "share.txt"
    path.write_text("\n".join(lines))
    back = list(read_dump(path))
    assert [e.record for e in back] == share_records()
    assert {e.topic for e in back} == {"__share_group_state"}


# --------------------------------------------------------------------------- every type and version


def _strip_unknown_tags(obj):
    """Kafka's JSON converters do not print unknown tagged fields: drop them for comparison."""
    if isinstance(obj, StructBase):
        changes = {}
        for name, value in zip(obj.FIELDS, obj):
            if isinstance(value, (StructBase, list)):
                changes[name] = _strip_unknown_tags(value)
        if obj.unknown_tagged_fields:
            changes["unknown_tagged_fields"] = {}
        return obj.replace(**changes) if changes else obj
    if isinstance(obj, list):
        return [_strip_unknown_tags(v) for v in obj]
    return obj


@every_record_version
def test_every_record_type_and_version_comes_back_from_its_json(topic, cls, version):
    @settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(records(cls, version))
    def check(rec):
        expected = cls(_strip_unknown_tags(rec.key), _strip_unknown_tags(rec.value), rec.version)
        obj = rec.json_obj()
        value = obj["value"]
        back = record_from_json(obj["key"]["type"], obj["key"]["data"], value and value["version"],
                                value and value["data"], topic=topic)
        assert back == expected
        assert parse_console_json(obj, topic).record == expected
        key, payload = dump_log_key_payload(rec)
        assert parse_dump_key_payload(key, payload, topic).record == expected

    check()


def test_record_from_json_errors_name_the_field():
    from kgroup.dumps import JsonRecordError

    with pytest.raises(JsonRecordError, match="missing field 'commitTimestamp'"):
        record_from_json(1, {"group": "g", "topic": "t", "partition": 0}, 3, {"offset": 1, "leaderEpoch": 0,
                                                                              "metadata": ""})
    with pytest.raises(JsonRecordError, match="does not fit int32"):
        record_from_json(1, {"group": "g", "topic": "t", "partition": 1 << 40}, None, None)
    with pytest.raises(JsonRecordError, match="unknown __consumer_offsets record type 300"):
        record_from_json(300, {}, None, None)
    # KIP-915: v9 of a flexible value is read with the v4 fields, so a missing one is named
    with pytest.raises(JsonRecordError, match="OffsetCommit value v9: missing field 'offset', which version 4"):
        record_from_json(1, {"group": "g", "topic": "t", "partition": 1}, 9, {})
    with pytest.raises(JsonRecordError, match="unsupported LegacyOffsetCommit value version 1"):
        record_from_json(0, {"group": "g", "topic": "t", "partition": 1}, 1, {})
