"""A lane says what its member was asked to do (the timeline's ``label``), beside its
name on the board, and a label from a log is shown as text."""

from __future__ import annotations

import re
from pathlib import Path

from starlette.testclient import TestClient

from dsh_task_gantt.embedded import EmbeddedHost
from dsh_task_gantt.fixturegen import TeamSpec
from tests.kit.logwriting import T0, event, header, write_session
from tests.kit.teams import EVIL

ROOT = Path(__file__).resolve().parent.parent
SESSIONS = ROOT / "fixtures" / "sessions"
ALPHA = TeamSpec.load(ROOT / "fixtures" / "specs" / "alpha.json", root=str(SESSIONS))
PREFIX = "/plugins/dsh-task-gantt"


def _client(root: Path) -> TestClient:
    return TestClient(
        EmbeddedHost(root), base_url="http://127.0.0.1:8765", client=("127.0.0.1", 50000)
    )


def _name_cells(html: str) -> dict[str, str]:
    """Each lane's name cell: the chip's text → the whole cell."""
    cells = re.findall(r'<div class="name" id="[^"]*-name">(.*?)</div>', html, re.S)
    return {re.search(r'<span class="chip[^>]*>(.*?)</span>', c, re.S).group(1): c for c in cells}  # type: ignore[union-attr]


def test_each_lane_shows_its_members_label_beside_its_name() -> None:
    with _client(SESSIONS) as client:
        timeline = client.get(f"{PREFIX}/api/timeline", params={"session": ALPHA.lead_id}).json()
        page = client.get(f"{PREFIX}/panel", params={"session": ALPHA.lead_id}).text
    labelled = {lane["name"]: lane["label"] for lane in timeline["lanes"] if lane["label"]}
    assert len(labelled) >= 3  # the fixture's catalog, descriptor and member labels
    cells = _name_cells(page)
    for name, label in labelled.items():
        assert f'<span class="lane-label">{label}</span>' in cells[name], name
    unlabelled = [lane["name"] for lane in timeline["lanes"] if not lane["label"]]
    for name in unlabelled:
        if name in cells:
            assert "lane-label" not in cells[name], name


def test_a_hostile_label_is_shown_as_text(tmp_path: Path) -> None:
    member = {"id": "mate-x", "name": "mate", "description": "label " + EVIL, "phase": "active"}
    write_session(
        tmp_path,
        "lead-x",
        [
            event(0, "turn/start", {"turn": "t1"}, time=T0),
            event(
                1, "team/member", {"version": 2, "teamId": "lead-x", "member": member}, time=T0 + 1
            ),
        ],
        head=header("lead-x"),
    )
    with _client(tmp_path) as client:
        timeline = client.get(f"{PREFIX}/api/timeline", params={"session": "lead-x"}).json()
        page = client.get(f"{PREFIX}/panel", params={"session": "lead-x"}).text
    (label,) = [lane["label"] for lane in timeline["lanes"] if lane["label"]]
    assert label == "label " + EVIL
    cell = _name_cells(page)["mate"]
    assert "<script>" not in cell and "<img" not in cell
    assert '<span class="lane-label">label &lt;script&gt;alert(1)&lt;/script&gt;' in cell
