"""Replay of the consumer-group records (types 3-8 and 16): the only code that changes a
`ConsumerGroup`. The records every modern group writes replay as `modern_replay` says; here are
the consumer group's conversions and its own records (regexes, the old subscription metadata).
"""
from __future__ import annotations

from typing import Any

from kgroup import records as R
from kgroup.groups.kinds import CONSUMER
from kgroup.groups.modern import assignment_of
from kgroup.groups.modern_replay import replay_members, replay_of

from .group import (ConsumerGroup, ConsumerGroupMember, ResolvedRegularExpression, member_assignment_from_value,
                    member_from_value)

def _metadata(c: Any, entry: Any, value: Any, group: ConsumerGroup) -> None:
    if value.creation_time_ms != -1:
        group.creation_time_ms = value.creation_time_ms


_resolve = replay_members(CONSUMER, ConsumerGroup, lambda c, group_id: ConsumerGroup(group_id),
                          member=member_from_value, assignment=member_assignment_from_value,
                          target=lambda v: assignment_of(v.topic_partitions), new_member=ConsumerGroupMember,
                          metadata=_metadata)


@replay_of(_resolve, R.ConsumerGroupPartitionMetadata)
def _partition_metadata(c: Any, entry: Any, key: Any, value: Any, group: ConsumerGroup) -> None:
    """The subscription metadata Kafka wrote before 4.1 (replaced by the metadata hash)."""
    group.partition_metadata = None if value is None else {
        t.topic_name: (t.topic_id, t.num_partitions) for t in value.topics}


@replay_of(_resolve, R.ConsumerGroupRegularExpression)
def _regex(c: Any, entry: Any, key: Any, value: Any, group: ConsumerGroup) -> None:
    if value is None:
        group.resolved_regexes.pop(key.regular_expression, None)
        return
    group.resolved_regexes[key.regular_expression] = ResolvedRegularExpression(
        frozenset(value.topics), value.version, value.timestamp)
