"""The reconciliation widget driven through its callbacks, as a person would click it."""
from __future__ import annotations

import pytest

from kgroup import Cluster, Coordinator
from kgroup.clients import ClassicConsumer, ConsumerConfig, ConsumerGroupConsumer, Simulation
from widgets import ReconciliationRecorder, ReconciliationView
from widgets.charts import ASSIGNMENT_STATES, save
from widgets.reconciliation import fmt_tps


def scale_out(members: str = "ABC", *, partitions=None, gap_ms: int = 12_000, run_ms: int = 40_000):
    c = Coordinator(Cluster(partitions or {"foo": 4, "bar": 2}, seed=1))
    sim = Simulation(c)
    recorder = ReconciliationRecorder(sim, "g")
    for i, name in enumerate(members):
        sim.at(i * gap_ms, f"{name} joins",
               lambda name=name: sim.add(ConsumerGroupConsumer(c, "g", ["foo", "bar"], name=name)))
    sim.run(run_ms)
    return c, sim, recorder


def test_fmt_tps_collapses_runs():
    assert fmt_tps([("foo", 0), ("foo", 1), ("foo", 2), ("foo", 5), ("bar", 1)]) == "bar 1 · foo 0-2,5"
    assert fmt_tps([]) == "—"


def test_every_heartbeat_is_a_step_with_its_records_and_the_epochs():
    c, sim, rec = scale_out()
    heartbeats = [h for k in sim.consumers for h in k.heartbeats]
    assert len(rec.snapshots) == len(heartbeats)                      # no timer wrote anything here
    view = ReconciliationView(rec)
    assert len(view.steps()) == len(heartbeats) and view.index == 0 and view.prev.disabled
    first = view.current
    assert first.consumer == "A" and first.request.startswith("epoch 0, rebalance timeout 300000 ms")
    assert first.response == "epoch 2, assignment bar 0-1 · foo 0-3"
    # The records of the step are exactly what that heartbeat appended to the log.
    h = sim.consumer("A").heartbeats[0]
    assert [r["offset"] for r in first.records] == [c.log.entry_at(i).offset
                                                   for i in range(h.start_position, h.end_position)]
    assert first.records[1]["type"] == "ConsumerGroupMetadata" and '"epoch":2' in first.records[1]["value"]
    view.next.click()
    view.next.click()
    assert view.index == 2 and not view.prev.disabled
    view.prev.click()
    assert view.index == 1
    # The last step: three members, stable, every partition owned once, epochs lined up.
    view.slider.value = len(view.steps()) - 1
    last = view.current
    assert last.group_state == "Stable" and last.group_epoch == last.assignment_epoch == 4
    assert [v.member_epoch for v in last.members] == [4, 4, 4]
    owners = sorted(tp for v in last.members for tp in v.assigned)
    assert owners == sorted(last.partitions)
    assert view.next.disabled is False   # live: next runs the simulation on


def test_a_revocation_shows_as_revoking_then_the_new_owner_gets_it():
    c, sim, rec = scale_out("AB", run_ms=25_000)
    view = ReconciliationView(rec, changes_only=True)
    unrevoked = next(i for i, s in enumerate(view.steps())
                     if any(v.server_state == "unrevoked" for v in s.members))
    view.go(unrevoked)
    s = view.current
    a = next(v for v in s.members if v.name == "A")
    assert s.consumer == "A" and a.revoking == {("foo", 1), ("foo", 2), ("foo", 3)}
    assert a.revoking <= a.owned                                     # the process still holds them
    grid = view.grid_frame()
    assert set(grid[grid["state"] == "revoking"]["tp"]) == {"foo-1", "foo-2", "foo-3"}
    assert ASSIGNMENT_STATES["revoking"] in view.out.value and "unrevoked" in view.out.value
    b = next(v for v in s.members if v.name == "B")
    assert b.target == a.revoking and not b.assigned                 # B waits: target only
    assert set(grid[(grid["member"] == "B")]["state"]) == {"target only"}
    # A's ack moves it to the new epoch; B gets the partitions on a later heartbeat.
    view.next.click()
    ack = view.current
    assert ack.consumer == "A" and ack.request.startswith("epoch 2, owns bar 0-1 · foo 0")
    assert next(v for v in ack.members if v.name == "A").member_epoch == 3
    got = next(s for s in view.steps()[view.index + 1:] if s.consumer == "B" and "assignment foo 1-3" in s.response)
    assert got.time_ms > ack.time_ms


def test_only_changes_filter_keeps_the_moment_shown():
    _, _, rec = scale_out()
    view = ReconciliationView(rec)
    everything = len(view.steps())
    view.slider.value = 9
    moment = view.current.index
    view.changes_only.value = True
    assert len(view.steps()) < everything
    assert all(s.changed for s in view.steps())
    assert view.current.index >= moment and view.slider.max == len(view.steps()) - 1
    keepalives = [s for s in rec.snapshots if not s.changed]
    assert keepalives and all(not s.records and "assignment" not in s.response for s in keepalives)


def test_next_at_the_end_runs_the_simulation_to_the_next_heartbeat():
    c, sim, rec = scale_out("AB", run_ms=25_000)
    view = ReconciliationView(rec)
    view.go(len(view.steps()) - 1)
    n, t = len(view.steps()), c.now()
    view.next.click()
    assert len(view.steps()) == n + 1 and view.index == n and c.now() > t
    assert view.current.kind == "heartbeat"


def test_a_list_of_snapshots_replays_only():
    _, _, rec = scale_out("AB", run_ms=20_000)
    view = ReconciliationView(list(rec.snapshots))
    view.go(len(view.steps()) - 1)
    assert view.next.disabled
    view.next.click()
    assert view.index == len(view.steps()) - 1
    with pytest.raises(ValueError):
        ReconciliationView([])


def test_timer_writes_and_classic_members_are_steps_too():
    c = Coordinator(Cluster({"foo": 4}, seed=1))
    sim = Simulation(c)
    rec = ReconciliationRecorder(sim, "g")
    for name in "AB":
        sim.add(ClassicConsumer(c, ConsumerConfig("g", ("foo",), client_id=name, assignors=("cooperative-sticky",))))
    sim.run_until_stable("g")
    sim.add(ConsumerGroupConsumer(c, "g", ["foo"], name="C"))
    sim.run_until_stable("g")
    sim.consumer("C").crash()
    sim.run(60_000)
    kinds = {s.kind for s in rec.snapshots}
    assert kinds == {"classic", "heartbeat", "timer"}
    timer = [s for s in rec.snapshots if s.kind == "timer"][-1]
    assert any(r["value"] == "<tombstone>" for r in timer.records)   # C's session expired
    view = ReconciliationView(rec)
    view.go([s.index for s in view.steps()].index(timer.index))
    assert "timers fire" in view.out.value
    migrated = next(s for s in rec.snapshots if s.kind == "heartbeat" and s.consumer == "C")
    assert migrated.group_type == "ConsumerGroup"
    assert {v.protocol for v in migrated.members} == {"classic", "consumer"}


def test_static_text_is_deterministic_and_big_groups_are_aggregated(tmp_path):
    texts = []
    for _ in range(2):
        _, _, rec = scale_out()
        view = ReconciliationView(rec, changes_only=True)
        texts.append("\n\n".join(view.to_text(s) for s in view.steps()))
    assert texts[0] == texts[1] and "o owned, r revoking" in texts[0]
    assert view.timeline_frame()["group epoch"].tolist()[-1] == 4
    svg = save(view.chart(), tmp_path / "grid.svg")
    assert svg.read_text().lstrip().startswith("<svg")
    small = ReconciliationView(rec, max_cells=5)
    small.go(len(small.steps()) - 1)
    assert "too many cells to draw" in small.out.value and "<td title=" not in small.out.value
    bundle = view._repr_mimebundle_()
    assert "text/html" in bundle and "Step " in bundle["text/html"]


def test_tables_fit_the_output_area_and_the_checkbox_label_is_not_cut():
    c, sim, rec = scale_out("AB", run_ms=25_000)
    view = ReconciliationView(rec)
    out = view.out.value
    scroll = "<div class='kgroup-scroll' style='overflow-x:auto;width:0;min-width:100%'>"
    members, rest = out.split("<b>members</b>", 1)[1].split("<b>current vs target assignment</b>", 1)
    grid, records = rest.split("<b>records written</b>", 1)
    assert members.startswith(scroll) and grid.startswith(scroll)
    assert scroll in records and "<details>" in records   # the first heartbeat's long values: a click away
    member_id = view.current.members[0].member_id                     # 22 characters: it may wrap
    cell = next(c for c in members.split("<td>") if c.replace("<wbr>", "").startswith(member_id))
    assert "<wbr>" in cell or cell.startswith("<span class='kgroup-long'>")
    # ipywidgets cuts a description longer than its 300 px box: not indented, sized to the text
    assert view.changes_only.indent is False and view.changes_only.layout.width == "auto"


def test_the_readout_beside_the_slider_counts_as_the_title_does():
    # issue 22: the slider read 3 while the title said "Step 4/13"
    _, _, rec = scale_out()
    view = ReconciliationView(rec)
    view.slider.value = 3
    n = len(view.steps())
    assert view.readout.value == f"4/{n}" and f"Step 4/{n}:" in view.out.value
    assert view.slider.readout is False
    view.prev.click()
    assert view.readout.value == f"3/{n}" and f"Step 3/{n}:" in view.out.value
