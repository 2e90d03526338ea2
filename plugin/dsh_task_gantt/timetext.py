"""Times as text: the board's labels and the start page's UTC stamps, in one place.

Every text is UTC; the pages rewrite each ``[data-ms]`` element in the browser's local
time when scripts run.
"""

from __future__ import annotations

import functools
from datetime import UTC, datetime
from typing import Any

#: Time texts kept: a board is drawn from memoised chunks, so a poll labels what
#: changed (the newest bars, the axis, the now line), recent times that stay here.
#: Each entry is ~200 bytes with its key and link; at 65,536 a full cache was ~13 MB
#: and a live team filled it at ~4 texts an append (1.5 MB an hour, never given back).
#: An hour of the biggest team opens with ~5k: so few are full from the first poll.
TIMES_KEPT = 1 << 12


@functools.lru_cache(maxsize=TIMES_KEPT)
def format_time(ms: int, fmt: str = "hms") -> str:
    """UTC text of a time (cached, at most TIMES_KEPT)."""
    moment = datetime.fromtimestamp(ms / 1000, tz=UTC)
    if fmt == "hm":
        return moment.strftime("%H:%M")
    if fmt == "dhm":
        return moment.strftime("%b %d %H:%M")
    if fmt == "d":
        return moment.strftime("%b %d")
    if fmt == "full":
        return moment.strftime("%Y-%m-%d %H:%M:%S UTC")
    if fmt == "fullms":  # two events in one second: the milliseconds tell them apart
        return moment.strftime("%Y-%m-%d %H:%M:%S.") + f"{ms % 1000:03d} UTC"
    return moment.strftime("%H:%M:%S")


def duration_text(ms: int) -> str:
    """``2 h 05 min``, ``12 min``, ``40 s`` (where the time went, a turn in the list)."""
    s = max(ms, 0) // 1000
    if s < 60:
        return f"{s} s"
    m = s // 60
    if m < 60:
        return f"{m} min"
    return f"{m // 60} h {m % 60:02d} min"


def format_utc(ms: Any) -> str:
    """A full UTC time of epoch milliseconds; empty when the value is not one."""
    if not isinstance(ms, int) or isinstance(ms, bool):
        return ""
    return format_time(ms, "full")
