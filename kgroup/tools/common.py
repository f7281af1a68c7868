"""What the three group tools share: where the state comes from (a replayed dump or a live
coordinator), log offsets, Kafka's printf-style columns and its group-state messages.

Kafka's tools print with `String.format("%-15s ...")`: every column but the last is padded to
at least its width (never cut), one space between columns, and the last is printed as is.
`kafka_line` reproduces that, so a table here lines up exactly as Kafka's does.
"""
from __future__ import annotations

import os
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from kgroup.coordinator import Coordinator
from kgroup.javaorder import java_hash_order
from kgroup.log.partitioner import java_string_hashcode
from kgroup.records.records import CONSUMER_OFFSETS

__all__ = ["MISSING", "kafka_line", "format_list", "listed", "emit", "frame", "open_dump", "log_end_offset",
           "log_start_offset", "is_replayed", "tp_hashmap_order", "cell", "coordinator_text", "Problem", "error_line",
           "warn_line", "empty_state", "shown_columns"]

#: Kafka's MISSING_COLUMN_VALUE: what its tools print for a value they do not know.
MISSING = "-"


def cell(value: Any) -> str:
    """A value as Kafka prints it: None (Java's Optional.empty()) is "-"."""
    return MISSING if value is None else str(value)


def kafka_line(widths: Sequence[int | None], values: Sequence[Any]) -> str:
    """One `printf` line: `widths[i]` pads value i on the right (`%-Ns`); None means `%s`."""
    return " ".join(cell(v) if w is None else cell(v).ljust(w) for w, v in zip(widths, values))


def open_dump(paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]], at: Any = None, *,
              offset: int | None = None, **replay_kw: Any) -> Coordinator:
    """A coordinator holding what the dump says at `at` (ISO time, epoch ms; None: the end) or
    at `offset` (records with offset <= N on every partition): `kgroup.dumps.replay`."""
    from kgroup.dumps.replay import replay  # the dumps layer is only needed for dumps

    return replay(paths, at=at, offset=offset, **replay_kw)


def is_replayed(c: Coordinator) -> bool:
    """A coordinator rebuilt from a dump knows only what the dump (and its log dir) says."""
    return hasattr(c, "replay_stats")


def log_end_offset(c: Coordinator, topic: str, partition: int) -> int | None:
    """The partition's log end offset, None when unknown.

    A dump knows it only from the log dir's replication-offset-checkpoint (the high watermark,
    which is what Kafka's ListOffsets(latest) answers a consumer); a live simulated cluster
    always knows it."""
    if topic not in c.cluster:
        return None
    if partition >= c.cluster.partitions(topic):
        return None
    if is_replayed(c):
        return c.cluster.topic(topic).end_offsets.get(partition)
    return c.cluster.end_offset(topic, partition)


def log_start_offset(c: Coordinator, topic: str, partition: int) -> int | None:
    """The partition's log start offset; a dump does not hold it (None)."""
    if is_replayed(c) or topic not in c.cluster:
        return None
    return c.cluster.log_start_offset(topic, partition)


def _tp_hash(tp: tuple[str, int]) -> int:
    # Kafka's TopicPartition.hashCode(): 31 * (31 + partition) + topic.hashCode()
    return (31 * (31 + tp[1]) + java_string_hashcode(tp[0])) & 0xFFFFFFFF


def tp_hashmap_order(tps: Iterable[tuple[str, int]]) -> list[tuple[str, int]]:
    """Topic-partitions in the order a Java `HashMap<TopicPartition, _>` filled with them
    iterates: the order Kafka's tools print rows built through `Collectors.toMap`."""
    return java_hash_order(list(tps), _tp_hash)


def coordinator_text(c: Coordinator, group_id: str) -> str:
    """Kafka prints the coordinator as `host:port  (id)`. A dump has no broker: kgroup names the
    `__consumer_offsets` partition the group lives on instead, and an unknown id."""
    return f"{CONSUMER_OFFSETS}-{c.partition_for(group_id)}  ({MISSING})"


@dataclass(frozen=True)
class Problem:
    """A line Kafka's tool prints about a group instead of (or before) its table."""

    text: str
    #: "stdout" for Kafka's printError ("\\nError: ..."), "stderr" for its System.err lines
    stream: str


def error_line(text: str) -> Problem:
    """Kafka's `printError(msg)`: "\\nError: msg" on stdout."""
    return Problem(f"\nError: {text}", "stdout")


def warn_line(text: str) -> Problem:
    """Kafka's `System.err.println("\\n" + msg)`."""
    return Problem(f"\n{text}", "stderr")


def empty_state(kind: str, group_id: str, state: str, no_members: Callable[[str], Problem]) -> list[Problem]:
    """Kafka's maybePrintEmptyGroupState of the Streams and share tools (`kind` "Streams" or
    "Share"): an unknown group is an error, one without members is said through `no_members`."""
    if state == "Dead":
        return [error_line(f"{kind} group '{group_id}' does not exist.")]
    if state == "Empty":
        return [no_members(f"{kind} group '{group_id}' has no active members.")]
    return []


def format_list(groups: list[dict[str, str]], *, with_state: bool) -> str:
    """`--list [--state]` of the Streams and share tools: the ids, or GROUP STATE."""
    if not with_state:
        return "".join(g["group"] + "\n" for g in groups)
    w = max([15] + [len(g["group"]) for g in groups])
    return "".join(kafka_line([w, None], r) + "\n" for r in [["GROUP", "STATE"]] + [[g["group"], g["state"]]
                                                                                   for g in groups])


def listed(groups: Iterable[dict[str, Any]], states: Iterable[str]) -> list[dict[str, str]]:
    """ListGroups' groups as [{group, state}], only those in one of `states` (any case; none
    given: all), as the Streams and share tools' `--list [--state]` keeps them."""
    wanted = {s.lower() for s in states}
    return [{"group": g["group_id"], "state": g["state"]} for g in groups
            if not wanted or g["state"].lower() in wanted]


def emit(groups: Iterable[Any], table: Any, end: str = "") -> tuple[str, str]:
    """(stdout, stderr) of a describe: each group's messages on their stream, then `table(group)`
    (followed by `end`) for the groups Kafka prints a table for."""
    out: list[str] = []
    err: list[str] = []
    for g in groups:
        for p in g.problems:
            (out if p.stream == "stdout" else err).append(p.text + "\n")
        if g.printed:
            out.append(table(g) + end)
    return "".join(out), "".join(err)


def shown_columns(columns: Sequence[str], verbose: bool, verbose_only: Collection[str]) -> list[str]:
    """The columns a `--describe` table prints: all of `columns` under `--verbose`, else those
    not in `verbose_only`."""
    return [k for k in columns if verbose or k not in verbose_only]


def frame(groups: list[Any], columns: list[str]) -> Any:
    """The groups' rows (`GroupRows`) as a pandas DataFrame of `columns` (None where a row has
    no value); `df.attrs["states"]` holds each group's state."""
    import pandas as pd  # only the notebook views need pandas

    df = pd.DataFrame([{k: r.get(k) for k in columns} for g in groups for r in g.rows], columns=columns)
    df.attrs["states"] = {g.group_id: g.state for g in groups}
    return df
