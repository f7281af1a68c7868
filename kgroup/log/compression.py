"""Kafka's compression codecs on top of cramjam, with Kafka's own framings.

- gzip: plain gzip members (several concatenated members are read as one stream).
- snappy: written with the xerial block framing the Java clients use (snappy-java's
  `SnappyOutputStream`: ``\\x82SNAPPY\\x00``, int32 version 1, int32 compatible-version 1, then
  blocks of at most 32 KiB input, each as int32 big-endian length + raw snappy). Read: xerial
  framing (also several concatenated streams), raw snappy, and the official snappy framing format.
- lz4: the LZ4 frame format as Kafka's `Lz4BlockOutputStream` writes it: FLG 0x60 (version 1,
  independent blocks, no checksums), BD 0x40 (64 KiB blocks), no content size, end mark. Magic-0
  message sets carry Kafka's historic wrong header checksum (hashed over the magic number too);
  `compress(..., legacy_lz4_checksum=True)` writes that and `decompress` accepts both.
- zstd: zstd frames (several concatenated frames are read as one stream).
"""
from __future__ import annotations

import threading
from enum import IntEnum

import cramjam
from xxhash import xxh32_intdigest as _xxh32_intdigest

__all__ = ["Compression", "CompressionError", "compress", "decompress"]


class Compression(IntEnum):
    """The codec in bits 0-2 of a batch's (or legacy message's) attributes."""

    NONE = 0
    GZIP = 1
    SNAPPY = 2
    LZ4 = 3
    ZSTD = 4

    @classmethod
    def parse(cls, value: Compression | int | str | None) -> Compression:
        """Accept a member, its number or a name as Kafka's configs spell it (`"zstd"`, `"none"`)."""
        if value is None:
            return cls.NONE
        if isinstance(value, str):
            try:
                return cls[value.strip().upper()]
            except KeyError:
                raise ValueError(f"unknown compression codec {value!r}") from None
        return cls(value)

    @property
    def label(self) -> str:
        """The lower-case name Kafka prints (`compresscodec: zstd`)."""
        return self.name.lower()


class CompressionError(ValueError):
    """Compressed data could not be decoded (or a codec was misused)."""

    def __init__(self, codec: Compression | int, message: str):
        try:
            name = Compression(codec).label
        except ValueError:
            name = f"codec {codec}"
        if message.lower().startswith(f"{name}: "):
            message = message[len(name) + 2:]
        super().__init__(f"{name}: {message}")
        self.codec = codec


# --------------------------------------------------------------------------------------------
# xxHash32 of the LZ4 frame descriptor: the `xxhash` library (a dependency already, for the
# KIP-848 metadata hash)


def xxh32(data: bytes, seed: int = 0) -> int:
    """xxHash32 of `data`."""
    return _xxh32_intdigest(data, seed)


# --------------------------------------------------------------------------------------------
# snappy (xerial framing)

XERIAL_MAGIC = b"\x82SNAPPY\x00"
_XERIAL_HEADER = XERIAL_MAGIC + (1).to_bytes(4, "big") + (1).to_bytes(4, "big")
_XERIAL_BLOCK = 32 * 1024
_SNAPPY_FRAMED_MAGIC = b"\xff\x06\x00\x00sNaPpY"


def _snappy_compress(data: bytes) -> bytes:
    out = [_XERIAL_HEADER]
    mv = memoryview(data)
    for i in range(0, len(data), _XERIAL_BLOCK):
        block = bytes(cramjam.snappy.compress_raw(mv[i:i + _XERIAL_BLOCK]))
        out.append(len(block).to_bytes(4, "big"))
        out.append(block)
    return b"".join(out)


def _snappy_decompress(data: bytes) -> bytes:
    if data[:8] == XERIAL_MAGIC:
        return _xerial_decompress(data)
    if data[:10] == _SNAPPY_FRAMED_MAGIC:
        return bytes(cramjam.snappy.decompress(data))
    return bytes(cramjam.snappy.decompress_raw(data))


def _xerial_decompress(data: bytes) -> bytes:
    n = len(data)
    if n < 16:
        raise CompressionError(Compression.SNAPPY, f"xerial header truncated ({n} bytes)")
    mv = memoryview(data)
    out = []
    pos = 16
    while pos < n:
        # snappy-java reads several concatenated streams, each with its own header.
        if data[pos:pos + 8] == XERIAL_MAGIC and n - pos >= 16:
            pos += 16
            continue
        if n - pos < 4:
            raise CompressionError(Compression.SNAPPY, f"xerial block length truncated at byte {pos}")
        size = int.from_bytes(data[pos:pos + 4], "big", signed=True)
        pos += 4
        if size < 0 or pos + size > n:
            raise CompressionError(Compression.SNAPPY,
                                   f"xerial block of {size} bytes at byte {pos - 4} runs past the end ({n})")
        out.append(bytes(cramjam.snappy.decompress_raw(mv[pos:pos + size])))
        pos += size
    return b"".join(out)


# --------------------------------------------------------------------------------------------
# lz4 (frame format, Kafka flavour)

_LZ4_MAGIC = 0x184D2204
_LZ4_MAGIC_BYTES = _LZ4_MAGIC.to_bytes(4, "little")
_LZ4_FLG = 0x60  # version 01, independent blocks, no block/content checksum, no content size
_LZ4_BD = 0x40  # 64 KiB maximum block size
_LZ4_BLOCK = 64 * 1024
_LZ4_UNCOMPRESSED = 0x80000000


def _lz4_header_checksum(descriptor: bytes) -> int:
    return (xxh32(descriptor) >> 8) & 0xFF


def _lz4_compress(data: bytes, legacy_checksum: bool) -> bytes:
    descriptor = bytes((_LZ4_FLG, _LZ4_BD))
    hc = _lz4_header_checksum(_LZ4_MAGIC_BYTES + descriptor if legacy_checksum else descriptor)
    out = [_LZ4_MAGIC_BYTES, descriptor, bytes((hc,))]
    mv = memoryview(data)
    for i in range(0, len(data), _LZ4_BLOCK):
        chunk = mv[i:i + _LZ4_BLOCK]
        block = bytes(cramjam.lz4.compress_block(chunk, store_size=False))
        if len(block) >= len(chunk):  # incompressible: stored as is, like Kafka
            out.append((len(chunk) | _LZ4_UNCOMPRESSED).to_bytes(4, "little"))
            out.append(bytes(chunk))
        else:
            out.append(len(block).to_bytes(4, "little"))
            out.append(block)
    out.append(b"\x00\x00\x00\x00")  # end mark
    return b"".join(out)


# Frame descriptors (FLG, BD, HC) already checked, of frames with independent blocks and no
# checksums (what Kafka writes) -> maximum block size: most batches of a log share one.
_LZ4_SIMPLE_FRAMES: dict[bytes, int] = {}
_LZ4_SCRATCH = threading.local()  # a block-sized buffer per thread, reused from call to call


def _lz4_decompress(data: bytes) -> bytes:
    max_block = _LZ4_SIMPLE_FRAMES.get(data[4:7]) if data[:4] == _LZ4_MAGIC_BYTES else None
    if max_block is None:
        max_block = _lz4_check_frame(data)
        if max_block is None:  # linked blocks, checksums or a content size: the reference decoder
            return _lz4_reference(data)
    codec = Compression.LZ4
    n = len(data)
    scratch = getattr(_LZ4_SCRATCH, "buf", None)
    if scratch is None or len(scratch) < max_block:
        scratch = _LZ4_SCRATCH.buf = bytearray(max_block)
    mv = memoryview(data)
    decompress_into = cramjam.lz4.decompress_block_into
    pieces = []
    pos = 7
    while True:
        if pos + 4 > n:
            raise CompressionError(codec, f"frame ends without an end mark at byte {pos}")
        word = int.from_bytes(data[pos:pos + 4], "little")
        pos += 4
        if word == 0:
            break
        size = word & 0x7FFFFFFF
        if size > max_block:
            raise CompressionError(codec, f"block of {size} bytes exceeds the maximum {max_block}")
        if pos + size > n:
            raise CompressionError(codec, f"block of {size} bytes at byte {pos - 4} runs past the end ({n})")
        if word & _LZ4_UNCOMPRESSED:
            pieces.append(data[pos:pos + size])
        else:
            try:
                got = decompress_into(mv[pos:pos + size], scratch)
            except cramjam.DecompressionError as exc:
                raise CompressionError(codec, f"block at byte {pos - 4}: {exc}") from None
            pieces.append(bytes(memoryview(scratch)[:got]))
        pos += size
    return pieces[0] if len(pieces) == 1 else b"".join(pieces)


def _lz4_check_frame(data: bytes) -> int | None:
    """Check a frame's header; the maximum block size of a simple frame (remembered), None for
    frames with linked blocks or checksums. Raises CompressionError on a bad header."""
    codec = Compression.LZ4
    n = len(data)
    if n < 7:
        raise CompressionError(codec, f"frame truncated ({n} bytes)")
    if data[:4] != _LZ4_MAGIC_BYTES:
        raise CompressionError(codec, f"bad frame magic 0x{int.from_bytes(data[:4], 'little'):08x}")
    flg, bd = data[4], data[5]
    if flg >> 6 != 1:
        raise CompressionError(codec, f"unsupported frame version {flg >> 6}")
    if flg & 0x01:
        raise CompressionError(codec, "frames with a dictionary id are not supported")
    pos = 6 + (8 if flg & 0x08 else 0)
    if n < pos + 1:
        raise CompressionError(codec, "frame descriptor truncated")
    stored_hc = data[pos]
    correct_hc = _lz4_header_checksum(data[4:pos])
    if stored_hc != correct_hc and stored_hc != _lz4_header_checksum(data[:pos]):
        raise CompressionError(codec, f"frame descriptor checksum mismatch (stored 0x{stored_hc:02x}, "
                                      f"computed 0x{correct_hc:02x})")
    block_size_code = (bd >> 4) & 0x07
    if block_size_code < 4:
        raise CompressionError(codec, f"invalid block maximum size code {block_size_code}")
    if not flg & 0x20 or flg & 0x1C:  # linked blocks, checksums or a content size
        return None
    max_block = _LZ4_SIMPLE_FRAMES[data[4:7]] = 1 << (2 * block_size_code + 8)
    return max_block


def _lz4_reference(data: bytes) -> bytes:
    """Frames with linked blocks, checksums or a content size, by the reference decoder (after
    fixing a legacy header checksum, taken over the magic too by old Kafka clients)."""
    pos = 6 + (8 if data[4] & 0x08 else 0)
    fixed = data[:pos] + bytes((_lz4_header_checksum(data[4:pos]),)) + data[pos + 1:]
    try:
        return bytes(cramjam.lz4.decompress(fixed))
    except cramjam.DecompressionError as exc:
        raise CompressionError(Compression.LZ4, str(exc)) from None


_DECOMPRESSORS = {
    Compression.NONE: bytes,
    Compression.GZIP: lambda data: bytes(cramjam.gzip.decompress(data)),
    Compression.SNAPPY: _snappy_decompress,
    Compression.LZ4: _lz4_decompress,
    Compression.ZSTD: lambda data: bytes(cramjam.zstd.decompress(data)),
}


# --------------------------------------------------------------------------------------------


def compress(codec: Compression | int, data: bytes, *, level: int | None = None,
             legacy_lz4_checksum: bool = False) -> bytes:
    """Compress `data` the way Kafka's Java clients frame it for `codec`.

    `level` is passed to gzip/zstd (defaults as Kafka's: gzip 6, zstd 3);
    `legacy_lz4_checksum` writes the wrong LZ4 header checksum that magic-0 message sets use.
    """
    codec = Compression(codec)
    if codec is Compression.NONE:
        return bytes(data)
    if codec is Compression.GZIP:
        return bytes(cramjam.gzip.compress(data, level=6 if level is None else level))
    if codec is Compression.SNAPPY:
        return _snappy_compress(data)
    if codec is Compression.LZ4:
        return _lz4_compress(data, legacy_lz4_checksum)
    return bytes(cramjam.zstd.compress(data, level=3 if level is None else level))


def decompress(codec: Compression | int, data: bytes) -> bytes:
    """Inverse of `compress`; raises `CompressionError` on data that does not decode."""
    decoder = _DECOMPRESSORS.get(codec)  # a dict, not Compression(codec): this runs once per batch
    if decoder is None:
        raise CompressionError(codec, "unknown compression codec")
    if not isinstance(data, bytes):
        data = bytes(data)
    try:
        return decoder(data)
    except CompressionError:
        raise
    except (cramjam.DecompressionError, ValueError, OSError) as exc:
        raise CompressionError(codec, str(exc) or type(exc).__name__) from None
