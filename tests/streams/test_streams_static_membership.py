"""Static membership for Streams groups, as merged in Kafka PR #22245 (KAFKA-20169) and its
review: validation, replacement of a static member by a new member id, the -2 and -1 leaves,
the group-epoch rule aligned with KIP-1071, group.streams.max.size, endpoint information.
Both profiles agree here (the README's profile table); tests run under the default `kip`."""
from __future__ import annotations

import pytest

from kgroup import Cluster, Coordinator, ErrorCode
from kgroup.groups.modern import MemberState
from kgroup.protocol import to_data
from tests.streams_testing import describe, sgroup, shb, tasks_of, written

E = ErrorCode


def coord(**config) -> Coordinator:
    return Coordinator(cluster=Cluster({"orders": 4}, seed=1), config=config or None)


def epoch_of(c, m):
    return sgroup(c).members[m].member_epoch


def settle(c, *names):
    """Each member heartbeats reporting what it was given until nothing changes."""
    owned = {n: {} for n in names}
    for _ in range(10):
        before = c.position
        for n in names:
            g = sgroup(c)
            mid = next(m.member_id for m in g.members.values() if m.member_id == n or m.instance_id == n)
            r = shb(c, mid, epoch_of(c, mid), active=owned[n], standby={}, warmup={},
                    instance=g.members[mid].instance_id)
            if r.active_tasks is not None:
                owned[n] = tasks_of(r.active_tasks)
        if c.position == before:
            return owned
    raise AssertionError("did not settle")


def static_pair(c):
    shb(c, "a1", 0, instance="a", process="pa")
    shb(c, "b1", 0, instance="b", process="pb")
    return settle(c, "a1", "b1")


def after_static_leave(**config) -> tuple[Coordinator, int]:
    """A static pair whose member a1 (instance "a") has just left with epoch -2, keeping its
    instance id for a replacement; also the group epoch before that leave."""
    c = coord(**config)
    static_pair(c)
    epoch = sgroup(c).group_epoch
    shb(c, "a1", -2, instance="a")
    return c, epoch


def test_static_member_joins():
    c = coord()
    r = shb(c, "a1", 0, instance="a")
    assert r.error_code == E.none and sgroup(c).static_member("a").member_id == "a1"


def test_leave_minus_two_then_rejoin_with_a_new_member_id_keeps_tasks_without_a_bump():
    c = coord()
    owned = static_pair(c)
    epoch = sgroup(c).group_epoch
    assert shb(c, "a1", -2, instance="a").member_epoch == -2
    assert epoch_of(c, "a1") == -2 and sgroup(c).group_epoch == epoch     # identity kept, no bump
    before = c.position
    r = shb(c, "a2", 0, instance="a", process="pa")                       # a new process of the same instance
    assert r.error_code == E.none and tasks_of(r.active_tasks) == owned["a1"]   # tasks back at once
    assert sgroup(c).group_epoch == epoch and "a1" not in sgroup(c).members
    assert written(c, before)[:6] == [
        "StreamsGroupCurrentMemberAssignment-", "StreamsGroupTargetAssignmentMember-", "StreamsGroupMemberMetadata-",
        "StreamsGroupMemberMetadata", "StreamsGroupTargetAssignmentMember", "StreamsGroupCurrentMemberAssignment"]
    assert to_data(describe(Coordinator.load(c.log, cluster=c.cluster))) == to_data(describe(c))


@pytest.mark.parametrize("rejoin", [
    dict(process="pa-new"),
    dict(process="pa", rack="r2"),
    dict(process="pa", client_tags={"az": "2"}),
], ids=["process-id", "rack", "client-tags"])
def test_rejoin_with_a_changed_field_bumps_the_group_epoch(rejoin):
    c, epoch = after_static_leave()
    shb(c, "a2", 0, instance="a", **rejoin)
    assert sgroup(c).group_epoch == epoch + 1


def test_rejoin_with_only_a_new_client_id_writes_the_member_but_does_not_bump():
    # The review's renamed test: testStaticMemberRejoinWithSameProcessIdDoesNotBumpStreamsGroupEpoch.
    c, epoch = after_static_leave()
    before = c.position
    shb(c, "a2", 0, instance="a", process="pa", client_id="new-client")
    assert sgroup(c).group_epoch == epoch and sgroup(c).members["a2"].client_id == "new-client"
    assert "StreamsGroupMemberMetadata" in written(c, before)


def test_unreleased_instance_id_while_the_old_member_is_active():
    c = coord()
    static_pair(c)
    before = c.position
    r = shb(c, "a2", 0, instance="a", process="pa")
    assert r.error_code == E.unreleased_instance_id and c.position == before
    assert r.error_message == ("Static member a2 with instance id a cannot join the group because the instance id "
                               "is owned by a1 member.")


def test_fenced_instance_id_for_the_old_member_id_after_replacement():
    c = coord()
    static_pair(c)
    shb(c, "a1", -2, instance="a")
    shb(c, "a2", 0, instance="a", process="pa")
    r = shb(c, "a1", 3, instance="a")
    assert r.error_code == E.fenced_instance_id


def test_unknown_static_member_leaving():
    c = coord()
    shb(c, "a1", 0, instance="a")
    r = shb(c, "x", -2, instance="nobody")
    assert (r.error_code, r.error_message) == (E.unknown_member_id, "Instance id nobody is unknown.")


def test_the_instance_id_decides_who_a_static_heartbeat_is_about():
    # Kafka (getOrMaybeCreateStaticStreamsGroupMember): the member id must match the instance id's
    # owner, FENCED_INSTANCE_ID otherwise (INVALID_REQUEST before issue 20).
    c = coord()
    static_pair(c)
    before = c.position
    r = shb(c, "a1", epoch_of(c, "a1"), instance="b")                         # b is b1's
    assert (r.error_code, r.error_message) == (
        E.fenced_instance_id, "Static member a1 with instance id b was fenced by member b1.")
    r = shb(c, "a1", epoch_of(c, "a1"), instance="nobody")
    assert (r.error_code, r.error_message) == (E.unknown_member_id, "Instance id nobody is unknown.")
    assert shb(c, "a1", 0, instance="b", process="pa").error_code == E.unreleased_instance_id
    assert c.position == before


def test_a_known_member_joining_with_a_new_instance_id_becomes_that_static_member():
    # Kafka's testStaticMemberRejoinsWithSameMemberIdAndDifferentInstanceId; a dynamic member too.
    c = coord()
    shb(c, "d1", 0)
    shb(c, "s1", 0, instance="s")
    assert shb(c, "d1", 0, instance="x").error_code == E.none                  # dynamic -> static
    assert shb(c, "s1", 0, instance="t").error_code == E.none                  # another instance id
    assert sgroup(c).static_members == {"x": "d1", "t": "s1"}


def test_a_join_resent_with_its_own_member_id_while_active_changes_nothing():
    # Issue 20 item 10: the member keeps its epoch and tasks (it lost them before) and is sent
    # them again; nothing is written and nothing bumped.
    c = coord()
    owned = static_pair(c)
    epoch, group_epoch, before = epoch_of(c, "a1"), sgroup(c).group_epoch, c.position
    r = shb(c, "a1", 0, instance="a", process="pa")
    assert (r.error_code, r.member_epoch, tasks_of(r.active_tasks)) == (E.none, epoch, owned["a1"])
    assert c.position == before and sgroup(c).group_epoch == group_epoch


def test_a_static_member_with_its_previous_epoch_and_a_subset_of_its_tasks_is_accepted():
    # The response that moved it was lost: its previous epoch with a subset of its tasks is fine
    # (KIP-848 rules), a task it does not own is not.
    c = coord()
    shb(c, "a1", 0, instance="a", process="pa")
    settle(c, "a1")
    shb(c, "b1", 0, instance="b", process="pb")
    shb(c, "a1", epoch_of(c, "a1"), active={"0": [0, 1, 2, 3]}, standby={}, warmup={}, instance="a")
    mine = sorted(p for _, p in sgroup(c).members["a1"].assigned.active_ids())
    shb(c, "a1", epoch_of(c, "a1"), active={"0": mine}, standby={}, warmup={}, instance="a")
    a1 = sgroup(c).members["a1"]
    assert a1.member_epoch > a1.previous_member_epoch
    r = shb(c, "a1", a1.previous_member_epoch, active={"0": mine[:1]}, standby={}, warmup={}, instance="a")
    assert (r.error_code, r.member_epoch) == (E.none, a1.member_epoch)
    r = shb(c, "a1", a1.previous_member_epoch, active={"0": [0, 1, 2, 3]}, standby={}, warmup={}, instance="a")
    assert r.error_code == E.fenced_member_epoch


def test_replacement_is_not_rejected_at_max_size():
    c = coord(**{"group.streams.max.size": 2})
    static_pair(c)
    assert shb(c, "c1", 0, process="pc").error_code == E.group_max_size_reached
    shb(c, "a1", -2, instance="a")
    assert shb(c, "a2", 0, instance="a", process="pa").error_code == E.none   # replaces, does not add


def test_leave_minus_two_twice_writes_the_same_record_again():
    # Kafka's testStaticMemberLeaveWithLeaveGroupStaticMemberEpochThenShouldBeIdempotence: the
    # second -2 leave writes the member's current assignment again, unchanged (before issue 20
    # kgroup wrote nothing).
    c = coord()
    static_pair(c)
    shb(c, "a1", -2, instance="a")
    first = c.log.entry_at(c.position - 1).record
    before, left = c.position, sgroup(c).members["a1"]
    assert shb(c, "a1", -2, instance="a").error_code == E.none
    assert [c.log.entry_at(i).record for i in range(before, c.position)] == [first]
    assert sgroup(c).members["a1"] == left


def test_leave_minus_one_removes_the_static_member_and_bumps():
    c = coord()
    static_pair(c)
    epoch = sgroup(c).group_epoch
    shb(c, "a1", -1, instance="a")
    assert "a1" not in sgroup(c).members and sgroup(c).static_member("a") is None
    assert sgroup(c).group_epoch == epoch + 1


def test_a_minus_two_member_whose_session_expires_is_removed():
    c = coord()
    static_pair(c)
    shb(c, "a1", -2, instance="a")
    for _ in range(10):
        c.advance(5_000)
        shb(c, "b1", epoch_of(c, "b1"), instance="b")
    assert "a1" not in sgroup(c).members and sgroup(c).static_member("a") is None


def test_leave_minus_two_while_revoking_frees_the_pending_tasks():
    c = coord()
    shb(c, "a1", 0, instance="a", process="pa")
    settle(c, "a1")
    shb(c, "b1", 0, instance="b", process="pb")                # a1 must give b1 half of its tasks
    r = shb(c, "a1", epoch_of(c, "a1"), active={"0": [0, 1, 2, 3]}, standby={}, warmup={}, instance="a")
    assert sgroup(c).members["a1"].state == MemberState.UNREVOKED_PARTITIONS
    pending = sgroup(c).members["a1"].pending_revocation.active_ids()
    shb(c, "b1", epoch_of(c, "b1"), active={}, standby={}, warmup={}, instance="b")
    assert not sgroup(c).members["b1"].assigned.active            # still held by a1
    shb(c, "a1", -2, instance="a")
    assert sgroup(c).members["a1"].state == MemberState.STABLE      # UNREVOKED -> STABLE (see protocol.leave)
    r = shb(c, "b1", epoch_of(c, "b1"), active={}, standby={}, warmup={}, instance="b")
    assert {("0", p) for p in tasks_of(r.active_tasks)["0"]} == pending


def test_endpoint_information_epoch_stays_on_a_replacement_with_the_same_endpoint():
    # Kafka's testStaticMemberRejoinUpdatesUserEndpointInformationEpoch (foo -> foo): the rejoin
    # compares with the member it replaces; same endpoint, same tasks: nothing to refetch.
    c = coord()
    shb(c, "a1", 0, instance="a", process="pa", endpoint=("host-a", 1))
    settle(c, "a1")
    before = sgroup(c).endpoint_information_epoch
    shb(c, "a1", -2, instance="a")
    r = shb(c, "a2", 0, instance="a", process="pa", endpoint=("host-a", 1), endpoint_epoch=-1)
    assert r.endpoint_information_epoch == before
    info = {e.user_endpoint.host: [(p.topic, list(p.partitions)) for p in e.active_partitions]
            for e in r.partitions_by_user_endpoint}
    assert info == {"host-a": [("orders", [0, 1, 2, 3])]}


# -- audit additions (PR #22245's description and review) ------------------------------------

def test_rejoin_with_a_new_topology_epoch_bumps_the_group_epoch():
    # KIP-1071 "The group epoch is bumped": a changed topology epoch (here: the update to epoch 1).
    from tests.streams_testing import STATELESS
    c, epoch = after_static_leave()
    r = shb(c, "a2", 0, instance="a", process="pa", topology=STATELESS.with_epoch(1))
    assert r.error_code == E.none and sgroup(c).group_epoch > epoch
    assert sgroup(c).members["a2"].topology_epoch == 1


def test_rejoin_from_another_host_writes_the_member_but_does_not_bump():
    c, epoch = after_static_leave()
    before = c.position
    r = c.handle(_join_request("a2", "a", "pa"), client_host="/10.0.0.9")
    assert r.error_code == E.none and sgroup(c).group_epoch == epoch
    assert sgroup(c).members["a2"].client_host == "/10.0.0.9"
    assert "StreamsGroupMemberMetadata" in written(c, before)


def _join_request(member_id, instance, process):
    from kgroup.protocol import request
    from tests.streams_testing import STATELESS, tasks_data
    return request("StreamsGroupHeartbeat", 0, group_id="app", member_id=member_id, member_epoch=0,
                   endpoint_information_epoch=0, instance_id=instance, rack_id=None, rebalance_timeout=30_000,
                   topology=STATELESS.to_request_data(), active_tasks=tasks_data({}), standby_tasks=tasks_data({}),
                   warmup_tasks=tasks_data({}), process_id=process, user_endpoint=None, client_tags=[],
                   task_offsets=None, task_end_offsets=None, shutdown_application=False)


def test_a_known_member_id_rejoining_is_not_rejected_at_max_size():
    # The review: check the member id as well as the instance id before GROUP_MAX_SIZE_REACHED.
    c = coord(**{"group.streams.max.size": 2})
    static_pair(c)
    assert shb(c, "a1", 0, instance="a", process="pa").error_code == E.none


def test_replacement_target_is_found_under_the_old_member_id_before_replay():
    # The review's `fromLastTargetAssignment` point: no new assignment is computed (no bump), so
    # the new member id's target is still filed under the old one when the heartbeat reconciles.
    c = coord()
    owned = static_pair(c)
    shb(c, "a1", -2, instance="a")
    assignment_epoch = sgroup(c).assignment_epoch
    r = shb(c, "a2", 0, instance="a", process="pa")
    assert sgroup(c).assignment_epoch == assignment_epoch            # nothing recomputed
    assert tasks_of(r.active_tasks) == owned["a1"] and r.member_epoch == sgroup(c).group_epoch
    assert "a2" in sgroup(c).target_assignment and "a1" not in sgroup(c).target_assignment


def test_endpoint_information_drops_the_old_member_id_and_follows_task_changes():
    c = coord()
    shb(c, "a1", 0, instance="a", process="pa", endpoint=("host-a", 1))
    shb(c, "b1", 0, instance="b", process="pb", endpoint=("host-b", 1))
    settle(c, "a1", "b1")
    shb(c, "a1", -2, instance="a")
    e0 = sgroup(c).endpoint_information_epoch
    r = shb(c, "a2", 0, instance="a", process="pa", endpoint=("host-a2", 1))   # a new endpoint
    assert sgroup(c).endpoint_information_epoch > e0
    hosts = {e.user_endpoint.host for e in r.partitions_by_user_endpoint}
    assert hosts == {"host-a2", "host-b"}                                       # no entry left for a1
    e1 = sgroup(c).endpoint_information_epoch
    shb(c, "c1", 0, process="pc")                                               # tasks move: epoch moves
    settle(c, "a2", "b1", "c1")
    assert sgroup(c).endpoint_information_epoch > e1


def test_leave_minus_two_while_revoking_keeps_the_state_but_frees_the_tasks_kafka():
    # Kafka as merged: the UNREVOKED -> STABLE fix-up was taken out (KAFKA-20680), but the -2
    # leave drops what the member was revoking, as a consumer group's does: the waiting member
    # gets those tasks at once (before issue 20: only once the -2 member's session ended).
    # assignment batching (KIP-1263) off, as Kafka's request tests run: this is about the -2 leave
    c = Coordinator(cluster=Cluster({"orders": 4}, seed=1), profile="kafka",
                    config={"group.streams.initial.rebalance.delay.ms": 0, "group.streams.assignment.interval.ms": 0})
    shb(c, "a1", 0, instance="a", process="pa")
    settle(c, "a1")
    shb(c, "b1", 0, instance="b", process="pb")
    shb(c, "a1", epoch_of(c, "a1"), active={"0": [0, 1, 2, 3]}, standby={}, warmup={}, instance="a")
    assert sgroup(c).members["a1"].state == MemberState.UNREVOKED_PARTITIONS
    pending = sgroup(c).members["a1"].pending_revocation.active_ids()
    shb(c, "a1", -2, instance="a")
    a1 = sgroup(c).members["a1"]
    assert (a1.member_epoch, a1.state) == (-2, MemberState.UNREVOKED_PARTITIONS) and a1.pending_revocation.is_empty
    r = shb(c, "b1", epoch_of(c, "b1"), active={}, standby={}, warmup={}, instance="b")
    assert {("0", p) for p in tasks_of(r.active_tasks)["0"]} == pending


def test_rejoin_after_minus_two_with_its_own_member_id_restores_epoch_and_tasks_without_a_bump():
    # Issue 20 item 10 (Kafka's ...AndRejoinWithSameMemberId): same process id and rack, so no
    # bump; the member's records are replaced by themselves, as Kafka writes them.
    c = coord()
    owned = static_pair(c)
    epoch, group_epoch = epoch_of(c, "a1"), sgroup(c).group_epoch
    shb(c, "a1", -2, instance="a")
    before = c.position
    r = shb(c, "a1", 0, instance="a", process="pa")
    assert (r.error_code, r.member_epoch, tasks_of(r.active_tasks)) == (E.none, epoch, owned["a1"])
    assert sgroup(c).group_epoch == group_epoch
    assert written(c, before) == [
        "StreamsGroupCurrentMemberAssignment-", "StreamsGroupTargetAssignmentMember-", "StreamsGroupMemberMetadata-",
        "StreamsGroupMemberMetadata", "StreamsGroupTargetAssignmentMember", "StreamsGroupCurrentMemberAssignment",
        "StreamsGroupCurrentMemberAssignment"]
    assert to_data(describe(Coordinator.load(c.log, cluster=c.cluster))) == to_data(describe(c))


def test_endpoint_information_epoch_ignores_members_without_an_endpoint():
    # PR #22245 review: bump when the endpoint changes, or the tasks of a member *with* an endpoint.
    c = coord()
    shb(c, "a1", 0, instance="a", process="pa")
    shb(c, "b1", 0, instance="b", process="pb")
    settle(c, "a1", "b1")
    assert sgroup(c).endpoint_information_epoch == 0


def test_a_refused_claim_moves_the_holders_kept_share_kafka():
    """Kafka 4.4.0 (`streams_kept_refined_assignment`): a join refused with UNRELEASED_INSTANCE_ID
    has already moved the holder's share of the epoch's kept assignment to the refused member id,
    so the holder's replacement after a -2 leave is reconciled to that epoch with no task; its next
    heartbeat, the group Stable, gets a new epoch and the task back. Under `kip` it keeps its tasks."""
    for profile in ("kafka", "kip"):
        c = Coordinator(cluster=Cluster({"orders": 4}, seed=1), profile=profile,
                        config={"group.streams.initial.rebalance.delay.ms": 0})
        shb(c, "a1", 0, instance="a", process="pa")
        c.advance(1000)
        shb(c, "b1", 0, instance="b", process="pb")
        c.advance(1000)
        owned = settle(c, "a1", "b1")
        epoch = sgroup(c).assignment_epoch
        assert shb(c, "c1", 0, instance="a", process="pc").error_code == E.unreleased_instance_id
        shb(c, "a1", -2, instance="a")
        r = shb(c, "a2", 0, instance="a", process="pa")
        assert r.member_epoch == epoch and sgroup(c).group_epoch == epoch
        if profile == "kip":
            assert tasks_of(r.active_tasks) == owned["a1"]
            continue
        assert tasks_of(r.active_tasks) == {}
        before = c.position
        r = shb(c, "a2", epoch, instance="a", active={}, standby={}, warmup={})
        assert r.member_epoch == epoch + 1 and tasks_of(r.active_tasks) == owned["a1"]
        assert written(c, before) == ["StreamsGroupMetadata", "StreamsGroupTargetAssignmentMetadata",
                                      "StreamsGroupCurrentMemberAssignment"]
