"""Altair charts over coordinator state, in the palette's colours, titled in the KIPs' words."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import altair as alt
import pandas as pd

from widgets.palette import RECORD_FAMILIES, record_family
from widgets.record_log import log_frame


def _renderer(spec: dict, **_kw) -> dict:
    """Vega-Lite for JupyterLab (interactive) plus an SVG picture for headless runs and
    viewers without network access; each front end shows the richest it can."""
    import vl_convert as vlc

    return {"application/vnd.vegalite.v5+json": spec, "image/svg+xml": vlc.vegalite_to_svg(spec),
            "text/plain": f"<{spec.get('title', 'chart')}>"}


alt.renderers.register("kgroup", _renderer)
alt.renderers.enable("kgroup")


def committed_offsets_chart(offsets: pd.DataFrame | list[dict], *, title: str = "Committed offsets per group") -> alt.Chart:
    """One bar per (group, topic-partition): the committed offset."""
    df = pd.DataFrame(offsets)
    if df.empty:
        df = pd.DataFrame(columns=["group", "topic", "partition", "offset"])
    df = df.assign(tp=df["topic"].astype(str) + "-" + df["partition"].astype(str))
    return (alt.Chart(df, title=title).mark_bar()
            .encode(x=alt.X("offset:Q", title="committed offset"),
                    y=alt.Y("tp:N", title="topic-partition"),
                    color=alt.Color("group:N", title="group"),
                    yOffset="group:N",
                    tooltip=["group", "topic", "partition", "offset", "metadata"])
            .properties(width=420))


def records_timeline_chart(log: Any, *, title: str = "Records appended to __consumer_offsets") -> alt.Chart:
    """Each log entry as a point: time × partition, coloured by record family."""
    df = log_frame(log)
    df["family"] = df["type"].map(record_family)
    df["tombstone"] = df["value"].eq("<tombstone>")
    families = sorted(set(df["family"])) or ["offsets"]
    return (alt.Chart(df, title=title).mark_point(filled=True, size=90)
            .encode(x=alt.X("offset:O", title="offset within the partition"),
                    y=alt.Y("partition:O", title="__consumer_offsets partition"),
                    color=alt.Color("family:N", title="record family",
                                    scale=alt.Scale(domain=families, range=[RECORD_FAMILIES[f] for f in families])),
                    shape=alt.Shape("tombstone:N", title="tombstone"),
                    tooltip=["position", "partition", "offset", "type", "key", "value"])
            .properties(width=420))


def offsets_overview(coordinator: Any) -> alt.VConcatChart:
    """Committed offsets above the records that produced them (own colour scales each)."""
    return (committed_offsets_chart(coordinator.offsets_table()) & records_timeline_chart(coordinator.log)
            ).resolve_scale(color="independent", shape="independent")


def ownership_timeline(intervals: list[dict], generations: list[tuple[int, int]] | None = None, *,
                       title: str = "Partition ownership over time") -> alt.LayerChart:
    """Who owned which partition when (bars), with a rule at every new generation.

    `intervals`: rows with consumer, topic, partition, start, end (ms), as
    `Simulation.ownership_intervals()` gives them; `generations`: (ms, generation)."""
    df = pd.DataFrame(intervals, columns=["consumer", "topic", "partition", "start", "end", "generation"])
    df = df.assign(tp=df["topic"].astype(str) + "-" + df["partition"].astype(str),
                   start_s=df["start"] / 1000, end_s=df["end"] / 1000)
    bars = (alt.Chart(df).mark_bar(height=10)
            .encode(x=alt.X("start_s:Q", title="time (s)"), x2="end_s:Q",
                    y=alt.Y("tp:N", title="topic-partition", sort=sorted(set(df["tp"]))),
                    color=alt.Color("consumer:N", title="owner"),
                    tooltip=["consumer", "tp", "start_s", "end_s", "generation"]))
    gens = pd.DataFrame(generations or [], columns=["t", "generation"]).assign(
        t_s=lambda d: d["t"] / 1000, label=lambda d: "gen " + d["generation"].astype(str))
    rules = alt.Chart(gens).mark_rule(color="#555", strokeDash=[3, 3]).encode(x="t_s:Q")
    labels = alt.Chart(gens).mark_text(align="left", dx=3, dy=-4, fontSize=9, color="#555").encode(
        x="t_s:Q", y=alt.value(0), text="label:N")
    return alt.layer(bars, rules, labels, title=title).properties(width=560)


def save(chart: alt.Chart, path: str | Path) -> Path:
    """Export a chart to PNG or SVG (by suffix) with vl-convert; works headless."""
    import vl_convert as vlc

    path = Path(path)
    spec = chart.to_dict()
    if path.suffix == ".svg":
        path.write_text(vlc.vegalite_to_svg(spec))
    elif path.suffix == ".png":
        path.write_bytes(vlc.vegalite_to_png(spec, scale=2))
    else:
        raise ValueError(f"save() writes .png or .svg, not {path.suffix!r}")
    return path
