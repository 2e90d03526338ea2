"""A poll after an append lays out what changed: what the board reuses (a lane's reads
and marks by span object, chunks by the very bars and marks they hold, task rows and
task facts by the task's bytes, lane bounds and message counts per lane) gives what a
cold layout gives, and every memo keeps to its bounds."""

from __future__ import annotations

import asyncio
import functools
import operator
import re
import statistics
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from dsh_task_gantt import host, panel
from dsh_task_gantt.board import (
    detail,
    geometry,
    message_count,
    pieces,
    task_facts,
    view_model,
    where_time,
)
from dsh_task_gantt.board.model import Party, Tone, TurnBar, View
from dsh_task_gantt.board.view_model import layout_board
from dsh_task_gantt.fixturegen import STORY_TEAM, LiveTeam, generate_team
from dsh_task_gantt.logs.persistence import DirectorySessionPersistence
from dsh_task_gantt.memo import Carried, Memo, clear_memos
from dsh_task_gantt.provider import TimelineResult
from dsh_task_gantt.service import TimelineService
from dsh_task_gantt.timeline import activity, identity
from dsh_task_gantt.web import GanttApp
from tests.kit.boardteams import PREFIX, make_app

#: The board's own memos (module, name): swapped for empty ones, they give a cold layout.
BOARD_MEMOS: list[tuple[Any, str]] = [
    (view_model, "_LANE_READS"),
    (view_model, "_TASK_ROWS"),
    (view_model, "_TASK_ROW_SETS"),
    (message_count, "LANE_MESSAGES"),
    (message_count, "_COUNTS"),
    (message_count, "_TEAM_COUNTS"),
    (view_model, "_LIST_ENTRIES"),
    (view_model, "_MARK_ENTRIES"),
    (view_model, "_TURN_ENTRIES"),
    (detail, "_CHUNKS"),
    (detail, "_LANES_LAID"),
    (geometry, "_SPAN_BOUNDS"),
    (where_time, "_PHASE_SUMS"),
    (where_time, "_TEAM_SUMS"),
    (task_facts, "_FACTS"),
    (task_facts, "_TEAM_FACTS"),
    (activity, "_SUMMARIES"),
    (activity, "_LAST_SUMMARY"),
]


@contextmanager
def cold_memos() -> Iterator[None]:
    """Every board memo empty for the duration (the warm ones are put back after)."""
    kept = [(module, name, getattr(module, name)) for module, name in BOARD_MEMOS]
    try:
        for module, name, memo in kept:
            if isinstance(memo, Carried):
                setattr(module, name, Carried(memo.lanes, memo.versions))
                continue
            fresh: Memo[Any, Any] = Memo(
                memo._max_entries,
                max_weight=memo._max_weight,
                weight=memo._weight,
                lru=memo._lru,
                per_slot=memo._per_slot,
            )
            setattr(module, name, fresh)
        yield
    finally:
        for module, name, memo in kept:
            setattr(module, name, memo)


def _builds_after_appends(
    live: LiveTeam,
    service: TimelineService,
    clock: list[int],
    lead: str,
    ticks: int,
    *,
    gap_every: int,
) -> Iterator[TimelineResult]:
    """The team's build after each of ``ticks`` appends 2 s apart, every ``gap_every``-th
    after a 5-minute gap (the live extent's end crosses a step)."""
    for n in range(ticks):
        clock[0] += 5 * 60_000 if n % gap_every == gap_every - 1 else 2_000
        live.tick(clock[0])
        result = asyncio.run(service.timeline(lead))
        assert result is not None
        yield result


class Replay:
    """A provider answering with the result it is handed (the very build, so a warm
    panel sees the same objects the service would give it)."""

    def __init__(self) -> None:
        self.result: TimelineResult | None = None

    async def timeline(self, session_id: str) -> TimelineResult | None:
        return self.result

    async def message(self, session_id: str, message_id: str) -> Mapping[str, Any] | None:
        return None

    async def current_etag(self, session_id: str) -> str | None:
        return self.result.etag if self.result is not None else None


HOUR_MS = 3_600_000
#: The views the pollers of benchmarks/bench_soak.py hold, a zoomed one following now,
#: and the list with turns.
VIEWS: list[dict[str, str]] = [
    {"w": "280", "follow": "1"},
    {"w": "1160", "follow": "1"},
    {"w": "280", "at": "MIDDLE"},
    {"w": "1160", "follow": "1", "list": "1"},
    {"w": "1160", "list": "1", "turns": "1"},
    {"w": "600", "follow": "1", "from": "ZOOM_FROM", "to": "NOW"},
]


def _untokened(html: str) -> str:
    """The answer without what names it (its token, when it was drawn)."""
    return re.sub(r'id="board-(token|drawn)" name="\w+" value="[^"]*"', "", html)


def _views(result: TimelineResult, middle: int) -> list[dict[str, str]]:
    now = int(result.data["generatedAt"])
    fill = {"MIDDLE": str(middle), "ZOOM_FROM": str(now - 10 * 60_000), "NOW": str(now)}
    return [{k: fill.get(v, v) for k, v in view.items()} for view in VIEWS]


@pytest.fixture()
def story(tmp_path: Path) -> tuple[LiveTeam, TimelineService, list[int], str, int]:
    spec = generate_team(tmp_path, seed=11, shape="story", name=STORY_TEAM, live=True)
    live = LiveTeam(tmp_path, spec)
    clock = [spec.last_event_time + 1_000]
    service = TimelineService(
        {host.SESSION_PERSISTENCE: DirectorySessionPersistence(tmp_path)}.get,
        clock=lambda: clock[0],
    )
    middle = (spec.start_ms + spec.last_event_time) // 2
    return live, service, clock, spec.lead_id, middle


def test_polls_after_appends_draw_what_a_cold_panel_draws(
    story: tuple[LiveTeam, TimelineService, list[int], str, int],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each append (a step, a message, a prompt, a task move, a teammate's turn), and
    now and then a long gap (the live edge crosses a step: every percentage moves): a
    warm panel's board, in every view, is byte for byte a cold panel's."""
    live, service, clock, lead, middle = story
    # The lanes' "in a turn for …" read the panel's clock: the team's, here.
    monkeypatch.setattr(panel, "now_ms", lambda: clock[0])
    replay = Replay()
    warm = TestClient(make_app(replay))
    clear_memos()
    for n, result in enumerate(_builds_after_appends(live, service, clock, lead, 14, gap_every=5)):
        replay.result = result
        views = _views(result, middle)
        answers = [
            warm.get(f"{PREFIX}/panel/board", params={"session": lead, **view}).text
            for view in views
        ]
        with cold_memos():
            cold = TestClient(make_app(replay))
            for view, answer in zip(views, answers, strict=True):
                fresh = cold.get(f"{PREFIX}/panel/board", params={"session": lead, **view})
                assert _untokened(answer) == _untokened(fresh.text), (n, view)
    clear_memos()


def test_a_warm_layout_equals_a_cold_one_and_reuses_what_did_not_change(
    story: tuple[LiveTeam, TimelineService, list[int], str, int],
) -> None:
    """The boards are equal values; the marks of spans seen before, the chunks they fall
    in and the rows of tasks that did not move are the very objects of the last layout."""
    live, service, clock, lead, _ = story
    clear_memos()
    last = None
    reused_chunks = reused_rows = 0
    for n in range(10):
        clock[0] += 7 * 60_000 if n == 6 else 2_000
        live.tick(clock[0])
        result = asyncio.run(service.timeline(lead))
        assert result is not None
        now = int(result.data["generatedAt"])
        zoomed = View(start=now - 600_000, end=now, follow=True, track_px=1160)
        boards = [layout_board(result.data, view) for view in (View(track_px=280), zoomed)]
        with cold_memos():
            for view, warm in zip((View(track_px=280), zoomed), boards, strict=True):
                assert warm == layout_board(result.data, view), (n, view)
        board = boards[0]
        if last is not None:
            before = {c.dom_id: c for lane in last.lanes for c in lane.chunks}
            reused_chunks += sum(
                before.get(c.dom_id) is c for lane in board.lanes for c in lane.chunks
            )
            reused_rows += sum(a is b for a, b in zip(last.tasks, board.tasks, strict=False))
        last = board
    assert reused_chunks > 0 and reused_rows > 0
    clear_memos()


def test_a_layout_keyed_by_the_tasks_wire_generations_equals_one_by_their_bytes(
    story: tuple[LiveTeam, TimelineService, list[int], str, int],
) -> None:
    """The panel keys the tasks by their wire generations: over appends that move tasks
    and run them on, and long gaps (the extent's end crosses a step), its board (the
    task rows, where the time went, the extent) equals a cold layout that reads each
    task's bytes, at each width and again at the next poll of the same build; the rows
    of the tasks that did not move are the very rows of the poll before."""
    live, service, clock, lead, _ = story
    clear_memos()
    seen: set[tuple[int, ...]] = set()
    last: tuple[Any, ...] = ()
    reused = 0
    for n, result in enumerate(_builds_after_appends(live, service, clock, lead, 14, gap_every=5)):
        versions = panel._task_versions(result)
        assert versions is not None and len(versions) == len(result.data["tasks"])
        seen.add(versions)
        now = int(result.data["generatedAt"])
        zoomed = View(start=now - 600_000, end=now, follow=True, track_px=1160)
        for view in (View(track_px=280), zoomed, View(track_px=280)):
            plan = view_model.plan_board(result.data, view, versions)
            assert isinstance(plan, view_model.BoardPlan)
            lanes = tuple(plan.lane_row(i) for i in range(len(plan.lanes_raw)))
            warm = view_model.finish_board(plan, lanes)
            with cold_memos():
                assert warm == layout_board(result.data, view), (n, view)
        reused += sum(a is b for a, b in zip(last, warm.tasks, strict=False))
        last = warm.tasks
    assert len(seen) > 2 and reused > 0  # tasks moved, and rows were reused
    clear_memos()


def _span(kind: str, time: int, end: int | None, n: int, **extra: Any) -> dict[str, Any]:
    who = {"kind": "member", "id": "a", "name": "a"}
    return {
        "kind": kind,
        "id": f"{kind}-{n}",
        "time": time,
        "end": end,
        "from": who,
        "to": {"kind": "member", "id": "b", "name": "b"} if kind == "message" else None,
        "direction": "outgoing" if kind == "message" else None,
        "preview": f"p{n}",
        "sessionId": "s-a",
        **extra,
    }


def _timeline(spans: list[dict[str, Any]], now: int) -> dict[str, Any]:
    lanes = [
        {"id": "a", "name": "a", "sessionId": "s-a", "kind": "lead", "index": 0,
         "color": {"slot": 0}, "spans": spans},
        {"id": "b", "name": "b", "sessionId": "s-b", "kind": "teammate", "index": 1,
         "color": {"slot": 1}, "spans": []},
    ]  # fmt: skip
    return {
        "live": True,
        "generatedAt": now,
        "range": {"start": 0, "end": None},
        "lanes": lanes,
        "tasks": [],
    }


def test_a_lane_read_again_takes_new_spans_a_closed_turn_and_a_prompt_drawn_afresh() -> None:
    """The same span objects keep their marks; an open turn that closed (a new object)
    and a prompt drawn afresh (an equal new object) are read as what they now are."""
    clear_memos()
    spans = [_span("turn", 1_000 * n, 1_000 * n + 500, n) for n in range(0, 40, 2)]
    spans += [_span("message", 1_000 * n + 100, None, n, deliveredAt=None) for n in range(40)]
    spans += [_span("user-prompt", 30_500, None, 99), _span("turn", 41_000, None, 100)]
    first = layout_board(_timeline(spans, 42_000), View())
    again = [dict(s) if s["kind"] == "user-prompt" else s for s in spans[:-1]]
    again += [_span("turn", 41_000, 41_900, 100), _span("message", 41_950, None, 101)]
    # A message delivered: a new span, the same id.
    at = next(i for i, span in enumerate(again) if span["id"] == "message-39")
    again[at] = dict(again[at], deliveredAt=40_000)
    # Read at the same "now" (the extent is the same: the marks' positions hold).
    second = layout_board(_timeline(again, 42_000), View())
    assert (second.extent_start, second.extent_end) == (first.extent_start, first.extent_end)
    with cold_memos():
        assert second == layout_board(_timeline(again, 42_000), View())
    lane_before, lane = first.lanes[0], second.lanes[0]
    kept = {m.msg_id: m for m in lane_before.marks}
    assert sum(kept.get(m.msg_id) is m for m in lane.marks) > 30
    assert [t.open for t in lane.turns][-1] is False
    delivered = "message-39"
    was = next(m for m in lane_before.marks if m.msg_id == delivered)
    assert was.pending and not next(m for m in lane.marks if m.msg_id == delivered).pending
    clear_memos()


_EDITS = st.sampled_from(("append", "copy", "change", "insert", "close", "drop", "shuffle"))


@settings(max_examples=60, deadline=None)
@given(
    edits=st.lists(st.tuples(_EDITS, st.integers(0, 10_000)), min_size=1, max_size=8),
    now_steps=st.lists(st.sampled_from((0, 0, 500, 400_000)), min_size=8, max_size=8),
)
def test_a_lane_laid_out_after_any_edits_equals_one_laid_out_cold(
    edits: list[tuple[str, int]], now_steps: list[int]
) -> None:
    """After each change to a lane's spans (new ones appended, one drawn afresh as an
    equal copy, one changed, an earlier message inserted, an open turn closed, one gone,
    the spans out of time order), with the extent's end moving or not, the warm layout
    (reusing the last one's reads, bars and marks) is the cold one."""
    clear_memos()
    spans = [_span("turn", 1_000 * n, 1_000 * n + 500, n) for n in range(0, 20, 2)]
    spans += [_span("message", 1_000 * n + 100, None, n) for n in range(20)]
    spans += [_span("user-prompt", 15_500, None, 99), _span("turn", 21_000, None, 100)]
    spans.sort(key=lambda span: span["time"])
    now, fresh = 22_000, 200
    layout_board(_timeline(spans, now), View())
    for (edit, at), step in zip(edits, now_steps, strict=False):
        spans = list(spans)
        place = at % len(spans) if spans else 0
        now += step
        fresh += 1
        if edit == "append":
            spans.append(_span("message", now - 100, None, fresh))
        elif edit == "copy" and spans:
            spans[place] = dict(spans[place])
        elif edit == "change" and spans:
            spans[place] = dict(spans[place], preview=f"changed {fresh}")
        elif edit == "insert":
            time = spans[place]["time"] if spans else 0
            spans.insert(place, _span("message", time, None, fresh))
        elif edit == "close":
            spans = [
                dict(s, end=now - 50) if s["end"] is None and s["kind"] == "turn" else s
                for s in spans
            ]
        elif edit == "drop" and spans:
            del spans[place]
        elif edit == "shuffle" and len(spans) > 2:
            spans[0], spans[-1] = spans[-1], spans[0]
        warm = layout_board(_timeline(spans, now), View())
        with cold_memos():
            assert warm == layout_board(_timeline(spans, now), View()), edit
    clear_memos()


def test_a_poll_at_a_later_now_redoes_the_task_rows_that_run_on_and_no_others(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The same tasks at a later "now" (the extent's end where it was): only the rows
    that reach now are made again, and which rows those are is not asked of every row
    of the day again. The rows equal cold ones."""
    clear_memos()
    spans = [_span("turn", 1_000, 2_000, 0)]
    done = [
        {"id": f"t{n}", "subject": f"task {n}", "status": "completed", "ownerName": "a",
         "history": [
             {"time": 1_000 + n, "action": "created", "status": "pending", "actor": "a"},
             {"time": 2_000 + n, "action": "completed", "status": "completed", "actor": "a"},
         ]}
        for n in range(300)
    ]  # fmt: skip
    running = {"id": "open", "subject": "open", "status": "in_progress", "ownerName": "a",
               "history": [{"time": 3_000, "action": "claimed", "status": "in_progress",
                            "actor": "a"}]}  # fmt: skip
    timeline = dict(_timeline(spans, 60_000), tasks=[*done, running])
    first = layout_board(timeline, View())
    asked: list[Any] = []
    runs_on = view_model._runs_on
    monkeypatch.setattr(view_model, "_runs_on", lambda row: asked.append(row) or runs_on(row))
    later = layout_board(dict(timeline, generatedAt=60_500), View())
    assert later.extent_end == first.extent_end and later.open_t != first.open_t
    assert all(map(operator.is_, first.tasks[:300], later.tasks[:300]))
    assert later.tasks[300] is not first.tasks[300]
    assert len(asked) <= 1, len(asked)  # the open row's, put in the row memo
    with cold_memos():
        assert later == layout_board(dict(timeline, generatedAt=60_500), View())
    clear_memos()


def _rows_made(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The places of the task rows made (looked up in the row memo or built) from now
    on, in order."""
    made: list[int] = []
    row_of = view_model._task_row_of
    monkeypatch.setattr(
        view_model,
        "_task_row_of",
        lambda task, value, n, graph, plan: made.append(n) or row_of(task, value, n, graph, plan),
    )
    return made


def test_after_a_task_moved_only_its_row_is_made_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """A task moved (a new value) on the same board: its row is made again, the day's
    other rows are the last version's (not looked up one by one); the rows equal cold
    ones, and so do those of a version that moved another task back."""
    clear_memos()
    spans = [_span("turn", 1_000, 2_000, 0)]

    def task(n: int, status: str) -> dict[str, Any]:
        history = [
            {"time": 1_000 + n, "action": "created", "status": "pending", "actor": "a"},
            {"time": 2_000 + n, "action": "claimed", "status": "in_progress", "actor": "a"},
        ]
        if status == "completed":
            history.append(
                {"time": 3_000 + n, "action": "completed", "status": "completed", "actor": "a"}
            )
        return {"id": f"t{n}", "subject": f"task {n}", "status": status, "ownerName": "a",
                "history": history}  # fmt: skip

    tasks = [task(n, "in_progress" if n % 50 == 0 else "completed") for n in range(300)]
    timeline = dict(_timeline(spans, 60_000), tasks=tasks, rootSessionId="s-a")
    first = layout_board(timeline, View())
    made = _rows_made(monkeypatch)
    moved = list(tasks)
    moved[123] = dict(task(123, "completed"), subject="renamed")
    later = dict(timeline, tasks=moved, generatedAt=60_500)
    board = layout_board(later, View())
    assert board.extent_end == first.extent_end
    # The moved task's row, and those that run on to a later now (every 50th).
    assert sorted(made) == sorted({123, *range(0, 300, 50)}), made
    assert sum(map(operator.is_, first.tasks, board.tasks)) == 300 - len(made)
    with cold_memos():
        assert board == layout_board(later, View())
    back = dict(later, tasks=tasks, generatedAt=61_000)
    again = layout_board(back, View())
    with cold_memos():
        assert again == layout_board(back, View())
    clear_memos()


def test_after_a_blocker_completed_its_dependents_rows_are_made_again_and_no_others(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A task completes (its completion moves in the task graph): its row and the rows
    of the tasks it blocked (they draw the link from its completion) are made again,
    the day's others are the last version's; everything equals cold rows."""
    clear_memos()
    spans = [_span("turn", 1_000, 2_000, 0)]

    def task(n: int, done: bool, blocked_by: tuple[str, ...] = ()) -> dict[str, Any]:
        phases: list[dict[str, Any]] = [
            {"kind": "in-progress", "start": 2_000 + n, "end": 3_000 + n if done else None,
             "ownerId": "a"},
        ]  # fmt: skip
        if done:
            phases.append({"kind": "completed", "start": 3_000 + n, "end": None})
        if blocked_by:
            phases.insert(
                0, {"kind": "blocked", "start": 1_000, "end": 2_000 + n, "blockers": blocked_by}
            )
        return {"id": f"t{n}", "subject": f"task {n}", "status": "completed" if done
                else "in_progress", "ownerName": "a", "blockedBy": list(blocked_by),
                "phases": phases, "overlaps": [],
                "history": [{"time": 1_000 + n, "action": "created", "status": "pending",
                             "actor": "a"}]}  # fmt: skip

    def tasks(t5_done: bool) -> list[dict[str, Any]]:
        made = [task(n, n != 5 or t5_done) for n in range(300)]
        made[10] = task(10, True, ("t5",))
        made[11] = task(11, True, ("t5", "t7"))
        return made

    timeline = dict(_timeline(spans, 60_000), tasks=tasks(False), rootSessionId="s-a")
    timeline["criticalPath"] = {"taskIds": ["t1", "t2"], "start": 1_000, "end": 3_002}
    first = layout_board(timeline, View())
    made = _rows_made(monkeypatch)
    later = dict(timeline, tasks=tasks(True), generatedAt=60_500)
    # The critical path now runs through t20 instead of t2.
    later["criticalPath"] = {"taskIds": ["t1", "t20"], "start": 1_000, "end": 3_020}
    board = layout_board(later, View())
    assert board.extent_end == first.extent_end
    # t5 itself, the two it blocked, the two whose place on the critical path changed.
    assert sorted(made) == [2, 5, 10, 11, 20], made
    assert sum(map(operator.is_, first.tasks, board.tasks)) == 300 - 5
    with cold_memos():
        assert board == layout_board(later, View())
    clear_memos()


def test_a_row_reused_after_the_extent_end_moved_is_a_fresh_one() -> None:
    """A finished task's row laid out for an earlier extent end is moved (only its
    percentages), and equals the row laid out afresh."""
    clear_memos()
    spans = [_span("turn", 1_000, 2_000, 0)]
    timeline = _timeline(spans, 60_000)
    timeline["tasks"] = [
        {"id": "t1", "subject": "one", "status": "completed", "ownerName": "a",
         "history": [
             {"time": 1_500, "action": "created", "status": "pending", "actor": "a"},
             {"time": 2_500, "action": "claimed", "status": "in_progress", "actor": "a"},
             {"time": 9_000, "action": "completed", "status": "completed", "actor": "a"},
         ]},
    ]  # fmt: skip
    early = layout_board(timeline, View())
    later = layout_board(dict(timeline, generatedAt=600_000), View())
    assert early.extent_end != later.extent_end
    with cold_memos():
        assert later == layout_board(dict(timeline, generatedAt=600_000), View())
    clear_memos()


def test_a_live_edge_that_moves_keeps_every_mark_and_chunk_of_a_lane() -> None:
    """Following now, the extent's end moves at every step of the live edge: the
    lane's marks and chunks are placed from the extent's start, so they are the very
    same objects after it moved (before, every mark was made again and every chunk it
    fell in laid out and rendered again, all lanes at once), and equal a cold layout."""
    clear_memos()
    spans = [_span("turn", 1_000 * n, 1_000 * n + 500, n) for n in range(0, 40, 2)]
    spans += [_span("message", 1_000 * n + 100, None, n, deliveredAt=1_000 * n + 200)
              for n in range(40)]  # fmt: skip
    early = layout_board(_timeline(spans, 60_000), View())
    later = layout_board(_timeline(spans, 63_000), View())
    assert early.extent_end != later.extent_end
    lane_early, lane_later = early.lanes[0], later.lanes[0]
    assert len(lane_later.marks) == 40
    assert all(map(operator.is_, lane_early.marks, lane_later.marks))
    assert all(map(operator.is_, lane_early.chunks, lane_later.chunks))
    with cold_memos():
        assert later == layout_board(_timeline(spans, 63_000), View())
    clear_memos()


def _visits(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A counter of the items the identity passes visit (their ``is_not`` calls)."""
    visited = [0]

    def is_not(a: Any, b: Any) -> bool:
        visited[0] += 1
        return a is not b

    monkeypatch.setattr(identity, "is_not", is_not)
    return visited


def test_a_poll_after_an_append_visits_what_changed_not_the_lanes_day(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """After an append to a long lane whose maker said how much of its list it kept (as
    timeline/spans.py does), each width's layout compares the lane's versions (its
    spans, bars and marks: the lane read, chunk_lane, the message count) from the
    append on: the items visited do not grow with the lane's history (before, 3,504
    for a lane of 1,500 spans and 14,004 for 6,000). The layouts equal cold ones."""
    clear_memos()
    visited = _visits(monkeypatch)
    costs = []
    for length in (1_000, 4_000):
        clear_memos()
        spans = [_span("turn", 1_000 * n, 1_000 * n + 500, n) for n in range(0, length, 2)]
        spans += [_span("message", 1_000 * n + 100, None, n) for n in range(length)]
        spans.sort(key=lambda span: span["time"])
        spans.append(_span("turn", 1_000 * length, None, length))  # open: runs to now
        now = 1_000 * length + 5_000
        widths = (View(follow=True, track_px=400), View(follow=True, track_px=1280))
        for view in widths:
            layout_board(_timeline(spans, now), view)
        # The append: the open turn closed (a new object), a message after it.
        again = [
            *spans[:-1],
            _span("turn", 1_000 * length, now - 100, length),
            _span("message", now - 50, None, length + 1),
        ]
        identity.note_head(spans, again, len(spans) - 1)
        visited[0] = 0
        boards = [layout_board(_timeline(again, now + 1_000), view) for view in widths]
        costs.append(visited[0])
        with cold_memos():
            for board, view in zip(boards, widths, strict=True):
                assert board == layout_board(_timeline(again, now + 1_000), view)
    short, long = costs
    assert long <= short + 8 and long < 200, costs
    clear_memos()


# ---------------------------------------------------------------------------
# bounds


def _read(n: int) -> Any:
    return view_model._LaneRead((0, ()), (), ["skip"] * n, [], [], (), [], [], True, {})


def _bars(n: int) -> Any:
    return view_model._BarsHeld(_read(0), (0, 0, 0), [None] * n)


def _laid(n: int) -> Any:
    bar = TurnBar(0, 1, False, 0.0, 0.001, 1)
    chunk = detail.LaneChunk("c", 0, (), ())
    return (detail._ChunkLaid((bar,) * n, (), (), 1, chunk),)


@functools.lru_cache(maxsize=2)
def _messages(n: int) -> message_count.LaneMessages:
    """A lane's messages naming ``n`` keys (made once: a lane of ``n`` marks)."""
    mark = view_model.Mark("m", "", "sent", "", 0.0, 0, 0, "", _TONE, 0.0, _PARTY, None, "", "")
    return message_count.read_marks([replace(mark, msg_id=str(k)) for k in range(n)])


#: The memos whose values grow with a lane's history, and a value of weight ``n``.
WEIGHED: list[tuple[str, Memo[Any, Any], Callable[[int], Any]]] = [
    ("lane reads", view_model._LANE_READS, _read),
    ("lane bars", view_model._BARS_HELD, _bars),
    ("chunks", detail._CHUNKS, _laid),
    ("lane bounds", geometry._SPAN_BOUNDS, lambda n: (None, n, (), ())),
    ("list entries", view_model._LIST_ENTRIES, lambda n: (None,) * n),
    (
        "lane messages",
        message_count.LANE_MESSAGES,
        lambda n: _messages(n),
    ),
]
#: The memos of small values, bounded by entries.
COUNTED: list[tuple[str, Memo[Any, Any]]] = [
    ("task rows", view_model._TASK_ROWS),
    ("phase sums", where_time._PHASE_SUMS),
    ("task facts", task_facts._FACTS),
    ("team task facts", task_facts._TEAM_FACTS),
    ("team phase sums", where_time._TEAM_SUMS),
    ("team task rows", view_model._TASK_ROW_SETS),
    ("message counts", message_count._COUNTS),
    ("team message counts", message_count._TEAM_COUNTS),
]


@pytest.mark.parametrize(("name", "m", "value"), WEIGHED, ids=[w[0] for w in WEIGHED])
def test_each_board_memo_of_history_sized_values_keeps_its_weight(
    name: str, m: Memo[Any, Any], value: Callable[[int], Any]
) -> None:
    assert m._max_weight is not None
    clear_memos()
    try:
        heavy = max(m._max_weight // 8, 1)
        for n in range(m._max_entries + 20):
            if m._family is not None:  # the chunks: keyed by their slot, one lane, scale n
                slot: tuple[Any, ...] = ("lane-0", 0, 0, n, (1, 1), "s-1")
                m.put(slot, value(heavy), slot=slot)
            else:
                m.put(("key", n), value(heavy), slot=("slot", n % 50))
            assert len(m) <= m._max_entries and m.weight <= m._max_weight
        assert len(m) <= 8
    finally:
        clear_memos()


@pytest.mark.parametrize(("name", "m"), COUNTED, ids=[c[0] for c in COUNTED])
def test_each_board_memo_of_small_values_keeps_its_entries(name: str, m: Memo[Any, Any]) -> None:
    clear_memos()
    try:
        for n in range(m._max_entries + 50):
            m.put(("key", n), n)
        assert len(m) == m._max_entries
    finally:
        clear_memos()


def test_a_chunk_keeps_its_last_versions_only() -> None:
    """A live chunk (its open turn grows at every poll) is laid out again each time: its
    older versions go, whatever room the memo has."""
    clear_memos()
    try:
        scale = detail.Scale(-10)
        for n in range(40):
            bar = TurnBar(0, 10 * n, True, 0.0, n / 100, None)
            detail.chunk_lane("lane-0", [bar], [], 0, scale, None)
        assert [len(versions) for _, versions in detail._CHUNKS.items()] == [
            detail.CHUNK_VERSIONS_KEPT
        ]
    finally:
        clear_memos()


def test_a_lane_keeps_its_chunks_at_the_scales_it_was_last_drawn_at() -> None:
    """A live board's scale changes each time its extent doubles (and a zoom draws at
    others): a lane keeps its layouts at its SCALES_KEPT last scales, not one more set
    of every chunk per scale until the entry bound."""
    clear_memos()
    try:
        bars = [TurnBar(n * 1000, n * 1000 + 500, False, n, 0.5, n * 1000 + 500) for n in range(50)]
        exponents = range(-16, -6)
        for exponent in exponents:
            for owner in ("s-1", "s-2"):
                detail.chunk_lane("lane-0", bars, [], 0, detail.Scale(exponent), None, owner)
        kept: dict[str, set[int]] = {}
        for key, _ in detail._CHUNKS.items():
            kept.setdefault(key[5], set()).add(key[3].exponent)
        newest = set(list(exponents)[-detail.SCALES_KEPT :])
        assert kept == {"s-1": newest, "s-2": newest}
    finally:
        clear_memos()


def test_the_panels_list_items_memo_keeps_its_entries() -> None:
    """The list's rendered items, by the very item: a day of polls keeps at most its
    bound (the items of pages no view shows any more go first)."""
    m = make_app(Replay()).panel._list_pieces
    for n in range(m._max_entries + 50):
        m.put(n, n)  # type: ignore[arg-type]
    assert len(m) == m._max_entries


_TONE = Tone("c0", 0)
_PARTY = Party("a", _TONE)
_MARK_KINDS = st.sampled_from(("sent", "received", "prompt", "system"))


_MARKS = st.lists(st.tuples(st.sampled_from("abcdefg"), _MARK_KINDS), max_size=12)


def _expected_count(lanes: list[list[tuple[str, str]]]) -> int:
    first: dict[str, str] = {}
    for marks in reversed(lanes):
        seen: dict[str, str] = {}
        for key, kind in marks:
            seen.setdefault(key, kind)
        first.update(seen)
    sent = {key for marks in lanes for key, kind in marks if kind == "sent"}
    return sum(1 for key, kind in first.items() if kind != "prompt" or key in sent)


@settings(max_examples=200, deadline=None)
@given(
    lanes=st.lists(_MARKS, max_size=5),
    edits=st.lists(
        st.tuples(st.integers(0, 4), st.integers(0, 12), st.integers(0, 3), _MARKS), max_size=4
    ),
)
def test_the_message_count_is_each_message_once_and_no_prompt(
    lanes: list[list[tuple[str, str]]],
    edits: list[tuple[int, int, int, list[tuple[str, str]]]],
) -> None:
    """A message drawn on two lanes counts once; a key counts as its sent mark's kind
    when it has one, else as its first mark's (the earliest lane's): a prompt is no
    message. After any edits of a lane (its marks from some place on replaced, the
    marks before it kept as they were), the count carried on from the lane's last
    version is the count made afresh."""
    clear_memos()
    made_lanes = [
        [
            view_model.Mark(f"m{n}", key, kind, "", 0, 0, "", _TONE, 0.0, _PARTY, None, "", "")
            for n, (key, kind) in enumerate(marks)
        ]
        for marks in lanes
    ]

    def rows() -> list[Any]:
        return [
            SimpleNamespace(marks=tuple(m), lane_id=f"lane-{n}", dom_id="lane", messages=None)
            for n, m in enumerate(made_lanes)
        ]

    assert message_count.message_count(rows()) == _expected_count(lanes)
    for lane, at, dropped, added in edits:
        if not lanes:
            break
        lane %= len(lanes)
        at = min(at, len(lanes[lane]))
        kept = lanes[lane][:at]
        lanes[lane] = kept + added + lanes[lane][at + dropped :][: max(0, 12 - at - len(added))]
        tail = lanes[lane][at:]
        made_lanes[lane] = made_lanes[lane][:at] + [
            view_model.Mark(f"m{at + n}", key, kind, "", 0, 0, "", _TONE, 0.0, _PARTY, None, "", "")
            for n, (key, kind) in enumerate(tail)
        ]
        assert message_count.message_count(rows()) == _expected_count(lanes)
    clear_memos()


def test_a_count_after_an_append_adds_the_new_keys_to_the_last_counts_sets() -> None:
    """An append's count takes the team's last count's sets and adds the keys the
    append brought (a day of keys is not copied at each append); a board a poll behind,
    counted again once its count is forgotten, is counted afresh, right."""
    clear_memos()

    def mark(n: int, key: str, kind: str) -> Any:
        return view_model.Mark(f"m{n}", key, kind, "", 0, 0, "", _TONE, 0.0, _PARTY, None, "", "")

    lead = [mark(n, f"k{n}", "sent") for n in range(2_000)]
    member = [mark(n, f"k{n}", "received") for n in range(0, 2_000, 2)]

    def rows(*lanes: list[Any]) -> list[Any]:
        return [
            SimpleNamespace(marks=tuple(m), lane_id=f"lane-{n}", dom_id="lane", messages=None)
            for n, m in enumerate(lanes)
        ]

    old_rows = rows(lead, member)
    assert message_count.message_count(old_rows) == 2_000
    team = ("lane-0", "lane-1")
    before = message_count._TEAM_COUNTS.get(team)
    assert before is not None
    grown = [*lead, mark(2_000, "k2000", "sent"), mark(2_001, "p", "prompt")]
    assert message_count.message_count(rows(grown, member)) == 2_001
    after = message_count._TEAM_COUNTS.get(team)
    assert after is not None and after is not before and before.spent
    assert after.keys is before.keys and after.sent is before.sent
    # The older board's count, forgotten, is made again (not from the spent sets).
    message_count._COUNTS.clear()
    assert message_count.message_count(old_rows) == 2_000
    clear_memos()


def _fresh_panel(
    clock: list[int], monkeypatch: pytest.MonkeyPatch
) -> tuple[Replay, GanttApp, TestClient]:
    """A panel app over a replayed result, its clock the story's, every memo empty."""
    monkeypatch.setattr(panel, "now_ms", lambda: clock[0])
    replay = Replay()
    app = make_app(replay)
    clear_memos()
    return replay, app, TestClient(app)


def test_polls_over_appends_keep_a_few_versions_per_lane_not_one_per_append(
    story: tuple[LiveTeam, TimelineService, list[int], str, int],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The soak's views polled after each append, with long gaps (the extent's end
    crosses a step and every mark of every lane is replaced): the memos by a lane's very
    marks, bars or chunks, and the replay cursor's moments, hold each lane's (chunk's,
    moment's) last two versions, not one more per append until their entry bounds."""
    live, service, clock, lead, middle = story
    replay, app, client = _fresh_panel(clock, monkeypatch)
    lanes = 0
    for result in _builds_after_appends(live, service, clock, lead, 16, gap_every=4):
        replay.result = result
        lanes = len(result.data["lanes"])
        for view in _views(result, middle):
            client.get(f"{PREFIX}/panel/board", params={"session": lead, **view})
    assert 0 < len(view_model._MARK_ENTRIES) <= 2 * lanes
    assert 0 < len(view_model._TURN_ENTRIES) <= 2 * lanes
    assert 0 < len(message_count.LANE_MESSAGES) <= 2 * lanes
    assert 0 < len(geometry._SPAN_BOUNDS) <= 2 * lanes
    assert 0 < len(view_model._LIST_ENTRIES) <= 2 * len(result.data["tasks"])  # by task
    versions: dict[tuple[Any, ...], int] = {}
    for key, laid in detail._CHUNKS.items():  # lane, index, origin, scale, budgets
        versions[key[:4]] = versions.get(key[:4], 0) + len(laid)
    # A chunk: its live version only (every view at a scale draws the lane's one read).
    assert versions and max(versions.values()) == 1
    # The panel's markup of a chunk: the same, per chunk id and scale (two widths draw
    # two chunks of one id).
    drawn = app.panel._chunks._slots.values()
    assert drawn and max(map(len, drawn)) == 1
    # A lane's markup: its last two versions per scale it is drawn at.
    views = app.panel._lanes._slots.values()
    assert views and max(map(len, views)) <= 2
    assert len(app.panel._lanes) <= 2 * lanes * len(VIEWS)
    moments = app.panel._moments._moments.items()
    assert 0 < sum(1 for (_, at), _ in moments if at == middle) <= 2
    clear_memos()


def test_a_tasks_moves_keep_its_last_few_rows_not_one_per_move(
    story: tuple[LiveTeam, TimelineService, list[int], str, int],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Tasks move as the team works (each move is a new value, so a new row) and a task
    that runs on to now is drawn anew at each poll: the task rows' memo keeps each
    task's last TASK_ROW_VERSIONS rows and the panel its last TASK_ROW_VIEWS_KEPT
    renderings, not every one it ever had until the entry bounds (which filled for hours
    in the soak), and the board drawn from them is the cold one's."""
    live, service, clock, lead, middle = story
    replay, app, client = _fresh_panel(clock, monkeypatch)
    values_seen: dict[Any, set[Any]] = {}
    for result in _builds_after_appends(live, service, clock, lead, 60, gap_every=7):
        replay.result = result
        for task in result.data["tasks"]:
            values_seen.setdefault(task["id"], set()).add(orjson.dumps(task))
        for view in _views(result, middle)[:4]:
            client.get(f"{PREFIX}/panel/board", params={"session": lead, **view})
    # The story's tasks moved often enough to tell: one has had more rows than kept.
    assert max(map(len, values_seen.values())) > view_model.TASK_ROW_VERSIONS
    rows_by_task: dict[Any, int] = {}
    for key in view_model._TASK_ROWS._entries:
        _value, position, start, roster_key, _graph = key
        rows_by_task[(position, start, roster_key)] = (
            rows_by_task.get((position, start, roster_key), 0) + 1
        )
    assert rows_by_task and max(rows_by_task.values()) <= view_model.TASK_ROW_VERSIONS
    # And its rendered row: the views drawing it now and one behind, not one per poll
    # of a task that runs on to now.
    renderings = Counter(piece.id for _key, piece in app.panel._tasks.items())
    assert renderings and max(renderings.values()) <= panel.TASK_ROW_VIEWS_KEPT
    # The list's entries likewise: a turn that runs on is a new item at each poll.
    entries = Counter(piece.id for _key, piece in app.panel._list_pieces.items())
    assert entries and max(entries.values()) <= panel.LIST_ITEM_VERSIONS_KEPT
    # What the kept rows draw is what a cold panel draws.
    warm = client.get(f"{PREFIX}/panel/board", params={"session": lead, "w": "280", "follow": "1"})
    clear_memos()
    cold = client.get(f"{PREFIX}/panel/board", params={"session": lead, "w": "280", "follow": "1"})
    assert _untokened(warm.text) == _untokened(cold.text)
    clear_memos()


def test_a_list_poll_after_an_append_renders_the_entries_that_changed_not_its_page(
    story: tuple[LiveTeam, TimelineService, list[int], str, int],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two views with the list open (its newest page, up to 50 entries) polled after
    each append: the rendered entries kept (LIST_ITEM_CACHE_SIZE) hold both pages, so a
    poll renders the entries an append changed or added, not the pages again."""
    live, service, clock, lead, _middle = story
    replay, _app, client = _fresh_panel(clock, monkeypatch)
    rendered: list[int] = []
    made = pieces.Piece.of.__func__  # type: ignore[attr-defined]

    def counted(cls: type[pieces.Piece], piece_id: str, html: str) -> pieces.Piece:
        if piece_id.startswith("li-"):  # a list entry's element
            rendered[-1] += 1
        return made(cls, piece_id, html)  # type: ignore[no-any-return]

    monkeypatch.setattr(pieces.Piece, "of", classmethod(counted))
    lists = [{"w": "1160", "follow": "1", "list": "1"}, {"w": "600", "follow": "1", "list": "1"}]
    for result in _builds_after_appends(live, service, clock, lead, 12, gap_every=100):
        replay.result = result
        rendered.append(0)
        for view in lists:
            page = client.get(f"{PREFIX}/panel/board", params={"session": lead, **view})
            assert page.status_code == 200
    assert rendered[0] >= 40, rendered  # the first polls render the pages (~45 entries)
    # Then a poll renders what changed: a median of ~15 entries for the two views (with
    # a cache smaller than their pages, 16 entries, ~95: every entry again).
    assert statistics.median(rendered[1:]) <= 25, rendered


def test_every_polls_roster_names_a_party_and_colour_with_the_very_same_object() -> None:
    """A mark names two parties and lives as long as its lane's history: each poll's
    roster gives the objects the last one gave (a day's marks held one each)."""
    lanes = [
        {"id": "lead", "sessionId": "s-1", "name": "lead", "color": {"slot": 0}, "index": 0},
        {"id": "w-1", "sessionId": "s-2", "name": "ana", "color": {"slot": 1}, "index": 1},
    ]
    first, second = view_model._Roster(lanes), view_model._Roster(lanes)
    for who in ({"kind": "lead", "id": "lead", "name": "lead"}, {"kind": "member", "id": "w-1"}):
        assert first.party(who) is second.party(who)
    assert first.party({"kind": "member", "id": "w-1"}).tone is view_model.lane_tone(lanes[1])


_TIMES = st.one_of(
    st.integers(0, 10_000), st.none(), st.floats(0, 10_000, allow_nan=False), st.just("x")
)
_SPANS = st.lists(st.fixed_dictionaries({"time": _TIMES, "end": _TIMES}), max_size=12)


@settings(max_examples=200, deadline=None)
@given(spans=_SPANS, edits=st.lists(st.tuples(st.integers(0, 12), _SPANS), max_size=4))
def test_a_lanes_bounds_after_any_edits_equal_a_scan_of_all_its_spans(
    spans: list[dict[str, Any]], edits: list[tuple[int, list[dict[str, Any]]]]
) -> None:
    """A lane's new span list keeps its last version's head (the same span objects) and
    replaces the rest: its earliest and latest time, carried on block by block, are
    those of a scan of every span (any types: undated, float and bogus times too)."""
    clear_memos()
    block = geometry.SPAN_BLOCK
    geometry.SPAN_BLOCK = 3
    try:
        lane = {"id": "a", "sessionId": "s-a", "spans": list(spans)}
        assert geometry._lane_bounds(lane) == geometry._span_bounds(lane["spans"])
        for at, added in edits:
            lane = {**lane, "spans": lane["spans"][:at] + added}
            assert geometry._lane_bounds(lane) == geometry._span_bounds(lane["spans"])
    finally:
        geometry.SPAN_BLOCK = block
        clear_memos()


def test_a_forgotten_teams_chunks_and_lane_bounds_go_with_it() -> None:
    """Their keys hold a lane's bars, marks or whole span list: the service forgetting
    a team (memo.forget_owners with its sessions) drops them, so teams opened one after
    another do not fill the memos to their bounds."""
    from dsh_task_gantt.memo import forget_owners

    clear_memos()
    spans = [_span("turn", 1_000 * n, 1_000 * n + 500, n) for n in range(0, 40, 2)]
    spans += [_span("message", 1_000 * n + 100, None, n, deliveredAt=None) for n in range(40)]
    layout_board(_timeline(spans, 42_000), View())
    assert len(detail._CHUNKS) > 0 and len(geometry._SPAN_BOUNDS) == 2
    forget_owners(["s-b"])
    assert len(geometry._SPAN_BOUNDS) == 1
    forget_owners(["s-a"])
    assert len(detail._CHUNKS) == 0 and len(geometry._SPAN_BOUNDS) == 0
    clear_memos()


def _scales_held(app: Any) -> dict[str, set[int]]:
    """The scales (exponents) each lane-and-scale memo holds entries at."""
    return {
        "chunks": {key[3].exponent for key, _ in detail._CHUNKS.items()},
        "lanes laid": {key[2].exponent for key, _ in detail._LANES_LAID.items()},
        "lane markup": {slot[2].exponent for slot in app.panel._lanes._slots},
        "chunk markup": {slot[3].exponent for slot in app.panel._chunks._slots},
    }


def test_a_scale_no_view_draws_at_any_more_is_dropped_at_once(
    story: tuple[LiveTeam, TimelineService, list[int], str, int],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A live board's whole views change scale each time the extent doubles, and never
    draw at the old one again (a replayed moment draws at the live scale too): each
    lane-and-scale memo holds the scales the views draw at now, not the SCALES_KEPT
    last ones (a dead scale held every chunk of every lane, laid out and rendered). A
    zoomed view keeps its scale while the extent grows, and its layouts."""
    live, service, clock, lead, middle = story
    replay, app, client = _fresh_panel(clock, monkeypatch)
    seen: set[int] = set()
    try:
        for step in range(4):
            if step:  # the extent more than doubles: every whole view's scale changes
                start, end = geometry.board_extent(replay.result.data, clock[0]) or (0, 0)
                clock[0] += 2 * (end - start)
            live.tick(clock[0])
            result = asyncio.run(service.timeline(lead))
            assert result is not None
            replay.result = result
            now = int(result.data["generatedAt"])
            zoom = {"from": str(now - 10 * 60_000), "to": str(now)}
            views = [
                ({"w": "280", "follow": "1"}, View(track_px=280)),
                ({"w": "1160", "follow": "1"}, View(track_px=1160)),
                ({"w": "280", "at": str(middle)}, View(track_px=280)),
                ({"w": "600", "follow": "1", **zoom}, View(now - 600_000, now, True, 600)),
            ]
            drawn: set[int] = set()
            for params, view in views:
                r = client.get(f"{PREFIX}/panel/board", params={"session": lead, **params})
                assert r.status_code == 200
                plan = view_model.plan_board(result.data, view)
                assert isinstance(plan, view_model.BoardPlan)
                drawn.add(plan.scale.exponent)
            seen |= drawn
            assert _scales_held(app) == dict.fromkeys(_scales_held(app), drawn), step
        assert len(seen) >= 5  # the whole views moved at every step, the zoomed one kept
    finally:
        clear_memos()


def test_forget_scale_drops_every_lanes_layouts_at_that_scale_only() -> None:
    clear_memos()
    try:
        bars = [TurnBar(n * 1000, n * 1000 + 500, False, n, 0.5, n * 1000 + 500) for n in range(50)]
        for exponent in (-12, -10):
            for lane in ("lane-0", "lane-1"):
                detail.chunk_lane(lane, bars, [], 0, detail.Scale(exponent), None, "s-1")
        before = len(detail._CHUNKS)
        dropped = detail.forget_scale(0, detail.Scale(-12))
        assert dropped > 0 and len(detail._CHUNKS) < before
        assert {key[3].exponent for key, _ in detail._CHUNKS.items()} == {-10}
        assert {key[2].exponent for key, _ in detail._LANES_LAID.items()} == {-10}
        assert detail.forget_scale(1, detail.Scale(-10)) == 0  # another origin: kept
    finally:
        clear_memos()


def test_the_panels_view_scales_keep_their_entries() -> None:
    """What each view draws at, by session, width and window: browsers at every width
    of many teams keep at most VIEWS_KEPT."""
    m = make_app(Replay()).panel._view_scales
    for n in range(panel.VIEWS_KEPT + 50):
        m.put((f"s-{n}", 400, None), (0, detail.Scale(-n), (0, n)))
    assert len(m) == panel.VIEWS_KEPT


def test_a_scale_a_whole_view_will_draw_at_next_is_kept_while_another_leaves_it() -> None:
    """Two whole views 2x apart in width: when the extent doubles, the narrow one moves
    from scale s to s-1 first, and s is where the wide one, not polled yet, draws next:
    it stays (no cold layout at its next poll); the wide one's old scale goes when it
    moves."""
    clear_memos()
    try:
        app = make_app(Replay())
        bars = [TurnBar(n * 1000, n * 1000 + 500, False, n, 0.5, n * 1000 + 500) for n in range(50)]

        def poll(width: int, extent: int) -> None:
            scale = detail.Scale.of(width / extent)
            plan = SimpleNamespace(extent=(0, extent), scale=scale)
            app.panel._drawn_at("s-1", View(track_px=width), plan)  # type: ignore[arg-type]
            detail.chunk_lane("lane-0", bars, [], 0, scale, None, "s-1")

        def held() -> set[int]:
            return {key[3].exponent for key, _ in detail._CHUNKS.items()}

        poll(1024, 1 << 20)  # 2^-10 px per ms
        poll(2048, 1 << 20)
        assert held() == {-10, -9}
        poll(1024, 1 << 21)  # the extent doubled: -11; the wide view draws at -10 next
        assert held() == {-11, -10}
        poll(2048, 1 << 21)
        assert held() == {-11, -10}
        poll(1024, 1 << 22)
        poll(2048, 1 << 22)
        assert held() == {-12, -11}
    finally:
        clear_memos()
