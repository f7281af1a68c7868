"""Every notebook runs under papermill; chosen notebooks' stored outputs are checked with nbval."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9]*.ipynb"))
#: notebooks whose committed outputs must match a fresh run (deterministic by design)
NBVAL = ["01_offsets_and_the_log.ipynb", "02_classic_static_membership.ipynb", "03_consumer_groups_kip848.ipynb"]


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
    import papermill as pm

    out = tmp_path / nb.name
    pm.execute_notebook(str(nb), str(out), cwd=str(nb.parent), kernel_name="python3", progress_bar=False,
                        parameters={"output_dir": str(tmp_path / "out")})
    executed = json.loads(out.read_text())
    errors = [o for c in executed["cells"] for o in c.get("outputs", []) if o.get("output_type") == "error"]
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
    import re

    import papermill as pm

    nb = ROOT / "notebooks" / "02_classic_static_membership.ipynb"
    out = tmp_path / nb.name
    pm.execute_notebook(str(nb), str(out), cwd=str(nb.parent), kernel_name="python3", progress_bar=False,
                        parameters={"output_dir": str(tmp_path / "out"), "num_consumers": 4})
    text = "".join("".join(o.get("text", "")) for c in json.loads(out.read_text())["cells"] for o in c.get("outputs", []))
    m = re.search(r"static members (\d+), dynamic members (\d+); partitions ever owned twice at once: (\d+)", text)
    assert m, text[-2000:]
    static, dynamic, double = map(int, m.groups())
    assert static < dynamic and dynamic == 2 * 4 and double == 0


@pytest.mark.notebook
def test_notebook_03_kip848_never_stops_the_world_nor_owns_a_partition_twice(tmp_path):
    """The claims come from the simulations the notebook runs, read from its output."""
    import re

    import papermill as pm

    nb = ROOT / "notebooks" / "03_consumer_groups_kip848.ipynb"
    out = tmp_path / nb.name
    pm.execute_notebook(str(nb), str(out), cwd=str(nb.parent), kernel_name="python3", progress_bar=False,
                        parameters={"output_dir": str(tmp_path / "out"), "num_members": 4, "partitions_per_topic": 6})
    text = "".join("".join(o.get("text", "")) for c in json.loads(out.read_text())["cells"] for o in c.get("outputs", []))
    m = re.search(r"most partitions without an owner at once: eager (\d+), cooperative (\d+), KIP-848 (\d+); "
                  r"partitions ever owned twice at once: (\d+)", text)
    assert m, text[-2000:]
    eager, cooperative, kip848, double = map(int, m.groups())
    assert eager == 2 * 6 and kip848 < eager and cooperative < eager and double == 0
    assert "unrevoked" in text and "unreleased" in text
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "assignor_balance.svg", "reconciliation_grid.svg", "unowned_partitions.svg"]
