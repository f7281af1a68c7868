"""Transaction status of records, decided while streaming one partition in log order.

A transactional record's fate is only known when the COMMIT/ABORT marker of its producer id
lands in the same partition, after it. To keep entries in log order, `TxnOrder` holds back the
entries of a partition from the first record of a still-undecided transaction onwards, and
releases them as soon as everything before them is decided. Non-transactional entries pass
straight through while nothing is held.

Memory bound: the entries between the first record of the oldest undecided transaction of the
partition being read and the marker that decides it (for a transaction left open, up to the end
of the partition). Per producer id only the list of its undecided entries is kept. Kafka aborts
transactions after `transaction.max.timeout.ms` (15 min by default), so in practice the window is
what a partition receives in that time; a dump cut in the middle of a transaction holds its tail.
"""
from __future__ import annotations

from collections import deque
from collections.abc import Iterator

from .model import DumpEntry

__all__ = ["TxnOrder"]

_UNDECIDED = "?"


class TxnOrder:
    """Annotates and releases the entries of one partition (see the module docstring)."""

    __slots__ = ("_queue", "_pending", "_held_max")

    def __init__(self) -> None:
        self._queue: deque[DumpEntry] = deque()
        self._pending: dict[int, list[DumpEntry]] = {}
        self._held_max = 0

    @property
    def held(self) -> int:
        """Entries currently held back."""
        return len(self._queue)

    @property
    def held_max(self) -> int:
        """The most entries ever held back at once (the memory high-water mark)."""
        return self._held_max

    def _release(self) -> Iterator[DumpEntry]:
        q = self._queue
        while q and q[0].txn != _UNDECIDED:
            yield q.popleft()

    def _hold(self, entry: DumpEntry) -> None:
        self._queue.append(entry)
        if len(self._queue) > self._held_max:
            self._held_max = len(self._queue)

    def data(self, entry: DumpEntry, transactional: bool) -> Iterator[DumpEntry]:
        """A data record (or an undecodable one); yields whatever can be released now."""
        if transactional and entry.producer_id >= 0:
            entry.txn = _UNDECIDED
            self._pending.setdefault(entry.producer_id, []).append(entry)
            self._hold(entry)
            return iter(())
        entry.txn = "none"
        if not self._queue:
            return iter((entry,))
        self._hold(entry)
        return iter(())

    def marker(self, entry: DumpEntry, commit: bool | None) -> Iterator[DumpEntry]:
        """A control record; COMMIT (`commit` True) / ABORT (False) decide its producer's records."""
        if commit is not None:
            outcome = "committed" if commit else "aborted"
            for e in self._pending.pop(entry.producer_id, ()):
                e.txn = outcome
            entry.txn = outcome
        else:
            entry.txn = "none"
        if not self._queue:
            return iter((entry,))
        self._hold(entry)
        return self._release()

    def finish(self) -> Iterator[DumpEntry]:
        """End of the partition: what is still undecided is "open"; releases everything."""
        for entries in self._pending.values():
            for e in entries:
                e.txn = "open"
        self._pending.clear()
        q = self._queue
        while q:
            yield q.popleft()
