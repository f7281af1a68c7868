"""An assignor that returns a given assignment (for tests and what-if scenarios)."""
from __future__ import annotations

from collections.abc import Iterable, Mapping

from .api import (GroupAssignment, GroupSpec, PartitionAssignorException, ServerAssignor,
                  SubscribedTopicDescriber, TopicId)

__all__ = ["FixedAssignor"]


class FixedAssignor(ServerAssignor):
    """Returns ``assignment`` as the target assignment, whatever the group looks like.

    Every member id of ``assignment`` must be a member of the group
    (:class:`PartitionAssignorException` otherwise); members of the group it does not
    name get ``{}``. Partition collections are turned into frozensets and empty topics
    left out; nothing else is checked (a what-if may well assign what Kafka would not).
    """
    name = "fixed"

    def __init__(self, assignment: Mapping[str, Mapping[TopicId, Iterable[int]]]):
        self.assignment: GroupAssignment = {
            member_id: {tid: frozenset(parts) for tid, parts in topics.items() if parts}
            for member_id, topics in assignment.items()
        }

    def assign(self, group_spec: GroupSpec, topics: SubscribedTopicDescriber) -> GroupAssignment:
        unknown = sorted(m for m in self.assignment if m not in group_spec.members)
        if unknown:
            raise PartitionAssignorException(
                f"The fixed assignment names member(s) not in the group: {', '.join(unknown)}")
        return {member_id: dict(self.assignment.get(member_id, {}))
                for member_id in group_spec.members}

    def __repr__(self) -> str:
        return f"FixedAssignor({len(self.assignment)} members)"
