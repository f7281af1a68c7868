"""`--timeline --group G`: how a group's describe output changed over a dump, one block per change.

Every record of the group (and every transaction marker on its partition) is a moment; the
coordinator is rebuilt as it was right after it (`Coordinator.load`, the replay a failover
runs, from the group's own partition) and described with the group's own tool (consumer, Streams or share). A moment whose
description equals the previous one (a heartbeat-free commit of the same offset, a record the
describe does not show) prints nothing. Log end offsets and lag are the dump's final ones.
"""
from __future__ import annotations

import bisect
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from kgroup.coordinator import Coordinator
from kgroup.log import OffsetsLog

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
    last_offset: int


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
        if i and not any(g.rows for g in groups):
            continue  # an empty members or offsets table says nothing the state line does not
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


def _after(c: Coordinator, batches: list[bytes], partition: int) -> Coordinator:
    """A coordinator loaded from the group's partition up to a moment: its batches as written
    (transactional flags and markers kept, so pending and aborted offsets stay invisible).
    (`Coordinator.as_of` snapshots cannot answer the describe requests the tools send.)"""
    log = OffsetsLog(c.log.num_partitions, topic=c.log.topic)
    for data in batches:
        log.append_batch_bytes(partition, data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the full replay already warned about what it skipped
        return Coordinator.load(log, copy_log=False, cluster=c.cluster, config=c.config, profile=c.profile)


def _moments(entries: list[Any], batch_starts: set[int]) -> list[list[Any]]:
    """Runs of entries written in one batch (one append, as a heartbeat's member, epoch and
    assignment records are): the group is described after each, never halfway through one."""
    runs: list[list[Any]] = []
    for e in entries:
        last = runs[-1][-1] if runs else None
        if last is not None and e.offset not in batch_starts and e.offset == last.offset + 1:
            runs[-1].append(e)
        else:
            runs.append([e])
    return runs


def _what(run: list[Any]) -> str:
    names: dict[str, int] = {}
    for e in run:
        names[_record_name(e)] = names.get(_record_name(e), 0) + 1
    return ", ".join(n if k == 1 else f"{n} x{k}" for n, k in names.items())


def timeline(c: Coordinator, group_id: str, *, progress: Callable[[int, int], None] | None = None
             ) -> Iterator[TimelineBlock]:
    """The changes of `group_id`'s describe output over `c`'s log (a replayed dump's)."""
    kind = _group_type(c, group_id)
    partition = c.partition_for(group_id)
    entries = [e for e in c.log.entries(partition) if _of_group(e, group_id, partition)]
    previous = None
    done = 0
    batches = c.log.batches(partition)
    # a batch starts with its base offset: the first 8 bytes of the batch
    bases = [int.from_bytes(b[:8], "big", signed=True) for b in batches]
    for run in _moments(entries, set(bases)):
        done += len(run)
        if progress is not None:
            progress(done, len(entries))
        upto = bisect.bisect_right(bases, run[-1].offset)
        text = describe_text(_after(c, batches[:upto], partition), group_id, kind)
        if text != previous:
            first, last = run[0], run[-1]
            yield TimelineBlock(first.position, first.partition, first.offset, first.timestamp, _what(run), text,
                                last.offset)
            previous = text


def format_timeline(blocks: Iterator[TimelineBlock] | list[TimelineBlock], group_id: str) -> str:
    """The blocks as text: a header line per change, then the describe output after it."""
    from kgroup.dumps.replay import format_ms

    out = []
    for b in blocks:
        where = f"offset {b.offset}" if b.last_offset == b.offset else f"offsets {b.offset}-{b.last_offset}"
        out.append(f"=== {format_ms(b.timestamp)}  {group_id}: {b.what} at {where} on "
                   f"__consumer_offsets-{b.partition}\n{b.text}\n")
    return "".join(out)
