"""The panel at a glance, in real Chromium against a real uvicorn server on loopback:
the key, what each member is doing now, and the small things a newcomer trips on (the
replay cursor in the list view, the axis beside an open detail, UTC before local time).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import pytest

from dsh_task_gantt import panel as panel_module
from dsh_task_gantt.board import view_model
from tests.kit import browser as browser_kit
from tests.kit import fixture_team
from tests.kit.boardteams import T0, FakeProvider, TeamBuilder, demo_team, make_app
from tests.kit.browser import CHROMIUM, ONE_POLL_MS, SIDEBAR, WIDE, Server

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's /usr/bin/chromium is not installed"),
]

browser = browser_kit.browser
MINUTE = 60_000
LOOKS = [
    pytest.param(view, scheme, id=f"{view['width']}-{scheme}")
    for view in (SIDEBAR, WIDE)
    for scheme in ("light", "dark")
]


class Page:
    """A page in a context of its own (viewport, colour scheme, time zone, scripts), with
    the errors it logs."""

    def __init__(self, browser: Any, viewport: dict[str, int], **options: Any) -> None:
        self.context = browser.new_context(viewport=viewport, **options)
        self.context.set_default_timeout(5_000)
        self.page = self.context.new_page()
        self.errors: list[str] = []
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda exc: self.errors.append(str(exc)))


@pytest.fixture
def pages(browser: Any) -> Iterator[list[Page]]:
    made: list[Page] = []
    yield made
    for page in made:
        page.context.close()


def _open(pages: list[Page], browser: Any, viewport: dict[str, int], **options: Any) -> Any:
    page = Page(browser, viewport, **options)
    pages.append(page)
    return page


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """The panel's clock (the durations it writes), set by the test."""
    now = {"ms": T0 + 40 * MINUTE}
    monkeypatch.setattr(panel_module, "now_ms", lambda: now["ms"])
    return now


# -- the key -----------------------------------------------------------------------


@pytest.mark.parametrize(("viewport", "scheme"), LOOKS)
def test_the_key_opens_and_shuts_by_keyboard_and_pointer_and_stays_as_left_across_polls(
    browser: Any, pages: list[Page], viewport: dict[str, int], scheme: str, clock: dict[str, int]
) -> None:
    team = demo_team()
    with Server(make_app(FakeProvider(team))) as server:
        page = _open(pages, browser, viewport, color_scheme=scheme).page
        page.goto(server.url())
        summary = page.locator("#key > summary")
        legend = page.locator("#key .key-list")
        assert summary.inner_text() == "Key" and summary.is_visible() and legend.is_hidden()
        assert summary.bounding_box()["height"] < 24  # one line
        # the keyboard reaches it from the page's start, and opens it
        page.locator("body").focus()
        for _ in range(12):
            page.keyboard.press("Tab")
            if page.evaluate("document.activeElement.matches('#key > summary')"):
                break
        assert page.evaluate("document.activeElement.matches('#key > summary')")
        page.keyboard.press("Enter")
        assert legend.is_visible()
        for words in ("sent", "received", "your prompt", "pending", "a turn", "an open turn",
                      "an aggregate", "the now-line", "hatched", "blocked", "ready",
                      "in progress", "completed", "deleted"):  # fmt: skip
            assert words in legend.inner_text(), words
        # the real glyphs, drawn: each has a size and sits inside the viewport
        for glyph in page.locator(
            "#key .k-mark, #key .k-turn, #key .key-now, #key .key-swatch"
        ).all():
            box = glyph.bounding_box()
            assert box and box["width"] >= 1 and box["height"] >= 8
            assert box["x"] >= 0 and box["x"] + box["width"] <= viewport["width"]
        assert page.locator("#key .k-mark.sent:not(.pending)").inner_text() == "▲"
        assert page.locator("#key .k-mark.received").inner_text() == "▼"
        assert page.locator("#key .k-mark.prompt").inner_text() == "◆"
        # a live poll that changes the board leaves it open
        team.message("lead", "ui", team.now - 1_000, "a new message", msg_id="key-poll")
        team.now += 1_000
        page.locator('.mark[data-msg="key-poll"]').first.wait_for(
            state="attached", timeout=ONE_POLL_MS
        )
        assert legend.is_visible()
        page.keyboard.press("Space")
        assert legend.is_hidden()
        summary.click()
        assert legend.is_visible()
        summary.click()
        assert legend.is_hidden()
        # the board's marks are not the key's: nothing that counts marks counts these
        assert page.locator("#key .mark, #key .turn").count() == 0
    assert pages[0].errors == []


@pytest.mark.parametrize(("viewport", "scheme"), LOOKS)
def test_the_key_shows_the_task_rows_marks_in_words_and_their_own_glyphs(
    browser: Any, pages: list[Page], viewport: dict[str, int], scheme: str
) -> None:
    with Server(make_app(FakeProvider(demo_team()))) as server:
        page = _open(pages, browser, viewport, color_scheme=scheme).page
        page.goto(server.url())
        page.locator("#key > summary").click()
        legend = page.locator("#key .key-list")
        text = legend.inner_text()
        for words in ("open blockers", "a task's status", "red underline", "critical path",
                      "a link: a blocker finished", "5 done", "finished tasks folded",
                      "task moves"):  # fmt: skip
            assert words in text, words
        # every action glyph a task row can draw, each with its action's word
        moves = dict(
            page.evaluate(
                "() => [...document.querySelectorAll('#key .k-move')].map(g =>"
                " [g.textContent, g.parentElement.textContent.replace(g.textContent, '').trim()])"
            )
        )
        assert set(moves) == set(view_model._ACTION_GLYPHS.values()) | {"•"}
        for action, glyph in view_model._ACTION_GLYPHS.items():
            assert action.replace("-", " ") in moves[glyph], (action, moves[glyph])
        assert moves["•"] == "updated"
        assert page.locator("#key .k-blockers").inner_text() == "⊘2"
        # each drawn: a size, inside the viewport, and no two entries on top of each other
        for mark in page.locator(
            "#key .k-blockers, #key .k-dot, #key .k-overlap, #key .k-critical, #key .k-link,"
            " #key .k-fold, #key .k-move"
        ).all():
            box = mark.bounding_box()
            assert box and box["width"] >= 3 and box["height"] >= 3, mark.inner_html()
            assert box["x"] >= 0 and box["x"] + box["width"] <= viewport["width"]
        boxes = [b for b in (li.bounding_box() for li in legend.locator("> li").all()) if b]
        for a, b in itertools.combinations(boxes, 2):
            apart = (
                a["x"] + a["width"] <= b["x"] + 0.5
                or b["x"] + b["width"] <= a["x"] + 0.5
                or a["y"] + a["height"] <= b["y"] + 0.5
                or b["y"] + b["height"] <= a["y"] + 0.5
            )
            assert apart, (a, b)
        # the board's marks are not the key's: the rows' own classes are not in it
        assert (
            page.locator(
                "#key .chip-blockers, #key .task-overlap, #key .task-link, #key .move,"
                " #key .done-fold, #key [data-done-fold]"
            ).count()
            == 0
        )
    assert pages[0].errors == []


def test_the_key_reads_without_script(browser: Any, pages: list[Page]) -> None:
    with Server(make_app(FakeProvider(demo_team()))) as server:
        page = _open(pages, browser, SIDEBAR, java_script_enabled=False).page
        page.goto(server.url())
        page.locator("#key > summary").click()
        assert "your prompt" in page.locator("#key .key-list").inner_text()


# -- now, per lane -----------------------------------------------------------------


def _now_texts(page: Any) -> dict[str, str]:
    return dict(
        page.evaluate(
            "() => [...document.querySelectorAll('.lane')].map(l => [l.dataset.lane,"
            " (l.querySelector('.now-state') || {}).textContent || ''])"
        )
    )


@pytest.mark.parametrize(("viewport", "scheme"), LOOKS)
def test_each_lane_says_what_its_member_is_doing_now_and_an_append_changes_it(
    browser: Any, pages: list[Page], viewport: dict[str, int], scheme: str, clock: dict[str, int]
) -> None:
    team = TeamBuilder(names=("lead", "ui", "docs", "setup", "broken"))
    now = team.now
    clock["ms"] = now
    team.turn("lead", now - 3 * MINUTE, None)
    team.turn("ui", now - 20 * MINUTE, now - 12 * MINUTE)
    team.turn("docs", now - 30 * MINUTE, now - 29 * MINUTE)
    team.lanes["setup"]["phase"] = "provisioning"
    team.lanes["broken"]["phase"] = "failed"
    with Server(make_app(FakeProvider(team))) as server:
        page = _open(pages, browser, viewport, color_scheme=scheme).page
        page.goto(server.url())
        assert _now_texts(page) == {
            "lead": "in a turn · 3 min",
            "ui": "idle · 12 min",
            "docs": "idle · 29 min",
            "setup": "provisioning",
            "broken": "failed",
        }
        assert page.locator("#status .working").inner_text() == "1 of 5 working"
        # each is seen: inside its name cell, one line, not cut to nothing (measured in
        # one go inside the page: a poll swaps the cells)
        boxes = page.evaluate(
            "() => [...document.querySelectorAll('.lane .now-state')].map(s => {"
            " const b = s.getBoundingClientRect(), c = s.parentElement.getBoundingClientRect();"
            " return [{x: b.x, width: b.width, height: b.height}, {x: c.x, width: c.width}]; })"
        )
        assert len(boxes) == 5
        for box, cell in boxes:
            assert box["height"] < 18 and box["width"] > 20
            assert (
                cell["x"] <= box["x"] and box["x"] + box["width"] <= cell["x"] + cell["width"] + 1
            )
        # ui starts a turn: the next poll says so, and the count follows
        clock["ms"] = team.now = now + 2 * MINUTE
        team.turn("ui", team.now - 1_000, None)
        page.wait_for_function(
            "() => document.querySelector('[data-lane=ui] .now-state').textContent"
            " === 'in a turn · <1 min'",
            timeout=ONE_POLL_MS,
        )
        assert page.locator("#status .working").inner_text() == "2 of 5 working"
        assert _now_texts(page)["lead"] == "in a turn · 5 min"
    assert pages[0].errors == []


#: The words of a lane's name cell a reader sees: text nodes that take room on screen
#: (a node styled away, e.g. to font-size 0, is in the DOM but not read at a glance).
_SEEN_WORDS = """(selector) => {
  const cell = document.querySelector(selector);
  if (!cell) return null;
  const seen = [];
  const walk = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
  for (let node = walk.nextNode(); node; node = walk.nextNode()) {
    const range = document.createRange();
    range.selectNodeContents(node);
    const box = range.getBoundingClientRect();
    const style = getComputedStyle(node.parentElement);
    if (box.width > 0.5 && parseFloat(style.fontSize) > 0 && node.textContent.trim()) {
      seen.push(node.textContent.trim());
    }
  }
  return seen.join(' ');
}"""


def _seen_words(page: Any, lane: str) -> str | None:
    """The words a reader sees in a lane's name cell, read in one go inside the page. (A
    locator's evaluate finds the cell and runs the script in two steps; a poll that swaps
    the cell in between leaves it detached, and a detached cell's words take no room: a
    loaded CI machine read the lead's cell as empty that way.)"""
    words: str | None = page.evaluate(_SEEN_WORDS, f".lane[data-lane={lane}] > .name")
    return words


@pytest.mark.parametrize(("viewport", "scheme"), LOOKS)
def test_a_live_name_cell_says_what_its_member_does_once_and_keeps_its_label(
    browser: Any, pages: list[Page], viewport: dict[str, int], scheme: str, clock: dict[str, int]
) -> None:
    team = TeamBuilder(names=("lead", "ui", "docs"))
    now = team.now
    clock["ms"] = now
    team.lanes["lead"]["status"] = "running"
    team.lanes["ui"]["status"] = "active"
    team.lanes["ui"]["label"] = "Builds the panel"
    team.turn("lead", now - 3 * MINUTE, None)
    team.turn("ui", now - 20 * MINUTE, now - 12 * MINUTE)
    team.turn("docs", now - 30 * MINUTE, now - 24 * MINUTE)
    with Server(make_app(FakeProvider(team))) as server:
        page = _open(pages, browser, viewport, color_scheme=scheme).page
        page.goto(server.url())
        seen = {lane: _seen_words(page, lane) for lane in ("lead", "ui", "docs")}
        # each says its now once: no roster word ("idle", "running", "active") above it
        assert seen["docs"] == "docs idle · 24 min", seen
        assert seen["lead"].startswith("lead") and seen["lead"].endswith("turn · 3 min"), seen
        assert "running" not in seen["lead"], seen
        # the label (what the member is for) stays, whole in the tooltip, cut to one line
        assert seen["ui"] == "ui Builds the panel idle · 12 min", seen
        height = page.evaluate(
            "() => document.querySelector('.lane[data-lane=ui] > .name .lane-label')"
            ".getBoundingClientRect().height"
        )
        assert 8 < height < 18
        assert page.locator(".lane[data-lane=ui] .state").get_attribute("title") == (
            "Builds the panel"
        )
        # no empty line held for a lane with no roster word: chip, now, nothing between
        # (read in one go, in the page: a poll may swap the cell in between two reads)
        gap = page.evaluate(
            "() => { const cell = document.querySelector('.lane[data-lane=lead] > .name');"
            " return cell.querySelector('.now-state').getBoundingClientRect().top"
            " - cell.querySelector('.chip').getBoundingClientRect().bottom; }"
        )
        assert gap <= 3
        # replayed while live, the cell says what the member was doing then: all of it
        page.locator("#cursor").focus()
        page.keyboard.press("ArrowLeft")
        page.locator("#moment-data").wait_for(state="attached")
        page.wait_for_function("() => !document.querySelector('.lane .now-state:not(:empty)')")
        then = _seen_words(page, "docs")
        assert then.startswith("docs idle "), then
    assert pages[0].errors == []


def test_a_frozen_name_cell_keeps_its_roster_word(browser: Any, pages: list[Page]) -> None:
    """With no now-state (frozen), the roster's word is all the cell has: it stays."""
    team = TeamBuilder(names=("lead", "ui"), live=False)
    team.turn("ui", team.now - 20 * MINUTE, team.now - 12 * MINUTE)
    with Server(make_app(FakeProvider(team))) as server:
        page = _open(pages, browser, SIDEBAR).page
        page.goto(server.url())
        assert _seen_words(page, "ui") == "ui idle"


#: The contrast of an element's text against what is behind it (WCAG's ratio: its colour
#: and opacity over the first opaque background up its ancestors, the page's if none).
_CONTRAST = """(el) => {
  const rgba = (c) => {  // rgb(…) in 0-255, or color(srgb …) in 0-1 (what color-mix gives)
    const p = c.match(/[\\d.]+/g).map(Number);
    const k = c.startsWith('color(') ? 255 : 1;
    return [p[0] * k, p[1] * k, p[2] * k, p.length > 3 ? p[3] : 1];
  };
  const lin = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
  const lum = (c) => 0.2126 * lin(c[0]) + 0.7152 * lin(c[1]) + 0.0722 * lin(c[2]);
  const over = (top, under) => [0, 1, 2].map((k) => top[k] * top[3] + under[k] * (1 - top[3]));
  const layers = [];
  for (let e = el; e; e = e.parentElement) {
    const c = rgba(getComputedStyle(e).backgroundColor);
    if (c[3] > 0) { layers.push(c); if (c[3] >= 1) break; }
  }
  const dark = matchMedia('(prefers-color-scheme: dark)').matches;
  let back = dark ? [0, 0, 0] : [255, 255, 255];
  for (const c of layers.reverse()) back = over(c, back);
  let alpha = 1;
  for (let e = el; e; e = e.parentElement) alpha *= Number(getComputedStyle(e).opacity);
  const fg = rgba(getComputedStyle(el).color);
  const ink = over([fg[0], fg[1], fg[2], fg[3] * alpha], back);
  const [a, b] = [lum(ink) + 0.05, lum(back) + 0.05];
  return Math.max(a, b) / Math.min(a, b);
}"""


@pytest.mark.parametrize(("viewport", "scheme"), LOOKS)
def test_green_and_amber_words_and_glyphs_read_on_either_background(
    browser: Any, pages: list[Page], viewport: dict[str, int], scheme: str, clock: dict[str, int]
) -> None:
    """The live pill, a failed member's now-state and the task rows' completed and
    reopened glyphs: text at 4.5:1 at least, a glyph at 3:1 (WCAG's non-text)."""
    team = demo_team()
    clock["ms"] = team.now
    team.lanes["docs"]["phase"] = "failed"
    with Server(make_app(FakeProvider(team))) as server:
        page = _open(pages, browser, viewport, color_scheme=scheme).page
        page.goto(server.url())
        page.locator("#key > summary").click()
        for selector, least in ((".pill.live", 4.5), (".now-state.now-failed", 4.5),
                                (".move.a-completed", 3.0), (".move.a-reopened", 3.0),
                                ("#key .k-move.a-completed", 3.0),
                                ("#key .k-move.a-reopened", 3.0)):  # fmt: skip
            # found and measured in one go inside the page: a poll (or the width fit's
            # redraw) that swaps the element between the two would leave it detached,
            # and a detached element has no computed colours
            ratio = page.evaluate(
                f"(sel) => {{ const el = document.querySelector(sel);"
                f" return el ? ({_CONTRAST})(el) : null; }}",
                selector,
            )
            assert ratio is not None, selector
            assert ratio >= least, (selector, round(ratio, 2))
    assert pages[0].errors == []


# -- left from before --------------------------------------------------------------


def test_the_replay_cursor_is_there_in_the_list_view(browser: Any, pages: list[Page]) -> None:
    team = demo_team(live=False)
    with Server(make_app(FakeProvider(team))) as server:
        page = _open(pages, browser, SIDEBAR).page
        page.goto(server.url("session=s-lead&list=1"))
        cursor = page.locator("#cursor")
        assert cursor.is_visible()
        box = cursor.bounding_box()
        assert box and box["width"] > 200  # a bar across the list, not a hairline
        knob = page.locator("#cursor .cursor-knob").bounding_box()
        assert knob and knob["x"] > box["x"] + box["width"] * 0.8  # parked at the present
        # keys and a press on the bar set the moment; the list follows it
        cursor.focus()
        page.keyboard.press("ArrowLeft")
        page.wait_for_function("() => !!document.getElementById('moment-data')")
        assert page.locator("#moment .pill.replay").is_visible()
        box = cursor.bounding_box()  # the moment's line above moved it down
        assert box
        page.mouse.click(box["x"] + box["width"] * 0.25, box["y"] + box["height"] / 2)
        start, end = (
            int(page.locator("#board-meta").get_attribute(a))
            for a in ("data-extent-start", "data-extent-end")
        )
        page.wait_for_function(
            "([lo, hi]) => { const v = Number(document.getElementById('cursor')"
            ".getAttribute('aria-valuenow')); return v > lo && v < hi; }",
            arg=[start + (end - start) * 0.15, start + (end - start) * 0.35],
        )
        page.wait_for_function("() => !!document.querySelector('#list .item[aria-current=time]')")
        page.keyboard.press("Escape")
        page.wait_for_function("() => !document.getElementById('moment-data')")
    assert pages[0].errors == []


#: Where each " · " separator of the replayed moment's line sits, against the line's
#: left edge: a separator that opens a line reads as a stray mark.
_SEPARATORS = """() => {
  const line = document.querySelector('#moment .moment-line');
  const left = line.getBoundingClientRect().left;
  const found = [];
  const walk = document.createTreeWalker(line, NodeFilter.SHOW_TEXT);
  for (let node = walk.nextNode(); node; node = walk.nextNode()) {
    for (let i = node.textContent.indexOf('·'); i >= 0; i = node.textContent.indexOf('·', i + 1)) {
      const range = document.createRange();
      range.setStart(node, i);
      range.setEnd(node, i + 1);
      found.push(range.getBoundingClientRect().left - left);
    }
  }
  return found;
}"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_replayed_moment_reads_as_one_sentence_in_the_sidebar(
    browser: Any, pages: list[Page], scheme: str
) -> None:
    """The "invoices" fixture team (real logs, token use) replayed: its moment line wraps
    at 400 px, and no line of it starts with a separator."""
    from dsh_task_gantt.embedded import EmbeddedHost
    from dsh_task_gantt.fixturegen import TeamSpec

    sessions = fixture_team.FIXTURES / "sessions"
    team = TeamSpec.load(fixture_team.FIXTURES / "specs" / "invoices.json", root=str(sessions))
    claims = sorted(
        r.time for t in team.tasks for r in t.revisions if r.expected_action == "claimed"
    )
    with Server(EmbeddedHost(sessions)) as server:
        page = _open(pages, browser, SIDEBAR, color_scheme=scheme).page
        page.goto(server.url(f"session={team.lead_id}&at={claims[1] + 1_000}"))
        page.locator("#moment-data").wait_for(state="attached")
        line = page.locator("#moment .moment-line")
        assert "by then" in line.inner_text()  # the token figure is on it
        box = line.bounding_box()
        assert box and box["height"] > 30  # it wraps at this width
        separators = page.evaluate(_SEPARATORS)
        assert len(separators) >= 2
        assert all(x > 8 for x in separators), separators
        exit_box = page.locator("#moment [data-cursor-clear]").bounding_box()
        assert exit_box and exit_box["x"] + exit_box["width"] <= SIDEBAR["width"]
    assert pages[0].errors == []


#: The contrast between the darkest and the lightest pixel of a PNG (the ink of a line
#: of text and what is behind it, as painted), read back through a canvas.
_PIXEL_CONTRAST = """async (png) => {
  const img = new Image();
  img.src = 'data:image/png;base64,' + png;
  await img.decode();
  const canvas = document.createElement('canvas');
  [canvas.width, canvas.height] = [img.width, img.height];
  const ctx = canvas.getContext('2d');
  ctx.drawImage(img, 0, 0);
  const px = ctx.getImageData(0, 0, img.width, img.height).data;
  const lin = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
  let [lo, hi] = [1, 0];
  for (let i = 0; i < px.length; i += 4) {
    const y = 0.2126 * lin(px[i]) + 0.7152 * lin(px[i + 1]) + 0.0722 * lin(px[i + 2]);
    [lo, hi] = [Math.min(lo, y), Math.max(hi, y)];
  }
  return (hi + 0.05) / (lo + 0.05);
}"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_replayed_task_rows_words_are_painted_above_the_veiled_future(
    browser: Any, pages: list[Page], scheme: str
) -> None:
    """Replayed, each task row says at its right end what the task was then; that end
    lies in the dimmed future, and the words must still read there (as painted)."""
    import base64

    from dsh_task_gantt.embedded import EmbeddedHost
    from dsh_task_gantt.fixturegen import TeamSpec

    sessions = fixture_team.FIXTURES / "sessions"
    team = TeamSpec.load(fixture_team.FIXTURES / "specs" / "invoices.json", root=str(sessions))
    claims = sorted(
        r.time for t in team.tasks for r in t.revisions if r.expected_action == "claimed"
    )
    with Server(EmbeddedHost(sessions)) as server:
        page = _open(pages, browser, WIDE, color_scheme=scheme).page
        page.goto(server.url(f"session={team.lead_id}&at={claims[1] + 1_000}"))
        page.locator("#moment-data").wait_for(state="attached")
        # The rows are measured, then shot: not until the width fit's redraw has come (a
        # wide window asks for the board again after load; swapped in between, a row's
        # words would be detached). The team is frozen: nothing swaps after that.
        page.wait_for_load_state("networkidle")
        # (a task not created yet is faded on purpose: its words are not checked)
        words = page.locator(".row.task.at:not(.status-not-yet) .at-task")
        assert words.count() >= 4
        for n in range(words.count()):
            said = words.nth(n)
            box = said.bounding_box()
            assert box and box["width"] > 40
            png = base64.b64encode(said.screenshot()).decode()
            ratio = page.evaluate(_PIXEL_CONTRAST, png)
            assert ratio >= 4.5, (said.inner_text(), round(ratio, 2))
    assert pages[0].errors == []


#: How many pixels of an element's shot are near a colour (the now-line's red drawn at
#: full strength), counting only the pixels wholly inside the element's box: the shot is
#: cut at whole pixels around it, so a box starting at x = 1237.98 is shot from 1237, a
#: column that is the element's for 2 % and shows whatever lies just left of it (the
#: now-line passing by the words' left edge, not through them).
_PIXELS_NEAR = """async ([png, css, box]) => {
  const probe = document.createElement('i');
  probe.style.color = css;
  document.body.append(probe);
  const want = getComputedStyle(probe).color.match(/[\\d.]+/g).map(Number);
  probe.remove();
  const img = new Image();
  img.src = 'data:image/png;base64,' + png;
  await img.decode();
  const canvas = document.createElement('canvas');
  [canvas.width, canvas.height] = [img.width, img.height];
  const ctx = canvas.getContext('2d');
  ctx.drawImage(img, 0, 0);
  const px = ctx.getImageData(0, 0, img.width, img.height).data;
  const [x0, y0] = [Math.floor(box.x), Math.floor(box.y)];
  const [left, top] = [Math.ceil(box.x) - x0, Math.ceil(box.y) - y0];
  const right = Math.min(img.width, Math.floor(box.x + box.width) - x0);
  const bottom = Math.min(img.height, Math.floor(box.y + box.height) - y0);
  let near = 0;
  for (let y = top; y < bottom; y++) {
    for (let x = left; x < right; x++) {
      const i = (y * img.width + x) * 4;
      const d = Math.hypot(px[i] - want[0], px[i + 1] - want[1], px[i + 2] - want[2]);
      if (d < 40) near += 1;
    }
  }
  return near;
}"""


#: Holds the board's polls (``true``) or lets them go on (``false``): while held, a poll
#: the board's trigger fires is cancelled before it is sent (htmx:beforeRequest), as the
#: panel cancels one while a moment is asked for; the next one after is sent as usual.
_HOLD_POLLS = """(hold) => {
  if (!('pollsHeld' in window)) {
    window.addEventListener('htmx:beforeRequest', (ev) => {
      if (window.pollsHeld && ev.detail.elt === document.getElementById('board')) {
        ev.preventDefault();
        ev.stopImmediatePropagation();  // not counted as a board request by the panel
      }
    }, true);
  }
  window.pollsHeld = hold;
}"""


@pytest.mark.parametrize(("viewport", "scheme"), LOOKS)
def test_the_now_line_does_not_cut_through_the_task_rows_words_or_where_the_time_went(
    browser: Any, pages: list[Page], viewport: dict[str, int], scheme: str
) -> None:
    """The live demo team (real logs, appended to as it runs): the now-line runs down the
    whole chart; the words at a task row's end and "Where the time went" under the tasks
    are drawn over it, not under."""
    import base64

    from dsh_task_gantt.demo import DemoTeams
    from dsh_task_gantt.embedded import EmbeddedHost

    with DemoTeams.start(interval=1.0) as teams, Server(EmbeddedHost(teams.root)) as server:
        page = _open(pages, browser, viewport, color_scheme=scheme).page
        page.goto(server.url(f"session={teams.live_spec.lead_id}"))
        page.locator("#where-time > summary").click()
        now = page.locator("#board .now")
        now.wait_for(state="visible")
        # The team grows every second, so every poll redraws the rows and moves the line.
        # A look measures and shoots a dozen things: on a loaded machine that outlasts a
        # poll, and a look saw the board change every time, or shot a row's words just
        # as a poll swapped them out ("not attached to the DOM"). So the board's polls
        # are held while it looks (as the panel holds them while a moment is asked for):
        # what is looked at is one board, drawn by the panel.
        page.evaluate(_HOLD_POLLS, True)
        page.wait_for_function(
            "() => !document.querySelector('#board.htmx-request, #board.htmx-settling')"
        )
        red = page.evaluate(
            "() => getComputedStyle(document.querySelector('#board .now')).borderLeftColor"
        )

        def scene() -> Any:
            """What a poll changes: the board's version and where the now-line is."""
            return page.evaluate(
                "() => [document.getElementById('board-version').value,"
                " document.querySelector('#board .now')?.style.getPropertyValue('--open-t')]"
            )

        def red_pixels(target: Any) -> int:
            png = base64.b64encode(target.screenshot()).decode()
            # where it was shot (a shot scrolls it into view first)
            return int(page.evaluate(_PIXELS_NEAR, [png, red, target.bounding_box()]))

        def line_shown(shown: bool) -> None:
            now.evaluate("(el, shown) => { el.style.visibility = shown ? '' : 'hidden'; }", shown)

        def red_of_the_line(target: Any) -> int:
            """The red pixels the now-line adds to ``target``: shot with the line, less
            shot without it (a word whose own colour is near the line's red counts
            nothing by itself)."""
            with_line = red_pixels(target)
            line_shown(False)
            try:
                without = red_pixels(target)
            finally:
                line_shown(True)
            return with_line - without

        def look() -> list[tuple[str, int]]:
            """(what, red pixels the line adds) for each thing drawn where the now-line
            is, then the line's own red (the check can fail: the line, shot the same
            way, is red)."""
            line = now.bounding_box()
            assert line and line["height"] > 100
            seen = []
            for said in page.locator(".row.task .task-state:visible").all():
                box = said.bounding_box()
                assert box
                if box["x"] < line["x"] + 1 < box["x"] + box["width"]:
                    seen.append((said.inner_text(), red_of_the_line(said)))
            assert seen  # the live rows' words end where the now-line is
            where = page.locator("#where-time")
            box = where.bounding_box()
            assert box and box["x"] < line["x"] < box["x"] + box["width"]
            assert box["y"] + box["height"] <= line["y"] + line["height"]  # the line reaches it
            return [
                *seen,
                ("where the time went", red_of_the_line(where)),
                ("now", red_pixels(now)),  # the line alone, shot the same way
            ]

        before = scene()
        looked = look()
        assert scene() == before, "a poll redrew the board while it was looked at"
        page.evaluate(_HOLD_POLLS, False)
        *drawn_over, (_, line_red) = looked
        # a rounded corner's pixel may be red; a line through the words is a column
        assert all(red <= 4 for _, red in drawn_over), drawn_over
        assert line_red > 0
    assert pages[0].errors == []


def _overlapping_ticks(page: Any) -> list[tuple[str, str]]:
    boxes = page.evaluate(
        "() => [...document.querySelectorAll('#axis .tick')].map(t => {"
        " const r = t.getBoundingClientRect(); return [t.textContent, r.left, r.right]; })"
    )
    # Labels closer than this run together when read (a tick gets 46 px or more of room
    # for a label about 30 px wide).
    apart = 8
    return [(a[0], b[0]) for a, b in itertools.pairwise(boxes) if b[1] < a[2] + apart]


@pytest.mark.parametrize("scheme", ["dark", "light"])
def test_the_axis_labels_stay_apart_with_a_detail_open_in_a_wide_panel(
    browser: Any, pages: list[Page], scheme: str
) -> None:
    team = demo_team(live=False)
    with Server(make_app(FakeProvider(team))) as server:
        page = _open(pages, browser, WIDE, color_scheme=scheme).page
        page.goto(server.url())
        page.wait_for_load_state("networkidle")
        assert _overlapping_ticks(page) == []
        wide = int(page.locator("#board-meta").get_attribute("data-track-px"))
        page.locator(".mark.sent").first.click()
        page.locator("#detail .message-card").wait_for()
        page.wait_for_timeout(400)  # the width settles, and a board laid out for it comes
        page.wait_for_load_state("networkidle")
        assert _overlapping_ticks(page) == []
        narrow = int(page.locator("#board-meta").get_attribute("data-track-px"))
        assert narrow < wide * 0.8  # laid out again for the narrower track
        page.keyboard.press("Escape")
        page.wait_for_timeout(400)
        page.wait_for_load_state("networkidle")
        assert _overlapping_ticks(page) == []
        assert int(page.locator("#board-meta").get_attribute("data-track-px")) > narrow
    assert pages[0].errors == []


def test_no_time_is_shown_in_utc_before_the_page_writes_it_in_local_time(
    browser: Any, pages: list[Page]
) -> None:
    """In a time zone other than UTC: with panel.js held back, no time shows (its UTC
    text is not painted); once it runs, every time shows, in local time."""
    team = demo_team(live=False)
    with Server(make_app(FakeProvider(team))) as server:
        held = _open(pages, browser, SIDEBAR, timezone_id="Asia/Kolkata").page
        held.route("**/panel.js*", lambda route: route.abort())
        held.goto(server.url())
        times = held.locator("time[data-ms]:not([data-ms=''])")
        assert times.count() >= 5
        shown = held.evaluate(
            "() => [...document.querySelectorAll('time[data-ms]:not([data-ms=\"\"])')]"
            ".filter(t => getComputedStyle(t).visibility !== 'hidden').map(t => t.textContent)"
        )
        assert shown == []
        page = _open(pages, browser, SIDEBAR, timezone_id="Asia/Kolkata").page
        page.goto(server.url())
        first = page.locator("#axis time").first
        ms = int(first.get_attribute("data-ms"))
        local = page.evaluate(
            "ms => { const d = new Date(ms); return String(d.getHours()).padStart(2, '0')"
            " + ':' + String(d.getMinutes()).padStart(2, '0'); }",
            ms,
        )
        assert first.is_visible() and first.inner_text().startswith(local)
        hidden = page.evaluate(
            "() => [...document.querySelectorAll('time[data-ms]:not([data-ms=\"\"])')]"
            ".filter(t => getComputedStyle(t).visibility === 'hidden').length"
        )
        assert hidden == 0
    assert pages[1].errors == []


def test_a_step_to_an_event_in_the_same_second_changes_what_shows(
    browser: Any, pages: list[Page]
) -> None:
    team = demo_team(live=False)
    base = T0 + 20 * MINUTE + 100
    team.message("lead", "ui", base, "first of two", msg_id="near-1")
    team.message("ui", "lead", base + 250, "second of two", msg_id="near-2")
    with Server(make_app(FakeProvider(team))) as server:
        page = _open(pages, browser, SIDEBAR, timezone_id="Asia/Kolkata").page
        page.goto(server.url(f"session=s-lead&at={base}"))
        line = page.locator("#moment .moment-line time")
        first = line.inner_text()
        assert first.endswith(".100")  # local time, to the millisecond
        page.locator("#cursor").focus()
        page.keyboard.press("ArrowRight")
        page.wait_for_function(
            "at => Number(document.getElementById('moment-data').dataset.at) === at",
            arg=base + 250,
        )
        assert line.inner_text() != first and line.inner_text().endswith(".350")
    assert pages[0].errors == []
