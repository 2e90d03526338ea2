"""The standalone host's start page at ``/``: every team under the sessions root.

The first answer builds no timeline: it lists the teams from the logs' headers and
stats (cheap, cached per file), then the page fetches each card's summary from
``<prefix>/start/card`` as the card scrolls into view. That goes through the plugin's own
timeline service, so a panel opened afterwards finds its caches warm. ``.../start/live``
says which of the summarised teams are live; a team whose logs did not change since
it was last asked keeps its answer, so a poll costs one listing of the root.

Checks in the same order as the plugin's routes: method (405), the guard (401/403),
then the answer. The one-time token URL lands on the page and trades the token for a
cookie. HEAD is refused like every method but GET, as on the plugin's routes.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlencode

import jinja2
import orjson
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.types import Receive, Scope, Send

from .. import ROUTE_PREFIX, __version__
from ..events import coerce_header
from ..ids import valid_session_id
from ..logs.persistence import DirectorySessionPersistence
from ..provider import TimelineProvider
from .guard import TOKEN_COOKIE, LoopbackConnection
from .teams import (
    NO_WORKSPACE,
    Listing,
    TeamCard,
    TeamStub,
    WorkspaceGroup,
    by_workspace,
    listing,
    summary_text,
    team_card,
)

log = logging.getLogger("dsh_task_gantt.embedded")

# Under the plugin's prefix: inside DSH the page itself is served at the prefix, and
# only paths under it reach this server.
#: One card with its summary (an HTML fragment the page swaps in).
CARD_PATH = f"{ROUTE_PREFIX}/start/card"
#: ``{"live": {lead: bool}}`` for the teams whose summary was asked for.
LIVE_PATH = f"{ROUTE_PREFIX}/start/live"
#: Only its own stylesheet and script (no inline code: texts on it come from logs);
#: the script fetches the cards' summaries and live states from this host.
START_PAGE_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'self'"
)
START_PAGE_HEADERS = {"Content-Security-Policy": START_PAGE_CSP, "Cache-Control": "no-store"}


@dataclass(frozen=True, slots=True)
class StartPageView:
    title: str
    version: str
    sessions_root: str
    groups: tuple[WorkspaceGroup, ...]
    #: Leads nobody joined, newest first (their own section after every team).
    singles: tuple[TeamCard, ...]
    #: ``3 teams in 2 workspaces · 5 single sessions``; empty when there is none.
    summary: str
    live_url: str
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
        #: Per summarised lead: its logs' revisions when last asked, and whether live.
        self._live: dict[str, tuple[tuple[str, ...] | None, bool]] = {}

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
        if request.url.path == CARD_PATH:
            return await self.card(request.query_params.get("session", ""))
        if request.url.path == LIVE_PATH:
            return await self.live()
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
        found = await self.listing()
        groups = by_workspace(self.pending(stub) for stub in found.teams)
        singles = tuple(self.pending(stub) for stub in found.singles)
        static = [self.url_path_for("static", name=n) for n in ("start.css", "start.js")]
        return StartPageView(
            title=self.title,
            version=__version__,
            sessions_root=str(self.sessions_root),
            groups=groups,
            singles=singles,
            summary=summary_text(groups, len(singles)) if groups or singles else "",
            live_url=LIVE_PATH,
            stylesheets=(static[0],),
            scripts=(static[1], self.url_path_for("static", name="embed.js")),
        )

    async def listing(self) -> Listing:
        """The teams and single sessions under the root, from headers and stats only."""
        try:
            rows = await self.persistence.list()
        except Exception:
            log.warning("could not list sessions under %s", self.sessions_root, exc_info=True)
            rows = []
        return listing(rows)

    def pending(self, stub: TeamStub) -> TeamCard:
        """A card from the headers alone; the page fetches its summary."""
        return team_card(stub, self.panel_url(stub.lead), None, self.card_url(stub.lead))

    def panel_url(self, lead: str) -> str:
        return self.url_path_for("panel") + "?" + urlencode({"session": lead})

    @staticmethod
    def card_url(lead: str) -> str:
        return CARD_PATH + "?" + urlencode({"session": lead})

    async def card(self, lead: str) -> Response:
        """One card with its summary, built by the plugin's timeline service."""
        if not valid_session_id(lead):
            return Response("no such session", status_code=404, media_type="text/plain")
        row = await self.persistence.stat(lead)
        header = coerce_header((row or {}).get("header") or {})
        stub = TeamStub(
            lead,
            (header.cwd if header else None) or NO_WORKSPACE,
            header.created_at if header else None,
        )
        panel_url, card_url = self.panel_url(lead), self.card_url(lead)
        try:
            result = await self.timelines.timeline(lead)
        except Exception:
            log.warning("could not summarise the team of %s", lead, exc_info=True)
            card = team_card(
                stub, panel_url, None, card_url, unavailable="its summary could not be built"
            )
        else:
            if result is None:
                card = team_card(
                    stub, panel_url, None, card_url, unavailable="its logs are no longer there"
                )
            else:
                card = team_card(stub, panel_url, result.data, card_url)
                self._live[lead] = (None, card.live)
        html = self.templates.get_template("start_card.html").module.card(card)  # type: ignore[attr-defined]
        return HTMLResponse(str(html), headers=START_PAGE_HEADERS)

    async def live(self) -> Response:
        """Which summarised teams are live. A team none of whose logs changed since it
        was last asked keeps its answer (a frozen team cannot come alive without
        writing); only a changed one asks the timeline service again."""
        found = await self.listing()
        states: dict[str, bool] = {}
        for lead, (known, was_live) in list(self._live.items()):
            revisions = found.revisions.get(lead)
            if revisions is None:
                continue  # its logs are gone: the card keeps what it showed
            if revisions != known:
                try:
                    result = await self.timelines.timeline(lead)
                except Exception:
                    log.warning("could not check whether %s is live", lead, exc_info=True)
                    continue
                was_live = bool(result is not None and result.data.get("live"))
                self._live[lead] = (revisions, was_live)
            states[lead] = was_live
        return Response(
            orjson.dumps({"live": states}),
            media_type="application/json",
            headers=START_PAGE_HEADERS,
        )
