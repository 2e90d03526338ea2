"""Where the shipped assets are: inside the package in a wheel, at the repository
top level in a source checkout or an editable install."""

from __future__ import annotations

from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent
_SOURCE_TOP = _PACKAGE_DIR.parent.parent


def resource_path(name: str) -> Path:
    """``static``, ``templates``, ``fixtures`` or ``manifest.json``."""
    packaged = _PACKAGE_DIR / name
    if packaged.exists():
        return packaged
    in_source = _SOURCE_TOP / name
    if in_source.exists():
        return in_source
    raise FileNotFoundError(f"dsh-task-gantt is missing its {name!r}; reinstall the package")
