"""The group coordinator's metrics, under Kafka's MBean names (KIP-848 and KIP-1071 "Broker
Metrics"):

- `group-count` per protocol (classic, consumer, streams, share);
- `streams-group-count` per state (empty, not_ready, assigning, reconciling, stable, dead);
- `share-group-count` per state (empty, stable, dead: KIP-932 "Share group states");
- `streams-group-rebalance-count` (group epoch bumps of Streams groups since this coordinator
  started or loaded its log) and `streams-group-rebalance-rate` (per second, over the last
  `RATE_WINDOW_MS`, as Kafka's meters use a 30-second window by default).

Metrics are soft state, as in Kafka: the counters are fed by record replay.
"""
from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kgroup.coordinator import Coordinator

PREFIX = "kafka.server:type=group-coordinator-metrics"
RATE_WINDOW_MS = 30_000
PROTOCOLS = ("classic", "consumer", "streams", "share")
STREAMS_STATES = ("empty", "not_ready", "assigning", "reconciling", "stable", "dead")
SHARE_STATES = ("empty", "stable", "dead")
_REBALANCES = "metrics.streams_rebalances"


def record_streams_rebalance(c: "Coordinator", timestamp: int) -> None:
    """Called by the Streams replay when a group epoch moves."""
    c.soft_state.setdefault(_REBALANCES, deque()).append(timestamp)
    c.soft_state[_REBALANCES + ".total"] = c.soft_state.get(_REBALANCES + ".total", 0) + 1


def _state_name(state: str) -> str:
    # "NotReady" -> "not_ready", as the KIP's metric tags spell states
    return "".join("_" + ch.lower() if ch.isupper() else ch for ch in state).lstrip("_")


def group_metrics(c: "Coordinator") -> dict[str, Any]:
    """Every metric by its MBean name (only groups on partitions this coordinator leads)."""
    groups = [g for g in c.groups.values() if c.partition_for(g.group_id) in c.hosted_partitions]
    out: dict[str, Any] = {}
    for protocol in PROTOCOLS:
        out[f"{PREFIX},name=group-count,protocol={protocol}"] = sum(1 for g in groups if str(g.type) == protocol)
    for state in STREAMS_STATES:
        out[f"{PREFIX},name=streams-group-count,state={state}"] = sum(
            1 for g in groups if str(g.type) == "streams" and _state_name(g.state) == state)
    for state in SHARE_STATES:
        out[f"{PREFIX},name=share-group-count,state={state}"] = sum(
            1 for g in groups if str(g.type) == "share" and _state_name(g.state) == state)
    events = c.soft_state.get(_REBALANCES, deque())
    now = c.now()
    while events and events[0] < now - RATE_WINDOW_MS:
        events.popleft()
    out[f"{PREFIX},name=streams-group-rebalance-count"] = c.soft_state.get(_REBALANCES + ".total", 0)
    out[f"{PREFIX},name=streams-group-rebalance-rate"] = len(events) * 1000 / RATE_WINDOW_MS
    return out


__all__ = ["group_metrics", "record_streams_rebalance", "PREFIX"]
