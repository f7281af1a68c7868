"""Which broker leads what: the partition leadership of a `kgroup serve` cluster of N brokers.

Broker ids are 0..N-1. A partition's leader starts where Kafka's striped placement puts the
first replica of partition p when it starts at broker 0: broker `p % N` (Kafka picks the starting
broker at random; kgroup starts at 0 so that a run is the same every time). That holds for data
topics, `__consumer_offsets` (whose partition leader is the group coordinator) and
`__share_group_state` (the share coordinator). Every broker holds a replica of every partition,
as with a replication factor of N, so a partition whose leader dies moves to the next live
broker (the next id, wrapping around), as Kafka's controller elects a new leader from the ISR;
with no live broker left it is offline until one comes back.
"""
from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Leadership", "Move"]


@dataclass(frozen=True)
class Move:
    """A partition whose leader changed: `old` and `new` broker ids (-1: none, offline)."""

    topic: str
    partition: int
    old: int
    new: int


@dataclass
class Leadership:
    """The leaders of a cluster of `brokers` brokers; `live` are those serving."""

    brokers: int
    live: set[int] = field(default_factory=set)
    #: (topic, partition) -> leader, where it is not the starting one (moved, or offline: -1)
    moved: dict[tuple[str, int], int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.brokers < 1:
            raise ValueError(f"a cluster has at least one broker, not {self.brokers}")
        if not self.live:
            self.live = set(range(self.brokers))

    def check(self, broker_id: int) -> None:
        if not 0 <= broker_id < self.brokers:
            raise ValueError(f"no broker {broker_id}: the brokers are 0..{self.brokers - 1}")

    def leader(self, topic: str, partition: int) -> int:
        """The broker leading `topic`-`partition` (-1 while it is offline). A partition that never
        moved but whose starting broker is down (a topic made while it was) is on the next live one."""
        leader = self.moved.get((topic, partition))
        if leader is not None:
            return leader
        leader = partition % self.brokers
        return leader if leader in self.live else self._next_live(leader)

    def led_by(self, broker_id: int, topic: str, partitions: int) -> frozenset[int]:
        """The partitions of `topic` (of `partitions`) that `broker_id` leads."""
        return frozenset(p for p in range(partitions) if self.leader(topic, p) == broker_id)

    def move(self, topic: str, partition: int, to: int) -> Move | None:
        """Make `to` the leader (None when it already is)."""
        self.check(to)
        if to not in self.live:
            raise ValueError(f"broker {to} is down: restart it before moving partitions to it")
        old = self.leader(topic, partition)
        if old == to:
            return None
        self.moved[(topic, partition)] = to
        return Move(topic, partition, old, to)

    def kill(self, broker_id: int, partitions: dict[str, int]) -> list[Move]:
        """`broker_id` stops: each partition it led (of `partitions`: topic -> count, those whose
        moves matter) moves to the next live broker, or goes offline."""
        self.check(broker_id)
        if broker_id not in self.live:
            raise ValueError(f"broker {broker_id} is already down")
        led = [(t, p) for t, count in partitions.items() for p in range(count) if self.leader(t, p) == broker_id]
        self.live.discard(broker_id)
        new = self._next_live(broker_id)
        for key in led:
            self.moved[key] = new
        return [Move(topic, p, broker_id, new) for topic, p in led]

    def restart(self, broker_id: int, partitions: dict[str, int]) -> list[Move]:
        """`broker_id` serves again; partitions left offline come back with it as their leader
        (the others stay where the failover put them)."""
        self.check(broker_id)
        if broker_id in self.live:
            raise ValueError(f"broker {broker_id} is running")
        self.live.add(broker_id)
        moves = []
        for topic, count in partitions.items():
            for p in range(count):
                if self.leader(topic, p) == -1:
                    self.moved[(topic, p)] = broker_id
                    moves.append(Move(topic, p, -1, broker_id))
        return moves

    def _next_live(self, broker_id: int) -> int:
        for step in range(1, self.brokers + 1):
            candidate = (broker_id + step) % self.brokers
            if candidate in self.live:
                return candidate
        return -1
