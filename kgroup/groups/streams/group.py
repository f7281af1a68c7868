"""A KIP-1071 Streams group as the coordinator keeps it: members (threads of Streams
application instances, grouped by process id), the topology and its epoch, the target
assignment of tasks (active, standby, warm-up) and who owns which task now.

Everything persistent is rebuilt by replaying records 17-23 (`replay.py`); the heartbeat
handler (`protocol.py`) only reads it. Soft state, as in Kafka: the configured topology
(derived from the cluster), the task offsets members report, a requested shutdown, the
endpoint-information epoch.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import Any

from kgroup.assignors.streams.api import TaskId, TaskSets
from kgroup.cluster import Cluster
from kgroup.errors import ErrorCode, KafkaError
from kgroup.groups.base import CommitPartitionValidator, OffsetCommitContext
from kgroup.groups.classic_bridge import ClassicMemberMetadata
from kgroup.groups.kinds import STREAMS
from kgroup.groups.modern import LEAVE_GROUP_MEMBER_EPOCH, MemberState, ModernGroup, ModernMember, ReplayError
from kgroup import records as R

from .configuration import ConfiguredTopology, configure
from .timers import initial_delay_key
from .topology import Topology

STREAMS_PROTOCOL_TYPE = "streams"
EMPTY_TASKS = TaskSets()
_NO_PROCESSES: frozenset[str] = frozenset()
ROLES = ("active", "standby", "warmup")


class StreamsGroupState:
    """Streams group states (KIP-1071 "Streams Group States"), with Kafka's spelling."""

    EMPTY = "Empty"
    NOT_READY = "NotReady"
    ASSIGNING = "Assigning"
    RECONCILING = "Reconciling"
    STABLE = "Stable"
    DEAD = "Dead"


@dataclass(frozen=True)
class Endpoint:
    """A member's user endpoint for Interactive Queries."""

    host: str
    port: int

    def __str__(self) -> str:
        return f"{self.host}:{self.port}"


@dataclass(frozen=True)
class StreamsGroupMember(ModernMember):
    """One member (a stream thread's consumer): metadata + current assignment."""

    member_id: str
    instance_id: str | None = None
    rack_id: str | None = None
    client_id: str = ""
    client_host: str = ""
    rebalance_timeout_ms: int = -1
    topology_epoch: int = 0
    process_id: str = ""
    user_endpoint: Endpoint | None = None
    client_tags: tuple[tuple[str, str], ...] = ()
    member_epoch: int = 0
    previous_member_epoch: int = 0
    state: MemberState = MemberState.STABLE
    assigned: TaskSets = EMPTY_TASKS
    pending_revocation: TaskSets = EMPTY_TASKS
    #: set while the member speaks the classic protocol (KIP-1071 online migration)
    classic_member_metadata: ClassicMemberMetadata | None = None
    #: the assignment epoch of each active task assigned or pending revocation (Kafka's
    #: TasksTupleWithEpochs): the target epoch it was handed over in; a task missing here counts at
    #: the member epoch, as a record written before the epochs were stored does
    active_epochs: Mapping[TaskId, int] = field(default_factory=dict, compare=False)

    def with_assignment_deleted(self) -> "StreamsGroupMember":
        """The member once its current-assignment tombstone is replayed (Kafka's replay)."""
        return self.replace(member_epoch=LEAVE_GROUP_MEMBER_EPOCH, previous_member_epoch=LEAVE_GROUP_MEMBER_EPOCH,
                            assigned=EMPTY_TASKS, pending_revocation=EMPTY_TASKS)

    def metadata(self) -> tuple:
        """What the member metadata record holds (a change writes a new record)."""
        return (self.instance_id, self.rack_id, self.client_id, self.client_host, self.rebalance_timeout_ms,
                self.topology_epoch, self.process_id, self.user_endpoint, self.client_tags,
                self.classic_member_metadata)

    def owned(self) -> TaskSets:
        """Assigned plus pending revocation: every task the member may still be running."""
        return union(self.assigned, self.pending_revocation)

    def active_epoch_of(self, task: TaskId) -> int:
        """The assignment epoch of an assigned active task."""
        return self.active_epochs.get(task, self.member_epoch)

    def assigned_active_epochs(self) -> dict[TaskId, int]:
        """Every assigned active task with its assignment epoch (what the record stores)."""
        return {t: self.active_epoch_of(t) for t in self.assigned.active_ids()}


# ---------------------------------------------------------------------------------------
# Task-set helpers

def union(a: TaskSets, b: TaskSets) -> TaskSets:
    if b.is_empty:
        return a
    if a.is_empty:
        return b
    return TaskSets(**{r: _merge(getattr(a, r), getattr(b, r)) for r in ROLES})


def difference(a: TaskSets, b: TaskSets) -> TaskSets:
    return TaskSets(**{r: _minus(getattr(a, r), getattr(b, r)) for r in ROLES})


def _merge(x: Mapping[str, frozenset[int]], y: Mapping[str, frozenset[int]]) -> dict[str, frozenset[int]]:
    out = dict(x)
    for s, ps in y.items():
        out[s] = out.get(s, frozenset()) | ps
    return out


def _minus(x: Mapping[str, frozenset[int]], y: Mapping[str, frozenset[int]]) -> dict[str, frozenset[int]]:
    out = {}
    for s, ps in x.items():
        rest = ps - y.get(s, frozenset())
        if rest:
            out[s] = rest
    return out


def task_ids(tasks: Mapping[str, Iterable[int]]) -> list[TaskId]:
    return [(s, p) for s in sorted(tasks) for p in sorted(tasks[s])]


def tasks_from_ids(entries: Iterable[Any] | None) -> dict[str, frozenset[int]]:
    """kio/record `TaskIds` entries (subtopology_id + partitions) as a mapping."""
    out: dict[str, set[int]] = {}
    for t in entries or ():
        out.setdefault(t.subtopology_id, set()).update(int(p) for p in t.partitions)
    return {s: frozenset(ps) for s, ps in out.items() if ps}


def task_ids_data(tasks: Mapping[str, Iterable[int]]) -> list[dict]:
    """A task mapping as `TaskIds` data, sorted by subtopology then partition."""
    return [{"subtopology_id": s, "partitions": sorted(tasks[s])} for s in sorted(tasks) if tasks[s]]


def task_label(task: TaskId) -> str:
    """Kafka's task id spelling, `<subtopology>_<partition>`."""
    return f"{task[0]}_{task[1]}"


# ---------------------------------------------------------------------------------------
# The group

class StreamsGroup(ModernGroup[StreamsGroupMember, TaskSets]):
    """A Streams group (KIP-1071)."""

    kind = STREAMS

    def __init__(self, group_id: str, cluster: Cluster | None = None) -> None:
        super().__init__(group_id)
        self.cluster = cluster if cluster is not None else Cluster()
        self.topology: Topology | None = None
        self.validated_topology_epoch = -1
        #: the assignment configs the last target assignment was computed with (record 17)
        self.assignment_configs: dict[str, str] = {}
        #: KIP-1331's topology-description epochs (record 17): kgroup has no description plugin,
        #: so it only keeps what a log holds and writes it back with every metadata record
        self.stored_description_topology_epoch = -1
        self.failed_description_topology_epoch = -1
        #: who runs each task now, by process, kept as Kafka's StreamsGroup keeps them (from every
        #: member's assigned and pending-revocation tasks; see `_update_ownership`)
        self.active_task_process: dict[TaskId, str] = {}
        self.standby_task_processes: dict[TaskId, set[str]] = {}
        self.warmup_task_processes: dict[TaskId, set[str]] = {}
        # Soft state.
        self.shutdown_requested_by: str | None = None
        #: (acceptable.recovery.lag, num.warmup.replicas) last seen, under `kip` (not in the record)
        self.other_assignment_configs: tuple | None = None
        self.endpoint_information_epoch = 0
        #: what members last reported (KIP-1071: never persisted, "constantly changing")
        self.task_offsets: dict[str, dict[TaskId, int]] = {}
        self.task_end_offsets: dict[str, dict[TaskId, int]] = {}
        #: task offsets per process, the most recent report winning (KIP-1071)
        self.process_task_offsets: dict[str, dict[TaskId, int]] = {}
        self.last_fence_reason: str | None = None
        #: Kafka 4.4.0's refined assignment kept for one assignment epoch (`refined_share`; `kafka`
        #: profile), in memory only as in Kafka: (epoch, the shares moved in it, None: taken away)
        self.refined: tuple[int, dict[str, TaskSets | None]] | None = None
        #: a share was ever moved in it: until then every member of a Stable group holds its target
        self.refined_moved = False
        self.rebalances = 0
        self._configured: tuple[Any, Cluster, ConfiguredTopology] | None = None

    # -- Group interface ----------------------------------------------------------------
    @property
    def protocol_type(self) -> str:
        return STREAMS_PROTOCOL_TYPE

    @property
    def state(self) -> str:
        """Kafka's `StreamsGroup.state`: the KIP-848 states, plus NOT_READY for a group with members
        whose topology was not found ready by the last heartbeat (its ValidatedTopologyEpoch)."""
        if self.members and not self.deleted and (
                self.topology is None or self.validated_topology_epoch != self.topology.epoch):
            return StreamsGroupState.NOT_READY
        return str(self.modern_state)

    def validate_offset_commit(self, ctx: OffsetCommitContext) -> CommitPartitionValidator | None:
        """Kafka's `StreamsGroup.validateOffsetCommit`: the member's epoch commits everything; a newer
        one is refused; an older one (KIP-1251) commits only partitions of active tasks the member
        holds (assigned or pending revocation) since that epoch or before."""
        epoch = ctx.generation_id_or_member_epoch
        if epoch < 0 and not self.members:
            return None  # an admin commit to an empty group
        if ctx.is_transactional and epoch == -1 and not ctx.member_id and ctx.group_instance_id is None:
            return None  # TxnOffsetCommit does not require the member's fields
        member = self.members.get(ctx.member_id)
        if member is None:
            raise KafkaError(ErrorCode.unknown_member_id, f"member {ctx.member_id} is not in group {self.group_id}")
        if member.uses_classic_protocol:
            # kgroup's migration: a classic member commits with its generation, its member epoch
            if epoch != member.member_epoch:
                raise KafkaError(ErrorCode.illegal_generation, "the generation id does not match the member epoch")
            return None
        if not ctx.is_transactional and ctx.api_version < 9:
            raise KafkaError(ErrorCode.unsupported_version,
                             "OffsetCommit version 9 or above must be used by members using the streams group protocol")
        if epoch == member.member_epoch:
            return None
        if epoch > member.member_epoch:
            raise KafkaError(ErrorCode.stale_member_epoch,
                             f"Received member epoch {epoch} is newer than current member epoch {member.member_epoch}.")
        if self.topology is None:
            raise KafkaError(ErrorCode.stale_member_epoch, "Topology is not available for offset commit validation.")
        subtopology_of = {t: s.subtopology_id for s in self.topology.subtopologies
                          for t in (*s.source_topics, *(r.name for r in s.repartition_source_topics))}
        active = (member.assigned.active, member.pending_revocation.active)

        def check(topic: str, topic_id: Any, partition: int) -> None:
            """Kafka's `createAssignmentEpochValidator`: by the task the partition feeds."""
            subtopology = subtopology_of.get(topic)
            if subtopology is None:
                raise KafkaError(ErrorCode.stale_member_epoch, f"Topic {topic} is not in the topology.")
            if not any(partition in tasks.get(subtopology, ()) for tasks in active):
                raise KafkaError(ErrorCode.stale_member_epoch,
                                 f"Task {subtopology}-{partition} is not assigned or pending revocation for member.")
            held = member.active_epoch_of((subtopology, partition))
            if epoch < held:
                raise KafkaError(ErrorCode.stale_member_epoch, f"Received member epoch {epoch} is older than "
                                 f"assignment epoch {held} for task {subtopology}-{partition}.")
        return check

    def validate_delete_group(self) -> None:
        if self.members:
            raise KafkaError(ErrorCode.non_empty_group, f"group {self.group_id} is not empty")

    def is_subscribed_to_topic(self, topic: str) -> bool:
        """The topology's topics while the group has members (as for KIP-848 groups, an empty
        group subscribes to nothing: its offsets may be deleted and expire)."""
        if not self.members:
            return False
        configured = self.configured_topology()
        return configured is not None and topic in configured.topics

    def tombstones(self) -> list:
        """Records deleting the group, in Kafka's order (current, target, epoch, members, metadata, topology)."""
        g = self.group_id
        return STREAMS.group_tombstones(g, self.members) + [
            STREAMS.metadata_tombstone(g), R.StreamsGroupTopology.tombstone(R.StreamsGroupTopologyKey(group_id=g))]

    def before_delete(self, coordinator: Any) -> list:
        """A deleted group's initial-rebalance-delay timer goes with it (Kafka's cancelTimers)."""
        coordinator.timers.cancel(initial_delay_key(self.group_id))
        return []

    # -- topology -------------------------------------------------------------------------
    def configured_topology(self, topology: Topology | None = None) -> ConfiguredTopology | None:
        """The topology configured against the cluster now (cached until topology or cluster change)."""
        topology = topology if topology is not None else self.topology
        if topology is None:
            return None
        # the cluster itself, not its id(): a new cluster may reuse a collected one's address
        key = (topology, self.cluster.metadata_version)
        if self._configured is None or self._configured[0] != key or self._configured[1] is not self.cluster:
            self._configured = (key, self.cluster, configure(topology, self.cluster))
        return self._configured[2]

    @property
    def topology_epoch(self) -> int:
        return self.topology.epoch if self.topology is not None else -1

    # -- ownership ------------------------------------------------------------------------
    def record_task_offsets(self, member_id: str, process_id: str, offsets: Mapping[TaskId, int] | None,
                            end_offsets: Mapping[TaskId, int] | None) -> None:
        """Soft state a heartbeat updates directly (Kafka keeps task offsets in memory only)."""
        if offsets is not None:
            self.task_offsets[member_id] = dict(offsets)
            self.process_task_offsets.setdefault(process_id, {}).update(offsets)
        if end_offsets is not None:
            self.task_end_offsets[member_id] = dict(end_offsets)

    def adopt_soft_state(self, other: "StreamsGroup") -> None:
        """Take over the soft state a heartbeat recorded on the group object it started from
        (a new group exists in the handler before its records are replayed)."""
        if other is self:
            return
        for mid, offsets in other.task_offsets.items():
            self.task_offsets.setdefault(mid, offsets)
        for mid, ends in other.task_end_offsets.items():
            self.task_end_offsets.setdefault(mid, ends)
        for pid, offsets in other.process_task_offsets.items():
            self.process_task_offsets.setdefault(pid, {}).update(offsets)
        if self.shutdown_requested_by is None:
            self.shutdown_requested_by = other.shutdown_requested_by
        if self.refined is None:
            self.refined = other.refined
            self.refined_moved = other.refined_moved

    def refined_share(self, epoch: int, member_id: str, target: Mapping[str, TaskSets], keep: bool,
                      replaced_id: str | None = None) -> TaskSets:
        """What `member_id` reconciles towards at assignment epoch `epoch` (Kafka 4.4.0's
        `refinedAssignmentForEpoch`): its share of `target`, under its predecessor's id for a static
        replacement (`replaced_id`). Kafka's refiner hands the target on unchanged, but with warm-up
        replicas configured (`keep`) the map an epoch first saw is kept for the rest of that epoch,
        so a share moved in it (`relabel_refined`) stays moved. kgroup keeps only the moves (a steady
        heartbeat must not copy the group)."""
        if self.refined is not None and self.refined[0] == epoch:
            moves = self.refined[1]
        else:
            moves = {member_id: target[replaced_id], replaced_id: None} \
                if replaced_id is not None and replaced_id in target else {}
            if keep:
                self.refined = (epoch, moves)
                self.refined_moved = self.refined_moved or bool(moves)
        if member_id in moves:
            return moves[member_id] or EMPTY_TASKS
        return target.get(member_id, EMPTY_TASKS)

    def keep_refined(self, epoch: int) -> None:
        """Start the kept map of `epoch` afresh from the target (a Stable group's heartbeat)."""
        self.refined = (epoch, {})

    def relabel_refined(self, old_member_id: str, new_member_id: str) -> None:
        """Move a static member's share of the kept map to the member id that names its instance
        id (Kafka's `relabelRefinedAssignment`). Kafka does it before validating that member id and
        does not undo it when the heartbeat is refused, so a refused claim takes the share away."""
        if self.refined is None:
            return
        moves = self.refined[1]
        share = moves[old_member_id] if old_member_id in moves else self.target_assignment.get(old_member_id)
        if share is not None:
            moves[new_member_id] = share
            moves[old_member_id] = None
            self.refined_moved = True

    def end_offsets(self) -> dict[TaskId, int]:
        """Task changelog end offsets known anywhere in the group (the largest report wins)."""
        ends: dict[TaskId, int] = {}
        for reported in self.task_end_offsets.values():
            for task, end in reported.items():
                if end > ends.get(task, -1):
                    ends[task] = end
        return ends

    def current_active_task_process_id(self, task: TaskId) -> str | None:
        """The process running `task` as active (assigned or pending revocation), or None."""
        return self.active_task_process.get(task)

    def current_standby_task_process_ids(self, task: TaskId) -> AbstractSet[str]:
        """The processes holding `task` as standby (assigned or pending revocation)."""
        return self.standby_task_processes.get(task, _NO_PROCESSES)

    def current_warmup_task_process_ids(self, task: TaskId) -> AbstractSet[str]:
        """The processes holding `task` as warm-up (assigned or pending revocation)."""
        return self.warmup_task_processes.get(task, _NO_PROCESSES)

    # -- replay helpers (only replay calls these) -------------------------------------------
    def update_member(self, member: StreamsGroupMember) -> None:
        old = self.members.get(member.member_id)
        self.members[member.member_id] = member
        self._index_member(old, member)
        self._update_ownership(old, member)

    def remove_member(self, member_id: str, timestamp: int | None = None) -> None:
        """(`timestamp`, when the member record was deleted, matters to share groups only.)"""
        old = self.members.pop(member_id, None)
        self.task_offsets.pop(member_id, None)
        self.task_end_offsets.pop(member_id, None)
        if old is not None:
            self._index_member(old, None)
            self._update_ownership(old, None)

    def _update_ownership(self, old: StreamsGroupMember | None, new: StreamsGroupMember | None) -> None:
        # As Kafka's StreamsGroup: the old member's tasks are let go first (an active task only
        # where its process is still the recorded one; a standby or warm-up task loses the
        # process even if another member of it holds the task too), then the new member's are
        # taken (an active task is simply overwritten: the last writer wins).
        if old is not None:
            for tasks in (old.assigned, old.pending_revocation):
                for task in tasks.active_ids():
                    if self.active_task_process.get(task) == old.process_id:
                        del self.active_task_process[task]
                for index, ids in ((self.standby_task_processes, tasks.standby_ids()),
                                   (self.warmup_task_processes, tasks.warmup_ids())):
                    for task in ids:
                        processes = index.get(task)
                        if processes is not None:
                            processes.discard(old.process_id)
                            if not processes:
                                del index[task]
        if new is not None:
            for tasks in (new.assigned, new.pending_revocation):
                for task in tasks.active_ids():
                    self.active_task_process[task] = new.process_id
                for index, ids in ((self.standby_task_processes, tasks.standby_ids()),
                                   (self.warmup_task_processes, tasks.warmup_ids())):
                    for task in ids:
                        index.setdefault(task, set()).add(new.process_id)

    # -- display --------------------------------------------------------------------------
    def describe_members(self) -> list[dict]:
        def tasks(ts: TaskSets) -> str:
            """KIP-1071's notation: `active=[0_0, 0_2] standby=[0_1]` (empty roles left out)."""
            parts = [f"{'warm-up' if r == 'warmup' else r}=[{', '.join(task_label(t) for t in task_ids(getattr(ts, r)))}]"
                     for r in ROLES if getattr(ts, r)]
            return " ".join(parts)

        return [{"member_id": m.member_id, "instance_id": m.instance_id, "client_id": m.client_id,
                 "process_id": m.process_id, "member_epoch": m.member_epoch, "topology_epoch": m.topology_epoch,
                 "state": m.state.label.replace("partitions", "tasks"),
                 "protocol": "classic" if m.uses_classic_protocol else "streams",
                 "assigned": tasks(m.assigned), "pending_revocation": tasks(m.pending_revocation),
                 "target": tasks(self.target_assignment.get(m.member_id, EMPTY_TASKS))}
                for m in self.members.values()]

    def describe(self) -> dict:
        out = super().describe()
        configured = self.configured_topology()
        # The status comes from the cluster now; it explains a NOT_READY group (a replayed dump's
        # cluster may know no topics at all, so it says nothing about a group that was ready).
        not_ready = self.state == StreamsGroupState.NOT_READY and configured is not None and configured.status
        out.update(assignment_epoch=self.assignment_epoch, topology_epoch=self.topology_epoch,
                   status=f"{configured.status.code.name}: {configured.status.detail}" if not_ready else None)
        return out

    def __repr__(self) -> str:
        return (f"StreamsGroup({self.group_id!r}, {self.state}, epoch={self.group_epoch}, "
                f"assignment_epoch={self.assignment_epoch}, topology_epoch={self.topology_epoch}, "
                f"members={list(self.members)})")


def endpoint_to_partitions(group: StreamsGroup, configured: ConfiguredTopology | None) -> list[dict]:
    """For Interactive Queries: every user endpoint with the source partitions of the tasks
    its members run as active and as standby."""
    subs = configured.subtopologies if configured is not None and configured.subtopologies else {}
    by_endpoint: dict[Endpoint, tuple[dict[str, set[int]], dict[str, set[int]]]] = {}
    for m in group.members.values():
        if m.user_endpoint is None:
            continue
        active, standby = by_endpoint.setdefault(m.user_endpoint, ({}, {}))
        for role, out in (("active", active), ("standby", standby)):
            for s, ps in getattr(m.assigned, role).items():
                cs = subs.get(s)
                if cs is None:
                    continue
                for topic in (*cs.source_topics, *cs.repartition_source_topics):
                    out.setdefault(topic, set()).update(ps)
    return [{"user_endpoint": {"host": e.host, "port": e.port},
             "active_partitions": [{"topic": t, "partitions": sorted(ps)} for t, ps in sorted(a.items())],
             "standby_partitions": [{"topic": t, "partitions": sorted(ps)} for t, ps in sorted(s.items())]}
            for e, (a, s) in sorted(by_endpoint.items(), key=lambda kv: (kv[0].host, kv[0].port))]


# ---------------------------------------------------------------------------------------
# Records (Kafka's StreamsCoordinatorRecordHelpers)

def _task_ids(cls: Any, tasks: Mapping[str, Iterable[int]]) -> list:
    return [cls(subtopology_id=s, partitions=sorted(tasks[s])) for s in sorted(tasks) if tasks[s]]


def group_epoch_record(group_id: str, epoch: int, metadata_hash: int, validated_topology_epoch: int,
                       assignment_configs: Mapping[str, str] | None, stored_description_topology_epoch: int = -1,
                       failed_description_topology_epoch: int = -1) -> Any:
    """Kafka's `newStreamsGroupMetadataRecord`, in 4.2+'s layout (`LastAssignmentConfigs`, tag 1).
    `assignment_configs` None writes none (null), as records from before Kafka kept them; kgroup
    always writes them, as Kafka does."""
    V = R.StreamsGroupMetadataValue
    configs = None if assignment_configs is None else [
        V.LastAssignmentConfig(key=k, value=v) for k, v in sorted(assignment_configs.items())]
    return R.StreamsGroupMetadata(R.StreamsGroupMetadataKey(group_id=group_id), V(
        epoch=epoch, metadata_hash=metadata_hash, validated_topology_epoch=validated_topology_epoch,
        last_assignment_configs=configs,
        stored_description_topology_epoch=stored_description_topology_epoch,
        failed_description_topology_epoch=failed_description_topology_epoch))


def group_metadata_record(group: StreamsGroup, epoch: int, metadata_hash: int, validated_topology_epoch: int,
                          assignment_configs: Mapping[str, str]) -> Any:
    """`group_epoch_record` for an existing group: its KIP-1331 description epochs are written
    back as they are (Kafka reads them from the group so a routine write preserves them)."""
    return group_epoch_record(group.group_id, epoch, metadata_hash, validated_topology_epoch, assignment_configs,
                              group.stored_description_topology_epoch, group.failed_description_topology_epoch)


def member_record(group_id: str, m: StreamsGroupMember) -> Any:
    V = R.StreamsGroupMemberMetadataValue
    endpoint = None if m.user_endpoint is None else V.Endpoint(host=m.user_endpoint.host, port=m.user_endpoint.port)
    return R.StreamsGroupMemberMetadata(
        R.StreamsGroupMemberMetadataKey(group_id=group_id, member_id=m.member_id),
        V(instance_id=m.instance_id, rack_id=m.rack_id, client_id=m.client_id, client_host=m.client_host,
          rebalance_timeout_ms=m.rebalance_timeout_ms, topology_epoch=m.topology_epoch, process_id=m.process_id,
          user_endpoint=endpoint, client_tags=[V.KeyValue(key=k, value=v) for k, v in m.client_tags],
          classic_member_metadata=_classic_value(V, m.classic_member_metadata)))


def _classic_value(V: Any, meta: ClassicMemberMetadata | None) -> Any:
    if meta is None:
        return None
    return V.ClassicMemberMetadata(session_timeout_ms=meta.session_timeout_ms,
                                   supported_protocols=[V.ClassicProtocol(name=n, metadata=md)
                                                        for n, md in meta.supported_protocols])


member_tombstone = STREAMS.member_tombstone
target_member_tombstone = STREAMS.target_member_tombstone
target_epoch_record = STREAMS.target_epoch
current_assignment_tombstone = STREAMS.current_assignment_tombstone


def member_from_value(member_id: str, old: StreamsGroupMember | None, v: Any) -> StreamsGroupMember:
    base = old if old is not None else StreamsGroupMember(member_id)
    endpoint = None if v.user_endpoint is None else Endpoint(v.user_endpoint.host, v.user_endpoint.port)
    return base.replace(instance_id=v.instance_id, rack_id=v.rack_id, client_id=v.client_id,
                        client_host=v.client_host, rebalance_timeout_ms=v.rebalance_timeout_ms,
                        topology_epoch=v.topology_epoch, process_id=v.process_id, user_endpoint=endpoint,
                        client_tags=tuple((kv.key, kv.value) for kv in v.client_tags),
                        classic_member_metadata=_classic_from_value(v.classic_member_metadata))


def _classic_from_value(cm: Any) -> ClassicMemberMetadata | None:
    if cm is None:
        return None
    return ClassicMemberMetadata(cm.session_timeout_ms,
                                 tuple((p.name, bytes(p.metadata)) for p in cm.supported_protocols))


def target_member_record(group_id: str, member_id: str, tasks: TaskSets) -> Any:
    V = R.StreamsGroupTargetAssignmentMemberValue
    return STREAMS.target_member(group_id, member_id, V(
        active_tasks=_task_ids(V.TaskIds, tasks.active), standby_tasks=_task_ids(V.TaskIds, tasks.standby),
        warmup_tasks=_task_ids(V.TaskIds, tasks.warmup)))


def _task_ids_with_epochs(cls: Any, m: StreamsGroupMember, tasks: Mapping[str, frozenset[int]]) -> list:
    """Active tasks of `m` (assigned or pending revocation) with their assignment epochs, aligned
    with the partitions: Kafka 4.4.0 writes them for both lists."""
    return [cls(subtopology_id=s, partitions=sorted(tasks[s]),
                assignment_epochs=[m.active_epoch_of((s, p)) for p in sorted(tasks[s])])
            for s in sorted(tasks) if tasks[s]]


def current_assignment_record(group_id: str, m: StreamsGroupMember) -> Any:
    V = R.StreamsGroupCurrentMemberAssignmentValue
    a, p = m.assigned, m.pending_revocation
    return STREAMS.current_assignment(
        group_id, m, active_tasks=_task_ids_with_epochs(V.TaskIds, m, a.active),
        standby_tasks=_task_ids(V.TaskIds, a.standby), warmup_tasks=_task_ids(V.TaskIds, a.warmup),
        active_tasks_pending_revocation=_task_ids_with_epochs(V.TaskIds, m, p.active),
        standby_tasks_pending_revocation=_task_ids(V.TaskIds, p.standby),
        warmup_tasks_pending_revocation=_task_ids(V.TaskIds, p.warmup))


def _epochs_from_ids(entries: Iterable[Any], default_epoch: int) -> dict[TaskId, int]:
    """The tasks' assignment epochs from `TaskIds` entries; an entry without them (written before
    they were stored) counts at the member epoch, as Kafka's `fromCurrentAssignmentRecord` does."""
    out: dict[TaskId, int] = {}
    for t in entries or ():
        epochs = getattr(t, "assignment_epochs", None)
        if epochs is not None and len(epochs) != len(t.partitions):
            raise ReplayError(f"The number of assignment epochs ({len(epochs)}) does not match the number of "
                              f"partitions ({len(t.partitions)}) of subtopology {t.subtopology_id}.")
        for i, p in enumerate(t.partitions):
            out[(t.subtopology_id, int(p))] = default_epoch if epochs is None else epochs[i]
    return out


def assignment_from_value(old: StreamsGroupMember, v: Any) -> StreamsGroupMember:
    return old.replace(
        member_epoch=v.member_epoch, previous_member_epoch=v.previous_member_epoch,
        state=STREAMS.member_state.decode(v.state),
        active_epochs={**_epochs_from_ids(v.active_tasks_pending_revocation, v.member_epoch),
                       **_epochs_from_ids(v.active_tasks, v.member_epoch)},
        assigned=TaskSets(active=tasks_from_ids(v.active_tasks), standby=tasks_from_ids(v.standby_tasks),
                          warmup=tasks_from_ids(v.warmup_tasks)),
        pending_revocation=TaskSets(active=tasks_from_ids(v.active_tasks_pending_revocation),
                                    standby=tasks_from_ids(v.standby_tasks_pending_revocation),
                                    warmup=tasks_from_ids(v.warmup_tasks_pending_revocation)))


def target_from_value(v: Any) -> TaskSets:
    return TaskSets(active=tasks_from_ids(v.active_tasks), standby=tasks_from_ids(v.standby_tasks),
                    warmup=tasks_from_ids(v.warmup_tasks))


__all__ = ["StreamsGroup", "StreamsGroupMember", "StreamsGroupState", "Endpoint", "EMPTY_TASKS", "union",
           "endpoint_to_partitions", "difference", "task_ids", "tasks_from_ids", "task_ids_data", "task_label"]
