"""The plugin's contract with any host: its services as Protocols (docs/host-contract.md).

Every service is optional (``ctx.get(name)`` may return ``None``) and every call
into the host is untrusted: it may raise, hang or return the wrong shape. The
plugin therefore never calls these directly from request code but through
:func:`call_host`, which awaits when the host answers with an awaitable and puts a
time bound on it. Methods below are declared the way the host defines them; a
host may implement the I/O ones (``sessionPersistence``) as coroutines.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any, Literal, Protocol, TypedDict, TypeVar, runtime_checkable

from starlette.requests import Request
from starlette.types import ASGIApp

# Service names exactly as the host registers them.
WEB_SERVER = "webServer"
CONNECTION = "connection"
AGENTS = "agents"
SESSION_PERSISTENCE = "sessionPersistence"
AGENT_TEAMS = "agentTeams"

RouteKind = Literal["exact", "prefix"]

#: How long one call into a host service may take before the plugin gives up on it.
#: Read at call time (not bound as a default), so a host or a test may change it.
HOST_CALL_TIMEOUT_S = 5.0
#: The attribute a service may carry to say how long its own calls may take, when that
#: is longer (our own persistence: see ``call_timeout``).
CALL_TIMEOUT_ATTR = "call_timeout_s"


class Route(TypedDict):
    """What ``webServer.register`` takes: a plain mapping, as the host defines it."""

    kind: RouteKind
    path: str
    handler: ASGIApp


class WebServer(Protocol):
    """Registers an ASGI handler; registering the same kind+path twice raises."""

    def register(self, route: Route) -> Callable[[], None] | None: ...


class Connection(Protocol):
    """The host's guard: ``401``/``403`` to refuse a request, ``None`` to let it in.

    A host written in the host's own language spells it ``requestRejection``; the
    plugin looks up either name (:func:`service_method`)."""

    def request_rejection(self, request: Request) -> int | None: ...


class Session(Protocol):
    header: Mapping[str, Any]

    def snapshot_events(self) -> Sequence[Any]:
        """The in-memory log, newest included (deprecated upstream: optional)."""
        ...


class Agent(Protocol):
    id: str
    status: Literal["idle", "running"]
    options: Mapping[str, Any]
    session: Session


class Agents(Protocol):
    def get(self, agent_id: str) -> Agent | None: ...

    def list(self) -> Sequence[Agent]: ...


class ReadHandle(Protocol):
    id: str
    header: Mapping[str, Any]
    inherited_event_count: int | None

    def read(self, offset: int = 0, length: int | None = None) -> Any:
        """Events ``[offset, offset+length)``; a list or an awaitable of one."""
        ...

    def close(self) -> Any: ...


class SessionPersistence(Protocol):
    """Persisted session logs. ``stat().revision`` is opaque: equal means unchanged."""

    def open(self, session_id: str, mode: Literal["read"]) -> Any:
        """A :class:`ReadHandle` (or an awaitable of one); the caller must ``close()``."""
        ...

    def stat(self, session_id: str) -> Any:
        """``{header, revision, eventCount?, sizeBytes?}`` or ``None``; may be awaitable."""
        ...

    def list(self) -> Any:
        """Every persisted session as ``{id, header, revision, ...}``; may be awaitable."""
        ...


class AgentTeams(Protocol):
    """Team membership; every method takes the live Agent from ``agents.get``."""

    def try_membership(self, agent: Agent) -> Any: ...

    def list_members(self, agent: Agent) -> Any: ...

    def list_tasks(self, agent: Agent) -> Any: ...


@runtime_checkable
class PluginContext(Protocol):
    """What the host hands to ``apply(ctx)``. ``inject`` is optional on a host."""

    def get(self, name: str) -> Any: ...


class Logger(Protocol):
    def warning(self, msg: str, *args: Any) -> None: ...

    def info(self, msg: str, *args: Any) -> None: ...

    def error(self, msg: str, *args: Any) -> None: ...


T = TypeVar("T")


class HostCallError(Exception):
    """A host service raised, hung or answered with the wrong shape."""


async def call_host(
    fn: Callable[..., Any],
    *args: Any,
    timeout: float | None = None,
    what: str = "host call",
) -> Any:
    """Call a host service method; await its result if it is awaitable.

    Awaitables are bounded by ``timeout`` (default :data:`HOST_CALL_TIMEOUT_S`, read
    now). Synchronous methods run inline, on purpose: on a real host they are
    in-memory lookups on the host's own event loop, and its objects need not be
    thread-safe (``agentTeams`` even checks the identity of the live Agent). A
    synchronous call that blocks therefore cannot be bounded here: a worker thread
    would not stop it either, only hide it while it holds a thread. Hosts do their
    I/O (``sessionPersistence``) as coroutines; the embedded host does. Any failure
    becomes one :class:`HostCallError` with a short reason and no traceback text.
    """
    if timeout is None:
        timeout = HOST_CALL_TIMEOUT_S
    try:
        result = fn(*args)
        if inspect.isawaitable(result):
            result = await asyncio.wait_for(_as_coroutine(result), timeout)
    except HostCallError:
        raise
    except TimeoutError as exc:
        raise HostCallError(f"{what} did not answer within {timeout:g} s") from exc
    except Exception as exc:  # the host is untrusted: any failure is one reason
        raise HostCallError(f"{what} failed: {type(exc).__name__}") from exc
    return result


def call_timeout(service: object, default: float | None = None) -> float:
    """How long a call into ``service`` may take: ``default`` (else
    :data:`HOST_CALL_TIMEOUT_S`, read now), or the service's own ``call_timeout_s``
    when it says longer. A host's service answering late is hung or gone; our own
    persistence decodes local files in threads, one log at a time, and a slow answer
    there is work in progress (a day-long team's logs take seconds of CPU, more on a
    loaded machine): given up on after 5 s, every lane of such a team read as empty and
    the team as frozen."""
    base = HOST_CALL_TIMEOUT_S if default is None else default
    try:
        own = getattr(service, CALL_TIMEOUT_ATTR, None)
    except Exception:  # the host is untrusted: a property that raises says nothing
        return base
    if isinstance(own, int | float) and not isinstance(own, bool) and own > base:
        return float(own)
    return base


async def _as_coroutine(awaitable: Awaitable[T]) -> T:
    return await awaitable


def service_method(service: Any, *names: str) -> Callable[..., Any] | None:
    """The first callable attribute of ``service`` among ``names`` (snake or camel case)."""
    for name in names:
        candidate = getattr(service, name, None)
        if callable(candidate):
            return candidate  # type: ignore[no-any-return]
    return None


def iter_or_empty(value: Any) -> Iterable[Any]:
    """``value`` when it is a list or tuple, else nothing (wrong shapes from a host)."""
    return value if isinstance(value, list | tuple) else ()
