"""StreamsGroupHeartbeat (88) and StreamsGroupDescribe (89): KIP-1071 on the coordinator.

A heartbeat, in the KIP's "Request Handling" order:

1. validate the request (INVALID_REQUEST, STREAMS_INVALID_TOPOLOGY);
2. joining (member epoch 0): look up or create the group, check the topology epoch against
   the group's (a new group takes the member's topology; epoch+1 updates it under `kip`);
   otherwise look up the member (UNKNOWN_MEMBER_ID) and check its epoch (FENCED_MEMBER_EPOCH);
3. update the member (a StreamsGroupMemberMetadata record when it changed); a new member, a
   changed topology epoch, rack, client tags or process id, a caught-up warm-up task, new
   partition metadata or new assignment configs bump the **group epoch**;
4. configure the topology against the cluster (NOT_READY statuses; missing internal topics
   are created through the simulated cluster after this write);
5. when the group epoch is ahead of the assignment epoch, the task assignor computes a new
   target assignment (one batch: changed members + the epoch);
6. reconcile the member (`reconciliation.reconcile`).

Fields that did not change are left out of the response, as the KIP asks.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from kgroup.assignors.streams import TASK_ASSIGNOR_OVERRIDE, get_task_assignor
from kgroup.assignors.streams.api import (GroupSpec, MemberSpec, SubtopologySpec, TaskAssignorException, TaskId,
                                         TaskSets)
from kgroup.errors import ErrorCode, KafkaError
from kgroup.group_configs import GROUP_CONFIGS, group_config, group_configs_of
from kgroup.groups.kinds import STREAMS
from kgroup.groups.metadata_hash import metadata_hash
from kgroup.groups.modern import (LEAVE_GROUP_MEMBER_EPOCH, LEAVE_GROUP_STATIC_MEMBER_EPOCH,
                                  METADATA_REFRESH_INTERVAL_MS, MemberState, client_member_id, fence_by_id,
                                  handles_describe, restarts_sessions_on_load, target_assignment_due,
                                  throw_if_empty_string)
from kgroup.protocol import get, ms
from kgroup.runtime import Result, handles

from . import group as G
from . import internal_topics
from .configuration import ConfiguredTopology, Status, StatusInfo, unresolvable_subtopologies
from .group import (EMPTY_TASKS, Endpoint, StreamsGroup, StreamsGroupMember, StreamsGroupState, endpoint_to_partitions,
                    task_ids_data, tasks_from_ids)
from .migration import convert_to_streams_group, maybe_downgrade
from .reconciliation import reconcile
from .timers import cancel_timers, initial_delay_key, rebalance_key, session_key
from .topology import Topology, task_ids_valid, validate as validate_topology

if TYPE_CHECKING:
    from kgroup.coordinator import Coordinator

STREAMS_GROUP_HEARTBEAT = STREAMS.heartbeat_api
STREAMS_GROUP_DESCRIBE = STREAMS.describe_api
STREAMS_GROUP_TOPOLOGY_DESCRIPTION_UPDATE = 93


class Fenced(KafkaError):
    """FENCED_MEMBER_EPOCH for a known member (under `kip` the member is also removed)."""

    def __init__(self, member_id: str, message: str) -> None:
        super().__init__(ErrorCode.fenced_member_epoch, message)
        self.member_id = member_id


# ---------------------------------------------------------------------------------------
# Validation (KIP-1071 "Request Validation"; Kafka's throwIfStreamsGroupHeartbeatRequestIsInvalid)

def _invalid(message: str) -> KafkaError:
    return KafkaError(ErrorCode.invalid_request, message)


def _tasks(entries: Any) -> list[TaskId]:
    return [(t.subtopology_id, int(p)) for t in entries or () for p in t.partitions]


def validate_request(c: "Coordinator", req: Any) -> None:
    """Kafka's `throwIfStreamsGroupHeartbeatRequestIsUsingUnsupportedFeatures` and
    `throwIfStreamsGroupHeartbeatRequestIsInvalid`, in Kafka's order and words; the KIP's
    stricter rules on top under `kip` (`kgroup.profile`)."""
    kip = c.profile.streams_kip_request_validation
    epoch = req.member_epoch
    if not c.profile.streams_source_topic_regex and req.topology is not None \
            and any(sub.source_topic_regex for sub in req.topology.subtopologies):
        raise _invalid("Regular expressions for source topics are not supported yet.")
    if not kip or epoch != 0:
        throw_if_empty_string(req.member_id, "MemberId")
    throw_if_empty_string(req.group_id, "GroupId")
    throw_if_empty_string(req.instance_id, "InstanceId")
    throw_if_empty_string(req.rack_id, "RackId")
    if epoch == 0:
        rebalance_timeout = ms(req.rebalance_timeout)
        if not kip and rebalance_timeout == -1:
            raise _invalid("RebalanceTimeoutMs must be provided in first request.")
        if kip and rebalance_timeout <= 0:
            raise _invalid("RebalanceTimeoutMs must be larger than zero in the first heartbeat request.")
        for name, field in (("active_tasks", "ActiveTasks"), ("standby_tasks", "StandbyTasks"),
                            ("warmup_tasks", "WarmupTasks")):
            tasks = getattr(req, name)
            # KIP-1071 and Kafka's throwIfNotEmptyCollection: a non-null, empty list (an
            # entry with no partitions makes it non-empty)
            if tasks is None or len(tasks) > 0:
                raise _invalid(f"{field} must be empty when (re-)joining.")
        if req.topology is None:
            raise _invalid("Topology must be non-null when (re-)joining.")
        if kip and not req.topology.subtopologies:
            raise _invalid("Topology must be non-empty when (re-)joining.")  # KIP: "must be non-empty"
        for sub in req.topology.subtopologies:
            for t in sub.state_changelog_topics:
                if t.partitions != 0:
                    raise KafkaError(ErrorCode.streams_invalid_topology,
                                     f"Changelog topic {t.name} must have an undefined partition count, but it is "
                                     f"set to {t.partitions}.")
    elif epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
        if req.instance_id is None:
            raise _invalid("InstanceId can't be null.")
    elif epoch < LEAVE_GROUP_STATIC_MEMBER_EPOCH:
        raise _invalid(f"MemberEpoch is {epoch}, but must be greater than or equal to -2.")
    nulls = (req.active_tasks is None) + (req.standby_tasks is None) + (req.warmup_tasks is None)
    if nulls and nulls != 3:
        raise _invalid("If one task-type is non-null, all must be non-null.")
    if epoch != 0 and req.topology is not None:
        raise _invalid("Topology can only be provided when (re-)joining.")
    if kip and not nulls:
        sets = [set(_tasks(req.active_tasks)), set(_tasks(req.standby_tasks)), set(_tasks(req.warmup_tasks))]
        if (sets[0] & sets[1]) or (sets[0] & sets[2]) or (sets[1] & sets[2]):
            raise _invalid("ActiveTasks, StandbyTasks and WarmupTasks must be disjoint.")


def validate_new_topology(c: "Coordinator", topology: Topology) -> None:
    """STREAMS_INVALID_TOPOLOGY for a topology breaking the KIP's invariants."""
    validate_topology(topology, changelog_may_be_source=c.profile.streams_changelog_may_be_source)
    unresolvable = unresolvable_subtopologies(topology)
    if unresolvable:
        raise KafkaError(ErrorCode.streams_invalid_topology,
                         f"Subtopologies {', '.join(unresolvable)} read no source topic and only repartition "
                         "topics in a loop: their number of partitions cannot be derived.")


# ---------------------------------------------------------------------------------------
# Group and member lookup

def streams_group(c: "Coordinator", group_id: str) -> StreamsGroup:
    """The group a heartbeat names, never created (`getOrMaybeCreateStreamsGroup` without create)."""
    return get_or_create_group(c, group_id, False, [])


def get_or_create_group(c: "Coordinator", group_id: str, create: bool, records: list,
                        topology_epoch: int = 0) -> StreamsGroup:
    """Kafka's `getOrMaybeCreateStreamsGroup`: a new group lives in the handler until its
    records are replayed; an empty classic group gives way; under `kip` a classic group with
    members is converted (KIP-1071 online migration; its members get `topology_epoch`)."""
    group = c.groups.get(group_id)
    if isinstance(group, StreamsGroup):
        return group  # the common case, before anything else is built
    def from_classic(group: Any) -> StreamsGroup | None:
        if group.is_empty():
            records.extend(group.tombstones())
            return StreamsGroup(group_id, c.cluster)
        if not c.profile.streams_online_migration:
            return None
        converted = convert_to_streams_group(c, group, topology_epoch, records, assignment_configs(c, group_id))
        for m in converted.members.values():  # the classic members keep their session timeouts
            schedule_session_timeout(c, group_id, m.member_id, m.classic_member_metadata.session_timeout_ms)
        return converted
    return STREAMS.get_or_maybe_create(c, group_id, create, lambda: StreamsGroup(group_id, c.cluster), from_classic)


def throw_if_full(c: "Coordinator", group: StreamsGroup, member_id: str, instance_id: str | None) -> None:
    """GROUP_MAX_SIZE_REACHED for a new member; a known member id or a static member's
    replacement (a known instance id) is not a new member (PR #22245 review)."""
    limit = c.config["group.streams.max.size"]
    if len(group.members) >= limit and member_id not in group.members \
            and group.static_member(instance_id) is None:
        raise KafkaError(ErrorCode.group_max_size_reached,
                         f"The streams group has reached its maximum capacity of {limit} members.")


def lookup_member(group: StreamsGroup, member_id: str, instance_id: str | None,
                  joining: bool) -> tuple[StreamsGroupMember | None, StreamsGroupMember | None]:
    """The member the heartbeat is about (None: a new one), and the static member it replaces
    (PR #22245: a static member rejoining with a new member id takes over the old identity)."""
    member = group.members.get(member_id)
    if instance_id is None:
        # InstanceId may be left null when unchanged (the schema): a static member is then found by id.
        return (member if member is not None or joining else group.member(member_id)), None
    # Kafka's getOrMaybeCreateStaticStreamsGroupMember: the instance id decides, not the member id.
    existing = group.static_member(instance_id)
    if not joining:
        return group.checked_static_member(instance_id, member_id), None
    if existing is None:
        # A new static member, or (Kafka 4.4.0's getOrCreateDefaultMember, seen with the oracle) a
        # known member id joining with an instance id nobody holds: it stays the member it was,
        # tasks and epochs kept, and only its metadata record changes (no bump for static members
        # unless the KIP's list changed).
        return member, None
    if existing.member_id == member_id and existing.member_epoch != LEAVE_GROUP_STATIC_MEMBER_EPOCH:
        return existing, None  # a join re-sent while active: its state comes back, nothing changes
    if existing.member_epoch != LEAVE_GROUP_STATIC_MEMBER_EPOCH:
        raise KafkaError(ErrorCode.unreleased_instance_id,
                         f"Static member {member_id} with instance id {instance_id} cannot join the group "
                         f"because the instance id is owned by {existing.member_id} member.")
    # Back after a -2 leave, under a new member id or its own: a copy of the old member (its tasks,
    # at epoch 0) replaces it, the old records deleted first (Kafka's replaceStreamsMember).
    return existing.replace(member_id=member_id, member_epoch=0, previous_member_epoch=0), existing


def replace_member(records: list, group: StreamsGroup, old: StreamsGroupMember, new: StreamsGroupMember) -> None:
    """Tombstones for the old member id, records for the new one with its predecessor's target."""
    gid = group.group_id
    records += [G.current_assignment_tombstone(gid, old.member_id), G.target_member_tombstone(gid, old.member_id),
                G.member_tombstone(gid, old.member_id),
                G.member_record(gid, new),
                G.target_member_record(gid, new.member_id, group.target_assignment.get(old.member_id, EMPTY_TASKS)),
                G.current_assignment_record(gid, new)]


def _is_subset(owned: TaskSets | None, assigned: TaskSets) -> bool:
    if owned is None:
        return False
    return all(ps <= getattr(assigned, r).get(s, frozenset())
               for r in G.ROLES for s, ps in getattr(owned, r).items())


def check_member_epoch(member: StreamsGroupMember, received: int, owned: TaskSets | None) -> None:
    """FENCED_MEMBER_EPOCH unless the epoch is the member's, or its previous one with a subset
    of its tasks (the response that moved it may have been lost; KIP-848 rules)."""
    if received > member.member_epoch:
        raise Fenced(member.member_id, f"The streams group member has a greater member epoch ({received}) than the "
                     f"one known by the group coordinator ({member.member_epoch}). The member must abandon all "
                     "its partitions and rejoin.")
    if received < member.member_epoch and (received != member.previous_member_epoch
                                           or not _is_subset(owned, member.assigned)):
        raise Fenced(member.member_id, f"The streams group member has a smaller member epoch ({received}) than the "
                     f"one known by the group coordinator ({member.member_epoch}). The member must abandon all "
                     "its partitions and rejoin.")


def _owned(req: Any) -> TaskSets | None:
    """What the member says it owns (None unless all three lists were sent)."""
    if req.active_tasks is None or req.standby_tasks is None or req.warmup_tasks is None:
        return None
    return TaskSets(active=tasks_from_ids(req.active_tasks), standby=tasks_from_ids(req.standby_tasks),
                    warmup=tasks_from_ids(req.warmup_tasks))


# ---------------------------------------------------------------------------------------
# Effective per-group settings (dynamic group configs win over the coordinator's)

class Settings(NamedTuple):
    """The group settings a heartbeat reads, read in one pass (`settings`)."""
    session_timeout_ms: Any
    heartbeat_interval_ms: Any
    task_offset_interval_ms: Any
    acceptable_recovery_lag: Any
    num_standby_replicas: Any
    num_warmup_replicas: Any


_SETTINGS = ("streams.session.timeout.ms", "streams.heartbeat.interval.ms", "streams.task.offset.interval.ms",
             "streams.acceptable.recovery.lag", "streams.num.standby.replicas", "streams.num.warmup.replicas")


def settings(c: "Coordinator", group_id: str) -> Settings:
    values = group_configs_of(c, group_id, _SETTINGS)
    if c.cluster.group_configs.get(group_id):
        values = [_evaluated(c, name, v) for name, v in zip(_SETTINGS, values)]
    return Settings(*values)


def _evaluated(c: "Coordinator", name: str, value: Any) -> Any:
    """A group's override as Kafka evaluates it (`GroupConfig.evaluate`): kept within the
    coordinator's current bounds, which may have moved since the override was set."""
    d = GROUP_CONFIGS[name]
    low, high = (c.config[b] if isinstance(b, str) else b for b in (d.low, d.high))
    if low is not None and value < low:
        return low
    return high if high is not None and value > high else value


def assignment_configs(c: "Coordinator", group_id: str, s: Settings | None = None) -> dict[str, str]:
    """The assignment configurations the group metadata record keeps, as Kafka writes it:
    num.standby.replicas alone (a change bumps the group epoch). A coordinator loaded from
    Kafka's records thus sees no change where there is none."""
    s = s or settings(c, group_id)
    return {"num.standby.replicas": str(s.num_standby_replicas)}


def _other_configs_changed(c: "Coordinator", group: StreamsGroup, s: Settings | None) -> bool:
    """KIP-1071 (`kip` only): acceptable.recovery.lag and num.warmup.replicas are assignment
    configs too, and a change bumps the group epoch. Kafka's record does not keep them, so the
    group remembers them as soft state: a loaded group adopts the values it first sees."""
    if not c.profile.streams_bump_on_every_assignment_config:
        return False
    s = s or settings(c, group.group_id)
    seen, group.other_assignment_configs = group.other_assignment_configs, (s.acceptable_recovery_lag,
                                                                            s.num_warmup_replicas)
    return seen is not None and seen != group.other_assignment_configs


def assignor_name(c: "Coordinator", group_id: str, configured: ConfiguredTopology | None) -> str:
    name = group_config(c, group_id, "streams.assignor.name")
    if name:
        return name
    if c.profile.streams_assignor_by_statefulness and configured is not None and configured.subtopologies:
        # KIP-1071: the broker picks highly_available for stateful topologies, sticky otherwise.
        if any(s.stateful for s in configured.subtopologies.values()):
            return "highly_available"
    return "sticky"


def task_assignor(c: "Coordinator", group_id: str, configured: ConfiguredTopology | None) -> Any:
    """The task assignor the group's next assignment uses: a worked example's stated targets
    (FixedTaskAssignor) replace the configured one."""
    return c.soft_state.get(TASK_ASSIGNOR_OVERRIDE) or get_task_assignor(assignor_name(c, group_id, configured))


# ---------------------------------------------------------------------------------------
# StreamsGroupHeartbeat

def _error(e: KafkaError, req: Any) -> dict:
    # Kafka answers an error with only its code and message: MemberId keeps its default ""
    # (AcceptableRecoveryLag keeps its default too: 0 in v0's legacy field, -1 from v1 on)
    return {"throttle_time": 0, "error_code": e.code, "error_message": e.message or None,
            "member_id": "", "member_epoch": 0, "heartbeat_interval": 0,
            "task_offset_interval": 0, "status": None, "active_tasks": None,
            "standby_tasks": None, "warmup_tasks": None, "endpoint_information_epoch": 0,
            "partitions_by_user_endpoint": None}


@handles(STREAMS_GROUP_HEARTBEAT)
def streams_group_heartbeat(c: "Coordinator", req: Any, version: int) -> Result:
    try:
        validate_request(c, req)
        c.check_coordinator(req.group_id)
        if req.member_epoch in (LEAVE_GROUP_MEMBER_EPOCH, LEAVE_GROUP_STATIC_MEMBER_EPOCH):
            return leave(c, req)
        return heartbeat(c, req, version)
    except Fenced as e:
        group = c.groups.get(req.group_id)
        if c.profile.streams_fenced_member_removed and isinstance(group, StreamsGroup) \
                and e.member_id in group.members:
            # KIP-1071: "FENCED_MEMBER_EPOCH is returned otherwise. The member is also removed."
            fenced = fence_members(c, group, [group.members[e.member_id]], _error(e, req))
            return fenced
        return Result(_error(e, req))
    except KafkaError as e:
        return Result(_error(e, req))


def _join_topology(c: "Coordinator", group: StreamsGroup, req: Any) -> tuple[int, Topology | None]:
    """The member's topology epoch, and the topology to write (None: keep the group's)."""
    topology = Topology.from_request(req.topology)
    validate_new_topology(c, topology)
    current = group.topology
    if current is None:
        return topology.epoch, topology  # KIP: a new group takes the member's topology epoch
    er, eg = topology.epoch, current.epoch
    if not c.profile.streams_topology_updates:
        # Kafka: an older topology epoch joins and is told STALE_TOPOLOGY; updates are refused.
        if er < eg:
            return er, None
        if er != eg or not topology.same_as(current):
            raise _invalid("Topology updates are not supported yet.")
        return er, None
    if er == eg:
        if not topology.same_as(current):
            raise KafkaError(ErrorCode.streams_invalid_topology_epoch,
                             f"The topology differs from the group's topology at epoch {eg}; bump the "
                             "topology epoch to update it.")
        return er, None
    if er < eg:
        raise KafkaError(ErrorCode.streams_topology_fenced,
                         f"The topology epoch {er} is older than the group's topology epoch {eg}.")
    if er > eg + 1:
        raise KafkaError(ErrorCode.streams_invalid_topology_epoch,
                         f"The topology epoch {er} skips epochs: the group's topology epoch is {eg}, "
                         f"an update must use {eg + 1}.")
    return er, topology  # ER = EG + 1: the member updates the group's topology


def _endpoint(req: Any) -> Endpoint | None:
    e = req.user_endpoint
    return None if e is None else Endpoint(e.host, int(e.port))


def heartbeat(c: "Coordinator", req: Any, version: int = 0) -> Result:
    group_id, epoch = req.group_id, req.member_epoch
    joining = epoch == 0
    records: list = []
    group = get_or_create_group(c, group_id, joining, records,
                                req.topology.epoch if joining and req.topology is not None else 0)
    member_id = req.member_id or client_member_id(c)
    owned = _owned(req)
    if c.profile.streams_kept_refined_assignment and req.instance_id is not None:
        holder = group.static_member(req.instance_id)
        if holder is not None and holder.member_id != member_id:
            # Kafka 4.4.0 moves the holder's share of the kept assignment before it validates this
            # member id, and keeps the move when it refuses it (UNRELEASED_INSTANCE_ID, FENCED_INSTANCE_ID)
            group.relabel_refined(holder.member_id, member_id)
    member, replaced = lookup_member(group, member_id, req.instance_id, joining)
    if joining:
        throw_if_full(c, group, member_id, req.instance_id)
        topology_epoch, new_topology = _join_topology(c, group, req)
    else:
        check_member_epoch(member, epoch, owned)
        topology_epoch, new_topology = member.topology_epoch, None
    topology = new_topology or group.topology
    configured = group.configured_topology(topology)
    partitions_of = configured.num_tasks() if configured is not None and configured.subtopologies else None
    if topology is not None and owned is not None and (c.profile.streams_kip_request_validation or partitions_of):
        why = task_ids_valid(topology, partitions_of, (*owned.active_ids(), *owned.standby_ids(),
                                                       *owned.warmup_ids()))
        if why:
            raise _invalid(why)

    new_member = member is None
    if member is None:
        member = StreamsGroupMember(member_id)
    ctx = c.request_context
    rebalance_ms = ms(req.rebalance_timeout)
    if not joining and req.instance_id in (None, member.instance_id) and req.rack_id is None \
            and rebalance_ms == -1 and req.process_id is None and req.user_endpoint is None \
            and req.client_tags is None and ctx.client_id == member.client_id \
            and ctx.client_host == member.client_host:
        updated = member  # a steady heartbeat: the replace below would give an equal member
    else:
        updated = member.replace(
            instance_id=req.instance_id if req.instance_id is not None else member.instance_id,
            rack_id=req.rack_id if req.rack_id is not None else member.rack_id,
            rebalance_timeout_ms=rebalance_ms if rebalance_ms != -1 else member.rebalance_timeout_ms,
            topology_epoch=topology_epoch,
            process_id=req.process_id if req.process_id is not None else member.process_id,
            user_endpoint=_endpoint(req) if req.user_endpoint is not None or joining else member.user_endpoint,
            client_tags=(tuple((kv.key, kv.value) for kv in req.client_tags) if req.client_tags is not None
                         else member.client_tags),
            client_id=ctx.client_id, client_host=ctx.client_host)
    # A known member rejoining with epoch 0 (e.g. after FENCED_MEMBER_EPOCH) keeps its epoch and
    # tasks and is sent them again; nothing is bumped (KIP-848; Kafka's KAFKA-19233).
    offsets, end_offsets = _reported_offsets(req)
    group.record_task_offsets(member_id, updated.process_id, offsets, end_offsets)
    s = settings(c, group_id)
    step = advance_member(c, group, member, updated, new_member=new_member, replaced=replaced,
                          new_topology=new_topology, topology=topology, configured=configured, offsets=offsets,
                          owned=owned, records=records, settings_=s)
    reconciled, delayed, follow_ups = step.member, step.delayed, step.follow_ups
    schedule_session_timeout(c, group_id, member_id, s.session_timeout_ms)
    if req.shutdown_application:
        group.shutdown_requested_by = member_id  # soft state, as in Kafka

    response = _response(c, group, req, reconciled, topology, configured, delayed, s, version)
    # Tasks are sent when joining or when they changed (Kafka sends no more than that).
    tasks_changed = reconciled.assigned != member.assigned
    if joining or tasks_changed:
        a = reconciled.assigned
        response.update(active_tasks=task_ids_data(a.active), standby_tasks=task_ids_data(a.standby),
                        warmup_tasks=task_ids_data(a.warmup))
    # The IQ endpoint map changed (soft state, PR #20854): members learn it on their next heartbeat.
    # A static member's rejoin under a new member id compares with the member it replaces (PR #22245).
    endpoint_changed = (replaced or member).user_endpoint != reconciled.user_endpoint
    # (A static member back under a new member id, with the same endpoint and tasks, changes nothing
    # in the map: Kafka's testStaticMemberRejoinUpdatesUserEndpointInformationEpoch.)
    rejoined = joining and replaced is None
    if endpoint_changed or ((rejoined or tasks_changed) and reconciled.user_endpoint is not None):
        group.endpoint_information_epoch += 1
    send_endpoints = group.endpoint_information_epoch != req.endpoint_information_epoch

    def finish() -> dict:
        for status in response["status"]:
            if status["status_code"] == Status.MISSING_INTERNAL_TOPICS:
                # The creation starts after this write: say where it stands now.
                status["status_detail"] = internal_topics.with_progress(c, group, status["status_detail"],
                                                                         configured.missing_internal_topics)
        live = c.groups.get(group_id)
        if isinstance(live, StreamsGroup):
            live.adopt_soft_state(group)
            # A group this heartbeat created starts again from its records: its soft epoch is 0 (Kafka).
            response["endpoint_information_epoch"] = live.endpoint_information_epoch
            if send_endpoints:
                response["partitions_by_user_endpoint"] = endpoint_to_partitions(live, live.configured_topology())
        return response
    return Result(finish, records, then=follow_ups)


class MemberStep:
    """What `advance_member` decided for one member."""

    __slots__ = ("member", "delayed", "follow_ups", "group_epoch")

    def __init__(self, member: StreamsGroupMember, delayed: str | None, follow_ups: list, group_epoch: int) -> None:
        self.member, self.delayed, self.follow_ups, self.group_epoch = member, delayed, follow_ups, group_epoch


def advance_member(c: "Coordinator", group: StreamsGroup, member: StreamsGroupMember, updated: StreamsGroupMember,
                   *, new_member: bool, replaced: StreamsGroupMember | None, new_topology: Topology | None,
                   topology: Topology | None, configured: ConfiguredTopology | None,
                   offsets: dict[TaskId, int] | None, owned: TaskSets | None, records: list,
                   settings_: Settings | None = None) -> MemberStep:
    """Steps 3-6 of a heartbeat, shared by StreamsGroupHeartbeat and a classic member's JoinGroup
    (online migration): write the member, bump the group epoch when the KIP says so, compute a
    new target assignment when the group epoch is ahead, and reconcile the member."""
    group_id, member_id, now = group.group_id, updated.member_id, c.now()

    if replaced is not None:
        # PR #22245: the new member id takes the old one's place (its records are deleted); as
        # Kafka, the copy is written as it was, and what the rejoin changed in a record of its own.
        replace_member(records, group, replaced, member)
    if new_member or (updated is not member and updated.metadata() != member.metadata()):
        records.append(G.member_record(group_id, updated))
    if new_topology is not None:
        records.append(new_topology.to_record(group_id))  # after the member, as Kafka writes them
    # KIP-1071 "The group epoch is bumped" list. Kafka bumps on any change of a dynamic member's
    # metadata (PR #22245 narrowed it to the KIP's list for static members only).
    if updated.instance_id is None and c.profile.streams_bump_on_any_member_change:
        member_changed = updated is not member and updated.metadata() != member.metadata()
    else:
        member_changed = ((updated.topology_epoch, updated.rack_id, updated.client_tags, updated.process_id)
                          != (member.topology_epoch, member.rack_id, member.client_tags, member.process_id))
    bump = (new_member or new_topology is not None or member_changed
            or _warmup_caught_up(c, group, updated, offsets))
    configs = assignment_configs(c, group_id, settings_)
    # The metadata hash only needs computing when the topology, the cluster or the epoch moved.
    refresh = (new_topology is not None or bump or group.has_metadata_expired(now, c.cluster.metadata_version))
    if not refresh:
        new_hash = group.metadata_hash
    else:
        new_hash = metadata_hash(configured.topics, c.cluster) if configured is not None else 0
    # ValidatedTopologyEpoch: the topology epoch the group was last found ready at (-1: not ready);
    # the group state reads it, so a group is NOT_READY until a heartbeat saw its topics right.
    validated = topology.epoch if configured is not None and configured.ready else -1
    group_epoch = group.group_epoch
    other_configs_changed = _other_configs_changed(c, group, settings_)
    # A topology validated (or no longer valid) since the last epoch may move tasks: bump too (Kafka).
    recompute = (bump or new_hash != group.metadata_hash or configs != group.assignment_configs
                 or validated != group.validated_topology_epoch or other_configs_changed)
    # Kafka 4.4.0, in a Stable group with nothing to recompute: the refined assignment is taken
    # afresh from the target, and a member holding other tasks than its share gets a new epoch
    # with no new target (only after a refused claim took a share away: `relabel_refined`). Asked
    # only once a share was ever moved (before, a Stable group's members all hold their targets), and
    # the group's state (a pass over its members) only when the answer could change something.
    kept = c.profile.streams_kept_refined_assignment
    fresh = None
    if kept and not recompute and group.refined_moved and (
            group.target_assignment.get(member_id, EMPTY_TASKS) != updated.assigned
            or (group.refined is not None and group.refined[1])) and group.state == StreamsGroupState.STABLE:
        fresh = group.target_assignment
    refine_only = fresh is not None and fresh.get(member_id, EMPTY_TASKS) != updated.assigned
    if recompute or refine_only:
        group_epoch += 1
        records.append(G.group_metadata_record(group, group_epoch, new_hash, validated, configs))
    if refresh:
        group.set_metadata_refresh_deadline(now + METADATA_REFRESH_INTERVAL_MS, group_epoch, c.cluster.metadata_version)

    follow_ups = []
    if configured is not None and configured.missing_internal_topics:
        follow_up = internal_topics.maybe_create(c, group, configured)
        if follow_up is not None:
            follow_ups.append(follow_up)

    delayed = _assignment_delayed(c, group, group_epoch, records)
    if not refine_only and group_epoch > group.assignment_epoch and not delayed \
            and not target_assignment_due(c, group, "streams"):
        delayed = ASSIGNMENT_INTERVAL  # KIP-1263: the next heartbeat after the interval computes it
    if refine_only:
        # Kafka's refineOnly: the same target at a new assignment epoch, dated when it was computed
        records.append(G.target_epoch_record(group_id, group_epoch, group.assignment_timestamp))
        target_all, target_epoch = group.target_assignment, group_epoch
    elif group_epoch > group.assignment_epoch and not delayed:
        # the group as it will be (copied only here: a steady heartbeat must not cost O(members))
        members = dict(group.members)
        if replaced is not None:
            members.pop(replaced.member_id, None)
        members[member_id] = updated
        target_all = compute_target_assignment(c, group, members, topology, configured, group_epoch, records,
                                               {member_id: replaced.member_id} if replaced is not None else None)
        target_epoch = group_epoch
    else:
        target_all = group.target_assignment
        # While the initial delay runs the members still get epoch 1 (Kafka: max(1, assignment epoch)).
        target_epoch = max(1, group.assignment_epoch) if delayed else group.assignment_epoch
    target = target_all.get(member_id)
    if target is None and replaced is not None:
        # The replacement's records are not replayed yet: its target is still under the old member
        # id (the review's `fromLastTargetAssignment` point).
        target = target_all.get(replaced.member_id)
    target = target if target is not None else EMPTY_TASKS
    kept_map = group.refined
    if kept and (replaced is not None or fresh is not None or kept_map is None or kept_map[0] != target_epoch
                 or kept_map[1] or delayed == INITIAL_REBALANCE_DELAY):
        # Kafka 4.4.0 reconciles towards the refined assignment of the epoch (`refined_share`). (A
        # steady heartbeat finds the epoch's kept map with nothing moved in it: its share is its target.)
        keep = int((settings_ or settings(c, group_id)).num_warmup_replicas) > 0
        if fresh is not None:
            if keep:   # taken afresh in a Stable group, and kept for the epoch
                group.keep_refined(target_epoch)
        elif delayed == INITIAL_REBALANCE_DELAY:   # no target yet: Kafka keeps an empty one
            target = group.refined_share(group.assignment_epoch, member_id, {}, keep)
        else:
            target = group.refined_share(target_epoch, member_id, target_all, keep,
                                         replaced.member_id if replaced is not None else None)

    reconciled = reconcile(updated, target_epoch, target, owners=group, owned=owned,
                           keep_promoted_role=c.profile.streams_promotion_keeps_old_role)
    # (a steady heartbeat reconciles to the very same member: nothing to compare)
    if new_member or reconciled is not member and (
            reconciled.member_epoch, reconciled.previous_member_epoch, reconciled.state, reconciled.assigned,
            reconciled.pending_revocation, reconciled.assigned_active_epochs()) != (
            member.member_epoch, member.previous_member_epoch, member.state, member.assigned,
            member.pending_revocation, member.assigned_active_epochs()):
        records.append(G.current_assignment_record(group_id, reconciled))
    if reconciled.state == MemberState.UNREVOKED_PARTITIONS:
        schedule_rebalance_timeout(c, group_id, member_id, reconciled.member_epoch, reconciled.rebalance_timeout_ms)
    else:
        c.timers.cancel(rebalance_key(group_id, member_id))
    return MemberStep(reconciled, delayed, follow_ups, group_epoch)


def _reported_offsets(req: Any) -> tuple[dict[TaskId, int] | None, dict[TaskId, int] | None]:
    def parse(entries: Any) -> dict[TaskId, int] | None:
        return None if entries is None else {(t.subtopology_id, int(t.partition)): int(t.offset) for t in entries}
    return parse(req.task_offsets), parse(req.task_end_offsets)


def _warmup_caught_up(c: "Coordinator", group: StreamsGroup, member: StreamsGroupMember,
                      offsets: dict[TaskId, int] | None) -> bool:
    """KIP-1071: a warm-up task reported within acceptable.recovery.lag bumps the group epoch."""
    if offsets is None or not member.assigned.warmup:
        return False
    lag_ok = int(group_config(c, group.group_id, "streams.acceptable.recovery.lag"))
    ends = group.end_offsets()  # includes what this heartbeat reported (recorded just before)
    for task in member.assigned.warmup_ids():
        if task in offsets and task in ends and ends[task] - offsets[task] <= lag_ok:
            return True
    return False


#: why no target is computed now (ASSIGNMENT_DELAYED's detail: "Assignment delayed due to the configured ...")
INITIAL_REBALANCE_DELAY, ASSIGNMENT_INTERVAL = "initial rebalance delay", "assignment interval"


def _assignment_delayed(c: "Coordinator", group: StreamsGroup, group_epoch: int, records: list) -> str | None:
    """Kafka only: a member joining an empty group (a new one, or one all members left:
    KAFKA-19829, KAFKA-19926) starts group.streams.initial.rebalance.delay.ms during which no
    target is computed (status ASSIGNMENT_DELAYED); a timer then computes it. (The assignment
    interval, KIP-1263, delays the assignments after it: `advance_member`.)"""
    if not c.profile.streams_assignment_delayed_status:
        return None
    delay = int(group_config(c, group.group_id, "streams.initial.rebalance.delay.ms"))
    if delay <= 0:
        return None
    key = initial_delay_key(group.group_id)
    if not group.members:
        if key not in c.timers:
            group_id = group.group_id
            c.timers.schedule(key, c.now() + delay, lambda: assign_after_delay(c, group_id))
        return INITIAL_REBALANCE_DELAY
    return INITIAL_REBALANCE_DELAY if key in c.timers else None


def assign_after_delay(c: "Coordinator", group_id: str) -> Result | None:
    group = c.groups.get(group_id)
    if not isinstance(group, StreamsGroup) or not group.members or group.group_epoch <= group.assignment_epoch:
        return None
    # The joins bumped the group epoch past the assignment epoch the members sit at meanwhile.
    records: list = []
    compute_target_assignment(c, group, group.members, group.topology, group.configured_topology(),
                              group.group_epoch, records)
    return Result(records=records)


def _assignor_spec(c: "Coordinator", group: StreamsGroup, members: dict[str, StreamsGroupMember],
                   topology: Topology | None, configured: ConfiguredTopology | None) -> GroupSpec:
    cfg = settings(c, group.group_id)
    subtopologies = {}
    if configured is not None and configured.ready:
        subtopologies = {s: SubtopologySpec(cs.num_tasks, cs.stateful) for s, cs in configured.subtopologies.items()}
    specs = {}
    for mid, m in members.items():
        # As Kafka 4.4.0's TargetAssignmentBuilder: the assignor gets each member's *current*
        # assignment (assignedTasks, not the target it is still reconciling towards) and the
        # task offsets that member last reported.
        specs[mid] = MemberSpec(member_id=mid, process_id=m.process_id, topology_epoch=m.topology_epoch,
                                current=m.assigned, instance_id=m.instance_id,
                                rack_id=m.rack_id, client_tags=dict(m.client_tags),
                                task_offsets=group.task_offsets.get(mid, {}))
    return GroupSpec(members=specs, subtopologies=subtopologies,
                     topology_epoch=topology.epoch if topology is not None else 0,
                     num_standby_replicas=int(cfg.num_standby_replicas),
                     num_warmup_replicas=int(cfg.num_warmup_replicas),
                     acceptable_recovery_lag=int(cfg.acceptable_recovery_lag),
                     task_offsets={p: dict(o) for p, o in group.process_task_offsets.items()},
                     task_end_offsets=group.end_offsets())


def compute_target_assignment(c: "Coordinator", group: StreamsGroup, members: dict[str, StreamsGroupMember],
                              topology: Topology | None, configured: ConfiguredTopology | None, epoch: int,
                              records: list, renamed: dict[str, str] | None = None) -> dict[str, TaskSets]:
    """Run the task assignor and write what changed: target records for members whose target
    moved (tombstones for members gone) and then the assignment epoch, as one batch.
    A group that is not ready gets empty targets (KIP: NOT_READY members get no tasks)."""
    gid = group.group_id
    assignor = task_assignor(c, gid, configured)
    previous = dict(group.target_assignment)
    for new_id, old_id in (renamed or {}).items():   # a replaced static member's target, under its new id
        if old_id in previous:
            previous[new_id] = previous[old_id]
    try:
        result = assignor.assign(_assignor_spec(c, group, members, topology, configured))
    except TaskAssignorException as e:
        # Kafka's StreamsGroupHeartbeat turns an assignor failure into UNKNOWN_SERVER_ERROR.
        raise KafkaError(ErrorCode.unknown_server_error,
                         f"Failed to compute a new target assignment for epoch {epoch}: {e}") from e
    target: dict[str, TaskSets] = {}
    for mid in members:
        tasks = result.get(mid, EMPTY_TASKS)
        target[mid] = tasks
        if previous.get(mid) != tasks:   # a replaced static member's target counts under its new id
            records.append(G.target_member_record(gid, mid, tasks))
    for mid in group.target_assignment:
        # a replaced static member's target was deleted with its other records already
        if mid not in members and mid not in (renamed or {}).values():
            records.append(G.target_member_tombstone(gid, mid))
    records.append(G.target_epoch_record(gid, epoch, c.now()))
    return target


def _response(c: "Coordinator", group: StreamsGroup, req: Any, member: StreamsGroupMember,
              topology: Topology | None, configured: ConfiguredTopology | None, delayed: str | None,
              s: Settings, version: int = 0) -> dict:
    statuses: list[StatusInfo] = []   # in Kafka's order: stale topology, delay, topics, shutdown
    if topology is not None and member.topology_epoch < topology.epoch:
        statuses.append(StatusInfo(Status.STALE_TOPOLOGY,
                                   f"The member's topology epoch {member.topology_epoch} is behind the group's "
                                   f"topology epoch {topology.epoch}."))
    if delayed and c.profile.streams_assignment_delayed_status:   # not a KIP-1071 status
        statuses.append(StatusInfo(Status.ASSIGNMENT_DELAYED, f"Assignment delayed due to the configured {delayed}."))
    if configured is not None and configured.status is not None:
        statuses.append(configured.status)  # MISSING_INTERNAL_TOPICS gets its progress in `finish`
    if group.shutdown_requested_by is not None or req.shutdown_application:
        requester = group.shutdown_requested_by or member.member_id
        statuses.append(StatusInfo(Status.SHUTDOWN_APPLICATION,
                                   f"Streams group member {requester} encountered a fatal error and requested "
                                   "a shutdown for the entire application."))
    response = {"throttle_time": 0, "error_code": ErrorCode.none, "error_message": None,
                "member_id": member.member_id, "member_epoch": member.member_epoch,
                "heartbeat_interval": int(s.heartbeat_interval_ms),
                # v1's AcceptableRecoveryLag (int64) always carries it; Kafka 4.4.0 leaves v0's
                # (AcceptableRecoveryLagLegacy) at 0
                "acceptable_recovery_lag": (int(s.acceptable_recovery_lag)
                                            if version >= 1 or c.profile.streams_acceptable_recovery_lag_in_v0 else 0),
                "task_offset_interval": int(s.task_offset_interval_ms),
                # Always a list, [] when there is nothing to report (Kafka): under the schema's "null if
                # unchanged", a null after a status cleared would leave a client believing it still holds.
                "status": [status.to_data() for status in statuses],
                "active_tasks": None, "standby_tasks": None, "warmup_tasks": None,
                "endpoint_information_epoch": group.endpoint_information_epoch,
                "partitions_by_user_endpoint": None}
    return response


# ---------------------------------------------------------------------------------------
# Leaving and fencing

def leave(c: "Coordinator", req: Any) -> Result:
    group = streams_group(c, req.group_id)
    member_id, epoch = req.member_id, req.member_epoch
    response = _error(KafkaError(ErrorCode.none), req)
    response.update(error_message=None, member_id=member_id, member_epoch=epoch, status=[])
    if req.shutdown_application:
        group.shutdown_requested_by = member_id
    if req.instance_id is None:
        return fence_members(c, group, [group.member(member_id)], response)
    member = group.checked_static_member(req.instance_id, member_id)
    if epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
        return Result(response, [G.current_assignment_record(group.group_id, static_leave(c, member))])
    return fence_members(c, group, [member], response)


def static_leave(c: "Coordinator", member: StreamsGroupMember) -> StreamsGroupMember:
    """A static member leaving for a moment (-2, Kafka's streamsGroupStaticMemberGroupLeave): it
    keeps its identity, epoch history and tasks until its session ends; what it was revoking is
    dropped (a stopped process runs nothing), so a member waiting for those tasks gets them now.
    A second -2 leave writes the same record again, as Kafka does.

    The member's state stays as it was (Kafka: the UNREVOKED -> STABLE fix-up was taken out of
    PR #22245 to change consumer groups at the same time, KAFKA-20680); under `kip` a revoking
    member becomes STABLE, as the PR's reviewers agreed is right (streams_static_leave_revokes_pending)."""
    # Kafka also resets the assigned tasks' assignment epochs to 0 (resetAssignedTasksEpochsToZero).
    leaving = member.replace(member_epoch=LEAVE_GROUP_STATIC_MEMBER_EPOCH, pending_revocation=EMPTY_TASKS,
                             active_epochs=dict.fromkeys(member.assigned.active_ids(), 0))
    if c.profile.streams_static_leave_revokes_pending and member.state == MemberState.UNREVOKED_PARTITIONS:
        leaving = leaving.replace(state=MemberState.STABLE)
    return leaving


def fence_members(c: "Coordinator", group: StreamsGroup, members: list[StreamsGroupMember], response: Any) -> Result:
    """Remove members: tombstones (current, target, member) and a group epoch bump; or, when
    only classic members would remain, the group turns back into a classic group (KIP-1071)."""
    gid = group.group_id
    if members:
        downgrade = maybe_downgrade(c, group, members, response)
        if downgrade is not None:
            return downgrade
    records: list = []
    for m in members:
        records += [G.current_assignment_tombstone(gid, m.member_id), G.target_member_tombstone(gid, m.member_id),
                    G.member_tombstone(gid, m.member_id)]
        cancel_timers(c, gid, m.member_id)
    remaining = {mid: m for mid, m in group.members.items() if mid not in {x.member_id for x in members}}
    # The group's metadata as it is, with the epoch bumped (Kafka): the next heartbeat notices the rest.
    records.append(G.group_metadata_record(group, group.group_epoch + 1, group.metadata_hash,
                                           group.validated_topology_epoch, group.assignment_configs))
    if not remaining:
        records.append(G.target_epoch_record(gid, group.group_epoch + 1))
        group.shutdown_requested_by = None  # the application is gone; a new one starts afresh
    return Result(response, records)


def fence_member_by_id(c: "Coordinator", group_id: str, member_id: str, reason: str) -> Result | None:
    """A timer's fencing: nothing when the group or member is already gone."""
    return fence_by_id(c, StreamsGroup, group_id, member_id, reason, fence_members)


def schedule_session_timeout(c: "Coordinator", group_id: str, member_id: str, timeout_ms: int) -> None:
    c.timers.schedule(session_key(group_id, member_id), c.now() + int(timeout_ms),
                      lambda: fence_member_by_id(c, group_id, member_id, "the member session expired"))


def schedule_rebalance_timeout(c: "Coordinator", group_id: str, member_id: str, member_epoch: int,
                               timeout_ms: int) -> None:
    """Fence a member that has not revoked its tasks within its rebalance timeout."""
    key = rebalance_key(group_id, member_id)
    if key in c.timers:
        return  # the timer runs from when the revocation was first asked for

    def expire() -> Result | None:
        group = c.groups.get(group_id)
        if not isinstance(group, StreamsGroup) or member_id not in group.members:
            return None
        m = group.members[member_id]
        if m.member_epoch != member_epoch or m.state != MemberState.UNREVOKED_PARTITIONS:
            return None
        return fence_member_by_id(c, group_id, member_id,
                                  f"it failed to revoke its tasks within the rebalance timeout of {timeout_ms}ms")
    c.timers.schedule(key, c.now() + max(int(timeout_ms), 0), expire)


# ---------------------------------------------------------------------------------------
# StreamsGroupDescribe

def _topic_info(name: str, partitions: int, info: Any) -> dict:
    return {"name": name, "partitions": partitions, "replication_factor": info.replication_factor,
            "topic_configs": [{"key": k, "value": v} for k, v in info.configs]}


def describe_topology(group: StreamsGroup) -> dict | None:
    """The configured topology (concrete partition counts, regexes resolved); while source
    topics are missing or topics are incorrectly partitioned, the topology as sent."""
    if group.topology is None:
        return None
    configured = group.configured_topology()
    subs = None
    if configured is not None and configured.subtopologies is not None:
        subs = [{"subtopology_id": s.subtopology_id, "source_topics": list(s.source_topics),
                 "repartition_sink_topics": list(s.repartition_sink_topics),
                 "state_changelog_topics": [_topic_info(n, p, i) for n, (p, i) in sorted(s.state_changelog_topics.items())],
                 "repartition_source_topics": [_topic_info(n, p, i) for n, (p, i) in
                                               sorted(s.repartition_source_topics.items())]}
                for s in (configured.subtopologies[sid] for sid in group.topology.subtopology_ids)]
    else:
        # Not configured (topics missing or mispartitioned): the topology as the members sent it (Kafka).
        subs = [{"subtopology_id": s.subtopology_id, "source_topics": list(s.source_topics),
                 "repartition_sink_topics": list(s.repartition_sink_topics),
                 "state_changelog_topics": [_topic_info(t.name, t.partitions, t) for t in s.state_changelog_topics],
                 "repartition_source_topics": [_topic_info(t.name, t.partitions, t)
                                               for t in s.repartition_source_topics]}
                for s in (group.topology.subtopology(sid) for sid in group.topology.subtopology_ids)]
    return {"epoch": group.topology.epoch, "subtopologies": subs}


def _assignment(tasks: TaskSets) -> dict:
    return {"active_tasks": task_ids_data(tasks.active), "standby_tasks": task_ids_data(tasks.standby),
            "warmup_tasks": task_ids_data(tasks.warmup)}


def _task_offsets(offsets: dict[TaskId, int]) -> list[dict]:
    return [{"subtopology_id": s, "partition": p, "offset": o} for (s, p), o in sorted(offsets.items())]


#: StreamsGroupDescribe v1's TopologyDescriptionStatus (KIP-1331)
NOT_REQUESTED, NOT_STORED = 0, 1


def describe_group(c: "Coordinator", group_id: str, include_topology_description: bool = False) -> dict:
    """One group as StreamsGroupDescribe describes it; v1's fields as Kafka 4.4.0 fills them.

    AssignorName: the task assignor the next assignment uses (KIP-1357), null on an error.
    TopologyDescriptionStatus: descriptions live in a broker plugin
    (group.streams.topology.description.plugin.class); kgroup has none, as Kafka without the
    plugin: a described group asked for its description is NOT_STORED, TopologyDescription null."""
    return STREAMS.describe(c, group_id, lambda group: _described(c, group, include_topology_description),
                            topology=None)


def _described(c: "Coordinator", group: StreamsGroup, include_topology_description: bool) -> dict:
    members = []
    for m in group.members.values():
        members.append({
            "member_id": m.member_id, "member_epoch": m.member_epoch, "instance_id": m.instance_id,
            "rack_id": m.rack_id, "client_id": m.client_id, "client_host": m.client_host,
            "topology_epoch": m.topology_epoch, "process_id": m.process_id,
            "user_endpoint": None if m.user_endpoint is None else {"host": m.user_endpoint.host,
                                                                   "port": m.user_endpoint.port},
            "client_tags": [{"key": k, "value": v} for k, v in m.client_tags],
            "task_offsets": _task_offsets(group.task_offsets.get(m.member_id, {})),
            "task_end_offsets": _task_offsets(group.task_end_offsets.get(m.member_id, {})),
            "assignment": _assignment(m.assigned),
            "target_assignment": _assignment(group.target_assignment.get(m.member_id, EMPTY_TASKS)),
            "is_classic": m.uses_classic_protocol})
    return {"topology": describe_topology(group), "members": members,
            "assignor_name": task_assignor(c, group.group_id, group.configured_topology()).name,
            "topology_description_status": NOT_STORED if include_topology_description else NOT_REQUESTED}


streams_group_describe = handles_describe(STREAMS_GROUP_DESCRIBE, lambda c, group_id, req: describe_group(
    c, group_id, bool(get(req, "include_topology_description", False))))


# ---------------------------------------------------------------------------------------
# StreamsGroupTopologyDescriptionUpdate (KIP-1331): a member pushes its topology description
# when a heartbeat (v1) says TopologyDescriptionRequired. Kafka 4.4.0 hands it to the broker's
# topology description plugin and then records the stored (or failed) topology epoch in the
# group's metadata record. Without a plugin, its default and kgroup's only case, no heartbeat
# asks for a description and a push is refused before anything else is looked at.

@handles(STREAMS_GROUP_TOPOLOGY_DESCRIPTION_UPDATE)
def streams_group_topology_description_update(c: "Coordinator", req: Any, version: int) -> Result:
    return Result({"throttle_time": 0, "error_code": ErrorCode.unsupported_version,
                   "error_message": "The broker has no streams group topology description plugin configured."})


def _restart_session(c: "Coordinator", group: StreamsGroup, m: StreamsGroupMember) -> None:
    """After a reload (Kafka's onLoaded): a fresh session, and a member still revoking gets its
    rebalance timeout again."""
    classic = m.classic_member_metadata
    schedule_session_timeout(c, group.group_id, m.member_id,
                             classic.session_timeout_ms if classic is not None
                             else settings(c, group.group_id).session_timeout_ms)
    if m.state == MemberState.UNREVOKED_PARTITIONS:
        schedule_rebalance_timeout(c, group.group_id, m.member_id, m.member_epoch, m.rebalance_timeout_ms)


restarts_sessions_on_load(STREAMS, _restart_session)


__all__ = ["streams_group_heartbeat", "streams_group_describe", "streams_group_topology_description_update",
           "describe_group", "heartbeat", "leave",
           "fence_members", "session_key", "rebalance_key", "validate_request", "compute_target_assignment"]
