"""The plugin's HTTP surface: one ASGI app mounted under the route prefix.

Every request goes through the same checks, in this order (docs/interfaces.md, HTTP):
method (405) → ``connection`` guard (401/403; 503 without the service) →
parameters (400; 414 for an oversized query) → existence (404) → 200. The first two
and the query size hold for every path, known or not, so they run before routing; the
routes themselves are one Starlette :class:`Router` table, and each handler of a
team's data gets its ids already checked. Nothing raises out of a handler: an
unexpected failure is logged and answered with a short JSON reason, never a
traceback or a file system path.

HEAD is refused like any other method but GET (405): the panel never sends it, and
one answer per method keeps the guard's and the handlers' work off requests that
would show nothing.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

import orjson
from starlette.convertors import Convertor, register_url_convertor
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route, Router
from starlette.types import Message, Receive, Scope, Send

from . import host, wire
from .htmx import is_htmx
from .ids import valid_item_id, valid_session_id
from .provider import TimelineProvider
from .security_headers import SecurityHeaders
from .static_files import StaticFiles

#: Longer query strings are refused before any parsing.
MAX_QUERY_BYTES = 4096
#: No request waits longer than this for the host, however many calls it makes (each
#: call is bounded too, by ``host.HOST_CALL_TIMEOUT_S``). Read at call time.
REQUEST_TIMEOUT_S = 30.0
#: How long before that limit a streamed page gives up building its board, so that it
#: still has the time to end with a message.
STREAM_MARGIN_S = 1.0

JSON_HEADERS = {"Cache-Control": "no-cache"}  # nosniff and the rest: SecurityHeaders

log = logging.getLogger("dsh_task_gantt")

Guard = Callable[[Request], Awaitable[Response | None]]
#: A handler of one team's data: the request and its (checked) session id.
TeamHandler = Callable[[Request, str], Awaitable[Response]]


class _WholeIdConvertor(Convertor[str]):
    """An id route takes everything after it, slashes included, so ``a/b`` (or
    ``a%2Fb``) is one malformed id (400), never a different path (404)."""

    # The path reaching the router is percent-encoded whole (see ``_route_path``), so
    # this cannot run into a query or a control character.
    regex = ".*"

    def convert(self, value: str) -> str:
        return unquote(value, errors="replace")

    def to_string(self, value: str) -> str:
        return quote(value, safe="")


class _SegmentConvertor(_WholeIdConvertor):
    """One path step, decoded."""

    regex = "[^/]*"


register_url_convertor("gantt_id", _WholeIdConvertor())
register_url_convertor("gantt_segment", _SegmentConvertor())


def json_error(status: int, reason: str, **extra: Any) -> Response:
    body = orjson.dumps({"error": reason, "status": status, **extra})
    return Response(body, status_code=status, media_type="application/json", headers=JSON_HEADERS)


def connection_guard(get_service: Callable[[str], Any]) -> Guard:
    """The host's ``connection.requestRejection`` as a guard; refuse when it is absent."""

    async def guard(request: Request) -> Response | None:
        try:
            connection: host.Connection | None = get_service(host.CONNECTION)
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


async def request_refusal(request: Request, guard: Guard) -> Response | None:
    """The checks that hold for every path: method, then guard, then query size (the
    standalone host's start page passes the same)."""
    if request.method != "GET":
        return Response(
            orjson.dumps({"error": "method not allowed", "status": 405}),
            status_code=405,
            media_type="application/json",
            headers={**JSON_HEADERS, "Allow": "GET"},
        )
    refusal = await guard(request)
    if refusal is not None:
        return refusal
    if len(request.scope.get("query_string", b"")) > MAX_QUERY_BYTES:
        return json_error(414, "query string too long")
    return None


def bad_session_id() -> Response:
    return json_error(400, "a session id must match ^[A-Za-z0-9._-]{1,128}$")


def team_route(path: str, handler: TeamHandler, *, name: str) -> Route:
    """A route to one team's data: ``session=`` and every id in the path are checked
    (400) before the handler runs."""

    async def endpoint(request: Request) -> Response:
        session_id = request.query_params.get("session")
        if session_id is None or not valid_session_id(session_id):
            return bad_session_id()
        if not all(valid_item_id(value) for value in request.path_params.values()):
            return json_error(400, "an id must match ^[A-Za-z0-9._:-]{1,128}$")
        return await handler(request, session_id)

    return Route(path, endpoint, name=name, methods=["GET"])


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
        # Only files that exist at start-up are served: no path ever comes from a request.
        self.static_files = StaticFiles(static_dir)
        self.panel = Panel(provider, self.prefix, self.static_files)
        self.router = Router(
            routes=[
                team_route("/api/timeline", self.api_timeline, name="timeline"),
                team_route("/api/tasks", self.api_tasks, name="tasks"),
                team_route("/api/messages/{message_id:gantt_id}", self.message, name="message"),
                team_route("/panel", self.panel_page, name="panel"),
                team_route("/panel/board", self.panel_board, name="board"),
                team_route("/panel/moment", self.panel_moment, name="moment"),
                team_route("/panel/items", self.panel_items, name="items"),
                team_route("/panel/tasks/{task_id:gantt_id}", self.panel_task, name="task"),
                Route("/static/{name:gantt_segment}", self.static, name="static"),
            ],
            redirect_slashes=False,
            default=self.not_found,
        )
        self.app = SecurityHeaders(self.dispatch, html_csp=PANEL_CSP)

    def url_path_for(self, name: str, /, **path_params: str) -> str:
        """The absolute path of a route by its name (the prefix included)."""
        return self.prefix + str(self.router.url_path_for(name, **path_params))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            await self.app(scope, receive, send)

    async def dispatch(self, scope: Scope, receive: Receive, send: Send) -> None:
        started = False

        async def tracking_send(message: Message) -> None:
            nonlocal started
            started = True
            await send(message)

        try:
            await asyncio.wait_for(self.handle(scope, receive, tracking_send), REQUEST_TIMEOUT_S)
            return
        except host.HostCallError as exc:  # a short reason without a path: say it
            response = json_error(503, str(exc))
        except TimeoutError:
            log.warning("dsh-task-gantt: the host did not answer within %g s", REQUEST_TIMEOUT_S)
            response = json_error(504, "the host did not answer in time")
        except Exception:
            log.exception("dsh-task-gantt: request failed")
            response = json_error(500, "internal error while building the answer")
        if started:  # half an answer is on the wire: nothing sensible can follow it
            return
        await response(scope, receive, send)

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        refusal = await self.refusal(Request(scope, receive))
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        path = self._route_path(scope)
        if path is None:
            await json_error(404, "not found")(scope, receive, send)
            return
        await self.router({**scope, "path": path, "root_path": ""}, receive, send)

    async def refusal(self, request: Request) -> Response | None:
        return await request_refusal(request, self.guard)

    def _route_path(self, scope: Scope) -> str | None:
        """The path after the prefix, split *before* percent-decoding, each step then
        decoded on its own and re-encoded whole: ``/api/messages/a%2Fb`` stays one
        (invalid) id rather than two path steps, and no decoded byte can make a
        literal route match."""
        raw = scope.get("raw_path")
        if isinstance(raw, bytes) and raw:
            path = raw.split(b"?", 1)[0].decode("latin-1")
        else:  # a host that gives no raw path: the decoded one is all there is
            path = scope.get("path", "")
        if path != self.prefix and not path.startswith(self.prefix + "/"):
            return None
        rest = path[len(self.prefix) :].removeprefix("/")
        steps = (quote(unquote(step, errors="replace"), safe="") for step in rest.split("/"))
        return "/" + "/".join(steps)

    async def not_found(self, scope: Scope, receive: Receive, send: Send) -> None:
        """No route: ``/panel/`` is ``/panel`` (one retry without the trailing slashes)."""
        trimmed = scope["path"].rstrip("/")
        if trimmed and trimmed != scope["path"]:
            await self.router({**scope, "path": trimmed}, receive, send)
            return
        await json_error(404, "not found")(scope, receive, send)

    # -- handlers: one per route -------------------------------------------------

    async def api_timeline(self, request: Request, session_id: str) -> Response:
        raw_since = request.query_params.get("since")
        since = wire.parse_since(raw_since) if raw_since is not None else None
        if raw_since is not None and since is None:
            return json_error(400, "since must be an ETag this route answered with")
        result = await self.provider.timeline(session_id)
        if result is None:
            return json_error(404, "no such session")

        def body() -> bytes:
            if since is None:
                return result.body
            if result.wire is not None:
                return result.wire.since(since)
            # A provider that keeps no parts: the full answer, saying so (one pass).
            lane_ids = wire.ids_of(result.data.get("lanes"))
            task_ids = wire.ids_of(result.data.get("tasks"))
            said = wire.delta(since, False, lane_ids, task_ids)
            return orjson.dumps({**result.data, "delta": said})

        return _json_with_etag(request, result.etag, body)

    async def api_tasks(self, request: Request, session_id: str) -> Response:
        """The team's tasks, each exactly as in the timeline JSON (the same build)."""
        result = await self.provider.timeline(session_id)
        if result is None:
            return json_error(404, "no such session")
        data: Mapping[str, Any] = result.data
        # Its own validator, derived from the timeline's: the body is a function of it.
        etag = '"' + result.etag.strip('"') + '-tasks"'

        def body() -> bytes:
            return orjson.dumps(
                {
                    "sessionId": data.get("sessionId"),
                    "rootSessionId": data.get("rootSessionId"),
                    "tasks": data.get("tasks", []),
                }
            )

        return _json_with_etag(request, etag, body)

    async def message(self, request: Request, session_id: str) -> Response:
        message_id = request.path_params["message_id"]
        if is_htmx(request):
            return await self.panel.message(request, session_id, message_id)
        detail = await self.provider.message(session_id, message_id)
        if detail is None:
            return json_error(404, "no such message in this team")
        return Response(orjson.dumps(detail), media_type="application/json", headers=JSON_HEADERS)

    async def panel_page(self, request: Request, session_id: str) -> Response:
        # A streamed page must end, with a message, before the request's own limit
        # cuts it off half-sent.
        deadline = asyncio.get_running_loop().time() + REQUEST_TIMEOUT_S - STREAM_MARGIN_S
        return await self.panel.page(request, session_id, deadline=deadline)

    async def panel_board(self, request: Request, session_id: str) -> Response:
        return await self.panel.board(request, session_id)

    async def panel_moment(self, request: Request, session_id: str) -> Response:
        return await self.panel.moment(request, session_id)

    async def panel_items(self, request: Request, session_id: str) -> Response:
        return await self.panel.items(request, session_id)

    async def panel_task(self, request: Request, session_id: str) -> Response:
        return await self.panel.task(request, session_id, request.path_params["task_id"])

    async def static(self, request: Request) -> Response:
        response = self.static_files.response(
            request.path_params["name"],
            request.headers.get("if-none-match"),
            request.query_params.get("v"),
        )
        return response if response is not None else json_error(404, "not found")


def _json_with_etag(request: Request, etag: str, body: Callable[[], bytes]) -> Response:
    """A JSON answer under a strong validator; 304 (no body built) when it matches."""
    headers = {**JSON_HEADERS, "ETag": etag}
    if _etag_matches(request.headers.get("if-none-match"), etag):
        return Response(status_code=304, headers=headers)
    return Response(body(), media_type="application/json", headers=headers)


def _etag_matches(header: str | None, etag: str) -> bool:
    if not header:
        return False
    candidates = [c.strip().removeprefix("W/") for c in header.split(",")]
    return "*" in candidates or etag in candidates
