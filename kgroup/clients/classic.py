"""A simulated classic consumer: the group protocol as Kafka's `ConsumerCoordinator`
speaks it (JoinGroup → SyncGroup → heartbeats), eager or cooperative, dynamic or static.
`ClassicMember` is the part of it Kafka's `AbstractCoordinator` holds, which a Kafka Streams
thread on the classic protocol (`streams_classic.py`) speaks as well.

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
from kgroup.clients.commits import commit_error, offset_commit, uncommitted
from kgroup.clients.events import EventSource, RebalanceEvent
from kgroup.clients.transport import RequestTimeout
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


class ClassicMember(EventSource):
    """The client side of the classic group protocol, as Kafka's `AbstractCoordinator` has it:
    JoinGroup (again with the member id MEMBER_ID_REQUIRED gives), the leader's assignment,
    SyncGroup, answers the coordinator holds and that may never come, heartbeats while in a
    generation, LeaveGroup, and what group errors do.

    A subclass has `c`, `name`, `transport`, `running`, `state`, `member_id`, `generation`,
    `owned`, `protocol_name` and `consumer_config` (the `ConsumerConfig` the protocol reads),
    and the private `_join`/`_sync` (pending answers), `_sent_at` and `_next_heartbeat`. It says
    what its JoinGroup offers (`_join_protocols`), what the leader assigns (`_assign`), what an
    assignment does (`_on_join_complete`), how it gives its assignment up (`_on_leave_prepare`,
    `_clear_assignment`), how it asks to rejoin (`_need_rejoin`) and what a fatal error does
    (`_on_fatal_error`)."""

    #: the member-state enum (with JOINING and STOPPED)
    _states: Any
    #: the state of a member that must join again, and the one while its SyncGroup is out
    _unjoined: Any
    _syncing: Any

    # -- lifecycle -----------------------------------------------------------------------------
    @property
    def is_static(self) -> bool:
        """A static member (`group.instance.id`, KIP-345)."""
        return self.consumer_config.group_instance_id is not None

    def close(self) -> None:
        """A clean shutdown: give the assignment up and — dynamic members only — LeaveGroup.
        Static members stay in the group until their session times out (KIP-345)."""
        if not self.running:
            return
        self._on_leave_prepare()
        cfg = self.consumer_config
        if not self.is_static and self.member_id:
            with contextlib.suppress(RequestTimeout):   # a lost answer to a leave: out either way
                self.transport.send(request("LeaveGroup", cfg.leave_version, group_id=cfg.group_id,
                                            members=[{"member_id": self.member_id, "group_instance_id": None,
                                                      "reason": "the consumer is being closed"}]),
                                    client_id=cfg.client_id)
            self._emit("left")
        self._clear_assignment()
        self.state = self._states.STOPPED

    def crash(self) -> None:
        """The process dies: nothing is sent; the coordinator notices via the session timeout."""
        self._clear_assignment()
        self.state = self._states.STOPPED

    # -- the heartbeat thread -----------------------------------------------------------------
    def tick(self) -> None:
        """Background heartbeats every heartbeat.interval.ms while a member of a generation."""
        if not self.running or self.generation < 0 or self._join is not None:
            return
        now = self.c.now()
        if now < self._next_heartbeat:
            return
        cfg = self.consumer_config
        self._next_heartbeat = now + cfg.heartbeat_interval_ms
        try:
            resp = self.transport.send(request("Heartbeat", cfg.heartbeat_version, group_id=cfg.group_id,
                                               generation_id=self.generation, member_id=self.member_id,
                                               group_instance_id=cfg.group_instance_id),
                                       client_id=cfg.client_id)
        except RequestTimeout as e:
            # Kafka's HeartbeatResponseHandler failure: the coordinator is marked unknown and
            # rediscovered; the heartbeat thread tries again after the retry backoff.
            self._emit("error", detail=f"heartbeat: {e}")
            self._next_heartbeat = now + cfg.retry_backoff_ms
            return
        self._on_group_error(resp.error_code, "heartbeat")

    # -- JoinGroup / SyncGroup ------------------------------------------------------------------
    def _drive_rebalance(self) -> None:
        """Take in the JoinGroup/SyncGroup answer that came. A pending answer that never comes
        (the coordinator dropped it, e.g. for a newer JoinGroup of the same member): Kafka's
        NetworkClient times the request out, then the member rejoins."""
        if self._join is not None and self._join.done:
            self._on_join_response(self._join.response)
        if self._sync is not None and self._sync.done:
            self._on_sync_response(self._sync.response)
        now = self.c.now()
        cfg = self.consumer_config
        if self._join is not None and now - self._sent_at >= cfg.join_timeout_ms:
            self._join_failed("join: no answer within the JoinGroup timeout")
        elif self._sync is not None and now - self._sent_at >= cfg.request_timeout_ms:
            self._join_failed("sync: no answer within request.timeout.ms")

    def _send_join(self) -> None:
        cfg = self.consumer_config
        join = request(
            "JoinGroup", cfg.join_version, group_id=cfg.group_id, session_timeout=cfg.session_timeout_ms,
            rebalance_timeout=cfg.max_poll_interval_ms, member_id=self.member_id,
            group_instance_id=cfg.group_instance_id, protocol_type="consumer", protocols=self._join_protocols(),
            reason=None)
        self.state = self._states.JOINING
        self._need_rejoin(False)
        self._join = self._send_held(join, "join")
        if self._join is not None and self._join.done:  # e.g. MEMBER_ID_REQUIRED comes back at once
            self._on_join_response(self._join.response)

    def _send_held(self, req: Any, what: str) -> Any:
        """Send a JoinGroup or SyncGroup (`what`: "join", "sync"), whose answer the coordinator
        may hold until the rebalance phase ends; None when there was no answer (rejoin)."""
        self._sent_at = self.c.now()
        try:
            return self.transport.send(req, client_id=self.consumer_config.client_id)
        except RequestTimeout as e:
            self._join_failed(f"{what}: {e}")
            return None

    def _on_join_response(self, resp: Any) -> None:
        self._join = None
        code = resp.error_code
        if code == E.member_id_required:
            self.member_id = resp.member_id   # KIP-394: join again with the member id it was given
            self._unjoin()
            self._send_join()
            return
        if code != E.none:
            self._on_failed_answer(code, "join")
            return
        self.member_id, self.generation = resp.member_id, resp.generation_id
        self._on_joined(resp)
        assignments = {}
        if resp.leader == resp.member_id and not resp.skip_assignment:
            assignments = self._assign(resp.members)
        self._emit("joined", detail="leader" if resp.leader == self.member_id else "")
        cfg = self.consumer_config
        sync = request(
            "SyncGroup", cfg.sync_version, group_id=cfg.group_id, generation_id=self.generation,
            member_id=self.member_id, group_instance_id=cfg.group_instance_id, protocol_type="consumer",
            protocol_name=self.protocol_name,
            assignments=[{"member_id": m, "assignment": a} for m, a in assignments.items()])
        self.state = self._syncing
        self._next_heartbeat = self.c.now() + cfg.heartbeat_interval_ms
        self._sync = self._send_held(sync, "sync")
        if self._sync is not None and self._sync.done:
            self._on_sync_response(self._sync.response)

    def _on_joined(self, resp: Any) -> None:
        """A JoinGroup answer without an error: what the member keeps of it besides its id and generation."""

    def _on_sync_response(self, resp: Any) -> None:
        self._sync = None
        if resp.error_code != E.none:
            self._on_failed_answer(resp.error_code, "sync")
            return
        self._on_join_complete(resp.assignment)

    def _on_failed_answer(self, code: ErrorCode, where: str) -> None:
        """A JoinGroup or SyncGroup error: what any group error does, then join again."""
        self._on_group_error(code, where)
        if self.running:
            self._unjoin()

    def _join_failed(self, why: str) -> None:
        """A JoinGroup or SyncGroup without an answer. Kafka's `AbstractCoordinator.joinGroupIfNeeded`:
        the join future failed with a retriable error, so rejoin (JoinGroup again, same member id
        and generation) after the retry backoff; the coordinator takes the retried JoinGroup of a
        known member as the same member."""
        self._emit("error", detail=why)
        self._join = self._sync = None
        self._unjoin()

    def _unjoin(self) -> None:
        """The member must join again (with the next poll)."""
        self._need_rejoin()
        self.state = self._unjoined

    # -- errors --------------------------------------------------------------------------------
    def _on_group_error(self, code: ErrorCode, where: str) -> None:
        """The ConsumerCoordinator's reactions to group errors."""
        if code == E.none:
            return
        if code == E.rebalance_in_progress:
            self._need_rejoin()
            return
        self._emit("error", detail=f"{where}: {code.name.upper()}")
        if code in (E.illegal_generation, E.unknown_member_id):
            if self.owned:
                self._emit("lost", sorted(self.owned))
            self._clear_assignment()
            self.generation = -1
            if code == E.unknown_member_id:
                self.member_id = ""
            self._unjoin()
            return
        self._on_fatal_error(code, where)


class ClassicConsumer(ClassicMember):
    """One consumer process in a classic group.

    `records_per_poll` is how far each owned partition advances per poll (for
    committed offsets); `on_event` receives every `RebalanceEvent`.
    """

    _states = MemberState
    _unjoined = MemberState.UNJOINED
    _syncing = MemberState.SYNCING

    def __init__(self, coordinator: "Coordinator", config: ConsumerConfig, *, name: str | None = None,
                 records_per_poll: int = 10, on_event: Callable[[RebalanceEvent], None] | None = None) -> None:
        self._attach(coordinator, config, name)
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
    def consumer_config(self) -> ConsumerConfig:
        """The configs the group protocol reads: this consumer's own."""
        return self.config

    def _need_rejoin(self, needed: bool = True) -> None:
        self.rejoin_needed = needed

    def _on_leave_prepare(self) -> None:
        """Closing: commit, then revoke."""
        self._commit_sync()
        if self.owned:
            self._emit("revoked", sorted(self.owned))

    def _clear_assignment(self) -> None:
        self.owned = set()

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
        if self.rejoin_needed and self._join is None and self._sync is None and self.running:
            self._send_join()
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
        super()._send_join()

    def _join_protocols(self) -> list[dict]:
        return [{"name": a.name, "metadata": encode_subscription(self.subscription(a))} for a in self.assignors]

    def _on_joined(self, resp: Any) -> None:
        self.protocol_name = resp.protocol_name
        # only the leader watches the metadata (Kafka: onJoinComplete clears the snapshot otherwise)
        self._assignment_snapshot = None

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

    def _on_join_complete(self, assignment: Any) -> None:
        assigned = set(decode_assignment(assignment)[0].partitions) if assignment else set()
        added = assigned - self.owned
        if self.protocol is RebalanceProtocol.COOPERATIVE:
            revoked = self.owned - assigned
            if revoked:
                # KIP-429: give up what moved, then rejoin so it can go to its new owner.
                self._commit_sync()
                self._emit("revoked", sorted(revoked))
                self.rejoin_needed = True
        self.owned = assigned
        self.state = MemberState.STABLE
        self._emit("assigned", sorted(added))

    def _on_fatal_error(self, code: ErrorCode, where: str) -> None:
        if code == E.fenced_instance_id:
            # Another process owns this group.instance.id: Kafka's consumer fails fatally.
            self._emit("fenced")
            self.owned = set()
            self.state = MemberState.FENCED

    # -- offsets -------------------------------------------------------------------------------
    def _commit_async(self) -> None:
        self._commit_sync()
        self._next_commit = self.c.now() + self.config.auto_commit_interval_ms

    def _commit_sync(self) -> None:
        todo = uncommitted(self.positions, self.owned, self.committed)
        if not todo or self.generation < 0:
            return
        try:
            resp = self.transport.send(offset_commit(self.config, self.member_id, self.generation, todo),
                                       client_id=self.config.client_id)
        except RequestTimeout as e:
            # Not known to be committed: kept pending, sent again with the next commit (idempotent).
            self._emit("error", sorted(todo), detail=f"commit: {e}")
            return
        error = commit_error(resp)
        if error is None:
            self.committed.update(todo)
        else:
            self._on_group_error(error, "commit")

    def __repr__(self) -> str:
        return (f"ClassicConsumer({self.name!r}, {self.state}, member={self.member_id or '-'}, "
                f"generation={self.generation}, owned={sorted(self.owned)})")
