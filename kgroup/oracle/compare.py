"""The differential harness: one real-client scenario run against Apache Kafka and against
`kgroup serve`, compared on what the clients saw, on the records each coordinator wrote, and on
what Kafka's own tools print.

    kafka = KafkaBroker().start()
    result = compare(scenarios.CLASSIC_EAGER, kafka)   # runs it twice (Kafka, then kgroup serve)
    result.differences          # [] when they agree
    print(result.report())      # which step, which field, Kafka vs kgroup

A scenario is a function of one `Run`: it drives real clients at `run.bootstrap`, names its groups
and topics with `run.name(...)` (the same names on both endpoints, fresh on every comparison) and
writes what the clients saw with `run.saw(step, value)`. Only what is legitimately random is
normalised away: member ids, topic ids, hosts, timestamps, and the metadata hash built on topic ids.
"""
from __future__ import annotations

import difflib
import json
import secrets
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kgroup.oracle.kafka import KafkaBroker

#: JSON keys whose values are wall-clock times (kept only when 0 or -1, which mean something)
TIME_KEYS = frozenset({"commitTimestamp", "expireTimestamp", "currentStateTimestamp", "assignmentTimestamp",
                       "createTimestamp", "writeTimestamp", "creationTimeMs", "lastAssignmentTimestamp",
                       "timestamp"})
#: JSON keys holding member ids (and the classic leader, which is one)
MEMBER_KEYS = frozenset({"memberId", "leader"})
#: JSON keys holding topic ids
TOPIC_ID_KEYS = frozenset({"topicId"})
#: hashes over topic ids (random per cluster): equal only in being set or not
HASH_KEYS = frozenset({"metadataHash"})
#: JSON keys holding ids a client makes up at random (a Kafka Streams process id)
RANDOM_ID_KEYS = {"processId": "P"}
#: OffsetCommit's record type
OFFSET_COMMIT = 1
#: ConsumerGroupRegularExpression's record type
REGULAR_EXPRESSION = 16


@dataclass(frozen=True)
class Scenario:
    """A script of real-client actions (`run(Run)`), and the profiles it is compared under."""

    name: str
    description: str
    run: Callable[["Run"], None]
    #: kgroup profiles to compare under: both where no seed forks the behaviour
    profiles: tuple[str, ...] = ("kafka", "kip")
    #: the clients commit on a timer (Kafka Streams' commit.interval.ms): how many commits it
    #: takes to reach an offset is timing, so only each partition's last commit is compared
    timer_commits: bool = False
    #: broker configs the scenario needs on both sides: `kgroup serve` gets them, and the Kafka
    #: it is compared with must have been started with them (`KafkaBroker(config=...)`)
    broker_config: Mapping[str, str] = field(default_factory=dict)


@dataclass
class Run:
    """One scenario on one endpoint: where to connect, how to name things, what was seen."""

    endpoint: str          # "kafka" or "kgroup"
    bootstrap: str
    token: str
    tools: KafkaBroker | None = None
    seen: list[tuple[str, Any]] = field(default_factory=list)
    groups: set[str] = field(default_factory=set)
    #: the steps whose value is a Kafka tool's table
    tool_steps: set[str] = field(default_factory=set)

    def name(self, base: str, group: bool = False) -> str:
        """A name unique to this comparison (the same on both endpoints); `group`: remember it as
        one of the scenario's groups, whose records are compared."""
        full = f"{base}-{self.token}"
        if group:
            self.groups.add(full)
        return full

    def group(self, base: str) -> str:
        return self.name(base, group=True)

    def saw(self, step: str, value: Any) -> None:
        """Record what the clients saw at `step` (plain data; normalised before comparing)."""
        self.seen.append((step, value))

    def tool(self, step: str, kind: str, *args: str, only_mine: bool = False) -> str:
        """Run one of Kafka's group tools against this endpoint and record its table at `step`;
        `only_mine`: keep only the rows that name this run's groups (a listing of a shared broker)."""
        if self.tools is None:
            return ""
        out = self.tools.group_tool(kind, *args, bootstrap=self.bootstrap, check=False)
        if only_mine:
            out = "\n".join(line for line in out.splitlines()
                             if line.split()[:1] in (["GROUP"], ["GROUP-ID"]) or self.token in line)
        self.tool_steps.add(step)
        self.saw(step, normalise_table(out))
        return out


@dataclass(frozen=True)
class Difference:
    """One place where Kafka and kgroup disagree."""

    aspect: str     # "clients saw", "records", "Kafka's decoder", "Kafka's tools"
    where: str      # the step, or group and record number
    kafka: Any
    kgroup: Any

    def __str__(self) -> str:
        return f"[{self.aspect}] {self.where}\n  Kafka:  {self.kafka}\n  kgroup: {self.kgroup}"


@dataclass
class Comparison:
    scenario: str
    profile: str
    kafka: Run
    kgroup: Run
    kafka_records: dict[str, list[dict]]
    kgroup_records: dict[str, list[dict]]
    differences: list[Difference]
    #: aspect -> "equal" / "differs"
    verdicts: dict[str, str]
    #: every exchange `kgroup serve` had with the clients in its run (`kgroup.serve.recording`)
    kgroup_exchanges: list = field(default_factory=list)

    def seen_rows(self) -> list[dict]:
        """What the clients saw, step by step, Kafka beside kgroup (normalised as compared)."""
        rows = []
        for (step, k), (_, g) in zip(self.kafka.seen, self.kgroup.seen):
            k, g = normalise(k), normalise(g)
            rows.append({"step": step, "Kafka": _short(k), "kgroup": _short(g), "same": k == g})
        return rows

    def record_rows(self, group: str) -> list[dict]:
        """The group's records aligned, Kafka's beside kgroup's: a record only one side wrote
        faces a blank."""
        k_docs, g_docs = self.kafka_records.get(group, []), self.kgroup_records.get(group, [])
        k_lines = [json.dumps(d) for d in k_docs]
        g_lines = [json.dumps(d) for d in g_docs]
        rows = []
        for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=k_lines, b=g_lines, autojunk=False).get_opcodes():
            for n in range(max(i2 - i1, j2 - j1)):
                k = k_docs[i1 + n] if i1 + n < i2 else None
                g = g_docs[j1 + n] if j1 + n < j2 else None
                rows.append({"record": record_name(k or g),
                             "Kafka": _record_text(k), "kgroup": _record_text(g), "same": tag == "equal"})
        return rows

    def difference_rows(self) -> list[dict]:
        return [{"aspect": d.aspect, "where": d.where, "Kafka": _short(d.kafka), "kgroup": _short(d.kgroup)}
                for d in self.differences]

    def report(self) -> str:
        if not self.differences:
            return f"{self.scenario} ({self.profile}): Kafka and kgroup agree"
        head = f"{self.scenario} ({self.profile}): {len(self.differences)} difference(s)"
        return "\n".join([head, *(str(d) for d in self.differences)])


def record_name(doc: dict) -> str:
    """A record's type name (e.g. ConsumerGroupCurrentMemberAssignment); `__share_group_state`
    records are told apart by their key's topic id."""
    from kgroup.records import record_type_name
    topic = "__share_group_state" if "topicId" in doc["key"]["data"] else "__consumer_offsets"
    return record_type_name(doc["key"]["type"], topic)


def _record_text(doc: dict | None) -> str:
    if doc is None:
        return ""
    key = {k: v for k, v in doc["key"]["data"].items() if k not in ("groupId", "group")}
    value = doc["value"]["data"] if doc.get("value") else "<tombstone>"
    return f"{json.dumps(key)} → {json.dumps(value)}"


def _short(value: Any) -> str:
    if isinstance(value, list) and value and all(isinstance(r, list) and all(isinstance(x, str) for x in r)
                                                 for r in value):
        return " | ".join(" ".join(r) for r in value)        # a tool's table, row after row
    return value if isinstance(value, str) else json.dumps(value)


# -- normalisation ------------------------------------------------------------------------
class _Names:
    """Random values renamed by first appearance: the first member id seen is M1, and so on."""

    def __init__(self) -> None:
        self.maps: dict[str, dict[Any, str]] = {}

    def __call__(self, kind: str, value: Any) -> str:
        m = self.maps.setdefault(kind, {})
        if value not in m:
            m[value] = f"{kind}{len(m) + 1}"
        return m[value]


def normalise(value: Any, names: _Names | None = None) -> Any:
    """Plain data with member ids, topic ids, times and hashes replaced by stable stand-ins."""
    names = names if names is not None else _Names()

    def walk(v: Any, key: str | None = None) -> Any:
        if isinstance(v, dict):
            return {k: walk(x, k) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [walk(x, key) for x in v]
        if key in TIME_KEYS and isinstance(v, int) and v not in (0, -1):
            return "<time>"
        if key in MEMBER_KEYS and isinstance(v, str) and v:
            return names("M", v)
        if key in TOPIC_ID_KEYS and isinstance(v, str):
            return names("T", v)
        if key in HASH_KEYS and isinstance(v, int):
            return "<hash>" if v else 0
        if key in RANDOM_ID_KEYS and isinstance(v, str) and v:
            return names(RANDOM_ID_KEYS[key], v)
        if key == "metadata" and isinstance(v, str):
            return _streams_commit_metadata(v)
        return v
    return walk(value)


def _streams_commit_metadata(text: str) -> str:
    """Kafka Streams' offset-commit metadata (base64: a version byte, then the partition's stream
    time, a record timestamp) with the time blanked; any other metadata as it is."""
    import base64
    import binascii
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return text
    if len(raw) >= 9 and raw[0] in (1, 2):
        return f"<streams v{raw[0]}: stream time{', ' + raw[9:].hex() if raw[9:] else ''}>"
    return text


def _cooperative_subscription(text: str | None) -> Any:
    """A cooperative-sticky member's subscription without what the client knew when it sent its
    JoinGroup (owned partitions, generation, the sticky user data): whether it had read its last
    SyncGroup answer before rejoining is the client's timing, not the coordinator's doing."""
    import base64
    from kgroup.protocol.consumer_protocol import decode_subscription
    if not text:
        return text
    try:
        sub, version = decode_subscription(base64.b64decode(text))
    except ValueError:
        return text
    return {"version": version, "topics": list(sub.topics), "rack": sub.rack_id,
            "owned, generation, user data": "<the client's view when it joined>"}


def _cooperative_assignment(text: str | None, subscription: str | None) -> Any:
    """A cooperative-sticky member's assignment with its user data named when it is the member's
    own subscription user data echoed back (librdkafka's leader does that): it is then the
    client's view when it joined, like the subscription's. Any other user data stays as it is."""
    import base64
    from kgroup.protocol.consumer_protocol import decode_assignment, decode_subscription
    if not text or not subscription:
        return text
    try:
        assigned, version = decode_assignment(base64.b64decode(text))
        sub, _ = decode_subscription(base64.b64decode(subscription))
    except ValueError:
        return text
    if assigned.user_data != sub.user_data:
        return text
    return {"version": version, "partitions": [list(tp) for tp in assigned.partitions],
            "user data": "<the member's subscription user data, echoed>"}


def _streams_subscription(text: str | None, names: "_Names") -> Any:
    """A classic Kafka Streams member's subscription (base64) with the random process id in its
    SubscriptionInfo named like the Streams records' process ids, the bytes otherwise kept."""
    import base64
    import uuid as _uuid
    from kgroup.protocol.consumer_protocol import decode_subscription
    from kgroup.protocol.streams_protocol import decode_subscription_info
    if not text:
        return text
    raw = base64.b64decode(text)
    try:
        info = decode_subscription_info(decode_subscription(raw)[0].user_data)
    except ValueError:
        return text
    pid = _uuid.UUID(str(info.process_id)).bytes
    return {"processId": names("P", str(info.process_id)),
            "bytes": base64.b64encode(raw.replace(pid, bytes(16))).decode()}


#: a Kafka tool's columns whose values are random (member ids, the endpoint's address)
RANDOM_COLUMNS = {"CONSUMER-ID": "<member>", "MEMBER-ID": "<member>", "MEMBER": "<member>",
                  "PROCESS": "<process>", "COORDINATOR": "<coordinator>"}


def normalise_table(text: str) -> list[list[str]]:
    """A Kafka tool's table as rows of cells: random columns (`RANDOM_COLUMNS`) blanked and the
    rows under each header sorted, since Kafka lists members in the order of a hash map keyed by
    their (random) ids. Blank lines are dropped."""
    out: list[list[str]] = []
    header: list[str] | None = None
    block: list[list[str]] = []

    def flush() -> None:
        out.extend(sorted(block))
        block.clear()
    for line in text.splitlines():
        cells = line.split()
        if not cells:
            continue
        if cells[0] == "GROUP" or cells[0] == "GROUP-ID":
            flush()
            header = cells
            out.append(cells)
            continue
        if header is not None and len(cells) >= min(2, len(header)):
            # a row may run past its header (kafka-streams-groups lists assignments as several cells)
            # or stop short of it (a member without tasks): the named columns come first either way
            cells = [RANDOM_COLUMNS.get(h, c) for h, c in zip(header, cells)] + cells[len(header):]
        block.append(cells)
    flush()
    return out


def group_of_key(key: Mapping[str, Any]) -> str | None:
    data = key.get("data", {})
    return data.get("groupId", data.get("group"))


def records_by_group(entries: Iterable[Any], groups: set[str], *, timer_commits: bool = False) -> dict[str, list[dict]]:
    """The records of `groups` (as Kafka's JSON, key and value) in log order, per group, with
    random values renamed: a member is named after its client id, so runs of member records that
    Kafka writes in hash-map order of member ids can be put in one order. `timer_commits`: the
    offset commits are replaced by each partition's last one, at the end (`Scenario.timer_commits`)."""
    out: dict[str, list[dict]] = {g: [] for g in sorted(groups)}
    for e in entries:
        record = getattr(e, "record", None)
        if record is None:
            continue
        doc = json.loads(record.to_json())
        g = group_of_key(doc["key"])
        if g in out:
            out[g].append(doc)
    result = {}
    for g, docs in out.items():
        names = _member_names(docs)
        normalised = [normalise(doc, names) for doc in docs]
        for d in normalised:
            _sort_topic_lists(d)
            if d["key"]["type"] == REGULAR_EXPRESSION and d.get("value"):
                # the cluster metadata's version the regex was resolved at: each cluster's own
                d["value"]["data"]["version"] = "<metadata version>"
            # a classic group's members in Kafka's hash-map order of their random ids
            members = ((d.get("value") or {}).get("data") or {}).get("members")
            if isinstance(members, list) and d["value"]["data"].get("protocol") == "stream":
                for m in members:
                    m["subscription"] = _streams_subscription(m.get("subscription"), names)
            if isinstance(members, list) and d["value"]["data"].get("protocol") == "cooperative-sticky":
                for m in members:
                    m["assignment"] = _cooperative_assignment(m.get("assignment"), m.get("subscription"))
                    m["subscription"] = _cooperative_subscription(m.get("subscription"))
            if isinstance(members, list) and members and isinstance(members[0], dict):
                members.sort(key=lambda m: json.dumps(m, sort_keys=True))
        # __share_group_state records: each share-partition's in log order, one share-partition after
        # another (they live on different partitions of that topic, in no order between them)
        offsets = [d for d in normalised if "topicId" not in d["key"]["data"]]
        if timer_commits:
            last = {json.dumps(d["key"], sort_keys=True): d for d in offsets if d["key"]["type"] == OFFSET_COMMIT}
            offsets = [d for d in offsets if d["key"]["type"] != OFFSET_COMMIT] + [last[k] for k in sorted(last)]
        share = sorted((d for d in normalised if "topicId" in d["key"]["data"]),
                       key=lambda d: (str(d["key"]["data"]["topicId"]), d["key"]["data"]["partition"]))
        result[g] = _in_canonical_order(offsets) + share
    return result


def _sort_topic_lists(v: Any) -> None:
    """Lists of per-topic entries sorted by their (renamed) topic id: Kafka builds them from hash
    maps keyed by topic ids, which are random per cluster."""
    if isinstance(v, dict):
        for x in v.values():
            _sort_topic_lists(x)
    elif isinstance(v, list):
        for x in v:
            _sort_topic_lists(x)
        if v and all(isinstance(x, dict) and "topicId" in x for x in v):
            v.sort(key=lambda x: str(x["topicId"]))


def _member_names(docs: list[dict]) -> _Names:
    """Member ids named "M:<client id>" (then "#2", ... for a client id seen with another member
    id), in the order the records introduce them; other random values by first appearance."""
    names = _Names()
    seen: dict[str, int] = {}
    member_map = names.maps.setdefault("M", {})

    def name(member_id: str, client_id: str) -> None:
        if member_id and member_id not in member_map:
            seen[client_id] = seen.get(client_id, 0) + 1
            member_map[member_id] = f"M:{client_id}" + (f"#{seen[client_id]}" if seen[client_id] > 1 else "")
    for d in docs:
        value = (d.get("value") or {}).get("data") or {}
        if "clientId" in value and "memberId" in d["key"]["data"]:
            name(d["key"]["data"]["memberId"], value["clientId"])
        for m in value.get("members", []) or []:
            if isinstance(m, dict) and "memberId" in m:
                name(m["memberId"], m.get("clientId", ""))
    return names


def _in_canonical_order(docs: list[dict]) -> list[dict]:
    """Consecutive records of one member-keyed type sorted: Kafka writes such a run (target
    assignments, tombstones of a group's members) in hash-map order of the members' ids."""
    out: list[dict] = []
    i = 0
    while i < len(docs):
        j = i
        t = docs[i]["key"]["type"]
        while j < len(docs) and docs[j]["key"]["type"] == t and "memberId" in docs[j]["key"]["data"]:
            j += 1
        if j - i > 1:
            out.extend(sorted(docs[i:j], key=lambda d: json.dumps(d, sort_keys=True)))
            i = j
        else:
            out.append(docs[i])
            i += 1
    return out


# -- running ------------------------------------------------------------------------------
def compare(scenario: Scenario, kafka: KafkaBroker, profile: str = "kafka", *,
            check_decoder: bool = True, tools: bool = True) -> Comparison:
    """Run `scenario` against `kafka` and against a fresh `kgroup serve` (under `profile`), then
    compare the two runs; the result lists every difference. `kafka` may be one this process
    runs or `KafkaBroker.external(bootstrap)`; `tools=False` leaves Kafka's tools out (no Java)."""
    from kgroup.coordinator import Coordinator
    from kgroup.cluster import Cluster
    from kgroup.dumps import read_dump
    from kgroup.serve import Server

    missing = {k: v for k, v in scenario.broker_config.items() if kafka.config.get(k) != v}
    if missing and kafka.external_bootstrap is None:
        raise ValueError(f"{scenario.name} needs a Kafka started with {missing} (KafkaBroker(config=...))")
    # kgroup serve is configured as the Kafka it is compared with (the coordinator's settings)
    from kgroup.config import ALIASES, SETTINGS
    mirrored = {k: v for k, v in {**kafka.config, **scenario.broker_config}.items()
                if ALIASES.get(k, k) in SETTINGS}
    token = secrets.token_hex(3)
    k_run = Run("kafka", kafka.bootstrap, token, tools=kafka if tools else None)
    scenario.run(k_run)
    # what Kafka wrote during the run, copied at once: a shared broker keeps writing (sessions of
    # instances a scenario killed expire later, other tests' groups) while kgroup's run goes on
    kafka_copy = Path(tempfile.mkdtemp(prefix="kgroup-oracle-kafka-"))
    kafka_files = {topic: [_copy_segment(f, kafka_copy) for f in kafka.segments(topic)] for topic in LOGS}
    server = Server(Coordinator(cluster=Cluster(), config=mirrored, profile=profile), auto_create_topics=True, record=True).start()
    try:
        g_run = Run("kgroup", server.bootstrap, token, tools=kafka if tools else None)
        scenario.run(g_run)
        def logged() -> list:
            c = server.coordinator
            return [*c.log, *(e for log in c.logs.values() for e in log)]
        kgroup_entries = server.call(logged)
        exchanges = server.exchanges()
        decoder_diffs: list[Difference] = []
        with tempfile.TemporaryDirectory(prefix="kgroup-oracle-") as tmp:
            def write() -> None:
                server.coordinator.log.write(tmp)
                for log in server.coordinator.logs.values():
                    log.write(tmp)
            server.call(write)
            for topic, decoder in LOGS.items():
                files = sorted(Path(tmp).glob(f"{topic}-*/*.log"), key=_partition_order)
                if check_decoder:
                    decoder_diffs += _decoder_differences(kafka, files, f"kgroup's {topic} segments", decoder)
    finally:
        server.stop()
    kafka_entries = []
    try:
        for topic, decoder in LOGS.items():
            if kafka.external_bootstrap is not None:   # a Kafka you run: its log dir is not here
                kafka_entries += consumed_entries(kafka.bootstrap, topic)
                continue
            files = kafka_files[topic]
            kafka_entries += list(read_dump(files, topic=topic)) if files else []
            if check_decoder:
                decoder_diffs += _decoder_differences(kafka, files, f"Kafka's {topic} segments", decoder)
    finally:
        shutil.rmtree(kafka_copy, ignore_errors=True)
    groups = k_run.groups | g_run.groups
    k_records = records_by_group(kafka_entries, groups, timer_commits=scenario.timer_commits)
    g_records = records_by_group(kgroup_entries, groups, timer_commits=scenario.timer_commits)

    diffs: list[Difference] = []
    tools_diffs: list[Difference] = []
    for d in _seen_differences(k_run.seen, g_run.seen):
        (tools_diffs if d.where in k_run.tool_steps else diffs).append(d)
    record_diffs = _record_differences(k_records, g_records)
    verdicts = {"clients saw": "equal" if not diffs else "differs",
                "records": "equal" if not record_diffs else "differs",
                "Kafka's decoder": ("equal" if not decoder_diffs else "differs") if check_decoder else "not run",
                "Kafka's tools": "equal" if not tools_diffs else "differs"}
    return Comparison(scenario.name, profile, k_run, g_run, k_records, g_records,
                      diffs + tools_diffs + record_diffs + decoder_diffs, verdicts, exchanges)


@dataclass(frozen=True)
class ConsumedEntry:
    """One record read from a coordinator topic as a consumer reads it."""

    partition: int
    offset: int
    record: Any


def consumed_entries(bootstrap: str, topic: str, timeout: float = 30.0) -> list[ConsumedEntry]:
    """Every record of `topic` (`__consumer_offsets`, `__share_group_state`) on a Kafka you run,
    read from the beginning to the high watermarks with librdkafka and decoded by kgroup; in order
    per partition. Records kgroup cannot decode are left out (the comparison then shows them
    missing)."""
    import time

    from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

    from kgroup.records import decode_record
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "kgroup-oracle-reader", "enable.auto.commit": False,
                  "log.connection.close": False})
    try:
        meta = c.list_topics(topic, timeout=timeout).topics.get(topic)
        if meta is None or meta.error is not None:
            return []
        ends = {}
        for p in meta.partitions:
            low, high = c.get_watermark_offsets(TopicPartition(topic, p), timeout=timeout)
            if high > low:
                ends[p] = high
        if not ends:
            return []
        c.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in ends])
        out: list[ConsumedEntry] = []
        done: set[int] = set()
        deadline = time.monotonic() + timeout
        while len(done) < len(ends) and time.monotonic() < deadline:
            m = c.poll(0.5)
            if m is None or m.error() is not None:
                continue
            if m.offset() >= ends[m.partition()] - 1:
                done.add(m.partition())
            try:
                out.append(ConsumedEntry(m.partition(), m.offset(), decode_record(m.key(), m.value(), topic=topic)))
            except Exception:  # noqa: BLE001 - a record kgroup cannot read is a difference to see
                continue
        return sorted(out, key=lambda e: (e.partition, e.offset))
    finally:
        c.close()


#: the coordinators' logs compared, and the decoder Kafka's dump tool reads each with
LOGS = {"__consumer_offsets": "offsets", "__share_group_state": "share"}


def _partition_order(f: Path) -> int:
    return int(f.parent.name.rsplit("-", 1)[1])


def _copy_segment(f: Path, into: Path) -> Path:
    target = into / f.parent.name / f.name
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(f, target)
    return target


def _seen_differences(kafka: list[tuple[str, Any]], kgroup: list[tuple[str, Any]]) -> list[Difference]:
    out = []
    k_steps, g_steps = [s for s, _ in kafka], [s for s, _ in kgroup]
    if k_steps != g_steps:
        out.append(Difference("clients saw", "the steps taken", k_steps, g_steps))
    for (step, kv), (_, gv) in zip(kafka, kgroup):
        kv, gv = normalise(kv), normalise(gv)
        if kv != gv:
            out.append(Difference("clients saw", step, kv, gv))
    return out


def _record_differences(kafka: dict[str, list[dict]], kgroup: dict[str, list[dict]]) -> list[Difference]:
    out = []
    for g in kafka:
        k_lines = [json.dumps(d, sort_keys=False) for d in kafka[g]]
        g_lines = [json.dumps(d, sort_keys=False) for d in kgroup.get(g, [])]
        if k_lines == g_lines:
            continue
        for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=k_lines, b=g_lines, autojunk=False).get_opcodes():
            if tag == "equal":
                continue
            out.append(Difference("records", f"group {g}, Kafka's records {i1}-{i2 - 1} / kgroup's {j1}-{j2 - 1} ({tag})",
                                  k_lines[i1:i2], g_lines[j1:j2]))
    return out


def _decoder_differences(kafka: KafkaBroker, files: list[Path], what: str, decoder: str = "offsets") -> list[Difference]:
    """Kafka's DumpLogSegments and `kgroup dump decode --format dump-log` over the same files."""
    if not files:
        return []
    try:
        theirs = kafka.dump_log(files, decoder)
    except RuntimeError as e:
        return [Difference("Kafka's decoder", f"Kafka's dump tool over {what}", str(e), "(readable)")]
    proc = subprocess.run([sys.executable, "-m", "kgroup", "dump", "decode", *map(str, files), "--format", "dump-log"],
                          capture_output=True, text=True)
    ours = proc.stdout
    if theirs == ours:
        return []
    k_lines, g_lines = theirs.splitlines(), ours.splitlines()
    out = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=k_lines, b=g_lines, autojunk=False).get_opcodes():
        if tag != "equal":
            out.append(Difference("Kafka's decoder", f"{what}, kafka-dump-log lines {i1 + 1}-{i2} ({tag})",
                                  k_lines[i1:i2], g_lines[j1:j2]))
    return out
