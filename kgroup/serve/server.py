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

`Server` keeps the loop, the connections and the routing of requests; its collaborators hold the
rest: `controls` (recording, pausing, stepping), `clock` (the coordinator's clock on the wall
clock), `share_polls` (ShareFetch long polls), `lab_controls` (fault rules, leadership moves).
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import logging
import threading
from collections.abc import Callable
from typing import Any

from kgroup.errors import ErrorCode
from kgroup.lab import Fault, Leadership
from kgroup.lab.releases import release
from kgroup.protocol import build, response_class, supported_versions, to_data
from kgroup.protocol.limits import error_response
from kgroup.runtime import HANDLERS, PendingResponse
from kgroup.serve.broker import BROKER_APIS, Broker
from kgroup.serve.clock import ServerClock
from kgroup.serve.configs import Configs
from kgroup.serve.controls import NotebookControls
from kgroup.serve.framing import (MAX_REQUEST_BYTES, FrameError, RequestFrame, decode_request, encode_response,
                                  frame_size, peek_header, request_class)
from kgroup.serve.lab_controls import LabControls
from kgroup.serve.recording import Exchange, Recorder
from kgroup.serve.share_polls import SHARE_ACKNOWLEDGE, SHARE_FETCH, SharePolls

log = logging.getLogger("kgroup.serve")

#: APIs the coordinator handles that only brokers and controllers send (Kafka checks
#: ClusterAction on them): WriteTxnMarkers and the share coordinator's state RPCs
_INTER_BROKER = frozenset({27, 83, 84, 85, 86, 87})
_API_VERSIONS = 18
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
        self._listeners: dict[int, asyncio.AbstractServer] = {}
        self._broker_connections: dict[int, set[asyncio.Task]] = {b: set() for b in range(brokers)}
        self.tick_ms = tick_ms
        self.record_broker_apis = record_broker_apis
        self.max_request_bytes = max_request_bytes
        self._share_polls = SharePolls()
        self.broker = Broker(coordinator, host, port, auto_create_topics=auto_create_topics,
                             leadership=self.leadership, ports=self.ports,
                             send_markers=self._write_txn_markers, on_data=self._share_polls.bump)
        self.release = release(kafka_version)
        self.api_versions = self.release.served(_served_apis())
        self.broker.served = self.api_versions
        self.broker.features = {k: v for k, v in self.release.features.items() if k in _FEATURES}
        self.configs = Configs(self.broker)
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
        self._clock = ServerClock(coordinator, self._recorder, share_state_written=self._share_polls.bump)
        self._controls = NotebookControls(self._recorder, self._clock, call=self.call)
        self._lab = LabControls(coordinator, self.leadership, list(faults), load_ms, self._recorder, call=self.call,
                                loop=lambda: self._loop, stop_listening=self._stop_listening,
                                listen_again=self._listen_again)

    @property
    def faults(self) -> list[Fault]:
        """The fault rules, applied in order (`add_fault`)."""
        return self._lab.faults

    @faults.setter
    def faults(self, rules: list[Fault]) -> None:
        self._lab.faults = rules

    @property
    def load_ms(self) -> int:
        """How long a coordinator taking a partition over loads it."""
        return self._lab.load_ms

    @load_ms.setter
    def load_ms(self, value: int) -> None:
        self._lab.load_ms = value

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
        return self._controls.exchanges()

    def observe(self, name: str, fn: Callable[[Exchange], Any] | None) -> None:
        """Run `fn(exchange)` on the loop right after every recorded exchange and keep what it
        returns (unless None) in `exchange.observed[name]`: soft state no log holds, seen
        live (a share-partition's locks). `fn=None` stops observing."""
        self._controls.observe(name, fn)

    def pause(self, group: str | None = None) -> Fault:
        """Hold every coordinator request (broker APIs still flow), or with `group` only the
        requests naming that group, and stop the coordinator's clock (for every group: there
        is one clock), so that no session times out while a notebook looks. It is a `pause`
        fault rule (returned: its `hits` are the requests it held) that also stops the clock."""
        return self._controls.pause(group)

    def step(self, n: int = 1) -> None:
        """While paused (or while a `pause` fault rule holds requests): let the next `n` held
        (or coming) coordinator requests through."""
        self._controls.step(n)

    def held(self) -> list[str]:
        """While paused: the coordinator requests waiting, as "client id: API"."""
        return self._controls.held()

    def resume(self) -> None:
        """Serve everything again (what a `pause` fault rule held too); a paused clock goes on
        from where it stood."""
        self._controls.resume()

    def advance(self, ms: int) -> None:
        """While paused: move the coordinator's clock by `ms`, firing its timers (sessions,
        rebalance timeouts, delays), recorded as a "timers" exchange."""
        self._controls.advance(ms)

    # -- the failure lab: faults, brokers, leadership -----------------------------------------
    def add_fault(self, fault: Fault | str) -> Fault:
        """Apply a fault rule from now on (`kgroup.lab.Fault`, or its text: `parse_fault`);
        returns it, to read its `hits` or `wait()` on it."""
        return self._lab.add_fault(fault)

    def remove_fault(self, fault: Fault) -> None:
        self._lab.remove_fault(fault)

    def move_coordinator(self, group_or_partition: str | int, broker_id: int) -> int:
        """Make `broker_id` lead the group's `__consumer_offsets` partition (or that partition):
        the coordinator unloads it (its waiting JoinGroup/SyncGroup answers get NOT_COORDINATOR)
        and loads it again from the log as the new leader, answering COORDINATOR_LOAD_IN_PROGRESS
        for `load_ms`. Returns the partition."""
        return self._lab.move_coordinator(group_or_partition, broker_id)

    def kill_broker(self, broker_id: int) -> None:
        """Stop broker `broker_id`: its port closes, its connections are cut, and the partitions it
        led move to the next live broker (the coordinator loads those it takes over)."""
        self._lab.kill_broker(broker_id)

    def restart_broker(self, broker_id: int) -> None:
        """Start broker `broker_id` again on its port; partitions left without a leader while it
        was down come back to it (loaded from the log); the others stay where they moved."""
        self._lab.restart_broker(broker_id)

    def wait_group(self, group_id: str, state: str | None = None, members: int | None = None,
                   timeout: float = 30.0, *, epoch_at_least: int | None = None) -> Any:
        """Wait until the group is in `state` with `members` members (and an epoch of at least
        `epoch_at_least`), each only when given; returns its `kgroup.lab.GroupView` then, or
        raises TimeoutError saying how it stood."""
        return self._lab.wait_group(group_id, state, members, timeout, epoch_at_least=epoch_at_least)

    # -- the loop ---------------------------------------------------------------------------
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
        self._clock.start()
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

    def _stop_listening(self, broker_id: int) -> None:
        """Close broker `broker_id`'s port and cut its connections (a broker killed)."""
        listener = self._listeners.pop(broker_id, None)
        if listener is not None:
            listener.close()
        for task in list(self._broker_connections[broker_id]):
            task.cancel()

    def _listen_again(self, broker_id: int) -> concurrent.futures.Future:
        """Bind broker `broker_id`'s port again (a broker restarted); done once bound."""
        return asyncio.run_coroutine_threadsafe(self._listen(broker_id), self._loop)

    async def _tick(self) -> None:
        """Fire the coordinator's timers when due (and at least every `tick_ms`)."""
        while True:
            try:
                self._clock.sync()
                self.broker.transactions.expire_timed_out()
            except Exception:
                log.exception("a coordinator timer failed")
            await asyncio.sleep(self._clock.wait_ms(self.tick_ms) / 1000)

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
            await self._controls.hold_if_paused(api_key, version, broker_id, request)
            fault = self._lab.fault_for(api_key, version, broker_id, request.body)
            try:
                if fault is not None and fault.pause:
                    await self._controls.hold_for_fault(api_key, request)
                if fault is not None and fault.delay_ms:
                    await asyncio.sleep(fault.delay_ms / 1000)
            except asyncio.CancelledError:   # the connection went (a broker killed) while held
                self._record_fault(f"{fault} (the connection closed before the answer)", api_key, request,
                                   client_host, None)
                raise
            if fault is not None and fault.drop == "before":
                self._record_fault(fault, api_key, request, client_host, None)
                raise _Dropped
            if api_key == SHARE_FETCH:
                await self._share_polls.wait(request.body)
            self._clock.sync()
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
                if api_key in (SHARE_FETCH, SHARE_ACKNOWLEDGE):
                    self._share_polls.answered(api_key, request.body, answer)
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

    def _record_fault(self, fault: Fault | str, api_key: int, request: Any, client_host: str, answer: Any) -> None:
        """A request the coordinator never saw (answered an error, or dropped first), recorded."""
        if self._recorder is not None and (api_key not in BROKER_APIS or self.record_broker_apis):
            self._recorder.add(self._recorder.mark(), api_key=api_key, api_version=request.api_version,
                               client_id=request.client_id, client_host=client_host, request=request.body,
                               response=answer, fault=str(fault))

    def _route(self, api_key: int, request: Any, client_host: str, broker_id: int = 0,
               fault: Fault | None = None) -> Any:
        broker_api = BROKER_APIS.get(api_key)
        if broker_api is not None:
            self.broker.receiving = broker_id
            return getattr(self.broker, broker_api[0])(request.body, request.api_version)
        if api_key in _CONFIG_APIS:  # GROUP resources to the coordinator, the others answered here
            def groups_part(sub: Any, field: str) -> list:   # a `configs.CoordinatorPart`
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


def _fault_text(fault: Fault | None) -> str | None:
    return None if fault is None else str(fault)
