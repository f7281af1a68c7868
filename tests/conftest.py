"""Shared fixtures: a deterministic coordinator and small request helpers; the reliability
totals of pytest-xdist workers added up for the summary line."""
from __future__ import annotations

from collections import Counter

import pytest

from kgroup import Cluster, Coordinator


@pytest.fixture
def cluster() -> Cluster:
    return Cluster({"orders": 3, "payments": 2, "audit": 1}, seed=7)


@pytest.fixture
def coord(cluster: Cluster) -> Coordinator:
    return Coordinator(cluster=cluster)


def pytest_collection_modifyitems(config, items) -> None:
    """Tests marked `notebook` (up to a minute or more each), then `slow`, run first: under pytest-xdist
    the long ones start at once and the quick ones fill the gaps, instead of a notebook starting last."""
    items.sort(key=lambda item: (item.get_closest_marker("notebook") is None, item.get_closest_marker("slow") is None))


#: What the reliability suites counted in each xdist worker (see tests/reliability/conftest.py).
_WORKER_RELIABILITY: dict = {"totals": Counter()}


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error) -> None:
    sent = getattr(node, "workeroutput", {}).get("reliability")
    if sent:
        _WORKER_RELIABILITY.update(profile=sent["profile"], names=sent["names"])
        _WORKER_RELIABILITY["totals"].update(sent["totals"])


def pytest_terminal_summary(terminalreporter) -> None:
    totals = _WORKER_RELIABILITY["totals"]
    if totals:  # a run without xdist prints its own line from tests/reliability/conftest.py
        terminalreporter.write_line(f"reliability ({_WORKER_RELIABILITY['profile']} profile): "
                                    + ", ".join(f"{totals[n]:,} {n}" for n in _WORKER_RELIABILITY["names"]))
