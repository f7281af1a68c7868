"""A simulated KIP-848 consumer: the consumer group protocol as Kafka's new consumer speaks it
(`ConsumerMembershipManager`, `AbstractMembershipManager`, `ConsumerHeartbeatRequestManager`).

    consumer = ConsumerGroupConsumer(coordinator, "g", ["orders"], name="A")
    sim = Simulation(coordinator, [consumer]); sim.run_until_stable("g")

The member, as Kafka's client does it:

- **joins** with member epoch 0 and a full `ConsumerGroupHeartbeat` (rebalance timeout,
  subscription, server assignor, the partitions it owns: none), with a member id it
  generated itself (KIP-1082, `ConsumerGroupHeartbeat` v1);
- afterwards sends **only the fields that changed** since the last request (Kafka's
  `HeartbeatState`/`SentFields`); after any error response the next request is full again;
- heartbeats every `heartbeat_interval` the coordinator returns, and **at once** when it has
  something to say: joining, acknowledging a reconciled assignment, leaving;
- **reconciles** an assignment on the application thread (in `poll()`, as the rebalance
  listener callbacks run there): revoke first — `on_partitions_revoked`, which may take
  `revocation_delay_ms`, then an optional commit (OffsetCommit v9 with the member epoch) —
  then assign (`on_partitions_assigned`), then acknowledge by reporting what it owns;
- on FENCED_MEMBER_EPOCH or UNKNOWN_MEMBER_ID releases everything (`on_partitions_lost`)
  and rejoins with epoch 0 (same member id: it identifies the process);
- leaves with epoch -1, or -2 for a static member (`group.instance.id`) on close, which keeps
  its partitions on the coordinator until its session times out (KIP-848 static membership);
- crashes silently (the coordinator notices by the session timeout).

Sans-IO like everything here: the consumer acts only when the driver calls `tick()` (the
background thread: heartbeats) and `poll()` (the application thread: callbacks, records).
Not modelled: the poll timer (`max.poll.interval.ms` expiring on the client), fetching.
"""
from __future__ import annotations

import enum
import random
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import re2

from kgroup.clients.commits import commit_error, offset_commit, uncommitted
from kgroup.clients.events import RebalanceEvent
from kgroup.clients.membership import HeartbeatExchange, HeartbeatMember, PendingCallback, kafka_member_id
from kgroup.clients.transport import RequestTimeout
from kgroup.errors import ErrorCode
from kgroup.groups.modern import topic_order
from kgroup.protocol import ms, request

if TYPE_CHECKING:
    from kgroup.coordinator import Coordinator

TP = tuple[str, int]
#: topic id -> partitions
TopicIdPartitions = dict[uuid.UUID, frozenset[int]]


class ConsumerMemberState(str, enum.Enum):
    """Kafka's client-side `MemberState`, plus STOPPED for a process that is not running."""

    UNSUBSCRIBED = "unsubscribed"
    JOINING = "joining"              # the next heartbeat joins (epoch 0, every field)
    RECONCILING = "reconciling"      # a new assignment waits for the application thread
    ACKNOWLEDGING = "acknowledging"  # reconciled: the next heartbeat (at once) reports it
    STABLE = "stable"
    FENCED = "fenced"                # releasing everything (on_partitions_lost), then rejoins
    PREPARE_LEAVING = "prepare_leaving"
    LEAVING = "leaving"
    FATAL = "fatal"                  # a non-retriable error (e.g. UNRELEASED_INSTANCE_ID)
    STOPPED = "stopped"              # closed or crashed: the process is not running

    def __str__(self) -> str:
        return self.value


S = ConsumerMemberState
_NOT_IN_GROUP = (S.UNSUBSCRIBED, S.FENCED, S.FATAL, S.STOPPED)


@dataclass
class GroupConsumerConfig:
    """The consumer configs that matter to the consumer group protocol (Kafka's names, defaults)."""

    group_id: str
    topics: tuple[str, ...] = ()                 # subscribe(topics)
    pattern: str | None = None                   # subscribe(SubscriptionPattern): resolved by the broker (RE2)
    client_id: str = "consumer"
    group_instance_id: str | None = None         # group.instance.id: static membership
    rack_id: str | None = None                   # client.rack
    server_assignor: str | None = None           # group.remote.assignor
    rebalance_timeout_ms: int = 300_000          # max.poll.interval.ms, sent as the rebalance timeout
    auto_commit_interval_ms: int | None = 5_000  # None: enable.auto.commit=false
    retry_backoff_ms: int = 100
    heartbeat_version: int = 1
    commit_version: int = 9


@dataclass(frozen=True)
class LocalAssignment:
    """Kafka's `LocalAssignment`: partitions by topic id plus a local epoch that moves each
    time a different assignment arrives (so an identical re-send is not reconciled again)."""

    local_epoch: int
    partitions: Mapping[uuid.UUID, frozenset[int]]

    def update_with(self, partitions: TopicIdPartitions) -> "LocalAssignment | None":
        if self.local_epoch != NONE.local_epoch and dict(self.partitions) == partitions:
            return None
        return LocalAssignment(self.local_epoch + 1, partitions)


NONE = LocalAssignment(-1, {})


class RebalanceListener:
    """Kafka's `ConsumerRebalanceListener`: override what you need (each gets sorted (topic, partition))."""

    def on_partitions_revoked(self, consumer: "ConsumerGroupConsumer", partitions: list[TP]) -> None: ...

    def on_partitions_assigned(self, consumer: "ConsumerGroupConsumer", partitions: list[TP]) -> None: ...

    def on_partitions_lost(self, consumer: "ConsumerGroupConsumer", partitions: list[TP]) -> None: ...


class ConsumerGroupConsumer(HeartbeatMember):
    """One consumer process in a KIP-848 consumer group (`group.protocol=consumer`).

    `topics` or `pattern` (a broker-side RE2 regex) is the subscription. `member_id`: the id of
    the first process (later processes after `start()` draw a new one); by default ids are drawn
    from a generator seeded with `seed` (default: group and name), so runs repeat exactly.
    `revocation_delay_ms`: how long `on_partitions_revoked` takes; `commit_on_revoke`: commit
    the consumed offsets at the end of it. `on_event` receives every `RebalanceEvent`;
    `heartbeat_listeners` receive every `HeartbeatExchange`.
    """

    protocol = "consumer"
    _states = S
    _not_in_group = _NOT_IN_GROUP
    _state_after_leave = S.UNSUBSCRIBED
    _no_assignment = NONE

    def __init__(self, coordinator: "Coordinator", group_id: str, topics: Iterable[str] | None = None,
                 pattern: str | None = None, *, name: str | None = None, client_id: str | None = None,
                 instance_id: str | None = None, rack_id: str | None = None, server_assignor: str | None = None,
                 rebalance_timeout_ms: int = 300_000, member_id: str | None = None, seed: Any = None,
                 on_event: Callable[[RebalanceEvent], None] | None = None, commit_on_revoke: bool = True,
                 revocation_delay_ms: int = 0, records_per_poll: int = 10,
                 auto_commit_interval_ms: int | None = 5_000, listener: RebalanceListener | None = None,
                 config: GroupConsumerConfig | None = None) -> None:
        if config is None:
            if topics is None and pattern is None:
                raise ValueError("subscribe to topics or to a pattern")
            if topics is not None and pattern is not None:
                raise ValueError("subscribe to topics or to a pattern, not both")
            if isinstance(topics, str):
                topics = [topics]
            config = GroupConsumerConfig(
                group_id, tuple(sorted(topics or ())), pattern,
                client_id=client_id or name or instance_id or "consumer",
                group_instance_id=instance_id, rack_id=rack_id, server_assignor=server_assignor,
                rebalance_timeout_ms=rebalance_timeout_ms, auto_commit_interval_ms=auto_commit_interval_ms)
        self._attach(coordinator, config, name)
        self.on_event = on_event
        self.listener = listener
        self.commit_on_revoke = commit_on_revoke
        self.revocation_delay_ms = revocation_delay_ms
        self.records_per_poll = records_per_poll
        self.heartbeat_listeners: list[Callable[[HeartbeatExchange], None]] = []
        self.events: list[RebalanceEvent] = []
        self.heartbeats: list[HeartbeatExchange] = []
        self._rng = random.Random(seed if seed is not None else f"{config.group_id}/{self.name}")
        self._first_member_id = member_id
        self.incarnation = 0
        self.state = S.STOPPED
        self.start()

    # -- lifecycle -----------------------------------------------------------------------------
    def start(self) -> None:
        """A new process: a new member id, epoch 0, nothing owned; it joins on the next tick."""
        self.incarnation += 1
        self.member_id = (self._first_member_id if self.incarnation == 1 and self._first_member_id
                          else kafka_member_id(self._rng))
        self.member_epoch = 0
        self.owned: set[TP] = set()
        self.positions: dict[TP, int] = {}
        self.committed: dict[TP, int] = {}
        self.current = NONE                 # the last assignment reconciled (Kafka's currentAssignment)
        self.target = NONE                  # the last assignment received (currentTargetAssignment)
        self.heartbeat_interval_ms = 0
        self._next_heartbeat = 0
        self._sent: dict[str, Any] = {}     # SentFields
        self._reconciling = False
        self._revoking: set[TP] = set()     # paused while on_partitions_revoked runs
        self._callback: PendingCallback | None = None
        self._lost_pending = False
        self._generation = 0                # bumps on every (re)join: stale callbacks are dropped
        self._subscription_updated = False
        self._next_commit = self.c.now() + (self.config.auto_commit_interval_ms or 0)
        self.state = S.UNSUBSCRIBED
        self._transition_to_joining()

    @property
    def running(self) -> bool:
        return self.state not in (S.STOPPED, S.FATAL)

    @property
    def is_static(self) -> bool:
        return self.config.group_instance_id is not None

    @property
    def client_id(self) -> str:
        """`client.id`, sent with every request."""
        return self.config.client_id

    def subscribed_topics(self) -> tuple[str, ...]:
        """Topic names subscribed: the names, or the cluster's topics the pattern matches fully."""
        if self.config.pattern is None:
            return self.config.topics
        try:
            pattern = re2.compile(self.config.pattern)
        except re2.error:
            return ()
        return tuple(t for t in self.c.cluster.topic_names() if pattern.fullmatch(t))

    def close(self) -> None:
        """`consumer.close()`: release the assignment (revoke; commit), leave with epoch -1, or -2
        for a static member (which keeps its partitions on the coordinator until its session ends)."""
        if not self.running:
            return
        self._leave()
        self.state = S.STOPPED

    def crash(self) -> None:
        """The process dies: nothing is sent; the coordinator notices by the session timeout."""
        self.owned = set()
        self._callback = None
        self.state = S.STOPPED

    def unsubscribe(self) -> None:
        """`consumer.unsubscribe()`: release the assignment and leave; the process keeps running."""
        if not self.running:
            return
        self._leave()
        self.current = self.target = NONE
        self.state = S.UNSUBSCRIBED

    def _leave(self) -> None:
        """Release the assignment and send the leave heartbeat (a member in the group), then own nothing."""
        if self.state not in _NOT_IN_GROUP:
            self.state = S.PREPARE_LEAVING
            self._callback = None
            self._release_on_leave()
            self.current = NONE
            self._send_leave(self._leave_epoch)
        self.owned = set()

    def subscribe(self, topics: Iterable[str] | None = None, pattern: str | None = None) -> None:
        """A new subscription: sent with the next heartbeat (joining first if not in the group)."""
        if (topics is None) == (pattern is None):
            raise ValueError("subscribe to topics or to a pattern")
        if isinstance(topics, str):
            topics = [topics]
        self.config.topics = tuple(sorted(topics)) if topics is not None else ()
        self.config.pattern = pattern
        self._subscription_updated = True

    # -- the background thread: heartbeats -------------------------------------------------------
    def _urgent(self) -> bool:
        """Joining, acknowledging a reconciled assignment, or leaving."""
        return self.state in (S.JOINING, S.ACKNOWLEDGING, S.LEAVING)

    def _build_request(self) -> Any:
        """Kafka's `HeartbeatState.buildRequestData`: every field when joining, else what changed."""
        cfg, sent = self.config, self._sent
        all_fields = self.state is S.JOINING
        data: dict[str, Any] = dict(group_id=cfg.group_id, member_id=self.member_id, member_epoch=self.member_epoch,
                                    instance_id=cfg.group_instance_id, rack_id=None, rebalance_timeout=-1,
                                    subscribed_topic_names=None, subscribed_topic_regex=None, server_assignor=None,
                                    topic_partitions=None)
        if all_fields:
            data["rack_id"] = cfg.rack_id
        if all_fields or sent.get("rebalance_timeout_ms") != cfg.rebalance_timeout_ms:
            data["rebalance_timeout"] = sent["rebalance_timeout_ms"] = cfg.rebalance_timeout_ms
        names = tuple(sorted(cfg.topics))
        if all_fields or sent.get("topics") != names:
            data["subscribed_topic_names"] = list(names)
            sent["topics"] = names
        if (all_fields and cfg.pattern is not None) or sent.get("pattern") != cfg.pattern:
            # An empty string removes a pattern (Kafka sends "" when the regex subscription ends).
            data["subscribed_topic_regex"] = cfg.pattern if cfg.pattern is not None else ""
            sent["pattern"] = cfg.pattern
        if cfg.server_assignor is not None and (all_fields or sent.get("server_assignor") != cfg.server_assignor):
            data["server_assignor"] = sent["server_assignor"] = cfg.server_assignor
        local = NONE if self.state is S.JOINING else self.current
        if all_fields or sent.get("local") != local:
            data["topic_partitions"] = [{"topic_id": t, "partitions": sorted(local.partitions[t])}
                                        for t in topic_order(local.partitions)]
            sent["local"] = local
        return request("ConsumerGroupHeartbeat", cfg.heartbeat_version, **data)

    def _on_success(self, resp: Any) -> None:
        """Kafka's `ConsumerMembershipManager.onHeartbeatSuccess`."""
        if self.state in _NOT_IN_GROUP or self.state in (S.LEAVING, S.PREPARE_LEAVING):
            return
        joined = self.member_epoch == 0 and resp.member_epoch > 0
        self.member_epoch = resp.member_epoch
        self.heartbeat_interval_ms = ms(resp.heartbeat_interval)
        self._next_heartbeat = self.c.now() + self.heartbeat_interval_ms
        if joined:
            self._emit("joined")
        if resp.assignment is None:
            return
        new = {tp.topic_id: frozenset(tp.partitions) for tp in resp.assignment.topic_partitions if tp.partitions}
        updated = self.target.update_with(new)
        if updated is not None:
            self.target = updated
            self._emit("target", sorted(self._names(new)))
        if self.current != self.target:
            self.state = S.RECONCILING
        elif self.state in (S.RECONCILING, S.JOINING):
            self.state = S.STABLE

    def _transition_to_fenced(self) -> None:
        if self.state in (S.PREPARE_LEAVING, S.LEAVING):
            self.state = S.UNSUBSCRIBED
            return
        if self.state is S.UNSUBSCRIBED:
            return
        super()._transition_to_fenced()   # on_partitions_lost runs on the application thread

    def _transition_to_fatal(self, code: ErrorCode, message: str | None) -> None:
        """Kafka's `transitionToFatal`: what the member owns is lost (the event names the code only)."""
        self._emit("fatal", detail=code.name.upper())
        self._callback = None
        if self.owned:
            self._callback_lost(sorted(self.owned))
        self.owned = set()
        self.current = self.target = NONE
        self.state = S.FATAL

    # -- the application thread: callbacks, records ------------------------------------------------
    # `poll()` is `consumer.poll()`: pending callbacks, a lost assignment, a new subscription,
    # reconciling, then "processing" a batch (`_work`).
    def _release_lost(self) -> None:
        if self.owned:
            self._callback_lost(sorted(self.owned))
        self.owned = set()
        self.current = NONE

    def _apply_subscription_change(self) -> None:
        if self._subscription_updated:
            self._subscription_updated = False
            if self.state is S.UNSUBSCRIBED:
                self._transition_to_joining()

    def _work(self, now: int) -> None:
        """Consume a batch from the partitions not being revoked; auto-commit when due."""
        for tp in self.owned - self._revoking:
            self.positions[tp] = self.positions.get(tp, self.committed.get(tp, 0)) + self.records_per_poll
        if self.config.auto_commit_interval_ms is not None and now >= self._next_commit:
            self.commit()
            self._next_commit = now + self.config.auto_commit_interval_ms

    def _names(self, partitions: Mapping[uuid.UUID, Iterable[int]]) -> set[TP]:
        out: set[TP] = set()
        for tid, parts in partitions.items():
            try:
                name = self.c.cluster.topic_name(tid)
            except KeyError:
                continue  # not in metadata (yet): reconciled once it resolves, as Kafka does
            out |= {(name, p) for p in parts}
        return out

    def _maybe_reconcile(self) -> None:
        """Kafka's `AbstractMembershipManager.maybeReconcile`: revoke, then assign, then ack."""
        if self.state is not S.RECONCILING or self.current == self.target or self._reconciling:
            return
        resolved = {}
        for tid, parts in self.target.partitions.items():
            if self._names({tid: parts}):
                resolved[tid] = parts
        local = LocalAssignment(self.target.local_epoch, resolved)
        if self.current is not NONE and dict(self.current.partitions) == resolved:
            self.current = local
            self.state = S.ACKNOWLEDGING
            return
        assigned = self._names(resolved)
        revoked = sorted(self.owned - assigned)
        added = sorted(assigned - self.owned)
        self._reconciling = True
        generation = self._generation

        def assign() -> None:
            if self.state is not S.RECONCILING or generation != self._generation:
                self._reconciling = False   # maybeAbortReconciliation: fenced or left meanwhile
                return
            self.owned = set(assigned)
            self._emit("assigned", added)
            if self.listener is not None:
                self.listener.on_partitions_assigned(self, added)
            self.current = local
            self._reconciling = False
            self._next_commit = self.c.now() + (self.config.auto_commit_interval_ms or 0)
            self.state = S.ACKNOWLEDGING

        if not revoked:
            assign()
            return
        self._revoking = set(revoked)
        self._emit("revoking", revoked)
        if self.listener is not None:
            self.listener.on_partitions_revoked(self, revoked)

        def revoke_done() -> None:
            if self.commit_on_revoke:
                self.commit()
            self._revoking = set()
            self.owned -= set(revoked)
            self._emit("revoked", revoked)
            assign()

        self._run_callback(self.revocation_delay_ms, revoke_done, generation)

    def _release_on_leave(self) -> None:
        """Kafka's `invokeOnPartitionsRevokedOrLostToReleaseAssignment`."""
        if not self.owned:
            return
        owned = sorted(self.owned)
        if self.member_epoch > 0:
            if self.commit_on_revoke:
                self.commit()
            self._emit("revoked", owned)
            if self.listener is not None:
                self.listener.on_partitions_revoked(self, owned)
        else:
            self._callback_lost(owned)
        self.owned = set()

    def _callback_lost(self, partitions: list[TP]) -> None:
        self._emit("lost", partitions)
        if self.listener is not None:
            self.listener.on_partitions_lost(self, partitions)

    # -- offsets -------------------------------------------------------------------------------------
    def commit(self) -> bool:
        """`commitSync()` of the consumed positions of owned partitions, with the member epoch
        (OffsetCommit v9+). Returns whether the coordinator took it (or there was nothing to commit)."""
        todo = uncommitted(self.positions, self.owned, self.committed)
        if not todo:
            return True
        # A member that is not in the group (fenced, not yet released) has no epoch: -1,
        # which the coordinator rejects while the group has members: zombie fencing.
        req = offset_commit(self.config, self.member_id, self.member_epoch if self.member_epoch > 0 else -1, todo)
        try:
            resp = self.transport.send(req, client_id=self.config.client_id)
        except RequestTimeout as e:
            # Not known to be committed: the offsets stay pending and go with the next commit
            # (OffsetCommit is idempotent, a commit the coordinator did take is simply repeated).
            self._emit("error", sorted(todo), detail=f"commit: {e}")
            return False
        error = commit_error(resp)
        if error is None:
            self.committed.update(todo)
            return True
        self._emit("error", sorted(todo), detail=f"commit: {error.name.upper()}")
        return False

    # -- views --------------------------------------------------------------------------------------
    def target_partitions(self) -> set[TP]:
        """The last assignment received from the coordinator, by topic name."""
        return self._names(self.target.partitions)

    def __repr__(self) -> str:
        return (f"ConsumerGroupConsumer({self.name!r}, {self.state}, member={self.member_id}, "
                f"epoch={self.member_epoch}, owned={sorted(self.owned)})")


__all__ = ["ConsumerGroupConsumer", "ConsumerMemberState", "GroupConsumerConfig", "HeartbeatExchange",
           "LocalAssignment", "RebalanceListener", "kafka_member_id"]
