#!/usr/bin/env python3
"""How fast are large `__consumer_offsets` dumps read? Spark end to end, then one core.

    python benchmarks/dumps.py [--dir DIR] [--quick] [--master local[2]] [--repeat N]

Makes (or reuses, when DIR holds one) a synthetic dump with `data/make_large_dump.py`: 5M
records by default (>= 500 MB of lz4 batches, 8 partitions, 2000 groups, several segments per
partition), then measures on the same segment files:

  (a) Spark, `local[2]` by default: `kgroup.dumps.spark.load` forced through every row with the
      `noop` writer (decode, transaction status, JSON column, Arrow to the JVM; nothing is
      collected to the driver). "cold" is the first run of the session (Python workers start,
      imports), "warm" the best of --repeat later runs. Then the same rows written to parquet.
  (b) the Spark row path on one core, without Spark: `kgroup.dumps.ranges.run_task` + Arrow
      batches (what each executor task does), to show where the time goes;
  (c) the pure-Python reader on one core: `read_dump` (entries with typed records, no JSON);
  (d) kafka-python's record-batch parser (`MemoryRecords`, touching key/value; no decoding) as a
      baseline. kafka-python needs the lz4/zstandard packages for those codecs; when missing,
      cramjam's codecs are plugged in (said in the output).

Figures: records/s and MB/s (segment bytes on disk per second). --quick: 500k records. The goal
(kgroup issue 5): (a) >= 500k records/s on a 2-core machine. No assertion: numbers are printed.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
for p in (ROOT, ROOT / "data"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

GOAL = 500_000


def _segments(d: Path) -> list[Path]:
    return sorted(d.glob("__consumer_offsets-*/*.log"))


def ensure_dump(d: Path, args: argparse.Namespace) -> dict:
    manifest = d / "manifest.json"
    if manifest.is_file():
        m = json.loads(manifest.read_text())
        # the generator stops at the end of a coordinator write: a few records past the target
        if 0 <= m["records"] - args.records < 1000 and m["codec"] == args.codec:
            print(f"reusing the dump in {d}")
            return m
        raise SystemExit(f"{d} holds a dump of {m['records']:,} {m['codec']} records; "
                         f"use another --dir for {args.records:,} {args.codec} records")
    from make_large_dump import make_dump

    print(f"generating {args.records:,} records into {d} ...", flush=True)
    return make_dump(d, records=args.records, partitions=args.partitions, groups=args.groups, codec=args.codec,
                     progress=not args.no_progress)


# ---- (a) Spark ------------------------------------------------------------------------------------


def bench_spark(d: Path, args: argparse.Namespace, n: int) -> list[tuple[str, float, int]]:
    from kgroup.dumps import spark as kds

    t0 = time.perf_counter()
    spark = kds.session(args.master, app_name="kgroup-bench")
    spark.sparkContext.setLogLevel("ERROR")
    print(f"spark {spark.version}, master {spark.sparkContext.master}, "
          f"session started in {time.perf_counter() - t0:.1f} s", flush=True)
    rows = []

    def run(label: str, write) -> float:
        t = time.perf_counter()
        write(kds.load(spark, [d]))
        secs = time.perf_counter() - t
        rows.append((label, secs, n))
        print(f"  {label:<48} {secs:7.1f} s", flush=True)
        return secs

    run("(a) spark load -> noop, cold", lambda df: df.write.format("noop").mode("overwrite").save())
    warm = [run(f"(a) spark load -> noop, warm run {i + 1}",
                lambda df: df.write.format("noop").mode("overwrite").save()) for i in range(args.repeat)]
    best = min(warm)
    rows = [r for r in rows if "warm run" not in r[0]] + [("(a) spark load -> noop, warm (best)", best, n)]
    with tempfile.TemporaryDirectory(prefix="kgroup-bench-parquet-", dir=args.tmp) as out:
        run("(a) spark load -> parquet (records view)",
            lambda df: df.write.mode("overwrite").parquet(str(Path(out) / "records")))
        parquet_mb = sum(f.stat().st_size for f in Path(out, "records").glob("*.parquet")) / 1e6
    print(f"  parquet written: {parquet_mb:.0f} MB", flush=True)
    spark.stop()
    return rows


# ---- (b)-(d) one core -----------------------------------------------------------------------------


def bench_row_path(d: Path) -> tuple[float, int]:
    from kgroup.dumps.ranges import plan_scan, run_task

    t0 = time.perf_counter()
    plan = plan_scan(d)
    n = 0
    for i in range(len(plan.tasks)):
        for chunk in run_task(plan, i):
            chunk.to_arrow()
            n += len(chunk)
    return time.perf_counter() - t0, n


def bench_read_dump(d: Path) -> tuple[float, int]:
    from kgroup.dumps import read_dump

    t0 = time.perf_counter()
    n = sum(1 for _ in read_dump(d))
    return time.perf_counter() - t0, n


def _kafka_python_shims() -> list[str]:
    """Plug cramjam's lz4/zstd into kafka-python when its own codec packages are missing."""
    import types

    import cramjam
    import kafka.codec as codec
    import kafka.record.default_records as dr

    notes = []
    if not codec.has_lz4():
        def lz4_decode(payload: bytes) -> bytes:
            return bytes(cramjam.lz4.decompress(payload))

        codec.lz4 = types.SimpleNamespace(decompress=lz4_decode)
        codec.lz4_decode = dr.lz4_decode = lz4_decode
        notes.append("lz4")
    if not codec.has_zstd():
        def zstd_decode(payload: bytes) -> bytes:
            return bytes(cramjam.zstd.decompress(payload))

        codec.zstd = types.SimpleNamespace(decompress=zstd_decode)
        codec.zstd_decode = dr.zstd_decode = zstd_decode
        notes.append("zstd")
    return notes


def bench_kafka_python(d: Path) -> tuple[float, int]:
    from kafka.record import MemoryRecords

    t0 = time.perf_counter()
    n = 0
    for seg in _segments(d):
        for batch in MemoryRecords(seg.read_bytes()):
            for rec in batch:
                rec.key
                rec.value
                n += 1
    return time.perf_counter() - t0, n


# ---- main -------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", help="where the dump is (reused if present; default: a temporary directory)")
    ap.add_argument("--quick", action="store_true", help="500k records instead of 5M")
    ap.add_argument("--records", type=int, help="records in the dump (default 5,000,000; 500,000 with --quick)")
    ap.add_argument("--partitions", type=int, default=8)
    ap.add_argument("--groups", type=int, default=2000)
    ap.add_argument("--codec", default="lz4", choices=["none", "gzip", "snappy", "lz4", "zstd"])
    ap.add_argument("--master", default="local[2]", help="Spark master (default local[2])")
    ap.add_argument("--repeat", type=int, default=2, help="warm Spark runs; the best is shown (default 2)")
    ap.add_argument("--skip", default="", help="comma list of parts to skip: spark,rows,read_dump,kafka")
    ap.add_argument("--tmp", default=None, help="directory for temporary files")
    ap.add_argument("--no-progress", action="store_true")
    args = ap.parse_args(argv)
    if args.records is None:
        args.records = 500_000 if args.quick else 5_000_000
    skip = {s.strip() for s in args.skip.split(",") if s.strip()}

    tmp = None
    if args.dir:
        d = Path(args.dir)
    else:
        tmp = tempfile.TemporaryDirectory(prefix="kgroup-bench-dump-", dir=args.tmp)
        d = Path(tmp.name)
    try:
        t0 = time.perf_counter()
        m = ensure_dump(d, args)
        size = sum(f.stat().st_size for f in _segments(d))
        n = m["records"]
        print(f"dump: {n:,} records, {m['batches']:,} batches, {m['segments']} segments, {size / 1e6:,.1f} MB "
              f"({m['codec']}), {m['partitions']} partitions, {m['groups']} groups "
              f"[ready in {time.perf_counter() - t0:.1f} s]")
        print(f"python {sys.version.split()[0]}, {platform.machine()}, {os.cpu_count()} CPUs\n", flush=True)

        results: list[tuple[str, float, int]] = []
        if "spark" not in skip:
            results += bench_spark(d, args, n)
        if "rows" not in skip:
            print("  (b) row path on one core ...", flush=True)
            secs, count = bench_row_path(d)
            results.append(("(b) ranges.run_task + Arrow, one core", secs, count))
        if "read_dump" not in skip:
            print("  (c) read_dump on one core ...", flush=True)
            secs, count = bench_read_dump(d)
            results.append(("(c) read_dump (typed entries), one core", secs, count))
        if "kafka" not in skip:
            try:
                notes = _kafka_python_shims()
                if notes:
                    print(f"  note: kafka-python has no {'/'.join(notes)} package here: cramjam's codecs are used")
                print("  (d) kafka-python MemoryRecords on one core ...", flush=True)
                secs, count = bench_kafka_python(d)
                results.append(("(d) kafka-python MemoryRecords, one core", secs, count))
            except ImportError as exc:
                print(f"  (d) skipped: {exc}")

        print(f"\n{'':<48} {'seconds':>8} {'records/s':>12} {'MB/s':>8}")
        for label, secs, count in results:
            if count != n:
                print(f"{label}: read {count:,} rows, expected {n:,}")
            print(f"{label:<48} {secs:8.1f} {count / secs:12,.0f} {size / 1e6 / secs:8.1f}")
        warm = next((count / secs for label, secs, count in results if "warm" in label), None)
        if warm is not None:
            verdict = "OK" if warm >= GOAL else "BELOW GOAL"
            print(f"\nSpark warm end to end: {warm:,.0f} records/s vs goal {GOAL:,} [{verdict}]")
    finally:
        if tmp is not None:
            tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
