"""A task assignor that returns a given target assignment (for worked examples and what-ifs).

KIP-1071's migration example *states* its target assignments (it illustrates the protocol,
not an assignor); `FixedTaskAssignor` lets a scenario plug them in and watch how the
coordinator reconciles members towards them. A coordinator uses it in place of the
configured assignor when it finds it in its soft state (`TASK_ASSIGNOR_OVERRIDE`):

    c.soft_state[TASK_ASSIGNOR_OVERRIDE] = FixedTaskAssignor({"A": TaskSets.of(active=[("0", 0)])})
"""
from __future__ import annotations

from collections.abc import Mapping

from .api import GroupSpec, TaskSets


#: the key of `Coordinator.soft_state` under which a task assignor replaces the configured one
TASK_ASSIGNOR_OVERRIDE = "streams.task_assignor_override"


class FixedTaskAssignor:
    """Returns `assignment` (member id -> TaskSets) for the members in the group; members it
    does not name get nothing, and named members not (yet) in the group are left out, so one
    stated target serves while members join one by one. `assignment` may be replaced between
    assignments (the next target the example gives)."""

    name = "fixed"

    def __init__(self, assignment: Mapping[str, TaskSets] | None = None) -> None:
        self.assignment: dict[str, TaskSets] = dict(assignment or {})

    def assign(self, spec: GroupSpec) -> dict[str, TaskSets]:
        return {mid: self.assignment.get(mid, TaskSets()) for mid in spec.members}

    def __repr__(self) -> str:
        return f"FixedTaskAssignor({len(self.assignment)} members)"


__all__ = ["FixedTaskAssignor", "TASK_ASSIGNOR_OVERRIDE"]
