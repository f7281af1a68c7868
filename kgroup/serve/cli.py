"""`kgroup serve`: the command-line glue around `Server` (the parser lives in kgroup.cli).

Serves until SIGINT or SIGTERM, then stops cleanly; with --log-dir the coordinator's logs
(`__consumer_offsets`, `__share_group_state`) and every topic's produced batches are written
there as segment files, which `kgroup dump` reads.
"""
from __future__ import annotations

import argparse
import signal
import threading
from pathlib import Path
from typing import Any, TextIO

from kgroup.errors import ConfigError

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


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)")
    p.add_argument("--port", type=int, default=9092, help="port to listen on; 0 picks a free one (default: 9092)")
    p.add_argument("--topic", type=parse_topic, action="append", default=[], metavar="NAME[:PARTITIONS]",
                   help="create a topic at start (repeatable)")
    p.add_argument("--profile", choices=("kip", "kafka"), default="kip",
                   help="kip: as the KIPs specify; kafka: as Apache Kafka behaves (default: kip)")
    p.add_argument("--config", type=parse_config, action="append", default=[], metavar="KEY=VALUE",
                   help="a group coordinator config, or auto.create.topics.enable / num.partitions (repeatable)")
    p.add_argument("--log-dir", metavar="DIR", help="write the logs there as segment files when stopping")


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
    for name, count in args.topic:
        cluster.create_topic(name, count)
    coordinator = Coordinator(cluster=cluster, config=coordinator_config, profile=args.profile)
    server = Server(coordinator, args.host, args.port, auto_create_topics=auto_create)
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
    """The coordinator's logs and the topics' data as `<topic>-<p>/<base offset>.log` segments."""
    from kgroup.log.segment import write_segment
    paths = list(coordinator.log.write(directory))
    for log in coordinator.logs.values():
        paths += log.write(directory)
    for topic in coordinator.cluster.topics():
        for p, data in sorted(topic.logs.items()):
            if data.batches:
                paths.append(write_segment(Path(directory) / f"{topic.name}-{p}", data.batches[0].base_offset,
                                           [b.data for b in data.batches]))
    return paths
