"""The standalone host as one ASGI app: its services, the plugin, the start page.

The plugin is mounted through the same ``apply(ctx)`` any host calls; the start page
answers ``/`` and ``/index.html`` (and its cards' summaries and live states under
``<prefix>/start/``); everything else goes to the ``webServer`` service,
which routes to what the plugin registered. One middleware puts the security headers
on every answer. The lifespan starts the warm-up and, at shut-down, writes what the lane cache has
not written yet.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from starlette.routing import Route, Router
from starlette.types import Receive, Scope, Send

from .. import host
from ..lane_cache import LaneCacheStore, open_store
from ..logs.persistence import DirectorySessionPersistence
from ..panel import PANEL_CSP
from ..plugin import MountedPlugin, apply
from ..security_headers import SecurityHeaders
from ..templating import template_environment
from ..warm_up import warm_up_and_announce
from ..web import connection_guard
from .guard import LoopbackConnection
from .start_page import CARD_PATH, LIVE_PATH, StartPage
from .web_server import EmbeddedWebServer

log = logging.getLogger("dsh_task_gantt.embedded")


def default_sessions_root() -> Path:
    """``$DSH_HOME/sessions``, else ``~/.dsh/sessions``."""
    dsh_home = os.environ.get("DSH_HOME")
    base = Path(dsh_home) if dsh_home else Path.home() / ".dsh"
    return base / "sessions"


class EmbeddedContext:
    """The plugin context of the standalone host (``get`` by service name): the
    services it has, each typed as the host contract's Protocol, so a checker proves
    the standalone services keep that contract."""

    def __init__(
        self,
        *,
        web_server: host.WebServer,
        persistence: host.SessionPersistence,
        connection: host.Connection,
        logger: logging.Logger = log,
    ) -> None:
        self.services: dict[str, object] = {
            host.WEB_SERVER: web_server,
            host.SESSION_PERSISTENCE: persistence,
            host.CONNECTION: connection,
        }
        self.logger = logger

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
        warm: bool = False,
        cache_dir: Path | None = None,
        announce: Callable[[str], None] | None = None,
    ) -> None:
        self.sessions_root = sessions_root
        #: What reading each log produced, kept across restarts (``None``: no cache,
        #: or its folder was refused, which is logged once).
        self.lane_cache: LaneCacheStore | None = (
            open_store(cache_dir, sessions_root=sessions_root, logger=log)
            if cache_dir is not None
            else None
        )
        #: Read the most recently written team when the server starts (``serve`` does).
        self.warm = warm
        self.warmed: asyncio.Task[str | None] | None = None
        #: Where the line saying the start-up read ended goes (stderr unless told).
        self.announce = announce or _to_stderr
        self.web = EmbeddedWebServer()
        # Which lines its readers may leave unparsed, the plugin's service tells it.
        self.persistence = DirectorySessionPersistence(sessions_root, lane_cache=self.lane_cache)
        self.connection = LoopbackConnection(bind_host, port, token, proxy_secret)
        self.title = title
        self.ctx = EmbeddedContext(
            web_server=self.web, persistence=self.persistence, connection=self.connection
        )
        self.plugin: MountedPlugin = apply(self.ctx)
        self.start_page = StartPage(
            connection=self.connection,
            guard=connection_guard(self.ctx.get),
            persistence=self.persistence,
            timelines=self.plugin.service,
            url_path_for=self.plugin.app.url_path_for,
            templates=template_environment(),
            sessions_root=sessions_root,
            title=title,
        )
        router = Router(
            routes=[
                Route("/", self.start_page, name="start"),
                Route("/index.html", self.start_page, name="start-index"),
                Route(CARD_PATH, self.start_page, name="start-card"),
                Route(LIVE_PATH, self.start_page, name="start-live"),
            ],
            redirect_slashes=False,
            default=self.web,
            lifespan=self._lifespan,
        )
        self.app = SecurityHeaders(router, html_csp=PANEL_CSP)

    @contextlib.asynccontextmanager
    async def _lifespan(self, app: object) -> AsyncIterator[None]:
        # The warm-up runs beside the first requests (a request for the same team
        # waits for its reads rather than reading again); it ends with the server.
        if self.lane_cache is not None:
            self.lane_cache.sweep_soon()
        if self.warm:
            self.warmed = asyncio.create_task(
                warm_up_and_announce(
                    self.persistence,
                    self.plugin.service,
                    self.plugin.app.panel,
                    log,
                    self.announce,
                )
            )
        try:
            yield
        finally:
            if self.warmed is not None and not self.warmed.done():
                self.warmed.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await self.warmed
            if self.lane_cache is not None:  # what is not written yet, written now
                await asyncio.to_thread(self.lane_cache.close)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "lifespan"):
            await self.app(scope, receive, send)


def _to_stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)
