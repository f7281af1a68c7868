"""`kafka-consumer-groups.sh --list / --describe` over a coordinator: Kafka's
`ConsumerGroupCommand` tables, as pandas DataFrames and as the text it prints.

The coordinator is asked what Kafka's Admin client asks a broker: ConsumerGroupDescribe (KIP-848
groups), DescribeGroups (classic groups, their assignments read with the consumer protocol),
OffsetFetch and ListGroups; log end offsets come from the cluster (for a dump: the log dir's
replication-offset-checkpoint, else unknown and printed "-").

    c = open_dump("broker-copy/", at="2024-06-10T06:15:00Z")      # or a live Coordinator
    describe_offsets(c, ["orders-app"])                              # a DataFrame, Kafka's columns
    print(format_offsets(collect_offsets(c, ["orders-app"])))        # what the tool prints
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from kgroup.admin import Admin
from kgroup.coordinator import Coordinator
from kgroup.protocol import request
from kgroup.protocol.consumer_protocol import decode_assignment
from kgroup.errors import ErrorCode

from .common import (MISSING, Problem, cell, coordinator_text, error_line, frame, kafka_line, log_end_offset,
                     tp_hashmap_order, warn_line)

__all__ = ["GroupDescription", "MemberDescription", "describe_group", "committed_offsets", "list_groups",
           "collect_offsets", "collect_members", "collect_states", "describe_offsets", "describe_members",
           "describe_state", "format_offsets", "format_members", "format_states", "format_list",
           "parse_states", "parse_types", "CONSUMER_GROUP_STATES", "GROUP_TYPES"]

#: Kafka's GroupState names a consumer or classic group can be in (GroupState.toString()).
CONSUMER_GROUP_STATES = ("PreparingRebalance", "CompletingRebalance", "Stable", "Dead", "Empty", "Assigning",
                         "Reconciling")
#: Kafka's GroupType names (GroupType.toString()).
GROUP_TYPES = ("Consumer", "Classic", "Share", "Streams")
_REBALANCING = {"PreparingRebalance", "CompletingRebalance", "Assigning", "Reconciling"}

TP = tuple[str, int]


@dataclass
class MemberDescription:
    """Kafka's `MemberDescription` as the tool reads it."""

    consumer_id: str
    instance_id: str | None
    client_id: str
    host: str
    assignment: list[TP]
    #: KIP-848 members only (None for classic members), as Kafka's Optional fields
    member_epoch: int | None = None
    target_assignment: list[TP] | None = None


@dataclass
class GroupDescription:
    """Kafka's `ConsumerGroupDescription`: state "Dead" for a group that does not exist."""

    group_id: str
    state: str
    type: str | None
    assignor: str
    members: list[MemberDescription] = field(default_factory=list)
    group_epoch: int | None = None
    target_assignment_epoch: int | None = None


def _pairs(assignment: Any) -> list[TP]:
    return [(t.topic_name, p) for t in assignment.topic_partitions for p in t.partitions]


def describe_group(c: Coordinator, group_id: str) -> GroupDescription:
    """What Kafka's `Admin.describeConsumerGroups` gives: ConsumerGroupDescribe first, a classic
    group's DescribeGroups when the group is not a KIP-848 one."""
    r = c.handle(request("ConsumerGroupDescribe", 1, group_ids=[group_id], include_authorized_operations=False))
    g = r.groups[0]
    if g.error_code == ErrorCode.none:
        members = [MemberDescription(m.member_id, m.instance_id, m.client_id, m.client_host, _pairs(m.assignment),
                                     m.member_epoch, _pairs(m.target_assignment)) for m in g.members]
        return GroupDescription(group_id, g.group_state, "Consumer", g.assignor_name, members, g.group_epoch,
                                g.assignment_epoch)
    r = c.handle(request("DescribeGroups", 5, groups=[group_id], include_authorized_operations=False))
    g = r.groups[0]
    if g.error_code != ErrorCode.none or g.group_state in ("Dead", "") or \
            g.protocol_type not in ("consumer", ""):  # a Streams / share / connect group is no consumer group
        return GroupDescription(group_id, "Dead", None, "")
    members = []
    for m in g.members:
        tps: list[TP] = []
        if g.protocol_type == "consumer" and m.member_assignment:
            tps = list(decode_assignment(m.member_assignment)[0].partitions)
        members.append(MemberDescription(m.member_id, m.group_instance_id, m.client_id, m.client_host, tps))
    return GroupDescription(group_id, g.group_state, "Classic", g.protocol_data or "", members)


def committed_offsets(c: Coordinator, group_id: str) -> dict[TP, Any]:
    """The group's committed offsets (OffsetFetch, as `Admin.listConsumerGroupOffsets`):
    (topic, partition) -> OffsetAndMetadata; {} when the fetch fails."""
    # v9 names topics: a dump without its metadata log knows no topic ids, which v10 needs
    f = Admin(c, offset_fetch_version=9).list_consumer_group_offsets(group_id).partitions_to_offset_and_metadata(
        group_id)
    if f.is_completed_exceptionally():
        return {}
    return {(tp.topic, tp.partition): o for tp, o in f.get().items() if o is not None}


def list_groups(c: Coordinator, states: Iterable[str] = (), types: Iterable[str] = ()) -> list[dict[str, str]]:
    """Consumer groups (KIP-848 and classic with the consumer protocol or none), as Kafka's
    `listGroups(ListGroupsOptions.forConsumerGroups())`: [{group, type, state}]."""
    wanted_states = {s.lower() for s in states}
    wanted_types = {t.lower() for t in types}
    out = []
    for g in Admin(c).list_groups():
        kind = g["type"] or "classic"
        if kind not in ("classic", "consumer") or (kind == "classic" and g["protocol_type"] not in ("consumer", "")):
            continue
        if wanted_states and g["state"].lower() not in wanted_states:
            continue
        if wanted_types and kind not in wanted_types:
            continue
        out.append({"group": g["group_id"], "type": kind.capitalize(), "state": g["state"]})
    return out


def _parse(text: str, valid: Sequence[str], what: str) -> list[str]:
    names = {v.lower(): v for v in valid}
    parsed = [s.strip() for s in text.split(",") if s.strip()]
    bad = [s for s in parsed if s.lower() not in names]
    if bad:
        raise ValueError(f"Invalid {what} list '{text}'. Valid {what}s are: {', '.join(valid)}")
    return [names[s.lower()] for s in parsed]


def parse_states(text: str, valid: Sequence[str] = CONSUMER_GROUP_STATES) -> list[str]:
    """`--state stable,empty` as Kafka parses it (any case); ValueError with Kafka's words."""
    return _parse(text, valid, "state")


def parse_types(text: str) -> list[str]:
    """`--type consumer,classic` as Kafka parses it; ValueError with Kafka's words."""
    return _parse(text, GROUP_TYPES, "type")


def format_list(groups: list[dict[str, str]], *, with_type: bool, with_state: bool) -> str:
    """`--list`: the ids alone, or Kafka's GROUP [TYPE] [STATE] table when filtered."""
    if not (with_type or with_state):
        return "".join(g["group"] + "\n" for g in groups)
    width = max([15] + [len(g["group"]) for g in groups]) + 10
    widths = [width] + [20] * (with_type + with_state)
    header = ["GROUP"] + (["TYPE"] if with_type else []) + (["STATE"] if with_state else [])
    rows = [[g["group"]] + ([g["type"]] if with_type else []) + ([g["state"]] if with_state else [])
            for g in groups]
    return "".join(kafka_line(widths, r) + "\n" for r in [header] + rows)


def _state_problems(group_id: str, state: str, rows: int) -> tuple[list[Problem], bool]:
    """Kafka's shouldPrintMemberState: what it says about the group, and whether a table follows."""
    if state == "Dead":
        return [error_line(f"Consumer group '{group_id}' does not exist.")], False
    if state == "Empty":
        problems = [warn_line(f"Consumer group '{group_id}' has no active members.")]
    elif state in _REBALANCING:
        problems = [warn_line(f"Warning: Consumer group '{group_id}' is rebalancing.")]
    else:
        problems = []
    return problems, rows > 0


# ---------------------------------------------------------------------------------------------
# --describe --offsets

@dataclass
class GroupRows:
    """One group's part of a describe: what Kafka prints about it and its table rows."""

    group_id: str
    state: str
    problems: list[Problem]
    printed: bool
    rows: list[dict[str, Any]]


def _offset_rows(c: Coordinator, d: GroupDescription, committed: dict[TP, Any]) -> list[dict[str, Any]]:
    def row(tp: TP, m: MemberDescription | None) -> dict[str, Any]:
        o = committed.get(tp)
        current = None if o is None else o.offset
        end = log_end_offset(c, *tp)
        return {"GROUP": d.group_id, "TOPIC": tp[0], "PARTITION": tp[1],
                "LEADER-EPOCH": None if o is None else o.leader_epoch, "CURRENT-OFFSET": current,
                "LOG-END-OFFSET": end,
                "LAG": None if current is None or current == -1 or end is None else end - current,
                "CONSUMER-ID": MISSING if m is None else m.consumer_id, "HOST": MISSING if m is None else m.host,
                "CLIENT-ID": MISSING if m is None else m.client_id}

    rows, assigned = [], set()
    # members with the most partitions first (a stable sort, as Java's); each member's rows in the
    # order of the HashMap Kafka collects the log end offsets into
    for m in sorted((m for m in d.members if m.assignment), key=lambda m: -len(m.assignment)):
        assigned |= set(m.assignment)
        rows += [row(tp, m) for tp in tp_hashmap_order(m.assignment)]
    rows += [row(tp, None) for tp in tp_hashmap_order(tp for tp in committed if tp not in assigned)]
    return rows


def collect_offsets(c: Coordinator, group_ids: Iterable[str]) -> list[GroupRows]:
    """Kafka's collectGroupsOffsets, sorted by group id (its TreeMap)."""
    out = []
    for gid in sorted(set(group_ids)):
        d = describe_group(c, gid)
        rows = [] if d.state == "Dead" else _offset_rows(c, d, committed_offsets(c, gid))
        problems, printed = _state_problems(gid, d.state, len(rows))
        out.append(GroupRows(gid, d.state, problems, printed, rows))
    return out


_OFFSET_COLUMNS = ["GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST",
                   "CLIENT-ID"]


def _offset_columns(verbose: bool) -> list[str]:
    return _OFFSET_COLUMNS[:3] + ["LEADER-EPOCH"] + _OFFSET_COLUMNS[3:] if verbose else _OFFSET_COLUMNS


def format_offsets(groups: list[GroupRows], *, verbose: bool = False) -> tuple[str, str]:
    """(stdout, stderr) of `--describe [--offsets] [--verbose]`."""
    out, err = [], []
    columns = _offset_columns(verbose)
    for g in groups:
        for p in g.problems:
            (out if p.stream == "stdout" else err).append(p.text + "\n")
        if not g.printed:
            continue
        w = {k: max([15] + [len(cell(r[k])) for r in g.rows]) for k in ("GROUP", "TOPIC", "CONSUMER-ID", "HOST")}
        widths = [w["GROUP"], w["TOPIC"], 10] + ([15] if verbose else []) + [15, 15, 15, w["CONSUMER-ID"],
                                                                             w["HOST"], None]
        # Kafka's format starts each line with "\n" and never ends the last one
        out += ["\n" + kafka_line(widths, columns)] + ["\n" + kafka_line(widths, [r[k] for k in columns])
                                                      for r in g.rows]
        out.append("\n")
    return "".join(out), "".join(err)


# ---------------------------------------------------------------------------------------------
# --describe --members [--verbose]

def _assignment_text(tps: list[TP] | None) -> str:
    """Kafka's getAssignmentString: "topic:0,1;other:2", topics sorted; "-" when empty."""
    if not tps:
        return MISSING
    by_topic: dict[str, list[int]] = {}
    for t, p in tps:
        by_topic.setdefault(t, []).append(p)
    return ";".join(sorted(f"{t}:" + ",".join(map(str, sorted(ps))) for t, ps in by_topic.items()))


def collect_members(c: Coordinator, group_ids: Iterable[str]) -> list[GroupRows]:
    """Kafka's collectGroupsMembers, sorted by group id."""
    out = []
    for gid in sorted(set(group_ids)):
        d = describe_group(c, gid)
        rows = [{"GROUP": gid, "CONSUMER-ID": m.consumer_id, "GROUP-INSTANCE-ID": m.instance_id or "",
                 "HOST": m.host, "CLIENT-ID": m.client_id, "#PARTITIONS": len(m.assignment),
                 "CURRENT-EPOCH": m.member_epoch, "CURRENT-ASSIGNMENT": _assignment_text(m.assignment),
                 "TARGET-EPOCH": d.target_assignment_epoch if m.target_assignment is not None else None,
                 "TARGET-ASSIGNMENT": _assignment_text(m.target_assignment)}
                for m in d.members]
        problems, printed = _state_problems(gid, d.state, len(rows))
        out.append(GroupRows(gid, d.state, problems, printed, rows))
    return out


def _member_columns(rows: list[dict[str, Any]], verbose: bool) -> list[str]:
    static = any(r["GROUP-INSTANCE-ID"] for r in rows)
    cols = ["GROUP", "CONSUMER-ID"] + (["GROUP-INSTANCE-ID"] if static else []) + ["HOST", "CLIENT-ID",
                                                                                    "#PARTITIONS"]
    return cols + (["CURRENT-EPOCH", "CURRENT-ASSIGNMENT", "TARGET-EPOCH", "TARGET-ASSIGNMENT"] if verbose else [])


def format_members(groups: list[GroupRows], *, verbose: bool = False) -> tuple[str, str]:
    """(stdout, stderr) of `--describe --members [--verbose]`; GROUP-INSTANCE-ID only when a
    member is static, as Kafka prints it."""
    out, err = [], []
    for g in groups:
        for p in g.problems:
            (out if p.stream == "stdout" else err).append(p.text + "\n")
        # Kafka's printMembers prints the header even for a group it said nothing else about
        cols = _member_columns(g.rows, verbose)
        minimum = {"GROUP-INSTANCE-ID": 17, "CURRENT-ASSIGNMENT": 20}
        widths: list[int | None] = []
        for k in cols:
            if k in ("#PARTITIONS", "CURRENT-EPOCH", "TARGET-EPOCH"):
                widths.append(15)
            elif k == "TARGET-ASSIGNMENT":
                widths.append(None)
            else:
                widths.append(max([minimum.get(k, 15)] + [len(cell(r[k])) for r in g.rows]))
        if not verbose:
            widths.append(None)  # Kafka's "%-15s " leaves a trailing space after #PARTITIONS
            line = lambda vals: kafka_line(widths, list(vals) + [""])  # noqa: E731
        else:
            line = lambda vals: kafka_line(widths, vals)  # noqa: E731
        out.append("\n" + line(cols) + "\n")
        out += [line([r[k] for k in cols]) + "\n" for r in g.rows]
    return "".join(out), "".join(err)


# ---------------------------------------------------------------------------------------------
# --describe --state [--verbose]

def collect_states(c: Coordinator, group_ids: Iterable[str]) -> list[GroupRows]:
    """Kafka's collectGroupsState, sorted by group id: one row per group."""
    out = []
    for gid in sorted(set(group_ids)):
        d = describe_group(c, gid)
        row = {"GROUP": gid, "COORDINATOR (ID)": coordinator_text(c, gid), "ASSIGNMENT-STRATEGY": d.assignor,
               "STATE": d.state, "GROUP-EPOCH": d.group_epoch, "TARGET-ASSIGNMENT-EPOCH": d.target_assignment_epoch,
               "#MEMBERS": len(d.members)}
        problems, printed = _state_problems(gid, d.state, 1)
        out.append(GroupRows(gid, d.state, problems, printed, [row]))
    return out


def format_states(groups: list[GroupRows], *, verbose: bool = False) -> tuple[str, str]:
    """(stdout, stderr) of `--describe --state [--verbose]`."""
    out, err = [], []
    for g in groups:
        for p in g.problems:
            (out if p.stream == "stdout" else err).append(p.text + "\n")
        if not g.printed:
            continue
        r = g.rows[0]
        cols = ["GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE"]
        widths: list[int | None] = [max(15, len(r["GROUP"])), max(25, len(r["COORDINATOR (ID)"])), 20, 15]
        if verbose:
            cols += ["GROUP-EPOCH", "TARGET-ASSIGNMENT-EPOCH"]
            widths += [15, 25]
        cols.append("#MEMBERS")
        widths.append(None)
        out.append("\n" + kafka_line(widths, cols) + "\n" + kafka_line(widths, [r[k] for k in cols]) + "\n")
    return "".join(out), "".join(err)


# ---------------------------------------------------------------------------------------------
# DataFrames (for notebooks)

def _frame(groups: list[GroupRows], columns: list[str]) -> Any:
    """`frame`, and `df.attrs["messages"]`: what Kafka would say about the groups."""
    df = frame(groups, columns)
    df.attrs["messages"] = [p.text.strip() for g in groups for p in g.problems]
    return df


def describe_offsets(c: Coordinator, group_ids: Iterable[str], *, verbose: bool = False) -> Any:
    """`--describe --offsets` as a DataFrame (Kafka's columns; None where Kafka prints "-");
    `df.attrs["states"]` holds each group's state, `df.attrs["messages"]` what Kafka would say."""
    return _frame(collect_offsets(c, group_ids), _offset_columns(verbose))


def describe_members(c: Coordinator, group_ids: Iterable[str], *, verbose: bool = False) -> Any:
    """`--describe --members [--verbose]` as a DataFrame (GROUP-INSTANCE-ID always included)."""
    groups = collect_members(c, group_ids)
    cols = ["GROUP", "CONSUMER-ID", "GROUP-INSTANCE-ID", "HOST", "CLIENT-ID", "#PARTITIONS"]
    if verbose:
        cols += ["CURRENT-EPOCH", "CURRENT-ASSIGNMENT", "TARGET-EPOCH", "TARGET-ASSIGNMENT"]
    return _frame(groups, cols)


def describe_state(c: Coordinator, group_ids: Iterable[str]) -> Any:
    """`--describe --state --verbose` as a DataFrame, one row per group."""
    return _frame(collect_states(c, group_ids), ["GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE",
                                                 "GROUP-EPOCH", "TARGET-ASSIGNMENT-EPOCH", "#MEMBERS"])
