"""Dynamic group configurations (KIP-1071 "Global & Dynamic Group Configuration"): set and
described through IncrementalAlterConfigs / DescribeConfigs on GROUP resources (type 32),
Kafka's per-group names and the KIP's `group.streams.*` spelling, Kafka's bounds."""
from __future__ import annotations

from kgroup import Coordinator, ErrorCode
from kgroup.group_configs import group_config
from kgroup.protocol import request

E = ErrorCode


def alter(c, group, *configs, resource_type=32, validate_only=False):
    return c.handle(request("IncrementalAlterConfigs", 1, validate_only=validate_only, resources=[
        {"resource_type": resource_type, "resource_name": group,
         "configs": [{"name": n, "config_operation": op, "value": v} for n, op, v in configs]}])).responses[0]


def describe(c, group, keys=None):
    return c.handle(request("DescribeConfigs", 4, resources=[
        {"resource_type": 32, "resource_name": group, "configuration_keys": keys}])).results[0]


def test_set_then_describe_then_delete():
    c = Coordinator()
    assert alter(c, "app", ("streams.num.standby.replicas", 0, "1")).error_code == E.none
    assert group_config(c, "app", "streams.num.standby.replicas") == 1
    (cfg,) = describe(c, "app", ["streams.num.standby.replicas"]).configs
    assert (cfg.value, cfg.config_source) == ("1", 8)          # GROUP_CONFIG
    assert alter(c, "app", ("streams.num.standby.replicas", 1, None)).error_code == E.none
    (cfg,) = describe(c, "app", ["streams.num.standby.replicas"]).configs
    assert (cfg.value, cfg.config_source) == ("0", 5)          # back to the coordinator's default
    assert "app" not in c.cluster.group_configs


def test_kip_spelling_is_the_same_config():
    c = Coordinator()
    assert alter(c, "app", ("group.streams.session.timeout.ms", 0, "50000")).error_code == E.none
    assert group_config(c, "app", "streams.session.timeout.ms") == 50_000


def test_bounds_are_the_coordinators():
    c = Coordinator()
    r = alter(c, "app", ("streams.session.timeout.ms", 0, "1000"))
    assert r.error_code == E.invalid_config
    assert r.error_message == ("Invalid value 1000 for configuration streams.session.timeout.ms: "
                               "Value must be at least 45000")
    assert "app" not in c.cluster.group_configs               # nothing applied


def test_one_bad_config_applies_none_of_the_resource():
    c = Coordinator()
    r = alter(c, "app", ("streams.num.standby.replicas", 0, "1"), ("no.such.config", 0, "1"))
    assert r.error_code == E.invalid_config and "app" not in c.cluster.group_configs


def test_validate_only_changes_nothing():
    c = Coordinator()
    assert alter(c, "app", ("streams.num.standby.replicas", 0, "1"), validate_only=True).error_code == E.none
    assert "app" not in c.cluster.group_configs


def test_only_group_resources_are_served():
    r = alter(Coordinator(), "topic-x", ("cleanup.policy", 0, "compact"), resource_type=2)
    assert r.error_code == E.invalid_request


def test_append_to_a_non_list_config_is_invalid():
    r = alter(Coordinator(), "app", ("streams.num.standby.replicas", 2, "1"))
    assert r.error_code == E.invalid_config and "not a list type" in r.error_message


def test_describe_lists_every_group_config_by_default():
    names = [cfg.name for cfg in describe(Coordinator(), "app").configs]
    assert "consumer.session.timeout.ms" in names and "streams.num.standby.replicas" in names
    assert names == sorted(names)
