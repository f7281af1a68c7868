"""Helpers for the share-partition tests: a recording Persister (until the share
coordinator's is merged, and to assert exactly what a leader writes) and request builders."""
from __future__ import annotations

import uuid

from kgroup.errors import ErrorCode
from kgroup.groups.share.persister import PartitionState, StateBatch


class RecordingPersister:
    """Keeps durable state in memory as the share coordinator would (state batches merged,
    pruned below the SPSO) and records every call, so tests can assert the writes."""

    def __init__(self) -> None:
        self.states: dict[tuple, PartitionState] = {}
        self.calls: list[tuple] = []
        self.fail_next_write: ErrorCode | None = None

    def initialize_state(self, group_id, topic_id, partition, state_epoch, start_offset):
        self.calls.append(("initialize", group_id, topic_id, partition, state_epoch, start_offset))
        self.states[(group_id, topic_id, partition)] = PartitionState(state_epoch=state_epoch, start_offset=start_offset)
        return ErrorCode.none

    def read_state(self, group_id, topic_id, partition, leader_epoch=0):
        self.calls.append(("read", group_id, topic_id, partition))
        st = self.states.get((group_id, topic_id, partition))
        if st is None:
            return PartitionState(error_code=ErrorCode.unknown_topic_or_partition)
        return st

    def write_state(self, group_id, topic_id, partition, state_epoch, leader_epoch, start_offset, state_batches):
        self.calls.append(("write", group_id, topic_id, partition, state_epoch, start_offset, tuple(state_batches)))
        if self.fail_next_write is not None:
            code, self.fail_next_write = self.fail_next_write, None
            return code
        key = (group_id, topic_id, partition)
        st = self.states.get(key, PartitionState())
        if state_epoch < st.state_epoch:
            return ErrorCode.fenced_state_epoch
        spso = st.start_offset if start_offset == -1 else start_offset
        offsets = {}
        for sb in st.state_batches + tuple(state_batches):
            for o in range(sb.first_offset, sb.last_offset + 1):
                offsets[o] = (sb.delivery_state, sb.delivery_count)
        merged: list[StateBatch] = []
        for o in sorted(offsets):
            if o < spso:
                continue
            s, n = offsets[o]
            if merged and merged[-1].last_offset == o - 1 and merged[-1].delivery_state == s and merged[-1].delivery_count == n:
                merged[-1] = StateBatch(merged[-1].first_offset, o, s, n)
            else:
                merged.append(StateBatch(o, o, s, n))
        self.states[key] = PartitionState(state_epoch=st.state_epoch, start_offset=spso, state_batches=tuple(merged))
        return ErrorCode.none

    def delete_state(self, group_id, topic_id, partition):
        self.calls.append(("delete", group_id, topic_id, partition))
        self.states.pop((group_id, topic_id, partition), None)
        return ErrorCode.none

    def writes(self):
        return [c for c in self.calls if c[0] == "write"]
