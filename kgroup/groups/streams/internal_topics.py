"""Creating a Streams group's missing internal topics (KIP-1071, NOT_READY status 3).

When a heartbeat finds repartition or changelog topics missing, the coordinator asks the
(simulated) KRaft controller to create them, sized from the configured topology. As the KIP
asks, one creation is in flight per group at a time, and a failed one is retried only after
a back-off that doubles each time. The request runs on the coordinator's timers
(`cluster.topic_creation_delay_ms` of simulated latency), so a notebook can watch the group
sit in NOT_READY with "creation in flight" before the topics appear.

All of this is soft state: a new coordinator simply asks again.
"""
from __future__ import annotations

from collections.abc import Iterable

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from kgroup.authorizer import CLUSTER_NAME
from kgroup.runtime import Result, group_timer

from .configuration import ConfiguredTopology

if TYPE_CHECKING:
    from kgroup.coordinator import Coordinator

    from .group import StreamsGroup

INITIAL_BACKOFF_MS = 1_000
MAX_BACKOFF_MS = 30_000


@dataclass
class CreationState:
    in_flight: tuple[str, ...] = ()
    attempts: int = 0
    last_error: str | None = None
    retry_at: int = 0
    created: tuple[str, ...] = ()
    #: missing topics the heartbeat's principal may not CREATE (soft state of the last heartbeat)
    unauthorized: tuple[str, ...] = ()


def _timer_key(group_id: str) -> str:
    return group_timer(f"streams-create-topics-{group_id}", group_id)


def state_of(c: "Coordinator", group_id: str) -> CreationState:
    states = c.soft_state.setdefault("streams.internal_topic_creation", {})
    return states.setdefault(group_id, CreationState())


def maybe_create(c: "Coordinator", group: "StreamsGroup", configured: ConfiguredTopology) -> Callable[[], Any] | None:
    """Start creating the missing internal topics unless a creation is in flight or backing off."""
    state = state_of(c, group.group_id)
    topics = dict(configured.missing_internal_topics)
    # KIP-1071 "Required ACL": CREATE on the cluster, or on every topic to create; if the
    # heartbeat's principal lacks it for any of them "no such attempt will be made" (none is
    # created) and the status says which (KafkaApis.handleStreamsGroupHeartbeat)
    if not c.authorize("CREATE", "CLUSTER", CLUSTER_NAME):
        state.unauthorized = tuple(sorted(t for t in topics if not c.authorize("CREATE", "TOPIC", t)))
    else:
        state.unauthorized = ()
    if state.unauthorized or not topics or state.in_flight or c.now() < state.retry_at:
        return None
    group_id = group.group_id
    delay = getattr(c.cluster, "topic_creation_delay_ms", 0)

    def start() -> None:
        state.in_flight = tuple(sorted(topics))
        state.attempts += 1
        c.timers.schedule(_timer_key(group_id), c.now() + delay, lambda: _complete(c, group_id, topics))
    return start


def _complete(c: "Coordinator", group_id: str, topics: dict) -> Result | None:
    """The controller's answer: create what is still missing; on failure back off."""
    state = state_of(c, group_id)
    state.in_flight = ()
    errors = []
    for name, (partitions, info) in sorted(topics.items()):
        if name in c.cluster:
            continue
        try:
            c.cluster.create_topic(name, partitions)
            state.created += (name,)
        except (ValueError, PermissionError) as e:
            errors.append(f"{name}: {e}")
    if errors:
        state.last_error = "; ".join(errors)
        state.retry_at = c.now() + min(MAX_BACKOFF_MS, INITIAL_BACKOFF_MS * 2 ** (state.attempts - 1))
    else:
        state.last_error = None
        state.attempts = 0
        state.retry_at = 0
    return None


def with_progress(c: "Coordinator", group: "StreamsGroup", detail: str, missing: Iterable[str] = ()) -> str:
    """The MISSING_INTERNAL_TOPICS status detail with what is known about creating the topics
    (KIP-1071: whether an attempt was made, why the last one failed, whether ACLs are missing)."""
    state = state_of(c, group.group_id)
    if not c.profile.streams_internal_topic_progress:
        # Kafka's words (InternalTopicManager), without the creation's progress.
        detail = f"Internal topics are missing: {', '.join(sorted(missing))}"
    elif state.in_flight:
        detail += f" Creating them: {', '.join(state.in_flight)} (attempt {state.attempts})."
    elif state.last_error:
        detail += (f" The last attempt to create them failed ({state.last_error}); "
                   f"next attempt after {state.retry_at} ms.")
    if state.unauthorized:
        # Kafka's words, appended to the status detail after "; " (KafkaApis.handleStreamsGroupHeartbeat)
        detail = f"{detail.rstrip('.')}; Unauthorized to CREATE on topics {', '.join(state.unauthorized)}."
    return detail


__all__ = ["maybe_create", "with_progress", "state_of", "CreationState"]
