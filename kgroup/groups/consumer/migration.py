"""Online migration between classic and consumer groups (KIP-848, "upgrade/downgrade").

- **Upgrade**: the first ConsumerGroupHeartbeat to a non-empty classic group using the
  consumer embedded protocol converts it. Every classic member becomes a consumer-group
  member that keeps its last assignment (as current and target), at the classic generation.
- Classic members then keep speaking JoinGroup/SyncGroup/Heartbeat/LeaveGroup; the
  coordinator translates: a JoinGroup is a heartbeat with the subscription and owned
  partitions of its ConsumerProtocol bytes, SyncGroup returns the member's current
  assignment, and Heartbeat answers REBALANCE_IN_PROGRESS while the member must rejoin.
- **Downgrade**: when the last consumer-protocol member leaves and only classic members
  remain, the group converts back to a classic group holding the consumer group's target
  assignment, and a rebalance starts.

`group.consumer.migration.policy` (disabled | upgrade | downgrade | bidirectional) gates both.
The same hooks (`classic_join`, `classic_sync`, ...) serve classic members of a Streams group
(`streams/migration.py`, KIP-1071); what both need is in `kgroup.groups.classic_bridge`.
"""
from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

from kgroup.errors import ErrorCode, KafkaError
from kgroup.groups import classic_bridge as bridge
from kgroup.groups.classic import ClassicGroup
from kgroup.groups.classic_bridge import join_error as _join_error
from kgroup.groups.modern import MemberState, client_member_id, frozen
from kgroup.protocol import get, ms
from kgroup.protocol.consumer_protocol import (Assignment as WireAssignment, ConsumerProtocolError,
                                               decode_subscription, decode_assignment, encode_assignment)
from kgroup.runtime import PendingResponse, Result

from . import group as G
from .group import CONSUMER_PROTOCOL_TYPE, ClassicMemberMetadata, ConsumerGroup, ConsumerGroupMember

if TYPE_CHECKING:
    from kgroup.coordinator import Coordinator


def _policy(c: "Coordinator") -> str:
    return c.config["group.consumer.migration.policy"]


def _by_name(c: "Coordinator", pairs) -> dict[uuid.UUID, set[int]]:
    out: dict[uuid.UUID, set[int]] = {}
    for topic, p in pairs:
        if topic in c.cluster:
            out.setdefault(c.cluster.topic_id(topic), set()).add(p)
    return out


def _wire_assignment(c: "Coordinator", assignment) -> WireAssignment:
    pairs = []
    for tid, parts in assignment.items():
        try:
            name = c.cluster.topic_name(tid)
        except KeyError:
            continue
        pairs += [(name, p) for p in parts]
    return WireAssignment(pairs)


# ---------------------------------------------------------------------------------------
# Upgrade

def convert_to_consumer_group(c: "Coordinator", classic: ClassicGroup, records: list) -> ConsumerGroup:
    """Kafka's `validateOnlineUpgrade` + `convertToConsumerGroup`."""
    gid = classic.group_id
    if _policy(c) not in ("upgrade", "bidirectional"):
        raise KafkaError(ErrorCode.group_id_not_found, f"Cannot upgrade classic group {gid} to consumer group "
                         "because online upgrade is disabled.")
    if not classic.uses_consumer_protocol():
        raise KafkaError(ErrorCode.group_id_not_found, f"Cannot upgrade classic group {gid} to consumer group "
                         "because the group does not use the consumer embedded protocol.")
    if len(classic.members) > c.config["group.consumer.max.size"]:
        raise KafkaError(ErrorCode.group_id_not_found, f"Cannot upgrade classic group {gid} to consumer group "
                         "because the group size exceeds the consumer group maximum size.")
    group = ConsumerGroup(gid)
    generation = classic.generation_id
    group.group_epoch = group.assignment_epoch = generation
    try:
        for m in classic.members.values():
            sub, _ = decode_subscription(m.metadata(classic.protocol_name))
            assigned = _by_name(c, decode_assignment(m.assignment)[0].partitions) if m.assignment else {}
            member = ConsumerGroupMember(
                m.member_id, instance_id=m.group_instance_id, rack_id=sub.rack_id,
                rebalance_timeout_ms=m.rebalance_timeout_ms, client_id=m.client_id, client_host=m.client_host,
                subscribed_topic_names=frozenset(sub.topics), member_epoch=generation,
                previous_member_epoch=generation, state=MemberState.STABLE,
                assigned_partitions={t: {p: generation for p in ps} for t, ps in assigned.items()},
                classic_member_metadata=ClassicMemberMetadata(m.session_timeout_ms, tuple(m.protocols)))
            group.target_assignment[m.member_id] = frozen(assigned)
            group.update_member(member)
    except (ConsumerProtocolError, KeyError, ValueError) as e:
        raise KafkaError(ErrorCode.group_id_not_found, f"Cannot upgrade classic group {gid} to consumer group "
                         "because the embedded consumer protocol is malformed.") from e
    from kgroup.groups.metadata_hash import metadata_hash
    group.metadata_hash = metadata_hash(group.subscribed_topic_names(), c.cluster)
    # Members waiting in a join or sync phase are told to rejoin the new group.
    bridge.release_waiting_members(classic)
    records += classic.tombstones()
    records += [G.member_record(gid, m) for m in group.members.values()]
    records.append(G.group_epoch_record(gid, group.group_epoch, group.metadata_hash))
    records += [G.target_member_record(gid, mid, group.target_assignment[mid]) for mid in group.members]
    records.append(G.target_epoch_record(gid, group.group_epoch))
    records += [G.current_assignment_record(gid, m) for m in group.members.values()]
    from .protocol import schedule_session_timeout
    for m in group.members.values():
        schedule_session_timeout(c, gid, m.member_id, m.classic_member_metadata.session_timeout_ms)
    return group


# ---------------------------------------------------------------------------------------
# Classic members inside a consumer group

def _join_key(group_id: str, member_id: str) -> str:
    return bridge.join_key("consumer", group_id, member_id)


def _sync_key(group_id: str, member_id: str) -> str:
    return bridge.sync_key("consumer", group_id, member_id)


def classic_join(group: ConsumerGroup, c: "Coordinator", req: Any, version: int, future: PendingResponse) -> Result:
    """Kafka's `classicGroupJoinToConsumerGroup`."""
    from . import protocol as P
    gid = group.group_id
    instance_id = get(req, "group_instance_id")
    protocols = [(p.name, bytes(p.metadata)) for p in req.protocols]
    member_id = req.member_id
    unknown = member_id == ""
    if unknown:
        member_id = client_member_id(c)
    try:
        P.throw_if_full(c, group, member_id)
        if req.protocol_type != CONSUMER_PROTOCOL_TYPE or not protocols or not _supports(group, protocols):
            raise KafkaError(ErrorCode.inconsistent_group_protocol, f"Member {member_id}'s protocols are not supported.")
        if unknown and instance_id is None and version >= 4:
            future.complete(_join_error(member_id, ErrorCode.member_id_required))
            return Result(replay=False)
        records: list = []
        replaced = None
        if instance_id is None:
            member = P.dynamic_member(group, member_id, -1, {}, True, classic=True)
        else:
            member, replaced = P.static_member(group, member_id, -1, instance_id, {}, unknown, records, classic=True)
            if replaced is not None:
                P.cancel_timers(c, gid, replaced.member_id)
        sub, _ = decode_subscription(protocols[0][1])
    except KafkaError as e:
        future.complete(_join_error(member_id if not unknown else "", e.code))
        return Result(replay=False)
    except (ConsumerProtocolError, ValueError):
        future.complete(_join_error(member_id, ErrorCode.inconsistent_group_protocol))
        return Result(replay=False)
    rebalance_ms, session_ms = ms(req.rebalance_timeout), ms(req.session_timeout)
    updated = member.replace(
        instance_id=instance_id if instance_id is not None else member.instance_id,
        rack_id=sub.rack_id if sub.rack_id is not None else member.rack_id,
        rebalance_timeout_ms=rebalance_ms if rebalance_ms != -1 else member.rebalance_timeout_ms,
        subscribed_topic_names=frozenset(sub.topics),
        client_id=c.request_context.client_id, client_host=c.request_context.client_host,
        classic_member_metadata=ClassicMemberMetadata(session_ms, tuple(protocols)))
    changed = False
    if updated != member:
        records.append(G.member_record(gid, updated))
        changed = updated.subscribed_topic_names != member.subscribed_topic_names
    change = P.GroupChange(group, updated, replaced)
    group_epoch = group.group_epoch
    if changed or group.has_metadata_expired(c.now(), c.cluster.metadata_version):
        group_epoch = P.update_subscription_metadata(c, change, changed, records)
    if group_epoch > group.assignment_epoch:
        target = P.update_target_assignment(c, change, group_epoch, records).get(member_id, {})
        target_epoch = group_epoch
    else:
        target_epoch, target = group.assignment_epoch, change.target.get(member_id, {})
    owned = _by_name(c, sub.owned_partitions)
    reconciled = P.maybe_reconcile(c, change, updated, target_epoch, target, owned, changed, records)
    c.timers.cancel(_join_key(gid, member_id))
    P.schedule_session_timeout(c, gid, member_id, session_ms)
    _schedule_sync_timeout(c, gid, member_id, rebalance_ms)
    future.complete({"error_code": ErrorCode.none, "generation_id": reconciled.member_epoch,
                     "protocol_type": CONSUMER_PROTOCOL_TYPE, "protocol_name": protocols[0][0], "leader": "",
                     "skip_assignment": False, "member_id": member_id, "members": [], "throttle_time": 0})
    return Result(None, records)


def _supports(group: ConsumerGroup, protocols: list[tuple[str, bytes]]) -> bool:
    """Kafka's `supportsClassicProtocols`: one of the member's protocols is supported by every
    classic member of the group (any protocol will do while there is none)."""
    classic = [m for m in group.members.values() if m.uses_classic_protocol]
    if not classic:
        return bool(protocols)
    return any(all(name in {n for n, _ in m.classic_member_metadata.supported_protocols} for m in classic)
               for name, _ in protocols)


def _schedule_sync_timeout(c: "Coordinator", group_id: str, member_id: str, timeout_ms: int) -> None:
    from .protocol import fence_member_by_id
    bridge.schedule_sync_timeout(c, "consumer", group_id, member_id, timeout_ms, fence_member_by_id)


def _schedule_join_timeout_if_absent(c: "Coordinator", group_id: str, member_id: str, timeout_ms: int) -> None:
    from .protocol import fence_member_by_id
    bridge.schedule_join_timeout_if_absent(c, "consumer", group_id, member_id, timeout_ms, fence_member_by_id)




def _must_rejoin(c: "Coordinator", group: ConsumerGroup, member: ConsumerGroupMember) -> bool:
    """A classic member rejoins when the group moved on, it must revoke, or what it waits for is free."""
    if member.member_epoch < group.group_epoch or member.state == MemberState.UNREVOKED_PARTITIONS:
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
        from .protocol import fence_member_by_id
        member = bridge.classic_member(group, req.member_id, get(req, "group_instance_id"))
        protocol_name = bridge.check_classic_sync(c, "consumer", group, member, req, fence_member_by_id)
    except KafkaError as e:
        future.complete({"error_code": e.code, "assignment": b"", "protocol_type": None, "protocol_name": None})
        return Result(replay=False)
    from .protocol import schedule_session_timeout
    c.timers.cancel(_sync_key(gid, member.member_id))
    schedule_session_timeout(c, gid, member.member_id, member.classic_member_metadata.session_timeout_ms)
    _, sub_version = decode_subscription(member.classic_member_metadata.supported_protocols[0][1])
    data = encode_assignment(_wire_assignment(c, member.assigned_partitions), sub_version)
    future.complete({"error_code": ErrorCode.none, "assignment": data, "protocol_type": CONSUMER_PROTOCOL_TYPE,
                     "protocol_name": protocol_name})
    return Result(replay=False)


def classic_heartbeat(group: ConsumerGroup, c: "Coordinator", req: Any) -> ErrorCode:
    """Kafka's `classicGroupHeartbeatToConsumerGroup`."""
    member = bridge.classic_member(group, req.member_id, get(req, "group_instance_id"))
    if req.generation_id != member.member_epoch:
        raise KafkaError(ErrorCode.illegal_generation)
    from .protocol import schedule_session_timeout
    schedule_session_timeout(c, group.group_id, member.member_id, member.classic_member_metadata.session_timeout_ms)
    if _must_rejoin(c, group, member):
        _schedule_join_timeout_if_absent(c, group.group_id, member.member_id, member.rebalance_timeout_ms)
        return ErrorCode.rebalance_in_progress
    return ErrorCode.none


def classic_leave(group: ConsumerGroup, c: "Coordinator", identities: list[tuple[str, str | None]]):
    """Kafka's `classicGroupLeaveToConsumerGroup`: per-member answers, then one fencing."""
    from .protocol import fence_members
    answers, leaving = bridge.leaving_members(group, identities)
    result = fence_members(c, group, leaving, None)
    return ErrorCode.none, answers, result


describe_as_classic = bridge.describe_as_classic


# ---------------------------------------------------------------------------------------
# Downgrade

def maybe_downgrade(c: "Coordinator", group: ConsumerGroup, leaving: list[ConsumerGroupMember], response: Any) -> Result | None:
    """Kafka's `validateOnlineDowngradeWithFencedMembers` + `convertToClassicGroup`."""
    leaving_ids = {m.member_id for m in leaving}
    remaining = [m for m in group.members.values() if m.member_id not in leaving_ids]
    if not remaining or not all(m.uses_classic_protocol for m in remaining):
        return None
    if _policy(c) not in ("downgrade", "bidirectional"):
        return None
    if len(remaining) > c.config["group.max.size"]:
        return None
    from kgroup.groups.classic import protocol as CP
    gid = group.group_id
    records = group.tombstones()
    # Kafka builds the classic group directly in Stable at the consumer group's epoch.
    def assignment_of(m: ConsumerGroupMember, metadata: bytes) -> bytes:
        _, sub_version = decode_subscription(metadata)
        return encode_assignment(_wire_assignment(c, group.target_assignment.get(m.member_id, {})), sub_version)
    classic = bridge.classic_group_for_downgrade(
        c, gid, group.group_epoch, CONSUMER_PROTOCOL_TYPE,
        [(m, m.classic_member_metadata) for m in remaining], assignment_of)
    records.append(classic.metadata_record(classic.group_assignment()))
    from .protocol import cancel_timers
    for m in group.members.values():
        cancel_timers(c, gid, m.member_id)
    # The classic group replaces the consumer group at once (Kafka updates the state directly
    # and does not replay these records).
    c.groups[gid] = classic
    for cm in classic.members.values():
        CP.reschedule_heartbeat(c, classic, cm)
    rebalance = CP.prepare_rebalance(c, classic, f"Downgrade group {gid} from consumer to classic for member leaving.")
    return Result(response, list(records) + list(rebalance.records), replay=False)


__all__ = ["convert_to_consumer_group", "maybe_downgrade", "classic_join", "classic_sync", "classic_heartbeat",
           "classic_leave", "describe_as_classic"]
