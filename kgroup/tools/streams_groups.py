"""`kafka-streams-groups.sh --list / --describe` over a coordinator: Kafka's `StreamsGroupCommand`
tables (members with epochs and active/standby/warm-up tasks, the topology epoch, input-topic
offsets), as pandas DataFrames and as the text it prints.

Unlike the consumer tool, Kafka's Streams tool prints each group on its own, in the order given,
and says nothing at all about a group without members under `--members` / `--offsets`.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from kgroup.admin import Admin, StreamsGroupDescription
from kgroup.coordinator import Coordinator

from .common import Problem, cell, coordinator_text, emit, empty_state, error_line, format_list, frame, kafka_line, \
    listed, log_end_offset, log_start_offset, shown_columns, tp_hashmap_order
from .consumer_groups import GroupRows, committed_offsets

__all__ = ["STREAMS_GROUP_STATES", "describe", "list_groups", "collect_offsets", "collect_members",
           "collect_states", "format_offsets", "format_members", "format_states", "format_list",
           "describe_offsets", "describe_members", "describe_state"]

#: GroupState.groupStatesForType(STREAMS)
STREAMS_GROUP_STATES = ("Empty", "NotReady", "Assigning", "Reconciling", "Stable", "Dead")

#: Each `--describe` table's columns under --verbose, which are its DataFrame's too; without
#: --verbose the tool leaves the _VERBOSE_ONLY ones out.
_MEMBER_COLUMNS = ["GROUP", "TARGET-ASSIGNMENT-EPOCH", "TOPOLOGY-EPOCH", "MEMBER", "MEMBER-PROTOCOL", "MEMBER-EPOCH",
                   "PROCESS", "CLIENT-ID", "ASSIGNMENTS"]
_OFFSET_COLUMNS = ["GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LEADER-EPOCH", "LOG-END-OFFSET", "OFFSET-LAG"]
_STATE_COLUMNS = ["GROUP", "COORDINATOR (ID)", "STATE", "GROUP-EPOCH", "TARGET-ASSIGNMENT-EPOCH", "#MEMBERS"]
_VERBOSE_ONLY = {"TARGET-ASSIGNMENT-EPOCH", "TOPOLOGY-EPOCH", "MEMBER-PROTOCOL", "MEMBER-EPOCH", "CURRENT-OFFSET",
                 "LEADER-EPOCH", "LOG-END-OFFSET", "GROUP-EPOCH"}


def describe(c: Coordinator, group_id: str) -> StreamsGroupDescription | None:
    """StreamsGroupDescribe of one group (Kafka's Admin.describeStreamsGroups); None when the
    coordinator has no Streams group of that id."""
    f = Admin(c).describe_streams_groups([group_id]).described_groups()[group_id]
    return None if f.is_completed_exceptionally() else f.get()


def list_groups(c: Coordinator, states: Iterable[str] = ()) -> list[dict[str, str]]:
    """Streams groups, as `listGroups(withTypes(STREAMS))`: [{group, state}]."""
    return listed(Admin(c).list_streams_groups(), states)


def _empty_state(group_id: str, state: str) -> list[Problem]:
    # Kafka's StreamsGroupCommand says both through printError (stdout)
    return empty_state("Streams", group_id, state, error_line)


def _tasks(assignment: dict[str, dict[str, list[int]]], target: dict[str, dict[str, list[int]]] | None) -> str:
    """Kafka's getTasksForPrinting: "ACTIVE: 0:[0,1]; STANDBY: 1:[2]; " (and TARGET-... when verbose)."""
    def kind(tasks: dict[str, list[int]], label: str) -> str:
        if not tasks:
            return ""
        return f"{label}: " + "".join(f"{s}:[{','.join(map(str, ps))}]; " for s, ps in tasks.items())
    text = kind(assignment["active"], "ACTIVE") + kind(assignment["standby"], "STANDBY") + \
        kind(assignment["warmup"], "WARMUP")
    if target is not None:
        text += kind(target["active"], "TARGET-ACTIVE") + kind(target["standby"], "TARGET-STANDBY") + \
            kind(target["warmup"], "TARGET-WARMUP")
    return text


def _described(c: Coordinator, group_ids: Iterable[str]) -> Iterator[tuple[str, StreamsGroupDescription | None, str]]:
    """(group id, its description or None, its state) for each group, in the order given, as Kafka's
    tool describes them (each described when its turn comes)."""
    for gid in group_ids:
        d = describe(c, gid)
        yield gid, d, "Dead" if d is None else d.group_state


def collect_members(c: Coordinator, group_ids: Iterable[str], *, verbose: bool = False) -> list[GroupRows]:
    """`--describe --members`: one GroupRows per group, in the order given."""
    out = []
    for gid, d, state in _described(c, group_ids):
        rows = [] if d is None else [
            {"GROUP": gid, "TARGET-ASSIGNMENT-EPOCH": d.target_assignment_epoch, "TOPOLOGY-EPOCH": d.topology_epoch,
             "MEMBER": m.member_id, "MEMBER-PROTOCOL": "classic" if m.is_classic else "streams",
             "MEMBER-EPOCH": m.member_epoch, "PROCESS": m.process_id, "CLIENT-ID": m.client_id,
             "ASSIGNMENTS": _tasks(m.assignment, m.target_assignment if verbose else None)} for m in d.members]
        printed = state != "Dead" and bool(rows)  # Kafka's isGroupStateValid
        out.append(GroupRows(gid, state, _empty_state(gid, state) if printed else [], printed, rows))
    return out


def collect_offsets(c: Coordinator, group_ids: Iterable[str]) -> list[GroupRows]:
    """`--describe --offsets`: the input partitions of the active tasks, their committed
    offsets, log end offsets and lag (end - committed, or end - log start when nothing is
    committed; "-" when a dump does not say)."""
    out = []
    for gid, d, state in _described(c, group_ids):
        rows = []
        if d is not None:
            sources = {s.subtopology_id: list(s.source_topics) + list(s.repartition_source_topics)
                       for s in d.subtopologies or []}
            tps = {(t, p) for m in d.members for sub, ps in m.assignment["active"].items()
                   for t in sources.get(sub, []) for p in ps}
            committed = {tp: o for tp, o in committed_offsets(c, gid).items()
                         if tp[0] in {t for s in d.subtopologies or [] for t in s.source_topics}}
            for tp in tp_hashmap_order(tps):
                o = committed.get(tp)
                end = log_end_offset(c, *tp)
                base = o.offset if o is not None else log_start_offset(c, *tp)
                rows.append({"GROUP": gid, "TOPIC": tp[0], "PARTITION": tp[1],
                             "CURRENT-OFFSET": None if o is None else o.offset,
                             "LEADER-EPOCH": None if o is None else o.leader_epoch, "LOG-END-OFFSET": end,
                             "OFFSET-LAG": None if end is None or base is None else end - base})
        printed = state != "Dead" and d is not None and bool(d.members)
        out.append(GroupRows(gid, state, _empty_state(gid, state) if printed else [], printed, rows))
    return out


def collect_states(c: Coordinator, group_ids: Iterable[str]) -> list[GroupRows]:
    """`--describe --state`: one row per group."""
    out = []
    for gid, d, state in _described(c, group_ids):
        # Kafka's coordinator column here is "host:port (id)", one space
        row = {"GROUP": gid, "COORDINATOR (ID)": coordinator_text(c, gid).replace("  (", " ("), "STATE": state,
               "GROUP-EPOCH": None if d is None else d.group_epoch,
               "TARGET-ASSIGNMENT-EPOCH": None if d is None else d.target_assignment_epoch,
               "#MEMBERS": 0 if d is None else len(d.members)}
        out.append(GroupRows(gid, state, _empty_state(gid, state), True, [row]))
    return out


def format_members(groups: list[GroupRows], *, verbose: bool = False) -> tuple[str, str]:
    """(stdout, stderr) of `--describe --members [--verbose]`."""
    def table(g: GroupRows) -> str:
        w = {k: max([15] + [len(cell(r[k])) for r in g.rows]) for k in ("MEMBER", "PROCESS", "CLIENT-ID")}
        gw = max(15, len(g.group_id))
        cols = shown_columns(_MEMBER_COLUMNS, verbose, _VERBOSE_ONLY)
        if not verbose:
            widths: list[int | None] = [gw, w["MEMBER"], w["PROCESS"], w["CLIENT-ID"], None]
            return "".join(kafka_line(widths, vals) + "\n" for vals in [cols] + [[r[k] for k in cols] for r in g.rows])

        def line(v: list[Any]) -> str:
            # Kafka's format has no space between TOPOLOGY-EPOCH and MEMBER ("%-15s%-Ns")
            return kafka_line([gw, 25, 15], v[:3]) + kafka_line(
                [w["MEMBER"], 15, 15, w["PROCESS"], w["CLIENT-ID"], None], v[3:]) + "\n"
        return "".join(line(v) for v in [cols] + [[r[k] for k in cols] for r in g.rows])
    return emit(groups, table)


def format_offsets(groups: list[GroupRows], *, verbose: bool = False) -> tuple[str, str]:
    """(stdout, stderr) of `--describe [--offsets] [--verbose]`."""
    def table(g: GroupRows) -> str:
        gw = max(15, len(g.group_id))
        tw = max([15] + [len(r["TOPIC"]) for r in g.rows])
        cols = shown_columns(_OFFSET_COLUMNS, verbose, _VERBOSE_ONLY)
        widths: list[int | None] = [gw, tw, 10, 15, 15, 15, 15] if verbose else [gw, tw, 10, None]
        return "".join(kafka_line(widths, v) + "\n" for v in [cols] + [[r[k] for k in cols] for r in g.rows])
    return emit(groups, table)


def format_states(groups: list[GroupRows], *, verbose: bool = False) -> tuple[str, str]:
    """(stdout, stderr) of `--describe --state [--verbose]`."""
    def table(g: GroupRows) -> str:
        r = g.rows[0]
        cols = shown_columns(_STATE_COLUMNS, verbose, _VERBOSE_ONLY)
        widths: list[int | None] = [max(15, len(g.group_id)), max(25, len(r["COORDINATOR (ID)"])), 25]
        widths += ([15, 25] if verbose else []) + [None]
        return "".join(kafka_line(widths, v) + "\n" for v in [cols, [r[k] for k in cols]])
    return emit(groups, table)


def describe_members(c: Coordinator, group_ids: Iterable[str], *, verbose: bool = True) -> Any:
    """`--describe --members --verbose` as a DataFrame."""
    return frame(collect_members(c, group_ids, verbose=verbose), _MEMBER_COLUMNS)


def describe_offsets(c: Coordinator, group_ids: Iterable[str]) -> Any:
    """`--describe --offsets --verbose` as a DataFrame (None where Kafka prints "-")."""
    return frame(collect_offsets(c, group_ids), _OFFSET_COLUMNS)


def describe_state(c: Coordinator, group_ids: Iterable[str]) -> Any:
    """`--describe --state --verbose` as a DataFrame."""
    return frame(collect_states(c, group_ids), _STATE_COLUMNS)

