"""Real Kafka Streams applications (Kafka's Java library) as subprocesses, for the tests and
notebooks: the one Streams client there is, pointed at Apache Kafka or at `kgroup serve`.

    app = StreamsInstance(bootstrap, "clicks", topology="stateful", name="A",
                          config={"group.protocol": "streams", "num.stream.threads": 2}).start()
    app.wait_for(lambda i: i.state == "RUNNING" and i.active)
    app.active, app.standby           # the tasks it reports, e.g. ["0_0", "0_1"]
    app.close(leave=True)             # KafkaStreams.close with LEAVE_GROUP (or app.kill())

The application's source (`StreamsApp.java`, a small family of topologies) is compiled with
`javac` against the Kafka jars on first use and cached beside the classpath; nothing prebuilt
ships. Each instance reports JSON lines on stdout: state transitions, its active and standby
tasks whenever they change, the records it processed.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from kgroup.oracle.kafka import KAFKA_VERSION, KafkaUnavailable, _file_lock, _require, cache_dir, kafka_classpath

#: the topologies StreamsApp.java builds, and the topics each reads (before the run's prefix)
TOPOLOGIES = {
    "stateless": ("in",),
    "stateful": ("in",),
    "join": ("in", "right"),
    "stateful-v2": ("in", "in2"),
}
#: the Java sources: a clone's tests/streams_apps (KGROUP_STREAMS_APPS overrides)
SOURCES = Path(os.environ.get("KGROUP_STREAMS_APPS")
               or Path(__file__).resolve().parents[2] / "tests" / "streams_apps")
# client logs go to a file per instance: stdout carries only the JSON reports
_LOG4J = """status = warn
appender.file.type = File
appender.file.name = file
appender.file.fileName = {log}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p [%t] %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = file
"""


def java_classes(sources: Path = SOURCES, version: str = KAFKA_VERSION) -> Path:
    """The Java sources in `sources` compiled against Kafka `version`'s jars (javac on first use,
    cached by the sources' hash); raises KafkaUnavailable without a JDK or the sources."""
    files = sorted(Path(sources).glob("*.java"))
    if not files:
        raise KafkaUnavailable(f"no Java sources in {sources} (a clone's tests/ holds them)")
    classpath = kafka_classpath(version)
    javac = _require("javac")
    digest = hashlib.sha256(b"".join(f.name.encode() + f.read_bytes() for f in files)).hexdigest()[:16]
    out = cache_dir(version) / "classes" / digest
    if (out / ".compiled").exists():
        return out
    with _file_lock(cache_dir(version) / ".lock"):
        if (out / ".compiled").exists():
            return out
        out.parent.mkdir(parents=True, exist_ok=True)
        partial = Path(tempfile.mkdtemp(prefix="javac-", dir=out.parent))
        proc = subprocess.run([javac, "-d", str(partial), "-cp", classpath, *map(str, files)],
                              capture_output=True, text=True)
        if proc.returncode:
            shutil.rmtree(partial, ignore_errors=True)
            raise KafkaUnavailable(f"javac could not compile {sources}:\n{proc.stderr[-3000:]}")
        (partial / ".compiled").touch()
        shutil.rmtree(out, ignore_errors=True)
        partial.replace(out)
    return out


class StreamsInstance:
    """One Kafka Streams application instance (a JVM) and what it reported.

    `config`: StreamsConfig entries (`group.protocol`, `num.stream.threads`, `group.instance.id`,
    `num.standby.replicas`, `processing.guarantee`, ...); `prefix`: put before the source and sink
    topic names (the internal topics are named after `application_id`, as Kafka Streams names them);
    `topics`: some of those names replaced outright, e.g. {"in": "orders"}.
    """

    def __init__(self, bootstrap: str, application_id: str, *, topology: str = "stateless",
                 name: str = "app", prefix: str = "", topics: Mapping[str, str] | None = None,
                 config: Mapping[str, Any] | None = None,
                 directory: str | os.PathLike | None = None, version: str = KAFKA_VERSION,
                 heap_mb: int = 256) -> None:
        if topology not in TOPOLOGIES:
            raise ValueError(f"unknown topology {topology!r}; one of {', '.join(TOPOLOGIES)}")
        self.bootstrap, self.application_id, self.topology = bootstrap, application_id, topology
        self.name, self.prefix, self.version, self.heap_mb = name, prefix, version, heap_mb
        self.topics = dict(topics or {})
        self.config = {k: str(v) for k, v in (config or {}).items()}
        self._own_dir = directory is None
        self.directory = Path(directory) if directory is not None else Path(tempfile.mkdtemp(prefix=f"kgroup-streams-{name}-"))
        #: every report, in order: {"t": ms since the JVM started, "event": ..., ...}
        self.events: list[dict] = []
        self.process: subprocess.Popen | None = None
        self._changed = threading.Condition()
        self._reader: threading.Thread | None = None

    # -- what it reported --------------------------------------------------------------------
    def _last(self, event: str) -> dict | None:
        with self._changed:
            return next((e for e in reversed(self.events) if e["event"] == event), None)

    @property
    def state(self) -> str | None:
        """KafkaStreams' state (CREATED, REBALANCING, RUNNING, PENDING_SHUTDOWN, NOT_RUNNING, ERROR)."""
        e = self._last("state")
        return e["to"] if e else None

    @property
    def active(self) -> list[str]:
        e = self._last("tasks")
        return e["active"] if e else []

    @property
    def standby(self) -> list[str]:
        e = self._last("tasks")
        return e["standby"] if e else []

    @property
    def processed(self) -> int:
        e = self._last("processed")
        return e["count"] if e else 0

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def wait_for(self, condition: Callable[["StreamsInstance"], bool], what: str = "", timeout: float = 60.0) -> None:
        """Block until `condition(self)` holds; fails with the instance's last reports and log
        lines after `timeout` seconds or if the JVM ends first."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while not condition(self):
                left = deadline - time.monotonic()
                if left <= 0 or (self.process is not None and self.process.poll() is not None and not condition(self)):
                    raise TimeoutError(f"{self.name}: {what or 'condition'} not reached in {timeout:.0f} s; "
                                       f"state {self.state}, active {self.active}, standby {self.standby}\n"
                                       f"last reports: {self.events[-5:]}\nlog tail:\n{self.log_tail()}")
                self._changed.wait(min(left, 0.5))

    def log_tail(self, lines: int = 15) -> str:
        log = self.directory / "client.log"
        return "\n".join(log.read_text(errors="replace").splitlines()[-lines:]) if log.exists() else ""

    # -- lifecycle -----------------------------------------------------------------------------
    def start(self) -> "StreamsInstance":
        classes = java_classes(SOURCES, self.version)
        java = _require("java")
        (self.directory / "log4j2.properties").write_text(_LOG4J.format(log=self.directory / "client.log"))
        config = {"bootstrap.servers": self.bootstrap, "application.id": self.application_id,
                  "client.id": self.name, "state.dir": str(self.directory / "state"), **self.config}
        args = [f"topology={self.topology}", f"prefix={self.prefix}", *(f"topic.{k}={v}" for k, v in self.topics.items()),
                *(f"{k}={v}" for k, v in config.items())]
        self.process = subprocess.Popen(
            [java, f"-Xmx{self.heap_mb}m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
             "-Dlog4j2.configurationFile=" + str(self.directory / "log4j2.properties"),
             "-cp", f"{kafka_classpath(self.version)}{os.pathsep}{classes}", "StreamsApp", *args],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=open(self.directory / "stderr.log", "wb"),
            text=True, bufsize=1)
        self._reader = threading.Thread(target=self._read, name=f"streams-{self.name}", daemon=True)
        self._reader.start()
        return self

    def _read(self) -> None:
        assert self.process is not None and self.process.stdout is not None
        for line in self.process.stdout:
            line = line.strip()
            if not line.startswith("{"):
                continue
            try:
                event = json.loads(line)
            except ValueError:
                continue
            event["at"] = time.monotonic()
            with self._changed:
                self.events.append(event)
                self._changed.notify_all()
        with self._changed:
            self._changed.notify_all()

    def close(self, leave: bool | None = None, timeout: float = 90.0) -> None:
        """KafkaStreams.close: `leave=True` with LEAVE_GROUP (a static member leaves with -1, its
        tasks move), `False` with REMAIN_IN_GROUP (-2 for a static member), `None` the default."""
        if not self.running:
            return
        command = {None: "close", True: "close leave", False: "close remain"}[leave]
        assert self.process is not None and self.process.stdin is not None
        try:
            self.process.stdin.write(command + "\n")
            self.process.stdin.flush()
        except BrokenPipeError:
            pass
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
        if self._reader is not None:
            self._reader.join(5)

    def kill(self) -> None:
        """SIGKILL: the instance vanishes without a word (its member stays until its session times out)."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)

    def cleanup(self) -> None:
        self.kill()
        if self._own_dir:
            shutil.rmtree(self.directory, ignore_errors=True)

    def __enter__(self) -> "StreamsInstance":
        return self.start() if self.process is None else self

    def __exit__(self, *exc: Any) -> None:
        self.close()
        self.cleanup()

    def __repr__(self) -> str:
        return (f"StreamsInstance({self.name!r}, {self.application_id!r}, {self.topology}, state={self.state}, "
                f"active={self.active}, standby={self.standby})")


# -- several instances ------------------------------------------------------------------------
def settled(instances: list[StreamsInstance], tasks: int, spread: int = 1) -> bool:
    """Every instance RUNNING, the `tasks` active tasks each owned exactly once and spread evenly
    (counts `spread` apart at most): a member still waiting for tasks another has not released
    yet does not look settled. Instances with several stream threads are balanced per thread, so
    their counts may lie further apart: pass a larger `spread`."""
    owners: dict[str, int] = {}
    for i in instances:
        for t in i.active:
            owners[t] = owners.get(t, 0) + 1
    counts = [len(i.active) for i in instances]
    return bool(instances) and all(i.state == "RUNNING" for i in instances) and len(owners) == tasks \
        and all(n == 1 for n in owners.values()) and max(counts) - min(counts) <= spread


def wait_settled(instances: Callable[[], list[StreamsInstance]], tasks: int, what: str, timeout: float = 90.0) -> None:
    """Block until `settled(instances(), tasks)`; fails early if an instance dies or errs."""
    deadline = time.monotonic() + timeout
    while not settled(instances(), tasks):
        live = instances()
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: not settled in {timeout:.0f} s: {live}\n"
                               + "\n".join(f"{i.name}: {i.log_tail(5)}" for i in live))
        for i in live:
            if i.state == "ERROR" or not i.running:
                raise RuntimeError(f"{what}: {i!r} failed:\n{i.log_tail()}")
        time.sleep(0.2)


class LiveStreams:
    """Real Kafka Streams instances against an embedded, recording `kgroup serve`, for the
    notebooks' `client="kafka-streams"` runs: start and stop instances, mark phases, then step
    through what the coordinator served (`widgets.served.served_scenario(live.server, group=...)`).

        live = LiveStreams({"orders": 4}, application_id="orders-app", profile="kip")   # "in" is "orders"
        live.start("A"); live.start("B"); live.wait_settled(4, "A and B share the tasks")
        live.mark("A and B")
        live.stop()
    """

    def __init__(self, topics: Mapping[str, int], *, application_id: str = "app", profile: str = "kafka",
                 records: int = 20, topology: str = "stateless", config: Mapping[str, Any] | None = None,
                 group_configs: Mapping[str, Any] | None = None, names: Mapping[str, str] | None = None) -> None:
        from kgroup.cluster import Cluster
        from kgroup.coordinator import Coordinator
        from kgroup.serve import Server
        self.application_id, self.topology = application_id, topology
        #: the topologies' topic names as this run calls them (StreamsApp's "in" -> "orders", ...)
        self.names = {"in": "orders", "in2": "payments", "right": "customers", "out": "orders-out",
                      "counts-out": "order-counts", "out2": "payments-out", "joined-out": "joined",
                      **(names or {})}
        self.config = {"group.protocol": "streams", "commit.interval.ms": 200, **(config or {})}
        self.server = Server(Coordinator(cluster=Cluster(), profile=profile), auto_create_topics=True,
                             record=True).start()
        self.instances: dict[str, StreamsInstance] = {}
        #: (label, the sequence number of the phase's last exchange)
        self.phases: list[tuple[str, int]] = []
        # one directory per instance name, kept across restarts (its state, its process id)
        self.directory = Path(tempfile.mkdtemp(prefix="kgroup-live-streams-"))
        try:
            self.create_topics(topics, records)
            if group_configs:
                self.set_group_configs(group_configs)
        except Exception:
            self.server.stop()
            raise

    @property
    def bootstrap(self) -> str:
        return self.server.bootstrap

    def create_topics(self, topics: Mapping[str, int], records: int = 0) -> None:
        """Create source topics (CreateTopics) and produce `records` keyed records to each."""
        from confluent_kafka import Producer
        from confluent_kafka.admin import AdminClient, NewTopic
        if not topics:
            return
        quiet = {"bootstrap.servers": self.bootstrap, "log_level": 3}
        admin = AdminClient(quiet)
        for f in admin.create_topics([NewTopic(t, n, 1) for t, n in topics.items()]).values():
            f.result(timeout=30)
        if records:
            p = Producer(quiet)
            for t, n in topics.items():
                for i in range(records):
                    p.produce(t, key=b"k%d" % (i % 10), value=b"k%d:v%d" % (i % 7, i), partition=i % n)
            if p.flush(30):
                raise RuntimeError("records not delivered to kgroup serve")

    def set_group_configs(self, configs: Mapping[str, Any]) -> None:
        """IncrementalAlterConfigs on the application's group (e.g. streams.num.standby.replicas),
        as `kafka-configs --entity-type groups` sends it."""
        from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType
        entries = [ConfigEntry(k, str(v), incremental_operation=AlterConfigOpType.SET) for k, v in configs.items()]
        admin = AdminClient({"bootstrap.servers": self.bootstrap, "log_level": 3})
        for f in admin.incremental_alter_configs([ConfigResource(ResourceType.GROUP, self.application_id,
                                                                 incremental_configs=entries)]).values():
            f.result(timeout=30)

    def start(self, name: str, topology: str | None = None, **config: Any) -> StreamsInstance:
        """Start instance `name` (again: a restart of the same instance, with its state directory)."""
        old = self.instances.get(name)
        if old is not None:
            old.kill()
        home = self.directory / name
        home.mkdir(exist_ok=True)
        inst = StreamsInstance(self.bootstrap, self.application_id, topology=topology or self.topology,
                               name=name, topics=self.names, config={**self.config, **config}, directory=home)
        self.instances[name] = inst.start()
        return inst

    def delete_group(self) -> None:
        """DeleteGroups for the application's group (what `kafka-streams-groups --delete` sends)."""
        from confluent_kafka.admin import AdminClient
        admin = AdminClient({"bootstrap.servers": self.bootstrap, "log_level": 3})
        for f in admin.delete_consumer_groups([self.application_id]).values():
            f.result(timeout=30)

    @property
    def live(self) -> list[StreamsInstance]:
        return [i for i in self.instances.values() if i.running]

    def wait_settled(self, tasks: int, what: str, timeout: float = 90.0) -> None:
        wait_settled(lambda: self.live, tasks, what, timeout)

    def mark(self, label: str) -> None:
        """End a phase here: (label, the sequence number of the last exchange recorded so far)."""
        recorded = self.server.exchanges()
        self.phases.append((label, recorded[-1].seq if recorded else -1))

    def member_names(self) -> dict[str, str]:
        """Member ids named after their instances, from the recorded StreamsGroupHeartbeats: "A"
        for A's first member id, "A'" for the one it came back with after a restart, and so on."""
        names: dict[str, str] = {}
        taken: dict[str, int] = {}
        for x in self.server.exchanges():
            if x.api_key != 88 or x.response is None or not x.response.member_id:
                continue
            member = x.response.member_id
            if member not in names:
                instance = (x.client_id or "?").split("-StreamThread-")[0]
                names[member] = instance + "'" * taken.get(instance, 0)
                taken[instance] = taken.get(instance, 0) + 1
        return names

    def close_instances(self) -> None:
        """Close every instance still running (leaving the group); the server keeps serving, so
        the recorded run can still be looked back on."""
        for i in self.instances.values():
            i.close(leave=True)

    def stop(self) -> None:
        self.close_instances()
        self.server.stop()
        shutil.rmtree(self.directory, ignore_errors=True)

    def __enter__(self) -> "LiveStreams":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()
