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

from typing import Any

from kgroup.clients.classic import ClassicMember, ConsumerConfig
from kgroup.clients.stream_thread import StreamsInstance, StreamsMemberState, StreamThreadBase, TaskId
from kgroup.errors import ErrorCode
from kgroup.protocol.consumer_protocol import (Assignment, Subscription, decode_assignment, decode_subscription,
                                               encode_assignment, encode_subscription)
from kgroup.protocol.streams_protocol import (LATEST_OFFSET, NO_FOLLOWUP_REBALANCE, STREAMS_PROTOCOL_NAME,
                                              AssignmentInfo, SubscriptionInfo, decode_assignment_info,
                                              decode_subscription_info, encode_assignment_info,
                                              encode_subscription_info)

S = StreamsMemberState


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


class ClassicStreamThread(StreamThreadBase, ClassicMember):
    """One stream thread on the classic protocol (see the module docstring). Driven by
    `Simulation` like the other simulated members: `tick()` heartbeats, `poll()` runs the
    rebalance and restoration. `warmup` stays empty: the classic protocol has no warm-up tasks."""

    protocol = "classic"
    protocol_name = STREAMS_PROTOCOL_NAME
    session_timeout_ms = 45_000      # Kafka Streams' consumer default
    heartbeat_interval_ms = 3_000
    _states = S
    # S has no UNJOINED or SYNCING: a thread is JOINING until its assignment comes
    _unjoined = S.JOINING
    _syncing = S.JOINING

    def __init__(self, app: StreamsInstance, index: int) -> None:
        super().__init__(app, index)
        self.generation = -1
        #: when the last assignment asked for a probing rebalance (None: it did not)
        self.probing_rebalance_at: int | None = None
        self._join = self._sync = None
        self._sent_at = 0                 # when the pending JoinGroup/SyncGroup went out
        self._rejoin = False
        self._next_heartbeat = 0
        self._last_restore = self.c.now()

    @property
    def consumer_config(self) -> ConsumerConfig:
        """The configs of this thread's consumer: Kafka's defaults, but for the ids, the
        rebalance timeout, the rack and the retry backoff, which come from the Streams config
        (the topics it subscribes to come from the topology, with each JoinGroup)."""
        cfg = self.config
        return ConsumerConfig(cfg.group_id, (), client_id=self.client_id, group_instance_id=self.instance_id,
                              session_timeout_ms=self.session_timeout_ms,
                              heartbeat_interval_ms=self.heartbeat_interval_ms,
                              max_poll_interval_ms=cfg.rebalance_timeout_ms, rack_id=cfg.rack_id,
                              retry_backoff_ms=cfg.retry_backoff_ms)

    @property
    def rejoin_needed(self) -> bool:
        return self._rejoin or self._join is not None or self._sync is not None

    def _need_rejoin(self, needed: bool = True) -> None:
        self._rejoin = needed

    @property
    def member_epoch(self) -> int:
        return self.generation

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
        self.state = S.JOINING

    def _on_leave_prepare(self) -> None:
        """Closing the tasks checkpoints them."""
        self._restore(self.c.now())
        if self.active:
            self._emit("revoked", sorted(self.active))

    def _clear_assignment(self) -> None:
        self.active, self.standby = set(), set()

    def request_shutdown(self) -> None:
        self.close()

    # -- application thread ------------------------------------------------------------------
    def poll(self) -> None:
        if not self.running:
            return
        now = self.c.now()
        self._drive_rebalance()
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

    def _join_protocols(self) -> list[dict]:
        configured = self._configured()
        topics = sorted({t for s in (configured.subtopologies or {}).values() for t in s.source_topics})
        owned = sorted(tp for t in self.active for tp in source_partitions(configured, t))
        sub = Subscription(topics, encode_subscription_info(self.subscription_info()), owned_partitions=owned,
                           generation_id=self.generation, rack_id=self.config.rack_id)
        return [{"name": STREAMS_PROTOCOL_NAME, "metadata": encode_subscription(sub)}]

    def _assign(self, members: Any) -> dict[str, bytes]:
        subscriptions = []
        for m in members:
            sub, version = decode_subscription(bytes(m.metadata))
            subscriptions.append((m.member_id, decode_subscription_info(sub.user_data), version))
        return leader_assignment(subscriptions, self.all_units(), self._configured())

    def _on_join_complete(self, assignment: Any) -> None:
        info = AssignmentInfo()
        if assignment:
            wire, _ = decode_assignment(bytes(assignment))
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
        self.state = S.STABLE

    def _on_fatal_error(self, code: ErrorCode, where: str) -> None:
        # FENCED_INSTANCE_ID, INCONSISTENT_GROUP_PROTOCOL, ...: Kafka's consumer fails fatally.
        self.error = (code.name.upper(), where)
        self.active, self.standby = set(), set()
        self.state = S.FATAL

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

    def __repr__(self) -> str:
        return (f"ClassicStreamThread({self.name!r}, {self.state}, member={self.member_id or '-'}, "
                f"generation={self.generation}, active={sorted(self.active)}, standby={sorted(self.standby)})")


__all__ = ["ClassicStreamThread", "leader_assignment", "source_partitions"]
