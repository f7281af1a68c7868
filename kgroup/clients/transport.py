"""The seam between a simulated client and the coordinator: the network.

    transport = FaultyTransport(coordinator, seed=7, drop=0.05, duplicate=0.05, reorder=0.05)
    sim = Simulation(coordinator, transport=transport)      # every client added sends through it

`Transport` delivers each request at once and hands back the answer: what the clients did
before the seam existed. `FaultyTransport` injects what a real network does to Kafka's clients:

- **drop** — the request is served but its response is lost: the client sees a timeout
  (`RequestTimeout`, Kafka's `TimeoutException`/`DisconnectException` from `NetworkClient`)
  and reacts as Kafka's client does to a failed request (retry, with the epoch it had);
- **duplicate** — the request is served twice, back to back. The client reads the first
  answer that comes: the original's, except for a JoinGroup/SyncGroup whose pending answer the
  coordinator drops for the copy's (Kafka keeps one awaiting future per member); the other
  answer is in `late`, read by no one;
- **reorder** — the request is held and delivered later, after requests sent after it; its
  answer goes nowhere (the client timed out meanwhile). A random reorder keeps each client's
  own requests in order (one TCP connection per client, as Kafka's): the held request goes
  before that client's next one, other clients' requests overtake it. A scripted reorder may
  arrive after the same client's later requests (a request left on a connection the client
  gave up, served late);
- **delay** — every request of an API (e.g. heartbeats) from a client in a time window is held
  until the window ends, then delivered in order; the client sees timeouts meanwhile.

Faults come from a seeded RNG (probabilities) and/or a scripted plan (`plan(...)`), so a run
repeats exactly. Held requests are delivered by `pump()`, which `Simulation` calls every tick.
Soft state only: nothing here is in the coordinator's log.
"""
from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from kgroup.protocol import api_name
from kgroup.runtime import PendingResponse


class RequestTimeout(Exception):
    """The client got no answer: Kafka's client completes the request future with a
    `TimeoutException` (or `DisconnectException`) and treats it as retriable."""


def _api(req: Any) -> str:
    return api_name(type(req).__api_key__)


class Transport:
    """A perfect network: each request is served at once and its answer returned."""

    def __init__(self, coordinator: Any) -> None:
        self.c = coordinator

    def send(self, request: Any, *, client_id: str = "kgroup") -> Any:
        """Deliver `request`; return the coordinator's answer (raises `RequestTimeout` on a lost one)."""
        return self.c.handle(request, client_id=client_id)

    def pump(self) -> None:
        """Deliver the requests whose time has come (none on a perfect network)."""


@dataclass
class Fault:
    """One scripted fault: `kind` ("drop", "duplicate", "reorder", "delay") for requests of
    `api` (None: any) from `client_id` (None: any); `count` requests (None: unlimited) sent in
    [`start_ms`, `end_ms`), after letting the first `after` of them through. A reordered
    request is delivered `hold_ms` later; a delayed one at `end_ms`."""

    kind: str
    api: str | None = None
    client_id: str | None = None
    start_ms: int = 0
    end_ms: int | None = None
    count: int | None = 1
    hold_ms: int = 0
    after: int = 0

    def matches(self, api: str, client_id: str, now: int) -> bool:
        return ((self.api is None or self.api == api) and (self.client_id is None or self.client_id == client_id)
                and self.start_ms <= now and (self.end_ms is None or now < self.end_ms)
                and (self.count is None or self.count > 0))


@dataclass(order=True)
class _Held:
    due: int
    seq: int
    request: Any = field(compare=False)
    client_id: str = field(compare=False)
    fifo: bool = field(compare=False, default=False)   # delivered before its client's next request


class FaultyTransport(Transport):
    """A network that loses, duplicates, reorders and delays requests (see the module docstring).

    `drop`, `duplicate`, `reorder`: probabilities per request (seeded by `seed`) for the APIs in
    `apis` (None: all); `hold_ms`: how long a randomly reordered request is held. `faults`
    counts what was injected by kind; `late` lists (time, api, request, response) of held
    requests delivered late, whose answers no client read."""

    KINDS = ("drop", "duplicate", "reorder", "delay")

    def __init__(self, coordinator: Any, *, seed: int = 0, drop: float = 0.0, duplicate: float = 0.0,
                 reorder: float = 0.0, hold_ms: int = 1_000, apis: set[str] | None = None) -> None:
        super().__init__(coordinator)
        self.rng = random.Random(seed)
        self.p = {"drop": drop, "duplicate": duplicate, "reorder": reorder}
        self.hold_ms = hold_ms
        self.apis = apis
        self.script: list[Fault] = []
        self.held: list[_Held] = []
        self._seq = 0
        self.faults: Counter[str] = Counter()
        self.late: list[tuple[int, str, Any, Any]] = []
        self.sent: list[tuple[int, str, str, str]] = []   # (time, client, api, what happened)

    def plan(self, kind: str, api: str | None = None, *, client_id: str | None = None, start_ms: int | None = None,
             end_ms: int | None = None, count: int | None = 1, hold_ms: int = 0, after: int = 0) -> Fault:
        """Script a fault (times are the coordinator's clock; `start_ms` defaults to now)."""
        if kind not in self.KINDS:
            raise ValueError(f"a fault is one of {self.KINDS}, got {kind!r}")
        if kind == "delay" and end_ms is None:
            raise ValueError("a delay needs end_ms: when the held requests are delivered")
        fault = Fault(kind, api, client_id, self.c.now() if start_ms is None else start_ms, end_ms, count, hold_ms,
                      after)
        self.script.append(fault)
        return fault

    @property
    def injected(self) -> int:
        """Faults injected so far, all kinds."""
        return sum(self.faults.values())

    def _choose(self, api: str, client_id: str, now: int) -> tuple[str | None, int, bool]:
        for fault in self.script:
            if fault.matches(api, client_id, now):
                if fault.after > 0:
                    fault.after -= 1
                    continue
                if fault.count is not None:
                    fault.count -= 1
                due = fault.end_ms if fault.kind == "delay" else now + fault.hold_ms
                return fault.kind, due, False
        if self.apis is None or api in self.apis:
            for kind in ("drop", "duplicate", "reorder"):
                if self.p[kind] and self.rng.random() < self.p[kind]:
                    return kind, now + self.hold_ms, True
        return None, now, False

    def send(self, request: Any, *, client_id: str = "kgroup") -> Any:
        self.pump()
        mine = [h for h in self.held if h.fifo and h.client_id == client_id]
        for h in mine:                        # one connection per client: its held requests go first
            self.held.remove(h)
            self._deliver(h)
        now, api = self.c.now(), _api(request)
        kind, due, fifo = self._choose(api, client_id, now)
        self.sent.append((now, client_id, api, kind or "delivered"))
        if kind is None:
            return self.c.handle(request, client_id=client_id)
        self.faults[kind] += 1
        if kind in ("reorder", "delay"):
            self._seq += 1
            self.held.append(_Held(due, self._seq, request, client_id, fifo))
            self.held.sort()
            raise RequestTimeout(f"{api} from {client_id}: no answer ({kind})")
        response = self.c.handle(request, client_id=client_id)
        if kind == "drop":
            raise RequestTimeout(f"{api} from {client_id}: the response was lost")
        copy = self.c.handle(request, client_id=client_id)
        first, other = (copy, response) if isinstance(response, PendingResponse) else (response, copy)
        self.late.append((now, api, request, other))
        return first

    def pump(self) -> None:
        while self.held and self.held[0].due <= self.c.now():
            self._deliver(self.held.pop(0))

    def _deliver(self, h: _Held) -> None:
        self.late.append((self.c.now(), _api(h.request), h.request, self.c.handle(h.request, client_id=h.client_id)))

    def flush(self) -> None:
        """Deliver every held request now (the network heals)."""
        for h in self.held:
            h.due = self.c.now()
        self.pump()


__all__ = ["Transport", "FaultyTransport", "Fault", "RequestTimeout"]
