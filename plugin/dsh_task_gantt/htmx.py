"""Small named helpers for htmx requests and answers (in the style of django-htmx)."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse

#: htmx stops a polling trigger when a response has this status (htmx 2.x).
HTMX_STOP_POLLING = 286


def is_htmx(request: Request) -> bool:
    """Whether htmx sent the request (it adds ``HX-Request: true`` to every one)."""
    return request.headers.get("HX-Request") == "true"


class StopPolling(HTMLResponse):
    """An HTML answer that also tells htmx to stop polling (status 286)."""

    def __init__(self, content: Any = None, **kwargs: Any) -> None:
        kwargs.pop("status_code", None)
        super().__init__(content, status_code=HTMX_STOP_POLLING, **kwargs)
