"""The task graph carried on from the last analysis (``analyse_on``) equals the one
read afresh (``analyse``), on generated boards moved on by sequences of appends: a
task's new move, a new task, a task replayed to an equal view, one dropped, the order
changed."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from dsh_task_gantt.fold.tasks import HistoryEntry, TaskView
from dsh_task_gantt.timeline.task_graph import Analysis, analyse, analyse_on
from tests.test_task_graph import IDS, STATUSES, _board, _view

MORE_IDS = (*IDS, "t5", "t6", "t7")
SCOPES = ("a", "a/b", "c")


def _move(draw: st.DrawFn, view: TaskView) -> TaskView:
    """``view`` with one more entry, at or after its last one (an append)."""
    last = max(h.time for h in view.history)
    t = last + draw(st.integers(0, 6))
    status = draw(st.sampled_from(STATUSES))
    owner = draw(st.sampled_from(("x", "y"))) if status == "in_progress" else None
    blocked = tuple(draw(st.lists(st.sampled_from((*MORE_IDS, "zz")), max_size=3)))
    scopes = tuple(draw(st.lists(st.sampled_from(SCOPES), max_size=2)))
    revision = len(view.history) + 1
    entry = HistoryEntry(t, "updated", revision, status, None, None, owner, blocked, scopes)
    return replace(
        view,
        revision=revision,
        status=status,
        owner_id=owner,
        blocked_by=blocked,
        write_scopes=scopes,
        history=(*view.history, entry),
    )


def _step(draw: st.DrawFn, views: list[TaskView]) -> list[TaskView]:
    kind = draw(st.sampled_from(("move", "move", "move", "new", "equal", "drop", "swap", "none")))
    views = list(views)
    if kind == "move" and views:
        i = draw(st.integers(0, len(views) - 1))
        views[i] = _move(draw, views[i])
    elif kind == "new":
        free = [t for t in MORE_IDS if t not in {v.id for v in views}]
        if free:
            task_id = draw(st.sampled_from(free))
            at = draw(st.integers(0, 50))
            blocked = tuple(draw(st.lists(st.sampled_from((*MORE_IDS, "zz")), max_size=2)))
            scopes = tuple(draw(st.lists(st.sampled_from(SCOPES), max_size=2)))
            status = draw(st.sampled_from(STATUSES))
            owner = "x" if status == "in_progress" else None
            views.append(_view(task_id, [(at, status, owner, blocked, scopes)]))
    elif kind == "equal" and views:
        i = draw(st.integers(0, len(views) - 1))
        views[i] = replace(views[i])  # replayed again: equal, not the same object
    elif kind == "drop" and len(views) > 1:
        views.pop(draw(st.integers(0, len(views) - 1)))
    elif kind == "swap" and len(views) > 1:
        i = draw(st.integers(0, len(views) - 2))
        views[i], views[i + 1] = views[i + 1], views[i]
    return views


@settings(max_examples=300, deadline=None)
@given(_board(), st.data())
def test_the_graph_carried_on_equals_the_graph_read_afresh(
    board: list[TaskView], data: st.DataObject
) -> None:
    views = board
    held: Analysis | None = None
    for _ in range(data.draw(st.integers(1, 12))):
        held = analyse_on(held, views)
        assert held.graph == analyse(views)
        views = _step(data.draw, views)
    assert analyse_on(held, views).graph == analyse(views)


def test_an_unchanged_board_keeps_its_analysis_and_a_move_reads_its_dependents_again() -> None:
    a = _view("a", [(1, "pending", None, (), ())])
    b = _view("b", [(2, "pending", None, ("a",), ())])
    c = _view("c", [(3, "in_progress", "x", (), ("src",))])
    first = analyse_on(None, [a, b, c])
    assert analyse_on(first, [a, b, c]) is first
    done = _move_to(a, 10, "completed")
    second = analyse_on(first, [done, b, c])
    assert second.graph == analyse([done, b, c])
    assert [p.kind for p in second.graph.phases["b"]] == ["blocked", "ready"]
    assert second.graph.phases["c"] is first.graph.phases["c"]  # not read again


def _move_to(view: TaskView, t: int, status: str) -> TaskView:
    n = len(view.history) + 1
    entry = HistoryEntry(t, "updated", n, status, None, None, None, view.blocked_by, ())
    return replace(view, revision=n, status=status, history=(*view.history, entry))
