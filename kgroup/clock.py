"""Time for a sans-IO coordinator: nothing reads the wall clock."""
from __future__ import annotations

#: 2024-06-10T06:13:20Z: the fixed start of every deterministic run.
DEFAULT_START_MS = 1_718_000_000_000


class ManualClock:
    """A clock that moves only when told to. `Coordinator.advance` moves it and fires timers."""

    def __init__(self, start_ms: int = DEFAULT_START_MS) -> None:
        self._now = int(start_ms)

    def now_ms(self) -> int:
        return self._now

    def set(self, now_ms: int) -> None:
        if now_ms < self._now:
            raise ValueError(f"time cannot go backwards: {now_ms} < {self._now}")
        self._now = int(now_ms)

    def advance(self, ms: int) -> int:
        if ms < 0:
            raise ValueError(f"cannot advance by a negative duration ({ms} ms)")
        self._now += int(ms)
        return self._now

    def __repr__(self) -> str:
        return f"ManualClock(now_ms={self._now})"
