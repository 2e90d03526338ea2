"""Write session logs the way the host does: a flat header frame, then one
independent zstd frame per append batch, each holding whole JSON lines.

Only the fixture generator and tests use this; the plugin itself never writes logs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import zstandard

from dsh_task_gantt.logs.project_key import project_key

COMPRESSED_NAME = "session.v4.jsonl.zstd"
PLAIN_NAME = "session.v4.jsonl"
#: The file name stem of each log format: DSH 0.2 writes 4, 0.1.x wrote 3, older 0.
FORMAT_STEMS = {4: "session.v4", 3: "session.v3", 0: "session"}


def log_name(fmt: int = 4, *, compress: bool = True) -> str:
    """``session.v4.jsonl.zstd``, ``session.v3.jsonl``, ``session.jsonl.zstd``, ..."""
    return FORMAT_STEMS[fmt] + (".jsonl.zstd" if compress else ".jsonl")


#: The host's compression level (any level decodes the same; 3 is the zstd default).
ZSTD_LEVEL = 3


@dataclass(frozen=True, slots=True)
class Event:
    """One log line after the header: ``{"type", "seq", "time", "data"}``."""

    type: str
    seq: int
    time: int
    data: Any
    #: Envelope fields beside the four (``surfaceOp``, ``sourceEventSeqs``).
    envelope: Mapping[str, Any] | None = None


def encode_event(event: Event) -> bytes:
    """One line, keys in the real log's order (type, seq, time, data, extras)."""
    line = {"type": event.type, "seq": event.seq, "time": event.time, "data": event.data}
    if event.envelope:
        line.update(event.envelope)
    return orjson.dumps(line) + b"\n"


def header_record(
    *,
    session_id: str,
    created_at: int,
    cwd: str | None,
    parent_session: str | None = None,
    is_seeded: bool = False,
    agent_preset: str = "cordis",
    extra: Mapping[str, Any] | None = None,
    fmt: int = 4,
    seed_length: int | None = None,
) -> dict[str, Any]:
    """The flat header (no ``data``/``seq``/``time``), key order as the host writes it.

    A teammate carries ``parentSession``, ``origin: "subagent"`` and depth 1; a lead
    has neither and depth 0. Format 0 has no ``version`` and no ``isSeeded``; a
    forked format-0 log says ``seedLength`` (a count of events) instead.
    """
    header: dict[str, Any] = {"type": "session"}
    if fmt:
        header["version"] = fmt
    header.update({"id": session_id, "createdAt": created_at, "cwd": cwd})
    if parent_session is not None:
        header["parentSession"] = parent_session
    if fmt:
        header["isSeeded"] = is_seeded
    elif seed_length is not None:
        header["seedLength"] = seed_length
    if parent_session is not None:
        header["origin"] = "subagent"
    header["delegationDepth"] = 1 if parent_session is not None else 0
    header["agentPreset"] = agent_preset
    if extra:
        header.update(extra)
    return header


def session_log_path(
    root: Path, cwd: str | None, session_id: str, *, compress: bool = True, fmt: int = 4
) -> Path:
    return root / project_key(cwd) / session_id / log_name(fmt, compress=compress)


class SessionLogWriter:
    """Creates ``<root>/<projectKey(cwd)>/<id>/session.v4.jsonl[.zstd]`` and appends frames.

    The header is written at construction as its own first frame. Each
    :meth:`append` is one frame (one ``write``), as the host's writer does.
    """

    def __init__(
        self, root: Path, header: Mapping[str, Any], *, compress: bool = True, fmt: int = 4
    ) -> None:
        session_id = header.get("id")
        if not isinstance(session_id, str) or not session_id:
            raise ValueError("header needs a string id")
        cwd = header.get("cwd")
        self.path = session_log_path(
            root, cwd if isinstance(cwd, str) else None, session_id, compress=compress, fmt=fmt
        )
        self.compress = compress
        self.session_id = session_id
        self.line_count = 0
        self.frame_count = 0
        self.event_count = 0
        self._compressor = zstandard.ZstdCompressor(level=ZSTD_LEVEL)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_bytes(b"")
        self._write_frame([orjson.dumps(dict(header)) + b"\n"])

    @classmethod
    def reopen(cls, path: Path, *, line_count: int = 0, frame_count: int = 0) -> SessionLogWriter:
        """Append to a log that already exists (its header is not written again)."""
        self = cls.__new__(cls)
        self.path = path
        self.compress = path.name.endswith(".zstd")
        self.session_id = path.parent.name
        self.line_count = line_count
        self.frame_count = frame_count
        self.event_count = max(0, line_count - 1)
        self._compressor = zstandard.ZstdCompressor(level=ZSTD_LEVEL)
        return self

    def _write_frame(self, lines: list[bytes]) -> None:
        payload = b"".join(lines)
        blob = self._compressor.compress(payload) if self.compress else payload
        with self.path.open("ab") as out:
            out.write(blob)
        self.line_count += len(lines)
        self.frame_count += 1

    def append(self, events: Iterable[Event]) -> int:
        """Write the events as ONE frame; returns the number of lines written."""
        lines = [encode_event(e) for e in events]
        if not lines:
            return 0
        self._write_frame(lines)
        self.event_count += len(lines)
        return len(lines)

    def append_raw(self, blob: bytes) -> None:
        """Append bytes as they are (torn frames, garbage): for tests of readers."""
        with self.path.open("ab") as out:
            out.write(blob)


def compress_frame(lines: Iterable[bytes]) -> bytes:
    """One zstd frame holding the given whole lines (for tests building raw tails)."""
    return zstandard.ZstdCompressor(level=ZSTD_LEVEL).compress(b"".join(lines))
