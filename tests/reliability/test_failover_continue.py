"""Failover and continue: a scenario run twice, once on one coordinator and once with the
coordinator thrown away at some step and replaced by one rebuilt from its logs (the clients
rediscover it, as Kafka's clients do after NOT_COORDINATOR), must end in the same state:
the same groups, members, coverage and committed partitions (`end_state` says what a failover
may change, as it may in Kafka: which member holds which partition, and how many epochs it took).

Soft state (pending JoinGroups, timers) is handled as Kafka handles a coordinator move: the
clients join again, `on_loaded` hooks re-arm the timers. The KIP examples are failed over at
every step as well."""
from __future__ import annotations

import hypothesis.strategies as st
import pytest
from hypothesis import given

from invariants_testing import (COUNTS, assert_reload_equal, durable_view, failover, profile_settings,
                                reload, takeover_timers)
from kgroup.dumps.replay import describe_groups, describe_share_partitions
from test_group_invariants import NAMES, _machine

SETTLE_MS = 120_000


def _actions(kind: str):
    common = [st.tuples(st.sampled_from(["start", "close", "crash"]), st.sampled_from(NAMES)),
              st.tuples(st.just("run"), st.integers(1, 30)),
              st.tuples(st.just("clock_jump"), st.sampled_from([11_000, 46_000, 301_000])),
              st.tuples(st.just("create_topic"), st.integers(1, 6)),
              st.tuples(st.just("delete_topic")),
              st.tuples(st.just("add_partitions"), st.integers(1, 3), st.sampled_from(["orders", "payments"]))]
    if kind == "streams":
        common.append(st.tuples(st.just("restart_with_new_topology"), st.sampled_from(NAMES)))
    if kind == "share":
        common.append(st.tuples(st.just("produce"), st.sampled_from(["orders", "payments"]), st.integers(0, 3),
                                st.integers(1, 20)))
    return st.lists(st.one_of(common), min_size=1, max_size=25)


def play(kind: str, profile: str, actions: list, failover_at: int | None = None, *, reload_: bool = True):
    """Run `actions` on a fresh world (failing the coordinator over before action
    `failover_at`), then let it settle; returns the machine. `reload_=False`: at that point
    the live coordinator only re-arms its timers as one taking over would (the reference)."""
    base = _machine(kind, profile)
    # The periodic expiration check (empty groups and old offsets) is re-armed when a coordinator
    # loads (Kafka's onLoaded schedules it an interval after the load): a failover shifts when an
    # empty group is deleted, and clients heartbeating into a deleted group fail. Kept out of
    # this comparison; the invariant machines run it at its default interval.
    m = type(base.__name__, (base,), {"CONFIG": {**base.CONFIG, "offsets.retention.check.interval.ms": 10**12}})()
    m.a_group_running()             # the machines' initial state (hypothesis runs it itself)
    if hasattr(m, "records_to_share"):
        m.records_to_share()
    def fail_over() -> None:
        if reload_:
            failover(m.sim)
            COUNTS["failovers survived"] += 1
        else:
            takeover_timers(m.c)
    for i, (rule, *args) in enumerate(actions):
        if i == failover_at:
            fail_over()
        getattr(m, rule)(*args)
    if failover_at == len(actions):
        fail_over()
    m.sim.run(SETTLE_MS)
    return m


def end_state(m) -> dict:
    """What both runs must agree on once settled.

    The reference run re-arms its timers where the other fails over, so both see the same
    session deadlines. What remains between them is the reload itself, and with it the soft
    state Kafka's coordinator loses on a move too: the task offsets Streams members reported
    (the sticky assignor ranks by them), share sessions and acquired records, classic JoinGroups
    in flight. A sticky assignor's answer depends on those, so *which* member holds *which*
    partition or task, and how many epochs it took, may differ. What may not differ: the groups,
    their state, who is in them and what they subscribe to, that every member is reconciled
    with its target, that the same partitions (active tasks) are covered, as evenly
    (for Streams: see the note on sizes below), and that the same partitions have committed
    offsets."""
    groups = []
    for d in describe_groups(m.c):
        # member ids are random UUIDs in Kafka (a coordinator taking over makes other ones):
        # members are compared by who they are (client id, instance id)
        labels = {r["member_id"]: f"{r.get('client_id')}/{r.get('group_instance_id', r.get('instance_id'))}"
                  for r in d.get("members") or []}
        d = _relabel(dict(d), labels)
        for key in ("epoch", "assignment_epoch", "topology_epoch_bumped_at"):
            d.pop(key, None)      # counts of rebalances: history, see above
        members = [_member_outcome(r) for r in d.get("members") or []]
        d["members"] = sorted(members, key=repr)
        d["covered"] = sorted(set().union(*(r.pop("active") for r in members)))
        sizes = sorted(r.pop("size") for r in members)
        if d["type"] != "streams":
            # the uniform and simple assignors balance whatever the history; the Streams sticky
            # assignor keeps tasks where they were (ranking by the task offsets a reload loses),
            # and members on an older topology epoch get no new tasks (KIP-1071 "Topology
            # updates"), so a Streams group may settle as unevenly as its history made it
            d["sizes"] = sizes
        # which partitions have committed offsets; not how far: the survivors commit other
        # positions when partitions move at other times. Offsets of a deleted topic are not
        # compared: the coordinator that hears of the deletion tombstones them (onPartitionsDeleted),
        # one that loads after it never hears of it and keeps them, as in Kafka.
        d["offsets"] = sorted((o["topic"], o["partition"]) for o in d["offsets"] if o["topic"] in m.c.cluster)
        groups.append(d)
    running = [k for k in m.sim.consumers if k.running]
    owned = {"running": sorted(k.name for k in running)}
    if not any(d["type"] == "streams" for d in groups):
        owned["sizes"] = sorted(len(k.owned) for k in running)
    return {"groups": groups, "share_partitions": _share_outcome(m, running), "owned": owned,
            "owned_together": sorted(map(str, set().union(*(k.owned for k in running))))}


#: member fields that record assignment history (see `end_state`)
_HISTORY = ("member_epoch", "assigned", "target", "pending_revocation", "assignment_bytes", "leader")


def _member_outcome(r: dict) -> dict:
    out = {k: v for k, v in r.items() if k not in _HISTORY}
    assigned, target = _units(r.get("assigned")), _units(r.get("target"))
    out["reconciled"] = assigned == target and not _units(r.get("pending_revocation"))
    out["active"] = {u for u in assigned if u[0] != "standby" and u[0] != "warmup"}
    out["size"] = len(out["active"])
    return out


def _units(v) -> set:
    """Partitions (`{topic: [partitions]}`) or Streams tasks (`"active=[0_1, 1_0] standby=[0_2]"`)
    as a set of units."""
    if not v:
        return set()
    if isinstance(v, dict):
        return {(t, p) for t, ps in v.items() for p in ps}
    units = set()
    for part in str(v).split("] "):
        kind, _, tasks = part.partition("=[")
        units |= {(kind.strip(), t.strip()) for t in tasks.rstrip("]").split(",") if t.strip()}
    return units


def _share_outcome(m, running: list) -> list:
    """The share-partitions' durable state. Acquired records and share sessions are soft state
    (a share-partition leader that takes over loads what the share coordinator holds): records
    a failover released become Available again with the delivery count they had, so while
    consumers keep consuming, both runs end with the same records acknowledged. With no consumer
    left, the records in flight at the failover may stay Available, so then each
    share-partition is compared by what must hold in both runs: it exists, in the same state
    epoch, and every record from its start offset to the log end is accounted for. The same
    for a share-partition whose topic was deleted: no consumer fetches it any more, so what its
    leader last wrote depends on whether a (soft) share session reached it before the deletion.
    And under kafka, whose leaders write the SPSO share.auto.offset.reset gave only with their
    first change (Kafka 4.4.0): a leader that took over before then computed it again, later in
    the log, so the runs may start a share-partition at other offsets."""
    rows = describe_share_partitions(m.c)
    # the cold-partition snapshot timer is re-armed when a coordinator loads (soft, as in Kafka's
    # ShareCoordinatorShard): its snapshots come at other times (write time, snapshot epoch)
    soft = ("write_timestamp", "payload", "snapshot_epoch", "leader_epoch")
    whole = running and m.c.profile.share_reset_spso_written_at_load
    return [{k: v for k, v in r.items() if k not in soft} if whole and r["topic"] is not None else
            {"group_id": r["group_id"], "topic": r["topic"], "partition": r["partition"],
             "state_epoch": r["state_epoch"], "accounted_for": _accounted_for(m, r)} for r in rows]


def _accounted_for(m, r: dict) -> bool:
    """Nothing lost: the start offset is within the log, and every state batch lies between it
    and the log end (records past the last batch are Available)."""
    start, topic = r["start_offset"], r["topic"]
    if topic is None or topic not in m.c.cluster:
        end = float("inf")          # the topic was deleted: its log end is gone with it
    else:
        end = m.c.cluster.end_offset(topic, r["partition"])
    return start <= end and all(start <= b["first_offset"] <= b["last_offset"] < end for b in r["state_batches"])


def _relabel(x, labels: dict):
    if isinstance(x, str):
        return labels.get(x, x)
    if isinstance(x, dict):
        return {_relabel(k, labels): _relabel(v, labels) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return type(x)(_relabel(v, labels) for v in x)
    return x


@pytest.mark.parametrize("profile", ["kip", "kafka"])
@pytest.mark.parametrize("kind", ["classic", "consumer", "streams", "share"])
def test_a_failover_at_any_step_ends_where_no_failover_ends(kind: str, profile: str, reliability) -> None:
    COUNTS.use(reliability)

    @profile_settings()
    @given(data=st.data())
    def check(data) -> None:
        actions = data.draw(_actions(kind), label="actions")
        at = data.draw(st.integers(0, len(actions)), label="failover before action")
        # the reference re-arms its timers at the same step, as a coordinator taking over does
        # (sessions restart from the load): the two runs differ by the reload alone
        reference = end_state(play(kind, profile, actions, at, reload_=False))
        failed_over = play(kind, profile, actions, at)
        assert end_state(failed_over) == reference
        assert_reload_equal(failed_over.c)
        COUNTS["steps explored"] += 2 * len(actions)

    check()


def test_a_process_restarted_after_a_failover_gets_a_fresh_member_id(reliability) -> None:
    """Kafka's JoinGroup gives a new member a random UUID: the coordinator that took over must not
    hand a restarted process the id of its crashed predecessor, which is still a member until its
    session times out (the new process would take over the dead one's session)."""
    COUNTS.use(reliability)
    m = _machine("classic", "kip")()
    m.start("A")
    m.run(10)
    dead = m.clients["A"].member_id
    m.crash("A")
    m.coordinator_failover()
    m.start("A")
    m.run(2)
    assert dead in m.c.groups["g"].members            # still there until its session times out
    assert m.clients["A"].member_id not in ("", dead)
    m.clock_jump(11_000)
    m.run(30)
    assert list(m.c.groups["g"].members) == [m.clients["A"].member_id]


# -- the KIP examples, failed over at every step ----------------------------------------------

def fail_over_in_place(c, keep_soft: tuple[str, ...] = ()) -> None:
    """Replace everything `c` holds by what a coordinator rebuilt from its logs holds (the
    examples keep `c` in closures: the object stays, its state is the reloaded one's).
    `keep_soft`: soft-state keys that stand for configuration in an example (e.g. the KIP's
    fixed task assignor), carried over as a restarted broker would read its config again."""
    new = reload(c)
    for key in keep_soft:
        if key in c.soft_state:
            new.soft_state[key] = c.soft_state[key]
    c.__dict__ = new.__dict__   # one state, whichever object a timer or a closure holds


def _failing_over_at(monkeypatch, k: int, keep_soft: tuple[str, ...] = ()) -> list:
    """Make `Scenario.step` fail the coordinator over right after its k-th step."""
    from kgroup.scenario import Scenario
    original = Scenario.step
    done = []

    def step(self, *args, **kw):
        s = original(self, *args, **kw)
        if len(self.steps) == k + 1:
            fail_over_in_place(self.coordinator, keep_soft)
            COUNTS["failovers survived"] += 1
            done.append(k)
        COUNTS["steps explored"] += 1
        return s

    monkeypatch.setattr(Scenario, "step", step)
    return done


def _durable(c) -> dict:
    """The end state: what the logs say (a reload of them). A rebalance a classic group has in
    memory is not in them (in Kafka neither: a failover right after the downgrade of the
    migration example loses the rebalance the leaving member started)."""
    return durable_view(reload(c))


@pytest.mark.parametrize("profile", ["kip", "kafka"])
def test_kip1071_rolling_bounce_failed_over_at_every_step(profile: str, reliability, monkeypatch) -> None:
    """KIP-1071's rolling bounce: a coordinator failover after any heartbeat changes nothing."""
    from kgroup.kip_examples import rolling_bounce
    COUNTS.use(reliability)
    reference = rolling_bounce(profile=profile)
    for k in range(len(reference.scenario.steps)):
        with monkeypatch.context() as mp:
            done = _failing_over_at(mp, k)
            ex = rolling_bounce(profile=profile)
        assert done == [k]
        assert [(p.label, p.assignment) for p in ex.phases] == [(p.label, p.assignment) for p in reference.phases], k
        assert _durable(ex.coordinator) == _durable(reference.coordinator), k


@pytest.mark.parametrize("profile", ["kip", "kafka"])
def test_kip1071_migration_failed_over_at_every_step(profile: str, reliability, monkeypatch) -> None:
    """KIP-1071's online migration (classic -> streams -> classic) failed over after any step
    ends where it ends without a failover."""
    from kgroup.assignors.streams import TASK_ASSIGNOR_OVERRIDE
    from kgroup.kip_examples import migration_example
    COUNTS.use(reliability)
    reference = migration_example(profile=profile)
    for k in range(len(reference.scenario.steps)):
        with monkeypatch.context() as mp:
            done = _failing_over_at(mp, k, keep_soft=(TASK_ASSIGNOR_OVERRIDE,))
            ex = migration_example(profile=profile)
        assert done == [k]
        assert ex.table() == reference.table(), k
        assert _durable(ex.coordinator) == _durable(reference.coordinator), k


def test_kip932_durable_state_with_the_share_coordinator_failed_over_before_every_write(reliability,
                                                                                           monkeypatch) -> None:
    """KIP-932's durable-state example: the share coordinator (the `__share_group_state` leader)
    moves before any write of the share-partition leader; the new one, rebuilt from the log,
    accepts the same writes (same state epoch, leader epoch), so every row is the same."""
    from kgroup import Coordinator
    from kgroup.groups.share.coordinator import SHARE_COORDINATOR, share_coordinator
    from kgroup.groups.share.persister import CoordinatorPersister
    from kgroup.kip_examples import share_durable_state_example
    COUNTS.use(reliability)
    calls = []
    original = CoordinatorPersister.write_state

    def counting(self, *args, **kw):
        calls.append(1)
        return original(self, *args, **kw)

    with monkeypatch.context() as mp:
        mp.setattr(CoordinatorPersister, "write_state", counting)
        reference = share_durable_state_example()
    writes = len(calls)
    assert writes > 5
    for k in range(writes):
        n = []

        def failing_over(self, *args, **kw):
            if len(n) == k:
                c = self.coordinator
                fresh = share_coordinator(Coordinator.load(c.share_state_log, cluster=c.cluster, config=c.config,
                                                           profile=c.profile, clock=c.clock))
                fresh.coordinator = c
                c.components[SHARE_COORDINATOR] = fresh
                COUNTS["failovers survived"] += 1
            n.append(1)
            COUNTS["steps explored"] += 1
            return original(self, *args, **kw)

        with monkeypatch.context() as mp:
            mp.setattr(CoordinatorPersister, "write_state", failing_over)
            ex = share_durable_state_example()
        assert ex.rows == reference.rows, k
        assert describe_share_partitions(ex.coordinator) == describe_share_partitions(reference.coordinator), k


@pytest.mark.parametrize("profile", ["kip", "kafka"])
@pytest.mark.parametrize("kind", ["classic", "consumer", "streams", "share"])
def test_a_member_that_crashed_before_a_failover_still_times_out(kind: str, profile: str, reliability) -> None:
    """Sessions are soft state: the coordinator that takes over starts every loaded member's
    session afresh (Kafka's `onLoaded` hooks), so a member that died before the move is still
    removed, and the group ends as it would have without the failover."""
    COUNTS.use(reliability)
    actions = [("start", "B"), ("run", 20), ("crash", "A"), ("run", 2)]
    reference = play(kind, profile, actions, failover_at=3, reload_=False)
    failed_over = play(kind, profile, actions, failover_at=3)
    assert end_state(failed_over) == end_state(reference)
    members = [r["client_id"] for d in describe_groups(failed_over.c) for r in d.get("members") or []]
    assert members and not [name for name in members if name.startswith("A")]
    COUNTS["steps explored"] += 2 * len(actions)
