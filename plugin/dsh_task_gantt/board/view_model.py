"""The board's view model: a timeline dict and a view in, a :class:`Board` out.

Every position, width, tick and label comes from :func:`layout_board`; "now" is the
timeline's ``generatedAt``: it places the now-line and clamps open spans, and is never
written back into any data.
"""

from __future__ import annotations

import functools
import hashlib
import operator
from bisect import bisect_left
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from sys import intern
from typing import Any

import orjson

from ..memo import HISTORY_ITEMS_KEPT, TASK_ENTRIES_KEPT, TEAMS_SIZED_FOR, Carried, Memo, Same
from ..timeline import PALETTE
from ..timeline.identity import common_head, note_head
from ..timetext import format_time
from .detail import Drawn, Scale, chunk_index, chunk_lane
from .geometry import (
    MIN_EXTENT_MS,
    as_int,
    as_map,
    as_seq,
    as_str,
    board_extent,
    make_ticks,
    pct,
    pct_width,
    quantized_end,
    seconds,
    team_of,
    view_window,
)
from .message_count import lane_messages, message_count
from .model import (
    UNASSIGNED_TONE,
    Board,
    LaneRow,
    ListItem,
    Mark,
    Party,
    Segment,
    TaskRow,
    Tone,
    Transition,
    TurnBar,
    View,
    WhereTime,
)
from .task_facts import TaskFacts, TeamTaskFacts, team_task_facts
from .task_graph import GraphContext, graph_fields
from .tokens import TOKEN_KEYS, tokens_text, tokens_title
from .where_time import where_time

#: Colours repeat every this many lanes; from then on lanes differ by a pattern too.
PALETTE_SIZE = len(PALETTE)
MAX_VARIANT = 3

#: Fit-all draws every chunk; any zoom in draws only those near the window: the window
#: and a quarter of its width on each side (scrolling past them asks for the board
#: again), and on a live board the last quarter window before the live edge.
DRAW_ALL_BELOW_ZOOM = 1.0001
DRAWN_MARGIN_WINDOWS = 0.25
#: Task rows are drawn two pages at a time (the last full page and the one filling up;
#: page boundaries never move, so a new task is appended, not the rows redrawn).
TASK_PAGE = 40
#: The list view shows this many items at a time (page 0: the newest).
LIST_PAGE = 50

#: Task statuses after which nothing more happens to a task.
FINISHED_STATUSES = frozenset({"completed", "deleted"})

_SLOT_TONES = tuple(f"c{n}" for n in range(PALETTE_SIZE))
_ACTION_GLYPHS = {
    "created": "+",
    "claimed": "▶",
    "assigned": "▷",
    "released": "◁",
    "unassigned": "◁",
    "reassigned": "⇄",
    "completed": "✓",
    "reopened": "↺",
    "deleted": "✕",
    "dependencies-changed": "⇢",
    "edited": "✎",
}
#: How the list view says an action ("ana claimed “Parse logs”").
ACTION_PHRASES = {
    "assigned": "assigned",
    "unassigned": "took the owner off",
    "reassigned": "reassigned",
    "dependencies-changed": "changed the dependencies of",
    "edited": "edited",
    "released": "released",
    "deleted": "deleted",
}

# ---------------------------------------------------------------------------
# lanes, colours and parties


def lane_tone(lane: Mapping[str, Any]) -> Tone:
    colour = as_map(lane.get("color"))
    slot = as_int(colour.get("slot"))
    index = max(as_int(lane.get("index")) or 0, 0)
    variant = min(index // PALETTE_SIZE, MAX_VARIANT)
    if slot is None or lane.get("kind") == "unassigned":
        return UNASSIGNED_TONE  # its own neutral colour, shared with no lane
    return _tone(_SLOT_TONES[slot % PALETTE_SIZE], variant)


@functools.lru_cache(maxsize=64)
def _tone(css: str, variant: int) -> Tone:
    """One Tone per colour (a few dozen in all): a mark, bar and row names one, and each
    poll's roster made its own, kept as long as the marks of that poll's appends."""
    return Tone(css, variant)


PROMPT_TONE = _tone("cp", 0)
SYSTEM_TONE = _tone("cx", 0)
USER_NAME = "you"


@functools.lru_cache(maxsize=512)
def _shared_party(name: str, tone: Tone) -> Party:
    """One Party per name and colour (the kept teams' lanes and the few outside parties
    their messages name): every mark names two, and a mark lives as long as its lane's
    history; each poll's roster made its own, kept by the marks of its appends."""
    return Party(name, tone)


class _Roster:
    """Resolve a span's ``from``/``to`` to a lane's name and colour."""

    def __init__(self, lanes: Iterable[Mapping[str, Any]]) -> None:
        self._by_key: dict[str, tuple[str, Tone]] = {}
        self._by_name: dict[str, tuple[str, Tone]] = {}
        for lane in lanes:
            entry = (as_str(lane.get("name"), as_str(lane.get("id"))), lane_tone(lane))
            for key in (lane.get("id"), lane.get("sessionId")):
                if isinstance(key, str) and key:
                    self._by_key.setdefault(key, entry)
            if entry[0]:
                self._by_name.setdefault(entry[0], entry)

    def party(self, who: Mapping[str, Any]) -> Party:
        """The party ``who`` names, shared with every roster (see _shared_party)."""
        kind = as_str(who.get("kind"))
        name = as_str(who.get("name")) or as_str(who.get("id")) or "unknown"
        if kind == "user":
            return _shared_party(USER_NAME, PROMPT_TONE)
        if kind == "system":
            key = as_str(who.get("id"))
            if key and name == key and len(key) > 12:
                # A session outside the team, known only by its id: say so, briefly.
                return _shared_party(f"outside the team ({key[:8]}…)", SYSTEM_TONE)
            return _shared_party(name if name != "unknown" else "system", SYSTEM_TONE)
        key = as_str(who.get("id"))
        found = self._by_key.get(key) or self._by_name.get(name)
        if found is None and kind == "lead":
            found = self._by_key.get("lead")
        if found is None:
            return _shared_party(name, SYSTEM_TONE)
        return _shared_party(name, found[1])

    def by_name(self, name: str) -> tuple[str, Tone] | None:
        return self._by_name.get(name)

    def by_key(self, key: str) -> tuple[str, Tone] | None:
        """A lane's name and colour by its id or session id."""
        return self._by_key.get(key) if key else None


def _turn_bar(time: int, stop: int, start: int, closed: int | None) -> TurnBar:
    return TurnBar(
        start=time,
        end=stop,
        open=closed is None,
        t=seconds(time, start),
        d=round(max(stop - time, 0) / 1000, 3),
        closed=closed,
    )


def _closed_bar(time: int, closed: int, start: int, tokens: tuple[Any, ...] | None) -> TurnBar:
    """A closed turn's bar with its tokens. Made once per span object: a lane's read
    (_LaneRead) keeps it for every later version of the lane, so a cache of bars by
    value was never hit under the soak's load (0 hits in 6,178 calls over 290 appends)
    and only held a key and a link per turn ever drawn, ~1.9 an append, for hours."""
    return _with_tokens(_turn_bar(time, max(closed, time), start, closed), tokens)


def _token_values(spent: Any) -> tuple[Any, ...] | None:
    """A turn's token counts in ``TOKEN_KEYS`` order (``None``: not counted)."""
    if not isinstance(spent, Mapping):
        return None
    values = tuple(map(spent.get, TOKEN_KEYS))
    return values if all(v is None or type(v) is int for v in values) else None


def _with_tokens(bar: TurnBar, values: tuple[Any, ...] | None) -> TurnBar:
    if values is None:
        return bar
    return TurnBar(bar.start, bar.end, bar.open, bar.t, bar.d, bar.closed, values)


#: What a span means to its lane's row, read once per span object (see _LaneRead):
#: a closed turn's bar, an open turn's start and token counts (its bar runs to now, so
#: it is made at each layout), a mark's time, or _SKIP (nothing drawn).
_OpenTurn = tuple[int, tuple[Any, ...] | None]
_SpanRead = TurnBar | _OpenTurn | int | str
_SKIP = "skip"


def _read_span(span: Mapping[str, Any], start: int) -> _SpanRead:
    time = as_int(span.get("time"))
    if time is None:
        return _SKIP
    kind = as_str(span.get("kind"))
    if kind == "turn":
        closed = as_int(span.get("end"))
        spent = _token_values(span.get("tokens"))
        if closed is not None:
            return _closed_bar(time, closed, start, spent)
        return (time, spent)
    if kind in {"message", "user-prompt"}:
        return time
    return _SKIP


def _bar_of(read: _SpanRead, start: int, end: int, clamp_to: int) -> TurnBar:
    """A turn's bar: the closed one read, or an open one running to ``clamp_to``."""
    if isinstance(read, TurnBar):
        return read
    assert isinstance(read, tuple)
    time, spent = read
    return _with_tokens(_turn_bar(time, min(max(clamp_to, time), end), start, None), spent)


@dataclass(frozen=True, slots=True)
class _LaneRead:
    """A lane's spans as last laid out: what each span object read as, its turn bars and
    its marks (found again by their span, or by their span's value for the spans that
    were new objects then, such as prompts drawn afresh at each build). After an append
    a changed lane holds mostly the same span objects (they are never mutated, see
    timeline/spans.py), most of them in an unchanged prefix: its reads, bars and marks
    are reused as they are, and so, in detail.chunk_lane, are the chunks they fall in."""

    #: The extent's start and the roster's key: what a read or a mark depends on
    #: besides its span. Not the extent's end: a live edge moves it at every step, and
    #: a mark placed by its end was made again, with every chunk it fell in, each time.
    context: tuple[Any, ...]
    #: The spans read (the lane's very list), held: while they live no other object
    #: has their ids.
    spans: Sequence[Any]
    #: Each span's read, by its place.
    reads: list[_SpanRead]
    #: The place of the span of each turn bar, ascending, and the bars.
    turn_at: list[int]
    turns: list[TurnBar]
    #: The bars (by their place in ``turns``) of open turns: they run to now, so they
    #: are made again at each layout.
    open_turns: tuple[int, ...]
    #: The place of the span of each mark, in the marks' order, and the marks.
    mark_at: list[int]
    made: list[Mark]
    #: The marks were in their spans' order (``mark_at`` ascends).
    marks_in_order: bool
    #: (the span's bytes, its place among the marks) -> its mark, for the marks made
    #: from spans that were new objects.
    by_value: dict[tuple[bytes, int], Mark]

    def read_of(self) -> dict[int, _SpanRead]:
        """id(span) -> its read."""
        return dict(zip(map(id, self.spans), self.reads, strict=True))

    def mark_of(self, first: int = 0) -> dict[tuple[int, int], Mark]:
        """(id(span), its place among the marks) -> its mark, from the ``first`` mark on."""
        spans = self.spans
        return {(id(spans[self.mark_at[n]]), n): self.made[n] for n in range(first, len(self.made))}


#: The last read of each lane, by its id, session and position: one entry per lane
#: (its newest version; every view of that version reads it), bounded by lanes and by
#: the spans the reads hold in all (a read holds every span of its lane).
LANE_READS_KEPT = 256
#: (A read holds a span's read and its bar or mark: two items per span.)
LANE_READ_SPANS = 2 * HISTORY_ITEMS_KEPT
_LANE_READS: Memo[tuple[str, str, int], _LaneRead] = Memo(
    LANE_READS_KEPT,
    max_weight=LANE_READ_SPANS,
    weight=lambda read: len(read.reads) + len(read.made) + len(read.by_value) + 1,
)


def _value_key(item: Mapping[str, Any]) -> bytes | None:
    """A span's or task's bytes (``None``: not JSON). Not key-sorted: equal bytes are
    equal values, and the builder makes equal dicts in the same key order (a dict
    built in another order only misses)."""
    try:
        return orjson.dumps(item)
    except (TypeError, orjson.JSONEncodeError):
        return None


def _lane_row(
    lane: Mapping[str, Any],
    position: int,
    roster: _Roster,
    extent: tuple[int, int],
    clamp_to: int,
    scale: Scale,
    drawn: Drawn | None,
    roster_key: tuple[Any, ...] | None = None,
) -> LaneRow:
    start, end = extent
    slot = (as_str(lane.get("id")), as_str(lane.get("sessionId")), position)
    # Without a roster key the marks cannot be told apart from another roster's: no reuse.
    context = (start, roster_key)
    last = _LANE_READS.get(slot) if roster_key is not None else None
    if last is not None and last.context != context:
        last = None
    # The lane's very list, held (not copied: a day of spans, at each append): a
    # timeline's lists are never changed once built (timeline/spans.py), and the maker
    # of the next version said how much of this one it kept (identity.note_head), so
    # comparing the two starts there instead of at the day's first span.
    spans = as_seq(lane.get("spans"))
    read = None
    owner = as_str(lane.get("sessionId")) or None
    if last is not None and _same_spans(last, spans):
        # The same spans (another width's poll of the same build): the very read, so
        # what is made of it (its marks' message count) is found again by identity.
        read = last
    elif last is not None:
        read = _read_after(last, spans, position, roster, extent, clamp_to)
    if read is None:
        read = _read_whole(last, spans, position, roster, extent, clamp_to, context)
    if roster_key is not None:
        _LANE_READS.put(slot, read, owner=owner)
    turns, made = _bars_held(slot, read, start, end, clamp_to), read.made
    dom_id = f"lane-{position}"
    session = as_str(lane.get("sessionId")) or None
    chunks, placed, used = chunk_lane(dom_id, turns, made, start, scale, drawn, session)
    status = as_str(lane.get("status")) or None
    phase = as_str(lane.get("phase")) or None
    channel = as_str(lane.get("channel"))
    state_text = status or phase or (channel if channel in {"unreadable", "empty"} else "")
    return LaneRow(
        dom_id=dom_id,
        lane_id=as_str(lane.get("id")),
        kind=as_str(lane.get("kind"), "teammate"),
        name=as_str(lane.get("name")) or as_str(lane.get("id")) or "?",
        index=as_int(lane.get("index")) or position,
        tone=lane_tone(lane),
        status=status,
        phase=phase,
        channel=channel,
        error=as_str(lane.get("error")) or None,
        state_text=state_text,
        turns=tuple(turns),
        marks=placed,
        rows=used,
        chunks=chunks,
        label=as_str(lane.get("label")) or None,
        tokens_text=tokens_text(lane.get("tokens")),
        messages=lane_messages(read.made, ("made", *slot), owner),
    )


def _same_spans(last: _LaneRead, now: Sequence[Any]) -> bool:
    """Whether ``now`` holds the spans ``last`` read (its last one first: a lane that
    changed mostly changed there, and is told apart without a pass over its day)."""
    was = last.spans
    if len(last.reads) != len(now) or len(was) != len(now):
        return False
    return was is now or not was or (was[-1] is now[-1] and was == now)


def _read_whole(
    last: _LaneRead | None,
    spans: Sequence[Any],
    position: int,
    roster: _Roster,
    extent: tuple[int, int],
    clamp_to: int,
    context: tuple[Any, ...],
) -> _LaneRead:
    """Every span looked up (by its object in ``last``, else read), in whole-list steps
    where they can be (map, zip, dict): a lane whose spans changed anywhere."""
    start, end = extent
    ids = list(map(id, spans))
    got: list[_SpanRead | None] = (
        list(map(last.read_of().get, ids)) if last is not None else [None] * len(ids)
    )
    for i in [i for i, read in enumerate(got) if read is None]:
        got[i] = _read_span(as_map(spans[i]), start)
    reads: list[_SpanRead] = got  # type: ignore[assignment]  # every None was read above
    turn_at = [i for i, read in enumerate(reads) if type(read) is TurnBar or type(read) is tuple]
    turns = [_bar_of(reads[i], start, end, clamp_to) for i in turn_at]
    # By time, ties in the lanes' order (as a stable sort by time would).
    raw_marks = sorted((read, i) for i, read in enumerate(reads) if type(read) is int)
    mark_at = [i for _, i in raw_marks]
    old_marks = last.mark_of() if last is not None else {}
    made, by_value = _marks_of(spans, raw_marks, 0, old_marks, last, position, roster, extent)
    return _LaneRead(
        context,
        spans,
        reads,
        turn_at,
        turns,
        tuple(n for n, i in enumerate(turn_at) if type(reads[i]) is tuple),
        mark_at,
        made,
        all(map(operator.lt, mark_at, mark_at[1:])),
        by_value,
    )


def _read_after(
    last: _LaneRead,
    spans: Sequence[Any],
    position: int,
    roster: _Roster,
    extent: tuple[int, int],
    clamp_to: int,
) -> _LaneRead | None:
    """``last`` with what follows the spans it shares with ``spans`` (the same objects
    at the same places: after an append, all but the newest few) read again, the rest
    reused as it is; ``None`` when that does not hold (the marks were not in their
    spans' order, or a new mark comes before a kept one)."""
    start, end = extent
    if not last.marks_in_order:
        return None
    old = last.spans
    keep = common_head(old, spans)
    kept_turns = bisect_left(last.turn_at, keep)
    kept_marks = bisect_left(last.mark_at, keep)
    # The reads of the spans after the prefix, by their object (a span that moved keeps
    # its read), else read.
    old_reads = dict(zip(map(id, old[keep:]), last.reads[keep:], strict=True))
    tail: list[_SpanRead] = []
    for span in spans[keep:]:
        got = old_reads.get(id(span))
        tail.append(got if got is not None else _read_span(as_map(span), start))
    raw_marks = sorted((read, i) for i, read in enumerate(tail, keep) if type(read) is int)
    if raw_marks and kept_marks and raw_marks[0][0] < last.made[kept_marks - 1].ms:
        return None
    new_turn_at = [
        i for i, read in enumerate(tail, keep) if type(read) is TurnBar or type(read) is tuple
    ]
    reads = last.reads[:keep] + tail
    turn_at = last.turn_at[:kept_turns] + new_turn_at
    turns = last.turns[:kept_turns] + [_bar_of(reads[i], start, end, clamp_to) for i in new_turn_at]
    tail_made, by_value = _marks_of(
        spans, raw_marks, kept_marks, last.mark_of(kept_marks), last, position, roster, extent
    )
    mark_at = last.mark_at[:kept_marks] + [i for _, i in raw_marks]
    made = last.made[:kept_marks] + tail_made
    # Said to the readers that compare this version's bars and marks with the last's
    # (detail.chunk_lane, message_count.read_marks): their passes start here.
    note_head(last.turns, turns, kept_turns)
    note_head(last.made, made, kept_marks)
    return _LaneRead(
        last.context,
        spans,
        reads,
        turn_at,
        turns,
        tuple(n for n in last.open_turns if n < kept_turns)
        + tuple(n for n, i in enumerate(new_turn_at, kept_turns) if type(reads[i]) is tuple),
        mark_at,
        made,
        all(map(operator.lt, mark_at[kept_marks:], mark_at[kept_marks + 1 :])),
        by_value,
    )


def _marks_of(
    spans: Sequence[Any],
    raw_marks: Sequence[tuple[int, int]],
    first: int,
    old_marks: Mapping[tuple[int, int], Mark],
    last: _LaneRead | None,
    position: int,
    roster: _Roster,
    extent: tuple[int, int],
) -> tuple[list[Mark], dict[tuple[bytes, int], Mark]]:
    """The marks of ``raw_marks`` (time, place of the span), the ``first`` of them at
    place ``first`` among the lane's marks: each found by its span and place in
    ``old_marks``, else by its span's bytes and place in ``last``, else made; and the
    marks found or made by bytes."""
    by_value: dict[tuple[bytes, int], Mark] = {}
    made: list[Mark] = []
    for n, (time, i) in enumerate(raw_marks, first):
        span = spans[i]
        mark = old_marks.get((id(span), n))
        value = None
        if mark is None:
            # A span new as an object may be an old one drawn afresh (a prompt): found
            # by its bytes, and kept by them for the next build.
            fields = as_map(span)
            value = _value_key(fields)
            if value is not None and last is not None:
                mark = last.by_value.get((value, n))
            if mark is None:
                mark = _mark(fields, time, 0, f"m{position}-{n}", roster, extent)
        if value is not None:
            # Kept as placed now: a mark found by its bytes next time is used as it is.
            by_value[(value, n)] = mark
        made.append(mark)
    return made, by_value


@dataclass(frozen=True, slots=True)
class _BarsHeld:
    """A lane's bars as last made (see _bars_held) and what they were made of."""

    read: _LaneRead
    at: tuple[int, int, int]
    bars: list[TurnBar]


#: Each lane's bars as last made, by its slot (as _LANE_READS): every width's poll of
#: one build draws the very same list, and the next version's list is said to share
#: its head with it (identity.note_head), so detail.chunk_lane finds the chunks an
#: append left alone without a pass over a day of bars. One entry per lane.
_BARS_HELD: Memo[tuple[str, str, int], _BarsHeld] = Memo(
    LANE_READS_KEPT,
    max_weight=HISTORY_ITEMS_KEPT,
    weight=lambda held: len(held.bars) + 1,
)


def _first_open(read: _LaneRead) -> int:
    """The place of the first bar of ``read`` made again at each layout (an open turn's)."""
    return read.open_turns[0] if read.open_turns else len(read.turns)


def _bars_held(
    slot: tuple[str, str, int], read: _LaneRead, start: int, end: int, clamp_to: int
) -> list[TurnBar]:
    """The lane's bars now (_bars_now): the very list its last layout made when made of
    the same read at the same moment, else made, and the head it shares with that
    list noted."""
    at = (start, end, clamp_to)
    held = _BARS_HELD.get(slot)
    if held is not None and held.read is read and held.at == at:
        return held.bars
    bars = _bars_now(read, start, end, clamp_to)
    if held is not None and held.bars is not bars and held.at[0] == start:
        # The bars both lists take from their reads as they are (before either's first
        # open bar), where the reads share their bars (noted by _read_after: no pass).
        was = held.read
        head = min(common_head(was.turns, read.turns), _first_open(was), _first_open(read))
        note_head(held.bars, bars, head)
    _BARS_HELD.put(slot, _BarsHeld(read, at, bars), owner=slot[1] or None)
    return bars


def _bars_now(read: _LaneRead, start: int, end: int, clamp_to: int) -> list[TurnBar]:
    """The lane's bars, its open turns' running to ``clamp_to``."""
    if not read.open_turns:
        return read.turns
    turns = list(read.turns)
    for n in read.open_turns:
        turns[n] = _bar_of(read.reads[read.turn_at[n]], start, end, clamp_to)
    return turns


def _mark(
    span: Mapping[str, Any],
    time: int,
    row: int,
    dom_id: str,
    roster: _Roster,
    extent: tuple[int, int],
) -> Mark:
    sender = roster.party(as_map(span.get("from")))
    # Only an explicit null is "pending": a host that does not say is not guessed at.
    pending = (
        span.get("kind") == "message"
        and "deliveredAt" in span
        and (span.get("deliveredAt") is None)
    )
    raw_to = span.get("to")
    recipient = roster.party(as_map(raw_to)) if isinstance(raw_to, Mapping) else None
    if span.get("kind") == "user-prompt" or as_map(span.get("from")).get("kind") == "user":
        kind, glyph, tone = "prompt", "◆", PROMPT_TONE
        label = "your prompt"
    elif as_map(span.get("from")).get("kind") == "system":
        kind, glyph, tone = "system", "●", SYSTEM_TONE
        to_name = recipient.name if recipient else "?"
        label = f"message from an unknown sender to {to_name}"
    elif span.get("direction") == "outgoing":
        kind, glyph = "sent", "△" if pending else "▲"
        tone = recipient.tone if recipient else SYSTEM_TONE
        label = f"message from {sender.name} to {recipient.name if recipient else '?'}"
    else:
        kind, glyph, tone = "received", "▽" if pending else "▼", sender.tone
        label = f"message from {sender.name} to {recipient.name if recipient else '?'}"
    return Mark(
        dom_id=dom_id,
        msg_id=as_str(span.get("id")),
        kind=kind,
        glyph=glyph,
        row=row,
        ms=time,
        time_text=format_time(time),
        tone=tone,
        t=seconds(time, extent[0]),
        sender=sender,
        recipient=recipient,
        # A few sender and recipient pairs name every mark: one string each, not one
        # per mark (a day's board holds thousands).
        label=intern(label),
        preview=as_str(span.get("preview")),
        pending=pending,
    )


def _task_row(
    task: Mapping[str, Any],
    position: int,
    roster: _Roster,
    extent: tuple[int, int],
    clamp_to: int,
) -> TaskRow:
    start, end = extent
    history = sorted(
        (
            (as_int(as_map(e).get("time")), n, as_map(e))
            for n, e in enumerate(as_seq(task.get("history")))
            if as_int(as_map(e).get("time")) is not None
        ),
        key=lambda item: (item[0], item[1]),
    )
    owner_name = as_str(task.get("ownerName"))
    owner_found = roster.by_name(owner_name) if owner_name else None
    owner_tone = owner_found[1] if owner_found else UNASSIGNED_TONE

    segments: list[Segment] = []
    transitions: list[Transition] = []
    run_start: int | None = None
    run_owner = ""

    def close_run(at: int, still_open: bool) -> None:
        nonlocal run_start
        if run_start is None:
            return
        stop = min(max(at, run_start), end)
        found = roster.by_name(run_owner)
        tone = found[1] if found else UNASSIGNED_TONE
        segments.append(
            Segment(
                left=pct(run_start, start, end),
                width=pct_width(run_start, stop, start, end),
                start=run_start,
                end=stop,
                open=still_open,
                owner=run_owner or "?",
                tone=tone,
                t=seconds(run_start, start),
                d=round((stop - run_start) / 1000, 3),
                label=f"{run_owner or '?'} {format_time(run_start)}–"
                + ("now" if still_open else format_time(stop)),
            )
        )
        run_start = None

    for time, _, entry in history:
        assert time is not None
        action = as_str(entry.get("action"), "updated")
        status = as_str(entry.get("status"))
        actor = as_str(entry.get("actor"))
        in_progress = status == "in_progress"
        if in_progress and (run_start is None or (action == "claimed" and actor != run_owner)):
            close_run(time, False)  # a hand-off ends the previous owner's run
            run_start, run_owner = time, actor or owner_name
        elif not in_progress:
            close_run(time, False)
        transitions.append(
            Transition(
                left=pct(time, start, end),
                ms=time,
                time_text=format_time(time),
                action=action,
                glyph=_ACTION_GLYPHS.get(action, "•"),
                actor=actor or "unknown",
                status=status,
                revision=as_int(entry.get("revision")),
                t=seconds(time, start),
            )
        )
    close_run(clamp_to, True)

    status = as_str(task.get("status"))
    if history:
        first = history[0][0]
        assert first is not None
        last = history[-1][0]
        assert last is not None
        # A finished task's life ends at its last move; an unfinished one's runs on to now.
        stop = last if status in FINISHED_STATUSES else max(clamp_to, last)
        life_left, life_width = pct(first, start, end), pct_width(first, min(stop, end), start, end)
        life_t, life_d = seconds(first, start), round((min(stop, end) - first) / 1000, 3)
        life_open = status not in FINISHED_STATUSES
    else:
        life_left = life_width = life_t = life_d = 0.0
        life_open = False
    subject = as_str(task.get("subject")) or as_str(task.get("id")) or "task"
    return TaskRow(
        dom_id=f"task-{position}",
        task_id=as_str(task.get("id")),
        subject=subject,
        status=status or "unknown",
        owner=owner_name,
        tone=owner_tone,
        life_left=life_left,
        life_width=life_width,
        life_t=life_t,
        life_d=life_d,
        life_open=life_open,
        segments=tuple(segments),
        transitions=tuple(transitions),
        label=f"task {subject}, {status.replace('_', ' ') or 'unknown'}"
        + (f", owner {owner_name}" if owner_name else ""),
    )


def _with_graph(
    row: TaskRow, task: Mapping[str, Any], position: int, graph: GraphContext, plan: BoardPlan
) -> TaskRow:
    """The row with its phases, chip, overlaps, links and critical mark (a timeline
    without phases keeps the owner segments alone)."""
    if "phases" not in task:
        return row
    fields = graph_fields(task, position, graph, plan.roster.by_key, plan.extent)
    said = [row.label]
    if fields["open_blockers"]:
        said.append(f"blocked by {', '.join(fields['open_blockers'])}")
    elif fields["state_text"]:
        said.append(fields["state_text"])
    if fields["critical"]:
        said.append("on the critical path")
    return replace(row, label=", ".join(said), **fields)


#: Task rows by the task's bytes (by value: a task dict is not promised to stay as it
#: was, and a move of one task may give every task a new dict), its place, the extent,
#: the roster and what the graph says of its blockers, with "now" for the rows that
#: reach it (an unfinished task): a poll after an append rebuilds the rows of the tasks
#: that moved or run on, not all of them. Bounded by entries (each a row of a few
#: moves, and its task's bytes); the rows in use are refreshed. A task (of a roster, on
#: an extent) keeps its last TASK_ROW_VERSIONS rows: each move makes a new one and the
#: older ones are never asked for again (but by a replay cursor, whose row is made
#: again when it was dropped), yet they filled the entry bound for hours
#: (benchmarks/bench_soak.py: ~1.5 rows an append).
TASK_ROWS_KEPT = TASK_ENTRIES_KEPT
#: A task's rows kept (least recently used dropped first): the live view's, a replay
#: cursor's, and one move behind.
TASK_ROW_VERSIONS = 3
_TASK_ROWS: Memo[tuple[Any, ...], tuple[TaskRow, int | None, int]] = Memo(
    TASK_ROWS_KEPT, lru=True, per_slot=TASK_ROW_VERSIONS, slot_lru=True
)


def _graph_key(task: Mapping[str, Any], graph: GraphContext) -> tuple[Any, ...] | None:
    """What graph_fields reads of the board for this task (None: it is not called)."""
    if "phases" not in task:
        return None
    blockers = tuple(
        (b, graph.positions.get(b), graph.done_at.get(b))
        for b in as_seq(task.get("blockedBy"))
        if isinstance(b, str)
    )
    return blockers, as_str(task.get("id")) in graph.critical


def _task_row_of(
    task: Mapping[str, Any],
    value: Hashable | None,
    position: int,
    graph: GraphContext,
    plan: BoardPlan,
) -> TaskRow:
    """The task's row, reused when the task (``value``: what names its value) and what
    the row reads of the board are as before; when only the extent's end moved, moved
    to it."""
    start, end = plan.extent
    key = None
    if value is not None:
        key = (value, position, start, plan.roster_key, _graph_key(task, graph))
        hit = _TASK_ROWS.get(key)
        if hit is not None:
            row, clamped, built_for = hit
            if clamped is None or (clamped == plan.clamp_to and built_for == end):
                if built_for == end:
                    return row
                moved = _moved_row(row, start, end)
                if moved is not None:
                    _TASK_ROWS.put(key, (moved, None, end), slot=_task_slot(task, plan))
                    return moved
    row = _task_row(task, position, plan.roster, plan.extent, plan.clamp_to)
    row = _with_graph(row, task, position, graph, plan)
    if key is not None:
        # Only an unfinished life or an open run reaches "now" (clamp_to): the others'
        # rows hold at every poll.
        clamped = plan.clamp_to if _runs_on(row) else None
        _TASK_ROWS.put(key, (row, clamped, end), slot=_task_slot(task, plan))
    return row


def _task_slot(task: Mapping[str, Any], plan: BoardPlan) -> tuple[str, str]:
    """A task's rows, whatever the board around them (the extent and roster are in the
    key): its team's and its id."""
    timeline = plan.timeline
    team = team_of(timeline)
    return team, as_str(task.get("id"))


def _runs_on(row: TaskRow) -> bool:
    """Only an unfinished life or an open run reaches "now" (clamp_to)."""
    return row.life_open or any(segment.open for segment in row.segments)


@dataclass(frozen=True, slots=True)
class _TaskRows:
    """Every task's row for one version of the tasks and the board around them, and the
    places of the rows that reach "now" (or could not be keyed): only those change from
    one poll to the next while the tasks and the extent stay."""

    end: int
    clamp_to: int
    rows: tuple[TaskRow, ...]
    running: tuple[int, ...]
    #: What the rows were made of besides "now": each task's value, the extent's
    #: start, the roster and the graph (see _task_row_of), for the team's next version.
    values: tuple[Hashable | None, ...] = ()
    made_for: tuple[Any, ...] = ()


#: The task rows by the very values of the tasks (each one's bytes or wire generation),
#: the extent's start, the roster and the critical path (with the values, everything
#: the rows' graph parts read): a poll after an append that moved no task rebuilds the
#: rows that run on to now, and the 1280 px poll after the 400 px one none, instead of
#: looking up every row of a day's tasks. Bounded by entries: each kept team's last
#: versions (a reference per task; the rows are shared with _TASK_ROWS).
TASK_ROW_SETS_KEPT = 2 * TEAMS_SIZED_FOR
_TASK_ROW_SETS: Memo[tuple[Any, ...], _TaskRows] = Memo(TASK_ROW_SETS_KEPT, lru=True)


#: Each team's last task rows (by its root session): after a task moved, the rows of
#: the tasks that did not (the same values, on the same board and graph) are that
#: version's, not looked up one by one for a day's tasks. One entry per team.
_TEAM_TASK_ROWS: Memo[str, _TaskRows] = Memo(TEAMS_SIZED_FOR, lru=True)


def _rows_after(
    prev: _TaskRows, plan: BoardPlan, graph: GraphContext, made_for: tuple[Any, ...]
) -> tuple[list[TaskRow], tuple[int, ...]] | None:
    """The rows of ``plan`` made from the team's last ones: a task's row is its last
    one when its value is the same and it does not run on to now (or now is the same),
    else made (``None``: the board or the graph is not ``prev``'s)."""
    values = plan.task_values
    if (
        prev.end != plan.extent[1]
        or prev.made_for[:2] != made_for[:2]
        or len(prev.values) != len(values)
        or None in values
    ):
        return None
    running_before = set(prev.running) if prev.clamp_to != plan.clamp_to else set()
    rows = list(prev.rows)
    running: list[int] = []
    tasks = plan.tasks_raw
    for n in [n for n, (a, b) in enumerate(zip(values, prev.values, strict=True)) if a != b]:
        running_before.add(n)
    if prev.made_for[2:] != made_for[2:]:
        running_before.update(_graph_moved(tasks, prev.made_for, graph))
    if not running_before:
        return rows, prev.running
    held = set(prev.running)
    for n in sorted(running_before):
        rows[n] = _task_row_of(tasks[n], values[n], n, graph, plan)
        held.discard(n)
        if _runs_on(rows[n]):
            running.append(n)
    return rows, tuple(sorted([*held, *running]))


def _graph_moved(
    tasks: Sequence[Mapping[str, Any]], was: tuple[Any, ...], graph: GraphContext
) -> list[int]:
    """The places of the tasks whose row reads what moved in the graph since ``was``
    (the last rows' ``made_for``): a blocker's position or completion, or whether the
    task is on the critical path (what ``_graph_key`` reads). A task move changes those
    of a few tasks; the others' rows stay (a day's team has over a thousand)."""
    _start, _roster, critical, positions, done_at = was
    moved = {task_id for task_id, _ in positions.items() ^ graph.positions.items()}
    moved.update(task_id for task_id, _ in done_at.items() ^ graph.done_at.items())
    flipped = critical ^ graph.critical
    return [
        n
        for n, task in enumerate(tasks)
        if "phases" in task
        and (
            as_str(task.get("id")) in flipped
            or not moved.isdisjoint(b for b in as_seq(task.get("blockedBy")) if isinstance(b, str))
        )
    ]


def _task_rows(plan: BoardPlan) -> tuple[TaskRow, ...]:
    """Every task's row (see _task_row_of), each row reused from the last layout of the
    same tasks on the same board unless it reaches "now"; after a task moved, the
    others' rows are the team's last ones (see _rows_after)."""
    graph = GraphContext.of_team(plan.timeline, plan.team_tasks)
    values = plan.task_values
    key = (values, plan.extent[0], plan.roster_key, graph.critical) if None not in values else None
    last = _TASK_ROW_SETS.get(key) if key is not None else None
    end, clamp_to = plan.extent[1], plan.clamp_to
    running: tuple[int, ...] | None = None
    team = team_of(plan.timeline)
    made_for = (plan.extent[0], plan.roster_key, graph.critical, graph.positions, graph.done_at)
    prev = _TEAM_TASK_ROWS.get(team) if key is not None and team else None
    after = None
    if (last is None or last.end != end) and prev is not None:
        after = _rows_after(prev, plan, graph, made_for)
    if after is not None:
        rows, running = after
    elif last is not None and last.end == end:
        if last.clamp_to == clamp_to:
            return last.rows
        rows = list(last.rows)
        for n in last.running:
            rows[n] = _task_row_of(plan.tasks_raw[n], values[n], n, graph, plan)
        # The same tasks: the rows that ran on to now still do (an open life or run is
        # open at any later now), the others' are the very rows (no pass over a day's).
        running = last.running
    else:
        rows = [
            _task_row_of(task, value, n, graph, plan)
            for n, (task, value) in enumerate(zip(plan.tasks_raw, values, strict=True))
        ]
    made = tuple(rows)
    if key is not None:
        if running is None:
            running = tuple(n for n, row in enumerate(made) if _runs_on(row))
        kept = _TaskRows(end, clamp_to, made, running, values, made_for)
        _TASK_ROW_SETS.put(key, kept)
        if team:
            _TEAM_TASK_ROWS.put(team, kept, owner=as_str(plan.timeline.get("sessionId")) or None)
    return made


def _moved_row(row: TaskRow, start: int, end: int) -> TaskRow | None:
    """A finished row (no part reaching now) laid out for an extent ending at ``end``:
    only its percentages move (the live edge crossed a step; every row would be built
    again at once otherwise). ``None`` when a part lies past ``end`` (it was clamped)."""
    moves = row.transitions
    if any(s.end > end for s in row.segments) or (moves and moves[-1].ms > end):
        return None
    life_left, life_width = row.life_left, row.life_width
    if moves:
        # A finished life runs from its first move to its last (see _task_row).
        first, last = moves[0].ms, moves[-1].ms
        life_left, life_width = pct(first, start, end), pct_width(first, last, start, end)
    return replace(
        row,
        segments=tuple(
            replace(s, left=pct(s.start, start, end), width=pct_width(s.start, s.end, start, end))
            for s in row.segments
        ),
        transitions=tuple(replace(m, left=pct(m.ms, start, end)) for m in moves),
        life_left=life_left,
        life_width=life_width,
    )


def task_row_key(row: TaskRow) -> tuple[Any, ...]:
    """What a task row's markup shows, as a key: not what moves with the clock or the
    extent's end and is not drawn (percentages; an open life's or run's length, which
    reach the chart's ``--open-t`` in CSS), so an open task's row is the same at every
    live poll. Plain tuples: it is computed for every row at every poll."""
    return (
        row.dom_id,
        row.task_id,
        row.subject,
        row.status,
        row.owner,
        row.tone,
        row.label,
        row.life_t,
        row.life_open,
        None if row.life_open else row.life_d,
        tuple(
            (s.t, s.open, None if s.open else s.d, s.owner, s.tone, s.label) for s in row.segments
        ),
        tuple(
            (m.t, m.ms, m.time_text, m.action, m.glyph, m.actor, m.status, m.revision)
            for m in row.transitions
        ),
        # Frozen values whose open parts carry no length: stable across live polls.
        row.phases,
        row.state_text,
        row.open_blockers,
        row.blockers,
        row.overlaps,
        row.links,
        row.critical,
    )


#: Items at the same millisecond: a message, then a task move, then a turn begun then
#: (a turn starts on what it received).
_MESSAGE_ORDER, _TASK_ORDER, _TURN_ORDER = 0, 1, 2


#: A list item with what it sorts by: its time, then its order at that time.
_Entry = tuple[int, int, ListItem]
_BY_TIME = operator.itemgetter(0, 1)

#: Each lane's list entries by its very marks (a message's key, whether it is the
#: sender's copy, its entry), each task's by its very row, each lane's turns' by its
#: very bars and its name and colour: an unchanged lane's row and a task's row that did
#: not move are the same objects from one poll to the next, so the list view's items
#: are made for what changed. Bounded by entries, by the items held in all, and per
#: task by its last two rows (a finished row moves with the extent's end, a new
#: object each time: the older ones are no board's).
LIST_ENTRIES_KEPT = 1024
LIST_ENTRY_ITEMS = 1 << 17
_LIST_ENTRIES: Memo[tuple[Any, ...], tuple[Any, ...]] = Memo(
    LIST_ENTRIES_KEPT,
    max_weight=LIST_ENTRY_ITEMS,
    weight=lambda entries: len(entries) + 1,
    lru=True,
    per_slot=2,
)


#: Each lane's list entries of its marks (a message's key, whether it is the sender's
#: copy, its entry) and of its turns, by its very marks or bars, carried from the lane's
#: previous version by each mark's or bar's identity (a changed lane's row holds mostly
#: the marks and bars of its last version, see _LaneRead). Bounded by the versions
#: still reachable: each lane's last two, of at most LIST_LANES_KEPT lanes; a mark
#: replaced (the extent's end moved) goes with the version that held it.
LIST_LANES_KEPT = 256
_MARK_ENTRIES: Carried[Mark, tuple[str, bool, _Entry]] = Carried(LIST_LANES_KEPT)
_TURN_ENTRIES: Carried[TurnBar, _Entry] = Carried(LIST_LANES_KEPT)


def _mark_entry(mark: Mark) -> tuple[str, bool, _Entry]:
    found = mark.msg_id or mark.dom_id
    kind = {"prompt": "prompt", "system": "system"}.get(mark.kind, "message")
    item = ListItem(
        ms=mark.ms,
        time_text=mark.time_text,
        kind=kind,
        text=mark.preview,
        msg_id=mark.msg_id or None,
        task_id=None,
        sender=mark.sender,
        recipient=mark.recipient,
        pending=mark.pending,
        key=f"m {found}",
    )
    return (found, mark.kind == "sent", (mark.ms, _MESSAGE_ORDER, item))


def _mark_entries(lane: LaneRow) -> tuple[tuple[str, bool, _Entry], ...]:
    return _MARK_ENTRIES.made(("marks", lane.lane_id, lane.dom_id), lane.marks, _mark_entry)


def _task_entries(task: TaskRow) -> tuple[_Entry, ...]:
    key = ("task", Same(task))
    hit = _LIST_ENTRIES.get(key)
    if hit is not None:
        return hit
    made = tuple(
        (
            move.ms,
            _TASK_ORDER,
            ListItem(
                ms=move.ms,
                time_text=move.time_text,
                kind="task",
                text=f"{move.actor} {ACTION_PHRASES.get(move.action, move.action)} "
                f"“{task.subject}”",
                msg_id=None,
                task_id=task.task_id,
                sender=None,
                recipient=None,
                key=f"t {task.task_id} {n}",
            ),
        )
        for n, move in enumerate(task.transitions)
    )
    return _LIST_ENTRIES.put(key, made, slot=task.task_id)


def _turn_entries(lane: LaneRow) -> tuple[_Entry, ...]:
    party = _shared_party(lane.name, lane.tone)

    def entry(bar: TurnBar) -> _Entry:
        item = ListItem(
            ms=bar.start,
            time_text=format_time(bar.start),
            kind="turn",
            text="",
            msg_id=None,
            task_id=None,
            sender=None,
            recipient=None,
            # Its lane and start: the same turn at the next poll.
            key=f"u {lane.lane_id} {bar.start}",
            lane=party,
            turn=bar,
        )
        return (bar.start, _TURN_ORDER, item)

    # The entries name the lane and its colour: carried over only while they are equal.
    context = (lane.name, lane.tone, lane.lane_id)
    return _TURN_ENTRIES.made(("turns", lane.lane_id, lane.dom_id), lane.turns, entry, context)


def _list_items(
    lanes: Sequence[LaneRow], tasks: Sequence[TaskRow], turns: bool = False
) -> tuple[ListItem, ...]:
    """Messages once each (the sender's copy when drawn twice, in the place of the
    first copy), prompts, task moves; ``turns``: each lane's turns too, at their start."""
    items: list[_Entry] = []
    seen: dict[str, int] = {}
    for lane in lanes:
        for found, sent, entry in _mark_entries(lane):
            at = seen.get(found)
            if at is None:
                seen[found] = len(items)
                items.append(entry)
            elif sent:
                items[at] = entry
    for task in tasks:
        items.extend(_task_entries(task))
    if turns:
        for lane in lanes:
            items.extend(_turn_entries(lane))
    items.sort(key=_BY_TIME)
    return tuple(item for _, _, item in items)


@dataclass(frozen=True, slots=True)
class BoardPlan:
    """The board-wide geometry, decided before any lane is laid out (see lane_key)."""

    timeline: Mapping[str, Any]
    view: View
    live: bool
    now: int | None
    extent: tuple[int, int]
    live_end: int | None
    clamp_to: int
    window: tuple[int, int]
    zoom: float
    px_per_ms: float
    #: The level of detail: the scale rounded to a power of two, and the chunks drawn
    #: (first and last index; ``None``: all of them, the whole extent is in view).
    scale: Scale
    drawn: Drawn | None
    roster: _Roster
    lanes_raw: tuple[Mapping[str, Any], ...]
    #: The tasks, what names each one's value (its bytes or wire generation; None: not
    #: JSON) and what the board reads of it.
    tasks_raw: tuple[Mapping[str, Any], ...]
    task_values: tuple[Hashable | None, ...]
    task_facts: tuple[TaskFacts, ...]
    team_tasks: TeamTaskFacts
    #: What _Roster resolves parties by (ids, session ids, names) and the colours: what a
    #: lane's marks say of the other parties.
    roster_key: tuple[tuple[str, str, str, str], ...]

    def lane_key(self, position: int, version: int | None = None) -> tuple[Any, ...] | None:
        """Everything a lane's markup depends on, or ``None`` when the lane cannot be
        keyed. Not "now" nor the extent's end: positions are seconds from the origin and
        open bars reach the chart's ``--open-t`` in CSS. ``version``: a number that names
        the lane's content exactly (its wire generation), used instead of a digest."""
        content: object
        if version is not None:
            content = ("wire", version)
        else:
            try:
                raw = orjson.dumps(self.lanes_raw[position], option=orjson.OPT_SORT_KEYS)
            except (TypeError, orjson.JSONEncodeError):
                return None
            content = hashlib.blake2b(raw, digest_size=16).digest()
        return (content, position, self.extent[0], self.scale, self.drawn, self.roster_key)

    def lane_row(self, position: int) -> LaneRow:
        lane = self.lanes_raw[position]
        return _lane_row(
            lane,
            position,
            self.roster,
            self.extent,
            self.clamp_to,
            self.scale,
            self.drawn,
            self.roster_key,
        )


def _board_facts(timeline: Mapping[str, Any], live: bool) -> dict[str, Any]:
    """The board's fields that come straight from the timeline, whatever is drawn."""
    frozen_at = None if live else as_int(as_map(timeline.get("range")).get("end"))
    return {
        "partial": timeline.get("source") == "partial",
        "unread": any(
            lane.get("channel") == "unreadable" and lane.get("phase") != "failed"
            for lane in map(as_map, as_seq(timeline.get("lanes")))
        ),
        "frozen_at": frozen_at,
        "frozen_text": format_time(frozen_at, "full") if frozen_at is not None else None,
        "notes": tuple(n for n in as_seq(timeline.get("notes")) if isinstance(n, str)),
        "tokens_text": tokens_text(timeline.get("tokens")),
        "tokens_title": tokens_title(timeline.get("tokens")),
    }


def _maps(items: Sequence[Any]) -> tuple[Mapping[str, Any], ...]:
    """Each item as a mapping (as_map): the items as they are when all are dicts, told
    in one pass in C (a day's tasks, at every poll)."""
    if set(map(type, items)) <= {dict}:
        return tuple(items)
    return tuple(map(as_map, items))


#: "Where the time went" by the very timeline (the 1280 px poll after the 400 px one
#: reads the same build), the newest per team (its root session).
_WHERE: Memo[tuple[Same[Mapping[str, Any]], tuple[Hashable | None, ...]], WhereTime | None] = Memo(
    TEAMS_SIZED_FOR, lru=True, per_slot=1
)


def _where_time(plan: BoardPlan) -> WhereTime | None:
    timeline = plan.timeline
    key = (Same(timeline), plan.task_values)
    hit = _WHERE.get(key)
    if hit is not None:
        return hit
    made = where_time(timeline, plan.task_values, plan.team_tasks, plan.tasks_raw)
    if made is None:
        return None
    team = team_of(timeline)
    return _WHERE.put(key, made, slot=team, owner=as_str(timeline.get("sessionId")) or None)


def plan_board(
    timeline: Mapping[str, Any], view: View, task_versions: Sequence[int] | None = None
) -> BoardPlan | Board:
    """The plan of a board, or the (finished) board when there is nothing to draw.
    ``task_versions``: a number per task that names its value exactly (its wire
    generation), used instead of its bytes."""
    live = bool(timeline.get("live"))
    now = as_int(timeline.get("generatedAt")) if live else None
    lanes_raw = tuple(as_map(lane) for lane in as_seq(timeline.get("lanes")))
    tasks_raw = _maps(as_seq(timeline.get("tasks")))
    # What names each task's value, once per layout: what is read of it and its row are
    # reused by it.
    values: tuple[Hashable | None, ...]
    if task_versions is not None and len(task_versions) == len(tasks_raw):
        values = tuple(task_versions)
    else:
        values = tuple(_value_key(task) for task in tasks_raw)
    team_tasks = team_task_facts(tasks_raw, values)
    extent = board_extent(timeline, now, team_tasks.moves)
    if extent is None:
        facts = _board_facts(timeline, live)
        anchor = now or facts["frozen_at"] or 0
        return Board(
            empty=True, live=live, extent_start=anchor, extent_end=anchor + MIN_EXTENT_MS,
            window_start=anchor, window_end=anchor + MIN_EXTENT_MS, follow=view.follow,
            zoom=1.0, scroll=0.0, now=now, now_left=None, tick_fmt="hms", ticks=(), lanes=(),
            tasks=(), items=(), message_count=0, track_px=view.track_px,
            list_turns=view.list_turns, **facts,
        )  # fmt: skip
    start, end = extent
    live_end = None
    if now is not None and as_int(as_map(timeline.get("range")).get("end")) is None:
        live_end = end
        end = quantized_end(start, live_end)
    # Open spans run to "now" while live, to the frozen end otherwise; never past the extent.
    clamp_to = min(now if now is not None else end, end)
    win_start, win_end = view_window(view, start, end, live, live_end)
    zoom = round((end - start) / max(win_end - win_start, 1), 4)
    roster = _Roster(lanes_raw)
    px_per_ms = view.track_px * zoom / max(end - start, 1)
    scale = Scale.of(px_per_ms)
    drawn = None
    if zoom >= DRAW_ALL_BELOW_ZOOM:
        # Zoomed in: only the chunks near the window, so the board's size follows the
        # pixels, not the history.
        margin = int((win_end - win_start) * DRAWN_MARGIN_WINDOWS)
        live_from = None
        if live_end is not None:
            live_from = chunk_index(max(live_end - margin, start), start, scale.chunk_ms)
        drawn = Drawn(
            chunk_index(max(win_start - margin, start), start, scale.chunk_ms),
            chunk_index(min(win_end + margin, end), start, scale.chunk_ms),
            live_from,
        )
    return BoardPlan(
        timeline=timeline,
        view=view,
        live=live,
        now=now,
        extent=(start, end),
        live_end=live_end,
        clamp_to=clamp_to,
        window=(win_start, win_end),
        zoom=zoom,
        px_per_ms=px_per_ms,
        scale=scale,
        drawn=drawn,
        roster=roster,
        lanes_raw=lanes_raw,
        tasks_raw=tasks_raw,
        task_values=values,
        task_facts=team_tasks.facts,
        team_tasks=team_tasks,
        roster_key=tuple(
            (
                as_str(lane.get("id")),
                as_str(lane.get("sessionId")),
                as_str(lane.get("name")),
                lane_tone(lane).classes,
            )
            for lane in lanes_raw
        ),
    )


def task_window(count: int, page: int) -> tuple[int, int]:
    """Which task rows are drawn: ``page`` 0 is the newest two pages, 1 a page earlier…"""
    pages = -(-count // TASK_PAGE)
    start = max(0, (pages - 2 - max(page, 0)) * TASK_PAGE)
    return start, min(count, start + 2 * TASK_PAGE)


def finish_board(plan: BoardPlan, lanes: tuple[LaneRow, ...]) -> Board:
    """The board of ``plan`` with these lane rows (one per ``plan.lanes_raw``)."""
    timeline, view = plan.timeline, plan.view
    start, end = plan.extent
    win_start, win_end = plan.window
    tasks = _task_rows(plan)
    drawn_from = None if plan.drawn is None else start + plan.drawn.first * plan.scale.chunk_ms
    drawn_to = None if plan.drawn is None else start + (plan.drawn.last + 1) * plan.scale.chunk_ms
    drawn_range = None if drawn_from is None or drawn_to is None else (drawn_from, drawn_to)
    fmt, ticks = make_ticks(start, end, win_start, win_end, view.track_px, drawn_range)
    # The list's items only when the list is shown (a live poll of the chart needs none).
    items = _list_items(lanes, tasks, view.list_turns) if view.listing else ()
    shown_from, shown_to = task_window(len(tasks), view.task_page)
    pages = max(1, -(-len(items) // LIST_PAGE))
    page = min(view.list_page, pages - 1)
    # Page 0 is the newest: the last LIST_PAGE items, in time order.
    stop = len(items) - page * LIST_PAGE
    page_items = items[max(stop - LIST_PAGE, 0) : stop]
    now = plan.now
    return Board(
        empty=False,
        live=plan.live,
        extent_start=start,
        extent_end=end,
        window_start=win_start,
        window_end=win_end,
        follow=view.follow and plan.live,
        zoom=plan.zoom,
        scroll=round((win_start - start) / max(end - start, 1), 6),
        now=now,
        now_left=pct(now, start, end) if now is not None else None,
        tick_fmt=fmt,
        ticks=ticks,
        lanes=lanes,
        tasks=tasks,
        items=items,
        message_count=message_count(lanes),
        track_px=view.track_px,
        open_end_left=pct(plan.clamp_to, start, end),
        live_end=plan.live_end,
        span_s=seconds(end, start),
        open_t=seconds(plan.clamp_to, start),
        now_t=seconds(now, start) if now is not None else None,
        list_page=page,
        list_pages=pages,
        page_items=page_items,
        listing=view.listing,
        list_turns=view.list_turns,
        task_rows=tasks[shown_from:shown_to],
        tasks_before=shown_from,
        tasks_after=len(tasks) - shown_to,
        task_page=view.task_page if shown_from or shown_to < len(tasks) else 0,
        drawn_from=drawn_from,
        drawn_to=drawn_to,
        where=_where_time(plan),
        **_board_facts(timeline, plan.live),
    )


def layout_board(timeline: Mapping[str, Any], view: View) -> Board:
    """Everything the board template draws, for this timeline seen through this view."""
    plan = plan_board(timeline, view)
    if isinstance(plan, Board):
        return plan
    return finish_board(plan, tuple(plan.lane_row(n) for n in range(len(plan.lanes_raw))))


def find_span_time(timeline: Mapping[str, Any], span_id: str) -> int | None:
    """When the span (message or prompt) with this id happened, for ``msg=``."""
    for lane in as_seq(timeline.get("lanes")):
        for span in as_seq(as_map(lane).get("spans")):
            span = as_map(span)
            if span.get("id") == span_id:
                return as_int(span.get("time"))
    return None


def parties(timeline: Mapping[str, Any], message: Mapping[str, Any]) -> tuple[Party, Party | None]:
    """The sender and recipient of a full message, in their lanes' colours."""
    roster = _Roster(as_map(lane) for lane in as_seq(timeline.get("lanes")))
    to = message.get("to")
    return roster.party(as_map(message.get("from"))), (
        roster.party(as_map(to)) if isinstance(to, Mapping) else None
    )
