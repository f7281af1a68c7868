"""Large `__consumer_offsets` / `__share_group_state` dumps with PySpark: one typed row per record.

    from kgroup.dumps import spark as kds

    spark = kds.session()                          # local[*] unless a master is configured
    df = kds.load(spark, "/var/lib/kafka/data")    # segments, kafka-dump-log or console output
    kds.compacted(df)                              # what a broker would load
    kds.write_parquet(spark, ["dump/"], "out/")    # every view as parquet

PySpark is imported here only (never by `import kgroup` or `import kgroup.dumps`); executors need
kgroup installed (or shipped with `--py-files`) and pyarrow. The same code runs with `local[*]`,
`--master spark://...` or under `spark-submit`.

`load` plans on the driver (`kgroup.dumps.ranges.plan_scan`: files listed, big segments cut at
batch starts near `split_bytes`, text dumps one task per file) and runs one Spark task per range;
executors decode their bytes and hand rows over as Arrow batches (`mapInArrow`). Nothing is
collected to the driver. Transaction status is settled on the executors (markers further on in
the partition are found by hopping over batch headers), so `txn` is final in every row.
Unreadable content becomes rows too: an undecodable record is a row with `error` set, a corrupt
byte span or an unreadable text line a row with `problem` set (plus `error`, file and position
or line), so counts reconcile with `DumpReport` (see `report_counts`).

Views (each `f(df, ...) -> DataFrame`): `compacted`, `offset_history`, `commit_rate`, `lag`,
`membership_timeline`, `rebalances`, `streams_tasks`, `share_state`; `write_parquet` writes them all.
"""
from __future__ import annotations

import os
import shutil
import sys
import warnings
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql import types as T

from .ranges import COLUMNS, DEFAULT_CHUNK_ROWS, DEFAULT_SPLIT_BYTES, ScanPlan, plan_scan, run_task

__all__ = ["session", "load", "schema", "compacted", "offset_history", "commit_rate", "lag",
           "membership_timeline", "rebalances", "streams_tasks", "share_state", "report_counts", "write_parquet",
           "VIEWS"]

#: The views `write_parquet` can write, in the order it writes them.
VIEWS = ("records", "compacted", "offset_history", "commit_rate", "membership_timeline", "rebalances",
         "streams_tasks", "share_state", "lag")

_TYPES = {"string": T.StringType(), "short": T.ShortType(), "int": T.IntegerType(), "long": T.LongType(),
          "boolean": T.BooleanType()}


def schema() -> T.StructType:
    """The row schema of `load` (see `kgroup.dumps.columns.COLUMNS` for what each column holds)."""
    return T.StructType([T.StructField(name, _TYPES[t], True) for name, t in COLUMNS])


# ------------------------------------------------------------------------------------------------
# session


def _configured_master() -> str | None:
    """The master spark-submit or spark-defaults.conf set, without starting a JVM."""
    if os.environ.get("PYSPARK_GATEWAY_PORT"):  # launched by spark-submit: the JVM knows
        from pyspark import SparkConf

        return SparkConf().get("spark.master", None)
    for conf_dir in (os.environ.get("SPARK_CONF_DIR"),
                     os.path.join(os.environ["SPARK_HOME"], "conf") if os.environ.get("SPARK_HOME") else None):
        if not conf_dir:
            continue
        defaults = Path(conf_dir) / "spark-defaults.conf"
        if defaults.is_file():
            for line in defaults.read_text(errors="replace").splitlines():
                parts = line.strip().split(None, 1)
                if len(parts) == 2 and parts[0] == "spark.master":
                    return parts[1].strip()
    return None


def session(master: str | None = None, app_name: str = "kgroup", **conf: Any) -> SparkSession:
    """A SparkSession for reading dumps: `master`, else the configured one, else `local[*]`.

    Local masters get settings for one machine: no UI or console progress bar, few shuffle
    partitions, the parallel garbage collector, the driver's Python (and kgroup's location) for
    the Python workers. `conf`:
    any Spark settings, e.g. ``session(**{"spark.driver.memory": "8g"})``; they win over the
    defaults. Timestamps in the views are shown in UTC unless `spark.sql.session.timeZone` says
    otherwise. A session that is already running (a notebook's) is returned as it is, with only
    `conf` applied (runtime settings).
    """
    active = SparkSession.getActiveSession()
    if active is not None:  # a notebook's or the caller's: keep its settings, add only `conf`
        running = active.sparkContext.master
        if master is not None and master != running:
            warnings.warn(f"a SparkSession with master {running} is already running; using it, not {master}",
                          stacklevel=2)
        for k, v in conf.items():
            active.conf.set(k, str(v))
        return active
    chosen = master or _configured_master()
    builder = SparkSession.builder.appName(app_name)
    if chosen is None:
        chosen = "local[*]"
        builder = builder.master(chosen)
    elif master is not None:
        builder = builder.master(master)
    settings: dict[str, Any] = {"spark.sql.session.timeZone": "UTC"}
    if chosen.startswith("local"):
        cores = os.cpu_count() or 2
        settings.update({
            "spark.ui.enabled": "false",
            "spark.ui.showConsoleProgress": "false",
            "spark.sql.shuffle.partitions": str(max(4, 2 * cores)),
            "spark.driver.memory": "2g",
            # A batch job sharing few cores with its Python workers: the throughput collector
            # leaves them more CPU than G1's concurrent threads (benchmarks/dumps.py: about 15%
            # less JVM time, 5% more records/s on 2 cores).
            "spark.driver.extraJavaOptions": "-XX:+UseParallelGC",
        })
        if "PYSPARK_PYTHON" not in os.environ and "spark.pyspark.python" not in conf:
            os.environ["PYSPARK_PYTHON"] = sys.executable
        # Python workers must import kgroup even when it is used from a source checkout.
        here = str(Path(__file__).resolve().parents[2])
        paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
        if here not in paths:
            os.environ["PYTHONPATH"] = os.pathsep.join([here, *paths])
    settings.update({k: str(v) for k, v in conf.items()})
    for k, v in settings.items():
        builder = builder.config(k, v)
    return builder.getOrCreate()


# ------------------------------------------------------------------------------------------------
# loading


class _ArrowRunner:
    """What each Spark task runs: the ids of its tasks in, Arrow batches of rows out."""

    def __init__(self, plan: ScanPlan, chunk_rows: int) -> None:
        self.plan = plan
        self.chunk_rows = chunk_rows

    def __call__(self, batches: Iterator[Any]) -> Iterator[Any]:
        for batch in batches:
            for task_id in batch.column(0).to_pylist():
                for chunk in run_task(self.plan, task_id, self.chunk_rows):
                    yield chunk.to_arrow()


def load(spark: SparkSession, paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]], *,
         topic: str | None = None, split_bytes: int = DEFAULT_SPLIT_BYTES,
         chunk_rows: int = DEFAULT_CHUNK_ROWS) -> DataFrame:
    """One typed row per dump entry (plus rows for what could not be read), lazily.

    `paths`: what `read_dump` takes (log dirs, partition dirs, `.log` files, saved
    kafka-dump-log or console-consumer output), read on the executors, so they must see the same
    paths (local mode, or a shared file system). `topic` selects `__consumer_offsets` or
    `__share_group_state`. Segment files bigger than `split_bytes` are cut at batch boundaries
    into several tasks. Missing paths raise FileNotFoundError (naming them) and unrecognisable
    ones `DumpError`, right away.
    """
    plan = plan_scan(paths, topic=topic, split_bytes=split_bytes)
    if not plan.tasks:
        return spark.createDataFrame([], schema())
    n = len(plan.tasks)
    ids = spark.range(0, n, 1, numPartitions=n)  # one task id per Spark partition
    with warnings.catch_warnings():
        # PySpark checks the pandas version on mapInArrow, which uses no pandas at all.
        warnings.simplefilter("ignore", FutureWarning)
        return ids.mapInArrow(_ArrowRunner(plan, chunk_rows), schema())


def report_counts(df: DataFrame) -> dict[str, int]:
    """The `DumpReport` counts of the rows: entries, records, partial, control, unknown,
    decode_errors, tombstones, corrupt_spans, corrupt_bytes, garbage_lines (one small job)."""
    entry = F.col("problem").isNull()
    err = F.col("error").isNotNull()
    unknown = entry & err & F.col("record_type").isNull() & F.col("record_type_id").isNotNull()
    ok = entry & ~err & F.col("control").isNull()
    row = df.agg(
        F.count(F.when(entry, 1)).alias("entries"),
        F.count(F.when(ok & F.col("json").isNotNull(), 1)).alias("records"),
        F.count(F.when(ok & F.col("json").isNull(), 1)).alias("partial"),
        F.count(F.when(entry & F.col("control").isNotNull(), 1)).alias("control"),
        F.count(F.when(unknown, 1)).alias("unknown"),
        F.count(F.when(entry & err & ~unknown, 1)).alias("decode_errors"),
        F.count(F.when(ok & F.col("tombstone"), 1)).alias("tombstones"),
        F.count(F.when(F.col("problem") == "corrupt_span", 1)).alias("corrupt_spans"),
        F.coalesce(F.sum("corrupt_bytes"), F.lit(0)).alias("corrupt_bytes"),
        F.count(F.when(F.col("problem") == "garbage_line", 1)).alias("garbage_lines"),
    ).first()
    return {k: int(v) for k, v in row.asDict().items()}


# ------------------------------------------------------------------------------------------------
# views

_LIVE_TXN = ("none", "committed")
_OFFSET_TYPES = ("OffsetCommit", "LegacyOffsetCommit")


def _live(df: DataFrame) -> DataFrame:
    """Decoded data records a loader applies: no control records, no aborted or open transactions."""
    return df.where(F.col("problem").isNull() & F.col("error").isNull() & F.col("control").isNull()
                    & F.col("key").isNotNull() & F.col("txn").isin(*_LIVE_TXN))


def _ms(col: str) -> Column:
    return F.timestamp_millis(F.col(col))


def compacted(df: DataFrame) -> DataFrame:
    """The latest value of every key per partition, tombstones applied: what a broker loads.

    Aborted and still-open transactional records are left out, as the coordinator's loader
    drops them; a committed transactional record counts at its own offset (a later plain commit
    wins, as in Kafka). LegacyOffsetCommit (type 0) and OffsetCommit (type 1) keys of the same
    group/topic/partition are one key, as the loader treats them. Same columns as `load`.
    """
    ckey = F.when(F.col("record_type_id") == 0,
                  F.regexp_replace("key", r'^\{"type":0,', '{"type":1,')).otherwise(F.col("key"))
    cols = [name for name, _ in COLUMNS]
    latest = (_live(df).withColumn("_ckey", ckey)
              .groupBy("topic", "partition", "_ckey")
              .agg(F.max_by(F.struct(*cols), F.struct(F.col("offset"), F.col("line"))).alias("_r"))
              .select("_r.*"))
    return latest.where(~F.col("tombstone"))


def offset_history(df: DataFrame) -> DataFrame:
    """Every committed offset per group/topic/partition in log order, with the previous one.

    Columns: group_id, topic_name, topic_partition, partition (of the offsets topic), offset
    (of the record), timestamp, time, committed_offset, leader_epoch, metadata,
    commit_timestamp, deleted (a tombstone: OffsetDelete or expiration), txn,
    previous_offset, advance (committed_offset - previous_offset).
    """
    w = Window.partitionBy("group_id", "topic_name", "topic_partition").orderBy("timestamp", "partition", "offset")
    rows = _live(df).where(F.col("record_type").isin(*_OFFSET_TYPES))
    prev = F.lag("committed_offset").over(w)
    return rows.select(
        "group_id", "topic_name", "topic_partition", "partition", "offset", "timestamp", _ms("timestamp").alias("time"),
        "committed_offset", "leader_epoch", F.get_json_object("json", "$.value.data.metadata").alias("metadata"),
        "commit_timestamp", F.col("tombstone").alias("deleted"), "txn",
        prev.alias("previous_offset"), (F.col("committed_offset") - prev).alias("advance"))


def commit_rate(df: DataFrame, window: str = "1 minute") -> DataFrame:
    """Offset commits per group and time window (by record timestamp).

    Columns: group_id, window_start, window_end, commits (OffsetCommit records), requests
    (batches: one per commit request), topic_partitions (distinct), commits_per_second.
    """
    rows = _live(df).where(F.col("record_type").isin(*_OFFSET_TYPES) & ~F.col("tombstone")
                           & (F.col("timestamp") >= 0))
    agg = (rows.groupBy("group_id", F.window(_ms("timestamp"), window).alias("w"))
           .agg(F.count(F.lit(1)).alias("commits"),
                F.count_distinct(F.struct("source", "position", "line")).alias("requests"),
                F.countDistinct("topic_name", "topic_partition").alias("topic_partitions")))
    seconds = F.col("w.end").cast("long") - F.col("w.start").cast("long")
    return agg.select("group_id", F.col("w.start").alias("window_start"), F.col("w.end").alias("window_end"),
                      "commits", "requests", "topic_partitions", (F.col("commits") / seconds).alias("commits_per_second"))


def _end_offsets_frame(spark: SparkSession, end_offsets: Any) -> DataFrame:
    """end_offsets as a (topic, partition, end_offset) DataFrame."""
    sch = T.StructType([T.StructField("topic", T.StringType()), T.StructField("partition", T.IntegerType()),
                        T.StructField("end_offset", T.LongType())])
    if isinstance(end_offsets, DataFrame):
        return end_offsets.select(F.col("topic").cast("string"), F.col("partition").cast("int"),
                                  F.col("end_offset").cast("long"))
    if isinstance(end_offsets, (str, os.PathLike)):
        path = Path(end_offsets)
        if not path.exists():
            raise FileNotFoundError(f"no such end offsets file: {path}")
        with open(path, encoding="utf-8") as f:
            first = f.readline().strip().lower().replace(" ", "")
        header = first.startswith("topic,")
        if header and first != "topic,partition,end_offset":
            raise ValueError(f"{path}: expected the columns topic,partition,end_offset, found {first!r}")
        return spark.read.csv(str(path), schema=sch, header=header, mode="FAILFAST")
    cls = type(end_offsets)
    if cls.__name__ == "Cluster" and hasattr(end_offsets, "end_offset"):
        rows = [(t.name, p, int(end_offsets.end_offset(t.name, p)))
                for t in end_offsets.topics() for p in range(t.partitions)]
        return spark.createDataFrame(rows, sch)
    if hasattr(end_offsets, "to_dict") and hasattr(end_offsets, "columns"):  # a pandas DataFrame
        missing = {"topic", "partition", "end_offset"} - set(end_offsets.columns)
        if missing:
            raise ValueError(f"end offsets DataFrame lacks column(s) {sorted(missing)}")
        rows = [(str(t), int(p), int(e)) for t, p, e in
                end_offsets[["topic", "partition", "end_offset"]].itertuples(index=False)]
        return spark.createDataFrame(rows, sch)
    raise TypeError(f"end_offsets must be a CSV path, a pandas or Spark DataFrame or a kgroup Cluster, "
                    f"not {cls.__name__}")


def lag(df: DataFrame, end_offsets: Any) -> DataFrame:
    """Consumer lag: log end offset minus the committed offset, per group/topic/partition.

    `end_offsets`: a CSV file `topic,partition,end_offset` (header optional), a pandas or Spark
    DataFrame with those columns, or a `kgroup.cluster.Cluster` (its `end_offset(topic, p)`).
    Committed offsets are those of `compacted(df)`. Columns: group_id, topic, partition,
    committed_offset, end_offset (null when unknown), lag, commit_timestamp.
    """
    return _lag_of(compacted(df), end_offsets)


def _lag_of(latest: DataFrame, end_offsets: Any) -> DataFrame:
    ends = _end_offsets_frame(latest.sparkSession, end_offsets).alias("e")
    committed = (latest.where(F.col("record_type").isin(*_OFFSET_TYPES))
                 .select("group_id", F.col("topic_name").alias("topic"), F.col("topic_partition").alias("tp"),
                         "committed_offset", "commit_timestamp").alias("c"))
    joined = committed.join(ends, (F.col("c.topic") == F.col("e.topic")) & (F.col("c.tp") == F.col("e.partition")),
                            "left")
    return joined.select("c.group_id", F.col("c.topic").alias("topic"), F.col("c.tp").alias("partition"),
                         "c.committed_offset", "e.end_offset",
                         (F.col("e.end_offset") - F.col("c.committed_offset")).alias("lag"), "c.commit_timestamp")


def _group_type() -> Column:
    t = F.col("record_type_id")
    return (F.when(t == 2, "classic").when(t.between(3, 8) | (t == 16), "consumer")
            .when(t.between(9, 15), "share").when(t.between(17, 24), "streams"))


_MEMBER_RECORDS = ("ConsumerGroupMemberMetadata", "ShareGroupMemberMetadata", "StreamsGroupMemberMetadata")
_EPOCH_RECORDS = ("ConsumerGroupCurrentMemberAssignment", "ShareGroupCurrentMemberAssignment",
                  "StreamsGroupCurrentMemberAssignment")
_GROUP_EPOCH_RECORDS = ("ConsumerGroupMetadata", "ShareGroupMetadata", "StreamsGroupMetadata")


def membership_timeline(df: DataFrame) -> DataFrame:
    """Members joining and leaving, member epochs and generations, per group over time.

    Events: classic groups (from GroupMetadata): "generation" (every record, with the generation
    and member count; a tombstone ends the group: 0 members) and "joined"/"left" for the member
    ids that appear/disappear from one record to the next. Consumer, share and streams groups:
    "joined"/"updated"/"left" from member metadata records (a tombstone is a departure),
    "member_epoch" from current-assignment records, "group_epoch" (or "deleted", a tombstone)
    from the group's epoch record. One pass over the rows (one window, one explode).
    Columns: group_id, group_type, partition, offset, timestamp, time, event, member_id,
    generation, previous_generation, member_epoch, members.
    """
    name = F.col("record_type")
    rows = _live(df).where(name.isin("GroupMetadata", *_MEMBER_RECORDS, *_EPOCH_RECORDS, *_GROUP_EPOCH_RECORDS))
    empty = F.array().cast("array<string>")
    members = F.from_json(F.get_json_object("json", "$.value.data.members"), "array<struct<memberId:string>>")
    rows = rows.withColumn("_m", F.when(name != "GroupMetadata", F.lit(None).cast("array<string>"))
                           .when(F.col("tombstone"), empty)
                           .otherwise(F.coalesce(F.transform(members, lambda m: m["memberId"]), empty)))
    # one window: a classic or epoch record follows its group's previous one, a member record its member's
    w = Window.partitionBy("group_id", "record_type", F.coalesce("member_id", F.lit(""))).orderBy(
        "partition", "offset", "line")
    rows = (rows.withColumn("_pm", F.coalesce(F.lag("_m").over(w), empty))
            .withColumn("previous_generation", F.lag("generation").over(w))
            .withColumn("_pt", F.lag("tombstone").over(w)))

    def event(kind: Any, member: Any) -> Column:
        kind = F.lit(kind) if isinstance(kind, str) else kind
        return F.struct(kind.alias("event"), (F.lit(None).cast("string") if member is None else member).alias("m"))

    def each(arr: Column, kind: str) -> Column:
        return F.transform(arr, lambda m: event(kind, m))

    none: Column = F.array().cast("array<struct<event:string,m:string>>")
    member_event = F.when(F.col("tombstone"), "left").when(F.col("_pt") == F.lit(False), "updated").otherwise("joined")
    events = (F.when(name == "GroupMetadata",
                     F.concat(F.array(event("generation", None)), each(F.array_except("_m", "_pm"), "joined"),
                              each(F.array_except("_pm", "_m"), "left")))
              .when(name.isin(*_MEMBER_RECORDS), F.array(event(member_event, F.col("member_id"))))
              .when(name.isin(*_EPOCH_RECORDS) & ~F.col("tombstone"),
                    F.array(event("member_epoch", F.col("member_id"))))
              .when(name.isin(*_GROUP_EPOCH_RECORDS),
                    F.array(event(F.when(F.col("tombstone"), "deleted").otherwise("group_epoch"), None)))
              .otherwise(none))
    out = rows.select("*", F.explode(events).alias("_e"))
    classic = name == "GroupMetadata"
    return out.select(
        "group_id", _group_type().alias("group_type"), "partition", "offset", "timestamp", _ms("timestamp").alias("time"),
        F.col("_e.event").alias("event"), F.col("_e.m").alias("member_id"),
        F.when(classic | name.isin(*_GROUP_EPOCH_RECORDS), F.col("generation")).alias("generation"),
        F.when(classic | name.isin(*_GROUP_EPOCH_RECORDS), F.col("previous_generation")).alias("previous_generation"),
        F.when(name.isin(*_EPOCH_RECORDS), F.col("member_epoch")).alias("member_epoch"),
        F.when(classic, F.size("_m")).alias("members"))


def rebalances(df: DataFrame, window: str = "1 minute") -> DataFrame:
    """Rebalances per group and time window: generation (classic) or group epoch bumps.

    A group's first record counts when its generation is above 0 (a classic group is created
    at generation 0, before its first rebalance).

    Columns: group_id, group_type, window_start, window_end, rebalances, first_generation,
    last_generation, joined, left (member events in the window).
    """
    return _rebalances_of(membership_timeline(df), window)


def _rebalances_of(t: DataFrame, window: str) -> DataFrame:
    bump = (F.col("event").isin("generation", "group_epoch")
            & F.when(F.col("previous_generation").isNull(), F.col("generation") > 0)
            .otherwise(F.col("generation") > F.col("previous_generation")))
    gens = F.when(F.col("event").isin("generation", "group_epoch"), F.col("generation"))
    agg = (t.groupBy("group_id", "group_type", F.window("time", window).alias("w"))
           .agg(F.count(F.when(bump, 1)).alias("rebalances"), F.min(gens).alias("first_generation"),
                F.max(gens).alias("last_generation"), F.count(F.when(F.col("event") == "joined", 1)).alias("joined"),
                F.count(F.when(F.col("event") == "left", 1)).alias("left")))
    return agg.select("group_id", "group_type", F.col("w.start").alias("window_start"),
                      F.col("w.end").alias("window_end"), "rebalances", "first_generation", "last_generation",
                      "joined", "left")


_TASK_IDS = "array<struct<subtopologyId:string,partitions:array<int>>>"


def _task_labels(path: str) -> Column:
    """A `TaskIds` array of the record's JSON as KIP-1071 task labels ("<subtopology>_<partition>")."""
    tasks = F.from_json(F.get_json_object("json", path), _TASK_IDS)
    return F.coalesce(F.flatten(F.transform(tasks, lambda t: F.transform(
        t["partitions"], lambda p: F.concat(t["subtopologyId"], F.lit("_"), p.cast("string"))))),
        F.array().cast("array<string>"))


def streams_tasks(df: DataFrame) -> DataFrame:
    """Streams members' tasks over time (KIP-1071): one row per StreamsGroupCurrentMemberAssignment
    record, with the member's topology epoch from its latest StreamsGroupMemberMetadata record
    before it. A tombstone (the member left) has empty task lists and member_epoch null.

    Columns: group_id, member_id, partition, offset, timestamp, time, member_epoch, state,
    topology_epoch, active, standby, warmup, active_pending_revocation (tasks as "0_1" labels).
    """
    name = F.col("record_type")
    rows = _live(df).where(name.isin("StreamsGroupCurrentMemberAssignment", "StreamsGroupMemberMetadata"))
    rows = rows.withColumn("_te", F.when(name == "StreamsGroupMemberMetadata",
                                         F.get_json_object("json", "$.value.data.topologyEpoch").cast("int")))
    w = (Window.partitionBy("group_id", "member_id").orderBy("partition", "offset", "line")
         .rowsBetween(Window.unboundedPreceding, Window.currentRow))
    rows = rows.withColumn("topology_epoch", F.last("_te", ignorenulls=True).over(w))
    out = rows.where(name == "StreamsGroupCurrentMemberAssignment")
    return out.select(
        "group_id", "member_id", "partition", "offset", "timestamp", _ms("timestamp").alias("time"),
        F.when(~F.col("tombstone"), F.col("member_epoch")).alias("member_epoch"),
        F.get_json_object("json", "$.value.data.state").cast("int").alias("state"), "topology_epoch",
        _task_labels("$.value.data.activeTasks").alias("active"),
        _task_labels("$.value.data.standbyTasks").alias("standby"),
        _task_labels("$.value.data.warmupTasks").alias("warmup"),
        _task_labels("$.value.data.activeTasksPendingRevocation").alias("active_pending_revocation"))


_SHARE_VALUE = ("struct<snapshotEpoch:int,stateEpoch:int,leaderEpoch:int,startOffset:long,"
                "deliveryCompleteCount:int,createTimestamp:long,writeTimestamp:long,"
                "stateBatches:array<struct<firstOffset:long,lastOffset:long,deliveryState:int,deliveryCount:int>>>")


def share_state(df: DataFrame) -> DataFrame:
    """Share-partition state over time from `__share_group_state` (ShareSnapshot/ShareUpdate).

    One row per record, in log order per share-partition (group_id, topic_id, share_partition):
    snapshot_epoch, state_epoch (carried over from the last snapshot for updates), leader_epoch,
    start_offset as written (-1 in an update: unchanged) and spso (the effective share-partition
    start offset), delivery_complete_count, state_batches (first_offset, last_offset,
    delivery_state, delivery_count) and the records they cover by state (available,
    acknowledged, archived); deleted for a tombstone. An update carries only what changed, so
    `durable_batches` is the share-partition's whole durable state after the record, folded
    as the share coordinator replays it (`kgroup.groups.share.state_batches`, Kafka's
    PersisterStateBatchCombiner: pruned below the SPSO, overlaps resolved), with the records it
    covers by state (durable_available, durable_acknowledged, durable_archived); null once deleted.
    """
    rows = _live(df).where(F.col("record_type").isin("ShareSnapshot", "ShareUpdate"))
    v = F.from_json(F.get_json_object("json", "$.value.data"), _SHARE_VALUE)
    rows = rows.withColumn("_v", v)
    w = (Window.partitionBy("group_id", "topic_id", "topic_partition").orderBy("partition", "offset", "line")
         .rowsBetween(Window.unboundedPreceding, Window.currentRow))
    batches = F.transform("_v.stateBatches", lambda b: F.struct(
        b["firstOffset"].alias("first_offset"), b["lastOffset"].alias("last_offset"),
        b["deliveryState"].alias("delivery_state"), b["deliveryCount"].alias("delivery_count")))

    def covered(state: int) -> Column:
        return F.aggregate(F.filter("_v.stateBatches", lambda b: b["deliveryState"] == state), F.lit(0).cast("long"),
                           lambda acc, b: acc + b["lastOffset"] - b["firstOffset"] + 1)

    start = F.col("_v.startOffset")
    view = rows.select(
        "group_id", "topic_id", F.col("topic_partition").alias("share_partition"), "partition", "offset", "line",
        "timestamp", _ms("timestamp").alias("time"), "record_type", F.col("tombstone").alias("deleted"),
        F.col("_v.snapshotEpoch").alias("snapshot_epoch"),
        F.last(F.col("_v.stateEpoch"), ignorenulls=True).over(w).alias("state_epoch"),
        "leader_epoch", start.alias("start_offset"),
        F.last(F.when(start >= 0, start), ignorenulls=True).over(w).alias("spso"),
        F.col("_v.deliveryCompleteCount").alias("delivery_complete_count"),
        batches.alias("state_batches"), covered(0).alias("available"), covered(2).alias("acknowledged"),
        covered(4).alias("archived"))
    # the durable state after each record: a fold in log order per share-partition
    fold_in = rows.select("group_id", "topic_id", "topic_partition", "partition", "offset", "line", "record_type",
                          "tombstone", F.col("_v.startOffset").alias("start_offset"),
                          F.get_json_object("json", "$.value.data.stateBatches").alias("batches"))
    durable = (fold_in.groupBy("group_id", "topic_id", "topic_partition")
               .applyInPandas(_fold_share_state, _FOLD_SCHEMA)
               .withColumnRenamed("topic_partition", "share_partition"))
    keys = ("group_id", "topic_id", "share_partition", "partition", "offset", "line")
    joined = view.join(durable, on=[view[k].eqNullSafe(durable[k]) for k in keys], how="left")
    held = F.from_json(durable["durable"], _DURABLE_BATCHES)

    def held_by(state: int) -> Column:
        return F.aggregate(F.filter(held, lambda b: b["delivery_state"] == state), F.lit(0).cast("long"),
                           lambda acc, b: acc + b["last_offset"] - b["first_offset"] + 1)

    return joined.select(*[view[c] for c in view.columns if c != "line"], held.alias("durable_batches"),
                         held_by(0).alias("durable_available"), held_by(2).alias("durable_acknowledged"),
                         held_by(4).alias("durable_archived"))


_DURABLE_BATCHES = "array<struct<first_offset:long,last_offset:long,delivery_state:int,delivery_count:int>>"
_FOLD_SCHEMA = ("group_id string, topic_id string, topic_partition int, partition int, offset long, line long, "
                "durable string")


def _fold_share_state(pdf: Any) -> Any:
    """One share-partition's records in log order -> its durable state after each (JSON), as
    `ShareCoordinator.replay` folds them (runs on the executors, in pandas)."""
    import json

    import pandas as pd

    from kgroup.groups.share.state_batches import combine_state_batches

    pdf = pdf.sort_values(["partition", "offset", "line"], na_position="first", kind="stable")
    held: list | None = None
    start = -1
    out = []
    for rtype, tomb, start_offset, raw in zip(pdf["record_type"], pdf["tombstone"], pdf["start_offset"],
                                              pdf["batches"]):
        if bool(tomb) or raw is None or (isinstance(raw, float) and pd.isna(raw)):
            held, start = None, -1
            out.append(None)
            continue
        new = [(b["firstOffset"], b["lastOffset"], b["deliveryState"], b["deliveryCount"]) for b in json.loads(raw)]
        so = int(start_offset) if start_offset is not None and not pd.isna(start_offset) else -1
        if rtype == "ShareSnapshot" or held is None:  # a snapshot (or a first update) is taken as it is
            held, start = new, so
        else:
            start = start if so == -1 else so
            held = [tuple(b) for b in combine_state_batches(held, new, start)]
        out.append(json.dumps([{"first_offset": f, "last_offset": la, "delivery_state": st, "delivery_count": n}
                               for f, la, st, n in held]))
    return pd.DataFrame({"group_id": pdf["group_id"], "topic_id": pdf["topic_id"],
                         "topic_partition": pdf["topic_partition"], "partition": pdf["partition"],
                         "offset": pdf["offset"], "line": pdf["line"], "durable": out})


# ------------------------------------------------------------------------------------------------
# parquet


def write_parquet(spark: SparkSession, paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
                  out_dir: str | os.PathLike[str], *, views: Iterable[str] = VIEWS, end_offsets: Any = None,
                  topic: str | None = None, split_bytes: int = DEFAULT_SPLIT_BYTES,
                  window: str = "1 minute") -> dict[str, str]:
    """Load `paths` and write the chosen views as parquet directories `out_dir/<view>`.

    The records are decoded once and written first (`records`, kept only if asked for); the
    other views are computed from that parquet, `rebalances` and `lag` from the written
    `membership_timeline` and `compacted`. `lag` is written only when `end_offsets` is given
    (see `lag`; a missing CSV fails before anything is read). Existing view directories are
    replaced. Returns view name -> parquet path written, in the order of `views`.
    """
    wanted = list(dict.fromkeys(views))
    unknown = [v for v in wanted if v not in VIEWS]
    if unknown:
        raise ValueError(f"unknown view(s) {unknown}; choose from {list(VIEWS)}")
    if "lag" in wanted and end_offsets is None:
        wanted.remove("lag")
    ends = _end_offsets_frame(spark, end_offsets) if "lag" in wanted else None
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    records = load(spark, paths, topic=topic, split_bytes=split_bytes)
    keep_records = "records" in wanted
    records_path = out / ("records" if keep_records else "_records.tmp")
    records.write.mode("overwrite").parquet(str(records_path))
    written: dict[str, str] = {}
    if keep_records:
        written["records"] = str(records_path)
    base = spark.read.schema(schema()).parquet(str(records_path))

    def written_or(name: str, make: Any) -> DataFrame:
        # rebalances and lag start from what membership_timeline and compacted wrote, if they did
        return spark.read.parquet(written[name]) if name in written else make()

    makers = {
        "compacted": lambda: compacted(base),
        "offset_history": lambda: offset_history(base),
        "commit_rate": lambda: commit_rate(base, window),
        "membership_timeline": lambda: membership_timeline(base),
        "rebalances": lambda: _rebalances_of(written_or("membership_timeline", lambda: membership_timeline(base)),
                                             window),
        "streams_tasks": lambda: streams_tasks(base),
        "share_state": lambda: share_state(base),
        "lag": lambda: _lag_of(written_or("compacted", lambda: compacted(base)), ends),
    }
    try:
        for name in (v for v in VIEWS if v in wanted and v != "records"):
            path = out / name
            makers[name]().write.mode("overwrite").parquet(str(path))
            written[name] = str(path)
    finally:
        if not keep_records:
            shutil.rmtree(records_path, ignore_errors=True)
    return {name: written[name] for name in wanted if name in written}
