"""Bad input never takes kgroup serve down: what Kafka answers is answered (ApiVersions too
new), everything else it cannot read closes that one connection, as Kafka's network layer
does; other connections and the coordinator carry on."""
from __future__ import annotations

import random
import socket
import struct
import time

import pytest
from serve_testing import Wire

from kgroup.errors import ErrorCode
from kgroup.log.batch import encode_batch
from kgroup.protocol import request
from kgroup.serve.framing import encode_request


def raw(server, data: bytes, *, half_close: bool = True, timeout: float = 2.0) -> tuple[bytes, bool]:
    """Send `data` on a new connection; (what came back, whether the server closed it)."""
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=timeout)
    try:
        sock.sendall(data)
        if half_close:
            sock.shutdown(socket.SHUT_WR)
        got = b""
        while True:
            try:
                chunk = sock.recv(65536)
            except socket.timeout:
                return got, False
            except ConnectionError:
                return got, True
            if not chunk:
                return got, True
            got += chunk
    finally:
        sock.close()


def still_serving(server) -> None:
    """A normal client's requests are answered, and the coordinator still takes requests."""
    assert server._thread is not None and server._thread.is_alive()
    w = Wire(server)
    assert w.call("ApiVersions", 3, client_software_name="t", client_software_version="1").error_code == ErrorCode.none
    r = w.call("Metadata", 12, topics=None, allow_auto_topic_creation=False)
    assert {t.name for t in r.topics} >= {"orders"}
    r = w.commit("after-fuzz", 0, 0)
    assert r.topics[0].partitions[0].error_code == ErrorCode.none
    w.close()


def frame(body: bytes) -> bytes:
    return struct.pack(">i", len(body)) + body


def test_unknown_api_key_closes_the_connection(server):
    got, closed = raw(server, frame(struct.pack(">hhih", 9999, 0, 1, -1)), half_close=False)
    assert (got, closed) == (b"", True)
    still_serving(server)


def test_unsupported_version_closes_the_connection(server):
    got, closed = raw(server, frame(struct.pack(">hhih", 3, 99, 1, -1)), half_close=False)
    assert (got, closed) == (b"", True)


@pytest.mark.parametrize("size", [-1, 3, 2 ** 31 - 1, 100 * 1024 * 1024 + 1])
def test_absurd_sizes_close_the_connection_at_once(server, size):
    """Refused from the size alone, before any of the announced bytes arrive."""
    got, closed = raw(server, struct.pack(">i", size), half_close=False)
    assert (got, closed) == (b"", True)  # within raw()'s 2 s read timeout, no announced byte sent
    still_serving(server)


def test_malformed_body_closes_the_connection(server):
    good = encode_request(1, request("Metadata", 12, topics=[{"name": "orders"}]))
    truncated = good[4:-3]
    got, closed = raw(server, frame(truncated), half_close=False)
    assert (got, closed) == (b"", True)
    still_serving(server)


def test_disconnect_mid_request_and_hundreds_of_idle_connections(server):
    good = encode_request(1, request("ApiVersions", 3, client_software_name="t", client_software_version="1"))
    for cut in (2, 4, 9, len(good) - 1):
        sock = socket.create_connection(("127.0.0.1", server.port))
        sock.sendall(good[:cut])
        sock.close()
    idle = [socket.create_connection(("127.0.0.1", server.port)) for _ in range(300)]
    try:
        still_serving(server)
    finally:
        for s in idle:
            s.close()
    still_serving(server)


def _corpus() -> list[bytes]:
    """Valid request frames (size prefix dropped) of the APIs clients send most."""
    batch = encode_batch([(None, b"v", 1_700_000_000_000)], base_offset=0)
    requests = [
        request("ApiVersions", 3, client_software_name="fuzz", client_software_version="1"),
        request("Metadata", 12, topics=[{"name": "orders"}], allow_auto_topic_creation=False),
        request("FindCoordinator", 4, key_type=0, coordinator_keys=["g"]),
        request("JoinGroup", 9, group_id="fz", session_timeout=10_000, rebalance_timeout=10_000, member_id="",
                group_instance_id=None, protocol_type="consumer", protocols=[{"name": "range", "metadata": b""}]),
        request("Heartbeat", 4, group_id="fz", generation_id=1, member_id="m", group_instance_id=None),
        request("OffsetCommit", 9, group_id="fz", generation_id_or_member_epoch=-1, member_id="",
                group_instance_id=None, topics=[{"name": "orders", "partitions": [
                    {"partition_index": 1, "committed_offset": 3, "committed_leader_epoch": -1,
                     "committed_metadata": ""}]}]),
        request("OffsetFetch", 9, groups=[{"group_id": "fz", "member_id": None, "member_epoch": -1, "topics": None}],
                require_stable=False),
        request("Produce", 9, acks=1, timeout=1000, topic_data=[
            {"name": "orders", "partition_data": [{"index": 0, "records": batch}]}]),
        request("Fetch", 12, max_wait=0, min_bytes=1, max_bytes=1 << 16, isolation_level=0, session_id=0,
                session_epoch=-1, topics=[{"topic": "orders", "partitions": [
                    {"partition": 0, "fetch_offset": 0, "partition_max_bytes": 1 << 16}]}],
                forgotten_topics_data=[], rack_id=""),
        request("ListOffsets", 9, replica_id=-1, isolation_level=0, topics=[
            {"name": "orders", "partitions": [{"partition_index": 0, "current_leader_epoch": -1, "timestamp": -1}]}]),
        request("ConsumerGroupHeartbeat", 1, group_id="fz2", member_id="", member_epoch=0, instance_id=None,
                rack_id=None, rebalance_timeout=10_000, subscribed_topic_names=["orders"],
                subscribed_topic_regex=None, server_assignor=None, topic_partitions=[]),
        request("ListGroups", 5, states_filter=[], types_filter=[]),
        request("DescribeGroups", 5, groups=["fz"], include_authorized_operations=False),
    ]
    return [encode_request(i, r)[4:] for i, r in enumerate(requests)]


def _mutate(rng: random.Random, corpus: list[bytes]) -> bytes:
    """One hostile frame (size prefix included)."""
    body = bytearray(rng.choice(corpus))
    kind = rng.randrange(7)
    if kind == 0:  # flipped bytes anywhere, header included
        for _ in range(rng.randint(1, 6)):
            body[rng.randrange(len(body))] = rng.randrange(256)
    elif kind == 1:  # cut short
        body = body[:rng.randrange(len(body))]
    elif kind == 2:  # trailing garbage
        body += rng.randbytes(rng.randint(1, 64))
    elif kind == 3:  # another API key or version on this body
        struct.pack_into(">hh", body, 0, rng.randint(-5, 120), rng.randint(-2, 20))
    elif kind == 4:  # pure noise
        body = bytearray(rng.randbytes(rng.randint(0, 200)))
    elif kind == 5:  # a length or count field blown up
        at = rng.randrange(8, max(9, len(body) - 4))
        struct.pack_into(">i", body, min(at, len(body) - 4), rng.choice([-2, 2 ** 31 - 1, 2 ** 20, -(2 ** 31)]))
    else:  # the size prefix lies
        return struct.pack(">i", len(body) + rng.choice([-3, -1, 1, 50, 2 ** 24])) + bytes(body)
    return frame(bytes(body))


def test_fuzzed_frames_never_take_the_server_down(server):
    """Hundreds of mutated and random frames (bounded in count and time), each on its own
    connection; afterwards a normal client works and the coordinator answers."""
    rng = random.Random(20_241_127)
    corpus = _corpus()
    # a fixed count, whatever the machine's speed; each frame's wait is bounded by raw()'s timeout
    for sent in range(1, 301):
        raw(server, _mutate(rng, corpus), timeout=0.5)
        if sent % 100 == 0:
            still_serving(server)
    still_serving(server)


def test_a_member_gone_while_its_join_waits_does_not_disturb_the_server(server):
    """A JoinGroup held for the rebalance, its client gone meanwhile: the answer goes nowhere,
    the group completes for the others, and the server carries on."""
    join = dict(group_id="gone", session_timeout=6000, rebalance_timeout=6000, protocol_type="consumer",
                protocols=[{"name": "range", "metadata": b""}], reason=None)
    leaving, staying = Wire(server), Wire(server)
    leaving.send("JoinGroup", 9, member_id="", group_instance_id="i-gone", **join)
    staying.send("JoinGroup", 9, member_id="", group_instance_id="i-stay", **join)
    time.sleep(0.2)
    leaving.close()  # mid-request: its JoinGroup is still held
    _, answer = staying.receive("JoinGroup", 9)  # after group.initial.rebalance.delay.ms
    assert answer.error_code == ErrorCode.none and len(answer.members) in (0, 2)
    staying.close()
    still_serving(server)
