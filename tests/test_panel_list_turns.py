"""The list view's "Turns" switch: off, the list is messages, prompts and task moves as
before; on, each turn is an item too (its member, its length, its tokens), in time order.
The switch rides in the view form like ``list``, so polls and reloads keep it, and a
poll after an append sends the new items alone."""

from __future__ import annotations

import re
from html import unescape
from typing import Any

from starlette.testclient import TestClient

from tests.kit.boardteams import PREFIX, T0, FakeProvider, TeamBuilder, make_app

MIN = 60_000
NB = "\u00a0"


def _spent(read: int, out: int, steps: int = 2) -> dict[str, int]:
    return {
        "input": 40,
        "cacheRead": read,
        "cacheWrite": 0,
        "output": out,
        "reasoning": 0,
        "steps": steps,
        "stepsWithoutUsage": 0,
    }


def _team() -> TeamBuilder:
    """Two members: a turn with usage, one without, one still going, and a message."""
    team = TeamBuilder(names=("lead", "ana"), live=True, now=T0 + 30 * MIN)
    team.turn("lead", T0, T0 + 45_000, _spent(1_200_000, 84_000))
    team.message("lead", "ana", T0 + 50_000, "Please parse the logs.", msg_id="m1")
    team.turn("ana", T0 + 60_000, T0 + 3 * MIN)  # its log has no usage
    team.turn("ana", T0 + 10 * MIN, None, _spent(9_000, 700))
    return team


def _client(team: TeamBuilder) -> TestClient:
    return TestClient(make_app(FakeProvider(team)))


def _list(html: str) -> str:
    """The list region as drawn (up to the end of its items)."""
    start = html.index('<div class="list" id="list"')
    return html[start : html.index("</ol>", start)]


def _items(html: str) -> list[str]:
    """Each list item's text, as a reader hears it (spaces folded, no-break ones kept)."""
    found = re.findall(r'<li class="item[^"]*"[^>]*>(.*?)</li>', _list(html), re.S)
    texts = (unescape(re.sub(r"<[^>]+>", " ", item)) for item in found)
    return [re.sub(r"[ \t\n]+", " ", text).strip() for text in texts]


def _form_value(html: str, name: str) -> str:
    found = re.search(rf'<input type="hidden" name="{name}" value="([^"]*)"', html)
    assert found, name
    return found.group(1)


def _pressed(html: str) -> str:
    found = re.search(r'id="turns-toggle" aria-pressed="(true|false)"', html)
    assert found
    return found.group(1)


def _poll(client: TestClient, held: str, **view: str) -> Any:
    version = re.search(r'id="board-version" name="v" value="([^"]*)"', held)
    token = re.search(r'id="board-token" name="b" value="([^"]*)"', held)
    assert version and token
    params = {"session": "s-lead", "v": unescape(version.group(1)), "b": token.group(1), **view}
    return client.get(f"{PREFIX}/panel/board", params=params)


def test_the_switch_is_off_by_default_and_the_list_is_as_before() -> None:
    html = _client(_team()).get(f"{PREFIX}/panel", params={"session": "s-lead", "list": "1"}).text
    assert _pressed(html) == "false" and _form_value(html, "turns") == ""
    assert [t.split(" ", 1)[1] for t in _items(html)] == ["lead → ana : Please parse the logs."]
    assert "turn ·" not in _list(html)


def test_on_each_turn_is_an_item_with_its_member_length_and_tokens_in_time_order() -> None:
    params = {"session": "s-lead", "list": "1", "turns": "1"}
    html = _client(_team()).get(f"{PREFIX}/panel", params=params).text
    assert _pressed(html) == "true" and _form_value(html, "turns") == "1"
    assert [t.split(" ", 1)[1] for t in _items(html)] == [
        f"lead turn · 45 s · 1.2M{NB}in · 84k{NB}out · 99{NB}%{NB}cached",
        "lead → ana : Please parse the logs.",
        "ana turn · 2 min",  # no usage: no figure at all, never "0"
        f"ana turn · still going · 9k{NB}in · 700{NB}out · 99{NB}%{NB}cached",
    ]
    assert re.search(r"\b0\xa0in\b", html) is None
    # each in its member's colour, its figure spelled out in full on hover
    assert '<span class="who c0 v0">lead</span> turn' in html
    assert 'title="input 40, cache read 1,200,000, cache write 0, output 84,000' in html


def test_turns_without_the_list_draw_nothing_and_the_switch_waits_in_the_form() -> None:
    html = _client(_team()).get(f"{PREFIX}/panel", params={"session": "s-lead", "turns": "1"}).text
    assert _form_value(html, "turns") == "1"  # kept for when the list is opened
    start = html.index('<div class="list" id="list"')
    assert html[start : html.index("</div>", start)].strip().endswith('"Timeline as a list">')
    assert 'id="turns-toggle"' not in html and "item-turn" not in html


def test_a_poll_keeps_the_switch_on_and_appends_a_new_turn_alone() -> None:
    team = _team()
    client = _client(team)
    view = {"list": "1", "turns": "1"}
    page = client.get(f"{PREFIX}/panel", params={"session": "s-lead", **view}).text
    team.turn("lead", T0 + 20 * MIN, T0 + 21 * MIN, _spent(50_000, 2_000))
    team.now += 5_000
    poll = _poll(client, page, **view)
    assert poll.headers.get("X-Board-Delta") == "1"
    # Only the new item, appended to the items: not the list, not the switch again.
    assert 'id="list"' not in poll.text and 'id="turns-toggle"' not in poll.text
    appended = re.findall(r'<div hx-swap-oob="beforeend:#list-items">(.*?)</div>', poll.text, re.S)
    assert len(appended) == 1 and "lead</span> turn · 1 min" in appended[0]
    assert f"50k{NB}in · 2k{NB}out" in appended[0]
    # A whole board for the same view (a reload, a poll without a token) keeps it on.
    whole = client.get(f"{PREFIX}/panel/board", params={"session": "s-lead", **view}).text
    assert _pressed(whole) == "true"
    assert sum("turn ·" in item for item in _items(whole)) == 4


def test_a_running_turn_that_ends_is_swapped_alone() -> None:
    team = _team()
    client = _client(team)
    view = {"list": "1", "turns": "1"}
    page = client.get(f"{PREFIX}/panel", params={"session": "s-lead", **view}).text
    spans = team.lanes["ana"]["spans"]
    running = next(s for s in spans if s["kind"] == "turn" and s["end"] is None)
    running["end"] = T0 + 12 * MIN
    poll = _poll(client, page, **view)
    assert poll.headers.get("X-Board-Delta") == "1"
    swapped = re.findall(
        r'<li hx-swap-oob="true" class="item item-turn" id="li-[0-9a-f]+">', poll.text
    )
    assert len(swapped) == 1 and "ana</span> turn · 2 min" in poll.text
    assert "beforeend:#list-items" not in poll.text and 'id="list"' not in poll.text


def test_a_full_page_slides_by_deleting_its_oldest_item_and_appending_the_new_one() -> None:
    """Page 0 is the newest 50: an append moves the window by one, not the whole list."""
    team = TeamBuilder(names=("lead", "ana"), live=True, now=T0 + 200 * MIN)
    for n in range(60):
        team.turn("ana", T0 + n * MIN, T0 + n * MIN + 20_000)
    client = _client(team)
    view = {"list": "1", "turns": "1"}
    page = client.get(f"{PREFIX}/panel", params={"session": "s-lead", **view}).text
    oldest = re.findall(r'<li class="item item-turn" id="(li-[0-9a-f]+)"', page)[0]
    team.turn("ana", T0 + 100 * MIN, T0 + 100 * MIN + 30_000)
    poll = _poll(client, page, **view)
    assert poll.headers.get("X-Board-Delta") == "1"
    assert f'<div id="{oldest}" hx-swap-oob="delete"></div>' in poll.text
    assert poll.text.count("beforeend:#list-items") == 1 and 'id="list"' not in poll.text


def test_with_the_switch_off_a_new_message_is_appended_too() -> None:
    team = _team()
    client = _client(team)
    page = client.get(f"{PREFIX}/panel", params={"session": "s-lead", "list": "1"}).text
    team.message("ana", "lead", T0 + 25 * MIN, "Parsed.", msg_id="m2")
    poll = _poll(client, page, list="1")
    assert poll.headers.get("X-Board-Delta") == "1"
    assert 'id="list"' not in poll.text
    appended = re.findall(r'<div hx-swap-oob="beforeend:#list-items">(.*?)</div>', poll.text, re.S)
    assert len(appended) == 1 and 'data-msg="m2"' in appended[0]
    assert "turn ·" not in poll.text


def test_a_turns_member_name_is_escaped_in_the_list() -> None:
    evil = '<img src=x onerror="alert(1)">'
    team = TeamBuilder(names=("lead", evil), live=False)
    team.turn(evil, T0, T0 + 10_000, _spent(100, 10))
    params = {"session": "s-lead", "list": "1", "turns": "1"}
    html = _client(team).get(f"{PREFIX}/panel", params=params).text
    assert "<img src=x" not in html
    assert "&lt;img src=x onerror=&#34;alert(1)&#34;&gt;</span> turn · 10 s" in html


def test_replayed_the_list_turns_to_the_page_holding_the_moment_turns_counted() -> None:
    team = TeamBuilder(names=("lead", "ana"), live=False)
    for n in range(60):
        team.message("lead", "ana", T0 + n * MIN, f"note {n}", msg_id=f"m{n}")
        team.turn("ana", T0 + n * MIN + 1_000, T0 + n * MIN + 31_000, _spent(1_000, 100))
    client = _client(team)
    at = T0 + 5 * MIN + 2_000  # just after the sixth turn began
    base = {"session": "s-lead", "list": "1", "at": str(at)}
    off = client.get(f"{PREFIX}/panel", params=base).text
    on = client.get(f"{PREFIX}/panel", params={**base, "turns": "1"}).text
    assert "page 1 of 2" in off  # 60 messages: 2 pages
    # 120 items: the sixth note and turn are on the oldest of 3 pages
    assert "page 1 of 3" in on and "note 5<" in on
    items = _items(on)
    assert any(
        item.endswith(f"ana turn · 30 s · 1k{NB}in · 100{NB}out · 96{NB}%{NB}cached")
        for item in items
    )
    moment = client.get(f"{PREFIX}/panel/moment", params={**base, "turns": "1"}).text
    assert 'data-list-page="2"' in moment and "note 5<" in moment


def test_a_turns_figure_comes_from_its_logs_usage() -> None:
    """Through the real fold: a model call's usage chunk is the turn's figure."""
    from dsh_task_gantt.service import TimelineService
    from tests.kit.fakehost import FakeContext, FakePersistence, ev, header

    persistence = FakePersistence()
    lead = [ev("turn/start", 0, T0, {"turn": "t0"}), ev("turn/end", 1, T0 + 5_000, {"turn": "t0"})]
    persistence.put("lead", header("lead"), lead)
    usage = {"inputTokens": 40, "outputTokens": 84_000, "cacheReadTokens": 1_200_000}
    chunk = {"turn": "a", "step": 0, "chunk": {"type": "usage", "usage": usage}}
    m1 = [
        ev("turn/start", 0, T0 + 60_000, {"turn": "a"}),
        ev("assistant/chunk", 1, T0 + 61_000, chunk),
        ev("turn/end", 2, T0 + 90_000, {"turn": "a"}),
    ]
    persistence.put("m1", header("m1", parent="lead"), m1)
    service = TimelineService(
        FakeContext(sessionPersistence=persistence).get, clock=lambda: T0 + 10 * MIN
    )
    params = {"session": "lead", "list": "1", "turns": "1"}
    html = TestClient(make_app(service)).get(f"{PREFIX}/panel", params=params).text
    turns = [item for item in _items(html) if " turn · " in item]
    assert len(turns) == 2
    assert turns[0].endswith("turn · 5 s")  # the lead's log names no usage
    assert turns[1].endswith(f"turn · 30 s · 1.2M{NB}in · 84k{NB}out · 99{NB}%{NB}cached")
