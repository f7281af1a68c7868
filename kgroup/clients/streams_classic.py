"""A Kafka Streams stream thread on the *classic* protocol (`group.protocol=classic`, the only
one before KIP-1071): its consumer joins a classic group with protocol type "consumer" and
protocol "stream", its subscription user data a SubscriptionInfo (v11: process id, task offset
sums with -2 for the tasks it runs as active, endpoint, client tags), and reads its tasks from
the AssignmentInfo in the SyncGroup answer. Rebalancing is cooperative (KIP-429), as Kafka
Streams' default: a thread that had to give tasks up rejoins at once, and an AssignmentInfo
asking for a probing rebalance (`nextRebalanceMs`) makes it rejoin at that time.

This is what KIP-1071's online migration serves: the same `StreamsApplication` with
`StreamsConfig(group_protocol="classic")` runs these threads; restarted with
`group_protocol="streams"` it runs KIP-1071 `StreamThread`s (a rolling upgrade).

When the group is a real classic group, the leader assigns (Kafka Streams'
StreamsPartitionAssignor, simplified here: active tasks only, balanced and sticky to what each
member ran; a task moving to another member is left out of this generation until its owner
has revoked it — KIP-429's rule. Standby and warm-up placement by the client-side assignor is
not modelled; a Streams group's coordinator assigns those.)
"""
from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

from kgroup.clients.classic import RebalanceEvent
from kgroup.clients.transport import RequestTimeout
from kgroup.errors import ErrorCode
from kgroup.protocol import request
from kgroup.protocol.consumer_protocol import (Assignment, Subscription, decode_assignment, decode_subscription,
                                               encode_assignment, encode_subscription)
from kgroup.protocol.streams_protocol import (LATEST_OFFSET, NO_FOLLOWUP_REBALANCE, STREAMS_PROTOCOL_NAME,
                                              AssignmentInfo, SubscriptionInfo, decode_assignment_info,
                                              decode_subscription_info, encode_assignment_info,
                                              encode_subscription_info)

if TYPE_CHECKING:
    from kgroup.clients.streams import StreamsApplication

E = ErrorCode
TaskId = tuple[str, int]


def source_partitions(configured: Any, task: TaskId) -> list[tuple[str, int]]:
    """The input partitions of a task (its subtopology's source and repartition topics)."""
    cs = configured.subtopologies.get(task[0]) if configured is not None and configured.subtopologies else None
    return [] if cs is None else [(t, task[1]) for t in (*cs.source_topics, *cs.repartition_source_topics)]


def leader_assignment(members: list[tuple[str, SubscriptionInfo, int]], tasks: list[TaskId],
                      configured: Any) -> dict[str, bytes]:
    """The leader's assignment for a classic group of Kafka Streams members: active tasks,
    balanced, each member keeping what it ran (offset sum -2) up to its share; a task still
    run by another member is not handed over in this generation (cooperative rebalancing)."""
    ids = sorted(m for m, _, _ in members)
    previous: dict[TaskId, str] = {}
    for mid, info, _ in sorted(members, key=lambda x: x[0]):
        for t in info.active_tasks:
            previous.setdefault(t, mid)
    share = -(-len(tasks) // max(len(ids), 1))
    out: dict[str, list[TaskId]] = {m: [] for m in ids}
    for t in tasks:
        owner = previous.get(t)
        if owner is not None and len(out[owner]) < share:
            out[owner].append(t)
    free = [t for t in tasks if not any(t in ts for ts in out.values())]
    for t in free:
        if t in previous:
            continue    # its owner must give it up first; the next rebalance places it
        target = min(ids, key=lambda m: (len(out[m]), m))
        out[target].append(t)
    result = {}
    for mid, info, version in members:
        pairs = sorted((tp, t) for t in out[mid] for tp in source_partitions(configured, t))
        data = encode_assignment_info(AssignmentInfo(active_tasks=tuple(t for _, t in pairs)))
        result[mid] = encode_assignment(Assignment([tp for tp, _ in pairs], data), min(version, 3))
    return result


class ClassicStreamThread:
    """One stream thread on the classic protocol (see the module docstring). Driven by
    `Simulation` like the other simulated members: `tick()` heartbeats, `poll()` runs the
    rebalance and restoration."""

    protocol = "classic"
    session_timeout_ms = 45_000      # Kafka Streams' consumer default
    heartbeat_interval_ms = 3_000

    def __init__(self, app: "StreamsApplication", index: int) -> None:
        from kgroup.clients.streams import StreamsMemberState
        self._S = StreamsMemberState
        self.app, self.c, self.index = app, app.c, index
        self.name = f"{app.name}-{index}"
        self.events: list[RebalanceEvent] = []
        self.incarnation = 0
        self.state = StreamsMemberState.STOPPED
        self.member_id, self.generation = "", -1
        self.active: set[TaskId] = set()
        self.standby: set[TaskId] = set()
        self.warmup: set[TaskId] = set()      # always empty: the classic protocol has no warm-ups
        self.error: tuple[str, str] | None = None
        self.partitions_by_user_endpoint = None
        self.endpoint_information_epoch = -1
        #: when the last assignment asked for a probing rebalance (None: it did not)
        self.probing_rebalance_at: int | None = None
        self._join = self._sync = None
        self._sent_at = 0                 # when the pending JoinGroup/SyncGroup went out
        self._rejoin = False
        self._next_heartbeat = 0
        self._last_restore = self.c.now()

    # -- identity (as StreamThread) ---------------------------------------------------------
    @property
    def config(self) -> Any:
        return self.app.config

    @property
    def instance_id(self) -> str | None:
        inst = self.config.group_instance_id
        return None if inst is None else f"{inst}-{self.index}"

    @property
    def client_id(self) -> str:
        return f"{self.config.client_id or self.app.name}-StreamThread-{self.index}-consumer"

    @property
    def owned(self) -> set[TaskId]:
        return self.active

    @property
    def running(self) -> bool:
        return self.state not in (self._S.STOPPED, self._S.FATAL)

    @property
    def rejoin_needed(self) -> bool:
        return self._rejoin or self._join is not None or self._sync is not None

    @property
    def member_epoch(self) -> int:
        return self.generation

    def tasks(self) -> dict[str, set[TaskId]]:
        return {"active": set(self.active), "standby": set(self.standby), "warmup": set()}

    def _configured(self) -> Any:
        from kgroup.groups.streams import configure
        return configure(self.config.topology, self.c.cluster)

    def all_units(self) -> list[TaskId]:
        configured = self._configured()
        return [(s, p) for s, n in sorted(configured.num_tasks().items()) for p in range(n)]

    # -- lifecycle ---------------------------------------------------------------------------
    def start(self) -> None:
        """A new consumer: no member id, no tasks (the state directory stays)."""
        self.incarnation += 1
        self.member_id, self.generation = "", -1
        self.active, self.standby = set(), set()
        self.error, self.probing_rebalance_at = None, None
        self._join = self._sync = None
        self._rejoin = True
        self._last_restore = self.c.now()
        self.state = self._S.JOINING

    def close(self) -> None:
        """Close the tasks and, unless static (KIP-345), send LeaveGroup."""
        if not self.running:
            return
        self._restore(self.c.now())
        if self.active:
            self._emit("revoked", sorted(self.active))
        if self.instance_id is None and self.member_id:
            with contextlib.suppress(RequestTimeout):   # a lost answer to a leave: out either way
                self.transport.send(request("LeaveGroup", 5, group_id=self.config.group_id,
                                            members=[{"member_id": self.member_id, "group_instance_id": None,
                                                      "reason": "the consumer is being closed"}]),
                                    client_id=self.client_id)
            self._emit("left")
        self.active, self.standby = set(), set()
        self.state = self._S.STOPPED

    def crash(self) -> None:
        self.active, self.standby = set(), set()
        self.state = self._S.STOPPED

    def request_shutdown(self) -> None:
        self.close()

    # -- heartbeat thread --------------------------------------------------------------------
    def tick(self) -> None:
        if not self.running or self.generation < 0 or self._join is not None:
            return
        now = self.c.now()
        if now < self._next_heartbeat:
            return
        self._next_heartbeat = now + self.heartbeat_interval_ms
        try:
            resp = self.transport.send(request("Heartbeat", 4, group_id=self.config.group_id,
                                               generation_id=self.generation, member_id=self.member_id,
                                               group_instance_id=self.instance_id), client_id=self.client_id)
        except RequestTimeout as e:
            self._emit("error", detail=f"heartbeat: {e}")   # retried after the backoff, as Kafka's thread does
            self._next_heartbeat = now + self.config.retry_backoff_ms
            return
        self._on_error(resp.error_code, "heartbeat")

    # -- application thread ------------------------------------------------------------------
    def poll(self) -> None:
        if not self.running:
            return
        now = self.c.now()
        if self._join is not None and self._join.done:
            self._on_join(self._join.response)
        if self._sync is not None and self._sync.done:
            self._on_sync(self._sync.response)
        # An answer that never comes (dropped by the coordinator for a newer JoinGroup of this
        # member): timed out as Kafka's NetworkClient does (JoinGroup: max(request.timeout.ms,
        # rebalance timeout + 5 s); SyncGroup: request.timeout.ms), then rejoin.
        if self._join is not None and now - self._sent_at >= max(30_000, self.config.rebalance_timeout_ms + 5_000):
            self._join_failed("join: no answer within the JoinGroup timeout")
        elif self._sync is not None and now - self._sent_at >= 30_000:
            self._join_failed("sync: no answer within request.timeout.ms")
        if self.probing_rebalance_at is not None and now >= self.probing_rebalance_at:
            self.probing_rebalance_at = None
            self._rejoin = True          # a probing rebalance: report how far the standbys got
        if self._rejoin and self._join is None and self._sync is None and self.running:
            self._send_join()
        self._restore(now)

    def subscription_info(self) -> SubscriptionInfo:
        """Kafka Streams' SubscriptionInfo: -2 for active tasks, the offset of every other task
        with local state (standbys and dormant ones in the state directory)."""
        stateful = self.config.stateful_subtopologies()
        sums = {t: o for t, o in self.app.state_dir.offsets.items() if t[0] in stateful}
        for t in self.standby:
            sums.setdefault(t, 0)
        sums.update({t: LATEST_OFFSET for t in self.active})
        return SubscriptionInfo(self.app.process_id, sums, self.config.endpoint,
                                tuple(sorted(self.config.client_tags.items())))

    def _send_join(self) -> None:
        configured = self._configured()
        topics = sorted({t for s in (configured.subtopologies or {}).values() for t in s.source_topics})
        owned = sorted(tp for t in self.active for tp in source_partitions(configured, t))
        sub = Subscription(topics, encode_subscription_info(self.subscription_info()), owned_partitions=owned,
                           generation_id=self.generation, rack_id=self.config.rack_id)
        join = request(
            "JoinGroup", 9, group_id=self.config.group_id, session_timeout=self.session_timeout_ms,
            rebalance_timeout=self.config.rebalance_timeout_ms, member_id=self.member_id,
            group_instance_id=self.instance_id, protocol_type="consumer",
            protocols=[{"name": STREAMS_PROTOCOL_NAME, "metadata": encode_subscription(sub)}], reason=None)
        self._rejoin = False
        self.state = self._S.JOINING
        self._sent_at = self.c.now()
        try:
            self._join = self.transport.send(join, client_id=self.client_id)
        except RequestTimeout as e:
            self._join_failed(f"join: {e}")
            return
        if self._join.done:
            self._on_join(self._join.response)

    def _on_join(self, resp: Any) -> None:
        self._join = None
        if resp.error_code == E.member_id_required:
            self.member_id = resp.member_id
            self._send_join()
            return
        if resp.error_code != E.none:
            self._on_error(resp.error_code, "join")
            if self.running:
                self._rejoin = True
            return
        self.member_id, self.generation = resp.member_id, resp.generation_id
        assignments: dict[str, bytes] = {}
        if resp.leader == resp.member_id and not resp.skip_assignment:
            members = []
            for m in resp.members:
                sub, version = decode_subscription(bytes(m.metadata))
                members.append((m.member_id, decode_subscription_info(sub.user_data), version))
            assignments = leader_assignment(members, self.all_units(), self._configured())
        self._emit("joined", detail="leader" if resp.leader == self.member_id else "")
        sync = request(
            "SyncGroup", 5, group_id=self.config.group_id, generation_id=self.generation, member_id=self.member_id,
            group_instance_id=self.instance_id, protocol_type="consumer", protocol_name=STREAMS_PROTOCOL_NAME,
            assignments=[{"member_id": m, "assignment": a} for m, a in assignments.items()])
        self._next_heartbeat = self.c.now() + self.heartbeat_interval_ms
        self._sent_at = self.c.now()
        try:
            self._sync = self.transport.send(sync, client_id=self.client_id)
        except RequestTimeout as e:
            self._join_failed(f"sync: {e}")
            return
        if self._sync.done:
            self._on_sync(self._sync.response)

    def _join_failed(self, why: str) -> None:
        """No answer to JoinGroup/SyncGroup: rejoin with the same member id (Kafka's
        `AbstractCoordinator.joinGroupIfNeeded` retries a retriable join failure)."""
        self._emit("error", detail=why)
        self._join = self._sync = None
        self._rejoin = True

    @property
    def transport(self) -> Any:
        """The application's network to the coordinator."""
        return self.app.transport

    def _on_sync(self, resp: Any) -> None:
        self._sync = None
        if resp.error_code != E.none:
            self._on_error(resp.error_code, "sync")
            if self.running:
                self._rejoin = True
            return
        info = AssignmentInfo()
        if resp.assignment:
            wire, _ = decode_assignment(bytes(resp.assignment))
            if wire.user_data:
                info = decode_assignment_info(wire.user_data)
        active, standby = set(info.active_tasks), set(info.standby_tasks)
        self._restore(self.c.now())
        revoked, added = sorted(self.active - active), sorted(active - self.active)
        stateful = self.config.stateful_subtopologies()
        for t in revoked:   # closing an active task checkpoints it (caught up)
            if t[0] in stateful:
                self.app.state_dir.offsets[t] = self.config.end_offset(t, self.c.now())
        if revoked:
            self._emit("revoked", revoked)
            self._rejoin = True          # cooperative: rejoin so the tasks can move
        self.active, self.standby = active, standby
        if added:
            self._emit("assigned", added)
        self.probing_rebalance_at = (None if info.next_rebalance_ms == NO_FOLLOWUP_REBALANCE
                                     else info.next_rebalance_ms)
        self.state = self._S.STABLE

    def _on_error(self, code: ErrorCode, where: str) -> None:
        if code == E.none:
            return
        if code == E.rebalance_in_progress:
            self._rejoin = True
            return
        self._emit("error", detail=f"{where}: {code.name.upper()}")
        if code in (E.illegal_generation, E.unknown_member_id):
            if self.active:
                self._emit("lost", sorted(self.active))
            self.active, self.standby = set(), set()
            self.generation = -1
            if code == E.unknown_member_id:
                self.member_id = ""
            self._rejoin = True
            self.state = self._S.JOINING
            return
        # FENCED_INSTANCE_ID, INCONSISTENT_GROUP_PROTOCOL, ...: Kafka's consumer fails fatally.
        self.error = (code.name.upper(), where)
        self.active, self.standby = set(), set()
        self.state = self._S.FATAL

    def _restore(self, now: int) -> None:
        """Standbys restore towards the changelog end; active tasks are caught up."""
        dt = max(0, now - self._last_restore)
        self._last_restore = now
        cfg, state, stateful = self.config, self.app.state_dir.offsets, self.config.stateful_subtopologies()
        for t in self.active:
            if t[0] in stateful:
                state[t] = cfg.end_offset(t, now)
        for t in sorted(self.standby):
            if t[0] in stateful:
                end = cfg.end_offset(t, now)
                state[t] = min(end, state.get(t, 0) + int(cfg.restore_records_per_s * dt / 1000))

    def _emit(self, kind: str, tasks=(), *, detail: str = "") -> None:
        ev = RebalanceEvent(self.c.now(), self.name, kind, tuple(tasks), self.generation, detail)
        self.events.append(ev)
        if self.app.on_event is not None:
            self.app.on_event(ev)

    def __repr__(self) -> str:
        return (f"ClassicStreamThread({self.name!r}, {self.state}, member={self.member_id or '-'}, "
                f"generation={self.generation}, active={sorted(self.active)}, standby={sorted(self.standby)})")


__all__ = ["ClassicStreamThread", "leader_assignment", "source_partitions"]
