"""The group coordinator runtime: route a request to its handler, append the records the
handler returns to the embedded `__consumer_offsets` log, replay them into state.

    c = Coordinator(cluster=Cluster({"orders": 3}), profile="kip")
    response = c.handle(request("OffsetCommit", 9, group_id="g", ...))
    c.advance(60_000)          # fires timers (expiration, session timeouts, ...)
    c.as_of(3)                 # the state after the first 3 log entries
    Coordinator.load(c.log)    # failover: a new coordinator rebuilt by replay
    Coordinator.load(c.log, share_state_log=c.share_state_log)   # with the share coordinator's log

Group-type packages may own further logs and per-coordinator components (`kgroup.runtime`
`LOGS`/`COMPONENTS`): the share coordinator keeps its `__share_group_state` log in
`c.logs` (`c.share_state_log`) and its state in `c.components`; records go to the log their
class names (`TOPIC`), and replay is the same door for every log.

Handlers never change state; replay (`_replay`) is the only code that does.
"""
from __future__ import annotations

import bisect
import contextlib
import copy
import random
import uuid
import warnings
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kio.static.constants import EntityType

from kgroup.authorizer import ANONYMOUS, Authorizer
from kgroup.clock import ManualClock
from kgroup.cluster import Cluster
from kgroup.config import Config
from kgroup.errors import ErrorCode, KafkaError, RecordTooLargeError, UnsupportedRequestError, operation_error
from kgroup.gcpause import gc_paused
import kgroup.group_configs  # noqa: F401  (registers IncrementalAlterConfigs/DescribeConfigs)
from kgroup.groups import Group, load_group_types
from kgroup.javaorder import by_partition, java_hash_order, java_string_set_order
from kgroup.log import Compression, OffsetsLog, partition_for
from kgroup.log.partitioner import java_string_hashcode
from kgroup.log.batch import ControlType
from kgroup.offsets import OffsetsManager
from kgroup.profile import Profile, get_profile
from kgroup.protocol import api_name, build, get, response_class, to_data
from kgroup.protocol.limits import MAX_STRING_BYTES, error_response, oversized_string
from kgroup.records import UnknownRecordTypeError
from kgroup.records.records import SHARE_GROUP_STATE
import kgroup.acl_checks  # noqa: F401  (registers the authorization checks)
from kgroup.runtime import (ALWAYS_GUARDED, COMPONENTS, GUARDS, HANDLERS, LEADER_CHANGE_HOOKS, LOAD_HOOKS, LOGS,
                            METADATA_HOOKS, PENDING_APIS, REPLAYERS, Marker, PendingResponse, Result, Timers, handles)

CONSUMER_OFFSETS = "__consumer_offsets"
#: the largest batch a coordinator write may be: the offsets topic's max.message.bytes, whose
#: default is the broker's message.max.bytes (Kafka 4.4.0 fails a bigger write whole)
MAX_BATCH_BYTES = 1_048_588
#: ConsumerGroupHeartbeat, ShareGroupHeartbeat, StreamsGroupHeartbeat: a failed write answers
#: with a response that carries nothing but the error
_BARE_ERROR_APIS = frozenset({68, 76, 88})
_EXPIRATION_TIMER = "offsets-expiration"


@dataclass(frozen=True)
class RequestContext:
    """What the request header and connection tell the coordinator about the caller."""

    client_id: str = "kgroup"
    client_host: str = "/127.0.0.1"
    #: the authenticated principal (what ACLs are checked against)
    principal: str = ANONYMOUS


class Coordinator:
    """An in-process Kafka group coordinator leading `__consumer_offsets` partitions.

    `cluster`: topic metadata; `config`: Kafka config names (see `kgroup.config`);
    `clock`: a `ManualClock` (deterministic by default); `profile`: "kip" or "kafka";
    `hosted_partitions`: the `__consumer_offsets` partitions this coordinator leads
    (all by default) — groups on other partitions get NOT_COORDINATOR; `seed`: the
    member-id generator's seed (member ids are UUIDs, reproducible by default);
    `authorizer`: None (default: everything allowed), True (check the cluster's ACLs,
    `cluster.authorizer`) or an `Authorizer` of its own — checks as Kafka's KafkaApis makes them.
    """

    def __init__(self, cluster: Cluster | None = None, config: Config | dict | None = None,
                 clock: ManualClock | None = None, profile: str | Profile = "kip", *,
                 hosted_partitions: Iterable[int] | None = None, seed: int | None = 0,
                 authorizer: Authorizer | bool | None = None) -> None:
        self.cluster = cluster if cluster is not None else Cluster()
        self.config = Config.of(config)
        self.clock = clock if clock is not None else ManualClock()
        if self.cluster.clock is None:  # produced records get the coordinator's time
            self.cluster.clock = self.clock
        self.profile = get_profile(profile)
        self.authorizer: Authorizer | None = (self.cluster.authorizer if authorizer is True
                                              else authorizer or None)
        self.num_partitions: int = self.config["offsets.topic.num.partitions"]
        self.hosted_partitions = (frozenset(range(self.num_partitions)) if hosted_partitions is None
                                  else frozenset(hosted_partitions))
        #: partitions taken over whose log is still being loaded: COORDINATOR_LOAD_IN_PROGRESS
        #: (see `unload` and `load_partition`)
        self.loading_partitions: set[int] = set()
        #: group id -> the JoinGroup/SyncGroup answers still waiting, with their requests
        #: (soft state: an unloaded partition answers them NOT_COORDINATOR)
        self._waiting: dict[str, list[tuple[PendingResponse, Any]]] = {}
        self.log = OffsetsLog(self.num_partitions, topic=CONSUMER_OFFSETS,
                              compression=Compression(self.config["offsets.topic.compression.codec"]))
        #: the other logs this coordinator writes, by topic (e.g. `__share_group_state`)
        self.logs: dict[str, OffsetsLog] = {spec.topic: _new_log(spec, self.config) for spec in LOGS.values()}
        #: per extra log, for each of its entries: how many `__consumer_offsets` entries came
        #: before it (what `as_of` needs to cut both logs at one moment)
        self._marks: dict[str, list[int]] = {topic: [] for topic in self.logs}
        self.groups: dict[str, Group] = {}
        self.offsets = OffsetsManager(self)
        self.timers = Timers()
        self.unreplayed: Counter[str] = Counter()  # record types no replay knows yet
        #: record type number -> records of a type kgroup does not know, skipped on load
        self.unknown_record_types: Counter[int] = Counter()
        #: soft state group types keep outside records and groups (e.g. Streams internal-topic
        #: creation in flight); like timers, a reloaded coordinator starts without it
        self.soft_state: dict[str, Any] = {}
        self.request_context = RequestContext()
        self._handling = 0  # how many requests are being served (a request may send another)
        #: who sends requests that name no principal (`acting_as`)
        self.default_principal = ANONYMOUS
        self._seed = seed
        self._ids = random.Random(seed)
        self._readonly = False
        self._snapshots: dict[tuple, Coordinator] = {}
        #: per-coordinator components of group-type packages (`kgroup.runtime.component`)
        self.components: dict[str, Any] = {name: factory(self) for name, factory in COMPONENTS.items()}
        #: the cluster metadata as this coordinator last saw it (version, topic ids): see `_notice_metadata`
        self._metadata_seen = (self.cluster.metadata_version, self._topic_names())
        self._schedule_expiration()

    @property
    def share_state_log(self) -> OffsetsLog:
        """The share coordinator's `__share_group_state` log (KIP-932)."""
        return self.logs[SHARE_GROUP_STATE]

    # -- time ---------------------------------------------------------------------
    def now(self) -> int:
        return self.clock.now_ms()

    def advance(self, ms: int) -> list[Any]:
        """Move the clock forward by `ms`, firing due timers in deadline order.

        Returns the log entries the timers wrote."""
        self._check_writable()
        target = self.now() + ms
        written: list[Any] = self._notice_metadata()
        while (timer := self.timers.pop_due(target)) is not None:
            self.clock.set(max(timer.deadline, self.now()))
            result = timer.callback()
            if result is not None:
                written += self._apply(result)
        self.clock.set(target)
        return written

    # -- requests -----------------------------------------------------------------
    def handle(self, request: Any, *, client_id: str = "kgroup", client_host: str = "/127.0.0.1",
               principal: str | None = None) -> Any:
        """Serve one kio request; returns the kio response of the same API and version.

        JoinGroup and SyncGroup return a `PendingResponse` instead (`.done`, `.response`):
        Kafka holds those answers until the rebalance phase completes. Kafka errors come
        back as error codes in the response, never as exceptions. `client_id` and
        `client_host` are what the request header and the connection would say, `principal`
        who authenticated (checked against the ACLs when the coordinator has an authorizer)."""
        self._check_writable()
        self._notice_metadata()
        # a request sent while serving another (the share persister's) must not change
        # whose request the outer one is
        principal = self.default_principal if principal is None else principal
        outer, self.request_context = self.request_context, RequestContext(client_id, client_host, principal)
        try:
            return self._handle(request)
        finally:
            if self._handling:
                self.request_context = outer

    def _handle(self, request: Any) -> Any:
        api_key = getattr(type(request), "__api_key__", None)
        version = getattr(type(request), "__version__", None)
        if api_key is None or getattr(type(request), "__type__", None) is not EntityType.request:
            raise UnsupportedRequestError(f"handle() takes a kio request object, got {type(request).__name__}")
        handler = HANDLERS.get(int(api_key))
        if handler is None:
            served = ", ".join(sorted(api_name(k) for k in HANDLERS))
            raise UnsupportedRequestError(f"the group coordinator does not serve {api_name(api_key)} (it serves {served})")
        too_long = oversized_string(request)
        if too_long is not None:
            # Kafka's reader refuses the request before anything sees it (INVALID_REQUEST here)
            return self._refused(request, ErrorCode.invalid_request,
                                 f"string field {too_long[0]} is {too_long[1]:,} bytes long; "
                                 f"Kafka reads strings of at most {MAX_STRING_BYTES:,} bytes")
        guarded = self.authorizer is not None or int(api_key) in ALWAYS_GUARDED
        guard = GUARDS.get(int(api_key)) if guarded else None
        self._handling += 1
        try:
            if guard is None:
                result = handler(self, request, int(version))
            else:
                result = guard(self, request, int(version), lambda req: handler(self, req, int(version)))
            # a request's write is atomic: one batch, at most the offsets topic's max.message.bytes
            self._apply(result, max_batch_bytes=MAX_BATCH_BYTES)
        except RecordTooLargeError as e:
            return self._operation_failed(request, *operation_error(e.code, e.message))
        finally:
            self._handling -= 1
        response = result.response
        if callable(response) and not isinstance(response, PendingResponse):
            response = response()
        if isinstance(response, PendingResponse):
            if not response.done:
                self._wait(getattr(request, "group_id", None), response, request)
            return response
        if isinstance(response, dict):
            response = build(response_class(int(api_key), int(version)), response)
        return response

    def _wait(self, group_id: str | None, pending: PendingResponse, request: Any) -> None:
        if group_id is None:
            return
        waiting = self._waiting.setdefault(group_id, [])
        waiting.append((pending, request))

        def answered(_: PendingResponse) -> None:
            left = [w for w in self._waiting.get(group_id, ()) if w[0] is not pending]
            if left:
                self._waiting[group_id] = left
            else:
                self._waiting.pop(group_id, None)
        pending.add_done_callback(answered)

    def _notice_metadata(self) -> list[Any]:
        """Kafka's onMetadataUpdate: when the cluster's metadata changed since this coordinator
        last looked, the group types hear of it (`kgroup.runtime.on_metadata_update`) and what they
        write is written, before the next request or timer is served. Returns the entries written."""
        version, seen = self._metadata_seen
        if self.cluster.metadata_version == version:
            return []
        now = self._topic_names()
        self._metadata_seen = (self.cluster.metadata_version, now)
        deleted = {tid: name for tid, name in seen.items() if tid not in now}
        written: list[Any] = []
        for hook in METADATA_HOOKS:
            result = hook(self, deleted)
            if result is not None:
                written += self._apply(result)
        return written

    def _topic_names(self) -> dict[Any, str]:
        """The cluster's topics now, id -> name (what a metadata delta's deletions are named by)."""
        return {t.topic_id: t.name for t in self.cluster.topics()}

    def _refused(self, request: Any, code: ErrorCode, message: str) -> Any:
        """`request` answered with `code` everywhere its response can say it, nothing written."""
        response = error_response(request, code, message)
        if int(type(request).__api_key__) in PENDING_APIS:
            pending = PendingResponse(int(type(request).__api_key__), int(type(request).__version__))
            pending.complete(to_data(response))
            return pending
        return response

    @contextlib.contextmanager
    def acting_as(self, principal: str):
        """Requests sent without a `principal` inside the block come from `principal`, e.g.
        an `Admin` or a simulated client: `with c.acting_as("User:alice"): admin.delete_groups(["g"])`."""
        previous, self.default_principal = self.default_principal, principal
        try:
            yield self
        finally:
            self.default_principal = previous

    def authorize(self, operation: Any, resource_type: Any, name: str) -> bool:
        """Whether the current request's principal may do `operation` on the resource
        (always, without an authorizer)."""
        if self.authorizer is None:
            return True
        ctx = self.request_context
        return self.authorizer.authorize(ctx.principal, operation, resource_type, name, ctx.client_host.lstrip("/"))

    def check_coordinator(self, group_id: str) -> int:
        """The group's `__consumer_offsets` partition; NOT_COORDINATOR if not led here,
        COORDINATOR_LOAD_IN_PROGRESS while its log loads."""
        partition = self.partition_for(group_id)
        if partition in self.loading_partitions:
            raise KafkaError(ErrorCode.coordinator_load_in_progress,
                             "The coordinator is loading and hence can't process requests.")
        if partition not in self.hosted_partitions:
            # what Kafka's runtime answers for a partition it has no context for
            raise KafkaError(ErrorCode.not_coordinator, "This is not the correct coordinator.")
        return partition

    def partition_for(self, group_id: str) -> int:
        return partition_for(group_id, self.num_partitions)

    def new_member_id(self, prefix: str) -> str:
        """`<prefix>-<uuid>` as Kafka names members, from the coordinator's seeded generator."""
        return f"{prefix}-{uuid.UUID(int=self._ids.getrandbits(128), version=4)}"

    # -- append + replay ----------------------------------------------------------
    def _operation_failed(self, request: Any, code: ErrorCode, message: str | None) -> Any:
        """The answer to a request whose write failed: the heartbeats of the modern groups carry
        only the error (Kafka builds them afresh); the others say it where they name things."""
        if int(type(request).__api_key__) in _BARE_ERROR_APIS:
            cls = response_class(int(type(request).__api_key__), int(type(request).__version__))
            return build(cls, {"error_code": int(code), "error_message": message})
        return self._refused(request, code, message)

    def _apply(self, result: Result, max_batch_bytes: int | None = None) -> list[Any]:
        if not result.records and not result.markers and not result.then:
            return []  # most heartbeats write nothing
        written = []
        by_partition: dict[tuple[str, int], list[Any]] = {}
        for record in result.records:
            topic = getattr(record, "TOPIC", CONSUMER_OFFSETS)
            if topic == CONSUMER_OFFSETS:
                where = (topic, self.partition_for(_group_of(record)))
            else:  # a log a component owns
                where = (topic, LOGS[topic].partition_of(record, self.logs[topic].num_partitions))
            by_partition.setdefault(where, []).append(record)
        now = self.now()
        for (topic, partition), records in by_partition.items():
            log = self.log if topic == CONSUMER_OFFSETS else self.logs[topic]
            entries = log.append(partition, records, timestamp=now, producer_id=result.producer_id,
                                 producer_epoch=result.producer_epoch, transactional=result.transactional,
                                 max_batch_bytes=max_batch_bytes if topic == CONSUMER_OFFSETS else None)
            if topic != CONSUMER_OFFSETS:
                self._marks[topic] += [len(self.log)] * len(entries)
            if result.replay:
                for entry in entries:
                    self._replay(entry)
            written += entries
        for m in result.markers:
            entry = self.log.append_marker(m.partition, commit=m.commit, producer_id=m.producer_id,
                                           producer_epoch=m.producer_epoch, coordinator_epoch=m.coordinator_epoch,
                                           timestamp=now)
            self._replay(entry)
            written.append(entry)
        for follow_up in result.then:
            more = follow_up()
            if more is not None:
                written += self._apply(more, max_batch_bytes)
        return written

    def _replay(self, entry: Any) -> None:
        """Apply one log entry to the in-memory state: the only place state changes."""
        if entry.control is not None:
            if entry.control.type in (ControlType.COMMIT, ControlType.ABORT):
                self.offsets.store.replay_marker(entry.producer_id, entry.control.type == ControlType.COMMIT,
                                                 entry.partition)
            return
        try:
            record = entry.record
        except UnknownRecordTypeError as exc:
            # Kafka's CoordinatorLoaderImpl: warn, ignore the record, load the rest
            if not self.unknown_record_types[exc.record_type]:
                warnings.warn(f"unknown record type {exc.record_type} in __consumer_offsets-{entry.partition} at "
                              f"offset {entry.offset}; ignored, as Kafka's coordinator loader does (it could be "
                              f"left over from an aborted upgrade)", stacklevel=2)
            self.unknown_record_types[exc.record_type] += 1
            return
        fn = REPLAYERS.get(type(record))
        if fn is None:
            name = type(record).__name__
            if not self.unreplayed[name]:
                warnings.warn(f"kgroup cannot replay {name} records yet; they are kept in the log but skipped",
                              stacklevel=2)
            self.unreplayed[name] += 1
            return
        fn(self, entry)

    # -- leadership of a partition: unload, load (a coordinator failover) ------------------
    def unload(self, partition: int) -> list[str]:
        """Give up leading `__consumer_offsets-<partition>` (Kafka's `onUnloaded`): its groups,
        their offsets and timers leave memory, and the JoinGroup/SyncGroup answers still waiting
        get NOT_COORDINATOR, so their clients look for the new coordinator. The log stays: a
        coordinator that takes the partition over loads it (`load_partition`). Returns the
        group ids unloaded."""
        # its groups, and the ids that hold only offsets or waiting answers
        gone = sorted({g for g in (*self.groups, *self.offsets.store.committed, *self._waiting)
                       if self.partition_for(g) == partition})
        for group_id in gone:
            for pending, request in self._waiting.pop(group_id, ()):
                data = to_data(error_response(request, ErrorCode.not_coordinator, None))
                pending.complete(data)
            self.timers.cancel_group(group_id)
            self.groups.pop(group_id, None)
            self.offsets.store.forget_group(group_id)
        self.hosted_partitions = self.hosted_partitions - {partition}
        self.loading_partitions.discard(partition)
        return gone

    def load_partition(self, partition: int) -> list[str]:
        """Take over `__consumer_offsets-<partition>` (Kafka's `onLoaded` after a leader
        election): replay its log into memory, then the group types' load hooks for its groups
        only (fresh sessions for the members, as a new coordinator gives them). Returns the
        group ids loaded."""
        if partition in self.hosted_partitions and partition not in self.loading_partitions:
            raise ValueError(f"__consumer_offsets-{partition} is already loaded here")
        with gc_paused():
            for entry in self.log.entries(partition):
                self._replay(entry)
        self.loading_partitions.discard(partition)
        hosted = self.hosted_partitions
        self.hosted_partitions = frozenset({partition})   # the hooks look at the groups hosted
        try:
            for hook in LOAD_HOOKS:
                hook(self)
        finally:
            self.hosted_partitions = hosted | {partition}
        return [g for g in self.groups if self.partition_for(g) == partition]

    def partition_leader_changed(self, topic: str, partition: int) -> None:
        """A data partition's leader moved to another broker: what the old leader kept in memory
        for it is gone (the group types' `on_leader_change` hooks; e.g. share-partitions load their
        durable state again, and records that were Acquired are Available, as KIP-932 says)."""
        for hook in LEADER_CHANGE_HOOKS:
            hook(self, topic, partition)

    # -- look-back, reload ------------------------------------------------------------
    @property
    def position(self) -> int:
        """How many entries the log holds (the position `as_of` takes for "now")."""
        return len(self.log)

    def as_of(self, position: int, *, share_position: int | None = None) -> "Coordinator":
        """A read-only coordinator holding the state after the first `position` log
        entries (like slicing: `as_of(0)` is empty, `as_of(c.position)` is now).

        The other logs (`__share_group_state`) are cut at the same moment: their entries
        written before the `position`-th `__consumer_offsets` entry are in (all of them at
        `c.position`); `share_position` cuts `__share_group_state` after that many entries
        instead. Rebuilt by replaying the logs, as a reload would; soft state (timers,
        waiting requests) is not part of it."""
        if not 0 <= position <= len(self.log):
            raise IndexError(f"position {position} is outside the log (0..{len(self.log)})")
        cuts = {topic: bisect.bisect_right(marks, position) for topic, marks in self._marks.items()}
        if share_position is not None:
            if not 0 <= share_position <= len(self.share_state_log):
                raise IndexError(f"share_position {share_position} is outside {SHARE_GROUP_STATE} "
                                 f"(0..{len(self.share_state_log)})")
            cuts[SHARE_GROUP_STATE] = share_position
        cache_key = (position, *sorted(cuts.items()))
        snap = self._snapshots.get(cache_key)
        if snap is None:
            entries = [self.log.entry_at(i) for i in range(position)]
            extra = {topic: [self.logs[topic].entry_at(i) for i in range(n)] for topic, n in cuts.items()}
            last_ts = max([e.timestamp for e in entries[-1:]] + [es[-1].timestamp for es in extra.values() if es],
                          default=self.now())
            snap = Coordinator(cluster=self.cluster, config=self.config, clock=ManualClock(last_ts),
                               profile=self.profile, hosted_partitions=self.hosted_partitions)
            snap.timers = Timers()  # a snapshot has no future
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                # interleave as written: an extra-log entry goes after the __consumer_offsets
                # entries that preceded it
                order = sorted(((self._marks[t][i], 1, t, i) for t, es in extra.items() for i in range(len(es))))
                k = 0
                for mark, _, topic, i in order:
                    while k < mark and k < position:
                        snap._replay(entries[k])
                        k += 1
                    snap._replay(extra[topic][i])
                for entry in entries[k:]:
                    snap._replay(entry)
            snap.log = _LogPrefix(self.log, position)
            snap.logs = {topic: _LogPrefix(self.logs[topic], n) for topic, n in cuts.items()}
            snap._marks = {topic: self._marks[topic][:n] for topic, n in cuts.items()}
            snap._readonly = True
            if len(self._snapshots) > 64:
                self._snapshots.pop(next(iter(self._snapshots)))
            self._snapshots[cache_key] = snap
        return snap

    def at_offset(self, partition: int, offset: int) -> "Coordinator":
        """The state right after the record at `offset` of `__consumer_offsets-<partition>`."""
        for entry in self.log.entries(partition):
            if entry.offset == offset:
                return self.as_of(entry.position + 1)
        raise KeyError(f"no entry at offset {offset} of __consumer_offsets-{partition}")

    @classmethod
    def load(cls, log_or_records: Any = None, *, share_state_log: Any = None, copy_log: bool = True,
             **kw: Any) -> "Coordinator":
        """A coordinator rebuilt by replaying a log (an `OffsetsLog`, a directory of
        `__consumer_offsets-N` segment folders, log entries, or plain records).
        Takes the constructor's keywords; the clock starts at the last record's time.
        An `OffsetsLog` is copied first; `copy_log=False` adopts it instead (faster for a
        large log nobody else writes to: the new coordinator appends to it).

        `share_state_log` (an `OffsetsLog` or a directory) rebuilds the share coordinator
        from `__share_group_state` too; either log alone works. A directory holding both
        topics' partition folders loads both."""
        config = Config.of(kw.get("config"))
        extra: dict[str, OffsetsLog] = {}
        source = log_or_records
        if isinstance(source, (str, Path)):
            logs = _read_logs(source, config)
            source = logs.pop(CONSUMER_OFFSETS, None)
            extra.update(logs)
        elif isinstance(source, OffsetsLog) and source.topic in LOGS:
            extra[source.topic], source = (copy.deepcopy(source) if copy_log else source), None
        elif isinstance(source, OffsetsLog) and copy_log:
            source = copy.deepcopy(source)
        if share_state_log is not None:
            if isinstance(share_state_log, (str, Path)):
                share_state_log = _read_logs(share_state_log, config, topics=(SHARE_GROUP_STATE,))[SHARE_GROUP_STATE]
            elif copy_log:
                share_state_log = copy.deepcopy(share_state_log)
            if share_state_log.topic != SHARE_GROUP_STATE:
                raise ValueError(f"share_state_log holds {share_state_log.topic}, not {SHARE_GROUP_STATE}")
            extra[SHARE_GROUP_STATE] = share_state_log
        if source is None or isinstance(source, OffsetsLog):
            return cls._load_log(source, extra, **kw)
        return cls._load_records(list(source), extra, **kw)

    @classmethod
    def step_through(cls, log: OffsetsLog | str | Path, *, partition_of: str | None = None,
                     **kw: Any) -> Iterator[tuple[Any, "Coordinator"]]:
        """Replay `log` (an `OffsetsLog`, or a directory of `__consumer_offsets-N` segments) one
        entry at a time into a new coordinator (the constructor's keywords), yielding (entry, the
        coordinator right after it); `partition_of`: only the entries of that group's partition
        (all that group's history needs). The coordinator is the same object each time, changing
        as the replay goes: ask it what you need before the next step."""
        if isinstance(log, (str, Path)):
            log = _read_logs(log, Config.of(kw.get("config")), topics=(CONSUMER_OFFSETS,))[CONSUMER_OFFSETS]
        c = cls(**kw)
        entries = log.entries(c.partition_for(partition_of)) if partition_of is not None else list(log)
        for entry in entries:
            if entry.timestamp > c.now():
                c.clock.set(entry.timestamp)
            c._replay(entry)
            yield entry, c

    @classmethod
    def _load_log(cls, log: OffsetsLog | None, extra: dict[str, OffsetsLog] | None = None,
                  **kw: Any) -> "Coordinator":
        """Adopt the logs as they are (offsets, batches, markers) and replay them."""
        entries = list(log) if log is not None else []
        last = [entries[-1].timestamp] if entries else []
        last += [max(e.timestamp for e in x) for x in (extra or {}).values() if len(x)]
        kw.setdefault("clock", ManualClock(max(last)) if last else ManualClock())
        c = cls(**kw)
        if log is not None:
            if log.num_partitions != c.num_partitions:
                raise ValueError(f"the log has {log.num_partitions} partitions but offsets.topic.num.partitions "
                                 f"is {c.num_partitions}")
            c.log = log
            with gc_paused():  # a large log is millions of long-lived objects and no cycles
                for entry in entries:
                    c._replay(entry)
        c._adopt_logs(extra or {})
        c._on_loaded()
        return c

    def _adopt_logs(self, extra: dict[str, OffsetsLog]) -> None:
        """Take over the other logs (e.g. `__share_group_state`) and replay them.

        Each log's state is its own, so they replay one after the other; where their
        entries fall among `__consumer_offsets` entries (for `as_of`) is taken from the
        timestamps, as nothing else records it."""
        times = [e.timestamp for e in self.log]
        for topic, log in extra.items():
            spec = LOGS[topic]
            expected = self.config[spec.partitions_config]
            if log.num_partitions != expected:
                raise ValueError(f"the {topic} log has {log.num_partitions} partitions but "
                                 f"{spec.partitions_config} is {expected}")
            self.logs[topic] = log
            entries = list(log)
            self._marks[topic] = [bisect.bisect_right(times, e.timestamp) for e in entries]
            with gc_paused():
                for entry in entries:
                    self._replay(entry)

    @classmethod
    def _load_records(cls, items: list, extra: dict[str, OffsetsLog] | None = None, **kw: Any) -> "Coordinator":
        """Plain records (or entries from elsewhere) appended as fresh logs, in order."""
        c = cls(**kw)
        with gc_paused():
            for item in items:
                record = getattr(item, "record", item)
                if record is None:
                    continue
                ts = getattr(item, "timestamp", None)
                if ts is not None and ts > c.now():
                    c.clock.set(ts)
                c._apply(Result(records=[record]))
        c._adopt_logs(extra or {})
        c._on_loaded()
        return c

    def _on_loaded(self) -> None:
        if self._seed is not None:
            # Member ids are random UUIDs in Kafka: a coordinator taking over must not hand out
            # the ids its predecessor gave (a restarted process would get its dead twin's id).
            # Still deterministic: seeded by where the logs end and by how many coordinators
            # took this log over (as Kafka's partition leader epoch moves with each new leader:
            # two takeovers with no record written in between must not seed alike)
            self.log.takeovers = getattr(self.log, "takeovers", 0) + 1
            self._ids = random.Random(f"{self._seed}/{len(self.log)}/{[len(x) for x in self.logs.values()]}/"
                                      f"{self.log.takeovers}")
        for hook in LOAD_HOOKS:
            hook(self)

    def _check_writable(self) -> None:
        if self._readonly:
            raise RuntimeError("this coordinator is a look-back snapshot (as_of); it cannot handle requests")

    # -- expiration timer ---------------------------------------------------------------
    def _schedule_expiration(self) -> None:
        interval = self.config["offsets.retention.check.interval.ms"]
        self.timers.schedule(_EXPIRATION_TIMER, self.now() + interval, self._expire_offsets)

    def _expire_offsets(self) -> Result:
        """Kafka's cleanupGroupMetadata: tombstones for expired offsets, and for empty
        groups that have no offsets left."""
        now = self.now()
        records: list[Any] = []
        group_ids = sorted(set(self.groups) | set(self.offsets.store.committed))
        for group_id in group_ids:
            if self.partition_for(group_id) not in self.hosted_partitions:
                continue
            expired, all_gone = self.offsets.expired_offsets(group_id, now)
            records += expired
            group = self.groups.get(group_id)
            if all_gone and group is not None and group.is_empty() and group.should_expire(self):
                try:
                    records += group.before_delete(self) + group.tombstones()
                except KafkaError:
                    pass  # kept until the next check (e.g. its share state could not be deleted)
        self._schedule_expiration()
        return Result(records=records)

    # -- views --------------------------------------------------------------------------
    def metrics(self) -> dict[str, Any]:
        """Kafka's group coordinator metrics by MBean name (see `kgroup.metrics`)."""
        from kgroup.metrics import group_metrics
        return group_metrics(self)

    def offsets_table(self) -> list[dict]:
        """Every committed offset as rows (group, topic, partition, offset, ...)."""
        rows = []
        for group_id, offsets in sorted(self.offsets.store.committed.items()):
            for (topic, p), oam in sorted(offsets.items()):
                rows.append({"group": group_id, "topic": topic, "partition": p, "offset": oam.offset,
                             "leader_epoch": oam.leader_epoch, "metadata": oam.metadata,
                             "commit_timestamp": oam.commit_timestamp, "expire_timestamp": oam.expire_timestamp})
        return rows

    def groups_table(self) -> list[dict]:
        """Every group: id, type, state, protocol type, partition."""
        return [{"group": g.group_id, "type": str(g.type), "state": g.state, "protocol_type": g.protocol_type,
                 "partition": self.partition_for(g.group_id)} for g in sorted(self.groups.values(), key=lambda g: g.group_id)]

    def __repr__(self) -> str:
        return (f"Coordinator(profile={self.profile.name!r}, groups={len(self.groups)}, "
                f"log={len(self.log)} entries, now={self.now()})")


class _LogPrefix:
    """The first `n` entries of a log: what a look-back snapshot shows as its log."""

    def __init__(self, log: OffsetsLog, n: int) -> None:
        self._log, self._n = log, n
        self.topic, self.num_partitions = log.topic, log.num_partitions

    def __iter__(self):
        return (self._log.entry_at(i) for i in range(self._n))

    def __len__(self) -> int:
        return self._n

    def entry_at(self, position: int):
        if not 0 <= position < self._n:
            raise IndexError(position)
        return self._log.entry_at(position)

    def entries(self, partition: int | None = None):
        return (e for e in self if partition is None or e.partition == partition)


def _new_log(spec: Any, config: Config) -> OffsetsLog:
    codec = config[spec.compression_config] if spec.compression_config else 0
    return OffsetsLog(config[spec.partitions_config], topic=spec.topic, compression=Compression(codec))


def _read_logs(path: str | Path, config: Config, topics: tuple[str, ...] | None = None) -> dict[str, OffsetsLog]:
    """The coordinator logs found under `path` (segment folders), by topic."""
    found: dict[str, OffsetsLog] = {}
    for topic in topics or (CONSUMER_OFFSETS, *LOGS):
        # the config's partition count, as Kafka reads its internal topics: partition folders
        # alone cannot say how many partitions there are (the empty ones leave none)
        n = config[LOGS[topic].partitions_config if topic in LOGS else "offsets.topic.num.partitions"]
        try:
            log, errors = OffsetsLog.read(path, topic=topic, num_partitions=n)
        except ValueError as exc:
            if "no partition directories" in str(exc):
                continue
            raise
        for err in errors:
            warnings.warn(str(err), stacklevel=3)
        found[topic] = log
    if not found:
        raise ValueError(f"{path}: no partition directories of {' or '.join(topics or (CONSUMER_OFFSETS, *LOGS))}")
    return found


def _group_of(record: Any) -> str:
    key = record.key
    group = getattr(key, "group", None)
    return group if group is not None else key.group_id


# ---------------------------------------------------------------------------------------
# Handlers of the APIs this module owns.

@handles(27)
def _write_txn_markers(c: Coordinator, req: Any, version: int) -> Result:
    """Transaction markers for `__consumer_offsets` partitions complete (or abort)
    pending transactional offsets; markers for other topics are not ours."""
    markers, answers = [], []
    for m in req.markers:
        topics = []
        for t in m.topics:
            parts = []
            for p in t.partition_indexes:
                if t.name != CONSUMER_OFFSETS or not 0 <= p < c.num_partitions:
                    code = ErrorCode.unknown_topic_or_partition
                elif p not in c.hosted_partitions:
                    code = ErrorCode.not_leader_or_follower
                elif m.producer_id < 0:
                    # Kafka cannot even build the marker batch (MemoryRecordsBuilder: "Cannot write
                    # transactional messages without a valid producer ID"); the IllegalArgumentException
                    # reaches KafkaApis.handleWriteTxnMarkersRequest as UNKNOWN_SERVER_ERROR
                    code = ErrorCode.unknown_server_error
                else:
                    code = ErrorCode.none
                    markers.append(Marker(p, bool(m.transaction_result), m.producer_id, m.producer_epoch,
                                          m.coordinator_epoch))
                parts.append({"partition_index": p, "error_code": code})
            topics.append({"name": t.name, "partitions": parts})
        answers.append({"producer_id": m.producer_id, "topics": topics})
    return Result({"markers": answers}, markers=markers)


@handles(42)
def _delete_groups(c: Coordinator, req: Any, version: int) -> Result:
    """Kafka's GroupCoordinatorService.deleteGroups. Only a null group id (which the wire cannot
    carry) is INVALID_GROUP_ID; the others, the empty one too, go by `__consumer_offsets` partition,
    answered partition after partition (`javaorder.by_partition`). In each partition share groups
    come first (`prepare_delete`): record 15 marks their share-partitions deleting, a write of its
    own, then the share coordinator deletes them; a share group not empty, or whose state was not
    deleted, is answered with that error (first) and kept. The other groups, in the order of Kafka's
    `HashSet` of them, are validated and tombstoned in a second write."""
    ids = dict.fromkeys(req.groups_names)  # KafkaApis asks for each id once
    parts = [_DeletePartition(c, partition, part) for partition, part in by_partition(ids, c.partition_for)]

    def tombstones() -> Result:
        return Result(records=[r for part in parts for r in part.tombstones()])

    def response() -> dict:
        return {"throttle_time": 0, "results": [r for part in parts for r in part.results()]}
    return Result(response, [r for part in parts for r in part.first_write], then=[tombstones])


class _DeletePartition:
    """One `__consumer_offsets` partition's share of a DeleteGroups (see `_delete_groups`)."""

    def __init__(self, c: Coordinator, partition: int, group_ids: list[str]) -> None:
        self.c, self.group_ids = c, group_ids
        #: group id -> the error of its share step (NONE kept too: Kafka's map holds them, its order)
        self.share_errors: dict[str, ErrorCode] = {}
        self.pending: dict[str, Any] = {}
        self.first_write: list[Any] = []
        self.answers: list[dict] = []
        if partition not in c.hosted_partitions:  # the runtime refuses the share step for all of them
            self.share_errors = dict.fromkeys(group_ids, ErrorCode.not_coordinator)
            return
        for group_id in group_ids:
            prepare = getattr(c.groups.get(group_id), "prepare_delete", None)
            if prepare is None:
                continue
            try:
                c.groups[group_id].validate_delete_group()
                records, delete = prepare(c)
            except KafkaError as e:
                self.share_errors[group_id] = e.code
                continue
            self.first_write += records
            if delete is not None:
                self.pending[group_id] = delete

    def tombstones(self) -> list[Any]:
        """The share coordinator's deletes, then the second write: the groups left, validated."""
        for group_id, delete in self.pending.items():
            self.share_errors[group_id] = delete()
        failed = {g for g, code in self.share_errors.items() if code != ErrorCode.none}
        records: list[Any] = []
        for group_id in java_string_set_order(self.group_ids):
            if group_id in failed:
                continue
            try:
                group = self.c.groups.get(group_id)
                if group is None:
                    raise KafkaError(ErrorCode.group_id_not_found, f"group {group_id!r} does not exist")
                group.validate_delete_group()
                # a group with a first step (share) did its work there
                before = [] if hasattr(group, "prepare_delete") else group.before_delete(self.c)
                records += before + self.c.offsets.tombstones_for_group(group_id) + group.tombstones()
                self.answers.append({"group_id": group_id, "error_code": ErrorCode.none})
            except KafkaError as e:
                self.answers.append({"group_id": group_id, "error_code": e.code})
        return records

    def results(self) -> list[dict]:
        errors = [{"group_id": g, "error_code": code} for g in java_hash_order(self.share_errors, java_string_hashcode)
                  if (code := self.share_errors[g]) != ErrorCode.none]
        return errors + self.answers


@handles(16)
def _list_groups(c: Coordinator, req: Any, version: int) -> Result:
    states = {s.lower() for s in get(req, "states_filter", ()) or ()}
    types = {t.lower() for t in get(req, "types_filter", ()) or ()}
    groups = []
    for g in sorted(c.groups.values(), key=lambda g: g.group_id):
        if c.partition_for(g.group_id) not in c.hosted_partitions:
            continue
        if states and g.state.lower() not in states:
            continue
        if types and str(g.type) not in types:
            continue
        groups.append({"group_id": g.group_id, "protocol_type": g.protocol_type or "",
                       "group_state": g.state, "group_type": str(g.type)})
    return Result({"throttle_time": 0, "error_code": ErrorCode.none, "groups": groups})


# Every group type registers its handlers and replays (kgroup/groups/__init__.py lists them).
load_group_types()
