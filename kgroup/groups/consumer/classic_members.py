"""Classic-protocol members inside a consumer group (KIP-848 online migration).

After an upgrade (`migration`), classic members keep speaking JoinGroup/SyncGroup/Heartbeat/
LeaveGroup; the coordinator translates: a JoinGroup is a heartbeat with the subscription and
owned partitions of its ConsumerProtocol bytes, SyncGroup returns the member's current
assignment, and Heartbeat answers REBALANCE_IN_PROGRESS while the member must rejoin.
The classic handlers find these hooks on `ConsumerGroup` (set in the package's `__init__`).
This module sits above the heartbeat (`protocol`) and uses its steps.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kgroup.errors import ErrorCode, KafkaError
from kgroup.groups import classic_bridge as bridge
from kgroup.groups.classic_bridge import join_error as _join_error
from kgroup.groups.modern import MemberState, client_member_id, target_assignment_due
from kgroup.protocol import get, ms
from kgroup.protocol.consumer_protocol import ConsumerProtocolError, decode_subscription, encode_assignment
from kgroup.runtime import PendingResponse, Result

from . import group as G
from . import protocol as P
from .group import CONSUMER_PROTOCOL_TYPE, ClassicMemberMetadata, ConsumerGroup, ConsumerGroupMember
from .migration import by_topic_id, maybe_downgrade_with_replaced_member, wire_assignment
from .timers import cancel_timers

if TYPE_CHECKING:
    from kgroup.coordinator import Coordinator


def _join_key(group_id: str, member_id: str) -> str:
    return bridge.join_key("consumer", group_id, member_id)


def _sync_key(group_id: str, member_id: str) -> str:
    return bridge.sync_key("consumer", group_id, member_id)


def classic_join(group: ConsumerGroup, c: "Coordinator", req: Any, version: int, future: PendingResponse) -> Result:
    """Kafka's `classicGroupJoinToConsumerGroup`."""
    gid = group.group_id
    join = bridge.ClassicJoin.of(c, req, client_member_id)
    member_id, unknown, instance_id, protocols = join.member_id, join.unknown, join.instance_id, join.protocols
    try:
        P.throw_if_full(c, group, member_id)
        join.check_protocols(group, req)
        if join.member_id_required(version):
            future.complete(_join_error(member_id, ErrorCode.member_id_required))
            return Result(replay=False)
        records: list = []
        replaced = None
        if instance_id is None:
            member = P.dynamic_member(group, member_id, -1, {}, True, classic=True)
        else:
            member, replaced = P.static_member(group, member_id, -1, instance_id, {}, unknown, records, classic=True)
            if replaced is not None:
                cancel_timers(c, gid, replaced.member_id)
        sub, _ = decode_subscription(protocols[0][1])
    except KafkaError as e:
        future.complete(_join_error(member_id if not unknown else "", e.code))
        return Result(replay=False)
    except (ConsumerProtocolError, ValueError):
        # Kafka throws IllegalStateException ("Malformed embedded consumer protocol in subscription
        # deserialization."), which its service answers as UNKNOWN_SERVER_ERROR.
        future.complete(_join_error(member_id, ErrorCode.unknown_server_error))
        return Result(replay=False)
    rebalance_ms, session_ms = ms(req.rebalance_timeout), ms(req.session_timeout)
    updated = member.replace(
        instance_id=instance_id if instance_id is not None else member.instance_id,
        # an empty rack is no rack (Kafka 4.4.0 writes rackId null for librdkafka's "")
        rack_id=(sub.rack_id or None) if sub.rack_id is not None else member.rack_id,
        rebalance_timeout_ms=rebalance_ms if rebalance_ms != -1 else member.rebalance_timeout_ms,
        subscribed_topic_names=frozenset(sub.topics),
        # a classic member subscribes by name: no regex, written "" as Kafka 4.4.0 writes it
        subscribed_topic_regex="",
        client_id=c.request_context.client_id, client_host=c.request_context.client_host,
        classic_member_metadata=ClassicMemberMetadata(session_ms, tuple(protocols)))
    changed = False
    if updated != member:
        records.append(G.member_record(gid, updated))
        changed = updated.subscribed_topic_names != member.subscribed_topic_names
    regex_result, follow_up = P.maybe_update_regexes(c, group, member, updated, records)
    change = P.GroupChange(group, updated, replaced)
    group_epoch = group.group_epoch
    bump = changed or regex_result == "resolved"  # as the heartbeat: a cleared regex bumps at once
    if bump or group.has_metadata_expired(c.now(), c.cluster.metadata_version):
        group_epoch = P.update_subscription_metadata(c, change, bump, records)
    settled = len(records)  # what a downgrade keeps when this join moved the group past its assignment
    if group_epoch > group.assignment_epoch and target_assignment_due(c, group, "consumer"):
        target = P.update_target_assignment(c, change, group_epoch, records).get(member_id, {})
        target_epoch = group_epoch
    else:  # nothing new, or the next assignment waits for the assignment interval (KIP-1263)
        target_epoch, target = group.assignment_epoch, change.target.get(member_id, {})
    owned = by_topic_id(c, sub.owned_partitions)
    reconciled = P.maybe_reconcile(c, change, updated, target_epoch, target, owned,
                                   changed or regex_result != "unchanged", records)
    if replaced is not None and _downgraded(c, group, replaced, updated, reconciled, group_epoch, settled, records):
        future.complete(_joined(reconciled, protocols))
        return Result(None, records, replay=False)   # the classic group is in place already
    c.timers.cancel(_join_key(gid, member_id))
    P.schedule_session_timeout(c, gid, member_id, session_ms)
    _schedule_sync_timeout(c, gid, member_id, rebalance_ms)
    future.complete({"error_code": ErrorCode.none, "generation_id": reconciled.member_epoch,
                     "protocol_type": CONSUMER_PROTOCOL_TYPE, "protocol_name": protocols[0][0], "leader": "",
                     "skip_assignment": False, "member_id": member_id, "members": [], "throttle_time": 0})
    return Result(None, records, then=[follow_up] if follow_up else [])


def _downgraded(c: "Coordinator", group: ConsumerGroup, replaced: ConsumerGroupMember, updated: ConsumerGroupMember,
                reconciled: ConsumerGroupMember, group_epoch: int, settled: int, records: list) -> bool:
    """Kafka's step 4 of `classicGroupJoinToConsumerGroup`: a join that replaced the last
    consumer-protocol static member converts the group back to a classic group. When the join
    moved the group past its assignment, the new target and reconciliation are left to the
    classic group's rebalance (as Kafka's trunk writes it: the bump, no target records)."""
    rebalance = group_epoch > group.assignment_epoch
    kept = records[:settled] if rebalance else list(records)
    if not maybe_downgrade_with_replaced_member(c, group, replaced, updated if rebalance else reconciled,
                                                rebalance, kept):
        return False
    records[:] = kept
    c.timers.cancel(_join_key(group.group_id, reconciled.member_id))
    return True


def _joined(member: ConsumerGroupMember, protocols: list[tuple[str, bytes]]) -> dict:
    """A successful JoinGroup answer to a classic member of a consumer group."""
    return {"error_code": ErrorCode.none, "generation_id": member.member_epoch, "protocol_type": CONSUMER_PROTOCOL_TYPE,
            "protocol_name": protocols[0][0], "leader": "", "skip_assignment": False, "member_id": member.member_id,
            "members": [], "throttle_time": 0}


def _schedule_sync_timeout(c: "Coordinator", group_id: str, member_id: str, timeout_ms: int) -> None:
    bridge.schedule_sync_timeout(c, "consumer", group_id, member_id, timeout_ms, P.fence_member_by_id)


def _schedule_join_timeout_if_absent(c: "Coordinator", group_id: str, member_id: str, timeout_ms: int) -> None:
    bridge.schedule_join_timeout_if_absent(c, "consumer", group_id, member_id, timeout_ms, P.fence_member_by_id)


def _must_rejoin(c: "Coordinator", group: ConsumerGroup, member: ConsumerGroupMember) -> bool:
    """A classic member rejoins when a newer assignment is there (the assignment epoch, not the group
    epoch: a bump whose assignment waits for the interval is nothing to rejoin for), it must revoke,
    or what it waits for is free."""
    if member.member_epoch < group.assignment_epoch or member.state == MemberState.UNREVOKED_PARTITIONS:
        return True
    if member.state == MemberState.UNRELEASED_PARTITIONS:
        target = group.target_assignment.get(member.member_id, {})
        waiting = any(group.current_partition_epoch(t, p) != -1
                      for t, ps in target.items() for p in ps if p not in member.assigned_partitions.get(t, {}))
        return not waiting
    return False


def classic_sync(group: ConsumerGroup, c: "Coordinator", req: Any, version: int, future: PendingResponse) -> Result:
    """Kafka's `classicGroupSyncToConsumerGroup`: the member's current assignment, as ConsumerProtocol bytes."""
    gid = group.group_id
    try:
        member = bridge.classic_member(group, req.member_id, get(req, "group_instance_id"))
        bridge.check_classic_sync(c, "consumer", group, member, req, P.fence_member_by_id)
    except KafkaError as e:
        future.complete({"error_code": e.code, "assignment": b"", "protocol_type": None, "protocol_name": None})
        return Result(replay=False)
    c.timers.cancel(_sync_key(gid, member.member_id))
    P.schedule_session_timeout(c, gid, member.member_id, member.classic_member_metadata.session_timeout_ms)
    _, sub_version = decode_subscription(member.classic_member_metadata.supported_protocols[0][1])
    data = encode_assignment(wire_assignment(c, member.assigned_partitions), sub_version)
    # Kafka echoes the request's protocol type and name (null when the client sent none)
    future.complete({"error_code": ErrorCode.none, "assignment": data, "protocol_type": get(req, "protocol_type"),
                     "protocol_name": get(req, "protocol_name")})
    return Result(replay=False)


def classic_heartbeat(group: ConsumerGroup, c: "Coordinator", req: Any) -> ErrorCode:
    """Kafka's `classicGroupHeartbeatToConsumerGroup`."""
    member = bridge.classic_member(group, req.member_id, get(req, "group_instance_id"))
    if req.generation_id != member.member_epoch:
        raise KafkaError(ErrorCode.illegal_generation)
    P.schedule_session_timeout(c, group.group_id, member.member_id, member.classic_member_metadata.session_timeout_ms)
    if _must_rejoin(c, group, member):
        _schedule_join_timeout_if_absent(c, group.group_id, member.member_id, member.rebalance_timeout_ms)
        return ErrorCode.rebalance_in_progress
    return ErrorCode.none


def classic_leave(group: ConsumerGroup, c: "Coordinator", identities: list[tuple[str, str | None]]):
    """Kafka's `classicGroupLeaveToConsumerGroup`: per-member answers, then one fencing."""
    answers, leaving = bridge.leaving_members(group, identities)
    result = P.fence_members(c, group, leaving, None)
    return ErrorCode.none, answers, result


describe_as_classic = bridge.describe_as_classic


__all__ = ["classic_join", "classic_sync", "classic_heartbeat", "classic_leave", "describe_as_classic"]
