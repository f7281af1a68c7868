"""DescribeConfigs (32) and IncrementalAlterConfigs (44) across resource types: GROUP resources
are the coordinator's (`Coordinator.handle`, kgroup.group_configs), TOPIC and BROKER resources
the simulated broker's, answered here. One request may mix them; the answer keeps its order.

Topic configs are the few clients look at, with Kafka's defaults; they are kept (and shown as
dynamic topic configs when set) but change nothing in how the simulated broker behaves.
"""
from __future__ import annotations

from typing import Any, Protocol

from kgroup.errors import ErrorCode
from kgroup.protocol import request, to_data

TOPIC, BROKER, GROUP = 2, 4, 32
SET, DELETE = 0, 1
#: Kafka's ConfigSource ids
DYNAMIC_TOPIC_CONFIG, STATIC_BROKER_CONFIG, DEFAULT_CONFIG = 1, 4, 5
#: Kafka's ConfigType ids
_BOOLEAN, _STRING, _INT, _LONG, _LIST = 1, 2, 3, 5, 7

#: name -> (default, config type)
TOPIC_CONFIGS: dict[str, tuple[str, int]] = {
    "cleanup.policy": ("delete", _LIST),
    "compression.type": ("producer", _STRING),
    "max.message.bytes": ("1048588", _INT),
    "message.timestamp.type": ("CreateTime", _STRING),
    "min.insync.replicas": ("1", _INT),
    "retention.bytes": ("-1", _LONG),
    "retention.ms": ("604800000", _LONG),
    "segment.bytes": ("1073741824", _INT),
}


class CoordinatorPart(Protocol):
    """The group coordinator's part of one request: `sub`, the request holding only its GROUP
    resources (None: it has none), through `Coordinator.handle`; returns the answer's `field`
    list as data. The server provides it for each request (`Server._route`), bound to that
    request's client and broker."""

    def __call__(self, sub: Any, field: str) -> list: ...


class Configs:
    """Topic configs set by clients (soft state: by topic id, so a re-created topic starts afresh)."""

    def __init__(self, broker: Any) -> None:
        self.broker = broker
        self.topics: dict[Any, dict[str, str]] = {}

    # -- the two APIs, split by resource type ---------------------------------------------------
    def describe(self, req: Any, version: int, coordinator_answer: CoordinatorPart) -> dict:
        groups = iter(coordinator_answer(_only_groups(req, version, 32, include_synonyms=req.include_synonyms,
                                                      include_documentation=getattr(req, "include_documentation",
                                                                                    False)), "results"))
        results = []
        for res in req.resources:
            if res.resource_type == GROUP:
                results.append(next(groups))
                continue
            results.append(self._describe_one(res))
        return {"throttle_time": 0, "results": results}

    def alter(self, req: Any, version: int, coordinator_answer: CoordinatorPart) -> dict:
        groups = iter(coordinator_answer(_only_groups(req, version, 44, validate_only=req.validate_only), "responses"))
        responses = []
        for res in req.resources:
            if res.resource_type == GROUP:
                responses.append(next(groups))
                continue
            code, message = self._alter_one(res, req.validate_only)
            responses.append({"error_code": code, "error_message": message, "resource_type": res.resource_type,
                              "resource_name": res.resource_name})
        return {"throttle_time": 0, "responses": responses}

    # -- TOPIC and BROKER resources --------------------------------------------------------------
    def _describe_one(self, res: Any) -> dict:
        row = {"error_code": ErrorCode.none, "error_message": None, "resource_type": res.resource_type,
               "resource_name": res.resource_name, "configs": []}
        if res.resource_type == TOPIC:
            if res.resource_name not in self.broker.cluster:
                return {**row, "error_code": ErrorCode.unknown_topic_or_partition,
                        "error_message": f"Topic {res.resource_name} does not exist"}
            overrides = self.topics.get(self.broker.cluster.topic_id(res.resource_name), {})
            configs = [(name, overrides.get(name, default), kind,
                        DYNAMIC_TOPIC_CONFIG if name in overrides else DEFAULT_CONFIG, False)
                       for name, (default, kind) in TOPIC_CONFIGS.items()]
        elif res.resource_type == BROKER:
            if res.resource_name not in ("", "0"):
                return {**row, "error_code": ErrorCode.invalid_request,
                        "error_message": f"Unexpected broker id, expected 0 or empty string, but received "
                                         f"{res.resource_name}"}
            configs = [("auto.create.topics.enable", str(self.broker.auto_create_topics).lower(), _BOOLEAN,
                        STATIC_BROKER_CONFIG, True),
                       ("num.partitions", str(self.broker.default_partitions), _INT, STATIC_BROKER_CONFIG, True),
                       ("offsets.topic.num.partitions", str(self.broker.coordinator.num_partitions), _INT,
                        STATIC_BROKER_CONFIG, True)]
        else:
            return {**row, "error_code": ErrorCode.invalid_request,
                    "error_message": f"kgroup serve has no resources of type {res.resource_type}"}
        # null or empty: every config (Kafka's ConfigHelper; kafka-python sends an empty list)
        keys = set(res.configuration_keys) if res.configuration_keys else None
        row["configs"] = [{"name": name, "value": value, "read_only": read_only, "config_source": source,
                           "is_sensitive": False, "synonyms": [], "config_type": kind, "documentation": None}
                          for name, value, kind, source, read_only in configs if keys is None or name in keys]
        return row

    def _alter_one(self, res: Any, validate_only: bool) -> tuple[ErrorCode, str | None]:
        if res.resource_type != TOPIC:
            return ErrorCode.invalid_request, f"kgroup serve alters TOPIC and GROUP configs, not type {res.resource_type}"
        if res.resource_name not in self.broker.cluster:
            return ErrorCode.unknown_topic_or_partition, f"Topic {res.resource_name} does not exist"
        changes: dict[str, str | None] = {}
        for cfg in res.configs:
            if cfg.name not in TOPIC_CONFIGS:
                return ErrorCode.invalid_config, f"Unknown topic config name: {cfg.name}"
            if cfg.config_operation == SET:
                changes[cfg.name] = cfg.value
            elif cfg.config_operation == DELETE:
                changes[cfg.name] = None
            else:
                return ErrorCode.invalid_config, f"Config operation {cfg.config_operation} is not supported for {cfg.name}"
        if not validate_only:
            current = self.topics.setdefault(self.broker.cluster.topic_id(res.resource_name), {})
            for name, value in changes.items():
                if value is None:
                    current.pop(name, None)
                else:
                    current[name] = value
        return ErrorCode.none, None


def _only_groups(req: Any, version: int, api_key: int, **fields: Any) -> Any:
    """The same request holding only its GROUP resources (None when it has none)."""
    resources = [to_data(r) for r in req.resources if r.resource_type == GROUP]
    return request(api_key, version, resources=resources, **fields) if resources else None
