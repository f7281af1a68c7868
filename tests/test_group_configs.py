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
    # Kafka 4.4.0's answer, as the oracle scenario group-config-bounds saw it
    c = Coordinator()
    r = alter(c, "app", ("streams.session.timeout.ms", 0, "1000"))
    assert r.error_code == E.invalid_config
    assert r.error_message == "streams.session.timeout.ms must be in the range 45000 to 60000 inclusive."
    assert "app" not in c.cluster.group_configs               # nothing applied


def test_a_value_below_its_config_definition_gets_kafkas_parse_message_before_the_bounds():
    c = Coordinator()
    r = alter(c, "g", ("share.delivery.count.limit", 0, "1"))
    assert r.error_message == "Invalid value 1 for configuration share.delivery.count.limit: Value must be at least 2"
    r = alter(c, "g", ("share.delivery.count.limit", 0, "11"))
    assert r.error_message == "share.delivery.count.limit must be in the range 2 to 10 inclusive."


def test_a_session_that_does_not_outlive_the_heartbeat_is_refused_after_the_bounds():
    c = Coordinator(config={"group.consumer.min.session.timeout.ms": 1000})
    r = alter(c, "g", ("consumer.session.timeout.ms", 0, "5000"))   # the heartbeat stays 5000
    assert r.error_message == "consumer.session.timeout.ms must be greater than consumer.heartbeat.interval.ms"
    assert alter(c, "g", ("consumer.session.timeout.ms", 0, "6000")).error_code == E.none
    # the group's own configs after the change are what is checked
    r = alter(c, "g", ("consumer.heartbeat.interval.ms", 0, "6000"))
    assert r.error_message == "consumer.session.timeout.ms must be greater than consumer.heartbeat.interval.ms"


def test_the_registered_streams_assignors_follow_the_profile():
    message = "streams.assignor.name 'highly_available' is not a registered task assignor. " \
              "Registered assignors are: [sticky]."
    assert alter(Coordinator(profile="kafka"), "app", ("streams.assignor.name", 0, "highly_available")).error_message \
        == message
    assert alter(Coordinator(profile="kip"), "app", ("streams.assignor.name", 0, "highly_available")).error_code == E.none


def test_a_share_group_may_limit_its_in_flight_records():
    c = Coordinator()
    assert alter(c, "q", ("share.partition.max.record.locks", 0, "200")).error_code == E.none
    assert group_config(c, "q", "share.partition.max.record.locks") == 200


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
