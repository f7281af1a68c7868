"""Request helpers shared by the coordinator tests; the sample dumps, data/make_samples.py as a module
and the `kgroup` command run in-process."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from kgroup import Coordinator
from kgroup.protocol import request

ROOT = Path(__file__).resolve().parent.parent
#: data/samples: the sample dumps data/make_samples.py writes
SAMPLES = ROOT / "data" / "samples"


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    """`kgroup *argv` in this process: its exit code, what it printed and what it printed to stderr."""
    from kgroup.cli import main

    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def make_samples():
    """data/make_samples.py as a module (one copy, shared by the test files that use it)."""
    module = sys.modules.get("make_samples")
    if module is None:
        spec = importlib.util.spec_from_file_location("make_samples", ROOT / "data" / "make_samples.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules["make_samples"] = module  # dataclasses look their module up there
        spec.loader.exec_module(module)
    return module


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


def written(c: Coordinator, since: int) -> list[str]:
    """Record type names written since log position `since` ('-' marks a tombstone)."""
    return [type(c.log.entry_at(i).record).__name__ + ("-" if c.log.entry_at(i).record.value is None else "")
            for i in range(since, c.position)]


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


# -- classic group protocol ------------------------------------------------------------

def subscription_v0(*topics: str) -> bytes:
    """ConsumerProtocolSubscription v0 bytes (version, topics, null user data)."""
    out = b"\x00\x00" + len(topics).to_bytes(4, "big")
    for t in topics:
        out += len(t).to_bytes(2, "big") + t.encode()
    return out + b"\xff\xff\xff\xff"


def join(c: Coordinator, group: str, member_id: str = "", *, instance: str | None = None, version: int = 9,
         protocols=(("range", subscription_v0("orders")),), session_ms: int = 10_000,
         rebalance_ms: int = 60_000, protocol_type: str = "consumer", client_id: str = "client"):
    """A JoinGroup request; returns the PendingResponse."""
    kw = {"group_instance_id": instance} if version >= 5 else {}
    if version >= 1:
        kw["rebalance_timeout"] = rebalance_ms
    return c.handle(request("JoinGroup", version, group_id=group, session_timeout=session_ms, member_id=member_id,
                            protocol_type=protocol_type,
                            protocols=[{"name": n, "metadata": m} for n, m in protocols], **kw),
                    client_id=client_id)


def join_until_member_id(c: Coordinator, group: str, **kw):
    """JoinGroup as a v4+ dynamic client does: first without id (MEMBER_ID_REQUIRED), then with it."""
    first = join(c, group, **kw)
    if first.done and first.response.error_code.name == "member_id_required":
        return join(c, group, first.response.member_id, **kw)
    return first


def sync(c: Coordinator, group: str, member_id: str, generation: int, *, instance: str | None = None,
         assignments: dict | None = None, version: int = 5):
    kw = {"group_instance_id": instance} if version >= 3 else {}
    if version >= 5:
        kw.update(protocol_type="consumer", protocol_name=None)
    return c.handle(request("SyncGroup", version, group_id=group, generation_id=generation, member_id=member_id,
                            assignments=[{"member_id": m, "assignment": a} for m, a in (assignments or {}).items()],
                            **kw))


def heartbeat(c: Coordinator, group: str, member_id: str, generation: int, *, instance: str | None = None,
              version: int = 4):
    kw = {"group_instance_id": instance} if version >= 3 else {}
    return c.handle(request("Heartbeat", version, group_id=group, generation_id=generation, member_id=member_id, **kw))


def leave(c: Coordinator, group: str, *identities: tuple[str, str | None], version: int = 5):
    if version < 3:
        return c.handle(request("LeaveGroup", version, group_id=group, member_id=identities[0][0]))
    return c.handle(request("LeaveGroup", version, group_id=group,
                            members=[{"member_id": m, "group_instance_id": i} for m, i in identities]))


def describe(c: Coordinator, *groups: str, version: int = 5):
    return c.handle(request("DescribeGroups", version, groups=list(groups)))
