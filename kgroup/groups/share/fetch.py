"""ShareFetch (78) and ShareAcknowledge (79): the share-partition leader's data path (KIP-932).

A consumer fetches from its share session's partitions; the leader picks the records
(`SharePartition.acquire`), returns the real record batches that hold them and the
AcquiredRecords ranges with delivery counts. Acknowledgements (ShareAcknowledge, or
piggy-backed on ShareFetch) are applied atomically per share-partition, one error code per
share-partition. Sessions follow Kafka's SharePartitionManager/ShareSessionCache: epoch 0
opens, -1 closes and releases what the member still holds, other epochs must match.

Everything here is soft state (sessions, in-flight records); durable changes go through
the Persister as WriteShareGroupState requests, so handlers return no records themselves.
The coordinator answers at once: there is no long poll (MaxWaitMs, MinBytes are ignored).
"""
from __future__ import annotations

import datetime
import sys
import uuid
from typing import TYPE_CHECKING, Any

from kio.static.primitive import i32Timedelta

from kgroup.errors import ErrorCode
from kgroup.groups.share.partition import ShareStateError, SharePartition, share_partition
from kgroup.groups.share.session import FINAL_EPOCH, INITIAL_EPOCH, ShareSession, next_epoch, sessions
from kgroup.protocol import response_class
from kgroup.runtime import Result, handles

if TYPE_CHECKING:
    from kgroup.coordinator import Coordinator

SHARE_FETCH, SHARE_ACKNOWLEDGE = 78, 79
_NO_LEADER = {"leader_id": -1, "leader_epoch": -1}
_LEADER = {"leader_id": 0, "leader_epoch": 0}


def _top_error(code: ErrorCode, message: str | None, fetch: bool) -> Result:
    data: dict[str, Any] = {"throttle_time": 0, "error_code": code, "error_message": message, "responses": [],
                            "node_endpoints": []}
    if fetch:
        data["acquisition_lock_timeout"] = 0
    return Result(data)


def _check_batches(batches: Any) -> tuple[list[tuple[int, int, tuple[int, ...]]], str | None]:
    """The acknowledgement batches as (first, last, types), or a reason they are invalid
    (Kafka's KafkaApis.validateAcknowledgementBatches: INVALID_REQUEST)."""
    out = []
    prev = -1
    for b in batches:
        first, last, types = b.first_offset, b.last_offset, tuple(b.acknowledge_types)
        if first > last:
            return [], f"First offset {first} is greater than last offset {last}."
        if first <= prev and out:
            return [], "Acknowledgement batches are not in order or overlap."
        if not types:
            return [], "Batch is missing acknowledge types."
        if len(types) != 1 and len(types) != last - first + 1:
            return [], "Acknowledge types must be one for the batch or one per offset."
        for t in types:
            if not 0 <= t <= 3:
                return [], f"Invalid acknowledge type: {t}."
        out.append((first, last, types))
        prev = last
    return out, None


def _resolve(c: "Coordinator", group_id: str, topic_id: uuid.UUID, partition: int) -> SharePartition:
    """The share-partition, or ShareStateError: unknown topic id, no such partition, or the
    durable state could not be read."""
    try:
        name = c.cluster.topic_name(topic_id)
    except KeyError:
        raise ShareStateError(ErrorCode.unknown_topic_id, "This server does not host this topic ID.") from None
    if not 0 <= partition < c.cluster.partitions(name):
        raise ShareStateError(ErrorCode.unknown_topic_or_partition,
                              "This server does not host this topic-partition.")
    return share_partition(c, group_id, topic_id, partition)


def _acknowledge_topics(c: "Coordinator", group_id: str, member_id: str, topics: Any) -> dict:
    """Apply the acknowledgements of every partition; (topic id, partition) -> (code, message)."""
    results: dict[tuple[uuid.UUID, int], tuple[ErrorCode, str | None]] = {}
    for t in topics:
        for p in t.partitions:
            key = (t.topic_id, p.partition_index)
            if not p.acknowledgement_batches:
                continue
            batches, reason = _check_batches(p.acknowledgement_batches)
            if reason is not None:
                results[key] = (ErrorCode.invalid_request, reason)
                continue
            try:
                sp = _resolve(c, group_id, t.topic_id, p.partition_index)
            except ShareStateError as e:
                results[key] = (e.code, e.message)
                continue
            results[key] = sp.acknowledge(member_id, batches)
    return results


def _release(c: "Coordinator", session: ShareSession, keys: Any) -> None:
    """Release what the member holds on these partitions (session closed or partitions forgotten)."""
    for topic_id, partition in keys:
        try:
            sp = _resolve(c, session.group_id, topic_id, partition)
        except ShareStateError:
            continue
        sp.release_member(session.member_id)


def _by_topic(rows: dict[tuple[uuid.UUID, int], dict]) -> list[dict]:
    topics: dict[uuid.UUID, list[dict]] = {}
    for (topic_id, _), row in rows.items():
        topics.setdefault(topic_id, []).append(row)
    return [{"topic_id": tid, "partitions": parts} for tid, parts in topics.items()]


@handles(SHARE_FETCH)
def share_fetch(c: "Coordinator", req: Any, version: int) -> Result:
    """ShareFetch: session bookkeeping, piggy-backed acknowledgements, then acquire records
    from the session's share-partitions, rotated so that none starves."""
    group_id, member_id, epoch = req.group_id, req.member_id, req.share_session_epoch
    if not group_id:
        return _top_error(ErrorCode.invalid_group_id, "The group id is empty.", True)
    if not member_id:
        return _top_error(ErrorCode.invalid_request, "The member id is empty.", True)
    has_acks = any(p.acknowledgement_batches for t in req.topics for p in t.partitions)
    if getattr(req, "is_renew_ack", False):
        return _top_error(ErrorCode.invalid_request, "Renewing acquisition locks is not supported.", True)
    cache = sessions(c)
    now = c.now()
    if epoch == INITIAL_EPOCH:
        if has_acks:
            return _top_error(ErrorCode.invalid_request, "Acknowledge data present on initial fetch request.", True)
        old = cache.get(group_id, member_id)
        if old is not None:  # a new session replaces the old one: what it held goes back
            _release(c, old, list(old.partitions))
        session = cache.open(group_id, member_id, now)
        if session is None:
            return _top_error(ErrorCode.share_session_limit_reached,
                              "The limit of share sessions on this broker has been reached.", True)
    else:
        session, code = cache.check(group_id, member_id, epoch)
        if session is None:
            return _top_error(code, None, True)
        if epoch == FINAL_EPOCH and any(p for t in req.topics for p in t.partitions if not p.acknowledgement_batches):
            return _top_error(ErrorCode.invalid_request,
                              "The final share fetch request must not contain partitions to fetch.", True)

    # acknowledgements first, as Kafka's KafkaApis.handleShareFetchRequest does
    ack_results = _acknowledge_topics(c, group_id, member_id, req.topics) if has_acks else {}
    rows: dict[tuple[uuid.UUID, int], dict] = {}
    for key, (code, message) in ack_results.items():
        rows[key] = _row(key[1], ErrorCode.none, None, code, message)

    lock_ms = 0
    if epoch == FINAL_EPOCH:
        cache.close(group_id, member_id)
        _release(c, session, list(session.partitions))
    else:
        session.epoch = next_epoch(session.epoch) if epoch != INITIAL_EPOCH else 1
        for t in req.forgotten_topics_data:
            forgotten = [(t.topic_id, p) for p in t.partitions if (t.topic_id, p) in session.partitions]
            for key in forgotten:
                del session.partitions[key]
            _release(c, session, forgotten)
        for t in req.topics:
            for p in t.partitions:
                session.partitions.setdefault((t.topic_id, p.partition_index), None)
        budget = req.max_records if req.max_records > 0 else 500
        for key in session.rotated():
            try:
                sp = _resolve(c, group_id, key[0], key[1])
            except ShareStateError as e:
                row = rows.setdefault(key, _row(key[1], ErrorCode.none, None, ErrorCode.none, None))
                row["error_code"], row["error_message"], row["current_leader"] = e.code, e.message, _NO_LEADER
                continue
            lock_ms = sp.lock_duration_ms(member_id)
            if budget <= 0:
                got = None
            else:
                got = sp.acquire(member_id, budget)
                budget -= got.count
            if got is not None and got.acquired:
                row = rows.setdefault(key, _row(key[1], ErrorCode.none, None, ErrorCode.none, None))
                row["records"] = b"".join(sb.data for sb in got.batches)
                row["acquired_records"] = got.acquired
            elif key not in rows and key[0] in _requested(req):
                rows[key] = _row(key[1], ErrorCode.none, None, ErrorCode.none, None)
    return Result(_fetch_response(version, lock_ms, rows))


def _fetch_response(version: int, lock_ms: int, rows: dict[tuple[uuid.UUID, int], dict]) -> Any:
    """The kio ShareFetchResponse, built directly (the hot path: no generic `build`)."""
    m = sys.modules[response_class(SHARE_FETCH, version).__module__]
    topics: dict[uuid.UUID, list] = {}
    for (topic_id, _), r in rows.items():
        leader = r["current_leader"]
        topics.setdefault(topic_id, []).append(m.PartitionData(
            partition_index=r["partition_index"], error_code=r["error_code"], error_message=r["error_message"],
            acknowledge_error_code=r["acknowledge_error_code"],
            acknowledge_error_message=r["acknowledge_error_message"],
            current_leader=m.LeaderIdAndEpoch(leader_id=leader["leader_id"], leader_epoch=leader["leader_epoch"]),
            records=r["records"],
            acquired_records=tuple(m.AcquiredRecords(first_offset=a, last_offset=z, delivery_count=n)
                                   for a, z, n in r["acquired_records"])))
    return m.ShareFetchResponse(
        throttle_time=i32Timedelta.parse(datetime.timedelta(0)), error_code=ErrorCode.none, error_message=None,
        acquisition_lock_timeout=i32Timedelta.parse(datetime.timedelta(milliseconds=lock_ms)),
        responses=tuple(m.ShareFetchableTopicResponse(topic_id=tid, partitions=tuple(ps))
                        for tid, ps in topics.items()),
        node_endpoints=())


def _requested(req: Any) -> set[uuid.UUID]:
    return {t.topic_id for t in req.topics}


def _row(partition: int, code: ErrorCode, message: str | None, ack_code: ErrorCode, ack_message: str | None) -> dict:
    return {"partition_index": partition, "error_code": code, "error_message": message,
            "acknowledge_error_code": ack_code, "acknowledge_error_message": ack_message,
            "current_leader": _LEADER, "records": b"", "acquired_records": []}


@handles(SHARE_ACKNOWLEDGE)
def share_acknowledge(c: "Coordinator", req: Any, version: int) -> Result:
    """ShareAcknowledge: apply acknowledgements atomically per share-partition within the
    member's share session; epoch -1 also closes the session and releases what is left."""
    group_id, member_id, epoch = req.group_id, req.member_id, req.share_session_epoch
    if not group_id:
        return _top_error(ErrorCode.invalid_group_id, "The group id is empty.", False)
    if not member_id:
        return _top_error(ErrorCode.invalid_request, "The member id is empty.", False)
    if getattr(req, "is_renew_ack", False):
        return _top_error(ErrorCode.invalid_request, "Renewing acquisition locks is not supported.", False)
    if epoch == INITIAL_EPOCH:
        # a share session is opened by ShareFetch only (Kafka's acknowledgeSessionUpdate)
        return _top_error(ErrorCode.invalid_share_session_epoch, "Cannot acknowledge with the initial epoch.", False)
    cache = sessions(c)
    session, code = cache.check(group_id, member_id, epoch)
    if session is None:
        return _top_error(code, None, False)
    results = _acknowledge_topics(c, group_id, member_id, req.topics)
    if epoch == FINAL_EPOCH:
        cache.close(group_id, member_id)
        _release(c, session, list(session.partitions))
    else:
        session.epoch = next_epoch(session.epoch)
    rows = {key: {"partition_index": key[1], "error_code": code, "error_message": message,
                  "current_leader": _LEADER if code != ErrorCode.unknown_topic_id else _NO_LEADER}
            for key, (code, message) in results.items()}
    return Result({"throttle_time": 0, "error_code": ErrorCode.none, "error_message": None,
                   "responses": _by_topic(rows), "node_endpoints": []})


__all__ = ["share_fetch", "share_acknowledge", "SHARE_FETCH", "SHARE_ACKNOWLEDGE"]
