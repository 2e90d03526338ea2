"""Reading the most recently written team when the server starts.

Behind DSH the server is started when DSH starts, well before anyone opens the
panel; a user then opens it on the team that is working, whose logs are the ones
written last. Reading that team (and laying out the board a first load draws) at
start-up makes the first load a warm one. It reads only: nothing is written, and
nothing shown says a log was read that was not. It never raises: a failure is logged,
and the first request then reads cold, as it would have anyway.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from . import host
from .panel import Panel
from .service import TimelineService


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
