"""A simulated classic consumer: the group protocol as Kafka's `ConsumerCoordinator`
speaks it (JoinGroup → SyncGroup → heartbeats), eager or cooperative, dynamic or static.

It is sans-IO like the coordinator: a `ClassicConsumer` only acts when the driver
calls `poll(now)` (the application's poll loop) and `tick(now)` (the background
heartbeat thread). Real consumer-protocol bytes travel in the requests, so the
GroupMetadata records the coordinator writes carry genuine subscriptions and
assignments.
"""
from __future__ import annotations

import contextlib
import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kgroup.clients.assignors import MemberSubscription, RebalanceProtocol, get_assignor
from kgroup.clients.transport import RequestTimeout, Transport
from kgroup.errors import ErrorCode
from kgroup.protocol import request
from kgroup.protocol.consumer_protocol import (Assignment, Subscription, decode_assignment, decode_subscription,
                                               encode_assignment, encode_subscription)

if TYPE_CHECKING:
    from kgroup.coordinator import Coordinator

E = ErrorCode
TP = tuple[str, int]


class MemberState(str, enum.Enum):
    """Where the consumer is in the group protocol (Kafka's MemberState, plus process states)."""

    UNJOINED = "unjoined"
    JOINING = "joining"          # JoinGroup sent, waiting for the answer
    SYNCING = "syncing"          # SyncGroup sent, waiting for the assignment
    STABLE = "stable"
    STOPPED = "stopped"          # closed or crashed: the process is not running
    FENCED = "fenced"            # FENCED_INSTANCE_ID: another process took the instance id

    def __str__(self) -> str:
        return self.value


@dataclass
class ConsumerConfig:
    """The consumer configs that matter to the group protocol (Kafka's names and defaults)."""

    group_id: str
    topics: tuple[str, ...]
    client_id: str = "consumer"
    group_instance_id: str | None = None                 # group.instance.id: static membership
    assignors: tuple[str, ...] = ("range", "cooperative-sticky")  # partition.assignment.strategy
    session_timeout_ms: int = 45_000
    heartbeat_interval_ms: int = 3_000
    max_poll_interval_ms: int = 300_000                  # sent as the rebalance timeout
    auto_commit_interval_ms: int = 5_000
    rack_id: str | None = None                           # client.rack
    join_version: int = 9
    sync_version: int = 5
    heartbeat_version: int = 4
    leave_version: int = 5
    commit_version: int = 9
    retry_backoff_ms: int = 100                          # retry.backoff.ms
    request_timeout_ms: int = 30_000                     # request.timeout.ms

    @property
    def join_timeout_ms(self) -> int:
        """How long a JoinGroup may wait for its answer (Kafka's AbstractCoordinator:
        max(request.timeout.ms, rebalance timeout + JOIN_GROUP_TIMEOUT_LAPSE of 5 s))."""
        return max(self.request_timeout_ms, self.max_poll_interval_ms + 5_000)


@dataclass
class RebalanceEvent:
    """Something the application saw (a rebalance listener callback, an error)."""

    time: int
    consumer: str
    kind: str            # "revoked" | "assigned" | "lost" | "joined" | "rejoin" | "error" | "fenced" | "left"
    partitions: tuple[TP, ...] = ()
    generation: int = -1
    detail: str = ""


class ClassicConsumer:
    """One consumer process in a classic group.

    `records_per_poll` is how far each owned partition advances per poll (for
    committed offsets); `on_event` receives every `RebalanceEvent`.
    """

    def __init__(self, coordinator: "Coordinator", config: ConsumerConfig, *, name: str | None = None,
                 records_per_poll: int = 10, on_event: Callable[[RebalanceEvent], None] | None = None) -> None:
        self.c = coordinator
        #: the network between this member and the coordinator (`Simulation(transport=...)` swaps it)
        self.transport = Transport(coordinator)
        self.config = config
        self.name = name or config.group_instance_id or config.client_id
        self.records_per_poll = records_per_poll
        self.on_event = on_event
        self.assignors = [get_assignor(n) for n in config.assignors]
        # Kafka: COOPERATIVE only when every configured assignor supports it.
        self.protocol = (RebalanceProtocol.COOPERATIVE
                         if all(RebalanceProtocol.COOPERATIVE in a.supported_protocols for a in self.assignors)
                         else RebalanceProtocol.EAGER)
        self.events: list[RebalanceEvent] = []
        self.state = MemberState.STOPPED
        self.incarnation = 0
        self.start()

    # -- lifecycle -----------------------------------------------------------------------
    def start(self) -> None:
        """A new process: no member id (a static member keeps its instance id)."""
        self.member_id = ""
        self.generation = -1
        self.protocol_name: str | None = None
        self.owned: set[TP] = set()
        self.positions: dict[TP, int] = {}
        self.committed: dict[TP, int] = {}
        self.state = MemberState.UNJOINED
        self.rejoin_needed = True
        self._join = self._sync = None
        self._sent_at = 0                 # when the pending JoinGroup/SyncGroup went out
        #: the leader's partition counts of the group's topics when it assigned (Kafka's
        #: ConsumerCoordinator.assignmentSnapshot); None when not the leader
        self._assignment_snapshot: dict[str, int] | None = None
        self._next_heartbeat = 0
        self._next_commit = self.c.now() + self.config.auto_commit_interval_ms
        self.incarnation += 1

    @property
    def running(self) -> bool:
        return self.state not in (MemberState.STOPPED, MemberState.FENCED)

    @property
    def is_static(self) -> bool:
        return self.config.group_instance_id is not None

    def close(self) -> None:
        """A clean shutdown: commit, revoke, and — dynamic members only — LeaveGroup.
        Static members stay in the group until their session times out (KIP-345)."""
        if not self.running:
            return
        self._commit_sync()
        if self.owned:
            self._emit("revoked", sorted(self.owned))
        if not self.is_static and self.member_id:
            with contextlib.suppress(RequestTimeout):   # a lost answer to a leave: out either way
                self.transport.send(request("LeaveGroup", self.config.leave_version, group_id=self.config.group_id,
                                            members=[{"member_id": self.member_id, "group_instance_id": None,
                                                      "reason": "the consumer is being closed"}]),
                                    client_id=self.config.client_id)
            self._emit("left")
        self.owned = set()
        self.state = MemberState.STOPPED

    def crash(self) -> None:
        """The process dies: nothing is sent; the coordinator notices via the session timeout."""
        self.owned = set()
        self.state = MemberState.STOPPED

    # -- the application thread ------------------------------------------------------------
    def poll(self) -> None:
        """One `consumer.poll()`: drive the rebalance, then "process" a batch."""
        if not self.running:
            return
        if self.state is MemberState.STABLE and not self.rejoin_needed and self._metadata_changed():
            # Kafka's rejoinNeededOrPending: the leader rejoins when the partitions of the group's
            # topics changed since it assigned (a topic deleted or created, partitions added)
            self.rejoin_needed = True
            self._emit("rejoin", detail="cached metadata has changed")
        self._drive_rebalance()
        if self.state is MemberState.STABLE and not self.rejoin_needed:
            for tp in self.owned:
                self.positions[tp] = self.positions.get(tp, self.committed.get(tp, 0)) + self.records_per_poll
            if self.c.now() >= self._next_commit:
                self._commit_async()

    def _metadata_changed(self) -> bool:
        snapshot = self._assignment_snapshot
        return snapshot is not None and snapshot != self._partition_counts(snapshot)

    def _partition_counts(self, topics: Any) -> dict[str, int]:
        cluster = self.c.cluster
        return {t: cluster.partitions(t) if t in cluster else 0 for t in topics}

    def _drive_rebalance(self) -> None:
        if self._join is not None and self._join.done:
            self._on_join_response(self._join.response)
        if self._sync is not None and self._sync.done:
            self._on_sync_response(self._sync.response)
        # A pending answer that never comes (the coordinator dropped it, e.g. for a newer
        # JoinGroup of the same member): Kafka's NetworkClient times the request out, then rejoins.
        now = self.c.now()
        if self._join is not None and now - self._sent_at >= self.config.join_timeout_ms:
            self._join_failed("join: no answer within the JoinGroup timeout")
        elif self._sync is not None and now - self._sent_at >= self.config.request_timeout_ms:
            self._join_failed("sync: no answer within request.timeout.ms")
        if self.rejoin_needed and self._join is None and self._sync is None and self.running:
            self._send_join()

    # -- the heartbeat thread -----------------------------------------------------------------
    def tick(self) -> None:
        """Background heartbeats every heartbeat.interval.ms while a member of a generation."""
        if not self.running or self.generation < 0 or self.state is MemberState.JOINING:
            return
        now = self.c.now()
        if now < self._next_heartbeat:
            return
        self._next_heartbeat = now + self.config.heartbeat_interval_ms
        try:
            resp = self.transport.send(request("Heartbeat", self.config.heartbeat_version,
                                               group_id=self.config.group_id, generation_id=self.generation,
                                               member_id=self.member_id,
                                               group_instance_id=self.config.group_instance_id),
                                       client_id=self.config.client_id)
        except RequestTimeout as e:
            # Kafka's HeartbeatResponseHandler failure: the coordinator is marked unknown and
            # rediscovered; the heartbeat thread tries again after the retry backoff.
            self._emit("error", detail=f"heartbeat: {e}")
            self._next_heartbeat = now + self.config.retry_backoff_ms
            return
        self._on_group_error(resp.error_code, "heartbeat")

    # -- JoinGroup / SyncGroup ------------------------------------------------------------------
    def subscription(self, assignor) -> Subscription:
        owned = sorted(self.owned)
        return Subscription(topics=tuple(sorted(self.config.topics)),
                            user_data=assignor.subscription_user_data(set(self.config.topics), owned, self.generation),
                            owned_partitions=tuple(owned), generation_id=self.generation,
                            rack_id=self.config.rack_id)

    def _send_join(self) -> None:
        if self.protocol is RebalanceProtocol.EAGER and self.owned:
            # onJoinPrepare: eager members give everything up before joining.
            self._commit_sync()
            self._emit("revoked", sorted(self.owned))
            self.owned = set()
        protocols = [{"name": a.name, "metadata": encode_subscription(self.subscription(a))} for a in self.assignors]
        join = request(
            "JoinGroup", self.config.join_version, group_id=self.config.group_id,
            session_timeout=self.config.session_timeout_ms, rebalance_timeout=self.config.max_poll_interval_ms,
            member_id=self.member_id, group_instance_id=self.config.group_instance_id, protocol_type="consumer",
            protocols=protocols, reason=None)
        self.state = MemberState.JOINING
        self.rejoin_needed = False
        self._sent_at = self.c.now()
        try:
            self._join = self.transport.send(join, client_id=self.config.client_id)
        except RequestTimeout as e:
            self._join_failed(f"join: {e}")
            return
        if self._join.done:  # e.g. MEMBER_ID_REQUIRED comes back at once
            self._on_join_response(self._join.response)

    def _on_join_response(self, resp: Any) -> None:
        self._join = None
        code = resp.error_code
        if code == E.member_id_required:
            self.member_id = resp.member_id
            self.rejoin_needed = True
            self.state = MemberState.UNJOINED
            self._send_join()
            return
        if code != E.none:
            self._on_group_error(code, "join")
            if self.running:
                self.rejoin_needed = True
                self.state = MemberState.UNJOINED
            return
        self.member_id, self.generation, self.protocol_name = resp.member_id, resp.generation_id, resp.protocol_name
        assignments = {}
        # only the leader watches the metadata (Kafka: onJoinComplete clears the snapshot otherwise)
        self._assignment_snapshot = None
        if resp.leader == resp.member_id and not resp.skip_assignment:
            assignments = self._assign(resp.members)
        self._emit("joined", generation=self.generation, detail="leader" if resp.leader == self.member_id else "")
        sync = request(
            "SyncGroup", self.config.sync_version, group_id=self.config.group_id, generation_id=self.generation,
            member_id=self.member_id, group_instance_id=self.config.group_instance_id, protocol_type="consumer",
            protocol_name=self.protocol_name,
            assignments=[{"member_id": m, "assignment": a} for m, a in assignments.items()])
        self.state = MemberState.SYNCING
        self._next_heartbeat = self.c.now() + self.config.heartbeat_interval_ms
        self._sent_at = self.c.now()
        try:
            self._sync = self.transport.send(sync, client_id=self.config.client_id)
        except RequestTimeout as e:
            self._join_failed(f"sync: {e}")
            return
        if self._sync.done:
            self._on_sync_response(self._sync.response)

    def _assign(self, members: Any) -> dict[str, bytes]:
        """The leader runs the chosen client-side assignor over every member's subscription."""
        assignor = next(a for a in self.assignors if a.name == self.protocol_name)
        subs, versions = [], {}
        for m in members:
            sub, version = decode_subscription(m.metadata)
            versions[m.member_id] = version
            subs.append(MemberSubscription(m.member_id, m.group_instance_id, sub))
        topics = {t for s in subs for t in s.subscription.topics}
        self._assignment_snapshot = self._partition_counts(sorted(topics))
        partitions = {t: n for t, n in self._assignment_snapshot.items() if n}
        result = assignor.assign(partitions, subs)
        return {mid: encode_assignment(result.get(mid, Assignment(())), min(versions[mid], 3))
                for mid in versions}

    def _on_sync_response(self, resp: Any) -> None:
        self._sync = None
        if resp.error_code != E.none:
            self._on_group_error(resp.error_code, "sync")
            if self.running:
                self.rejoin_needed = True
                self.state = MemberState.UNJOINED
            return
        assigned = set(decode_assignment(resp.assignment)[0].partitions) if resp.assignment else set()
        added = assigned - self.owned
        if self.protocol is RebalanceProtocol.COOPERATIVE:
            revoked = self.owned - assigned
            if revoked:
                # KIP-429: give up what moved, then rejoin so it can go to its new owner.
                self._commit_sync()
                self._emit("revoked", sorted(revoked), generation=self.generation)
                self.rejoin_needed = True
        self.owned = assigned
        self.state = MemberState.STABLE
        self._emit("assigned", sorted(added), generation=self.generation)

    def _join_failed(self, why: str) -> None:
        """A JoinGroup or SyncGroup without an answer. Kafka's `AbstractCoordinator.joinGroupIfNeeded`:
        the join future failed with a retriable error, so rejoin (JoinGroup again, same member id
        and generation) after the retry backoff; the coordinator takes the retried JoinGroup of a
        known member as the same member."""
        self._emit("error", detail=why)
        self._join = self._sync = None
        self.rejoin_needed = True
        self.state = MemberState.UNJOINED

    # -- errors --------------------------------------------------------------------------------
    def _on_group_error(self, code: ErrorCode, where: str) -> None:
        """The ConsumerCoordinator's reactions to group errors."""
        if code == E.none:
            return
        if code == E.rebalance_in_progress:
            self.rejoin_needed = True
            return
        self._emit("error", detail=f"{where}: {code.name.upper()}")
        if code == E.fenced_instance_id:
            # Another process owns this group.instance.id: Kafka's consumer fails fatally.
            self._emit("fenced")
            self.owned = set()
            self.state = MemberState.FENCED
            return
        if code in (E.illegal_generation, E.unknown_member_id):
            if self.owned:
                self._emit("lost", sorted(self.owned))
            self.owned = set()
            self.generation = -1
            if code == E.unknown_member_id:
                self.member_id = ""
            self.rejoin_needed = True
            self.state = MemberState.UNJOINED

    # -- offsets -------------------------------------------------------------------------------
    def _commit_async(self) -> None:
        self._commit_sync()
        self._next_commit = self.c.now() + self.config.auto_commit_interval_ms

    def _commit_sync(self) -> None:
        todo = {tp: off for tp, off in self.positions.items() if tp in self.owned and self.committed.get(tp) != off}
        if not todo or self.generation < 0:
            return
        by_topic: dict[str, list] = {}
        for (t, p), off in sorted(todo.items()):
            by_topic.setdefault(t, []).append({"partition_index": p, "committed_offset": off,
                                               "committed_leader_epoch": -1, "committed_metadata": ""})
        try:
            resp = self.transport.send(request(
                "OffsetCommit", self.config.commit_version, group_id=self.config.group_id,
                generation_id_or_member_epoch=self.generation, member_id=self.member_id,
                group_instance_id=self.config.group_instance_id,
                topics=[{"name": t, "partitions": ps} for t, ps in by_topic.items()]), client_id=self.config.client_id)
        except RequestTimeout as e:
            # Not known to be committed: kept pending, sent again with the next commit (idempotent).
            self._emit("error", sorted(todo), detail=f"commit: {e}")
            return
        errors = {p.error_code for t in resp.topics for p in t.partitions}
        if errors == {E.none}:
            self.committed.update(todo)
        else:
            self._on_group_error(next(iter(errors - {E.none})), "commit")

    # -- events ----------------------------------------------------------------------------------
    def _emit(self, kind: str, partitions=(), *, generation: int | None = None, detail: str = "") -> None:
        ev = RebalanceEvent(self.c.now(), self.name, kind, tuple(partitions),
                            self.generation if generation is None else generation, detail)
        self.events.append(ev)
        if self.on_event is not None:
            self.on_event(ev)

    def __repr__(self) -> str:
        return (f"ClassicConsumer({self.name!r}, {self.state}, member={self.member_id or '-'}, "
                f"generation={self.generation}, owned={sorted(self.owned)})")
