"""The client side of the KIP-848 heartbeat, as the KIP-848 consumer (`consumer.py`) and the
KIP-1071 stream thread (`streams.py`) both speak it: Kafka's `AbstractMembershipManager` and
`AbstractHeartbeatRequestManager`, which `ConsumerMembershipManager` and
`StreamsMembershipManager` extend.

`HeartbeatMember` is what they share: heartbeats when due or at once, the states a request
ends (ACKNOWLEDGING, LEAVING), what an error or a lost answer does (retry, fenced: rejoin,
fatal), the leave heartbeat, and the application thread's loop that runs slow rebalance
callbacks (`PendingCallback`), releases a lost assignment and reconciles.
"""
from __future__ import annotations

import random
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kgroup.clients.events import EventSource
from kgroup.clients.transport import RequestTimeout
from kgroup.errors import ErrorCode
from kgroup.groups.modern import LEAVE_GROUP_MEMBER_EPOCH, LEAVE_GROUP_STATIC_MEMBER_EPOCH
from kgroup.records.uuids import uuid_to_kafka_str

E = ErrorCode

#: errors after which Kafka's heartbeat managers retry (after `retry.backoff.ms`)
RETRIABLE = frozenset({E.not_coordinator, E.coordinator_not_available, E.coordinator_load_in_progress})


@dataclass(frozen=True)
class HeartbeatExchange:
    """One request to the coordinator and its answer, with the log positions it wrote
    (`kind` "heartbeat"; the driver adds "timer" entries for records timers wrote)."""

    time: int
    consumer: str | None
    request: Any
    response: Any
    start_position: int
    end_position: int
    kind: str = "heartbeat"


@dataclass
class PendingCallback:
    """Work on the application thread that takes time (a rebalance listener callback, closing
    revoked tasks): `then` runs at `done_at`, unless the member rejoined meanwhile (`generation`)."""

    done_at: int
    then: Callable[[], None]
    generation: int


def kafka_member_id(rng: random.Random) -> str:
    """`Uuid.randomUuid().toString()`: a version-4 UUID in Kafka's base64 form, never one that
    starts with '-' (Kafka draws again, as it does for the reserved ids)."""
    while True:
        u = uuid.UUID(int=rng.getrandbits(128), version=4)
        s = uuid_to_kafka_str(u)
        if not s.startswith("-"):
            return s


class HeartbeatMember(EventSource):
    """A member of a KIP-848-style group (ConsumerGroupHeartbeat, StreamsGroupHeartbeat).

    A subclass sets the class attributes below and has `c`, `name`, `config` (with
    `retry_backoff_ms`), `transport`, `client_id`, `is_static`, `state`, `member_epoch`,
    `current` and `target` (reconciled and received assignments), `heartbeat_interval_ms`,
    `heartbeats` and `heartbeat_listeners`, and the private `_next_heartbeat`, `_sent`,
    `_callback`, `_generation`, `_reconciling` and `_lost_pending`. It builds its requests
    (`_build_request`), takes a successful answer in (`_on_success`), goes fatal
    (`_transition_to_fatal`), reconciles (`_maybe_reconcile`), releases a lost assignment
    (`_release_lost`) and does the application's work between rebalances (`_work`)."""

    #: the member-state enum (with JOINING, RECONCILING, ACKNOWLEDGING, STABLE, FENCED, LEAVING)
    _states: Any
    #: states in which the member does not heartbeat (it is not in the group, or not running)
    _not_in_group: tuple
    #: the state once the leave heartbeat is out: the consumer's is UNSUBSCRIBED, as Kafka's
    #: `onHeartbeatRequestGenerated` does; a stream thread stays LEAVING until it stops
    _state_after_leave: Any
    #: the assignment of a member that has none (what a joining member reports)
    _no_assignment: Any
    #: error answers after which the member stays as it is (besides the retriable ones)
    _non_fatal: frozenset = frozenset()

    @property
    def generation(self) -> int:
        """The member epoch (what the driver samples as the generation)."""
        return self.member_epoch

    @property
    def rejoin_needed(self) -> bool:
        return self.state in (self._states.JOINING, self._states.FENCED)

    @property
    def busy(self) -> bool:
        """The application thread is inside a slow rebalance callback."""
        return self._callback is not None

    # -- the background thread: heartbeats ----------------------------------------------------------
    def tick(self) -> None:
        """Kafka's heartbeat request manager: heartbeat when due, or at once when needed (`_urgent`)."""
        if not self.running:
            return
        now = self.c.now()
        self._maybe_finish_callback(now)
        if self.state in self._not_in_group:
            return
        if self._urgent() or now >= self._next_heartbeat:
            self._heartbeat()
        self._after_heartbeat()

    def _urgent(self) -> bool:
        """Whether the next heartbeat goes at once (joining, acknowledging a reconciled assignment)."""
        return self.state in (self._states.JOINING, self._states.ACKNOWLEDGING)

    def _after_heartbeat(self) -> None:
        """What the heartbeat thread does after its heartbeat (nothing, unless a subclass says)."""

    def _heartbeat(self, **options: Any) -> None:
        """Build a request (`options` go to `_build_request`), send it, take the answer in."""
        now = self.c.now()
        req = self._build_request(**options)
        # onHeartbeatRequestGenerated: states that end once the request is out.
        S = self._states
        if self.state is S.ACKNOWLEDGING:
            self.state = S.STABLE if self.current == self.target else S.RECONCILING
        elif self.state is S.LEAVING:
            self.state = self._state_after_leave
        self._next_heartbeat = now + max(self.heartbeat_interval_ms, self.config.retry_backoff_ms)
        start = self.c.position
        try:
            resp = self.transport.send(req, client_id=self.client_id)
        except RequestTimeout as e:
            self._on_failure(str(e))
            return
        end = self.c.position
        self._on_response(resp)
        # Listeners see the exchange once the member has taken the answer in.
        ex = HeartbeatExchange(now, self.name, req, resp, start, end)
        self.heartbeats.append(ex)
        for fn in list(self.heartbeat_listeners):
            fn(ex)

    def _on_response(self, resp: Any) -> None:
        if resp.error_code != E.none:
            self._on_error(resp)
        else:
            self._on_success(resp)

    def _on_failure(self, why: str) -> None:
        """Kafka's `onFailure` (no answer: timeout, disconnect): the next request is full
        (`heartbeatState.reset()`) and is sent after the retry backoff with the epoch the member
        has, which the coordinator takes if the answer it lost had bumped it (KIP-848, KIP-1071:
        the previous epoch with a subset of its assignment). A lost answer to a leave is
        ignored: the member is out either way."""
        self._sent = {}
        if self.state is self._state_after_leave:
            return
        self._emit("error", detail=f"heartbeat: {why}")
        self._next_heartbeat = self.c.now() + self.config.retry_backoff_ms

    def _on_error(self, resp: Any) -> None:
        """Kafka's `onErrorResponse`: the next request is full; retriable errors are retried,
        fenced members rejoin, other errors are fatal unless `_non_fatal`."""
        code = resp.error_code
        self._sent = {}
        self._emit("error", detail=f"heartbeat: {code.name.upper()}"
                   + (f" ({resp.error_message})" if resp.error_message else ""))
        if self.state is self._state_after_leave:
            return  # the answer to a leave heartbeat: the member is out either way
        if code in RETRIABLE:
            self._next_heartbeat = self.c.now() + self.config.retry_backoff_ms
        elif code in (E.fenced_member_epoch, E.unknown_member_id):
            self._transition_to_fenced()
        elif code not in self._non_fatal:
            self._transition_to_fatal(code, resp.error_message)

    def _transition_to_fenced(self) -> None:
        self.state = self._states.FENCED
        self.member_epoch = 0
        self._emit("fenced")
        self._lost_pending = True   # the assignment is lost on the application thread, then it rejoins

    def _transition_to_joining(self) -> None:
        self._generation += 1
        self._reconciling = False
        self.member_epoch = 0
        self.target = self._no_assignment
        self.state = self._states.JOINING

    @property
    def _leave_epoch(self) -> int:
        """-2 for a static member (it keeps its assignment until its session times out), else -1."""
        return LEAVE_GROUP_STATIC_MEMBER_EPOCH if self.is_static else LEAVE_GROUP_MEMBER_EPOCH

    def _send_leave(self, epoch: int, detail: str = "", **options: Any) -> None:
        """The leave heartbeat with `epoch`, sent once: the answer is not waited for (Kafka ignores it)."""
        self.member_epoch = epoch
        self.state = self._states.LEAVING
        self._heartbeat(**options)
        self._emit("left", detail=f"epoch {epoch}{detail}")
        self.member_epoch = 0

    # -- the application thread ----------------------------------------------------------------------
    def poll(self) -> None:
        """One poll of the application thread: finish a slow callback, release a lost assignment
        (then rejoin), reconcile, then the application's work (`_work`)."""
        if not self.running:
            return
        now = self.c.now()
        self._maybe_finish_callback(now)
        if self.busy:
            return
        if self._lost_pending:
            self._lost_pending = False
            self._release_lost()
            if self.state is self._states.FENCED:
                self._transition_to_joining()
        self._apply_subscription_change()
        self._maybe_reconcile()
        if self.busy or self.state in self._not_in_group:
            return
        self._work(now)

    def _apply_subscription_change(self) -> None:
        """A new subscription takes effect here (a stream thread's never changes)."""

    def _maybe_finish_callback(self, now: int) -> None:
        cb = self._callback
        if cb is not None and now >= cb.done_at:
            self._callback = None
            if cb.generation == self._generation:
                cb.then()
            else:
                self._reconciling = False

    def _run_callback(self, delay_ms: int, then: Callable[[], None], generation: int) -> None:
        """Run `then` now, or `delay_ms` from now when the callback is slow (`busy` meanwhile)."""
        if delay_ms > 0:
            self._callback = PendingCallback(self.c.now() + delay_ms, then, generation)
        else:
            then()


__all__ = ["HeartbeatMember", "HeartbeatExchange", "PendingCallback", "RETRIABLE", "kafka_member_id"]
