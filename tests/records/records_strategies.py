"""Hypothesis strategies for record structs, derived from kgroup's own schema definitions.

Values only use fields the chosen version has (others keep their defaults), because
that is what a decode of the encoded bytes gives back.
"""
from __future__ import annotations

import uuid

import pytest
from hypothesis import strategies as st

from kgroup.records import RECORD_TYPES, SHARE_STATE_RECORD_TYPES, CoordinatorRecord
from kgroup.records.schema import Field, Message, Struct

_INT_RANGES = {
    "int8": (-(1 << 7), (1 << 7) - 1),
    "int16": (-(1 << 15), (1 << 15) - 1),
    "uint16": (0, (1 << 16) - 1),
    "int32": (-(1 << 31), (1 << 31) - 1),
    "int64": (-(1 << 63), (1 << 63) - 1),
}
_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=6)
_UUIDS = st.one_of(st.just(uuid.UUID(int=0)), st.uuids())


def _prim(name: str) -> st.SearchStrategy:
    if name in _INT_RANGES:
        lo, hi = _INT_RANGES[name]
        return st.one_of(st.sampled_from(sorted({lo, max(lo, -1), 0, 1, hi})), st.integers(lo, hi))
    if name == "bool":
        return st.booleans()
    if name == "float64":
        return st.floats(allow_nan=False)
    if name == "uuid":
        return _UUIDS
    if name == "string":
        return _TEXT
    if name == "bytes":
        return st.binary(max_size=6)
    raise AssertionError(name)


def _field(f: Field, version: int, flexible: bool, depth: int) -> st.SearchStrategy:
    if f.kind == "prim":
        base = _prim(f.elem)
    elif f.kind == "struct":
        base = struct_values(f.elem, version, flexible, depth + 1)
    else:
        elem = (struct_values(f.elem, version, flexible, depth + 1) if isinstance(f.elem, Struct)
                else _prim(f.elem))
        base = st.lists(elem, max_size=3 if depth < 2 else 1)
    if f.is_nullable(version):
        base = st.one_of(st.none(), base)
    if flexible and f.is_tagged(version):
        base = st.one_of(st.just(f.default_value()), base)
    return base


def _unknown_tags(s: Struct, version: int) -> st.SearchStrategy:
    known = {f.tag for f in s.fields if f.tag is not None}
    tags = st.integers(0, 300).filter(lambda t: t not in known)
    return st.dictionaries(tags, st.binary(max_size=4), max_size=2)


def struct_values(s: Struct, version: int, flexible: bool, depth: int = 0) -> st.SearchStrategy:
    present = {f.attr: _field(f, version, flexible, depth) for f in s.fields if version in f.version_range}
    values = st.builds(lambda kw: s.cls(**kw), st.fixed_dictionaries(present))
    if flexible:
        values = st.tuples(values, st.one_of(st.just({}), _unknown_tags(s, version))).map(
            lambda t: t[0].replace(unknown_tagged_fields=t[1]) if t[1] else t[0])
    return values


def records(cls: type[CoordinatorRecord], version: int | None = None) -> st.SearchStrategy:
    """Records of `cls`: random key, and a value at `version` (any version if None) or a tombstone."""
    key_schema: Message = cls.SCHEMA.key
    value_schema: Message = cls.SCHEMA.value
    keys = struct_values(key_schema, 0, False)
    versions = st.just(version) if version is not None else st.sampled_from(cls.VALUE_VERSIONS)

    def with_version(v: int) -> st.SearchStrategy:
        return st.tuples(keys, struct_values(value_schema, v, value_schema.is_flexible(v))).map(
            lambda kv: cls(kv[0], kv[1], v))

    tombstones = keys.map(cls.tombstone)
    return st.one_of(versions.flatmap(with_version), tombstones)


#: (topic, record class, value version) for every record type of both topics and each of its versions
EVERY_VERSION = [(cls.TOPIC, cls, v) for table in (RECORD_TYPES, SHARE_STATE_RECORD_TYPES)
                 for cls in table.values() for v in cls.VALUE_VERSIONS]
#: a test taking `topic, cls, version` once for each of EVERY_VERSION, named "<record>-v<version>"
every_record_version = pytest.mark.parametrize("topic,cls,version", EVERY_VERSION,
                                               ids=[f"{c.NAME}-v{v}" for _, c, v in EVERY_VERSION])
