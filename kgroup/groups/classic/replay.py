"""Replay of GroupMetadata records (type 2): the classic group as Kafka's loader rebuilds it."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kgroup import records as R
from kgroup.runtime import replays

from .group import ClassicGroup, ClassicGroupState
from .protocol import heartbeat_key

if TYPE_CHECKING:
    from kgroup.coordinator import Coordinator


@replays(R.GroupMetadata)
def replay_group_metadata(c: "Coordinator", entry: Any) -> None:
    record = entry.record
    group_id = record.key.group
    if record.value is None:
        group = c.groups.pop(group_id, None)
        if isinstance(group, ClassicGroup):
            group.current_state = ClassicGroupState.DEAD
            for member_id in group.members:
                c.timers.cancel(heartbeat_key(group_id, member_id))
        return
    # Kafka's loader builds the group afresh from each GroupMetadata value.
    c.groups[group_id] = ClassicGroup.from_metadata(group_id, record.value)
