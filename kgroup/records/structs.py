"""Typed, immutable struct classes generated from the schema definitions.

Every key, value and nested struct becomes a class such as `OffsetCommitValue`
or `GroupMetadataValue.MemberMetadata` (nested structs hang off the top-level
value/key class, as in Kafka's generated Java). Attributes are the schema's
field names in snake_case; the constructor takes keywords with Kafka's defaults.

Instances are tuples underneath (one slot per field, then the unknown tagged
fields): that makes construction in the decoders a single `tuple.__new__` and
attribute reads C-speed. The tuple nature is an implementation detail: compare
and hash by class and fields, build new values with `.replace(**changes)`.
Array fields hold lists; treat them as read-only (decoded keys are shared).
"""
from __future__ import annotations

import types
from typing import Any, ClassVar, Mapping

from .codec import EMPTY_TAGS
from .schema import UNSET, Field, Message, Struct

try:  # the C accessor behind collections.namedtuple fields
    from collections import _tuplegetter  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - other Pythons
    from operator import itemgetter as _itemgetter

    def _tuplegetter(index: int, doc: str | None) -> Any:
        return property(_itemgetter(index), doc=doc)


_tnew = tuple.__new__
_RESERVED = {"replace", "to_dict", "count", "index", "unknown_tagged_fields"}


class _Fresh:
    """Default marker for array fields: each instance gets its own new list."""

    def __repr__(self) -> str:
        return "[]"


_FRESH = _Fresh()


def _restore(cls: type, values: tuple, unknown: dict) -> "StructBase":
    return _tnew(cls, (*values, types.MappingProxyType(unknown) if unknown else EMPTY_TAGS))


class StructBase(tuple):
    """Base class of the generated struct classes (see the module docstring)."""

    __slots__ = ()
    SCHEMA: ClassVar[Struct]
    FIELDS: ClassVar[tuple[str, ...]]   # attribute names in wire order
    _INDEX: ClassVar[dict[str, int]]

    unknown_tagged_fields: Mapping[int, bytes]  # tag -> raw payload, kept for re-encoding

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable; use .replace({name}=...)")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def replace(self, **changes: Any) -> "StructBase":
        """A copy with some fields changed (`unknown_tagged_fields` may be given too)."""
        unknown = changes.pop("unknown_tagged_fields", self[-1])
        new = type(self)(**{**self.to_dict(), **changes})
        if unknown:
            return _restore(type(self), new[:-1], dict(unknown))
        return new

    def to_dict(self) -> dict[str, Any]:
        """Field name -> value (shallow; nested structs stay structs)."""
        return dict(zip(self.FIELDS, self))

    def __eq__(self, other: object) -> bool:
        return other.__class__ is self.__class__ and tuple.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return hash(self[:-1])

    def __repr__(self) -> str:
        parts = [f"{name}={value!r}" for name, value in zip(self.FIELDS, self)]
        if self[-1]:
            parts.append(f"unknown_tagged_fields={dict(self[-1])!r}")
        return f"{type(self).__name__}({', '.join(parts)})"

    def __reduce__(self) -> tuple:
        return (_restore, (type(self), tuple(self[:-1]), dict(self[-1])))

    def __copy__(self) -> "StructBase":
        return self


def _type_name(f: Field) -> str:
    if f.kind == "prim":
        return f.elem
    if f.kind == "struct":
        return f.elem.name
    return "[]" + (f.elem.name if isinstance(f.elem, Struct) else f.elem)


def _doc(s: Struct) -> str:
    lines = [f"Kafka struct `{s.name}`; fields in wire order:", ""]
    for f in s.fields:
        notes = []
        if str(f.version_range) != "0+":
            notes.append(f"versions {f.version_range}")
        if f.nullable is not None:
            notes.append(f"nullable {f.nullable_range}")
        if f.tag is not None:
            notes.append(f"tag {f.tag}")
        if f.default is not UNSET:
            notes.append(f"default {f.default!r}")
        extra = f" ({', '.join(notes)})" if notes else ""
        lines.append(f"    {f.attr}: {_type_name(f)}{extra}")
    return "\n".join(lines)


def make_struct_class(s: Struct, qualname: str) -> type:
    """Create (and remember on `s.cls`) the Python class for one struct."""
    ns: dict[str, Any] = {"_tnew": _tnew, "_FRESH": _FRESH, "_EMPTY": EMPTY_TAGS, "_list": list}
    params, exprs = [], []
    for f in s.fields:
        a = f.attr
        if a in _RESERVED or a.startswith("_"):
            raise ValueError(f"{s.name}.{f.name}: attribute name {a!r} is reserved")
        if f.default_is_fresh_list():
            params.append(f"{a}=_FRESH")
        else:
            ns[f"_d_{a}"] = f.default_value()
            params.append(f"{a}=_d_{a}")
        if f.kind == "array":
            # accept any iterable, store a list (equality is list-to-list)
            exprs.append(f"([] if {a} is _FRESH else {a} if {a}.__class__ is list or {a} is None "
                         f"else _list({a}))")
        else:
            exprs.append(a)
    sig = ", ".join(params)
    src = (f"def __new__(cls{', *, ' + sig if sig else ''}):\n"
           f"    return _tnew(cls, ({''.join(e + ', ' for e in exprs)}_EMPTY))\n")
    exec(compile(src, f"<kgroup.records {s.name}.__new__>", "exec"), ns)
    new = ns["__new__"]

    attrs: dict[str, Any] = {
        "__slots__": (),
        "__new__": new,
        "__doc__": _doc(s),
        "__module__": "kgroup.records",
        "__qualname__": qualname,
        "SCHEMA": s,
        "FIELDS": tuple(f.attr for f in s.fields),
        "_INDEX": {f.attr: i for i, f in enumerate(s.fields)},
        "unknown_tagged_fields": _tuplegetter(len(s.fields), "Unknown tagged fields: tag -> raw bytes."),
    }
    for i, f in enumerate(s.fields):
        attrs[f.attr] = _tuplegetter(i, f"{f.name} ({_type_name(f)})")
    cls = type(s.name, (StructBase,), attrs)
    s.cls = cls
    return cls


def build_message_classes(m: Message) -> type:
    """Classes for a top-level key/value and every struct nested in it."""
    for nested in m.nested():
        if nested.cls is None:
            make_struct_class(nested, f"{m.name}.{nested.name}")
    cls = make_struct_class(m, m.name)
    for nested in m.nested():
        setattr(cls, nested.name, nested.cls)
    return cls


__all__ = ["StructBase", "make_struct_class", "build_message_classes"]
