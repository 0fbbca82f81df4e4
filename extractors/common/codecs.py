"""Incremental decoders for the codecs Spark (and other JVM writers) compress logs with: pure, no I/O.

A decoder is fed the bytes of one file in order, from a known absolute offset, and yields
`Piece`s of decompressed bytes. Each piece says where decoding can be resumed (a compressed
offset plus a number of decompressed bytes to drop), so a reader can persist a cursor after any
line and restart from it after a crash without decoding the whole file again where the codec
allows it. An incomplete trailing frame (a file Spark is still writing) is kept buffered until
more bytes arrive; it is never an error.

The framings below were checked against files written by Spark 4.3 (`spark.eventLog.compress`,
rolling on and off) and against Spark's own `CompressionCodec.compressedInputStream`:

- lz4: lz4-java `LZ4BlockOutputStream`. Each block is `LZ4Block` + token (method | level) +
  compressed length + decompressed length + checksum (all int32 little endian, 21 bytes), then
  the block; method 0x10 is stored, 0x20 is an LZ4 block. `close()` writes an empty block
  (lengths 0). Blocks are independent, and every block starts with the magic, so a damaged block
  is skipped by searching the next magic.
- snappy: snappy-java `SnappyOutputStream`. A 16-byte header (`\\x82SNAPPY\\x00`, version 1,
  compatible version 1, big endian) then `[int32 BE length][raw snappy block]`... Blocks are
  independent but have no magic: after damage the next block is found by trying offsets whose
  length decodes as a valid block followed by another plausible block header.
- lzf: ning compress `LZFOutputStream`. Chunks `ZV` + type (0 stored, 1 compressed) + uint16 BE
  length(s): stored `ZV 00 len`, compressed `ZV 01 clen ulen` (at most 64 KiB each). Independent
  chunks; resync at the next `ZV\\x00`/`ZV\\x01`. LZF itself is decoded here in Python (no
  binding for it is installed; chunks are small).
- zstd: standard zstd frames (no content checksum). Spark writes event logs through
  `compressedContinuousOutputStream`, which closes the frame at every flush, so a file is a
  sequence of small frames: frame starts are the resume points (resuming mid-frame decodes
  that frame again and drops the bytes already delivered), and a damaged frame is skipped to
  the next frame magic. Damage inside a block's data may go unnoticed by zstd (no checksum) and
  come out as garbled lines, which the line reader and the event parser reject.
"""

from __future__ import annotations

import dataclasses
import struct
from collections.abc import Callable, Iterator
from typing import Protocol

import cramjam
import lz4.block
import zstandard

from navd.errors import NavdError

CODECS = ("lz4", "lzf", "snappy", "zstd")


class CorruptFrame(NavdError):
    """A frame that cannot be decoded. The decoder has moved past it: feed again to go on."""

    def __init__(self, codec: str, offset: int, reason: str) -> None:
        super().__init__(f"corrupt {codec} frame at offset {offset}: {reason}")
        self.codec = codec
        self.offset = offset
        self.reason = reason


@dataclasses.dataclass(frozen=True, slots=True)
class Piece:
    """Decompressed bytes and how to resume decoding at any byte in them.

    Decompressed byte `j` of `data` is reached by decoding from compressed offset `resume` and
    dropping `skip + j` bytes; the position just after the last byte is `(end_resume, end_skip)`.
    """

    data: bytes
    resume: int
    skip: int
    end_resume: int
    end_skip: int

    def position(self, j: int) -> tuple[int, int]:
        if j >= len(self.data):
            return self.end_resume, self.end_skip
        return self.resume, self.skip + j


class Decoder(Protocol):
    codec: str

    def feed(self, data: bytes) -> Iterator[Piece]:
        """Decode `data` (the bytes following everything fed before); may raise CorruptFrame."""
        ...

    def incomplete(self) -> int | None:
        """Offset of a frame begun but not finished by the bytes fed so far, if any."""
        ...


def make_decoder(codec: str, offset: int) -> Decoder:
    """A decoder whose first fed byte is at absolute `offset` of the file; codec "" is none."""
    factories: dict[str, Callable[[int], Decoder]] = {
        "": PlainDecoder, "lz4": Lz4Decoder, "lzf": LzfDecoder, "snappy": SnappyDecoder,
        "zstd": ZstdDecoder}
    try:
        return factories[codec](offset)
    except KeyError:
        raise NavdError(f"unknown event log codec {codec!r} (known: {', '.join(CODECS)})") from None


class PlainDecoder:
    """Uncompressed logs: every byte is a resume point."""

    codec = ""

    def __init__(self, offset: int) -> None:
        self._offset = offset

    def feed(self, data: bytes) -> Iterator[Piece]:
        if data:
            start, self._offset = self._offset, self._offset + len(data)
            # `skip` relative to `start` keeps Piece uniform; readers normalise it away.
            yield Piece(data, start, 0, self._offset, 0)

    def incomplete(self) -> int | None:
        return None


class _BlockDecoder:
    """Shared loop of the codecs whose frames decode independently (lz4, snappy, lzf)."""

    codec = ""

    def __init__(self, offset: int) -> None:
        self._buf = b""
        self._base = offset       # absolute offset of self._buf[0]
        self._resyncing = False   # after damage: discard until a plausible frame start

    def feed(self, data: bytes) -> Iterator[Piece]:
        if data:
            self._buf = self._buf + data if self._buf else data
        pos = 0
        try:
            while True:
                if self._resyncing:
                    found = self._find_frame(pos)
                    if found is None:
                        # Keep a few bytes: a frame header may straddle the next read.
                        keep = max(pos, len(self._buf) - self._header_len() + 1)
                        pos = keep
                        return
                    pos, self._resyncing = found, False
                try:
                    frame = self._frame(pos)
                except _Damaged as exc:
                    self._resyncing = True
                    bad, pos = pos, pos + 1
                    raise CorruptFrame(self.codec, self._base + bad, str(exc)) from None
                if frame is None:
                    return
                end, out = frame
                start, pos = pos, end
                if out:
                    yield Piece(out, self._base + start, 0, self._base + end, 0)
        finally:
            self._buf = self._buf[pos:]
            self._base += pos

    def incomplete(self) -> int | None:
        return self._base if self._buf and not self._resyncing else None

    def _header_len(self) -> int:
        raise NotImplementedError

    def _frame(self, pos: int) -> tuple[int, bytes] | None:
        """(end, decompressed) of the frame at `pos`, None if incomplete; raises _Damaged."""
        raise NotImplementedError

    def _find_frame(self, pos: int) -> int | None:
        """The first offset >= pos where a frame plausibly starts, None if none yet."""
        raise NotImplementedError


class _Damaged(Exception):
    pass


_LZ4_MAGIC = b"LZ4Block"
_LZ4_HEADER = struct.Struct("<BiiI")
_LZ4_RAW, _LZ4_COMPRESSED = 0x10, 0x20


class Lz4Decoder(_BlockDecoder):
    codec = "lz4"

    def _header_len(self) -> int:
        return len(_LZ4_MAGIC) + _LZ4_HEADER.size

    def _frame(self, pos: int) -> tuple[int, bytes] | None:
        buf = self._buf
        if len(buf) - pos < self._header_len():
            if not _LZ4_MAGIC.startswith(buf[pos:pos + len(_LZ4_MAGIC)]):
                raise _Damaged("no LZ4Block magic")
            return None
        if buf[pos:pos + 8] != _LZ4_MAGIC:
            raise _Damaged("no LZ4Block magic")
        token, clen, ulen, _checksum = _LZ4_HEADER.unpack_from(buf, pos + 8)
        method, level = token & 0xF0, token & 0x0F
        # lz4-java: block size is 1 << (level + 10), at most 32 MiB.
        # A compressed block is at most LZ4_compressBound(ulen): bounding clen keeps a damaged
        # header from making the decoder wait for bytes that never come.
        if method not in (_LZ4_RAW, _LZ4_COMPRESSED) or level > 15 or not (
                0 <= ulen <= 1 << (level + 10) and 0 <= clen <= ulen + ulen // 255 + 16
                and (method == _LZ4_COMPRESSED or clen == ulen)):
            raise _Damaged(f"bad block header (token {token:#x}, lengths {clen}/{ulen})")
        start = pos + self._header_len()
        end = start + clen
        if len(buf) < end:
            return None
        body = buf[start:end]
        if method == _LZ4_RAW or ulen == 0:
            return end, body
        try:
            out = lz4.block.decompress(body, uncompressed_size=ulen)
        except lz4.block.LZ4BlockError as exc:
            raise _Damaged(f"LZ4 block does not decode: {exc}") from None
        if len(out) != ulen:
            raise _Damaged(f"LZ4 block decoded to {len(out)} bytes, header says {ulen}")
        # The xxhash32 checksum is not verified: no xxhash binding is installed, and a damaged
        # block nearly always fails the exact-length decode above.
        return end, out

    def _find_frame(self, pos: int) -> int | None:
        found = self._buf.find(_LZ4_MAGIC, pos)
        return None if found < 0 else found


_SNAPPY_MAGIC = b"\x82SNAPPY\x00"
_SNAPPY_HEADER_LEN = 16
# snappy-java's block size is 32 KiB by default (spark.io.compression.snappy.blockSize); allow
# generous settings but reject lengths no writer produces, so damage is noticed.
_SNAPPY_MAX_BLOCK = 1 << 26


class SnappyDecoder(_BlockDecoder):
    codec = "snappy"

    def _header_len(self) -> int:
        return _SNAPPY_HEADER_LEN

    def _frame(self, pos: int) -> tuple[int, bytes] | None:
        buf = self._buf
        # The stream header opens the file and every stream concatenated after it.
        if buf[pos:pos + 8] == _SNAPPY_MAGIC[:len(buf) - pos] and len(buf) - pos < 8:
            return None
        if buf[pos:pos + 8] == _SNAPPY_MAGIC:
            if len(buf) - pos < _SNAPPY_HEADER_LEN:
                return None
            return pos + _SNAPPY_HEADER_LEN, b""
        if len(buf) - pos < 4:
            return None
        (length,) = struct.unpack_from(">i", buf, pos)
        if not 0 < length <= _SNAPPY_MAX_BLOCK:
            raise _Damaged(f"bad block length {length}")
        end = pos + 4 + length
        if len(buf) < end:
            return None
        try:
            return end, bytes(cramjam.snappy.decompress_raw(buf[pos + 4:end]))
        except cramjam.DecompressionError as exc:
            raise _Damaged(f"snappy block does not decode: {exc}") from None

    def _find_frame(self, pos: int) -> int | None:
        # Without a per-block magic, accept an offset when its block decodes and is followed by
        # the end of the data, a stream header, or another plausible block length.
        buf = self._buf
        for p in range(pos, len(buf) - 4):
            if buf[p:p + 8] == _SNAPPY_MAGIC:
                return p
            (length,) = struct.unpack_from(">i", buf, p)
            end = p + 4 + length
            if not 0 < length <= _SNAPPY_MAX_BLOCK or end > len(buf):
                continue
            if end + 4 <= len(buf):
                (following,) = struct.unpack_from(">i", buf, end)
                if not (0 < following <= _SNAPPY_MAX_BLOCK or buf[end:end + 4] == _SNAPPY_MAGIC[:4]):
                    continue
            try:
                cramjam.snappy.decompress_raw(buf[p + 4:end])
            except cramjam.DecompressionError:
                continue
            return p
        return None


_LZF_STORED, _LZF_COMPRESSED = 0, 1


class LzfDecoder(_BlockDecoder):
    codec = "lzf"

    def _header_len(self) -> int:
        return 7

    def _frame(self, pos: int) -> tuple[int, bytes] | None:
        buf = self._buf
        head = buf[pos:pos + 3]
        if head[:2] != b"ZV"[:len(head[:2])] or (len(head) == 3 and head[2] not in (0, 1)):
            raise _Damaged("no ZV chunk header")
        if len(head) < 3:
            return None
        kind = head[2]
        header = 5 if kind == _LZF_STORED else 7
        if len(buf) - pos < header:
            return None
        if kind == _LZF_STORED:
            (length,) = struct.unpack_from(">H", buf, pos + 3)
            end = pos + header + length
            return (end, buf[pos + header:end]) if len(buf) >= end else None
        clen, ulen = struct.unpack_from(">HH", buf, pos + 3)
        end = pos + header + clen
        if len(buf) < end:
            return None
        try:
            return end, lzf_decompress(buf[pos + header:end], ulen)
        except ValueError as exc:
            raise _Damaged(str(exc)) from None

    def _find_frame(self, pos: int) -> int | None:
        buf = self._buf
        while True:
            found = buf.find(b"ZV", pos)
            if found < 0 or found + 2 >= len(buf):
                return None
            if buf[found + 2] in (0, 1):
                return found
            pos = found + 1


def lzf_decompress(data: bytes, size: int) -> bytes:
    """Decode one LZF block (liblzf format, as ning compress writes it) of `size` bytes."""
    out = bytearray()
    i, n = 0, len(data)
    while i < n:
        ctrl = data[i]
        i += 1
        if ctrl < 32:  # literal run of ctrl + 1 bytes
            run = ctrl + 1
            if i + run > n:
                raise ValueError("LZF literal runs past the end of the chunk")
            out += data[i:i + run]
            i += run
            continue
        length = ctrl >> 5
        if length == 7:
            if i >= n:
                raise ValueError("LZF back reference truncated")
            length += data[i]
            i += 1
        if i >= n:
            raise ValueError("LZF back reference truncated")
        ref = len(out) - ((ctrl & 0x1F) << 8) - data[i] - 1
        i += 1
        length += 2
        if ref < 0:
            raise ValueError("LZF back reference before the start of the chunk")
        if ref + length <= len(out):
            out += out[ref:ref + length]
        else:  # overlapping copy repeats the pattern byte by byte
            for k in range(length):
                out.append(out[ref + k])
    if len(out) != size:
        raise ValueError(f"LZF chunk decoded to {len(out)} bytes, header says {size}")
    return bytes(out)


_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


class ZstdDecoder:
    """Standard zstd frames; resume points are frame starts (see the module docstring)."""

    codec = "zstd"

    def __init__(self, offset: int) -> None:
        self._held = b""                # bytes not given to the decompressor yet
        self._held_start = offset       # absolute offset of self._held[0]
        self._frame_start = offset      # resume point of the current frame
        self._frame_out = 0             # decompressed bytes of the current frame so far
        self._obj = zstandard.ZstdDecompressor().decompressobj()
        self._resyncing = False

    def feed(self, data: bytes) -> Iterator[Piece]:
        self._held += data
        while self._held:
            if self._resyncing:
                found = self._held.find(_ZSTD_MAGIC)
                if found < 0:
                    # Keep the last bytes: a magic may straddle the next read.
                    keep = len(_ZSTD_MAGIC) - 1
                    self._held_start += max(0, len(self._held) - keep)
                    self._held = self._held[-keep:]
                    return
                self._held, self._held_start = self._held[found:], self._held_start + found
                self._resyncing = False
                self._new_frame(self._held_start)
            chunk, chunk_start = self._held, self._held_start
            self._held, self._held_start = b"", chunk_start + len(chunk)
            fed_end = self._held_start
            try:
                out = self._obj.decompress(chunk)
            except zstandard.ZstdError as exc:
                bad = self._frame_start
                # The error lies somewhere in this chunk: look for the next frame in it, past
                # the damaged frame's own magic.
                skip = 1 if chunk_start == bad else 0
                self._held, self._held_start = chunk[skip:], chunk_start + skip
                self._resyncing = True
                raise CorruptFrame(self.codec, bad, f"{exc} (in the frame starting here; skipped "
                                                    "to the next frame)") from None
            rest = self._obj.unused_data if self._obj.eof else b""
            if out:
                start = self._frame_out
                self._frame_out += len(out)
                end_resume, end_skip = self._frame_start, self._frame_out
                if self._obj.eof:
                    end_resume, end_skip = fed_end - len(rest), 0
                yield Piece(out, self._frame_start, start, end_resume, end_skip)
            if self._obj.eof:
                self._new_frame(fed_end - len(rest))
                self._held, self._held_start = rest, fed_end - len(rest)

    def incomplete(self) -> int | None:
        # Spark closes its frame when the file is finished; fed bytes of a frame that has not
        # ended mean a cut-off file.
        if self._resyncing:
            return None
        return self._frame_start if self._held_start > self._frame_start else None

    def _new_frame(self, offset: int) -> None:
        self._frame_start, self._frame_out = offset, 0
        self._obj = zstandard.ZstdDecompressor().decompressobj()
