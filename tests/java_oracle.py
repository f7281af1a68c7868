"""The test-side Java oracles: a `main` class in a test folder's `java/`, compiled against Apache
Kafka's jars, that reads one JSON case a line on stdin and answers one JSON line each."""
from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest


def java_oracle(java_sources: Path, main_class: str, to_json: Callable[[object], dict]) -> Callable[[list], list[dict]]:
    """A function running `main_class` on a batch of cases (each given to the JVM as `to_json(case)`),
    one JVM per batch. Without Java/Maven the calling test is skipped (with the command that enables
    it); under CI it fails instead, since there the Kafka oracle tests must run."""
    from kgroup.oracle.kafka import ENABLE_HINT, KafkaUnavailable, kafka_classpath
    from kgroup.oracle.streams import java_classes
    try:
        classpath = f"{kafka_classpath()}{os.pathsep}{java_classes(java_sources)}"
    except KafkaUnavailable as e:
        if os.environ.get("CI"):
            pytest.fail(f"{e} (CI is set, so the Kafka oracle tests must run)", pytrace=False)
        pytest.skip(f"{e}; to run them: {ENABLE_HINT}")

    def run(cases: list) -> list[dict]:
        lines = "".join(json.dumps(to_json(c)) + "\n" for c in cases)
        proc = subprocess.run(["java", "-cp", classpath, main_class], input=lines,
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr[-3000:]
        out = [json.loads(line) for line in proc.stdout.splitlines()]
        assert len(out) == len(cases), proc.stderr[-3000:]
        return out
    return run
