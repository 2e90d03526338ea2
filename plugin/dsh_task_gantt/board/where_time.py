"""Where the time went (pure): per task, time blocked, ready but waiting and in
progress; per member, time in turns against idle and the tasks held; the critical
path against the team's span. Read from the timeline's phases, turn spans and
``criticalPath``, up to its last dated moment (``range.end``, or while live the last
event: the section changes with what happened, not with the clock)."""

from __future__ import annotations

import bisect
import heapq
import operator
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..memo import TASK_ENTRIES_KEPT, TEAMS_SIZED_FOR, Memo
from ..timeline.activity import SpanSummary, span_summary, summary_key
from ..timetext import duration_text, format_time
from .geometry import as_int, as_map, as_seq, as_str, team_of
from .model import MemberTime, TaskTime, WhereTime
from .task_facts import TeamTaskFacts, team_task_facts

#: Tasks listed (those that waited longest); the rest are counted.
TASKS_LISTED = 8


def _summary(lane: Mapping[str, Any]) -> SpanSummary:
    """The lane's summary, the one the timeline made of the same spans."""
    return span_summary(as_seq(lane.get("spans")), summary_key(lane))


def _latest(timeline: Mapping[str, Any], team: TeamTaskFacts) -> int | None:
    end = as_int(as_map(timeline.get("range")).get("end"))
    if end is not None:
        return end
    times = [
        t
        for lane in as_seq(timeline.get("lanes"))
        if (t := _summary(as_map(lane)).latest) is not None
    ]
    if team.latest is not None:  # the tasks' latest, read once per version of them
        times.append(team.latest)
    return max(times, default=None)


#: Each task's phase sums, by the task's bytes, with the moment from which they hold
#: (its phases' last end; ``None``: a phase is open, the sums grow with ``upto``): a
#: poll after an append sums the tasks that moved or run on. Bounded by entries (each
#: three numbers and the task's bytes); the sums in use are refreshed.
PHASE_SUMS_KEPT = TASK_ENTRIES_KEPT
_PHASE_SUMS: Memo[Hashable, tuple[Mapping[str, int], int | None]] = Memo(PHASE_SUMS_KEPT, lru=True)
#: The sums of a task without counted phases hold at every moment.
_ALWAYS = -(1 << 62)


def _phase_sums(
    task: Mapping[str, Any], upto: int, value: Hashable | None = None
) -> Mapping[str, int]:
    """Time blocked, ready and in progress up to ``upto``; ``value``: what names the
    task's value (its bytes or wire generation), by which the sums are reused while
    they hold."""
    return _phase_sums_held(task, upto, value)[0]


def _phase_sums_held(
    task: Mapping[str, Any], upto: int, value: Hashable | None = None
) -> tuple[Mapping[str, int], bool]:
    """The sums, and whether they hold at every moment from ``upto`` on."""
    hit = _PHASE_SUMS.get(value) if value is not None else None
    if hit is not None and hit[1] is not None and hit[1] <= upto:
        return hit[0], True
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
    holds = holds_from is not None and holds_from <= upto
    if value is not None:
        _PHASE_SUMS.put(value, (sums, holds_from if holds else None))
    return sums, holds


#: A task's sums with what it is listed by (the longest wait first, then its id, then
#: its place: the order a stable sort by wait and id gives).
_Summed = tuple[tuple[int, str, int], Mapping[str, Any], Mapping[str, int]]
_BY_WAIT = operator.itemgetter(0)


@dataclass(frozen=True, slots=True)
class _TeamSums:
    """The tasks' sums at ``upto``: those that hold from then on, sorted, and the places
    (in the tasks) of those that grow with ``upto``."""

    upto: int
    held: tuple[_Summed, ...]
    growing: tuple[int, ...]
    #: The tasks summed (those not deleted).
    count: int


#: Each team's sums by the very values of its tasks (see task_facts.team_task_facts):
#: a poll after an append sums again only the tasks whose sums grow with time (an open
#: phase), instead of looking up every task of a day. Bounded by entries: each kept
#: team's last versions (a reference and three numbers per task).
TEAM_SUMS_KEPT = 2 * TEAMS_SIZED_FOR
_TEAM_SUMS: Memo[tuple[Hashable, ...], _TeamSums] = Memo(TEAM_SUMS_KEPT, lru=True)


def _summed(task: Mapping[str, Any], place: int, sums: Mapping[str, int]) -> _Summed:
    return ((-(sums["blocked"] + sums["ready"]), as_str(task.get("id")), place), task, sums)


#: Each team's last sums, with the task values they were summed from: after a task
#: moved, the sums of the tasks that did not are that version's (only the moved ones
#: are summed again, not every task of a day). One entry per team.
_LAST_TEAM_SUMS: Memo[str, tuple[tuple[Hashable, ...], _TeamSums]] = Memo(TEAMS_SIZED_FOR)
#: At most this many moved tasks are summed on the team's last sums; more, all are.
SUMMED_ON_AT_MOST = 64


def _longest_waits(
    tasks: Sequence[Mapping[str, Any]],
    values: Sequence[Hashable | None],
    upto: int,
    team_id: str = "",
) -> tuple[list[_Summed], int]:
    """The TASKS_LISTED tasks not deleted that waited longest up to ``upto``, in that
    order, and how many tasks are not deleted (``team_id``: whose tasks, by which its
    last sums are summed on)."""
    key = tuple(values) if None not in values else None
    last = _TEAM_SUMS.get(key) if key is not None else None
    if last is None or last.upto > upto:
        held_before = _LAST_TEAM_SUMS.get(team_id) if key is not None and team_id else None
        last = None
        if held_before is not None:
            last = _summed_on(held_before[0], held_before[1], tasks, key or (), upto)
        if last is None:
            last = _summed_afresh(tasks, values, upto)
        if key is not None:
            _TEAM_SUMS.put(key, last)
    if key is not None and team_id:
        was = _LAST_TEAM_SUMS.get(team_id)
        if was is None or was[1] is not last:
            _LAST_TEAM_SUMS.put(team_id, (key, last), owner=team_id)
    # The held sums hold at ``upto`` too (it is not before theirs): only the growing
    # ones are summed again, and the longest waits are among the held ones' first.
    now = [_summed(tasks[n], n, _phase_sums(tasks[n], upto, values[n])) for n in last.growing]
    return heapq.nsmallest(TASKS_LISTED, [*last.held[:TASKS_LISTED], *now], key=_BY_WAIT), (
        last.count
    )


def _summed_afresh(
    tasks: Sequence[Mapping[str, Any]], values: Sequence[Hashable | None], upto: int
) -> _TeamSums:
    held: list[_Summed] = []
    growing: list[int] = []
    for place, (t, value) in enumerate(zip(tasks, values, strict=True)):
        if as_str(t.get("status")) == "deleted":
            continue
        sums, holds = _phase_sums_held(t, upto, value)
        if holds:
            held.append(_summed(t, place, sums))
        else:
            growing.append(place)
    held.sort(key=_BY_WAIT)
    return _TeamSums(upto, tuple(held), tuple(growing), len(held) + len(growing))


def _summed_on(
    was_values: tuple[Hashable, ...],
    was: _TeamSums,
    tasks: Sequence[Mapping[str, Any]],
    values: tuple[Hashable, ...],
    upto: int,
) -> _TeamSums | None:
    """``was`` (the sums of the tasks ``was_values`` named, at or before ``upto``) with
    the tasks whose value changed summed again at ``upto``; ``None`` (sum them all) when
    the tasks are not the same number or many moved. A sum that held then holds now; a
    growing one is summed again at each call anyway, as a fresh one would be."""
    if was.upto > upto or len(was_values) != len(values):
        return None
    moved = [n for n, (a, b) in enumerate(zip(values, was_values, strict=True)) if a != b]
    if len(moved) > SUMMED_ON_AT_MOST:
        return None
    gone = set(moved)
    held = [s for s in was.held if s[0][2] not in gone]
    growing = [n for n in was.growing if n not in gone]
    for n in moved:
        t = tasks[n]
        if as_str(t.get("status")) == "deleted":
            continue
        sums, holds = _phase_sums_held(t, upto, values[n])
        if holds:
            bisect.insort(held, _summed(t, n, sums), key=_BY_WAIT)
        else:
            growing.append(n)
    growing.sort()
    return _TeamSums(upto, tuple(held), tuple(growing), len(held) + len(growing))


def _turns_upto(spans: Sequence[Any], upto: int) -> list[tuple[int, int]]:
    return [
        (start, min(end if end is not None else upto, upto))
        for span in (as_map(s) for s in spans)
        if as_str(span.get("kind")) == "turn" and (start := as_int(span.get("time"))) is not None
        for end in (as_int(span.get("end")),)
    ]


def _members(
    timeline: Mapping[str, Any], upto: int, held: Mapping[str, frozenset[str]]
) -> tuple[MemberTime, ...]:
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
    timeline: Mapping[str, Any],
    values: Sequence[Hashable | None] | None = None,
    team: TeamTaskFacts | None = None,
    tasks: Sequence[Mapping[str, Any]] | None = None,
) -> WhereTime | None:
    """The section, or ``None`` for a timeline without phases (or without any time).
    ``values``: what names each task's value (its bytes or wire generation), by which
    what is read of it is reused; ``team``: the tasks' facts, and ``tasks``: the
    timeline's tasks each read as a mapping, when the caller has them."""
    if tasks is None:
        tasks = [as_map(t) for t in as_seq(timeline.get("tasks"))]
    if not tasks:
        return None
    if values is None or len(values) != len(tasks):
        values = [None] * len(tasks)
    if team is None or len(team.facts) != len(tasks):
        team = team_task_facts(tasks, values)
    if not team.phased:
        return None
    upto = _latest(timeline, team)
    if upto is None:
        return None
    listed_sums, summed = _longest_waits(tasks, values, upto, team_of(timeline))
    listed = tuple(
        TaskTime(
            task_id=as_str(t.get("id")),
            subject=as_str(t.get("subject")) or as_str(t.get("id")),
            blocked=duration_text(s["blocked"]),
            ready=duration_text(s["ready"]),
            working=duration_text(s["in-progress"]),
        )
        for _, t, s in listed_sums
    )
    path = as_map(timeline.get("criticalPath"))
    ids: Sequence[str] = [as_str(x) for x in as_seq(path.get("taskIds")) if as_str(x)]
    start = as_int(as_map(timeline.get("range")).get("start"))
    return WhereTime(
        upto=upto,
        upto_text=format_time(upto),
        tasks=listed,
        tasks_more=max(summed - TASKS_LISTED, 0),
        members=_members(timeline, upto, team.held),
        path=" → ".join(ids),
        path_length=duration_text(as_int(path.get("duration")) or 0) if ids else "",
        span=duration_text(upto - start) if start is not None else "",
    )
