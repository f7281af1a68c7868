"""Real clients (librdkafka, unmodified) ride through the failure lab: a three-broker `kgroup serve`
whose group coordinator moves and whose brokers die and come back. What must hold: nothing
committed is lost, no record goes to two members of a consumer group, share records in flight
when their leader died come again, counted as KIP-932 counts them. Loopback only, every wait bounded."""
from __future__ import annotations

import threading
import time

import pytest
from serve_testing import last_commits, share_group_reads_from_earliest, wait_until

from kgroup import Cluster, Coordinator
from kgroup.serve import Server

ck = pytest.importorskip("confluent_kafka")

TOPIC = "orders"


@pytest.fixture
def lab():
    config = {"group.initial.rebalance.delay.ms": 0, "group.coordinator.rebalance.protocols": "classic,consumer,share"}
    s = Server(Coordinator(cluster=Cluster({TOPIC: 3}, seed=7), config=config), brokers=3, record=True,
               load_ms=300).start()
    yield s
    s.stop()


def produce(server: Server, first: int, n: int) -> None:
    producer = ck.Producer({"bootstrap.servers": server.bootstrap, "linger.ms": 5, "message.timeout.ms": 20_000})
    for i in range(first, first + n):
        producer.produce(TOPIC, value=b"v%d" % i, partition=i % 3)
    assert producer.flush(25) == 0


class Members:
    """Consumers of one group polled on a thread: each record is kept with who got it, and
    committed (synchronously) before the next poll."""

    def __init__(self, server: Server, group: str, protocol: str, n: int = 2) -> None:
        conf = {"bootstrap.servers": server.bootstrap, "group.id": group, "auto.offset.reset": "earliest",
                "enable.auto.commit": False, "group.protocol": protocol}
        if protocol == "classic":
            conf |= {"session.timeout.ms": 10_000, "heartbeat.interval.ms": 500}
        self.consumers = [ck.Consumer({**conf, "client.id": f"m{i}"}) for i in range(n)]
        self.got: list[tuple[int, bytes]] = []
        self._stop = threading.Event()
        for c in self.consumers:
            c.subscribe([TOPIC])
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            for i, c in enumerate(self.consumers):
                m = c.poll(0.05)
                if m is not None and m.error() is None:
                    self.got.append((i, m.value()))
                    try:
                        c.commit(m, asynchronous=False)
                    except ck.KafkaException:
                        pass   # e.g. the coordinator moved: the next commit covers it

    def values(self) -> list[bytes]:
        return [v for _, v in self.got]

    def close(self) -> None:
        self._stop.set()
        self._thread.join(10)
        for c in self.consumers:
            c.close()


def coordinator_broker(server: Server, group: str) -> int:
    return server.call(lambda: server.leadership.leader("__consumer_offsets", server.coordinator.partition_for(group)))


def check_once_each(members: Members, n: int) -> None:
    values = members.values()
    assert sorted(set(values)) == sorted(b"v%d" % i for i in range(n))   # nothing lost
    assert len(values) == n   # each record once: no partition was held by two members


@pytest.mark.parametrize("protocol", ["consumer", "classic"])
def test_a_group_rides_through_its_coordinators_broker_killed_and_restarted(lab, protocol):
    group = f"ride-{protocol}"
    produce(lab, 0, 30)
    members = Members(lab, group, protocol)
    try:
        lab.wait_group(group, state="Stable", members=2, timeout=30)
        wait_until(lambda: len(members.got) >= 30, 30, "the first 30 records")
        dead = coordinator_broker(lab, group)
        lab.kill_broker(dead)
        produce(lab, 30, 15)
        wait_until(lambda: len(members.got) >= 45, 60, "the records produced after the kill")
        assert coordinator_broker(lab, group) == (dead + 1) % 3
        lab.restart_broker(dead)
        produce(lab, 45, 15)
        wait_until(lambda: len(members.got) >= 60, 60, "the records produced after the restart")
        lab.wait_group(group, state="Stable", members=2, timeout=30)
        wait_until(lambda: last_commits(lab, group) == {(TOPIC, p): 20 for p in range(3)}, 30, "the last commits")
    finally:
        members.close()
    check_once_each(members, 60)
    faults = [e.fault for e in lab.exchanges() if e.api == "fault"]
    led = sum(p % 3 == dead for p in range(50))   # offsets.topic.num.partitions: 50
    assert f"broker {dead} killed: its {led} __consumer_offsets partition(s) moved to broker(s) {(dead + 1) % 3}" \
        in faults


def test_a_classic_group_rides_through_a_moved_coordinator(lab):
    """(A KIP-848 librdkafka member may not: after the move it fetches the committed offsets of the
    assignment the new coordinator sends again, from the old coordinator, which answers
    NOT_COORDINATOR for the group; librdkafka then never starts fetching that partition:
    confluentinc/librdkafka#5586. Kafka 4.4.0 answers that OffsetFetch the same way.)"""
    group = "ride-moved"
    produce(lab, 0, 30)
    members = Members(lab, group, "classic")
    try:
        lab.wait_group(group, state="Stable", members=2, timeout=30)
        wait_until(lambda: len(members.got) >= 30, 30, "the first 30 records")
        old, generation = coordinator_broker(lab, group), lab.wait_group(group, state="Stable", timeout=5).epoch
        lab.move_coordinator(group, (old + 1) % 3)
        produce(lab, 30, 15)
        wait_until(lambda: len(members.got) >= 45, 60, "the records produced after the move")
        wait_until(lambda: last_commits(lab, group) == {(TOPIC, p): 15 for p in range(3)}, 30, "the last commits")
        # the members went on in their generation: no rebalance was needed
        assert lab.wait_group(group, state="Stable", members=2, timeout=30).epoch == generation
    finally:
        members.close()
    check_once_each(members, 45)


@pytest.mark.skipif(not hasattr(ck, "ShareConsumer"), reason="this confluent-kafka has no ShareConsumer")
def test_share_records_in_flight_when_their_leader_dies_are_delivered_again(lab):
    producer = ck.Producer({"bootstrap.servers": lab.bootstrap})
    for i in range(6):
        producer.produce(TOPIC, value=b"s%d" % i, partition=0)   # partition 0: led by broker 0
    assert producer.flush(10) == 0
    share_group_reads_from_earliest(lab.bootstrap, "sg")
    consumer = ck.ShareConsumer({"bootstrap.servers": lab.bootstrap, "group.id": "sg", "client.id": "share-1",
                                 "share.acknowledgement.mode": "explicit"})
    first: list = []
    again: list = []
    try:
        consumer.subscribe([TOPIC])
        deadline = time.monotonic() + 30
        while len(first) < 6 and time.monotonic() < deadline:
            first += [m for m in consumer.poll(0.5) if m.error() is None]
        assert sorted(m.value() for m in first) == sorted(b"s%d" % i for i in range(6))
        assert {m.delivery_count() for m in first} == {1}
        # the records are Acquired on broker 0 when it dies: the acknowledgements go down with it
        lab.kill_broker(0)
        for m in first:
            consumer.acknowledge(m)
        deadline = time.monotonic() + 45
        while len(again) < 6 and time.monotonic() < deadline:
            for m in consumer.poll(0.5):
                if m.error() is None:
                    again.append((m.value(), m.delivery_count()))
                    consumer.acknowledge(m)
        consumer.commit_sync()
    finally:
        consumer.close()
    # the Acquired state is not persisted (KIP-932): the new leader makes them Available again, and
    # the delivery that failed with the broker is not counted
    assert sorted(v for v, _ in again) == sorted(b"s%d" % i for i in range(6))
    assert {n for _, n in again} == {1}
