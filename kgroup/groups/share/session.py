"""Share sessions (KIP-932): the share-partitions a member fetches from, kept by the broker
between ShareFetch requests like an incremental fetch session (Kafka's ShareSessionCache).

Soft state: `c.soft_state[SESSIONS]`. A session is keyed by (group id, member id); epoch 0
opens one (replacing an earlier one of the same member), -1 closes it, any other epoch must
be the session's current one and moves it on by one.
"""
from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

from kgroup.errors import ErrorCode

if TYPE_CHECKING:
    from kgroup.coordinator import Coordinator

#: the key of the session cache in `Coordinator.soft_state`
SESSIONS = "share.sessions"
INITIAL_EPOCH, FINAL_EPOCH = 0, -1
_INT_MAX = 2**31 - 1


def next_epoch(epoch: int) -> int:
    """The epoch after `epoch` (Kafka's ShareRequestMetadata.nextEpoch: wraps to 1)."""
    return 1 if epoch >= _INT_MAX else epoch + 1


class ShareSession:
    """One member's share session: its share-partitions, in the order they were added."""

    __slots__ = ("group_id", "member_id", "epoch", "partitions", "rotation", "created_ms")

    def __init__(self, group_id: str, member_id: str, created_ms: int) -> None:
        self.group_id = group_id
        self.member_id = member_id
        #: the epoch the next request must carry
        self.epoch = 1
        #: (topic id, partition) -> None, insertion-ordered
        self.partitions: dict[tuple[uuid.UUID, int], None] = {}
        #: where the next fetch starts in `partitions` (rotated so none starves)
        self.rotation = 0
        self.created_ms = created_ms

    def rotated(self) -> list[tuple[uuid.UUID, int]]:
        """The session's partitions starting at the rotation point; the point moves on by one."""
        keys = list(self.partitions)
        if not keys:
            return keys
        start = self.rotation % len(keys)
        self.rotation = start + 1
        return keys[start:] + keys[:start]

    def __repr__(self) -> str:
        return f"ShareSession({self.group_id!r}, {self.member_id!r}, epoch={self.epoch}, {len(self.partitions)} partitions)"


class ShareSessionCache:
    """The broker's share sessions, at most group.share.max.share.sessions (the draft's
    max.share.session.cache.slots)."""

    def __init__(self, max_sessions: int) -> None:
        self.max_sessions = max_sessions
        self.sessions: dict[tuple[str, str], ShareSession] = {}

    def get(self, group_id: str, member_id: str) -> ShareSession | None:
        return self.sessions.get((group_id, member_id))

    def open(self, group_id: str, member_id: str, now: int) -> ShareSession | None:
        """A new session (epoch 0 request); None when the cache is full
        (SHARE_SESSION_LIMIT_REACHED). An earlier session of the member is replaced."""
        key = (group_id, member_id)
        self.sessions.pop(key, None)
        if len(self.sessions) >= self.max_sessions:
            return None
        session = self.sessions[key] = ShareSession(group_id, member_id, now)
        return session

    def close(self, group_id: str, member_id: str) -> ShareSession | None:
        return self.sessions.pop((group_id, member_id), None)

    def check(self, group_id: str, member_id: str, epoch: int) -> tuple[ShareSession | None, ErrorCode]:
        """The session a request with `epoch` (not 0) continues, or the error: no session
        (SHARE_SESSION_NOT_FOUND) or another epoch (INVALID_SHARE_SESSION_EPOCH)."""
        session = self.sessions.get((group_id, member_id))
        if session is None:
            return None, ErrorCode.share_session_not_found
        if epoch != FINAL_EPOCH and epoch != session.epoch:
            return None, ErrorCode.invalid_share_session_epoch
        return session, ErrorCode.none

    def __len__(self) -> int:
        return len(self.sessions)


def sessions(c: "Coordinator") -> ShareSessionCache:
    """The share session cache in `c.soft_state` (created on first use)."""
    cache = c.soft_state.get(SESSIONS)
    if cache is None:
        cache = c.soft_state[SESSIONS] = ShareSessionCache(c.config["group.share.max.share.sessions"])
    return cache


__all__ = ["SESSIONS", "INITIAL_EPOCH", "FINAL_EPOCH", "next_epoch", "ShareSession", "ShareSessionCache", "sessions"]
