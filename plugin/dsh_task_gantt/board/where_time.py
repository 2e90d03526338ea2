"""Where the time went (pure): per task, time blocked, ready but waiting and in
progress; per member, time in turns against idle and the tasks held; the critical
path against the team's span. Read from the timeline's phases, turn spans and
``criticalPath``, up to its last dated moment (``range.end``, or while live the last
event: the section changes with what happened, not with the clock)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..memo import TASK_ENTRIES_KEPT, Memo
from ..timeline.activity import SpanSummary, span_summary, summary_key
from ..timetext import duration_text, format_time
from .geometry import as_int, as_map, as_seq, as_str
from .model import MemberTime, TaskTime, WhereTime
from .task_facts import TaskFacts, task_facts

#: Tasks listed (those that waited longest); the rest are counted.
TASKS_LISTED = 8


def _summary(lane: Mapping[str, Any]) -> SpanSummary:
    """The lane's summary, the one the timeline made of the same spans."""
    return span_summary(as_seq(lane.get("spans")), summary_key(lane))


def _latest(timeline: Mapping[str, Any], facts: Sequence[TaskFacts]) -> int | None:
    end = as_int(as_map(timeline.get("range")).get("end"))
    if end is not None:
        return end
    times = [
        t
        for lane in as_seq(timeline.get("lanes"))
        if (t := _summary(as_map(lane)).latest) is not None
    ]
    times += [f.latest for f in facts if f.latest is not None]
    return max(times, default=None)


#: Each task's phase sums, by the task's bytes, with the moment from which they hold
#: (its phases' last end; ``None``: a phase is open, the sums grow with ``upto``): a
#: poll after an append sums the tasks that moved or run on. Bounded by entries (each
#: three numbers and the task's bytes); the sums in use are refreshed.
PHASE_SUMS_KEPT = TASK_ENTRIES_KEPT
_PHASE_SUMS: Memo[bytes, tuple[Mapping[str, int], int | None]] = Memo(PHASE_SUMS_KEPT, lru=True)
#: The sums of a task without counted phases hold at every moment.
_ALWAYS = -(1 << 62)


def _phase_sums(
    task: Mapping[str, Any], upto: int, value: bytes | None = None
) -> Mapping[str, int]:
    """Time blocked, ready and in progress up to ``upto``; ``value``: the task's bytes,
    by which the sums are reused while they hold."""
    hit = _PHASE_SUMS.get(value) if value is not None else None
    if hit is not None and hit[1] is not None and hit[1] <= upto:
        return hit[0]
    sums = {"blocked": 0, "ready": 0, "in-progress": 0}
    holds_from: int | None = _ALWAYS
    for raw in as_seq(task.get("phases")):
        p = as_map(raw)
        kind, start = as_str(p.get("kind")), as_int(p.get("start"))
        if kind not in sums or start is None:
            continue
        end = as_int(p.get("end"))
        sums[kind] += max(min(end if end is not None else upto, upto) - start, 0)
        # A phase that ended by ``upto`` counts the same at any later moment.
        holds_from = None if end is None or holds_from is None else max(holds_from, end)
    if value is not None:
        _PHASE_SUMS.put(
            value, (sums, holds_from if holds_from is None or holds_from <= upto else None)
        )
    return sums


def _turns_upto(spans: Sequence[Any], upto: int) -> list[tuple[int, int]]:
    return [
        (start, min(end if end is not None else upto, upto))
        for span in (as_map(s) for s in spans)
        if as_str(span.get("kind")) == "turn" and (start := as_int(span.get("time"))) is not None
        for end in (as_int(span.get("end")),)
    ]


def _members(
    timeline: Mapping[str, Any], upto: int, facts: Sequence[TaskFacts]
) -> tuple[MemberTime, ...]:
    held: dict[str, set[str]] = {}
    for fact in facts:
        for owner in fact.holders:
            held.setdefault(owner, set()).add(fact.task_id)
    out = []
    for lane in (as_map(x) for x in as_seq(timeline.get("lanes"))):
        if as_str(lane.get("kind")) == "unassigned":
            continue
        summary = _summary(lane)
        if summary.first_turn is None:
            continue
        first = summary.first_turn
        if summary.latest is not None and summary.latest <= upto:
            # Nothing on the lane lies after ``upto``: the ended turns count whole and
            # the open ones up to it (one pass per version of the lane, not per build).
            busy = summary.ended_turns_ms + sum(max(upto - a, 0) for a in summary.open_turn_starts)
        else:
            busy = sum(max(b - a, 0) for a, b in _turns_upto(as_seq(lane.get("spans")), upto))
        session = as_str(lane.get("sessionId"))
        out.append(
            MemberTime(
                name=as_str(lane.get("name"), as_str(lane.get("id"))),
                in_turns=duration_text(busy),
                idle=duration_text(max(upto - first - busy, 0)),
                held=len(held.get(session, ())),
            )
        )
    return tuple(out)


def where_time(
    timeline: Mapping[str, Any], values: Sequence[bytes | None] | None = None
) -> WhereTime | None:
    """The section, or ``None`` for a timeline without phases (or without any time).
    ``values``: each task's bytes, by which what is read of it is reused."""
    tasks = [as_map(t) for t in as_seq(timeline.get("tasks"))]
    if not tasks or not any("phases" in t for t in tasks):
        return None
    if values is None or len(values) != len(tasks):
        values = [None] * len(tasks)
    facts = [task_facts(t, value) for t, value in zip(tasks, values, strict=True)]
    upto = _latest(timeline, facts)
    if upto is None:
        return None
    sums = [
        (t, _phase_sums(t, upto, value))
        for t, value in zip(tasks, values, strict=True)
        if as_str(t.get("status")) != "deleted"
    ]
    # The ones that waited longest first: that is what the section is asked about.
    sums.sort(key=lambda ts: (-(ts[1]["blocked"] + ts[1]["ready"]), as_str(ts[0].get("id"))))
    listed = tuple(
        TaskTime(
            task_id=as_str(t.get("id")),
            subject=as_str(t.get("subject")) or as_str(t.get("id")),
            blocked=duration_text(s["blocked"]),
            ready=duration_text(s["ready"]),
            working=duration_text(s["in-progress"]),
        )
        for t, s in sums[:TASKS_LISTED]
    )
    path = as_map(timeline.get("criticalPath"))
    ids: Sequence[str] = [as_str(x) for x in as_seq(path.get("taskIds")) if as_str(x)]
    start = as_int(as_map(timeline.get("range")).get("start"))
    return WhereTime(
        upto=upto,
        upto_text=format_time(upto),
        tasks=listed,
        tasks_more=max(len(sums) - TASKS_LISTED, 0),
        members=_members(timeline, upto, facts),
        path=" → ".join(ids),
        path_length=duration_text(as_int(path.get("duration")) or 0) if ids else "",
        span=duration_text(upto - start) if start is not None else "",
    )
