"""The existing widgets read a server's recorded history: the Stepper walks the exchanges of
a group (request, answer, records written, the state by look-back), the record log shows them."""
from __future__ import annotations

import pytest
from serve_testing import Wire, wait_until

from kgroup import Cluster, Coordinator
from kgroup.errors import ErrorCode
from kgroup.serve import Server
from widgets import RecordLogView, Stepper, served_scenario

JOIN = dict(group_id="g", session_timeout=10_000, rebalance_timeout=10_000, group_instance_id=None,
            protocol_type="consumer", protocols=[{"name": "range", "metadata": b""}], reason=None)


def test_the_stepper_walks_a_served_rebalance():
    coordinator = Coordinator(cluster=Cluster({"orders": 2}), config={"group.initial.rebalance.delay.ms": 0})
    with Server(coordinator, record=True) as server:
        w = Wire(server)
        first = w.call("JoinGroup", 9, member_id="", **JOIN)
        joined = w.call("JoinGroup", 9, member_id=first.member_id, **JOIN)
        assert joined.error_code == ErrorCode.none
        w.call("SyncGroup", 5, group_id="g", generation_id=joined.generation_id, member_id=joined.member_id,
               group_instance_id=None, protocol_type="consumer", protocol_name="range",
               assignments=[{"member_id": joined.member_id, "assignment": b""}])
        w.call("OffsetCommit", 9, group_id="other", generation_id_or_member_epoch=-1, member_id="",
               group_instance_id=None, topics=[{"name": "orders", "partitions": [
                   {"partition_index": 0, "committed_offset": 1, "committed_leader_epoch": -1,
                    "committed_metadata": ""}]}])
        scenario = served_scenario(server, group="g")
        assert [s.label for s in scenario.steps] == ["kgroup: JoinGroup", "kgroup: JoinGroup", "kgroup: SyncGroup"]
        stepper = Stepper(scenario)  # looks back through server.call while the server serves
        assert "MEMBER_ID_REQUIRED" in stepper.to_html()
        stepper.next.click()
        stepper.next.click()
        assert stepper.index == 2 and "SyncGroupResponse" in stepper.to_html()
        assert list(stepper.records()["type"]) == ["GroupMetadata"]
        assert stepper.state()["groups"].set_index("group").loc["g", "state"] == "Stable"
        stepper.prev.click()  # back: the state as of the join, by look-back (replayed records: a classic
        # group's join writes nothing, so the log still holds the empty group of the first JoinGroup)
        assert stepper.state()["groups"].set_index("group").loc["g", "state"] == "Empty"
        assert len(served_scenario(server)) == 4  # every group
        w.close()
    view = RecordLogView(server.coordinator)
    view.group.value = "g"
    assert set(view.rows()["type"]) == {"GroupMetadata"}


def test_observers_keep_what_they_see_after_each_exchange_and_never_fail_a_request():
    coordinator = Coordinator(cluster=Cluster({"orders": 2}), config={"group.initial.rebalance.delay.ms": 0})
    with Server(coordinator, record=True) as server:
        server.observe("groups", lambda x: sorted(coordinator.groups) or None)
        server.observe("broken", lambda x: 1 / 0)
        w = Wire(server)
        first = w.call("JoinGroup", 9, member_id="", **JOIN)   # a member id, no group yet
        commit = dict(group_id="g", generation_id_or_member_epoch=-1, member_id="", group_instance_id=None,
                      topics=[{"name": "orders", "partitions": [{"partition_index": 0, "committed_offset": 1,
                                                                 "committed_leader_epoch": -1,
                                                                 "committed_metadata": ""}]}])
        assert w.call("OffsetCommit", 9, **commit).topics[0].partitions[0].error_code == ErrorCode.none
        server.observe("groups", None)
        w.call("OffsetCommit", 9, **commit)
        w.close()
        xs = server.exchanges()
    assert first.error_code == ErrorCode.member_id_required
    assert [x.observed for x in xs] == [{"groups": ["g"]}, {"groups": ["g"]}, {}]


def test_pausing_one_group_holds_only_its_requests():
    coordinator = Coordinator(cluster=Cluster({"orders": 2}), config={"group.initial.rebalance.delay.ms": 0})
    commit = dict(group_id="other", generation_id_or_member_epoch=-1, member_id="", group_instance_id=None,
                  topics=[{"name": "orders", "partitions": [{"partition_index": 0, "committed_offset": 1,
                                                             "committed_leader_epoch": -1, "committed_metadata": ""}]}])
    with Server(coordinator, record=True) as server:
        server.pause("g")
        with pytest.raises(RuntimeError):
            server.pause()   # one pause at a time
        held, free = Wire(server), Wire(server)
        held.send("JoinGroup", 9, member_id="", **JOIN)
        wait_until(lambda: server.held() == ["kgroup: JoinGroup"], 5, "g's JoinGroup to be held")
        # another group's request goes through while g's waits
        assert free.call("OffsetCommit", 9, **commit).topics[0].partitions[0].error_code == ErrorCode.none
        assert [x.api for x in server.exchanges()] == ["OffsetCommit"]
        server.step()
        _, answer = held.receive("JoinGroup", 9)
        assert answer.error_code == ErrorCode.member_id_required and server.held() == []
        server.resume()
        server.pause()   # every group again
        free.send("OffsetCommit", 9, **commit)
        wait_until(lambda: server.held() == ["kgroup: OffsetCommit"], 5, "the other group's commit to be held")
        server.resume()
        free.receive("OffsetCommit", 9)
        held.close()
        free.close()
