"""A JSON document: Kafka's exact text, and the object it encodes."""
from __future__ import annotations

import json
import re
from typing import Any

# Jackson writes control characters as \u00XX with upper-case hex, Python with lower-case.
_LOWER_HEX_ESCAPE = re.compile(r"(?<!\\)((?:\\\\)*)\\u00([0-9a-f]{2})")
_ENCODE = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode  # built once, not per call


def json_text(obj: Any) -> str:
    """Compact JSON as Jackson prints it (raw UTF-8, no spaces, key order kept, upper-case
    hex in \\u00XX escapes): the text of `JsonDoc.dumps(obj)`."""
    text = _ENCODE(obj)
    if "\\u00" in text:
        text = _LOWER_HEX_ESCAPE.sub(lambda m: m.group(1) + "\\u00" + m.group(2).upper(), text)
    return text


class JsonDoc(str):
    """The string is the compact JSON text (as Kafka/Jackson prints it); indexing,
    `get`, `keys`, `items` and `values` read the parsed object, `.data`.
    ``doc == "text"`` compares text, ``doc == {...}`` compares the parsed object.
    Everything else is plain `str` (`in` is a substring test, `len` counts characters)."""

    data: Any

    def __new__(cls, text: str, data: Any = None) -> "JsonDoc":
        doc = super().__new__(cls, text)
        doc.data = json.loads(text) if data is None else data
        return doc

    @classmethod
    def dumps(cls, obj: Any) -> "JsonDoc":
        """Serialize like Jackson's compact output (raw UTF-8, no spaces, key order kept)."""
        return cls(json_text(obj), obj)

    def __getitem__(self, key: Any) -> Any:
        return self.data[key]

    def get(self, key: Any, default: Any = None) -> Any:
        return self.data.get(key, default)

    def keys(self):
        return self.data.keys()

    def items(self):
        return self.data.items()

    def values(self):
        return self.data.values()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            return str.__eq__(self, other)
        return self.data == other

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    __hash__ = str.__hash__

    def __repr__(self) -> str:
        return f"JsonDoc({str.__repr__(self)})"

    def __reduce__(self) -> tuple:
        return (JsonDoc, (str(self),))
