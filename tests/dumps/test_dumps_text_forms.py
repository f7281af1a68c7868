"""Hand-written dumps in the exact forms Kafka's tools printed across releases.

Lines marked "published" are copied from kafka-dump-log / console-consumer output people posted
(blog posts and tutorials); lines marked "Kafka test" are the expectations of Kafka's own tests
(DumpLogSegmentsTest, OffsetMessageFormatterTest); the rest are constructed from the printing
code of the release named (GroupMetadataManager.formatRecordKeyAndValue, DumpLogSegments).
"""
from __future__ import annotations

import pytest

from kgroup.dumps import DumpError, DumpReport, open_dump, read_dump, render_dump_log
from kgroup.records import ConsumerGroupMetadata, LegacyOffsetCommit, OffsetCommit


def _write(tmp_path, name: str, text: str):
    path = tmp_path / name
    path.write_text(text.lstrip("\n"), encoding="utf-8")
    return path


def _read(path, **kw):
    report = DumpReport()
    entries = list(read_dump(path, report=report, **kw))
    assert report.entries == report.records + report.partial + report.control + report.unknown + report.decode_errors
    return entries, report


# --------------------------------------------------------------------------- kafka-dump-log 3.7 and earlier

DUMP_LOG_37 = """
Dumping /tmp/kafka-logs/__consumer_offsets-12/00000000000000000000.log
Starting offset: 0
baseOffset: 1 lastOffset: 1 count: 1 baseSequence: 0 lastSequence: 0 producerId: 0 producerEpoch: 0 partitionLeaderEpoch: 0 isTransactional: true isControl: false deleteHorizonMs: OptionalLong.empty position: 339 CreateTime: 1665506597950 size: 118 magic: 2 compresscodec: none crc: 4199759988 isvalid: true
| offset: 1 CreateTime: 1680383688085 keySize: 26 valueSize: 24 sequence: 0 headerKeys: [] key: offset_commit::group=my-group,partition=input-topic-0 payload: offset=1
baseOffset: 2 lastOffset: 2 count: 1 baseSequence: -1 lastSequence: -1 producerId: 0 producerEpoch: 0 partitionLeaderEpoch: 0 isTransactional: true isControl: true deleteHorizonMs: OptionalLong.empty position: 457 CreateTime: 1665506597998 size: 78 magic: 2 compresscodec: none crc: 3355926470 isvalid: true
| offset: 2 CreateTime: 1680383688163 keySize: 4 valueSize: 6 sequence: -1 headerKeys: [] endTxnMarker: COMMIT coordinatorEpoch: 0
baseOffset: 15 lastOffset: 17 count: 3 baseSequence: 0 lastSequence: 2 producerId: -1 producerEpoch: -1 partitionLeaderEpoch: 0 isTransactional: false isControl: false deleteHorizonMs: OptionalLong.empty position: 1716 CreateTime: 1662649581270 size: 232 magic: 2 compresscodec: none crc: 4177101314 isvalid: true
| offset: 15 CreateTime: 1662649581270 keySize: 26 valueSize: 24 sequence: 0 headerKeys: [] key: offset_commit::group=my-group,partition=my-topic-0 payload: offset=1
| offset: 16 CreateTime: 1662649581270 keySize: 26 valueSize: 24 sequence: 1 headerKeys: [] key: offset_commit::group=my-group,partition=my-topic-1 payload: offset=0
| offset: 17 CreateTime: 1662649581270 keySize: 26 valueSize: 24 sequence: 2 headerKeys: [] key: offset_commit::group=my-group,partition=my-topic-2 payload: offset=1
baseOffset: 18 lastOffset: 21 count: 4 baseSequence: 0 lastSequence: 3 producerId: -1 producerEpoch: -1 partitionLeaderEpoch: 0 isTransactional: false isControl: false deleteHorizonMs: OptionalLong.empty position: 1948 CreateTime: 1662649590000 size: 420 magic: 2 compresscodec: none crc: 1 isvalid: true
| offset: 18 CreateTime: 1662649590000 keySize: 12 valueSize: 180 sequence: 0 headerKeys: [] key: group_metadata::group=my-group payload: {"protocolType":"consumer","protocol":"range","generationId":3,"assignment":"{consumer-1-4c8b=[my-topic-0, my-topic-1],consumer-2-9f1e=[my-topic-2]:CAFE}"}
| offset: 19 CreateTime: 1662649590000 keySize: 26 valueSize: -1 sequence: 1 headerKeys: [] key: offset_commit::group=my-group,partition=my-topic-2 payload: <DELETE>
| offset: 20 CreateTime: 1662649590000 keySize: 26 valueSize: 40 sequence: 2 headerKeys: [] key: offset_commit::group=my,group,partition=a-b-7 payload: offset=9,metadata=x, y=z
| offset: 21 CreateTime: 1662649590000 keySize: 11 valueSize: 10 sequence: 3 headerKeys: [] key: unknown::version=3
"""


def test_dump_log_37_form_keeps_what_it_carries(tmp_path):
    path = _write(tmp_path, "dump-37.txt", DUMP_LOG_37)
    assert open_dump(path) == "dump-log"
    entries, report = _read(path)
    assert [(e.offset, e.partition, e.topic, e.txn, e.control) for e in entries] == [
        (1, 12, "__consumer_offsets", "committed", None), (2, 12, "__consumer_offsets", "committed", "COMMIT"),
        (15, 12, "__consumer_offsets", "none", None), (16, 12, "__consumer_offsets", "none", None),
        (17, 12, "__consumer_offsets", "none", None), (18, 12, "__consumer_offsets", "none", None),
        (19, 12, "__consumer_offsets", "none", None), (20, 12, "__consumer_offsets", "none", None),
        (21, 12, "__consumer_offsets", "none", None)]
    assert all(e.record is None for e in entries)
    assert entries[0].fields == {"record_type": "OffsetCommit", "group": "my-group", "topic": "input-topic",
                                 "partition": 0, "tombstone": False, "offset": 1, "metadata": ""}
    assert entries[0].producer_id == 0 and entries[0].timestamp == 1680383688085 and entries[0].line == 4
    assert entries[5].fields == {
        "record_type": "GroupMetadata", "group": "my-group", "tombstone": False, "protocol_type": "consumer",
        "protocol": "range", "generation": 3,
        "assignment": {"consumer-1-4c8b": [["my-topic", 0], ["my-topic", 1]], "consumer-2-9f1e": [["my-topic", 2]],
                       "consumer-2-9f1e#userData": "CAFE"}}
    assert entries[6].fields["tombstone"] is True and entries[6].is_tombstone
    assert entries[7].fields | {} == {"record_type": "OffsetCommit", "group": "my,group", "topic": "a-b",
                                      "partition": 7, "tombstone": False, "offset": 9, "metadata": "x, y=z"}
    assert entries[8].fields == {"unknown_type": 3} and entries[8].error
    assert report.partial == 7 and report.control == 1 and report.unknown_types == {3: 1}
    assert report.problems == [] and [(p.line, p.position) for p in report.warnings] == [(15, None)]
    assert report.by_type == {"OffsetCommit": 6, "GroupMetadata": 1}
    # printing them again gives the original lines back (the 3.7 texts are kept)
    lines = list(render_dump_log(entries))
    original = DUMP_LOG_37.strip().splitlines()
    assert [line for line in lines if line.startswith("| ")] == [line for line in original if line.startswith("| ")]


DUMP_LOG_011 = """
Dumping /var/kafka/__consumer_offsets-3/00000000000000000000.log
Starting offset: 0
offset: 0 position: 0 CreateTime: 1500000000000 isvalid: true keysize: 26 valuesize: 28 magic: 1 compresscodec: NONE crc: 1234567 key: offset::my-group:my-topic:0 payload: 42
offset: 1 position: 80 CreateTime: 1500000000001 isvalid: true keysize: 12 valuesize: 80 magic: 2 compresscodec: NONE producerId: -1 producerEpoch: -1 sequence: -1 isTransactional: false headerKeys: [] key: metadata::my-group payload: consumer:range:3:{consumer-1-abc=[my-topic-0, my-topic-1]}
offset: 2 position: 200 CreateTime: 1500000000002 isvalid: true keysize: 26 valuesize: 30 magic: 2 compresscodec: NONE producerId: -1 producerEpoch: -1 sequence: -1 isTransactional: false headerKeys: [] key: offset::my-group:my-topic:1 payload: 7:some:meta
offset: 3 position: 260 CreateTime: 1500000000003 isvalid: true keysize: 26 valuesize: -1 magic: 2 compresscodec: NONE producerId: -1 producerEpoch: -1 sequence: -1 isTransactional: false headerKeys: []
"""


def test_dump_log_011_form(tmp_path):
    entries, report = _read(_write(tmp_path, "dump-011.txt", DUMP_LOG_011))
    assert [e.offset for e in entries] == [0, 1, 2, 3] and {e.partition for e in entries} == {3}
    assert entries[0].fields == {"record_type": "OffsetCommit", "group": "my-group", "topic": "my-topic",
                                 "partition": 0, "tombstone": False, "offset": 42, "metadata": ""}
    assert entries[1].fields == {"record_type": "GroupMetadata", "group": "my-group", "tombstone": False,
                                 "protocol_type": "consumer", "protocol": "range", "generation": 3,
                                 "assignment": {"consumer-1-abc": [["my-topic", 0], ["my-topic", 1]]}}
    assert entries[2].fields["offset"] == 7 and entries[2].fields["metadata"] == "some:meta"
    assert entries[3].fields == {"record_type": None, "tombstone": True}  # pre-1.0 tools print no key for these
    assert entries[0].batch.magic == 1 and entries[0].timestamp == 1500000000000
    assert report.ok


# --------------------------------------------------------------------------- kafka-dump-log 3.8+

DUMP_LOG_38 = """
Dumping /data/__consumer_offsets-7/00000000000000000100.log
Log starting offset: 100
baseOffset: 100 lastOffset: 103 count: 4 baseSequence: -1 lastSequence: -1 producerId: -1 producerEpoch: -1 partitionLeaderEpoch: 4 isTransactional: false isControl: false deleteHorizonMs: OptionalLong.empty position: 0 CreateTime: -1 size: 300 magic: 2 compresscodec: lz4 crc: 77 isvalid: true
| offset: 100 CreateTime: -1 keySize: 11 valueSize: 10 sequence: -1 headerKeys: [] key: {"type":"3","data":{"groupId":"group"}} payload: {"version":"0","data":{"epoch":10}}
| offset: 101 CreateTime: -1 keySize: 11 valueSize: -1 sequence: -1 headerKeys: [] key: {"type":"3","data":{"groupId":"group"}} payload: <DELETE>
| offset: 102 CreateTime: -1 keySize: 2 valueSize: 0 sequence: -1 headerKeys: [] key: Unknown record type 32767 at offset 102, skipping.
| offset: 103 CreateTime: -1 keySize: 11 valueSize: 2 sequence: -1 headerKeys: [] key: Error at offset 103, skipping. Could not read record with version 0 from value's buffer due to: Error reading byte array of 536870911 byte(s): only 1 byte(s) available.
baseOffset: 104 lastOffset: 104 count: 1 baseSequence: -1 lastSequence: -1 producerId: -1 producerEpoch: -1 partitionLeaderEpoch: 4 isTransactional: false isControl: false deleteHorizonMs: OptionalLong[1718000000000] position: 300 LogAppendTime: 1718000000001 size: 100 magic: 2 compresscodec: none crc: 78 isvalid: true
| offset: 104 LogAppendTime: 1718000000001 keySize: 19 valueSize: 24 sequence: -1 headerKeys: [] key: {"type":"0","data":{"group":"group-id","topic":"foo","partition":1}} payload: {"version":"0","data":{"offset":100,"metadata":"metadata","commitTimestamp":1234}}
offset: 105 position: 400 CreateTime: 1500000000000 size: 90 magic: 1 compresscodec: none crc: 99 isvalid: true
| offset: 105 CreateTime: 1500000000000 keySize: 19 valueSize: 32 isValid: true crc: 99} key: {"type":"1","data":{"group":"group-id","topic":"foo","partition":1}} payload: {"version":"1","data":{"offset":100,"metadata":"metadata","commitTimestamp":1234,"expireTimestamp":5678}}
| key: {"type":"1","data":{"group":"group-id","topic":"foo","partition":1}} payload: {"version":"3","data":{"offset":100,"leaderEpoch":10,"metadata":"metadata","commitTimestamp":1234}}
"""


def test_dump_log_38_form_rebuilds_records(tmp_path):
    entries, report = _read(_write(tmp_path, "dump-38.txt", DUMP_LOG_38))
    assert [e.offset for e in entries] == [100, 101, 102, 103, 104, 105, None]
    cg, tomb, unknown, error, legacy, v1, v3 = entries
    assert isinstance(cg.record, ConsumerGroupMetadata) and cg.record.value.epoch == 10
    assert tomb.record.value is None and tomb.record.key.group_id == "group"
    assert unknown.fields == {"unknown_type": 32767} and unknown.record is None
    assert error.record is None and "536870911" in error.error
    assert isinstance(legacy.record, LegacyOffsetCommit) and legacy.timestamp == 1718000000001
    assert legacy.batch.delete_horizon_ms == 1718000000000 and legacy.batch.timestamp_type == "LogAppendTime"
    assert isinstance(v1.record, OffsetCommit) and v1.record.version == 1 and v1.record.value.expire_timestamp == 5678
    assert v1.batch.magic == 1 and v1.meta["crc"] == 99
    assert v3.record.value.leader_epoch == 10 and v3.line == 12  # --skip-record-metadata line
    assert report.records == 5 and report.unknown_types == {32767: 1} and report.decode_errors == 1
    assert [p.line for p in report.problems] == [7] and [p.line for p in report.warnings] == [6]
    lines = list(render_dump_log(entries))
    original = DUMP_LOG_38.strip().splitlines()
    assert lines[:9] == original[:9]


def test_garbage_lines_are_reported_and_reading_goes_on(tmp_path):
    text = DUMP_LOG_38.replace("| offset: 101 ", "@@ not a dump line\n| offset: 101 ", 1) + "\x00\x01 binary junk\n"
    entries, report = _read(_write(tmp_path, "garbage.txt", text))
    assert [e.offset for e in entries] == [100, 101, 102, 103, 104, 105, None]
    assert report.garbage_lines == 2
    garbage = [p for p in report.problems if "unreadable line" in p.reason]
    assert [p.line for p in garbage] == [5, 14]
    assert all(p.file == str(tmp_path / "garbage.txt") for p in report.problems)


def test_invalid_batches_and_trailing_bytes_noted_by_kafka_are_reported(tmp_path):
    text = DUMP_LOG_38.replace("crc: 77 isvalid: true", "crc: 77 isvalid: false") + \
        "Found 17 invalid bytes at the end of 00000000000000000100.log\n"
    entries, report = _read(_write(tmp_path, "invalid.txt", text))
    assert len(entries) == 7
    assert report.corrupt_spans == 2 and report.corrupt_bytes == 300 + 17
    assert [p.line for p in report.problems][-1] == 13


# --------------------------------------------------------------------------- console consumer, 4.x JSON

# Kafka test: OffsetMessageFormatterTest (tools, trunk 2025), one expected output per record
CONSOLE_4X = [
    '{"key":{"type":0,"data":{"group":"group-id","topic":"foo","partition":1}},"value":{"version":0,"data":{"offset":100,"metadata":"metadata","commitTimestamp":1234}}}',
    '{"key":{"type":1,"data":{"group":"group-id","topic":"foo","partition":1}},"value":{"version":0,"data":{"offset":100,"metadata":"metadata","commitTimestamp":1234}}}',
    '{"key":{"type":1,"data":{"group":"group-id","topic":"foo","partition":1}},"value":{"version":1,"data":{"offset":100,"metadata":"metadata","commitTimestamp":1234,"expireTimestamp":5678}}}',
    '{"key":{"type":1,"data":{"group":"group-id","topic":"foo","partition":1}},"value":{"version":2,"data":{"offset":100,"metadata":"metadata","commitTimestamp":1234}}}',
    '{"key":{"type":1,"data":{"group":"group-id","topic":"foo","partition":1}},"value":{"version":3,"data":{"offset":100,"leaderEpoch":10,"metadata":"metadata","commitTimestamp":1234}}}',
    '{"key":{"type":1,"data":{"group":"group-id","topic":"foo","partition":1}},"value":{"version":4,"data":{"offset":100,"leaderEpoch":10,"metadata":"metadata","commitTimestamp":1234}}}',
    '{"key":{"type":1,"data":{"group":"group-id","topic":"foo","partition":1}},"value":{"version":5,"data":{"offset":100,"leaderEpoch":10,"metadata":"metadata","commitTimestamp":1234}}}',
    '{"key":{"type":1,"data":{"group":"group-id","topic":"foo","partition":1}},"value":null}',
]


def test_console_4x_json(tmp_path):
    path = _write(tmp_path, "console-4x.txt", "\n".join(CONSOLE_4X) + "\n")
    assert open_dump(path) == "console"
    entries, report = _read(path)
    assert [type(e.record).__name__ for e in entries] == ["LegacyOffsetCommit"] + ["OffsetCommit"] * 7
    assert [e.record.version for e in entries if e.record is not None] == [0, 0, 1, 2, 3, 4, 5, None]
    assert entries[3].record.value.offset == 100 and entries[4].record.value.leader_epoch == 10
    assert entries[7].record.is_tombstone
    # KIP-915: a value version newer than kgroup knows (5) is read with the v4 fields, as Kafka's
    # OffsetsMessageFormatter reads it, and printed back exactly as it came
    assert entries[6].record.value.leader_epoch == 10 and str(entries[6].record.to_json()) == CONSOLE_4X[6]
    assert report.ok and report.records == 8
    assert {e.partition for e in entries} == {None} and {e.kind for e in entries} == {"console"}


def test_console_json_back_to_back_with_print_prefixes(tmp_path):
    """kafka-console-consumer's DefaultMessageFormatter prefixes (print.timestamp, .partition, .offset)."""
    text = ("CreateTime:1718000000123\tPartition:3\tOffset:41\t" + CONSOLE_4X[4] + "\n"
            + "NO_TIMESTAMP\tPartition:0\tOffset:7\tNO_HEADERS\t" + CONSOLE_4X[7] + "\n"
            + CONSOLE_4X[1] + CONSOLE_4X[2] + " " + CONSOLE_4X[3] + "\n"
            + "Processed a total of 5 messages\n")
    entries, report = _read(_write(tmp_path, "prefixed.txt", text))
    assert [(e.partition, e.offset, e.timestamp, e.line) for e in entries] == [
        (3, 41, 1718000000123, 1), (0, 7, None, 2), (None, None, None, 3), (None, None, None, 3),
        (None, None, None, 3)]
    assert report.ok and report.records == 5


def test_console_intermediate_formatter_unknown_data(tmp_path):
    """The 2024 ApiMessageFormatter printed "unknown" for data it could not read."""
    text = ('{"key":{"type":1,"data":{"group":"g","topic":"t","partition":0}},"value":{"version":9,"data":"unknown"}}\n'
            '{"key":{"version":3,"data":{"groupId":"g"}},"value":{"version":0,"data":{"epoch":1}}}\n'
            '{"key":{"type":99,"data":"unknown"},"value":null}\n')
    entries, report = _read(_write(tmp_path, "api.txt", text))
    assert entries[0].record is None and entries[0].fields["type"] == 1 and entries[0].error
    assert isinstance(entries[1].record, ConsumerGroupMetadata)
    assert entries[2].fields["unknown_type"] == 99
    assert report.decode_errors == 1 and report.unknown_types == {99: 1} and report.records == 1


# --------------------------------------------------------------------------- console consumer, 0.10-3.x

CONSOLE_OLD = """
[g01,test,0]::OffsetAndMetadata(offset=0, leaderEpoch=Optional.empty, metadata=, commitTimestamp=1672913436699, expireTimestamp=None)
[g01,test,2]::OffsetAndMetadata(offset=1, leaderEpoch=Optional[0], metadata=, commitTimestamp=1672913436699, expireTimestamp=None)
[console-consumer-29492,test,0]::OffsetAndMetadata(offset=5, leaderEpoch=Optional.empty, metadata=, commitTimestamp=1539220886461, expireTimestamp=Some(1539825686461))
[console-consumer-40652,test,0]::NULL
[mygroup1,mytopic1,11]::[OffsetMetadata[55166421,NO_METADATA],CommitTime 1502060076305,ExpirationTime 1502146476305]
[a,b]c,t.x_y-z,4]::OffsetAndMetadata(offset=9, leaderEpoch=Optional[2], metadata=m, e=t, a), commitTimestamp=1, expireTimestamp=None)
console-consumer-40652::GroupMetadata(groupId=console-consumer-40652, generation=2, protocolType=Some(consumer), currentState=Empty, members=Map())
console-consumer-18364::GroupMetadata(groupId=console-consumer-18364, generation=1, protocolType=Some(consumer), currentState=Stable, members=Map(consumer-1-6aa558f4-7166-457e-9006-39a5843aa976 -> MemberMetadata(memberId=consumer-1-6aa558f4-7166-457e-9006-39a5843aa976, groupInstanceId=Some(null), clientId=consumer-1, clientHost=/127.0.0.1, sessionTimeoutMs=10000, rebalanceTimeoutMs=300000, supportedProtocols=List(range), )))
console-consumer-6657::NULL
single-consumer-group::[single-consumer-group,Some(consumer),Stable,Map(consumer-1-228b379d-a124-4e79-bd58-8724d5419c10 -> [consumer-1-228b379d-a124-4e79-bd58-8724d5419c10,consumer-1,/127.0.0.1,10000])]
"""


def test_console_old_formatter_forms(tmp_path):
    """Published output of GroupMetadataManager$OffsetsMessageFormatter / $GroupMetadataMessageFormatter
    (Kafka 0.10-3.x); the comma-laden group/metadata line is constructed to test the parsing."""
    path = _write(tmp_path, "console-old.txt", CONSOLE_OLD)
    assert open_dump(path) == "console"
    entries, report = _read(path)
    assert report.ok, report.summary()
    f = [e.fields for e in entries]
    assert f[0] == {"record_type": "OffsetCommit", "group": "g01", "topic": "test", "partition": 0,
                    "tombstone": False, "offset": 0, "leader_epoch": -1, "metadata": "",
                    "commit_timestamp": 1672913436699, "expire_timestamp": -1}
    assert f[1]["leader_epoch"] == 0 and f[2]["expire_timestamp"] == 1539825686461
    assert f[3] == {"record_type": "OffsetCommit", "group": "console-consumer-40652", "topic": "test",
                    "partition": 0, "tombstone": True}
    assert f[4] == {"record_type": "OffsetCommit", "group": "mygroup1", "topic": "mytopic1", "partition": 11,
                    "tombstone": False, "offset": 55166421, "metadata": "", "commit_timestamp": 1502060076305,
                    "expire_timestamp": 1502146476305}
    assert (f[5]["group"], f[5]["topic"], f[5]["metadata"]) == ("a,b]c", "t.x_y-z", "m, e=t, a)")
    assert f[6] == {"record_type": "GroupMetadata", "group": "console-consumer-40652", "tombstone": False,
                    "generation": 2, "protocol_type": "consumer", "current_state": "Empty", "members": []}
    assert f[7]["members"] == [{
        "member_id": "consumer-1-6aa558f4-7166-457e-9006-39a5843aa976", "group_instance_id": None,
        "client_id": "consumer-1", "client_host": "/127.0.0.1", "session_timeout": 10000,
        "rebalance_timeout": 300000, "supported_protocols": ["range"]}]
    assert f[8] == {"record_type": "GroupMetadata", "group": "console-consumer-6657", "tombstone": True}
    assert f[9]["protocol_type"] == "consumer" and f[9]["current_state"] == "Stable"
    assert f[9]["members"] == [{"member_id": "consumer-1-228b379d-a124-4e79-bd58-8724d5419c10"}]
    assert report.partial == 10 and report.tombstones == 2
    assert all(e.record is None and e.is_tombstone == e.fields["tombstone"] for e in entries)


def test_a_garbage_console_line_is_reported_and_the_next_lines_read(tmp_path):
    text = CONSOLE_4X[1] + "\n" + "this is not kafka output\n" + CONSOLE_4X[2][:50] + "\n" + CONSOLE_4X[3] + "\n"
    entries, report = _read(_write(tmp_path, "g.txt", text))
    assert [e.line for e in entries] == [1, 4]
    assert [(p.line, p.reason.split(":")[0]) for p in report.problems] == [
        (2, "unreadable line"), (3, "unreadable JSON at character 1")]
    assert report.garbage_lines == 2


# --------------------------------------------------------------------------- detection


def test_kinds_are_told_apart_by_content(tmp_path):
    assert open_dump(_write(tmp_path, "a.log", DUMP_LOG_37)) == "dump-log"  # a text file named .log
    assert open_dump(_write(tmp_path, "b.out", "$ kafka-dump-log.sh --files x\n" + DUMP_LOG_38)) == "dump-log"
    assert open_dump(_write(tmp_path, "c.txt", CONSOLE_OLD)) == "console"
    with pytest.raises(DumpError, match="neither"):
        open_dump(_write(tmp_path, "d.txt", "hello\nworld\n"))
    with pytest.raises(DumpError, match="empty"):
        open_dump(_write(tmp_path, "e.txt", ""))
    with pytest.raises(FileNotFoundError):
        open_dump(tmp_path / "missing.txt")
    assert open_dump(tmp_path) == "segment"


def test_topic_argument_decodes_text_of_the_share_state_topic(tmp_path):
    text = ('{"key":{"type":1,"data":{"groupId":"sg","topicId":"MKXx1fIkQy2J9jXHhK8m1w","partition":0}},'
            '"value":null}\n')
    path = _write(tmp_path, "s.txt", text)
    (entry,) = read_dump(path, topic="__share_group_state")
    assert entry.topic == "__share_group_state" and type(entry.record).__name__ == "ShareUpdate"
    (guessed,) = read_dump(path)
    assert guessed.topic == "__share_group_state"


def test_index_dumps_in_the_same_output_are_skipped(tmp_path):
    """kafka-dump-log prints `offset: <o> position: <p>` for .index files: no records there."""
    text = ("Dumping C:\\kafka\\data\\__consumer_offsets-4\\00000000000000000000.index\n"
            "offset: 5 position: 4120\n"
            "Dumping /x/__consumer_offsets-4/00000000000000000000.timeindex\n"
            "timestamp: 1718000000000 offset: 5\n" + DUMP_LOG_38.replace("/data/__consumer_offsets-7/",
                                                                        "C:\\kafka\\data\\__consumer_offsets-9\\"))
    entries, report = _read(_write(tmp_path, "mixed.txt", text))
    assert len(entries) == 7 and {e.partition for e in entries} == {9}
    assert report.garbage_lines == 0


def test_a_kafka_41_streams_metadata_json_keeps_its_assignment_configs():
    # Kafka 4.1's StreamsGroupMetadata value had an untagged `assignmentConfigs`; 4.2+ writes the
    # tagged `lastAssignmentConfigs`. Same version 0: the JSON's field names pick the layout.
    from kgroup.dumps.fromjson import record_from_json
    from kgroup.records import decode_record

    old = {"epoch": 3, "metadataHash": 7, "validatedTopologyEpoch": 0,
           "assignmentConfigs": [{"key": "num.standby.replicas", "value": "1"}]}
    r = record_from_json(17, {"groupId": "g"}, 0, old)
    assert r.value.assignment_configs[0].value == "1"
    assert '"assignmentConfigs":[{"key":"num.standby.replicas","value":"1"}]' in r.to_json()
    assert decode_record(*r.encode()) == r            # and its bytes are the 4.1 bytes, both ways
    new = record_from_json(17, {"groupId": "g"}, 0, {"epoch": 3, "metadataHash": 7, "lastAssignmentConfigs": [
        {"key": "num.standby.replicas", "value": "1"}]})
    assert new.value.last_assignment_configs[0].value == "1" and new.encode() != r.encode()
