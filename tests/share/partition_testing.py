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
            return PartitionState(error_code=ErrorCode.invalid_request,
                                  error_message="Read operation on uninitialized share partition not allowed.")
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


def make(topics=None, *, profile="kip", config=None, group_configs=None, persister=None):
    """A coordinator with a recording persister and `topics` ({name: partitions})."""
    from kgroup import Cluster, Coordinator
    from kgroup.groups.share.partition import leaders
    c = Coordinator(cluster=Cluster(topics or {"t": 1}, seed=3), config=config, profile=profile)
    per = persister or RecordingPersister()
    leaders(c, per)
    if group_configs:
        c.cluster.group_configs["g"] = dict(group_configs)
    return c, per


def fetch_req(c, topic_partitions, *, member="m1", epoch=0, group="g", max_records=500, acks=None, forget=None,
              version=1):
    """ShareFetch of [(topic, partition)], with acks {(topic, partition): [(first, last, [types])]}."""
    from kgroup.protocol import request
    acks = acks or {}
    topics: dict = {}
    for t, p in topic_partitions:
        topics.setdefault(c.cluster.topic_id(t), []).append(
            {"partition_index": p, "acknowledgement_batches": _batches(acks.get((t, p), []))})
    for (t, p), bs in acks.items():
        tid = c.cluster.topic_id(t) if t in c.cluster else uuid.UUID(int=99)
        parts = topics.setdefault(tid, [])
        if not any(x["partition_index"] == p for x in parts):
            parts.append({"partition_index": p, "acknowledgement_batches": _batches(bs)})
    forgotten = [{"topic_id": c.cluster.topic_id(t), "partitions": ps} for t, ps in (forget or {}).items()]
    return c.handle(request("ShareFetch", version, group_id=group, member_id=member, share_session_epoch=epoch,
                            max_wait=0, min_bytes=1, max_records=max_records, batch_size=max_records,
                            topics=[{"topic_id": k, "partitions": v} for k, v in topics.items()],
                            forgotten_topics_data=forgotten))


def ack_req(c, acks, *, member="m1", epoch=1, group="g", version=1):
    """ShareAcknowledge of {(topic, partition): [(first, last, [types])]}."""
    from kgroup.protocol import request
    topics: dict = {}
    for (t, p), bs in acks.items():
        tid = c.cluster.topic_id(t) if t in c.cluster else uuid.UUID(int=99)
        topics.setdefault(tid, []).append({"partition_index": p, "acknowledgement_batches": _batches(bs)})
    return c.handle(request("ShareAcknowledge", version, group_id=group, member_id=member, share_session_epoch=epoch,
                            topics=[{"topic_id": k, "partitions": v} for k, v in topics.items()]))


def _batches(bs):
    return [{"first_offset": a, "last_offset": z, "acknowledge_types": list(ts)} for a, z, ts in bs]


def partition_rows(response):
    """{(topic id, partition): PartitionData} of a ShareFetch/ShareAcknowledge response."""
    return {(t.topic_id, p.partition_index): p for t in response.responses for p in t.partitions}


def states(sp, first=None, last=None):
    """{offset: (state, delivery count)} of the in-flight records."""
    return {v.offset: (v.state, v.delivery_count) for v in sp.records(first, last)}
