"""kgroup's Streams member reconciliation (``kgroup.groups.streams.reconciliation.reconcile``)
against Apache Kafka's own ``org.apache.kafka.coordinator.group.streams.CurrentAssignmentBuilder``,
run in a JVM (``java/StreamsReconciliationOracle.java``): the same member, target assignment,
group task owners and reported tasks must give exactly the same member (epochs, state, assigned
and pending tasks, assignment epochs) or the same error. The task -> process maps the builder
reads are checked too: `StreamsGroup`'s against Kafka's StreamsGroup after the same member
updates and removals.

Every test batches its inputs into one JVM run. Without Java/Maven the tests are skipped (with
the command that enables them); under CI they must run.
"""
from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from kgroup.assignors.streams.api import TaskId, TaskSets
from kgroup.errors import KafkaError
from kgroup.groups.modern import MemberState
from kgroup.groups.streams.group import StreamsGroupMember
from kgroup.groups.streams.reconciliation import reconcile

from java_oracle import java_oracle

JAVA_SOURCES = Path(__file__).parent / "java"
STATES = {MemberState.STABLE: "STABLE", MemberState.UNREVOKED_PARTITIONS: "UNREVOKED_TASKS",
          MemberState.UNRELEASED_PARTITIONS: "UNRELEASED_TASKS", MemberState.UNKNOWN: "UNKNOWN"}


@dataclass
class Owners:
    """The group's current task -> process maps (what `StreamsGroup` keeps)."""

    active: dict[TaskId, str] = field(default_factory=dict)
    standby: dict[TaskId, set[str]] = field(default_factory=dict)
    warmup: dict[TaskId, set[str]] = field(default_factory=dict)

    def current_active_task_process_id(self, task):
        return self.active.get(task)

    def current_standby_task_process_ids(self, task):
        return self.standby.get(task, frozenset())

    def current_warmup_task_process_ids(self, task):
        return self.warmup.get(task, frozenset())


@dataclass
class Case:
    member: StreamsGroupMember
    target_epoch: int
    target: TaskSets
    owners: Owners
    owned: TaskSets | None


@pytest.fixture(scope="module")
def kafka_reconcile():
    """Runs Kafka's CurrentAssignmentBuilder on a batch of cases (or a StreamsGroup on a batch of
    ownership inputs, given as the oracle's JSON): one result (or error) each."""
    return java_oracle(JAVA_SOURCES, "StreamsReconciliationOracle",
                       lambda c: c if isinstance(c, dict) else _to_json(c))


# -- JSON both sides speak ------------------------------------------------------------------

def _sets(tasks) -> dict:
    return {s: sorted(ps) for s, ps in sorted(tasks.items()) if ps}


def _with_epochs(tasks, epoch_of) -> dict:
    return {s: {str(p): epoch_of((s, p)) for p in sorted(ps)} for s, ps in sorted(tasks.items()) if ps}


def _member_tasks(m: StreamsGroupMember, tasks: TaskSets) -> dict:
    return {"active": _with_epochs(tasks.active, m.active_epoch_of), "standby": _sets(tasks.standby),
            "warmup": _sets(tasks.warmup)}


def _tuple(tasks: TaskSets) -> dict:
    return {"active": _sets(tasks.active), "standby": _sets(tasks.standby), "warmup": _sets(tasks.warmup)}


def _by_task(index: dict, value) -> dict:
    out: dict[str, dict[str, object]] = {}
    for (s, p), v in sorted(index.items()):
        out.setdefault(s, {})[str(p)] = value(v)
    return out


def _to_json(c: Case) -> dict:
    m = c.member
    return {"member": {"memberId": m.member_id, "processId": m.process_id, "memberEpoch": m.member_epoch,
                       "previousMemberEpoch": m.previous_member_epoch, "state": STATES[m.state],
                       "assigned": _member_tasks(m, m.assigned),
                       "pendingRevocation": _member_tasks(m, m.pending_revocation)},
            "targetEpoch": c.target_epoch, "target": _tuple(c.target),
            "activeProcess": _by_task(c.owners.active, str),
            "standbyProcesses": _by_task(c.owners.standby, sorted),
            "warmupProcesses": _by_task(c.owners.warmup, sorted),
            "owned": None if c.owned is None else _tuple(c.owned)}


def _kgroup_json(c: Case) -> dict:
    try:
        m = reconcile(c.member, c.target_epoch, c.target, owners=c.owners, owned=c.owned)
    except KafkaError as e:
        return {"error": f"{type(e).__name__}({e.code.name}): {e.message}"}
    out = {"memberEpoch": m.member_epoch, "previousMemberEpoch": m.previous_member_epoch, "state": STATES[m.state],
           "assigned": _member_tasks(m, m.assigned), "pendingRevocation": _member_tasks(m, m.pending_revocation)}
    if m is c.member:
        out["same"] = True
    return out


def _kafka_normalised(result: dict) -> dict:
    """Kafka's answer in the form `_kgroup_json` writes (its exception as kgroup's error code)."""
    if "error" in result:
        cls, _, message = result["error"].partition(": ")
        assert cls == "FencedMemberEpochException", result
        return {"error": f"KafkaError(fenced_member_epoch): {message}"}
    return result


def _assert_same(cases: list[Case], kafka: list[dict]) -> None:
    mismatches = [(i, json.dumps(_to_json(c)), ours, theirs)
                  for i, (c, theirs) in enumerate(zip(cases, map(_kafka_normalised, kafka)))
                  if (ours := _kgroup_json(c)) != theirs]
    assert not mismatches, "\n\n".join(f"case {i}: {inp}\n kgroup: {ours}\n  kafka: {theirs}"
                                       for i, inp, ours, theirs in mismatches[:5]) + \
        f"\n\n{len(mismatches)} of {len(cases)} differ"


# -- named cases ----------------------------------------------------------------------------

def tasks(**roles) -> TaskSets:
    """`tasks(active=[0, 1], standby=[2])`: partitions of subtopology "0"."""
    return TaskSets(**{r: {"0": frozenset(ps)} for r, ps in roles.items()})


def member(mid="A", process="pA", epoch=3, previous=2, state=MemberState.STABLE, assigned=TaskSets(),
           pending=TaskSets(), epochs=None) -> StreamsGroupMember:
    return StreamsGroupMember(member_id=mid, process_id=process, member_epoch=epoch, previous_member_epoch=previous,
                              state=state, assigned=assigned, pending_revocation=pending,
                              active_epochs=epochs if epochs is not None else {})


def owners_of(*members: StreamsGroupMember) -> Owners:
    """The task -> process maps the group keeps for these members."""
    o = Owners()
    for m in members:
        for ts in (m.assigned, m.pending_revocation):
            o.active.update(dict.fromkeys(ts.active_ids(), m.process_id))
            for task in ts.standby_ids():
                o.standby.setdefault(task, set()).add(m.process_id)
            for task in ts.warmup_ids():
                o.warmup.setdefault(task, set()).add(m.process_id)
    return o


def expected(c: Case, epoch, previous, state, assigned, pending=TaskSets(), epochs=None) -> dict:
    m = member(epoch=epoch, state=state, assigned=assigned, pending=pending,
               epochs=epochs if epochs is not None else {})
    return {"memberEpoch": epoch, "previousMemberEpoch": previous, "state": STATES[state],
            "assigned": _member_tasks(m, assigned), "pendingRevocation": _member_tasks(m, pending)}


def observed_active_demoted_to_standby_while_revoking() -> Case:
    # Broker run: A owned active [0,1,2,3] at epoch 3; B joined; target A: active [0,1] standby [2,3].
    a = member(assigned=tasks(active=[0, 1, 2, 3]))
    return Case(a, 4, tasks(active=[0, 1], standby=[2, 3]), owners_of(a), tasks(active=[0, 1, 2, 3]))


def observed_demotion_with_standby_moving_on() -> Case:
    # Broker run: B at epoch 4 owned active [2,3] standby [0,1]; C joined; target active [2] standby [1,3].
    b = member("B", "pB", epoch=4, previous=3, assigned=tasks(active=[2, 3], standby=[0, 1]))
    a = member("A", "pA", epoch=4, previous=3, assigned=tasks(active=[0, 1], standby=[2, 3]))
    return Case(b, 5, tasks(active=[2], standby=[1, 3]), owners_of(a, b), tasks(active=[2, 3], standby=[0, 1]))


def test_observed_active_demoted_to_standby_while_revoking(kafka_reconcile):
    c = observed_active_demoted_to_standby_while_revoking()
    _assert_same([c], kafka_reconcile([c]))
    # standby [2,3] is granted at once (the member already runs them), active [2,3] is revoked
    assert _kgroup_json(c) == expected(c, 3, 3, MemberState.UNREVOKED_PARTITIONS,
                                       tasks(active=[0, 1], standby=[2, 3]), tasks(active=[2, 3]))


def test_observed_demotion_with_standby_moving_on(kafka_reconcile):
    c = observed_demotion_with_standby_moving_on()
    _assert_same([c], kafka_reconcile([c]))
    assert _kgroup_json(c) == expected(c, 4, 4, MemberState.UNREVOKED_PARTITIONS,
                                       tasks(active=[2], standby=[1, 3]), tasks(active=[3], standby=[0]),
                                       epochs={("0", 2): 4, ("0", 3): 4})


def edge_cases() -> list[Case]:
    cases = []
    # Promotion standby -> active while another member still runs it: the standby stays until granted.
    a = member(assigned=tasks(standby=[1]))
    b = member("B", "pB", assigned=tasks(active=[1]))
    cases.append(Case(a, 4, tasks(active=[1]), owners_of(a, b), tasks(standby=[1])))
    # ... and once it is free: the active task is granted and the standby dropped.
    cases.append(Case(a, 4, tasks(active=[1]), owners_of(a), tasks(standby=[1])))
    # Promotion while something else is still to be revoked: the standby is kept, nothing granted.
    a2 = member(assigned=tasks(active=[0], standby=[1]))
    cases.append(Case(a2, 4, tasks(active=[1]), owners_of(a2), tasks(active=[0], standby=[1])))
    # Standby <-> warm-up on the same member: converted at once, nothing revoked.
    a3 = member(assigned=tasks(standby=[1], warmup=[2]))
    cases.append(Case(a3, 4, tasks(standby=[2], warmup=[1]), owners_of(a3), tasks(standby=[1], warmup=[2])))
    # A standby wanted while another member of the same process runs it as active.
    a4 = member(assigned=tasks())
    b4 = member("B", "pA", assigned=tasks(active=[1]))
    cases.append(Case(a4, 4, tasks(standby=[1]), owners_of(a4, b4), tasks()))
    # ... or while another process holds it as standby (that does not block).
    b5 = member("B", "pB", assigned=tasks(standby=[1]))
    cases.append(Case(a4, 4, tasks(standby=[1]), owners_of(a4, b5), tasks()))
    # A warm-up wanted while this process holds it as warm-up.
    b6 = member("B", "pA", assigned=tasks(warmup=[1]))
    cases.append(Case(a4, 4, tasks(warmup=[1]), owners_of(a4, b6), tasks()))
    # UNREVOKED: still reporting a revoked task / confirmed / not reported / more to revoke (epoch + 1).
    u = member(state=MemberState.UNREVOKED_PARTITIONS, assigned=tasks(active=[0]), pending=tasks(active=[1]),
               epochs={("0", 0): 2, ("0", 1): 1})
    for owned in (tasks(active=[0, 1]), tasks(active=[0]), None):
        cases.append(Case(u, 5, tasks(active=[0, 2]), owners_of(u), owned))
    cases.append(Case(u, 5, tasks(active=[2]), owners_of(u), tasks(active=[0])))
    # UNRELEASED: waiting for a task, then it is free.
    r = member(state=MemberState.UNRELEASED_PARTITIONS, epoch=5, previous=4, assigned=tasks(active=[0]))
    other = member("B", "pB", assigned=tasks(active=[1]))
    cases.append(Case(r, 5, tasks(active=[0, 1]), owners_of(r, other), tasks(active=[0])))
    cases.append(Case(r, 5, tasks(active=[0, 1]), owners_of(r), tasks(active=[0])))
    # UNKNOWN: fenced unless the member reports owning nothing; then its recorded tasks reconcile.
    k = member(state=MemberState.UNKNOWN, assigned=tasks(active=[0, 1]))
    for owned in (None, tasks(active=[0]), TaskSets()):
        cases.append(Case(k, 6, tasks(active=[1, 2]), owners_of(k), owned))
    # STABLE at the target epoch: the member itself.
    s = member(epoch=4)
    cases.append(Case(s, 4, tasks(active=[0]), owners_of(s), None))
    # Revoked standby and warm-up tasks only: revoked, the member still reports them.
    w = member(assigned=tasks(standby=[0], warmup=[1]))
    cases.append(Case(w, 4, TaskSets(), owners_of(w), tasks(standby=[0], warmup=[1])))
    cases.append(Case(w, 4, TaskSets(), owners_of(w), TaskSets()))
    return cases


def test_edge_cases(kafka_reconcile):
    cases = edge_cases()
    _assert_same(cases, kafka_reconcile(cases))


# -- seeded random cases --------------------------------------------------------------------

def _random_tasks(rng: random.Random, pool: list[TaskId], k: int) -> list[TaskId]:
    return rng.sample(pool, min(len(pool), rng.randint(0, k)))


def random_case(rng: random.Random) -> Case:
    subtopologies = ["0", "1"][:rng.randint(1, 2)]
    pool = [(s, p) for s in subtopologies for p in range(rng.randint(1, 5))]
    processes = ["pA", "pB", "pC"]
    state = rng.choice([MemberState.STABLE] * 3 + [MemberState.UNREVOKED_PARTITIONS] * 2
                       + [MemberState.UNRELEASED_PARTITIONS] * 2 + [MemberState.UNKNOWN])
    epoch = rng.randint(1, 6)

    def roles(k: int, disjoint: bool) -> TaskSets:
        free = list(pool)
        out = {}
        for r in ("active", "standby", "warmup"):
            chosen = _random_tasks(rng, free, k)
            out[r] = chosen
            if disjoint:
                free = [t for t in free if t not in chosen]
        return TaskSets.of(**out)
    # A member's roles are usually disjoint; now and then they overlap (a record may say anything).
    assigned = roles(3, rng.random() < 0.9)
    pending = roles(2, True) if state == MemberState.UNREVOKED_PARTITIONS or rng.random() < 0.1 else TaskSets()
    epochs = {t: rng.randint(0, epoch) for t in (*assigned.active_ids(), *pending.active_ids())
              if rng.random() < 0.9}
    m = member(process=rng.choice(processes), epoch=epoch, previous=max(0, epoch - rng.randint(0, 2)),
               state=state, assigned=assigned, pending=pending, epochs=epochs)
    target = roles(3, rng.random() < 0.95)
    target_epoch = rng.choice([epoch, epoch + 1, epoch + 1, epoch + 2])
    owners = Owners()
    mine = owners_of(m)
    if rng.random() < 0.8:   # usually the group's maps include the member's own tasks
        owners = mine
    for t in pool:
        if rng.random() < 0.3:
            owners.active[t] = rng.choice(processes)
        for index in (owners.standby, owners.warmup):
            if rng.random() < 0.25:
                index.setdefault(t, set()).add(rng.choice(processes))
    owned_kind = rng.random()
    if owned_kind < 0.15:
        owned = None
    elif owned_kind < 0.3:
        owned = TaskSets()
    else:
        # a member waiting to revoke has let go of them half the time
        everything = m.assigned if state == MemberState.UNREVOKED_PARTITIONS and rng.random() < 0.5 else m.owned()
        owned = TaskSets.of(active=[t for t in everything.active_ids() if rng.random() < 0.6],
                            standby=[t for t in everything.standby_ids() if rng.random() < 0.6],
                            warmup=[t for t in everything.warmup_ids() if rng.random() < 0.6]
                            + _random_tasks(rng, pool, 1))
    return Case(m, target_epoch, target, owners, owned)


def test_random_cases(kafka_reconcile):
    rng = random.Random(1071)
    cases = [random_case(rng) for _ in range(600)]
    _assert_same(cases, kafka_reconcile(cases))


# -- the group's task -> process maps reconcile reads ---------------------------------------

def _member_json(m: StreamsGroupMember) -> dict:
    return {"memberId": m.member_id, "processId": m.process_id, "memberEpoch": m.member_epoch,
            "previousMemberEpoch": m.previous_member_epoch, "state": STATES[m.state],
            "assigned": _member_tasks(m, m.assigned), "pendingRevocation": _member_tasks(m, m.pending_revocation)}


def random_ownership(rng: random.Random) -> tuple[list, list[TaskId]]:
    """Member updates and removals in some order: several members per process, process ids
    changing, tasks held twice (as compacted or odd logs have them)."""
    pool = [("0", p) for p in range(4)] + [("1", 0)]
    ops: list = []
    present: set[str] = set()
    for _ in range(rng.randint(1, 12)):
        mid = rng.choice("ABCD")
        if mid in present and rng.random() < 0.15:   # (Kafka removes only members it has)
            ops.append(("remove", mid))
            present.discard(mid)
            continue
        present.add(mid)
        ts = {r: _random_tasks(rng, pool, 2) for r in ("active", "standby", "warmup")}
        pend = {r: _random_tasks(rng, pool, 1) for r in ("active", "standby", "warmup")} \
            if rng.random() < 0.3 else {}
        ops.append(("update", member(mid, rng.choice(["pA", "pA", "pB", "pC"]), epoch=rng.randint(1, 9),
                                     state=MemberState.UNREVOKED_PARTITIONS if pend else MemberState.STABLE,
                                     assigned=TaskSets.of(**ts), pending=TaskSets.of(**pend))))
    return ops, pool


def _kgroup_owners(ops: list, tasks: list[TaskId]) -> dict:
    from kgroup.groups.streams.group import StreamsGroup
    g = StreamsGroup("g")
    for kind, arg in ops:
        if kind == "update":
            g.update_member(arg)
        else:
            g.remove_member(arg)
    return {f"{s}_{p}": {"active": g.current_active_task_process_id((s, p)),
                         "standby": sorted(g.current_standby_task_process_ids((s, p))),
                         "warmup": sorted(g.current_warmup_task_process_ids((s, p)))} for s, p in tasks}


def test_group_task_owner_maps(kafka_reconcile):
    rng = random.Random(848)
    batches = [random_ownership(rng) for _ in range(300)]
    kafka = kafka_reconcile([{"ownership": [{"update": _member_json(a)} if k == "update" else {"remove": a}
                                            for k, a in ops],
                              "tasks": [list(t) for t in tasks]} for ops, tasks in batches])
    mismatches = [(i, ours, theirs) for i, ((ops, tasks), theirs) in enumerate(zip(batches, kafka))
                  if (ours := _kgroup_owners(ops, tasks)) != theirs]
    assert not mismatches, f"{len(mismatches)} of {len(batches)} differ; first: {mismatches[0]}"
