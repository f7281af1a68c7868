"""Fixtures for the log-layer tests.

kafka-python is the oracle for reading and writing batches. It only has gzip built in; for
snappy, lz4 and zstd it expects python-snappy / lz4 / zstandard, which kgroup does not depend
on. The `kafka_python` fixture plugs cramjam's *raw* codecs into kafka-python's own framing
code (xerial snappy blocks, LZ4 frames, zstd frames), so the framing on the oracle side stays
kafka-python's / the reference LZ4 library's, independent of kgroup's.
"""
from __future__ import annotations

import types
import warnings

import cramjam
import pytest

with warnings.catch_warnings():
    # kafka-python loads its protocol schemas with deprecated importlib.resources calls
    warnings.simplefilter("ignore", DeprecationWarning)
    import kafka.record  # noqa: F401


class _ZstdReader:
    def __init__(self, fileobj, **_kw):
        self._data = fileobj.read()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def read(self):
        return bytes(cramjam.zstd.decompress(self._data))


class _ZstdCompressor:
    def compress(self, data):
        return bytes(cramjam.zstd.compress(bytes(data)))


class _ZstdDecompressor:
    def stream_reader(self, fileobj, **kw):
        return _ZstdReader(fileobj, **kw)

    def decompress(self, data, **_kw):
        return bytes(cramjam.zstd.decompress(bytes(data)))


def _lz4_encode(data, **_kw):
    # cramjam's frame writer = the reference LZ4 library (linked blocks, checksums).
    return bytes(cramjam.lz4.compress(bytes(data)))


def _lz4_decode(data):
    return bytes(cramjam.lz4.decompress(bytes(data)))


@pytest.fixture
def kafka_python(monkeypatch):
    """kafka-python's record module with snappy/lz4/zstd available (via cramjam raw codecs)."""
    import kafka.codec as codec
    import kafka.record.default_records as default_records
    import kafka.record.legacy_records as legacy_records

    snappy = types.SimpleNamespace(
        compress=lambda b: bytes(cramjam.snappy.compress_raw(bytes(b))),
        decompress=lambda b: bytes(cramjam.snappy.decompress_raw(bytes(b))),
    )
    zstd = types.SimpleNamespace(ZstdCompressor=_ZstdCompressor, ZstdDecompressor=_ZstdDecompressor)
    monkeypatch.setattr(codec, "snappy", snappy)
    monkeypatch.setattr(codec, "zstd", zstd)
    monkeypatch.setattr(codec, "lz4", types.SimpleNamespace(compress=_lz4_encode, decompress=_lz4_decode))
    for mod in (codec, default_records, legacy_records):
        monkeypatch.setattr(mod, "lz4_encode", _lz4_encode, raising=False)
        monkeypatch.setattr(mod, "lz4_decode", _lz4_decode, raising=False)
    import kafka.record as record

    return record
