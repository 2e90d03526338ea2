"""A log file's bytes as units of complete lines, for the line decoder.

A ``.zstd`` log is many independent frames appended (one per append batch); a plain
log is JSON lines. Either way the decoder gets :class:`Unit`\\ s: complete lines,
``\n``-separated, with the file offsets they came from, and :class:`Progress` says
how far the bytes were consumed and how they ended (torn tail, garbage).
"""

from __future__ import annotations

import functools
from bisect import bisect_left
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import accumulate
from operator import itemgetter
from pathlib import Path
from typing import BinaryIO, cast

import orjson
import zstandard

from dsh_task_gantt.logs.reader.ahead import run_ahead
from dsh_task_gantt.logs.reader.zstd_batches import CHUNK_BYTES, WalkEnd, decompress_job, zstd_jobs

#: Plain logs are cut into units of about this size so checkpoints stay sparse.
_PLAIN_UNIT_BYTES = 256 * 1024

#: Consecutive frames are decoded as one unit of about this size: few calls per log
#: (each unit costs the decoder about 12 µs whatever its lines: at 64 KiB that was
#: 17 ms of a big team's cold read), and small enough to stay below glibc's default
#: mmap threshold of 128 KiB (bigger transient buffers made the heap keep twice the
#: memory after a cold read; at 120 KiB the RSS growth of a big team's read was
#: 35.4 MB against 34.7 at 64 KiB).
_UNIT_BYTES = 120 * 1024


def is_zstd_path(path: Path) -> bool:
    return path.suffix in (".zstd", ".zst")


@dataclass(slots=True)
class Unit:
    """A frame (or a run of plain lines): complete lines, ``\n``-separated, in ``text``.

    The lines are not cut into separate objects: most of a log's bytes are lines
    whose data is never parsed, and copying them out is a large share of the cost.
    """

    start: int
    end: int
    starts_clean: bool  # no partial line carried into it: a checkpoint may go here
    text: bytes

    @property
    def lines(self) -> list[bytes]:
        lines = self.text.split(b"\n")
        if lines and not lines[-1]:
            lines.pop()
        return lines


@dataclass(slots=True)
class Progress:
    end: int
    carry: bytes = b""
    torn_tail_bytes: int = 0
    garbage: str | None = None


def _split_frame_lines(carry: bytes, out: bytes) -> tuple[bytes, bytes]:
    """``(complete lines, carry)``: a last line without its ``\n`` is complete only
    when it is a whole JSON object; otherwise it waits for the next frame."""
    data = carry + out if carry else out
    cut = data.rfind(b"\n") + 1
    rest = data[cut:]
    if rest and not rest.isspace() and not _is_json_object(rest):
        return data[:cut], rest  # a line split across frames: wait for its end
    return data, b""


def _is_json_object(line: bytes) -> bool:
    try:
        return isinstance(orjson.loads(line), dict)
    except orjson.JSONDecodeError:
        return False


def _ends_lines(content: bytes | memoryview | None) -> bool:
    return content is not None and len(content) > 0 and content[-1] == 0x0A


def _all_end_lines(contents: list[bytes | memoryview | None], frames: int) -> bool:
    """Every frame of a batch decompressed (none skippable) and ending in a line end."""
    if len(contents) != frames or not frames or None in contents:
        return False
    found = cast("list[bytes | memoryview]", contents)
    return min(map(len, found)) > 0 and list(map(_LAST, found)).count(0x0A) == frames


#: A frame's last byte (of a non-empty one).
_LAST = itemgetter(-1)


def _zstd_units(
    f: BinaryIO, progress: Progress, limit: int | None, ahead: bool = False
) -> Iterator[Unit]:
    """Frames that end in a line end (nearly all) are joined into units of about
    _UNIT_BYTES; any other frame (a line split across frames, or an unterminated last
    line) is a unit of its own."""
    walk_end = WalkEnd()
    jobs = zstd_jobs(f, progress.end, limit, walk_end)
    work = functools.partial(decompress_job, zstandard.ZstdDecompressor())
    results = run_ahead(jobs, work) if ahead else ((job, work(job)) for job in jobs)
    for job, out in results:
        base, frames = job.base, job.frames
        contents = cast("list[bytes | memoryview]", out.contents)  # checked just below
        if out.garbage is None and not progress.carry and _all_end_lines(out.contents, len(frames)):
            # Nearly every batch: its frames' units found by their sizes, in C-level passes
            # (the same units as frame by frame below).
            sizes = [0, *accumulate(map(len, contents))]
            i, n = 0, len(frames)
            while i < n:
                j = bisect_left(sizes, sizes[i] + _UNIT_BYTES, i + 1, n)
                progress.end = base + frames[j - 1].end
                yield Unit(base + frames[i].start, progress.end, True, b"".join(contents[i:j]))
                i = j
            continue
        group: list[bytes | memoryview] = []
        group_start = group_bytes = 0
        for frame, content in zip(frames, out.contents, strict=False):
            ends = _ends_lines(content)
            if group and (group_bytes >= _UNIT_BYTES or not ends):
                yield Unit(group_start, progress.end, True, b"".join(group))
                group = []
            if ends and content is not None and not progress.carry:
                if not group:
                    group_start, group_bytes = base + frame.start, 0
                group.append(content)
                group_bytes += len(content)
                progress.end = base + frame.end
                continue
            progress.end = base + frame.end
            if content is None:
                continue
            starts_clean = not progress.carry
            text, progress.carry = _split_frame_lines(progress.carry, bytes(content))
            yield Unit(base + frame.start, progress.end, starts_clean, text)
        if group:
            yield Unit(group_start, progress.end, True, b"".join(group))
        if out.garbage is not None:
            progress.garbage = out.garbage
            return
    progress.garbage = walk_end.garbage
    progress.torn_tail_bytes = walk_end.torn_tail_bytes


def _plain_units(f: BinaryIO, progress: Progress, limit: int | None) -> Iterator[Unit]:
    pending = b""
    base = progress.end
    while True:
        want = CHUNK_BYTES if limit is None else min(CHUNK_BYTES, limit - base - len(pending))
        chunk = f.read(want) if want > 0 else b""
        if not chunk:
            break
        pending = pending + chunk if pending else chunk
        complete = pending.rfind(b"\n") + 1
        pos = 0
        while pos < complete:
            cut = pending.rfind(b"\n", pos, min(pos + _PLAIN_UNIT_BYTES, complete)) + 1
            if cut <= pos:  # one line longer than a unit
                cut = pending.find(b"\n", pos) + 1
            progress.end = base + cut
            yield Unit(base + pos, base + cut, True, pending[pos:cut])
            pos = cut
        pending = pending[complete:]
        base += complete
    progress.torn_tail_bytes = len(pending)


def units(
    f: BinaryIO, zstd: bool, progress: Progress, limit: int | None, ahead: bool = False
) -> Iterator[Unit]:
    """``ahead``: decompress in a second thread (only for a consumer that reads on to
    the end: ``progress`` may run ahead of the units handed out)."""
    f.seek(progress.end)
    return _zstd_units(f, progress, limit, ahead) if zstd else _plain_units(f, progress, limit)
