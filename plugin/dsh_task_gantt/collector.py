"""The cyclic garbage collector's pace in the server's own process (``serve``).

A poll allocates tens of thousands of containers, and after a day of history several
of them hold a lane's whole history (a list of every span's read, a dict by span id).
With CPython's default young threshold (700) such a poll runs about a hundred young
collections, each one traversing those containers again: after a day that was a third
of a delta poll's CPU. A larger young generation collects as much garbage, less often.
Only the process we own is tuned: a host that mounts the plugin keeps its own policy.
"""

from __future__ import annotations

import gc

#: Net allocations of containers between two young collections (CPython's default: 700).
YOUNG_THRESHOLD = 10_000


def pace_for_serving() -> tuple[int, int, int]:
    """Raise the young generation's threshold (never lower it); the older generations'
    thresholds are kept. Returns the thresholds before."""
    before = gc.get_threshold()
    young, middle, old = before
    gc.set_threshold(max(young, YOUNG_THRESHOLD), middle, old)
    return before
