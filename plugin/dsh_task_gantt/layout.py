"""Where everything on the board goes: pure geometry from a timeline dict and a view.

The templates do no arithmetic; every position, width, tick and label comes from
:func:`layout_board`. Positions are percentages of the board's *extent* (the whole
timeline, from its first event to the frozen end or, while live, a little past the
server's "now"), so the browser zooms by widening the track and scrolls natively;
the view (a time window) decides the zoom factor, the initial scroll and the tick
step. "Now" is the timeline's ``generatedAt``: it places the now-line and clamps open
spans, and is never written back into any data.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import orjson

#: Readable tick steps, seconds to a day.
TICK_STEPS_MS: tuple[int, ...] = (
    1_000, 2_000, 5_000, 10_000, 15_000, 30_000,
    60_000, 120_000, 300_000, 600_000, 900_000, 1_800_000,
    3_600_000, 7_200_000, 10_800_000, 21_600_000, 43_200_000, 86_400_000,
)  # fmt: skip
#: The room (px) a tick needs for its label, by label format ("12:05" is short,
#: "Oct 10 12:05" is not): a sidebar gets ticks every 5 minutes, not every 10.
TICK_LABEL_PX = {"hms": 64, "hm": 46, "dhm": 88, "d": 52}
#: Never draw more ticks than this (a deep zoom on a long team): the rest is off screen.
MAX_TICKS = 240
#: Track width assumed when the browser did not say (a 400 px sidebar minus the names).
DEFAULT_TRACK_PX = 300
#: A mark is a glyph chip this wide; closer marks go to the next row so each stays clickable.
MARK_PX = 14
MARK_ROWS = 3
#: The narrowest window a view may zoom to, and the smallest extent drawn.
MIN_WINDOW_MS = 2_000
MIN_EXTENT_MS = 10_000
#: Room after "now" on a live board, so the now-line is not glued to the edge.
LIVE_HEADROOM_FRACTION = 0.03
LIVE_HEADROOM_MIN_MS = 5_000
#: A live extent's end moves in steps of about 1/EXTENT_STEPS of it (see quantized_end).
EXTENT_STEPS = 64
#: The window ``t=`` opens on when no window is given.
DEFAULT_FOCUS_WINDOW_MS = 10 * 60_000
#: Colours repeat every this many lanes; from then on lanes differ by a pattern too.
PALETTE_SIZE = 5
MAX_VARIANT = 3

#: Task statuses after which nothing more happens to a task.
FINISHED_STATUSES = frozenset({"completed", "deleted"})

_SLOT_TONES = tuple(f"c{n}" for n in range(PALETTE_SIZE))
_ACTION_GLYPHS = {"created": "+", "claimed": "▶", "completed": "✓", "reopened": "↺"}


@dataclass(frozen=True, slots=True)
class View:
    """The time window the user looks at; ``None`` ends mean fit-all."""

    start: int | None = None
    end: int | None = None
    #: Keep the window's width but slide it to "now" on every live update.
    follow: bool = False
    #: Visible track width in px (the browser reports it), for ticks and mark spacing.
    track_px: int = DEFAULT_TRACK_PX


@dataclass(frozen=True, slots=True)
class Tick:
    left: float
    ms: int
    label: str  # UTC fallback; the browser rewrites it in local time
    fmt: str  # "hms" | "hm" | "dhm" | "d"
    #: "start"/"end": so close to an end of the track that a centred label would be cut
    #: (under the names, or past the edge); the label then sits on that side of its tick.
    align: str = ""


@dataclass(frozen=True, slots=True)
class Tone:
    """How a lane's colour is drawn: a palette class and a pattern variant."""

    css: str  # c0..c4 (palette slots), cu (unassigned), cx (system), cp (human prompt)
    variant: int  # 0 solid, 1 hatched, 2 dotted, 3 outlined (lanes 6+, 11+, 16+)

    @property
    def classes(self) -> str:
        return f"{self.css} v{self.variant}"


@dataclass(frozen=True, slots=True)
class Party:
    name: str
    tone: Tone


@dataclass(frozen=True, slots=True)
class TurnBar:
    left: float
    width: float
    start: int
    end: int  # clamped to now / extent end when open
    open: bool
    label: str


@dataclass(frozen=True, slots=True)
class Mark:
    dom_id: str
    msg_id: str
    kind: str  # "sent" | "received" | "prompt" | "system"
    glyph: str
    left: float
    row: int
    ms: int
    time_text: str
    tone: Tone  # the other party's colour (or the prompt / system colour)
    sender: Party
    recipient: Party | None
    label: str  # aria prefix: "message from A to B" (the time is appended)
    preview: str
    #: Sent but not delivered yet (``deliveredAt`` is null): drawn hollow and said so.
    pending: bool = False

    @property
    def note(self) -> str:
        """Said after the time in the mark's label and tooltip."""
        return ", delivery pending" if self.pending else ""


@dataclass(frozen=True, slots=True)
class Segment:
    left: float
    width: float
    start: int
    end: int
    open: bool
    owner: str
    tone: Tone
    label: str


@dataclass(frozen=True, slots=True)
class Transition:
    left: float
    ms: int
    time_text: str
    action: str
    glyph: str
    actor: str
    status: str
    revision: int | None


@dataclass(frozen=True, slots=True)
class TaskRow:
    dom_id: str
    task_id: str
    subject: str
    status: str
    owner: str
    tone: Tone
    #: The faint line from creation to completion (or now): the task's whole life.
    life_left: float
    life_width: float
    segments: tuple[Segment, ...]
    transitions: tuple[Transition, ...]
    label: str


@dataclass(frozen=True, slots=True)
class LaneRow:
    dom_id: str
    lane_id: str
    kind: str
    name: str
    index: int
    tone: Tone
    status: str | None
    phase: str | None
    channel: str
    error: str | None
    #: One short word under the name: running/idle, else the member's phase, else a
    #: log that could not be read or is empty.
    state_text: str
    turns: tuple[TurnBar, ...]
    marks: tuple[Mark, ...]
    rows: int  # mark rows used (1..MARK_ROWS), for the lane height


@dataclass(frozen=True, slots=True)
class ListItem:
    ms: int
    time_text: str
    kind: str  # "message" | "prompt" | "system" | "task"
    text: str
    msg_id: str | None
    task_id: str | None
    sender: Party | None
    recipient: Party | None
    pending: bool = False


@dataclass(frozen=True, slots=True)
class Board:
    empty: bool
    live: bool
    partial: bool
    extent_start: int
    extent_end: int
    window_start: int
    window_end: int
    follow: bool
    zoom: float  # track width / visible width
    scroll: float  # window start as a fraction of the extent
    now: int | None
    now_left: float | None
    frozen_at: int | None
    frozen_text: str | None
    tick_fmt: str
    ticks: tuple[Tick, ...]
    lanes: tuple[LaneRow, ...]
    tasks: tuple[TaskRow, ...]
    items: tuple[ListItem, ...]
    notes: tuple[str, ...]
    message_count: int
    track_px: int  # the visible track width this layout assumed
    #: Where open spans end, as a percentage of the extent ("now" while live, the
    #: frozen end otherwise): the board sets it once and open bars reach it in CSS, so
    #: a lane's markup does not change while only the clock moves.
    open_end_left: float = 100.0
    #: The live edge ("now" plus headroom) a following window slides to; the extent end
    #: is rounded up from it in coarse steps so positions stay put from poll to poll.
    live_end: int | None = None


# ---------------------------------------------------------------------------
# small total readers (the dict comes from our own builder, but never trust shape)


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value == value and abs(value) < 2**62:
        return int(value)
    return None


def _str(value: Any, default: str = "") -> str:
    return value if isinstance(value, str) else default


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _seq(value: Any) -> Sequence[Any]:
    return value if isinstance(value, list | tuple) else ()


# ---------------------------------------------------------------------------
# views


_ISO_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T")


def parse_time_param(raw: str | None) -> int | None:
    """Epoch ms, or an ISO 8601 instant (``Z`` or offset); anything else is ignored."""
    if not raw:
        return None
    raw = raw.strip()
    if raw.lstrip("-").isdigit() and len(raw) <= 16:
        return int(raw)
    if _ISO_RE.match(raw):
        try:
            parsed = datetime.fromisoformat(raw.replace("Z", "+00:00"))
        except ValueError:
            return None
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=UTC)
        return int(parsed.timestamp() * 1000)
    return None


def parse_view(params: Mapping[str, str]) -> View:
    """The view from URL parameters ``from``, ``to``, ``follow``, ``t`` and ``w``.

    ``t`` centres the window on a time (keeping ``to - from`` when given); a window
    that is backwards or incomplete means fit-all. Never raises.
    """
    start = parse_time_param(params.get("from"))
    end = parse_time_param(params.get("to"))
    follow = params.get("follow") in {"1", "true", "yes", "on"}
    track_px = DEFAULT_TRACK_PX
    raw_w = params.get("w", "")
    if raw_w.isdigit():
        track_px = min(max(int(raw_w), 80), 100_000)
    if start is None or end is None or end <= start:
        start = end = None
    focus = parse_time_param(params.get("t"))
    if focus is not None:
        width = (end - start) if start is not None and end is not None else DEFAULT_FOCUS_WINDOW_MS
        start, end, follow = focus - width // 2, focus + (width - width // 2), False
    return View(start=start, end=end, follow=follow, track_px=track_px)


# ---------------------------------------------------------------------------
# time text (UTC fallback; the browser rewrites every [data-ms] in local time)


@functools.lru_cache(maxsize=1 << 16)
def format_time(ms: int, fmt: str = "hms") -> str:
    """UTC text of a time (cached: every poll labels the same thousands of times)."""
    moment = datetime.fromtimestamp(ms / 1000, tz=UTC)
    if fmt == "hm":
        return moment.strftime("%H:%M")
    if fmt == "dhm":
        return moment.strftime("%b %d %H:%M")
    if fmt == "d":
        return moment.strftime("%b %d")
    if fmt == "full":
        return moment.strftime("%Y-%m-%d %H:%M:%S UTC")
    return moment.strftime("%H:%M:%S")


def choose_tick_step(window_ms: int, track_px: int) -> int:
    """The smallest step whose labels get the room :data:`TICK_LABEL_PX` asks for."""
    px_per_ms = max(track_px, 1) / max(window_ms, 1)
    for step in TICK_STEPS_MS:
        if step * px_per_ms >= TICK_LABEL_PX[tick_format(step, window_ms)]:
            return step
    days = 2
    while days * TICK_STEPS_MS[-1] * px_per_ms < TICK_LABEL_PX["d"]:
        days *= 2
    return days * TICK_STEPS_MS[-1]


def tick_format(step_ms: int, window_ms: int) -> str:
    if step_ms >= TICK_STEPS_MS[-1]:
        return "d"
    if window_ms > TICK_STEPS_MS[-1]:
        return "dhm"
    if step_ms >= 60_000:
        return "hm"
    return "hms"


def make_ticks(
    extent_start: int, extent_end: int, window_start: int, window_end: int, track_px: int
) -> tuple[str, tuple[Tick, ...]]:
    """Ticks at whole multiples of the step (UTC), over the extent, at most MAX_TICKS of
    them, centred on the window when the extent holds more."""
    window = max(window_end - window_start, 1)
    step = choose_tick_step(window, track_px)
    fmt = tick_format(step, window)
    lo, hi = extent_start, extent_end
    if (hi - lo) // step > MAX_TICKS:
        middle = (window_start + window_end) // 2
        lo = max(extent_start, middle - step * (MAX_TICKS // 2))
        hi = min(extent_end, lo + step * MAX_TICKS)
    first = -(-lo // step) * step
    px_per_ms = max(track_px, 1) / window
    half_label_px = TICK_LABEL_PX[fmt] * 0.4

    def align(ms: int) -> str:
        if (ms - extent_start) * px_per_ms < half_label_px:
            return "start"
        if (extent_end - ms) * px_per_ms < half_label_px:
            return "end"
        return ""

    ticks = tuple(
        Tick(
            left=_pct(ms, extent_start, extent_end),
            ms=ms,
            label=format_time(ms, fmt),
            fmt=fmt,
            align=align(ms),
        )
        for ms in range(first, hi + 1, step)
    )
    return fmt, ticks


def _pct(ms: int, start: int, end: int) -> float:
    return round((ms - start) * 100 / max(end - start, 1), 3)


def _width(a: int, b: int, start: int, end: int) -> float:
    return round(max(b - a, 0) * 100 / max(end - start, 1), 3)


# ---------------------------------------------------------------------------
# lanes, colours and parties


def lane_tone(lane: Mapping[str, Any]) -> Tone:
    colour = _map(lane.get("color"))
    slot = _int(colour.get("slot"))
    index = max(_int(lane.get("index")) or 0, 0)
    variant = min(index // PALETTE_SIZE, MAX_VARIANT)
    if slot is None or lane.get("kind") == "unassigned":
        return Tone("cu", 0)  # its own neutral colour, shared with no lane
    return Tone(_SLOT_TONES[slot % PALETTE_SIZE], variant)


PROMPT_TONE = Tone("cp", 0)
SYSTEM_TONE = Tone("cx", 0)
USER_NAME = "you"


class _Roster:
    """Resolve a span's ``from``/``to`` to a lane's name and colour."""

    def __init__(self, lanes: Iterable[Mapping[str, Any]]) -> None:
        self._by_key: dict[str, tuple[str, Tone]] = {}
        self._by_name: dict[str, tuple[str, Tone]] = {}
        for lane in lanes:
            entry = (_str(lane.get("name"), _str(lane.get("id"))), lane_tone(lane))
            for key in (lane.get("id"), lane.get("sessionId")):
                if isinstance(key, str) and key:
                    self._by_key.setdefault(key, entry)
            if entry[0]:
                self._by_name.setdefault(entry[0], entry)

    def party(self, who: Mapping[str, Any]) -> Party:
        kind = _str(who.get("kind"))
        name = _str(who.get("name")) or _str(who.get("id")) or "unknown"
        if kind == "user":
            return Party(USER_NAME, PROMPT_TONE)
        if kind == "system":
            key = _str(who.get("id"))
            if key and name == key and len(key) > 12:
                # A session outside the team, known only by its id: say so, briefly.
                return Party(f"outside the team ({key[:8]}…)", SYSTEM_TONE)
            return Party(name if name != "unknown" else "system", SYSTEM_TONE)
        key = _str(who.get("id"))
        found = self._by_key.get(key) or self._by_name.get(name)
        if found is None and kind == "lead":
            found = self._by_key.get("lead")
        if found is None:
            return Party(name, SYSTEM_TONE)
        return Party(name, found[1])

    def by_name(self, name: str) -> tuple[str, Tone] | None:
        return self._by_name.get(name)


# ---------------------------------------------------------------------------
# the board


def _extent(timeline: Mapping[str, Any], now: int | None) -> tuple[int, int] | None:
    """``(start, end)`` of everything drawn; while live, ``end`` is the live edge."""
    times: list[int] = []
    for lane in _seq(timeline.get("lanes")):
        for span in _seq(_map(lane).get("spans")):
            if type(span) is dict:  # our builder's spans: exact types first (a hot path)
                time, end = span.get("time"), span.get("end")
                if type(time) is int and (end is None or type(end) is int):
                    times.append(time)
                    if end is not None:
                        times.append(end)
                    continue
            span = _map(span)
            for key in ("time", "end"):
                value = _int(span.get(key))
                if value is not None:
                    times.append(value)
    for task in _seq(timeline.get("tasks")):
        for entry in _seq(_map(task).get("history")):
            value = _int(_map(entry).get("time"))
            if value is not None:
                times.append(value)
    rng = _map(timeline.get("range"))
    start = _int(rng.get("start"))
    end = _int(rng.get("end"))
    if start is None:
        if not times:
            return None
        start = min(times)
    if end is None:
        candidates = [*times, start]
        if now is not None:
            candidates.append(now)
        end = max(candidates)
        if now is not None:
            end += max(LIVE_HEADROOM_MIN_MS, int((end - start) * LIVE_HEADROOM_FRACTION))
    if end - start < MIN_EXTENT_MS:
        end = start + MIN_EXTENT_MS
    return start, end


def quantized_end(start: int, live_end: int) -> int:
    """The extent end of a live board: ``live_end`` rounded up to a step of 1/64 to
    1/32 of the extent (a power of two in ms). Positions are percentages of the
    extent, so they change only when the live edge crosses a step — not at every
    poll — and lanes that did not change keep their markup."""
    step = 1 << max(0, ((live_end - start) // EXTENT_STEPS).bit_length())
    return start + -(-(live_end - start) // step) * step


def _window(
    view: View, start: int, end: int, live: bool, live_end: int | None = None
) -> tuple[int, int]:
    if view.start is None or view.end is None:
        return start, end
    width = min(max(view.end - view.start, MIN_WINDOW_MS), end - start)
    lo = view.start
    if view.follow and live:
        lo = (live_end if live_end is not None else end) - width
    lo = min(max(lo, start), end - width)
    return lo, lo + width


def _mark_rows(lefts_px: Sequence[float]) -> tuple[list[int], int]:
    """Greedy rows: a mark goes to the first row whose last mark is a chip's width away."""
    last: list[float] = []
    rows: list[int] = []
    for x in lefts_px:
        for row, edge in enumerate(last):
            if x - edge >= MARK_PX:
                last[row] = x
                rows.append(row)
                break
        else:
            if len(last) < MARK_ROWS:
                last.append(x)
                rows.append(len(last) - 1)
            else:  # crowded beyond MARK_ROWS: the row whose mark is farthest back
                row = min(range(len(last)), key=last.__getitem__)
                last[row] = x
                rows.append(row)
    return rows, max(len(last), 1)


def _turn_bar(time: int, stop: int, start: int, end: int, closed: int | None) -> TurnBar:
    return TurnBar(
        left=_pct(time, start, end),
        width=_width(time, stop, start, end),
        start=time,
        end=stop,
        open=closed is None,
        label=f"turn {format_time(time)}–" + (format_time(closed) if closed is not None else "now"),
    )


@functools.lru_cache(maxsize=1 << 15)
def _closed_bar(time: int, closed: int, start: int, end: int) -> TurnBar:
    """A closed turn's bar (cached: a lane that changed still has its old turns, and a
    lead has thousands)."""
    return _turn_bar(time, min(max(closed, time), end), start, end, closed)


def _lane_row(
    lane: Mapping[str, Any],
    position: int,
    roster: _Roster,
    extent: tuple[int, int],
    clamp_to: int,
    px_per_ms: float,
) -> LaneRow:
    start, end = extent
    turns: list[TurnBar] = []
    raw_marks: list[tuple[int, Mapping[str, Any]]] = []
    for span in _seq(lane.get("spans")):
        span = _map(span)
        time = _int(span.get("time"))
        if time is None:
            continue
        kind = _str(span.get("kind"))
        if kind == "turn":
            closed = _int(span.get("end"))
            if closed is not None:
                turns.append(_closed_bar(time, closed, start, end))
                continue
            turns.append(_turn_bar(time, min(max(clamp_to, time), end), start, end, None))
        elif kind in {"message", "user-prompt"}:
            raw_marks.append((time, span))
    raw_marks.sort(key=lambda pair: pair[0])
    rows, used = _mark_rows([(t - start) * px_per_ms for t, _ in raw_marks])
    marks = tuple(
        _mark(span, time, row, f"m{position}-{n}", roster, extent)
        for n, ((time, span), row) in enumerate(zip(raw_marks, rows, strict=True))
    )
    status = _str(lane.get("status")) or None
    phase = _str(lane.get("phase")) or None
    channel = _str(lane.get("channel"))
    state_text = status or phase or (channel if channel in {"unreadable", "empty"} else "")
    return LaneRow(
        dom_id=f"lane-{position}",
        lane_id=_str(lane.get("id")),
        kind=_str(lane.get("kind"), "teammate"),
        name=_str(lane.get("name")) or _str(lane.get("id")) or "?",
        index=_int(lane.get("index")) or position,
        tone=lane_tone(lane),
        status=status,
        phase=phase,
        channel=channel,
        error=_str(lane.get("error")) or None,
        state_text=state_text,
        turns=tuple(turns),
        marks=marks,
        rows=used,
    )


def _mark(
    span: Mapping[str, Any],
    time: int,
    row: int,
    dom_id: str,
    roster: _Roster,
    extent: tuple[int, int],
) -> Mark:
    sender = roster.party(_map(span.get("from")))
    # Only an explicit null is "pending": a host that does not say is not guessed at.
    pending = (
        span.get("kind") == "message"
        and "deliveredAt" in span
        and (span.get("deliveredAt") is None)
    )
    raw_to = span.get("to")
    recipient = roster.party(_map(raw_to)) if isinstance(raw_to, Mapping) else None
    if span.get("kind") == "user-prompt" or _map(span.get("from")).get("kind") == "user":
        kind, glyph, tone = "prompt", "◆", PROMPT_TONE
        label = "your prompt"
    elif _map(span.get("from")).get("kind") == "system":
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
        msg_id=_str(span.get("id")),
        kind=kind,
        glyph=glyph,
        left=_pct(time, *extent),
        row=row,
        ms=time,
        time_text=format_time(time),
        tone=tone,
        sender=sender,
        recipient=recipient,
        label=label,
        preview=_str(span.get("preview")),
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
            (_int(_map(e).get("time")), n, _map(e))
            for n, e in enumerate(_seq(task.get("history")))
            if _int(_map(e).get("time")) is not None
        ),
        key=lambda item: (item[0], item[1]),
    )
    owner_name = _str(task.get("ownerName"))
    owner_found = roster.by_name(owner_name) if owner_name else None
    owner_tone = owner_found[1] if owner_found else Tone("cu", 0)

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
        tone = found[1] if found else Tone("cu", 0)
        segments.append(
            Segment(
                left=_pct(run_start, start, end),
                width=_width(run_start, stop, start, end),
                start=run_start,
                end=stop,
                open=still_open,
                owner=run_owner or "?",
                tone=tone,
                label=f"{run_owner or '?'} {format_time(run_start)}–"
                + ("now" if still_open else format_time(stop)),
            )
        )
        run_start = None

    for time, _, entry in history:
        assert time is not None
        action = _str(entry.get("action"), "updated")
        status = _str(entry.get("status"))
        actor = _str(entry.get("actor"))
        in_progress = status == "in_progress"
        if in_progress and (run_start is None or (action == "claimed" and actor != run_owner)):
            close_run(time, False)  # a hand-off ends the previous owner's run
            run_start, run_owner = time, actor or owner_name
        elif not in_progress:
            close_run(time, False)
        transitions.append(
            Transition(
                left=_pct(time, start, end),
                ms=time,
                time_text=format_time(time),
                action=action,
                glyph=_ACTION_GLYPHS.get(action, "•"),
                actor=actor or "unknown",
                status=status,
                revision=_int(entry.get("revision")),
            )
        )
    close_run(clamp_to, True)

    status = _str(task.get("status"))
    if history:
        first = history[0][0]
        assert first is not None
        last = history[-1][0]
        assert last is not None
        # A finished task's life ends at its last move; an unfinished one's runs on to now.
        stop = last if status in FINISHED_STATUSES else max(clamp_to, last)
        life_left, life_width = _pct(first, start, end), _width(first, min(stop, end), start, end)
    else:
        life_left = life_width = 0.0
    subject = _str(task.get("subject")) or _str(task.get("id")) or "task"
    return TaskRow(
        dom_id=f"task-{position}",
        task_id=_str(task.get("id")),
        subject=subject,
        status=status or "unknown",
        owner=owner_name,
        tone=owner_tone,
        life_left=life_left,
        life_width=life_width,
        segments=tuple(segments),
        transitions=tuple(transitions),
        label=f"task {subject}, {status.replace('_', ' ') or 'unknown'}"
        + (f", owner {owner_name}" if owner_name else ""),
    )


def _list_items(lanes: Sequence[LaneRow], tasks: Sequence[TaskRow]) -> tuple[ListItem, ...]:
    """Messages once each (the sender's copy when drawn twice), prompts, task moves."""
    items: list[tuple[int, int, ListItem]] = []
    seen: dict[str, int] = {}
    for lane in lanes:
        for mark in lane.marks:
            key = mark.msg_id or mark.dom_id
            if key in seen and mark.kind != "sent":
                continue
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
            )
            if key in seen:
                items[seen[key]] = (mark.ms, 0, item)
            else:
                seen[key] = len(items)
                items.append((mark.ms, 0, item))
    for task in tasks:
        for move in task.transitions:
            items.append(
                (
                    move.ms,
                    1,
                    ListItem(
                        ms=move.ms,
                        time_text=move.time_text,
                        kind="task",
                        text=f"{move.actor} {move.action} “{task.subject}”",
                        msg_id=None,
                        task_id=task.task_id,
                        sender=None,
                        recipient=None,
                    ),
                )
            )
    items.sort(key=lambda item: (item[0], item[1]))
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
    roster: _Roster
    lanes_raw: tuple[Mapping[str, Any], ...]
    #: What _Roster resolves parties by (ids, session ids, names) and the colours: what a
    #: lane's marks say of the other parties.
    roster_key: tuple[tuple[str, str, str, str], ...]

    def lane_key(self, position: int) -> tuple[Any, ...] | None:
        """Everything a lane's row depends on except "now" (open bars reach the board's
        ``open_end_left`` in CSS), or ``None`` when the lane cannot be keyed."""
        try:
            content = orjson.dumps(self.lanes_raw[position], option=orjson.OPT_SORT_KEYS)
        except (TypeError, orjson.JSONEncodeError):
            return None
        digest = hashlib.blake2b(content, digest_size=16).digest()
        return (digest, position, self.extent, self.px_per_ms, self.roster_key)

    def lane_row(self, position: int) -> LaneRow:
        lane = self.lanes_raw[position]
        return _lane_row(lane, position, self.roster, self.extent, self.clamp_to, self.px_per_ms)


def _board_facts(timeline: Mapping[str, Any], live: bool) -> dict[str, Any]:
    """The board's fields that come straight from the timeline, whatever is drawn."""
    frozen_at = None if live else _int(_map(timeline.get("range")).get("end"))
    return {
        "partial": timeline.get("source") == "partial",
        "frozen_at": frozen_at,
        "frozen_text": format_time(frozen_at, "full") if frozen_at is not None else None,
        "notes": tuple(n for n in _seq(timeline.get("notes")) if isinstance(n, str)),
    }


def plan_board(timeline: Mapping[str, Any], view: View) -> BoardPlan | Board:
    """The plan of a board, or the (finished) board when there is nothing to draw."""
    live = bool(timeline.get("live"))
    now = _int(timeline.get("generatedAt")) if live else None
    lanes_raw = tuple(_map(lane) for lane in _seq(timeline.get("lanes")))
    extent = _extent(timeline, now)
    if extent is None:
        facts = _board_facts(timeline, live)
        anchor = now or facts["frozen_at"] or 0
        return Board(
            empty=True, live=live, extent_start=anchor, extent_end=anchor + MIN_EXTENT_MS,
            window_start=anchor, window_end=anchor + MIN_EXTENT_MS, follow=view.follow,
            zoom=1.0, scroll=0.0, now=now, now_left=None, tick_fmt="hms", ticks=(), lanes=(),
            tasks=(), items=(), message_count=0, track_px=view.track_px, **facts,
        )  # fmt: skip
    start, end = extent
    live_end = None
    if now is not None and _int(_map(timeline.get("range")).get("end")) is None:
        live_end = end
        end = quantized_end(start, live_end)
    # Open spans run to "now" while live, to the frozen end otherwise; never past the extent.
    clamp_to = min(now if now is not None else end, end)
    win_start, win_end = _window(view, start, end, live, live_end)
    zoom = round((end - start) / max(win_end - win_start, 1), 4)
    roster = _Roster(lanes_raw)
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
        px_per_ms=view.track_px * zoom / max(end - start, 1),
        roster=roster,
        lanes_raw=lanes_raw,
        roster_key=tuple(
            (
                _str(lane.get("id")),
                _str(lane.get("sessionId")),
                _str(lane.get("name")),
                lane_tone(lane).classes,
            )
            for lane in lanes_raw
        ),
    )


def finish_board(plan: BoardPlan, lanes: tuple[LaneRow, ...]) -> Board:
    """The board of ``plan`` with these lane rows (one per ``plan.lanes_raw``)."""
    timeline, view = plan.timeline, plan.view
    start, end = plan.extent
    win_start, win_end = plan.window
    tasks_raw = [_map(task) for task in _seq(timeline.get("tasks"))]
    tasks = tuple(
        _task_row(task, n, plan.roster, plan.extent, plan.clamp_to)
        for n, task in enumerate(tasks_raw)
    )
    fmt, ticks = make_ticks(start, end, win_start, win_end, view.track_px)
    items = _list_items(lanes, tasks)
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
        now_left=_pct(now, start, end) if now is not None else None,
        tick_fmt=fmt,
        ticks=ticks,
        lanes=lanes,
        tasks=tasks,
        items=items,
        message_count=sum(1 for item in items if item.kind in {"message", "system"}),
        track_px=view.track_px,
        open_end_left=_pct(plan.clamp_to, start, end),
        live_end=plan.live_end,
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
    for lane in _seq(timeline.get("lanes")):
        for span in _seq(_map(lane).get("spans")):
            span = _map(span)
            if span.get("id") == span_id:
                return _int(span.get("time"))
    return None


def parties(timeline: Mapping[str, Any], message: Mapping[str, Any]) -> tuple[Party, Party | None]:
    """The sender and recipient of a full message, in their lanes' colours."""
    roster = _Roster(_map(lane) for lane in _seq(timeline.get("lanes")))
    to = message.get("to")
    return roster.party(_map(message.get("from"))), (
        roster.party(_map(to)) if isinstance(to, Mapping) else None
    )
