"""The cyclic garbage collector's pace in the server's own process (``serve``).

A poll allocates tens of thousands of containers, and after a day of history several
of them hold a lane's whole history (a list of every span's read, a dict by span id).
With CPython's default young threshold (700) such a poll runs about a hundred young
collections, each one traversing those containers again: after a day that was a third
of a delta poll's CPU. A larger young generation collects as much garbage, less often:
what a young collection traverses is what survived since the last one (the last
versions the memos keep, not every version an append made, which reference counting
freed), so its cost hardly grows with the threshold while its frequency falls with it.
Only the process we own is tuned: a host that mounts the plugin keeps its own policy.
"""

from __future__ import annotations

import gc

#: Net allocations of containers between two young collections (CPython's default: 700).
#: After a day of history a young collection costs 60-115 ms at 10,000 and came every
#: 25-40 appends (the delta poll's p99: 244 ms of CPU over 120 appends); at 100,000 it
#: comes ten times less often (p99 166 ms; benchmarks/bench_delta_day.py).
YOUNG_THRESHOLD = 100_000


def pace_for_serving() -> tuple[int, int, int]:
    """Raise the young generation's threshold (never lower it); the older generations'
    thresholds are kept. Returns the thresholds before."""
    before = gc.get_threshold()
    young, middle, old = before
    gc.set_threshold(max(young, YOUNG_THRESHOLD), middle, old)
    return before
