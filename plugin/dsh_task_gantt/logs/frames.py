"""Walk the frames of a multi-frame zstd buffer (RFC 8878 §3.1), pure and total.

python-zstandard cannot say how many compressed bytes a frame takes, and an
appended log may end in a frame a writer is still writing. So this module reads
frame and block headers itself: it finds where each complete frame ends, stops
before a torn (incomplete) last frame, and tells a torn tail (wait and read again)
apart from garbage (bytes that can never become a frame).
"""

from __future__ import annotations

import functools
import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, NamedTuple

ZSTD_MAGIC = 0xFD2FB528
SKIPPABLE_MAGIC_MIN = 0x184D2A50
SKIPPABLE_MAGIC_MAX = 0x184D2A5F
#: RFC 8878 §3.1.1.2.3: no block regenerates or carries more than 128 KiB.
MAX_BLOCK_SIZE = 128 * 1024

_ZSTD_MAGIC_BYTES = ZSTD_MAGIC.to_bytes(4, "little")
_SKIPPABLE_PREFIX = (SKIPPABLE_MAGIC_MIN.to_bytes(4, "little"))[1:]  # bytes 1..3: 2A 4D 18
_DICT_ID_SIZES = (0, 1, 2, 4)
_FCS_SIZES = (0, 2, 4, 8)

StopKind = Literal["end", "torn", "garbage"]


class Frame(NamedTuple):
    """One complete frame: ``buf[start:end]`` (a named tuple: a log has thousands)."""

    start: int
    end: int
    skippable: bool = False
    #: The decompressed size from the frame header, when the writer recorded it.
    content_size: int | None = None


#: ``Frame(...)`` without the named tuple's generated ``__new__`` (a hot path).
_new_frame: Callable[[tuple[int, int, bool, int | None]], Frame] = functools.partial(
    tuple.__new__, Frame
)
#: The header of a frame as writers write most (single segment, no dictionary, no
#: checksum) and its first block's header, in one C call: magic, descriptor, content
#: size, block header (low byte, high two bytes). By descriptor: a 1-byte content
#: size (0x20), a 2-byte one (0x60, less 256).
_SMALL_HEADS = {
    0x20: struct.Struct("<IBBBH"),
    0x60: struct.Struct("<IBHBH"),
}
_SMALL_HEAD_MAX = 10


@dataclass(frozen=True, slots=True)
class FrameWalk:
    """The complete frames from ``start``, and why the walk stopped at ``end``.

    ``stop`` is ``"end"`` (the buffer ends exactly after a frame), ``"torn"`` (the
    bytes after ``end`` are the beginning of a frame a writer may still finish) or
    ``"garbage"`` (the bytes at ``end`` are not a valid frame; ``reason`` says why).
    """

    frames: tuple[Frame, ...]
    end: int
    stop: StopKind
    reason: str | None = None


class _Torn(Exception):
    pass


class _Garbage(Exception):
    pass


def _need(buf: bytes | memoryview, pos: int, n: int) -> None:
    if pos + n > len(buf):
        raise _Torn


def _frame_at(buf: bytes | memoryview, start: int) -> Frame:
    """The complete frame starting at ``start``; raises ``_Torn`` or ``_Garbage``."""
    available = bytes(buf[start : start + 4])
    if len(available) < 4:
        # A short tail is torn only if it can still grow into a magic number.
        if _ZSTD_MAGIC_BYTES.startswith(available) or (
            (available[:1] == b"" or available[0] & 0xF0 == 0x50)
            and _SKIPPABLE_PREFIX.startswith(available[1:])
        ):
            raise _Torn
        raise _Garbage(f"bad magic number at byte {start}")
    magic = int.from_bytes(available, "little")
    if SKIPPABLE_MAGIC_MIN <= magic <= SKIPPABLE_MAGIC_MAX:
        _need(buf, start, 8)
        size = int.from_bytes(buf[start + 4 : start + 8], "little")
        _need(buf, start + 8, size)
        return Frame(start, start + 8 + size, skippable=True)
    if magic != ZSTD_MAGIC:
        raise _Garbage(f"bad magic number at byte {start}")

    pos = start + 4
    _need(buf, pos, 1)
    descriptor = buf[pos]
    pos += 1
    if descriptor & 0x08:
        raise _Garbage(f"reserved bit set in the frame header at byte {start}")
    fcs_flag = descriptor >> 6
    single_segment = bool(descriptor & 0x20)
    has_checksum = bool(descriptor & 0x04)
    pos += 0 if single_segment else 1  # window descriptor
    pos += _DICT_ID_SIZES[descriptor & 0x03]
    fcs_size = 1 if (fcs_flag == 0 and single_segment) else _FCS_SIZES[fcs_flag]
    _need(buf, pos, fcs_size)
    content_size: int | None = None
    if fcs_size:
        content_size = int.from_bytes(buf[pos : pos + fcs_size], "little")
        if fcs_size == 2:
            content_size += 256  # RFC 8878 §3.1.1.1.4: the 2-byte field is offset by 256
    pos += fcs_size

    while True:
        _need(buf, pos, 3)
        header = int.from_bytes(buf[pos : pos + 3], "little")
        last = header & 1
        block_type = (header >> 1) & 0x03
        block_size = header >> 3
        if block_type == 3:
            raise _Garbage(f"reserved block type at byte {pos}")
        if block_size > MAX_BLOCK_SIZE:
            raise _Garbage(f"block larger than 128 KiB at byte {pos}")
        pos += 3 + (1 if block_type == 1 else block_size)
        _need(buf, pos, 0)
        if last:
            break
    if has_checksum:
        pos += 4
        _need(buf, pos, 0)
    return Frame(start, pos, content_size=content_size)


def walk_frames(
    buf: bytes | memoryview, start: int = 0, *, max_frames: int | None = None
) -> FrameWalk:
    """Every complete frame of ``buf`` from ``start`` (at most ``max_frames``), stopping
    at a torn tail or garbage."""
    frames: list[Frame] = []
    pos = start
    size = len(buf)
    while pos < size and (max_frames is None or len(frames) < max_frames):
        frame = _common_frame_at(buf, pos, size)
        if frame is None:
            try:
                frame = _frame_at(buf, pos)
            except _Torn:
                return FrameWalk(tuple(frames), pos, "torn")
            except _Garbage as exc:
                return FrameWalk(tuple(frames), pos, "garbage", str(exc))
        frames.append(frame)
        pos = frame.end
    return FrameWalk(tuple(frames), pos, "end")


def _common_frame_at(buf: bytes | memoryview, start: int, size: int) -> Frame | None:
    """The frame at ``start`` when it is what writers write — a zstd frame with no
    dictionary, a content size of 1, 2, 4 or 8 bytes or none, complete in ``buf``,
    without reserved bits or oversized blocks — else ``None`` (:func:`_frame_at`
    then decides, and says why). A log has thousands of frames: this is the hot path.
    """
    if start + _SMALL_HEAD_MAX <= size:
        head = _SMALL_HEADS.get(buf[start + 4])
        if head is not None:
            # One block, the last: its header's low bit. About a fifth of the steps below,
            # for nearly every frame of a log.
            magic, descriptor, content_size, low, high = head.unpack_from(buf, start)
            block = low | high << 8
            kind = block & 0x06  # the block type, shifted: 0x02 is RLE, 0x06 reserved
            if magic == ZSTD_MAGIC and block & 1 and kind != 0x06 and block >> 3 <= MAX_BLOCK_SIZE:
                end = start + head.size + (1 if kind == 0x02 else block >> 3)
                if end <= size:
                    if descriptor == 0x60:
                        content_size += 256
                    return _new_frame((start, end, False, content_size))
    if buf[start : start + 4] != _ZSTD_MAGIC_BYTES or start + 6 > size:
        return None
    descriptor = buf[start + 4]
    if descriptor & 0x0B:  # reserved bit, or a dictionary id
        return None
    fcs_flag = descriptor >> 6
    pos = start + 5
    if descriptor & 0x20:  # single segment: no window descriptor
        fcs_size = 1 if fcs_flag == 0 else _FCS_SIZES[fcs_flag]
    else:
        pos += 1
        fcs_size = _FCS_SIZES[fcs_flag]
    content_size = None
    if fcs_size:
        if pos + fcs_size > size:
            return None
        content_size = int.from_bytes(buf[pos : pos + fcs_size], "little")
        if fcs_size == 2:
            content_size += 256
        pos += fcs_size
    while True:
        if pos + 3 > size:
            return None
        header = buf[pos] | buf[pos + 1] << 8 | buf[pos + 2] << 16
        block_type = (header >> 1) & 0x03
        block_size = header >> 3
        if block_type == 3 or block_size > MAX_BLOCK_SIZE:
            return None
        pos += 3 + (1 if block_type == 1 else block_size)
        if header & 1:
            break
    if descriptor & 0x04:  # content checksum
        pos += 4
    return Frame(start, pos, False, content_size) if pos <= size else None
