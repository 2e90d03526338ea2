"""The board's geometry: views, the extent, the window and ticks."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from itertools import repeat
from typing import Any

from ..memo import HISTORY_ITEMS_KEPT, Memo, Same
from ..timeline.identity import common_head
from ..timetext import format_time
from .model import DEFAULT_TRACK_PX, MIN_WINDOW_MS, Tick, View

#: Readable tick steps, seconds to a day.
TICK_STEPS_MS: tuple[int, ...] = (
    1_000, 2_000, 5_000, 10_000, 15_000, 30_000,
    60_000, 120_000, 300_000, 600_000, 900_000, 1_800_000,
    3_600_000, 7_200_000, 10_800_000, 21_600_000, 43_200_000, 86_400_000,
)  # fmt: skip
#: The room (px) a tick needs for its label, by label format ("12:05" is short,
#: "Oct 10 12:05" is not): a sidebar gets ticks every 5 minutes, not every 10.
TICK_LABEL_PX = {"hms": 64, "hm": 46, "dhm": 88, "d": 52}
#: How much of a tick's room its label's text takes, and the gap two labels keep.
_LABEL_SHARE = 0.7
_LABEL_GAP_PX = 6
#: Never draw more ticks than this (a deep zoom on a long team): the rest is off screen.
MAX_TICKS = 240
#: The smallest extent drawn.
MIN_EXTENT_MS = 10_000
#: Room after "now" on a live board, so the now-line is not glued to the edge.
LIVE_HEADROOM_FRACTION = 0.03
LIVE_HEADROOM_MIN_MS = 5_000
#: A live extent's end moves in steps of about 1/EXTENT_STEPS of it (see quantized_end).
EXTENT_STEPS = 64
#: The window ``t=`` opens on when no window is given.
DEFAULT_FOCUS_WINDOW_MS = 10 * 60_000

# ---------------------------------------------------------------------------
# small total readers (the dict comes from our own builder, but never trust shape)


def as_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value == value and abs(value) < 2**62:
        return int(value)
    return None


def as_str(value: Any, default: str = "") -> str:
    return value if isinstance(value, str) else default


def team_of(timeline: Mapping[str, Any]) -> str:
    """The team a timeline's JSON is of: its root session (its lead's), else the session
    asked for ("": neither)."""
    return as_str(timeline.get("rootSessionId")) or as_str(timeline.get("sessionId"))


def as_map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def as_seq(value: Any) -> Sequence[Any]:
    return value if isinstance(value, list | tuple) else ()


# ---------------------------------------------------------------------------
# views


_ISO_RE = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T")
#: ASCII digits only: ``str.isdigit`` also takes "²" or "٣", which ``int`` refuses.
_EPOCH_MS_RE = re.compile(r"-?[0-9]{1,16}")
_COUNT_RE = re.compile(r"[0-9]+")


def parse_count(raw: str | None) -> int | None:
    """A non-negative whole number written in ASCII digits; anything else is ``None``."""
    return int(raw) if raw and _COUNT_RE.fullmatch(raw) else None


def parse_time_param(raw: str | None) -> int | None:
    """Epoch ms, or an ISO 8601 instant (``Z`` or offset); anything else is ignored."""
    if not raw:
        return None
    raw = raw.strip()
    if _EPOCH_MS_RE.fullmatch(raw):
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
    """The view from URL parameters ``from``, ``to``, ``follow``, ``t``, ``w``, ``at`` and
    the list's ``list``, ``lp`` and ``turns``.

    ``t`` centres the window on a time (keeping ``to - from`` when given); a window
    that is backwards or incomplete means fit-all. Never raises.
    """
    start = parse_time_param(params.get("from"))
    end = parse_time_param(params.get("to"))
    follow = params.get("follow") in {"1", "true", "yes", "on"}
    track_px = DEFAULT_TRACK_PX
    width_px = parse_count(params.get("w"))
    if width_px is not None:
        track_px = min(max(width_px, 80), 100_000)
    if start is None or end is None or end <= start:
        start = end = None
    focus = parse_time_param(params.get("t"))
    if focus is not None:
        width = (end - start) if start is not None and end is not None else DEFAULT_FOCUS_WINDOW_MS
        start, end, follow = focus - width // 2, focus + (width - width // 2), False
    list_page = parse_count(params.get("lp"))
    task_page = parse_count(params.get("tp"))
    return View(
        start=start,
        end=end,
        follow=follow,
        track_px=track_px,
        listing=params.get("list") in {"1", "true"},
        list_turns=params.get("turns") in {"1", "true"},
        list_page=min(list_page, 1_000_000) if list_page is not None else 0,
        task_page=min(task_page, 1_000_000) if task_page is not None else 0,
        at=parse_time_param(params.get("at")),
    )


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
    extent_start: int,
    extent_end: int,
    window_start: int,
    window_end: int,
    track_px: int,
    drawn: tuple[int, int] | None = None,
) -> tuple[str, tuple[Tick, ...]]:
    """Ticks at whole multiples of the step (UTC), over the extent (or the ``drawn``
    range of a deep zoom: it moves in whole chunks, so the axis changes as seldom as the
    lanes), at most MAX_TICKS of them, centred on the window when the extent holds more."""
    window = max(window_end - window_start, 1)
    step = choose_tick_step(window, track_px)
    fmt = tick_format(step, window)
    lo, hi = extent_start, extent_end
    if drawn is not None:
        lo, hi = max(lo, drawn[0]), min(hi, drawn[1])
    if (hi - lo) // step > MAX_TICKS:
        middle = (window_start + window_end) // 2
        lo = max(lo, middle - step * (MAX_TICKS // 2))
        hi = min(hi, lo + step * MAX_TICKS)
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
            left=pct(ms, extent_start, extent_end),
            ms=ms,
            t=seconds(ms, extent_start),
            label=format_time(ms, fmt),
            fmt=fmt,
            align=align(ms),
        )
        for ms in range(first, hi + 1, step)
    )
    # A label held at an end of the track reaches a whole label's width inward, not
    # half: when its neighbour is too close for both, the end's label goes (the rest
    # keep their even steps).
    room = step * px_per_ms
    label_px = TICK_LABEL_PX[fmt] * _LABEL_SHARE
    if room < 1.5 * label_px + _LABEL_GAP_PX and len(ticks) > 1:
        if ticks[0].align == "start":
            ticks = ticks[1:]
        if len(ticks) > 1 and ticks[-1].align == "end":
            ticks = ticks[:-1]
    return fmt, ticks


def pct(ms: int, start: int, end: int) -> float:
    return round((ms - start) * 100 / max(end - start, 1), 3)


def seconds(ms: int, origin: int) -> float:
    """Seconds from the board's origin (ms precision): what the stylesheet places by."""
    return round((ms - origin) / 1000, 3)


def pct_width(a: int, b: int, start: int, end: int) -> float:
    return round(max(b - a, 0) * 100 / max(end - start, 1), 3)


# ---------------------------------------------------------------------------
# the board


#: The earliest and latest time of a lane's spans, by the very list: an unchanged lane
#: holds the same span list from one build to the next (span dicts are never mutated,
#: see timeline/spans.py), so a poll after an append scans the lanes that changed only;
#: and a changed lane's list shares its head with its last version's (the same span
#: objects), so only the blocks of SPAN_BLOCK spans from its first changed span on are
#: scanned (a lead's day of spans is not, at each append).
#: Bounded by entries, by the spans of the lists held, per lane by its last two
#: versions, and by the teams kept: a key holds a whole span list, so a dead version
#: (or a forgotten team's lane) held every span of it alive.
BOUNDS_KEPT = 256
BOUNDS_SPANS_KEPT = HISTORY_ITEMS_KEPT
SPAN_BLOCK = 1024
_Bounds = tuple[int, int] | None
#: A list's bounds, its length, each block's bounds, and the list (held by the key too).
_Held = tuple[_Bounds, int, tuple[_Bounds, ...], Sequence[Any]]
_SPAN_BOUNDS: Memo[Same[Sequence[Any]], _Held] = Memo(
    BOUNDS_KEPT,
    max_weight=BOUNDS_SPANS_KEPT,
    weight=lambda held: held[1] + 1,
    lru=True,
    per_slot=2,
)


def _lane_bounds(lane: Mapping[str, Any]) -> _Bounds:
    spans = as_seq(lane.get("spans"))
    key = Same(spans)
    hit = _SPAN_BOUNDS.get(key)
    if hit is None:
        session = as_str(lane.get("sessionId")) or None
        slot = (as_str(lane.get("id")), session)
        blocks = _block_bounds(spans, _SPAN_BOUNDS.newest_in(slot))
        hit = _SPAN_BOUNDS.put(
            key, (_joined(blocks), len(spans), blocks, spans), slot=slot, owner=session
        )
    return hit[0]


def _block_bounds(spans: Sequence[Any], last: _Held | None) -> tuple[_Bounds, ...]:
    """The bounds of each block of SPAN_BLOCK spans; the blocks before the first span
    that is not ``last``'s (by identity, at the same place) are ``last``'s."""
    kept: tuple[_Bounds, ...] = ()
    if last is not None:
        kept = last[2][: common_head(last[3], spans) // SPAN_BLOCK]
    return kept + tuple(
        _span_bounds(spans[at : at + SPAN_BLOCK])
        for at in range(len(kept) * SPAN_BLOCK, len(spans), SPAN_BLOCK)
    )


def _joined(blocks: Sequence[_Bounds]) -> _Bounds:
    found = [b for b in blocks if b is not None]
    if not found:
        return None
    return min(b[0] for b in found), max(b[1] for b in found)


def _span_bounds(spans: Sequence[Any]) -> _Bounds:
    """The earliest and latest time or end of these spans (``None``: none is dated)."""
    if spans and set(map(type, spans)) == {dict}:
        # Our builder's spans (dicts, int times, int or no ends): whole-list steps, as a
        # lead's new list (thousands of spans) is scanned at each append.
        times: list[Any] = list(map(dict.get, spans, repeat("time")))
        ends: list[Any] = [end for end in map(dict.get, spans, repeat("end")) if end is not None]
        if set(map(type, times)) == {int} and set(map(type, ends)) <= {int}:
            lo_time, hi_time = min(times), max(times)
            return min(lo_time, min(ends, default=lo_time)), max(
                hi_time, max(ends, default=hi_time)
            )
    # Else a running min/max, exact types first.
    lo: int | None = None
    hi: int | None = None
    for span in spans:
        if type(span) is dict:  # our builder's spans: exact types first (a hot path)
            time, end = span.get("time"), span.get("end")
            if type(time) is int and (end is None or type(end) is int):
                first, last = (time, time) if end is None else (min(time, end), max(time, end))
                if lo is None or hi is None:
                    lo, hi = first, last
                else:
                    if first < lo:
                        lo = first
                    if last > hi:
                        hi = last
                continue
        span = as_map(span)
        for key in ("time", "end"):
            value = as_int(span.get(key))
            if value is not None:
                lo = value if lo is None else min(lo, value)
                hi = value if hi is None else max(hi, value)
    return None if lo is None or hi is None else (lo, hi)


#: ``board_extent`` reads the tasks' moves itself.
_SCAN: Any = object()


def board_extent(
    timeline: Mapping[str, Any], now: int | None, task_moves: _Bounds = _SCAN
) -> tuple[int, int] | None:
    """``(start, end)`` of everything drawn; while live, ``end`` is the live edge.
    ``task_moves``: the earliest and latest task move, when the caller knows them."""
    found = [_lane_bounds(as_map(lane)) for lane in as_seq(timeline.get("lanes"))]
    if task_moves is _SCAN:
        times = [
            value
            for task in as_seq(timeline.get("tasks"))
            for entry in as_seq(as_map(task).get("history"))
            if (value := as_int(as_map(entry).get("time"))) is not None
        ]
        task_moves = (min(times), max(times)) if times else None
    found.append(task_moves)
    lo = min((b[0] for b in found if b is not None), default=None)
    hi = max((b[1] for b in found if b is not None), default=None)
    rng = as_map(timeline.get("range"))
    start = as_int(rng.get("start"))
    end = as_int(rng.get("end"))
    if start is None:
        if lo is None:
            return None
        start = lo
    if end is None:
        end = max(start, hi if hi is not None else start, now if now is not None else start)
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


def view_window(
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
