"""``sessionPersistence`` over a sessions root directory (read-only).

The standalone host and the CLI use this where the real host would offer its own
service: ``<root>/<projectKey>/<sessionId>/session.v4.jsonl.zstd`` (or ``.jsonl``).
One :class:`~dsh_task_gantt.logs.reader.LogReader` per log file is kept, so repeated
``stat`` / ``read`` calls decode only frames appended since the last call. Nothing is
cached by time: ``revision`` is derived from the file's identity, size and mtime.

Given a lane cache, it also keeps each reader's state (with what its caller folded of
the events) for a later process, and resumes a reader from it when the file is still
the one read (``resume_lane`` / ``keep_lane``); the cache lives outside the root.

Decoding runs in a worker thread (a cold read of a big log takes a while and must
not stall the event loop); a lock per log keeps one reader's state consistent.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import zstandard

from dsh_task_gantt.events import EventRun, LogEvent, SessionHeader, header_from_line
from dsh_task_gantt.ids import valid_session_id
from dsh_task_gantt.lane_cache import LaneCacheStore, format_key
from dsh_task_gantt.logs.frames import walk_frames
from dsh_task_gantt.logs.project_key import decode_segment, encode_segment
from dsh_task_gantt.logs.reader import (
    LogReader,
    RawScan,
    ReaderState,
    SkipTypes,
    decompress_frame,
    is_zstd_path,
)

#: Log file names, newest format generation first and ``.jsonl.zstd`` before
#: ``.jsonl`` within one: DSH 0.2 writes format 4; 0.1.x wrote ``session.v3.*``
#: (format 3) and older builds ``session.*`` (format 0). An older file gets a newer
#: copy only when the session is reopened, so a folder may hold several: the first
#: one found wins. The events the fold reads have the same shape in all of them.
LOG_NAMES = (
    "session.v4.jsonl.zstd",
    "session.v4.jsonl",
    "session.v3.jsonl.zstd",
    "session.v3.jsonl",
    "session.jsonl.zstd",
    "session.jsonl",
)
#: The format number each file name holds.
LOG_FORMATS = {name: (4 if ".v4." in name else 3 if ".v3." in name else 0) for name in LOG_NAMES}
#: ``list`` is also a method name below; this alias keeps annotations unambiguous.
_Rows = list[dict[str, Any]]
#: Enough bytes for any real header line (they are a few hundred bytes).
_HEADER_PROBE_BYTES = 64 * 1024
#: Readers kept (least recently opened dropped first): each one's offsets, checkpoints
#: and head let a grown log be read from where it stopped. The plugin's service drops
#: the readers of the teams it forgot (``forget_sessions``); this bounds a caller that
#: never does (a host's own service, a script reading every log of a big root). Several
#: big teams' lanes fit; a dropped reader only costs its next read starting afresh.
READERS_KEPT = 256
#: A call into this persistence may take this long (a day-long team's logs decoded
#: one after the other on a loaded machine), not a host's 5 s.
LOCAL_CALL_TIMEOUT_S = 300.0


class SessionLogError(Exception):
    """A log exists but cannot be read; ``str()`` is a short reason without a path."""


class SessionNotFound(LookupError):
    """No log for this session id under the root (or the id is not a valid id)."""


def _log_in(root: Path, folder: Path) -> tuple[Path, os.stat_result] | None:
    """The newest-generation log file in a session folder, if one is there (and
    inside ``root``: a log reached through a link that leaves the root is ignored)."""
    for name in LOG_NAMES:
        path = folder / name
        try:
            st = path.stat()
            if path.is_file() and path.resolve().is_relative_to(root):
                return path, st
        except OSError:
            continue
    return None


def revision_of(st: os.stat_result) -> str:
    """Changes exactly when the file does: identity, size and modification time."""
    return f"{st.st_dev:x}.{st.st_ino:x}.{st.st_size:x}.{st.st_mtime_ns:x}"


def read_header_fast(path: Path) -> SessionHeader | None:
    """The header from the first bytes of a log, without touching the rest."""
    try:
        with open(path, "rb") as f:
            head = f.read(_HEADER_PROBE_BYTES)
    except OSError:
        return None
    data = b""
    if is_zstd_path(path):
        dctx = zstandard.ZstdDecompressor()
        # Frame by frame: the header is in the first, and walking the whole probe
        # (dozens of frames) costs more than decoding it on a root of hundreds of logs.
        pos = 0
        while (walk := walk_frames(head, pos, max_frames=1)).frames:
            frame = walk.frames[0]
            pos = frame.end
            if frame.skippable:
                continue
            try:
                out = decompress_frame(dctx, head[frame.start : frame.end], frame.content_size)
            except zstandard.ZstdError:
                return None
            if out is None:  # a frame too big to be a header: not a log
                return None
            data += out
            if b"\n" in data:
                break
    else:
        data = head
    first, newline, _ = data.lstrip().partition(b"\n")
    if not newline:
        return _header_by_scan(path)  # an unusually long first line: decode properly
    return header_from_line(first)


def _header_by_scan(path: Path) -> SessionHeader | None:
    try:
        for line in RawScan(path).lines():
            return header_from_line(line)
    except OSError:
        return None
    return None


def _skip_items(skip_types: SkipTypes) -> list[tuple[str, Any]]:
    if isinstance(skip_types, Mapping):
        return [(str(k), v) for k, v in skip_types.items()]
    return [(str(t), None) for t in skip_types]


def _header_dict(header: SessionHeader | None) -> dict[str, Any]:
    return dict(header.raw) if header is not None else {}


@dataclass(slots=True)
class _Entry:
    """One log file's reader, shared by every handle on it."""

    path: Path
    reader: LogReader
    lock: threading.Lock = field(default_factory=threading.Lock)
    #: Shared by every log of one persistence: one decode at a time (see ``decoding``).
    decoding: threading.Lock = field(default_factory=threading.Lock)


class DirectoryReadHandle:
    """A read handle: ``read(offset, length)`` → events; ``close()`` (docs/host-contract.md,
    Services).

    It never takes ownership of the log and works while a writer appends.
    ``bad_lines``, ``torn_tail_bytes`` and ``garbage`` describe the last read
    (extras beyond the host's handle, for notes).
    """

    def __init__(self, session_id: str, entry: _Entry, header: SessionHeader | None) -> None:
        self.id = session_id
        self._entry = entry
        self.header: dict[str, Any] = _header_dict(header)
        self.inherited_event_count: int | None = (
            header.inherited_event_count if header is not None else None
        )
        self.bad_lines = 0
        self.torn_tail_bytes = 0
        self.garbage: str | None = None
        #: Events in the log as of the last read (a shrunk log has fewer than before).
        self.event_count: int | None = None
        #: The last read found another file (replaced, shrunk, rewritten): offsets
        #: given before it name events of the old file.
        self.restarted = False
        #: Set by the persistence when this session's file is not the one read before.
        self.switched = False
        self.closed = False
        #: The file read, e.g. ``session.v3.jsonl.zstd`` (which format the events came in).
        self.log_name = entry.path.name

    @property
    def inheritedEventCount(self) -> int | None:  # the host's spelling
        return self.inherited_event_count

    async def read(self, offset: int = 0, length: int | None = None) -> list[LogEvent]:
        if self.closed:
            raise SessionLogError("the read handle is closed")
        items = await asyncio.to_thread(self._read, max(0, offset), length, False)
        return cast("list[LogEvent]", items)  # without runs every item is a LogEvent

    async def read_runs(self, offset: int = 0) -> list[LogEvent | EventRun]:
        """``read(offset)``, except that the lines the reader may skip (``skip_types``)
        can come summarised in :class:`EventRun` items, which stand for
        ``EventRun.size`` events each (``events.event_count`` counts them). An extra
        of this persistence for the plugin's own fold, not part of the host's handle.
        """
        if self.closed:
            raise SessionLogError("the read handle is closed")
        return await asyncio.to_thread(self._read, max(0, offset), None, True)

    def _read(self, offset: int, length: int | None, runs: bool) -> list[LogEvent | EventRun]:
        entry = self._entry
        with entry.lock, entry.decoding:
            batch = entry.reader.read_new(runs=runs)
            if batch.error is not None:
                raise SessionLogError(batch.error)
            reader = entry.reader
            if reader.header is None and reader.event_count == 0:
                # Nothing of it could be read: saying "empty" would claim a log was read.
                if batch.garbage is not None:
                    raise SessionLogError(
                        f"no readable frame: its bytes are not a log from the first one "
                        f"({batch.garbage})"
                    )
                if batch.total_bad_lines:
                    raise SessionLogError(
                        f"no readable line: not a log ({batch.total_bad_lines} lines that "
                        "are not JSON events)"
                    )
            self.bad_lines = batch.total_bad_lines
            self.torn_tail_bytes = batch.torn_tail_bytes
            self.garbage = batch.garbage
            total = self.event_count = batch.total_events
            self.restarted = batch.restarted or self.switched
            stop = total if length is None else min(total, offset + max(0, length))
            if offset >= stop:
                return []
            first = batch.first_index
            older: list[LogEvent | EventRun] = []
            if offset < first:
                older.extend(entry.reader.read_range(offset, min(stop, first)))
            if runs and offset <= first and stop == total:
                return older + batch.events  # the whole new batch, its run included
            if runs:  # a run cannot be cut at an index: decode the events again
                return older + list(entry.reader.read_range(max(offset, first), stop))
            if offset >= first:  # all of it was just decoded: no second pass
                return batch.events[offset - first : stop - first]
            return older + batch.events[: max(0, stop - first)]

    async def close(self) -> None:
        self.closed = True


class DirectorySessionPersistence:
    """The host's ``sessionPersistence`` over ``<root>/<projectKey>/<sessionId>/``.

    ``skip_types`` is handed to every reader (see ``LogReader``); events of those
    types then come back with ``data=None``.
    """

    #: How long a call may take (``host.call_timeout``): reads are local decoding work,
    #: one log at a time, so a call waits for the logs decoded before it; it is bounded
    #: only against a file system that hangs.
    call_timeout_s = LOCAL_CALL_TIMEOUT_S

    def __init__(
        self,
        root: Path,
        *,
        skip_types: SkipTypes = (),
        run_marks: Iterable[str] = (),
        lane_cache: LaneCacheStore | None = None,
    ) -> None:
        self.root = Path(root)
        #: Where a reader's state (and what its reader folded) outlives the process.
        self.lane_cache = lane_cache
        #: Readers resumed from the cache (each one's log then read only from there).
        self.resumed = 0
        self.skip_types = skip_types
        #: Types whose latest seq an ``EventRun`` from ``read_runs`` carries.
        self.run_marks = tuple(run_marks)
        #: One reader per log file read (its offsets, a checkpoint per 256 events),
        #: least recently opened first: at most READERS_KEPT, less the ones
        #: ``forget_sessions`` dropped. Each file's header and the maps below are
        #: bounded by the logs under the root (a header is a few hundred bytes).
        self._entries: dict[Path, _Entry] = {}
        self._headers: dict[Path, tuple[tuple[int, int], SessionHeader | None]] = {}
        self._located: dict[str, Path] = {}
        #: The file each session was last opened from.
        self._read_paths: dict[str, Path] = {}
        #: Per workspace folder: its stat identity, and each session folder's header
        #: (a header never changes while its log keeps its name and identity).
        self._workspaces: dict[
            Path,
            tuple[tuple[int, int, int, int, int], dict[str, SessionHeader | None]],
        ] = {}
        self._scan_lock = threading.Lock()
        self._guard = threading.Lock()
        # Decoding is Python work under the GIL (a reader already decompresses ahead in
        # a thread of its own): logs decoded side by side only contend for the GIL and
        # hold more memory at once, so this persistence decodes one log at a time.
        self._decoding = threading.Lock()

    # -- finding logs -------------------------------------------------------------

    def use_skip_rules(self, skip_types: SkipTypes, run_marks: Iterable[str]) -> None:
        """The lines a reader may leave unparsed, offered by whoever folds the events.

        The plugin's service calls this with its fold's rules, so a host that builds
        this persistence never needs to know the fold. Readers compiled with other
        rules are dropped (open handles keep theirs); the same rules again cost nothing.
        """
        marks = tuple(run_marks)
        if skip_types == self.skip_types and marks == self.run_marks:
            return
        self.skip_types, self.run_marks = skip_types, marks
        self._entries.clear()

    def locate(self, session_id: str) -> Path | None:
        """The log file of ``session_id`` under the root, or ``None``.

        An id that is not a plain name (``^[A-Za-z0-9._-]{1,128}$``, no ``..``) is
        refused; a log reached through a link that leaves the root is ignored.
        """
        if not isinstance(session_id, str) or not valid_session_id(session_id):
            return None
        known = self._located.get(session_id)
        if known is not None and known.is_file():
            # A session reopened by a newer DSH gets a newer-generation file beside
            # the old one: that one wins from then on.
            newer = LOG_NAMES[: LOG_NAMES.index(known.name)]
            if not any((known.parent / name).is_file() for name in newer):
                return known
        try:
            root = self.root.resolve()
            projects = [p for p in root.iterdir() if p.is_dir()]
        except OSError:
            return None
        found: list[tuple[int, str, Path]] = []
        folders = dict.fromkeys((encode_segment(session_id), session_id))
        for project in projects:
            for folder in folders:
                candidate = _log_in(root, project / folder)
                if candidate is not None:
                    found.append((candidate[1].st_mtime_ns, project.name, candidate[0]))
                    break
        if not found:
            return None
        path = max(found)[2]  # the same id in two workspaces: the newest log
        self._located[session_id] = path
        return path

    def _entry(self, path: Path) -> _Entry:
        with self._guard:
            entry = self._entries.pop(path, None)
            if entry is None:
                reader = LogReader(path, skip_types=self.skip_types, run_marks=self.run_marks)
                entry = _Entry(path, reader, decoding=self._decoding)
            self._entries[path] = entry  # now the most recently opened
            while len(self._entries) > READERS_KEPT:
                # An open handle keeps its own entry: only later opens start afresh.
                del self._entries[next(iter(self._entries))]
            return entry

    def forget_sessions(self, session_ids: Iterable[str]) -> None:
        """Drop the readers of these sessions' logs: their caller forgot what it made
        of them, so its next read starts at 0 and nothing continues from their
        offsets (a lane cache can then resume them again). Open handles keep theirs.
        An extra of this persistence (the plugin's service calls it for the teams it
        forgot); headers stay, as the start page lists them all."""
        with self._guard:
            for session_id in session_ids:
                path = self._read_paths.pop(session_id, None)
                if path is not None:
                    self._entries.pop(path, None)

    def _header(self, path: Path, st: os.stat_result) -> SessionHeader | None:
        """The header, decoded once per file identity."""
        identity = (st.st_dev, st.st_ino)
        cached = self._headers.get(path)
        if cached is not None and cached[0] == identity and cached[1] is not None:
            return cached[1]
        entry = self._entries.get(path)
        header = entry.reader.header if entry is not None else None
        if header is None:
            header = read_header_fast(path)
        self._headers[path] = (identity, header)
        return header

    # -- the lane cache (an extra of this persistence) ---------------------------------

    def _cache_key(self, session_id: str) -> str:
        return f"{self.root.resolve()}\0{session_id}"

    def _cache_meta(self, session_id: str, path: Path) -> dict[str, str]:
        rules = repr(sorted(_skip_items(self.skip_types)))
        return {
            "format": format_key(rules, repr(self.run_marks)),
            "session": session_id,
            "log": str(path),
        }

    async def resume_lane(self, session_id: str) -> Any:
        """See :meth:`_resume_lane` (in a worker thread: it reads and unpickles a file)."""
        if self.lane_cache is None:
            return None
        return await asyncio.to_thread(self._resume_lane, session_id)

    def _resume_lane(self, session_id: str) -> Any:
        """What the last process to read this session's log kept of it (see
        :meth:`keep_lane`), with this persistence's reader resumed where that one
        stopped, so the next read decodes only what was appended since. ``None``
        (and nothing changed) unless the entry is for the file there now, unchanged
        up to where it was read, and was written with the same code and rules."""
        cache = self.lane_cache
        path = self.locate(session_id)
        if cache is None or path is None:
            return None
        loaded = cache.load(self._cache_key(session_id), self._cache_meta(session_id, path))
        if loaded is None:
            return None
        value = loaded[1]
        if not (isinstance(value, tuple) and len(value) == 2):
            return None
        state, lane = value
        # The lane must be what was made of exactly the events the state counts.
        if (
            not isinstance(state, ReaderState)
            or getattr(lane, "events_seen", None) != state.event_count
        ):
            return None
        entry = self._entry(path)
        with entry.lock:
            if entry.reader.identity is not None:  # this process read it already
                return None
            if not entry.reader.resume(state):
                return None
        self._read_paths[session_id] = path
        self.resumed += 1
        return lane

    def keep_lane(self, session_id: str, lane: object, event_count: int) -> None:
        """Keep ``lane`` (what the caller made of this session's first
        ``event_count`` events) with the reader's state, for a later process; written
        later by the cache's writer, never here. Without a cache, nothing."""
        cache = self.lane_cache
        path = self._read_paths.get(session_id)
        if cache is None or path is None:
            return
        meta = self._cache_meta(session_id, path)
        entry = self._entries.get(path)
        if entry is None:
            return
        # Which file and which run of the reader ``lane`` was made from: the write
        # happens later, and by then the log may have been replaced by another with as
        # many events. Not under the entry's lock: this runs on the event loop, and a
        # read may hold the lock for long; a generation that moved meanwhile is refused.
        reader = entry.reader
        generation = reader.generation
        identity = reader.identity
        if identity is None or reader.event_count != event_count:
            return  # read again since: that read offers its own lane
        if reader.generation != generation:
            return

        def capture() -> tuple[dict[str, str], object] | None:
            with entry.lock:
                if entry.reader.generation != generation:
                    return None
                state = entry.reader.state()
            # Only a state that is exactly what ``lane`` was made of: a read since
            # then will offer its own lane.
            if state is None or state.identity != identity or state.event_count != event_count:
                return None
            return meta, (state, lane)

        cache.offer(self._cache_key(session_id), capture)

    # -- the host's service ---------------------------------------------------------
    async def open(self, session_id: str, mode: str = "read") -> DirectoryReadHandle:
        if mode != "read":
            raise ValueError("only 'read' handles are offered: logs are never written")
        return await asyncio.to_thread(self._open, session_id)

    def _open(self, session_id: str) -> DirectoryReadHandle:
        path = self.locate(session_id)
        if path is None:
            raise SessionNotFound(f"no persisted log for session {session_id!r}")
        entry = self._entry(path)
        try:
            st = path.stat()
        except OSError as exc:
            raise SessionLogError("the log file could not be opened") from exc
        # Only the header here: the events are decoded by read(), once.
        handle = DirectoryReadHandle(session_id, entry, self._header(path, st))
        # Another file than the one this session was last read from (a newer format
        # generation appeared): offsets given before name events of the old file.
        handle.switched = self._read_paths.get(session_id, path) != path
        self._read_paths[session_id] = path
        return handle

    async def stat(self, session_id: str) -> dict[str, Any] | None:
        # Inline, not in a worker thread: a stat is one system call (plus a small
        # header read once per file), far cheaper than a thread hop — and it is the
        # whole cost of an unchanged poll.
        return self._stat(session_id)

    def _stat(self, session_id: str) -> dict[str, Any] | None:
        path = self.locate(session_id)
        if path is None:
            return None
        try:
            st = path.stat()  # before the read: a stale revision only causes a re-read
        except OSError:
            return None
        # No decoding here: a stat is the cheap question "did it change?". The event
        # count is given only when a read already reached the current end of the file.
        row: dict[str, Any] = {
            "header": _header_dict(self._header(path, st)),
            "revision": revision_of(st),
            "sizeBytes": st.st_size,
            "logName": path.name,
        }
        entry = self._entries.get(path)
        if entry is not None:
            reader = entry.reader
            if reader.identity == (st.st_dev, st.st_ino) and reader.offset == st.st_size:
                row["eventCount"] = reader.event_count
        return row

    async def latest_session(self) -> str | None:
        """The session whose log was written last (``None`` when the root holds none):
        the team a panel is most likely opened on. An extra of this persistence."""
        return await asyncio.to_thread(self._latest_session)

    def _latest_session(self) -> str | None:
        newest: tuple[int, str] | None = None
        try:
            root = self.root.resolve()
            projects = [p for p in root.iterdir() if p.is_dir()]
        except OSError:
            return None
        for project in projects:
            try:
                sessions = [s for s in project.iterdir() if s.is_dir()]
            except OSError:
                continue
            for session in sessions:
                session_id = decode_segment(session.name)
                found = _log_in(root, session) if session_id else None
                if session_id is None or found is None or not valid_session_id(session_id):
                    continue
                if newest is None or (found[1].st_mtime_ns, session_id) > newest:
                    newest = (found[1].st_mtime_ns, session_id)
        return None if newest is None else newest[1]

    async def children_of(self, parent_id: str) -> list[str]:
        """Ids of the sessions in ``parent_id``'s workspace whose header names it as
        ``parentSession`` (every workspace when the parent has no log here). An extra
        of this persistence, not part of the host's service.

        Each header is read once per log file identity; a workspace folder whose
        entries did not change (same mtime, size and link count) is not listed again,
        so an unchanged poll costs one ``stat`` per workspace.
        """
        # Inline like ``stat``: once the headers are known it is one ``stat`` per
        # workspace, far cheaper than a thread hop on every poll.
        return self._children_of(parent_id)

    def _children_of(self, parent_id: str) -> list[str]:
        with self._scan_lock:
            return self._scan_children(parent_id)

    def _scan_children(self, parent_id: str) -> list[str]:
        try:
            root = self.root.resolve()
            located = self.locate(parent_id)
            projects = (
                [located.parent.parent]
                if located is not None
                else sorted(p for p in root.iterdir() if p.is_dir())
            )
        except OSError:
            return []
        children: list[str] = []
        for project in projects:
            for session_id, header in self._workspace_headers(root, project):
                if header is not None and header.parent_session == parent_id:
                    children.append(session_id)
        return sorted(set(children) - {parent_id})

    def _workspace_headers(
        self, root: Path, project: Path
    ) -> list[tuple[str, SessionHeader | None]]:
        """``(session id, header)`` of every log in one workspace folder (cached)."""
        try:
            st = project.stat()
        except OSError:
            return []
        identity = (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_size, st.st_nlink)
        cached = self._workspaces.get(project)
        if cached is None or cached[0] != identity:
            try:
                folders = sorted(s for s in project.iterdir() if s.is_dir())
            except OSError:
                return []
            known = {} if cached is None else cached[1]
            entries: dict[str, SessionHeader | None] = {}
            for folder in folders:
                entries[folder.name] = known.get(folder.name)
            cached = (identity, entries)
            self._workspaces[project] = cached
        out: list[tuple[str, SessionHeader | None]] = []
        entries = cached[1]
        for name, header in entries.items():
            session_id = decode_segment(name)
            if session_id is None or not valid_session_id(session_id):
                continue
            if header is None:  # not read yet, or its log was not there yet
                found = _log_in(root, project / name)
                header = self._header(*found) if found is not None else None
                entries[name] = header
            out.append((session_id, header))
        return out

    async def list(self) -> _Rows:
        return await asyncio.to_thread(self._list)

    def _list(self) -> _Rows:
        """Every session under the root: ``{id, header, revision, sizeBytes, project}``."""
        rows: _Rows = []
        try:
            root = self.root.resolve()
            projects = sorted(p for p in root.iterdir() if p.is_dir())
        except OSError:
            return rows
        for project in projects:
            try:
                sessions = sorted(s for s in project.iterdir() if s.is_dir())
            except OSError:
                continue
            for session in sessions:
                session_id = decode_segment(session.name)
                if session_id is None or not valid_session_id(session_id):
                    continue
                row = self._row(root, project, session)
                if row is not None:
                    rows.append(row)
        return rows

    def _row(self, root: Path, project: Path, session: Path) -> dict[str, Any] | None:
        found = _log_in(root, session)
        if found is None:
            return None
        path, st = found
        return {
            "id": decode_segment(session.name),
            "header": _header_dict(self._header(path, st)),
            "revision": revision_of(st),
            "sizeBytes": st.st_size,
            "project": project.name,
            "logName": path.name,
        }
