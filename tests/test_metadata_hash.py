"""The group metadata hash, bit for bit as Kafka 4.1+ computes it.

Known answers: produced by a Java oracle outside this repository that runs Kafka's
`Utils.computeTopicHash` / `Utils.computeGroupHash` statement for statement on hash4j's
streaming XXH3-64 (`Hashing.xxh3_64().hashStream()`), compiled from hash4j's own sources
(`XXH3_64`, `XXH3Base`, `ByteArrayUtil`). It also agreed with this module on ~20,000 random
topics (unicode names and racks, up to 3,000 partitions), ~6,700 random groups and ~2,500
random byte strings of 0-5,000 bytes. Kafka's own `UtilsTest` uses a random topic id, so it
has no fixed values to copy; its cases are mirrored below as properties.
"""
from __future__ import annotations

import uuid

import pytest
import xxhash
from hypothesis import given, settings
from hypothesis import strategies as st

from kgroup.cluster import Cluster
from kgroup.groups.metadata_hash import (
    TopicHashCache,
    group_metadata_hash,
    metadata_hash,
    topic_hash,
    topic_hash_bytes,
)

FOO_ID = uuid.UUID("5d7d1f2a-8c3b-4f6e-9a01-23456789abcd")
BAR_ID = uuid.UUID("00000000-0000-0000-0000-000000000001")
NEG_ID = uuid.UUID("ffffffff-ffff-ffff-8000-000000000000")  # both halves negative as Java longs

# The layout of Kafka's UtilsTest: foo, 2 partitions, racks rack0+rack1 and rack1+rack2.
FOO_RACKS = {0: ["rack1", "rack0"], 1: ["rack2", "rack1"]}


# -- known answers from the hash4j oracle ---------------------------------------------------

TOPIC_CASES = {
    "foo_2p_racks": ((FOO_ID, "foo", 2, FOO_RACKS), -287470714506075052),
    "foo_2p_no_racks": ((FOO_ID, "foo", 2, {}), -4296738771673422925),
    "foo_1p_racks": ((FOO_ID, "foo", 1, {0: ["rack0", "rack1"]}), -2112722075216077526),
    "other_id": ((BAR_ID, "foo", 2, FOO_RACKS), 3853552040905560900),
    "other_name": ((FOO_ID, "bar", 2, FOO_RACKS), 9203553355421597365),
    "zero_partitions": ((BAR_ID, "t", 0, {}), -3909432519847850310),
    "negative_id_halves": ((NEG_ID, "orders", 3, {0: ["a"], 2: ["b", "a"]}), 1650923528340709113),
    "duplicate_racks_kept": ((BAR_ID, "dup", 2, {0: ["r", "r"], 1: ["r"]}), 9138607656709328428),
    "empty_rack_string": ((BAR_ID, "empty", 1, {0: [""]}), 7515413290584932696),
    # Java sorts by UTF-16 code unit: "\U0001F600" (D83D DE00) comes before "\uff01".
    "unicode_racks": ((FOO_ID, "uni", 2, {0: ["\uff01", "\U0001F600", "é"], 1: ["中文", "z"]}),
                      4882718089894379056),
    # > 1024 bytes: several XXH3 blocks, and hash4j's streaming buffer wraps many times.
    "long_name_1000_partitions": (
        (FOO_ID, "n" * 249, 1000, {p: [f"rack-{p % 3}", f"rack-{(p + 1) % 3}"] for p in range(1000)}),
        9166431170645498324,
    ),
}


@pytest.mark.parametrize("case", TOPIC_CASES, ids=list(TOPIC_CASES))
def test_topic_hash_known_answers(case):
    args, expected = TOPIC_CASES[case]
    assert topic_hash(*args) == expected


GROUP_CASES = {
    "empty": ({}, 0),
    "bar_foo": ({"bar": 123, "foo": 456}, 1482712172080382793),
    "bar_foo_swapped_values": ({"bar": 456, "foo": 123}, 3576632854778799618),
    "one_zero_hash": ({"a": 0}, -4072596861322023719),
    "java_string_order": ({"\uff01": 1, "\U0001F600": 2, "a": -1}, -1985985918267258953),
}


@pytest.mark.parametrize("case", GROUP_CASES, ids=list(GROUP_CASES))
def test_group_hash_known_answers(case):
    hashes, expected = GROUP_CASES[case]
    assert group_metadata_hash(hashes) == expected


def test_xxh3_known_answers_match_hash4j_stream():
    # hash4j hashStream().putBytes(...) and byte-by-byte putByte(...) both gave these.
    def signed(v):
        return v - (1 << 64) if v >= 1 << 63 else v

    assert signed(xxhash.xxh3_64_intdigest(b"")) == 3244421341483603138
    assert signed(xxhash.xxh3_64_intdigest(b"\x00")) == -4302098779834749733
    assert signed(xxhash.xxh3_64_intdigest(b"abc")) == 8696274497037089104
    assert signed(xxhash.xxh3_64_intdigest(bytes(range(256)) * 5)) == 5207480625629771054


def rack_cluster() -> Cluster:
    c = Cluster(racks=["rack0", "rack1", "rack2"])
    c.create_topic("foo", 3, topic_id=FOO_ID)
    c.create_topic("bar", 2, topic_id=BAR_ID)
    return c


def test_cluster_metadata_hash_known_answers():
    c = rack_cluster()
    # Cluster places partition p on racks[p % 3] and racks[(p + 1) % 3].
    assert c.topic("foo").racks == {0: ["rack0", "rack1"], 1: ["rack1", "rack2"], 2: ["rack2", "rack0"]}
    assert TopicHashCache(c).topic_hash("foo") == -7069518062919276204
    assert TopicHashCache(c).topic_hash("bar") == -3959971494764071901
    assert metadata_hash(["foo", "bar"], c) == 8552719751469617651
    assert metadata_hash(["foo"], c) == 5474526979289031007
    c.increase_partitions("foo", 4)
    assert metadata_hash(["bar", "foo"], c) == 4436068513830163574


# -- the byte layout ----------------------------------------------------------------------------

def test_byte_layout_is_little_endian_with_utf16_strings_and_length_suffix():
    tid = uuid.UUID(int=(0x0102030405060708 << 64) | 0x090A0B0C0D0E0F10)
    got = topic_hash_bytes(tid, "ab", 1, {0: ["r"]})
    assert got == (
        b"\x00"                                   # magic byte
        + bytes.fromhex("0807060504030201")      # putLong(msb), little-endian
        + bytes.fromhex("100f0e0d0c0b0a09")      # putLong(lsb)
        + "ab".encode("utf-16-le") + b"\x02\x00\x00\x00"   # putString: chars, then length
        + b"\x01\x00\x00\x00"                    # putInt(partitionCount)
        + b"\x00\x00\x00\x00"                    # putInt(0)
        + b"\x01\x00\x00\x00"                    # putInt(rack.length())
        + "r".encode("utf-16-le") + b"\x01\x00\x00\x00"    # putString(rack)
    )


def test_string_length_counts_utf16_code_units_not_code_points():
    got = topic_hash_bytes(BAR_ID, "t", 1, {0: ["\U0001F600"]})
    # one code point, two UTF-16 code units: Java's rack.length() is 2
    assert got.endswith(b"\x02\x00\x00\x00" + "\U0001F600".encode("utf-16-le") + b"\x02\x00\x00\x00")


# -- Kafka UtilsTest, as properties -------------------------------------------------------------

def test_rack_order_does_not_matter():
    base = topic_hash(FOO_ID, "foo", 2, FOO_RACKS)
    assert topic_hash(FOO_ID, "foo", 2, {0: ["rack0", "rack1"], 1: ["rack1", "rack2"]}) == base
    assert topic_hash(FOO_ID, "foo", 2, lambda p: list(reversed(FOO_RACKS[p]))) == base


def test_racks_are_per_partition():
    # swapping the racks of two partitions changes the hash (the partition id precedes its racks)
    assert topic_hash(FOO_ID, "foo", 2, {0: FOO_RACKS[1], 1: FOO_RACKS[0]}) != topic_hash(FOO_ID, "foo", 2, FOO_RACKS)


@pytest.mark.parametrize("other", [
    (BAR_ID, "foo", 2, FOO_RACKS),                     # different topic id
    (FOO_ID, "bar", 2, FOO_RACKS),                     # different topic name
    (FOO_ID, "foo", 1, FOO_RACKS),                     # different partition count
    (FOO_ID, "foo", 2, {}),                            # no racks
    (FOO_ID, "foo", 2, {0: ["rack0"], 1: FOO_RACKS[1]}),        # one rack fewer
    (FOO_ID, "foo", 2, {0: ["rack0", "rack1", "rack1"], 1: FOO_RACKS[1]}),  # duplicate kept
    (FOO_ID, "foo", 2, {0: ["rack0,rack1"], 1: FOO_RACKS[1]}),  # no separator ambiguity
    (uuid.UUID(int=(FOO_ID.int & ((1 << 64) - 1)) << 64 | FOO_ID.int >> 64), "foo", 2, FOO_RACKS),  # halves swapped
])
def test_any_field_change_changes_the_topic_hash(other):
    assert topic_hash(*other) != topic_hash(FOO_ID, "foo", 2, FOO_RACKS)


def test_rack_sources_are_equivalent():
    racks = {0: ["b", "a"], 2: ["c"]}
    by_dict = topic_hash(FOO_ID, "t", 3, racks)
    assert topic_hash(FOO_ID, "t", 3, lambda p: racks.get(p)) == by_dict
    assert topic_hash(FOO_ID, "t", 3, {0: ["a", "b"], 1: [], 2: ["c"]}) == by_dict
    assert topic_hash(FOO_ID, "t", 3) == topic_hash(FOO_ID, "t", 3, {})


def test_group_hash_ignores_map_order_but_not_which_topic_has_which_hash():
    assert group_metadata_hash({"bar": 123, "foo": 456}) == group_metadata_hash({"foo": 456, "bar": 123})
    assert group_metadata_hash({"bar": 123, "foo": 456}) != group_metadata_hash({"bar": 456, "foo": 123})


def test_group_hash_accepts_unsigned_and_signed_longs_alike():
    assert group_metadata_hash({"a": -1}) == group_metadata_hash({"a": (1 << 64) - 1})


# -- metadata_hash over a cluster -------------------------------------------------------------

def test_missing_topics_are_left_out_not_hashed_as_zero():
    c = rack_cluster()
    with_missing = metadata_hash(["foo", "missing"], c)
    assert with_missing == metadata_hash(["foo"], c)
    assert with_missing != group_metadata_hash({"foo": TopicHashCache(c).topic_hash("foo"), "missing": 0})
    assert TopicHashCache(c).topic_hash("missing") == 0        # Utils.computeTopicHash: 0
    assert metadata_hash(["missing"], c) == 0                   # no existing topic: 0
    assert metadata_hash([], c) == 0
    # creating the topic changes the group hash
    c.create_topic("missing", 1)
    assert metadata_hash(["foo", "missing"], c) != with_missing


def test_metadata_hash_ignores_order_and_duplicates_of_names():
    c = rack_cluster()
    assert metadata_hash(["foo", "bar"], c) == metadata_hash(iter(["bar", "foo", "bar"]), c)
    assert metadata_hash({"foo": 2, "bar": 1}, c) == metadata_hash(["bar", "foo"], c)


def test_metadata_hash_follows_cluster_changes():
    c = rack_cluster()
    before = metadata_hash(["foo"], c)
    c.increase_partitions("foo", 5)
    grown = metadata_hash(["foo"], c)
    assert grown != before
    c.delete_topic("foo")
    assert metadata_hash(["foo"], c) == 0
    c.create_topic("foo", 5, topic_id=FOO_ID)   # same name and partitions, racks as before
    assert metadata_hash(["foo"], c) == grown
    c.delete_topic("foo")
    c.create_topic("foo", 5)                    # a new topic id
    assert metadata_hash(["foo"], c) != grown


def test_topic_hash_cache_reuses_and_invalidates_on_metadata_version():
    c = rack_cluster()
    cache = TopicHashCache(c)
    first = metadata_hash(["foo", "bar", "missing"], c, cache)
    assert first == metadata_hash(["foo", "bar", "missing"], c)
    assert cache.computed == 2 and len(cache) == 2 and "missing" not in cache
    assert metadata_hash(["bar", "foo"], c, cache) == first
    assert cache.computed == 2                                  # served from the cache
    c.increase_partitions("bar", 3)                            # bumps metadata_version
    assert len(cache) == 0
    assert metadata_hash(["foo", "bar"], c, cache) == metadata_hash(["foo", "bar"], c) != first
    assert cache.computed == 4
    cache.invalidate("foo")
    assert "foo" not in cache and "bar" in cache
    cache.clear()
    assert len(cache) == 0


def test_cache_of_another_cluster_is_refused():
    with pytest.raises(ValueError):
        metadata_hash(["foo"], rack_cluster(), TopicHashCache(rack_cluster()))


def test_bad_arguments():
    with pytest.raises(TypeError):
        topic_hash("5d7d1f2a-8c3b-4f6e-9a01-23456789abcd", "t", 1)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        topic_hash(FOO_ID, "t", -1)
    with pytest.raises(TypeError):
        topic_hash(FOO_ID, "t", 1, ["rack"])  # type: ignore[arg-type]


@settings(max_examples=200, deadline=None)
@given(
    tid=st.uuids(),
    name=st.text(min_size=1, max_size=60),
    racks=st.lists(st.lists(st.text(max_size=12), max_size=4), min_size=0, max_size=12),
    data=st.data(),
)
def test_properties_hold_for_random_topics(tid, name, racks, data):
    n = len(racks)
    value = topic_hash(tid, name, n, dict(enumerate(racks)))
    assert -(1 << 63) <= value < (1 << 63)
    shuffled = {p: data.draw(st.permutations(r)) for p, r in enumerate(racks)}
    assert topic_hash(tid, name, n, shuffled) == value
    assert topic_hash(tid, name, n + 1, dict(enumerate(racks))) != value
