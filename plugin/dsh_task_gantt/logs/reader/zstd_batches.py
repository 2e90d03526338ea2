"""Complete zstd frames from a file, grouped into batches and decompressed.

Frames that declare a small size are decompressed together in one GIL-free call
(``multi_decompress_to_buffer``); any other frame, or a batch that fails, frame by
frame, which finds the frame that fails. Bytes that can never become a frame stop
the walk with a reason; an incomplete last frame is a torn tail, left for next time.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO

import zstandard

from dsh_task_gantt.logs.frames import Frame, walk_frames

#: Bytes read from the file at a time (the first read smaller: its frames go out sooner).
CHUNK_BYTES = 524288
_FIRST_CHUNK_BYTES = 128 * 1024
#: Above this a frame's declared content size is not trusted for a one-shot decompress.
_MAX_ONE_SHOT_BYTES = 16 * 1024 * 1024
#: No append batch is this big; a frame that expands past it is garbage (a zstd "bomb"
#: of a few KB expands to gigabytes), so memory stays bounded whatever the log holds.
MAX_FRAME_BYTES = 64 * 1024 * 1024
_STREAM_STEP_BYTES = 256 * 1024
#: ``memoryview``, mapped over a batch's segments (which python-zstandard types loosely).
_view: Any = memoryview


def decompress_frame(
    dctx: zstandard.ZstdDecompressor,
    raw: bytes | bytearray | memoryview,
    content_size: int | None,
) -> bytes | None:
    """One complete frame's content; ``None`` when it holds more than MAX_FRAME_BYTES.

    Raises ``zstandard.ZstdError`` for a frame that does not decompress (including
    one whose declared size is a lie).
    """
    if content_size is not None and content_size <= _MAX_ONE_SHOT_BYTES:
        return dctx.decompress(raw)
    if content_size is not None and content_size > MAX_FRAME_BYTES:
        return None
    chunks: list[bytes] = []
    total = 0
    with dctx.stream_reader(raw, read_across_frames=False) as stream:
        while chunk := stream.read(_STREAM_STEP_BYTES):
            total += len(chunk)
            if total > MAX_FRAME_BYTES:
                return None
            chunks.append(chunk)
    return b"".join(chunks)


#: Frames decompressed in one call (``multi_decompress_to_buffer`` releases the GIL
#: once for all of them): at most this many, holding at most this many bytes. A batch
#: is also one unit for the line decoder, and a checkpoint may go at its start.
BATCH_FRAMES = 64
_BATCH_BYTES = 262144


@dataclass(frozen=True, slots=True)
class Batch:
    """Consecutive complete frames, decompressed together: ``frames`` (offsets in
    the chunk that starts at byte ``base`` of the file) and their bytes."""

    base: int
    frames: tuple[Frame, ...]
    raws: list[bytes | bytearray | memoryview]


@dataclass(frozen=True, slots=True)
class BatchOut:
    """Each frame's content (``None`` for a skippable frame), up to the first frame
    that does not decompress; ``garbage`` then says why, and nothing after it counts."""

    contents: list[bytes | memoryview | None]
    garbage: str | None = None


@dataclass(slots=True)
class WalkEnd:
    torn_tail_bytes: int = 0
    garbage: str | None = None


def zstd_jobs(f: BinaryIO, start: int, limit: int | None, walk_end: WalkEnd) -> Iterator[Batch]:
    """The complete frames from byte ``start``, grouped: frames that declare a small
    size go together, any other frame alone. How the walk ended goes to ``walk_end``."""
    pending = b""
    base = start
    step = _FIRST_CHUNK_BYTES  # small first: the first frames are handed out sooner
    while True:
        want = step if limit is None else min(step, limit - base - len(pending))
        step = min(2 * step, CHUNK_BYTES)
        chunk = f.read(want) if want > 0 else b""
        if not chunk:
            break
        pending = pending + chunk if pending else chunk
        walk = walk_frames(pending)
        frames = walk.frames
        view = memoryview(pending)  # the frames' bytes handed over without a copy
        i = 0
        while i < len(frames):
            j, declared = i, 0
            while j < len(frames) and j - i < BATCH_FRAMES:
                frame = frames[j]
                size = frame.content_size
                if frame.skippable or size is None or declared + size > _BATCH_BYTES:
                    break
                declared += size
                j += 1
            j = max(j, i + 1)
            group = frames[i:j]
            yield Batch(base, group, [view[fr.start : fr.end] for fr in group])
            i = j
        if walk.stop == "garbage":
            walk_end.garbage = f"not a zstd frame: {walk.reason and _rebase(walk.reason, base)}"
            return
        rest = len(pending) - walk.end
        if rest and walk.end:
            # A frame begun after complete ones: read again with the next chunk (a seek
            # back over a part of one frame, where keeping it copied the whole chunk).
            f.seek(-rest, os.SEEK_CUR)
            pending = b""
        else:
            pending = pending[walk.end :]
        base += walk.end
    walk_end.torn_tail_bytes = len(pending)


def decompress_job(dctx: zstandard.ZstdDecompressor, job: Batch) -> BatchOut:
    """A job's contents: the whole batch in one GIL-free call, or (a single frame, or a
    batch that failed) frame by frame, which finds the frame that fails."""
    if len(job.raws) > 1:
        try:
            found = dctx.multi_decompress_to_buffer(job.raws)
            if len(found) == len(job.raws):
                # A segment exports its part of the batch's buffer (typed loosely upstream).
                segments: Any = found
                return BatchOut(list(map(_view, segments)))
        except Exception:  # ZstdError, or anything odd: frame by frame says what and where
            pass
    contents: list[bytes | memoryview | None] = []
    for frame, raw in zip(job.frames, job.raws, strict=True):
        if frame.skippable:
            contents.append(None)
            continue
        at = job.base + frame.start
        try:
            out = decompress_frame(dctx, raw, frame.content_size)
        except zstandard.ZstdError:
            return BatchOut(contents, f"the zstd frame at byte {at} does not decompress")
        if out is None:
            limit_mb = MAX_FRAME_BYTES >> 20
            return BatchOut(contents, f"the zstd frame at byte {at} holds more than {limit_mb} MB")
        contents.append(out)
    return BatchOut(contents)


def _rebase(reason: str, base: int) -> str:
    """Frame walk reasons give offsets in the chunk; report them in the file."""
    return re.sub(r"at byte (\d+)", lambda m: f"at byte {int(m.group(1)) + base}", reason)
