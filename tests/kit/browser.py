"""Real Chromium (Debian's, never downloaded) against a real uvicorn server on loopback.

``browser`` is a module-scoped fixture: a test module that imports it shares one
Chromium for its tests. A module importing this kit is skipped, saying why, when the
playwright package is missing.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.kit.chromium import CHROMIUM, CHROMIUM_ARGS, PREFIX, SIDEBAR, WIDE, Server

VIEWPORTS = [SIDEBAR, WIDE]
#: The panel polls every 2 s: a change shows within one poll plus the request.
ONE_POLL_MS = 3_500


sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is missing")

__all__ = [
    "CHROMIUM",
    "ONE_POLL_MS",
    "PREFIX",
    "SIDEBAR",
    "VIEWPORTS",
    "WIDE",
    "Server",
    "Watched",
    "browser",
    "watched",
    "watched_each",
]


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
