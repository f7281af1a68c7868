"""Classic <-> Streams groups, as Apache Kafka does today (kip-vs-kafka.md, `kafka` profile):
only an *empty* classic group becomes a Streams group; a StreamsGroupHeartbeat to a classic group
with members gets GROUP_ID_NOT_FOUND and a classic JoinGroup to a Streams group with members gets
INCONSISTENT_GROUP_PROTOCOL, nothing written. (KIP-1071's online migration of a classic group
*with members*, the `kip` profile, is not built yet: under `kip` it answers as Kafka does.)"""
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
