"""Recorded and steppable: every exchange with the coordinator kept beside the records it
wrote; a paused server holds coordinator requests (and its clock) until stepped."""
from __future__ import annotations

import threading
import time

import pytest
from serve_testing import Wire, wait_until

from kgroup import Cluster, Coordinator
from kgroup.errors import ErrorCode
from kgroup.serve import Server

COMMIT = dict(group_id="rec", generation_id_or_member_epoch=-1, member_id="", group_instance_id=None,
              topics=[{"name": "orders", "partitions": [{"partition_index": 0, "committed_offset": 7,
                                                         "committed_leader_epoch": -1, "committed_metadata": ""}]}])


@pytest.fixture
def recorded():
    s = Server(Coordinator(cluster=Cluster({"orders": 1}, seed=7),
                           config={"group.initial.rebalance.delay.ms": 0}), record=True).start()
    yield s
    s.stop()


def test_exchanges_keep_requests_responses_and_the_records_they_wrote(recorded):
    w = Wire(recorded)
    w.call("Metadata", 12, topics=None)  # a broker API: not an exchange with the coordinator
    w.call("OffsetCommit", 9, **COMMIT)
    w.call("OffsetFetch", 9, groups=[{"group_id": "rec", "member_id": None, "member_epoch": -1, "topics": None}],
           require_stable=False)
    w.send("JoinGroup", 9, group_id="j", session_timeout=10_000, rebalance_timeout=10_000, member_id="",
           group_instance_id="i-1", protocol_type="consumer", protocols=[{"name": "range", "metadata": b""}],
           reason=None)
    _, joined = w.receive("JoinGroup", 9)
    assert joined.error_code == ErrorCode.none
    w.close()
    served = [x for x in recorded.exchanges() if x.api_key is not None]
    assert [x.api for x in served] == ["OffsetCommit", "OffsetFetch", "JoinGroup"]
    commit, fetch, join = served
    assert commit.client_id == "kgroup" and commit.request.group_id == "rec"
    assert [type(r).__name__ for r in commit.records] == ["OffsetCommit"]
    assert commit.records[0].value.offset == 7
    assert fetch.records == [] and fetch.response.groups[0].topics[0].partitions[0].committed_offset == 7
    assert join.response.member_id == joined.member_id  # filled in when the JoinGroup completed
    assert all(x.api_version == 9 for x in (commit, fetch, join))


def test_pause_holds_coordinator_requests_and_the_clock_until_stepped(recorded):
    w = Wire(recorded)
    recorded.pause()
    frozen = recorded.call(recorded.coordinator.now)
    answered = threading.Event()

    def commit():
        w.call("OffsetCommit", 9, **COMMIT)
        answered.set()
    t = threading.Thread(target=commit)
    t.start()
    wait_until(lambda: recorded.held() == ["kgroup: OffsetCommit"], 5, "the commit to be held")
    other = Wire(recorded)
    assert other.call("ApiVersions", 0).error_code == ErrorCode.none  # broker APIs still flow
    time.sleep(0.3)
    assert not answered.is_set() and recorded.call(recorded.coordinator.now) == frozen
    assert recorded.call(lambda: recorded.coordinator.offsets_table()) == []
    recorded.step()
    assert answered.wait(5)
    t.join(5)
    assert recorded.call(lambda: recorded.coordinator.offsets_table())[0]["offset"] == 7
    assert recorded.call(recorded.coordinator.now) == frozen  # stepping does not move time
    recorded.resume()
    wait_until(lambda: recorded.call(recorded.coordinator.now) > frozen, 5, "the clock to go on")
    assert other.call("OffsetCommit", 9, **COMMIT).topics[0].partitions[0].error_code == ErrorCode.none
    w.close()
    other.close()


def test_while_paused_due_timers_fire_and_advance_moves_the_clock(recorded):
    """A held JoinGroup stepped through completes (the rebalance delay, 0 here, is due at the
    frozen time); `advance(ms)` is the only thing that moves a paused server's clock."""
    recorded.pause()
    frozen = recorded.call(recorded.coordinator.now)
    w = Wire(recorded)
    w.send("JoinGroup", 9, group_id="paused", session_timeout=10_000, rebalance_timeout=10_000, member_id="",
           group_instance_id="i-1", protocol_type="consumer", protocols=[{"name": "range", "metadata": b""}],
           reason=None)
    wait_until(lambda: recorded.held() == ["kgroup: JoinGroup"], 5, "the join to be held")
    recorded.step()
    _, joined = w.receive("JoinGroup", 9)
    assert joined.error_code == ErrorCode.none and recorded.call(recorded.coordinator.now) == frozen
    recorded.advance(60_000)  # past the session timeout: the static member is removed
    assert recorded.call(recorded.coordinator.now) == frozen + 60_000
    assert recorded.call(lambda: recorded.coordinator.groups["paused"].state) == "Empty"
    timers = [x for x in recorded.exchanges() if x.api == "timers"]
    assert any("GroupMetadata" in [type(r).__name__ for r in x.records] for x in timers)
    recorded.resume()
    w.close()


def test_broker_apis_are_recorded_when_asked():
    with Server(Coordinator(cluster=Cluster({"orders": 1})), record=True, record_broker_apis=True) as s:
        w = Wire(s)
        w.call("Metadata", 12, topics=None)
        w.call("OffsetCommit", 9, **COMMIT)
        w.close()
        got = [(x.api, type(x.response).__name__) for x in s.exchanges()]
    assert got == [("Metadata", "MetadataResponse"), ("OffsetCommit", "OffsetCommitResponse")]
