"""Checks shared by the tests of simulated clients (`kgroup.clients.Simulation`): KIP-848 and
classic consumers own partitions, Kafka Streams threads own active tasks."""
from __future__ import annotations

from kgroup import ErrorCode
from kgroup.clients import Simulation


def owned(sim: Simulation) -> dict[str, set]:
    """What each running client owns (partitions, or a Streams thread's active tasks), by name."""
    return {k.name: set(k.owned) for k in sim.consumers if k.running}


def assert_owned_once(sim: Simulation) -> None:
    """Every partition (Streams: every task of the topology) is owned by exactly one running client,
    now and at every tick."""
    units = [u for us in owned(sim).values() for u in us]
    assert sorted(units) == sorted(sim.partitions()), owned(sim)
    assert sim.double_owned_samples() == 0, sim.double_owned_partitions()[:5]


def heartbeat_after_not_coordinator(sim: Simulation, client):
    """The coordinator loses the group's partition for 6 s, then hosts it again: the heartbeat
    request `client` sends after its last NOT_COORDINATOR answer."""
    c = sim.c
    c.hosted_partitions = frozenset()
    sim.run(6_000)
    c.hosted_partitions = frozenset(range(c.num_partitions))
    sim.run(200)
    errors = [h for h in client.heartbeats if h.response.error_code == ErrorCode.not_coordinator]
    return client.heartbeats[client.heartbeats.index(errors[-1]) + 1].request
