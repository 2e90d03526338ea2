"""The panel's HTML endpoints: the page, the polled board, and the detail fragments.

``web.py`` calls these after it has checked the method, the connection guard and the
parameters (a valid session id). The panel only talks to a :class:`TimelineProvider`
and renders its timeline dict through :mod:`layout`, keeping each lane's markup until
the lane changes; the templates do no arithmetic. Every text from a log reaches the
page through Jinja2 autoescaping.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote

import jinja2
from markupsafe import Markup
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from .layout import (
    DEFAULT_FOCUS_WINDOW_MS,
    Board,
    LaneRow,
    View,
    find_span_time,
    finish_board,
    format_time,
    parse_view,
    parties,
    plan_board,
)
from .provider import TimelineProvider
from .resources import resource_path

#: htmx stops a polling trigger when a response has this status (htmx 2.x).
HTMX_STOP_POLLING = 286
#: The vendored htmx (static/VENDORED.md records its checksum).
HTMX_FILE = "htmx-2.0.11.min.js"
POLL_EVERY = "2s"
#: A live board whose timeline did not change is still redrawn this often, so the
#: now-line and running bars move; in between an unchanged poll is a bare 204.
REDRAW_AFTER_MS = 10_000
#: What the panel's pages need: scripts and stylesheets from our own origin only, no
#: inline script or event handler anywhere; ``style=""`` attributes carry the layout's
#: numeric positions (never log text), hence style-src-attr.
PANEL_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; "
    "style-src-attr 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; "
    "base-uri 'none'; form-action 'none'; object-src 'none'"
)
MESSAGE_CAP = 16_384
#: Rendered lanes kept for reuse (a few teams' worth of lanes, each at a few zooms).
LANE_CACHE_SIZE = 256

_HEADERS = {"Cache-Control": "no-store", "Content-Security-Policy": PANEL_CSP, "Vary": "HX-Request"}


def _environment(templates: Path) -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates)),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["pathpart"] = lambda value: quote(str(value), safe="")
    env.filters["qs"] = lambda value: quote(str(value), safe="")
    env.filters["clock"] = lambda ms: format_time(int(ms), "hms") if ms is not None else ""
    env.filters["fulltime"] = lambda ms: format_time(int(ms), "full") if ms is not None else ""
    return env


class Panel:
    def __init__(self, provider: TimelineProvider, route_prefix: str) -> None:
        self._provider = provider
        self._prefix = route_prefix.rstrip("/")
        self._env = _environment(resource_path("templates"))
        #: Each lane's row and markup, by everything they depend on (layout.lane_key):
        #: a poll after an append lays out and renders only the lanes that changed.
        self._lanes: OrderedDict[tuple[Any, ...], tuple[LaneRow, Markup]] = OrderedDict()

    # -- helpers -----------------------------------------------------------------

    def _layout(
        self, timeline: Mapping[str, Any], view: View, session_id: str
    ) -> tuple[Board, list[Markup]]:
        """The board, and each lane's markup (reused when the lane did not change)."""
        plan = plan_board(timeline, view)
        if isinstance(plan, Board):
            return plan, []
        template = self._env.get_template("lane.html")
        rows: list[LaneRow] = []
        markup: list[Markup] = []
        for position in range(len(plan.lanes_raw)):
            lane_key = plan.lane_key(position)
            key = None if lane_key is None else (*lane_key, session_id)
            hit = self._lanes.get(key) if key is not None else None
            if key is not None and hit is not None:
                self._lanes.move_to_end(key)
                row, html = hit
            else:
                row = plan.lane_row(position)
                html = Markup(template.render(lane=row, prefix=self._prefix, session_id=session_id))
                if key is not None:
                    self._lanes[key] = (row, html)
                    if len(self._lanes) > LANE_CACHE_SIZE:
                        self._lanes.popitem(last=False)
            rows.append(row)
            markup.append(html)
        return finish_board(plan, tuple(rows)), markup

    def _render(self, name: str, status: int = 200, **context: Any) -> HTMLResponse:
        html = self._env.get_template(name).render(prefix=self._prefix, **context)
        return HTMLResponse(html, status_code=status, headers=dict(_HEADERS))

    def _not_found(self, request: Request, what: str) -> HTMLResponse:
        fragment = request.headers.get("HX-Request") == "true"
        return self._render("notfound.html", 404, what=what, fragment=fragment)

    # -- endpoints ---------------------------------------------------------------

    async def page(self, request: Request, session_id: str) -> Response:
        """The whole panel; ``msg=`` opens on a message, ``t=``/``from``/``to`` on a time."""
        result = await self._provider.timeline(session_id)
        if result is None:
            return self._not_found(request, "session")
        params = request.query_params
        view = parse_view(params)
        msg_id = params.get("msg") or None
        message = None
        if msg_id is not None:
            message = await self._provider.message(session_id, msg_id)
            at = find_span_time(result.data, msg_id)
            if at is not None and view.start is None:
                half = DEFAULT_FOCUS_WINDOW_MS // 2
                view = View(start=at - half, end=at + half, track_px=view.track_px)
        board, lanes_html = self._layout(result.data, view, session_id)
        return self._render(
            "page.html",
            session_id=session_id,
            board=board,
            lanes_html=lanes_html,
            etag=result.etag,
            drawn=_now_ms(),
            list_mode=params.get("list") == "1",
            message=self._message_context(result.data, message) if message else None,
            htmx_file=HTMX_FILE,
            poll_every=POLL_EVERY,
        )

    async def board(self, request: Request, session_id: str) -> Response:
        """The poll target: 204 when the shown version is current (without building the
        timeline), the new board when it changed, 286 with the final board when frozen."""
        params = request.query_params
        shown = params.get("v") or request.headers.get("X-Board-Version") or ""
        if shown:
            current = await self._provider.current_etag(session_id)
            if current is None:
                return self._not_found(request, "session")
            if current == shown and not self._stale(params.get("drawn")):
                return Response(status_code=204, headers={"Cache-Control": "no-store"})
        result = await self._provider.timeline(session_id)
        if result is None:
            return self._not_found(request, "session")
        board, lanes_html = self._layout(result.data, parse_view(params), session_id)
        return self._render(
            "board.html",
            status=200 if result.live else HTMX_STOP_POLLING,
            session_id=session_id,
            board=board,
            lanes_html=lanes_html,
            etag=result.etag,
            drawn=_now_ms(),
            oob=True,
        )

    async def message(self, request: Request, session_id: str, message_id: str) -> Response:
        """The detail fragment of one message (for ``/api/messages/{id}`` with HX-Request)."""
        message = await self._provider.message(session_id, message_id)
        if message is None:
            return self._not_found(request, "message")
        result = await self._provider.timeline(session_id)
        data: Mapping[str, Any] = result.data if result is not None else {}
        return self._render(
            "message.html", session_id=session_id, m=self._message_context(data, message)
        )

    async def task(self, request: Request, session_id: str, task_id: str) -> Response:
        """The detail fragment of one task: every transition with its time and actor."""
        result = await self._provider.timeline(session_id)
        if result is None:
            return self._not_found(request, "session")
        board, _ = self._layout(result.data, View(), session_id)
        for row in board.tasks:
            if row.task_id == task_id:
                return self._render(
                    "task.html",
                    session_id=session_id,
                    t=row,
                    description=_task_description(result.data, task_id),
                )
        return self._not_found(request, "task")

    # -- pieces ------------------------------------------------------------------

    @staticmethod
    def _stale(drawn: str | None) -> bool:
        """Whether the board the browser shows was drawn long enough ago (server clock)
        that its now-line should move (only while live: a frozen board is never polled)."""
        if not drawn or not drawn.isdigit():
            return False
        return _now_ms() - int(drawn) >= REDRAW_AFTER_MS

    @staticmethod
    def _message_context(timeline: Mapping[str, Any], message: Mapping[str, Any]) -> dict[str, Any]:
        sender, recipient = parties(timeline, message)
        body = message.get("body")
        length = message.get("length")
        return {
            "id": str(message.get("id", "")),
            "sender": sender,
            "recipient": recipient,
            "queued_at": _ms(message.get("queuedAt")),
            "delivered_at": _ms(message.get("deliveredAt")),
            "body": body if isinstance(body, str) else "",
            "length": length if isinstance(length, int) else None,
            "truncated": bool(message.get("truncated")),
            "cap": f"{MESSAGE_CAP:,}",
        }


def _now_ms() -> int:
    return int(time.time() * 1000)


def _ms(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _task_description(timeline: Mapping[str, Any], task_id: str) -> str | None:
    tasks = timeline.get("tasks")
    for task in tasks if isinstance(tasks, list | tuple) else ():
        if isinstance(task, Mapping) and task.get("id") == task_id:
            description = task.get("description")
            return description if isinstance(description, str) and description else None
    return None
