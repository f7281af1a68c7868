"""Kafka's textual form of a UUID (`Uuid.toString()`): 22 characters of unpadded base64url."""
from __future__ import annotations

import base64
import binascii
import uuid

from .schema import ZERO_UUID

__all__ = ["ZERO_UUID", "uuid_to_kafka_str", "kafka_str_to_uuid"]

_b64e = base64.urlsafe_b64encode
_b64d = base64.urlsafe_b64decode


def uuid_to_kafka_str(u: uuid.UUID) -> str:
    """`UUID` -> Kafka's form, e.g. ``'MKXx1fIkQy2J9jXHhK8m1w'``."""
    return _b64e(u.bytes)[:22].decode("ascii")


def kafka_str_to_uuid(s: str) -> uuid.UUID:
    """Kafka's base64url form (as printed by Kafka tools) -> `UUID`."""
    if not isinstance(s, str) or len(s) != 22:
        raise ValueError(f"not a Kafka uuid (22 base64url characters): {s!r}")
    try:
        raw = _b64d(s + "==")
    except (binascii.Error, ValueError):
        raise ValueError(f"not a Kafka uuid (22 base64url characters): {s!r}") from None
    if len(raw) != 16 or _b64e(raw)[:22].decode("ascii") != s:
        raise ValueError(f"not a Kafka uuid (22 base64url characters): {s!r}")
    return uuid.UUID(bytes=raw)


# Topic ids repeat across records; decoding shares one UUID object per distinct id.
_CACHE: dict[bytes, uuid.UUID] = {}
_CACHE_LIMIT = 1 << 16


def uuid_from_bytes(raw: bytes) -> uuid.UUID:
    u = _CACHE.get(raw)
    if u is None:
        if len(_CACHE) >= _CACHE_LIMIT:
            _CACHE.clear()
        u = _CACHE[raw] = uuid.UUID(bytes=raw)
    return u
