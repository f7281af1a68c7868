"""The reconciliation widget: a KIP-848 group heartbeat by heartbeat.

At each step (one `ConsumerGroupHeartbeat`, or records the coordinator's timers wrote) it shows
the group epoch and assignment epoch, and per member its member epoch, its reconciliation
state (stable / unrevoked / unreleased), what it owns against its target (a grid
topic-partition × member: owned, target only, revoking), and the records that step wrote.

    sim = Simulation(coordinator)
    recorder = ReconciliationRecorder(sim, "g")     # before the simulation runs
    ... sim.run(...) ...
    view = ReconciliationView(recorder)             # view.next.click(), view.slider.value = 7
    view                                            # widget in JupyterLab, static HTML headless

The coordinator's side is read from the live group right after each exchange (everything it
shows is what the records persist); the client's side (what the process owns, its own idea of
its epoch and state) from the simulated consumers. Steps are recorded, never re-run.
"""
from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import ipywidgets as W
import pandas as pd

from kgroup.errors import ErrorCode
from kgroup.protocol import ms
from widgets.charts import ASSIGNMENT_STATES, assignment_grid_chart
from widgets.palette import ERROR, STALE
from widgets.record_log import log_row
from widgets.tables import mimebundle, records_html, scroll_x, table_html

TP = tuple[str, int]
#: a member state as the coordinator names it -> the grid's word for it
SERVER_STATE_WORDS = {"stable": "stable", "unrevoked_partitions": "unrevoked", "unreleased_partitions": "unreleased",
                      "unknown": "unknown"}


@dataclass(frozen=True)
class MemberView:
    """One member at one step: the process's view and the coordinator's."""

    name: str
    member_id: str | None
    instance_id: str | None
    protocol: str                 # "consumer" (KIP-848) or "classic"
    running: bool
    client_state: str | None      # the process's state (None: not one of the simulated processes)
    client_epoch: int | None      # the epoch (generation) the process holds
    member_epoch: int | None      # the coordinator's member epoch (None: not a member)
    server_state: str | None      # stable / unrevoked / unreleased
    owned: frozenset              # what the process owns now
    assigned: frozenset           # the coordinator: current assignment
    revoking: frozenset           # the coordinator: pending revocation
    target: frozenset             # the coordinator: target assignment

    def cell(self, tp: TP) -> str | None:
        """The grid's colour for one partition: owned, revoking, target only (or nothing)."""
        if tp in self.revoking or (tp in self.assigned and tp not in self.target):
            return "revoking"
        if tp in self.assigned:
            return "owned"
        if tp in self.target:
            return "target only"
        return None


@dataclass(frozen=True)
class ReconciliationSnapshot:
    """The group right after one exchange (`kind` "heartbeat") or a timer's writes ("timer")."""

    index: int
    time_ms: int                  # since the simulation started
    kind: str
    consumer: str | None
    request: str
    response: str
    error: bool
    changed: bool                 # records written, an assignment in the answer, or an error
    records: tuple[dict, ...]
    group_type: str
    group_state: str
    group_epoch: int | None
    assignment_epoch: int | None
    members: tuple[MemberView, ...]
    partitions: tuple[TP, ...]
    #: the fault that hit this step (kgroup serve's failure lab), as text; None for none
    fault: str | None = None

    @property
    def label(self) -> str:
        if self.kind == "fault":
            return f"⚡ fault: {self.fault}"
        if self.kind == "timer":
            what = "the coordinator's timers fire"
        elif self.kind == "classic":
            what = f"{self.consumer} (classic protocol) talks to the coordinator"
        else:
            what = f"{self.consumer} heartbeats"
        return what if self.fault is None else f"{what} (⚡ fault: {self.fault})"


def fmt_tps(tps: Iterable[TP]) -> str:
    """`foo 0-2,5 · bar 1`: partitions by topic, runs collapsed."""
    by_topic: dict[str, list[int]] = {}
    for t, p in sorted(tps):
        by_topic.setdefault(t, []).append(p)
    parts = []
    for t, ps in by_topic.items():
        runs, start, prev = [], ps[0], ps[0]
        for p in ps[1:] + [None]:
            if p is not None and p == prev + 1:
                prev = p
                continue
            runs.append(f"{start}" if start == prev else f"{start}-{prev}")
            if p is not None:
                start = prev = p
        parts.append(f"{t} {','.join(runs)}")
    return " · ".join(parts) if parts else "—"


# ---------------------------------------------------------------------------------------
# Recording


def partition_names(cluster: Any, assignment: dict) -> frozenset:
    """{topic id: partitions} as {(topic name, partition)} (topics deleted since: left out)."""
    out = set()
    for tid, parts in assignment.items():
        try:
            name = cluster.topic_name(tid)
        except KeyError:
            continue
        out |= {(name, p) for p in parts}
    return frozenset(out)


def wire_partitions(cluster: Any, topic_partitions: Any) -> frozenset:
    """A heartbeat's topic partitions as sent on the wire (by topic id) as {(topic name, partition)}."""
    return partition_names(cluster, {tp.topic_id: tp.partitions for tp in topic_partitions})


def heartbeat_words(cluster: Any, req: Any, resp: Any) -> tuple[str, str, bool]:
    """What a ConsumerGroupHeartbeat said and got, in the reconciliation widget's words:
    (what it sent, the answer, whether the answer is an error)."""
    parts = [f"epoch {req.member_epoch}"]
    if ms(req.rebalance_timeout) != -1:
        parts.append(f"rebalance timeout {ms(req.rebalance_timeout)} ms")
    if req.subscribed_topic_names is not None:
        parts.append("topics [" + ", ".join(req.subscribed_topic_names) + "]")
    if getattr(req, "subscribed_topic_regex", None) is not None:
        parts.append(f"regex {req.subscribed_topic_regex!r}")
    if req.server_assignor is not None:
        parts.append(f"assignor {req.server_assignor}")
    if req.topic_partitions is not None:
        parts.append("owns " + fmt_tps(wire_partitions(cluster, req.topic_partitions)))
    if resp is None:
        return ", ".join(parts), "(no answer recorded)", False
    if resp.error_code != ErrorCode.none:
        return ", ".join(parts), ErrorCode(resp.error_code).name.upper(), True
    answer = f"epoch {resp.member_epoch}"
    if resp.assignment is not None:
        answer += ", assignment " + fmt_tps(wire_partitions(cluster, resp.assignment.topic_partitions))
    return ", ".join(parts), answer, False


class ReconciliationRecorder:
    """Snapshots of group `group_id` after every heartbeat exchange and timer write of `sim`
    (a `kgroup.clients.Simulation`); attach it before running the simulation."""

    def __init__(self, sim: Any, group_id: str) -> None:
        self.sim = sim
        self.group_id = group_id
        self.snapshots: list[ReconciliationSnapshot] = []
        sim.observe(self._capture)

    def __len__(self) -> int:
        return len(self.snapshots)

    def _names(self, assignment: Any) -> frozenset:
        return partition_names(self.sim.c.cluster, assignment)

    def _describe(self, exchange: Any) -> tuple[str, str, bool, bool]:
        if exchange.kind != "heartbeat":
            return "—", "—", False, exchange.end_position > exchange.start_position
        req, resp = exchange.request, exchange.response
        request, answer, error = heartbeat_words(self.sim.c.cluster, req, resp)
        changed = error or resp.assignment is not None or exchange.end_position > exchange.start_position
        return request, answer, error, changed

    def _capture(self, exchange: Any) -> None:
        sim, gid = self.sim, self.group_id
        c = sim.c
        group = c.groups.get(gid)
        request, response, error, changed = self._describe(exchange)
        records = tuple(row for row in (log_row(c.log.entry_at(i))
                                        for i in range(exchange.start_position, exchange.end_position))
                        if row["group"] == gid)
        if exchange.kind == "timer" and not records:
            return   # timers of other groups
        members = getattr(group, "members", {}) if group is not None else {}
        consumer_group = group is not None and hasattr(group, "assignment_epoch")
        target = getattr(group, "target_assignment", {}) if consumer_group else {}
        views: list[MemberView] = []
        used: set[str] = set()
        clients = [k for k in sim.consumers if k.config.group_id == gid]
        for k in clients:
            instance = getattr(k.config, "group_instance_id", None)
            m = members.get(k.member_id) if k.member_id else None
            if m is None and instance is not None and consumer_group:
                m = group.static_member(instance)
            if m is not None and consumer_group and m.member_id not in used:
                used.add(m.member_id)
                views.append(self._view(k, m, target))
            else:
                views.append(self._view(k, None, target))
        if consumer_group:
            for mid, m in members.items():
                if mid not in used:
                    views.append(self._view(None, m, target))
        partitions = tuple(sim.partitions())
        extra = {tp for v in views for tp in v.owned | v.assigned | v.target | v.revoking} - set(partitions)
        self.snapshots.append(ReconciliationSnapshot(
            index=len(self.snapshots), time_ms=exchange.time - sim.start, kind=exchange.kind,
            consumer=exchange.consumer, request=request, response=response, error=error, changed=changed,
            records=records, group_type=type(group).__name__ if group is not None else "—",
            group_state=group.state if group is not None else "—",
            group_epoch=group.group_epoch if consumer_group else getattr(group, "generation_id", None),
            assignment_epoch=group.assignment_epoch if consumer_group else None,
            members=tuple(views), partitions=tuple(sorted(set(partitions) | extra))))

    def _view(self, k: Any, m: Any, target: dict) -> MemberView:
        protocol = "classic"
        if m is not None:
            protocol = "classic" if m.uses_classic_protocol else "consumer"
        elif k is not None:
            protocol = getattr(k, "protocol", "classic")
        name = k.name if k is not None else (m.instance_id or f"{m.member_id[:8]}…")
        return MemberView(
            name=name, member_id=(m.member_id if m is not None else (k.member_id or None)),
            instance_id=(m.instance_id if m is not None else getattr(k.config, "group_instance_id", None)),
            protocol=protocol, running=bool(k is not None and k.running),
            client_state=str(k.state) if k is not None else None,
            client_epoch=k.generation if k is not None else None,
            member_epoch=m.member_epoch if m is not None else None,
            server_state=SERVER_STATE_WORDS.get(m.state.label, m.state.label) if m is not None else None,
            owned=frozenset(k.owned) if k is not None and k.running else frozenset(),
            assigned=self._names(m.assigned_partitions) if m is not None else frozenset(),
            revoking=self._names(m.partitions_pending_revocation) if m is not None else frozenset(),
            target=self._names(target.get(m.member_id, {})) if m is not None else frozenset())


# ---------------------------------------------------------------------------------------
# The view

class ReconciliationView:
    """Step through recorded snapshots: `view.next.click()`, `view.prev.click()`,
    `view.slider.value = i`, `view.changes_only.value = True` (skip keep-alive heartbeats).

    Given a `ReconciliationRecorder`, `next` at the last step runs the simulation on until
    the next heartbeat (at most `live_step_ms`); given a list of snapshots it only replays.
    Above `max_cells` grid cells it shows per-member counts instead of the grid."""

    def __init__(self, source: ReconciliationRecorder | Sequence[ReconciliationSnapshot], *,
                 changes_only: bool = False, live_step_ms: int = 60_000, max_cells: int = 800) -> None:
        self.recorder = source if isinstance(source, ReconciliationRecorder) else None
        self._snapshots = None if self.recorder is not None else list(source)
        self.live_step_ms = live_step_ms
        self.max_cells = max_cells
        if not self.snapshots and self.recorder is None:
            raise ValueError("no snapshots to show")
        self.prev = W.Button(description="◀ prev")
        self.next = W.Button(description="next ▶")
        # the value is the step's index; the readout beside it counts from 1, as the title does ("Step 4/13")
        self.slider = W.IntSlider(min=0, max=0, value=0, description="step", readout=False)
        self.readout = W.Label()
        # not indented, sized to its text: the default 300 px cuts this description off
        self.changes_only = W.Checkbox(value=changes_only, description="only heartbeats that changed something",
                                       indent=False, layout=W.Layout(width="auto"))
        self.out = W.HTML()
        self.prev.on_click(lambda _b: self.go(self.slider.value - 1))
        self.next.on_click(lambda _b: self._next())
        self.slider.observe(lambda _c: self.refresh(), names="value")
        self.changes_only.observe(lambda _c: self._refilter(), names="value")
        self.widget = W.VBox([W.HBox([self.prev, self.slider, self.readout, self.next]), self.changes_only, self.out])
        self._refilter()

    # -- steps -----------------------------------------------------------------------------
    @property
    def snapshots(self) -> list[ReconciliationSnapshot]:
        return self.recorder.snapshots if self.recorder is not None else self._snapshots

    def steps(self) -> list[ReconciliationSnapshot]:
        """The snapshots shown (all, or only those that changed something)."""
        return [s for s in self.snapshots if s.changed or not self.changes_only.value]

    @property
    def index(self) -> int:
        return self.slider.value

    @property
    def current(self) -> ReconciliationSnapshot | None:
        steps = self.steps()
        return steps[self.index] if steps else None

    def go(self, index: int) -> None:
        n = len(self.steps())
        self.slider.value = max(0, min(n - 1, index))

    def _refilter(self) -> None:
        """The filter changed: keep showing the same moment (or the next step shown)."""
        keep = getattr(self, "_shown", None)
        steps = self.steps()
        self.slider.max = max(0, len(steps) - 1)
        if keep is not None and steps:
            self.slider.value = next((i for i, s in enumerate(steps) if s.index >= keep), len(steps) - 1)
        self.refresh()

    def _next(self) -> None:
        steps = self.steps()
        if self.index < len(steps) - 1:
            self.go(self.index + 1)
            return
        if self.recorder is None:
            return
        before = len(self.steps())
        sim = self.recorder.sim
        try:
            sim.run_until(lambda: len(self.steps()) > before, self.live_step_ms)
        except TimeoutError:
            pass
        steps = self.steps()
        self.slider.max = max(0, len(steps) - 1)
        self.go(len(steps) - 1)
        self.refresh()

    def refresh(self) -> None:
        n = len(self.steps())
        current = self.current
        self._shown = current.index if current is not None else None
        self.prev.disabled = self.index == 0
        self.next.disabled = self.index >= n - 1 and self.recorder is None
        self.readout.value = f"{self.index + 1}/{n}" if n else "0/0"
        self.out.value = self.to_html()

    # -- what a step shows -------------------------------------------------------------------
    def members_frame(self, snapshot: ReconciliationSnapshot | None = None) -> pd.DataFrame:
        s = snapshot or self.current
        cols = ["member", "member id", "protocol", "client state", "client epoch", "member epoch", "state",
                "owns (process)", "assigned", "revoking", "target"]
        if s is None:
            return pd.DataFrame(columns=cols)
        rows = [{"member": v.name, "member id": v.member_id or "—", "protocol": v.protocol,
                 "client state": v.client_state or "—",
                 "client epoch": v.client_epoch if v.client_epoch is not None else "—",
                 "member epoch": v.member_epoch if v.member_epoch is not None else "—",
                 "state": v.server_state or "—", "owns (process)": fmt_tps(v.owned), "assigned": fmt_tps(v.assigned),
                 "revoking": fmt_tps(v.revoking), "target": fmt_tps(v.target)} for v in s.members]
        return pd.DataFrame(rows, columns=cols)

    def grid_frame(self, snapshot: ReconciliationSnapshot | None = None) -> pd.DataFrame:
        """Long form: one row per (partition, member) with a state (owned/revoking/target only)."""
        s = snapshot or self.current
        rows = []
        if s is not None:
            for v in s.members:
                for tp in s.partitions:
                    state = v.cell(tp)
                    if state is not None or tp in v.owned:
                        rows.append({"member": v.name, "topic": tp[0], "partition": tp[1],
                                     "tp": f"{tp[0]}-{tp[1]}", "state": state or "owned by the process only",
                                     "process owns": tp in v.owned})
        return pd.DataFrame(rows, columns=["member", "topic", "partition", "tp", "state", "process owns"])

    def _step_name(self, s: ReconciliationSnapshot) -> str:
        shown = [x.index for x in self.steps()]
        return f"step {shown.index(s.index) + 1}" if s.index in shown else f"snapshot {s.index + 1}"

    def chart(self, snapshot: ReconciliationSnapshot | None = None):
        """The grid as an altair heatmap (topic-partition × member)."""
        s = snapshot or self.current
        title = (f"Current vs target assignment — {self._step_name(s)}, t={s.time_ms / 1000:.1f} s "
                 f"(group epoch {s.group_epoch}, assignment epoch {s.assignment_epoch})") if s else "no step"
        return assignment_grid_chart(self.grid_frame(s), members=[v.name for v in s.members] if s else [],
                                     partitions=[f"{t}-{p}" for t, p in s.partitions] if s else [], title=title)

    def timeline_frame(self) -> pd.DataFrame:
        """Every step shown, one row each: who heartbeated, what it sent and got, the epochs."""
        rows = [{"step": i + 1, "t (s)": s.time_ms / 1000, "what": s.label, "sent": s.request, "answer": s.response,
                 "records": len(s.records), "group epoch": s.group_epoch, "assignment epoch": s.assignment_epoch,
                 "group state": s.group_state} for i, s in enumerate(self.steps())]
        return pd.DataFrame(rows, columns=["step", "t (s)", "what", "sent", "answer", "records", "group epoch",
                                           "assignment epoch", "group state"])

    def _grid_html(self, s: ReconciliationSnapshot) -> str:
        members = s.members
        if len(members) * len(s.partitions) > self.max_cells:
            counts = self.grid_frame(s).groupby(["member", "state"]).size().unstack(fill_value=0)
            return (f"<p><i>{len(members)} members × {len(s.partitions)} partitions: too many cells to draw; "
                    f"partitions per member and state instead.</i></p>" + table_html(counts, index=True))
        def stale(v: MemberView) -> bool:   # stopped, crashed, fenced: greyed out
            return v.client_state is not None and (not v.running or v.client_state == "fenced")
        head = "".join(f"<th style='color:{STALE if stale(v) else 'inherit'}'>{html.escape(v.name)}</th>"
                       for v in members)
        body = []
        for tp in s.partitions:
            cells = []
            for v in members:
                state = v.cell(tp)
                colour = ASSIGNMENT_STATES.get(state, "transparent")
                mark = "●" if tp in v.owned else ""
                tip = f"{v.name} {tp[0]}-{tp[1]}: {state or 'not assigned'}" + (", the process owns it" if mark else "")
                cells.append(f"<td title='{html.escape(tip)}' style='background:{colour};text-align:center;"
                             f"min-width:2.2em'>{mark}</td>")
            body.append(f"<tr><th style='text-align:left'>{tp[0]}-{tp[1]}</th>{''.join(cells)}</tr>")
        legend = " ".join(f"<span style='background:{c};padding:0 .6em;margin-right:.3em'>&nbsp;</span>{k}"
                          for k, c in ASSIGNMENT_STATES.items())
        return (scroll_x(f"<table class='kgroup-grid'><tr><th></th>{head}</tr>{''.join(body)}</table>")
                + f"<p style='font-size:smaller'>{legend} &nbsp; ● the process owns it now</p>")

    def to_html(self) -> str:
        s = self.current
        if s is None:
            return "<p>no step yet</p>"
        n = len(self.steps())
        style = f"color:{ERROR}" if s.error or s.fault is not None else ""
        parts = [
            f"<h4>Step {self.index + 1}/{n}: {html.escape(s.label)} <small>(t={s.time_ms / 1000:.1f} s)</small></h4>",
            f"<p><b>group epoch</b> {s.group_epoch} · <b>assignment epoch</b> {s.assignment_epoch} · "
            f"<b>group</b> {html.escape(s.group_type)} {html.escape(s.group_state)}</p>",
        ]
        if s.kind == "heartbeat":
            parts.append(f"<p><b>sent</b> {html.escape(s.request)}<br><b style='{style}'>answer</b> "
                         f"<span style='{style}'>{html.escape(s.response)}</span></p>")
        parts += ["<b>members</b>", table_html(self.members_frame(s)),
                  "<b>current vs target assignment</b>", self._grid_html(s),
                  f"<b>records written</b> ({len(s.records)})",
                  records_html(s.records, ["offset", "type", "key", "value"]) if s.records else "<p>none</p>"]
        return "".join(parts)

    def to_text(self, snapshot: ReconciliationSnapshot | None = None) -> str:
        """A plain-text picture of a step (deterministic: for printing in headless runs)."""
        s = snapshot or self.current
        if s is None:
            return "no step yet"
        lines = [f"{self._step_name(s)}: t={s.time_ms / 1000:.1f} s, "
                 f"{s.label}; group epoch {s.group_epoch}, assignment epoch {s.assignment_epoch}, {s.group_state}"]
        if s.kind == "heartbeat":
            lines.append(f"  sent:   {s.request}")
            lines.append(f"  answer: {s.response}")
        for v in s.members:
            epoch = v.member_epoch if v.member_epoch is not None else "—"
            lines.append(f"  {v.name:<6} member epoch {epoch:>3} {(v.server_state or '—'):<10} "
                         f"assigned {fmt_tps(v.assigned):<20} target {fmt_tps(v.target):<20} "
                         f"process {v.client_state or '—'}, owns {fmt_tps(v.owned)}"
                         + (f"; revoking {fmt_tps(v.revoking)}" if v.revoking else ""))
        width = max((len(v.name) for v in s.members), default=1) + 1
        label = max((len(f"{t}-{p}") for t, p in s.partitions), default=1) + 1
        lines.append("  " + " " * label + "".join(f"{v.name:>{width}}" for v in s.members))
        marks = {"owned": "o", "revoking": "r", "target only": "t", None: "."}

        def mark(v: MemberView, tp: TP) -> str:
            m = marks[v.cell(tp)]
            if tp in v.owned:
                return m.upper() if m != "." else "*"
            return m
        for tp in s.partitions:
            row = "".join(f"{mark(v, tp):>{width}}" for v in s.members)
            lines.append(f"  {tp[0] + '-' + str(tp[1]):<{label}}{row}")
        lines.append("  (o owned, r revoking, t target only; upper case / *: the process holds it now)")
        lines += [f"  record {r['type']} {r['key']}" for r in s.records]
        return "\n".join(lines)

    def _repr_mimebundle_(self, **kw):
        return mimebundle(self.widget, self.to_html(), **kw)


__all__ = ["MemberView", "ReconciliationRecorder", "ReconciliationSnapshot", "ReconciliationView", "fmt_tps"]
