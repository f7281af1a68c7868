"""KIP-345 static membership on classic groups (seed 004; Kafka's classic coordinator
where the KIP is silent)."""
from __future__ import annotations

import pytest

from kgroup import Cluster, Coordinator
from kgroup.errors import ErrorCode
from kgroup.records import GroupMetadata
from kgroup_testing import commit, describe, heartbeat, join, leave, subscription_v0, sync

E = ErrorCode
SESSION = 30_000


@pytest.fixture
def c() -> Coordinator:
    return Coordinator(cluster=Cluster({"orders": 3}))


def static_group(c: Coordinator, instances=("i-1", "i-2", "i-3"), version: int = 9, **kw) -> dict[str, str]:
    """Static members (no MEMBER_ID_REQUIRED round trip for them) through one rebalance;
    the leader assigns b'<instance>'. Returns instance id -> member id."""
    joins = {i: join(c, "g", instance=i, session_ms=SESSION, version=version, **kw) for i in instances}
    c.advance(3000 * (len(instances) + 1))
    responses = {i: j.response for i, j in joins.items()}
    ids = {i: r.member_id for i, r in responses.items()}
    leader = next(i for i, r in responses.items() if r.leader == r.member_id)
    assignment = {ids[i]: i.encode() for i in instances}
    for i, r in responses.items():
        s = sync(c, "g", ids[i], r.generation_id, instance=i, assignments=assignment if i == leader else None)
        assert s.response.error_code == E.none
    return ids


def metadata_records(c: Coordinator) -> list:
    return [e.record for e in c.log if isinstance(e.record, GroupMetadata)]


def test_static_member_ids_are_named_after_the_instance_id(c):
    ids = static_group(c)
    assert all(mid.startswith(f"{i}-") for i, mid in ids.items())
    assert {m.group_instance_id for m in describe(c, "g").groups[0].members} == {"i-1", "i-2", "i-3"}


def test_rejoin_with_unknown_member_id_while_stable_keeps_the_assignment_without_rebalance(c):
    ids = static_group(c)
    g = c.groups["g"]
    generation, rebalances = g.generation_id, g.rebalances
    follower = next(i for i, m in ids.items() if m != g.leader_id)
    restarted = join(c, "g", instance=follower, session_ms=SESSION)
    assert restarted.done, "no rebalance: the answer comes at once"
    r = restarted.response
    new_id = r.member_id
    assert r.error_code == E.none and new_id != ids[follower] and r.generation_id == generation
    assert g.state == "Stable" and g.rebalances == rebalances
    # SyncGroup hands out the previous assignment.
    assert sync(c, "g", new_id, generation, instance=follower).response.assignment == follower.encode()
    # The old member id is fenced everywhere.
    old = ids[follower]
    assert heartbeat(c, "g", old, generation, instance=follower).error_code == E.fenced_instance_id
    assert sync(c, "g", old, generation, instance=follower).response.error_code == E.fenced_instance_id
    assert join(c, "g", old, instance=follower).response.error_code == E.fenced_instance_id
    resp = commit(c, "g", {("orders", 0): 5}, generation=generation, member_id=old)
    assert resp.topics[0].partitions[0].error_code == E.unknown_member_id  # no instance id given: unknown id
    assert leave(c, "g", (old, follower)).members[0].error_code == E.fenced_instance_id
    # The replacement is persisted: a GroupMetadata record naming the new member id.
    rec = metadata_records(c)[-1]
    assert {m.group_instance_id: m.member_id for m in rec.value.members}[follower] == new_id
    assert rec.value.generation == generation


def test_offset_commit_checks_generation_member_and_instance_id(c):
    ids = static_group(c)
    gen = c.groups["g"].generation_id

    def code(**kw):
        return commit(c, "g", {("orders", 0): 5}, **kw).topics[0].partitions[0].error_code

    assert code(generation=gen, member_id=ids["i-1"]) == E.none
    assert code(generation=gen + 1, member_id=ids["i-1"]) == E.illegal_generation
    assert code(generation=gen, member_id="ghost") == E.unknown_member_id
    new_id = join(c, "g", instance="i-1", session_ms=SESSION).response.member_id
    from kgroup.protocol import request
    resp = c.handle(request("OffsetCommit", 9, group_id="g", generation_id_or_member_epoch=gen,
                            member_id=ids["i-1"], group_instance_id="i-1",
                            topics=[{"name": "orders", "partitions": [{"partition_index": 0, "committed_offset": 9}]}]))
    assert resp.topics[0].partitions[0].error_code == E.fenced_instance_id
    assert code(generation=gen, member_id=new_id) == E.none


def test_leader_rejoin_v9_is_told_to_skip_assignment(c):
    ids = static_group(c)
    leader_instance = next(i for i, m in ids.items() if m == c.groups["g"].leader_id)
    r = join(c, "g", instance=leader_instance, session_ms=SESSION).response
    assert r.skip_assignment and r.leader == r.member_id and len(r.members) == 3


def test_leader_rejoin_before_v9_is_told_the_old_leader_id(c):
    # KIP-814's motivation: older clients see the old leader id and do not assign.
    ids = static_group(c, version=8)
    leader_instance = next(i for i, m in ids.items() if m == c.groups["g"].leader_id)
    r = join(c, "g", instance=leader_instance, session_ms=SESSION, version=8).response
    assert r.leader == ids[leader_instance] and r.member_id != r.leader and r.members == ()
    assert c.groups["g"].leader_id == r.member_id


def test_rejoin_that_changes_the_selected_protocol_rebalances(c):
    sub = subscription_v0("orders")
    static_group(c, ("i-1", "i-2"), protocols=[("range", sub), ("sticky", sub)])
    assert c.groups["g"].protocol_name == "range"
    # i-2 now prefers sticky: one vote each, and Kafka's tie-break (HashMap order) picks sticky.
    j = join(c, "g", instance="i-2", session_ms=SESSION, protocols=[("sticky", sub), ("range", sub)])
    assert c.groups["g"].state == "PreparingRebalance" and not j.done


def test_rejoin_with_reordered_protocols_that_keep_the_selection_does_not_rebalance(c):
    sub = subscription_v0("orders")
    static_group(c, ("i-1", "i-2", "i-3"), protocols=[("range", sub), ("sticky", sub)])
    j = join(c, "g", instance="i-2", session_ms=SESSION, protocols=[("sticky", sub), ("range", sub)])
    assert j.done and c.groups["g"].state == "Stable"  # range still wins 2 votes to 1


def test_rejoin_while_preparing_rebalance_replaces_and_fences_the_waiting_old_member(c):
    ids = static_group(c)
    g = c.groups["g"]
    leader_instance = next(i for i, m in ids.items() if m == g.leader_id)
    others = [i for i in ids if i != leader_instance]
    j_leader = join(c, "g", ids[leader_instance], instance=leader_instance, session_ms=SESSION)  # rebalance
    old_wait = join(c, "g", ids[others[0]], instance=others[0], session_ms=SESSION)
    assert g.state == "PreparingRebalance" and not old_wait.done
    restarted = join(c, "g", instance=others[0], session_ms=SESSION)
    assert old_wait.response.error_code == E.fenced_instance_id
    join(c, "g", ids[others[1]], instance=others[1], session_ms=SESSION)
    assert restarted.done and j_leader.done, "everyone rejoined: the join phase completes"
    assert restarted.response.generation_id == g.generation_id and g.state == "CompletingRebalance"
    assert others[0] in {m.group_instance_id for m in j_leader.response.members}


def test_rejoin_while_completing_rebalance_starts_a_new_rebalance(c):
    ids = static_group(c)
    g = c.groups["g"]
    leader_instance = next(i for i, m in ids.items() if m == g.leader_id)
    waits = {i: join(c, "g", m, instance=i, session_ms=SESSION) for i, m in ids.items()}
    assert g.state == "CompletingRebalance" and all(w.done for w in waits.values())
    follower = next(i for i in ids if i != leader_instance)
    pending_sync = sync(c, "g", ids[follower], g.generation_id, instance=follower)
    assert not pending_sync.done
    join(c, "g", instance=follower, session_ms=SESSION)
    assert g.state == "PreparingRebalance"
    assert pending_sync.response.error_code == E.fenced_instance_id


def test_a_static_member_that_does_not_come_back_is_removed_when_its_session_expires(c):
    ids = static_group(c)
    g = c.groups["g"]
    gen = g.generation_id
    for _ in range(int(SESSION / 5000) + 1):
        c.advance(5000)
        for i in ("i-1", "i-2"):
            heartbeat(c, "g", ids[i], gen, instance=i)
    assert "i-3" not in g.static_members and g.state == "PreparingRebalance"


def test_static_members_that_miss_the_join_phase_stay_in_the_group(c):
    # Kafka drops only *dynamic* members that did not rejoin; a static one keeps its slot.
    ids = static_group(c, rebalance_ms=20_000)  # sessions (30 s) outlast the rebalance timeout
    g = c.groups["g"]
    waits = [join(c, "g", ids[i], instance=i, session_ms=SESSION, rebalance_ms=20_000) for i in ("i-1", "i-2")]
    c.advance(20_000)
    assert all(w.done for w in waits)
    assert ids["i-3"] in g.members and g.generation_id == 2 and g.state == "CompletingRebalance"


def test_batch_leave_with_one_unknown_identity_answers_per_member(c):
    ids = static_group(c)
    resp = leave(c, "g", (ids["i-1"], "i-1"), ("", "i-2"), ("", "i-9"), ("ghost", None))
    codes = [(m.member_id, m.group_instance_id, m.error_code) for m in resp.members]
    assert codes == [(ids["i-1"], "i-1", E.none), ("", "i-2", E.none), ("", "i-9", E.unknown_member_id),
                     ("ghost", None, E.unknown_member_id)]
    assert resp.error_code == E.none
    g = c.groups["g"]
    assert set(g.static_members) == {"i-3"} and g.state == "PreparingRebalance"


def test_a_stale_member_id_for_the_same_instance_is_fenced(c):
    ids = static_group(c)
    gen = c.groups["g"].generation_id
    assert heartbeat(c, "g", "i-1-stale", gen, instance="i-1").error_code == E.fenced_instance_id
    assert heartbeat(c, "g", ids["i-1"], gen, instance="i-9").error_code == E.unknown_member_id
    assert heartbeat(c, "g", ids["i-1"], gen, instance="i-1").error_code == E.none


def test_reload_after_a_static_replacement_describes_the_same_group(c):
    static_group(c)
    join(c, "g", instance="i-2", session_ms=SESSION)
    reloaded = Coordinator.load(c.log, cluster=c.cluster)
    assert describe(reloaded, "g") == describe(c, "g")
