"""How Kafka's tests compare answers and records, for the consumer and share parity tests alike
(`assertResponseEquals`, `assertRecordsEquals`)."""
from __future__ import annotations

from collections.abc import Mapping

from kgroup import Coordinator, ErrorCode
from kgroup.protocol import ms

#: Kafka's test contexts' heartbeat interval and session timeout
HEARTBEAT_INTERVAL_MS, SESSION_TIMEOUT_MS = 5000, 45_000


def answer(r) -> tuple:
    """A heartbeat response as Kafka's assertResponseEquals sees it: (error, member id, member
    epoch, heartbeat interval, assignment by topic id or None when the field is left out)."""
    assignment = None if r.assignment is None else {tp.topic_id: sorted(tp.partitions)
                                                     for tp in r.assignment.topic_partitions}
    return r.error_code, r.member_id, r.member_epoch, ms(r.heartbeat_interval), assignment


def ok(member_id: str, epoch: int, assignment: Mapping | None = None, interval: int = HEARTBEAT_INTERVAL_MS) -> tuple:
    """The `answer` of a successful heartbeat."""
    a = None if assignment is None else {t: sorted(ps) for t, ps in assignment.items()}
    return ErrorCode.none, member_id, epoch, interval, a


def written(c: Coordinator, since: int) -> list:
    """The `__consumer_offsets` records appended since log position `since`, in order."""
    return [c.log.entry_at(i).record for i in range(since, c.position)]
