"""Apache Kafka on loopback: jars fetched with Maven, a single-node KRaft broker+controller
formatted in a temporary directory, and Kafka's own tools (dump-log, the group commands).

    broker = KafkaBroker().start()      # fetches the jars on first use (Maven cache), ~3 s to start
    broker.bootstrap                    # "127.0.0.1:PORT"
    broker.dump_log(broker.segments())  # what kafka-dump-log.sh --offsets-decoder prints
    broker.group_tool("consumer", "--list")
    broker.stop()
"""
from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

#: the Apache Kafka release the oracle runs (and the `kafka` profile follows)
KAFKA_VERSION = "4.4.0"
#: what to run where Java or Maven is missing
ENABLE_HINT = ("apt-get install -y openjdk-17-jdk-headless maven  (Java 17 and Maven; the Kafka "
               f"{KAFKA_VERSION} jars are then fetched from Maven Central on first use)")

#: broker configs every oracle broker gets: one node, replication factor 1 for the internal
#: topics; everything else is Kafka's default unless a caller overrides it
SINGLE_NODE = {
    "offsets.topic.replication.factor": "1",
    "transaction.state.log.replication.factor": "1",
    "transaction.state.log.min.isr": "1",
    "share.coordinator.state.topic.replication.factor": "1",
    "share.coordinator.state.topic.min.isr": "1",
}

#: the Kafka tools' main classes, by the name of their shell script
TOOLS = {
    "kafka-dump-log": "org.apache.kafka.tools.DumpLogSegments",
    "kafka-consumer-groups": "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
    "kafka-share-groups": "org.apache.kafka.tools.consumer.group.ShareGroupCommand",
    "kafka-streams-groups": "org.apache.kafka.tools.streams.StreamsGroupCommand",
    "kafka-groups": "org.apache.kafka.tools.GroupsCommand",
    "kafka-storage": "kafka.tools.StorageTool",
}
_GROUP_TOOLS = {"consumer": "kafka-consumer-groups", "share": "kafka-share-groups",
                "streams": "kafka-streams-groups", "groups": "kafka-groups"}

_POM = """<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>kgroup</groupId><artifactId>kafka-oracle</artifactId><version>1</version>
  <packaging>pom</packaging>
  <dependencies>
{deps}
  </dependencies>
</project>
"""
_ARTIFACTS = [("org.apache.kafka", "kafka_2.13", "{v}"), ("org.apache.kafka", "kafka-tools", "{v}"),
              ("org.apache.kafka", "kafka-streams", "{v}"), ("org.apache.kafka", "kafka-clients", "{v}"),
              # Kafka logs through SLF4J 1.x; this binds it to the log4j2 it ships, so server.log is written
              ("org.apache.logging.log4j", "log4j-slf4j-impl", "2.25.5")]

_LOG4J = """status = warn
appender.file.type = File
appender.file.name = file
appender.file.fileName = {log}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = file
logger.coordinator.name = org.apache.kafka.coordinator
logger.coordinator.level = DEBUG
"""


class KafkaUnavailable(RuntimeError):
    """Java, Maven or the Kafka jars are not to be had here; the message says how to get them."""


def cache_dir(version: str = KAFKA_VERSION) -> Path:
    """Where the resolved classpath of a Kafka release is kept (the jars stay in ~/.m2)."""
    root = os.environ.get("KGROUP_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "kgroup")
    return Path(root) / f"kafka-{version}"


def _require(program: str) -> str:
    path = shutil.which(program)
    if path is None:
        raise KafkaUnavailable(f"`{program}` is not on PATH; the Kafka oracle needs it: {ENABLE_HINT}")
    return path


def kafka_classpath(version: str = KAFKA_VERSION) -> str:
    """The classpath of Kafka `version` (broker, tools, Streams, clients), resolved with Maven
    into the user's Maven cache on first use and remembered; raises KafkaUnavailable."""
    _require("java")
    out = cache_dir(version) / "classpath.txt"
    if out.exists() and all(Path(p).exists() for p in out.read_text().strip().split(os.pathsep)):
        return out.read_text().strip()
    mvn = _require("mvn")
    out.parent.mkdir(parents=True, exist_ok=True)
    with _file_lock(out.parent / ".lock"):
        if out.exists() and all(Path(p).exists() for p in out.read_text().strip().split(os.pathsep)):
            return out.read_text().strip()
        deps = "\n".join(f"    <dependency><groupId>{g}</groupId><artifactId>{a}</artifactId>"
                         f"<version>{v.format(v=version)}</version></dependency>" for g, a, v in _ARTIFACTS)
        (out.parent / "pom.xml").write_text(_POM.format(deps=deps))
        partial = out.with_suffix(".partial")
        proc = subprocess.run([mvn, "-q", "-B", "-f", str(out.parent / "pom.xml"), "dependency:build-classpath",
                               f"-Dmdep.outputFile={partial}"], capture_output=True, text=True)
        if proc.returncode or not partial.exists():
            raise KafkaUnavailable(f"Maven could not fetch Apache Kafka {version} (exit {proc.returncode}):\n"
                                   f"{(proc.stdout + proc.stderr)[-3000:]}")
        partial.replace(out)
    return out.read_text().strip()


@contextlib.contextmanager
def _file_lock(path: Path):
    import fcntl
    with open(path, "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class KafkaBroker:
    """One Apache Kafka node (broker and KRaft controller) on loopback.

    `config`: broker configs over Kafka's defaults (and `SINGLE_NODE`); `directory`: where the
    log dir, configs and `server.log` go (a new temporary directory by default, removed by
    `stop()`); `heap_mb`: the JVM's -Xmx, small enough to sit beside the test suite."""

    def __init__(self, config: Mapping[str, Any] | None = None, *, directory: str | os.PathLike | None = None,
                 heap_mb: int = 512, version: str = KAFKA_VERSION) -> None:
        self.version = version
        self.config = {**SINGLE_NODE, **{k: str(v) for k, v in (config or {}).items()}}
        self.heap_mb = heap_mb
        self._own_dir = directory is None
        self.directory = Path(directory) if directory is not None else None
        self.port: int | None = None
        #: a Kafka this object does not run (`KafkaBroker.external`): its bootstrap
        self.external_bootstrap: str | None = None
        self.process: subprocess.Popen | None = None
        self.pid: int | None = None
        self._classpath: str | None = None
        self._controller_port: int | None = None

    # -- lifecycle -----------------------------------------------------------------------
    @property
    def bootstrap(self) -> str:
        return self.external_bootstrap or f"127.0.0.1:{self.port}"

    @classmethod
    def external(cls, bootstrap: str) -> "KafkaBroker":
        """A handle on a Kafka you run at `bootstrap`: its log dir is not here, so its records are
        read as a consumer reads them (`kgroup.oracle.compare`); Kafka's tools still run against it
        where Java and Maven are here. `start`/`stop` do nothing to it."""
        b = cls()
        b.external_bootstrap = bootstrap
        b._own_dir = False
        return b

    @property
    def log_dir(self) -> Path:
        assert self.directory is not None, "the broker is not started"
        return self.directory / "data"

    @property
    def classpath(self) -> str:
        if self._classpath is None:
            self._classpath = kafka_classpath(self.version)
        return self._classpath

    def start(self, timeout: float = 120.0, *, detached: bool = False) -> "KafkaBroker":
        """Format the log dir and start the node; returns once it answers Metadata with itself.
        `detached`: the JVM gets a session of its own (it outlives this process's signals)."""
        if self.external_bootstrap is not None:
            return self
        classpath = self.classpath
        if self.directory is None:
            self.directory = Path(tempfile.mkdtemp(prefix="kgroup-kafka-"))
        self.directory.mkdir(parents=True, exist_ok=True)
        if self.port is None or self._controller_port is None:   # a restart keeps its ports
            self.port, self._controller_port = _free_port(), _free_port()
        controller = self._controller_port
        props = {
            # node 0, as `kgroup serve`'s one broker (the tools print the coordinator's id)
            "process.roles": "broker,controller", "node.id": "0",
            "listeners": f"PLAINTEXT://127.0.0.1:{self.port},CONTROLLER://127.0.0.1:{controller}",
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{self.port}",
            "controller.listener.names": "CONTROLLER",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            "controller.quorum.bootstrap.servers": f"127.0.0.1:{controller}",
            "log.dirs": str(self.log_dir), **self.config}
        server_properties = self.directory / "server.properties"
        server_properties.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
        (self.directory / "log4j2.properties").write_text(_LOG4J.format(log=self.directory / "server.log"))
        if not (self.log_dir / "meta.properties").exists():
            self._java(TOOLS["kafka-storage"], "format", "--cluster-id", "kgroup-oracle-0000000000",
                       "--config", str(server_properties), "--standalone", timeout=timeout)
        out = open(self.directory / "stdout.log", "ab")
        self.process = subprocess.Popen(
            [*self._jvm(), "-Dlog4j2.configurationFile=" + str(self.directory / "log4j2.properties"),
             "kafka.Kafka", str(server_properties)],
            stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=detached)
        out.close()
        self.pid = self.process.pid
        self._wait_ready(timeout)
        return self

    def stop(self, timeout: float = 30.0) -> None:
        """Stop the node (SIGTERM: a clean shutdown, then SIGKILL) and remove its own directory."""
        if self.pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGTERM)
            deadline = time.monotonic() + timeout
            while _alive(self.pid, self.process) and time.monotonic() < deadline:
                time.sleep(0.1)
            if _alive(self.pid, self.process):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(self.pid, signal.SIGKILL)
            self.pid = self.process = None
        if self._own_dir and self.directory is not None:
            shutil.rmtree(self.directory, ignore_errors=True)

    def restart(self, timeout: float = 120.0) -> "KafkaBroker":
        """Stop the node cleanly and start it again on the same ports and log dir, as a broker
        restart does: its clients reconnect to the address they know."""
        own, self._own_dir = self._own_dir, False
        try:
            self.stop()
        finally:
            self._own_dir = own
        return self.start(timeout)

    def __enter__(self) -> "KafkaBroker":
        return self.start() if self.pid is None else self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    # -- sharing one node between processes (pytest-xdist workers) -----------------------
    def describe(self) -> dict:
        """What another process needs to use this node (`KafkaBroker.attach`)."""
        return {"version": self.version, "port": self.port, "pid": self.pid, "directory": str(self.directory),
                "classpath": self.classpath, "config": self.config}

    @classmethod
    def attach(cls, described: Mapping[str, Any]) -> "KafkaBroker":
        """A handle on a node another process started (its `describe()`); `stop()` stops it
        but leaves its directory to the starter."""
        b = cls(described["config"], directory=described["directory"], version=described["version"])
        b._own_dir = False
        b.port, b.pid, b._classpath = described["port"], described["pid"], described["classpath"]
        return b

    # -- Kafka's tools -------------------------------------------------------------------
    def tool(self, name: str, *args: str, timeout: float = 120.0, check: bool = True) -> str:
        """Run one of Kafka's tools (`TOOLS`, by script name) and return what it printed."""
        return self._java(TOOLS[name], *args, timeout=timeout, check=check)

    def dump_log(self, files: Iterable[str | os.PathLike], decoder: str = "offsets") -> str:
        """`kafka-dump-log.sh --offsets-decoder` (or `--share-group-state-decoder`) over `files`."""
        flag = {"offsets": "--offsets-decoder", "share": "--share-group-state-decoder"}[decoder]
        return self.tool("kafka-dump-log", flag, "--files", ",".join(str(f) for f in files))

    def group_tool(self, kind: str, *args: str, bootstrap: str | None = None, check: bool = True) -> str:
        """`kafka-{consumer,share,streams}-groups.sh` or `kafka-groups.sh` against `bootstrap`
        (this node by default; e.g. a `kgroup serve` address to compare)."""
        return self.tool(_GROUP_TOOLS[kind], "--bootstrap-server", bootstrap or self.bootstrap, *args,
                         check=check)

    def segments(self, topic: str = "__consumer_offsets") -> list[Path]:
        """The non-empty segment files of `topic` in the log dir, by partition ([] for an external
        Kafka, whose log dir is elsewhere)."""
        if self.directory is None:
            return []
        dirs = sorted(self.log_dir.glob(f"{topic}-*"), key=lambda p: int(p.name.rsplit("-", 1)[1]))
        return [f for d in dirs for f in sorted(d.glob("*.log")) if f.stat().st_size]

    # -- internals -----------------------------------------------------------------------
    def _jvm(self) -> list[str]:
        # small heap, serial GC and C1 only: the node shares 2 cores with the rest of the suite
        return [_require("java"), f"-Xmx{self.heap_mb}m", "-Xms64m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                "-Xss512k", "-cp", self.classpath]

    def _java(self, main: str, *args: str, timeout: float, check: bool = True) -> str:
        cmd = [_require("java"), "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-cp", self.classpath,
               "-Dlog4j2.level=WARN", main, *args]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        if check and proc.returncode:
            raise RuntimeError(f"{main} {' '.join(args)} failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}"
                               f"{proc.stdout[-2000:]}")
        return proc.stdout

    def _wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process is not None and self.process.poll() is not None:
                raise KafkaUnavailable(f"Apache Kafka {self.version} exited with {self.process.returncode}; "
                                       f"see {self.directory / 'stdout.log'} and server.log:\n{self._tail()}")
            if _answers_metadata(self.port):
                return
            time.sleep(0.2)
        self.stop()
        raise KafkaUnavailable(f"Apache Kafka {self.version} did not answer within {timeout:.0f} s:\n{self._tail()}")

    def _tail(self) -> str:
        assert self.directory is not None
        texts = [p.read_text(errors="replace")[-2000:] for p in (self.directory / "stdout.log",
                                                                  self.directory / "server.log") if p.exists()]
        return "\n".join(texts)


def _alive(pid: int, process: subprocess.Popen | None) -> bool:
    if process is not None:
        return process.poll() is None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie (an exited child of another process) still answers signal 0
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1][0] != "Z"
    return True


def _answers_metadata(port: int | None, timeout: float = 2.0) -> bool:
    """True once the node lists a broker in a Metadata answer (its listener is up and it has
    joined its own quorum)."""
    from kgroup.protocol import request, response_class
    from kgroup.serve.framing import decode_response, encode_request
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            s.sendall(encode_request(1, request("Metadata", 12, topics=[], allow_auto_topic_creation=False,
                                                include_topic_authorized_operations=False)))
            size = struct.unpack(">i", _read(s, 4))[0]
            _, answer = decode_response(_read(s, size), response_class("Metadata", 12))
            return bool(answer.brokers)
    except (OSError, ValueError, struct.error):
        return False


def _read(s: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = s.recv(n - len(data))
        if not chunk:
            raise ConnectionError("closed")
        data += chunk
    return data


def shared_broker(state_dir: str | os.PathLike, config: Mapping[str, Any] | None = None,
                  owner_pid: int | None = None) -> KafkaBroker:
    """One node shared by the processes that agree on `state_dir` (pytest-xdist workers): the
    first caller starts it, detached, with a reaper that stops it when `owner_pid` (the pytest
    controller) ends; later callers attach. `stop_shared_broker(state_dir)` stops it."""
    state = Path(state_dir)
    state.mkdir(parents=True, exist_ok=True)
    with _file_lock(state / "broker.lock"):
        described = state / "broker.json"
        if described.exists():
            return KafkaBroker.attach(json.loads(described.read_text()))
        broker = KafkaBroker(config, directory=state / "kafka").start(detached=True)
        described.write_text(json.dumps(broker.describe()))
        if owner_pid is not None:
            _reap_when_gone(owner_pid, broker.pid)
        return broker


def stop_shared_broker(state_dir: str | os.PathLike) -> None:
    """Stop the node `shared_broker(state_dir)` started, if any."""
    described = Path(state_dir) / "broker.json"
    if described.exists():
        KafkaBroker.attach(json.loads(described.read_text())).stop()
        described.unlink()


def _reap_when_gone(owner_pid: int, pid: int) -> None:
    """A tiny detached watcher: SIGTERM then SIGKILL `pid` once `owner_pid` has exited."""
    script = ("import os,sys,time,signal\n"
              "o,p=int(sys.argv[1]),int(sys.argv[2])\n"
              "def up(x):\n"
              "  try: os.kill(x,0); return True\n"
              "  except OSError: return False\n"
              "while up(o) and up(p): time.sleep(1)\n"
              "if up(p):\n"
              "  os.kill(p,signal.SIGTERM); time.sleep(20)\n"
              "  if up(p): os.kill(p,signal.SIGKILL)\n")
    import sys
    subprocess.Popen([sys.executable, "-c", script, str(owner_pid), str(pid)], start_new_session=True,
                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
