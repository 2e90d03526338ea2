"""The directory name the host gives a workspace under the sessions root.

See docs/host-contract.md, Where logs are.
"""

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


_SEGMENT_KEPT = re.compile(r"[A-Za-z0-9_-]")
_SEGMENT_ESCAPE = re.compile(r"~([0-9A-F]{4})")


def encode_segment(session_id: str) -> str:
    """A session's folder name: characters outside ``[A-Za-z0-9_-]`` become ``~XXXX``
    (so ``.`` is ``~002E``); a plain ``session-<uuid>`` id is unchanged."""
    return "".join(
        c
        if _SEGMENT_KEPT.fullmatch(c)
        else "".join(
            f"~{int.from_bytes(u[i : i + 2], 'big'):04X}"
            for u in (c.encode("utf-16-be", "surrogatepass"),)
            for i in range(0, len(u), 2)
        )
        for c in session_id
    )


def decode_segment(folder: str) -> str | None:
    """The session id a folder name stands for (``None`` when the escapes are junk)."""
    if "~" not in folder:
        return folder
    try:
        units = b""
        out: list[str] = []
        pos = 0
        for match in _SEGMENT_ESCAPE.finditer(folder):
            if match.start() != pos:
                if units:
                    out.append(units.decode("utf-16-be"))
                    units = b""
                out.append(folder[pos : match.start()])
            units += int(match.group(1), 16).to_bytes(2, "big")
            pos = match.end()
        if units:
            out.append(units.decode("utf-16-be"))
        out.append(folder[pos:])
    except UnicodeDecodeError:
        return None
    decoded = "".join(out)
    return None if "~" in decoded and encode_segment(decoded) != folder else decoded
