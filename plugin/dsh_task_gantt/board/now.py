"""Each lane in the present, in words: "in a turn · 3 min", "idle · 12 min",
"provisioning", "failed"; and the team's "2 of 4 working".

The state and its start come from the lane's ``now`` in the timeline JSON (computed
by :func:`~dsh_task_gantt.timeline.activity.lane_now`, the replay cursor's computation
at the present); a timeline without it (another host's service) gets the same
computation here. Only the duration depends on the clock, so the panel renders these
apart from the lane's cached markup.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..timeline.activity import NOW_STATES, lane_now
from .geometry import as_int, as_map, as_str

_MINUTE_MS = 60_000
_HOUR_MIN = 60
_DAY_MIN = 24 * 60
#: The visible word of each state (the JSON's "in-turn" reads "in a turn").
_WORDS = {"in-turn": "in a turn", "idle": "idle", "provisioning": "provisioning",
          "failed": "failed"}  # fmt: skip


@dataclass(frozen=True, slots=True)
class LaneNow:
    state: str
    since: int | None
    #: How long, in words ("3 min"); empty when the start is unknown or not a duration.
    duration: str
    #: The same to the minute ("2 h 5 min"), for the tooltip.
    precise: str = ""

    @property
    def text(self) -> str:
        word = _WORDS[self.state]
        return f"{word} · {self.duration}" if self.duration else word

    @property
    def title(self) -> str:
        """The state as a sentence (the tooltip)."""
        if self.state == "provisioning":
            return "being set up by the host"
        if self.state == "failed":
            return "failed to start"
        word = _WORDS[self.state]
        return f"{word} for {self.precise or self.duration}" if self.duration else word

    @property
    def working(self) -> bool:
        return self.state == "in-turn"


def duration_text(ms: int, *, precise: bool = False) -> str:
    """A short duration: "<1 min", "3 min", "2 h", "3 d" (the lane's name cell is narrow
    in a sidebar); ``precise``: "2 h 5 min", "3 d 4 h" (the tooltip)."""
    minutes = max(ms, 0) // _MINUTE_MS
    if minutes < 1:
        return "<1 min"
    if minutes < _HOUR_MIN:
        return f"{minutes} min"
    if minutes < _DAY_MIN:
        hours, rest = divmod(minutes, _HOUR_MIN)
        return f"{hours} h {rest} min" if rest and precise else f"{hours} h"
    days, rest = divmod(minutes, _DAY_MIN)
    hours = rest // _HOUR_MIN
    return f"{days} d {hours} h" if hours and precise else f"{days} d"


def lane_now_at(lane: Mapping[str, Any], live: bool, now: int) -> LaneNow | None:
    """The lane in the present (``now``: the clock), or ``None`` (frozen, no member)."""
    # The timeline's own ``now`` when it has one (computing a default costs a pass).
    raw = (lane["now"] if "now" in lane else lane_now(lane, live)) if live else None
    found = as_map(raw)
    state = as_str(found.get("state"))
    if state not in NOW_STATES:
        return None
    since = as_int(found.get("since"))
    timed = since is not None and state in {"in-turn", "idle"}
    if not timed or since is None:
        return LaneNow(state, since, "")
    return LaneNow(
        state, since, duration_text(now - since), duration_text(now - since, precise=True)
    )


def working_text(nows: Sequence[LaneNow | None]) -> str:
    """ "2 of 4 working": members in a turn, of the members the roster has."""
    members = [n for n in nows if n is not None]
    return f"{sum(1 for n in members if n.working)} of {len(members)} working"
