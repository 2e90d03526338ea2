"""The list view's "Turns" switch in real Chromium at 400 px: pressed, the list shows each
turn with its member, length and tokens; a live poll then appends a new turn and the
switch stays on; a reload keeps it (it is in the URL, like ``list``)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.kit.boardteams import T0, FakeProvider, TeamBuilder, make_app
from tests.kit.browser import (
    CHROMIUM,
    ONE_POLL_MS,
    SIDEBAR,
    Server,
    Watched,
    browser,  # noqa: F401  (the module's browser fixture)
)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's /usr/bin/chromium is not installed"),
]

MIN = 60_000
NB = "\u00a0"
ITEM_TEXTS = "els => els.map(e => e.textContent.replace(/[ \\t\\n]+/g, ' ').trim())"


def _spent(read: int, out: int) -> dict[str, int]:
    return {
        "input": 40,
        "cacheRead": read,
        "cacheWrite": 0,
        "output": out,
        "reasoning": 0,
        "steps": 2,
        "stepsWithoutUsage": 0,
    }


def test_pressing_turns_lists_each_turns_tokens_and_a_poll_keeps_it_on(
    browser: Any,  # noqa: F811
) -> None:
    team = TeamBuilder(names=("lead", "ana", "bo"), live=True, now=T0 + 30 * MIN)
    team.turn("lead", T0, T0 + 45_000, _spent(1_200_000, 84_000))
    team.message("lead", "ana", T0 + 50_000, "Please parse the logs.", msg_id="m1")
    team.turn("ana", T0 + MIN, T0 + 3 * MIN)  # no usage in its log
    team.turn("bo", T0 + 4 * MIN, None, _spent(9_000, 700))
    provider = FakeProvider(team)
    page = Watched(browser, SIDEBAR)
    try:
        with Server(make_app(provider)) as server:
            tab = page.page
            tab.goto(server.url("session=s-lead&list=1"))
            toggle = tab.locator("#turns-toggle")
            toggle.wait_for()
            assert toggle.get_attribute("aria-pressed") == "false"
            assert tab.locator(".list .item").count() == 1  # the message alone
            toggle.click()
            tab.locator(".list .item-turn").first.wait_for()
            assert tab.locator("#turns-toggle").get_attribute("aria-pressed") == "true"
            assert "turns=1" in tab.url
            # The list was drawn anew around the switch: the focus is still on it.
            assert tab.evaluate("document.activeElement.id") == "turns-toggle"
            first = tab.locator(".list .item-turn").first
            figure = f"1.2M{NB}in · 84k{NB}out · 99{NB}%{NB}cached"
            assert first.locator(".tokens").inner_text() == figure
            assert first.locator(".who").inner_text() == "lead"
            # Seen whole at 400 px: inside the window, nothing cut.
            box = first.locator(".tokens").bounding_box()
            assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 400
            assert first.locator(".tokens").is_visible()
            texts = tab.locator(".list .item").evaluate_all(ITEM_TEXTS)
            assert [t.split(" ", 1)[1] for t in texts[1:]] == [
                "lead → ana: Please parse the logs.",
                "ana turn · 2 min",  # nothing said of tokens, not "0"
                f"bo turn · still going · 9k{NB}in · 700{NB}out · 99{NB}%{NB}cached",
            ]
            # A turn ends on another lane: the next poll appends it, the switch stays on.
            team.turn("ana", T0 + 20 * MIN, T0 + 21 * MIN, _spent(50_000, 2_000))
            with tab.expect_response(
                lambda r: "/panel/board" in r.url and r.status == 200, timeout=2 * ONE_POLL_MS
            ) as answer:
                pass
            assert answer.value.headers.get("x-board-delta") == "1"  # not the whole board
            assert "turns=1" in answer.value.url
            newest = tab.locator(".list .item-turn").last
            newest.locator(".tokens").wait_for()
            assert (
                newest.locator(".tokens").inner_text()
                == f"50k{NB}in · 2k{NB}out · 99{NB}%{NB}cached"
            )
            assert tab.locator("#turns-toggle").get_attribute("aria-pressed") == "true"
            after_poll = tab.locator(".list .item").evaluate_all(ITEM_TEXTS)
            assert len(after_poll) == 5
            # What the poll left is what a fresh load (the URL kept the switch) draws.
            tab.reload()
            tab.locator(".list .item-turn").first.wait_for()
            assert tab.locator("#turns-toggle").get_attribute("aria-pressed") == "true"
            assert tab.locator(".list .item").evaluate_all(ITEM_TEXTS) == after_poll
            # Off again: the list is as it was.
            tab.locator("#turns-toggle").click()
            tab.wait_for_function("() => !document.querySelector('.list .item-turn')")
            assert tab.locator(".list .item").count() == 1 and "turns=1" not in tab.url
        assert page.errors == []
    finally:
        page.close()
