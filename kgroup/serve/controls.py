"""The notebook controls of a server: the exchanges recorded, observers, and pausing (holding
coordinator requests, stepping them through, the coordinator's clock stood still meanwhile).

`Server.exchanges()`, `observe()`, `pause()`, `step()`, `held()`, `resume()` and `advance()` are
these, called from any thread: each hops to the server's loop, where the state lives.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kgroup.lab import Fault
from kgroup.protocol import api_name
from kgroup.serve.broker import BROKER_APIS
from kgroup.serve.clock import ServerClock
from kgroup.serve.recording import Exchange, Gate, Recorder

#: runs `fn(*args)` on the server's loop thread and returns its result (`Server.call` provides it)
OnLoop = Callable[..., Any]


class NotebookControls:
    """Recording and stepping for one server: `recorder` (None: not recording), `clock` (stood
    still while paused), `call` (the hop to the loop). The public methods are `Server`'s of the
    same names (documented there)."""

    def __init__(self, recorder: Recorder | None, clock: ServerClock, call: OnLoop) -> None:
        self.recorder = recorder
        self.clock = clock
        self._call = call
        self.gate = Gate()
        #: `pause()`'s rule while paused (None otherwise): it holds, and the clock stands still
        self.pausing: Fault | None = None

    def exchanges(self) -> list[Exchange]:
        recorder = self._recording()
        return self._call(lambda: list(recorder.exchanges))

    def observe(self, name: str, fn: Callable[[Exchange], Any] | None) -> None:
        observers = self._recording().observers
        self._call(lambda: observers.pop(name, None) if fn is None else observers.__setitem__(name, fn))

    def pause(self, group: str | None = None) -> Fault:
        def pause() -> Fault:
            if self.pausing is not None:
                if self.pausing.group != group:
                    raise RuntimeError(f"already paused for {self.pausing.group or 'every group'}: resume() first")
                return self.pausing
            self.pausing = Fault(group=group, pause=True, when=_is_coordinator_request)
            self.clock.stand_still()
            return self.pausing
        return self._call(pause)

    def step(self, n: int = 1) -> None:
        self._call(self.gate.step, n)

    def held(self) -> list[str]:
        return self._call(self.gate.held)

    def resume(self) -> None:
        def resume() -> None:
            if self.pausing is not None:
                self.clock.go_on()
                self.pausing = None
            self.gate.open()
        self._call(resume)

    def advance(self, ms: int) -> None:
        if self.pausing is None:
            raise RuntimeError("advance() moves a paused server's clock; a running one follows the wall clock")
        self._call(self.clock.sync, ms)

    # -- on the loop, for each request ------------------------------------------------------
    async def hold_if_paused(self, api_key: int, version: int, broker_id: int, request: Any) -> None:
        """Hold a request `pause()` holds until it is stepped through or resumed."""
        pausing = self.pausing
        if pausing is not None and pausing.fire(api_key, version, broker_id, request.body):
            await self.gate.hold(f"{request.client_id}: {api_name(api_key)}")

    async def hold_for_fault(self, api_key: int, request: Any) -> None:
        """Hold a request a `pause` fault rule acts on, with the paused ones."""
        await self.gate.hold(f"{request.client_id}: {api_name(api_key)} (held by a fault rule)")

    def _recording(self) -> Recorder:
        if self.recorder is None:
            raise RuntimeError("this server does not record: Server(..., record=True)")
        return self.recorder


def _is_coordinator_request(body: Any) -> bool:
    return int(type(body).__api_key__) not in BROKER_APIS
