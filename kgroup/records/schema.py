"""A tiny schema language for Kafka's generated message structs.

Kafka describes every coordinator record key and value in a JSON file
(`ConsumerGroupMetadataValue.json`, ...). `definitions.py` restates those
files in this DSL; `codec.py` compiles them into decoders, encoders and JSON
renderers, and `structs.py` builds the typed classes.

    Struct("Endpoint",
        Field("Host", "string"),
        Field("Port", "uint16"))

Field types: the primitive names below, `"[]<primitive>"`, a `Struct`, or a
one-element list `[SomeStruct]` for an array of structs.
"""
from __future__ import annotations

import re
import uuid
from dataclasses import dataclass, field as dc_field
from typing import Any

ZERO_UUID = uuid.UUID(int=0)

# name -> (struct format char, byte width); uuid is read as 16 raw bytes.
FIXED_TYPES: dict[str, tuple[str, int]] = {
    "int8": ("b", 1),
    "int16": ("h", 2),
    "uint16": ("H", 2),
    "int32": ("i", 4),
    "int64": ("q", 8),
    "bool": ("?", 1),
    "float64": ("d", 8),
    "uuid": ("16s", 16),
}
VARIABLE_TYPES = ("string", "bytes")
PRIMITIVES = frozenset(FIXED_TYPES) | frozenset(VARIABLE_TYPES)

# Kafka's defaults when a field gives none (FieldSpec.fieldDefault).
_IMPLICIT_DEFAULTS: dict[str, Any] = {
    "int8": 0, "int16": 0, "uint16": 0, "int32": 0, "int64": 0,
    "bool": False, "float64": 0.0, "uuid": ZERO_UUID, "string": "", "bytes": b"",
}


class _Unset:
    def __repr__(self) -> str:
        return "UNSET"


UNSET: Any = _Unset()


@dataclass(frozen=True)
class Versions:
    """An inclusive version range; `hi` None means open-ended ("3+")."""

    lo: int
    hi: int | None

    @classmethod
    def parse(cls, text: str | None) -> "Versions":
        if text is None or text == "none":
            return NO_VERSIONS
        m = re.fullmatch(r"(\d+)(\+|-(\d+))?", text)
        if not m:
            raise ValueError(f"bad version range {text!r}")
        lo = int(m.group(1))
        if m.group(2) == "+":
            return cls(lo, None)
        return cls(lo, int(m.group(3)) if m.group(3) else lo)

    def __contains__(self, version: int) -> bool:
        return self.lo <= version and (self.hi is None or version <= self.hi)

    def __str__(self) -> str:
        if self.lo > (self.hi if self.hi is not None else self.lo):
            return "none"
        if self.hi is None:
            return f"{self.lo}+"
        return str(self.lo) if self.lo == self.hi else f"{self.lo}-{self.hi}"


NO_VERSIONS = Versions(1, 0)  # empty: lo > hi


def snake_case(name: str) -> str:
    """Kafka field name -> Python attribute: `SubscribedTopicNames` -> `subscribed_topic_names`."""
    s = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    s = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", s)
    return s.lower()


def json_name(name: str) -> str:
    """Kafka field name -> JSON key (Kafka's camelCaseName: first letter lower-cased)."""
    return name[:1].lower() + name[1:]


@dataclass(eq=False)
class Field:
    """One field of a struct, named exactly as in Kafka's JSON schema."""

    name: str
    type: Any
    versions: str = "0+"
    nullable: str | None = None        # nullableVersions
    tag: int | None = None
    tagged: str | None = None          # taggedVersions; defaults to `versions` when a tag is given
    default: Any = UNSET
    # filled in by __post_init__
    attr: str = dc_field(init=False)
    json_key: str = dc_field(init=False)
    kind: str = dc_field(init=False)             # "prim", "struct" or "array"
    elem: Any = dc_field(init=False)             # primitive name or Struct (for kind struct/array)
    version_range: Versions = dc_field(init=False)
    nullable_range: Versions = dc_field(init=False)
    tagged_range: Versions = dc_field(init=False)

    def __post_init__(self) -> None:
        self.attr = snake_case(self.name)
        self.json_key = json_name(self.name)
        t = self.type
        if isinstance(t, Struct):
            self.kind, self.elem = "struct", t
        elif isinstance(t, list) and len(t) == 1 and isinstance(t[0], Struct):
            self.kind, self.elem = "array", t[0]
        elif isinstance(t, str) and t.startswith("[]") and t[2:] in PRIMITIVES:
            self.kind, self.elem = "array", t[2:]
        elif isinstance(t, str) and t in PRIMITIVES:
            self.kind, self.elem = "prim", t
        else:
            raise ValueError(f"field {self.name}: unknown type {t!r}")
        self.version_range = Versions.parse(self.versions)
        self.nullable_range = Versions.parse(self.nullable)
        if self.tag is not None and self.tagged is None:
            self.tagged = self.versions
        self.tagged_range = Versions.parse(self.tagged)
        if (self.tag is None) != (self.tagged is None):
            raise ValueError(f"field {self.name}: tag and tagged versions go together")

    @property
    def fixed(self) -> bool:
        """Whether the field has a fixed width (int, bool, float, uuid)."""
        return self.kind == "prim" and self.elem in FIXED_TYPES

    def is_nullable(self, version: int) -> bool:
        return version in self.nullable_range

    def is_tagged(self, version: int) -> bool:
        return version in self.tagged_range

    def default_value(self) -> Any:
        """The Python value of this field's default (a fresh list for arrays)."""
        if self.default is not UNSET:
            return list(self.default) if isinstance(self.default, list) else self.default
        if self.kind == "array":
            return []
        if self.kind == "struct":
            return self.elem.cls()
        return _IMPLICIT_DEFAULTS[self.elem]

    def default_is_fresh_list(self) -> bool:
        return self.kind == "array" and (self.default is UNSET or isinstance(self.default, list))


class Struct:
    """A named list of fields; `cls` is set to the generated Python class."""

    def __init__(self, name: str, *fields: Field) -> None:
        self.name = name
        self.fields = list(fields)
        self.cls: Any = None
        seen: set[str] = set()
        for f in self.fields:
            if f.attr in seen:
                raise ValueError(f"{name}: duplicate field {f.name}")
            seen.add(f.attr)

    def nested(self) -> list["Struct"]:
        """Every struct used by this one's fields, depth first, without duplicates."""
        out: list[Struct] = []
        for f in self.fields:
            if isinstance(f.elem, Struct):
                for s in [*f.elem.nested(), f.elem]:
                    if s not in out:
                        out.append(s)
        return out

    def __repr__(self) -> str:
        return f"Struct({self.name!r})"


class Message(Struct):
    """A top-level key or value struct with its valid and flexible version ranges."""

    def __init__(self, name: str, *fields: Field, versions: str = "0", flexible: str = "none") -> None:
        super().__init__(name, *fields)
        self.valid = Versions.parse(versions)
        self.flexible = Versions.parse(flexible)
        hi = self.valid.hi if self.valid.hi is not None else self.valid.lo
        self.version_list = tuple(range(self.valid.lo, hi + 1))

    def is_flexible(self, version: int) -> bool:
        return version in self.flexible


@dataclass(frozen=True, eq=False)
class RecordSchema:
    """One coordinator record type: the int16 key prefix and its key/value structs."""

    type: int
    name: str
    key: Message
    value: Message
    default_version: int = 0
    topic: str = "__consumer_offsets"
    #: earlier layouts of the value's version(s) (a schema changed without a version bump):
    #: tried in order when `value` does not read a value's bytes exactly
    earlier_values: tuple[Message, ...] = ()
