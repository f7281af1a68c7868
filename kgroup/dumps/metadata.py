"""Topic names, ids and partition counts from a KRaft broker's metadata log (`__cluster_metadata-0`).

KIP-848, Streams and share records name topics by id only. A KRaft broker's log dir also holds
the cluster's metadata log, `__cluster_metadata-0/`: segments (`<offset>.log`) and snapshots
(`<end offset>-<epoch>.checkpoint`), both plain magic-2 record batches. Each data record's value
is an `ApiMessageAndVersion` frame (Kafka's `AbstractApiMessageSerde`): unsigned varints
frame version (1), record type (the metadata apiKey) and record version, then the message.

    md = read_cluster_metadata("broker-copy/")      # a log dir, or the __cluster_metadata-0 dir
    md.cluster()                                     # a kgroup Cluster: names, ids, partition counts
    md.topics, md.snapshot, md.skipped, md.problems

Only what names topics is decoded -- `TopicRecord` (2), `PartitionRecord` (3) and
`RemoveTopicRecord` (9), laid out as in Kafka's metadata/src/main/resources/common/metadata/*.json;
every other record type (brokers, configs, features, ACLs, ...) and every control batch (leader
changes, snapshot header/footer, KRaft voters) is skipped and counted. The state is the newest
snapshot followed by the log records at or after its end offset, as a broker loads it.

A log dir's `replication-offset-checkpoint` (the high watermark of every partition the broker
holds) gives log end offsets, hence lag, when it is there.

`write_cluster_metadata` writes such a directory from a `Cluster` (used for `data/` samples and
tests): a snapshot, then the log.
"""
from __future__ import annotations

import os
import uuid
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from kgroup.cluster import Cluster
from kgroup.log import ControlType, CorruptBatch, encode_batch, encode_control_batch, read_batches, write_segment
from kgroup.log.segment import parse_partition_dir_name, parse_segment_file_name
from kgroup.records.codec import DecodeFailure, get_decoder, get_encoder, read_uvarint, write_uvarint
from kgroup.records.schema import Field as F, Message
from kgroup.records.structs import build_message_classes

from .model import DumpError

__all__ = ["METADATA_TOPIC", "METADATA_DIR", "ClusterMetadata", "MetadataTopic", "find_cluster_metadata",
           "read_cluster_metadata", "write_cluster_metadata", "read_offset_checkpoint", "is_metadata_path"]

METADATA_TOPIC = "__cluster_metadata"
METADATA_DIR = f"{METADATA_TOPIC}-0"
#: The broker's per-log-dir file of high watermarks (`ReplicaManager`'s OffsetCheckpointFile).
HIGH_WATERMARKS = "replication-offset-checkpoint"
_FRAME_VERSION = 1  # AbstractApiMessageSerde.DEFAULT_FRAME_VERSION; 0 was KRaft's 2.8 preview

# The three record types that say which topics exist (Kafka's metadata schemas, trunk).
TOPIC_RECORD = Message(
    "TopicRecord",
    F("Name", "string"),
    F("TopicId", "uuid"),
    versions="0", flexible="0+")
PARTITION_RECORD = Message(
    "PartitionRecord",
    F("PartitionId", "int32", default=-1),
    F("TopicId", "uuid"),
    F("Replicas", "[]int32"),
    F("Isr", "[]int32"),
    F("RemovingReplicas", "[]int32"),
    F("AddingReplicas", "[]int32"),
    F("Leader", "int32", default=-1),
    F("LeaderRecoveryState", "int8", tag=0),
    F("LeaderEpoch", "int32", default=-1),
    F("PartitionEpoch", "int32", default=-1),
    F("Directories", "[]uuid", versions="1+"),            # KIP-858
    F("EligibleLeaderReplicas", "[]int32", versions="2+", nullable="2+", tag=1, default=None),  # KIP-966
    F("LastKnownElr", "[]int32", versions="2+", nullable="2+", tag=2, default=None),
    versions="0-2", flexible="0+")
REMOVE_TOPIC_RECORD = Message(
    "RemoveTopicRecord",
    F("TopicId", "uuid"),
    versions="0-1", flexible="1+")
# Written to the samples so that a reader meets a record type it must skip.
FEATURE_LEVEL_RECORD = Message(
    "FeatureLevelRecord",
    F("Name", "string"),
    F("FeatureLevel", "int16"),
    versions="0", flexible="0+")

_TYPES = {2: TOPIC_RECORD, 3: PARTITION_RECORD, 9: REMOVE_TOPIC_RECORD, 12: FEATURE_LEVEL_RECORD}
_DECODED = (2, 3, 9)
for _m in _TYPES.values():
    build_message_classes(_m)
TopicRecord = TOPIC_RECORD.cls
PartitionRecord = PARTITION_RECORD.cls
RemoveTopicRecord = REMOVE_TOPIC_RECORD.cls
FeatureLevelRecord = FEATURE_LEVEL_RECORD.cls
_NAMES = {2: "TopicRecord", 3: "PartitionRecord", 9: "RemoveTopicRecord", 12: "FeatureLevelRecord"}


@dataclass
class MetadataTopic:
    """A topic as the metadata log describes it."""

    name: str
    topic_id: uuid.UUID
    partitions: set[int] = field(default_factory=set)

    @property
    def partition_count(self) -> int:
        return max(self.partitions) + 1 if self.partitions else 0


@dataclass
class ClusterMetadata:
    """What a metadata log (snapshot + log) says about topics, and how it was read."""

    source: str
    #: topic id -> topic, as of the end of the log
    topics: dict[uuid.UUID, MetadataTopic] = field(default_factory=dict)
    #: the snapshot loaded first (None: the log from its start)
    snapshot: str | None = None
    #: the offset after the last record applied
    end_offset: int = 0
    #: records applied, by type name
    applied: Counter = field(default_factory=Counter)
    #: records skipped (types not needed here, control records), by type name
    skipped: Counter = field(default_factory=Counter)
    #: unreadable parts, with file and byte position
    problems: list[str] = field(default_factory=list)
    #: (topic, partition) -> high watermark, from the log dir's replication-offset-checkpoint
    end_offsets: dict[tuple[str, int], int] = field(default_factory=dict)

    def by_name(self) -> dict[str, MetadataTopic]:
        return {t.name: t for t in self.topics.values()}

    def cluster(self, cluster: Cluster | None = None) -> Cluster:
        """A `Cluster` with every topic (name, id, partition count) and the known end offsets
        (added to `cluster` when given)."""
        c = cluster if cluster is not None else Cluster()
        for t in sorted(self.topics.values(), key=lambda t: t.name):
            if not t.partitions or t.name in c:
                continue
            c.create_topic(t.name, t.partition_count, topic_id=t.topic_id)
        for (name, partition), offset in sorted(self.end_offsets.items()):
            if name in c and 0 <= partition < c.partitions(name):
                c.set_end_offset(name, partition, offset)
        return c

    def summary(self) -> str:
        """One line: where the metadata came from and what it holds."""
        what = f"{len(self.topics)} topics from {self.source}"
        if self.snapshot is not None:
            what += f" (snapshot {Path(self.snapshot).name}, then the log to offset {self.end_offset})"
        else:
            what += f" (the log to offset {self.end_offset})"
        if self.end_offsets:
            what += f"; end offsets of {len(self.end_offsets)} partitions from {HIGH_WATERMARKS}"
        return what

    def as_dict(self) -> dict:
        return {"source": self.source, "snapshot": self.snapshot, "end_offset": self.end_offset,
                "topics": [{"name": t.name, "topic_id": str(t.topic_id), "partitions": t.partition_count}
                           for t in sorted(self.topics.values(), key=lambda t: t.name)],
                "applied": dict(self.applied), "skipped": dict(self.skipped), "problems": list(self.problems),
                "end_offsets": len(self.end_offsets)}


# ---------------------------------------------------------------------------------------------
# finding it


def is_metadata_path(path: str | os.PathLike[str]) -> bool:
    """Whether `path` is a metadata log directory (`__cluster_metadata-0`) or a file in one."""
    p = Path(path)
    for d in (p, p.parent):
        parsed = parse_partition_dir_name(d.name)
        if parsed is not None and parsed[0] == METADATA_TOPIC:
            return True
    return False


def find_cluster_metadata(paths: Iterable[str | os.PathLike[str]]) -> Path | None:
    """The first `__cluster_metadata-0` directory among `paths` or directly inside one of them."""
    for path in paths:
        p = Path(path)
        if p.is_file() and is_metadata_path(p):
            return p.parent
        if p.is_dir():
            if is_metadata_path(p):
                return p
            child = p / METADATA_DIR
            if child.is_dir():
                return child
    return None


# ---------------------------------------------------------------------------------------------
# reading


def _checkpoint_end(name: str) -> int | None:
    """End offset of a snapshot file `<end offset:20>-<epoch:10>.checkpoint`, else None."""
    if not name.endswith(".checkpoint"):
        return None
    stem = name[:-len(".checkpoint")]
    offset, sep, epoch = stem.partition("-")
    if not sep or not offset.isdigit() or not epoch.isdigit():
        return None
    return int(offset)


def _decode_frame(value: bytes) -> tuple[int, int, int]:
    """(record type, version, position of the message) of an ApiMessageAndVersion frame."""
    frame, pos = read_uvarint(value, 0)
    if frame != _FRAME_VERSION:
        raise DecodeFailure(0, f"metadata frame version {frame} (only {_FRAME_VERSION} is known)")
    api_key, pos = read_uvarint(value, pos)
    version, pos = read_uvarint(value, pos)
    return api_key, version, pos


def _decode_message(api_key: int, version: int, value: bytes, pos: int):
    m = _TYPES[api_key]
    if api_key == 9:
        # RemoveTopicRecord: every version starts with the topic id (v0 was not flexible, v1 is)
        if len(value) < pos + 16:
            raise DecodeFailure(pos, "RemoveTopicRecord shorter than its topic id")
        return RemoveTopicRecord(topic_id=uuid.UUID(bytes=bytes(value[pos:pos + 16])))
    if version not in m.version_list:
        raise DecodeFailure(pos, f"{m.name} version {version} (known: {', '.join(map(str, m.version_list))})")
    obj, end = get_decoder(m, version, m.is_flexible(version), False)(value, pos)
    if end != len(value):
        raise DecodeFailure(end, f"{len(value) - end} bytes after the {m.name}")
    return obj


class _Loader:
    def __init__(self, md: ClusterMetadata) -> None:
        self.md = md

    def apply_file(self, path: Path, min_offset: int) -> None:
        """Apply the records of one segment or snapshot file at or above `min_offset`."""
        md = self.md
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise DumpError(f"cannot read {path}: {exc}") from exc
        for item in read_batches(data, source=str(path)):
            if type(item) is CorruptBatch:
                md.problems.append(f"{path} @ byte {item.position}: corrupt span of {item.length} bytes: {item.reason}")
                continue
            if item.is_control:
                for rec in item.records:
                    key = rec[2] or b""
                    ctype = int.from_bytes(key[2:4], "big", signed=True) if len(key) >= 4 else -1
                    name = ControlType(ctype).name if ctype in ControlType._value2member_map_ else f"control({ctype})"
                    md.skipped[name] += 1
                continue
            for rec in item.records:
                offset, value = rec[0], rec[3]
                if offset < min_offset:
                    continue
                md.end_offset = max(md.end_offset, offset + 1)
                self.apply(path, item.position, offset, value)

    def apply(self, path: Path, position: int, offset: int, value: bytes | None) -> None:
        md = self.md
        if value is None:
            md.problems.append(f"{path} @ byte {position}: metadata record at offset {offset} has no value")
            return
        try:
            api_key, version, pos = _decode_frame(value)
            if api_key not in _DECODED:
                md.skipped[_NAMES.get(api_key, f"type {api_key}")] += 1
                return
            msg = _decode_message(api_key, version, value, pos)
        except (DecodeFailure, IndexError) as exc:
            reason = exc.reason if isinstance(exc, DecodeFailure) else "truncated"
            md.problems.append(f"{path} @ byte {position}: metadata record at offset {offset}: {reason}")
            return
        md.applied[_NAMES[api_key]] += 1
        if api_key == 2:
            md.topics[msg.topic_id] = MetadataTopic(msg.name, msg.topic_id)
        elif api_key == 3:
            topic = md.topics.get(msg.topic_id)
            if topic is None:
                md.problems.append(f"{path} @ byte {position}: PartitionRecord at offset {offset} for unknown "
                                   f"topic id {msg.topic_id}")
            else:
                topic.partitions.add(msg.partition_id)
        else:
            md.topics.pop(msg.topic_id, None)


def read_offset_checkpoint(path: str | os.PathLike[str]) -> dict[tuple[str, int], int]:
    """A broker's offset checkpoint file (`replication-offset-checkpoint`, ...): version 0, a
    count, then `topic partition offset` lines. Raises DumpError when it is not one."""
    p = Path(path)
    try:
        lines = p.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise DumpError(f"cannot read {p}: {exc}") from exc
    if len(lines) < 2 or lines[0].strip() != "0" or not lines[1].strip().isdigit():
        raise DumpError(f"{p}: not an offset checkpoint file (version 0, then a count)")
    out: dict[tuple[str, int], int] = {}
    for n, line in enumerate(lines[2:], start=3):
        parts = line.split()
        if len(parts) != 3 or not parts[1].isdigit() or not parts[2].lstrip("-").isdigit():
            raise DumpError(f"{p}:{n}: expected 'topic partition offset', got {line!r}")
        out[(parts[0], int(parts[1]))] = int(parts[2])
    if len(out) != int(lines[1]):
        raise DumpError(f"{p}: says {lines[1].strip()} entries but holds {len(out)}")
    return out


def read_cluster_metadata(path: str | os.PathLike[str]) -> ClusterMetadata:
    """Read the topics of a metadata log: `path` is a `__cluster_metadata-0` directory or a log
    dir holding one. The newest snapshot is loaded, then the log records at or after its end
    offset; the log dir's `replication-offset-checkpoint`, if any, gives end offsets. Unreadable
    parts are listed in `problems` (never raised); a path without a metadata log raises DumpError.
    """
    p = Path(path)
    d = find_cluster_metadata([p])
    if d is None:
        raise DumpError(f"{p}: no {METADATA_DIR} directory (a KRaft broker's metadata log) there")
    md = ClusterMetadata(str(d))
    files = [f for f in d.iterdir() if f.is_file()]
    snapshots = sorted((end, f) for f in files if (end := _checkpoint_end(f.name)) is not None)
    segments = sorted((base, f) for f in files if (base := parse_segment_file_name(f.name)) is not None)
    loader = _Loader(md)
    start = 0
    if snapshots:
        start, snap = snapshots[-1]
        md.snapshot = str(snap)
        loader.apply_file(snap, 0)
        md.end_offset = start
    if segments and segments[0][0] > start:
        md.problems.append(f"{d}: the log starts at offset {segments[0][0]} and no snapshot covers the records "
                           f"before it: topics created earlier may be missing")
    for _base, seg in segments:
        loader.apply_file(seg, start)
    hw = d.parent / HIGH_WATERMARKS
    if hw.is_file():
        try:
            md.end_offsets = read_offset_checkpoint(hw)
        except DumpError as exc:
            md.problems.append(str(exc))
    return md


# ---------------------------------------------------------------------------------------------
# writing (samples, tests)


def encode_metadata_record(api_key: int, version: int, message) -> bytes:
    """An ApiMessageAndVersion frame: frame version, type, version (unsigned varints), message."""
    m = _TYPES[api_key]
    w = bytearray()
    write_uvarint(w, _FRAME_VERSION)
    write_uvarint(w, api_key)
    write_uvarint(w, version)
    get_encoder(m, version, m.is_flexible(version), False)(message, w)
    return bytes(w)


def _topic_records(cluster: Cluster, names: Iterable[str]) -> list[bytes]:
    out = []
    for name in names:
        t = cluster.topic(name)
        out.append(encode_metadata_record(2, 0, TopicRecord(name=name, topic_id=t.topic_id)))
        for p in range(t.partitions):
            out.append(encode_metadata_record(3, 0, PartitionRecord(
                partition_id=p, topic_id=t.topic_id, replicas=[1], isr=[1], leader=1, leader_epoch=0,
                partition_epoch=0)))
    return out


def _control_value(ctype: ControlType, timestamp: int) -> bytes:
    if ctype == ControlType.SNAPSHOT_HEADER:   # SnapshotHeaderRecord v0: Version, LastContainedLogTimestamp
        return (0).to_bytes(2, "big") + (0).to_bytes(2, "big") + timestamp.to_bytes(8, "big") + b"\x00"
    if ctype == ControlType.SNAPSHOT_FOOTER:   # SnapshotFooterRecord v0: Version
        return (0).to_bytes(2, "big") + (0).to_bytes(2, "big") + b"\x00"
    # LeaderChangeMessage v0: Version, LeaderId 1, Voters [1], GrantingVoters [1]
    voter = (1).to_bytes(4, "big") + b"\x00"
    return (0).to_bytes(2, "big") + (0).to_bytes(2, "big") + (1).to_bytes(4, "big") + b"\x02" + voter + b"\x02" + voter + b"\x00"


def write_cluster_metadata(cluster: Cluster, log_dir: str | os.PathLike[str], *, in_snapshot: Iterable[str] = (),
                           timestamp: int = 0, end_offsets: bool = True) -> list[Path]:
    """Write `<log_dir>/__cluster_metadata-0` describing `cluster`'s topics, as a KRaft broker
    keeps it: a leader-change control batch and a feature-level record first, the topics named
    in `in_snapshot` (TopicRecord + PartitionRecords) then a snapshot `.checkpoint` of everything
    so far, then the other topics in the log after it. With `end_offsets`, also the log dir's
    `replication-offset-checkpoint` from the cluster's end offsets. Returns the files written.
    """
    d = Path(log_dir) / METADATA_DIR
    d.mkdir(parents=True, exist_ok=True)
    wanted = set(in_snapshot)
    snap_names = [n for n in cluster.topic_names() if n in wanted]
    rest = [n for n in cluster.topic_names() if n not in wanted]
    batches = [encode_control_batch(ControlType.LEADER_CHANGE, base_offset=0, producer_id=-1, producer_epoch=-1,
                                    timestamp=timestamp, partition_leader_epoch=1,
                                    value=_control_value(ControlType.LEADER_CHANGE, timestamp))]
    offset = 1
    head = [encode_metadata_record(12, 0, FeatureLevelRecord(name="metadata.version", feature_level=27)),
            *_topic_records(cluster, snap_names)]
    batches.append(encode_batch([(None, v, timestamp) for v in head], base_offset=offset, partition_leader_epoch=1))
    offset += len(head)
    written = []
    if snap_names:
        # the snapshot holds the state up to (not including) `offset`: header, the records, footer
        snap = [encode_control_batch(ControlType.SNAPSHOT_HEADER, base_offset=0, producer_id=-1, producer_epoch=-1,
                                     timestamp=timestamp, partition_leader_epoch=1,
                                     value=_control_value(ControlType.SNAPSHOT_HEADER, timestamp)),
                encode_batch([(None, v, timestamp) for v in head], base_offset=1, partition_leader_epoch=1),
                encode_control_batch(ControlType.SNAPSHOT_FOOTER, base_offset=1 + len(head), producer_id=-1,
                                     producer_epoch=-1, timestamp=timestamp, partition_leader_epoch=1,
                                     value=_control_value(ControlType.SNAPSHOT_FOOTER, timestamp))]
        path = d / f"{offset:020d}-{1:010d}.checkpoint"
        path.write_bytes(b"".join(snap))
        written.append(path)
    tail = _topic_records(cluster, rest)
    if tail:
        batches.append(encode_batch([(None, v, timestamp) for v in tail], base_offset=offset, partition_leader_epoch=1))
    write_segment(d, 0, batches)
    written += sorted(f for f in d.iterdir() if f.suffix in (".log", ".index", ".timeindex"))
    if end_offsets:
        rows = [(t.name, p, o) for t in cluster.topics() for p, o in sorted(t.end_offsets.items())]
        hw = Path(log_dir) / HIGH_WATERMARKS
        hw.write_text("0\n" + f"{len(rows)}\n" + "".join(f"{n} {p} {o}\n" for n, p, o in rows), encoding="utf-8")
        written.append(hw)
    return written
