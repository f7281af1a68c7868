"""Records are the truth, both ways (issue 20, item 5):

1. a history written by kgroup, loaded by a fresh coordinator at any point, continues with the
   same responses and the same records as the coordinator that wrote it;
2. a group written as Apache Kafka writes it (records built with Kafka's record helpers' shapes,
   `kafka_shapes.py`), loaded by kgroup, continues as Kafka would: every member's next heartbeat
   keeps its epoch and its assignment, and no group epoch is bumped.

For consumer, share and Streams groups, under both profiles."""
from __future__ import annotations

import copy

import hypothesis.strategies as st
import pytest
from hypothesis import HealthCheck, given, settings

from modern_driver import KINDS, Member, coordinator, play, reload
from kgroup.runtime import LOAD_HOOKS

NAMES = ("a", "b", "c")


def members_of(kind: str) -> dict[str, Member]:
    # "c" is static where the group type has static members.
    static = {"consumer", "streams"}
    return {n: Member(kind, f"member-{n}", instance_id=f"instance-{n}" if n == "c" and kind in static else None,
                      topics=("orders", "payments") if n == "b" else ("orders",))
            for n in NAMES}


step = st.one_of(st.tuples(st.sampled_from(["hb", "hb", "hb", "leave", "static_leave"]), st.sampled_from(NAMES)),
                 st.tuples(st.just("advance"), st.sampled_from([1_000, 20_000, 46_000])))


def entries(c, since: int = 0) -> list:
    """The log's entries from the `since`-th on, as (partition, offset, record)."""
    return [(e.partition, e.offset, e.record) for e in list(c.log)[since:]]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kind=st.sampled_from(KINDS), profile=st.sampled_from(["kip", "kafka"]),
       history=st.lists(step, min_size=2, max_size=30), data=st.data())
def test_a_history_loaded_at_any_point_continues_with_the_same_responses_and_records(kind, profile, history, data):
    split = data.draw(st.integers(0, len(history)), label="split")
    live = coordinator(profile)
    members = members_of(kind)
    for s in history[:split]:
        play(live, members, s)

    loaded = reload(live)
    # What a coordinator taking over does to its timers, done to the live one too, so that the two
    # differ by the reload alone: the old timers are gone (soft state, e.g. a Streams group's initial
    # rebalance delay, which Kafka does not re-arm either) and sessions start afresh from the load.
    for name in list(live.timers.pending()):
        live.timers.cancel(name)
    for hook in LOAD_HOOKS:
        hook(live)
    end = len(live.log)
    twins = copy.deepcopy(members)
    for i, s in enumerate(history[split:]):
        a, b = play(live, members, s), play(loaded, twins, s)
        assert a == b, f"step {split + i} {s}: answers differ"
    assert entries(loaded, end) == entries(live, end)
    assert loaded.groups.get("g") is None or live.groups["g"].describe() == loaded.groups["g"].describe()


@pytest.mark.parametrize("profile", ["kip", "kafka"])
@pytest.mark.parametrize("kind", KINDS)
def test_the_first_member_of_a_new_group_gets_epoch_2(kind, profile):
    """KAFKA-20268: groups start at epoch 1 with an empty assignment at epoch 1; the first member
    bumps the group to epoch 2 and is answered with the assignment computed at epoch 2 (a Streams
    group under `kafka` without its initial rebalance delay, which holds members at epoch 1)."""
    c = coordinator(profile, {"group.streams.initial.rebalance.delay.ms": 0})
    m = members_of(kind)["a"]
    r = m.heartbeat(c)
    assert (r.error_code, r.member_epoch) == (0, 2)
    g = c.groups["g"]
    assert (g.group_epoch, g.assignment_epoch) == (2, 2)
