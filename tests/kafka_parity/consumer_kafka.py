"""Kafka's GroupMetadataManagerTestContext for consumer groups, in kgroup's terms.

- `mock_assignor` is Kafka's MockPartitionAssignor("range"): the target assignment is what the
  test prepares (kgroup's `FixedAssignor` under the name "range").
- `loaded(...)` is `ConsumerGroupBuilder` + `context.replay`: the group is built from the records
  Kafka's GroupCoordinatorRecordHelpers would write, and a coordinator is loaded from them.
- `hb(...)` sends one ConsumerGroupHeartbeat, `answer(...)` reads it back as Kafka's test compares
  it, and `written(...)` lists the records a step wrote, in order.
"""
from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from typing import Any

import pytest

from kgroup import Cluster, Coordinator
from kgroup import records as R
from kgroup.assignors import SERVER_ASSIGNORS, FixedAssignor
from kgroup.assignors.api import ServerAssignor
from kgroup.groups.consumer import ClassicMemberMetadata, ConsumerGroup, ConsumerGroupMember, ResolvedRegularExpression
from kgroup.groups.consumer import group as G
from kgroup.groups.metadata_hash import metadata_hash
from kgroup.groups.modern import MemberState
from kgroup.protocol import ms, request
from kafka_answers import HEARTBEAT_INTERVAL_MS, SESSION_TIMEOUT_MS, answer, ok, written  # noqa: F401  (re-exported)

PROFILES = ["kip", "kafka"]
#: what the request context says when a test does not set it (Kafka's DEFAULT_CLIENT_ID/ADDRESS)
CLIENT_ID, CLIENT_HOST = "kgroup", "/127.0.0.1"


class MockAssignor:
    """Kafka's MockPartitionAssignor: `prepare` the next group assignment (member -> {topic: parts})."""

    def __init__(self) -> None:
        self.assignment: dict[str, dict[uuid.UUID, Iterable[int]]] = {}

    def prepare(self, assignment: Mapping[str, Mapping[uuid.UUID, Iterable[int]]]) -> None:
        self.assignment = {m: dict(a) for m, a in assignment.items()}


@pytest.fixture
def mock_assignor(monkeypatch) -> MockAssignor:
    mock = MockAssignor()
    monkeypatch.setitem(SERVER_ASSIGNORS, "range", lambda: FixedAssignor(mock.assignment))
    return mock


@pytest.fixture
def mock_assignors(monkeypatch) -> dict[str, MockAssignor]:
    """Two of Kafka's mocks, "uniform" (the default: first in the config) and "range"; use with
    `coordinator(..., group_consumer_assignors=["uniform", "range"])`."""
    mocks = {"uniform": MockAssignor(), "range": MockAssignor()}
    for name, mock in mocks.items():
        monkeypatch.setitem(SERVER_ASSIGNORS, name, lambda m=mock: FixedAssignor(m.assignment))
    return mocks


def cluster(**topics: int) -> Cluster:
    return Cluster(topics or {"foo": 6, "bar": 3}, seed=11)


def coordinator(profile: str, clu: Cluster | None = None, records: list | None = None, **config: Any) -> Coordinator:
    """A coordinator with the mock assignor only (Kafka's CONSUMER_GROUP_ASSIGNORS_CONFIG), loaded
    from `records` when given."""
    conf = {"group.consumer.assignors": ["range"], **{k.replace("_", "."): v for k, v in config.items()}}
    clu = clu if clu is not None else cluster()
    if records:
        return Coordinator.load(records, cluster=clu, profile=profile, config=conf)
    return Coordinator(clu, config=conf, profile=profile)


def tid(c: Coordinator | Cluster, name: str) -> uuid.UUID:
    return (c.cluster if isinstance(c, Coordinator) else c).topic_id(name)


def with_epochs(assignment: Mapping[uuid.UUID, Iterable[int]], epoch: int) -> dict[uuid.UUID, dict[int, int]]:
    """Kafka's `toAssignmentWithEpochs`: every partition assigned at `epoch`."""
    return {t: {p: epoch for p in ps} for t, ps in assignment.items() if ps}


def member(member_id: str, *, epoch: int = 10, previous: int = 9, state: MemberState = MemberState.STABLE,
           topics: Iterable[str] = ("foo", "bar"), regex: str | None = None, instance: str | None = None,
           rebalance_ms: int = -1, assignor: str | None = "range", assigned: Mapping | None = None,
           pending: Mapping | None = None, assigned_epoch: int | None = None, client_id: str = CLIENT_ID,
           client_host: str = CLIENT_HOST) -> ConsumerGroupMember:
    """Kafka's `ConsumerGroupMember.Builder` as the tests use it; `assigned`/`pending` map topic ids
    to partitions, assigned at `assigned_epoch` (the member epoch unless given)."""
    at = epoch if assigned_epoch is None else assigned_epoch
    return ConsumerGroupMember(
        member_id, instance_id=instance, rebalance_timeout_ms=rebalance_ms, client_id=client_id,
        client_host=client_host, subscribed_topic_names=frozenset(topics), subscribed_topic_regex=regex,
        server_assignor_name=assignor, member_epoch=epoch, previous_member_epoch=previous, state=state,
        assigned_partitions=with_epochs(assigned or {}, at), partitions_pending_revocation=with_epochs(pending or {}, at))


def group_hash(clu: Cluster, *names: str) -> int:
    """Kafka's computeGroupHash of the named topics' hashes."""
    return metadata_hash(set(names), clu)


def group_records(group_id: str, epoch: int, members: Iterable[ConsumerGroupMember] = (),
                  targets: Mapping[str, Mapping] | None = None, assignment_epoch: int | None = None,
                  metadata_hash: int = 0, regexes: Mapping[str, ResolvedRegularExpression] | None = None,
                  assignment_timestamp: int = 0) -> list:
    """Kafka's `ConsumerGroupBuilder.build()`: the records of a group, in its order."""
    members = list(members)
    out = [G.member_record(group_id, m) for m in members]
    out.append(G.group_epoch_record(group_id, epoch, metadata_hash))
    out += [G.regex_record(group_id, r, v) for r, v in (regexes or {}).items()]
    out += [G.target_member_record(group_id, m, frozen(a)) for m, a in (targets or {}).items()]
    out.append(G.target_epoch_record(group_id, epoch if assignment_epoch is None else assignment_epoch,
                                     assignment_timestamp))
    out += [G.current_assignment_record(group_id, m) for m in members]
    return out


def classic_group_records(group_id: str, members: Iterable[tuple], generation: int = 0,
                          protocol: str = "range", client_id: str = "client-id",
                          client_host: str = "client-host") -> list:
    """Kafka's `newGroupMetadataRecord` of a Stable classic group: `members` are (member id,
    instance id, subscription bytes, assignment bytes), each with client "client-id" at
    "client-host", rebalance timeout 10 s and session timeout 5 s, as Kafka's tests make them."""
    V = R.GroupMetadataValue
    members = list(members)
    value = V(protocol_type="consumer", generation=generation, protocol=protocol, leader=members[0][0],
              current_state_timestamp=0,
              members=[V.MemberMetadata(member_id=m, group_instance_id=inst, client_id=client_id,
                                        client_host=client_host, rebalance_timeout=10_000, session_timeout=5000,
                                        subscription=sub, assignment=a) for m, inst, sub, a in members])
    return [R.GroupMetadata(R.GroupMetadataKey(group=group_id), value, 3)]


class NoOpAssignor(ServerAssignor):
    """Kafka's NoOpPartitionAssignor ("no-op"): every member keeps its current target."""
    name = "no-op"

    def assign(self, group_spec, topics):
        return {m: dict(group_spec.member_assignment(m)) for m in group_spec.members}


@pytest.fixture
def noop_assignor(monkeypatch) -> None:
    """Registers Kafka's NoOpPartitionAssignor; use with `coordinator(..., group_consumer_assignors=["no-op"])`."""
    monkeypatch.setitem(SERVER_ASSIGNORS, NoOpAssignor.name, NoOpAssignor)


def classic_member(m: ConsumerGroupMember, session_ms: int, protocols: Iterable[tuple[str, bytes]]) -> ConsumerGroupMember:
    """`m` speaking the classic protocol (Kafka's `setClassicMemberMetadata`): its session timeout and
    the JoinGroup protocols (name, metadata) it supports. It subscribes by name, and Kafka 4.4.0
    writes such a member's regex as "" (its running broker's records), not null."""
    return m.replace(classic_member_metadata=ClassicMemberMetadata(session_ms, tuple(protocols)),
                     subscribed_topic_regex="")


def frozen(assignment: Mapping[uuid.UUID, Iterable[int]]) -> dict[uuid.UUID, frozenset[int]]:
    return {t: frozenset(ps) for t, ps in assignment.items() if ps}


def hb(c: Coordinator, member_id: str, epoch: int, *, group: str = "fooup", topics=None, regex=None, owned=None,
       instance=None, rebalance_ms: int = -1, assignor=None, rack=None, client_id: str = CLIENT_ID):
    """One ConsumerGroupHeartbeat (latest version) with exactly the fields given, as Kafka's
    tests build them; `owned` maps topic ids to partitions (None: the field is not sent)."""
    parts = None if owned is None else [{"topic_id": t, "partitions": sorted(ps)} for t, ps in owned.items()]
    return c.handle(request("ConsumerGroupHeartbeat", 1, group_id=group, member_id=member_id, member_epoch=epoch,
                            instance_id=instance, rack_id=rack, rebalance_timeout=rebalance_ms,
                            subscribed_topic_names=None if topics is None else list(topics),
                            subscribed_topic_regex=regex, server_assignor=assignor, topic_partitions=parts),
                    client_id=client_id)


def join(c: Coordinator, member_id: str, topics=("foo", "bar"), **kw):
    """A (re)join: epoch 0, a rebalance timeout and an empty owned list, as Kafka's tests send it."""
    kw.setdefault("rebalance_ms", 5000)
    kw.setdefault("owned", {})
    return hb(c, member_id, 0, topics=topics, **kw)


def consumer_group(c: Coordinator, group_id: str = "fooup") -> ConsumerGroup:
    g = c.groups[group_id]
    assert isinstance(g, ConsumerGroup)
    return g


def timeout_of(c: Coordinator, key: str) -> int | None:
    """How long from now the timer `key` fires (Kafka's assertSessionTimeout/assertRebalanceTimeout),
    None when there is none."""
    deadline = c.timers.pending().get(key)
    return None if deadline is None else deadline - c.now()


__all__ = ["PROFILES", "CLIENT_ID", "CLIENT_HOST", "HEARTBEAT_INTERVAL_MS", "SESSION_TIMEOUT_MS", "MockAssignor",
           "mock_assignor", "mock_assignors", "cluster", "coordinator", "tid", "with_epochs", "member", "group_hash",
           "group_records", "classic_group_records", "NoOpAssignor", "noop_assignor", "classic_member", "frozen", "hb", "join", "answer", "ok", "written", "consumer_group", "timeout_of"]
