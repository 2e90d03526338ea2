"""The task graph over time: phases, write-scope overlaps, the critical path, the
rules DSH would refuse — on hand-built boards, generated ones (hypothesis) and
hostile payloads."""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dsh_task_gantt.fixturegen import generate_team
from dsh_task_gantt.fold import fold_lane
from dsh_task_gantt.fold.tasks import CallIndex, HistoryEntry, TaskView, replay_tasks
from dsh_task_gantt.logs.reader import LogReader
from dsh_task_gantt.timeline import build_timeline
from dsh_task_gantt.timeline.task_graph import (
    PHASE_KINDS,
    analyse,
    graph_notes,
    scopes_overlap,
)
from tests.kit.foldkit import LEAD, Log, source, team

P, IP, C = "pending", "in_progress", "completed"
#: (time, status, owner, blockers, scopes) per move.
Move = tuple[int, str, str | None, tuple[str, ...], tuple[str, ...]]


def _view(task_id: str, moves: list[Move]) -> TaskView:
    history = tuple(
        HistoryEntry(t, "updated", n + 1, status, None, None, owner, blocked, scopes)
        for n, (t, status, owner, blocked, scopes) in enumerate(moves)
    )
    last = moves[-1]
    return TaskView(
        task_id, len(moves), task_id, None, last[1], last[3], last[4], last[2], None, history
    )


def _kinds(graph: Any, task_id: str) -> list[tuple[str, int, int | None, tuple[str, ...]]]:
    return [(p.kind, p.start, p.end, p.blockers) for p in graph.phases[task_id]]


def test_a_blockers_completion_ends_the_blocked_phase_and_its_reopening_re_blocks() -> None:
    graph = analyse(
        [
            _view("task-1", [(10, P, None, (), ()), (20, IP, "ana", (), ()),
                             (30, C, "ana", (), ()), (50, P, None, (), ()),
                             (60, IP, "bo", (), ()), (70, C, "bo", (), ())]),
            _view("task-2", [(12, P, None, ("task-1",), ())]),
        ]
    )  # fmt: skip
    assert _kinds(graph, "task-2") == [
        ("blocked", 12, 30, ("task-1",)),
        ("ready", 30, 50, ()),
        ("blocked", 50, 70, ("task-1",)),
        ("ready", 70, None, ()),
    ]
    assert [(p.kind, p.owner_id) for p in graph.phases["task-1"]] == [
        ("ready", None), ("in-progress", "ana"), (C, None), ("ready", None),
        ("in-progress", "bo"), (C, None),
    ]  # fmt: skip


def test_blocked_names_the_blockers_still_open() -> None:
    graph = analyse(
        [
            _view("a", [(1, P, None, (), ()), (5, C, "x", (), ())]),
            _view("b", [(1, P, None, (), ()), (9, C, "x", (), ())]),
            _view("c", [(2, P, None, ("a", "b"), ()), (12, IP, "y", ("a", "b"), ())]),
        ]
    )  # fmt: skip
    assert _kinds(graph, "c") == [
        ("blocked", 2, 5, ("a", "b")),
        ("blocked", 5, 9, ("b",)),
        ("ready", 9, 12, ()),
        ("in-progress", 12, None, ()),
    ]


def test_overlaps_are_drawn_on_both_tasks_each_naming_the_other() -> None:
    graph = analyse(
        [
            _view("a", [(1, IP, "x", (), ("app/export",)), (20, C, "x", (), ())]),
            _view("b", [(5, IP, "y", (), ("app/export/csv.py",)),
                        (30, C, "y", (), ())]),
            _view("c", [(5, IP, "z", (), ("app/exporter",))]),  # not a path prefix
        ]
    )  # fmt: skip
    (on_a,) = graph.overlaps["a"]
    (on_b,) = graph.overlaps["b"]
    assert (on_a.task_id, on_a.start, on_a.end, on_a.scopes) == ("b", 5, 20, ("app/export",))
    assert (on_b.task_id, on_b.start, on_b.end, on_b.scopes) == ("a", 5, 20, ("app/export/csv.py",))
    assert "c" not in graph.overlaps
    assert scopes_overlap("a/b", "a") and not scopes_overlap("a/bc", "a/b")


def test_the_critical_path_follows_the_blocker_that_completed_last() -> None:
    # a(done 10) -> c ; b(done 40) -> c(done 60) -> e(done 90) ; d(done 95) is independent
    graph = analyse(
        [
            _view("a", [(0, P, None, (), ()), (10, C, "x", (), ())]),
            _view("b", [(1, P, None, (), ()), (40, C, "x", (), ())]),
            _view("c", [(2, P, None, ("a", "b"), ()), (60, C, "x", ("a", "b"), ())]),
            _view("d", [(3, P, None, (), ()), (80, C, "x", (), ())]),
            _view("e", [(4, P, None, ("c", "d"), ()), (90, C, "x", ("c", "d"), ())]),
            _view("f", [(5, P, None, ("e",), ())]),
        ]
    )  # fmt: skip
    path = graph.critical_path
    assert path is not None
    # e's blockers: c (60) and d (80): d completed last; d has no blockers.
    assert path.task_ids == ("d", "e") and (path.start, path.end) == (3, 90)


def test_a_cycle_a_missing_blocker_and_a_self_block_are_notes_never_errors() -> None:
    graph = analyse(
        [
            _view("a", [(1, P, None, ("b",), ())]),
            _view("b", [(1, P, None, ("a", "ghost"), ())]),
            _view("c", [(1, C, "x", ("c",), ())]),
        ]
    )
    assert sorted(graph.cyclic) == ["a", "b"] and graph.missing_blockers == {"ghost": ["b"]}
    assert graph.self_blocked == ["c"]
    notes = " ".join(graph_notes(graph))
    assert "ghost" in notes and "cycle" in notes and "c list themselves" in notes
    assert graph.critical_path is not None and graph.critical_path.task_ids == ("c",)


# -- generated boards ------------------------------------------------------------------

IDS = ("t1", "t2", "t3", "t4")
STATUSES = ("pending", "in_progress", "completed", "deleted")


@st.composite
def _board(draw: st.DrawFn) -> list[TaskView]:
    views = []
    for task_id in IDS[: draw(st.integers(1, len(IDS)))]:
        n = draw(st.integers(1, 6))
        times = sorted(draw(st.lists(st.integers(0, 40), min_size=n, max_size=n)))
        moves: list[Move] = []
        for t in times:
            status = draw(st.sampled_from(STATUSES))
            owner = draw(st.sampled_from(("x", "y"))) if status == "in_progress" else None
            blocked = tuple(draw(st.lists(st.sampled_from((*IDS, "zz")), max_size=3)))
            scopes = tuple(draw(st.lists(st.sampled_from(("a", "a/b", "c")), max_size=2)))
            moves.append((t, status, owner, blocked, scopes))
        views.append(_view(task_id, moves))
    return views


def _state_at(view: TaskView, t: int) -> HistoryEntry | None:
    """The task's last move at or before ``t`` (a direct reading, no bisecting)."""
    found = None
    for h in sorted(view.history, key=lambda h: (h.time, h.revision)):
        if h.time <= t:
            found = h
    return found


def _direct_kind(views: dict[str, TaskView], view: TaskView, t: int) -> str:
    """docs/host-contract.md §7 read directly: ready = pending and every blocker completed."""
    state = _state_at(view, t)
    assert state is not None
    if state.status in ("completed", "deleted"):
        return state.status
    if state.status == "in_progress":
        return "in-progress"
    for blocker in state.blocked_by:
        other = views.get(blocker)
        then = _state_at(other, t) if other else None
        if then is None or then.status != "completed":
            return "blocked"
    return "ready"


@settings(max_examples=200, deadline=None)
@given(_board())
def test_phases_partition_each_life_and_agree_with_the_ready_rule(views: list[TaskView]) -> None:
    graph = analyse(views)
    by_id = {v.id: v for v in views}
    times = sorted({h.time for v in views for h in v.history})
    for view in views:
        phases = graph.phases[view.id]
        assert phases[0].start == min(h.time for h in view.history)
        for before, after in pairwise(phases):
            assert before.end == after.start and before.start < before.end  # no gap, no overlap
        assert phases[-1].end is None
        assert all(p.kind in PHASE_KINDS for p in phases)
        for t in times:
            if t < phases[0].start:
                continue
            (here,) = [p for p in phases if p.start <= t and (p.end is None or t < p.end)]
            assert here.kind == _direct_kind(by_id, view, t), (view.id, t)
    for task_id, found in graph.overlaps.items():
        for o in found:
            assert any(
                back.task_id == task_id and (back.start, back.end) == (o.start, o.end)
                for back in graph.overlaps[o.task_id]
            )


# -- hostile payloads through the whole timeline -----------------------------------------

_junk = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=12,
)  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(("task-1", "task-2")), st.integers(0, 4), _junk, _junk,
                          st.sampled_from((*STATUSES, "weird"))), max_size=8))  # fmt: skip
def test_hostile_blocked_by_and_write_scopes_never_raise(rows: list[Any]) -> None:
    log = Log()
    for n, (task_id, revision, blocked, scopes, status) in enumerate(rows):
        task = {"id": task_id, "revision": revision, "subject": "s", "description": "d",
                "status": status, "blockedBy": blocked, "writeScopes": scopes}  # fmt: skip
        log.add("team/task", {"version": 2, "teamId": LEAD, "task": task}, n)
    huge = {"id": "task-3", "revision": 1, "subject": "s", "description": "d", "status": "pending",
            "blockedBy": [f"task-{i}" for i in range(5000)] + ["task-3"],
            "writeScopes": ["a"] * 5000}  # fmt: skip
    log.add("team/task", {"version": 2, "teamId": LEAD, "task": huge}, 99)
    out = build_timeline(team(source(LEAD, log)))
    orjson.dumps(out)
    for task in out["tasks"]:
        assert all(p["kind"] in PHASE_KINDS for p in task["phases"])


# -- the generator's boards ---------------------------------------------------------------


@pytest.mark.parametrize(("shape", "seed"), [("story", 11), ("full", 12), ("story", 13)])
def test_phases_agree_with_the_ready_rule_on_generated_boards(
    tmp_path: Path, shape: str, seed: int
) -> None:
    spec = generate_team(tmp_path, seed=seed, shape=shape)
    lead = next(m for m in spec.members if m.role == "lead")
    assert lead.rel_path is not None
    fold = fold_lane(LogReader(tmp_path / lead.rel_path).read_new().events)
    views = replay_tasks(fold.tasks.items(), CallIndex.build([]), lambda s: None, None).tasks
    assert {v.id for v in views} == {t.id for t in spec.tasks}
    graph = analyse(views)
    by_id = {v.id: v for v in views}
    times = sorted({h.time for v in views for h in v.history})
    kinds: set[str] = set()
    for view in views:
        phases = graph.phases[view.id]
        for before, after in pairwise(phases):
            assert before.end == after.start
        for t in times:
            here = [p for p in phases if p.start <= t and (p.end is None or t < p.end)]
            if t < phases[0].start:
                assert here == []
                continue
            (phase,) = here
            assert phase.kind == _direct_kind(by_id, view, t), (view.id, t)
            kinds.add(phase.kind)
    assert {"blocked", "ready", "in-progress", "completed"} <= kinds
