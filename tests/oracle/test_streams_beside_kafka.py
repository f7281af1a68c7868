"""Real Kafka Streams 4.4.0 applications (`tests/streams_apps`, compiled at first use) run against
Apache Kafka 4.4.0 and against `kgroup serve`: what the instances saw, the `__consumer_offsets`
records, Kafka's dump tool over both logs and `kafka-streams-groups` against both must agree."""
from __future__ import annotations

import pytest

from kgroup.oracle import streams_scenarios
from kgroup.oracle.compare import compare
from kgroup.oracle.streams import StreamsInstance

pytest.importorskip("confluent_kafka")

CASES = [pytest.param(s, p, id=f"{s.name}-{p}") for s in streams_scenarios.ALL for p in s.profiles]


@pytest.mark.slow
@pytest.mark.parametrize("scenario, profile", CASES)
def test_kafka_streams_sees_the_same_group_on_kafka_and_kgroup(kafka, streams_apps, scenario, profile):
    result = compare(scenario, kafka, profile, check_decoder=(profile == "kafka"))
    assert not result.differences, result.report()
    # the application's group wrote records on both sides, and the instances saw something
    assert any(result.kafka_records.values()) and result.kafka_records.keys() == result.kgroup_records.keys()
    assert result.kafka.seen


def test_an_instance_reports_its_states_and_tasks_and_closes_cleanly(kafka, streams_apps):
    """The driver itself: a stateless instance against Kafka reaches RUNNING with every task of
    its one-partition source topic, processes what is there, and a close is reported clean."""
    import secrets

    from kgroup.oracle.compare import Run
    from kgroup.oracle.streams_scenarios import topics
    run = Run("kafka", kafka.bootstrap, secrets.token_hex(3))
    topics(run, {"in": 1}, records=5)
    with StreamsInstance(kafka.bootstrap, f"driver-{run.token}", topology="stateless", name="solo",
                         prefix=f"{run.token}-", config={"group.protocol": "streams"}) as app:
        app.wait_for(lambda i: i.state == "RUNNING" and i.active == ["0_0"] and i.processed == 5,
                     "solo to run 0_0 and process 5 records")
        app.close()
        assert app.events[-1]["event"] == "closed" and app.events[-1]["clean"] is True, app.events[-4:]
        assert [e["to"] for e in app.events if e["event"] == "state"][-2:] == ["PENDING_SHUTDOWN", "NOT_RUNNING"]


def test_an_unknown_topology_is_refused_before_any_jvm_starts():
    with pytest.raises(ValueError, match="unknown topology 'nope'"):
        StreamsInstance("127.0.0.1:1", "app", topology="nope")
