"""Fuzzing the segment readers with damaged real segments (reliability issue, part 4).

tests/log/test_corruption.py and tests/dumps/test_dumps_segments.py pin single, hand-placed
faults (one flipped byte, one cut, one garbage length) on synthetic batches. This suite throws
*several* random faults at once — byte flips, zeroed runs, inserted garbage, a truncated tail —
at the real segments in data/samples (both coordinator topics, compressed and transactional
ones) and at segments `kgroup.log` writes from a coordinator in a realistic state, and checks
through both `kgroup.log.read_segment` and `kgroup.dumps.read_dump`:

- the readers never raise;
- the good batches and the reported bad spans tile the file exactly (nothing silently skipped);
- `read_dump` reports every bad span with the file and its byte position;
- every batch the faults did not touch is still decoded, with the same records.
"""
from __future__ import annotations

import functools
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from badinput_world import profile_settings, world

from kgroup.dumps import DumpReport, read_dump
from kgroup.log import Compression, CorruptBatch, OffsetsLog, RecordBatch, read_segment

SAMPLES = Path(__file__).resolve().parents[2] / "data" / "samples"
COORDINATOR_TOPICS = ("__consumer_offsets-", "__share_group_state-")


def _sample_segments() -> list[Path]:
    return sorted(p for p in SAMPLES.glob("*/*/*.log") if p.parent.name.startswith(COORDINATOR_TOPICS))


@functools.cache
def _written_segments(tmp: str) -> list[Path]:
    """Segments kgroup.log writes: the world's two logs as they are, and re-appended with each codec."""
    c = world().c
    out = [*c.log.write(Path(tmp) / "plain"), *c.share_state_log.write(Path(tmp) / "plain")]
    for codec in (Compression.GZIP, Compression.SNAPPY, Compression.LZ4, Compression.ZSTD):
        log = OffsetsLog(1, compression=codec)
        entries = c.log.entries(c.partition_for("classic-g"))
        for e in entries:
            if e.control is None:  # the raw (key, value) bytes, one batch each
                log.append(0, [(e.key, e.value)], timestamp=e.timestamp)
        out += log.write(Path(tmp) / codec.name.lower())
    return [p for p in out if p.suffix == ".log"]


def _batches(path: Path) -> list:
    return list(read_segment(path))


@st.composite
def damage(draw, size: int):
    """Edits of a file of `size` bytes: (kind, position, payload). Applied from the end backwards
    so positions refer to the clean file."""
    n = draw(st.integers(1, 4))
    edits = []
    for _ in range(n):
        kind = draw(st.sampled_from(["flip", "zeros", "garbage", "truncate"]))
        pos = draw(st.integers(0, max(size - 1, 0)))
        if kind == "flip":
            edits.append((kind, pos, draw(st.integers(1, 255))))
        elif kind == "zeros":
            edits.append((kind, pos, draw(st.integers(1, 64))))
        elif kind == "garbage":
            edits.append((kind, pos, draw(st.binary(min_size=1, max_size=80))))
        else:
            edits.append((kind, pos, None))
    return edits


def apply(clean: bytes, edits: list) -> tuple[bytes, list[tuple[int, int]], int, list[tuple[int, int]]]:
    """The damaged bytes; the touched ranges of the clean file; where the clean file was cut; and
    the insertions (clean position, length) that shift what follows."""
    data = bytearray(clean)
    touched: list[tuple[int, int]] = []
    inserts: list[tuple[int, int]] = []
    cut = len(clean)
    for kind, pos, arg in sorted(edits, key=lambda e: -e[1]):
        if kind == "flip":
            data[pos] ^= arg
            touched.append((pos, pos + 1))
        elif kind == "zeros":
            end = min(pos + arg, len(clean))
            data[pos:end] = bytes(end - pos)
            touched.append((pos, end))
        elif kind == "garbage":
            data[pos:pos] = arg
            inserts.append((pos, len(arg)))
            touched.append((pos, pos))  # a batch that spans the insertion point is split by it
        else:
            cut = min(cut, pos)
    # a cut applies to the clean file: drop everything after it (insertions before it shift it)
    shift_at_cut = sum(n for p, n in inserts if p < cut)
    data = data[:cut + shift_at_cut]
    return bytes(data), touched, cut, inserts


def _intact(batch: RecordBatch, touched, cut) -> bool:
    start, end = batch.position, batch.position + batch.size
    if end > cut:
        return False
    # an insertion exactly at a batch's start leaves the batch whole (it follows the garbage)
    return not any(a < end and b > start if a != b else start < a < end for a, b in touched)


def _moved(position: int, inserts) -> int:
    return position + sum(n for p, n in inserts if p <= position)


def _check(path: Path, damaged_dir: Path, edits: list, reliability) -> None:
    clean = path.read_bytes()
    clean_batches = [b for b in _batches(path) if isinstance(b, RecordBatch)]
    data, touched, cut, inserts = apply(clean, edits)
    target = damaged_dir / path.parent.name / path.name  # keeps the partition dir: the topic
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
    reliability["bad inputs tried"] += 1

    items = list(read_segment(target))  # never raises
    pos = 0
    for item in items:  # good batches and bad spans tile the file
        assert item.position == pos, (item, pos)
        pos += item.size if isinstance(item, RecordBatch) else item.length
    assert pos == len(data)
    decoded = {b.position: b for b in items if isinstance(b, RecordBatch)}
    for b in clean_batches:
        if _intact(b, touched, cut):
            moved = decoded.get(_moved(b.position, inserts))
            assert moved is not None, f"intact batch at {b.position} lost after {edits}"
            assert [(r.offset, r.key, r.value) for r in moved.records] == \
                   [(r.offset, r.key, r.value) for r in b.records]

    report = DumpReport()
    entries = list(read_dump(target, report=report))  # never raises
    spans = sorted(i.position for i in items if isinstance(i, CorruptBatch))
    reported = sorted(p.position for p in report.problems if p.position is not None and p.file == str(target))
    assert set(spans) <= set(reported), (spans, [str(p) for p in report.problems])
    assert report.corrupt_spans == len(spans)
    offsets = {e.offset for e in entries}
    for b in clean_batches:
        if _intact(b, touched, cut) and not b.is_control:
            assert {r.offset for r in b.records} <= offsets, f"records of intact batch {b.position} not read"


SETTINGS = settings(profile_settings(), suppress_health_check=[*profile_settings().suppress_health_check,
                                                               HealthCheck.function_scoped_fixture])


@pytest.mark.parametrize("path", _sample_segments(), ids=lambda p: f"{p.parts[-3]}/{p.parts[-2]}")
@SETTINGS
@given(data=st.data())
def test_damaged_sample_segments_are_read_around_the_damage(path, data, tmp_path_factory, reliability):
    edits = data.draw(damage(path.stat().st_size))
    _check(path, tmp_path_factory.mktemp("damaged"), edits, reliability)


@SETTINGS
@given(data=st.data())
def test_damaged_written_segments_are_read_around_the_damage(data, tmp_path_factory, reliability):
    paths = _written_segments(str(tmp_path_factory.getbasetemp() / "written"))
    path = data.draw(st.sampled_from(paths))
    edits = data.draw(damage(path.stat().st_size))
    _check(path, tmp_path_factory.mktemp("damaged"), edits, reliability)


# -- text dumps: kafka-dump-log output and console-consumer output ---------------------------

def _text_samples() -> list[Path]:
    return sorted([*SAMPLES.glob("*.console.jsonl"), *SAMPLES.glob("*.dump-log.txt")])


@st.composite
def line_damage(draw, n_lines: int):
    """Lines to replace in place (line numbers stay put) and whether to cut the last one short.
    The first line is kept: it is what tells the kind of dump (an unrecognisable file is refused
    up front with DumpError, by design)."""
    k = draw(st.integers(1, min(4, max(n_lines - 1, 1))))
    lines = draw(st.lists(st.integers(2, max(n_lines, 2)), min_size=1, max_size=k, unique=True))
    # no line breaks in the garbage: a replaced line stays one line (numbers stay comparable)
    garbage = st.one_of(st.text(st.characters(blacklist_characters="\r\n"), max_size=60), st.just("{"), st.just("| offset: x"), st.just("baseOffset: -"),
                        st.just('{"key":{"type":1,"data":{}},"value":7}'), st.just("\x00\xff"))
    return {n: draw(garbage) for n in lines if n <= n_lines}, draw(st.booleans())


@pytest.mark.parametrize("path", _text_samples(), ids=lambda p: p.name)
@SETTINGS
@given(data=st.data())
def test_damaged_text_dumps_are_read_around_the_damage(path, data, tmp_path_factory, reliability):
    text = path.read_text()
    lines = text.split("\n")
    replaced, cut_last = data.draw(line_damage(len(lines)))
    damaged = [replaced.get(i + 1, line) for i, line in enumerate(lines)]
    last = max(i for i, line in enumerate(damaged) if line) if any(damaged) else 0
    if cut_last:  # truncated mid-line, as a copy that stopped early
        damaged[last] = damaged[last][: len(damaged[last]) // 2]
        replaced.setdefault(last + 1, damaged[last])
    target = tmp_path_factory.mktemp("damaged") / path.name
    target.write_text("\n".join(damaged))
    reliability["bad inputs tried"] += 1

    clean_report, report = DumpReport(), DumpReport()
    clean = list(read_dump(path, report=clean_report))
    entries = list(read_dump(target, report=report))  # never raises
    assert all(p.file == str(target) and p.line is not None for p in report.problems
               if p.position is None), [str(p) for p in report.problems]
    by_line = {e.line: e for e in entries}
    damaged_lines = set(replaced)
    for e in clean:
        if e.line in damaged_lines:
            continue
        if path.name.endswith(".dump-log.txt") and _batch_header_damaged(lines, damaged_lines, e.line):
            continue  # the batch header a record line belongs to was damaged: its metadata may differ
        got = by_line.get(e.line)
        assert got is not None, f"line {e.line} intact but not read after damaging {sorted(damaged_lines)}"
        assert (got.key, got.value) == (e.key, e.value)


def _batch_header_damaged(lines: list[str], damaged: set[int], line: int) -> bool:
    for n in range(line - 1, 0, -1):
        if n in damaged:
            return True
        if lines[n - 1].startswith(("baseOffset:", "Dumping ")):
            return False
    return False
