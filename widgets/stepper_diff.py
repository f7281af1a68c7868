"""The stepper's diff: the groups' state as of a step, flattened, and what changed between two.

`group_view` flattens a look-back snapshot (plus a scenario step's observed soft state) into
{(group, member or "", field): value}; `diff` lists the fields that differ between two such
views, which the stepper words (`widgets.stepper_words.describe_changes`) and highlights.
"""
from __future__ import annotations

import re
from typing import Any

from widgets.protocol_bytes import assigned_partitions

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


def topic_names(cluster: Any) -> dict[str, str]:
    """Topic id (as text) -> name, so KIP-848 assignments read as "orders-0", not a UUID."""
    try:
        return {str(t.topic_id): t.name for t in cluster.topics()}
    except AttributeError:
        return {}


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
