"""A process's memory as the benchmarks read it: its resident set (from ``/proc``) and
the C heap's accounts (glibc's ``mallinfo2``). Imports nothing heavy: the server's own
accounts (``server_accounts/sitecustomize.py``) load it inside ``dsh-task-gantt serve``.
"""

from __future__ import annotations

import ctypes
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
