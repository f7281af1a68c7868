"""pyproject.toml and environment.yml (the conda alternative) list the same packages."""
from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def pyproject_requirements() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    reqs = set(project["dependencies"])
    for extra, items in project["optional-dependencies"].items():
        reqs |= {r for r in items if not r.startswith("kgroup[")}
    return reqs


def environment_pip_requirements() -> set[str]:
    """The `pip:` entries of environment.yml (a list of `- requirement` lines, comments aside)."""
    lines = (ROOT / "environment.yml").read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip() == "- pip:")
    reqs = set()
    for line in lines[start + 1:]:
        item = line.strip()
        if not item or item.startswith("#"):
            continue
        if not item.startswith("- "):
            break
        reqs.add(item[2:].strip())
    return reqs - {"-e ."}


def test_environment_yml_lists_what_pyproject_does():
    assert environment_pip_requirements() == pyproject_requirements()


def test_every_third_party_import_of_kgroup_is_a_declared_dependency():
    """kgroup's own modules import only what its core or extras declare (or the standard library)."""
    import ast
    import sys

    declared = {r.split(">")[0].split("=")[0].split("<")[0].split("[")[0].strip().lower().replace("-", "_")
                for r in pyproject_requirements()}
    module_of = {"re2": "google_re2", "kafka": "kafka_python"}  # import name -> distribution name, where they differ
    missing = set()
    for path in (ROOT / "kgroup").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module] if isinstance(node, ast.ImportFrom) and node.module and not node.level else []
            for name in names:
                top = name.split(".")[0]
                if top == "kgroup" or top in sys.stdlib_module_names:
                    continue
                if module_of.get(top, top).lower() not in declared:
                    missing.add(f"{top} ({path.relative_to(ROOT)})")
    assert not missing
