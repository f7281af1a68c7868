"""The stepper says what each step did: driven as a person would (next, prev, the slider) over
real scenarios, asserting on the one-line summary, the highlighted changes and the decoded bytes."""
from __future__ import annotations

import base64
import html
import json

from kgroup import Cluster, Coordinator
from kgroup.protocol import request
from kgroup.protocol.consumer_protocol import Assignment, Subscription, encode_assignment, encode_subscription
from kgroup.protocol.streams_protocol import (AssignmentInfo, SubscriptionInfo, encode_assignment_info,
                                              encode_subscription_info)
from kgroup.scenario import Scenario
from widgets import Stepper
from widgets.protocol_bytes import decode_assignment, decode_subscription, expand_group_metadata


def classic_join(member_id: str = "", *, protocol: str = "range", metadata: bytes | None = None):
    metadata = metadata if metadata is not None else encode_subscription(Subscription(["orders"]))
    return request("JoinGroup", 9, group_id="shop", session_timeout=10_000, rebalance_timeout=60_000,
                   member_id=member_id, group_instance_id=None, protocol_type="consumer",
                   protocols=[{"name": protocol, "metadata": metadata}], reason=None)


def classic_sync(member_id: str, generation: int, assignments: dict[str, bytes], protocol: str = "range"):
    return request("SyncGroup", 5, group_id="shop", generation_id=generation, member_id=member_id,
                   group_instance_id=None, protocol_type="consumer", protocol_name=protocol,
                   assignments=[{"member_id": m, "assignment": a} for m, a in assignments.items()])


def classic_scenario(coord: Coordinator, *, protocol: str = "range", metadata: bytes | None = None,
                     assignment: bytes | None = None) -> tuple[Scenario, str]:
    """A joins (MEMBER_ID_REQUIRED), joins again (held), the initial delay runs out, A syncs as
    leader, A heartbeats."""
    s = Scenario(coord)
    s.step("A joins without a member id", classic_join(protocol=protocol, metadata=metadata))
    member = s.response_of(0).member_id
    s.step("A joins with its member id", classic_join(member, protocol=protocol, metadata=metadata))
    s.step("the initial rebalance delay runs out", advance_ms=10_000)
    assignment = assignment if assignment is not None else encode_assignment(Assignment([("orders", 0), ("orders", 1)]))
    s.step("A syncs as leader", classic_sync(member, 1, {member: assignment}, protocol))
    s.step("A heartbeats", request("Heartbeat", 4, group_id="shop", generation_id=1, member_id=member,
                                   group_instance_id=None))
    return s, member


def cg_heartbeat(member: str, epoch: int, topics: list[str] | None = None, owned: list | None = None):
    return request("ConsumerGroupHeartbeat", 1, group_id="g", member_id=member, member_epoch=epoch, instance_id=None,
                   rack_id=None, rebalance_timeout=30_000 if epoch == 0 else -1, subscribed_topic_names=topics,
                   server_assignor=None, topic_partitions=owned, subscribed_topic_regex=None)


def summary_of(stepper: Stepper) -> str:
    """The summary line as the output area shows it."""
    out = stepper.out.value
    start = out.index("class='kgroup-step-summary'")
    return html.unescape(out[out.index(">", start) + 1:out.index("</p>", start)])


def test_classic_join_says_who_sent_what_with_the_subscription_decoded(coord):
    s, member = classic_scenario(coord)
    st = Stepper(s)
    line = summary_of(st)
    assert line.startswith("a new member sent JoinGroup v9 to group shop, protocols range on topics [orders]")
    assert "→ MEMBER_ID_REQUIRED, rejoin as " + member[:10] in line
    assert "group shop created (Empty)" in line and "1 record written" in line
    # the request view: the subscription decoded in place of the bytes, the raw base64 one click further
    raw = base64.b64encode(encode_subscription(Subscription(["orders"]))).decode()
    out = st.out.value
    decoded_at, raw_at = out.index("&quot;topics&quot;: [&quot;orders&quot;]"), out.index(raw)
    assert out.index("<summary><b>request</b>: JoinGroupRequest v9</summary>") < decoded_at < raw_at
    assert "raw bytes (base64)" in out


def test_held_join_then_a_step_without_request_then_the_leaders_sync(coord):
    s, member = classic_scenario(coord)
    st = Stepper(s)
    st.next.click()
    line = summary_of(st)
    assert "→ held back (answered at step 3)" in line
    assert "state Empty→PreparingRebalance" in line and "waits for its JoinGroup answer" in line
    assert line.endswith("nothing written.")
    assert "<i>nothing written</i>" in st.out.value and "kgroup-step-records" not in st.out.value
    st.next.click()  # no request: the clock runs the initial rebalance delay out
    line = summary_of(st)
    assert line.startswith("no request: the initial rebalance delay runs out; the clock moved 10000 ms")
    assert "timer fired: classic-join-shop" in line and "completed the waiting answer of step 2" in line
    assert "state PreparingRebalance→CompletingRebalance" in line
    assert "no request in this step" in st.out.value
    st.next.click()
    line = summary_of(st)
    assert "sent SyncGroup v5 to group shop, generation 1, as leader with the assignments of 1 member" in line
    assert "→ assigned [orders-0, orders-1]" in line
    assert "generation 0→1" in line and f"{member[:10]}… +orders-0, orders-1" in line
    # the GroupMetadata record shows the member's subscription and assignment decoded
    records = html.unescape(st.out.value.split("<b>records written</b>")[1].split("<b>groups</b>")[0])
    value = json.loads(records.split("<pre>")[1].split("</pre>")[0])  # the whole value, a click away
    m = value["data"]["members"][0]
    assert m["assignment"] == {"assignedPartitions": [{"topic": "orders", "partitions": [0, 1]}], "userData": None}
    assert m["subscription"]["topics"] == ["orders"]
    st.prev.click()
    st.prev.click()
    assert st.index == 1 and "held back" in summary_of(st)


def test_heartbeat_fenced_and_error_codes_by_name(coord):
    s, member = classic_scenario(coord)
    s.step("a stale generation heartbeats", request("Heartbeat", 4, group_id="shop", generation_id=0,
                                                    member_id=member, group_instance_id=None))
    st = Stepper(s)
    st.slider.value = 5
    line = summary_of(st)
    assert "sent Heartbeat v4 to group shop, generation 0 → ILLEGAL_GENERATION" in line
    assert "no change to the groups" in line and line.endswith("nothing written.")
    assert "ILLEGAL_GENERATION (22)" in st.out.value  # the full response, by name
    assert "<summary><b>response</b>: HeartbeatResponse v4 — ILLEGAL_GENERATION</summary>" in st.out.value


def test_consumer_group_heartbeat_says_the_epoch_moved():
    c = Coordinator(Cluster({"foo": 4, "bar": 2}, seed=7), config={"group.consumer.assignment.interval.ms": 0})
    s = Scenario(c)
    s.step("A joins", cg_heartbeat("A", 0, ["foo"], []))
    s.step("A heartbeats", cg_heartbeat("A", 2))
    s.step("A subscribes to bar too", cg_heartbeat("A", 2, ["foo", "bar"]))
    s.step("an hour passes", advance_ms=3_600_000)
    st = Stepper(s)
    line = summary_of(st)
    assert "member A sent ConsumerGroupHeartbeat v1 to group g, joining (epoch 0), subscribed to [foo]" in line
    assert "→ epoch 2, assigned [foo-0, foo-1, foo-2, foo-3]" in line  # topic ids by name
    assert "A joined at epoch 2" in line
    st.next.click()
    assert "no change to the groups" in summary_of(st) and "nothing written" in summary_of(st)
    st.slider.value = 2
    line = summary_of(st)
    assert "group epoch 2→3" in line and "A epoch 2→3" in line and "A +bar-0, bar-1" in line
    # the changes table highlights the new values, between the two steps' titles
    assert "<th>after step 2</th><th>after step 3</th>" in st.out.value
    assert ("<td>epoch</td><td style='overflow-wrap:anywhere'>2</td>"
            "<td style='background:#fff3bf;overflow-wrap:anywhere'><b>3</b></td>") in st.out.value
    st.next.click()
    line = summary_of(st)
    assert line.startswith("no request: an hour passes; the clock moved 3600000 ms; timer fired: consumer-session-g-A")
    assert "A left" in line and "group g gone" in line


def test_slider_and_title_count_alike_and_the_widget_has_its_class(coord):
    s, _ = classic_scenario(coord)
    st = Stepper(s)
    assert "kgroup-stepper" in st.widget._dom_classes
    for i in range(len(s)):
        st.slider.value = i
        assert st.slider.label == str(i + 1)
        assert f"<h4>Step {i + 1}/{len(s)}:" in st.out.value
    assert st.next.disabled and not st.prev.disabled
    st.go(0)
    assert st.prev.disabled and st.slider.label == "1"
    bundle = st._repr_mimebundle_()
    assert bundle["text/html"].startswith("<div class='kgroup-stepper'>")
    assert st.to_html() == st.to_html() and " at 0x" not in st.to_html()  # deterministic output


def test_kafka_streams_user_data_decoded_in_join_sync_and_records(coord):
    info = SubscriptionInfo("00000000-0000-0000-0000-00000000000a", {("0", 0): -2, ("0", 1): 1000})
    metadata = encode_subscription(Subscription(["input"], encode_subscription_info(info), generation_id=-1))
    assignment = encode_assignment(Assignment([("input", 0)], encode_assignment_info(
        AssignmentInfo(active_tasks=(("0", 0),), standby_tasks={("0", 1): (("input", 1),)}))))
    s, _ = classic_scenario(coord, protocol="stream", metadata=metadata, assignment=assignment)
    st = Stepper(s)
    line = summary_of(st)
    assert "protocols stream on topics [input], active [0_0], standby [0_1]" in line
    out = html.unescape(st.out.value)
    assert '"SubscriptionInfo": {' in out and '"activeTasks": ["0_0"]' in out
    assert '"standbyTaskOffsetSums": {"0_1": 1000}' in out
    st.slider.value = 3
    line = summary_of(st)
    assert "→ assigned [input-0], tasks active [0_0], standby [0_1]" in line
    out = html.unescape(st.out.value)
    assert '"AssignmentInfo": {' in out and '"standbyTasks": {"0_1": ["input-1"]}' in out


def test_undecodable_bytes_stay_base64_with_the_reason():
    assert decode_subscription(b"\x00") == {"undecodable": decode_subscription(b"\x00")["undecodable"],
                                            "base64": "AA=="}
    assert decode_assignment(b"")["assignedPartitions"] == []
    # a Streams protocol whose user data is not a SubscriptionInfo keeps it as base64
    junk = encode_subscription(Subscription(["t"], b"\x01\x02"))
    d = decode_subscription(junk, "stream")
    assert d["userData"] == "AQI=" and "userDataError" in d
    # GroupMetadata of another protocol type is left alone
    value = {"protocolType": "connect", "members": [{"subscription": "AQI="}]}
    assert expand_group_metadata(value) == value


def test_old_versions_without_protocol_type_decode_only_what_reads_as_the_consumer_protocol():
    from widgets.protocol_bytes import decode_entity

    good = encode_assignment(Assignment([("orders", 2)]))
    data = {"error_code": 0, "assignment": good}
    assert decode_entity(data, "SyncGroupResponse")["assignment"]["assignedPartitions"] == [
        {"topic": "orders", "partitions": [2]}]
    assert decode_entity({"error_code": 0, "assignment": b"\x07"}, "SyncGroupResponse")["assignment"] == b"\x07"
    connect = {"protocol_type": "connect", "protocols": [{"name": "default", "metadata": good}]}
    assert decode_entity(connect, "JoinGroupRequest") == connect
