"""Real Kafka Streams 4.4.0 applications (`tests/streams_apps`, compiled at first use) run against
Apache Kafka 4.4.0 and against `kgroup serve`: what the instances saw, the `__consumer_offsets`
records, Kafka's dump tool over both logs and `kafka-streams-groups` against both must agree."""
from __future__ import annotations

import pytest

from kgroup.oracle import streams_scenarios
from kgroup.oracle.compare import compare
from kgroup.oracle.streams import StreamsInstance

pytest.importorskip("confluent_kafka")

#: scenarios with a difference kgroup does not follow yet, each named in the README and checked
#: to be exactly that difference by a test of its own below
KNOWN = {streams_scenarios.STREAMS_STATIC_MEMBER_RULES.name}
CASES = [pytest.param(s, p, id=f"{s.name}-{p}") for s in streams_scenarios.ALL for p in s.profiles
         if s.name not in KNOWN]


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


@pytest.mark.slow
def test_static_rules_agree_but_for_the_replacements_first_reconcile(kafka, streams_apps):
    """Every answer (errors and their messages included) and every record agree, except one:
    a static member that left with -2 and comes back under a new member id with the same process
    is reconciled by Kafka 4.4.0 to the target epoch with no active task, by kgroup with the task
    it got back (README, "Where kgroup still differs"). When that changes, so must the README."""
    result = compare(streams_scenarios.STREAMS_STATIC_MEMBER_RULES, kafka, "kafka")
    assert result.verdicts["clients saw"] == "equal", result.report()
    assert [d.aspect for d in result.differences] == ["records", "records"], result.report()
    kafka_side = " ".join(map(str, (d.kafka for d in result.differences)))
    kgroup_side = " ".join(map(str, (d.kgroup for d in result.differences)))
    reconciled = '"memberEpoch": 3, "previousMemberEpoch": 0, "state": 1, "activeTasks": '
    assert reconciled + "[]" in kafka_side, result.report()
    assert reconciled + '[{"subtopologyId": "0", "partitions": [0]' in kgroup_side, result.report()
