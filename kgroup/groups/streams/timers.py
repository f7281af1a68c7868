"""The timer keys of a Streams group and its members, and cancelling a member's: what the
group (`group`), the heartbeat (`protocol`), the classic members' hooks (`classic_members`)
and the conversions (`migration`) all need, below all of them."""
from __future__ import annotations

from typing import TYPE_CHECKING

from kgroup.runtime import group_timer

if TYPE_CHECKING:
    from kgroup.coordinator import Coordinator


def session_key(group_id: str, member_id: str) -> str:
    return group_timer(f"streams-session-{group_id}-{member_id}", group_id)


def rebalance_key(group_id: str, member_id: str) -> str:
    return group_timer(f"streams-rebalance-{group_id}-{member_id}", group_id)


def initial_delay_key(group_id: str) -> str:
    """The group's initial-rebalance-delay timer (KAFKA-19829)."""
    return group_timer(f"streams-initial-delay-{group_id}", group_id)


def cancel_timers(c: "Coordinator", group_id: str, member_id: str) -> None:
    """A member's session and rebalance timers."""
    c.timers.cancel(session_key(group_id, member_id))
    c.timers.cancel(rebalance_key(group_id, member_id))


__all__ = ["session_key", "rebalance_key", "initial_delay_key", "cancel_timers"]
