"""Helpers for the share-group tests: requests, a reload check, and the share coordinator as
the group coordinator reaches it.

`RecordingPersister` wraps the real `CoordinatorPersister` (requests through
`Coordinator.handle`, records in `__share_group_state`): it records the calls the group
coordinator makes and can answer an error code instead, to test what happens when the share
coordinator refuses.
"""
from __future__ import annotations

import uuid

from kgroup import Cluster, Coordinator, ErrorCode
from kgroup.groups.modern import INITIAL_GROUP_EPOCH
from kgroup.groups.share.persister import CoordinatorPersister
from kgroup.groups.share.protocol import PERSISTER_KEY
from kgroup.protocol import request, to_data

#: a new group's first computed assignment epoch (groups start at epoch 1, KAFKA-20268): the
#: first member of a new group gets member epoch FIRST
FIRST = INITIAL_GROUP_EPOCH + 1
#: client-generated member ids, as Kafka's share consumer makes them (Uuid.randomUuid().toString())
M1, M2, M3, M4 = (str(uuid.UUID(int=0x1000 + i)) for i in range(1, 5))


class RecordingPersister:
    """The real persister, every call recorded; `fail_with` makes Initialize/Delete answer that code."""

    def __init__(self, inner: CoordinatorPersister) -> None:
        self.inner = inner
        self.calls: list[tuple] = []
        self.fail_with: ErrorCode = ErrorCode.none

    def initialize_state(self, group_id, topic_id, partition, state_epoch, start_offset):
        self.calls.append(("initialize", group_id, topic_id, partition, state_epoch, start_offset))
        if self.fail_with != ErrorCode.none:
            return self.fail_with
        return self.inner.initialize_state(group_id, topic_id, partition, state_epoch, start_offset)

    def delete_state(self, group_id, topic_id, partition):
        self.calls.append(("delete", group_id, topic_id, partition))
        if self.fail_with != ErrorCode.none:
            return self.fail_with
        return self.inner.delete_state(group_id, topic_id, partition)

    def read_state(self, *args, **kw):
        return self.inner.read_state(*args, **kw)

    def write_state(self, *args, **kw):
        return self.inner.write_state(*args, **kw)

    def read_summary(self, *args, **kw):
        return self.inner.read_summary(*args, **kw)


def summary(c: Coordinator, topic: str, partition: int, group: str = "g"):
    """ReadShareGroupStateSummary of one share-partition (state epoch 0: no state)."""
    return c.soft_state[PERSISTER_KEY].inner.read_summary(group, c.cluster.topic_id(topic), partition)


def has_state(c: Coordinator, topic: str, partition: int, group: str = "g") -> bool:
    return summary(c, topic, partition, group).state_epoch > 0


def coord(profile: str = "kafka", config: dict | None = None, persister: bool = True, **topics: int) -> Coordinator:
    # Assignment batching (KIP-1263) off unless a test sets it, as Kafka runs its request tests: these
    # tests are about what an assignment is, not when (tests/test_assignment_batching.py is about when)
    config = {"group.share.assignment.interval.ms": 0, **(config or {})}
    c = Coordinator(cluster=Cluster(topics or {"orders": 3, "payments": 2}, seed=1), profile=profile, config=config)
    if persister:
        c.soft_state[PERSISTER_KEY] = RecordingPersister(CoordinatorPersister(c))
    return c


def hb(c: Coordinator, member_id: str, epoch: int, topics=None, *, group: str = "g", rack: str | None = None,
       client_id: str = "share-consumer"):
    """A ShareGroupHeartbeat (v1)."""
    return c.handle(request("ShareGroupHeartbeat", 1, group_id=group, member_id=member_id, member_epoch=epoch,
                            rack_id=rack, subscribed_topic_names=topics), client_id=client_id)


def join(c: Coordinator, member_id: str, *topics: str, group: str = "g"):
    return hb(c, member_id, 0, list(topics or ("orders",)), group=group)


def describe(c: Coordinator, *groups: str):
    return c.handle(request("ShareGroupDescribe", 1, group_ids=list(groups or ("g",)),
                            include_authorized_operations=False)).groups


def assignment(resp) -> dict[str, list[int]] | None:
    """A heartbeat response's assignment by topic id string (None when the response has none)."""
    if resp.assignment is None:
        return None
    return {str(t.topic_id): list(t.partitions) for t in resp.assignment.topic_partitions}


def parts(c: Coordinator, resp_or_member, topic: str = "orders") -> list[int]:
    """The partitions of `topic` in a heartbeat response or a described member."""
    tid = c.cluster.topic_id(topic)
    a = resp_or_member.assignment
    for t in a.topic_partitions:
        if t.topic_id == tid:
            return list(t.partitions)
    return []


def written(c: Coordinator, since: int) -> list[str]:
    """The record types written since log position `since` (tombstones marked with a ~)."""
    out = []
    for i in range(since, c.position):
        r = c.log.entry_at(i).record
        out.append(("~" if r.value is None else "") + type(r).__name__)
    return out


def assert_reload_equal(c: Coordinator) -> None:
    """Records are the truth: a coordinator rebuilt from the log describes every share group alike."""
    reloaded = Coordinator.load(c.log, cluster=c.cluster, profile=c.profile)
    ids = sorted(g for g in c.groups if str(c.groups[g].type) == "share")
    assert sorted(g for g in reloaded.groups if str(reloaded.groups[g].type) == "share") == ids
    for gid in ids:
        assert to_data(describe(reloaded, gid)) == to_data(describe(c, gid))
        assert reloaded.groups[gid].describe() == c.groups[gid].describe()


__all__ = ["RecordingPersister", "summary", "has_state", "coord", "hb", "join", "describe", "assignment", "parts", "written",
           "assert_reload_equal", "M1", "M2", "M3", "M4", "FIRST"]
