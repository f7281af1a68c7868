"""Group -> partition mapping, against values computed by Java's String.hashCode."""
from __future__ import annotations

import uuid

import pytest

from kgroup.log import (
    java_string_hashcode,
    kafka_uuid_str,
    parse_kafka_uuid,
    partition_for,
    share_partition_key,
    share_state_partition_for,
)


@pytest.mark.parametrize("s,expected", [
    ("", 0),
    ("a", 97),
    ("Aa", 2112),
    ("BB", 2112),  # the classic collision
    ("hello", 99162322),
    ("Hello World", -862545276),
    ("polygenelubricants", -2**31),  # Integer.MIN_VALUE
    ("\u00e9", 233),  # BMP character: one code unit
    ("\U0001F600", 31 * 0xD83D + 0xDE00),  # non-BMP: two UTF-16 surrogates, as in Java
    ("a\U0001F600", (97 * 31 * 31 + 31 * 0xD83D + 0xDE00)),
])
def test_java_string_hashcode(s, expected):
    assert java_string_hashcode(s) == expected


def test_int32_wraparound():
    h = java_string_hashcode("x" * 1000)
    assert -2**31 <= h < 2**31


def test_partition_for():
    assert partition_for("hello") == 99162322 % 50 == 22
    # a negative hash: Math.abs, as Kafka 4.4.0 placed such groups (not & 0x7FFFFFFF, which gives 22)
    assert partition_for("Hello World") == 862545276 % 50 == 26
    assert partition_for("batch1-kip709-batched-fetch") == 33     # seen in data/kafka-4.4.0
    # Utils.abs(Integer.MIN_VALUE) is 0 (Math.abs would stay negative)
    assert partition_for("polygenelubricants") == 0
    assert partition_for("polygenelubricants", 7) == 0
    assert partition_for("", 50) == 0
    assert partition_for("hello", 1) == 0
    with pytest.raises(ValueError):
        partition_for("g", 0)


def test_kafka_uuid_form():
    assert kafka_uuid_str(uuid.UUID(int=0)) == "AAAAAAAAAAAAAAAAAAAAAA"  # Uuid.ZERO_UUID
    assert kafka_uuid_str(uuid.UUID(int=1)) == "AAAAAAAAAAAAAAAAAAAAAQ"  # Uuid.ONE_UUID
    u = uuid.UUID("5e3e3a4c-4b1f-4f5e-9c1d-ffeeddccbbaa")
    text = kafka_uuid_str(u)
    assert len(text) == 22 and "=" not in text and "+" not in text and "/" not in text
    assert parse_kafka_uuid(text) == u
    assert parse_kafka_uuid(str(u)) == u
    assert kafka_uuid_str(text) == text


def test_share_state_partition():
    topic_id = uuid.UUID(int=1)
    assert share_partition_key("grp", topic_id, 3) == "grp:AAAAAAAAAAAAAAAAAAAAAQ:3"
    expected = abs(java_string_hashcode("grp:AAAAAAAAAAAAAAAAAAAAAQ:3")) % 50
    assert share_state_partition_for("grp", topic_id, 3, 50) == expected
    assert share_state_partition_for("grp", "AAAAAAAAAAAAAAAAAAAAAQ", 3, 50) == expected
