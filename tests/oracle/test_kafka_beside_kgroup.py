"""Each scenario run by real clients against Apache Kafka 4.4.0 and against `kgroup serve`:
what the clients saw, the `__consumer_offsets` records, Kafka's dump tool over both logs and
Kafka's group tools against both endpoints must agree (kafka profile; the kip profile too where
no seed forks the behaviour)."""
from __future__ import annotations

import pytest

from kgroup.oracle import scenarios
from kgroup.oracle.compare import compare

pytest.importorskip("confluent_kafka")

CASES = [pytest.param(s, p, id=f"{s.name}-{p}",
                      marks=[pytest.mark.xfail(strict=True, reason=s.known_difference)] if s.known_difference else [])
         for s in scenarios.ALL for p in s.profiles]


@pytest.mark.slow
@pytest.mark.parametrize("scenario, profile", CASES)
def test_kafka_and_kgroup_agree(kafka, scenario, profile):
    result = compare(scenario, kafka, profile, check_decoder=(profile == "kafka"))
    assert not result.differences, result.report()
    # something was compared: the scenario's groups wrote records on both sides
    assert any(result.kafka_records.values()) and result.kafka_records.keys() == result.kgroup_records.keys()
