"""An incremental, read-only reader of one session log file.

``session.v4.jsonl.zstd`` is many independent zstd frames appended (one per append
batch); ``session.v4.jsonl`` is plain JSON lines. Either may end in a write that is
still in progress. :class:`LogReader` remembers how far it got (file identity, the
byte offset after the last complete frame or line, counts, the header and a sparse
list of checkpoints) and :meth:`LogReader.read_new` decodes only what was appended
since. It keeps no parsed events: a caller that needs older events asks
:meth:`LogReader.read_range`, which decodes from the nearest checkpoint.

Decisions (the "why" of the edge cases):

- A torn tail (an incomplete last zstd frame, or a plain line without its ``\\n``)
  is never decoded; it is reported in ``torn_tail_bytes`` and picked up next time.
- In a ``.zstd`` log a complete frame is a finished write. Its last line may still
  lack a ``\\n``: the text is then a line of its own when it parses as a JSON
  object (which cannot be the prefix of a longer valid line), otherwise it is carried into
  the next frame (a line split across frames). This depends only on the frames'
  content, never on when the file was read, so incremental reads equal a full read.
- Blank lines carry nothing and are passed over silently; any other line that is not
  a JSON object with a string ``type`` is skipped and counted in ``bad_lines``.
- Bytes that can never become a frame (bad magic, a reserved block type, a frame
  that does not decompress) stop the read there: ``garbage`` says why, events
  before it are kept, nothing after it is guessed at.
- A file that shrank, was replaced (new ``st_dev``/``st_ino``) or whose bytes before
  the remembered offset changed is read again from the start (``restarted``).
- Errors opening or reading the file never raise: ``ReadBatch.error`` holds a short
  reason without the file system path.
- Speed of a cold read (most of a log's bytes are lines nobody folds the data of):
  ``read_new(runs=True)`` hands the lines ``skip_types`` lets pass unparsed over as one
  :class:`~dsh_task_gantt.events.EventRun` (their seqs, latest time, latest seq of the
  ``run_marks`` types) instead of one event each — same indices, counts, offsets and
  checkpoints; the default stays one event per line. A big read decompresses ahead
  in a second thread, frames batched into one GIL-free call, while this one parses.
"""

from __future__ import annotations

import bisect
import functools
import operator
import os
import queue
import re
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from itertools import compress
from pathlib import Path
from typing import Any, BinaryIO, TypeVar, cast

import orjson
import zstandard

from dsh_task_gantt.events import (
    MAX_SAFE_INT,
    EventRun,
    LogEvent,
    SessionHeader,
    as_int,
    as_time,
    coerce_header,
)
from dsh_task_gantt.logs.frames import Frame, walk_frames

#: The bulk the timeline never folds (most of a log's bytes): ``BULK_TYPES`` is a
#: sensible ``skip_types`` for callers that only fold the rest.
BULK_TYPES: frozenset[str] = frozenset(
    {
        "assistant/message",
        "assistant/attempt",
        "tool/result",
        "request/header",
        "request/context",
        "system/message",
    }
)

_CHUNK_BYTES = 524288
_FIRST_CHUNK_BYTES = 128 * 1024
#: Plain logs are cut into units of about this size so checkpoints stay sparse.
_PLAIN_UNIT_BYTES = 256 * 1024
#: Bytes before the remembered offset compared on each read to catch in-place rewrites.
_FINGERPRINT_BYTES = 32
#: Above this a frame's declared content size is not trusted for a one-shot decompress.
_MAX_ONE_SHOT_BYTES = 16 * 1024 * 1024
#: No append batch is this big; a frame that expands past it is garbage (a zstd "bomb"
#: of a few KB expands to gigabytes), so memory stays bounded whatever the log holds.
MAX_FRAME_BYTES = 64 * 1024 * 1024
_STREAM_STEP_BYTES = 256 * 1024


def is_zstd_path(path: Path) -> bool:
    return path.suffix in (".zstd", ".zst")


@dataclass(frozen=True, slots=True)
class ReadBatch:
    """What one :meth:`LogReader.read_new` call found.

    ``events`` are the new events, numbered ``first_index``, ``first_index + 1``, …
    (event indices count the events after the header, bad lines excluded).
    ``bad_lines`` counts lines skipped in this batch; ``total_bad_lines`` since the
    (re)start. ``torn_tail_bytes`` are bytes after the last complete frame or line,
    left for next time. ``garbage`` and ``error`` are short reasons, ``None`` when
    all is well; with ``error`` nothing could be read this time.
    """

    header: SessionHeader | None
    #: With ``runs=True`` the skippable lines come as one :class:`EventRun` at the end.
    events: list[LogEvent | EventRun]
    first_index: int
    total_events: int
    bad_lines: int = 0
    total_bad_lines: int = 0
    torn_tail_bytes: int = 0
    restarted: bool = False
    garbage: str | None = None
    error: str | None = None
    #: Bytes of the file consumed so far (the end of the last complete frame or line).
    offset: int = 0


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """Decoding may restart at ``offset``: event ``event_index`` is the next one."""

    event_index: int
    offset: int
    #: Non-blank lines before ``offset`` (0 means the header line is still ahead).
    lines_before: int


@dataclass(slots=True)
class _Unit:
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
class _Progress:
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


#: ``LogEvent(...)`` without the named tuple's generated ``__new__`` (a hot path).
_new_event: Callable[[tuple[str, int, int | None, Any, int, None]], LogEvent] = functools.partial(
    tuple.__new__, LogEvent
)

_NAME = operator.methodcaller("group", 1)
_SEQ = operator.methodcaller("group", 2)
_TIME = operator.methodcaller("group", 3)

#: First bytes of a line that may be blank (``bytes.isspace`` whitespace).
_BLANK = frozenset(b" \t\n\r\x0b\x0c")
_LEADING_BLANK = re.compile(rb"[ \t\n\r\x0b\x0c]*")


def _is_json_object(line: bytes) -> bool:
    try:
        return isinstance(orjson.loads(line), dict)
    except orjson.JSONDecodeError:
        return False


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
_BATCH_FRAMES = 64
_BATCH_BYTES = 262144
#: Consecutive frames are decoded as one unit of about this size: few calls per log,
#: and small enough to stay in the CPU cache and below malloc's mmap threshold (bigger
#: transient buffers made the heap keep twice the memory after a cold read).
_UNIT_BYTES = 64 * 1024
#: A read of more than this many new bytes decompresses ahead in a second thread.
_AHEAD_MIN_BYTES = 256 * 1024


@dataclass(frozen=True, slots=True)
class _Job:
    """Consecutive complete frames, decompressed together: ``frames`` (offsets in
    the chunk that starts at byte ``base`` of the file) and their bytes."""

    base: int
    frames: tuple[Frame, ...]
    raws: list[bytes | bytearray | memoryview]


@dataclass(frozen=True, slots=True)
class _JobOut:
    """Each frame's content (``None`` for a skippable frame), up to the first frame
    that does not decompress; ``garbage`` then says why, and nothing after it counts."""

    contents: list[bytes | memoryview | None]
    garbage: str | None = None


@dataclass(slots=True)
class _WalkEnd:
    torn_tail_bytes: int = 0
    garbage: str | None = None


def _zstd_jobs(f: BinaryIO, start: int, limit: int | None, walk_end: _WalkEnd) -> Iterator[_Job]:
    """The complete frames from byte ``start``, grouped: frames that declare a small
    size go together, any other frame alone. How the walk ended goes to ``walk_end``."""
    pending = b""
    base = start
    step = _FIRST_CHUNK_BYTES  # small first: the first frames are handed out sooner
    while True:
        want = step if limit is None else min(step, limit - base - len(pending))
        step = min(2 * step, _CHUNK_BYTES)
        chunk = f.read(want) if want > 0 else b""
        if not chunk:
            break
        pending = pending + chunk if pending else chunk
        walk = walk_frames(pending)
        frames = walk.frames
        i = 0
        while i < len(frames):
            j, declared = i, 0
            while j < len(frames) and j - i < _BATCH_FRAMES:
                frame = frames[j]
                size = frame.content_size
                if frame.skippable or size is None or declared + size > _BATCH_BYTES:
                    break
                declared += size
                j += 1
            j = max(j, i + 1)
            group = frames[i:j]
            yield _Job(base, group, [pending[fr.start : fr.end] for fr in group])
            i = j
        if walk.stop == "garbage":
            walk_end.garbage = f"not a zstd frame: {walk.reason and _rebase(walk.reason, base)}"
            return
        pending = pending[walk.end :]
        base += walk.end
    walk_end.torn_tail_bytes = len(pending)


def _decompress_job(dctx: zstandard.ZstdDecompressor, job: _Job) -> _JobOut:
    """A job's contents: the whole batch in one GIL-free call, or (a single frame, or a
    batch that failed) frame by frame, which finds the frame that fails."""
    if len(job.raws) > 1:
        try:
            found = dctx.multi_decompress_to_buffer(job.raws)
            if len(found) == len(job.raws):
                # A segment exports its part of the batch's buffer (typed loosely upstream).
                return _JobOut([memoryview(cast(Any, found[k])) for k in range(len(found))])
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
            return _JobOut(contents, f"the zstd frame at byte {at} does not decompress")
        if out is None:
            limit_mb = MAX_FRAME_BYTES >> 20
            return _JobOut(contents, f"the zstd frame at byte {at} holds more than {limit_mb} MB")
        contents.append(out)
    return _JobOut(contents)


_J = TypeVar("_J")
_R = TypeVar("_R")


def _ahead(jobs: Iterator[_J], work: Callable[[_J], _R]) -> Iterator[tuple[_J, _R]]:
    """``(job, work(job))`` in order, ``work`` running in a second thread one job ahead.

    zstd releases the GIL while it decompresses, so the next batch decompresses while
    this thread decodes lines. The hand-over matters more than the thread: a thread
    that merely waits for the GIL gets it only after the interpreter's switch interval
    (5 ms), which once made decompressing "ahead" slower than not. So each job is
    handed over with the GIL, until the worker is inside zstd; the result is taken
    when this thread has nothing else to do. Errors in ``work`` are raised here;
    a consumer that stops early stops the worker too (after its current job).
    """
    inbox: queue.SimpleQueue[tuple[_J, list[tuple[bool, Any]], threading.Event] | None]
    inbox = queue.SimpleQueue()
    entered = threading.Semaphore(0)

    def serve() -> None:
        while (item := inbox.get()) is not None:
            job, box, done = item
            entered.release()
            try:
                box.append((True, work(job)))
            except BaseException as exc:  # handed to the consumer, which raises it
                box.append((False, exc))
            done.set()

    def submit(job: _J) -> tuple[_J, list[tuple[bool, Any]], threading.Event]:
        box: list[tuple[bool, Any]] = []
        done = threading.Event()
        inbox.put((job, box, done))
        entered.acquire()  # the GIL goes to the worker now, not in 5 ms
        return job, box, done

    thread = threading.Thread(target=serve, name="dsh-gantt-zstd", daemon=True)
    thread.start()
    end = object()
    try:
        first = next(jobs, end)
        pending = submit(cast("_J", first)) if first is not end else None
        upcoming = next(jobs, end) if pending is not None else end
        while pending is not None:
            job, box, done = pending
            done.wait()
            pending = submit(cast("_J", upcoming)) if upcoming is not end else None
            ok, value = box[0]
            if not ok:
                raise value
            yield job, value
            if pending is not None:
                upcoming = next(jobs, end)  # walked while the worker decompresses
    finally:
        inbox.put(None)
        thread.join()


def _ends_lines(content: bytes | memoryview | None) -> bool:
    return content is not None and len(content) > 0 and content[-1] == 0x0A


def _zstd_units(
    f: BinaryIO, progress: _Progress, limit: int | None, ahead: bool = False
) -> Iterator[_Unit]:
    """Frames that end in a line end (nearly all) are joined into units of about
    _UNIT_BYTES; any other frame (a line split across frames, or an unterminated last
    line) is a unit of its own."""
    walk_end = _WalkEnd()
    jobs = _zstd_jobs(f, progress.end, limit, walk_end)
    work = functools.partial(_decompress_job, zstandard.ZstdDecompressor())
    results = _ahead(jobs, work) if ahead else ((job, work(job)) for job in jobs)
    for job, out in results:
        base, frames = job.base, job.frames
        group: list[bytes | memoryview] = []
        group_start = group_bytes = 0
        for frame, content in zip(frames, out.contents, strict=False):
            if group and (group_bytes >= _UNIT_BYTES or not _ends_lines(content)):
                yield _Unit(group_start, progress.end, True, b"".join(group))
                group = []
            if content is not None and not progress.carry and _ends_lines(content):
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
            yield _Unit(base + frame.start, progress.end, starts_clean, text)
        if group:
            yield _Unit(group_start, progress.end, True, b"".join(group))
        if out.garbage is not None:
            progress.garbage = out.garbage
            return
    progress.garbage = walk_end.garbage
    progress.torn_tail_bytes = walk_end.torn_tail_bytes


def _rebase(reason: str, base: int) -> str:
    """Frame walk reasons give offsets in the chunk; report them in the file."""
    return re.sub(r"at byte (\d+)", lambda m: f"at byte {int(m.group(1)) + base}", reason)


def _plain_units(f: BinaryIO, progress: _Progress, limit: int | None) -> Iterator[_Unit]:
    pending = b""
    base = progress.end
    while True:
        want = _CHUNK_BYTES if limit is None else min(_CHUNK_BYTES, limit - base - len(pending))
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
            yield _Unit(base + pos, base + cut, True, pending[pos:cut])
            pos = cut
        pending = pending[complete:]
        base += complete
    progress.torn_tail_bytes = len(pending)


def _units(
    f: BinaryIO, zstd: bool, progress: _Progress, limit: int | None, ahead: bool = False
) -> Iterator[_Unit]:
    """``ahead``: decompress in a second thread (only for a consumer that reads on to
    the end: ``progress`` may run ahead of the units handed out)."""
    f.seek(progress.end)
    return _zstd_units(f, progress, limit, ahead) if zstd else _plain_units(f, progress, limit)


def _os_reason(exc: OSError) -> str:
    """A short reason without the path (paths are not shown to panel users)."""
    if isinstance(exc, FileNotFoundError):
        return "the log file does not exist (it may have been removed)"
    if isinstance(exc, PermissionError):
        return "permission denied reading the log file"
    if isinstance(exc, IsADirectoryError):
        return "the log path is a directory"
    return f"could not read the log file ({type(exc).__name__}, errno {exc.errno})"


def _event_from_object(obj: Any, position: int) -> LogEvent | None:
    """``events.parse_line`` after ``orjson.loads``, with exact-type fast paths.

    Same result as ``coerce_event`` for a parsed line (tested), at a fraction of
    the cost: it runs once per line of a 19,000-line log.
    """
    if type(obj) is not dict:
        return None
    etype = obj.get("type")
    if type(etype) is not str:
        return None
    seq = obj.get("seq")
    if type(seq) is not int or not 0 <= seq <= MAX_SAFE_INT:
        seq = as_int(seq)
        if seq is None or seq < 0:
            seq = position
    time = obj.get("time")
    if type(time) is not int or not 0 <= time <= MAX_SAFE_INT:
        time = as_time(time)
    return LogEvent(etype, seq, time, obj.get("data"), position, obj.get("surfaceOp"))


def _parse(line: bytes, position: int) -> LogEvent | None:
    try:
        obj = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    return _event_from_object(obj, position)


#: Which lines may skip parsing: a type name, or a type name with markers — the
#: line is then parsed in full only when it contains one of the marker bytes (for
#: example ``{"tool/call": (b"team_task_update",)}``: only those calls need their data).
SkipTypes = Iterable[str] | Mapping[str, bytes | tuple[bytes, ...] | None]


@dataclass(frozen=True, slots=True)
class _SkipRule:
    prefix: re.Pattern[bytes]
    markers: tuple[tuple[bytes, tuple[bytes, ...]], ...]
    #: ``prefix`` for runs mode: a marker type matches only on a line without its
    #: markers, and numbers have at most 15 digits, so every match is a safe integer
    #: (a 16-digit one is parsed in full instead: the fold reads the same from it).
    run_prefix: re.Pattern[bytes]


def _skip_rule(skip_types: SkipTypes) -> _SkipRule | None:
    if isinstance(skip_types, Mapping):
        items = tuple(sorted((str(k), _markers(v)) for k, v in skip_types.items()))
    else:
        items = tuple(sorted((str(k), None) for k in skip_types))
    return _cached_skip_rule(items)


def _markers(value: bytes | tuple[bytes, ...] | None) -> tuple[bytes, ...] | None:
    if isinstance(value, bytes):
        value = (value,)
    if not value:
        return None
    return tuple(m for m in value if m) or None


def _has_marker(
    find: Callable[[bytes, int, int], int], markers: tuple[bytes, ...], start: int, end: int
) -> bool:
    return any(find(marker, start, end) != -1 for marker in markers)


def _writer_prefix(names: list[str], digits: int) -> re.Pattern[bytes]:
    """``{"type":"<one of names>","seq":N,"time":T`` then ``,`` or ``}``; groups: the
    three values. It cannot match across a line end."""
    alternatives = b"|".join(re.escape(t.encode()) for t in names) or b"(?!)"
    return re.compile(
        rb'\{"type":"('
        + alternatives
        + rb')","seq":(\d{1,%d}),"time":(\d{1,%d})[,}]' % (digits, digits)
    )


@functools.cache
def _cached_skip_rule(
    items: tuple[tuple[str, tuple[bytes, ...] | None], ...],
) -> _SkipRule | None:
    """The writer's own line prefix for exactly these types (others fail at the type)."""
    if not items:
        return None
    # At the line start: a line of a marker type has none of its markers (looked for
    # only once the type is known: the other lines are long and need not be scanned).
    typed = [
        (rb'\{"type":"' + re.escape(t.encode()) + b'"', b"|".join(map(re.escape, m)))
        for t, m in items
        if m
    ]
    guards = [rb"(?=" + t + rb")(?![^\n]*(?:" + m + b"))" for t, m in typed]
    guards.append(rb"(?!" + b"|".join(t for t, _ in typed) + b")" if typed else b"")
    names = [t for t, _ in items]
    return _SkipRule(
        prefix=_writer_prefix(names, 16),
        markers=tuple((t.encode(), m) for t, m in items if m),
        run_prefix=re.compile(b"(?:%b)%b" % (b"|".join(guards), _writer_prefix(names, 15).pattern)),
    )


@dataclass(slots=True)
class _LineDecoder:
    """Turns complete lines into the header and events (bad lines counted)."""

    skip: _SkipRule | None
    lines_seen: int
    next_index: int
    header: SessionHeader | None = None
    bad_lines: int = 0
    events: list[LogEvent] = field(default_factory=list)
    #: Runs mode (:meth:`feed_runs`): type, seq and time of each matched line, as bytes.
    #: Runs mode: the types whose latest seq a run carries (``run_marks``).
    marks: tuple[bytes, ...] = ()
    #: Runs mode (:meth:`feed_runs`): seqs and latest time of the matched lines, and
    #: the latest seq of each type in ``marks``.
    run_seqs: list[int] = field(default_factory=list)
    run_time: int = -1
    run_latest: dict[bytes, int] = field(default_factory=dict)

    def feed(self, text: bytes, keep_from: int = 0, keep_to: int | None = None) -> None:
        """Decode the ``\n``-separated lines of ``text``; keep only events with index in
        ``[keep_from, keep_to)``. Lines that may skip parsing are matched in place."""
        skip = self.skip
        match_prefix = skip.prefix.match if skip is not None else None
        markers = dict(skip.markers) if skip is not None else {}
        names: dict[bytes, str] = {}  # decoded type names, once per name
        append = self.events.append
        find = text.find
        index = self.next_index
        lines_seen = self.lines_seen
        pos, size = 0, len(text)
        while pos < size:
            end = find(b"\n", pos)
            if end == -1:
                end = size
            start, pos = pos, end + 1
            if start == end or (text[start] in _BLANK and text[start:end].isspace()):
                continue
            if lines_seen == 0:
                lines_seen = 1
                if self._header_line(text[start:end]):
                    continue
            else:
                lines_seen += 1
            if keep_to is not None and index >= keep_to:
                break
            event: LogEvent | None = None
            if match_prefix is not None:
                match = match_prefix(text, start, end)
                if match is not None:
                    raw_name, raw_seq, raw_time = match.groups()
                    marker = markers.get(raw_name)
                    seq, time = int(raw_seq), int(raw_time)
                    if (marker is None or not _has_marker(find, marker, start, end)) and (
                        seq <= MAX_SAFE_INT and time <= MAX_SAFE_INT
                    ):
                        name = names.get(raw_name)
                        if name is None:
                            name = names[raw_name] = raw_name.decode()
                        event = _new_event((name, seq, time, None, index, None))
            if event is None:
                event = _parse(text[start:end], index)
            if event is None:
                self.bad_lines += index >= keep_from  # bad lines take no index
                continue
            if index >= keep_from:
                append(event)
            index += 1
        self.next_index = index
        self.lines_seen = lines_seen

    def feed_runs(self, text: bytes) -> None:
        """Like :meth:`feed`, but the lines :meth:`feed` would return with ``data=None``
        are only matched here; :meth:`take_run` summarises them, for the whole read,
        as one :class:`EventRun`. Same indices, counts and bad lines as :meth:`feed`
        (which reads the lines up to the header).

        One pass, one ``find`` and one ``match`` per line: measured against a C-level
        ``map`` of the matches and a ``findall`` over the unit, this was the fastest.
        """
        skip = self.skip
        if skip is None:
            self.feed(text)
            return
        if self.lines_seen == 0:
            # Up to and with the first line that is not blank (the header, or not).
            leading = _LEADING_BLANK.match(text)
            cut = text.find(b"\n", leading.end() if leading else 0) + 1 or len(text)
            self.feed(text[:cut])
            text = text[cut:]
        match_prefix = skip.run_prefix.match
        matched: list[re.Match[bytes]] = []
        keep = matched.append
        append = self.events.append
        find = text.find
        index = self.next_index  # of the next event, not counting matched lines
        others = 0  # non-blank lines that are not matched
        bad = 0
        pos, size = 0, len(text)
        while pos < size:
            end = find(b"\n", pos)
            if end == -1:
                end = size
            match = match_prefix(text, pos, end)
            if match is not None:
                keep(match)
            elif pos != end and not (text[pos] in _BLANK and text[pos:end].isspace()):
                others += 1
                event = _parse(text[pos:end], index + len(matched))
                if event is None:
                    bad += 1  # bad lines take no index
                else:
                    append(event)
                    index += 1
            pos = end + 1
        if matched:
            # The digits go to orjson as one JSON array: C makes the ints, where an
            # int() per line cost as much again as matching the line.
            seqs = orjson.loads(b"[" + b",".join(map(_SEQ, matched)) + b"]")
            self.run_seqs += seqs
            self.run_time = max(
                self.run_time, max(orjson.loads(b"[" + b",".join(map(_TIME, matched)) + b"]"))
            )
            if self.marks:
                names = list(map(_NAME, matched))
                latest = self.run_latest
                for mark in self.marks:
                    seq = max(compress(seqs, map(mark.__eq__, names)), default=-1)
                    if seq > latest.get(mark, -1):
                        latest[mark] = seq
        self.next_index = index + len(matched)
        self.lines_seen += len(matched) + others
        self.bad_lines += bad

    def take_run(self) -> EventRun | None:
        """The lines matched by :meth:`feed_runs` as one run (``None`` when none):
        their seqs, latest time and the latest seq of each type in ``marks``."""
        if not self.run_seqs:
            return None
        seqs = tuple(self.run_seqs)
        latest = tuple(
            (mark.decode(), self.run_latest[mark]) for mark in self.marks if mark in self.run_latest
        )
        return EventRun(len(seqs), seqs, self.run_time, latest)

    def _header_line(self, line: bytes) -> bool:
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError:
            return False
        if isinstance(obj, dict) and obj.get("type") == "session":
            self.header = coerce_header(obj)
            return True
        return False


class LogReader:
    """Incremental reader of one log file; never writes, never creates anything.

    ``skip_types``: events of these types whose line starts the writer's way
    (``{"type":"…","seq":N,"time":T,``) come back with ``data=None`` without parsing
    the rest of the line (``BULK_TYPES`` is the usual choice); given as a mapping,
    a type with a marker is parsed in full when the line contains the marker. A
    skipped line is not validated beyond its prefix. Other lines, and lines of
    other shapes, are parsed in full. Default: everything parsed in full.
    """

    def __init__(
        self,
        path: Path | str,
        *,
        skip_types: SkipTypes = (),
        checkpoint_every: int = 256,
        run_marks: Iterable[str] = (),
    ) -> None:
        self.path = Path(path)
        self._run_marks = tuple(sorted({m.encode() for m in run_marks}))
        self.zstd = is_zstd_path(self.path)
        self.skip_types = skip_types
        self._skip = _skip_rule(skip_types)
        self._checkpoint_every = max(1, checkpoint_every)
        self._reset()

    def _reset(self) -> None:
        self._identity: tuple[int, int] | None = None
        self._progress = _Progress(end=0)
        self._fingerprint = b""
        self._lines_seen = 0
        self._count = 0
        self._bad = 0
        self._header: SessionHeader | None = None
        self._checkpoints: list[Checkpoint] = [Checkpoint(0, 0, 0)]
        self._checkpoint_indices: list[int] = [0]
        self._pending_checkpoint: Checkpoint | None = None

    # -- what is known so far -------------------------------------------------
    @property
    def header(self) -> SessionHeader | None:
        return self._header

    @property
    def event_count(self) -> int:
        return self._count

    @property
    def bad_lines(self) -> int:
        return self._bad

    @property
    def offset(self) -> int:
        return self._progress.end

    @property
    def identity(self) -> tuple[int, int] | None:
        return self._identity

    @property
    def checkpoints(self) -> tuple[Checkpoint, ...]:
        return tuple(self._checkpoints)

    # -- reading ----------------------------------------------------------------
    def read_new(self, *, runs: bool = False) -> ReadBatch:
        """The events appended since the last call (all of them the first time).

        ``runs=True``: the lines that would come back with ``data=None`` come as one
        :class:`EventRun` (last in ``events``) rather than one event each; indices,
        counts, checkpoints and offsets are the same as without it.
        """
        try:
            with open(self.path, "rb") as f:
                return self._read_new(f, runs)
        except OSError as exc:
            return self._batch([], self._count, error=_os_reason(exc))

    def _read_new(self, f: BinaryIO, runs: bool) -> ReadBatch:
        st = os.fstat(f.fileno())
        identity = (st.st_dev, st.st_ino)
        restarted = False
        if self._identity is not None and (
            identity != self._identity
            or st.st_size < self._progress.end
            or not self._same_prefix(f)
        ):
            self._reset()
            restarted = True
        self._identity = identity

        decoder = _LineDecoder(
            self._skip, self._lines_seen, self._count, self._header, marks=self._run_marks
        )
        first_index = self._count
        # Work on a copy: a read that fails half-way leaves the remembered state intact.
        progress = _Progress(end=self._progress.end, carry=self._progress.carry)
        if not progress.carry and self._checkpoints[-1].offset < progress.end:
            # Where this read starts: a caller asking for "events from what I saw last
            # time" (read_range(k) with k == the old count) decodes only new frames.
            # At most one per read that found new data, so still sparse.
            self._pending_checkpoint = Checkpoint(self._count, progress.end, self._lines_seen)
        else:
            self._pending_checkpoint = None
        ahead = st.st_size - progress.end > _AHEAD_MIN_BYTES
        for unit in _units(f, self.zstd, progress, None, ahead):
            if unit.starts_clean and decoder.next_index - self._checkpoint_indices[-1] >= (
                self._checkpoint_every
            ):
                self._add_checkpoint(Checkpoint(decoder.next_index, unit.start, decoder.lines_seen))
            if runs:
                decoder.feed_runs(unit.text)
            else:
                decoder.feed(unit.text)
        events = cast("list[LogEvent | EventRun]", decoder.events)
        run = decoder.take_run()
        if run is not None:
            events.append(run)
        if self._pending_checkpoint is not None and decoder.next_index > self._count:
            self._insert_checkpoint(self._pending_checkpoint)
        self._progress = progress
        self._lines_seen = decoder.lines_seen
        self._count = decoder.next_index
        self._bad += decoder.bad_lines
        self._header = decoder.header
        self._remember_fingerprint(f)
        return self._batch(
            events,
            first_index,
            bad_lines=decoder.bad_lines,
            restarted=restarted,
            torn_tail_bytes=progress.torn_tail_bytes,
            garbage=progress.garbage,
        )

    def read_range(
        self,
        start_index: int,
        stop_index: int | None = None,
        *,
        skip_types: SkipTypes | None = None,
    ) -> list[LogEvent]:
        """Events ``[start_index, stop_index)`` among those :meth:`read_new` has seen.

        Decodes from the nearest checkpoint at or before ``start_index``, not from the
        start of the file. Returns ``[]`` when the file can no longer be read or is
        no longer the file that was read (call :meth:`read_new` again).
        ``skip_types`` overrides the reader's own choice for this call.
        """
        stop = self._count if stop_index is None else min(stop_index, self._count)
        start = max(0, start_index)
        if start >= stop:
            return []
        checkpoint = self._checkpoints[bisect.bisect_right(self._checkpoint_indices, start) - 1]
        skip = self._skip if skip_types is None else _skip_rule(skip_types)
        decoder = _LineDecoder(skip, checkpoint.lines_before, checkpoint.event_index)
        try:
            with open(self.path, "rb") as f:
                st = os.fstat(f.fileno())
                if (st.st_dev, st.st_ino) != self._identity or st.st_size < self._progress.end:
                    return []
                progress = _Progress(end=checkpoint.offset)
                for unit in _units(f, self.zstd, progress, self._progress.end):
                    decoder.feed(unit.text, keep_from=start, keep_to=stop)
                    if decoder.next_index >= stop:
                        break
        except OSError:
            return []
        return decoder.events[: stop - start]

    # -- internals ----------------------------------------------------------------
    def _add_checkpoint(self, checkpoint: Checkpoint) -> None:
        self._checkpoints.append(checkpoint)
        self._checkpoint_indices.append(checkpoint.event_index)

    def _insert_checkpoint(self, checkpoint: Checkpoint) -> None:
        """Add a checkpoint found after later ones were added during the same read."""
        at = bisect.bisect_left(self._checkpoint_indices, checkpoint.event_index)
        if at < len(self._checkpoints) and self._checkpoints[at].offset <= checkpoint.offset:
            return  # an equal or later start for the same event is already known
        self._checkpoints.insert(at, checkpoint)
        self._checkpoint_indices.insert(at, checkpoint.event_index)

    def _same_prefix(self, f: BinaryIO) -> bool:
        if not self._fingerprint:
            return True
        f.seek(self._progress.end - len(self._fingerprint))
        return f.read(len(self._fingerprint)) == self._fingerprint

    def _remember_fingerprint(self, f: BinaryIO) -> None:
        end = self._progress.end
        size = min(end, _FINGERPRINT_BYTES)
        f.seek(end - size)
        self._fingerprint = f.read(size)

    def _batch(
        self,
        events: list[LogEvent | EventRun],
        first_index: int,
        *,
        bad_lines: int = 0,
        restarted: bool = False,
        torn_tail_bytes: int = 0,
        garbage: str | None = None,
        error: str | None = None,
    ) -> ReadBatch:
        return ReadBatch(
            header=self._header,
            events=events,
            first_index=first_index,
            total_events=self._count,
            bad_lines=bad_lines,
            total_bad_lines=self._bad,
            torn_tail_bytes=torn_tail_bytes,
            restarted=restarted,
            garbage=garbage,
            error=error,
            offset=self._progress.end,
        )


@dataclass(slots=True)
class RawScan:
    """Every complete raw line of a log from the start, for a faithful dump.

    Iterate :meth:`lines`; afterwards ``torn_tail_bytes`` and ``garbage`` say how
    the data ended. Opening errors raise ``OSError`` (the caller maps them).
    """

    path: Path
    torn_tail_bytes: int = 0
    garbage: str | None = None

    def lines(self) -> Iterator[bytes]:
        with open(self.path, "rb") as f:
            progress = _Progress(end=0)
            for unit in _units(f, is_zstd_path(self.path), progress, None):
                for line in unit.lines:
                    if line and not line.isspace():
                        yield line
            self.torn_tail_bytes = progress.torn_tail_bytes
            self.garbage = progress.garbage


def read_header(path: Path) -> SessionHeader | None:
    """Only the header line of a log (decodes the first frame or line, not the rest)."""
    scan = RawScan(path)
    try:
        for line in scan.lines():
            try:
                obj = orjson.loads(line)
            except orjson.JSONDecodeError:
                return None
            is_header = isinstance(obj, dict) and obj.get("type") == "session"
            return coerce_header(obj) if is_header else None
    except OSError:
        return None
    return None


__all__ = [
    "BULK_TYPES",
    "Checkpoint",
    "LogReader",
    "RawScan",
    "ReadBatch",
    "read_header",
]
