"""Level of detail: a lane's turns and marks in time chunks, crowded ones as aggregates.

A lane is drawn as chunks of a fixed time width (a power of two in ms, about
:data:`CHUNK_PX` pixels at the board's scale). A chunk's content depends on its own
turns and marks only, so an append redraws the chunk it lands in and nothing else.
Within a chunk, turns closer than :data:`MERGE_PX` become one bar with a count, and a
mark that finds no free row among :data:`MARK_ROWS` joins the nearest mark as a
cluster with a count; both open a list of what they hold. A chunk never draws more
than one turn element per :data:`TURN_BUDGET_PX` and one mark element per
:data:`MARK_BUDGET_PX` of its width: past that, the gaps that merge turns and the runs
that make a cluster widen until it fits, so a board's size follows its pixels. The
scale used here is the board's pixels per ms rounded down to a power of two, so it
changes rarely while a live extent grows.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from itertools import islice
from operator import attrgetter, le
from typing import Any

from ..memo import HISTORY_ITEMS_KEPT, Memo
from ..timeline.identity import common_head, passed_head
from .model import Cluster, LaneChunk, Mark, TurnBar, TurnGroup
from .runs import (
    MarksKept,
    TurnsKept,
    cluster_of,
    group_turns_from,
    on_row,
    one_row_from,
)

#: A chunk is about this many pixels wide at the board's scale: small enough that an
#: append redraws a few kB, large enough that a lane is a handful of chunks per screen.
CHUNK_PX = 64
#: Turns whose gap is under this many pixels are drawn as one bar with a count.
MERGE_PX = 2.0
#: A mark is a glyph chip this wide; closer marks go to the next row so each stays clickable.
MARK_PX = 14
MARK_ROWS = 3
#: Colours shown on a cluster (its counterparts'), at most.
CLUSTER_TONES = 3
#: At most one turn element and one mark element per this many pixels of a chunk (at the
#: board's rounded scale, which is at most the real one): the board's size follows its
#: pixels at every zoom, however crowded the lane. Past it, turns merge across wider gaps
#: and marks gather into wider clusters (each opens a list of what it holds).
TURN_BUDGET_PX = 20
MARK_BUDGET_PX = 8


@dataclass(frozen=True, slots=True)
class Drawn:
    """The chunks drawn when zoomed in: ``first``..``last`` around the window and, on a
    live board, every chunk from ``live_from`` on (new activity lands there; it is drawn
    even while the user looks back, so an append never needs the board again)."""

    first: int
    last: int
    live_from: int | None = None

    def __contains__(self, index: object) -> bool:
        if not isinstance(index, int):
            return False
        return self.first <= index <= self.last or (
            self.live_from is not None and index >= self.live_from
        )


@dataclass(frozen=True, slots=True)
class Scale:
    """Pixels per ms rounded down to a power of two, and the chunk width it implies."""

    exponent: int

    @classmethod
    def of(cls, px_per_ms: float) -> Scale:
        if not px_per_ms > 0 or math.isinf(px_per_ms):
            return cls(0)
        return cls(math.floor(math.log2(px_per_ms)))

    @property
    def px_per_ms(self) -> float:
        return 2.0**self.exponent

    @property
    def chunk_ms(self) -> int:
        return 1 << max(0, math.ceil(math.log2(CHUNK_PX / self.px_per_ms)))


def chunk_index(ms: int, origin: int, chunk_ms: int) -> int:
    return (ms - origin) // chunk_ms


def chunk_budget(chunk_ms: int, px_per_ms: float, budget_px: int) -> int:
    """How many elements of one kind a chunk this wide may draw (at least one)."""
    return max(1, int(chunk_ms * px_per_ms) // budget_px)


def group_turns(
    bars: Sequence[TurnBar],
    px_per_ms: float,
    origin: int,
    budget: int | None = None,
    kept: TurnsKept | None = None,
    head: int = 0,
) -> tuple[list[TurnBar | TurnGroup], TurnsKept]:
    """Consecutive closed turns less than MERGE_PX apart as one group (an open turn stays
    itself: it reaches the now-line); more than ``budget`` elements: the gap that merges
    doubles until they fit. With what the chunk's last grouping ``kept`` and the bars it
    shares with these (``head``), the pass goes on from there (``runs``)."""
    return group_turns_from(bars, px_per_ms, origin, budget, MERGE_PX, kept, head)


def place_marks(
    marks: Sequence[Mark],
    px_per_ms: float,
    budget: int | None = None,
    kept: MarksKept | None = None,
    head: int = 0,
) -> tuple[list[Mark | Cluster], int, MarksKept | None]:
    """Greedy rows in time order; a mark with no free row joins the latest slot as a cluster.

    A chunk denser than its rows of chips (a long team seen whole), or than ``budget``
    elements, is drawn on one row: each run of marks closer than a spacing (a chip's
    width, doubled until the runs fit the budget) is one cluster, so the marks drawn
    follow the pixels, not the messages. Returns the elements, the rows used, and where
    a one-row placing goes on from next time (``kept``, ``head``: as ``group_turns``)."""
    if len(marks) > MARK_ROWS * CHUNK_PX / MARK_PX:
        placed, kept = one_row_from(marks, px_per_ms, budget, MARK_PX, CLUSTER_TONES, kept, head)
        return placed, 1, kept
    in_rows, rows = _in_rows(marks, px_per_ms)
    if budget is not None and len(in_rows) > budget:
        placed, kept = one_row_from(marks, px_per_ms, budget, MARK_PX, CLUSTER_TONES, kept, head)
        return placed, 1, kept
    return in_rows, rows, None


def _in_rows(marks: Sequence[Mark], px_per_ms: float) -> tuple[list[Mark | Cluster], int]:
    slots: list[list[Mark]] = []
    row_last: list[tuple[float, int]] = []  # per row: x of its last slot, that slot's index
    slot_rows: list[int] = []
    origin_ms = marks[0].ms if marks else 0
    for mark in marks:
        x = (mark.ms - origin_ms) * px_per_ms
        for row, (edge, _) in enumerate(row_last):
            if x - edge >= MARK_PX:
                row_last[row] = (x, len(slots))
                slots.append([mark])
                slot_rows.append(row)
                break
        else:
            if len(row_last) < MARK_ROWS:
                row_last.append((x, len(slots)))
                slot_rows.append(len(row_last) - 1)
                slots.append([mark])
            else:  # crowded: join the nearest slot (the latest one on any row)
                _, nearest = max(row_last)
                slots[nearest].append(mark)
    placed: list[Mark | Cluster] = []
    for members, row in zip(slots, slot_rows, strict=True):
        if len(members) == 1:
            placed.append(on_row(members[0], row))
        else:
            placed.append(cluster_of(tuple(on_row(m, row) for m in members), row, CLUSTER_TONES))
    return placed, max(len(row_last), 1)


@dataclass(frozen=True, slots=True)
class _ChunkLaid:
    """One chunk laid out: the very turns and marks it was laid out from, its marks
    with their rows, the rows used, and the chunk drawn."""

    turns: tuple[TurnBar, ...]
    marks: tuple[Mark, ...]
    placed: tuple[Mark, ...]
    rows: int
    chunk: LaneChunk
    #: Where the grouping of its turns and the placing of its marks on one row go on
    #: from when the chunk is laid out again after an append (``runs``).
    turns_kept: TurnsKept | None = None
    marks_kept: MarksKept | None = None

    def heads(self, turns: Sequence[TurnBar], marks: Sequence[Mark]) -> tuple[int, int]:
        """How many bars and marks these share with the ones this was laid out from, at
        their start (the very same objects): one pass each."""
        return passed_head(self.turns, turns), passed_head(self.marks, marks)

    def is_of(
        self, turns: Sequence[TurnBar], marks: Sequence[Mark], heads: tuple[int, int]
    ) -> bool:
        """Whether these (sharing ``heads`` with this layout's) are its very items."""
        return heads == (len(turns), len(marks)) == (len(self.turns), len(self.marks))


#: Chunks laid out, by their lane's element, index, origin, scale and budgets, each
#: slot with its last CHUNK_VERSIONS_KEPT versions, newest first; a version is found by
#: the very bars and marks it holds: a lane that changed keeps its old bars and marks
#: (see view_model._LaneRead), so an append lays out the chunk it lands in, not the
#: lane. Every view at a scale draws the lane's one read, so an older version (its
#: marks replaced, or its open bar grown) is never asked for again. Bounded by slots
#: and by the items held in all. (Keyed by a tuple of the items' ids, the keys alone
#: grew by ~10 KB a tick: an int object and a slot per bar and mark of every version.)
#: Per lane, the scales the views draw at (see SCALES_KEPT and forget_scale).
CHUNKS_KEPT = 1 << 13
#: (Not the history-sized figure of memo.py: the views in use hold one layout per scale,
#: but a bound that large also held every dead scale's chunks, ~15 KB a tick of keys.)
CHUNK_ITEMS_KEPT = 1 << 18
#: Versions kept per chunk slot: the live one only. Every view at a scale draws the
#: lane's one read, so the version before is never asked for again, yet after a lane
#: was read whole (its roster changed) it held every old bar and mark of the lane
#: (bench_mem_growth: ~45k blocks in _CHUNKS at one pace, ~1k at another). Story team,
#: 60 appends polled by test_board_reuse's six views: the same 894 layouts with 1 or 2.
CHUNK_VERSIONS_KEPT = 1
#: The scales a lane keeps its layouts at, the least recently drawn going first: the
#: views in use (two widths following now, a zoomed window, one more). A live board's
#: scale changes when its extent doubles, and the old scale is never drawn again: the
#: panel drops it at once (forget_scale, when no view it knows draws at it any more),
#: so this is the bound for the scales it cannot see die (a zoom left, a closed tab's).
SCALES_KEPT = 4


def _lane_and_scale(slot: tuple[Any, ...]) -> tuple[Hashable, Hashable]:
    """A chunk slot's lane (its session and element) and scale (origin, scale, budgets)."""
    dom_id, _index, origin, scale, budgets, owner = slot
    return (owner, dom_id), (origin, scale, budgets)


_CHUNKS: Memo[tuple[Any, ...], tuple[_ChunkLaid, ...]] = Memo(
    CHUNKS_KEPT,
    max_weight=CHUNK_ITEMS_KEPT,
    weight=lambda versions: sum(len(v.turns) + len(v.marks) + 1 for v in versions),
    lru=True,
    family=_lane_and_scale,
    per_family=SCALES_KEPT,
)


def _lay_chunk(
    dom_id: str,
    index: int,
    turns: Sequence[TurnBar],
    marks: Sequence[Mark],
    origin: int,
    scale: Scale,
    budgets: tuple[int, int],
    owner: str | None = None,
    known: tuple[_ChunkLaid, tuple[int, int]] | None = None,
) -> _ChunkLaid:
    """The chunk laid out; ``known``: a layout and the heads these items share with
    its own, when the caller found them without a pass (see ``chunk_lane``)."""
    slot = (dom_id, index, origin, scale, budgets, owner)
    versions = _CHUNKS.get(slot) or ()
    # The chunk's last layout: the very items again, or (an append changed its end) its
    # passes go on from where the items it shares with these end.
    last = versions[0] if versions else None
    turns_kept = marks_kept = None
    turn_head = mark_head = 0
    if last is not None:
        heads = known[1] if known is not None and known[0] is last else last.heads(turns, marks)
        if last.is_of(turns, marks, heads):
            return last
        turns_kept, marks_kept = last.turns_kept, last.marks_kept
        turn_head, mark_head = heads
    turn_budget, mark_budget = budgets
    placed, rows, marks_kept = place_marks(
        marks, scale.px_per_ms, mark_budget, marks_kept, mark_head
    )
    grouped, turns_kept = group_turns(
        turns, scale.px_per_ms, origin, turn_budget, turns_kept, turn_head
    )
    flat: list[Mark] = []
    for item in placed:
        flat.extend(item.marks if isinstance(item, Cluster) else (item,))
    chunk = LaneChunk(
        dom_id=f"{dom_id}-k{index}", index=index, turns=tuple(grouped), marks=tuple(placed)
    )
    laid = _ChunkLaid(tuple(turns), tuple(marks), tuple(flat), rows, chunk, turns_kept, marks_kept)
    _CHUNKS.put(slot, (laid, *versions[: CHUNK_VERSIONS_KEPT - 1]), slot=slot, owner=owner)
    return laid


def _budgets(scale: Scale) -> tuple[int, int]:
    """A chunk's most turn elements and mark elements at this scale."""
    return (
        chunk_budget(scale.chunk_ms, scale.px_per_ms, TURN_BUDGET_PX),
        chunk_budget(scale.chunk_ms, scale.px_per_ms, MARK_BUDGET_PX),
    )


_START = attrgetter("start")
_MS = attrgetter("ms")


def _by_chunk_in_order(
    turns: Sequence[TurnBar], marks: Sequence[Mark], origin: int, chunk_ms: int
) -> dict[int, tuple[list[TurnBar], list[Mark]]] | None:
    """Each chunk's turns and marks as slices, when both come in time order (our
    builder's lanes do: their spans are sorted by time), found by bisecting at the
    chunks' edges: a day-long lane's thousands of bars and marks are not visited one by
    one at each append. ``None``: not in order (then they are grouped one by one)."""
    starts = list(map(_START, turns))
    times = list(map(_MS, marks))
    if not all(map(le, starts, islice(starts, 1, None))):
        return None
    if not all(map(le, times, islice(times, 1, None))):
        return None
    turn_slices = _chunk_slices(starts, origin, chunk_ms)
    mark_slices = _chunk_slices(times, origin, chunk_ms)
    nothing = (0, 0)
    return {
        index: (
            list(turns[slice(*turn_slices.get(index, nothing))]),
            list(marks[slice(*mark_slices.get(index, nothing))]),
        )
        for index in sorted(turn_slices.keys() | mark_slices.keys())
    }


def _chunk_slices(values: Sequence[int], origin: int, chunk_ms: int) -> dict[int, tuple[int, int]]:
    """Each non-empty chunk's ``(first, past)`` positions in ``values`` (ascending)."""
    slices: dict[int, tuple[int, int]] = {}
    first, count = 0, len(values)
    while first < count:
        index = (values[first] - origin) // chunk_ms
        past = bisect_left(values, origin + (index + 1) * chunk_ms, first)
        slices[index] = (first, past)
        first = past
    return slices


@dataclass(frozen=True, slots=True)
class _LaneLaid:
    """A lane's chunks as last laid out at one origin, scale and budgets: the very bars
    and marks (each in time order), and each chunk's index and layout, ascending."""

    turns: Sequence[TurnBar]
    marks: Sequence[Mark]
    indexes: tuple[int, ...]
    laid: tuple[_ChunkLaid, ...]


def _lane_slot_family(slot: tuple[Any, ...]) -> tuple[Hashable, Hashable]:
    """A lane layout slot's lane (its session and element) and scale."""
    dom_id, origin, scale, budgets, owner = slot
    return (owner, dom_id), (origin, scale, budgets)


#: Each lane's last layout per origin and scale: a changed lane's bars and marks share
#: their head with its last version's (the same objects, in time order), so the chunks
#: before the first one an append touched are that version's, taken as they are
#: instead of bisected out of a day of bars and checked one by one. One entry per lane
#: and scale (bounded by entries, by the items they hold in all, and per lane by the
#: scales it was last drawn at, as _CHUNKS).
LANES_LAID_KEPT = 1 << 10
_LANES_LAID: Memo[tuple[Any, ...], _LaneLaid] = Memo(
    LANES_LAID_KEPT,
    max_weight=2 * HISTORY_ITEMS_KEPT,
    weight=lambda laid: len(laid.turns) + len(laid.marks) + 1,
    lru=True,
    family=_lane_slot_family,
    per_family=SCALES_KEPT,
)


def forget_scale(origin: int, scale: Scale) -> int:
    """Drop every lane's layouts at ``scale`` from ``origin`` (its chunks and lane
    layouts): the panel calls this when the last view it knows drawing at that scale
    moved to another (a live board's extent doubled), so a dead scale's chunks go at
    once instead of staying until SCALES_KEPT newer scales push them out. Returns the
    entries dropped. (A view in another panel of the process still drawing at it only
    lays its lanes out again.)"""

    def dead(_lane: Hashable, member: Hashable) -> bool:
        return isinstance(member, tuple) and member[:2] == (origin, scale)

    return _CHUNKS.forget_members(dead) + _LANES_LAID.forget_members(dead)


def _kept_chunks(
    last: _LaneLaid | None,
    turns: Sequence[TurnBar],
    marks: Sequence[Mark],
    origin: int,
    chunk_ms: int,
) -> tuple[int, int, int]:
    """How many of ``last``'s chunks hold the very bars and marks these chunks would:
    those before the chunk of the first bar or mark where ``last``'s and these differ
    (both in time order); and the heads of bars and marks the lane shares with it."""
    if last is None:
        return 0, 0, 0
    first: list[int] = []
    turn_head = common_head(last.turns, turns)
    for items, at in ((turns, turn_head), (last.turns, turn_head)):
        if at < len(items):
            first.append((items[at].start - origin) // chunk_ms)
    mark_head = common_head(last.marks, marks)
    for marked, at in ((marks, mark_head), (last.marks, mark_head)):
        if at < len(marked):
            first.append((marked[at].ms - origin) // chunk_ms)
    if not first:
        return len(last.laid), turn_head, mark_head
    return bisect_left(last.indexes, min(first)), turn_head, mark_head


def _chunk_heads(
    laid: _ChunkLaid, at: tuple[int, int], lane_heads: tuple[int, int], sizes: tuple[int, int]
) -> tuple[int, int]:
    """The heads a chunk's new items share with ``laid``'s, both starting at the same
    places ``at`` of their lanes, which share ``lane_heads``: no pass over the chunk."""
    turn_at, mark_at = at
    return (
        min(max(lane_heads[0] - turn_at, 0), len(laid.turns), sizes[0]),
        min(max(lane_heads[1] - mark_at, 0), len(laid.marks), sizes[1]),
    )


def chunk_lane(
    dom_id: str,
    turns: Sequence[TurnBar],
    marks: Sequence[Mark],
    origin: int,
    scale: Scale,
    drawn: Drawn | None,
    owner: str | None = None,
) -> tuple[tuple[LaneChunk, ...], tuple[Mark, ...], int]:
    """The lane's chunks (only those in ``drawn``, chunk indexes, when given), every mark
    with its row, and the rows used. ``owner``: the lane's session (its chunks are
    forgotten with its team)."""
    chunk_ms = scale.chunk_ms
    budgets = _budgets(scale)
    slot = (dom_id, origin, scale, budgets, owner)
    last = _LANES_LAID.get(slot)
    kept, turn_head, mark_head = _kept_chunks(last, turns, marks, origin, chunk_ms)
    indexes: list[int] = []
    laids: list[_ChunkLaid] = []
    from_turn = from_mark = 0
    if last is not None and kept:
        indexes += last.indexes[:kept]
        laids += last.laid[:kept]
        from_turn = sum(len(laid.turns) for laid in laids)
        from_mark = sum(len(laid.marks) for laid in laids)
    by_chunk = _by_chunk_in_order(turns[from_turn:], marks[from_mark:], origin, chunk_ms)
    in_order = by_chunk is not None
    #: The last layout's chunks from the first one laid again, with where each starts
    #: in its lane: a chunk that starts where its last layout did shares with it what
    #: the lanes share from there (the first one laid again always does).
    was: dict[int, tuple[_ChunkLaid, tuple[int, int]]] = {}
    if by_chunk is not None and last is not None:
        at = (from_turn, from_mark)
        for index, laid in zip(last.indexes[kept:], last.laid[kept:], strict=True):
            was[index] = (laid, at)
            at = (at[0] + len(laid.turns), at[1] + len(laid.marks))
    if by_chunk is None:
        indexes, laids = [], []
        by_chunk = {}
        # chunk_index, inline: once per bar and mark of the lane's whole history.
        for bar in turns:
            by_chunk.setdefault((bar.start - origin) // chunk_ms, ([], []))[0].append(bar)
        for mark in marks:
            by_chunk.setdefault((mark.ms - origin) // chunk_ms, ([], []))[1].append(mark)
    at = (from_turn, from_mark)
    for index in sorted(by_chunk):
        chunk_turns, chunk_marks = by_chunk[index]
        sizes = (len(chunk_turns), len(chunk_marks))
        held = was.get(index)
        known = None
        if held is not None and held[1] == at:
            known = (held[0], _chunk_heads(held[0], at, (turn_head, mark_head), sizes))
        indexes.append(index)
        laids.append(
            _lay_chunk(
                dom_id, index, chunk_turns, chunk_marks, origin, scale, budgets, owner, known
            )
        )
        at = (at[0] + sizes[0], at[1] + sizes[1])
    if in_order:
        _LANES_LAID.put(
            slot, _LaneLaid(turns, marks, tuple(indexes), tuple(laids)), slot=slot, owner=owner
        )
    chunks: list[LaneChunk] = []
    placed_marks: list[Mark] = []
    rows_used = 1
    for index, laid in zip(indexes, laids, strict=True):
        placed_marks.extend(laid.placed)
        # The lane's height counts every chunk, drawn or not: it stays put while a
        # window scrolls or follows now.
        rows_used = max(rows_used, laid.rows)
        if drawn is None or index in drawn:
            chunks.append(laid.chunk)
    return tuple(chunks), tuple(placed_marks), rows_used
