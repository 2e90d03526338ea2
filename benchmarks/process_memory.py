"""A process's memory as the benchmarks read it: its resident set (from ``/proc``), the
C heap's accounts (glibc's ``mallinfo2``) and pymalloc's. Imports nothing heavy: the server's own
accounts (``server_accounts/sitecustomize.py``) load it inside ``dsh-task-gantt serve``.
"""

from __future__ import annotations

import ctypes
import os
import re
import sys
import tempfile
from pathlib import Path


def rss_kib(pid: int | str = "self") -> int:
    """The process's resident set in KiB (0 where ``/proc`` has none)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    for line in status.splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


class MallInfo2(ctypes.Structure):
    """glibc's ``struct mallinfo2`` (malloc.h), every field a ``size_t``."""

    _fields_ = [
        (name, ctypes.c_size_t)
        for name in (
            "arena", "ordblks", "smblks", "hblks", "hblkhd",
            "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost",
        )
    ]  # fmt: skip


def c_heap() -> dict[str, int]:
    """The C heap's bytes in use and free (the main arena and the others) and the bytes
    in blocks mapped apart; empty where the C library has no ``mallinfo2`` (glibc < 2.33,
    or not glibc)."""
    try:
        mallinfo2 = ctypes.CDLL(None).mallinfo2
    except (OSError, AttributeError):
        return {}
    mallinfo2.restype = MallInfo2
    info = mallinfo2()
    return {"c_in_use": info.uordblks, "c_free": info.fordblks, "c_mapped": info.hblkhd}


def pymalloc() -> dict[str, int]:
    """pymalloc's own figures, from ``sys._debugmallocstats`` (it writes to C's stderr)."""
    with tempfile.TemporaryFile() as out:
        saved = os.dup(2)
        os.dup2(out.fileno(), 2)
        try:
            sys._debugmallocstats()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        out.seek(0)
        text = out.read().decode(errors="replace")

    def figure(label: str) -> int:
        found = re.search(re.escape(label) + r"\s*=\s*([\d,]+)", text)
        return int(found.group(1).replace(",", "")) if found else -1

    return {
        "py_arenas": figure("# arenas allocated current"),
        "py_allocated": figure("# bytes in allocated blocks"),
        "py_free": figure("# bytes in available blocks"),
    }


def heap_in_use() -> int:
    """Bytes the process's objects hold: pymalloc's allocated blocks and the C heap's
    blocks in use (both allocators' free memory and slack left out: a figure that a
    dict table or a long string shows, unlike a count of blocks, and that page reuse
    does not blur, unlike the RSS); -1 where either is not known."""
    py, c = pymalloc().get("py_allocated", -1), c_heap()
    if py < 0 or not c:
        return -1
    return py + c["c_in_use"] + c["c_mapped"]
