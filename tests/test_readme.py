"""The README stands alone: its links resolve inside a clone and its share-group snippet runs as printed."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def test_every_relative_link_in_the_readme_resolves_inside_the_clone():
    links = [t for t in re.findall(r"\]\(([^)#\s]+)", README) if "://" not in t and not t.startswith("mailto:")]
    outside = [t for t in links if not (ROOT / t).resolve().is_relative_to(ROOT) or not (ROOT / t).exists()]
    assert not outside, f"README links to files a clone does not have: {outside}"


def test_the_share_group_snippet_runs_as_printed():
    block = next(b for b in re.findall(r"```python\n(.*?)```", README, re.S) if "ShareConsumer(c, \"queue\"" in b)
    ns: dict = {}
    exec(compile(block, "README.md (share groups)", "exec"), ns)  # a missing import is a NameError here
    sp = ns["sp"]
    # as the snippet's comments say: 0 accepted, 1 released and then delivered to B again, 2 still A's
    assert [(v.offset, v.state, v.delivery_count) for v in sp.records()] == [(1, "Acquired", 2), (2, "Acquired", 1)]
    assert (sp.spso, sp.speo) == (1, 3)
