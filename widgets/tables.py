"""HTML that fits a notebook's output area: the helpers every widget's tables go through.

A notebook's output area is ~960 px wide and a widget's HTML does not scroll on its own, so
tables wrap long tokens to fit, long JSON values are cut with the whole value one click away,
and whatever still does not fit scrolls sideways under the table itself (`table_html`,
`records_html`, `scroll_x`). `mimebundle` pairs a live widget with that static HTML.
"""
from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable, Sequence
from typing import Any

import pandas as pd

from widgets.palette import RECORD_FAMILIES, record_family

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
