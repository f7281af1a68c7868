"""A task assignor that returns a given target assignment (for worked examples and what-ifs).

KIP-1071's migration example *states* its target assignments (it illustrates the protocol,
not an assignor); `FixedTaskAssignor` lets a scenario plug them in and watch how the
coordinator reconciles members towards them. A coordinator uses it in place of the
configured assignor when it finds it in its soft state (`TASK_ASSIGNOR_OVERRIDE`):

    c.soft_state[TASK_ASSIGNOR_OVERRIDE] = FixedTaskAssignor({"A": TaskSets.of(active=[("0", 0)])})
"""
from __future__ import annotations

from collections.abc import Mapping

from .api import GroupSpec, TaskAssignorException, TaskSets


#: the key of `Coordinator.soft_state` under which a task assignor replaces the configured one
TASK_ASSIGNOR_OVERRIDE = "streams.task_assignor_override"


class FixedTaskAssignor:
    """Returns `assignment` (member id -> TaskSets); members it does not name get nothing.
    `assignment` may be replaced between assignments (the next target the example gives)."""

    name = "fixed"

    def __init__(self, assignment: Mapping[str, TaskSets] | None = None) -> None:
        self.assignment: dict[str, TaskSets] = dict(assignment or {})

    def assign(self, spec: GroupSpec) -> dict[str, TaskSets]:
        unknown = sorted(m for m in self.assignment if m not in spec.members)
        if unknown:
            raise TaskAssignorException(f"The fixed assignment names member(s) not in the group: {', '.join(unknown)}")
        return {mid: self.assignment.get(mid, TaskSets()) for mid in spec.members}

    def __repr__(self) -> str:
        return f"FixedTaskAssignor({len(self.assignment)} members)"


__all__ = ["FixedTaskAssignor", "TASK_ASSIGNOR_OVERRIDE"]
