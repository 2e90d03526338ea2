"""``serve --demo``'s teams: a temporary copy, one team live and growing, bundle untouched."""

from __future__ import annotations

import asyncio
import hashlib
import re
import time
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from dsh_task_gantt import ROUTE_PREFIX
from dsh_task_gantt.clock import now_ms
from dsh_task_gantt.demo import LIVE_TEAM, DemoTeams
from dsh_task_gantt.embedded import EmbeddedHost
from dsh_task_gantt.fixturegen import subagents
from dsh_task_gantt.resources import resource_path

BUNDLED = resource_path("fixtures")


def _tree_digest(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def _timeline(host: EmbeddedHost, session_id: str) -> dict[str, Any]:
    result = asyncio.run(host.plugin.service.timeline(session_id))
    assert result is not None, f"no timeline for {session_id}"
    data: dict[str, Any] = result.data
    return data


def _span_count(data: dict[str, Any]) -> int:
    return sum(len(lane["spans"]) for lane in data["lanes"])


@pytest.fixture(scope="module")
def bundled_digest() -> dict[str, str]:
    return _tree_digest(BUNDLED)


def test_the_live_team_ends_now_and_grows_while_the_bundle_stays_as_it_was(
    tmp_path: Path, bundled_digest: dict[str, str]
) -> None:
    teams = DemoTeams.prepare(tmp_path / "sessions", interval=0.05)
    assert teams.live_spec.name == LIVE_TEAM and teams.live_spec.live
    host = EmbeddedHost(teams.root)
    before = _timeline(host, teams.live_spec.lead_id)
    assert before["live"] and before["range"]["end"] is None
    # Regenerated to end now: its newest span is recent, not the bundle's fixed date.
    newest = max(s["time"] for lane in before["lanes"] for s in lane["spans"])
    assert now_ms() - newest < 120_000

    teams.run_in_background()
    try:
        deadline = time.monotonic() + 20
        grown = before
        while _span_count(grown) <= _span_count(before) and time.monotonic() < deadline:
            time.sleep(0.1)
            grown = _timeline(host, teams.live_spec.lead_id)
    finally:
        teams.stop()
    assert _span_count(grown) > _span_count(before), "the live team did not grow"
    assert grown["live"]
    assert _tree_digest(BUNDLED) == bundled_digest, "the bundled fixtures were modified"


def test_every_bundled_team_is_copied_and_the_copy_is_writable(tmp_path: Path) -> None:
    teams = DemoTeams.prepare(tmp_path / "sessions")
    bundled_logs = {p.relative_to(BUNDLED / "sessions") for p in BUNDLED.glob("sessions/*/*")}
    copied = {p.relative_to(teams.root) for p in teams.root.glob("*/*")}
    # The live team is regenerated under the same ids (same seed), so the names match.
    assert bundled_logs <= copied
    for path in teams.root.rglob("*"):
        assert path.stat().st_mode & 0o200, f"{path} is read-only in the demo copy"


def test_start_lists_the_live_team_first_and_removes_the_copy_on_exit() -> None:
    with DemoTeams.start(interval=0.05) as teams:
        tmp = teams.root.parent
        assert tmp.is_dir()
        client = TestClient(
            EmbeddedHost(teams.root), base_url="http://127.0.0.1:8765", client=("127.0.0.1", 1)
        )
        page = client.get("/")
        assert page.status_code == 200
        # The first card is the live team's; filled in, it says it is active now.
        leads = re.findall(r'<li class="team[^"]*"\s+data-lead="([^"]+)"', page.text)
        assert leads[0] == teams.live_spec.lead_id
        cards = [client.get(f"{ROUTE_PREFIX}/start/card?session={lead}").text for lead in leads]
        assert "badge live" in cards[0] and "active now" in cards[0]
        # Every other bundled team is listed frozen: the generated ones (with specs) and
        # the subagent families in older formats.
        generated = len(list((BUNDLED / "specs").glob("*.json")))
        assert sum("badge frozen" in card for card in cards) == generated - 1 + 2
        assert subagents.GAMMA_PARENT in page.text and subagents.DELTA_PARENT in page.text
    assert not tmp.exists(), "the demo's temporary copy outlived the context"


def test_the_copy_is_removed_even_when_the_server_fails() -> None:
    with pytest.raises(RuntimeError), DemoTeams.start() as teams:
        tmp = teams.root.parent
        raise RuntimeError("the server could not bind")
    assert not tmp.exists()
