"""Offset commits of consumer and Streams group members, as Kafka trunk validates them (KIP-1251).

Kafka's `ConsumerGroup.validateOffsetCommit` / `StreamsGroup.validateOffsetCommit` (their tests in
`ConsumerGroupTest` / `StreamsGroupTest`) and `OffsetMetadataManager.commitOffset`: the member's epoch
commits every partition; a newer one is STALE_MEMBER_EPOCH; an older one (the member committed
before it heard of its new epoch) commits a partition only if the member holds it (Streams: the
active task the partition feeds), assigned or pending revocation, since that epoch or before. The
per-partition check throws out of Kafka's commit loop, so one refused partition refuses the whole
commit and nothing is written. TxnOffsetCommit answers ILLEGAL_GENERATION where OffsetCommit says
STALE_MEMBER_EPOCH. The seeds say nothing about it: trunk under both profiles.

Kafka calls the group method directly; here the same cases go through `Coordinator.handle`, so
versions without the member fields (OffsetCommit < 7, TxnOffsetCommit < 3) are left out.
"""
from __future__ import annotations

import pytest

from kgroup import Cluster, Coordinator
from kgroup.assignors.streams.api import TaskSets
from kgroup.errors import ErrorCode
from kgroup.groups.streams.topology import Subtopology, Topology
from kgroup.protocol import request

from consumer_kafka import PROFILES, classic_member, coordinator, group_records, member, tid
from streams_kafka import kafka_member, streams_group_records, with_task_epochs

GROUP = "group-foo"
OK, STALE, ILLEGAL = ErrorCode.none, ErrorCode.stale_member_epoch, ErrorCode.illegal_generation
UNKNOWN, UNSUPPORTED = ErrorCode.unknown_member_id, ErrorCode.unsupported_version
OFFSET_COMMIT_VERSIONS = range(7, 11)        # the versions with member id, epoch and instance id
TXN_OFFSET_COMMIT_VERSIONS = range(3, 6)


def by_topic(partitions) -> dict[str, list]:
    """The commit's partitions ((topic, partition) pairs) grouped by topic, each at offset 100 + p."""
    topics: dict[str, list] = {}
    for t, p in partitions:
        topics.setdefault(t, []).append({"partition_index": p, "committed_offset": 100 + p,
                                         "committed_leader_epoch": -1, "committed_metadata": ""})
    return topics


def offset_commit(c, member_id: str, instance_id: str | None, epoch: int, version: int,
                  partitions=(("foo", 0),)) -> list:
    """OffsetCommit of `partitions` ((topic, partition) pairs): the partitions' error codes, in order."""
    topics = by_topic(partitions)
    name = (lambda t: {"topic_id": c.cluster.topic_id(t)}) if version >= 10 else (lambda t: {"name": t})
    r = c.handle(request("OffsetCommit", version, group_id=GROUP, generation_id_or_member_epoch=epoch,
                         member_id=member_id, group_instance_id=instance_id,
                         topics=[{**name(t), "partitions": ps} for t, ps in topics.items()]))
    return [p.error_code for t in r.topics for p in t.partitions]


def txn_offset_commit(c, member_id: str, instance_id: str | None, epoch: int, version: int,
                      partitions=(("foo", 0),)) -> list:
    """TxnOffsetCommit of `partitions`: the partitions' error codes, in order."""
    topics = by_topic(partitions)
    r = c.handle(request("TxnOffsetCommit", version, transactional_id="tx", group_id=GROUP, producer_id=1000,
                         producer_epoch=0, generation_id=epoch, member_id=member_id, group_instance_id=instance_id,
                         topics=[{"name": t, "partitions": ps} for t, ps in topics.items()]))
    return [p.error_code for t in r.topics for p in t.partitions]


def committed_offsets(c, since: int) -> list:
    return [(e.record.key.topic, e.record.key.partition) for e in list(c.log)[since:]
            if type(e.record).__name__ == "OffsetCommit"]


def check_empty_group_commits(commit, empty, version: int) -> None:
    """A commit without member id and epoch passes while the group is empty; a member id does not."""
    assert commit(empty, "", "", -1, version) == [OK]
    assert commit(empty, "member-id", None, 0, version) == [UNKNOWN]


def check_txn_offset_commits(c, version: int) -> None:
    """Kafka's testValidateTransactionalOffsetCommit on a group whose one member, "member-id", is at
    epoch 0."""
    # a commit with an (empty) instance id names a member: not one of this group
    assert txn_offset_commit(c, "", "", -1, version) == [UNKNOWN]
    # the member epoch is stale (newer): TxnOffsetCommit's ILLEGAL_GENERATION
    assert txn_offset_commit(c, "member-id", "", 10, version) == [ILLEGAL]
    assert txn_offset_commit(c, "member-id", "", 0, version) == [OK]
    # TxnOffsetCommit does not require the member's fields
    assert txn_offset_commit(c, "", None, -1, version) == [OK]


def check_offset_commits(c, version: int, classic_member_id: str | None = None) -> None:
    """Kafka's testValidateOffsetCommit on a group whose member "new-protocol-member-id" is at epoch 0
    (in the consumer group's case with a classic member, `classic_member_id`, beside it): a member
    epoch needs OffsetCommit v9+."""
    assert offset_commit(c, "", "", -1, version) == [UNKNOWN]
    assert offset_commit(c, "", None, -1, version) == [UNKNOWN]
    # the member epoch is stale (newer than the member's)
    assert offset_commit(c, "new-protocol-member-id", "", 10, version) == [STALE if version >= 9 else UNSUPPORTED]
    if classic_member_id is not None:
        assert offset_commit(c, classic_member_id, "", 10, version) == [ILLEGAL]
    assert offset_commit(c, "new-protocol-member-id", "", 0, version) == [OK if version >= 9 else UNSUPPORTED]


# --------------------------------------------------------------------------- consumer groups

def consumer_coordinator(profile: str, *members):
    return coordinator(profile, records=group_records(GROUP, 10, members) if members else None)


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("version", TXN_OFFSET_COMMIT_VERSIONS)
def test_validate_transactional_offset_commit_consumer_group(profile, version):
    """Kafka's ConsumerGroupTest.testValidateTransactionalOffsetCommit."""
    check_empty_group_commits(txn_offset_commit, coordinator(profile, records=group_records(GROUP, 10)), version)
    check_txn_offset_commits(consumer_coordinator(profile, member("member-id", epoch=0, previous=0)), version)


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("version", OFFSET_COMMIT_VERSIONS)
def test_validate_offset_commit_consumer_group(profile, version):
    """Kafka's ConsumerGroupTest.testValidateOffsetCommit."""
    check_empty_group_commits(offset_commit, coordinator(profile, records=group_records(GROUP, 10)), version)
    old = classic_member(member("old-protocol-member-id", epoch=0, previous=0), 5000, [("range", b"")])
    c = consumer_coordinator(profile, member("new-protocol-member-id", epoch=0, previous=0), old)
    check_offset_commits(c, version, classic_member_id="old-protocol-member-id")


def lagging_consumer(profile: str, clu: Cluster | None = None) -> Coordinator:
    """Member m1 at epoch 5 holds foo-0 since epoch 3 and foo-1 since epoch 5."""
    c = coordinator(profile, clu)
    m = member("m1", epoch=5, previous=4).replace(assigned_partitions={tid(c, "foo"): {0: 3, 1: 5}})
    return coordinator(profile, c.cluster, records=group_records(GROUP, 5, [m]))


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("version", [9, 10])
def test_consumer_group_offset_commit_with_an_older_epoch_is_checked_per_partition(profile, version):
    """KIP-1251 (Kafka's ConsumerGroup.createAssignmentEpochValidator): an epoch older than the
    member's commits the partitions it holds since that epoch or before."""
    c = lagging_consumer(profile)
    before = len(c.log)
    assert offset_commit(c, "m1", None, 3, version, [("foo", 0)]) == [OK]
    assert committed_offsets(c, before) == [("foo", 0)]
    # a newer epoch is refused at once; the member's own epoch commits anything
    assert offset_commit(c, "m1", None, 6, version) == [STALE]
    assert offset_commit(c, "m1", None, 5, version, [("foo", 5)]) == [OK]


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("partitions", [
    [("foo", 0), ("foo", 1)],   # foo-1 was assigned in epoch 5, after the commit's epoch 4
    [("foo", 0), ("foo", 5)],   # foo-5 is not the member's
    [("foo", 0), ("bar", 0)],   # nor is any partition of bar
])
def test_consumer_group_offset_commit_with_an_older_epoch_refuses_the_whole_commit(profile, partitions):
    """One partition the older epoch may not commit refuses them all (Kafka's validator throws out
    of OffsetMetadataManager.commitOffset): nothing is written."""
    c = lagging_consumer(profile)
    before = len(c.log)
    assert offset_commit(c, "m1", None, 4, 9, partitions) == [STALE, STALE]
    assert committed_offsets(c, before) == []
    # the same through TxnOffsetCommit: ILLEGAL_GENERATION
    assert txn_offset_commit(c, "m1", None, 4, 3, partitions) == [ILLEGAL, ILLEGAL]
    assert len(c.log) == before


@pytest.mark.parametrize("profile", PROFILES)
def test_consumer_group_classic_member_commits_with_an_older_generation_per_partition(profile):
    """A classic member of a consumer group is checked the same way; a refusal is ILLEGAL_GENERATION."""
    c0 = coordinator(profile)
    foo = tid(c0, "foo")
    m = classic_member(member("m1", epoch=5, previous=4).replace(assigned_partitions={foo: {0: 3, 1: 5}}),
                       5000, [("range", b"")])
    c = coordinator(profile, c0.cluster, records=group_records(GROUP, 5, [m]))
    assert offset_commit(c, "m1", None, 4, 8, [("foo", 0)]) == [OK]
    assert offset_commit(c, "m1", None, 4, 8, [("foo", 1)]) == [ILLEGAL]
    assert offset_commit(c, "m1", None, 6, 8, [("foo", 0)]) == [ILLEGAL]


# --------------------------------------------------------------------------- Streams groups

INPUT = Topology(1, (Subtopology("0", source_topics=("input-topic",)),))


def streams_member(member_id: str, epoch: int, active: dict[int, int] | None = None):
    """Kafka's `StreamsGroupMember.Builder(memberId).setMemberEpoch(epoch)` with active tasks of
    subtopology "0" assigned at the given epochs ({partition: assignment epoch})."""
    m = kafka_member(member_id, member_epoch=epoch, previous_member_epoch=max(epoch - 1, 0),
                     assigned=TaskSets(active={"0": frozenset(active)}) if active else TaskSets())
    return with_task_epochs(m, epoch, {("0", p): e for p, e in (active or {}).items()})


def load_streams(profile: str, *members, topology: Topology | None = INPUT) -> Coordinator:
    """A Streams group of `members` at epoch 5 reading "input-topic" (4 partitions), as Kafka's
    StreamsGroupBuilder writes it; "foo" is a topic no subtopology reads."""
    cluster = Cluster({"input-topic": 4, "foo": 1}, seed=3)
    records = streams_group_records(GROUP, 5, members=members, topology=topology)
    return Coordinator.load(records, cluster=cluster, profile=profile)


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("version", TXN_OFFSET_COMMIT_VERSIONS)
def test_validate_transactional_offset_commit(profile, version):
    """Kafka's StreamsGroupTest.testValidateTransactionalOffsetCommit."""
    check_empty_group_commits(txn_offset_commit, load_streams(profile), version)
    check_txn_offset_commits(load_streams(profile, streams_member("member-id", 0)), version)


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("version", OFFSET_COMMIT_VERSIONS)
def test_validate_offset_commit(profile, version):
    """Kafka's StreamsGroupTest.testValidateOffsetCommit: a Streams member commits with v9+."""
    check_empty_group_commits(offset_commit, load_streams(profile), version)
    check_offset_commits(load_streams(profile, streams_member("new-protocol-member-id", 0)), version)


@pytest.mark.parametrize("profile", PROFILES)
def test_validate_offset_commit_with_older_epoch(profile):
    """Kafka's StreamsGroupTest.testValidateOffsetCommitWithOlderEpoch: task 0_0 was assigned in
    epoch 2, after the commit's epoch 1."""
    c = load_streams(profile, streams_member("member-1", 2, {0: 2, 1: 1}))
    before = len(c.log)
    assert offset_commit(c, "member-1", "", 1, 10, [("input-topic", 0)]) == [STALE]
    assert offset_commit(c, "member-1", "", 1, 10, [("input-topic", 1)]) == [OK]
    assert committed_offsets(c, before) == [("input-topic", 1)]


@pytest.mark.parametrize("profile", PROFILES)
def test_validate_offset_commit_with_older_epoch_missing_topology(profile):
    """Kafka's StreamsGroupTest.testValidateOffsetCommitWithOlderEpochMissingTopology."""
    c = load_streams(profile, streams_member("member-1", 2), topology=None)
    assert offset_commit(c, "member-1", "", 1, 10, [("input-topic", 0)]) == [STALE]


@pytest.mark.parametrize("profile", PROFILES)
def test_validate_offset_commit_with_older_epoch_missing_subtopology(profile):
    """Kafka's StreamsGroupTest.testValidateOffsetCommitWithOlderEpochMissingSubtopology: a topic
    no subtopology reads."""
    c = load_streams(profile, streams_member("member-1", 2))
    assert offset_commit(c, "member-1", "", 1, 10, [("foo", 0)]) == [STALE]


@pytest.mark.parametrize("profile", PROFILES)
def test_validate_offset_commit_with_older_epoch_unassigned_partition(profile):
    """Kafka's StreamsGroupTest.testValidateOffsetCommitWithOlderEpochUnassignedPartition."""
    c = load_streams(profile, streams_member("member-1", 2, {0: 1}))
    assert offset_commit(c, "member-1", "", 1, 10, [("input-topic", 1)]) == [STALE]


@pytest.mark.parametrize("profile", PROFILES)
def test_validate_offset_commit_with_older_epoch_valid_assignment(profile):
    """Kafka's StreamsGroupTest.testValidateOffsetCommitWithOlderEpochValidAssignment."""
    c = load_streams(profile, streams_member("member-1", 5, {0: 2, 1: 2}))
    before = len(c.log)
    assert offset_commit(c, "member-1", "", 2, 10, [("input-topic", 0), ("input-topic", 1)]) == [OK, OK]
    assert committed_offsets(c, before) == [("input-topic", 0), ("input-topic", 1)]


@pytest.mark.parametrize("profile", PROFILES)
def test_streams_group_offset_commit_with_an_older_epoch_refuses_the_whole_commit(profile):
    """OffsetMetadataManager.commitOffset: one task the older epoch may not commit refuses the whole
    commit; TxnOffsetCommit says ILLEGAL_GENERATION."""
    c = load_streams(profile, streams_member("member-1", 5, {0: 2, 1: 4}))
    before = len(c.log)
    both = [("input-topic", 0), ("input-topic", 1)]
    assert offset_commit(c, "member-1", "", 3, 9, both) == [STALE, STALE]
    assert txn_offset_commit(c, "member-1", None, 3, 3, both) == [ILLEGAL, ILLEGAL]
    assert len(c.log) == before
