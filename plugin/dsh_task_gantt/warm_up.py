"""Reading the most recently written team when the server starts.

Behind DSH the server is started when DSH starts, well before anyone opens the
panel; a user then opens it on the team that is working, whose logs are the ones
written last. Reading that team (and laying out the board a first load draws) at
start-up makes the first load a warm one. It reads only: nothing is written, and
nothing shown says a log was read that was not. It never raises: a failure is logged,
and the first request then reads cold, as it would have anyway.

When it ends the server says so in one line on stderr (:func:`ready_line`): the host
half relays that line into DSH's log, so a user (and a test) knows when the first
panel opened will be a warm one.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

from . import host
from .panel import Panel
from .service import TimelineService

#: How the line saying the start-up read ended begins; the host half relays only
#: lines that begin so (plugin/dsh/lib/service.js's ANNOUNCED).
READY_PREFIX = "dsh-task-gantt: ready; "


async def warm_up(
    persistence: Any, service: TimelineService, panel: Panel, logger: host.Logger
) -> str | None:
    """The team root that was read, or ``None`` (no log, or a persistence that cannot
    say which session was written last)."""
    latest: Callable[[], Awaitable[str | None]] | None = host.service_method(
        persistence, "latest_session"
    )
    if latest is None:
        return None
    try:
        session_id = await latest()
        root = await service.team_root(session_id) if session_id else None
        if root is None or not await panel.warm(root):
            return None
        return root
    except Exception as exc:  # a broken log or host must not take the server down
        logger.warning("dsh-task-gantt: reading the latest team at start-up failed: %r", exc)
        return None


def ready_line(root: str | None, elapsed_ms: int) -> str:
    """The one line that says the start-up read ended: which team it read, or none.

    A team root comes from a folder name: anything but printable characters is
    escaped, so the line stays one line and writes nothing a terminal would obey."""
    if root is None:
        return f"{READY_PREFIX}no team read at start-up ({elapsed_ms} ms)"
    shown = "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in root)
    return f"{READY_PREFIX}read the team {shown} at start-up in {elapsed_ms} ms"


async def warm_up_and_announce(
    persistence: Any,
    service: TimelineService,
    panel: Panel,
    logger: host.Logger,
    announce: Callable[[str], None],
) -> str | None:
    """:func:`warm_up`, then its :func:`ready_line` to ``announce`` (not when cancelled)."""
    began = time.monotonic()
    root = await warm_up(persistence, service, panel, logger)
    try:
        announce(ready_line(root, round((time.monotonic() - began) * 1000)))
    except Exception as exc:  # a closed stderr must not take the server down
        logger.warning("dsh-task-gantt: saying the start-up read ended failed: %r", exc)
    return root
