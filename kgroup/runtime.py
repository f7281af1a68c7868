"""The sans-IO runtime's small parts: handler and replay registries, handler results,
answers that wait (JoinGroup/SyncGroup), and timers."""
from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

#: api key -> handler(coordinator, request, version) -> Result. Group modules add theirs.
HANDLERS: dict[int, Callable[[Any, Any, int], "Result"]] = {}
#: api key -> guard(coordinator, request, version, proceed) -> Result: the authorization
#: checks Kafka's KafkaApis makes before asking the coordinator (kgroup/acl_checks.py);
#: `proceed(request)` runs the handler (on the request, or the authorized part of it).
#: Used only when the coordinator has an authorizer.
GUARDS: dict[int, Callable[[Any, Any, int, Callable[[Any], "Result"]], "Result"]] = {}
#: api keys whose guard runs without an authorizer too (describes: Kafka answers the
#: authorized operations even then, with every operation allowed)
ALWAYS_GUARDED: set[int] = set()
#: record class -> replay(coordinator, entry). Group modules add theirs.
REPLAYERS: dict[type, Callable[[Any, Any], None]] = {}
#: functions run once after `Coordinator.load` replayed a log (Kafka's `onLoaded`).
LOAD_HOOKS: list[Callable[[Any], None]] = []
#: group_id -> the "simple" group an offset commit without membership creates (Kafka's
#: `getOrMaybeCreateClassicGroup` from the offset manager); the classic package registers it,
#: so the offsets code needs no group module.
SIMPLE_GROUP: list[Callable[[str], Any]] = []
#: functions run when a coordinator notices that the cluster's metadata changed (Kafka's
#: `onMetadataUpdate`), before it serves its next request or timer: fn(coordinator, deleted)
#: -> Result | None, whose records are written. `deleted`: topic id -> name of the topics deleted
#: since the coordinator last looked (possibly none), as a metadata delta names them.
METADATA_HOOKS: list[Callable[[Any, Mapping], "Result | None"]] = []
#: functions run when a data partition's leader moves to another broker (a broker failed, or
#: the failure lab moved it): fn(coordinator, topic, partition). What a broker keeps in memory for
#: the partitions it leads (share-partitions' in-flight records) does not move with it.
LEADER_CHANGE_HOOKS: list[Callable[[Any, str, int], None]] = []


@dataclass(frozen=True)
class LogSpec:
    """A log a coordinator component owns besides `__consumer_offsets` (e.g. the share
    coordinator's `__share_group_state`): records whose class `TOPIC` is `topic` go there."""

    topic: str
    #: the config naming how many partitions the log has
    partitions_config: str
    #: (record, num_partitions) -> the partition the record is appended to
    partition_of: Callable[[Any, int], int]
    #: the config naming the compression codec id of its batches (None: uncompressed)
    compression_config: str | None = None


#: topic -> LogSpec: the extra logs every coordinator creates (`Coordinator.logs`).
LOGS: dict[str, LogSpec] = {}
#: name -> factory(coordinator): per-coordinator components (state a group-type package
#: keeps outside `coordinator.groups`, e.g. the share coordinator); each coordinator builds
#: one of each at construction, and handlers find theirs as `coordinator.components[name]`.
COMPONENTS: dict[str, Callable[[Any], Any]] = {}


def owns_log(spec: LogSpec) -> LogSpec:
    """Register an extra log (idempotent per topic)."""
    LOGS[spec.topic] = spec
    return spec


def component(name: str):
    """Register the factory of a per-coordinator component."""
    def register(factory):
        COMPONENTS[name] = factory
        return factory
    return register


def handles(api_key: int):
    """Register a request handler for an API key."""
    def register(fn):
        HANDLERS[api_key] = fn
        return fn
    return register


def guards(*api_keys: int, always: bool = False):
    """Register the authorization checks of API keys (`always`: also without an authorizer)."""
    def register(fn):
        for key in api_keys:
            GUARDS[key] = fn
            if always:
                ALWAYS_GUARDED.add(key)
        return fn
    return register


def replays(*record_classes: type):
    """Register the replay function of record types."""
    def register(fn):
        for cls in record_classes:
            REPLAYERS[cls] = fn
        return fn
    return register


def makes_simple_groups(factory):
    """Register the factory of the group a standalone offset commit creates."""
    SIMPLE_GROUP[:] = [factory]
    return factory


def simple_group(group_id: str) -> Any:
    """A new "simple" group (only offsets, no members) named `group_id`."""
    return SIMPLE_GROUP[0](group_id)


def on_loaded(fn):
    """Register a function run after a coordinator finished loading its log."""
    LOAD_HOOKS.append(fn)
    return fn


def on_leader_change(fn):
    """Register a function run when a data partition's leader moves (`LEADER_CHANGE_HOOKS`)."""
    LEADER_CHANGE_HOOKS.append(fn)
    return fn


def on_metadata_update(fn):
    """Register a function run when a coordinator notices a change of the cluster's metadata."""
    METADATA_HOOKS.append(fn)
    return fn


@dataclass
class Marker:
    """A transaction marker to append to one `__consumer_offsets` partition."""

    partition: int
    commit: bool
    producer_id: int
    producer_epoch: int
    coordinator_epoch: int = 0


@dataclass
class Result:
    """What a handler or timer decides: a response (plain data or kio object) and the
    records to append. Nothing changes until the runtime appends and replays them."""

    #: a zero-argument callable is called after the records were appended and replayed, for
    #: answers that show the group as this request left it (e.g. Streams endpoint information)
    response: Any = None
    records: Sequence[Any] = ()
    producer_id: int = -1
    producer_epoch: int = -1
    transactional: bool = False
    markers: Sequence[Marker] = ()
    #: False for classic-group writes: as in Kafka (`CoordinatorResult(..., replayRecords=false)`)
    #: the handler already changed the classic group in memory and the records only persist it.
    replay: bool = True
    #: writes that follow this one, each computed after it was applied (Kafka's executor
    #: tasks, e.g. resolving regular expressions, whose results are written separately)
    then: Sequence[Callable[[], "Result | None"]] = ()


class ResponseNotReadyError(RuntimeError):
    """`PendingResponse.response` was read before the coordinator answered."""


#: APIs `Coordinator.handle` answers with a `PendingResponse`: JoinGroup (11) and SyncGroup (14)
PENDING_APIS = frozenset({11, 14})


class PendingResponse:
    """A JoinGroup or SyncGroup answer that Kafka holds back until the rebalance phase
    completes (its "purgatory"). `handle()` returns one at once; later requests or
    `Coordinator.advance()` complete it.

        join = c.handle(join_request)
        join.done          # False while other members are still expected
        c.advance(3000)    # e.g. group.initial.rebalance.delay.ms passes
        join.response      # the kio JoinGroupResponse
    """

    def __init__(self, api_key: int, version: int, waiting_for: str = "") -> None:
        self.api_key = api_key
        self.version = version
        self.waiting_for = waiting_for
        self._data: dict | None = None
        self._response: Any = None
        self._callbacks: list[Callable[["PendingResponse"], None]] = []

    @property
    def done(self) -> bool:
        return self._data is not None

    @property
    def data(self) -> dict:
        """The answer as plain version-neutral data (what `response` is built from)."""
        self._check_done()
        return self._data  # type: ignore[return-value]

    @property
    def response(self) -> Any:
        """The kio response object; a clear error while the answer is still pending."""
        self._check_done()
        if self._response is None:
            from kgroup.protocol import build, response_class
            self._response = build(response_class(self.api_key, self.version), self._data)
        return self._response

    @property
    def error_code(self) -> Any:
        return self.data.get("error_code")

    def _check_done(self) -> None:
        if self._data is None:
            from kgroup.protocol import api_name
            raise ResponseNotReadyError(
                f"the {api_name(self.api_key)} response is not ready: the coordinator is waiting for "
                f"{self.waiting_for or 'the rebalance phase to complete'}. Check `.done` first; "
                "other members' requests or Coordinator.advance() complete it.")

    def complete(self, data: dict) -> bool:
        """Give the answer (coordinator side). False if it was already answered."""
        if self._data is not None:
            return False
        data = dict(data)
        data.setdefault("throttle_time", 0)
        self._data = data
        for fn in self._callbacks:
            fn(self)
        self._callbacks.clear()
        return True

    def add_done_callback(self, fn: Callable[["PendingResponse"], None]) -> None:
        """Run `fn(self)` when answered (at once if already answered)."""
        if self._data is not None:
            fn(self)
        else:
            self._callbacks.append(fn)

    def __repr__(self) -> str:
        from kgroup.protocol import api_name
        name = api_name(self.api_key)
        if self._data is None:
            return f"<pending {name} v{self.version}: waiting for {self.waiting_for or 'the phase to complete'}>"
        code = self._data.get("error_code")
        return f"<{name} v{self.version} answered: {getattr(code, 'name', code)}>"


class _GroupTimerName(str):
    """A timer name that knows its group (see `group_timer`)."""

    group_id: str


def group_timer(name: str, group_id: str) -> str:
    """`name`, marked as a timer of `group_id`: a coordinator that unloads the group's
    `__consumer_offsets` partition cancels it (`Timers.cancel_group`), as Kafka's timers go with
    the shard that scheduled them."""
    marked = _GroupTimerName(name)
    marked.group_id = group_id
    return marked


class _Timer:
    """One named timer. Its heap entry is `(deadline, seq, timer)`; an entry whose key no
    longer matches the timer's (the timer was pushed back) is stale and re-queued."""

    __slots__ = ("deadline", "seq", "name", "callback", "cancelled")

    def __init__(self, deadline: int, seq: int, name: str, callback: Callable[[], "Result | None"]) -> None:
        self.deadline = deadline
        self.seq = seq
        self.name = name
        self.callback = callback
        self.cancelled = False


class Timers:
    """Named timers (soft state: Kafka does not persist them either).

    Scheduling a name again replaces the earlier timer, as Kafka's timer keys do. Timers fire
    in (deadline, scheduling order). A session timer is pushed back on every heartbeat, so a
    later deadline only updates the timer in place: its heap entry is re-queued when it comes
    up (no heap push per heartbeat, and the heap holds one entry per live timer).
    """

    def __init__(self) -> None:
        self._heap: list[tuple[int, int, _Timer]] = []
        self._by_name: dict[str, _Timer] = {}
        self._seq = itertools.count()
        #: group id -> the names of its live timers (`group_timer`)
        self._by_group: dict[str, set[str]] = {}

    def schedule(self, name: str, deadline: int, callback: Callable[[], "Result | None"]) -> None:
        timer = self._by_name.get(name)
        if timer is not None and deadline >= timer.deadline:
            # later than (or as late as) the queued entry: that entry surfaces first and is re-queued
            timer.deadline, timer.seq, timer.callback = deadline, next(self._seq), callback
            return
        if timer is not None:
            timer.cancelled = True
        timer = _Timer(deadline, next(self._seq), name, callback)
        self._by_name[name] = timer
        group_id = getattr(name, "group_id", None)
        if group_id is not None:
            self._by_group.setdefault(group_id, set()).add(name)
        heapq.heappush(self._heap, (deadline, timer.seq, timer))

    def cancel(self, name: str) -> None:
        timer = self._by_name.pop(name, None)
        if timer is not None:
            timer.cancelled = True
            self._forget(timer)

    def _forget(self, timer: _Timer) -> None:
        group_id = getattr(timer.name, "group_id", None)
        if group_id is not None:
            names = self._by_group.get(group_id)
            if names is not None:
                names.discard(timer.name)
                if not names:
                    del self._by_group[group_id]

    def cancel_group(self, group_id: str) -> int:
        """Cancel every timer of `group_id` (named with `group_timer`); returns how many were live."""
        names = self._by_group.pop(group_id, ())
        for name in names:
            self.cancel(name)
        return len(names)

    def _settle(self) -> None:
        """Drop cancelled entries and re-queue stale ones until the head is a live timer's."""
        heap = self._heap
        while heap:
            deadline, seq, timer = heap[0]
            if timer.cancelled:
                heapq.heappop(heap)
            elif seq != timer.seq:
                heapq.heapreplace(heap, (timer.deadline, timer.seq, timer))
            else:
                return

    def pop_due(self, now: int) -> _Timer | None:
        """The earliest timer due at or before `now`, removed; None if none is due."""
        self._settle()
        if self._heap and self._heap[0][0] <= now:
            timer = heapq.heappop(self._heap)[2]
            del self._by_name[timer.name]
            self._forget(timer)
            return timer
        return None

    def next_deadline(self) -> int | None:
        self._settle()
        return self._heap[0][0] if self._heap else None

    def pending(self) -> dict[str, int]:
        """Timer name -> deadline, for display."""
        return {name: t.deadline for name, t in sorted(self._by_name.items(), key=lambda kv: kv[1].deadline)}

    def __contains__(self, name: str) -> bool:
        return name in self._by_name
