#!/usr/bin/env python3
"""The two commands of the quick start.

    python3 dev.py lab     # JupyterLab on notebooks/
    python3 dev.py test    # the whole test suite (what CI runs)

and one more, for long runs:

    python3 dev.py reliability   # the reliability suites with the long hypothesis profile, and their totals

Each creates ./.venv on first use and installs the project with every extra
(`pip install -e .[dev]`); they reinstall only when pyproject.toml changes.
Needs Python 3.11+; PySpark parts also need Java 17 on PATH.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PY = BIN / ("python.exe" if os.name == "nt" else "python")
STAMP = VENV / ".kgroup-installed"


def _fingerprint() -> str:
    return hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()


def ensure_env() -> None:
    """Create .venv and install kgroup[dev] unless it is already up to date."""
    if sys.version_info < (3, 11):
        sys.exit(f"kgroup needs Python 3.11 or newer; this is {sys.version.split()[0]}.")
    if STAMP.exists() and STAMP.read_text() == _fingerprint() and PY.exists():
        return
    if not PY.exists():
        print(f"Creating the environment in {VENV} ...", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    print("Installing kgroup and its dependencies (first run takes a few minutes) ...", flush=True)
    _pip("install", "--upgrade", "pip")
    _pip("install", "-e", f"{ROOT}[dev]")
    STAMP.write_text(_fingerprint())


def _pip(*args: str) -> None:
    """Run pip quietly: its output (and setuptools' notes on editable installs) only when it fails."""
    proc = subprocess.run([str(PY), "-m", "pip", *args, "--quiet", "--disable-pip-version-check"],
                          capture_output=True, text=True)
    if proc.returncode:
        sys.stderr.write(proc.stdout + proc.stderr)
        sys.exit(f"pip {' '.join(args)} failed (exit {proc.returncode}); its output is above.")


def warn_without_java() -> None:
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        print("note: no Java found; the PySpark parts need Java 17 on PATH.", file=sys.stderr)


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in {"lab", "test", "reliability"}:
        print(__doc__)
        return 2
    ensure_env()
    warn_without_java()
    cmd, rest = argv[0], argv[1:]
    os.chdir(ROOT)
    if cmd == "lab":
        args = [str(BIN / "jupyter"), "lab", f"--notebook-dir={ROOT / 'notebooks'}", *rest]
        if hasattr(os, "geteuid") and os.geteuid() == 0 and "--allow-root" not in rest:
            # Jupyter refuses root without it; in a container or VM root is the usual user
            print("note: running as root, so JupyterLab is started with --allow-root.", file=sys.stderr)
            args.append("--allow-root")
    elif cmd == "reliability":
        os.environ["KGROUP_RELIABILITY"] = "long"
        args = [str(PY), "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/reliability", *rest]
    else:
        # pytest-xdist: one worker more than cores, since many tests wait on clocks, kernels and sockets;
        # the slow notebook tests go first (tests/conftest.py) and idle workers steal the rest
        workers = str((os.cpu_count() or 1) + 1)
        parallel = [] if any(a.startswith(("-n", "--numprocesses")) for a in rest) else ["-n", workers, "--dist", "worksteal"]
        args = [str(PY), "-m", "pytest", *parallel, *rest]
        if not rest:
            # The whole suite in two phases: the tests that drive real Kafka clients (marked `kafka`)
            # compare what librdkafka and Kafka Streams did, so they run after the rest, two at a time,
            # where a CPU-bound neighbour cannot reorder a client's heartbeats.
            first = subprocess.call([*args, "-m", "not kafka"])
            print("\n== phase 2: the tests that drive real Kafka clients ==", flush=True)
            second = subprocess.call([str(PY), "-m", "pytest", "-n", "2", "--dist", "worksteal", "-m", "kafka"])
            return first or second
    return subprocess.call(args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
