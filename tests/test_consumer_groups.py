"""KIP-848 consumer groups on the coordinator: ConsumerGroupHeartbeat errors, the three epochs,
reconciliation, regex subscriptions, static members, describe, records and reload.

Rules follow Apache Kafka's GroupMetadataManager where the seeds are silent (KIP-848 is not
one of the seeds); test names say which rule."""
from __future__ import annotations

import pytest

from kgroup import Cluster, Coordinator, ErrorCode
from kgroup import records as R
from kgroup.groups.consumer import ConsumerGroup
from kgroup.groups.modern import MemberState
from kgroup.protocol import request
from tests.kgroup_testing import commit, written


#: KAFKA-20268: a new group is at group and assignment epoch 1, so the first assignment the
#: coordinator computes (the first member's join) is epoch 2, and each later bump adds one.
FIRST = 2


def hb(c: Coordinator, member_id: str, epoch: int, *, group: str = "g", version: int = 1, topics=None,
       regex=None, owned=None, instance=None, rebalance_ms=None, assignor=None, rack=None, client_id="kgroup"):
    """One ConsumerGroupHeartbeat; a join (epoch 0) sends a full request."""
    if epoch == 0:
        rebalance_ms = 30_000 if rebalance_ms is None else rebalance_ms
        owned = {} if owned is None else owned
    kw = dict(group_id=group, member_id=member_id, member_epoch=epoch, instance_id=instance, rack_id=rack,
              rebalance_timeout=-1 if rebalance_ms is None else rebalance_ms, subscribed_topic_names=topics,
              server_assignor=assignor,
              topic_partitions=None if owned is None else [{"topic_id": t, "partitions": sorted(ps)}
                                                           for t, ps in owned.items()])
    if version >= 1 or regex is not None:
        kw["subscribed_topic_regex"] = regex
    return c.handle(request("ConsumerGroupHeartbeat", version, **kw), client_id=client_id)


def assigned(resp) -> dict:
    return {tp.topic_id: set(tp.partitions) for tp in resp.assignment.topic_partitions}


def group(c: Coordinator, gid: str = "g") -> ConsumerGroup:
    g = c.groups[gid]
    assert isinstance(g, ConsumerGroup)
    return g


#: a target assignment at every group epoch bump (KIP-1263's batching off)
ASSIGN_AT_EVERY_BUMP = {"group.consumer.assignment.interval.ms": 0}


@pytest.fixture
def c() -> Coordinator:
    # every bump assigns at once: these tests are about reconciliation, not KIP-1263's batching
    return Coordinator(Cluster({"foo": 6, "bar": 3}, seed=7), config=ASSIGN_AT_EVERY_BUMP)


def settle(c: Coordinator, members: dict[str, int], rounds: int = 6) -> dict[str, int]:
    """Heartbeat every member (reporting exactly what it was given) until nothing moves."""
    owned: dict[str, dict] = {m: {} for m in members}
    epochs = dict(members)
    for _ in range(rounds):
        for m in list(epochs):
            r = hb(c, m, epochs[m], owned=owned[m])
            assert r.error_code == ErrorCode.none, r
            epochs[m] = r.member_epoch
            if r.assignment is not None:
                owned[m] = assigned(r)
    return epochs


# ---------------------------------------------------------------------------------------
# Validation (Kafka: throwIfConsumerGroupHeartbeatRequestIsInvalid)

@pytest.mark.parametrize("kw, message", [
    (dict(member_id="", member_epoch=0), "MemberId can't be empty."),
    (dict(member_id="m", member_epoch=0, rebalance_timeout=-1), "RebalanceTimeoutMs must be provided in first request."),
    (dict(member_id="m", member_epoch=0, topic_partitions=None), "TopicPartitions must be empty when (re-)joining."),
    (dict(member_id="m", member_epoch=0, subscribed_topic_names=None),
     "Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when (re-)joining."),
    (dict(member_id="m", member_epoch=0, instance_id=" "), "InstanceId can't be empty."),
    (dict(member_id="m", member_epoch=0, rack_id=""), "RackId can't be empty."),
    (dict(member_id="m", member_epoch=-2), "InstanceId can't be null."),
    (dict(member_id="m", member_epoch=-3), "MemberEpoch is invalid."),
    (dict(group_id=" ", member_id="m", member_epoch=0), "GroupId can't be empty."),
])
def test_invalid_requests_get_invalid_request_with_kafkas_message(c, kw, message):
    base = dict(group_id="g", member_id="m", member_epoch=0, rebalance_timeout=5000, subscribed_topic_names=["foo"],
                topic_partitions=[])
    r = c.handle(request("ConsumerGroupHeartbeat", 1, **{**base, **kw}))
    assert (r.error_code, r.error_message) == (ErrorCode.invalid_request, message)
    assert c.position == 0  # nothing written


def test_v0_lets_the_coordinator_pick_the_member_id_v1_requires_one(c):
    r0 = hb(c, "", 0, topics=["foo"], version=0)
    assert r0.error_code == ErrorCode.none and len(r0.member_id) == 22  # a Kafka Uuid string
    r1 = hb(c, "", 0, topics=["foo"], version=1)
    assert r1.error_code == ErrorCode.invalid_request


def test_unsupported_assignor_lists_the_supported_ones(c):
    r = hb(c, "m", 0, topics=["foo"], assignor="sticky")
    assert r.error_code == ErrorCode.unsupported_assignor
    assert r.error_message == "ServerAssignor sticky is not supported. Supported assignors: uniform, range."


def test_unknown_group_and_unknown_member(c):
    assert hb(c, "m", 3).error_code == ErrorCode.group_id_not_found
    assert hb(c, "m", -1).error_code == ErrorCode.group_id_not_found
    hb(c, "a", 0, topics=["foo"])
    r = hb(c, "ghost", 1)
    assert r.error_code == ErrorCode.unknown_member_id
    assert r.error_message == "Member ghost is not a member of group g."
    assert hb(c, "ghost", -1).error_code == ErrorCode.unknown_member_id


def test_group_of_another_type_is_not_found_for_heartbeats(c):
    from tests.kgroup_testing import join_until_member_id
    join_until_member_id(c, "classic", protocol_type="connect")  # a non-consumer-protocol classic group
    c.advance(3000)
    r = hb(c, "m", 0, group="classic", topics=["foo"])
    assert r.error_code == ErrorCode.group_id_not_found
    assert "does not use the consumer embedded protocol" in r.error_message


def test_group_max_size_reached_only_for_new_members():
    c = Coordinator(Cluster({"foo": 2}), config={"group.consumer.max.size": 1})
    assert hb(c, "a", 0, topics=["foo"]).error_code == ErrorCode.none
    r = hb(c, "b", 0, topics=["foo"])
    assert r.error_code == ErrorCode.group_max_size_reached
    assert r.error_message == "The consumer group has reached its maximum capacity of 1 members."
    assert hb(c, "a", FIRST).error_code == ErrorCode.none  # existing members go on


def test_invalid_regular_expression(c):
    r = hb(c, "m", 0, regex="foo(")
    assert r.error_code == ErrorCode.invalid_regular_expression
    assert r.error_message.startswith("SubscribedTopicRegex `foo(` is not a valid regular expression")


# ---------------------------------------------------------------------------------------
# Member epochs and fencing

def test_fenced_member_epoch_ahead_or_behind(c):
    hb(c, "a", 0, topics=["foo"])
    r = hb(c, "a", 5)
    assert r.error_code == ErrorCode.fenced_member_epoch
    assert "greater member epoch (5)" in r.error_message
    hb(c, "b", 0, topics=["foo"])            # group epoch FIRST + 1
    settle(c, {"a": FIRST, "b": FIRST + 1})
    assert group(c).members["a"].member_epoch == FIRST + 1
    foo = c.cluster.topic_id("foo")
    r = hb(c, "a", FIRST, owned={foo: set(range(6))})   # its previous epoch, but owning more than it has
    assert r.error_code == ErrorCode.fenced_member_epoch
    assert f"smaller member epoch ({FIRST})" in r.error_message


def test_a_fenced_member_rejoins_with_epoch_zero_and_the_same_id(c):
    """KAFKA-19233 (Kafka 4.3): epoch 0 is always a valid rejoin, whatever the member's epoch."""
    hb(c, "a", 0, topics=["foo"])
    hb(c, "b", 0, topics=["foo"])
    settle(c, {"a": FIRST, "b": FIRST + 1})
    assert group(c).members["a"].member_epoch == FIRST + 1
    r = hb(c, "a", 0, topics=["foo"])
    assert r.error_code == ErrorCode.none and r.member_epoch == FIRST + 1
    assert assigned(r) == {t: set(ps) for t, ps in group(c).members["a"].assigned.items()}


def test_lost_response_previous_epoch_with_subset_is_accepted(c):
    """Kafka: a member retrying with its previous epoch and a subset of its partitions
    is accepted (the response that moved it may have been lost)."""
    foo = c.cluster.topic_id("foo")
    r = hb(c, "a", 0, topics=["foo"])
    assert r.member_epoch == FIRST
    hb(c, "b", 0, topics=["foo"])
    r = hb(c, "a", FIRST, owned={foo: set(range(6))})   # asked to revoke 3 partitions, still FIRST
    kept = assigned(r)[foo]
    r = hb(c, "a", FIRST, owned={foo: kept})            # revoked: moves to FIRST + 1 ...
    assert r.member_epoch == FIRST + 1
    # ... but the answer is lost: it retries with its previous epoch and what it owns.
    retry = hb(c, "a", FIRST, owned={foo: kept})
    assert retry.error_code == ErrorCode.none and retry.member_epoch == FIRST + 1
    # With a partition it does not own any more, the same retry is fenced.
    bad = hb(c, "a", FIRST, owned={foo: set(range(6))})
    assert bad.error_code == ErrorCode.fenced_member_epoch


# ---------------------------------------------------------------------------------------
# The three epochs: when each moves

def test_join_bumps_group_epoch_computes_target_and_member_catches_up(c):
    r = hb(c, "a", 0, topics=["foo"])
    g = group(c)
    assert (g.group_epoch, g.assignment_epoch, r.member_epoch) == (FIRST, FIRST, FIRST)
    assert written(c, 0) == ["ConsumerGroupMemberMetadata", "ConsumerGroupMetadata",
                             "ConsumerGroupTargetAssignmentMember", "ConsumerGroupTargetAssignmentMetadata",
                             "ConsumerGroupCurrentMemberAssignment"]
    assert g.state == "Stable"


def test_second_member_moves_group_epoch_first_member_reconciles_through_unrevoked(c):
    foo = c.cluster.topic_id("foo")
    hb(c, "a", 0, topics=["foo"])
    r = hb(c, "b", 0, topics=["foo"])
    g = group(c)
    assert (g.group_epoch, g.assignment_epoch) == (FIRST + 1, FIRST + 1)
    assert r.member_epoch == FIRST + 1 and assigned(r) == {}           # b waits: a still owns them
    assert g.members["b"].state == MemberState.UNRELEASED_PARTITIONS
    assert g.state == "Reconciling"
    r = hb(c, "a", FIRST, owned={foo: set(range(6))})
    assert r.member_epoch == FIRST and g.members["a"].state == MemberState.UNREVOKED_PARTITIONS
    kept = assigned(r)[foo]
    assert len(kept) == 3
    r = hb(c, "a", FIRST, owned={foo: kept})
    assert r.member_epoch == FIRST + 1 and g.members["a"].state == MemberState.STABLE
    r = hb(c, "b", FIRST + 1, owned={})
    assert assigned(r)[foo] == set(range(6)) - kept and g.state == "Stable"


def test_subscription_change_bumps_group_epoch(c):
    hb(c, "a", 0, topics=["foo"])
    before = group(c).group_epoch
    r = hb(c, "a", FIRST, topics=["foo", "bar"])
    assert group(c).group_epoch == before + 1
    assert {c.cluster.topic_name(t) for t in assigned(r)} == {"foo", "bar"}


def test_nothing_changed_writes_nothing_and_omits_the_assignment(c):
    """Fields are omitted when unchanged: no records, no assignment in the response."""
    foo = c.cluster.topic_id("foo")
    hb(c, "a", 0, topics=["foo"])
    pos = c.position
    r = hb(c, "a", FIRST, owned={foo: set(range(6))})
    assert r.assignment is None and c.position == pos
    # A full request (rebalance timeout + subscription + owned partitions) gets the assignment again.
    r = hb(c, "a", FIRST, topics=["foo"], rebalance_ms=30_000, owned={foo: set(range(6))})
    assert assigned(r) == {foo: set(range(6))} and c.position == pos


def test_topic_creation_and_partition_growth_bump_the_group_epoch(c):
    hb(c, "a", 0, topics=["foo", "later"])             # "later" does not exist yet
    g = group(c)
    epoch = g.group_epoch
    c.cluster.create_topic("later", 2)
    r = hb(c, "a", FIRST)
    assert g.group_epoch == epoch + 1
    assert c.cluster.topic_id("later") in assigned(r)
    c.cluster.increase_partitions("foo", 8)
    r = hb(c, "a", r.member_epoch)
    assert g.group_epoch == epoch + 2 and assigned(r)[c.cluster.topic_id("foo")] == set(range(8))


def test_leave_bumps_the_group_epoch_and_writes_tombstones_in_kafkas_order(c):
    hb(c, "a", 0, topics=["foo"])
    hb(c, "b", 0, topics=["foo"])
    pos, epoch = c.position, group(c).group_epoch
    r = hb(c, "b", -1)
    assert (r.error_code, r.member_id, r.member_epoch) == (ErrorCode.none, "b", -1)
    assert written(c, pos) == ["ConsumerGroupCurrentMemberAssignment-", "ConsumerGroupTargetAssignmentMember-",
                               "ConsumerGroupMemberMetadata-", "ConsumerGroupMetadata"]
    assert group(c).group_epoch == epoch + 1 and "b" not in group(c).members


def test_last_member_leaving_levels_the_assignment_epoch(c):
    """KAFKA-20442 (Kafka 4.3): an empty group has matching group and assignment epochs."""
    hb(c, "a", 0, topics=["foo"])
    pos = c.position
    hb(c, "a", -1)
    assert written(c, pos)[-2:] == ["ConsumerGroupMetadata", "ConsumerGroupTargetAssignmentMetadata"]
    g = group(c)
    assert (g.state, g.group_epoch, g.assignment_epoch) == ("Empty", FIRST + 1, FIRST + 1)


def test_session_timeout_fences_the_member(c):
    hb(c, "a", 0, topics=["foo"])
    hb(c, "b", 0, topics=["foo"])
    for _ in range(10):                               # a keeps heartbeating, b goes silent
        c.advance(5000)
        hb(c, "a", group(c).members["a"].member_epoch, owned={c.cluster.topic_id("foo"): {0, 1, 2}})
    assert "b" not in group(c).members
    assert group(c).last_fence_reason == "the member session expired"


def test_rebalance_timeout_fences_a_member_that_does_not_revoke(c):
    foo = c.cluster.topic_id("foo")
    hb(c, "a", 0, topics=["foo"], rebalance_ms=10_000)
    hb(c, "b", 0, topics=["foo"])
    r = hb(c, "a", FIRST, owned={foo: set(range(6))})   # told to revoke, keeps owning everything
    assert group(c).members["a"].state == MemberState.UNREVOKED_PARTITIONS
    for _ in range(3):
        c.advance(4000)
        hb(c, "a", FIRST, owned={foo: set(range(6))})   # still heartbeating, still not revoking
        hb(c, "b", FIRST + 1, owned={})
    assert "a" not in group(c).members
    assert f"failed to transition from epoch {FIRST} within 10000ms" in group(c).last_fence_reason
    r = hb(c, "b", group(c).members["b"].member_epoch, owned={})
    r = hb(c, "b", r.member_epoch, owned={})
    assert group(c).members["b"].assigned == {foo: frozenset(range(6))}


# ---------------------------------------------------------------------------------------
# Reconciliation: revoke before assign

def test_two_members_swapping_partitions_never_share_one(monkeypatch):
    """A fixed assignor swaps a's and b's partitions. Sampled after every heartbeat, no
    partition is ever held by two members, on the coordinator or on the clients."""
    from kgroup.assignors import SERVER_ASSIGNORS, FixedAssignor
    c = Coordinator(Cluster({"foo": 4, "bar": 1}, seed=3),
                    config={"group.consumer.assignors": ["uniform", "range", "fixed"], **ASSIGN_AT_EVERY_BUMP})
    foo = c.cluster.topic_id("foo")
    hb(c, "a", 0, topics=["foo"])
    hb(c, "b", 0, topics=["foo"])
    settle(c, {"a": FIRST, "b": FIRST + 1})
    g = group(c)
    first = {m: g.members[m].assigned[foo] for m in "ab"}
    assert first["a"] | first["b"] == frozenset(range(4)) and not first["a"] & first["b"]
    monkeypatch.setitem(SERVER_ASSIGNORS, "fixed",
                        lambda: FixedAssignor({"a": {foo: first["b"]}, "b": {foo: first["a"]}}))
    owned = {m: {foo: set(first[m])} for m in "ab"}
    epochs = {m: g.members[m].member_epoch for m in "ab"}
    # a changes its subscription and asks for the fixed assignor: a new epoch, the swap as target.
    r = hb(c, "a", epochs["a"], topics=["foo", "bar"], assignor="fixed", owned=owned["a"])
    assert g.target_assignment == {"a": {foo: first["b"]}, "b": {foo: first["a"]}}
    epochs["a"] = r.member_epoch
    if r.assignment is not None:
        owned["a"] = assigned(r)
    for _ in range(6):
        for m in "ab":
            r = hb(c, m, epochs[m], owned=owned[m])
            assert r.error_code == ErrorCode.none
            epochs[m] = r.member_epoch
            if r.assignment is not None:
                owned[m] = assigned(r)
            holders: dict[int, set] = {}
            for mm in g.members.values():
                for p in set(mm.assigned.get(foo, ())) | set(mm.pending_revocation.get(foo, ())):
                    holders.setdefault(p, set()).add(mm.member_id)
            assert all(len(h) == 1 for h in holders.values()), holders
            assert not set(owned["a"].get(foo, ())) & set(owned["b"].get(foo, ()))
    assert g.members["a"].assigned == {foo: first["b"]} and g.members["b"].assigned == {foo: first["a"]}
    assert g.state == "Stable"


# ---------------------------------------------------------------------------------------
# Regular expressions (RE2, full match, resolved after the heartbeat that brings them)

def test_regex_resolves_after_the_heartbeat_and_picks_up_new_topics(c):
    r = hb(c, "a", 0, regex="fo.*")
    g = group(c)
    assert r.member_epoch == 1 and assigned(r) == {}     # resolved in a write of its own
    assert g.resolved_regexes["fo.*"].topics == {"foo"}
    assert g.group_epoch == 2
    r = hb(c, "a", 1)
    mine = assigned(r)
    assert r.member_epoch == 2 and set(mine) == {c.cluster.topic_id("foo")}
    # A topic matching the regex appears: after the 10 s batch interval, the next heartbeat
    # resolves again and the group epoch moves.
    c.cluster.create_topic("fox", 2)
    c.advance(11_000)
    r = hb(c, "a", 2, owned=mine)
    assert g.resolved_regexes["fo.*"].topics == {"foo", "fox"} and g.group_epoch == 3
    r = hb(c, "a", r.member_epoch, owned=mine)
    assert {c.cluster.topic_name(t) for t in assigned(r)} == {"foo", "fox"}
    # A new regex within 10 s of the last resolution waits (Kafka's batch interval) ...
    r = hb(c, "b", 0, regex="fo")
    assert "fo" not in g.resolved_regexes
    c.advance(11_000)
    hb(c, "b", r.member_epoch)
    # ... and RE2 full-matches, as RE2/J's matches(): "fo" alone does not match "foo".
    assert g.resolved_regexes["fo"].topics == frozenset()


def test_regex_record_is_deleted_with_its_last_member(c):
    hb(c, "a", 0, regex="b.r")
    pos = c.position
    hb(c, "a", -1)
    assert "ConsumerGroupRegularExpression-" in written(c, pos)
    assert "b.r" not in group(c).resolved_regexes


# ---------------------------------------------------------------------------------------
# Static members

def test_static_member_rejoining_after_minus_two_keeps_its_assignment(c):
    hb(c, "a1", 0, topics=["foo"], instance="A")
    hb(c, "b", 0, topics=["foo"])
    epochs = settle(c, {"a1": FIRST, "b": FIRST + 1})
    g = group(c)
    mine = g.members["a1"].assigned
    epoch = g.group_epoch
    r = hb(c, "a1", -2, instance="A")
    assert (r.member_epoch, g.members["a1"].member_epoch) == (-2, -2)
    assert g.group_epoch == epoch                      # no rebalance
    # A different process with the same instance id takes over, same partitions.
    r = hb(c, "a2", 0, topics=["foo"], instance="A")
    assert "a1" not in g.members and g.members["a2"].assigned == mine
    assert assigned(r) == {t: set(ps) for t, ps in mine.items()}
    assert g.group_epoch == epoch                      # still no rebalance
    assert g.members["b"].member_epoch == epochs["b"]


def test_static_member_with_instance_still_in_use_is_unreleased(c):
    hb(c, "a1", 0, topics=["foo"], instance="A")
    r = hb(c, "a2", 0, topics=["foo"], instance="A")
    assert r.error_code == ErrorCode.unreleased_instance_id
    r = hb(c, "a2", FIRST, instance="A")
    assert r.error_code == ErrorCode.fenced_instance_id


def test_static_member_gone_after_minus_two_is_removed_at_session_timeout(c):
    hb(c, "a1", 0, topics=["foo"], instance="A")
    hb(c, "a1", -2, instance="A")
    assert "a1" in group(c).members
    c.advance(45_000)
    assert "a1" not in group(c).members


# ---------------------------------------------------------------------------------------
# Describe, ListGroups, offsets

def test_consumer_group_describe(c):
    hb(c, "a", 0, topics=["foo"], instance="A", rack="r1", client_id="app-1")
    resp = c.handle(request("ConsumerGroupDescribe", 1, group_ids=["g", "nope", ""], include_authorized_operations=False))
    # Kafka answers the empty id first, then partition by partition (GroupCoordinatorService)
    empty, *rest = resp.groups
    g, nope = sorted(rest, key=lambda x: x.group_id != "g")
    assert (g.group_state, g.group_epoch, g.assignment_epoch, g.assignor_name) == ("Stable", FIRST, FIRST, "uniform")
    m = g.members[0]
    assert (m.member_id, m.instance_id, m.rack_id, m.client_id, m.member_type) == ("a", "A", "r1", "app-1", 1)
    assert m.assignment.topic_partitions[0].topic_name == "foo"
    assert set(m.target_assignment.topic_partitions[0].partitions) == set(range(6))
    assert (nope.error_code, nope.error_message) == (ErrorCode.group_id_not_found, "Group nope not found.")
    assert empty.error_code == ErrorCode.invalid_group_id


def test_list_groups_by_type(c):
    from tests.kgroup_testing import join
    hb(c, "a", 0, topics=["foo"])
    join(c, "old")
    resp = c.handle(request("ListGroups", 5, states_filter=[], types_filter=["consumer"]))
    assert [(g.group_id, g.group_type, g.group_state) for g in resp.groups] == [("g", "consumer", "Stable")]


def test_offset_commit_checks_the_member_epoch(c):
    hb(c, "a", 0, topics=["foo"])
    ok = commit(c, "g", {("foo", 0): 5}, member_id="a", generation=FIRST)
    assert ok.topics[0].partitions[0].error_code == ErrorCode.none
    stale = commit(c, "g", {("foo", 0): 6}, member_id="a", generation=FIRST - 1)
    assert stale.topics[0].partitions[0].error_code == ErrorCode.stale_member_epoch
    unknown = commit(c, "g", {("foo", 0): 6}, member_id="zz", generation=FIRST)
    assert unknown.topics[0].partitions[0].error_code == ErrorCode.unknown_member_id
    old = commit(c, "g", {("foo", 0): 6}, member_id="a", generation=FIRST, version=8)
    assert old.topics[0].partitions[0].error_code == ErrorCode.unsupported_version


def test_delete_group_only_when_empty(c):
    hb(c, "a", 0, topics=["foo"])
    r = c.handle(request("DeleteGroups", 2, groups_names=["g"]))
    assert r.results[0].error_code == ErrorCode.non_empty_group
    hb(c, "a", -1)
    r = c.handle(request("DeleteGroups", 2, groups_names=["g"]))
    assert r.results[0].error_code == ErrorCode.none and "g" not in c.groups


# ---------------------------------------------------------------------------------------
# Records: replay equals live state, and a reload does not rebalance

def _snapshot(c: Coordinator) -> dict:
    g = group(c)
    return {"epoch": g.group_epoch, "assignment_epoch": g.assignment_epoch, "hash": g.metadata_hash,
            "members": g.describe_members(), "regexes": dict(g.resolved_regexes),
            "static": dict(g.static_members), "partition_epochs": g.partition_epochs}


def test_reload_replays_to_the_same_group_and_does_not_rebalance(c):
    hb(c, "a", 0, topics=["foo"], instance="A")
    hb(c, "b", 0, regex="ba.")
    settle(c, {"a": FIRST, "b": FIRST})  # b's regex bumps nothing until it is resolved
    live = _snapshot(c)
    reloaded = Coordinator.load(c.log, cluster=c.cluster)
    assert _snapshot(reloaded) == live
    # The first heartbeat after a load checks the metadata hash: same hash, no new epoch.
    pos = reloaded.position
    r = hb(reloaded, "a", group(reloaded).members["a"].member_epoch,
           owned={t: set(ps) for t, ps in group(reloaded).members["a"].assigned.items()})
    assert r.error_code == ErrorCode.none and reloaded.position == pos


def test_every_record_round_trips_through_bytes(c):
    hb(c, "a", 0, topics=["foo"], instance="A")
    hb(c, "b", 0, regex="ba.")
    settle(c, {"a": FIRST, "b": FIRST})  # b's regex bumps nothing until it is resolved
    hb(c, "b", -1)
    for entry in c.log:
        rec = entry.record
        key, value = rec.encode()
        again = R.decode_record(key, value)
        assert again == rec


def test_old_partition_metadata_record_is_read_and_replaced_by_the_hash(c):
    """Kafka before 4.1 wrote ConsumerGroupPartitionMetadata (type 4) and no hash: the first
    heartbeat after loading such a group writes the hash (new epoch) and a type-4 tombstone."""
    hb(c, "a", 0, topics=["foo"])
    foo = c.cluster.topic("foo")
    old = [e.record for e in c.log]
    old = [r.replace(value=r.value.replace(metadata_hash=0)) if isinstance(r, R.ConsumerGroupMetadata) else r
           for r in old]
    old.insert(1, R.ConsumerGroupPartitionMetadata(
        R.ConsumerGroupPartitionMetadataKey(group_id="g"),
        R.ConsumerGroupPartitionMetadataValue(topics=[R.ConsumerGroupPartitionMetadataValue.TopicMetadata(
            topic_id=foo.topic_id, topic_name="foo", num_partitions=6, partition_metadata=[])])))
    loaded = Coordinator.load(old, cluster=c.cluster)
    g = group(loaded)
    assert g.partition_metadata == {"foo": (foo.topic_id, 6)} and g.metadata_hash == 0
    pos = loaded.position
    hb(loaded, "a", FIRST, owned={foo.topic_id: set(range(6))})
    assert written(loaded, pos)[:2] == ["ConsumerGroupMetadata", "ConsumerGroupPartitionMetadata-"]
    assert g.partition_metadata is None and g.metadata_hash != 0 and g.group_epoch == FIRST + 1


def test_the_subscribed_topics_of_a_change_are_counted_as_a_pass_over_every_member_finds_them():
    """GroupChange counts the changed members out and in (Kafka's subscribedTopicNames map); a pass
    over the changed group's members must give the same topics, whatever the change."""
    import random
    from kgroup.groups.consumer.group import ConsumerGroupMember, ResolvedRegularExpression
    from kgroup.groups.consumer.protocol import GroupChange
    rng = random.Random(5)
    topics = [f"t{i}" for i in range(6)]
    for _ in range(300):
        g = ConsumerGroup("g")
        g.resolved_regexes = {"r1": ResolvedRegularExpression(frozenset({"t4", "x"}), 1, 0),
                              "r2": ResolvedRegularExpression(frozenset({"y"}), 1, 0)}

        def member(mid: str) -> ConsumerGroupMember:
            return ConsumerGroupMember(member_id=mid, subscribed_topic_names=frozenset(rng.sample(topics, rng.randint(0, 3))),
                                       subscribed_topic_regex=rng.choice([None, "r1", "r2"]))
        for i in range(rng.randint(0, 6)):
            g.update_member(member(f"m{i}"))
        ids = list(g.members)
        removed = tuple(rng.sample(ids, rng.randint(0, len(ids)))) if ids else ()
        replaced = g.members[rng.choice(ids)] if ids and rng.random() < 0.3 else None
        updated = member(rng.choice([*ids, "new"])) if rng.random() < 0.8 else None
        change = GroupChange(g, updated, replaced, removed)
        dropped = set(rng.sample(["r1", "r2"], rng.randint(0, 2)))
        resolved = {r: v for r, v in g.resolved_regexes.items() if r not in dropped}
        assert change.subscribed_topic_names(dropped) == g.subscribed_topic_names(change.members, resolved)
