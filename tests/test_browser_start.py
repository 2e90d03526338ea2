"""The start page in real Chromium: a newcomer's first screen, over the live demo and
over a small generated root (teams in two workspaces, single sessions, one live team)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from dsh_task_gantt.demo import DemoTeams
from dsh_task_gantt.embedded import EmbeddedHost
from dsh_task_gantt.fixturegen import DEFAULT_START_MS, LiveTeam, TeamSpec, generate_team
from tests.kit.browser import CHROMIUM, SIDEBAR, WIDE, Server, Watched, browser
from tests.kit.start_root import API, HOUR_MS, StartRoot, start_root

__all__ = ["browser"]  # the module-scoped Chromium fixture, shared

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's /usr/bin/chromium is not installed"),
]

PENDING = "li.team[aria-busy='true']"
#: The page polls where its cards go every 5 s; a change shows within two polls.
POLLED_MS = 15_000
SHOWN_TEAMS = "section.workspace li.team:not([hidden])"
SHOWN_SINGLES = "#singles li.team:not([hidden])"


@pytest.fixture
def demo(tmp_path: Path) -> Iterator[DemoTeams]:
    teams = DemoTeams.prepare(tmp_path / "sessions", interval=0.5)
    teams.run_in_background()
    try:
        yield teams
    finally:
        teams.stop()


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> StartRoot:
    return start_root(tmp_path_factory.mktemp("start") / "sessions")


@contextmanager
def opened(browser: Any, root: Path, viewport: dict[str, int] = WIDE) -> Iterator[Watched]:
    """The start page over ``root`` in a fresh page, served by a real host; by the end
    no script error and no dialog."""
    page = Watched(browser, viewport)
    try:
        with Server(EmbeddedHost(root)) as server:
            page.page.goto(f"http://127.0.0.1:{server.port}/")
            yield page
        assert page.errors == [], page.errors
        assert page.dialogs == []
    finally:
        page.close()


@pytest.fixture
def start(browser: Any, made: StartRoot) -> Iterator[Watched]:
    with opened(browser, made.root) as page:
        yield page


def leads(page: Any, selector: str) -> list[str]:
    return [str(lead) for lead in page.locator(selector).evaluate_all(
        "cards => cards.map(c => c.dataset.lead)"
    )]  # fmt: skip


def wait_filled(page: Any, scope: str = "section.workspace") -> None:
    page.wait_for_function(f'() => !document.querySelector("{scope} {PENDING}")', timeout=15_000)


def matching(specs: tuple[TeamSpec, ...], word: str) -> list[str]:
    """The leads whose title, workspace or member names hold ``word``."""
    word = word.lower()
    return [
        spec.lead_id
        for spec in specs
        if any(
            word in text.lower()
            for text in (
                spec.human_prompts[0].text,
                spec.cwd,
                *(m.aliases[-1] for m in spec.members),
            )
        )
    ]


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
            page.page.wait_for_function(
                "() => document.querySelector('.team').getAttribute('aria-busy') === 'false'"
            )
            assert "live" in first.inner_text().lower()
            first.locator("a").first.click()
            page.page.wait_for_url("**/panel?session=*")
            assert demo.live_spec.lead_id in page.page.url
            page.page.locator("text=live").first.wait_for()
        assert page.errors == [], page.errors
        assert page.dialogs == []
    finally:
        page.close()


def test_cards_fill_in_and_teams_come_before_the_collapsed_single_sessions(
    start: Watched, made: StartRoot
) -> None:
    page = start.page
    order = leads(page, "li.team")
    assert order[:3] == leads(page, "section.workspace li.team")
    assert set(order[:3]) == {spec.lead_id for spec in made.teams}
    assert order[3:] == [spec.lead_id for spec in made.singles]
    assert page.locator("#singles").evaluate("d => d.open") is False
    assert page.locator("#singles .count").inner_text() == "2"

    wait_filled(page)
    for spec in made.teams:
        card = page.locator(f"li.team[data-lead='{spec.lead_id}']")
        text = card.inner_text()
        assert spec.human_prompts[0].text[:20] in text and "Reading" not in text
        assert ("LIVE" in text) == spec.live and ("FROZEN" in text) == (not spec.live)
        for member in spec.members[1:]:
            assert member.aliases[-1] in text
    # The collapsed section's cards are fetched only once it is opened.
    asked = [url for url in start.requests if "/start/card" in url]
    assert not any(spec.lead_id in url for url in asked for spec in made.singles)
    page.locator("#singles > summary").click()
    wait_filled(page, "#singles")
    assert page.locator(PENDING).count() == 0
    assert (
        page.locator(f"li.team[data-lead='{made.singles[0].lead_id}'] .badge").inner_text()
        == "LIVE"
    )


def test_the_filter_matches_title_workspace_and_member_names(
    start: Watched, made: StartRoot
) -> None:
    page = start.page
    box = page.locator("#team-filter")
    member = next(m.aliases[-1] for m in made.teams[1].members[1:] if m.aliases[-1] != "lead")
    for word in ("billing-api", member, made.teams[1].human_prompts[0].text.split()[1]):
        box.fill(word)
        wait_filled(page, "main")
        assert sorted(leads(page, SHOWN_TEAMS)) == sorted(matching(made.teams, word)), word
        singles = matching(made.singles, word)
        assert page.locator("#singles .count").inner_text() == f"{len(singles)} of 2"
        assert sorted(leads(page, "#singles li.team:not([hidden])")) == sorted(singles)
    # Only the workspace with a match keeps its heading.
    box.fill("billing-api")
    assert page.locator("section.workspace:not([hidden]) h2").evaluate_all(
        "hs => hs.map(h => h.title)"
    ) == [API]
    box.fill("no team says zqxj")
    page.locator("#no-match").wait_for()
    assert page.locator(SHOWN_TEAMS).count() == 0
    box.press("Escape")
    assert box.input_value() == ""
    assert page.locator(SHOWN_TEAMS).count() == 3 and page.locator("#no-match").is_hidden()


def test_the_live_toggle_shows_only_live_teams(start: Watched, made: StartRoot) -> None:
    page = start.page
    page.locator("#live-only").check()
    wait_filled(page, "main")
    assert leads(page, SHOWN_TEAMS) == [spec.lead_id for spec in made.teams if spec.live]
    assert leads(page, SHOWN_SINGLES) == [spec.lead_id for spec in made.singles if spec.live]
    assert re.search(r"Showing 1 of 3 teams, 1 of 2 single sessions", page.locator(
        "#filter-status"
    ).inner_text())  # fmt: skip
    page.locator("#live-only").uncheck()
    assert page.locator(SHOWN_TEAMS).count() == 3


def test_the_page_is_usable_by_keyboard(start: Watched, made: StartRoot) -> None:
    page = start.page
    wait_filled(page)
    page.keyboard.press("/")
    assert page.evaluate("document.activeElement.id") == "team-filter"
    page.keyboard.type("billing")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "live-only"
    page.keyboard.press("Space")
    assert page.locator("#live-only").is_checked()
    wait_filled(page, "main")
    assert page.locator(SHOWN_TEAMS).count() == 0  # the billing team is frozen
    page.keyboard.press("Space")
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("ArrowDown")  # from the filter to the first card shown
    focused = page.evaluate("document.activeElement.closest('li.team').dataset.lead")
    assert focused == made.teams[1].lead_id
    page.keyboard.press("Enter")
    page.wait_for_url(f"**/panel?session={made.teams[1].lead_id}")


def test_an_empty_root_says_where_it_looked(browser: Any, tmp_path: Path) -> None:
    page = Watched(browser, SIDEBAR)
    try:
        with Server(EmbeddedHost(tmp_path)) as server:
            page.page.goto(f"http://127.0.0.1:{server.port}/")
            text = page.page.locator("main").inner_text()
            assert "No agent teams found" in text and str(tmp_path) in text
            assert "--sessions-root" in text
            assert page.page.locator("#team-filter").is_hidden()
        assert page.errors == [], page.errors
    finally:
        page.close()


def test_a_team_that_comes_alive_gets_its_live_badge_without_a_reload(
    browser: Any, tmp_path: Path
) -> None:
    fresh = start_root(tmp_path / "sessions")
    older = fresh.teams[2]
    card = f"li.team[data-lead='{older.lead_id}']"
    page = Watched(browser, WIDE)
    try:
        with Server(EmbeddedHost(fresh.root)) as server:
            page.page.goto(f"http://127.0.0.1:{server.port}/")
            wait_filled(page.page)
            assert page.page.locator(f"{card} .badge").inner_text() == "FROZEN"
            LiveTeam(fresh.root, older).tick(older.last_event_time + 60_000)
            page.page.locator(f"{card}[data-live='true'] .badge.live").wait_for(timeout=12_000)
            assert "active now" in page.page.locator(card).inner_text()
        assert page.errors == [], page.errors
    finally:
        page.close()


def at(hours: float) -> int:
    return DEFAULT_START_MS + int(hours * HOUR_MS)


def placed(page: Any) -> list[tuple[str, list[str]]]:
    """Each workspace shown, in page order, with its cards' leads in order."""
    return [
        (str(ws), [str(lead) for lead in leads])
        for ws, leads in page.evaluate(
            """() => Array.from(document.querySelectorAll("section.workspace:not([hidden])"))
                .map(s => [s.dataset.workspace,
                           Array.from(s.querySelectorAll("li.team")).map(c => c.dataset.lead)])"""
        )
    ]


def wait_placed(page: Any, expected: list[tuple[str, list[str]]]) -> None:
    """Until the workspaces and their cards stand in ``expected``'s order, all filled
    (the single sessions' collapsed section is not fetched until opened)."""
    page.wait_for_function(
        """expected => {
            const shown = Array.from(document.querySelectorAll("section.workspace:not([hidden])"))
                .map(s => [s.dataset.workspace,
                           Array.from(s.querySelectorAll("li.team")).map(c => c.dataset.lead)]);
            return JSON.stringify(shown) === JSON.stringify(expected)
                && !document.querySelector("section.workspace li.team[aria-busy='true']");
        }""",
        arg=[[ws, leads] for ws, leads in expected],
        timeout=POLLED_MS,
    )


def wait_singles(page: Any, expected: list[str]) -> None:
    """Until the single sessions' section holds exactly ``expected``, in that order."""
    page.wait_for_function(
        """expected => JSON.stringify(Array.from(document.querySelectorAll("#singles li.team"))
                .map(c => c.dataset.lead)) === JSON.stringify(expected)""",
        arg=expected,
        timeout=POLLED_MS,
    )


ATLAS = "/home/dev/atlas"
BOREALIS = "/home/dev/borealis"
CASCADE = "/home/dev/cascade"


def test_cards_move_when_a_team_goes_live_keeping_the_focus(browser: Any, tmp_path: Path) -> None:
    """Live teams first, then newest activity (the last event read, not a file's
    mtime); each workspace where its first team is."""
    root = tmp_path / "sessions"
    new = generate_team(root, seed=81, shape="pair", name="n", cwd=ATLAS, start_ms=at(6))
    old = generate_team(root, seed=82, shape="pair", name="o", cwd=ATLAS, start_ms=at(1))
    mid = generate_team(root, seed=83, shape="pair", name="m", cwd=BOREALIS, start_ms=at(3))
    with opened(browser, root) as watched:
        page = watched.page
        wait_filled(page)
        assert placed(page) == [(ATLAS, [new.lead_id, old.lead_id]), (BOREALIS, [mid.lead_id])]
        # The oldest team comes alive (its newest event still older than the others'):
        # live first, so it moves to the top of its workspace.
        LiveTeam(root, old).tick(old.last_event_time + 60_000)
        wait_placed(page, [(ATLAS, [old.lead_id, new.lead_id]), (BOREALIS, [mid.lead_id])])
        # Placed by the poll; the card's own summary (its badge) is fetched after it.
        live_card = page.locator(f"li.team[data-lead='{old.lead_id}'][data-live='true']")
        live_card.wait_for(timeout=POLLED_MS)
        assert live_card.locator(".badge").inner_text() == "LIVE"
        # The reader is on a card when another team comes alive later than all: its
        # workspace moves first, and the focus stays where it was.
        page.locator(f"li.team[data-lead='{new.lead_id}'] a").focus()
        latest = max(spec.last_event_time for spec in (new, old, mid))
        LiveTeam(root, mid).tick(latest + HOUR_MS)
        wait_placed(page, [(BOREALIS, [mid.lead_id]), (ATLAS, [old.lead_id, new.lead_id])])
        focused = page.evaluate("document.activeElement.closest('li.team').dataset.lead")
        assert focused == new.lead_id


def test_new_teams_and_single_sessions_appear_in_place_without_a_reload(
    browser: Any, tmp_path: Path
) -> None:
    root = tmp_path / "sessions"
    old = generate_team(root, seed=84, shape="pair", name="o", cwd=ATLAS, start_ms=at(1))
    solo = generate_team(root, seed=85, shape="lone", name="s", cwd=ATLAS, start_ms=at(0))
    with opened(browser, root) as watched:
        page = watched.page
        wait_filled(page)
        page.evaluate("window.notReloaded = true")
        assert placed(page) == [(ATLAS, [old.lead_id])]
        assert page.locator("#singles .count").inner_text() == "1"

        fresh = generate_team(
            root, seed=86, shape="pair", name="f", cwd=CASCADE, start_ms=at(5), live=True
        )
        later = generate_team(root, seed=87, shape="lone", name="l", cwd=ATLAS, start_ms=at(4))
        # The live team, newest, in a workspace of its own: first, filled in.
        wait_placed(page, [(CASCADE, [fresh.lead_id]), (ATLAS, [old.lead_id])])
        text = page.locator(f"li.team[data-lead='{fresh.lead_id}']").inner_text()
        assert fresh.human_prompts[0].text[:20] in text and "LIVE" in text
        for member in fresh.members[1:]:
            assert member.aliases[-1] in text
        heading = page.locator(f"section.workspace[data-workspace='{CASCADE}'] h2")
        assert heading.inner_text().startswith("cascade")
        # The new single session joins its section, newest first, counted (the same
        # poll places it, but wait for it rather than assume the order of the updates).
        wait_singles(page, [later.lead_id, solo.lead_id])
        assert page.locator("#singles .count").inner_text() == "2"
        assert (
            page.locator("#summary")
            .inner_text()
            .startswith("2 teams in 2 workspaces · 2 single sessions")
        )
        # The filter applies to the newcomers too.
        page.locator("#team-filter").fill("cascade")
        assert leads(page, SHOWN_TEAMS) == [fresh.lead_id]
        assert page.evaluate("window.notReloaded") is True


def test_an_empty_root_shows_the_first_team_when_it_appears(browser: Any, tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    root.mkdir()
    with opened(browser, root, SIDEBAR) as watched:
        page = watched.page
        page.locator("text=No agent teams found").wait_for()
        team = generate_team(root, seed=88, shape="pair", name="t", cwd=ATLAS, start_ms=at(2))
        wait_placed(page, [(ATLAS, [team.lead_id])])
        assert page.locator("#empty").is_hidden()
        assert page.locator("#team-filter").is_visible()
        assert page.locator("#singles").is_hidden()


#: Holds each poll's request 6 s (longer than the page's 5 s between polls) and counts
#: the polls in flight at once.
SLOW_POLLS = """
(() => {
  const realFetch = window.fetch.bind(window);
  window.polls = { inFlight: 0, peak: 0, done: 0 };
  window.fetch = async (url, options) => {
    if (!String(url).includes("/start/live")) return realFetch(url, options);
    window.polls.inFlight += 1;
    window.polls.peak = Math.max(window.polls.peak, window.polls.inFlight);
    try {
      await new Promise((resolve) => setTimeout(resolve, 6000));
      return await realFetch(url, options);
    } finally {
      window.polls.inFlight -= 1;
      window.polls.done += 1;
    }
  };
})();
"""


def test_a_slow_poll_is_never_overlapped_by_the_next(browser: Any, made: StartRoot) -> None:
    """Answers that overlap can arrive out of order and move cards back: the next poll
    starts only after the last one ended."""
    watched = Watched(browser, WIDE)
    try:
        page = watched.page
        page.clock.install()
        page.add_init_script(SLOW_POLLS)
        with Server(EmbeddedHost(made.root)) as server:
            page.goto(f"http://127.0.0.1:{server.port}/")
            for polls in (1, 2):
                page.clock.run_for(20_000)  # four intervals of 5 s, each poll held 6 s
                page.wait_for_function(f"() => window.polls.done >= {polls}", timeout=15_000)
            assert page.evaluate("window.polls.peak") == 1
        assert watched.errors == [], watched.errors
    finally:
        watched.close()
