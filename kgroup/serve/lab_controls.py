"""The failure lab's controls of a server (`kgroup.lab`): fault rules, moving the coordinator,
killing and restarting brokers, and waiting on a group instead of on sleeps.

A `__consumer_offsets` partition that changes leader is unloaded by the coordinator and loaded
again from the log for its new leader (COORDINATOR_LOAD_IN_PROGRESS meanwhile, for `load_ms`);
a data partition that changes leader is told to the coordinator (share-partitions' in-flight
state stays with the old leader). `Server.add_fault()`, `move_coordinator()`, `kill_broker()`,
... are these, called from any thread: each hops to the server's loop.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import time
from collections.abc import Callable
from typing import Any

from kgroup.lab import Fault, Leadership, Move, holds, parse_fault, view
from kgroup.serve.controls import OnLoop
from kgroup.serve.recording import Recorder

_CONSUMER_OFFSETS = "__consumer_offsets"

#: closes a broker's port and cuts its connections, on the loop (`Server._stop_listening`)
StopListening = Callable[[int], None]
#: binds a broker's port again on the loop; the future is done once bound (`Server._listen_again`)
ListenAgain = Callable[[int], concurrent.futures.Future]
#: the server's loop while it serves, None otherwise (`Server` provides it): loads wait on it
ServerLoop = Callable[[], asyncio.AbstractEventLoop | None]


class LabControls:
    """Faults and leadership for one server's `coordinator`: `faults` (the rules, in order),
    `leadership` (shared with the broker side), `load_ms`; `recorder` (None: not recording) gets
    a "fault" exchange for each move or broker stopped. The public methods are `Server`'s of
    the same names (documented there)."""

    def __init__(self, coordinator: Any, leadership: Leadership, faults: list[Fault], load_ms: int,
                 recorder: Recorder | None, *, call: OnLoop, loop: ServerLoop,
                 stop_listening: StopListening, listen_again: ListenAgain) -> None:
        self.coordinator = coordinator
        self.leadership = leadership
        self.faults = faults
        self.load_ms = load_ms
        self.recorder = recorder
        self._call = call
        self._loop = loop
        self._stop_listening = stop_listening
        self._listen_again = listen_again
        #: partition -> the move it is loading for (a newer move makes an older load moot)
        self._loads: dict[int, Move] = {}

    # -- fault rules ---------------------------------------------------------------------------
    def add_fault(self, fault: Fault | str) -> Fault:
        if isinstance(fault, str):
            fault = parse_fault(fault)
        self._call(self.faults.append, fault)
        return fault

    def remove_fault(self, fault: Fault) -> None:
        self._call(self.faults.remove, fault)

    def fault_for(self, api_key: int, version: int, broker_id: int, body: Any) -> Fault | None:
        """The first rule acting on this request (the later ones do not count it); every
        observing rule counts it."""
        acting = None
        for rule in self.faults:
            if rule.observe:
                rule.fire(api_key, version, broker_id, body)
            elif acting is None and rule.fire(api_key, version, broker_id, body):
                acting = rule
        return acting

    # -- leadership ------------------------------------------------------------------------------
    def move_coordinator(self, group_or_partition: str | int, broker_id: int) -> int:
        c = self.coordinator
        partition = (c.partition_for(group_or_partition) if isinstance(group_or_partition, str)
                     else int(group_or_partition))
        if not 0 <= partition < c.num_partitions:
            raise ValueError(f"__consumer_offsets has partitions 0..{c.num_partitions - 1}, not {partition}")

        def move() -> None:
            moved = self.leadership.move(_CONSUMER_OFFSETS, partition, broker_id)
            if moved is not None:
                self._event(f"coordinator moved: {_CONSUMER_OFFSETS}-{partition} from broker {moved.old} "
                            f"to broker {moved.new}")
                self._apply_moves([moved])
        self._call(move)
        return partition

    def kill_broker(self, broker_id: int) -> None:
        def kill() -> None:
            before = self._data_leaders()
            moves = self.leadership.kill(broker_id, {_CONSUMER_OFFSETS: self.coordinator.num_partitions,
                                                     **self._data_partitions()})
            self._stop_listening(broker_id)
            offsets = [m for m in moves if m.topic == _CONSUMER_OFFSETS]
            to = sorted({m.new for m in offsets})
            self._data_moved(before)   # (recorded after: observers see the broker gone)
            self._event(f"broker {broker_id} killed: its {len(offsets)} {_CONSUMER_OFFSETS} partition(s) "
                        + (f"moved to broker(s) {', '.join(map(str, to))}" if to != [-1] else "are offline"))
            self._apply_moves(moves)
        self._call(kill)

    def restart_broker(self, broker_id: int) -> None:
        def restart() -> concurrent.futures.Future:
            before = self._data_leaders()
            moves = self.leadership.restart(broker_id, {_CONSUMER_OFFSETS: self.coordinator.num_partitions})
            self._data_moved(before)
            self._event(f"broker {broker_id} restarted")
            self._apply_moves(moves)
            return self._listen_again(broker_id)
        bound = self._call(restart)
        bound.result(10)

    def _data_partitions(self) -> dict[str, int]:
        return {t.name: t.partitions for t in self.coordinator.cluster.topics()}

    def _data_leaders(self) -> dict[tuple[str, int], int]:
        return {(t, p): self.leadership.leader(t, p) for t, n in self._data_partitions().items() for p in range(n)}

    def _data_moved(self, before: dict[tuple[str, int], int]) -> None:
        """Tell the coordinator of each data partition whose leader changed (share-partitions'
        in-flight state stays with the old leader)."""
        for (topic, p), leader in before.items():
            if self.leadership.leader(topic, p) != leader:
                self.coordinator.partition_leader_changed(topic, p)

    def _apply_moves(self, moves: list[Move]) -> None:
        """Unload each `__consumer_offsets` partition that changed leader, and load it for its new
        one (after `load_ms`); offline partitions stay unloaded."""
        c = self.coordinator
        for m in moves:
            if m.topic != _CONSUMER_OFFSETS:
                continue
            if m.partition in c.hosted_partitions or m.partition in c.loading_partitions:
                c.unload(m.partition)
            self._loads.pop(m.partition, None)
            if m.new < 0:
                continue
            c.loading_partitions.add(m.partition)
            self._loads[m.partition] = m
            loop = self._loop()
            if self.load_ms > 0 and loop is not None:
                loop.call_later(self.load_ms / 1000, self._finish_load, m)
            else:
                self._finish_load(m)

    def _finish_load(self, move: Move) -> None:
        if self._loads.get(move.partition) is not move:
            return   # moved again meanwhile
        del self._loads[move.partition]
        groups = self.coordinator.load_partition(move.partition)
        if groups:   # a partition without groups loads unseen
            self._event(f"{_CONSUMER_OFFSETS}-{move.partition} loaded on broker {move.new}: "
                        f"group(s) {', '.join(sorted(groups))}")

    def _event(self, text: str) -> None:
        if self.recorder is not None:
            self.recorder.add(self.recorder.mark(), api_key=None, api_version=None, fault=text)

    # -- waiting ---------------------------------------------------------------------------------
    def wait_group(self, group_id: str, state: str | None = None, members: int | None = None,
                   timeout: float = 30.0, *, epoch_at_least: int | None = None) -> Any:
        deadline = time.monotonic() + timeout
        while True:
            now = self._call(view, self.coordinator, group_id)
            if holds(now, state=state, members=members, epoch_at_least=epoch_at_least):
                return now
            if time.monotonic() >= deadline:
                wanted = ", ".join(f"{k}={v}" for k, v in (("state", state), ("members", members),
                                                          ("epoch_at_least", epoch_at_least)) if v is not None)
                seen = ("no such group" if now is None else
                        f"{now.state} with {len(now.members)} member(s) at epoch {now.epoch}")
                raise TimeoutError(f"group {group_id!r} did not reach {wanted or 'existence'} in {timeout:g} s: {seen}")
            time.sleep(0.02)
