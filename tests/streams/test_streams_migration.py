"""Classic <-> Streams groups, as Apache Kafka does today (kip-vs-kafka.md, `kafka` profile):
only an *empty* classic group becomes a Streams group; a StreamsGroupHeartbeat to a classic group
with members gets GROUP_ID_NOT_FOUND and a classic JoinGroup to a Streams group with members gets
INCONSISTENT_GROUP_PROTOCOL, nothing written. KIP-1071's online migration of a classic group
*with members* (profile `kip`) is in test_streams_migration_kip.py."""
from __future__ import annotations

from kgroup import Cluster, Coordinator, ErrorCode
from tests.kgroup_testing import commit, join, join_until_member_id
from tests.streams_testing import sgroup, shb, written

E = ErrorCode


def coord() -> Coordinator:
    return Coordinator(cluster=Cluster({"orders": 3}, seed=1), profile="kafka",
                       config={"group.streams.initial.rebalance.delay.ms": 0})


def test_an_empty_classic_group_becomes_a_streams_group_kafka():
    c = coord()
    commit(c, "app", {("orders", 0): 5})                 # a "simple" classic group holding offsets
    r = shb(c, "A", 0)
    assert r.error_code == E.none and str(sgroup(c).type) == "streams"
    assert c.offsets.store.group_offsets("app")           # the offsets stay


def test_streams_heartbeat_to_a_classic_group_with_members_kafka():
    c = coord()
    join_until_member_id(c, "app")
    before = c.position
    r = shb(c, "A", 0)
    assert (r.error_code, r.error_message) == (E.group_id_not_found, "Group app is not a streams group.")
    assert c.position == before and str(c.groups["app"].type) == "classic"


def test_classic_join_to_a_streams_group_with_members_kafka():
    c = coord()
    shb(c, "A", 0)
    before = c.position
    r = join(c, "app")
    assert r.done and r.response.error_code == E.inconsistent_group_protocol
    assert c.position == before and written(c, before) == []


def test_an_empty_classic_group_becomes_a_streams_group_under_kip_too():
    c = Coordinator(cluster=Cluster({"orders": 3}, seed=1), config={"group.streams.initial.rebalance.delay.ms": 0})
    commit(c, "app", {("orders", 0): 5})
    assert shb(c, "A", 0).error_code == E.none and str(sgroup(c).type) == "streams"


def test_classic_heartbeat_sync_and_leave_to_a_streams_group_kafka():
    # Kafka: the Streams group does not serve classic members (UNKNOWN_MEMBER_ID), nothing written.
    from tests.kgroup_testing import heartbeat, leave, sync
    c = coord()
    shb(c, "A", 0)
    before = c.position
    assert heartbeat(c, "app", "A", 1).error_code == E.unknown_member_id
    assert sync(c, "app", "A", 1).response.error_code == E.unknown_member_id
    assert leave(c, "app", ("A", None)).error_code == E.unknown_member_id
    assert c.position == before and "A" in sgroup(c).members
