"""Classic <-> Streams groups, as Apache Kafka does today (the README's profile table, `kafka` profile):
only an *empty* classic group becomes a Streams group; a StreamsGroupHeartbeat to a classic group
with members gets GROUP_ID_NOT_FOUND and a classic JoinGroup to a Streams group with members gets
INCONSISTENT_GROUP_PROTOCOL, nothing written. KIP-1071's online migration of a classic group
*with members* (profile `kip`) is in test_streams_migration_kip.py."""
from __future__ import annotations

import pytest

from kgroup import Cluster, Coordinator, ErrorCode
from kgroup.assignors.streams import TaskSets
from kgroup.groups.classic import ClassicGroup
from kgroup.groups.metadata_hash import metadata_hash
from kgroup.groups.modern import INITIAL_GROUP_EPOCH
from kgroup.groups.streams import StreamsGroupMember
from kgroup.groups.streams import group as G
from kgroup.groups.streams.configuration import configure
from kgroup.records import GroupMetadata, GroupMetadataKey
from tests.kgroup_testing import commit, join, join_until_member_id
from tests.streams_testing import STATELESS, sgroup, shb, written

E = ErrorCode
#: KAFKA-20268: a new group (one converted from an empty classic group too) is at epoch 1, so
#: its first computed assignment, and its first member, are at epoch 2
FIRST_EPOCH = INITIAL_GROUP_EPOCH + 1


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


def kafka_join_records(cluster: Cluster, at: int = 0) -> list:
    """What Kafka writes when member A (as `shb` sends it) joins an empty classic group "app"
    reading `orders`: the classic group's tombstone first (getOrCreateStreamsGroup), then a
    join's records in Kafka's order, with Kafka's one assignment config."""
    a = StreamsGroupMember("A", client_id="kgroup", client_host="/127.0.0.1", rebalance_timeout_ms=30_000,
                           process_id="p-A")
    tasks = TaskSets.of(active=[("0", p) for p in range(cluster.partitions("orders"))])
    return [GroupMetadata.tombstone(GroupMetadataKey(group="app")),
            G.member_record("app", a), STATELESS.to_record("app"),
            G.group_epoch_record("app", FIRST_EPOCH, metadata_hash(configure(STATELESS, cluster).topics, cluster),
                                 0, {"num.standby.replicas": "0"}),
            G.target_member_record("app", "A", tasks), G.target_epoch_record("app", FIRST_EPOCH, at),
            G.current_assignment_record("app", a.replace(member_epoch=FIRST_EPOCH, assigned=tasks))]


@pytest.mark.parametrize("profile", ["kip", "kafka"])
def test_an_empty_classic_group_converts_at_epoch_1_and_writes_kafkas_records(profile):
    c = Coordinator(cluster=Cluster({"orders": 3}, seed=1), profile=profile,
                    config={"group.streams.initial.rebalance.delay.ms": 0})
    commit(c, "app", {("orders", 0): 5})
    before = c.position
    r = shb(c, "A", 0)
    assert (r.error_code, r.member_epoch) == (E.none, FIRST_EPOCH)
    assert [c.log.entry_at(i).record for i in range(before, c.position)] == kafka_join_records(c.cluster, c.now())


@pytest.mark.parametrize("profile", ["kip", "kafka"])
def test_kafkas_records_of_a_converted_group_load_and_continue_without_a_bump(profile):
    # Kafka's log: the classic group as JoinGroup created it (then emptied), and the conversion.
    cluster = Cluster({"orders": 3}, seed=1)
    log = [ClassicGroup("app", protocol_type="consumer").empty_metadata_record(0), *kafka_join_records(cluster)]
    c = Coordinator.load(log, cluster=cluster, profile=profile)
    assert (sgroup(c).group_epoch, sgroup(c).assignment_epoch) == (FIRST_EPOCH, FIRST_EPOCH)
    before = c.position
    r = shb(c, "A", FIRST_EPOCH)
    assert (r.error_code, r.member_epoch, r.active_tasks) == (E.none, FIRST_EPOCH, None)
    assert c.position == before
