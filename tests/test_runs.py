"""A chunk's turn groups and one-row marks, resumed after an edit, are the ones a pass
from the start makes (``board/runs.py``), whatever the edits: appends at the end, the
open turn closed, a mark near the end replaced (a message delivered), an item anywhere
replaced or dropped. The reference passes below are the rules as plain code."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from dsh_task_gantt.board.detail import CLUSTER_TONES, MARK_PX, MERGE_PX, place_marks
from dsh_task_gantt.board.geometry import seconds
from dsh_task_gantt.board.model import Cluster, Mark, Party, Tone, TurnBar, TurnGroup
from dsh_task_gantt.board.runs import (
    MARKS_REDONE,
    group_turns_from,
    one_row_from,
)
from dsh_task_gantt.timeline.identity import passed_head

TONES = tuple(Tone(f"c{n}", n) for n in range(5))
#: Pixels per ms: a zoomed-in chunk to a day seen whole at 400 px.
SCALES = st.sampled_from([1 / 64, 1 / 1024, 1 / 16_384, 1 / 262_144])


# -- the rules, plainly -----------------------------------------------------------


def _reference_pass(bars: list[TurnBar], gap_ms: float, origin: int) -> list[Any]:
    out: list[Any] = []
    run: list[TurnBar] = []
    run_end = 0
    for bar in [*bars, None]:
        if bar is not None and not bar.open and not (run and bar.start - run_end >= gap_ms):
            run_end = max(run_end, bar.end) if run else bar.end
            run.append(bar)
            continue
        if len(run) == 1:
            out.append(run[0])
        elif run:
            start = run[0].start
            group = TurnGroup(
                seconds(start, origin), round((run_end - start) / 1000, 3), start, run_end, len(run)
            )
            out.append(group)
        run = []
        if bar is not None and bar.open:
            out.append(bar)
        elif bar is not None:  # the start of the next run
            run, run_end = [bar], bar.end
    return out


def reference_groups(
    bars: list[TurnBar], px_per_ms: float, origin: int, budget: int | None
) -> list[Any]:
    span_ms = max(b.end for b in bars) - min(b.start for b in bars) if bars else 0
    merge_px = MERGE_PX
    while True:
        gap_ms = merge_px / px_per_ms
        out = _reference_pass(bars, gap_ms, origin)
        if budget is None or len(out) <= budget or gap_ms > span_ms:
            return out
        merge_px *= 2


def reference_one_row(marks: list[Mark], px_per_ms: float, budget: int | None) -> list[Any]:
    spacing = float(MARK_PX)
    while True:
        runs: list[list[Mark]] = []
        for mark in marks:
            if runs and (mark.ms - runs[-1][0].ms) * px_per_ms < spacing:
                runs[-1].append(mark)
            else:
                runs.append([mark])
        placed: list[Any] = []
        for run in runs:
            on0 = [m if m.row == 0 else replace(m, row=0) for m in run]
            if len(run) == 1:
                placed.append(on0[0])
            else:
                tones: list[Tone] = []
                for m in on0:
                    if m.tone not in tones:
                        tones.append(m.tone)
                placed.append(
                    Cluster(
                        on0[0].t,
                        0,
                        on0[0].ms,
                        on0[-1].ms,
                        len(on0),
                        tuple(tones[:CLUSTER_TONES]),
                        tuple(on0),
                        run=True,
                    )
                )
        if budget is None or len(placed) <= max(budget, 1) or len(placed) <= 1:
            return placed
        spacing *= 2


# -- made-up chunks and their edits -------------------------------------------------


def bar(start: int, length: int, *, is_open: bool = False) -> TurnBar:
    end = start + length
    return TurnBar(start, end, is_open, start / 1000, length / 1000, None if is_open else end)


def mark(ms: int, n: int, tone: int, row: int = 0) -> Mark:
    party = Party("lead", TONES[0])
    return Mark(
        f"m-{n}", f"msg-{n}", "sent", "▲", row, ms, "", TONES[tone], ms / 1000, party, None,
        "message", "",
    )  # fmt: skip


def bars_from(gaps: list[tuple[int, int]], start: int = 0) -> list[TurnBar]:
    bars, at = [], start
    for gap, length in gaps:
        at += gap
        bars.append(bar(at, length))
    return bars


turn_steps = st.lists(st.tuples(st.integers(0, 30_000), st.integers(1, 60_000)), max_size=40)
edits = st.lists(
    st.tuples(
        st.sampled_from(["append", "close", "open", "replace", "drop"]),
        turn_steps,
        st.integers(0, 10**6),
    ),
    min_size=1,
    max_size=6,
)


@settings(max_examples=200, deadline=None)
@given(
    first=turn_steps,
    edits=edits,
    px_per_ms=SCALES,
    budget=st.one_of(st.none(), st.integers(1, 6)),
)
def test_turn_groups_resumed_after_any_edits_are_the_groups_from_the_start(
    first: list[tuple[int, int]],
    edits: list[tuple[str, Any, int]],
    px_per_ms: float,
    budget: int | None,
) -> None:
    origin = -5_000
    bars = bars_from(first)
    got, kept = group_turns_from(bars, px_per_ms, origin, budget, MERGE_PX)
    assert got == reference_groups(bars, px_per_ms, origin, budget)
    for kind, steps, pick in edits:
        new = list(bars)
        end = max((b.start for b in new), default=0)
        if kind == "append":
            new += bars_from(steps, end)
        elif kind == "open":  # a turn begins and runs on
            new.append(bar(end + 1_000, 500, is_open=True))
        elif kind == "close" and new and new[-1].open:  # the open turn ends; more follow
            new[-1] = bar(new[-1].start, 2_000)
            new += bars_from(steps, new[-1].start)
        elif kind == "replace" and new:
            at = pick % len(new)
            new[at] = bar(new[at].start, new[at].end - new[at].start + 1)
        elif kind == "drop" and new:
            del new[pick % len(new) :]
        got, kept = group_turns_from(
            new, px_per_ms, origin, budget, MERGE_PX, kept, passed_head(bars, new)
        )
        assert got == reference_groups(new, px_per_ms, origin, budget), kind
        bars = new


mark_steps = st.lists(st.tuples(st.integers(0, 20_000), st.integers(0, 4)), max_size=60)
mark_edits = st.lists(
    st.tuples(
        st.sampled_from(["append", "deliver", "replace", "drop"]), mark_steps, st.integers(0, 10**6)
    ),
    min_size=1,
    max_size=6,
)


def marks_from(steps: list[tuple[int, int]], start: int, first_n: int) -> list[Mark]:
    marks, at = [], start
    for n, (gap, tone) in enumerate(steps, first_n):
        at += gap
        marks.append(mark(at, n, tone, row=n % 2))
    return marks


@settings(max_examples=200, deadline=None)
@given(
    first=mark_steps,
    edits=mark_edits,
    px_per_ms=SCALES,
    budget=st.one_of(st.none(), st.integers(1, 8)),
)
def test_one_row_marks_resumed_after_any_edits_are_the_marks_from_the_start(
    first: list[tuple[int, int]],
    edits: list[tuple[str, Any, int]],
    px_per_ms: float,
    budget: int | None,
) -> None:
    marks = marks_from(first, 0, 0)
    made = len(marks)
    got, kept = one_row_from(marks, px_per_ms, budget, MARK_PX, CLUSTER_TONES)
    assert got == reference_one_row(marks, px_per_ms, budget)
    for kind, steps, pick in edits:
        new = list(marks)
        if kind == "append":
            new += marks_from(steps, new[-1].ms if new else 0, made)
            made += len(steps)
        elif kind == "deliver" and new:  # a mark near the end says something else now
            at = len(new) - 1 - pick % min(len(new), MARKS_REDONE + 2)
            new[at] = replace(new[at], tone=TONES[(TONES.index(new[at].tone) + 1) % len(TONES)])
        elif kind == "replace" and new:
            at = pick % len(new)
            new[at] = replace(new[at], glyph="△")
        elif kind == "drop" and new:
            del new[pick % len(new) :]
        got, kept = one_row_from(
            new, px_per_ms, budget, MARK_PX, CLUSTER_TONES, kept, passed_head(marks, new)
        )
        assert got == reference_one_row(new, px_per_ms, budget), kind
        marks = new


def test_an_append_to_a_long_chunk_passes_over_what_it_added_not_the_chunk() -> None:
    """A day's last chunk at 400 px: thousands of turns and marks, then an append of a
    few. The resumed passes read the few (counted by the items they visit)."""
    bars = bars_from([(2_000, 1_500)] * 5_000)
    px_per_ms = 1 / 262_144
    _, kept = group_turns_from(bars, px_per_ms, 0, 3, MERGE_PX)
    visited: list[int] = []

    class Counted(list[TurnBar]):
        def __getitem__(self, i: Any) -> Any:
            visited.append(1)
            return super().__getitem__(i)

    grown = Counted([*bars, *bars_from([(2_000, 1_500)] * 3, bars[-1].start)])
    got, _ = group_turns_from(grown, px_per_ms, 0, 3, MERGE_PX, kept, len(bars))
    assert got == reference_groups(list(grown), px_per_ms, 0, 3)
    assert len(visited) < 50, len(visited)
    marks = marks_from([(700, n % 5) for n in range(5_000)], 0, 0)
    placed, _rows, marks_kept = place_marks(marks, px_per_ms, 8)
    assert placed == reference_one_row(marks, px_per_ms, 8) and marks_kept is not None
    visited.clear()

    class CountedMarks(list[Mark]):
        def __getitem__(self, i: Any) -> Any:
            visited.append(1)
            return super().__getitem__(i)

    more = CountedMarks([*marks, *marks_from([(700, 1)] * 3, marks[-1].ms, 5_000)])
    got_marks, _ = one_row_from(more, px_per_ms, 8, MARK_PX, CLUSTER_TONES, marks_kept, len(marks))
    assert got_marks == reference_one_row(list(more), px_per_ms, 8)
    assert len(visited) < 60, len(visited)
    # a message near the end delivered since (its mark replaced): still from near the end
    _, after_append = one_row_from(
        list(more), px_per_ms, 8, MARK_PX, CLUSTER_TONES, marks_kept, len(marks)
    )
    delivered = CountedMarks(more)
    delivered[-4] = replace(delivered[-4], tone=TONES[2])
    visited.clear()
    got_marks, _ = one_row_from(
        delivered, px_per_ms, 8, MARK_PX, CLUSTER_TONES, after_append, len(more) - 4
    )
    assert got_marks == reference_one_row(list(delivered), px_per_ms, 8)
    assert len(visited) < 60, len(visited)
