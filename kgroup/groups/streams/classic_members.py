"""Classic-protocol members inside a Streams group (KIP-1071 online migration, profile `kip`).

After an upgrade (`migration`), classic Kafka Streams members keep speaking JoinGroup/SyncGroup/
Heartbeat/LeaveGroup and the Streams group translates: a JoinGroup is a heartbeat whose owned
active and standby tasks are read from the SubscriptionInfo (warm-ups are standbys on the classic
protocol); SyncGroup returns the member's current tasks as an AssignmentInfo (warm-ups as
standbys again); Heartbeat answers REBALANCE_IN_PROGRESS while the member has to rejoin. One
classic member holding warm-up tasks is asked for a probing rebalance
(AssignmentInfo.nextRebalanceMs), so its next JoinGroup reports how far the warm-ups got.
Under profile `kafka` these refuse, as Kafka does. A JoinGroup to an *empty* Streams group
replaces it with a classic group under both profiles (Kafka's `maybeDeleteEmptyStreamsGroup`).

The classic handlers find these hooks on `StreamsGroup` (set in the package's `__init__`).
This module sits above the heartbeat (`protocol`) and uses its member steps.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kgroup.assignors.streams.api import TaskSets
from kgroup.errors import ErrorCode, KafkaError
from kgroup.groups import classic_bridge as bridge
from kgroup.groups.classic import protocol as CP
from kgroup.groups.classic_bridge import ClassicMemberMetadata, join_error
from kgroup.groups.modern import MemberState, client_member_id
from kgroup.protocol import get, ms
from kgroup.protocol.consumer_protocol import decode_subscription
from kgroup.protocol.streams_protocol import LATEST_OFFSET, NO_FOLLOWUP_REBALANCE, decode_subscription_info
from kgroup.runtime import PendingResponse, Result

from . import group as G
from . import protocol as P
from .group import EMPTY_TASKS, StreamsGroup, StreamsGroupMember
from .migration import (CONSUMER_PROTOCOL_TYPE, KIND, MALFORMED, assignment_bytes, endpoint_of, migration_enabled,
                        reported_offsets)
from .reconciliation import is_unreleased

if TYPE_CHECKING:
    from kgroup.coordinator import Coordinator

#: Kafka Streams' `probing.rebalance.interval.ms` default: when a classic member asked to
#: probe rejoins (the KIP does not say; the client's own default is the natural choice).
PROBING_REBALANCE_INTERVAL_MS = 600_000


def _owned_from_subscription(info: Any, member: StreamsGroupMember) -> TaskSets:
    """Owned tasks as the KIP reads them from the SubscriptionInfo: active = running (offset sum
    -2), standby = the rest; a standby the member holds as a warm-up counts as that warm-up
    (the classic protocol has no warm-ups, KIP-1071)."""
    active = [t for t, o in info.task_offset_sums.items() if o == LATEST_OFFSET]
    others = [t for t, o in info.task_offset_sums.items() if o != LATEST_OFFSET]
    warm = member.owned().warmup_ids()
    return TaskSets.of(active=active, standby=[t for t in others if t not in warm],
                       warmup=[t for t in others if t in warm])


def classic_join(group: StreamsGroup, c: "Coordinator", req: Any, version: int, future: PendingResponse) -> Result:
    """A classic Kafka Streams member's JoinGroup, served as a heartbeat (KIP-1071)."""
    if not group.members:
        return _replace_empty_group(group, c, req, version, future)
    if not migration_enabled(c):
        # Kafka: a classic member cannot join a Streams group (nothing is written).
        future.complete(join_error("", ErrorCode.inconsistent_group_protocol))
        return Result(replay=False)
    gid = group.group_id
    join = bridge.ClassicJoin.of(c, req, client_member_id)
    member_id, unknown, instance_id, protocols = join.member_id, join.unknown, join.instance_id, join.protocols
    try:
        join.check_protocols(group, req)
        if join.member_id_required(version):
            future.complete(join_error(member_id, ErrorCode.member_id_required))
            return Result(replay=False)
        known = group.members.get(member_id)
        if known is not None and not known.uses_classic_protocol:
            raise KafkaError(ErrorCode.unknown_member_id, f"Member {member_id} does not use the classic protocol.")
        member, replaced = P.lookup_member(group, member_id, instance_id, True)
        P.throw_if_full(c, group, member_id, instance_id)
        sub, _ = decode_subscription(protocols[0][1])
        info = decode_subscription_info(sub.user_data or b"")
    except KafkaError as e:
        future.complete(join_error(member_id if not unknown else "", e.code))
        return Result(replay=False)
    except MALFORMED:
        future.complete(join_error(member_id, ErrorCode.inconsistent_group_protocol))
        return Result(replay=False)
    rebalance_ms, session_ms = ms(req.rebalance_timeout), ms(req.session_timeout)
    new_member = member is None
    base = member if member is not None else StreamsGroupMember(member_id)
    updated = base.replace(
        instance_id=instance_id if instance_id is not None else base.instance_id,
        rack_id=sub.rack_id if sub.rack_id is not None else base.rack_id,
        rebalance_timeout_ms=rebalance_ms if rebalance_ms != -1 else base.rebalance_timeout_ms,
        # A classic member runs whatever topology the group has: it is never stale.
        topology_epoch=group.topology_epoch if group.topology is not None else base.topology_epoch,
        process_id=info.process_id, user_endpoint=endpoint_of(info), client_tags=info.client_tags,
        client_id=c.request_context.client_id, client_host=c.request_context.client_host,
        classic_member_metadata=ClassicMemberMetadata(session_ms, tuple(protocols)))
    offsets = reported_offsets(info)
    group.record_task_offsets(member_id, updated.process_id, offsets, None)
    owned = _owned_from_subscription(info, updated)
    records: list = []
    topology = group.topology
    step = P.advance_member(c, group, base, updated, new_member=new_member, replaced=replaced, new_topology=None,
                            topology=topology, configured=group.configured_topology(topology), offsets=offsets,
                            owned=owned, records=records)
    c.timers.cancel(bridge.join_key(KIND, gid, member_id))
    P.schedule_session_timeout(c, gid, member_id, session_ms)
    bridge.schedule_sync_timeout(c, KIND, gid, member_id, rebalance_ms, P.fence_member_by_id)
    # The generation a classic member sees is its member epoch (KIP-1071: "The members still on
    # the classic protocol receive the member epoch through the JoinGroup response").
    future.complete({"error_code": ErrorCode.none, "generation_id": step.member.member_epoch,
                     "protocol_type": CONSUMER_PROTOCOL_TYPE, "protocol_name": protocols[0][0], "leader": "",
                     "skip_assignment": False, "member_id": member_id, "members": [], "throttle_time": 0})
    return Result(None, records, then=step.follow_ups)




def _replace_empty_group(group: StreamsGroup, c: "Coordinator", req: Any, version: int,
                        future: PendingResponse) -> Result:
    """A JoinGroup to an empty Streams group replaces it with a classic group (Kafka's
    `classicGroupJoin` -> `maybeDeleteEmptyStreamsGroup`; there is nobody to migrate, so under
    both profiles): the group's tombstones first, then the join as a new classic group answers it."""
    group.before_delete(c)   # its initial-rebalance-delay timer goes with it

    def join_as_classic() -> Result:
        joined = CP.join_group(c, req, version)
        joined.response.add_done_callback(lambda answer: future.complete(answer.data))
        return Result(None, joined.records, replay=joined.replay, then=joined.then)
    return Result(None, group.tombstones(), then=[join_as_classic])


def _waited_for_tasks_free(group: StreamsGroup, member: StreamsGroupMember) -> bool:
    """Some task the member waits for (UNRELEASED) has been let go by its holder."""
    target = group.target_assignment.get(member.member_id, EMPTY_TASKS)
    missing = G.difference(target, member.assigned)
    return any(not is_unreleased(role, member, task, group)
               for role, tasks in (("active", missing.active_ids()), ("standby", missing.standby_ids()),
                                   ("warmup", missing.warmup_ids()))
               for task in tasks)


def must_rejoin(group: StreamsGroup, member: StreamsGroupMember) -> bool:
    """A classic member rejoins when the group moved on, it must revoke, or what it waits for is free."""
    if member.member_epoch < group.group_epoch or member.state == MemberState.UNREVOKED_PARTITIONS:
        return True
    return member.state == MemberState.UNRELEASED_PARTITIONS and _waited_for_tasks_free(group, member)


def probing_member(group: StreamsGroup) -> str | None:
    """KIP-1071: "The group coordinator chooses one of the Streams clients on the classic
    protocol to trigger a probing rebalance" — the first classic member (by member id) running
    warm-up tasks, since only its JoinGroup can say how far they got."""
    holders = sorted(m.member_id for m in group.members.values() if m.uses_classic_protocol and m.assigned.warmup)
    return holders[0] if holders else None


def classic_sync(group: StreamsGroup, c: "Coordinator", req: Any, version: int, future: PendingResponse) -> Result:
    """A classic member's SyncGroup: its current tasks (KIP-1071: "the SyncGroup API gets back
    the task assignment"), warm-ups as standbys."""
    def fail(code: ErrorCode) -> Result:
        future.complete({"error_code": code, "assignment": b"", "protocol_type": None, "protocol_name": None})
        return Result(replay=False)
    if not migration_enabled(c):
        return fail(ErrorCode.unknown_member_id)
    gid = group.group_id
    try:
        member = bridge.classic_member(group, req.member_id, get(req, "group_instance_id"))
        protocol_name = bridge.check_classic_sync(c, KIND, group, member, req, P.fence_member_by_id)
        sub, _ = decode_subscription(member.classic_member_metadata.supported_protocols[0][1])
        info = decode_subscription_info(sub.user_data or b"")
    except KafkaError as e:
        return fail(e.code)
    except MALFORMED:
        return fail(ErrorCode.inconsistent_group_protocol)
    c.timers.cancel(bridge.sync_key(KIND, gid, member.member_id))
    P.schedule_session_timeout(c, gid, member.member_id, member.classic_member_metadata.session_timeout_ms)
    probe = probing_member(group) == member.member_id
    data = assignment_bytes(c, group, member.member_id, member.assigned, info.version,
                            next_rebalance_ms=c.now() + PROBING_REBALANCE_INTERVAL_MS if probe
                            else NO_FOLLOWUP_REBALANCE)
    future.complete({"error_code": ErrorCode.none, "assignment": data, "protocol_type": CONSUMER_PROTOCOL_TYPE,
                     "protocol_name": protocol_name})
    return Result(replay=False)


def classic_heartbeat(group: StreamsGroup, c: "Coordinator", req: Any) -> ErrorCode:
    """A classic member's Heartbeat: its session, and REBALANCE_IN_PROGRESS when it must rejoin."""
    if not migration_enabled(c):
        raise KafkaError(ErrorCode.unknown_member_id, f"group {group.group_id} is not a classic group")
    member = bridge.classic_member(group, req.member_id, get(req, "group_instance_id"))
    if req.generation_id != member.member_epoch:
        raise KafkaError(ErrorCode.illegal_generation)
    P.schedule_session_timeout(c, group.group_id, member.member_id, member.classic_member_metadata.session_timeout_ms)
    if must_rejoin(group, member):
        bridge.schedule_join_timeout_if_absent(c, KIND, group.group_id, member.member_id,
                                               member.rebalance_timeout_ms, P.fence_member_by_id)
        return ErrorCode.rebalance_in_progress
    return ErrorCode.none


def classic_leave(group: StreamsGroup, c: "Coordinator", identities: list[tuple[str, str | None]]):
    """A classic member's LeaveGroup: per-member answers, then one removal (group epoch bump)."""
    if not migration_enabled(c):
        return ErrorCode.unknown_member_id, [], Result(replay=False)
    answers, leaving = bridge.leaving_members(group, identities)
    result = P.fence_members(c, group, leaving, None) if leaving else Result(replay=False)
    return ErrorCode.none, answers, result


describe_as_classic = bridge.describe_as_classic


__all__ = ["classic_join", "classic_sync", "classic_heartbeat", "classic_leave", "describe_as_classic",
           "must_rejoin", "probing_member", "PROBING_REBALANCE_INTERVAL_MS"]
