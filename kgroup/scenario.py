"""Scripted scenarios: named steps run against a coordinator, remembered by log position.

    s = Scenario(Coordinator(...))
    s.step("A commits", request("OffsetCommit", 9, ...))
    s.step("an hour passes", advance_ms=3_600_000)
    s.state_after(0)        # the coordinator as of the end of step 0 (look-back, no re-run)

Widgets step through a scenario forwards and backwards with `Coordinator.as_of`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kgroup.coordinator import Coordinator
from kgroup.runtime import PendingResponse


@dataclass(frozen=True)
class Step:
    index: int
    label: str
    request: Any
    response: Any
    start_position: int  # log position before the step
    end_position: int    # log position after the step
    time_ms: int         # clock after the step
    #: earlier steps whose waiting JoinGroup/SyncGroup answer this step completed
    answered: tuple[int, ...] = ()
    #: soft state seen on the live coordinator after the step (Kafka does not persist
    #: it, so look-back cannot rebuild it): classic members, waiting answers, timers
    observed: dict = field(default_factory=dict, compare=False)


class Scenario:
    """A list of steps already run on `coordinator`."""

    def __init__(self, coordinator: Coordinator) -> None:
        self.coordinator = coordinator
        self.steps: list[Step] = []
        self._waiting: dict[int, PendingResponse] = {}

    def step(self, label: str, request: Any = None, *, advance_ms: int = 0, client_id: str = "kgroup") -> Step:
        """Send `request` (if any, as client `client_id`), then advance the clock by
        `advance_ms` (firing timers)."""
        c = self.coordinator
        start = c.position
        response = c.handle(request, client_id=client_id) if request is not None else None
        if advance_ms:
            c.advance(advance_ms)
        index = len(self.steps)
        answered = []
        for i in sorted(self._waiting):
            if self._waiting[i].done:
                answered.append(i)
                del self._waiting[i]
        if isinstance(response, PendingResponse):
            if response.done:
                answered.append(index)
            else:
                self._waiting[index] = response
        s = Step(index, label, request, response, start, c.position, c.now(), tuple(answered), self._observe())
        self.steps.append(s)
        return s

    def _observe(self) -> dict:
        c = self.coordinator
        members = []
        for g in c.groups.values():
            describe = getattr(g, "describe_members", None)
            if describe is not None:
                members += [{"group": g.group_id, **row} for row in describe()]
        return {"groups": c.groups_table(), "members": members, "timers": c.timers.pending()}

    def response_of(self, index: int) -> Any:
        """Step `index`'s answer: the kio response, or None while it is still waiting."""
        r = self.steps[index].response
        if isinstance(r, PendingResponse):
            return r.response if r.done else None
        return r

    def entries(self, index: int) -> list[Any]:
        """The log entries step `index` wrote."""
        s = self.steps[index]
        return [self.coordinator.log.entry_at(i) for i in range(s.start_position, s.end_position)]

    def state_after(self, index: int) -> Coordinator:
        """The coordinator as it was at the end of step `index` (replayed, read-only)."""
        return self.coordinator.as_of(self.steps[index].end_position)

    def __len__(self) -> int:
        return len(self.steps)
