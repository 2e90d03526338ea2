"""The directory name the host gives a workspace under the sessions root (HOST.md §2)."""

from __future__ import annotations

import re

NO_CWD_KEY = "_no-cwd"
#: Longest body kept before the ``--…--`` wrapping (the host's limit).
MAX_BODY_CHARS = 251

_SEPARATOR_RUNS = re.compile(r"[/\\:]+")
_KEPT = re.compile(r"[A-Za-z0-9._-]")


def _escape(char: str) -> str:
    """``~XXXX`` per UTF-16 code unit (uppercase hex): astral characters give two."""
    if _KEPT.fullmatch(char):
        return char
    units = char.encode("utf-16-be", "surrogatepass")
    return "".join(
        f"~{int.from_bytes(units[i : i + 2], 'big'):04X}" for i in range(0, len(units), 2)
    )


def project_key(cwd: str | None) -> str:
    """``/Users/a/b`` → ``--Users-a-b--``; ``None`` or ``""`` → ``_no-cwd``."""
    if not cwd:
        return NO_CWD_KEY
    body = "".join(_escape(c) for c in _SEPARATOR_RUNS.sub("-", cwd))
    body = body.lstrip("-") or "root"
    return f"--{body[:MAX_BODY_CHARS]}--"
