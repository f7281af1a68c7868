"""Notebooks 04–07 with `client="kafka-streams"`: each runs its story again with real Kafka
Streams 4.4.0 instances against an embedded `kgroup serve` (papermill, headless), and what the
instances and the coordinator did is read back from the executed notebook."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"

pytest.importorskip("confluent_kafka")


def run(name: str, tmp_path: Path, **parameters) -> str:
    """Execute notebook `name` with client="kafka-streams"; its outputs' text (errors fail)."""
    import papermill as pm
    out = tmp_path / name
    pm.execute_notebook(str(NOTEBOOKS / name), str(out), cwd=str(NOTEBOOKS), kernel_name="python3",
                        progress_bar=False,
                        parameters={"client": "kafka-streams", "output_dir": str(tmp_path / "out"), **parameters})
    cells = json.loads(out.read_text())["cells"]
    assert not [o for c in cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    texts = []
    for c in cells:
        for o in c.get("outputs", []):
            texts.append("".join(o.get("text", "")))
            texts.append("".join(o.get("data", {}).get("text/plain", "")))
            texts.append("".join(o.get("data", {}).get("text/html", "")))
    return "\n".join(texts)


@pytest.mark.slow
@pytest.mark.notebook
@pytest.mark.parametrize("profile, error", [("kip", "STREAMS_INVALID_TOPOLOGY_EPOCH"), ("kafka", "INVALID_REQUEST")])
def test_04_a_real_instance_cannot_bounce_onto_a_new_topology_at_the_same_epoch(streams_apps, tmp_path, profile, error):
    text = run("04_streams_topology_epochs.ipynb", tmp_path, profile=profile)
    assert "A on version 2: ERROR" in text
    assert error in text
    assert "version 2, after the group was deleted" in text


@pytest.mark.slow
@pytest.mark.notebook
def test_05_a_real_instance_waits_for_its_topics_and_the_coordinator_makes_the_internal_ones(streams_apps, tmp_path):
    text = run("05_streams_not_ready.ipynb", tmp_path)
    assert "MISSING_SOURCE_TOPICS" in text and "MISSING_INTERNAL_TOPICS" in text
    assert "0_0 0_1 0_2 0_3 1_0 1_1 1_2 1_3" in text            # then every task, on A
    assert "shop-by-value-repartition" in text and "the coordinator" in text


@pytest.mark.slow
@pytest.mark.notebook
@pytest.mark.parametrize("profile, outcome", [("kip", "C: RUNNING"), ("kafka", "Group shop is not a streams group.")])
def test_06_a_real_classic_application_meets_a_streams_instance(streams_apps, tmp_path, profile, outcome):
    text = run("06_streams_migration.ipynb", tmp_path, profile=profile)
    assert outcome in text
    assert "JoinGroup" in text and "StreamsGroupHeartbeat" in text


@pytest.mark.slow
@pytest.mark.notebook
def test_07_real_static_instances_get_their_tasks_back_and_a_taken_id_is_refused(streams_apps, tmp_path):
    text = run("07_streams_static_membership.ipynb", tmp_path)
    assert "tasks back on the same instance: {'A': True, 'B': True, 'C': True}" in text
    assert "X: ERROR" in text and "UNRELEASED_INSTANCE_ID" in text
