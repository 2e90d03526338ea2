"""A cold first page is streamed: its head and a "reading" status arrive before the team's
logs are read, the board follows, and every status code is decided before the first byte.

The team is a real generated one (zstd logs in the sessions layout) behind the real
service; its persistence can hold every log read until a test releases it, so the test
sees what the browser has while the server is still reading.
"""

from __future__ import annotations

import asyncio
import http.client
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from dsh_task_gantt import host, web
from dsh_task_gantt.fixturegen import generate_team
from dsh_task_gantt.logs.persistence import DirectorySessionPersistence
from dsh_task_gantt.panel import PANEL_CSP
from dsh_task_gantt.resources import resource_path
from dsh_task_gantt.service import TimelineService
from dsh_task_gantt.web import GanttApp
from tests.kit.boardteams import allow_every_request
from tests.kit.chromium import CHROMIUM, CHROMIUM_ARGS, PREFIX, SIDEBAR, Server
from tests.kit.fakehost import FakeContext

READING = "Reading the team's logs…"
#: Long enough for any read here; a test that fails waits this long, not forever.
GATE_TIMEOUT_S = 20.0


class GatedPersistence(DirectorySessionPersistence):
    """The sessions folder as the host keeps it, whose log reads wait for ``gate``
    (a stat does not: it reads no log)."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.gate = threading.Event()
        self.reads_started = threading.Event()

    async def _wait(self) -> None:
        self.reads_started.set()
        await asyncio.to_thread(self.gate.wait, GATE_TIMEOUT_S)

    async def open(self, session_id: str, mode: str = "read") -> Any:
        await self._wait()
        return await super().open(session_id, mode)

    async def resume_lane(self, session_id: str) -> Any:
        await self._wait()
        return await super().resume_lane(session_id)


class FailingService(TimelineService):
    """A service whose build fails after the existence check (a bug, not a log)."""

    async def timeline(self, session_id: str) -> Any:
        raise RuntimeError("/home/someone/.dsh/sessions/secret.jsonl.zst: boom")


def _app(service: TimelineService) -> GanttApp:
    return GanttApp(service, allow_every_request, prefix=PREFIX, static_dir=resource_path("static"))


@pytest.fixture(scope="module")
def team_root(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    root = tmp_path_factory.mktemp("sessions")
    spec = generate_team(root, seed=3, scale="small")
    return root, spec.lead_id


@pytest.fixture
def gated(team_root: tuple[Path, str]) -> Iterator[tuple[GatedPersistence, TimelineService]]:
    persistence = GatedPersistence(team_root[0])
    service = TimelineService(FakeContext(**{host.SESSION_PERSISTENCE: persistence}).get)
    yield persistence, service
    persistence.gate.set()  # a failed test must not leave a read waiting


def _open(port: int, query: str) -> http.client.HTTPResponse:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=GATE_TIMEOUT_S)
    conn.request("GET", f"{PREFIX}/panel?{query}")
    return conn.getresponse()


def _normalised(html: str) -> str:
    """The page without what differs between two answers of one board: the time it was
    drawn, the token naming the answer, and the streamed page's placeholder line."""
    html = re.sub(r'id="board-drawn" name="drawn" value="\d+"', "drawn", html)
    html = re.sub(r'id="board-token" name="b" value="[^"]*"', "token", html)
    return html.replace('\n<div class="top reading" role="status">' + READING + "</div>", "")


def test_the_head_and_the_status_arrive_before_the_board_is_built(
    gated: tuple[GatedPersistence, TimelineService], team_root: tuple[Path, str]
) -> None:
    persistence, service = gated
    lead = team_root[1]
    with Server(_app(service)) as server:
        response = _open(server.port, f"session={lead}")
        assert response.status == 200
        assert response.getheader("Content-Length") is None
        assert response.getheader("Transfer-Encoding") == "chunked"
        # Headers a streamed page keeps: the same as any page's.
        assert response.getheader("Cache-Control") == "no-store"
        assert response.getheader("Content-Security-Policy") == PANEL_CSP
        assert response.getheader("X-Content-Type-Options") == "nosniff"
        head = b""
        while READING.encode() not in head:
            part = response.read1(65536)
            assert part, "the answer ended before the status"
            head += part
        # The logs cannot have been read (the gate is closed): the head came first, and
        # the server goes on to read them.
        assert not persistence.gate.is_set()
        assert persistence.reads_started.wait(GATE_TIMEOUT_S)
        text = head.decode()
        assert '<link rel="stylesheet"' in text and "defer></script>" in text
        assert 'role="status"' in text and 'id="board"' not in text
        persistence.gate.set()
        page = text + response.read().decode()
    assert page.index(READING) < page.index('<header class="top">') < page.index('id="board"')
    assert page.rstrip().endswith("</html>")
    assert 'class="lane' in page


def test_a_warm_team_is_answered_whole_with_the_same_page_as_the_streamed_one(
    gated: tuple[GatedPersistence, TimelineService], team_root: tuple[Path, str]
) -> None:
    persistence, service = gated
    persistence.gate.set()
    client = TestClient(_app(service))
    url = f"{PREFIX}/panel?session={team_root[1]}"
    cold = client.get(url)
    warm = client.get(url)
    assert READING in cold.text and "content-length" not in cold.headers
    assert READING not in warm.text and warm.headers["content-length"] == str(len(warm.content))
    for key in ("cache-control", "vary", "content-type", "content-security-policy"):
        assert cold.headers[key] == warm.headers[key], key
    assert _normalised(cold.text) == _normalised(warm.text)


def test_an_unknown_session_is_a_404_before_any_log_is_read(
    gated: tuple[GatedPersistence, TimelineService],
) -> None:
    persistence, service = gated
    response = TestClient(_app(service)).get(f"{PREFIX}/panel?session=nobody-here")
    assert response.status_code == 404
    assert response.headers["content-length"] == str(len(response.content))
    assert READING not in response.text
    assert not persistence.reads_started.is_set()


def test_a_malformed_moment_is_a_400_before_any_log_is_read(
    gated: tuple[GatedPersistence, TimelineService], team_root: tuple[Path, str]
) -> None:
    persistence, service = gated
    response = TestClient(_app(service)).get(f"{PREFIX}/panel?session={team_root[1]}&at=soon")
    assert response.status_code == 400
    assert not persistence.reads_started.is_set()


def test_a_build_that_fails_after_the_head_ends_the_page_with_a_message(
    team_root: tuple[Path, str],
) -> None:
    persistence = DirectorySessionPersistence(team_root[0])
    service = FailingService(FakeContext(**{host.SESSION_PERSISTENCE: persistence}).get)
    response = TestClient(_app(service)).get(f"{PREFIX}/panel?session={team_root[1]}")
    assert response.status_code == 200
    page = response.text
    assert READING in page
    assert 'role="alert"' in page and "The panel could not be drawn" in page
    assert "internal error" in page
    assert "Traceback" not in page and "secret" not in page and "/home/" not in page
    assert page.rstrip().endswith("</body>\n</html>")


def test_a_read_that_outlasts_the_request_ends_the_page_with_a_message(
    gated: tuple[GatedPersistence, TimelineService],
    team_root: tuple[Path, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _, service = gated
    monkeypatch.setattr(web, "REQUEST_TIMEOUT_S", 1.5)
    monkeypatch.setattr(web, "STREAM_MARGIN_S", 1.0)
    with Server(_app(service)) as server:
        response = _open(server.port, f"session={team_root[1]}")
        assert response.status == 200
        page = response.read().decode()
    assert READING in page
    assert "not read in time" in page and 'role="alert"' in page
    assert page.rstrip().endswith("</html>")


@pytest.mark.browser
@pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's /usr/bin/chromium is not installed")
def test_chromium_shows_the_status_while_reading_then_the_working_board(
    gated: tuple[GatedPersistence, TimelineService], team_root: tuple[Path, str]
) -> None:
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is missing")
    persistence, service = gated
    with Server(_app(service)) as server, sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport=SIDEBAR)
            page.set_default_timeout(10_000)
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.goto(server.url(f"session={team_root[1]}"), wait_until="commit")
            status = page.locator(".reading")
            status.wait_for(state="visible")
            assert status.get_attribute("role") == "status"
            assert status.inner_text() == "Reading the team's logs…"
            assert page.locator("#board").count() == 0
            persistence.gate.set()
            page.locator("#board .lane").first.wait_for()
            page.wait_for_load_state("load")
            assert status.is_hidden()
            mark = page.locator(".mark.sent").first
            mark.click()
            page.locator("#detail .message-card").wait_for()
            assert page.locator("#detail").is_visible()
            assert errors == []
        finally:
            browser.close()
