"""Kafka's group tools (`kafka-consumer-groups.sh`, `kafka-streams-groups.sh`,
`kafka-share-groups.sh`) over a coordinator: a live `Coordinator`, or a dump replayed to a moment.

One module per tool (`consumer_groups`, `streams_groups`, `share_groups`), plus the reset plan
from a dump's history (`reset_offsets`) and the change timeline of a group (`timeline`). Each
tool module has `collect_*` (rows and what Kafka says about each group), `format_*` (the text
Kafka prints: (stdout, stderr)) and `describe_*` (pandas DataFrames with Kafka's column names,
None where Kafka prints "-"). For notebooks:

    from kgroup.tools import describe, list_groups
    describe("data/samples/kip848-log-dir", ["billing-app"], at="2024-06-10T06:13:40Z")
    describe(coordinator, ["clickstream"], tool="streams", view="members")
    list_groups("data/samples/offsets")
"""
from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import Any

from kgroup.coordinator import Coordinator

from .common import open_dump

__all__ = ["open_dump", "coordinator_for", "describe", "list_groups", "TOOLS"]

TOOLS = ("consumer", "streams", "share")


def coordinator_for(source: Coordinator | str | os.PathLike[str] | Sequence[Any], at: Any = None) -> Coordinator:
    """`source` itself when it is a coordinator (then `at` must be None), else the dump at `source`
    replayed to `at` (ISO-8601 time or epoch ms; None: the end)."""
    if isinstance(source, Coordinator):
        if at is not None:
            raise ValueError("at= applies to dumps; for a live coordinator use coordinator.as_of(...)")
        return source
    return open_dump(source, at)


def describe(source: Any, group_ids: Iterable[str] | None = None, *, at: Any = None, tool: str = "consumer",
             view: str = "offsets", verbose: bool = True) -> Any:
    """One describe table as a DataFrame: `tool` consumer / streams / share, `view` offsets /
    members / state; every group of that tool when `group_ids` is None."""
    from . import consumer_groups as cg, share_groups as sh, streams_groups as sg

    c = coordinator_for(source, at)
    module = {"consumer": cg, "streams": sg, "share": sh}[tool]
    if group_ids is None:
        group_ids = [g["group"] for g in module.list_groups(c)]
    group_ids = list(group_ids)
    if view == "offsets":
        return cg.describe_offsets(c, group_ids, verbose=verbose) if tool == "consumer" \
            else module.describe_offsets(c, group_ids)
    if view == "members":
        return module.describe_members(c, group_ids, verbose=verbose) if tool != "share" \
            else module.describe_members(c, group_ids)
    if view == "state":
        return module.describe_state(c, group_ids)
    raise ValueError(f"view must be offsets, members or state, not {view!r}")


def list_groups(source: Any, *, at: Any = None, tool: str = "consumer", states: Iterable[str] = (),
                types: Iterable[str] = ()) -> Any:
    """`--list --state [--type]` as a DataFrame (GROUP, [TYPE,] STATE)."""
    import pandas as pd

    from . import consumer_groups as cg, share_groups as sh, streams_groups as sg

    c = coordinator_for(source, at)
    if tool == "consumer":
        rows = cg.list_groups(c, states, types)
        return pd.DataFrame([{"GROUP": r["group"], "TYPE": r["type"], "STATE": r["state"]} for r in rows],
                            columns=["GROUP", "TYPE", "STATE"])
    rows = {"streams": sg, "share": sh}[tool].list_groups(c, states)
    return pd.DataFrame([{"GROUP": r["group"], "STATE": r["state"]} for r in rows], columns=["GROUP", "STATE"])
