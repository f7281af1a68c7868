"""Answering as another Kafka: what each release's broker advertises in ApiVersions, and the
group requests it refuses though it advertises them.

The tables were recorded from the running broker of each release with its default configs
(`data/make_kafka_releases.py`): api key -> (min, max) version, and the finalized feature levels.
Refused although advertised, as those brokers answer (recorded the same way):

- before 4.0, ConsumerGroupHeartbeat (KIP-848 is not enabled): UNSUPPORTED_VERSION;
- 4.1, ShareGroupHeartbeat (share groups are a preview, `share.version` is not finalized):
  UNSUPPORTED_VERSION;
- before 4.4, a StreamsGroupHeartbeat naming an instance id (Streams static membership came with
  4.4): INVALID_REQUEST "Static membership is not yet supported.".

An API a release does not advertise at all (Streams groups before 4.2, share groups before 4.1)
makes the broker close the connection, as Kafka does with a request it cannot read.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kgroup.errors import ErrorCode

__all__ = ["RELEASES", "Release", "release"]

_CONSUMER_GROUP_HEARTBEAT, _SHARE_GROUP_HEARTBEAT, _STREAMS_GROUP_HEARTBEAT = 68, 76, 88


@dataclass(frozen=True)
class Release:
    """One Apache Kafka release as its broker answers ApiVersions."""

    version: str
    #: api key -> (min, max) version advertised
    apis: dict[int, tuple[int, int]]
    #: finalized feature -> level (e.g. group.version 1: the consumer protocol)
    features: dict[str, int]

    @property
    def name(self) -> str:
        return ".".join(self.version.split(".")[:2])

    def served(self, kgroup_apis: dict[int, tuple[int, int]]) -> dict[int, tuple[int, int]]:
        """Of the versions kgroup serves, those this release advertises (an API it lacks is left out)."""
        out = {}
        for key, (lo, hi) in kgroup_apis.items():
            theirs = self.apis.get(key)
            if theirs is not None and max(lo, theirs[0]) <= min(hi, theirs[1]):
                out[key] = (max(lo, theirs[0]), min(hi, theirs[1]))
        return out

    def refusal(self, api_key: int, body: Any) -> tuple[ErrorCode, str | None] | None:
        """How this release answers a request it advertises but does not serve (None: it serves it)."""
        minor = tuple(int(x) for x in self.version.split(".")[:2])
        if api_key == _CONSUMER_GROUP_HEARTBEAT and minor < (4, 0):
            return ErrorCode.unsupported_version, None
        if api_key == _SHARE_GROUP_HEARTBEAT and "share.version" not in self.features:
            return ErrorCode.unsupported_version, None
        if api_key == _STREAMS_GROUP_HEARTBEAT and minor < (4, 4) and getattr(body, "instance_id", None) is not None:
            return ErrorCode.invalid_request, "Static membership is not yet supported."
        return None


#: "X.Y" -> the release, recorded from its latest patch release's broker
RELEASES: dict[str, Release] = {
    "3.7": Release("3.7.2", {0: (0, 10), 1: (0, 16), 2: (0, 8), 3: (0, 12), 8: (0, 9), 9: (0, 9), 10: (0, 4), 11: (0, 9), 12: (0, 4), 13: (0, 5), 14: (0, 5), 15: (0, 5), 16: (0, 4), 17: (0, 1), 18: (0, 3), 19: (0, 7), 20: (0, 6), 21: (0, 2), 22: (0, 4), 23: (0, 4), 24: (0, 4), 25: (0, 3), 26: (0, 3), 27: (0, 1), 28: (0, 3), 29: (0, 3), 30: (0, 3), 31: (0, 3), 32: (0, 4), 33: (0, 2), 34: (0, 2), 35: (0, 4), 36: (0, 2), 37: (0, 3), 38: (0, 3), 39: (0, 2), 40: (0, 2), 41: (0, 3), 42: (0, 2), 43: (0, 2), 44: (0, 1), 45: (0, 0), 46: (0, 0), 47: (0, 0), 48: (0, 1), 49: (0, 1), 50: (0, 0), 51: (0, 0), 55: (0, 1), 57: (0, 1), 60: (0, 1), 61: (0, 0), 64: (0, 0), 65: (0, 0), 66: (0, 0), 68: (0, 0), 74: (0, 0)},
                     {'metadata.version': 19}),
    "3.9": Release("3.9.1", {0: (0, 11), 1: (0, 17), 2: (0, 9), 3: (0, 12), 8: (0, 9), 9: (0, 9), 10: (0, 6), 11: (0, 9), 12: (0, 4), 13: (0, 5), 14: (0, 5), 15: (0, 5), 16: (0, 5), 17: (0, 1), 18: (0, 4), 19: (0, 7), 20: (0, 6), 21: (0, 2), 22: (0, 5), 23: (0, 4), 24: (0, 5), 25: (0, 4), 26: (0, 4), 27: (0, 1), 28: (0, 4), 29: (0, 3), 30: (0, 3), 31: (0, 3), 32: (0, 4), 33: (0, 2), 34: (0, 2), 35: (0, 4), 36: (0, 2), 37: (0, 3), 38: (0, 3), 39: (0, 2), 40: (0, 2), 41: (0, 3), 42: (0, 2), 43: (0, 2), 44: (0, 1), 45: (0, 0), 46: (0, 0), 47: (0, 0), 48: (0, 1), 49: (0, 1), 50: (0, 0), 51: (0, 0), 55: (0, 2), 57: (0, 1), 60: (0, 1), 61: (0, 0), 64: (0, 0), 65: (0, 0), 66: (0, 1), 68: (0, 0), 69: (0, 0), 74: (0, 0), 75: (0, 0), 80: (0, 0), 81: (0, 0)},
                     {'kraft.version': 1, 'metadata.version': 21}),
    "4.0": Release("4.0.2", {0: (0, 12), 1: (4, 17), 2: (1, 10), 3: (0, 13), 8: (2, 9), 9: (1, 9), 10: (0, 6), 11: (0, 9), 12: (0, 4), 13: (0, 5), 14: (0, 5), 15: (0, 6), 16: (0, 5), 17: (0, 1), 18: (0, 4), 19: (2, 7), 20: (1, 6), 21: (0, 2), 22: (0, 5), 23: (2, 4), 24: (0, 5), 25: (0, 4), 26: (0, 5), 27: (1, 1), 28: (0, 5), 29: (1, 3), 30: (1, 3), 31: (1, 3), 32: (1, 4), 33: (0, 2), 34: (1, 2), 35: (1, 4), 36: (0, 2), 37: (0, 3), 38: (1, 3), 39: (1, 2), 40: (1, 2), 41: (1, 3), 42: (0, 2), 43: (0, 2), 44: (0, 1), 45: (0, 0), 46: (0, 0), 47: (0, 0), 48: (0, 1), 49: (0, 1), 50: (0, 0), 51: (0, 0), 55: (0, 2), 57: (0, 2), 60: (0, 2), 61: (0, 0), 64: (0, 0), 65: (0, 0), 66: (0, 1), 68: (0, 1), 69: (0, 1), 74: (0, 0), 75: (0, 0), 80: (0, 0), 81: (0, 0)},
                     {'group.version': 1, 'kraft.version': 1, 'metadata.version': 25, 'transaction.version': 2}),
    "4.1": Release("4.1.2", {0: (0, 13), 1: (4, 18), 2: (1, 10), 3: (0, 13), 8: (2, 9), 9: (1, 9), 10: (0, 6), 11: (0, 9), 12: (0, 4), 13: (0, 5), 14: (0, 5), 15: (0, 6), 16: (0, 5), 17: (0, 1), 18: (0, 4), 19: (2, 7), 20: (1, 6), 21: (0, 2), 22: (0, 5), 23: (2, 4), 24: (0, 5), 25: (0, 4), 26: (0, 5), 27: (1, 1), 28: (0, 5), 29: (1, 3), 30: (1, 3), 31: (1, 3), 32: (1, 4), 33: (0, 2), 34: (1, 2), 35: (1, 4), 36: (0, 2), 37: (0, 3), 38: (1, 3), 39: (1, 2), 40: (1, 2), 41: (1, 3), 42: (0, 2), 43: (0, 2), 44: (0, 1), 45: (0, 1), 46: (0, 0), 47: (0, 0), 48: (0, 1), 49: (0, 1), 50: (0, 0), 51: (0, 0), 55: (0, 2), 57: (0, 2), 60: (0, 2), 61: (0, 0), 64: (0, 0), 65: (0, 0), 66: (0, 2), 68: (0, 1), 69: (0, 1), 74: (0, 1), 75: (0, 0), 76: (1, 1), 77: (1, 1), 78: (1, 1), 79: (1, 1), 80: (0, 0), 81: (0, 0), 83: (0, 0), 84: (0, 0), 85: (0, 0), 86: (0, 0), 87: (0, 0), 90: (0, 0), 91: (0, 0), 92: (0, 0)},
                     {'eligible.leader.replicas.version': 1, 'group.version': 1, 'kraft.version': 1, 'metadata.version': 27, 'transaction.version': 2}),
    "4.2": Release("4.2.2", {0: (0, 13), 1: (4, 18), 2: (1, 11), 3: (0, 13), 8: (2, 10), 9: (1, 10), 10: (0, 6), 11: (0, 9), 12: (0, 4), 13: (0, 5), 14: (0, 5), 15: (0, 6), 16: (0, 5), 17: (0, 1), 18: (0, 4), 19: (2, 7), 20: (1, 6), 21: (0, 2), 22: (0, 5), 23: (2, 4), 24: (0, 5), 25: (0, 4), 26: (0, 5), 27: (1, 2), 28: (0, 5), 29: (1, 3), 30: (1, 3), 31: (1, 3), 32: (1, 4), 33: (0, 2), 34: (1, 2), 35: (1, 4), 36: (0, 2), 37: (0, 3), 38: (1, 3), 39: (1, 2), 40: (1, 2), 41: (1, 3), 42: (0, 2), 43: (0, 2), 44: (0, 1), 45: (0, 1), 46: (0, 0), 47: (0, 0), 48: (0, 1), 49: (0, 1), 50: (0, 0), 51: (0, 0), 55: (0, 2), 57: (0, 2), 60: (0, 2), 61: (0, 0), 64: (0, 0), 65: (0, 0), 66: (0, 2), 68: (0, 1), 69: (0, 1), 74: (0, 1), 75: (0, 0), 76: (1, 1), 77: (1, 1), 78: (1, 2), 79: (1, 2), 80: (0, 1), 81: (0, 0), 83: (0, 0), 84: (0, 0), 85: (0, 1), 86: (0, 0), 87: (0, 1), 88: (0, 0), 89: (0, 0), 90: (0, 1), 91: (0, 0), 92: (0, 0)},
                     {'eligible.leader.replicas.version': 1, 'group.version': 1, 'kraft.version': 1, 'metadata.version': 29, 'share.version': 1, 'streams.version': 1, 'transaction.version': 2}),
    "4.3": Release("4.3.1", {0: (0, 13), 1: (4, 18), 2: (1, 11), 3: (0, 13), 8: (2, 10), 9: (1, 10), 10: (0, 6), 11: (0, 9), 12: (0, 4), 13: (0, 5), 14: (0, 5), 15: (0, 6), 16: (0, 5), 17: (0, 1), 18: (0, 4), 19: (2, 7), 20: (1, 6), 21: (0, 2), 22: (0, 5), 23: (2, 4), 24: (0, 5), 25: (0, 4), 26: (0, 5), 27: (1, 2), 28: (0, 5), 29: (1, 3), 30: (1, 3), 31: (1, 3), 32: (1, 4), 33: (0, 2), 34: (1, 2), 35: (1, 5), 36: (0, 2), 37: (0, 3), 38: (1, 3), 39: (1, 2), 40: (1, 2), 41: (1, 3), 42: (0, 2), 43: (0, 2), 44: (0, 1), 45: (0, 1), 46: (0, 0), 47: (0, 0), 48: (0, 1), 49: (0, 1), 50: (0, 0), 51: (0, 0), 55: (0, 2), 57: (0, 2), 60: (0, 2), 61: (0, 0), 64: (0, 0), 65: (0, 0), 66: (0, 2), 68: (0, 1), 69: (0, 1), 74: (0, 1), 75: (0, 0), 76: (1, 1), 77: (1, 1), 78: (1, 2), 79: (1, 2), 80: (0, 1), 81: (0, 0), 83: (0, 0), 84: (0, 0), 85: (0, 1), 86: (0, 0), 87: (0, 1), 88: (0, 0), 89: (0, 0), 90: (0, 1), 91: (0, 0), 92: (0, 0)},
                     {'eligible.leader.replicas.version': 1, 'group.version': 1, 'kraft.version': 1, 'metadata.version': 30, 'share.version': 1, 'streams.version': 1, 'transaction.version': 2}),
    "4.4": Release("4.4.0", {0: (0, 13), 1: (4, 18), 2: (1, 11), 3: (0, 13), 8: (2, 10), 9: (1, 10), 10: (0, 6), 11: (0, 9), 12: (0, 4), 13: (0, 5), 14: (0, 5), 15: (0, 6), 16: (0, 5), 17: (0, 1), 18: (0, 5), 19: (2, 7), 20: (1, 6), 21: (0, 2), 22: (0, 5), 23: (2, 4), 24: (0, 5), 25: (0, 4), 26: (0, 5), 27: (1, 2), 28: (0, 6), 29: (1, 3), 30: (1, 3), 31: (1, 3), 32: (1, 4), 33: (0, 2), 34: (1, 2), 35: (1, 5), 36: (0, 2), 37: (0, 3), 38: (1, 3), 39: (1, 2), 40: (1, 2), 41: (1, 3), 42: (0, 3), 43: (0, 2), 44: (0, 1), 45: (0, 1), 46: (0, 0), 47: (0, 0), 48: (0, 1), 49: (0, 1), 50: (0, 0), 51: (0, 0), 55: (0, 2), 57: (0, 2), 60: (0, 2), 61: (0, 0), 64: (0, 0), 65: (0, 0), 66: (0, 2), 68: (0, 1), 69: (0, 1), 74: (0, 1), 75: (0, 0), 76: (1, 1), 77: (1, 1), 78: (1, 2), 79: (1, 2), 80: (0, 1), 81: (0, 0), 83: (0, 0), 84: (0, 0), 85: (0, 1), 86: (0, 0), 87: (0, 1), 88: (0, 1), 89: (0, 1), 90: (0, 1), 91: (0, 0), 92: (0, 0), 93: (0, 0), 94: (0, 0)},
                     {'eligible.leader.replicas.version': 1, 'group.version': 1, 'kraft.version': 1, 'metadata.version': 33, 'share.version': 2, 'streams.version': 1, 'transaction.version': 2}),
}


def release(name: str) -> Release:
    """The release "X.Y" (one of RELEASES), or a clear error."""
    try:
        return RELEASES[name]
    except KeyError:
        raise ValueError(f"kgroup can answer as Kafka {', '.join(RELEASES)}, not {name!r}") from None
