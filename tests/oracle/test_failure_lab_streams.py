"""Kafka Streams 4.4.0 (the real Java client, `group.protocol=streams`) through the failure lab:
two instances of a stateless application on a three-broker `kgroup serve`, the broker of their
group's coordinator killed and restarted. The group settles again with every task owned once and
nothing produced is left unprocessed. Loopback only, every wait bounded."""
from __future__ import annotations

import time

import pytest

from kgroup import Cluster, Coordinator
from kgroup.oracle.streams import StreamsInstance, wait_settled
from kgroup.serve import Server

ck = pytest.importorskip("confluent_kafka")
APP = "lab-app"


def produce(server: Server, first: int, n: int) -> None:
    p = ck.Producer({"bootstrap.servers": server.bootstrap, "log.connection.close": False})
    for i in range(first, first + n):
        p.produce("in", key=b"k%d" % i, value=b"v%d" % i, partition=i % 3)
    assert p.flush(30) == 0


def processed(instances: list[StreamsInstance]) -> int:
    return sum(i.processed for i in instances)


def test_a_streams_application_rides_through_its_coordinators_broker_killed(streams_apps):
    server = Server(Coordinator(cluster=Cluster({"in": 3, "out": 3}, seed=7)), brokers=3, record=True,
                    load_ms=300).start()
    instances = [StreamsInstance(server.bootstrap, APP, topology="stateless", name=name,
                                 config={"group.protocol": "streams"}) for name in ("s0", "s1")]
    try:
        produce(server, 0, 30)
        for i in instances:
            i.start()
        wait_settled(lambda: instances, 3, "two instances on three brokers")
        deadline = time.monotonic() + 60
        while processed(instances) < 30 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert processed(instances) >= 30
        dead = server.call(lambda: server.leadership.leader("__consumer_offsets", server.coordinator.partition_for(APP)))
        server.kill_broker(dead)
        produce(server, 30, 30)
        deadline = time.monotonic() + 90
        while processed(instances) < 60 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert processed(instances) >= 60, [i.log_tail() for i in instances]
        wait_settled(lambda: instances, 3, "after the coordinator's broker died")
        assert server.wait_group(APP, state="Stable", members=2, timeout=30).type == "streams"
        assert server.call(lambda: server.leadership.leader("__consumer_offsets",
                                                           server.coordinator.partition_for(APP))) == (dead + 1) % 3
        server.restart_broker(dead)
        wait_settled(lambda: instances, 3, "after the broker came back")
    finally:
        for i in instances:
            i.close()
        server.stop()
    faults = [x.fault for x in server.exchanges() if x.api == "fault"]
    assert any(f.startswith(f"broker {dead} killed") for f in faults)
    assert any(f.endswith(f"group(s) {APP}") for f in faults)   # loaded from the log on the next broker
