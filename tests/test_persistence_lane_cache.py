"""What the persistence keeps for the lane cache: a fold only beside the reader state
of the very file (and the very read) it was made from."""

from __future__ import annotations

import asyncio
import dataclasses
import os
from pathlib import Path

import pytest

from dsh_task_gantt import host
from dsh_task_gantt.lane_cache import LaneCacheStore
from dsh_task_gantt.lane_cache.codec import decode, encode
from dsh_task_gantt.logs.persistence import DirectorySessionPersistence
from dsh_task_gantt.service import TimelineService
from tests.kit.lanecache import read_team, store_in, timeline_body
from tests.kit.logwriting import event, write_session

SESSION = "s-lead"


def turns(root: Path, name: str) -> Path:
    """A log of four turns named after ``name``: as many events whatever the name."""
    events = [event(i, "turn/start", {"turn": f"{name}-{i}"}) for i in range(4)]
    return write_session(root, SESSION, events, per_frame=2)


def test_a_log_replaced_while_its_entry_waits_is_not_cached_with_the_old_fold(
    tmp_path: Path,
) -> None:
    root, cache = tmp_path / "sessions", tmp_path / "cache"
    path = turns(root, "file-a")
    cache.mkdir(mode=0o700)
    store = LaneCacheStore(cache, settle_s=60.0)  # the entry waits for the writer
    persistence = DirectorySessionPersistence(root, lane_cache=store)
    service = TimelineService({host.SESSION_PERSISTENCE: persistence}.get, clock=lambda: 0)
    assert b"file-a-0" in asyncio.run(service.timeline(SESSION)).body  # type: ignore[union-attr]

    # Another log with as many events takes its place and is read (a read whose own
    # lane is not offered: e.g. the agent came alive in between).
    other = tmp_path / "other"
    replacement = turns(other, "file-b")
    os.replace(replacement, path)

    async def read_again() -> None:
        handle = await persistence.open(SESSION)
        await handle.read_runs()

    asyncio.run(read_again())
    store.close()  # the waiting entry's turn: refused
    assert store.writes == 0

    restarted = timeline_body(root, SESSION, store_in(cache))
    assert b"file-b-0" in restarted and b"file-a" not in restarted


@pytest.mark.parametrize(
    ("forge_state", "forge_lane"),
    [
        ({}, {"events_seen": 3}),  # the lane counts other events than its state
        ({"carry": "a str carry"}, {}),
        ({"event_count": 4.0}, {}),
    ],
)
def test_a_well_formed_but_wrong_entry_is_read_cold_now_and_after(
    tmp_path: Path, forge_state: dict[str, object], forge_lane: dict[str, object]
) -> None:
    root, cache = tmp_path / "sessions", tmp_path / "cache"
    turns(root, "turn")
    cold = timeline_body(root, SESSION, store_in(cache))
    [entry] = cache.glob("*.lane")
    loaded = decode(entry.read_bytes(), {})
    assert loaded is not None
    meta, (state, lane) = loaded  # type: ignore[misc]
    meta = {k: v for k, v in meta.items() if k not in ("digest", "bytes")}
    forged = (dataclasses.replace(state, **forge_state), dataclasses.replace(lane, **forge_lane))
    entry.write_bytes(encode(meta, forged))  # through the codec: a valid digest
    body, resumed = read_team(root, SESSION, store_in(cache))
    assert resumed == 0 and body == cold
    # The lane is not broken for good: the next server reads it from the cache it wrote.
    body, resumed = read_team(root, SESSION, store_in(cache))
    assert resumed == 1 and body == cold
