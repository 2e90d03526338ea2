"""Whether the team is live, and the timeline's extent."""

from __future__ import annotations

from typing import Any

from ..fold.text import key
from ..fold.turns import pair_turns
from ..memo import Memo, Same
from .model import Model
from .spans import sorted_spans


def is_live(model: Model) -> bool:
    """A property of the team, whichever of its sessions was asked for: some
    lane's agent is running, or the team root's own log has an open turn (after
    the closing rules). An open turn in a cold member's log is history (dead
    teams end on unclosed turns)."""
    if any(lane.source and lane.source.agent_status == "running" for lane in model.lanes):
        return True
    if any(key(child) for child in model.team.running_children or ()):
        return True
    root = model.roster.lead
    pairing = pair_turns(
        root.fold, root.cut, root.restores(), (root.id, root.session_id), root.session_id
    )
    return pairing.open_turns > 0


def time_range(model: Model, live: bool) -> tuple[int | None, int | None]:
    """``range.start`` is the earliest span or task-history time; a live timeline has
    no end, a frozen one ends at its latest event (notes say what it fell back to)."""
    # A lane's sorted spans start at its earliest (memoised for the lane JSON anyway):
    # no list of every span's time per poll.
    times = [sorted_spans(lane)[0]["time"] for lane in model.lanes if any(lane.parts)]
    earliest_task = _earliest_history(model.tasks)
    if earliest_task is not None:
        times.append(earliest_task)
    start = min(times) if times else None
    if live:
        return start, None
    start, end = _frozen_range(model, start)
    if start is not None and end is not None and start > end:
        start = end  # a range never runs backwards
    return start, end


#: The earliest task-history time of a team's task JSON, by the very list (a poll
#: that moves no task holds the same list). A few teams' last versions.
_EARLIEST_HISTORY: Memo[Same[list[dict[str, Any]]], tuple[int | None]] = Memo(16)


def _earliest_history(tasks: list[dict[str, Any]]) -> int | None:
    key = Same(tasks)
    held = _EARLIEST_HISTORY.get(key)
    if held is None:
        times = [h["time"] for task in tasks for h in task["history"]]
        held = _EARLIEST_HISTORY.put(key, (min(times) if times else None,))
    return held[0]


def _frozen_range(model: Model, start: int | None) -> tuple[int | None, int | None]:
    """Both ends set, or both null: a log whose events carry times but that drew
    nothing still has an extent (from its creation, or a point at its last event)."""
    start, end = _right_edge(model, start)
    if start is None and end is not None:
        created = [
            lane.created_at
            for lane in model.lanes
            if lane.created_at is not None and lane.created_at <= end
        ]
        start = min(created) if created else end
    return start, end


def _right_edge(model: Model, start: int | None) -> tuple[int | None, int | None]:
    observed = [lane.fold.last_time for lane in model.lanes if lane.fold.last_time is not None]
    if not observed:
        observed = [
            lane.source.header.created_at
            for lane in model.lanes
            if lane.source and lane.source.header and lane.source.header.created_at is not None
        ]
        if observed:
            model.notes.append(
                "no event carried a time; the right edge is the latest session creation time"
            )
        else:
            model.notes.append("no event carried a time; the timeline has no right edge")
    return start, (max(observed) if observed else None)
