"""The stepper: walk a scripted scenario forwards and backwards.

At each step it shows the request, the response, the records written and the state as
of the end of the step — taken with `Coordinator.as_of` (look-back), never a re-run.
"""
from __future__ import annotations

import html
import json
from typing import Any

import ipywidgets as W
import pandas as pd

from kgroup.errors import ErrorCode
from kgroup.protocol import to_data
from kgroup.runtime import PendingResponse
from kgroup.scenario import Scenario
from widgets.palette import ERROR
from widgets.record_log import log_row, mimebundle


def _named(data: Any) -> Any:
    """Error codes by Kafka's names, so a reader sees GROUP_ID_NOT_FOUND, not 69."""
    if isinstance(data, dict):
        return {k: (f"{ErrorCode(v).name.upper()} ({v})" if k == "error_code" and isinstance(v, int) else _named(v))
                for k, v in data.items()}
    if isinstance(data, list):
        return [_named(v) for v in data]
    return data


def _pretty(entity: Any) -> str:
    if entity is None:
        return "—"
    if isinstance(entity, PendingResponse):
        if not entity.done:
            return f"(waiting: {entity.waiting_for})"
        entity = entity.response
    data = _named(to_data(entity))
    name = type(entity).__name__
    version = getattr(type(entity), "__version__", "")
    return f"{name} v{version}\n" + json.dumps(data, indent=1, default=str)


def _has_error(data: Any) -> bool:
    if isinstance(data, dict):
        return any((k == "error_code" and v not in (0, None)) or _has_error(v) for k, v in data.items())
    if isinstance(data, list):
        return any(_has_error(v) for v in data)
    return False


class Stepper:
    """`stepper.next.click()`, `stepper.prev.click()`, `stepper.slider.value = i`."""

    def __init__(self, scenario: Scenario) -> None:
        if not len(scenario):
            raise ValueError("the scenario has no steps yet")
        self.scenario = scenario
        self.prev = W.Button(description="◀ prev")
        self.next = W.Button(description="next ▶")
        self.slider = W.IntSlider(min=0, max=len(scenario) - 1, value=0, description="step")
        self.out = W.HTML()
        self.prev.on_click(lambda _b: self.go(self.slider.value - 1))
        self.next.on_click(lambda _b: self.go(self.slider.value + 1))
        self.slider.observe(lambda _c: self.refresh(), names="value")
        self.widget = W.VBox([W.HBox([self.prev, self.slider, self.next]), self.out])
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

    def _response_text(self) -> str:
        step = self.scenario.steps[self.index]
        if not isinstance(step.response, PendingResponse):
            return _pretty(step.response)
        later = next((s.index for s in self.scenario.steps if step.index in s.answered), None)
        if later is None:
            return f"(still waiting: {step.response.waiting_for})"
        if later == step.index:
            return _pretty(step.response)
        return f"(held back; answered at step {later + 1})\n" + _pretty(step.response)

    def answered_here(self) -> list[str]:
        """Earlier requests whose waiting answer this step completed."""
        step = self.scenario.steps[self.index]
        return [f"step {i + 1} ({self.scenario.steps[i].label})" for i in step.answered if i != step.index]

    def refresh(self) -> None:
        self.prev.disabled = self.index == 0
        self.next.disabled = self.index == len(self.scenario) - 1
        self.out.value = self.to_html()

    def to_html(self) -> str:
        step = self.scenario.steps[self.index]
        answer = self.scenario.response_of(self.index)
        response_style = f"color:{ERROR}" if answer is not None and _has_error(to_data(answer)) else ""
        state = self.state()
        answered = self.answered_here()
        parts = [
            f"<h4>Step {step.index + 1}/{len(self.scenario)}: {html.escape(step.label)} "
            f"<small>(t={step.time_ms} ms, log positions {step.start_position}–{step.end_position})</small></h4>",
            "<div style='display:flex;gap:1em'>",
            f"<pre style='flex:1'>{html.escape(_pretty(step.request))}</pre>",
            f"<pre style='flex:1;{response_style}'>{html.escape(self._response_text())}</pre></div>",
            (f"<p><b>this step completed the waiting answers of</b> {html.escape(', '.join(answered))}</p>"
             if answered else ""),
            "<b>records written</b>", self.records().to_html(index=False, escape=True),
            "<b>groups</b>", state["groups"].to_html(index=False) if len(state["groups"]) else "<p>none</p>",
            *(["<b>members (live, incl. soft state)</b>", state["members"].to_html(index=False)]
              if len(state["members"]) else []),
            "<b>committed offsets</b>", state["offsets"].to_html(index=False) if len(state["offsets"]) else "<p>none</p>",
        ]
        return "".join(parts)

    def _repr_mimebundle_(self, **kw):
        return mimebundle(self.widget, self.to_html(), **kw)
