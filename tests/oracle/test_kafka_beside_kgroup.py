"""Each scenario run by real clients against Apache Kafka 4.4.0 and against `kgroup serve`:
what the clients saw, the `__consumer_offsets` records, Kafka's dump tool over both logs and
Kafka's group tools against both endpoints must agree (kafka profile; the kip profile too where
no seed forks the behaviour)."""
from __future__ import annotations

import pytest

from kgroup.oracle import scenarios
from kgroup.oracle.compare import compare

pytest.importorskip("confluent_kafka")

CASES = [pytest.param(s, p, id=f"{s.name}-{p}") for s in scenarios.ALL for p in s.profiles]


@pytest.mark.slow
@pytest.mark.parametrize("scenario, profile", CASES)
def test_kafka_and_kgroup_agree(kafka, scenario, profile):
    result = compare(scenario, kafka, profile, check_decoder=(profile == "kafka"))
    assert not result.differences, result.report()
    # something was compared: the scenario's groups wrote records on both sides (a scenario
    # without groups, such as group-config-bounds, compares what the clients saw)
    assert result.kafka.seen and result.kafka_records.keys() == result.kgroup_records.keys()
    assert any(result.kafka_records.values()) or not result.kafka.groups


@pytest.fixture(scope="module")
def short_retention_kafka(kafka):
    """A second Kafka (the shared one keeps Kafka's retention) whose offsets expire in a minute."""
    from kgroup.oracle import KafkaBroker
    broker = KafkaBroker(scenarios.SHORT_RETENTION).start()
    yield broker
    broker.stop()


@pytest.mark.slow
@pytest.mark.kafka
@pytest.mark.parametrize("scenario, profile", [pytest.param(s, p, id=f"{s.name}-{p}")
                                               for s in scenarios.OWN_BROKER for p in s.profiles])
def test_kafka_and_kgroup_agree_on_a_broker_of_its_own(short_retention_kafka, scenario, profile):
    result = compare(scenario, short_retention_kafka, profile, check_decoder=(profile == "kafka"))
    assert not result.differences, result.report()
    kinds = {row["record"] for group in result.kafka_records for row in result.record_rows(group)}
    assert {"OffsetCommit", "GroupMetadata"} <= kinds


def test_a_kafka_run_elsewhere_is_compared_through_its_clients_and_its_consumed_log(kafka):
    """`KafkaBroker.external(bootstrap)`: no log dir here, so `__consumer_offsets` and
    `__share_group_state` are read as a consumer reads them, and still agree record for record."""
    from kgroup.oracle import KafkaBroker
    result = compare(scenarios.SHARE_EXPLICIT, KafkaBroker.external(kafka.bootstrap), "kafka", check_decoder=False)
    assert not result.differences, result.report()
    (group,) = result.kafka_records
    kinds = {row["record"] for row in result.record_rows(group)}
    assert {"ShareGroupMemberMetadata", "ShareSnapshot", "ShareUpdate"} <= kinds


@pytest.mark.notebook
def test_notebook_11_against_your_own_kafka_shows_no_difference(kafka, tmp_path):
    """The notebook's `bootstrap` parameter: the comparison against a Kafka it did not start."""
    import json
    from pathlib import Path

    import papermill as pm
    nb = Path(__file__).resolve().parents[2] / "notebooks" / "11_kgroup_beside_kafka.ipynb"
    out = tmp_path / nb.name
    pm.execute_notebook(str(nb), str(out), cwd=str(nb.parent), kernel_name="python3", progress_bar=False,
                        parameters={"scenario": "offsets-delete", "bootstrap": kafka.bootstrap})
    text = "".join("".join(o.get("text", "")) for c in json.loads(out.read_text())["cells"]
                   for o in c.get("outputs", []))
    assert f"Kafka = {kafka.bootstrap}" in text
    assert "No difference: Kafka and kgroup agree" in text
