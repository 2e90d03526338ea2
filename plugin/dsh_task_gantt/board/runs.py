"""A chunk's turns grouped and marks put on one row, resumed where the last layout of
the chunk left off.

Both are greedy passes in time order at a gap (turns closer than it are one group) or
a spacing (marks closer than it are one cluster) that doubles until the chunk's
elements fit its budget (``detail.group_turns`` and ``detail.place_marks`` say the
rules). Seen whole at 400 px, the last chunk of a day-long team holds hours of turns and
thousands of marks, and an append changes a few at its end. So each pass keeps its state
after a prefix of the chunk's items (before the open turns at its end, and a few marks
before its last): the next layout of the chunk, whose items are the very same objects up
to there, goes on from that state instead of passing over the hours again. The result
is the one a pass from the start gives (``tests/test_runs.py`` holds them to it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from .geometry import seconds
from .model import Cluster, Mark, Tone, TurnBar, TurnGroup

#: Marks before the last of a chunk where its state is kept: a mark near the end may
#: change (a message delivered after it was sent), and the pass goes on from before it.
MARKS_REDONE = 8


# -- turns ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _TurnPass:
    """A pass over a prefix of the bars at one gap: the elements it closed (``None``
    when only their number is kept), their number, and the run it is in (its first bar,
    its length and its latest end)."""

    closed: tuple[TurnBar | TurnGroup, ...] | None
    closed_count: int
    first: TurnBar | None
    length: int
    run_end: int

    @property
    def elements(self) -> int:
        return self.closed_count + (1 if self.length else 0)


_NO_TURNS = _TurnPass((), 0, None, 0, 0)


@dataclass(frozen=True, slots=True)
class TurnsKept:
    """Where a chunk's turn grouping can go on from: every gap's pass after the first
    ``pos`` bars (the last pass, at the gap the chunk was drawn with, keeps its
    elements), and the earliest start and latest end among those bars."""

    pos: int
    passes: tuple[_TurnPass, ...]
    earliest: int | None
    latest: int | None


def _flushed(first: TurnBar, length: int, run_end: int, origin: int) -> TurnBar | TurnGroup:
    if length == 1:
        return first
    start = first.start
    return TurnGroup(
        t=seconds(start, origin),
        d=round((run_end - start) / 1000, 3),
        start=start,
        end=run_end,
        count=length,
    )


def _turn_pass(
    bars: Sequence[TurnBar], begin: int, end: int, at: _TurnPass, gap_ms: float, origin: int
) -> _TurnPass:
    """``at`` carried over ``bars[begin:end]``: consecutive closed turns less than
    ``gap_ms`` apart are one run; an open turn stays itself (it reaches the now-line)."""
    closed = None if at.closed is None else list(at.closed)
    n, first, length, run_end = at.closed_count, at.first, at.length, at.run_end
    for i in range(begin, end):
        bar = bars[i]
        if bar.open:
            if length:
                n += 1
                if closed is not None:
                    assert first is not None
                    closed.append(_flushed(first, length, run_end, origin))
                first, length = None, 0
            n += 1
            if closed is not None:
                closed.append(bar)
            continue
        if length and bar.start - run_end >= gap_ms:
            n += 1
            if closed is not None:
                assert first is not None
                closed.append(_flushed(first, length, run_end, origin))
            length = 0
        if length:
            run_end = max(run_end, bar.end)
            length += 1
        else:
            first, run_end, length = bar, bar.end, 1
    return _TurnPass(None if closed is None else tuple(closed), n, first, length, run_end)


def _turn_elements(done: _TurnPass, origin: int) -> list[TurnBar | TurnGroup]:
    assert done.closed is not None
    elements = list(done.closed)
    if done.length:
        assert done.first is not None
        elements.append(_flushed(done.first, done.length, done.run_end, origin))
    return elements


def group_turns_from(
    bars: Sequence[TurnBar],
    px_per_ms: float,
    origin: int,
    budget: int | None,
    merge_px: float,
    kept: TurnsKept | None = None,
    head: int = 0,
) -> tuple[list[TurnBar | TurnGroup], TurnsKept]:
    """The bars grouped at ``merge_px`` (doubled while the groups are more than
    ``budget`` and the gap is within the bars' span), and where to go on from next time.
    ``kept``: what the last grouping of these bars' chunk left, ``head`` the bars it and
    these share (the very same objects) from the start; used when it reaches ``kept``."""
    trailing_open = 0
    while trailing_open < len(bars) and bars[len(bars) - 1 - trailing_open].open:
        trailing_open += 1
    pos = len(bars) - trailing_open
    resumed = kept if kept is not None and kept.pos <= head and kept.pos <= pos else None
    begin = resumed.pos if resumed is not None else 0
    earliest = resumed.earliest if resumed is not None else None
    latest = resumed.latest if resumed is not None else None
    for i in range(begin, pos):
        bar = bars[i]
        earliest = bar.start if earliest is None else min(earliest, bar.start)
        latest = bar.end if latest is None else max(latest, bar.end)
    starts = [bar.start for bar in bars[pos:]]
    ends = [bar.end for bar in bars[pos:]]
    if earliest is not None:
        starts.append(earliest)
    if latest is not None:
        ends.append(latest)
    span_ms = max(ends) - min(starts) if starts else 0
    passes: list[_TurnPass] = []
    level = 0
    while True:
        gap_ms = merge_px / px_per_ms
        if resumed is not None and level < len(resumed.passes):
            at = _turn_pass(bars, begin, pos, resumed.passes[level], gap_ms, origin)
        else:
            at = _turn_pass(bars, 0, pos, _NO_TURNS, gap_ms, origin)
        done = _turn_pass(bars, pos, len(bars), at, gap_ms, origin)
        passes.append(at)
        # A gap wider than the turns' whole span already merges every closed turn.
        if budget is None or done.elements <= budget or gap_ms > span_ms:
            break
        merge_px *= 2
        level += 1
    if done.closed is None:
        # This gap's pass was carried on counting only (an edit made fewer groups than
        # last time): its elements are made once more, from the start.
        at = _turn_pass(bars, 0, pos, _NO_TURNS, gap_ms, origin)
        done = _turn_pass(bars, pos, len(bars), at, gap_ms, origin)
        passes[-1] = at
    # Only the drawn gap's elements are kept; the narrower gaps' counts suffice.
    kept_passes = (*(replace(p, closed=None) for p in passes[:-1]), passes[-1])
    return _turn_elements(done, origin), TurnsKept(pos, kept_passes, earliest, latest)


# -- marks on one row ------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _MarkPass:
    """A pass over a prefix of the marks at one spacing: the elements it closed
    (``None``: only their number), their number, and the run it is in: its first mark,
    length and, when the elements are kept, its marks on row 0 and their tones."""

    closed: tuple[Mark | Cluster, ...] | None
    closed_count: int
    first: Mark | None
    length: int
    run: tuple[Mark, ...]
    tones: tuple[Tone, ...]

    @property
    def elements(self) -> int:
        return self.closed_count + (1 if self.length else 0)


_NO_MARKS = _MarkPass((), 0, None, 0, (), ())


@dataclass(frozen=True, slots=True)
class MarksKept:
    """Where a chunk's one-row placing can go on from: every spacing's pass after the
    first ``pos`` marks (the last, at the spacing drawn, keeps its elements)."""

    pos: int
    passes: tuple[_MarkPass, ...]


def on_row(mark: Mark, row: int) -> Mark:
    """The mark on this row: itself when it is there already (marks are made on row 0,
    and a copy of each of thousands at every layout showed up)."""
    return mark if mark.row == row else replace(mark, row=row)


def cluster_of(
    marks: tuple[Mark, ...],
    row: int,
    tones_kept: int,
    *,
    run: bool = False,
    tones: Sequence[Tone] | None = None,
) -> Cluster:
    """Marks drawn as one chip (``tones``: their distinct tones in order, if known)."""
    if tones is None:
        seen: list[Tone] = []
        for mark in marks:
            if mark.tone not in seen:
                seen.append(mark.tone)
        tones = seen
    first, last = marks[0], marks[-1]
    return Cluster(
        t=first.t,
        row=row,
        start=first.ms,
        end=last.ms,
        count=len(marks),
        tones=tuple(tones[:tones_kept]),
        marks=marks,
        run=run,
    )


def _mark_closed(at: _MarkPass, tones_kept: int) -> Mark | Cluster:
    assert at.first is not None
    if at.length == 1:
        return on_row(at.first, 0)
    return cluster_of(at.run, 0, tones_kept, run=True, tones=at.tones)


def _mark_pass(
    marks: Sequence[Mark],
    begin: int,
    end: int,
    at: _MarkPass,
    px_per_ms: float,
    spacing_px: float,
    tones_kept: int,
) -> _MarkPass:
    """``at`` carried over ``marks[begin:end]``: a mark less than the spacing after its
    run's first mark joins the run."""
    keep = at.closed is not None
    closed = list(at.closed) if at.closed is not None else None
    n, first, length = at.closed_count, at.first, at.length
    run: list[Mark] = list(at.run) if keep else []
    tones: list[Tone] = list(at.tones) if keep else []
    for i in range(begin, end):
        mark = marks[i]
        if length and (mark.ms - first.ms) * px_per_ms < spacing_px:  # type: ignore[union-attr]
            length += 1
        else:
            if length:
                n += 1
                if closed is not None:
                    last = _MarkPass(None, 0, first, length, tuple(run), tuple(tones))
                    closed.append(_mark_closed(last, tones_kept))
            first, length = mark, 1
            if keep:
                run, tones = [], []
        if keep:
            run.append(on_row(mark, 0))
            if mark.tone not in tones:
                tones.append(mark.tone)
    return _MarkPass(
        None if closed is None else tuple(closed), n, first, length, tuple(run), tuple(tones)
    )


def _mark_elements(done: _MarkPass, tones_kept: int) -> list[Mark | Cluster]:
    assert done.closed is not None
    elements = list(done.closed)
    if done.length:
        elements.append(_mark_closed(done, tones_kept))
    return elements


def one_row_from(
    marks: Sequence[Mark],
    px_per_ms: float,
    budget: int | None,
    mark_px: float,
    tones_kept: int,
    kept: MarksKept | None = None,
    head: int = 0,
) -> tuple[list[Mark | Cluster], MarksKept]:
    """The marks on one row, each run closer than a spacing (``mark_px``, doubled while
    the elements are more than ``budget`` and more than one) one cluster; and where to
    go on from next time (``kept``, ``head``: as ``group_turns_from``)."""
    pos = max(0, len(marks) - MARKS_REDONE)
    resumed = kept if kept is not None and kept.pos <= head and kept.pos <= pos else None
    begin = resumed.pos if resumed is not None else 0
    passes: list[_MarkPass] = []
    spacing_px = mark_px
    level = 0
    while True:
        if resumed is not None and level < len(resumed.passes):
            at = _mark_pass(
                marks, begin, pos, resumed.passes[level], px_per_ms, spacing_px, tones_kept
            )
        else:
            at = _mark_pass(marks, 0, pos, _NO_MARKS, px_per_ms, spacing_px, tones_kept)
        done = _mark_pass(marks, pos, len(marks), at, px_per_ms, spacing_px, tones_kept)
        passes.append(at)
        if budget is None or done.elements <= max(budget, 1) or done.elements <= 1:
            break
        spacing_px *= 2
        level += 1
    if done.closed is None:
        at = _mark_pass(marks, 0, pos, _NO_MARKS, px_per_ms, spacing_px, tones_kept)
        done = _mark_pass(marks, pos, len(marks), at, px_per_ms, spacing_px, tones_kept)
        passes[-1] = at
    kept_passes = (*(replace(p, closed=None, run=(), tones=()) for p in passes[:-1]), passes[-1])
    return _mark_elements(done, tones_kept), MarksKept(pos, kept_passes)
