"""`kafka-share-groups.sh --list / --describe` over a coordinator: Kafka's `ShareGroupCommand`
tables (members and their assignments, share-partition start offsets), as pandas DataFrames
and as the text it prints.

Start offsets (SPSO) come from the share coordinator: for a dump, from its `__share_group_state`
records. A dump holding only `__share_group_state` knows no share group's members: such a group
is described as Kafka describes an unknown one, but its start offsets are still listed.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from kgroup.admin import Admin, ShareGroupDescription
from kgroup.coordinator import Coordinator

from .common import (MISSING, Problem, cell, coordinator_text, emit, empty_state, format_list, frame, kafka_line,
                     listed, shown_columns, warn_line)
from .consumer_groups import GroupRows, _assignment_text

__all__ = ["SHARE_GROUP_STATES", "describe", "list_groups", "start_offsets", "collect_offsets", "collect_members",
           "collect_states", "format_offsets", "format_members", "format_states", "format_list",
           "describe_offsets", "describe_members", "describe_state"]

#: GroupState.groupStatesForType(SHARE)
SHARE_GROUP_STATES = ("Empty", "Stable", "Dead")

#: Each `--describe` table's columns under --verbose, which are its DataFrame's too; without
#: --verbose the tool leaves the _VERBOSE_ONLY ones out.
_OFFSET_COLUMNS = ["GROUP", "TOPIC", "PARTITION", "LEADER-EPOCH", "START-OFFSET"]
_MEMBER_COLUMNS = ["GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS", "MEMBER-EPOCH", "ASSIGNMENT"]
_STATE_COLUMNS = ["GROUP", "COORDINATOR (ID)", "STATE", "GROUP-EPOCH", "ASSIGNMENT-EPOCH", "#MEMBERS"]
_VERBOSE_ONLY = {"LEADER-EPOCH", "MEMBER-EPOCH", "GROUP-EPOCH", "ASSIGNMENT-EPOCH"}


def describe(c: Coordinator, group_id: str) -> ShareGroupDescription | None:
    """ShareGroupDescribe of one group; None when there is no share group of that id."""
    f = Admin(c).describe_share_groups([group_id]).described_groups()[group_id]
    return None if f.is_completed_exceptionally() else f.get()


def list_groups(c: Coordinator, states: Iterable[str] = ()) -> list[dict[str, str]]:
    """Share groups, as `listGroups(ListGroupsOptions.forShareGroups())`: [{group, state}]."""
    return listed(Admin(c).list_share_groups(), states)


def start_offsets(c: Coordinator, group_id: str) -> dict[tuple[str, int], tuple[int | None, int | None]]:
    """(topic, partition) -> (start offset, leader epoch) of the group's share-partitions.

    Asked as Kafka's Admin asks (DescribeShareGroupOffsets); when the coordinator has no such
    group (a dump of `__share_group_state` alone), read from the share coordinator's state."""
    f = Admin(c).list_share_group_offsets(group_id).partitions_to_offset_and_metadata(group_id)
    if not f.is_completed_exceptionally() and f.get():
        return {(tp.topic, tp.partition): (None, None) if o is None else (o.offset, o.leader_epoch)
                for tp, o in f.get().items()}
    from kgroup.dumps.replay import describe_share_partitions  # the share state as `kgroup dump` reads it

    return {(d["topic"] or d["topic_id"], d["partition"]): (d["start_offset"],
                                                           None if d["leader_epoch"] < 0 else d["leader_epoch"])
            for d in describe_share_partitions(c, group_id)}


def _described(c: Coordinator, group_ids: Iterable[str]) -> Iterator[tuple[str, ShareGroupDescription | None, str]]:
    """(group id, its description or None, its state) for each group, sorted, as Kafka's
    tool describes them (each described when its turn comes)."""
    for gid in sorted(set(group_ids)):
        d = describe(c, gid)
        yield gid, d, "Dead" if d is None else d.group_state


def _empty_state(group_id: str, state: str) -> list[Problem]:
    # Kafka's ShareGroupCommand says "no active members" on System.err
    return empty_state("Share", group_id, state, warn_line)


def collect_offsets(c: Coordinator, group_ids: Iterable[str]) -> list[GroupRows]:
    """`--describe [--offsets]`: start offsets sorted by topic and partition, groups sorted."""
    out = []
    for gid, _, state in _described(c, group_ids):
        offsets = start_offsets(c, gid)
        rows = [{"GROUP": gid, "TOPIC": t, "PARTITION": p, "LEADER-EPOCH": offsets[(t, p)][1],
                 "START-OFFSET": offsets[(t, p)][0]} for t, p in sorted(offsets)]
        # Kafka prints the offsets whatever the state; a group it cannot describe it reports
        problems = _empty_state(gid, state) if state == "Dead" and not rows else []
        out.append(GroupRows(gid, state, problems, not problems, rows))
    return out


def collect_members(c: Coordinator, group_ids: Iterable[str]) -> list[GroupRows]:
    """`--describe --members`: members sorted by consumer id, groups sorted."""
    out = []
    for gid, d, state in _described(c, group_ids):
        rows = [] if d is None else [
            {"GROUP": gid, "CONSUMER-ID": m.member_id, "HOST": m.host, "CLIENT-ID": m.client_id,
             "#PARTITIONS": len(m.assignment), "MEMBER-EPOCH": m.member_epoch,
             "ASSIGNMENT": _assignment_text([(tp.topic, tp.partition) for tp in m.assignment]).replace(MISSING, "")
             if m.assignment else ""}
            for m in sorted(d.members, key=lambda m: m.member_id)]
        out.append(GroupRows(gid, state, _empty_state(gid, state), state != "Dead" and bool(rows), rows))
    return out


def collect_states(c: Coordinator, group_ids: Iterable[str]) -> list[GroupRows]:
    """`--describe --state`: one row per group (printed even for an unknown group, as Kafka does)."""
    out = []
    for gid, d, state in _described(c, group_ids):
        row = {"GROUP": gid, "COORDINATOR (ID)": coordinator_text(c, gid), "STATE": state,
               "GROUP-EPOCH": None if d is None else d.group_epoch,
               "ASSIGNMENT-EPOCH": None if d is None else d.target_assignment_epoch,
               "#MEMBERS": 0 if d is None else len(d.members)}
        out.append(GroupRows(gid, state, _empty_state(gid, state), True, [row]))
    return out


def _emit(groups: list[GroupRows], table: Any) -> tuple[str, str]:
    return emit(groups, table, "\n")  # Kafka's lines start with "\n"; a println ends the group


def format_offsets(groups: list[GroupRows], *, verbose: bool = False) -> tuple[str, str]:
    """(stdout, stderr) of `--describe [--offsets] [--verbose]`."""
    def table(g: GroupRows) -> str:
        gw, tw = max(15, len(g.group_id)), max([15] + [len(r["TOPIC"]) for r in g.rows])
        cols = shown_columns(_OFFSET_COLUMNS, verbose, _VERBOSE_ONLY)
        widths: list[int | None] = [gw, tw, 10] + ([13] if verbose else []) + [None]
        return "".join("\n" + kafka_line(widths, v) for v in [cols] + [[r[k] for k in cols] for r in g.rows])
    return _emit(groups, table)


def format_members(groups: list[GroupRows], *, verbose: bool = False) -> tuple[str, str]:
    """(stdout, stderr) of `--describe --members [--verbose]`."""
    def table(g: GroupRows) -> str:
        w = {k: max([15] + [len(cell(r[k])) for r in g.rows]) for k in ("CONSUMER-ID", "HOST", "CLIENT-ID")}
        cols = shown_columns(_MEMBER_COLUMNS, verbose, _VERBOSE_ONLY)
        widths: list[int | None] = [max(15, len(g.group_id)), w["CONSUMER-ID"], w["HOST"], w["CLIENT-ID"], 12] + \
            ([13] if verbose else []) + [None]
        return "".join("\n" + kafka_line(widths, v) for v in [cols] + [[r[k] for k in cols] for r in g.rows])
    return _emit(groups, table)


def format_states(groups: list[GroupRows], *, verbose: bool = False) -> tuple[str, str]:
    """(stdout, stderr) of `--describe --state [--verbose]`."""
    def table(g: GroupRows) -> str:
        r = g.rows[0]
        cols = shown_columns(_STATE_COLUMNS, verbose, _VERBOSE_ONLY)
        widths: list[int | None] = [max(15, len(g.group_id)), max(25, len(r["COORDINATOR (ID)"])), 15] + \
            ([12, 17] if verbose else []) + [None]
        return "".join("\n" + kafka_line(widths, v) for v in [cols, [r[k] for k in cols]])
    return _emit(groups, table)


def describe_offsets(c: Coordinator, group_ids: Iterable[str]) -> Any:
    """`--describe --offsets --verbose` as a DataFrame: each share-partition's start offset."""
    return frame(collect_offsets(c, group_ids), _OFFSET_COLUMNS)


def describe_members(c: Coordinator, group_ids: Iterable[str]) -> Any:
    """`--describe --members --verbose` as a DataFrame."""
    return frame(collect_members(c, group_ids), _MEMBER_COLUMNS)


def describe_state(c: Coordinator, group_ids: Iterable[str]) -> Any:
    """`--describe --state --verbose` as a DataFrame."""
    return frame(collect_states(c, group_ids), _STATE_COLUMNS)
