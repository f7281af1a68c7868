"""What `kgroup serve` keeps for notebooks: every exchange with the coordinator beside the
records it wrote, and a gate that holds coordinator requests so they can be stepped.

Both live on the server's loop; `Server.exchanges()`, `pause()`, `step()` and `resume()` are
the thread-safe doors to them.
"""
from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kgroup.protocol import api_name

logger = logging.getLogger("kgroup.serve")


@dataclass
class Exchange:
    """One request served by the coordinator (or one round of its timers: `api_key` None),
    its answer, and the log entries written meanwhile, by topic."""

    seq: int
    #: the coordinator's time when it was served
    at_ms: int
    api_key: int | None
    api_version: int | None
    client_id: str | None = None
    client_host: str | None = None
    request: Any = None
    #: the kio response; None while a JoinGroup/SyncGroup waits, and for timers
    response: Any = None
    #: topic (`__consumer_offsets`, `__share_group_state`) -> the entries written
    written: dict[str, list[Any]] = field(default_factory=dict)
    #: topic -> the log's length before this exchange (where its entries start): what a
    #: look-back (`Coordinator.as_of`) needs to show the state before and after it
    positions: dict[str, int] = field(default_factory=dict)
    #: soft state seen on the live coordinator right after the exchange, by observer name
    #: (`Server.observe`): what no log holds (a share-partition's acquisition locks)
    observed: dict[str, Any] = field(default_factory=dict)
    #: the fault that hit this exchange (a `kgroup.lab.Fault` rule, or a move of the coordinator
    #: or a broker stopped: then `api_key` is None), as text; None for none
    fault: str | None = None

    @property
    def start_position(self) -> int:
        """The `__consumer_offsets` position before this exchange."""
        return self.positions.get("__consumer_offsets", 0)

    @property
    def end_position(self) -> int:
        """The `__consumer_offsets` position after this exchange's records."""
        return self.start_position + len(self.written.get("__consumer_offsets", ()))

    @property
    def api(self) -> str:
        if self.api_key is None:
            return "fault" if self.fault is not None else "timers"
        return api_name(self.api_key)

    @property
    def records(self) -> list[Any]:
        """The `__consumer_offsets` records written (tombstones included), in log order."""
        return [e.record for e in self.written.get("__consumer_offsets", ()) if e.record is not None]

    def __repr__(self) -> str:
        n = sum(len(v) for v in self.written.values())
        who = f" from {self.client_id}" if self.client_id is not None else ""
        hit = f" [fault: {self.fault}]" if self.fault is not None else ""
        return (f"<#{self.seq} {self.api}{'' if self.api_version is None else f' v{self.api_version}'}{who}: "
                f"{n} entries{hit}>")


class Recorder:
    """The exchanges of one server, oldest first (at most `limit`, when given)."""

    def __init__(self, coordinator: Any, limit: int | None = None) -> None:
        self.coordinator = coordinator
        self.exchanges: deque[Exchange] = deque(maxlen=limit)
        #: name -> fn(exchange): run right after each exchange is kept; a result that is not
        #: None goes to `exchange.observed[name]`
        self.observers: dict[str, Callable[[Exchange], Any]] = {}
        self._seq = 0

    def _logs(self) -> dict[str, Any]:
        return {self.coordinator.log.topic: self.coordinator.log, **self.coordinator.logs}

    def mark(self) -> dict[str, int]:
        """Where every log ends now."""
        return {topic: len(log) for topic, log in self._logs().items()}

    def add(self, mark: dict[str, int], **fields: Any) -> Exchange | None:
        """An exchange holding what the logs gained since `mark`; timers writing nothing are
        not kept (a fault is, even when it wrote nothing)."""
        written = {}
        for topic, log in self._logs().items():
            start = mark.get(topic, 0)
            if len(log) > start:
                written[topic] = [log.entry_at(i) for i in range(start, len(log))]
        if fields.get("api_key") is None and not written and fields.get("fault") is None:
            return None
        self._seq += 1
        exchange = Exchange(self._seq, self.coordinator.now(), written=written, positions=dict(mark), **fields)
        self.exchanges.append(exchange)
        for name, observe in list(self.observers.items()):
            try:
                seen = observe(exchange)
            except Exception:  # an observer is a notebook's: it must not fail the request
                logger.exception("observer %r failed", name)
                continue
            if seen is not None:
                exchange.observed[name] = seen
        return exchange


class Gate:
    """Where held coordinator requests wait (`Server.pause`, or a `pause` fault rule); `step(n)`
    lets the next `n` through, `open()` all of them."""

    def __init__(self) -> None:
        self._passes = 0
        self._held: deque[tuple[asyncio.Future, str]] = deque()

    async def hold(self, what: str) -> None:
        """Wait here until `step` or `open` (a step given before the request came lets it pass)."""
        if self._passes:
            self._passes -= 1
            return
        turn = asyncio.get_running_loop().create_future()
        self._held.append((turn, what))
        await turn

    def held(self) -> list[str]:
        return [what for turn, what in self._held if not turn.done()]

    def step(self, n: int) -> None:
        for _ in range(n):
            while self._held and self._held[0][0].done():  # its connection went away
                self._held.popleft()
            if self._held:
                self._held.popleft()[0].set_result(None)
            else:
                self._passes += 1  # for the next request to come

    def open(self) -> None:
        self._passes = 0
        while self._held:
            turn, _ = self._held.popleft()
            if not turn.done():
                turn.set_result(None)
