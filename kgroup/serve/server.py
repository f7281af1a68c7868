"""The server: one thread, one asyncio loop, and the coordinator owned by that loop.

Kafka's group coordinator runs each `__consumer_offsets` partition on a single thread; here
one loop plays that part for all of them: every `Coordinator` call (requests, timers, clock)
happens on it, so the sans-IO coordinator needs no locks. Each connection serves its requests
one at a time, in order, as Kafka's network layer does (it mutes a channel until the answer
to its request is sent): a JoinGroup waiting for the rebalance holds back that connection
only, never the loop.

    server = Server(Coordinator(cluster=Cluster({"orders": 3}))).start()
    consumer = KafkaConsumer("orders", bootstrap_servers=server.bootstrap, group_id="g")
    ...
    server.call(lambda: len(server.coordinator.log))   # look at the state on the loop's thread
    server.stop()

Notebooks step through it: `Server(..., record=True).exchanges()` lists every exchange with
the coordinator beside the records it wrote; `pause()` holds coordinator requests (`pause(group)`:
only that group's) and stops the coordinator's clock, `step(n)` lets the next n through,
`resume()` carries on.

The failure lab (`kgroup.lab`): `Server(..., brokers=3)` listens as brokers 0..2 on as many ports,
one loop for all, and spreads partition leadership over them; `move_coordinator(group, broker)`,
`kill_broker(b)` and `restart_broker(b)` move `__consumer_offsets` partitions, whose groups the
coordinator unloads and loads again from the log (COORDINATOR_LOAD_IN_PROGRESS meanwhile, for
`load_ms`); `add_fault(Fault(...))` answers errors, delays answers or drops connections;
`wait_group(group, state=..., members=...)` waits on the group instead of on sleeps.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from kgroup.errors import ErrorCode
from kgroup.lab import Fault, Leadership, Move, holds, parse_fault, view
from kgroup.lab.releases import release
from kgroup.protocol import api_name, build, ms, response_class, supported_versions, to_data
from kgroup.protocol.limits import error_response
from kgroup.runtime import HANDLERS, PendingResponse
from kgroup.serve.broker import BROKER_APIS, Broker
from kgroup.serve.configs import Configs
from kgroup.serve.framing import (MAX_REQUEST_BYTES, FrameError, RequestFrame, decode_request, encode_response,
                                  frame_size, peek_header, request_class)
from kgroup.serve.recording import Exchange, Gate, Recorder
from kgroup.serve.transactions import TransactionCoordinator

log = logging.getLogger("kgroup.serve")

#: APIs the coordinator handles that only brokers and controllers send (Kafka checks
#: ClusterAction on them): WriteTxnMarkers and the share coordinator's state RPCs
_INTER_BROKER = frozenset({27, 83, 84, 85, 86, 87})
_API_VERSIONS = 18
_SHARE_FETCH, _SHARE_ACKNOWLEDGE = 78, 79
#: DescribeConfigs, IncrementalAlterConfigs: split by resource type (kgroup.serve.configs)
_CONFIG_APIS = frozenset({32, 44})
_CONSUMER_OFFSETS = "__consumer_offsets"
#: the features kgroup's brokers advertise when the release has them finalized: group.version
#: (KIP-848 clients look for it); transaction.version 2 is not served (EndTxn v5), so not advertised
_FEATURES = frozenset({"group.version"})


class _Dropped(Exception):
    """A fault rule drops the connection."""


def _served_apis() -> dict[int, tuple[int, int]]:
    """api key -> (min, max) version: kio's versions of every API the server routes."""
    out: dict[int, tuple[int, int]] = {}
    for key, (_, lowest, highest) in BROKER_APIS.items():
        versions = [v for v in supported_versions(key) if v >= lowest and (highest is None or v <= highest)]
        out[key] = (versions[0], versions[-1])
    for key in HANDLERS:
        if key not in _INTER_BROKER and key not in out:
            versions = supported_versions(key)
            out[key] = (versions[0], versions[-1])
    return out


class Server:
    """A Kafka-protocol endpoint in front of `coordinator` (and its `cluster`).

    `start()` binds (port 0: any free port) and serves on a background thread; `stop()`
    closes every connection and joins it. A real clock drives the coordinator's timers
    (session timeouts, rebalance delays, offsets expiration) from the moment it starts.
    `auto_create_topics`: Metadata creates unknown topics (Kafka's auto.create.topics.enable, on by
    default as in a fresh Kafka).
    `record`: keep every exchange with the coordinator (True: all, a number: the latest ones);
    `record_broker_apis`: keep the broker APIs' exchanges too (Produce, Fetch, Metadata, ...).
    `brokers`: how many brokers listen (ids 0..brokers-1, on `port`, `port`+1, ... or on free
    ports for port 0); `faults`: fault rules applied from the start (`add_fault`); `load_ms`: how
    long a coordinator taking a partition over loads it (COORDINATOR_LOAD_IN_PROGRESS meanwhile);
    `kafka_version`: the release ("3.7" ... "4.4") whose ApiVersions the brokers advertise and whose
    refusals they answer (`kgroup.lab.releases`)."""

    def __init__(self, coordinator: Any, host: str = "127.0.0.1", port: int = 0, *,
                 auto_create_topics: bool = True, tick_ms: int = 100,
                 max_request_bytes: int = MAX_REQUEST_BYTES, record: bool | int = False,
                 record_broker_apis: bool = False, brokers: int = 1, faults: Any = (),
                 load_ms: int = 0, kafka_version: str = "4.4") -> None:
        self.coordinator = coordinator
        self.host, self.port = host, port
        self.leadership = Leadership(brokers)
        #: each broker's port (0 until bound, for a free one)
        self.ports = [port + b if port else 0 for b in range(brokers)]
        self.load_ms = load_ms
        self.faults: list[Fault] = list(faults)
        self._listeners: dict[int, asyncio.AbstractServer] = {}
        self._broker_connections: dict[int, set[asyncio.Task]] = {b: set() for b in range(brokers)}
        #: partition -> the move it is loading for (a newer move makes an older load moot)
        self._loads: dict[int, Move] = {}
        self.tick_ms = tick_ms
        self.record_broker_apis = record_broker_apis
        self.max_request_bytes = max_request_bytes
        self.broker = Broker(coordinator, host, port, auto_create_topics=auto_create_topics,
                             leadership=self.leadership, ports=self.ports)
        self.release = release(kafka_version)
        self.api_versions = self.release.served(_served_apis())
        self.broker.served = self.api_versions
        self.broker.features = {k: v for k, v in self.release.features.items() if k in _FEATURES}
        self.configs = Configs(self.broker)
        self.broker.transactions = TransactionCoordinator(self.broker, self._write_txn_markers)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._stopping: asyncio.Future | None = None
        self._connections: set[asyncio.Task] = set()
        #: ApiVersions answers never change: encoded once per version (kio's writer takes
        #: ~250 µs for the table), the correlation id patched in
        self._api_versions_frames: dict[int, bytes] = {}
        self._recorder = (Recorder(coordinator, None if record is True else int(record))
                          if record is not False else None)
        self._gate = Gate()
        #: `pause()`'s rule while paused (None otherwise): it holds, and the clock stands still
        self._pausing: Fault | None = None
        #: wall-clock time minus the coordinator's, while not paused
        self._offset_ms = 0
        #: share long polls: bumped whenever records may have become available to a share
        #: group (a produce, acknowledgements, timers writing); (group, member) -> the value
        #: when that member's last ShareFetch acquired nothing
        self._share_generation = 0
        self._share_changed: asyncio.Future | None = None
        self._share_idle: dict[tuple[str, str], int] = {}
        self.broker.on_data = self._share_bump

    @property
    def bootstrap(self) -> str:
        """"host:port" (of every broker, comma-separated) for a client's bootstrap.servers."""
        return ",".join(f"{self.host}:{port}" for port in self.ports)

    # -- lifecycle ------------------------------------------------------------------------
    def start(self) -> "Server":
        """Bind and serve on a background thread; returns once the port is open."""
        if self._thread is not None:
            raise RuntimeError("the server is already started")
        self._ready.clear()
        self._error = None
        self._thread = threading.Thread(target=self._run, name=f"kgroup-serve-{self.port}", daemon=True)
        self._thread.start()
        self._ready.wait()
        if self._error is not None:
            self._thread.join()
            self._thread = None
            raise self._error
        return self

    def stop(self, timeout: float = 10.0) -> None:
        """Close the listener and every connection, then join the thread."""
        if self._thread is None:
            return
        loop = self._loop
        if loop is not None and not loop.is_closed():
            try:
                loop.call_soon_threadsafe(self._request_stop)
            except RuntimeError:  # the loop closed meanwhile
                pass
        self._thread.join(timeout)
        self._thread = None
        self._loop = None  # call() now runs on the caller's thread: nothing else touches the state

    def __enter__(self) -> "Server":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def call(self, fn: Callable[..., Any], *args: Any, timeout: float = 30.0) -> Any:
        """Run `fn(*args)` on the loop's thread (where the coordinator lives) and return
        its result: the safe way to look at or change the state while serving."""
        if self._loop is None or threading.current_thread() is self._thread:
            return fn(*args)
        done: concurrent.futures.Future = concurrent.futures.Future()

        def run() -> None:
            try:
                done.set_result(fn(*args))
            except BaseException as exc:  # handed to the caller
                done.set_exception(exc)
        self._loop.call_soon_threadsafe(run)
        return done.result(timeout)

    # -- notebooks: recording and stepping ---------------------------------------------------
    def exchanges(self) -> list[Exchange]:
        """The recorded exchanges, oldest first (needs `record=`)."""
        if self._recorder is None:
            raise RuntimeError("this server does not record: Server(..., record=True)")
        return self.call(lambda: list(self._recorder.exchanges))

    def observe(self, name: str, fn: Callable[[Exchange], Any] | None) -> None:
        """Run `fn(exchange)` on the loop right after every recorded exchange and keep what it
        returns (unless None) in `exchange.observed[name]`: soft state no log holds, seen
        live (a share-partition's locks). `fn=None` stops observing."""
        if self._recorder is None:
            raise RuntimeError("this server does not record: Server(..., record=True)")
        observers = self._recorder.observers
        self.call(lambda: observers.pop(name, None) if fn is None else observers.__setitem__(name, fn))

    def pause(self, group: str | None = None) -> Fault:
        """Hold every coordinator request (broker APIs still flow), or with `group` only the
        requests naming that group, and stop the coordinator's clock (for every group: there
        is one clock), so that no session times out while a notebook looks. It is a `pause`
        fault rule (returned: its `hits` are the requests it held) that also stops the clock."""
        def pause() -> Fault:
            if self._pausing is not None:
                if self._pausing.group != group:
                    raise RuntimeError(f"already paused for {self._pausing.group or 'every group'}: resume() first")
                return self._pausing
            self._pausing = Fault(group=group, pause=True, when=_is_coordinator_request)
            return self._pausing
        return self.call(pause)

    def step(self, n: int = 1) -> None:
        """While paused (or while a `pause` fault rule holds requests): let the next `n` held
        (or coming) coordinator requests through."""
        self.call(self._gate.step, n)

    def held(self) -> list[str]:
        """While paused: the coordinator requests waiting, as "client id: API"."""
        return self.call(self._gate.held)

    def resume(self) -> None:
        """Serve everything again (what a `pause` fault rule held too); a paused clock goes on
        from where it stood."""
        def resume() -> None:
            if self._pausing is not None:
                self._offset_ms = _wall_ms() - self.coordinator.now()
                self._pausing = None
            self._gate.open()
        self.call(resume)

    def advance(self, ms: int) -> None:
        """While paused: move the coordinator's clock by `ms`, firing its timers (sessions,
        rebalance timeouts, delays), recorded as a "timers" exchange."""
        if self._pausing is None:
            raise RuntimeError("advance() moves a paused server's clock; a running one follows the wall clock")
        self.call(self._sync_clock, ms)

    # -- the failure lab: faults, brokers, leadership -----------------------------------------
    def add_fault(self, fault: Fault | str) -> Fault:
        """Apply a fault rule from now on (`kgroup.lab.Fault`, or its text: `parse_fault`);
        returns it, to read its `hits` or `wait()` on it."""
        if isinstance(fault, str):
            fault = parse_fault(fault)
        self.call(self.faults.append, fault)
        return fault

    def remove_fault(self, fault: Fault) -> None:
        self.call(self.faults.remove, fault)

    def _fault_for(self, api_key: int, version: int, broker_id: int, body: Any) -> Fault | None:
        """The first rule acting on this request (the later ones do not count it); every
        observing rule counts it."""
        acting = None
        for rule in self.faults:
            if rule.observe:
                rule.fire(api_key, version, broker_id, body)
            elif acting is None and rule.fire(api_key, version, broker_id, body):
                acting = rule
        return acting

    def _record_fault(self, fault: Fault | str, api_key: int, request: Any, client_host: str, answer: Any) -> None:
        """A request the coordinator never saw (answered an error, or dropped first), recorded."""
        if self._recorder is not None and (api_key not in BROKER_APIS or self.record_broker_apis):
            self._recorder.add(self._recorder.mark(), api_key=api_key, api_version=request.api_version,
                               client_id=request.client_id, client_host=client_host, request=request.body,
                               response=answer, fault=str(fault))

    def _lab_event(self, text: str) -> None:
        if self._recorder is not None:
            self._recorder.add(self._recorder.mark(), api_key=None, api_version=None, fault=text)

    def move_coordinator(self, group_or_partition: str | int, broker_id: int) -> int:
        """Make `broker_id` lead the group's `__consumer_offsets` partition (or that partition):
        the coordinator unloads it (its waiting JoinGroup/SyncGroup answers get NOT_COORDINATOR)
        and loads it again from the log as the new leader, answering COORDINATOR_LOAD_IN_PROGRESS
        for `load_ms`. Returns the partition."""
        c = self.coordinator
        partition = (c.partition_for(group_or_partition) if isinstance(group_or_partition, str)
                     else int(group_or_partition))
        if not 0 <= partition < c.num_partitions:
            raise ValueError(f"__consumer_offsets has partitions 0..{c.num_partitions - 1}, not {partition}")

        def move() -> None:
            moved = self.leadership.move(_CONSUMER_OFFSETS, partition, broker_id)
            if moved is not None:
                self._lab_event(f"coordinator moved: {_CONSUMER_OFFSETS}-{partition} from broker {moved.old} "
                                f"to broker {moved.new}")
                self._apply_moves([moved])
        self.call(move)
        return partition

    def kill_broker(self, broker_id: int) -> None:
        """Stop broker `broker_id`: its port closes, its connections are cut, and the partitions it
        led move to the next live broker (the coordinator loads those it takes over)."""
        def kill() -> None:
            before = self._data_leaders()
            moves = self.leadership.kill(broker_id, {_CONSUMER_OFFSETS: self.coordinator.num_partitions,
                                                     **self._data_partitions()})
            listener = self._listeners.pop(broker_id, None)
            if listener is not None:
                listener.close()
            for task in list(self._broker_connections[broker_id]):
                task.cancel()
            offsets = [m for m in moves if m.topic == _CONSUMER_OFFSETS]
            to = sorted({m.new for m in offsets})
            self._data_moved(before)   # (recorded after: observers see the broker gone)
            self._lab_event(f"broker {broker_id} killed: its {len(offsets)} {_CONSUMER_OFFSETS} partition(s) "
                            + (f"moved to broker(s) {', '.join(map(str, to))}" if to != [-1] else "are offline"))
            self._apply_moves(moves)
        self.call(kill)

    def restart_broker(self, broker_id: int) -> None:
        """Start broker `broker_id` again on its port; partitions left without a leader while it
        was down come back to it (loaded from the log); the others stay where they moved."""
        def restart() -> Any:
            before = self._data_leaders()
            moves = self.leadership.restart(broker_id, {_CONSUMER_OFFSETS: self.coordinator.num_partitions})
            self._data_moved(before)
            self._lab_event(f"broker {broker_id} restarted")
            self._apply_moves(moves)
            return asyncio.run_coroutine_threadsafe(self._listen(broker_id), self._loop)
        bound = self.call(restart)
        bound.result(10)

    def _data_partitions(self) -> dict[str, int]:
        return {t.name: t.partitions for t in self.coordinator.cluster.topics()}

    def _data_leaders(self) -> dict[tuple[str, int], int]:
        return {(t, p): self.leadership.leader(t, p) for t, n in self._data_partitions().items() for p in range(n)}

    def _data_moved(self, before: dict[tuple[str, int], int]) -> None:
        """Tell the coordinator of each data partition whose leader changed (share-partitions'
        in-flight state stays with the old leader)."""
        for (topic, p), leader in before.items():
            if self.leadership.leader(topic, p) != leader:
                self.coordinator.partition_leader_changed(topic, p)

    def _apply_moves(self, moves: list[Move]) -> None:
        """Unload each `__consumer_offsets` partition that changed leader, and load it for its new
        one (after `load_ms`); offline partitions stay unloaded."""
        c = self.coordinator
        for m in moves:
            if m.topic != _CONSUMER_OFFSETS:
                continue
            if m.partition in c.hosted_partitions or m.partition in c.loading_partitions:
                c.unload(m.partition)
            self._loads.pop(m.partition, None)
            if m.new < 0:
                continue
            c.loading_partitions.add(m.partition)
            self._loads[m.partition] = m
            if self.load_ms > 0 and self._loop is not None:
                self._loop.call_later(self.load_ms / 1000, self._finish_load, m)
            else:
                self._finish_load(m)

    def _finish_load(self, move: Move) -> None:
        if self._loads.get(move.partition) is not move:
            return   # moved again meanwhile
        del self._loads[move.partition]
        groups = self.coordinator.load_partition(move.partition)
        if groups:   # a partition without groups loads unseen
            self._lab_event(f"{_CONSUMER_OFFSETS}-{move.partition} loaded on broker {move.new}: "
                            f"group(s) {', '.join(sorted(groups))}")

    def wait_group(self, group_id: str, state: str | None = None, members: int | None = None,
                   timeout: float = 30.0, *, epoch_at_least: int | None = None) -> Any:
        """Wait until the group is in `state` with `members` members (and an epoch of at least
        `epoch_at_least`), each only when given; returns its `kgroup.lab.GroupView` then, or
        raises TimeoutError saying how it stood."""
        deadline = time.monotonic() + timeout
        while True:
            now = self.call(view, self.coordinator, group_id)
            if holds(now, state=state, members=members, epoch_at_least=epoch_at_least):
                return now
            if time.monotonic() >= deadline:
                wanted = ", ".join(f"{k}={v}" for k, v in (("state", state), ("members", members),
                                                          ("epoch_at_least", epoch_at_least)) if v is not None)
                seen = ("no such group" if now is None else
                        f"{now.state} with {len(now.members)} member(s) at epoch {now.epoch}")
                raise TimeoutError(f"group {group_id!r} did not reach {wanted or 'existence'} in {timeout:g} s: {seen}")
            time.sleep(0.02)

    def _due(self) -> bool:
        deadline = self.coordinator.timers.next_deadline()
        return deadline is not None and deadline <= self.coordinator.now()

    def _request_stop(self) -> None:
        if self._stopping is not None and not self._stopping.done():
            self._stopping.set_result(None)

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        try:
            loop.run_until_complete(self._main())
        except BaseException as exc:  # a bind error: start() raises it
            self._error = exc
            self._ready.set()
        finally:
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

    async def _main(self) -> None:
        self._stopping = asyncio.get_running_loop().create_future()
        try:
            for b in range(len(self.ports)):
                await self._listen(b)
        except BaseException:
            for listener in self._listeners.values():
                listener.close()
            raise
        self.port = self.ports[0]
        self.broker.port = self.port
        self._start_clock()
        ticker = asyncio.create_task(self._tick())
        self._ready.set()
        try:
            await self._stopping
        finally:
            for listener in self._listeners.values():
                listener.close()
            ticker.cancel()
            for task in list(self._connections):
                task.cancel()
            await asyncio.gather(ticker, *self._connections, return_exceptions=True)
            for listener in self._listeners.values():
                await listener.wait_closed()

    async def _listen(self, broker_id: int) -> None:
        async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await self._connection(reader, writer, broker_id)
        listener = await asyncio.start_server(connection, self.host, self.ports[broker_id])
        self.ports[broker_id] = listener.sockets[0].getsockname()[1]
        self._listeners[broker_id] = listener

    # -- the clock ------------------------------------------------------------------------
    def _start_clock(self) -> None:
        # Jump to the wall clock without firing every timer on the way (a coordinator built
        # with the default deterministic start is years behind); overdue timers fire once, at
        # the first tick, as they would after a long pause.
        now = _wall_ms()
        if now > self.coordinator.now():
            self.coordinator.clock.set(now)
        # a coordinator ahead of the wall clock (a log from the future) goes on from its time
        self._offset_ms = now - self.coordinator.now()

    def _sync_clock(self, by_ms: int | None = None) -> None:
        """Bring the coordinator's clock to the wall clock (while paused: fire only what is due
        at the frozen time, or move it by `by_ms` when a notebook says so)."""
        if by_ms is not None:
            behind = by_ms
        elif self._pausing is not None:
            behind = 0
        else:
            behind = _wall_ms() - self._offset_ms - self.coordinator.now()
        if behind > 0 or (behind == 0 and self._due()):
            mark = self._recorder.mark() if self._recorder is not None else None
            before = len(self.coordinator.share_state_log)
            self.coordinator.advance(behind)
            if len(self.coordinator.share_state_log) != before:  # e.g. acquisition locks expired
                self._share_bump()
            if mark is not None:
                self._recorder.add(mark, api_key=None, api_version=None)

    async def _tick(self) -> None:
        """Fire the coordinator's timers when due (and at least every `tick_ms`)."""
        while True:
            try:
                self._sync_clock()
                self.broker.transactions.expire_timed_out()
            except Exception:
                log.exception("a coordinator timer failed")
            wait = self.tick_ms
            deadline = self.coordinator.timers.next_deadline()
            if deadline is not None:
                wait = min(wait, max(1, deadline - self.coordinator.now()))
            await asyncio.sleep(wait / 1000)

    # -- connections ----------------------------------------------------------------------
    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                          broker_id: int = 0) -> None:
        task = asyncio.current_task()
        self._connections.add(task)
        self._broker_connections[broker_id].add(task)
        peer = writer.get_extra_info("peername")
        client_host = "/" + (peer[0] if peer else "unknown")
        try:
            while True:
                size = frame_size(await reader.readexactly(4), self.max_request_bytes)
                answer = await self._serve(await reader.readexactly(size), client_host, broker_id)
                if answer is not None:
                    writer.write(answer)
                    await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass  # the client went away
        except _Dropped:
            pass  # a fault rule cuts the connection
        except FrameError as exc:
            log.info("closing the connection from %s: %s", client_host, exc)
        except asyncio.CancelledError:
            pass  # the server stops
        except Exception:
            log.exception("closing the connection from %s", client_host)
        finally:
            self._connections.discard(task)
            self._broker_connections[broker_id].discard(task)
            writer.close()

    async def _serve(self, frame: bytes, client_host: str, broker_id: int = 0) -> bytes | None:
        """The response frame to one request frame (None: no answer, acks=0)."""
        api_key, version, correlation_id = peek_header(frame)
        served = self.api_versions.get(api_key)
        cls = request_class(api_key, version) if served and served[0] <= version <= served[1] else None
        if cls is None:
            if api_key == _API_VERSIONS:
                # a client newer than this server: answer v0, which every client reads, with the
                # versions served so that it retries with one of them (KIP-511)
                lo, hi = self.api_versions[_API_VERSIONS]
                return encode_response(correlation_id, build(response_class(_API_VERSIONS, 0), {
                    "error_code": ErrorCode.unsupported_version,
                    "api_keys": [{"api_key": _API_VERSIONS, "min_version": lo, "max_version": hi}]}))
            # Kafka cannot parse it either and closes the connection
            raise FrameError(f"unsupported request: api key {api_key} version {version}")
        request = decode_request(frame, cls)
        if api_key == _API_VERSIONS:
            cached = self._api_versions_frames.get(version)
            if cached is None:
                answer = build(response_class(api_key, version), self.broker.api_versions(request.body, version))
                cached = self._api_versions_frames[version] = encode_response(0, answer)
            # both response headers start with the correlation id, right after the size
            return cached[:4] + correlation_id.to_bytes(4, "big", signed=True) + cached[8:]
        exchange = None
        fault = None
        try:
            pausing = self._pausing
            if pausing is not None and pausing.fire(api_key, version, broker_id, request.body):
                await self._gate.hold(f"{request.client_id}: {api_name(api_key)}")
            fault = self._fault_for(api_key, version, broker_id, request.body)
            try:
                if fault is not None and fault.pause:
                    await self._gate.hold(f"{request.client_id}: {api_name(api_key)} (held by a fault rule)")
                if fault is not None and fault.delay_ms:
                    await asyncio.sleep(fault.delay_ms / 1000)
            except asyncio.CancelledError:   # the connection went (a broker killed) while held
                self._record_fault(f"{fault} (the connection closed before the answer)", api_key, request,
                                   client_host, None)
                raise
            if fault is not None and fault.drop == "before":
                self._record_fault(fault, api_key, request, client_host, None)
                raise _Dropped
            if api_key == _SHARE_FETCH:
                await self._share_long_poll(request.body)
            self._sync_clock()
            refused = self.release.refusal(api_key, request.body)
            if fault is not None and fault.error is not None:
                answer = error_response(request.body, fault.error, fault.error_message())
                self._record_fault(fault, api_key, request, client_host, answer)
            elif refused is not None:
                answer = error_response(request.body, *refused)
                self._record_fault(f"answered as Kafka {self.release.version}", api_key, request, client_host, answer)
            else:
                if self.record_broker_apis and self._recorder is not None and api_key in BROKER_APIS:
                    exchange = self._recorder.add(self._recorder.mark(), api_key=api_key, api_version=version,
                                                  client_id=request.client_id, client_host=client_host,
                                                  request=request.body, fault=_fault_text(fault))
                answer = self._route(api_key, request, client_host, broker_id, fault)
                if inspect.isawaitable(answer):
                    answer = await answer
                if api_key in (_SHARE_FETCH, _SHARE_ACKNOWLEDGE):
                    self._share_answered(api_key, request.body, answer)
        except _Dropped:
            raise
        except Exception:
            log.exception("api key %s v%s failed", api_key, version)
            answer = error_response(request.body, ErrorCode.unknown_server_error)
        if isinstance(answer, dict):
            answer = build(response_class(api_key, version), answer)
        if exchange is not None:
            exchange.response = answer  # None: a Produce with acks=0 has no answer
        if fault is not None and fault.drop == "after":
            raise _Dropped   # the request was served; its answer is lost with the connection
        if answer is None:
            return None
        return encode_response(correlation_id, answer)

    def _route(self, api_key: int, request: Any, client_host: str, broker_id: int = 0,
               fault: Fault | None = None) -> Any:
        broker_api = BROKER_APIS.get(api_key)
        if broker_api is not None:
            self.broker.receiving = broker_id
            return getattr(self.broker, broker_api[0])(request.body, request.api_version)
        if api_key in _CONFIG_APIS:  # GROUP resources to the coordinator, the others answered here
            def groups_part(sub: Any, field: str) -> list:
                if sub is None:
                    return []
                answer = self._coordinator(api_key, sub, request, client_host, broker_id, fault)
                return [to_data(x) for x in getattr(answer, field)]
            answer_with = self.configs.describe if api_key == 32 else self.configs.alter
            return answer_with(request.body, request.api_version, groups_part)
        return self._coordinator(api_key, request.body, request, client_host, broker_id, fault)

    def _write_txn_markers(self, body: Any) -> None:
        """The transaction coordinator's markers for `__consumer_offsets`, as Kafka's broker
        sends them to the group coordinator (recorded like any request)."""
        sender = RequestFrame(27, int(type(body).__version__), 0, "transaction-coordinator", body)
        answer = self._coordinator(27, body, sender, "/127.0.0.1", None)
        for marker in answer.markers:
            for t in marker.topics:
                for p in t.partitions:
                    if p.error_code != ErrorCode.none:
                        log.warning("WriteTxnMarkers for %s-%s: %s", t.name, p.partition_index, p.error_code)

    def _coordinator(self, api_key: int, body: Any, request: Any, client_host: str, broker_id: int | None = 0,
                     fault: Fault | None = None) -> Any:
        """`body` through `Coordinator.handle` as the coordinator on `broker_id` sees it (None: the
        whole cluster's, for inter-broker requests), recorded when recording."""
        mark = self._recorder.mark() if self._recorder is not None else None
        c = self.coordinator
        hosted, loading = c.hosted_partitions, c.loading_partitions
        if broker_id is not None and self.leadership.brokers > 1:
            # this broker leads only some partitions: the others' groups get NOT_COORDINATOR
            led = self.leadership.led_by(broker_id, _CONSUMER_OFFSETS, c.num_partitions)
            c.hosted_partitions, c.loading_partitions = hosted & led, loading & led
        try:
            answer = c.handle(body, client_id=request.client_id or "", client_host=client_host)
        finally:
            c.hosted_partitions, c.loading_partitions = hosted, loading
        exchange = None
        if mark is not None:
            exchange = self._recorder.add(mark, api_key=api_key, api_version=request.api_version,
                                          client_id=request.client_id, client_host=client_host, request=body,
                                          response=None if isinstance(answer, PendingResponse) else answer,
                                          fault=_fault_text(fault))
        if isinstance(answer, PendingResponse):
            return self._pending(answer, exchange)
        return answer

    async def _pending(self, pending: PendingResponse, exchange: Exchange | None) -> Any:
        """Wait for a JoinGroup/SyncGroup answer without holding the loop: other members'
        requests and the clock complete it."""
        if not pending.done:
            arrived = asyncio.get_running_loop().create_future()
            pending.add_done_callback(lambda _: arrived.done() or arrived.set_result(None))
            await arrived
        if exchange is not None:
            exchange.response = pending.response
        return pending.response


    # -- share long polls ----------------------------------------------------------------------
    # The share-partition code answers a ShareFetch at once (it has no purgatory), so a client
    # with nothing to fetch would ask again and again (thousands of times a second). Kafka
    # holds such a fetch until records may be there or MaxWaitMs passes; so does the server,
    # before handing the fetch to the coordinator, when nothing changed since this member's
    # last fetch came back empty. Fetches carrying acknowledgements, or opening or closing a
    # share session, go through at once.
    def _share_bump(self) -> None:
        self._share_generation += 1
        if self._share_changed is not None and not self._share_changed.done():
            self._share_changed.set_result(None)
        self._share_changed = None

    async def _share_long_poll(self, req: Any) -> None:
        idle_since = self._share_idle.get((req.group_id, req.member_id))
        if (idle_since != self._share_generation or req.share_session_epoch in (0, -1)
                or _has_acknowledgements(req)):
            return
        if self._share_changed is None:
            self._share_changed = asyncio.get_running_loop().create_future()
        try:
            await asyncio.wait_for(asyncio.shield(self._share_changed), ms(req.max_wait) / 1000)
        except asyncio.TimeoutError:
            pass

    def _share_answered(self, api_key: int, req: Any, answer: Any) -> None:
        key = (req.group_id, req.member_id)
        if _has_acknowledgements(req):
            self._share_bump()  # released or acknowledged records may let others progress
        acquired = any(p.acquired_records for t in getattr(answer, "responses", ()) for p in t.partitions
                       if hasattr(p, "acquired_records"))
        if api_key == _SHARE_FETCH and not acquired and getattr(answer, "error_code", 0) == ErrorCode.none:
            self._share_idle[key] = self._share_generation
        else:
            self._share_idle.pop(key, None)


def _is_coordinator_request(body: Any) -> bool:
    return int(type(body).__api_key__) not in BROKER_APIS


def _fault_text(fault: Fault | None) -> str | None:
    return None if fault is None else str(fault)


def _has_acknowledgements(req: Any) -> bool:
    return any(p.acknowledgement_batches for t in req.topics for p in t.partitions)


#: the wall clock once, then a monotonic clock from there: a real clock for the coordinator's
#: timers that a wall-clock step (NTP, a resumed VM) can neither jump forward, expiring every
#: session at once, nor hold back
_WALL_AT_START_MS = int(time.time() * 1000)
_MONOTONIC_AT_START_NS = time.monotonic_ns()


def _wall_ms() -> int:
    return _WALL_AT_START_MS + (time.monotonic_ns() - _MONOTONIC_AT_START_NS) // 1_000_000
