"""Replay of the share-group records (types 9-15): the only code that changes a `ShareGroup`.

The records every modern group writes replay as `modern_replay` says; here are the share group's
conversions and its own records (the obsolete partition metadata, the share-partitions' state
metadata).
"""
from __future__ import annotations

from typing import Any

from kgroup import records as R
from kgroup.groups.kinds import SHARE
from kgroup.groups.modern_replay import replay_members, replay_of

from .group import (ShareGroup, ShareGroupMember, StatePartitionMetadata, assignment_from_value, assignment_of,
                    member_from_value, state_metadata_from_value)

_resolve = replay_members(SHARE, ShareGroup, lambda c, group_id: ShareGroup(group_id),
                          member=member_from_value, assignment=assignment_from_value,
                          target=lambda v: assignment_of(v.topic_partitions), new_member=ShareGroupMember)


@replay_of(_resolve, R.ShareGroupPartitionMetadata)
def _partition_metadata(c: Any, entry: Any, key: Any, value: Any, group: ShareGroup) -> None:
    """Obsolete (Kafka wrote it before the metadata hash): only its presence is kept, so the
    next epoch update deletes it, as Kafka does with the consumer-group equivalent."""
    group.has_partition_metadata_record = value is not None


@replay_of(_resolve, R.ShareGroupStatePartitionMetadata)
def _state_metadata(c: Any, entry: Any, key: Any, value: Any, group: ShareGroup) -> None:
    group.state_metadata = StatePartitionMetadata() if value is None else state_metadata_from_value(value, c.now())
