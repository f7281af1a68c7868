"""Apache Kafka 4.4.0 beside kgroup: one broker for the whole test session, shared by the
pytest-xdist workers (the first to need it starts it; the controller stops it at the end).

Where Java or Maven is missing these tests are skipped with the command that enables them;
under CI they must run, so there it is a failure."""
from __future__ import annotations

import os

import pytest

from kgroup.oracle import ENABLE_HINT, KafkaBroker, KafkaUnavailable
from kgroup.oracle.kafka import shared_broker
from kgroup.oracle.scenarios import SHARED_BROKER_CONFIG


def _unavailable(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI is set, so the Kafka oracle tests must run)", pytrace=False)
    pytest.skip(f"{reason}; to run them: {ENABLE_HINT}, then `python3 dev.py test tests/oracle`")


@pytest.fixture(scope="session")
def kafka() -> KafkaBroker:
    state = os.environ.get("KGROUP_ORACLE_STATE")
    try:
        if state is None:  # pytest started some other way (no root conftest): a broker of our own
            broker = KafkaBroker(SHARED_BROKER_CONFIG).start()
            yield broker
            broker.stop()
            return
        controller = int(os.environ.get("KGROUP_ORACLE_OWNER", os.getpid()))
        yield shared_broker(state, SHARED_BROKER_CONFIG, owner_pid=controller)
    except KafkaUnavailable as e:
        _unavailable(str(e))


@pytest.fixture(scope="session")
def streams_apps():
    """The Kafka Streams applications of tests/streams_apps, compiled (javac, cached)."""
    from kgroup.oracle.streams import java_classes
    try:
        return java_classes()
    except KafkaUnavailable as e:
        _unavailable(str(e))
