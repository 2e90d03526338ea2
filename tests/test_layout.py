"""Where the board draws things: positions, widths, ticks, clamping, crowded marks."""

from __future__ import annotations

from itertools import pairwise
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dsh_task_gantt.layout import (
    DEFAULT_FOCUS_WINDOW_MS,
    MARK_PX,
    MARK_ROWS,
    TICK_LABEL_PX,
    TICK_STEPS_MS,
    View,
    choose_tick_step,
    layout_board,
    make_ticks,
    parse_view,
    tick_format,
)
from tests.kit.boardteams import T0, TeamBuilder, demo_team

MIN = 60_000


def _lane(board: Any, name: str) -> Any:
    return next(lane for lane in board.lanes if lane.name == name)


def _pct(board: Any, seconds: float) -> float:
    """Where the CSS puts a time of ``seconds`` from the origin: a share of the span."""
    return round(seconds / board.span_s * 100, 6)


def test_positions_are_percentages_of_the_extent() -> None:
    team = TeamBuilder(names=("lead", "a"), live=False)
    team.turn("lead", T0, T0 + 10 * MIN)  # the extent: T0 .. T0+10min
    team.turn("a", T0 + 2 * MIN, T0 + 7 * MIN)
    team.message("a", "lead", T0 + 5 * MIN, "half way")
    board = layout_board(team.timeline(), View())
    bar = _lane(board, "a").turns[0]
    assert (_pct(board, bar.t), _pct(board, bar.d)) == (20.0, 50.0)
    assert [_pct(board, m.t) for m in _lane(board, "a").marks] == [50.0]
    assert _pct(board, _lane(board, "lead").turns[0].d) == 100.0
    assert (board.extent_start, board.extent_end) == (T0, T0 + 10 * MIN)
    assert board.frozen_at == T0 + 10 * MIN and board.now_left is None


def test_a_message_is_sent_on_one_lane_and_received_on_the_other_in_the_other_colour() -> None:
    team = TeamBuilder(names=("lead", "a", "b"), live=False)
    team.turn("lead", T0, T0 + MIN)
    msg = team.message("a", "b", T0 + 1000, "hi")
    board = layout_board(team.timeline(), View())
    sent = _lane(board, "a").marks[0]
    received = _lane(board, "b").marks[0]
    assert (sent.msg_id, received.msg_id) == (msg, msg)
    assert (sent.kind, sent.glyph, sent.tone.css) == ("sent", "▲", _lane(board, "b").tone.css)
    assert (received.kind, received.glyph, received.tone.css) == (
        "received",
        "▼",
        _lane(board, "a").tone.css,
    )
    assert sent.label == received.label == "message from a to b"


def test_prompts_use_a_colour_no_lane_uses_and_unknown_senders_are_distinct() -> None:
    team = demo_team(live=False)
    team.lanes["verify"]["spans"].append(
        {
            "kind": "message", "id": "orphan", "time": T0 + 90_000, "end": T0 + 90_000,
            "from": {"kind": "system", "id": "?", "name": "?"},
            "to": {"kind": "teammate", "id": "verify", "name": "verify"},
            "direction": "incoming", "preview": "", "sessionId": "s-lead",
        }
    )  # fmt: skip
    board = layout_board(team.timeline(), View())
    lane_tones = {lane.tone.css for lane in board.lanes}
    prompts = [m for m in _lane(board, "lead").marks if m.kind == "prompt"]
    assert len(prompts) == 2 and {m.tone.css for m in prompts} == {"cp"}
    assert "cp" not in lane_tones
    orphan = next(m for m in _lane(board, "verify").marks if m.msg_id == "orphan")
    assert orphan.kind == "system" and orphan.tone.css not in lane_tones


def test_lanes_six_and_later_repeat_colours_but_not_patterns() -> None:
    names = tuple(f"m{n}" for n in range(12))
    team = TeamBuilder(names=names, live=False)
    team.turn("m0", T0, T0 + MIN)
    board = layout_board(team.timeline(), View())
    looks = [(lane.tone.css, lane.tone.variant) for lane in board.lanes]
    assert len(set(looks)) == len(looks)  # every lane is told apart
    assert [lane.tone.css for lane in board.lanes[:5]] == ["c0", "c1", "c2", "c3", "c4"]
    assert board.lanes[5].tone.css == "c0" and board.lanes[5].tone.variant == 1


def test_open_spans_are_clamped_to_the_now_line_while_live() -> None:
    team = TeamBuilder(names=("lead", "a"), live=True, now=T0 + 10 * MIN)
    team.turn("lead", T0, None)
    team.turn("a", T0 + 2 * MIN, None)
    board = layout_board(team.timeline(), View())
    assert board.now == T0 + 10 * MIN and board.now_left is not None
    for lane in board.lanes:
        bar = lane.turns[0]
        assert bar.open and bar.end == board.now
        assert abs(_pct(board, bar.t + bar.d) - board.now_left) < 0.01
    assert board.extent_end > board.now  # headroom after the now-line


def test_open_spans_end_at_the_frozen_end_and_never_at_a_clock() -> None:
    team = TeamBuilder(names=("lead",), live=False, now=T0 + 99 * MIN)
    team.turn("lead", T0, T0 + 3 * MIN)
    team.turn("lead", T0 + 4 * MIN, None)  # a dead team ends on an unclosed turn
    team.message("lead", "lead", T0 + 6 * MIN, "last word")
    timeline = team.timeline()
    board = layout_board(timeline, View())
    open_bar = board.lanes[0].turns[1]
    assert open_bar.end == timeline["range"]["end"] == board.extent_end
    assert board.now is None


def test_task_bars_run_claim_to_completion_and_show_hand_offs_and_reopens() -> None:
    team = demo_team(live=True)
    board = layout_board(team.timeline(), View())
    reader = next(t for t in board.tasks if t.subject == "Log reader")
    assert [(s.owner, s.start, s.end) for s in reader.segments] == [
        ("host-data", T0 + 3 * MIN, T0 + 15 * MIN),
        ("host-data", T0 + 17 * MIN, T0 + 20 * MIN),
    ]
    assert [m.action for m in reader.transitions].count("reopened") == 1
    panel = next(t for t in board.tasks if t.subject == "Gantt panel")
    assert [(s.owner, s.open) for s in panel.segments] == [("docs", False), ("ui", True)]
    assert panel.segments[0].tone.css != panel.segments[1].tone.css
    assert panel.segments[1].end == board.now  # still in progress: to the now-line
    waiting = next(t for t in board.tasks if t.subject == "Benchmarks")
    assert waiting.segments == () and waiting.life_width > 0


def test_tick_step_is_the_smallest_readable_one() -> None:
    assert choose_tick_step(60_000, 300) == 15_000  # 300 px for a minute: 75 px per 15 s
    assert choose_tick_step(3_600_000, 300) == 600_000  # "12:10" needs less room than 12:10:05
    assert choose_tick_step(28 * MIN, 290) == 300_000  # a 28-minute team in a sidebar
    assert choose_tick_step(10_000, 1200) == 1_000
    assert choose_tick_step(7 * 86_400_000, 300) >= 86_400_000
    for window in (5_000, 90_000, 40 * MIN, 9 * 3_600_000):
        for px in (240, 400, 1100):
            step = choose_tick_step(window, px)
            assert step * px / window >= TICK_LABEL_PX[tick_format(step, window)]
            smaller = [s for s in TICK_STEPS_MS if s < step]
            assert (
                not smaller
                or smaller[-1] * px / window < TICK_LABEL_PX[tick_format(smaller[-1], window)]
            )


def test_ticks_fall_on_whole_steps_with_labels_for_the_span() -> None:
    fmt, ticks = make_ticks(T0 + 1_234, T0 + 10 * MIN, T0, T0 + 10 * MIN, 300)
    steps = {b.ms - a.ms for a, b in pairwise(ticks)}
    assert len(steps) == 1
    step = steps.pop()
    assert all(t.ms % step == 0 for t in ticks) and ticks[0].ms - step < T0 + 1_234
    assert fmt == "hm" and all(len(t.label) == 5 for t in ticks)
    fmt, ticks = make_ticks(T0, T0 + 30_000, T0, T0 + 30_000, 300)
    assert fmt == "hms" and all(len(t.label) == 8 for t in ticks)
    assert all(0 <= t.left <= 100 for t in ticks)


def test_a_deep_zoom_on_a_long_team_draws_a_bounded_number_of_ticks() -> None:
    _, ticks = make_ticks(T0, T0 + 86_400_000, T0 + 3_600_000, T0 + 3_610_000, 300)
    assert 0 < len(ticks) <= 241
    assert ticks[0].ms <= T0 + 3_600_000 <= ticks[-1].ms


def test_marks_too_close_together_go_to_separate_rows() -> None:
    team = TeamBuilder(names=("lead", "a"), live=False)
    team.turn("lead", T0, T0 + 10 * MIN)
    for n in range(5):
        team.message("a", "lead", T0 + 5 * MIN + n, f"burst {n}")  # 1 ms apart
    board = layout_board(team.timeline(), View(track_px=300))
    marks = _lane(board, "a").marks
    assert [m.row for m in marks[:MARK_ROWS]] == list(range(MARK_ROWS))
    assert _lane(board, "a").rows == MARK_ROWS
    # zoomed in far enough, the same marks fit side by side on one row
    wide = layout_board(team.timeline(), View(track_px=5 * MARK_PX * 10 * MIN))
    assert {m.row for m in _lane(wide, "a").marks} == {0}


def test_the_view_window_sets_zoom_and_scroll_and_is_kept_inside_the_extent() -> None:
    team = TeamBuilder(names=("lead",), live=False)
    team.turn("lead", T0, T0 + 10 * MIN)
    board = layout_board(team.timeline(), View(start=T0 + 5 * MIN, end=T0 + 7 * MIN))
    assert (board.zoom, board.scroll) == (5.0, 0.5)
    past_end = layout_board(team.timeline(), View(start=T0 + 9 * MIN, end=T0 + 12 * MIN))
    assert (past_end.window_start, past_end.window_end) == (T0 + 7 * MIN, T0 + 10 * MIN)
    tiny = layout_board(team.timeline(), View(start=T0, end=T0 + 1))
    assert tiny.window_end - tiny.window_start == 2_000


def test_follow_slides_the_window_to_now() -> None:
    team = TeamBuilder(names=("lead",), live=True, now=T0 + 30 * MIN)
    team.turn("lead", T0, None)
    board = layout_board(team.timeline(), View(start=T0, end=T0 + 5 * MIN, follow=True))
    # To the live edge (now and a little headroom), not to the extent's rounded-up end.
    assert board.live_end is not None and board.now is not None
    assert board.window_end == board.live_end <= board.extent_end
    assert board.window_start < board.now < board.window_end
    assert board.window_end - board.window_start == 5 * MIN
    assert board.follow


def test_a_live_extent_end_moves_in_steps_so_positions_stay_put_between_polls() -> None:
    team = TeamBuilder(names=("lead",), live=True, now=T0 + 60 * MIN)
    team.turn("lead", T0, T0 + 50 * MIN)
    first = layout_board(team.timeline(), View())
    team.now = T0 + 60 * MIN + 2_500  # the next poll, a little later
    later = layout_board(team.timeline(), View())
    assert later.live_end is not None and first.live_end is not None
    assert later.live_end > first.live_end
    assert later.extent_end == first.extent_end  # within one step: nothing moved
    assert later.lanes[0].turns == first.lanes[0].turns
    assert first.extent_end - first.live_end < (first.extent_end - first.extent_start) / 32
    assert later.open_end_left > first.open_end_left  # the now-line itself did move


def test_parse_view_reads_the_url_and_ignores_nonsense() -> None:
    assert parse_view({}) == View()
    assert parse_view({"from": "10", "to": "5"}) == View()
    assert parse_view({"from": "x", "to": "<script>"}) == View()
    view = parse_view({"from": "1000", "to": "5000", "follow": "1", "w": "640"})
    assert (view.start, view.end, view.follow, view.track_px) == (1000, 5000, True, 640)
    iso = parse_view({"from": "2025-11-29T15:00:00Z", "to": "2025-11-29T15:10:00Z"})
    assert iso.end is not None and iso.start is not None and iso.end - iso.start == 10 * MIN
    focus = parse_view({"t": "1000000"})
    assert focus.start is not None and focus.end is not None
    assert (
        focus.end - focus.start == DEFAULT_FOCUS_WINDOW_MS and focus.start < 1_000_000 < focus.end
    )


def test_an_empty_team_lays_out_as_empty() -> None:
    board = layout_board(TeamBuilder(names=("lead",), live=False).timeline(), View())
    assert board.empty and board.lanes == () and board.ticks == ()


@settings(max_examples=120, deadline=None)
@given(
    spans=st.lists(
        st.tuples(
            st.sampled_from(["lead", "a", "b"]),
            st.integers(0, 3_600_000),
            st.one_of(st.none(), st.integers(0, 600_000)),
        ),
        max_size=25,
    ),
    live=st.booleans(),
    window=st.one_of(st.none(), st.tuples(st.integers(-MIN, 4_000_000), st.integers(1, 4_000_000))),
    track_px=st.integers(80, 4000),
)
def test_everything_drawn_stays_inside_the_board(
    spans: list[tuple[str, int, int | None]],
    live: bool,
    window: tuple[int, int] | None,
    track_px: int,
) -> None:
    team = TeamBuilder(names=("lead", "a", "b"), live=live, now=T0 + 3_700_000)
    for lane, start, length in spans:
        if length is None:
            team.turn(lane, T0 + start, None)
        else:
            team.message(lane, "lead", T0 + start, "m")
    view = View() if window is None else View(T0 + window[0], T0 + window[0] + window[1])
    board = layout_board(team.timeline(), View(view.start, view.end, track_px=track_px))
    assert board.extent_start <= board.window_start < board.window_end <= board.extent_end
    assert board.zoom >= 1
    for lane in board.lanes:
        for bar in lane.turns:
            assert 0 <= _pct(board, bar.t) <= 100 and bar.d >= 0
            assert _pct(board, bar.t + bar.d) <= 100.001
            assert bar.end >= bar.start
        for mark in lane.marks:
            assert 0 <= _pct(board, mark.t) <= 100 and 0 <= mark.row < MARK_ROWS
    if board.now_left is not None:
        assert 0 <= board.now_left <= 100


def test_a_message_not_yet_delivered_is_drawn_hollow_and_says_so() -> None:
    team = TeamBuilder(names=("lead", "a", "b"), live=True)
    team.turn("lead", T0, None)
    waiting = team.message("a", "b", T0 + 1000, "still queued", delivered=False)
    arrived = team.message("b", "a", T0 + 9000, "got it")
    board = layout_board(team.timeline(), View())
    marks = {(m.msg_id, m.kind): m for lane in board.lanes for m in lane.marks}
    for kind, glyph in (("sent", "△"), ("received", "▽")):
        mark = marks[(waiting, kind)]
        assert (mark.pending, mark.glyph, mark.note) == (True, glyph, ", delivery pending")
    for kind, glyph in (("sent", "▲"), ("received", "▼")):
        mark = marks[(arrived, kind)]
        assert (mark.pending, mark.glyph, mark.note) == (False, glyph, "")
    in_list = layout_board(team.timeline(), View(listing=True))  # the list view is on
    listed = {item.msg_id: item.pending for item in in_list.items if item.msg_id}
    assert listed == {waiting: True, arrived: False}


def test_a_span_that_does_not_say_when_it_was_delivered_is_not_called_pending() -> None:
    team = TeamBuilder(names=("lead", "a"), live=False)
    team.turn("lead", T0, T0 + MIN)
    msg = team.message("lead", "a", T0 + 1000, "hi")
    for lane in team.lanes.values():
        for span in lane["spans"]:
            span.pop("deliveredAt", None)
    board = layout_board(team.timeline(), View())
    assert [m.pending for lane in board.lanes for m in lane.marks if m.msg_id == msg] == [
        False,
        False,
    ]


def test_a_deleted_task_lives_until_its_deletion_and_a_pending_one_until_now() -> None:
    team = TeamBuilder(names=("lead", "a"), live=True)
    team.turn("lead", T0, None)
    team.task(
        "1",
        "dropped",
        [(T0, "created", "pending", "lead"), (T0 + MIN, "updated", "deleted", "lead")],
    )
    team.task("2", "waiting", [(T0, "created", "pending", "lead")])
    board = layout_board(team.timeline(), View())
    dropped, waiting = board.tasks
    span = board.extent_end - board.extent_start
    assert dropped.life_width == pytest.approx(MIN * 100 / span, abs=0.01)
    assert waiting.life_width == pytest.approx((team.now - T0) * 100 / span, abs=0.01)


def test_a_recipient_outside_the_team_is_named_as_such_not_by_a_bare_id() -> None:
    team = TeamBuilder(names=("lead", "a"), live=False)
    team.turn("lead", T0, T0 + MIN)
    stranger = "37a11f6b-714b-4c6e-b4a2-f2ff1fe8e6f8"
    team.lanes["a"]["spans"].append(
        {
            "kind": "message", "id": "off", "time": T0 + 1000, "end": None,
            "from": {"kind": "teammate", "id": "a", "name": "a"},
            "to": {"kind": "system", "id": stranger, "name": stranger},
            "direction": "outgoing", "preview": "hello?", "sessionId": "s-lead",
            "deliveredAt": T0 + 1000,
        }
    )  # fmt: skip
    (mark,) = _lane(layout_board(team.timeline(), View()), "a").marks
    assert mark.recipient is not None
    assert mark.recipient.name == "outside the team (37a11f6b…)"
    assert mark.label == "message from a to outside the team (37a11f6b…)"


def test_a_tick_label_at_an_end_of_the_track_is_not_centred_off_it() -> None:
    # 10 whole minutes on 300 px: ticks on the very first and the very last instant
    base = T0 // (10 * MIN) * (10 * MIN)
    _, ticks = make_ticks(base, base + 10 * MIN, base, base + 10 * MIN, 300)
    assert ticks[0].ms == base and ticks[0].align == "start"
    assert ticks[-1].ms == base + 10 * MIN and ticks[-1].align == "end"
    assert len(ticks) > 2
    assert all(t.align == "" for t in ticks[1:-1])


def test_a_label_held_at_an_end_of_the_track_never_runs_into_its_neighbour() -> None:
    """The extent starts seconds before a tick: that tick's label is held at the track's
    start (it reaches a whole label inward), so with the steps as tight as the labels
    allow it would touch the next label: it goes, the even steps stay."""
    step = 60_000  # 46 px per minute: "hm" labels at their tightest
    base = T0 // step * step
    start, end = base - 5_000, base + 20 * step + 4_000
    px = round((end - start) / step * 46)
    _, ticks = make_ticks(start, end, start, end, px)
    assert ticks and ticks[1].ms - ticks[0].ms == step
    assert all(t.align == "" for t in ticks)  # no label is pushed into another
    assert ticks[0].ms == base + step and ticks[-1].ms == base + 19 * step
