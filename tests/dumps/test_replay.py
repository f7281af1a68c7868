"""Replaying dumps: to an offset or a time, transactions as Kafka ends them, partition inference."""
from __future__ import annotations

import warnings
from datetime import datetime, timezone
from pathlib import Path

import pytest

from kgroup import Cluster, Coordinator
from kgroup import records as R
from kgroup.dumps import DumpError, DumpReport, describe_groups, read_dump, replay
from kgroup.dumps.metadata import write_cluster_metadata
from kgroup.dumps.replay import format_ms, infer_num_partitions, to_epoch_ms
from kgroup.groups.share.coordinator import share_coordinator
from kgroup.log import OffsetsLog, partition_for
from kgroup.protocol import request
from kgroup.runtime import REPLAYERS

from kgroup_testing import make_samples

T0 = 1_718_000_000_000
SAMPLES = make_samples()
#: What a reload cannot know, as in Kafka: classic members waiting in a join/sync phase.
SOFT_MEMBER_FIELDS = ("awaiting_join", "awaiting_sync", "pending_sync")


def hard_state(groups: list[dict]) -> list[dict]:
    return [{**g, "members": [{k: v for k, v in m.items() if k not in SOFT_MEMBER_FIELDS} for m in g["members"]]}
            for g in groups]


def run(name: str, tmp_path: Path) -> tuple[Coordinator, Path]:
    """The scenario's coordinator and a log dir like its broker's: __consumer_offsets segments and
    the KRaft metadata log, so a replay knows the topics the writer knew (names, partition counts)."""
    c = SAMPLES.SCENARIOS[name].run()
    c.log.write(tmp_path / name)
    write_cluster_metadata(c.cluster, tmp_path / name)
    c.share_state_log.write(tmp_path / name)  # the share-state sample's records
    return c, tmp_path / name


def committed(groups: list[dict], group: str) -> dict:
    g = next(d for d in groups if d["group_id"] == group)
    return {(o["topic"], o["partition"]): o["offset"] for o in g["offsets"]}


def pending(groups: list[dict], group: str) -> dict:
    g = next(d for d in groups if d["group_id"] == group)
    return {(o["producer_id"], o["topic"], o["partition"]): o["offset"] for o in g["pending_offsets"]}


# ------------------------------------------------------------------------------ the whole dump

@pytest.mark.parametrize("name", sorted(SAMPLES.SCENARIOS))
def test_replay_of_a_dump_equals_the_coordinator_that_wrote_it(name, tmp_path):
    original, path = run(name, tmp_path)
    replayed = replay(path)
    # the samples end with no rebalance under way, so even the soft state agrees
    assert describe_groups(replayed) == describe_groups(original)
    assert replayed.offsets_table() == original.offsets_table()
    assert share_coordinator(replayed).states == share_coordinator(original).states
    assert replayed.replay_stats.num_partitions == 50
    assert replayed.replay_stats.skipped == {}


@pytest.mark.parametrize("name", ["offsets", "static-rolling-restart", "transactions"])
def test_every_prefix_equals_the_writers_look_back(name, tmp_path):
    """replay(offset=N) on a one-partition dump is the writer's own as_of after that record."""
    original, path = run(name, tmp_path)
    for partition in original.log.partitions_in_use():
        for e in original.log.entries(partition):
            # other partitions are cut at the same offset number, so compare this partition's groups
            mine = [d for d in describe_groups(replay(path, offset=e.offset)) if d["partition"] == partition]
            then = [d for d in describe_groups(original.at_offset(partition, e.offset)) if d["partition"] == partition]
            assert hard_state(mine) == hard_state(then)


def test_a_rebalance_under_way_is_soft_state_the_dump_does_not_hold(tmp_path):
    """As after a coordinator failover: the group is what its last GroupMetadata persisted."""
    from kgroup_testing import join_until_member_id, sync

    c = Coordinator(cluster=Cluster({"orders": 3}))
    a = join_until_member_id(c, "g", client_id="a")
    c.advance(3_000)  # group.initial.rebalance.delay.ms
    member_a = a.response.member_id
    sync(c, "g", member_a, a.response.generation_id, assignments={member_a: b""})
    join_until_member_id(c, "g", client_id="b")  # B arrives: a rebalance starts, A must rejoin
    c.log.write(tmp_path)
    live, replayed = describe_groups(c)[0], describe_groups(replay(tmp_path))[0]
    assert live["state"] == "PreparingRebalance" and len(live["members"]) == 2
    assert replayed["state"] == "Stable" and replayed["epoch"] == 1
    assert [m["member_id"] for m in replayed["members"]] == [member_a]


# ------------------------------------------------------------------------------ transactions

def test_transactions_visible_at_commit_marker_never_when_aborted_pending_when_open(tmp_path):
    _, path = run("transactions", tmp_path)
    g = "payments-app"
    p0, p1 = ("payments", 0), ("payments", 1)
    states = {n: describe_groups(replay(path, offset=n)) for n in range(9)}
    assert committed(states[1], g) == {p0: 10, p1: 10} and pending(states[1], g) == {}
    # the transactional records are written but not committed yet
    assert committed(states[3], g) == {p0: 10, p1: 10}
    assert pending(states[3], g) == {(1000, *p0): 20, (1000, *p1): 20}
    assert committed(states[4], g) == {p0: 10, p1: 25}
    # COMMIT marker: payments-0 takes the transaction's 20; payments-1 keeps 25, written after it
    assert committed(states[5], g) == {p0: 20, p1: 25} and pending(states[5], g) == {}
    assert pending(states[6], g) == {(1001, *p0): 999}
    assert committed(states[7], g) == {p0: 20, p1: 25} and pending(states[7], g) == {}
    assert pending(states[8], g) == {(1002, *p1): 30}
    assert all(committed(s, g)[p0] != 999 for s in states.values())


def test_an_open_transaction_can_still_be_committed_after_replay(tmp_path):
    _, path = run("transactions", tmp_path)
    c = replay(path)
    c.handle(request("WriteTxnMarkers", 1, markers=[{
        "producer_id": 1002, "producer_epoch": 0, "transaction_result": True, "coordinator_epoch": 1,
        "topics": [{"name": "__consumer_offsets", "partition_indexes": [c.partition_for("payments-app")]}]}]))
    assert committed(describe_groups(c), "payments-app")[("payments", 1)] == 30


# ------------------------------------------------------------------------------ time

def test_replay_at_a_time_takes_ms_datetime_and_iso_alike(tmp_path):
    _, path = run("transactions", tmp_path)
    t = T0 + 3_000  # the plain commit of payments-1 = 25
    forms = [t, datetime(2024, 6, 10, 6, 13, 23, tzinfo=timezone.utc), "2024-06-10T06:13:23Z",
             "2024-06-10T08:13:23+02:00", "2024-06-10 06:13:23", str(t)]
    results = [describe_groups(replay(path, at=f)) for f in forms]
    assert all(r == results[0] for r in results)
    assert committed(results[0], "payments-app") == {("payments", 0): 10, ("payments", 1): 25}
    assert describe_groups(replay(path, at=t - 1))[0]["offsets"][1]["offset"] == 10


def test_before_the_first_record_there_is_nothing(tmp_path):
    _, path = run("offsets", tmp_path)
    c = replay(path, at=T0 - 1)
    assert describe_groups(c) == []
    assert c.now() == T0 - 1  # the clock stands at the moment asked about
    assert c.replay_stats.after_cut == sum(1 for _ in read_dump(path))


def test_groups_that_expired_are_there_before_and_gone_after(tmp_path):
    _, path = run("expiring-group", tmp_path)
    before = describe_groups(replay(path, at="2024-06-10T06:20:00Z"))
    after = describe_groups(replay(path))
    assert [d["group_id"] for d in before] == ["audit-tool", "nightly-batch"]
    assert committed(before, "nightly-batch") == {("audit", 0): 130}
    assert [d["group_id"] for d in after] == ["audit-tool"]


def test_a_time_cut_is_a_prefix_per_partition(tmp_path):
    """A record stamped earlier than one before it does not come back after the cut."""
    log = OffsetsLog(50)
    p = partition_for("g", 50)
    for i, ts in enumerate([T0, T0 + 10, T0 + 5]):  # the clock went back for the third record
        log.append(p, [R.OffsetCommit(R.OffsetCommitKey(group="g", topic="t", partition=0),
                                      R.OffsetCommitValue(offset=i, commit_timestamp=ts), 3)], timestamp=ts)
    log.write(tmp_path)
    assert committed(describe_groups(replay(tmp_path, at=T0 + 7)), "g") == {("t", 0): 0}


def test_to_epoch_ms_and_back():
    assert to_epoch_ms("2024-06-10T06:13:20Z") == T0
    assert to_epoch_ms("2024-06-10T06:13:20.5Z") == T0 + 500
    assert to_epoch_ms("2024-06-10") == T0 - (6 * 3600 + 13 * 60 + 20) * 1000
    assert to_epoch_ms(datetime(2024, 6, 10, 6, 13, 20)) == T0  # no zone: UTC
    assert format_ms(T0 + 7) == "2024-06-10T06:13:20.007Z"
    assert format_ms(-1) == "-"
    assert all(to_epoch_ms(format_ms(ms)) == ms for ms in range(T0, T0 + 1000))  # exact to the millisecond
    with pytest.raises(ValueError, match="ISO-8601"):
        to_epoch_ms("yesterday")


# ------------------------------------------------------------------------------ text dumps

@pytest.mark.parametrize("name", sorted(SAMPLES.SCENARIOS))
def test_the_dump_log_rendering_replays_to_the_same_state(name):
    base = SAMPLES.SAMPLES
    # a log-dir sample's metadata log names topics; the text dump is replayed with it (--metadata)
    kw = {"metadata": base / name} if SAMPLES.SCENARIOS[name].log_dir else {}
    from_segments = describe_groups(replay(base / name))
    assert describe_groups(replay(base / f"{name}.dump-log.txt", **kw)) == from_segments
    assert describe_groups(replay(base / f"{name}.dump-log.txt", offset=3, **kw)) == \
        describe_groups(replay(base / name, offset=3))


def test_console_output_replays_where_it_has_no_transactions():
    base = SAMPLES.SAMPLES
    for name in ("offsets", "static-rolling-restart"):
        c = replay(base / f"{name}.console.jsonl")
        assert describe_groups(c) == describe_groups(replay(base / name))
        assert "names no partitions" in c.replay_stats.num_partitions_reason


def test_console_output_has_no_offsets_to_cut_at():
    with pytest.raises(DumpError, match="does not show offsets"):
        replay(SAMPLES.SAMPLES / "offsets.console.jsonl", offset=3)
    with pytest.raises(DumpError, match="does not show timestamps"):
        replay(SAMPLES.SAMPLES / "offsets.console.jsonl", at=T0)


def test_partial_records_of_older_text_forms_are_skipped_with_a_warning(tmp_path):
    text = tmp_path / "old.txt"
    text.write_text(
        "Dumping /k/__consumer_offsets-12/00000000000000000000.log\nStarting offset: 0\n"
        "| offset: 15 CreateTime: 1662649581270 keySize: 26 valueSize: 24 sequence: 0 headerKeys: [] "
        "key: offset_commit::group=my-group,partition=my-topic-0 payload: offset=1\n")
    with pytest.warns(UserWarning, match="partial records of older text forms") as warned:
        c = replay(text)
    assert [w.filename for w in warned] == [__file__]  # the warning names the caller
    assert describe_groups(c) == []
    assert c.replay_stats.skipped == {"partial records of older text forms (they carry only some fields)": 1}


# ------------------------------------------------------------------------------ what cannot be replayed

def test_record_types_without_replay_are_warned_once_and_reported(tmp_path, monkeypatch):
    _, path = run("static-rolling-restart", tmp_path)
    monkeypatch.delitem(REPLAYERS, R.GroupMetadata)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        c = replay(path)
    about = [w for w in caught if "GroupMetadata" in str(w.message)]
    assert len(about) == 1
    n = sum(1 for e in read_dump(path) if e.record is not None and e.record.NAME == "GroupMetadata")
    assert c.replay_stats.unreplayed == {"GroupMetadata": n} and n > 1
    assert describe_groups(c, "orders-app")[0]["members"] == []  # offsets only: a simple group


def test_unknown_record_types_are_skipped_and_counted(tmp_path):
    log = OffsetsLog(50)
    p = partition_for("g", 50)
    unknown_key = (99).to_bytes(2, "big") + b"\x00\x01g"
    log.append(p, [R.OffsetCommit(R.OffsetCommitKey(group="g", topic="t", partition=0),
                                  R.OffsetCommitValue(offset=5, commit_timestamp=T0), 3)], timestamp=T0)
    log.append(p, [(unknown_key, b"\x00\x00")], timestamp=T0 + 1)
    log.write(tmp_path)
    report = DumpReport()
    with pytest.warns(UserWarning, match="skipped 1 records of unknown type 99, as Kafka's coordinator loader"):
        c = replay(tmp_path, report=report)
    assert c.replay_stats.skipped == {"records of unknown type 99": 1}
    assert c.replay_stats.unknown_types == {99: 1}
    assert c.replay_stats.as_dict()["unknown_types"] == {"99": 1}
    assert committed(describe_groups(c), "g") == {("t", 0): 5}
    assert report.unknown == 1 and report.problems == [] and len(report.warnings) == 1


def test_a_segment_given_twice_is_replayed_once(tmp_path):
    original, path = run("transactions", tmp_path)
    seg = next(path.glob("__consumer_offsets-*/*.log"))
    with pytest.warns(UserWarning, match="offset goes back") as warned:
        c = replay([seg, seg], metadata=path)
    assert [w.filename for w in warned] == [__file__]
    assert describe_groups(c) == describe_groups(original)
    assert c.replay_stats.skipped == {"records whose offset goes back (e.g. a segment given twice)": 9}


def test_share_state_goes_to_the_share_coordinator_and_other_topics_are_refused(tmp_path):
    # __share_group_state is the share coordinator's: replayed into the coordinator's share
    # coordinator (tests/dumps/test_share_state_dumps.py), never into groups
    original, path = run("share-state", tmp_path)
    c = replay(path, topic="__share_group_state")
    assert c.groups == {} and len(c.share_state_log) == len(original.share_state_log)
    with pytest.raises(DumpError, match="topic must be"):
        replay(path, topic="orders")


def test_entries_already_read_can_be_replayed(tmp_path):
    original, path = run("offsets", tmp_path)
    entries = [e for e in read_dump(path) if e.record is None or getattr(e.record.key, "group", "") == "billing"]
    assert [d["group_id"] for d in describe_groups(replay(entries))] == ["billing"]
    assert describe_groups(replay(iter(entries), metadata=path), "billing") == describe_groups(original, "billing")


# ------------------------------------------------------------------------------ partitions

def _commit_log(num_partitions: int, groups: list[str], tmp_path: Path, only: set[int] | None = None) -> Path:
    log = OffsetsLog(num_partitions)
    for i, g in enumerate(groups):
        p = partition_for(g, num_partitions)
        if only is None or p in only:
            log.append(p, [R.OffsetCommit(R.OffsetCommitKey(group=g, topic="t", partition=0),
                                          R.OffsetCommitValue(offset=i, commit_timestamp=T0), 3)], timestamp=T0 + i)
    log.write(tmp_path)
    return tmp_path


def test_the_partition_count_is_inferred_from_where_groups_are(tmp_path):
    groups = [f"app-{i}" for i in range(12)]
    c = replay(_commit_log(10, groups, tmp_path))
    assert c.replay_stats.num_partitions == 10 == c.num_partitions
    assert all(d["partition"] == partition_for(d["group_id"], 10) for d in describe_groups(c))


def test_kafkas_default_wins_when_it_fits_even_with_one_partition_dir(tmp_path):
    groups = [f"app-{i}" for i in range(40)]
    one = {partition_for(groups[0], 50)}
    c = replay(_commit_log(50, groups, tmp_path, only=one))
    assert c.replay_stats.num_partitions == 50
    assert "default 50" in c.replay_stats.num_partitions_reason


def test_the_partition_count_can_be_given(tmp_path):
    path = _commit_log(10, [f"app-{i}" for i in range(12)], tmp_path)
    c = replay(path, num_partitions=64)
    assert c.num_partitions == 64 and c.replay_stats.num_partitions_reason == "given"
    assert replay(path, config={"offsets.topic.num.partitions": 12}).num_partitions == 12
    with pytest.raises(DumpError, match="partition 9"):
        replay(path, num_partitions=5)
    with pytest.raises(ValueError, match="num_partitions=64"):
        replay(path, num_partitions=64, config={"offsets.topic.num.partitions": 12})


def test_infer_num_partitions_needs_every_group_in_place():
    four = {g: partition_for(g, 7) for g in ("a", "bb", "ccc", "dddd")}
    assert infer_num_partitions(four)[0] == 7
    # one group says little: "a" hashes to 97, and 97 % 47 == 3 (the smallest count above 3 that fits)
    assert infer_num_partitions({"a": 3})[0] == 47
    # "Aa" and "BB" have the same Java hashCode, so no count puts them on different partitions
    n, why = infer_num_partitions({"Aa": 0, "BB": 1})
    assert n is None and "puts every group on its partition" in why


def test_records_not_where_kafka_puts_them_still_replay_with_a_warning(tmp_path):
    log = OffsetsLog(4)
    for p, g in enumerate(["Aa", "BB"]):  # the same hash on two partitions: placed by hand
        log.append(p, [R.OffsetCommit(R.OffsetCommitKey(group=g, topic="t", partition=0),
                                      R.OffsetCommitValue(offset=p, commit_timestamp=T0), 3)], timestamp=T0)
    log.write(tmp_path)
    with pytest.warns(UserWarning, match="puts every group on its partition") as warned:
        c = replay(tmp_path)
    assert [w.filename for w in warned] == [__file__]
    assert c.num_partitions == 50 and "fell back to 50" in c.replay_stats.num_partitions_reason
    groups = describe_groups(c)
    assert committed(groups, "Aa") == {("t", 0): 0} and committed(groups, "BB") == {("t", 0): 1}


# ------------------------------------------------------------------------------ describe_groups

def test_describe_groups_of_one_group_and_of_none(tmp_path):
    c = Coordinator(cluster=Cluster({"orders": 3}))
    assert describe_groups(c) == []
    _, path = run("offsets", tmp_path)
    r = replay(path)
    billing = describe_groups(r, "billing")
    assert [d["group_id"] for d in billing] == ["billing"]
    assert billing[0]["type"] == "classic" and billing[0]["partition"] == partition_for("billing", 50)
    assert committed(billing, "billing") == {("orders", 0): 150, ("orders", 1): 250}
    assert billing[0]["offsets"][0]["metadata"] == "checkpoint-1"
    assert describe_groups(r, "scratch") == []  # deleted by DeleteGroups
    reports = describe_groups(r, "reports")[0]["offsets"][0]
    assert reports["expire_timestamp"] == T0 + 10_000 + 86_400_000  # a v2 commit's retention
