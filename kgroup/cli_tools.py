"""`kgroup consumer-groups`, `kgroup streams-groups`, `kgroup share-groups`: Kafka's group tools
over a dump, with their own option names and output (`kgroup.tools`), `--dump PATH...` and
`--at TIME` in place of `--bootstrap-server`. Nothing here talks to a cluster.

Kept beside `kgroup/cli.py` so that file stays about `kgroup dump`; both use the plumbing of
`kgroup/cli_plumbing.py` (paths, problems, progress, exit status).
"""
from __future__ import annotations

import argparse
import os
import sys
import warnings
from collections.abc import Callable
from typing import Any, TextIO

from kgroup.cli_plumbing import Problems, Usage, at_type, check_paths
from kgroup.cli_plumbing import progress as show_progress
from kgroup.dumps import DumpReport, read_dump
from kgroup.dumps.metadata import find_cluster_metadata
from kgroup.dumps.replay import format_ms, replay

__all__ = ["add_tool_parsers"]

_DUMP_HELP = """\
--dump takes any dump `kgroup dump` reads (a broker log dir, __consumer_offsets-N dirs, .log
segments, saved kafka-dump-log.sh or console-consumer output); --at is `kgroup dump describe`'s
(offset:N, an ISO-8601 time, epoch ms; default: the end of the dump). A log dir holding the
KRaft metadata log gives topic names and, from replication-offset-checkpoint, LOG-END-OFFSET
and LAG; without it they print "-", as Kafka prints unknown values. The coordinator column
names the group's __consumer_offsets partition (a dump has no broker).

exit status: 0 all read; 1 the dump had unreadable parts, or a group named is not in it;
2 bad usage, or a path that is missing or cannot be read at all.
"""

_CONSUMER_EPILOG = _DUMP_HELP + """
--reset-offsets plans, never executes (--execute is refused): --to-committed-at TIME takes the
offsets the group had committed at TIME (the dump replayed to TIME); --to-earliest-committed
the first offset the dump shows it committing; --shift-by and --to-offset are Kafka's, against
the offsets committed at --at. --dry-run (the default) prints Kafka's GROUP TOPIC PARTITION
NEW-OFFSET table; --export prints the CSV `kafka-consumer-groups.sh --reset-offsets --from-file`
reads. Partitions in scope without an offset to reset to are left out and named on stderr.

examples:
  kgroup consumer-groups --dump data/samples/kip848-log-dir --describe --group billing-app
  kgroup consumer-groups --dump data/samples/offsets --list --state
  kgroup consumer-groups --dump data/samples/static-rolling-restart --describe --all-groups --members --verbose
  kgroup consumer-groups --dump broker-copy/ --reset-offsets --group app --all-topics \\
      --to-committed-at 2024-06-10T03:14:00Z --export > plan.csv
  kgroup consumer-groups --dump data/samples/static-rolling-restart --timeline --group orders-app
"""

_STREAMS_EPILOG = _DUMP_HELP + """
examples:
  kgroup streams-groups --dump data/samples/streams-app --describe --group clickstream --members --verbose
  kgroup streams-groups --dump data/samples/streams-app --list --state
"""

_SHARE_EPILOG = _DUMP_HELP + """
Start offsets (SPSO) come from the dump's __share_group_state records.

examples:
  kgroup share-groups --dump data/samples/share-state --describe --group queue-app --offsets --verbose
"""


# ---------------------------------------------------------------------------------------------
# the dump, replayed

class _Dump:
    """The dump read once; replayed to any moment on request (`--at`, `--to-committed-at`)."""

    def __init__(self, args: argparse.Namespace, err: TextIO) -> None:
        paths = check_paths(args.dump)
        self.report = DumpReport()
        self.problems = Problems(self.report, err)
        self.err = err
        self.entries = list(self.problems.tap(read_dump(paths, report=self.report, progress=show_progress(args))))
        self.kw: dict[str, Any] = {"num_partitions": args.partitions}
        if args.metadata is not None:
            if not os.path.exists(args.metadata):
                raise Usage(f"--metadata: no such file or directory: {args.metadata}")
            self.kw["metadata"] = args.metadata
        elif not args.no_metadata:
            found = find_cluster_metadata(paths)  # replaying entries does not look for it
            self.kw["metadata"] = found if found is not None else False
        else:
            self.kw["metadata"] = False
        self.warned: set[str] = set()

    def at(self, at: tuple[str, int] | None) -> Any:
        """A coordinator holding what the dump says at `at` (("offset"|"time", N), None: the end)."""
        kw = dict(self.kw)
        if at is not None:
            kw["offset" if at[0] == "offset" else "at"] = at[1]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            c = replay(self.entries, **kw)
        messages = [str(w.message) for w in caught]
        if c.replay_stats.cluster_metadata is None and any(type(g).__name__ in ("ConsumerGroup", "ShareGroup")
                                                           for g in c.groups.values()):
            # as Kafka's describe leaves out a topic id its metadata does not know
            messages.append("the dump holds no cluster metadata: KIP-848 and share groups name topics by id, so "
                            "their members' partitions are not shown; add the broker's metadata log (its log dir, "
                            "or --metadata <log dir>/__cluster_metadata-0)")
        for m in messages:  # once per message, however often the dump is replayed
            if m not in self.warned:
                self.warned.add(m)
                self.err.write(f"kgroup: warning: {m}\n")
        return c


def _at_text(at: tuple[str, int] | None) -> str:
    if at is None:
        return "at the end of the dump"
    return f"at offset {at[1]}" if at[0] == "offset" else f"at {format_ms(at[1])}"


# ---------------------------------------------------------------------------------------------
# shared checks (Kafka's checkArgs, in its words)

def _actions(args: argparse.Namespace, names: tuple[str, ...]) -> str:
    given = [n for n in names if getattr(args, n)]
    if len(given) != 1:
        raise Usage("Command must include exactly one action: " + ", ".join(f"--{n.replace('_', '-')}" for n in names))
    return given[0]


def _groups(args: argparse.Namespace, action: str, list_all: Callable[[], list[str]]) -> list[str]:
    if not args.group and not args.all_groups:
        raise Usage(f"Option [{action}] takes one of these options: [all-groups], [group]")
    return list_all() if args.all_groups else list(dict.fromkeys(args.group))


def _describe_view(args: argparse.Namespace) -> str:
    views = [v for v in ("members", "offsets") if getattr(args, v)] + (["state"] if args.state is not None else [])
    if len(views) > 1:
        raise Usage("Option [describe] takes at most one of these options: [members], [offsets], [state]")
    if args.state:
        raise Usage("Option [describe] does not take a value for [state]")
    return views[0] if views else "offsets"


def _write(out: TextIO, err: TextIO, texts: tuple[str, str]) -> None:
    err.write(texts[1])
    out.write(texts[0])


def _finish(dump: _Dump, missing: list[str], at: tuple[str, int] | None) -> int:
    status = dump.problems.finish("replayed")
    if missing:
        when = "" if at is None else f" {_at_text(at)}"
        dump.err.write(f"kgroup: no such group in the dump{when}: {', '.join(missing)}\n")
        return max(status, 1)
    return status


def _timeline(dump: _Dump, args: argparse.Namespace, out: TextIO) -> list[str]:
    from kgroup.tools.timeline import format_timeline, timeline

    if len(args.group or []) != 1:
        raise Usage("--timeline takes exactly one --group")

    c = dump.at(args.at)
    bar = None

    def progress(done: int, total: int) -> None:
        # one replay per record of the group: worth a bar on a long dump
        nonlocal bar
        if bar is None:
            from tqdm.auto import tqdm

            bar = tqdm(total=total, unit="record", desc=f"timeline of {args.group[0]}", file=sys.stderr)
        bar.update(done - bar.n)

    blocks = list(timeline(c, args.group[0], progress=progress if show_progress(args) else None))
    if bar is not None:
        bar.close()
    out.write(format_timeline(blocks, args.group[0]))
    return [] if blocks else [args.group[0]]


# ---------------------------------------------------------------------------------------------
# consumer-groups

def _cmd_consumer(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from kgroup.tools import consumer_groups as cg

    action = _actions(args, ("list", "describe", "reset_offsets", "timeline"))
    try:
        states = cg.parse_states(",".join(args.state)) if args.state and action == "list" else []
        types = cg.parse_types(",".join(args.type)) if args.type else []
    except ValueError as exc:
        raise Usage(str(exc)) from None
    view = _describe_view(args) if action == "describe" else None
    if action == "reset_offsets":
        _check_reset(args)
    dump = _Dump(args, err)
    missing: list[str] = []
    if action == "timeline":
        missing = _timeline(dump, args, out)
        return _finish(dump, missing, args.at)
    c = dump.at(args.at)
    if action == "list":
        groups = cg.list_groups(c, states, types)
        out.write(cg.format_list(groups, with_type=args.type is not None, with_state=args.state is not None))
    elif action == "describe":
        ids = _groups(args, "describe", lambda: [g["group"] for g in cg.list_groups(c)])
        collect, fmt = {"offsets": (cg.collect_offsets, cg.format_offsets),
                        "members": (cg.collect_members, cg.format_members),
                        "state": (cg.collect_states, cg.format_states)}[view]
        groups = collect(c, ids)
        _write(out, err, fmt(groups, verbose=args.verbose))
        missing = [g.group_id for g in groups if g.state == "Dead"]
    else:
        missing = _reset(dump, c, args, out, err)
    return _finish(dump, missing, args.at)


_SCENARIOS = ("to_committed_at", "to_earliest_committed", "shift_by", "to_offset")


def _check_reset(args: argparse.Namespace) -> None:
    if args.execute:
        raise Usage("--execute: kgroup plans resets from a dump and never touches a cluster; apply the plan with "
                     "kafka-consumer-groups.sh --reset-offsets --from-file <--export output> --execute")
    if args.dry_run and args.export:
        pass  # Kafka accepts both: the export is printed, nothing is executed
    given = [s for s in _SCENARIOS if getattr(args, s) not in (None, False)]
    if len(given) != 1:
        raise Usage("Option [reset-offsets] takes exactly one of these options: " +
                     ", ".join(f"[{s.replace('_', '-')}]" for s in _SCENARIOS))
    if not args.all_topics and not args.topic:
        raise Usage("One of the reset scopes should be defined: --all-topics, --topic.")
    if args.all_topics and args.topic:
        raise Usage("Option [reset-offsets] takes only one of these options: [all-topics], [topic]")


def _reset(dump: _Dump, c: Any, args: argparse.Namespace, out: TextIO, err: TextIO) -> list[str]:
    from kgroup.tools import consumer_groups as cg
    from kgroup.tools.reset_offsets import export_csv, format_dry_run, plan_reset

    ids = _groups(args, "reset-offsets", lambda: [g["group"] for g in cg.list_groups(c)])
    then = None
    then_text = ""
    if args.to_committed_at is not None:
        past = dump.at(args.to_committed_at)
        then = {g: cg.committed_offsets(past, g) for g in ids}
        then_text = _at_text(args.to_committed_at)
    try:
        plan = plan_reset(c, ids, all_topics=args.all_topics, topics=args.topic or [], committed_then=then,
                          then_text=then_text, to_earliest_committed=args.to_earliest_committed,
                          shift_by=args.shift_by, to_offset=args.to_offset)
    except ValueError as exc:
        raise Usage(str(exc)) from None
    for w in plan.warnings:
        err.write(f"kgroup: warning: {w}\n")
    for line in plan.left_out:
        err.write(f"kgroup: {line}\n")
    out.write(export_csv(plan, single_group=len(args.group or []) == 1) if args.export else format_dry_run(plan))
    known = {g["group"] for g in cg.list_groups(c)}
    return [g for g in ids if g not in known and not (then and then.get(g))]


# ---------------------------------------------------------------------------------------------
# streams-groups and share-groups

def _cmd_streams_or_share(tool: str) -> Callable[[argparse.Namespace, TextIO, TextIO], int]:
    def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
        from kgroup.tools import share_groups as sh, streams_groups as sg

        m = sg if tool == "streams" else sh
        valid = sg.STREAMS_GROUP_STATES if tool == "streams" else sh.SHARE_GROUP_STATES
        action = _actions(args, ("list", "describe", "timeline"))
        from kgroup.tools.consumer_groups import parse_states

        try:
            states = parse_states(",".join(args.state), valid) if args.state and action == "list" else []
        except ValueError as exc:
            raise Usage(str(exc)) from None
        view = _describe_view(args) if action == "describe" else None
        dump = _Dump(args, err)
        missing: list[str] = []
        if action == "timeline":
            return _finish(dump, _timeline(dump, args, out), args.at)
        c = dump.at(args.at)
        if action == "list":
            out.write(m.format_list(m.list_groups(c, states), with_state=args.state is not None))
        else:
            ids = _groups(args, "describe", lambda: [g["group"] for g in m.list_groups(c)])
            if view == "members" and tool == "streams":
                groups = sg.collect_members(c, ids, verbose=args.verbose)
            else:
                groups = {"offsets": m.collect_offsets, "members": m.collect_members,
                          "state": m.collect_states}[view](c, ids)
            fmt = {"offsets": m.format_offsets, "members": m.format_members, "state": m.format_states}[view]
            _write(out, err, fmt(groups, verbose=args.verbose))
            # a share group known only from __share_group_state still has start offsets to show
            missing = [g.group_id for g in groups if g.state == "Dead" and not (view == "offsets" and g.rows)]
        return _finish(dump, missing, args.at)
    return run


# ---------------------------------------------------------------------------------------------
# parsers

def _common(p: argparse.ArgumentParser) -> None:
    src = p.add_argument_group("the dump (in place of --bootstrap-server)")
    src.add_argument("--dump", nargs="+", required=True, metavar="PATH", help="the dump: any kind `kgroup dump` reads")
    src.add_argument("--at", type=at_type, metavar="TIME|offset:N", help="the moment (default: the end of the dump)")
    src.add_argument("--metadata", metavar="DIR", help="the broker's KRaft metadata log (default: looked for in --dump)")
    src.add_argument("--no-metadata", action="store_true", help="do not look for a metadata log in --dump")
    src.add_argument("--partitions", type=int, metavar="N", help="offsets.topic.num.partitions (default: inferred)")
    src.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                     help="progress bar on stderr (default: when stderr is a terminal)")
    act = p.add_argument_group("actions (exactly one)")
    act.add_argument("--list", action="store_true", help="List all groups.")
    act.add_argument("--describe", action="store_true", help="Describe groups (offsets, members or state).")
    act.add_argument("--timeline", action="store_true",
                     help="kgroup: how --group's describe output changed over the dump, one block per change")
    sel = p.add_argument_group("describe options")
    sel.add_argument("--group", action="append", metavar="G", help="The group we wish to act on (repeatable).")
    sel.add_argument("--all-groups", action="store_true", help="Apply to all groups.")
    sel.add_argument("--offsets", action="store_true", help="Describe the group's offsets (the default).")
    sel.add_argument("--members", action="store_true", help="Describe members of the group.")
    sel.add_argument("--verbose", action="store_true", help="Provide additional information, if any.")
    sel.add_argument("--state", nargs="*", metavar="S",
                     help="With --describe: the group's state. With --list: show states, or only groups in "
                          "these (comma-separated, e.g. stable,empty).")


def add_tool_parsers(top: Any, formatter: Any) -> None:
    """Add the three tool commands to the `kgroup` subparsers `top`."""
    p = top.add_parser("consumer-groups", help="kafka-consumer-groups.sh over a dump", formatter_class=formatter,
                       epilog=_CONSUMER_EPILOG,
                       description="kafka-consumer-groups.sh's --list, --describe and --reset-offsets (planned, "
                                   "never executed)\nover a dump at any moment.")
    _common(p)
    p.add_argument("--type", nargs="*", metavar="T",
                   help="With --list: show types, or only groups of these (consumer,classic).")
    r = p.add_argument_group("reset-offsets (a plan; nothing is executed)")
    r.add_argument("--reset-offsets", action="store_true", help="Plan a reset of the group's offsets.")
    r.add_argument("--all-topics", action="store_true", help="Every partition the group has committed.")
    r.add_argument("--topic", action="append", metavar="T[:P,...]", help="A topic, or some of its partitions.")
    r.add_argument("--to-committed-at", type=at_type, metavar="TIME|offset:N",
                   help="kgroup: the offsets the group had committed at TIME")
    r.add_argument("--to-earliest-committed", action="store_true",
                   help="kgroup: the first offset the dump shows the group committing")
    r.add_argument("--shift-by", type=int, metavar="N", help="The committed offset (at --at) shifted by N.")
    r.add_argument("--to-offset", type=int, metavar="N", help="Reset offsets to a specific offset.")
    r.add_argument("--dry-run", action="store_true", help="Print the plan as Kafka's dry run does (the default).")
    r.add_argument("--export", action="store_true", help="Print the plan as the CSV --from-file reads.")
    r.add_argument("--execute", action="store_true", help=argparse.SUPPRESS)
    p.set_defaults(run=_cmd_consumer, prog_name="kgroup consumer-groups")

    for tool, epilog in (("streams", _STREAMS_EPILOG), ("share", _SHARE_EPILOG)):
        p = top.add_parser(f"{tool}-groups", help=f"kafka-{tool}-groups.sh over a dump", formatter_class=formatter,
                           epilog=epilog,
                           description=f"kafka-{tool}-groups.sh's --list and --describe over a dump at any moment.")
        _common(p)
        p.set_defaults(run=_cmd_streams_or_share(tool), prog_name=f"kgroup {tool}-groups")

