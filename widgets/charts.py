"""Altair charts over coordinator state, in the palette's colours, titled in the KIPs' words."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import altair as alt
import pandas as pd

from widgets.palette import ERROR, OK, RECORD_FAMILIES, STALE, record_family
from widgets.record_log import log_frame


def vega_lite_version() -> str:
    """The Vega-Lite version altair writes, as vl-convert names it ("v6_4")."""
    return "_".join(alt.SCHEMA_VERSION.split(".")[:2])


def _renderer(spec: dict, **_kw) -> dict:
    """An SVG picture drawn by vl-convert with the very Vega-Lite version altair wrote the spec for.

    JupyterLab's built-in Vega renderer is an older Vega-Lite (5.6 in JupyterLab 4.6) than altair 6
    writes, so handing it the spec renders by luck and logs a version mismatch; vl-convert carries
    the matching compiler, needs no network and looks the same in JupyterLab, papermill and docs.
    """
    import vl_convert as vlc

    return {"image/svg+xml": vlc.vegalite_to_svg(spec, vl_version=vega_lite_version()),
            "text/plain": f"<{spec.get('title', 'chart')}>"}


alt.renderers.register("kgroup", _renderer)
alt.renderers.enable("kgroup")


def _count_axis(top: Any = None, **kw) -> alt.Axis:
    """An axis that counts things: whole-number ticks only (no 0.5 partitions).

    `top`: the largest count drawn. Up to 10 the ticks are listed (0, 1, 2, ...): Vega's
    `tickMinStep` alone still puts ticks at 0.5 on a 0-2 axis."""
    values = None
    if top is not None and not pd.isna(top) and top <= 10:
        values = list(range(0, max(int(top), 1) + 1))
    return alt.Axis(tickMinStep=1, format="d", **({"values": values} if values else {}), **kw)


def committed_offsets_chart(offsets: pd.DataFrame | list[dict], *, title: str = "Committed offsets per group") -> alt.Chart:
    """One bar per (group, topic-partition): the committed offset."""
    df = pd.DataFrame(offsets)
    if df.empty:
        df = pd.DataFrame(columns=["group", "topic", "partition", "offset"])
    df = df.assign(tp=df["topic"].astype(str) + "-" + df["partition"].astype(str))
    return (alt.Chart(df, title=title).mark_bar()
            .encode(x=alt.X("offset:Q", title="committed offset", axis=_count_axis()),
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
                      title: str = "Partitions without an owner", what: str = "partitions") -> alt.LayerChart:
    """One line per scenario: how many partitions (or tasks: `what="tasks"`) no consumer
    owned, over time.

    `series`: label -> [(ms, count)] as `Simulation.unowned_series()` gives them; `events`:
    (ms, label) marks (members joining, restarts), drawn as rules."""
    rows = [{"scenario": label, "t_s": t / 1000, "unowned": n} for label, points in series.items() for t, n in points]
    df = pd.DataFrame(rows, columns=["scenario", "t_s", "unowned"])
    lines = (alt.Chart(df).mark_line(interpolate="step-after", strokeWidth=1.6)
             .encode(x=alt.X("t_s:Q", title="time (s)"),
                     y=alt.Y("unowned:Q", title=f"{what} without an owner", axis=_count_axis(df["unowned"].max())),
                     color=alt.Color("scenario:N", title="protocol", sort=list(series),
                                     legend=alt.Legend(labelLimit=400, orient="bottom", direction="vertical")),
                     strokeDash=alt.StrokeDash("scenario:N", sort=list(series), legend=None),
                     tooltip=["scenario", "t_s", "unowned"]))
    layers = [lines]
    if events:   # (no rule layers without events: an empty layer has an infinite extent)
        marks = pd.DataFrame([{"t_s": t / 1000, "label": label} for t, label in events], columns=["t_s", "label"])
        rules = alt.Chart(marks).mark_rule(color="#999", strokeDash=[2, 2]).encode(x="t_s:Q")
        labels = alt.Chart(marks).mark_text(align="left", dx=3, dy=-4, fontSize=9, color="#555", angle=0).encode(
            x="t_s:Q", y=alt.value(0), text="label:N")
        layers = [rules, labels, lines]
    return alt.layer(*layers, title=title).properties(width=560, height=220)


def epochs_over_time(timeline: pd.DataFrame | list[dict], *,
                     title: str = "A group forming: its epochs over time") -> alt.VConcatChart:
    """A rolling start (`kgroup.clients.rolling_start`'s timeline). Above: how far the assignment
    epoch trails the group epoch, which moves with every join — the target assignment catches up
    as often as the assignment interval lets it (KIP-1263). Below: the members joined, and those
    reconciled to the latest target assignment."""
    df = pd.DataFrame(timeline)
    df = df.assign(t_s=df["t_ms"] / 1000, trailing=df["group_epoch"] - df["assignment_epoch"])
    x = alt.X("t_s:Q", title="coordinator time (s)")
    top = (alt.Chart(df).mark_line(interpolate="step-after", strokeWidth=1.4, color="#d62728")
           .encode(x=x, y=alt.Y("trailing:Q", title="group epoch − assignment epoch"),
                   tooltip=["t_s", "group_epoch", "assignment_epoch"])
           .properties(width=560, height=160))
    people = df.rename(columns={"members": "joined", "at_assignment_epoch": "at the assignment epoch"}).melt(
        id_vars=["t_s"], value_vars=["joined", "at the assignment epoch"], var_name="members", value_name="count")
    bottom = (alt.Chart(people).mark_line(interpolate="step-after", strokeWidth=1.6)
              .encode(x=x, y=alt.Y("count:Q", title="members"),
                      color=alt.Color("members:N", sort=["joined", "at the assignment epoch"],
                                      legend=alt.Legend(orient="bottom", title=None)),
                      tooltip=["t_s", "members", "count"])
              .properties(width=560, height=160))
    return alt.vconcat(top, bottom, title=title)


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
                                   y=alt.Y("count():Q", title="members",
                                           axis=_count_axis(totals.groupby(["assignor", "partitions"]).size().max())),
                                   column=alt.Column("assignor:N", title=None))
                .properties(width=220))
    members = list(dict.fromkeys(df["member"]))
    return (alt.Chart(df, title=title).mark_bar()
            .encode(x=alt.X("member:N", title="member", sort=members),
                    y=alt.Y("sum(partitions):Q", title="partitions", axis=_count_axis(totals["partitions"].max())),
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
        path.write_text(vlc.vegalite_to_svg(spec, vl_version=vega_lite_version()))
    elif path.suffix == ".png":
        path.write_bytes(vlc.vegalite_to_png(spec, vl_version=vega_lite_version(), scale=2))
    else:
        raise ValueError(f"save() writes .png or .svg, not {path.suffix!r}")
    return path


# ------------------------------------------------------------------------------------------------
# charts over dumps (kgroup.dumps.spark views, collected after aggregation)

#: Colours of the group types, as in the record families (classic = GroupMetadata's colour).
GROUP_TYPES = {t: RECORD_FAMILIES[t] for t in ("classic", "consumer", "share", "streams")}
#: A member joining / leaving.
MEMBER_EVENTS = {"joined": OK, "left": ERROR}


def _utc_time(field: str, title: str) -> alt.X:
    """A time axis from epoch milliseconds, shown in UTC whatever the viewer's time zone."""
    return alt.X(f"{field}:T", title=title, scale=alt.Scale(type="utc"),
                 axis=alt.Axis(format="%H:%M:%S", labelAngle=0, labelOverlap=True))


def _utc_text(ms: pd.Series) -> pd.Series:
    """Epoch milliseconds as `2024-06-10T06:13:20.000Z` (tooltips)."""
    t = pd.to_datetime(ms.astype("float64"), unit="ms", utc=True)
    return t.dt.strftime("%Y-%m-%dT%H:%M:%S.%f").str[:-3] + "Z"


def rebalance_timeline_chart(events: pd.DataFrame | list[dict], *, until: int | None = None,
                             title: str = "Generations and group epochs over time") -> alt.VConcatChart:
    """One panel per group, one time axis for all: its generation (classic) or group epoch
    (KIP-848) as a step line coloured by group type (ending where the group's record became a
    tombstone), the member count as a dashed grey step line (right axis), and members
    joining ▲ / leaving ▼ on it.

    `events`: rows with group, group_type, t (epoch ms), event ("generation", "group_epoch",
    "joined", "left", "deleted"), generation (null in a tombstone), member_id and members (the
    count after the event), as `kgroup.dumps.spark.membership_timeline` gives them once a count
    is added. `until`: the time the last lines run on to (e.g. the dump's last record)."""
    cols = ["group", "group_type", "t", "event", "generation", "member_id", "members"]
    df = pd.DataFrame(events, columns=cols)
    df = df[df["t"].notna()].reset_index(drop=True)   # records without a timestamp cannot be placed
    if df.empty:
        return alt.vconcat(alt.Chart(pd.DataFrame({"text": ["no group records with a timestamp"]}))
                           .mark_text(fontSize=13, color="#555").encode(text="text:N")
                           .properties(width=560, height=60), title=title)
    df["member_id"] = df["member_id"].fillna("")
    df["time"] = _utc_text(df["t"])
    end = max(int(df["t"].max()), until or 0)
    span = [int(df["t"].min()), end]

    gen = df[df["event"].isin(["generation", "group_epoch", "deleted"])].copy()
    gen["closes"] = gen["generation"].isna()          # a tombstone ends that line
    gen["generation"] = gen.groupby(["group", "group_type"])["generation"].ffill()
    gen = gen[gen["generation"].notna()]
    gen["label"] = gen["event"].map({"generation": "generation", "group_epoch": "group epoch", "deleted": "deleted"})
    last = gen.groupby("group").tail(1)
    gen_line = pd.concat([gen, last[~last["closes"]].assign(t=end)], ignore_index=True)
    gen_points = gen[~gen["closes"]]

    counts = (df[df["event"].isin(["joined", "left", "deleted"])].groupby(["group", "t"], as_index=False)
              .last()[["group", "t", "members"]])
    counts = pd.concat([counts, counts.groupby("group").tail(1).assign(t=end)], ignore_index=True)
    changes = df[df["event"].isin(list(MEMBER_EVENTS))]
    types = sorted(set(gen["group_type"].dropna())) or ["classic"]
    colour = alt.Color("group_type:N", title="group type",
                       scale=alt.Scale(domain=types, range=[GROUP_TYPES.get(t, STALE) for t in types]))

    def whole(values: pd.Series) -> list[int] | None:
        """Tick values 0, 1, 2, ... for a small range (the axes count things)."""
        top = int(values.max()) if len(values.dropna()) else 1
        return list(range(0, max(top, 1) + 1)) if top <= 10 else None

    def panel(group: str, last_panel: bool) -> alt.LayerChart:
        y_gen = alt.Y("generation:Q", title="generation / epoch",
                      axis=alt.Axis(values=whole(gen_line.loc[gen_line["group"] == group, "generation"]),
                                    tickMinStep=1))
        y_members = alt.Y("members:Q", title="members",
                          axis=alt.Axis(orient="right", tickMinStep=1,
                                        values=whole(counts.loc[counts["group"] == group, "members"])))
        x = alt.X("t:T", title="time (UTC)" if last_panel else None, scale=alt.Scale(type="utc", domain=span),
                  axis=alt.Axis(format="%H:%M:%S", labelAngle=0, labelOverlap=True))
        line = (alt.Chart(gen_line[gen_line["group"] == group])
                .mark_line(interpolate="step-after", strokeWidth=2)
                .encode(x=x, y=y_gen, color=colour, detail="group_type:N"))
        points = (alt.Chart(gen_points[gen_points["group"] == group]).mark_point(filled=True, size=40)
                  .encode(x=x, y=y_gen, color=colour, tooltip=["time", "group_type", "label", "generation"]))
        count = (alt.Chart(counts[counts["group"] == group])
                 .mark_line(interpolate="step-after", color="#777", strokeDash=[4, 3], strokeWidth=1.2)
                 .encode(x=x, y=y_members))
        moves = (alt.Chart(changes[changes["group"] == group]).mark_point(filled=True, size=70, opacity=0.85)
                 .encode(x=x, y=y_members,
                         shape=alt.Shape("event:N", title="member", scale=alt.Scale(
                             domain=list(MEMBER_EVENTS), range=["triangle-up", "triangle-down"])),
                         fill=alt.Fill("event:N", title="member", scale=alt.Scale(
                             domain=list(MEMBER_EVENTS), range=list(MEMBER_EVENTS.values()))),
                         tooltip=["time", "event", "member_id", "members"]))
        return (alt.layer(line + points, count + moves, title=alt.Title(group, anchor="start", fontSize=12))
                .resolve_scale(y="independent").properties(width=560, height=100))

    groups = sorted(set(df["group"]))
    panels = [panel(g, i == len(groups) - 1) for i, g in enumerate(groups)]
    return alt.vconcat(*panels, title=title, spacing=14).resolve_scale(color="shared", shape="shared", fill="shared")


def commit_rate_chart(rates: pd.DataFrame | list[dict], *, title: str = "Offset commits per second") -> alt.Chart:
    """One line per group: offset commits per second in each time window.

    `rates`: rows with group, t (the window's start, epoch ms), commits_per_second (windows
    without a commit at 0), as `kgroup.dumps.spark.commit_rate` gives them."""
    df = pd.DataFrame(rates, columns=["group", "t", "commits_per_second", "commits"])
    df["time"] = _utc_text(df["t"])
    groups = sorted(set(df["group"]))
    return (alt.Chart(df, title=title).mark_line(interpolate="step-after", point=True)
            .encode(x=_utc_time("t", "window start (UTC)"),
                    y=alt.Y("commits_per_second:Q", title="OffsetCommit records per second"),
                    color=alt.Color("group:N", title="group", sort=groups),
                    tooltip=["group", alt.Tooltip("time:N", title="window start"), "commits", "commits_per_second"])
            .properties(width=560, height=200))


def lag_chart(lag: pd.DataFrame | list[dict], *, title: str = "Consumer lag per partition") -> alt.Chart:
    """Bars: log end offset minus the committed offset, per group and topic-partition.

    `lag`: rows with group, topic, partition, committed_offset, end_offset, lag, as
    `kgroup.dumps.spark.lag` gives them."""
    df = pd.DataFrame(lag, columns=["group", "topic", "partition", "committed_offset", "end_offset", "lag"])
    df = df.assign(tp=df["topic"].astype(str) + "-" + df["partition"].astype(str))
    groups = sorted(set(df["group"]))
    return (alt.Chart(df, title=title).mark_bar()
            .encode(x=alt.X("lag:Q", title="lag (log end offset − committed offset)"),
                    y=alt.Y("tp:N", title="topic-partition", sort=sorted(set(df["tp"]))),
                    yOffset=alt.YOffset("group:N", sort=groups),
                    color=alt.Color("group:N", title="group", sort=groups),
                    tooltip=["group", "topic", "partition", "committed_offset", "end_offset", "lag"])
            .properties(width=420))
