"""The durable state of a share group's share-partitions, as the group coordinator keeps it:
record 15 (`ShareGroupStatePartitionMetadata`: which share-partitions are initialising, initialised,
being deleted) and the `Persister` it reaches the share coordinator through to initialise and delete
that state (Kafka's GroupMetadataManager / GroupCoordinatorService share-state steps).

The heartbeat (`protocol.py`), the admin APIs (`offsets.py`) and DeleteGroups (`ShareGroup.before_delete`)
all use it; it imports none of them, nor the group module, so the three sit on it without a circle.
"""
from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from kgroup import records as R
from kgroup.errors import ErrorCode, KafkaError
from kgroup.groups.base import GroupType
from kgroup.groups.modern import topic_order
from kgroup.runtime import Result, on_metadata_update

if TYPE_CHECKING:
    from kgroup.coordinator import Coordinator

#: the persister in `Coordinator.soft_state` (see `persister`)
PERSISTER_KEY = "share.persister"


# ---------------------------------------------------------------------------------------
# Record 15

@dataclass(frozen=True)
class InitTopic:
    """A topic of record 15: its name, the partitions and when they were (last) initialised."""

    name: str
    partitions: frozenset[int]
    timestamp: int = -1


@dataclass(frozen=True)
class StatePartitionMetadata:
    """Record 15 (Kafka's `ShareGroupStatePartitionMetadataInfo`): which share-partitions have
    durable state in the share coordinator, which are being initialised, and which deleted."""

    initializing: Mapping[uuid.UUID, InitTopic] = field(default_factory=dict)
    initialized: Mapping[uuid.UUID, InitTopic] = field(default_factory=dict)
    #: topic id -> topic name
    deleting: Mapping[uuid.UUID, str] = field(default_factory=dict)

    def partitions(self, which: str = "initialized") -> dict[uuid.UUID, frozenset[int]]:
        return {t: v.partitions for t, v in getattr(self, which).items()}


def state_metadata_record(group_id: str, sm: StatePartitionMetadata) -> Any:
    V = R.ShareGroupStatePartitionMetadataValue

    def infos(topics: Mapping[uuid.UUID, InitTopic]) -> list:
        return [V.TopicPartitionsInfo(topic_id=t, topic_name=topics[t].name, partitions=sorted(topics[t].partitions))
                for t in topic_order(topics)]
    return R.ShareGroupStatePartitionMetadata(
        R.ShareGroupStatePartitionMetadataKey(group_id=group_id),
        V(initializing_topics=infos(sm.initializing), initialized_topics=infos(sm.initialized),
          deleting_topics=[V.TopicInfo(topic_id=t, topic_name=sm.deleting[t]) for t in topic_order(sm.deleting)]))


def state_metadata_tombstone(group_id: str) -> Any:
    return R.ShareGroupStatePartitionMetadata.tombstone(R.ShareGroupStatePartitionMetadataKey(group_id=group_id))


def state_metadata_from_value(value: Any, now: int) -> StatePartitionMetadata:
    """The record's state; the topics' initialisation time is `now`, the time of the replay, as
    Kafka 4.4.0's replay takes it (the record does not keep it)."""
    def topics(infos: Iterable[Any]) -> dict[uuid.UUID, InitTopic]:
        return {i.topic_id: InitTopic(i.topic_name, frozenset(i.partitions), now) for i in infos}
    return StatePartitionMetadata(topics(value.initializing_topics), topics(value.initialized_topics),
                                  {t.topic_id: t.topic_name for t in value.deleting_topics})


# ---------------------------------------------------------------------------------------
# The share coordinator, as the group coordinator reaches it

def persister(c: "Coordinator") -> Any:
    """The `Persister` the group coordinator initialises and deletes share state with.

    `c.soft_state["share.persister"]` when set (tests and notebooks may put one there);
    otherwise the share coordinator's `CoordinatorPersister(c)`, created once. None when
    no share coordinator is available: durable state is then not initialised."""
    p = c.soft_state.get(PERSISTER_KEY)
    if p is None:
        try:
            from kgroup.groups.share.persister import CoordinatorPersister  # the share-coordinator part
        except ImportError:
            return None
        p = c.soft_state[PERSISTER_KEY] = CoordinatorPersister(c)
    return p


def forget_in_flight(c: "Coordinator", group_id: str, topic_id: uuid.UUID | None = None,
                     partition: int | None = None) -> None:
    """Drop the share-partition leader's in-flight records of the group (soft state)."""
    try:
        from kgroup.groups.share.partition import forget
    except ImportError:
        return  # no share-partition leader in this build: nothing is in flight
    forget(c, group_id, topic_id, partition)


def require_persister(c: "Coordinator") -> Any:
    p = persister(c)
    if p is None:
        raise KafkaError(ErrorCode.coordinator_not_available, "The share coordinator is not available.")
    return p


# ---------------------------------------------------------------------------------------
# Initialising and deleting durable state

def merge_topics(a: Mapping[uuid.UUID, InitTopic], b: Mapping[uuid.UUID, InitTopic]) -> dict[uuid.UUID, InitTopic]:
    """Kafka's `combineInitMaps`: partitions united, name and timestamp from `b` where it has the topic."""
    out = dict(a)
    for t, v in b.items():
        old = out.get(t)
        out[t] = InitTopic(v.name, v.partitions | (old.partitions if old else frozenset()), v.timestamp)
    return out


def _subtract(topics: Mapping[uuid.UUID, InitTopic], done: Mapping[uuid.UUID, Iterable[int]]) -> dict[uuid.UUID, InitTopic]:
    out = {}
    for t, v in topics.items():
        left = v.partitions - frozenset(done.get(t, ()))
        if left:
            out[t] = InitTopic(v.name, left, v.timestamp)
    return out


def initialize_share_state(c: "Coordinator", group_id: str, state_epoch: int, topics: Mapping[uuid.UUID, InitTopic],
                           start_offsets: Mapping[tuple[uuid.UUID, int], int] | None = None,
                           codes: dict[tuple[uuid.UUID, int], ErrorCode] | None = None) -> Result | None:
    """InitializeShareGroupState for the share-partitions, then record 15: the ones that
    succeeded move from initializing to initialized (Kafka's `initializeShareGroupState`),
    the ones that failed leave initializing (`uninitializeShareGroupState`). Each answer is
    put in `codes` when given."""
    p = persister(c)
    group = c.groups.get(group_id)
    if p is None or getattr(group, "type", None) != GroupType.SHARE:
        return None
    ok: dict[uuid.UUID, set[int]] = {}
    failed: dict[uuid.UUID, set[int]] = {}
    for tid in topic_order(topics):
        for part in sorted(topics[tid].partitions):
            offset = -1 if start_offsets is None else start_offsets.get((tid, part), -1)
            code = p.initialize_state(group_id, tid, part, state_epoch, offset)
            if codes is not None:
                codes[(tid, part)] = code
            (ok if code == ErrorCode.none else failed).setdefault(tid, set()).add(part)
    sm = group.state_metadata
    done = {t: InitTopic(topics[t].name, frozenset(ps), topics[t].timestamp) for t, ps in ok.items()}
    new = StatePartitionMetadata(_subtract(_subtract(sm.initializing, ok), failed), merge_topics(sm.initialized, done),
                                 {t: n for t, n in sm.deleting.items() if t not in ok})
    if new == sm:
        return None
    return Result(records=[state_metadata_record(group_id, new)])


def state_partitions(c: "Coordinator", sm: StatePartitionMetadata,
                     topics: Mapping[uuid.UUID, str]) -> dict[uuid.UUID, list[int]]:
    """The share-partitions of `topics` the group has state for (initialised or initialising); all
    the topic's partitions for a topic left deleting by a delete that did not finish."""
    out = {}
    for tid in topic_order(topics):
        parts = set(sm.initialized[tid].partitions if tid in sm.initialized else ()) | \
            set(sm.initializing[tid].partitions if tid in sm.initializing else ())
        if not parts and tid in sm.deleting and topics[tid] in c.cluster:
            parts = set(range(c.cluster.partitions(topics[tid])))
        out[tid] = sorted(parts)
    return out


def delete_share_state(c: "Coordinator", group_id: str, topics: Mapping[uuid.UUID, str],
                       partitions: Mapping[uuid.UUID, list[int]] | None = None) -> dict[uuid.UUID, ErrorCode]:
    """DeleteShareGroupState for every share-partition of `topics` the group has state for
    (`partitions`, by default `state_partitions` now); the first error of each topic."""
    p = require_persister(c)
    if partitions is None:
        partitions = state_partitions(c, c.groups[group_id].state_metadata, topics)
    errors: dict[uuid.UUID, ErrorCode] = {}
    for tid in topic_order(topics):
        errors[tid] = ErrorCode.none
        for part in partitions.get(tid, ()):
            forget_in_flight(c, group_id, tid, part)
            code = p.delete_state(group_id, tid, part)
            if code != ErrorCode.none and errors[tid] == ErrorCode.none:
                errors[tid] = code
    return errors


class WithStateMetadata(Protocol):
    """What the deletion of a group's share state reads of it (a `ShareGroup`)."""

    group_id: str
    state_metadata: "StatePartitionMetadata"


def delete_request(c: "Coordinator", group: WithStateMetadata) -> tuple[list, dict[uuid.UUID, str]]:
    """Kafka's `shareGroupBuildPartitionDeleteRequest`: the topics whose share-partitions a deleted
    group must forget (initialised, initialising, and those still being deleted whose topic the
    cluster still has), and record 15 with every one of them, and those only, deleting.
    ([], {}) when there is nothing to delete. Their partitions: `state_partitions`, taken before
    that record is written."""
    sm = group.state_metadata
    topics = {t: v.name for t, v in sm.initialized.items()}
    topics.update({t: v.name for t, v in sm.initializing.items()})
    # a topic still being deleted is deleted again, unless it is gone from the cluster
    # (Kafka finds its partitions in the metadata image)
    topics.update({t: n for t, n in sm.deleting.items() if n in c.cluster and c.cluster.topic_id(n) == t})
    if not topics:
        return [], {}
    return [state_metadata_record(group.group_id, StatePartitionMetadata({}, {}, topics))], topics


def delete_group_state(c: "Coordinator", group_id: str, topics: Mapping[uuid.UUID, str],
                       partitions: Mapping[uuid.UUID, list[int]] | None = None) -> ErrorCode:
    """The share coordinator deletes the group's share-partitions of `topics` (Kafka's persister
    `deleteState` of a DeleteGroups): the first error, or NONE."""
    errors = delete_share_state(c, group_id, topics, partitions)
    forget_in_flight(c, group_id)
    return next((code for code in errors.values() if code != ErrorCode.none), ErrorCode.none)


def before_delete_group(c: "Coordinator", group: WithStateMetadata) -> list:
    """A share group deleted in one go (the periodic clean-up, kip profile): its durable state is
    deleted first, then record 15 marks it deleting; an error keeps the group."""
    records, topics = delete_request(c, group)
    if topics:
        code = delete_group_state(c, group.group_id, topics)
        if code != ErrorCode.none:
            raise KafkaError(code, "The share coordinator did not delete the share-group state.")
    return records


@on_metadata_update
def forget_deleted_topics(c: "Coordinator", deleted: Mapping) -> Result | None:
    """Kafka's `maybeCleanupShareGroupState`: when topics are deleted from the cluster, each share
    group of a partition led here whose record 15 names one of them writes record 15 without
    them (initialising, initialised or deleting: the share coordinator drops their state itself)."""
    records = []
    for group in list(c.groups.values()) if deleted else ():
        if group.type != GroupType.SHARE or c.partition_for(group.group_id) not in c.hosted_partitions:
            continue
        sm = group.state_metadata
        if deleted.keys().isdisjoint(sm.initializing.keys() | sm.initialized.keys() | sm.deleting.keys()):
            continue
        records.append(state_metadata_record(group.group_id, StatePartitionMetadata(
            {t: v for t, v in sm.initializing.items() if t not in deleted},
            {t: v for t, v in sm.initialized.items() if t not in deleted},
            {t: n for t, n in sm.deleting.items() if t not in deleted})))
    return Result(records=records) if records else None


__all__ = ["InitTopic", "StatePartitionMetadata", "state_metadata_record", "state_metadata_tombstone",
           "state_metadata_from_value", "PERSISTER_KEY", "persister", "require_persister", "merge_topics",
           "initialize_share_state", "forget_in_flight", "state_partitions", "delete_share_state", "delete_request", "delete_group_state",
           "before_delete_group", "forget_deleted_topics"]
