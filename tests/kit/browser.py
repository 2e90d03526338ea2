"""Real Chromium (Debian's, never downloaded) against a real uvicorn server on loopback.

``browser`` is a module-scoped fixture: a test module that imports it shares one
Chromium for its tests. A module importing this kit is skipped, saying why, when the
playwright package is missing.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn

#: Where the plugin's routes are mounted.
PREFIX = "/plugins/dsh-task-gantt"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]  # fmt: skip
SIDEBAR = {"width": 400, "height": 900}
WIDE = {"width": 1280, "height": 800}
VIEWPORTS = [SIDEBAR, WIDE]
#: The panel polls every 2 s: a change shows within one poll plus the request.
ONE_POLL_MS = 3_500


sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is missing")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Server:
    def __init__(self, app: Any) -> None:
        self.port = _free_port()
        self._server = uvicorn.Server(
            uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning")
        )
        self._thread = threading.Thread(target=self._server.run, daemon=True)

    def __enter__(self) -> Server:
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            assert time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.02)
        return self

    def __exit__(self, *_: object) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=5)

    def url(self, query: str = "session=s-lead") -> str:
        return f"http://127.0.0.1:{self.port}{PREFIX}/panel?{query}"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_api.sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


class Watched:
    """A page that records console errors, page errors, dialogs and requests."""

    def __init__(self, browser: Any, viewport: dict[str, int]) -> None:
        self.context = browser.new_context(viewport=viewport)
        self.context.set_default_timeout(5_000)
        self.page = self.context.new_page()
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        self.requests: list[str] = []
        self.page.on(
            "console", lambda msg: self.errors.append(msg.text) if msg.type == "error" else None
        )
        self.page.on("pageerror", lambda exc: self.errors.append(str(exc)))
        self.page.on("dialog", self._dialog)
        self.page.on("request", lambda req: self.requests.append(req.url))
        self.page.on(
            "response",
            lambda res: (
                self.errors.append(f"{res.status} {res.url}") if res.status >= 400 else None
            ),
        )

    def _dialog(self, dialog: Any) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def close(self) -> None:
        self.context.close()


@pytest.fixture
def watched(browser: Any) -> Iterator[Watched]:
    """A page at sidebar width (the panel's home)."""
    page = Watched(browser, SIDEBAR)
    yield page
    page.close()


@pytest.fixture(params=VIEWPORTS, ids=lambda v: f"{v['width']}x{v['height']}")
def watched_each(request: pytest.FixtureRequest, browser: Any) -> Iterator[Watched]:
    """A page at sidebar width, then at a full window (for layout-sensitive tests)."""
    page = Watched(browser, request.param)
    yield page
    page.close()
