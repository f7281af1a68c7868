"""Property tests: any batch round-trips; any damage is reported, never silently dropped."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kgroup.log import Compression, CorruptBatch, LogRecord, RecordBatch, encode_batch, read_batches

blobs = st.one_of(st.none(), st.binary(max_size=300))
headers = st.lists(st.tuples(st.text(max_size=8), blobs), max_size=3)
records = st.lists(st.tuples(blobs, blobs, st.integers(0, 2**42), headers), min_size=1, max_size=20)


@settings(max_examples=150, deadline=None)
@given(records, st.sampled_from(list(Compression)), st.integers(0, 2**50), st.integers(-1, 2**31 - 1))
def test_any_batch_round_trips(recs, codec, base_offset, producer_id):
    data = encode_batch(recs, base_offset=base_offset, compression=codec, producer_id=producer_id)
    (b,) = list(read_batches(data))
    assert isinstance(b, RecordBatch)
    assert b.records == tuple(LogRecord(base_offset + i, ts, k, v, tuple(h)) for i, (k, v, ts, h) in enumerate(recs))
    assert b.size == len(data)


@settings(max_examples=150, deadline=None)
@given(st.lists(records, min_size=1, max_size=4), st.data())
def test_damage_is_always_accounted_for(batches, data):
    encoded = [encode_batch(r, base_offset=i * 100) for i, r in enumerate(batches)]
    blob = bytearray(b"".join(encoded))
    for _ in range(data.draw(st.integers(1, 3))):
        kind = data.draw(st.sampled_from(["flip", "cut", "insert"]))
        pos = data.draw(st.integers(0, len(blob) - 1))
        if kind == "flip":
            blob[pos] ^= data.draw(st.integers(1, 255))
        elif kind == "cut":
            del blob[pos:pos + data.draw(st.integers(1, 40))]
        else:
            blob[pos:pos] = data.draw(st.binary(min_size=1, max_size=40))
        if not blob:
            return
    items = list(read_batches(bytes(blob)))
    covered = 0
    for item in items:
        assert item.position == covered
        covered += item.size if isinstance(item, RecordBatch) else item.length
        if isinstance(item, CorruptBatch):
            assert item.length > 0
    assert covered == len(blob)
