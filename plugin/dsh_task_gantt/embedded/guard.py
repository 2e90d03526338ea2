"""The standalone host's ``connection`` guard: who may read the logs through it.

Three modes, one per way the server is reached: behind the DSH package's proxy (the
proxy's per-boot secret in a header), bound beyond loopback (an access token, as a
cookie or once in the URL), or on loopback (a loopback client addressing a loopback
host name: a foreign ``Host`` header is DNS rebinding).
"""

from __future__ import annotations

import hmac
import ipaddress
from dataclasses import dataclass

from starlette.requests import Request

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


def is_loopback_host(bind: str) -> bool:
    if bind in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(bind.strip("[]")).is_loopback
    except ValueError:
        return False


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
class LoopbackConnection:
    """The ``connection`` service of the standalone host."""

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
