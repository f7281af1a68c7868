"""Topology configuration (KIP-1071 "Handling topic topology mismatches").

A topology says which topics a subtopology reads and writes, not how many partitions they
have. Configuring it against the cluster's metadata gives every subtopology its number of
tasks, and every internal topic its partition count, in the KIP's steps:

1. every source topic exists and every source-topic regex (RE2, full match) matches a topic;
2. repartition topics get their partition count: declared, or the largest partition count
   of the subtopologies writing to them;
3. copartition groups are satisfied (copartitioned source topics agree; repartition topics
   in the group follow them);
4. changelog topics have as many partitions as their subtopology has tasks;
5. every internal topic exists (the coordinator creates missing ones).

Problems give the group state NOT_READY with one status, in the KIP's precedence:
MISSING_SOURCE_TOPICS, then INCORRECTLY_PARTITIONED_TOPICS, then MISSING_INTERNAL_TOPICS.
The result is derived data (Kafka keeps it as soft state too): recomputed from the topology
and the cluster, never persisted.
"""
from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property

import re2

from kgroup.cluster import Cluster

from .topology import Subtopology, TopicInfo, Topology


class Status(enum.IntEnum):
    """StreamsGroupHeartbeatResponse status codes."""

    STALE_TOPOLOGY = 0
    MISSING_SOURCE_TOPICS = 1
    INCORRECTLY_PARTITIONED_TOPICS = 2
    MISSING_INTERNAL_TOPICS = 3
    SHUTDOWN_APPLICATION = 4
    ASSIGNMENT_DELAYED = 5  # Kafka only (profile flag streams_assignment_delayed_status)
    # Kafka 4.4: rack-aware standby placement's client tags; kgroup assigns no tags so never answers
    # it, but a recorded answer from a Kafka broker is read by name
    MISSING_CLIENT_TAGS = 6


@dataclass(frozen=True)
class StatusInfo:
    code: Status
    detail: str

    def to_data(self) -> dict:
        return {"status_code": int(self.code), "status_detail": self.detail}


@dataclass(frozen=True)
class ConfiguredSubtopology:
    """A subtopology with concrete partition counts and its regexes resolved."""

    subtopology_id: str
    num_tasks: int
    source_topics: tuple[str, ...]
    repartition_sink_topics: tuple[str, ...]
    #: name -> (partitions, the TopicInfo the topology asked for)
    repartition_source_topics: Mapping[str, tuple[int, TopicInfo]]
    state_changelog_topics: Mapping[str, tuple[int, TopicInfo]]

    @property
    def stateful(self) -> bool:
        return bool(self.state_changelog_topics)


@dataclass(frozen=True)
class ConfiguredTopology:
    """A topology configured against the cluster: ready, or why not."""

    epoch: int
    #: subtopology id -> configured subtopology; None while source topics are missing or
    #: topics are incorrectly partitioned (StreamsGroupDescribe then gives no subtopologies)
    subtopologies: Mapping[str, ConfiguredSubtopology] | None
    status: StatusInfo | None = None
    #: internal topics to create: name -> (partitions, what the topology asked for)
    missing_internal_topics: Mapping[str, tuple[int, TopicInfo]] = field(default_factory=dict)
    #: every topic the configured topology uses (what the metadata hash covers)
    topics: frozenset[str] = frozenset()

    @property
    def ready(self) -> bool:
        return self.status is None

    def num_tasks(self) -> dict[str, int]:
        """Subtopology id -> its number of tasks (computed once: every heartbeat asks)."""
        return self._num_tasks

    @cached_property
    def _num_tasks(self) -> dict[str, int]:
        return {} if self.subtopologies is None else {s: c.num_tasks for s, c in self.subtopologies.items()}


def _missing(kind: Status, detail: str, epoch: int, topics: frozenset[str] = frozenset()) -> ConfiguredTopology:
    return ConfiguredTopology(epoch, None, StatusInfo(kind, detail), topics=topics)


def _matches(regex: str, names: list[str]) -> list[str]:
    try:
        pattern = re2.compile(regex)
    except re2.error:
        return []
    return [n for n in names if pattern.fullmatch(n)]


def resolve_sources(topology: Topology, cluster: Cluster) -> tuple[dict[str, list[str]], list[str], list[str]]:
    """Each subtopology's source topics with its regexes resolved, plus the missing topics
    and the regexes that match nothing."""
    names = cluster.topic_names()
    internal = topology.internal_topics
    resolved: dict[str, list[str]] = {}
    missing: list[str] = []
    empty_regexes: list[str] = []
    for s in topology.subtopologies:
        topics = []
        for t in s.source_topics:
            if t in cluster:
                topics.append(t)
            elif t not in missing:
                missing.append(t)
        for regex in s.source_topic_regex:
            found = [n for n in _matches(regex, names) if n not in internal]
            if not found and regex not in empty_regexes:
                empty_regexes.append(regex)
            topics += [n for n in found if n not in topics]
        resolved[s.subtopology_id] = topics
    return resolved, sorted(missing), sorted(empty_regexes)


class _PartitioningError(Exception):
    pass


def _repartition_counts(topology: Topology, resolved: dict[str, list[str]],
                        source_counts: dict[str, int]) -> dict[str, int]:
    """Partition counts of repartition topics: declared, or the largest task count of the
    subtopologies writing to them, repeated until nothing changes (Kafka's RepartitionTopics)."""
    declared = {t.name: t.partitions for s in topology.subtopologies for t in s.repartition_source_topics
                if t.partitions > 0}
    counts = dict(declared)
    writers = {t.name: [w for w in topology.subtopologies if t.name in w.repartition_sink_topics]
               for s in topology.subtopologies for t in s.repartition_source_topics}
    changed = True
    while changed:
        changed = False
        for name, subs in writers.items():
            if name in declared:
                continue
            best = 0
            for w in subs:
                n = _tasks_of(w, resolved, source_counts, counts)
                if n is not None:
                    best = max(best, n)
            if best and counts.get(name) != best:
                counts[name] = best
                changed = True
    unknown = sorted(set(writers) - counts.keys())
    if unknown:
        raise _PartitioningError(f"Failed to compute the number of partitions of repartition topics "
                                 f"{', '.join(unknown)}: no upstream subtopology reads an existing topic.")
    return counts


def _tasks_of(s: Subtopology, resolved: dict[str, list[str]], source_counts: dict[str, int],
              repartition_counts: dict[str, int]) -> int | None:
    """A subtopology's task count: the largest partition count among what it reads."""
    counts = [source_counts[t] for t in resolved.get(s.subtopology_id, ())]
    counts += [repartition_counts[t.name] for t in s.repartition_source_topics if t.name in repartition_counts]
    return max(counts) if counts else None


def _enforce_copartitioning(topology: Topology, resolved: dict[str, list[str]], sources: dict[str, int],
                            repartition: dict[str, int]) -> None:
    """Kafka Streams' CopartitionedTopicsEnforcer: copartitioned source topics must agree;
    repartition topics without a declared count follow them (or the largest among them)."""
    declared = {t.name for s in topology.subtopologies for t in s.repartition_source_topics if t.partitions > 0}
    for s in topology.subtopologies:
        for g in s.copartition_groups:
            external = [s.source_topics[i] for i in g.source_topics]
            for i in g.source_topic_regex:
                external += [t for t in _matches(s.source_topic_regex[i], list(sources)) if t in resolved[s.subtopology_id]]
            internal = [s.repartition_source_topics[i].name for i in g.repartition_source_topics]
            ext_counts = {t: sources[t] for t in external if t in sources}
            if len(set(ext_counts.values())) > 1:
                detail = ", ".join(f"{t}={n}" for t, n in sorted(ext_counts.items()))
                raise _PartitioningError(f"Following topics do not have the same number of partitions: [{{{detail}}}]")
            fixed = {t: repartition[t] for t in internal if t in declared}
            if ext_counts:
                target = next(iter(ext_counts.values()))
                wrong = {t: n for t, n in fixed.items() if n != target}
                if wrong:
                    detail = ", ".join(f"{t}={n}" for t, n in sorted({**ext_counts, **wrong}.items()))
                    raise _PartitioningError(f"Following topics do not have the same number of partitions: [{{{detail}}}]")
            elif len(set(fixed.values())) > 1:
                detail = ", ".join(f"{t}={n}" for t, n in sorted(fixed.items()))
                raise _PartitioningError(f"Following topics do not have the same number of partitions: [{{{detail}}}]")
            elif fixed:
                target = next(iter(fixed.values()))
            else:
                target = max((repartition[t] for t in internal), default=0)
            for t in internal:
                if t not in declared and target:
                    repartition[t] = target


def configure(topology: Topology, cluster: Cluster) -> ConfiguredTopology:
    """Configure `topology` against `cluster` (see the module docstring for the steps)."""
    resolved, missing, empty_regexes = resolve_sources(topology, cluster)
    used_sources = frozenset(t for ts in resolved.values() for t in ts)
    if missing or empty_regexes:
        parts = []
        if missing:
            parts.append(f"Source topics {', '.join(missing)} are missing.")
        if empty_regexes:
            parts.append(f"Source topic regular expressions {', '.join(empty_regexes)} match no topic.")
        return _missing(Status.MISSING_SOURCE_TOPICS, " ".join(parts), topology.epoch, used_sources)

    sources = {t: cluster.partitions(t) for t in used_sources}
    try:
        repartition = _repartition_counts(topology, resolved, sources)
        _enforce_copartitioning(topology, resolved, sources, repartition)
    except _PartitioningError as e:
        return _missing(Status.INCORRECTLY_PARTITIONED_TOPICS, str(e), topology.epoch, used_sources)

    subtopologies: dict[str, ConfiguredSubtopology] = {}
    wrong: list[str] = []
    to_create: dict[str, tuple[int, TopicInfo]] = {}
    topics = set(used_sources)
    for s in topology.subtopologies:
        tasks = _tasks_of(s, resolved, sources, repartition) or 0
        rep = {t.name: (repartition[t.name], t) for t in s.repartition_source_topics}
        changelogs = {t.name: (tasks, t) for t in s.state_changelog_topics}
        for name, (n, info) in (*rep.items(), *changelogs.items()):
            if name in used_sources:
                continue  # a source topic reused as a changelog (kafka profile): not ours to create
            topics.add(name)
            if name in cluster:
                if cluster.partitions(name) != n:
                    wrong.append(f"{name} has {cluster.partitions(name)} partitions, expected {n}")
            else:
                to_create[name] = (n, info)
        subtopologies[s.subtopology_id] = ConfiguredSubtopology(
            s.subtopology_id, tasks, tuple(resolved[s.subtopology_id]), tuple(s.repartition_sink_topics), rep, changelogs)
    if wrong:
        return _missing(Status.INCORRECTLY_PARTITIONED_TOPICS,
                        f"Internal topics are incorrectly partitioned: {'; '.join(sorted(wrong))}.",
                        topology.epoch, frozenset(topics))
    if to_create:
        return ConfiguredTopology(topology.epoch, subtopologies,
                                  StatusInfo(Status.MISSING_INTERNAL_TOPICS,
                                             f"Internal topics {', '.join(sorted(to_create))} are missing."),
                                  to_create, frozenset(topics))
    return ConfiguredTopology(topology.epoch, subtopologies, None, {}, frozenset(topics))


def unresolvable_subtopologies(topology: Topology) -> list[str]:
    """Subtopologies whose task count can never be known: they read no source topic or
    regex and no repartition topic with a declared count, directly or upstream (a loop of
    repartition topics with nothing feeding it)."""
    known: set[str] = set()
    declared = {t.name for s in topology.subtopologies for t in s.repartition_source_topics if t.partitions > 0}
    fed: set[str] = set(declared)
    changed = True
    while changed:
        changed = False
        for s in topology.subtopologies:
            if s.subtopology_id in known:
                continue
            if s.source_topics or s.source_topic_regex or any(t.name in fed for t in s.repartition_source_topics):
                known.add(s.subtopology_id)
                fed |= set(s.repartition_sink_topics)
                changed = True
    return [s.subtopology_id for s in topology.subtopologies if s.subtopology_id not in known]


__all__ = ["Status", "StatusInfo", "ConfiguredSubtopology", "ConfiguredTopology", "configure", "resolve_sources",
           "unresolvable_subtopologies"]
