"""The board's size follows its pixels at every zoom, not the team's history.

A heavy team (an hour of nine busy lanes, 1,800 messages spread evenly over them, 240
tasks) is drawn at fit-all and zoomed in two to sixteen times, in the middle of its
history and following now, at a sidebar's width and a full window's. The board's
elements are counted in the HTML the server sends (the browser benchmark counts them in
Chromium). Aggregates hold what they do not draw: nothing is lost.
"""

from __future__ import annotations

import random
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from dsh_task_gantt.board import detail
from dsh_task_gantt.board.detail import MARK_BUDGET_PX, TURN_BUDGET_PX, Scale, chunk_budget
from dsh_task_gantt.board.model import CLUSTER_IDS_LISTED, Cluster, TurnGroup, View
from dsh_task_gantt.layout import layout_board
from tests.kit.boardteams import PREFIX, T0, FakeProvider, TeamBuilder, make_app

HOUR = 3_600_000
LANES = ("lead", "a1", "a2", "a3", "a4", "a5", "a6", "a7", "a8")
#: Track widths: a 400 px sidebar's and a 1280 px window's (the browser reports these).
WIDTHS = (300, 1082)
ZOOMS = (1, 2, 4, 8, 16)
#: The whole page may hold 3,000 elements; the header, status and detail take about 60.
BOARD_LIMIT = 2_900


def heavy_team(messages: int = 1_800, turn_gap_ms: int = 6_000, seed: int = 3) -> TeamBuilder:
    rng = random.Random(seed)
    team = TeamBuilder(names=LANES, now=T0 + HOUR + 5_000)
    for lane in LANES:
        at = T0
        while at < T0 + HOUR:
            length = rng.randint(4_000, 20_000)
            team.turn(lane, at, at + length)
            at += length + rng.randint(500, 2 * turn_gap_ms)
    for n in range(messages):
        sender, target = rng.sample(LANES, 2)
        at = T0 + n * HOUR // messages + rng.randint(0, 1_500)
        team.message(sender, target, at, f"message {n}")
    for n in range(240):
        at, who = T0 + n * HOUR // 240, rng.choice(LANES[1:])
        moves = [(at, "created", "pending", "lead"), (at + 60_000, "claimed", "in_progress", who)]
        if n % 3:
            moves.append((at + 300_000, "completed", "completed", who))
        team.task(f"task-{n}", f"Task {n}", moves)
    return team


def _views(team: TeamBuilder, track_px: int) -> list[tuple[str, dict[str, str]]]:
    start, end = T0, team.now
    views: list[tuple[str, dict[str, str]]] = [("fit-all", {"w": str(track_px)})]
    for zoom in ZOOMS[1:]:
        width = (end - start) // zoom
        middle = (start + end) // 2 - width // 2
        for name, lo in (("middle", middle), ("now", end - width)):
            views.append(
                (
                    f"x{zoom} {name}",
                    {"w": str(track_px), "from": str(lo), "to": str(lo + width)}
                    | ({"follow": "1"} if name == "now" else {}),
                )
            )
    return views


def _board_elements(html: str) -> int:
    """Elements of the board an answer draws (its chart and what follows it)."""
    chart = html[html.index('id="chart"') :]
    return len(re.findall(r"<[a-zA-Z]", chart))


@pytest.fixture(scope="module")
def heavy() -> TeamBuilder:
    return heavy_team()


@pytest.mark.parametrize("track_px", WIDTHS)
def test_a_heavy_team_draws_a_bounded_board_at_every_zoom(
    heavy: TeamBuilder, track_px: int
) -> None:
    client = TestClient(make_app(FakeProvider(heavy)))
    counts: dict[str, int] = {}
    for name, params in _views(heavy, track_px):
        answer = client.get(f"{PREFIX}/panel/board", params={"session": "s-lead", **params})
        assert answer.status_code == 200, name
        counts[name] = _board_elements(answer.text)
    assert max(counts.values()) <= BOARD_LIMIT, counts
    # and it is the whole board, not an empty one: every lane is there at every zoom
    assert min(counts.values()) > 9 * 4, counts


def _drawn_items(board: Any) -> tuple[int, int, int, int]:
    """Turn elements, turns they hold, mark elements, marks they hold."""
    turn_elements = turns = mark_elements = marks = 0
    for lane in board.lanes:
        for chunk in lane.chunks:
            turn_elements += len(chunk.turns)
            turns += sum(t.count if isinstance(t, TurnGroup) else 1 for t in chunk.turns)
            mark_elements += len(chunk.marks)
            marks += sum(m.count if isinstance(m, Cluster) else 1 for m in chunk.marks)
    return turn_elements, turns, mark_elements, marks


#: The zooms at which some chunk of the heavy teams, placed without a budget, would draw
#: more turns and more marks than its budget allows (seen whole, merging turns a pixel
#: apart and chips by their width already fit; 16x in is sparse enough).
BUDGET_BITES_AT = (2, 4, 8)


def _most_per_chunk(board: Any) -> tuple[int, int]:
    """The most turn elements and mark elements any one chunk draws."""
    chunks = [chunk for lane in board.lanes for chunk in lane.chunks]
    return max(len(c.turns) for c in chunks), max(len(c.marks) for c in chunks)


@pytest.mark.parametrize("zoom", ZOOMS)
def test_each_chunk_keeps_to_its_pixel_budget_however_crowded_the_lane(
    zoom: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Twice the messages and closer turns in the same hour: the same bound per chunk,
    and where the chunks would draw more without it, the bound is what held them."""
    most_unbounded = [0, 0]
    for team in (heavy_team(), heavy_team(messages=3_600, turn_gap_ms=1_000)):
        width = (team.now - T0) // zoom
        view = View(start=team.now - width, end=team.now, track_px=1082) if zoom > 1 else View()
        board = layout_board(team.timeline(), view)
        scale = Scale.of(board.track_px * board.zoom / (board.extent_end - board.extent_start))
        turn_budget = chunk_budget(scale.chunk_ms, scale.px_per_ms, TURN_BUDGET_PX)
        mark_budget = chunk_budget(scale.chunk_ms, scale.px_per_ms, MARK_BUDGET_PX)
        for lane in board.lanes:
            for chunk in lane.chunks:
                assert len(chunk.turns) <= turn_budget, (lane.lane_id, chunk.dom_id)
                assert len(chunk.marks) <= mark_budget, (lane.lane_id, chunk.dom_id)
        # The same board with no budget: how many elements the chunks would draw.
        with monkeypatch.context() as unbounded:
            unbounded.setattr(detail, "chunk_budget", lambda *_: None)
            turns, marks = _most_per_chunk(layout_board(team.timeline(), view))
        most_unbounded[0] = max(most_unbounded[0], turns - turn_budget)
        most_unbounded[1] = max(most_unbounded[1], marks - mark_budget)
    if zoom in BUDGET_BITES_AT:
        # the budget was reached for both kinds, not just never tested
        assert most_unbounded[0] > 0 and most_unbounded[1] > 0, most_unbounded


def test_aggregates_hold_every_turn_and_mark_they_do_not_draw(heavy: TeamBuilder) -> None:
    timeline = heavy.timeline()
    spans = [s for lane in timeline["lanes"] for s in lane["spans"]]
    all_turns = sum(1 for s in spans if s["kind"] == "turn")
    all_marks = sum(1 for s in spans if s["kind"] != "turn")
    for track_px in WIDTHS:
        board = layout_board(timeline, View(track_px=track_px))
        turn_elements, turns, mark_elements, marks = _drawn_items(board)
        assert (turns, marks) == (all_turns, all_marks)  # fit-all draws them all, held or not
        assert turn_elements < all_turns / 4 and mark_elements < all_marks / 4


def test_a_cluster_that_lists_no_ids_holds_every_mark_of_its_lane_in_its_range(
    heavy: TeamBuilder,
) -> None:
    """What the panel marks current by a cluster's range is exactly what it holds: a
    cluster without ids is a run of its lane's marks, and one with ids lists them."""
    runs = 0
    for track_px in WIDTHS:
        for zoom in (1, 4):
            width = (heavy.now - T0) // zoom
            view = View(start=heavy.now - width, end=heavy.now, track_px=track_px)
            board = layout_board(heavy.timeline(), view if zoom > 1 else View(track_px=track_px))
            for lane in board.lanes:
                for chunk in lane.chunks:
                    for item in chunk.marks:
                        if not isinstance(item, Cluster):
                            continue
                        held = {m.dom_id for m in item.marks}
                        if item.listed_ids is not None:
                            assert item.listed_ids.split() == [m.msg_id for m in item.marks]
                            continue
                        runs += 1
                        assert item.count > CLUSTER_IDS_LISTED
                        in_range = {m.dom_id for m in lane.marks if item.start <= m.ms <= item.end}
                        assert in_range == held, (lane.lane_id, chunk.dom_id)
    assert runs > 0  # the heavy team seen whole has runs longer than a cluster lists


def test_a_long_runs_markup_does_not_grow_with_what_it_holds(heavy: TeamBuilder) -> None:
    """A day's board zoomed out is made of runs of thousands: each chip's markup is the
    same few attributes whatever it holds (it listed every id, at every poll that
    changed its chunk)."""
    client = TestClient(make_app(FakeProvider(heavy)))
    answer = client.get(f"{PREFIX}/panel/board", params={"session": "s-lead", "w": "300"})
    chips = re.findall(r'<button type="button" id="[^"]*" class="mark cluster[^>]*>', answer.text)
    runs = {int(re.search(r'data-count="(\d+)"', c)[1]): c for c in chips if "data-msgs" not in c}  # type: ignore[index]
    assert len(runs) >= 2 and min(runs) > CLUSTER_IDS_LISTED, sorted(runs)
    shortest, longest = runs[min(runs)], runs[max(runs)]
    # 17 and 36 marks (say): the same attributes, a digit or a colour more at most
    assert len(longest) - len(shortest) < 60, (shortest, longest)


def _bar(start: int, length: int) -> Any:
    from dsh_task_gantt.board.model import TurnBar

    return TurnBar(start, start + length, False, start / 1000, length / 1000, start + length)


def _mark(ms: int, n: int) -> Any:
    from dsh_task_gantt.board.model import Mark, Party, Tone

    tone = Tone("c0", 0)
    party = Party("lead", tone)
    return Mark(f"m-{n}", f"msg-{n}", "sent", "▲", 0, ms, "", tone, ms / 1000, party, None,
                "message", "")  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(
    turn_starts=st.lists(st.integers(-5_000, 200_000), max_size=60),
    mark_times=st.lists(st.integers(-5_000, 200_000), max_size=60),
    exponent=st.integers(-14, -6),
    origin=st.integers(-3_000, 3_000),
    in_order=st.booleans(),
)
def test_a_lane_in_time_order_is_chunked_as_one_grouped_item_by_item(
    turn_starts: list[int], mark_times: list[int], exponent: int, origin: int, in_order: bool
) -> None:
    """Our builder's lanes come in time order, and are chunked by bisecting at the
    chunks' edges; the chunks (their bars, marks and rows) are those of grouping each
    bar and mark one by one, as a lane in any order is."""
    if in_order:
        turn_starts, mark_times = sorted(turn_starts), sorted(mark_times)
    turns = [_bar(s, 1_000 + s % 7_000) for s in turn_starts]
    marks = [_mark(ms, n) for n, ms in enumerate(mark_times)]
    scale = Scale(exponent)
    detail._CHUNKS.clear()
    fast = detail.chunk_lane("lane-0", turns, marks, origin, scale, None)
    expected: dict[int, tuple[list[Any], list[Any]]] = {}
    for bar in turns:
        expected.setdefault((bar.start - origin) // scale.chunk_ms, ([], []))[0].append(bar)
    for mark in marks:
        expected.setdefault((mark.ms - origin) // scale.chunk_ms, ([], []))[1].append(mark)
    chunks, _, _ = fast
    assert [c.index for c in chunks] == sorted(expected)
    detail._CHUNKS.clear()
    laid = [
        detail._lay_chunk("lane-0", i, *expected[i], origin, scale, detail._budgets(scale))
        for i in sorted(expected)
    ]
    assert chunks == tuple(lay.chunk for lay in laid)


def _cold_chunks(*args: Any) -> Any:
    """detail.chunk_lane with its memos empty (a cold layout)."""
    kept = detail._CHUNKS, detail._LANES_LAID
    detail._CHUNKS = type(kept[0])(1 << 13)
    detail._LANES_LAID = type(kept[1])(16)
    try:
        return detail.chunk_lane(*args)
    finally:
        detail._CHUNKS, detail._LANES_LAID = kept


_TIMES = st.lists(st.integers(0, 300_000), max_size=24)


@settings(max_examples=150, deadline=None)
@given(
    turn_starts=_TIMES,
    mark_times=_TIMES,
    edits=st.lists(
        st.tuples(st.integers(0, 24), st.integers(0, 24), _TIMES, _TIMES, st.booleans()),
        min_size=1,
        max_size=5,
    ),
    exponent=st.integers(-14, -8),
    drawn=st.one_of(st.none(), st.tuples(st.integers(0, 20), st.integers(0, 40))),
)
def test_a_lane_laid_out_again_after_any_edits_is_the_lane_laid_out_cold(
    turn_starts: list[int],
    mark_times: list[int],
    edits: list[tuple[int, int, list[int], list[int], bool]],
    exponent: int,
    drawn: tuple[int, int] | None,
) -> None:
    """A lane's next version keeps the head of its bars and marks (the same objects)
    and has new ones after it, in time order or not: laid out again, carrying the
    chunks before the first change from the last layout, its chunks, marks and rows
    are those laid out cold."""
    detail._CHUNKS.clear()
    detail._LANES_LAID.clear()
    scale, origin = Scale(exponent), 0
    shown = None if drawn is None else detail.Drawn(drawn[0], drawn[0] + drawn[1])
    turns = [_bar(s, 1_000 + s % 7_000) for s in sorted(turn_starts)]
    marks = [_mark(ms, n) for n, ms in enumerate(sorted(mark_times))]
    detail.chunk_lane("lane-0", turns, marks, origin, scale, shown)
    for keep_turns, keep_marks, new_turns, new_marks, in_order in edits:
        more_turns = [t.start for t in turns[keep_turns:]] + new_turns
        more_marks = [m.ms for m in marks[keep_marks:]] + new_marks
        if in_order:
            more_turns = sorted(more_turns)
            more_marks = sorted(more_marks)
            more_turns = [
                s for s in more_turns if not turns[:keep_turns] or s >= turns[:keep_turns][-1].start
            ]
            more_marks = [
                m for m in more_marks if not marks[:keep_marks] or m >= marks[:keep_marks][-1].ms
            ]
        turns = turns[:keep_turns] + [_bar(s, 1_000 + s % 7_000) for s in more_turns]
        marks = marks[:keep_marks] + [_mark(ms, 1_000 + n) for n, ms in enumerate(more_marks)]
        warm = detail.chunk_lane("lane-0", turns, marks, origin, scale, shown)
        assert warm == _cold_chunks("lane-0", turns, marks, origin, scale, shown)
    detail._CHUNKS.clear()
    detail._LANES_LAID.clear()
