"""KIP-1071 "Topology updates": the rolling-bounce example, run heartbeat by heartbeat.

The KIP assumes a uniform start (A: T1-T3, B: T4-T6, C: T7-T9) and then says the assignment
should end up "something like" its tables; we assert what it states: members with a stale
topology epoch get no new tasks, the member with the group's topology epoch takes tasks, and
the sticky assignor keeps the assignment balanced."""
from __future__ import annotations

import pytest

from kgroup.kip_examples import KIP_ROLLING_BOUNCE, rolling_bounce

ALL = {f"T{i}" for i in range(1, 10)}


@pytest.fixture(scope="module")
def bounce():
    return rolling_bounce()


def tasks(bounce, phase: str) -> dict[str, set[str]]:
    p = next(p for p in bounce.phases if p.label == phase)
    return {m: set(ts) for m, (_e, ts) in p.assignment.items()}


def epochs(bounce, phase: str) -> dict[str, int]:
    p = next(p for p in bounce.phases if p.label == phase)
    return {m: e for m, (e, _ts) in p.assignment.items()}


def test_uniform_start_is_the_kips(bounce):
    assert bounce.phases[0].text() == KIP_ROLLING_BOUNCE["uniform start"]


def test_c_shut_down_a_and_b_keep_theirs_and_share_cs(bounce):
    t = tasks(bounce, "C shut down")
    assert t["A"] >= {"T1", "T2", "T3"} and t["B"] >= {"T4", "T5", "T6"}
    assert t["A"] | t["B"] == ALL and not t["A"] & t["B"]
    assert sorted(map(len, t.values())) == [4, 5]


def test_c_back_with_epoch_1_a_and_b_get_nothing_new_c_balances(bounce):
    before, after = tasks(bounce, "C shut down"), tasks(bounce, "C back with topology epoch 1")
    assert epochs(bounce, "C back with topology epoch 1") == {"A": 0, "B": 0, "C": 1}
    assert after["A"] <= before["A"] and after["B"] <= before["B"]      # stale: no new tasks
    assert after["A"] | after["B"] | after["C"] == ALL
    assert sorted(map(len, after.values())) == [3, 3, 3]                # balanced, like the KIP's table
    assert bounce.coordinator.groups["app"].topology.epoch == 1


def test_b_shut_down_a_cannot_take_new_tasks_c_takes_them_all(bounce):
    before, after = tasks(bounce, "C back with topology epoch 1"), tasks(bounce, "B shut down")
    assert after["A"] == before["A"]
    assert after["C"] == ALL - before["A"] and len(after["C"]) == 6


def test_b_back_with_epoch_1_gets_tasks_from_c_a_unchanged(bounce):
    before, after = tasks(bounce, "B shut down"), tasks(bounce, "B back with topology epoch 1")
    assert epochs(bounce, "B back with topology epoch 1") == {"A": 0, "B": 1, "C": 1}
    assert after["A"] == before["A"]
    assert after["B"] <= before["C"] and after["C"] <= before["C"]
    assert sorted(map(len, after.values())) == [3, 3, 3]


def test_stale_members_are_told_stale_topology(bounce):
    s = bounce.scenario
    stale = [st for st in s.steps if st.label.startswith("C back") and st.label.split(": ")[1].startswith("A")]
    statuses = {x.status_code for x in s.response_of(stale[-1].index).status}
    assert 0 in statuses  # STALE_TOPOLOGY


def test_reloading_at_every_step_gives_the_same_describe(bounce):
    from kgroup import Coordinator
    from kgroup.protocol import to_data
    from tests.streams_testing import describe

    c = bounce.coordinator
    for step in bounce.scenario.steps:
        snap = c.as_of(step.end_position)
        if "app" not in snap.groups:
            continue
        fresh = Coordinator.load(list(c.log)[:step.end_position], cluster=c.cluster)
        assert snap.groups["app"].describe() == fresh.groups["app"].describe()
    reloaded = Coordinator.load(c.log, cluster=c.cluster)
    assert to_data(describe(reloaded)) == to_data(describe(c))
