"""The runtime: records are the truth (replay rebuilds state), look-back, config, cluster."""
from __future__ import annotations

import uuid

import pytest

from kgroup import Cluster, Config, ConfigError, Coordinator, ManualClock
from kgroup.errors import UnsupportedRequestError
from kgroup.protocol import request, to_data

from kgroup_testing import commit, fetch


def scenario(c):
    commit(c, "a", {("orders", 0): 1})
    c.advance(1000)
    commit(c, "b", {("orders", 1): 2, ("payments", 0): 3})
    c.advance(1000)
    commit(c, "a", {("orders", 0): 4})
    c.handle(request("OffsetDelete", 0, group_id="b", topics=[{"name": "payments", "partitions": [{"partition_index": 0}]}]))


def test_load_rebuilds_the_same_state_by_replay(coord):
    scenario(coord)
    again = Coordinator.load(coord.log, cluster=coord.cluster)
    assert again.offsets_table() == coord.offsets_table()
    assert again.groups_table() == coord.groups_table()
    assert to_data(fetch(again, "a", None)) == to_data(fetch(coord, "a", None))
    assert again.now() == list(coord.log)[-1].timestamp


def test_load_copies_the_log_unless_told_to_adopt_it(coord):
    scenario(coord)
    size = len(list(coord.log))
    copied = Coordinator.load(coord.log, cluster=coord.cluster)
    commit(copied, "c", {("orders", 2): 5})
    assert copied.log is not coord.log and len(list(coord.log)) == size
    adopted = Coordinator.load(coord.log, copy_log=False, cluster=coord.cluster)
    assert adopted.log is coord.log and adopted.offsets_table() == coord.offsets_table()


def test_load_from_segment_files_on_disk(coord, tmp_path):
    scenario(coord)
    coord.log.write(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        {f"__consumer_offsets-{coord.partition_for(g)}" for g in ("a", "b")})
    again = Coordinator.load(tmp_path, cluster=coord.cluster)
    assert again.offsets_table() == coord.offsets_table()


def test_load_from_a_directory_takes_the_configs_partition_count(tmp_path):
    """A directory's partition folders do not say how many partitions the topic has (empty
    ones leave none): `offsets.topic.num.partitions` does, as for the coordinator that wrote it."""
    config = {"offsets.topic.num.partitions": 5}
    c = Coordinator(cluster=Cluster({"orders": 3}), config=config)
    commit(c, "a", {("orders", 0): 1})
    c.log.write(tmp_path)
    again = Coordinator.load(tmp_path, cluster=c.cluster, config=config)
    assert (again.num_partitions, again.log.num_partitions) == (5, 5)
    assert again.partition_for("a") == c.partition_for("a")
    assert again.offsets_table() == c.offsets_table()
    commit(again, "b", {("orders", 1): 2})  # and it goes on writing to the right partitions
    assert again.offsets_table()[-1]["offset"] == 2
    assert c.partition_for("a") == 2
    with pytest.raises(ValueError, match="partition 2 found but num_partitions is 1"):  # a folder beyond the count
        Coordinator.load(tmp_path, cluster=c.cluster, config={"offsets.topic.num.partitions": 1})


def test_as_of_shows_earlier_states_without_rerunning(coord):
    scenario(coord)
    assert coord.as_of(0).offsets_table() == []
    first = coord.as_of(1).offsets_table()
    assert [(r["group"], r["offset"]) for r in first] == [("a", 1)]
    assert coord.as_of(coord.position).offsets_table() == coord.offsets_table()
    before_delete = coord.as_of(coord.position - 1).offsets_table()
    assert ("b", "payments") in {(r["group"], r["topic"]) for r in before_delete}
    with pytest.raises(RuntimeError):
        coord.as_of(1).handle(request("ListGroups", 0))
    with pytest.raises(IndexError):
        coord.as_of(coord.position + 1)


def test_at_offset_is_the_state_right_after_that_record(coord):
    scenario(coord)
    p = coord.partition_for("a")
    assert [r["offset"] for r in coord.at_offset(p, 0).offsets_table() if r["group"] == "a"] == [1]


def test_advance_moves_the_clock_and_fires_timers_in_order():
    clock = ManualClock(1000)
    c = Coordinator(clock=clock, config={"offsets.retention.check.interval.ms": 500})
    fired = []
    c.timers.schedule("x", 1700, lambda: fired.append(("x", c.now())))
    c.timers.schedule("y", 1200, lambda: fired.append(("y", c.now())))
    c.advance(1000)
    assert fired == [("y", 1200), ("x", 1700)] and c.now() == 2000


def test_handle_rejects_what_it_does_not_serve(coord):
    with pytest.raises(UnsupportedRequestError, match="not serve Metadata"):
        coord.handle(request("Metadata", 12, topics=None))
    with pytest.raises(UnsupportedRequestError):
        coord.handle({"api": "OffsetFetch"})


def test_profiles_are_named_and_checked():
    assert Coordinator(profile="kafka").profile.name == "kafka"
    with pytest.raises(ValueError, match="unknown profile"):
        Coordinator(profile="confluent")


# -- config -----------------------------------------------------------------------

def test_config_defaults_are_kafkas():
    cfg = Config()
    assert cfg["offsets.topic.num.partitions"] == 50
    assert cfg["offsets.retention.minutes"] == 10080
    assert cfg["group.consumer.heartbeat.interval.ms"] == 5000
    assert cfg["group.share.delivery.attempt.limit"] == 5  # seed's name for delivery.count.limit


def test_config_rejects_unknown_names_and_out_of_range_values():
    with pytest.raises(ConfigError, match="unknown group coordinator config 'offsets.retention.minute'"):
        Config({"offsets.retention.minute": 5})
    with pytest.raises(ConfigError, match="at least 1"):
        Config({"offsets.topic.num.partitions": 0})
    with pytest.raises(ConfigError, match="at most group.consumer.max.heartbeat.interval.ms"):
        Config({"group.consumer.heartbeat.interval.ms": 20_000})
    with pytest.raises(ConfigError, match="at least 2"):
        Config({"group.share.delivery.count.limit": 1})
    with pytest.raises(ConfigError, match="must be an integer"):
        Config({"offsets.retention.minutes": "soon"})


def test_num_partitions_config_changes_where_groups_live():
    c = Coordinator(config={"offsets.topic.num.partitions": 1})
    commit(c, "anything", {("t", 0): 1})
    assert list(c.log)[0].partition == 0


# -- cluster ------------------------------------------------------------------------

def test_cluster_topics():
    cl = Cluster(seed=1)
    tid = cl.create_topic("t", 2)
    assert isinstance(tid, uuid.UUID) and cl.topic_id("t") == tid and cl.topic_name(tid) == "t"
    given = uuid.UUID(int=5)
    assert cl.create_topic("u", 1, topic_id=given) == given
    cl.increase_partitions("t", 5)
    assert cl.partitions("t") == 5
    with pytest.raises(ValueError, match="must be larger"):
        cl.increase_partitions("t", 3)
    cl.delete_topic("t")
    assert "t" not in cl
    with pytest.raises(KeyError, match="unknown topic 't'"):
        cl.topic_id("t")
    assert Cluster(seed=3).create_topic("x", 1) == Cluster(seed=3).create_topic("x", 1)
