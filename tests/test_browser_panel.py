"""The panel in real Chromium against a real uvicorn server on 127.0.0.1.

Two sources: the hand-made team of ``tests.kit.boardteams`` behind a fake provider whose
timeline a test changes between polls (exact control over polls and provider calls),
and the real stack — the embedded host reading real zstd logs: the committed fixture
team "alpha" (checked against its generator's spec) and a live copy of it appended to
with ``LiveTeam.tick`` while the page is open. One browser per module; every wait is
bounded (5 s by default), so the file stays well under a minute.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.kit import browser as browser_kit
from tests.kit import fixture_team
from tests.kit.boardteams import T0, FakeProvider, TeamBuilder, demo_team, make_app
from tests.kit.browser import CHROMIUM, ONE_POLL_MS, Server, Watched

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's /usr/bin/chromium is not installed"),
]

# The kit's fixtures, used by this module: one Chromium for the module, a page at sidebar
# width, and a page at each viewport.
browser = browser_kit.browser
watched = browser_kit.watched
watched_each = browser_kit.watched_each


def _board_polls(watched: Watched) -> int:
    return sum("/panel/board" in url for url in watched.requests)


def _lane_of(mark: Any) -> str | None:
    lane = mark.locator("xpath=ancestor::div[contains(@class,'lane')]")
    return lane.get_attribute("data-lane")  # type: ignore[no-any-return]


#: The board's zoom and the time window it shows (ms): the extent over the zoom. Read in
#: one go inside the page, since a poll swaps the meta the extent is read from.
_SHOWN = """() => {
  const m = document.getElementById('board-meta').dataset;
  const zoom = Number(getComputedStyle(board).getPropertyValue('--zoom'));
  return {zoom, window: (Number(m.extentEnd) - Number(m.extentStart)) / zoom};
}"""


def _shown(page: Any) -> tuple[float, float]:
    """The board's zoom and the time window it shows. The zoom is the extent over the
    window, so it grows as a live extent grows (by a step of 1/64 to 1/32 of it when the
    live edge crosses one) while the window the user chose stays."""
    shown: dict[str, float] = page.evaluate(_SHOWN)
    return shown["zoom"], shown["window"]


def _msg_id(team: TeamBuilder, sender: str, target: str) -> str:
    return next(
        m["id"]
        for m in team.messages.values()
        if m["from"]["name"] == sender and m["to"]["name"] == target
    )


# ---------------------------------------------------------------------------


def test_lanes_and_marks_are_drawn_and_clicking_opens_the_message(watched_each: Watched) -> None:
    watched = watched_each
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
        # the two copies sit on their own lanes; pointing at one highlights the other
        assert (_lane_of(sent), _lane_of(received)) == ("verify", "host-data")
        assert "twin" not in (received.get_attribute("class") or "")
        sent.hover()
        assert "twin" in (received.get_attribute("class") or "")
        page.mouse.move(0, 0)
        assert "twin" not in (received.get_attribute("class") or "")
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
        mark = page.locator(f'.mark.received[data-msg="{msg}"]')
        mark.focus()
        page.keyboard.press(" ")
        page.locator("#detail .message-card").wait_for()
        page.keyboard.press("Escape")
        assert page.locator("#detail").is_hidden()
        assert page.evaluate("document.activeElement.dataset.msg") == msg  # focus came back
        page.keyboard.press("Enter")
        page.locator("#detail .message-card").wait_for()
        assert "Fixed in a1b2c3, please re-run." in page.locator("#detail").inner_text()
        shared = page.url
        other = watched.context.new_page()
        other.goto(shared)
        assert "Fixed in a1b2c3" in other.locator("#detail").inner_text()
        assert other.locator(f'.mark[data-msg="{msg}"][aria-current="true"]').count() == 2
    assert watched.errors == []


def test_marks_and_tasks_open_their_detail_by_their_ids_quoted_as_one_path_part(
    watched: Watched,
) -> None:
    # The board's marks and task names carry only their ids; the panel asks for the
    # detail itself, quoting a hostile id into one path part (the server then refuses it).
    team = TeamBuilder(names=("lead", "dev"), live=False)
    team.turn("lead", T0, T0 + 60_000)
    plain = team.message("lead", "dev", T0 + 5_000, "Plain words.")
    team.message("lead", "dev", T0 + 30_000, "Evil id.", msg_id='m-"><b>x/../y')
    team.task("t-1", "Write the reader", [(T0 + 1_000, "created", "pending", "lead")])
    team.task('t-"><b>x', "Evil task", [(T0 + 2_000, "created", "pending", "lead")])
    with Server(make_app(FakeProvider(team))) as server:
        page = watched.page
        page.goto(server.url())
        page.locator(f'.mark.sent[data-msg="{plain}"]').click()
        page.locator("#detail .message-card").wait_for()
        assert "Plain words." in page.locator("#detail .body").inner_text()
        page.locator('.task-name[data-task="t-1"]').click()
        page.locator("#detail .task-card").wait_for()
        assert "Write the reader" in page.locator("#detail").inner_text()
        evil_mark = '.mark.sent[data-msg="m-\\"><b>x/../y"]'
        evil_task = '.task-name[data-task="t-\\"><b>x"]'
        for opener in (evil_mark, evil_task):
            with page.expect_response(lambda r: r.status == 400):
                page.locator(opener).click()
        asked = [u for u in watched.requests if "/api/messages/" in u or "/panel/tasks/" in u]
        assert any("/api/messages/m-%22%3E%3Cb%3Ex%2F..%2Fy?session=" in u for u in asked)
        assert any("/panel/tasks/t-%22%3E%3Cb%3Ex?session=" in u for u in asked)
        assert page.locator("#board b, #detail b").count() == 0
    assert watched.dialogs == []


def test_a_panel_opened_again_asks_for_none_of_its_css_and_scripts(watched: Watched) -> None:
    # Its page names each file by version: the browser keeps them, so a panel opened
    # again (behind DSH the same URLs, whether or not the server was restarted) draws
    # without waiting for them.
    asked: list[str] = []

    def counting(app: Any) -> Any:
        async def counted(scope: Any, receive: Any, send: Any) -> None:
            if scope["type"] == "http":
                asked.append(scope["path"])
            await app(scope, receive, send)

        return counted

    with Server(counting(make_app(FakeProvider(demo_team(live=False))))) as server:
        for page in (watched.page, watched.context.new_page()):
            page.goto(server.url())
            page.locator(".lane").first.wait_for()
            assert page.evaluate("typeof htmx") == "object"
    files = [path.rsplit("/", 1)[-1] for path in asked if "/static/" in path]
    assert sorted(files) == sorted(
        ["colors.css", "panel.css", "panel.js", "embed.js", "htmx-2.0.11.min.js"]
    ), asked
    assert sum("/panel" in path and "/static/" not in path for path in asked) == 2
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
    watched_each: Watched,
) -> None:
    watched = watched_each
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
        page.wait_for_function("() => scroller.scrollWidth > 3 * scroller.clientWidth")
        page.evaluate("document.getElementById('scroller').scrollLeft = 200")
        page.wait_for_timeout(400)  # the scroll settles into the URL
        url_before = page.url
        _, window_before = _shown(page)
        page.evaluate(  # focus without scrolling it into view: the scroll is under test
            "id => document.querySelector(`.mark.received[data-msg='${id}']`)"
            ".focus({preventScroll: true})",
            opened,
        )
        team.now += 5_000
        team.message("docs", "perf", team.now - 1_000, "hot off the press", msg_id="fresh-1")
        page.locator('.mark[data-msg="fresh-1"]').first.wait_for(
            state="attached", timeout=ONE_POLL_MS
        )
        assert page.locator('.mark[data-msg="fresh-1"]').count() == 2
        assert "The reader drops the torn tail." in page.locator("#detail").inner_text()
        assert page.evaluate("document.getElementById('scroller').scrollLeft") == pytest.approx(
            200, abs=3
        )
        # the same time window, still zoomed in
        zoom_after, window_after = _shown(page)
        assert window_after == pytest.approx(window_before, rel=0.001) and zoom_after > 3
        assert page.url == url_before
        focused = page.evaluate("document.activeElement && document.activeElement.dataset.msg")
        assert focused == opened
    assert watched.errors == []


def test_an_open_pending_message_updates_when_it_is_delivered(watched: Watched) -> None:
    team = demo_team(live=True)
    msg = team.message("docs", "perf", T0 + 30 * 60_000, "on its way", delivered=False)
    with Server(make_app(FakeProvider(team))) as server:
        page = watched.page
        page.goto(server.url(f"session=s-lead&msg={msg}"))
        times = page.locator("#detail .times")
        assert "delivery pending" in times.inner_text()
        page.locator("#zoom-in").focus()
        delivered = T0 + 30 * 60_000 + 2_000
        for lane in team.lanes.values():
            for span in lane["spans"]:
                if span["id"] == msg:
                    span["deliveredAt"] = delivered
        team.messages[msg]["deliveredAt"] = delivered
        page.wait_for_function(
            "() => !document.querySelector('#detail .times').textContent.includes('pending')",
            timeout=2 * ONE_POLL_MS,
        )
        assert page.locator(f'.mark.pending[data-msg="{msg}"]').count() == 0
        assert page.evaluate("document.activeElement.id") == "zoom-in"  # focus left alone
    assert watched.errors == []


def test_a_message_gone_from_the_logs_says_not_found(watched: Watched) -> None:
    team = demo_team(live=False)
    msg = _msg_id(team, "verify", "host-data")
    del team.messages[msg]  # drawn on the board, but the detail is not there any more
    with Server(make_app(FakeProvider(team))) as server:
        page = watched.page
        page.goto(server.url())
        page.locator(f'.mark.sent[data-msg="{msg}"]').click()
        page.locator("#detail .card-title").wait_for()
        assert page.locator("#detail .card-title").inner_text() == "Not found"
        assert "not in the team's logs" in page.locator("#detail").inner_text()
        page.keyboard.press("Escape")
        assert page.locator("#detail").is_hidden()
    # the 404 itself is the only error (Chromium logs any 4xx it loads)
    assert [e for e in watched.errors if "404" not in e] == []


def test_unchanged_polls_swap_nothing_and_a_frozen_team_stops_polling(watched: Watched) -> None:
    team = demo_team(live=True)
    provider = FakeProvider(team)
    with Server(make_app(provider)) as server:
        page = watched.page
        page.goto(server.url())
        page.wait_for_load_state("networkidle")
        page.evaluate(
            "window.__swaps = 0; document.body.addEventListener('htmx:afterSwap',"
            " function (e) { if (e.detail.target.id === 'board') window.__swaps++; })"
        )
        calls = provider.timeline_calls
        with page.expect_response(lambda r: "/panel/board" in r.url, timeout=ONE_POLL_MS) as poll:
            pass
        assert poll.value.status == 204  # nothing changed: a bare "unchanged"
        page.wait_for_timeout(100)
        assert page.evaluate("window.__swaps") == 0
        assert provider.timeline_calls == calls
        team.live = False
        with page.expect_response(lambda r: "/panel/board" in r.url, timeout=ONE_POLL_MS) as last:
            pass
        assert last.value.status == 286  # htmx stops polling on this status
        page.locator(".pill.frozen").wait_for()
        assert page.locator(".now").count() == 0
        polls = _board_polls(watched)
        page.wait_for_timeout(2_500)  # longer than the poll interval
        assert _board_polls(watched) == polls
    assert watched.errors == []


def test_zoom_buttons_fit_and_list_view(watched: Watched) -> None:
    team = demo_team(live=False)
    with Server(make_app(FakeProvider(team))) as server:
        page = watched.page
        page.goto(server.url())
        page.locator("#zoom-in").click()
        page.wait_for_function("() => new URL(location.href).searchParams.has('from')")
        width_zoomed = page.evaluate("document.getElementById('board').scrollWidth")
        page.locator("#fit").click()
        page.wait_for_function("() => !new URL(location.href).searchParams.has('from')")
        assert page.evaluate("document.getElementById('board').scrollWidth") < width_zoomed
        page.locator("#list-toggle").click()
        assert page.locator(".chart").is_hidden()
        page.locator(".list .item").first.wait_for()  # the list is drawn when asked for
        items = page.locator(".list .item")
        assert items.count() >= len(team.messages)
        # the list is walked with Tab and opened with Enter
        first = page.locator(".list .item-open").first
        first.focus()
        page.keyboard.press("Tab")
        assert page.evaluate(
            "document.activeElement === document.querySelectorAll('.list .item-open')[1]"
        )
        page.keyboard.press("Shift+Tab")
        page.keyboard.press("Enter")
        page.locator("#detail .card").wait_for()
        assert "list=1" in page.url
    assert watched.errors == []


def test_zooming_in_stops_at_the_narrowest_window_the_server_draws(watched: Watched) -> None:
    """The browser takes the minimum window from the board, not from a copy of its own."""
    from dsh_task_gantt.layout import MIN_WINDOW_MS

    team = demo_team(live=False)
    with Server(make_app(FakeProvider(team))) as server:
        page = watched.page
        page.goto(server.url())
        assert page.get_attribute("#board-meta", "data-min-window") == str(MIN_WINDOW_MS)
        for _ in range(24):  # far past the narrowest window
            page.keyboard.press("+")
        page.wait_for_function(
            f"() => (u => u.has('from') && u.get('to') - u.get('from') <= {MIN_WINDOW_MS})"
            "(new URL(location.href).searchParams)"
        )
        page.wait_for_timeout(300)  # the last presses settle
        params = page.evaluate("Object.fromEntries(new URL(location.href).searchParams)")
        assert int(params["to"]) - int(params["from"]) == MIN_WINDOW_MS
    assert watched.errors == []


def test_a_board_arriving_in_the_same_frame_as_a_scroll_keeps_the_scroll(
    watched: Watched,
) -> None:
    """A poll's answer can land before the scroll event of the user's last scroll."""
    team = demo_team(live=False)
    with Server(make_app(FakeProvider(team))) as server:
        page = watched.page
        page.goto(server.url())
        page.keyboard.press("+")
        page.keyboard.press("+")
        page.wait_for_function("() => scroller.scrollWidth > 3 * scroller.clientWidth")
        page.wait_for_load_state("networkidle")  # the zoom's own redraws are in
        left_before = page.evaluate("scroller.scrollLeft")
        assert abs(left_before - 200) > 50  # the scroll below is a real move
        # The scroll, then at once (no frame between, so no scroll event yet) a board
        # swapped in the way htmx swaps a poll's answer.
        page.evaluate(
            """() => {
              scroller.scrollLeft = 200;
              htmx.swap(board, board.innerHTML, {swapStyle: 'innerHTML'},
                        {eventInfo: {target: board}});
            }"""
        )
        page.wait_for_timeout(400)  # the scroll settles into the URL
        assert page.evaluate("scroller.scrollLeft") == pytest.approx(200, abs=3)
        # The view in time moved with it: the URL's window starts where the scroll shows.
        shown = page.evaluate(
            """() => {
              const m = document.getElementById('board-meta').dataset;
              const track = board.querySelector('.row > .track').getBoundingClientRect().width;
              const start = Number(m.extentStart), end = Number(m.extentEnd);
              return start + scroller.scrollLeft / track * (end - start);
            }"""
        )
        params = page.evaluate("Object.fromEntries(new URL(location.href).searchParams)")
        assert int(params["from"]) == pytest.approx(shown, abs=1_000)
    assert watched.errors == []


# ---------------------------------------------------------------------------
# the real stack: the embedded host reading real logs

embedded = pytest.importorskip("dsh_task_gantt.embedded", reason="the embedded host is missing")
fixturegen = pytest.importorskip("dsh_task_gantt.fixturegen", reason="fixturegen is missing")
demo = pytest.importorskip("dsh_task_gantt.demo", reason="the demo teams are missing")


alpha = fixture_team.alpha
alpha_server = fixture_team.alpha_server


def _open_alpha(watched: Watched, server: Server, alpha: Any, extra: str = "") -> Any:
    page = watched.page
    page.goto(server.url(f"session={alpha.lead_id}{extra}"))
    page.locator("#board .chart").wait_for()
    return page


def test_fixture_team_lanes_follow_the_roster_and_the_fork_shows_no_copied_prompt(
    watched_each: Watched, alpha_server: Server, alpha: Any
) -> None:
    page = _open_alpha(watched_each, alpha_server, alpha)
    names = page.locator(".lane .chip").all_inner_texts()
    # lead first, roster order, a renamed member under its last name, "unassigned" last
    assert names == [m.aliases[-1] for m in alpha.members] + ["unassigned"]
    cut = page.evaluate(
        "[...document.querySelectorAll('.lane .chip')]"
        ".filter(c => { const r = document.createRange(); r.selectNodeContents(c);"
        " const pad = parseFloat(getComputedStyle(c).paddingLeft)"
        " + parseFloat(getComputedStyle(c).paddingRight);"
        " return r.getBoundingClientRect().width > c.getBoundingClientRect().width - pad + 0.05; })"
        ".map(c => c.textContent)"
    )
    assert cut == []  # every name (up to "unassigned") is whole, even at sidebar width
    lanes = [page.locator(".lane").nth(n).get_attribute("data-lane") for n in range(len(names))]
    assert lanes[:-1] == ["lead", *(m.id for m in alpha.members[1:])]
    (forked,) = alpha.with_trait("forked")
    copied = [p.id for p in alpha.human_prompts if forked.id in p.copied_into]
    assert copied, "the fixture's fork carries a copy of a lead prompt"
    fork_lane = page.locator(f'.lane[data-lane="{forked.id}"]')
    assert fork_lane.locator(".mark").count() > 0  # its own messages are there
    assert fork_lane.locator(".mark.prompt").count() == 0
    for prompt_id in copied:
        assert (
            page.locator(f'.lane[data-lane="lead"] .mark.prompt[data-msg="{prompt_id}"]').count()
            == 1
        )
        assert fork_lane.locator(f'[data-msg="{prompt_id}"]').count() == 0
    # every prompt once, on the lead's lane
    assert page.locator(".mark.prompt").count() == len(alpha.human_prompts)
    assert watched_each.errors == []


def test_a_frozen_fixture_team_makes_no_requests_after_loading(
    watched: Watched, alpha_server: Server, alpha: Any
) -> None:
    page = watched.page
    response = page.goto(alpha_server.url(f"session={alpha.lead_id}"))
    assert response is not None
    csp = response.headers.get("content-security-policy", "")
    assert (
        "script-src 'self'" in csp
        and "unsafe-inline" not in csp.split("script-src")[1].split(";")[0]
    )
    page.wait_for_load_state("networkidle")
    assert page.locator("#board .chart").count() == 1  # drawn, htmx loaded under that policy
    loaded = len(watched.requests)
    page.wait_for_timeout(2_500)  # longer than the poll interval
    assert len(watched.requests) == loaded
    assert page.locator("#board").get_attribute("hx-trigger") is None
    assert "frozen at" in page.locator("#status").inner_text()
    assert page.locator(".now").count() == 0
    assert watched.errors == []


def test_the_hostile_fixture_message_opens_as_text_and_runs_nothing(
    watched: Watched, alpha_server: Server, alpha: Any
) -> None:
    (hostile,) = alpha.messages_of_kind("hostile")
    assert "<script>" in hostile.text
    # a shared link opens it (rendered by the page), a click opens it (an htmx fragment)
    page = _open_alpha(watched, alpha_server, alpha, f"&msg={hostile.id}")
    assert page.locator("#detail .body").text_content() == hostile.text
    assert page.locator(f'.mark[data-msg="{hostile.id}"][aria-current="true"]').count() == 2
    page.keyboard.press("Escape")
    sent = page.locator(f'.mark.sent[data-msg="{hostile.id}"]')
    assert _lane_of(sent) == alpha.member(hostile.sender_id).id
    assert "<script>" in (sent.get_attribute("title") or "")  # an attribute value, not markup
    sent.click()
    page.locator("#detail .message-card").wait_for()
    assert page.locator("#detail .body").text_content() == hostile.text
    page.locator("#list-toggle").click()
    page.locator(".list li.item").first.wait_for()  # the list is drawn when asked for
    assert "<script>" in page.locator(".list").inner_text()
    assert page.locator("#board script, #board img, #detail script, #detail img").count() == 0
    assert page.locator("#detail a, #board a").count() == 0  # no javascript: link made
    page.wait_for_timeout(200)
    assert watched.dialogs == []
    assert watched.errors == []


def test_the_long_fixture_message_says_where_it_was_cut(
    watched: Watched, alpha_server: Server, alpha: Any
) -> None:
    (long,) = alpha.messages_of_kind("long")
    assert len(long.text) > 16_384
    page = _open_alpha(watched, alpha_server, alpha)
    page.locator(f'.mark.received[data-msg="{long.id}"]').click()
    cut = page.locator("#detail .cut")
    cut.wait_for()
    assert cut.inner_text() == f"Cut at 16,384 characters (of {len(long.text):,})."
    body = page.locator("#detail .body").text_content() or ""
    assert body.startswith(long.text[:200]) and len(body) < len(long.text)
    assert "\n" in body  # its line breaks are kept
    assert watched.errors == []


def test_the_orphan_fixture_delivery_shows_an_unknown_sender(
    watched: Watched, alpha_server: Server, alpha: Any
) -> None:
    (orphan,) = alpha.messages_of_kind("orphan-delivery")
    page = _open_alpha(watched, alpha_server, alpha)
    marks = page.locator(f'.mark[data-msg="{orphan.id}"]')
    assert marks.count() == 1  # no sender to draw it on: the recipient's lane only
    mark = marks.first
    assert "system" in (mark.get_attribute("class") or "")
    assert _lane_of(mark) == ("lead" if orphan.target_id == alpha.lead_id else orphan.target_id)
    assert (mark.get_attribute("aria-label") or "").startswith(
        "message from an unknown sender to lead at "
    )
    mark.click()
    page.locator("#detail .message-card").wait_for()
    title = page.locator("#detail .card-title").inner_text()
    assert "unknown sender" in title and "lead" in title
    assert watched.errors == []


def test_the_undelivered_fixture_message_is_drawn_as_delivery_pending(
    watched: Watched, alpha_server: Server, alpha: Any
) -> None:
    (waiting,) = alpha.messages_of_kind("undelivered")
    (normal, *_) = alpha.messages_of_kind("normal")
    page = _open_alpha(watched, alpha_server, alpha)
    pending = page.locator(f'.mark[data-msg="{waiting.id}"]')
    assert pending.count() == 2
    for n in range(2):
        assert "pending" in (pending.nth(n).get_attribute("class") or "").split()
        assert (pending.nth(n).get_attribute("aria-label") or "").endswith(", delivery pending")
    assert sorted(pending.all_inner_texts()) == sorted(["△", "▽"])  # sent, received
    delivered = page.locator(f'.mark[data-msg="{normal.id}"]')
    assert "pending" not in (delivered.first.get_attribute("class") or "").split()
    assert not (delivered.first.get_attribute("aria-label") or "").endswith("pending")
    pending.first.click()
    page.locator("#detail .message-card").wait_for()
    assert "delivery pending" in page.locator("#detail .times").inner_text()
    assert watched.errors == []


def test_t_opens_the_fixture_team_at_a_time(
    watched: Watched, alpha_server: Server, alpha: Any
) -> None:
    (hostile,) = alpha.messages_of_kind("hostile")
    at = hostile.delivered_time
    page = _open_alpha(watched, alpha_server, alpha, f"&t={at}")
    meta = page.locator("#board-meta")
    start = int(meta.get_attribute("data-window-start") or 0)
    end = int(meta.get_attribute("data-window-end") or 0)
    assert start < at < end and float(meta.get_attribute("data-zoom") or 1) > 1
    # the message delivered then is on screen, not scrolled away
    box = page.locator(f'.mark.received[data-msg="{hostile.id}"]').bounding_box()
    view = page.locator("#scroller").bounding_box()
    assert box is not None and view is not None
    assert view["x"] <= box["x"] and box["x"] + box["width"] <= view["x"] + view["width"]
    assert watched.errors == []


@pytest.fixture
def live_team(tmp_path: Path) -> Any:
    """A copy of alpha regenerated to end now (live: the lead's turn is open), and a
    ``LiveTeam`` that appends to it only when the test ticks it."""
    teams = demo.DemoTeams.prepare(tmp_path / "sessions")
    return teams, fixturegen.LiveTeam(teams.root, teams.live_spec)


def test_a_live_team_grows_within_one_poll_and_keeps_the_users_view(
    watched_each: Watched, live_team: Any
) -> None:
    teams, live = live_team
    watched = watched_each
    with Server(embedded.EmbeddedHost(teams.root)) as server:
        page = watched.page
        page.goto(server.url(f"session={teams.live_spec.lead_id}"))
        assert page.locator("#board").get_attribute("hx-trigger") == "every 2s"
        assert page.locator(".pill.live").is_visible() and page.locator(".now").count() == 1
        opened = page.locator(".mark.sent").first
        opened_id = opened.get_attribute("data-msg")
        opened.click()
        page.locator("#detail .message-card").wait_for()
        detail = page.locator("#detail").inner_text()
        page.keyboard.press("+")
        page.keyboard.press("+")
        page.wait_for_function("() => scroller.scrollWidth > 3 * scroller.clientWidth")
        page.evaluate("document.getElementById('scroller').scrollLeft = 150")
        page.wait_for_timeout(400)  # the scroll settles into the URL
        url_before = page.url
        _, window_before = _shown(page)
        # Focus the opened message's receipt. The zoomed extent ends at the real clock's
        # now, so on a slow machine the receipt can be drawn in a cluster: then (its id
        # among the cluster's) another receipt drawn alone takes the focus.
        focused_id, alone, clustered = page.evaluate(
            """id => {
                const own = document.querySelector(`.mark.received[data-msg='${id}']`);
                const mark = own ?? document.querySelector('.mark.received[data-msg]');
                mark.focus({preventScroll: true});
                // listed by a cluster, or in the range of a run (by the card's marks)
                const at = (document.querySelector('#detail .message-card')
                    .dataset.marks || '').split(' ').filter(Boolean).map(w => w.split('@'));
                const inCluster = [...document.querySelectorAll('.mark.cluster')]
                    .some(c => c.dataset.msgs !== undefined
                        ? c.dataset.msgs.split(' ').includes(id)
                        : at.some(([lane, ms]) => c.closest('.lane').id === lane
                            && +c.dataset.from <= +ms && +ms <= +c.dataset.to));
                return [mark.dataset.msg, own !== null, inCluster];
            }""",
            opened_id,
        )
        assert alone or clustered, f"message {opened_id}'s receipt is not drawn"
        new_id = None
        for _ in range(20):  # a tick is a message, a task move or a turn
            report = live.tick(demo.now_ms())
            found = [a.split()[1] for a in report.activities if a.startswith("message ")]
            if found:
                new_id = found[0]
                break
        assert new_id is not None
        page.locator(f'.mark[data-msg="{new_id}"]').first.wait_for(
            state="attached", timeout=ONE_POLL_MS
        )
        assert page.locator(f'.mark[data-msg="{new_id}"]').count() == 2  # sent and received
        assert page.locator("#detail").inner_text() == detail
        assert page.evaluate("scroller.scrollLeft") == pytest.approx(150, abs=3)
        # the same time window, still zoomed in (the real clock may have moved the live
        # extent's end a step on meanwhile: the zoom factor then grows by 1/64 to 1/32)
        zoom_after, window_after = _shown(page)
        assert window_after == pytest.approx(window_before, rel=0.001) and zoom_after > 3
        assert page.url == url_before
        assert page.evaluate("document.activeElement.dataset.msg") == focused_id
    assert watched.errors == []
