"""KIP-1071 "Online Migration from a Classic Consumer Group to a Streams Group" (profile `kip`):
the KIP's example step by step (kgroup.kip_examples.migration_example, shared with notebook 06),
the classic members' requests served by the Streams group, warm-ups as standbys and the probing
member, the way back to classic, and Kafka Streams' user-data codecs."""
from __future__ import annotations

import uuid

import pytest

from kgroup import Cluster, Coordinator, ErrorCode
from kgroup.clock import ManualClock
from kgroup.groups.streams import StreamsGroup
from kgroup.kip_examples import KIP_MIGRATION_LINES, migration_example
from kgroup.protocol import request, to_data
from kgroup.protocol.consumer_protocol import Subscription, decode_assignment, encode_subscription
from kgroup.protocol.streams_protocol import (LATEST_OFFSET, NO_FOLLOWUP_REBALANCE, AssignmentInfo,
                                              SubscriptionInfo, decode_assignment_info, decode_subscription_info,
                                              encode_assignment_info, encode_subscription_info)
from kgroup.scenario import ScriptedClassicStreamsMember
from tests.kgroup_testing import join
from tests.streams_testing import STATEFUL, describe, sgroup, shb

E = ErrorCode


@pytest.fixture(scope="module")
def example():
    checks = []

    def observer(step, c):
        # Rebuilding the coordinator from its log gives the live group (task offsets are soft state).
        fresh = Coordinator.load(list(c.log)[:c.position], cluster=c.cluster, profile=c.profile)
        checks.append((step.index, persistent(describe(c)), persistent(describe(fresh))))
    ex = migration_example(observer=observer)
    ex.checks = checks
    return ex


def persistent(d):
    data = to_data(d)
    for m in data.get("members", []):
        m["task_offsets"], m["task_end_offsets"] = [], []
    return data


def row(example, phase, member, message):
    return next(r for r in example.table() if (r["phase"], r["member"], r["message"]) == (phase, member, message))


def group_at(example, phase) -> StreamsGroup:
    return example.scenario.state_after(example.phases[phase][1]).groups["app"]


# -- the KIP's example, step by step --------------------------------------------------------

def test_classic_group_at_generation_23_converts_when_c_joins(example):
    s = example.scenario
    entries = s.entries(1)                               # C's first StreamsGroupHeartbeat
    names = [type(e.record).__name__ + ("-" if e.record.value is None else "") for e in entries]
    assert names[0] == "GroupMetadata-"                 # the classic group's records go first
    after = s.state_after(1).groups["app"]
    assert isinstance(after, StreamsGroup)
    # KIP: "the group epoch starts at the current group generation" (23), then C's join bumps it.
    assert [e.record.value.epoch for e in entries if type(e.record).__name__ == "StreamsGroupMetadata"] == [23, 24]
    assert {m: after.members[m].uses_classic_protocol for m in "ABC"} == {"A": True, "B": True, "C": False}


def test_epoch_24_target_assignment_is_the_kips(example):
    g = example.scenario.state_after(1).groups["app"]
    assert g.assignment_epoch == 24
    assert {m: repr(g.target_assignment[m]) for m in "ABC"} == {
        "A": "TaskSets(active=[0_0, 0_2, 0_3], standby=[0_1, 0_5], warmup=[])",
        "B": "TaskSets(active=[0_1, 0_4, 0_5], standby=[0_2, 0_3], warmup=[])",
        "C": "TaskSets(active=[], standby=[0_0, 0_4], warmup=[0_2, 0_5])"}


@pytest.mark.parametrize("line", [ln for ln in KIP_MIGRATION_LINES if ln[0] in ("epoch 24", "epoch 25")],
                         ids=lambda ln: f"{ln[0]}-{ln[1]}-{ln[2]}")
def test_every_line_of_epochs_24_and_25_is_the_kips(example, line):
    phase, member, message, kip = line
    assert row(example, phase, member, message)["same"], row(example, phase, member, message)


def test_epoch_24_a_reaches_24_only_after_revoking_0_4(example):
    # KIP: "If the members need to revoke a task, their member epoch stays the same."
    r = row(example, "epoch 24", "A", "JoinGroupResponse")
    assert r["on the way"] == "generation ID=23 → generation ID=24 → generation ID=24"


def test_c_warm_up_0_2_caught_up_bumps_to_25(example):
    g = group_at(example, "epoch 25")
    assert g.group_epoch == 25 and g.assignment_epoch == 25
    assert repr(g.target_assignment["C"]) == "TaskSets(active=[0_2], standby=[0_0, 0_4], warmup=[0_5])"


def test_epoch_25_a_keeps_generation_24_while_revoking_0_2(example):
    g = group_at(example, "epoch 25")
    a = g.members["A"]
    assert (a.member_epoch, a.state.name) == (24, "UNREVOKED_PARTITIONS")
    assert a.pending_revocation.active_ids() == {("0", 2)}
    assert g.members["B"].member_epoch == 25 and g.members["C"].member_epoch == 25


def test_follow_up_a_moves_to_25_and_c_gets_0_2(example):
    g = group_at(example, "follow-up")
    assert {m: g.members[m].member_epoch for m in "ABC"} == {"A": 25, "B": 25, "C": 25}
    assert row(example, "follow-up", "A", "JoinGroupResponse")["kgroup"] == "generation ID=25"
    assert row(example, "follow-up", "A", "SyncGroupResponse")["same"]
    assert row(example, "follow-up", "C", "StreamsGroupHeartbeat")["same"]
    assert g.state == "Stable"


def test_follow_up_b_is_not_made_to_rejoin(example):
    # A difference from the KIP's text, said in the table: B is at 25 already.
    r = row(example, "follow-up", "B", "Heartbeat")
    assert (r["kgroup"], r["same"]) == ("NONE", False) and r["why"]


def test_c_leaving_converts_back_to_classic_and_deletes_the_streams_records(example):
    s = example.scenario
    i = example.phases["C leaves"][0]
    names = [type(e.record).__name__ + ("-" if e.record.value is None else "") for e in s.entries(i)]
    assert names[-1] == "GroupMetadata" and "StreamsGroupMetadata-" in names and "StreamsGroupTopology-" in names
    live = example.coordinator.groups["app"]
    assert str(live.type) == "classic" and live.generation_id == 25 and sorted(live.members) == ["A", "B"]
    # A and B are told to rejoin the classic group.
    assert [s.response_of(j).error_code for j in range(i + 1, i + 3)] == [E.rebalance_in_progress] * 2
    # Their classic assignment is the Streams group's target, in Kafka Streams' AssignmentInfo.
    wire, _ = decode_assignment(live.members["A"].assignment)
    info = decode_assignment_info(wire.user_data)
    assert sorted(set(info.active_tasks)) == [("0", 0), ("0", 3)] and sorted(info.standby_tasks) == [("0", 1), ("0", 5)]
    reloaded = Coordinator.load(example.coordinator.log, cluster=example.coordinator.cluster)
    assert str(reloaded.groups["app"].type) == "classic" and reloaded.groups["app"].generation_id == 25


def test_the_conversion_writes_the_classic_tombstone_the_converted_group_then_cs_join(example):
    # As Kafka converts a classic group to a consumer group (classic tombstone, then the new
    # group's records: members, epoch, targets, target epoch, current assignments); C's join
    # then writes a join's records in Kafka's order (member, topology, group metadata, ...).
    entries = example.scenario.entries(1)
    names = [type(e.record).__name__ + ("-" if e.record.value is None else "") for e in entries]
    member, target, current = ("StreamsGroupMemberMetadata", "StreamsGroupTargetAssignmentMember",
                               "StreamsGroupCurrentMemberAssignment")
    assert names == ["GroupMetadata-", member, member, "StreamsGroupMetadata", target, target,
                     "StreamsGroupTargetAssignmentMetadata", current, current,
                     member, "StreamsGroupTopology", "StreamsGroupMetadata", target, target, target,
                     "StreamsGroupTargetAssignmentMetadata", current]
    keyed = [getattr(e.record.key, "member_id", None) for e in entries]
    assert keyed[1:3] == keyed[7:9] == ["A", "B"] and keyed[9] == keyed[-1] == "C"


def test_a_migrated_group_loaded_from_its_log_continues_without_a_bump(example):
    # Issue 20 item 5 for a migrated group: a coordinator loaded from the log after the follow-up
    # (all at epoch 25) answers the members' next heartbeats without writing anything.
    c = example.coordinator
    end = example.scenario.steps[example.phases["follow-up"][1]].end_position
    loaded = Coordinator.load(list(c.log)[:end], cluster=c.cluster, profile="kip", config=c.config)
    g = loaded.groups["app"]
    assert (g.group_epoch, g.assignment_epoch) == (25, 25)
    before = loaded.position
    for name in "AB":
        r = loaded.handle(request("Heartbeat", 4, group_id="app", generation_id=25, member_id=name,
                                  group_instance_id=None))
        assert r.error_code == E.none, name
    r = shb(loaded, "C", 25)
    assert (r.error_code, r.member_epoch, r.active_tasks) == (E.none, 25, None)
    assert loaded.position == before


def test_reload_at_every_step_gives_the_live_describe(example):
    assert len(example.checks) == len(example.scenario)
    for index, live, fresh in example.checks:
        assert live == fresh, f"step {index}"


# -- classic members served by a Streams group --------------------------------------------------

def _coord(**config):
    return Coordinator(cluster=Cluster({"orders": 4, "app-store-changelog": 4}, seed=1), clock=ManualClock(1_000),
                       config={"group.streams.initial.rebalance.delay.ms": 0, **config})


def _classic(name, **kw):
    return ScriptedClassicStreamsMember("app", name, {"0": ("orders",)},
                                        process_id=str(uuid.UUID(int=ord(name))), **kw)


def _exchange(c, m):
    j = c.handle(m.join())
    m.take_join(j.response)
    s = c.handle(m.sync())
    m.take_sync(s.response)
    return j.response, s.response


def test_a_classic_streams_member_joins_a_streams_group_kip():
    c = _coord(**{"group.streams.num.standby.replicas": 1})
    shb(c, "S", 0, topology=STATEFUL)
    a = _classic("A")
    j, s = _exchange(c, a)
    g = sgroup(c)
    assert j.error_code == E.none and j.protocol_name == "stream" and j.generation_id == g.members["A"].member_epoch
    assert g.members["A"].uses_classic_protocol and g.members["A"].process_id == a.process_id
    assert s.error_code == E.none
    assert describe(c).members[1].is_classic


def test_a_warm_up_reaches_a_classic_member_as_a_standby_and_makes_it_probe():
    c = _coord(**{"group.streams.num.warmup.replicas": 2})
    from kgroup.assignors.streams import TASK_ASSIGNOR_OVERRIDE, FixedTaskAssignor, TaskSets
    c.soft_state[TASK_ASSIGNOR_OVERRIDE] = FixedTaskAssignor({
        "S": TaskSets.of(active=[("0", 0), ("0", 1)]),
        "A": TaskSets.of(active=[("0", 2), ("0", 3)], warmup=[("0", 0)])})
    shb(c, "S", 0, topology=STATEFUL)
    a = _classic("A")
    _exchange(c, a)
    g = sgroup(c)
    assert g.members["A"].assigned.warmup_ids() == {("0", 0)}
    assert a.standby == {("0", 0)} and a.active == {("0", 2), ("0", 3)}     # KIP: warm-up -> standby
    assert a.next_rebalance_ms == c.now() + 600_000                           # the probing member
    # Its next JoinGroup reports the warm-up as a standby; the coordinator keeps it a warm-up.
    j, _ = _exchange(c, a)
    assert sgroup(c).members["A"].assigned.warmup_ids() == {("0", 0)}


def test_a_member_without_warm_ups_is_not_asked_to_probe():
    c = _coord()
    shb(c, "S", 0, topology=STATEFUL)
    a = _classic("A")
    _exchange(c, a)
    assert a.next_rebalance_ms == NO_FOLLOWUP_REBALANCE


def test_classic_heartbeat_rebalance_in_progress_when_the_group_moved_on():
    c = _coord()
    shb(c, "S", 0, topology=STATEFUL)
    a = _classic("A")
    _exchange(c, a)
    assert c.handle(a.heartbeat()).error_code == E.none
    shb(c, "T", 0, topology=STATEFUL)                 # a new member bumps the group epoch
    assert c.handle(a.heartbeat()).error_code == E.rebalance_in_progress
    stale = c.handle(_classic("A", generation=a.generation + 5).heartbeat())
    assert stale.error_code == E.illegal_generation


def test_classic_leave_removes_the_member_and_bumps():
    c = _coord()
    shb(c, "S", 0, topology=STATEFUL)
    a = _classic("A")
    _exchange(c, a)
    epoch = sgroup(c).group_epoch
    r = c.handle(a.leave())
    assert r.error_code == E.none and "A" not in sgroup(c).members and sgroup(c).group_epoch == epoch + 1


def test_a_plain_consumer_group_is_not_converted_kip():
    # A classic group whose subscriptions are not Kafka Streams': GROUP_ID_NOT_FOUND, nothing written.
    c = _coord()
    join(c, "app", "", version=3)
    before = c.position
    r = shb(c, "S", 0, topology=STATEFUL)
    assert r.error_code == E.group_id_not_found and "malformed" in r.error_message
    assert c.position == before and str(c.groups["app"].type) == "classic"


def test_a_classic_member_session_expiry_leaves_only_streams_members():
    c = _coord()
    shb(c, "S", 0, topology=STATEFUL)
    a = _classic("A", session_timeout_ms=10_000)
    _exchange(c, a)
    for _ in range(4):
        c.advance(5_000)
        shb(c, "S", sgroup(c).members["S"].member_epoch)
    assert "A" not in sgroup(c).members


# -- Kafka Streams' user data ------------------------------------------------------------------

def test_subscription_info_v11_layout():
    info = SubscriptionInfo("00000000-0000-0000-0000-00000000000a", {("0", 1): LATEST_OFFSET, ("1", 0): 42},
                            ("host", 8080), (("az", "1"),))
    data = encode_subscription_info(info)
    assert data[:8] == bytes.fromhex("0000000b0000000b")          # version 11, latest supported 11
    assert data[8:24] == uuid.UUID(info.process_id).bytes
    assert data[24:28] == (9).to_bytes(4, "big") and data[28:37] == b"host:8080"
    assert decode_subscription_info(data) == info
    assert info.active_tasks == [("0", 1)] and info.standby_tasks == [("1", 0)]


def test_assignment_info_round_trip():
    info = AssignmentInfo(active_tasks=(("0", 0), ("0", 2)), standby_tasks={("0", 1): (("in", 1),)},
                          partitions_by_host={("h", 1): (("in", 0), ("in", 2))},
                          standby_partitions_by_host={("h", 1): (("in", 1),)}, next_rebalance_ms=5)
    data = encode_assignment_info(info)
    assert data[:8] == bytes.fromhex("0000000b0000000b") and data[-8:] == (5).to_bytes(8, "big")
    assert decode_assignment_info(data) == info


def test_classic_members_subscription_is_what_kafka_streams_sends():
    a = _classic("A", active=[("0", 1)], standby=[("0", 2)], task_offsets={("0", 2): 7})
    sub_bytes = a.protocols()[0]["metadata"]
    from kgroup.protocol.consumer_protocol import decode_subscription
    sub, version = decode_subscription(sub_bytes)
    assert version == 3 and sub.topics == ("orders",) and sub.owned_partitions == (("orders", 1),)
    assert decode_subscription_info(sub.user_data).task_offset_sums == {("0", 1): -2, ("0", 2): 7}
    assert isinstance(Subscription(("x",)), Subscription) and encode_subscription(sub)


def test_a_plain_consumer_cannot_join_a_streams_group_kip():
    # Its subscription carries no Kafka Streams SubscriptionInfo: INCONSISTENT_GROUP_PROTOCOL, nothing written.
    c = _coord()
    shb(c, "S", 0, topology=STATEFUL)
    before = c.position
    r = join(c, "app", "x", version=9)
    assert r.done and r.response.error_code == E.inconsistent_group_protocol and c.position == before
