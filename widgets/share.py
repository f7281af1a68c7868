"""Share-group pictures (KIP-932): the share-partition strip.

- `strip_chart(rows, spso=, speo=)`: one cell per offset from before the SPSO to after the SPEO,
  coloured by record state (Available, Acquired, Acknowledged, Archived), the delivery count
  printed in the cell above the lock holder, SPSO and SPEO marked — the KIP's "in-flight
  records" picture, drawn from any rows of that shape (the KIP's own table included).
- `SharePartitionStrip`: the same picture live over a coordinator's share-partition, with
  buttons to fetch as a chosen consumer, accept / release / reject a range of what that
  consumer holds, advance the clock, and step back through what it showed before.

Above `AGGREGATE_ABOVE` offsets the strip shows runs of equal state instead of cells (thousands
of cells would be unreadable and slow to draw). Cells narrow (down to `MIN_STEP` px) so that a
strip, its SPEO label and its legend fit a notebook's output area (about 900 px) without being cut.
"""
from __future__ import annotations

import html
from collections.abc import Iterable, Mapping
from typing import Any

import altair as alt
import pandas as pd

from widgets.palette import SHARE_STATES
from widgets.tables import mimebundle

AGGREGATE_ABOVE = 400
#: the cells' width: STEP px each, narrower for long strips so that they stay within MAX_CELLS_WIDTH
STEP, MIN_STEP, MAX_CELLS_WIDTH = 40, 20, 600
#: the legend's distance from the cells: room for the SPEO label that runs past the last cell
LEGEND_OFFSET = 40
STATES = list(SHARE_STATES)
COLUMNS = ["offset", "state", "delivery_count", "lock_holder"]


def strip_frame(rows: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """Rows (offset, state, delivery_count, lock_holder) as a frame, states spelt as the KIP does."""
    df = pd.DataFrame(list(rows), columns=COLUMNS)
    if len(df):
        df["state"] = df["state"].map(lambda s: str(s).title() if str(s).lower() != "acked" else "Acknowledged")
        df["delivery_count"] = df["delivery_count"].fillna(0).astype(int)
        df["lock_holder"] = df["lock_holder"].fillna("")
    return df


def strip_chart(rows: Iterable[Mapping[str, Any]] | pd.DataFrame, *, spso: int, speo: int,
                title: str = "Share-partition: record states") -> alt.LayerChart:
    """The strip: offsets across, one cell each (state colour, delivery count inside, lock holder
    below), with the share-partition start offset (SPSO) and end offset (SPEO) marked."""
    df = rows if isinstance(rows, pd.DataFrame) else strip_frame(rows)
    if len(df) > AGGREGATE_ABOVE:
        return _aggregated(df, spso=spso, speo=speo, title=title)
    df = df.assign(count_text=df["delivery_count"].map(lambda n: str(n) if n else ""),
                   offset_label=df["offset"].astype(str))
    order = [str(o) for o in sorted(df["offset"])]
    step = max(MIN_STEP, min(STEP, MAX_CELLS_WIDTH // max(len(order), 1)))
    # labels of 3+ digits would collide in narrow cells: Vega drops the overlapping ones
    x = alt.X("offset_label:N", title="offset", sort=order, axis=alt.Axis(labelAngle=0, labelOverlap=True))
    colour = alt.Color("state:N", title="record state", scale=alt.Scale(domain=STATES, range=list(SHARE_STATES.values())),
                       legend=alt.Legend(offset=LEGEND_OFFSET))
    base = alt.Chart(df)
    cells = base.mark_rect(stroke="white", strokeWidth=1.5).encode(
        x=x, color=colour, tooltip=["offset", "state", "delivery_count", "lock_holder"])
    counts = base.mark_text(fontWeight="bold", dy=-7).encode(x=x, text="count_text:N")
    holders = base.mark_text(dy=9, fontSize=9, color="#222").encode(x=x, text="lock_holder:N")
    # SPSO's label runs to the left of its arrow, SPEO's to the right, so adjacent ones never overlap
    if spso == speo:
        markers = [(spso, "▼ SPSO = SPEO", "center", 0)]
    else:
        markers = [(spso, "SPSO ▼", "right", 6), (speo, "▼ SPEO", "left", -6)]
    marks = alt.layer(*[alt.Chart(pd.DataFrame([{"offset_label": str(o), "marker": text}]))
                        .mark_text(fontWeight="bold", dy=-33, dx=dx, align=align, color="#222")
                        .encode(x=alt.X("offset_label:N", sort=order), text="marker:N")
                        for o, text, align, dx in markers])
    # the title starts at the cells' left edge: centred over a short strip, a long title would
    # stick out to the left and widen the chart
    return (alt.layer(cells, counts, holders, marks,
                      title=alt.TitleParams(f"{title} (SPSO={spso}, SPEO={speo})", anchor="start", frame="group"))
            .properties(width=alt.Step(step), height=44))


def _aggregated(df: pd.DataFrame, *, spso: int, speo: int, title: str) -> alt.Chart:
    runs = []
    for _, row in df.sort_values("offset").iterrows():
        if runs and runs[-1]["state"] == row["state"] and runs[-1]["last"] == row["offset"] - 1:
            runs[-1]["last"] = row["offset"]
        else:
            runs.append({"state": row["state"], "first": row["offset"], "last": row["offset"]})
    frame = pd.DataFrame(runs).assign(end=lambda d: d["last"] + 1)
    return alt.Chart(frame, title=f"{title} (SPSO={spso}, SPEO={speo}; {len(df)} offsets in {len(frame)} runs)") \
        .mark_bar(height=30).encode(
            x=alt.X("first:Q", title="offset", scale=alt.Scale(zero=False)), x2="end:Q",
            color=alt.Color("state:N", title="record state",
                            scale=alt.Scale(domain=STATES, range=list(SHARE_STATES.values()))),
            tooltip=["state", "first", "last"]).properties(width=600, height=40)


def strip_html(rows: Iterable[Mapping[str, Any]] | pd.DataFrame, *, spso: int, speo: int) -> str:
    """The strip as a plain HTML table (static views, docs)."""
    df = rows if isinstance(rows, pd.DataFrame) else strip_frame(rows)
    cells, counts, holders, marks = [], [], [], []
    for _, r in df.sort_values("offset").iterrows():
        colour = SHARE_STATES.get(r["state"], "#fff")
        cells.append(f"<td style='background:{colour};padding:2px 6px' title='{html.escape(str(r['state']))}'>"
                     f"{int(r['offset'])}</td>")
        counts.append(f"<td style='text-align:center'>{int(r['delivery_count']) or ''}</td>")
        holders.append(f"<td style='text-align:center;font-size:80%'>{html.escape(str(r['lock_holder']))}</td>")
        mark = " = ".join(m for m, o in (("SPSO", spso), ("SPEO", speo)) if r["offset"] == o)
        marks.append(f"<td style='text-align:center;font-size:80%'><b>{mark}</b></td>")
    legend = " ".join(f"<span style='background:{c};padding:0 6px'>{s}</span>" for s, c in SHARE_STATES.items())
    return (f"<table style='border-collapse:collapse'><tr><th>offset</th>{''.join(cells)}</tr>"
            f"<tr><th>delivery count</th>{''.join(counts)}</tr><tr><th>lock</th>{''.join(holders)}</tr>"
            f"<tr><th></th>{''.join(marks)}</tr></table><p>{legend}</p>")


def partition_rows(sp: Any, *, names: Mapping[str, str] | None = None, before: int = 2,
                   after: int = 2) -> list[dict]:
    """A share-partition leader's offsets as strip rows (its `strip()`): `before` offsets below
    the SPSO (Archived), the in-flight records, and `after` offsets past them (Available, up to
    the log end). `names` maps member ids to short labels for the lock holder."""
    names = names or {}
    views = sp.strip(max(0, sp.spso - before), sp.next_offset - 1 + after)
    return [{"offset": v.offset, "state": v.state, "delivery_count": v.delivery_count,
             "lock_holder": names.get(v.member_id, v.member_id) if v.member_id else ""} for v in views]


class SharePartitionStrip:
    """The share-partition strip, live: every button sends what a real share consumer would
    (ShareFetch, ShareAcknowledge through `Coordinator.handle`), then redraws.

        strip = SharePartitionStrip(c, "myshare", "foo", 0, consumers={"A": a, "B": b})
        strip.consumer.value = "A"; strip.fetch.click()
        strip.first.value, strip.last.value = 3, 5; strip.release.click()
        strip.advance_ms.value = 30_000; strip.advance.click()      # locks expire
        strip.back.click()                                         # the picture before

    `consumers` are `kgroup.clients.share.ShareConsumer`s in explicit acknowledgement mode
    (so that nothing is accepted behind the user's back). The message says only what the
    share-partition leader shows afterwards: "A acquired 4-9" names the offsets the leader
    now has Acquired by A; records whose acquisition lock elapsed are no longer the
    consumer's (it drops them, as `ShareConsumer.drop_lapsed` says) and are never acknowledged.
    *advance clock* lets the consumers' heartbeat threads run (they stay members) but not
    their poll loops. Stepping back shows what the strip showed before each action: the
    in-flight state is the leader's soft state, which no log holds, so the history is the
    widget's own. The top-level widget carries the CSS class `kgroup-share-strip`.
    """

    def __init__(self, coordinator: Any, group_id: str, topic: str, partition: int = 0, *,
                 consumers: Mapping[str, Any], before: int = 2, after: int = 3) -> None:
        import ipywidgets as W

        self.c, self.group_id, self.topic, self.partition = coordinator, group_id, topic, partition
        self.consumers = dict(consumers)
        self.before, self.after = before, after
        self.history: list[tuple[str, list[dict], int, int]] = []
        self.position = -1
        self.consumer = W.Dropdown(options=list(self.consumers), description="consumer")
        self.fetch = W.Button(description="fetch")
        self.first = W.IntText(description="from offset")
        self.last = W.IntText(description="to offset")
        self.accept = W.Button(description="accept")
        self.release = W.Button(description="release")
        self.reject = W.Button(description="reject")
        self.advance_ms = W.IntText(value=1_000, description="advance ms")
        self.advance = W.Button(description="advance clock")
        self.back = W.Button(description="◀ back")
        self.forward = W.Button(description="forward ▶")
        self.message = W.HTML()
        self.out = W.HTML()
        self.fetch.on_click(lambda _b: self._fetch())
        for button, kind in ((self.accept, "ACCEPT"), (self.release, "RELEASE"), (self.reject, "REJECT")):
            button.on_click(lambda _b, kind=kind: self._acknowledge(kind))
        self.advance.on_click(lambda _b: self._advance())
        self.back.on_click(lambda _b: self._show(self.position - 1))
        self.forward.on_click(lambda _b: self._show(self.position + 1))
        self.widget = W.VBox([W.HBox([self.consumer, self.fetch]),
                              W.HBox([self.first, self.last, self.accept, self.release, self.reject]),
                              W.HBox([self.advance_ms, self.advance, self.back, self.forward]),
                              self.message, self.out])
        self.widget.add_class("kgroup-share-strip")
        self._record("start")

    # -- what it shows ------------------------------------------------------------------------
    def leader(self) -> Any:
        from kgroup.groups.share.partition import share_partition
        return share_partition(self.c, self.group_id, self.c.cluster.topic_id(self.topic), self.partition)

    def rows(self) -> list[dict]:
        names = {k.member_id: name for name, k in self.consumers.items()}
        sp = self.leader()
        rows = partition_rows(sp, names=names, before=self.before, after=self.after)
        if rows and rows[-1]["offset"] + 1 == sp.speo:
            # the SPEO one past the log end (nothing there yet): an empty cell, so that its marker shows
            rows.append({"offset": sp.speo, "state": "", "delivery_count": 0, "lock_holder": ""})
        return rows

    def held_by(self, name: str) -> list[int]:
        """The offsets the share-partition leader shows as Acquired by consumer `name`."""
        sp, member = self.leader(), self.consumers[name].member_id
        return [v.offset for v in sp.strip(sp.spso, sp.next_offset - 1)
                if v.member_id == member and str(v.state).lower() == "acquired"]

    def _record(self, label: str) -> None:
        sp = self.leader()
        self.history = self.history[: self.position + 1]
        self.history.append((label, self.rows(), sp.spso, sp.speo))
        self._show(len(self.history) - 1)

    def _show(self, index: int) -> None:
        self.position = max(0, min(len(self.history) - 1, index))
        self.back.disabled = self.position == 0
        self.forward.disabled = self.position == len(self.history) - 1
        self.out.value = self.to_html()

    def to_html(self) -> str:
        label, rows, spso, speo = self.history[self.position]
        return (f"<b>{html.escape(label)}</b> <small>(view {self.position + 1}/{len(self.history)}, "
                f"t={self.c.now()} ms)</small>" + strip_html(rows, spso=spso, speo=speo))

    def chart(self, title: str | None = None) -> alt.LayerChart:
        """The current view as an altair strip."""
        label, rows, spso, speo = self.history[self.position]
        return strip_chart(rows, spso=spso, speo=speo, title=title or label)

    # -- actions ----------------------------------------------------------------------------------
    def _fetch(self) -> None:
        name = self.consumer.value
        k = self.consumers[name]
        lapsed, delivered = len(k.lapsed), len(k.delivered)
        records = [r for r in k.poll() if r.tp == (self.topic, self.partition)]
        fetched = {r.offset for r in k.delivered[delivered:] if r.tp == (self.topic, self.partition)}
        dropped = [r.offset for r in k.lapsed[lapsed:] if r.tp == (self.topic, self.partition)]
        held = set(self.held_by(name))
        # Everything said here is what the leader shows now, not what the consumer believes.
        parts = []
        if dropped:
            parts.append(f"{name}'s locks on {_ranges(dropped)} had elapsed (dropped)")
        new = sorted(fetched & held)
        again = sorted(({r.offset for r in records} - fetched) & held)
        if again:
            parts.append(f"{name} still holds {_ranges(again)} (not yet acknowledged)")
        if new or not again:
            parts.append(f"{name} acquired {_ranges(new) or 'nothing'}")
        stale = sorted({r.offset for r in records} - held)
        if stale:
            parts.append(f"the leader does not show {_ranges(stale)} as {name}'s")
        text = "; ".join(parts)
        self.message.value = html.escape(text, quote=False)
        self._record(text)

    def _acknowledge(self, kind: str) -> None:
        from kgroup.clients.share import AcknowledgeType

        name = self.consumer.value
        k = self.consumers[name]
        lo, hi = sorted((self.first.value, self.last.value))
        # Records whose lock elapsed are no longer the consumer's: they are dropped, not acknowledged.
        dropped = [r.offset for r in k.drop_lapsed()
                   if r.tp == (self.topic, self.partition) and lo <= r.offset <= hi]
        held = [r for r in k.held() if r.tp == (self.topic, self.partition) and lo <= r.offset <= hi]
        for r in held:
            k.acknowledge(r, AcknowledgeType[kind])
        errors = k.commit_sync()
        code = errors.get((self.topic, self.partition))
        verdict = f" → {code.name}" if code is not None and code.value else ""
        what = _ranges([r.offset for r in held]) or "nothing it holds"
        past = {"ACCEPT": "accepted", "RELEASE": "released", "REJECT": "rejected"}[kind]
        text = f"{name} {past} {what}{verdict}"
        if dropped:
            text += f" ({name}'s locks on {_ranges(dropped)} had elapsed)"
        self.message.value = html.escape(text, quote=False)
        self._record(text)

    def _advance(self) -> None:
        """Move the clock, letting each consumer's heartbeat thread run on time (a real share
        consumer heartbeats in the background while the application thinks), so that the
        members stay in the group; due timers (acquisition locks) fire on the way."""
        ms = self.advance_ms.value
        before = {name: set(self.held_by(name)) for name in self.consumers}
        target = self.c.now() + ms
        while True:
            for k in self.consumers.values():
                k.tick()
            now = self.c.now()
            if now >= target:
                break
            due = [k.next_heartbeat for k in self.consumers.values() if k.running and k.next_heartbeat > now]
            self.c.advance(min(due + [target]) - now)
        lost = [f"{name}'s on {_ranges(offsets - set(self.held_by(name)))}"
                for name, offsets in before.items() if offsets - set(self.held_by(name))]
        text = f"clock +{ms} ms" + (f": locks elapsed ({'; '.join(lost)})" if lost else "")
        self.message.value = html.escape(text, quote=False)
        self._record(text)

    def _repr_mimebundle_(self, **kw):
        return mimebundle(self.widget, self.to_html(), **kw)


def _ranges(offsets: Iterable[int]) -> str:
    """[3, 4, 5, 9] -> "3-5, 9"."""
    out: list[list[int]] = []
    for o in sorted(offsets):
        if out and o == out[-1][1] + 1:
            out[-1][1] = o
        else:
            out.append([o, o])
    return ", ".join(f"{a}-{b}" if a != b else f"{a}" for a, b in out)


__all__ = ["strip_frame", "strip_chart", "strip_html", "partition_rows", "SharePartitionStrip", "AGGREGATE_ABOVE",
           "STATES"]
