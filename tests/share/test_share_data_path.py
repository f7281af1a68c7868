"""The simulated cluster's data path (what a share-partition leader reads): one real magic-2
batch per produce, transactions and markers, the last stable offset, DeleteRecords, offsets
by timestamp, end offsets kept consistent for lag."""
from __future__ import annotations

import pytest

from kgroup import Cluster
from kgroup.log.batch import read_batches


@pytest.fixture
def cl():
    return Cluster({"t": 2}, seed=1)


def test_one_real_batch_per_produce(cl):
    assert cl.produce("t", 0, [b"a", b"b", b"c"], keys=[b"k", None, b"k"], headers=[[("h", b"1")], (), ()],
                      timestamp=[10, 11, 12]) == 0
    assert cl.produce("t", 0, ["d"], timestamp=20) == 3
    assert cl.end_offset("t", 0) == 4 and cl.end_offset("t", 1) == 0
    (b1, b2) = cl.read("t", 0, 0)
    (batch,) = read_batches(b1.data, strict=True)
    assert batch.magic == 2 and batch.base_offset == 0 and batch.record_count == 3
    assert [(r.offset, r.key, r.value, r.timestamp) for r in batch.records] == [
        (0, b"k", b"a", 10), (1, None, b"b", 11), (2, b"k", b"c", 12)]
    assert batch.records[0].headers == (("h", b"1"),)
    assert (b2.base_offset, b2.last_offset) == (3, 3)


def test_read_from_the_middle_of_a_batch_and_by_record_count(cl):
    for _ in range(4):
        cl.produce("t", 0, [b"x"] * 5)
    assert [b.base_offset for b in cl.read("t", 0, 7)] == [5, 10, 15]
    assert [b.base_offset for b in cl.read("t", 0, 7, max_records=3)] == [5]
    assert [b.base_offset for b in cl.read("t", 0, 7, max_records=4)] == [5, 10]
    assert [b.base_offset for b in cl.read("t", 0, 0, max_offset=10)] == [0, 5]
    assert cl.read("t", 0, 20) == []


def test_transactions_and_the_last_stable_offset(cl):
    cl.produce("t", 0, [b"a"], transactional="commit")          # 0, marker 1
    cl.produce("t", 0, [b"b"], transactional="open")            # 2
    cl.produce("t", 0, [b"c"])                                   # 3
    assert cl.last_stable_offset("t", 0) == 2 and cl.end_offset("t", 0) == 4
    assert [b.base_offset for b in cl.read("t", 0, 0, read_committed=True)] == [0, 1]
    (pid,) = cl.open_transactions("t", 0)
    assert cl.end_transaction("t", 0, pid, commit=False) == 4
    assert cl.last_stable_offset("t", 0) == 5
    batches = cl.read("t", 0, 0, read_committed=True)
    assert [(b.base_offset, b.control, b.aborted) for b in batches] == [
        (0, False, False), (1, True, False), (2, False, True), (3, False, False), (4, True, False)]
    (marker,) = read_batches(batches[-1].data, strict=True)
    assert marker.is_control
    with pytest.raises(ValueError):
        cl.end_transaction("t", 0, pid, commit=True)


def test_delete_records_moves_the_log_start_offset(cl):
    for _ in range(3):
        cl.produce("t", 0, [b"x"] * 4)
    assert cl.delete_records("t", 0, 6) == 6
    assert cl.log_start_offset("t", 0) == 6
    assert [b.base_offset for b in cl.read("t", 0, 0)] == [4, 8]   # the batch holding 6 stays
    assert cl.delete_records("t", 0, 2) == 6                      # never backwards
    assert cl.delete_records("t", 0, -1) == 12 and cl.read("t", 0, 0) == []
    with pytest.raises(ValueError):
        cl.delete_records("t", 0, 13)


def test_offset_for_timestamp(cl):
    cl.produce("t", 0, [b"a", b"b"], timestamp=[100, 200])
    cl.produce("t", 0, [b"c"], timestamp=300)
    assert [cl.offset_for_timestamp("t", 0, ts) for ts in (0, 150, 200, 250, 301)] == [0, 1, 1, 2, 3]


def test_produce_continues_after_set_end_offset_and_validates(cl):
    cl.set_end_offset("t", 1, 50)
    assert cl.produce("t", 1, [b"x"]) == 50 and cl.end_offset("t", 1) == 51
    assert cl.log_start_offset("t", 1) == 50
    with pytest.raises(ValueError):
        cl.produce("t", 1, [])
    with pytest.raises(ValueError):
        cl.produce("t", 2, [b"x"])
    with pytest.raises(ValueError):
        cl.produce("t", 0, [b"x"], transactional="maybe")
