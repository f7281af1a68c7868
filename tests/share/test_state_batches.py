"""State-batch merging: Kafka's PersisterStateBatchCombinerTest cases as the oracle
(batches as (first, last, state, count); start offset -1: no pruning)."""
from __future__ import annotations

import pytest

from kgroup.groups.share.state_batches import Batch, combine_state_batches

B = Batch

# (name, so far, new, start offset, expected) -- PersisterStateBatchCombinerTest
CASES = [
    # corner cases
    ("current batches with start offset midway are pruned", [B(100, 130, 0, 1)], [], 120, [B(120, 130, 0, 1)]),
    ("new batches with start offset midway are pruned", [], [B(100, 130, 0, 1)], 120, [B(120, 130, 0, 1)]),
    ("both empty", [], [], 120, []),
    ("duplicate equal batches before a later batch do not fill the gap", [B(100, 110, 0, 1)],
     [B(100, 110, 0, 1), B(120, 130, 2, 1)], -1, [B(100, 110, 0, 1), B(120, 130, 2, 1)]),
    ("duplicate acked batches before a later available batch do not fill the gap", [B(0, 5, 2, 1)],
     [B(0, 5, 2, 1), B(11, 15, 0, 1)], -1, [B(0, 5, 2, 1), B(11, 15, 0, 1)]),
    ("duplicate available batches before a later available batch do not fill the gap", [B(0, 5, 0, 1)],
     [B(0, 5, 0, 1), B(11, 15, 0, 1)], -1, [B(0, 5, 0, 1), B(11, 15, 0, 1)]),
    # same state
    ("same state, same range", [B(100, 110, 0, 1)], [B(100, 110, 0, 1)], -1, [B(100, 110, 0, 1)]),
    ("same state, same first, new shorter", [B(100, 110, 0, 1)], [B(100, 105, 0, 1)], -1, [B(100, 110, 0, 1)]),
    ("same state, same first, new longer", [B(100, 110, 0, 1)], [B(100, 115, 0, 1)], -1, [B(100, 115, 0, 1)]),
    ("same state, new inside", [B(100, 110, 0, 1)], [B(105, 108, 0, 1)], -1, [B(100, 110, 0, 1)]),
    ("same state, new ends with old", [B(100, 110, 0, 1)], [B(105, 110, 0, 1)], -1, [B(100, 110, 0, 1)]),
    ("same state, new runs past old", [B(100, 110, 0, 1)], [B(105, 115, 0, 1)], -1, [B(100, 115, 0, 1)]),
    ("same state, contiguous", [B(100, 110, 0, 1)], [B(111, 115, 0, 1)], -1, [B(100, 115, 0, 1)]),
    # different states
    ("new higher, same range", [B(100, 110, 0, 1)], [B(100, 110, 0, 2)], -1, [B(100, 110, 0, 2)]),
    ("new lower, same range", [B(100, 110, 0, 3)], [B(100, 110, 0, 1)], -1, [B(100, 110, 0, 3)]),
    ("new higher, same first, shorter", [B(100, 110, 0, 1)], [B(100, 105, 0, 2)], -1,
     [B(100, 105, 0, 2), B(106, 110, 0, 1)]),
    ("new lower, same first, shorter", [B(100, 110, 0, 3)], [B(100, 105, 0, 1)], -1, [B(100, 110, 0, 3)]),
    ("new higher, same first, longer", [B(100, 110, 0, 1)], [B(100, 115, 0, 2)], -1, [B(100, 115, 0, 2)]),
    ("new lower, same first, longer", [B(100, 110, 0, 3)], [B(100, 115, 0, 1)], -1,
     [B(100, 110, 0, 3), B(111, 115, 0, 1)]),
    ("new higher, inside", [B(100, 115, 0, 1)], [B(105, 110, 1, 1)], -1,
     [B(100, 104, 0, 1), B(105, 110, 1, 1), B(111, 115, 0, 1)]),
    ("new lower, inside", [B(100, 115, 1, 1)], [B(105, 110, 0, 1)], -1, [B(100, 115, 1, 1)]),
    ("new higher, same last", [B(100, 110, 0, 1)], [B(105, 110, 0, 2)], -1, [B(100, 104, 0, 1), B(105, 110, 0, 2)]),
    ("new lower, same last", [B(100, 110, 0, 2)], [B(105, 110, 0, 1)], -1, [B(100, 110, 0, 2)]),
    ("new higher, runs past", [B(100, 110, 0, 1)], [B(105, 115, 0, 2)], -1, [B(100, 104, 0, 1), B(105, 115, 0, 2)]),
    ("new lower, runs past", [B(100, 110, 0, 2)], [B(105, 115, 0, 1)], -1, [B(100, 110, 0, 2), B(111, 115, 0, 1)]),
    # complex
    ("overlapping new batches, same state", [B(100, 110, 0, 1), B(121, 130, 0, 1)],
     [B(111, 119, 2, 2), B(116, 123, 2, 2)], -1, [B(100, 110, 0, 1), B(111, 123, 2, 2), B(124, 130, 0, 1)]),
    ("overlapping new batches, different priority", [B(100, 110, 0, 1)],
     [B(101, 105, 1, 2), B(101, 115, 2, 2), B(101, 120, 3, 2)], -1, [B(100, 100, 0, 1), B(101, 120, 3, 2)]),
    ("overlapping new batches, with pruning", [B(100, 110, 0, 1), B(121, 130, 0, 1)],
     [B(111, 119, 2, 2), B(116, 123, 2, 2)], 120, [B(120, 123, 2, 2), B(124, 130, 0, 1)]),
    ("multiple higher state updates", [B(111, 120, 0, 1)], [B(111, 113, 0, 2), B(114, 114, 2, 1), B(115, 119, 0, 2)],
     -1, [B(111, 113, 0, 2), B(114, 114, 2, 1), B(115, 119, 0, 2), B(120, 120, 0, 1)]),
]


@pytest.mark.parametrize("name, so_far, new, start, expected", CASES, ids=[c[0] for c in CASES])
def test_combine_like_kafka_persister_state_batch_combiner(name, so_far, new, start, expected):
    assert combine_state_batches(so_far, new, start) == expected


def test_result_never_overlaps_and_is_sorted():
    # any input: the result is sorted, non-overlapping, and covers what the inputs cover from the SPSO on
    so_far = [B(0, 9, 0, 1), B(20, 29, 2, 1), B(40, 49, 4, 3)]
    new = [B(5, 24, 0, 2), B(22, 45, 2, 1), B(48, 60, 0, 1)]
    out = combine_state_batches(so_far, new, 3)
    assert all(a.last_offset < b.first_offset for a, b in zip(out, out[1:]))
    covered = {o for b in out for o in range(b.first_offset, b.last_offset + 1)}
    wanted = {o for b in so_far + new for o in range(b.first_offset, b.last_offset + 1) if o >= 3}
    assert covered == wanted
    # offset 41 was archived with count 3 and nothing of higher priority came: it stays archived
    assert next(b for b in out if b.first_offset <= 41 <= b.last_offset)[2:] == (4, 3)
