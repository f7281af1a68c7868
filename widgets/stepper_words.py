"""The wording of a stepper step: what a request said, what its answer said, what changed.

One sentence each, error codes by Kafka's names ("member A (instance a) sent JoinGroup v9 to
group g, ..." → "generation 3, protocol range", "A +orders-0 −orders-1"), and the request and
response in full as indented JSON with the consumer-protocol bytes decoded (raw kept).
"""
from __future__ import annotations

import json
from typing import Any

from kgroup.errors import ErrorCode
from kgroup.groups.streams.configuration import Status
from kgroup.protocol import to_data
from kgroup.runtime import PendingResponse
from widgets.protocol_bytes import decode_assignment, decode_entity, decode_subscription, plain
from widgets.stepper_diff import _PRESENT, _fmt

#: Streams heartbeat status codes (KIP-1071, StreamsGroupHeartbeatResponse.Status)
STREAMS_STATUS = {s.value: s.name for s in Status}


# --- the request and its answer in full: indented JSON, error codes by name ---------------------

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


# --- what changed in the groups, in words --------------------------------------------------------

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
