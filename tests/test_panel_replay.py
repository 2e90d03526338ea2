"""Replay over HTTP: ``?at=`` on the panel and its board, and ``/panel/moment``.

The hand-made demo team behind the real route table (``make_app``); the moment's own
rules are in test_moment.py, the cursor in real Chromium in test_browser_replay.py.
"""

from __future__ import annotations

import html as html_text
import re
from urllib.parse import quote

import pytest
from starlette.testclient import TestClient

from dsh_task_gantt.board.moment import event_times
from tests.kit.boardteams import PREFIX, T0, FakeProvider, TeamBuilder, demo_team, make_app

MINUTE = 60_000
#: In the demo team: "Log reader" reopened by verify at 16 min, claimed again at 17.
REOPENED_AT = T0 + 16 * MINUTE + 30_000


def _client(team: TeamBuilder) -> TestClient:
    return TestClient(make_app(FakeProvider(team)))


def _value(html: str, element_id: str) -> str:
    found = re.search(rf'id="{element_id}" name="\w+" value="([^"]*)"', html)
    assert found, element_id
    return quote(html_text.unescape(found.group(1)))


def _task_texts(html: str) -> list[str]:
    found = re.findall(r'<span class="at-task">(.*?)</span>', html)
    return [re.sub(r"<[^>]+>", "", text) for text in found]


@pytest.mark.parametrize("route", ["/panel", "/panel/board", "/panel/moment"])
@pytest.mark.parametrize(
    "at",
    [
        "yesterday",
        "12abc",
        "2025-13-45T00:00:00Z",
        "9999999999999999",
        "-9999999999999999",
        "--5",  # more than one sign
        "%C2%B2",  # "²": a digit to str.isdigit, not to int()
        "%D9%A3",  # "٣", an Arabic-Indic digit
    ],
)
def test_a_malformed_moment_is_a_400(route: str, at: str) -> None:
    response = _client(demo_team(live=False)).get(f"{PREFIX}{route}?session=s-lead&at={at}")
    assert response.status_code == 400
    assert "at must be a time" in response.text


def test_a_step_other_than_prev_or_next_is_a_400() -> None:
    client = _client(demo_team(live=False))
    response = client.get(f"{PREFIX}/panel/moment?session=s-lead&at={T0}&step=sideways")
    assert response.status_code == 400


def test_the_page_at_a_moment_shows_the_board_as_it_stood_then() -> None:
    html = (
        _client(demo_team(live=False)).get(f"{PREFIX}/panel?session=s-lead&at={REOPENED_AT}").text
    )
    # the one-line summary in the live region, the moment kept for the next requests
    summary = re.search(r'<span class="moment-summary">([^<]*)</span>', html)
    assert summary is not None
    assert summary.group(1) == "4 of 7 members in a turn · tasks: 2 pending, 1 in progress"
    assert 'role="status" aria-live="polite"' in html
    assert f'name="at" value="{REOPENED_AT}">' in html  # enabled: every poll carries it
    assert re.search(r'role="slider"[^>]*aria-valuetext="2025-11-29 15:43:10 UTC"', html, re.S)
    # the task rows as of the moment: status, owner, revision, last action
    assert _task_texts(html) == [
        "pending · r4 · reopened by verify 15:42:40",
        "in progress · ui · r3 · claimed by ui 15:35:40",
        "pending · r1 · created by lead 15:28:40",
    ]
    assert 'class="row task at status-pending" id="task-0"' in html
    # the lanes: in a turn since, idle since, their last messages
    assert re.search(r'class="state at-idle"[^>]*>idle <span class="sr">since </span>'
                     r'<time data-ms="\d+" data-fmt="hms">15:38:40</time>', html)  # fmt: skip
    assert re.search(r'last sent at </span><time data-ms="\d+" data-fmt="hms">15:42:58</time>'
                     r" to host-data</span>", html)  # fmt: skip


def test_a_task_not_created_yet_says_so() -> None:
    html = (
        _client(demo_team(live=False)).get(f"{PREFIX}/panel?session=s-lead&at={T0 + MINUTE}").text
    )
    assert _task_texts(html) == ["not created yet"] * 3
    assert html.count("status-not-yet") == 3
    assert "tasks: 3 not created yet" in html


def test_a_moment_answers_only_the_name_cells_and_task_rows_never_the_marks() -> None:
    client = _client(demo_team(live=False))
    page = client.get(f"{PREFIX}/panel?session=s-lead")
    token = _value(page.text, "board-token")
    full = client.get(f"{PREFIX}/panel/moment?session=s-lead&at={REOPENED_AT}")
    answer = client.get(f"{PREFIX}/panel/moment?session=s-lead&at={REOPENED_AT}&b={token}")
    assert answer.status_code == 200
    assert answer.headers["HX-Reswap"] == "none" and answer.headers["X-Board-Delta"] == "1"
    # dimming after the moment is CSS: no mark or bar is sent again
    assert 'class="mark' not in answer.text and 'class="turn' not in answer.text
    assert answer.text.count('class="name" id="lane-') == 7
    assert answer.text.count('class="row task at ') == 3
    assert (
        'id="moment" class="moment" role="status" aria-live="polite" hx-swap-oob="innerHTML"'
        in (answer.text)
    )
    assert len(answer.content) < len(full.content) / 2
    # back to the present: the rows as they are now, no moment line
    token = _value(answer.text, "board-token")
    back = client.get(f"{PREFIX}/panel/moment?session=s-lead&b={token}")
    assert back.headers["X-Board-Delta"] == "1"
    assert "at-task" not in back.text and "moment-summary" not in back.text
    assert back.text.count('class="row task status-') == 3


def test_a_step_goes_to_the_next_or_previous_event_and_says_where_it_landed() -> None:
    team = demo_team(live=False)
    times = event_times(team.timeline())
    client = _client(team)
    at = T0 + 10 * MINUTE + 1
    after = min(t for t in times if t > at)
    before = max(t for t in times if t < at)
    for step, expected in (("next", after), ("prev", before)):
        answer = client.get(f"{PREFIX}/panel/moment?session=s-lead&at={at}&step={step}")
        assert f'data-at="{expected}"' in answer.text, step
    # the steps around the moment, for the arrow keys
    steps = re.search(r'data-steps="([^"]*)"', answer.text)
    assert steps is not None
    sent = [int(s) for s in steps.group(1).split()]
    assert [s for s in sent if s > before][:3] == [t for t in times if t > before][:3]
    assert [s for s in sent if s < before][-3:] == [t for t in times if t < before][-3:]
    first = times.index(sent[0])
    assert tuple(sent) == times[first : first + len(sent)]  # one unbroken run, ``before`` in it
    assert before in sent


def test_without_a_moment_the_board_says_nothing_of_replay() -> None:
    client = _client(demo_team(live=True))
    board = client.get(f"{PREFIX}/panel/board?session=s-lead").text
    assert "moment" not in board and "at-task" not in board and "at-" not in board
    page = client.get(f"{PREFIX}/panel?session=s-lead").text
    assert '<input type="hidden" name="at" value="" disabled>' in page  # never sent unset
    assert 'class="moment" role="status" aria-live="polite" hidden' in page


def test_a_poll_while_replaying_keeps_the_moment_and_brings_what_was_appended() -> None:
    team = demo_team(live=True)
    client = _client(team)
    at = REOPENED_AT
    page = client.get(f"{PREFIX}/panel?session=s-lead&at={at}")
    version, token = _value(page.text, "board-version"), _value(page.text, "board-token")
    query = f"session=s-lead&at={at}&v={version}&b={token}"
    assert client.get(f"{PREFIX}/panel/board?{query}").status_code == 204
    team.now += 5_000
    team.message("docs", "perf", team.now - 1_000, "late news", msg_id="fresh-1")
    poll = client.get(f"{PREFIX}/panel/board?{query}")
    assert poll.headers["X-Board-Delta"] == "1"
    assert 'data-msg="fresh-1"' in poll.text  # drawn (and dimmed in CSS: it is after T)
    assert f'data-at="{at}"' in poll.text  # the moment stays put
    # docs and perf sent and received after the moment: their name cells did not change
    assert 'id="lane-4-name"' not in poll.text and 'id="lane-6-name"' not in poll.text


def test_the_list_view_turns_to_the_page_holding_the_moment() -> None:
    team = TeamBuilder(names=("lead", "ui"), live=False)
    for n in range(120):
        team.message("lead", "ui", T0 + n * 10_000, f"note {n}", msg_id=f"m{n}")
    client = _client(team)
    html = client.get(f"{PREFIX}/panel?session=s-lead&list=1&at={T0 + 5 * 10_000}").text
    assert "note 5<" in html and "note 119<" not in html
    assert 'data-list-page="2"' in html
    html = client.get(f"{PREFIX}/panel?session=s-lead&list=1&at={T0 + 100 * 10_000}").text
    assert "note 100<" in html and 'data-list-page="0"' in html


def test_names_and_previews_at_a_moment_are_escaped() -> None:
    evil = '<img src=x onerror="alert(1)">'
    team = TeamBuilder(names=("lead", evil), live=False)
    team.turn(evil, T0, T0 + 10_000)
    team.message("lead", evil, T0 + 1_000, "<script>alert(2)</script>", msg_id="m1")
    team.task("t1", "<b>bold</b>", [(T0 + 500, "claimed", "in_progress", evil)])
    html = _client(team).get(f"{PREFIX}/panel?session=s-lead&at={T0 + 5_000}").text
    assert "<img src=x" not in html and "<script>alert" not in html and "<b>bold" not in html
    assert "to &lt;img src=x onerror=&#34;alert(1)&#34;&gt;" in html


def test_a_lane_state_says_utc_only_when_it_names_a_time() -> None:
    client = _client(demo_team(live=False))
    titles: list[str] = []
    for at in (T0 - MINUTE, T0 + 5 * MINUTE, REOPENED_AT):
        html = client.get(f"{PREFIX}/panel?session=s-lead&at={at}").text
        titles += re.findall(r'<span class="state at-\w+" title="([^"]*)"', html)
    assert any(not title.endswith(" UTC") for title in titles)  # "nothing yet" is there
    for title in titles:
        assert title.endswith(" UTC") == bool(re.search(r"\d\d:\d\d:\d\d", title)), title


def _moment_line(html: str) -> str:
    found = re.search(r'<p class="moment-line">(.*?)</p>', html, re.S)
    assert found is not None
    return html_text.unescape(re.sub(r"<[^>]+>", "", found.group(1)))


def test_steps_between_events_in_one_second_each_show_a_different_moment() -> None:
    """Two events 250 ms apart: stepping from one to the other changes the line that
    shows (its time, to the millisecond), not only the cursor's number."""
    team = demo_team(live=False)
    base = T0 + 20 * MINUTE + 100
    team.message("lead", "ui", base, "first of two", msg_id="near-1")
    team.message("ui", "lead", base + 250, "second of two", msg_id="near-2")
    client = _client(team)
    first = client.get(f"{PREFIX}/panel/moment?session=s-lead&at={base}").text
    second = client.get(f"{PREFIX}/panel/moment?session=s-lead&at={base}&step=next").text
    assert f'data-at="{base + 250}"' in second
    assert _moment_line(first) != _moment_line(second)
    assert ".100 UTC" in _moment_line(first) and ".350 UTC" in _moment_line(second)
    assert 'data-fmt="fullms"' in second
    # a moment alone in its second is written to the second, as before
    alone = client.get(f"{PREFIX}/panel/moment?session=s-lead&at={T0 + 3 * MINUTE + 30_500}")
    assert re.search(r"\d\d:\d\d:\d\d UTC", _moment_line(alone.text))
