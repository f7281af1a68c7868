"""A kgroup server on a free loopback port, and a bare wire client on it; the server real clients
play against."""
from __future__ import annotations

import pytest
from serve_testing import Wire

from kgroup import Cluster, Coordinator
from kgroup.serve import Server


@pytest.fixture
def server():
    s = Server(Coordinator(cluster=Cluster({"orders": 3, "audit": 1}, seed=7))).start()
    yield s
    s.stop()


@pytest.fixture
def served():
    """What a real client's test serves unless its module says otherwise (a module's own `served`
    overrides this one): "orders" with 2 partitions, classic groups formed without the initial
    rebalance delay."""
    s = Server(Coordinator(cluster=Cluster({"orders": 2}, seed=7), config={"group.initial.rebalance.delay.ms": 0})).start()
    yield s
    s.stop()


@pytest.fixture
def wire(server: Server):
    w = Wire(server)
    yield w
    w.close()
