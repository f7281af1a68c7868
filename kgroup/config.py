"""The group coordinator's configuration, by Kafka's own names, defaults and bounds.

    Config({"offsets.retention.minutes": 60})
    config["group.consumer.heartbeat.interval.ms"]   # -> 5000 (Kafka's default)

An unknown name or a value outside Kafka's bounds raises `ConfigError` naming it.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any

from kgroup.errors import ConfigError

INT_MAX = 2**31 - 1
#: group.{consumer,share,streams}.max.assignment.interval.ms: Kafka's GroupConfigTest shows only that the
#: default is below 20000 (its value was not in the index); kgroup takes 10 s.
ASSIGNMENT_INTERVAL_MAX_MS = 10_000


@dataclass(frozen=True)
class Setting:
    name: str
    default: Any
    kind: type
    doc: str
    at_least: int | None = None
    at_most: int | None = None
    choices: tuple[str, ...] | None = None
    #: for list settings: every element must be one of `choices`
    is_list: bool = False


def _s(name, default, kind, doc, **kw) -> Setting:
    return Setting(name, default, kind, doc, **kw)


def bound_names(name: str) -> tuple[str, str]:
    """The coordinator settings that bound ``group.<type>.<rest>`` (and a group's own value of
    it): ``group.<type>.min.<rest>`` and ``group.<type>.max.<rest>``."""
    group, kind, rest = name.split(".", 2)
    return f"{group}.{kind}.min.{rest}", f"{group}.{kind}.max.{rest}"


def _bounded(setting: Setting, low: int, high: int, what: str) -> list[Setting]:
    """``setting`` and its two bounds (`bound_names`), by default ``low`` and ``high``."""
    lo, hi = bound_names(setting.name)
    return [setting, replace(setting, name=lo, default=low, doc=f"Smallest {what}."),
            replace(setting, name=hi, default=high, doc=f"Largest {what}.")]


# Defaults and bounds as in Kafka's GroupCoordinatorConfig / ShareGroupConfig / streams configs.
SETTINGS: dict[str, Setting] = {s.name: s for s in [
    # __consumer_offsets
    _s("offsets.topic.num.partitions", 50, int, "Partitions of __consumer_offsets.", at_least=1),
    _s("offsets.topic.segment.bytes", 100 * 1024 * 1024, int, "Segment size of __consumer_offsets.", at_least=1),
    _s("offsets.topic.compression.codec", 0, int, "Codec id for coordinator batches (0 none .. 4 zstd).", at_least=0, at_most=4),
    _s("offsets.retention.minutes", 7 * 24 * 60, int, "How long committed offsets of an empty group are kept.", at_least=1),
    _s("offsets.retention.check.interval.ms", 600_000, int, "How often expired offsets are looked for.", at_least=1),
    _s("offsets.commit.timeout.ms", 5000, int, "Offset commit write timeout.", at_least=1),
    _s("offset.metadata.max.bytes", 4096, int, "Largest metadata string of an offset commit."),
    # classic groups
    _s("group.min.session.timeout.ms", 6000, int, "Smallest session timeout a classic member may ask for."),
    _s("group.max.session.timeout.ms", 1_800_000, int, "Largest session timeout a classic member may ask for."),
    _s("group.initial.rebalance.delay.ms", 3000, int, "Delay of a new classic group's first rebalance."),
    _s("group.max.size", INT_MAX, int, "Most members of a classic group.", at_least=1),
    _s("group.coordinator.rebalance.protocols", ["classic", "consumer", "streams"], list,
       "Group protocols the coordinator serves.", choices=("classic", "consumer", "share", "streams"), is_list=True),
    # KIP-848 consumer groups
    *_bounded(_s("group.consumer.session.timeout.ms", 45_000, int, "Consumer group member session timeout.",
                 at_least=1), 45_000, 60_000, "consumer session timeout"),
    *_bounded(_s("group.consumer.heartbeat.interval.ms", 5000, int, "Consumer group heartbeat interval.", at_least=1),
              5000, 15_000, "consumer heartbeat interval"),
    _s("group.consumer.max.size", INT_MAX, int, "Most members of a consumer group.", at_least=1),
    _s("group.consumer.assignors", ["uniform", "range"], list, "Server-side assignors; the first is the default."),
    _s("group.consumer.regex.refresh.interval.ms", 600_000, int,
       "How long a resolved subscription regex stands before a heartbeat resolves it again.", at_least=1),
    *_bounded(_s("group.consumer.assignment.interval.ms", 1000, int,
                 "Least time between two target assignment computations of a consumer group (KIP-1263; 0: every bump).",
                 at_least=0), 0, ASSIGNMENT_INTERVAL_MAX_MS, "consumer assignment interval"),
    _s("group.consumer.migration.policy", "bidirectional", str, "Online classic<->consumer migration.",
       choices=("disabled", "downgrade", "upgrade", "bidirectional")),
    # KIP-1071 streams groups
    *_bounded(_s("group.streams.session.timeout.ms", 45_000, int, "Streams group member session timeout.",
                 at_least=1), 45_000, 60_000, "streams session timeout"),
    *_bounded(_s("group.streams.heartbeat.interval.ms", 5000, int, "Streams group heartbeat interval.", at_least=1),
              5000, 15_000, "streams heartbeat interval"),
    _s("group.streams.max.size", INT_MAX, int, "Most members of a streams group.", at_least=1),
    _s("group.streams.num.standby.replicas", 0, int, "Standby replicas per stateful task.", at_least=0),
    _s("group.streams.max.standby.replicas", 2, int, "Largest group.streams.num.standby.replicas.", at_least=0),
    _s("group.streams.initial.rebalance.delay.ms", 3000, int, "Delay before a new streams group gets tasks.", at_least=0),
    _s("group.streams.acceptable.recovery.lag", 10_000, int,
       "Largest lag for a warm-up task to count as caught up.", at_least=0),
    _s("group.streams.num.warmup.replicas", 2, int, "Most warm-up tasks in a streams group at once.", at_least=0),
    _s("group.streams.max.warmup.replicas", 20, int, "Largest group.streams.num.warmup.replicas.", at_least=0),
    _s("group.streams.task.offset.interval.ms", 60_000, int,
       "How often members report task changelog offsets.", at_least=1),
    _s("group.streams.min.task.offset.interval.ms", 15_000, int,
       "Smallest task offset interval a group may set.", at_least=1),
    *_bounded(_s("group.streams.assignment.interval.ms", 1000, int,
                 "Least time between two target assignment computations of a Streams group (KIP-1263; 0: every bump).",
                 at_least=0), 0, ASSIGNMENT_INTERVAL_MAX_MS, "Streams assignment interval"),
    _s("group.streams.assignor.name", "", str,
       "Task assignor for every streams group (sticky or highly_available); empty: the coordinator chooses.",
       choices=("", "sticky", "highly_available")),
    # KIP-932 share groups
    *_bounded(_s("group.share.session.timeout.ms", 45_000, int, "Share group member session timeout.", at_least=1),
              45_000, 60_000, "share session timeout"),
    *_bounded(_s("group.share.heartbeat.interval.ms", 5000, int, "Share group heartbeat interval.", at_least=1),
              5000, 15_000, "share heartbeat interval"),
    _s("group.share.max.size", 200, int, "Most members of a share group.", at_least=1, at_most=1000),
    _s("group.share.record.lock.duration.ms", 30_000, int, "Acquisition lock duration.", at_least=1000, at_most=3_600_000),
    _s("group.share.delivery.count.limit", 5, int, "Deliveries before a record is archived.", at_least=2, at_most=10),
    _s("group.share.partition.max.record.locks", 2000, int, "In-flight records per share-partition.", at_least=100, at_most=10_000),
    _s("group.share.min.partition.max.record.locks", 100, int,
       "Smallest share.partition.max.record.locks a share group may set.", at_least=100, at_most=10_000),
    _s("group.share.max.partition.max.record.locks", 4000, int,
       "Largest share.partition.max.record.locks a share group may set.", at_least=100, at_most=10_000),
    _s("group.share.min.delivery.count.limit", 2, int,
       "Smallest share.delivery.count.limit a share group may set.", at_least=2, at_most=10),
    _s("group.share.max.delivery.count.limit", 10, int,
       "Largest share.delivery.count.limit a share group may set.", at_least=2, at_most=10),
    _s("group.share.min.record.lock.duration.ms", 15_000, int,
       "Shortest acquisition lock a share group may configure.", at_least=1000, at_most=3_600_000),
    _s("group.share.max.record.lock.duration.ms", 60_000, int,
       "Longest acquisition lock a share group or consumer may ask for.", at_least=1000, at_most=3_600_000),
    *_bounded(_s("group.share.assignment.interval.ms", 1000, int,
                 "Least time between two target assignment computations of a share group (KIP-1263; 0: every bump).",
                 at_least=0), 0, ASSIGNMENT_INTERVAL_MAX_MS, "share assignment interval"),
    _s("group.share.max.share.sessions", 2000, int, "Share sessions one broker keeps.", at_least=1),
    # KIP-932 share coordinator (Kafka's ShareCoordinatorConfig): __share_group_state
    _s("share.coordinator.state.topic.num.partitions", 50, int, "Partitions of __share_group_state.", at_least=1),
    _s("share.coordinator.state.topic.replication.factor", 3, int, "Replication factor of __share_group_state.",
       at_least=1, at_most=32767),
    _s("share.coordinator.state.topic.min.isr", 2, int, "min.insync.replicas of __share_group_state.", at_least=1,
       at_most=32767),
    _s("share.coordinator.state.topic.segment.bytes", 100 * 1024 * 1024, int, "Segment size of __share_group_state.",
       at_least=1),
    _s("share.coordinator.state.topic.compression.codec", 0, int,
       "Codec id for share coordinator batches (0 none .. 4 zstd).", at_least=0, at_most=4),
    _s("share.coordinator.state.topic.prune.interval.ms", 5 * 60 * 1000, int,
       "How often the share coordinator prunes records made redundant by snapshots.", at_least=1),
    _s("share.coordinator.append.linger.ms", 5, int, "How long share coordinator writes wait to be batched.",
       at_least=0),
    _s("share.coordinator.snapshot.update.records.per.snapshot", 500, int,
       "ShareUpdate records of a share-partition between two ShareSnapshots.", at_least=0, at_most=500),
    _s("share.coordinator.cold.partition.snapshot.interval.ms", 5 * 60 * 1000, int,
       "How long a share-partition may go without a snapshot before one is written.", at_least=1),
    _s("share.coordinator.threads", 1, int, "Share coordinator threads.", at_least=1),
    _s("share.coordinator.write.timeout.ms", 5000, int, "Share coordinator write timeout.", at_least=1),
    _s("share.coordinator.load.buffer.size", 5 * 1024 * 1024, int, "Batch size when loading __share_group_state.",
       at_least=1),
]}

#: Names the seeds use for a setting Kafka names differently (the README's profile table).
ALIASES = {"group.share.delivery.attempt.limit": "group.share.delivery.count.limit",
           "group.share.record.lock.partition.limit": "group.share.partition.max.record.locks",
           "group.share.record.lock.duration.max.ms": "group.share.max.record.lock.duration.ms",
           "max.share.session.cache.slots": "group.share.max.share.sessions"}

# (value, lower bound, upper bound) families Kafka checks against each other.
_RANGES = [
    *((name, *bound_names(name)) for name in [
        "group.consumer.session.timeout.ms", "group.consumer.heartbeat.interval.ms",
        "group.streams.session.timeout.ms", "group.streams.heartbeat.interval.ms",
        "group.share.session.timeout.ms", "group.share.heartbeat.interval.ms",
        "group.consumer.assignment.interval.ms", "group.share.assignment.interval.ms",
        "group.streams.assignment.interval.ms"]),
    ("group.streams.num.standby.replicas", None, "group.streams.max.standby.replicas"),
    ("group.streams.num.warmup.replicas", None, "group.streams.max.warmup.replicas"),
    ("group.streams.task.offset.interval.ms", "group.streams.min.task.offset.interval.ms", None),
]


def parse_int(value: Any) -> int:
    """An integer given as an int or as its text (never a bool, which Python counts as an int);
    ValueError for anything else. Configs and JSON dumps read their integers this way."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ValueError(value)
    return int(value)


def _coerce(setting: Setting, value: Any) -> Any:
    name = setting.name
    if setting.kind is int:
        try:
            value = parse_int(value)
        except ValueError:
            raise ConfigError(f"{name} must be an integer, got {value!r}") from None
        if setting.at_least is not None and value < setting.at_least:
            raise ConfigError(f"{name}={value} is out of range: it must be at least {setting.at_least}")
        if setting.at_most is not None and value > setting.at_most:
            raise ConfigError(f"{name}={value} is out of range: it must be at most {setting.at_most}")
        return value
    if setting.kind is list:
        items = [v.strip() for v in value.split(",")] if isinstance(value, str) else list(value)
        if setting.choices:
            bad = [v for v in items if v not in setting.choices]
            if bad:
                raise ConfigError(f"{name}: unknown value(s) {bad}; allowed: {', '.join(setting.choices)}")
        return items
    value = str(value)
    if setting.choices and value not in setting.choices:
        raise ConfigError(f"{name}={value!r} is not one of {', '.join(setting.choices)}")
    return value


class Config(Mapping[str, Any]):
    """Kafka group coordinator settings: Kafka's defaults, overridden by `overrides`."""

    def __init__(self, overrides: Mapping[str, Any] | None = None) -> None:
        values = {name: s.default for name, s in SETTINGS.items()}
        for raw_name, value in (overrides or {}).items():
            name = ALIASES.get(raw_name, raw_name)
            setting = SETTINGS.get(name)
            if setting is None:
                close = [n for n in SETTINGS if raw_name.split(".")[-1] in n][:3]
                hint = f" (did you mean {', '.join(close)}?)" if close else ""
                raise ConfigError(f"unknown group coordinator config {raw_name!r}{hint}")
            values[name] = _coerce(setting, value)
        for name, low, high in _RANGES:
            v = values[name]
            if low is not None and v < values[low]:
                raise ConfigError(f"{name}={v} is out of range: it must be at least {low}={values[low]}")
            if high is not None and v > values[high]:
                raise ConfigError(f"{name}={v} is out of range: it must be at most {high}={values[high]}")
        self._values = values
        self.overrides = dict(overrides or {})
        self._derived: dict[Any, Any] = {}

    @classmethod
    def of(cls, config: "Config | Mapping[str, Any] | None") -> "Config":
        return config if isinstance(config, Config) else cls(config)

    def __getitem__(self, name: str) -> Any:
        try:
            return self._values[ALIASES.get(name, name)]
        except KeyError:
            raise ConfigError(f"unknown group coordinator config {name!r}") from None

    def derived(self, key: Any, compute: Callable[["Config"], Any]) -> Any:
        """`compute(self)`, remembered under `key` (settings do not change once made)."""
        try:
            return self._derived[key]
        except KeyError:
            value = self._derived[key] = compute(self)
            return value

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return f"Config({self.overrides!r})"
