"""Replay in real Chromium against a real uvicorn server on 127.0.0.1: the time cursor
set by a click, a drag and the keys, the rows and lanes at a known moment of the
committed fixture team (real zstd logs through the embedded host), the deep link, a live
poll while replaying, the list view, and Escape.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest
from playwright.sync_api import expect

from dsh_task_gantt.board.moment import event_times
from tests.kit import browser as browser_kit
from tests.kit import fixture_team
from tests.kit.boardteams import T0, FakeProvider, TeamBuilder, demo_team, make_app
from tests.kit.browser import CHROMIUM, ONE_POLL_MS, Server, Watched

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's /usr/bin/chromium is not installed"),
]

browser = browser_kit.browser
watched = browser_kit.watched
watched_each = browser_kit.watched_each

#: Shift with an arrow key moves the cursor by a minute.
MINUTE_MS = 60_000
#: In the demo team: "Log reader" was reopened by verify at 16 min and claimed at 17.
REOPENED_AT = T0 + 16 * MINUTE_MS + 30_000


def _at_in_url(page: Any) -> int | None:
    # From the page itself: Playwright's page.url follows replaceState a little later.
    values = parse_qs(urlparse(page.evaluate("location.href")).query).get("at")
    return int(values[0]) if values else None


def _extent(page: Any) -> tuple[int, int]:
    meta = page.locator("#board-meta")
    return int(meta.get_attribute("data-extent-start")), int(meta.get_attribute("data-extent-end"))


def _x_of(page: Any, ms: int) -> float:
    """The viewport x of a moment on the track (the extent and the track read in one go
    inside the page: a poll or the width fit's redraw swaps both)."""
    x: float = page.evaluate(
        """(ms) => {
          const m = document.getElementById('board-meta').dataset;
          const box = document.querySelector('#axis > .track').getBoundingClientRect();
          const [start, end] = [Number(m.extentStart), Number(m.extentEnd)];
          return box.x + (ms - start) / (end - start) * box.width;
        }""",
        ms,
    )
    return x


def _wait_drawn_at(page: Any, at: int | None) -> None:
    """Until the rows on screen are those of the moment ``at`` (None: the present)."""
    if at is None:
        page.wait_for_function(
            "() => !document.getElementById('moment-data')"
            " && !document.querySelector('.at-task, .at-msg, .state.at-turn, .state.at-idle')"
        )
    else:
        page.wait_for_function(
            "at => { const d = document.getElementById('moment-data');"
            " return d && Number(d.dataset.at) === at; }",
            arg=at,
        )


def _cursor_at(page: Any) -> int:
    return int(page.locator("#cursor").get_attribute("aria-valuenow"))


@contextmanager
def _moment_answered(page: Any) -> Iterator[None]:
    """Until the page is done with the answer to the moment the block asks for (shown,
    or dropped): the response, then htmx's end of that request in the page."""
    page.evaluate(
        "() => { window.momentHandled = new Promise(done => document.body.addEventListener("
        "'htmx:afterRequest', e => { const c = e.detail.requestConfig;"
        " if (c && c.path.includes('/panel/moment')) done(true); })); }"
    )
    with page.expect_response(lambda r: "/panel/moment" in r.url):
        yield
    page.evaluate("window.momentHandled")


def _moment_requests(watched: Watched) -> int:
    return sum("/panel/moment" in url for url in watched.requests)


# ---------------------------------------------------------------------------


def test_a_click_on_the_axis_sets_the_cursor_and_escape_clears_it(watched_each: Watched) -> None:
    watched = watched_each
    with Server(make_app(FakeProvider(demo_team(live=False)))) as server:
        page = watched.page
        page.goto(server.url())
        assert page.locator("#cursor").get_attribute("aria-valuetext") == "the present"
        assert page.locator("#moment").is_hidden()
        # (in the page: the axis is the board's, which the width fit redraws after load)
        axis_y = page.evaluate(
            "() => { const r = document.getElementById('axis').getBoundingClientRect();"
            " return r.y + r.height / 2; }"
        )
        page.mouse.click(_x_of(page, REOPENED_AT), axis_y)
        at = _at_in_url(page)
        assert at is not None and abs(at - REOPENED_AT) < 20_000  # within a few pixels
        _wait_drawn_at(page, at)
        # the slider says the moment, the summary line is shown, what follows is dimmed
        cursor = page.locator("#cursor")
        assert cursor.get_attribute("role") == "slider"
        assert int(cursor.get_attribute("aria-valuenow")) == at
        assert page.evaluate("document.activeElement.id") == "cursor"  # keys go on from here
        assert re.fullmatch(
            r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", cursor.get_attribute("aria-valuetext")
        )
        summary = page.locator("#moment .moment-summary")
        assert summary.inner_text() == "4 of 7 members in a turn · tasks: 2 pending, 1 in progress"
        assert page.locator("#moment").get_attribute("aria-live") == "polite"
        chart = page.locator("#chart")
        assert "replaying" in (chart.get_attribute("class") or "")
        start, _ = _extent(page)
        cursor_t = page.evaluate(
            "getComputedStyle(document.getElementById('chart')).getPropertyValue('--cursor-t')"
        )
        assert float(cursor_t) == pytest.approx((at - start) / 1000)
        # the veil starts at the cursor: a mark after it is under it, one before is not
        veil_left = page.evaluate(
            "(() => { const c = document.getElementById('chart');"
            " const veil = getComputedStyle(c, '::after');"
            " return c.getBoundingClientRect().left + parseFloat(veil.left); })()"
        )
        assert veil_left == pytest.approx(_x_of(page, at), abs=2)
        # the rows as of then, in words and not only in colour
        row = page.locator("#task-0")
        assert "status-pending" in (row.get_attribute("class") or "")
        assert row.locator(".at-task").inner_text().startswith("pending · r4 · reopened by verify")
        assert page.locator("#lane-1-name .state").inner_text().startswith("idle")
        page.keyboard.press("Escape")
        _wait_drawn_at(page, None)
        assert _at_in_url(page) is None
        assert page.locator("#moment").is_hidden()
        assert "replaying" not in (chart.get_attribute("class") or "")
        assert page.locator(".at-task").count() == 0
        assert "status-completed" in (page.locator("#task-0").get_attribute("class") or "")
        assert cursor.get_attribute("aria-valuetext") == "the present"
    assert watched.errors == []


def test_the_keys_step_between_events_by_a_minute_and_to_either_end(
    watched_each: Watched,
) -> None:
    watched = watched_each
    team = demo_team(live=False)
    times = event_times(team.timeline())
    at = T0 + 10 * MINUTE_MS + 1
    with Server(make_app(FakeProvider(team))) as server:
        page = watched.page
        page.goto(server.url(f"session=s-lead&at={at}"))
        _wait_drawn_at(page, at)
        page.locator("#cursor").focus()
        after = min(t for t in times if t > at)
        page.keyboard.press("ArrowRight")
        _wait_drawn_at(page, after)
        assert (_cursor_at(page), _at_in_url(page)) == (after, after)
        page.keyboard.press("ArrowRight")
        second = min(t for t in times if t > after)
        _wait_drawn_at(page, second)
        page.keyboard.press("ArrowLeft")
        page.keyboard.press("ArrowLeft")
        before = max(t for t in times if t <= at)
        _wait_drawn_at(page, before)
        assert _cursor_at(page) == before
        page.keyboard.press("Shift+ArrowRight")
        _wait_drawn_at(page, before + MINUTE_MS)
        start, end = _extent(page)
        page.keyboard.press("Home")
        _wait_drawn_at(page, start)
        assert page.locator(".at-task").all_inner_texts() == ["not created yet"] * 3
        with _moment_answered(page):
            page.keyboard.press("ArrowLeft")  # nothing before the first event: it stays
        assert int(page.locator("#moment-data").get_attribute("data-at")) == start
        assert _cursor_at(page) == start
        page.keyboard.press("End")
        _wait_drawn_at(page, end)
        assert page.locator("#task-0 .at-task").inner_text().startswith("completed · host-data")
        page.keyboard.press("Escape")
        _wait_drawn_at(page, None)
    assert watched.errors == []


def test_a_drag_moves_the_cursor_and_its_last_position_wins(watched_each: Watched) -> None:
    watched = watched_each
    with Server(make_app(FakeProvider(demo_team(live=False)))) as server:
        page = watched.page
        page.goto(server.url(f"session=s-lead&at={T0 + 5 * MINUTE_MS}"))
        _wait_drawn_at(page, T0 + 5 * MINUTE_MS)
        knob = page.locator("#cursor .cursor-knob").bounding_box()
        x, y = knob["x"] + knob["width"] / 2, knob["y"] + knob["height"] / 2
        target = _x_of(page, REOPENED_AT)
        before = _moment_requests(watched)
        page.mouse.move(x, y)
        page.mouse.down()
        moves = 40
        for n in range(1, moves + 1):
            page.mouse.move(x + (target - x) * n / moves, y)
            page.wait_for_timeout(10)
        page.mouse.up()
        at = _at_in_url(page)
        assert at is not None and abs(at - REOPENED_AT) < 20_000
        _wait_drawn_at(page, at)  # the rows are those of where the drag ended
        assert _cursor_at(page) == at
        sent = _moment_requests(watched) - before
        assert 1 <= sent < moves  # throttled: not one request per pointer move
        assert page.locator("#task-0 .at-task").inner_text().startswith("pending · r4")
    assert watched.errors == []


def test_the_cursor_survives_a_live_poll_and_now_returns_to_the_present(watched: Watched) -> None:
    team = demo_team(live=True)
    with Server(make_app(FakeProvider(team))) as server:
        page = watched.page
        page.goto(server.url(f"session=s-lead&at={REOPENED_AT}"))
        _wait_drawn_at(page, REOPENED_AT)
        team.now += 5_000
        team.message("docs", "perf", team.now - 1_000, "late news", msg_id="fresh-1")
        page.locator('.mark[data-msg="fresh-1"]').first.wait_for(
            state="attached", timeout=ONE_POLL_MS
        )
        # the moment stayed put: URL, slider, rows, summary
        assert _at_in_url(page) == REOPENED_AT
        assert _cursor_at(page) == REOPENED_AT
        _wait_drawn_at(page, REOPENED_AT)
        assert page.locator("#task-0 .at-task").inner_text().startswith("pending · r4")
        assert "replaying" in (page.locator("#chart").get_attribute("class") or "")
        page.locator("#follow").click()
        _wait_drawn_at(page, None)
        assert _at_in_url(page) is None
        assert page.locator("#follow").get_attribute("aria-pressed") == "true"
        assert page.locator(".at-task").count() == 0
    assert watched.errors == []


def test_the_moment_line_stays_in_local_time_across_a_poll(browser: Any) -> None:
    """The replay line is swapped out of band with each board: it keeps the viewer's
    time zone (here five and a half hours from UTC), as the slider does."""
    team = demo_team(live=True)
    context = browser.new_context(viewport=browser_kit.SIDEBAR, timezone_id="Asia/Kolkata")
    try:
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        with Server(make_app(FakeProvider(team))) as server:
            page.goto(server.url(f"session=s-lead&at={REOPENED_AT}"))
            _wait_drawn_at(page, REOPENED_AT)
            line_time = page.locator("#moment .moment-line time")
            slider_text = page.locator("#cursor").get_attribute("aria-valuetext")
            assert line_time.inner_text() == slider_text
            team.now += 5_000
            team.message("docs", "perf", team.now - 1_000, "late news", msg_id="fresh-1")
            page.locator('.mark[data-msg="fresh-1"]').first.wait_for(
                state="attached", timeout=ONE_POLL_MS
            )
            assert _cursor_at(page) == REOPENED_AT
            assert line_time.inner_text() == slider_text
        assert errors == []
    finally:
        context.close()


#: The board drawn for the view the user asked for (the form the next request sends)
#: and for the moment ``at``.
SHOWS_THE_ZOOMED_WINDOW_AT = (
    "at => { const m = document.getElementById('board-meta').dataset;"
    " const f = document.getElementById('view').elements;"
    " const d = document.getElementById('moment-data');"
    " return !!f.from.value && m.windowStart === f.from.value && m.windowEnd === f.to.value"
    " && !!d && Number(d.dataset.at) === at; }"
)


def test_a_late_moment_answer_does_not_undo_a_zoom(watched: Watched) -> None:
    """The moment is asked for, then the user zooms while the server is still on it: the
    zoom's board lands first, and the moment's late answer (built for the old window)
    must not put the old window back. It is dropped and the moment asked again."""
    app = make_app(FakeProvider(demo_team(live=False)))
    answer_moment = app.panel.moment

    async def slow_moment(request: Any, session_id: str) -> Any:
        await asyncio.sleep(1.0)
        return await answer_moment(request, session_id)

    app.panel.moment = slow_moment  # type: ignore[method-assign]
    times = event_times(demo_team(live=False).timeline())
    after = min(t for t in times if t > REOPENED_AT)
    page = watched.page
    with Server(app) as server:
        page.goto(server.url(f"session=s-lead&at={REOPENED_AT}"))
        _wait_drawn_at(page, REOPENED_AT)
        # counts the moment answers the page has finished with (swapped or not)
        page.evaluate(
            "document.body.addEventListener('htmx:afterRequest', e => {"
            " const c = e.detail.requestConfig;"
            " if (c && c.path.includes('/panel/moment'))"
            " window.momentsDone = (window.momentsDone || 0) + 1; })"
        )
        page.locator("#cursor").focus()
        with page.expect_request(lambda r: "/panel/moment" in r.url):
            page.keyboard.press("ArrowRight")  # the server takes a second over it
        for _ in range(4):
            page.keyboard.press("+")  # each zoom asks for a board at once
        # the moment's late answer is dropped and asked again: the chart settles on the
        # window the user zoomed to (never back to the whole extent), at the new moment
        page.wait_for_function(SHOWS_THE_ZOOMED_WINDOW_AT, arg=after, timeout=10_000)
        page.wait_for_function(
            "n => window.momentsDone >= n", arg=_moment_requests(watched), timeout=10_000
        )
        assert page.evaluate(SHOWS_THE_ZOOMED_WINDOW_AT, after)
        meta = page.locator("#board-meta")
        start, end = _extent(page)
        width = int(meta.get_attribute("data-window-end")) - int(
            meta.get_attribute("data-window-start")
        )
        assert width < (end - start) / 8  # zoomed in, four times
        assert meta.get_attribute("data-drawn-from")  # only part of the extent is drawn
        assert _cursor_at(page) == after
    assert watched.errors == []


def test_the_list_view_scrolls_to_the_moment(watched: Watched) -> None:
    team = TeamBuilder(names=("lead", "ui"), live=False)
    for n in range(120):
        team.message("lead", "ui", T0 + n * 10_000, f"note {n}", msg_id=f"m{n}")
    with Server(make_app(FakeProvider(team))) as server:
        page = watched.page
        page.goto(server.url(f"session=s-lead&list=1&at={T0 + 60 * 10_000 + 5}"))
        # A board may still be on its way (the page asks again for its real width): the
        # checks below retry until the page has settled, never read a row mid-swap.
        page.wait_for_load_state("networkidle")
        current = page.locator('#list .item[aria-current="time"]')
        expect(current).to_contain_text("note 60")
        expect(current).to_be_in_viewport()
        page.wait_for_function("() => window.scrollY > 0")
        after = page.locator("#list .item.after")
        assert after.count() > 0 and "note 61" in after.first.inner_text()
        # the chart, then the list again: it opens on the moment's page (not the newest)
        with _moment_answered(page):
            page.locator("#list-toggle").click()
        page.evaluate("window.scrollTo(0, 0)")
        with _moment_answered(page):
            page.locator("#list-toggle").click()
        page.wait_for_function(
            "() => { const c = document.querySelector('#list .item[aria-current=time]');"
            " return c && c.textContent.includes('note 60'); }"
        )
        assert page.evaluate("window.scrollY") > 0
    assert watched.errors == []


# ---------------------------------------------------------------------------
# the committed fixture team, through the embedded host reading its real logs


alpha = fixture_team.alpha
alpha_server = fixture_team.alpha_server


def _status_then(team: Any, task_id: str, at: int) -> str | None:
    """A task's status at ``at`` by the generator's record (``None``: not on the board)."""
    found = [t for t in team.tasks if t.id == task_id]
    done = [r for t in found for r in t.revisions if r.time <= at]
    return done[-1].status if done else None


def test_a_deep_link_shows_the_fixture_teams_rows_and_lanes_at_a_known_moment(
    watched_each: Watched, alpha_server: Server, alpha: Any
) -> None:
    watched = watched_each
    names = {m.id: m.aliases[-1] for m in alpha.members}
    (reopened,) = [
        (task, r) for task in alpha.tasks for r in task.revisions if r.expected_action == "reopened"
    ]
    at = reopened[1].time
    page = watched.page
    page.goto(alpha_server.url(f"session={alpha.lead_id}&at={at}"))
    _wait_drawn_at(page, at)
    assert _cursor_at(page) == at
    # every task row as the generator recorded it at that moment
    expected: list[str] = []
    for task in alpha.tasks:
        done = [r for r in task.revisions if r.time <= at]
        if not done:
            expected.append("not created yet")
            continue
        last = done[-1]
        owner = f" · {names[last.owner_id]}" if last.owner_id else ""
        status = last.status.replace("_", " ")
        if last.status == "pending":  # ready, or blocked by the blockers not done then
            open_ = [b for b in task.blocked_by if _status_then(alpha, b, at) != "completed"]
            status = f"blocked by {', '.join(open_)}" if open_ else "ready"
        expected.append(
            f"{status}{owner} · r{last.revision} · {last.expected_action} by {names[last.actor_id]}"
        )
    shown = [re.sub(r" \d\d:\d\d:\d\d$", "", t) for t in page.locator(".at-task").all_inner_texts()]
    assert shown == expected
    assert expected[int(reopened[0].id.split("-")[1]) - 1].startswith("ready · r4 · reopened")
    # the lead's lane: the last message it had sent by then, to whom
    sent = [
        m
        for m in alpha.messages
        if m.sender_id == alpha.lead_id and m.queued_time is not None and m.queued_time <= at
    ]
    last_sent = max(sent, key=lambda m: m.queued_time)
    assert (
        f"to {names[last_sent.target_id]}" in page.locator("#lane-0-name .at-msg.sent").inner_text()
    )
    # the summary counts the lanes in a turn as the lanes say it
    in_turn = page.locator(".state.at-turn").count()
    summary = page.locator("#moment .moment-summary").inner_text()
    assert summary.startswith(f"{in_turn} of ")
    assert watched.errors == []
