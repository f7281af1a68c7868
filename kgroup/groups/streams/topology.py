"""A Streams group's topology as the coordinator keeps it (KIP-1071 "Topology metadata").

The topology is what the first member sends when it joins (StreamsGroupHeartbeat's
`Topology`) and what the StreamsGroupTopology record (type 23) persists: subtopologies
with their source topics (names or RE2 regular expressions), repartition sink and source
topics, state changelog topics and copartition groups. It says nothing about partition
counts of source or changelog topics: those come from the cluster when the topology is
*configured* (`configuration.py`).

`validate()` checks the KIP's STREAMS_INVALID_TOPOLOGY invariants.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from kgroup.errors import ErrorCode, KafkaError
from kgroup import records as R


@dataclass(frozen=True)
class TopicInfo:
    """An internal topic's requirements: partitions (0: not fixed), replication factor
    (0: the broker default) and topic configs."""

    name: str
    partitions: int = 0
    replication_factor: int = 0
    configs: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class CopartitionGroup:
    """Indexes into a subtopology's `source_topics`, `source_topic_regex` and
    `repartition_source_topics`: topics that must have the same partition count."""

    source_topics: tuple[int, ...] = ()
    source_topic_regex: tuple[int, ...] = ()
    repartition_source_topics: tuple[int, ...] = ()


@dataclass(frozen=True)
class Subtopology:
    subtopology_id: str
    source_topics: tuple[str, ...] = ()
    source_topic_regex: tuple[str, ...] = ()
    state_changelog_topics: tuple[TopicInfo, ...] = ()
    repartition_sink_topics: tuple[str, ...] = ()
    repartition_source_topics: tuple[TopicInfo, ...] = ()
    copartition_groups: tuple[CopartitionGroup, ...] = ()

    @property
    def stateful(self) -> bool:
        """A subtopology with state stores (changelog topics) has stateful tasks."""
        return bool(self.state_changelog_topics)

    def normalized(self) -> "Subtopology":
        """The same subtopology with its lists in a canonical order (for comparisons)."""
        return Subtopology(self.subtopology_id, tuple(sorted(self.source_topics)),
                           tuple(sorted(self.source_topic_regex)),
                           tuple(sorted(self.state_changelog_topics, key=lambda t: t.name)),
                           tuple(sorted(self.repartition_sink_topics)),
                           tuple(sorted(self.repartition_source_topics, key=lambda t: t.name)),
                           tuple(sorted(self._named_copartition_groups())))

    def _named_copartition_groups(self) -> list:
        # Copartition groups compare by the topics they name, not by index positions.
        out = []
        for g in self.copartition_groups:
            try:
                out.append(CopartitionGroup(
                    tuple(sorted(self.source_topics[i] for i in g.source_topics)),  # type: ignore[misc]
                    tuple(sorted(self.source_topic_regex[i] for i in g.source_topic_regex)),  # type: ignore[misc]
                    tuple(sorted(self.repartition_source_topics[i].name  # type: ignore[misc]
                                 for i in g.repartition_source_topics))))
            except IndexError:
                out.append(g)
        return out


@dataclass(frozen=True)
class Topology:
    """The topology of a Streams group at one topology epoch."""

    epoch: int
    subtopologies: tuple[Subtopology, ...]

    # -- conversions ------------------------------------------------------------------
    @classmethod
    def from_request(cls, t: Any) -> "Topology":
        """From StreamsGroupHeartbeatRequest's `Topology` (kio)."""
        return cls(int(t.epoch), tuple(_subtopology(s, "key", "value") for s in t.subtopologies))

    @classmethod
    def from_record(cls, value: Any) -> "Topology":
        """From a StreamsGroupTopologyValue."""
        return cls(value.epoch, tuple(_subtopology(s, "key", "value") for s in value.subtopologies))

    def to_record(self, group_id: str) -> Any:
        """The StreamsGroupTopology record (type 23); subtopologies in the order received."""
        V = R.StreamsGroupTopologyValue

        def info(t: TopicInfo) -> Any:
            return V.TopicInfo(name=t.name, partitions=t.partitions, replication_factor=t.replication_factor,
                               topic_configs=[V.TopicConfig(key=k, value=v) for k, v in t.configs])

        subs = [V.Subtopology(
            subtopology_id=s.subtopology_id, source_topics=list(s.source_topics),
            source_topic_regex=list(s.source_topic_regex),
            state_changelog_topics=[info(t) for t in s.state_changelog_topics],
            repartition_sink_topics=list(s.repartition_sink_topics),
            repartition_source_topics=[info(t) for t in s.repartition_source_topics],
            copartition_groups=[V.CopartitionGroup(source_topics=list(g.source_topics),
                                                   source_topic_regex=list(g.source_topic_regex),
                                                   repartition_source_topics=list(g.repartition_source_topics))
                                for g in s.copartition_groups]) for s in self.subtopologies]
        return R.StreamsGroupTopology(R.StreamsGroupTopologyKey(group_id=group_id),
                                      V(epoch=self.epoch, subtopologies=subs))

    def to_request_data(self) -> dict:
        """The StreamsGroupHeartbeat `Topology` as plain data (for `kgroup.protocol.request`)."""
        def info(t: TopicInfo) -> dict:
            return {"name": t.name, "partitions": t.partitions, "replication_factor": t.replication_factor,
                    "topic_configs": [{"key": k, "value": v} for k, v in t.configs]}

        return {"epoch": self.epoch, "subtopologies": [
            {"subtopology_id": s.subtopology_id, "source_topics": list(s.source_topics),
             "source_topic_regex": list(s.source_topic_regex),
             "state_changelog_topics": [info(t) for t in s.state_changelog_topics],
             "repartition_sink_topics": list(s.repartition_sink_topics),
             "repartition_source_topics": [info(t) for t in s.repartition_source_topics],
             "copartition_groups": [{"source_topics": list(g.source_topics),
                                     "source_topic_regex": list(g.source_topic_regex),
                                     "repartition_source_topics": list(g.repartition_source_topics)}
                                    for g in s.copartition_groups]} for s in self.subtopologies]}

    def with_epoch(self, epoch: int) -> "Topology":
        return Topology(epoch, self.subtopologies)

    # -- questions --------------------------------------------------------------------
    def same_as(self, other: "Topology") -> bool:
        """The same topology metadata, whatever the order of lists (the epoch is not compared)."""
        return (sorted((s.normalized() for s in self.subtopologies), key=lambda s: s.subtopology_id)
                == sorted((s.normalized() for s in other.subtopologies), key=lambda s: s.subtopology_id))

    def subtopology(self, subtopology_id: str) -> Subtopology | None:
        for s in self.subtopologies:
            if s.subtopology_id == subtopology_id:
                return s
        return None

    @property
    def subtopology_ids(self) -> list[str]:
        return [s.subtopology_id for s in self.subtopologies]

    @property
    def has_regex(self) -> bool:
        return any(s.source_topic_regex for s in self.subtopologies)

    @property
    def internal_topics(self) -> set[str]:
        """Repartition source topics and changelog topics: what the coordinator creates."""
        return {t.name for s in self.subtopologies for t in (*s.repartition_source_topics, *s.state_changelog_topics)}


def _subtopology(s: Any, key: str, value: str) -> Subtopology:
    def info(t: Any) -> TopicInfo:
        return TopicInfo(t.name, int(t.partitions), int(t.replication_factor),
                         tuple((getattr(c, key), getattr(c, value)) for c in t.topic_configs))

    return Subtopology(
        s.subtopology_id, tuple(s.source_topics), tuple(s.source_topic_regex),
        tuple(info(t) for t in s.state_changelog_topics), tuple(s.repartition_sink_topics),
        tuple(info(t) for t in s.repartition_source_topics),
        tuple(CopartitionGroup(tuple(int(i) for i in g.source_topics), tuple(int(i) for i in g.source_topic_regex),
                               tuple(int(i) for i in g.repartition_source_topics))
              for g in s.copartition_groups))


# ---------------------------------------------------------------------------------------
# Validation: KIP-1071 "Request Validation", STREAMS_INVALID_TOPOLOGY

def _invalid(message: str) -> KafkaError:
    return KafkaError(ErrorCode.streams_invalid_topology, message)


def _names(items: Iterable[Any]) -> set[str]:
    return {t if isinstance(t, str) else t.name for t in items}


def validate(topology: Topology, *, changelog_may_be_source: bool) -> None:
    """Raise STREAMS_INVALID_TOPOLOGY unless the topology keeps the KIP's invariants.

    `changelog_may_be_source`: the `kafka` profile accepts a source topic reused as a
    changelog (Kafka Streams' source-topic optimisation); the KIP forbids it."""
    seen: set[str] = set()
    for s in topology.subtopologies:
        if s.subtopology_id in seen:
            raise _invalid(f"Subtopology {s.subtopology_id} is defined more than once.")
        seen.add(s.subtopology_id)
    sources = set().union(*(_names(s.source_topics) for s in topology.subtopologies))
    sinks = set().union(*(_names(s.repartition_sink_topics) for s in topology.subtopologies))
    repartition_sources = set().union(*(_names(s.repartition_source_topics) for s in topology.subtopologies))
    changelogs = set().union(*(_names(s.state_changelog_topics) for s in topology.subtopologies))
    for s in topology.subtopologies:
        # 1. A StateChangelogTopic must not have a defined partition number.
        for t in s.state_changelog_topics:
            if t.partitions != 0:  # Kafka's words (also checked with the request)
                raise _invalid(f"Changelog topic {t.name} must have an undefined partition count, but it is set "
                               f"to {t.partitions}.")
        for t in s.repartition_source_topics:
            if t.partitions < 0:
                raise _invalid(f"Repartition source topic {t.name} has a negative number of partitions.")
    # 2. A RepartitionSourceTopic cannot be in SourceTopics or StateChangelogTopics.
    clash = sorted(repartition_sources & (sources | changelogs))
    if clash:
        raise _invalid(f"Repartition source topics {', '.join(clash)} must not also be source or changelog topics.")
    # 3. A StateChangelogTopic cannot be in SourceTopics, RepartitionSinkTopics or RepartitionSourceTopics.
    clash = sorted(changelogs & ((set() if changelog_may_be_source else sources) | sinks | repartition_sources))
    if clash:
        raise _invalid(f"Changelog topics {', '.join(clash)} must not also be source or repartition topics.")
    # 4. A RepartitionSourceTopic of one subtopology is a RepartitionSinkTopic of another one.
    for s in topology.subtopologies:
        other_sinks = set().union(set(), *(_names(o.repartition_sink_topics) for o in topology.subtopologies if o is not s))
        unsunk = sorted(_names(s.repartition_source_topics) - other_sinks)
        if unsunk:
            raise _invalid(f"Repartition source topics {', '.join(unsunk)} of subtopology {s.subtopology_id} are not "
                           "a repartition sink topic of any other subtopology.")
    # 5. Every index in a copartition group points into its array.
    for s in topology.subtopologies:
        for g in s.copartition_groups:
            for indexes, array, what in ((g.source_topics, s.source_topics, "source topic"),
                                         (g.source_topic_regex, s.source_topic_regex, "source topic regex"),
                                         (g.repartition_source_topics, s.repartition_source_topics,
                                          "repartition source topic")):
                bad = [i for i in indexes if not 0 <= i < len(array)]
                if bad:
                    raise _invalid(f"Copartition group in subtopology {s.subtopology_id} has {what} index "
                                   f"{bad[0]} out of range (0..{len(array) - 1}).")


def task_ids_valid(topology: Topology, partitions_of: dict[str, int] | None,
                   tasks: Iterable[tuple[str, int]]) -> str | None:
    """Why a task id is not valid for the topology (None when all are): an unknown
    subtopology, or (once partition counts are known) a partition out of range."""
    for sub, p in tasks:  # Kafka's words (GroupMetadataManager.throwIfRequestContainsInvalidTasks)
        if topology.subtopology(sub) is None:
            return f"Subtopology {sub} does not exist in the topology."
        if p < 0 or (partitions_of is not None and sub in partitions_of and p >= partitions_of[sub]):
            n = partitions_of.get(sub, 0) if partitions_of is not None else 0
            return f"Task {p} for subtopology {sub} is invalid. Number of tasks for this subtopology: {n}"
    return None


__all__ = ["TopicInfo", "CopartitionGroup", "Subtopology", "Topology", "validate", "task_ids_valid"]
