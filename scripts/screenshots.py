"""Screenshots of the panel on real data, for the README: ``python scripts/screenshots.py``.

Needs: the package installed (``pip install -e '.[test]'``: uvicorn and the playwright
Python package) and Debian's Chromium at ``/usr/bin/chromium`` (no browser download).
Takes about 15 s and writes PNGs into ``docs/screenshots/`` (``--out`` to change;
``--only live|fixtures|replay`` for one group).

Two embedded hosts on 127.0.0.1 (free ports), both reading real zstd logs:

- the live demo team (``DemoTeams``: the bundled team "invoices" regenerated to end
  now, in a temporary copy, with a background thread appending to it) for
  ``panel-sidebar.png`` — sidebar width, live, a message open — the README's picture —,
  ``panel-key.png`` (a full window, live, the key open: what each lane is doing now)
  and the demo's start page (``start-page.png``: the live team first, then the frozen
  ones by workspace, then the single sessions opened);
- the committed fixtures ``fixtures/sessions`` (frozen) for the full-window and list
  views of the "invoices" team (a lead and three teammates adding a CSV export; the list
  also with its turns on, ``panel-list-turns.png``), and the
  same team replayed at a past moment (``panel-replay.png``, ``panel-replay-wide.png``).

Every panel picture in light and dark (``-dark`` suffix). Chinese text needs a CJK font
(Debian: ``fonts-wqy-microhei`` or ``fonts-noto-cjk``), or the pictures show boxes.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from playwright.sync_api import Browser, Page, sync_playwright

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the browser facts the tests use: one source
from tests.kit.chromium import CHROMIUM, CHROMIUM_ARGS, PREFIX, SIDEBAR, WIDE, Server  # noqa: E402

__all__ = ["CHROMIUM", "CHROMIUM_ARGS", "PREFIX", "main"]


def _page(browser: Browser, viewport: dict[str, int], scheme: str, url: str) -> Page:
    page = browser.new_page(viewport=viewport, color_scheme=scheme)  # type: ignore[arg-type]
    page.set_default_timeout(10_000)
    page.goto(url)
    page.locator("#board .chart").wait_for(state="attached")
    page.wait_for_load_state("networkidle")
    return page


def _shoot(page: Page, path: Path) -> None:
    page.wait_for_timeout(150)  # the detail's swap settles
    page.screenshot(path=str(path))
    page.close()
    print(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)


def live_sidebar(browser: Browser, out: Path) -> None:
    from dsh_task_gantt.demo import DemoTeams
    from dsh_task_gantt.embedded import EmbeddedHost

    with DemoTeams.start(interval=1.0) as teams, Server(EmbeddedHost(teams.root)) as server:
        time.sleep(2.5)  # a couple of live ticks: fresh marks near the now-line
        url = server.url(f"session={teams.live_spec.lead_id}")
        for scheme, suffix in (("light", ""), ("dark", "-dark")):
            page = _page(browser, SIDEBAR, scheme, url)
            # the newest message between two teammates: what a user would click first
            page.locator(".lane:not([data-lane='lead']) .mark.sent").last.click()
            page.locator("#detail .message-card").wait_for()
            _shoot(page, out / f"panel-sidebar{suffix}.png")
            page = _page(browser, WIDE, scheme, url)
            page.locator("#key > summary").click()
            page.locator("#key .key-list").wait_for()
            _shoot(page, out / f"panel-key{suffix}.png")
        # the demo's start page, as `serve --demo` opens it: the live team first
        start_page(browser, out, f"http://127.0.0.1:{server.port}/")


def fixture_views(browser: Browser, out: Path) -> None:
    from dsh_task_gantt.embedded import EmbeddedHost
    from dsh_task_gantt.fixturegen import TeamSpec

    sessions = ROOT / "fixtures" / "sessions"
    team = TeamSpec.load(ROOT / "fixtures" / "specs" / "invoices.json", root=str(sessions))
    longest = max(team.messages, key=lambda m: len(m.text))
    with Server(EmbeddedHost(sessions)) as server:
        url = server.url(f"session={team.lead_id}")
        for scheme, suffix in (("light", ""), ("dark", "-dark")):
            page = _page(browser, WIDE, scheme, url)
            page.locator(".task-name").first.click()
            page.locator("#detail .task-card").wait_for()
            _shoot(page, out / f"panel-wide{suffix}.png")
            page = _page(browser, WIDE, scheme, f"{url}&msg={longest.id}")
            _shoot(page, out / f"panel-wide-message{suffix}.png")
            page = _page(browser, SIDEBAR, scheme, f"{url}&list=1")
            _shoot(page, out / f"panel-list{suffix}.png")
        # the list with its turns on: each turn's member, length and tokens
        page = _page(browser, SIDEBAR, "light", f"{url}&list=1&turns=1")
        page.locator("#list .item-turn .tokens").first.wait_for()
        _shoot(page, out / "panel-list-turns.png")


def replayed_moment(browser: Browser, out: Path) -> None:
    """The "invoices" team replayed at the moment its second task was claimed: the
    rows and lanes as they stood then, what followed dimmed (``panel-replay.png``)."""
    from dsh_task_gantt.embedded import EmbeddedHost
    from dsh_task_gantt.fixturegen import TeamSpec

    sessions = ROOT / "fixtures" / "sessions"
    team = TeamSpec.load(ROOT / "fixtures" / "specs" / "invoices.json", root=str(sessions))
    claims = sorted(
        r.time for t in team.tasks for r in t.revisions if r.expected_action == "claimed"
    )
    at = claims[min(1, len(claims) - 1)] + 1_000
    with Server(EmbeddedHost(sessions)) as server:
        url = server.url(f"session={team.lead_id}&at={at}")
        for scheme, suffix in (("light", ""), ("dark", "-dark")):
            page = _page(browser, SIDEBAR, scheme, url)
            page.locator("#moment-data").wait_for(state="attached")
            _shoot(page, out / f"panel-replay{suffix}.png")
        page = _page(browser, WIDE, "light", url)
        page.locator("#moment-data").wait_for(state="attached")
        _shoot(page, out / "panel-replay-wide.png")


def start_page(browser: Browser, out: Path, url: str) -> None:
    """The start page: teams by workspace, then the single sessions (opened), filled."""
    page = browser.new_page(viewport={"width": 1100, "height": 900})
    page.set_default_timeout(15_000)
    page.goto(url)
    page.locator("#singles > summary").click()
    page.mouse.wheel(0, 10_000)  # cards fill as they scroll into view
    page.wait_for_function("!document.querySelector(\"li[aria-busy='true']\")")
    page.mouse.wheel(0, -10_000)
    page.mouse.move(0, 0)  # no card under the pointer: none drawn hovered
    page.wait_for_timeout(200)
    page.screenshot(path=str(out / "start-page.png"), full_page=True)
    page.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    parser.add_argument(
        "--only", choices=("live", "fixtures", "replay"), help="one group of pictures"
    )
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    if not CHROMIUM.exists():
        sys.exit(f"needs Chromium at {CHROMIUM} (Debian: apt-get install chromium)")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            if args.only in (None, "live"):
                live_sidebar(browser, args.out)
            if args.only in (None, "fixtures"):
                fixture_views(browser, args.out)
            if args.only in (None, "replay"):
                replayed_moment(browser, args.out)
        finally:
            browser.close()


if __name__ == "__main__":
    main()
