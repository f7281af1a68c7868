"""Every notebook runs under papermill; chosen notebooks' stored outputs are checked with nbval."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9]*.ipynb"))
#: notebooks whose committed outputs must match a fresh run (deterministic by design)
NBVAL = ["01_offsets_and_the_log.ipynb", "02_classic_static_membership.ipynb", "03_consumer_groups_kip848.ipynb",
         "04_streams_topology_epochs.ipynb", "05_streams_not_ready.ipynb", "06_streams_migration.ipynb",
         "07_streams_static_membership.ipynb", "08_share_groups.ipynb", "09_consumer_offsets_with_pyspark.ipynb"]


def run_notebook(name: str, tmp_path: Path, **parameters) -> list[dict]:
    """Runs notebooks/`name` under papermill with `parameters`: the outputs of its cells, in order."""
    import papermill as pm

    nb = ROOT / "notebooks" / name
    out = tmp_path / nb.name
    pm.execute_notebook(str(nb), str(out), cwd=str(nb.parent), kernel_name="python3", progress_bar=False,
                        parameters=parameters)
    return [o for c in json.loads(out.read_text())["cells"] for o in c.get("outputs", [])]


def printed(outputs: list[dict]) -> str:
    """What the cells printed (their streams)."""
    return "".join("".join(o.get("text", "")) for o in outputs)


def printed_and_shown(outputs: list[dict], sep: str = "") -> str:
    """What the cells printed, and the text of what they displayed."""
    return sep.join("".join(o.get("text", "")) + "".join(o.get("data", {}).get("text/plain", "")) for o in outputs)


def printed_numbers(pattern: str, text: str) -> list[int]:
    """The numbers at `pattern`'s groups in what a notebook printed (failing, with the end of the
    output, when it printed no such line)."""
    m = re.search(pattern, text)
    assert m, text[-2000:]
    return [int(g) for g in m.groups()]


def test_there_are_notebooks():
    assert NOTEBOOKS, "notebooks/ has no numbered notebooks"


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_has_a_parameters_cell_after_the_imports(nb):
    cells = json.loads(nb.read_text())["cells"]
    tagged = [i for i, c in enumerate(cells) if "parameters" in c.get("metadata", {}).get("tags", [])]
    assert len(tagged) == 1, f"{nb.name}: exactly one cell must be tagged 'parameters'"
    assert cells[0]["cell_type"] == "markdown", f"{nb.name}: must open with a paragraph saying what it shows"
    assert "try this" in "".join(cells[-1]["source"]).lower(), f"{nb.name}: must end with a 'try this' cell"


@pytest.mark.notebook
@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs_under_papermill(nb, tmp_path):
    outputs = run_notebook(nb.name, tmp_path, output_dir=str(tmp_path / "out"))
    errors = [o for o in outputs if o.get("output_type") == "error"]
    assert not errors


@pytest.mark.notebook
@pytest.mark.parametrize("name", NBVAL)
def test_notebook_outputs_match_with_nbval(name):
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbval", "--nbval-current-env",
         "--nbval-sanitize-with", str(ROOT / "tests" / "nbval_sanitize.cfg"), str(ROOT / "notebooks" / name)],
        cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]


@pytest.mark.notebook
def test_notebook_02_shows_fewer_rebalances_for_static_members(tmp_path):
    """The claim comes from the simulation the notebook runs, read from its output."""
    outputs = run_notebook("02_classic_static_membership.ipynb", tmp_path, output_dir=str(tmp_path / "out"),
                           num_consumers=4)
    static, dynamic, double = printed_numbers(
        r"static members (\d+), dynamic members (\d+); partitions ever owned twice at once: (\d+)", printed(outputs))
    assert static < dynamic and dynamic == 2 * 4 and double == 0


@pytest.mark.notebook
def test_notebook_12_failure_lab_shows_each_fault_and_what_the_clients_did(tmp_path):
    """The failure lab's stories, read from the notebook's output: real librdkafka clients."""
    pytest.importorskip("confluent_kafka")
    outputs = run_notebook("12_failure_lab.ipynb", tmp_path, load_ms=300)
    text = printed_and_shown(outputs)
    assert "⚡ fault: coordinator moved: __consumer_offsets-" in text          # section 2, on the grid
    assert "while its heartbeats are held: " in text and " with 2 members" in text   # section 3: fenced
    assert "UNKNOWN_MEMBER_ID" in text and "then: Stable with 3 members" in text
    assert "again: [(0, 1), (1, 1), (2, 1), (3, 1), (4, 1), (5, 1)]" in text  # section 4: KIP-932 counts
    assert "⚡ broker 0 killed" in text
    assert "assignment: []  errors reported: []" in text                      # section 5: Kafka 3.9


@pytest.mark.notebook
def test_notebook_03_kip848_never_stops_the_world_nor_owns_a_partition_twice(tmp_path):
    """The claims come from the simulations the notebook runs, read from its output."""
    outputs = run_notebook("03_consumer_groups_kip848.ipynb", tmp_path, output_dir=str(tmp_path / "out"),
                           num_members=4, partitions_per_topic=6, crowd_members=1000)
    text = printed(outputs)
    eager, cooperative, kip848, double = printed_numbers(
        r"most partitions without an owner at once: eager (\d+), cooperative (\d+), KIP-848 (\d+); "
        r"partitions ever owned twice at once: (\d+)", text)
    assert eager == 2 * 6 and kip848 < eager and cooperative < eager and double == 0
    assert "unrevoked" in text and "unreleased" in text
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "assignor_balance.svg", "crowd_epochs.svg", "reconciliation_grid.svg", "unowned_partitions.svg"]
    # Part 4: the large group forms, its target assignments batched (one a second, not one a join)
    m = re.search(r"1,000 members joined in 5 s of coordinator time; Stable at [\d.]+ s with group epoch 1,001, "
                  r"after (\d+) target assignments", text)
    assert m and int(m.group(1)) <= 7, text[-2000:]


@pytest.mark.notebook
def test_notebook_09_reads_another_dump_and_sees_a_group_expire(tmp_path):
    """Pointed at the expiring-group sample and cut at 06:20: Spark's counts, compacted view and lag, and
    kgroup's replay at the cut and at the end, read from the output."""
    outputs = run_notebook("09_consumer_offsets_with_pyspark.ipynb", tmp_path, output_dir=str(tmp_path / "out"),
                           dump_path=str(ROOT / "data" / "samples" / "expiring-group"),
                           replay_at="2024-06-10T06:20:00Z")
    assert not [o for o in outputs if o.get("output_type") == "error"]
    assert not [o for o in outputs if o.get("name") == "stderr"], "Spark's own output reached the notebook"
    text = printed_and_shown(outputs, "\n")
    # 4 GroupMetadata + 6 OffsetCommit records; once compacted, only audit-tool's last offset is left
    assert "10 records, from 2024-06-10T06:13:20.000Z to 2024-06-10T06:24:20.000Z; 0 row(s) that could not be read" in text
    assert re.search(r"segment\s+GroupMetadata\s+4\s+1\s", text) and re.search(r"segment\s+OffsetCommit\s+6\s+1\s", text)
    assert "10 records in the dump, 1 live key(s) after compaction" in text
    # lag from made-up end offsets (highest committed + 100): audit-tool committed 8 on audit-0
    assert re.search(r"audit-tool\s+audit\s+0\s+8\s+108\s+100\s", text), text[-3000:]
    # the group with the most membership changes, Empty at the cut with its offset, expired by the end
    m = re.search(r"(\S+) at 2024-06-10T06:20:00\.000Z: (\w+), classic generation / epoch (\d+), (\d+) member\(s\); "
                  r"at the end \(2024-06-10T06:24:20\.000Z\): (.*)", text)
    assert m, text[-3000:]
    assert m.groups()[:4] == ("nightly-batch", "Empty", "2", "0") and m.group(5).startswith("not there")
    assert re.search(r"audit\s+0\s+130\s+—\s+—", text), "nightly-batch's offset: 130 at the cut, expired at the end"
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["commit_rate.svg", "lag.svg", "rebalance_timeline.svg"]


@pytest.mark.notebook
def test_notebook_07_static_streams_members_do_not_bump_the_group_epoch(tmp_path):
    """The claim comes from the simulation the notebook runs (PR #22245), read from its output."""
    outputs = run_notebook("07_streams_static_membership.ipynb", tmp_path, output_dir=str(tmp_path / "out"),
                           instances=4)
    text = printed(outputs)
    static, dynamic = printed_numbers(r"static members (\d+), dynamic members (\d+)", text)
    assert static == 0 and dynamic == 2 * 4
    assert "UNRELEASED_INSTANCE_ID" in text   # Kafka's name for the error


@pytest.mark.notebook
def test_notebook_06_reproduces_the_kips_migration_example(tmp_path):
    """KIP-1071's online-migration example: every line beside kgroup's answer, a failover at every step,
    read from the notebook's output."""
    outputs = run_notebook("06_streams_migration.ipynb", tmp_path, output_dir=str(tmp_path / "out"))
    text = printed(outputs)
    m = re.search(r"lines of the KIP's example: (\d+); kgroup answered the same: (\d+)", text)
    assert m, text[-2000:]
    assert m.groups() == ("27", "22")   # the other 5: the follow-up's B (not made to rejoin) and A's heartbeat
    assert re.search(r"reload equals live at all \d+ steps", text)
    assert "ClassicGroup('app', PreparingRebalance, generation=25" in text
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["06_migration.svg"]


@pytest.mark.notebook
def test_notebook_07_reload_equals_live_at_every_step(tmp_path):
    outputs = run_notebook("07_streams_static_membership.ipynb", tmp_path, output_dir=str(tmp_path / "out"))
    text = printed(outputs)
    assert "reload equals live after every one of the 9 steps" in text


@pytest.mark.notebook
def test_notebook_08_reproduces_the_kips_share_tables(tmp_path):
    """KIP-932's durable-state table row by row (all 12 rows as the KIP words them, under kip), the
    poison message archived at the delivery count limit, the crashed consumer's records at count 2;
    read from the notebook's output, with a smaller delivery count limit passed as a parameter."""
    outputs = run_notebook("08_share_groups.ipynb", tmp_path, output_dir=str(tmp_path / "out"),
                           delivery_count_limit=3)
    text = printed(outputs)
    assert "12 of 12 rows read exactly as the KIP's (profile 'kip')" in text
    assert re.search(r"the poison record was delivered 3 times; the SPSO is now 5", text)
    assert "first acquired 0-9 and crashed" in text
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "08_durable_state_table.svg", "08_in_flight_example.svg", "08_live_strip.svg", "08_poison_message.svg"]
