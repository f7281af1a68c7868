#!/usr/bin/env python3
"""How fast does kgroup read a `__consumer_offsets` segment?

    python benchmarks/decode.py [--records N] [--repeat R]

Builds a segment of N OffsetCommit records (type-1 key, v3 value) the way a group
coordinator writes them -- one batch per commit of one group, 100 groups x 20 topics x 10
partitions, so batches of 200 records -- once uncompressed and once with zstd, writes both to
a temporary directory and times, on the same files:

  (a) kgroup full decode: batches, records, and every key/value into a typed record with
      `kgroup.records.decode_record` (skipped if kgroup.records is not importable);
  (b) kgroup batch + record iteration only (`read_batches`, touching key and value);
  (c) kafka-python's record-batch iteration (`MemoryRecords` -> `DefaultRecordBatch`,
      touching `.key`/`.value`, no key/value decoding).

Each figure is the best of R runs (default 3), reading the file included. MB/s is segment
bytes (compressed size for zstd) per second. kafka-python needs the `zstandard` package for
zstd; when it is missing this script plugs cramjam's zstd into kafka-python (said in the
output). The goal is (a) >= (c).
"""
from __future__ import annotations

import argparse
import struct
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from kgroup.log import Compression, RecordBatch, encode_batch, read_batches, write_segment  # noqa: E402

GROUPS, TOPICS, PARTITIONS = 100, 20, 10
BATCH = TOPICS * PARTITIONS  # one group's commit of all its partitions = 200 records
BASE_TS = 1_718_000_000_000


def _string(s: str) -> bytes:
    b = s.encode()
    return struct.pack(">h", len(b)) + b


def offset_commit_key(group: str, topic: str, partition: int) -> bytes:
    """OffsetCommitKey: int16 type 1 | group | topic | int32 partition."""
    return struct.pack(">h", 1) + _string(group) + _string(topic) + struct.pack(">i", partition)


_V3 = struct.Struct(">hqih")


def offset_commit_value_v3(offset: int, leader_epoch: int, commit_ts: int) -> bytes:
    """OffsetCommitValue v3: offset int64 | leaderEpoch int32 | metadata "" | commitTimestamp int64."""
    return _V3.pack(3, offset, leader_epoch, 0) + struct.pack(">q", commit_ts)


def build_batches(n: int, codec: Compression, progress: bool) -> list[bytes]:
    keys = [[offset_commit_key(f"consumer-group-{g:03d}", f"orders.events.{t:02d}", p)
             for t in range(TOPICS) for p in range(PARTITIONS)] for g in range(GROUPS)]
    batches = []
    bar = _progress(n, f"encoding ({codec.label})", progress)
    done = 0
    commit = 0
    while done < n:
        size = min(BATCH, n - done)
        ts = BASE_TS + commit * 5
        group_keys = keys[commit % GROUPS]
        records = [(group_keys[i], offset_commit_value_v3(1000 + commit * 3 + i, 7, ts - 2), ts) for i in range(size)]
        batches.append(encode_batch(records, base_offset=done, compression=codec, base_sequence=0))
        done += size
        commit += 1
        bar.update(size)
    bar.close()
    return batches


class _NoBar:
    def update(self, _n: int) -> None:
        pass

    def close(self) -> None:
        pass


def _progress(total: int, desc: str, enabled: bool):
    if not enabled:
        return _NoBar()
    try:
        from tqdm import tqdm
    except ImportError:
        return _NoBar()
    return tqdm(total=total, desc=desc, unit="rec", unit_scale=True, leave=False, file=sys.stderr)


# ---- the three readers ----------------------------------------------------------------------


def kgroup_full(path: Path) -> int:
    from kgroup.records import decode_record

    n = 0
    for batch in read_batches(path.read_bytes(), source=str(path)):
        if batch.__class__ is not RecordBatch:
            raise SystemExit(f"unexpected corruption: {batch}")
        if batch.is_control:
            continue
        for _offset, _timestamp, key, value, _headers in batch.records:
            decode_record(key, value)
            n += 1
    return n


def kgroup_iterate(path: Path) -> int:
    n = 0
    for batch in read_batches(path.read_bytes(), source=str(path)):
        for rec in batch.records:
            rec.key
            rec.value
            n += 1
    return n


def kafka_python_iterate(path: Path) -> int:
    from kafka.record import MemoryRecords

    n = 0
    for batch in MemoryRecords(path.read_bytes()):
        for rec in batch:
            rec.key
            rec.value
            n += 1
    return n


def _kafka_python_zstd_shim() -> str | None:
    """Make kafka-python able to read zstd without the `zstandard` package (via cramjam)."""
    import io
    import types

    import cramjam
    import kafka.codec as codec

    if codec.has_zstd():
        return None

    class _Reader:
        def __init__(self, fileobj: io.BytesIO, **_kw):
            self._data = fileobj.read()

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def read(self) -> bytes:
            return bytes(cramjam.zstd.decompress(self._data))

    class _Decompressor:
        def stream_reader(self, fileobj, **kw):
            return _Reader(fileobj, **kw)

    codec.zstd = types.SimpleNamespace(ZstdDecompressor=_Decompressor)
    return "kafka-python has no zstandard package here: its zstd_decode uses cramjam's zstd"


def time_best(fn, path: Path, repeat: int) -> tuple[float, int]:
    best, count = float("inf"), 0
    for _ in range(repeat):
        t0 = time.perf_counter()
        count = fn(path)
        best = min(best, time.perf_counter() - t0)
    return best, count


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--records", type=int, default=1_000_000, help="records per segment (default 1,000,000)")
    ap.add_argument("--repeat", type=int, default=3, help="runs per measurement; the best is shown (default 3)")
    ap.add_argument("--no-progress", action="store_true", help="no tqdm progress bars")
    args = ap.parse_args(argv)

    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            import kafka.record  # noqa: F401
            have_kafka = True
        except ImportError:
            have_kafka = False
    try:
        import kgroup.records  # noqa: F401
        have_records = True
    except Exception as exc:  # noqa: BLE001 - report and go on with (b) and (c)
        print(f"note: kgroup.records not importable ({exc}); skipping (a)")
        have_records = False
    note = _kafka_python_zstd_shim() if have_kafka else None

    print(f"python {sys.version.split()[0]}; {args.records:,} OffsetCommit records (v3 values) per segment, "
          f"batches of {BATCH}, best of {args.repeat}")
    if note:
        print(f"note: {note}")
    rows = []
    with tempfile.TemporaryDirectory(prefix="kgroup-bench-") as tmp:
        for codec in (Compression.NONE, Compression.ZSTD):
            batches = build_batches(args.records, codec, not args.no_progress)
            path = write_segment(Path(tmp) / f"__consumer_offsets-{int(codec)}", 0, batches)
            mb = path.stat().st_size / 1e6
            print(f"\nsegment {codec.label}: {mb:.1f} MB, {len(batches):,} batches")
            readers = []
            if have_records:
                readers.append(("(a) kgroup full decode (typed records)", kgroup_full))
            readers.append(("(b) kgroup batches + records", kgroup_iterate))
            if have_kafka:
                readers.append(("(c) kafka-python batches + records", kafka_python_iterate))
            for label, fn in readers:
                secs, count = time_best(fn, path, args.repeat)
                if count != args.records:
                    raise SystemExit(f"{label}: read {count} records, expected {args.records}")
                rate = count / secs
                rows.append((codec.label, label, rate))
                print(f"  {label:<42} {secs:7.3f} s  {rate:>12,.0f} records/s  {mb / secs:8.1f} MB/s")
    if have_records and have_kafka:
        print()
        for codec in ("none", "zstd"):
            r = {label[:3]: rate for c, label, rate in rows if c == codec}
            verdict = "OK" if r["(a)"] >= r["(c)"] else "BELOW GOAL"
            print(f"{codec}: (a)/(c) = {r['(a)'] / r['(c)']:.2f}x, (b)/(c) = {r['(b)'] / r['(c)']:.2f}x  [{verdict}]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
