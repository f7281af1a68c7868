#!/usr/bin/env python3
"""Write a large synthetic `__consumer_offsets` dump: real segment files, as a broker holds them.

    python data/make_large_dump.py --records 5000000 --partitions 8 --groups 2000 --codec lz4 --out DIR

Used by `benchmarks/dumps.py`; the data is not committed (only this script is). What it writes:

- `DIR/__consumer_offsets-<p>/<base offset>.log` (+ `.index`, `.timeindex` built as a broker
  builds them), rolled every `--segment-bytes` so partitions have several segments; every group
  lives on the partition Kafka would place it on (`partition_for`);
- one batch per coordinator write, as the group coordinator appends them: a commit request's
  OffsetCommit records (v3, most of the dump; some groups store commit metadata), classic
  rebalances (GroupMetadata with consumer-protocol subscriptions and assignments, some with
  user data), KIP-848 consumer groups (records of types 3, 5, 6, 7, 8: group epoch, members,
  target assignment, current assignment), offset deletions and expirations (tombstones),
  member departures (tombstones), and transactional offset commits (a producer id, then a
  COMMIT or ABORT marker a little later; the last few stay open);
- `DIR/manifest.json`: the parameters and exact counts (records by type, batches, bytes).

Every batch is compressed with `--codec` (none, gzip, snappy, lz4, zstd). Deterministic for a
given `--seed`. Fast: keys and value layouts are templates per group/partition and only the
changing fields are packed per record; batches go through kgroup's own encoder.
"""
from __future__ import annotations

import argparse
import json
import random
import struct
import sys
import time
import uuid
from base64 import b64encode
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from kgroup.log import Compression, ControlType, encode_batch, encode_control_batch, partition_for  # noqa: E402
from kgroup.log.segment import build_indexes, partition_dir_name, segment_file_name  # noqa: E402
from kgroup.protocol.consumer_protocol import (Assignment, Subscription, encode_assignment,  # noqa: E402
                                               encode_subscription)
from kgroup.records import (ConsumerGroupCurrentMemberAssignment, ConsumerGroupCurrentMemberAssignmentKey,  # noqa: E402
                            ConsumerGroupCurrentMemberAssignmentValue, ConsumerGroupMemberMetadata,
                            ConsumerGroupMemberMetadataKey, ConsumerGroupMemberMetadataValue, ConsumerGroupMetadata,
                            ConsumerGroupMetadataKey, ConsumerGroupMetadataValue,
                            ConsumerGroupTargetAssignmentMember, ConsumerGroupTargetAssignmentMemberKey,
                            ConsumerGroupTargetAssignmentMemberValue, ConsumerGroupTargetAssignmentMetadata,
                            ConsumerGroupTargetAssignmentMetadataKey, ConsumerGroupTargetAssignmentMetadataValue,
                            GroupMetadata, GroupMetadataKey, GroupMetadataValue)

T0 = 1_718_000_000_000
TOPIC = "__consumer_offsets"
_V3_EMPTY = struct.Struct(">hqihq")
_V3_HEAD = struct.Struct(">hqih")
_Q = struct.Struct(">q")
_TEAMS = ("payments", "orders", "search", "fraud", "billing", "shipping", "inventory", "ads", "identity", "metrics")
_ENTITIES = ("events", "commands", "changelog", "audit", "clicks", "invoices", "sessions", "alerts")


# ------------------------------------------------------------------------------------------------
# the simulated cluster


class Topic(NamedTuple):
    name: str
    partitions: int
    topic_id: uuid.UUID


@dataclass
class Group:
    group_id: str
    partition: int                       # its __consumer_offsets partition
    kind: str                            # classic | consumer
    topics: list[Topic]
    members: list[str]
    metadata: bool                       # stores commit metadata
    user_data: int                       # bytes of assignment user data per member (classic)
    eos: bool                            # commits transactionally
    generation: int = 0
    offsets: dict[tuple[str, int], int] = field(default_factory=dict)
    keys: dict[tuple[str, int], bytes] = field(default_factory=dict)
    next_member: int = 0
    producer_id: int = -1


def _string(s: str) -> bytes:
    b = s.encode()
    return struct.pack(">h", len(b)) + b


def offset_commit_key(group: str, topic: str, partition: int) -> bytes:
    """OffsetCommitKey: int16 type 1 | group | topic | int32 partition."""
    return struct.pack(">h", 1) + _string(group) + _string(topic) + struct.pack(">i", partition)


class Generator:
    """Simulates coordinator writes and appends their batches to per-partition segment writers."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.rng = random.Random(args.seed)
        self.codec = Compression.parse(args.codec)
        self.now = T0
        self.counts: Counter[str] = Counter()
        self.records = 0
        self.batches = 0
        rng = self.rng
        self.topics = [Topic(f"{rng.choice(_TEAMS)}.{rng.choice(_ENTITIES)}.v{i % 5 + 1}-{i:03d}",
                             rng.choice((4, 6, 8, 12, 16, 24, 32)), uuid.UUID(int=rng.getrandbits(128), version=4))
                       for i in range(max(8, args.groups // 4))]
        self.groups = [self._new_group(i) for i in range(args.groups)]
        self.writers = [SegmentWriter(Path(args.out) / partition_dir_name(p, TOPIC), args.segment_bytes)
                        for p in range(args.partitions)]
        self.open_txns: list[tuple[int, int, int]] = []  # (partition, producer id, due record count)
        self.next_pid = 1000

    def _new_group(self, i: int) -> Group:
        rng = self.rng
        gid = f"{rng.choice(_TEAMS)}.{rng.choice(_ENTITIES)}-consumer-{i:05d}"
        kind = "consumer" if rng.random() < 0.3 else "classic"
        topics = rng.sample(self.topics, rng.choice((1, 1, 1, 2, 2, 3)))
        members = [f"consumer-{gid[-5:]}-{j}-{uuid.UUID(int=rng.getrandbits(128), version=4)}"
                   for j in range(rng.randint(1, 8))]
        return Group(gid, partition_for(gid, self.args.partitions), kind, topics, members,
                     metadata=rng.random() < 0.5, user_data=rng.choice((0, 0, 512, 2048, 4096)),
                     eos=rng.random() < 0.08, next_member=len(members))

    # -- appending ----------------------------------------------------------------------------------
    def _append(self, partition: int, records: list[tuple[bytes, bytes | None]], names: list[str] | str, *,
                producer_id: int = -1) -> None:
        self.now += self.rng.randint(1, 40)
        w = self.writers[partition]
        txn = producer_id >= 0
        data = encode_batch([(k, v, self.now) for k, v in records], base_offset=w.next_offset,
                            compression=self.codec, producer_id=producer_id, producer_epoch=0 if txn else -1,
                            base_sequence=0, transactional=txn)
        w.append(data, len(records), self.now)
        self.batches += 1
        self.records += len(records)
        if isinstance(names, str):
            self.counts[names] += len(records)
        else:
            self.counts.update(names)

    def _marker(self, partition: int, producer_id: int, commit: bool) -> None:
        self.now += 1
        w = self.writers[partition]
        data = encode_control_batch(ControlType.COMMIT if commit else ControlType.ABORT, base_offset=w.next_offset,
                                    producer_id=producer_id, producer_epoch=0, coordinator_epoch=3,
                                    timestamp=self.now)
        w.append(data, 1, self.now)
        self.batches += 1
        self.records += 1
        self.counts["COMMIT" if commit else "ABORT"] += 1

    # -- events ----------------------------------------------------------------------------------------
    def commit(self, g: Group, *, partial: bool = False) -> None:
        rng = self.rng
        records = []
        tps = [(t.name, p) for t in g.topics for p in range(t.partitions)]
        if partial:
            tps = rng.sample(tps, max(1, len(tps) // 3))
        ts = self.now
        for tp in tps:
            key = g.keys.get(tp)
            if key is None:
                key = g.keys[tp] = offset_commit_key(g.group_id, tp[0], tp[1])
            off = g.offsets.get(tp, rng.randint(0, 1_000_000)) + rng.randint(1, 5000)
            g.offsets[tp] = off
            if g.metadata:
                # e.g. a stream processor's checkpoint handle: mostly incompressible
                meta = b'{"checkpoint":"%s","offset":%d}' % (b64encode(rng.randbytes(66)), off)
                value = _V3_HEAD.pack(3, off, 7, len(meta)) + meta + _Q.pack(ts)
            else:
                value = _V3_EMPTY.pack(3, off, 7, 0, ts)
            records.append((key, value))
        if g.eos:
            if g.producer_id < 0:
                g.producer_id = self.next_pid
                self.next_pid += 1
            if any(pid == g.producer_id for _p, pid, _d in self.open_txns):
                self._finish_txn(g.producer_id)
            self._append(g.partition, records, "OffsetCommit", producer_id=g.producer_id)
            self.open_txns.append((g.partition, g.producer_id, self.records + rng.randint(0, 2000)))
        else:
            self._append(g.partition, records, "OffsetCommit")

    def _finish_txn(self, pid: int) -> None:
        for i, (p, q, _due) in enumerate(self.open_txns):
            if q == pid:
                del self.open_txns[i]
                self._marker(p, pid, self.rng.random() < 0.9)
                return

    def due_markers(self) -> None:
        while self.open_txns and self.open_txns[0][2] <= self.records:
            p, pid, _due = self.open_txns.pop(0)
            self._marker(p, pid, self.rng.random() < 0.9)

    def delete_offsets(self, g: Group) -> None:
        """OffsetDelete / expiration: tombstones for some committed partitions."""
        if not g.offsets:
            return
        tps = self.rng.sample(sorted(g.offsets), min(len(g.offsets), self.rng.randint(1, 6)))
        for tp in tps:
            del g.offsets[tp]
        self._append(g.partition, [(g.keys[tp], None) for tp in tps], "OffsetCommit")
        self.counts["(tombstones, counted above too)"] += len(tps)

    def rebalance(self, g: Group) -> None:
        rng = self.rng
        if g.members and rng.random() < 0.3:
            left = g.members.pop(rng.randrange(len(g.members)))
            if g.kind == "consumer":
                self._consumer_leave(g, left)
        if rng.random() < 0.4 or not g.members:
            g.members.append(f"consumer-{g.group_id[-5:]}-{g.next_member}-{uuid.UUID(int=rng.getrandbits(128), version=4)}")
            g.next_member += 1
            if g.kind == "consumer":
                self._consumer_join(g, g.members[-1])
        g.generation += 1
        if g.kind == "classic":
            self._group_metadata(g)
        else:
            self._consumer_epoch(g)

    def _assignment(self, g: Group) -> dict[str, list[tuple[Topic, int]]]:
        out: dict[str, list[tuple[Topic, int]]] = {m: [] for m in g.members}
        i = 0
        for t in g.topics:
            for p in range(t.partitions):
                out[g.members[i % len(g.members)]].append((t, p))
                i += 1
        return out

    def _group_metadata(self, g: Group) -> None:
        rng = self.rng
        assignment = self._assignment(g)
        topics = tuple(t.name for t in g.topics)
        members = []
        for i, m in enumerate(g.members):
            parts = [(t.name, p) for t, p in assignment[m]]
            ud = rng.randbytes(g.user_data) if g.user_data else None
            sub = Subscription(topics=topics, owned_partitions=parts, generation_id=g.generation - 1)
            members.append(GroupMetadataValue.MemberMetadata(
                member_id=m, group_instance_id=None, client_id=m.rsplit("-", 5)[0], client_host=f"/10.1.{i}.{i + 7}",
                rebalance_timeout=300_000, session_timeout=45_000, subscription=encode_subscription(sub, 3),
                assignment=encode_assignment(Assignment(parts, ud), 3)))
        value = GroupMetadataValue(protocol_type="consumer", generation=g.generation, protocol="range",
                                   leader=g.members[0], current_state_timestamp=self.now, members=members)
        self._append(g.partition, [GroupMetadata(GroupMetadataKey(group=g.group_id), value, 3).encode()],
                     "GroupMetadata")

    def _consumer_join(self, g: Group, member: str) -> None:
        value = ConsumerGroupMemberMetadataValue(
            client_id=member.rsplit("-", 5)[0], client_host="/10.2.0.1",
            subscribed_topic_names=[t.name for t in g.topics], rebalance_timeout_ms=300_000,
            server_assignor="uniform")
        rec = ConsumerGroupMemberMetadata(ConsumerGroupMemberMetadataKey(group_id=g.group_id, member_id=member), value)
        self._append(g.partition, [rec.encode()], "ConsumerGroupMemberMetadata")

    def _consumer_leave(self, g: Group, member: str) -> None:
        recs = [ConsumerGroupCurrentMemberAssignment.tombstone(
                    ConsumerGroupCurrentMemberAssignmentKey(group_id=g.group_id, member_id=member)),
                ConsumerGroupTargetAssignmentMember.tombstone(
                    ConsumerGroupTargetAssignmentMemberKey(group_id=g.group_id, member_id=member)),
                ConsumerGroupMemberMetadata.tombstone(
                    ConsumerGroupMemberMetadataKey(group_id=g.group_id, member_id=member))]
        self._append(g.partition, [r.encode() for r in recs], [r.NAME for r in recs])
        self.counts["(tombstones, counted above too)"] += 3

    def _consumer_epoch(self, g: Group) -> None:
        epoch = g.generation
        recs: list = [ConsumerGroupMetadata(ConsumerGroupMetadataKey(group_id=g.group_id),
                                            ConsumerGroupMetadataValue(epoch=epoch, metadata_hash=epoch * 7919)),
                      ConsumerGroupTargetAssignmentMetadata(ConsumerGroupTargetAssignmentMetadataKey(group_id=g.group_id),
                                                            ConsumerGroupTargetAssignmentMetadataValue(assignment_epoch=epoch))]
        assignment = self._assignment(g)
        for m in g.members:
            by_topic: dict[uuid.UUID, list[int]] = {}
            for t, p in assignment[m]:
                by_topic.setdefault(t.topic_id, []).append(p)
            tps = [ConsumerGroupTargetAssignmentMemberValue.TopicPartition(topic_id=tid, partitions=ps)
                   for tid, ps in by_topic.items()]
            recs.append(ConsumerGroupTargetAssignmentMember(
                ConsumerGroupTargetAssignmentMemberKey(group_id=g.group_id, member_id=m),
                ConsumerGroupTargetAssignmentMemberValue(topic_partitions=tps)))
        self._append(g.partition, [r.encode() for r in recs], [r.NAME for r in recs])
        current = []
        for m in g.members:
            tps2 = [ConsumerGroupCurrentMemberAssignmentValue.TopicPartitions(topic_id=t.topic_id, partitions=[p])
                    for t, p in assignment[m]]
            current.append(ConsumerGroupCurrentMemberAssignment(
                ConsumerGroupCurrentMemberAssignmentKey(group_id=g.group_id, member_id=m),
                ConsumerGroupCurrentMemberAssignmentValue(member_epoch=epoch, previous_member_epoch=epoch - 1, state=0,
                                                          assigned_partitions=tps2)))
        self._append(g.partition, [r.encode() for r in current], [r.NAME for r in current])

    # -- the run -----------------------------------------------------------------------------------------
    def run(self, progress: bool) -> None:
        rng = self.rng
        target = self.args.records
        for g in self.groups:  # every group starts with a rebalance
            self.rebalance(g)
            if self.records >= target:
                break
        bar = _progress(target, progress)
        last = 0
        # some groups are much busier than others (Zipf-like), every group is active
        cum, total = [], 0.0
        for i in range(len(self.groups)):
            total += 1.0 / (i + 10) ** 0.9
            cum.append(total)
        pick = rng.choices
        groups = self.groups
        while self.records < target:
            g = pick(groups, cum_weights=cum)[0]
            r = rng.random()
            if r < 0.93:
                self.commit(g, partial=rng.random() < 0.5)
            elif r < 0.985:
                self.rebalance(g)
            else:
                self.delete_offsets(g)
            self.due_markers()
            if self.records - last >= 50_000:
                bar.update(self.records - last)
                last = self.records
        # the transactions still open at the end stay open, except most of them
        while len(self.open_txns) > 3:
            p, pid, _due = self.open_txns.pop(0)
            self._marker(p, pid, True)
        bar.update(self.records - last)
        bar.close()
        for w in self.writers:
            w.close()


class _BatchInfo(NamedTuple):
    """What `build_indexes` needs of a batch."""

    last_offset: int
    max_timestamp: int
    size: int


class SegmentWriter:
    """Appends encoded batches to `<dir>/<base>.log`, rolling to a new segment past `segment_bytes`."""

    def __init__(self, directory: Path, segment_bytes: int) -> None:
        self.dir = directory
        self.segment_bytes = segment_bytes
        self.next_offset = 0
        self.files: list[Path] = []
        self._f = None
        self._base = 0
        self._size = 0
        self._infos: list[_BatchInfo] = []

    def append(self, data: bytes, count: int, timestamp: int) -> None:
        if self._f is None or self._size >= self.segment_bytes:
            self._roll()
        self._f.write(data)
        self._size += len(data)
        self.next_offset += count
        self._infos.append(_BatchInfo(self.next_offset - 1, timestamp, len(data)))

    def _roll(self) -> None:
        self._close_segment()
        self.dir.mkdir(parents=True, exist_ok=True)
        self._base = self.next_offset
        path = self.dir / segment_file_name(self._base)
        self.files.append(path)
        self._f = open(path, "wb")
        self._size = 0
        self._infos = []

    def _close_segment(self) -> None:
        if self._f is None:
            return
        self._f.close()
        index, timeindex = build_indexes(self._infos, self._base)
        (self.dir / segment_file_name(self._base, ".index")).write_bytes(index)
        (self.dir / segment_file_name(self._base, ".timeindex")).write_bytes(timeindex)
        self._f = None

    def close(self) -> None:
        self._close_segment()


class _NoBar:
    def update(self, _n: int) -> None:
        pass

    def close(self) -> None:
        pass


def _progress(total: int, enabled: bool):
    if not enabled:
        return _NoBar()
    try:
        from tqdm import tqdm
    except ImportError:
        return _NoBar()
    return tqdm(total=total, desc="generating", unit="rec", unit_scale=True, leave=False, file=sys.stderr)


def make_dump(out: str | Path, *, records: int = 5_000_000, partitions: int = 8, groups: int = 2000,
              codec: str = "lz4", segment_bytes: int = 32 * 1024 * 1024, seed: int = 42,
              progress: bool = False) -> dict:
    """Write the dump into `out` (which must not hold one already); returns the manifest."""
    out = Path(out)
    if out.exists() and any(out.iterdir()):
        raise SystemExit(f"{out} is not empty; pick a new directory")
    args = argparse.Namespace(records=records, partitions=partitions, groups=groups, codec=codec,
                              segment_bytes=segment_bytes, seed=seed, out=str(out))
    t0 = time.perf_counter()
    gen = Generator(args)
    gen.run(progress)
    files = [f for w in gen.writers for f in w.files]
    manifest = {
        "records": gen.records, "batches": gen.batches, "partitions": partitions, "groups": groups,
        "codec": Compression.parse(codec).label, "segment_bytes": segment_bytes, "seed": seed,
        "segments": len(files), "log_bytes": sum(f.stat().st_size for f in files),
        "by_type": dict(sorted(gen.counts.items())), "seconds": round(time.perf_counter() - t0, 1),
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return manifest


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--records", type=int, default=5_000_000, help="records to write, markers included (default 5M)")
    ap.add_argument("--partitions", type=int, default=8, help="__consumer_offsets partitions (default 8)")
    ap.add_argument("--groups", type=int, default=2000, help="consumer groups (default 2000)")
    ap.add_argument("--codec", default="lz4", choices=["none", "gzip", "snappy", "lz4", "zstd"],
                    help="compression of every batch (default lz4)")
    ap.add_argument("--segment-bytes", type=int, default=32 * 1024 * 1024,
                    help="roll to a new segment past this size (default 32 MiB)")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--out", required=True, help="directory to create (must be empty or missing)")
    ap.add_argument("--no-progress", action="store_true")
    args = ap.parse_args(argv)
    if args.records <= 0 or args.partitions <= 0 or args.groups <= 0:
        ap.error("--records, --partitions and --groups must be positive")
    m = make_dump(args.out, records=args.records, partitions=args.partitions, groups=args.groups, codec=args.codec,
                  segment_bytes=args.segment_bytes, seed=args.seed, progress=not args.no_progress)
    print(f"{m['records']:,} records in {m['batches']:,} batches, {m['segments']} segments, "
          f"{m['log_bytes'] / 1e6:.1f} MB ({m['codec']}), {m['seconds']} s -> {args.out}")
    for name, n in m["by_type"].items():
        print(f"  {name:<40} {n:>10,}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
