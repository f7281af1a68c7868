"""The simulated share consumer (`kgroup.clients.share`) against the whole KIP-932 stack:
membership, share sessions, ShareFetch/ShareAcknowledge, the share-partition leader and the
share coordinator. Each test names the seed's client rule it follows (KIP-932, "Client
programming interface" and its examples)."""
from __future__ import annotations

import pytest

from kgroup import Coordinator
from kgroup.cluster import Cluster
from kgroup.clients import Simulation
from kgroup.clients.share import AcknowledgeType, ShareConsumer
from kgroup.errors import ErrorCode
from kgroup.groups.share.partition import share_partition

LOCK_MS = 30_000  # group.share.record.lock.duration.ms default


def setup(*names: str, mode: str = "implicit", partitions: int = 1, **kw):
    cluster = Cluster({"foo": partitions}, seed=1)
    # a member is assigned at the bump it causes: these tests are about records, not KIP-1263's batching
    c = Coordinator(cluster=cluster, config={"group.share.assignment.interval.ms": 0})
    consumers = [ShareConsumer(c, "myshare", ["foo"], name=n, acknowledgement_mode=mode, **kw) for n in names]
    sim = Simulation(c, consumers)
    for k in consumers:
        k.start()
    sim.run(2_000)  # joined, share-partitions initialised at the latest offset (0)
    return c, sim, consumers


def leader(c: Coordinator, partition: int = 0):
    return share_partition(c, "myshare", c.cluster.topic_id("foo"), partition)


def states(c: Coordinator, partition: int = 0) -> dict[int, tuple[str, int]]:
    return {v.offset: (v.state, v.delivery_count) for v in leader(c, partition).records()}


def test_joins_with_its_own_member_id_and_gets_every_partition():
    c, sim, (a, b) = setup("A", "B", partitions=3)
    group = c.groups["myshare"]
    assert set(group.members) == {a.member_id, b.member_id}       # client-generated Uuid strings
    assert str(group.state) == "Stable"
    # both members fetch from the partitions; nothing is exclusive (no fencing in share groups)
    assert a.owned | b.owned == {("foo", 0), ("foo", 1), ("foo", 2)}


def test_implicit_acknowledgement_accepts_the_last_poll_on_the_next_one():
    """Seed: implicit mode, poll() without commit acknowledges every delivered record."""
    c, sim, (a,) = setup("A")
    c.cluster.produce("foo", 0, [b"r%d" % i for i in range(10)])
    first = a.poll()
    assert [r.offset for r in first] == list(range(10)) and {r.delivery_count for r in first} == {1}
    assert {s for s, _ in states(c).values()} == {"Acquired"}
    assert a.poll() == []                       # carries the acknowledgements, nothing new
    sp = leader(c)
    assert sp.spso == 10 and sp.records() == []  # all Acknowledged, so the SPSO moved past them
    assert len(c.share_state_log) > 0            # and the share coordinator persisted it


def test_commit_sync_sends_acknowledgements_at_once():
    """Seed: commitSync() commits the acknowledgements of the records returned."""
    c, sim, (a,) = setup("A")
    c.cluster.produce("foo", 0, [b"x"] * 5)
    a.poll()
    assert a.commit_sync() == {("foo", 0): ErrorCode.none}
    assert leader(c).spso == 5


def test_explicit_acknowledgement_per_record_reject_and_accept():
    """Seed example "Per-record acknowledgement": ACCEPT what processed, REJECT the bad one."""
    c, sim, (a,) = setup("A", mode="explicit")
    c.cluster.produce("foo", 0, [b"ok", b"bad", b"ok"])
    for r in a.poll():
        a.acknowledge(r, AcknowledgeType.REJECT if r.value == b"bad" else AcknowledgeType.ACCEPT)
    a.commit_sync()
    assert leader(c).spso == 3                   # rejected is Archived: nothing left in flight
    assert [(r.offset, t) for r, t in a.acknowledged] == [(0, AcknowledgeType.ACCEPT), (1, AcknowledgeType.REJECT),
                                                          (2, AcknowledgeType.ACCEPT)]


def test_explicit_unacknowledged_records_stay_acquired_and_come_back_on_the_next_poll():
    """Seed example "ending processing of the batch on an error": records after the failed one
    remain Acquired in the same delivery attempt and are presented by another poll."""
    c, sim, (a,) = setup("A", mode="explicit")
    c.cluster.produce("foo", 0, [b"a", b"b", b"c", b"d"])
    records = a.poll()
    a.acknowledge(records[0], AcknowledgeType.ACCEPT)
    a.acknowledge(records[1], AcknowledgeType.REJECT)
    again = a.poll()                              # commits those two, presents the rest again
    assert [(r.offset, r.delivery_count) for r in again] == [(2, 1), (3, 1)]
    assert states(c) == {2: ("Acquired", 1), 3: ("Acquired", 1)}
    assert leader(c).spso == 2



def test_explicit_unacknowledged_records_are_presented_again_only_while_their_lock_holds():
    """The ShareFetch response gives the lock duration (AcquisitionLockTimeoutMs): until it
    elapses, unacknowledged records come back as the same delivery attempt without a fetch."""
    c, sim, (a,) = setup("A", mode="explicit")
    c.cluster.produce("foo", 0, [b"x"] * 3)
    a.poll()
    assert a.acquisition_lock_timeout_ms == LOCK_MS
    fetches = sum(1 for _, api, *_ in a.exchanges if api == "ShareFetch")
    c.advance(LOCK_MS - 1)
    assert [(r.offset, r.delivery_count) for r in a.poll()] == [(0, 1), (1, 1), (2, 1)]
    assert sum(1 for _, api, *_ in a.exchanges if api == "ShareFetch") == fetches   # no new fetch
    assert a.lapsed == [] and states(c) == {o: ("Acquired", 1) for o in range(3)}


def test_explicit_records_whose_lock_elapsed_are_dropped_and_fetched_anew():
    """After the lock elapses the leader makes the records Available again: the consumer no
    longer holds them, so its next poll drops them and fetches (delivery count 2) instead of
    presenting records it cannot acknowledge (they would get INVALID_RECORD_STATE)."""
    c, sim, (a,) = setup("A", mode="explicit")
    c.cluster.produce("foo", 0, [b"x"] * 3)
    first = a.poll()
    c.advance(LOCK_MS)                                # the leader's lock timer fires
    assert states(c) == {o: ("Available", 1) for o in range(3)}
    assert a.held() == []                             # the consumer knows its lock is over
    again = a.poll()
    assert a.lapsed == first
    assert [(r.offset, r.delivery_count) for r in again] == [(0, 2), (1, 2), (2, 2)]
    assert states(c) == {o: ("Acquired", 2) for o in range(3)}
    for r in again:
        a.acknowledge(r, AcknowledgeType.ACCEPT)
    assert a.commit_sync() == {("foo", 0): ErrorCode.none}
    assert leader(c).spso == 3 and a.errors == []


def test_an_acknowledgement_refused_for_a_lapsed_lock_drops_its_records():
    """An acknowledgement sent after the lock elapsed gets INVALID_RECORD_STATE and its records
    are no longer the consumer's: the next poll fetches them again."""
    c, sim, (a,) = setup("A", mode="explicit")
    c.cluster.produce("foo", 0, [b"x"] * 2)
    records = a.poll()
    a.acknowledge(records[0], AcknowledgeType.ACCEPT)  # noted, not yet sent
    c.advance(LOCK_MS + 1)
    assert a.commit_sync() == {("foo", 0): ErrorCode.invalid_record_state}
    assert (("foo", 0), 0) not in a.in_flight
    assert [(r.offset, r.delivery_count) for r in a.poll()] == [(0, 2), (1, 2)]
    assert [r.offset for r in a.lapsed] == [1]

def test_a_crashed_consumers_records_come_back_to_another_with_delivery_count_2():
    """Seed "Ordering": the first consumer fetches and crashes, the second processes later
    records, then gets the first one's records with their delivery counts set to 2."""
    c, sim, (a, b) = setup("A", "B")
    c.cluster.produce("foo", 0, [b"first"] * 10)
    got_a = a.poll()
    assert [r.offset for r in got_a] == list(range(10))
    a.crash()
    c.cluster.produce("foo", 0, [b"second"] * 10)
    got_b = b.poll()
    assert [r.offset for r in got_b] == list(range(10, 20))
    b.poll()                                      # acknowledges 10-19
    sim.run(LOCK_MS + 1_000)                      # A's acquisition lock elapses
    redelivered = [r for r in b.delivered if r.offset < 10]
    assert [(r.offset, r.delivery_count) for r in redelivered] == [(o, 2) for o in range(10)]


def test_a_poison_message_is_archived_at_the_delivery_count_limit():
    """Seed: released records go back to Available until the delivery count reaches
    group.share.delivery.count.limit (5), then they are Archived."""
    deliveries: list[int] = []

    def handler(r):
        if r.value == b"poison":
            deliveries.append(r.delivery_count)
            return AcknowledgeType.RELEASE
        return AcknowledgeType.ACCEPT

    c, sim, (a,) = setup("A", mode="explicit", handler=handler)
    c.cluster.produce("foo", 0, [b"ok", b"poison", b"ok"])
    sim.run(5_000)
    assert deliveries == [1, 2, 3, 4, 5]
    assert leader(c).spso == 3 and leader(c).records() == []


def test_close_commits_what_is_pending_and_releases_the_rest():
    """Seed: close() commits pending acknowledgements and releases the remaining acquired records."""
    c, sim, (a, b) = setup("A", "B", mode="explicit")
    c.cluster.produce("foo", 0, [b"x"] * 4)
    records = a.poll()
    a.acknowledge(records[0], AcknowledgeType.ACCEPT)
    a.close()
    assert states(c) == {1: ("Available", 1), 2: ("Available", 1), 3: ("Available", 1)}
    assert a.member_id not in c.groups["myshare"].members
    assert [(r.offset, r.delivery_count) for r in b.poll()] == [(1, 2), (2, 2), (3, 2)]


def test_a_slow_consumer_loses_its_lock_and_its_late_acknowledgement_is_refused():
    """Seed: the lock is released once the duration has elapsed and the record is delivered
    again; acknowledging a record now acquired by another member gets INVALID_RECORD_STATE
    (Kafka's SharePartition.acknowledge: the record must be Acquired by the same member)."""
    c, sim, (slow, other) = setup("slow", "other", mode="explicit")
    c.cluster.produce("foo", 0, [b"x"] * 3)
    slow.processing_ms_per_record = 15_000        # 3 records: 45 s, past the 30 s lock
    held = slow.poll()
    assert len(held) == 3
    sim.run(LOCK_MS + 500)                        # `other` holds them now (explicit, unacknowledged)
    assert [(r.offset, r.delivery_count) for r in other.delivered] == [(0, 2), (1, 2), (2, 2)]
    for r in held:
        slow.acknowledge(r, AcknowledgeType.ACCEPT)
    assert slow.commit_sync() == {("foo", 0): ErrorCode.invalid_record_state}
    assert states(c) == {0: ("Acquired", 2), 1: ("Acquired", 2), 2: ("Acquired", 2)}


def test_leaving_and_rejoining_after_a_session_timeout():
    """Seed "Heartbeat and session": a member that misses its heartbeats is removed; it learns
    on its next heartbeat (UNKNOWN_MEMBER_ID) and rejoins."""
    c, sim, (a,) = setup("A")
    group = c.groups["myshare"]
    c.advance(60_000)                             # no heartbeats: the session times out
    assert a.member_id not in group.members
    sim.run(1_000)
    assert any(code is ErrorCode.unknown_member_id for _, _, code in a.errors)
    assert a.member_id in c.groups["myshare"].members and a.member_epoch > 0


def test_acknowledge_rejects_records_not_returned_by_the_last_poll():
    c, sim, (a,) = setup("A", mode="explicit")
    c.cluster.produce("foo", 0, [b"x"])
    (r,) = a.poll()
    a.acknowledge(r)
    with pytest.raises(ValueError, match="not returned by the last poll"):
        a.acknowledge(r)
    with pytest.raises(ValueError, match="GAP"):
        a.acknowledge(r, AcknowledgeType.GAP)


def test_reload_from_both_logs_keeps_the_durable_state():
    """KIP-932 "Managing durable share-partition state": a new coordinator from both logs
    knows the SPSO and the records' states, and delivers the rest with their counts."""
    c, sim, (a,) = setup("A", mode="explicit")
    c.cluster.produce("foo", 0, [b"x"] * 4)
    records = a.poll()
    a.acknowledge(records[0], AcknowledgeType.ACCEPT)
    a.acknowledge(records[2], AcknowledgeType.RELEASE)
    a.commit_sync()
    reloaded = Coordinator.load(c.log, share_state_log=c.share_state_log, cluster=c.cluster)
    sp = share_partition(reloaded, "myshare", c.cluster.topic_id("foo"), 0)
    # Acquired (1, 3) is never persisted, nor their delivery counts ("maintained approximately"):
    # the new leader knows the SPSO, and record 2's failed delivery; 1 and 3 look never delivered.
    assert sp.spso == 1
    assert {v.offset: (v.state, v.delivery_count) for v in sp.records()} == {1: ("Available", 0), 2: ("Available", 1)}
