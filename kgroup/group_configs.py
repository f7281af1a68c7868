"""Dynamic group configurations: per-group overrides of the coordinator's settings.

Kafka keeps them in the cluster metadata (a ConfigRecord for a GROUP resource), not in
`__consumer_offsets`, and sets and reads them with IncrementalAlterConfigs and
DescribeConfigs on resource type GROUP (32). kgroup keeps them on the simulated `Cluster`
(`cluster.group_configs`) for the same reason: they outlive a coordinator failover without
being records. Handlers read the effective value with `group_config(c, group_id, name)`,
so a change applies on the next heartbeat.

Names are Kafka's per-group names (`streams.session.timeout.ms`, ...); KIP-1071 spells the
Streams ones `group.streams.session.timeout.ms`, and both spellings are accepted.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from kgroup.config import bound_names
from kgroup.errors import ConfigError, ErrorCode
from kgroup.runtime import Result, handles

if TYPE_CHECKING:
    from kgroup.coordinator import Coordinator


@dataclass(frozen=True)
class GroupConfigDef:
    """One per-group config. Kafka checks a value twice, and kgroup follows: first as its
    ConfigDef parses it (the type, `at_least`, `choices`), then against the coordinator's
    current bounds (`low`/`high`: a setting's name or a number), with different messages."""

    name: str                      # Kafka's per-group name
    broker: str                    # the coordinator setting it overrides
    kind: type
    low: str | int | None = None   # a bound: a coordinator setting's name, or a number
    high: str | int | None = None
    choices: tuple[str, ...] = ()
    doc: str = ""
    #: a further check of a str value (raises ConfigError)
    check: Any = None
    #: the ConfigDef's Range.atLeast
    at_least: int | None = None


#: defaults of per-group configs that override no coordinator setting (Kafka's GroupConfig)
GROUP_DEFAULTS = {"share.auto.offset.reset": "latest", "share.isolation.level": "read_uncommitted"}


def parse_duration_ms(text: str) -> int:
    """An ISO-8601 duration (PnDTnHnMnS, as Java's Duration.parse) in milliseconds."""
    import re
    m = re.fullmatch(r"P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?", text)
    if not m or text in ("P", "PT") or text.endswith("T"):
        raise ConfigError(f"{text!r} is not an ISO-8601 duration (PnDTnHnMnS)")
    d, h, mi, sec = (float(x) if x else 0.0 for x in m.groups())
    return int(round((((d * 24 + h) * 60 + mi) * 60 + sec) * 1000))


def _check_auto_offset_reset(value: str) -> None:
    try:
        if value in ("latest", "earliest"):
            return
        if value.startswith("by_duration:"):
            parse_duration_ms(value[len("by_duration:"):])
            return
    except ConfigError:
        pass
    raise ConfigError(f"Invalid value {value} for configuration share.auto.offset.reset: Invalid value `{value}` "
                      "for configuration share.auto.offset.reset. The value must be either 'earliest', 'latest' "
                      "or of the format 'by_duration:<PnDTnHnMn.nS>'.")


def registered_streams_assignors(c: "Coordinator") -> tuple[str, ...]:
    """The task assignors a streams group may name: Kafka 4.4 registers sticky only; the KIP's
    highly_available comes with the profile that picks it for stateful topologies."""
    return ("sticky", "highly_available") if c.profile.streams_assignor_by_statefulness else ("sticky",)


def _within_bounds(name: str, at_least: int, doc: str = "") -> GroupConfigDef:
    """An int config overriding the coordinator's ``group.<name>``, within that setting's bounds
    (`kgroup.config.bound_names`)."""
    broker = "group." + name
    return GroupConfigDef(name, broker, int, *bound_names(broker), doc=doc, at_least=at_least)


GROUP_CONFIGS: dict[str, GroupConfigDef] = {d.name: d for d in [
    _within_bounds("consumer.session.timeout.ms", at_least=1),
    _within_bounds("consumer.heartbeat.interval.ms", at_least=1),
    _within_bounds("consumer.assignment.interval.ms", at_least=0,
             doc="The interval between assignment updates for a consumer group (KIP-1263)."),
    _within_bounds("share.session.timeout.ms", at_least=1),
    _within_bounds("share.heartbeat.interval.ms", at_least=1),
    _within_bounds("share.assignment.interval.ms", at_least=0,
             doc="The interval between assignment updates for a share group (KIP-1263)."),
    _within_bounds("share.record.lock.duration.ms", at_least=1000),
    _within_bounds("share.delivery.count.limit", at_least=2),
    _within_bounds("share.partition.max.record.locks", at_least=100),
    GroupConfigDef("share.auto.offset.reset", "", str, check=lambda v: _check_auto_offset_reset(v),
                   doc="latest (default), earliest or by_duration:<ISO-8601 duration>"),
    GroupConfigDef("share.isolation.level", "", str, choices=("read_committed", "read_uncommitted")),
    _within_bounds("streams.session.timeout.ms", at_least=1),
    _within_bounds("streams.heartbeat.interval.ms", at_least=1),
    GroupConfigDef("streams.num.standby.replicas", "group.streams.num.standby.replicas", int,
                   None, "group.streams.max.standby.replicas", at_least=0),
    _within_bounds("streams.assignment.interval.ms", at_least=0,
             doc="The interval between assignment updates for a streams group (KIP-1263)."),
    GroupConfigDef("streams.initial.rebalance.delay.ms", "group.streams.initial.rebalance.delay.ms", int, at_least=0),
    # KIP-1071's group configurations that Kafka does not have (yet).
    GroupConfigDef("streams.acceptable.recovery.lag", "group.streams.acceptable.recovery.lag", int, at_least=0),
    GroupConfigDef("streams.num.warmup.replicas", "group.streams.num.warmup.replicas", int,
                   None, "group.streams.max.warmup.replicas", at_least=0),
    GroupConfigDef("streams.task.offset.interval.ms", "group.streams.task.offset.interval.ms", int,
                   "group.streams.min.task.offset.interval.ms"),
    GroupConfigDef("streams.assignor.name", "group.streams.assignor.name", str),
]}

#: Kafka's check that a group's session outlives its heartbeat interval (after the bounds)
_SESSION_OVER_HEARTBEAT = [(f"{kind}.session.timeout.ms", f"{kind}.heartbeat.interval.ms")
                           for kind in ("consumer", "share", "streams")]


def canonical_name(name: str) -> str:
    """Kafka's per-group name for `name` (the KIP's `group.streams.*` spelling accepted)."""
    if name in GROUP_CONFIGS:
        return name
    if name.startswith("group.") and name[len("group."):] in GROUP_CONFIGS:
        return name[len("group."):]
    raise ConfigError(f"Unknown group config name: {name}")


def _bound(c: "Coordinator", bound: str | int | None) -> int | None:
    return c.config[bound] if isinstance(bound, str) else bound


def parse_value(name: str, value: Any) -> Any:
    """The value as the config's ConfigDef parses it (type, at-least, choices; Kafka's messages)."""
    d = GROUP_CONFIGS[canonical_name(name)]
    if d.kind is int:
        try:
            v = int(str(value).strip())
        except (TypeError, ValueError):
            raise ConfigError(f"Invalid value {value} for configuration {d.name}: Not a number of type INT") from None
        if not -2**31 <= v < 2**31:
            raise ConfigError(f"Invalid value {value} for configuration {d.name}: Not a number of type INT")
        if d.at_least is not None and v < d.at_least:
            raise ConfigError(f"Invalid value {v} for configuration {d.name}: Value must be at least {d.at_least}")
        return v
    v = str(value)
    if d.choices and v not in d.choices:
        raise ConfigError(f"Invalid value {v} for configuration {d.name}: String must be one of: {', '.join(d.choices)}")
    if d.check is not None:
        d.check(v)
    return v


def check_values(c: "Coordinator", configs: dict[str, Any]) -> None:
    """A group's whole config (its overrides after a change) against the coordinator's current
    bounds, as Kafka's GroupConfig.validate checks it after parsing."""
    for name, v in configs.items():
        d = GROUP_CONFIGS[name]
        if d.kind is not int or isinstance(v, str):
            continue
        low, high = _bound(c, d.low), _bound(c, d.high)
        if low is not None and high is not None:
            if not low <= v <= high:
                raise ConfigError(f"{name} must be in the range {low} to {high} inclusive.")
        elif high is not None and v > high:
            raise ConfigError(f"{name} must be less than or equal to {high}")
        elif low is not None and v < low:
            raise ConfigError(f"{name} must be greater than or equal to {low}")
    assignor = configs.get("streams.assignor.name")
    if assignor and assignor not in registered_streams_assignors(c):
        raise ConfigError(f"streams.assignor.name '{assignor}' is not a registered task assignor. "
                          f"Registered assignors are: [{', '.join(registered_streams_assignors(c))}].")
    for session, heartbeat in _SESSION_OVER_HEARTBEAT:
        if session in configs or heartbeat in configs:
            s = configs.get(session, c.config[GROUP_CONFIGS[session].broker])
            h = configs.get(heartbeat, c.config[GROUP_CONFIGS[heartbeat].broker])
            if s <= h:
                raise ConfigError(f"{session} must be greater than {heartbeat}")


def check_value(c: "Coordinator", name: str, value: Any) -> Any:
    """One value, parsed and within the coordinator's bounds (`parse_value`, `check_values`)."""
    v = parse_value(name, value)
    check_values(c, {canonical_name(name): v})
    return v


def group_config(c: "Coordinator", group_id: str, name: str) -> Any:
    """The effective value: the group's override, else the coordinator's setting."""
    return group_configs_of(c, group_id, (name,))[0]


def group_override(c: "Coordinator", group_id: str, name: str) -> Any:
    """The group's own value of `name` (set with IncrementalAlterConfigs), None when it has none."""
    return (c.cluster.group_configs.get(group_id) or {}).get(name)


def assignment_interval_ms(c: "Coordinator", group_id: str, kind: str) -> int:
    """KIP-1263: the least time between two target assignments of the group, `kind` "consumer",
    "share" or "streams": the group's `{kind}.assignment.interval.ms`, else the coordinator's
    `group.{kind}.assignment.interval.ms`. A Streams group under a profile without assignment
    batching (kip: KIP-1071 computes an assignment at every epoch bump) has 0 unless configured;
    consumer and share groups batch under both profiles (no seed speaks: Kafka's rule)."""
    name = f"{kind}.assignment.interval.ms"
    override = group_override(c, group_id, name)
    if override is not None:
        return override
    broker = "group." + name
    if kind != "streams" or c.profile.assignment_batching or broker in c.config.overrides:
        return c.config[broker]
    return 0


@lru_cache(maxsize=None)
def _plan(names: tuple[str, ...]) -> tuple[tuple[str, str | None, Any], ...]:
    out = []
    for name in names:
        d = GROUP_CONFIGS.get(name) or GROUP_CONFIGS[canonical_name(name)]
        out.append((d.name, d.broker, GROUP_DEFAULTS.get(d.name)))
    return tuple(out)


def group_configs_of(c: "Coordinator", group_id: str, names: tuple[str, ...]) -> Sequence[Any]:
    """`group_config` for several names at once, with one look at the group's overrides (a
    heartbeat needs half a dozen of them: one pass keeps steady heartbeats cheap)."""
    base = c.config.derived(("group_configs_of", names), lambda config: tuple(
        config[broker] if broker else default for _, broker, default in _plan(names)))
    overrides = c.cluster.group_configs.get(group_id)
    if not overrides:
        return base
    return [override if (override := overrides.get(name)) is not None else value
            for (name, _, _), value in zip(_plan(names), base)]


__all__ = ["GROUP_CONFIGS", "GroupConfigDef", "assignment_interval_ms", "canonical_name", "check_value", "check_values",
           "group_config", "group_configs_of", "group_override", "parse_value"]


# ---------------------------------------------------------------------------------------
# IncrementalAlterConfigs (44) and DescribeConfigs (32) for GROUP resources. In Kafka these
# go to the controller, which writes the cluster metadata; `Coordinator.handle` serves them
# so a notebook has one door, and the coordinator reads the result on the next heartbeat.

GROUP_RESOURCE = 32
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3
#: DescribeConfigs config sources and types (Kafka's ConfigSource / ConfigType ids)
DEFAULT_CONFIG, GROUP_CONFIG = 5, 8
CONFIG_TYPE = {int: 3, str: 2}



class _NotAGroupResource(ConfigError):
    """A resource this coordinator does not serve (INVALID_REQUEST rather than INVALID_CONFIG)."""


def _code(e: ConfigError) -> ErrorCode:
    return ErrorCode.invalid_request if isinstance(e, _NotAGroupResource) else ErrorCode.invalid_config


def _check_resource(c: "Coordinator", resource_type: int, name: str) -> None:
    if resource_type != GROUP_RESOURCE:
        raise _NotAGroupResource(f"kgroup's coordinator serves only GROUP resources (type {GROUP_RESOURCE}), "
                          f"not resource type {resource_type}")
    if not name:
        raise _NotAGroupResource("the group id (resource name) can't be empty")


@handles(44)
def incremental_alter_configs(c: "Coordinator", req: Any, version: int) -> Result:
    """Set or delete per-group configs; every change of one resource is checked before any applies."""
    responses = []
    for res in req.resources:
        code, message = ErrorCode.none, None
        try:
            _check_resource(c, res.resource_type, res.resource_name)
            changes: dict[str, Any] = {}
            for cfg in res.configs:
                name = canonical_name(cfg.name)
                if cfg.config_operation == SET:
                    changes[name] = parse_value(name, cfg.value)
                elif cfg.config_operation == DELETE:
                    changes[name] = None
                elif cfg.config_operation in (APPEND, SUBTRACT):
                    raise ConfigError(f"Config value append/subtract is not allowed for config key {cfg.name} "
                                      "as it is not a list type")
                else:
                    raise ConfigError(f"Unknown config operation {cfg.config_operation}")
            # Kafka validates the group's configs as they would be after the change
            after = {**c.cluster.group_configs.get(res.resource_name, {}), **changes}
            check_values(c, {k: v for k, v in after.items() if v is not None})
            if not req.validate_only:
                current = c.cluster.group_configs.setdefault(res.resource_name, {})
                for name, value in changes.items():
                    if value is None:
                        current.pop(name, None)
                    else:
                        current[name] = value
                if not current:
                    del c.cluster.group_configs[res.resource_name]
        except ConfigError as e:
            code, message = _code(e), _wire_message(e)
        responses.append({"error_code": code, "error_message": message, "resource_type": res.resource_type,
                          "resource_name": res.resource_name})
    return Result({"throttle_time": 0, "responses": responses})


def _wire_message(e: Exception) -> str:
    """The error message, cut to what a string of the response can carry (32767 bytes in the
    non-flexible versions): it quotes the config name, which the request may make that long."""
    return str(e).encode()[:32_767].decode(errors="ignore")


@handles(32)
def describe_configs(c: "Coordinator", req: Any, version: int) -> Result:
    """Every per-group config of the group (or the keys asked for) with its effective value."""
    results = []
    for res in req.resources:
        try:
            _check_resource(c, res.resource_type, res.resource_name)
            keys = [canonical_name(k) for k in res.configuration_keys] if res.configuration_keys else sorted(GROUP_CONFIGS)
        except ConfigError as e:
            results.append({"error_code": _code(e), "error_message": _wire_message(e), "resource_type": res.resource_type,
                            "resource_name": res.resource_name, "configs": []})
            continue
        overrides = c.cluster.group_configs.get(res.resource_name, {})
        configs = []
        for name in keys:
            d = GROUP_CONFIGS[name]
            value = assignment_interval_ms(c, res.resource_name, name.split(".")[0]) \
                if name.endswith(".assignment.interval.ms") else group_config(c, res.resource_name, name)
            configs.append({"name": name, "value": str(value), "read_only": False,
                            "config_source": GROUP_CONFIG if name in overrides else DEFAULT_CONFIG,
                            "is_sensitive": False, "synonyms": [], "config_type": CONFIG_TYPE[d.kind],
                            "documentation": d.doc or None})
        results.append({"error_code": ErrorCode.none, "error_message": None, "resource_type": res.resource_type,
                        "resource_name": res.resource_name, "configs": configs})
    return Result({"throttle_time": 0, "results": results})
