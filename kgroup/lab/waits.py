"""Waiting on a group, not on sleeps: what a group looks like now (`GroupView`), whether it holds
a condition (`holds`), and when in a log's history it first did (`first_moment`).

    server.wait_group("g", state="Stable", members=3)                 # live (kgroup.serve.Server)
    first_moment("dump/", "g", state="Stable", members=3)             # a recorded run or a real dump
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["GroupView", "Moment", "first_moment", "holds", "view"]


@dataclass(frozen=True)
class GroupView:
    """A group as its coordinator holds it: type, state, members, and its epoch (the group epoch
    of a consumer, share or Streams group; a classic group's generation)."""

    group_id: str
    type: str
    state: str
    members: tuple[str, ...]
    epoch: int
    #: the target assignment's epoch (modern groups; a classic group: its generation)
    assignment_epoch: int


def view(coordinator: Any, group_id: str) -> GroupView | None:
    """The group on `coordinator` (None when it has no such group)."""
    group = coordinator.groups.get(group_id)
    if group is None:
        return None
    epoch = getattr(group, "group_epoch", None)
    if epoch is None:
        epoch = getattr(group, "generation_id", 0)
    return GroupView(group_id, str(group.type), group.state, tuple(sorted(group.members)), epoch,
                     getattr(group, "assignment_epoch", epoch))


def holds(v: GroupView | None, *, state: str | None = None, members: int | None = None,
          epoch_at_least: int | None = None) -> bool:
    """Whether the group exists and is in `state` (case does not matter) with `members` members
    and an epoch of at least `epoch_at_least` (each only when given)."""
    if v is None:
        return False
    if state is not None and v.state.lower() != state.lower():
        return False
    if members is not None and len(v.members) != members:
        return False
    return epoch_at_least is None or v.epoch >= epoch_at_least


@dataclass(frozen=True)
class Moment:
    """Where in `__consumer_offsets` a condition first held: right after the entry at `offset` of
    `partition`, written at `timestamp` (ms); `view` is the group then."""

    partition: int
    offset: int
    timestamp: int
    view: GroupView


def first_moment(source: Any, group_id: str, *, state: str | None = None, members: int | None = None,
                 epoch_at_least: int | None = None, **coordinator_kw: Any) -> Moment | None:
    """The first moment of `source`'s history when the group held the condition (see `holds`),
    None if it never did. `source`: a `Coordinator` (its log, e.g. a recorded `kgroup serve` run),
    an `OffsetsLog`, or a directory of `__consumer_offsets-N` segments (a real dump)."""
    from kgroup.coordinator import Coordinator
    log = source.log if isinstance(source, Coordinator) else source
    for entry, c in Coordinator.step_through(log, partition_of=group_id, **coordinator_kw):
        v = view(c, group_id)
        if holds(v, state=state, members=members, epoch_at_least=epoch_at_least):
            return Moment(entry.partition, entry.offset, entry.timestamp, v)
    return None
