"""The Streams widgets driven through their callbacks, and the KIP-1071 Admin methods."""
from __future__ import annotations

import pytest

from kgroup import Cluster, Coordinator, ErrorCode
from kgroup.admin import Admin, KafkaException, TopicPartition
from kgroup.groups.streams import Subtopology, TopicInfo, Topology
from kgroup.kip_examples import rolling_bounce
from tests.streams_testing import STATEFUL, sgroup, shb
from widgets.streams import AGGREGATE_ABOVE, StreamsStepper, task_frame, task_grid_chart, topology_html


@pytest.fixture(scope="module")
def bounce():
    return rolling_bounce()


def test_stepper_walks_the_bounce_with_look_back(bounce):
    st = StreamsStepper(bounce.scenario, "app")
    assert st.index == 0 and st.prev.disabled
    back = next(p for p in bounce.phases if p.label == "C back with topology epoch 1")
    st.slider.value = back.last_step
    html = st.out.value
    assert "C(#1)" in html or "C (#1)" in html
    assert f"After step {back.last_step + 1}" in st.grid().title
    st.prev.click()
    assert st.index == back.last_step - 1
    st.next.click()
    st.next.click()
    assert st.index == back.last_step + 1
    assert bounce.coordinator.position == bounce.scenario.steps[-1].end_position   # nothing re-run


def test_task_frame_marks_stale_members_and_roles(bounce):
    group = bounce.scenario.state_after(next(p for p in bounce.phases if p.label.startswith("C back")).last_step).groups["app"]
    frame = task_frame(group)
    assert set(frame["role"]) == {"active"}
    stale = set(frame[frame["stale"]]["member"])
    assert stale == {"A (#0)", "B (#0)"}
    target = task_frame(group, target=True)
    assert len(target) == 9


def test_task_grid_aggregates_above_the_threshold():
    rows = [{"member": f"m{i % 50}", "task": f"0_{i}", "role": "active", "revoking": False, "stale": False,
             "process": "p"} for i in range(AGGREGATE_ABOVE + 1)]
    chart = task_grid_chart(rows, title="big")
    assert "aggregated" in chart.to_dict()["title"]
    small = task_grid_chart(rows[:10], title="small").to_dict()
    assert small["title"] == "small" and small["mark"]["type"] == "rect"


def test_topology_view_shows_counts_and_not_ready():
    c = Coordinator(cluster=Cluster({"orders": 2}, seed=1))
    shb(c, "A", 0, topology=STATEFUL)
    html = topology_html(sgroup(c))
    assert "NOT_READY — MISSING_INTERNAL_TOPICS" in html and "orders (2)" in html and "(missing)" in html
    c.advance(0)
    shb(c, "A", sgroup(c).members["A"].member_epoch)
    html = topology_html(sgroup(c))
    assert "NOT_READY" not in html and "app-store-changelog (2)" in html


def test_admin_describe_list_delete_streams_groups():
    c = Coordinator(cluster=Cluster({"orders": 3}, seed=1))
    shb(c, "A", 0, topology=Topology(0, (Subtopology("0", ("orders",), state_changelog_topics=(TopicInfo("app-s-changelog"),)),)))
    c.advance(0)
    shb(c, "A", sgroup(c).members["A"].member_epoch)
    admin = Admin(c)
    result = admin.describe_streams_groups(["app", "nope"])
    d = result.described_groups()["app"].get()
    assert (d.group_state, d.topology_epoch, d.subtopologies[0].state_changelog_topics) == \
        ("Stable", 0, {"app-s-changelog": 3})
    assert d.members[0].assignment["active"] == {"0": [0, 1, 2]}
    with pytest.raises(KafkaException, match="GROUP_ID_NOT_FOUND"):
        result.described_groups()["nope"].get()
    assert result.all().is_completed_exceptionally()
    assert [g["group_id"] for g in admin.list_streams_groups()] == ["app"]
    assert admin.list_streams_groups(states=["NotReady"]) == []
    assert admin.delete_streams_groups(["app"]) == {"app": ErrorCode.non_empty_group}


def test_admin_streams_group_offsets():
    c = Coordinator(cluster=Cluster({"orders": 3}, seed=1))
    admin = Admin(c)
    assert set(admin.alter_streams_group_offsets("app", {TopicPartition("orders", 0): 5,
                                                         TopicPartition("orders", 1): 6}).values()) == {ErrorCode.none}
    shb(c, "A", 0)                                            # a streams group now, with a member
    assert admin.list_streams_group_offsets("app").partitions_to_offset_and_metadata().get()[
        TopicPartition("orders", 0)].offset == 5
    # the group must be empty to alter its offsets (KIP-1071's Admin javadoc)
    assert set(admin.alter_streams_group_offsets("app", {TopicPartition("orders", 0): 9}).values()) == \
        {ErrorCode.unknown_member_id}
    shb(c, "A", -1)
    assert admin.delete_streams_group_offsets("app", {"orders"}) == {
        TopicPartition("orders", p): ErrorCode.none for p in range(3)}
    assert admin.list_streams_group_offsets("app").partitions_to_offset_and_metadata().get() == {}
