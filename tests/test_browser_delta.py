"""A panel that lived through many delta polls shows what a fresh load shows.

Real Chromium against a real uvicorn server on 127.0.0.1, the hand-made team behind a
fake provider whose timeline each step changes: after every kind of append the live
page (which got only the changed pieces, out of band) must hold the same marks, bars,
aggregates, tasks and notes, in the same order, as a page loaded fresh at that moment.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from typing import Any

import pytest

from tests.kit.boardteams import T0, FakeProvider, TeamBuilder, demo_team, lane_record, make_app
from tests.kit.browser import (
    CHROMIUM,
    ONE_POLL_MS,
    SIDEBAR,
    WIDE,
    Server,
    Watched,
    browser,  # noqa: F401  (the module's browser fixture)
)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's /usr/bin/chromium is not installed"),
]

MIN = 60_000

#: Every element of the chart in document order, with what a user sees or reaches of it
#: (not what the browser adds: local times, the hover twin, the current mark).
SNAPSHOT_JS = """() => {
  const out = [];
  const chart = document.getElementById('chart');
  for (const el of chart ? chart.querySelectorAll('*') : []) {
    const cls = [...el.classList].filter(c => c !== 'twin').join(' ');
    out.push([el.tagName, el.id, cls, el.getAttribute('style') || '',
              el.getAttribute('data-msg') || '', el.getAttribute('data-count') || '',
              el.getAttribute('hx-get') || '', el.children.length ? '' : el.textContent]);
  }
  const computed = chart ? getComputedStyle(chart) : null;
  const style = computed
    ? ['--span'].map(p => Number(computed.getPropertyValue(p)))
    : [];
  const status = document.getElementById('status');
  const notes = [...document.querySelectorAll('#status .notes li')].map(li => li.textContent);
  const counts = status && status.querySelector('.counts').textContent;
  return {elements: out, chart: style, status: counts, notes};
}"""


def _snapshot(page: Any) -> dict[str, Any]:
    return page.evaluate(SNAPSHOT_JS)  # type: ignore[no-any-return]


def _wait_for_version(page: Any, provider: FakeProvider) -> None:
    etag = provider._result().etag
    page.wait_for_function(
        "v => document.getElementById('board-version').value === v", arg=etag, timeout=ONE_POLL_MS
    )
    page.wait_for_timeout(50)  # the swap's settle


def _unreadable(team: TeamBuilder, name: str) -> None:
    team.lanes[name].update(channel="unreadable", error="the log could not be read", spans=[])
    team.source = "partial"
    team.notes.append(f"{name}: the log could not be read; its lane is empty")


def _steps(team: TeamBuilder) -> list[tuple[str, Callable[[], None]]]:
    pending: dict[str, str] = {}

    def send_pending() -> None:
        pending["id"] = team.message("docs", "ui", team.now - 900, "not yet", delivered=False)

    def deliver() -> None:
        for lane in team.lanes.values():
            for span in lane["spans"]:
                if span["id"] == pending["id"]:
                    span["deliveredAt"] = team.now - 100
        team.messages[pending["id"]]["deliveredAt"] = team.now - 100

    def move(action: str, status: str, actor: str) -> Callable[[], None]:
        def do() -> None:
            task = next(t for t in team.tasks if t["id"] == "t-live")
            task["history"].append(
                {"time": team.now - 200, "action": action, "revision": len(task["history"]) + 1,
                 "status": status, "sessionId": "s-lead", "actor": actor}
            )  # fmt: skip
            task.update(status=status, revision=len(task["history"]))
            if action == "claimed":
                task.update(ownerId=actor, ownerName=actor, laneId=actor)

        return do

    def create() -> None:
        team.task("t-live", "live task", [(team.now - 400, "created", "pending", "lead")])

    def burst() -> None:
        for n in range(6):
            team.message("ui", "docs", team.now - 900 + n, f"burst {n}")

    def join() -> None:
        team.lanes["late"] = lane_record(len(team.lanes), "late")
        team.turn("late", team.now - 1_500, None)

    return [
        ("a turn", lambda: team.turn("ui", team.now - 2_000, team.now - 500)),
        ("a message on two lanes", lambda: team.message("perf", "docs", team.now - 700, "hi")),
        ("a pending message", send_pending),
        ("it is delivered", deliver),
        ("a human prompt", lambda: team.prompt(team.now - 300, "status?")),
        ("a task is created", create),
        ("it is claimed", move("claimed", "in_progress", "ui")),
        ("it is completed", move("completed", "completed", "ui")),
        ("it is reopened", move("reopened", "pending", "lead")),
        ("a burst of messages (a cluster)", burst),
        ("a member joins", join),
        ("a lane becomes unreadable", lambda: _unreadable(team, "perf")),
        ("a turn after all that", lambda: team.turn("verify", team.now - 1_800, team.now - 1_200)),
    ]  # fmt: skip


@pytest.mark.parametrize("viewport", [SIDEBAR, WIDE], ids=["400x900", "1280x800"])
@pytest.mark.parametrize(
    "view",
    ["", "&follow=1&from={a}&to={b}", "&follow=1&from={c}&to={b}"],
    ids=["fit", "follow", "follow-deep"],  # deep: only the chunks near the window drawn
)
def test_a_panel_that_lived_through_delta_polls_equals_a_fresh_load(
    browser: Any,  # noqa: F811
    viewport: dict[str, int],
    view: str,
) -> None:
    team = demo_team(live=True)
    provider = FakeProvider(team)
    query = "session=s-lead" + view.format(a=team.now - 10 * MIN, b=team.now, c=team.now - MIN)
    live, fresh = Watched(browser, viewport), Watched(browser, viewport)
    deltas: list[int] = []
    fulls: list[str] = []

    def on_response(response: Any) -> None:
        if "/panel/board" not in response.url or response.status != 200:
            return
        if response.headers.get("x-board-delta") == "1":
            deltas.append(len(response.body()))
        else:
            fulls.append(response.url)

    live.page.on("response", on_response)
    try:
        with Server(make_app(provider)) as server:
            live.page.goto(server.url(query))
            live.page.wait_for_timeout(300)  # a first refresh for the real track width
            fulls.clear()
            for name, step in _steps(team):
                team.now += 2_500
                step()
                _wait_for_version(live.page, provider)
                # the same view: the track width the live page measured and asks with
                width = live.page.evaluate("document.querySelector('#view [name=w]').value")
                fresh.page.goto(f"{live.page.url}&w={width}")
                got, want = _snapshot(live.page), _snapshot(fresh.page)
                assert got["chart"] == want["chart"], name
                assert got["status"] == want["status"] and got["notes"] == want["notes"], name
                assert got["elements"] == want["elements"], name
        # the polls were deltas (a member joining redraws the whole board once)
        assert len(deltas) >= 10, (len(deltas), fulls)
        assert len(fulls) <= 2, fulls
        # the first poll may carry the track width the browser measured (a new scale:
        # its lanes whole); the rest carry what changed
        assert statistics.median(deltas) < 16_000, deltas
        assert live.errors == [] and fresh.errors == []
    finally:
        live.close()
        fresh.close()


def test_an_unknown_board_gets_the_whole_board(browser: Any) -> None:  # noqa: F811
    """A server that does not know the browser's board (restarted, or the board forgotten)
    answers with the whole board, and the page carries on polling deltas from it."""
    team = demo_team(live=True)
    provider = FakeProvider(team)
    page = Watched(browser, SIDEBAR)
    kinds: list[str] = []
    page.page.on(
        "response",
        lambda r: (
            kinds.append(r.headers.get("x-board-delta") or "whole")
            if "/panel/board" in r.url and r.status == 200
            else None
        ),
    )
    try:
        with Server(make_app(provider)) as server:
            page.page.goto(server.url())
            page.page.wait_for_timeout(300)
            kinds.clear()
            page.page.evaluate("document.getElementById('board-token').value = 'forgotten'")
            team.now += 2_500
            team.message("docs", "perf", team.now - 500, "after the restart", msg_id="after")
            _wait_for_version(page.page, provider)
            assert kinds == ["whole"]
            assert page.page.locator('.mark[data-msg="after"]').count() == 2
            team.now += 2_500
            team.message("perf", "docs", team.now - 500, "and again", msg_id="again")
            _wait_for_version(page.page, provider)
            assert kinds == ["whole", "1"]
            assert page.page.locator('.mark[data-msg="again"]').count() == 2
        assert page.errors == []
    finally:
        page.close()


def test_an_aggregate_opens_the_items_it_holds(browser: Any) -> None:  # noqa: F811
    team = demo_team(live=True)
    ids = [team.message("ui", "docs", T0 + 20 * MIN + n, f"burst {n}") for n in range(8)]
    page = Watched(browser, SIDEBAR)
    try:
        with Server(make_app(FakeProvider(team))) as server:
            page.page.goto(server.url())
            cluster = page.page.locator('.lane[data-lane="ui"] .mark.cluster').first
            held = (cluster.get_attribute("data-msgs") or "").split()
            assert int(cluster.get_attribute("data-count") or 0) == len(held) >= 2
            assert set(held) <= set(ids)
            cluster.click()
            page.page.locator("#detail .items-card").wait_for()
            listed = page.page.locator("#detail .items-list [data-msg]").evaluate_all(
                "els => els.map(e => e.getAttribute('data-msg'))"
            )
            assert set(held) <= set(listed)
            # an item of the list opens the whole message
            page.page.locator(f'#detail .items-list [data-msg="{held[-1]}"]').click()
            page.page.locator("#detail .message-card").wait_for()
            assert held[-1] in (
                page.page.locator("#detail .message-card").get_attribute("data-msg") or ""
            )
        assert page.errors == []
    finally:
        page.close()


def test_a_long_run_drawn_as_one_cluster_lists_no_ids_and_is_marked_by_its_range(
    browser: Any,  # noqa: F811
) -> None:
    """A burst longer than a cluster lists is drawn as one chip carrying its range, not
    every id (a day's zoomed-out board has runs of thousands, in every changed chunk at
    every poll); the open message still marks the run that holds it on each of its
    lanes, and not a run beside it."""
    team = demo_team(live=False)
    ids = [team.message("ui", "docs", T0 + 20 * MIN + n * 400, f"burst {n}") for n in range(40)]
    later = [team.message("ui", "docs", T0 + 23 * MIN + n * 400, f"later {n}") for n in range(40)]
    page = Watched(browser, SIDEBAR)
    try:
        with Server(make_app(FakeProvider(team))) as server:
            page.page.goto(server.url(f"session=s-lead&msg={ids[25]}"))
            card = page.page.locator("#detail .message-card")
            assert card.get_attribute("data-msg") == ids[25]
            marks_at = (card.get_attribute("data-marks") or "").split()
            assert len(marks_at) == 2, marks_at  # sent on ui, received on docs
            runs = page.page.locator(".mark.cluster:not([data-msgs])")
            assert runs.count() >= 2  # the bursts, on both lanes
            held = runs.evaluate_all(
                "els => els.map(e => [e.closest('.lane').dataset.lane, +e.dataset.from,"
                " +e.dataset.to, +e.dataset.count, e.getAttribute('aria-current'),"
                " e.closest('.lane').id])"
            )
            current = [h for h in held if h[4] == "true"]
            assert {h[0] for h in current} == {"ui", "docs"}, held
            at = {lane: int(ms) for lane, ms in (word.split("@") for word in marks_at)}
            for _lane, start, end, count, _current, element in current:
                assert count > 16 and start <= at[element] <= end, (held, at)
            # the later burst's runs are on the same lanes and not current
            assert any(h[1] >= T0 + 23 * MIN and h[4] is None for h in held), held
            # opening the later burst's cluster and one of its messages moves the mark
            page.page.keyboard.press("Escape")
            target = next(h for h in held if h[0] == "ui" and h[1] >= T0 + 23 * MIN)
            cluster = page.page.locator(
                f'.lane[data-lane="ui"] .mark.cluster[data-from="{target[1]}"]'
            )
            cluster.click()
            page.page.locator("#detail .items-card").wait_for()
            page.page.locator(f'#detail .items-list [data-msg="{later[3]}"]').click()
            page.page.locator(f'#detail .message-card[data-msg="{later[3]}"]').wait_for()
            assert cluster.get_attribute("aria-current") == "true"
            assert page.page.locator('.mark.cluster[aria-current="true"]').count() == 2
        assert page.errors == []
    finally:
        page.close()


def test_aggregates_are_reached_by_keyboard_and_a_deep_link_marks_the_cluster(
    browser: Any,  # noqa: F811
) -> None:
    team = demo_team(live=False)
    ids = [team.message("ui", "docs", T0 + 20 * MIN + n * 400, f"burst {n}") for n in range(8)]
    page = Watched(browser, SIDEBAR)
    try:
        with Server(make_app(FakeProvider(team))) as server:
            # a shared link to a message held by a cluster opens it and marks the cluster
            page.page.goto(server.url(f"session=s-lead&msg={ids[-1]}"))
            assert ids[-1] in (
                page.page.locator("#detail .message-card").get_attribute("data-msg") or ""
            )
            current = page.page.locator('.mark.cluster[aria-current="true"]')
            assert current.count() >= 1
            assert ids[-1] in (current.first.get_attribute("data-msgs") or "").split()
            page.page.keyboard.press("Escape")
            # Tab reaches a cluster; Enter opens the list of what it holds
            cluster = page.page.locator('.lane[data-lane="ui"] .mark.cluster').first
            cluster.focus()
            page.page.keyboard.press("Enter")
            page.page.locator("#detail .items-card").wait_for()
            # zoomed in far enough (here by a link to the burst's seconds), the same
            # messages are drawn one by one
            burst = f"session=s-lead&from={T0 + 20 * MIN - 1_000}&to={T0 + 20 * MIN + 3_800}"
            page.page.goto(server.url(burst))
            sent = page.page.locator('.lane[data-lane="ui"] .mark.sent')
            assert set(sent.evaluate_all("els => els.map(e => e.dataset.msg)")) == set(ids)
            assert page.page.locator('.lane[data-lane="ui"] .mark.cluster').count() == 0
        assert page.errors == []
    finally:
        page.close()


def test_the_list_view_is_drawn_a_page_at_a_time_and_every_page_is_reachable(
    browser: Any,  # noqa: F811
) -> None:
    team = demo_team(live=False)
    for n in range(130):
        team.message("ui", "docs", T0 + 10 * MIN + n * 1000, f"numbered {n:03d}")
    page = Watched(browser, SIDEBAR)
    try:
        with Server(make_app(FakeProvider(team))) as server:
            page.page.goto(server.url("session=s-lead&list=1"))
            rows = page.page.locator(".list li.item")
            rows.first.wait_for()
            seen: set[str] = set()
            pages = 0
            while True:
                pages += 1
                assert rows.count() <= 50
                texts = rows.evaluate_all("els => els.map(e => e.textContent)")
                seen.update(t for text in texts for t in [text] if "numbered" in t)
                earlier = page.page.locator(".pager [data-list-page]").first
                if earlier.count() == 0 or earlier.is_disabled():
                    break
                before = texts[0]
                earlier.click()
                page.page.wait_for_function(
                    "t => document.querySelector('.list li.item').textContent !== t", arg=before
                )
            assert pages >= 3
            numbered = {n for n in range(130) if any(f"numbered {n:03d}" in t for t in seen)}
            assert numbered == set(range(130))
        assert page.errors == []
    finally:
        page.close()


def test_task_rows_are_drawn_two_pages_at_a_time_and_every_task_is_reachable(
    browser: Any,  # noqa: F811
) -> None:
    team = demo_team(live=True)
    for n in range(130):
        at = T0 + n * 10_000
        team.task(f"bulk-{n:03d}", f"bulk {n:03d}", [(at, "created", "pending", "lead")])
    subjects = {task["subject"] for task in team.tasks}
    provider = FakeProvider(team)
    page = Watched(browser, SIDEBAR)
    shown = ".row.task .subject"
    try:
        with Server(make_app(provider)) as server:
            page.page.goto(server.url())
            rows = page.page.locator(shown)
            seen: set[str] = set()
            for pager in ("#tasks-head", "#tasks-foot"):  # back to the first, then the newest
                while True:
                    assert 0 < rows.count() <= 80
                    seen.update(rows.all_text_contents())
                    button = page.page.locator(f"{pager} [data-task-page]")
                    if button.count() == 0:
                        break
                    before = rows.first.text_content()
                    button.click()
                    page.page.wait_for_function(
                        "([sel, t]) => document.querySelector(sel).textContent !== t",
                        arg=[shown, before],
                    )
            assert seen == subjects
            # on the newest rows a new task is appended by a delta poll
            team.now += 2_500
            team.task("bulk-new", "bulk new", [(team.now - 100, "created", "pending", "lead")])
            _wait_for_version(page.page, provider)
            assert rows.last.text_content() == "bulk new"
        assert page.errors == []
    finally:
        page.close()
