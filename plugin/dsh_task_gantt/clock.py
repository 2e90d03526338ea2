"""The wall clock, in the unit of every time in a log: epoch milliseconds.

Only the I/O shell reads it (the demo's ticks, a request's "now"); the fold and the
log reader never do, so their results depend on the logs alone.
"""

from __future__ import annotations

import time


def now_ms() -> int:
    """Now, in epoch milliseconds."""
    return time.time_ns() // 1_000_000
