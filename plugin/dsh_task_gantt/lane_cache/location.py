"""Where the lane cache lives, and whether that folder may hold it.

The cache holds message texts copied from the logs, so it is as private as they
are: the folder is created 0700, and one that another user owns or that the group
or others may write to is refused (someone else could plant or read entries).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

#: Overrides the folder (``serve --cache-dir`` overrides this).
CACHE_DIR_ENV = "DSH_TASK_GANTT_CACHE_DIR"


def default_cache_dir() -> Path:
    """``$DSH_TASK_GANTT_CACHE_DIR``, else ``$XDG_CACHE_HOME/dsh-task-gantt``, else
    ``~/.cache/dsh-task-gantt``."""
    explicit = os.environ.get(CACHE_DIR_ENV)
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg and Path(xdg).is_absolute() else Path.home() / ".cache"
    return base / "dsh-task-gantt"


def prepare_folder(folder: Path, *, sessions_root: Path | None = None) -> str | None:
    """Create ``folder`` (0700) if needed; ``None`` when it may be used, else why not."""
    try:
        if sessions_root is not None and _inside(folder, sessions_root):
            return f"{folder} is inside the sessions root, and nothing is written there"
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = folder.stat()
    except OSError as exc:
        return f"{folder} cannot be used ({type(exc).__name__}: {exc.strerror or exc})"
    if not stat.S_ISDIR(st.st_mode):
        return f"{folder} is not a folder"
    if st.st_uid != os.geteuid():
        return f"{folder} belongs to another user (uid {st.st_uid})"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"{folder} may be written by other users (mode {stat.S_IMODE(st.st_mode):o})"
    return None


def _inside(folder: Path, root: Path) -> bool:
    try:
        return folder.resolve().is_relative_to(root.resolve())
    except (OSError, RuntimeError):
        return False
