"""The record log: offset, time, record type, key, decoded value; raw bytes on demand.

`log_row` is one log entry as the widgets show it; `log_frame` the whole log as a table;
`RecordLogView` the filterable view. The HTML table helpers every widget uses live in
`widgets.tables` (re-exported here, where they used to be).
"""
from __future__ import annotations

import json
from typing import Any

import ipywidgets as W
import pandas as pd

from widgets.tables import (LONG_WORD, MAX_CHARS, SCROLL_STYLE, Table, cut, mimebundle, records_html, scroll_x,
                            table_html, type_html)


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


__all__ = ["FAULT_TYPE", "LONG_WORD", "MAX_CHARS", "RecordLogView", "RecordTable", "SCROLL_STYLE", "Table", "cut",
           "log_frame", "log_row", "mimebundle", "records_html", "scroll_x", "table_html", "type_html",
           "with_faults"]
