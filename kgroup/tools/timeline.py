"""`--timeline --group G`: how a group's describe output changed over a dump, one block per change.

Every record of the group (and every transaction marker on its partition) is a moment; the
coordinator is rebuilt as it was right after it (`Coordinator.load`, the replay a failover
runs, from the group's own partition) and described with the group's own tool (consumer, Streams or share). A moment whose
description equals the previous one (a heartbeat-free commit of the same offset, a record the
describe does not show) prints nothing. Log end offsets and lag are the dump's final ones.
"""
from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from kgroup.coordinator import Coordinator

__all__ = ["TimelineBlock", "timeline", "describe_text", "format_timeline"]


@dataclass(frozen=True)
class TimelineBlock:
    """One change: the record that made it and the describe output after it."""

    position: int
    partition: int
    offset: int
    timestamp: int
    what: str
    text: str


def _group_type(c: Coordinator, group_id: str) -> str:
    g = c.groups.get(group_id)
    name = type(g).__name__.lower() if g is not None else ""
    for kind in ("streams", "share"):
        if kind in name:
            return kind
    return "consumer"


def describe_text(c: Coordinator, group_id: str, kind: str) -> str:
    """The group as its tool describes it (state --verbose, members --verbose, offsets),
    stdout and stderr lines together."""
    from . import consumer_groups as cg, share_groups as sh, streams_groups as sg

    parts: list[tuple[Callable[..., tuple[str, str]], Any]]
    if kind == "streams":
        parts = [(sg.format_states, sg.collect_states(c, [group_id])),
                 (sg.format_members, sg.collect_members(c, [group_id], verbose=True)),
                 (sg.format_offsets, sg.collect_offsets(c, [group_id]))]
    elif kind == "share":
        parts = [(sh.format_states, sh.collect_states(c, [group_id])),
                 (sh.format_members, sh.collect_members(c, [group_id])),
                 (sh.format_offsets, sh.collect_offsets(c, [group_id]))]
    else:
        parts = [(cg.format_states, cg.collect_states(c, [group_id])),
                 (cg.format_members, cg.collect_members(c, [group_id])),
                 (cg.format_offsets, cg.collect_offsets(c, [group_id]))]
    text = []
    for i, (fmt, groups) in enumerate(parts):
        out, err = fmt(groups, verbose=True)
        text.append((err if i == 0 else "") + out)  # what Kafka says about the group: once
    return "".join(text).strip("\n") + "\n"


def _record_name(e: Any) -> str:
    if e.control is not None:
        t = e.control.type
        return f"transaction marker {getattr(t, 'name', t)} (producer {e.producer_id})"
    rec = e.record
    name = type(rec).__name__
    return name + (" tombstone" if e.value is None else "")


def _of_group(e: Any, group_id: str, partition: int) -> bool:
    if e.partition != partition:
        return False
    if e.control is not None:
        return True
    key = e.record.key
    return (getattr(key, "group", None) or getattr(key, "group_id", None)) == group_id


def _after(c: Coordinator, entries: list[Any]) -> Coordinator:
    """A coordinator loaded from the group's partition up to a moment. (`Coordinator.as_of`
    snapshots cannot answer the describe requests the tools send.)"""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the full replay already warned about what it skipped
        return Coordinator.load(entries, cluster=c.cluster, config=c.config, profile=c.profile)


def timeline(c: Coordinator, group_id: str, *, progress: Callable[[int, int], None] | None = None
             ) -> Iterator[TimelineBlock]:
    """The changes of `group_id`'s describe output over `c`'s log (a replayed dump's)."""
    kind = _group_type(c, group_id)
    partition = c.partition_for(group_id)
    entries = [e for e in c.log.entries(partition) if _of_group(e, group_id, partition)]
    previous = None
    for i, e in enumerate(entries):
        if progress is not None:
            progress(i, len(entries))
        text = describe_text(_after(c, entries[:i + 1]), group_id, kind)
        if text != previous:
            yield TimelineBlock(e.position, e.partition, e.offset, e.timestamp, _record_name(e), text)
            previous = text


def format_timeline(blocks: Iterator[TimelineBlock] | list[TimelineBlock], group_id: str) -> str:
    """The blocks as text: a header line per change, then the describe output after it."""
    from kgroup.dumps.replay import format_ms

    out = []
    for b in blocks:
        out.append(f"=== {format_ms(b.timestamp)}  {group_id}: {b.what} at offset {b.offset} on "
                   f"__consumer_offsets-{b.partition}\n{b.text}\n")
    return "".join(out)
