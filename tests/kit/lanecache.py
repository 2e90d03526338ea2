"""Servers that read a sessions root the way a restarted ``serve`` does: a fresh
persistence and service over a lane cache folder that an earlier one wrote."""

from __future__ import annotations

import asyncio
from pathlib import Path

from dsh_task_gantt import host
from dsh_task_gantt.lane_cache import LaneCacheStore
from dsh_task_gantt.logs.persistence import DirectorySessionPersistence
from dsh_task_gantt.service import TimelineService


def timeline_body(root: Path, session_id: str, store: LaneCacheStore | None) -> bytes:
    return read_team(root, session_id, store)[0]


def read_team(root: Path, session_id: str, store: LaneCacheStore | None) -> tuple[bytes, int]:
    """The timeline JSON of one fresh server process (clock fixed: only the logs and
    the cache decide the bytes), and how many lanes it resumed from the cache.
    Whatever it offered the cache is written before it returns, as the server's
    shut-down does."""
    persistence = DirectorySessionPersistence(root, lane_cache=store)
    service = TimelineService({host.SESSION_PERSISTENCE: persistence}.get, clock=lambda: 0)
    result = asyncio.run(service.timeline(session_id))
    assert result is not None
    if store is not None:
        store.close()
    return result.body, persistence.resumed


def store_in(folder: Path) -> LaneCacheStore:
    """A store as a new server process opens it (nothing remembered in memory)."""
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    return LaneCacheStore(folder, settle_s=0.0)
