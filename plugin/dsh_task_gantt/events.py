"""One decoded log line, whichever channel it came from (pure, no I/O).

A persisted log line is ``{"type", "seq", "time", "data", "ignorable"?}``; the live
snapshot hands over objects or dicts of the same shape. Both become a
:class:`LogEvent`. Everything here is total: any input yields an event or ``None``,
never an exception. ``time`` is ``None`` when the line had no usable time: a time
is never invented.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

import orjson

#: Where a lane's events came from: the live snapshot, the persisted log, neither
#: (readable and empty), or a log that could not be read.
Channel = Literal["snapshot", "persisted", "empty", "unreadable"]

# JavaScript's safe-integer range: anything outside is not a real epoch-ms or seq.
MAX_SAFE_INT = 2**53 - 1


class LogEvent(NamedTuple):
    """A named tuple rather than a dataclass: a big log makes tens of thousands of
    these per read, and a tuple is built three times faster."""

    type: str
    seq: int
    time: int | None
    data: Any
    #: Position of the line in its log (0 = first event after the header).
    position: int = 0
    #: The envelope's ``surfaceOp`` (``"append"``, or ``{op: "replace", startSeq,
    #: endSeq}``: a message that rewrites earlier ones), as found; ``None`` without one.
    surface_op: Any = None


class UsageColumns(NamedTuple):
    """A token-use batch's usage as count columns, one value per row, in the order of
    ``fold.usage.USAGE_KEYS`` (an absent count is 0): what a reader makes of usage
    objects spelled as DSH writes them, with no object per row. Only a reader makes
    them, and every value of their batch (seqs, times, turns, steps, counts) is then a
    safe integer (matched as at most 15 digits): the fold does not check them again."""

    input: tuple[Any, ...]
    cache_read: tuple[Any, ...]
    cache_write: tuple[Any, ...]
    output: tuple[Any, ...]
    reasoning: tuple[Any, ...]


class EventRun(NamedTuple):
    """Many events whose data nobody reads, summarised (a reader's opt-in compact mode).

    It stands for ``size`` events: ``seqs`` are their seqs (any order), ``last_time``
    the latest of their times, ``marks`` the latest seq of each type the reader was
    asked to mark (for example ``step/start``). Folding a run equals folding the
    events it stands for with ``data=None``, except the token-use lines in ``usage``;
    the events of one run need not be consecutive in the log (a frame's other lines
    come as plain events beside it).
    """

    size: int
    seqs: tuple[int, ...]
    last_time: int | None
    marks: tuple[tuple[str, int], ...] = ()
    #: Token-use lines of the run, read in bulk (``logs.reader.line_ends``): batches
    #: ``(type, seqs, times, turns, steps, usages, sources)`` of columns; folding one
    #: row equals folding its event with data ``{turn, step, usage}`` (a usage chunk's
    #: under ``chunk``; a message's ``source`` under ``message``). ``usages`` is one
    #: usage object per row, or :class:`UsageColumns` (the row's usage is then the
    #: object of its counts). Their seqs are in ``seqs`` too.
    usage: tuple[tuple[Any, ...], ...] = ()


def event_count(items: Iterable[Any]) -> int:
    """How many log events ``items`` stand for (an :class:`EventRun` counts ``size``)."""
    return sum(item.size if type(item) is EventRun else 1 for item in items)


@dataclass(frozen=True, slots=True)
class SessionHeader:
    """Line 1 of a session log (flat; the same fields are accepted under ``data``)."""

    id: str | None
    created_at: int | None = None
    cwd: str | None = None
    parent_session: str | None = None
    is_seeded: bool = False
    #: ``inheritedEventCount`` or (older logs) ``seedLength`` from the header, if any.
    inherited_event_count: int | None = None
    origin: str | None = None
    delegation_depth: int | None = None
    raw: Mapping[str, Any] = field(default_factory=dict)


def as_int(value: Any) -> int | None:
    """An integer in the safe range, or ``None`` (bools, floats with fractions, junk)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if -MAX_SAFE_INT <= value <= MAX_SAFE_INT else None
    if isinstance(value, float) and value.is_integer() and abs(value) <= MAX_SAFE_INT:
        return int(value)
    return None


def as_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def as_time(value: Any) -> int | None:
    """Epoch milliseconds (non-negative, safe integer) or ``None``."""
    t = as_int(value)
    return t if t is not None and t >= 0 else None


def field_of(obj: Any, name: str) -> Any:
    """``obj[name]`` of a mapping, else attribute ``name``; ``None`` when absent (a
    live snapshot hands over objects where a log has dicts)."""
    if isinstance(obj, Mapping):
        return obj.get(name)
    return getattr(obj, name, None)


def coerce_event(obj: Any, position: int) -> LogEvent | None:
    """A :class:`LogEvent` from a parsed line or a live snapshot object.

    ``None`` when ``obj`` has no string ``type``. A missing or junk ``seq`` takes
    the line's ``position``.
    """
    if isinstance(obj, LogEvent):
        return obj
    try:
        etype = field_of(obj, "type")
        if not isinstance(etype, str):
            return None
        seq = as_int(field_of(obj, "seq"))
        return LogEvent(
            type=etype,
            seq=seq if seq is not None and seq >= 0 else position,
            time=as_time(field_of(obj, "time")),
            data=field_of(obj, "data"),
            position=position,
            surface_op=field_of(obj, "surfaceOp"),
        )
    except Exception:  # a hostile object's properties may raise
        return None


def parse_line(line: bytes | str, position: int) -> LogEvent | None:
    """One JSON line → event; ``None`` for invalid JSON or a non-event shape."""
    try:
        obj = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    return coerce_event(obj, position) if isinstance(obj, dict) else None


def coerce_header(obj: Any) -> SessionHeader | None:
    """The header from line 1 (flat, or with its fields under ``data``)."""
    if not isinstance(obj, Mapping):
        try:
            obj = dict(vars(obj))  # a host object rather than a dict
        except TypeError:
            return None
    flat: dict[str, Any] = {}
    data = obj.get("data")
    if isinstance(data, Mapping):
        flat.update(data)
    flat.update({k: v for k, v in obj.items() if k != "data"})
    inherited = as_int(flat.get("inheritedEventCount"))
    if inherited is None:
        inherited = as_int(flat.get("seedLength"))
    return SessionHeader(
        id=as_str(flat.get("id")),
        created_at=as_time(flat.get("createdAt")),
        cwd=as_str(flat.get("cwd")),
        parent_session=as_str(flat.get("parentSession")) or None,
        is_seeded=flat.get("isSeeded") is True,
        inherited_event_count=inherited if inherited is not None and inherited >= 0 else None,
        origin=as_str(flat.get("origin")),
        delegation_depth=as_int(flat.get("delegationDepth")),
        raw=flat,
    )


def is_header_line(obj: Any) -> bool:
    """Line 1 of a log: ``type == "session"``."""
    return isinstance(obj, Mapping) and obj.get("type") == "session"


def header_from_line(line: bytes | str) -> SessionHeader | None:
    """The header from a log's first line; ``None`` when it is not a header line."""
    try:
        obj = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    return coerce_header(obj) if isinstance(obj, dict) and is_header_line(obj) else None
