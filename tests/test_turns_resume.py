"""A lane's pairing resumed after an append equals the pairing made from scratch."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dsh_task_gantt.fold import turns
from dsh_task_gantt.fold.records import LaneFold, TurnMark
from dsh_task_gantt.memo import clear_memos

_IDS = st.sampled_from(["t1", "t2", "t3", "t4", None])
_TIMES = st.one_of(st.none(), st.integers(min_value=0, max_value=50))
_MARK = st.one_of(
    st.tuples(st.just("start"), _IDS, _TIMES, st.none()),
    st.tuples(st.just("end"), _IDS, _TIMES, st.sampled_from(["ended", "error", None])),
    st.tuples(st.just("seed"), st.none(), _TIMES, st.none()),
)


def _fold(marks: list[tuple[int, tuple[Any, ...]]]) -> LaneFold:
    """A fold holding ``marks`` (by seq), in that insertion order."""
    starts: dict[int, TurnMark] = {}
    ends: dict[int, TurnMark] = {}
    seeds: dict[int, int | None] = {}
    for seq, (kind, turn_id, time, reason) in marks:
        if kind == "start":
            starts[seq] = TurnMark(turn_id, time)
        elif kind == "end":
            ends[seq] = TurnMark(turn_id, time, reason)
        else:
            seeds[seq] = time
    return LaneFold(turn_starts=starts, turn_ends=ends, end_seeds=seeds)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(_MARK, max_size=30),
    st.lists(st.integers(min_value=0, max_value=30), min_size=1, max_size=6),
    st.integers(min_value=0, max_value=6),
    st.booleans(),
    st.lists(st.integers(min_value=1, max_value=3), min_size=30, max_size=30),
    st.booleans(),
)
def test_a_resumed_pairing_equals_one_from_scratch(
    marks: list[tuple[Any, ...]],
    splits: list[int],
    cut: int,
    restores: bool,
    gaps: list[int],
    reorder: bool,
) -> None:
    """Each version of the lane is an append to the last (seqs rising, with gaps), so
    it resumes; ``reorder`` makes some version hold its old marks in another insertion
    order, which must be noticed (or not matter)."""
    clear_memos()
    seq = 0
    numbered = []
    for mark, gap in zip(marks, gaps, strict=False):
        seq += gap
        numbered.append((seq, mark))
    for at in sorted({min(s, len(numbered)) for s in splits} | {len(numbered)}):
        held = numbered[:at]
        if reorder and at % 2:
            held = held[::-1]
        fold = _fold(held)
        got = turns.pair_turns(fold, cut, restores, lane="lane")
        assert got == turns._pair_turns(fold, cut, restores)
    clear_memos()


@settings(max_examples=200, deadline=None)
@given(
    st.lists(_MARK, min_size=1, max_size=20),
    st.lists(_MARK, min_size=1, max_size=6),
    st.integers(min_value=0, max_value=25),
    st.booleans(),
)
def test_a_fold_that_did_not_only_append_is_paired_whole(
    marks: list[tuple[Any, ...]], later: list[tuple[Any, ...]], at: int, restores: bool
) -> None:
    """Marks given seqs below the last ones seen, or replacing one, are no append: the
    answer is still the whole pass's."""
    clear_memos()
    first = list(enumerate(marks, start=10))
    turns.pair_turns(_fold(first), 0, restores, lane="lane")
    second = [*first, *((at + n, mark) for n, mark in enumerate(later))]
    fold = _fold(second)
    assert turns.pair_turns(fold, 0, restores, lane="lane") == turns._pair_turns(fold, 0, restores)
    clear_memos()


def test_appends_resume_and_do_not_pair_the_lane_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """A day of appends pairs the lane whole once; each append after that only looks at
    the marks it added (and the turns they touch)."""
    clear_memos()
    whole: list[int] = []
    real = turns._pair_turns_state

    def counted(fold: LaneFold, cut: int, restores: bool) -> Any:
        whole.append(len(fold.turn_starts))
        return real(fold, cut, restores)

    monkeypatch.setattr(turns, "_pair_turns_state", counted)
    marks: list[tuple[int, tuple[Any, ...]]] = []
    for n in range(200):
        marks.append((2 * n, ("start", f"t{n}", 10 * n, None)))
        fold = _fold(marks)
        assert turns.pair_turns(fold, 0, True, lane="lead") == real(fold, 0, True).pairing
        marks.append((2 * n + 1, ("end", f"t{n}", 10 * n + 5, "ended")))
        if n % 50 == 49:
            marks.append((2 * n + 1, ("seed", None, 10 * n + 6, None)))
    assert whole == [1]
    clear_memos()


def test_an_end_without_a_turn_id_makes_the_lane_paired_whole() -> None:
    """Which turn such an end closes depends on all the turns open before it."""
    clear_memos()
    marks: list[tuple[int, tuple[Any, ...]]] = [(0, ("start", "a", 1, None))]
    turns.pair_turns(_fold(marks), 0, False, lane="lead")
    marks += [(1, ("start", "b", 2, None)), (2, ("end", None, 3, "ended"))]
    fold = _fold(marks)
    got = turns.pair_turns(fold, 0, False, lane="lead")
    assert got == turns._pair_turns(fold, 0, False) and got.closed_by_idless_end == 1
    assert turns._RESUMABLE.get("lead") is turns._NOT_RESUMABLE
    clear_memos()


def test_the_resume_states_keep_their_marks_when_filled_past_them() -> None:
    clear_memos()
    try:
        limit = turns.RESUME_MARKS_KEPT
        heavy = {f"t{n}": n for n in range(limit // 8)}
        for n in range(turns._RESUMABLE._max_entries + 20):
            state = turns._Paired(
                turns.TurnPairing((), 0, 0, 0, 0, 0),
                True,
                LaneFold(),
                0,
                False,
                heavy,
                {},
                {},
                -1,
                (),
                frozenset(),
            )
            turns._RESUMABLE.put(("lane", n), state)
            assert turns._RESUMABLE.weight <= limit
        assert len(turns._RESUMABLE) <= 8
    finally:
        clear_memos()


def test_a_resume_state_holds_no_pair_per_turn_beside_the_fold() -> None:
    """A lane's resume state names each turn id's winning marks by the fold's own seqs
    (the very int objects): a day's lead holds tens of thousands of turns, and a
    ``(seq, mark)`` pair for each start and end was ~2 blocks a turn beside the data,
    kept for every lane and growing with every append."""
    clear_memos()
    try:
        marks: list[tuple[int, tuple[Any, ...]]] = []
        for n in range(400):
            marks.append((1000 + 2 * n, ("start", f"t{n}", 10 * n, None)))
            marks.append((1001 + 2 * n, ("end", f"t{n}", 10 * n + 5, "ended")))
        fold = _fold(marks)
        got = turns.pair_turns(fold, 0, False, lane="lead")
        assert got == turns._pair_turns(fold, 0, False) and len(got.spans) == 400
        state = turns._RESUMABLE.get("lead")
        assert state is not None and state.resumable
        for best, held in ((state.starts, fold.turn_starts), (state.ends, fold.turn_ends)):
            keys = set(map(id, held))
            assert len(best) == 400 and all(id(seq) in keys for seq in best.values())
    finally:
        clear_memos()
