"""What a simulated consumer commits: the positions it consumed and has not committed yet, as
the OffsetCommit request both group protocols send (stamped with the generation of a classic
member, or the member epoch of a KIP-848 one)."""
from __future__ import annotations

from collections.abc import Mapping, Set
from typing import Any

from kgroup.errors import ErrorCode
from kgroup.protocol import request

E = ErrorCode
TP = tuple[str, int]


def uncommitted(positions: Mapping[TP, int], owned: Set[TP], committed: Mapping[TP, int]) -> dict[TP, int]:
    """The consumed positions of owned partitions that are not what was last committed."""
    return {tp: off for tp, off in positions.items() if tp in owned and committed.get(tp) != off}


def offset_commit(config: Any, member_id: str, generation_or_epoch: int, offsets: Mapping[TP, int]) -> Any:
    """OffsetCommit of `offsets` (version `config.commit_version`), sorted by topic then partition."""
    by_topic: dict[str, list] = {}
    for (t, p), off in sorted(offsets.items()):
        by_topic.setdefault(t, []).append({"partition_index": p, "committed_offset": off,
                                           "committed_leader_epoch": -1, "committed_metadata": ""})
    return request("OffsetCommit", config.commit_version, group_id=config.group_id,
                   generation_id_or_member_epoch=generation_or_epoch, member_id=member_id,
                   group_instance_id=config.group_instance_id,
                   topics=[{"name": t, "partitions": ps} for t, ps in by_topic.items()])


def commit_error(resp: Any) -> ErrorCode | None:
    """None when the coordinator took every offset, else one of its errors (the one the client reports)."""
    errors = {p.error_code for t in resp.topics for p in t.partitions}
    return None if errors == {E.none} else next(iter(errors - {E.none}))


__all__ = ["uncommitted", "offset_commit", "commit_error"]
