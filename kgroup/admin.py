"""An Admin-style facade over a coordinator, mirroring Kafka's `Admin` client.

KIP-709's batched offset listing:

    admin = Admin(coordinator)
    result = admin.list_consumer_group_offsets({
        "orders": ListConsumerGroupOffsetsSpec(),                       # all partitions
        "billing": ListConsumerGroupOffsetsSpec([TopicPartition("invoices", 0)]),
    })
    result.partitions_to_offset_and_metadata("orders").get()   # one group at a time
    result.all().get()                                         # every group, or the first error

One request (OffsetFetch v8+) carries every group; each group's answer — or error —
is its own future, so a failing group does not hide the others' offsets. With
`Admin(coordinator, offset_fetch_version=7)` the facade falls back to one request per
group, as the KIP's compatibility plan describes for older brokers.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, NamedTuple, TypeVar

from kgroup.errors import ErrorCode
from kgroup.protocol import request, supported_versions

T = TypeVar("T")


class TopicPartition(NamedTuple):
    topic: str
    partition: int

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}"


class OffsetAndMetadata(NamedTuple):
    offset: int
    leader_epoch: int | None = None
    metadata: str = ""


class KafkaException(Exception):
    """A per-group (or per-partition) error from the coordinator."""

    def __init__(self, code: ErrorCode, context: str = "") -> None:
        self.code = ErrorCode(code)
        super().__init__(f"{self.code.name.upper()}{': ' + context if context else ''}")


class KafkaFuture(Generic[T]):
    """A completed future, as the sans-IO coordinator answers at once."""

    def __init__(self, value: T | None = None, error: BaseException | None = None) -> None:
        self._value, self._error = value, error

    def get(self) -> T:
        if self._error is not None:
            raise self._error
        return self._value  # type: ignore[return-value]

    def done(self) -> bool:
        return True

    def is_completed_exceptionally(self) -> bool:
        return self._error is not None

    def exception(self) -> BaseException | None:
        return self._error

    def __repr__(self) -> str:
        return f"KafkaFuture(error={self._error!r})" if self._error else f"KafkaFuture({self._value!r})"


def all_of(futures: Mapping[str, KafkaFuture[T]]) -> KafkaFuture[dict[str, T]]:
    """One future for many, keyed as given: their values, or the first error (as Kafka's `all()`)."""
    out = {}
    for key, future in futures.items():
        if future.is_completed_exceptionally():
            return KafkaFuture(error=future.exception())
        out[key] = future.get()
    return KafkaFuture(out)


def _described(groups: Iterable[Any], of: Any) -> dict[str, KafkaFuture]:
    """One future per described group: its description, or its error."""
    return {g.group_id: (KafkaFuture(error=KafkaException(g.error_code, g.error_message or f"group {g.group_id!r}"))
                         if g.error_code != ErrorCode.none else KafkaFuture(of(g))) for g in groups}


@dataclass
class ListConsumerGroupOffsetsSpec:
    """Which partitions to list for one group; None means all of them."""

    topic_partitions: Iterable[TopicPartition] | None = None


@dataclass
class ListConsumerGroupOffsetsOptions:
    require_stable: bool = False


@dataclass
class ListConsumerGroupOffsetsResult:
    futures: dict[str, KafkaFuture[dict[TopicPartition, OffsetAndMetadata | None]]] = field(default_factory=dict)

    def partitions_to_offset_and_metadata(self, group_id: str | None = None) -> KafkaFuture:
        """The future of one group (the only group when `group_id` is omitted)."""
        if group_id is None:
            if len(self.futures) != 1:
                raise ValueError("name the group: the request listed several groups")
            (group_id,) = self.futures
        try:
            return self.futures[group_id]
        except KeyError:
            raise KeyError(f"group {group_id!r} was not part of the request") from None

    def all(self) -> KafkaFuture[dict[str, dict[TopicPartition, OffsetAndMetadata | None]]]:
        """Succeeds only if every group succeeded; otherwise fails with the first error."""
        return all_of(self.futures)

    def values(self) -> dict[str, KafkaFuture]:
        return dict(self.futures)


class Admin:
    """Admin operations on groups and offsets, sent as protocol requests to `coordinator`."""

    def __init__(self, coordinator: Any, *, offset_fetch_version: int | None = None) -> None:
        self.coordinator = coordinator
        self.offset_fetch_version = offset_fetch_version or max(supported_versions("OffsetFetch"))

    # -- KIP-709 ------------------------------------------------------------------
    def list_consumer_group_offsets(
        self,
        group_specs: Mapping[str, ListConsumerGroupOffsetsSpec | None] | str,
        options: ListConsumerGroupOffsetsOptions | None = None,
    ) -> ListConsumerGroupOffsetsResult:
        """Committed offsets of several groups at once (one group: pass its id)."""
        if isinstance(group_specs, str):
            group_specs = {group_specs: ListConsumerGroupOffsetsSpec()}
        options = options or ListConsumerGroupOffsetsOptions()
        specs = {g: (s or ListConsumerGroupOffsetsSpec()) for g, s in group_specs.items()}
        version = self.offset_fetch_version
        if version >= 8:
            groups = [{"group_id": g, "topics": self._topics(s, version)} for g, s in specs.items()]
            response = self.coordinator.handle(request("OffsetFetch", version, groups=groups,
                                                       require_stable=options.require_stable))
            answers = {g.group_id: (g.error_code, g.topics) for g in response.groups}
        else:
            answers = {}
            for g, s in specs.items():
                response = self.coordinator.handle(request("OffsetFetch", version, group_id=g,
                                                           topics=self._topics(s, version),
                                                           require_stable=options.require_stable))
                answers[g] = (getattr(response, "error_code", ErrorCode.none), response.topics)
        return ListConsumerGroupOffsetsResult({g: self._future(g, *answers[g]) for g in specs})

    def _topics(self, spec: ListConsumerGroupOffsetsSpec, version: int) -> list[dict] | None:
        if spec.topic_partitions is None:
            if version < 2:
                raise ValueError("OffsetFetch v0-1 cannot list all partitions; give topic_partitions")
            return None
        by_topic: dict[str, list[int]] = {}
        for tp in spec.topic_partitions:
            by_topic.setdefault(tp.topic, []).append(tp.partition)
        if version >= 10:
            cluster = self.coordinator.cluster
            return [{"topic_id": cluster.topic_id(t), "partition_indexes": ps} for t, ps in by_topic.items()]
        return [{"name": t, "partition_indexes": ps} for t, ps in by_topic.items()]

    def _future(self, group_id: str, error_code: int, topics: Any) -> KafkaFuture:
        if error_code != ErrorCode.none:
            return KafkaFuture(error=KafkaException(error_code, f"group {group_id!r}"))
        out: dict[TopicPartition, OffsetAndMetadata | None] = {}
        for t in topics:
            name = t.name if getattr(t, "name", "") else self.coordinator.cluster.topic_name(t.topic_id)
            for p in t.partitions:
                if p.error_code != ErrorCode.none:
                    return KafkaFuture(error=KafkaException(p.error_code, f"group {group_id!r}, {name}-{p.partition_index}"))
                tp = TopicPartition(name, p.partition_index)
                out[tp] = (None if p.committed_offset < 0 else
                           OffsetAndMetadata(p.committed_offset,
                                             None if getattr(p, "committed_leader_epoch", -1) < 0 else p.committed_leader_epoch,
                                             p.metadata or ""))
        return KafkaFuture(out)

    # -- other group admin -----------------------------------------------------------
    def alter_consumer_group_offsets(self, group_id: str, offsets: Mapping[TopicPartition, OffsetAndMetadata | int]) -> dict[TopicPartition, ErrorCode]:
        """Commit offsets as the Admin client does (generation -1, no member)."""
        by_topic: dict[str, list[dict]] = {}
        for tp, oam in offsets.items():
            oam = oam if isinstance(oam, OffsetAndMetadata) else OffsetAndMetadata(int(oam))
            by_topic.setdefault(tp.topic, []).append({
                "partition_index": tp.partition, "committed_offset": oam.offset,
                "committed_leader_epoch": -1 if oam.leader_epoch is None else oam.leader_epoch,
                "committed_metadata": oam.metadata})
        response = self.coordinator.handle(request("OffsetCommit", 9, group_id=group_id,
                                                   generation_id_or_member_epoch=-1, member_id="",
                                                   topics=[{"name": t, "partitions": ps} for t, ps in by_topic.items()]))
        return {TopicPartition(t.name, p.partition_index): p.error_code for t in response.topics for p in t.partitions}

    def delete_consumer_group_offsets(self, group_id: str, partitions: Iterable[TopicPartition]) -> ErrorCode | dict:
        by_topic: dict[str, list[dict]] = {}
        for tp in partitions:
            by_topic.setdefault(tp.topic, []).append({"partition_index": tp.partition})
        response = self.coordinator.handle(request("OffsetDelete", 0, group_id=group_id,
                                                   topics=[{"name": t, "partitions": ps} for t, ps in by_topic.items()]))
        if response.error_code != ErrorCode.none:
            return response.error_code
        return {TopicPartition(t.name, p.partition_index): p.error_code for t in response.topics for p in t.partitions}

    def delete_consumer_groups(self, group_ids: Iterable[str]) -> dict[str, ErrorCode]:
        response = self.coordinator.handle(request("DeleteGroups", 2, groups_names=list(group_ids)))
        return {r.group_id: r.error_code for r in response.results}

    def list_groups(self, *, states: Iterable[str] = (), types: Iterable[str] = ()) -> list[dict]:
        response = self.coordinator.handle(request("ListGroups", 5, states_filter=list(states), types_filter=list(types)))
        return [{"group_id": g.group_id, "protocol_type": g.protocol_type, "state": g.group_state, "type": g.group_type}
                for g in response.groups]

    # -- KIP-1071 Streams groups ----------------------------------------------------------
    def describe_streams_groups(self, group_ids: Iterable[str], *,
                                include_authorized_operations: bool = False) -> "DescribeStreamsGroupsResult":
        """StreamsGroupDescribe for several groups; one future per group (its own error)."""
        group_ids = list(group_ids)
        response = self.coordinator.handle(request("StreamsGroupDescribe", 0, group_ids=group_ids,
                                                   include_authorized_operations=include_authorized_operations))
        return DescribeStreamsGroupsResult(_described(response.groups, StreamsGroupDescription.of))

    def list_streams_groups(self, *, states: Iterable[str] = ()) -> list[dict]:
        """ListGroups with type `streams` (states as Kafka spells them: Empty, NotReady, ...)."""
        return self.list_groups(states=states, types=["streams"])

    def delete_streams_groups(self, group_ids: Iterable[str]) -> dict[str, ErrorCode]:
        """DeleteGroups: only empty groups can be deleted (NON_EMPTY_GROUP otherwise)."""
        return self.delete_consumer_groups(group_ids)

    def list_streams_group_offsets(self, group_specs: Mapping[str, ListConsumerGroupOffsetsSpec | None] | str,
                                   options: ListConsumerGroupOffsetsOptions | None = None
                                   ) -> ListConsumerGroupOffsetsResult:
        """OffsetFetch for Streams groups (the same RPC as consumer groups, KIP-1071)."""
        return self.list_consumer_group_offsets(group_specs, options)

    def alter_streams_group_offsets(self, group_id: str,
                                    offsets: Mapping[TopicPartition, OffsetAndMetadata | int]) -> dict[TopicPartition, ErrorCode]:
        """OffsetCommit as the Admin client sends it; the group must be empty (else UNKNOWN_MEMBER_ID)."""
        return self.alter_consumer_group_offsets(group_id, offsets)

    def delete_streams_group_offsets(self, group_id: str, topics: Iterable[str]) -> ErrorCode | dict:
        """OffsetDelete of every partition of `topics` (KIP-1071 takes topics, not partitions)."""
        cluster = self.coordinator.cluster
        partitions = [TopicPartition(t, p) for t in sorted(set(topics)) for p in range(cluster.partitions(t))]
        return self.delete_consumer_group_offsets(group_id, partitions)

    # -- KIP-932 share groups -------------------------------------------------------------
    def describe_share_groups(self, group_ids: Iterable[str], *,
                              include_authorized_operations: bool = False) -> "DescribeShareGroupsResult":
        """ShareGroupDescribe for several groups; one future per group (its own error)."""
        response = self.coordinator.handle(request("ShareGroupDescribe", 1, group_ids=list(group_ids),
                                                   include_authorized_operations=include_authorized_operations))
        return DescribeShareGroupsResult(_described(response.groups, ShareGroupDescription.of))

    def list_share_groups(self, *, states: Iterable[str] = ()) -> list[dict]:
        """ListGroups with type `share` (the draft KIP's `listShareGroups`; Kafka's
        `listGroups(ListGroupsOptions.forShareGroups())`)."""
        return self.list_groups(states=states, types=["share"])

    def delete_share_groups(self, group_ids: Iterable[str]) -> dict[str, ErrorCode]:
        """DeleteGroups: only empty groups (NON_EMPTY_GROUP otherwise); their share state goes too."""
        return self.delete_consumer_groups(group_ids)

    def list_share_group_offsets(self, group_specs: Mapping[str, "ListShareGroupOffsetsSpec | None"] | str
                                 ) -> "ListShareGroupOffsetsResult":
        """DescribeShareGroupOffsets: each share-partition's start offset (SPSO) and lag, several
        groups in one request (one group: pass its id)."""
        if isinstance(group_specs, str):
            group_specs = {group_specs: ListShareGroupOffsetsSpec()}
        groups = []
        for g, spec in group_specs.items():
            spec = spec or ListShareGroupOffsetsSpec()
            topics = None
            if spec.topic_partitions is not None:
                by_topic: dict[str, list[int]] = {}
                for tp in spec.topic_partitions:
                    by_topic.setdefault(tp.topic, []).append(tp.partition)
                topics = [{"topic_name": t, "partitions": ps} for t, ps in by_topic.items()]
            groups.append({"group_id": g, "topics": topics})
        version = max(supported_versions("DescribeShareGroupOffsets"))
        response = self.coordinator.handle(request("DescribeShareGroupOffsets", version, groups=groups))
        futures: dict[str, KafkaFuture] = {}
        for g in response.groups:
            if g.error_code != ErrorCode.none:
                futures[g.group_id] = KafkaFuture(error=KafkaException(g.error_code, g.error_message or f"group {g.group_id!r}"))
                continue
            out: dict[TopicPartition, SharePartitionOffsetInfo | None] = {}
            error = None
            for t in g.topics:
                for p in t.partitions:
                    if p.error_code != ErrorCode.none and error is None:
                        error = KafkaException(p.error_code, f"group {g.group_id!r}, {t.topic_name}-{p.partition_index}")
                    out[TopicPartition(t.topic_name, p.partition_index)] = (
                        None if p.start_offset < 0 else
                        SharePartitionOffsetInfo(p.start_offset, None if p.leader_epoch < 0 else p.leader_epoch,
                                                 getattr(p, "lag", -1)))
            futures[g.group_id] = KafkaFuture(error=error) if error is not None else KafkaFuture(out)
        return ListShareGroupOffsetsResult(futures)

    def alter_share_group_offsets(self, group_id: str, offsets: Mapping[TopicPartition, "int | OffsetAndMetadata"]
                                  ) -> ErrorCode | dict[TopicPartition, ErrorCode]:
        """AlterShareGroupOffsets: new start offsets (SPSO) for an empty group's share-partitions
        (their in-flight records are discarded); NON_EMPTY_GROUP while it has members. Offsets are
        Kafka's `Long`s or the draft KIP's `OffsetAndMetadata` (only its offset counts)."""
        by_topic: dict[str, list[dict]] = {}
        for tp, offset in offsets.items():
            offset = offset.offset if isinstance(offset, OffsetAndMetadata) else offset
            by_topic.setdefault(tp.topic, []).append({"partition_index": tp.partition, "start_offset": int(offset)})
        response = self.coordinator.handle(request("AlterShareGroupOffsets", 0, group_id=group_id, topics=[
            {"topic_name": t, "partitions": ps} for t, ps in by_topic.items()]))
        if response.error_code != ErrorCode.none:
            return response.error_code
        return {TopicPartition(t.topic_name, p.partition_index): p.error_code
                for t in response.responses for p in t.partitions}

    def delete_share_group_offsets(self, group_id: str, topics: Iterable[str]) -> ErrorCode | dict[str, ErrorCode]:
        """DeleteShareGroupOffsets: an empty group forgets whole topics (Kafka's Admin takes topic
        names; the draft's `Set<TopicPartition>` is widened to the partitions' topics)."""
        names = sorted({t.topic if isinstance(t, TopicPartition) else t for t in topics})
        response = self.coordinator.handle(request("DeleteShareGroupOffsets", 0, group_id=group_id,
                                                   topics=[{"topic_name": t} for t in names]))
        if response.error_code != ErrorCode.none:
            return response.error_code
        return {t.topic_name: t.error_code for t in response.responses}

    def reset_share_group_offsets(self, group_id: str, topics: Iterable[str | TopicPartition], *,
                                  to_earliest: bool = False, to_latest: bool = False,
                                  to_datetime: "int | str | None" = None, to_offset: int | None = None,
                                  dry_run: bool = False) -> ErrorCode | dict[TopicPartition, int | ErrorCode]:
        """`kafka-share-groups.sh --reset-offsets` (the KIP's tool): the new SPSO of each partition
        from the log (earliest, latest, the first offset at or after a timestamp in ms, or a
        given offset), then `alter_share_group_offsets` unless `dry_run` (which returns the offsets).
        `to_datetime`: epoch milliseconds, or the tool's 'YYYY-MM-DDTHH:mm:SS.sss' (UTC unless an
        offset is given)."""
        if isinstance(to_datetime, str):
            from datetime import datetime, timezone
            when = datetime.fromisoformat(to_datetime)
            when = when if when.tzinfo is not None else when.replace(tzinfo=timezone.utc)
            to_datetime = int(when.timestamp() * 1000)
        if sum(x for x in (to_earliest, to_latest, to_datetime is not None, to_offset is not None)) != 1:
            raise ValueError("give exactly one of to_earliest, to_latest, to_datetime, to_offset")
        cluster = self.coordinator.cluster
        wanted: list[TopicPartition] = []
        for t in topics:
            if isinstance(t, TopicPartition):
                wanted.append(t)
            else:
                wanted += [TopicPartition(t, p) for p in range(cluster.partitions(t))]
        offsets: dict[TopicPartition, int] = {}
        for tp in wanted:
            offsets[tp] = self._reset_offset(tp, to_earliest, to_latest, to_datetime, to_offset)
        if dry_run:
            return offsets
        return self.alter_share_group_offsets(group_id, offsets)

    def _reset_offset(self, tp: TopicPartition, earliest: bool, latest: bool, timestamp: int | None,
                      offset: int | None) -> int:
        cluster = self.coordinator.cluster
        start_of = getattr(cluster, "log_start_offset", None)
        start = start_of(tp.topic, tp.partition) if start_of is not None else 0
        end = cluster.end_offset(tp.topic, tp.partition)
        if earliest:
            return start
        if latest:
            return end
        if offset is not None:
            return min(max(offset, start), end)  # as the tool clamps to the log's range
        lookup = getattr(cluster, "offset_for_timestamp", None)
        if lookup is None:
            raise ValueError("resetting to a timestamp needs the records' timestamps (Cluster.offset_for_timestamp)")
        found = lookup(tp.topic, tp.partition, timestamp)
        return end if found is None or found < 0 else found


@dataclass(frozen=True)
class StreamsGroupMemberDescription:
    member_id: str
    member_epoch: int
    instance_id: str | None
    rack_id: str | None
    client_id: str
    client_host: str
    topology_epoch: int
    process_id: str
    user_endpoint: tuple[str, int] | None
    client_tags: dict[str, str]
    task_offsets: dict[tuple[str, int], int]
    task_end_offsets: dict[tuple[str, int], int]
    assignment: dict[str, dict[str, list[int]]]          # role -> subtopology -> partitions
    target_assignment: dict[str, dict[str, list[int]]]
    is_classic: bool


@dataclass(frozen=True)
class StreamsGroupSubtopologyDescription:
    subtopology_id: str
    source_topics: list[str]
    repartition_sink_topics: list[str]
    state_changelog_topics: dict[str, int]       # name -> partitions
    repartition_source_topics: dict[str, int]


@dataclass(frozen=True)
class StreamsGroupDescription:
    """KIP-1071's `StreamsGroupDescription`."""

    group_id: str
    group_epoch: int
    target_assignment_epoch: int
    topology_epoch: int
    subtopologies: list[StreamsGroupSubtopologyDescription] | None
    members: list[StreamsGroupMemberDescription]
    group_state: str
    authorized_operations: int | None

    @classmethod
    def of(cls, g: Any) -> "StreamsGroupDescription":
        def tasks(a: Any) -> dict[str, dict[str, list[int]]]:
            return {role: {t.subtopology_id: list(t.partitions) for t in getattr(a, f"{role}_tasks")}
                    for role in ("active", "standby", "warmup")}

        def offsets(items: Any) -> dict[tuple[str, int], int]:
            return {(t.subtopology_id, t.partition): t.offset for t in items}

        members = [StreamsGroupMemberDescription(
            m.member_id, m.member_epoch, m.instance_id, m.rack_id, m.client_id, m.client_host, m.topology_epoch,
            m.process_id, None if m.user_endpoint is None else (m.user_endpoint.host, m.user_endpoint.port),
            {kv.key: kv.value for kv in m.client_tags}, offsets(m.task_offsets), offsets(m.task_end_offsets),
            tasks(m.assignment), tasks(m.target_assignment), m.is_classic) for m in g.members]
        subs = None
        if g.topology is not None and g.topology.subtopologies is not None:
            subs = [StreamsGroupSubtopologyDescription(
                s.subtopology_id, list(s.source_topics), list(s.repartition_sink_topics),
                {t.name: t.partitions for t in s.state_changelog_topics},
                {t.name: t.partitions for t in s.repartition_source_topics}) for s in g.topology.subtopologies]
        return cls(g.group_id, g.group_epoch, g.assignment_epoch, -1 if g.topology is None else g.topology.epoch,
                   subs, members, g.group_state,
                   None if g.authorized_operations == -2147483648 else g.authorized_operations)


@dataclass
class DescribedGroups(Generic[T]):
    """What a describe-groups Admin call returns: one future per group (Kafka's
    `Describe...GroupsResult`)."""

    futures: dict[str, KafkaFuture[T]] = field(default_factory=dict)

    def described_groups(self) -> dict[str, KafkaFuture[T]]:
        return dict(self.futures)

    def all(self) -> KafkaFuture[dict[str, T]]:
        """Succeeds only if every group could be described; otherwise the first error."""
        return all_of(self.futures)


class DescribeStreamsGroupsResult(DescribedGroups[StreamsGroupDescription]):
    """KIP-1071's `DescribeStreamsGroupsResult`."""


# ---------------------------------------------------------------------------------------
# KIP-932 share groups

@dataclass(frozen=True)
class ListShareGroupOffsetsSpec:
    """Which share-partitions to list: None lists every one with durable state."""

    topic_partitions: list[TopicPartition] | None = None


class SharePartitionOffsetInfo(NamedTuple):
    """A share-partition's start offset (SPSO), leader epoch and lag (Kafka's `SharePartitionOffsetInfo`)."""

    start_offset: int
    leader_epoch: int | None
    lag: int


@dataclass
class ListShareGroupOffsetsResult:
    futures: dict[str, KafkaFuture] = field(default_factory=dict)

    def partitions_to_offset_info(self, group_id: str) -> KafkaFuture:
        """{TopicPartition: SharePartitionOffsetInfo or None (no start offset yet)}."""
        return self.futures[group_id]

    def partitions_to_offset_and_metadata(self, group_id: str) -> KafkaFuture:
        """{TopicPartition: OffsetAndMetadata(start offset, leader epoch) or None}."""
        f = self.futures[group_id]
        if f.is_completed_exceptionally():
            return f
        return KafkaFuture({tp: None if i is None else OffsetAndMetadata(i.start_offset, i.leader_epoch, "")
                            for tp, i in f.get().items()})

    def all(self) -> KafkaFuture:
        """Every group's offsets, or the first error."""
        return all_of({g: self.partitions_to_offset_and_metadata(g) for g in self.futures})


@dataclass(frozen=True)
class ShareMemberDescription:
    """Kafka's `ShareMemberDescription`."""

    member_id: str
    rack_id: str | None
    client_id: str
    host: str
    member_epoch: int
    subscribed_topic_names: list[str]
    assignment: list[TopicPartition]


@dataclass(frozen=True)
class ShareGroupDescription:
    """Kafka's `ShareGroupDescription`."""

    group_id: str
    members: list[ShareMemberDescription]
    partition_assignor: str
    group_state: str
    group_epoch: int
    target_assignment_epoch: int
    authorized_operations: int | None

    @classmethod
    def of(cls, g: Any) -> "ShareGroupDescription":
        members = [ShareMemberDescription(
            m.member_id, m.rack_id, m.client_id, m.client_host, m.member_epoch, list(m.subscribed_topic_names),
            [TopicPartition(t.topic_name, p) for t in m.assignment.topic_partitions for p in t.partitions])
            for m in g.members]
        return cls(g.group_id, members, g.assignor_name, g.group_state, g.group_epoch, g.assignment_epoch,
                   None if g.authorized_operations == -2147483648 else g.authorized_operations)


class DescribeShareGroupsResult(DescribedGroups[ShareGroupDescription]):
    """Kafka's `DescribeShareGroupsResult`."""
