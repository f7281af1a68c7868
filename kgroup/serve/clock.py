"""The coordinator's clock while serving: driven from the wall clock, stood still while a
notebook pauses the server.

The coordinator is sans-IO: its timers (session timeouts, rebalance delays, offsets expiration,
share acquisition locks) fire only when its clock moves. `ServerClock.sync()` moves it to the
wall clock, before every request and at every tick of the server's loop.
"""
from __future__ import annotations

import time
from typing import Any

from kgroup.serve.recording import Recorder
from kgroup.serve.share_polls import Wakeup


class ServerClock:
    """Keeps `coordinator`'s clock on the wall clock. Firing timers is recorded as a "timers"
    exchange (with a `recorder`); `share_state_written` is called when they wrote share state
    (acquisition locks expired: records to fetch again)."""

    def __init__(self, coordinator: Any, recorder: Recorder | None, share_state_written: Wakeup) -> None:
        self.coordinator = coordinator
        self.recorder = recorder
        self.share_state_written = share_state_written
        #: wall-clock time minus the coordinator's, while not standing still
        self._offset_ms = 0
        #: paused: `sync()` fires only what is due at the frozen time
        self._standing = False

    def start(self) -> None:
        """Jump to the wall clock without firing every timer on the way (a coordinator built
        with the default deterministic start is years behind); overdue timers fire once, at
        the first tick, as they would after a long pause."""
        now = _wall_ms()
        if now > self.coordinator.now():
            self.coordinator.clock.set(now)
        # a coordinator ahead of the wall clock (a log from the future) goes on from its time
        self._offset_ms = now - self.coordinator.now()

    def stand_still(self) -> None:
        self._standing = True

    def go_on(self) -> None:
        """After standing still: go on from where it stood."""
        self._offset_ms = _wall_ms() - self.coordinator.now()
        self._standing = False

    def sync(self, by_ms: int | None = None) -> None:
        """Bring the coordinator's clock to the wall clock (while standing still: fire only what
        is due at the frozen time, or move it by `by_ms` when a notebook says so)."""
        if by_ms is not None:
            behind = by_ms
        elif self._standing:
            behind = 0
        else:
            behind = _wall_ms() - self._offset_ms - self.coordinator.now()
        if behind > 0 or (behind == 0 and self._due()):
            mark = self.recorder.mark() if self.recorder is not None else None
            before = len(self.coordinator.share_state_log)
            self.coordinator.advance(behind)
            if len(self.coordinator.share_state_log) != before:  # e.g. acquisition locks expired
                self.share_state_written()
            if mark is not None:
                self.recorder.add(mark, api_key=None, api_version=None)

    def wait_ms(self, at_most: int) -> int:
        """How long until the next timer is due (at least 1 ms, at most `at_most`)."""
        deadline = self.coordinator.timers.next_deadline()
        if deadline is None:
            return at_most
        return min(at_most, max(1, deadline - self.coordinator.now()))

    def _due(self) -> bool:
        deadline = self.coordinator.timers.next_deadline()
        return deadline is not None and deadline <= self.coordinator.now()


#: the wall clock once, then a monotonic clock from there: a real clock for the coordinator's
#: timers that a wall-clock step (NTP, a resumed VM) can neither jump forward, expiring every
#: session at once, nor hold back
_WALL_AT_START_MS = int(time.time() * 1000)
_MONOTONIC_AT_START_NS = time.monotonic_ns()


def _wall_ms() -> int:
    return _WALL_AT_START_MS + (time.monotonic_ns() - _MONOTONIC_AT_START_NS) // 1_000_000
