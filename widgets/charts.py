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


#: The reconciliation grid's colours: a partition a member owns and keeps, one it has to give
#: up (pending revocation), one its target has but it does not own yet (KIP-848's words).
ASSIGNMENT_STATES = {"owned": "#4c78a8", "revoking": "#f58518", "target only": "#bcd7ee"}


def assignment_grid_chart(cells: pd.DataFrame | list[dict], *, members: list[str] | None = None,
                          partitions: list[str] | None = None,
                          title: str = "Current vs target assignment") -> alt.LayerChart:
    """A heatmap topic-partition × member: owned, revoking, target only; a dot where the
    process itself owns the partition. `cells`: rows with member, tp, state, process owns
    (as `ReconciliationView.grid_frame()` gives them)."""
    df = pd.DataFrame(cells, columns=["member", "tp", "state", "process owns"])
    states = list(ASSIGNMENT_STATES) + ["owned by the process only"]
    colours = list(ASSIGNMENT_STATES.values()) + ["#ffffff"]
    x = alt.X("member:N", title="member", sort=members or sorted(set(df["member"])))
    y = alt.Y("tp:N", title="topic-partition", sort=partitions or sorted(set(df["tp"])))
    rects = alt.Chart(df).mark_rect(stroke="#999", strokeWidth=0.5).encode(
        x=x, y=y, color=alt.Color("state:N", title="partition", scale=alt.Scale(domain=states, range=colours)),
        tooltip=["member", "tp", "state", "process owns"])
    dots = alt.Chart(df[df["process owns"].astype(bool)]).mark_circle(color="#222", size=30).encode(x=x, y=y)
    return alt.layer(rects, dots, title=title).properties(width=alt.Step(36), height=alt.Step(14))


def unowned_over_time(series: dict[str, list[tuple[int, int]]], *, events: list[tuple[int, str]] | None = None,
                      title: str = "Partitions without an owner") -> alt.LayerChart:
    """One line per scenario: how many partitions no consumer owned, over time.

    `series`: label -> [(ms, count)] as `Simulation.unowned_series()` gives them; `events`:
    (ms, label) marks (members joining, restarts), drawn as rules."""
    rows = [{"scenario": label, "t_s": t / 1000, "unowned": n} for label, points in series.items() for t, n in points]
    df = pd.DataFrame(rows, columns=["scenario", "t_s", "unowned"])
    lines = (alt.Chart(df).mark_line(interpolate="step-after", strokeWidth=1.6)
             .encode(x=alt.X("t_s:Q", title="time (s)"), y=alt.Y("unowned:Q", title="partitions without an owner"),
                     color=alt.Color("scenario:N", title="protocol", sort=list(series),
                                     legend=alt.Legend(labelLimit=400, orient="bottom", direction="vertical")),
                     strokeDash=alt.StrokeDash("scenario:N", sort=list(series), legend=None),
                     tooltip=["scenario", "t_s", "unowned"]))
    marks = pd.DataFrame([{"t_s": t / 1000, "label": label} for t, label in (events or [])], columns=["t_s", "label"])
    rules = alt.Chart(marks).mark_rule(color="#999", strokeDash=[2, 2]).encode(x="t_s:Q")
    labels = alt.Chart(marks).mark_text(align="left", dx=3, dy=-4, fontSize=9, color="#555", angle=0).encode(
        x="t_s:Q", y=alt.value(0), text="label:N")
    return alt.layer(rules, labels, lines, title=title).properties(width=560, height=220)


def assignment_balance(counts: pd.DataFrame | list[dict], *,
                       title: str = "Partitions per member, by server-side assignor") -> alt.Chart:
    """Bars: partitions assigned to each member, one panel per assignor (rows with assignor,
    member, partitions; optional topic for stacking). Above 60 members, a histogram of
    per-member counts instead (and the title says so)."""
    df = pd.DataFrame(counts)
    if "topic" not in df:
        df["topic"] = "all"
    totals = df.groupby(["assignor", "member"], as_index=False)["partitions"].sum()
    if totals["member"].nunique() > 60:
        return (alt.Chart(totals, title=f"{title} (histogram of per-member counts: "
                                        f"{totals['member'].nunique()} members)")
                .mark_bar().encode(x=alt.X("partitions:O", title="partitions of a member"),
                                   y=alt.Y("count():Q", title="members"), column=alt.Column("assignor:N", title=None))
                .properties(width=220))
    members = list(dict.fromkeys(df["member"]))
    return (alt.Chart(df, title=title).mark_bar()
            .encode(x=alt.X("member:N", title="member", sort=members),
                    y=alt.Y("sum(partitions):Q", title="partitions", axis=alt.Axis(tickMinStep=1)),
                    color=alt.Color("topic:N", title="topic"),
                    column=alt.Column("assignor:N", title=None, sort=list(dict.fromkeys(df["assignor"]))),
                    tooltip=["assignor", "member", "topic", "partitions"])
            .properties(width=alt.Step(22)))


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
