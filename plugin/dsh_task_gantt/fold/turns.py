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

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from functools import partial
from operator import attrgetter
from typing import NamedTuple

from ..memo import Memo, Same
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
PAIRED_SPANS_KEPT = 1 << 15


def _rank(item: tuple[int, TurnMark]) -> tuple[bool, int, int]:
    seq, mark = item
    return (mark.time is None, mark.time or 0, seq)


#: Recent pairings by fold identity. A LaneFold never changes once built, so an
#: unchanged lane (most lanes, most polls) is not paired again. Bounded by entries and
#: by the spans they hold (a lead's pairing grows with its history; after an append
#: its old one is never asked for again): a few big teams' current lanes fit.
_PAIRINGS: Memo[tuple[Same[LaneFold], int, bool], TurnPairing] = Memo(
    256, max_weight=PAIRED_SPANS_KEPT, weight=lambda p: len(p.spans) + 1, per_slot=2
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
    (its memo keeps the last two versions of a lane: the older ones are dead);
    ``owner``: its session, whose entries go when the service forgets it."""
    key = (Same(fold), cut, restores)
    hit = _PAIRINGS.get(key)
    if hit is not None:
        return hit
    return _PAIRINGS.put(key, _pair_turns(fold, cut, restores), slot=lane, owner=owner)


_SPAN_ORDER = attrgetter("time", "seq", "turn_id")
#: ``TurnSpan(...)`` without the named tuple's generated ``__new__`` (a hot path).
_new_span: Callable[[tuple[str, int, int, int | None, str | None]], TurnSpan] = partial(
    tuple.__new__, TurnSpan
)


def _pair_turns(fold: LaneFold, cut: int, restores: bool) -> TurnPairing:
    # The first mark of each turn id (by _rank), and how many more there were. Nearly
    # every turn has one start and one end, so no lists: a later mark only competes.
    starts: dict[str, tuple[int, TurnMark]] = {}
    ends: dict[str, tuple[int, TurnMark]] = {}
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
                best[turn_id] = (seq, mark)
                continue
            if best is starts:
                duplicate_starts += 1
            else:
                extra_ends[turn_id] = extra_ends.get(turn_id, 0) + 1
            if _rank((seq, mark)) < _rank(held):
                best[turn_id] = (seq, mark)
    # Ends of turns that never started (every one of them, duplicates included).
    orphans = sum(1 + extra_ends.get(t, 0) for t in ends if t not in starts)
    # An end without a turn id closes the latest turn open before it (in seq order).
    by_idless = 0
    if idless_ends:
        open_seqs = sorted(
            (seq, turn_id) for turn_id, (seq, _m) in starts.items() if turn_id not in ends
        )
        for end_seq, mark in sorted(idless_ends):
            at = bisect_left(open_seqs, (end_seq, "")) - 1
            if at < 0:
                orphans += 1
                continue
            _start_seq, turn_id = open_seqs.pop(at)
            ends[turn_id] = (end_seq, mark)
            by_idless += 1
    # A reload marker ends every turn still open before it (at the first one after it).
    markers = sorted(s for s in fold.end_seeds if s >= cut) if restores else []
    by_restore = 0
    if markers:
        for turn_id, (seq, _m) in starts.items():
            at = bisect_right(markers, seq)
            if turn_id not in ends and at < len(markers):
                marker = markers[at]
                ends[turn_id] = (marker, TurnMark(turn_id, fold.end_seeds[marker], "interrupted"))
                by_restore += 1
    spans: list[TurnSpan] = []
    undated = before = 0
    for turn_id, (seq, first) in starts.items():
        if first.time is None:
            undated += 1
            continue
        end: int | None = None
        reason: str | None = None
        closing = ends.get(turn_id)
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
    return TurnPairing(
        tuple(spans),
        orphans,
        duplicate_starts,
        before,
        undated,
        idless,
        open_turns,
        by_idless,
        by_restore,
    )


def open_steps(fold: LaneFold, cut: int = 0) -> int:
    """1 when the latest step (at or after ``cut``) started and has not ended, else 0."""
    start, end = fold.step_marks
    return 1 if start >= cut and end < start else 0
