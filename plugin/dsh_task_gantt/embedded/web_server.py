"""The standalone host's ``webServer`` service: plugins register ASGI handlers on it.

Exact routes win, then the longest prefix; both match the decoded path, and the
handler gets the request's scope unchanged. The table is a Starlette
:class:`Router`, rebuilt in that order whenever a route comes or goes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from starlette.responses import Response
from starlette.routing import BaseRoute, Match, NoMatchFound, Router
from starlette.types import ASGIApp, Receive, Scope, Send

#: Paths the host keeps for itself: a plugin registers a longer prefix under them.
HOST_OWNED_PREFIXES = ("/plugins", "/api")


class HostRoute(BaseRoute):
    """One registered route: ``exact`` matches one path, ``prefix`` it and below it."""

    def __init__(self, kind: str, path: str, app: ASGIApp) -> None:
        self.kind = kind
        self.path = path
        self.app = app

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        path = scope.get("path", "")
        if scope["type"] != "http":
            return Match.NONE, {}
        hit = path == self.path or (self.kind == "prefix" and path.startswith(self.path + "/"))
        return (Match.FULL, {}) if hit else (Match.NONE, {})

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.app(scope, receive, send)

    def url_path_for(self, name: str, /, **path_params: Any) -> Any:
        raise NoMatchFound(name, path_params)  # registered routes have no names


async def _not_found(scope: Scope, receive: Receive, send: Send) -> None:
    await Response("not found", status_code=404, media_type="text/plain")(scope, receive, send)


class EmbeddedWebServer:
    """The ``webServer`` service: exact routes win, then the longest prefix."""

    def __init__(self) -> None:
        self._routes: dict[tuple[str, str], HostRoute] = {}
        self.router = self._build()

    def register(self, route: Mapping[str, Any]) -> Callable[[], None]:
        kind, path, handler = route.get("kind"), route.get("path"), route.get("handler")
        if kind not in ("exact", "prefix") or not isinstance(path, str) or handler is None:
            raise ValueError("a route needs kind 'exact' or 'prefix', a path and a handler")
        if path in HOST_OWNED_PREFIXES and kind == "prefix":
            raise ValueError(f"{path} is owned by the host; use a longer prefix under it")
        key = (kind, path.rstrip("/") or "/")
        if key in self._routes:
            raise ValueError(f"a {kind} route for {path} is already registered")
        self._routes[key] = HostRoute(kind, key[1], handler)
        self.router = self._build()

        def dispose() -> None:
            if self._routes.pop(key, None) is not None:
                self.router = self._build()

        return dispose

    def _build(self) -> Router:
        ordered = sorted(self._routes.values(), key=lambda r: (r.kind != "exact", -len(r.path)))
        return Router(routes=ordered, redirect_slashes=False, default=_not_found)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.router(scope, receive, send)
