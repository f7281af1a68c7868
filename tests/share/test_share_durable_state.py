"""The KIP's "Managing durable share-partition state" example, row by row, through the real
share coordinator: what the share-partition leader writes to `__share_group_state`.

Acquired is never persisted (the fetch rows write nothing); every other row writes one
ShareUpdate with the SPSO and the state batches that changed at or above it."""
from __future__ import annotations

import pytest

from kgroup import Cluster, Coordinator
from kgroup.groups.share.partition import ACCEPT, RELEASE, share_partition
from kgroup.records import ShareSnapshot, ShareUpdate
from partition_testing import states

AVAILABLE, ACKNOWLEDGED = 0, 2
X, Y, Z = "consumer-x", "consumer-y", "consumer-z"


def written(c, since):
    """(record type, start offset, [(first, last, state, count)]) written since `since`."""
    out = []
    for e in list(c.share_state_log)[since:]:
        v = e.record.value
        out.append((type(e.record).__name__, v.start_offset,
                    [(b.first_offset, b.last_offset, b.delivery_state, b.delivery_count) for b in v.state_batches]))
    return out


# the seed's table: under kafka the writes that move the SPSO differ (test_share_kip_examples.py)
@pytest.mark.parametrize("profile", ["kip"])
def test_kip_durable_state_example(profile):
    c = Coordinator(cluster=Cluster({"t": 1}, seed=5), profile=profile)
    c.cluster.produce("t", 0, [b"old"] * 100)            # latest offset 100
    tid = c.cluster.topic_id("t")
    rows = []

    def step(action):
        n = len(c.share_state_log)
        action()
        rows.append(written(c, n))

    sp = None

    def start():
        nonlocal sp
        sp = share_partition(c, "g", tid, 0)                # share.auto.offset.reset=latest
    step(start)
    # "Starting state ...: SPSO=100, SPEO=100"
    assert rows[-1] == [("ShareSnapshot", 100, [])]
    assert (sp.spso, sp.next_offset) == (100, 100)

    c.cluster.produce("t", 0, [b"r"] * 10)                 # 100-109 in one batch
    step(lambda: sp.acquire(X))                            # "Fetch records 100-109"
    assert rows[-1] == [] and sp.next_offset == 110
    assert states(sp) == {o: ("Acquired", 1) for o in range(100, 110)}

    step(lambda: sp.acknowledge(X, [(100, 109, (ACCEPT,))]))   # "Acknowledge 100-109" -> SPSO=110
    assert rows[-1] == [("ShareUpdate", 110, [])]
    assert (sp.spso, sp.next_offset, states(sp)) == (110, 110, {})

    for i in range(10):                                    # 110-119, one record per batch
        c.cluster.produce("t", 0, [f"r{110 + i}".encode()])

    def fetch_110_119():                                   # "Fetch records 110-119" (two consumers)
        assert sp.acquire(X, max_records=3).acquired == [(110, 112, 1)]
        c.advance(1)
        assert sp.acquire(Y, max_records=7).count == 7
    step(fetch_110_119)
    assert rows[-1] == [] and sp.next_offset == 120

    step(lambda: sp.acknowledge(X, [(110, 110, (RELEASE,))]))  # "Release 110"
    assert rows[-1] == [("ShareUpdate", 110, [(110, 110, AVAILABLE, 1)])]

    step(lambda: sp.acknowledge(Y, [(119, 119, (ACCEPT,))]))   # "Acknowledge 119"
    assert rows[-1] == [("ShareUpdate", 110, [(119, 119, ACKNOWLEDGED, 1)])]
    assert states(sp)[110] == ("Available", 1) and states(sp)[118] == ("Acquired", 1)

    c.cluster.produce("t", 0, [b"r120"])

    def fetch_110_120():                                   # "Fetch records 110, 120"
        assert sp.acquire(Z).acquired == [(110, 110, 2), (120, 120, 1)]
    step(fetch_110_120)
    assert rows[-1] == [] and sp.next_offset == 121

    step(lambda: c.advance(30_000 - 1))                    # "Lock timeout elapsed 111, 112" (X's lock)
    assert rows[-1] == [("ShareUpdate", 110, [(111, 112, AVAILABLE, 1)])]
    assert states(sp, 110, 113) == {110: ("Acquired", 2), 111: ("Available", 1), 112: ("Available", 1),
                                    113: ("Acquired", 1)}

    step(lambda: sp.acknowledge(Y, [(113, 118, (ACCEPT,))]))   # "Acknowledge 113-118"
    assert rows[-1] == [("ShareUpdate", 110, [(113, 118, ACKNOWLEDGED, 1)])]

    def fetch_111_112():                                   # "Fetch records 111,112"
        assert sp.acquire(X).acquired == [(111, 112, 2)]
    step(fetch_111_112)
    assert rows[-1] == []

    step(lambda: sp.acknowledge(Z, [(110, 110, (ACCEPT,))]))   # "Acknowledge 110" -> SPSO=111
    assert rows[-1] == [("ShareUpdate", 111, [])]
    assert states(sp, 111, 112) == {111: ("Acquired", 2), 112: ("Acquired", 2)}

    step(lambda: sp.acknowledge(X, [(111, 112, (ACCEPT,))]))   # "Acknowledge 111,112" -> SPSO=120
    assert rows[-1] == [("ShareUpdate", 120, [])]
    # "SPSO=120, SPEO=121, record 120 (acquired, delivery count 1)"
    assert (sp.spso, sp.next_offset, states(sp)) == (120, 121, {120: ("Acquired", 1)})
    assert sp.speo == (121 if profile == "kip" else 120)

    # the share coordinator's view is the durable state the KIP's last row leaves
    state = c.components["share_coordinator"].states
    (held,) = state.values()
    assert held.start_offset == 120 and tuple(held.state_batches) == ()


def test_a_new_leader_reads_the_durable_state_from_the_share_coordinator():
    c = Coordinator(cluster=Cluster({"t": 1}, seed=5))
    c.cluster.group_configs["g"] = {"share.auto.offset.reset": "earliest"}
    for _ in range(4):
        c.cluster.produce("t", 0, [b"a", b"b"])
    tid = c.cluster.topic_id("t")
    sp = share_partition(c, "g", tid, 0)
    sp.acquire(X)
    sp.acknowledge(X, [(0, 1, (ACCEPT,)), (2, 2, (RELEASE,)), (4, 5, (ACCEPT,))])
    # failover: a coordinator rebuilt from both logs; the leader has no soft state
    c2 = Coordinator.load(c.log, share_state_log=c.share_state_log, cluster=c.cluster)
    sp2 = share_partition(c2, "g", tid, 0)
    assert sp2 is not sp and sp2.spso == 2
    assert states(sp2) == {2: ("Available", 1), 3: ("Available", 0), 4: ("Acknowledged", 1),
                           5: ("Acknowledged", 1)}
    got = sp2.acquire(Y)
    assert got.acquired == [(2, 2, 2), (3, 3, 1), (6, 7, 1)]
    assert isinstance(c2.share_state_log.entry_at(0).record, ShareSnapshot)
    assert all(isinstance(e.record, (ShareSnapshot, ShareUpdate)) for e in c2.share_state_log)


def test_writes_carry_the_delivery_complete_count():
    # KIP-1226 (WriteShareGroupState v1): Acknowledged/Archived records at or above the SPSO
    c = Coordinator(cluster=Cluster({"t": 1}, seed=5))
    c.cluster.group_configs["g"] = {"share.auto.offset.reset": "earliest"}
    c.cluster.produce("t", 0, [b"x"] * 6)
    sp = share_partition(c, "g", c.cluster.topic_id("t"), 0)
    sp.acquire(X)
    sp.acknowledge(X, [(1, 2, (ACCEPT,)), (4, 4, (RELEASE,)), (5, 5, (ACCEPT,))])
    assert sp.spso == 0 and sp.delivery_complete_count() == 3
    last = list(c.share_state_log)[-1].record.value
    assert last.delivery_complete_count == 3
    (held,) = c.components["share_coordinator"].states.values()
    assert held.delivery_complete_count == 3
