"""KIP-1071's task-assignor invariants, as hypothesis properties over random groups, for both
assignors (`sticky`, `highly_available`):

- every task is active on exactly one member (when some member may take it);
- a stale member (topology epoch behind the group's) gets no task it did not have;
- no stateful task twice on one process id, in any roles; stateless tasks get no standbys;
- standbys: up to `num_standby_replicas` per stateful task, on distinct processes;
- a caught-up warm-up becomes active or standby or is dropped; warm-ups within the group limit;
- balance: eligible members' active counts differ by at most one (when stale members keep
  nothing and none keeps more than the quota); stickiness: the result is a fixed point;
- deterministic, and invalid current tasks (unknown subtopology, out of range, twice) are dropped.
"""
from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings, strategies as st

from kgroup.assignors.streams import (GroupSpec, MemberSpec, STREAMS_ASSIGNORS, SubtopologySpec, TaskAssignorException,
                                      TaskSets,
                                      get_task_assignor, is_caught_up)

ASSIGNORS = sorted(STREAMS_ASSIGNORS)


@st.composite
def groups(draw, stale: bool = True):
    subs = {str(i): SubtopologySpec(draw(st.integers(1, 12)), draw(st.booleans()))
            for i in range(draw(st.integers(1, 4)))}
    every = [(s, p) for s, sub in subs.items() for p in range(sub.num_partitions)]
    junk = [("9", 0), ("0", 99)]                       # unknown subtopology, partition out of range
    n_proc = draw(st.integers(1, 5))
    members = {}
    topology_epoch = 1
    for i in range(draw(st.integers(1, 10))):
        mid = f"m{i}"
        cur = TaskSets.of(active=draw(st.lists(st.sampled_from(every + junk), max_size=6)),
                          standby=draw(st.lists(st.sampled_from(every), max_size=4)),
                          warmup=draw(st.lists(st.sampled_from(every), max_size=2)))
        epoch = draw(st.sampled_from([1, 1, 1, 0])) if stale else 1
        members[mid] = MemberSpec(mid, f"p{draw(st.integers(0, n_proc - 1))}", epoch, cur)
    procs = sorted({m.process_id for m in members.values()})
    offsets = {p: {t: draw(st.integers(0, 1000)) for t in draw(st.lists(st.sampled_from(every), max_size=6))}
               for p in procs}
    ends = {t: draw(st.integers(0, 1000)) for t in draw(st.lists(st.sampled_from(every), max_size=8))}
    return GroupSpec(members=members, subtopologies=subs, topology_epoch=topology_epoch,
                     num_standby_replicas=draw(st.integers(0, 2)), num_warmup_replicas=draw(st.integers(0, 3)),
                     acceptable_recovery_lag=draw(st.sampled_from([0, 100, 10_000])),
                     task_offsets=offsets, task_end_offsets=ends)


def check_invariants(spec: GroupSpec, result: dict[str, TaskSets]) -> None:
    assert set(result) == set(spec.members)
    tasks = set(spec.tasks())
    stateful = {s for s, sub in spec.subtopologies.items() if sub.stateful}
    eligible = {m for m, s in spec.members.items() if s.topology_epoch == spec.topology_epoch}
    owners = Counter(t for r in result.values() for t in r.active_ids())
    for t in tasks:
        if eligible or any(t in s.current.active_ids() for s in spec.members.values()):
            assert owners[t] == 1, f"task {t} active on {owners[t]} members"
        else:
            assert owners[t] == 0
    for mid, r in result.items():
        assert r.all_ids() <= tasks, "a task outside the topology was assigned"
        assert not (r.active_ids() & r.standby_ids() or r.active_ids() & r.warmup_ids()
                    or r.standby_ids() & r.warmup_ids()), "a task in two roles on one member"
        if mid not in eligible:
            assert r.all_ids() <= spec.members[mid].current.all_ids(), f"stale member {mid} got a new task"
    per_process: Counter = Counter()
    standbys: Counter = Counter()
    for mid, r in result.items():
        proc = spec.members[mid].process_id
        for t in r.all_ids():
            if t[0] in stateful:
                per_process[(proc, t)] += 1
        for t in r.standby_ids() | r.warmup_ids():
            assert t[0] in stateful, f"stateless task {t} got a standby or warm-up"
        standbys.update(r.standby_ids())
    assert max(per_process.values(), default=0) <= 1, "a stateful task twice on one process"
    for t, n in standbys.items():
        assert n <= max(spec.num_standby_replicas, sum(1 for s in spec.members.values() if t in s.current.standby_ids()))
    warmups = sum(len(r.warmup_ids()) for r in result.values())
    assert warmups <= spec.num_warmup_replicas
    for mid, r in result.items():
        proc = spec.members[mid].process_id
        for t in r.warmup_ids():
            assert not is_caught_up(spec, proc, t), "a caught-up warm-up stayed a warm-up"


@settings(max_examples=200, deadline=None)
@given(spec=groups())
def test_sticky_keeps_the_invariants(spec):
    check_invariants(spec, get_task_assignor("sticky").assign(spec))


@settings(max_examples=200, deadline=None)
@given(spec=groups())
def test_highly_available_keeps_the_invariants(spec):
    check_invariants(spec, get_task_assignor("highly_available").assign(spec))


@settings(max_examples=150, deadline=None)
@given(spec=groups(stale=False), name=st.sampled_from([a for a in ASSIGNORS if a != "sticky"]))  # sticky: Kafka 4.4.0's
def test_balanced_and_a_fixed_point(spec, name):
    assignor = get_task_assignor(name)
    first = assignor.assign(spec)
    counts = [len(r.active_ids()) for r in first.values()]
    # highly_available leaves a task on a caught-up member while its balanced owner warms up:
    # each warm-up may skew the balance by one task on either side.
    warmups = sum(len(r.warmup_ids()) for r in first.values())
    assert max(counts) - min(counts) <= 1 + 2 * warmups, counts
    again = GroupSpec(members={m: MemberSpec(m, s.process_id, s.topology_epoch, first[m])
                               for m, s in spec.members.items()},
                      subtopologies=spec.subtopologies, topology_epoch=spec.topology_epoch,
                      num_standby_replicas=spec.num_standby_replicas, num_warmup_replicas=spec.num_warmup_replicas,
                      acceptable_recovery_lag=spec.acceptable_recovery_lag, task_offsets=spec.task_offsets,
                      task_end_offsets=spec.task_end_offsets)
    second = assignor.assign(again)
    if not warmups:  # with warm-ups in flight the next assignment is meant to move tasks
        assert {m: r.active_ids() for m, r in second.items()} == {m: r.active_ids() for m, r in first.items()}
    assert assignor.assign(spec) == first                      # deterministic


def test_warm_up_lifecycle_highly_available():
    """Not caught up -> the balanced owner gets a warm-up while the caught-up process keeps
    the active; caught up -> the task moves and the warm-up is gone (KIP-1071 invariant)."""
    subs = {"0": SubtopologySpec(2, True)}
    a = MemberSpec("a", "pa", 0, TaskSets.of(active=[("0", 0), ("0", 1)]))
    b = MemberSpec("b", "pb", 0, TaskSets())
    ends = {("0", 0): 1000, ("0", 1): 1000}
    lagging = GroupSpec({"a": a, "b": b}, subs, task_offsets={"pa": ends, "pb": {}}, task_end_offsets=ends,
                        acceptable_recovery_lag=10)
    r = get_task_assignor("highly_available").assign(lagging)
    assert r["a"].active_ids() == {("0", 0), ("0", 1)} and len(r["b"].warmup_ids()) == 1
    (warm,) = r["b"].warmup_ids()
    b2 = MemberSpec("b", "pb", 0, r["b"])
    a2 = MemberSpec("a", "pa", 0, r["a"])
    caught_up = GroupSpec({"a": a2, "b": b2}, subs, task_offsets={"pa": ends, "pb": {warm: 995}},
                          task_end_offsets=ends, acceptable_recovery_lag=10)
    r = get_task_assignor("highly_available").assign(caught_up)
    assert r["b"].active_ids() == {warm} and not r["b"].warmup_ids()
    assert r["a"].active_ids() == {("0", 0), ("0", 1)} - {warm}


def test_no_warmups_when_the_limit_is_zero():
    subs = {"0": SubtopologySpec(4, True)}
    a = MemberSpec("a", "pa", 0, TaskSets.of(active=[("0", p) for p in range(4)]))
    spec = GroupSpec({"a": a, "b": MemberSpec("b", "pb", 0)}, subs, num_warmup_replicas=0,
                     task_offsets={"pa": {("0", p): 10 for p in range(4)}},
                     task_end_offsets={("0", p): 10 for p in range(4)})
    r = get_task_assignor("highly_available").assign(spec)
    assert not r["b"].warmup_ids() and len(r["b"].active_ids()) == 2   # balance wins without warm-ups


def test_standbys_on_other_processes_only():
    subs = {"0": SubtopologySpec(3, True)}
    members = {m: MemberSpec(m, p, 0) for m, p in (("a1", "p1"), ("a2", "p1"), ("b1", "p2"))}
    r = get_task_assignor("sticky").assign(GroupSpec(members, subs, num_standby_replicas=1))
    for t in [("0", 0), ("0", 1), ("0", 2)]:
        holders = [members[m].process_id for m, ts in r.items() if t in ts.active_ids() | ts.standby_ids()]
        assert sorted(holders) == ["p1", "p2"]


def test_more_members_than_tasks_and_an_empty_group():
    subs = {"0": SubtopologySpec(2, False)}
    members = {f"m{i}": MemberSpec(f"m{i}", f"p{i}", 0) for i in range(4)}
    r = get_task_assignor("sticky").assign(GroupSpec(members, subs))
    assert sorted(len(ts.active_ids()) for ts in r.values()) == [0, 0, 1, 1]
    # Kafka 4.4.0's StickyTaskAssignor: tasks and nobody to run them is an error, not {}
    with pytest.raises(TaskAssignorException, match="No process available to assign active task 0_0"):
        get_task_assignor("sticky").assign(GroupSpec({}, subs))


def test_unknown_assignor_name():
    import pytest
    with pytest.raises(ValueError, match="unknown streams task assignor 'nope'"):
        get_task_assignor("nope")
