"""The reconciliation grid and the share strip over real librdkafka clients served by kgroup:
what the widgets show, step by step, against what the coordinator wrote (records replayed by
hand here) and answered. Loopback only; every wait has a deadline."""
from __future__ import annotations

import time
from contextlib import contextmanager

import pytest
from serve_testing import share_group_reads_from_earliest, wait_until

from kgroup import Cluster, Coordinator
from kgroup.dumps import describe_share_partitions
from kgroup.serve import Server
from widgets.reconciliation import ReconciliationView
from widgets.served import PausedReconciliation, ServedShareStrip, reconciliation_snapshots, served_reconciliation

ck = pytest.importorskip("confluent_kafka")

#: heartbeats every 500 ms (Kafka: 5 s), so that a rebalance settles in a second or two
#: quick heartbeats, and a target at every bump (the hand-off these tests draw, not KIP-1263's batching)
FAST = {"group.consumer.min.heartbeat.interval.ms": 500, "group.consumer.heartbeat.interval.ms": 500,
        "group.consumer.assignment.interval.ms": 0}


def kip848_consumer(server: Server, name: str):
    c = ck.Consumer({"bootstrap.servers": server.bootstrap, "group.id": "g", "client.id": name,
                     "group.protocol": "consumer", "auto.offset.reset": "earliest", "enable.auto.commit": False,
                     "log.connection.close": False})
    c.subscribe(["orders"])
    return c


@contextmanager
def consumers_of(server: Server):
    """`join(name)` makes a KIP-848 consumer of group g; all of them are closed at the end."""
    made: list = []

    def join(name: str):
        made.append(kip848_consumer(server, name))
        return made[-1]
    try:
        yield join
    finally:
        for c in made:
            c.close()


@contextmanager
def served_owner(partitions: int):
    """A recording server over "orders" (`partitions` partitions, FAST heartbeats) with KIP-848 consumer
    A of group g owning every partition: yields (coordinator, server, join, A), `join` as in
    `consumers_of`."""
    coordinator = Coordinator(cluster=Cluster({"orders": partitions}, seed=7), config=FAST)
    with Server(coordinator, record=True) as server:
        with consumers_of(server) as join:
            a = join("A")
            wait_until(lambda: a.poll(0.05) is None and len(owned(a)) == partitions, 20,
                       f"A to own the {partitions} partitions")
            yield coordinator, server, join, a


def owned(c) -> frozenset:
    return frozenset((tp.topic, tp.partition) for tp in c.assignment())


def tps(cluster, topic_partitions) -> frozenset:
    return frozenset((cluster.topic_name(t.topic_id), p) for t in topic_partitions for p in t.partitions)


def replay_by_hand(server: Server, group: str):
    """For each exchange the reconciliation grid steps through (heartbeats of `group`, timer
    rounds writing its records), the group as its records say: (group epoch, assignment epoch,
    {member id: (member epoch, assigned, revoking, target)})."""
    cluster = server.coordinator.cluster
    epoch = assignment_epoch = None
    current: dict[str, tuple] = {}
    target: dict[str, frozenset] = {}
    out = []
    for x in server.exchanges():
        mine = False
        for r in x.records:
            if getattr(r.key, "group_id", None) != group:
                continue
            mine = True
            name, v = type(r).__name__, r.value
            if name == "ConsumerGroupMetadata":
                epoch = v.epoch if v is not None else None
            elif name == "ConsumerGroupTargetAssignmentMetadata":
                assignment_epoch = v.assignment_epoch if v is not None else None
            elif name == "ConsumerGroupTargetAssignmentMember":
                target[r.key.member_id] = tps(cluster, v.topic_partitions) if v is not None else frozenset()
            elif name == "ConsumerGroupCurrentMemberAssignment":
                if v is None:
                    current.pop(r.key.member_id, None)
                else:
                    current[r.key.member_id] = (v.member_epoch, tps(cluster, v.assigned_partitions),
                                                tps(cluster, v.partitions_pending_revocation))
        if (x.api == "ConsumerGroupHeartbeat" and x.request.group_id == group) or (x.api_key is None and mine):
            out.append((epoch, assignment_epoch,
                        {m: (*c, target.get(m, frozenset())) for m, c in current.items()}))
    return out


def test_the_reconciliation_grid_shows_a_real_kip848_rebalance_as_the_coordinator_wrote_it():
    with served_owner(4) as (coordinator, server, join, a):
        b = join("B")

        def settled() -> bool:
            for c in (a, b):
                c.poll(0.05)
            if not (len(owned(a)) == 2 and len(owned(b)) == 2):
                return False
            last = reconciliation_snapshots(server, "g")[-1]   # both said they own what they got
            return len(last.members) == 2 and all(v.client_state == "stable" for v in last.members)
        wait_until(settled, 25, "the group to split and both members to report it")
        settled_at = len(reconciliation_snapshots(server, "g")) - 1
        finals = {"A": owned(a), "B": owned(b)}
    snaps = reconciliation_snapshots(server, "g")   # the leaves too (the server stopped: read here)
    expected = replay_by_hand(server, "g")
    assert len(snaps) == len(expected) > 4
    for s, (epoch, assignment_epoch, members) in zip(snaps, expected):
        assert (s.group_epoch, s.assignment_epoch) == (epoch, assignment_epoch), s.index
        shown = {v.member_id: (v.member_epoch, v.assigned, v.revoking, v.target) for v in s.members
                 if v.member_epoch is not None}
        assert shown == members, s.index
        # KIP-848: a partition is never assigned to two members at once
        assigned = [tp for v in s.members for tp in v.assigned]
        assert len(assigned) == len(set(assigned)), s.index
    assert {v.name for v in snaps[settled_at].members} == {"A", "B"}   # named by client id
    # the hand-off as the grid draws it: A revokes what is B's target, B waits for it
    handoff = [s for s in snaps if any(v.name == "A" and v.revoking for v in s.members)]
    assert handoff
    s = handoff[0]
    a_view, b_view = (next(v for v in s.members if v.name == n) for n in ("A", "B"))
    assert {tp for tp in a_view.revoking if a_view.cell(tp) == "revoking"} == {
        tp for tp in b_view.target if b_view.cell(tp) == "target only"}
    assert b_view.server_state == "unreleased"
    # the client side: what each librdkafka consumer said it owns, as its own assignment() says
    last = {v.name: v for v in snaps[settled_at].members}
    for name, tps_owned in finals.items():
        assert last[name].owned == tps_owned == last[name].assigned
        assert last[name].client_epoch == last[name].member_epoch == snaps[settled_at].group_epoch
    # then both left (member epoch -1): the group has no member left
    assert all(v.client_state == "left" and v.member_epoch is None for v in snaps[-1].members)
    # and the widget shows them
    view = served_reconciliation(server, "g", changes_only=True)
    assert isinstance(view, ReconciliationView) and 0 < len(view.steps()) < len(snaps)
    view.go(len(view.steps()) - 1)
    assert "A" in view.to_text() and "B" in view.to_text() and "revoking" in view.to_html()


def test_a_paused_server_steps_a_kip848_join_one_heartbeat_at_a_time():
    with served_owner(2) as (coordinator, server, join, a):
        server.pause()
        frozen = server.call(coordinator.now)
        before = len(server.exchanges())
        b = join("B")
        stepped: list[str] = []
        deadline = time.monotonic() + 25

        orders = coordinator.cluster.topic_id("orders")

        def group_settled() -> bool:
            g = server.call(lambda: coordinator.groups["g"])
            ms = list(g.members.values())
            return len(ms) == 2 and all(m.member_epoch == g.group_epoch and not m.partitions_pending_revocation
                                        and len(m.assigned_partitions.get(orders, ())) == 1 for m in ms)
        while not (group_settled() and owned(b)) and time.monotonic() < deadline:
            a.poll(0.02)
            b.poll(0.02)
            held = server.held()
            if held:
                n = len(server.exchanges())
                server.step()
                wait_until(lambda: len(server.exchanges()) > n, 10, f"{held[0]} to be served")
                x = server.exchanges()[n]
                assert f"{x.client_id}: {x.api}" == held[0]   # the one let through, and only it
                stepped.append(held[0])
        assert group_settled() and owned(b), stepped
        assert server.call(coordinator.now) == frozen   # no clock moved while paused
        server.resume()
    assert "B: ConsumerGroupHeartbeat" in stepped and "A: ConsumerGroupHeartbeat" in stepped
    steps = reconciliation_snapshots(server, "g", since=before)
    heartbeats = [s for s in steps if s.kind == "heartbeat"]
    stepped_heartbeats = [w for w in stepped if w.endswith("ConsumerGroupHeartbeat")]
    shown = [f"{s.consumer}: ConsumerGroupHeartbeat" for s in heartbeats]
    assert shown[: len(stepped_heartbeats)] == stepped_heartbeats
    assert heartbeats[0].consumer == "B" and heartbeats[0].request.startswith("epoch 0")
    assert heartbeats[0].group_epoch == steps[0].group_epoch and len(heartbeats[0].records) > 0
    # A, heard from before the pause only, is named and owns what it last reported then
    a_then = next(v for v in heartbeats[0].members if v.name == "A")
    assert a_then.owned == {("orders", 0), ("orders", 1)} and a_then.client_state == "stable"
    final = {v.name: v for v in heartbeats[len(stepped_heartbeats) - 1].members}   # the last one stepped
    assert final["A"].assigned | final["B"].assigned == {("orders", 0), ("orders", 1)}


def test_paused_reconciliation_steps_from_its_button_and_redraws_the_grid():
    with served_owner(2) as (coordinator, server, join, a):
        b = None   # until B joins (the poll loops below skip it)
        server.pause("g")   # this group's requests only
        walk = PausedReconciliation(server, "g", poll=lambda: [c.poll(0.01) for c in (a, b) if c is not None])
        assert walk.view is None and "no heartbeat yet" in walk.to_html()
        b = join("B")
        wait_until(lambda: a.poll(0.02) is None and b.poll(0.02) is None and walk.held(), 10, "a held request")
        walk.reload.click()
        assert not walk.button.disabled and "held:" in walk.held_label.value
        walk.button.click()   # what a person does in JupyterLab
        assert len(walk.stepped) == 1
        deadline = time.monotonic() + 25

        def settled() -> bool:
            if walk.view is None:
                return False
            last = walk.view.current
            return len(last.members) == 2 and all(
                v.member_epoch == last.group_epoch and v.assigned == v.target and not v.revoking
                and v.client_state == "stable" for v in last.members)
        while not settled() and time.monotonic() < deadline:
            a.poll(0.02)
            b.poll(0.02)
            x = walk.step()
            if x is not None and x.api == "ConsumerGroupHeartbeat":
                # the grid is at the heartbeat just stepped
                assert walk.view.current.consumer == x.client_id and walk.text().startswith("step ")
        assert settled(), [f"{x.client_id}: {x.api}" for x in walk.stepped]
        server.resume()
    apis = [f"{x.client_id}: {x.api}" for x in walk.stepped]
    assert "B: ConsumerGroupHeartbeat" in apis and "A: ConsumerGroupHeartbeat" in apis
    assert {tp for v in walk.view.current.members for tp in v.assigned} == {("orders", 0), ("orders", 1)}


def test_the_share_strip_shows_what_a_real_share_consumer_did_as_the_share_coordinator_wrote_it():
    if not hasattr(ck, "ShareConsumer"):
        pytest.skip("this confluent-kafka has no ShareConsumer")
    config = {"group.coordinator.rebalance.protocols": "classic,consumer,share"}
    coordinator = Coordinator(cluster=Cluster({"orders": 1}, seed=7), config=config)
    with Server(coordinator, record=True) as server:
        producer = ck.Producer({"bootstrap.servers": server.bootstrap, "log.connection.close": False})
        for i in range(8):
            producer.produce("orders", value=b"s%d" % i, partition=0)
        assert producer.flush(10) == 0
        share_group_reads_from_earliest(server.bootstrap, "sg")
        strip = ServedShareStrip(server, "sg", "orders", 0)
        assert len(strip) == 0 and "no picture" in strip.to_html()  # no leader before a fetch
        consumer = ck.ShareConsumer({"bootstrap.servers": server.bootstrap, "group.id": "sg", "client.id": "share-1",
                                     "share.acknowledgement.mode": "explicit", "log.connection.close": False})
        try:
            consumer.subscribe(["orders"])

            def fetch(n: int) -> list:
                got, deadline = [], time.monotonic() + 20
                while len(got) < n and time.monotonic() < deadline:
                    got += [m for m in consumer.poll(0.5) if m.error() is None]
                return got
            first = fetch(8)
            assert sorted(m.offset() for m in first) == list(range(8))
            for m in first:  # release 2 and 3: they come back, delivered a second time
                kind = ck.AcknowledgeType.RELEASE if m.offset() in (2, 3) else ck.AcknowledgeType.ACCEPT
                consumer.acknowledge(m, kind)
            consumer.commit_sync()
            again = fetch(2)
            assert sorted(m.offset() for m in again) == [2, 3]
            for m in again:
                consumer.acknowledge(m)
            consumer.commit_sync()
        finally:
            consumer.close()
        strip.refresh()
        exchanges = {x.seq: x for x in server.exchanges()}
        strip.stop()
    assert len(strip) >= 3
    topic_id = coordinator.cluster.topic_id("orders")
    compared = 0   # offsets checked against the durable state
    for i, p in enumerate(strip.pictures):
        x = exchanges[p["seq"]]
        rows = strip.frame(i).set_index("offset")
        # what the coordinator answered: every range a ShareFetch acquired is Acquired by its client
        if x.api == "ShareFetch":
            for t in x.response.responses:
                for part in t.partitions:
                    for r in part.acquired_records:
                        for off in range(r.first_offset, r.last_offset + 1):
                            assert rows.loc[off, "state"] == "Acquired" and rows.loc[off, "lock_holder"] == "share-1"
                            assert rows.loc[off, "delivery_count"] == r.delivery_count
        # what the share coordinator wrote: the durable state after this exchange, by look-back
        share_end = x.positions.get("__share_group_state", 0) + len(x.written.get("__share_group_state", ()))
        snap = coordinator.as_of(x.end_position, share_position=share_end)
        durable = [d for d in describe_share_partitions(snap, "sg") if d["partition"] == 0]
        if not durable:
            continue
        assert p["spso"] == durable[0]["start_offset"], p["what"]
        for batch in durable[0]["state_batches"]:
            for off in range(batch["first_offset"], batch["last_offset"] + 1):
                if off not in rows.index or off < p["spso"]:
                    continue
                if rows.loc[off, "state"] == "Acquired":   # a lock is the leader's alone: never written
                    assert batch["delivery_state"] == "Available"
                else:
                    assert (rows.loc[off, "state"], rows.loc[off, "delivery_count"]) == (
                        batch["delivery_state"], batch["delivery_count"]), (p["what"], off)
                    compared += 1
    assert compared >= 6
    whats = [p["what"] for p in strip.pictures]
    assert any("released 2-3" in w and "accepted 0-1, 4-7" in w for w in whats), whats
    assert any("acquired 2-3 (delivery 2)" in w for w in whats), whats
    last = strip.frame(len(strip) - 1)
    assert strip.pictures[-1]["spso"] == 8 and set(last["state"]) == {"Archived"}
    timeline = strip.timeline()
    assert list(timeline["SPSO"])[-1] == 8 and timeline["Acquired"].max() == 8
    strip.go(0)
    assert "share-1" in strip.to_html() and strip.chart() is not None
    assert topic_id == strip.topic_id
