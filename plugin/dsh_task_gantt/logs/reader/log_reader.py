"""The incremental reader of one log: its identity, offset and checkpoints.

:class:`LogReader` remembers which file it read (``st_dev``/``st_ino`` and the bytes
just before the offset), how far, the counts, the header and a sparse list of
checkpoints, and decodes only what was appended since; see the package's docstring
for the edge cases.
"""

from __future__ import annotations

import bisect
import dataclasses
import hashlib
import itertools
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, cast

from dsh_task_gantt.events import EventRun, LogEvent, SessionHeader
from dsh_task_gantt.logs.reader.line_decoder import LineDecoder
from dsh_task_gantt.logs.reader.skip_rules import SkipTypes, skip_rule
from dsh_task_gantt.logs.reader.units import Progress, is_zstd_path, units

#: Bytes before the remembered offset compared on each read to catch in-place rewrites.
_FINGERPRINT_BYTES = 32
#: Bytes at the start of a log a resumed state also checks (its header is there).
_HEAD_BYTES = 4096
#: A read of more than this many new bytes decompresses ahead in a second thread.
AHEAD_MIN_BYTES = 256 * 1024


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


@dataclass(frozen=True, slots=True)
class ReaderState:
    """Everything a :class:`LogReader` remembers of its file, to resume in another
    process: the file's identity, how far it was read (and a partial line carried
    over a frame), the bytes just before that offset, the counts, the header and
    the checkpoints that let ``read_range`` decode older events again."""

    identity: tuple[int, int]
    offset: int
    carry: bytes
    fingerprint: bytes
    lines_seen: int
    event_count: int
    bad_lines: int
    header: SessionHeader | None
    checkpoints: tuple[Checkpoint, ...]
    #: A digest of the file's first bytes (up to ``_HEAD_BYTES``): another log written
    #: over this one differs there even where its last bytes happen to match.
    head_digest: bytes = b""


def _head_digest(f: BinaryIO, offset: int) -> bytes:
    f.seek(0)
    return hashlib.blake2b(f.read(min(offset, _HEAD_BYTES)), digest_size=16).digest()


def _os_reason(exc: OSError) -> str:
    """A short reason without the path (paths are not shown to panel users)."""
    if isinstance(exc, FileNotFoundError):
        return "the log file does not exist (it may have been removed)"
    if isinstance(exc, PermissionError):
        return "permission denied reading the log file"
    if isinstance(exc, IsADirectoryError):
        return "the log path is a directory"
    return f"could not read the log file ({type(exc).__name__}, errno {exc.errno})"


def _count(value: object) -> bool:
    return type(value) is int and value >= 0


def _plausible(state: ReaderState) -> bool:
    """A state this module could have written (a cache file is not trusted blindly:
    a well-formed entry of the wrong types must be refused here, not fail a read)."""
    points = state.checkpoints
    identity = state.identity
    return (
        isinstance(identity, tuple)
        and len(identity) == 2
        and all(type(n) is int for n in identity)
        and all(
            _count(n) for n in (state.offset, state.lines_seen, state.event_count, state.bad_lines)
        )
        and all(type(b) is bytes for b in (state.carry, state.fingerprint, state.head_digest))
        and (state.header is None or isinstance(state.header, SessionHeader))
        and isinstance(points, tuple)
        and all(
            type(c) is Checkpoint
            and all(_count(n) for n in (c.event_index, c.offset, c.lines_before))
            for c in points
        )
        and state.offset >= 0
        and len(state.fingerprint) == min(state.offset, _FINGERPRINT_BYTES)
        and min(state.lines_seen, state.event_count, state.bad_lines) >= 0
        and bool(points)
        and points[0] == Checkpoint(0, 0, 0)
        and all(a.event_index <= b.event_index for a, b in itertools.pairwise(points))
        and all(
            0 <= c.offset <= state.offset and c.event_index <= state.event_count for c in points
        )
    )


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
        self._skip = skip_rule(skip_types)
        self._checkpoint_every = max(1, checkpoint_every)
        self._generation = 0
        self._reset()

    def _reset(self) -> None:
        # Another generation: whatever was noted of the reader before (e.g. a fold
        # waiting to be cached with its state) no longer describes what it read.
        self._generation += 1
        self._resumed = False
        self._identity: tuple[int, int] | None = None
        self._progress = Progress(end=0)
        self._fingerprint = b""
        #: Digest of the first ``min(offset, _HEAD_BYTES)`` bytes, taken as they were read.
        self._head = b""
        self._head_len = -1  # not taken yet
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
    def generation(self) -> int:
        """Changes whenever the reader starts over (another file, a rewrite, a resume):
        equal values mean the events read since are a continuation of the same file."""
        return self._generation

    @property
    def checkpoints(self) -> tuple[Checkpoint, ...]:
        return tuple(self._checkpoints)

    # -- resuming in another process --------------------------------------------
    def state(self) -> ReaderState | None:
        """What this reader knows, or ``None`` before a read found the file (or when
        the file is no longer the one read: nothing consistent to say)."""
        if self._identity is None:
            return None
        try:
            with open(self.path, "rb") as f:
                st = os.fstat(f.fileno())
                if (st.st_dev, st.st_ino) != self._identity or not self._same_prefix(f):
                    return None
                # The head remembered at read time is what the counts describe; a head
                # written over since means these are no longer that file's bytes.
                if _head_digest(f, self._progress.end) != self._head:
                    return None
        except OSError:
            return None
        return ReaderState(
            identity=self._identity,
            offset=self._progress.end,
            carry=self._progress.carry,
            fingerprint=self._fingerprint,
            lines_seen=self._lines_seen,
            event_count=self._count,
            bad_lines=self._bad,
            header=self._header,
            checkpoints=tuple(self._checkpoints),
            head_digest=self._head,
        )

    def resume(self, state: ReaderState) -> bool:
        """Continue from ``state`` when the file is still the one it describes: the
        same identity, at least as long, and the same bytes just before the offset
        (a log only grows; a rewritten or replaced one must be read from the start).
        On ``False`` nothing changes."""
        if not _plausible(state):
            return False
        try:
            with open(self.path, "rb") as f:
                st = os.fstat(f.fileno())
                if (st.st_dev, st.st_ino) != state.identity or st.st_size < state.offset:
                    return False
                size = min(state.offset, _FINGERPRINT_BYTES)
                f.seek(state.offset - size)
                if f.read(size) != state.fingerprint:
                    return False
                if _head_digest(f, state.offset) != state.head_digest:
                    return False
        except OSError:
            return False
        self._reset()
        self._identity = state.identity
        self._progress = Progress(end=state.offset, carry=state.carry)
        self._fingerprint = state.fingerprint
        self._head = state.head_digest
        self._head_len = min(state.offset, _HEAD_BYTES)
        self._resumed = True
        self._lines_seen = state.lines_seen
        self._count = state.event_count
        self._bad = state.bad_lines
        self._header = state.header
        self._checkpoints = list(state.checkpoints)
        self._checkpoint_indices = [c.event_index for c in state.checkpoints]
        return True

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
        except Exception:
            if not self._resumed:
                raise
            # A resumed state that passed every check yet cannot be continued from:
            # read the file from its start rather than leave the log unreadable.
            self._reset()
        batch = self.read_new(runs=runs)
        return dataclasses.replace(batch, restarted=True)

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

        decoder = LineDecoder(
            self._skip, self._lines_seen, self._count, self._header, marks=self._run_marks
        )
        first_index = self._count
        # Work on a copy: a read that fails half-way leaves the remembered state intact.
        progress = Progress(end=self._progress.end, carry=self._progress.carry)
        if not progress.carry and self._checkpoints[-1].offset < progress.end:
            # Where this read starts: a caller asking for "events from what I saw last
            # time" (read_range(k) with k == the old count) decodes only new frames.
            # One per read that found new data; _insert_checkpoint drops the one
            # before it when its neighbours are within checkpoint_every (sparse).
            self._pending_checkpoint = Checkpoint(self._count, progress.end, self._lines_seen)
        else:
            self._pending_checkpoint = None
        ahead = st.st_size - progress.end > AHEAD_MIN_BYTES
        for unit in units(f, self.zstd, progress, None, ahead):
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
        head_len = min(progress.end, _HEAD_BYTES)
        if head_len != self._head_len:
            self._head = _head_digest(f, progress.end)
            self._head_len = head_len
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
        skip = self._skip if skip_types is None else skip_rule(skip_types)
        decoder = LineDecoder(skip, checkpoint.lines_before, checkpoint.event_index)
        try:
            with open(self.path, "rb") as f:
                st = os.fstat(f.fileno())
                if (st.st_dev, st.st_ino) != self._identity or st.st_size < self._progress.end:
                    return []
                progress = Progress(end=checkpoint.offset)
                for unit in units(f, self.zstd, progress, self._progress.end):
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
        if (
            at == len(self._checkpoints)
            and at >= 2
            and checkpoint.event_index - self._checkpoint_indices[at - 2] < self._checkpoint_every
        ):
            # A live log gets one of these per read (per append): the one before it
            # is no longer where a caller resumes, and the one before that is close
            # enough to decode from. So they stay sparse (each checkpoint's next but
            # one is at least ``checkpoint_every`` events on) instead of one per append.
            at -= 1
            del self._checkpoints[at], self._checkpoint_indices[at]
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
