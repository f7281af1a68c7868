"""Simulated Kafka Streams clients (`StreamsApplication` / `StreamThread`) against the coordinator's
KIP-1071 Streams groups, driven and sampled every tick by the `Simulation` driver.

Client rules follow KIP-1071 and Apache Kafka's `StreamsMembershipManager` /
`StreamsGroupHeartbeatRequestManager`; where they differ the test says which one it follows."""
from __future__ import annotations

import pytest

from kgroup import Cluster, Coordinator, ErrorCode
from kgroup.clients import (ConsumerGroupConsumer, Simulation, StateDirectory, StreamsApplication, StreamsConfig,
                            StreamsMemberState, TopologyBuilder)
from kgroup.clients.streams_topology import changelog_topic, repartition_topic, stateful, stateless
from kgroup.groups.streams import CopartitionGroup, StreamsGroup
from kgroup.protocol import ms

from simulation_testing import assert_owned_once, heartbeat_after_not_coordinator, owned

E = ErrorCode
STALE_TOPOLOGY, SHUTDOWN_APPLICATION = 0, 4


def coordinator(profile: str = "kip", config: dict | None = None, **topics: int) -> Coordinator:
    return Coordinator(cluster=Cluster(topics or {"orders": 8}, seed=1), profile=profile, config=config)


def app(c: Coordinator, name: str, topology, threads: int = 1, **kw) -> StreamsApplication:
    return StreamsApplication(c, StreamsConfig("app", topology, num_stream_threads=threads, **kw), name=name)


def group(c: Coordinator, gid: str = "app") -> StreamsGroup:
    g = c.groups[gid]
    assert isinstance(g, StreamsGroup)
    return g


# -- the topology builder ------------------------------------------------------------------------

def test_builder_names_topics_as_kafka_streams_and_copartition_groups_become_indexes():
    b = TopologyBuilder("app")
    s0 = b.subtopology(sources=["orders"], stores=["counts"], repartition_to=["by-customer"])
    s1 = b.subtopology(sources=["customers"], repartition_from={"by-customer": 6}, stores=["totals"],
                       copartition=[["customers", "by-customer"]])
    s2 = b.subtopology(source_pattern="clicks-.*")
    t = b.build(epoch=3)
    assert (s0, s1, s2) == ("0", "1", "2") and t.epoch == 3 and t.subtopology_ids == ["0", "1", "2"]
    first, second, third = t.subtopologies
    assert [x.name for x in first.state_changelog_topics] == [changelog_topic("app", "counts")] \
        == ["app-counts-changelog"]
    assert first.repartition_sink_topics == (repartition_topic("app", "by-customer"),) \
        == ("app-by-customer-repartition",)
    assert first.state_changelog_topics[0].partitions == 0                 # KIP: changelogs never fix a count
    assert [(x.name, x.partitions) for x in second.repartition_source_topics] == [("app-by-customer-repartition", 6)]
    assert second.copartition_groups == (CopartitionGroup(source_topics=(0,), repartition_source_topics=(0,)),)
    assert third.source_topic_regex == ("clicks-.*",) and not third.stateful and first.stateful
    # The same builder calls give an equal topology (the coordinator compares topologies on join).
    assert t.same_as(t.with_epoch(0))


def test_builder_source_topic_as_changelog_and_bad_names():
    b = TopologyBuilder("app")
    b.subtopology(sources=["customers"], source_as_changelog={"customers-table": "customers"})
    t = b.build()
    assert [x.name for x in t.subtopologies[0].state_changelog_topics] == ["customers"]
    with pytest.raises(ValueError):
        TopologyBuilder("app").subtopology(sources=["a"], copartition=[["a", "b"]])
    with pytest.raises(ValueError):
        TopologyBuilder("app").subtopology(sources=["a"], source_as_changelog={"s": "b"})


# -- one application -----------------------------------------------------------------------------

def test_one_application_with_two_threads_stabilises_and_runs_every_task_once():
    c = coordinator()
    a = app(c, "A", stateful("app", "orders", store="counts"), threads=2)
    sim = Simulation(c)
    assert sim.add(a) is a and [k.name for k in sim.consumers] == ["A-1", "A-2"]
    sim.run_until_stable("app")
    assert_owned_once(sim)
    assert sim.partitions() == [("0", p) for p in range(8)]
    g = group(c)
    assert g.state == "Stable" and "app-counts-changelog" in c.cluster    # the coordinator created it
    # Both threads are members of one process and agree with the coordinator.
    assert {m.process_id for m in g.members.values()} == {a.process_id}
    for t in a.threads:
        member = g.members[t.member_id]
        assert set(member.assigned.active_ids()) == t.owned and t.member_epoch == member.member_epoch
        assert t.state is StreamsMemberState.STABLE and t.client_id == f"A-StreamThread-{t.index}-consumer"
    assert sorted(len(t.owned) for t in a.threads) == [4, 4]
    assert a.state == "RUNNING" and a.tasks()["active"] == set(sim.partitions())


def test_join_is_a_full_request_then_only_what_changed_and_full_again_after_an_error():
    c = coordinator()
    a = app(c, "A", stateful("app", "orders"), endpoint=("a.example", 8080), client_tags={"zone": "z1"})
    sim = Simulation(c, [a])
    sim.run_until_stable("app")
    sim.run(6_000)
    t = a.threads[0]
    join, *later = [h.request for h in t.heartbeats]
    assert join.member_epoch == 0 and join.topology is not None and join.topology.epoch == 0
    assert ms(join.rebalance_timeout) == 300_000 and join.process_id == a.process_id
    assert (join.active_tasks, join.standby_tasks, join.warmup_tasks) == ((), (), ())
    assert (join.user_endpoint.host, join.user_endpoint.port) == ("a.example", 8080)
    assert [(kv.key, kv.value) for kv in join.client_tags] == [("zone", "z1")]
    assert join.endpoint_information_epoch == -1           # Kafka's client starts at -1: send me the IQ map
    ack = next(r for r in later if r.active_tasks is not None)
    assert {(x.subtopology_id, p) for x in ack.active_tasks for p in x.partitions} == t.owned
    assert ack.standby_tasks == () and ack.warmup_tasks == ()            # the three lists go together
    assert ack.task_offsets is not None                                  # stateful tasks were added
    keepalive = later[-1]
    assert keepalive.topology is None and keepalive.process_id is None and ms(keepalive.rebalance_timeout) == -1
    assert keepalive.active_tasks is None and keepalive.task_offsets is None
    assert t.partitions_by_user_endpoint is not None and ("a.example", 8080) in t.partitions_by_user_endpoint
    assert t.partitions_by_user_endpoint[("a.example", 8080)]["active"] == {"orders": set(range(8))}
    # An error answer (the coordinator lost the group's partition) makes the next request full.
    after = heartbeat_after_not_coordinator(sim, t)
    assert after.member_epoch == t.member_epoch > 0 and after.topology is None   # only a join carries it
    assert ms(after.rebalance_timeout) == 300_000 and after.process_id == a.process_id
    assert after.active_tasks is not None and after.task_offsets is not None
    assert t.state is StreamsMemberState.STABLE


def test_task_offsets_are_sent_every_task_offset_interval():
    c = coordinator(config={"group.streams.task.offset.interval.ms": 15_000})
    a = app(c, "A", stateful("app", "orders"))
    sim = Simulation(c, [a])
    sim.run_until_stable("app")
    t = a.threads[0]
    start = c.now()
    sim.run(46_000)
    sent = [h.time for h in t.heartbeats if h.time >= start and h.request.task_offsets is not None]
    assert len(sent) == 3 and all(b - a_ >= 15_000 for a_, b in zip(sent, sent[1:]))
    last = next(h.request for h in reversed(t.heartbeats) if h.request.task_offsets is not None)
    offsets = {(o.subtopology_id, o.partition): o.offset for o in last.task_offsets}
    assert offsets == {("0", p): 50_000 for p in range(8)}
    assert last.task_offsets == last.task_end_offsets                     # active tasks are caught up


# -- two applications ------------------------------------------------------------------------------

def test_two_applications_share_the_tasks_balanced_and_no_active_task_runs_twice():
    c = coordinator()
    sim = Simulation(c)
    a = sim.add(app(c, "A", stateless("app", "orders"), threads=2, revocation_delay_ms=1_500))
    sim.run_until_stable("app")
    sim.reset_measurements()
    b = sim.add(app(c, "B", stateless("app", "orders"), threads=2, revocation_delay_ms=1_500))
    sim.run_until_stable("app")
    assert_owned_once(sim)
    assert sorted(len(x.tasks()["active"]) for x in (a, b)) == [4, 4]
    per_thread = [len(t) for t in owned(sim).values()]
    assert max(per_thread) - min(per_thread) <= 1
    # A's threads closed the tasks B took before B started them (revoke first, then assign).
    revoked = {(e.partitions, e.time) for t in a.threads for e in t.events if e.kind == "revoked"}
    assigned_b = [e for t in b.threads for e in t.events if e.kind == "assigned"]
    assert revoked and assigned_b
    for e in assigned_b:
        for task in e.partitions:
            assert any(task in ps and when <= e.time for ps, when in revoked)


def test_standby_tasks_land_on_the_other_process():
    c = coordinator(config={"group.streams.num.standby.replicas": 1})
    sim = Simulation(c)
    a = sim.add(app(c, "A", stateful("app", "orders"), threads=2))
    b = sim.add(app(c, "B", stateful("app", "orders"), threads=2))
    sim.run_until_stable("app")
    assert_owned_once(sim)
    for x, other in ((a, b), (b, a)):
        tasks = x.tasks()
        assert not tasks["active"] & tasks["standby"]                     # never both roles in one process
        assert tasks["standby"] <= other.tasks()["active"]
    assert a.tasks()["standby"] | b.tasks()["standby"] == set(sim.partitions())   # one standby per task
    # Standbys restore towards the end offset.
    sim.run(20_000)
    t = next(t for t in a.threads if t.standby)
    assert t.lag() and all(lag == 0 for lag in t.lag().values())


def test_a_crash_is_noticed_by_the_session_timeout_and_the_tasks_move():
    c = coordinator()
    sim = Simulation(c)
    a = sim.add(app(c, "A", stateless("app", "orders")))
    b = sim.add(app(c, "B", stateless("app", "orders")))
    sim.run_until_stable("app")
    lost = set(b.tasks()["active"])
    assert lost
    sim.reset_measurements()
    b.crash()
    last_heartbeat = b.threads[0].heartbeats[-1].time
    sim.run(39_000)
    assert set(a.tasks()["active"]) == set(sim.partitions()) - lost    # nobody knows yet: no leave was sent
    assert len(group(c).members) == 2
    sim.run_until(lambda: len(group(c).members) == 1)
    # group.streams.session.timeout.ms (45 s) after B's last heartbeat, to the tick
    assert last_heartbeat + 45_000 <= c.now() <= last_heartbeat + 45_000 + sim.tick_ms
    sim.run_until_stable("app")
    assert a.tasks()["active"] == set(sim.partitions())
    assert sim.unowned_partition_ms() >= len(lost) * 45_000
    assert sim.double_owned_samples() == 0


# -- KIP-1071 "Topology updates": the rolling bounce -----------------------------------------------

def test_rolling_bounce_to_topology_epoch_1_as_in_the_kip():
    """Three instances A, B, C, one thread each, nine stateless tasks (the KIP's example).
    Each in turn shuts down and comes back with topology epoch 1: members on the stale epoch
    get no new tasks, members on the group's epoch take only what others gave up, and the
    group ends balanced 3/3/3 after each step."""
    c = coordinator(input=9)
    v0 = stateless("app", "input")
    sim = Simulation(c)
    apps = {n: sim.add(app(c, n, v0)) for n in "ABC"}
    sim.run_until_stable("app")
    assert sorted(len(x.tasks()["active"]) for x in apps.values()) == [3, 3, 3]

    def active(n: str) -> set:
        return set(apps[n].tasks()["active"])

    def owned_since(n: str, since: int) -> set:
        return {t for when, k, owned, _, _ in sim.samples if k == f"{n}-1" and when >= since for t in owned}

    def revoked_by_others(n: str, since: int) -> dict:
        return {t: e.time for m in "ABC" if m != n for e in apps[m].threads[0].events
                if e.kind == "revoked" and e.time >= since for t in e.partitions}

    for name, stale in (("C", "AB"), ("B", "A"), ("A", "")):
        # `name` shuts down: the others share its tasks, except members already stale.
        before, since = {n: active(n) for n in "ABC" if n != name}, sim.elapsed
        apps[name].close()
        sim.run_until_stable("app")
        if group(c).topology.epoch == 1:
            for n in stale:
                assert owned_since(n, since) == before[n]                # A(#0) cannot get new tasks
        assert set().union(*(active(n) for n in "ABC" if n != name)) == set(sim.partitions())
        # `name` comes back with topology epoch 1 (bumping the group's topology epoch the first time).
        before, since, t0 = {n: active(n) for n in "ABC" if n != name}, sim.elapsed, c.now()
        apps[name].start(v0.with_epoch(1))
        sim.run_until_stable("app")
        assert group(c).topology.epoch == 1 and apps[name].threads[0].member_epoch > 0
        for n in stale:
            assert owned_since(n, since) <= before[n]                    # never a new task while stale
            assert STALE_TOPOLOGY in apps[n].threads[0].statuses
        given_up = revoked_by_others(name, t0)
        for e in apps[name].threads[0].events:
            if e.kind == "assigned" and e.time >= t0:
                assert all(t in given_up and given_up[t] <= e.time for t in e.partitions)
        assert sorted(len(active(n)) for n in "ABC") == [3, 3, 3]
        assert_owned_once(sim)
    assert all(STALE_TOPOLOGY not in apps[n].threads[0].statuses for n in "ABC")
    assert {m.topology_epoch for m in group(c).members.values()} == {1}


def test_restart_with_a_bumped_topology_epoch_in_one_step():
    c = coordinator(input=9)
    v0 = stateless("app", "input")
    sim = Simulation(c)
    apps = {n: sim.add(app(c, n, v0)) for n in "ABC"}
    sim.run_until_stable("app")
    # KIP-1071: from C's rejoin with epoch 1 on, A and B (stale) get no new task *assigned*.
    # Between C's leave and its rejoin (one tick) their targets may have taken some of C's tasks
    # (they were current then), which they may come to own only after the rejoin: so the
    # baseline is their target just before the rejoin, read after every exchange.
    ids = {n: apps[n].threads[0].member_id for n in "AB"}
    latest: dict[str, frozenset] = {}
    before: dict[str, frozenset] = {}
    after: list[dict[str, frozenset]] = []

    def watch(x) -> None:
        req = x.request
        if (not before and x.consumer == "C-1" and req is not None and req.member_epoch == 0
                and req.topology is not None and req.topology.epoch == 1):
            before.update(latest)
        targets = group(c).target_assignment
        latest.update({n: targets[ids[n]].active_ids() for n in "AB" if ids[n] in targets})
        if before:
            after.append(dict(latest))
    sim.observe(watch)
    apps["C"].restart(v0.with_epoch(1))
    sim.run_until_stable("app")
    c_thread = apps["C"].threads[0]
    rejoined = next(h.time for h in c_thread.heartbeats
                    if h.request.member_epoch == 0 and h.request.topology.epoch == 1)
    rejoined -= sim.start
    assert set(before) == {"A", "B"} and after
    for n in "AB":
        assert all(targets[n] <= before[n] for targets in after)
        rows = [o for when, k, o, _, _ in sim.samples if k == f"{n}-1" and when >= rejoined]
        assert all(o <= rows[0] | before[n] for o in rows)
    assert sorted(len(x.tasks()["active"]) for x in apps.values()) == [3, 3, 3]
    assert apps["C"].threads[0].incarnation == 2 and group(c).topology.epoch == 1


def test_joining_with_an_older_topology_epoch_is_fatal_kip():
    c = coordinator(input=3)
    sim = Simulation(c)
    sim.add(app(c, "A", stateless("app", "input", epoch=1)))
    sim.run_until_stable("app")
    old = sim.add(app(c, "B", stateless("app", "input", epoch=0)))
    sim.run(1_000)
    t = old.threads[0]
    assert t.state is StreamsMemberState.FATAL and not t.running and t.error[0] == "STREAMS_TOPOLOGY_FENCED"
    assert old.state == "ERROR" and old.errors == {"B-1": t.error}


def test_a_source_topic_as_changelog_is_fatal_under_kip_and_runs_under_kafka():
    b = TopologyBuilder("app")
    b.subtopology(sources=["customers"], source_as_changelog={"table": "customers"})
    topology = b.build()
    for profile, ok in (("kip", False), ("kafka", True)):
        # No initial rebalance delay: during it the `kafka` coordinator answers the join with member
        # epoch 0, and a client's next heartbeat with epoch 0 and no topology is INVALID_REQUEST.
        c = coordinator(profile, {"group.streams.initial.rebalance.delay.ms": 0}, customers=4)
        sim = Simulation(c)
        a = sim.add(app(c, "A", topology))
        if ok:
            sim.run_until_stable("app")
            assert a.tasks()["active"] == {("0", p) for p in range(4)}
            assert "customers" in c.cluster and "app-table-changelog" not in c.cluster
        else:
            sim.run(1_000)
            assert a.threads[0].error[0] == "STREAMS_INVALID_TOPOLOGY" and not a.running


# -- fencing, static members, state directory ----------------------------------------------------

def test_a_thread_fenced_for_revoking_too_slowly_loses_its_tasks_and_rejoins_with_the_same_member_id():
    # Closing a task takes 5 s, but the rebalance timeout (max.poll.interval.ms) is 1 s: the
    # coordinator removes the member; its next heartbeat gets UNKNOWN_MEMBER_ID (KIP-848 rules).
    c = coordinator()
    sim = Simulation(c)
    a = sim.add(app(c, "A", stateless("app", "orders"), rebalance_timeout_ms=1_000, revocation_delay_ms=5_000))
    sim.run_until_stable("app")
    t = a.threads[0]
    member_id = t.member_id
    sim.add(app(c, "B", stateless("app", "orders")))
    sim.run_until(lambda: any(e.kind == "fenced" for e in t.events), timeout_ms=60_000)
    fenced = next(h for h in t.heartbeats if h.response.error_code != E.none)
    assert fenced.response.error_code in (E.unknown_member_id, E.fenced_member_epoch)
    sim.run_until_stable("app")
    kinds = [e.kind for e in t.events]
    assert kinds.index("revoking") < kinds.index("fenced") < kinds.index("lost")
    lost = next(e for e in t.events if e.kind == "lost")
    assert lost.partitions and lost.time == next(e.time for e in t.events if e.kind == "fenced")
    assert t.member_id == member_id and t.incarnation == 1
    rejoin = [h.request for h in t.heartbeats if h.request.member_epoch == 0]
    assert len(rejoin) == 2 and rejoin[1].topology is not None and rejoin[1].active_tasks == ()
    assert_owned_once(sim)


def test_static_threads_leave_with_minus_two_and_a_restart_keeps_the_tasks():
    c = coordinator()
    sim = Simulation(c)
    a = sim.add(app(c, "A", stateless("app", "orders"), threads=2, group_instance_id="a"))
    b = sim.add(app(c, "B", stateless("app", "orders"), group_instance_id="b"))
    sim.run_until_stable("app")
    assert [t.instance_id for t in a.threads] == ["a-1", "a-2"]
    before = {t.instance_id: set(t.owned) for t in a.threads}
    epoch = group(c).group_epoch
    a.close()
    leaves = [t.heartbeats[-1].request for t in a.threads]
    assert {r.member_epoch for r in leaves} == {-2} and {r.instance_id for r in leaves} == {"a-1", "a-2"}
    sim.run(5_000)
    assert set(b.tasks()["active"]) != set(sim.partitions())    # nobody took A's tasks: still A's
    a.start()
    sim.run_until_stable("app")
    assert {t.instance_id: set(t.owned) for t in a.threads} == before
    assert group(c).group_epoch == epoch                   # same topology epoch, rack, tags, process: no rebalance
    assert_owned_once(sim)


def test_the_state_directory_outlives_a_restart_and_its_offsets_are_reported_on_join():
    c = coordinator()
    shared = StateDirectory()
    sim = Simulation(c)
    a = sim.add(StreamsApplication(c, StreamsConfig("app", stateful("app", "orders"), num_stream_threads=2),
                                   name="A", state_dir=shared))
    sim.run_until_stable("app")
    a.close()
    assert shared.offsets == {("0", p): 50_000 for p in range(8)}
    sim.run(1_000)
    a.start()
    sim.step()
    join = a.threads[0].heartbeats[-1].request
    assert join.member_epoch == 0
    # Dormant tasks (state on disk, no thread of the process owns them) are reported, without end offsets.
    assert {(o.subtopology_id, o.partition): o.offset for o in join.task_offsets} == shared.offsets
    assert join.task_end_offsets == ()


# -- warm-up tasks (KIP-1071: highly_available for stateful topologies under `kip`) -----------------

def test_a_warmup_task_restores_over_time_and_becomes_active():
    # B joins with no local state: the highly_available assignor keeps the active tasks on A
    # (caught up) and gives B warm-up tasks; they restore at 10,000 records/s towards the
    # changelog end (50,000), are reported at once when within AcceptableRecoveryLag (1,000),
    # which bumps the group epoch, and then move to B as active tasks.
    c = coordinator(config={"group.streams.num.warmup.replicas": 2, "group.streams.acceptable.recovery.lag": 1_000})
    topology = stateful("app", "orders")
    sim = Simulation(c)
    a = sim.add(app(c, "A", topology, threads=2))
    sim.run_until_stable("app")
    b = sim.add(app(c, "B", topology, restore_records_per_s=10_000))
    t = b.threads[0]
    sim.run_until(lambda: bool(t.warmup))
    warm, since, epoch = set(t.warmup), c.now(), group(c).group_epoch
    assert not t.owned and a.tasks()["active"] == set(sim.partitions())    # not caught up: no active yet
    sim.run(2_000)
    assert all(0 < lag < 50_000 for lag in t.lag().values())                 # restoring, not there yet
    sim.run_until(lambda: any(e.kind == "caught_up" for e in t.events))
    caught = next(e for e in t.events if e.kind == "caught_up")
    assert caught.time - since >= (50_000 - 1_000) // 10 - sim.tick_ms       # ~4.9 s of restoring
    sim.step()
    report = next(h for h in t.heartbeats if h.time >= caught.time and h.request.task_offsets)
    assert report.time - caught.time <= sim.tick_ms                           # sent at once, not after 5 s
    reported = {(o.subtopology_id, o.partition): o.offset for o in report.request.task_offsets}
    assert all(50_000 - reported[task] <= 1_000 for task in warm)
    sim.run_until_stable("app")
    assert group(c).group_epoch > epoch
    assert warm <= t.owned and not t.warmup                                   # the warm-ups became active
    assert a.tasks()["active"] == set(sim.partitions()) - t.owned
    assert_owned_once(sim)


# -- shutdown, mixing ------------------------------------------------------------------------------

def test_a_shutdown_request_stops_every_instance():
    c = coordinator()
    sim = Simulation(c)
    apps = [sim.add(app(c, n, stateless("app", "orders"), threads=2)) for n in "ABC"]
    sim.run_until_stable("app")
    apps[0].request_shutdown()
    shutdown_leave = apps[0].threads[0].heartbeats[-1].request
    assert shutdown_leave.shutdown_application and shutdown_leave.member_epoch == -1
    sim.run(11_000)
    assert not any(x.running for x in apps) and {x.state for x in apps} == {"NOT_RUNNING"}
    for x in apps[1:]:
        assert x.shutdown_reason and any(SHUTDOWN_APPLICATION in t.statuses for t in x.threads)
    assert group(c).state == "Empty"


def test_streams_threads_run_next_to_a_kip848_consumer_group_in_one_simulation():
    c = coordinator(orders=4, clicks=3)
    sim = Simulation(c)
    a = sim.add(app(c, "A", stateful("app", "orders"), threads=2))
    consumer = sim.add(ConsumerGroupConsumer(c, "g", ["clicks"], name="K"))
    sim.run_until_stable("app")
    sim.run_until_stable("g")
    assert sim.partitions() == [("0", p) for p in range(4)] + [("clicks", p) for p in range(3)]
    assert a.tasks()["active"] == {("0", p) for p in range(4)} and consumer.owned == {("clicks", p) for p in range(3)}
    sim.reset_measurements()
    sim.run(10_000)
    assert sim.unowned_partition_ms() == 0 and sim.double_owned_samples() == 0
    assert {gid for _, gid, _, _ in sim.group_samples} == {"app", "g"}
    assert sim.summary("app")["double_owned_ticks"] == 0


def test_runs_repeat_exactly():
    def run() -> list:
        c = coordinator()
        sim = Simulation(c)
        for n in "AB":
            sim.add(app(c, n, stateful("app", "orders"), threads=2))
        sim.run_until_stable("app")
        return [(k.name, k.member_id, k.app.process_id, sorted(k.owned)) for k in sim.consumers] + [c.position]

    assert run() == run()
