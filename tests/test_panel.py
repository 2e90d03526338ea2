"""The panel's endpoints, rendered from hand-made timelines through a fake provider."""

from __future__ import annotations

import hashlib
import re
from html import unescape
from html.parser import HTMLParser
from typing import Any

import pytest
from starlette.testclient import TestClient

from dsh_task_gantt.htmx import HTMX_STOP_POLLING
from dsh_task_gantt.panel import HTMX_FILE, PANEL_CSP
from dsh_task_gantt.resources import resource_path
from tests.kit.boardteams import (
    NAMES,
    PREFIX,
    T0,
    FakeProvider,
    TeamBuilder,
    demo_team,
    lane_record,
    make_app,
)

#: What htmx sends: the message route answers it with the HTML fragment, not JSON.
HX = {"HX-Request": "true"}
HOSTILE = (
    "<script>alert(1)</script>",
    "javascript:alert(2)",
    "\"'><img src=x onerror=alert(3)>",
)


@pytest.fixture
def team() -> TeamBuilder:
    return demo_team()


@pytest.fixture
def provider(team: TeamBuilder) -> FakeProvider:
    return FakeProvider(team)


@pytest.fixture
def client(provider: FakeProvider) -> TestClient:
    return TestClient(make_app(provider))


class _Elements(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[str, list[tuple[str, str | None]]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found.append((tag, attrs))


def _elements(html: str) -> list[tuple[str, list[tuple[str, str | None]]]]:
    """Every element the browser would build from this HTML, with its attributes."""
    parser = _Elements()
    parser.feed(html)
    return parser.found


def _version(html: str) -> str:
    found = re.search(r'id="board-version" name="v" value="([^"]*)"', html)
    assert found
    return found.group(1).replace("&#34;", '"').replace("&quot;", '"')


def _token(html: str) -> str:
    found = re.search(r'id="board-token" name="b" value="([^"]*)"', html)
    assert found
    return found.group(1)


# ---------------------------------------------------------------------------
# tests


def test_page_draws_every_lane_with_its_marks(client: TestClient, team: TeamBuilder) -> None:
    response = client.get(f"{PREFIX}/panel?session=s-lead")
    assert response.status_code == 200
    html = response.text
    for name in NAMES:
        assert f'title="{name}">{name}</span>' in html
    # every message is a mark on both lanes: 6×2 + 3 messages, twice, plus 2 prompts;
    # marks too crowded for their rows at this width are held by a cluster's count
    sent, received = html.count('class="mark sent'), html.count('class="mark received')
    prompts = html.count('class="mark prompt')
    held = sum(
        int(n) for n in re.findall(r'class="mark cluster[^"]*"[^>]*data-count="(\d+)"', html)
    )
    assert sent + received + prompts + held == 15 + 15 + 2
    assert sent >= 10 and received >= 10 and prompts >= 1
    assert 'hx-trigger="every 2s"' in html
    assert 'class="now"' in html
    assert response.headers["content-security-policy"] == PANEL_CSP


def test_page_loads_the_vendored_htmx_whose_bytes_match_the_record(client: TestClient) -> None:
    html = client.get(f"{PREFIX}/panel?session=s-lead").text
    assert f'src="{PREFIX}/static/{HTMX_FILE}"' in html
    recorded = (resource_path("static") / "VENDORED.md").read_text()
    digest = hashlib.sha256((resource_path("static") / HTMX_FILE).read_bytes()).hexdigest()
    assert f"| {HTMX_FILE} |" in recorded and digest in recorded
    served = client.get(f"{PREFIX}/static/{HTMX_FILE}")
    assert hashlib.sha256(served.content).hexdigest() == digest
    assert HTMX_FILE.startswith("htmx-2.")


def test_page_has_no_inline_script_or_handler(client: TestClient) -> None:
    html = client.get(f"{PREFIX}/panel?session=s-lead").text
    assert not re.search(r"<script(?![^>]*\ssrc=)[^>]*>", html)
    assert not re.search(r"\son[a-z]+\s*=", html)
    assert "style-src 'self'" in PANEL_CSP and "script-src 'self'" in PANEL_CSP


class _ChartText(HTMLParser):
    """The text nodes inside the chart, as the browser would build them."""

    def __init__(self) -> None:
        super().__init__()
        self.depth = 0  # elements open inside the chart (0: outside it)
        self.texts: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.depth or ("id", "chart") in attrs:
            self.depth += tag not in {"input", "br", "img", "meta", "link"}

    def handle_endtag(self, tag: str) -> None:
        if self.depth:
            self.depth -= 1

    def handle_data(self, data: str) -> None:
        if self.depth:
            self.texts.append(data)


def test_the_chart_has_no_whitespace_only_text_between_its_elements(client: TestClient) -> None:
    # Each such text node is DOM the browser builds and styles for nothing: on a real
    # team they were half the page's nodes. The words drawn are all still there.
    parser = _ChartText()
    parser.feed(client.get(f"{PREFIX}/panel?session=s-lead").text)
    assert parser.texts, "no text in the chart"
    assert [t for t in parser.texts if not t.strip()] == []
    assert {"lead", "host-data", "verify"} <= set(parser.texts)


def test_unknown_session_is_a_404_page(client: TestClient) -> None:
    response = client.get(f"{PREFIX}/panel?session=nope")
    assert response.status_code == 404
    assert "Not found" in response.text


def test_unchanged_poll_is_204_without_building_the_timeline(
    client: TestClient, provider: FakeProvider
) -> None:
    html = client.get(f"{PREFIX}/panel?session=s-lead").text
    version = _version(html)
    before, asked = provider.timeline_calls, provider.etag_calls
    response = client.get(f"{PREFIX}/panel/board", params={"session": "s-lead", "v": version})
    assert response.status_code == 204
    assert response.content == b""
    assert provider.timeline_calls == before
    assert provider.etag_calls == asked + 1  # the cheap version check answered it


def test_changed_poll_returns_the_new_board(
    client: TestClient, provider: FakeProvider, team: TeamBuilder
) -> None:
    version = _version(client.get(f"{PREFIX}/panel?session=s-lead").text)
    team.message("docs", "perf", team.now - 1000, "a fresh message", msg_id="fresh-1")
    response = client.get(f"{PREFIX}/panel/board", params={"session": "s-lead", "v": version})
    assert response.status_code == 200
    assert 'data-msg="fresh-1"' in response.text
    assert _version(response.text) != version
    assert 'id="status" class="status" hx-swap-oob="true"' in response.text


def test_frozen_team_stops_polling_with_286_and_a_final_board(
    client: TestClient, team: TeamBuilder
) -> None:
    version = _version(client.get(f"{PREFIX}/panel?session=s-lead").text)
    team.live = False
    response = client.get(f"{PREFIX}/panel/board", params={"session": "s-lead", "v": version})
    assert response.status_code == HTMX_STOP_POLLING
    assert "frozen at" in response.text
    assert 'class="now"' not in response.text


def test_frozen_page_has_no_polling_trigger() -> None:
    client = TestClient(make_app(FakeProvider(demo_team(live=False))))
    html = client.get(f"{PREFIX}/panel?session=s-lead").text
    assert "hx-trigger" not in html
    assert "frozen at" in html
    assert 'class="now"' not in html


def test_a_lane_id_holding_the_rows_own_stand_ins_is_drawn_whole() -> None:
    """A lane's row is assembled around its name cell and chunks from markers rendered
    once; a member id from a log that holds those very characters changes nothing."""
    odd = "\ue001odd\ue000"
    team = TeamBuilder(names=("lead", odd))
    team.turn("lead", T0, T0 + 60_000)
    team.turn(odd, T0 + 10_000, T0 + 20_000)
    client = TestClient(make_app(FakeProvider(team)))
    html = client.get(f"{PREFIX}/panel", params={"session": "s-lead"}).text
    row = html[html.index('id="lane-1"') :]
    row = row[: row.index('id="lane-2"')] if 'id="lane-2"' in row else row
    assert f'data-lane="{odd}"' in html
    track = row.index('id="lane-1-track"')
    assert row.index('class="name') < track < row.index('class="chunk"')
    assert html.count('id="lane-1-track"') == 1 and html.count('id="lane-0-track"') == 1


def test_hostile_text_is_escaped_everywhere() -> None:
    evil = " ".join(HOSTILE)
    team = TeamBuilder(names=("lead", evil, "ok"))
    team.turn("lead", T0, T0 + 60_000)
    # Hostile ids are drawn on the board; the detail routes refuse them (400) before the
    # panel runs, so each detail fragment is asked for an item with a plain id and
    # hostile texts.
    team.message("lead", evil, T0 + 1000, f"body {evil}\nline 2", msg_id=evil)
    msg = team.message("lead", evil, T0 + 1500, f"body {evil}\nline 2", msg_id="m-evil")
    team.prompt(T0 + 2000, f"prompt {evil}")
    team.task(evil, f"subject {evil}", [(T0, "created", "pending", evil)])
    team.task("t-evil", f"subject {evil}", [(T0, "created", "pending", evil)])
    team.tasks[1]["description"] = f"description {evil}"
    team.notes.append(f"note {evil}")
    client = TestClient(make_app(FakeProvider(team)))
    pages = [
        client.get(f"{PREFIX}/panel", params={"session": "s-lead", "list": "1"}).text,
        client.get(f"{PREFIX}/panel/board", params={"session": "s-lead"}).text,
        client.get(f"{PREFIX}/api/messages/{msg}", params={"session": "s-lead"}, headers=HX).text,
        client.get(f"{PREFIX}/panel/tasks/x", params={"session": "s-lead"}).text,
        client.get(f"{PREFIX}/panel", params={"session": "s-lead", "msg": msg}).text,
    ]
    task_html = client.get(f"{PREFIX}/panel/tasks/t-evil", params={"session": "s-lead"})
    pages.append(task_html.text)
    assert task_html.status_code == 200 and "description" in task_html.text
    for hostile_id in (
        f"{PREFIX}/panel/tasks/{evil.replace('/', '%2F')}",
        f"{PREFIX}/api/messages/{evil.replace('/', '%2F')}",
    ):
        refused = client.get(hostile_id, params={"session": "s-lead"})
        assert refused.status_code == 400 and "alert" not in refused.text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in pages[0]  # the hostile ids, drawn
    for html in pages:
        for tag, attrs in _elements(html):
            assert tag not in {"img", "iframe", "object"}
            assert tag != "script" or dict(attrs).get("src", "").startswith(f"{PREFIX}/static/")
            for name, value in attrs:
                assert not name.startswith("on"), (tag, name)
                if name in {"href", "src", "action", "formaction", "hx-get"}:
                    assert (value or "").startswith((PREFIX, "data:,")), (tag, name, value)
        assert "<script>alert" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in pages[2]
    assert "body " in pages[2] and "note " in pages[0]
    assert f"description {HOSTILE[0]}" not in pages[-1]
    assert "description &lt;script&gt;alert(1)&lt;/script&gt;" in pages[-1]


def test_message_detail_shows_whole_body_and_the_cut_notice(
    client: TestClient, team: TeamBuilder
) -> None:
    long_body = "first line\nsecond line\n" + "x" * 20_000
    msg = team.message("verify", "ui", T0 + 60_000, long_body, msg_id="long")
    response = client.get(
        f"{PREFIX}/api/messages/{msg}", params={"session": "s-lead"}, headers={"HX-Request": "true"}
    )
    assert response.status_code == 200
    html = response.text
    assert "first line\nsecond line\n" in html
    assert "Cut at 16,384 characters" in html
    assert f"(of {len(long_body):,})" in html
    # names in their lanes' colours: verify is slot 1, ui slot 3
    assert 'class="who c1 v0">verify' in html and 'class="who c3 v0">ui' in html


def test_unknown_message_is_a_404_fragment(client: TestClient) -> None:
    response = client.get(
        f"{PREFIX}/api/messages/nope", params={"session": "s-lead"}, headers={"HX-Request": "true"}
    )
    assert response.status_code == 404
    assert "<html" not in response.text


def test_task_history_lists_each_transition_with_its_actor(client: TestClient) -> None:
    response = client.get(f"{PREFIX}/panel/tasks/1", params={"session": "s-lead"})
    assert response.status_code == 200
    moves = re.findall(r"<strong>(\w+)</strong> by ([\w-]+)", response.text)
    assert moves == [
        ("created", "lead"),
        ("claimed", "host-data"),
        ("completed", "host-data"),
        ("reopened", "verify"),
        ("claimed", "host-data"),
        ("completed", "host-data"),
    ]


def test_msg_parameter_opens_the_detail(client: TestClient, team: TeamBuilder) -> None:
    first = next(m for m in team.messages.values() if m["to"]["name"] == "verify")
    html = client.get(f"{PREFIX}/panel", params={"session": "s-lead", "msg": first["id"]}).text
    detail = html.split('id="detail"', 1)[1]
    assert "hidden" not in detail.split(">", 1)[0]
    assert "Please take the verify part." in detail


def test_view_parameters_reach_the_board(client: TestClient) -> None:
    start, end = T0 + 10 * 60_000, T0 + 15 * 60_000
    html = client.get(
        f"{PREFIX}/panel", params={"session": "s-lead", "from": start, "to": end}
    ).text
    assert f'data-window-start="{start}"' in html and f'data-window-end="{end}"' in html
    assert f'name="from" value="{start}"' in html


def test_marks_have_readable_names(client: TestClient) -> None:
    html = client.get(f"{PREFIX}/panel?session=s-lead").text
    assert 'aria-label="message from verify to host-data at ' in html
    assert 'aria-label="your prompt at ' in html


def test_a_message_not_yet_delivered_says_delivery_pending(
    client: TestClient, team: TeamBuilder
) -> None:
    msg = team.message("docs", "perf", T0 + 61_000, "on its way", msg_id="waiting", delivered=False)
    html = client.get(f"{PREFIX}/panel", params={"session": "s-lead", "list": "1"}).text
    marks = [
        dict(attrs)
        for tag, attrs in _elements(html)
        if dict(attrs).get("data-msg") == msg and "mark" in (dict(attrs).get("class") or "").split()
    ]
    assert len(marks) == 2
    for mark in marks:
        assert "pending" in (mark["class"] or "").split()
        assert (mark["aria-label"] or "").endswith("UTC, delivery pending")
    assert html.count('<span class="pending-tag">delivery pending</span>') == 1  # its list item
    detail = client.get(
        f"{PREFIX}/api/messages/{msg}", params={"session": "s-lead"}, headers={"HX-Request": "true"}
    ).text
    assert '<dt>delivered</dt><dd><span class="pending-tag">delivery pending</span></dd>' in detail
    delivered = client.get(
        f"{PREFIX}/api/messages/{_first_delivered(team)}",
        params={"session": "s-lead"},
        headers={"HX-Request": "true"},
    ).text
    assert "delivery pending" not in delivered


def _first_delivered(team: TeamBuilder) -> str:
    return next(m["id"] for m in team.messages.values() if m["deliveredAt"] is not None)


def _board_html(client: TestClient, **params: str) -> str:
    html = client.get(f"{PREFIX}/panel/board", params={"session": "s-lead", **params}).text
    return re.sub(r'id="board-drawn" name="drawn" value="\d*"', "", html)  # the clock


def test_a_kept_lane_is_never_stale_the_board_equals_one_drawn_from_scratch(
    team: TeamBuilder,
) -> None:
    """The panel keeps each lane's markup until the lane changes. Through every kind of
    change — a message, a rename, a colour, a status, the clock, the zoom, a new lane —
    the kept board must equal a board drawn by a panel that keeps nothing."""
    kept = TestClient(make_app(FakeProvider(team)))
    changes: list[Any] = [
        lambda: None,
        lambda: team.message("docs", "perf", team.now - 1000, "fresh", msg_id="fresh-1"),
        lambda: setattr(team, "now", team.now + 2_500),  # only the clock moved
        lambda: team.lanes["ui"].update(name="ui-renamed"),
        lambda: team.lanes["perf"]["color"].update(slot=4),
        lambda: team.lanes["docs"].update(status="running"),
        lambda: team.turn("verify", team.now - 500, None),
        lambda: setattr(team, "now", team.now + 30 * 60_000),  # the extent grows a step
        lambda: team.lanes.update(late=lane_record(len(team.lanes), "late")),
    ]
    for change in changes:
        change()
        for view in ({}, {"from": str(T0), "to": str(T0 + 5 * 60_000), "px": "900"}):
            fresh = TestClient(make_app(FakeProvider(team)))
            assert _board_html(kept, **view) == _board_html(fresh, **view)


def test_open_bars_reach_the_now_line_without_it_in_their_markup(
    client: TestClient, team: TeamBuilder
) -> None:
    team.turn("verify", team.now - 60_000, None)
    html = _board_html(client)
    assert re.search(r'id="chart"[^>]*style="--span:[\d.]+"', html)
    # open bars and the now-line are both placed by the one --open-t the board carries
    meta = re.search(r'data-open-t="([\d.]+)"', html)
    assert meta is not None and float(meta.group(1)) > 0
    assert '<span class="now"></span>' in html
    # an open bar says only where it starts: its end (--open-t) is set on it in the
    # browser, so "now" moving leaves its markup alone
    assert re.search(r'class="turn [^"]* open" style="--t:[\d.]+" ', html)
    later = team.now
    team.now = later + 2_500
    moved = _board_html(client)
    lanes = lambda h: re.findall(r'<div class="chunk".*?</div>', h, re.S)  # noqa: E731
    assert lanes(moved) == lanes(html)


def test_an_aggregate_lists_the_lanes_items_in_its_range(
    client: TestClient, team: TeamBuilder
) -> None:
    burst = [team.message("ui", "docs", T0 + 20 * 60_000 + n, f"burst {n}") for n in range(5)]
    team.turn("ui", T0 + 20 * 60_000 - 100, T0 + 20 * 60_000 + 50)
    url = f"{PREFIX}/panel/items"
    params = {"session": "s-lead", "lane": "ui", "from": str(T0 + 20 * 60_000)}
    html = client.get(url, params={**params, "to": str(T0 + 20 * 60_000 + 4)}).text
    listed = re.findall(r'class="item-open" data-msg="([^"]+)"', html)
    assert listed == burst  # every one, in time order, and nothing else
    assert "5 messages" in html
    assert "2 turns" in html  # the burst's own turn and ui's long one around it
    assert f'<li class="turn-item"><time data-ms="{T0 + 20 * 60_000 - 100}"' in html
    other = client.get(url, params={**params, "lane": "perf", "to": str(T0 + 20 * 60_000 + 4)})
    assert "data-msg" not in other.text  # another lane's range holds none of them
    assert client.get(url, params={**params, "lane": "nobody", "to": "1"}).status_code == 400
    gone = client.get(url, params={**params, "lane": "nobody", "to": str(T0 + 21 * 60_000)})
    assert gone.status_code == 404


@pytest.mark.parametrize(("notes", "summary"), [(1, "1 note<"), (2, "2 notes<")])
def test_the_notes_summary_counts_them_in_the_right_number(notes: int, summary: str) -> None:
    team = demo_team()
    team.notes[:] = [f"note {n}" for n in range(notes)]
    html = TestClient(make_app(FakeProvider(team))).get(f"{PREFIX}/panel?session=s-lead").text
    assert summary in html
    assert 'title="polling every 2 s"' in html


@pytest.mark.parametrize(
    ("names", "tasks", "messages", "counts"),
    [
        (("lead",), 1, 0, "1 lane · 1 task · 0 messages"),
        (("lead", "ui"), 2, 1, "2 lanes · 2 tasks · 1 message"),
    ],
)
def test_the_status_line_counts_lanes_tasks_and_messages_in_the_right_number(
    names: tuple[str, ...], tasks: int, messages: int, counts: str
) -> None:
    team = TeamBuilder(names=names, live=False)
    team.turn("lead", T0, T0 + 60_000)
    for n in range(tasks):
        team.task(f"t-{n}", f"task {n}", [(T0 + 1_000 + n, "created", "pending", "lead")])
    for n in range(messages):
        team.message("lead", "ui", T0 + 2_000 + n, f"note {n}")
    html = TestClient(make_app(FakeProvider(team))).get(f"{PREFIX}/panel?session=s-lead").text
    assert f'<span class="counts">{counts}</span>' in html


def test_the_task_pager_says_how_many_tasks_are_left_out() -> None:
    team = demo_team()
    for n in range(97):  # 100 tasks: the newest 60 are drawn, the first 40 one page back
        team.task(f"extra-{n}", f"task {n}", [(T0 + 1_000 + n, "created", "pending", "lead")])
    html = TestClient(make_app(FakeProvider(team))).get(f"{PREFIX}/panel?session=s-lead").text
    assert 'data-task-page="1">40 earlier tasks</button>' in html
    assert "later task" not in html


def test_an_open_tasks_row_is_drawn_once_while_the_clock_moves(team: TeamBuilder) -> None:
    """An open task's life and run reach the now-line in CSS: a poll seconds later finds
    its row's markup unchanged and renders no row again (live polls cost what changed)."""
    app = make_app(FakeProvider(team))
    client = TestClient(app)
    rows = lambda h: re.findall(r'<div class="row task.*?</div>\s*</div>', h, re.S)  # noqa: E731
    first = client.get(f"{PREFIX}/panel/board", params={"session": "s-lead"}).text
    rendered = len(app.panel._tasks)  # the rows' markup cache, by what a row shows
    team.now += 37_000  # the open tasks' lives and runs grow with the clock
    later = client.get(f"{PREFIX}/panel/board", params={"session": "s-lead"}).text
    assert "in_progress" in first and rows(later) == rows(first) and len(rows(first)) == 3
    assert len(app.panel._tasks) == rendered
    # a row that shows something new is drawn again
    team.tasks[2]["history"].append(
        {"time": team.now - 1_000, "action": "claimed", "revision": 2,
         "status": "in_progress", "sessionId": "s-lead", "actor": "docs"}
    )  # fmt: skip
    team.tasks[2]["status"] = "in_progress"
    claimed = client.get(f"{PREFIX}/panel/board", params={"session": "s-lead"}).text
    assert rows(claimed)[2] != rows(first)[2] and len(app.panel._tasks) == rendered + 1


def test_through_the_real_service_a_poll_redraws_only_the_lane_whose_log_grew() -> None:
    """The service's encoder names each lane's content by a generation; the panel keys
    each lane's markup on it. A poll after a teammate's append lays out that lane alone,
    and its answer draws what a fresh load of the same moment draws."""
    from dsh_task_gantt.service import TimelineService
    from tests.kit.fakehost import FakeContext, FakePersistence, ev, header

    now = T0 + 10 * 60_000
    persistence = FakePersistence()
    persistence.put("lead", header("lead"), [ev("turn/start", 0, T0, {"turn": "t0"})])
    for mate in ("m1", "m2"):
        turns = [ev("turn/start", 0, T0 + 1_000, {"turn": "a"})]
        turns.append(ev("turn/end", 1, T0 + 9_000, {"turn": "a"}))
        persistence.put(mate, header(mate, parent="lead"), turns)
    service = TimelineService(FakeContext(sessionPersistence=persistence).get, clock=lambda: now)
    app = make_app(service)
    client = TestClient(app)
    board = client.get(f"{PREFIX}/panel/board", params={"session": "lead"}).text
    drawn = dict(app.panel._lanes.items())
    assert len(drawn) == 3 and all(key[0][0] == "wire" for key in drawn)  # not hashed again
    persistence.append("m2", [ev("turn/start", 2, T0 + 60_000, {"turn": "b"})])
    params = {"session": "lead", "v": _version(board), "b": _token(board)}
    delta = client.get(f"{PREFIX}/panel/board", params=params)
    assert delta.headers.get("X-Board-Delta") == "1"
    new = {key: value for key, value in app.panel._lanes.items() if key not in drawn}
    assert [row.lane_id for row, _ in new.values()] == ["m2"]  # the lead and m1: reused
    assert 'class="turn c2 v0 open"' in delta.text  # m2's new, running turn
    fresh = client.get(f"{PREFIX}/panel/board", params={"session": "lead"}).text
    assert 'class="turn c2 v0 open"' in fresh and fresh.count('class="row lane') == 3


def test_through_the_real_service_a_poll_checks_the_logs_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The service's timeline costs what its validator does (one check of the logs, an
    unchanged team's build kept): a poll asks for it once, unchanged or not, and still
    answers 204 when nothing changed and the new board when a log grew."""
    from dsh_task_gantt.service import TimelineService
    from tests.kit.fakehost import FakeContext, FakePersistence, ev, header

    now = T0 + 10 * 60_000
    persistence = FakePersistence()
    persistence.put("lead", header("lead"), [ev("turn/start", 0, T0, {"turn": "t0"})])
    service = TimelineService(FakeContext(sessionPersistence=persistence).get, clock=lambda: now)
    checks = [0]
    build = TimelineService._build

    async def counted(self: TimelineService, session_id: str) -> Any:
        checks[0] += 1
        return await build(self, session_id)

    monkeypatch.setattr(TimelineService, "_build", counted)
    client = TestClient(make_app(service))
    board = client.get(f"{PREFIX}/panel/board", params={"session": "lead"}).text
    params = {"session": "lead", "v": _version(board), "b": _token(board)}
    checks[0] = 0
    assert client.get(f"{PREFIX}/panel/board", params=params).status_code == 204
    assert checks[0] == 1
    persistence.append("lead", [ev("turn/start", 1, T0 + 60_000, {"turn": "t1"})])
    checks[0] = 0
    delta = client.get(f"{PREFIX}/panel/board", params=params)
    assert delta.status_code == 200 and _version(delta.text) != params["v"]
    assert checks[0] == 1  # was 2: the validator's check, then the timeline's


def _now_states(html: str) -> dict[str, str]:
    """Each lane's now-state text by its element id."""
    found = re.findall(
        r'<div [^>]*class="now-state[^"]*" id="(lane-\d+)-now"[^>]*>(.*?)</div>', html
    )
    texts = {lane: unescape(re.sub(r"<[^>]+>", "", text)) for lane, text in found}
    return {lane: text for lane, text in texts.items() if text}


def test_live_lanes_say_what_each_member_is_doing_now_and_polls_keep_it_fresh(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """In a turn · n min, idle · n min, provisioning, failed; the status line counts the
    members in a turn; a poll after an append (or minutes later) sends the now-states
    that changed, not the lanes."""
    from dsh_task_gantt import panel as panel_module
    from dsh_task_gantt.service import TimelineService
    from tests.kit.fakehost import FakeContext, FakePersistence, ev, header

    clock = {"now": T0 + 10 * 60_000}
    monkeypatch.setattr(panel_module, "now_ms", lambda: clock["now"])
    persistence = FakePersistence()

    def member(seq: int, mid: str, phase: str) -> dict[str, Any]:
        data = {"id": mid, "name": mid, "phase": phase, "context": "fresh"}
        return ev("team/member", seq, T0, {"version": 2, "teamId": "lead", "member": data})

    lead = [ev("turn/start", 0, T0, {"turn": "t0"}), member(1, "m1", "active")]
    lead += [member(2, "m2", "active"), member(3, "m3", "provisioning")]
    lead += [member(4, "m4", "provisioning"), member(5, "m4", "failed")]
    persistence.put("lead", header("lead"), lead)
    persistence.put(
        "m1", header("m1", parent="lead"), [ev("turn/start", 0, T0 + 7 * 60_000, {"turn": "a"})]
    )
    m2 = [
        ev("turn/start", 0, T0 + 60_000, {"turn": "b"}),
        ev("turn/end", 1, T0 + 2 * 60_000, {"turn": "b"}),
    ]
    persistence.put("m2", header("m2", parent="lead"), m2)
    service = TimelineService(
        FakeContext(sessionPersistence=persistence).get, clock=lambda: clock["now"]
    )
    client = TestClient(make_app(service))
    board = client.get(f"{PREFIX}/panel", params={"session": "lead"}).text
    assert _now_states(board) == {
        "lane-0": "in a turn · 10 min",
        "lane-1": "in a turn · 3 min",
        "lane-2": "idle · 8 min",
        "lane-3": "provisioning",
        "lane-4": "failed",
    }
    assert '<span class="working">2 of 5 working</span>' in board
    # m2 starts a turn: the poll's delta says so, and the count follows
    persistence.append("m2", [ev("turn/start", 2, T0 + 10 * 60_000, {"turn": "c"})])
    params = {"session": "lead", "v": _version(board), "b": _token(board)}
    delta = client.get(f"{PREFIX}/panel/board", params=params)
    assert delta.headers.get("X-Board-Delta") == "1"
    assert _now_states(delta.text)["lane-2"] == "in a turn · <1 min"
    assert "turn · &lt;1 min</div>" in delta.text  # escaped like every text
    assert '<span class="working">3 of 5 working</span>' in delta.text
    # five minutes on, nothing appended: a redraw sends the durations, no lane again
    clock["now"] += 5 * 60_000
    params = {"session": "lead", "v": _version(delta.text), "b": _token(delta.text)}
    later = client.get(f"{PREFIX}/panel/board", params={**params, "drawn": str(T0)})
    assert later.headers.get("X-Board-Delta") == "1"
    assert _now_states(later.text) == {
        "lane-0": "in a turn · 15 min",
        "lane-1": "in a turn · 8 min",
        "lane-2": "in a turn · 5 min",
    }
    assert 'class="row lane' not in later.text and 'class="name"' not in later.text
    # a replayed moment says nothing of now (its lanes say what they did then)
    frozen = client.get(f"{PREFIX}/panel", params={"session": "lead", "at": str(T0 + 60_000)})
    assert (
        _now_states(frozen.text) == {}
        and "working" not in frozen.text.split('id="status"')[1][:400]
    )


def _usage(seq: int, at: int, turn: str, step: int, read: int, out: int) -> dict[str, Any]:
    """A model call's usage chunk, as DSH writes one per step."""
    from tests.kit.fakehost import ev

    usage = {"inputTokens": 40, "outputTokens": out, "cacheReadTokens": read}
    data = {"turn": turn, "step": step, "chunk": {"type": "usage", "usage": usage}}
    return ev("assistant/chunk", seq, at, data)


def test_a_poll_after_a_model_call_sends_the_lanes_new_token_figure_not_its_name_cell() -> None:
    """The lane's figure is a piece of its own: a model call appended re-sends the figure
    (its new value), not the whole name cell around it; a lane with no usage says
    nothing, and shows its figure once its first call is counted."""
    from dsh_task_gantt.service import TimelineService
    from tests.kit.fakehost import FakeContext, FakePersistence, ev, header

    now = T0 + 10 * 60_000
    persistence = FakePersistence()
    persistence.put("lead", header("lead"), [ev("turn/start", 0, T0, {"turn": "t0"})])
    m1 = [ev("turn/start", 0, T0 + 60_000, {"turn": "a"})]
    m1.append(_usage(1, T0 + 61_000, "a", 0, 1_200_000, 84_000))
    persistence.put("m1", header("m1", parent="lead"), m1)
    service = TimelineService(FakeContext(sessionPersistence=persistence).get, clock=lambda: now)
    client = TestClient(make_app(service))
    board = client.get(f"{PREFIX}/panel", params={"session": "lead"}).text

    def figures(html: str) -> dict[str, str]:
        found = re.findall(
            r'<div (?:hx-swap-oob="true" )?class="tokens" id="(lane-\d+)-tokens"[^>]*>(.*?)</div>',
            html,
        )
        return {lane: unescape(text) for lane, text in found}

    assert figures(board) == {
        "lane-0": "",
        "lane-1": "1.2M\u00a0in · 84k\u00a0out · 99\u00a0%\u00a0cached",
    }
    persistence.append("m1", [_usage(2, T0 + 62_000, "a", 1, 1_300_000, 16_000)])
    params = {"session": "lead", "v": _version(board), "b": _token(board)}
    delta = client.get(f"{PREFIX}/panel/board", params=params)
    assert delta.headers.get("X-Board-Delta") == "1"
    assert figures(delta.text) == {"lane-1": "2.5M\u00a0in · 100k\u00a0out · 99\u00a0%\u00a0cached"}
    assert 'id="lane-1-name"' not in delta.text and 'class="name"' not in delta.text
    # the lead's first model call: its figure appears, still without its name cell
    persistence.append("lead", [_usage(1, T0 + 63_000, "t0", 0, 0, 500)])
    params = {"session": "lead", "v": _version(delta.text), "b": _token(delta.text)}
    first = client.get(f"{PREFIX}/panel/board", params=params)
    assert first.headers.get("X-Board-Delta") == "1"
    assert figures(first.text) == {"lane-0": "40\u00a0in · 500\u00a0out · 0\u00a0%\u00a0cached"}
    assert 'class="name"' not in first.text


def test_the_panels_markup_caches_keep_their_limits_while_a_lane_grows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each append makes a new version of the growing lane (the old one is never asked
    for again): the lanes' and task rows' caches stay within their entries and their
    markup size however many polls follow appends, and the board is still right."""
    import dsh_task_gantt.panel as panel_module
    from dsh_task_gantt.service import TimelineService
    from tests.kit.fakehost import FakeContext, FakePersistence, ev, header

    monkeypatch.setattr(panel_module, "LANE_CACHE_SIZE", 6)
    monkeypatch.setattr(panel_module, "LANE_CACHE_CHARS", 40_000)
    monkeypatch.setattr(panel_module, "TASK_CACHE_CHARS", 1)
    monkeypatch.setattr(panel_module, "CHUNK_CACHE_SIZE", 5)
    monkeypatch.setattr(panel_module, "CHUNK_CACHE_CHARS", 20_000)
    now = T0 + 60 * 60_000
    persistence = FakePersistence()
    persistence.put("lead", header("lead"), [ev("turn/start", 0, T0, {"turn": "t0"})])
    persistence.put("m1", header("m1", parent="lead"), [])
    service = TimelineService(FakeContext(sessionPersistence=persistence).get, clock=lambda: now)
    app = make_app(service)
    client = TestClient(app)
    seq = 0
    for n in range(25):
        start = T0 + n * 60_000
        persistence.append("m1", [ev("turn/start", seq, start, {"turn": f"t{n}"})])
        persistence.append("m1", [ev("turn/end", seq + 1, start + 30_000, {"turn": f"t{n}"})])
        seq += 2
        for width in ("400", "1200"):
            board = client.get(f"{PREFIX}/panel/board", params={"session": "lead", "w": width})
            assert board.status_code == 200
        lanes = app.panel._lanes
        assert len(lanes) <= 6
        assert lanes.weight <= 40_000 or len(lanes) == 1
        assert len(app.panel._tasks) <= 1
        chunks = app.panel._chunks
        assert len(chunks) <= 5
        assert chunks.weight <= 20_000 or len(chunks) == 1
    # What the bounded caches answered is what a fresh panel draws.
    fresh = TestClient(make_app(service)).get(
        f"{PREFIX}/panel/board", params={"session": "lead", "w": "1200"}
    )
    # (the token and when it was drawn name the answer, not what it draws)
    untokened = lambda h: re.sub(r'id="board-(token|drawn)" name="\w+" value="[^"]*"', "", h)  # noqa: E731
    assert untokened(board.text) == untokened(fresh.text)


def test_a_lanes_versions_share_the_chunks_an_append_left_unchanged() -> None:
    """A live lane gets a new version every append, and the lane memo keeps a few of
    them: the chunks before the append's are the very same objects in each (memory that
    grows with the appends, not with versions times the history)."""
    from dsh_task_gantt.service import TimelineService
    from tests.kit.fakehost import FakeContext, FakePersistence, ev, header

    now = T0 + 60 * 60_000
    persistence = FakePersistence()
    persistence.put("lead", header("lead"), [ev("turn/start", 0, T0, {"turn": "t0"})])
    events = []
    for n in range(50):
        start = T0 + n * 60_000
        events += [ev("turn/start", 2 * n, start, {"turn": f"t{n}"})]
        events += [ev("turn/end", 2 * n + 1, start + 30_000, {"turn": f"t{n}"})]
    persistence.put("m1", header("m1", parent="lead"), events)
    service = TimelineService(FakeContext(sessionPersistence=persistence).get, clock=lambda: now)
    app = make_app(service)
    client = TestClient(app)

    def m1_version() -> tuple[Any, Any]:
        assert (
            client.get(f"{PREFIX}/panel/board", params={"session": "lead", "w": "1200"}).status_code
            == 200
        )
        return next(v for _, v in reversed(app.panel._lanes.items()) if v[0].lane_id == "m1")

    old_row, old_shape = m1_version()
    start = T0 + 50 * 60_000
    persistence.append("m1", [ev("turn/start", 100, start, {"turn": "t50"})])
    persistence.append("m1", [ev("turn/end", 101, start + 30_000, {"turn": "t50"})])
    new_row, new_shape = m1_version()
    assert new_row is not old_row and len(old_row.chunks) > 2
    kept = [c for c in new_row.chunks if c in old_row.chunks]
    assert len(kept) >= len(old_row.chunks) - 1
    by_id = {c.dom_id: c for c in old_row.chunks}
    assert all(c is by_id[c.dom_id] for c in kept)
    pieces = {p.id: p for p in old_shape.chunks}
    assert all(p is pieces[p.id] for p in new_shape.chunks if p.id in {c.dom_id for c in kept})


def test_a_team_whose_log_could_not_be_read_keeps_polling_until_it_is_read() -> None:
    """A member's log that could not be read (slow or locked just then) makes no frozen
    board: the panel keeps polling, and once every log is read a frozen team's board
    stops the polling (htmx's 286) as any frozen team's does."""
    from dsh_task_gantt.service import TimelineService
    from tests.kit.fakehost import FakeContext, FakePersistence, ev, header

    now = T0 + 10 * 60_000
    persistence = FakePersistence()
    lead = [ev("turn/start", 0, T0, {"turn": "t0"}), ev("turn/end", 1, T0 + 5_000, {"turn": "t0"})]
    persistence.put("lead", header("lead"), lead)
    mate = [ev("turn/start", 0, T0 + 1_000, {"turn": "a"})]
    persistence.put("m1", header("m1", parent="lead"), mate)
    persistence.fail_read.add("lead")
    service = TimelineService(FakeContext(sessionPersistence=persistence).get, clock=lambda: now)
    client = TestClient(make_app(service))
    page = client.get(f"{PREFIX}/panel", params={"session": "lead"})
    assert page.status_code == 200 and 'hx-trigger="every' in page.text
    board = client.get(f"{PREFIX}/panel/board", params={"session": "lead"})
    assert board.status_code == 200 and "could not read the log" in board.text
    persistence.fail_read.clear()
    read = client.get(f"{PREFIX}/panel/board", params={"session": "lead"})
    assert read.status_code == 286 and "could not read the log" not in read.text
    page = client.get(f"{PREFIX}/panel", params={"session": "lead"})
    assert 'hx-trigger="every' not in page.text
