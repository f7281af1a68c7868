"""The share coordinator (KIP-932): the durable state of share-partitions.

Kafka's share coordinator (`ShareCoordinatorService` + `ShareCoordinatorShard`) is a
coordinator of its own with its own internal topic, `__share_group_state`: the
share-partition leaders persist what must survive a leader move through
InitializeShareGroupState (83), ReadShareGroupState (84), WriteShareGroupState (85),
DeleteShareGroupState (86) and ReadShareGroupStateSummary (87), and it writes them as
ShareSnapshot (type 0, the complete state) and ShareUpdate (type 1, a delta on the last
snapshot) records keyed by the share-partition (group id, topic id, partition).

kgroup keeps the same shape: this module owns the `__share_group_state` log (registered
with `kgroup.runtime.owns_log`: a record goes to the partition Kafka picks,
`abs(hash("<group>:<topicId>:<partition>")) % share.coordinator.state.topic.num.partitions`),
one `ShareCoordinator` component per coordinator (`c.components["share_coordinator"]`)
holding the replayed state, handlers for APIs 83-87 and the replay of both record types
(the only code that changes the state).

The seed (an early KIP-932 draft) says only that the durable state holds the SPSO, the
non-Acquired states and the delivery counts; everything else here follows Kafka.
Every `share.coordinator.cold.partition.snapshot.interval.ms` a timer re-snapshots
share-partitions whose last snapshot is older than that (Kafka's cold-partition snapshots);
it is scheduled once the share coordinator holds some state. Not modelled: pruning the
records older snapshots made redundant (`share.coordinator.state.topic.prune.interval.ms`,
a DeleteRecords on the log).
"""
from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any, NamedTuple

from kgroup.cluster import UnknownTopicError
from kgroup.errors import ErrorCode
from kgroup.groups.share.state_batches import Batch, combine_state_batches
from kgroup.log.partitioner import share_partition_key, share_state_partition_for
from kgroup.records import ShareSnapshot, ShareUpdate
from kgroup.records.records import SHARE_GROUP_STATE
from kgroup.runtime import LogSpec, Result, component, handles, on_loaded, owns_log, replays

__all__ = ["SHARE_COORDINATOR", "SharePartitionKey", "ShareGroupOffset", "ShareCoordinator", "share_coordinator",
           "snapshot_record"]

#: the component's name in `Coordinator.components`
SHARE_COORDINATOR = "share_coordinator"

# Kafka's messages (ShareCoordinatorShard constants and Errors.message()).
NULL_TOPIC_ID = "The topic id cannot be null."
NEGATIVE_PARTITION_ID = "The partition id cannot be a negative number."
WRITE_UNINITIALIZED_SHARE_PARTITION = "Write operation on uninitialized share partition not allowed."
READ_UNINITIALIZED_SHARE_PARTITION = "Read operation on uninitialized share partition not allowed."
COORDINATOR_NOT_AVAILABLE_MESSAGE = "Share coordinator is not available."
_MESSAGES = {
    ErrorCode.fenced_leader_epoch: "The leader epoch in the request is older than the epoch on the broker.",
    ErrorCode.fenced_state_epoch: ("The share coordinator rejected the request because the share-group state "
                                   "epoch did not match."),
    ErrorCode.unknown_topic_or_partition: "This server does not host this topic-partition.",
    ErrorCode.not_coordinator: "This is not the correct coordinator.",
}

# PartitionFactory's defaults for a share-partition the coordinator knows nothing of.
UNINITIALIZED_START_OFFSET = -1
DEFAULT_STATE_EPOCH = 0
DEFAULT_LEADER_EPOCH = 0
UNINITIALIZED_DELIVERY_COMPLETE_COUNT = -1


def _record_partition(record: Any, num_partitions: int) -> int:
    k = record.key
    return share_state_partition_for(k.group_id, k.topic_id, k.partition, num_partitions)


owns_log(LogSpec(SHARE_GROUP_STATE, "share.coordinator.state.topic.num.partitions", _record_partition,
                 "share.coordinator.state.topic.compression.codec"))


class SharePartitionKey(NamedTuple):
    """One share-partition: group id, topic id, partition (Kafka's `SharePartitionKey`)."""

    group_id: str
    topic_id: uuid.UUID
    partition: int

    def coordinator_key(self) -> str:
        """`"<groupId>:<topicId>:<partition>"`, what picks the `__share_group_state` partition."""
        return share_partition_key(self.group_id, self.topic_id, self.partition)


@dataclass(frozen=True)
class ShareGroupOffset:
    """The durable state of one share-partition as the share coordinator holds it
    (Kafka's `ShareGroupOffset`): the last snapshot with the updates since folded in."""

    snapshot_epoch: int
    state_epoch: int
    leader_epoch: int
    #: the share-partition start offset (SPSO); -1 when not initialised
    start_offset: int
    state_batches: tuple[Batch, ...] = ()
    #: KIP-1226: offsets at or above the SPSO whose delivery is complete (-1: unknown)
    delivery_complete_count: int = -1
    create_timestamp: int = 0
    write_timestamp: int = 0

    @classmethod
    def from_snapshot(cls, v: Any) -> "ShareGroupOffset":
        return cls(v.snapshot_epoch, v.state_epoch, v.leader_epoch, v.start_offset, _batches(v.state_batches),
                   v.delivery_complete_count, v.create_timestamp, v.write_timestamp)

    @classmethod
    def from_update(cls, v: Any) -> "ShareGroupOffset":
        # an update carries no state epoch (ShareGroupOffset.fromRecord(ShareUpdateValue))
        return cls(v.snapshot_epoch, -1, v.leader_epoch, v.start_offset, _batches(v.state_batches),
                   v.delivery_complete_count)


def _batches(items: Iterable[Any]) -> tuple[Batch, ...]:
    return tuple(Batch(b.first_offset, b.last_offset, b.delivery_state, b.delivery_count) for b in items)


def snapshot_record(key: SharePartitionKey, o: ShareGroupOffset) -> ShareSnapshot:
    """The ShareSnapshot record holding state `o` of share-partition `key`."""
    V = ShareSnapshot.Value
    return ShareSnapshot(
        ShareSnapshot.Key(group_id=key.group_id, topic_id=key.topic_id, partition=key.partition),
        V(snapshot_epoch=o.snapshot_epoch, state_epoch=o.state_epoch, leader_epoch=o.leader_epoch,
          start_offset=o.start_offset, delivery_complete_count=o.delivery_complete_count,
          create_timestamp=o.create_timestamp, write_timestamp=o.write_timestamp,
          state_batches=[V.StateBatch(first_offset=b.first_offset, last_offset=b.last_offset,
                                      delivery_state=b.delivery_state, delivery_count=b.delivery_count)
                         for b in o.state_batches]))


def _update_record(key: SharePartitionKey, o: ShareGroupOffset) -> ShareUpdate:
    V = ShareUpdate.Value
    return ShareUpdate(
        ShareUpdate.Key(group_id=key.group_id, topic_id=key.topic_id, partition=key.partition),
        V(snapshot_epoch=o.snapshot_epoch, leader_epoch=o.leader_epoch, start_offset=o.start_offset,
          delivery_complete_count=o.delivery_complete_count,
          state_batches=[V.StateBatch(first_offset=b.first_offset, last_offset=b.last_offset,
                                      delivery_state=b.delivery_state, delivery_count=b.delivery_count)
                         for b in o.state_batches]))


def _tombstone(key: SharePartitionKey) -> ShareSnapshot:
    # Kafka always writes the tombstone with the ShareSnapshot key (newShareStateTombstoneRecord)
    return ShareSnapshot.tombstone(ShareSnapshot.Key(group_id=key.group_id, topic_id=key.topic_id,
                                                     partition=key.partition))


class _Refused(Exception):
    """A per-partition error (code and message) the shard answers with."""

    def __init__(self, code: ErrorCode, message: str | None = None) -> None:
        super().__init__(code)
        self.code = code
        self.message = message if message is not None else _MESSAGES.get(code)


class ShareCoordinator:
    """The share coordinator's state, rebuilt by replaying `__share_group_state`
    (Kafka's `ShareCoordinatorShard`). One per `Coordinator`.

    `states`: share-partition -> `ShareGroupOffset`; `leader_epochs` / `state_epochs`: the
    highest epochs seen (what fences older writers); `update_counts`: ShareUpdates since the
    last snapshot (Kafka's `snapshotUpdateCount`).
    `hosted_partitions` are the `__share_group_state` partitions led here (others answer
    NOT_COORDINATOR); `active` False answers COORDINATOR_NOT_AVAILABLE (a share coordinator
    not started yet) -- both are soft settings, like the group coordinator's.
    """

    def __init__(self, coordinator: Any) -> None:
        self.coordinator = coordinator
        self.num_partitions: int = coordinator.config["share.coordinator.state.topic.num.partitions"]
        self.records_per_snapshot: int = coordinator.config["share.coordinator.snapshot.update.records.per.snapshot"]
        self.hosted_partitions: frozenset[int] = frozenset(range(self.num_partitions))
        self.active = True
        self.states: dict[SharePartitionKey, ShareGroupOffset] = {}
        self.leader_epochs: dict[SharePartitionKey, int] = {}
        self.state_epochs: dict[SharePartitionKey, int] = {}
        self.update_counts: dict[SharePartitionKey, int] = {}

    # -- where ------------------------------------------------------------------------
    def partition_for(self, group_id: str, topic_id: uuid.UUID, partition: int) -> int:
        """The `__share_group_state` partition of a share-partition (ShareCoordinatorService.partitionFor)."""
        return share_state_partition_for(group_id, topic_id, partition, self.num_partitions)

    # -- replay (the only code that changes the state) -----------------------------------
    def replay(self, record: Any) -> None:
        """Apply one ShareSnapshot / ShareUpdate record (ShareCoordinatorShard.replay)."""
        k = record.key
        key = SharePartitionKey(k.group_id, k.topic_id, k.partition)
        if record.value is None:  # a tombstone (either key type) forgets the share-partition
            for m in (self.states, self.leader_epochs, self.state_epochs, self.update_counts):
                m.pop(key, None)
            return
        v = record.value
        self._raise_epoch(self.leader_epochs, key, v.leader_epoch)
        if isinstance(record, ShareSnapshot):
            self._raise_epoch(self.state_epochs, key, v.state_epoch)
            self.states[key] = ShareGroupOffset.from_snapshot(v)
            # Kafka resets the count only once it reached the limit
            if self.update_counts.get(key, 0) >= self.records_per_snapshot and key in self.update_counts:
                self.update_counts[key] = 0
        else:
            current = self.states.get(key)
            self.states[key] = ShareGroupOffset.from_update(v) if current is None else _merge(current, v)
            self.update_counts[key] = self.update_counts.get(key, 0) + 1

    @staticmethod
    def _raise_epoch(epochs: dict[SharePartitionKey, int], key: SharePartitionKey, epoch: int) -> None:
        if key not in epochs or epochs[key] < epoch:
            epochs[key] = epoch

    # -- decisions (read the state, return records; never change it) ------------------------
    def _check_key(self, key: SharePartitionKey) -> None:
        if key.topic_id is None:
            raise _Refused(ErrorCode.invalid_request, NULL_TOPIC_ID)
        if key.partition < 0:
            raise _Refused(ErrorCode.invalid_request, NEGATIVE_PARTITION_ID)

    def _check_metadata(self, key: SharePartitionKey) -> None:
        """The topic and partition must exist (the shard's metadata-image check)."""
        cluster = self.coordinator.cluster
        try:
            name = cluster.topic_name(key.topic_id)
        except UnknownTopicError:
            raise _Refused(ErrorCode.unknown_topic_or_partition) from None
        if key.partition >= cluster.partitions(name):
            raise _Refused(ErrorCode.unknown_topic_or_partition)

    def initialize(self, key: SharePartitionKey, state_epoch: int, start_offset: int) -> list[Any]:
        """InitializeShareGroupState: a fresh snapshot (no batches, leader epoch -1); an
        older state epoch than the one held is fenced."""
        self._check_key(key)
        if state_epoch != -1 and self.state_epochs.get(key, state_epoch) > state_epoch:
            raise _Refused(ErrorCode.fenced_state_epoch)
        self._check_metadata(key)
        current = self.states.get(key)
        now = self.coordinator.now()
        # an (re)initialisation starts over: nothing of the previous state is merged in; leader
        # epoch 0, and no delivery-complete count until there is a start offset (Kafka 4.4.0's
        # ShareGroupOffset.fromRequest)
        return [snapshot_record(key, ShareGroupOffset(
            snapshot_epoch=current.snapshot_epoch + 1 if current is not None else 0, state_epoch=state_epoch,
            leader_epoch=0, start_offset=start_offset, delivery_complete_count=-1 if start_offset == -1 else 0,
            create_timestamp=now, write_timestamp=now))]

    def write(self, key: SharePartitionKey, state_epoch: int, leader_epoch: int, start_offset: int,
              batches: tuple[Batch, ...], delivery_complete_count: int = -1) -> list[Any]:
        """WriteShareGroupState: a ShareUpdate, or a ShareSnapshot once enough updates
        were written since the last one."""
        self._check_key(key)
        if key not in self.states:
            raise _Refused(ErrorCode.invalid_request, WRITE_UNINITIALIZED_SHARE_PARTITION)
        if leader_epoch != -1 and self.leader_epochs.get(key, leader_epoch) > leader_epoch:
            raise _Refused(ErrorCode.fenced_leader_epoch)
        if state_epoch != -1 and self.state_epochs.get(key, state_epoch) > state_epoch:
            raise _Refused(ErrorCode.fenced_state_epoch)
        self._check_metadata(key)
        # a write never moves the leader epoch (only a read by a new leader does)
        return [self._state_record(key, leader_epoch, start_offset, batches, delivery_complete_count,
                                   update_leader_epoch=False)]

    def read(self, key: SharePartitionKey, leader_epoch: int) -> tuple[ShareGroupOffset, list[Any]]:
        """ReadShareGroupState: the state, and a record when a newer leader epoch reads it
        (readStateAndMaybeUpdateLeaderEpoch: the new leader fences the old one)."""
        self._check_key(key)
        current = self.states.get(key)
        if current is None:
            raise _Refused(ErrorCode.invalid_request, READ_UNINITIALIZED_SHARE_PARTITION)
        if leader_epoch != -1 and self.leader_epochs.get(key, leader_epoch) > leader_epoch:
            raise _Refused(ErrorCode.fenced_leader_epoch)
        self._check_metadata(key)
        if leader_epoch == -1 or self.leader_epochs.get(key) == leader_epoch:
            return current, []
        return current, [self._state_record(key, leader_epoch, current.start_offset, (),
                                            current.delivery_complete_count, update_leader_epoch=True)]

    def read_summary(self, key: SharePartitionKey) -> ShareGroupOffset | None:
        """ReadShareGroupStateSummary: the state without batches (None: not initialised)."""
        self._check_key(key)
        self._check_metadata(key)
        return self.states.get(key)

    def delete(self, key: SharePartitionKey) -> list[Any]:
        """DeleteShareGroupState: a tombstone, nothing if the share-partition is unknown."""
        self._check_key(key)
        self._check_metadata(key)
        return [_tombstone(key)] if key in self.states else []

    def _state_record(self, key: SharePartitionKey, leader_epoch: int, start_offset: int,
                      batches: tuple[Batch, ...], delivery_complete_count: int, *,
                      update_leader_epoch: bool) -> Any:
        """A ShareSnapshot once `share.coordinator.snapshot.update.records.per.snapshot`
        updates were written since the last one, else a ShareUpdate
        (ShareCoordinatorShard.generateShareStateRecord; the share-partition is initialised)."""
        current = self.states[key]
        now = self.coordinator.now()
        new_leader_epoch = current.leader_epoch
        if update_leader_epoch and leader_epoch != -1:
            new_leader_epoch = leader_epoch
        if self.update_counts.get(key, 0) >= self.records_per_snapshot:
            # a new snapshot: everything held so far with this write folded in
            new_start = current.start_offset if start_offset == -1 else start_offset
            return snapshot_record(key, ShareGroupOffset(
                snapshot_epoch=current.snapshot_epoch + 1, state_epoch=current.state_epoch,
                leader_epoch=new_leader_epoch, start_offset=new_start,
                state_batches=tuple(combine_state_batches(current.state_batches, batches, new_start)),
                delivery_complete_count=delivery_complete_count, create_timestamp=now, write_timestamp=now))
        # an update on the last snapshot: only this write's batches (merged among themselves)
        return _update_record(key, ShareGroupOffset(
            snapshot_epoch=current.snapshot_epoch, state_epoch=-1, leader_epoch=new_leader_epoch,
            start_offset=start_offset, state_batches=tuple(combine_state_batches((), batches, start_offset)),
            delivery_complete_count=delivery_complete_count))

    def cold_snapshots(self) -> list[Any]:
        """Fresh snapshots of share-partitions whose last snapshot is older than
        `share.coordinator.cold.partition.snapshot.interval.ms`, so a reload need not read
        far back (snapshotColdPartitions): nothing when every share-partition's last
        snapshot is already such a re-snapshot (a quiet system)."""
        if all(o.create_timestamp != o.write_timestamp for o in self.states.values()):
            return []
        now = self.coordinator.now()
        interval = self.coordinator.config["share.coordinator.cold.partition.snapshot.interval.ms"]
        return [snapshot_record(key, replace(o, snapshot_epoch=o.snapshot_epoch + 1, write_timestamp=now))
                for key, o in self.states.items()
                if now - o.write_timestamp >= interval and self.partition_for(*key) in self.hosted_partitions]

    # -- views --------------------------------------------------------------------------
    def state(self, group_id: str, topic_id: uuid.UUID, partition: int) -> ShareGroupOffset | None:
        """The durable state of one share-partition (None if unknown)."""
        return self.states.get(SharePartitionKey(group_id, topic_id, partition))

    def table(self) -> list[dict]:
        """Every share-partition's durable state as rows (for notebooks and dumps)."""
        rows = []
        for key, o in sorted(self.states.items(), key=lambda kv: (kv[0].group_id, str(kv[0].topic_id), kv[0].partition)):
            rows.append({"group_id": key.group_id, "topic_id": key.topic_id, "partition": key.partition,
                         "state_partition": self.partition_for(*key), "snapshot_epoch": o.snapshot_epoch,
                         "state_epoch": o.state_epoch, "leader_epoch": o.leader_epoch,
                         "start_offset": o.start_offset, "delivery_complete_count": o.delivery_complete_count,
                         "state_batches": [tuple(b) for b in o.state_batches],
                         "updates_since_snapshot": self.update_counts.get(key)})
        return rows

    def __repr__(self) -> str:
        return f"ShareCoordinator(share_partitions={len(self.states)}, active={self.active})"


def _merge(current: ShareGroupOffset, v: Any) -> ShareGroupOffset:
    """A ShareUpdate folded into the state (ShareCoordinatorShard.merge): its start offset
    and leader epoch unless -1, its batches combined with the held ones from the new SPSO."""
    start = current.start_offset if v.start_offset == -1 else v.start_offset
    return replace(
        current,
        start_offset=start,
        leader_epoch=current.leader_epoch if v.leader_epoch == -1 else v.leader_epoch,
        state_batches=tuple(combine_state_batches(current.state_batches, _batches(v.state_batches), start)),
        delivery_complete_count=v.delivery_complete_count)


@component(SHARE_COORDINATOR)
def _new_share_coordinator(coordinator: Any) -> ShareCoordinator:
    return ShareCoordinator(coordinator)


def share_coordinator(c: Any) -> ShareCoordinator:
    """The share coordinator of a `Coordinator`."""
    return c.components[SHARE_COORDINATOR]


@replays(ShareSnapshot, ShareUpdate)
def _replay(c: Any, entry: Any) -> None:
    share_coordinator(c).replay(entry.record)


COLD_SNAPSHOT_TIMER = "share-coordinator-cold-partition-snapshot"


@on_loaded
def _ensure_cold_snapshot_timer(c: Any) -> None:
    """Schedule the cold-partition snapshot timer once there is share state (soft state:
    a reloaded coordinator schedules it again; Kafka runs it for every share coordinator)."""
    if share_coordinator(c).states and COLD_SNAPSHOT_TIMER not in c.timers:
        interval = c.config["share.coordinator.cold.partition.snapshot.interval.ms"]
        c.timers.schedule(COLD_SNAPSHOT_TIMER, c.now() + interval, lambda: _cold_snapshot(c))


def _cold_snapshot(c: Any) -> Result:
    records = share_coordinator(c).cold_snapshots()
    _ensure_cold_snapshot_timer(c)
    return Result(records=records)


# ---------------------------------------------------------------------------------------
# Request handling (ShareCoordinatorService): one operation per share-partition, each
# decided after the previous one was applied (Kafka runs them one by one on the shard).

def _serve(c: Any, req: Any, decide: Callable[[ShareCoordinator, SharePartitionKey, Any], tuple[dict, list]],
           error_fields: dict) -> Result:
    sc = share_coordinator(c)
    topics = list(req.topics or ())
    # Kafka answers an empty response to an empty topic or partition list or an empty group id
    if not topics or any(not t.partitions for t in topics) or not req.group_id:
        return Result({"results": []})
    if not sc.active:
        return Result({"results": [
            {"topic_id": t.topic_id, "partitions": [
                {"partition": p.partition, "error_code": ErrorCode.coordinator_not_available,
                 "error_message": COORDINATOR_NOT_AVAILABLE_MESSAGE, **error_fields} for p in t.partitions]}
            for t in topics]})
    answers: list[dict] = [{"topic_id": t.topic_id, "partitions": []} for t in topics]

    def operation(i: int, p: Any) -> Callable[[], Result]:
        def run() -> Result:
            key = SharePartitionKey(req.group_id, topics[i].topic_id, p.partition)
            try:
                if key.topic_id is not None and key.partition >= 0 and \
                        sc.partition_for(*key) not in sc.hosted_partitions:
                    raise _Refused(ErrorCode.not_coordinator)
                fields, records = decide(sc, key, p)
                answer = {"partition": p.partition, "error_code": ErrorCode.none, "error_message": None, **fields}
            except _Refused as e:
                answer, records = {"partition": p.partition, "error_code": e.code, "error_message": e.message,
                                   **error_fields}, []
            answers[i]["partitions"].append(answer)
            return Result(records=records)
        return run

    ops = [operation(i, p) for i, t in enumerate(topics) for p in t.partitions]
    return Result(lambda: {"results": answers}, then=[*ops, lambda: _ensure_cold_snapshot_timer(c)])


def _request_batches(p: Any) -> tuple[Batch, ...]:
    return tuple(Batch(b.first_offset, b.last_offset, int(b.delivery_state), int(b.delivery_count))
                 for b in p.state_batches)


@handles(83)
def _initialize_share_group_state(c: Any, req: Any, version: int) -> Result:
    def decide(sc: ShareCoordinator, key: SharePartitionKey, p: Any) -> tuple[dict, list]:
        return {}, sc.initialize(key, p.state_epoch, p.start_offset)
    return _serve(c, req, decide, {})


@handles(84)
def _read_share_group_state(c: Any, req: Any, version: int) -> Result:
    def decide(sc: ShareCoordinator, key: SharePartitionKey, p: Any) -> tuple[dict, list]:
        state, records = sc.read(key, p.leader_epoch)
        return {"state_epoch": state.state_epoch, "start_offset": state.start_offset,
                "state_batches": [b._asdict() for b in state.state_batches]}, records
    return _serve(c, req, decide, {"state_epoch": 0, "start_offset": 0, "state_batches": []})


@handles(85)
def _write_share_group_state(c: Any, req: Any, version: int) -> Result:
    def decide(sc: ShareCoordinator, key: SharePartitionKey, p: Any) -> tuple[dict, list]:
        dcc = getattr(p, "delivery_complete_count", -1)  # v1 (KIP-1226)
        return {}, sc.write(key, p.state_epoch, p.leader_epoch, p.start_offset, _request_batches(p), dcc)
    return _serve(c, req, decide, {})


@handles(86)
def _delete_share_group_state(c: Any, req: Any, version: int) -> Result:
    def decide(sc: ShareCoordinator, key: SharePartitionKey, p: Any) -> tuple[dict, list]:
        return {}, sc.delete(key)
    return _serve(c, req, decide, {})


@handles(87)
def _read_share_group_state_summary(c: Any, req: Any, version: int) -> Result:
    def decide(sc: ShareCoordinator, key: SharePartitionKey, p: Any) -> tuple[dict, list]:
        state = sc.read_summary(key)
        if state is None:
            return {"state_epoch": DEFAULT_STATE_EPOCH, "leader_epoch": DEFAULT_LEADER_EPOCH,
                    "start_offset": UNINITIALIZED_START_OFFSET,
                    "delivery_complete_count": UNINITIALIZED_DELIVERY_COMPLETE_COUNT}, []
        return {"state_epoch": state.state_epoch, "leader_epoch": state.leader_epoch,
                "start_offset": state.start_offset, "delivery_complete_count": state.delivery_complete_count}, []
    return _serve(c, req, decide, {"state_epoch": 0, "leader_epoch": 0, "start_offset": 0,
                                   "delivery_complete_count": 0})
