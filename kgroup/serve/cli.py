"""`kgroup serve`: the subcommand (its parser, which `kgroup.cli` mounts) and the glue around `Server`.

Serves until SIGINT or SIGTERM, then stops cleanly; with --log-dir the coordinator's logs
(`__consumer_offsets`, `__share_group_state`) and every topic's produced batches are written
there as segment files, which `kgroup dump` reads, and a later `kgroup serve --log-dir` on the
same directory reads back to go on where the last run stopped.
"""
from __future__ import annotations

import argparse
import signal
import threading
from pathlib import Path
from typing import Any, TextIO

from kgroup.errors import ConfigError
from kgroup.lab import parse_fault
from kgroup.lab.releases import RELEASES

#: --config names the broker side takes; every other name is a group coordinator config
_BROKER_CONFIGS = ("auto.create.topics.enable", "num.partitions")


def parse_topic(text: str) -> tuple[str, int]:
    """NAME[:PARTITIONS] -> (name, partitions); one partition by default."""
    name, _, count = text.rpartition(":") if ":" in text else (text, "", "1")
    if not name or not count.isdigit() or int(count) < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: expected NAME or NAME:PARTITIONS (PARTITIONS >= 1)")
    return name, int(count)


def parse_config(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"{text!r}: expected KEY=VALUE")
    return key.strip(), value.strip()


def add_serve_parser(top: Any, formatter: Any) -> argparse.ArgumentParser:
    """Add the `serve` command to the `kgroup` subparsers `top`."""
    p = top.add_parser("serve", help="serve real Kafka clients on loopback", formatter_class=formatter,
                       description="A Kafka-protocol endpoint in front of kgroup's coordinator: one broker\n"
                                   "leading every partition (or --brokers N sharing them), groups served by\n"
                                   "kgroup. Prints the addresses it listens on; stops on SIGINT/SIGTERM.",
                       epilog="examples:\n  kgroup serve --topic orders:3 --log-dir /tmp/kgroup-logs\n"
                              "  kgroup serve --brokers 3 --kafka-version 3.9\n"
                              "  kgroup serve --fault 'Heartbeat group=g delay=12000 times=1' "
                              "--fault 'OffsetCommit drop=after nth=2'\n")
    add_arguments(p)
    p.set_defaults(run=run, prog_name="kgroup serve")
    return p


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The `serve` command's arguments."""
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)")
    p.add_argument("--port", type=int, default=9092, help="port to listen on; 0 picks a free one (default: 9092)")
    p.add_argument("--topic", type=parse_topic, action="append", default=[], metavar="NAME[:PARTITIONS]",
                   help="create a topic at start (repeatable)")
    p.add_argument("--profile", choices=("kip", "kafka"), default="kip",
                   help="kip: as the KIPs specify; kafka: as Apache Kafka behaves (default: kip)")
    p.add_argument("--config", type=parse_config, action="append", default=[], metavar="KEY=VALUE",
                   help="a group coordinator config, or auto.create.topics.enable / num.partitions (repeatable)")
    p.add_argument("--log-dir", metavar="DIR",
                   help="go on from the logs there (if any) and write them back as segment files when stopping")
    p.add_argument("--brokers", type=_positive, default=1, metavar="N",
                   help="listen as N brokers (ids 0..N-1, on PORT, PORT+1, ...) sharing the partitions (default: 1)")
    p.add_argument("--kafka-version", default="4.4", choices=list(RELEASES), metavar="X.Y",
                   help=f"answer as that Kafka release: its ApiVersions and refusals ({', '.join(RELEASES)}; "
                        "default: 4.4)")
    p.add_argument("--fault", type=_fault, action="append", default=[], metavar="RULE",
                   help="a fault rule, e.g. 'Heartbeat group=g delay=12000 times=1' or "
                        "'JoinGroup error=NOT_COORDINATOR nth=1' (repeatable; see kgroup.lab.Fault)")
    p.add_argument("--load-ms", type=int, default=0, metavar="MS",
                   help="how long a coordinator taking a partition over loads it (default: 0)")


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a whole number >= 1")
    return int(text)


def _fault(text: str) -> Any:
    try:
        return parse_fault(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Serve until interrupted; returns the exit status."""
    from kgroup.cluster import Cluster
    from kgroup.coordinator import Coordinator
    from kgroup.serve.server import Server
    broker = {k: v for k, v in args.config if k in _BROKER_CONFIGS}
    coordinator_config = {k: v for k, v in args.config if k not in _BROKER_CONFIGS}
    try:
        auto_create = {"true": True, "false": False}[broker.get("auto.create.topics.enable", "true").lower()]
        partitions = int(broker.get("num.partitions", "1"))
    except (KeyError, ValueError):
        raise ConfigError(f"bad broker config: {broker}") from None
    cluster = Cluster()
    resumed = args.log_dir is not None and _has_logs(args.log_dir)
    if resumed:
        read_topics(cluster, args.log_dir)
        coordinator = Coordinator.load(args.log_dir, cluster=cluster, config=coordinator_config, profile=args.profile)
    else:
        coordinator = Coordinator(cluster=cluster, config=coordinator_config, profile=args.profile)
    for name, count in args.topic:
        if name not in cluster:
            cluster.create_topic(name, count)
    server = Server(coordinator, args.host, args.port, auto_create_topics=auto_create, brokers=args.brokers,
                    kafka_version=args.kafka_version, faults=args.fault, load_ms=args.load_ms)
    server.broker.default_partitions = partitions
    stop = threading.Event()
    previous = {sig: signal.signal(sig, lambda *_: stop.set()) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        try:
            server.start()
        except OSError as exc:  # e.g. the port is taken
            err.write(f"kgroup serve: error: cannot listen on {args.host}:{args.port}: {exc.strerror or exc}\n")
            return 2
        out.write(f"kgroup serve: listening on {server.bootstrap}\n")
        if resumed:
            out.write(f"kgroup serve: going on from {args.log_dir}: {len(coordinator.log)} log entries, "
                      f"{len(coordinator.groups)} group(s), {len(cluster.topics())} topic(s)\n")
        out.flush()
        while not stop.wait(0.5):  # a timed wait: signals reach the main thread between waits
            pass
    finally:
        server.stop()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if args.log_dir:
        written = write_logs(coordinator, args.log_dir)
        out.write(f"kgroup serve: wrote {len(written)} segment(s) to {args.log_dir}\n")
    out.write("kgroup serve: stopped\n")
    return 0


def write_logs(coordinator: Any, directory: str | Path) -> list[Path]:
    """The coordinator's logs and the topics' data as `<topic>-<p>/<base offset>.log` segments;
    each topic partition's directory also gets Kafka's `partition.metadata` (its topic id), so that
    a later run reads the topics back with their ids (`read_topics`)."""
    from kgroup.log.partitioner import kafka_uuid_str
    from kgroup.log.segment import write_segment
    paths = list(coordinator.log.write(directory))
    for log in coordinator.logs.values():
        paths += log.write(directory)
    for topic in coordinator.cluster.topics():
        for p in range(topic.partitions):
            where = Path(directory) / f"{topic.name}-{p}"
            where.mkdir(parents=True, exist_ok=True)
            (where / _PARTITION_METADATA).write_text(f"version: 0\ntopic_id: {kafka_uuid_str(topic.topic_id)}\n")
            data = topic.logs.get(p)
            if data is not None and data.batches:
                paths.append(write_segment(where, data.batches[0].base_offset, [b.data for b in data.batches]))
    return paths


#: Kafka's file naming a partition directory's topic id
_PARTITION_METADATA = "partition.metadata"
_COORDINATOR_TOPICS = ("__consumer_offsets", "__share_group_state")


def _has_logs(directory: str | Path) -> bool:
    d = Path(directory)
    return d.is_dir() and any(x.is_dir() and x.name.startswith(_COORDINATOR_TOPICS) for x in d.iterdir())


def read_topics(cluster: Any, directory: str | Path) -> list[str]:
    """The topics `write_logs` wrote to `directory`, back into `cluster` with their ids, partition
    counts and batches (transaction markers written again where they were); returns their names."""
    from kgroup.log.model import CorruptBatch
    from kgroup.log.partitioner import parse_kafka_uuid
    from kgroup.log.segment import parse_partition_dir_name, segment_files
    from kgroup.log.batch import read_batches
    found: dict[str, dict[int, Path]] = {}
    for d in sorted(Path(directory).iterdir()):
        parsed = parse_partition_dir_name(d.name) if d.is_dir() else None
        if parsed is not None and parsed[0] not in _COORDINATOR_TOPICS and (d / _PARTITION_METADATA).exists():
            found.setdefault(parsed[0], {})[parsed[1]] = d
    for name, partitions in found.items():
        meta = dict(line.split(": ", 1) for line in
                    next(iter(partitions.values())).joinpath(_PARTITION_METADATA).read_text().splitlines() if ": " in line)
        cluster.create_topic(name, max(partitions) + 1, topic_id=parse_kafka_uuid(meta["topic_id"]))
        for p, d in partitions.items():
            for segment in segment_files(d):
                data = segment.read_bytes()
                for batch in read_batches(data, source=str(segment)):
                    if isinstance(batch, CorruptBatch):
                        raise ValueError(f"{segment}: a corrupt batch at byte {batch.position}: {batch.reason}")
                    if cluster.end_offset(name, p) < batch.base_offset:
                        cluster.set_end_offset(name, p, batch.base_offset)
                    marker = batch.control_marker
                    if marker is not None:
                        cluster.end_transaction(name, p, batch.producer_id, commit=marker.is_commit)
                    else:
                        cluster.append_batch(name, p, data[batch.position:batch.position + batch.size],
                                             last_offset_delta=batch.last_offset_delta,
                                             max_timestamp=batch.max_timestamp, producer_id=batch.producer_id,
                                             transactional=batch.is_transactional)
    return list(found)
