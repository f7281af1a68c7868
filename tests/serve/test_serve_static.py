"""Static membership (KIP-345, and KIP-848's instance ids) with librdkafka against kgroup serve:
a member restarted with its group.instance.id takes its place back without a rebalance."""
from __future__ import annotations

import time

import pytest
from serve_testing import written

from kgroup.serve import Server

ck = pytest.importorskip("confluent_kafka")


def run_member(server: Server, protocol: str, group: str) -> set[int]:
    """Start a static member, wait for its assignment, close it; its partitions."""
    conf = {"bootstrap.servers": server.bootstrap, "group.id": group, "group.instance.id": "pod-0",
            "client.id": "pod-0", "group.protocol": protocol, "enable.auto.commit": False}
    if protocol == "classic":
        conf |= {"session.timeout.ms": 30_000, "heartbeat.interval.ms": 500}
    c = ck.Consumer(conf)
    try:
        c.subscribe(["orders"])
        deadline = time.monotonic() + 30
        while not c.assignment() and time.monotonic() < deadline:
            c.poll(0.1)
        return {tp.partition for tp in c.assignment()}
    finally:
        c.close()


def test_classic_static_member_restarts_into_its_place(served):
    assert run_member(served, "classic", "static-classic") == {0, 1}
    generation = served.call(lambda: served.coordinator.groups["static-classic"].generation_id)
    assert run_member(served, "classic", "static-classic") == {0, 1}
    group = served.call(lambda: served.coordinator.groups["static-classic"])
    # the restart replaced the member id under the same instance id: no new generation for that
    assert served.call(lambda: group.generation_id) == generation
    values = [r.value for r in written(served, "GroupMetadata") if r.key.group == "static-classic" and r.value]
    assert {m.group_instance_id for v in values for m in v.members} == {"pod-0"}
    assert len({m.member_id for v in values for m in v.members}) == 2  # two incarnations, one place


def test_kip848_static_member_restarts_into_its_place(served):
    assert run_member(served, "consumer", "static-848") == {0, 1}
    epoch = served.call(lambda: served.coordinator.groups["static-848"].group_epoch)
    assert run_member(served, "consumer", "static-848") == {0, 1}
    assert served.call(lambda: served.coordinator.groups["static-848"].group_epoch) == epoch
    members = [r for r in written(served, "ConsumerGroupMemberMetadata") if r.key.group_id == "static-848"]
    assert {r.value.instance_id for r in members if r.value is not None} == {"pod-0"}
