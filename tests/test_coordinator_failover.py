"""A coordinator gives up a `__consumer_offsets` partition and takes it over again (Kafka's
onUnloaded / onLoaded, what a coordinator failover is): the groups come back from the log as they
were, their soft state does not (waiting answers get NOT_COORDINATOR, sessions start afresh), and
the other partitions' groups are not touched."""
from __future__ import annotations

import pytest

from kgroup import Cluster, Coordinator
from kgroup.clients import crowd
from kgroup.errors import ErrorCode
from kgroup.lab import first_moment, view
from kgroup.protocol import request


def _two_groups() -> tuple[Coordinator, str, str]:
    c = Coordinator(Cluster({"t": 6}), config={"group.consumer.session.timeout.ms": 45_000})
    crowd.rolling_start(c, "moved", "consumer", members=3, topics=["t"])
    # a group on another partition (ids picked so that the partitions differ)
    other = next(g for g in (f"other-{i}" for i in range(100)) if c.partition_for(g) != c.partition_for("moved"))
    crowd.rolling_start(c, other, "consumer", members=2, topics=["t"])
    return c, "moved", other


def test_a_partition_unloaded_and_loaded_again_holds_its_groups_as_they_were():
    c, moved, other = _two_groups()
    p = c.partition_for(moved)
    before, bystander = view(c, moved), view(c, other)
    member = before.members[0]
    commit = request("OffsetCommit", 9, group_id=moved, generation_id_or_member_epoch=before.epoch, member_id=member,
                     group_instance_id=None, topics=[{"name": "t", "partitions": [
                         {"partition_index": 0, "committed_offset": 7, "committed_leader_epoch": -1,
                          "committed_metadata": ""}]}])
    assert c.handle(commit).topics[0].partitions[0].error_code == ErrorCode.none

    assert c.unload(p) == [moved]
    assert moved not in c.groups and view(c, other) == bystander
    assert not [name for name in c.timers.pending() if f"-{moved}-" in name]   # its sessions went with it
    hb = crowd.consumer_heartbeat(c, moved, member, before.epoch, None)
    assert hb.error_code == ErrorCode.not_coordinator

    c.loading_partitions.add(p)
    assert crowd.consumer_heartbeat(c, moved, member, before.epoch, None).error_code == \
        ErrorCode.coordinator_load_in_progress
    assert c.load_partition(p) == [moved]
    assert view(c, moved) == before and view(c, other) == bystander
    assert [(r["group"], r["offset"]) for r in c.offsets_table() if r["group"] == moved] == [(moved, 7)]
    # the members got fresh sessions (Kafka's onLoaded), the other group's timers did not move
    assert sum(f"consumer-session-{moved}-" in name for name in c.timers.pending()) == 3
    assert crowd.consumer_heartbeat(c, moved, member, before.epoch, None).error_code == ErrorCode.none


def test_waiting_join_answers_get_not_coordinator_when_their_partition_is_unloaded():
    c = Coordinator(Cluster({"t": 2}))   # group.initial.rebalance.delay.ms: the join waits 3 s
    join = c.handle(request("JoinGroup", 9, group_id="classic", session_timeout=10_000, rebalance_timeout=10_000,
                            member_id="", group_instance_id=None, protocol_type="consumer", reason=None,
                            protocols=[{"name": "range", "metadata": b""}]))
    if join.error_code == ErrorCode.member_id_required:   # KIP-394: join again with the id given
        join = c.handle(request("JoinGroup", 9, group_id="classic", session_timeout=10_000,
                                rebalance_timeout=10_000, member_id=join.response.member_id, group_instance_id=None,
                                protocol_type="consumer", reason=None, protocols=[{"name": "range", "metadata": b""}]))
    assert not join.done
    c.unload(c.partition_for("classic"))
    assert join.done and join.response.error_code == ErrorCode.not_coordinator
    c.advance(5_000)   # its timers went with the group: nothing fires for it
    assert "classic" not in c.groups


def test_loading_a_partition_twice_is_refused():
    c, moved, _ = _two_groups()
    with pytest.raises(ValueError, match="already loaded"):
        c.load_partition(c.partition_for(moved))


def test_first_moment_finds_when_a_group_first_held_a_condition_in_its_log():
    c = Coordinator(Cluster({"t": 6}))
    crowd.rolling_start(c, "g", "consumer", members=3, topics=["t"])
    moment = first_moment(c, "g", state="Stable", members=3)
    assert moment is not None and moment.view.members == view(c, "g").members
    assert moment.partition == c.partition_for("g")
    # the entry before it did not hold it: the group had fewer members or was not yet Stable
    earlier = first_moment(c, "g", members=3)
    assert earlier is not None and earlier.offset <= moment.offset
    assert first_moment(c, "g", members=4) is None
    assert first_moment(c, "nobody", state="Stable") is None
