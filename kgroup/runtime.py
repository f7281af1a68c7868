"""The sans-IO runtime's small parts: handler results and timers."""
from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any


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

    response: Any = None
    records: Sequence[Any] = ()
    producer_id: int = -1
    producer_epoch: int = -1
    transactional: bool = False
    markers: Sequence[Marker] = ()


@dataclass(order=True)
class _Timer:
    deadline: int
    seq: int
    name: str = field(compare=False)
    callback: Callable[[], "Result | None"] = field(compare=False)
    cancelled: bool = field(default=False, compare=False)


class Timers:
    """Named timers (soft state: Kafka does not persist them either).

    Scheduling a name again replaces the earlier timer, as Kafka's timer keys do.
    """

    def __init__(self) -> None:
        self._heap: list[_Timer] = []
        self._by_name: dict[str, _Timer] = {}
        self._seq = itertools.count()

    def schedule(self, name: str, deadline: int, callback: Callable[[], "Result | None"]) -> None:
        self.cancel(name)
        timer = _Timer(deadline, next(self._seq), name, callback)
        self._by_name[name] = timer
        heapq.heappush(self._heap, timer)

    def cancel(self, name: str) -> None:
        timer = self._by_name.pop(name, None)
        if timer is not None:
            timer.cancelled = True

    def pop_due(self, now: int) -> _Timer | None:
        """The earliest timer due at or before `now`, removed; None if none is due."""
        while self._heap and self._heap[0].cancelled:
            heapq.heappop(self._heap)
        if self._heap and self._heap[0].deadline <= now:
            timer = heapq.heappop(self._heap)
            del self._by_name[timer.name]
            return timer
        return None

    def next_deadline(self) -> int | None:
        while self._heap and self._heap[0].cancelled:
            heapq.heappop(self._heap)
        return self._heap[0].deadline if self._heap else None

    def pending(self) -> dict[str, int]:
        """Timer name -> deadline, for display."""
        return {name: t.deadline for name, t in sorted(self._by_name.items(), key=lambda kv: kv[1].deadline)}

    def __contains__(self, name: str) -> bool:
        return name in self._by_name
