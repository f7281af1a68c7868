"""kgroup serve on the wire: each broker API answered from the simulated cluster, group APIs
through the coordinator, as a bare client sees them."""
from __future__ import annotations

import threading
import time
import uuid

import pytest
from serve_testing import Wire, wait_until

from kgroup import Cluster, Coordinator
from kgroup.errors import ErrorCode
from kgroup.log.batch import encode_batch, read_batches
from kgroup.protocol import supported_versions
from kgroup.serve import Server


def batch(*values: bytes, compression: str = "none", producer_id: int = -1) -> bytes:
    """A magic-2 batch as a producer sends it (base offset 0)."""
    return encode_batch([(None, v, 1_700_000_000_000) for v in values], base_offset=0, compression=compression,
                        producer_id=producer_id, producer_epoch=0 if producer_id >= 0 else -1,
                        base_sequence=0 if producer_id >= 0 else -1)


def produce(wire: Wire, topic: str, partition: int, records: bytes, *, acks: int = -1, version: int = 9):
    if acks == 0:  # no answer comes
        return wire.send("Produce", version, acks=0, timeout=5000, topic_data=[
            {"name": topic, "partition_data": [{"index": partition, "records": records}]}])
    return wire.call("Produce", version, acks=acks, timeout=5000, topic_data=[
        {"name": topic, "partition_data": [{"index": partition, "records": records}]}])


def test_api_versions_advertise_what_the_server_routes(server, wire):
    """Every version of ApiVersions answers; the table is kio's versions of the routed APIs."""
    for v in supported_versions("ApiVersions"):
        extra = {"client_software_name": "t", "client_software_version": "1"} if v >= 3 else {}
        r = wire.call("ApiVersions", v, **extra)
        assert r.error_code == ErrorCode.none
        table = {k.api_key: (k.min_version, k.max_version) for k in r.api_keys}
        assert table == server.api_versions
    assert {0, 1, 2, 3, 10, 18, 19, 20, 60, 11, 14, 8, 9, 68} <= set(table)
    assert 27 not in table and 84 not in table  # inter-broker APIs are not a client's
    assert table[11] == (min(supported_versions(11)), max(supported_versions(11)))


def test_api_versions_too_new_is_answered_in_v0_with_unsupported_version(server, wire):
    """A client newer than the server gets v0 with UNSUPPORTED_VERSION and the range to retry in."""
    import struct
    # ApiVersions v99: header v2 (flexible) as a newer client would send it
    frame = struct.pack(">hhih", 18, 99, 5, 1) + b"t" + b"\0" + b"\0\0\0"
    wire.sock.sendall(struct.pack(">i", len(frame)) + frame)
    correlation_id, r = wire.receive("ApiVersions", 0)
    assert correlation_id == 5 and r.error_code == ErrorCode.unsupported_version
    assert [(k.api_key, k.min_version, k.max_version) for k in r.api_keys] == [(18, 0, 4)]
    assert wire.call("ApiVersions", 0).error_code == ErrorCode.none  # the connection stays open


def test_metadata_one_broker_leading_every_partition(server, wire):
    r = wire.call("Metadata", 12, topics=None, allow_auto_topic_creation=True)
    assert [(b.node_id, b.host, b.port) for b in r.brokers] == [(0, "127.0.0.1", server.port)]
    assert r.controller_id == 0 and r.cluster_id
    topics = {t.name: t for t in r.topics}
    assert set(topics) == {"orders", "audit"}
    orders = topics["orders"]
    assert orders.topic_id == server.coordinator.cluster.topic_id("orders")
    assert [(p.partition_index, p.leader_id, p.leader_epoch, p.replica_nodes, p.isr_nodes)
            for p in orders.partitions] == [(i, 0, 0, (0,), (0,)) for i in range(3)]
    # an unknown topic the client does not allow to be created is not created
    r = wire.call("Metadata", 12, topics=[{"name": "nope"}], allow_auto_topic_creation=False)
    assert r.topics[0].error_code == ErrorCode.unknown_topic_or_partition
    assert "nope" not in server.coordinator.cluster
    # by topic id (v10+)
    r = wire.call("Metadata", 12, topics=[{"name": None, "topic_id": orders.topic_id}])
    assert r.topics[0].name == "orders"
    assert wire.call("Metadata", 0, topics=[]).topics  # v0: an empty list means all topics


def test_metadata_auto_creates_by_default_as_a_fresh_kafka_does():
    # Kafka's auto.create.topics.enable defaults to true, and so does kgroup serve's
    with Server(Coordinator(cluster=Cluster())) as s:
        w = Wire(s)
        r = w.call("Metadata", 12, topics=[{"name": "fresh"}], allow_auto_topic_creation=True)
        assert r.topics[0].error_code == ErrorCode.none and len(r.topics[0].partitions) == 1
        w.close()
    with Server(Coordinator(cluster=Cluster()), auto_create_topics=False) as s:
        w = Wire(s)
        r = w.call("Metadata", 12, topics=[{"name": "fresh"}], allow_auto_topic_creation=True)
        assert r.topics[0].error_code == ErrorCode.unknown_topic_or_partition
        w.close()


@pytest.mark.parametrize("version", supported_versions("FindCoordinator"))
def test_find_coordinator_every_version_is_this_broker(server, wire, version):
    if version >= 4:
        keys = ["g1", "g2"] + (["sg:" + str(uuid.uuid4()) + ":0"] if version >= 6 else [])
        r = wire.call("FindCoordinator", version, key_type=2 if version >= 6 else 0, coordinator_keys=keys)
        assert [(c.key, c.node_id, c.port, c.error_code) for c in r.coordinators] == \
            [(k, 0, server.port, ErrorCode.none) for k in keys]
    else:
        r = wire.call("FindCoordinator", version, key="g1")
        assert (r.error_code, r.node_id, r.host, r.port) == (ErrorCode.none, 0, "127.0.0.1", server.port)


def test_describe_cluster(server, wire):
    r = wire.call("DescribeCluster", 1, include_cluster_authorized_operations=False, endpoint_type=1)
    assert r.error_code == ErrorCode.none
    assert [(b.broker_id, b.port) for b in r.brokers] == [(0, server.port)]


def test_a_create_topics_of_more_than_ten_thousand_partitions_is_refused_whole(server, wire):
    # Kafka 4.4.0's controller, as the oracle scenario requests-too-large saw it
    topics = [{"name": f"many-{i}", "num_partitions": 6000, "replication_factor": 1, "assignments": [], "configs": []}
              for i in (1, 2)]
    r = wire.call("CreateTopics", 7, timeout=5000, validate_only=False, topics=topics)
    assert {(t.error_code, t.error_message) for t in r.topics} == {
        (ErrorCode.policy_violation, "Excessively large number of partitions per request.")}
    assert not any(server.call(lambda: f"many-{i}" in server.coordinator.cluster) for i in (1, 2))
    r = wire.call("CreateTopics", 7, timeout=5000, validate_only=False, topics=topics[:1])
    assert r.topics[0].error_code == ErrorCode.none


def test_create_and_delete_topics(server, wire):
    r = wire.call("CreateTopics", 7, timeout=5000, validate_only=False, topics=[
        {"name": "fresh", "num_partitions": 4, "replication_factor": 1, "assignments": [], "configs": []},
        {"name": "orders", "num_partitions": 1, "replication_factor": 1, "assignments": [], "configs": []},
        {"name": "bad/name", "num_partitions": 1, "replication_factor": 1, "assignments": [], "configs": []},
        {"name": "wide", "num_partitions": 1, "replication_factor": 3, "assignments": [], "configs": []}])
    assert [t.error_code for t in r.topics] == [ErrorCode.none, ErrorCode.topic_already_exists,
                                               ErrorCode.invalid_topic_exception, ErrorCode.invalid_replication_factor]
    assert r.topics[0].topic_id == server.coordinator.cluster.topic_id("fresh")
    assert server.call(lambda: server.coordinator.cluster.partitions("fresh")) == 4
    r = wire.call("DeleteTopics", 6, timeout=5000, topics=[{"name": "fresh", "topic_id": None},
                                                           {"name": "gone", "topic_id": None}])
    assert [x.error_code for x in r.responses] == [ErrorCode.none, ErrorCode.unknown_topic_or_partition]
    assert "fresh" not in server.coordinator.cluster


def test_produce_keeps_the_batches_and_fetch_returns_them_as_they_are(server, wire):
    """The broker assigns offsets (base offset, leader epoch: outside the CRC); the rest of
    the produced bytes, compressed or not, are what a fetch returns."""
    plain, zstd = batch(b"a", b"b"), batch(b"c", b"d", b"e", compression="zstd")
    r = produce(wire, "orders", 1, plain + zstd)
    p = r.responses[0].partition_responses[0]
    assert (p.error_code, p.base_offset) == (ErrorCode.none, 0)
    r = produce(wire, "orders", 1, batch(b"f"), acks=1)
    assert r.responses[0].partition_responses[0].base_offset == 5
    f = wire.call("Fetch", 12, max_wait=0, min_bytes=1, max_bytes=1 << 20, isolation_level=0, session_id=0,
                  session_epoch=-1, topics=[{"topic": "orders", "partitions": [
                      {"partition": 1, "fetch_offset": 0, "partition_max_bytes": 1 << 20}]}],
                  forgotten_topics_data=[], rack_id="")
    part = f.responses[0].partitions[0]
    assert (part.error_code, part.high_watermark, part.log_start_offset) == (ErrorCode.none, 6, 0)
    stored = [b.data for b in server.coordinator.cluster.read("orders", 1, 0)]
    assert bytes(part.records) == b"".join(stored)
    assert stored[0][16:] == plain[16:] and stored[1][16:] == zstd[16:]  # from magic on: as produced
    got = [(r.offset, r.value) for b in read_batches(bytes(part.records), strict=True) for r in b.records]
    assert got == [(0, b"a"), (1, b"b"), (2, b"c"), (3, b"d"), (4, b"e"), (5, b"f")]


def test_produce_acks_zero_has_no_answer_and_bad_batches_are_refused(server, wire):
    produce(wire, "audit", 0, batch(b"x"), acks=0)
    # no answer to acks=0: the next answer on this connection is the ApiVersions one
    assert wire.call("ApiVersions", 0).error_code == ErrorCode.none
    assert server.call(lambda: server.coordinator.cluster.end_offset("audit", 0)) == 1
    broken = bytearray(batch(b"y"))
    broken[-1] ^= 0xFF
    codes = [produce(wire, "audit", 0, bytes(broken)).responses[0].partition_responses[0].error_code,
             produce(wire, "audit", 7, batch(b"z")).responses[0].partition_responses[0].error_code,
             produce(wire, "audit", 0, batch(b"z"), acks=2).responses[0].partition_responses[0].error_code]
    assert codes == [ErrorCode.corrupt_message, ErrorCode.unknown_topic_or_partition, ErrorCode.invalid_required_acks]
    assert server.coordinator.cluster.end_offset("audit", 0) == 1


def test_list_offsets_earliest_latest_and_by_timestamp(server, wire):
    produce(wire, "audit", 0, batch(b"a", b"b"))
    server.call(lambda: server.coordinator.cluster.delete_records("audit", 0, 1))

    def offset(ts):
        r = wire.call("ListOffsets", 9, replica_id=-1, isolation_level=0, topics=[
            {"name": "audit", "partitions": [{"partition_index": 0, "current_leader_epoch": -1, "timestamp": ts}]}])
        return r.topics[0].partitions[0].offset
    assert (offset(-2), offset(-1), offset(1_700_000_000_000), offset(1_800_000_000_000)) == (1, 2, 1, -1)


def test_fetch_long_polls_until_data_arrives(server):
    """A fetch with nothing to return waits (MaxWaitMs) and answers when a produce lands."""
    fetcher, producer = Wire(server), Wire(server)
    topic_id = server.coordinator.cluster.topic_id("orders")
    answer = {}

    def fetch():
        answer["r"] = fetcher.call("Fetch", 17, max_wait=10_000, min_bytes=1, max_bytes=1 << 20, isolation_level=0,
                                   session_id=0, session_epoch=-1, topics=[{"topic_id": topic_id, "partitions": [
                                       {"partition": 2, "fetch_offset": 0, "partition_max_bytes": 1 << 20}]}],
                                   forgotten_topics_data=[], rack_id="")
        answer["at"] = time.monotonic()
    t = threading.Thread(target=fetch)
    t.start()
    time.sleep(0.3)
    assert "r" not in answer  # still waiting
    sent = time.monotonic()
    produce(producer, "orders", 2, batch(b"late"))
    t.join(10)
    part = answer["r"].responses[0].partitions[0]
    assert part.high_watermark == 1 and answer["at"] - sent < 5  # well before MaxWaitMs
    # and with nothing produced it answers empty when MaxWaitMs passes
    start = time.monotonic()
    r = fetcher.call("Fetch", 17, max_wait=300, min_bytes=1, max_bytes=1 << 20, isolation_level=0, session_id=0,
                     session_epoch=-1, topics=[{"topic_id": topic_id, "partitions": [
                         {"partition": 2, "fetch_offset": 1, "partition_max_bytes": 1 << 20}]}],
                     forgotten_topics_data=[], rack_id="")
    assert r.responses[0].partitions[0].records == b"" and time.monotonic() - start >= 0.25
    fetcher.close()
    producer.close()


def test_fetch_out_of_range_and_max_bytes(server, wire):
    for v in (b"1", b"2", b"3"):
        produce(wire, "audit", 0, batch(v * 100))

    def fetch(offset, max_bytes):
        r = wire.call("Fetch", 12, max_wait=0, min_bytes=1, max_bytes=max_bytes, isolation_level=0, session_id=0,
                      session_epoch=-1, topics=[{"topic": "audit", "partitions": [
                          {"partition": 0, "fetch_offset": offset, "partition_max_bytes": 1 << 20}]}],
                      forgotten_topics_data=[], rack_id="")
        return r.responses[0].partitions[0]
    assert fetch(9, 1 << 20).error_code == ErrorCode.offset_out_of_range
    one = len(server.coordinator.cluster.read("audit", 0, 0)[0].data)
    # the first batch always goes out, even over max bytes (KIP-74); then only what fits
    assert len(fetch(0, 1).records) == one
    assert len(fetch(0, 2 * one + 1).records) == 2 * one


def test_join_and_sync_wait_for_the_rebalance_without_blocking_others(server):
    """JoinGroup is answered when the coordinator completes it (the initial rebalance delay
    runs on the server's real clock); meanwhile other connections are served."""
    member, other = Wire(server), Wire(server)
    protocols = [{"name": "range", "metadata": b""}]
    member.send("JoinGroup", 9, group_id="g", session_timeout=10_000, rebalance_timeout=10_000, member_id="",
                group_instance_id=None, protocol_type="consumer", protocols=protocols, reason=None)
    _, r = member.receive("JoinGroup", 9)
    assert r.error_code == ErrorCode.member_id_required
    # before sending: the server may read the request (and start the delay) before send() returns
    started = time.monotonic()
    member.send("JoinGroup", 9, group_id="g", session_timeout=10_000, rebalance_timeout=10_000,
                member_id=r.member_id, group_instance_id=None, protocol_type="consumer", protocols=protocols,
                reason=None)
    assert other.call("ApiVersions", 0).error_code == ErrorCode.none  # the loop is free meanwhile
    _, joined = member.receive("JoinGroup", 9)
    assert joined.error_code == ErrorCode.none and joined.leader == joined.member_id, joined
    assert time.monotonic() - started >= 2.5  # group.initial.rebalance.delay.ms (3 s) on the wall clock
    synced = member.call("SyncGroup", 5, group_id="g", generation_id=joined.generation_id,
                         member_id=joined.member_id, group_instance_id=None, protocol_type="consumer",
                         protocol_name="range", assignments=[{"member_id": joined.member_id, "assignment": b"x"}])
    assert (synced.error_code, synced.assignment) == (ErrorCode.none, b"x")
    assert server.call(lambda: server.coordinator.groups["g"].state) == "Stable"
    wait_until(lambda: server.call(lambda: len(server.coordinator.log)) >= 2, 5, "the group's records")
    member.close()
    other.close()


def test_create_partitions_and_delete_records(server, wire):
    r = wire.call("CreatePartitions", 3, timeout=5000, validate_only=False, topics=[
        {"name": "audit", "count": 4, "assignments": None}, {"name": "orders", "count": 2, "assignments": None},
        {"name": "gone", "count": 2, "assignments": None}])
    assert [x.error_code for x in r.results] == [ErrorCode.none, ErrorCode.invalid_partitions,
                                                 ErrorCode.unknown_topic_or_partition]
    assert server.call(lambda: server.coordinator.cluster.partitions("audit")) == 4
    produce(wire, "audit", 3, batch(b"a", b"b", b"c"))
    r = wire.call("DeleteRecords", 2, timeout=5000, topics=[{"name": "audit", "partitions": [
        {"partition_index": 3, "offset": 2}, {"partition_index": 0, "offset": 5}]}])
    assert [(p.error_code, p.low_watermark) for p in r.topics[0].partitions] == \
        [(ErrorCode.none, 2), (ErrorCode.offset_out_of_range, -1)]
    r = wire.call("ListOffsets", 9, replica_id=-1, isolation_level=0, topics=[
        {"name": "audit", "partitions": [{"partition_index": 3, "current_leader_epoch": -1, "timestamp": -2}]}])
    assert r.topics[0].partitions[0].offset == 2


def test_idempotent_producers_sequences_are_checked(server, wire):
    """A retried batch is not appended twice (its first offset is answered again); a gap or
    an older epoch is refused, as Kafka's ProducerStateManager does."""
    def send(seq: int, epoch: int = 0, *values: bytes):
        data = encode_batch([(None, v, 1_700_000_000_000) for v in values or (b"x",)], base_offset=0,
                            producer_id=4242, producer_epoch=epoch, base_sequence=seq)
        p = produce(wire, "audit", 0, data).responses[0].partition_responses[0]
        return p.error_code, p.base_offset
    assert send(0, 0, b"a", b"b") == (ErrorCode.none, 0)
    assert send(2) == (ErrorCode.none, 2)
    assert send(2) == (ErrorCode.none, 2)  # the retry: not appended again
    assert send(0, 0, b"a", b"b") == (ErrorCode.none, 0)
    assert send(7)[0] == ErrorCode.out_of_order_sequence_number
    assert send(0, 1) == (ErrorCode.none, 3)  # a new epoch starts over at 0
    assert send(3, 0)[0] == ErrorCode.invalid_producer_epoch
    assert server.call(lambda: server.coordinator.cluster.end_offset("audit", 0)) == 4


def test_configs_of_topics_brokers_and_groups_in_one_request(server, wire):
    """GROUP resources go to the coordinator, TOPIC and BROKER ones are the broker's; one
    request mixing them is answered in its order."""
    r = wire.call("IncrementalAlterConfigs", 1, validate_only=False, resources=[
        {"resource_type": 2, "resource_name": "orders",
         "configs": [{"name": "retention.ms", "config_operation": 0, "value": "1000"}]},
        {"resource_type": 32, "resource_name": "g",
         "configs": [{"name": "consumer.session.timeout.ms", "config_operation": 0, "value": "50000"}]},
        {"resource_type": 2, "resource_name": "orders",
         "configs": [{"name": "no.such.config", "config_operation": 0, "value": "1"}]}])
    assert [(x.resource_type, x.error_code) for x in r.responses] == \
        [(2, ErrorCode.none), (32, ErrorCode.none), (2, ErrorCode.invalid_config)]
    assert server.call(lambda: server.coordinator.cluster.group_configs) == {"g": {"consumer.session.timeout.ms": 50000}}
    r = wire.call("DescribeConfigs", 4, include_synonyms=False, include_documentation=False, resources=[
        {"resource_type": 32, "resource_name": "g", "configuration_keys": ["consumer.session.timeout.ms"]},
        {"resource_type": 2, "resource_name": "orders", "configuration_keys": ["retention.ms", "cleanup.policy"]},
        {"resource_type": 4, "resource_name": "0", "configuration_keys": ["num.partitions"]},
        {"resource_type": 2, "resource_name": "nope", "configuration_keys": None}])
    got = [(x.resource_type, x.error_code, {c.name: (c.value, c.config_source) for c in x.configs}) for x in r.results]
    assert got == [(32, ErrorCode.none, {"consumer.session.timeout.ms": ("50000", 8)}),
                   (2, ErrorCode.none, {"retention.ms": ("1000", 1), "cleanup.policy": ("delete", 5)}),
                   (4, ErrorCode.none, {"num.partitions": ("1", 4)}),
                   (2, ErrorCode.unknown_topic_or_partition, {})]


def test_a_stopped_server_starts_again_with_its_state():
    """stop() then start(): the same coordinator serves again (a notebook cell re-run)."""
    s = Server(Coordinator(cluster=Cluster({"orders": 1})))
    for round_ in range(2):
        s.start()
        w = Wire(s)
        r = w.commit("again", 0, round_)
        assert r.topics[0].partitions[0].error_code == ErrorCode.none
        w.close()
        s.stop()
    assert [row["offset"] for row in s.coordinator.offsets_table()] == [1]
    assert s.call(lambda: len(s.coordinator.offsets_table())) == 1  # after stop: on the caller's thread


def test_offset_for_leader_epoch_every_partition_has_epoch_0(server, wire):
    produce(wire, "audit", 0, batch(b"a", b"b"))

    def ask(current: int, epoch: int):
        r = wire.call("OffsetForLeaderEpoch", 4, replica_id=-1, topics=[
            {"topic": "audit", "partitions": [{"partition": 0, "current_leader_epoch": current,
                                               "leader_epoch": epoch}]}])
        p = r.topics[0].partitions[0]
        return p.error_code, p.leader_epoch, p.end_offset
    assert ask(0, 0) == (ErrorCode.none, 0, 2)
    assert ask(-1, 3) == (ErrorCode.none, -1, -1)  # no such epoch: undefined
    assert ask(5, 0)[0] == ErrorCode.unknown_leader_epoch
