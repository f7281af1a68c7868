"""Simulated classic consumers against the coordinator: whole-group behaviour."""
from __future__ import annotations

import pytest

from kgroup import Cluster, Coordinator
from kgroup.clients import ClassicConsumer, ConsumerConfig, Simulation, rolling_restart
from kgroup.protocol.consumer_protocol import decode_assignment, decode_subscription
from kgroup.records import GroupMetadata


def make(n: int = 3, *, static: bool = False, assignors=("range",), partitions: int = 6, session_ms: int = 45_000):
    c = Coordinator(cluster=Cluster({"orders": partitions}))
    sim = Simulation(c)
    for i in range(n):
        sim.add(ClassicConsumer(c, ConsumerConfig("g", ("orders",), client_id=f"c{i}",
                                                  group_instance_id=f"c{i}" if static else None,
                                                  assignors=assignors, session_timeout_ms=session_ms)))
    sim.run_until_stable("g")
    return c, sim


def owned(sim: Simulation) -> dict[str, list]:
    return {k.name: sorted(k.owned) for k in sim.consumers}


@pytest.mark.parametrize("assignors", [("range",), ("roundrobin",), ("cooperative-sticky",)])
def test_a_group_forms_and_covers_every_partition_once(assignors):
    c, sim = make(assignors=assignors)
    parts = [tp for tps in owned(sim).values() for tp in tps]
    assert sorted(parts) == [("orders", p) for p in range(6)]
    assert all(len(tps) == 2 for tps in owned(sim).values())
    assert c.groups["g"].protocol_name == assignors[0]


def test_group_metadata_records_carry_real_consumer_protocol_bytes():
    c, sim = make()
    rec = [e.record for e in c.log if isinstance(e.record, GroupMetadata)][-1]
    by_member = {k.member_id: k for k in sim.consumers}
    for m in rec.value.members:
        sub, version = decode_subscription(m.subscription)
        assert version == 3 and sub.topics == ("orders",)
        assert sorted(decode_assignment(m.assignment)[0].partitions) == sorted(by_member[m.member_id].owned)


def test_dynamic_rolling_restart_rebalances_twice_per_consumer():
    c, sim = make()
    before = sim.rebalances("g")
    end = rolling_restart(sim, gap_ms=5000, settle_ms=15_000)
    sim.run(end + 10_000)
    assert sim.rebalances("g") - before == 2 * 3  # leave + rejoin for each
    assert sim.double_owned_samples() == 0


def test_static_rolling_restart_within_the_session_timeout_does_not_rebalance():
    c, sim = make(static=True)
    before_owned, before = owned(sim), sim.rebalances("g")
    end = rolling_restart(sim, gap_ms=5000, settle_ms=15_000)
    sim.run(end + 10_000)
    assert sim.rebalances("g") == before and owned(sim) == before_owned
    assert c.groups["g"].static_replacements == 3


def test_static_member_away_longer_than_its_session_is_removed_and_the_group_rebalances():
    c, sim = make(static=True, session_ms=10_000)
    before = sim.rebalances("g")
    k = sim.consumers[0]
    sim.at(sim.elapsed, "crash", k.crash)
    sim.run(20_000)
    assert "c0" not in c.groups["g"].static_members and sim.rebalances("g") > before
    assert sorted(tp for n, tps in owned(sim).items() if n != "c0" for tp in tps) == [("orders", p) for p in range(6)]


def test_cooperative_rebalance_revokes_before_reassigning():
    c, sim = make(assignors=("cooperative-sticky",))
    before = sim.rebalances("g")
    sim.add(ClassicConsumer(c, ConsumerConfig("g", ("orders",), client_id="c3", assignors=("cooperative-sticky",))))
    sim.run(30_000)
    assert sim.double_owned_samples() == 0
    assert sim.rebalances("g") - before == 2  # KIP-429: revoke, then a follow-up rebalance assigns
    kinds = [e.kind for e in sim.consumer("c3").events]
    assert "assigned" in kinds and sim.consumer("c3").owned


def test_a_second_process_with_the_same_instance_id_fences_the_first():
    c, sim = make(static=True)
    twin = sim.add(ClassicConsumer(c, ConsumerConfig("g", ("orders",), client_id="c0-twin",
                                                     group_instance_id="c0", assignors=("range",)),
                                   name="c0-twin"))
    sim.run(10_000)
    assert str(sim.consumer("c0").state) == "fenced" and twin.owned


def test_group_metadata_json_keeps_base64_but_the_dump_log_rendering_expands_it(tmp_path):
    # Kafka's console formatter prints the embedded bytes as base64; kafka-dump-log.sh decodes them.
    import base64
    import json

    from kgroup.dumps import read_dump, render_dump_log

    c, sim = make(2, static=True)
    c.log.write(tmp_path)
    rec = [e.record for e in c.log if isinstance(e.record, GroupMetadata)][-1]
    member = rec.json_obj()["value"]["data"]["members"][0]
    assert base64.b64decode(member["subscription"]) == rec.value.members[0].subscription
    entries = [e for e in read_dump(tmp_path) if isinstance(e.record, GroupMetadata)]
    line = list(render_dump_log(entries))[-1]
    payload = json.loads(line.split(" payload: ", 1)[1])
    expanded = payload["data"]["members"][0]
    assert expanded["subscription"]["topics"] == ["orders"]
    assert expanded["assignment"]["assignedPartitions"][0]["topic"] == "orders"


def test_the_leader_rejoins_when_the_groups_topics_change():
    """Kafka's ConsumerCoordinator: the leader keeps the partition counts it assigned with
    (assignmentSnapshot) and rejoins when they change, so added partitions get an owner and a
    deleted topic's partitions are given up; the other members only follow."""
    c = Coordinator(cluster=Cluster({"orders": 4, "payments": 2}))
    sim = Simulation(c)
    for i in range(2):
        sim.add(ClassicConsumer(c, ConsumerConfig("g", ("orders", "payments"), client_id=f"c{i}")))
    sim.run_until_stable("g")
    generation = c.groups["g"].generation_id

    c.cluster.increase_partitions("orders", 6)
    sim.run(10_000)
    parts = sorted(tp for tps in owned(sim).values() for tp in tps)
    assert parts == [("orders", p) for p in range(6)] + [("payments", 0), ("payments", 1)]
    assert c.groups["g"].generation_id == generation + 1
    rejoins = [e for k in sim.consumers for e in k.events if e.kind == "rejoin"]
    assert len(rejoins) == 1 and rejoins[0].detail == "cached metadata has changed"

    c.cluster.delete_topic("payments")
    sim.run(10_000)
    assert sorted(tp for tps in owned(sim).values() for tp in tps) == [("orders", p) for p in range(6)]
    assert c.groups["g"].generation_id == generation + 2
