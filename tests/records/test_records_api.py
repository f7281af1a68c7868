"""The public surface: classes, defaults, immutability, equality, helpers."""
from __future__ import annotations

import copy
import pickle
import uuid

import pytest

import kgroup.records as records
from kgroup.records import (RECORD_TYPES, SHARE_STATE_RECORD_TYPES, ConsumerGroupMemberMetadataValue,
                            CoordinatorRecord, GroupMetadata, GroupMetadataValue, OffsetCommit,
                            OffsetCommitKey, OffsetCommitValue, ShareSnapshot, StreamsGroupMetadataValue,
                            StreamsGroupTopologyValue, StructBase, decode_record, record_type_name)

KEY = OffsetCommitKey(group="g", topic="t", partition=1)


def test_record_class_attributes():
    assert (OffsetCommit.TYPE, OffsetCommit.NAME) == (1, "OffsetCommit")
    assert OffsetCommit.Key is OffsetCommitKey and OffsetCommit.Value is OffsetCommitValue
    assert OffsetCommit.VALUE_VERSIONS == (0, 1, 2, 3, 4)
    defaults = {cls.NAME: cls.DEFAULT_VERSION for cls in RECORD_TYPES.values()}
    assert defaults.pop("OffsetCommit") == 3 and defaults.pop("GroupMetadata") == 3
    assert set(defaults.values()) == {0}
    assert ShareSnapshot.TYPE == 0 and SHARE_STATE_RECORD_TYPES[0] is ShareSnapshot
    assert all(issubclass(c, CoordinatorRecord) for c in RECORD_TYPES.values())


def test_exports():
    for cls in [*RECORD_TYPES.values(), *SHARE_STATE_RECORD_TYPES.values()]:
        assert getattr(records, cls.__name__) is cls
        assert getattr(records, cls.__name__ + "Key") is cls.Key
        assert getattr(records, cls.__name__ + "Value") is cls.Value
        assert cls.__name__ in records.__all__
    assert record_type_name(8) == "ConsumerGroupCurrentMemberAssignment"
    assert record_type_name(1, "__share_group_state") == "ShareUpdate"
    assert record_type_name(99) == "unknown(99)"


def test_defaults_follow_kafka():
    v = OffsetCommitValue()
    assert (v.offset, v.leader_epoch, v.metadata, v.commit_timestamp, v.expire_timestamp, v.topic_id) == \
        (0, -1, "", 0, -1, uuid.UUID(int=0))
    m = GroupMetadataValue.MemberMetadata()
    assert m.group_instance_id is None and m.rebalance_timeout == -1 and m.subscription == b""
    c = ConsumerGroupMemberMetadataValue()
    # nullable strings without an explicit default start as "" (Kafka), the tagged struct as an
    # empty one (Kafka 4.4.0's generated class: its schema has no "null" default)
    assert c.instance_id == "" and c.classic_member_metadata == type(c.classic_member_metadata)()
    assert c.rebalance_timeout_ms == -1
    assert StreamsGroupMetadataValue().validated_topology_epoch == -1
    a, b = StreamsGroupTopologyValue(), StreamsGroupTopologyValue()
    assert a.subtopologies == [] and a.subtopologies is not b.subtopologies
    assert GroupMetadataValue(members=(m,)).members == [m]  # any iterable, stored as a list


def test_structs_are_immutable():
    with pytest.raises(AttributeError, match="immutable"):
        KEY.partition = 2
    with pytest.raises(AttributeError):
        del KEY.group
    with pytest.raises(AttributeError):
        KEY.whatever = 1
    changed = KEY.replace(partition=2)
    assert changed.partition == 2 and KEY.partition == 1 and type(changed) is OffsetCommitKey
    with pytest.raises(TypeError):
        KEY.replace(nope=1)
    with pytest.raises(TypeError):
        OffsetCommitKey("g", "t", 1)  # keywords only


def test_struct_equality_hash_repr():
    same = OffsetCommitKey(group="g", topic="t", partition=1)
    assert KEY == same and hash(KEY) == hash(same) and not (KEY != same)
    assert KEY != KEY.replace(partition=2)
    assert KEY != ("g", "t", 1, {}) and ("g", "t", 1) != KEY
    assert KEY != records.LegacyOffsetCommitKey(group="g", topic="t", partition=1)
    assert repr(KEY) == "OffsetCommitKey(group='g', topic='t', partition=1)"
    assert {KEY: 1}[same] == 1
    assert KEY.to_dict() == {"group": "g", "topic": "t", "partition": 1}
    assert isinstance(KEY, StructBase) and OffsetCommitKey.FIELDS == ("group", "topic", "partition")


def test_unknown_tagged_fields_attribute():
    v = ConsumerGroupMemberMetadataValue()
    assert dict(v.unknown_tagged_fields) == {}
    w = v.replace(unknown_tagged_fields={9: b"x"})
    assert dict(w.unknown_tagged_fields) == {9: b"x"} and w != v
    assert "unknown_tagged_fields={9: b'x'}" in repr(w)
    with pytest.raises(TypeError):
        w.unknown_tagged_fields[10] = b"y"  # read-only mapping
    assert dict(w.replace(client_id="c").unknown_tagged_fields) == {9: b"x"}


def test_pickle_and_copy():
    member = GroupMetadataValue.MemberMetadata(member_id="m", subscription=b"\x01")
    rec = GroupMetadata(records.GroupMetadataKey(group="g"), GroupMetadataValue(members=[member]))
    assert pickle.loads(pickle.dumps(rec)) == rec
    assert copy.deepcopy(rec) == rec and copy.copy(rec) is rec
    w = ConsumerGroupMemberMetadataValue().replace(unknown_tagged_fields={3: b"z"})
    assert pickle.loads(pickle.dumps(w)) == w


def test_record_construction_and_versions():
    rec = OffsetCommit(KEY, OffsetCommitValue(offset=4))
    assert rec.version == 3 and not rec.is_tombstone
    # the broker's choice: v1 carries an expire timestamp, v4 a topic id
    assert OffsetCommit(KEY, OffsetCommitValue(expire_timestamp=5)).version == 1
    assert OffsetCommit(KEY, OffsetCommitValue(topic_id=uuid.uuid4())).version == 4
    assert OffsetCommit(KEY, OffsetCommitValue(), 0).version == 0
    tomb = OffsetCommit.tombstone(KEY)
    assert tomb.is_tombstone and tomb.value is None and tomb.version is None
    assert tomb.encode()[1] is None
    assert rec.replace(value=None) == tomb and tomb.replace(value=rec.value) == rec
    assert repr(tomb) == f"OffsetCommit.tombstone({KEY!r})"
    assert rec != tomb and hash(rec) == hash(OffsetCommit(KEY, OffsetCommitValue(offset=4)))
    with pytest.raises(TypeError):
        CoordinatorRecord(KEY, None)


def test_decode_accepts_bytearray_and_memoryview():
    key, value = OffsetCommit(KEY, OffsetCommitValue(offset=9, metadata="m")).encode()
    expected = decode_record(key, value)
    for wrap in (bytearray, memoryview):
        got = decode_record(wrap(key), wrap(value))
        assert got == expected and type(got.value.metadata) is str
    g = GroupMetadata(records.GroupMetadataKey(group="g"),
                      GroupMetadataValue(members=[GroupMetadataValue.MemberMetadata(subscription=b"ab")]))
    k, v = g.encode()
    got = decode_record(memoryview(k), bytearray(v))
    assert type(got.value.members[0].subscription) is bytes and got == g


def test_decoded_keys_are_shared():
    records.clear_key_cache()
    key, value = OffsetCommit(KEY, OffsetCommitValue(offset=1)).encode()
    a = decode_record(key, value)
    b = decode_record(bytes(bytearray(key)), value)
    assert a.key is b.key


def test_struct_docs_list_fields():
    doc = OffsetCommitValue.__doc__
    assert "leader_epoch: int32 (versions 3+, default -1)" in doc
    assert GroupMetadataValue.MemberMetadata.__qualname__ == "GroupMetadataValue.MemberMetadata"
