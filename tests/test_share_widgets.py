"""The share-partition strip (widgets/share.py), drawn from the KIP's examples and driven
through its buttons as a user in JupyterLab would."""
from __future__ import annotations

import pytest

from kgroup import Cluster, Coordinator
from kgroup.clients import ShareConsumer, Simulation
from kgroup.kip_examples import KIP_SHARE_IN_FLIGHT, share_in_flight_example
from widgets.palette import SHARE_STATES
from widgets.share import AGGREGATE_ABOVE, SharePartitionStrip, partition_rows, strip_chart, strip_html


def _data(chart) -> list[dict]:
    spec = chart.to_dict()
    return next(iter(spec["datasets"].values()))


def test_the_kips_in_flight_example_as_a_strip():
    sp = share_in_flight_example()
    rows = partition_rows(sp, before=2, after=1)
    assert {r["offset"]: r["state"] for r in rows} == {o: s for o, (s, _) in KIP_SHARE_IN_FLIGHT.items()}
    assert [r["lock_holder"] for r in rows if r["state"] == "Acquired"] == ["A", "A"]
    chart = strip_chart(rows, spso=sp.spso, speo=sp.speo)
    spec = chart.to_dict()
    assert "SPSO=2, SPEO=9" in spec["title"]["text"] and spec["title"]["anchor"] == "start"
    cells = _data(chart)
    assert [c["count_text"] for c in cells[:5]] == ["", "", "1", "2", "1"]     # delivery counts in the cells
    colour = spec["layer"][0]["encoding"]["color"]["scale"]
    assert colour["domain"] == list(SHARE_STATES) and colour["range"] == list(SHARE_STATES.values())


def test_the_strip_marks_spso_and_speo_once_when_they_meet():
    rows = [{"offset": o, "state": "Archived", "delivery_count": 0, "lock_holder": ""} for o in range(3)]
    markers = [ds for ds in strip_chart(rows, spso=3, speo=3).to_dict()["datasets"].values() if "marker" in ds[0]]
    assert [m["marker"] for m in markers[0]] == ["▼ SPSO = SPEO"]
    assert "SPSO SPEO" not in strip_html(rows, spso=1, speo=2)


def test_large_strips_are_aggregated_into_runs():
    rows = [{"offset": o, "state": "Acknowledged" if o < 300 else "Available", "delivery_count": 1, "lock_holder": ""}
            for o in range(AGGREGATE_ABOVE + 100)]
    chart = strip_chart(rows, spso=0, speo=len(rows))
    assert "2 runs" in chart.to_dict()["title"]


def _svg(chart) -> tuple[int, str]:
    import re

    import vl_convert as vlc

    from widgets.charts import vega_lite_version
    svg = vlc.vegalite_to_svg(chart.to_dict(), vl_version=vega_lite_version())
    return int(re.search(r'<svg[^>]* width="(\d+)"', svg).group(1)), svg


@pytest.mark.parametrize("n", [3, 12, 24, 30])
def test_strips_fit_a_notebook_output_area_with_their_markers_and_legend(n):
    """Issue 22: 08's durable-state strips (24 offsets, SPEO on the last one) were ~1,080 px and
    lost their SPEO marker at the right edge of a ~960 px output area."""
    rows = [{"offset": 98 + i, "state": "Archived" if i < n - 2 else "Acquired", "delivery_count": 1,
             "lock_holder": "Z"} for i in range(n - 1)]
    rows.append({"offset": 98 + n - 1, "state": "Available", "delivery_count": 0, "lock_holder": ""})
    chart = strip_chart(rows, spso=98 + n - 2, speo=98 + n - 1, title="Acknowledge 111,112")
    width, svg = _svg(chart)
    assert width <= 900, width
    assert "▼ SPEO" in svg and "SPSO ▼" in svg and "record state" in svg


@pytest.fixture
def live():
    cluster = Cluster({"foo": 1}, seed=1)
    c = Coordinator(cluster=cluster, config={"group.share.assignment.interval.ms": 0})   # assigned at each bump
    consumers = {n: ShareConsumer(c, "myshare", ["foo"], name=n, acknowledgement_mode="explicit") for n in "AB"}
    sim = Simulation(c, list(consumers.values()))
    for k in consumers.values():
        k.start()
    sim.run(2_000)
    cluster.produce("foo", 0, [b"x"] * 5)
    cluster.produce("foo", 0, [b"y"] * 5)
    return c, SharePartitionStrip(c, "myshare", "foo", 0, consumers=consumers)


def states(strip) -> dict[int, tuple[str, int, str]]:
    """The strip's offsets that hold a record (not the empty cell at an SPEO past the log end)."""
    return {r["offset"]: (r["state"], r["delivery_count"], r["lock_holder"]) for r in strip.rows() if r["state"]}


def test_buttons_send_real_requests_and_redraw(live):
    c, strip = live
    strip.consumer.value = "A"
    strip.fetch.click()
    assert strip.message.value == "A acquired 0-9"
    assert {s for s, _, who in states(strip).values() if who} == {"Acquired"}
    strip.first.value, strip.last.value = 3, 2           # either order
    strip.release.click()
    strip.first.value, strip.last.value = 0, 1
    strip.accept.click()
    assert states(strip)[2] == ("Available", 1, "") and strip.leader().spso == 2
    strip.consumer.value = "B"
    strip.fetch.click()
    assert states(strip)[2] == ("Acquired", 2, "B")
    strip.first.value, strip.last.value = 2, 2
    strip.reject.click()
    assert "B rejected 2" in strip.message.value
    strip.consumer.value = "A"                           # A does not hold 3: nothing to acknowledge
    strip.first.value, strip.last.value = 3, 3
    strip.accept.click()
    assert "A accepted nothing it holds" in strip.message.value
    strip.advance_ms.value = 31_000
    strip.advance.click()                                # A's lock over 4-9 and B's over 3 elapse
    assert {o: s for o, (s, _, _) in states(strip).items() if o >= 3} == {o: "Available" for o in range(3, 10)}
    assert [label for label, *_ in strip.history] == [
        "start", "A acquired 0-9", "A released 2-3", "A accepted 0-1", "B acquired 2-3", "B rejected 2",
        "A accepted nothing it holds", "clock +31000 ms: locks elapsed (A's on 4-9; B's on 3)"]
    assert strip.message.value == "clock +31000 ms: locks elapsed (A's on 4-9; B's on 3)"


def test_back_and_forward_show_earlier_pictures(live):
    c, strip = live
    strip.fetch.click()
    strip.advance_ms.value = 31_000
    strip.advance.click()
    assert strip.forward.disabled and not strip.back.disabled
    strip.back.click()
    assert "A acquired 0-9" in strip.to_html() and "Acquired" in strip.to_html()
    strip.back.click()
    assert strip.back.disabled and strip.position == 0
    strip.forward.click()
    strip.forward.click()
    assert strip.position == 2 and strip.forward.disabled
    assert strip._repr_mimebundle_()["text/html"] == strip.to_html()


def held(strip, name: str) -> list[int]:
    """What the leader shows as Acquired by `name` (not what the widget says)."""
    return [o for o, (state, _, who) in states(strip).items() if state == "Acquired" and who == name]


def test_a_fetch_after_the_locks_expired_acquires_anew_and_accept_then_works(live):
    """Issue 22: after Run All of 08 A's lock over 4-9 has expired; a fetch must acquire
    again (the strip shows A's locks), not present the old records, and accept must work."""
    c, strip = live
    strip.consumer.value = "A"; strip.fetch.click()
    strip.first.value, strip.last.value = 2, 3; strip.release.click()
    strip.first.value, strip.last.value = 0, 1; strip.accept.click()
    strip.consumer.value = "B"; strip.fetch.click()
    strip.advance_ms.value = 31_000; strip.advance.click()     # A's 4-9 and B's 2-3 expire
    assert held(strip, "A") == held(strip, "B") == []
    strip.consumer.value = "A"; strip.fetch.click()
    assert strip.message.value == "A's locks on 4-9 had elapsed (dropped); A acquired 2-9"
    assert held(strip, "A") == list(range(2, 10))
    assert states(strip)[2] == ("Acquired", 3, "A") and states(strip)[4] == ("Acquired", 2, "A")
    strip.first.value, strip.last.value = 2, 9
    strip.accept.click()
    assert strip.message.value == "A accepted 2-9"
    assert strip.leader().spso == 10 and consumers_errors(strip) == []
    assert strip.history[-1][0] == "A accepted 2-9"


def consumers_errors(strip) -> list:
    return [e for k in strip.consumers.values() for e in k.errors]


def test_the_fetch_message_is_what_the_leader_shows(live):
    """"X acquired a-b" names exactly the offsets the leader now has Acquired by X; records
    still held from the last fetch are said to be held, not acquired."""
    c, strip = live
    strip.consumer.value = "A"; strip.fetch.click()
    assert strip.message.value == "A acquired 0-9" and held(strip, "A") == list(range(10))
    strip.first.value, strip.last.value = 0, 4; strip.accept.click()
    strip.fetch.click()                                   # locks still hold: nothing new to fetch
    assert strip.message.value == "A still holds 5-9 (not yet acknowledged)"
    assert held(strip, "A") == list(range(5, 10))
    strip.consumer.value = "B"; strip.fetch.click()       # everything is A's or done
    assert strip.message.value == "B acquired nothing" and held(strip, "B") == []


def test_acknowledging_after_the_lock_elapsed_touches_nothing_it_no_longer_holds(live):
    """Accept acts only on records the consumer really holds: once its lock elapsed they are
    dropped (not sent, so no INVALID_RECORD_STATE), and B can take them with delivery count 2."""
    c, strip = live
    strip.consumer.value = "A"; strip.fetch.click()
    strip.advance_ms.value = 30_000; strip.advance.click()
    strip.first.value, strip.last.value = 0, 9; strip.accept.click()
    assert strip.message.value == "A accepted nothing it holds (A's locks on 0-9 had elapsed)"
    assert "invalid_record_state" not in strip.message.value and consumers_errors(strip) == []
    assert {s for s, _, _ in states(strip).values()} == {"Available"}
    strip.consumer.value = "B"; strip.fetch.click()
    assert strip.message.value == "B acquired 0-9"
    assert {o: (s, n) for o, (s, n, _) in states(strip).items()} == {o: ("Acquired", 2) for o in range(10)}


def test_advancing_the_clock_keeps_the_consumers_in_the_group(live):
    """The consumers' heartbeat threads run while the clock moves (share.session.timeout.ms is
    45 s): a fetch after a minute still works."""
    c, strip = live
    strip.advance_ms.value = 60_000; strip.advance.click()
    assert set(c.groups["myshare"].members) == {k.member_id for k in strip.consumers.values()}
    strip.consumer.value = "B"; strip.fetch.click()
    assert strip.message.value == "B acquired 0-9" and held(strip, "B") == list(range(10))


def test_the_speo_past_the_log_end_is_an_empty_cell_with_its_marker(live):
    """Once everything is acknowledged the SPSO and SPEO sit one past the last record: the strip
    still draws that offset (empty) so that both markers show."""
    c, strip = live
    strip.fetch.click()
    strip.first.value, strip.last.value = 0, 9
    strip.accept.click()
    assert strip.rows()[-1] == {"offset": 10, "state": "", "delivery_count": 0, "lock_holder": ""}
    assert "<b>SPSO = SPEO</b>" in strip.to_html()
    marks = [ds for ds in strip.chart().to_dict()["datasets"].values() if "marker" in ds[0]]
    assert [m[0]["marker"] for m in marks] == ["▼ SPSO = SPEO"]


def test_the_strip_carries_its_css_class(live):
    _c, strip = live
    assert "kgroup-share-strip" in strip.widget._dom_classes
