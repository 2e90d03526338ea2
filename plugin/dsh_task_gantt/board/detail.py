"""Level of detail: a lane's turns and marks in time chunks, crowded ones as aggregates.

A lane is drawn as chunks of a fixed time width (a power of two in ms, about
:data:`CHUNK_PX` pixels at the board's scale). A chunk's content depends on its own
turns and marks only, so an append redraws the chunk it lands in and nothing else.
Within a chunk, turns closer than :data:`MERGE_PX` become one bar with a count, and a
mark that finds no free row among :data:`MARK_ROWS` joins the nearest mark as a
cluster with a count; both open a list of what they hold. The scale used here is the
board's pixels per ms rounded down to a power of two, so it changes rarely while a live
extent grows.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from .geometry import seconds
from .model import Cluster, LaneChunk, Mark, Tone, TurnBar, TurnGroup

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


def group_turns(
    bars: Sequence[TurnBar], px_per_ms: float, origin: int
) -> list[TurnBar | TurnGroup]:
    """Consecutive closed turns less than MERGE_PX apart as one group (an open turn stays
    itself: it reaches the now-line)."""
    gap_ms = MERGE_PX / px_per_ms
    out: list[TurnBar | TurnGroup] = []
    run: list[TurnBar] = []

    def flush() -> None:
        if len(run) == 1:
            out.append(run[0])
        elif run:
            start, end = run[0].start, max(bar.end for bar in run)
            out.append(
                TurnGroup(
                    t=seconds(start, origin),
                    d=round((end - start) / 1000, 3),
                    start=start,
                    end=end,
                    count=len(run),
                )
            )
        run.clear()

    for bar in bars:
        if bar.open:
            flush()
            out.append(bar)
            continue
        if run and bar.start - max(b.end for b in run) >= gap_ms:
            flush()
        run.append(bar)
    flush()
    return out


def place_marks(marks: Sequence[Mark], px_per_ms: float) -> tuple[list[Mark | Cluster], int]:
    """Greedy rows in time order; a mark with no free row joins the latest slot as a cluster.

    A chunk denser than its rows of chips (a long team seen whole) is drawn on one row:
    each run of marks closer than a chip's width is one cluster, so the marks drawn
    follow the pixels, not the messages."""
    if len(marks) > MARK_ROWS * CHUNK_PX / MARK_PX:
        return _one_row(marks, px_per_ms), 1
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
            placed.append(replace(members[0], row=row))
        else:
            placed.append(_cluster(tuple(replace(m, row=row) for m in members), row))
    return placed, max(len(row_last), 1)


def _one_row(marks: Sequence[Mark], px_per_ms: float) -> list[Mark | Cluster]:
    runs: list[list[Mark]] = []
    for mark in marks:
        if runs and (mark.ms - runs[-1][0].ms) * px_per_ms < MARK_PX:
            runs[-1].append(mark)
        else:
            runs.append([mark])
    return [
        replace(run[0], row=0)
        if len(run) == 1
        else _cluster(tuple(replace(m, row=0) for m in run), 0)
        for run in runs
    ]


def _cluster(marks: tuple[Mark, ...], row: int) -> Cluster:
    tones: list[Tone] = []
    for mark in marks:
        if mark.tone not in tones:
            tones.append(mark.tone)
    first, last = marks[0], marks[-1]
    return Cluster(
        t=first.t,
        row=row,
        start=first.ms,
        end=last.ms,
        count=len(marks),
        tones=tuple(tones[:CLUSTER_TONES]),
        marks=marks,
    )


def chunk_lane(
    dom_id: str,
    turns: Sequence[TurnBar],
    marks: Sequence[Mark],
    origin: int,
    scale: Scale,
    drawn: Drawn | None,
) -> tuple[tuple[LaneChunk, ...], tuple[Mark, ...], int]:
    """The lane's chunks (only those in ``drawn``, chunk indexes, when given), every mark
    with its row, and the rows used."""
    chunk_ms = scale.chunk_ms
    by_chunk: dict[int, tuple[list[TurnBar], list[Mark]]] = {}
    for bar in turns:
        by_chunk.setdefault(chunk_index(bar.start, origin, chunk_ms), ([], []))[0].append(bar)
    for mark in marks:
        by_chunk.setdefault(chunk_index(mark.ms, origin, chunk_ms), ([], []))[1].append(mark)
    chunks: list[LaneChunk] = []
    placed_marks: list[Mark] = []
    rows_used = 1
    for index in sorted(by_chunk):
        chunk_turns, chunk_marks = by_chunk[index]
        placed, rows = place_marks(chunk_marks, scale.px_per_ms)
        for item in placed:
            placed_marks.extend(item.marks if isinstance(item, Cluster) else (item,))
        # The lane's height counts every chunk, drawn or not: it stays put while a
        # window scrolls or follows now.
        rows_used = max(rows_used, rows)
        if drawn is not None and index not in drawn:
            continue
        chunks.append(
            LaneChunk(
                dom_id=f"{dom_id}-k{index}",
                index=index,
                turns=tuple(group_turns(chunk_turns, scale.px_per_ms, origin)),
                marks=tuple(placed),
            )
        )
    return tuple(chunks), tuple(placed_marks), rows_used
