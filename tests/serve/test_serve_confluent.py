"""librdkafka (confluent-kafka), unmodified, against kgroup serve: compressed produce, a classic
consumer group and a KIP-848 consumer (`group.protocol=consumer`); what the clients saw and
what kgroup's coordinator wrote. Loopback only; every wait has a deadline."""
from __future__ import annotations

import time

import pytest
from serve_testing import last_commits, written

from kgroup import Cluster, Coordinator
from kgroup.log.batch import read_batches
from kgroup.serve import Server

ck = pytest.importorskip("confluent_kafka")
from confluent_kafka.admin import AdminClient  # noqa: E402

TOPIC = "orders"
CODECS = {"gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}


@pytest.fixture
def served():
    s = Server(Coordinator(cluster=Cluster({TOPIC: 3}, seed=7), config={"group.initial.rebalance.delay.ms": 0})).start()
    yield s
    s.stop()


def produce(server: Server, n: int, pad: int = 0, **conf) -> None:
    producer = ck.Producer({"bootstrap.servers": server.bootstrap, "linger.ms": 20, "message.timeout.ms": 10_000,
                            **conf})
    for i in range(n):
        producer.produce(TOPIC, key=b"k%d" % i, value=b"value-%d" % i + b"." * pad, partition=i % 3)
    assert producer.flush(15) == 0


def consume(consumer, n: int, seconds: float = 45) -> list:
    got = []
    deadline = time.monotonic() + seconds
    while len(got) < n and time.monotonic() < deadline:
        m = consumer.poll(0.2)
        if m is not None and m.error() is None:
            got.append(m)
    return got


@pytest.mark.parametrize("codec", sorted(CODECS))
def test_compressed_batches_are_stored_as_produced(served, codec):
    # compressible values: librdkafka sends a batch uncompressed when compressing does not pay
    produce(served, 12, pad=2000, **{"compression.type": codec, "enable.idempotence": True})
    batches = served.call(lambda: [b.data for p in range(3) for b in served.coordinator.cluster.read(TOPIC, p, 0)])
    assert batches
    decoded = [b for data in batches for b in read_batches(data, strict=True)]
    assert {b.attributes & 0x07 for b in decoded} == {CODECS[codec]}
    assert all(b.producer_id >= 0 and b.base_sequence >= 0 for b in decoded)  # idempotent: kept as sent
    values = sorted(b"value-%d" % i + b"." * 2000 for i in range(12))
    assert sorted(r.value for b in decoded for r in b.records) == values
    # and a consumer reads them back through Fetch
    c = ck.Consumer({"bootstrap.servers": served.bootstrap, "group.id": "reader", "auto.offset.reset": "earliest",
                     "enable.auto.commit": False})
    try:
        c.subscribe([TOPIC])
        assert sorted(m.value() for m in consume(c, 12)) == values
    finally:
        c.close()


@pytest.mark.parametrize("protocol", ["classic", "consumer"])
def test_a_group_consumes_and_commits(served, protocol):
    """Two members split the partitions; commits land as OffsetCommit records. `consumer` is
    KIP-848: the coordinator assigns, through ConsumerGroupHeartbeat."""
    produce(served, 30)
    conf = {"bootstrap.servers": served.bootstrap, "group.id": f"g-{protocol}", "auto.offset.reset": "earliest",
            "enable.auto.commit": False, "group.protocol": protocol}
    if protocol == "classic":
        # Kafka's default session timeout (the server shares a Python process with the test, so a
        # loaded CI machine can hold its loop back for seconds), heartbeats often to see rebalances
        conf |= {"session.timeout.ms": 45_000, "heartbeat.interval.ms": 500}
    members = [ck.Consumer({**conf, "client.id": f"m{i}"}) for i in range(2)]
    try:
        for m in members:
            m.subscribe([TOPIC])
        got: list = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            for m in members:
                msg = m.poll(0.1)
                if msg is not None and msg.error() is None:
                    got.append(msg)
            # done when the group is split and each member read its partitions to the end (a
            # partition may have moved after another member read it: it is read again); one
            # snapshot of both assignments, so a member still holding an older generation's
            # partitions (not yet told of the rebalance) does not end the wait
            held = [m.assignment() for m in members]
            assignments = [{tp.partition for tp in h} for h in held]
            if (all(assignments) and not assignments[0] & assignments[1]
                    and all(tp.offset == 10 for m, h in zip(members, held) for tp in m.position(h))):
                break
        assert {msg.value() for msg in got} == {b"value-%d" % i for i in range(30)}
        assert sorted(len(a) for a in assignments) == [1, 2] and assignments[0] | assignments[1] == {0, 1, 2}
        for m in members:
            m.commit(asynchronous=False)
        committed = members[0].committed([ck.TopicPartition(TOPIC, p) for p in range(3)], timeout=10)
        assert [tp.offset for tp in committed] == [10, 10, 10]
    finally:
        for m in members:
            m.close()
    assert last_commits(served, f"g-{protocol}") == {(TOPIC, p): 10 for p in range(3)}
    if protocol == "consumer":
        metadata = [r for r in written(served, "ConsumerGroupMemberMetadata") if r.key.group_id == "g-consumer"]
        assert {r.value.client_id for r in metadata if r.value is not None} == {"m0", "m1"}
        assert all(r.value is None for r in metadata[-2:])  # both left on close: tombstones
        assert not written(served, "GroupMetadata")  # no classic group was made
    else:
        groups = [r for r in written(served, "GroupMetadata") if r.key.group == "g-classic"]
        assert any(r.value is not None and len(r.value.members) == 2 for r in groups)


def test_admin_lists_and_describes_groups(served):
    produce(served, 3)
    c = ck.Consumer({"bootstrap.servers": served.bootstrap, "group.id": "described", "auto.offset.reset": "earliest",
                     "group.protocol": "consumer", "client.id": "watcher"})
    admin = AdminClient({"bootstrap.servers": served.bootstrap})
    try:
        c.subscribe([TOPIC])
        assert len(consume(c, 3)) == 3
        listed = admin.list_consumer_groups(request_timeout=10).result(timeout=15)
        assert [(g.group_id, str(g.type)) for g in listed.valid] == [("described", "ConsumerGroupType.CONSUMER")]
        described = admin.describe_consumer_groups(["described"], request_timeout=10)["described"].result(timeout=15)
        assert [m.client_id for m in described.members] == ["watcher"]
        assert {tp.partition for tp in described.members[0].assignment.topic_partitions} == {0, 1, 2}
    finally:
        c.close()


def test_kip848_regex_subscription_is_resolved_by_the_coordinator():
    """`^orders-.*` goes to the coordinator as a regular expression (KIP-848): it resolves it
    against the cluster's topics and assigns the matching ones only."""
    s = Server(Coordinator(cluster=Cluster({"orders-a": 1, "orders-b": 1, "other": 1}, seed=7),
                           config={"group.initial.rebalance.delay.ms": 0})).start()
    try:
        producer = ck.Producer({"bootstrap.servers": s.bootstrap})
        for t in ("orders-a", "orders-b", "other"):
            producer.produce(t, value=t.encode())
        assert producer.flush(10) == 0
        c = ck.Consumer({"bootstrap.servers": s.bootstrap, "group.id": "rx", "group.protocol": "consumer",
                         "auto.offset.reset": "earliest"})
        try:
            c.subscribe(["^orders-.*"])
            assert sorted(m.topic() for m in consume(c, 2, seconds=30)) == ["orders-a", "orders-b"]
        finally:
            c.close()
        regexes = [r for r in written(s, "ConsumerGroupRegularExpression") if r.key.group_id == "rx"]
        # librdkafka sends its patterns as one expression: "(^orders-.*)"
        assert regexes and regexes[0].key.regular_expression == "(^orders-.*)"
        assert regexes[0].value is not None and len(regexes[0].value.topics) == 2
    finally:
        s.stop()
