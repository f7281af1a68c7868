"""Online migration between classic groups and Streams groups (KIP-1071, "Online Migration
from a Classic Consumer Group to a Streams Group"), under profile `kip`.

- **Upgrade**: the first StreamsGroupHeartbeat to a classic group *with members* converts it.
  The generation becomes the group epoch; every classic member becomes a Streams member at
  that epoch holding the tasks of its last classic assignment (Kafka Streams' AssignmentInfo),
  with the process id, endpoint and client tags of its SubscriptionInfo.
- Classic members keep speaking JoinGroup/SyncGroup/Heartbeat/LeaveGroup and the Streams group
  translates: a JoinGroup is a heartbeat whose owned active and standby tasks are read from the
  SubscriptionInfo (warm-ups are standbys on the classic protocol); SyncGroup returns the
  member's current tasks as an AssignmentInfo (warm-ups as standbys again); Heartbeat answers
  REBALANCE_IN_PROGRESS while the member has to rejoin. One classic member holding warm-up
  tasks is asked for a probing rebalance (AssignmentInfo.nextRebalanceMs), so its next
  JoinGroup reports how far the warm-ups got.
- **Downgrade**: when the last Streams-protocol member leaves and only classic members remain,
  the group turns back into a classic group (the Streams records are deleted) holding the
  Streams group's target assignment, and a rebalance starts.

Under profile `kafka` none of this exists (Apache Kafka has not built it): only an empty classic
group converts, and the other protocol is refused while members remain.

Where this is the same as KIP-848's migration (`consumer/migration.py`), the shared parts live
in `kgroup.groups.classic_bridge`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kgroup.assignors.streams.api import TaskId, TaskSets
from kgroup.errors import ErrorCode, KafkaError
from kgroup.groups import classic_bridge as bridge
from kgroup.groups.classic_bridge import ClassicMemberMetadata, join_error
from kgroup.groups.modern import MemberState, client_member_id
from kgroup.protocol import get, ms
from kgroup.protocol.consumer_protocol import (Assignment as WireAssignment, ConsumerProtocolError,
                                               decode_assignment, decode_subscription, encode_assignment)
from kgroup.protocol.streams_protocol import (LATEST_OFFSET, LATEST_SUPPORTED_VERSION, NO_FOLLOWUP_REBALANCE,
                                              AssignmentInfo, StreamsProtocolError, decode_assignment_info,
                                              decode_subscription_info, encode_assignment_info)
from kgroup.runtime import PendingResponse, Result

from . import group as G
from .group import EMPTY_TASKS, Endpoint, StreamsGroup, StreamsGroupMember

if TYPE_CHECKING:
    from kgroup.coordinator import Coordinator
    from kgroup.groups.classic import ClassicGroup

CONSUMER_PROTOCOL_TYPE = "consumer"
KIND = "streams"
#: Kafka Streams' `probing.rebalance.interval.ms` default: when a classic member asked to
#: probe rejoins (the KIP does not say; the client's own default is the natural choice).
PROBING_REBALANCE_INTERVAL_MS = 600_000

_MALFORMED = (ConsumerProtocolError, StreamsProtocolError, KeyError, ValueError)


def migration_enabled(c: "Coordinator") -> bool:
    return c.profile.streams_online_migration


# ---------------------------------------------------------------------------------------
# Reading Kafka Streams' classic-protocol bytes

def _tasks_of_assignment(data: bytes) -> TaskSets:
    """A classic member's tasks from its last assignment (ConsumerProtocolAssignment + AssignmentInfo)."""
    if not data:
        return EMPTY_TASKS
    wire, _ = decode_assignment(data)
    if not wire.user_data:
        return EMPTY_TASKS
    info = decode_assignment_info(wire.user_data)
    return TaskSets.of(active=info.active_tasks, standby=info.standby_tasks)


def _owned_from_subscription(info: Any, member: StreamsGroupMember) -> TaskSets:
    """Owned tasks as the KIP reads them from the SubscriptionInfo: active = running (offset sum
    -2), standby = the rest; a standby the member holds as a warm-up counts as that warm-up
    (the classic protocol has no warm-ups, KIP-1071)."""
    active = [t for t, o in info.task_offset_sums.items() if o == LATEST_OFFSET]
    others = [t for t, o in info.task_offset_sums.items() if o != LATEST_OFFSET]
    warm = member.owned().warmup_ids()
    return TaskSets.of(active=active, standby=[t for t in others if t not in warm],
                       warmup=[t for t in others if t in warm])


def _reported_offsets(info: Any) -> dict[TaskId, int]:
    """Offset sums of the tasks it does not run as active (those are caught up by definition)."""
    return {t: o for t, o in info.task_offset_sums.items() if o != LATEST_OFFSET}


def _endpoint(info: Any) -> Endpoint | None:
    return None if info.user_endpoint is None else Endpoint(*info.user_endpoint)


# ---------------------------------------------------------------------------------------
# Upgrade

def convert_to_streams_group(c: "Coordinator", classic: "ClassicGroup", topology_epoch: int,
                             records: list) -> StreamsGroup:
    """KIP-1071: "the generation ID becomes the group epoch". Members keep their classic tasks,
    as current and target assignment, at that epoch."""
    gid = classic.group_id
    if classic.protocol_type != CONSUMER_PROTOCOL_TYPE:
        raise KafkaError(ErrorCode.group_id_not_found, f"Cannot upgrade classic group {gid} to streams group "
                         "because the group does not use the consumer embedded protocol.")
    if len(classic.members) > c.config["group.streams.max.size"]:
        raise KafkaError(ErrorCode.group_id_not_found, f"Cannot upgrade classic group {gid} to streams group "
                         "because the group size exceeds the streams group maximum size.")
    group = StreamsGroup(gid, c.cluster)
    generation = classic.generation_id
    group.group_epoch = group.assignment_epoch = generation
    group.assignment_configs = _configs(c, gid)
    try:
        for m in classic.members.values():
            sub, _ = decode_subscription(m.metadata(classic.protocol_name))
            info = decode_subscription_info(sub.user_data or b"")
            assigned = _tasks_of_assignment(m.assignment)
            member = StreamsGroupMember(
                m.member_id, instance_id=m.group_instance_id, rack_id=sub.rack_id, client_id=m.client_id,
                client_host=m.client_host, rebalance_timeout_ms=m.rebalance_timeout_ms,
                topology_epoch=topology_epoch, process_id=info.process_id, user_endpoint=_endpoint(info),
                client_tags=info.client_tags, member_epoch=generation, previous_member_epoch=generation,
                state=MemberState.STABLE, assigned=assigned,
                classic_member_metadata=ClassicMemberMetadata(m.session_timeout_ms, tuple(m.protocols)))
            group.target_assignment[m.member_id] = assigned
            group.update_member(member)
            group.record_task_offsets(m.member_id, info.process_id, _reported_offsets(info), None)
    except _MALFORMED as e:
        raise KafkaError(ErrorCode.group_id_not_found, f"Cannot upgrade classic group {gid} to streams group "
                         "because the embedded Kafka Streams subscription is malformed.") from e
    # Members waiting in a join or sync phase are told to rejoin the new group.
    bridge.release_waiting_members(classic)
    records += classic.tombstones()
    records += [G.member_record(gid, m) for m in group.members.values()]
    records.append(G.group_epoch_record(gid, generation, 0, -1, group.assignment_configs))
    records += [G.target_member_record(gid, mid, group.target_assignment[mid]) for mid in group.members]
    records.append(G.target_epoch_record(gid, generation))
    records += [G.current_assignment_record(gid, m) for m in group.members.values()]
    from .protocol import schedule_session_timeout
    for m in group.members.values():
        schedule_session_timeout(c, gid, m.member_id, m.classic_member_metadata.session_timeout_ms)
    return group


def _configs(c: "Coordinator", gid: str) -> dict[str, str]:
    from .protocol import assignment_configs
    return assignment_configs(c, gid)


# ---------------------------------------------------------------------------------------
# Classic members inside a Streams group

def _supports(group: StreamsGroup, protocols: list[tuple[str, bytes]]) -> bool:
    """One of the member's protocols is supported by every classic member (Kafka's
    `supportsClassicProtocols`; any will do while there is none)."""
    classic = [m for m in group.members.values() if m.uses_classic_protocol]
    if not classic:
        return bool(protocols)
    return any(all(name in {n for n, _ in m.classic_member_metadata.supported_protocols} for m in classic)
               for name, _ in protocols)


def classic_join(group: StreamsGroup, c: "Coordinator", req: Any, version: int, future: PendingResponse) -> Result:
    """A classic Kafka Streams member's JoinGroup, served as a heartbeat (KIP-1071)."""
    if not migration_enabled(c):
        # Kafka: a classic member cannot join a Streams group (nothing is written).
        future.complete(join_error("", ErrorCode.inconsistent_group_protocol))
        return Result(replay=False)
    from . import protocol as P
    gid = group.group_id
    instance_id = get(req, "group_instance_id")
    protocols = [(p.name, bytes(p.metadata)) for p in req.protocols]
    member_id = req.member_id
    unknown = member_id == ""
    if unknown:
        member_id = client_member_id(c)
    try:
        if req.protocol_type != CONSUMER_PROTOCOL_TYPE or not protocols or not _supports(group, protocols):
            raise KafkaError(ErrorCode.inconsistent_group_protocol,
                             f"Member {member_id}'s protocols are not supported.")
        if unknown and instance_id is None and version >= 4:
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
    except _MALFORMED:
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
        process_id=info.process_id, user_endpoint=_endpoint(info), client_tags=info.client_tags,
        client_id=c.request_context.client_id, client_host=c.request_context.client_host,
        classic_member_metadata=ClassicMemberMetadata(session_ms, tuple(protocols)))
    offsets = _reported_offsets(info)
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




def _waited_for_tasks_free(group: StreamsGroup, member: StreamsGroupMember) -> bool:
    """Some task the member waits for (UNRELEASED) has been let go by its holder."""
    target = group.target_assignment.get(member.member_id, EMPTY_TASKS)
    missing = G.difference(target, member.assigned)
    for task in missing.active_ids():
        if group.active_task_epoch(task) == -1 and not group.held_in_process(member.process_id, task, member.member_id):
            return True
    for task in (*missing.standby_ids(), *missing.warmup_ids()):
        if not group.held_in_process(member.process_id, task, member.member_id):
            return True
    return False


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


def assignment_bytes(c: "Coordinator", group: StreamsGroup, member_id: str, tasks: TaskSets,
                     subscription_version: int, *, next_rebalance_ms: int = NO_FOLLOWUP_REBALANCE) -> bytes:
    """A ConsumerProtocolAssignment carrying `tasks` the way Kafka Streams reads them: the source
    partitions of the active tasks, and an AssignmentInfo whose active-task list is aligned with
    those partitions (sorted by topic and partition) and whose standbys include the warm-ups."""
    configured = group.configured_topology()
    subs = configured.subtopologies if configured is not None and configured.subtopologies else {}

    def partitions(task: TaskId) -> list[tuple[str, int]]:
        cs = subs.get(task[0])
        return [] if cs is None else [(t, task[1]) for t in (*cs.source_topics, *cs.repartition_source_topics)]
    active = sorted((tp, task) for task in tasks.active_ids() for tp in partitions(task))
    standby = {task: tuple(partitions(task)) for task in (*tasks.standby_ids(), *tasks.warmup_ids())}
    by_host: dict[tuple[str, int], tuple] = {}
    standby_by_host: dict[tuple[str, int], tuple] = {}
    from .protocol import endpoint_to_partitions
    for e in endpoint_to_partitions(group, configured):
        host = (e["user_endpoint"]["host"], e["user_endpoint"]["port"])
        by_host[host] = tuple((tp["topic"], p) for tp in e["active_partitions"] for p in tp["partitions"])
        standby_by_host[host] = tuple((tp["topic"], p) for tp in e["standby_partitions"] for p in tp["partitions"])
    info = AssignmentInfo(active_tasks=tuple(task for _, task in active), standby_tasks=standby,
                          partitions_by_host=by_host, standby_partitions_by_host=standby_by_host,
                          next_rebalance_ms=next_rebalance_ms,
                          version=min(max(subscription_version, 10), LATEST_SUPPORTED_VERSION))
    return encode_assignment(WireAssignment([tp for tp, _ in active], encode_assignment_info(info)))


def classic_sync(group: StreamsGroup, c: "Coordinator", req: Any, version: int, future: PendingResponse) -> Result:
    """A classic member's SyncGroup: its current tasks (KIP-1071: "the SyncGroup API gets back
    the task assignment"), warm-ups as standbys."""
    from . import protocol as P

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
    except _MALFORMED:
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
    from . import protocol as P
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
    from .protocol import fence_members
    if not migration_enabled(c):
        return ErrorCode.unknown_member_id, [], Result(replay=False)
    answers, leaving = bridge.leaving_members(group, identities)
    result = fence_members(c, group, leaving, None) if leaving else Result(replay=False)
    return ErrorCode.none, answers, result


describe_as_classic = bridge.describe_as_classic


# ---------------------------------------------------------------------------------------
# Downgrade

def maybe_downgrade(c: "Coordinator", group: StreamsGroup, leaving: list[StreamsGroupMember],
                    response: Any) -> Result | None:
    """KIP-1071: "When the last consumer of a Streams client using the new Streams rebalance
    protocol leaves the group, the group is converted back to a classic group"; "the records
    of the Streams protocol are deleted"."""
    if not migration_enabled(c):
        return None
    leaving_ids = {m.member_id for m in leaving}
    remaining = [m for m in group.members.values() if m.member_id not in leaving_ids]
    if not remaining or not all(m.uses_classic_protocol for m in remaining):
        return None
    if len(remaining) > c.config["group.max.size"]:
        return None
    from kgroup.groups.classic import protocol as CP
    gid = group.group_id
    records = group.tombstones()

    def assignment_of(m: StreamsGroupMember, metadata: bytes) -> bytes:
        sub, _ = decode_subscription(metadata)
        version = decode_subscription_info(sub.user_data or b"").version
        target = group.target_assignment.get(m.member_id, EMPTY_TASKS)
        return assignment_bytes(c, group, m.member_id, target, version)
    classic = bridge.classic_group_for_downgrade(c, gid, group.group_epoch, CONSUMER_PROTOCOL_TYPE,
                                                 [(m, m.classic_member_metadata) for m in remaining], assignment_of)
    records.append(classic.metadata_record(classic.group_assignment()))
    from .protocol import cancel_timers
    for m in group.members.values():
        cancel_timers(c, gid, m.member_id)
        c.timers.cancel(bridge.join_key(KIND, gid, m.member_id))
        c.timers.cancel(bridge.sync_key(KIND, gid, m.member_id))
    # As for KIP-848's downgrade, the classic group replaces the Streams group at once (Kafka
    # updates the state directly and does not replay these records).
    c.groups[gid] = classic
    for cm in classic.members.values():
        CP.reschedule_heartbeat(c, classic, cm)
    rebalance = CP.prepare_rebalance(c, classic, f"Downgrade group {gid} from streams to classic for member leaving.")
    return Result(response, list(records) + list(rebalance.records), replay=False)


__all__ = ["convert_to_streams_group", "maybe_downgrade", "classic_join", "classic_sync", "classic_heartbeat",
           "classic_leave", "describe_as_classic", "must_rejoin", "probing_member", "assignment_bytes",
           "PROBING_REBALANCE_INTERVAL_MS"]
