"""The standalone host: the host services over a sessions root, without DSH.

It implements ``webServer`` (exact and prefix routes, longest prefix wins),
``sessionPersistence`` (the log reader), and a ``connection`` guard that lets in
only loopback clients addressing a loopback host name (a foreign ``Host`` header
is DNS rebinding), or, when bound elsewhere, requests carrying the access token,
or, behind the DSH package's proxy, requests carrying that proxy's per-boot secret.
There is no ``agents`` and no ``agentTeams``: everything comes from the logs. The
plugin is mounted through the same ``apply(ctx)`` any host calls, and a start
page at ``/`` lists the teams it finds.
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from . import ROUTE_PREFIX, __version__, host
from .events import coerce_header
from .fold import RUN_MARKS, UNREAD_DATA
from .logs.persistence import DirectorySessionPersistence
from .plugin import MountedPlugin, apply
from .resources import resource_path

log = logging.getLogger("dsh_task_gantt.embedded")

TOKEN_ENV = "DSH_TASK_GANTT_TOKEN"
TOKEN_COOKIE = "dsh_task_gantt_token"
#: Behind a reverse proxy (the DSH package) the proxy hands its per-boot secret to this
#: server in the environment (never on the command line, where ``ps`` shows it) and
#: adds it to every request in this header.
PROXY_SECRET_ENV = "DSH_TASK_GANTT_PROXY_SECRET"
PROXY_HEADER = "X-DSH-Task-Gantt-Proxy"
#: A secret shorter than this is refused at start-up: it could be guessed.
PROXY_SECRET_MIN_CHARS = 32
LOOPBACK_NAMES = {"localhost", "127.0.0.1", "::1", "[::1]"}
#: The start page builds at most this many team timelines (newest first).
START_PAGE_TEAMS = 60
#: Only its own stylesheet and script (no inline code: texts on it come from logs).
START_PAGE_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; "
    "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'self'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


def default_sessions_root() -> Path:
    """``$DSH_HOME/sessions``, else ``~/.dsh/sessions``."""
    dsh_home = os.environ.get("DSH_HOME")
    base = Path(dsh_home) if dsh_home else Path.home() / ".dsh"
    return base / "sessions"


def is_loopback_host(bind: str) -> bool:
    if bind in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(bind.strip("[]")).is_loopback
    except ValueError:
        return False


class EmbeddedWebServer:
    """The ``webServer`` service: exact routes win, then the longest prefix."""

    def __init__(self) -> None:
        self._routes: dict[tuple[str, str], ASGIApp] = {}

    def register(self, route: Mapping[str, Any]) -> Callable[[], None]:
        kind, path, handler = route.get("kind"), route.get("path"), route.get("handler")
        if kind not in ("exact", "prefix") or not isinstance(path, str) or handler is None:
            raise ValueError("a route needs kind 'exact' or 'prefix', a path and a handler")
        if path in ("/plugins", "/api") and kind == "prefix":
            raise ValueError(f"{path} is owned by the host; use a longer prefix under it")
        key = (kind, path.rstrip("/") or "/")
        if key in self._routes:
            raise ValueError(f"a {kind} route for {path} is already registered")
        self._routes[key] = handler

        def dispose() -> None:
            self._routes.pop(key, None)

        return dispose

    def resolve(self, path: str) -> ASGIApp | None:
        exact = self._routes.get(("exact", path))
        if exact is not None:
            return exact
        best: tuple[int, ASGIApp] | None = None
        for (kind, prefix), handler in self._routes.items():
            if kind != "prefix":
                continue
            if (path == prefix or path.startswith(prefix + "/")) and (
                best is None or len(prefix) > best[0]
            ):
                best = (len(prefix), handler)
        return best[1] if best else None


@dataclass(slots=True)
class LoopbackConnection:
    """The ``connection`` guard of the embedded host."""

    bind_host: str
    port: int
    token: str | None = None
    proxy_secret: str | None = None

    def request_rejection(self, request: Request) -> int | None:
        if self.proxy_secret is not None:
            # The proxy answers for the browser (its own guard ran first); the Host it
            # forwards is DSH's, so the secret replaces the loopback Host check.
            presented = request.headers.get(PROXY_HEADER)
            if not presented:
                return 401
            if hmac.compare_digest(presented.encode(), self.proxy_secret.encode()):
                return None
            return 403
        if self.token is not None:
            presented = request.cookies.get(TOKEN_COOKIE) or request.query_params.get("token")
            if presented and hmac.compare_digest(presented.encode(), self.token.encode()):
                return None
            return 401
        client = request.client.host if request.client else ""
        if not is_loopback_host(client):
            return 403
        if not is_loopback_host_header(request.headers.get("host", "")):
            return 403  # DNS rebinding: a foreign name pointing at our loopback port
        return None


def is_loopback_host_header(value: str) -> bool:
    """``localhost``, ``127.0.0.1`` or ``[::1]``, with at most a numeric port."""
    name, port = value, ""
    if value.startswith("["):  # [::1] or [::1]:8765
        name, _, port = value.partition("]")
        name += "]"
        if port and not port.startswith(":"):
            return False
        port = port[1:]
    elif ":" in value:
        name, _, port = value.rpartition(":")
    if port and not port.isdigit():
        return False
    return name.lower() in LOOPBACK_NAMES


@dataclass(slots=True)
class EmbeddedContext:
    """The plugin context of the standalone host (``get`` by service name)."""

    services: dict[str, Any] = field(default_factory=dict)
    logger: logging.Logger = log

    def get(self, name: str) -> Any:
        return self.services.get(name)


class EmbeddedHost:
    """An ASGI app: the start page, and every route the plugin registered."""

    def __init__(
        self,
        sessions_root: Path,
        *,
        bind_host: str = "127.0.0.1",
        port: int = 8765,
        token: str | None = None,
        proxy_secret: str | None = None,
        title: str = "dsh-task-gantt",
    ) -> None:
        self.sessions_root = sessions_root
        self.web = EmbeddedWebServer()
        # The fold needs only type, seq and time of most lines (and most of the bytes).
        self.persistence = DirectorySessionPersistence(
            sessions_root, skip_types=UNREAD_DATA, run_marks=RUN_MARKS
        )
        self.connection = LoopbackConnection(bind_host, port, token, proxy_secret)
        self.title = title
        self.ctx = EmbeddedContext(
            services={
                host.WEB_SERVER: self.web,
                host.SESSION_PERSISTENCE: self.persistence,
                host.CONNECTION: self.connection,
            }
        )
        self.plugin: MountedPlugin = apply(self.ctx)
        self.templates = Environment(
            loader=FileSystemLoader(resource_path("templates")),
            autoescape=select_autoescape(default=True, default_for_string=True),
        )
        self.templates.filters["utc"] = format_utc

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        send = _hardened(send)
        path = scope.get("path", "/")
        if path in ("/", "/index.html"):
            response = await self.start_page(Request(scope, receive))
            await response(scope, receive, send)
            return
        handler = self.web.resolve(path)
        if handler is None:
            await Response("not found", status_code=404, media_type="text/plain")(
                scope, receive, send
            )
            return
        await handler(scope, receive, send)

    async def start_page(self, request: Request) -> Response:
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
        teams = await self.list_teams()
        html = self.templates.get_template("start.html").render(
            title=self.title,
            version=__version__,
            sessions_root=str(self.sessions_root),
            teams=teams,
            prefix=ROUTE_PREFIX,
        )
        return HTMLResponse(html, headers=START_PAGE_HEADERS)

    async def list_teams(self) -> list[dict[str, Any]]:
        """Teams under the root, newest first: one row per lead (a session with no parent)."""
        try:
            sessions = await self.persistence.list()
        except Exception:
            log.warning("could not list sessions under %s", self.sessions_root, exc_info=True)
            return []
        by_id: dict[str, dict[str, Any]] = {}
        children: dict[str, list[str]] = {}
        for row in sessions:
            header = coerce_header(row.get("header") or {})
            sid = row.get("id")
            if not isinstance(sid, str) or header is None:
                continue
            by_id[sid] = {"row": row, "header": header}
            if header.parent_session:
                children.setdefault(header.parent_session, []).append(sid)
        teams: list[dict[str, Any]] = []
        for sid, entry in by_id.items():
            header = entry["header"]
            if header.parent_session and header.parent_session in by_id:
                continue  # a member: listed under its lead
            teams.append(
                {
                    "lead": sid,
                    "workspace": header.cwd or "(no workspace)",
                    "created_at": header.created_at,
                    "member_ids": sorted(children.get(sid, [])),
                }
            )
        teams.sort(key=lambda t: t["created_at"] or 0, reverse=True)
        for team in teams[:START_PAGE_TEAMS]:
            result = await self.plugin.service.timeline(team["lead"])
            data = result.data if result is not None else {}
            lanes = [lane for lane in data.get("lanes", []) if lane.get("kind") != "unassigned"]
            tasks = [t for t in data.get("tasks", []) if t.get("status") != "deleted"]
            lead: dict[str, Any] = next((lane for lane in lanes if lane.get("kind") == "lead"), {})
            spans = [s for lane in lanes for s in lane.get("spans", [])]
            team.update(
                live=bool(data.get("live")),
                last_activity=_last_activity(data, spans),
                lead_name=lead.get("name") or "lead",
                # The human's first prompt says what the team is about.
                subject=next(
                    (
                        s.get("preview")
                        for s in lead.get("spans", [])
                        if s.get("kind") == "user-prompt"
                    ),
                    None,
                ),
                members=[
                    {"name": lane.get("name"), "unreadable": lane.get("channel") == "unreadable"}
                    for lane in lanes
                    if lane.get("kind") == "teammate"
                ],
                tasks_done=sum(1 for t in tasks if t.get("status") == "completed"),
                tasks_total=len(tasks),
                turns=sum(1 for s in spans if s.get("kind") == "turn"),
                messages=len({s.get("id") for s in spans if s.get("kind") == "message"}),
                source=data.get("source"),
            )
        teams.sort(
            key=lambda t: (not t.get("live"), -(t.get("last_activity") or t["created_at"] or 0))
        )
        by_workspace: dict[str, list[dict[str, Any]]] = {}
        for team in teams:
            by_workspace.setdefault(team["workspace"], []).append(team)
        return [{"workspace": ws, "teams": rows} for ws, rows in by_workspace.items()]


def _last_activity(data: Mapping[str, Any], spans: list[Mapping[str, Any]]) -> int | None:
    """The frozen end of the range; while live, the newest span start or end (never now)."""
    end = (data.get("range") or {}).get("end")
    if isinstance(end, int):
        return end
    times = [t for s in spans for t in (s.get("time"), s.get("end")) if isinstance(t, int)]
    return max(times, default=None)


def _hardened(send: Send) -> Send:
    """Every answer of the embedded host: no MIME sniffing; HTML only under the CSP."""
    from .panel import PANEL_CSP

    async def wrapped(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = list(message.get("headers", []))
            names = {name.lower() for name, _ in headers}
            content_type = next((v for n, v in headers if n.lower() == b"content-type"), b"")
            if b"x-content-type-options" not in names:
                headers.append((b"x-content-type-options", b"nosniff"))
            if content_type.startswith(b"text/html"):
                if b"content-security-policy" not in names:
                    headers.append((b"content-security-policy", PANEL_CSP.encode()))
                if b"referrer-policy" not in names:
                    headers.append((b"referrer-policy", b"no-referrer"))
            message = {**message, "headers": headers}
        await send(message)

    return wrapped


def format_utc(ms: Any) -> str:
    """Epoch milliseconds as a readable UTC time (the page shows local time when it can)."""
    if not isinstance(ms, int):
        return ""
    return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


async def _lifespan(receive: Receive, send: Send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return
