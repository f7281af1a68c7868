"""Kafka's Streams test fixtures, as kgroup records and requests (shared by the Streams parity tests).

Kafka's coordinator tests set a group up with `StreamsGroupBuilder` (records replayed into the
coordinator) and drive it with `StreamsGroupHeartbeatRequestData`; here the same state is built
with the Streams group package's record builders and loaded with `Coordinator.load`, so a test
shows "a coordinator loaded from a Kafka-written log continues as Kafka does".
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kgroup import Cluster, Coordinator
from kgroup.assignors.streams import TASK_ASSIGNOR_OVERRIDE, FixedTaskAssignor, TaskSets
from kgroup.groups.metadata_hash import metadata_hash
from kgroup.groups.streams import Subtopology, Topology
from kgroup.groups.streams import group as G
from kgroup.groups.streams.configuration import configure
from kgroup.groups.streams.group import StreamsGroupMember

# -- Kafka's StreamsGroupTestUtil ---------------------------------------------------------------

#: the process id, rebalance timeout and client of `streamsGroupMemberBuilderWithDefaults` and
#: `staticJoinHeartbeat` (the client is what kgroup's request context says by default)
DEFAULT_PROCESS_ID = "process-id"
DEFAULT_REBALANCE_TIMEOUT_MS = 1500
DEFAULT_CLIENT_ID = "kgroup"
DEFAULT_CLIENT_HOST = "/127.0.0.1"
#: `getDefaultAssignmentConfigs()`: Kafka's group metadata record holds num.standby.replicas only
DEFAULT_ASSIGNMENT_CONFIGS = {"num.standby.replicas": "0"}


class StreamsTopicFixture:
    """Kafka's `streamsTopicFixture(subtopology, topic, partitions)`: one subtopology reading one
    topic, the cluster holding it, and the task sets its tests build from partition numbers."""

    def __init__(self, subtopology_id: str, topic: str, partitions: int, seed: int = 1) -> None:
        self.subtopology_id, self.topic_name, self.partitions = subtopology_id, topic, partitions
        self.cluster = Cluster({topic: partitions}, seed=seed)
        self.topology = Topology(0, (Subtopology(subtopology_id, source_topics=(topic,)),))

    @property
    def metadata_hash(self) -> int:
        return metadata_hash(configure(self.topology, self.cluster).topics, self.cluster)

    def tasks(self, *partitions: int) -> TaskSets:
        """`targetAssignment(...)` / `assignedTasks(epoch, ...)`: active tasks of the subtopology."""
        return TaskSets(active={self.subtopology_id: frozenset(partitions)} if partitions else {})

    def response_tasks(self, *partitions: int) -> dict[str, set[int]]:
        """`responseTasks(...)` as `tests.streams_testing.tasks_of` reads a response."""
        return {self.subtopology_id: set(partitions)} if partitions else {}


def kafka_member(member_id: str, instance_id: str | None = None, **fields: Any) -> StreamsGroupMember:
    """`streamsGroupMemberBuilderWithDefaults(memberId, instanceId)` with `fields` set on it."""
    defaults = dict(instance_id=instance_id, rebalance_timeout_ms=DEFAULT_REBALANCE_TIMEOUT_MS,
                    process_id=DEFAULT_PROCESS_ID, client_id=DEFAULT_CLIENT_ID, client_host=DEFAULT_CLIENT_HOST,
                    member_epoch=1, previous_member_epoch=0)
    return StreamsGroupMember(member_id, **{**defaults, **fields})


def with_task_epochs(member: StreamsGroupMember, epoch: int,
                     overrides: Mapping[tuple[str, int], int] | None = None) -> StreamsGroupMember:
    """Kafka's `mkTasksWithEpochs` / `TasksTupleWithEpochs`: the member's assigned active tasks at
    assignment epoch `epoch` (`overrides`: tasks assigned in another epoch)."""
    epochs = dict.fromkeys(member.assigned.active_ids(), epoch)
    epochs.update(overrides or {})
    return member.replace(active_epochs=epochs)


def streams_group_records(group_id: str, group_epoch: int, *, members: Iterable[StreamsGroupMember] = (),
                          targets: Mapping[str, TaskSets] | None = None, target_epoch: int | None = None,
                          topology: Topology | None = None, metadata_hash: int = 0,
                          validated_topology_epoch: int = -1,
                          assignment_configs: Mapping[str, str] | None = None,
                          assignment_timestamp: int = 0) -> list:
    """The records Kafka's `StreamsGroupBuilder(groupId, groupEpoch)...build()` replays: members,
    topology, group metadata, target assignment and its epoch, current assignments."""
    members = list(members)
    records: list = [G.member_record(group_id, m) for m in members]
    if topology is not None:
        records.append(topology.to_record(group_id))
    records.append(G.group_epoch_record(group_id, group_epoch, metadata_hash, validated_topology_epoch,
                                        dict(assignment_configs or {})))
    records += [G.target_member_record(group_id, mid, tasks) for mid, tasks in (targets or {}).items()]
    records.append(G.target_epoch_record(group_id, group_epoch if target_epoch is None else target_epoch,
                                         assignment_timestamp))
    records += [G.current_assignment_record(group_id, m) for m in members]
    return records


def load_streams_group(records: list, cluster: Cluster, *, profile: str = "kip", config: dict | None = None,
                       assignment: Mapping[str, TaskSets] | None = None) -> Coordinator:
    """A coordinator loaded from `records`; `assignment` plays Kafka's `MockTaskAssignor`
    (`prepareGroupAssignment`): the fixed targets the next assignment returns (None: the
    configured assignor). Kafka's tests that do not set the initial rebalance delay run with
    its default; those with the default set it to 0 here where nothing is asserted about it."""
    c = Coordinator.load(records, cluster=cluster, profile=profile, config=config)
    if assignment is not None:
        c.soft_state[TASK_ASSIGNOR_OVERRIDE] = FixedTaskAssignor(assignment)
    return c


def prepare_assignment(c: Coordinator, assignment: Mapping[str, TaskSets]) -> None:
    """`MockTaskAssignor.prepareGroupAssignment`: the next target assignment."""
    c.soft_state[TASK_ASSIGNOR_OVERRIDE] = FixedTaskAssignor(assignment)


def records_since(c: Coordinator, position: int) -> list:
    """The records written since log position `position`, in order (Kafka's `result.records()`)."""
    return [c.log.entry_at(i).record for i in range(position, c.position)]


def heartbeat_answer(r: Any) -> dict:
    """The parts of a StreamsGroupHeartbeat response Kafka's `assertResponseEquals` pins, with task
    lists as {subtopology: partitions} (None when the field was left out)."""
    from kgroup.protocol import ms

    def tasks(field_: Any) -> dict | None:
        return None if field_ is None else {t.subtopology_id: set(t.partitions) for t in field_}
    return {"error_code": r.error_code, "member_id": r.member_id, "member_epoch": r.member_epoch,
            "heartbeat_interval": ms(r.heartbeat_interval), "task_offset_interval": ms(r.task_offset_interval),
            "active_tasks": tasks(r.active_tasks), "standby_tasks": tasks(r.standby_tasks),
            "warmup_tasks": tasks(r.warmup_tasks), "endpoint_information_epoch": r.endpoint_information_epoch}


def streams_answer(member_id: str, member_epoch: int, active: dict | None = None, *, error_code: Any = None,
                   heartbeat_interval: int = 5000, task_offset_interval: int = 60000,
                   endpoint_information_epoch: int = 0) -> dict:
    """What `heartbeat_answer` gives for Kafka's expected `StreamsGroupHeartbeatResponseData`:
    `active` None leaves all three task lists out, a mapping sends them (standby and warm-up empty)."""
    from kgroup.errors import ErrorCode
    others = None if active is None else {}
    return {"error_code": ErrorCode.none if error_code is None else error_code, "member_id": member_id,
            "member_epoch": member_epoch, "heartbeat_interval": heartbeat_interval,
            "task_offset_interval": task_offset_interval, "active_tasks": active, "standby_tasks": others,
            "warmup_tasks": others, "endpoint_information_epoch": endpoint_information_epoch}


def leave_answer(member_id: str, member_epoch: int) -> dict:
    """Kafka's answer to a leave (-1 or -2): the epoch sent, nothing else set."""
    return streams_answer(member_id, member_epoch, heartbeat_interval=0, task_offset_interval=0)


# -- requests and responses as GroupMetadataManagerStreamsGroupTest writes them -------------------

#: Kafka's defaults in the expected responses (GroupCoordinatorConfig)
HEARTBEAT_INTERVAL_MS, TASK_OFFSET_INTERVAL_MS, ACCEPTABLE_RECOVERY_LAG = 5000, 60_000, 10_000
#: StreamsGroupHeartbeatResponse.Status codes
STALE_TOPOLOGY, MISSING_SOURCE_TOPICS, INCORRECTLY_PARTITIONED_TOPICS = 0, 1, 2
MISSING_INTERNAL_TOPICS, SHUTDOWN_APPLICATION, ASSIGNMENT_DELAYED = 3, 4, 5


def task_ids(tasks: Mapping[str, Iterable[int]] | None) -> list | None:
    """`{subtopology: partitions}` as TaskIds data (None stays None: the field is left out)."""
    if tasks is None:
        return None
    return [{"subtopology_id": s, "partitions": sorted(ps)} for s, ps in sorted(tasks.items()) if ps]


def streams_heartbeat(c: Coordinator, group_id: str, member_id: str, epoch: int, *, topology: Topology | None = None,
                      active: Mapping | None = None, standby: Mapping | None = None, warmup: Mapping | None = None,
                      version: int = 0, **fields: Any) -> Any:
    """`context.streamsGroupHeartbeat(new StreamsGroupHeartbeatRequestData()...)`: only the fields
    the Kafka test sets; every other one keeps its schema default (null, -1, false)."""
    from kgroup.protocol import request
    data = dict(group_id=group_id, member_id=member_id, member_epoch=epoch, active_tasks=task_ids(active),
                standby_tasks=task_ids(standby), warmup_tasks=task_ids(warmup), **fields)
    if topology is not None:
        data["topology"] = topology.to_request_data()
    return c.handle(request("StreamsGroupHeartbeat", version, **data))


def streams_join(c: Coordinator, group_id: str, member_id: str, topology: Topology, **fields: Any) -> Any:
    """The join every Kafka test sends: epoch 0, rebalance timeout 1500 ms, empty task lists."""
    fields.setdefault("rebalance_timeout", DEFAULT_REBALANCE_TIMEOUT_MS)
    return streams_heartbeat(c, group_id, member_id, 0, topology=topology, active={}, standby={}, warmup={},
                             **fields)


def expected_heartbeat(profile: str, member_id: str, epoch: int, *, active: Mapping | None = None,
                       standby: Mapping | None = None, warmup: Mapping | None = None, status: Iterable = (),
                       heartbeat_interval: int = HEARTBEAT_INTERVAL_MS, lag: int = ACCEPTABLE_RECOVERY_LAG,
                       endpoint_epoch: int = 0, partitions_by_user_endpoint: list | None = None) -> dict:
    """Kafka's expected `StreamsGroupHeartbeatResponseData`, as `to_data` gives a v0 response. Kafka
    sends AcceptableRecoveryLag in v1's int64 field; v0's int32 field holds it only under `kip`
    (the README's profile table). Tasks given as None are left out (a partial response)."""
    return {"throttle_time": 0, "error_code": 0, "error_message": None, "member_id": member_id,
            "member_epoch": epoch, "heartbeat_interval": heartbeat_interval,
            "acceptable_recovery_lag": lag if profile == "kip" else 0,
            "task_offset_interval": TASK_OFFSET_INTERVAL_MS if epoch >= 0 else 0,
            "status": [{"status_code": code, "status_detail": detail} for code, detail in status],
            "active_tasks": task_ids(active), "standby_tasks": task_ids(standby), "warmup_tasks": task_ids(warmup),
            "endpoint_information_epoch": endpoint_epoch, "partitions_by_user_endpoint": partitions_by_user_endpoint}


def records_since(c: Coordinator, position: int) -> list:
    """The records the coordinator wrote from log position `position` on (`result.records()`)."""
    return [c.log.entry_at(i).record for i in range(position, c.position)]
