"""The plugin's HTTP surface: one ASGI app mounted under the route prefix.

Every request goes through the same checks, in the order PRODUCT.md fixes:
method (405) → ``connection`` guard (401/403; 503 without the service) →
parameters (400) → existence (404) → 200. Nothing raises out of a handler: an
unexpected failure is logged and answered with a short JSON reason, never a
traceback or a file system path.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import orjson
from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.types import Receive, Scope, Send

from . import host
from .ids import valid_item_id, valid_session_id
from .provider import TimelineProvider

#: Longer query strings are refused before any parsing.
MAX_QUERY_BYTES = 4096
#: No request waits longer than this for the host, however many calls it makes (each
#: call is bounded too, by ``host.HOST_CALL_TIMEOUT_S``). Read at call time.
REQUEST_TIMEOUT_S = 30.0

NOSNIFF = {"X-Content-Type-Options": "nosniff"}
JSON_HEADERS = {**NOSNIFF, "Cache-Control": "no-cache"}

log = logging.getLogger("dsh_task_gantt")

Guard = Callable[[Request], Awaitable[Response | None]]


def json_error(status: int, reason: str, **extra: Any) -> Response:
    body = orjson.dumps({"error": reason, "status": status, **extra})
    return Response(body, status_code=status, media_type="application/json", headers=JSON_HEADERS)


def connection_guard(get_service: Callable[[str], Any]) -> Guard:
    """The host's ``connection.requestRejection`` as a guard; refuse when it is absent."""

    async def guard(request: Request) -> Response | None:
        try:
            connection = get_service(host.CONNECTION)
        except Exception:
            connection = None
        check = (
            host.service_method(connection, "request_rejection", "requestRejection")
            if connection is not None
            else None
        )
        if check is None:
            return json_error(503, "the host offers no connection service to guard this route")
        try:
            verdict = await host.call_host(check, request, what="connection.requestRejection")
        except host.HostCallError as exc:
            log.warning("dsh-task-gantt: the connection guard failed: %s", exc)
            return json_error(503, "the host's connection guard failed")
        if verdict is None or verdict is False:
            return None
        if type(verdict) is int and verdict in (401, 403):
            return json_error(verdict, "unauthorized" if verdict == 401 else "forbidden")
        # Anything else from a guard is a refusal we cannot read: fail closed.
        return json_error(403, "forbidden")

    return guard


class GanttApp:
    """ASGI app for everything under the plugin's route prefix."""

    def __init__(
        self,
        provider: TimelineProvider,
        guard: Guard,
        *,
        prefix: str,
        static_dir: Path,
    ) -> None:
        from .panel import PANEL_CSP, Panel

        self.provider = provider
        self.guard = guard
        self.prefix = prefix.rstrip("/")
        self.panel = Panel(provider, self.prefix)
        self.panel_csp = PANEL_CSP
        # Only files that exist at start-up are served: no path ever comes from a request.
        self.static_files = {p.name: p for p in static_dir.iterdir() if p.is_file()}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        request = Request(scope, receive)
        try:
            response = await asyncio.wait_for(self.handle(request), REQUEST_TIMEOUT_S)
        except host.HostCallError as exc:  # a short reason without a path: say it
            response = json_error(503, str(exc))
        except TimeoutError:
            log.warning("dsh-task-gantt: the host did not answer within %g s", REQUEST_TIMEOUT_S)
            response = json_error(504, "the host did not answer in time")
        except Exception:
            log.exception("dsh-task-gantt: request failed")
            response = json_error(500, "internal error while building the answer")
        _harden(response)
        await response(scope, receive, send)

    async def handle(self, request: Request) -> Response:
        if request.method != "GET":
            return Response(
                orjson.dumps({"error": "method not allowed", "status": 405}),
                status_code=405,
                media_type="application/json",
                headers={**JSON_HEADERS, "Allow": "GET"},
            )
        refusal = await self.guard(request)
        if refusal is not None:
            return refusal
        if len(request.scope.get("query_string", b"")) > MAX_QUERY_BYTES:
            return json_error(414, "query string too long")

        parts = self._path_parts(request)
        if parts is None:
            return json_error(404, "not found")
        if len(parts) == 2 and parts[0] == "static":
            return self.static(parts[1])

        route = _match(parts)
        if route is None:
            return json_error(404, "not found")
        name, item_id = route
        session_id = request.query_params.get("session")
        if session_id is None or not valid_session_id(session_id):
            return json_error(400, "a session id must match ^[A-Za-z0-9._-]{1,128}$")
        if item_id is not None and not valid_item_id(item_id):
            return json_error(400, "an id must match ^[A-Za-z0-9._:-]{1,128}$")

        if name == "timeline":
            return await self.api_timeline(request, session_id)
        if name == "message":
            assert item_id is not None
            if request.headers.get("HX-Request") == "true":
                return self._with_csp(await self.panel.message(request, session_id, item_id))
            return await self.api_message(session_id, item_id)
        if name == "panel":
            return self._with_csp(await self.panel.page(request, session_id))
        if name == "board":
            return self._with_csp(await self.panel.board(request, session_id))
        if name == "items":
            return self._with_csp(await self.panel.items(request, session_id))
        assert name == "task" and item_id is not None
        return self._with_csp(await self.panel.task(request, session_id, item_id))

    def _path_parts(self, request: Request) -> list[str] | None:
        """The path after the prefix, split *before* percent-decoding.

        Splitting the raw path keeps ``/api/messages/a%2Fb`` one (invalid) id rather
        than two path steps; each part is then decoded on its own.
        """
        raw = request.scope.get("raw_path")
        if isinstance(raw, bytes) and raw:
            path = raw.split(b"?", 1)[0].decode("latin-1")
        else:  # a host that gives no raw path: the decoded one is all there is
            path = request.scope.get("path", "")
        if path != self.prefix and not path.startswith(self.prefix + "/"):
            return None
        rest = path[len(self.prefix) :].removeprefix("/")
        return [unquote(part, errors="replace") for part in rest.split("/")]

    async def api_timeline(self, request: Request, session_id: str) -> Response:
        result = await self.provider.timeline(session_id)
        if result is None:
            return json_error(404, "no such session")
        headers = {**JSON_HEADERS, "ETag": result.etag}
        if _etag_matches(request.headers.get("if-none-match"), result.etag):
            return Response(status_code=304, headers=headers)
        return Response(result.body, media_type="application/json", headers=headers)

    async def api_message(self, session_id: str, message_id: str) -> Response:
        detail = await self.provider.message(session_id, message_id)
        if detail is None:
            return json_error(404, "no such message in this team")
        return Response(orjson.dumps(detail), media_type="application/json", headers=JSON_HEADERS)

    def static(self, name: str) -> Response:
        path = self.static_files.get(name)
        if path is None:
            return json_error(404, "not found")
        # Versioned files (htmx-2.0.x.min.js) never change under their name.
        cache = (
            "public, max-age=31536000, immutable" if re.search(r"\d+\.\d+", name) else "no-cache"
        )
        return FileResponse(path, headers={**NOSNIFF, "Cache-Control": cache})

    def _with_csp(self, response: Response) -> Response:
        response.headers.setdefault("Content-Security-Policy", self.panel_csp)
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        response.headers.setdefault("Referrer-Policy", "no-referrer")
        return response


def _harden(response: Response) -> None:
    """Every answer: no MIME sniffing; every HTML answer: the panel's CSP."""
    from .panel import PANEL_CSP

    response.headers.setdefault("X-Content-Type-Options", "nosniff")
    if response.headers.get("content-type", "").startswith("text/html"):
        response.headers.setdefault("Content-Security-Policy", PANEL_CSP)
        response.headers.setdefault("Referrer-Policy", "no-referrer")


def _match(parts: list[str]) -> tuple[str, str | None] | None:
    match parts:
        # An id route takes everything after it: "a/b" is a malformed id (400), not 404.
        case ["api", "messages", *rest] if rest:
            return "message", "/".join(rest)
        case ["panel", "tasks", *rest] if rest:
            return "task", "/".join(rest)
    while parts and parts[-1] == "":  # "/panel/" is "/panel"
        parts = parts[:-1]
    match parts:
        case ["api", "timeline"]:
            return "timeline", None
        case ["panel"]:
            return "panel", None
        case ["panel", "board"]:
            return "board", None
        case ["panel", "items"]:
            return "items", None
    return None


def _etag_matches(header: str | None, etag: str) -> bool:
    if not header:
        return False
    candidates = [c.strip().removeprefix("W/") for c in header.split(",")]
    return "*" in candidates or etag in candidates
