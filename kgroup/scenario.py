"""Scripted scenarios: named steps run against a coordinator, remembered by log position.

    s = Scenario(Coordinator(...))
    s.step("A commits", request("OffsetCommit", 9, ...))
    s.step("an hour passes", advance_ms=3_600_000)
    s.state_after(0)        # the coordinator as of the end of step 0 (look-back, no re-run)

Widgets step through a scenario forwards and backwards with `Coordinator.as_of`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kgroup.coordinator import Coordinator


@dataclass(frozen=True)
class Step:
    index: int
    label: str
    request: Any
    response: Any
    start_position: int  # log position before the step
    end_position: int    # log position after the step
    time_ms: int         # clock after the step


class Scenario:
    """A list of steps already run on `coordinator`."""

    def __init__(self, coordinator: Coordinator) -> None:
        self.coordinator = coordinator
        self.steps: list[Step] = []

    def step(self, label: str, request: Any = None, *, advance_ms: int = 0) -> Step:
        """Send `request` (if any), then advance the clock by `advance_ms` (firing timers)."""
        c = self.coordinator
        start = c.position
        response = c.handle(request) if request is not None else None
        if advance_ms:
            c.advance(advance_ms)
        s = Step(len(self.steps), label, request, response, start, c.position, c.now())
        self.steps.append(s)
        return s

    def entries(self, index: int) -> list[Any]:
        """The log entries step `index` wrote."""
        s = self.steps[index]
        return [self.coordinator.log.entry_at(i) for i in range(s.start_position, s.end_position)]

    def state_after(self, index: int) -> Coordinator:
        """The coordinator as it was at the end of step `index` (replayed, read-only)."""
        return self.coordinator.as_of(self.steps[index].end_position)

    def __len__(self) -> int:
        return len(self.steps)
