"""The record log: offset, time, record type, key, decoded value; raw bytes on demand."""
from __future__ import annotations

import html
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
    import json
    return json.dumps(obj, separators=(",", ":"))


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


class RecordLogView:
    """A filterable view of a coordinator's `__consumer_offsets` log.

    `view.group.value = "orders"`, `view.type.value = "OffsetCommit"`, `view.raw.value = True`
    update `view.html` (what the output area shows)."""

    def __init__(self, coordinator_or_log: Any, *, max_rows: int = 200) -> None:
        self.log = getattr(coordinator_or_log, "log", coordinator_or_log)
        self.max_rows = max_rows
        self.frame = log_frame(self.log, raw=True)
        groups = sorted(g for g in self.frame["group"].dropna().unique())
        types = sorted(self.frame["type"].unique())
        self.group = W.Dropdown(options=["(all)"] + groups, value="(all)", description="group")
        self.type = W.Dropdown(options=["(all)"] + types, value="(all)", description="type")
        self.raw = W.Checkbox(value=False, description="raw bytes")
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
        head = "".join(f"<th>{c}</th>" for c in cols)
        body = []
        for _, r in df.head(self.max_rows).iterrows():
            colour = RECORD_FAMILIES[record_family(r["type"])]
            cells = "".join(
                f"<td style='border-left:4px solid {colour}'>{html.escape(str(r[c]))}</td>" if c == "type"
                else f"<td><code>{html.escape(str(r[c]))}</code></td>" for c in cols)
            body.append(f"<tr>{cells}</tr>")
        more = f"<p>… {len(df) - self.max_rows} more rows</p>" if len(df) > self.max_rows else ""
        caption = f"<caption>__consumer_offsets: {len(df)} of {len(self.frame)} records</caption>"
        return f"<table class='kgroup-log'>{caption}<tr>{head}</tr>{''.join(body)}</table>{more}"

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
