"""Classic groups: JoinGroup/SyncGroup/Heartbeat/LeaveGroup/DescribeGroups as Kafka's
classic group coordinator answers them (Kafka is the reference; the KIP-345 cases are
in test_static_membership.py)."""
from __future__ import annotations

import pytest

from kgroup import Cluster, Coordinator
from kgroup.errors import ErrorCode
from kgroup.groups.classic import ClassicGroupState
from kgroup.javaorder import JavaHashMap, java_order
from kgroup.records import GroupMetadata
from kgroup.runtime import ResponseNotReadyError
from kgroup_testing import (commit, describe, heartbeat, join, join_until_member_id, leave, subscription_v0,
                            sync)

E = ErrorCode


@pytest.fixture
def c() -> Coordinator:
    return Coordinator(cluster=Cluster({"orders": 3}))


def stable_group(c: Coordinator, n: int = 2, group: str = "g", **kw) -> dict[str, str]:
    """n dynamic members through a full rebalance; returns client id -> member id."""
    joins = {chr(65 + i): join_until_member_id(c, group, client_id=chr(65 + i), **kw) for i in range(n)}
    c.advance(c.config["group.initial.rebalance.delay.ms"] * (n + 1))
    return complete_rebalance(c, group, joins)


def complete_rebalance(c: Coordinator, group: str, joins: dict) -> dict[str, str]:
    """Every joined member syncs; the leader assigns b'<client>' to each member."""
    responses = {k: j.response for k, j in joins.items()}
    ids = {k: r.member_id for k, r in responses.items()}
    assignment = {mid: k.encode() for k, mid in ids.items()}
    leader = next(k for k, r in responses.items() if r.leader == r.member_id)
    syncs = {k: sync(c, group, ids[k], r.generation_id, assignments=assignment if k == leader else None)
             for k, r in responses.items()}
    assert all(s.done and s.response.error_code == E.none for s in syncs.values())
    return ids


def records(c: Coordinator, cls=GroupMetadata) -> list:
    return [e.record for e in c.log if isinstance(e.record, cls)]


# -- JoinGroup ---------------------------------------------------------------------------

def test_first_join_v4_plus_answers_member_id_required_with_an_id_named_after_the_client(c):
    first = join(c, "g", client_id="app-1")
    assert first.done and first.response.error_code == E.member_id_required
    member_id = first.response.member_id
    assert member_id.startswith("app-1-") and len(member_id) == len("app-1-") + 36
    assert c.groups["g"].pending_join_members == {member_id}
    second = join(c, "g", member_id)
    assert not second.done and c.groups["g"].state == "PreparingRebalance"


def test_join_v3_adds_the_member_at_once(c):
    j = join(c, "g", version=3)
    assert not j.done and len(c.groups["g"].members) == 1


def test_a_new_group_is_persisted_at_once_with_an_empty_group_metadata_record(c):
    join(c, "g")
    (rec,) = records(c)
    assert rec.version == 3 and rec.value.generation == 0 and rec.value.members == []


def test_response_not_ready_is_a_clear_error(c):
    j = join_until_member_id(c, "g")
    with pytest.raises(ResponseNotReadyError, match="waiting for the join phase of group 'g'"):
        j.response
    assert "pending JoinGroup" in repr(j)


def test_initial_rebalance_delay_is_extended_while_members_keep_arriving(c):
    a = join_until_member_id(c, "g", client_id="A")
    c.advance(2000)
    b = join_until_member_id(c, "g", client_id="B")
    c.advance(1000)  # the first 3 s delay ran out, but B arrived meanwhile: wait another 3 s
    assert not a.done and not b.done
    c.advance(3000)
    assert a.done and b.done
    ra, rb = a.response, b.response
    assert ra.generation_id == rb.generation_id == 1 and ra.protocol_name == "range"
    leader, follower = (ra, rb) if ra.leader == ra.member_id else (rb, ra)
    assert {m.member_id for m in leader.members} == {ra.member_id, rb.member_id}
    assert follower.members == () and follower.leader == leader.member_id
    assert c.groups["g"].state == "CompletingRebalance"


def test_protocol_is_chosen_by_vote_among_protocols_every_member_supports(c):
    sub = subscription_v0("orders")
    a = join_until_member_id(c, "g", client_id="A", protocols=[("roundrobin", sub), ("range", sub)])
    b = join_until_member_id(c, "g", client_id="B", protocols=[("range", sub), ("roundrobin", sub)])
    d = join_until_member_id(c, "g", client_id="D", protocols=[("range", sub)])
    c.advance(20_000)
    assert {a.response.protocol_name, b.response.protocol_name, d.response.protocol_name} == {"range"}


@pytest.mark.parametrize("kw, code", [
    ({"protocol_type": "connect"}, E.inconsistent_group_protocol),
    ({"protocols": [("sticky", b"x")]}, E.inconsistent_group_protocol),
    ({"session_ms": 1000}, E.invalid_session_timeout),
    ({"session_ms": 2_000_000}, E.invalid_session_timeout),
])
def test_join_validation_errors(c, kw, code):
    stable_group(c, 1)
    j = join(c, "g", **kw)
    assert j.done and j.response.error_code == code


def test_join_with_unknown_member_id_to_a_missing_group_is_unknown_member_id(c):
    assert join(c, "nope", "m-1").response.error_code == E.unknown_member_id
    assert "nope" not in c.groups


def test_join_empty_group_id_and_not_coordinator():
    c = Coordinator(cluster=Cluster({"orders": 3}), hosted_partitions=[])
    assert join(c, "").response.error_code == E.invalid_group_id
    assert join(c, "g").response.error_code == E.not_coordinator


def test_group_max_size_reached():
    c = Coordinator(cluster=Cluster({"orders": 3}), config={"group.max.size": 2})
    stable_group(c, 2)
    j = join(c, "g", version=3)
    assert j.response.error_code == E.group_max_size_reached and len(c.groups["g"].members) == 2


# -- SyncGroup ---------------------------------------------------------------------------

def joined_pair(c: Coordinator) -> tuple:
    """A and B join group g and the rebalance delay runs out: the leader's and the follower's
    JoinGroup responses."""
    a = join_until_member_id(c, "g", client_id="A")
    b = join_until_member_id(c, "g", client_id="B")
    c.advance(10_000)
    ra, rb = a.response, b.response
    return (ra, rb) if ra.leader == ra.member_id else (rb, ra)


def test_followers_wait_for_the_leaders_assignment_which_is_persisted(c):
    leader, follower = joined_pair(c)
    fs = sync(c, "g", follower.member_id, follower.generation_id)
    assert not fs.done
    ls = sync(c, "g", leader.member_id, leader.generation_id,
              assignments={leader.member_id: b"L", follower.member_id: b"F"})
    assert ls.response.assignment == b"L" and fs.response.assignment == b"F"
    assert fs.response.protocol_name == "range" and c.groups["g"].state == "Stable"
    rec = records(c)[-1]
    assert rec.version == 3 and rec.value.generation == 1 and rec.value.leader == leader.member_id
    assert {m.member_id: m.assignment for m in rec.value.members} == {leader.member_id: b"L", follower.member_id: b"F"}
    assert all(m.subscription == subscription_v0("orders") for m in rec.value.members)


def test_members_missing_from_the_leaders_assignment_get_an_empty_one(c):
    leader, follower = joined_pair(c)
    sync(c, "g", leader.member_id, 1, assignments={leader.member_id: b"L"})
    assert sync(c, "g", follower.member_id, 1).response.assignment == b""


def test_sync_errors(c):
    ids = stable_group(c, 2)
    assert sync(c, "g", ids["A"], 7).response.error_code == E.illegal_generation
    assert sync(c, "g", "ghost", 1).response.error_code == E.unknown_member_id
    assert sync(c, "nope", "ghost", 1).response.error_code == E.unknown_member_id
    join(c, "g", ids["A"])  # the leader rejoins: PreparingRebalance
    assert sync(c, "g", ids["B"], 1).response.error_code == E.rebalance_in_progress


def test_sync_in_stable_returns_the_current_assignment(c):
    ids = stable_group(c, 2)
    assert sync(c, "g", ids["B"], 1).response.assignment == b"B"


# -- Heartbeat -----------------------------------------------------------------------------

def test_heartbeat_answers(c):
    ids = stable_group(c, 2)
    assert heartbeat(c, "g", ids["A"], 1).error_code == E.none
    assert heartbeat(c, "g", ids["A"], 0).error_code == E.illegal_generation
    assert heartbeat(c, "g", "ghost", 1).error_code == E.unknown_member_id
    assert heartbeat(c, "nope", "ghost", 1).error_code == E.unknown_member_id
    leader = c.groups["g"].leader_id
    join(c, "g", leader)
    other = ids["B"] if leader == ids["A"] else ids["A"]
    assert heartbeat(c, "g", other, 1).error_code == E.rebalance_in_progress


def test_session_timeout_removes_a_silent_member_and_the_others_rebalance(c):
    ids = stable_group(c, 2)
    for _ in range(4):  # A heartbeats every 3 s, B stays silent past its 10 s session
        c.advance(3000)
        assert heartbeat(c, "g", ids["A"], 1).error_code in (E.none, E.rebalance_in_progress)
    g = c.groups["g"]
    assert ids["B"] not in g.members and g.state == "PreparingRebalance"
    rejoin = join(c, "g", ids["A"])
    assert rejoin.done and rejoin.response.generation_id == 2
    assert [m.member_id for m in rejoin.response.members] == [ids["A"]]


def test_rebalance_timeout_drops_dynamic_members_that_do_not_rejoin(c):
    ids = stable_group(c, 2, rebalance_ms=20_000, session_ms=30_000)
    leader = c.groups["g"].leader_id
    other = ids["B"] if leader == ids["A"] else ids["A"]
    j = join(c, "g", leader, rebalance_ms=20_000, session_ms=30_000)
    c.advance(19_999)
    assert not j.done
    c.advance(1)
    assert j.response.generation_id == 2 and other not in c.groups["g"].members


def test_members_that_never_sync_are_removed_after_the_rebalance_timeout(c):
    a = join_until_member_id(c, "g", client_id="A", rebalance_ms=15_000)
    b = join_until_member_id(c, "g", client_id="B", rebalance_ms=15_000)
    c.advance(6000)
    ra, rb = a.response, b.response
    leader = ra if ra.leader == ra.member_id else rb
    follower = rb if leader is ra else ra
    sync(c, "g", leader.member_id, 1, assignments={leader.member_id: b"L", follower.member_id: b"F"})
    for _ in range(5):  # heartbeats keep the follower's session, but it never sends SyncGroup
        c.advance(3000)
        heartbeat(c, "g", follower.member_id, 1)
        heartbeat(c, "g", leader.member_id, 1)
    g = c.groups["g"]
    assert follower.member_id not in g.members and g.state == "PreparingRebalance"


def test_offset_commit_keeps_a_classic_members_session_alive(c):
    ids = stable_group(c, 1)
    for _ in range(5):
        c.advance(8000)
        assert commit(c, "g", {("orders", 0): 1}, generation=1, member_id=ids["A"]).topics[0].partitions[0].error_code == E.none
    assert c.groups["g"].state == "Stable"


# -- LeaveGroup ------------------------------------------------------------------------------

def test_last_member_leaving_empties_the_group_with_a_new_generation_record(c):
    ids = stable_group(c, 1)
    resp = leave(c, "g", (ids["A"], None))
    assert resp.members[0].error_code == E.none
    g = c.groups["g"]
    assert g.state == "Empty" and g.generation_id == 2
    rec = records(c)[-1]
    assert rec.value.generation == 2 and rec.value.members == [] and rec.value.protocol is None


def test_leave_v0_carries_the_member_error_at_the_top(c):
    stable_group(c, 1)
    assert leave(c, "g", ("ghost", None), version=1).error_code == E.unknown_member_id


def test_leave_of_a_pending_member(c):
    first = join(c, "g")
    pending = first.response.member_id
    assert leave(c, "g", (pending, None)).members[0].error_code == E.none
    assert not c.groups["g"].pending_join_members


# -- DescribeGroups ------------------------------------------------------------------------

def test_describe_shows_metadata_and_assignment_only_when_stable(c):
    ids = stable_group(c, 2)
    (g,) = describe(c, "g").groups
    assert g.group_state == "Stable" and g.protocol_type == "consumer" and g.protocol_data == "range"
    assert {m.member_id: m.member_assignment for m in g.members} == {ids["A"]: b"A", ids["B"]: b"B"}
    assert {m.client_id for m in g.members} == {"A", "B"}
    join(c, "g", c.groups["g"].leader_id)
    (g,) = describe(c, "g").groups
    assert g.group_state == "PreparingRebalance" and g.protocol_data == ""
    assert all(m.member_metadata == b"" and m.member_assignment == b"" for m in g.members)


def test_describe_unknown_group(c):
    (old,) = describe(c, "nope", version=5).groups
    assert old.group_state == "Dead" and old.error_code == E.none
    (new,) = describe(c, "nope", version=6).groups
    assert new.error_code == E.group_id_not_found


# -- persistence -----------------------------------------------------------------------------

def test_a_reloaded_coordinator_describes_the_group_exactly_as_the_live_one(c):
    stable_group(c, 3)
    live = describe(c, "g")
    reloaded = Coordinator.load(c.log, cluster=c.cluster)
    assert describe(reloaded, "g") == live
    g = reloaded.groups["g"]
    assert g.current_state is ClassicGroupState.STABLE and g.subscribed_topics == {"orders"}


def test_reloaded_members_keep_their_sessions_and_can_rebalance(c):
    ids = stable_group(c, 2)
    d = Coordinator.load(c.log, cluster=c.cluster)
    assert heartbeat(d, "g", ids["A"], 1).error_code == E.none
    d.advance(11_000)  # B never heartbeats the new coordinator: its session expires there too
    assert ids["B"] not in d.groups["g"].members


def test_time_travel_shows_the_group_as_persisted(c):
    stable_group(c, 2)
    leave(c, "g", (c.groups["g"].leader_id, None))
    positions = [e.position for e in c.log if isinstance(e.record, GroupMetadata)]
    assert c.as_of(positions[1] + 1).groups["g"].state == "Stable"


# -- Java HashMap order (member order in records and answers) ---------------------------------

def test_java_hashmap_order_matches_java():
    # Printed by OpenJDK 17: new HashMap<>() with these puts, then keySet().
    m = JavaHashMap()
    for k in ["range", "roundrobin", "cooperative-sticky", "sticky"]:
        m[k] = 1
    assert list(m) == ["sticky", "range", "roundrobin", "cooperative-sticky"]
    m2 = JavaHashMap()
    for i in range(20):
        m2[f"c-{i}"] = i
    assert m2.capacity == 32 and list(m2)[:8] == ["c-14", "c-13", "c-16", "c-15", "c-10", "c-1", "c-12", "c-0"]
    for i in range(15):
        del m2[f"c-{i}"]
    m2["c-3"] = 1
    assert list(m2) == ["c-16", "c-15", "c-3", "c-18", "c-17", "c-19"]
    assert java_order(["range", "sticky"]) == ["sticky", "range"]
