"""The share-partition leader: the in-flight records of one share-partition (KIP-932).

A share-partition is (group, topic id, partition). Its leader keeps, in memory, the records
between the share-partition start offset (SPSO) and the share-partition end offset (SPEO):
their state (Available, Acquired, Acknowledged, Archived), delivery count and, while
Acquired, the acquisition lock (holder and deadline). This is *soft state*: what must
survive a leader move is written through the `Persister` (the share coordinator), Acquired
never, and a new leader rebuilds the rest from `Persister.read_state`.

The state transitions are the KIP's diagram:

    Available --acquired (delivery count++)--> Acquired
    Acquired --accepted--> Acknowledged
    Acquired --released / lock elapsed, count < limit--> Available
    Acquired --released / lock elapsed at the limit, or rejected (or a gap)--> Archived
    Acknowledged --SPSO moves past--> Archived

As Kafka's SharePartition keeps `InFlightBatch`es, the state is kept per batch (one fetched
record batch moves together: one state, one count, one lock) and becomes per offset only
when a batch is acknowledged, released or expired in parts, so the common case costs per
batch. The cache always covers [SPSO, next offset) without holes.

The registry of leaders is soft state too: `c.soft_state[LEADERS]`, see `leaders(c)`.
"""
from __future__ import annotations

import bisect
import inspect
import itertools
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kgroup.cluster import StoredBatch
from kgroup.errors import ErrorCode
from kgroup.group_configs import group_config, group_override, parse_duration_ms
from kgroup.groups.share.persister import DeliveryState, PartitionState, Persister, StateBatch
from kgroup.runtime import on_leader_change

if TYPE_CHECKING:
    from kgroup.coordinator import Coordinator

#: Record states (Kafka's RecordState ids; Acquired is never persisted).
AVAILABLE, ACQUIRED, ACKNOWLEDGED, ARCHIVED = 0, 1, 2, 4
STATE_NAMES = {AVAILABLE: "Available", ACQUIRED: "Acquired", ACKNOWLEDGED: "Acknowledged", ARCHIVED: "Archived"}
#: Acknowledgement types on the wire (ShareFetch/ShareAcknowledge v1+).
GAP, ACCEPT, RELEASE, REJECT = 0, 1, 2, 3
#: what each acknowledgement type moves a record to (Kafka's SharePartition.fetchRecordState);
#: RELEASE becomes ARCHIVED instead once the delivery count reached the limit
_ACK_TARGET = {GAP: ARCHIVED, ACCEPT: ACKNOWLEDGED, RELEASE: AVAILABLE, REJECT: ARCHIVED}
_DELIVERY_STATE = {AVAILABLE: DeliveryState.AVAILABLE, ACKNOWLEDGED: DeliveryState.ACKNOWLEDGED,
                   ARCHIVED: DeliveryState.ARCHIVED}

#: the key of the leaders' registry in `Coordinator.soft_state`
LEADERS = "share.partitions"


class ShareStateError(Exception):
    """An operation on a share-partition failed with a Kafka error code (caught by handlers)."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class AcquisitionLock:
    """One acquisition: the records handed to one member by one fetch, with one deadline and
    one timer. `held` counts its records still Acquired; at 0 the timer is cancelled."""

    __slots__ = ("lock_id", "member_id", "deadline", "first", "last", "held", "timer")

    def __init__(self, lock_id: int, member_id: str, deadline: int, timer: str) -> None:
        self.lock_id = lock_id
        self.member_id = member_id
        self.deadline = deadline
        self.first = -1
        self.last = -1
        self.held = 0
        self.timer = timer

    def __repr__(self) -> str:
        return f"AcquisitionLock({self.member_id}, {self.first}-{self.last}, deadline={self.deadline}, held={self.held})"


class InFlightBatch:
    """A run of in-flight offsets. Batch-level (`states is None`: one state, delivery count and
    lock for all) or per offset (`states`, `counts`, `locks` indexed by offset - first)."""

    __slots__ = ("first", "last", "state", "count", "lock", "states", "counts", "locks")

    def __init__(self, first: int, last: int, state: int, count: int, lock: AcquisitionLock | None = None) -> None:
        self.first = first
        self.last = last
        self.state = state
        self.count = count
        self.lock = lock
        self.states: list[int] | None = None
        self.counts: list[int] | None = None
        self.locks: list[AcquisitionLock | None] | None = None

    def explode(self) -> None:
        """Keep state per offset from now on (a part of the batch moves alone)."""
        if self.states is None:
            n = self.last - self.first + 1
            self.states = [self.state] * n
            self.counts = [self.count] * n
            self.locks = [self.lock] * n

    def cut_before(self, offset: int) -> None:
        """Drop the offsets below `offset` (the SPSO moved into this batch)."""
        self.explode()
        k = offset - self.first
        del self.states[:k], self.counts[:k], self.locks[:k]  # type: ignore[index]
        self.first = offset

    def record(self, offset: int) -> tuple[int, int, AcquisitionLock | None]:
        if self.states is None:
            return self.state, self.count, self.lock
        i = offset - self.first
        return self.states[i], self.counts[i], self.locks[i]  # type: ignore[index]

    def __repr__(self) -> str:
        if self.states is None:
            return f"InFlightBatch({self.first}-{self.last} {STATE_NAMES[self.state]} x{self.count})"
        return f"InFlightBatch({self.first}-{self.last} per offset)"


@dataclass
class AcquiredBatches:
    """What one acquire hands to a member: the log batches holding the records, and the
    acquired ranges (first offset, last offset, delivery count), ShareFetch's AcquiredRecords."""

    batches: list["StoredBatch"] = field(default_factory=list)
    acquired: list[tuple[int, int, int]] = field(default_factory=list)

    @property
    def count(self) -> int:
        return sum(last - first + 1 for first, last, _ in self.acquired)


@dataclass(frozen=True)
class RecordView:
    """One offset as a display shows it."""

    offset: int
    state: str
    delivery_count: int
    member_id: str | None
    lock_deadline: int | None


class SharePartition:
    """The in-flight records of one share-partition, owned by its leader (soft state).

    Create through `share_partition(c, group_id, topic_id, partition)`: it loads the durable
    state first."""

    def __init__(self, c: "Coordinator", group_id: str, topic_id: uuid.UUID, partition: int,
                 persister: Persister) -> None:
        self.c = c
        self.group_id = group_id
        self.topic_id = topic_id
        self.partition = partition
        self.topic = c.cluster.topic_name(topic_id)
        self.persister = persister
        # WriteShareGroupState v1 carries the delivery-complete count (KIP-1226); a persister
        # with the draft's interface only takes the SPSO and the batches
        try:
            self._takes_complete_count = "delivery_complete_count" in inspect.signature(persister.write_state).parameters
        except (TypeError, ValueError):
            self._takes_complete_count = False
        #: the share-partition start offset
        self.spso = 0
        #: one past the last in-flight offset (where new records are read from)
        self.next_offset = 0
        self.state_epoch = 0
        self.leader_epoch = 0
        self._batches: list[InFlightBatch] = []
        self._firsts: list[int] = []
        #: Acquired records the SPSO passed that keep their lock (kafka profile)
        self._below: list[InFlightBatch] = []
        #: False once a scan found no Available record in the cache (Kafka's findNextFetchOffset)
        self._maybe_available = False
        self._lock_ids = itertools.count(1)
        self._locks: dict[int, AcquisitionLock] = {}
        #: states that changed without a write yet (transaction markers archived on acquisition)
        self._unwritten: list[StateBatch] = []
        self.loaded = False

    # -- configuration ------------------------------------------------------------
    @property
    def profile(self):
        return self.c.profile

    def delivery_count_limit(self) -> int:
        return group_config(self.c, self.group_id, "share.delivery.count.limit")

    def record_lock_limit(self) -> int:
        """The group's share.partition.max.record.locks, else group.share.partition.max.record.locks
        (the draft's group.share.record.lock.partition.limit)."""
        override = group_override(self.c, self.group_id, "share.partition.max.record.locks")
        return override if override is not None else share_setting(self.c, "group.share.partition.max.record.locks")

    def lock_duration_ms(self, member_id: str | None = None) -> int:
        """The group's lock duration, or (kip) the consumer's own within the maximum."""
        if member_id is not None and self.profile.share_consumer_lock_duration:
            own = leaders(self.c).member_lock_ms.get((self.group_id, member_id))
            if own is not None:
                return own
        return group_config(self.c, self.group_id, "share.record.lock.duration.ms")

    def read_committed(self) -> bool:
        return group_config(self.c, self.group_id, "share.isolation.level") == "read_committed"

    # -- SPSO / SPEO --------------------------------------------------------------
    @property
    def speo(self) -> int:
        """The share-partition end offset: one past the last in-flight record (kip, the KIP's
        "SPEO=110" after fetching 100-109) or the last in-flight offset, the SPSO when
        nothing is in flight (kafka, SharePartition.endOffset)."""
        if self.profile.share_speo_exclusive:
            return self.next_offset
        return self.next_offset - 1 if self.next_offset > self.spso else self.spso

    @property
    def in_flight_count(self) -> int:
        """Offsets between SPSO and SPEO (what group.share.partition.max.record.locks bounds)."""
        return self.next_offset - self.spso

    # -- loading (a new leader) ---------------------------------------------------
    def load(self) -> ErrorCode:
        """Read the durable state (`Persister.read_state`) and rebuild what the KIP says is
        recoverable: the SPSO, and the state and delivery count of Available (released),
        Acknowledged and Archived records. Records in flight but never written are
        Available again with delivery count 0; an uninitialised share-partition starts at
        share.auto.offset.reset (written at once under kip, with the first change under kafka)."""
        self._drop_in_flight()
        ps: PartitionState = self.persister.read_state(self.group_id, self.topic_id, self.partition, self.leader_epoch)
        # the share coordinator knows nothing of it yet (Kafka: INVALID_REQUEST "Read operation on
        # uninitialized share partition not allowed."; other persisters may say unknown partition)
        uninitialised = (ps.error_code == ErrorCode.unknown_topic_or_partition
                         or (ps.error_code == ErrorCode.invalid_request and "uninitialized" in (ps.error_message or "")))
        if ps.error_code != ErrorCode.none and not uninitialised:
            return ps.error_code
        self.state_epoch = ps.state_epoch
        if uninitialised or ps.start_offset < 0:
            self.spso = self.next_offset = self._auto_offset_reset()
            code = ErrorCode.none
            if uninitialised:
                code = self.persister.initialize_state(self.group_id, self.topic_id, self.partition,
                                                       self.state_epoch, self.spso)
            elif self.profile.share_reset_spso_written_at_load:
                # kip: written now, so the SPSO does not move on a restart; kafka writes it with the
                # first change, and a leader that moves before then computes it again
                code = self.persister.write_state(self.group_id, self.topic_id, self.partition, self.state_epoch,
                                                  self.leader_epoch, self.spso, ())
            if code != ErrorCode.none:
                return code
            self.loaded = True
            return ErrorCode.none
        self.spso = ps.start_offset
        pos = self.spso
        for sb in sorted(ps.state_batches, key=lambda b: b.first_offset):
            first, last = max(sb.first_offset, self.spso), sb.last_offset
            if last < first:
                continue
            if first > pos:  # a hole: never written, so Available and never delivered
                self._append(InFlightBatch(pos, first - 1, AVAILABLE, 0))
            state = int(sb.delivery_state)
            if state == ACQUIRED:  # never persisted; tolerate it as Available
                state = AVAILABLE
            self._append(InFlightBatch(first, last, state, sb.delivery_count))
            pos = last + 1
        self.next_offset = pos
        self._maybe_available = True
        self.loaded = True
        # leading Acknowledged/Archived records are below the SPSO by definition
        self._advance_spso()
        return ErrorCode.none

    def _auto_offset_reset(self) -> int:
        """The SPSO of a new share-partition: share.auto.offset.reset (latest, earliest,
        by_duration:<ISO-8601>)."""
        cluster = self.c.cluster
        how = group_config(self.c, self.group_id, "share.auto.offset.reset")
        if how == "earliest":
            return cluster.log_start_offset(self.topic, self.partition)
        if how.startswith("by_duration:"):
            ts = self.c.now() - parse_duration_ms(how[len("by_duration:"):])
            return cluster.offset_for_timestamp(self.topic, self.partition, ts)
        return cluster.end_offset(self.topic, self.partition)

    def _drop_in_flight(self) -> None:
        """Forget every in-flight record and cancel every lock timer (soft state only)."""
        for lock in self._locks.values():
            self.c.timers.cancel(lock.timer)
        self._locks.clear()
        self._batches.clear()
        self._firsts.clear()
        self._below.clear()
        self._unwritten.clear()
        self._maybe_available = False
        self.loaded = False

    def _append(self, b: InFlightBatch) -> None:
        self._batches.append(b)
        self._firsts.append(b.first)

    # -- acquire (ShareFetch) -----------------------------------------------------
    def acquire(self, member_id: str, max_records: int = 500, *, record_limit: bool = False) -> AcquiredBatches:
        """Acquire Available records for `member_id`: first those already in flight (released
        or expired, re-delivered), then new records read from the log past the SPEO, whole
        batches (`max_records` may be exceeded to keep a batch whole, unless `record_limit`:
        ShareFetch v2's record-limit acquire mode). Each acquired record's delivery count goes
        up by one and it is locked for the lock duration. New records stop at
        group.share.partition.max.record.locks in flight."""
        self._follow_log_start()
        out = AcquiredBatches()
        if max_records <= 0:
            return out
        c = self.c
        now = c.now()
        lock: AcquisitionLock | None = None
        n = 0
        acquired = out.acquired
        if self._maybe_available:
            complete = True
            for b in self._batches:
                if n >= max_records:
                    complete = False
                    break
                if b.states is None and record_limit and b.state == AVAILABLE and n + b.last - b.first + 1 > max_records:
                    b.explode()  # only part of this batch fits: per offset from now on
                if b.states is None:
                    if b.state == AVAILABLE:
                        if lock is None:
                            lock = self._new_lock(member_id, now)
                        b.state = ACQUIRED
                        b.count += 1
                        b.lock = lock
                        _add_range(acquired, b.first, b.last, b.count)
                        n += b.last - b.first + 1
                    continue
                states, counts, locks = b.states, b.counts, b.locks
                for i, st in enumerate(states):
                    if st == AVAILABLE and n < max_records:
                        if lock is None:
                            lock = self._new_lock(member_id, now)
                        states[i] = ACQUIRED
                        counts[i] += 1  # type: ignore[index]
                        locks[i] = lock  # type: ignore[index]
                        n += 1
                        off = b.first + i
                        _add_range(acquired, off, off, counts[i])  # type: ignore[index]
                    elif st == AVAILABLE:
                        complete = False
            if complete:
                self._maybe_available = False
            if acquired:
                # one read over the span, keeping the batches that hold an acquired offset
                k = 0
                for sb in c.cluster.read(self.topic, self.partition, acquired[0][0], max_offset=acquired[-1][1] + 1):
                    while k < len(acquired) and acquired[k][1] < sb.base_offset:
                        k += 1
                    if k < len(acquired) and acquired[k][0] <= sb.last_offset:
                        out.batches.append(sb)
        limit = self.record_lock_limit()
        read_committed = self.read_committed()
        while n < max_records and self.next_offset - self.spso < limit:
            want = min(max_records - n, limit - (self.next_offset - self.spso))
            read = c.cluster.read(self.topic, self.partition, self.next_offset, read_committed=read_committed,
                                  max_records=want)
            if not read:
                break
            for sb in read:
                if n >= max_records or self.next_offset - self.spso >= limit:
                    break
                first = max(sb.base_offset, self.next_offset)
                last = sb.last_offset
                if record_limit and not sb.control and n + last - first + 1 > max_records:
                    last = first + max_records - n - 1  # the rest of the batch is read again next time
                if sb.control or (read_committed and sb.transactional and sb.committed is False):
                    # transaction markers are no records for a consumer; under read_committed
                    # aborted records are never delivered (Kafka archives them on acquisition)
                    self._append(InFlightBatch(first, last, ARCHIVED, 0))
                    self._unwritten.append(StateBatch(first, last, DeliveryState.ARCHIVED, 0))
                    self.next_offset = last + 1
                    continue
                if lock is None:
                    lock = self._new_lock(member_id, now)
                self._append(InFlightBatch(first, last, ACQUIRED, 1, lock))
                _add_range(acquired, first, last, 1)
                n += last - first + 1
                self.next_offset = last + 1
                out.batches.append(sb)
            self._advance_spso()  # archived markers at the front
        if lock is not None:
            lock.first = acquired[0][0]
            lock.last = acquired[-1][1]
            lock.held = n
            c.timers.schedule(lock.timer, lock.deadline, lambda lk=lock: self._expire(lk))
        return out

    def _new_lock(self, member_id: str, now: int) -> AcquisitionLock:
        lock_id = next(self._lock_ids)
        lock = AcquisitionLock(lock_id, member_id, now + self.lock_duration_ms(member_id),
                               f"share-lock/{self.group_id}/{self.topic_id}/{self.partition}/{lock_id}")
        self._locks[lock_id] = lock
        return lock

    # -- acknowledge (ShareAcknowledge, ShareFetch piggy-back) --------------------
    def acknowledge(self, member_id: str, batches: list[tuple[int, int, tuple[int, ...]]]) -> tuple[ErrorCode, str | None]:
        """Apply `member_id`'s acknowledgements atomically: (first offset, last offset,
        acknowledge types) per batch, types one for the whole range or one per offset
        (0 gap, 1 accept, 2 release, 3 reject). Every record must be Acquired by the member,
        else INVALID_RECORD_STATE and nothing changes; offsets past the in-flight records are
        INVALID_REQUEST (Kafka's SharePartition.acknowledge). Offsets below the SPSO are skipped
        where a batch reaches above it, INVALID_RECORD_STATE where none of it is held any more.
        Then the SPSO moves past leading Acknowledged/Archived records and the changed states
        are written; if the write fails, nothing changed."""
        try:
            plan = self._plan_acknowledge(member_id, batches)
        except ShareStateError as e:
            return e.code, e.message
        return self._commit(plan)

    def _plan_acknowledge(self, member_id: str, batches: list[tuple[int, int, tuple[int, ...]]]) -> list[tuple]:
        """Validate every acknowledgement before any change (atomic per share-partition).
        Returns [(InFlightBatch, first, last, types, types_base)] to apply."""
        plan = []
        below = self._below
        cache = self._batches
        nb = len(cache)
        spso = self.spso
        cache_last = cache[-1].last if cache else -1
        prev_last = -1
        i = -1  # the in-flight batch the previous acknowledgement ended in (they come in order)
        for first, last, types in batches:
            if first > last or first <= prev_last:
                raise ShareStateError(ErrorCode.invalid_request, "Acknowledgement batches must be ordered and disjoint.")
            prev_last = last
            if last < spso:
                # Kafka's SharePartition.fetchSubMapForAcknowledgementBatch: offsets the cache no
                # longer holds (the SPSO moved past them) cannot be acknowledged any more.
                if not any(b.first <= last and first <= b.last for b in below):
                    raise ShareStateError(ErrorCode.invalid_record_state,
                                          "Batch record not found. The request batch offsets are not found in the cache.")
                plan.append((None, first, last, types, first))
                continue
            if not cache:
                raise ShareStateError(ErrorCode.invalid_record_state,
                                      "Batch record not found. The request batch offsets are not found in the cache.")
            if first > cache_last:
                raise ShareStateError(ErrorCode.invalid_request,
                                      "Batch record not found. The first offset in request is past acquired records.")
            if last > cache_last:
                raise ShareStateError(ErrorCode.invalid_request,
                                      "Batch record not found. The last offset in request is past acquired records.")
            lo = first if first > spso else spso
            if i < 0:
                i = bisect.bisect_right(self._firsts, lo) - 1
            while cache[i].last < lo:
                i += 1
            while True:
                b = cache[i]
                a = lo if lo > b.first else b.first
                z = last if last < b.last else b.last
                if b.states is None:
                    if b.state != ACQUIRED or b.lock is None:
                        raise ShareStateError(ErrorCode.invalid_record_state,
                                              "The batch cannot be acknowledged. The batch is not in the acquired state.")
                    if b.lock.member_id != member_id:
                        raise ShareStateError(ErrorCode.invalid_record_state, "Member is not the owner of batch record")
                else:
                    states, locks = b.states, b.locks
                    for k in range(a - b.first, z - b.first + 1):
                        if states[k] != ACQUIRED:
                            raise ShareStateError(ErrorCode.invalid_record_state,
                                                  "The batch cannot be acknowledged. The offset is not acquired.")
                        if locks[k].member_id != member_id:  # type: ignore[index,union-attr]
                            raise ShareStateError(ErrorCode.invalid_record_state, "Member is not the owner of offset")
                plan.append((b, a, z, types, first))
                if b.last >= last or i + 1 >= nb:
                    break
                i += 1
            if below and first < spso:
                plan.append((None, first, min(last, spso - 1), types, first))
        return plan

    def _commit(self, plan: list[tuple]) -> tuple[ErrorCode, str | None]:
        limit = self.delivery_count_limit()
        undo: list[tuple] = []
        last_saved: InFlightBatch | None = None
        released_locks: dict[AcquisitionLock, int] = {}
        runs: list[list[int]] = []  # changed [first, last, state, count], joined when contiguous and alike
        dropped_below: list[tuple[int, int]] = []
        for b, a, z, types, base in plan:
            if b is None:
                dropped_below.append((a, z))
                continue
            single = len(types) == 1
            if single and b.states is None and a == b.first and z == b.last:
                # the common case: the whole in-flight batch moves together
                undo.append((b, b.state, b.count, b.lock, None))
                target = _ACK_TARGET[types[0]]
                if target == AVAILABLE:
                    if b.count >= limit:
                        target = ARCHIVED
                    else:
                        self._maybe_available = True
                released_locks[b.lock] = released_locks.get(b.lock, 0) + (z - a + 1)  # type: ignore[index]
                b.state = target
                b.lock = None
                if runs and runs[-1][1] == a - 1 and runs[-1][2] == target and runs[-1][3] == b.count:
                    runs[-1][1] = z
                else:
                    runs.append([a, z, target, b.count])
                continue
            if b is not last_saved:  # one snapshot per batch, however many acknowledgements touch it
                undo.append((b, b.state, b.count, b.lock,
                             None if b.states is None else (b.states[:], b.counts[:], b.locks[:])))  # type: ignore[index]
                last_saved = b
            b.explode()
            states, counts, locks = b.states, b.counts, b.locks
            bfirst = b.first
            t0 = _ACK_TARGET[types[0]]
            for off in range(a, z + 1):
                k = off - bfirst
                t = t0 if single else _ACK_TARGET[types[off - base]]
                cnt = counts[k]  # type: ignore[index]
                if t == AVAILABLE:
                    if cnt >= limit:
                        t = ARCHIVED
                    else:
                        self._maybe_available = True
                lk = locks[k]  # type: ignore[index]
                released_locks[lk] = released_locks.get(lk, 0) + 1  # type: ignore[index]
                states[k] = t  # type: ignore[index]
                locks[k] = None  # type: ignore[index]
                if runs:
                    r = runs[-1]
                    if r[1] == off - 1 and r[2] == t and r[3] == cnt:
                        r[1] = off
                        continue
                runs.append([off, off, t, cnt])
        changed = [StateBatch(a, z, _DELIVERY_STATE[t], n) for a, z, t, n in runs]
        saved = (self.spso, list(self._batches), list(self._firsts))
        head = self._batches[0] if self._batches else None
        head_saved = None if head is None or head.states is None else (head.first, head.states[:], head.counts[:],
                                                                       head.locks[:])  # type: ignore[index]
        head_first = head.first if head is not None else 0
        carries_new_spso = self.profile.share_ack_write_carries_new_spso
        if carries_new_spso:
            self._advance_spso()
        code = self._write(changed)
        if code != ErrorCode.none:
            # roll back: the acknowledgement did not happen (Kafka's rollbackOrProcessStateUpdates)
            self.spso, self._batches, self._firsts = saved
            if head is not None:
                head.first = head_first
                if head_saved is not None:
                    head.states, head.counts, head.locks = head_saved[1], head_saved[2], head_saved[3]
            for b, state, count, lock, per in reversed(undo):
                b.state, b.count, b.lock = state, count, lock
                if per is None:
                    b.states = b.counts = b.locks = None
                else:
                    b.states, b.counts, b.locks = per
            if code == ErrorCode.fenced_state_epoch:
                self.load()  # an admin reset: drop the in-flight state and read it again
            return code, None
        if not carries_new_spso:
            # Kafka moves the SPSO once the write succeeded: the next write carries it
            self._advance_spso()
        for lock, k in released_locks.items():
            self._release_lock(lock, k)
        for a, z in dropped_below:
            self._drop_below(a, z)
        return ErrorCode.none, None

    def _release_lock(self, lock: AcquisitionLock, k: int) -> None:
        lock.held -= k
        if lock.held <= 0:
            self.c.timers.cancel(lock.timer)
            self._locks.pop(lock.lock_id, None)

    def _drop_below(self, first: int, last: int) -> None:
        """Acquired records below the SPSO (kafka profile) acknowledged: they leave."""
        keep = []
        for b in self._below:
            if b.last < first or b.first > last:
                keep.append(b)
                continue
            self._release_lock(b.lock, b.last - b.first + 1)  # type: ignore[arg-type]
        self._below = keep

    # -- SPSO movement ------------------------------------------------------------
    def _advance_spso(self) -> None:
        """Move the SPSO past leading Acknowledged/Archived records; batches it passes leave
        the cache (Acknowledged becomes Archived: the diagram's "SPSO moves past record")."""
        batches = self._batches
        drop = 0
        spso = self.spso
        for b in batches:
            if b.states is None:
                if b.state == ACKNOWLEDGED or b.state == ARCHIVED:
                    drop += 1
                    spso = b.last + 1
                    continue
                break
            states = b.states
            k = spso - b.first
            while k < len(states) and (states[k] == ACKNOWLEDGED or states[k] == ARCHIVED):
                k += 1
            if k == len(states):
                drop += 1
                spso = b.last + 1
                continue
            spso = b.first + k
            break
        if drop:
            del batches[:drop]
            del self._firsts[:drop]
        if batches and batches[0].first < spso:
            batches[0].cut_before(spso)
            self._firsts[0] = spso
        if spso > self.spso:
            self.spso = spso
        if not batches and self.next_offset < self.spso:
            self.next_offset = self.spso

    def _follow_log_start(self) -> None:
        """The log start offset moved past the SPSO (DeleteRecords, retention): the SPSO
        follows it. Available and Acknowledged records below it are archived; Acquired ones
        are archived too (kip: "All records before the SPSO are in Archived state") or keep
        their lock until acknowledged or expired (kafka)."""
        lso = self.c.cluster.log_start_offset(self.topic, self.partition)
        if lso <= self.spso:
            return
        keep_locks = not self.profile.share_archive_acquired_below_spso
        for b in self._batches:
            if b.first >= lso:
                break
            for off in range(b.first, min(b.last, lso - 1) + 1):
                state, _, lock = b.record(off)
                if state == ACQUIRED:
                    if keep_locks:
                        kept = InFlightBatch(off, off, ACQUIRED, b.record(off)[1], lock)
                        if self._below and self._below[-1].last == off - 1 and self._below[-1].lock is lock:
                            self._below[-1].last = off
                        else:
                            self._below.append(kept)
                    else:
                        self._release_lock(lock, 1)  # type: ignore[arg-type]
        while self._batches and self._batches[0].last < lso:
            self._batches.pop(0)
            self._firsts.pop(0)
        if self._batches and self._batches[0].first < lso:
            self._batches[0].cut_before(lso)
            self._firsts[0] = lso
        self.spso = lso
        if self.next_offset < lso:
            self.next_offset = lso
        self._advance_spso()
        self._write([])

    # -- lock expiry and release ----------------------------------------------------
    def _expire(self, lock: AcquisitionLock) -> None:
        """The acquisition lock elapsed: its records still Acquired go back to Available, or
        to Archived at the delivery count limit (timer callback; soft state, no records)."""
        if lock.held <= 0 or self._locks.get(lock.lock_id) is not lock:
            return
        self._drop_locks([lock], lambda lk: lk is lock, lock.first, lock.last)
        return None

    def release_member(self, member_id: str) -> ErrorCode:
        """Release every record `member_id` holds (its share session closed): Available again,
        or Archived at the delivery count limit (Kafka's SharePartition.releaseAcquiredRecords)."""
        mine = [lk for lk in self._locks.values() if lk.member_id == member_id]
        if not mine:
            return ErrorCode.none
        for lk in mine:
            self.c.timers.cancel(lk.timer)
        ids = {lk.lock_id for lk in mine}
        return self._drop_locks(mine, lambda lk: lk is not None and lk.lock_id in ids,
                                min(lk.first for lk in mine), max(lk.last for lk in mine))

    def _drop_locks(self, locks: list[AcquisitionLock], match, first: int, last: int) -> ErrorCode:
        """Release what `locks` hold between `first` and `last` (`match` picks their records), forget
        the locks, move the SPSO and write the change; a fenced write reloads the durable state."""
        ids = {lk.lock_id for lk in locks}
        if self._below:
            self._below = [b for b in self._below if b.lock is None or b.lock.lock_id not in ids]
        changed = self._release_where(match, first, last)
        for lk in locks:
            lk.held = 0
            self._locks.pop(lk.lock_id, None)
        self._advance_spso()
        code = self._write(changed)
        if code == ErrorCode.fenced_state_epoch:
            self.load()
        return code

    def _release_where(self, match, first: int, last: int) -> list[StateBatch]:
        limit = self.delivery_count_limit()
        changed: list[StateBatch] = []
        i = max(bisect.bisect_right(self._firsts, first) - 1, 0)
        while i < len(self._batches):
            b = self._batches[i]
            i += 1
            if b.first > last:
                break
            if b.states is None:
                if b.state == ACQUIRED and match(b.lock):
                    b.state = ARCHIVED if b.count >= limit else AVAILABLE
                    b.lock = None
                    if b.state == AVAILABLE:
                        self._maybe_available = True
                    changed.append(StateBatch(b.first, b.last, _DELIVERY_STATE[b.state], b.count))
                continue
            states, counts, locks = b.states, b.counts, b.locks
            for k, st in enumerate(states):
                if st == ACQUIRED and match(locks[k]):  # type: ignore[index]
                    t = ARCHIVED if counts[k] >= limit else AVAILABLE  # type: ignore[index]
                    states[k] = t
                    locks[k] = None  # type: ignore[index]
                    if t == AVAILABLE:
                        self._maybe_available = True
                    off = b.first + k
                    prev = changed[-1] if changed else None
                    if (prev is not None and prev.last_offset == off - 1 and prev.delivery_state == _DELIVERY_STATE[t]
                            and prev.delivery_count == counts[k]):  # type: ignore[index]
                        changed[-1] = StateBatch(prev.first_offset, off, prev.delivery_state, prev.delivery_count)
                    else:
                        changed.append(StateBatch(off, off, _DELIVERY_STATE[t], counts[k]))  # type: ignore[index]
        return changed

    # -- persistence ----------------------------------------------------------------
    def _write(self, changed: list[StateBatch]) -> ErrorCode:
        """WriteShareGroupState: the SPSO and the state batches that changed at or above it
        (below it everything is Archived by definition)."""
        spso = self.spso
        if self._unwritten:
            changed = sorted(self._unwritten + changed, key=lambda sb: sb.first_offset)
        if changed and changed[0].first_offset < spso:
            changed = [sb if sb.first_offset >= spso else StateBatch(spso, sb.last_offset, sb.delivery_state,
                                                                       sb.delivery_count)
                       for sb in changed if sb.last_offset >= spso]
        if self._takes_complete_count:
            code = self.persister.write_state(self.group_id, self.topic_id, self.partition, self.state_epoch,
                                              self.leader_epoch, spso, tuple(changed),
                                              delivery_complete_count=self.delivery_complete_count())
        else:
            code = self.persister.write_state(self.group_id, self.topic_id, self.partition, self.state_epoch,
                                              self.leader_epoch, spso, tuple(changed))
        if code == ErrorCode.none:
            self._unwritten.clear()
        return code

    def delivery_complete_count(self) -> int:
        """In-flight records whose delivery is complete (Acknowledged or Archived) at or above
        the SPSO: what KIP-1226's lag leaves out (lag = high watermark - SPSO - this)."""
        n = 0
        for b in self._batches:
            if b.states is None:
                if b.state == ACKNOWLEDGED or b.state == ARCHIVED:
                    n += b.last - b.first + 1
            else:
                n += b.states.count(ACKNOWLEDGED) + b.states.count(ARCHIVED)
        return n

    # -- display ----------------------------------------------------------------------
    def records(self, first: int | None = None, last: int | None = None) -> list[RecordView]:
        """Per-offset state, delivery count, lock holder and lock deadline, for display:
        the in-flight records (and, kafka profile, Acquired ones the SPSO passed). Offsets
        below the SPSO are Archived and after the SPEO Available; they are not listed."""
        out = []
        for b in self._below + self._batches:
            for off in range(b.first, b.last + 1):
                if (first is not None and off < first) or (last is not None and off > last):
                    continue
                state, count, lock = b.record(off)
                out.append(RecordView(off, STATE_NAMES[state], count, lock.member_id if lock else None,
                                      lock.deadline if lock else None))
        return out

    def strip(self, first: int, last: int) -> list[RecordView]:
        """Every offset from `first` to `last` as the KIP's in-flight example draws them:
        Archived below the SPSO (unless still Acquired, kafka profile), the in-flight records,
        Available past the SPEO (up to the log end offset; nothing beyond it)."""
        known = {v.offset: v for v in self.records(first, last)}
        end = self.c.cluster.end_offset(self.topic, self.partition)
        out = []
        for off in range(first, min(last, end - 1) + 1):
            v = known.get(off)
            if v is None:
                v = RecordView(off, "Archived" if off < self.spso else "Available", 0, None, None)
            out.append(v)
        return out

    def in_flight_batches(self) -> list[InFlightBatch]:
        """The cache as it is kept (batch-level or per-offset batches), SPSO to SPEO."""
        return list(self._batches)

    def locks(self) -> list[AcquisitionLock]:
        """The acquisition locks holding records now."""
        return list(self._locks.values())

    def state_batches(self) -> list[StateBatch]:
        """The in-flight state as the durable state would hold it (Acquired records appear
        as Available with their count: what a new leader would rebuild)."""
        out: list[StateBatch] = []
        for v in self.records():
            if v.offset < self.spso:
                continue
            st = _DELIVERY_STATE[AVAILABLE if v.state == "Acquired" else
                                 {"Available": AVAILABLE, "Acknowledged": ACKNOWLEDGED, "Archived": ARCHIVED}[v.state]]
            if out and out[-1].last_offset == v.offset - 1 and out[-1].delivery_state == st \
                    and out[-1].delivery_count == v.delivery_count:
                out[-1] = StateBatch(out[-1].first_offset, v.offset, st, v.delivery_count)
            else:
                out.append(StateBatch(v.offset, v.offset, st, v.delivery_count))
        return out

    def __repr__(self) -> str:
        return (f"SharePartition({self.group_id!r}, {self.topic}-{self.partition}, SPSO={self.spso}, "
                f"SPEO={self.speo}, {len(self._batches)} in-flight batches, {len(self._locks)} locks)")


def _add_range(acquired: list[tuple[int, int, int]], first: int, last: int, count: int) -> None:
    """Add an acquired range, joining it to the previous one when contiguous with the same
    delivery count (one AcquiredRecords entry, as Kafka's acquire returns new records)."""
    if acquired:
        a, z, n = acquired[-1]
        if z == first - 1 and n == count:
            acquired[-1] = (a, last, count)
            return
    acquired.append((first, last, count))


#: the draft's defaults (profile flag share_draft_defaults) where Kafka's differ
DRAFT_DEFAULTS = {"group.share.partition.max.record.locks": 200, "group.share.max.share.sessions": 1000}


def share_setting(c: "Coordinator", name: str) -> int:
    """A share setting: as configured (under either name), else the draft's default under
    the kip profile, Kafka's otherwise."""
    if c.profile.share_draft_defaults and name in DRAFT_DEFAULTS:
        from kgroup.config import ALIASES
        if not any(ALIASES.get(k, k) == name for k in c.config.overrides):
            return DRAFT_DEFAULTS[name]
    return c.config[name]


# -- the registry of leaders (soft state) ---------------------------------------------

class ShareLeaders:
    """Every share-partition this broker leads, by (group id, topic id, partition), the
    persister they write through, and the consumers' own lock durations (kip)."""

    def __init__(self, c: "Coordinator", persister: Persister | None = None) -> None:
        self.c = c
        self._persister = persister
        self.partitions: dict[tuple[str, uuid.UUID, int], SharePartition] = {}
        #: (group id, member id) -> the consumer's record.lock.duration.ms (kip profile)
        self.member_lock_ms: dict[tuple[str, str], int] = {}

    @property
    def persister(self) -> Persister:
        if self._persister is None:
            from kgroup.groups.share import persister as p
            impl = getattr(p, "CoordinatorPersister", None)
            if impl is None:
                raise RuntimeError("no Persister: the share coordinator's CoordinatorPersister is not available; "
                                   "pass one with leaders(c, persister=...)")
            self._persister = impl(self.c)
        return self._persister


def leaders(c: "Coordinator", persister: Persister | None = None) -> ShareLeaders:
    """The registry of share-partition leaders in `c.soft_state` (created on first use;
    `persister` replaces the default `CoordinatorPersister(c)`)."""
    reg = c.soft_state.get(LEADERS)
    if reg is None:
        reg = c.soft_state[LEADERS] = ShareLeaders(c, persister)
    elif persister is not None:
        reg._persister = persister
    return reg


def share_partition(c: "Coordinator", group_id: str, topic_id: uuid.UUID, partition: int) -> SharePartition:
    """The leader of (group, topic id, partition), loading its durable state on first use.
    A failed load raises ShareStateError with the persister's error code."""
    reg = leaders(c)
    key = (group_id, topic_id, partition)
    sp = reg.partitions.get(key)
    if sp is None or not sp.loaded:
        sp = sp or SharePartition(c, group_id, topic_id, partition, reg.persister)
        code = sp.load()
        if code != ErrorCode.none:
            raise ShareStateError(code, f"the share-partition's state could not be read: {code.name}")
        reg.partitions[key] = sp
    return sp


def set_record_lock_duration(c: "Coordinator", group_id: str, member_id: str, duration_ms: int | None) -> ErrorCode:
    """The consumer's own acquisition lock duration (the draft's consumer config
    record.lock.duration.ms): at least 1000 ms, at most group.share.max.record.lock.duration.ms;
    None goes back to the group's. Kafka has no such setting (INVALID_REQUEST under kafka)."""
    if not c.profile.share_consumer_lock_duration:
        return ErrorCode.invalid_request
    reg = leaders(c)
    if duration_ms is None:
        reg.member_lock_ms.pop((group_id, member_id), None)
        return ErrorCode.none
    if not 1000 <= duration_ms <= c.config["group.share.max.record.lock.duration.ms"]:
        return ErrorCode.invalid_request
    reg.member_lock_ms[(group_id, member_id)] = int(duration_ms)
    return ErrorCode.none


def forget(c: "Coordinator", group_id: str, topic_id: uuid.UUID | None = None, partition: int | None = None) -> int:
    """Drop a group's in-flight soft state (an admin reset or a group deletion): every
    share-partition of `group_id`, or only those of `topic_id` (and `partition`). Their lock
    timers are cancelled; the next fetch loads the durable state again. Returns how many."""
    reg = c.soft_state.get(LEADERS)
    if reg is None:
        return 0
    gone = [k for k in reg.partitions
            if k[0] == group_id and (topic_id is None or k[1] == topic_id) and (partition is None or k[2] == partition)]
    for k in gone:
        reg.partitions.pop(k)._drop_in_flight()
    if topic_id is None and partition is None:
        for k in [k for k in reg.member_lock_ms if k[0] == group_id]:
            del reg.member_lock_ms[k]
    return len(gone)


@on_leader_change
def _leader_changed(c: "Coordinator", topic: str, partition: int) -> None:
    """The share-partitions of a data partition whose leader moved: a new leader reads their
    durable state; the Acquired state is not persisted (KIP-932), so records in flight are
    Available again, with the delivery counts last written."""
    reg = c.soft_state.get(LEADERS)
    if reg is None or topic not in c.cluster:
        return
    topic_id = c.cluster.topic_id(topic)
    for k in [k for k in reg.partitions if k[1] == topic_id and k[2] == partition]:
        reg.partitions.pop(k)._drop_in_flight()


__all__ = ["AVAILABLE", "ACQUIRED", "ACKNOWLEDGED", "ARCHIVED", "STATE_NAMES", "GAP", "ACCEPT", "RELEASE", "REJECT",
           "AcquisitionLock", "InFlightBatch", "AcquiredBatches", "RecordView", "SharePartition", "ShareLeaders",
           "ShareStateError", "LEADERS", "leaders", "share_partition", "set_record_lock_duration", "forget"]
