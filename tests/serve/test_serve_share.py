"""librdkafka's share consumer (KIP-932, "Preview" in the client) against kgroup serve: the
group config set through IncrementalAlterConfigs, records delivered once and acknowledged;
what the coordinator and the share coordinator wrote. Loopback only, bounded in time."""
from __future__ import annotations

import time

import pytest
from serve_testing import share_group_reads_from_earliest, written

from kgroup import Cluster, Coordinator
from kgroup.serve import Server

ck = pytest.importorskip("confluent_kafka")
if not hasattr(ck, "ShareConsumer"):
    pytest.skip("this confluent-kafka has no ShareConsumer", allow_module_level=True)


@pytest.fixture
def served():
    config = {"group.coordinator.rebalance.protocols": "classic,consumer,share"}
    s = Server(Coordinator(cluster=Cluster({"orders": 2}, seed=7), config=config), record=True).start()
    yield s
    s.stop()


def test_share_group_delivers_each_record_once_and_acknowledges(served):
    producer = ck.Producer({"bootstrap.servers": served.bootstrap})
    for i in range(10):
        producer.produce("orders", value=b"s%d" % i, partition=i % 2)
    assert producer.flush(10) == 0
    # share groups start at the latest offset unless the group says otherwise (KIP-932)
    share_group_reads_from_earliest(served.bootstrap, "sg")

    consumer = ck.ShareConsumer({"bootstrap.servers": served.bootstrap, "group.id": "sg", "client.id": "share-1",
                                 "share.acknowledgement.mode": "explicit"})
    got: list[bytes] = []
    try:
        consumer.subscribe(["orders"])
        deadline = time.monotonic() + 30
        while len(got) < 10 and time.monotonic() < deadline:
            for m in consumer.poll(0.5):
                if m.error() is None:
                    got.append(m.value())
                    consumer.acknowledge(m)
        consumer.commit_sync()  # the acknowledgements, in a ShareAcknowledge
    finally:
        consumer.close()
    assert sorted(got) == sorted(b"s%d" % i for i in range(10))

    members = [r for r in written(served, "ShareGroupMemberMetadata") if r.key.group_id == "sg"]
    assert members[0].value.client_id == "share-1" and members[-1].value is None  # joined, then left
    apis = [x.api for x in served.exchanges()]
    assert {"ShareGroupHeartbeat", "ShareFetch"} <= set(apis)
    # every record acknowledged: the share coordinator's state moved both SPSOs to the end
    state = served.call(lambda: [e.record for e in served.coordinator.share_state_log if e.record is not None])
    assert state
    spso = {}
    for r in state:
        if r.value is not None:
            spso[r.key.partition] = r.value.start_offset
    assert spso == {0: 5, 1: 5}


def test_an_idle_share_consumer_long_polls_instead_of_spinning(served):
    """With nothing to acquire, ShareFetch waits (MaxWaitMs) instead of being answered at
    once: a few fetches a second, not thousands; a produce wakes the waiting fetch."""
    consumer = ck.ShareConsumer({"bootstrap.servers": served.bootstrap, "group.id": "idle", "client.id": "idle-1"})
    try:
        consumer.subscribe(["orders"])

        def fetches() -> int:
            return sum(1 for x in served.exchanges() if x.api == "ShareFetch")
        deadline = time.monotonic() + 30  # joining takes what the machine takes; counted from the first fetch
        while fetches() == 0 and time.monotonic() < deadline:
            assert not list(consumer.poll(0.2))
        first = fetches()
        assert first >= 1
        start = time.monotonic()
        while time.monotonic() - start < 2:
            assert not list(consumer.poll(0.2))
        assert fetches() - first <= 12  # librdkafka asks with MaxWaitMs 500: a few in 2 s, not thousands
        producer = ck.Producer({"bootstrap.servers": served.bootstrap})
        producer.produce("orders", value=b"late", partition=1)
        assert producer.flush(10) == 0
        got: list[bytes] = []
        deadline = time.monotonic() + 10
        while not got and time.monotonic() < deadline:
            got = [m.value() for m in consumer.poll(0.2) if m.error() is None]
        assert got == [b"late"]
    finally:
        consumer.close()
