"""Where the lane cache lives, and which folders it refuses."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from dsh_task_gantt.embedded import EmbeddedHost
from dsh_task_gantt.lane_cache import CACHE_DIR_ENV, default_cache_dir
from dsh_task_gantt.lane_cache.location import prepare_folder


def test_the_folder_comes_from_the_variable_then_xdg_then_home(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path / "explicit"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "explicit"
    monkeypatch.delenv(CACHE_DIR_ENV)
    assert default_cache_dir() == tmp_path / "xdg" / "dsh-task-gantt"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/not/allowed")  # the XDG spec: ignored
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_cache_dir() == tmp_path / "home" / ".cache" / "dsh-task-gantt"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert default_cache_dir() == tmp_path / "home" / ".cache" / "dsh-task-gantt"


def test_a_new_folder_is_private(tmp_path: Path) -> None:
    folder = tmp_path / "a" / "cache"
    assert prepare_folder(folder) is None
    assert folder.stat().st_mode & 0o777 == 0o700


@pytest.mark.parametrize("mode", [0o770, 0o702, 0o777])
def test_a_folder_others_may_write_is_refused(tmp_path: Path, mode: int) -> None:
    folder = tmp_path / "shared"
    folder.mkdir()
    folder.chmod(mode)
    problem = prepare_folder(folder)
    assert problem is not None and "written by other users" in problem


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a folder to another user needs root")
def test_a_folder_of_another_user_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "theirs"
    folder.mkdir(mode=0o700)
    os.chown(folder, 4321, 4321)
    problem = prepare_folder(folder)
    assert problem is not None and "another user" in problem


def test_a_folder_inside_the_sessions_root_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    root.mkdir()
    problem = prepare_folder(root / "cache", sessions_root=root)
    assert problem is not None and "inside the sessions root" in problem
    assert not (root / "cache").exists()  # nothing created beside the logs


def test_a_file_where_the_folder_should_be_is_refused(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    assert prepare_folder(tmp_path / "file") is not None


def test_a_refused_folder_is_said_once_and_the_server_runs_without_it(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = tmp_path / "shared"
    folder.mkdir()
    folder.chmod(0o777)
    (tmp_path / "sessions").mkdir()
    with caplog.at_level(logging.WARNING, logger="dsh_task_gantt"):
        host = EmbeddedHost(tmp_path / "sessions", cache_dir=folder)
    assert host.lane_cache is None and host.persistence.lane_cache is None
    warnings = [r.getMessage() for r in caplog.records if "lane cache" in r.getMessage()]
    assert len(warnings) == 1 and "running without the lane cache" in warnings[0]
    assert list(folder.iterdir()) == []
