"""The failure lab on the wire: `kgroup serve` as three brokers sharing the partitions, the
coordinator moved, a broker killed and restarted, fault rules, and answering as an older Kafka.
Raw requests (kgroup.oracle.wire), loopback only, every wait bounded."""
from __future__ import annotations

import time
import uuid

import pytest
from serve_testing import wait_until

from kgroup import Cluster, Coordinator
from kgroup.errors import ErrorCode
from kgroup.lab import Fault, parse_fault
from kgroup.log.batch import encode_batch
from kgroup.oracle.wire import Wire
from kgroup.serve import Server

GROUP = "lab"


@pytest.fixture
def cluster3():
    s = Server(Coordinator(cluster=Cluster({"orders": 3}, seed=7)), brokers=3, record=True).start()
    yield s
    s.stop()


def on(server: Server, broker: int) -> Wire:
    return Wire(f"127.0.0.1:{server.ports[broker]}", timeout=10)


def commit(w: Wire, group: str = GROUP, offset: int = 5) -> ErrorCode:
    r = w.call("OffsetCommit", 9, group_id=group, generation_id_or_member_epoch=-1, member_id="",
               group_instance_id=None, topics=[{"name": "orders", "partitions": [
                   {"partition_index": 0, "committed_offset": offset, "committed_leader_epoch": -1,
                    "committed_metadata": ""}]}])
    return r.topics[0].partitions[0].error_code


def fetch_offset(w: Wire, group: str = GROUP) -> tuple[ErrorCode, int | None]:
    r = w.call("OffsetFetch", 8, groups=[{"group_id": group, "topics": None}], require_stable=False)
    g = r.groups[0]
    offsets = [p.committed_offset for t in g.topics for p in t.partitions]
    return g.error_code, offsets[0] if offsets else None


def coordinator_of(w: Wire, group: str = GROUP) -> int:
    return w.call("FindCoordinator", 4, key_type=0, coordinator_keys=[group]).coordinators[0].node_id


def test_three_brokers_share_the_partitions_as_kafka_spreads_them(cluster3):
    assert cluster3.bootstrap == ",".join(f"127.0.0.1:{p}" for p in cluster3.ports) and len(set(cluster3.ports)) == 3
    w = on(cluster3, 2)
    md = w.call("Metadata", 12, topics=None)
    assert sorted((b.node_id, b.port) for b in md.brokers) == list(enumerate(cluster3.ports))
    assert {p.partition_index: p.leader_id for p in md.topics[0].partitions} == {0: 0, 1: 1, 2: 2}
    # the group coordinator is the leader of the group's __consumer_offsets partition
    leader = coordinator_of(w)
    assert leader == cluster3.coordinator.partition_for(GROUP) % 3
    # a group request on another broker is answered NOT_COORDINATOR, as Kafka answers it
    wrong = (leader + 1) % 3
    assert commit(on(cluster3, wrong)) == ErrorCode.not_coordinator
    assert commit(on(cluster3, leader)) == ErrorCode.none
    # a produce to a partition another broker leads: NOT_LEADER_OR_FOLLOWER
    batch = encode_batch([(b"k", b"v", 1_700_000_000_000)], base_offset=0)
    r = on(cluster3, 0).call("Produce", 9, acks=-1, timeout=1000, topic_data=[{"name": "orders", "partition_data": [
        {"index": 1, "records": batch}]}])
    assert r.responses[0].partition_responses[0].error_code == ErrorCode.not_leader_or_follower
    r = on(cluster3, 1).call("Produce", 9, acks=-1, timeout=1000, topic_data=[{"name": "orders", "partition_data": [
        {"index": 1, "records": batch}]}])
    assert r.responses[0].partition_responses[0].error_code == ErrorCode.none


def test_moving_the_coordinator_loads_the_group_on_the_new_leader_after_load_ms():
    s = Server(Coordinator(cluster=Cluster({"orders": 3}, seed=7)), brokers=3, record=True, load_ms=600).start()
    try:
        old = coordinator_of(on(s, 0))
        assert commit(on(s, old), offset=42) == ErrorCode.none
        new = (old + 1) % 3
        partition = s.move_coordinator(GROUP, new)
        assert partition == s.coordinator.partition_for(GROUP)
        assert coordinator_of(on(s, 0)) == new
        assert fetch_offset(on(s, old))[0] == ErrorCode.not_coordinator
        assert fetch_offset(on(s, new))[0] == ErrorCode.coordinator_load_in_progress   # still loading
        wait_until(lambda: fetch_offset(on(s, new)) == (ErrorCode.none, 42), 10, "the new coordinator to load")
        faults = [e.fault for e in s.exchanges() if e.api == "fault"]
        assert faults == [f"coordinator moved: __consumer_offsets-{partition} from broker {old} to broker {new}",
                          f"__consumer_offsets-{partition} loaded on broker {new}: group(s) {GROUP}"]
    finally:
        s.stop()


def test_a_killed_broker_cuts_its_connections_and_its_partitions_move_until_it_restarts(cluster3):
    leader = coordinator_of(on(cluster3, 0))
    assert commit(on(cluster3, leader), offset=9) == ErrorCode.none
    held = on(cluster3, leader)
    cluster3.kill_broker(leader)
    with pytest.raises(OSError):
        held.call("Metadata", 12, topics=None)   # the connection was cut
    with pytest.raises(OSError):
        on(cluster3, leader)                     # and the port is closed
    survivor = (leader + 1) % 3
    w = on(cluster3, survivor)
    assert [b.node_id for b in w.call("Metadata", 12, topics=[{"name": "orders", "topic_id": None}]).brokers] == \
        sorted({0, 1, 2} - {leader})
    new = coordinator_of(w)
    assert new == survivor   # the next live broker took over
    assert fetch_offset(on(cluster3, new)) == (ErrorCode.none, 9)   # nothing committed was lost
    cluster3.restart_broker(leader)
    back = on(cluster3, leader)
    assert len(back.call("Metadata", 12, topics=None).brokers) == 3
    assert coordinator_of(back) == new   # leadership stays where the failover put it
    with pytest.raises(ValueError, match="already down"):
        cluster3.kill_broker(new) or cluster3.kill_broker(new)


# -- fault rules ---------------------------------------------------------------------------------

def test_an_error_rule_answers_kafkas_message_on_the_nth_request_only(cluster3):
    rule = cluster3.add_fault(Fault("OffsetCommit", group=GROUP, nth=2, error="COORDINATOR_LOAD_IN_PROGRESS"))
    w = on(cluster3, coordinator_of(on(cluster3, 0)))
    assert [commit(w, offset=o) for o in (1, 2, 3)] == [ErrorCode.none, ErrorCode.coordinator_load_in_progress,
                                                         ErrorCode.none]
    assert (rule.matched, rule.hits) == (3, 1) and rule.wait(1, timeout=1) == 1
    hit = [e for e in cluster3.exchanges() if e.fault is not None]
    assert [(e.api, e.fault) for e in hit] == [
        ("OffsetCommit", f"OffsetCommit group={GROUP} nth=2 error=COORDINATOR_LOAD_IN_PROGRESS")]
    assert not hit[0].written   # the coordinator never saw it
    r = hit[0].response.topics[0].partitions[0]
    assert r.error_code == ErrorCode.coordinator_load_in_progress
    with pytest.raises(TimeoutError, match="acted 1 time"):
        rule.wait(2, timeout=0.2)


def test_drop_after_serves_the_request_and_loses_the_answer(cluster3):
    w = on(cluster3, coordinator_of(on(cluster3, 0)))
    cluster3.add_fault(parse_fault(f"OffsetCommit group={GROUP} drop=after times=1"))
    with pytest.raises(OSError):
        commit(w, offset=11)
    # the coordinator wrote it: the offset is there for whoever asks next
    w = on(cluster3, coordinator_of(on(cluster3, 0)))
    assert fetch_offset(w) == (ErrorCode.none, 11)
    assert commit(w, offset=12) == ErrorCode.none   # `times=1`: only once


def test_drop_before_never_reaches_the_coordinator(cluster3):
    w = on(cluster3, coordinator_of(on(cluster3, 0)))
    cluster3.add_fault(f"OffsetCommit group={GROUP} drop=before times=1")
    with pytest.raises(OSError):
        commit(w, offset=13)
    w = on(cluster3, coordinator_of(on(cluster3, 0)))
    assert fetch_offset(w) == (ErrorCode.none, None)


def test_a_delay_rule_holds_the_answer_and_observe_rules_count(cluster3):
    counting = cluster3.add_fault(Fault("*", observe=True))
    cluster3.add_fault(Fault("OffsetFetch", delay_ms=400, times=1))
    w = on(cluster3, coordinator_of(on(cluster3, 0)))
    started = time.monotonic()
    assert fetch_offset(w)[0] == ErrorCode.none
    assert time.monotonic() - started >= 0.4
    started = time.monotonic()
    fetch_offset(w)
    assert counting.hits >= 3   # the FindCoordinator and the two fetches, at least
    delayed = [e for e in cluster3.exchanges() if e.api == "OffsetFetch"]
    assert [e.fault for e in delayed] == ["OffsetFetch times=1 delay=400", None]


def test_rules_match_on_member_and_epoch():
    rule = Fault("ConsumerGroupHeartbeat", member="m1", epoch=0, error=ErrorCode.not_coordinator)
    from kgroup.protocol import request
    hb = request("ConsumerGroupHeartbeat", 1, group_id="g", member_id="m1", member_epoch=0, rebalance_timeout=-1)
    assert rule.matches(68, 1, 0, hb)
    assert not rule.matches(68, 1, 0, request("ConsumerGroupHeartbeat", 1, group_id="g", member_id="m1",
                                              member_epoch=3, rebalance_timeout=-1))
    assert not rule.matches(12, 4, 0, hb)


@pytest.mark.parametrize("text, message", [
    ("", "an empty fault rule"),
    ("NoSuchApi error=1", "unknown Kafka API 'NoSuchApi'"),
    ("Heartbeat", "a rule needs an action"),
    ("Heartbeat error=NO_SUCH_ERROR", "unknown error code"),
    ("Heartbeat nth=zero error=1", "nth must be a whole number"),
    ("Heartbeat color=red error=1", "unknown key 'color'"),
    ("Heartbeat error=1 drop=before", "not both"),
])
def test_bad_rules_say_what_is_wrong(text, message):
    with pytest.raises(ValueError, match=message):
        parse_fault(text)


# -- waiting on the group ----------------------------------------------------------------------

def test_wait_group_returns_the_group_once_it_holds_and_says_how_it_stood_otherwise(cluster3):
    w = on(cluster3, coordinator_of(on(cluster3, 0)))
    member = str(uuid.UUID(int=1))
    r = w.call("ConsumerGroupHeartbeat", 1, group_id=GROUP, member_id=member, member_epoch=0, rebalance_timeout=30_000,
               subscribed_topic_names=["orders"], topic_partitions=[])
    assert r.error_code == ErrorCode.none
    v = cluster3.wait_group(GROUP, members=1, timeout=5)
    assert v.members == (member,) and v.type == "consumer"
    with pytest.raises(TimeoutError, match=r"did not reach members=2 in 0.2 s: .* with 1 member\(s\)"):
        cluster3.wait_group(GROUP, members=2, timeout=0.2)
    with pytest.raises(TimeoutError, match="no such group"):
        cluster3.wait_group("nobody", timeout=0.1)


# -- another Kafka -----------------------------------------------------------------------------

def test_answering_as_kafka_3_9_refuses_the_consumer_protocol_and_has_no_share_groups():
    s = Server(Coordinator(cluster=Cluster({"orders": 1})), kafka_version="3.9").start()
    try:
        w = on(s, 0)
        versions = {k.api_key: (k.min_version, k.max_version) for k in w.call("ApiVersions", 3).api_keys}
        assert versions[68] == (0, 0) and 76 not in versions and 88 not in versions
        assert not w.call("ApiVersions", 3).finalized_features   # no group.version
        r = w.call("ConsumerGroupHeartbeat", 0, group_id="g", member_id=str(uuid.uuid4()), member_epoch=0,
                   rebalance_timeout=30_000, subscribed_topic_names=["orders"], topic_partitions=[])
        assert r.error_code == ErrorCode.unsupported_version
        with pytest.raises(OSError):   # an API Kafka 3.9 does not have: it closes the connection
            w.call("ShareGroupHeartbeat", 1, group_id="g", member_id=str(uuid.uuid4()), member_epoch=0,
                   subscribed_topic_names=["orders"])
    finally:
        s.stop()


def test_answering_as_kafka_4_3_refuses_static_streams_members():
    s = Server(Coordinator(cluster=Cluster({"orders": 1})), kafka_version="4.3").start()
    try:
        topology = {"epoch": 0, "subtopologies": [{"subtopology_id": "0", "source_topics": ["orders"],
                                                   "state_changelog_topics": [], "repartition_source_topics": [],
                                                   "copartition_groups": []}]}
        r = on(s, 0).call("StreamsGroupHeartbeat", 0, group_id="app", member_id=str(uuid.uuid4()), member_epoch=0,
                          endpoint_information_epoch=0, instance_id="i1", rebalance_timeout=30_000, topology=topology,
                          active_tasks=[], standby_tasks=[], warmup_tasks=[], process_id="p", client_tags=[])
        assert (r.error_code, r.error_message) == (ErrorCode.invalid_request, "Static membership is not yet supported.")
    finally:
        s.stop()


def test_an_unknown_kafka_version_is_refused():
    with pytest.raises(ValueError, match="kgroup can answer as Kafka 3.7, 3.9, 4.0"):
        Server(Coordinator(), kafka_version="2.8")


# -- the faults in the notebook views ------------------------------------------------------------

def test_the_stepper_and_the_record_log_show_each_fault_on_the_step_it_hit(cluster3):
    from widgets import RecordLogView, Stepper, served_scenario

    leader = coordinator_of(on(cluster3, 0))
    assert commit(on(cluster3, leader), offset=1) == ErrorCode.none
    cluster3.add_fault(Fault("OffsetCommit", group=GROUP, nth=1, error="REBALANCE_IN_PROGRESS"))
    assert commit(on(cluster3, leader), offset=2) == ErrorCode.rebalance_in_progress
    cluster3.move_coordinator(GROUP, (leader + 1) % 3)
    assert commit(on(cluster3, (leader + 1) % 3), offset=3) == ErrorCode.none

    stepper = Stepper(served_scenario(cluster3, group=GROUP))
    summaries = [stepper.summary(i) for i in range(len(stepper.scenario))]
    assert summaries[1].startswith("⚡ fault: OffsetCommit group=lab nth=1 error=REBALANCE_IN_PROGRESS; ")
    assert summaries[2].startswith("no request: ⚡ fault: coordinator moved: __consumer_offsets-")
    assert not any("⚡" in s for s in (summaries[0], summaries[-1]))
    stepper.go(1)
    assert "⚡ fault" in stepper.to_html()

    view = RecordLogView(cluster3.coordinator, exchanges=cluster3.exchanges())
    rows = view.rows()
    faults = rows[rows["type"] == "⚡ fault"]["key"].tolist()
    loaded = f"__consumer_offsets-{cluster3.coordinator.partition_for(GROUP)} loaded on broker {(leader + 1) % 3}"
    assert [f.split(":")[0] for f in faults] == ["OffsetCommit group=lab nth=1 error=REBALANCE_IN_PROGRESS",
                                                  "coordinator moved", loaded]
    assert "fault" in view.to_html()
    # the commits' records have no fault beside them
    assert rows[rows["type"] == "OffsetCommit"]["fault"].isna().all()


def test_a_pause_rule_holds_its_requests_until_stepped(cluster3):
    import threading

    rule = cluster3.add_fault(parse_fault(f"OffsetCommit group={GROUP} pause"))
    w = on(cluster3, coordinator_of(on(cluster3, 0)))
    answers: list = []
    sender = threading.Thread(target=lambda: answers.append(commit(w, offset=21)))
    sender.start()
    rule.wait(1, timeout=5)
    wait_until(lambda: cluster3.held() == ["kgroup-raw: OffsetCommit (held by a fault rule)"], 5, "the held commit")
    assert not answers
    assert fetch_offset(on(cluster3, coordinator_of(on(cluster3, 0))))[1] is None   # others go on
    cluster3.step()
    sender.join(5)
    assert answers == [ErrorCode.none]
    assert str(rule) == f"OffsetCommit group={GROUP} pause"


def test_rules_match_on_the_topic_partitions_a_request_names(cluster3):
    from kgroup.protocol import request
    commit_0 = request("OffsetCommit", 9, group_id="g", generation_id_or_member_epoch=-1, member_id="",
                       group_instance_id=None, topics=[{"name": "orders", "partitions": [
                           {"partition_index": 0, "committed_offset": 1, "committed_leader_epoch": -1,
                            "committed_metadata": ""}]}])
    fetch_2 = request("OffsetFetch", 7, group_id="g", topics=[{"name": "orders", "partition_indexes": [2]}],
                      require_stable=False)
    rule = parse_fault("* topic=orders partition=2 observe")
    assert not rule.matches(8, 9, 0, commit_0) and rule.matches(9, 7, 0, fetch_2)
    assert Fault(partition=0, observe=True).matches(8, 9, 0, commit_0)
    assert not Fault(topic="audit", observe=True).matches(8, 9, 0, commit_0)
    # and on the wire: a produce to partition 1 only
    cluster3.add_fault("Produce partition=1 error=NOT_ENOUGH_REPLICAS")
    batch = encode_batch([(b"k", b"v", 1_700_000_000_000)], base_offset=0)
    answers = {}
    for p in (0, 1):
        r = on(cluster3, p).call("Produce", 9, acks=-1, timeout=1000, topic_data=[{"name": "orders", "partition_data": [
            {"index": p, "records": batch}]}])
        answers[p] = r.responses[0].partition_responses[0].error_code
    assert answers == {0: ErrorCode.none, 1: ErrorCode.not_enough_replicas}


def test_pause_is_a_pause_rule_on_the_coordinators_requests_that_also_stops_the_clock(cluster3):
    w = on(cluster3, coordinator_of(on(cluster3, 0)))
    rule = cluster3.pause(GROUP)
    assert rule.pause and str(rule) == f"* group={GROUP} when=<predicate> pause"
    assert cluster3.pause(GROUP) is rule   # pausing again: the same rule
    with pytest.raises(RuntimeError, match=f"already paused for {GROUP}"):
        cluster3.pause("other")
    import threading
    answers: list = []
    sender = threading.Thread(target=lambda: answers.append(commit(w, offset=5)))
    sender.start()
    rule.wait(1, timeout=5)
    assert w.sock is not None and not answers and cluster3.held() == ["kgroup-raw: OffsetCommit"]
    assert on(cluster3, 0).call("Metadata", 12, topics=None).brokers   # broker APIs still flow
    frozen = cluster3.call(cluster3.coordinator.now)
    time.sleep(0.2)
    assert cluster3.call(cluster3.coordinator.now) == frozen   # the clock stands still
    cluster3.resume()
    sender.join(5)
    assert answers == [ErrorCode.none]
