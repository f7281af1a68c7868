"""Kafka's GroupMetadataManagerTestContext for share groups, in kgroup's terms.

- `MockAssignor` is Kafka's MockPartitionAssignor: the target assignment is what the test
  prepares (kgroup's `FixedAssignor`), put where the share package looks for a stand-in for the
  simple assignor (`soft_state["share.assignor"]`), under the mock's name.
- `group_records(...)` is `ShareGroupBuilder.build()` + `context.replay`: the records Kafka's
  GroupCoordinatorRecordHelpers would write, built with kgroup's share record builders; a
  coordinator is loaded from them (`coordinator(..., records)`).
- `hb(...)` sends one ShareGroupHeartbeat from Kafka's default client id and address, `answer(...)`
  reads it back as Kafka's assertResponseEquals compares it, `written(...)` lists the records a
  step wrote, in order.
- `initialized(...)` / `deleted(...)` are what the share coordinator was asked to initialise or
  delete (Kafka's verifyShareGroupHeartbeatInitializeRequest / verifyShareGroupDeleteRequest): the
  group coordinator's persister calls, recorded by the share tests' `RecordingPersister`.
"""
from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from typing import Any

from kgroup import Cluster, Coordinator, ErrorCode
from kgroup import records as R
from kgroup.assignors import FixedAssignor
from kgroup.clock import ManualClock
from kgroup.groups.metadata_hash import metadata_hash
from kgroup.groups.modern import MemberState
from kgroup.groups.share import group as G
from kgroup.groups.share.group import InitTopic, ShareGroup, ShareGroupMember, StatePartitionMetadata
from kgroup.groups.share.persister import CoordinatorPersister
from kgroup.groups.share.protocol import ASSIGNOR_KEY, PERSISTER_KEY, session_key
from kgroup.protocol import ms, request
from kafka_answers import HEARTBEAT_INTERVAL_MS, SESSION_TIMEOUT_MS, answer, ok, written  # noqa: F401  (re-exported)
from tests.share.share_testing import RecordingPersister

PROFILES = ["kip", "kafka"]
GROUP = "fooup"
#: Kafka's DEFAULT_CLIENT_ID and DEFAULT_CLIENT_ADDRESS.toString()
CLIENT_ID, CLIENT_HOST = "client", "localhost/127.0.0.1"
#: when a test's coordinator starts (records that carry a time are built with it)
T0 = 1_700_000_000_000


class MockAssignor:
    """Kafka's MockPartitionAssignor(name): `prepare` the next group assignment (member -> {topic: parts})."""

    def __init__(self, name: str = "share") -> None:
        self.name = name
        self.assignment: dict[str, dict[uuid.UUID, Iterable[int]]] = {}

    def prepare(self, assignment: Mapping[str, Mapping[uuid.UUID, Iterable[int]]]) -> "MockAssignor":
        self.assignment = {m: dict(a) for m, a in assignment.items()}
        return self

    def assign(self, group_spec: Any, topics: Any) -> Any:
        return FixedAssignor(self.assignment).assign(group_spec, topics)


def cluster(topics: Mapping[str, int] | None = None, ids: Mapping[str, uuid.UUID] | None = None) -> Cluster:
    """A cluster of `topics` (name -> partitions), with the given topic ids where named."""
    clu = Cluster({}, seed=13)
    for name, partitions in (topics or {}).items():
        clu.create_topic(name, partitions, topic_id=(ids or {}).get(name))
    return clu


def coordinator(profile: str, clu: Cluster, records: list | None = None, *, assignor: Any = None,
                config: dict | None = None) -> Coordinator:
    """A coordinator at T0 (loaded from `records` when given) whose share coordinator calls are
    recorded, with `assignor` in place of the simple assignor when given."""
    if records:
        c = Coordinator.load(records, cluster=clu, profile=profile, config=config, clock=ManualClock(T0))
    else:
        c = Coordinator(clu, profile=profile, config=config, clock=ManualClock(T0))
    c.soft_state[PERSISTER_KEY] = RecordingPersister(CoordinatorPersister(c))
    if assignor is not None:
        c.soft_state[ASSIGNOR_KEY] = assignor
    return c


def tid(c: Coordinator | Cluster, name: str) -> uuid.UUID:
    return (c.cluster if isinstance(c, Coordinator) else c).topic_id(name)


def frozen(assignment: Mapping[uuid.UUID, Iterable[int]] | None) -> dict[uuid.UUID, frozenset[int]]:
    return {t: frozenset(ps) for t, ps in (assignment or {}).items() if ps}


def member(member_id: str, *, epoch: int = 0, previous: int = 0, topics: Iterable[str] = (),
           assigned: Mapping | None = None, client_id: str = CLIENT_ID, client_host: str = CLIENT_HOST,
           rack: str | None = None) -> ShareGroupMember:
    """Kafka's `ShareGroupMember.Builder` as the tests use it (state STABLE)."""
    return ShareGroupMember(member_id, rack_id=rack, client_id=client_id, client_host=client_host,
                            subscribed_topic_names=frozenset(topics), member_epoch=epoch,
                            previous_member_epoch=previous, state=MemberState.STABLE,
                            assigned_partitions=frozen(assigned))


def group_hash(clu: Cluster, *names: str) -> int:
    """Kafka's computeGroupHash of the named topics' computeTopicHash."""
    return metadata_hash(set(names), clu)


def group_records(group_id: str, epoch: int, members: Iterable[ShareGroupMember] = (),
                  targets: Mapping[str, Mapping] | None = None, assignment_epoch: int | None = None,
                  metadata_hash: int = 0, assignment_timestamp: int = 0) -> list:
    """Kafka's `ShareGroupBuilder.build()`: the records of a group, in its order."""
    members = list(members)
    out = [G.member_record(group_id, m) for m in members]
    out.append(G.group_epoch_record(group_id, epoch, metadata_hash))
    out += [G.target_member_record(group_id, m, frozen(a)) for m, a in (targets or {}).items()]
    out.append(G.target_epoch_record(group_id, epoch if assignment_epoch is None else assignment_epoch,
                                     assignment_timestamp))
    out += [G.current_assignment_record(group_id, m) for m in members]
    return out


def target_epoch_tombstone(group_id: str) -> Any:
    return R.ShareGroupTargetAssignmentMetadata.tombstone(R.ShareGroupTargetAssignmentMetadataKey(group_id=group_id))


def state_record(group_id: str, initializing: Mapping | None = None, initialized: Mapping | None = None,
                 deleting: Mapping[uuid.UUID, str] | None = None, timestamp: int = T0) -> Any:
    """Kafka's `newShareGroupStatePartitionMetadataRecord`: topic id -> (name, partitions) for the
    initialising and initialised share-partitions (added at `timestamp`), topic id -> name for
    the topics being deleted."""
    def infos(topics: Mapping | None) -> dict[uuid.UUID, InitTopic]:
        return {t: InitTopic(name, frozenset(ps), timestamp) for t, (name, ps) in (topics or {}).items()}
    return G.state_metadata_record(group_id, StatePartitionMetadata(infos(initializing), infos(initialized),
                                                                    dict(deleting or {})))


def hb(c: Coordinator, member_id: str, epoch: int, topics: Iterable[str] | None = None, *, group: str = GROUP,
       rack: str | None = None):
    """One ShareGroupHeartbeat with exactly the fields given, from Kafka's default client."""
    return c.handle(request("ShareGroupHeartbeat", 1, group_id=group, member_id=member_id, member_epoch=epoch,
                            rack_id=rack, subscribed_topic_names=None if topics is None else list(topics)),
                    client_id=CLIENT_ID, client_host=CLIENT_HOST)


def calls_since(c: Coordinator, kind: str, since: int = 0) -> list[tuple]:
    return [call for call in c.soft_state[PERSISTER_KEY].calls[since:] if call[0] == kind]


def initialized(c: Coordinator, since: int = 0) -> tuple[set[str], dict[uuid.UUID, set[int]], set[int]]:
    """The InitializeShareGroupState calls since call `since`: (group ids, topic -> partitions,
    state epochs); every start offset is -1, as the heartbeat asks (checked here)."""
    groups, topics, epochs = set(), {}, set()
    for _, group_id, topic_id, partition, state_epoch, start_offset in calls_since(c, "initialize", since):
        assert start_offset == -1
        groups.add(group_id)
        topics.setdefault(topic_id, set()).add(partition)
        epochs.add(state_epoch)
    return groups, topics, epochs


def deleted(c: Coordinator, since: int = 0) -> dict[uuid.UUID, set[int]]:
    """The DeleteShareGroupState calls since call `since`: topic -> partitions."""
    out: dict[uuid.UUID, set[int]] = {}
    for _, _group_id, topic_id, partition in calls_since(c, "delete", since):
        out.setdefault(topic_id, set()).add(partition)
    return out


def accept_deletes(c: Coordinator) -> None:
    """Every DeleteShareGroupState succeeds (recorded, not sent), as Kafka's mocked persister does."""
    recording = c.soft_state[PERSISTER_KEY]

    def delete_state(group_id: str, topic_id: uuid.UUID, partition: int) -> ErrorCode:
        recording.calls.append(("delete", group_id, topic_id, partition))
        return ErrorCode.none
    recording.delete_state = delete_state


def share_group(c: Coordinator, group_id: str = GROUP) -> ShareGroup:
    g = c.groups[group_id]
    assert isinstance(g, ShareGroup)
    return g


def session_timeout(c: Coordinator, member_id: str, group_id: str = GROUP) -> int | None:
    """How long from now the member's session timer fires (Kafka's assertSessionTimeout), None
    when there is none."""
    deadline = c.timers.pending().get(session_key(group_id, member_id))
    return None if deadline is None else deadline - c.now()


def describe(c: Coordinator, *group_ids: str):
    return c.handle(request("ShareGroupDescribe", 1, group_ids=list(group_ids),
                            include_authorized_operations=False)).groups


__all__ = ["PROFILES", "GROUP", "CLIENT_ID", "CLIENT_HOST", "HEARTBEAT_INTERVAL_MS", "SESSION_TIMEOUT_MS", "T0",
           "MockAssignor", "cluster", "coordinator", "tid", "frozen", "member", "group_hash", "group_records",
           "target_epoch_tombstone", "state_record", "hb", "answer", "ok", "written", "calls_since", "initialized",
           "deleted", "accept_deletes", "share_group", "session_timeout", "describe"]
