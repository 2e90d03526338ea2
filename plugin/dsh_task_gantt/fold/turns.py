"""Turn spans: pair ``turn/start`` and ``turn/end`` by turn id (pure).

Decisions (each counted, see :class:`TurnPairing`):
- duplicate starts for one turn id: the earliest ``(time, seq)`` wins;
- several ends: the earliest dated ``(time, seq)`` end wins;
- a start without a time yields no span (a time is never invented);
- an end with no start (after the seed cut) is an orphan: counted, not drawn;
- an end dated before its start closes the turn at its start (zero length), counted;
- an end without a time closes the turn, but its end is unknown (``end = None``);
- an end without a turn id (format 0 and several writers) closes the latest turn
  still open before it; with none open it is an orphan;
- in a log that inherited nothing, a ``session/end-seed`` is a reload marker: a turn
  still open before it ended there, ``interrupted`` (asked for with ``restores``).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right, insort
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, replace
from functools import partial
from operator import attrgetter
from typing import NamedTuple

from ..memo import HISTORY_ITEMS_KEPT, Memo, Same
from .appends import appended_seqs
from .records import LaneFold, TurnMark


class TurnSpan(NamedTuple):
    """One drawn turn (a named tuple: a lead has thousands, rebuilt after appends)."""

    turn_id: str
    time: int
    seq: int
    end: int | None
    #: ``turn/end`` reason kind; ``None`` while no end was recorded.
    reason: str | None

    @property
    def closed(self) -> bool:
        return self.reason is not None


@dataclass(frozen=True, slots=True)
class TurnPairing:
    spans: tuple[TurnSpan, ...]
    orphan_ends: int
    duplicate_starts: int
    ends_before_start: int
    undated_starts: int
    idless_events: int
    #: Spans with no end recorded (counted once: every poll asks).
    open_turns: int = 0
    #: Turns closed by an end without a turn id.
    closed_by_idless_end: int = 0
    #: Turns closed at a reload marker, as interrupted.
    closed_by_restore: int = 0


#: Turn spans the pairing memo holds in all (~100 bytes each).
PAIRED_SPANS_KEPT = HISTORY_ITEMS_KEPT


def _rank(item: tuple[int, TurnMark]) -> tuple[bool, int, int]:
    seq, mark = item
    return (mark.time is None, mark.time or 0, seq)


#: Recent pairings by fold identity. A LaneFold never changes once built, so an
#: unchanged lane (most lanes, most polls) is not paired again. Bounded by entries and
#: by the spans they hold (a lead's pairing grows with its history; after an append
#: its old one is never asked for again): a few big teams' current lanes fit. One
#: version per lane: its key holds the fold, and the fold before an append held its own
#: copies of every map the append changed (a lead's day of turn, step and usage maps,
#: alive twice while a second version was kept).
PAIRINGS_PER_LANE = 1
_PAIRINGS: Memo[tuple[Same[LaneFold], int, bool], TurnPairing] = Memo(
    256,
    max_weight=PAIRED_SPANS_KEPT,
    weight=lambda p: len(p.spans) + 1,
    per_slot=PAIRINGS_PER_LANE,
)


def pair_turns(
    fold: LaneFold,
    cut: int = 0,
    restores: bool = False,
    lane: Hashable | None = None,
    owner: str | None = None,
) -> TurnPairing:
    """Turn spans of a lane (from ``cut`` on); memoised per fold (pure, so safe).

    ``restores``: the log inherited nothing, so its ``session/end-seed`` markers
    are reloads that end the turns open before them. ``lane``: which lane the fold is
    (its memo keeps the last two versions of a lane: the older ones are dead; and a
    fold that only grew by appended seqs is paired from the lane's last pairing);
    ``owner``: its session, whose entries go when the service forgets it."""
    key = (Same(fold), cut, restores)
    hit = _PAIRINGS.get(key)
    if hit is not None:
        return hit
    held = _RESUMABLE.get(lane) if lane is not None else None
    state = None
    if held is not None and held.cut == cut and held.restores == restores:
        state = _resume(held, fold)
    if state is None:
        state = _pair_turns_state(fold, cut, restores)
    if lane is not None:
        if state.resumable:
            _RESUMABLE.put(lane, state, owner=owner)
        elif held is not None:
            _RESUMABLE.put(lane, _NOT_RESUMABLE, owner=owner)  # the old one is dead
    # A slot per lane and cut: a lane seen from two cuts keeps each one's pairing.
    slot = (lane, cut, restores) if lane is not None else None
    return _PAIRINGS.put(key, state.pairing, slot=slot, owner=owner)


_SPAN_ORDER = attrgetter("time", "seq", "turn_id")
#: ``TurnSpan(...)`` without the named tuple's generated ``__new__`` (a hot path).
_new_span: Callable[[tuple[str, int, int, int | None, str | None]], TurnSpan] = partial(
    tuple.__new__, TurnSpan
)
#: Each turn id's winning mark, by its seq in the fold's marks (the fold holds the mark;
#: a resume state holds a lane's every turn id, so no pair per turn beside it).
_Best = dict[str, int]


@dataclass(frozen=True, slots=True)
class _Paired:
    """A pairing and what resuming it after an append needs (never mutated: a resumed
    one copies the dicts, a C-level copy, far cheaper than pairing every mark again)."""

    pairing: TurnPairing
    #: False when an end without a turn id was seen: which turn it closes depends on
    #: every turn open before it, so such a lane is always paired whole.
    resumable: bool
    fold: LaneFold
    cut: int
    restores: bool
    starts: _Best
    ends: _Best
    extra_ends: Mapping[str, int]
    #: The highest seq among the fold's turn marks and end-seeds: a fold is resumed
    #: only when every new one is above it (an append), so no seq order changes.
    top: int
    #: The reload markers (from ``cut`` on, when ``restores``), ascending.
    markers: tuple[int, ...]
    #: Turns started and neither ended nor interrupted (a new marker closes them).
    unclosed: frozenset[str]


def _unresumable(pairing: TurnPairing) -> _Paired:
    return _Paired(pairing, False, LaneFold(), -1, False, {}, {}, {}, -1, (), frozenset())


_NOT_RESUMABLE = _unresumable(TurnPairing((), 0, 0, 0, 0, 0))
#: Turn marks the resume states hold in all (their dicts, one entry per turn id).
#: (Two marks per turn, a start and an end, at one version per lane.)
RESUME_MARKS_KEPT = HISTORY_ITEMS_KEPT
#: Each lane's last pairing and its working state, by lane: the next append resumes
#: from it. One entry per lane (its last version), bounded by lanes and by marks.
_RESUMABLE: Memo[Hashable, _Paired] = Memo(
    256, max_weight=RESUME_MARKS_KEPT, weight=lambda s: len(s.starts) + len(s.ends) + 1
)


def _top(fold: LaneFold) -> int:
    return max(
        max(fold.turn_starts, default=-1),
        max(fold.turn_ends, default=-1),
        max(fold.end_seeds, default=-1),
    )


def _resume(held: _Paired, fold: LaneFold) -> _Paired | None:
    """``held`` advanced to ``fold``, when ``fold`` only appended marks to its fold;
    ``None``: pair the fold whole."""
    if not held.resumable:
        return None
    old = held.fold
    new_starts = appended_seqs(old.turn_starts, fold.turn_starts, held.top)
    new_ends = appended_seqs(old.turn_ends, fold.turn_ends, held.top)
    new_seeds = appended_seqs(old.end_seeds, fold.end_seeds, held.top)
    if new_starts is None or new_ends is None or new_seeds is None:
        return None
    if not (new_starts or new_ends or new_seeds):
        # No turn mark came (most appends are steps): the very same pairing, so what
        # is memoised by its identity (the lane's spans) holds too.
        return replace(held, fold=fold)
    cut = held.cut
    ends_marks = [(s, fold.turn_ends[s]) for s in new_ends if s >= cut]
    if any(mark.turn_id is None for _s, mark in ends_marks):
        return None  # an end without a turn id: see _Paired.resumable
    starts, ends = dict(held.starts), dict(held.ends)
    extra_ends = dict(held.extra_ends)
    p = held.pairing
    duplicate_starts, idless = p.duplicate_starts, p.idless_events
    touched: set[str] = set()
    for seq in new_starts:
        mark = fold.turn_starts[seq]
        if seq < cut:
            continue
        if mark.turn_id is None:
            idless += 1
            continue
        duplicate_starts += _compete(starts, fold.turn_starts, mark.turn_id, seq, mark)
        touched.add(mark.turn_id)
    for seq, mark in ends_marks:
        assert mark.turn_id is not None
        if _compete(ends, fold.turn_ends, mark.turn_id, seq, mark):
            extra_ends[mark.turn_id] = extra_ends.get(mark.turn_id, 0) + 1
        touched.add(mark.turn_id)
    markers = held.markers
    added_markers = sorted(s for s in new_seeds if s >= cut) if held.restores else []
    if added_markers:
        markers = (*markers, *added_markers)
        touched |= held.unclosed  # all started before the new markers
    # Each touched turn's old outcome out, its new one in; the others stay as they were.
    spans = list(p.spans)
    orphans, before, undated = p.orphan_ends, p.ends_before_start, p.undated_starts
    open_turns, by_restore = p.open_turns, p.closed_by_restore
    unclosed = set(held.unclosed)
    for turn_id in touched:
        was = _outcome(turn_id, held.starts, held.ends, held.extra_ends, held.markers, old)
        now = _outcome(turn_id, starts, ends, extra_ends, markers, fold)
        if was == now:
            continue
        if was.span is not None:
            at = bisect_left(spans, _SPAN_ORDER(was.span), key=_SPAN_ORDER)
            if at == len(spans) or spans[at] != was.span:
                return None  # not the pairing it was made from: pair the fold whole
            del spans[at]
        if now.span is not None:
            insort(spans, now.span, key=_SPAN_ORDER)
        orphans += now.orphans - was.orphans
        before += now.before - was.before
        undated += now.undated - was.undated
        open_turns += now.open - was.open
        by_restore += now.restored - was.restored
        if now.unclosed:
            unclosed.add(turn_id)
        else:
            unclosed.discard(turn_id)
    pairing = TurnPairing(
        tuple(spans), orphans, duplicate_starts, before, undated, idless, open_turns, 0, by_restore
    )
    top = max([held.top, *new_starts, *new_ends, *new_seeds])
    return _Paired(
        pairing,
        True,
        fold,
        cut,
        held.restores,
        starts,
        ends,
        extra_ends,
        top,
        markers,
        frozenset(unclosed),
    )


def _compete(
    best: _Best, marks: Mapping[int, TurnMark], turn_id: str, seq: int, mark: TurnMark
) -> int:
    """Keep the better of ``best[turn_id]`` (a seq in ``marks``) and this mark; 1 when
    one was held already."""
    held = best.get(turn_id)
    if held is None:
        best[turn_id] = seq
        return 0
    if _rank((seq, mark)) < _rank((held, marks[held])):
        best[turn_id] = seq
    return 1


class _Outcome(NamedTuple):
    """What one turn id adds to a pairing (as :func:`_pair_turns_state` decides it)."""

    span: TurnSpan | None
    orphans: int
    before: int
    undated: int
    open: int
    restored: int
    unclosed: bool


def _outcome(
    turn_id: str,
    starts: _Best,
    ends: _Best,
    extra_ends: Mapping[str, int],
    markers: tuple[int, ...],
    fold: LaneFold,
) -> _Outcome:
    """One turn id's span and counts, by the rules of the whole pass (no idless ends)."""
    seq = starts.get(turn_id)
    end_seq = ends.get(turn_id)
    if seq is None:
        orphans = 1 + extra_ends.get(turn_id, 0) if end_seq is not None else 0
        return _Outcome(None, orphans, 0, 0, 0, 0, False)
    first = fold.turn_starts[seq]
    closing = (end_seq, fold.turn_ends[end_seq]) if end_seq is not None else None
    restored = 0
    if closing is None and markers:
        at = bisect_right(markers, seq)
        if at < len(markers):
            marker = markers[at]
            closing = (marker, TurnMark(turn_id, fold.end_seeds[marker], "interrupted"))
            restored = 1
    if first.time is None:
        return _Outcome(None, 0, 0, 1, 0, restored, closing is None)
    end: int | None = None
    reason: str | None = None
    before = 0
    if closing is not None:
        last = closing[1]
        reason = last.reason or "ended"
        end = last.time
        if end is not None and end < first.time:
            before = 1
            end = first.time
    span = _new_span((turn_id, first.time, seq, end, reason))
    return _Outcome(span, 0, before, 0, int(reason is None), restored, closing is None)


def _pair_turns(fold: LaneFold, cut: int, restores: bool) -> TurnPairing:
    return _pair_turns_state(fold, cut, restores).pairing


def _pair_turns_state(fold: LaneFold, cut: int, restores: bool) -> _Paired:
    # The first mark of each turn id (by _rank), and how many more there were. Nearly
    # every turn has one start and one end, so no lists: a later mark only competes.
    starts: _Best = {}
    ends: _Best = {}
    extra_ends: dict[str, int] = {}
    duplicate_starts = 0
    idless = 0
    idless_ends: list[tuple[int, TurnMark]] = []
    for source, best in ((fold.turn_starts, starts), (fold.turn_ends, ends)):
        for seq, mark in source.items():
            if seq < cut:
                continue
            turn_id = mark.turn_id
            if turn_id is None:
                if best is ends:
                    idless_ends.append((seq, mark))
                else:
                    idless += 1
                continue
            held = best.get(turn_id)
            if held is None:
                best[turn_id] = seq
                continue
            if best is starts:
                duplicate_starts += 1
            else:
                extra_ends[turn_id] = extra_ends.get(turn_id, 0) + 1
            if _rank((seq, mark)) < _rank((held, source[held])):
                best[turn_id] = seq
    # Ends of turns that never started (every one of them, duplicates included).
    orphans = sum(1 + extra_ends.get(t, 0) for t in ends if t not in starts)
    # An end without a turn id closes the latest turn open before it (in seq order).
    by_idless = 0
    if idless_ends:
        open_seqs = sorted((seq, turn_id) for turn_id, seq in starts.items() if turn_id not in ends)
        for end_seq, _mark in sorted(idless_ends):
            at = bisect_left(open_seqs, (end_seq, "")) - 1
            if at < 0:
                orphans += 1
                continue
            _start_seq, turn_id = open_seqs.pop(at)
            ends[turn_id] = end_seq
            by_idless += 1
    # A reload marker ends every turn still open before it (at the first one after it).
    # (Kept apart from ``ends``: a resumed pairing applies the markers afresh.)
    markers = sorted(s for s in fold.end_seeds if s >= cut) if restores else []
    interrupted: dict[str, tuple[int, TurnMark]] = {}
    if markers:
        for turn_id, seq in starts.items():
            at = bisect_right(markers, seq)
            if turn_id not in ends and at < len(markers):
                marker = markers[at]
                interrupted[turn_id] = (
                    marker,
                    TurnMark(turn_id, fold.end_seeds[marker], "interrupted"),
                )
    spans: list[TurnSpan] = []
    unclosed: list[str] = []
    undated = before = 0
    turn_starts, turn_ends = fold.turn_starts, fold.turn_ends
    for turn_id, seq in starts.items():
        first = turn_starts[seq]
        won = ends.get(turn_id)
        closing = (won, turn_ends[won]) if won is not None else None
        if closing is None:
            closing = interrupted.get(turn_id) if interrupted else None
            if closing is None:
                unclosed.append(turn_id)
        if first.time is None:
            undated += 1
            continue
        end: int | None = None
        reason: str | None = None
        if closing is not None:
            last = closing[1]
            reason = last.reason or "ended"
            end = last.time
            if end is not None and end < first.time:
                before += 1
                end = first.time
        spans.append(_new_span((turn_id, first.time, seq, end, reason)))
    spans.sort(key=_SPAN_ORDER)
    open_turns = sum(1 for span in spans if span.reason is None)
    pairing = TurnPairing(
        tuple(spans),
        orphans,
        duplicate_starts,
        before,
        undated,
        idless,
        open_turns,
        by_idless,
        len(interrupted),
    )
    if idless_ends:
        return _unresumable(pairing)
    return _Paired(
        pairing,
        True,
        fold,
        cut,
        restores,
        starts,
        ends,
        extra_ends,
        _top(fold),
        tuple(markers),
        frozenset(unclosed),
    )


def open_steps(fold: LaneFold, cut: int = 0) -> int:
    """1 when the latest step (at or after ``cut``) started and has not ended, else 0."""
    start, end = fold.step_marks
    return 1 if start >= cut and end < start else 0
