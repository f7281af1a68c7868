#!/usr/bin/env python3
"""How long until a group of real Kafka Streams instances is Stable: Apache Kafka 4.4.0 vs
`kgroup serve`, the same application and the same configs on both.

    python benchmarks/streams_apps.py [--instances 3 10] [--threads 4] [--partitions 48]

For each size, N instances of the stateless application of tests/streams_apps (Kafka Streams
4.4.0, group.protocol=streams, `--threads` stream threads each) are started at once; the time
runs from the first start to the moment every instance is RUNNING with the topic's tasks each
owned once, spread as evenly as the sticky assignor spreads them over the stream threads (so
instance counts at most `--threads` apart), as the instances themselves report. Kafka's defaults stay,
among them group.streams.initial.rebalance.delay.ms = 3,000 and a 5 s heartbeat interval, so
neither figure is a coordinator's raw speed: the ratio shows whether kgroup keeps Kafka's pace.
Needs Java 17 and Maven (the jars are fetched on first use). Wall-clock; numbers are printed.
"""
from __future__ import annotations

import argparse
import platform
import secrets
import time

from kgroup.cluster import Cluster
from kgroup.coordinator import Coordinator
from kgroup.oracle.kafka import KAFKA_VERSION, KafkaBroker
from kgroup.oracle.streams import StreamsInstance, java_classes, settled
from kgroup.serve import Server


def time_to_stable(bootstrap: str, instances: int, threads: int, partitions: int, timeout: float) -> float:
    """Seconds from the first instance's start until the group is settled (see module doc)."""
    from confluent_kafka.admin import AdminClient, NewTopic
    token = secrets.token_hex(3)
    admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 3})
    for f in admin.create_topics([NewTopic(f"{token}-in", partitions, 1)]).values():
        f.result(timeout=60)
    apps = [StreamsInstance(bootstrap, f"bench-{token}", topology="stateless", name=f"i{n}", prefix=f"{token}-",
                            config={"group.protocol": "streams", "num.stream.threads": threads})
            for n in range(instances)]
    try:
        start = time.monotonic()
        for a in apps:
            a.start()
        while not settled(apps, partitions, spread=threads):
            if time.monotonic() - start > timeout:
                raise TimeoutError(f"{instances} instances not Stable in {timeout:.0f} s: {apps}")
            time.sleep(0.05)
        return time.monotonic() - start
    finally:
        for a in apps:
            a.kill()
            a.cleanup()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--instances", type=int, nargs="+", default=[3, 10])
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--partitions", type=int, default=48, help="tasks (partitions of the source topic)")
    parser.add_argument("--timeout", type=float, default=300.0)
    args = parser.parse_args()
    java_classes()   # compile before any clock starts
    print(f"Kafka Streams {KAFKA_VERSION}, {args.threads} threads per instance, {args.partitions} tasks; "
          f"{platform.python_implementation()} {platform.python_version()} on {platform.machine()}")
    kafka = KafkaBroker().start()
    server = Server(Coordinator(cluster=Cluster(), profile="kafka"), auto_create_topics=True).start()
    try:
        print(f"{'instances':>9}  {'Kafka ' + KAFKA_VERSION:>14}  {'kgroup serve':>12}  {'kgroup / Kafka':>14}")
        for n in args.instances:
            k = time_to_stable(kafka.bootstrap, n, args.threads, args.partitions, args.timeout)
            g = time_to_stable(server.bootstrap, n, args.threads, args.partitions, args.timeout)
            print(f"{n:>9}  {k:>12.2f} s  {g:>10.2f} s  {g / k:>14.2f}")
    finally:
        server.stop()
        kafka.stop()


if __name__ == "__main__":
    main()
