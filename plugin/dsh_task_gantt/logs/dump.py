"""``dsh-task-gantt events``: a ``zstd -dc`` for session logs that understands torn tails.

Prints the decoded log as JSON lines, header first, re-emitting each valid line's
original bytes (nothing is re-serialised, so the output is faithful). Lines that
are not a JSON object with a string ``type`` are left out and counted; a torn
tail, skipped lines and garbage are each reported on ``err`` in one short line.

Exit codes: 0 the whole log was printed (skipped lines and a torn tail included);
1 the log holds garbage part-way and was printed up to it; 2 no such session, or
the file could not be read at all.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import BinaryIO, TextIO

import orjson

from dsh_task_gantt.logs.persistence import DirectorySessionPersistence
from dsh_task_gantt.logs.reader import RawScan, is_zstd_path


def _is_log_line(line: bytes) -> bool:
    try:
        obj = orjson.loads(line)
    except orjson.JSONDecodeError:
        return False
    return isinstance(obj, dict) and isinstance(obj.get("type"), str)


def _plural(n: int, one: str, many: str) -> str:
    return one if n == 1 else many


def dump_events(sessions_root: Path, session_id: str, out: BinaryIO, err: TextIO) -> int:
    """Write the log of ``session_id`` under ``sessions_root`` to ``out``; the exit code."""
    path = DirectorySessionPersistence(Path(sessions_root)).locate(session_id)
    if path is None:
        err.write(f"no session log for {session_id!r} under {sessions_root}\n")
        return 2
    scan = RawScan(path)
    skipped = 0
    try:
        for line in scan.lines():
            if line.endswith(b"\r"):
                line = line[:-1]
            if _is_log_line(line):
                out.write(line + b"\n")
            else:
                skipped += 1
        out.flush()
    except BrokenPipeError:
        _quiet_broken_pipe(out)  # `events … | head`: the reader went away, not an error
        return 0
    except OSError as exc:
        err.write(
            f"could not read the log of {session_id!r}: {exc.strerror or type(exc).__name__}\n"
        )
        return 2
    if skipped:
        noun = _plural(skipped, "line that is", "lines that are")
        err.write(f"skipped {skipped} {noun} not valid JSON\n")
    if scan.torn_tail_bytes:
        what = "frame" if is_zstd_path(path) else "line"
        err.write(
            f"stopped before a torn last {what} ({scan.torn_tail_bytes} bytes): "
            "a writer may be mid-append\n"
        )
    if scan.garbage is not None:
        err.write(f"stopped at data that is not part of a log: {scan.garbage}\n")
        return 1
    return 0


def _quiet_broken_pipe(out: BinaryIO) -> None:
    """Point the closed stream at /dev/null so the interpreter's final flush is silent."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, out.fileno())
    except (OSError, ValueError, AttributeError):
        pass
