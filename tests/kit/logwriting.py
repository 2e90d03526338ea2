"""Tiny helpers that write session logs the way the host does (one zstd frame per batch),
and one that watches what a reader decompresses."""

from __future__ import annotations

import io
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import orjson
import pytest
import zstandard

from dsh_task_gantt.logs.reader import units as reader_units

T0 = 1_791_648_700_000


def header(session_id: str = "s-lead", **extra: Any) -> dict[str, Any]:
    return {
        "type": "session",
        "version": 4,
        "id": session_id,
        "createdAt": T0,
        "cwd": "/work/demo",
        "isSeeded": False,
        "origin": "user",
        "delegationDepth": 0,
        **extra,
    }


def event(
    seq: int, etype: str = "turn/start", data: Any = None, time: int | None = None
) -> dict[str, Any]:
    return {
        "type": etype,
        "seq": seq,
        "time": T0 + 10 * seq if time is None else time,
        "data": data,
    }


def line(obj: Any) -> bytes:
    return orjson.dumps(obj) + b"\n"


def batch(objs: Iterable[Any]) -> bytes:
    return b"".join(line(o) for o in objs)


def frame(data: bytes, *, content_size: bool = True, checksum: bool = False) -> bytes:
    """One zstd frame holding ``data`` (with or without the content size in its header)."""
    return zstandard.ZstdCompressor(
        write_content_size=content_size, write_checksum=checksum
    ).compress(data)


def stream_frame(data: bytes) -> bytes:
    """One frame written by a stream writer (no content size, possibly several blocks)."""
    out = io.BytesIO()
    with zstandard.ZstdCompressor().stream_writer(out, closefd=False) as writer:
        for i in range(0, len(data), 1000):
            writer.write(data[i : i + 1000])
            writer.flush(zstandard.FLUSH_BLOCK)
    return out.getvalue()


def skippable(payload: bytes, nibble: int = 0) -> bytes:
    return (
        (0x184D2A50 + nibble).to_bytes(4, "little") + len(payload).to_bytes(4, "little") + payload
    )


def zstd_log(batches: Sequence[bytes], **kw: Any) -> bytes:
    return b"".join(frame(b, **kw) for b in batches)


def session_dir(root: Path, session_id: str, project: str = "--work-demo--") -> Path:
    d = root / project / session_id
    d.mkdir(parents=True, exist_ok=True)
    return d


def write_session(
    root: Path,
    session_id: str,
    events: Sequence[dict[str, Any]],
    *,
    project: str = "--work-demo--",
    per_frame: int = 1,
    plain: bool = False,
    head: dict[str, Any] | None = None,
) -> Path:
    """A log in the real layout: header frame, then ``per_frame`` events per frame."""
    d = session_dir(root, session_id, project)
    first = line(head if head is not None else header(session_id))
    rest = [batch(events[i : i + per_frame]) for i in range(0, len(events), per_frame)]
    if plain:
        path = d / "session.v4.jsonl"
        path.write_bytes(first + b"".join(rest))
    else:
        path = d / "session.v4.jsonl.zstd"
        path.write_bytes(zstd_log([first, *rest]))
    return path


def record_decoded_frames(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """From now on, the file offset of every zstd frame a reader decompresses."""
    decoded: list[int] = []
    real = reader_units.decompress_job

    def recording(dctx: Any, job: Any) -> Any:
        decoded.extend(job.base + f.start for f in job.frames)
        return real(dctx, job)

    monkeypatch.setattr(reader_units, "decompress_job", recording)
    return decoded
