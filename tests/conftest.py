"""Shared fixtures: a deterministic coordinator and small request helpers."""
from __future__ import annotations

import pytest

from kgroup import Cluster, Coordinator


@pytest.fixture
def cluster() -> Cluster:
    return Cluster({"orders": 3, "payments": 2, "audit": 1}, seed=7)


@pytest.fixture
def coord(cluster: Cluster) -> Coordinator:
    return Coordinator(cluster=cluster)
