"""What the reliability suites (issue: reliability, security and scale) share: hypothesis
profiles and the totals the summary prints.

Profiles: `ci` (the default: quick, so the whole suite stays within CI's limits) and `long`
(`KGROUP_RELIABILITY=long`, or `python3 dev.py reliability`). Every suite counts what it did in
the `reliability` fixture, under these names:

- "steps explored": requests, timer advances and client actions a stateful test performed;
- "faults injected": lost, duplicated, reordered or delayed requests and responses, crashes;
- "bad inputs tried": malformed requests and corrupted dump bytes fed to kgroup;
- "failovers survived": coordinators thrown away and rebuilt from their logs mid-scenario;
- "records lost": durable state a failover or fault lost (must stay 0).

At the end of the run the totals are printed, one line, by `pytest_terminal_summary`. Tests
marked `long` (full-size load) are only collected with the long profile.
"""
from __future__ import annotations

import os
from collections import Counter

import pytest
from hypothesis import HealthCheck, settings

PROFILE = os.environ.get("KGROUP_RELIABILITY", "ci")
# CI explores the same examples every run (a red CI is a real regression, not a new draw);
# the long profile draws new ones each time.
settings.register_profile("ci", max_examples=25, stateful_step_count=30, deadline=None, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("long", max_examples=1_000, stateful_step_count=120, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

#: The totals of this run, by the names in the module docstring.
TOTALS: Counter[str] = Counter()
NAMES = ("steps explored", "faults injected", "bad inputs tried", "failovers survived", "records lost")


@pytest.fixture
def reliability() -> Counter[str]:
    """The run's totals: `reliability["steps explored"] += 1` and so on (names above)."""
    return TOTALS


def profile_settings():
    """The hypothesis settings of the chosen profile (apply to a test or a state machine's TestCase)."""
    return settings.get_profile(PROFILE)


def pytest_collection_modifyitems(config, items) -> None:
    """Tests marked `long` (the issue's full sizes) run with the long profile only: CI runs their
    smaller versions, `python3 dev.py reliability` runs them too."""
    if PROFILE == "long":
        return
    keep = [item for item in items if item.get_closest_marker("long") is None]
    if len(keep) != len(items):
        config.hook.pytest_deselected(items=[item for item in items if item.get_closest_marker("long") is not None])
        items[:] = keep


def pytest_sessionfinish(session) -> None:
    """Under pytest-xdist a worker hands its totals to the controller (tests/conftest.py adds them up)."""
    if hasattr(session.config, "workeroutput"):
        session.config.workeroutput["reliability"] = {"profile": PROFILE, "names": NAMES, "totals": dict(TOTALS)}


def pytest_terminal_summary(terminalreporter) -> None:
    if TOTALS:
        terminalreporter.write_line(f"reliability ({PROFILE} profile): "
                                    + ", ".join(f"{TOTALS[n]:,} {n}" for n in NAMES))
