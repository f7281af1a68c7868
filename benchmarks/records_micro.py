"""Micro benchmark: µs per `decode_record` call (key + value into a typed record).

    python benchmarks/records_micro.py

Prints one line per case. Keys repeat as in a real `__consumer_offsets` log
(the key cache is warm); values are distinct byte strings.
"""
from __future__ import annotations

import timeit
import uuid

from kgroup.records import (ConsumerGroupMemberMetadata, ConsumerGroupMemberMetadataKey,
                            ConsumerGroupMemberMetadataValue, OffsetCommit, OffsetCommitKey,
                            OffsetCommitValue, decode_record)

N = 200_000


def _offset_commits(n: int) -> list[tuple[bytes, bytes]]:
    keys = [OffsetCommit.tombstone(OffsetCommitKey(group=f"group-{g}", topic=f"topic-{t}", partition=p))
            .encode()[0] for g in range(10) for t in range(10) for p in range(10)]
    out = []
    for i in range(n):
        value = OffsetCommitValue(offset=1_000_000 + i, leader_epoch=7, metadata="",
                                  commit_timestamp=1_718_000_000_000 + i)
        out.append((keys[i % len(keys)], OffsetCommit(OffsetCommitKey(group="g", topic="t", partition=0),
                                                      value, 3).encode()[1]))
    return out


def _member_metadata(n: int) -> list[tuple[bytes, bytes]]:
    key = ConsumerGroupMemberMetadata.tombstone(
        ConsumerGroupMemberMetadataKey(group_id="orders", member_id=str(uuid.UUID(int=1)))).encode()[0]
    value = ConsumerGroupMemberMetadataValue(
        instance_id=None, rack_id="rack-a", client_id="consumer-orders-1", client_host="/10.0.0.12",
        subscribed_topic_names=["orders", "payments", "refunds"], subscribed_topic_regex=None,
        rebalance_timeout_ms=300_000, server_assignor="uniform")
    vb = ConsumerGroupMemberMetadata(ConsumerGroupMemberMetadataKey(group_id="g", member_id="m"), value).encode()[1]
    return [(key, bytes(vb)) for _ in range(n)]


def _bench(name: str, pairs: list[tuple[bytes, bytes]]) -> None:
    dec = decode_record
    for k, v in pairs[:1000]:
        dec(k, v)  # warm the key cache

    def run() -> None:
        for k, v in pairs:
            dec(k, v)

    best = min(timeit.repeat(run, number=1, repeat=5))
    print(f"{name:<44} {best / len(pairs) * 1e6:6.3f} µs/record  ({len(pairs) / best / 1e6:.2f} M records/s)")


def main() -> None:
    _bench("OffsetCommit v3 (1000 distinct keys)", _offset_commits(N))
    _bench("ConsumerGroupMemberMetadata v0", _member_metadata(N))


if __name__ == "__main__":
    main()
