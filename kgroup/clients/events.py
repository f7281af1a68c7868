"""What the application of a simulated member sees: `RebalanceEvent`s (a rebalance listener
callback, an error), and how every member reports them."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kgroup.clients.transport import Transport

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

    def _attach(self, coordinator: Any, config: Any, name: str | None) -> None:
        """A consumer's identity and its way to the coordinator: `transport`, the network between
        them (`Simulation(transport=...)` swaps it), and a name (given, else its instance or client id)."""
        self.c = coordinator
        self.transport = Transport(coordinator)
        self.config = config
        self.name = name or config.group_instance_id or config.client_id

    def _emit(self, kind: str, partitions=(), *, detail: str = "") -> None:
        ev = RebalanceEvent(self.c.now(), self.name, kind, tuple(partitions), self.generation, detail)
        self.events.append(ev)
        if self.on_event is not None:
            self.on_event(ev)


__all__ = ["RebalanceEvent", "EventSource"]
