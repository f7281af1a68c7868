"""The record log: offset, time, record type, key, decoded value; raw bytes on demand.

Also the HTML helpers every widget's tables go through (`table_html`, `records_html`): a
notebook's output area is ~960 px wide and a widget's HTML does not scroll on its own, so
tables wrap long tokens to fit, long JSON values are cut with the whole value one click away,
and whatever still does not fit scrolls sideways under the table itself.
"""
from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable, Sequence
from typing import Any

import ipywidgets as W
import pandas as pd

from widgets.palette import RECORD_FAMILIES, record_family


def log_row(entry: Any) -> dict:
    """One log entry as a display row (decoded key/value as compact JSON)."""
    if entry.control is not None:
        kind = entry.control.type.name.title() + "Marker"
        return {"position": entry.position, "partition": entry.partition, "offset": entry.offset,
                "timestamp": entry.timestamp, "type": kind, "group": None, "key": "", "value": "",
                "key_bytes": entry.key or b"", "value_bytes": entry.value or b"", "txn": entry.producer_id}
    rec = entry.record
    doc = rec.to_json()
    key = doc["key"]["data"]
    return {"position": entry.position, "partition": entry.partition, "offset": entry.offset,
            "timestamp": entry.timestamp, "type": type(rec).__name__,
            "group": key.get("group", key.get("groupId")),
            "key": _compact(key), "value": "<tombstone>" if doc["value"] is None else _compact(doc["value"]),
            "key_bytes": entry.key, "value_bytes": entry.value or b"",
            "txn": entry.producer_id if entry.is_transactional else None}


def _compact(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"))


# ---------------------------------------------------------------------------------------
# HTML that fits the output area

#: Characters of a key / value shown before it is cut (the rest behind a click).
MAX_CHARS = 120
#: Words longer than this (JSON, member ids, topic ids, Kafka's names) may wrap (see `_text`),
#: so the table fits the output area instead of pushing its last columns out of sight;
#: shorter words stay whole.
LONG_WORD = 16
_TABLE_CSS = ("<style>.kgroup-table td{overflow-wrap:normal;vertical-align:top}"
              # (beats JupyterLab's `:not(.jp-RenderedMarkdown).jp-RenderedHTMLCommon td {text-align: right}`)
              ".kgroup-scroll table.kgroup-table td,.kgroup-scroll table.kgroup-table th"
              "{text-align:left;padding:0.35em 0.45em}"
              ".kgroup-table .kgroup-long{overflow-wrap:anywhere}"
              ".kgroup-table details>summary{cursor:pointer}"
              ".kgroup-table pre{white-space:pre-wrap;overflow-wrap:anywhere;margin:0}</style>")
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")
_BREAKS = re.compile(r"(?<=[a-z])(?=[A-Z])|(?<=[-_,:/=.])(?=.)")


#: The sideways-scrolling box: as wide as its container, never wider. `width:0;min-width:100%`
#: keeps the table's own minimum width out of the box's: a widget's HTML sits in a flex box
#: that would otherwise grow to the table, past the output area, and scroll as a whole.
SCROLL_STYLE = "overflow-x:auto;width:0;min-width:100%"


def scroll_x(inner: str) -> str:
    """`inner` in a box that scrolls sideways (its own scroll bar, right under it) when wider
    than the output area."""
    return f"<div class='kgroup-scroll' style='{SCROLL_STYLE}'>{inner}</div>"


def _long(text: str) -> bool:
    return any(len(w) > LONG_WORD for w in text.split())


def _text(value: Any) -> str:
    """A cell's text as HTML. A long word gets break opportunities (<wbr>) between its
    camel-case words and after `_ - , : / = .` when that makes every piece short (member ids,
    UUIDs, Kafka's names); else it may break anywhere."""
    text = str(value)
    if not _long(text):
        return html.escape(text)
    parts = _BREAKS.split(text)
    if all(len(w) <= LONG_WORD for p in parts for w in p.split()):
        return "<wbr>".join(html.escape(p) for p in parts)
    return f"<span class='kgroup-long'>{html.escape(text)}</span>"


def _head(value: Any) -> str:
    """A column header as HTML: it may wrap at every camel-case word and after `_ - , : / = .`
    (`committed_|offset`), so a header is never what keeps a column wide."""
    return "<wbr>".join(html.escape(p) for p in _BREAKS.split(str(value)))


def table_html(df: pd.DataFrame, *, index: bool = False, escape: bool = True) -> str:
    """A DataFrame as an HTML table that fits the output area (long words wrap, sideways
    scroll as a last resort); missing values blank rather than NaN / None.
    `escape=False`: the cells are HTML already (shown as they are)."""
    shown = df.astype(object).where(df.notna(), "")
    if escape:
        shown = shown.map(_text)
        if shown.index.nlevels == 1:
            shown.index = shown.index.map(_text)
        if shown.columns.nlevels == 1:
            shown.columns = shown.columns.map(_head)
    table = shown.to_html(index=index, escape=False, classes="kgroup-table", border=0)
    return scroll_x(_TABLE_CSS + table)


def type_html(type_name: str) -> str:
    """A record type that may wrap between its words (ConsumerGroup|Current|Member|Assignment)."""
    return "<wbr>".join(html.escape(part) for part in _CAMEL.split(type_name))


def cut(text: str, max_chars: int = MAX_CHARS) -> str:
    """`text` as HTML: whole when short, else its first `max_chars` characters with the
    whole value (JSON pretty-printed) behind a click (`<details>`)."""
    if len(text) <= max_chars:
        return f"<code class='kgroup-long'>{html.escape(text)}</code>" if _long(text) else \
            f"<code>{html.escape(text)}</code>"
    try:
        doc = json.loads(text)
        full = json.dumps(doc, indent=1) if isinstance(doc, (dict, list)) else text
    except ValueError:
        full = text
    return (f"<details><summary><code class='kgroup-long'>{html.escape(text[:max_chars])}…</code> "
            f"<small>({len(text)} chars)</small></summary><pre>{html.escape(full)}</pre></details>")


def records_html(rows: Iterable[dict], columns: Sequence[str], *, caption: str = "",
                 max_chars: int = MAX_CHARS) -> str:
    """Record rows (as `log_row` gives them) as a table: the type with its record family's
    colour, keys and values cut at `max_chars` with the whole value a click away."""
    head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
    body = []
    for r in rows:
        cells = []
        for c in columns:
            v = r.get(c)
            text = "" if v is None else (v.hex(" ") if isinstance(v, bytes) else str(v))
            if c == "type":
                colour = RECORD_FAMILIES[record_family(text)]
                cells.append(f"<td style='border-left:4px solid {colour}'>{type_html(text)}</td>")
            else:
                cells.append(f"<td>{cut(text, max_chars)}</td>")
        body.append(f"<tr>{''.join(cells)}</tr>")
    cap = f"<caption>{html.escape(caption)}</caption>" if caption else ""
    return scroll_x(_TABLE_CSS + f"<table class='kgroup-table kgroup-log'>{cap}<thead><tr>{head}</tr></thead>"
                    f"<tbody>{''.join(body)}</tbody></table>")


class Table:
    """A DataFrame shown as `table_html` draws it: long texts wrap within the output area
    instead of widening the table past it (whose scrollbar then sits below the last row);
    plain text where there is no HTML.  `display(Table(df))`."""

    def __init__(self, frame: pd.DataFrame, *, index: bool = False) -> None:
        self.frame = frame
        self.index = index

    def to_html(self) -> str:
        return table_html(self.frame, index=self.index)

    def _repr_mimebundle_(self, **_kw) -> dict:
        return {"text/html": self.to_html(), "text/plain": self.frame.to_string(index=self.index, max_colwidth=60)}


class RecordTable:
    """Rows of `log_frame` shown as `records_html` draws them (the type in its family's colour,
    long keys and values a click away) instead of pandas' table, whose JSON columns run off
    the output area; plain text where there is no HTML.

        RecordTable(log_frame(c.log).iloc[a:b][["offset", "type", "key", "value"]])"""

    def __init__(self, frame: pd.DataFrame, *, max_chars: int = MAX_CHARS) -> None:
        self.frame = frame
        self.max_chars = max_chars

    def to_html(self) -> str:
        return records_html(self.frame.to_dict("records"), list(self.frame.columns), max_chars=self.max_chars)

    def _repr_mimebundle_(self, **_kw) -> dict:
        return {"text/html": self.to_html(), "text/plain": self.frame.to_string(max_colwidth=60)}


def log_frame(log: Any, *, raw: bool = False) -> pd.DataFrame:
    """The log as a pandas table, one row per entry (bytes as hex with `raw=True`)."""
    rows = [log_row(e) for e in log]
    df = pd.DataFrame(rows, columns=["position", "partition", "offset", "timestamp", "type", "group", "key",
                                     "value", "key_bytes", "value_bytes", "txn"])
    if raw:
        df["key_bytes"] = df["key_bytes"].map(lambda b: b.hex(" "))
        df["value_bytes"] = df["value_bytes"].map(lambda b: b.hex(" "))
        return df
    return df.drop(columns=["key_bytes", "value_bytes"])


FAULT_TYPE = "⚡ fault"


def with_faults(frame: pd.DataFrame, exchanges: Any) -> pd.DataFrame:
    """`frame` (a `log_frame`) with a `fault` column: each recorded exchange's fault beside the
    entries it wrote, and a row of type FAULT_TYPE where a fault wrote nothing. Unchanged
    when no exchange carries a fault."""
    hits = [x for x in exchanges if getattr(x, "fault", None) is not None]
    if not hits:
        return frame
    frame = frame.assign(fault=None)
    extra = []
    for x in hits:
        inside = (frame["position"] >= x.start_position) & (frame["position"] < x.end_position)
        if inside.any():
            frame.loc[inside, "fault"] = x.fault
        else:
            extra.append({"position": x.start_position - 0.5, "partition": None, "offset": None,
                          "timestamp": x.at_ms, "type": FAULT_TYPE, "group": None, "key": x.fault, "value": "",
                          "key_bytes": "", "value_bytes": "", "txn": None, "fault": x.fault})
    if extra:
        frame = pd.concat([frame, pd.DataFrame(extra)], ignore_index=True).sort_values("position", kind="stable")
    return frame.reset_index(drop=True)


class RecordLogView:
    """A filterable view of a coordinator's `__consumer_offsets` log.

    `view.group.value = "orders"`, `view.type.value = "OffsetCommit"`, `view.raw.value = True`
    update `view.html` (what the output area shows). `exchanges` (a recording `kgroup serve`'s
    `server.exchanges()`): the faults that hit them are shown where they fell, beside the records
    their exchange wrote (a fault that wrote nothing gets a row of its own)."""

    def __init__(self, coordinator_or_log: Any, *, max_rows: int = 200, exchanges: Any = None) -> None:
        self.log = getattr(coordinator_or_log, "log", coordinator_or_log)
        self.max_rows = max_rows
        self.frame = with_faults(log_frame(self.log, raw=True), exchanges or ())
        groups = sorted(g for g in self.frame["group"].dropna().unique())
        types = sorted(self.frame["type"].unique())
        self.group = W.Dropdown(options=["(all)"] + groups, value="(all)", description="group")
        self.type = W.Dropdown(options=["(all)"] + types, value="(all)", description="type")
        self.raw = W.Checkbox(value=False, description="raw bytes", indent=False, layout=W.Layout(width="auto"))
        self.out = W.HTML()
        for w in (self.group, self.type, self.raw):
            w.observe(lambda _change: self.refresh(), names="value")
        self.widget = W.VBox([W.HBox([self.group, self.type, self.raw]), self.out])
        self.refresh()

    def rows(self) -> pd.DataFrame:
        df = self.frame
        if self.group.value != "(all)":
            df = df[df["group"] == self.group.value]
        if self.type.value != "(all)":
            df = df[df["type"] == self.type.value]
        return df

    def refresh(self) -> None:
        self.out.value = self.to_html()

    def to_html(self) -> str:
        df = self.rows()
        cols = ["partition", "offset", "timestamp", "type", "key", "value"] + (["key_bytes", "value_bytes"] if self.raw.value else [])
        if "fault" in df.columns:
            cols.append("fault")
        more = f"<p>… {len(df) - self.max_rows} more rows</p>" if len(df) > self.max_rows else ""
        rows = df.head(self.max_rows).to_dict("records")
        return records_html(rows, cols, caption=f"__consumer_offsets: {len(df)} of {len(self.frame)} records") + more

    def _repr_mimebundle_(self, **kw):
        return mimebundle(self.widget, self.to_html(), **kw)


def mimebundle(widget, static_html: str, **kw) -> dict:
    """The live widget for JupyterLab plus a static HTML picture for headless runs and
    viewers without a widget manager (each front end shows the richest it can)."""
    bundle = widget._repr_mimebundle_(**kw) or {}
    if isinstance(bundle, tuple):
        bundle = bundle[0]
    bundle = dict(bundle)
    bundle["text/html"] = static_html
    bundle["text/plain"] = "(static view: run in JupyterLab for the interactive widget)"
    return bundle
