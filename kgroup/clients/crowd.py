"""A crowd: thousands of bare members of one modern group, joining one after another.

    from kgroup.clients import rolling_start
    run = rolling_start(coordinator, "crowd", "consumer", members=10_000, topics=["events"])
    run.stable_ms, run.timeline[-1]      # coordinator time to Stable; the last sampled moment

Each member is only its heartbeats, sent as a real client sends them (the subscription or topology
on join, the owned partitions or tasks only when they changed), so a group of 10,000 forms in
seconds; the simulated clients of `kgroup.clients` (poll loops, rebalance callbacks, fetches) are
for groups of a few. One member joins every `join_every_ms` of coordinator time (the members already
in heartbeat at their interval meanwhile); then every member heartbeats, a round every `round_ms`,
until the group is Stable with every member at the group epoch. The clock moves throughout, so
batched assignments (KIP-1263) come due.
"""
from __future__ import annotations

import uuid
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from kgroup.protocol import request

__all__ = ["CrowdRun", "consumer_heartbeat", "rolling_start", "streams_heartbeat"]

#: the group types a crowd can form
KINDS = ("consumer", "share", "streams")


@dataclass
class CrowdRun:
    """What a rolling start did: when it ended and how the epochs moved on the way."""

    group_id: str
    kind: str
    members: int
    joined_ms: int = 0        # coordinator time when the last member had joined (from the start)
    stable_ms: int = 0        # ... and when the group was Stable with every member at its epoch
    rounds: int = 0           # rounds of heartbeats after the joins
    #: sampled moments: t_ms (from the start), members, group_epoch, assignment_epoch,
    #: at_assignment_epoch (members reconciled to the latest target), phase ("joining" / "heartbeats")
    timeline: list[dict[str, Any]] = field(default_factory=list)


def consumer_heartbeat(c: Any, group_id: str, member_id: str, epoch: int, owned: dict | None, *,
                       topics: list[str] | None = None) -> Any:
    """A ConsumerGroupHeartbeat as the client sends it: `topics` on join only, the owned
    partitions (topic id -> partitions) only when they changed (else None)."""
    return c.handle(request(
        "ConsumerGroupHeartbeat", 1, group_id=group_id, member_id=member_id, member_epoch=epoch,
        rebalance_timeout=30_000 if topics is not None else -1,
        subscribed_topic_names=list(topics) if topics is not None else None,
        topic_partitions=None if owned is None else [{"topic_id": t, "partitions": sorted(ps)}
                                                     for t, ps in owned.items()]))


def streams_heartbeat(c: Any, group_id: str, member_id: str, epoch: int, owned: dict | None, *,
                      topics: list[str] | None = None) -> Any:
    """A StreamsGroupHeartbeat as the client sends it: on join (`topics` given) a stateless topology
    of one sub-topology reading `topics`, the process id and client tags; the active tasks
    (sub-topology -> partitions) only when they changed (else None)."""
    join = topics is not None
    topology = {"epoch": 0, "subtopologies": [{"subtopology_id": "0", "source_topics": list(topics),
                                               "state_changelog_topics": [], "repartition_source_topics": [],
                                               "copartition_groups": []}]} if join else None
    return c.handle(request(
        "StreamsGroupHeartbeat", 0, group_id=group_id, member_id=member_id, member_epoch=epoch,
        endpoint_information_epoch=0, rebalance_timeout=30_000 if join else -1, topology=topology,
        active_tasks=None if owned is None else [{"subtopology_id": s, "partitions": sorted(ps)}
                                                 for s, ps in owned.items()],
        standby_tasks=None if owned is None else [], warmup_tasks=None if owned is None else [],
        process_id=member_id if join else None, client_tags=[] if join else None))


def rolling_start(c: Any, group_id: str, kind: str, *, members: int, topics: list[str],
                  join_every_ms: int = 5, round_ms: int = 100, heartbeat_ms: int | None = 5000,
                  sample_every: int = 50, max_rounds: int = 10_000) -> CrowdRun:
    """Form a `kind` group of `members` bare members on coordinator `c` (see the module docstring).
    Every member subscribes to `topics` (a Streams member: one stateless sub-topology reading them);
    while the others join, a member heartbeats every `heartbeat_ms` (the groups' default interval),
    so no session expires (None: it waits for the rounds; its session must outlast the joins).
    The timeline is sampled every `sample_every` joins and after every round."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, not {kind!r}")
    ids = [str(uuid.UUID(int=i + 1)) for i in range(members)]   # client-made ids, as KIP-1082 clients do
    owned: dict[str, dict] = {m: {} for m in ids}
    sent: dict[str, dict] = {m: {} for m in ids}
    epochs: dict[str, int] = {}
    run, start = CrowdRun(group_id, kind, members), c.now()

    def heartbeat(m: str, join: bool = False) -> None:
        epoch = epochs.get(m, 0)
        if kind == "share":
            r = c.handle(request("ShareGroupHeartbeat", 1, group_id=group_id, member_id=m, member_epoch=epoch,
                                 subscribed_topic_names=list(topics) if join else None))
        else:
            changed = join or owned[m] != sent[m]
            sent[m] = {k: set(v) for k, v in owned[m].items()}
            send = consumer_heartbeat if kind == "consumer" else streams_heartbeat
            r = send(c, group_id, m, epoch, sent[m] if changed else None, topics=topics if join else None)
            if kind == "consumer" and r.assignment is not None:
                owned[m] = {tp.topic_id: set(tp.partitions) for tp in r.assignment.topic_partitions}
            elif kind == "streams" and r.active_tasks is not None:
                owned[m] = {t.subtopology_id: set(t.partitions) for t in r.active_tasks}
        if int(r.error_code):
            raise RuntimeError(f"{kind} member {m} was answered {r.error_code.name}: {r.error_message}")
        epochs[m] = r.member_epoch

    def sample(phase: str) -> None:
        g = c.groups[group_id]
        run.timeline.append({"t_ms": c.now() - start, "members": len(epochs), "group_epoch": g.group_epoch,
                             "assignment_epoch": g.assignment_epoch,
                             "at_assignment_epoch": sum(e == g.assignment_epoch for e in epochs.values()),
                             "phase": phase})

    due: deque[tuple[int, str]] = deque()   # members who joined, by when their next heartbeat is due
    for i, m in enumerate(ids):
        heartbeat(m, join=True)
        if heartbeat_ms is not None:
            due.append((c.now() + heartbeat_ms, m))
        if i % sample_every == 0 or i == members - 1:
            sample("joining")
        c.advance(join_every_ms)
        while due and due[0][0] <= c.now():   # the members who joined earlier keep their sessions alive
            _, early = due.popleft()
            heartbeat(early)
            due.append((c.now() + heartbeat_ms, early))
    run.joined_ms = c.now() - start
    group = c.groups[group_id]

    def stable() -> bool:
        return group.state == "Stable" and all(e == group.group_epoch for e in epochs.values())

    while not stable():
        if run.rounds >= max_rounds:
            raise RuntimeError(f"{group_id} not Stable after {max_rounds} rounds of heartbeats")
        c.advance(round_ms)
        for m in ids:
            heartbeat(m)
        run.rounds += 1
        sample("heartbeats")
    run.stable_ms = c.now() - start
    return run
