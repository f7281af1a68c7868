"""A simulated Kafka Streams client speaking KIP-1071's Streams group protocol
(Kafka's `StreamsMembershipManager` and `StreamsGroupHeartbeatRequestManager`).

    topology = stateful("app", "orders", store="counts")
    a = StreamsApplication(c, StreamsConfig("app", topology, num_stream_threads=2), name="A")
    sim = Simulation(c); sim.add(a); sim.run_until_stable("app")
    a.tasks()        # {'active': {...}, 'standby': {...}, 'warmup': {...}}

A `StreamsApplication` is one Kafka Streams instance: one process id and one local state
directory, shared by its `StreamThread`s. Each thread is one group member (what the
`Simulation` drives), and as Kafka's client it:

- **joins** with member epoch 0 and a full request (topology, empty task lists, process id,
  user endpoint, client tags, rebalance timeout), with a member id it generated itself; a new
  member id per start (Kafka Streams makes a new consumer each time), drawn from a seeded RNG;
- afterwards sends **only what changed**: the three task lists together when its reconciled
  assignment changed; task changelog offsets every `TaskOffsetIntervalMs` of the response, when
  its stateful tasks changed, and at once when a warm-up task caught up (end - offset <=
  `AcceptableRecoveryLag`); after an error response the next request is full again (without
  the topology, which only a join may carry);
- heartbeats every `HeartbeatIntervalMs`, and **at once** when joining, acknowledging a
  reconciled assignment, reporting a caught-up warm-up task or leaving;
- **reconciles** on the application thread (`poll()`): standby and warm-up tasks change at
  once; active tasks no longer assigned are closed first (`revocation_delay_ms`), then new
  ones start; then it acknowledges by reporting the three lists it now owns;
- on FENCED_MEMBER_EPOCH / UNKNOWN_MEMBER_ID loses every task and rejoins with epoch 0; on
  STREAMS_TOPOLOGY_FENCED, STREAMS_INVALID_TOPOLOGY(_EPOCH), INVALID_REQUEST or another
  non-retriable error it stops (state FATAL, `error` says why);
- leaves with epoch -1, or -2 for a static member (`group_instance_id`); a SHUTDOWN_APPLICATION
  status shuts the whole instance down; `request_shutdown()` asks the group for it.

Restoration is simulated: active tasks are caught up (offset = end offset); standby and
warm-up tasks restore at `restore_records_per_s` towards the changelog end offset; tasks no
thread of the process owns ("dormant") keep their checkpointed offset in the state directory,
which outlives `close()`, `restart()` and `crash()` (it is on disk).
Not modelled: processing itself, commits, the poll timer, standby promotion costs.
"""
from __future__ import annotations

import random
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kgroup.clients.events import RebalanceEvent
from kgroup.clients.membership import HeartbeatExchange, HeartbeatMember, PendingCallback, kafka_member_id
from kgroup.clients.stream_thread import EndOffsets  # noqa: F401  (re-exported: it was defined here)
from kgroup.clients.stream_thread import (StateDirectory, StreamsConfig, StreamsInstance, StreamsMemberState,
                                          StreamThreadBase, TaskId)
from kgroup.clients.streams_classic import ClassicStreamThread
from kgroup.clients.transport import Transport
from kgroup.errors import ErrorCode
from kgroup.groups.modern import LEAVE_GROUP_MEMBER_EPOCH
from kgroup.protocol import ms, request

if TYPE_CHECKING:
    from kgroup.coordinator import Coordinator
    from kgroup.groups.streams import Topology

E = ErrorCode

# StreamsGroupHeartbeatResponse status codes (KIP-1071)
STALE_TOPOLOGY = 0
MISSING_SOURCE_TOPICS = 1
INCORRECTLY_PARTITIONED_TOPICS = 2
MISSING_INTERNAL_TOPICS = 3
SHUTDOWN_APPLICATION = 4
ASSIGNMENT_DELAYED = 5
_NOT_READY = {MISSING_SOURCE_TOPICS, INCORRECTLY_PARTITIONED_TOPICS, MISSING_INTERNAL_TOPICS, ASSIGNMENT_DELAYED}
STATUS_NAMES = {STALE_TOPOLOGY: "STALE_TOPOLOGY", MISSING_SOURCE_TOPICS: "MISSING_SOURCE_TOPICS",
                INCORRECTLY_PARTITIONED_TOPICS: "INCORRECTLY_PARTITIONED_TOPICS",
                MISSING_INTERNAL_TOPICS: "MISSING_INTERNAL_TOPICS", SHUTDOWN_APPLICATION: "SHUTDOWN_APPLICATION",
                ASSIGNMENT_DELAYED: "ASSIGNMENT_DELAYED"}


S = StreamsMemberState
_NOT_IN_GROUP = (S.FENCED, S.FATAL, S.STOPPED)


@dataclass(frozen=True)
class TaskAssignment:
    """Active, standby and warm-up tasks (what a heartbeat response assigns or a request reports)."""

    active: frozenset[TaskId] = frozenset()
    standby: frozenset[TaskId] = frozenset()
    warmup: frozenset[TaskId] = frozenset()

    @classmethod
    def from_response(cls, resp: Any) -> "TaskAssignment":
        def ids(entries: Any) -> frozenset[TaskId]:
            return frozenset((t.subtopology_id, int(p)) for t in entries or () for p in t.partitions)
        return cls(ids(resp.active_tasks), ids(resp.standby_tasks), ids(resp.warmup_tasks))

    def all(self) -> frozenset[TaskId]:
        return self.active | self.standby | self.warmup

    def as_dict(self) -> dict[str, set[TaskId]]:
        return {"active": set(self.active), "standby": set(self.standby), "warmup": set(self.warmup)}


NO_TASKS = TaskAssignment()


def task_ids_data(tasks: Iterable[TaskId]) -> list[dict]:
    """Tasks as StreamsGroupHeartbeat `TaskIds` data, sorted by subtopology then partition."""
    by_sub: dict[str, list[int]] = {}
    for s, p in tasks:
        by_sub.setdefault(s, []).append(p)
    return [{"subtopology_id": s, "partitions": sorted(ps)} for s, ps in sorted(by_sub.items())]


def _offsets_data(offsets: Mapping[TaskId, int]) -> list[dict]:
    return [{"subtopology_id": s, "partition": p, "offset": o} for (s, p), o in sorted(offsets.items())]


def process_uuid(rng: random.Random) -> str:
    """A Kafka Streams process id: `UUID.randomUUID().toString()` (seeded here)."""
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


class StreamThread(StreamThreadBase, HeartbeatMember):
    """One stream thread: a member of the Streams group (see the module docstring).

    Driven by `Simulation` like the simulated consumers: `tick()` is the heartbeat thread,
    `poll()` the application thread (one loop: finish closing tasks, reconcile, restore).
    `owned` is the set of active tasks it runs, as (subtopology, partition); `standby` and
    `warmup` the other roles; `statuses` the last statuses the coordinator sent ({code:
    detail}); `error` why it went FATAL."""

    protocol = "streams"
    _states = S
    _not_in_group = _NOT_IN_GROUP
    _state_after_leave = S.LEAVING
    _no_assignment = NO_TASKS
    _non_fatal = frozenset({E.topic_authorization_failed})   # Kafka: the member stays, in case the ACLs are added

    def __init__(self, app: StreamsInstance, index: int) -> None:
        super().__init__(app, index)
        self.heartbeat_listeners: list[Callable[[HeartbeatExchange], None]] = []
        self.heartbeats: list[HeartbeatExchange] = []
        self._rng = random.Random(f"{app.seed}/thread-{index}")
        self._generation = 0
        self.member_epoch = 0
        self.current = NO_TASKS
        self.target = NO_TASKS
        self.statuses: dict[int, str] = {}
        self.heartbeat_interval_ms = 0
        self._callback: PendingCallback | None = None
        self._offsets_urgent = False

    @property
    def not_ready(self) -> bool:
        """The last response said the group cannot assign tasks yet (NOT_READY statuses, or
        Kafka's ASSIGNMENT_DELAYED)."""
        return bool(self.statuses.keys() & _NOT_READY)

    @property
    def unsettled(self) -> bool:
        """Not done even when STABLE: the group is not ready, or a caught-up warm-up task is
        still to be reported (what `Simulation.run_until_stable` waits for)."""
        return self.not_ready or self._offsets_urgent

    # -- lifecycle -------------------------------------------------------------------------
    def start(self) -> None:
        """A new consumer: a new member id, epoch 0, no tasks; it joins on the next tick."""
        self.incarnation += 1
        self._generation += 1
        self.member_id = kafka_member_id(self._rng)
        self.member_epoch = 0
        self.active, self.standby, self.warmup = set(), set(), set()
        self.current = self.target = NO_TASKS
        self.heartbeat_interval_ms = 0
        self.task_offset_interval_ms: int | None = None
        self.acceptable_recovery_lag: int | None = None
        self.statuses = {}
        self.error = None
        self.endpoint_information_epoch = -1
        self.partitions_by_user_endpoint = None
        self._next_heartbeat = 0
        self._next_offsets: int | None = None
        self._offsets_due = False          # report task offsets with the next heartbeat
        self._offsets_urgent = False       # ... and send it at once (a warm-up task caught up)
        self._caught_up: set[TaskId] = set()
        self._sent: dict[str, Any] = {}    # Kafka's LastSentFields (empty: the next request is full)
        self._callback: PendingCallback | None = None
        self._reconciling = False
        self._lost_pending = False
        self._last_restore = self.c.now()
        self._carry: dict[TaskId, float] = {}
        self.state = S.JOINING

    def close(self) -> None:
        """Shut the thread down: close its tasks (checkpointing), leave with epoch -1 (-2 static)."""
        if not self.running:
            return
        self._callback = None
        self._checkpoint_all()
        self._release("revoked")
        if self.state not in _NOT_IN_GROUP and self.member_epoch > 0:
            self._send_leave(self._leave_epoch)
        self.state = S.STOPPED

    def crash(self) -> None:
        """The process dies: nothing is sent; the coordinator notices by the session timeout.
        The state directory keeps the last checkpoints."""
        self._callback = None
        self.active, self.standby, self.warmup = set(), set(), set()
        self.state = S.STOPPED

    def _release(self, kind: str) -> None:
        if self.active:
            self._emit(kind, sorted(self.active))
        self.active, self.standby, self.warmup = set(), set(), set()
        self.current = NO_TASKS

    def request_shutdown(self) -> None:
        """KIP-1071: ask every instance of the application to shut down (ShutdownApplication=true,
        sent, as the KIP says, with the group leave epoch); this thread leaves."""
        if not self.running:
            return
        self._callback = None
        self._checkpoint_all()
        self._release("revoked")
        if self.state not in _NOT_IN_GROUP:
            self._send_leave(LEAVE_GROUP_MEMBER_EPOCH, ", shutdown requested", shutdown=True)
        self.state = S.STOPPED

    # -- the heartbeat thread ----------------------------------------------------------------
    def _urgent(self) -> bool:
        """Joining, acknowledging, or reporting a caught-up warm-up task."""
        return self.state in (S.JOINING, S.ACKNOWLEDGING) or self._offsets_urgent

    def _after_heartbeat(self) -> None:
        """A SHUTDOWN_APPLICATION status (to this thread or another of the instance) closes the instance."""
        if self.app.shutdown_reason is not None:
            self.app._shut_down()

    def _stateful(self) -> set[str]:
        return self.config.stateful_subtopologies()

    def _task_offsets(self, now: int) -> tuple[dict[TaskId, int], dict[TaskId, int]]:
        """KIP-1071 "Cumulative task changelog offsets": offsets of the stateful tasks this thread
        owns (active: the end offset; restoring: the position) and of the dormant ones in the
        state directory (no thread of the process owns them); end offsets only for owned tasks."""
        stateful = self._stateful()
        cfg, state = self.config, self.app.state_dir.offsets
        offsets: dict[TaskId, int] = {}
        ends: dict[TaskId, int] = {}
        for task in self.active:
            if task[0] in stateful:
                offsets[task] = ends[task] = cfg.end_offset(task, now)
        for task in self.standby | self.warmup:
            if task[0] in stateful:
                offsets[task] = state.get(task, 0)
                ends[task] = cfg.end_offset(task, now)
        held = self.app.held_tasks()
        for task, offset in state.items():
            if task[0] in stateful and task not in held:
                offsets[task] = offset
        return offsets, ends

    def _build_request(self, *, shutdown: bool = False) -> Any:
        """Kafka's `HeartbeatState.buildRequestData`, plus KIP-1071's fields a full request carries."""
        cfg, sent, now = self.config, self._sent, self.c.now()
        joining = self.state is S.JOINING
        leaving = self.state is S.LEAVING
        full = (joining or not sent) and not leaving
        data: dict[str, Any] = dict(
            group_id=cfg.group_id, member_id=self.member_id, member_epoch=self.member_epoch,
            endpoint_information_epoch=self.endpoint_information_epoch, instance_id=self.instance_id,
            rack_id=None, rebalance_timeout=-1, topology=None, active_tasks=None, standby_tasks=None,
            warmup_tasks=None, process_id=None, user_endpoint=None, client_tags=None, task_offsets=None,
            task_end_offsets=None, shutdown_application=shutdown)
        if leaving:
            return request("StreamsGroupHeartbeat", 0, **data)
        if joining:
            data["topology"] = cfg.topology.to_request_data()
        if full:
            data.update(rack_id=cfg.rack_id, rebalance_timeout=cfg.rebalance_timeout_ms, process_id=self.app.process_id,
                        user_endpoint=(None if cfg.endpoint is None
                                       else {"host": cfg.endpoint[0], "port": cfg.endpoint[1]}),
                        client_tags=[{"key": k, "value": v} for k, v in sorted(cfg.client_tags.items())])
        reported = NO_TASKS if joining else self.current
        if full or sent.get("assignment") != reported:
            data.update(active_tasks=task_ids_data(reported.active), standby_tasks=task_ids_data(reported.standby),
                        warmup_tasks=task_ids_data(reported.warmup))
            # KIP-1071: offsets go along whenever a stateful task is added or removed.
            stateful = self._stateful()
            before = sent.get("assignment", NO_TASKS)
            if {t for t in before.all() if t[0] in stateful} != {t for t in reported.all() if t[0] in stateful}:
                self._offsets_due = True
            sent["assignment"] = reported
        interval_due = self._next_offsets is not None and now >= self._next_offsets
        if full or self._offsets_due or self._offsets_urgent or interval_due:
            offsets, ends = self._task_offsets(now)
            data.update(task_offsets=_offsets_data(offsets), task_end_offsets=_offsets_data(ends))
            self._offsets_due = self._offsets_urgent = False
            if self.task_offset_interval_ms:
                self._next_offsets = now + self.task_offset_interval_ms
        sent["any"] = True
        return request("StreamsGroupHeartbeat", 0, **data)

    def _on_response(self, resp: Any) -> None:
        if self.state is not S.LEAVING:   # the answer to a leave heartbeat does not matter
            super()._on_response(resp)

    def _on_success(self, resp: Any) -> None:
        """Kafka's `StreamsGroupHeartbeatRequestManager.onSuccessResponse` + `StreamsMembershipManager`."""
        if self.state in _NOT_IN_GROUP or resp.member_epoch < 0:
            return   # Kafka ignores an answer with a negative (leave) epoch
        now = self.c.now()
        joined = self.member_epoch == 0 and resp.member_epoch > 0
        self.member_epoch = resp.member_epoch
        self.heartbeat_interval_ms = ms(resp.heartbeat_interval)
        self._next_heartbeat = now + max(self.heartbeat_interval_ms, self.config.retry_backoff_ms)
        self.acceptable_recovery_lag = int(resp.acceptable_recovery_lag)
        interval = ms(resp.task_offset_interval)
        if interval > 0 and interval != self.task_offset_interval_ms:
            self.task_offset_interval_ms = interval
            if self._next_offsets is None:
                self._next_offsets = now + interval
        self.endpoint_information_epoch = int(resp.endpoint_information_epoch)
        if resp.partitions_by_user_endpoint is not None:
            self.partitions_by_user_endpoint = {
                (e.user_endpoint.host, int(e.user_endpoint.port)): {
                    "active": {tp.topic: set(tp.partitions) for tp in e.active_partitions},
                    "standby": {tp.topic: set(tp.partitions) for tp in e.standby_partitions}}
                for e in resp.partitions_by_user_endpoint}
        # Kafka's coordinator sends no status list when there is none (and Kafka's client reads
        # each response on its own), so null means "no status" here, not "unchanged".
        self.statuses = {int(s.status_code): s.status_detail for s in resp.status or ()}
        if self.statuses:
            if SHUTDOWN_APPLICATION in self.statuses and self.app.shutdown_reason is None:
                self.app.shutdown_reason = self.statuses[SHUTDOWN_APPLICATION]
                self._emit("shutdown", detail=self.statuses[SHUTDOWN_APPLICATION])
        if joined:
            self._emit("joined")
        if resp.active_tasks is not None:
            new = TaskAssignment.from_response(resp)
            if new != self.target:
                self.target = new
                self._emit("target", sorted(new.active), detail=f"standby {sorted(new.standby)} "
                                                                 f"warm-up {sorted(new.warmup)}")
        if self.current != self.target:
            self.state = S.RECONCILING
        elif self.state in (S.RECONCILING, S.JOINING):
            self.state = S.STABLE

    def _transition_to_fatal(self, code: ErrorCode, message: str | None) -> None:
        self.error = (code.name.upper(), message or "")
        self._emit("fatal", detail=f"{code.name.upper()}: {message or ''}")
        self._callback = None
        self._checkpoint_all()
        self._release("lost")
        self.state = S.FATAL

    def _transition_to_joining(self) -> None:
        super()._transition_to_joining()
        self._caught_up = set()

    # -- the application thread ------------------------------------------------------------------
    def _release_lost(self) -> None:
        self._checkpoint_all()
        self._release("lost")

    def _work(self, now: int) -> None:
        self._restore(now)

    def _maybe_reconcile(self) -> None:
        """Kafka's `StreamsMembershipManager.maybeReconcile`: revoke actives, assign, acknowledge."""
        if self.state is not S.RECONCILING or self.current == self.target or self._reconciling:
            return
        target = self.target
        now = self.c.now()
        self._restore(now)    # bring restoring tasks up to now before their set changes
        # Standby and warm-up tasks change at once (a task still active here waits for its close).
        for task in (self.standby | self.warmup) - target.standby - target.warmup:
            self._carry.pop(task, None)
        self.standby = set(target.standby - self.active)
        self.warmup = set(target.warmup - self.active)
        self._caught_up &= self.warmup
        revoked = sorted(self.active - target.active)
        added = sorted(target.active - self.active)
        generation = self._generation
        self._reconciling = True

        def assign() -> None:
            if self.state is not S.RECONCILING or generation != self._generation:
                self._reconciling = False   # fenced or left meanwhile
                return
            t = self.c.now()
            stateful = self._stateful()
            for task in added:
                if task[0] in stateful:   # simplified: an active task is caught up at once
                    self.app.state_dir.offsets[task] = self.config.end_offset(task, t)
            self.active = set(target.active)
            self.standby, self.warmup = set(target.standby), set(target.warmup)
            if added:
                self._emit("assigned", added)
            self.current = target
            self._reconciling = False
            self.state = S.ACKNOWLEDGING

        if not revoked:
            assign()
            return
        self._emit("revoking", revoked)

        def revoke_done() -> None:
            t = self.c.now()
            for task in revoked:
                if task[0] in self._stateful():
                    self.app.state_dir.offsets[task] = self.config.end_offset(task, t)
            self.active -= set(revoked)
            self._emit("revoked", revoked)
            assign()

        self._run_callback(self.config.revocation_delay_ms, revoke_done, generation)

    # -- restoration -------------------------------------------------------------------------------
    def _restore(self, now: int) -> None:
        """Standby and warm-up tasks restore towards the changelog end; actives stay caught up."""
        dt = max(0, now - self._last_restore)
        self._last_restore = now
        cfg, state, stateful = self.config, self.app.state_dir.offsets, self._stateful()
        for task in self.active:
            if task[0] in stateful:
                state[task] = cfg.end_offset(task, now)
        for task in sorted(self.standby | self.warmup):
            if task[0] not in stateful:
                continue
            end = cfg.end_offset(task, now)
            pos = state.get(task, 0)
            if pos < end:
                gain = self._carry.get(task, 0.0) + cfg.restore_records_per_s * dt / 1000
                step = int(gain)
                self._carry[task] = gain - step
                state[task] = min(end, pos + step)
        lag = self.acceptable_recovery_lag
        if lag is None:
            return
        for task in sorted(self.warmup - self._caught_up):
            if task[0] in stateful and cfg.end_offset(task, now) - state.get(task, 0) <= lag:
                # KIP-1071: report a caught-up warm-up task at once (the group epoch moves).
                self._caught_up.add(task)
                self._offsets_urgent = True
                self._emit("caught_up", [task])

    def _checkpoint_all(self) -> None:
        """Closing tasks writes their checkpoints (actives: caught up)."""
        now = self.c.now()
        self._restore(now)

    def lag(self) -> dict[TaskId, int]:
        """Restoring (standby and warm-up) stateful tasks' lag: end offset - restored offset."""
        now, state, stateful = self.c.now(), self.app.state_dir.offsets, self._stateful()
        return {t: self.config.end_offset(t, now) - state.get(t, 0)
                for t in sorted(self.standby | self.warmup) if t[0] in stateful}

    # -- views -------------------------------------------------------------------------------------
    def status_names(self) -> dict[str, str]:
        """The last statuses by name (e.g. {"STALE_TOPOLOGY": "..."})."""
        return {STATUS_NAMES.get(code, str(code)): detail for code, detail in sorted(self.statuses.items())}

    def __repr__(self) -> str:
        return (f"StreamThread({self.name!r}, {self.state}, member={self.member_id}, epoch={self.member_epoch}, "
                f"active={sorted(self.active)}, standby={sorted(self.standby)}, warmup={sorted(self.warmup)})")


class StreamsApplication:
    """One Kafka Streams instance (`KafkaStreams`): a process id, a state directory and
    `num_stream_threads` `StreamThread`s, each a member of the Streams group.

        app = StreamsApplication(c, StreamsConfig("app", topology, num_stream_threads=2), name="A")
        sim.add(app)            # adds its threads "A-1", "A-2"
        app.restart(topology.with_epoch(1))   # a rolling bounce step (KIP-1071)

    `seed` (default: application id and name) seeds the process id and member ids;
    `state_dir` lets two objects share one disk (e.g. a replacement instance); `on_event`
    receives every thread's `RebalanceEvent`. It starts at once unless `start=False`.
    """

    def __init__(self, coordinator: "Coordinator", config: StreamsConfig | str, topology: "Topology | None" = None, *,
                 name: str = "A", seed: Any = None, state_dir: StateDirectory | None = None,
                 on_event: Callable[[RebalanceEvent], None] | None = None, start: bool = True,
                 **config_kwargs: Any) -> None:
        if isinstance(config, str):
            if topology is None:
                raise ValueError("give a StreamsConfig, or an application id and a topology")
            config = StreamsConfig(config, topology, **config_kwargs)
        elif topology is not None or config_kwargs:
            raise ValueError("give either a StreamsConfig or an application id with settings, not both")
        if config.num_stream_threads < 1:
            raise ValueError("num_stream_threads must be at least 1")
        self.c = coordinator
        #: the network between this instance's threads and the coordinator (`Simulation(transport=...)`)
        self.transport = Transport(coordinator)
        self.config = config
        self.name = name
        self.seed = seed if seed is not None else f"{config.application_id}/{name}"
        self.on_event = on_event
        self.process_id = process_uuid(random.Random(f"{self.seed}/process"))
        self.state_dir = state_dir if state_dir is not None else StateDirectory()
        self.threads = self._make_threads()
        #: why the instance shut down on a SHUTDOWN_APPLICATION status (None: it did not)
        self.shutdown_reason: str | None = None
        if start:
            self.start()

    def _make_threads(self) -> list:
        if self.config.group_protocol not in ("streams", "classic"):
            raise ValueError(f"group_protocol must be 'streams' or 'classic', not {self.config.group_protocol!r}")
        if self.config.group_protocol == "classic":
            return [ClassicStreamThread(self, i) for i in range(1, self.config.num_stream_threads + 1)]
        return [StreamThread(self, i) for i in range(1, self.config.num_stream_threads + 1)]

    # -- lifecycle ---------------------------------------------------------------------------------
    def switch_protocol(self, group_protocol: str, simulation: Any = None) -> None:
        """A rolling-upgrade (or downgrade) step: close this instance, set `group.protocol`, and
        start it again with new threads (same names, same process id and state directory);
        `simulation` swaps them in (`Simulation.replace`)."""
        self.close()
        self.config.group_protocol = group_protocol
        self.threads = self._make_threads()
        if simulation is not None:
            for t in self.threads:
                simulation.replace(t.name, t)
        self.start()

    def start(self, topology: "Topology | None" = None) -> None:
        """`KafkaStreams.start()`: every thread joins (with `topology`, if given, from now on)."""
        if topology is not None:
            self.config.topology = topology
        self.shutdown_reason = None
        for t in self.threads:
            if not t.running:
                t.start()

    def close(self) -> None:
        """`KafkaStreams.close()`: every thread closes its tasks and leaves (-1, or -2 when static)."""
        for t in self.threads:
            t.close()

    def crash(self) -> None:
        """The process dies: no thread leaves; the coordinator notices by the session timeout."""
        for t in self.threads:
            t.crash()

    def restart(self, topology: "Topology | None" = None) -> None:
        """Close, then start again at once; with `topology` (e.g. its epoch bumped) from now on."""
        self.close()
        self.start(topology)

    def request_shutdown(self) -> None:
        """Ask the whole application (every instance) to shut down: one thread sends
        ShutdownApplication=true as it leaves, then this instance closes."""
        first = next((t for t in self.threads if t.running), None)
        if first is None:
            return
        self.shutdown_reason = "requested by this instance"
        first.request_shutdown()
        self.close()

    def _shut_down(self) -> None:
        """A SHUTDOWN_APPLICATION status arrived: the instance closes (every thread leaves)."""
        if any(t.running for t in self.threads):
            self.close()

    # -- views -------------------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return any(t.running for t in self.threads)

    @property
    def state(self) -> str:
        """Kafka Streams' client state: RUNNING, REBALANCING, NOT_RUNNING or ERROR."""
        if any(t.state is S.FATAL for t in self.threads) and not self.running:
            return "ERROR"
        if not self.running:
            return "NOT_RUNNING"
        if all(t.state is S.STABLE for t in self.threads if t.running):
            return "RUNNING"
        return "REBALANCING"

    @property
    def group_id(self) -> str:
        return self.config.group_id

    def held_tasks(self) -> set[TaskId]:
        """Every task some thread of this instance runs, in any role."""
        out: set[TaskId] = set()
        for t in self.threads:
            if t.running:
                out |= t.active | t.standby | t.warmup
        return out

    def tasks(self) -> dict[str, set[TaskId]]:
        """The tasks this instance runs, by role (active, standby, warmup)."""
        out: dict[str, set[TaskId]] = {"active": set(), "standby": set(), "warmup": set()}
        for t in self.threads:
            if t.running:
                for role, ts in t.tasks().items():
                    out[role] |= ts
        return out

    @property
    def partitions_by_user_endpoint(self) -> dict | None:
        """The Interactive Queries map the coordinator last sent this instance:
        {(host, port): {"active": {topic: partitions}, "standby": {...}}}."""
        best = max((t for t in self.threads if t.partitions_by_user_endpoint is not None),
                   key=lambda t: t.endpoint_information_epoch, default=None)
        return None if best is None else best.partitions_by_user_endpoint

    def thread(self, name_or_index: str | int) -> StreamThread:
        if isinstance(name_or_index, int):
            return self.threads[name_or_index - 1]
        return next(t for t in self.threads if t.name == name_or_index)

    @property
    def errors(self) -> dict[str, tuple[str, str]]:
        """Threads that went FATAL, and why."""
        return {t.name: t.error for t in self.threads if t.error is not None}

    def __repr__(self) -> str:
        tasks = self.tasks()
        return (f"StreamsApplication({self.name!r}, {self.state}, process={self.process_id[:8]}, "
                f"threads={len(self.threads)}, active={len(tasks['active'])}, standby={len(tasks['standby'])}, "
                f"warmup={len(tasks['warmup'])})")


__all__ = ["StreamsApplication", "StreamThread", "StreamsConfig", "StreamsMemberState", "StateDirectory",
           "TaskAssignment", "task_ids_data", "STATUS_NAMES"]
