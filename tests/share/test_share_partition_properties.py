"""Invariants of a share-partition under random fetches, acknowledgements, lock expiry and
log truncation (hypothesis), under both profiles:

- the in-flight cache covers [SPSO, SPEO) without holes and never starts with a record
  whose delivery is complete (the SPSO would have moved past it); the SPSO never goes back;
- every Acquired record holds a live lock whose count of held records is exact;
- no delivery count exceeds the delivery count limit; Available records are below it;
- what the leader wrote is what it holds: every non-Acquired in-flight record has the same
  state and delivery count in the durable state (Acquired is never written);
- a new leader rebuilt from the durable state sees the same SPSO and, for every record not
  Acquired, the same state and delivery count.
"""
from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kgroup.groups.share.partition import ACCEPT, GAP, REJECT, RELEASE, share_partition
from kgroup.groups.share.persister import DeliveryState
from partition_testing import make

MEMBERS = ["a", "b", "c"]
NAMES = {DeliveryState.AVAILABLE: "Available", DeliveryState.ACKNOWLEDGED: "Acknowledged",
         DeliveryState.ARCHIVED: "Archived"}

op = st.one_of(
    st.tuples(st.just("produce"), st.integers(1, 6)),
    st.tuples(st.just("fetch"), st.sampled_from(MEMBERS), st.integers(1, 8), st.booleans()),
    st.tuples(st.just("ack"), st.sampled_from(MEMBERS), st.integers(0, 3), st.integers(0, 2 ** 16)),
    st.tuples(st.just("advance"), st.sampled_from([1000, 10_000, 30_000])),
    st.tuples(st.just("truncate"), st.integers(0, 3)),
)


def durable_view(per, key):
    st_ = per.states.get(key)
    out = {}
    for b in st_.state_batches:
        for o in range(b.first_offset, b.last_offset + 1):
            out[o] = (NAMES[DeliveryState(b.delivery_state)], b.delivery_count)
    return st_.start_offset, out


def check(c, per, sp, limit, last_spso):
    batches = sp.in_flight_batches()
    assert sp.spso >= last_spso
    if batches:
        assert batches[0].first == sp.spso and batches[-1].last == sp.next_offset - 1
        for x, y in zip(batches, batches[1:]):
            assert y.first == x.last + 1
    else:
        assert sp.next_offset == sp.spso
    views = [v for v in sp.records() if v.offset >= sp.spso]
    if views:
        assert views[0].state in ("Available", "Acquired")
    held: dict = {}
    for v in sp.records():
        assert 0 <= v.delivery_count <= limit
        if v.state == "Acquired":
            assert v.member_id in MEMBERS and v.lock_deadline > c.now()
        else:
            assert v.member_id is None
        if v.state == "Available":
            assert v.delivery_count < limit
    for b in list(batches) + list(sp._below):
        for o in range(b.first, b.last + 1):
            state, _, lock = b.record(o)
            if state == 1:
                held[lock] = held.get(lock, 0) + 1
    assert {lk: lk.held for lk in sp.locks()} == held
    for lk in sp.locks():
        assert lk.timer in c.timers
    spso, durable = durable_view(per, ("g", sp.topic_id, 0))
    if sp.profile.share_ack_write_carries_new_spso:
        assert spso == sp.spso
    else:
        # kafka: the write that moves the SPSO carries the one before and the completed records;
        # everything between the two is durably complete, so a new leader reaches the same SPSO
        assert spso <= sp.spso
        assert all(durable.get(o, ("Available", 0))[0] in ("Acknowledged", "Archived") for o in range(spso, sp.spso))
    for v in views:
        if v.state != "Acquired":
            assert durable.get(v.offset, ("Available", 0)) == (v.state, v.delivery_count), v.offset


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=st.lists(op, min_size=1, max_size=40), profile=st.sampled_from(["kip", "kafka"]))
def test_share_partition_invariants(ops, profile):
    limit = 3
    c, per = make({"t": 1}, profile=profile, config={"group.share.delivery.count.limit": limit},
                  group_configs={"share.auto.offset.reset": "earliest"})
    tid = c.cluster.topic_id("t")
    sp = share_partition(c, "g", tid, 0)
    held: dict[str, list[tuple[int, int]]] = {m: [] for m in MEMBERS}
    last_spso = sp.spso
    for o in ops:
        if o[0] == "produce":
            c.cluster.produce("t", 0, [b"v"] * o[1])
        elif o[0] == "fetch":
            _, m, n, strict = o
            got = sp.acquire(m, n, record_limit=strict)
            held[m] += [(a, z) for a, z, _ in got.acquired]
            assert got.count <= n or not strict
        elif o[0] == "ack":
            _, m, kind, seed = o
            ranges = sorted(held[m])
            held[m] = []
            batches = []
            for i, (a, z) in enumerate(ranges):
                if kind == 0:
                    types = (ACCEPT,)
                else:
                    types = tuple([ACCEPT, RELEASE, REJECT, GAP][(seed >> ((k + i) % 16)) % 4]
                                  for k in range(z - a + 1)) if kind == 3 else ((RELEASE,) if kind == 1 else (REJECT,))
                batches.append((a, z, types))
            sp.acknowledge(m, batches)   # may be refused (a lock elapsed): then nothing changed
        elif o[0] == "advance":
            c.advance(o[1])
        else:
            end = c.cluster.end_offset("t", 0)
            c.cluster.delete_records("t", 0, max(c.cluster.log_start_offset("t", 0), end - o[1]))
            sp.acquire(MEMBERS[0], 1)  # the leader notices the log start offset on its next read
            held[MEMBERS[0]] = [(v.offset, v.offset) for v in sp.records()
                                if v.member_id == MEMBERS[0] and v.state == "Acquired"]
        check(c, per, sp, limit, last_spso)
        last_spso = sp.spso

    # a new leader from the durable state alone
    c2, _ = make({"t": 1}, profile=profile, persister=per, config={"group.share.delivery.count.limit": limit})
    c2.cluster = c.cluster
    sp2 = share_partition(c2, "g", tid, 0)
    assert sp2.spso == sp.spso
    now = {v.offset: (v.state, v.delivery_count) for v in sp.records() if v.offset >= sp.spso}
    again = {v.offset: (v.state, v.delivery_count) for v in sp2.records()}
    for offset, (state, count) in now.items():
        if state != "Acquired" and offset in again:
            assert again[offset] == (state, count)
    assert all(s != "Acquired" for s, _ in again.values())
