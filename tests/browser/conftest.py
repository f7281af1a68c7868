"""Fixtures for the real-browser notebook tests: Debian's chromium, one JupyterLab per worker, one browser.

JupyterLab serves a throw-away copy of notebooks/ (a direct child of the repo root, so the notebooks'
`../data/...` paths still resolve) with its own settings, kernelspec and runtime dirs in a temp dir:
no autosave, no news or update check (the network is closed), the venv's python as the kernel.
"""
from __future__ import annotations

import fcntl
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
#: one lock for every pytest worker (xdist) on the machine: two apt-get runs at once would fight over dpkg
INSTALL_LOCK = Path("/tmp/kgroup-browser-chromium-install.lock")
SCREENSHOTS = ROOT / "build" / "browser-screenshots"
HOW_TO_ENABLE = ("the real-browser notebook tests need Debian's chromium at /usr/bin/chromium: "
                 "run `apt-get install -y chromium` as root (or run the tests as root, they install it)")


def _unavailable(reason: str, how: str = HOW_TO_ENABLE) -> None:
    """Skip locally; CI always runs these tests, so there a missing browser is a failure."""
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI is set, so the browser tests must run)", pytrace=False)
    pytest.skip(f"{reason}; {how}")


def _ensure_chromium(say) -> Path:
    if CHROMIUM.exists():
        return CHROMIUM
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        _unavailable("/usr/bin/chromium is missing and cannot be installed here (not root, or no apt-get)")
    with INSTALL_LOCK.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)          # the other worker waits here, then finds it installed
        if not CHROMIUM.exists():
            say("[browser tests] /usr/bin/chromium is missing: running "
                "`apt-get update && apt-get install -y chromium` (about 30 s)")
            env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
            for cmd in (["apt-get", "update"], ["apt-get", "install", "-y", "chromium"]):
                proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
                if proc.returncode:
                    _unavailable(f"`{' '.join(cmd)}` failed: {proc.stderr[-1000:]}")
    if not CHROMIUM.exists():
        _unavailable("apt-get installed no /usr/bin/chromium")
    return CHROMIUM


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _write_json(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


class Lab:
    """A running JupyterLab: `url(path)` opens a notebook of the copy, `api(method, path)` calls its REST API."""

    def __init__(self, base: str, token: str, root: Path, proc: subprocess.Popen, log: Path) -> None:
        self.base, self.token, self.root, self.proc, self.log = base, token, root, proc, log

    def url(self, notebook: str) -> str:
        # ?reset: a fresh workspace (no tabs restored from the previous test)
        return f"{self.base}/lab/tree/{notebook}?reset&token={self.token}"

    def api(self, method: str, path: str):
        req = urllib.request.Request(f"{self.base}{path}", method=method,
                                     headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(req, timeout=10) as r:
            body = r.read()
        return json.loads(body) if body else None

    def shutdown_kernels(self) -> None:
        """Frees the memory (and 10's local Kafka server) of the notebook just tested."""
        for session in self.api("GET", "/api/sessions"):
            self.api("DELETE", f"/api/sessions/{session['id']}")
        for kernel in self.api("GET", "/api/kernels"):
            self.api("DELETE", f"/api/kernels/{kernel['id']}")


@pytest.fixture(scope="session")
def chromium(request) -> Path:
    capture = request.config.pluginmanager.getplugin("capturemanager")

    def say(text: str) -> None:
        # past pytest's output capture: an install that takes half a minute must not look like a hang
        with capture.global_and_fixture_disabled():
            print(f"\n{text}", flush=True)
    return _ensure_chromium(say)


@pytest.fixture(scope="session")
def lab(chromium, tmp_path_factory, browser_worker):
    """One JupyterLab per pytest worker (session scope is per worker under xdist), on a free port."""
    home = tmp_path_factory.mktemp("jupyterlab")
    # the copy sits next to notebooks/ so that `../data/...` (notebook 09) reads the repo's data/
    copy = ROOT / f".browser-notebooks-{browser_worker}-{os.getpid()}"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(ROOT / "notebooks", copy, ignore=shutil.ignore_patterns("out", ".ipynb_checkpoints"))
    settings = home / "settings"
    _write_json(settings / "@jupyterlab" / "docmanager-extension" / "plugin.jupyterlab-settings",
                {"autosave": False})
    # every cell stays in the DOM (JupyterLab 4 detaches off-screen cells by default): the checks read them all
    _write_json(settings / "@jupyterlab" / "notebook-extension" / "tracker.jupyterlab-settings",
                {"windowingMode": "none"})
    # no "would you like to receive news?" toast, no news fetch, no update check
    _write_json(settings / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings",
                {"fetchNews": "false", "checkForUpdates": False, "doNotDisturbMode": True})
    # the kernel is this venv's python, whatever `python` the PATH finds first
    _write_json(home / "path" / "kernels" / "python3" / "kernel.json",
                {"argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                 "display_name": "Python 3 (ipykernel)", "language": "python"})
    token, port = uuid.uuid4().hex, _free_port()
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(home / "config"), "JUPYTER_PATH": str(home / "path"),
           "JUPYTER_RUNTIME_DIR": str(home / "runtime"), "JUPYTER_DATA_DIR": str(home / "data"),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
           "JUPYTER_PLATFORM_DIRS": "1"}
    cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={port}", "--ip=127.0.0.1",
           f"--ServerApp.token={token}", f"--ServerApp.root_dir={copy}", "--ServerApp.port_retries=0",
           f"--LabServerApp.user_settings_dir={settings}", f"--LabServerApp.workspaces_dir={home / 'workspaces'}",
           "--LabApp.news_url=", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
           "--LabApp.expose_app_in_browser=True",          # window.jupyterapp: run commands, read the model
           "--ContentsManager.allow_hidden=True",          # the copy's folder name starts with a dot
           "--ServerApp.disable_check_xsrf=True"]
    if os.geteuid() == 0:
        cmd.append("--allow-root")
    log = home / "jupyterlab.log"
    proc = subprocess.Popen(cmd, cwd=copy, env=env, stdout=log.open("w"), stderr=subprocess.STDOUT)
    server = Lab(f"http://127.0.0.1:{port}", token, copy, proc, log)
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                server.api("GET", "/api/status")
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"JupyterLab did not start: {log.read_text()[-3000:]}")
                time.sleep(0.3)
        specs = server.api("GET", "/api/kernelspecs")
        argv = specs["kernelspecs"]["python3"]["spec"]["argv"]
        assert argv[0] == sys.executable, f"the python3 kernel is not the venv's python: {argv}"
        yield server
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
        shutil.rmtree(copy, ignore_errors=True)


@pytest.fixture(scope="session")
def browser(chromium):
    """One headless chromium for the worker; each test opens its own page."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("python's playwright is not installed", "install it with `pip install -e '.[test]'`")

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(chromium), headless=True, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture(scope="session")
def browser_worker(request) -> str:
    """xdist's worker id ("gw0"), or "main" without xdist."""
    return getattr(request.config, "workerinput", {}).get("workerid", "main")


_SESSION_STARTED = time.time()


def pytest_terminal_summary(terminalreporter):
    """Per-notebook timings of this run (each test writes its own; under xdist the workers do)."""
    lines = sorted(p.read_text().strip() for p in SCREENSHOTS.glob("*/timing.txt")
                   if p.stat().st_mtime >= _SESSION_STARTED)
    if lines:
        terminalreporter.section("notebooks in a real browser: timings")
        for line in lines:
            terminalreporter.write_line(line)
        terminalreporter.write_line(f"screenshots: {SCREENSHOTS}/<notebook>/")
