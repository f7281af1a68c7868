"""kgroup.protocol.consumer_protocol: byte-exact known answers, round trips, errors, dump JSON."""
from __future__ import annotations

import base64
import struct

import pytest
from hypothesis import given, settings, strategies as st

from kgroup.protocol.consumer_protocol import (
    Assignment, ConsumerProtocolError, Subscription, _java_hashmap_order, assignment_json,
    decode_assignment, decode_subscription, encode_assignment, encode_subscription,
    expand_group_metadata_json, subscription_json,
)


def h(s: str) -> bytes:
    return bytes.fromhex(s.replace(" ", ""))


# --- known answers (hex written out field by field) -----------------------------------------

SUB_V0 = "0000 00000001 0003666f6f ffffffff"
SUB_V1 = ("0001 00000002 0003666f6f 0003626172 00000002 0102"
          " 00000001 0003666f6f 00000002 00000000 00000001")
SUB_V2 = "0002 00000001 000174 ffffffff 00000000 00000007"
SUB_V3 = "0003 00000001 000174 00000000 00000001 000174 00000001 00000002 00000003 00027231"
SUB_V3_NULL_RACK = "0003 00000000 ffffffff 00000000 ffffffff ffff"


def test_subscription_v0_known_answer():
    sub = Subscription(topics=("foo",))
    assert encode_subscription(sub, 0) == h(SUB_V0)
    assert decode_subscription(h(SUB_V0)) == (sub, 0)


def test_subscription_v1_known_answer():
    sub = Subscription(("foo", "bar"), b"\x01\x02", owned_partitions=[("foo", 1), ("foo", 0)])
    assert encode_subscription(sub, 1) == h(SUB_V1)
    assert decode_subscription(h(SUB_V1)) == (sub, 1)


def test_subscription_v2_known_answer():
    sub = Subscription(("t",), generation_id=7)
    assert encode_subscription(sub, 2) == h(SUB_V2)
    assert decode_subscription(h(SUB_V2)) == (sub, 2)


def test_subscription_v3_known_answer():
    sub = Subscription(("t",), b"", (("t", 2),), 3, "r1")
    assert encode_subscription(sub) == h(SUB_V3)          # v3 is the default
    assert decode_subscription(h(SUB_V3)) == (sub, 3)
    empty = Subscription(())
    assert encode_subscription(empty, 3) == h(SUB_V3_NULL_RACK)
    assert decode_subscription(h(SUB_V3_NULL_RACK)) == (empty, 3)


def test_assignment_known_answers_every_version():
    # "bar" hashes to HashMap bucket 2, "foo" to bucket 7, so bar's entry comes first.
    a = Assignment([("foo", 1), ("bar", 2)])
    body = "00000002 0003626172 00000001 00000002 0003666f6f 00000001 00000001 ffffffff"
    for v in range(4):
        assert encode_assignment(a, v) == h(f"000{v}" + body)
        assert decode_assignment(h(f"000{v}" + body)) == (a, v)
    with_data = Assignment([], b"\xff")
    assert encode_assignment(with_data, 3) == h("0003 00000000 00000001 ff")


def test_lower_versions_drop_ignorable_fields():
    sub = Subscription(("t",), None, (("t", 0),), 5, "rack")
    assert decode_subscription(encode_subscription(sub, 0))[0] == Subscription(("t",))
    assert decode_subscription(encode_subscription(sub, 1))[0] == Subscription(("t",), None, (("t", 0),))
    assert decode_subscription(encode_subscription(sub, 2))[0] == Subscription(("t",), None, (("t", 0),), 5)


def test_encode_newer_version_writes_highest():
    # ConsumerProtocol.checkSubscriptionVersion clamps to the highest supported version.
    sub = Subscription(("t",), b"", (("t", 2),), 3, "r1")
    assert encode_subscription(sub, 9) == h(SUB_V3)
    assert encode_assignment(Assignment([]), 42)[:2] == b"\x00\x03"
    with pytest.raises(ConsumerProtocolError):
        encode_subscription(sub, -1)


# --- topic grouping order: java.util.HashMap filled by computeIfAbsent ----------------------
# Expected orders were produced by running HashMap.computeIfAbsent on JDK 17.

def test_same_bucket_newest_first():
    # "a" and "q" share bucket 1; computeIfAbsent links a new key at the head of its bucket.
    assert _java_hashmap_order(["a", "q"]) == ["q", "a"]
    assert encode_assignment(Assignment([("a", 0), ("q", 0)]), 0) == h(
        "0000 00000002 000171 00000001 00000000 000161 00000001 00000000 ffffffff")


def test_hashmap_order_matches_jdk():
    topics = [f"t{i:02d}" for i in range(13)]
    assert ",".join(_java_hashmap_order(topics)) == "t10,t12,t01,t11,t00,t03,t02,t05,t04,t07,t06,t09,t08"
    calls = ["topic-a", "topic-b", "topic-c", "orders", "payments", "__consumer_offsets"]
    assert ",".join(_java_hashmap_order(calls)) == "payments,orders,topic-a,topic-b,topic-c,__consumer_offsets"


def test_hashmap_resizes_lazily():
    # 13 keys exceed the 16-slot table's threshold (12) but computeIfAbsent only resizes at
    # the start of the *next* call: one more call for an existing key changes the order.
    keys = ["bc", "bh", "bi", "dc", "dg", "dj", "ge", "gi", "hh", "hj", "ja", "jd", "jg"]
    assert ",".join(_java_hashmap_order(keys)) == "hh,bc,hj,gi,dg,dj,bh,ja,bi,jd,jg,ge,dc"
    assert ",".join(_java_hashmap_order(keys + ["jg"])) == "hh,bc,hj,gi,dg,dj,bh,bi,ja,jd,jg,ge,dc"
    one_each = Assignment([(k, 0) for k in keys])
    two_last = Assignment([(k, 0) for k in keys] + [("jg", 1)])
    assert [e["topic"] for e in assignment_json(encode_assignment(one_each))["assignedPartitions"]][7:9] == ["ja", "bi"]
    assert [e["topic"] for e in assignment_json(encode_assignment(two_last))["assignedPartitions"]][7:9] == ["bi", "ja"]


# --- forward compatibility ---------------------------------------------------------------

V100_SUB = h(SUB_V3.replace("0003", "0064", 1)) + h("0003626172")   # v3 layout + a new string field


def test_future_subscription_read_as_highest():
    # ConsumerProtocolTest.deserializeFutureSubscriptionVersion: newer versions parse as the newest known.
    sub, version = decode_subscription(V100_SUB)
    assert version == 100
    assert sub == Subscription(("t",), b"", (("t", 2),), 3, "r1")


def test_future_assignment_read_as_highest():
    data = h("0064 00000001 000174 00000001 00000000 ffffffff 0003626172")
    assert decode_assignment(data) == (Assignment([("t", 0)]), 100)


def test_trailing_bytes_ignored_like_kafka():
    assert decode_subscription(h(SUB_V0) + b"junk")[0] == Subscription(("foo",))


def test_json_of_future_version_follows_dump_tool():
    # kafka-dump-log passes the raw version to the generated reader: the nested
    # TopicPartition refuses version 100, so a blob with partitions does not render...
    with pytest.raises(ConsumerProtocolError, match="version 100"):
        subscription_json(V100_SUB)
    # ...but one without partitions does, with the fields the converter writes for v3+.
    no_parts = h("0064 00000001 000174 ffffffff 00000000 00000009 ffff 0003626172")
    assert subscription_json(no_parts) == {
        "topics": ["t"], "userData": None, "ownedPartitions": [], "generationId": 9, "rackId": None}


# --- errors ------------------------------------------------------------------------------

@pytest.mark.parametrize("data, where", [
    (b"", "byte 0"),
    (b"\x00", "byte 0"),
    (h("0000 000000"), "byte 2"),
    (h("0000 ffffffff"), "byte 2"),                     # topics array length -1
    (h("0000 00000001 fffe"), "byte 6"),                # topic string length -2
    (h("0000 00000001 0005 6162"), "byte 8"),           # topic cut short
    (h("0000 00000000 00000004 01"), "byte 10"),        # user data cut short
    (h("0001 00000000 ffffffff 00000001 000174 ffffffff"), "byte 17"),   # partitions length -1
    (h("ffff 00000000 ffffffff"), "byte 0"),            # negative version
])
def test_subscription_errors(data, where):
    with pytest.raises(ConsumerProtocolError, match=where):
        decode_subscription(data)


@pytest.mark.parametrize("data", [b"", b"\x00\x03", h("0003 00000001 0001"), h("0003 80000000 ffffffff"),
                                  h("ffff 00000000 ffffffff"), h("0000 00000000 0000")])
def test_assignment_errors(data):
    with pytest.raises(ConsumerProtocolError):
        decode_assignment(data)


def test_error_is_value_error_and_names_the_message():
    with pytest.raises(ValueError, match="ConsumerProtocolAssignment"):
        decode_assignment(b"\x00")


def test_nullable_fields_treat_any_negative_length_as_null():
    # The generated reader tests `length < 0`, not `== -1`.
    sub, _ = decode_subscription(h("0003 00000000 fffffff0 00000000 00000001 fff0"))
    assert sub.user_data is None and sub.rack_id is None


def test_invalid_utf8_replaced_like_java():
    sub, _ = decode_subscription(h("0000 00000001 0002 ff61 ffffffff"))
    assert sub.topics == ("\ufffda",)


def test_encode_rejects_what_kafka_cannot_write():
    with pytest.raises(ConsumerProtocolError, match="too long"):
        encode_subscription(Subscription(("x" * 40000,)))
    with pytest.raises(ConsumerProtocolError, match="int32"):
        encode_assignment(Assignment([("t", 2**31)]))


def test_dataclasses_normalise():
    sub = Subscription(["b", "a"], bytearray(b"x"), [("t", 2), ("s", 9), ("t", 1)])
    assert sub.topics == ("b", "a")                 # topic order is kept as given
    assert sub.owned_partitions == (("s", 9), ("t", 1), ("t", 2))
    assert sub.user_data == b"x" and isinstance(sub.user_data, bytes)
    assert Assignment([("t", 1), ("a", 0)]).partitions == (("a", 0), ("t", 1))
    hash(sub)
    with pytest.raises(TypeError):
        Subscription("abc")


# --- JSON --------------------------------------------------------------------------------

def test_subscription_json_per_version():
    assert subscription_json(h(SUB_V0)) == {"topics": ["foo"], "userData": None}
    assert subscription_json(h(SUB_V1)) == {
        "topics": ["foo", "bar"], "userData": "AQI=",
        "ownedPartitions": [{"topic": "foo", "partitions": [0, 1]}]}
    assert subscription_json(h(SUB_V2)) == {
        "topics": ["t"], "userData": None, "ownedPartitions": [], "generationId": 7}
    assert list(subscription_json(h(SUB_V3))) == ["topics", "userData", "ownedPartitions", "generationId", "rackId"]
    assert subscription_json(h(SUB_V3))["rackId"] == "r1"


def test_json_keeps_blob_order():
    # The JSON mirrors the bytes: entries and partitions in the order they were written.
    data = h("0001 00000000 ffffffff 00000002 000162 00000002 00000003 00000001 000161 00000000")
    assert subscription_json(data)["ownedPartitions"] == [
        {"topic": "b", "partitions": [3, 1]}, {"topic": "a", "partitions": []}]


def test_assignment_json():
    data = encode_assignment(Assignment([("foo", 1), ("bar", 2), ("bar", 0)], b"\x00"), 1)
    assert assignment_json(data) == {
        "assignedPartitions": [{"topic": "bar", "partitions": [0, 2]}, {"topic": "foo", "partitions": [1]}],
        "userData": "AA=="}


def test_json_with_negative_version_follows_generated_reader():
    # kafka-dump-log does not check the version: -1 reads and writes only the v0 fields.
    assert subscription_json(h("ffff 00000001 000174 ffffffff")) == {"topics": ["t"], "userData": None}


# --- expand_group_metadata_json on a real GroupMetadata record -----------------------------

def _record(sub: bytes, asg: bytes, protocol_type: str = "consumer"):
    from kgroup.records import GroupMetadata, GroupMetadataKey, GroupMetadataValue
    member = GroupMetadataValue.MemberMetadata(
        member_id="A", group_instance_id=None, client_id="c", client_host="/127.0.0.1",
        rebalance_timeout=300000, session_timeout=45000, subscription=sub, assignment=asg)
    value = GroupMetadataValue(protocol_type=protocol_type, generation=1, protocol="range", leader="A",
                               current_state_timestamp=1718000000000, members=[member])
    return GroupMetadata(GroupMetadataKey(group="g"), value, 3).json_obj()["value"]["data"]


def test_expand_group_metadata_json_decodes_members():
    sub = encode_subscription(Subscription(("foo",), None, (("foo", 0),), 1, None))
    asg = encode_assignment(Assignment([("foo", 0)]))
    data = _record(sub, asg)
    out = expand_group_metadata_json(data, "consumer")
    member = out["members"][0]
    assert member["subscription"] == {"topics": ["foo"], "userData": None,
                                      "ownedPartitions": [{"topic": "foo", "partitions": [0]}],
                                      "generationId": 1, "rackId": None}
    assert member["assignment"] == {"assignedPartitions": [{"topic": "foo", "partitions": [0]}], "userData": None}
    # the fields keep their place among the member's keys, and the input is not modified
    assert list(member) == list(data["members"][0])
    assert data["members"][0]["subscription"] == base64.b64encode(sub).decode()


def test_expand_keeps_invalid_bytes_as_base64():
    asg = encode_assignment(Assignment([("foo", 0)]))
    data = _record(b"\x00", asg)
    member = expand_group_metadata_json(data, "consumer")["members"][0]
    assert member["subscription"] == "AA=="
    assert member["assignment"]["assignedPartitions"] == [{"topic": "foo", "partitions": [0]}]
    empty = expand_group_metadata_json(_record(b"", b""), "consumer")["members"][0]
    assert empty["subscription"] == "" and empty["assignment"] == ""


def test_expand_only_for_consumer_protocol():
    sub = encode_subscription(Subscription(("foo",)))
    data = _record(sub, b"", protocol_type="connect")
    assert expand_group_metadata_json(data, "connect") == data


# --- properties --------------------------------------------------------------------------

names = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=8)
pairs = st.lists(st.tuples(names, st.integers(-2**31, 2**31 - 1)), max_size=8)
subscriptions = st.builds(
    Subscription, st.lists(names, max_size=5).map(tuple), st.none() | st.binary(max_size=8), pairs,
    st.integers(-2**31, 2**31 - 1), st.none() | names)
assignments = st.builds(Assignment, pairs, st.none() | st.binary(max_size=8))


def _as_version(sub: Subscription, v: int) -> Subscription:
    return Subscription(sub.topics, sub.user_data,
                        sub.owned_partitions if v >= 1 else (),
                        sub.generation_id if v >= 2 else -1,
                        sub.rack_id if v >= 3 else None)


@settings(max_examples=150, deadline=None)
@given(subscriptions, st.integers(0, 3))
def test_subscription_round_trip(sub, v):
    data = encode_subscription(sub, v)
    assert decode_subscription(data) == (_as_version(sub, v), v)
    js = subscription_json(data)
    assert js["topics"] == list(sub.topics)
    if v >= 1:
        flat = sorted((e["topic"], p) for e in js["ownedPartitions"] for p in e["partitions"])
        assert tuple(flat) == sub.owned_partitions
        assert len({e["topic"] for e in js["ownedPartitions"]}) == len(js["ownedPartitions"])


@settings(max_examples=150, deadline=None)
@given(assignments, st.integers(0, 3))
def test_assignment_round_trip(a, v):
    data = encode_assignment(a, v)
    assert decode_assignment(data) == (a, v)
    js = assignment_json(data)
    assert js["userData"] == (None if a.user_data is None else base64.b64encode(a.user_data).decode())


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=40))
def test_garbage_never_crashes(data):
    for fn in (decode_subscription, decode_assignment, subscription_json, assignment_json):
        try:
            fn(data)
        except ConsumerProtocolError:
            pass


@settings(max_examples=100, deadline=None)
@given(subscriptions)
def test_truncation_is_an_error(sub):
    data = encode_subscription(sub)
    for cut in range(len(data)):
        with pytest.raises(ConsumerProtocolError):
            decode_subscription(data[:cut])


def test_version_header_is_int16():
    assert struct.unpack(">h", encode_subscription(Subscription(()), 2)[:2]) == (2,)
