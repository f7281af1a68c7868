"""kafka-python, unmodified, against kgroup serve: what the clients see, and what kgroup's
coordinator wrote for it. Loopback only; every wait has a deadline."""
from __future__ import annotations

import time

import pytest
from serve_testing import last_commits, written

from kgroup import Cluster, Coordinator
from kgroup.serve import Server

kafka = pytest.importorskip("kafka")

TOPIC, RECORDS = "orders", 30


@pytest.fixture
def served():
    # no initial rebalance delay: the group forms as soon as both members joined
    s = Server(Coordinator(cluster=Cluster({TOPIC: 3, "audit": 1}, seed=7),
                           config={"group.initial.rebalance.delay.ms": 0})).start()
    yield s
    s.stop()


def produce(server: Server) -> dict[int, int]:
    producer = kafka.KafkaProducer(bootstrap_servers=server.bootstrap, request_timeout_ms=5000)
    try:
        for i in range(RECORDS):
            producer.send(TOPIC, key=b"k%d" % i, value=b"v%d" % i, partition=i % 3)
        producer.flush(timeout=10)
    finally:
        producer.close(timeout=5)
    return {p: server.call(lambda p=p: server.coordinator.cluster.end_offset(TOPIC, p)) for p in range(3)}


def test_classic_group_of_two_consumes_commits_and_admin_reads_it_back(served):
    ends = produce(served)
    assert ends == {0: 10, 1: 10, 2: 10}
    # Kafka's default session timeout: the clients and the server share one Python process, and on
    # a loaded 2-core CI machine kgroup once expelled kp-0 after 6 s without its heartbeats (its
    # LeaveGroup at close got UNKNOWN_MEMBER_ID) while kp-0 still held its old partitions
    consumers = [kafka.KafkaConsumer(TOPIC, bootstrap_servers=served.bootstrap, group_id="kp", client_id=f"kp-{i}",
                                     auto_offset_reset="earliest", enable_auto_commit=False,
                                     session_timeout_ms=45_000, heartbeat_interval_ms=500, request_timeout_ms=8000)
                  for i in range(2)]
    seen: list[set[bytes]] = [set(), set()]
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            for i, c in enumerate(consumers):
                for records in c.poll(timeout_ms=200).values():
                    seen[i].update(r.value for r in records)
            # done when the group is split and each member read its partitions to the end (a
            # partition may have moved after another member read it: it is read again); one
            # snapshot of both assignments, so a member still holding an older generation's
            # partitions (not yet told of the rebalance) does not end the wait
            held = [c.assignment() for c in consumers]
            assignments = [{tp.partition for tp in h} for h in held]
            if (all(assignments) and not assignments[0] & assignments[1]
                    and all(c.position(tp) == 10 for c, h in zip(consumers, held) for tp in h)):
                break
        for c in consumers:
            c.commit()
        # what the clients saw: every record (a member alone for a generation may have read
        # a partition before the group split it: at-least-once), the partitions split in two
        assert seen[0] | seen[1] == {b"v%d" % i for i in range(RECORDS)}
        assert sorted(len(a) for a in assignments) == [1, 2] and assignments[0] | assignments[1] == {0, 1, 2}

        admin = kafka.KafkaAdminClient(bootstrap_servers=served.bootstrap, request_timeout_ms=8000)
        try:
            listed = {g["group_id"]: g for g in admin.list_groups()}
            assert listed["kp"]["group_state"] == "Stable" and listed["kp"]["group_type"] == "classic"
            described = admin.describe_groups(["kp"])["kp"]
            assert sorted(m["client_id"] for m in described["members"]) == ["kp-0", "kp-1"]
            offsets = admin.list_group_offsets("kp")["kp"]
            assert {tp.partition: om.offset for tp, om in offsets.items() if tp.topic == TOPIC} == ends
        finally:
            admin.close()
    finally:
        for c in consumers:
            c.close(autocommit=False)

    # what the coordinator wrote: the group with both members, then their commits
    groups = [r for r in written(served, "GroupMetadata") if r.key.group == "kp"]
    assert any(r.value is not None and len(r.value.members) == 2 for r in groups)
    assert last_commits(served, "kp") == {(TOPIC, p): end for p, end in ends.items()}


def test_committed_offsets_survive_a_new_consumer(served):
    """A consumer of the same group starts where the last one committed."""
    produce(served)
    first = kafka.KafkaConsumer(bootstrap_servers=served.bootstrap, group_id="resume", auto_offset_reset="earliest",
                                enable_auto_commit=False)
    tp = kafka.TopicPartition(TOPIC, 1)
    try:
        first.assign([tp])
        got: list[bytes] = []
        deadline = time.monotonic() + 30
        while len(got) < 4 and time.monotonic() < deadline:
            got += [r.value for r in first.poll(timeout_ms=200, max_records=4 - len(got)).get(tp, [])]
        first.commit({tp: kafka.OffsetAndMetadata(4, "", -1)})
    finally:
        first.close(autocommit=False)
    assert got == [b"v1", b"v4", b"v7", b"v10"]
    second = kafka.KafkaConsumer(bootstrap_servers=served.bootstrap, group_id="resume", enable_auto_commit=False)
    try:
        second.assign([tp])
        assert second.committed(tp) == 4
        rest: list[bytes] = []
        deadline = time.monotonic() + 30
        while len(rest) < 6 and time.monotonic() < deadline:
            rest += [r.value for r in second.poll(timeout_ms=200).get(tp, [])]
    finally:
        second.close(autocommit=False)
    assert rest == [b"v%d" % i for i in range(13, RECORDS, 3)]
    assert last_commits(served, "resume") == {(TOPIC, 1): 4}
