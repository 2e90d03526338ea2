"""A task row's graph parts: phases with their text, the open-blocker chip, overlaps,
links to drawn blockers only, the critical mark; the list view's action phrases."""

from __future__ import annotations

from typing import Any

from dsh_task_gantt.board.model import Tone, View
from dsh_task_gantt.board.task_graph import GraphContext, graph_fields
from dsh_task_gantt.board.view_model import layout_board

ANA = ("ana", Tone("c1", 0))
T0 = 1_000_000


def _task(task_id: str, phases: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"id": task_id, "status": extra.pop("status", "pending"), "phases": phases, **extra}


def _tone_of(key: str) -> tuple[str, Tone] | None:
    return ANA if key == "s-ana" else None


def test_phases_say_what_they_are_and_a_finished_task_ends_on_a_cap() -> None:
    done = _task(
        "task-1",
        [
            {"kind": "ready", "start": T0, "end": T0 + 60_000},
            {"kind": "in-progress", "start": T0 + 60_000, "end": T0 + 120_000, "ownerId": "s-ana"},
            {"kind": "completed", "start": T0 + 120_000, "end": None},
        ],
        status="completed",
    )
    waiting = _task(
        "task-2",
        [
            {"kind": "blocked", "start": T0, "end": T0 + 120_000, "blockers": ["task-1", "x"]},
            {"kind": "blocked", "start": T0 + 120_000, "end": None, "blockers": ["x"]},
        ],
        blockedBy=["task-1", "x"],
    )
    timeline = {"criticalPath": {"taskIds": ["task-1"]}}
    context = GraphContext.build(timeline, [done, waiting])
    first = graph_fields(done, 0, context, _tone_of, (T0, T0 + 200_000))
    kinds = [(p.kind, p.open, p.cap) for p in first["phases"]]
    assert kinds == [
        ("ready", False, False),
        ("in-progress", False, False),
        ("completed", False, True),
    ]
    assert first["phases"][1].tone == ANA[1] and first["phases"][1].label.startswith(
        "in progress · ana"
    )
    assert first["phases"][0].label.startswith("ready, nobody on it")
    assert first["critical"] and first["state_text"] == "done" and first["open_blockers"] == ()
    second = graph_fields(waiting, 1, context, _tone_of, (T0, T0 + 200_000))
    assert second["open_blockers"] == ("x",) and second["state_text"] == "blocked"
    assert second["phases"][0].label.startswith("blocked by task-1, x")
    assert second["phases"][-1].open and not second["critical"]
    # task-1 completed but task-2 never became ready: no link to draw
    assert second["links"] == ()


def test_a_link_runs_from_a_drawn_blockers_completion_to_the_ready_moment() -> None:
    blocker = _task(
        "a", [{"kind": "completed", "start": T0 + 10_000, "end": None}], status="completed"
    )
    other = _task("b", [{"kind": "ready", "start": T0, "end": None}])
    after = _task(
        "c",
        [
            {"kind": "blocked", "start": T0, "end": T0 + 10_000, "blockers": ["a"]},
            {"kind": "ready", "start": T0 + 10_000, "end": None},
        ],
        blockedBy=["a", "ghost"],
    )
    context = GraphContext.build({}, [blocker, other, after])
    (link,) = graph_fields(after, 2, context, _tone_of, (T0, T0 + 60_000))["links"]
    assert (link.up, link.source, link.t, link.d) == (2, 0, 10.0, 0.0)
    assert graph_fields(blocker, 0, context, _tone_of, (T0, T0 + 60_000))["links"] == ()


def test_hostile_phases_and_overlaps_are_skipped_not_raised() -> None:
    task = _task("t", [None, {"kind": "nope", "start": 1}, {"kind": "ready", "start": "x"}, 5])
    task["overlaps"] = [
        {"taskId": 3},
        "x",
        {"taskId": "u", "start": T0, "end": None, "scopes": [1, "a"]},
    ]
    fields = graph_fields(
        task, 0, GraphContext.build({"criticalPath": 7}, [task]), _tone_of, (T0, T0)
    )
    assert fields["phases"] == () and [o.other for o in fields["overlaps"]] == ["u"]
    assert fields["overlaps"][0].label.startswith("write scopes overlap with u (a)")


def test_the_list_view_says_the_new_actions_in_words() -> None:
    history = [
        {"time": T0, "action": "created", "status": "pending", "actor": "lead", "revision": 1},
        {"time": T0 + 1, "action": "dependencies-changed", "status": "pending", "actor": "lead",
         "revision": 2},
        {"time": T0 + 2, "action": "unassigned", "status": "pending", "actor": "lead",
         "revision": 3},
    ]  # fmt: skip
    timeline = {
        "live": False,
        "generatedAt": T0 + 10,
        "range": {"start": T0, "end": T0 + 10},
        "lanes": [{"id": "lead", "kind": "lead", "name": "lead", "sessionId": "L", "spans": []}],
        "tasks": [{"id": "task-1", "subject": "Parse", "status": "pending", "history": history}],
    }
    board = layout_board(timeline, View(listing=True))
    texts = [item.text for item in board.items if item.kind == "task"]
    assert texts == [
        "lead created “Parse”",
        "lead changed the dependencies of “Parse”",
        "lead took the owner off “Parse”",
    ]
