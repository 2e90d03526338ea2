"""Turn spans: pair ``turn/start`` and ``turn/end`` by turn id (pure).

Decisions (each counted, see :class:`TurnPairing`):
- duplicate starts for one turn id: the earliest ``(time, seq)`` wins;
- several ends: the earliest dated ``(time, seq)`` end wins;
- a start without a time yields no span (a time is never invented);
- an end with no start (after the seed cut) is an orphan: counted, not drawn;
- an end dated before its start closes the turn at its start (zero length), counted;
- an end without a time closes the turn, but its end is unknown (``end = None``).
"""

from __future__ import annotations

from dataclasses import dataclass

from .records import LaneFold, TurnMark


@dataclass(frozen=True, slots=True)
class TurnSpan:
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

    @property
    def open_turns(self) -> int:
        return sum(1 for span in self.spans if not span.closed)


def _rank(item: tuple[int, TurnMark]) -> tuple[bool, int, int]:
    seq, mark = item
    return (mark.time is None, mark.time or 0, seq)


#: Recent pairings by fold identity. A LaneFold never changes once built, so an
#: unchanged lane (most lanes, most polls) is not paired again; the entry holds the
#: fold itself, so its id cannot be reused while the entry lives.
_PAIRINGS: dict[tuple[int, int], tuple[LaneFold, TurnPairing]] = {}
_PAIRINGS_MAX = 256


def pair_turns(fold: LaneFold, cut: int = 0) -> TurnPairing:
    """Turn spans of a lane (from ``cut`` on); memoised per fold (pure, so safe)."""
    key = (id(fold), cut)
    hit = _PAIRINGS.get(key)
    if hit is not None and hit[0] is fold:
        return hit[1]
    pairing = _pair_turns(fold, cut)
    if len(_PAIRINGS) >= _PAIRINGS_MAX:
        _PAIRINGS.pop(next(iter(_PAIRINGS)))
    _PAIRINGS[key] = (fold, pairing)
    return pairing


def _pair_turns(fold: LaneFold, cut: int) -> TurnPairing:
    starts: dict[str, list[tuple[int, TurnMark]]] = {}
    ends: dict[str, list[tuple[int, TurnMark]]] = {}
    idless = 0
    for source, target in ((fold.turn_starts, starts), (fold.turn_ends, ends)):
        for seq, mark in source.items():
            if seq < cut:
                continue
            if mark.turn_id is None:
                idless += 1
                continue
            target.setdefault(mark.turn_id, []).append((seq, mark))
    spans: list[TurnSpan] = []
    duplicate_starts = undated = before = 0
    for turn_id, group in starts.items():
        duplicate_starts += len(group) - 1
        seq, first = min(group, key=_rank)
        if first.time is None:
            undated += 1
            continue
        end: int | None = None
        reason: str | None = None
        closing = ends.get(turn_id)
        if closing:
            _, last = min(closing, key=_rank)
            reason = last.reason or "ended"
            end = last.time
            if end is not None and end < first.time:
                before += 1
                end = first.time
        spans.append(TurnSpan(turn_id, first.time, seq, end, reason))
    orphans = sum(len(group) for turn_id, group in ends.items() if turn_id not in starts)
    spans.sort(key=lambda s: (s.time, s.seq, s.turn_id))
    return TurnPairing(tuple(spans), orphans, duplicate_starts, before, undated, idless)


def open_steps(fold: LaneFold, cut: int = 0) -> int:
    """1 when the latest step (at or after ``cut``) started and has not ended, else 0."""
    start, end = fold.step_marks
    return 1 if start >= cut and end < start else 0
