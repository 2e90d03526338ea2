"""The standalone host: the host services over a sessions root, without DSH.

It implements ``webServer`` (exact and prefix routes, longest prefix wins),
``sessionPersistence`` (the log reader), and a ``connection`` guard that lets in
only loopback clients addressing a loopback host name (a foreign ``Host`` header
is DNS rebinding), or, when bound elsewhere, requests carrying the access token,
or, behind the DSH package's proxy, requests carrying that proxy's per-boot secret.
There is no ``agents`` and no ``agentTeams``: everything comes from the logs. The
plugin is mounted through the same ``apply(ctx)`` any host calls, and a start
page at ``/`` lists the teams it finds.

One concept per module:

- ``web_server``: the ``webServer`` service (a route table of exact and prefix routes)
- ``guard``: the ``connection`` service (loopback, access token, proxy secret)
- ``teams``: the start page's view model (one card per team, grouped by workspace)
- ``start_page``: the start page's handler (checks, token landing, rendering)
- ``app``: the ASGI app that puts them together, and its lifespan
"""

from .app import EmbeddedContext, EmbeddedHost, default_sessions_root
from .guard import (
    LOOPBACK_NAMES,
    PROXY_HEADER,
    PROXY_SECRET_ENV,
    PROXY_SECRET_MIN_CHARS,
    TOKEN_COOKIE,
    TOKEN_ENV,
    LoopbackConnection,
    is_loopback_host,
    is_loopback_host_header,
)
from .web_server import EmbeddedWebServer

__all__ = [
    "LOOPBACK_NAMES",
    "PROXY_HEADER",
    "PROXY_SECRET_ENV",
    "PROXY_SECRET_MIN_CHARS",
    "TOKEN_COOKIE",
    "TOKEN_ENV",
    "EmbeddedContext",
    "EmbeddedHost",
    "EmbeddedWebServer",
    "LoopbackConnection",
    "default_sessions_root",
    "is_loopback_host",
    "is_loopback_host_header",
]
