"""Share long polls: ShareFetch held until records may be there, as Kafka's purgatory holds it.

The share-partition code answers a ShareFetch at once (it has no purgatory), so a client with
nothing to fetch would ask again and again (thousands of times a second). Kafka holds such a
fetch until records may be there or MaxWaitMs passes; so does the server, before handing the
fetch to the coordinator, when nothing changed since this member's last fetch came back empty.
Fetches carrying acknowledgements, or opening or closing a share session, go through at once.
"""
from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from kgroup.errors import ErrorCode
from kgroup.protocol import ms

SHARE_FETCH, SHARE_ACKNOWLEDGE = 78, 79

#: "records may have become available to a share group" (a produce, a transaction's markers,
#: timers writing share state): `SharePolls.bump` provides it, to `Broker(on_data=...)` and
#: `ServerClock(share_state_written=...)`, so that the waiting ShareFetches look again
Wakeup = Callable[[], None]


class SharePolls:
    """The server's waiting ShareFetches: one generation counter, bumped on every `Wakeup`."""

    def __init__(self) -> None:
        self._generation = 0
        self._changed: asyncio.Future | None = None
        #: (group, member) -> the generation when that member's last ShareFetch acquired nothing
        self._idle: dict[tuple[str, str], int] = {}

    def bump(self) -> None:
        """A `Wakeup`: let every waiting ShareFetch through."""
        self._generation += 1
        if self._changed is not None and not self._changed.done():
            self._changed.set_result(None)
        self._changed = None

    async def wait(self, req: Any) -> None:
        """Hold a ShareFetch while nothing changed since this member's last one came back empty
        (at most its MaxWaitMs)."""
        idle_since = self._idle.get((req.group_id, req.member_id))
        if (idle_since != self._generation or req.share_session_epoch in (0, -1)
                or _has_acknowledgements(req)):
            return
        if self._changed is None:
            self._changed = asyncio.get_running_loop().create_future()
        try:
            await asyncio.wait_for(asyncio.shield(self._changed), ms(req.max_wait) / 1000)
        except asyncio.TimeoutError:
            pass

    def answered(self, api_key: int, req: Any, answer: Any) -> None:
        """Note a ShareFetch or ShareAcknowledge answer: did this member come back empty?"""
        key = (req.group_id, req.member_id)
        if _has_acknowledgements(req):
            self.bump()  # released or acknowledged records may let others progress
        acquired = any(p.acquired_records for t in getattr(answer, "responses", ()) for p in t.partitions
                       if hasattr(p, "acquired_records"))
        if api_key == SHARE_FETCH and not acquired and getattr(answer, "error_code", 0) == ErrorCode.none:
            self._idle[key] = self._generation
        else:
            self._idle.pop(key, None)


def _has_acknowledgements(req: Any) -> bool:
    return any(p.acknowledgement_batches for t in req.topics for p in t.partitions)
