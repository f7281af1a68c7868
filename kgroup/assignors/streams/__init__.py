"""KIP-1071's server-side task assignors for Streams groups, as pure functions.

The Streams group coordinator calls ``assignor.assign(group_spec)`` to compute a new target
assignment: for every member, its active, standby and warm-up tasks. Two assignors, chosen by
``group.streams.assignor.name`` (Kafka ships ``sticky`` only):

* ``sticky`` — :class:`StickyTaskAssignor`, Kafka's broker-side ``StickyTaskAssignor``
  (``org.apache.kafka.coordinator.group.streams.assignor``) plus KIP-1071's rule that members
  with a stale topology epoch get no new tasks;
* ``highly_available`` — :class:`HighlyAvailableTaskAssignor`, in the spirit of Kafka Streams'
  ``HighAvailabilityTaskAssignor``: caught-up processes keep stateful tasks while their
  balanced owners warm up (``num_warmup_replicas`` warm-up tasks at most).

Example::

    from kgroup.assignors.streams import GroupSpec, MemberSpec, SubtopologySpec, get_task_assignor
    spec = GroupSpec(members={"A": MemberSpec("A", "p1", 0)}, subtopologies={"0": SubtopologySpec(4, False)})
    get_task_assignor("sticky").assign(spec)["A"].active      # {"0": frozenset({0, 1, 2, 3})}

``benchmarks/streams_assignors.py`` times both on points of Kafka's
``StreamsStickyAssignorBenchmark`` grid.
"""
from __future__ import annotations

from .api import (GroupSpec, MemberSpec, SubtopologySpec, TaskAssignor, TaskAssignorException, TaskId, TaskSets,
                  is_caught_up, task_offset)
from .fixed import TASK_ASSIGNOR_OVERRIDE, FixedTaskAssignor
from .highly_available import HighlyAvailableTaskAssignor
from .sticky import StickyTaskAssignor

__all__ = ["GroupSpec", "MemberSpec", "SubtopologySpec", "TaskSets", "TaskId", "TaskAssignor", "TaskAssignorException",
           "is_caught_up", "task_offset", "StickyTaskAssignor", "HighlyAvailableTaskAssignor", "STREAMS_ASSIGNORS",
           "get_task_assignor", "FixedTaskAssignor", "TASK_ASSIGNOR_OVERRIDE"]

#: The task assignors by name (``group.streams.assignor.name``); they keep no state, so one
#: instance each serves every group.
STREAMS_ASSIGNORS: dict[str, TaskAssignor] = {
    StickyTaskAssignor.name: StickyTaskAssignor(),
    HighlyAvailableTaskAssignor.name: HighlyAvailableTaskAssignor(),
}


def get_task_assignor(name: str) -> TaskAssignor:
    """The task assignor called ``name``; ``ValueError`` naming the known ones otherwise."""
    try:
        return STREAMS_ASSIGNORS[name]
    except KeyError:
        known = ", ".join(sorted(STREAMS_ASSIGNORS))
        raise ValueError(f"unknown streams task assignor {name!r}; known: {known}") from None
