"""Where the time went: sums of phases up to the last dated moment, turns against idle,
tasks held, the critical path; nothing without phases."""

from __future__ import annotations

from dsh_task_gantt.board.where_time import where_time
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
