"""Field mutations of kio request dataclasses that keep to kio's types and nullability.

A request is a tree of frozen kio dataclasses. `slots(req)` lists every field in it (with the
path to reach it, its type hint and its `metadata["kafka_type"]`); `mutate(draw, world, req)`
replaces one of them with a value a buggy or hostile client could send on the wire: a boundary
integer, an empty, huge or foreign string, an id that exists elsewhere in the state, null where
the schema allows it, an emptied, duplicated or shortened array. Everything it builds is
serializable by kio at the request's version (the wire could carry it).
"""
from __future__ import annotations

import dataclasses
import datetime
import functools
import types
import typing
import uuid
from typing import Any

from hypothesis import strategies as st
from kio.static.primitive import i32Timedelta, i64Timedelta

from kgroup.protocol import _request_schema, build, to_data

_INT_RANGE = {"int8": (-2**7, 2**7 - 1), "int16": (-2**15, 2**15 - 1), "int32": (-2**31, 2**31 - 1),
              "int64": (-2**63, 2**63 - 1), "uint16": (0, 2**16 - 1),
              "timedelta_i32": (-2**31, 2**31 - 1), "timedelta_i64": (-2**63, 2**63 - 1)}


@dataclasses.dataclass(frozen=True)
class Slot:
    path: tuple  # field names and tuple indexes from the request down to the field
    hint: Any
    kafka_type: str | None


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _strip_none(tp: Any) -> tuple[Any, bool]:
    """(the type without `| None`, whether None is allowed)."""
    if typing.get_origin(tp) in (types.UnionType, typing.Union):
        inner = [a for a in typing.get_args(tp) if a is not type(None)]
        return inner[0], True
    return tp, False


def slots(entity: Any, path: tuple = ()) -> list[Slot]:
    """Every field of a kio entity tree (nested entities' fields included)."""
    out = []
    cls = type(entity)
    for f in dataclasses.fields(cls):
        hint = _hints(cls)[f.name]
        out.append(Slot(path + (f.name,), hint, f.metadata.get("kafka_type")))
        value = getattr(entity, f.name)
        if dataclasses.is_dataclass(value):
            out += slots(value, path + (f.name,))
        elif isinstance(value, tuple):
            for i, item in enumerate(value):
                if dataclasses.is_dataclass(item):
                    out += slots(item, path + (f.name, i))
    return out


def get_at(entity: Any, path: tuple) -> Any:
    for step in path:
        entity = entity[step] if isinstance(step, int) else getattr(entity, step)
    return entity


def set_at(entity: Any, path: tuple, value: Any) -> Any:
    """A copy of `entity` with the field at `path` replaced (frozen dataclasses all the way down)."""
    if not path:
        return value
    step, rest = path[0], path[1:]
    if isinstance(step, int):
        items = list(entity)
        items[step] = set_at(items[step], rest, value)
        return tuple(items)
    return dataclasses.replace(entity, **{step: set_at(getattr(entity, step), rest, value)})


def _scalar(draw, kafka_type: str, tp: Any, current: Any, world: Any) -> Any:
    """A new value for one scalar of `kafka_type` (python type `tp`)."""
    if kafka_type in _INT_RANGE:
        lo, hi = _INT_RANGE[kafka_type]
        cur = int(current.total_seconds() * 1000) if isinstance(current, datetime.timedelta) else int(current or 0)
        n = draw(st.sampled_from([-1, 0, 1, -2, lo, hi, cur + 1, cur - 1, "any"]))
        n = draw(st.integers(lo, hi)) if n == "any" else max(lo, min(hi, n))
        if kafka_type.startswith("timedelta"):
            cls = i32Timedelta if kafka_type == "timedelta_i32" else i64Timedelta
            # kio's timedeltas hold milliseconds within the type's range
            n = max(n, -2**31 + 1) if cls is i32Timedelta else max(min(n, 2**53), -2**53)
            return cls.parse(datetime.timedelta(milliseconds=n))
        return tp(n) if tp is not int else n
    if kafka_type == "bool":
        return not current
    if kafka_type == "string":
        # oversized: the longest string Kafka reads (int16 length), far over any real id, and one
        # byte more (Kafka's readers refuse it: INVALID_REQUEST, kgroup.protocol.limits)
        choices = [st.just(""), st.just("x" * 32_767), st.just("é" * 16_384), st.text(max_size=12),
                   st.sampled_from(("\x00", " ", "é" * 3, "*", ".*", "[", "-1"))]
        for known in (world.group_ids, world.member_ids, world.topic_names):
            if known:
                choices.append(st.sampled_from(known))
        return draw(st.one_of(*choices))
    if kafka_type in ("bytes", "records"):
        return draw(st.one_of(st.just(b""), st.binary(max_size=40), st.just(b"\xff" * 300)))
    if kafka_type == "uuid":
        return draw(st.one_of(st.just(uuid.UUID(int=0)), st.uuids(), st.sampled_from(world.topic_ids)))
    raise AssertionError(f"no mutation for kafka_type {kafka_type!r}")


def _value(draw, slot: Slot, current: Any, world: Any) -> Any:
    tp, nullable = _strip_none(slot.hint)
    if nullable and current is not None and draw(st.integers(0, 3)) == 0:
        return None
    if typing.get_origin(tp) is tuple:
        (item_tp,) = typing.get_args(tp)[:1]
        items = list(current or ())
        kind = draw(st.sampled_from(["empty", "duplicate", "drop", "item", "extend"]))
        if kind == "empty" or (not items and kind != "extend"):
            return ()
        if kind == "duplicate":
            i = draw(st.integers(0, len(items) - 1))
            return tuple(items[: i + 1] + [items[i]] + items[i + 1:])
        if kind == "drop":
            del items[draw(st.integers(0, len(items) - 1))]
            return tuple(items)
        if dataclasses.is_dataclass(item_tp):
            if kind == "extend" and items:  # many copies: an oversized array
                return tuple(items * 50)
            return tuple(items)  # nested fields are slots of their own
        item_tp, _ = _strip_none(item_tp)
        if kind == "extend":
            return tuple(items) + tuple(_scalar(draw, slot.kafka_type, item_tp, None, world) for _ in range(3))
        i = draw(st.integers(0, len(items) - 1))
        items[i] = _scalar(draw, slot.kafka_type, item_tp, items[i], world)
        return tuple(items)
    if dataclasses.is_dataclass(tp):
        return current  # its fields are slots of their own
    return _scalar(draw, slot.kafka_type, tp, current, world)


def at_version(req: Any, version: int) -> Any:
    """The same request at another version kio has (fields that version lacks dropped, new ones zero)."""
    if int(type(req).__version__) == version:
        return req
    return build(_request_schema(int(type(req).__api_key__), version), to_data(req))


def mutate(draw, world: Any, req: Any, n: int) -> tuple[Any, list[str]]:
    """`req` with `n` fields replaced; also the list of what changed (for the failure message)."""
    changes = []
    for _ in range(n):
        candidates = slots(req)
        if not candidates:  # a version without fields (ListGroups v0): nothing to mutate
            break
        # arrays one time in three: a duplicated, emptied or oversized array is where handlers
        # that assume one entry per name or id break, and arrays are few among the fields
        arrays = [c for c in candidates if typing.get_origin(_strip_none(c.hint)[0]) is tuple]
        pool = arrays if arrays and draw(st.integers(0, 2)) == 0 else candidates
        slot = draw(st.sampled_from(pool))
        value = _value(draw, slot, get_at(req, slot.path), world)
        req = set_at(req, slot.path, value)
        shown = repr(value)
        changes.append(f"{'.'.join(map(str, slot.path))} = {shown[:80]}{'...' if len(shown) > 80 else ''}")
    return req, changes
