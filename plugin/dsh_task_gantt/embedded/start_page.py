"""The standalone host's start page at ``/``: every team under the sessions root.

Checks in the same order as the plugin's routes: method (405), the guard (401/403),
then the page. The one-time token URL lands here and trades the token for a cookie.
HEAD is refused like every method but GET, as on the plugin's routes.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlencode

import jinja2
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.types import Receive, Scope, Send

from .. import __version__
from ..logs.persistence import DirectorySessionPersistence
from ..provider import TimelineProvider
from .guard import TOKEN_COOKIE, LoopbackConnection
from .teams import WorkspaceGroup, by_workspace, summary_text, team_card, team_stubs

log = logging.getLogger("dsh_task_gantt.embedded")

#: The start page builds at most this many team timelines (newest first).
START_PAGE_TEAMS = 60
#: Only its own stylesheet and script (no inline code: texts on it come from logs).
START_PAGE_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; "
    "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'self'"
)
START_PAGE_HEADERS = {"Content-Security-Policy": START_PAGE_CSP, "Cache-Control": "no-store"}


@dataclass(frozen=True, slots=True)
class StartPageView:
    title: str
    version: str
    sessions_root: str
    groups: tuple[WorkspaceGroup, ...]
    #: ``3 teams in 2 workspaces``; empty when there is none.
    summary: str
    stylesheets: tuple[str, ...]
    scripts: tuple[str, ...]


class StartPage:
    """An ASGI endpoint (it answers every method itself, so the 405 is its own)."""

    def __init__(
        self,
        *,
        connection: LoopbackConnection,
        persistence: DirectorySessionPersistence,
        timelines: TimelineProvider,
        url_path_for: Callable[..., str],
        templates: jinja2.Environment,
        sessions_root: Path,
        title: str,
    ) -> None:
        self.connection = connection
        self.persistence = persistence
        self.timelines = timelines
        self.url_path_for = url_path_for
        self.templates = templates
        self.sessions_root = sessions_root
        self.title = title

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = await self.respond(Request(scope, receive))
        await response(scope, receive, send)

    async def respond(self, request: Request) -> Response:
        if request.method != "GET":
            return Response("method not allowed", status_code=405, headers={"Allow": "GET"})
        refusal = self.connection.request_rejection(request)
        if refusal is not None and self.connection.token is not None:
            return Response(
                "a token is required: open the URL printed at start-up",
                401,
                media_type="text/plain",
            )
        if refusal is not None:
            text = "unauthorized" if refusal == 401 else "forbidden"
            return Response(text, status_code=refusal, media_type="text/plain")
        if request.query_params.get("token") and self.connection.token is not None:
            # The one-time URL sets a cookie and drops the token from the address bar.
            landing = RedirectResponse("/", status_code=303)
            landing.set_cookie(
                TOKEN_COOKIE, self.connection.token, httponly=True, samesite="strict"
            )
            return landing
        view = await self.view()
        html = self.templates.get_template("start.html").render(page=view)
        return HTMLResponse(html, headers=START_PAGE_HEADERS)

    async def view(self) -> StartPageView:
        groups = await self.groups()
        static = [self.url_path_for("static", name=n) for n in ("start.css", "start.js")]
        return StartPageView(
            title=self.title,
            version=__version__,
            sessions_root=str(self.sessions_root),
            groups=groups,
            summary=summary_text(groups) if groups else "",
            stylesheets=(static[0],),
            scripts=(static[1], self.url_path_for("static", name="embed.js")),
        )

    async def groups(self) -> tuple[WorkspaceGroup, ...]:
        """Teams under the root, newest first: one card per lead."""
        try:
            rows = await self.persistence.list()
        except Exception:
            log.warning("could not list sessions under %s", self.sessions_root, exc_info=True)
            return ()
        cards = []
        for position, stub in enumerate(team_stubs(rows)):
            panel_url = self.url_path_for("panel") + "?" + urlencode({"session": stub.lead})
            timeline = None
            if position < START_PAGE_TEAMS:
                result = await self.timelines.timeline(stub.lead)
                timeline = result.data if result is not None else {}
            cards.append(team_card(stub, panel_url, timeline))
        return by_workspace(cards)
