"""A group as Apache Kafka writes it, loaded by kgroup, continues as Kafka would (issue 20, item 5).

Each test builds a settled group of classic, consumer, share or Streams members the way Kafka's
coordinator persists one (Kafka's `GroupCoordinatorRecordHelpers` / `StreamsCoordinatorRecordHelpers`
as its tests' group builders replay them: members, group metadata with the metadata hash Kafka
computes, target assignment and its epoch, current assignments; Kafka's field values, e.g. a
Streams group metadata record holding `num.standby.replicas` alone). A fresh kgroup coordinator
loads those records, and every member sends the heartbeat a settled client sends. Kafka answers
each with the member's epoch and writes nothing: so must kgroup, under both profiles."""
from __future__ import annotations

import hypothesis.strategies as st
from hypothesis import given, settings

from kgroup import Cluster, Coordinator
from kgroup.errors import ErrorCode
from kgroup.groups.consumer import group as CG
from kgroup.groups.consumer.group import ConsumerGroupMember
from kgroup.groups.metadata_hash import metadata_hash
from kgroup.groups.share import group as SG
from kgroup.groups.share.group import InitTopic, ShareGroupMember, StatePartitionMetadata
from kgroup.protocol import request
from kgroup.records import GroupMetadata, GroupMetadataKey, GroupMetadataValue, StreamsGroupMetadata, decode_record
from kgroup_testing import heartbeat, subscription_v0
from streams_kafka import StreamsTopicFixture, kafka_member, streams_group_records

GROUP = "g"
profiles = st.sampled_from(["kip", "kafka"])


@st.composite
def settled(draw, max_members: int = 4):
    """(partitions, epoch, {member: partitions it owns}) of a settled group."""
    partitions = draw(st.integers(1, 8))
    n = draw(st.integers(1, max_members))
    owner = draw(st.lists(st.integers(0, n - 1), min_size=partitions, max_size=partitions))
    epoch = draw(st.integers(2, 60))
    owned = {f"m{i}": sorted(p for p, o in enumerate(owner) if o == i) for i in range(n)}
    return partitions, epoch, owned


def _settled_assignment(group):
    """A settled group's cluster ("orders" and its partitions), the topic's id and each member's
    {topic id: partitions} (empty for a member that owns none)."""
    partitions, _, owned = group
    cluster = Cluster({"orders": partitions}, seed=5)
    tid = cluster.topic_id("orders")
    return cluster, tid, {m: ({tid: frozenset(ps)} if ps else {}) for m, ps in owned.items()}


def _modern_group_records(records_of, cluster: Cluster, epoch: int, members: list, assignment: dict) -> list:
    """A settled KIP-848 or KIP-932 group's records as Kafka writes them (`records_of`: the group
    type's record helpers): members, group epoch with its metadata hash, target assignment and its
    epoch, current assignments."""
    records = [records_of.member_record(GROUP, m) for m in members]
    records.append(records_of.group_epoch_record(GROUP, epoch, metadata_hash(["orders"], cluster)))
    records += [records_of.target_member_record(GROUP, m, a) for m, a in assignment.items()]
    records.append(records_of.target_epoch_record(GROUP, epoch))
    records += [records_of.current_assignment_record(GROUP, m) for m in members]
    return records


def _classic_assignment(partitions: list[int]) -> bytes:
    """ConsumerProtocolAssignment v0 bytes: orders -> partitions, null user data."""
    out = b"\x00\x00" + (1).to_bytes(4, "big") + (6).to_bytes(2, "big") + b"orders"
    out += len(partitions).to_bytes(4, "big") + b"".join(p.to_bytes(4, "big") for p in partitions)
    return out + b"\xff\xff\xff\xff"


@settings(max_examples=30, deadline=None)
@given(group=settled(), profile=profiles)
def test_a_kafka_written_classic_group_continues_without_a_rebalance(group, profile):
    partitions, generation, owned = group
    cluster = Cluster({"orders": partitions}, seed=5)
    V = GroupMetadataValue
    value = V(protocol_type="consumer", generation=generation, protocol="range", leader="m0",
              current_state_timestamp=1_700_000_000_000,
              members=[V.MemberMetadata(member_id=m, group_instance_id=None, client_id="client",
                                        client_host="/127.0.0.1", rebalance_timeout=300_000, session_timeout=45_000,
                                        subscription=subscription_v0("orders"), assignment=_classic_assignment(ps))
                       for m, ps in owned.items()])
    c = Coordinator.load([GroupMetadata(GroupMetadataKey(group=GROUP), value, 3)], cluster=cluster, profile=profile)
    before = len(c.log)

    for m in owned:
        assert heartbeat(c, GROUP, m, generation).error_code == ErrorCode.none
    assert [e.record for e in list(c.log)[before:]] == []
    g = c.groups[GROUP]
    assert (g.generation_id, g.state) == (generation, "Stable")


@settings(max_examples=30, deadline=None)
@given(group=settled(), profile=profiles)
def test_a_kafka_written_consumer_group_continues_without_a_bump(group, profile):
    _, epoch, _ = group
    cluster, _, assignment = _settled_assignment(group)
    members = [ConsumerGroupMember(m, rebalance_timeout_ms=5000, client_id="client", client_host="/127.0.0.1",
                                   subscribed_topic_names=frozenset({"orders"}), server_assignor_name="range",
                                   member_epoch=epoch, previous_member_epoch=epoch - 1,
                                   assigned_partitions={t: dict.fromkeys(ps, epoch) for t, ps in a.items()})
               for m, a in assignment.items()]
    c = Coordinator.load(_modern_group_records(CG, cluster, epoch, members, assignment), cluster=cluster,
                         profile=profile)
    before = len(c.log)

    for m, a in assignment.items():
        r = c.handle(request("ConsumerGroupHeartbeat", 1, group_id=GROUP, member_id=m, member_epoch=epoch,
                             instance_id=None, rack_id=None, rebalance_timeout=-1, subscribed_topic_names=None,
                             subscribed_topic_regex=None, server_assignor=None,
                             topic_partitions=[{"topic_id": t, "partitions": sorted(ps)} for t, ps in a.items()]),
                     client_id="client")
        assert (r.error_code, r.member_epoch, r.assignment) == (ErrorCode.none, epoch, None), r
    assert [e.record for e in list(c.log)[before:]] == []
    g = c.groups[GROUP]
    assert (g.group_epoch, g.assignment_epoch, g.state) == (epoch, epoch, "Stable")


@settings(max_examples=30, deadline=None)
@given(group=settled(), profile=profiles)
def test_a_kafka_written_share_group_continues_without_a_bump(group, profile):
    partitions, epoch, _ = group
    cluster, tid, assignment = _settled_assignment(group)
    members = [ShareGroupMember(m, client_id="client", client_host="/127.0.0.1",
                                subscribed_topic_names=frozenset({"orders"}), member_epoch=epoch,
                                previous_member_epoch=epoch - 1, assigned_partitions=a)
               for m, a in assignment.items()]
    records = _modern_group_records(SG, cluster, epoch, members, assignment)
    # Kafka's share coordinator has initialised every share-partition of the group (record 15).
    records.append(SG.state_metadata_record(GROUP, StatePartitionMetadata(
        initialized={tid: InitTopic("orders", frozenset(range(partitions)))})))
    c = Coordinator.load(records, cluster=cluster, profile=profile)
    before = len(c.log)

    for m in assignment:
        r = c.handle(request("ShareGroupHeartbeat", 1, group_id=GROUP, member_id=m, member_epoch=epoch,
                             rack_id=None, subscribed_topic_names=None), client_id="client")
        assert (r.error_code, r.member_epoch, r.assignment) == (ErrorCode.none, epoch, None), r
    assert [e.record for e in list(c.log)[before:]] == []
    g = c.groups[GROUP]
    assert (g.group_epoch, g.assignment_epoch) == (epoch, epoch)


def _settled_streams_group(group, standbys: str | None):
    """The records of a settled Streams group as Kafka writes them, and the cluster; `standbys`
    None: a group metadata record without LastAssignmentConfigs (from before Kafka 4.2 kept them)."""
    partitions, epoch, owned = group
    fx = StreamsTopicFixture("0", "orders", partitions, seed=5)
    members = [kafka_member(m, member_epoch=epoch, previous_member_epoch=epoch - 1, process_id=f"process-{m}",
                            assigned=fx.tasks(*ps)) for m, ps in owned.items()]
    records = streams_group_records(GROUP, epoch, members=members, topology=fx.topology,
                                    targets={m: fx.tasks(*ps) for m, ps in owned.items()},
                                    metadata_hash=fx.metadata_hash, validated_topology_epoch=0,
                                    assignment_configs={"num.standby.replicas": standbys or "0"})
    if standbys is None:
        i = next(i for i, r in enumerate(records) if type(r) is StreamsGroupMetadata)
        records[i] = records[i].replace(value=records[i].value.replace(last_assignment_configs=None))
    # as a dump holds them: bytes, read back in the layout they were written in (Kafka 4.2+'s)
    return [decode_record(*r.encode()) for r in records], fx.cluster


def _streams_heartbeats(c: Coordinator, epoch: int, owned: dict) -> list:
    """Each member's settled heartbeat: (error, member epoch, active tasks) of the answers."""
    out = []
    for m, ps in owned.items():
        r = c.handle(request("StreamsGroupHeartbeat", 0, group_id=GROUP, member_id=m, member_epoch=epoch,
                             endpoint_information_epoch=0, instance_id=None, rack_id=None, rebalance_timeout=-1,
                             topology=None, active_tasks=[{"subtopology_id": "0", "partitions": ps}] if ps else [],
                             standby_tasks=[], warmup_tasks=[], process_id=None, user_endpoint=None,
                             client_tags=None, task_offsets=None, task_end_offsets=None,
                             shutdown_application=False), client_id="kgroup")
        out.append((r.error_code, r.member_epoch, r.active_tasks))
    return out


@settings(max_examples=30, deadline=None)
@given(group=settled(), profile=profiles, standbys=st.sampled_from(["0", "1"]))
def test_a_kafka_written_streams_group_continues_without_a_bump(group, profile, standbys):
    partitions, epoch, owned = group
    records, cluster = _settled_streams_group(group, standbys)
    # The record holds what the group's configuration said when Kafka wrote it.
    config = {"group.streams.num.standby.replicas": int(standbys)}
    c = Coordinator.load(records, cluster=cluster, profile=profile, config=config)
    before = len(c.log)

    assert _streams_heartbeats(c, epoch, owned) == [(ErrorCode.none, epoch, None)] * len(owned)
    assert [e.record for e in list(c.log)[before:]] == []
    g = c.groups[GROUP]
    assert (g.group_epoch, g.assignment_epoch) == (epoch, epoch)


@settings(max_examples=10, deadline=None)
@given(group=settled(), profile=profiles)
def test_a_streams_group_from_before_kafka_kept_its_assignment_configs_records_them_once(group, profile):
    """A metadata record without LastAssignmentConfigs (null) replays as no configs, as Kafka trunk's
    replay leaves it: the first heartbeat finds them changed and bumps the group epoch once, writing
    them, as Kafka's testStreamsGroupEpochShouldNotIncreaseWithAcceptableRecoveryLagConfigChange shows
    for a group built without them. Kafka 4.2+ always writes them, so its own logs never bump here."""
    partitions, epoch, owned = group
    records, cluster = _settled_streams_group(group, None)
    c = Coordinator.load(records, cluster=cluster, profile=profile)
    before = len(c.log)
    _streams_heartbeats(c, epoch, dict(list(owned.items())[:1]))
    metadata = [e.record for e in list(c.log)[before:] if type(e.record) is StreamsGroupMetadata]
    assert [(r.value.epoch, r.assignment_configs()) for r in metadata] == [(epoch + 1, {"num.standby.replicas": "0"})]
