"""Cache entries on disk: private, atomic, debounced, bounded."""

from __future__ import annotations

import logging
import os
import threading
import time
from pathlib import Path

import pytest

from dsh_task_gantt.lane_cache import LaneCacheStore, open_store

EXPECT = {"format": "f"}


def entry(log: Path, value: object = "v") -> tuple[dict[str, str], object]:
    return {"format": "f", "log": str(log)}, value


def wait_for(predicate, timeout: float = 10.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def run_within(seconds: float, call):  # type: ignore[no-untyped-def]
    """``call()``'s result, failing (not hanging) when it takes longer than ``seconds``."""
    done: list[object] = []
    worker = threading.Thread(target=lambda: done.append(call()), daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), "hung"
    return done[0]


def test_an_entry_is_written_private_and_whole(tmp_path: Path) -> None:
    store = open_store(tmp_path / "c", settle_s=0.0)
    assert store is not None
    log = tmp_path / "log"
    log.write_bytes(b"x")
    store.offer("k", lambda: entry(log, {"a": [1, 2]}))
    wait_for(lambda: store.writes == 1)
    files = list((tmp_path / "c").iterdir())
    assert files == [store.path_for("k")]  # no temporary file left beside it
    assert files[0].stat().st_mode & 0o777 == 0o600
    assert (tmp_path / "c").stat().st_mode & 0o777 == 0o700
    loaded = store.load("k", EXPECT)
    assert loaded is not None and loaded[1] == {"a": [1, 2]}
    store.close()


def test_a_growing_lane_is_written_at_most_once_per_interval(tmp_path: Path) -> None:
    store = LaneCacheStore(tmp_path, settle_s=0.0, write_every_s=0.5)
    log = tmp_path / "log"
    log.write_bytes(b"x")
    asked: list[int] = []

    def capture(n: int):  # type: ignore[no-untyped-def]
        def run() -> tuple[dict[str, str], object]:
            asked.append(n)
            return entry(log, n)

        return run

    store.offer("k", capture(1))
    wait_for(lambda: store.writes == 1)
    first_write = store._written_at["k"]
    with store._cond:  # every offer lands before the writer can look again
        for n in range(2, 40):  # a live log: an offer per poll
            store.offer("k", capture(n))
    wait_for(lambda: store.writes == 2)
    assert store._written_at["k"] - first_write >= 0.5  # measured by the store itself
    assert asked == [1, 39]  # only the latest state is asked for, once
    loaded = store.load("k", EXPECT)
    assert loaded is not None and loaded[1] == 39
    store.close()


def test_the_pacing_remembers_only_the_keys_written_within_the_interval(tmp_path: Path) -> None:
    """A day of teams opened one after another writes many lanes: what paces writes
    is forgotten once its interval is over, so it does not grow with every lane."""
    store = LaneCacheStore(tmp_path, settle_s=0.0, write_every_s=0.2)
    log = tmp_path / "log"
    log.write_bytes(b"x")
    for n in range(30):
        store.offer(f"k{n}", lambda n=n: entry(log, n))  # type: ignore[misc]
    wait_for(lambda: store.writes == 30)
    assert len(store._written_at) <= 30
    time.sleep(0.3)
    store.offer("last", lambda: entry(log, "last"))
    wait_for(lambda: store.writes == 31)
    assert list(store._written_at) == ["last"]
    store.close()


def test_close_writes_what_is_pending_and_a_refused_capture_writes_nothing(
    tmp_path: Path,
) -> None:
    store = LaneCacheStore(tmp_path, settle_s=60.0)
    log = tmp_path / "log"
    log.write_bytes(b"x")
    store.offer("kept", lambda: entry(log))
    store.offer("moved-on", lambda: None)
    assert store.writes == 0
    store.close()
    assert store.writes == 1
    assert store.path_for("kept").exists() and not store.path_for("moved-on").exists()
    store.offer("late", lambda: entry(log))  # after shut-down: ignored
    store.close()
    assert not store.path_for("late").exists()


def test_entries_of_logs_that_are_gone_and_crash_leftovers_are_swept(tmp_path: Path) -> None:
    store = LaneCacheStore(tmp_path)
    kept, gone = tmp_path / "kept.log", tmp_path / "gone.log"
    kept.write_bytes(b"x")
    gone.write_bytes(b"x")
    store.offer("a", lambda: entry(kept))
    store.offer("b", lambda: entry(gone))
    store.close()
    gone.unlink()
    stale = tmp_path / ".tmp-old_1234.part"
    stale.write_bytes(b"half")
    os.utime(stale, (time.time() - 7200, time.time() - 7200))
    fresh = tmp_path / ".tmp-now_1234.part"  # maybe another server writing right now
    fresh.write_bytes(b"half")
    (tmp_path / "notes.txt").write_text("not ours")
    LaneCacheStore(tmp_path).sweep()
    assert store.path_for("a").exists() and not store.path_for("b").exists()
    assert not stale.exists() and fresh.exists() and (tmp_path / "notes.txt").exists()


def test_past_the_budget_the_least_recently_used_go_first(tmp_path: Path) -> None:
    log = tmp_path / "log"
    log.write_bytes(b"x")
    store = LaneCacheStore(tmp_path)
    for key in ("old", "used", "new"):
        store.offer(key, lambda: entry(log, b"z" * 10_000))
    store.close()
    now = time.time()
    for age, key in ((300, "old"), (200, "used"), (100, "new")):
        os.utime(store.path_for(key), (now - age, now - age))
    assert store.load("used", EXPECT) is not None  # used now: the most recent
    size = store.path_for("old").stat().st_size
    LaneCacheStore(tmp_path, budget_bytes=2 * size + 16).sweep()  # two entries fit
    assert not store.path_for("old").exists()
    assert store.path_for("used").exists() and store.path_for("new").exists()
    LaneCacheStore(tmp_path, budget_bytes=size + 16).sweep()  # one fits
    assert [p.exists() for p in map(store.path_for, ("new", "used"))] == [False, True]


def test_an_unreadable_or_damaged_entry_is_none(tmp_path: Path) -> None:
    store = LaneCacheStore(tmp_path)
    assert store.load("missing", EXPECT) is None
    store.path_for("bad").write_bytes(b"not an entry")
    assert store.load("bad", EXPECT) is None
    store.path_for("dir").mkdir()
    assert store.load("dir", EXPECT) is None


def test_a_folder_gone_fails_writes_quietly_after_saying_so_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = tmp_path / "c"
    store = open_store(folder)
    assert store is not None
    log = tmp_path / "log"
    log.write_bytes(b"x")
    folder.rmdir()
    with caplog.at_level(logging.WARNING, logger="dsh_task_gantt"):
        for key in ("a", "b", "c"):
            store.offer(key, lambda: entry(log))
        store.close()  # never raises
    assert store.writes == 0
    assert [r.levelno for r in caplog.records] == [logging.WARNING]


def test_a_fifo_or_a_symlink_to_a_device_in_the_folder_hangs_nothing(tmp_path: Path) -> None:
    store = LaneCacheStore(tmp_path)
    os.mkfifo(store.path_for("fifo"))  # nothing ever writes to it
    store.path_for("zero").symlink_to("/dev/zero")  # endless bytes
    os.mkfifo(tmp_path / "x.lane")
    assert run_within(5, lambda: store.load("fifo", EXPECT)) is None
    assert run_within(5, lambda: store.load("zero", EXPECT)) is None
    run_within(5, store.sweep)
    assert store.path_for("fifo").exists() and store.path_for("zero").is_symlink()


def test_an_entry_bigger_than_the_budget_is_not_read_whole(tmp_path: Path) -> None:
    log = tmp_path / "log"
    log.write_bytes(b"x")
    writer = LaneCacheStore(tmp_path)
    writer.offer("big", lambda: entry(log, b"z" * 10_000))
    writer.offer("small", lambda: entry(log, b"z"))
    writer.close()
    store = LaneCacheStore(tmp_path, budget_bytes=4096)
    assert store.load("big", EXPECT) is None
    assert store.load("small", EXPECT) is not None


def test_the_sweep_deletes_no_file_it_did_not_write(tmp_path: Path) -> None:
    store = LaneCacheStore(tmp_path, budget_bytes=0)  # everything of ours is over budget
    old = time.time() - 7200
    foreign_entry_name = tmp_path / ("0123456789abcdef" * 2 + ".lane")
    foreign_entry_name.write_bytes(b"someone else's file")
    for name in ("notes.lane", ".tmp-editor-swap", ".tmp-abcd1234.part.bak"):
        (tmp_path / name).write_text("user data")
    for path in tmp_path.iterdir():
        os.utime(path, (old, old))
    store.sweep()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [foreign_entry_name.name, "notes.lane", ".tmp-editor-swap", ".tmp-abcd1234.part.bak"]
    )


def test_after_writes_the_sweep_is_paced_but_a_start_sweeps_at_once(tmp_path: Path) -> None:
    log = tmp_path / "log"
    log.write_bytes(b"x")
    store = LaneCacheStore(tmp_path, settle_s=0.0)
    for n in range(3):
        store.offer(f"k{n}", lambda: entry(log))
        wait_for(lambda n=n: store.writes == n + 1)  # type: ignore[misc]
    time.sleep(0.1)
    assert store.sweeps == 0  # three small writes within minutes: no pass over the folder
    store.sweep_soon()
    wait_for(lambda: store.sweeps == 1)
    store.close()
