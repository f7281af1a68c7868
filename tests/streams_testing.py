"""Helpers shared by the Streams-group tests: topologies and StreamsGroupHeartbeat requests."""
from __future__ import annotations

from kgroup import Coordinator
from kgroup.groups.streams import StreamsGroup, Subtopology, TopicInfo, Topology
from kgroup.protocol import request
from kgroup_testing import written  # noqa: F401  (re-exported: the Streams tests import it from here)

#: one stateless subtopology reading `orders`
STATELESS = Topology(0, (Subtopology("0", source_topics=("orders",)),))
#: one stateful subtopology reading `orders` with a store changelog
STATEFUL = Topology(0, (Subtopology("0", source_topics=("orders",),
                                    state_changelog_topics=(TopicInfo("app-store-changelog"),)),))


def tasks_data(tasks) -> list[dict] | None:
    """{subtopology: partitions} or [(subtopology, partition), ...] as TaskIds data."""
    if tasks is None:
        return None
    if not isinstance(tasks, dict):
        grouped: dict[str, list[int]] = {}
        for s, p in tasks:
            grouped.setdefault(s, []).append(p)
        tasks = grouped
    return [{"subtopology_id": s, "partitions": sorted(ps)} for s, ps in sorted(tasks.items())]


def shb(c: Coordinator, member_id: str, epoch: int, *, group: str = "app", topology: Topology | None = None,
        active=None, standby=None, warmup=None, process: str | None = None, instance: str | None = None,
        rack: str | None = None, rebalance_ms: int | None = None, endpoint: tuple[str, int] | None = None,
        client_tags: dict | None = None, task_offsets: dict | None = None, task_end_offsets: dict | None = None,
        shutdown: bool = False, endpoint_epoch: int = 0, client_id: str = "kgroup", raw: dict | None = None,
        version: int = 0, **overrides):
    """One StreamsGroupHeartbeat. A join (epoch 0) sends a full request with empty task sets,
    the given topology (STATELESS by default) and process id `process` (default: "p-<member>")."""
    if epoch == 0:
        topology = STATELESS if topology is None else topology
        active, standby, warmup = active or {}, standby or {}, warmup or {}
        rebalance_ms = 30_000 if rebalance_ms is None else rebalance_ms
        process = f"p-{member_id}" if process is None else process
        client_tags = {} if client_tags is None else client_tags
    offsets = lambda d: None if d is None else [  # noqa: E731
        {"subtopology_id": s, "partition": p, "offset": o} for (s, p), o in sorted(d.items())]
    data = dict(group_id=group, member_id=member_id, member_epoch=epoch, endpoint_information_epoch=endpoint_epoch,
                instance_id=instance, rack_id=rack, rebalance_timeout=-1 if rebalance_ms is None else rebalance_ms,
                topology=None if topology is None else topology.to_request_data(),
                active_tasks=tasks_data(active), standby_tasks=tasks_data(standby), warmup_tasks=tasks_data(warmup),
                process_id=process,
                user_endpoint=None if endpoint is None else {"host": endpoint[0], "port": endpoint[1]},
                client_tags=None if client_tags is None else [{"key": k, "value": v} for k, v in client_tags.items()],
                task_offsets=offsets(task_offsets), task_end_offsets=offsets(task_end_offsets),
                shutdown_application=shutdown)
    data.update(overrides)
    data.update(raw or {})  # fields to send exactly as given (e.g. a null topology on join)
    return c.handle(request("StreamsGroupHeartbeat", version, **data), client_id=client_id)


def tasks_of(field) -> dict[str, set[int]] | None:
    """A response's TaskIds as {subtopology: partitions} (None when the field was omitted)."""
    if field is None:
        return None
    return {t.subtopology_id: set(t.partitions) for t in field}


def statuses(resp) -> dict[int, str]:
    return {s.status_code: s.status_detail for s in resp.status or ()}


def sgroup(c: Coordinator, gid: str = "app") -> StreamsGroup:
    g = c.groups[gid]
    assert isinstance(g, StreamsGroup)
    return g


def describe(c: Coordinator, gid: str = "app", version: int = 0, **fields):
    return c.handle(request("StreamsGroupDescribe", version, group_ids=[gid], include_authorized_operations=False,
                            **fields)).groups[0]
