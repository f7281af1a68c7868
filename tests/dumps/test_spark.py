"""kgroup.dumps.spark: typed rows per record, split planning, corrupt input, transactions, views.

One `local[2]` session for the whole file; the reference for every row is `read_dump` (each entry
turned into a row by `ranges.add_entry`), and for the compacted view a coordinator's own state.
"""
from __future__ import annotations

import json
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql import functions as F

from dumps_fixtures import T0, build_log_dir, oc, raw_record
from dumps_fixtures import reference_rows as reference
from kgroup import Cluster, Coordinator
from kgroup.dumps import DumpReport, read_dump, render_dump_log, render_jsonl
from kgroup.dumps import ranges
from kgroup.dumps import spark as kds
from kgroup.log import Compression, OffsetsLog, TimestampType, encode_batch, read_batches, write_segment
from kgroup.protocol import request
from kgroup.records import RECORD_TYPES, SHARE_STATE_RECORD_TYPES, OffsetCommit, OffsetCommitKey, OffsetCommitValue
from kgroup_testing import commit, join, join_until_member_id, leave, sync
from records_strategies import records

NAMES = [name for name, _ in ranges.COLUMNS]
# PySpark 4 warns about pandas 3 whenever it checks for pandas; nothing here uses pandas through it.
# slow: each starts or shares a Spark session (runs early under xdist, see tests/conftest.py)
pytestmark = [pytest.mark.slow,
              pytest.mark.filterwarnings("ignore:PySpark does not yet fully support pandas:FutureWarning")]


@pytest.fixture(scope="session")
def spark():
    # tiny data: one shuffle partition, and adaptive planning would cost more than it saves
    s = kds.session("local[2]", **{"spark.sql.shuffle.partitions": "1", "spark.default.parallelism": "2",
                                   "spark.sql.adaptive.enabled": "false"})
    yield s
    s.stop()


@pytest.fixture(scope="module")
def log_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("spark-logs")
    build_log_dir(root)
    return root


@pytest.fixture(scope="module")
def log_df(spark, log_dir):
    """The fixture log dir loaded once (cached: the views below reuse it)."""
    df = kds.load(spark, log_dir).cache()
    yield df
    df.unpersist()


def collect(df) -> list[dict]:
    return [r.asDict() for r in df.collect()]


def report_of(paths, **kw) -> DumpReport:
    report = DumpReport()
    for _ in read_dump(paths, report=report, **kw):
        pass
    return report


def counts(report: DumpReport) -> dict[str, int]:
    d = report.as_dict()
    return {k: d[k] for k in ("entries", "records", "partial", "control", "unknown", "decode_errors", "tombstones",
                              "corrupt_spans", "corrupt_bytes", "garbage_lines")}


# --------------------------------------------------------------------------- rows


def test_rows_are_read_dumps_entries_with_typed_columns(spark, log_dir):
    df = kds.load(spark, log_dir)
    assert df.columns == NAMES
    assert dict(df.dtypes)["record_type_id"] == "smallint" and dict(df.dtypes)["tombstone"] == "boolean"
    rows = collect(df)
    assert rows == reference(log_dir)
    assert kds.report_counts(df) == counts(report_of(log_dir))
    by = {(r["partition"], r["offset"]): r for r in rows if r["topic"] == "__consumer_offsets"}
    first = by[(0, 3)]  # orders-app commits orders-0 at 12 with leader epoch 3 and metadata
    assert (first["record_type"], first["record_type_id"], first["group_id"], first["topic_name"],
            first["topic_partition"], first["committed_offset"], first["leader_epoch"]) == \
        ("OffsetCommit", 1, "orders-app", "orders", 0, 12, 3)
    assert first["json"].endswith('"metadata":"checkpoint","commitTimestamp":%d}}}' % (T0 + 12))
    assert by[(0, 2)]["generation"] == 1 and by[(1, 2)]["member_epoch"] == 5  # GroupMetadata, current assignment
    assert by[(1, 6)]["topic_id"] == "MKXx1fIkQy2J9jXHhK8m1w"  # OffsetCommit v4 names its topic id
    share = [r for r in rows if r["topic"] == "__share_group_state"]
    assert [(r["record_type"], r["topic_id"], r["topic_partition"]) for r in share] == [
        ("ShareSnapshot", "MKXx1fIkQy2J9jXHhK8m1w", 0), ("ShareUpdate", "MKXx1fIkQy2J9jXHhK8m1w", 0)]


def _long_partition(tmp_path):
    """One partition of 40 batches (some gzip) with transactions whose markers come much later."""
    log = OffsetsLog(1)
    t = T0
    for b in range(40):
        t += 1
        pid = 500 if b == 3 else 501 if b == 5 else 502 if b == 37 else -1
        log.compression = Compression.GZIP if b % 3 == 0 else Compression.NONE
        log.append(0, [oc(f"g{b % 4}", "t", p, 100 * b + p) for p in range(3)], timestamp=t, producer_id=pid,
                   producer_epoch=0 if pid >= 0 else -1, transactional=pid >= 0)
        if b == 30:
            log.append_marker(0, commit=True, producer_id=500, producer_epoch=0, timestamp=t)
        if b == 33:
            log.append_marker(0, commit=False, producer_id=501, producer_epoch=0, timestamp=t)
    return log.write(tmp_path)[0]  # pid 502 stays open


def test_big_segments_are_cut_at_batch_starts_and_read_the_same(spark, tmp_path):
    path = _long_partition(tmp_path)
    starts = [b.position for b in read_batches(path.read_bytes())]
    cuts = ranges.batch_cuts(path, 400)
    assert len(cuts) > 5 and set(cuts) <= set(starts) and cuts == sorted(cuts) and cuts[0] == 0
    plain = tmp_path / "copy" / "__consumer_offsets-0"  # no .index: headers are hopped over instead
    plain.mkdir(parents=True)
    shutil.copy(path, plain / path.name)
    assert ranges.batch_cuts(plain / path.name, 400) == cuts
    plan = ranges.plan_scan(path, split_bytes=400)
    assert len(plan.tasks) == len(cuts) and {t.unit for t in plan.tasks} == {0}
    assert [(t.start, t.end) for t in plan.tasks] == list(zip(cuts, cuts[1:] + [path.stat().st_size]))
    split = collect(kds.load(spark, path, split_bytes=400))
    assert split == reference(path)
    txn = {r["offset"]: r["txn"] for r in split if r["control"] is None}
    assert txn[9] == "committed" and txn[15] == "aborted" and txn[113] == "open" and txn[0] == "none"
    # the transactions are decided by markers that lie in later tasks
    def task_of(position):
        return next(i for i, t in enumerate(plan.tasks) if t.start <= position < t.end)

    by_offset = {r["offset"]: r for r in split}
    markers = {r["control"]: r for r in split if r["control"]}
    assert task_of(by_offset[9]["position"]) < task_of(markers["COMMIT"]["position"]) - 1
    assert task_of(by_offset[15]["position"]) < task_of(markers["ABORT"]["position"]) - 1


def test_corrupt_spans_and_undecodable_records_become_rows(spark, tmp_path):
    log = OffsetsLog(1)
    good = oc("g", "t", 0, 1)
    log.append(0, [good, raw_record(99, b"whatever"), (good.encode()[0], b"\x00\x03\x00")], timestamp=T0)
    for b in range(6):
        log.append(0, [oc("g", "t", p, 100 * b + p) for p in range(3)], timestamp=T0 + b + 1)
    path = log.write(tmp_path / "flipped")[0]
    positions = [b.position for b in read_batches(path.read_bytes())]
    data = bytearray(path.read_bytes())
    data[positions[3] + 70] ^= 0xFF
    path.write_bytes(bytes(data))
    cut = log.write(tmp_path / "cut")[0]
    cut.write_bytes(cut.read_bytes()[:positions[6] + 30])
    paths = [path, cut]
    df = kds.load(spark, paths, split_bytes=150)
    rows = collect(df)
    report = report_of(paths)
    assert kds.report_counts(df) == counts(report)
    assert [r for r in rows if r["problem"] is None] == reference(paths)
    spans = [(r["source"], r["position"], r["corrupt_bytes"]) for r in rows if r["problem"] == "corrupt_span"]
    assert spans == [(str(path), positions[3], positions[4] - positions[3]), (str(cut), positions[6], 30)]
    assert [(p.file, p.position) for p in report.problems if "corrupt span" in p.reason] == [s[:2] for s in spans]
    assert all("corrupt span of" in r["error"] for r in rows if r["problem"] == "corrupt_span")
    unknown = next(r for r in rows if r["record_type_id"] == 99)
    assert unknown["record_type"] is None and unknown["error"] == "unknown record type 99 at offset 1"
    bad = next(r for r in rows if r["offset"] == 2 and r["source"] == str(path))
    assert bad["record_type"] == "OffsetCommit" and bad["json"] is None and bad["error"].startswith("cannot decode")
    # every intact record is there: 21 records per file, minus the lost batch / the cut tail
    assert sum(1 for r in rows if r["source"] == str(path) and r["problem"] is None) == 21 - 3
    assert sum(1 for r in rows if r["source"] == str(cut) and r["problem"] is None) == 21 - 3


def test_text_dumps_are_read_per_file_with_their_lines_and_garbage(spark, log_dir, tmp_path):
    entries = list(read_dump(log_dir))
    lines = list(render_dump_log(entries))
    lines.insert(5, "this line is not kafka-dump-log output")
    dump = tmp_path / "dump.txt"
    dump.write_text("\n".join(lines) + "\n")
    console = tmp_path / "console.jsonl"
    console.write_text("\n".join(render_jsonl(e) for e in entries if e.topic == "__consumer_offsets"
                                 and e.control is None) + "\n")
    df = kds.load(spark, [dump, console])
    rows = collect(df)
    assert [r for r in rows if r["problem"] is None] == reference([dump, console])
    (garbage,) = [r for r in rows if r["problem"] is not None]
    assert (garbage["problem"], garbage["line"], garbage["source"]) == ("garbage_line", 6, str(dump))
    assert kds.report_counts(df) == counts(report_of([dump, console]))
    assert {r["kind"] for r in rows} == {"dump-log", "console"}
    text_txn = [r["txn"] for r in rows if r["kind"] == "dump-log" and r["partition"] == 2]
    assert text_txn.count("aborted") == 2 and text_txn.count("open") == 1


# --------------------------------------------------------------------------- transactions and compaction


def test_compacted_leaves_out_aborted_and_open_transactions(log_df):
    compacted = collect(kds.compacted(log_df))
    offsets = {(r["group_id"], r["topic_name"], r["topic_partition"]): r["committed_offset"]
               for r in compacted if r["partition"] == 2}
    # txn-app in-0: 1 and 2 committed, 3 left open; in-2 aborted; plain-app's last commit wins
    assert offsets == {("txn-app", "in", 0): 2, ("txn-app", "in", 1): 1, ("plain-app", "in", 0): 7}
    assert {r["txn"] for r in compacted} <= {"none", "committed"}
    assert all(not r["tombstone"] and r["error"] is None for r in compacted)
    assert ("old-app", "t", 0) not in {(r["group_id"], r["topic_name"], r["topic_partition"]) for r in compacted}
    # one row per key and partition: the ConsumerGroupMemberMetadata "gone" tombstone removed its key
    keys = [(r["topic"], r["partition"], r["key"]) for r in compacted]
    assert len(keys) == len(set(keys))
    assert not any(r["member_id"] == "gone" for r in compacted)


def _txn_commit(c, group, offset, producer_id):
    return c.handle(request("TxnOffsetCommit", 3, transactional_id=f"tx-{producer_id}", group_id=group,
                            producer_id=producer_id, producer_epoch=0, generation_id=-1, member_id="",
                            topics=[{"name": "orders", "partitions": [{"partition_index": 1, "committed_offset": offset,
                                                                       "committed_metadata": "tx"}]}]))


def _marker(c, group, commit_: bool, producer_id):
    return c.handle(request("WriteTxnMarkers", 1, markers=[{
        "producer_id": producer_id, "producer_epoch": 0, "transaction_result": commit_, "coordinator_epoch": 3,
        "topics": [{"name": "__consumer_offsets", "partition_indexes": [c.partition_for(group)]}]}]))


def _rebalanced_group(c, group):
    """Two members join and sync; then B leaves and A rejoins alone (generation 2)."""
    ja = join_until_member_id(c, group, client_id="A")
    jb = join_until_member_id(c, group, client_id="B")
    c.advance(10_000)
    ra, rb = ja.response, jb.response
    assignment = {ra.member_id: b"a", rb.member_id: b"b"}
    for r in (ra, rb):
        assert sync(c, group, r.member_id, r.generation_id,
                    assignments=assignment if r.leader == r.member_id else None).done
    commit(c, group, {("orders", 0): 100}, generation=ra.generation_id, member_id=ra.member_id)
    leave(c, group, (rb.member_id, None))
    again = join(c, group, ra.member_id, client_id="A")
    assert again.done and again.response.generation_id == 2
    assert sync(c, group, ra.member_id, 2, assignments={ra.member_id: b"all"}).done
    return ra.member_id, rb.member_id


@pytest.fixture(scope="module")
def coordinator_dump(tmp_path_factory):
    """A coordinator driven through commits, deletes, expiration, a rebalancing group and transactions."""
    c = Coordinator(cluster=Cluster({"orders": 3, "payments": 2}, seed=7),
                    config={"offsets.topic.num.partitions": 4, "offsets.retention.minutes": 1,
                            "offsets.retention.check.interval.ms": 10_000})
    commit(c, "old", {("orders", 0): 1})
    c.advance(75_000)  # "old" expires: offset and group tombstones
    commit(c, "g1", {("orders", 0): 5, ("orders", 1): 6, ("payments", 0): 7}, metadata="first")
    commit(c, "g1", {("orders", 0): 9})  # overwrite
    assert c.handle(request("OffsetDelete", 0, group_id="g1", topics=[
        {"name": "orders", "partitions": [{"partition_index": 1}]}])).error_code == 0
    commit(c, "gone", {("orders", 2): 3})
    c.handle(request("DeleteGroups", 2, groups_names=["gone"]))
    members = _rebalanced_group(c, "cg")
    commit(c, "tx", {("orders", 1): 10})
    _txn_commit(c, "tx", 11, 1000)
    _marker(c, "tx", True, 1000)
    _txn_commit(c, "tx", 12, 1001)
    _marker(c, "tx", False, 1001)
    _txn_commit(c, "open-tx", 13, 1002)  # never decided
    root = tmp_path_factory.mktemp("coordinator")
    c.log.write(root)
    return c, root, members


def test_compacted_view_equals_the_state_of_the_coordinator_that_wrote_the_dump(spark, coordinator_dump):
    c, root, _members = coordinator_dump
    records = kds.load(spark, root, split_bytes=200).cache()
    rows = collect(kds.compacted(records))
    offsets = sorted(
        ({"group": r["group_id"], "topic": r["topic_name"], "partition": r["topic_partition"],
          "offset": r["committed_offset"], "leader_epoch": r["leader_epoch"],
          "metadata": json.loads(r["json"])["value"]["data"]["metadata"],
          "commit_timestamp": r["commit_timestamp"], "expire_timestamp": None}
         for r in rows if r["record_type"] == "OffsetCommit"), key=lambda d: (d["group"], d["topic"], d["partition"]))
    assert offsets == c.offsets_table()
    assert {(o["group"], o["offset"]) for o in offsets} >= {("tx", 11), ("g1", 9), ("cg", 100)}
    groups = {r["group_id"]: json.loads(r["json"])["value"]["data"]
              for r in rows if r["record_type"] == "GroupMetadata"}
    # a group exists with group metadata, committed offsets, or offsets pending in an open transaction
    pending = {r["group_id"] for r in collect(records.where("txn = 'open'"))}
    assert pending == {"open-tx"}
    assert set(c.groups) == set(groups) | {o["group"] for o in offsets} | pending
    assert not {"old", "gone"} & set(c.groups)
    for gid, value in groups.items():
        g = c.groups[gid]
        assert (value["generation"], value["protocol"], value["leader"]) == (g.generation_id, g.protocol_name, g.leader_id)
        assert [m["memberId"] for m in value["members"]] == list(g.members)


def test_membership_timeline_and_rebalances(spark, coordinator_dump):
    _c, root, (a, b) = coordinator_dump
    df = kds.load(spark, root).cache()
    timeline = [r for r in collect(kds.membership_timeline(df)) if r["group_id"] == "cg"]
    events = sorted((r["offset"], r["event"], r["member_id"] or "", r["generation"]) for r in timeline)
    gens = [(e, g) for _o, e, m, g in events if e == "generation"]
    assert [g for _e, g in gens] == [0, 1, 2]
    assert sorted((e, m, g) for _o, e, m, g in events if e != "generation") == sorted(
        [("joined", a, 1), ("joined", b, 1), ("left", b, 2)])
    assert {r["group_type"] for r in timeline} == {"classic"}
    reb = collect(kds.rebalances(df, window="1 hour"))
    cg = [r for r in reb if r["group_id"] == "cg"]
    assert sum(r["rebalances"] for r in cg) == 2 and sum(r["joined"] for r in cg) == 2 \
        and sum(r["left"] for r in cg) == 1
    assert max(r["last_generation"] for r in cg) == 2


def test_membership_timeline_of_consumer_groups(log_df):
    rows = collect(kds.membership_timeline(log_df).where("group_type = 'consumer'"))
    assert sorted((r["event"], r["member_id"], r["generation"], r["member_epoch"]) for r in rows) == [
        ("group_epoch", None, 5, None), ("joined", "m-1", None, None), ("left", "gone", None, None),
        ("member_epoch", "m-1", None, 5)]


# --------------------------------------------------------------------------- other views


def test_offset_history_and_commit_rate(log_df):
    df = log_df
    history = collect(kds.offset_history(df).where("group_id in ('plain-app', 'old-app')"))
    plain = sorted((r["offset"], r["committed_offset"], r["previous_offset"], r["advance"]) for r in history
                   if r["group_id"] == "plain-app")
    assert plain == [(2, 5, None, None), (6, 6, 5, 1), (9, 7, 6, 1)]
    old = sorted((r["offset"], r["committed_offset"], r["deleted"]) for r in history if r["group_id"] == "old-app")
    assert old == [(4, 1, False), (5, None, True)]
    rate = collect(kds.commit_rate(df, window="10 minutes"))
    by_group = {r["group_id"]: r for r in rate}
    assert by_group["bulk"]["commits"] == 42 and by_group["bulk"]["requests"] == 3
    assert by_group["bulk"]["topic_partitions"] == 40 and by_group["bulk"]["commits_per_second"] == pytest.approx(0.07)
    assert by_group["txn-app"]["commits"] == 3  # the aborted and the open commit do not count
    assert all(r["window_end"].timestamp() - r["window_start"].timestamp() == 600 for r in rate)


def test_lag_from_a_csv_a_pandas_frame_or_a_cluster(log_df, tmp_path):
    df = log_df.where("group_id = 'orders-app'")
    csv = tmp_path / "ends.csv"
    csv.write_text("topic,partition,end_offset\norders,0,20\norders,1,11\n")
    frame = pd.DataFrame({"topic": ["orders"], "partition": [0], "end_offset": [15]})
    cluster = Cluster({"orders": 2})
    cluster.set_end_offset("orders", 0, 30)
    sources = {"csv": csv, "pandas": frame, "cluster": cluster}
    lags = [kds.lag(df, end).withColumn("source", F.lit(name)) for name, end in sources.items()]
    got: dict[str, dict] = {name: {} for name in sources}
    for r in collect(lags[0].unionByName(lags[1]).unionByName(lags[2])):  # one job for the three
        got[r["source"]][r["partition"]] = (r["committed_offset"], r["end_offset"], r["lag"])
    assert got == {"csv": {0: (12, 20, 8), 1: (11, 11, 0)}, "pandas": {0: (12, 15, 3), 1: (11, None, None)},
                   "cluster": {0: (12, 30, 18), 1: (11, 0, -11)}}
    with pytest.raises(FileNotFoundError, match="nope.csv"):
        kds.lag(df, tmp_path / "nope.csv")
    with pytest.raises(TypeError, match="end_offsets"):
        kds.lag(df, 42)


def test_share_state_carries_the_snapshot_forward(spark, log_dir):
    rows = collect(kds.share_state(kds.load(spark, log_dir, topic="__share_group_state")))
    assert [(r["record_type"], r["snapshot_epoch"], r["state_epoch"], r["start_offset"], r["spso"], r["acknowledged"],
             r["archived"], r["leader_epoch"]) for r in sorted(rows, key=lambda r: r["offset"])] == [
        ("ShareSnapshot", 1, 0, 100, 100, 10, 0, 3), ("ShareUpdate", 1, 0, -1, 100, 0, 1, 3)]
    assert rows[0]["state_batches"][0].asDict() == {"first_offset": 100, "last_offset": 109, "delivery_state": 2,
                                                    "delivery_count": 1}


def test_share_state_folds_the_durable_state_over_time_on_the_sample(spark):
    # data/samples/share-state: the KIP-932 durable-state example on queue-app's orders-0; an
    # update carries only what changed, durable_batches the whole state the share coordinator holds
    sample = Path(__file__).resolve().parents[2] / "data" / "samples" / "share-state"
    rows = collect(kds.share_state(kds.load(spark, sample)).where("group_id = 'queue-app' and share_partition = 0"))
    rows.sort(key=lambda r: r["offset"])
    got = [(r["record_type"][5], r["spso"], [tuple(b) for b in r["durable_batches"]], r["durable_acknowledged"])
           for r in rows]
    assert got == [
        ("S", 100, [], 0),                                    # initialised at SPSO 100
        ("U", 100, [], 0),                                    # the leader's read (leader epoch 1)
        ("U", 110, [], 0),                                    # acknowledge 100-109: SPSO 110
        ("U", 110, [(110, 110, 0, 1)], 0),                    # release 110
        ("S", 110, [(110, 110, 0, 1), (119, 119, 2, 1)], 1),  # acknowledge 119 (a snapshot: 3 updates before)
        ("U", 110, [(110, 112, 0, 1), (119, 119, 2, 1)], 1),  # lock timeout 111, 112
        ("U", 110, [(110, 112, 0, 1), (113, 119, 2, 1)], 7),  # acknowledge 113-118
        ("U", 111, [(111, 112, 0, 1), (113, 119, 2, 1)], 7),  # acknowledge 110: SPSO 111
        ("S", 120, [], 0)]                                    # acknowledge 111, 112: SPSO 120
    assert [r["state_batches"] for r in rows][5] == [(111, 112, 0, 1)]  # as written: the delta only
    deleted = collect(kds.share_state(kds.load(spark, sample)).where("group_id = 'audit-queue'"))
    assert sorted((r["deleted"], r["durable_batches"] is None) for r in deleted) == [(False, False), (True, True)]


def test_write_parquet_writes_each_view(spark, log_dir, log_df, tmp_path):
    ends = tmp_path / "ends.csv"
    ends.write_text("orders,0,20\n")  # no header line
    out = tmp_path / "out"
    written = kds.write_parquet(spark, [log_dir], out, end_offsets=ends)
    assert list(written) == list(kds.VIEWS)
    views = {"records": log_df, "compacted": kds.compacted(log_df), "offset_history": kds.offset_history(log_df),
             "commit_rate": kds.commit_rate(log_df), "membership_timeline": kds.membership_timeline(log_df),
             "rebalances": kds.rebalances(log_df), "streams_tasks": kds.streams_tasks(log_df),
             "share_state": kds.share_state(log_df),
             "lag": kds.lag(log_df, ends)}
    for name, path in written.items():
        assert spark.read.parquet(path).columns == views[name].columns, name
    assert spark.read.parquet(written["records"]).count() == 73
    assert spark.read.parquet(written["lag"]).where("group_id = 'orders-app' and partition = 0").first()["lag"] == 8
    only = kds.write_parquet(spark, log_dir, tmp_path / "only", views=["share_state", "lag"])
    assert list(only) == ["share_state"]  # no end offsets: no lag
    assert sorted(p.name for p in (tmp_path / "only").iterdir()) == ["share_state"]  # decoded records not kept
    with pytest.raises(ValueError, match="unknown view"):
        kds.write_parquet(spark, log_dir, out, views=["nope"])


# --------------------------------------------------------------------------- no Spark needed


def test_missing_paths_are_named_and_pyspark_is_imported_by_the_spark_module_only(spark, tmp_path):
    with pytest.raises(FileNotFoundError, match="no-such-dump"):
        kds.load(spark, tmp_path / "no-such-dump")
    code = ("import sys, kgroup, kgroup.dumps, kgroup.dumps.ranges; "
            "sys.exit(1 if any(m.startswith('pyspark') for m in sys.modules) else 0)")
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


ALL_TYPES = [(t, cls) for t, cls in sorted(RECORD_TYPES.items())] + [
    (t, cls) for t, cls in sorted(SHARE_STATE_RECORD_TYPES.items())]


@pytest.mark.parametrize("cls", [cls for _t, cls in ALL_TYPES], ids=[cls.NAME for _t, cls in ALL_TYPES])
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_row_json_is_exactly_to_json(cls, data):
    record = data.draw(records(cls))
    assert ranges.record_json(record) == str(record.to_json())


def test_the_offset_commit_fast_path_renders_exactly_to_json(tmp_path):
    odd = ["", "plain", 'quote " and \\ backslash', "tab\tnew\nline \x01\x1f", "ünïcødé ✓ 🎉", "%d %s %%"]
    recs = [OffsetCommit(OffsetCommitKey(group=g, topic=t, partition=p),
                         OffsetCommitValue(offset=o, leader_epoch=e, metadata=m, commit_timestamp=T0 + o))
            for g, t in (("100%-group", 'to"pic'), ("g\u0007", "t"))
            for p, (o, e, m) in enumerate([(0, -1, odd[0]), (2**62, 7, odd[1]), (5, 0, odd[2]), (6, 1, odd[3]),
                                           (7, 2, odd[4]), (8, 3, odd[5])])]
    log = OffsetsLog(1)
    log.append(0, recs, timestamp=T0)
    path = log.write(tmp_path)[0]
    rows = [dict(zip(NAMES, r)) for chunk in ranges.run_task(ranges.plan_scan(path), 0)
            for r in zip(*chunk.columns().values())]
    assert [r["json"] for r in rows] == [str(r.to_json()) for r in recs]
    assert [r["committed_offset"] for r in rows] == [r.value.offset for r in recs]


def test_every_codec_log_append_time_and_headers_read_like_read_dump(tmp_path):
    """The batch decoder of the tasks against read_dump on what the fixtures do not cover."""
    batches, offset = [], 0
    for codec in Compression:
        recs = [(*oc("g", "t", p, 10 * offset + p).encode(), T0 + offset) for p in range(4)]
        batches.append(encode_batch(recs, base_offset=offset, compression=codec))
        offset += 4
    batches.append(encode_batch([(*oc("g", "t", 0, 1).encode(), T0)], base_offset=offset,
                                timestamp_type=TimestampType.LOG_APPEND_TIME, log_append_time=T0 + 99))
    batches.append(encode_batch([(*oc("g", "t", 1, 2).encode(), T0, [("h", b"v"), ("n", None)])],
                                base_offset=offset + 1, compression=Compression.LZ4))
    path = write_segment(tmp_path / "__consumer_offsets-0", 0, batches)
    plan = ranges.plan_scan(path, split_bytes=120)
    assert len(plan.tasks) > 3
    rows = [dict(zip(NAMES, r)) for i in range(len(plan.tasks)) for chunk in ranges.run_task(plan, i)
            for r in zip(*chunk.columns().values())]
    assert rows == reference(path)
    assert [r["timestamp"] for r in rows[-2:]] == [T0 + 99, T0]


def test_batch_cuts_stop_at_corruption_and_keep_the_rest_in_one_range(tmp_path):
    path = _long_partition(tmp_path)
    starts = [b.position for b in read_batches(path.read_bytes())]
    data = bytearray(path.read_bytes())
    data[starts[10] + 8:starts[10] + 12] = struct.pack(">i", 0x7FFFFFF0)  # a garbage length field
    bare = tmp_path / "bare" / "__consumer_offsets-0"
    bare.mkdir(parents=True)
    (bare / path.name).write_bytes(bytes(data))
    cuts = ranges.batch_cuts(bare / path.name, 300)
    assert cuts[-1] <= starts[10] and set(cuts) <= set(starts)
    report = report_of(bare / path.name)
    plan = ranges.plan_scan(bare / path.name, split_bytes=300)
    rows = [r for i in range(len(plan.tasks)) for chunk in ranges.run_task(plan, i)
            for r in zip(*chunk.columns().values())]
    assert len([r for r in rows if r[NAMES.index("problem")] is None]) == report.entries
    assert [r[NAMES.index("corrupt_bytes")] for r in rows if r[NAMES.index("problem")]] == [report.corrupt_bytes]


def test_streams_tasks_view_matches_the_replayed_group(spark):
    """KIP-1071: each Streams member's last current assignment and topology epoch, from Spark,
    equal what the coordinator replaying the same sample dump holds."""
    from pathlib import Path

    from kgroup.dumps import replay
    sample = Path(__file__).resolve().parents[2] / "data" / "samples" / "streams-app"
    rows = collect(kds.streams_tasks(kds.load(spark, sample)))
    last = {}
    for r in sorted(rows, key=lambda r: (r["partition"], r["offset"])):
        last[r["member_id"]] = r
    group = replay(sample).groups["clickstream"]
    live = {mid: r for mid, r in last.items() if r["member_epoch"] is not None}
    assert set(live) == set(group.members)
    for mid, m in group.members.items():
        r = live[mid]
        assert r["member_epoch"] == m.member_epoch and r["topology_epoch"] == m.topology_epoch
        assert sorted(r["active"]) == sorted(f"{s}_{p}" for s, p in m.assigned.active_ids())
        assert sorted(r["standby"]) == sorted(f"{s}_{p}" for s, p in m.assigned.standby_ids())
    assert {r["topology_epoch"] for r in rows} == {0, 1}          # the rolling bounce is visible


def test_newer_value_versions_and_unknown_types_load_as_rows(spark, tmp_path):
    """KIP-915 through Spark: a v5 OffsetCommit (Kafka's OffsetsMessageFormatter prints it with
    "version":5) and a newer GroupMetadata load as typed rows, an unknown type as a row with its
    type number, next to the v3 commits the columnar fast path takes."""
    v4 = oc("g", "t", 2, 12, version=4)
    key, value = v4.encode()
    items = [(*oc("g", "t", p, 10 + p).encode(), T0 + p) for p in range(5)]
    items[2] = (key, b"\x00\x05" + value[2:], T0 + 2)
    items[3] = (*raw_record(99, b"\x00\x01x", b"\x00\x00\x00"), T0 + 3)
    path = write_segment(tmp_path / "__consumer_offsets-0", 0, [encode_batch(items, base_offset=0)])
    rows = collect(kds.load(spark, tmp_path))
    assert rows == reference(tmp_path)
    assert rows[2]["record_type"] == "OffsetCommit" and rows[2]["committed_offset"] == 12 and rows[2]["error"] is None
    assert json.loads(rows[2]["json"])["value"]["version"] == 5
    assert rows[3]["record_type"] is None and rows[3]["record_type_id"] == 99
    assert [r["committed_offset"] for r in rows] == [10, 11, 12, None, 14]
    assert path.exists()
