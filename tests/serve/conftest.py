"""A kgroup server on a free loopback port, and a bare wire client on it."""
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
def wire(server: Server):
    w = Wire(server)
    yield w
    w.close()
