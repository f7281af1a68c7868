"""`__share_group_state` dumps: replayed into the share coordinator, described per
share-partition as kafka-dump-log.sh --share-group-state-decoder prints a snapshot, the
share-state sample (the KIP-932 durable-state example) and the `kgroup dump` command."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from kgroup import Cluster, Coordinator
from kgroup.cli import main
from kgroup.dumps import describe_groups, describe_share_partitions, read_dump, replay
from kgroup.groups.share.coordinator import share_coordinator
from kgroup.groups.share.state_batches import Batch

from kgroup_testing import make_samples

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "data" / "samples" / "share-state"


@pytest.fixture(scope="module")
def live() -> Coordinator:
    """The coordinator the share-state sample was written by."""
    return make_samples().SCENARIOS["share-state"].run()


def _states(c: Coordinator) -> dict:
    return dict(share_coordinator(c).states)


@pytest.mark.parametrize("form", ["share-state", "share-state.dump-log.txt", "share-state.console.jsonl"])
def test_every_form_of_the_sample_replays_to_the_live_share_state(live, form):
    c = replay(SAMPLE.parent / form)
    assert _states(c) == _states(live)
    assert c.replay_stats.share_num_partitions == 50  # inferred: Kafka's default fits every share-partition
    assert c.replay_stats.share_records == len(live.share_state_log)
    assert c.groups == {}


def test_sample_tells_the_kip_durable_state_story():
    # KIP-932 "Managing durable share-partition state": SPSO 100 -> 120, acquired records never written
    c = replay(SAMPLE)
    rows = {(d["group_id"], d["partition"]): d for d in describe_share_partitions(c)}
    assert sorted(rows) == [("queue-app", 0), ("queue-app", 1)]  # audit-queue's was deleted
    orders0 = rows[("queue-app", 0)]
    assert (orders0["start_offset"], orders0["state_batches"], orders0["state_epoch"], orders0["leader_epoch"]) == \
        (120, [], 0, 1)
    assert orders0["topic"] is None  # a dump knows topic ids only
    orders1 = rows[("queue-app", 1)]  # reset by an admin to 50 at state epoch 1, then 50-59 acknowledged
    assert (orders1["start_offset"], orders1["state_epoch"]) == (50, 1)
    assert orders1["state_batches"] == [{"first_offset": 50, "last_offset": 59, "delivery_state": "Acknowledged",
                                         "delivery_count": 1}]
    # every third update was followed by a snapshot: ShareSnapshot at offsets 0, 4, 8 of orders-0's partition
    entries = [e for e in read_dump(SAMPLE) if e.partition == orders0["state_partition"]]
    assert [e.offset for e in entries if e.record.NAME == "ShareSnapshot"] == [0, 4, 8]


def test_cut_by_offset_shows_the_table_midway():
    # after offset 6 of orders-0's state partition: 113-118 acknowledged joined 119
    c = replay(SAMPLE, offset=6)
    d = next(d for d in describe_share_partitions(c, "queue-app") if d["partition"] == 0)
    assert d["start_offset"] == 110
    assert [(b["first_offset"], b["last_offset"], b["delivery_state"]) for b in d["state_batches"]] == \
        [(110, 112, "Available"), (113, 119, "Acknowledged")]


def test_described_key_and_payload_are_the_decoder_line_of_a_fresh_snapshot():
    # orders-0's last record is a ShareSnapshot (offset 8) with nothing after it: the state
    # described must print exactly as kafka-dump-log printed that record
    c = replay(SAMPLE)
    d = next(d for d in describe_share_partitions(c) if d["partition"] == 0)
    text = (SAMPLE.parent / "share-state.dump-log.txt").read_text().splitlines()
    dumping = text.index(f"Dumping share-state/__share_group_state-{d['state_partition']}/00000000000000000000.log")
    line = next(t for t in text[dumping:] if t.startswith("| offset: 8 "))
    assert line.endswith(f"key: {d['key']} payload: {d['payload']}")
    assert json.loads(d["key"]) == {"type": "0", "data": {"groupId": "queue-app", "topicId": d["topic_id"],
                                                         "partition": 0}}


def test_a_dump_with_both_topics_replays_both(live, tmp_path):
    from tests.kgroup_testing import commit
    commit(live, "billing", {("orders", 0): 7})
    live.log.write(tmp_path)
    live.share_state_log.write(tmp_path)
    c = replay(tmp_path)
    assert _states(c) == _states(live)
    assert [d["group_id"] for d in describe_groups(c)] == ["billing"]
    only_groups = replay(tmp_path, topic="__consumer_offsets")
    assert _states(only_groups) == {} and only_groups.replay_stats.share_num_partitions is None
    only_share = replay(tmp_path, topic="__share_group_state")
    assert _states(only_share) == _states(live) and only_share.groups == {}


def test_share_state_partition_count_given_or_inferred(tmp_path):
    from kgroup.protocol import request
    c = Coordinator(cluster=Cluster(seed=3), config={"share.coordinator.state.topic.num.partitions": 4})
    tid = c.cluster.create_topic("orders", 8)
    for p in range(8):
        c.handle(request("InitializeShareGroupState", 0, group_id="g", topics=[
            {"topic_id": tid, "partitions": [{"partition": p, "state_epoch": 0, "start_offset": 0}]}]))
    c.share_state_log.write(tmp_path)
    r = replay(tmp_path)
    assert r.replay_stats.share_num_partitions == 4  # 50 does not fit: the smallest count that does
    assert _states(r) == _states(c)
    r = replay(tmp_path, config={"share.coordinator.state.topic.num.partitions": 7})
    assert r.replay_stats.share_num_partitions_reason == "given"


def test_cli_describe_shows_share_partitions(capsys):
    code = main(["dump", "describe", str(SAMPLE)])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "__share_group_state: replayed 16 records; share.coordinator.state.topic.num.partitions: 50" in out
    assert "share-partitions (2):" in out
    assert "    SPSO 120  state epoch 0  leader epoch 1  snapshot epoch 2" in out
    assert "    state batches: 50-59 Acknowledged (delivery count 1)" in out
    assert '    key: {"type":"0","data":{"groupId":"queue-app",' in out


def test_cli_describe_json_and_group_filter(capsys):
    code = main(["dump", "describe", str(SAMPLE), "--group", "queue-app", "--at", "offset:3", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    doc = json.loads(out)
    assert [(d["partition"], d["start_offset"]) for d in doc["share_partitions"]] == [(0, 110), (1, 50)]
    assert doc["replay"]["share_state"]["num_partitions"] == 50
    code = main(["dump", "describe", str(SAMPLE), "--group", "nobody"])
    out, err = capsys.readouterr()
    assert code == 1 and "group 'nobody' is not in the dump" in err


def test_cli_decode_prints_share_state_records_as_the_decoder(capsys):
    code = main(["dump", "decode", str(SAMPLE), "--format", "dump-log"])
    out, _ = capsys.readouterr()
    assert code == 0
    assert out == (SAMPLE.parent / "share-state.dump-log.txt").read_text().replace("share-state/", f"{SAMPLE}/")


def test_durable_state_as_the_live_coordinator_holds_it(live):
    key = next(k for k in share_coordinator(live).states if k.partition == 0)
    assert share_coordinator(live).states[key].state_batches == ()
    key1 = next(k for k in share_coordinator(live).states if k.partition == 1)
    assert share_coordinator(live).states[key1].state_batches == (Batch(50, 59, 2, 1),)
