"""ShareFetch (78) and ShareAcknowledge (79) through `Coordinator.handle`: records and
AcquiredRecords, piggy-backed acknowledgements, share sessions and their errors.

Oracle: Kafka's KafkaApis, SharePartitionManager(Test) and ShareSessionCache."""
from __future__ import annotations

import pytest

from kgroup.errors import ErrorCode
from kgroup.groups.share.partition import share_partition
from kgroup.log.batch import iter_records
from partition_testing import ack_req, fetch_req, make, partition_rows, states

A, B = "member-a", "member-b"


def setup(topics=None, batches=(5,), **kw):
    gc = {"share.auto.offset.reset": "earliest", **kw.pop("group_configs", {})}
    c, per = make(topics or {"t": 1}, group_configs=gc, **kw)
    for name in (topics or {"t": 1}):
        for p in range((topics or {"t": 1})[name]):
            for i, n in enumerate(batches):
                c.cluster.produce(name, p, [f"{name}{p}-{i}-{k}".encode() for k in range(n)])
    return c, per


def row(c, resp, topic="t", partition=0):
    return partition_rows(resp)[(c.cluster.topic_id(topic), partition)]


def test_fetch_returns_real_batches_and_acquired_records():
    c, _ = setup(batches=(3, 2))
    r = fetch_req(c, [("t", 0)], member=A)
    assert r.error_code == ErrorCode.none and r.acquisition_lock_timeout.total_seconds() == 30
    p = row(c, r)
    assert [(a.first_offset, a.last_offset, a.delivery_count) for a in p.acquired_records] == [(0, 4, 1)]
    assert [(o, v) for o, _, _, v in iter_records(p.records)] == [
        (0, b"t0-0-0"), (1, b"t0-0-1"), (2, b"t0-0-2"), (3, b"t0-1-0"), (4, b"t0-1-1")]


def test_acknowledge_then_fetch_more_in_one_session():
    c, _ = setup(batches=(3,))
    fetch_req(c, [("t", 0)], member=A)
    r = ack_req(c, {("t", 0): [(0, 2, [1])]}, member=A, epoch=1)
    assert row(c, r).error_code == ErrorCode.none
    c.cluster.produce("t", 0, [b"more"])
    r = fetch_req(c, [], member=A, epoch=2)
    assert [(a.first_offset, a.last_offset) for a in row(c, r).acquired_records] == [(3, 3)]
    assert share_partition(c, "g", c.cluster.topic_id("t"), 0).spso == 3


def test_acknowledgements_piggy_backed_on_share_fetch():
    c, _ = setup(batches=(2, 2))
    fetch_req(c, [("t", 0)], member=A, max_records=2)
    r = fetch_req(c, [("t", 0)], member=A, epoch=1, max_records=2, acks={("t", 0): [(0, 1, [2])]})
    p = row(c, r)
    assert p.acknowledge_error_code == ErrorCode.none
    # the released records are re-acquired first (delivery count 2)
    assert [(a.first_offset, a.last_offset, a.delivery_count) for a in p.acquired_records] == [(0, 1, 2)]


def test_acknowledge_errors_are_per_partition():
    c, _ = setup({"t": 2}, batches=(2,))
    fetch_req(c, [("t", 0), ("t", 1)], member=A)
    r = ack_req(c, {("t", 0): [(0, 1, [1])], ("t", 1): [(0, 0, [1]), (1, 1, [7])]}, member=A)
    assert row(c, r, "t", 0).error_code == ErrorCode.none
    assert row(c, r, "t", 1).error_code == ErrorCode.invalid_request
    sp1 = share_partition(c, "g", c.cluster.topic_id("t"), 1)
    assert states(sp1) == {0: ("Acquired", 1), 1: ("Acquired", 1)}   # nothing applied on partition 1


@pytest.mark.parametrize("batch", [
    (3, 1, [1]),            # first > last
    (0, 1, []),             # no types
    (0, 1, [1, 1, 1]),      # neither one type nor one per offset
    (0, 1, [4]),            # RENEW (v2 with IsRenewAck only) / unknown type
])
def test_invalid_acknowledgement_batches_are_invalid_request(batch):
    c, _ = setup(batches=(2,))
    fetch_req(c, [("t", 0)], member=A)
    r = ack_req(c, {("t", 0): [batch]}, member=A)
    assert row(c, r).error_code == ErrorCode.invalid_request


def test_overlapping_acknowledgement_batches_are_invalid_request():
    c, _ = setup(batches=(4,))
    fetch_req(c, [("t", 0)], member=A)
    r = ack_req(c, {("t", 0): [(0, 2, [1]), (2, 3, [1])]}, member=A)
    assert row(c, r).error_code == ErrorCode.invalid_request


def test_acknowledging_another_members_records_is_invalid_record_state():
    c, _ = setup(batches=(2,))
    fetch_req(c, [("t", 0)], member=A)
    fetch_req(c, [("t", 0)], member=B)
    r = ack_req(c, {("t", 0): [(0, 1, [1])]}, member=B)
    assert row(c, r).error_code == ErrorCode.invalid_record_state


def test_unknown_topic_id_and_partition():
    c, _ = setup(batches=(1,))
    fetch_req(c, [("t", 0)], member=A)
    r = ack_req(c, {("nope", 0): [(0, 0, [1])], ("t", 5): [(0, 0, [1])]}, member=A)
    codes = {p.partition_index: p.error_code for t in r.responses for p in t.partitions}
    assert codes == {0: ErrorCode.unknown_topic_id, 5: ErrorCode.unknown_topic_or_partition}


# -- share sessions ----------------------------------------------------------------------

def test_initial_fetch_with_acknowledgements_is_invalid_request():
    c, _ = setup()
    r = fetch_req(c, [("t", 0)], member=A, epoch=0, acks={("t", 0): [(0, 0, [1])]})
    assert r.error_code == ErrorCode.invalid_request


def test_unknown_session_and_wrong_epoch():
    c, _ = setup()
    assert fetch_req(c, [("t", 0)], member=A, epoch=1).error_code == ErrorCode.share_session_not_found
    assert ack_req(c, {}, member=A, epoch=1).error_code == ErrorCode.share_session_not_found
    fetch_req(c, [("t", 0)], member=A)
    assert fetch_req(c, [], member=A, epoch=2).error_code == ErrorCode.invalid_share_session_epoch
    assert fetch_req(c, [], member=A, epoch=1).error_code == ErrorCode.none
    assert ack_req(c, {}, member=A, epoch=1).error_code == ErrorCode.invalid_share_session_epoch
    assert ack_req(c, {}, member=A, epoch=2).error_code == ErrorCode.none
    assert fetch_req(c, [], member=A, epoch=3).error_code == ErrorCode.none


def test_share_acknowledge_cannot_open_a_session():
    c, _ = setup()
    assert ack_req(c, {}, member=A, epoch=0).error_code == ErrorCode.invalid_share_session_epoch


def test_closing_the_session_releases_what_the_member_holds():
    # KafkaApis: a final-epoch request acknowledges, then releases the member's records
    c, per = setup(batches=(2, 2))
    fetch_req(c, [("t", 0)], member=A)
    r = ack_req(c, {("t", 0): [(0, 1, [1])]}, member=A, epoch=-1)
    assert r.error_code == ErrorCode.none and row(c, r).error_code == ErrorCode.none
    sp = share_partition(c, "g", c.cluster.topic_id("t"), 0)
    assert sp.spso == 2 and states(sp) == {2: ("Available", 1), 3: ("Available", 1)} and sp.locks() == []
    assert fetch_req(c, [], member=A, epoch=1).error_code == ErrorCode.share_session_not_found


def test_final_share_fetch_must_not_fetch():
    c, _ = setup()
    fetch_req(c, [("t", 0)], member=A)
    assert fetch_req(c, [("t", 0)], member=A, epoch=-1).error_code == ErrorCode.invalid_request
    r = fetch_req(c, [], member=A, epoch=-1)
    assert r.error_code == ErrorCode.none and r.responses == ()
    assert share_partition(c, "g", c.cluster.topic_id("t"), 0).locks() == []


def test_a_new_session_replaces_the_old_one_and_releases_its_records():
    c, _ = setup(batches=(2,))
    fetch_req(c, [("t", 0)], member=A)
    r = fetch_req(c, [("t", 0)], member=A, epoch=0)
    assert [(a.first_offset, a.delivery_count) for a in row(c, r).acquired_records] == [(0, 2)]


def test_forgotten_partitions_leave_the_session_and_their_records_are_released():
    c, _ = setup({"t": 2}, batches=(2,))
    fetch_req(c, [("t", 0), ("t", 1)], member=A)
    fetch_req(c, [], member=A, epoch=1, forget={"t": [1]})
    sp1 = share_partition(c, "g", c.cluster.topic_id("t"), 1)
    assert states(sp1) == {0: ("Available", 1), 1: ("Available", 1)}
    c.cluster.produce("t", 1, [b"x"])
    c.cluster.produce("t", 0, [b"y"])
    r = fetch_req(c, [], member=A, epoch=2)
    assert {p.partition_index for t in r.responses for p in t.partitions if p.acquired_records} == {0}


@pytest.mark.parametrize("name", ["group.share.max.share.sessions", "max.share.session.cache.slots"])
def test_session_cache_limit(name):
    c, _ = setup(config={name: 1})
    assert fetch_req(c, [("t", 0)], member=A).error_code == ErrorCode.none
    assert fetch_req(c, [("t", 0)], member=B).error_code == ErrorCode.share_session_limit_reached
    fetch_req(c, [], member=A, epoch=-1)
    assert fetch_req(c, [("t", 0)], member=B).error_code == ErrorCode.none


def test_no_share_partition_starves():
    # KIP: "the share-partition leader rotates the order of share-partitions"
    c, _ = setup({"t": 3}, batches=(4, 4, 4))
    served = []
    epoch = 0
    for _ in range(6):
        r = fetch_req(c, [("t", 0), ("t", 1), ("t", 2)] if epoch == 0 else [], member=A, epoch=epoch, max_records=4)
        epoch += 1
        served.append([p.partition_index for t in r.responses for p in t.partitions if p.acquired_records])
    assert served == [[0], [1], [2], [0], [1], [2]]


def test_empty_group_or_member_id():
    c, _ = setup()
    assert fetch_req(c, [("t", 0)], member=A, group="").error_code == ErrorCode.invalid_group_id
    assert fetch_req(c, [("t", 0)], member="").error_code == ErrorCode.invalid_request


def test_lock_expiry_through_the_coordinator_clock():
    c, _ = setup(batches=(2,))
    fetch_req(c, [("t", 0)], member=A)
    c.advance(30_000)
    r = fetch_req(c, [("t", 0)], member=B)
    assert [(a.first_offset, a.last_offset, a.delivery_count) for a in row(c, r).acquired_records] == [(0, 1, 2)]
    r = ack_req(c, {("t", 0): [(0, 1, [1])]}, member=A)
    assert row(c, r).error_code == ErrorCode.invalid_record_state


def test_share_fetch_v2():
    c, _ = setup(batches=(2,))
    r = fetch_req(c, [("t", 0)], member=A, version=2)
    assert [(a.first_offset, a.last_offset) for a in row(c, r).acquired_records] == [(0, 1)]
    r = ack_req(c, {("t", 0): [(0, 1, [1])]}, member=A, version=2)
    assert row(c, r).error_code == ErrorCode.none
