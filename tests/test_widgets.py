"""Widgets driven through their callbacks, as a person would click them."""
from __future__ import annotations

from kgroup.protocol import request
from kgroup.scenario import Scenario
from widgets import RecordLogView, Stepper, log_frame

from kgroup_testing import commit


def scripted(coord):
    s = Scenario(coord)
    s.step("a commits", request("OffsetCommit", 9, group_id="a", generation_id_or_member_epoch=-1, member_id="",
                                topics=[{"name": "orders", "partitions": [{"partition_index": 0, "committed_offset": 1, "committed_metadata": ""}]}]))
    s.step("b commits", request("OffsetCommit", 9, group_id="b", generation_id_or_member_epoch=-1, member_id="",
                                topics=[{"name": "orders", "partitions": [{"partition_index": 0, "committed_offset": 7, "committed_metadata": ""}]}]))
    s.step("a deletes its offset", request("OffsetDelete", 0, group_id="a", topics=[{"name": "orders", "partitions": [{"partition_index": 0}]}]))
    s.step("an unknown group asks", request("OffsetDelete", 0, group_id="zzz", topics=[]))
    return s


def test_stepper_moves_forward_and_back_using_look_back(coord):
    s = scripted(coord)
    st = Stepper(s)
    assert st.index == 0 and st.prev.disabled
    assert list(st.state()["offsets"]["group"]) == ["a"]
    st.next.click()
    st.next.click()
    assert st.index == 2
    assert list(st.records()["type"]) == ["OffsetCommit"] and "tombstone" in st.records()["value"][0]
    assert list(st.state()["offsets"]["group"]) == ["b"]
    st.prev.click()
    assert sorted(st.state()["offsets"]["group"]) == ["a", "b"]
    st.slider.value = 3
    assert st.next.disabled and "GROUP_ID_NOT_FOUND (69)" in st.out.value  # by name, in the alarm colour
    assert "color:#d62728" in st.out.value
    # stepping back never re-ran anything: the log is as the scenario left it
    assert coord.position == s.steps[-1].end_position


def test_record_log_filters_and_raw_bytes(coord):
    commit(coord, "a", {("orders", 0): 1, ("orders", 1): 2})
    commit(coord, "b", {("payments", 0): 3})
    view = RecordLogView(coord)
    assert len(view.rows()) == 3
    view.group.value = "b"
    assert list(view.rows()["group"]) == ["b"]
    assert "payments" in view.out.value and "key_bytes" not in view.out.value
    view.raw.value = True
    assert "key_bytes" in view.out.value
    assert coord.log.entry_at(2).key.hex(" ") in view.out.value
    view.group.value = "(all)"
    view.type.value = "OffsetCommit"
    assert len(view.rows()) == 3
    bundle = view._repr_mimebundle_()
    assert "text/html" in bundle


def test_log_frame_columns(coord):
    commit(coord, "a", {("orders", 0): 1})
    df = log_frame(coord.log)
    assert list(df.columns) == ["position", "partition", "offset", "timestamp", "type", "group", "key", "value", "txn"]
    assert df.loc[0, "type"] == "OffsetCommit" and '"offset":1' in df.loc[0, "value"]


def test_charts_export_to_png_and_svg_headless(coord, tmp_path):
    from widgets.charts import committed_offsets_chart, records_timeline_chart, save

    commit(coord, "a", {("orders", 0): 5, ("orders", 1): 9})
    chart = committed_offsets_chart(coord.offsets_table())
    spec = chart.to_dict()
    assert spec["title"] == "Committed offsets per group"
    assert sorted(v["offset"] for v in spec["datasets"][next(iter(spec["datasets"]))]) == [5, 9]
    png = save(chart, tmp_path / "offsets.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    svg = save(records_timeline_chart(coord.log), tmp_path / "log.svg")
    assert svg.read_text().lstrip().startswith("<svg")
