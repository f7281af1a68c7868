"""KIP-932's worked examples as the notebook runs them (kgroup.kip_examples): the durable-state
table read back in the KIP's own words, under both profiles."""
from __future__ import annotations

import re

from kgroup.kip_examples import KIP_SHARE_DURABLE_STATE, KIP_SHARE_IN_FLIGHT, share_durable_state_example, \
    share_in_flight_example


def test_every_row_of_the_durable_state_table_reads_as_the_kips_kip():
    table = share_durable_state_example(profile="kip").table()
    assert len(table) == len(KIP_SHARE_DURABLE_STATE) == 12
    assert [r["kgroup"] for r in table if not r["same"]] == []
    # Acquired is never persisted: the four fetch rows write nothing, every other row one record
    fetches = [r["written to __share_group_state"] for r in table if r["operation"].startswith("Fetch")]
    assert fetches == ["nothing"] * 4
    assert table[0]["written to __share_group_state"] == "ShareSnapshot(StartOffset=100)"
    assert table[4]["written to __share_group_state"] == "ShareUpdate(StartOffset=110, StateBatches=[110-110:Available/1])"
    assert table[-1]["written to __share_group_state"] == "ShareUpdate(StartOffset=120)"


def test_under_kafka_the_speo_and_the_writes_that_move_the_spso_read_differently():
    """Kafka's SharePartition.endOffset is the last in-flight offset (the SPSO when none is in
    flight); the draft's SPEO is one past it (profile flag share_speo_exclusive). An
    acknowledgement that moves the SPSO writes the SPSO before it with the acknowledged batches
    (Kafka 4.4.0's records; flag share_ack_write_carries_new_spso); the next write carries it."""
    kip = share_durable_state_example(profile="kip")
    kafka = share_durable_state_example(profile="kafka")
    before = None
    moved = 0
    for a, b in zip(kip.rows, kafka.rows):
        kip_speo = int(re.search(r"SPEO=(\d+)", a["state"]).group(1))
        expected = kip_speo - 1 if a["spso"] < kip_speo else kip_speo
        assert b["state"] == re.sub(r"SPEO=\d+", f"SPEO={expected}", a["state"])
        if before is not None and a["spso"] != before:
            moved += 1
            assert b["written"].startswith(f"ShareUpdate(StartOffset={before}, StateBatches=[")
            assert "Acknowledged" in b["written"]
        elif a["written"] != "nothing" and b["written"] != a["written"]:
            # the first write after a move carries the SPSO it moved to
            assert f"StartOffset={a['spso']}" in b["written"]
        before = a["spso"]
    assert moved == 3     # acknowledge 100-109, 110, 111-112


def test_the_in_flight_example_matches_the_kips_states():
    sp = share_in_flight_example()
    assert (sp.spso, sp.speo) == (2, 9)
    got = {v.offset: v.state for v in sp.strip(0, 9)}
    assert got == {o: s for o, (s, _) in KIP_SHARE_IN_FLIGHT.items()}
    counts = {v.offset: v.delivery_count for v in sp.strip(0, 9)}
    assert {o: counts[o] for o in (2, 3, 4)} == {2: 1, 3: 2, 4: 1}
