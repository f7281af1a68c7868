#!/usr/bin/env python3
"""How fast does `kgroup serve` answer over loopback?

    python benchmarks/serve.py [--seconds 3] [--connections 1 8] [--records 100000] [--no-clients]

1. Round trips on the bare wire (requests encoded once, before the clock starts; a client's
   encoding is not the server's cost): ApiVersions (the framing and codec floor), OffsetCommit
   of one partition (a record written per request), a steady classic Heartbeat; each from 1
   and from N connections at once (one request in flight per connection, as Kafka clients do
   for group requests), the clients in other processes.
2. Produce and Fetch of 1 MiB batches on the wire (MiB/s).
3. With confluent-kafka installed: librdkafka producing `--records` 100-byte records (lz4), then
   a KIP-848 consumer of one group reading them all (records/s end to end).

Wall-clock times on a shared machine; no assertion: the numbers are printed.
"""
from __future__ import annotations

import argparse
import multiprocessing
import platform
import socket
import struct
import time

from kgroup import Cluster, Coordinator
from kgroup.log.batch import encode_batch
from kgroup.protocol import request
from kgroup.serve import Server
from kgroup.serve.framing import encode_request


def _read_frame(sock: socket.socket) -> bytes:
    def exactly(n: int) -> bytes:
        data = bytearray()
        while len(data) < n:
            chunk = sock.recv(n - len(data))
            if not chunk:
                raise ConnectionError("closed")
            data += chunk
        return bytes(data)
    (size,) = struct.unpack(">i", exactly(4))
    return exactly(size)


def _client(port: int, frame: bytes, seconds: float, out) -> None:
    sock = socket.create_connection(("127.0.0.1", port))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    n, stop = 0, time.monotonic() + seconds
    while time.monotonic() < stop:
        sock.sendall(frame)
        _read_frame(sock)
        n += 1
    sock.close()
    out.put(n)


def round_trips(server: Server, frame: bytes, seconds: float, connections: int) -> float:
    """Requests per second with `connections` connections each sending `frame` back to back,
    from other processes (a client thread here would share the server's GIL)."""
    ctx = multiprocessing.get_context("fork")
    out = ctx.Queue()
    procs = [ctx.Process(target=_client, args=(server.port, frame, seconds, out)) for _ in range(connections)]
    for p in procs:
        p.start()
    total = sum(out.get(timeout=seconds + 30) for _ in procs)
    for p in procs:
        p.join()
    return total / seconds


def classic_member(server: Server) -> tuple[str, int]:
    """A Stable one-member classic group "hb"; (member id, generation)."""
    sock = socket.create_connection(("127.0.0.1", server.port))
    join = dict(group_id="hb", session_timeout=60_000, rebalance_timeout=60_000, group_instance_id=None,
                protocol_type="consumer", protocols=[{"name": "range", "metadata": b""}], reason=None)
    sock.sendall(encode_request(1, request("JoinGroup", 9, member_id="i-1", **join)))
    _read_frame(sock)
    sock.close()
    # a static member: no MEMBER_ID_REQUIRED round; the initial delay is 0 in this benchmark
    sock = socket.create_connection(("127.0.0.1", server.port))
    sock.sendall(encode_request(2, request("JoinGroup", 9, member_id="", **{**join, "group_instance_id": "i-1"})))
    _read_frame(sock)
    group = server.call(lambda: server.coordinator.groups["hb"])
    member_id, generation = server.call(lambda: (next(iter(group.members)), group.generation_id))
    sock.sendall(encode_request(3, request("SyncGroup", 5, group_id="hb", generation_id=generation,
                                           member_id=member_id, group_instance_id="i-1", protocol_type="consumer",
                                           protocol_name="range",
                                           assignments=[{"member_id": member_id, "assignment": b""}])))
    _read_frame(sock)
    sock.close()
    return member_id, generation


def wire_benchmarks(args: argparse.Namespace) -> None:
    c = Coordinator(cluster=Cluster({"orders": 8, "bulk": 1}, seed=1),
                    config={"group.initial.rebalance.delay.ms": 0})
    with Server(c) as server:
        member_id, generation = classic_member(server)
        frames = {
            "ApiVersions v3": request("ApiVersions", 3, client_software_name="bench", client_software_version="1"),
            "OffsetCommit v9 (1 partition)": request(
                "OffsetCommit", 9, group_id="bench", generation_id_or_member_epoch=-1, member_id="",
                group_instance_id=None, topics=[{"name": "orders", "partitions": [
                    {"partition_index": 0, "committed_offset": 42, "committed_leader_epoch": -1,
                     "committed_metadata": ""}]}]),
            "Heartbeat v4 (steady)": request("Heartbeat", 4, group_id="hb", generation_id=generation,
                                             member_id=member_id, group_instance_id="i-1"),
        }
        for name, req in frames.items():
            frame = encode_request(1, req)
            cells = [f"{round_trips(server, frame, args.seconds, n):,.0f}/s with {n}" for n in args.connections]
            print(f"  {name:32} " + "   ".join(cells))

        payload = encode_batch([(None, b"x" * 1024, 1_700_000_000_000)] * 1024, base_offset=0)  # ~1 MiB
        produce = encode_request(1, request("Produce", 9, acks=1, timeout=5000, topic_data=[
            {"name": "bulk", "partition_data": [{"index": 0, "records": payload}]}]))
        per_s = round_trips(server, produce, args.seconds, 1)
        print(f"  {'Produce v9, 1 MiB batches':32} {per_s * len(payload) / 2 ** 20:,.0f} MiB/s")
        fetch = encode_request(1, request(
            "Fetch", 12, max_wait=0, min_bytes=1, max_bytes=1 << 20, isolation_level=0, session_id=0,
            session_epoch=-1, topics=[{"topic": "bulk", "partitions": [
                {"partition": 0, "fetch_offset": 0, "partition_max_bytes": 1 << 20}]}],
            forgotten_topics_data=[], rack_id=""))
        per_s = round_trips(server, fetch, args.seconds, 1)
        print(f"  {'Fetch v12, 1 MiB':32} {per_s * len(payload) / 2 ** 20:,.0f} MiB/s")


def client_benchmark(args: argparse.Namespace) -> None:
    try:
        import confluent_kafka as ck
    except ImportError:
        print("  (confluent-kafka is not installed: pip install -e '.[serve]')")
        return
    with Server(Coordinator(cluster=Cluster({"orders": 4}, seed=1),
                            config={"group.initial.rebalance.delay.ms": 0})) as server:
        producer = ck.Producer({"bootstrap.servers": server.bootstrap, "compression.type": "lz4",
                                "linger.ms": 5, "queue.buffering.max.messages": args.records + 1})
        value = b"v" * 100
        start = time.monotonic()
        for i in range(args.records):
            producer.produce("orders", value=value, partition=i % 4)
        producer.flush(60)
        produced = time.monotonic() - start
        consumer = ck.Consumer({"bootstrap.servers": server.bootstrap, "group.id": "bench",
                                "group.protocol": "consumer", "auto.offset.reset": "earliest"})
        consumer.subscribe(["orders"])
        start, n = time.monotonic(), 0
        deadline = start + 120
        while n < args.records and time.monotonic() < deadline:
            n += len([m for m in consumer.consume(10_000, 0.5) if m.error() is None])
        consumed = time.monotonic() - start
        consumer.close()
        print(f"  librdkafka {librdkafka_version(ck)}: produced {args.records:,} records in {produced:.2f} s "
              f"({args.records / produced:,.0f}/s); a KIP-848 consumer read {n:,} in {consumed:.2f} s "
              f"({n / consumed:,.0f}/s, group join included)")


def librdkafka_version(ck) -> str:
    return ck.libversion()[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=3.0, help="per measurement (default 3)")
    parser.add_argument("--connections", type=int, nargs="+", default=[1, 8])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--no-clients", action="store_true", help="skip the confluent-kafka run")
    args = parser.parse_args()
    print(f"kgroup serve over loopback, {platform.python_implementation()} {platform.python_version()}, "
          f"{platform.machine()}")
    wire_benchmarks(args)
    if not args.no_clients:
        client_benchmark(args)


if __name__ == "__main__":
    main()
