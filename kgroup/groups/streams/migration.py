"""Online migration between classic groups and Streams groups (KIP-1071, "Online Migration
from a Classic Consumer Group to a Streams Group"), under profile `kip`: the conversions.

- **Upgrade**: the first StreamsGroupHeartbeat to a classic group *with members* converts it.
  The generation becomes the group epoch; every classic member becomes a Streams member at
  that epoch holding the tasks of its last classic assignment (Kafka Streams' AssignmentInfo),
  with the process id, endpoint and client tags of its SubscriptionInfo.
- Classic members then keep speaking JoinGroup/SyncGroup/Heartbeat/LeaveGroup
  (`classic_members`).
- **Downgrade**: when the last Streams-protocol member leaves and only classic members remain,
  the group turns back into a classic group (the Streams records are deleted) holding the
  Streams group's target assignment, and a rebalance starts.

Under profile `kafka` none of this exists (Apache Kafka has not built it): only an empty classic
group converts, and the other protocol is refused while members remain.

Where this is the same as KIP-848's migration (`consumer/migration.py`), the shared parts live
in `kgroup.groups.classic_bridge`. As there, this module sits below the heartbeat (`protocol`),
which calls both conversions; the caller schedules the converted members' session timeouts.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kgroup.assignors.streams.api import TaskId, TaskSets
from kgroup.errors import ErrorCode, KafkaError
from kgroup.groups import classic_bridge as bridge
from kgroup.groups.classic import ClassicGroup
from kgroup.groups.classic import protocol as CP
from kgroup.groups.classic_bridge import ClassicMemberMetadata
from kgroup.groups.modern import MemberState
from kgroup.protocol.consumer_protocol import (Assignment as WireAssignment, ConsumerProtocolError,
                                               decode_assignment, decode_subscription, encode_assignment)
from kgroup.protocol.streams_protocol import (LATEST_OFFSET, LATEST_SUPPORTED_VERSION, NO_FOLLOWUP_REBALANCE,
                                              AssignmentInfo, StreamsProtocolError, decode_assignment_info,
                                              decode_subscription_info, encode_assignment_info)
from kgroup.runtime import Result

from . import group as G
from .group import EMPTY_TASKS, Endpoint, StreamsGroup, StreamsGroupMember, endpoint_to_partitions
from .timers import cancel_timers

if TYPE_CHECKING:
    from kgroup.coordinator import Coordinator

CONSUMER_PROTOCOL_TYPE = "consumer"
KIND = "streams"

#: what a classic member's bytes that Kafka Streams did not write raise when read
MALFORMED = (ConsumerProtocolError, StreamsProtocolError, KeyError, ValueError)


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


def reported_offsets(info: Any) -> dict[TaskId, int]:
    """Offset sums of the tasks it does not run as active (those are caught up by definition)."""
    return {t: o for t, o in info.task_offset_sums.items() if o != LATEST_OFFSET}


def endpoint_of(info: Any) -> Endpoint | None:
    return None if info.user_endpoint is None else Endpoint(*info.user_endpoint)


# ---------------------------------------------------------------------------------------
# Upgrade

def convert_to_streams_group(c: "Coordinator", classic: ClassicGroup, topology_epoch: int, records: list,
                             assignment_configs: dict[str, str]) -> StreamsGroup:
    """KIP-1071: "the generation ID becomes the group epoch". Members keep their classic tasks,
    as current and target assignment, at that epoch; the group keeps `assignment_configs`."""
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
    group.assignment_configs = dict(assignment_configs)
    try:
        for m in classic.members.values():
            sub, _ = decode_subscription(m.metadata(classic.protocol_name))
            info = decode_subscription_info(sub.user_data or b"")
            assigned = _tasks_of_assignment(m.assignment)
            member = StreamsGroupMember(
                m.member_id, instance_id=m.group_instance_id, rack_id=sub.rack_id, client_id=m.client_id,
                client_host=m.client_host, rebalance_timeout_ms=m.rebalance_timeout_ms,
                topology_epoch=topology_epoch, process_id=info.process_id, user_endpoint=endpoint_of(info),
                client_tags=info.client_tags, member_epoch=generation, previous_member_epoch=generation,
                state=MemberState.STABLE, assigned=assigned,
                classic_member_metadata=ClassicMemberMetadata(m.session_timeout_ms, tuple(m.protocols)))
            group.target_assignment[m.member_id] = assigned
            group.update_member(member)
            group.record_task_offsets(m.member_id, info.process_id, reported_offsets(info), None)
    except MALFORMED as e:
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
    return group


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
    for e in endpoint_to_partitions(group, configured):
        host = (e["user_endpoint"]["host"], e["user_endpoint"]["port"])
        by_host[host] = tuple((tp["topic"], p) for tp in e["active_partitions"] for p in tp["partitions"])
        standby_by_host[host] = tuple((tp["topic"], p) for tp in e["standby_partitions"] for p in tp["partitions"])
    info = AssignmentInfo(active_tasks=tuple(task for _, task in active), standby_tasks=standby,
                          partitions_by_host=by_host, standby_partitions_by_host=standby_by_host,
                          next_rebalance_ms=next_rebalance_ms,
                          version=min(max(subscription_version, 10), LATEST_SUPPORTED_VERSION))
    return encode_assignment(WireAssignment([tp for tp, _ in active], encode_assignment_info(info)))


# ---------------------------------------------------------------------------------------
# Downgrade

def maybe_downgrade(c: "Coordinator", group: StreamsGroup, leaving: list[StreamsGroupMember],
                    response: Any) -> Result | None:
    """KIP-1071: "When the last consumer of a Streams client using the new Streams rebalance
    protocol leaves the group, the group is converted back to a classic group"; "the records
    of the Streams protocol are deleted". None: the group stays a Streams group."""
    if not migration_enabled(c):
        return None
    leaving_ids = {m.member_id for m in leaving}
    remaining = [m for m in group.members.values() if m.member_id not in leaving_ids]
    if not remaining or not all(m.uses_classic_protocol for m in remaining):
        return None
    if len(remaining) > c.config["group.max.size"]:
        return None
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


__all__ = ["convert_to_streams_group", "maybe_downgrade", "assignment_bytes", "migration_enabled",
           "reported_offsets", "endpoint_of", "MALFORMED", "CONSUMER_PROTOCOL_TYPE", "KIND"]
