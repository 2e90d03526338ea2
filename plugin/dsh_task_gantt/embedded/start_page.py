"""The standalone host's start page at ``/``: every team under the sessions root.

The first answer builds no timeline: it lists the teams from the logs' headers and
stats (cheap, cached per file), then the page fetches each card's summary from
``<prefix>/start/card`` as the card scrolls into view. That goes through the plugin's own
timeline service, so a panel opened afterwards finds its caches warm.

``.../start/live``, polled by the page, says where every card goes (new teams and
single sessions included, live teams first) and which of the summarised teams are
live, with each summary's version so the page fetches a card again only when its team
changed. An unchanged poll costs a few stats: the listing is kept while no workspace or
session folder was added (:mod:`.root_watch`), and a summarised team is asked about
again only when one of its logs changed.

The same checks as the plugin's routes, by the same code: method (405; HEAD too), the
guard (401/403), the query's size (414), the session id (400). The one-time token URL
lands on the page and trades the token for a cookie.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable
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
from ..logs.persistence import DirectorySessionPersistence, revision_of
from ..provider import TimelineProvider
from ..web import Guard, bad_session_id, request_refusal
from .guard import TOKEN_COOKIE, LoopbackConnection
from .root_watch import FolderIdentity, RootWatch, Signature, folder_identity
from .teams import (
    NO_WORKSPACE,
    Activity,
    Listing,
    TeamCard,
    TeamStub,
    WorkspaceGroup,
    by_workspace,
    has_header,
    last_activity,
    listing,
    newest_first,
    placement,
    summary_text,
    team_card,
)

log = logging.getLogger("dsh_task_gantt.embedded")

# Under the plugin's prefix: inside DSH the page itself is served at the prefix, and
# only paths under it reach this server.
#: One card with its summary (an HTML fragment the page swaps in).
CARD_PATH = f"{ROUTE_PREFIX}/start/card"
#: Where every card goes, and the summarised teams' live states and versions.
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
    #: ``<card_url>?session=<lead>`` fetches any card, a new team's included.
    card_url: str
    stylesheets: tuple[str, ...]
    scripts: tuple[str, ...]
    #: Logs left out because the listing read no header in them (paths under the root).
    headerless: tuple[str, ...] = ()


#: One log's state: its session folder's identity (a newer log file beside it changes
#: it) and the file's revision (identity, size, modification time); ``None`` when it is
#: not where the listing found it.
LogState = tuple[FolderIdentity, str] | None


def _log_state(folder: str, path: str) -> LogState:
    return folder_identity(os.stat(folder)), revision_of(os.stat(path))


@dataclass(frozen=True, slots=True)
class Summarised:
    """What the page was last told about a team whose summary it asked for."""

    #: Its logs' states when the summary was built (``None``: not known then).
    logs: tuple[LogState, ...] | None
    activity: Activity
    #: The summary's version (the timeline's validator).
    stamp: str


class StartPage:
    """An ASGI endpoint for the page, its cards and its poll (every method reaches it:
    the plugin's own checks answer the ones it refuses)."""

    def __init__(
        self,
        *,
        connection: LoopbackConnection,
        guard: Guard,
        persistence: DirectorySessionPersistence,
        timelines: TimelineProvider,
        url_path_for: Callable[..., str],
        templates: jinja2.Environment,
        sessions_root: Path,
        title: str,
    ) -> None:
        self.connection = connection
        self.guard = guard
        self.persistence = persistence
        self.timelines = timelines
        self.url_path_for = url_path_for
        self.templates = templates
        self.sessions_root = sessions_root
        self.title = title
        #: Each summarised team's log states, activity and version: one small record
        #: per team ever listed under the root (bounded by the teams there; the
        #: timelines themselves are the service's, which keeps only a few).
        self._summarised: dict[str, Summarised] = {}
        self._watch = RootWatch(sessions_root)
        #: The last listing, and the root's folder signature it stands for.
        self._listed: tuple[Signature, Listing] | None = None
        #: Each log the last listing read no header in, with its revision then: writing
        #: the header changes no folder, only the file, so these are stat-ed each look.
        self._headerless: dict[str, str] = {}
        #: Each listed session's folder and log file.
        self._log_paths: dict[str, tuple[str, str]] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = await self.respond(Request(scope, receive))
        await response(scope, receive, send)

    async def respond(self, request: Request) -> Response:
        refusal = await request_refusal(request, self.guard)
        if refusal is not None and refusal.status_code == 401 and self.connection.token:
            # Said in words on the page a person opens by hand.
            return Response(
                "a token is required: open the URL printed at start-up",
                401,
                media_type="text/plain",
            )
        if refusal is not None:
            return refusal
        if request.url.path == CARD_PATH:
            lead = request.query_params.get("session", "")
            return await self.card(lead) if valid_session_id(lead) else bad_session_id()
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
        groups, singles = self.arranged(found)
        static = [self.url_path_for("static", name=n) for n in ("start.css", "start.js")]
        return StartPageView(
            title=self.title,
            version=__version__,
            sessions_root=str(self.sessions_root),
            groups=groups,
            singles=singles,
            summary=summary_text(sum(len(g.teams) for g in groups), len(groups), len(singles))
            if groups or singles
            else "",
            live_url=LIVE_PATH,
            card_url=CARD_PATH,
            stylesheets=(static[0],),
            scripts=(static[1], self.url_path_for("static", name="embed.js")),
            headerless=self._headerless_paths(),
        )

    def _headerless_paths(self) -> tuple[str, ...]:
        """The logs the listing left out for want of a header, by their path under the
        root: a page that hides one says so (it may be a log just created, or one whose
        first line never becomes a header)."""
        root = str(self.sessions_root)
        found = []
        for session_id in sorted(self._headerless):
            place = self._log_paths.get(session_id)
            if place is not None:
                found.append(os.path.relpath(place[1], root))
        return tuple(found)

    def arranged(self, found: Listing) -> tuple[tuple[WorkspaceGroup, ...], tuple[TeamCard, ...]]:
        """The cards as the first answer shows them, each placed where its last summary
        put it (live teams first, then the newest activity)."""
        groups = by_workspace(self.pending(stub) for stub in found.teams)
        singles = tuple(sorted((self.pending(stub) for stub in found.singles), key=newest_first))
        return groups, singles

    async def listing(self) -> Listing:
        """The teams and single sessions under the root, from headers and stats only;
        the last one again while no workspace or session folder came or went and no
        log it found without a header changed."""
        signature = self._watch.look()
        if (
            self._listed is not None
            and self._listed[0] == signature
            and self._headerless == self._revisions(self._headerless)
        ):
            return self._listed[1]
        try:
            rows = await self.persistence.list()
        except Exception:
            log.warning("could not list sessions under %s", self.sessions_root, exc_info=True)
            return listing([])
        signature = self._watch.listed(rows, signature)
        root = str(self.sessions_root)
        paths: dict[str, tuple[str, str]] = {}
        for row in rows:
            session_id, workspace, name = row.get("id"), row.get("project"), row.get("logName")
            if isinstance(session_id, str) and isinstance(workspace, str) and isinstance(name, str):
                folder = self._watch.folder_of(workspace, session_id) or session_id
                folder_path = os.path.join(root, workspace, folder)
                paths[session_id] = (folder_path, os.path.join(folder_path, name))
        self._log_paths = paths
        found = listing(rows)
        self._headerless = {
            session_id: str(row.get("revision"))
            for row in rows
            if not has_header(row) and isinstance(session_id := row.get("id"), str)
            if session_id in paths
        }
        self._listed = (signature, found)
        return found

    def _revisions(self, session_ids: Iterable[str]) -> dict[str, str]:
        """Each log's revision now (``""``: gone)."""
        now: dict[str, str] = {}
        for session_id in session_ids:
            try:
                now[session_id] = revision_of(os.stat(self._log_paths[session_id][1]))
            except (OSError, KeyError):
                now[session_id] = ""
        return now

    def log_states(self, found: Listing, lead: str) -> tuple[LogState, ...] | None:
        """The state of each of the team's logs, from two stats per log (no decoding)."""
        stub = found.stub(lead)
        if stub is None:
            return None
        states: list[LogState] = []
        for session_id in (stub.lead, *stub.members):
            place = self._log_paths.get(session_id)
            try:
                states.append(_log_state(*place) if place else None)
            except OSError:  # gone since the listing
                states.append(None)
        return tuple(states)

    def pending(self, stub: TeamStub) -> TeamCard:
        """A card from the headers alone; the page fetches its summary."""
        known = self._summarised.get(stub.lead)
        return team_card(
            stub,
            self.panel_url(stub.lead),
            None,
            self.card_url(stub.lead),
            activity=known.activity if known else None,
        )

    def panel_url(self, lead: str) -> str:
        return self.url_path_for("panel") + "?" + urlencode({"session": lead})

    @staticmethod
    def card_url(lead: str) -> str:
        return CARD_PATH + "?" + urlencode({"session": lead})

    async def card(self, lead: str) -> Response:
        """One card with its summary, built by the plugin's timeline service."""
        found = self._listed[1] if self._listed is not None else None
        logs = self.log_states(found, lead) if found is not None else None
        row = await self.persistence.stat(lead)
        header = coerce_header((row or {}).get("header") or {})
        stub = (found.stub(lead) if found is not None else None) or TeamStub(
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
                card = team_card(
                    stub, panel_url, result.data, card_url, live=result.live, stamp=result.etag
                )
                activity = Activity(card.live, card.last_activity)
                self._summarised[lead] = Summarised(logs, activity, result.etag)
        html = self.templates.get_template("start_card.html").module.card(card)  # type: ignore[attr-defined]
        return HTMLResponse(str(html), headers=START_PAGE_HEADERS)

    async def live(self) -> Response:
        """Where every card goes, and which summarised teams are live. A team none of
        whose logs changed since it was last asked keeps its answer (a frozen team
        cannot come alive without writing); only a changed one is asked again."""
        found = await self.listing()
        for lead, known in list(self._summarised.items()):
            logs = self.log_states(found, lead)
            if logs is None:
                continue  # its logs are gone: the card keeps what it showed
            if logs == known.logs:
                continue
            if (
                known.logs is not None
                and len(logs) == len(known.logs)
                and _folders(logs) != _folders(known.logs)
            ):
                self._listed = None  # a log file came or went beside one: list again
            try:
                result = await self.timelines.timeline(lead)
            except Exception:
                log.warning("could not check whether %s is live", lead, exc_info=True)
                continue
            if result is None:
                continue
            activity = Activity(result.live, last_activity(result.data))
            self._summarised[lead] = Summarised(logs, activity, result.etag)
        activities = {lead: known.activity for lead, known in self._summarised.items()}
        summarised = {
            lead: known for lead, known in self._summarised.items() if lead in found.by_lead
        }
        answer = {
            "live": {lead: known.activity.live for lead, known in summarised.items()},
            "stamps": {lead: known.stamp for lead, known in summarised.items()},
            **placement(found, activities),
        }
        return Response(
            orjson.dumps(answer), media_type="application/json", headers=START_PAGE_HEADERS
        )


def _folders(logs: tuple[LogState, ...]) -> tuple[object, ...]:
    return tuple(state[0] if state is not None else None for state in logs)
