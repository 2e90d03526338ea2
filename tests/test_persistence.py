"""DirectorySessionPersistence: the host's sessionPersistence over a sessions root."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import orjson
import pytest

from dsh_task_gantt.events import event_count
from dsh_task_gantt.fold import RUN_MARKS, UNREAD_DATA, fold_lane
from dsh_task_gantt.logs.frames import walk_frames
from dsh_task_gantt.logs.persistence import (
    DirectorySessionPersistence,
    SessionLogError,
    SessionNotFound,
    read_header_fast,
)
from tests.kit.logwriting import (
    batch,
    event,
    frame,
    header,
    record_decoded_frames,
    skippable,
    write_session,
)


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def evs(n: int, start: int = 0) -> list[dict[str, Any]]:
    return [event(i, "turn/start", {"i": i}) for i in range(start, start + n)]


def test_locate_finds_a_session_in_any_workspace(tmp_path: Path) -> None:
    a = write_session(tmp_path, "s-a", evs(2), project="--one--")
    b = write_session(tmp_path, "s-b", evs(2), project="--two--", plain=True)
    p = DirectorySessionPersistence(tmp_path)
    assert p.locate("s-a") == a.resolve()
    assert p.locate("s-b") == b.resolve()
    assert p.locate("s-c") is None


@pytest.mark.parametrize("bad", ["..", ".", "a/b", "../s-a", "a..b", "", "x" * 129, "s a", "é"])
def test_ids_that_are_not_plain_names_are_refused(tmp_path: Path, bad: str) -> None:
    write_session(tmp_path, "s-a", evs(1))
    p = DirectorySessionPersistence(tmp_path)
    assert p.locate(bad) is None
    with pytest.raises(SessionNotFound):
        run(p.open(bad, "read"))
    assert run(p.stat(bad)) is None


def test_a_link_that_leaves_the_root_is_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    write_session(outside, "s-x", evs(1))
    root = tmp_path / "root"
    (root / "--proj--").mkdir(parents=True)
    os.symlink(outside / "--work-demo--" / "s-x", root / "--proj--" / "s-x")
    p = DirectorySessionPersistence(root)
    assert p.locate("s-x") is None
    assert run(p.list()) == []


def test_zstd_wins_over_plain_in_the_same_directory(tmp_path: Path) -> None:
    plain = write_session(tmp_path, "s", evs(1), plain=True)
    zstd = write_session(tmp_path, "s", evs(2))
    assert plain.parent == zstd.parent
    assert DirectorySessionPersistence(tmp_path).locate("s") == zstd.resolve()


def test_open_read_close(tmp_path: Path) -> None:
    write_session(
        tmp_path, "s", evs(20), per_frame=3, head=header("s", isSeeded=True, inheritedEventCount=4)
    )
    p = DirectorySessionPersistence(tmp_path)

    async def go() -> None:
        handle = await p.open("s", "read")
        try:
            assert handle.id == "s" and handle.header["id"] == "s"
            assert handle.inherited_event_count == 4 == handle.inheritedEventCount
            assert [e.seq for e in await handle.read()] == list(range(20))
            assert [e.seq for e in await handle.read(5, 3)] == [5, 6, 7]
            assert [e.seq for e in await handle.read(18)] == [18, 19]
            assert await handle.read(20) == [] and await handle.read(50) == []
        finally:
            await handle.close()
        with pytest.raises(SessionLogError):
            await handle.read()

    run(go())


def test_open_only_reads(tmp_path: Path) -> None:
    write_session(tmp_path, "s", evs(1))
    with pytest.raises(ValueError):
        run(DirectorySessionPersistence(tmp_path).open("s", "write"))
    with pytest.raises(SessionNotFound):
        run(DirectorySessionPersistence(tmp_path).open("nobody", "read"))


def test_stat_revision_changes_exactly_when_the_log_does(tmp_path: Path) -> None:
    path = write_session(tmp_path, "s", evs(5))
    p = DirectorySessionPersistence(tmp_path)
    first = run(p.stat("s"))
    # A stat never decodes: the event count appears once a read has reached the end.
    assert "eventCount" not in first and first["sizeBytes"] == path.stat().st_size
    assert first["header"]["id"] == "s"
    assert run(p.stat("s"))["revision"] == first["revision"]  # unchanged: same revision
    handle = run(p.open("s", "read"))
    assert len(run(handle.read())) == 5
    assert run(p.stat("s"))["eventCount"] == 5
    with path.open("ab") as f:
        f.write(frame(batch(evs(2, start=5))))
    second = run(p.stat("s"))
    assert second["revision"] != first["revision"] and "eventCount" not in second
    assert len(run(handle.read(5))) == 2
    assert run(p.stat("s"))["eventCount"] == 7
    assert run(p.stat("nobody")) is None


def test_repeated_calls_decode_only_new_frames(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_session(tmp_path, "s", evs(30), per_frame=1)
    p = DirectorySessionPersistence(tmp_path)
    assert len(run(run(p.open("s", "read")).read())) == 30
    decoded = record_decoded_frames(monkeypatch)
    with path.open("ab") as f:
        f.write(frame(batch(evs(1, start=30))))

    async def go() -> list[int]:
        handle = await p.open("s", "read")
        try:
            return [e.seq for e in await handle.read(30)]
        finally:
            await handle.close()

    assert run(go()) == [30]
    assert run(p.stat("s"))["eventCount"] == 31
    assert len(decoded) == 1  # only the appended frame, once


def test_a_replaced_log_is_read_from_the_start(tmp_path: Path) -> None:
    path = write_session(tmp_path, "s", evs(5))
    p = DirectorySessionPersistence(tmp_path)
    before = run(p.stat("s"))
    assert len(run(run(p.open("s", "read")).read())) == 5
    tmp = tmp_path / "new"
    write_session(tmp, "s", evs(2, start=100))
    os.replace(tmp / "--work-demo--" / "s" / "session.v4.jsonl.zstd", path)
    after = run(p.stat("s"))
    assert after["revision"] != before["revision"]
    events = run(run(p.open("s", "read")).read())
    assert [e.seq for e in events] == [100, 101]
    assert run(p.stat("s"))["eventCount"] == 2


def test_list_every_session(tmp_path: Path) -> None:
    write_session(tmp_path, "lead", evs(3), project="--one--")
    write_session(
        tmp_path, "mate", evs(1), project="--one--", head=header("mate", parentSession="lead")
    )
    write_session(tmp_path, "other", evs(1), project="--two--", plain=True)
    (tmp_path / "--two--" / "empty-dir").mkdir()
    (tmp_path / "stray-file").write_text("x")
    rows = run(DirectorySessionPersistence(tmp_path).list())
    assert sorted((r["project"], r["id"]) for r in rows) == [
        ("--one--", "lead"),
        ("--one--", "mate"),
        ("--two--", "other"),
    ]
    mate = next(r for r in rows if r["id"] == "mate")
    assert mate["header"]["parentSession"] == "lead"
    assert mate["sizeBytes"] > 0 and isinstance(mate["revision"], str)


def test_list_of_a_missing_root_is_empty(tmp_path: Path) -> None:
    assert run(DirectorySessionPersistence(tmp_path / "nope").list()) == []


def test_skip_types_reach_the_reader(tmp_path: Path) -> None:
    write_session(
        tmp_path, "s", [event(0, "tool/result", {"big": "x" * 100}), event(1, "turn/start", {})]
    )
    p = DirectorySessionPersistence(tmp_path, skip_types={"tool/result"})

    async def go() -> list[Any]:
        handle = await p.open("s", "read")
        try:
            return [e.data for e in await handle.read()]
        finally:
            await handle.close()

    assert run(go()) == [None, {}]


def test_a_vanished_log_raises_a_short_reason(tmp_path: Path) -> None:
    path = write_session(tmp_path, "s", evs(2))
    p = DirectorySessionPersistence(tmp_path)

    async def go() -> None:
        handle = await p.open("s", "read")
        path.unlink()
        with pytest.raises(SessionLogError) as info:
            await handle.read()
        assert str(tmp_path) not in str(info.value)
        await handle.close()

    run(go())
    assert run(p.stat("s")) is None


def _bulk_log(n: int) -> list[dict[str, Any]]:
    kinds = ["turn/start", "step/start", "assistant/message", "step/end", "tool/result"]
    return [event(i, kinds[i % len(kinds)], {"i": i}) for i in range(n)]


def test_read_runs_stands_for_the_same_events_as_read(tmp_path: Path) -> None:
    write_session(tmp_path, "s", _bulk_log(40), per_frame=4)
    p = DirectorySessionPersistence(tmp_path, skip_types=UNREAD_DATA, run_marks=RUN_MARKS)
    plain = DirectorySessionPersistence(tmp_path, skip_types=UNREAD_DATA)

    async def go() -> None:
        h, ref = await p.open("s"), await plain.open("s")
        items, events = await h.read_runs(), await ref.read()
        assert event_count(items) == len(events) == 40 == h.event_count
        assert [type(i).__name__ for i in items].count("EventRun") == 1
        assert fold_lane(items) == fold_lane(events)
        # From an index inside what was already read: plain events, re-decoded.
        assert await h.read_runs(30) == events[30:]
        # The plain read of the same handle still gives one event per line.
        assert await h.read(10, 5) == events[10:15]

    run(go())


def test_read_runs_after_an_append_gives_only_the_new_events(tmp_path: Path) -> None:
    path = write_session(tmp_path, "s", _bulk_log(20), per_frame=4)
    p = DirectorySessionPersistence(tmp_path, skip_types=UNREAD_DATA, run_marks=RUN_MARKS)

    async def go() -> None:
        h = await p.open("s")
        first = await h.read_runs()
        with path.open("ab") as f:
            f.write(frame(batch(_bulk_log(30)[20:])))
        new = await h.read_runs(20)
        assert event_count(first) == 20 and event_count(new) == 10 == h.event_count - 20
        assert fold_lane(new, start=fold_lane(first)) == fold_lane(await h.read())
        # Asked from an older index: the older events come plain, the new batch as read.
        with path.open("ab") as f:
            f.write(frame(batch(_bulk_log(33)[30:])))
        mixed = await h.read_runs(25)
        assert event_count(mixed) == 8
        assert fold_lane(mixed) == fold_lane((await h.read())[25:])

    run(go())


def test_the_header_is_read_from_the_first_frames_whatever_follows(tmp_path: Path) -> None:
    line = orjson.dumps(header("s-split", parentSession="s-lead")) + b"\n"
    rest = b"".join(
        orjson.dumps(event(i, "turn/start", {"turn": f"t{i}"})) + b"\n" for i in range(400)
    )
    folder = tmp_path / "--work-demo--" / "s-split"
    folder.mkdir(parents=True)
    log = folder / "session.v4.jsonl.zstd"
    # A skippable frame first, the header line split over two frames, then many more.
    log.write_bytes(
        skippable(b"meta")
        + frame(line[:20])
        + frame(line[20:] + rest[:100])
        + b"".join(frame(rest[i : i + 300]) for i in range(100, len(rest), 300))
    )
    found = read_header_fast(log)
    assert found is not None and found.id == "s-split" and found.parent_session == "s-lead"
    assert walk_frames(log.read_bytes(), max_frames=2).frames[1].skippable is False
    assert len(walk_frames(log.read_bytes(), max_frames=2).frames) == 2


def _seqs(p: DirectorySessionPersistence, session_id: str, offset: int = 0) -> list[int]:
    async def go() -> list[int]:
        handle = await p.open(session_id, "read")
        try:
            return [e.seq for e in await handle.read(offset)]
        finally:
            await handle.close()

    return run(go())


def test_readers_kept_stay_at_their_limit_and_a_dropped_one_reads_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reading log after log (teams opened one after another) keeps READERS_KEPT
    readers, the least recently opened dropped first; a log whose reader was dropped
    reads the same events from the start again."""
    import dsh_task_gantt.logs.persistence as persistence_module

    monkeypatch.setattr(persistence_module, "READERS_KEPT", 3)
    for n in range(8):
        write_session(tmp_path, f"s{n}", evs(5 + n), per_frame=2)
    p = DirectorySessionPersistence(tmp_path)
    first = [_seqs(p, f"s{n}") for n in range(8)]
    assert len(p._entries) == 3
    assert [path.parent.name for path in p._entries] == ["s5", "s6", "s7"]
    assert _seqs(p, "s0") == first[0] == list(range(5))
    assert len(p._entries) == 3 and _seqs(p, "s7", 10) == [10, 11]


def test_forgotten_sessions_lose_their_readers_and_read_the_same_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The service forgets a team: the readers of its logs go (an open handle keeps its
    own), others stay, and reading a forgotten log again decodes it from the start
    into the same events."""
    for n in range(3):
        write_session(tmp_path, f"s{n}", evs(12), per_frame=3)
    p = DirectorySessionPersistence(tmp_path)
    before = {f"s{n}": _seqs(p, f"s{n}") for n in range(3)}
    held = run(p.open("s0", "read"))
    p.forget_sessions(["s0", "s1", "nobody"])
    assert [path.parent.name for path in p._entries] == ["s2"]
    assert [e.seq for e in run(held.read(10))] == [10, 11]  # the open handle still reads
    decoded = record_decoded_frames(monkeypatch)
    assert _seqs(p, "s1") == before["s1"]
    assert len(decoded) > 1  # read from the start: its old offsets were dropped
    assert _seqs(p, "s2") == before["s2"] and run(p.stat("s1"))["eventCount"] == 12
