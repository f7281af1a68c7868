"""The browser tests' setup without a browser: where chromium is missing and cannot be installed they
skip with how to enable them, except under CI, where they fail."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from _pytest.outcomes import Failed, Skipped


def _setup_module():
    spec = importlib.util.spec_from_file_location("browser_setup", Path(__file__).with_name("conftest.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("ci", [None, "true"])
def test_missing_chromium_that_cannot_be_installed_skips_locally_and_fails_on_ci(ci, monkeypatch, tmp_path):
    setup = _setup_module()
    monkeypatch.setattr(setup, "CHROMIUM", tmp_path / "chromium")
    monkeypatch.setattr(setup.os, "geteuid", lambda: 1000)          # not root: no apt-get install
    if ci:
        monkeypatch.setenv("CI", ci)
    else:
        monkeypatch.delenv("CI", raising=False)
    said = []
    with pytest.raises(Failed if ci else Skipped) as outcome:
        setup._ensure_chromium(said.append)
    assert "cannot be installed" in str(outcome.value)
    assert ("CI is set" in str(outcome.value)) if ci else ("apt-get install -y chromium" in str(outcome.value))
    assert not said, "nothing is installed, so nothing is announced"


def test_present_chromium_is_used_as_is(tmp_path, monkeypatch):
    setup = _setup_module()
    browser = tmp_path / "chromium"
    browser.write_text("")
    monkeypatch.setattr(setup, "CHROMIUM", browser)
    assert setup._ensure_chromium(lambda _t: pytest.fail("must not install")) == browser
