"""Committed offsets: OffsetCommit, OffsetFetch (incl. KIP-709 batches), OffsetDelete,
TxnOffsetCommit with commit/abort markers, and offset expiration.

Handlers only read state and return `Result(response, records)`; `replay_*` is the only
code that changes the offsets (as Kafka's OffsetMetadataManager). Groups are asked to
validate through the `Group.validate_offset_*` hooks, so each group type brings its own
rules (generation/member checks for classic groups, member epochs for KIP-848).
"""
from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kgroup.errors import ErrorCode, KafkaError
from kgroup.groups.base import CommitPartitionValidator, OffsetCommitContext
from kgroup.protocol import get, ms
from kgroup.records import ZERO_UUID, LegacyOffsetCommit, OffsetCommit, OffsetCommitKey, OffsetCommitValue
from kgroup.runtime import HANDLERS, Result, on_metadata_update, replays, simple_group

if TYPE_CHECKING:
    from kgroup.coordinator import Coordinator

#: OffsetFetch answers this offset for partitions without a committed offset.
INVALID_OFFSET = -1
TopicPartition = tuple[str, int]


@dataclass(frozen=True)
class OffsetAndMetadata:
    """A committed offset as replayed from an OffsetCommit record."""

    offset: int
    leader_epoch: int  # -1 when unknown
    metadata: str
    commit_timestamp: int
    expire_timestamp: int | None
    #: log offset of the record that committed it (transactions keep the newest)
    record_offset: int = -1

    @classmethod
    def from_value(cls, value: Any, record_offset: int) -> "OffsetAndMetadata":
        expire = getattr(value, "expire_timestamp", -1)
        return cls(
            offset=value.offset,
            leader_epoch=getattr(value, "leader_epoch", -1),
            metadata=value.metadata,
            commit_timestamp=value.commit_timestamp,
            expire_timestamp=None if expire is None or expire < 0 else expire,
            record_offset=record_offset,
        )


class OffsetStore:
    """Committed offsets per group, and transactional offsets pending per producer id."""

    def __init__(self) -> None:
        self.committed: dict[str, dict[TopicPartition, OffsetAndMetadata]] = {}
        # producer id -> group -> partition -> offset
        self.pending: dict[int, dict[str, dict[TopicPartition, OffsetAndMetadata]]] = {}
        # (producer id, group) -> the __consumer_offsets partition its pending offsets were written
        # to: a marker settles only what was written on its own partition, as each of Kafka's
        # coordinator shards (one per partition) sees only its own markers.
        self.pending_partition: dict[tuple[int, str], int | None] = {}

    def forget_group(self, group_id: str) -> None:
        """Drop the group's offsets, committed and pending (its partition is unloaded)."""
        self.committed.pop(group_id, None)
        for groups in self.pending.values():
            groups.pop(group_id, None)
        for key in [k for k in self.pending_partition if k[1] == group_id]:
            del self.pending_partition[key]

    # -- reads --------------------------------------------------------------------
    def get(self, group_id: str, topic: str, partition: int) -> OffsetAndMetadata | None:
        return self.committed.get(group_id, {}).get((topic, partition))

    def group_offsets(self, group_id: str) -> dict[TopicPartition, OffsetAndMetadata]:
        return self.committed.get(group_id, {})

    def has_pending(self, group_id: str, topic: str | None = None, partition: int | None = None) -> bool:
        for groups in self.pending.values():
            offsets = groups.get(group_id)
            if offsets and (topic is None or (topic, partition) in offsets):
                return True
        return False

    # -- replay -------------------------------------------------------------------
    def replay_commit(self, key: Any, value: Any, *, record_offset: int, producer_id: int, transactional: bool,
                      log_partition: int | None = None) -> None:
        tp = (key.topic, key.partition)
        if transactional:
            if value is None:  # Kafka never writes transactional tombstones; ignore like it does
                return
            self.pending.setdefault(producer_id, {}).setdefault(key.group, {})[tp] = \
                OffsetAndMetadata.from_value(value, record_offset)
            self.pending_partition[(producer_id, key.group)] = log_partition
        elif value is None:
            offsets = self.committed.get(key.group)
            if offsets is not None:
                offsets.pop(tp, None)
                if not offsets:
                    del self.committed[key.group]
            # A tombstone also drops the group's pending transactional offsets of the partition
            # (Kafka's OffsetMetadataManager.replay, through openTransactionsByGroup).
            for groups in self.pending.values():
                pending = groups.get(key.group)
                if pending is not None:
                    pending.pop(tp, None)
        else:
            self.committed.setdefault(key.group, {})[tp] = OffsetAndMetadata.from_value(value, record_offset)

    def replay_marker(self, producer_id: int, commit: bool, log_partition: int | None = None) -> None:
        """A COMMIT/ABORT marker for `producer_id` on `log_partition` (None: every partition)."""
        groups = self.pending.get(producer_id)
        if not groups:
            return
        settled = {}
        for group_id in list(groups):
            written_on = self.pending_partition.get((producer_id, group_id))
            if log_partition is None or written_on is None or written_on == log_partition:
                settled[group_id] = groups.pop(group_id)
                self.pending_partition.pop((producer_id, group_id), None)
        if not groups:
            del self.pending[producer_id]
        if not commit:
            return
        for group_id, offsets in settled.items():
            committed = self.committed.setdefault(group_id, {})
            for tp, oam in offsets.items():
                current = committed.get(tp)
                # Keep the offset written last in the log (Kafka compares record offsets).
                if current is None or oam.record_offset > current.record_offset:
                    committed[tp] = oam

    def remove_group(self, group_id: str) -> None:
        self.committed.pop(group_id, None)


def offset_commit_record(group_id: str, topic: str, partition: int, offset: int, leader_epoch: int,
                         metadata: str, now: int, expire_timestamp: int | None,
                         topic_id: uuid.UUID | None = None) -> OffsetCommit:
    """The record Kafka writes for one committed partition: value v1 when an expire
    timestamp was asked for (OffsetCommit v2-v4 retention), v4 otherwise, carrying the topic id
    the cluster's metadata held for the name (absent: the zero id, left out of the bytes), as
    Kafka 4.4.0 writes it."""
    key = OffsetCommitKey(group=group_id, topic=topic, partition=partition)
    if expire_timestamp is not None:
        value = OffsetCommitValue(offset=offset, metadata=metadata, commit_timestamp=now, expire_timestamp=expire_timestamp)
        return OffsetCommit(key, value, version=1)
    value = OffsetCommitValue(offset=offset, leader_epoch=leader_epoch, metadata=metadata, commit_timestamp=now,
                              topic_id=topic_id if topic_id is not None else ZERO_UUID)
    return OffsetCommit(key, value, version=4)


def offset_tombstone(group_id: str, topic: str, partition: int) -> OffsetCommit:
    """The record that deletes one committed offset."""
    return OffsetCommit.tombstone(OffsetCommitKey(group=group_id, topic=topic, partition=partition))


class OffsetsManager:
    """The offset APIs of one coordinator. State: `store`; groups are read from the coordinator."""

    def __init__(self, coordinator: "Coordinator") -> None:
        self.c = coordinator
        self.store = OffsetStore()

    # -- helpers ------------------------------------------------------------------
    def _topic_name(self, topic: Any, version: int) -> tuple[str | None, Any]:
        """(name, topic id) of a request topic; v10+ name topics by id."""
        topic_id = get(topic, "topic_id")
        if version >= 10:
            try:
                return self.c.cluster.topic_name(topic_id), topic_id
            except KeyError:
                return None, topic_id
        return topic.name, topic_id

    def _topic_id(self, name: str) -> Any:
        return self.c.cluster.topic_id(name) if name in self.c.cluster else None

    def _validate_commit(self, group_id: str, ctx: OffsetCommitContext) -> CommitPartitionValidator | None:
        group = self.c.groups.get(group_id)
        if group is None:
            if ctx.generation_id_or_member_epoch < 0:
                # A standalone commit creates a "simple" group; replay of the record does it.
                group = simple_group(group_id)
            elif ctx.api_version >= 9 and not ctx.is_transactional:
                raise KafkaError(ErrorCode.group_id_not_found, f"group {group_id!r} does not exist")
            else:
                raise KafkaError(ErrorCode.illegal_generation, f"group {group_id!r} does not exist")
        return group.validate_offset_commit(ctx)

    # -- OffsetCommit and TxnOffsetCommit ---------------------------------------------
    def offset_commit(self, req: Any, version: int) -> Result:
        retention = get(req, "retention_time")  # v2-v4 only
        retention_ms = ms(retention) if retention is not None else -1
        return self._commit(req, version, generation=get(req, "generation_id_or_member_epoch", -1),
                            transactional=False, retention_ms=retention_ms)

    def txn_offset_commit(self, req: Any, version: int) -> Result:
        result = self._commit(req, version, generation=get(req, "generation_id", -1), transactional=True)
        if result.records:
            result.producer_id, result.producer_epoch, result.transactional = req.producer_id, req.producer_epoch, True
        return result

    def _commit(self, req: Any, version: int, *, generation: int, transactional: bool, retention_ms: int = -1) -> Result:
        """Both commit APIs: validate the group once, then one record per good partition."""
        group_id = req.group_id
        ctx = OffsetCommitContext(member_id=get(req, "member_id", "") or "",
                                  group_instance_id=get(req, "group_instance_id"),
                                  generation_id_or_member_epoch=generation,
                                  is_transactional=transactional, api_version=version)
        try:
            if not group_id:
                raise KafkaError(ErrorCode.invalid_group_id, "the group id is empty")
            self.c.check_coordinator(group_id)
            if transactional and req.producer_id < 0:
                # Kafka verifies the transaction (KIP-890) once the group id is valid and the
                # partition led here, before the group is looked at: no transactional id maps
                # to producer id -1, so the transaction coordinator answers INVALID_PRODUCER_ID_MAPPING
                # (GroupCoordinatorService.commitTransactionalOffsets, TransactionCoordinator.
                # handleVerifyPartitionsInTransaction)
                raise KafkaError(ErrorCode.invalid_producer_id_mapping, "no transaction has producer id -1")
            check = self._validate_commit(group_id, ctx)
        except KafkaError as e:
            return self._refused(req, e, transactional)
        group = self.c.groups.get(group_id)
        if group is not None and not transactional:
            group.after_offset_commit(self.c, ctx)

        now = self.c.now()
        expire = now + retention_ms if retention_ms != -1 else None
        max_metadata = self.c.config["offset.metadata.max.bytes"]
        records, errors = [], {}
        for topic in req.topics:
            name, topic_id = self._topic_name(topic, version)
            for p in topic.partitions:
                metadata = p.committed_metadata
                if name is None:
                    errors[(id(topic), p.partition_index)] = ErrorCode.unknown_topic_id
                elif metadata is not None and len(metadata) > max_metadata:
                    errors[(id(topic), p.partition_index)] = ErrorCode.offset_metadata_too_large
                else:
                    if check is not None:
                        try:
                            check(name, topic_id if version >= 10 else self._topic_id(name), p.partition_index)
                        except KafkaError as e:
                            # Kafka's validator throws out of the commit's loop: nothing is written
                            return self._refused(req, e, transactional)
                    records.append(offset_commit_record(
                        group_id, name, p.partition_index, p.committed_offset,
                        get(p, "committed_leader_epoch", -1), metadata or "", now, expire, self._topic_id(name)))
        return Result(self._commit_response(req, lambda t, p: errors.get((id(t), p), ErrorCode.none)), records)

    def _refused(self, req: Any, e: KafkaError, transactional: bool) -> Result:
        """A refused commit: every partition answers the error. TxnOffsetCommit has no
        STALE_MEMBER_EPOCH: Kafka answers ILLEGAL_GENERATION (`validateTransactionalOffsetCommit`)."""
        code = e.code
        if transactional and code == ErrorCode.stale_member_epoch:
            code = ErrorCode.illegal_generation
        return Result(self._commit_response(req, lambda t, p: code))

    def _commit_response(self, req: Any, error_of) -> dict:
        return {"throttle_time": 0, "topics": [
            {"name": get(t, "name", ""), "topic_id": get(t, "topic_id"), "partitions": [
                {"partition_index": p.partition_index, "error_code": error_of(t, p.partition_index)}
                for p in t.partitions]}
            for t in req.topics]}

    # -- OffsetFetch ------------------------------------------------------------------
    def offset_fetch(self, req: Any, version: int) -> Result:
        require_stable = bool(get(req, "require_stable", False))
        if version >= 8:  # KIP-709: one answer per group, each with its own error
            groups = [self.fetch_group(g.group_id, g.topics, require_stable, version,
                                       member_id=get(g, "member_id"), member_epoch=get(g, "member_epoch", -1))
                      for g in req.groups]
            return Result({"throttle_time": 0, "groups": groups})
        group = self.fetch_group(req.group_id, req.topics, require_stable, version)
        if group["error_code"] == ErrorCode.none:
            return Result({"throttle_time": 0, "topics": group["topics"], "error_code": ErrorCode.none})
        if version < 2:
            # v0-1 have no group-level error: Kafka puts it on every requested partition.
            return Result({"topics": [
                {"name": t.name, "partitions": [
                    {"partition_index": p, "committed_offset": INVALID_OFFSET, "committed_leader_epoch": -1,
                     "metadata": "", "error_code": group["error_code"]} for p in t.partition_indexes]}
                for t in (req.topics or ())]})
        return Result({"throttle_time": 0, "topics": [], "error_code": group["error_code"]})

    def fetch_group(self, group_id: str | None, topics: Any, require_stable: bool, version: int, *,
                    member_id: str | None = None, member_epoch: int = -1) -> dict:
        """One group's OffsetFetch answer: {group_id, topics, error_code}."""
        try:
            if group_id is None:
                raise KafkaError(ErrorCode.invalid_group_id, "the group id is null")
            self.c.check_coordinator(group_id)
            group = self.c.groups.get(group_id)
            known = group is not None
            if known:
                try:
                    group.validate_offset_fetch(member_id, member_epoch)
                except KafkaError as e:
                    if e.code != ErrorCode.group_id_not_found:
                        raise
                    known = False  # Kafka answers a dead group like an unknown one
        except KafkaError as e:
            return {"group_id": group_id, "topics": [], "error_code": e.code}
        offsets = self.store.group_offsets(group_id) if known else {}

        def partition(topic: str, p: int, oam: OffsetAndMetadata | None) -> dict:
            if require_stable and self.store.has_pending(group_id, topic, p):
                return {"partition_index": p, "committed_offset": INVALID_OFFSET, "committed_leader_epoch": -1,
                        "metadata": "", "error_code": ErrorCode.unstable_offset_commit}
            if oam is None:
                return {"partition_index": p, "committed_offset": INVALID_OFFSET, "committed_leader_epoch": -1,
                        "metadata": "", "error_code": ErrorCode.none}
            return {"partition_index": p, "committed_offset": oam.offset, "committed_leader_epoch": oam.leader_epoch,
                    "metadata": oam.metadata, "error_code": ErrorCode.none}

        out = []
        if topics is None:  # all partitions with a committed offset
            by_topic: dict[str, list[int]] = defaultdict(list)
            for (t, p) in sorted(offsets):
                by_topic[t].append(p)
            for t, parts in by_topic.items():
                topic_id = self._topic_id(t)
                if version >= 10 and topic_id is None:
                    continue  # a v10 client names topics by id; a deleted topic has none
                out.append({"name": t, "topic_id": topic_id,
                            "partitions": [partition(t, p, offsets[(t, p)]) for p in parts]})
        else:
            # KafkaApis.fetchOffsetsForGroup answers an unknown topic id itself, after the
            # coordinator's topics
            unknown = []
            for topic in topics:
                name, topic_id = self._topic_name(topic, version)
                if name is None:
                    unknown.append({"name": "", "topic_id": topic_id, "partitions": [
                        {"partition_index": p, "committed_offset": INVALID_OFFSET, "committed_leader_epoch": -1,
                         "metadata": "", "error_code": ErrorCode.unknown_topic_id} for p in topic.partition_indexes]})
                    continue
                out.append({"name": name, "topic_id": topic_id, "partitions": [
                    partition(name, p, offsets.get((name, p))) for p in topic.partition_indexes]})
            out += unknown
        return {"group_id": group_id, "topics": out, "error_code": ErrorCode.none}

    # -- OffsetDelete -------------------------------------------------------------------
    def offset_delete(self, req: Any, version: int) -> Result:
        def response(error: ErrorCode, partition_error=lambda t, p: ErrorCode.none) -> dict:
            return {"error_code": error, "throttle_time": 0, "topics": [
                {"name": t.name, "partitions": [
                    {"partition_index": p.partition_index, "error_code": partition_error(t, p)}
                    for p in t.partitions]} for t in req.topics]}
        if not req.group_id:  # Kafka: GroupCoordinatorServiceTest.testDeleteOffsetsInvalidGroupId
            return Result({"error_code": ErrorCode.invalid_group_id, "throttle_time": 0, "topics": []})
        try:
            self.c.check_coordinator(req.group_id)
            group = self.c.groups.get(req.group_id)
            if group is None:
                raise KafkaError(ErrorCode.group_id_not_found, f"group {req.group_id!r} does not exist")
            group.validate_offset_delete()
        except KafkaError as e:
            return Result(response(e.code))
        offsets = self.store.group_offsets(req.group_id)
        records = []
        for t in req.topics:
            if group.is_subscribed_to_topic(t.name):
                continue
            for p in t.partitions:
                if (t.name, p.partition_index) in offsets:
                    records.append(offset_tombstone(req.group_id, t.name, p.partition_index))
        subscribed = lambda t, p: (ErrorCode.group_subscribed_to_topic  # noqa: E731
                                   if group.is_subscribed_to_topic(t.name) else ErrorCode.none)
        return Result(response(ErrorCode.none, subscribed), records)

    # -- used by DeleteGroups and expiration -------------------------------------------
    def tombstones_for_group(self, group_id: str) -> list:
        return [offset_tombstone(group_id, t, p) for (t, p) in sorted(self.store.group_offsets(group_id))]

    def expired_offsets(self, group_id: str, now: int) -> tuple[list, bool]:
        """Tombstones for `group_id`'s expired offsets, and whether none would remain."""
        group = self.c.groups.get(group_id)
        retention_ms = self.c.config["offsets.retention.minutes"] * 60_000
        offsets = self.store.group_offsets(group_id)
        expired = []
        for (topic, p), oam in sorted(offsets.items()):
            if self.store.has_pending(group_id, topic, p):
                continue
            if group is not None and group.is_subscribed_to_topic(topic):
                continue
            if oam.expire_timestamp is not None:
                is_expired = now >= oam.expire_timestamp
            else:
                base = group.offset_expiration_base(oam.commit_timestamp) if group else oam.commit_timestamp
                is_expired = base is not None and now - base >= retention_ms
            if is_expired:
                expired.append(offset_tombstone(group_id, topic, p))
        all_gone = len(expired) == len(offsets) and not self.store.has_pending(group_id)
        return expired, all_gone


# ---------------------------------------------------------------------------------------
# Registration: the offset APIs and the replay of offset commits.

def _offsets_api(method: Callable[[OffsetsManager, Any, int], Result]) -> Callable[["Coordinator", Any, int], Result]:
    return lambda c, req, version: method(c.offsets, req, version)


HANDLERS.update({
    8: _offsets_api(OffsetsManager.offset_commit),
    9: _offsets_api(OffsetsManager.offset_fetch),
    28: _offsets_api(OffsetsManager.txn_offset_commit),
    47: _offsets_api(OffsetsManager.offset_delete),
})


@on_metadata_update
def delete_offsets_of_deleted_topics(c: "Coordinator", deleted: Mapping[Any, str]) -> Result | None:
    """Kafka's `onPartitionsDeleted`: the offsets of a deleted topic's partitions are deleted, in
    every group led here: a tombstone per committed offset, then one per pending transactional
    offset (Kafka walks both stores, so a partition in both gets two)."""
    names = set(deleted.values())
    if not names:
        return None
    store, records = c.offsets.store, []

    def tombstones(by_group: Mapping[str, Mapping[TopicPartition, Any]]) -> None:
        for group_id, offsets in by_group.items():
            if c.partition_for(group_id) in c.hosted_partitions:
                records.extend(offset_tombstone(group_id, t, p) for (t, p) in offsets if t in names)

    tombstones(store.committed)
    for by_group in store.pending.values():
        tombstones(by_group)
    return Result(records=records) if records else None


@replays(OffsetCommit, LegacyOffsetCommit)
def replay_offset_commit(c: "Coordinator", entry: Any) -> None:
    record = entry.record
    key = record.key
    if record.value is not None and key.group not in c.groups:
        # A commit without group membership makes a "simple" (empty classic) group, as Kafka's
        # OffsetMetadataManager asks for `getOrMaybeCreateClassicGroup`.
        c.groups[key.group] = simple_group(key.group)
    c.offsets.store.replay_commit(key, record.value, record_offset=entry.offset, producer_id=entry.producer_id,
                                  transactional=entry.is_transactional, log_partition=entry.partition)
