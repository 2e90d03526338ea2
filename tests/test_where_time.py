"""Where the time went: sums of phases up to the last dated moment, turns against idle,
tasks held, the critical path; nothing without phases."""

from __future__ import annotations

from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from dsh_task_gantt.board import task_facts
from dsh_task_gantt.board import where_time as where_mod
from dsh_task_gantt.board.model import WhereTime
from dsh_task_gantt.board.where_time import where_time
from dsh_task_gantt.memo import Memo, clear_memos
from dsh_task_gantt.timetext import duration_text

T0 = 1_800_000_000_000
MIN = 60_000


def _timeline(end: int | None) -> dict[str, object]:
    return {
        "range": {"start": T0, "end": end},
        "criticalPath": {"taskIds": ["task-1", "task-2"], "duration": 30 * MIN},
        "lanes": [
            {"id": "lead", "kind": "lead", "name": "lead", "sessionId": "L",
             "spans": [{"kind": "turn", "time": T0, "end": T0 + 10 * MIN}]},
            {"id": "A", "kind": "teammate", "name": "ana", "sessionId": "A",
             "spans": [{"kind": "turn", "time": T0 + 5 * MIN, "end": None}]},
            {"id": "unassigned", "kind": "unassigned", "name": "unassigned", "spans": []},
        ],
        "tasks": [
            {"id": "task-1", "subject": "Parse", "status": "completed",
             "phases": [{"kind": "ready", "start": T0, "end": T0 + 2 * MIN},
                        {"kind": "in-progress", "start": T0 + 2 * MIN, "end": T0 + 20 * MIN,
                         "ownerId": "A"},
                        {"kind": "completed", "start": T0 + 20 * MIN, "end": None}]},
            {"id": "task-2", "subject": "Draw", "status": "pending",
             "phases": [{"kind": "blocked", "start": T0 + MIN, "end": T0 + 20 * MIN},
                        {"kind": "ready", "start": T0 + 20 * MIN, "end": None}]},
            {"id": "task-3", "subject": "Gone", "status": "deleted",
             "phases": [{"kind": "ready", "start": T0, "end": None}]},
        ],
    }  # fmt: skip


def test_time_per_task_and_member_up_to_the_end_of_the_range() -> None:
    where = where_time(_timeline(T0 + 30 * MIN))
    assert where is not None
    assert [(t.task_id, t.blocked, t.ready, t.working) for t in where.tasks] == [
        ("task-2", "19 min", "10 min", "0 s"),  # waited longest: first
        ("task-1", "0 s", "2 min", "18 min"),
    ]  # the deleted task is left out
    assert [(m.name, m.in_turns, m.idle, m.held) for m in where.members] == [
        ("lead", "10 min", "20 min", 0),
        ("ana", "25 min", "0 s", 1),  # an open turn runs to the end
    ]
    assert (where.path, where.path_length, where.span) == ("task-1 → task-2", "30 min", "30 min")


def test_live_it_stops_at_the_last_event_not_the_clock() -> None:
    where = where_time(_timeline(None))
    assert where is not None and where.upto == T0 + 20 * MIN  # the last phase start


def test_nothing_without_phases_and_durations_read_well() -> None:
    assert where_time({"tasks": [{"id": "t"}]}) is None and where_time({}) is None
    assert (duration_text(40_000), duration_text(125 * MIN)) == ("40 s", "2 h 05 min")


def test_a_range_that_ends_before_a_turn_counts_only_up_to_its_end() -> None:
    """The lane's one-pass summary is used only when nothing on the lane lies after the
    range's end; otherwise each turn is cut at the end, as it always was."""
    timeline = _timeline(T0 + 8 * MIN)  # inside the lead's turn, after ana's start
    where = where_time(timeline)
    assert where is not None
    assert [(m.name, m.in_turns, m.idle) for m in where.members] == [
        ("lead", "8 min", "0 s"),
        ("ana", "3 min", "0 s"),
    ]


_KINDS = ("blocked", "ready", "in-progress", "completed")
_PHASE = st.tuples(
    st.sampled_from(_KINDS), st.integers(0, 40), st.one_of(st.none(), st.integers(0, 40))
)
_TASK = st.tuples(
    st.sampled_from(("t1", "t2", "t3", "t4", "t5")),  # ids may repeat: ties by place
    st.sampled_from(("pending", "in_progress", "completed", "deleted")),
    st.lists(_PHASE, max_size=4),
)


def _task(n: int, task_id: str, status: str, phases: list[tuple[str, int, int | None]]) -> Any:
    return {
        "id": task_id,
        "subject": f"task {n}",
        "status": status,
        "phases": [
            {"kind": kind, "start": T0 + start * MIN,
             "end": None if end is None else T0 + (start + end) * MIN, "ownerId": "A"}
            for kind, start, end in phases
        ],
    }  # fmt: skip


def _cold_where(timeline: dict[str, Any]) -> WhereTime | None:
    """where_time with every memo it reads empty (a cold build, by value)."""
    kept = (where_mod._PHASE_SUMS, where_mod._TEAM_SUMS, where_mod._LAST_TEAM_SUMS)
    facts_kept = (task_facts._FACTS, task_facts._TEAM_FACTS)
    where_mod._PHASE_SUMS, where_mod._TEAM_SUMS, where_mod._LAST_TEAM_SUMS = (
        Memo(8),
        Memo(8),
        Memo(8),
    )
    task_facts._FACTS, task_facts._TEAM_FACTS = Memo(8), Memo(8)
    try:
        return where_time(timeline)
    finally:
        where_mod._PHASE_SUMS, where_mod._TEAM_SUMS, where_mod._LAST_TEAM_SUMS = kept
        task_facts._FACTS, task_facts._TEAM_FACTS = facts_kept


@settings(max_examples=150, deadline=None)
@given(
    tasks=st.lists(_TASK, min_size=1, max_size=24),
    moments=st.lists(st.integers(0, 90), min_size=1, max_size=6),
    moved=st.lists(st.tuples(st.integers(0, 23), _TASK), max_size=6),
)
def test_the_longest_waits_after_any_moments_and_moves_equal_a_cold_sum(
    tasks: list[tuple[str, str, list[tuple[str, int, int | None]]]],
    moments: list[int],
    moved: list[tuple[int, tuple[str, str, list[tuple[str, int, int | None]]]]],
) -> None:
    """The section at moments going forward (and now and then back), with the tasks
    moved in between, keyed by each task's value as the panel keys it: the tasks listed
    and counted, and the members' time, are what a cold build sums (the
    team's sums carried on from its last ones when a task moved)."""
    clear_memos()
    made = [_task(n, *t) for n, t in enumerate(tasks)]
    for step, minutes in enumerate(sorted(moments) + moments[:1]):
        if step < len(moved):
            at, task = moved[step]
            made[at % len(made)] = _task(at, *task)
        timeline = {**_timeline(T0 + minutes * MIN), "tasks": list(made), "rootSessionId": "L"}
        values = [orjson.dumps(t) for t in made]
        assert where_time(timeline, values) == _cold_where(timeline), (step, minutes)
    clear_memos()


def test_the_board_reads_where_the_time_went_once_per_build(monkeypatch: Any) -> None:
    """Every width's poll of one build of the timeline (the very object) shows the same
    section, read once; the next build reads it again."""
    from dsh_task_gantt.board import view_model
    from dsh_task_gantt.board.model import View

    clear_memos()
    calls = []

    def counted(*args: Any, **kwargs: Any) -> WhereTime | None:
        calls.append(args[0])
        return where_time(*args, **kwargs)

    monkeypatch.setattr(view_model, "where_time", counted)
    timeline = dict(_timeline(T0 + 30 * MIN), live=False, generatedAt=T0 + 30 * MIN)
    boards = [view_model.layout_board(timeline, View(track_px=px)) for px in (400, 1280)]
    assert len(calls) == 1 and boards[0].where is boards[1].where is not None
    again = dict(timeline)  # the next build: equal values, another timeline
    view_model.layout_board(again, View(track_px=400))
    assert len(calls) == 2  # read again without clearing any memo
    clear_memos()
    assert boards[0].where == where_time(_timeline(T0 + 30 * MIN))
    clear_memos()
