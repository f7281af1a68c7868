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
    topic names (the internal topics are named after `application_id`, as Kafka Streams names them).
    """

    def __init__(self, bootstrap: str, application_id: str, *, topology: str = "stateless",
                 name: str = "app", prefix: str = "", config: Mapping[str, Any] | None = None,
                 directory: str | os.PathLike | None = None, version: str = KAFKA_VERSION,
                 heap_mb: int = 256) -> None:
        if topology not in TOPOLOGIES:
            raise ValueError(f"unknown topology {topology!r}; one of {', '.join(TOPOLOGIES)}")
        self.bootstrap, self.application_id, self.topology = bootstrap, application_id, topology
        self.name, self.prefix, self.version, self.heap_mb = name, prefix, version, heap_mb
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
        args = [f"topology={self.topology}", f"prefix={self.prefix}", *(f"{k}={v}" for k, v in config.items())]
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

    def close(self, leave: bool | None = None, timeout: float = 60.0) -> None:
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
