"""What the application of a simulated member sees: `RebalanceEvent`s (a rebalance listener
callback, an error), and how every member reports them."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

TP = tuple[str, int]


@dataclass
class RebalanceEvent:
    """Something the application saw (a rebalance listener callback, an error)."""

    time: int
    consumer: str
    kind: str            # "revoked" | "assigned" | "lost" | "joined" | "rejoin" | "error" | "fenced" | "left"
    partitions: tuple[TP, ...] = ()
    generation: int = -1
    detail: str = ""


class EventSource:
    """A member that reports `RebalanceEvent`s: kept in `events`, handed to `on_event`.

    The member has `c` (the coordinator, for the time), `name`, `generation` (the generation
    or member epoch the event is stamped with), `events` and `on_event`."""

    c: Any
    name: str
    generation: int
    events: list[RebalanceEvent]
    on_event: Callable[[RebalanceEvent], None] | None

    def _emit(self, kind: str, partitions=(), *, detail: str = "") -> None:
        ev = RebalanceEvent(self.c.now(), self.name, kind, tuple(partitions), self.generation, detail)
        self.events.append(ev)
        if self.on_event is not None:
            self.on_event(ev)


__all__ = ["RebalanceEvent", "EventSource"]
