"""Decoding errors: the right exception type, and messages that name the problem."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kgroup.records import (RECORD_TYPES, SHARE_STATE_RECORD_TYPES, OffsetCommit, OffsetCommitKey, OffsetCommitValue, RecordDecodeError,
                            RecordEncodeError, RecordError, UnknownRecordTypeError,
                            UnsupportedVersionError, decode_record)
from records_strategies import records


def h(*fields: str) -> bytes:
    return bytes.fromhex("".join(fields))


OC_KEY = h("0001", "0001 67", "0001 74", "00000000")                # OffsetCommit g/t/0
OC_V3 = h("0003", "0000000000000001", "00000000", "0000", "0000000000000002")
CG_MEMBER_KEY = h("0005", "0001 67", "0001 6d")


def test_error_hierarchy():
    for exc in (UnknownRecordTypeError, UnsupportedVersionError, RecordDecodeError, RecordEncodeError):
        assert issubclass(exc, RecordError) and issubclass(exc, ValueError)


def test_unknown_key_prefix():
    with pytest.raises(UnknownRecordTypeError) as info:
        decode_record(h("002a", "0001 67"), None)
    assert info.value.record_type == 42
    assert str(info.value) == "unknown __consumer_offsets record type 42 (key prefix 0x002a)"


def test_unknown_negative_key_prefix():
    with pytest.raises(UnknownRecordTypeError) as info:
        decode_record(h("ffff", "0001 67"), h("0000"))
    assert info.value.record_type == -1
    assert "record type -1 (key prefix 0xffff)" in str(info.value)


def test_share_state_prefixes_are_their_own():
    key = h("0002", "0001 67", "00" * 16, "00000000")
    with pytest.raises(UnknownRecordTypeError) as info:
        decode_record(key, None, topic="__share_group_state")
    assert str(info.value) == "unknown __share_group_state record type 2 (key prefix 0x0002)"
    # prefix 2 in __consumer_offsets is GroupMetadata, whose key is just a string: trailing bytes
    with pytest.raises(RecordDecodeError):
        decode_record(key, None)


def test_unknown_topic():
    with pytest.raises(ValueError, match="unknown coordinator topic"):
        decode_record(OC_KEY, None, topic="orders")


LEGACY_KEY = h("0000", "0001 67", "0001 74", "00000000")            # LegacyOffsetCommit g/t/0


def test_unknown_value_version():
    # KIP-915 reads newer versions of flexible values (test_records_kip915); the 0.8.2 value is
    # not flexible, so a newer version of it stays an error, as in Kafka
    with pytest.raises(UnsupportedVersionError) as info:
        decode_record(LEGACY_KEY, h("0001", "0000000000000001", "0000", "0000000000000002"))
    assert info.value.version == 1
    assert str(info.value) == "unsupported LegacyOffsetCommit value version 1 (known: 0)"
    # a version below the known ones is never read
    with pytest.raises(UnsupportedVersionError, match="ConsumerGroupMemberMetadata value version -2"):
        decode_record(CG_MEMBER_KEY, h("fffe", "00"))
    with pytest.raises(UnsupportedVersionError, match="unsupported OffsetCommit value version -1"):
        decode_record(OC_KEY, h("ffff") + OC_V3[2:])


@pytest.mark.parametrize("cut", [3, 5, 7, 11])
def test_truncated_key(cut):
    with pytest.raises(RecordDecodeError) as info:
        decode_record(OC_KEY[:cut], OC_V3)
    err = info.value
    assert err.part == "key" and err.record_name == "OffsetCommit"
    assert "OffsetCommit key" in str(err) and f"byte {err.position}" in str(err)


def test_too_short_for_a_prefix():
    for key in (b"", b"\x00"):
        with pytest.raises(RecordDecodeError, match=r"key is \d bytes, too short") as info:
            decode_record(key, None)
        assert info.value.part == "key"
    with pytest.raises(RecordDecodeError, match=r"value is 1 bytes, too short") as info:
        decode_record(OC_KEY, b"\x00")
    assert info.value.part == "value"
    with pytest.raises(RecordDecodeError, match="without a key"):
        decode_record(None, OC_V3)


def test_truncated_value_names_value_and_position():
    with pytest.raises(RecordDecodeError) as info:
        decode_record(OC_KEY, OC_V3[:-3])
    err = info.value
    assert err.part == "value" and err.position == 16
    assert str(err) == ("cannot decode OffsetCommit value v3 at byte 16 of 21: "
                        "unexpected end of data (21 bytes in all)")


def test_truncated_string():
    value = h("0003", "0000000000000001", "00000000", "0005 6162")  # metadata says 5 bytes, has 2
    with pytest.raises(RecordDecodeError, match="string field metadata needs 5 bytes, only 2 left"):
        decode_record(OC_KEY, value)


def test_trailing_garbage():
    with pytest.raises(RecordDecodeError) as info:
        decode_record(OC_KEY, OC_V3 + b"\x00\x01")
    assert info.value.part == "value" and info.value.position == len(OC_V3)
    assert "2 unexpected trailing bytes" in str(info.value)
    with pytest.raises(RecordDecodeError) as info:
        decode_record(OC_KEY + b"\x07", OC_V3)
    assert info.value.part == "key" and "1 unexpected trailing bytes" in str(info.value)


def test_non_nullable_null():
    value = h("0003", "0000000000000001", "00000000", "ffff", "0000000000000002")
    with pytest.raises(RecordDecodeError, match="non-nullable field metadata was serialized as null"):
        decode_record(OC_KEY, value)


def test_flexible_garbage():
    # ConsumerGroupMemberMetadata v0 whose first compact string claims a huge length
    with pytest.raises(RecordDecodeError, match="InstanceId"):
        decode_record(CG_MEMBER_KEY, h("0000", "ff ff 03"))
    # a varint longer than 5 bytes
    with pytest.raises(RecordDecodeError, match="varint longer than 5 bytes"):
        decode_record(CG_MEMBER_KEY, h("0000", "ff ff ff ff ff ff"))
    # an array count far beyond the bytes left
    value = h("0000", "00", "00", "01", "01", "ff ff 01")
    with pytest.raises(RecordDecodeError, match="SubscribedTopicNames claims 32766 elements"):
        decode_record(CG_MEMBER_KEY, value)
    # a tagged field whose size runs past the end
    with pytest.raises(RecordDecodeError, match="tagged field 3 needs 9 bytes"):
        decode_record(h("0003", "0001 67"), h("0000", "00000001", "01 03 09 00"))


def test_known_tagged_field_with_wrong_size():
    # MetadataHash (int64) declared as 4 bytes
    with pytest.raises(RecordDecodeError, match="MetadataHash .*declares 4 bytes"):
        decode_record(h("0003", "0001 67"), h("0000", "00000001", "01 00 04 0000000000000001"))


def test_invalid_utf8():
    value = h("0003", "0000000000000001", "00000000", "0002 c328", "0000000000000002")
    with pytest.raises(RecordDecodeError, match="invalid UTF-8") as info:
        decode_record(OC_KEY, value)
    assert info.value.position == 16  # where the string's bytes start


def test_errors_are_not_cached():
    bad_key = OC_KEY[:-1]
    for _ in range(2):
        with pytest.raises(RecordDecodeError):
            decode_record(bad_key, None)


def test_construction_validates_version_and_types():
    key = OffsetCommitKey(group="g", topic="t", partition=0)
    value = OffsetCommitValue(offset=1)
    with pytest.raises(ValueError, match="unsupported OffsetCommit value version -1"):
        OffsetCommit(key, value, -1)
    assert OffsetCommit(key, value, 7).version == 7  # KIP-915: a newer version of a flexible value
    with pytest.raises(ValueError, match="tombstone has no value version"):
        OffsetCommit(key, None, 3)
    with pytest.raises(TypeError, match="OffsetCommit value must be a OffsetCommitValue"):
        OffsetCommit(key, key)
    with pytest.raises(TypeError, match="key must be a OffsetCommitKey"):
        OffsetCommit(value, None)


def test_encode_errors_name_the_field():
    key = OffsetCommitKey(group="g", topic="t", partition=0)
    with pytest.raises(RecordEncodeError, match=r"OffsetCommitValue\.metadata is not nullable"):
        OffsetCommit(key, OffsetCommitValue(metadata=None)).encode()
    with pytest.raises(RecordEncodeError, match=r"OffsetCommitValue\.offset"):
        OffsetCommit(key, OffsetCommitValue(offset=1 << 64)).encode()
    with pytest.raises(RecordEncodeError, match=r"OffsetCommitKey\.partition"):
        OffsetCommit(key.replace(partition="0"), None).encode()
    with pytest.raises(RecordEncodeError, match="limit 32767"):
        OffsetCommit(key, OffsetCommitValue(metadata="x" * 40000)).encode()


ALL_TYPES = [(cls, cls.TOPIC) for cls in (*RECORD_TYPES.values(), *SHARE_STATE_RECORD_TYPES.values())]


@pytest.mark.parametrize("cls,topic", ALL_TYPES, ids=[c.NAME for c, _ in ALL_TYPES])
def test_garbage_only_raises_record_errors(cls, topic):
    """Truncated, corrupted or extended bytes: a RecordError or a record, nothing else."""

    @settings(max_examples=25, deadline=None)
    @given(records(cls), st.data())
    def check(rec, data):
        key, value = rec.encode()
        part = data.draw(st.sampled_from(["key", "value"] if value is not None else ["key"]))
        raw = bytearray(key if part == "key" else value)
        how = data.draw(st.sampled_from(["cut", "flip", "append", "random"]))
        if how == "cut":
            raw = raw[:data.draw(st.integers(0, len(raw) - 1))]
        elif how == "flip":
            i = data.draw(st.integers(0, len(raw) - 1))
            raw[i] = data.draw(st.integers(0, 255))
        elif how == "append":
            raw += data.draw(st.binary(min_size=1, max_size=4))
        else:
            raw = raw[:2] + data.draw(st.binary(max_size=40))
        args = (bytes(raw), value) if part == "key" else (key, bytes(raw))
        try:
            decode_record(*args, topic=topic)
        except RecordError:
            pass

    check()


def test_unknown_tags_cannot_be_written_in_a_non_flexible_version():
    value = OffsetCommitValue(offset=1).replace(unknown_tagged_fields={5: b"x"})
    key = OffsetCommitKey(group="g", topic="t", partition=0)
    assert OffsetCommit(key, value, 4).encode()[1].endswith(bytes.fromhex("01 05 01 78"))
    with pytest.raises(RecordEncodeError, match="unknown tagged fields, which version 3 cannot hold"):
        OffsetCommit(key, value, 3).encode()
