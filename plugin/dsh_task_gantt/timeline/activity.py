"""What a lane is doing at a moment: in a turn since when, or idle since when.

One computation for the present (a lane's ``now`` in the timeline JSON, the panel's
"in a turn · 3 min") and for any past moment (the replay cursor): both read the lane's
spans as the JSON has them, and nothing after the moment.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..memo import Memo, Same

#: What a lane can be doing at a moment (``none``: nothing on it yet).
IN_TURN, IDLE, NOTHING = "turn", "idle", "none"
#: The JSON's lane ``now.state`` values.
NOW_STATES = ("in-turn", "idle", "provisioning", "failed")
#: Member phases the roster reports that outrank the log: no turn is read into them.
_ROSTER_STATES = frozenset({"provisioning", "failed"})


@dataclass(frozen=True, slots=True)
class Activity:
    doing: str
    #: In a turn since (its start), idle since (the last turn's end); ``None``: unknown.
    since: int | None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


@dataclass(frozen=True, slots=True)
class SpanSummary:
    """What the present needs from a lane's spans, read in one pass: the panel asks it
    of every lane on every build (its ``now``, "where the time went"), and an unchanged
    lane holds the very same span list from one build to the next."""

    #: The latest time or end of any span (``None``: no dated span).
    latest: int | None
    #: Where the lane is now (after everything it holds).
    now: Activity
    #: Turns: the earliest start, the time spent in the ended ones, the open ones' starts.
    first_turn: int | None
    ended_turns_ms: int
    open_turn_starts: tuple[int, ...]


#: By the very span list (kept alive by its key, so an id is never reused). A build
#: asks once per lane; the entries beyond the lanes of the teams polled are dead
#: versions of a changed lane, so the bound is small.
_SUMMARIES: Memo[Same[Sequence[Any]], SpanSummary] = Memo(64)


def span_summary(spans: Sequence[Any]) -> SpanSummary:
    key = Same(spans)
    hit = _SUMMARIES.get(key)
    if hit is not None:
        return hit
    latest: int | None = None
    first: int | None = None
    ended = 0
    last_end: int | None = None
    open_starts: list[int] = []
    for raw in spans:
        # Exact types first: the builder's spans are dicts of ints, and the abstract
        # checks cost more than the rest of the loop on a lead's thousands of spans.
        if type(raw) is not dict and not isinstance(raw, Mapping):
            continue
        time = raw.get("time")
        if type(time) is not int:
            time = _int(time)
            if time is None:
                continue
        end = raw.get("end")
        if end is not None and type(end) is not int:
            end = _int(end)
        last = time if end is None else max(time, end)
        latest = last if latest is None else max(latest, last)
        if raw.get("kind") != "turn":
            continue
        first = time if first is None else min(first, time)
        if end is None:
            open_starts.append(time)
        else:
            ended += max(end - time, 0)
            last_end = end if last_end is None else max(last_end, end)
    # The same reading as activity_at(spans, None), from this one pass.
    if open_starts:
        now = Activity(IN_TURN, max(open_starts))
    else:
        now = Activity(IDLE, last_end) if latest is not None else Activity(NOTHING, None)
    summary = SpanSummary(latest, now, first, ended, tuple(sorted(open_starts)))
    return _SUMMARIES.put(key, summary)


def activity_at(spans: Iterable[Any], at: int | None) -> Activity:
    """The lane at ``at`` (``None``: after everything it holds). A turn that started by
    then and had not ended is open; overlapping turns (a host restart) count from the
    latest start; idle counts from the latest end at or before ``at``."""
    turn_since: int | None = None
    idle_since: int | None = None
    seen = False
    for raw in spans:
        if not isinstance(raw, Mapping):
            continue
        time = _int(raw.get("time"))
        if time is None or (at is not None and time > at):
            continue
        seen = True
        if raw.get("kind") != "turn":
            continue
        end = _int(raw.get("end"))
        if end is None or (at is not None and end > at):
            turn_since = time if turn_since is None else max(turn_since, time)
        else:
            idle_since = end if idle_since is None else max(idle_since, end)
    if turn_since is not None:
        return Activity(IN_TURN, turn_since)
    if seen:
        return Activity(IDLE, idle_since)
    return Activity(NOTHING, None)


def lane_now(lane: Mapping[str, Any], live: bool) -> dict[str, Any] | None:
    """A lane's JSON ``now``: ``None`` when the team is frozen or the lane is no member
    (``unassigned``); the roster's provisioning/failed phase when it says so; else in a
    turn or idle, from the lane's spans."""
    if not live or lane.get("kind") == "unassigned":
        return None
    phase = lane.get("phase")
    if isinstance(phase, str) and phase in _ROSTER_STATES:
        return {"state": phase, "since": None}
    spans = lane.get("spans")
    found = span_summary(spans).now if isinstance(spans, list | tuple) else activity_at((), None)
    if found.doing == IN_TURN:
        return {"state": "in-turn", "since": found.since}
    return {"state": "idle", "since": found.since}
