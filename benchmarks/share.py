#!/usr/bin/env python3
"""How many records per second can one share-partition deliver and have acknowledged?

    python benchmarks/share.py [--consumers 1 10 100] [--batches 200] [--quick]

One topic-partition holds `--batches` record batches of 500 records (produced up front, real
magic-2 batches). N consumers of one share group each open a share session (ShareFetch epoch
0) and then loop, round-robin: ShareFetch with MaxRecords 500, acknowledging what the
previous fetch acquired piggy-backed on the next one (the KafkaShareConsumer's loop), until
every record is acknowledged. Everything goes through `Coordinator.handle` with real kio
requests, and every durable change is a WriteShareGroupState to the real share coordinator
(records in `__share_group_state`).

Acknowledgement modes:
- batch: one AcknowledgementBatch per acquired range, one type (ACCEPT) for the range;
- per-offset: one AcknowledgementBatch per range with one type per record (every tenth
  record RELEASEd then redelivered, so the in-flight state is kept per offset);
- record: one AcknowledgementBatch per record (first = last), all ACCEPT.

Prints records/s (acknowledged records over wall time), fetches, writes to
`__share_group_state`. No assertion: the numbers are printed.
"""
from __future__ import annotations

import argparse
import datetime
import os
import platform
import time

import kio.schema.share_fetch.v1.request as F
from kio.static.primitive import i32Timedelta

from kgroup import Cluster, Coordinator

ZERO = i32Timedelta.parse(datetime.timedelta(0))

BATCH = 500


def build(batches: int) -> tuple[Coordinator, object]:
    c = Coordinator(cluster=Cluster({"q": 1}, seed=1))
    c.cluster.group_configs["bench"] = {"share.auto.offset.reset": "earliest"}
    values = [b"x" * 100] * BATCH
    for _ in range(batches):
        c.cluster.produce("q", 0, values)
    return c, c.cluster.topic_id("q")


def ack_batches(acquired, mode: str, released: set[int]) -> list[dict]:
    out = []
    for a in acquired:
        first, last = a.first_offset, a.last_offset
        if mode == "batch":
            out.append({"first_offset": first, "last_offset": last, "acknowledge_types": [1]})
        elif mode == "record":
            out.extend({"first_offset": o, "last_offset": o, "acknowledge_types": [1]} for o in range(first, last + 1))
        else:  # per-offset: release every tenth record on its first delivery
            types = []
            for o in range(first, last + 1):
                if o % 10 == 0 and a.delivery_count == 1:
                    types.append(2)
                    released.add(o)
                else:
                    types.append(1)
            out.append({"first_offset": first, "last_offset": last, "acknowledge_types": types})
    return out


def run(consumers: int, batches: int, mode: str) -> dict:
    c, tid = build(batches)
    total = batches * BATCH
    members = [f"consumer-{i:03d}" for i in range(consumers)]
    epochs = {m: 0 for m in members}
    pending: dict[str, list] = {m: [] for m in members}
    released: set[int] = set()
    done = 0
    fetches = 0
    idle_rounds = 0
    writes_before = len(c.share_state_log)
    start = time.perf_counter()
    while done < total:
        progressed = False
        for m in members:
            acks = ack_batches(pending[m], mode, released) if pending[m] else []
            # a client builds its request objects directly (kio dataclasses), as a real one encodes them
            req = F.ShareFetchRequest(
                group_id="bench", member_id=m, share_session_epoch=epochs[m], max_wait=ZERO, min_bytes=1,
                max_records=BATCH, batch_size=BATCH, forgotten_topics_data=(),
                topics=(F.FetchTopic(topic_id=tid, partitions=(F.FetchPartition(
                    partition_index=0, acknowledgement_batches=tuple(
                        F.AcknowledgementBatch(first_offset=b["first_offset"], last_offset=b["last_offset"],
                                               acknowledge_types=tuple(b["acknowledge_types"])) for b in acks)),)),))
            r = c.handle(req)
            fetches += 1
            epochs[m] = 1 if epochs[m] == 0 else epochs[m] + 1
            if acks:
                n = 0
                for b in acks:
                    types = b["acknowledge_types"]
                    if len(types) == 1:
                        n += b["last_offset"] - b["first_offset"] + 1
                    else:
                        n += sum(1 for t in types if t == 1)
                done += n
                progressed = True
            pending[m] = [a for t in r.responses for p in t.partitions for a in p.acquired_records]
            if pending[m]:
                progressed = True
            if done >= total:
                break
        idle_rounds = 0 if progressed else idle_rounds + 1
        if idle_rounds > 3:
            raise RuntimeError("no progress")
    elapsed = time.perf_counter() - start
    return {"records_per_s": total / elapsed, "elapsed_s": elapsed, "fetches": fetches,
            "writes": len(c.share_state_log) - writes_before}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--consumers", type=int, nargs="+", default=[1, 10, 100])
    ap.add_argument("--batches", type=int, default=400, help="record batches of 500 to consume (default 400)")
    ap.add_argument("--modes", nargs="+", default=["batch", "per-offset", "record"])
    ap.add_argument("--quick", action="store_true", help="40 batches")
    args = ap.parse_args()
    batches = 40 if args.quick else args.batches
    print(f"python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} cpus; "
          f"{batches} batches x {BATCH} records on one share-partition")
    print(f"{'mode':<11}{'consumers':>10}{'records/s':>14}{'fetches':>9}{'writes':>8}{'seconds':>9}")
    for mode in args.modes:
        for n in args.consumers:
            r = run(n, batches, mode)
            print(f"{mode:<11}{n:>10}{r['records_per_s']:>14,.0f}{r['fetches']:>9}{r['writes']:>8}"
                  f"{r['elapsed_s']:>9.2f}")


if __name__ == "__main__":
    main()
