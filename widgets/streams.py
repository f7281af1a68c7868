"""Streams-group pictures (KIP-1071): the task grid and the topology view.

- `task_frame(group)` / `task_grid_chart(rows)`: tasks × members, each cell coloured by the
  task's role on that member (active, standby, warm-up; pending revocation lighter),
  each member labelled with its topology epoch, members with a stale topology greyed out
  (palette STALE; the tooltip names the role).
- `topology_html(group)`: subtopologies with their source, repartition and changelog topics,
  partition counts as configured against the cluster, and the NOT_READY status if any.
- `StreamsStepper`: the scenario stepper with the task grid of each step (look-back, no re-run).

Above `AGGREGATE_ABOVE` cells the grid turns into per-member counts (thousands of
small cells would be unreadable and slow to draw).
"""
from __future__ import annotations

import html
from typing import Any

import altair as alt
import pandas as pd

from kgroup.errors import ErrorCode
from kgroup.scenario import Scenario
from widgets.palette import ERROR, STALE, TASK_ROLES
from widgets.stepper import Stepper
from widgets.tables import table_html

AGGREGATE_ABOVE = 4_000
#: The colour legend's entry for every task of a member whose topology epoch is stale (greyed out).
STALE_MEMBER = "stale topology epoch"
_ROLES = {"active": "active", "standby": "standby", "warmup": "warm-up"}


def _label(member: Any, names: dict[str, str] | None) -> str:
    name = (names or {}).get(member.member_id, member.member_id)
    return f"{name} (#{member.topology_epoch})"


def task_frame(group: Any, *, names: dict[str, str] | None = None, target: bool = False) -> pd.DataFrame:
    """One row per (member, task, role): the current assignment (or the target with
    `target=True`); `names` maps member ids to short labels (e.g. "A")."""
    rows = []
    topology_epoch = group.topology_epoch
    for m in group.members.values():
        sets = [(group.target_assignment.get(m.member_id), False)] if target else \
            [(m.assigned, False), (m.pending_revocation, True)]
        for tasks, revoking in sets:
            if tasks is None:
                continue
            for role, label in _ROLES.items():
                for s, ps in getattr(tasks, role).items():
                    for p in sorted(ps):
                        rows.append({"member": _label(m, names), "task": f"{s}_{p}", "role": label,
                                     "revoking": revoking, "stale": m.topology_epoch < topology_epoch,
                                     "process": m.process_id})
    return pd.DataFrame(rows, columns=["member", "task", "role", "revoking", "stale", "process"])


def _task_sort_key(task: str) -> tuple:
    s, _, p = task.rpartition("_")
    return (s, int(p)) if p.isdigit() else (s, 0)


def task_grid_chart(rows: pd.DataFrame | list[dict], *, title: str = "Tasks per member",
                    tasks: list[str] | None = None) -> alt.Chart:
    """The grid: tasks across, members down (labelled with their topology epoch)."""
    df = pd.DataFrame(rows, columns=["member", "task", "role", "revoking", "stale", "process"])
    if len(df) > AGGREGATE_ABOVE:
        counts = df.groupby(["member", "role"]).size().reset_index(name="tasks")
        return alt.Chart(counts, title=f"{title} (aggregated: {len(df)} cells)").mark_bar().encode(
            y=alt.Y("member:N", title="member (#topology epoch)"), x=alt.X("tasks:Q", title="tasks"),
            color=alt.Color("role:N", title="task role", scale=alt.Scale(domain=list(TASK_ROLES),
                                                                          range=list(TASK_ROLES.values()))))
    order = tasks or sorted(set(df["task"]), key=_task_sort_key)
    shown = df["role"].where(~df["revoking"].astype(bool), df["role"] + " (revoking)")
    # a stale member is greyed out whatever the role (the tooltip still names the role)
    df = df.assign(shown=shown.where(~df["stale"].astype(bool), STALE_MEMBER))
    domain = list(TASK_ROLES) + [f"{r} (revoking)" for r in TASK_ROLES] + [STALE_MEMBER]
    colours = list(TASK_ROLES.values()) + [_lighter(c) for c in TASK_ROLES.values()] + [STALE]
    rects = alt.Chart(df, title=title).mark_rect(stroke="#999", strokeWidth=0.5).encode(
        x=alt.X("task:N", title="task (subtopology_partition)", sort=order),
        y=alt.Y("member:N", title="member (#topology epoch)"),
        color=alt.Color("shown:N", title="task role", scale=alt.Scale(domain=domain, range=colours)),
        tooltip=["member", "task", "role", "revoking", "stale", "process"])
    return rects.properties(width=alt.Step(28), height=alt.Step(22))


def _lighter(hex_colour: str) -> str:
    r, g, b = (int(hex_colour[i:i + 2], 16) for i in (1, 3, 5))
    return "#" + "".join(f"{(v + 2 * 255) // 3:02x}" for v in (r, g, b))


def assignment_text(group: Any, *, names: dict[str, str] | None = None) -> dict[str, str]:
    """The KIP's notation per member: "A(#0)": "T1, T2" style, as `active=[0_0, 0_2]; standby=[...]`."""
    out = {}
    for m in group.members.values():
        parts = []
        for role, label in _ROLES.items():
            tasks = [f"{s}_{p}" for s, ps in sorted(getattr(m.assigned, role).items()) for p in sorted(ps)]
            if tasks or role == "active":
                parts.append(f"{label}=[{', '.join(tasks)}]")
        out[_label(m, names)] = "; ".join(parts)
    return out


def topology_html(group: Any) -> str:
    """The topology view: each subtopology's topics with partition counts, and the group's status."""
    if group.topology is None:
        return "<p>No topology yet: the first member's heartbeat initialises it.</p>"
    configured = group.configured_topology()
    epochs = ", ".join(f"{html.escape(m.member_id)} #{m.topology_epoch}" for m in group.members.values())
    head = (f"<h4>Topology of {html.escape(group.group_id)} — topology epoch {group.topology.epoch}"
            f" <small>(members: {epochs or 'none'})</small></h4>")
    status = ""
    if configured is not None and configured.status is not None:
        status = (f"<p style='color:{ERROR}'><b>NOT_READY — {configured.status.code.name}</b>: "
                  f"{html.escape(configured.status.detail)}</p>")

    def count(name: str) -> str:
        cluster = group.cluster
        return f"{name} ({cluster.partitions(name)})" if name in cluster else f"{name} <i style='color:{STALE}'>(missing)</i>"

    rows = []
    for s in group.topology.subtopologies:
        cs = configured.subtopologies.get(s.subtopology_id) if configured and configured.subtopologies else None
        sources = [count(t) for t in (cs.source_topics if cs else s.source_topics)]
        sources += [f"/{html.escape(r)}/" for r in s.source_topic_regex if not cs]
        rows.append({
            "subtopology": s.subtopology_id,
            "tasks": cs.num_tasks if cs else "?",
            "source topics": ", ".join(sources) or "—",
            "repartition source topics": ", ".join(count(t.name) for t in s.repartition_source_topics) or "—",
            "repartition sink topics": ", ".join(s.repartition_sink_topics) or "—",
            "changelog topics": ", ".join(count(t.name) for t in s.state_changelog_topics) or "— (stateless)"})
    return head + status + table_html(pd.DataFrame(rows), escape=False)


class StreamsStepper(Stepper):
    """The stepper of `widgets.stepper`, plus each step's task grid for one Streams group.

    `stepper.next.click()`, `stepper.prev.click()`, `stepper.slider.value = i`."""

    def __init__(self, scenario: Scenario, group_id: str, *, names: dict[str, str] | None = None) -> None:
        self.group_id = group_id
        self.names = names
        super().__init__(scenario)

    def group_at(self, index: int) -> Any:
        return self.scenario.state_after(index).groups.get(self.group_id)

    def grid(self, index: int | None = None) -> alt.Chart | None:
        group = self.group_at(self.index if index is None else index)
        if group is None or not hasattr(group, "topology"):
            return None
        step = self.scenario.steps[self.index if index is None else index]
        return task_grid_chart(task_frame(group, names=self.names),
                               title=f"After step {step.index + 1}: {step.label} (group epoch {group.group_epoch})")

    def to_html(self) -> str:
        out = super().to_html()
        group = self.group_at(self.index)
        if group is None or not hasattr(group, "topology"):
            return out
        lines = "".join(f"<li><code>{html.escape(k)}: {html.escape(v)}</code></li>"
                        for k, v in assignment_text(group, names=self.names).items())
        return out + f"<b>assignment (current)</b><ul>{lines}</ul>"


# ---------------------------------------------------------------------------------------
# Real Kafka Streams instances against `kgroup serve` (kgroup.oracle.streams.LiveStreams)

#: StreamsGroupHeartbeat's status codes (KIP-1071)
STATUS_NAMES = {0: "STALE_TOPOLOGY", 1: "MISSING_SOURCE_TOPICS", 2: "INCORRECTLY_PARTITIONED_TOPICS",
                3: "MISSING_INTERNAL_TOPICS", 4: "SHUTDOWN_APPLICATION", 5: "ASSIGNMENT_DELAYED",
                6: "MISSING_CLIENT_TAGS"}


def _last_step_until(scenario: Scenario, seq: int) -> int | None:
    steps = [i for i, x in enumerate(scenario.exchanges) if x.seq <= seq]
    return steps[-1] if steps else None


def live_phase_charts(live: Any, scenario: Scenario, group_id: str) -> list[alt.Chart]:
    """One task grid per phase `live.mark(...)` ended: the group right after the phase's last
    exchange (look-back), members named after their instances."""
    names = live.member_names()
    charts = []
    for label, seq in live.phases:
        i = _last_step_until(scenario, seq)
        group = scenario.state_after(i).groups.get(group_id) if i is not None else None
        if group is None or not hasattr(group, "target_assignment") or not group.members:
            continue
        charts.append(task_grid_chart(task_frame(group, names=names),
                                      title=f"{label} (group epoch {group.group_epoch})"))
    return charts


def _tasks_text(field: Any) -> str:
    if field is None:
        return "—"
    return " ".join(f"{t.subtopology_id}_{p}" for t in field for p in t.partitions) or "none"


#: the group APIs a Kafka Streams instance speaks: KIP-1071's heartbeat, and the classic protocol's
_LIVE_APIS = {88: "StreamsGroupHeartbeat", 11: "JoinGroup", 14: "SyncGroup", 12: "Heartbeat", 13: "LeaveGroup"}


def live_heartbeats(live: Any, *, changes_only: bool = True) -> pd.DataFrame:
    """The group requests the instances sent (StreamsGroupHeartbeat, and JoinGroup / SyncGroup /
    Heartbeat / LeaveGroup from instances on the classic protocol), as rows: phase, instance,
    epoch (or generation) sent and received, error, statuses by name, and the active tasks a
    StreamsGroupHeartbeat handed out (— when the answer left them out: nothing changed).
    `changes_only`: leave out answers that changed nothing."""
    names = live.member_names()
    bounds = [(seq, label) for label, seq in live.phases]
    rows = []
    for x in live.server.exchanges():
        if x.api_key not in _LIVE_APIS or x.response is None:
            continue
        phase = next((label for seq, label in bounds if x.seq <= seq), "after the last mark")
        req, resp = x.request, x.response
        instance = (x.client_id or "?").split("-StreamThread-")[0]
        row = {"phase": phase, "#": x.seq, "api": _LIVE_APIS[x.api_key], "instance": instance,
               "sent epoch": "", "epoch": "", "error": "", "status": "", "active tasks": ""}
        code = getattr(resp, "error_code", 0)
        row["error"] = ErrorCode(code).name.upper() if code else ""
        if x.api_key == 88:
            row.update({"instance": names.get(resp.member_id or req.member_id, instance),
                        "sent epoch": req.member_epoch, "epoch": resp.member_epoch,
                        "status": ", ".join(STATUS_NAMES.get(st.status_code, str(st.status_code))
                                            for st in resp.status or ()),
                        "active tasks": _tasks_text(resp.active_tasks)})
            if changes_only and not row["error"] and row["active tasks"] == "—" and not row["status"] \
                    and row["sent epoch"] == row["epoch"]:
                continue
        else:
            if changes_only and x.api_key == 12 and not row["error"]:
                continue   # a classic heartbeat that changed nothing
            row["sent epoch"] = getattr(req, "generation_id", "")
            row["epoch"] = getattr(resp, "generation_id", "")
        rows.append(row)
    return pd.DataFrame(rows)


__all__ = ["task_frame", "task_grid_chart", "assignment_text", "topology_html", "StreamsStepper", "AGGREGATE_ABOVE",
           "STALE_MEMBER", "STATUS_NAMES", "live_phase_charts", "live_heartbeats"]
