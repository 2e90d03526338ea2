"""One ASGI middleware for the security headers of every answer, in both hosts.

Every answer gets ``X-Content-Type-Options: nosniff`` and ``Referrer-Policy:
no-referrer``; every HTML answer gets a Content-Security-Policy. A header the answer
already sets (the start page's own CSP) is kept: the middleware only fills gaps, so
wrapping an app twice (the plugin inside the standalone host) changes nothing.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send


class SecurityHeaders:
    def __init__(self, app: ASGIApp, *, html_csp: str) -> None:
        self.app = app
        self.html_csp = html_csp.encode("latin-1")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_hardened(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": self.harden(list(message.get("headers", [])))}
            await send(message)

        await self.app(scope, receive, send_hardened)

    def harden(self, headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
        names = {name.lower() for name, _ in headers}
        content_type = next((v for n, v in headers if n.lower() == b"content-type"), b"")
        wanted = [(b"x-content-type-options", b"nosniff"), (b"referrer-policy", b"no-referrer")]
        if content_type.startswith(b"text/html"):
            wanted.append((b"content-security-policy", self.html_csp))
        return headers + [(name, value) for name, value in wanted if name not in names]
