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
    `record_broker_apis`: keep the broker APIs' exchanges too (Produce, Fetch, Metadata, ...)."""

    def __init__(self, coordinator: Any, host: str = "127.0.0.1", port: int = 0, *,
                 auto_create_topics: bool = True, tick_ms: int = 100,
                 max_request_bytes: int = MAX_REQUEST_BYTES, record: bool | int = False,
                 record_broker_apis: bool = False) -> None:
        self.coordinator = coordinator
        self.host, self.port = host, port
        self.tick_ms = tick_ms
        self.record_broker_apis = record_broker_apis
        self.max_request_bytes = max_request_bytes
        self.broker = Broker(coordinator, host, port, auto_create_topics=auto_create_topics)
        self.api_versions = _served_apis()
        self.broker.served = self.api_versions
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
        """"host:port" for a client's bootstrap.servers."""
        return f"{self.host}:{self.port}"

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

    def pause(self, group: str | None = None) -> None:
        """Hold every coordinator request (broker APIs still flow), or with `group` only the
        requests naming that group, and stop the coordinator's clock (for every group: there
        is one clock), so that no session times out while a notebook looks."""
        def pause() -> None:
            if self._gate.paused and self._gate.group != group:
                raise RuntimeError(f"already paused for {self._gate.group or 'every group'}: resume() first")
            self._gate.paused, self._gate.group = True, group
        self.call(pause)

    def step(self, n: int = 1) -> None:
        """While paused: let the next `n` held (or coming) coordinator requests through."""
        self.call(self._gate.step, n)

    def held(self) -> list[str]:
        """While paused: the coordinator requests waiting, as "client id: API"."""
        return self.call(self._gate.held)

    def resume(self) -> None:
        """Serve everything again; the clock goes on from where it stood."""
        def resume() -> None:
            self._offset_ms = _wall_ms() - self.coordinator.now()
            self._gate.open()
        self.call(resume)

    def advance(self, ms: int) -> None:
        """While paused: move the coordinator's clock by `ms`, firing its timers (sessions,
        rebalance timeouts, delays), recorded as a "timers" exchange."""
        if not self._gate.paused:
            raise RuntimeError("advance() moves a paused server's clock; a running one follows the wall clock")
        self.call(self._sync_clock, ms)

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
        listener = await asyncio.start_server(self._connection, self.host, self.port)
        self.port = listener.sockets[0].getsockname()[1]
        self.broker.port = self.port
        self._start_clock()
        ticker = asyncio.create_task(self._tick())
        self._ready.set()
        try:
            await self._stopping
        finally:
            listener.close()
            ticker.cancel()
            for task in list(self._connections):
                task.cancel()
            await asyncio.gather(ticker, *self._connections, return_exceptions=True)
            await listener.wait_closed()

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
        elif self._gate.paused:
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
    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        self._connections.add(task)
        peer = writer.get_extra_info("peername")
        client_host = "/" + (peer[0] if peer else "unknown")
        try:
            while True:
                size = frame_size(await reader.readexactly(4), self.max_request_bytes)
                answer = await self._serve(await reader.readexactly(size), client_host)
                if answer is not None:
                    writer.write(answer)
                    await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass  # the client went away
        except FrameError as exc:
            log.info("closing the connection from %s: %s", client_host, exc)
        except asyncio.CancelledError:
            pass  # the server stops
        except Exception:
            log.exception("closing the connection from %s", client_host)
        finally:
            self._connections.discard(task)
            writer.close()

    async def _serve(self, frame: bytes, client_host: str) -> bytes | None:
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
        try:
            if api_key not in BROKER_APIS:
                await self._gate.through(f"{request.client_id}: {api_name(api_key)}", _group_of(request.body))
            if api_key == _SHARE_FETCH:
                await self._share_long_poll(request.body)
            self._sync_clock()
            if self.record_broker_apis and self._recorder is not None and api_key in BROKER_APIS:
                exchange = self._recorder.add(self._recorder.mark(), api_key=api_key, api_version=version,
                                              client_id=request.client_id, client_host=client_host,
                                              request=request.body)
            answer = self._route(api_key, request, client_host)
            if inspect.isawaitable(answer):
                answer = await answer
            if api_key in (_SHARE_FETCH, _SHARE_ACKNOWLEDGE):
                self._share_answered(api_key, request.body, answer)
        except Exception:
            log.exception("api key %s v%s failed", api_key, version)
            answer = error_response(request.body, ErrorCode.unknown_server_error)
        if isinstance(answer, dict):
            answer = build(response_class(api_key, version), answer)
        if exchange is not None:
            exchange.response = answer  # None: a Produce with acks=0 has no answer
        if answer is None:
            return None
        return encode_response(correlation_id, answer)

    def _route(self, api_key: int, request: Any, client_host: str) -> Any:
        broker_api = BROKER_APIS.get(api_key)
        if broker_api is not None:
            return getattr(self.broker, broker_api[0])(request.body, request.api_version)
        if api_key in _CONFIG_APIS:  # GROUP resources to the coordinator, the others answered here
            def groups_part(sub: Any, field: str) -> list:
                if sub is None:
                    return []
                return [to_data(x) for x in getattr(self._coordinator(api_key, sub, request, client_host), field)]
            answer_with = self.configs.describe if api_key == 32 else self.configs.alter
            return answer_with(request.body, request.api_version, groups_part)
        return self._coordinator(api_key, request.body, request, client_host)

    def _write_txn_markers(self, body: Any) -> None:
        """The transaction coordinator's markers for `__consumer_offsets`, as Kafka's broker
        sends them to the group coordinator (recorded like any request)."""
        sender = RequestFrame(27, int(type(body).__version__), 0, "transaction-coordinator", body)
        answer = self._coordinator(27, body, sender, "/127.0.0.1")
        for marker in answer.markers:
            for t in marker.topics:
                for p in t.partitions:
                    if p.error_code != ErrorCode.none:
                        log.warning("WriteTxnMarkers for %s-%s: %s", t.name, p.partition_index, p.error_code)

    def _coordinator(self, api_key: int, body: Any, request: Any, client_host: str) -> Any:
        """`body` through `Coordinator.handle`, recorded when recording."""
        mark = self._recorder.mark() if self._recorder is not None else None
        answer = self.coordinator.handle(body, client_id=request.client_id or "", client_host=client_host)
        exchange = None
        if mark is not None:
            exchange = self._recorder.add(mark, api_key=api_key, api_version=request.api_version,
                                          client_id=request.client_id, client_host=client_host, request=body,
                                          response=None if isinstance(answer, PendingResponse) else answer)
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


def _group_of(body: Any) -> str | None:
    """The group a coordinator request names (OffsetFetch v8+: the first of its groups)."""
    group = getattr(body, "group_id", None)
    if group is None and getattr(body, "groups", None):
        group = getattr(body.groups[0], "group_id", None)
    return group


def _has_acknowledgements(req: Any) -> bool:
    return any(p.acknowledgement_batches for t in req.topics for p in t.partitions)


#: the wall clock once, then a monotonic clock from there: a real clock for the coordinator's
#: timers that a wall-clock step (NTP, a resumed VM) can neither jump forward, expiring every
#: session at once, nor hold back
_WALL_AT_START_MS = int(time.time() * 1000)
_MONOTONIC_AT_START_NS = time.monotonic_ns()


def _wall_ms() -> int:
    return _WALL_AT_START_MS + (time.monotonic_ns() - _MONOTONIC_AT_START_NS) // 1_000_000
