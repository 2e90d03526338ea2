"""Token use in real Chromium at 400 and 1280 px, over the committed fixture team (real
zstd logs through the embedded host on loopback): each lane's total under its name, a
turn's tooltip, the team's total in the status line and on its start-page card, and the
replay figure. The expected figures are counted here from the raw logs, independently
of the reader (every line parsed, the rule of HOST §8 applied by hand)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import zstandard

from dsh_task_gantt.board.tokens import compact
from tests.kit import browser as browser_kit
from tests.kit import fixture_team
from tests.kit.browser import CHROMIUM, SIDEBAR, WIDE, Server, Watched

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's /usr/bin/chromium is not installed"),
]

browser = browser_kit.browser
alpha = fixture_team.alpha
alpha_server = fixture_team.alpha_server
PREFIX = "/plugins/dsh-task-gantt"


def _lines(path: Path) -> list[dict[str, Any]]:
    raw = zstandard.ZstdDecompressor().decompressobj(read_across_frames=True)
    text = raw.decompress(path.read_bytes())
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def counted_by_hand(path: Path) -> dict[str, int]:
    """A log's token totals: per (turn, step), the usage chunk, else the message's."""
    header, *events = _lines(path)
    cut = 0
    if header.get("isSeeded"):
        cut = max(
            (e["seq"] for e in events if e["type"] == "session/end-seed"),
            default=0,
        )
    chunks: dict[tuple[Any, Any], dict[str, int]] = {}
    messages: dict[tuple[Any, Any], dict[str, int] | None] = {}
    for e in events:
        d = e.get("data") or {}
        if e["seq"] < cut:
            continue
        step = (d.get("turn"), d.get("step"))
        if e["type"] == "assistant/chunk" and d["chunk"].get("type") == "usage":
            chunks[step] = d["chunk"]["usage"]
        elif e["type"] == "assistant/message":
            messages[step] = d.get("usage")
    total = {"in": 0, "cacheRead": 0, "out": 0}
    for step in chunks.keys() | messages.keys():
        usage = chunks.get(step) or messages.get(step)
        if usage is None:
            continue
        billed = usage["inputTokens"] + usage.get("cacheReadTokens", 0)
        total["in"] += billed + usage.get("cacheWriteTokens", 0)
        total["cacheRead"] += usage.get("cacheReadTokens", 0)
        total["out"] += usage["outputTokens"]
    return total


def words(total: dict[str, int]) -> str:
    cached = total["cacheRead"] * 100 // total["in"]
    nb = "\u00a0"  # each part's words kept together
    return (
        f"{compact(total['in'])}{nb}in · {compact(total['out'])}{nb}out · {cached}{nb}%{nb}cached"
    )


def team_total(spec: Any) -> dict[str, int]:
    total = {"in": 0, "cacheRead": 0, "out": 0}
    members = {m.id: m for m in [spec.lead, *spec.members] if m.rel_path is not None}
    for member_id in members:
        for k, v in counted_by_hand(Path(spec.log_path(member_id))).items():
            total[k] += v
    return total


@pytest.fixture(params=[SIDEBAR, WIDE], ids=lambda v: f"{v['width']}px")
def page_at(request: pytest.FixtureRequest, browser: Any) -> Iterator[Watched]:
    page = Watched(browser, request.param)
    yield page
    assert page.errors == [], page.errors
    page.close()


def _panel(server: Server, spec: Any, query: str = "") -> str:
    return f"http://127.0.0.1:{server.port}{PREFIX}/panel?session={spec.lead_id}{query}"


def test_lane_totals_under_the_names_and_the_team_total_in_the_status_line(
    page_at: Watched, alpha_server: Server, alpha: Any
) -> None:
    page = page_at.page
    page.goto(_panel(alpha_server, alpha))
    page.wait_for_selector("#status .tokens")
    lead = page.locator("#lane-0-name .tokens")
    assert lead.inner_text() == words(counted_by_hand(Path(alpha.log_path(alpha.lead_id))))
    # Inside its name cell, whole (the narrow cell wraps it, never cuts it). Measured in
    # one go inside the page: on a wide page the width fit's redraw swaps the cell once
    # after load, and a locator's evaluate on the detached figure would read zero widths.
    cell, box, whole = page.evaluate(
        """() => {
          const cell = document.getElementById('lane-0-name');
          const figure = cell.querySelector('.tokens');
          const [c, b] = [cell.getBoundingClientRect(), figure.getBoundingClientRect()];
          return [{x: c.x, width: c.width}, {x: b.x, width: b.width},
                  figure.scrollWidth <= figure.clientWidth + 1];
        }"""
    )
    assert box["width"] > 0
    assert box["x"] >= cell["x"] and box["x"] + box["width"] <= cell["x"] + cell["width"] + 0.5
    assert whole
    for member in [m for m in alpha.members if m.rel_path is not None and m.id != alpha.lead_id]:
        shown = page.locator(f".row.lane:has(.chip[title^='{member.name}']) .name .tokens")
        if shown.count():
            assert shown.first.inner_text() == words(
                counted_by_hand(Path(alpha.log_path(member.id)))
            )
    status = page.locator("#status .tokens")
    assert status.inner_text() == words(team_total(alpha))
    assert "cache read" in (status.get_attribute("title") or "")  # every count in full
    assert status.is_visible()


def test_a_turns_tooltip_names_its_tokens(
    page_at: Watched, alpha_server: Server, alpha: Any
) -> None:
    page = page_at.page
    page.goto(_panel(alpha_server, alpha))
    page.wait_for_selector("#status .tokens")
    titles = page.locator("span.turn[title]").evaluate_all("es => es.map(e => e.title)")
    spent = [t for t in titles if "\u00a0in · " in t]
    assert spent, titles[:5]
    assert all(t.startswith("turn ") and t.endswith("%\u00a0cached") for t in spent)


def test_the_start_page_card_shows_the_team_total(
    page_at: Watched, alpha_server: Server, alpha: Any
) -> None:
    page = page_at.page
    page.goto(f"http://127.0.0.1:{alpha_server.port}/")
    card = page.locator(f"li.team[data-lead='{alpha.lead_id}'] .tokens")
    card.wait_for(timeout=30_000)
    assert card.inner_text() == words(team_total(alpha))
    assert card.is_visible()


def test_the_replay_figure_counts_the_turns_ended_by_the_moment(
    page_at: Watched, alpha_server: Server, alpha: Any
) -> None:
    page = page_at.page
    at = (alpha.first_event_time + alpha.last_event_time) // 2
    page.goto(_panel(alpha_server, alpha, f"&at={at}"))
    figure = page.locator("#moment .tokens")
    figure.wait_for()
    # By hand from the timeline's turns: those ended by then, each once.
    timeline = json.loads(
        page.evaluate(
            "url => fetch(url).then(r => r.text())",
            f"{PREFIX}/api/timeline?session={alpha.lead_id}",
        )
    )
    total = {"in": 0, "cacheRead": 0, "out": 0}
    lanes = []
    for lane in timeline["lanes"]:
        own = {"in": 0, "cacheRead": 0, "out": 0}
        for span in lane["spans"]:
            spent = span.get("tokens")
            if span["kind"] == "turn" and spent and span["end"] is not None and span["end"] <= at:
                for part in (own, total):
                    part["in"] += spent["input"] + spent["cacheRead"] + spent["cacheWrite"]
                    part["cacheRead"] += spent["cacheRead"]
                    part["out"] += spent["output"]
        lanes.append(own)
    assert 0 < total["in"] < words_total_in(alpha)
    assert figure.inner_text() == words(total) + " by then"
    assert figure.is_visible()
    # Each lane's name cell says what it had spent by then, not its whole total.
    assert page.locator("#lane-0-name .tokens").inner_text() == words(lanes[0])


def words_total_in(spec: Any) -> int:
    return team_total(spec)["in"]
