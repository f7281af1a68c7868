"""What the `kgroup` commands share (`kgroup.cli` and the group tools of `kgroup.cli_tools`):
exit statuses, usage errors, `--at` parsing, path checks, progress, and the problem report."""
from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TextIO

from kgroup.dumps import DumpEntry, DumpReport
from kgroup.dumps.replay import to_epoch_ms

__all__ = ["EXIT_OK", "EXIT_PROBLEMS", "EXIT_USAGE", "Problems", "Usage", "at_type", "check_paths", "parse_at",
           "progress"]

EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE = 0, 1, 2
#: Plain numbers below this (1973-03-03) are surely not epoch milliseconds: most likely an offset.
_SMALLEST_EPOCH_MS = 100_000_000_000


class Usage(Exception):
    """A one-line error for the user (exit status 2)."""


def parse_at(text: str) -> tuple[str, int]:
    """`--at` text -> ("offset", N) or ("time", epoch ms); ValueError with a hint when it is neither."""
    s = text.strip()
    if s.lower().startswith("offset:"):
        n = s[len("offset:"):].strip()
        if not n.lstrip("+").isdigit():
            raise ValueError(f"{text!r}: offset:N needs a non-negative whole number, e.g. offset:41")
        return "offset", int(n)
    if s.lstrip("+-").isdigit():
        ms = int(s)
        if ms < _SMALLEST_EPOCH_MS:
            raise ValueError(f"{text!r}: plain numbers are epoch milliseconds and this one is before 1973; "
                             f"for an offset write offset:{s}")
        return "time", ms
    try:
        return "time", to_epoch_ms(s)
    except ValueError:
        raise ValueError(f"{text!r} is neither offset:N, an ISO-8601 time (2024-06-10T06:15:00Z) "
                         f"nor epoch milliseconds") from None


def at_type(text: str) -> tuple[str, int]:
    try:
        return parse_at(text)
    except ValueError as exc:  # argparse prefixes "argument --at:"
        raise argparse.ArgumentTypeError(str(exc)) from None


def check_paths(paths: Sequence[str]) -> list[Path]:
    missing = [p for p in paths if not os.path.lexists(p)]
    if missing:
        raise Usage("no such file or directory: " + ", ".join(missing))
    return [Path(p) for p in paths]


def progress(args: argparse.Namespace) -> bool:
    if args.progress is not None:
        return args.progress
    return sys.stderr.isatty()


class Problems:
    """Prints the report's problems to stderr as they are found."""

    def __init__(self, report: DumpReport, err: TextIO) -> None:
        self.report, self.err, self.shown, self.warned = report, err, 0, 0

    def flush(self) -> None:
        problems, warnings_ = self.report.problems, self.report.warnings
        while self.shown < len(problems):
            self.err.write(f"kgroup: {problems[self.shown]}\n")
            self.shown += 1
        while self.warned < len(warnings_):  # records of unknown types: skipped, as Kafka does
            self.err.write(f"kgroup: warning: {warnings_[self.warned]}\n")
            self.warned += 1

    def tap(self, entries: Iterator[DumpEntry]) -> Iterator[DumpEntry]:
        for e in entries:
            self.flush()
            yield e
        self.flush()

    def finish(self, done: str, extra: int = 0) -> int:
        """The exit status; a closing line when something was unreadable (`done`: what happened
        to the readable records, e.g. "printed")."""
        self.flush()
        r = self.report
        n = len(r.problems) + r.problems_dropped + extra
        if r.problems_dropped:
            self.err.write(f"kgroup: ... and {r.problems_dropped} more problems not listed\n")
        if r.warnings_dropped:
            self.err.write(f"kgroup: ... and {r.warnings_dropped} more warnings not listed\n")
        if n or not r.ok:
            self.err.write(f"kgroup: {n} problem(s) in {r.files} file(s); every readable record was {done}\n")
            return EXIT_PROBLEMS
        return EXIT_OK
