"""What a lane is doing at a moment: in a turn since when, or idle since when.

One computation for the present (a lane's ``now`` in the timeline JSON, the panel's
"in a turn · 3 min") and for any past moment (the replay cursor): both read the lane's
spans as the JSON has them, and nothing after the moment.
"""

from __future__ import annotations

from bisect import insort
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..memo import HISTORY_ITEMS_KEPT, Memo, Same
from .identity import identity_changes

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


@dataclass(frozen=True, slots=True)
class _Tally:
    """A summary's running state: what one pass adds up, so that a later version of
    the lane's list is read from it plus the spans that changed."""

    latest: int | None
    first: int | None
    ended: int
    last_end: int | None
    #: The open turns' starts, sorted.
    open_starts: tuple[int, ...]


#: Each lane's last summary, its tally and the spans it was read from: after an append
#: a lane's new list is its old one with a few spans replaced or added (the very same
#: dicts elsewhere), so the summary is patched from the spans that differ. One entry
#: per lane (its last version), bounded by lanes and by the spans they keep alive.
_LAST_SUMMARY: Memo[Hashable, tuple[Sequence[Any], _Tally, SpanSummary]] = Memo(
    256, max_weight=HISTORY_ITEMS_KEPT, weight=lambda held: len(held[0]) + 1
)
#: Past this many changed spans a lane is read afresh, not patched.
_PATCHED_AT_MOST = 256


def summary_key(lane: Mapping[str, Any]) -> tuple[str, str | None] | None:
    """What a lane's JSON names its summary by (its id and session; ``None``: values
    not a lane's), so that the timeline and the board reading the same lane share it."""
    lane_id, session = lane.get("id"), lane.get("sessionId")
    if isinstance(lane_id, str) and (session is None or isinstance(session, str)):
        return lane_id, session
    return None


def span_summary(spans: Sequence[Any], lane: Hashable | None = None) -> SpanSummary:
    """The summary of ``spans``; ``lane`` (a key naming the lane they are, see
    :func:`summary_key`) lets a later version of the lane's list be read from this one's
    summary and what changed."""
    held = _LAST_SUMMARY.get(lane) if lane is not None else None
    if held is not None and held[0] is spans:
        return held[2]
    key = Same(spans)
    hit = _SUMMARIES.get(key)
    if hit is not None:
        return hit
    tally = _patched(held[0], held[1], spans) if held is not None else None
    if tally is None:
        tally = _tally(spans)
    summary = _summary_of(tally)
    if lane is not None:  # kept by the lane (forgotten with its team), not by the list
        return _LAST_SUMMARY.put(lane, (spans, tally, summary), owner=_owner_of(lane))[2]
    return _SUMMARIES.put(key, summary)


def _owner_of(lane: Hashable) -> Hashable | None:
    # A lane key is (lane id, session id): the session owns it (forgotten with it).
    return lane[1] if isinstance(lane, tuple) and len(lane) == 2 else None


def _summary_of(tally: _Tally) -> SpanSummary:
    # The same reading as activity_at(spans, None), from the tally.
    if tally.open_starts:
        now = Activity(IN_TURN, tally.open_starts[-1])
    elif tally.latest is not None:
        now = Activity(IDLE, tally.last_end)
    else:
        now = Activity(NOTHING, None)
    return SpanSummary(tally.latest, now, tally.first, tally.ended, tally.open_starts)


def _reading(raw: Any) -> tuple[int, int | None, bool] | None:
    """A span's (time, end, is a turn), or ``None`` when it counts for nothing."""
    if type(raw) is not dict and not isinstance(raw, Mapping):
        return None
    time = raw.get("time")
    if type(time) is not int:
        time = _int(time)
        if time is None:
            return None
    end = raw.get("end")
    if end is not None and type(end) is not int:
        end = _int(end)
    return time, end, raw.get("kind") == "turn"


def _tally(spans: Sequence[Any]) -> _Tally:
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
    return _Tally(latest, first, ended, last_end, tuple(sorted(open_starts)))


def _patched(was: Sequence[Any], tally: _Tally, now: Sequence[Any]) -> _Tally | None:
    """``was``'s tally moved on to ``now``, or ``None`` (read ``now`` afresh) when too
    much changed or a span that went held an extreme no new span reaches."""
    if not isinstance(was, list | tuple) or not isinstance(now, list | tuple):
        return None
    changes = identity_changes(was, now)
    if changes is None:
        return None  # a span twice: not a lane's list
    gone, came = changes
    if len(gone) + len(came) > _PATCHED_AT_MOST:
        return None
    latest, first, ended, last_end = tally.latest, tally.first, tally.ended, tally.last_end
    open_starts = list(tally.open_starts)
    for raw in came:
        read = _reading(raw)
        if read is None:
            continue
        time, end, is_turn = read
        last = time if end is None else max(time, end)
        latest = last if latest is None else max(latest, last)
        if not is_turn:
            continue
        first = time if first is None else min(first, time)
        if end is None:
            insort(open_starts, time)
        else:
            ended += max(end - time, 0)
            last_end = end if last_end is None else max(last_end, end)
    for raw in gone:
        read = _reading(raw)
        if read is None:
            continue
        time, end, is_turn = read
        last = time if end is None else max(time, end)
        # A max (or min) cannot be taken back: unless what came reaches it, read afresh.
        if tally.latest is not None and last >= tally.latest and not _reaches(came, last):
            return None
        if not is_turn:
            continue
        if (
            tally.first is not None
            and time <= tally.first
            and first == tally.first
            and not _turn_starts_by(came, time)
        ):
            return None
        if end is None:
            open_starts.remove(time)
        else:
            ended -= max(end - time, 0)
            if tally.last_end is not None and end >= tally.last_end and not _ends_by(came, end):
                return None
    return _Tally(latest, first, ended, last_end, tuple(open_starts))


def _reaches(spans: Iterable[Any], last: int) -> bool:
    """Some span in ``spans`` lasts until ``last`` or later."""
    for raw in spans:
        read = _reading(raw)
        if read is not None and max(read[0], read[1] if read[1] is not None else read[0]) >= last:
            return True
    return False


def _turn_starts_by(spans: Iterable[Any], time: int) -> bool:
    """Some turn in ``spans`` starts at ``time`` or earlier."""
    for raw in spans:
        read = _reading(raw)
        if read is not None and read[2] and read[0] <= time:
            return True
    return False


def _ends_by(spans: Iterable[Any], end: int) -> bool:
    """Some ended turn in ``spans`` ends at ``end`` or later."""
    for raw in spans:
        read = _reading(raw)
        if read is not None and read[2] and read[1] is not None and read[1] >= end:
            return True
    return False


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
    if isinstance(spans, list | tuple):
        found = span_summary(spans, summary_key(lane)).now
    else:
        found = activity_at((), None)
    if found.doing == IN_TURN:
        return {"state": "in-turn", "since": found.since}
    return {"state": "idle", "since": found.since}
