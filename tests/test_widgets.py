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


# ------------------------------------------------------------------------------------------------
# Fitting JupyterLab's output area (~960 px): tables scroll sideways in their own box, long
# values are cut with the whole value a click away; charts count in whole numbers.

def _scrolls(html_text: str) -> bool:
    return html_text.startswith("<div class='kgroup-scroll' style='overflow-x:auto;width:0;min-width:100%'>") and \
        html_text.endswith("</div>")


def test_record_log_table_scrolls_and_cuts_long_values_behind_a_click(coord):
    import html
    import json
    import re

    from widgets.record_log import MAX_CHARS

    commit(coord, "a", {("orders", 0): 1}, metadata="m" * 300)
    view = RecordLogView(coord)
    out = view.out.value
    assert _scrolls(out.split("<p>")[0]) and "<caption>__consumer_offsets: 1 of 1 records</caption>" in out
    value = log_frame(coord.log).loc[0, "value"]
    assert len(value) > MAX_CHARS
    summary = re.search(r"<summary><code[^>]*>(.*?)…</code>", out).group(1)
    assert html.unescape(summary) == value[:MAX_CHARS]
    full = re.search(r"<pre>(.*?)</pre>", out, re.S).group(1)
    assert json.loads(html.unescape(full)) == json.loads(value)        # the whole value, pretty-printed
    key = log_frame(coord.log).loc[0, "key"]                            # short: whole, no click, may wrap
    assert f"<td><code class='kgroup-long'>{html.escape(key)}</code></td>" in out
    assert out.count("<details>") == 1
    assert "Offset<wbr>Commit" in out                                   # record types wrap between words


def test_table_html_blanks_missing_values_and_marks_long_words_breakable():
    import pandas as pd

    from widgets.record_log import table_html

    html_text = table_html(pd.DataFrame([{"member_id": "b", "instance_id": None, "epoch": float("nan")},
                                         {"member_id": "x" * 30, "instance_id": "a", "epoch": 3}]))
    assert _scrolls(html_text)
    assert "NaN" not in html_text and "None" not in html_text
    assert f"<span class='kgroup-long'>{'x' * 30}</span>" in html_text   # may break anywhere
    assert "<td>b</td>" in html_text                                     # short words stay whole
    wrapped = table_html(pd.DataFrame([{"message": "JoinGroupResponse", "process": "00000000-0000-000a"}]))
    assert "Join<wbr>Group<wbr>Response" in wrapped and "00000000-<wbr>0000-<wbr>000a" in wrapped
    assert "<th>committed_<wbr>offset</th>" in table_html(pd.DataFrame([{"committed_offset": 1}]))  # headers wrap too


def test_stale_members_are_greyed_out_in_the_task_grid():
    from widgets.palette import STALE, TASK_ROLES
    from widgets.streams import STALE_MEMBER, task_grid_chart

    rows = [{"member": "A (#0)", "task": "0_0", "role": "active", "revoking": False, "stale": True, "process": "p"},
            {"member": "A (#0)", "task": "0_1", "role": "active", "revoking": True, "stale": True, "process": "p"},
            {"member": "C (#1)", "task": "0_2", "role": "active", "revoking": False, "stale": False, "process": "q"}]
    spec = task_grid_chart(rows).to_dict()
    scale = spec["encoding"]["color"]["scale"]
    colour = dict(zip(scale["domain"], scale["range"]))
    shown = {(r["member"], r["task"]): r["shown"] for r in spec["datasets"][next(iter(spec["datasets"]))]}
    assert colour[shown[("A (#0)", "0_0")]] == colour[shown[("A (#0)", "0_1")]] == STALE
    assert shown[("A (#0)", "0_0")] == STALE_MEMBER
    assert colour[shown[("C (#1)", "0_2")]] == TASK_ROLES["active"]
    assert "opacity" not in spec["encoding"]   # no paler role colours that read as "revoking"


def test_unowned_chart_counts_in_whole_numbers_and_draws_no_empty_layers(tmp_path):
    import re

    from widgets.charts import save, unowned_over_time

    chart = unowned_over_time({"static": [(0, 0), (10_000, 2), (20_000, 0)]}, title="t", what="tasks")
    spec = chart.to_dict()
    assert len(spec["layer"]) == 1   # no rule / label layers over no events (an infinite extent)
    y = spec["layer"][0]["encoding"]["y"]
    assert y["title"] == "tasks without an owner" and y["axis"]["format"] == "d"
    # the ticks drawn: 0, 1, 2 (Vega's tickMinStep alone draws 0, 0.5, ... labelled 0, 1, 1, 2, 2)
    labels = re.findall(r"<text[^>]*>([^<]*)</text>", save(chart, tmp_path / "u.svg").read_text())
    between = labels[labels.index("time (s)") + 1:labels.index("tasks without an owner")]
    assert between == ["0", "1", "2"]
    with_events = unowned_over_time({"s": [(0, 1)]}, events=[(0, "A joins")]).to_dict()
    assert len(with_events["layer"]) == 3


def test_charts_stay_within_the_output_area(coord, tmp_path):
    """Charts (legends included) fit a ~960 px output area: the SVG vl-convert draws is ≤ 900 px."""
    import re

    from widgets.charts import offsets_overview, save, unowned_over_time

    commit(coord, "a-rather-long-group-name", {("orders", p): p for p in range(6)})
    for chart in (offsets_overview(coord),
                  unowned_over_time({"classic, cooperative (cooperative-sticky)": [(0, 1), (5000, 0)]},
                                    events=[(0, "A joins")])):
        svg = save(chart, tmp_path / "c.svg").read_text()
        width = float(re.search(r'<svg[^>]*\bwidth="([\d.]+)"', svg).group(1))
        assert width <= 900, width


def test_record_table_shows_log_rows_as_the_record_log_draws_them(coord):
    from widgets.record_log import RecordTable

    commit(coord, "a", {("orders", 0): 1}, metadata="m" * 300)
    table = RecordTable(log_frame(coord.log)[["offset", "type", "key", "value"]])
    bundle = table._repr_mimebundle_()
    assert _scrolls(bundle["text/html"]) and "<details>" in bundle["text/html"]
    assert "border-left:4px solid" in bundle["text/html"]     # the record family's colour
    assert "OffsetCommit" in bundle["text/plain"]


def test_table_wraps_a_frame_to_fit_with_its_whole_text():
    import pandas as pd

    from widgets.record_log import Table

    why = "A must first give up active 0_4 (KIP: 'If the members need to revoke a task, their member epoch stays') " * 2
    bundle = Table(pd.DataFrame([{"member": "A", "why": why}]))._repr_mimebundle_()
    assert _scrolls(bundle["text/html"]) and why.strip().replace("'", "&#x27;") in bundle["text/html"]  # not cut
    assert bundle["text/plain"].splitlines()[0].split() == ["member", "why"]
