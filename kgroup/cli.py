"""The `kgroup` command: read `__consumer_offsets` dumps from the shell.

    kgroup dump decode PATH... [--format jsonl|dump-log]
    kgroup dump stats PATH... [--json]
    kgroup dump describe PATH... [--group G] [--at TIME|offset:N] [--topic T] [--json]
    kgroup dump to-parquet PATH... --out DIR [--master URL] [--end-offsets CSV] [--views NAME...]
    kgroup serve [--host H] [--port P] [--topic NAME[:PARTITIONS]]... [--profile kip|kafka]
                 [--config KEY=VALUE]... [--log-dir DIR] [--brokers N] [--kafka-version X.Y]
                 [--fault RULE]... [--load-ms MS]
    kgroup consumer-groups|streams-groups|share-groups --dump PATH... [--at TIME] --list|--describe|...
      (Kafka's group tools over a dump: kgroup/cli_tools.py, kgroup.tools)

Records go to stdout, everything else (problems, warnings, progress bars) to stderr, so the
output can be piped. PySpark is imported only by `to-parquet`.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import warnings
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TextIO

from kgroup.cli_plumbing import (EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE, Problems, Usage, at_type, check_paths,
                                 parse_at, progress)
from kgroup.dumps import DumpError, DumpReport, read_dump, render_dump_log, render_jsonl
from kgroup.dumps.metadata import find_cluster_metadata, read_cluster_metadata
from kgroup.dumps.replay import describe_groups, describe_share_partitions, format_ms, group_of, replay
from kgroup.errors import ConfigError
from kgroup.records.records import CONSUMER_OFFSETS, SHARE_GROUP_STATE

__all__ = ["main", "parse_at", "build_parser"]

#: `stats` text lists at most this many groups (the busiest); --json lists all.
_GROUPS_SHOWN = 20

_MAIN_EPILOG = """\
commands:
  dump decode      print records exactly as kafka-dump-log.sh / kafka-console-consumer.sh would
  dump stats       what a dump holds: record types, groups, partitions, time range, problems
  dump describe    replay a dump (to a point in time) and show every group as it was then
  dump to-parquet  a big dump into Parquet tables with PySpark
  serve            a Kafka-protocol endpoint for real clients (kgroup.serve)

A dump is any of: a broker log dir or `__consumer_offsets-N` partition dirs or `.log` segment
files; saved `kafka-dump-log.sh --offsets-decoder` output (any release); saved
`kafka-console-consumer.sh --formatter ...` output (any release). Plain or gzip; the kind is
told from the content.

Newer brokers: a value version above the ones kgroup knows is read as Kafka reads it (KIP-915:
the fields kgroup knows, the version as written); a record type kgroup does not know is
skipped with a warning (not a problem), as Kafka's coordinator loader skips it.

exit status: 0 all read; 1 the dump had unreadable parts (reported on stderr with file and
byte position or line; every readable record is still used); 2 bad usage, or a path that is
missing or cannot be read at all.

example:
  kgroup dump decode data/samples/transactions --format dump-log
"""

_DECODE_EPILOG = """\
--format jsonl prints what the newest console formatter prints (Kafka 4.x
CoordinatorRecordMessageFormatter), one JSON object per line: {"key":{"type":..,"data":..},
"value":{"version":..,"data":..}} ("value":null for a tombstone); transaction markers and
records of unknown types print nothing, as in Kafka.
--format dump-log prints what `kafka-dump-log.sh --offsets-decoder` (3.8+) prints: batch
headers, one `| offset: ...` line per record, endTxnMarker lines.

Problems go to stderr with their file and byte position (segments) or line (text dumps);
the records around them are still printed, and the exit status is 1. Records of unknown
types print nothing and a warning (exit status 0), as Kafka's loader only warns about them.

examples:
  kgroup dump decode data/samples/offsets
  kgroup dump decode /var/lib/kafka/data --format dump-log > dump.txt
  kgroup dump decode saved-dump-log.txt.gz --format jsonl | jq -c 'select(.key.type == 1)'
"""

_STATS_EPILOG = """\
examples:
  kgroup dump stats data/samples/static-rolling-restart
  kgroup dump stats broker-copy/ --json | jq .groups
"""

_DESCRIBE_EPILOG = """\
--at picks the moment (without it: the end of the dump):
  offset:N                  records with offset <= N, on every partition (offsets are per
                            partition; use the offset kafka-dump-log shows on the group's
                            partition, which `kgroup dump describe` names for each group)
  2024-06-10T06:15:00Z      an ISO-8601 time (a time without zone is UTC; 2024-06-10 is
                            midnight UTC): each partition up to its first record stamped later
  1718000100000             epoch milliseconds, like the CreateTime: kafka-dump-log prints

The records go through kgroup's coordinator replay (what a coordinator failover runs):
transactional offsets become visible at their COMMIT marker, aborted ones never, and ones
whose marker comes after --at are listed as pending. Record types kgroup cannot replay yet
are skipped with a warning. offsets.topic.num.partitions (which partition each group
lives on) is inferred from the dump unless --partitions gives it.

KIP-848, Streams and share records name topics by id only. When a dump path is a broker's log
dir holding the KRaft metadata log (`__cluster_metadata-0`: its newest `.checkpoint` snapshot,
then its segments), or --metadata points at one, the cluster is built from it: groups show
topic names and partition counts, offsets.topic.num.partitions comes from it, and the log dir's
replication-offset-checkpoint (high watermarks) adds each committed offset's lag.

__share_group_state records (the share coordinator's, KIP-932) are replayed into kgroup's
share coordinator: every share-partition is shown with its SPSO, epochs and state batches, and
its state as the line `kafka-dump-log.sh --share-group-state-decoder` prints for a ShareSnapshot
holding it. share.coordinator.state.topic.num.partitions is inferred the same way.

examples:
  kgroup dump describe data/samples/transactions
  kgroup dump describe data/samples/share-state --at offset:6
  kgroup dump describe data/samples/static-rolling-restart --group orders-app --at 2024-06-10T06:13:30Z
  kgroup dump describe data/samples/transactions --at offset:4 --json
"""

_PARQUET_EPILOG = """\
Runs kgroup.dumps.spark.write_parquet with a local Spark (or --master), so it needs the
`spark` extra (PySpark, pyarrow, Java 17). Views: records (one row per record, problems
included), compacted, offset_history, commit_rate, membership_timeline, rebalances,
streams_tasks, share_state, and lag (with --end-offsets); each is written to DIR/<view>.

examples:
  kgroup dump to-parquet data/samples/offsets --out /tmp/offsets-parquet
  kgroup dump to-parquet broker-copy/ --out /data/offsets --views records compacted
  kgroup dump to-parquet broker-copy/ --out /data/offsets --master spark://host:7077 --end-offsets ends.csv
"""


def _table(rows: list[dict[str, Any]], columns: list[tuple[str, str]], indent: str = "  ") -> list[str]:
    """Left-aligned text columns: (key, header) pairs."""
    cells = [[h for _, h in columns]] + [["-" if r.get(k) is None else str(r.get(k)) for k, _ in columns]
                                         for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(columns))]
    return [indent + "  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in cells]


def _json(obj: Any, out: TextIO) -> None:
    out.write(json.dumps(obj, indent=2, sort_keys=False, default=str) + "\n")


# ---------------------------------------------------------------------------------------------
# dump decode

def _cmd_decode(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    paths = check_paths(args.paths)
    report = DumpReport()
    problems = Problems(report, err)
    entries = problems.tap(read_dump(paths, topic=args.topic, report=report, progress=progress(args)))
    partial = 0
    if args.format == "dump-log":
        for line in render_dump_log(entries):
            out.write(line + "\n")
    else:
        for e in entries:
            if e.record is None and e.control is None and e.error is None and not (e.fields or {}).get("unknown_type"):
                # an older text form carries only some fields: there is no JSON to print
                partial += 1
                where = e.source + (f":{e.line}" if e.line is not None else "")
                what = f"partial {e.record_type_name} record" if e.record_type_name else "partial record"
                err.write(f"kgroup: {where}: a {what} (older text form) has no formatter JSON; "
                          f"--format dump-log prints it\n")
                continue
            if e.error is not None:
                continue  # already reported as a problem, with its position
            line = render_jsonl(e)
            if line:
                out.write(line + "\n")
    return problems.finish("printed", partial)


# ---------------------------------------------------------------------------------------------
# dump stats

def _stats(args: argparse.Namespace, err: TextIO) -> tuple[dict[str, Any], Problems]:
    paths = check_paths(args.paths)
    report = DumpReport()
    problems = Problems(report, err)
    parts: dict[tuple[str, int | None], dict[str, Any]] = {}
    groups: dict[tuple[str, str], Counter[str]] = {}
    first_ts = last_ts = None
    for e in problems.tap(read_dump(paths, topic=args.topic, report=report, progress=progress(args))):
        p = parts.get((e.topic, e.partition))
        if p is None:
            p = parts[(e.topic, e.partition)] = {"topic": e.topic, "partition": e.partition, "entries": 0,
                                                 "first_offset": None, "last_offset": None,
                                                 "first_timestamp": None, "last_timestamp": None}
        p["entries"] += 1
        if e.offset is not None:
            p["first_offset"] = e.offset if p["first_offset"] is None else min(p["first_offset"], e.offset)
            p["last_offset"] = e.offset if p["last_offset"] is None else max(p["last_offset"], e.offset)
        if e.timestamp is not None and e.timestamp >= 0:
            ts = e.timestamp
            p["first_timestamp"] = ts if p["first_timestamp"] is None else min(p["first_timestamp"], ts)
            p["last_timestamp"] = ts if p["last_timestamp"] is None else max(p["last_timestamp"], ts)
            first_ts = ts if first_ts is None else min(first_ts, ts)
            last_ts = ts if last_ts is None else max(last_ts, ts)
        g = group_of(e)
        if g is not None:
            groups.setdefault((e.topic, g), Counter())[e.record_type_name or "unknown"] += 1
    stats = {
        "report": report.as_dict(),
        "time_range": {"first": first_ts, "last": last_ts,
                       "first_iso": None if first_ts is None else format_ms(first_ts),
                       "last_iso": None if last_ts is None else format_ms(last_ts)},
        "partitions": [parts[k] for k in sorted(parts, key=lambda k: (k[0], -1 if k[1] is None else k[1]))],
        "groups": [{"topic": t, "group": g, "records": sum(c.values()), "by_type": dict(sorted(c.items()))}
                   for (t, g), c in sorted(groups.items())],
        "problems": [str(p) for p in report.problems],
        "cluster_metadata": None,
    }
    found = find_cluster_metadata(paths)
    if found is not None:  # named here; `describe` uses it
        stats["cluster_metadata"] = read_cluster_metadata(found).as_dict()
    return stats, problems


def _cmd_stats(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    stats, problems = _stats(args, err)
    if args.json:
        _json(stats, out)
        return problems.finish("counted")
    lines = [problems.report.summary(), ""]
    md = stats["cluster_metadata"]
    if md is not None:
        lines.append(f"cluster metadata: {len(md['topics'])} topics from {md['source']} "
                     f"(kgroup dump describe names the groups' topics with it)")
    tr = stats["time_range"]
    if tr["first"] is not None:
        lines.append(f"time range: {tr['first_iso']} .. {tr['last_iso']}  ({tr['first']} .. {tr['last']})")
    else:
        lines.append("time range: - (the dump shows no timestamps)")
    rows = [{**p, "name": p["topic"] + ("" if p["partition"] is None else f"-{p['partition']}"),
             "offsets": "-" if p["first_offset"] is None else f"{p['first_offset']}..{p['last_offset']}",
             "from": format_ms(p["first_timestamp"]), "to": format_ms(p["last_timestamp"])}
            for p in stats["partitions"]]
    lines.append(f"partitions ({len(rows)}):")
    lines += _table(rows, [("name", "partition"), ("entries", "entries"), ("offsets", "offsets"),
                           ("from", "first record"), ("to", "last record")])
    grows = [{**g, "types": ", ".join(f"{n} {c}" for n, c in g["by_type"].items())} for g in stats["groups"]]
    lines.append(f"groups ({len(grows)}):")
    shown = grows
    if len(grows) > _GROUPS_SHOWN:  # the busiest ones; --json lists them all
        shown = sorted(grows, key=lambda g: (-g["records"], g["group"]))[:_GROUPS_SHOWN]
    if shown:
        lines += _table(shown, [("group", "group"), ("records", "records"), ("types", "by type")]
                        + ([("topic", "topic")] if len({g["topic"] for g in grows}) > 1 else []))
    if len(shown) < len(grows):
        lines.append(f"  ... and {len(grows) - len(shown)} more (--json lists every group)")
    out.write("\n".join(lines) + "\n")
    return problems.finish("counted")


# ---------------------------------------------------------------------------------------------
# dump describe

_OFFSET_COLUMNS = [("topic", "topic"), ("partition", "partition"), ("offset", "offset"),
                   ("leader_epoch", "leader epoch"), ("metadata", "metadata"), ("committed", "committed at"),
                   ("expires", "expires")]


def _offset_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{**r, "metadata": r["metadata"] or "", "committed": format_ms(r["commit_timestamp"]),
             "expires": format_ms(r["expire_timestamp"])} for r in rows]


def _describe_text(d: dict[str, Any]) -> list[str]:
    head = (f"{d['group_id']}  {d['type']}  state {d['state']}  protocol type {d['protocol_type'] or '-'}  "
            f"epoch {d['epoch']}  on __consumer_offsets-{d['partition']}")
    extra = [f"{label} {d[key]}" for key, label in (("assignment_epoch", "assignment epoch"),
                                                    ("topology_epoch", "topology epoch")) if d.get(key) is not None]
    if extra:
        head += "  " + "  ".join(extra)
    lines = [head]
    if d.get("status"):
        lines.append(f"  not ready: {d['status']}")
    if d.get("topics"):
        lines.append("  topics: " + ", ".join(f"{t['name']} ({t['partitions']} partitions)" for t in d["topics"]))
    for key in ("initializing", "initialized"):  # share groups: share-partitions with durable state
        if d.get(key):
            lines.append(f"  share-partitions {key}: " + "  ".join(
                f"{t}:{','.join(map(str, ps))}" for t, ps in sorted(d[key].items())))
    if d.get("deleting"):
        lines.append("  share-partitions deleting: " + ", ".join(d["deleting"]))
    members = d.get("members") or []
    if members:
        keys: list[str] = []
        for m in members:
            keys += [k for k in m if k not in keys]
        # columns with nothing to say (e.g. soft state a replay cannot know) are left out; --json has all
        keys = [k for k in keys if any(m.get(k) not in (None, False, "", [], {}) for m in members)]
        lines.append(f"  members ({len(members)}):")
        lines += _table(members, [(k, k) for k in keys], indent="    ")
    else:
        lines.append("  members: none")
    if d["offsets"]:
        lines.append(f"  committed offsets ({len(d['offsets'])}):")
        lag = [("log_end_offset", "log end offset"), ("lag", "lag")] if any("lag" in r for r in d["offsets"]) else []
        lines += _table(_offset_rows(d["offsets"]), _OFFSET_COLUMNS[:3] + lag + _OFFSET_COLUMNS[3:], indent="    ")
    else:
        lines.append("  committed offsets: none")
    if d["pending_offsets"]:
        lines.append(f"  pending transactional offsets ({len(d['pending_offsets'])}, not visible until their "
                     f"COMMIT marker):")
        lines += _table(_offset_rows(d["pending_offsets"]), [("producer_id", "producer id")] + _OFFSET_COLUMNS[:5],
                        indent="    ")
    return lines


def _cmd_describe(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    paths = check_paths(args.paths)
    report = DumpReport()
    problems = Problems(report, err)
    kw: dict[str, Any] = {}
    if args.at is not None:
        kind, value = args.at
        kw["offset" if kind == "offset" else "at"] = value
    if args.metadata is not None:
        if not os.path.exists(args.metadata):
            raise Usage(f"--metadata: no such file or directory: {args.metadata}")
        kw["metadata"] = args.metadata
    elif args.no_metadata:
        kw["metadata"] = False
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        c = replay(paths, topic=args.topic, report=report, progress=progress(args), num_partitions=args.partitions,
                   **kw)
    problems.flush()
    for w in caught:
        err.write(f"kgroup: warning: {w.message}\n")
    stats = c.replay_stats
    groups = describe_groups(c, args.group)
    shares = describe_share_partitions(c, args.group)
    status = problems.finish("replayed")
    if args.group is not None and not groups and not shares:
        known = ", ".join(d["group_id"] for d in describe_groups(c)) or "none"
        when = "" if args.at is None else f" {stats.cut_text()}"
        err.write(f"kgroup: group {args.group!r} is not in the dump{when} (groups there: {known})\n")
        status = EXIT_PROBLEMS
    if args.json:
        _json({"replay": stats.as_dict(), "clock": c.now(), "groups": groups, "share_partitions": shares,
               "problems": [str(p) for p in report.problems]}, out)
        return status
    replayed = stats.records - sum(stats.unreplayed.values())
    lines = [f"replayed {replayed} records and {stats.markers} transaction markers ({stats.cut_text()})",
             f"clock: {format_ms(c.now())} ({c.now()})",
             f"offsets.topic.num.partitions: {stats.num_partitions} ({stats.num_partitions_reason})"]
    md = stats.cluster_metadata
    if md is not None:
        lines.append(f"cluster metadata: {len(md['topics'])} topics from {md['source']}"
                     + (f" (snapshot {Path(md['snapshot']).name}, then the log)" if md["snapshot"] else ""))
    elif any(d.get("unnamed_topic_ids") for d in groups):
        lines.append("topics are shown by id: the dump holds no cluster metadata. Add the broker's metadata log "
                     "(its log dir, or --metadata <log dir>/__cluster_metadata-0) to see names, partition counts "
                     "and lag")
    if stats.share_num_partitions is not None:
        lines.append(f"{SHARE_GROUP_STATE}: replayed {stats.share_records} records; "
                     f"share.coordinator.state.topic.num.partitions: {stats.share_num_partitions} "
                     f"({stats.share_num_partitions_reason})")
    if stats.after_cut:
        lines.append(f"left out after the cut: {stats.after_cut} entries")
    not_fed = {**{why: n for why, n in stats.skipped.items() if not why.startswith("records of unknown type ")},
               **{f"{t} (no replay yet)": n for t, n in stats.unreplayed.items()}}
    if stats.unknown_types:
        lines.append("skipped records of unknown type (as Kafka's coordinator loader does: a newer broker's type, "
                     "or one left over from an aborted upgrade): "
                     + ", ".join(f"type {t} x{n}" for t, n in sorted(stats.unknown_types.items())))
    if not_fed:
        lines.append("not replayed: " + ", ".join(f"{why} x{n}" for why, n in sorted(not_fed.items())))
    lines.append("")
    if not groups and args.group is None:
        lines.append("no groups")
    for i, d in enumerate(groups):
        if i:
            lines.append("")
        lines += _describe_text(d)
    if stats.share_num_partitions is not None:
        lines += ["", f"share-partitions ({len(shares)})" + (":" if shares else ": none")]
        for d in shares:
            lines += _share_partition_text(d)
    out.write("\n".join(lines) + "\n")
    return status


def _share_partition_text(d: dict[str, Any]) -> list[str]:
    """One share-partition's durable state; its last line is the state as
    `kafka-dump-log.sh --share-group-state-decoder` prints a ShareSnapshot holding it."""
    topic = d["topic_id"] + (f" ({d['topic']})" if d["topic"] else "")
    lines = [f"  {d['group_id']}  topic {topic}  partition {d['partition']}  on {SHARE_GROUP_STATE}-"
             f"{d['state_partition']}",
             f"    SPSO {d['start_offset']}  state epoch {d['state_epoch']}  leader epoch {d['leader_epoch']}  "
             f"snapshot epoch {d['snapshot_epoch']}  written {format_ms(d['write_timestamp'])}"
             + (f"  delivery complete count {d['delivery_complete_count']}"
                if d["delivery_complete_count"] != -1 else "")]
    batches = d["state_batches"]
    if batches:
        lines.append("    state batches: " + ", ".join(
            f"{b['first_offset']}-{b['last_offset']} {b['delivery_state']} (delivery count {b['delivery_count']})"
            for b in batches))
    else:
        lines.append("    state batches: none")
    lines.append(f"    key: {d['key']} payload: {d['payload']}")
    return lines


# ---------------------------------------------------------------------------------------------
# dump to-parquet

def _cmd_to_parquet(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    paths = check_paths(args.paths)
    if args.end_offsets is not None and not os.path.isfile(args.end_offsets):
        raise Usage(f"--end-offsets: no such file: {args.end_offsets}")
    try:
        from kgroup.dumps import spark as kspark  # lazy: the only command that needs PySpark
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.startswith(("pyspark", "py4j", "pyarrow")):
            raise Usage(f"to-parquet needs PySpark, pyarrow and Java 17: pip install 'kgroup[spark]' ({exc})") from None
        raise
    kw: dict[str, Any] = {}
    if args.views:
        views = [v.strip() for item in args.views for v in item.split(",") if v.strip()]
        unknown = [v for v in views if v not in kspark.VIEWS]
        if unknown:  # checked before Spark starts, which takes a while
            raise Usage(f"--views: unknown view(s) {', '.join(unknown)}; choose from {', '.join(kspark.VIEWS)}")
        if "lag" in views and args.end_offsets is None:
            raise Usage("--views lag needs --end-offsets")
        kw["views"] = views
    from pyspark.sql import SparkSession

    running = SparkSession.getActiveSession()
    spark = kspark.session(args.master)
    try:
        written = kspark.write_parquet(spark, [str(p) for p in paths], args.out, end_offsets=args.end_offsets,
                                       topic=args.topic, **kw)
    finally:
        if running is None:  # ours to stop; a caller's session (a notebook's) keeps running
            spark.stop()
    rows = [{"view": name, "path": path} for name, path in written.items()]
    out.write("\n".join(_table(rows, [("view", "view"), ("path", "parquet written")], indent="")) + "\n")
    return EXIT_OK


# ---------------------------------------------------------------------------------------------
# the parser

def _formatter(prog: str) -> argparse.HelpFormatter:
    return argparse.RawDescriptionHelpFormatter(prog, max_help_position=30)


def build_parser() -> argparse.ArgumentParser:
    """The `kgroup` argument parser (exposed for docs and tests)."""
    from kgroup import __version__

    parser = argparse.ArgumentParser(
        prog="kgroup", formatter_class=_formatter, epilog=_MAIN_EPILOG,
        description="kgroup: Apache Kafka's group coordinator, in process.\nRead __consumer_offsets dumps.")
    parser.add_argument("--version", action="version", version=f"kgroup {__version__}")
    top = parser.add_subparsers(dest="area", metavar="{dump,serve,consumer-groups,streams-groups,share-groups}")
    dump = top.add_parser("dump", help="read __consumer_offsets dumps", formatter_class=_formatter,
                          description="Read __consumer_offsets dumps of any kind.", epilog=_MAIN_EPILOG)
    sub = dump.add_subparsers(dest="command", metavar="{decode,stats,describe,to-parquet}")

    def common(p: argparse.ArgumentParser, *, topic: bool = True) -> None:
        p.add_argument("paths", nargs="+", metavar="PATH",
                       help="segment dirs or .log files, or saved kafka-dump-log / console-consumer output")
        if topic:
            p.add_argument("--topic", choices=(CONSUMER_OFFSETS, SHARE_GROUP_STATE),
                           help="read only this coordinator topic (default: both)")
        p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                       help="progress bar on stderr (default: when stderr is a terminal)")

    p = sub.add_parser("decode", help="print records as Kafka's tools print them", formatter_class=_formatter,
                       description="Print every record of a dump exactly as Kafka's tools would.",
                       epilog=_DECODE_EPILOG)
    common(p)
    p.add_argument("--format", choices=("jsonl", "dump-log"), default="jsonl",
                   help="jsonl: the console formatter's JSON (default); dump-log: kafka-dump-log.sh text")
    p.set_defaults(run=_cmd_decode)

    p = sub.add_parser("stats", help="counts: record types, groups, partitions, time range",
                       formatter_class=_formatter, epilog=_STATS_EPILOG,
                       description="What a dump holds: record types, groups, partitions, time range, problems.")
    common(p)
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(run=_cmd_stats)

    p = sub.add_parser("describe", help="replay a dump and show each group as it was",
                       formatter_class=_formatter, epilog=_DESCRIBE_EPILOG,
                       description="Replay a dump (up to --at) through kgroup's coordinator and show every\n"
                                   "group: type, state, epoch, members, committed and pending offsets; and\n"
                                   "every share-partition's durable state from __share_group_state.")
    common(p)
    p.add_argument("--group", metavar="G", help="only this group (and its share-partitions)")
    p.add_argument("--at", type=at_type, metavar="TIME|offset:N", help="the moment to show (see below)")
    p.add_argument("--partitions", type=int, metavar="N",
                   help="offsets.topic.num.partitions of the cluster (default: from the cluster metadata, "
                        "else inferred from the dump)")
    p.add_argument("--metadata", metavar="DIR",
                   help="the broker's KRaft metadata log (__cluster_metadata-0, or the log dir holding it) for "
                        "topic names, partition counts and lag (default: looked for in the dump paths)")
    p.add_argument("--no-metadata", action="store_true", help="do not look for a metadata log in the dump paths")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(run=_cmd_describe)

    p = sub.add_parser("to-parquet", help="a dump into Parquet tables with PySpark", formatter_class=_formatter,
                       description="Decode a (big) dump with PySpark and write Parquet tables.",
                       epilog=_PARQUET_EPILOG)
    common(p)
    p.add_argument("--out", required=True, metavar="DIR", help="the output directory")
    p.add_argument("--master", metavar="URL", help="Spark master (default: local[*])")
    p.add_argument("--end-offsets", metavar="CSV",
                   help="log end offsets of the consumed topics (CSV topic,partition,end_offset): adds the lag view")
    p.add_argument("--views", nargs="+", metavar="NAME",
                   help="which views to write, e.g. records compacted (default: all; lag only with --end-offsets)")
    p.set_defaults(run=_cmd_to_parquet)

    from kgroup.cli_tools import add_tool_parsers  # Kafka's group tools over a dump

    add_tool_parsers(top, _formatter)
    # kgroup.serve is imported only by this command (nothing else in kgroup imports it)
    from kgroup.serve.cli import add_serve_parser

    add_serve_parser(top, _formatter)

    parser.set_defaults(_dump=dump)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run `kgroup` with `argv` (default: the command line); returns the exit status."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version, usage errors
        return int(exc.code or 0) if isinstance(exc.code, int) else EXIT_USAGE
    out, err = sys.stdout, sys.stderr
    run: Callable[..., int] | None = getattr(args, "run", None)
    if run is None:
        (args._dump if args.area == "dump" else parser).print_help(err)
        return EXIT_USAGE
    prog = getattr(args, "prog_name", None) or f"kgroup dump {args.command}"
    try:
        return run(args, out, err)
    except (Usage, FileNotFoundError, DumpError, ConfigError) as exc:
        err.write(f"{prog}: error: {exc}\n")
    except BrokenPipeError:
        # e.g. `kgroup dump decode ... | head`: stop quietly, as `cat` does (128 + SIGPIPE)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
    except KeyboardInterrupt:
        err.write(f"{prog}: interrupted\n")
        return 130
    except OSError as exc:  # permission denied, a directory where a file was expected, ...
        err.write(f"{prog}: error: cannot read {exc.filename or ''}: {exc.strerror or exc}\n")
    return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
