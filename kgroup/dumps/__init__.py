"""kgroup.dumps: read real `__consumer_offsets` / `__share_group_state` dumps, print them as Kafka does.

    from kgroup.dumps import read_dump, DumpReport, render_jsonl, render_dump_log

    report = DumpReport()
    for entry in read_dump("/var/lib/kafka/data", report=report, progress=True):
        entry.record, entry.partition, entry.offset, entry.txn
    print(report.summary())

Three kinds of dump, told apart by `open_dump`:

- "segment": broker `.log` files (a log dir, partition dirs or single files; magic 0/1/2,
  every codec), with each record's transaction status (none/committed/aborted/open);
- "dump-log": saved `kafka-dump-log.sh --offsets-decoder` output, in the 3.8+ JSON form
  (records rebuilt exactly) or the older `offset_commit::` / `offset::` forms (partial fields);
- "console": saved `kafka-console-consumer.sh --formatter ...` output, the 4.x JSON objects
  (rebuilt exactly) or the older `[g,t,p]::OffsetAndMetadata(...)` forms (partial fields).

Records from newer brokers read as Kafka reads them: a value version above the ones kgroup knows
is read with the newest known layout (KIP-915), a record type kgroup does not know is skipped
with a warning. A KRaft broker's metadata log (`__cluster_metadata-0`) is not a dump but names
the topics: `metadata.read_cluster_metadata`, used by `replay`.

Bad content never stops a read: it is counted in the `DumpReport` and listed with file and
byte position / line. Modules: `model` (entries, report), `reader` (open/read), `segments`,
`dumplog`, `console`, `textforms` (the printed forms across releases), `fromjson` (records
from Kafka's JSON), `consumer_json`, `txn` (transaction status), `render` (printing),
`metadata` (topic names from the KRaft metadata log), `replay`.
PySpark lives in `kgroup.dumps.spark*` and is imported only there.
"""
from __future__ import annotations

from .fromjson import JsonRecordError, record_from_json
from .metadata import ClusterMetadata, read_cluster_metadata
from .model import BatchInfo, DumpEntry, DumpError, DumpProblem, DumpReport
from .reader import open_dump, read_dump
from .render import render_dump_log, render_jsonl
from .replay import ReplayStats, describe_groups, describe_share_partitions, replay

__all__ = ["DumpEntry", "DumpProblem", "DumpReport", "DumpError", "BatchInfo", "JsonRecordError", "read_dump",
           "open_dump", "render_jsonl", "render_dump_log", "record_from_json", "replay", "describe_groups",
           "describe_share_partitions", "ReplayStats", "ClusterMetadata", "read_cluster_metadata"]
