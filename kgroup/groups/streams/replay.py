"""Replay of the Streams-group records (types 17-24): the only code that changes a `StreamsGroup`.

The records every modern group writes replay as `modern_replay` says; here are the Streams
group's conversions, what else its group metadata holds and its checks of its tombstone, and its
own records (the topology, records other coordinators wrote).
"""
from __future__ import annotations

from typing import Any

from kgroup import records as R
from kgroup.groups.kinds import STREAMS
from kgroup.groups.modern import ReplayError
from kgroup.groups.modern_replay import replay_members, replay_of
from kgroup.metrics import record_streams_rebalance

from .group import StreamsGroup, StreamsGroupMember, assignment_from_value, member_from_value, target_from_value
from .topology import Topology

def _check_tombstone(group: StreamsGroup, group_id: str) -> None:
    """Kafka's checks and words: the members, then the target-assignment metadata, go first."""
    if group.members:
        raise ReplayError(f"Received a tombstone record to delete group {group_id} but the group still "
                          f"has {len(group.members)} members.")
    if group.assignment_epoch != -1:
        raise ReplayError(f"Received a tombstone record to delete group {group_id} but did not receive "
                          "StreamsGroupTargetAssignmentMetadataValue tombstone.")


def _metadata(c: Any, entry: Any, value: Any, group: StreamsGroup) -> None:
    if value.epoch > group.group_epoch:
        group.rebalances += 1
        record_streams_rebalance(c, entry.timestamp if entry.timestamp is not None else c.now())
    group.validated_topology_epoch = value.validated_topology_epoch
    # Either layout; none kept (null: written before Kafka 4.2 kept them) is an empty map, as Kafka's
    # replay leaves it: the next heartbeat sees the configs changed and bumps once, as Kafka does.
    group.assignment_configs = entry.record.assignment_configs() or {}
    group.stored_description_topology_epoch = value.stored_description_topology_epoch
    group.failed_description_topology_epoch = value.failed_description_topology_epoch


# (The endpoint-information epoch is soft state the heartbeat moves, as in Kafka: not replayed.)
_resolve = replay_members(STREAMS, StreamsGroup, lambda c, group_id: StreamsGroup(group_id, c.cluster),
                          member=member_from_value, assignment=assignment_from_value,
                          target=target_from_value, new_member=StreamsGroupMember,
                          metadata=_metadata, check_tombstone=_check_tombstone)


@replay_of(_resolve, R.StreamsGroupPartitionMetadata, R.StreamsGroupTargetAssignmentResolvedTopicIds)
def _obsolete(c: Any, entry: Any, key: Any, value: Any, group: StreamsGroup) -> None:
    """Records older (or newer) coordinators wrote that hold nothing kgroup derives from:
    partition metadata was replaced by the metadata hash; resolved topic ids are derived.
    (Resolving the group is all: a value creates it, as in Kafka.)"""


@replay_of(_resolve, R.StreamsGroupTopology)
def _topology(c: Any, entry: Any, key: Any, value: Any, group: StreamsGroup) -> None:
    group.topology = None if value is None else Topology.from_record(value)
