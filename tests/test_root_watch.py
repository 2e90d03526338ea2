"""Whether a sessions root gained or lost a workspace or a session, from folder stats:
a change in the folders' structure changes the signature, an append to a log does not."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

from dsh_task_gantt.embedded.root_watch import RootWatch, Signature
from dsh_task_gantt.logs.persistence import DirectorySessionPersistence
from tests.kit.start_root import start_root


def listed(watch: RootWatch, root: Path) -> Signature:
    """A look, then a listing under it (what the start page does)."""
    return watch.listed(asyncio.run(DirectorySessionPersistence(root).list()), watch.look())


def test_the_signature_follows_folders_coming_and_going_not_appends(tmp_path: Path) -> None:
    made = start_root(tmp_path / "sessions")
    watch = RootWatch(made.root)
    first = listed(watch, made.root)
    assert watch.look() == first
    # A log written to (bytes and modification time) leaves every folder as it was.
    lead_log = made.root / made.live_team.member(made.live_team.lead_id).rel_path  # type: ignore[operator]
    with lead_log.open("ab") as log_file:
        log_file.write(b"")
    os.utime(lead_log, ns=(time.time_ns(), time.time_ns()))
    assert watch.look() == first
    # A session folder appears before its log: a change, and the folder is watched
    # until its log shows up (which changes only that folder).
    workspace = lead_log.parent.parent
    folder = workspace / "session-late-log"
    folder.mkdir()
    second = listed(watch, made.root)
    assert second != first and watch.look() == second
    (folder / "session.v4.jsonl").write_text('{"type":"session","id":"session-late-log"}\n')
    third = listed(watch, made.root)
    assert third != second and watch.look() == third
    # A new workspace, and a session folder removed.
    (made.root / "--home-dev-new--").mkdir()
    fourth = listed(watch, made.root)
    assert fourth != third and watch.look() == fourth
    (folder / "session.v4.jsonl").unlink()
    folder.rmdir()
    assert watch.look() != fourth


def test_folder_names_are_decoded_to_session_ids(tmp_path: Path) -> None:
    workspace = tmp_path / "--w--"
    (workspace / "a~002Eb").mkdir(parents=True)
    (workspace / "plain-id").mkdir()
    watch = RootWatch(tmp_path)
    watch.look()
    assert watch.folder_of("--w--", "a.b") == "a~002Eb"
    assert watch.folder_of("--w--", "plain-id") == "plain-id"
    assert watch.folder_of("--w--", "missing") is None
    assert watch.folder_of("--nowhere--", "a.b") is None


def test_a_missing_root_is_a_signature_too(tmp_path: Path) -> None:
    watch = RootWatch(tmp_path / "not-yet")
    before = watch.look()
    assert watch.look() == before
    (tmp_path / "not-yet").mkdir()
    assert watch.look() != before


def test_a_log_created_while_the_root_is_listed_is_not_missed(tmp_path: Path) -> None:
    """The folder's identity is taken at the look before the listing: a log that the
    listing did not see changes it."""
    made = start_root(tmp_path / "sessions")
    watch = RootWatch(made.root)
    listed(watch, made.root)
    folder = next(p for p in made.root.iterdir() if p.is_dir()) / "session-racing"
    folder.mkdir()
    looked = watch.look()
    rows = asyncio.run(DirectorySessionPersistence(made.root).list())  # no log yet
    (folder / "session.v4.jsonl").write_text('{"type":"session","id":"session-racing"}\n')
    assert watch.look() != watch.listed(rows, looked)


def test_a_log_created_within_the_folders_modification_time_tick_is_noticed(
    tmp_path: Path,
) -> None:
    """On a kernel whose modification times are coarse, a log created in the same tick
    as the look leaves its folder's identity as it was: which log names exist says it."""
    made = start_root(tmp_path / "sessions")
    watch = RootWatch(made.root)
    folder = next(p for p in made.root.iterdir() if p.is_dir()) / "session-same-tick"
    folder.mkdir()
    waiting = listed(watch, made.root)
    before = os.stat(folder)
    (folder / "session.v4.jsonl").write_text('{"type":"session","id":"session-same-tick"}\n')
    os.utime(folder, ns=(before.st_atime_ns, before.st_mtime_ns))  # the same tick
    assert watch.look() != waiting


def test_a_folder_that_cannot_be_a_session_is_not_waited_on(tmp_path: Path) -> None:
    """The listing skips a subfolder whose name is no session id; the watch does too,
    so a change inside it (another tool's files) lists nothing again."""
    made = start_root(tmp_path / "sessions")
    watch = RootWatch(made.root)
    other = next(p for p in made.root.iterdir() if p.is_dir()) / "notes and drafts"
    other.mkdir()
    signature = listed(watch, made.root)
    assert signature.waiting == ()
    (other / "draft.txt").write_text("a note\n")
    assert watch.look() == signature
