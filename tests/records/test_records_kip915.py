"""KIP-915: a value version newer than kgroup knows, of a record type whose values are flexible,
is read with the highest known version's layout, as Kafka's coordinator loader and its console
formatters (OffsetsMessageFormatter, GroupMetadataMessageFormatter) read it: the record keeps
its version number, the fields kgroup knows are decoded, new tagged fields are kept as unknown
tagged fields (and written back byte for byte), and the JSON shows the version and known fields.
"""
from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings

from kgroup.records import (RECORD_TYPES, SHARE_STATE_RECORD_TYPES, LegacyOffsetCommit, OffsetCommit,
                            OffsetCommitKey, OffsetCommitValue, UnsupportedVersionError, decode_record)
from records_strategies import records

FLEXIBLE = [cls for table in (RECORD_TYPES, SHARE_STATE_RECORD_TYPES) for cls in table.values()
            if cls.SCHEMA.value.is_flexible(cls.VALUE_VERSIONS[-1])]


def newer_bytes(rec, bump: int, new_tags: dict[int, bytes]) -> tuple[bytes, bytes]:
    """The record as a newer broker could write it: the known fields, some tagged fields this
    code has never heard of, and a version `bump` above the highest known one. Built from the
    highest known version's bytes with only the int16 version prefix changed."""
    value = rec.value.replace(unknown_tagged_fields={**rec.value.unknown_tagged_fields, **new_tags})
    key, data = type(rec)(rec.key, value, rec.version).encode()
    return key, (rec.version + bump).to_bytes(2, "big") + data[2:]


def test_every_coordinator_value_but_the_0_8_2_one_is_flexible_at_its_highest_version():
    assert {cls.NAME for cls in RECORD_TYPES.values()} - {cls.NAME for cls in FLEXIBLE} == {"LegacyOffsetCommit"}
    assert all(cls.FORWARD_COMPATIBLE for cls in FLEXIBLE) and not LegacyOffsetCommit.FORWARD_COMPATIBLE


@pytest.mark.parametrize("cls", FLEXIBLE, ids=[c.NAME for c in FLEXIBLE])
@pytest.mark.parametrize("bump", [1, 7])
def test_a_newer_value_version_reads_with_the_highest_known_layout(cls, bump):
    @settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(records(cls, cls.HIGHEST_VERSION).filter(lambda r: r.value is not None))
    def check(rec):
        key, value = newer_bytes(rec, bump, {300: b"\x01\x02"})
        got = decode_record(key, value, topic=cls.TOPIC)
        version = cls.HIGHEST_VERSION + bump
        assert type(got) is cls and got.version == version and got.key == rec.key
        assert got.value.unknown_tagged_fields[300] == b"\x01\x02"
        assert got.value.replace(unknown_tagged_fields=dict(rec.value.unknown_tagged_fields)) == rec.value
        # Kafka's formatter JSON: the version as written, the fields this code knows
        expected = rec.json_obj()
        expected["value"]["version"] = version
        assert json.loads(str(got.to_json())) == expected
        assert got.encode() == (key, value)  # nothing lost: written back byte for byte
        assert decode_record(key, value, topic=cls.TOPIC) == got  # the cached fast path agrees

    check()


def test_offset_commit_v5_as_in_the_issue():
    """`unsupported OffsetCommit value version 5` was raised where Kafka prints the record."""
    rec = OffsetCommit(OffsetCommitKey(group="g", topic="t", partition=0),
                       OffsetCommitValue(offset=42, leader_epoch=3, metadata="m", commit_timestamp=1718000000000), 4)
    key, value = newer_bytes(rec, 1, {})
    got = decode_record(key, value)
    assert got.version == 5 and got.value.offset == 42
    assert str(got.to_json()) == (
        '{"key":{"type":1,"data":{"group":"g","topic":"t","partition":0}},"value":{"version":5,'
        '"data":{"offset":42,"leaderEpoch":3,"metadata":"m","commitTimestamp":1718000000000}}}')
    # built in code at a newer version: written with its number and the newest known layout
    assert OffsetCommit(got.key, got.value, 5).encode() == (key, value)


def test_non_flexible_values_and_older_versions_keep_their_clear_errors():
    key = LegacyOffsetCommit.Key(group="g", topic="t", partition=0)
    _, v0 = LegacyOffsetCommit(key, LegacyOffsetCommit.Value(offset=1)).encode()
    with pytest.raises(UnsupportedVersionError, match=r"unsupported LegacyOffsetCommit value version 1 \(known: 0\)"):
        decode_record(LegacyOffsetCommit(key, None).encode()[0], b"\x00\x01" + v0[2:])
    with pytest.raises(UnsupportedVersionError, match="unsupported LegacyOffsetCommit value version 3"):
        LegacyOffsetCommit(key, LegacyOffsetCommit.Value(offset=1), 3)
    with pytest.raises(UnsupportedVersionError, match="OffsetCommit value version -3"):
        OffsetCommit.layout_version(-3)
    assert OffsetCommit.layout_version(2) == 2 and OffsetCommit.layout_version(9) == 4
