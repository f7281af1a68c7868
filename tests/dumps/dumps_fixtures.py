"""Real segment files built in code: several partitions, codecs, magic 0/1/2, transactions.

`build_log_dir(root)` writes a broker-like log dir and returns what each partition must read
back as: a list of `Expected(offset, record, txn, control)` in log order.
"""
from __future__ import annotations

import struct
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgroup.log import Compression, OffsetsLog, encode_message_set, write_segment
from kgroup.protocol.consumer_protocol import Assignment, Subscription, encode_assignment, encode_subscription
from kgroup.records import (
    ConsumerGroupCurrentMemberAssignment,
    ConsumerGroupCurrentMemberAssignmentKey,
    ConsumerGroupCurrentMemberAssignmentValue,
    ConsumerGroupMemberMetadata,
    ConsumerGroupMemberMetadataKey,
    ConsumerGroupMemberMetadataValue,
    ConsumerGroupMetadata,
    ConsumerGroupMetadataKey,
    ConsumerGroupMetadataValue,
    GroupMetadata,
    GroupMetadataKey,
    GroupMetadataValue,
    OffsetCommit,
    OffsetCommitKey,
    OffsetCommitValue,
    ShareSnapshot,
    ShareSnapshotKey,
    ShareSnapshotValue,
    ShareUpdate,
    ShareUpdateKey,
    ShareUpdateValue,
    StreamsGroupMetadata,
    StreamsGroupMetadataKey,
    StreamsGroupMetadataValue,
)

T0 = 1_718_000_000_000
TOPIC_ID = uuid.UUID("30a5f1d5-f224-432d-89f6-35c784af26d7")


@dataclass
class Expected:
    offset: int
    record: Any          # typed record, or None for a control record
    txn: str = "none"
    control: str | None = None


def oc(group: str, topic: str, partition: int, offset: int, *, version: int | None = None, **kw: Any) -> OffsetCommit:
    value = OffsetCommitValue(offset=offset, commit_timestamp=T0 + offset, **kw)
    return OffsetCommit(OffsetCommitKey(group=group, topic=topic, partition=partition), value, version)


def oc_tombstone(group: str, topic: str, partition: int) -> OffsetCommit:
    return OffsetCommit.tombstone(OffsetCommitKey(group=group, topic=topic, partition=partition))


def consumer_group_metadata(group: str, generation: int, members: list[str], version: int = 3,
                            sub_version: int = 3) -> GroupMetadata:
    """A classic consumer group with real consumer-protocol subscription/assignment bytes."""
    mm = []
    for i, m in enumerate(members):
        sub = Subscription(topics=("orders", "payments"), owned_partitions=[("orders", i)],
                           generation_id=generation - 1, rack_id="r1" if i % 2 == 0 else None,
                           user_data=b"\x01\x02" if i == 0 else None)
        asg = Assignment(partitions=[("orders", i), ("payments", i)], user_data=b"ud" if i == 1 else None)
        mm.append(GroupMetadataValue.MemberMetadata(
            member_id=m, group_instance_id=None if i or version < 3 else f"{m}-static", client_id=f"client-{i}",
            client_host=f"/10.0.0.{i}", rebalance_timeout=300_000, session_timeout=45_000,
            subscription=encode_subscription(sub, sub_version), assignment=encode_assignment(asg, sub_version)))
    value = GroupMetadataValue(protocol_type="consumer", generation=generation, protocol="range",
                               leader=members[0] if members else None,
                               current_state_timestamp=T0 if version >= 2 else -1,
                               members=mm)
    return GroupMetadata(GroupMetadataKey(group=group), value, version)


def connect_group_metadata(group: str) -> GroupMetadata:
    value = GroupMetadataValue(protocol_type="connect", generation=2, protocol="sessioned", leader="w1",
                               current_state_timestamp=T0, members=[GroupMetadataValue.MemberMetadata(
                                   member_id="w1", client_id="worker", client_host="/10.1.1.1",
                                   rebalance_timeout=60_000, session_timeout=10_000,
                                   subscription=b"\x00\x01opaque", assignment=b"\x00\x01also-opaque")])
    return GroupMetadata(GroupMetadataKey(group=group), value, 3)


def kip848_records(group: str) -> list[Any]:
    return [
        ConsumerGroupMetadata(ConsumerGroupMetadataKey(group_id=group), ConsumerGroupMetadataValue(epoch=5)),
        ConsumerGroupMemberMetadata(
            ConsumerGroupMemberMetadataKey(group_id=group, member_id="m-1"),
            ConsumerGroupMemberMetadataValue(client_id="c", client_host="/h", subscribed_topic_names=["orders"],
                                             rebalance_timeout_ms=5000, server_assignor="uniform")),
        ConsumerGroupCurrentMemberAssignment(
            ConsumerGroupCurrentMemberAssignmentKey(group_id=group, member_id="m-1"),
            ConsumerGroupCurrentMemberAssignmentValue(
                member_epoch=5, previous_member_epoch=4, state=0,
                assigned_partitions=[ConsumerGroupCurrentMemberAssignmentValue.TopicPartitions(
                    topic_id=TOPIC_ID, partitions=[0, 1, 2])])),
        StreamsGroupMetadata(StreamsGroupMetadataKey(group_id="streams-app"),
                             StreamsGroupMetadataValue(epoch=3, metadata_hash=12345)),
        ConsumerGroupMemberMetadata.tombstone(ConsumerGroupMemberMetadataKey(group_id=group, member_id="gone")),
    ]


def share_records() -> list[Any]:
    snap = ShareSnapshot(
        ShareSnapshotKey(group_id="sg", topic_id=TOPIC_ID, partition=0),
        ShareSnapshotValue(snapshot_epoch=1, state_epoch=0, leader_epoch=3, start_offset=100,
                           state_batches=[ShareSnapshotValue.StateBatch(first_offset=100, last_offset=109,
                                                                        delivery_state=2, delivery_count=1)]))
    upd = ShareUpdate(
        ShareUpdateKey(group_id="sg", topic_id=TOPIC_ID, partition=0),
        ShareUpdateValue(snapshot_epoch=1, leader_epoch=3, start_offset=-1,
                         state_batches=[ShareUpdateValue.StateBatch(first_offset=110, last_offset=110,
                                                                    delivery_state=4, delivery_count=5)]))
    return [snap, upd]


class _Builder:
    """Appends to an OffsetsLog and remembers what each partition should read back as."""

    def __init__(self, log: OffsetsLog):
        self.log = log
        self.expected: dict[int, list[Expected]] = {}
        self.t = T0

    def add(self, partition: int, records: list[Any], *, compression: Compression = Compression.NONE,
            pid: int = -1, txn: str = "none") -> None:
        self.log.compression = compression
        self.t += 1
        entries = self.log.append(partition, records, timestamp=self.t, producer_id=pid, producer_epoch=0 if pid >= 0 else -1,
                                  transactional=pid >= 0)
        self.expected.setdefault(partition, []).extend(Expected(e.offset, r, txn) for e, r in zip(entries, records))

    def marker(self, partition: int, pid: int, commit: bool) -> None:
        self.t += 1
        e = self.log.append_marker(partition, commit=commit, producer_id=pid, producer_epoch=0,
                                   coordinator_epoch=7, timestamp=self.t)
        self.expected[partition].append(
            Expected(e.offset, None, "committed" if commit else "aborted", "COMMIT" if commit else "ABORT"))

    def resolve(self, partition: int, pid_offsets: list[int], outcome: str) -> None:
        for ex in self.expected[partition]:
            if ex.offset in pid_offsets and ex.control is None:
                ex.txn = outcome


def build_log_dir(root: Path) -> dict[tuple[str, int], list[Expected]]:
    """A log dir with __consumer_offsets-0..3 (v2, every codec, transactions), -5 (magic 1)
    and -6 (magic 0), and __share_group_state-0, plus an unrelated topic that must be skipped."""
    log = OffsetsLog(8)
    b = _Builder(log)
    # partition 0: plain, uncompressed
    b.add(0, [oc("orders-app", "orders", 0, 10), oc("orders-app", "orders", 1, 11)])
    b.add(0, [consumer_group_metadata("orders-app", 1, ["m-a", "m-b"])])
    b.add(0, [oc("orders-app", "orders", 0, 12, leader_epoch=3, metadata="checkpoint")])
    b.add(0, [oc("old-app", "t", 0, 1, version=1, expire_timestamp=T0 + 86_400_000)])
    b.add(0, [oc_tombstone("old-app", "t", 0)])
    # partition 1: gzip and zstd batches, KIP-848 / streams records, connect group
    b.add(1, kip848_records("new-app"), compression=Compression.GZIP)
    b.add(1, [connect_group_metadata("connect-cluster")], compression=Compression.ZSTD)
    b.add(1, [oc("new-app", "orders", 2, 99, version=4, topic_id=TOPIC_ID)], compression=Compression.ZSTD)
    b.add(1, [consumer_group_metadata("legacy-client-app", 7, ["x"], version=1, sub_version=0)])
    # partition 2: transactions interleaved with plain commits
    b.add(2, [oc("txn-app", "in", 0, 1), oc("txn-app", "in", 1, 1)], pid=100)            # committed
    b.add(2, [oc("plain-app", "in", 0, 5)])
    b.add(2, [oc("txn-app", "in", 2, 1)], pid=101, compression=Compression.ZSTD)          # aborted
    b.add(2, [oc("txn-app", "in", 0, 2)], pid=100)                                        # committed
    b.marker(2, 100, commit=True)
    b.resolve(2, [0, 1, 4], "committed")
    b.add(2, [oc("plain-app", "in", 0, 6)])
    b.marker(2, 101, commit=False)
    b.resolve(2, [3], "aborted")
    b.add(2, [oc("txn-app", "in", 0, 3)], pid=102)                                        # open
    b.add(2, [oc("plain-app", "in", 0, 7)])
    b.resolve(2, [8], "open")
    # partition 3: one big gzip batch
    b.add(3, [oc("bulk", "events", p, 1000 + p) for p in range(40)], compression=Compression.GZIP)
    b.add(3, [oc("bulk", "events", 0, 2000)], compression=Compression.LZ4)
    b.add(3, [oc("bulk", "events", 1, 2001)], compression=Compression.SNAPPY)
    log.write(root)

    share = OffsetsLog(4, topic="__share_group_state")
    share.append(0, share_records(), timestamp=T0)
    share.write(root)

    expected: dict[tuple[str, int], list[Expected]] = {("__consumer_offsets", p): ex for p, ex in b.expected.items()}
    expected[("__share_group_state", 0)] = [Expected(i, r) for i, r in enumerate(share_records())]

    # magic 1 (gzip wrapper + plain messages) and magic 0 (snappy wrapper), as pre-0.11 brokers wrote
    legacy1 = [oc("m1-app", "t", 0, 1, version=1, expire_timestamp=T0 + 1), oc("m1-app", "t", 1, 2, version=1,
                                                                            expire_timestamp=T0 + 2)]
    legacy1b = [consumer_group_metadata("m1-app", 2, ["c-1"], version=1, sub_version=0)]
    data1 = (encode_message_set([(*r.encode(), T0) for r in legacy1], magic=1, base_offset=0,
                                compression=Compression.GZIP)
             + encode_message_set([(*r.encode(), T0 + 5) for r in legacy1b], magic=1, base_offset=2))
    write_segment(root / "__consumer_offsets-5", 0, data1)
    expected[("__consumer_offsets", 5)] = [Expected(i, r) for i, r in enumerate(legacy1 + legacy1b)]
    legacy0 = [oc("m0-app", "t", 0, 7, version=0), oc_tombstone("m0-app", "t", 0)]
    data0 = encode_message_set([r.encode() for r in legacy0], magic=0, base_offset=40,
                               compression=Compression.SNAPPY)
    write_segment(root / "__consumer_offsets-6", 40, data0)
    expected[("__consumer_offsets", 6)] = [Expected(40 + i, r) for i, r in enumerate(legacy0)]

    # a user topic next to them (a broker log dir holds every topic): never read
    other = OffsetsLog(1, topic="orders")
    other.append(0, [(b"k", b"v")], timestamp=T0)
    other.write(root)
    return expected


def flat(expected: dict[tuple[str, int], list[Expected]]) -> list[tuple[str, int, Expected]]:
    """Expected entries in the order read_dump yields them (consumer offsets first, by partition)."""
    order = sorted(expected, key=lambda tp: (tp[0] != "__consumer_offsets", tp[0], tp[1]))
    return [(t, p, ex) for t, p in order for ex in expected[(t, p)]]


def raw_record(record_type: int, rest: bytes = b"", value: bytes | None = b"\x00\x00") -> tuple[bytes, bytes | None]:
    """A (key, value) pair with an arbitrary int16 type prefix (e.g. a type no schema defines)."""
    return struct.pack(">h", record_type) + rest, value


def reference_rows(paths: Any, **kw: Any) -> list[dict]:
    """What every row of the Spark pipeline must be: read_dump's entries, one row each."""
    from kgroup.dumps import ranges, read_dump

    names = [name for name, _ in ranges.COLUMNS]
    out = []
    for e in read_dump(paths, **kw):
        chunk = ranges.Chunk((e.source, e.kind, e.topic, e.partition))
        ranges.add_entry(chunk, e)
        cols = chunk.columns()
        out.append({name: cols[name][0] for name in names})
    return out


def task_rows(plan: Any, chunk_rows: int = 32 * 1024) -> list[dict]:
    """The rows of every task of a `ranges.ScanPlan`, in order, as the Spark tasks produce them."""
    from kgroup.dumps import ranges

    names = [name for name, _ in ranges.COLUMNS]
    return [dict(zip(names, r)) for i in range(len(plan.tasks)) for chunk in ranges.run_task(plan, i, chunk_rows)
            for r in zip(*chunk.columns().values())]
