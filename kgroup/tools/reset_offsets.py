"""`kafka-consumer-groups.sh --reset-offsets` planned from a dump's history, never executed.

Kafka's tool computes new offsets from the live cluster; here they come from what the group had
committed, which a dump keeps: `--to-committed-at TIME` takes the offsets the group had committed
at TIME (the dump replayed to TIME: transactions, deletions and expirations as the coordinator
saw them), `--to-earliest-committed` the first offset the dump shows the group committing for
each partition. `--shift-by` and `--to-offset` are Kafka's. The plan prints as Kafka's dry run
(GROUP TOPIC PARTITION NEW-OFFSET) or as the CSV its `--export` writes and `--from-file` reads.
"""
from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kgroup.coordinator import Coordinator
from kgroup.javaorder import java_order

from .common import kafka_line, log_end_offset, log_start_offset, tp_hashmap_order
from .consumer_groups import committed_offsets, describe_group

__all__ = ["ResetPlan", "plan_reset", "earliest_committed", "parse_topics", "format_dry_run", "export_csv",
           "parse_reset_plan"]

TP = tuple[str, int]


@dataclass
class ResetPlan:
    """New offsets per group, and what to tell the user on stderr about them."""

    offsets: dict[str, dict[TP, int]] = field(default_factory=dict)
    #: partitions in scope without an offset to reset to (left out of `offsets`)
    left_out: list[str] = field(default_factory=list)
    #: Kafka's warnings (an offset moved into the log's range, a group still active)
    warnings: list[str] = field(default_factory=list)


def parse_topics(args: Sequence[str]) -> list[tuple[str, list[int] | None]]:
    """`--topic T` / `--topic T:0,1` as Kafka reads them: (topic, partitions or None for all)."""
    out = []
    for arg in args:
        if ":" not in arg:
            out.append((arg, None))
            continue
        parts = arg.split(":")
        if len(parts) != 2:
            raise ValueError(f"Invalid topic arg '{arg}', expected topic name and partitions")
        try:
            out.append((parts[0], [int(p) for p in parts[1].split(",")]))
        except ValueError:
            bad = next(p for p in parts[1].split(",") if not p.strip().lstrip("-").isdigit())
            raise ValueError(f"Invalid partition '{bad}' specified in topic arg '{arg}''") from None
    return out


def earliest_committed(c: Coordinator, group_id: str) -> dict[TP, int]:
    """The first offset the coordinator's log shows `group_id` committing for each partition
    (plain commits and committed transactional ones; aborted ones never counted)."""
    from kgroup.records import records as R

    first: dict[TP, int] = {}
    pending: dict[int, dict[TP, int]] = {}  # producer id -> its transactional commits, until the marker
    for e in c.log:
        if e.control is not None:
            txn = pending.pop(e.producer_id, {})
            if getattr(e.control.type, "name", None) == "COMMIT":
                for tp, off in txn.items():
                    first.setdefault(tp, off)
            continue
        rec = e.record
        if not isinstance(rec, R.OffsetCommit) or rec.key.group != group_id or rec.value is None:
            continue
        tp = (rec.key.topic, rec.key.partition)
        if e.is_transactional:
            pending.setdefault(e.producer_id, {}).setdefault(tp, rec.value.offset)
        else:
            first.setdefault(tp, rec.value.offset)
    return first


def _partitions(c: Coordinator, topic: str, known: Iterable[TP]) -> list[int]:
    if topic in c.cluster:
        return list(range(c.cluster.partitions(topic)))
    return sorted({p for t, p in known if t == topic})  # a dump without metadata: the ones it names


def _in_range(c: Coordinator, tp: TP, offset: int, warnings: list[str]) -> int:
    """Kafka's checkOffsetsRange: an offset beyond the log's known ends is moved to them."""
    end, start = log_end_offset(c, *tp), log_start_offset(c, *tp)
    name = f"{tp[0]}-{tp[1]}"
    if end is not None and offset > end:
        warnings.append(f"New offset ({offset}) is higher than latest offset for topic partition {name}. "
                        f"Value will be set to {end}")
        return end
    if start is not None and offset < start:
        warnings.append(f"New offset ({offset}) is lower than earliest offset for topic partition {name}. "
                        f"Value will be set to {start}")
        return start
    return offset


def plan_reset(c: Coordinator, group_ids: Sequence[str], *, all_topics: bool = False,
               topics: Sequence[str] = (), committed_then: Mapping[str, Mapping[TP, Any]] | None = None,
               then_text: str = "then", to_earliest_committed: bool = False, shift_by: int | None = None,
               to_offset: int | None = None) -> ResetPlan:
    """The new offsets of each group, computed against `c` (the dump at --at).

    Exactly one scenario: `committed_then` (group -> the offsets it had committed at the time
    `then_text` names: --to-committed-at), `to_earliest_committed`, `shift_by` or `to_offset`.
    Scope: `all_topics` (what the group has committed, now or then) or `topics` (Kafka's
    `T` / `T:0,1`). Raises ValueError with Kafka's words for a shift without a committed offset.
    """
    plan = ResetPlan()
    for gid in java_order(group_ids):  # Kafka collects the groups in a HashMap
        state = describe_group(c, gid).state
        if state not in ("Empty", "Dead"):
            plan.warnings.append(f"group '{gid}' is {state} here: Kafka resets only inactive groups (Empty or Dead); "
                                 f"stop its members before applying this plan")
        now = committed_offsets(c, gid)
        then = dict(committed_then.get(gid, {})) if committed_then is not None else {}
        if all_topics:
            scope = list(now) + [tp for tp in then if tp not in now]
        else:
            scope = []
            for topic, parts in parse_topics(topics):
                scope += [(topic, p) for p in (parts if parts is not None else _partitions(c, topic, [*now, *then]))]
        new: dict[TP, int] = {}
        earliest = earliest_committed(c, gid) if to_earliest_committed else {}
        for tp in scope:
            name = f"{tp[0]}-{tp[1]}"
            if committed_then is not None:
                if tp in then:
                    new[tp] = then[tp].offset  # exactly what was committed: no range check
                else:
                    plan.left_out.append(f"{gid} {name}: no offset committed {then_text}; left out")
            elif to_earliest_committed:
                if tp in earliest:
                    new[tp] = earliest[tp]
                else:
                    plan.left_out.append(f"{gid} {name}: the dump shows no commit of it; left out")
            elif shift_by is not None:
                if tp not in now:
                    raise ValueError(f"Cannot shift offset for partition {name} since there is no current "
                                     f"committed offset")
                new[tp] = _in_range(c, tp, now[tp].offset + shift_by, plan.warnings)
            elif to_offset is not None:
                new[tp] = _in_range(c, tp, to_offset, plan.warnings)
            else:
                raise ValueError("a reset scenario is needed: --to-committed-at, --to-earliest-committed, "
                                 "--shift-by or --to-offset")
        plan.offsets[gid] = {tp: new[tp] for tp in tp_hashmap_order(new)}  # Kafka's Collectors.toMap order
    return plan


def format_dry_run(plan: ResetPlan) -> str:
    """Kafka's printOffsetsToReset: "%n%-30s %-30s %-10s %-15s" per line, then a newline."""
    widths = [30, 30, 10, 15]
    lines = []
    if plan.offsets:
        lines.append("\n" + kafka_line(widths, ["GROUP", "TOPIC", "PARTITION", "NEW-OFFSET"]))
    for gid, offsets in plan.offsets.items():
        lines += ["\n" + kafka_line(widths, [gid, t, p, o]) for (t, p), o in offsets.items()]
    return "".join(lines) + "\n"


def _csv_field(value: Any) -> str:
    # Jackson's CsvGenerator quotes a value holding the separator, a quote or a line break
    text = str(value)
    if any(ch in text for ch in ',"\r\n') or any(ord(ch) < 0x20 for ch in text):
        return '"' + text.replace('"', '""') + '"'
    return text


def export_csv(plan: ResetPlan, *, single_group: bool) -> str:
    """What Kafka's `--export` prints: one `topic,partition,offset` line per partition when one
    --group was given, `group,topic,partition,offset` otherwise (no header), and the newline of
    its println."""
    out = []
    for gid, offsets in plan.offsets.items():
        for (t, p), o in offsets.items():
            fields = ([] if single_group else [gid]) + [t, p, o]
            out.append(",".join(_csv_field(f) for f in fields) + "\n")
    return "".join(out) + "\n"


def parse_reset_plan(text: str, group_ids: Sequence[str]) -> dict[str, dict[TP, int]]:
    """A reset CSV read as Kafka's `--from-file` reads it (parseResetPlan): the group-less form
    only when exactly one --group is given and the first line has three fields."""
    lines = text.split("\n")
    while lines and lines[-1] == "":  # Java's String.split drops trailing empty strings
        lines.pop()

    def fields(line: str) -> list[str]:
        return next(csv.reader(io.StringIO(line)), [])

    old_format = bool(lines) and len(fields(lines[0])) == 3 and fields(lines[0])[1].strip().lstrip("-").isdigit()
    out: dict[str, dict[TP, int]] = {}
    for line in lines:
        f = fields(line)
        if len(group_ids) == 1 and old_format:
            if len(f) != 3:
                raise ValueError(f"not a topic,partition,offset line: {line!r}")
            out.setdefault(group_ids[0], {})[(f[0], int(f[1]))] = int(f[2])
        else:
            if len(f) != 4:
                raise ValueError(f"not a group,topic,partition,offset line: {line!r}")
            out.setdefault(f[0], {})[(f[1], int(f[2]))] = int(f[3])
    return out
