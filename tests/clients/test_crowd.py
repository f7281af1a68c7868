"""`kgroup.clients.rolling_start`: bare members joining one by one until their group is Stable."""
from __future__ import annotations

import pytest

from kgroup import Cluster, Coordinator
from kgroup.clients import rolling_start


def targets_computed(c: Coordinator) -> int:
    return sum(type(e.record).__name__ == "ConsumerGroupTargetAssignmentMetadata" for e in c.log)


def test_a_consumer_group_forms_and_its_assignments_come_in_batches():
    c = Coordinator(cluster=Cluster({"events": 100}, seed=1))
    run = rolling_start(c, "crowd", "consumer", members=600, topics=["events"], sample_every=10)
    g = c.groups["crowd"]
    assert g.state == "Stable" and g.group_epoch == g.assignment_epoch == 601   # groups start at epoch 1
    assert run.joined_ms == 600 * 5 and run.stable_ms > run.joined_ms
    # 600 joins 5 ms apart are 3 s: one target assignment per second (KIP-1263), not one per join
    assert 3 <= targets_computed(c) <= 5
    last = run.timeline[-1]
    assert (last["members"], last["at_assignment_epoch"], last["phase"]) == (600, 600, "heartbeats")
    assert max(r["group_epoch"] - r["assignment_epoch"] for r in run.timeline) > 100   # the epochs' saw teeth


def test_with_an_interval_of_zero_every_join_computes_a_target():
    c = Coordinator(cluster=Cluster({"events": 100}, seed=1), config={"group.consumer.assignment.interval.ms": 0})
    rolling_start(c, "crowd", "consumer", members=50, topics=["events"])
    assert targets_computed(c) == 50


def test_members_keep_their_sessions_alive_while_the_others_join():
    # 600 joins 100 ms apart take a minute, longer than the 45 s session timeout
    c = Coordinator(cluster=Cluster({"events": 10}, seed=1))
    run = rolling_start(c, "crowd", "consumer", members=600, topics=["events"], join_every_ms=100)
    assert run.joined_ms == 60_000 and len(c.groups["crowd"].members) == 600


@pytest.mark.parametrize("kind", ["share", "streams"])
def test_share_and_streams_groups_form_too(kind):
    c = Coordinator(cluster=Cluster({"events": 20}, seed=1))
    rolling_start(c, "crowd", kind, members=40, topics=["events"])
    g = c.groups["crowd"]
    assert g.state == "Stable" and len(g.members) == 40
    assert all(m.member_epoch == g.group_epoch for m in g.members.values())


def test_an_unknown_kind_is_refused():
    with pytest.raises(ValueError, match="kind must be one of consumer, share, streams"):
        rolling_start(Coordinator(), "g", "classic", members=1, topics=["t"])
