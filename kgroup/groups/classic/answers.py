"""The shapes of JoinGroup and SyncGroup answers, with Kafka's defaults for the fields not given.

Apart from the handlers so that whoever answers for the classic protocol without running it (the
authorizer's refusals, classic members inside a modern group) builds the same answers.
"""
from __future__ import annotations

from kgroup.errors import ErrorCode
from kgroup.runtime import PendingResponse


def join_data(member_id: str = "", error_code: ErrorCode = ErrorCode.none, *, generation_id: int = -1,
              protocol_type: str | None = None, protocol_name: str | None = None, leader: str = "",
              skip_assignment: bool = False, members: list | None = None) -> dict:
    """A JoinGroup answer with Kafka's defaults for the fields not given."""
    return {"error_code": error_code, "generation_id": generation_id, "protocol_type": protocol_type,
            "protocol_name": protocol_name, "leader": leader or "", "skip_assignment": skip_assignment,
            "member_id": member_id, "members": members or []}


def sync_data(error_code: ErrorCode = ErrorCode.none, assignment: bytes = b"", *,
              protocol_type: str | None = None, protocol_name: str | None = None) -> dict:
    """A SyncGroup answer."""
    return {"error_code": error_code, "assignment": assignment, "protocol_type": protocol_type,
            "protocol_name": protocol_name}


class JoinFuture(PendingResponse):
    """JoinGroup answers: versions before 7 have a non-nullable protocol name."""

    def complete(self, data: dict) -> bool:
        if self.version < 7 and data.get("protocol_name") is None:
            data = {**data, "protocol_name": ""}
        return super().complete(data)


__all__ = ["join_data", "sync_data", "JoinFuture"]
