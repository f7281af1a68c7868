"""KIP-1263 assignment batching, for consumer, share and Streams groups: a group epoch bump computes
the next target assignment only once `group.{consumer,share,streams}.assignment.interval.ms` has passed
since the last one (the time in the target-assignment metadata record); until then members reconcile
to the current assignment epoch, and the next heartbeat after the interval computes it. Consumer and
share groups batch under both profiles (no seed says when their assignment is computed, so Kafka's
1000 ms applies); for Streams groups the profile chooses (kafka: 1000 ms; kip: 0, KIP-1071 assigns at
every bump). A configured interval, the coordinator's or the group's own, applies under both. Kafka's
own cases are in tests/kafka_parity (test_*_assignment_interval)."""
from __future__ import annotations

import pytest

from kgroup import Cluster, Coordinator, ErrorCode
from kgroup.errors import ConfigError
from kgroup.groups.modern import can_compute_next_target_assignment
from kgroup.protocol import request
from tests.streams_testing import shb

E = ErrorCode
NO_INITIAL_DELAY = {"group.streams.initial.rebalance.delay.ms": 0}


def heartbeat(c: Coordinator, kind: str, member_id: str, epoch: int):
    """A join (epoch 0, subscribed to "orders") or a steady heartbeat of a `kind` group "g"."""
    join = epoch == 0
    if kind == "consumer":
        return c.handle(request("ConsumerGroupHeartbeat", 1, group_id="g", member_id=member_id, member_epoch=epoch,
                                rebalance_timeout=5000 if join else -1,
                                subscribed_topic_names=["orders"] if join else None,
                                topic_partitions=[] if join else None))
    if kind == "share":
        return c.handle(request("ShareGroupHeartbeat", 1, group_id="g", member_id=member_id, member_epoch=epoch,
                                subscribed_topic_names=["orders"] if join else None))
    return shb(c, member_id, epoch, group="g")


def coordinator(profile: str, **config) -> Coordinator:
    return Coordinator(cluster=Cluster({"orders": 4}, seed=1), profile=profile,
                       config={**NO_INITIAL_DELAY, **config})


def epochs(c: Coordinator) -> tuple[int, int]:
    g = c.groups["g"]
    return g.group_epoch, g.assignment_epoch


def two_joins(c: Coordinator, kind: str) -> int:
    """Two members join at the same moment; the second's member epoch."""
    assert heartbeat(c, kind, "m1", 0).member_epoch == 2
    return heartbeat(c, kind, "m2", 0).member_epoch


def test_kip_computes_a_streams_assignment_at_every_bump():
    # KIP-1071: "Every time the group epoch is bumped, a new task assignment is computed"
    c = coordinator("kip")
    assert two_joins(c, "streams") == 3
    assert epochs(c) == (3, 3)


@pytest.mark.parametrize("kind, profile", [("consumer", "kip"), ("share", "kip"), ("consumer", "kafka"),
                                           ("share", "kafka"), ("streams", "kafka")])
def test_assignments_are_batched_by_default(kind, profile):
    # consumer and share groups under both profiles: the seeds are silent, so Kafka's default holds
    c = coordinator(profile)
    assert two_joins(c, kind) == 2          # the current assignment epoch: its target waits
    assert epochs(c) == (3, 2)
    c.advance(999)
    assert heartbeat(c, kind, "m2", 2).member_epoch == 2 and epochs(c) == (3, 2)
    c.advance(1)                            # 1000 ms after the first assignment (Kafka's default)
    r = heartbeat(c, kind, "m2", 2)
    assert r.error_code == E.none and epochs(c) == (3, 3)


@pytest.mark.parametrize("profile", ["kip", "kafka"])
def test_a_configured_interval_applies_under_both_profiles(profile):
    c = coordinator(profile, **{"group.consumer.assignment.interval.ms": 3000})
    assert two_joins(c, "consumer") == 2 and epochs(c) == (3, 2)
    c.advance(2999)
    heartbeat(c, "consumer", "m1", 2)
    assert epochs(c) == (3, 2)
    c.advance(1)
    heartbeat(c, "consumer", "m1", 2)
    assert epochs(c) == (3, 3)


def alter(c: Coordinator, name: str, value: str):
    return c.handle(request("IncrementalAlterConfigs", 1, validate_only=False, resources=[
        {"resource_type": 32, "resource_name": "g",
         "configs": [{"name": name, "config_operation": 0, "value": value}]}])).responses[0]


def described(c: Coordinator, name: str) -> str:
    r = c.handle(request("DescribeConfigs", 4, resources=[
        {"resource_type": 32, "resource_name": "g", "configuration_keys": [name]}])).results[0]
    return r.configs[0].value


@pytest.mark.parametrize("kind", ["consumer", "share", "streams"])
def test_the_group_config_overrides_the_coordinators(kind):
    name = f"{kind}.assignment.interval.ms"
    c = coordinator("kafka")
    assert described(c, name) == "1000"
    assert alter(c, name, "0").error_code == E.none
    assert described(c, name) == "0"
    assert two_joins(c, kind) == 3 and epochs(c) == (3, 3)

    c = coordinator("kip")
    # kip: Streams groups assign at every bump unless configured; the others batch as Kafka does
    assert described(c, name) == ("0" if kind == "streams" else "1000")
    assert alter(c, name, "2000").error_code == E.none
    assert two_joins(c, kind) == 2 and epochs(c) == (3, 2)


def test_intervals_are_kept_within_the_coordinators_bounds():
    with pytest.raises(ConfigError):
        Coordinator(config={"group.share.assignment.interval.ms": -1})
    with pytest.raises(ConfigError):
        Coordinator(config={"group.streams.assignment.interval.ms": 20_000})   # above the 10 s maximum
    c = Coordinator(config={"group.consumer.min.assignment.interval.ms": 500})
    assert alter(c, "consumer.assignment.interval.ms", "100").error_code == E.invalid_config
    assert alter(c, "consumer.assignment.interval.ms", "500").error_code == E.none


def test_can_compute_next_target_assignment():
    # Kafka's testCanComputeNextTargetAssignment* cases (a static helper there, as here)
    assert can_compute_next_target_assignment(0, 1000, 0)                # no assignment yet
    assert all(can_compute_next_target_assignment(1_000_000, 0, now) for now in (0, 999_999, 1_000_000))
    assert not any(can_compute_next_target_assignment(1_000_000, 5000, now)
                   for now in (0, 999_999, 1_000_000, 1_004_999))
    assert all(can_compute_next_target_assignment(1_000_000, 5000, now) for now in (1_005_000, 1_007_500))
