"""Every test runs with its own lane cache folder: no test reads what another wrote,
and none reads or writes the user's ``~/.cache``."""

from __future__ import annotations

from pathlib import Path

import pytest

from dsh_task_gantt.lane_cache import CACHE_DIR_ENV


@pytest.fixture(autouse=True)
def private_lane_cache(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    folder = tmp_path_factory.mktemp("lane-cache") / "dsh-task-gantt"
    monkeypatch.setenv(CACHE_DIR_ENV, str(folder))
    monkeypatch.setenv("XDG_CACHE_HOME", str(folder.parent / "xdg"))
    return folder
