"""Replay a dump into a `Coordinator`, whole or up to an offset or a time, and describe its groups.

    c = replay("broker-copy/", at="2024-06-10T06:20:00Z")    # or offset=1234, or nothing: the end
    describe_groups(c, "orders-app")                           # [{group_id, type, state, ..., offsets}]
    c.replay_stats                                             # what was fed, cut, skipped; partitions

The dump's records go through `Coordinator.load`, the very replay a coordinator failover runs:
they are put into an `OffsetsLog` on their own partitions and offsets, with their producer ids
and transaction markers, so transactions end as Kafka ends them -- committed offsets become
visible at the COMMIT marker, aborted ones never, and a transaction whose marker is not in the
replayed part stays pending (OffsetFetch with require_stable answers UNSTABLE_OFFSET_COMMIT).

Cuts are per partition, because offsets are: `offset=N` keeps, on every partition, the records
with offset <= N; `at=T` keeps each partition's records up to (not including) the first one
stamped after T -- the prefix a consumer seeking by time sees, so a clock that went backwards
does not punch holes. Text dumps without offsets or timestamps cannot be cut that way
(`DumpError` says so).

What cannot be replayed is skipped, never guessed: records of a type kgroup has no replay for
yet (the Coordinator warns once per type; `c.unreplayed` counts them), records of a type unknown
to kgroup (as Kafka's coordinator loader skips them: a newer broker's type, or one left over from
an aborted upgrade; counted by type in `replay_stats.unknown_types`), partial records from older text forms (3.7 and earlier kafka-dump-log, 3.x
formatters) and undecodable ones -- each kind warned once and counted in `c.replay_stats`.
"""
from __future__ import annotations

import heapq
import itertools
import os
import re
import uuid
import warnings
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone
from typing import Any

from kgroup.clock import DEFAULT_START_MS, ManualClock
from kgroup.config import Config
from kgroup.coordinator import Coordinator
from kgroup.gcpause import gc_paused
from kgroup.groups.classic import ClassicGroup
from kgroup.log import ControlMarker, ControlType, OffsetsLog, encode_batch, encode_control_batch, partition_for
from kgroup.log.partitioner import (DEFAULT_OFFSETS_PARTITIONS, DEFAULT_SHARE_STATE_PARTITIONS, java_abs,
                                    java_string_hashcode, share_partition_key, share_state_partition_for)
from kgroup.records.records import CONSUMER_OFFSETS, SHARE_GROUP_STATE

from .metadata import METADATA_DIR, ClusterMetadata, find_cluster_metadata, is_metadata_path, read_cluster_metadata
from .model import DumpEntry, DumpError, DumpReport
from .reader import read_dump

__all__ = ["replay", "describe_groups", "ReplayStats", "to_epoch_ms", "format_ms", "infer_num_partitions",
           "group_of"]

_NUM_PARTITIONS = "offsets.topic.num.partitions"
_SHARE_NUM_PARTITIONS = "share.coordinator.state.topic.num.partitions"
#: How far above the highest partition seen `infer_num_partitions` looks for a count that fits.
_SEARCH_LIMIT = 10_000
_INT = re.compile(r"^[+-]?\d+$")
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


# ---------------------------------------------------------------------------------------------
# time

def to_epoch_ms(value: int | str | datetime | date) -> int:
    """Epoch milliseconds from an int (already ms), a `datetime`/`date` or an ISO-8601 string.

    A time without a zone is taken as UTC (not the local zone), so the same command gives the
    same answer on every machine; `date`s and date-only strings mean midnight UTC.
    """
    if isinstance(value, bool):
        raise TypeError("a time cannot be a bool")
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        text = value.strip()
        if _INT.match(text):
            return int(text)
        try:
            value = datetime.fromisoformat(text)
        except ValueError:
            raise ValueError(f"not a time: {value!r} (give epoch milliseconds or ISO-8601, "
                             f"e.g. 2024-06-10T06:15:00Z)") from None
    if isinstance(value, date) and not isinstance(value, datetime):
        value = datetime(value.year, value.month, value.day)
    if isinstance(value, datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=timezone.utc)
        return (value - _EPOCH) // timedelta(milliseconds=1)
    raise TypeError(f"not a time: {value!r}")


def format_ms(ms: int | None) -> str:
    """`2024-06-10T06:13:20.000Z` for epoch milliseconds ("-" for None or Kafka's -1)."""
    if ms is None or ms < 0:
        return "-"
    dt = _EPOCH + timedelta(milliseconds=ms)  # exact: no float seconds
    return dt.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def group_of(entry: DumpEntry) -> str | None:
    """The group id a record is keyed by (for older text forms: what their fields say)."""
    if entry.record is not None:
        key = entry.record.key
        g = getattr(key, "group", None)
        return g if g is not None else getattr(key, "group_id", None)
    if entry.fields is not None:
        return entry.fields.get("group") or entry.fields.get("group_id")
    return None


# ---------------------------------------------------------------------------------------------
# partition count

def infer_num_partitions(placements: Mapping[str, int], *, what: str = "group") -> tuple[int | None, str]:
    """The `offsets.topic.num.partitions` that puts every group on the partition it was seen on.

    `placements` maps group id -> `__consumer_offsets` partition. Kafka's default (50) wins when
    it fits; else the smallest count above the highest partition seen that fits. Returns
    (None, why) when no count up to `_SEARCH_LIMIT` above it fits (records not where Kafka puts them).
    The same works for `__share_group_state` (`share.coordinator.state.topic.num.partitions`,
    also 50 by default) with share-partition keys `"<group>:<topicId>:<partition>"` as
    placements (`what="share-partition"`).
    """
    if not placements:
        return DEFAULT_OFFSETS_PARTITIONS, f"Kafka's default {DEFAULT_OFFSETS_PARTITIONS} (the dump names no partitions)"
    lowest = max(placements.values()) + 1
    hashes = [(java_abs(java_string_hashcode(g)), p) for g, p in placements.items()]

    def fits(n: int) -> bool:
        return all(h % n == p for h, p in hashes)

    if lowest <= DEFAULT_OFFSETS_PARTITIONS and fits(DEFAULT_OFFSETS_PARTITIONS):
        return DEFAULT_OFFSETS_PARTITIONS, (f"Kafka's default {DEFAULT_OFFSETS_PARTITIONS} puts each of the "
                                            f"{len(placements)} {what}(s) on its partition")
    for n in range(lowest, lowest + _SEARCH_LIMIT):
        if fits(n):
            return n, (f"the smallest count that puts each of the {len(placements)} {what}(s) on its partition "
                       f"(highest partition seen: {lowest - 1})")
    return None, f"no partition count from {lowest} to {lowest + _SEARCH_LIMIT - 1} puts every {what} on its partition"


# ---------------------------------------------------------------------------------------------
# replay

@dataclass
class ReplayStats:
    """What `replay` did: the partition count and why, the cut, what was fed and what was not."""

    num_partitions: int
    num_partitions_reason: str
    offset: int | None = None
    at: int | None = None
    #: data records and transaction markers fed to the coordinator
    records: int = 0
    markers: int = 0
    #: entries after the cut (left out on purpose)
    after_cut: int = 0
    #: reason -> entries that could not be fed (partial, undecodable, unknown type, ...)
    skipped: Counter = field(default_factory=Counter)
    #: record type -> records the coordinator has no replay for yet (`Coordinator.unreplayed`)
    unreplayed: dict[str, int] = field(default_factory=dict)
    #: record type number -> records of a type kgroup does not know, skipped as Kafka's loader does
    unknown_types: Counter = field(default_factory=Counter)
    #: the KRaft metadata log the cluster (topic names, ids, partition counts) was built from
    #: (`ClusterMetadata.as_dict()`), or None when there was none
    cluster_metadata: dict | None = None
    #: partition -> the last offset fed
    last_offsets: dict[int, int] = field(default_factory=dict)
    first_timestamp: int | None = None
    last_timestamp: int | None = None
    #: `__share_group_state` (the share coordinator's log), when the dump has any of it:
    #: share.coordinator.state.topic.num.partitions and why, records fed, last offsets
    share_num_partitions: int | None = None
    share_num_partitions_reason: str | None = None
    share_records: int = 0
    share_last_offsets: dict[int, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        d = {"num_partitions": self.num_partitions, "num_partitions_reason": self.num_partitions_reason,
             "offset": self.offset, "at": self.at, "records": self.records, "markers": self.markers,
             "after_cut": self.after_cut, "skipped": dict(self.skipped), "unreplayed": dict(self.unreplayed),
             "unknown_types": {str(t): n for t, n in sorted(self.unknown_types.items())},
             "cluster_metadata": self.cluster_metadata,
             "last_offsets": {str(p): o for p, o in sorted(self.last_offsets.items())},
             "first_timestamp": self.first_timestamp, "last_timestamp": self.last_timestamp}
        if self.share_num_partitions is not None:
            d["share_state"] = {"num_partitions": self.share_num_partitions,
                                "num_partitions_reason": self.share_num_partitions_reason,
                                "records": self.share_records,
                                "last_offsets": {str(p): o for p, o in sorted(self.share_last_offsets.items())}}
        return d

    def cut_text(self) -> str:
        """The cut in words, e.g. "up to offset 41 on every partition"."""
        if self.offset is not None:
            return f"up to offset {self.offset} on every partition"
        if self.at is not None:
            return f"up to {format_ms(self.at)}"
        return "the whole dump"


def _split_paths(paths_or_entries: Any) -> tuple[Any, list[Any]]:
    """(what to read entries from, the paths given -- [] for entries); a metadata log given as a
    path is not a dump of __consumer_offsets and is left out of the first."""
    if isinstance(paths_or_entries, (str, os.PathLike)):
        paths = [paths_or_entries]
    else:
        items = iter(paths_or_entries)
        first = next(items, None)
        if first is None:
            return (), []
        if isinstance(first, DumpEntry):
            return itertools.chain((first,), items), []
        paths = [first, *items]
    dumps = [p for p in paths if not is_metadata_path(p)]
    if not dumps:
        raise DumpError(f"only a metadata log was given ({', '.join(map(str, paths))}); give the "
                        f"__consumer_offsets dump too")
    return dumps, paths


def _entries(paths_or_entries: Any, topic: str, report: DumpReport, progress: bool) -> Iterator[DumpEntry]:
    if isinstance(paths_or_entries, list):
        return read_dump(paths_or_entries, topic=topic, report=report, progress=progress)
    return iter(paths_or_entries)


def _cluster_metadata(metadata: Any, paths: list[Any]) -> ClusterMetadata | None:
    """The metadata log asked for (`metadata` a path), found among the dump paths (None), or not wanted (False)."""
    if metadata is False:
        return None
    if metadata is None or metadata is True:
        found = find_cluster_metadata(p for p in paths if os.path.exists(p))
        if found is None:
            if metadata is True:
                raise DumpError(f"no {METADATA_DIR} directory in {', '.join(map(str, paths)) or 'the entries given'}")
            return None
        metadata = found
    return read_cluster_metadata(metadata)


def _fill(log: OffsetsLog, by_partition: dict[int, list[DumpEntry]], stats: ReplayStats, warned: set[str]) -> None:
    """Append each partition's entries to `log`, partitions merged by time as a broker's log dir
    reads back (OffsetsLog.read), and widen the stats' time range."""
    streams = [[((e.timestamp if e.timestamp is not None else -1), p, i, e) for i, e in enumerate(entries)]
               for p, entries in sorted(by_partition.items())]
    merged = ((p, e) for _ts, p, _i, e in heapq.merge(*streams, key=lambda t: t[:3]))
    for partition, run in _batches(merged):
        _append(log, partition, run, stats, warned)
        ts = run[0].timestamp
        if ts is not None and ts >= 0:
            stats.first_timestamp = ts if stats.first_timestamp is None else min(stats.first_timestamp, ts)
            stats.last_timestamp = ts if stats.last_timestamp is None else max(stats.last_timestamp, ts)


def _skip(stats: ReplayStats, reason: str, warned: set[str], n: int = 1, *, depth: int = 0) -> None:
    """Count `n` entries not fed, warning once per reason (as the Coordinator does per type).
    `depth`: frames between `_replay` and the caller (the warning names the caller of `replay`)."""
    if reason not in warned:
        warned.add(reason)
        if reason.startswith(_UNKNOWN_TYPE):
            # Kafka's CoordinatorLoaderImpl: warn, ignore the record, load the rest
            message = (f"skipped {n} {reason}, as Kafka's coordinator loader does (a newer broker's record "
                       f"type, or one left over from an aborted upgrade)")
        else:
            message = f"kgroup cannot replay {reason}; skipped"
        warnings.warn(message, stacklevel=4 + depth)
    stats.skipped[reason] += n


_UNKNOWN_TYPE = "records of unknown type "


def _why_not(entry: DumpEntry) -> str | None:
    """Why an entry cannot be fed to the coordinator (None when it can)."""
    if entry.control is not None:
        if entry.control in ("COMMIT", "ABORT") and entry.producer_id >= 0:
            return None
        return f"control records of type {entry.control}"
    if entry.record is not None:
        return None
    if entry.fields is not None and entry.fields.get("unknown_type") is not None:
        return f"{_UNKNOWN_TYPE}{entry.fields['unknown_type']}"
    if entry.error is not None:
        return "undecodable records"
    return "partial records of older text forms (they carry only some fields)"


def _coordinator_epoch(entry: DumpEntry) -> int:
    if entry.meta and entry.meta.get("coordinator_epoch") is not None:
        return entry.meta["coordinator_epoch"]
    if entry.key is not None and entry.value is not None:
        try:
            return ControlMarker.from_record(entry.key, entry.value).coordinator_epoch
        except ValueError:
            pass
    return 0


def _batches(entries: Iterable[tuple[int, DumpEntry]]) -> Iterator[tuple[int, list[DumpEntry]]]:
    """Runs of entries that came in one batch (same partition, consecutive offsets)."""
    run: list[DumpEntry] = []
    run_partition = -1
    for partition, e in entries:
        if run and (partition != run_partition or e.batch is None or e.batch is not run[-1].batch
                    or e.control is not None or run[-1].control is not None
                    or e.offset is None or run[-1].offset is None or e.offset != run[-1].offset + 1):
            yield run_partition, run
            run = []
        run.append(e)
        run_partition = partition
    if run:
        yield run_partition, run


def _append(log: OffsetsLog, partition: int, run: list[DumpEntry], stats: ReplayStats, warned: set[str]) -> None:
    share = log.topic == SHARE_GROUP_STATE
    end = log.end_offset(partition)
    first = run[0]
    base = first.offset if first.offset is not None else end
    if base < end:
        # e.g. the same segment given twice: Kafka's log would never hold it twice
        _skip(stats, "records whose offset goes back (e.g. a segment given twice)", warned, len(run), depth=2)
        return
    ts = first.timestamp if first.timestamp is not None else -1
    if first.control is not None:
        data = encode_control_batch(ControlType.COMMIT if first.control == "COMMIT" else ControlType.ABORT,
                                    base_offset=base, producer_id=first.producer_id,
                                    producer_epoch=first.producer_epoch, coordinator_epoch=_coordinator_epoch(first),
                                    timestamp=ts)
        stats.markers += 1
    else:
        items = []
        for e in run:
            if e.key is not None:
                key, value = e.key, e.value
            else:
                key, value = e.record.encode()
            items.append((key, value, e.timestamp if e.timestamp is not None else -1))
        transactional = first.txn != "none" and first.producer_id >= 0
        data = encode_batch(items, base_offset=base, producer_id=first.producer_id if transactional else -1,
                            producer_epoch=first.producer_epoch if transactional else -1, base_sequence=0,
                            transactional=transactional)
        if share:
            stats.share_records += len(run)
        else:
            stats.records += len(run)
    log.append_batch_bytes(partition, data)
    (stats.share_last_offsets if share else stats.last_offsets)[partition] = base + len(run) - 1


def replay(paths_or_entries: Any, *, offset: int | None = None, at: int | str | datetime | None = None,
           topic: str | None = None, report: DumpReport | None = None, progress: bool = False,
           num_partitions: int | None = None, metadata: str | os.PathLike[str] | bool | None = None,
           **coordinator_kw: Any) -> Coordinator:
    """A coordinator holding the state a dump describes, whole or up to a cut.

    `paths_or_entries`: dump path(s) of any kind `read_dump` reads, or `DumpEntry`s already read.
    `offset`: keep records with offset <= `offset` on every partition (offsets are per partition).
    `at`: keep each partition's records up to the first one stamped after `at` (int epoch ms,
    `datetime`, or ISO-8601 text; no zone = UTC). `topic`: by default both coordinator topics
    are replayed: `__consumer_offsets` into the group coordinator, `__share_group_state` into
    its share coordinator (`describe_share_partitions`); name one to replay only that. `report`/`progress`: as for `read_dump`.
    `num_partitions`: `offsets.topic.num.partitions`; by default inferred from the dump (see
    `infer_num_partitions`: group placement depends on it; the highest partition seen + 1 is only
    a lower bound). Other keywords go to `Coordinator` (cluster, config, profile, ...).

    `metadata`: the broker's KRaft metadata log (`__cluster_metadata-0`, or a log dir holding
    it), which names every topic: the coordinator's cluster is built from it (topic names, ids,
    partition counts, and end offsets from the log dir's `replication-offset-checkpoint`), so
    KIP-848, Streams and share groups show topic names, and `offsets.topic.num.partitions` is
    the `__consumer_offsets` partition count it gives. By default it is looked for among the dump
    paths (a log dir holding `__cluster_metadata-0`, or that directory given as a path);
    `metadata=False` ignores it. Topics go into a `cluster=` given too (those it lacks).

    The result is a live coordinator (clock at the cut, or at the last record) with
    `replay_stats` (a `ReplayStats`). Raises `DumpError` for unreadable paths and for cuts the
    dump cannot support. Memory: the replayed records are held, as the coordinator's log keeps
    them; for dumps bigger than that, see `kgroup.dumps.spark`.
    """
    with gc_paused():  # entries, log and state: a great many long-lived objects, no cycles
        return _replay(paths_or_entries, offset=offset, at=at, topic=topic, report=report, progress=progress,
                       num_partitions=num_partitions, metadata=metadata, **coordinator_kw)


def _replay(paths_or_entries: Any, *, offset: int | None, at: int | str | datetime | None, topic: str | None,
            report: DumpReport | None, progress: bool, num_partitions: int | None, metadata: Any,
            **coordinator_kw: Any) -> Coordinator:
    if offset is not None and at is not None:
        raise ValueError("give offset or at, not both")
    if topic not in (None, CONSUMER_OFFSETS, SHARE_GROUP_STATE):
        raise DumpError(f"topic must be {CONSUMER_OFFSETS!r} or {SHARE_GROUP_STATE!r}, not {topic!r}")
    at_ms = to_epoch_ms(at) if at is not None else None
    if isinstance(offset, bool) or (offset is not None and not isinstance(offset, int)):
        raise TypeError(f"offset must be an int, got {offset!r}")
    rep = report if report is not None else DumpReport()
    warned: set[str] = set()
    source, paths = _split_paths(paths_or_entries)
    md = _cluster_metadata(metadata, paths)
    if md is not None:
        for problem in md.problems:
            warnings.warn(f"cluster metadata: {problem}", stacklevel=3)
        coordinator_kw["cluster"] = md.cluster(coordinator_kw.get("cluster"))

    # 1. Read and cut, keeping each partition's entries in log order (per topic).
    by_partition: dict[int | None, list[DumpEntry]] = {}
    share_by_partition: dict[int | None, list[DumpEntry]] = {}
    stopped: set[tuple[str, int | None]] = set()
    placements: dict[str, int] = {}
    share_placements: dict[str, int] = {}
    after_cut = 0
    skipped: Counter[str] = Counter()
    unknown_types: Counter[int] = Counter()
    wanted = (topic,) if topic is not None else (CONSUMER_OFFSETS, SHARE_GROUP_STATE)
    for e in _entries(source, topic, rep, progress):
        if e.topic not in wanted:
            skipped[f"{e.topic} records (not asked for)"] += 1
            continue
        p = e.partition
        if offset is not None:
            if e.offset is None:
                raise DumpError(f"{e.source}: this dump does not show offsets (console-consumer output?); "
                                f"cut it by time, or use segments or kafka-dump-log output")
            if e.offset > offset:
                after_cut += 1
                continue
        elif at_ms is not None:
            if e.timestamp is None:
                raise DumpError(f"{e.source}: this dump does not show timestamps; cut it by offset, or use "
                                f"segments or kafka-dump-log output")
            if (e.topic, p) in stopped or e.timestamp > at_ms:
                stopped.add((e.topic, p))
                after_cut += 1
                continue
        why = _why_not(e)
        if why is not None:
            skipped[why] += 1
            if why.startswith(_UNKNOWN_TYPE):
                unknown_types[e.fields["unknown_type"]] += 1
            continue
        if e.topic == SHARE_GROUP_STATE:
            share_by_partition.setdefault(p, []).append(e)
            if p is not None and e.record is not None:
                k = e.record.key
                share_placements.setdefault(share_partition_key(k.group_id, k.topic_id, k.partition), p)
            continue
        by_partition.setdefault(p, []).append(e)
        if p is not None and e.control is None:
            g = group_of(e)
            if g is not None:
                placements.setdefault(g, p)

    # 2. The partition count: given, or the one that puts every group where the dump has it.
    config = coordinator_kw.pop("config", None)
    overrides = dict(config.overrides if isinstance(config, Config) else (config or {}))
    given = overrides.get(_NUM_PARTITIONS)
    if num_partitions is not None and given is not None and int(given) != num_partitions:
        raise ValueError(f"num_partitions={num_partitions} but config says {_NUM_PARTITIONS}={given}")
    highest = max((p for p in by_partition if p is not None), default=-1)
    if num_partitions is None and given is not None:
        num_partitions = int(given)
    md_offsets = md.by_name().get(CONSUMER_OFFSETS) if md is not None else None
    if num_partitions is not None:
        reason = "given"
        if highest >= num_partitions:
            raise DumpError(f"the dump has records on partition {highest} but {_NUM_PARTITIONS} is {num_partitions}")
    elif md_offsets is not None and md_offsets.partition_count > highest:
        num_partitions = md_offsets.partition_count
        reason = f"the {CONSUMER_OFFSETS} partition count in the cluster metadata"
    else:
        num_partitions, reason = _inferred_partitions(placements, highest, DEFAULT_OFFSETS_PARTITIONS, _NUM_PARTITIONS,
                                                      "group", stacklevel=4)
    overrides[_NUM_PARTITIONS] = num_partitions
    stats = ReplayStats(num_partitions, reason, offset=offset, at=at_ms, after_cut=after_cut,
                        unknown_types=unknown_types, cluster_metadata=md.as_dict() if md is not None else None)
    for why, n in skipped.items():
        _skip(stats, why, warned, n)

    # 3. One log, partitions merged by time as a broker's log dir reads back (OffsetsLog.read).
    loose = by_partition.pop(None, [])
    for e in loose:  # no partition in the dump (console output): where Kafka puts the group
        g = group_of(e)
        by_partition.setdefault(partition_for(g, num_partitions) if g is not None else 0, []).append(e)
    log = OffsetsLog(num_partitions, topic=CONSUMER_OFFSETS)
    _fill(log, by_partition, stats, warned)

    # 3b. The share coordinator's log, the same way.
    share_log = None
    if share_by_partition:
        share_log = _share_state_log(share_by_partition, share_placements, overrides, stats, warned)

    # 4. The coordinator's own load; its clock at the moment asked about.
    if "clock" not in coordinator_kw:
        now = at_ms if at_ms is not None else stats.last_timestamp
        coordinator_kw["clock"] = ManualClock(now if now is not None else DEFAULT_START_MS)
    c = Coordinator.load(log, share_state_log=share_log, copy_log=False, config=overrides, **coordinator_kw)
    stats.unreplayed = dict(c.unreplayed)
    c.replay_stats = stats  # type: ignore[attr-defined]
    return c


def _inferred_partitions(placements: Mapping[str, int], highest: int, default: int, setting: str, what: str, *,
                         stacklevel: int) -> tuple[int, str]:
    """`infer_num_partitions`, else (with a warning) the larger of Kafka's `default` and one above the
    `highest` partition the dump has records on; and why. `stacklevel`: the warning's, counted from this function."""
    n, reason = infer_num_partitions(placements, what=what)
    if n is None:
        fallback = max(default, highest + 1)
        warnings.warn(f"{reason}; replaying with {setting}={fallback} (records stay on the "
                      f"partitions the dump has them on)", stacklevel=stacklevel)
        n, reason = fallback, f"{reason}; fell back to {fallback}"
    return n, reason


def _share_state_log(by_partition: dict[int | None, list[DumpEntry]], placements: dict[str, int],
                     overrides: dict[str, Any], stats: ReplayStats, warned: set[str]) -> OffsetsLog:
    """`__share_group_state` entries as the share coordinator's log; the partition count given
    in `overrides` or inferred from where the share-partitions are (set in `overrides`)."""
    highest = max((p for p in by_partition if p is not None), default=-1)
    given = overrides.get(_SHARE_NUM_PARTITIONS)
    if given is not None:
        n, reason = int(given), "given"
        if highest >= n:
            raise DumpError(f"the dump has {SHARE_GROUP_STATE} records on partition {highest} but "
                            f"{_SHARE_NUM_PARTITIONS} is {n}")
    else:
        n, reason = _inferred_partitions(placements, highest, DEFAULT_SHARE_STATE_PARTITIONS, _SHARE_NUM_PARTITIONS,
                                         "share-partition", stacklevel=5)
    overrides[_SHARE_NUM_PARTITIONS] = n
    stats.share_num_partitions, stats.share_num_partitions_reason = n, reason
    for e in by_partition.pop(None, []):  # no partition in the dump: where Kafka puts the share-partition
        k = e.record.key if e.record is not None else None
        by_partition.setdefault(share_state_partition_for(k.group_id, k.topic_id, k.partition, n)
                                if k is not None else 0, []).append(e)
    log = OffsetsLog(n, topic=SHARE_GROUP_STATE)
    _fill(log, by_partition, stats, warned)
    return log


# ---------------------------------------------------------------------------------------------
# describe

def _offset_row(tp: tuple[str, int], oam: Any, cluster: Any = None) -> dict[str, Any]:
    row = {"topic": tp[0], "partition": tp[1], "offset": oam.offset, "leader_epoch": oam.leader_epoch,
           "metadata": oam.metadata, "commit_timestamp": oam.commit_timestamp,
           "expire_timestamp": oam.expire_timestamp}
    if cluster is not None and tp[0] in cluster:
        end = cluster.topic(tp[0]).end_offsets.get(tp[1])
        if end is not None:  # known from the broker's replication-offset-checkpoint (the high watermark)
            row["log_end_offset"] = end
            row["lag"] = max(0, end - oam.offset)
    return row


def _topic_id(text: Any) -> uuid.UUID | None:
    if not isinstance(text, str) or len(text) != 36:
        return None
    try:
        return uuid.UUID(text)
    except ValueError:
        return None


def _name_topics(d: dict[str, Any], cluster: Any) -> None:
    """Members' partitions keyed by topic id (KIP-848, share groups), and a share group's
    initialized/initializing share-partitions, keyed by name where the
    cluster knows the id; `topics` (name, id, partitions) for every topic the group refers to;
    `unnamed_topic_ids` for ids the cluster does not know (no metadata log, or a deleted topic)."""
    named: dict[str, Any] = {}
    unnamed: set[str] = set()

    def by_name(v: Any) -> Any:
        if not isinstance(v, dict) or not v:
            return v
        ids = [(key, _topic_id(key)) for key in v]
        if not all(tid is not None for _, tid in ids):
            return v
        out = {}
        for key, tid in ids:
            try:
                name = cluster.topic_name(tid)
            except KeyError:
                unnamed.add(key)
                out[key] = v[key]
            else:
                named[name] = tid
                out[name] = v[key]
        return out

    for key in ("initialized", "initializing"):  # share groups: share-partitions with durable state
        if key in d:
            d[key] = by_name(d[key])
    for m in d.get("members") or []:
        for k, v in list(m.items()):
            m[k] = by_name(v)
        for name in m.get("subscribed_topic_names") or []:
            if name in cluster:
                named[name] = cluster.topic_id(name)
    for row in d.get("offsets") or []:
        if row["topic"] in cluster:
            named[row["topic"]] = cluster.topic_id(row["topic"])
    if named:
        d["topics"] = [{"name": n, "topic_id": str(named[n]), "partitions": cluster.partitions(n)}
                       for n in sorted(named)]
    if unnamed:
        d["unnamed_topic_ids"] = sorted(unnamed)


def describe_groups(coordinator: Coordinator, group: str | None = None) -> list[dict[str, Any]]:
    """Every group (or just `group`) as plain data, sorted by id: `Group.describe()` plus
    `partition` (its `__consumer_offsets` partition), `offsets` (committed) and `pending_offsets`
    (transactional, waiting for their marker, with the producer id). [] when `group` is not there.

    Offsets without a group (possible in a cut dump) are shown under an empty classic group, as
    Kafka's loader creates one for them.

    Where the coordinator's cluster knows a topic id (a dump replayed with its metadata log, see
    `replay`), members' partitions are keyed by topic name, `topics` lists the group's topics
    (name, id, partition count), and committed offsets carry `log_end_offset` and `lag` when the
    end offset is known; ids the cluster does not know are listed in `unnamed_topic_ids`.
    """
    c = coordinator
    store = c.offsets.store
    ids = set(c.groups) | set(store.committed)
    for groups in store.pending.values():
        ids |= set(groups)
    if group is not None:
        ids &= {group}
    out = []
    for gid in sorted(ids):
        g = c.groups.get(gid)
        d = (g if g is not None else ClassicGroup(gid)).describe()
        d["partition"] = c.partition_for(gid)
        d["offsets"] = [_offset_row(tp, oam, c.cluster) for tp, oam in sorted(store.group_offsets(gid).items())]
        pending = []
        for pid, groups in sorted(store.pending.items()):
            for tp, oam in sorted(groups.get(gid, {}).items()):
                pending.append({"producer_id": pid, **_offset_row(tp, oam)})
        d["pending_offsets"] = pending
        _name_topics(d, c.cluster)
        out.append(d)
    return out


_STATE_NAMES = {0: "Available", 1: "Acquired", 2: "Acknowledged", 4: "Archived"}


def describe_share_partitions(coordinator: Coordinator, group: str | None = None) -> list[dict[str, Any]]:
    """Every share-partition the share coordinator holds (or only `group`'s), as plain data
    sorted by group, topic id and partition: the SPSO (`start_offset`), epochs, the state
    batches, and `key`/`payload`: the state as
    `kafka-dump-log.sh --share-group-state-decoder` prints a ShareSnapshot holding it (what
    the log would show after a fresh snapshot). [] when there is none."""
    from kgroup.groups.share.coordinator import share_coordinator, snapshot_record  # the share package registers late
    from kgroup.log.partitioner import kafka_uuid_str
    from .render import dump_log_key_payload

    sc = share_coordinator(coordinator)
    out = []
    for key, o in sorted(sc.states.items(), key=lambda kv: (kv[0].group_id, kafka_uuid_str(kv[0].topic_id),
                                                            kv[0].partition)):
        if group is not None and key.group_id != group:
            continue
        try:
            topic = coordinator.cluster.topic_name(key.topic_id)
        except KeyError:
            topic = None  # a replayed dump knows topic ids only
        k, payload = dump_log_key_payload(snapshot_record(key, o))
        out.append({
            "group_id": key.group_id, "topic_id": kafka_uuid_str(key.topic_id), "topic": topic,
            "partition": key.partition, "state_partition": sc.partition_for(*key),
            "start_offset": o.start_offset, "state_epoch": o.state_epoch, "leader_epoch": o.leader_epoch,
            "snapshot_epoch": o.snapshot_epoch,
            "delivery_complete_count": o.delivery_complete_count, "create_timestamp": o.create_timestamp,
            "write_timestamp": o.write_timestamp,
            "state_batches": [{"first_offset": b.first_offset, "last_offset": b.last_offset,
                               "delivery_state": _STATE_NAMES.get(b.delivery_state, str(b.delivery_state)),
                               "delivery_count": b.delivery_count} for b in o.state_batches],
            "key": k, "payload": payload})
    return out
