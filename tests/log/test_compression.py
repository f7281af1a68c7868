"""Codecs and Kafka's framings (xerial snappy, Kafka-style LZ4 frames)."""
from __future__ import annotations

import os
import random

import cramjam
import pytest

from kgroup.log import Compression, CompressionError, compress, decompress
from kgroup.log.compression import xxh32

PAYLOADS = {
    "empty": b"",
    "one": b"x",
    "text": b"offset commit " * 5000,
    "random": random.Random(7).randbytes(70_000),
    "block-edge": b"ab" * (32 * 1024),  # exactly 64 KiB
}


@pytest.mark.parametrize("codec", list(Compression), ids=lambda c: c.label)
@pytest.mark.parametrize("name", PAYLOADS)
def test_round_trip(codec, name):
    data = PAYLOADS[name]
    assert decompress(codec, compress(codec, data)) == data


def test_parse_names():
    assert Compression.parse("zstd") is Compression.ZSTD
    assert Compression.parse("None") is Compression.NONE
    assert Compression.parse(2) is Compression.SNAPPY
    assert Compression.parse(None) is Compression.NONE
    with pytest.raises(ValueError):
        Compression.parse("brotli")


def test_xxh32_known_values():
    # reference values of xxHash32 with seed 0
    assert xxh32(b"") == 0x02CC5D05
    assert xxh32(b"a") == 0x550D7456
    assert xxh32(b"abc") == 0x32D153FF
    assert xxh32(b"Nobody inspects the spammish repetition") == 0xE2293B2F


# ---- snappy -------------------------------------------------------------------------------


def test_snappy_xerial_framing_is_exact():
    data = PAYLOADS["random"]  # 70,000 bytes -> blocks of 32768, 32768, 4464 input bytes
    out = compress(Compression.SNAPPY, data)
    assert out[:16] == b"\x82SNAPPY\x00" + b"\x00\x00\x00\x01" + b"\x00\x00\x00\x01"
    pos, blocks = 16, []
    while pos < len(out):
        size = int.from_bytes(out[pos:pos + 4], "big")
        blocks.append(bytes(cramjam.snappy.decompress_raw(out[pos + 4:pos + 4 + size])))
        pos += 4 + size
    assert pos == len(out)
    assert [len(b) for b in blocks] == [32768, 32768, 70000 - 65536]
    assert b"".join(blocks) == data


def test_snappy_reads_raw_framed_and_concatenated_streams():
    data = PAYLOADS["text"]
    assert decompress(Compression.SNAPPY, bytes(cramjam.snappy.compress_raw(data))) == data
    assert decompress(Compression.SNAPPY, bytes(cramjam.snappy.compress(data))) == data
    two = compress(Compression.SNAPPY, b"first ") + compress(Compression.SNAPPY, b"second")
    assert decompress(Compression.SNAPPY, two) == b"first second"


def test_snappy_truncated_block():
    out = compress(Compression.SNAPPY, PAYLOADS["text"])
    with pytest.raises(CompressionError, match="snappy"):
        decompress(Compression.SNAPPY, out[:-5])


# ---- lz4 ------------------------------------------------------------------------------------


def test_lz4_frame_layout_like_kafka():
    out = compress(Compression.LZ4, PAYLOADS["text"])
    assert out[:4] == bytes.fromhex("04224d18")  # magic 0x184D2204, little-endian
    assert out[4] == 0x60  # version 1, independent blocks, no checksums, no content size
    assert out[5] == 0x40  # 64 KiB blocks
    assert out[6] == (xxh32(b"\x60\x40") >> 8) & 0xFF
    assert out[-4:] == b"\x00\x00\x00\x00"  # end mark, no content checksum
    # the reference LZ4 frame decoder (which checks the header checksum) agrees
    assert bytes(cramjam.lz4.decompress(out)) == PAYLOADS["text"]


def test_lz4_incompressible_block_is_stored():
    data = os.urandom(1000)
    out = compress(Compression.LZ4, data)
    word = int.from_bytes(out[7:11], "little")
    assert word == 0x80000000 | 1000
    assert out[11:1011] == data
    assert decompress(Compression.LZ4, out) == data


def test_lz4_legacy_header_checksum():
    data = PAYLOADS["text"]
    out = compress(Compression.LZ4, data, legacy_lz4_checksum=True)
    assert out[6] == (xxh32(bytes.fromhex("04224d18") + b"\x60\x40") >> 8) & 0xFF
    assert out[6] != (xxh32(b"\x60\x40") >> 8) & 0xFF
    with pytest.raises(cramjam.DecompressionError):
        cramjam.lz4.decompress(out)  # a strict decoder rejects it ...
    assert decompress(Compression.LZ4, out) == data  # ... Kafka (and we) accept it


def test_lz4_reads_reference_frames_with_linked_blocks_and_checksums():
    data = PAYLOADS["text"] * 3
    assert decompress(Compression.LZ4, bytes(cramjam.lz4.compress(data))) == data


def test_lz4_errors():
    out = compress(Compression.LZ4, PAYLOADS["text"])
    with pytest.raises(CompressionError, match="end mark"):
        decompress(Compression.LZ4, out[:-4])
    bad_hc = bytearray(out)
    bad_hc[6] ^= 0xFF
    with pytest.raises(CompressionError, match="descriptor checksum"):
        decompress(Compression.LZ4, bytes(bad_hc))
    with pytest.raises(CompressionError, match="magic"):
        decompress(Compression.LZ4, b"\x00" * 20)


# ---- errors ---------------------------------------------------------------------------------


@pytest.mark.parametrize("codec", [c for c in Compression if c], ids=lambda c: c.label)
def test_garbage_raises_compression_error(codec):
    with pytest.raises(CompressionError) as info:
        decompress(codec, b"this is not compressed data at all")
    assert info.value.codec == codec
    assert str(info.value).startswith(codec.label + ":")
    assert isinstance(info.value, ValueError)


def test_unknown_codec():
    with pytest.raises(CompressionError, match="unknown"):
        decompress(6, b"x")
