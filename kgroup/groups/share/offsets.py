"""The share-group admin APIs: DescribeShareGroupOffsets (90), AlterShareGroupOffsets (91),
DeleteShareGroupOffsets (92), and the share part of DeleteGroups.

A share group has no committed offsets: its position in each share-partition is the
share-partition start offset (SPSO), kept by the share coordinator. These handlers reach it
through the `Persister` (`state.persister`), as Kafka's `GroupCoordinatorService` does,
and keep record 15 (which share-partitions have durable state) in step. Resetting or deleting
also drops the share-partition leader's in-flight records (`partition.forget`), since an
admin reset discards in-flight state (KIP-932, "--reset-offsets ... instances must be inactive").
"""
from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from kgroup.errors import ErrorCode, KafkaError
from kgroup.groups.modern import topic_order
from kgroup.runtime import Result, handles

from . import group as G
from .group import ShareGroup, share_group
from .state import (InitTopic, StatePartitionMetadata, before_delete_group, delete_share_state, forget_in_flight,
                    initialize_share_state, merge_topics, require_persister)

if TYPE_CHECKING:
    from kgroup.coordinator import Coordinator

DESCRIBE_SHARE_GROUP_OFFSETS = 90
ALTER_SHARE_GROUP_OFFSETS = 91
DELETE_SHARE_GROUP_OFFSETS = 92
#: Kafka's `Errors.UNKNOWN_TOPIC_OR_PARTITION.message()`
UNKNOWN_TOPIC_MESSAGE = "This server does not host this topic-partition."
#: Kafka's answer for a topic whose share-partitions are not initialised (only initialising, or unknown to the group)
NO_OFFSETS_MESSAGE = "There is no offset information to delete."
#: Kafka's `Errors.INVALID_GROUP_ID.message()`: Alter/DeleteShareGroupOffsets answer an empty group id with it
INVALID_GROUP_ID_MESSAGE = "The configured groupId is invalid."
#: Kafka's `Errors.NON_EMPTY_GROUP.message()`
NON_EMPTY_GROUP_MESSAGE = "The group is not empty."
#: the lag of a share-partition whose SPSO is not known yet (Kafka's `PartitionFactory.UNINITIALIZED_LAG`)
UNINITIALIZED = -1


# ---------------------------------------------------------------------------------------
# DescribeShareGroupOffsets: start offset and lag per share-partition

def _lag(c: "Coordinator", topic: str, partition: int, summary: Any) -> int:
    """KIP-1226: the records from the SPSO to the log end whose delivery is not complete yet
    (-1 while the start offset or the delivery-complete count is unknown)."""
    if summary.start_offset < 0 or summary.delivery_complete_count < 0:
        return UNINITIALIZED
    return max(0, c.cluster.end_offset(topic, partition) - summary.start_offset - summary.delivery_complete_count)


def describe_offsets(c: "Coordinator", g: Any, version: int) -> dict:
    """Kafka's `describeShareGroupOffsets` / `describeShareGroupAllOffsets`: the summary of each
    share-partition. What has no state (an unknown topic, group or partition, or a refusal of the
    share coordinator) is "absence of data, rather than an error", as OffsetFetch answers it:
    start offset -1, lag -1."""
    group_id = g.group_id
    try:
        if not group_id:
            raise KafkaError(ErrorCode.invalid_group_id, None)
        c.check_coordinator(group_id)
        p = require_persister(c)
    except KafkaError as e:
        return {"group_id": group_id, "topics": [], "error_code": e.code, "error_message": e.message or None}
    if g.topics is None:
        # every initialised share-partition of the group (none for an unknown group)
        group = c.groups.get(group_id)
        initialized = group.state_metadata.initialized if isinstance(group, ShareGroup) else {}
        wanted = [(c.cluster.topic_name(t), sorted(initialized[t].partitions))
                  for t in topic_order(initialized) if _known(c, t)]
    else:
        wanted = [(t.topic_name, list(t.partitions)) for t in g.topics]
    known, unknown = [], []
    for name, parts in wanted:
        if name not in c.cluster:
            unknown.append({"topic_name": name, "topic_id": uuid.UUID(int=0), "partitions": [
                {"partition_index": part, "start_offset": UNINITIALIZED, "leader_epoch": 0, "lag": UNINITIALIZED,
                 "error_code": ErrorCode.none, "error_message": None} for part in parts]})
            continue
        tid = c.cluster.topic_id(name)
        rows = []
        for part in parts:
            summary = p.read_summary(group_id, tid, part)  # ReadShareGroupStateSummary: no leadership taken
            if summary.error_code != ErrorCode.none:
                rows.append({"partition_index": part, "start_offset": UNINITIALIZED, "leader_epoch": 0,
                             "lag": UNINITIALIZED, "error_code": ErrorCode.none, "error_message": None})
            else:
                rows.append({"partition_index": part, "start_offset": summary.start_offset,
                             "leader_epoch": summary.leader_epoch, "lag": _lag(c, name, part, summary),
                             "error_code": ErrorCode.none, "error_message": None})
        known.append({"topic_name": name, "topic_id": tid, "partitions": rows})
    # Kafka adds the topics missing from the metadata image after the others
    return {"group_id": group_id, "topics": known + unknown, "error_code": ErrorCode.none, "error_message": None}


def _known(c: "Coordinator", topic_id: uuid.UUID) -> bool:
    try:
        c.cluster.topic_name(topic_id)
        return True
    except KeyError:
        return False


@handles(DESCRIBE_SHARE_GROUP_OFFSETS)
def describe_share_group_offsets(c: "Coordinator", req: Any, version: int) -> Result:
    return Result({"throttle_time": 0, "groups": [describe_offsets(c, g, version) for g in req.groups]})


# ---------------------------------------------------------------------------------------
# AlterShareGroupOffsets: reset an empty group's SPSO

def _alter_error(code: ErrorCode, message: str | None) -> dict:
    return {"throttle_time": 0, "error_code": code, "error_message": message, "responses": []}


@handles(ALTER_SHARE_GROUP_OFFSETS)
def alter_share_group_offsets(c: "Coordinator", req: Any, version: int) -> Result:
    """Kafka's `alterShareGroupOffsets`: only an empty group (NON_EMPTY_GROUP otherwise); the
    share-partitions are initialised again at the new start offsets with the group epoch as their
    state epoch, so a share-partition leader holding older state is fenced. The group epoch does
    not move (Kafka 4.4.0's records: no ShareGroupMetadata record)."""
    group_id = req.group_id
    try:
        if not group_id:
            raise KafkaError(ErrorCode.invalid_group_id, INVALID_GROUP_ID_MESSAGE)
        c.check_coordinator(group_id)
        if not req.topics:
            return Result(_alter_error(ErrorCode.none, None))
        group = share_group(c, group_id)
        if group.members:
            raise KafkaError(ErrorCode.non_empty_group, NON_EMPTY_GROUP_MESSAGE)  # ShareGroup.validateEmptyGroup
        require_persister(c)
    except KafkaError as e:
        return Result(_alter_error(e.code, e.message or None))
    now = c.now()
    responses, topics, offsets = [], {}, {}
    for t in req.topics:
        if t.topic_name not in c.cluster:
            responses.append({"topic_name": t.topic_name, "topic_id": uuid.UUID(int=0), "partitions": [
                {"partition_index": p.partition_index, "error_code": ErrorCode.unknown_topic_or_partition,
                 "error_message": UNKNOWN_TOPIC_MESSAGE} for p in t.partitions]})
            continue
        topic = c.cluster.topic(t.topic_name)
        rows, good = [], set()
        for p in t.partitions:
            if 0 <= p.partition_index < topic.partitions:
                good.add(p.partition_index)
                offsets[(topic.topic_id, p.partition_index)] = p.start_offset
                rows.append({"partition_index": p.partition_index, "error_code": ErrorCode.none, "error_message": None})
            else:
                rows.append({"partition_index": p.partition_index, "error_code": ErrorCode.unknown_topic_or_partition,
                             "error_message": UNKNOWN_TOPIC_MESSAGE})
        if good:
            topics[topic.topic_id] = InitTopic(topic.name, frozenset(good), now)
        responses.append({"topic_name": topic.name, "topic_id": topic.topic_id, "partitions": rows})
    epoch = group.group_epoch
    sm = group.state_metadata
    records = [G.state_metadata_record(group_id, StatePartitionMetadata(
                   merge_topics(sm.initializing, topics), dict(sm.initialized),
                   {t: n for t, n in sm.deleting.items() if t not in topics}))]

    codes: dict[tuple[uuid.UUID, int], ErrorCode] = {}

    def initialize() -> Result | None:
        for (tid, part) in offsets:
            forget_in_flight(c, group_id, tid, part)
        return initialize_share_state(c, group_id, epoch, topics, offsets, codes)

    def response() -> dict:
        # Partitions the share coordinator refused carry its error code.
        for r in responses:
            for row in r["partitions"]:
                code = codes.get((r["topic_id"], row["partition_index"]), ErrorCode.none)
                if row["error_code"] == ErrorCode.none and code != ErrorCode.none:
                    row.update(error_code=code, error_message=None)
        return {"throttle_time": 0, "error_code": ErrorCode.none, "error_message": None, "responses": responses}
    return Result(response, records, then=[initialize])


# ---------------------------------------------------------------------------------------
# DeleteShareGroupOffsets and DeleteGroups: forget share-partitions

def deleting_record(group_id: str, sm: StatePartitionMetadata, topics: Mapping[uuid.UUID, str]) -> Any:
    """Record 15 with `topics` moved to deleting (Kafka's `shareGroupBuildPartitionDeleteRequest`)."""
    deleting = dict(sm.deleting)
    deleting.update(topics)
    return G.state_metadata_record(group_id, StatePartitionMetadata(
        {t: v for t, v in sm.initializing.items() if t not in topics},
        {t: v for t, v in sm.initialized.items() if t not in topics}, deleting))


@handles(DELETE_SHARE_GROUP_OFFSETS)
def delete_share_group_offsets(c: "Coordinator", req: Any, version: int) -> Result:
    """Kafka's `deleteShareGroupOffsets`: an empty group forgets whole topics (the request names
    topics, not partitions): record 15 marks them deleting, the share coordinator deletes their
    state, then record 15 forgets them."""
    group_id = req.group_id
    base = {"throttle_time": 0, "error_code": ErrorCode.none, "error_message": None, "responses": []}
    try:
        if not group_id:
            raise KafkaError(ErrorCode.invalid_group_id, INVALID_GROUP_ID_MESSAGE)
        c.check_coordinator(group_id)
        if not req.topics:
            return Result(base)
        group = share_group(c, group_id)
        if group.members:
            raise KafkaError(ErrorCode.non_empty_group, NON_EMPTY_GROUP_MESSAGE)  # ShareGroup.validateEmptyGroup
        require_persister(c)
    except KafkaError as e:
        return Result({**base, "error_code": e.code, "error_message": e.message or None})
    sm = group.state_metadata
    responses, candidates = [], {}
    for t in req.topics:
        # Kafka's sharePartitionsEligibleForOffsetDeletion: initialised (or already deleting) topics only
        name = t.topic_name
        tid = c.cluster.topic_id(name) if name in c.cluster else None
        if tid is None:
            responses.append({"topic_name": name, "topic_id": uuid.UUID(int=0),
                              "error_code": ErrorCode.unknown_topic_or_partition, "error_message": UNKNOWN_TOPIC_MESSAGE})
        elif tid in sm.initialized or tid in sm.deleting:
            candidates[tid] = name
        else:
            responses.append({"topic_name": name, "topic_id": uuid.UUID(int=0),
                              "error_code": ErrorCode.unknown_topic_or_partition, "error_message": NO_OFFSETS_MESSAGE})
    if not candidates:
        return Result({**base, "responses": responses})
    answers: dict[uuid.UUID, dict] = {}

    def delete() -> Result | None:
        errors = delete_share_state(c, group_id, candidates)
        done = {t for t, code in errors.items() if code == ErrorCode.none}
        for t, code in errors.items():
            answers[t] = {"topic_name": candidates[t], "topic_id": t, "error_code": code,
                          "error_message": None if code == ErrorCode.none else code.name}
        g = c.groups.get(group_id)
        if not isinstance(g, ShareGroup) or not done:
            return None
        now_sm = g.state_metadata
        return Result(records=[G.state_metadata_record(group_id, StatePartitionMetadata(
            dict(now_sm.initializing), dict(now_sm.initialized),
            {t: n for t, n in now_sm.deleting.items() if t not in done}))])

    def response() -> dict:
        return {**base, "responses": responses + [answers[t] for t in topic_order(candidates)]}
    return Result(response, [deleting_record(group_id, sm, candidates)], then=[delete])


__all__ = ["describe_share_group_offsets", "alter_share_group_offsets", "delete_share_group_offsets",
           "before_delete_group", "forget_in_flight", "delete_share_state"]
