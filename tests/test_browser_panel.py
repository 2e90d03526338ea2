"""The panel in real Chromium against a real uvicorn server on 127.0.0.1.

Served from the hand-made team of ``test_panel`` through a fake provider whose
timeline the test changes between polls, and (when it is there) from the embedded
host over the committed fixtures.
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

from tests.test_panel import PREFIX, T0, FakeProvider, TeamBuilder, demo_team, make_app

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]  # fmt: skip
VIEWPORTS = [{"width": 400, "height": 900}, {"width": 1280, "height": 800}]

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's /usr/bin/chromium is not installed"),
]

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


@pytest.fixture(params=VIEWPORTS, ids=lambda v: f"{v['width']}x{v['height']}")
def watched(request: pytest.FixtureRequest, browser: Any) -> Iterator[Watched]:
    page = Watched(browser, request.param)
    yield page
    page.close()


def _msg_id(team: TeamBuilder, sender: str, target: str) -> str:
    return next(
        m["id"]
        for m in team.messages.values()
        if m["from"]["name"] == sender and m["to"]["name"] == target
    )


# ---------------------------------------------------------------------------


def test_lanes_and_marks_are_drawn_and_clicking_opens_the_message(watched: Watched) -> None:
    team = demo_team(live=False)
    msg = _msg_id(team, "verify", "host-data")
    with Server(make_app(FakeProvider(team))) as server:
        page = watched.page
        page.goto(server.url())
        assert page.locator(".lane").count() == len(team.names)
        assert page.locator(".lane .chip").first.inner_text() == "lead"
        sent = page.locator(f'.mark.sent[data-msg="{msg}"]')
        received = page.locator(f'.mark.received[data-msg="{msg}"]')
        assert sent.is_visible() and received.is_visible()
        assert sent.get_attribute("aria-label", timeout=1000).startswith(
            "message from verify to host-data at "
        )
        # the two copies sit on their own lanes
        assert (
            sent.locator("xpath=ancestor::div[contains(@class,'lane')]").get_attribute("data-lane")
            == "verify"
        )
        assert (
            received.locator("xpath=ancestor::div[contains(@class,'lane')]").get_attribute(
                "data-lane"
            )
            == "host-data"
        )
        sent.click()
        detail = page.locator("#detail")
        detail.locator(".message-card").wait_for()
        assert "The reader drops the torn tail." in detail.inner_text()
        assert detail.locator(".who").first.inner_text() == "verify"
        assert f"msg={msg}" in page.url
        page.keyboard.press("Escape")
        assert detail.is_hidden()
        assert "msg=" not in page.url
    assert watched.errors == []


def test_enter_on_a_focused_mark_opens_it_and_a_shared_link_reopens_it(watched: Watched) -> None:
    team = demo_team(live=False)
    msg = _msg_id(team, "host-data", "verify")
    with Server(make_app(FakeProvider(team))) as server:
        page = watched.page
        page.goto(server.url())
        page.locator(f'.mark.received[data-msg="{msg}"]').focus()
        page.keyboard.press("Enter")
        page.locator("#detail .message-card").wait_for()
        assert "Fixed in a1b2c3, please re-run." in page.locator("#detail").inner_text()
        shared = page.url
        other = watched.context.new_page()
        other.goto(shared)
        assert "Fixed in a1b2c3" in other.locator("#detail").inner_text()
        assert other.locator(f'.mark[data-msg="{msg}"][aria-current="true"]').count() == 2
    assert watched.errors == []


def test_a_message_containing_script_does_not_run(watched: Watched) -> None:
    team = TeamBuilder(names=("lead", "<script>window.__named=1</script>"), live=False)
    evil_name = team.names[1]
    team.turn("lead", T0, T0 + 60_000)
    msg = team.message(
        "lead",
        evil_name,
        T0 + 5_000,
        "<script>window.__pwned = 1; alert('x')</script>\n<img src=x onerror=\"alert('y')\">",
    )
    with Server(make_app(FakeProvider(team))) as server:
        page = watched.page
        page.goto(server.url())
        page.locator(f'.mark.sent[data-msg="{msg}"]').click()
        page.locator("#detail .message-card").wait_for()
        body = page.locator("#detail .body").inner_text()
        assert "<script>window.__pwned = 1;" in body  # shown as text
        assert page.evaluate("window.__pwned === undefined && window.__named === undefined")
        assert page.locator("#detail img, #detail script").count() == 0
        page.wait_for_timeout(300)
    assert watched.dialogs == []
    assert watched.errors == []


def test_live_board_shows_a_new_message_within_one_poll_and_keeps_the_view(
    watched: Watched,
) -> None:
    team = demo_team(live=True)
    provider = FakeProvider(team)
    opened = _msg_id(team, "verify", "host-data")
    with Server(make_app(provider)) as server:
        page = watched.page
        page.goto(server.url())
        page.locator(f'.mark.sent[data-msg="{opened}"]').click()
        page.locator("#detail .message-card").wait_for()
        page.keyboard.press("+")
        page.keyboard.press("+")
        page.wait_for_function("scroller.scrollWidth > 3 * scroller.clientWidth")
        page.evaluate("document.getElementById('scroller').scrollLeft = 200")
        page.wait_for_timeout(400)  # the scroll settles into the URL
        url_before = page.url
        zoom_before = page.evaluate("getComputedStyle(board).getPropertyValue('--zoom')")
        page.evaluate(  # focus without scrolling it into view: the scroll is under test
            "id => document.querySelector(`.mark.received[data-msg='${id}']`)"
            ".focus({preventScroll: true})",
            opened,
        )
        team.now += 5_000
        team.message("docs", "perf", team.now - 1_000, "hot off the press", msg_id="fresh-1")
        page.locator('.mark[data-msg="fresh-1"]').first.wait_for(state="attached", timeout=4_500)
        assert page.locator('.mark[data-msg="fresh-1"]').count() == 2
        assert "The reader drops the torn tail." in page.locator("#detail").inner_text()
        assert page.evaluate("document.getElementById('scroller').scrollLeft") == pytest.approx(
            200, abs=3
        )
        # the same time window: the zoom factor only grows with the live extent (5 s here)
        zoom_after = page.evaluate("getComputedStyle(board).getPropertyValue('--zoom')")
        assert float(zoom_after) == pytest.approx(float(zoom_before), rel=0.01)
        assert float(zoom_after) > 3
        assert page.url == url_before
        focused = page.evaluate("document.activeElement && document.activeElement.dataset.msg")
        assert focused == opened
    assert watched.errors == []


def test_unchanged_polls_swap_nothing_and_a_frozen_team_stops_polling(watched: Watched) -> None:
    team = demo_team(live=True)
    provider = FakeProvider(team)
    with Server(make_app(provider)) as server:
        page = watched.page
        page.goto(server.url())
        page.evaluate(
            "window.__swaps = 0; document.body.addEventListener('htmx:afterSwap',"
            " function (e) { if (e.detail.target.id === 'board') window.__swaps++; })"
        )
        calls = provider.timeline_calls
        page.wait_for_timeout(4_500)  # two polls, nothing changed
        assert page.evaluate("window.__swaps") == 0
        assert provider.timeline_calls == calls
        assert sum("/panel/board" in url for url in watched.requests) >= 2
        team.live = False
        page.locator(".pill.frozen").wait_for(timeout=4_500)
        assert page.locator(".now").count() == 0
        polls = sum("/panel/board" in url for url in watched.requests)
        page.wait_for_timeout(4_500)
        assert sum("/panel/board" in url for url in watched.requests) == polls
    assert watched.errors == []


def test_a_frozen_panel_makes_no_requests_after_loading(watched: Watched) -> None:
    with Server(make_app(FakeProvider(demo_team(live=False)))) as server:
        page = watched.page
        page.goto(server.url())
        page.wait_for_load_state("networkidle")
        page.wait_for_timeout(500)  # the width-fit refresh, if any, is done by now
        loaded = len(watched.requests)
        page.wait_for_timeout(4_500)
        assert len(watched.requests) == loaded
        assert page.locator("#board").get_attribute("hx-trigger") is None
        assert "frozen at" in page.locator("#status").inner_text()
    assert watched.errors == []


def test_zoom_buttons_fit_and_list_view(watched: Watched) -> None:
    team = demo_team(live=False)
    with Server(make_app(FakeProvider(team))) as server:
        page = watched.page
        page.goto(server.url())
        page.locator("#zoom-in").click()
        page.wait_for_function("new URL(location.href).searchParams.has('from')")
        width_zoomed = page.evaluate("document.getElementById('board').scrollWidth")
        page.locator("#fit").click()
        page.wait_for_function("!new URL(location.href).searchParams.has('from')")
        assert page.evaluate("document.getElementById('board').scrollWidth") < width_zoomed
        page.locator("#list-toggle").click()
        assert page.locator(".chart").is_hidden()
        items = page.locator(".list .item")
        assert items.count() >= len(team.messages)
        page.locator(".list .item-open").first.focus()
        page.keyboard.press("Enter")
        page.locator("#detail .message-card").wait_for()
        assert "list=1" in page.url
    assert watched.errors == []


# ---------------------------------------------------------------------------
# the real stack: the embedded host over the committed fixtures and the live demo

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "sessions"


def _embedded() -> Any:
    return pytest.importorskip("dsh_task_gantt.embedded", reason="the embedded host is missing")


@pytest.mark.skipif(not FIXTURES.is_dir(), reason="fixtures/sessions is generated by fixturegen")
def test_embedded_host_draws_a_fixture_team_and_opens_its_messages(watched: Watched) -> None:
    embedded = _embedded()
    with Server(embedded.EmbeddedHost(FIXTURES)) as server:
        page = watched.page
        # the start page links to each team; take the one with the most members (the
        # start page is the host's, not the panel's: it is not under watch)
        start = watched.context.new_page()
        start.goto(f"http://127.0.0.1:{server.port}/")
        links = start.locator(f'a[href*="{PREFIX}/panel?session="]')
        sizes = [links.nth(n).locator(".chip").count() for n in range(links.count())]
        href = links.nth(sizes.index(max(sizes))).get_attribute("href")
        start.close()
        page.goto(f"http://127.0.0.1:{server.port}{href}")
        page.locator("#board").wait_for()
        assert page.locator(".lane").count() == max(sizes) + 1  # and "unassigned"
        assert page.locator(".lane .chip").first.inner_text() == "lead"
        sent = page.locator(".mark.sent").first
        msg = sent.get_attribute("data-msg")
        assert page.locator(f'.mark.received[data-msg="{msg}"]').count() == 1
        sent.click()
        page.locator("#detail .message-card").wait_for()
        assert page.locator("#detail .body").inner_text().strip()
        page.keyboard.press("Escape")
        page.locator(".mark.received").first.focus()
        page.keyboard.press("Enter")
        page.locator("#detail .message-card").wait_for()
        if page.locator("#board").get_attribute("hx-trigger") is None:
            loaded = len(watched.requests)
            page.wait_for_timeout(2_500)
            assert len(watched.requests) == loaded  # frozen: no polling
    assert watched.errors == []


def test_embedded_demo_team_grows_within_a_poll_and_keeps_the_detail(watched: Watched) -> None:
    embedded = _embedded()
    demo = pytest.importorskip("dsh_task_gantt.demo", reason="the demo teams are missing")
    with demo.DemoTeams.start(interval=0.5) as teams:
        lead = teams.live_spec.lead_id
        with Server(embedded.EmbeddedHost(teams.root)) as server:
            page = watched.page
            page.goto(server.url(f"session={lead}"))
            assert page.locator("#board").get_attribute("hx-trigger") == "every 2s"
            page.locator(".mark.sent").first.click()
            page.locator("#detail .message-card").wait_for()
            detail = page.locator("#detail").inner_text()
            version = page.locator("#board-version").input_value()
            page.wait_for_function(
                "v => document.getElementById('board-version').value !== v",
                arg=version,
                timeout=6_000,
            )
            assert page.locator("#detail").inner_text() == detail
    assert watched.errors == []
