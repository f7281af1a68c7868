"""The timer keys of a consumer group's members and cancelling them: what the heartbeat
(`protocol`), the classic members' hooks (`classic_members`) and the conversions
(`migration`) all need, below all three."""
from __future__ import annotations

from typing import TYPE_CHECKING

from kgroup.runtime import group_timer

if TYPE_CHECKING:
    from kgroup.coordinator import Coordinator


def session_key(group_id: str, member_id: str) -> str:
    return group_timer(f"consumer-session-{group_id}-{member_id}", group_id)


def rebalance_key(group_id: str, member_id: str) -> str:
    return group_timer(f"consumer-rebalance-{group_id}-{member_id}", group_id)


def cancel_timers(c: "Coordinator", group_id: str, member_id: str) -> None:
    """A member's session, rebalance and (classic members) join and sync timers."""
    for key in (session_key(group_id, member_id), rebalance_key(group_id, member_id),
                f"consumer-join-{group_id}-{member_id}", f"consumer-sync-{group_id}-{member_id}"):
        c.timers.cancel(key)


__all__ = ["session_key", "rebalance_key", "cancel_timers"]
