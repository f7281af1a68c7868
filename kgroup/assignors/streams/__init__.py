"""KIP-1071's server-side task assignors: `sticky` and `highly_available`.

    from kgroup.assignors.streams import GroupSpec, MemberSpec, SubtopologySpec, TaskSets, get_task_assignor
    spec = GroupSpec(members={"A": MemberSpec("A", "p1", 0)}, subtopologies={"0": SubtopologySpec(4, False)})
    get_task_assignor("sticky").assign(spec)["A"].active      # {"0": frozenset({0, 1, 2, 3})}
"""
from __future__ import annotations

from .api import (GroupSpec, MemberSpec, SubtopologySpec, TaskAssignor, TaskAssignorException, TaskId, TaskSets,
                  is_caught_up)
from .fixed import TASK_ASSIGNOR_OVERRIDE, FixedTaskAssignor
from .highly_available import HighlyAvailableTaskAssignor
from .sticky import StickyTaskAssignor

STREAMS_ASSIGNORS: dict[str, TaskAssignor] = {"sticky": StickyTaskAssignor(),
                                              "highly_available": HighlyAvailableTaskAssignor()}


def get_task_assignor(name: str) -> TaskAssignor:
    try:
        return STREAMS_ASSIGNORS[name]
    except KeyError:
        raise ValueError(f"unknown streams task assignor {name!r}; known: {', '.join(STREAMS_ASSIGNORS)}") from None


__all__ = ["GroupSpec", "MemberSpec", "SubtopologySpec", "TaskSets", "TaskId", "TaskAssignor", "TaskAssignorException",
           "is_caught_up", "StickyTaskAssignor", "HighlyAvailableTaskAssignor", "STREAMS_ASSIGNORS",
           "get_task_assignor", "FixedTaskAssignor", "TASK_ASSIGNOR_OVERRIDE"]
