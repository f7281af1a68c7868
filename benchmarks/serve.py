#!/usr/bin/env python3
"""How fast does `kgroup serve` answer over loopback?

    python benchmarks/serve.py [--seconds 3] [--connections 1 8] [--records 2000000]
                               [--consumers 10] [--protocol consumer|classic] [--no-clients]

1. Round trips on the bare wire (requests encoded once, before the clock starts; a client's
   encoding is not the server's cost): ApiVersions (the framing and codec floor), OffsetCommit
   of one partition (a record written per request), steady heartbeats (classic Heartbeat and
   KIP-848 ConsumerGroupHeartbeat: heartbeats/s served); each from 1 and from N connections at
   once (one request in flight per connection, as Kafka clients do for group requests), the
   clients in other processes.
2. Produce and Fetch of 1 MiB batches on the wire (MiB/s).
3. With confluent-kafka installed:
   - a 10-consumer librdkafka group (`--protocol`, KIP-848 by default), one process per
     consumer, reading `--records` 100-byte records (lz4) produced beforehand: the members
     join with their partitions paused, and records/s run from the moment all are resumed to
     the last record any member got (the join is timed apart). Fetch answers
     with the stored batches as they are: `fetch_reencodes()` checks that every fetched byte
     is a stored batch's, and the figure says so;
   - a KIP-848 group of 3 librdkafka consumers, Stable; a 4th joins: the time until the
     coordinator has the group Stable again with the new member owning partitions;
   - failover (`--failover`: only this): a Stable KIP-848 group of 10 librdkafka consumers on a
     three-broker `kgroup serve`; its coordinator moved to another broker, then its broker
     killed: the time until the coordinator holds the group Stable again (every member at the
     group epoch), and until every member's heartbeat has reached the new coordinator. Beside it,
     where Java 17 and Maven are (else it says so; `--no-kafka` skips it), Apache Kafka 4.4.0: one
     node cannot move a partition's leader, so its broker is restarted, and the time until it
     describes the group Stable again.

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


def steady_consumer_heartbeat(server: Server) -> object:
    """A Stable one-member KIP-848 group "chb"; its steady heartbeat (nothing changed: the
    fields a client leaves out once sent)."""
    sock = socket.create_connection(("127.0.0.1", server.port))
    sock.sendall(encode_request(1, request(
        "ConsumerGroupHeartbeat", 1, group_id="chb", member_id="bench-member-00000001", member_epoch=0,
        instance_id=None, rack_id=None, rebalance_timeout=60_000, subscribed_topic_names=["orders"],
        subscribed_topic_regex=None, server_assignor=None, topic_partitions=[])))
    _read_frame(sock)
    sock.close()
    group = server.call(lambda: server.coordinator.groups["chb"])
    member_id, epoch = server.call(lambda: next((m.member_id, m.member_epoch) for m in group.members.values()))
    return request("ConsumerGroupHeartbeat", 1, group_id="chb", member_id=member_id, member_epoch=epoch,
                   instance_id=None, rack_id=None, rebalance_timeout=-1, subscribed_topic_names=None,
                   subscribed_topic_regex=None, server_assignor=None, topic_partitions=None)


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
            "ConsumerGroupHeartbeat v1 (steady)": steady_consumer_heartbeat(server),
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


def _group_consumer(bootstrap: str, protocol: str, index: int, go, out) -> None:
    """One member of the benchmark group, in its own process: (first record at, last record
    at, records read), on the monotonic clock every process shares. Its partitions stay
    paused until `go` (the whole group assigned): nothing is read twice while partitions move."""
    import confluent_kafka as ck
    conf = {"bootstrap.servers": bootstrap, "group.id": "bench-group", "group.protocol": protocol,
            "auto.offset.reset": "earliest", "enable.auto.commit": False, "client.id": f"bench-{index}"}
    if protocol == "classic":
        conf["partition.assignment.strategy"] = "range"
    consumer = ck.Consumer(conf)

    def on_assign(c, partitions) -> None:
        (c.incremental_assign if protocol == "consumer" else c.assign)(partitions)
        if not go.is_set():
            c.pause(partitions)
    consumer.subscribe(["orders"], on_assign=on_assign)
    while not go.is_set():
        consumer.poll(0.05)
    consumer.resume(consumer.assignment())
    first = last = None
    n = 0
    deadline = time.monotonic() + 60
    idle_since = None
    while time.monotonic() < deadline:
        batch = [m for m in consumer.consume(10_000, 0.2) if m.error() is None]
        now = time.monotonic()
        if batch:
            first = first or now
            last, n, idle_since = now, n + len(batch), None
        elif first is not None:
            idle_since = idle_since or now
            if now - idle_since > 1.5:  # its partitions are read to the end
                break
        out.put(("progress", index, n))
    consumer.close()
    out.put(("done", index, (first, last, n)))


def group_throughput(args: argparse.Namespace, ck) -> None:
    partitions = args.consumers
    with Server(Coordinator(cluster=Cluster({"orders": partitions}, seed=1),
                            config={"group.initial.rebalance.delay.ms": 0})) as server:
        producer = ck.Producer({"bootstrap.servers": server.bootstrap, "compression.type": "lz4",
                                "linger.ms": 5, "batch.num.messages": 10_000,
                                "queue.buffering.max.messages": args.records + 1})
        value = b"v" * 100
        start = time.monotonic()
        for i in range(args.records):
            producer.produce("orders", value=value, partition=i % partitions)
        producer.flush(60)
        produced = time.monotonic() - start
        del producer
        stored = server.call(lambda: sum(len(server.coordinator.cluster.read("orders", p, 0))
                                         for p in range(partitions)))
        print(f"  librdkafka {librdkafka_version(ck)} producer: {args.records:,} records (lz4) in {produced:.2f} s "
              f"({args.records / produced:,.0f}/s), stored as {stored:,} batches")
        ctx = multiprocessing.get_context("spawn")
        out, go = ctx.Queue(), ctx.Event()
        procs = [ctx.Process(target=_group_consumer, args=(server.bootstrap, args.protocol, i, go, out))
                 for i in range(args.consumers)]
        started = time.monotonic()
        for p in procs:
            p.start()

        def assigned() -> bool:
            g = server.coordinator.groups.get("bench-group")
            return (g is not None and len(g.members) == args.consumers and g.state == "Stable")
        deadline = time.monotonic() + 90
        while not server.call(assigned) and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)  # the last assignment reaches its member
        joined = time.monotonic() - started
        go_at = time.monotonic()
        go.set()
        results = {}
        while len(results) < len(procs):
            kind, index, value = out.get(timeout=90)
            if kind == "done":
                results[index] = value
        for p in procs:
            p.join(30)
        lasts = [r[1] for r in results.values() if r[1] is not None]
        n = sum(r[2] for r in results.values())
        span = max(lasts) - go_at  # from the go to the last record any member got
        members = sum(1 for r in results.values() if r[2])
        print(f"  {args.consumers} librdkafka consumers ({args.protocol} protocol, one process each): "
              f"{members} got partitions, the group Stable {joined:.2f} s after the processes started (spawn and "
              f"join); then {n:,} records in {span:.2f} s = {n / span:,.0f} records/s")
        print(f"  Fetch re-encodes records: {'yes' if fetch_reencodes(server) else 'no (the stored batches are sent as they are)'}")


def fetch_reencodes(server: Server) -> bool:
    """Whether a Fetch answer carries anything but the stored batches' own bytes."""
    sock = socket.create_connection(("127.0.0.1", server.port))
    sock.sendall(encode_request(1, request(
        "Fetch", 12, max_wait=0, min_bytes=1, max_bytes=1 << 24, isolation_level=0, session_id=0,
        session_epoch=-1, topics=[{"topic": "orders", "partitions": [
            {"partition": 0, "fetch_offset": 0, "partition_max_bytes": 1 << 24}]}],
        forgotten_topics_data=[], rack_id="")))
    frame = _read_frame(sock)
    sock.close()
    stored = server.call(lambda: b"".join(b.data for b in server.coordinator.cluster.read("orders", 0, 0)))
    # the records field holds bytes the server copied from its store: find them verbatim
    return not stored or stored[: 1 << 24] not in frame


def settle_time(ck, interval_ms: int) -> None:
    """A Stable KIP-848 group of 3 librdkafka consumers; a 4th joins: seconds until the
    coordinator has the group Stable with 4 members, the new one owning partitions. Members
    hear of a new target on their next heartbeat: `group.consumer.heartbeat.interval.ms`."""
    with Server(Coordinator(cluster=Cluster({"orders": 12}, seed=1),
                            config={"group.consumer.min.heartbeat.interval.ms": min(interval_ms, 5000),
                                    "group.consumer.heartbeat.interval.ms": interval_ms})) as server:
        conf = {"bootstrap.servers": server.bootstrap, "group.id": "settle", "group.protocol": "consumer",
                "auto.offset.reset": "earliest"}
        consumers = []

        def join(i: int):
            c = ck.Consumer({**conf, "client.id": f"m{i}"})
            c.subscribe(["orders"])
            consumers.append(c)

        def settled(n: int) -> bool:
            def check() -> bool:
                g = server.coordinator.groups.get("settle")
                return (g is not None and len(g.members) == n and g.state == "Stable"
                        and all(m.assigned_partitions for m in g.members.values()))
            return server.call(check)

        def poll_until(n: int, seconds: float) -> float:
            start = time.monotonic()
            while not settled(n):
                if time.monotonic() - start > seconds:
                    raise TimeoutError(f"the group did not settle with {n} members in {seconds} s")
                for c in consumers:
                    c.poll(0.01)
            return time.monotonic() - start
        for i in range(3):
            join(i)
        poll_until(3, 30)
        runs = []
        for i in range(3, 5):  # two joins, one after the other
            join(i)
            runs.append(poll_until(i + 1, 30))
        for c in consumers:
            c.close()
        print(f"  KIP-848 group Stable again after a member joins (3 -> 4 -> 5 librdkafka consumers, 12 partitions, "
              f"heartbeat interval {interval_ms:,} ms): " + ", ".join(f"{r * 1000:,.0f} ms" for r in runs))


FAILOVER_GROUP, FAILOVER_MEMBERS = "failover", 10


class _Polled:
    """librdkafka KIP-848 consumers of one group, polled on a thread."""

    def __init__(self, ck, bootstrap: str, n: int) -> None:
        import threading
        conf = {"bootstrap.servers": bootstrap, "group.id": FAILOVER_GROUP, "group.protocol": "consumer",
                "auto.offset.reset": "earliest"}
        self.consumers = [ck.Consumer({**conf, "client.id": f"m{i}"}) for i in range(n)]
        for c in self.consumers:
            c.subscribe(["orders"])
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            for c in self.consumers:
                c.poll(0.005)

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        for c in self.consumers:
            c.close()


def _until(predicate, seconds: float, what: str) -> float:
    start = time.monotonic()
    while not predicate():
        if time.monotonic() - start > seconds:
            raise TimeoutError(f"{what} took more than {seconds} s")
        time.sleep(0.005)
    return time.monotonic() - start


def kgroup_failover(ck, how: str) -> tuple[float, float]:
    """(s until the coordinator holds the group Stable again, s until every member's heartbeat
    reached the new coordinator) after the coordinator is moved (`how` "move") or its broker
    killed ("kill")."""
    from kgroup.lab import Fault
    server = Server(Coordinator(cluster=Cluster({"orders": 12}, seed=1)), brokers=3).start()
    members = _Polled(ck, server.bootstrap, FAILOVER_MEMBERS)
    try:
        def stable() -> bool:
            def check() -> bool:
                g = server.coordinator.groups.get(FAILOVER_GROUP)
                return (g is not None and len(g.members) == FAILOVER_MEMBERS and g.state == "Stable"
                        and all(m.member_epoch == g.group_epoch for m in g.members.values()))
            return server.call(check)
        _until(stable, 60, "the group's forming")
        old = server.call(lambda: server.leadership.leader("__consumer_offsets",
                                                          server.coordinator.partition_for(FAILOVER_GROUP)))
        new = (old + 1) % 3
        reached: set[str] = set()
        server.add_fault(Fault("ConsumerGroupHeartbeat", group=FAILOVER_GROUP, broker=new, observe=True,
                               when=lambda body: reached.add(body.member_id) or True))
        start = time.monotonic()
        if how == "move":
            server.move_coordinator(FAILOVER_GROUP, new)
        else:
            server.kill_broker(old)
        _until(stable, 60, "the coordinator's taking the group over")
        coordinator_s = time.monotonic() - start
        _until(lambda: len(reached) >= FAILOVER_MEMBERS, 60, "every member's finding the new coordinator")
        return coordinator_s, time.monotonic() - start
    finally:
        members.close()
        server.stop()


def kafka_restart() -> float | None:
    """s until Apache Kafka 4.4.0 (one node) describes the group Stable again after a restart of
    its broker; None without Java and Maven."""
    try:
        import confluent_kafka as ck
        from kgroup.oracle.kafka import KafkaBroker, KafkaUnavailable
        from kgroup.oracle.wire import Wire
        broker = KafkaBroker().start()
    except (ImportError, KafkaUnavailable) as exc:
        print(f"  (Apache Kafka 4.4.0 is not here: {exc})")
        return None

    def stable() -> bool:
        try:
            with Wire(broker.bootstrap, timeout=5) as w:
                d = w.call("ConsumerGroupDescribe", 0, group_ids=[FAILOVER_GROUP],
                           include_authorized_operations=False).groups[0]
        except OSError:
            return False
        return (d.error_code == 0 and d.group_state == "Stable" and len(d.members) == FAILOVER_MEMBERS
                and all(m.member_epoch == d.group_epoch for m in d.members))
    try:
        producer = ck.Producer({"bootstrap.servers": broker.bootstrap})
        producer.produce("orders", b"x")   # creates the topic (auto.create.topics.enable)
        producer.flush(30)
        members = _Polled(ck, broker.bootstrap, FAILOVER_MEMBERS)
        try:
            _until(stable, 120, "the group's forming on Kafka")
            start = time.monotonic()
            broker.restart()
            _until(stable, 120, "Kafka's describing the group Stable again")
            return time.monotonic() - start
        finally:
            members.close()
    finally:
        broker.stop()


def failover(args: argparse.Namespace, ck) -> None:
    print(f"  failover of a Stable KIP-848 group of {FAILOVER_MEMBERS} librdkafka consumers (12 partitions, "
          "heartbeat interval 5 s):")
    for how, what in (("move", "coordinator moved to another broker"), ("kill", "coordinator's broker killed")):
        coordinator_s, clients_s = kgroup_failover(ck, how)
        print(f"    kgroup serve, 3 brokers, {what}: group Stable on the new coordinator after "
              f"{coordinator_s * 1000:,.0f} ms; every member's heartbeat there after {clients_s * 1000:,.0f} ms")
    if not args.no_kafka:
        took = kafka_restart()
        if took is not None:
            print(f"    Apache Kafka 4.4.0, 1 node, broker restarted: group Stable again after {took * 1000:,.0f} ms")


def client_benchmark(args: argparse.Namespace) -> None:
    try:
        import confluent_kafka as ck
    except ImportError:
        print("  (confluent-kafka is not installed: pip install -e '.[serve]')")
        return
    if not args.failover:
        group_throughput(args, ck)
        for interval_ms in (5000, 500):  # Kafka's default, and a tenth of it
            settle_time(ck, interval_ms)
    failover(args, ck)


def librdkafka_version(ck) -> str:
    return ck.libversion()[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=3.0, help="per measurement (default 3)")
    parser.add_argument("--connections", type=int, nargs="+", default=[1, 8])
    parser.add_argument("--records", type=int, default=2_000_000)
    parser.add_argument("--consumers", type=int, default=10, help="members of the throughput group (default 10)")
    parser.add_argument("--protocol", choices=("consumer", "classic"), default="consumer",
                        help="the throughput group's group.protocol (default consumer: KIP-848)")
    parser.add_argument("--no-clients", action="store_true", help="skip the confluent-kafka run")
    parser.add_argument("--failover", action="store_true", help="only the failover times")
    parser.add_argument("--no-kafka", action="store_true",
                        help="with the failover: skip Apache Kafka 4.4.0's broker restarted beside (Java 17, Maven)")
    args = parser.parse_args()
    print(f"kgroup serve over loopback, {platform.python_implementation()} {platform.python_version()}, "
          f"{platform.machine()}")
    if not args.failover:
        wire_benchmarks(args)
    if not args.no_clients:
        client_benchmark(args)


if __name__ == "__main__":
    main()
