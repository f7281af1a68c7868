"""The share-partition leader (KIP-932 "In-flight records"): states, delivery counts,
acquisition locks, the in-flight limit, the SPSO and SPEO, isolation, recovery.

Oracle where the draft is silent: Kafka's SharePartition and SharePartitionTest."""
from __future__ import annotations

import pytest

from kgroup.errors import ErrorCode
from kgroup.groups.share.partition import (
    ACCEPT, GAP, REJECT, RELEASE, forget, leaders, set_record_lock_duration, share_partition,
)
from kgroup.groups.share.persister import DeliveryState, PartitionState, StateBatch
from partition_testing import RecordingPersister, make, states

A, B = "member-a", "member-b"


def sp_with(batches, *, profile="kip", config=None, group_configs=None, persister=None, topic="t"):
    """A share-partition at SPSO 0 over `batches` (record counts of produced batches)."""
    gc = {"share.auto.offset.reset": "earliest", **(group_configs or {})}
    c, per = make({topic: 1}, profile=profile, config=config, group_configs=gc, persister=persister)
    for i, n in enumerate(batches):
        c.cluster.produce(topic, 0, [f"v{i}-{k}".encode() for k in range(n)])
    sp = share_partition(c, "g", c.cluster.topic_id(topic), 0)
    return c, per, sp


# -- the KIP's diagram, transition by transition ------------------------------------------

def test_acquire_moves_available_to_acquired_and_counts_the_delivery():
    # KIP: "Every time that a record is acquired ... its delivery count increments by 1.
    # The first time a record is acquired, its delivery count is 1."
    c, _, sp = sp_with([3])
    got = sp.acquire(A)
    assert got.acquired == [(0, 2, 1)]
    assert [b.base_offset for b in got.batches] == [0]
    assert states(sp) == {0: ("Acquired", 1), 1: ("Acquired", 1), 2: ("Acquired", 1)}
    assert {v.member_id for v in sp.records()} == {A}
    assert {v.lock_deadline for v in sp.records()} == {c.now() + 30_000}


def test_accepted_records_are_acknowledged_then_archived_when_the_spso_moves_past():
    c, per, sp = sp_with([3, 2])
    sp.acquire(A)
    assert sp.acknowledge(A, [(3, 4, (ACCEPT,))]) == (ErrorCode.none, None)
    assert states(sp)[3] == ("Acknowledged", 1) and sp.spso == 0
    assert sp.acknowledge(A, [(0, 2, (ACCEPT,))]) == (ErrorCode.none, None)
    # "SPSO moves past record": Acknowledged -> Archived, out of the in-flight window
    assert sp.spso == 5 and sp.records() == []
    assert per.writes()[-1][5:] == (5, ())


def test_release_below_the_limit_makes_records_available_again():
    c, per, sp = sp_with([4])
    sp.acquire(A)
    assert sp.acknowledge(A, [(1, 1, (RELEASE,))])[0] == ErrorCode.none
    assert states(sp)[1] == ("Available", 1)
    assert per.writes()[-1][6] == (StateBatch(1, 1, DeliveryState.AVAILABLE, 1),)
    got = sp.acquire(B)
    assert got.acquired == [(1, 1, 2)]  # redelivered with delivery count 2
    assert sp.records(1, 1)[0].member_id == B


def test_lock_elapsed_below_the_limit_makes_records_available_again():
    c, per, sp = sp_with([2])
    sp.acquire(A)
    c.advance(29_999)
    assert states(sp)[0] == ("Acquired", 1)
    c.advance(1)
    assert states(sp) == {0: ("Available", 1), 1: ("Available", 1)}
    assert per.writes()[-1][6] == (StateBatch(0, 1, DeliveryState.AVAILABLE, 1),)


def test_reject_archives_at_once():
    c, _, sp = sp_with([3])
    sp.acquire(A)
    sp.acknowledge(A, [(1, 1, (REJECT,))])
    assert states(sp) == {0: ("Acquired", 1), 1: ("Archived", 1), 2: ("Acquired", 1)}


@pytest.mark.parametrize("how", ["release", "lock"])
def test_at_the_delivery_count_limit_a_release_or_an_elapsed_lock_archives(how):
    # KIP: "if (delivery count == group.share.delivery.attempt.limit) ... -> Archived"
    c, _, sp = sp_with([1], config={"group.share.delivery.attempt.limit": 2})
    for attempt in (1, 2):
        assert sp.acquire(A).acquired == [(0, 0, attempt)]
        if how == "release":
            sp.acknowledge(A, [(0, 0, (RELEASE,))])
        else:
            c.advance(30_000)
    # archived at the front: the SPSO moves past it
    assert sp.spso == 1 and sp.records() == []
    assert sp.acquire(A).acquired == []


def test_delivery_count_limit_default_five_and_per_group_override():
    c, _, sp = sp_with([1])
    assert sp.delivery_count_limit() == 5
    c.cluster.group_configs["g"]["share.delivery.count.limit"] = 3
    for attempt in (1, 2, 3):
        assert sp.acquire(A).acquired == [(0, 0, attempt)]
        c.advance(30_000)
    assert sp.spso == 1


def test_delivery_count_limit_bounds():
    from kgroup import Coordinator
    from kgroup.errors import ConfigError
    for bad in (1, 11):
        with pytest.raises(ConfigError):
            Coordinator(config={"group.share.delivery.count.limit": bad})


def test_gap_acknowledgements_archive_offsets_with_no_record():
    # Kafka's SharePartition.fetchRecordState: GAP (0) -> ARCHIVED
    c, _, sp = sp_with([5])
    sp.acquire(A)
    assert sp.acknowledge(A, [(0, 4, (ACCEPT, GAP, ACCEPT, GAP, RELEASE))])[0] == ErrorCode.none
    assert sp.spso == 4
    assert states(sp) == {4: ("Available", 1)}


# -- per batch where it can, per offset where it must ---------------------------------

def test_whole_batch_acknowledgement_keeps_state_per_batch():
    c, _, sp = sp_with([500, 500], config={"group.share.partition.max.record.locks": 2000})
    sp.acquire(A, max_records=1000)
    sp.acknowledge(A, [(500, 999, (ACCEPT,))])
    kept = sp.in_flight_batches()
    assert [(b.first, b.last, b.states is None) for b in kept] == [(0, 499, True), (500, 999, True)]


def test_a_partial_acknowledgement_keeps_that_batch_per_offset():
    c, _, sp = sp_with([10])
    sp.acquire(A)
    sp.acknowledge(A, [(0, 3, (ACCEPT,))])
    (b,) = sp.in_flight_batches()
    assert b.first == 4 and b.states is not None and sp.spso == 4


def test_acknowledgement_spanning_two_batches():
    c, _, sp = sp_with([3, 3])
    sp.acquire(A)
    assert sp.acknowledge(A, [(1, 4, (ACCEPT,))])[0] == ErrorCode.none
    assert states(sp) == {0: ("Acquired", 1), 1: ("Acknowledged", 1), 2: ("Acknowledged", 1),
                          3: ("Acknowledged", 1), 4: ("Acknowledged", 1), 5: ("Acquired", 1)}


# -- acknowledgement errors, atomic per share-partition --------------------------------

def test_acknowledging_records_another_member_holds_is_invalid_record_state():
    c, _, sp = sp_with([2])
    sp.acquire(A)
    assert sp.acknowledge(B, [(0, 1, (ACCEPT,))]) == (ErrorCode.invalid_record_state,
                                                      "Member is not the owner of batch record")


def test_acknowledging_a_record_not_acquired_is_invalid_record_state():
    c, _, sp = sp_with([2])
    sp.acquire(A)
    sp.acknowledge(A, [(0, 0, (RELEASE,))])
    code, msg = sp.acknowledge(A, [(0, 0, (ACCEPT,))])
    assert code == ErrorCode.invalid_record_state and "not acquired" in msg


def test_acknowledging_past_the_acquired_records_is_invalid_request():
    # Kafka's SharePartitionTest: "The first/last offset in request is past acquired records."
    c, _, sp = sp_with([2, 2])
    sp.acquire(A, max_records=2)
    assert sp.acknowledge(A, [(5, 6, (ACCEPT,))])[0] == ErrorCode.invalid_request
    assert sp.acknowledge(A, [(0, 3, (ACCEPT,))])[0] == ErrorCode.invalid_request


def test_acknowledging_with_nothing_in_flight_is_invalid_record_state():
    c, _, sp = sp_with([2])
    assert sp.acknowledge(A, [(0, 1, (ACCEPT,))])[0] == ErrorCode.invalid_record_state


def test_acknowledgements_are_atomic_per_share_partition():
    # KIP: "acknowledgements for the records in a batch are performed atomically"
    c, per, sp = sp_with([2, 2])
    sp.acquire(A, max_records=2)
    sp.acquire(B, max_records=2)
    writes = len(per.writes())
    code, _ = sp.acknowledge(A, [(0, 1, (ACCEPT,)), (2, 3, (ACCEPT,))])  # 2-3 belong to B
    assert code == ErrorCode.invalid_record_state
    assert states(sp) == {o: ("Acquired", 1) for o in range(4)}
    assert len(per.writes()) == writes and sp.spso == 0


def test_a_failed_write_undoes_the_acknowledgement():
    # Kafka's SharePartition rolls back in-memory transitions when the persister fails
    c, per, sp = sp_with([3])
    sp.acquire(A)
    per.fail_next_write = ErrorCode.coordinator_not_available
    assert sp.acknowledge(A, [(0, 1, (ACCEPT,))])[0] == ErrorCode.coordinator_not_available
    assert states(sp) == {o: ("Acquired", 1) for o in range(3)} and sp.spso == 0
    assert sp.acknowledge(A, [(0, 2, (ACCEPT,))])[0] == ErrorCode.none
    assert sp.spso == 3


def test_acknowledgements_below_the_spso_are_skipped():
    c, _, sp = sp_with([2, 2])
    sp.acquire(A)
    sp.acknowledge(A, [(0, 1, (ACCEPT,))])
    assert sp.acknowledge(A, [(0, 3, (ACCEPT,))])[0] == ErrorCode.none
    assert sp.spso == 4


# -- acquisition locks ---------------------------------------------------------------

def test_one_timer_per_acquisition_cancelled_when_all_its_records_are_acknowledged():
    c, _, sp = sp_with([5, 5])
    sp.acquire(A)
    (lock,) = sp.locks()
    assert lock.timer in c.timers and lock.held == 10
    sp.acknowledge(A, [(0, 4, (ACCEPT,))])
    assert lock.timer in c.timers and lock.held == 5
    sp.acknowledge(A, [(5, 9, (ACCEPT,))])
    assert lock.timer not in c.timers and sp.locks() == []


def test_group_lock_duration_is_the_per_group_config():
    c, _, sp = sp_with([1], group_configs={"share.record.lock.duration.ms": 5000})
    sp.acquire(A)
    c.advance(5000)
    assert states(sp)[0] == ("Available", 1)


def test_consumer_lock_duration_within_bounds_kip():
    # the draft's consumer config record.lock.duration.ms: min 1000, max group.share.record.lock.duration.max.ms
    c, _, sp = sp_with([1], config={"group.share.record.lock.duration.max.ms": 40_000})
    assert set_record_lock_duration(c, "g", A, 999) == ErrorCode.invalid_request
    assert set_record_lock_duration(c, "g", A, 40_001) == ErrorCode.invalid_request
    assert set_record_lock_duration(c, "g", A, 2000) == ErrorCode.none
    sp.acquire(A)
    assert sp.records()[0].lock_deadline == c.now() + 2000
    c.advance(2000)
    assert states(sp)[0] == ("Available", 1)


def test_consumer_lock_duration_is_not_a_kafka_setting():
    c, _, sp = sp_with([1], profile="kafka")
    assert set_record_lock_duration(c, "g", A, 2000) == ErrorCode.invalid_request
    sp.acquire(A)
    assert sp.records()[0].lock_deadline == c.now() + 30_000


def test_an_elapsed_lock_releases_only_what_is_still_acquired():
    c, _, sp = sp_with([4])
    sp.acquire(A)
    sp.acknowledge(A, [(1, 1, (ACCEPT,)), (2, 2, (REJECT,))])
    c.advance(30_000)
    assert states(sp) == {0: ("Available", 1), 1: ("Acknowledged", 1), 2: ("Archived", 1), 3: ("Available", 1)}


# -- the in-flight limit and batches ---------------------------------------------------

@pytest.mark.parametrize("name", ["group.share.partition.max.record.locks", "group.share.record.lock.partition.limit"])
def test_in_flight_limit_stops_new_records(name):
    # KIP: "Once the limit is reached, fetching records will temporarily yield no further records"
    c, _, sp = sp_with([60, 60, 60], config={name: 100})
    assert sp.acquire(A).acquired == [(0, 119, 1)]   # whole batches: 120 may pass 100
    assert sp.acquire(B).acquired == []
    sp.acknowledge(A, [(0, 59, (ACCEPT,))])
    assert sp.acquire(B).acquired == [(120, 179, 1)]


def test_released_records_are_acquired_even_at_the_in_flight_limit():
    # Kafka's canAcquireRecords: re-acquiring inside the window is always allowed
    c, _, sp = sp_with([100, 10], config={"group.share.partition.max.record.locks": 100})
    sp.acquire(A)
    sp.acknowledge(A, [(0, 99, (RELEASE,))])
    assert sp.acquire(B).acquired == [(0, 99, 2)]


def test_max_records_is_soft_for_whole_batches():
    c, _, sp = sp_with([10, 10])
    assert sp.acquire(A, max_records=3).acquired == [(0, 9, 1)]
    assert sp.acquire(B, max_records=3).acquired == [(10, 19, 1)]


def test_redelivered_records_come_with_the_batches_holding_them():
    c, _, sp = sp_with([3, 3, 3])
    sp.acquire(A)
    sp.acknowledge(A, [(4, 4, (RELEASE,)), (6, 8, (RELEASE,))])
    got = sp.acquire(B)
    assert got.acquired == [(4, 4, 2), (6, 8, 2)]
    assert [b.base_offset for b in got.batches] == [3, 6]


# -- SPSO, SPEO, auto offset reset, log start --------------------------------------------

def test_spso_starts_at_latest_by_default_and_is_written():
    c, per = make({"t": 1})
    c.cluster.produce("t", 0, [b"x"] * 7)
    sp = share_partition(c, "g", c.cluster.topic_id("t"), 0)
    assert sp.spso == 7 and sp.acquire(A).acquired == []
    assert per.calls[1][0] == "initialize" and per.calls[1][-1] == 7
    c.cluster.produce("t", 0, [b"y"])
    assert sp.acquire(A).acquired == [(7, 7, 1)]


def test_spso_by_duration():
    c, per = make({"t": 1}, group_configs={"share.auto.offset.reset": "by_duration:PT1M"})
    t0 = c.now()
    c.cluster.produce("t", 0, [b"old"] * 3, timestamp=t0)
    c.advance(120_000)
    c.cluster.produce("t", 0, [b"a", b"b"], timestamp=[c.now() - 90_000, c.now() - 30_000])
    sp = share_partition(c, "g", c.cluster.topic_id("t"), 0)
    assert sp.spso == 4


def test_uninitialised_durable_state_is_written_with_the_reset_offset_under_kip():
    per = RecordingPersister()
    c, _ = make({"t": 1}, persister=per, group_configs={"share.auto.offset.reset": "earliest"})
    tid = c.cluster.topic_id("t")
    per.states[("g", tid, 0)] = PartitionState(state_epoch=3, start_offset=-1)
    sp = share_partition(c, "g", tid, 0)
    assert sp.spso == 0 and sp.state_epoch == 3
    assert per.writes() == [("write", "g", tid, 0, 3, 0, ())]


# Kafka 4.4.0 (running broker): the SPSO share.auto.offset.reset gives is written with the first change
def test_under_kafka_state_initialised_without_a_start_offset_is_written_with_the_first_change():
    per = RecordingPersister()
    c, _ = make({"t": 1}, persister=per, profile="kafka", group_configs={"share.auto.offset.reset": "earliest"})
    tid = c.cluster.topic_id("t")
    c.cluster.produce("t", 0, [b"a", b"b"])
    per.states[("g", tid, 0)] = PartitionState(state_epoch=3, start_offset=-1)
    sp = share_partition(c, "g", tid, 0)
    assert sp.spso == 0 and sp.state_epoch == 3
    assert per.writes() == []
    sp.acquire("m")
    sp.acknowledge("m", [(0, 1, (ACCEPT,))])
    # the acknowledged records at the SPSO before them; SPSO 2 goes with the next write
    assert [w[:6] for w in per.writes()] == [("write", "g", tid, 0, 3, 0)]


@pytest.mark.parametrize("profile,speo", [("kip", 10), ("kafka", 9)])
def test_speo_profiles(profile, speo):
    # kip: "Fetch records 100-109 -> SPEO=110"; kafka: SharePartition.endOffset is the last offset
    c, _, sp = sp_with([10], profile=profile)
    assert sp.speo == 0
    sp.acquire(A)
    assert sp.speo == speo
    sp.acknowledge(A, [(0, 9, (ACCEPT,))])
    assert sp.spso == 10 and sp.speo == 10


@pytest.mark.parametrize("profile", ["kip", "kafka"])
def test_log_start_moving_past_the_spso(profile):
    # kip: "All records before the SPSO are in Archived state"; kafka: Acquired ones keep their lock
    c, per, sp = sp_with([3, 3, 3], profile=profile)
    sp.acquire(A, max_records=3)
    sp.acquire(B, max_records=3)
    sp.acknowledge(B, [(3, 3, (RELEASE,))])
    c.cluster.delete_records("t", 0, 4)
    sp.acquire(B)  # the leader notices the new log start offset on its next read
    assert sp.spso == 4
    below = {v.offset: (v.state, v.member_id) for v in sp.records() if v.offset < 4}
    if profile == "kip":
        assert below == {}
    else:
        assert below == {0: ("Acquired", A), 1: ("Acquired", A), 2: ("Acquired", A)}
        assert sp.acknowledge(A, [(0, 2, (ACCEPT,))])[0] == ErrorCode.none
        assert {v.offset for v in sp.records()} >= {4} and all(v.offset >= 4 for v in sp.records())
        assert sp.locks() and all(lk.member_id == B for lk in sp.locks())
    assert per.writes()[-1][5] >= 4


def test_log_start_beyond_everything_in_flight():
    c, _, sp = sp_with([3, 3])
    sp.acquire(A, max_records=3)
    c.cluster.delete_records("t", 0, 6)
    assert sp.acquire(A).acquired == []
    assert sp.spso == 6 and sp.speo == 6 and sp.locks() == []


# -- transactions ---------------------------------------------------------------------------

def test_read_committed_skips_aborted_and_waits_for_open_transactions():
    c, _, sp = sp_with([], group_configs={"share.isolation.level": "read_committed"})
    c.cluster.produce("t", 0, [b"a", b"b"], transactional="commit")    # 0-1, marker 2
    c.cluster.produce("t", 0, [b"x", b"y"], transactional="abort")     # 3-4, marker 5
    c.cluster.produce("t", 0, [b"p"])                                  # 6
    pid_base = c.cluster.produce("t", 0, [b"o"], transactional="open")  # 7 (open)
    c.cluster.produce("t", 0, [b"q"])                                  # 8: after the LSO
    got = sp.acquire(A)
    assert got.acquired == [(0, 1, 1), (6, 6, 1)]
    assert states(sp)[3] == ("Archived", 0) and states(sp)[2] == ("Archived", 0)
    assert sp.speo == 7 and c.cluster.last_stable_offset("t", 0) == pid_base
    (pid,) = c.cluster.open_transactions("t", 0)
    c.cluster.end_transaction("t", 0, pid, commit=True)
    assert sp.acquire(A).acquired == [(7, 8, 1)]


def test_read_uncommitted_delivers_aborted_records():
    c, _, sp = sp_with([])
    c.cluster.produce("t", 0, [b"x", b"y"], transactional="abort")
    assert sp.acquire(A).acquired == [(0, 1, 1)]
    assert states(sp)[2] == ("Archived", 0)  # the marker is no record for a consumer


# -- a new leader, an admin reset, forget ----------------------------------------------------

def test_a_new_leader_rebuilds_what_is_recoverable():
    # KIP "Managing durable share-partition state": SPSO, in-flight states, delivery counts of
    # failed deliveries; Acquired is not persisted.
    c, per, sp = sp_with([2, 2, 2, 2])
    sp.acquire(A)
    sp.acknowledge(A, [(0, 1, (ACCEPT,)), (2, 2, (RELEASE,)), (3, 3, (ACCEPT,)), (4, 4, (REJECT,))])
    # 5-7 still acquired when the leader goes away
    c2, _ = make({"t": 1}, persister=per)
    c2.cluster = c.cluster
    sp2 = share_partition(c2, "g", c.cluster.topic_id("t"), 0)
    assert sp2.spso == 2
    assert states(sp2) == {2: ("Available", 1), 3: ("Acknowledged", 1), 4: ("Archived", 1)}
    assert sp2.speo == 5
    got = sp2.acquire(B)
    assert got.acquired == [(2, 2, 2), (5, 7, 1)]


def test_fenced_state_epoch_drops_in_flight_state_and_reads_again():
    c, per, sp = sp_with([3])
    sp.acquire(A)
    tid = c.cluster.topic_id("t")
    # an admin reset bumped the state epoch and moved the SPSO
    per.states[("g", tid, 0)] = PartitionState(state_epoch=1, start_offset=2)
    assert sp.acknowledge(A, [(0, 2, (ACCEPT,))])[0] == ErrorCode.fenced_state_epoch
    assert sp.state_epoch == 1 and sp.spso == 2 and sp.records() == [] and sp.locks() == []
    assert sp.acquire(B).acquired == [(2, 2, 1)]


def test_forget_drops_soft_state_and_cancels_locks():
    c, per, sp = sp_with([3])
    sp.acquire(A)
    (lock,) = sp.locks()
    assert forget(c, "other") == 0
    assert forget(c, "g", c.cluster.topic_id("t")) == 1
    assert lock.timer not in c.timers and leaders(c).partitions == {}
    sp2 = share_partition(c, "g", c.cluster.topic_id("t"), 0)
    assert sp2 is not sp and sp2.records() == []


# -- the KIP's "In-flight records example" -------------------------------------------------

@pytest.mark.parametrize("profile,speo", [("kip", 9), ("kafka", 8)])
def test_kip_in_flight_records_example(profile, speo):
    """Offsets 0-9: Archv Archv Acqrd(1) Avail(2) Acqrd(1) Acked Archv Avail Avail Avail,
    SPSO at 2, SPEO at 9 (the draft's arrow; Kafka's endOffset is the last in-flight offset, 8).
    The draft leaves the delivery counts of 5-8 blank; here 7 and 8 were released once."""
    c, per, sp = sp_with([1] * 10, profile=profile)
    assert sp.acquire(A, max_records=2).acquired == [(0, 1, 1)]
    sp.acknowledge(A, [(0, 1, (ACCEPT,))])
    sp.acquire(A, max_records=7)
    sp.acknowledge(A, [(3, 3, (RELEASE,)), (5, 5, (ACCEPT,)), (6, 6, (REJECT,)), (7, 8, (RELEASE,))])
    assert sp.acquire(B, max_records=1).acquired == [(3, 3, 2)]   # "acquired twice"
    sp.acknowledge(B, [(3, 3, (RELEASE,))])
    assert sp.spso == 2 and sp.speo == speo
    assert states(sp) == {2: ("Acquired", 1), 3: ("Available", 2), 4: ("Acquired", 1), 5: ("Acknowledged", 1),
                          6: ("Archived", 1), 7: ("Available", 1), 8: ("Available", 1)}
    # "All records earlier than offset 2 are in Archived state", 9 and later Available (not in flight)
    assert min(v.offset for v in sp.records()) == 2 and max(v.offset for v in sp.records()) == 8
    # the durable state: the SPSO, the delivery count of 3, Acknowledged 5, Archived 6 (and 7-8 released)
    durable = per.states[("g", c.cluster.topic_id("t"), 0)]
    assert durable.start_offset == 2
    assert durable.state_batches == (StateBatch(3, 3, DeliveryState.AVAILABLE, 2),
                                     StateBatch(5, 5, DeliveryState.ACKNOWLEDGED, 1),
                                     StateBatch(6, 6, DeliveryState.ARCHIVED, 1),
                                     StateBatch(7, 8, DeliveryState.AVAILABLE, 1))


def test_record_limit_mode_splits_batches():
    # ShareFetch v2 ShareAcquireMode 1 (record_limit): never more than MaxRecords
    c, _, sp = sp_with([10])
    assert sp.acquire(A, max_records=4, record_limit=True).acquired == [(0, 3, 1)]
    got = sp.acquire(B, max_records=4, record_limit=True)
    assert got.acquired == [(4, 7, 1)] and [b.base_offset for b in got.batches] == [0]
    sp.acknowledge(A, [(0, 3, (RELEASE,))])
    assert sp.acquire(B, max_records=3, record_limit=True).acquired == [(0, 2, 2)]
    assert sp.acquire(B, max_records=3, record_limit=True).acquired == [(3, 3, 2), (8, 9, 1)]


def test_kafka_acquired_records_below_the_spso_go_when_their_lock_elapses():
    c, _, sp = sp_with([3, 3], profile="kafka")
    sp.acquire(A, max_records=3)
    c.cluster.delete_records("t", 0, 3)
    c.advance(1000)
    sp.acquire(B)
    assert [v.offset for v in sp.records() if v.state == "Acquired" and v.member_id == A] == [0, 1, 2]
    c.advance(29_000)   # A's lock elapses, B's holds
    assert [v.offset for v in sp.records()] == [3, 4, 5]
    assert [lk.member_id for lk in sp.locks()] == [B]


def test_strip_draws_every_offset_like_the_kip_example():
    c, _, sp = sp_with([1] * 10)
    sp.acquire(A, max_records=2)
    sp.acknowledge(A, [(0, 1, (ACCEPT,))])
    sp.acquire(A, max_records=3)
    strip = sp.strip(0, 12)
    assert [(v.offset, v.state) for v in strip] == [
        (0, "Archived"), (1, "Archived"), (2, "Acquired"), (3, "Acquired"), (4, "Acquired"),
        (5, "Available"), (6, "Available"), (7, "Available"), (8, "Available"), (9, "Available")]
    assert strip[2].member_id == A and strip[2].lock_deadline == c.now() + 30_000


@pytest.mark.parametrize("profile,locks,sessions", [("kip", 200, 1000), ("kafka", 2000, 2000)])
def test_draft_defaults_profile(profile, locks, sessions):
    # the draft: group.share.record.lock.partition.limit default 200, max.share.session.cache.slots 1000;
    # Kafka: group.share.partition.max.record.locks 2000, group.share.max.share.sessions 2000
    from kgroup.groups.share.session import sessions as session_cache
    c, _, sp = sp_with([1], profile=profile)
    assert sp.record_lock_limit() == locks and session_cache(c).max_sessions == sessions
    c2, _, sp2 = sp_with([1], profile=profile, config={"group.share.record.lock.partition.limit": 300})
    assert sp2.record_lock_limit() == 300


@pytest.mark.parametrize("profile", ["kip", "kafka"])
def test_acknowledging_offsets_the_spso_left_behind_is_invalid_record_state(profile):
    """Kafka's SharePartition.fetchSubMapForAcknowledgementBatch: no cached batch at or before the
    request's first offset (and the start offset not inside it) -> INVALID_RECORD_STATE; a late
    acknowledgement after another consumer finished the records changes nothing."""
    c, per, sp = sp_with([3], profile=profile)
    sp.acquire(A)
    c.advance(30_000)                                      # A's lock elapses
    sp.acquire(B)
    assert sp.acknowledge(B, [(0, 2, (ACCEPT,))]) == (ErrorCode.none, None) and sp.spso == 3
    writes = len(per.writes())
    code, message = sp.acknowledge(A, [(0, 2, (ACCEPT,))])
    assert code == ErrorCode.invalid_record_state and "not found in the cache" in message
    assert len(per.writes()) == writes and sp.spso == 3
