"""Reading saved `kafka-console-consumer.sh --formatter <offsets/group formatter>` output.

Forms (see `textforms`): the 4.x JSON objects, which the formatters print *without* a line
separator, so one line may hold many objects back to back (read with `raw_decode`), and the
older `[g,t,p]::OffsetAndMetadata(...)` / `g::GroupMetadata(...)` / `::NULL` lines.

Lines may start with what `DefaultMessageFormatter` prints before a value when asked with
`--property print.timestamp=true` (`CreateTime:<ms>`, `LogAppendTime:<ms>` or `NO_TIMESTAMP`),
`print.partition` (`Partition:<p>`), `print.offset` (`Offset:<o>`), `print.delivery`
(`Delivery:<n>`) or `print.headers` (`NO_HEADERS`), in that order, each followed by the
key separator (a tab by default); they fill in `timestamp`, `partition` and `offset`. The
custom formatters ignore those properties, so such lines come from post-processed or
default-formatter output. `Processed a total of <n> messages` is ignored.
"""
from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator

from kgroup.records.records import CONSUMER_OFFSETS

from .model import DumpEntry, DumpReport, text_lines
from .textforms import Parsed, parse_console_json, parse_console_legacy

__all__ = ["read_console_lines", "looks_like_console", "strip_prefixes"]

_DECODER = json.JSONDecoder()
_PREFIX = re.compile(r"(?:(?P<tt>CreateTime|LogAppendTime):(?P<ts>-?\d+)|(?P<nots>NO_TIMESTAMP)|"
                     r"Partition:(?P<p>-?\d+)|Offset:(?P<o>-?\d+)|Delivery:(?P<d>\w+)|(?P<nh>NO_HEADERS))\t")
_PROCESSED = re.compile(r"^Processed a total of \d+ messages?$")
_WS = re.compile(r"\s*")


def strip_prefixes(line: str) -> tuple[str, dict[str, int]]:
    """The line without DefaultMessageFormatter prefixes, and what they said."""
    found: dict[str, int] = {}
    pos = 0
    while m := _PREFIX.match(line, pos):
        if m["ts"] is not None:
            found["timestamp"] = int(m["ts"])
        if m["p"] is not None:
            found["partition"] = int(m["p"])
        if m["o"] is not None:
            found["offset"] = int(m["o"])
        pos = m.end()
    return line[pos:], found


def looks_like_console(line: str) -> bool:
    """Whether a (first non-empty) line is console-consumer formatter output."""
    body, _ = strip_prefixes(line.strip())
    if body.startswith("{"):
        return '"key"' in body[:200] or body.startswith('{"key"')
    return parse_console_legacy(body) is not None or _PROCESSED.match(body) is not None


def _entry(source: str, lineno: int, parsed: Parsed, topic: str | None, prefix: dict[str, int],
           text: str, report: DumpReport) -> DumpEntry:
    entry = DumpEntry(source, "console", parsed.topic or topic or CONSUMER_OFFSETS, prefix.get("partition"),
                      prefix.get("offset"), prefix.get("timestamp"), None, lineno, parsed.record, None, None,
                      fields=parsed.fields, error=parsed.error, meta={"text": text})
    if parsed.error is not None:
        report.unreadable(entry, source, line=lineno)
    report.count_entry(entry)
    return entry


def read_console_lines(lines: Iterable[str], source: str, report: DumpReport, *, topic: str | None = None,
                       tick: Callable[[int], None] = lambda n: None) -> Iterator[DumpEntry]:
    """Entries of one saved console-consumer output (an iterable of its lines)."""
    for lineno, line in text_lines(lines, report, tick):
        body, prefix = strip_prefixes(line)
        if body.startswith("{"):
            pos, n = 0, len(body)
            while pos < n:
                try:
                    obj, end = _DECODER.raw_decode(body, pos)
                except ValueError as exc:
                    report.garbage_lines += 1
                    report.problem(source, f"unreadable JSON at character {pos + 1}: {exc.msg}: "
                                           f"{body[pos:pos + 80]!r}", line=lineno)
                    break
                yield _entry(source, lineno, parse_console_json(obj, topic), topic, prefix, body[pos:end], report)
                pos = _WS.match(body, end).end()
            continue
        if _PROCESSED.match(body):
            continue
        parsed = parse_console_legacy(body)
        if parsed is None:
            report.garbage_lines += 1
            report.problem(source, f"unreadable line: {line[:120]!r}", line=lineno)
            continue
        yield _entry(source, lineno, parsed, topic, prefix, body, report)
