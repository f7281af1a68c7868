"""Shared fixtures: a deterministic coordinator and small request helpers; the reliability
totals of pytest-xdist workers added up for the summary line."""
from __future__ import annotations

import os
import shutil
import tempfile
from collections import Counter

import pytest

from kgroup import Cluster, Coordinator


@pytest.fixture
def cluster() -> Cluster:
    return Cluster({"orders": 3, "payments": 2, "audit": 1}, seed=7)


@pytest.fixture
def coord(cluster: Cluster) -> Coordinator:
    return Coordinator(cluster=cluster)


def pytest_configure(config) -> None:
    """The controller (or a run without xdist) picks where the Kafka oracle's one broker keeps
    its state; the workers it starts inherit it (tests/oracle/conftest.py)."""
    if not hasattr(config, "workerinput") and "KGROUP_ORACLE_STATE" not in os.environ:
        os.environ["KGROUP_ORACLE_STATE"] = tempfile.mkdtemp(prefix="kgroup-oracle-")
        os.environ["KGROUP_ORACLE_OWNER"] = str(os.getpid())


def pytest_unconfigure(config) -> None:
    """The controller stops the oracle's broker, if a worker started one."""
    if hasattr(config, "workerinput") or os.environ.get("KGROUP_ORACLE_OWNER") != str(os.getpid()):
        return
    from kgroup.oracle.kafka import stop_shared_broker
    state = os.environ.pop("KGROUP_ORACLE_STATE")
    stop_shared_broker(state)
    shutil.rmtree(state, ignore_errors=True)


def _drives_real_kafka_clients(item) -> bool:
    """Does the test run real Kafka clients (librdkafka, Kafka Streams JVMs) against Apache Kafka or
    `kgroup serve`? Those compare what the clients did, which CPU starvation can reorder."""
    params = getattr(getattr(item, "callspec", None), "params", {})
    return bool({"kafka", "streams_apps"} & set(item.fixturenames)) or params.get("client") == "kafka-streams"


def pytest_collection_modifyitems(config, items) -> None:
    """Tests marked `notebook` (up to a minute or more each), then `slow`, run first: under pytest-xdist
    the long ones start at once and the quick ones fill the gaps, instead of a notebook starting last.
    Tests that drive real Kafka clients are marked `kafka` (dev.py runs them in a phase of their own)."""
    for item in items:
        if _drives_real_kafka_clients(item):
            item.add_marker(pytest.mark.kafka)
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
