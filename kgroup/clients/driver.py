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

Classic consumers (`ClassicConsumer`) and KIP-848 consumers (`ConsumerGroupConsumer`) run
side by side, also in one group (KIP-848 online migration): for a consumer group the
"generation" is the group epoch and a rebalance is a bump of it. `observe(fn)` sees every
heartbeat exchange of a KIP-848 consumer and every batch of records the coordinator's
timers wrote (what the reconciliation widget steps through).
"""
from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from kgroup.clients.membership import HeartbeatExchange

TP = tuple[str, int]


def topics_of(consumer: Any) -> tuple[str, ...]:
    """The topics a consumer subscribes to (a pattern subscription: the topics it matches now)."""
    subscribed = getattr(consumer, "subscribed_topics", None)
    return tuple(subscribed()) if subscribed is not None else tuple(consumer.config.topics)


def group_generation(group: Any) -> int:
    """A classic group's generation, or a consumer group's group epoch."""
    generation = getattr(group, "generation_id", None)
    return generation if generation is not None else group.group_epoch


def _rebalance_counter(group: Any) -> int:
    """What counts rebalances on a group object: a classic group counts the rebalances it
    started; a consumer group's group epoch moves once per change that needs a new assignment."""
    count = getattr(group, "rebalances", None)
    return count if count is not None else group.group_epoch


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
                 processing_ms: int = 100, transport: Any = None) -> None:
        self.c = coordinator
        #: the network every consumer added sends through (None: each keeps its own, a perfect one);
        #: e.g. a `FaultyTransport`, whose held requests are delivered at the start of each tick
        self.transport = transport
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
        #: group id -> rebalances counted so far, and the group object / counter last seen
        self._rebalances: dict[str, int] = {}
        self._seen: dict[str, tuple[Any, int]] = {}
        self._observers: list[Callable[[HeartbeatExchange], None]] = []
        for consumer in consumers:
            self.add(consumer)

    def _give_transport(self, consumer: Any) -> None:
        if self.transport is not None:
            # A Streams thread sends through its application's transport.
            owner = getattr(consumer, "app", consumer)
            owner.transport = self.transport

    def add(self, consumer: Any) -> Any:
        self._give_transport(consumer)
        threads = getattr(consumer, "threads", None)
        if threads is not None and not hasattr(consumer, "tick"):
            # A Kafka Streams instance (`StreamsApplication`): its stream threads are the members.
            for thread in threads:
                self.add(thread)
            return consumer
        self.consumers.append(consumer)
        self._next_poll[consumer.name] = self.c.now()
        listeners = getattr(consumer, "heartbeat_listeners", None)
        if listeners is not None and self._on_exchange not in listeners:
            listeners.append(self._on_exchange)
        return consumer

    def replace(self, name: str, consumer: Any) -> Any:
        """Put `consumer` in the place of the consumer called `name` (closed first if running),
        e.g. a classic consumer restarted as a KIP-848 one; samples keep the name."""
        i = next(i for i, k in enumerate(self.consumers) if k.name == name)
        old = self.consumers[i]
        if old.running:
            old.close()
        listeners = getattr(old, "heartbeat_listeners", None)
        if listeners is not None and self._on_exchange in listeners:
            listeners.remove(self._on_exchange)
        self._give_transport(consumer)
        self.consumers[i] = consumer
        self._next_poll.pop(name, None)
        self._next_poll[consumer.name] = self.c.now()
        listeners = getattr(consumer, "heartbeat_listeners", None)
        if listeners is not None and self._on_exchange not in listeners:
            listeners.append(self._on_exchange)
        return consumer

    def observe(self, fn: Callable[[HeartbeatExchange], None]) -> None:
        """Call `fn` with every heartbeat exchange (KIP-848 consumers), every batch of records
        the coordinator's timers write (`kind="timer"`) and every batch a classic consumer's
        requests wrote (`kind="classic"`)."""
        self._observers.append(fn)

    def _on_exchange(self, exchange: HeartbeatExchange) -> None:
        for fn in list(self._observers):
            fn(exchange)

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

    def step(self) -> None:
        """One tick: actions due, heartbeat threads, poll loops, a sample, then the clock moves."""
        self._step()

    def run_until(self, predicate: Callable[[], bool], timeout_ms: int = 600_000) -> int:
        """Tick until `predicate()` holds (checked after each tick); returns ms taken."""
        t0 = self.c.now()
        while self.c.now() - t0 < timeout_ms:
            self._step()
            if predicate():
                return self.c.now() - t0
        raise TimeoutError(f"the condition did not hold within {timeout_ms} ms")

    def run_until_stable(self, group_id: str, timeout_ms: int = 600_000) -> int:
        """Run until the group is Stable and every running consumer owns its assignment; returns ms taken.
        (A Streams thread that is `unsettled`, e.g. told the group is not ready, is not done yet.)"""
        t0 = self.c.now()
        while self.c.now() - t0 < timeout_ms:
            self._step()
            g = self.c.groups.get(group_id)
            if (g is not None and g.state == "Stable"
                    and all(not k.rejoin_needed and str(k.state) == "stable" and not getattr(k, "unsettled", False)
                            for k in self.consumers if k.running)):
                return self.c.now() - t0
        raise TimeoutError(f"group {group_id} did not stabilise within {timeout_ms} ms")

    def _step(self) -> None:
        if self.transport is not None:
            self.transport.pump()
        now = self.c.now()
        while self._actions and self._actions[0].time <= now:
            action = heapq.heappop(self._actions)
            self.actions_log.append((now - self.start, action.label))
            action.fn()
        for k in self.consumers:
            before = self.c.position
            k.tick()
            if k.running and now >= self._next_poll[k.name]:
                k.poll()
                self._next_poll[k.name] = now + self.processing_ms
            elif not k.running:
                self._next_poll[k.name] = now
            if self._observers and self.c.position > before and not hasattr(k, "heartbeat_listeners"):
                # A classic member's JoinGroup/SyncGroup/Heartbeat/commit wrote records.
                self._on_exchange(HeartbeatExchange(now, k.name, None, None, before, self.c.position, kind="classic"))
        self._sample(now)
        before = self.c.position
        self.c.advance(self.tick_ms)
        if self._observers and self.c.position > before:
            self._on_exchange(HeartbeatExchange(self.c.now(), None, None, None, before, self.c.position, kind="timer"))

    def _sample(self, now: int) -> None:
        for k in self.consumers:
            self.samples.append((now - self.start, k.name, frozenset(k.owned) if k.running else frozenset(),
                                 k.generation, str(k.state)))
        for gid in sorted({k.config.group_id for k in self.consumers}):
            g = self.c.groups.get(gid)
            if g is not None:
                self._count_rebalances(gid, g)
                self.group_samples.append((now - self.start, gid, g.state, group_generation(g)))

    def _count_rebalances(self, gid: str, g: Any) -> None:
        """Add the rebalances `g` started since last seen. A group object replaced by a
        conversion (classic <-> consumer, KIP-848 migration) counts from where the old one was."""
        counter = _rebalance_counter(g)
        last = self._seen.get(gid)
        if last is not None and last[0] is g:
            new = counter - last[1]
        elif last is not None and getattr(g, "rebalances", None) is None \
                and getattr(last[0], "rebalances", None) is not None:
            new = counter - group_generation(last[0])   # upgraded: the epoch starts at the generation
        else:
            new = counter                     # a new group: a classic one counts from 0, an epoch from 0
        self._rebalances[gid] = self._rebalances.get(gid, 0) + max(0, new)
        self._seen[gid] = (g, counter)

    # -- measurements ---------------------------------------------------------------------------
    def partitions(self) -> list[TP]:
        """What must be owned: subscribed partitions, and for Streams threads (`all_units()`) tasks."""
        topics = sorted({t for k in self.consumers if not hasattr(k, "all_units") for t in topics_of(k)})
        units = {u for k in self.consumers if hasattr(k, "all_units") for u in k.all_units()}
        tps = [(t, p) for t in topics if t in self.c.cluster for p in range(self.c.cluster.partitions(t))]
        return sorted(set(tps) | units) if units else tps

    def unowned_series(self) -> list[tuple[int, int]]:
        """(elapsed ms, partitions no running consumer owned) at every sampled tick."""
        all_tps = set(self.partitions())
        out = []
        for t, rows in itertools.groupby(self.samples, key=lambda s: s[0]):
            owned = set().union(*(s[2] for s in rows))
            out.append((t, len(all_tps - owned)))
        return out

    def double_owned_partitions(self) -> list[tuple[int, TP, tuple[str, ...]]]:
        """(elapsed ms, partition, owners) for every partition two running consumers owned at once."""
        out = []
        for t, rows in itertools.groupby(self.samples, key=lambda s: s[0]):
            owners: dict[TP, list[str]] = {}
            for s in rows:
                for tp in s[2]:
                    owners.setdefault(tp, []).append(s[1])
            out += [(t, tp, tuple(names)) for tp, names in sorted(owners.items()) if len(names) > 1]
        return out

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
        for gid, g in self.c.groups.items():
            self._count_rebalances(gid, g)
        self._baseline = dict(self._rebalances)

    def rebalances(self, group_id: str) -> int:
        """Rebalances the group started since the simulation began (or `reset_measurements`):
        classic rebalances plus group epoch bumps while it was a consumer group."""
        g = self.c.groups.get(group_id)
        if g is not None:
            self._count_rebalances(group_id, g)
        return self._rebalances.get(group_id, 0) - self._baseline.get(group_id, 0)

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
        return {"rebalances": self.rebalances(gid), "generation": group_generation(self.c.groups[gid]),
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


def rolling_upgrade(sim: Simulation, make: Callable[[Any], Any], *, gap_ms: int, settle_ms: int,
                    start_after_ms: int = 0, names: list[str] | None = None) -> int:
    """Schedule a rolling upgrade: each consumer in turn is closed and, `gap_ms` later, replaced
    by `make(old)` (e.g. a KIP-848 consumer with the same name and instance id), which starts at
    once. With classic consumers this is KIP-848's online upgrade. Returns when the last one is back."""
    t = sim.elapsed + start_after_ms
    for name in names or [k.name for k in sim.consumers]:
        old = sim.consumer(name)
        sim.at(t, f"stop {name}", old.close)
        sim.at(t + gap_ms, f"upgrade {name}", lambda name=name, old=old: sim.replace(name, make(old)))
        t += gap_ms + settle_ms
    return t
