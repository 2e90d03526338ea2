"""Cache entries on disk: one file per key, written atomically off the request path.

A write never happens while a request waits for it: :meth:`LaneCacheStore.offer`
only notes that a key has something new, and one writer thread writes it a moment
later, then at most once per ``write_every_s`` per key (a live log grows every few
seconds; re-pickling a big lane each time would cost the server CPU for nothing),
and :meth:`LaneCacheStore.close` writes whatever is left (the server's shut-down).
What to write is asked of the offerer only when the write happens, so it is the
latest state. The folder stays under a size budget: entries whose log is gone go
first, then the least recently used.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import re
import stat
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from .codec import MAGIC, decode, encode, read_meta
from .location import prepare_folder

#: The folder's size budget. A real-sized team (9 lanes, 83 MB of decompressed log)
#: takes a few MB of entries, so this keeps dozens of teams: every team one user
#: opens in weeks, while staying small beside the logs it saves reading.
DEFAULT_BUDGET_BYTES = 256 * 1024 * 1024
#: At most one write per key this often while its log keeps growing. Pickling a big
#: team's lead takes ~45 ms of the server's CPU; a stopped server writes what is
#: pending anyway, so this only bounds what a crash makes the next server re-read.
DEFAULT_WRITE_EVERY_S = 120.0
#: A first offer waits this long, so a burst of reads (a team's lanes) is written
#: after the request that read them has answered.
SETTLE_S = 1.0
#: Temporary files older than this are left-overs of a crash.
_STALE_TEMP_S = 3600.0
_SUFFIX = ".lane"
_TEMP_PREFIX = ".tmp-"
_TEMP_SUFFIX = ".part"
#: The only names this store writes: an entry (its key's 16-byte digest in hex) and
#: mkstemp's temporary file. The sweep touches nothing else, so a folder pointed at
#: by mistake (``--cache-dir ~``) loses no file of its owner.
_ENTRY_NAME = re.compile(r"[0-9a-f]{32}" + re.escape(_SUFFIX))
_TEMP_NAME = re.compile(re.escape(_TEMP_PREFIX) + r"[a-z0-9_]{8}" + re.escape(_TEMP_SUFFIX))
#: What the sweep reads of an entry: the magic line and a header line.
_HEADER_READ = len(MAGIC) + 16 * 1024
#: The budget and dead-log pass after writes runs at most this often, or sooner once
#: this many bytes were written since the last one (a pass lists and opens every entry).
SWEEP_EVERY_S = 300.0
SWEEP_AFTER_BYTES = 32 * 1024 * 1024

log = logging.getLogger("dsh_task_gantt.lane_cache")

#: Called by the writer when the write happens: ``(meta, value)``, or ``None`` when
#: there is nothing consistent to write right now (a later offer will bring it).
Capture = Callable[[], tuple[Mapping[str, str], object] | None]


def read_regular(path: Path, limit: int) -> bytes | None:
    """The first ``limit`` bytes of ``path`` when it is a regular file, else ``None``.

    Never follows a symlink and never waits on a FIFO or a device: a file planted in
    the folder must not hang the writer, a shut-down or a request holding a lock.
    Raises ``OSError`` (``ELOOP`` for a symlink).
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        chunks: list[bytes] = []
        left = limit
        while left > 0:
            chunk = os.read(fd, min(left, 1024 * 1024))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


class LaneCacheStore:
    """Entries in one private folder (see :func:`open_store`), keyed by strings."""

    def __init__(
        self,
        folder: Path,
        *,
        budget_bytes: int = DEFAULT_BUDGET_BYTES,
        write_every_s: float = DEFAULT_WRITE_EVERY_S,
        settle_s: float = SETTLE_S,
        logger: logging.Logger = log,
    ) -> None:
        self.folder = folder
        self.budget_bytes = budget_bytes
        self.write_every_s = write_every_s
        self.settle_s = settle_s
        self._log = logger
        self._cond = threading.Condition()
        #: key -> (what to write, when it became due at the earliest)
        #: Drained by the writer: at most one capture per key offered since.
        self._pending: dict[str, tuple[Capture, float]] = {}
        #: When each key was last written, kept only while it still paces a write (for
        #: ``write_every_s``): bounded by the keys written in that interval, not by
        #: every lane ever written.
        self._written_at: dict[str, float] = {}
        self._thread: threading.Thread | None = None
        self._closed = False
        self._write_failed = False
        #: Entries written and loaded since start (for tests and benchmarks).
        self.writes = 0
        self.loads = 0
        #: The sweep after writes is paced by these (see :data:`SWEEP_EVERY_S`).
        self._swept_at = time.monotonic()
        self._written_since_sweep = 0
        self.sweeps = 0

    def path_for(self, key: str) -> Path:
        name = hashlib.blake2b(key.encode(), digest_size=16).hexdigest()
        return self.folder / f"{name}{_SUFFIX}"

    # -- reading -----------------------------------------------------------------------

    def load(self, key: str, expect: Mapping[str, str]) -> tuple[dict[str, Any], object] | None:
        """The entry of ``key`` when there is a valid one; never raises."""
        path = self.path_for(key)
        try:
            # One byte past the budget tells an entry too big to ever be kept.
            data = read_regular(path, self.budget_bytes + 1)
        except FileNotFoundError:
            return None
        except OSError as exc:
            self._log.warning("dsh-task-gantt: a lane cache entry could not be read: %r", exc)
            return None
        if data is None or len(data) > self.budget_bytes:
            self._log.warning(
                "dsh-task-gantt: ignored a lane cache entry that is not a regular file of at "
                "most %d bytes: %s",
                self.budget_bytes,
                path,
            )
            return None
        decoded = decode(data, {**expect, "key": key})
        if decoded is None:
            # Debug: after an upgrade every entry is from another version.
            self._log.debug(
                "dsh-task-gantt: ignored a lane cache entry (truncated, corrupt, or written by "
                "another version); the log is read instead"
            )
            return None
        with contextlib.suppress(OSError):
            os.utime(path)  # recently used: evicted last
        self.loads += 1
        return decoded

    # -- writing -----------------------------------------------------------------------

    def offer(self, key: str, capture: Capture) -> None:
        """``key`` has something new; it is written later, by the writer thread."""
        now = time.monotonic()
        with self._cond:
            if self._closed:
                return
            due = max(now + self.settle_s, self._written_at.get(key, -1e18) + self.write_every_s)
            earlier = self._pending.get(key)
            self._pending[key] = (capture, due if earlier is None else earlier[1])
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="dsh-task-gantt lane cache", daemon=True
                )
                self._thread.start()
            self._cond.notify()

    def flush(self) -> None:
        """Write every pending entry now, in the calling thread."""
        with self._cond:
            pending, self._pending = self._pending, {}
        for key, (capture, _) in pending.items():
            self._write(key, capture)
        if pending:
            self.sweep()

    def close(self) -> None:
        """Stop the writer and write what is left (the server is stopping)."""
        with self._cond:
            self._closed = True
            self._cond.notify()
            thread = self._thread
        if thread is not None:
            thread.join(timeout=30)
        self.flush()

    def sweep_soon(self) -> None:
        """Sweep in a thread of its own (a server's start: entries of logs deleted
        since are dropped even when this server never writes one)."""
        threading.Thread(
            target=self.sweep, name="dsh-task-gantt lane cache sweep", daemon=True
        ).start()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._closed:
                    now = time.monotonic()
                    due = {k: v for k, v in self._pending.items() if v[1] <= now}
                    if due:
                        for key in due:
                            del self._pending[key]
                        break
                    soonest = min((v[1] for v in self._pending.values()), default=None)
                    self._cond.wait(None if soonest is None else soonest - now)
                else:
                    return
            for key, (capture, _) in due.items():
                self._write(key, capture)
            self._sweep_if_due()

    def _sweep_if_due(self) -> None:
        if (
            time.monotonic() - self._swept_at >= SWEEP_EVERY_S
            or self._written_since_sweep >= SWEEP_AFTER_BYTES
        ):
            self.sweep()

    def _write(self, key: str, capture: Capture) -> None:
        try:
            got = capture()
            if got is None:
                return
            meta, value = got
            data = encode({**meta, "key": key}, value)
            fd, temp = tempfile.mkstemp(dir=self.folder, prefix=_TEMP_PREFIX, suffix=_TEMP_SUFFIX)
            try:
                with os.fdopen(fd, "wb") as f:  # mkstemp makes it 0600
                    f.write(data)
                os.replace(temp, self.path_for(key))
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(temp)
                raise
        except Exception as exc:  # a full disk, a folder gone: the cache is only a cache
            # Said once: a folder that is gone fails every write after it.
            level = logging.DEBUG if self._write_failed else logging.WARNING
            self._write_failed = True
            self._log.log(level, "dsh-task-gantt: writing a lane cache entry failed: %r", exc)
            return
        with self._cond:
            now = time.monotonic()
            stale = [k for k, at in self._written_at.items() if at + self.write_every_s <= now]
            for old in stale:
                del self._written_at[old]
            self._written_at[key] = now
        self.writes += 1
        self._written_since_sweep += len(data)

    # -- bounds ------------------------------------------------------------------------

    def sweep(self) -> None:
        """Drop our entries whose log is gone, then the least recently used ones past
        the budget, and stale temporary files of ours. Only names this store writes
        are touched, and an entry only when it has our magic: a foreign file with an
        entry's name is left in place (a write for its key may replace it)."""
        self._swept_at = time.monotonic()
        self._written_since_sweep = 0
        self.sweeps += 1
        kept: list[tuple[float, int, Path]] = []
        try:
            names = os.listdir(self.folder)
        except OSError:
            return
        now = time.time()
        for name in names:
            path = self.folder / name
            try:
                if _TEMP_NAME.fullmatch(name):
                    st = path.lstat()
                    if stat.S_ISREG(st.st_mode) and now - st.st_mtime > _STALE_TEMP_S:
                        path.unlink()
                    continue
                if not _ENTRY_NAME.fullmatch(name):
                    continue  # not ours: left alone
                st = path.lstat()
                head = read_regular(path, _HEADER_READ)
                meta = read_meta(head) if head is not None else None
                if meta is None:
                    continue  # not ours (or not readable): left alone
                logged = meta.get("log")
                if not isinstance(logged, str) or not os.path.exists(logged):
                    path.unlink()
                    continue
                kept.append((st.st_mtime, st.st_size, path))
            except OSError:
                continue
        total = sum(size for _, size, _ in kept)
        for _, size, path in sorted(kept):
            if total <= self.budget_bytes:
                break
            with contextlib.suppress(OSError):
                path.unlink()
                total -= size


def open_store(
    folder: Path,
    *,
    sessions_root: Path | None = None,
    logger: logging.Logger = log,
    **options: Any,
) -> LaneCacheStore | None:
    """A store in ``folder``, or ``None`` (and one warning saying why) when the folder
    cannot be private: the server then runs without the cache."""
    problem = prepare_folder(folder, sessions_root=sessions_root)
    if problem is not None:
        logger.warning("dsh-task-gantt: running without the lane cache: %s", problem)
        return None
    return LaneCacheStore(folder, logger=logger, **options)
