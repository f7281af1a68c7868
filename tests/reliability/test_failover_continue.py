"""Failover and continue: a scenario run twice, once on one coordinator and once with the
coordinator thrown away at some step and replaced by one rebuilt from its logs (the clients
rediscover it, as Kafka's clients do after NOT_COORDINATOR), must end in the same state.

Soft state (pending JoinGroups, timers) is handled as Kafka handles a coordinator move: the
clients join again, `on_loaded` hooks re-arm the timers. The KIP examples are failed over at
every step as well."""
from __future__ import annotations

import hypothesis.strategies as st
import pytest
from hypothesis import given

from invariants_testing import COUNTS, assert_reload_equal, failover, profile_settings, reload
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


def play(kind: str, profile: str, actions: list, failover_at: int | None = None):
    """Run `actions` on a fresh world (failing the coordinator over before action
    `failover_at`), then let it settle; returns the machine."""
    m = _machine(kind, profile)()
    for i, (rule, *args) in enumerate(actions):
        if i == failover_at:
            failover(m.sim)
            COUNTS["failovers survived"] += 1
        getattr(m, rule)(*args)
    if failover_at == len(actions):
        failover(m.sim)
        COUNTS["failovers survived"] += 1
    m.sim.run(SETTLE_MS)
    return m


def end_state(m) -> dict:
    """What both runs must agree on once settled: every group as described (offsets by
    partition, without commit times, which follow when a poll happened to commit), the
    share-partitions' durable state, and what each running client owns."""
    groups = []
    for d in describe_groups(m.c):
        # member ids are random UUIDs in Kafka (a coordinator taking over makes other ones):
        # members are compared by who they are (client id, instance id)
        labels = {r["member_id"]: f"{r.get('client_id')}/{r.get('group_instance_id', r.get('instance_id'))}"
                  for r in d.get("members") or []}
        d = _relabel(dict(d), labels)
        d["members"] = sorted(d.get("members") or [], key=repr)
        d["offsets"] = [{k: v for k, v in o.items() if k not in ("commit_timestamp", "expire_timestamp")}
                        for o in d["offsets"]]
        groups.append(d)
    owned = {k.name: sorted(map(str, k.owned)) for k in m.sim.consumers if k.running}
    return {"groups": groups, "share_partitions": describe_share_partitions(m.c), "owned": owned}


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
        reference = end_state(play(kind, profile, actions))
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
