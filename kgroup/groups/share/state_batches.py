"""Merging state batches, as the share coordinator does (Kafka's `PersisterStateBatchCombiner`).

A share-partition's durable state is a list of non-overlapping runs of offsets
(`first_offset..last_offset`, inclusive) sharing one delivery state and count. A
WriteShareGroupState carries only the runs whose state changed; the share coordinator
folds them into what it holds:

- runs ending before the share-partition start offset (SPSO) are dropped, a run the SPSO
  cuts keeps only `[SPSO, last_offset]` (nothing is pruned when the start offset is -1);
- overlapping runs are resolved by *priority*: the higher delivery count wins, at equal
  counts the higher delivery state (Archived 4 > Acknowledged 2 > Acquired 1 > Available 0);
  the losing run keeps only the offsets the winner does not cover;
- touching or overlapping runs with the same state and count become one run.

The runs are ordered as Kafka's `PersisterStateBatch.compareTo` orders them (first offset,
last offset, delivery count, delivery state), and exact duplicates collapse, as in the
`TreeSet` Kafka uses.
"""
from __future__ import annotations

import bisect
from collections.abc import Iterable
from typing import NamedTuple

__all__ = ["Batch", "combine_state_batches"]


class Batch(NamedTuple):
    """One persisted run of offsets (Kafka's `PersisterStateBatch`); the raw int8 state."""

    first_offset: int
    last_offset: int
    delivery_state: int
    delivery_count: int


def _order(b: Batch) -> tuple[int, int, int, int]:
    # PersisterStateBatch.compareTo: first offset, last offset, delivery count, delivery state
    return (b.first_offset, b.last_offset, b.delivery_count, b.delivery_state)


def _priority(b1: Batch, b2: Batch) -> int:
    """>0 if b1 wins over b2, <0 if b2 wins, 0 if same count and state (compareBatchDeliveryInfo)."""
    if b1.delivery_count != b2.delivery_count:
        return b1.delivery_count - b2.delivery_count
    return b1.delivery_state - b2.delivery_state


class _SortedBatches:
    """A sorted set of batches (Kafka's TreeSet): insertion keeps order, duplicates collapse."""

    def __init__(self, batches: Iterable[Batch]) -> None:
        self._keys: list[tuple[int, int, int, int]] = []
        self._items: list[Batch] = []
        for b in batches:
            self.add(b)

    def add(self, b: Batch) -> None:
        k = _order(b)
        i = bisect.bisect_left(self._keys, k)
        if i < len(self._keys) and self._keys[i] == k:
            return
        self._keys.insert(i, k)
        self._items.insert(i, b)

    def remove(self, b: Batch) -> None:
        k = _order(b)
        i = bisect.bisect_left(self._keys, k)
        if i < len(self._keys) and self._keys[i] == k:
            del self._keys[i]
            del self._items[i]

    def pop_prefix(self, n: int) -> list[Batch]:
        out = self._items[:n]
        del self._items[:n]
        del self._keys[:n]
        return out

    def __iter__(self):
        return iter(list(self._items))

    def __len__(self) -> int:
        return len(self._items)


def _prune(batches: list[Batch], start_offset: int) -> list[Batch]:
    if start_offset == -1:
        return batches
    kept = []
    for b in batches:
        if b.last_offset < start_offset:
            continue  # wholly below the SPSO: done with
        if b.first_offset >= start_offset:
            kept.append(b)
        else:  # the SPSO cuts the run: keep the part from the SPSO on
            kept.append(Batch(start_offset, b.last_offset, b.delivery_state, b.delivery_count))
    return kept


def _mergeable_pair(batches: _SortedBatches, final: list[Batch]) -> tuple[Batch, Batch] | None:
    """The first two batches that overlap, or touch with the same state and count; the
    non-mergeable batches before them move to `final` (getMergeCandidatePair)."""
    items = list(batches)
    if not items:
        return None
    prev = items[0]
    for i in range(1, len(items)):
        cand = items[i]
        if cand.first_offset <= prev.last_offset or (
                prev.last_offset + 1 == cand.first_offset and _priority(prev, cand) == 0):
            final.extend(batches.pop_prefix(i - 1))
            return prev, cand
        prev = cand
    final.extend(batches.pop_prefix(len(items) - 1))
    return None


def _resolve(prev: Batch, cand: Batch) -> list[Batch]:
    """What replaces an overlapping (or touching, same-state) pair; `prev` sorts first."""
    p = _priority(cand, prev)
    if p == 0:  # same state and count: one run covering both
        return [Batch(prev.first_offset, max(cand.last_offset, prev.last_offset), prev.delivery_state,
                      prev.delivery_count)]
    if cand.first_offset == prev.first_offset:
        if cand.last_offset == prev.last_offset:
            return [cand]  # same range: the sort order put the higher priority second
        # cand is longer (sort order): prev wins its range only if it has priority
        if p < 0:
            return [prev, Batch(prev.last_offset + 1, cand.last_offset, cand.delivery_state, cand.delivery_count)]
        return [cand]
    head = Batch(prev.first_offset, cand.first_offset - 1, prev.delivery_state, prev.delivery_count)
    if cand.last_offset < prev.last_offset:  # prev swallows cand
        if p < 0:
            return [prev]
        return [head, cand, Batch(cand.last_offset + 1, prev.last_offset, prev.delivery_state, prev.delivery_count)]
    if cand.last_offset == prev.last_offset:
        return [prev] if p < 0 else [head, cand]
    # cand runs past prev
    if p < 0:
        return [prev, Batch(prev.last_offset + 1, cand.last_offset, cand.delivery_state, cand.delivery_count)]
    return [head, cand]


def combine_state_batches(so_far: Iterable[Batch], new: Iterable[Batch], start_offset: int) -> list[Batch]:
    """`so_far` and `new` merged into non-overlapping batches from `start_offset` on
    (`PersisterStateBatchCombiner.combineStateBatches`)."""
    combined = _prune([Batch(*b) for b in so_far] + [Batch(*b) for b in new], start_offset)
    if len(combined) < 2:
        return combined
    batches = _SortedBatches(combined)
    final: list[Batch] = []
    while (pair := _mergeable_pair(batches, final)) is not None:
        prev, cand = pair
        batches.remove(prev)
        batches.remove(cand)
        for b in _resolve(prev, cand):
            batches.add(b)
    final.extend(batches)
    return final
