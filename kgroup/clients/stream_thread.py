"""What a simulated Kafka Streams thread is, whichever group protocol its consumer speaks
(KIP-1071's Streams group in `streams.py`, the classic protocol in `streams_classic.py`): the
instance's configs (`StreamsConfig`) and local state (`StateDirectory`), the thread's states
(`StreamsMemberState`), and `StreamThreadBase`, a member named "<instance>-<n>" that runs
active and standby tasks for its instance (`StreamsInstance`, a `StreamsApplication`).
"""
from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, Union

from kgroup.clients.events import EventSource, RebalanceEvent
from kgroup.groups.streams import Topology, configure

if TYPE_CHECKING:
    from kgroup.coordinator import Coordinator

TaskId = tuple[str, int]
#: a changelog end-offset model: a constant per stateful task, a {task: end} dict, or f(task, now_ms)
EndOffsets = Union[int, Mapping[TaskId, int], Callable[[TaskId, int], int]]


class StreamsMemberState(str, enum.Enum):
    """Kafka's client-side `MemberState` for a stream thread, plus STOPPED (not running)."""

    JOINING = "joining"              # the next heartbeat joins (epoch 0, full request)
    RECONCILING = "reconciling"      # a new assignment waits for the application thread
    ACKNOWLEDGING = "acknowledging"  # reconciled: the next heartbeat (at once) reports it
    STABLE = "stable"
    FENCED = "fenced"                # losing every task, then rejoins
    LEAVING = "leaving"
    FATAL = "fatal"                  # a non-retriable error: the thread stopped
    STOPPED = "stopped"              # closed or crashed

    def __str__(self) -> str:
        return self.value


S = StreamsMemberState


@dataclass
class StreamsConfig:
    """The Kafka Streams configs that matter to the Streams group protocol.

    `application_id` is the group id; `topology` the topology (its `epoch` is the topology
    epoch sent on join); `group_instance_id` makes the threads static members
    ("<instance>-<thread index>"); `endpoint` is `application.server` (host, port) for
    Interactive Queries; `rebalance_timeout_ms` is `max.poll.interval.ms`.
    Simulation knobs: `restore_records_per_s` (per standby/warm-up task),
    `revocation_delay_ms` (closing an active task), `changelog_end_offset` (see `EndOffsets`).
    """

    application_id: str
    topology: "Topology"
    num_stream_threads: int = 1
    group_instance_id: str | None = None
    client_id: str | None = None
    rack_id: str | None = None
    client_tags: Mapping[str, str] = field(default_factory=dict)
    endpoint: tuple[str, int] | None = None
    rebalance_timeout_ms: int = 300_000
    restore_records_per_s: float = 5_000
    revocation_delay_ms: int = 0
    changelog_end_offset: EndOffsets = 50_000
    retry_backoff_ms: int = 100
    #: Kafka Streams' `group.protocol`: "streams" (KIP-1071) or "classic" (JoinGroup/SyncGroup with
    #: Kafka Streams' SubscriptionInfo/AssignmentInfo; `kgroup.clients.streams_classic`)
    group_protocol: str = "streams"

    @property
    def group_id(self) -> str:
        return self.application_id

    @property
    def topology_epoch(self) -> int:
        return self.topology.epoch

    def end_offset(self, task: TaskId, now_ms: int) -> int:
        """The task's cumulative changelog end offset at `now_ms`."""
        model = self.changelog_end_offset
        if callable(model):
            return int(model(task, now_ms))
        if isinstance(model, Mapping):
            return int(model.get(task, 0))
        return int(model)

    def stateful_subtopologies(self) -> set[str]:
        return {s.subtopology_id for s in self.topology.subtopologies if s.state_changelog_topics}


@dataclass
class StateDirectory:
    """A Kafka Streams instance's local state (`state.dir`): per stateful task the checkpointed
    cumulative changelog offset. Shared by the instance's threads; it outlives the process."""

    offsets: dict[TaskId, int] = field(default_factory=dict)

    def wipe(self) -> None:
        """Delete the local state (a new machine, or `KafkaStreams.cleanUp()`)."""
        self.offsets.clear()


class StreamsInstance(Protocol):
    """What a stream thread uses of its Kafka Streams instance (`StreamsApplication`)."""

    c: "Coordinator"
    name: str
    seed: Any
    config: StreamsConfig
    process_id: str
    state_dir: StateDirectory
    transport: Any
    on_event: Callable[[RebalanceEvent], None] | None
    shutdown_reason: str | None

    def held_tasks(self) -> set[TaskId]: ...

    def _shut_down(self) -> None: ...


class StreamThreadBase(EventSource):
    """One stream thread of a Kafka Streams instance: its identity (name, `group.instance.id`,
    consumer client id), its tasks by role, and the instance's config, network and events.
    `state` is a `StreamsMemberState`; `error` says why it went FATAL."""

    def __init__(self, app: StreamsInstance, index: int) -> None:
        self.app = app
        self.c = app.c
        self.index = index
        self.name = f"{app.name}-{index}"
        self.events: list[RebalanceEvent] = []
        self.incarnation = 0
        self.member_id = ""
        self.active: set[TaskId] = set()
        self.standby: set[TaskId] = set()
        self.warmup: set[TaskId] = set()
        self.error: tuple[str, str] | None = None
        self.endpoint_information_epoch = -1
        self.partitions_by_user_endpoint: dict[tuple[str, int], dict[str, dict[str, set[int]]]] | None = None
        self.state = S.STOPPED

    @property
    def config(self) -> StreamsConfig:
        return self.app.config

    @property
    def transport(self) -> Any:
        """The instance's network to the coordinator."""
        return self.app.transport

    @property
    def on_event(self) -> Callable[[RebalanceEvent], None] | None:
        return self.app.on_event

    @property
    def instance_id(self) -> str | None:
        """`group.instance.id` of this thread's consumer: "<instance>-<thread index>"."""
        inst = self.config.group_instance_id
        return None if inst is None else f"{inst}-{self.index}"

    @property
    def client_id(self) -> str:
        """Kafka Streams' consumer client id: "<client.id>-StreamThread-<n>-consumer"."""
        return f"{self.config.client_id or self.app.name}-StreamThread-{self.index}-consumer"

    @property
    def is_static(self) -> bool:
        return self.instance_id is not None

    @property
    def owned(self) -> set[TaskId]:
        """The active tasks this thread runs (what the driver samples)."""
        return self.active

    @property
    def running(self) -> bool:
        return self.state not in (S.STOPPED, S.FATAL)

    def tasks(self) -> dict[str, set[TaskId]]:
        """The tasks this thread runs, by role."""
        return {"active": set(self.active), "standby": set(self.standby), "warmup": set(self.warmup)}

    def _configured(self) -> Any:
        """The topology as the cluster sizes it now."""
        return configure(self.config.topology, self.c.cluster)

    def all_units(self) -> list[TaskId]:
        """Every task of the topology as the cluster sizes it now (the driver's "partitions")."""
        configured = self._configured()
        return [(s, p) for s, n in sorted(configured.num_tasks().items()) for p in range(n)]


__all__ = ["StreamsConfig", "StreamsMemberState", "StateDirectory", "StreamsInstance", "StreamThreadBase",
           "TaskId", "EndOffsets"]
