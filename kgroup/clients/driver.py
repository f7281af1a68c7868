"""Run simulated consumers against a coordinator over simulated time.

    sim = Simulation(coordinator, tick_ms=100)
    for i in range(5):
        sim.add(ClassicConsumer(coordinator, ConsumerConfig("g", ("orders",), client_id=f"c{i}")))
    sim.run(30_000)
    rolling_restart(sim, gap_ms=10_000, settle_ms=20_000)
    sim.summary()

Every tick the driver runs each consumer's heartbeat thread (`tick`), each poll loop
whose processing time has elapsed (`poll`), scheduled actions (restarts, crashes),
then advances the coordinator's clock, which fires its timers. It samples who owns
which partition at every tick, which is what the charts and counts are made of.
"""
from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

TP = tuple[str, int]


@dataclass(order=True)
class _Action:
    time: int
    seq: int
    label: str = field(compare=False)
    fn: Callable[[], None] = field(compare=False)


class Simulation:
    """Consumers + a coordinator + a clock. `processing_ms` is how long one poll's batch
    takes to process (the poll loop's period); `tick_ms` is the sampling resolution."""

    def __init__(self, coordinator: Any, consumers: Iterable[Any] = (), *, tick_ms: int = 100,
                 processing_ms: int = 100) -> None:
        self.c = coordinator
        self.tick_ms = tick_ms
        self.processing_ms = processing_ms
        self.consumers: list[Any] = []
        self.start = coordinator.now()
        self._actions: list[_Action] = []
        self._seq = itertools.count()
        self._next_poll: dict[str, int] = {}
        self.samples: list[tuple[int, str, frozenset, int, str]] = []  # (t, consumer, owned, generation, state)
        self.group_samples: list[tuple[int, str, str, int]] = []       # (t, group, state, generation)
        self.actions_log: list[tuple[int, str]] = []
        self._baseline: dict[str, int] = {}
        for consumer in consumers:
            self.add(consumer)

    def add(self, consumer: Any) -> Any:
        self.consumers.append(consumer)
        self._next_poll[consumer.name] = self.c.now()
        return consumer

    def consumer(self, name: str) -> Any:
        return next(c for c in self.consumers if c.name == name)

    @property
    def elapsed(self) -> int:
        return self.c.now() - self.start

    def at(self, elapsed_ms: int, label: str, fn: Callable[[], None]) -> None:
        """Run `fn` when the simulation has run `elapsed_ms` (from its start)."""
        heapq.heappush(self._actions, _Action(self.start + elapsed_ms, next(self._seq), label, fn))

    def run(self, ms: int, *, progress: bool = False) -> None:
        """Run for `ms` of simulated time."""
        end = self.c.now() + ms
        steps = range(0, ms, self.tick_ms)
        if progress:
            from tqdm.auto import tqdm
            steps = tqdm(steps, desc="simulating", unit="tick", leave=False)
        for _ in steps:
            if self.c.now() >= end:
                break
            self._step()

    def run_until_stable(self, group_id: str, timeout_ms: int = 600_000) -> int:
        """Run until the group is Stable and every running consumer owns its assignment; returns ms taken."""
        t0 = self.c.now()
        while self.c.now() - t0 < timeout_ms:
            self._step()
            g = self.c.groups.get(group_id)
            if (g is not None and g.state == "Stable"
                    and all(not k.rejoin_needed and str(k.state) == "stable" for k in self.consumers if k.running)):
                return self.c.now() - t0
        raise TimeoutError(f"group {group_id} did not stabilise within {timeout_ms} ms")

    def _step(self) -> None:
        now = self.c.now()
        while self._actions and self._actions[0].time <= now:
            action = heapq.heappop(self._actions)
            self.actions_log.append((now - self.start, action.label))
            action.fn()
        for k in self.consumers:
            k.tick()
            if k.running and now >= self._next_poll[k.name]:
                k.poll()
                self._next_poll[k.name] = now + self.processing_ms
            elif not k.running:
                self._next_poll[k.name] = now
        self._sample(now)
        self.c.advance(self.tick_ms)

    def _sample(self, now: int) -> None:
        for k in self.consumers:
            self.samples.append((now - self.start, k.name, frozenset(k.owned) if k.running else frozenset(),
                                 k.generation, str(k.state)))
        for gid in sorted({k.config.group_id for k in self.consumers}):
            g = self.c.groups.get(gid)
            if g is not None:
                self.group_samples.append((now - self.start, gid, g.state, g.generation_id))

    # -- measurements ---------------------------------------------------------------------------
    def partitions(self) -> list[TP]:
        topics = sorted({t for k in self.consumers for t in k.config.topics})
        return [(t, p) for t in topics if t in self.c.cluster for p in range(self.c.cluster.partitions(t))]

    def unowned_partition_ms(self) -> int:
        """Partition-milliseconds during which no running consumer owned the partition."""
        all_tps = set(self.partitions())
        total = 0
        for t, rows in itertools.groupby(self.samples, key=lambda s: s[0]):
            owned = set().union(*(s[2] for s in rows))
            total += len(all_tps - owned) * self.tick_ms
        return total

    def double_owned_samples(self) -> int:
        """Ticks at which some partition was owned by two running consumers (should be 0)."""
        bad = 0
        for t, rows in itertools.groupby(self.samples, key=lambda s: s[0]):
            seen: set = set()
            for s in rows:
                if seen & s[2]:
                    bad += 1
                seen |= s[2]
        return bad

    def generations(self, group_id: str) -> list[tuple[int, int]]:
        """(elapsed ms, generation) whenever the group's generation changed."""
        out, last = [], None
        for t, gid, _, gen in self.group_samples:
            if gid == group_id and gen != last:
                out.append((t, gen))
                last = gen
        return out

    def reset_measurements(self) -> None:
        """Forget the samples so far and count rebalances from now (e.g. after the group formed)."""
        self.samples.clear()
        self.group_samples.clear()
        self._baseline = {gid: getattr(g, "rebalances", 0) for gid, g in self.c.groups.items()}

    def rebalances(self, group_id: str) -> int:
        """Rebalances the group started since the simulation began (or `reset_measurements`)."""
        g = self.c.groups.get(group_id)
        return (g.rebalances if g is not None else 0) - self._baseline.get(group_id, 0)

    def ownership_intervals(self) -> list[dict]:
        """Rows (consumer, topic, partition, start, end, generation): who owned what when."""
        open_: dict[tuple[str, TP], tuple[int, int]] = {}
        rows = []
        last_t = 0
        for t, name, owned, gen, _ in self.samples:
            last_t = t
            for key in [k for k in open_ if k[0] == name and k[1] not in owned]:
                start, g = open_.pop(key)
                rows.append({"consumer": name, "topic": key[1][0], "partition": key[1][1], "start": start,
                             "end": t, "generation": g})
            for tp in owned:
                open_.setdefault((name, tp), (t, gen))
        for (name, tp), (start, g) in open_.items():
            rows.append({"consumer": name, "topic": tp[0], "partition": tp[1], "start": start,
                         "end": last_t + self.tick_ms, "generation": g})
        return sorted(rows, key=lambda r: (r["topic"], r["partition"], r["start"]))

    def summary(self, group_id: str | None = None) -> dict:
        gid = group_id or self.consumers[0].config.group_id
        return {"rebalances": self.rebalances(gid), "generation": self.c.groups[gid].generation_id,
                "unowned_partition_s": self.unowned_partition_ms() / 1000,
                "double_owned_ticks": self.double_owned_samples(),
                "elapsed_s": self.elapsed / 1000}


def rolling_restart(sim: Simulation, *, gap_ms: int, settle_ms: int, start_after_ms: int = 0,
                    names: list[str] | None = None) -> int:
    """Schedule a rolling restart: each consumer in turn is closed, restarted `gap_ms`
    later, and the next one goes `settle_ms` after that. Returns when the last restart ends."""
    t = sim.elapsed + start_after_ms
    for name in names or [k.name for k in sim.consumers]:
        consumer = sim.consumer(name)
        sim.at(t, f"stop {name}", consumer.close)
        sim.at(t + gap_ms, f"start {name}", consumer.start)
        t += gap_ms + settle_ms
    return t
