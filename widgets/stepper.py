"""The stepper: walk a scripted scenario forwards and backwards.

Each step opens with one line saying what happened (who sent what, what it answered, what
changed: epochs, assignments, states, statuses, error codes by Kafka's names), then what changed
in the groups since the previous step (highlighted), the records written, and the state as of
the end of the step — taken with `Coordinator.as_of` (look-back), never a re-run. The full
request and response are one click away, with the consumer-protocol bytes decoded (raw kept).

The state diffing lives in `widgets.stepper_diff`, the wording in `widgets.stepper_words` (their
public names are re-exported here), a served scenario in `widgets.stepper_served`.
"""
from __future__ import annotations

import html
import json
from typing import Any

import ipywidgets as W
import pandas as pd

from kgroup.protocol import to_data
from kgroup.runtime import PendingResponse
from kgroup.scenario import Scenario
from widgets.palette import ERROR
from widgets.protocol_bytes import expand_group_metadata
from widgets.record_log import log_row
from widgets.stepper_diff import _fmt, diff, group_view, topic_names
from widgets.stepper_words import (STREAMS_STATUS, _errors, _has_error, _list, _pretty, describe_changes,
                                   describe_request, describe_response, short_id)
from widgets.tables import mimebundle, records_html, scroll_x, table_html

#: how many changes the summary line names before "… and N more"
SUMMARY_CHANGES = 8
_CHANGED = "#fff3bf"   # the highlight of a value that changed in this step
_SCROLL = "overflow-x:auto;max-width:100%"   # a <pre>'s own sideways scroll
_WRAP = "overflow-wrap:anywhere"               # long member ids break rather than widen the table


class Stepper:
    """`stepper.next.click()`, `stepper.prev.click()`, `stepper.slider.value = i` (i counts from 0;
    the slider shows i + 1, as the title does)."""

    #: member id -> short name used in sentences (the Streams stepper takes one)
    names: dict[str, str] | None = None

    def __init__(self, scenario: Scenario) -> None:
        if not len(scenario):
            raise ValueError("the scenario has no steps yet")
        self.scenario = scenario
        self.prev = W.Button(description="◀ prev")
        self.next = W.Button(description="next ▶")
        # the value is the step's index, the label its number (as in the title: "Step 18/46")
        self.slider = W.SelectionSlider(options=[(str(i + 1), i) for i in range(len(scenario))],
                                        description="step", continuous_update=False)
        self.out = W.HTML()
        self.prev.on_click(lambda _b: self.go(self.slider.value - 1))
        self.next.on_click(lambda _b: self.go(self.slider.value + 1))
        self.slider.observe(lambda _c: self.refresh(), names="value")
        self.widget = W.VBox([W.HBox([self.prev, self.slider, self.next]), self.out])
        self.widget.add_class("kgroup-stepper")
        self.refresh()

    @property
    def index(self) -> int:
        return self.slider.value

    def go(self, index: int) -> None:
        self.slider.value = max(0, min(len(self.scenario) - 1, index))

    # what the current step shows ---------------------------------------------------
    def records(self) -> pd.DataFrame:
        rows = [log_row(e) for e in self.scenario.entries(self.index)]
        return pd.DataFrame(rows, columns=["partition", "offset", "type", "key", "value"]) if rows else \
            pd.DataFrame(columns=["partition", "offset", "type", "key", "value"])

    def state(self) -> dict[str, pd.DataFrame]:
        snap = self.scenario.state_after(self.index)
        observed = self.scenario.steps[self.index].observed
        groups = observed.get("groups") if observed else snap.groups_table()
        return {"groups": pd.DataFrame(groups), "offsets": pd.DataFrame(snap.offsets_table()),
                "members": pd.DataFrame(observed.get("members", []) if observed else [])}

    def view(self, index: int) -> dict:
        """The groups as of the end of step `index` (-1: before the first step), flattened
        (kept: a step that has run never changes)."""
        views = self.__dict__.setdefault("_views", {})
        if index not in views:
            if index < 0:
                as_of, start = self.scenario.coordinator.as_of, self.scenario.steps[0].start_position
                server = getattr(self.scenario, "server", None)  # a served scenario: look back on its loop
                views[index] = group_view(server.call(as_of, start) if server is not None else as_of(start))
            else:
                views[index] = group_view(self.scenario.state_after(index), self.scenario.steps[index].observed)
        return views[index]

    def changes(self, index: int | None = None) -> list:
        """What changed in the groups during step `index` (the current one by default)."""
        i = self.index if index is None else index
        return diff(self.view(i - 1), self.view(i))

    def _response_text(self, *, raw: bool = False) -> str:
        step = self.scenario.steps[self.index]
        if not isinstance(step.response, PendingResponse):
            return _pretty(step.response, step.request, raw=raw)
        later = self._answered_at(step)
        if later is None:
            return f"(still waiting: {step.response.waiting_for})"
        if later == step.index:
            return _pretty(step.response, step.request, raw=raw)
        return f"(held back; answered at step {later + 1})\n" + _pretty(step.response, step.request, raw=raw)

    def _answered_at(self, step: Any) -> int | None:
        return next((s.index for s in self.scenario.steps if step.index in s.answered), None)

    def answered_here(self) -> list[str]:
        """Earlier requests whose waiting answer this step completed."""
        step = self.scenario.steps[self.index]
        return [f"step {i + 1} ({self.scenario.steps[i].label})" for i in step.answered if i != step.index]

    def _timers(self, index: int) -> tuple[list[str], list[str]]:
        """(timers that fired, timers newly set) during step `index`, from the observed soft state."""
        steps = self.scenario.steps
        now = steps[index].observed.get("timers") if steps[index].observed else None
        if now is None or index == 0:
            return [], []
        before = steps[index - 1].observed.get("timers", {})
        fired = [n for n, due in before.items() if n not in now and due <= steps[index].time_ms]
        return fired, [n for n in now if n not in before]

    def summary(self, index: int | None = None) -> str:
        """One line saying what step `index` did (plain text)."""
        i = self.index if index is None else index
        step = self.scenario.steps[i]
        names = self.names
        changes = self.changes(i)
        several = len({g for (g, _m, _f), *_ in changes}) > 1
        phrases = describe_changes(changes, names, several_groups=several)
        parts: list[str] = []
        if step.fault is not None and step.request is not None:
            parts.append(f"⚡ fault: {step.fault}")
        if step.request is not None:
            topics = topic_names(self.scenario.coordinator.cluster)
            head = describe_request(step.request, names, topics)
            answer = self.scenario.response_of(i)
            if isinstance(step.response, PendingResponse) and self._answered_at(step) != i:
                later = self._answered_at(step)
                head += " → held back" + (f" (answered at step {later + 1})" if later is not None
                                          else f" (waiting: {step.response.waiting_for})")
            elif answer is not None:
                head += " → " + describe_response(answer, step.request, names, topics)
            parts.append(head)
        else:
            moved = step.time_ms - (self.scenario.steps[i - 1].time_ms if i else step.time_ms)
            what = f"⚡ {step.label}" if step.fault is not None else step.label
            parts.append(f"no request: {what}" + (f"; the clock moved {moved} ms" if moved else ""))
        fired, _new = self._timers(i)
        if fired:
            parts.append(f"timer{'s' if len(fired) > 1 else ''} fired: {_list(fired, 4)}")
        answered = [j for j in step.answered if j != i]
        if answered:
            parts.append("completed the waiting answer" + ("s" if len(answered) > 1 else "") + " of step"
                         + ("s " if len(answered) > 1 else " ") + ", ".join(str(j + 1) for j in answered))
        if phrases:
            more = f", … and {len(phrases) - SUMMARY_CHANGES} more" if len(phrases) > SUMMARY_CHANGES else ""
            parts.append("changed: " + ", ".join(phrases[:SUMMARY_CHANGES]) + more)
        elif step.request is not None:
            parts.append("no change to the groups")
        n = len(self.scenario.entries(i))
        parts.append(f"{n} record{'s' if n != 1 else ''} written" if n else "nothing written")
        return "; ".join(parts) + "."

    def refresh(self) -> None:
        self.prev.disabled = self.index == 0
        self.next.disabled = self.index == len(self.scenario) - 1
        self.out.value = self.to_html()

    # html -----------------------------------------------------------------------------
    def _changes_html(self, changes: list) -> str:
        if not changes:
            return "<p><i>no change to the groups' state since the previous step</i></p>"
        names = self.names
        rows = []
        for (g, m, f), old, new in changes:
            member = "" if not m else html.escape(short_id(m, names))
            title = "" if not m else f" title='{html.escape(m)}'"
            if isinstance(old, tuple) or isinstance(new, tuple):
                added = [i for i in (new or ()) if i not in (old or ())]
                removed = [i for i in (old or ()) if i not in (new or ())]
                delta = " ".join(([f"+{', '.join(added)}"] if added else [])
                                 + ([f"−{', '.join(removed)}"] if removed else []))
                after = html.escape(_fmt(new)) + (f" <small>({html.escape(delta)})</small>" if delta else "")
            else:
                after = html.escape(_fmt(new))
            rows.append(f"<tr><td>{html.escape(g)}</td><td{title}>{member}</td><td>{html.escape(f)}</td>"
                        f"<td style='{_WRAP}'>{html.escape(_fmt(old))}</td>"
                        f"<td style='background:{_CHANGED};{_WRAP}'><b>{after}</b></td></tr>")
        before = f"after step {self.index}" if self.index else "before step 1"
        head = (f"<tr><th>group</th><th>member</th><th>field</th><th>{before}</th>"
                f"<th>after step {self.index + 1}</th></tr>")
        return scroll_x(f"<table class='kgroup-step-changes'>{head}{''.join(rows)}</table>")

    def _records_html(self) -> str:
        entries = self.scenario.entries(self.index)
        if not entries:
            return "<p><i>nothing written</i></p>"
        rows = []
        for e in entries:
            r = log_row(e)
            if r["type"] == "GroupMetadata" and e.record is not None:
                doc = e.record.to_json()["value"]
                if doc is not None:  # kafka-dump-log --offsets-decoder shows the members' bytes decoded
                    r["value"] = json.dumps({**doc, "data": expand_group_metadata(doc["data"])},
                                            separators=(",", ":"))
            rows.append(r)
        return records_html(rows, ["partition", "offset", "type", "key", "value"])

    def _entity_html(self, what: str, text: str, raw: str, style: str = "", note: str = "") -> str:
        first = text.split("\n", 1)[0] + note
        pre = f"<pre style='{_SCROLL};margin:0.2em 0;{style}'>"
        raw_part = "" if raw == text else (f"<details style='margin-left:1em'><summary>raw bytes (base64)</summary>"
                                           f"{pre}{html.escape(raw)}</pre></details>")
        return (f"<details><summary><b>{what}</b>: {html.escape(first)}</summary>"
                f"{pre}{html.escape(text)}</pre>{raw_part}</details>")

    def to_html(self) -> str:
        step = self.scenario.steps[self.index]
        answer = self.scenario.response_of(self.index)
        error = answer is not None and _has_error(to_data(answer))
        response_style = f"color:{ERROR}" if error else ""
        state = self.state()
        answered = self.answered_here()
        changes = self.changes()
        summary_colour = ERROR if error or step.fault is not None else "#4c78a8"
        parts = [
            # inline-size containment: the widget's flex box sizes to the output area, not to the widest
            # table, so the summary wraps in view and each wide table scrolls in its own box
            "<div class='kgroup-stepper-step' style='contain:inline-size;max-width:100%'>",
            f"<h4>Step {step.index + 1}/{len(self.scenario)}: {html.escape(step.label)} "
            f"<small>(t={step.time_ms} ms, log positions {step.start_position}–{step.end_position})</small></h4>",
            f"<p class='kgroup-step-summary' style='border-left:4px solid {summary_colour};padding-left:0.5em'>"
            f"{html.escape(self.summary())}</p>",
            f"<b>changed in this step</b>{self._changes_html(changes)}",
        ]
        if step.request is not None:
            parts.append(self._entity_html("request", _pretty(step.request), _pretty(step.request, raw=True)))
            codes = _errors(to_data(answer)) if answer is not None else []
            parts.append(self._entity_html("response", self._response_text(), self._response_text(raw=True),
                                           response_style, f" — {', '.join(codes)}" if codes else ""))
        else:
            parts.append("<p><i>no request in this step (the clock, a timer or the cluster moved)</i></p>")
        parts += [
            (f"<p><b>this step completed the waiting answers of</b> {html.escape(', '.join(answered))}</p>"
             if answered else ""),
            "<b>records written</b>", self._records_html(),
            "<b>groups</b>", _table(state["groups"]),
            *(["<b>members (live, incl. soft state)</b>", _table(state["members"])] if len(state["members"]) else []),
            "<b>committed offsets</b>", _table(state["offsets"]),
            "</div>",
        ]
        return "".join(parts)

    def _repr_mimebundle_(self, **kw):
        return mimebundle(self.widget, f"<div class='kgroup-stepper'>{self.to_html()}</div>", **kw)


def _table(df: pd.DataFrame) -> str:
    return table_html(df) if len(df) else "<p>none</p>"


__all__ = ["STREAMS_STATUS", "SUMMARY_CHANGES", "Stepper", "describe_changes", "describe_request", "describe_response",
           "diff", "group_view", "short_id", "topic_names"]
