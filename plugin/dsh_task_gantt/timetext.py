"""Times as text: the board's labels and the start page's UTC stamps, in one place.

Every text is UTC; the pages rewrite each ``[data-ms]`` element in the browser's local
time when scripts run.
"""

from __future__ import annotations

import functools
from datetime import UTC, datetime
from typing import Any

#: Time texts kept (bounded by entries): a board is drawn from memoised chunks, so a
#: poll labels what changed (the newest bars, the axis, the now line), recent times
#: that stay here. A first load labels every time it draws once (a day of the biggest
#: team: ~42k texts, ~2 us each uncached), so no bound makes it hit. Measured over a
#: day-long big team's delta polls (bench_delta_day --ticks 60, 180 polls): 16,474
#: hits at 4,096 entries, 16,476 at 1,024, 16,350 at 256; a full cache of 4,096 held
#: ~8.5k blocks (bench_mem_growth --floor), gaining ~3.7 a tick while its keys'
#: numbers were dropped by the data. 1,024 keeps every hit for a quarter of that.
TIMES_KEPT = 1 << 10


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
