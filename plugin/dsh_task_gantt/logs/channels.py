"""Read one lane's log through the host's two channels (docs/host-contract.md,
Rules the picture follows: "Reading").

Live first: ``agents.get(id).session.snapshot_events()``. If the agent is absent,
the call fails or hangs, or it returns an empty list, the persisted log is read
(``open(id, 'read')`` → ``read()`` → ``close()`` in a ``finally``). The result
names the channel the events really came from:

- ``snapshot``: the live snapshot had events;
- ``persisted``: the persisted log had events;
- ``empty``: a channel was read and holds no events (the persisted log, or the live
  snapshot when the host offers no ``sessionPersistence`` at all);
- ``unreadable``: no channel could be read; ``error`` says why in a short phrase.

A live snapshot that came back empty while the persisted log *fails* is
``unreadable``, not ``empty``: the empty live list is exactly the case where the
disk was supposed to answer. :func:`read_lane` never raises.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from dsh_task_gantt.events import (
    EventRun,
    LogEvent,
    SessionHeader,
    as_int,
    coerce_event,
    coerce_header,
    event_count,
    field_of,
    is_header_line,
)
from dsh_task_gantt.host import (
    HOST_CALL_TIMEOUT_S,
    Agents,
    HostCallError,
    SessionPersistence,
    call_host,
    call_timeout,
    service_method,
)
from dsh_task_gantt.logs.persistence import SessionLogError, SessionNotFound

from ..events import Channel

#: Where a lane's events came from (the timeline JSON's lane `channel`).
AgentStatus = Literal["running", "idle"]

NO_SERVICES = "no live agent and no sessionPersistence service"


@dataclass(frozen=True, slots=True)
class LaneRead:
    """One lane's events from index ``since`` on, and where they came from."""

    channel: Channel
    header: SessionHeader | None
    #: Events with index ``since``, ``since + 1``, … (empty when there are no new ones);
    #: with ``runs=True`` some may come summarised in :class:`EventRun` items.
    events: list[LogEvent | EventRun]
    #: Events in the log read (all of them, not only the new ones).
    total_events: int
    inherited_event_count: int | None = None
    agent_status: AgentStatus | None = None
    #: The persisted ``stat().revision``, or ``snapshot:<length>`` for a live read.
    revision: str | None = None
    error: str | None = None
    notes: list[str] = field(default_factory=list)
    #: The log is no longer the one read before (replaced or rewritten): ``events``
    #: from ``since`` belong to another file, so nothing may be folded onto old state.
    restarted: bool = False
    #: The persisted file's name (``session.v3.jsonl.zstd``: which format was read).
    log_name: str | None = None
    #: Where a log that turns to garbage after readable frames stopped being read.
    stopped_at: str | None = None
    #: The host knew a live agent for the session (whatever its snapshot held): what
    #: was read is tied to this process's view of it.
    live_agent: bool = False


@dataclass(slots=True)
class _Channel:
    """What one channel gave: ``events is None`` means it could not be read."""

    events: list[LogEvent | EventRun] | None = None
    total: int = 0
    header: SessionHeader | None = None
    inherited: int | None = None
    revision: str | None = None
    error: str | None = None
    agent_found: bool = False
    agent_status: AgentStatus | None = None
    notes: list[str] = field(default_factory=list)
    restarted: bool = False
    log_name: str | None = None
    stopped_at: str | None = None


def _reason(exc: HostCallError) -> str:
    """Our own persistence's reasons are already short and path-free: use them."""
    cause = exc.__cause__
    if isinstance(cause, SessionLogError | SessionNotFound):
        return str(cause)
    return str(exc)


def _attr(obj: Any, *names: str) -> Any:
    """The first of ``names`` that ``obj`` has (a host hands over either spelling)."""
    for name in names:
        value = field_of(obj, name)
        if value is not None:
            return value
    return None


def _inherited(obj: Any) -> int | None:
    try:
        value = as_int(_attr(obj, "inherited_event_count", "inheritedEventCount"))
    except Exception:  # a hostile property
        return None
    return value if value is not None and value >= 0 else None


def _header(obj: Any) -> SessionHeader | None:
    try:
        raw = _attr(obj, "header")
        return coerce_header(raw) if raw is not None else None
    except Exception:
        return None


_OWN_KINDS = frozenset({LogEvent, EventRun})


def _coerce_all(raw: Sequence[Any], first_position: int, out: _Channel, where: str) -> None:
    if _OWN_KINDS.issuperset(map(type, raw)):  # all a reader's own: nothing to check
        out.events = list(raw)
        return
    events: list[LogEvent | EventRun] = []
    skipped = 0
    for i, obj in enumerate(raw):
        # A reader's own events (and runs) pass as they are; anything else is checked.
        kind = type(obj)
        event = (
            obj if kind is LogEvent or kind is EventRun else coerce_event(obj, first_position + i)
        )
        if event is None:
            skipped += 1
        else:
            events.append(event)
    if skipped:
        out.notes.append(f"skipped {skipped} {where} events without a type")
    out.events = events


async def _read_live(session_id: str, agents: Agents, since: int, timeout: float) -> _Channel:
    out = _Channel()
    get = service_method(agents, "get")
    if get is None:
        out.error = "the agents service has no get()"
        return out
    try:
        agent = await call_host(get, session_id, timeout=timeout, what="agents.get")
    except HostCallError as exc:
        out.error = _reason(exc)
        return out
    if agent is None:
        out.error = "no live agent"
        return out
    out.agent_found = True
    status = _attr(agent, "status")
    out.agent_status = status if status in ("running", "idle") else None
    session = _attr(agent, "session")
    out.header = _header(session)
    out.inherited = _inherited(session)
    snapshot = service_method(session, "snapshot_events", "snapshotEvents")
    if snapshot is None:
        out.error = "the live session offers no snapshot_events()"
        return out
    try:
        raw = await call_host(snapshot, timeout=timeout, what="the live snapshot")
    except HostCallError as exc:
        out.error = _reason(exc)
        return out
    if not isinstance(raw, list | tuple):
        out.error = f"the live snapshot answered with a {type(raw).__name__}"
        return out
    if raw and is_header_line(raw[0]):  # a snapshot that includes the header line
        out.header = out.header or _header({"header": raw[0]})
        raw = raw[1:]
    out.total = len(raw)
    out.revision = f"snapshot:{len(raw)}"
    _coerce_all(raw[since:], since, out, "live")
    return out


def _event_count(handle: Any, fallback: int | None) -> int | None:
    try:
        count = as_int(_attr(handle, "event_count", "eventCount"))
    except Exception:  # a hostile property on a host's handle
        return fallback
    return count if count is not None and count >= 0 else fallback


def _short_str(obj: Any, *names: str) -> str | None:
    try:
        value = _attr(obj, *names)
    except Exception:  # a hostile property on a host's object
        return None
    return value[:256] if isinstance(value, str) and value else None


def _damage_notes(handle: Any, session_id: str) -> list[str]:
    """What a read handle says it skipped (ours does: ``bad_lines``, ``garbage``);
    without these a damaged log would look merely short."""
    notes: list[str] = []
    try:
        bad = as_int(_attr(handle, "bad_lines"))
        garbage = _attr(handle, "garbage")
    except Exception:  # a hostile property on a host's handle
        return notes
    if bad:
        lines = "line that is" if bad == 1 else "lines that are"
        notes.append(f"{session_id}: skipped {bad} log {lines} not events")
    if isinstance(garbage, str) and garbage:
        notes.append(f"{session_id}: the log stops at bytes that are not a log ({garbage})")
    return notes


async def _read_persisted(
    session_id: str, persistence: SessionPersistence, since: int, timeout: float, runs: bool = False
) -> _Channel:
    out = _Channel()
    timeout = call_timeout(persistence, timeout)
    stat = service_method(persistence, "stat")
    counted: int | None = None
    if stat is not None:
        try:
            info = await call_host(
                stat, session_id, timeout=timeout, what="sessionPersistence.stat"
            )
        except HostCallError as exc:
            out.notes.append(_reason(exc))
        else:
            if info is None:
                out.error = "no persisted log for this session"
                return out
            revision = _attr(info, "revision")
            out.revision = str(revision) if revision is not None else None
            counted = as_int(_attr(info, "eventCount"))
            out.header = _header(info)
            out.log_name = _short_str(info, "logName")
    open_ = service_method(persistence, "open")
    if open_ is None:
        out.error = "the sessionPersistence service has no open()"
        return out
    try:
        handle = await call_host(
            open_, session_id, "read", timeout=timeout, what="sessionPersistence.open"
        )
    except HostCallError as exc:
        out.error = _reason(exc)
        return out
    try:
        # Our own persistence can summarise the lines the fold reads no data of.
        read = (service_method(handle, "read_runs") if runs else None) or service_method(
            handle, "read"
        )
        if read is None:
            out.error = "the read handle has no read()"
            return out
        try:
            raw = await call_host(read, since, timeout=timeout, what="reading the persisted log")
        except HostCallError as exc:
            out.error = _reason(exc)
            return out
        if isinstance(raw, Mapping):  # some hosts answer {events: [...]}
            raw = raw.get("events")
        if not isinstance(raw, list | tuple):
            out.error = f"the persisted read answered with a {type(raw).__name__}"
            return out
        out.header = _header(handle) or out.header
        out.inherited = _inherited(handle)
        _coerce_all(raw, since, out, "persisted")
        out.notes.extend(_damage_notes(handle, session_id))
        out.log_name = _short_str(handle, "log_name", "logName") or out.log_name
        out.stopped_at = _short_str(handle, "garbage")
        # The count as of this read beats the stat before it: a log that shrank (or was
        # replaced) in between has fewer events than the caller has already seen.
        counted = _event_count(handle, counted)
        out.restarted = _attr(handle, "restarted") is True
        seen = since + event_count(raw) if raw else since
        out.total = seen if counted is None else (max(counted, seen) if raw else counted)
    finally:
        close = service_method(handle, "close")
        if close is not None:
            try:
                await call_host(close, timeout=timeout, what="closing the persisted log")
            except HostCallError as exc:
                out.notes.append(_reason(exc))
    return out


async def read_lane(
    session_id: str,
    *,
    agents: Agents | None,
    persistence: SessionPersistence | None,
    since: int = 0,
    timeout: float = HOST_CALL_TIMEOUT_S,
    runs: bool = False,
) -> LaneRead:
    """The lane's events from index ``since``, live first, disk second. Never raises.

    ``runs=True``: a persisted read may summarise the lines whose data is not read in
    :class:`EventRun` items (when the handle offers ``read_runs``); for a fold only.
    """
    since = max(0, since)
    try:
        return await _read_lane(session_id, agents, persistence, since, timeout, runs)
    except Exception as exc:  # a host object broken in a way not foreseen above
        return LaneRead(
            "unreadable",
            None,
            [],
            0,
            error=f"reading the lane failed: {type(exc).__name__}",
        )


async def _read_lane(
    session_id: str,
    agents: Agents | None,
    persistence: SessionPersistence | None,
    since: int,
    timeout: float,
    runs: bool,
) -> LaneRead:
    notes: list[str] = []
    live = await _read_live(session_id, agents, since, timeout) if agents is not None else None
    if live is not None:
        notes.extend(live.notes)
        if live.events is not None and live.total > 0:
            return _result("snapshot", live, live, notes)
        if live.events is None and live.agent_found:
            notes.append(f"live snapshot unavailable ({live.error}); read the persisted log")
        elif live.events is not None:
            notes.append("the live snapshot was empty; read the persisted log")

    if persistence is None:
        if live is not None and live.events is not None:
            notes.append("no sessionPersistence service to confirm the empty live snapshot")
            return _result("empty", live, live, notes)
        error = NO_SERVICES
        if live is not None and live.agent_found:
            error = f"{live.error}; no sessionPersistence service"
        return _result("unreadable", _Channel(error=error), live, notes)

    disk = await _read_persisted(session_id, persistence, since, timeout, runs)
    notes.extend(disk.notes)
    if disk.events is not None:
        return _result("persisted" if disk.total > 0 else "empty", disk, live, notes)
    if live is None or not live.agent_found:
        disk.error = f"no live agent; {disk.error}" if agents is not None else disk.error
    return _result("unreadable", disk, live, notes)


def _result(
    channel: Channel, source: _Channel, live: _Channel | None, notes: list[str]
) -> LaneRead:
    readable = channel != "unreadable"
    header = source.header or (live.header if live is not None else None)
    inherited = source.inherited
    if inherited is None and live is not None:
        inherited = live.inherited
    return LaneRead(
        channel=channel,
        header=header,
        events=(source.events or []) if readable else [],
        total_events=source.total if readable else 0,
        inherited_event_count=inherited,
        agent_status=live.agent_status if live is not None else None,
        revision=source.revision if readable else None,
        error=None if readable else (source.error or "unreadable"),
        notes=notes,
        restarted=source.restarted,
        log_name=source.log_name if readable else None,
        stopped_at=source.stopped_at if readable else None,
        live_agent=live is not None and live.agent_found,
    )


__all__ = ["NO_SERVICES", "Channel", "LaneRead", "read_lane"]
