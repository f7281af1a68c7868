"""Exactly-once with librdkafka against kgroup serve: a transactional producer commits its
output and the consumer group's offsets in one transaction (TxnOffsetCommit to kgroup's group
coordinator, completed by the transaction's COMMIT marker); an aborted transaction is never
seen by read_committed consumers, and its offsets never land. Loopback only, bounded in time."""
from __future__ import annotations

import time

import pytest
from serve_testing import Wire, wait_until

from kgroup import Cluster, Coordinator
from kgroup.serve import Server

ck = pytest.importorskip("confluent_kafka")


@pytest.fixture
def served():
    s = Server(Coordinator(cluster=Cluster({"in": 1, "out": 1}, seed=7),
                           config={"group.initial.rebalance.delay.ms": 0})).start()
    yield s
    s.stop()


def read_all(server: Server, topic: str, isolation: str, n: int, seconds: float = 20) -> list[bytes]:
    c = ck.Consumer({"bootstrap.servers": server.bootstrap, "group.id": f"reader-{isolation}",
                     "auto.offset.reset": "earliest", "isolation.level": isolation, "enable.auto.commit": False})
    got: list[bytes] = []
    try:
        c.subscribe([topic])
        deadline = time.monotonic() + seconds
        while len(got) < n and time.monotonic() < deadline:
            m = c.poll(0.2)
            if m is not None and m.error() is None:
                got.append(m.value())
    finally:
        c.close()
    return got


def test_consume_transform_produce_commits_output_and_offsets_atomically(served):
    source = ck.Producer({"bootstrap.servers": served.bootstrap})
    for i in range(6):
        source.produce("in", value=b"in-%d" % i)
    assert source.flush(10) == 0

    consumer = ck.Consumer({"bootstrap.servers": served.bootstrap, "group.id": "eos", "auto.offset.reset": "earliest",
                            "enable.auto.commit": False, "isolation.level": "read_committed"})
    producer = ck.Producer({"bootstrap.servers": served.bootstrap, "transactional.id": "tx-1"})
    try:
        producer.init_transactions(10)
        consumer.subscribe(["in"])
        batch: list = []
        deadline = time.monotonic() + 30
        while len(batch) < 6 and time.monotonic() < deadline:
            m = consumer.poll(0.2)
            if m is not None and m.error() is None:
                batch.append(m)
        assert len(batch) == 6

        producer.begin_transaction()
        for m in batch[:4]:
            producer.produce("out", value=m.value().replace(b"in", b"out"))
        producer.send_offsets_to_transaction([ck.TopicPartition("in", 0, batch[3].offset() + 1)],
                                             consumer.consumer_group_metadata(), 10)
        producer.commit_transaction(10)

        producer.begin_transaction()
        for m in batch[4:]:
            producer.produce("out", value=b"aborted")
        producer.flush(10)  # sent before the abort (abort_transaction drops what is still queued)
        producer.send_offsets_to_transaction([ck.TopicPartition("in", 0, 6)], consumer.consumer_group_metadata(), 10)
        producer.abort_transaction(10)
    finally:
        consumer.close()

    # what clients see: only the committed output, and the offsets the committed transaction gave
    assert read_all(served, "out", "read_committed", 4) == [b"out-%d" % i for i in range(4)]
    assert sorted(read_all(served, "out", "read_uncommitted", 6)) == \
        sorted([b"out-%d" % i for i in range(4)] + [b"aborted"] * 2)
    w = Wire(served)
    r = w.call("OffsetFetch", 9, groups=[{"group_id": "eos", "member_id": None, "member_epoch": -1, "topics": None}],
               require_stable=True)
    assert [(p.partition_index, p.committed_offset) for t in r.groups[0].topics for p in t.partitions] == [(0, 4)]
    w.close()

    # what kgroup's coordinator wrote: the transactional offset commits, each completed or
    # dropped by its marker in __consumer_offsets
    entries = served.call(lambda: [e for e in served.coordinator.log
                                   if e.control is not None or (e.record is not None and e.producer_id >= 0)])
    kinds = [("marker", e.control.type.name) if e.control is not None else ("offset", e.record.value.offset)
             for e in entries]
    assert kinds == [("offset", 4), ("marker", "COMMIT"), ("offset", 6), ("marker", "ABORT")]
    # and on the data partition: the output batches and their markers
    stored = served.call(lambda: served.coordinator.cluster.read("out", 0, 0))
    assert [(b.control, b.committed) for b in stored] == [(False, True), (True, True), (False, False), (True, False)]


def test_a_new_producer_incarnation_fences_the_old_one(served):
    first = ck.Producer({"bootstrap.servers": served.bootstrap, "transactional.id": "tx-z"})
    first.init_transactions(10)
    first.begin_transaction()
    first.produce("out", value=b"zombie")
    first.flush(10)
    second = ck.Producer({"bootstrap.servers": served.bootstrap, "transactional.id": "tx-z"})
    second.init_transactions(10)  # aborts the first one's transaction and bumps the epoch
    with pytest.raises(ck.KafkaException) as err:
        first.commit_transaction(10)
    assert err.value.args[0].code() in (ck.KafkaError._FENCED, ck.KafkaError.PRODUCER_FENCED,
                                        ck.KafkaError.INVALID_PRODUCER_EPOCH)
    assert read_all(served, "out", "read_committed", 1, seconds=3) == []
    txn = served.call(lambda: served.broker.transactions.transactions["tx-z"])
    assert (txn.producer_epoch, txn.state) == (1, "Empty")


def test_a_transaction_open_past_its_timeout_is_aborted_and_its_producer_fenced(served):
    producer = ck.Producer({"bootstrap.servers": served.bootstrap, "transactional.id": "tx-slow",
                            "transaction.timeout.ms": 1000})
    producer.init_transactions(10)
    producer.begin_transaction()
    producer.produce("out", value=b"too late")
    producer.flush(10)
    # past transaction.timeout.ms the server aborts it (waited for: a loaded machine is late)
    wait_until(lambda: served.call(lambda: served.broker.transactions.transactions["tx-slow"].state) == "Empty",
               15, "the open transaction to be aborted")
    txn = served.call(lambda: served.broker.transactions.transactions["tx-slow"])
    assert (txn.state, txn.producer_epoch) == ("Empty", 1)
    with pytest.raises(ck.KafkaException):
        producer.commit_transaction(10)
    stored = served.call(lambda: served.coordinator.cluster.read("out", 0, 0))
    assert [(b.control, b.committed) for b in stored] == [(False, False), (True, False)]
