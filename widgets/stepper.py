"""The stepper: walk a scripted scenario forwards and backwards.

Each step opens with one line saying what happened (who sent what, what it answered, what
changed: epochs, assignments, states, statuses, error codes by Kafka's names), then what changed
in the groups since the previous step (highlighted), the records written, and the state as of
the end of the step — taken with `Coordinator.as_of` (look-back), never a re-run. The full
request and response are one click away, with the consumer-protocol bytes decoded (raw kept).
"""
from __future__ import annotations

import html
import json
import re
from typing import Any

import ipywidgets as W
import pandas as pd

from kgroup.errors import ErrorCode
from kgroup.protocol import to_data
from kgroup.runtime import PendingResponse
from kgroup.scenario import Scenario
from widgets.palette import ERROR
from widgets.protocol_bytes import (assigned_partitions, decode_assignment, decode_entity, decode_subscription,
                                    expand_group_metadata, plain)
from widgets.record_log import log_row, mimebundle, records_html, scroll_x, table_html

#: how many changes the summary line names before "… and N more"
SUMMARY_CHANGES = 8
#: Streams heartbeat status codes (KIP-1071, StreamsGroupHeartbeatResponse.Status)
STREAMS_STATUS = {0: "STALE_TOPOLOGY", 1: "MISSING_SOURCE_TOPICS", 2: "INCORRECTLY_PARTITIONED_TOPICS",
                  3: "MISSING_INTERNAL_TOPICS", 4: "SHUTDOWN_APPLICATION", 5: "ASSIGNMENT_DELAYED"}
_CHANGED = "#fff3bf"   # the highlight of a value that changed in this step
_SCROLL = "overflow-x:auto;max-width:100%"   # a <pre>'s own sideways scroll
_WRAP = "overflow-wrap:anywhere"               # long member ids break rather than widen the table


def _error_name(code: Any) -> str:
    try:
        return ErrorCode(int(code)).name.upper()
    except ValueError:
        return f"UNKNOWN_ERROR_CODE_{int(code)}"


def _named(data: Any) -> Any:
    """Error codes by Kafka's names, so a reader sees GROUP_ID_NOT_FOUND, not 69."""
    if isinstance(data, dict):
        return {k: (f"{_error_name(v)} ({v})" if k == "error_code" and isinstance(v, int) else _named(v))
                for k, v in data.items()}
    if isinstance(data, list):
        return [_named(v) for v in data]
    return data


def _errors(data: Any) -> list[str]:
    """The names of every non-zero error code in `data`, each once, in the order met."""
    found: list[str] = []

    def walk(d: Any) -> None:
        if isinstance(d, dict):
            for k, v in d.items():
                if k == "error_code" and isinstance(v, int) and v != 0:
                    name = _error_name(v)
                    if name not in found:
                        found.append(name)
                else:
                    walk(v)
        elif isinstance(d, list):
            for v in d:
                walk(v)
    walk(data)
    return found


def _has_error(data: Any) -> bool:
    return bool(_errors(data))


def _title(entity: Any) -> str:
    return f"{type(entity).__name__} v{getattr(type(entity), '__version__', '')}"


def _json(data: Any, indent: str = "", width: int = 88) -> str:
    """Indented JSON that keeps a short list or object on one line (partition lists stay readable)."""
    flat = json.dumps(data, default=str, ensure_ascii=False)
    if not isinstance(data, (dict, list)) or len(flat) + len(indent) <= width or not data:
        return flat
    inner = indent + "  "
    if isinstance(data, dict):
        items = [f"{inner}{json.dumps(k)}: {_json(v, inner, width)}" for k, v in data.items()]
        return "{\n" + ",\n".join(items) + f"\n{indent}}}"
    items = [inner + _json(v, inner, width) for v in data]
    return "[\n" + ",\n".join(items) + f"\n{indent}]"


def _pretty(entity: Any, request: Any = None, *, raw: bool = False) -> str:
    """The entity as indented JSON: decoded embedded bytes, or base64 with `raw=True`."""
    if entity is None:
        return "—"
    if isinstance(entity, PendingResponse):
        if not entity.done:
            return f"(waiting: {entity.waiting_for})"
        entity = entity.response
    data = to_data(entity)
    if not raw:
        data = decode_entity(data, type(entity).__name__, request)
    return f"{_title(entity)}\n" + _json(_named(plain(data)))


def short_id(member_id: str | None, names: dict[str, str] | None = None) -> str:
    """A member id for a sentence: the notebook's name for it, or its first 10 characters."""
    if member_id is None:
        return "—"
    if names and member_id in names:
        return names[member_id]
    return member_id if len(member_id) <= 16 else member_id[:10] + "…"


def _list(items: Any, limit: int = 6) -> str:
    items = list(items)
    more = f", … (+{len(items) - limit})" if len(items) > limit else ""
    return ", ".join(str(i) for i in items[:limit]) + more


# --- the groups' state as of a step, flattened for a diff -------------------------------------

#: the field saying a member is in the group (its appearing or going is a join or a leave)
_PRESENT = "member"
_TASKS = re.compile(r"(active|standby|warm-up)=\[([^\]]*)\]")


def _items(value: Any, topics: dict[str, str] | None = None) -> tuple[str, ...] | None:
    """An assignment as sorted items ("orders-0", "0_1 (standby)"), from the shapes the groups'
    `describe_members` use (dict topic -> partitions, or KIP-1071's task notation)."""
    if isinstance(value, dict):
        return tuple(sorted(f"{(topics or {}).get(str(t), t)}-{p}" for t, ps in value.items() for p in ps))
    if isinstance(value, str):
        out = []
        for role, tasks in _TASKS.findall(value):
            for t in filter(None, (x.strip() for x in tasks.split(","))):
                out.append(t if role == "active" else f"{t} ({role})")
        return tuple(sorted(out))
    if isinstance(value, (list, tuple)):
        return tuple(sorted(str(v) for v in value))
    return None


def group_view(coordinator: Any, observed: dict | None = None) -> dict[tuple[str, str, str], Any]:
    """The groups of `coordinator` (a look-back snapshot) as {(group, member or "", field): value};
    `observed` (a scenario step's soft state) gives the live group states and members."""
    observed = observed or {}
    topics = topic_names(coordinator.cluster)
    live_state = {g["group"]: g["state"] for g in observed.get("groups", [])}
    live_members: dict[str, list[dict]] = {}
    for row in observed.get("members", []):
        live_members.setdefault(row["group"], []).append(row)
    out: dict[tuple[str, str, str], Any] = {}
    for gid in sorted(set(coordinator.groups) | set(live_state)):
        g = coordinator.groups.get(gid)
        classic = g is not None and hasattr(g, "generation_id")
        if g is not None:
            out[(gid, "", "type")] = str(g.type)
        out[(gid, "", "state")] = live_state.get(gid, g.state if g is not None else None)
        if g is not None:
            out[(gid, "", "generation" if classic else "group epoch")] = g.epoch
            for attr, label in (("assignment_epoch", "assignment epoch"), ("topology_epoch", "topology epoch")):
                if hasattr(g, attr):
                    out[(gid, "", label)] = getattr(g, attr)
            if classic:
                out[(gid, "", "leader")] = g.leader_id
                out[(gid, "", "protocol")] = g.protocol_name
        rows = live_members.get(gid, []) if observed else (g.describe_members() if g is not None else [])
        for row in rows:
            mid = row["member_id"]
            out[(gid, mid, _PRESENT)] = True
            if "member_epoch" in row:
                out[(gid, mid, "epoch")] = row["member_epoch"]
            for field in ("state", "topology_epoch"):
                if field in row:
                    out[(gid, mid, field.replace("_", " "))] = row[field]
            for field in ("assigned", "pending_revocation"):
                if field in row:
                    out[(gid, mid, field.replace("_", " "))] = _items(row[field], topics)
            if "awaiting_join" in row:  # a classic member: its soft state and its assignment as persisted
                waiting = "JoinGroup" if row["awaiting_join"] else "SyncGroup" if row["awaiting_sync"] else None
                if waiting:
                    out[(gid, mid, "waiting for")] = f"{waiting} answer"
            if classic and mid in g.members and g.protocol_type == "consumer":
                out[(gid, mid, "assigned")] = tuple(sorted(assigned_partitions(g.members[mid].assignment)))
    for row in coordinator.offsets_table():
        out[(row["group"], "", f"offset {row['topic']}-{row['partition']}")] = row["offset"]
    return out


def diff(before: dict, after: dict) -> list[tuple[tuple[str, str, str], Any, Any]]:
    """(key, old, new) for every field that differs, in `after`'s order then the removed ones."""
    keys = list(after) + [k for k in before if k not in after]
    return [(k, before.get(k), after.get(k)) for k in keys if before.get(k) != after.get(k)]


def _fmt(value: Any) -> str:
    if value is None:
        return "—"
    if value is True:  # the _PRESENT field
        return "in the group"
    if isinstance(value, tuple):
        return "[" + ", ".join(value) + "]"
    return str(value)


def describe_changes(changes: list, names: dict[str, str] | None = None, *, several_groups: bool = False) -> list[str]:
    """The changes as short phrases: "group epoch 1→2", "A epoch 1→2", "A +orders-0 −orders-1"."""
    joined = {(g, m) for (g, m, f), old, new in changes if f == _PRESENT and new}
    left = {(g, m) for (g, m, f), old, new in changes if f == _PRESENT and old}
    created = {g for (g, m, f), old, new in changes if not m and f == "state" and old is None}
    gone = {g for (g, m, f), old, new in changes if not m and f == "state" and new is None}
    #: a group converted between types (KIP-848/KIP-1071 migration): its fields are not comparable
    converted = {g for (g, m, f), old, new in changes if not m and f == "type" and old and new}
    phrases: list[str] = []
    seen_members: set = set()
    for (g, m, f), old, new in changes:
        where = f"{g}: " if several_groups else ""
        who = where + short_id(m, names) if m else ""
        if m and (g, m) in left | joined and (g, m) not in seen_members:
            seen_members.add((g, m))
            if (g, m) in left:
                phrases.append(f"{who} left")
            else:
                epoch = next((v for (g2, m2, f2), _o, v in changes if (g2, m2, f2) == (g, m, "epoch")), None)
                phrases.append(f"{who} joined" + (f" at epoch {epoch}" if epoch is not None else ""))
        if f == _PRESENT or (m and (g, m) in left):
            continue
        if not m and g in created and old is None and f != "state" and not f.startswith("offset "):
            continue  # a new group's first values are not changes
        if not m and g in gone and new is None and f != "state" and not f.startswith("offset "):
            continue  # nor are a deleted group's last ones
        if g in converted and (m or f not in ("type", "state")) and not f.startswith("offset "):
            continue  # a converted group's fields change names and units: the table has them
        if not m:
            if f.startswith("offset "):
                what = f"committed {g}/{f[7:]}"
                phrases.append(f"{what} {_fmt(old)}→{_fmt(new)}" if new is not None
                               else f"{what} deleted (was {old})")
            elif f == "state" and new is None:
                phrases.append(f"group {g} gone")
            elif old is None and f == "state":
                phrases.append(f"group {g} created ({new})")
            elif f == "type":
                if old and new:
                    phrases.append(f"group {g} converted from a {old} group to a {new} group")
            elif f == "leader":
                phrases.append(f"{where}leader {short_id(old, names)}→{short_id(new, names)}")
            else:
                phrases.append(f"{where}{f} {_fmt(old)}→{_fmt(new)}")
            continue
        if f in ("assigned", "pending revocation"):
            added = [i for i in (new or ()) if i not in (old or ())]
            removed = [i for i in (old or ()) if i not in (new or ())]
            label = "" if f == "assigned" else " pending revocation"
            bits = ([f"+{_list(added)}"] if added else []) + ([f"−{_list(removed)}"] if removed else [])
            if bits:
                phrases.append(f"{who}{label} {' '.join(bits)}")
        elif f == "waiting for":
            phrases.append(f"{who} waits for its {new}" if new else f"{who} got its {old}")
        elif (g, m) in joined:
            continue  # its epoch is in the "joined" phrase; its other first values are no change
        else:
            phrases.append(f"{who} {f} {_fmt(old)}→{_fmt(new)}")
    return phrases


# --- what a request and its answer say ----------------------------------------------------------

def _get(entity: Any, name: str, default: Any = None) -> Any:
    return getattr(entity, name, default)


def topic_names(cluster: Any) -> dict[str, str]:
    """Topic id (as text) -> name, so KIP-848 assignments read as "orders-0", not a UUID."""
    try:
        return {str(t.topic_id): t.name for t in cluster.topics()}
    except AttributeError:
        return {}


def _tp_text(topics: Any, partitions_field: str = "partitions", names: dict[str, str] | None = None) -> list[str]:
    out = []
    for t in topics or []:
        name = _get(t, "name", _get(t, "topic"))
        if name is None and _get(t, "topic_id") is not None:
            name = (names or {}).get(str(t.topic_id), str(t.topic_id))
        for p in _get(t, partitions_field) or []:
            idx = _get(p, "partition_index", p)
            offset = _get(p, "committed_offset")
            out.append(f"{name}-{idx}" + (f"@{offset}" if offset is not None else ""))
    return out


def _tasks_text(tasks: Any) -> str:
    return _list(f"{_get(t, 'subtopology_id')}_{p}" for t in tasks or [] for p in _get(t, "partitions") or [])


def describe_request(req: Any, names: dict[str, str] | None = None, topics: dict[str, str] | None = None) -> str:
    """"member A (instance a) sent JoinGroup v9 to group g, protocols range on topics [orders]"."""
    api = type(req).__name__.removesuffix("Request")
    version = getattr(type(req), "__version__", "")
    member = _get(req, "member_id")
    instance = _get(req, "group_instance_id", _get(req, "instance_id"))
    epoch = _get(req, "member_epoch")
    if member is None and _get(req, "members"):  # LeaveGroup v3+: a batch of members
        who = "member" + ("s " if len(req.members) > 1 else " ") + ", ".join(
            short_id(m.member_id, names) + (f" (instance {m.group_instance_id})" if m.group_instance_id else "")
            for m in req.members)
    elif member in (None, ""):
        who = "a new member" if api == "JoinGroup" else "a client"
    else:
        who = f"member {short_id(member, names)}"
    if instance and "instance" not in who:
        who += f" (instance {instance})"
    group = _get(req, "group_id")
    if group is None and _get(req, "groups"):
        group = ", ".join(g.group_id for g in req.groups)
    several = _get(req, "group_id") is None and len(_get(req, "groups") or []) > 1
    text = f"{who} sent {api} v{version}" + (f" to group{'s' if several else ''} {group}" if group else "")
    detail: list[str] = []
    if api == "JoinGroup":
        for p in req.protocols or []:
            topics = decode_subscription(p.metadata, p.name) if req.protocol_type == "consumer" else None
            if isinstance(topics, dict) and "topics" in topics:
                user = topics.get("userData")
                extra = ""
                if isinstance(user, dict) and "SubscriptionInfo" in user:
                    info = user["SubscriptionInfo"]
                    extra = f", active [{_list(info['activeTasks'])}], standby [{_list(info['standbyTaskOffsetSums'])}]"
                detail.append(f"{p.name} on topics [{_list(topics['topics'])}]{extra}")
            else:
                detail.append(p.name)
        detail = ["protocols " + "; ".join(detail)] if detail else []
        if _get(req, "reason"):
            detail.append(f"reason “{req.reason}”")
    elif api == "SyncGroup":
        if req.assignments:
            detail.append(f"generation {req.generation_id}, as leader with the assignments of "
                          f"{len(req.assignments)} member{'s' if len(req.assignments) != 1 else ''}")
        else:
            detail.append(f"generation {req.generation_id}")
    elif api == "Heartbeat":
        detail.append(f"generation {req.generation_id}")
    elif epoch is not None:  # KIP-848 / KIP-932 / KIP-1071 heartbeats
        detail.append({-1: "leaving (epoch -1)", -2: "leaving for now, keeping its instance (epoch -2)",
                       0: "joining (epoch 0)"}.get(epoch, f"at epoch {epoch}"))
        subscribed = _get(req, "subscribed_topic_names")
        if subscribed is not None:
            detail.append(f"subscribed to [{_list(subscribed)}]")
        if _get(req, "topology") is not None:
            detail.append(f"topology epoch {req.topology.epoch}")
        if _get(req, "active_tasks") is not None:
            detail.append(f"owning active [{_tasks_text(req.active_tasks)}]")
        if _get(req, "topic_partitions") is not None:
            detail.append(f"owning [{_list(_tp_text(req.topic_partitions, names=topics))}]")
    elif api == "OffsetCommit":
        gen = _get(req, "generation_id_or_member_epoch", _get(req, "generation_id"))
        at = f" at generation/epoch {gen}" if gen not in (None, -1) else ""
        detail.append(f"committing {_list(_tp_text(req.topics))}{at}")
    elif api in ("OffsetDelete", "OffsetFetch", "TxnOffsetCommit") and _get(req, "topics"):
        verb = {"OffsetDelete": "deleting", "OffsetFetch": "fetching", "TxnOffsetCommit": "committing"}[api]
        detail.append(f"{verb} " + _list(_tp_text(req.topics, "partitions" if api != "OffsetFetch"
                                                  else "partition_indexes")))
    return text + (", " + ", ".join(detail) if detail else "")


def describe_response(resp: Any, req: Any = None, names: dict[str, str] | None = None,
                      topics: dict[str, str] | None = None) -> str:
    """What the answer said: error codes by name, epochs, generations, assignments, statuses."""
    data = to_data(resp)
    top = _get(resp, "error_code")
    top_name = _error_name(top) if top is not None and int(top) != 0 else None
    nested = [e for e in _errors(data) if e != top_name]
    bits: list[str] = []
    if top_name:
        bits.append(top_name)
        if top_name == "MEMBER_ID_REQUIRED" and _get(resp, "member_id"):
            bits.append(f"rejoin as {short_id(resp.member_id, names)}")
    api = type(resp).__name__.removesuffix("Response")
    if not top_name:
        if api == "JoinGroup":
            bits.append(f"generation {resp.generation_id}, protocol {resp.protocol_name}"
                        + (f", leader {short_id(resp.leader, names)}" if resp.leader else ""))
            if resp.members:
                n = len(resp.members)
                bits.append(f"the leader gets the subscriptions of {n} member{'s' if n != 1 else ''}")
            if req is not None and _get(req, "member_id") != resp.member_id:
                bits.append(f"member id {short_id(resp.member_id, names)}")
        elif api == "SyncGroup":
            decoded = decode_assignment(resp.assignment, _get(resp, "protocol_name", _get(req, "protocol_name")))
            parts = [f"{tp['topic']}-{p}" for tp in decoded.get("assignedPartitions", []) for p in tp["partitions"]] \
                if isinstance(decoded, dict) else []
            bits.append(f"assigned [{_list(parts)}]")
            user = decoded.get("userData") if isinstance(decoded, dict) else None
            if isinstance(user, dict) and "AssignmentInfo" in user:
                info = user["AssignmentInfo"]
                bits.append(f"tasks active [{_list(info['activeTasks'])}], standby [{_list(info['standbyTasks'])}]")
        elif _get(resp, "member_epoch") is not None:
            bits.append(f"epoch {resp.member_epoch}")
            assignment = _get(resp, "assignment")
            if assignment is not None and _get(assignment, "topic_partitions") is not None:
                bits.append(f"assigned [{_list(_tp_text(assignment.topic_partitions, names=topics))}]"
                            if assignment.topic_partitions else "assigned nothing")
            if _get(resp, "active_tasks") is not None:
                tasks = f"active [{_tasks_text(resp.active_tasks)}]"
                for role in ("standby", "warmup"):
                    if _get(resp, f"{role}_tasks"):
                        tasks += f", {role.replace('warmup', 'warm-up')} [{_tasks_text(_get(resp, f'{role}_tasks'))}]"
                bits.append(tasks)
        elif not nested:
            bits.append("NONE (no error)")
    for s in _get(resp, "status") or []:
        bits.append(f"status {STREAMS_STATUS.get(s.status_code, s.status_code)} ({s.status_detail})")
    if nested:
        bits.append("errors " + ", ".join(nested))
    message = _get(resp, "error_message")
    if message and top_name:
        bits.append(f"“{message}”")
    return ", ".join(bits)


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
