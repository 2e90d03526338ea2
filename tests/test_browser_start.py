"""The start page in real Chromium: a newcomer's first screen, over the live demo."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dsh_task_gantt.demo import DemoTeams
from dsh_task_gantt.embedded import EmbeddedHost
from tests.kit.browser import CHROMIUM, SIDEBAR, Server, Watched, browser

__all__ = ["browser"]  # the module-scoped Chromium fixture, shared

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's /usr/bin/chromium is not installed"),
]


@pytest.fixture
def demo(tmp_path: Path) -> Iterator[DemoTeams]:
    teams = DemoTeams.prepare(tmp_path / "sessions", interval=0.5)
    teams.run_in_background()
    try:
        yield teams
    finally:
        teams.stop()


def test_start_page_shows_the_live_team_first_and_opens_its_panel(
    browser: Any, demo: DemoTeams
) -> None:
    page = Watched(browser, SIDEBAR)
    try:
        with Server(EmbeddedHost(demo.root)) as server:
            page.page.goto(f"http://127.0.0.1:{server.port}/")
            teams = page.page.locator(".team")
            assert teams.count() >= 2
            first = teams.first
            assert "live" in first.inner_text().lower()
            first.locator("a").first.click()
            page.page.wait_for_url("**/panel?session=*")
            assert demo.live_spec.lead_id in page.page.url
            page.page.locator("text=live").first.wait_for()
        assert page.errors == [], page.errors
        assert page.dialogs == []
    finally:
        page.close()
