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
    assert "SPSO=2, SPEO=9" in spec["title"]
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


@pytest.fixture
def live():
    cluster = Cluster({"foo": 1}, seed=1)
    c = Coordinator(cluster=cluster)
    consumers = {n: ShareConsumer(c, "myshare", ["foo"], name=n, acknowledgement_mode="explicit") for n in "AB"}
    sim = Simulation(c, list(consumers.values()))
    for k in consumers.values():
        k.start()
    sim.run(2_000)
    cluster.produce("foo", 0, [b"x"] * 5)
    cluster.produce("foo", 0, [b"y"] * 5)
    return c, SharePartitionStrip(c, "myshare", "foo", 0, consumers=consumers)


def states(strip) -> dict[int, tuple[str, int, str]]:
    return {r["offset"]: (r["state"], r["delivery_count"], r["lock_holder"]) for r in strip.rows()}


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
        "start", "A fetched 0-9", "A released 2-3", "A accepted 0-1", "B fetched 2-3", "B rejected 2",
        "A accepted nothing it holds", "clock +31000 ms"]


def test_back_and_forward_show_earlier_pictures(live):
    c, strip = live
    strip.fetch.click()
    strip.advance_ms.value = 31_000
    strip.advance.click()
    assert strip.forward.disabled and not strip.back.disabled
    strip.back.click()
    assert "A fetched 0-9" in strip.to_html() and "Acquired" in strip.to_html()
    strip.back.click()
    assert strip.back.disabled and strip.position == 0
    strip.forward.click()
    strip.forward.click()
    assert strip.position == 2 and strip.forward.disabled
    assert strip._repr_mimebundle_()["text/html"] == strip.to_html()
