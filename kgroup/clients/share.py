"""A simulated KIP-932 share consumer: `KafkaShareConsumer` as the seed describes it, speaking
Kafka's final wire protocol (ShareGroupHeartbeat, ShareFetch, ShareAcknowledge).

    consumer = ShareConsumer(coordinator, "myshare", ["foo"], name="A")
    sim = Simulation(coordinator, [consumer]); sim.run(10_000)
    consumer.delivered          # every record handed to the application, with its delivery count

The member, as Kafka's share consumer does it (`ShareMembershipManager`,
`ShareConsumeRequestManager`, `ShareConsumerImpl`):

- **joins** with member epoch 0, a member id it generated itself (a Uuid string) and its
  subscription; afterwards sends the subscription only when it changed. There is no fencing
  in a share group: a new assignment is taken at once, nothing is revoked first. On
  UNKNOWN_MEMBER_ID or FENCED_MEMBER_EPOCH it rejoins with epoch 0. It leaves with epoch -1
  (share groups have no static membership);
- **fetches** through one *share session*: ShareFetch with session epoch 0 opens it with every
  assigned partition, later fetches bump the epoch and name only partitions added (and, in
  `forgotten_topics_data`, those removed); epoch -1 closes it, which releases what the member
  still holds;
- **acknowledges** as the seed's client section says: *implicit* mode (the default) accepts every
  record of the last poll when the application polls again or commits; *explicit* mode
  (`acknowledge(record, type)`) sends only what the application acknowledged, and records left
  unacknowledged stay Acquired and are presented again by the next poll - while their
  acquisition lock holds. The ShareFetch response says how long the lock is
  (AcquisitionLockTimeoutMs); once it has elapsed the leader has made the records Available
  again (or Archived them), so the consumer drops them (`lapsed`) and fetches anew instead of
  handing the application records it no longer holds. An acknowledgement the leader refuses
  (INVALID_RECORD_STATE: the lock is gone) drops its records too. Acknowledgements go
  with the next ShareFetch (piggy-backed), or at once in a ShareAcknowledge by `commit_sync()` /
  `commit_async()`. Acquired offsets that have no record (control records, compacted away)
  are acknowledged as GAP;
- `close()` commits what is pending and closes the session (the rest is released), then leaves;
  `crash()` stops silently: its records come back when their acquisition locks expire.

For demonstrations a consumer can be *slow* (`processing_ms_per_record`: a poll's records are
processed for that long each before the next poll) and can decide per record what to do
(`handler(record) -> AcknowledgeType | None`, explicit mode: None leaves the record acquired).
Sans-IO like the other clients: it acts only when the driver calls `tick()` (heartbeats) and
`poll()` (the application thread).
"""
from __future__ import annotations

import enum
import random
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kgroup.clients.membership import RETRIABLE
from kgroup.clients.transport import RequestTimeout, Transport
from kgroup.errors import ErrorCode
from kgroup.log.batch import read_batches
from kgroup.log.model import CorruptBatch
from kgroup.protocol import ms, request
from kgroup.records.uuids import uuid_to_kafka_str

if TYPE_CHECKING:
    from kgroup.coordinator import Coordinator

E = ErrorCode
TP = tuple[str, int]

#: ShareGroupHeartbeat: the member epoch that leaves the group.
LEAVE_GROUP_MEMBER_EPOCH = -1
#: ShareFetch/ShareAcknowledge: the session epoch that opens a share session, and the one that closes it.
INITIAL_SHARE_SESSION_EPOCH = 0
FINAL_SHARE_SESSION_EPOCH = -1


class AcknowledgeType(enum.IntEnum):
    """How a record is acknowledged, with the wire values of ShareFetch/ShareAcknowledge
    (Kafka's `AcknowledgeType`; GAP marks an offset without a record)."""

    GAP = 0
    ACCEPT = 1
    RELEASE = 2
    REJECT = 3


class ShareMemberState(str, enum.Enum):
    """Kafka's client-side `MemberState` as a share consumer uses it, plus STOPPED."""

    UNSUBSCRIBED = "unsubscribed"
    JOINING = "joining"
    ACKNOWLEDGING = "acknowledging"   # took a new assignment: the next heartbeat goes at once
    STABLE = "stable"
    LEAVING = "leaving"
    FATAL = "fatal"
    STOPPED = "stopped"

    def __str__(self) -> str:
        return self.value


S = ShareMemberState


@dataclass(frozen=True)
class ShareRecord:
    """A record as `poll()` returns it: where it is, what it holds, and its delivery count."""

    topic: str
    partition: int
    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    delivery_count: int

    @property
    def tp(self) -> TP:
        return self.topic, self.partition


@dataclass
class ShareConsumerConfig:
    """The share consumer configs that matter to the protocol (Kafka's names, defaults)."""

    group_id: str
    topics: tuple[str, ...] = ()
    client_id: str = "share-consumer"
    rack_id: str | None = None                   # client.rack
    acknowledgement_mode: str = "implicit"       # share.acknowledgement.mode: implicit | explicit
    max_poll_records: int = 500                  # max.poll.records
    fetch_max_wait_ms: int = 500                 # fetch.max.wait.ms
    fetch_min_bytes: int = 1                     # fetch.min.bytes
    fetch_max_bytes: int = 52_428_800            # fetch.max.bytes
    retry_backoff_ms: int = 100


class ShareConsumer:
    """One simulated `KafkaShareConsumer` (see the module docstring)."""

    def __init__(self, coordinator: "Coordinator", group_id: str, topics: Iterable[str] = (), *,
                 name: str | None = None, acknowledgement_mode: str = "implicit",
                 handler: Callable[[ShareRecord], AcknowledgeType | None] | None = None,
                 processing_ms_per_record: int = 0, max_poll_records: int = 500, client_id: str | None = None,
                 rack_id: str | None = None, seed: int | None = None) -> None:
        if acknowledgement_mode not in ("implicit", "explicit"):
            raise ValueError(f"acknowledgement_mode is 'implicit' or 'explicit', got {acknowledgement_mode!r}")
        self.c = coordinator
        #: the network between this member and the coordinator (`Simulation(transport=...)` swaps it)
        self.transport = Transport(coordinator)
        self.name = name or f"share-{group_id}-{len(topics) if not isinstance(topics, str) else 1}"
        self.config = ShareConsumerConfig(group_id, tuple(sorted(topics)), client_id=client_id or self.name,
                                          rack_id=rack_id, acknowledgement_mode=acknowledgement_mode,
                                          max_poll_records=max_poll_records)
        self.handler = handler
        self.processing_ms_per_record = processing_ms_per_record
        rng = random.Random(seed if seed is not None else self.name)
        #: the member id the client made for itself (Kafka: `Uuid.randomUuid()` at construction)
        self.member_id = uuid_to_kafka_str(uuid.UUID(int=rng.getrandbits(128), version=4))
        self.state = S.STOPPED
        self.member_epoch = 0
        self.heartbeat_interval_ms = 5_000
        self.next_heartbeat = 0
        self.assignment: dict[uuid.UUID, frozenset[int]] = {}
        self._sent_subscription: tuple[str, ...] | None = None
        # the share session (one leader in the simulation: the coordinator's broker)
        self.session_epoch = INITIAL_SHARE_SESSION_EPOCH
        self._session_partitions: set[tuple[uuid.UUID, int]] = set()
        #: records handed to the application by the last poll and not yet acknowledged
        self.in_flight: dict[tuple[TP, int], ShareRecord] = {}
        #: when the acquisition lock of each in-flight record elapses (the ShareFetch's send time
        #: plus its AcquisitionLockTimeoutMs: never later than the leader's own deadline)
        self.lock_deadlines: dict[tuple[TP, int], int] = {}
        #: AcquisitionLockTimeoutMs of the last ShareFetch response (Kafka's `acquisitionLockTimeoutMs()`)
        self.acquisition_lock_timeout_ms: int | None = None
        #: acknowledgements waiting to be sent: (topic id, partition) -> {offset: type}
        self.pending_acks: dict[tuple[uuid.UUID, int], dict[int, AcknowledgeType]] = {}
        self.busy_until = 0
        #: what happened, for tests and notebooks
        self.delivered: list[ShareRecord] = []
        self.acknowledged: list[tuple[ShareRecord, AcknowledgeType]] = []
        #: records dropped unacknowledged because their acquisition lock had elapsed
        self.lapsed: list[ShareRecord] = []
        self.errors: list[tuple[int, str, ErrorCode]] = []
        self.exchanges: list[tuple[int, str, Any, Any]] = []

    # -- lifecycle ----------------------------------------------------------------------------
    def start(self) -> None:
        """Start (or restart) the process: it joins with its member id and epoch 0."""
        self.state = S.JOINING if self.config.topics else S.UNSUBSCRIBED
        self.member_epoch = 0
        self.assignment = {}
        self._sent_subscription = None
        self.session_epoch = INITIAL_SHARE_SESSION_EPOCH
        self._session_partitions = set()
        self.in_flight.clear()
        self.lock_deadlines.clear()
        self.pending_acks.clear()
        self.busy_until = 0
        self.next_heartbeat = self.c.now()

    @property
    def running(self) -> bool:
        return self.state is not S.STOPPED

    @property
    def generation(self) -> int:
        return self.member_epoch

    @property
    def rejoin_needed(self) -> bool:
        return self.state is S.JOINING

    @property
    def owned(self) -> set[TP]:
        """The partitions assigned to this member (shared with the other members)."""
        return self._names(self.assignment)

    def subscribed_topics(self) -> tuple[str, ...]:
        return self.config.topics

    def subscribe(self, topics: Iterable[str]) -> None:
        self.config.topics = tuple(sorted(topics))
        if self.state in (S.UNSUBSCRIBED, S.STABLE, S.ACKNOWLEDGING):
            self.state = S.JOINING if self.state is S.UNSUBSCRIBED else S.ACKNOWLEDGING
            self.next_heartbeat = self.c.now()

    def close(self) -> None:
        """Kafka's `close()`: commit pending acknowledgements and close the share session
        (the records still held are released), then leave the group."""
        if not self.running:
            return
        if self.config.acknowledgement_mode == "implicit":
            self._acknowledge_all_delivered(AcknowledgeType.ACCEPT)
        self._close_session()
        if self.member_epoch > 0 or self.state is S.STABLE:
            self.state = S.LEAVING
            self._heartbeat()
        self.state = S.STOPPED
        self.assignment = {}

    def crash(self) -> None:
        """Stop without a word: the coordinator notices by the session timeout, the records held
        come back when their acquisition locks expire."""
        self.state = S.STOPPED
        self.assignment = {}
        self.in_flight.clear()
        self.lock_deadlines.clear()
        self.pending_acks.clear()

    # -- the heartbeat thread -------------------------------------------------------------------
    def tick(self) -> None:
        if self.state in (S.STOPPED, S.FATAL, S.UNSUBSCRIBED):
            return
        now = self.c.now()
        if self.state in (S.JOINING, S.ACKNOWLEDGING) or now >= self.next_heartbeat:
            self._heartbeat()

    def _heartbeat(self) -> None:
        now = self.c.now()
        leaving = self.state is S.LEAVING
        epoch = LEAVE_GROUP_MEMBER_EPOCH if leaving else (0 if self.state is S.JOINING else self.member_epoch)
        subscription = None
        if not leaving and (self.state is S.JOINING or self._sent_subscription != self.config.topics):
            subscription = list(self.config.topics)
        req = request("ShareGroupHeartbeat", 1, group_id=self.config.group_id, member_id=self.member_id,
                      member_epoch=epoch, rack_id=self.config.rack_id if epoch == 0 else None,
                      subscribed_topic_names=subscription)
        try:
            resp = self.transport.send(req, client_id=self.config.client_id)
        except RequestTimeout:
            # Kafka's heartbeat manager `onFailure`: retried after the backoff with the epoch the
            # member has (a share group has no previous-epoch rule: if the lost answer had bumped
            # the epoch, the retry is fenced and the member rejoins). A lost leave is ignored.
            self.exchanges.append((now, "ShareGroupHeartbeat", req, None))
            if not leaving:
                self.errors.append((now, "ShareGroupHeartbeat", E.request_timed_out))
                self._sent_subscription = None
                self.next_heartbeat = now + self.config.retry_backoff_ms
            return
        self.exchanges.append((now, "ShareGroupHeartbeat", req, resp))
        if leaving:
            return
        code = ErrorCode(resp.error_code)
        if code is E.none:
            if subscription is not None:
                self._sent_subscription = tuple(subscription)
            self.member_epoch = resp.member_epoch
            self.heartbeat_interval_ms = ms(resp.heartbeat_interval)
            self.next_heartbeat = now + self.heartbeat_interval_ms
            self.state = S.STABLE
            if resp.assignment is not None:
                new = {tp.topic_id: frozenset(tp.partitions) for tp in resp.assignment.topic_partitions
                       if tp.partitions}
                if new != self.assignment:
                    # No fencing in share groups: the new assignment is taken at once.
                    self.assignment = new
                    self.state = S.ACKNOWLEDGING
            return
        self.errors.append((now, "ShareGroupHeartbeat", code))
        if code in (E.unknown_member_id, E.fenced_member_epoch):
            self.state, self.member_epoch, self.assignment = S.JOINING, 0, {}
            self._sent_subscription = None
        elif code in RETRIABLE:
            self.next_heartbeat = now + self.config.retry_backoff_ms
        else:
            self.state = S.FATAL

    # -- the application thread -------------------------------------------------------------------
    def poll(self) -> list[ShareRecord]:
        """Kafka's `poll()`: the acknowledgements of the last batch go with this fetch
        (implicit mode accepts every record the last poll returned); returns the records
        acquired for this member. A slow consumer still processing returns nothing."""
        if self.state not in (S.STABLE, S.ACKNOWLEDGING) or self.c.now() < self.busy_until:
            return []
        if self.config.acknowledgement_mode == "implicit":
            self._acknowledge_all_delivered(AcknowledgeType.ACCEPT)
        elif self.in_flight:
            # The seed (explicit acknowledgement): records left unacknowledged "remain Acquired as
            # part of the same delivery attempt and will be presented to the application in
            # response to another poll"; what was acknowledged is committed meanwhile. Only
            # while their lock holds: a lapsed lock ended that delivery attempt on the leader.
            self.drop_lapsed()
            if self.pending_acks and self.session_epoch != INITIAL_SHARE_SESSION_EPOCH:
                self._send_acknowledge(self._next_epoch())
            if self.in_flight:
                return self._present(self.held())
        return self._present(self._fetch())

    def held(self) -> list[ShareRecord]:
        """The records this consumer holds: delivered, not yet acknowledged, and under an
        acquisition lock that has not elapsed (by the lock duration the ShareFetch response gave)."""
        now = self.c.now()
        return sorted((r for key, r in self.in_flight.items() if self.lock_deadlines.get(key, now + 1) > now),
                      key=lambda r: (r.topic, r.partition, r.offset))

    def drop_lapsed(self) -> list[ShareRecord]:
        """Forget the unacknowledged records whose acquisition lock has elapsed (the leader made
        them Available again, or Archived them at the delivery count limit): they can no longer
        be acknowledged, and the next poll fetches instead of presenting them again."""
        now = self.c.now()
        gone = sorted((r for key, r in self.in_flight.items() if self.lock_deadlines.get(key, now + 1) <= now),
                      key=lambda r: (r.topic, r.partition, r.offset))
        for r in gone:
            self._forget((r.tp, r.offset))
        self.lapsed += gone
        return gone

    def _forget(self, key: tuple[TP, int]) -> None:
        self.in_flight.pop(key, None)
        self.lock_deadlines.pop(key, None)

    def _present(self, records: list[ShareRecord]) -> list[ShareRecord]:
        if self.processing_ms_per_record:
            self.busy_until = self.c.now() + self.processing_ms_per_record * len(records)
        if self.handler is not None:
            for record in records:
                decision = self.handler(record)
                if decision is not None:
                    self.acknowledge(record, decision)
        return records

    def acknowledge(self, record: ShareRecord, type: AcknowledgeType = AcknowledgeType.ACCEPT) -> None:
        """Kafka's `acknowledge(record, type)`: noted now, sent with the next poll or commit."""
        if type is AcknowledgeType.GAP:
            raise ValueError("GAP is for offsets without a record; acknowledge records with ACCEPT, RELEASE or REJECT")
        key = (record.tp, record.offset)
        if key not in self.in_flight:
            raise ValueError(f"{record.topic}-{record.partition}@{record.offset} was not returned by the last poll "
                             "or is already acknowledged")
        self._forget(key)
        self._note_ack(record.topic, record.partition, record.offset, AcknowledgeType(type))
        self.acknowledged.append((record, AcknowledgeType(type)))

    def commit_sync(self) -> dict[TP, ErrorCode]:
        """Send the pending acknowledgements now in a ShareAcknowledge; the error per partition."""
        if self.config.acknowledgement_mode == "implicit":
            self._acknowledge_all_delivered(AcknowledgeType.ACCEPT)
        if not self.pending_acks or self.session_epoch == INITIAL_SHARE_SESSION_EPOCH:
            return {}
        return self._send_acknowledge(self._next_epoch())

    commit_async = commit_sync  # one process, no network: the answer is there at once

    # -- share session ------------------------------------------------------------------------------
    def _next_epoch(self) -> int:
        epoch = self.session_epoch
        self.session_epoch = 1 if epoch == 2**31 - 1 else epoch + 1
        return epoch

    def _fetch(self) -> list[ShareRecord]:
        wanted = {(t, p) for t, ps in self.assignment.items() for p in ps}
        if not wanted and not self._session_partitions:
            return []
        opening = self.session_epoch == INITIAL_SHARE_SESSION_EPOCH
        added = wanted if opening else wanted - self._session_partitions
        forgotten = set() if opening else self._session_partitions - wanted
        acks = self._take_acks()
        topics: dict[uuid.UUID, dict[int, list]] = {}
        for t, p in sorted(added | set(acks), key=lambda tp: (str(tp[0]), tp[1])):
            if (t, p) in forgotten:
                continue
            topics.setdefault(t, {})[p] = _ack_batches(acks.get((t, p), {}))
        forgotten_data: dict[uuid.UUID, list[int]] = {}
        for t, p in sorted(forgotten, key=lambda tp: (str(tp[0]), tp[1])):
            forgotten_data.setdefault(t, []).append(p)
        epoch = self._next_epoch()
        sent_at = self.c.now()
        req = request("ShareFetch", 1, group_id=self.config.group_id, member_id=self.member_id,
                      share_session_epoch=epoch, max_wait=self.config.fetch_max_wait_ms,
                      min_bytes=self.config.fetch_min_bytes, max_bytes=self.config.fetch_max_bytes,
                      max_records=self.config.max_poll_records, batch_size=self.config.max_poll_records,
                      topics=[{"topic_id": t, "partitions": [{"partition_index": p, "acknowledgement_batches": b}
                                                             for p, b in sorted(ps.items())]}
                              for t, ps in topics.items()],
                      forgotten_topics_data=[{"topic_id": t, "partitions": ps} for t, ps in forgotten_data.items()])
        try:
            resp = self.transport.send(req, client_id=self.config.client_id)
        except RequestTimeout:
            self._request_failed("ShareFetch", req, acks)
            return []
        self.exchanges.append((self.c.now(), "ShareFetch", req, resp))
        code = ErrorCode(resp.error_code)
        if code is not E.none:
            self.errors.append((self.c.now(), "ShareFetch", code))
            if code in (E.share_session_not_found, E.invalid_share_session_epoch):
                # Kafka's client starts a new session (epoch 0) after these.
                self.session_epoch, self._session_partitions = INITIAL_SHARE_SESSION_EPOCH, set()
            return []
        self._session_partitions = (self._session_partitions | added) - forgotten
        lock_ms = ms(resp.acquisition_lock_timeout)
        if lock_ms > 0:  # 0: no share-partition in the answer, so no lock either
            self.acquisition_lock_timeout_ms = lock_ms
        deadline = sent_at + lock_ms
        out: list[ShareRecord] = []
        for topic in resp.responses:
            name = self._topic_name(topic.topic_id)
            for part in topic.partitions:
                if ErrorCode(part.error_code) is not E.none:
                    self.errors.append((self.c.now(), f"ShareFetch {name}-{part.partition_index}",
                                        ErrorCode(part.error_code)))
                if part.acknowledge_error_code:
                    self.errors.append((self.c.now(), f"acknowledge {name}-{part.partition_index}",
                                        ErrorCode(part.acknowledge_error_code)))
                out += self._records_of(topic.topic_id, name, part)
        out.sort(key=lambda r: (r.topic, r.partition, r.offset))
        self.delivered += out
        for r in out:
            self.in_flight[(r.tp, r.offset)] = r
            self.lock_deadlines[(r.tp, r.offset)] = deadline
        return out

    def _records_of(self, topic_id: uuid.UUID, name: str, part: Any) -> list[ShareRecord]:
        """The acquired records of one partition; acquired offsets without a record are
        acknowledged as GAP at once (Kafka's `ShareCompletedFetch`)."""
        if not part.acquired_records:
            return []
        present: dict[int, tuple[int, bytes | None, bytes | None]] = {}
        for batch in read_batches(bytes(part.records or b"")):
            if isinstance(batch, CorruptBatch) or batch.is_control:
                continue
            for rec in batch.records:
                present[rec[0]] = (rec[1], rec[2], rec[3])
        out = []
        for acquired in part.acquired_records:
            for offset in range(acquired.first_offset, acquired.last_offset + 1):
                found = present.get(offset)
                if found is None:
                    self._note_ack(name, part.partition_index, offset, AcknowledgeType.GAP, topic_id=topic_id)
                    continue
                ts, key, value = found
                out.append(ShareRecord(name, part.partition_index, offset, ts, key, value, acquired.delivery_count))
        return out

    def _send_acknowledge(self, epoch: int) -> dict[TP, ErrorCode]:
        acks = self._take_acks()
        topics: dict[uuid.UUID, list] = {}
        for (t, p), by_offset in sorted(acks.items(), key=lambda kv: (str(kv[0][0]), kv[0][1])):
            topics.setdefault(t, []).append({"partition_index": p, "acknowledgement_batches": _ack_batches(by_offset)})
        req = request("ShareAcknowledge", 1, group_id=self.config.group_id, member_id=self.member_id,
                      share_session_epoch=epoch,
                      topics=[{"topic_id": t, "partitions": ps} for t, ps in topics.items()])
        try:
            resp = self.transport.send(req, client_id=self.config.client_id)
        except RequestTimeout:
            self._request_failed("ShareAcknowledge", req, acks)
            return {(self._topic_name(t), p): E.request_timed_out for t, p in acks}
        self.exchanges.append((self.c.now(), "ShareAcknowledge", req, resp))
        out: dict[TP, ErrorCode] = {}
        if ErrorCode(resp.error_code) is not E.none:
            self.errors.append((self.c.now(), "ShareAcknowledge", ErrorCode(resp.error_code)))
            return {(self._topic_name(t), p): ErrorCode(resp.error_code) for t, p in acks}
        for topic in resp.responses:
            name = self._topic_name(topic.topic_id)
            for part in topic.partitions:
                out[(name, part.partition_index)] = ErrorCode(part.error_code)
                if ErrorCode(part.error_code) is not E.none:
                    self.errors.append((self.c.now(), f"ShareAcknowledge {name}-{part.partition_index}",
                                        ErrorCode(part.error_code)))
        return out

    def _request_failed(self, api: str, req: Any, acks: dict) -> None:
        """No answer to a ShareFetch/ShareAcknowledge. As Kafka's `ShareConsumeRequestManager`
        does, the acknowledgements it carried complete with the error (they may or may not have
        been applied: they are not sent again, a record not acknowledged comes back when its
        lock expires) and the session starts anew (epoch 0, `ShareSessionHandler.handleError`)."""
        now = self.c.now()
        self.exchanges.append((now, api, req, None))
        self.errors.append((now, api, E.request_timed_out))
        for (t, p) in acks:
            self.errors.append((now, f"acknowledge {self._topic_name(t)}-{p}", E.request_timed_out))
        self.session_epoch, self._session_partitions = INITIAL_SHARE_SESSION_EPOCH, set()

    def _close_session(self) -> None:
        if self.session_epoch == INITIAL_SHARE_SESSION_EPOCH:
            return
        # Closing the session (epoch -1) carries the last acknowledgements; the leader releases the rest.
        self._send_acknowledge(FINAL_SHARE_SESSION_EPOCH)
        self.session_epoch, self._session_partitions = INITIAL_SHARE_SESSION_EPOCH, set()
        self.in_flight.clear()
        self.lock_deadlines.clear()

    # -- acknowledgements ------------------------------------------------------------------------------
    def _acknowledge_all_delivered(self, type: AcknowledgeType) -> None:
        for record in sorted(self.in_flight.values(), key=lambda r: (r.topic, r.partition, r.offset)):
            self.acknowledge(record, type)

    def _note_ack(self, topic: str, partition: int, offset: int, type: AcknowledgeType, *,
                  topic_id: uuid.UUID | None = None) -> None:
        tid = topic_id if topic_id is not None else self.c.cluster.topic_id(topic)
        self.pending_acks.setdefault((tid, partition), {})[offset] = type

    def _take_acks(self) -> dict[tuple[uuid.UUID, int], dict[int, AcknowledgeType]]:
        acks, self.pending_acks = self.pending_acks, {}
        return acks

    # -- names ---------------------------------------------------------------------------------------------
    def _topic_name(self, topic_id: uuid.UUID) -> str:
        try:
            return self.c.cluster.topic_name(topic_id)
        except KeyError:
            return str(topic_id)

    def _names(self, assignment: dict[uuid.UUID, frozenset[int]]) -> set[TP]:
        return {(self._topic_name(t), p) for t, ps in assignment.items() for p in ps}

    def __repr__(self) -> str:
        return (f"ShareConsumer({self.name!r}, state={self.state}, epoch={self.member_epoch}, "
                f"owned={sorted(self.owned)}, in_flight={len(self.in_flight)})")


def _ack_batches(by_offset: dict[int, AcknowledgeType]) -> list[dict]:
    """Acknowledgements as AcknowledgementBatches: runs of consecutive offsets, with one type
    for a run that shares it (as Kafka's client sends a whole accepted batch) or one per offset."""
    batches: list[dict] = []
    run: list[tuple[int, AcknowledgeType]] = []

    def flush() -> None:
        if run:
            types = [int(t) for _, t in run]
            batches.append({"first_offset": run[0][0], "last_offset": run[-1][0],
                            "acknowledge_types": types[:1] if len(set(types)) == 1 else types})

    for offset, type in sorted(by_offset.items()):
        if run and offset != run[-1][0] + 1:
            flush()
            run = []
        run.append((offset, type))
    flush()
    return batches


__all__ = ["AcknowledgeType", "ShareConsumer", "ShareConsumerConfig", "ShareMemberState", "ShareRecord"]
