"""Request helpers shared by the coordinator tests."""
from __future__ import annotations

from kgroup import Coordinator
from kgroup.protocol import request


def commit(c: Coordinator, group: str, offsets: dict, *, version: int = 9, generation: int = -1,
           member_id: str = "", metadata: str = "", retention_ms: int | None = None):
    """OffsetCommit of {(topic, partition): offset} as a standalone (admin-style) commit."""
    topics: dict[str, list] = {}
    for (t, p), off in offsets.items():
        topics.setdefault(t, []).append({"partition_index": p, "committed_offset": off,
                                         "committed_leader_epoch": 4, "committed_metadata": metadata})
    kw = {}
    if retention_ms is not None:
        kw["retention_time"] = retention_ms
    # v10+ name topics by id
    name = (lambda t: {"topic_id": c.cluster.topic_id(t)}) if version >= 10 else (lambda t: {"name": t})
    return c.handle(request("OffsetCommit", version, group_id=group, generation_id_or_member_epoch=generation,
                            member_id=member_id, topics=[{**name(t), "partitions": ps} for t, ps in topics.items()],
                            **kw))


def fetch(c: Coordinator, group: str, topics: dict | None = None, *, version: int = 7, require_stable: bool = False):
    """Single-group OffsetFetch (v1-v7)."""
    t = None if topics is None else [{"name": n, "partition_indexes": ps} for n, ps in topics.items()]
    kw = {"require_stable": require_stable} if version >= 7 else {}
    return c.handle(request("OffsetFetch", version, group_id=group, topics=t, **kw))


def group_on_partition(partition: int, num_partitions: int = 50, prefix: str = "g") -> str:
    """A group id that Kafka places on `partition`."""
    from kgroup.log import partition_for

    i = 0
    while partition_for(f"{prefix}{i}", num_partitions) != partition:
        i += 1
    return f"{prefix}{i}"
