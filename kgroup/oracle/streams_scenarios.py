"""Kafka Streams scenarios for the differential harness: real Kafka Streams 4.4.0 applications
(`kgroup.oracle.streams`) run once against Apache Kafka and once against `kgroup serve`.

Instances are started one at a time and each step waits until the group has settled (every
instance RUNNING, every task owned once, the coordinator's state Stable), so that what a step
sees does not depend on how fast a JVM starts; a scenario ends by killing its instances. Which
instance gets which task can depend on random member and process ids, so the clients' view is
compared as shapes (task counts, standbys apart); the records are compared exactly, with members
named after their instances. `STREAMS_STATIC_MEMBER_RULES` speaks raw StreamsGroupHeartbeats
(`kgroup.oracle.wire`) for the rules no client library lets one break.
"""
from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from typing import Any

from kgroup.oracle.compare import Run, Scenario
from kgroup.oracle.scenarios import WAIT_S, _QUIET, _ck, admin, set_group_config
from kgroup.oracle.streams import StreamsInstance, wait_settled

#: Kafka Streams timings shortened so a scenario takes seconds, the same on both endpoints
FAST = {"commit.interval.ms": 200, "metadata.max.age.ms": 1000}


def topics(run: Run, partitions: dict[str, int], records: int = 0) -> None:
    """Create the source topics (`run.token` prefixed, as the applications read them) and
    produce `records` records with keys k0..k9 to each, round-robin over partitions."""
    from confluent_kafka.admin import NewTopic
    a = admin(run)
    names = {base: f"{run.token}-{base}" for base in partitions}
    for f in a.create_topics([NewTopic(names[b], n, 1) for b, n in partitions.items()]).values():
        f.result(timeout=WAIT_S)
    if records:
        p = _ck().Producer({"bootstrap.servers": run.bootstrap, **_QUIET})
        for base, n in partitions.items():
            for i in range(records):
                p.produce(names[base], key=b"k%d" % (i % 10), value=b"k%d:v%d" % (i % 7, i), partition=i % n)
        assert p.flush(WAIT_S) == 0, "records not delivered"


class Apps:
    """The instances of one application in one run, named A, B, C... (their client ids)."""

    def __init__(self, run: Run, topology: str, **config: Any) -> None:
        self.run, self.topology = run, topology
        self.application_id = run.group("app")
        # no initial rebalance delay: whether a stateful application's changelog topic exists by its
        # second heartbeat (kgroup creates it at once, Kafka's controller a little later) must not
        # decide the records
        set_group_config(run, self.application_id, "streams.initial.rebalance.delay.ms", "0")
        self.config = {"group.protocol": "streams", **FAST, **config}
        self.instances: dict[str, StreamsInstance] = {}

    def start(self, name: str, topology: str | None = None, **config: Any) -> StreamsInstance:
        inst = StreamsInstance(self.run.bootstrap, self.application_id, topology=topology or self.topology,
                               name=name, prefix=f"{self.run.token}-", config={**self.config, **config})
        self.instances[name] = inst.start()
        return inst

    @property
    def live(self) -> list[StreamsInstance]:
        return [i for i in self.instances.values() if i.running]

    def wait_settled(self, tasks: int, what: str, timeout: float = 90.0) -> None:
        """The instances settled (`kgroup.oracle.streams.settled`) and the coordinator says Stable:
        every member reconciled to the target, so no member's catching up is left to race the
        next step (an instance sees its tasks before its last heartbeat confirms them)."""
        wait_settled(lambda: self.live, tasks, what, timeout)
        wait_stable(self.run, self.application_id, what, timeout)

    def wait_standbys(self, standbys: int, what: str, timeout: float = 90.0) -> None:
        """Wait until the live instances hold `standbys` standby tasks, none beside its active task."""
        deadline = time.monotonic() + timeout
        while not (sum(len(i.standby) for i in self.live) == standbys and self.shape()["standby apart from active"]):
            if time.monotonic() > deadline:
                raise TimeoutError(f"{what}: standbys not placed in {timeout:.0f} s: {self.live}")
            time.sleep(0.2)

    def shape(self) -> dict:
        """What the instances see, without which-instance-got-which-task: task counts per
        instance (sorted), and standbys never beside their active task."""
        live = self.live
        return {"active": sorted(len(i.active) for i in live),
                "standby": sorted(len(i.standby) for i in live),
                "standby apart from active": all(not set(i.active) & set(i.standby) for i in live)}

    def close(self) -> None:
        """The end of a scenario: every instance killed. A graceful teardown would write leaves
        whose task moves are ties the sticky assignor breaks by the random member ids' hash order
        (different on the two endpoints); the comparison reads Kafka's log as the run left it."""
        for i in self.instances.values():
            i.cleanup()


@contextlib.contextmanager
def apps(run: Run, topology: str, **config: Any) -> Iterator[Apps]:
    a = Apps(run, topology, **config)
    try:
        yield a
    finally:
        a.close()


def wait_stable(run: Run, group: str, what: str, timeout: float = 90.0) -> None:
    """Poll StreamsGroupDescribe until the group's state is Stable."""
    from kgroup.oracle.wire import Wire
    deadline = time.monotonic() + timeout
    with Wire(run.bootstrap, client_id="oracle-describe") as w:
        while True:
            (g,) = w.call("StreamsGroupDescribe", 0, group_ids=[group], include_authorized_operations=False).groups
            if g.group_state == "Stable" or g.error_code:
                return   # (an error: not a Streams group -- a classic one has no such state to wait for)
            if time.monotonic() > deadline:
                raise TimeoutError(f"{what}: group {group} is {g.group_state!r}, not Stable, after {timeout:.0f} s")
            time.sleep(0.2)


def internal_topics(run: Run, application_id: str) -> list[list]:
    """The application's internal topics (repartition, changelog) with their partition counts."""
    md = admin(run).list_topics(timeout=WAIT_S)
    return sorted([name, len(t.partitions)] for name, t in md.topics.items() if name.startswith(application_id + "-"))


def _three_instances(run: Run) -> None:
    topics(run, {"in": 6}, records=60)
    with apps(run, "stateless") as a:
        for name in "ABC":
            a.start(name)
            a.wait_settled(6, f"{name} joined")
            run.saw(f"{name} joined", a.shape())
        run.tool("describe", "streams", "--describe", "--group", a.application_id, "--members")


def _missing_source_topic(run: Run) -> None:
    with apps(run, "stateful") as a:
        first = a.start("A")
        # the group is NOT_READY (MISSING_SOURCE_TOPICS): the member joins and gets no tasks
        first.wait_for(lambda i: i.state == "REBALANCING", "A to join", WAIT_S)
        time.sleep(3)
        run.saw("source topic missing: A", {"state": first.state, "active": first.active})
        run.saw("source topic missing: internal topics", internal_topics(run, a.application_id))
        run.tool("source topic missing: describe --state", "streams", "--describe", "--group", a.application_id,
                 "--state")
        topics(run, {"in": 4}, records=40)
        a.wait_settled(4, "A to start once the source topic exists")
        run.saw("source topic created: A", a.shape())
        run.saw("source topic created: internal topics", internal_topics(run, a.application_id))
        run.tool("source topic created: describe --members", "streams", "--describe", "--group",
                 a.application_id, "--members")


def _standby_replicas(run: Run) -> None:
    topics(run, {"in": 4}, records=40)
    with apps(run, "stateful") as a:
        # under the Streams protocol the group's config decides, not the client's num.standby.replicas
        set_group_config(run, a.application_id, "streams.num.standby.replicas", "1")
        for name in "ABC":
            a.start(name)
            a.wait_settled(4, f"{name} joined")
            if name != "A":   # one instance alone has nowhere to put a standby
                a.wait_standbys(4, f"{name} joined: standbys placed")
            run.saw(f"{name} joined", a.shape())
        run.saw("internal topics", internal_topics(run, a.application_id))
        run.tool("describe --members", "streams", "--describe", "--group", a.application_id, "--members")


def _static_members(run: Run) -> None:
    topics(run, {"in": 4}, records=40)
    with apps(run, "stateless") as a:
        for name in "AB":
            a.start(name, **{"group.instance.id": name})
            a.wait_settled(4, f"static {name} joined")
        before = {n: a.instances[n].active for n in "AB"}
        # a static member's close keeps it in the group (it leaves with epoch -2): its tasks wait
        a.instances["A"].close()
        time.sleep(2)
        run.saw("A closed (static): B still has only its own tasks", a.instances["B"].active == before["B"])
        a.start("A", **{"group.instance.id": "A"})
        a.wait_settled(4, "static A back")
        run.saw("A restarted: tasks back on the same instances",
                {n: a.instances[n].active == before[n] for n in "AB"})
        run.tool("A restarted: describe --members", "streams", "--describe", "--group", a.application_id,
                 "--members")
        # a second instance with a taken instance id is refused (UNRELEASED_INSTANCE_ID)
        dup = StreamsInstance(run.bootstrap, a.application_id, topology="stateless", name="dup",
                              prefix=f"{run.token}-", config={**a.config, "group.instance.id": "B"})
        a.instances["dup"] = dup.start()
        dup.wait_for(lambda i: i.state in ("ERROR", "PENDING_ERROR", "NOT_RUNNING") or not i.running,
                     "the duplicate to fail", WAIT_S)
        run.saw("a second instance with B's instance id", {"state": dup.state, "error": any(
            e["event"] == "error" and "UnreleasedInstanceId" in e.get("message", "") for e in dup.events)})
        dup.close()
        # A leaves for good (close with LEAVE_GROUP): its tasks move to B
        a.instances["A"].close(leave=True)
        a.wait_settled(4, "B alone after A left")
        run.saw("A left the group: B", a.shape())


def _topology_upgrade(run: Run) -> None:
    topics(run, {"in": 2, "in2": 2}, records=20)
    with apps(run, "stateful") as a:
        for name in "AB":
            a.start(name)
            a.wait_settled(2, f"{name} joined")
        # a rolling bounce onto a second version of the application (one more sub-topology)
        for name in "AB":
            a.instances[name].close()
            a.start(name, topology="stateful-v2")
            time.sleep(8)
            run.saw(f"{name} restarted with the new topology", {
                n: {"state": i.state, "active": len(i.active)} for n, i in sorted(a.instances.items()) if i.running})
        run.tool("describe --members", "streams", "--describe", "--group", a.application_id, "--members")


def _exactly_once(run: Run) -> None:
    topics(run, {"in": 4}, records=40)
    with apps(run, "stateless", **{"processing.guarantee": "exactly_once_v2"}) as a:
        for name in "AB":
            a.start(name)
            a.wait_settled(4, f"{name} joined")
        deadline = time.monotonic() + WAIT_S
        while sum(i.processed for i in a.live) < 40 and time.monotonic() < deadline:
            time.sleep(0.2)
        run.saw("records processed (exactly once: each once)", sum(i.processed for i in a.live))
        time.sleep(1)   # a commit interval: the last transaction commits the offsets
        run.tool("describe --offsets", "streams", "--describe", "--group", a.application_id, "--offsets")


def _offline_migration(run: Run) -> None:
    topics(run, {"in": 4}, records=40)
    with apps(run, "stateless") as a:
        for protocol in ("classic", "streams", "classic"):
            inst = a.start("A", **{"group.protocol": protocol})
            a.wait_settled(4, f"A with group.protocol={protocol}")
            run.saw(f"A with group.protocol={protocol}", a.shape())
            run.tool(f"{protocol}: kafka-groups --list", "groups", "--list", only_mine=True)
            inst.close(leave=True)   # the group empties: the next protocol may take it over
            time.sleep(1)


def _heartbeat(w, run: Run, member: str, epoch: int, *, instance: str | None = None, process: str = "",
               join_topic: str | None = None) -> dict:
    """One raw StreamsGroupHeartbeat v1 (a join when `join_topic` is given: full request, the
    topology reading it); what came back, as plain data."""
    from kgroup.groups.streams import Subtopology, Topology
    from kgroup.protocol import ErrorCode
    data: dict[str, Any] = dict(group_id=run.group("raw"), member_id=member, member_epoch=epoch,
                                endpoint_information_epoch=0, instance_id=instance)
    if join_topic is not None:
        data.update(rebalance_timeout=30_000, process_id=process, client_tags=[], active_tasks=[],
                    standby_tasks=[], warmup_tasks=[],
                    topology=Topology(0, (Subtopology("0", source_topics=(join_topic,)),)).to_request_data())
    r = w.call("StreamsGroupHeartbeat", 1, **data)
    return {"error": ErrorCode(r.error_code).name, "message": r.error_message,
            "epoch": r.member_epoch if not r.error_code else None,
            "status": sorted(st.status_code for st in r.status or ())}


#: errors a client retries after: the coordinator is not there yet
_NOT_YET = frozenset({"not_coordinator", "coordinator_load_in_progress", "coordinator_not_available"})


def _static_member_rules(run: Run) -> None:
    from kgroup.oracle.wire import Wire
    topics(run, {"in": 2})
    topic = f"{run.token}-in"
    group = run.group("raw")
    set_group_config(run, group, "streams.initial.rebalance.delay.ms", "0")
    a, b = f"memberA-{run.token}", f"memberB-{run.token}"
    a2 = f"memberA2-{run.token}"
    steps = [
        ("A joins as static instance iA", a, 0, dict(instance="iA", process="pA", join_topic=topic)),
        ("B joins as a dynamic member", b, 0, dict(process="pB", join_topic=topic)),
        # Kafka 4.4.0 keeps the member and only rewrites its metadata (no bump: the KIP's list did not
        # change); Kafka's later StreamsGroupStaticMember tests refuse both with INVALID_REQUEST
        ("A's member id joins again with instance iX", a, 0, dict(instance="iX", process="pA", join_topic=topic)),
        ("B's member id joins again with instance iB", b, 0, dict(instance="iB", process="pB", join_topic=topic)),
        ("a new member claims instance iX, which A holds", f"memberC-{run.token}", 0,
         dict(instance="iX", process="pC", join_topic=topic)),
        ("A heartbeats with an epoch it never had", a, 999, dict(instance="iX")),
        ("an unknown member heartbeats at epoch 5", f"ghost-{run.token}", 5, {}),
        ("A leaves with -2 (static: keeps its tasks)", a, -2, dict(instance="iX")),
        ("A comes back with a new member id", a2, 0, dict(instance="iX", process="pA", join_topic=topic)),
        ("A's old member id heartbeats", a, 3, dict(instance="iX")),
        ("B leaves with -1", b, -1, dict(instance="iB")),
        ("A leaves for good with -1", a2, -1, dict(instance="iX")),
    ]
    with Wire(run.bootstrap, client_id="raw") as w:
        deadline = time.monotonic() + WAIT_S
        w.find_coordinator(group, WAIT_S)
        for i, (label, member, epoch, kw) in enumerate(steps):
            seen = _heartbeat(w, run, member, epoch, **kw)
            while i == 0 and seen["error"] in _NOT_YET and time.monotonic() < deadline:
                time.sleep(0.2)   # the coordinator is still loading the group's partition: as a client, retry
                seen = _heartbeat(w, run, member, epoch, **kw)
            run.saw(label, seen)
            time.sleep(1.2)   # past KIP-1263's assignment interval: each step gets its own target
    run.tool("describe --state", "streams", "--describe", "--group", group, "--state")


def _application_scenario(name: str, description: str, run: Callable[[Run], None]) -> Scenario:
    """A scenario of Kafka Streams applications, compared under the kafka profile; they commit on
    a timer (commit.interval.ms), so only each partition's last commit is compared."""
    return Scenario(name, description, run, profiles=("kafka",), timer_commits=True)


STREAMS_THREE_INSTANCES = _application_scenario(
    "streams-three-instances",
    "Kafka Streams (group.protocol=streams): three instances of a stateless application start one "
    "after another; after each, every task has one owner and the group is Stable.",
    _three_instances)
STREAMS_MISSING_SOURCE_TOPIC = _application_scenario(
    "streams-missing-source-topic",
    "a stateful application starts before its source topic exists: the group is NOT_READY "
    "(MISSING_SOURCE_TOPICS) and no internal topic is made; the topic is created, the coordinator "
    "creates the changelog topic and the instance gets its tasks.",
    _missing_source_topic)
STREAMS_STANDBY_REPLICAS = _application_scenario(
    "streams-standby-replicas",
    "a stateful application with num.standby.replicas=1: instances A, B, C start one after another; "
    "every task gets a standby on another instance once there is one.",
    _standby_replicas)

STREAMS_STATIC_MEMBERS = _application_scenario(
    "streams-static-members",
    "static Streams members (group.instance.id, Kafka 4.4 and PR #22245): A closes and restarts within "
    "the session timeout and gets its tasks back; a second instance with B's id is refused; A leaves "
    "for good and B takes everything.",
    _static_members)
STREAMS_TOPOLOGY_UPGRADE = _application_scenario(
    "streams-topology-upgrade",
    "a rolling bounce of two instances onto a second version of the application with one more "
    "sub-topology: what the group does with members on the old and the new topology.",
    _topology_upgrade)
STREAMS_EXACTLY_ONCE = _application_scenario(
    "streams-exactly-once",
    "processing.guarantee=exactly_once_v2: two instances commit their offsets through transactions.",
    _exactly_once)
STREAMS_OFFLINE_MIGRATION = _application_scenario(
    "streams-offline-migration",
    "the same application stopped and started with group.protocol classic, then streams, then classic "
    "again: the empty group changes type each time.",
    _offline_migration)

STREAMS_STATIC_MEMBER_RULES = Scenario(
    "streams-static-member-rules",
    "raw StreamsGroupHeartbeats: a member id rejoining with another instance id, a dynamic member "
    "rejoining with one, a taken instance id, a fenced epoch, an unknown member, a static -2 leave "
    "and its replacement: the errors and their messages, and the records.",
    _static_member_rules, profiles=("kafka",))

ALL = [STREAMS_THREE_INSTANCES, STREAMS_STATIC_MEMBER_RULES, STREAMS_MISSING_SOURCE_TOPIC, STREAMS_STANDBY_REPLICAS, STREAMS_STATIC_MEMBERS,
       STREAMS_TOPOLOGY_UPGRADE, STREAMS_EXACTLY_ONCE, STREAMS_OFFLINE_MIGRATION]
