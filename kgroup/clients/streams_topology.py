"""Build a Streams topology the way Kafka Streams describes it to the coordinator (KIP-1071).

    b = TopologyBuilder("app")                  # the application id, also the group id
    s0 = b.subtopology(sources=["orders"], stores=["counts"], repartition_to=["by-customer"])
    s1 = b.subtopology(repartition_from={"by-customer": 6}, stores=["totals"],
                       copartition=[["customers", "by-customer"]], sources=["customers"])
    b.subtopology(source_pattern="clicks-.*")
    topology = b.build(epoch=0)                 # a kgroup.groups.streams.Topology
    topology.subtopology_ids                    # ['0', '1', '2']

Names follow Kafka Streams: a store `counts` has the changelog `app-counts-changelog`, a
repartition step `by-customer` the topic `app-by-customer-repartition`; subtopologies are
numbered "0", "1", ... in the order they are added. As Kafka's client does
(`StreamsGroupHeartbeatRequestManager`), topic lists are sorted by name, internal topics carry
Kafka Streams' default topic configs, and copartition groups are indexes into the sorted lists.

The builder checks only what it needs (names it can resolve); the topology invariants are
the coordinator's to check, so a builder can also make topologies it rejects
(STREAMS_INVALID_TOPOLOGY) for a notebook to show.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kgroup.groups.streams import Topology

#: Kafka Streams' configs for an unwindowed store's changelog (UnwindowedUnversionedChangelogTopicConfig)
CHANGELOG_CONFIGS = (("cleanup.policy", "compact"), ("message.timestamp.type", "CreateTime"))
#: ... and for a repartition topic (RepartitionTopicConfig)
REPARTITION_CONFIGS = (("cleanup.policy", "delete"), ("message.timestamp.type", "CreateTime"),
                       ("retention.ms", "-1"), ("segment.bytes", "52428800"))


def changelog_topic(application_id: str, store: str) -> str:
    """Kafka Streams' changelog topic name of a store: `<application id>-<store>-changelog`."""
    return f"{application_id}-{store}-changelog"


def repartition_topic(application_id: str, name: str) -> str:
    """Kafka Streams' repartition topic name: `<application id>-<name>-repartition`."""
    return f"{application_id}-{name}-repartition"


@dataclass
class SubtopologySpec:
    """One subtopology as added to a `TopologyBuilder` (names as given, not yet expanded)."""

    subtopology_id: str
    sources: tuple[str, ...] = ()
    source_patterns: tuple[str, ...] = ()
    stores: tuple[str, ...] = ()
    repartition_to: tuple[str, ...] = ()
    repartition_from: dict[str, int] = field(default_factory=dict)   # name -> partitions (0: derived)
    copartition: tuple[tuple[str, ...], ...] = ()
    source_as_changelog: dict[str, str] = field(default_factory=dict)  # store -> source topic
    replication_factor: int = 0


class TopologyBuilder:
    """A Kafka Streams application's topology, as its subtopologies (see the module docstring).

    `replication_factor`: the internal topics' replication factor (0: the broker default,
    Kafka Streams' `replication.factor=-1`)."""

    def __init__(self, application_id: str, *, replication_factor: int = 0) -> None:
        if not application_id:
            raise ValueError("the application id must not be empty")
        self.application_id = application_id
        self.replication_factor = replication_factor
        self.subtopologies: list[SubtopologySpec] = []

    def changelog(self, store: str) -> str:
        return changelog_topic(self.application_id, store)

    def repartition(self, name: str) -> str:
        return repartition_topic(self.application_id, name)

    def subtopology(self, *, sources: Iterable[str] = (), source_pattern: str | Iterable[str] | None = None,
                    stores: Iterable[str] = (), repartition_to: Iterable[str] = (),
                    repartition_from: Iterable[str] | Mapping[str, int] = (),
                    copartition: Iterable[Iterable[str]] = (),
                    source_as_changelog: Mapping[str, str] | None = None) -> str:
        """Add a subtopology; returns its id ("0", "1", ... in the order added).

        - `sources`: user topics it reads; `source_pattern`: RE2 regexes (full match) it reads;
        - `stores`: state stores (each gets a changelog topic; any store makes the tasks stateful);
        - `repartition_to` / `repartition_from`: repartition steps by name (`by-customer` is the
          topic `<app>-by-customer-repartition`); `repartition_from` as a mapping gives partition
          counts (`Repartitioned.withNumberOfPartitions`), otherwise the coordinator derives them;
        - `copartition`: groups of topics that must be copartitioned (a join), by user topic name,
          regex, repartition name or repartition topic name;
        - `source_as_changelog`: {store: source topic}, a table whose changelog is its source topic
          (Kafka's `reuse.ktable.source.topics` optimisation). Kafka accepts it (`kafka` profile);
          KIP-1071 forbids a changelog that is also a source topic (`kip`: STREAMS_INVALID_TOPOLOGY).
        """
        patterns = (source_pattern,) if isinstance(source_pattern, str) else tuple(source_pattern or ())
        if isinstance(sources, str) or isinstance(stores, str) or isinstance(repartition_to, str) \
                or isinstance(repartition_from, str):
            raise TypeError("sources, stores, repartition_to and repartition_from take lists of names")
        rep_from = (dict(repartition_from) if isinstance(repartition_from, Mapping)
                    else {name: 0 for name in repartition_from})
        sources = tuple(sources)
        reuse = dict(source_as_changelog or {})
        for store, topic in reuse.items():
            if topic not in sources:
                raise ValueError(f"store {store!r}: {topic!r} is not a source topic of this subtopology")
        stores = tuple(stores) + tuple(s for s in reuse if s not in stores)
        spec = SubtopologySpec(str(len(self.subtopologies)), sources, patterns, stores, tuple(repartition_to),
                               rep_from, tuple(tuple(g) for g in copartition), reuse, self.replication_factor)
        self._copartition_indexes(spec)   # fail now on a name that is not read here
        self.subtopologies.append(spec)
        return spec.subtopology_id

    # -- building ---------------------------------------------------------------------------
    def _repartition_infos(self, spec: SubtopologySpec) -> list[tuple[str, int]]:
        return sorted((self.repartition(n), p) for n, p in spec.repartition_from.items())

    def _copartition_indexes(self, spec: SubtopologySpec) -> list[tuple[tuple[int, ...], ...]]:
        """Copartition groups as (source, regex, repartition) index tuples into the sorted lists."""
        sources = sorted(spec.sources)
        patterns = sorted(spec.source_patterns)
        repartitions = [name for name, _ in self._repartition_infos(spec)]
        out = []
        for group in spec.copartition:
            src, rgx, rep = [], [], []
            for name in group:
                if name in sources:
                    src.append(sources.index(name))
                elif name in patterns:
                    rgx.append(patterns.index(name))
                elif name in repartitions:
                    rep.append(repartitions.index(name))
                elif self.repartition(name) in repartitions:
                    rep.append(repartitions.index(self.repartition(name)))
                else:
                    raise ValueError(f"copartition: {name!r} is not read by subtopology {spec.subtopology_id}")
            out.append((tuple(sorted(src)), tuple(sorted(rgx)), tuple(sorted(rep))))
        return out

    def build(self, epoch: int = 0) -> "Topology":
        """The topology at `epoch` (KIP-1071's topology epoch; bump it to deploy a change)."""
        from kgroup.groups.streams import CopartitionGroup, Subtopology, TopicInfo, Topology

        subs = []
        for spec in self.subtopologies:
            changelogs = [TopicInfo(spec.source_as_changelog.get(store, self.changelog(store)), 0,
                                    spec.replication_factor, CHANGELOG_CONFIGS) for store in spec.stores]
            repartitions = [TopicInfo(name, p, spec.replication_factor, REPARTITION_CONFIGS)
                            for name, p in self._repartition_infos(spec)]
            subs.append(Subtopology(
                spec.subtopology_id, source_topics=tuple(sorted(spec.sources)),
                source_topic_regex=tuple(sorted(spec.source_patterns)),
                state_changelog_topics=tuple(sorted(changelogs, key=lambda t: t.name)),
                repartition_sink_topics=tuple(sorted(self.repartition(n) for n in spec.repartition_to)),
                repartition_source_topics=tuple(repartitions),
                copartition_groups=tuple(CopartitionGroup(*g) for g in self._copartition_indexes(spec))))
        # Kafka's client sends subtopologies sorted by id (as strings).
        return Topology(epoch, tuple(sorted(subs, key=lambda s: s.subtopology_id)))

    def __repr__(self) -> str:
        return f"TopologyBuilder({self.application_id!r}, {len(self.subtopologies)} subtopologies)"


def stateless(application_id: str, *topics: str, epoch: int = 0) -> "Topology":
    """One stateless subtopology reading `topics` (e.g. a filter/map application)."""
    b = TopologyBuilder(application_id)
    b.subtopology(sources=topics)
    return b.build(epoch)


def stateful(application_id: str, *topics: str, store: str = "store", epoch: int = 0) -> "Topology":
    """One stateful subtopology reading `topics` with one store (e.g. a count)."""
    b = TopologyBuilder(application_id)
    b.subtopology(sources=topics, stores=[store])
    return b.build(epoch)


__all__ = ["TopologyBuilder", "SubtopologySpec", "changelog_topic", "repartition_topic", "stateless", "stateful",
           "CHANGELOG_CONFIGS", "REPARTITION_CONFIGS"]
