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


def test_the_design_table_of_the_modern_group_types_is_the_one_their_declarations_print():
    from kgroup.groups.kinds import KINDS, table
    printed = "\n".join("  " + line for line in table().splitlines())
    assert printed in README, "README's table of consumer/share/Streams differences is out of date: paste kinds.table()"
    # the table names each declared type and the bytes each persists a member's state with
    for kind in KINDS.values():
        assert f"{kind.label} (`{kind.type}`)" in printed
        assert f"STABLE={kind.member_state.stable}," in printed
