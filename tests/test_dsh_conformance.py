"""Ground truth: DSH's own team projection (its npm package, run by Node) against our
timeline, on every bundled fixture team and the generator's teams (docs/host-contract.md §7).

DSH accepts every team the generator means to be well-formed, and the timeline agrees
with its state: each member a lane with its name; each task's status, revision, owner
and blockers; each message on its sender's and target's lanes, delivered or not. The
edge-case team (alpha, the ``full`` shape) is refused for the reason its spec names and
is still drawn, with a note saying what DSH would refuse and why.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dsh_task_gantt.fixturegen import generate_team
from dsh_task_gantt.fixturegen.spec import TeamSpec
from dsh_task_gantt.fold import fold_lane
from dsh_task_gantt.logs.persistence import LOG_NAMES
from dsh_task_gantt.logs.reader import LogReader
from dsh_task_gantt.timeline import LaneSource, TeamSnapshot, build_timeline
from tests.kit.dsh_team import package_dir, project

SESSIONS = Path(__file__).resolve().parent.parent / "fixtures" / "sessions"
#: What DSH's projection says when it refuses the edge-case team: the first rule it
#: breaks on purpose is the renamed member (the task graph's odd cases come later).
REFUSAL = 'teammate "{}" changed immutable identity fields'
#: What our note names of the edge-case team's breaks (the rename and the graph's).
NAMED = ("a member renamed", "task-99", "a dependency cycle", "a deleted task", "skips from")


def _refused_as_meant(state: dict[str, Any], timeline: dict[str, Any], spec: TeamSpec) -> None:
    renamed = next(m for m in spec.members if len(m.aliases) > 1)
    assert state.get("failure") == REFUSAL.format(renamed.id)
    note = next(n for n in timeline["notes"] if "DSH's own team projection would refuse" in n)
    for reason in NAMED:
        assert reason in note, reason
    # Drawn anyway: every task and every member.
    assert {t["id"] for t in timeline["tasks"]} == {t.id for t in spec.tasks}
    assert {m.id for m in spec.members} <= {lane["id"] for lane in timeline["lanes"]} | {
        "lead",
        spec.lead_id,
    }


@pytest.fixture(scope="module")
def dsh() -> Path:
    found = package_dir()
    if isinstance(found, str):
        pytest.skip(f"DSH's agent-team package cannot run here: {found}")
    return found


def _log(folder: Path) -> Path | None:
    return next((folder / n for n in LOG_NAMES if (folder / n).is_file()), None)


def _team(project_dir: Path) -> tuple[str, list[tuple[str, Any]], dict[str, Any]]:
    """(lead id, the lead log's events as our reader decodes them, our timeline)."""
    read = {}
    for folder in sorted(p for p in project_dir.iterdir() if p.is_dir()):
        log = _log(folder)
        if log is not None:
            read[folder.name] = LogReader(log).read_new()
    parents = {b.header.parent_session for b in read.values() if b.header}
    leads = [
        sid
        for sid, b in read.items()
        if b.header
        and not b.header.parent_session
        and (sid in parents or any(e.type.startswith("team/") for e in b.events))
    ]
    if not leads and len(read) == 1:  # a lone session: a team of one
        leads = list(read)
    assert len(leads) == 1, leads
    root = leads[0]
    children = tuple(sid for sid, b in read.items() if b.header and b.header.parent_session == root)

    def source(sid: str) -> LaneSource:
        b = read[sid]
        return LaneSource(sid, "persisted", None, b.header, None, None, fold_lane(b.events))

    members = {sid: source(sid) for sid in read if sid != root}
    snap = TeamSnapshot(root, root, source(root), members, None, None, (), 0, (), children)
    events = [(e.type, e.data) for e in read[root].events]
    return root, events, build_timeline(snap)


def _agrees(state: dict[str, Any], timeline: dict[str, Any]) -> None:
    lanes = {lane["id"]: lane for lane in timeline["lanes"]}
    by_session = {lane["sessionId"]: lane for lane in timeline["lanes"] if lane["sessionId"]}
    for member in state["members"]:
        lane = lanes.get(member["id"])
        assert lane is not None, f"no lane for member {member['name']}"
        assert lane["name"] == member["name"]
    tasks = {t["id"]: t for t in timeline["tasks"]}
    assert set(tasks) == {t["id"] for t in state["tasks"]}
    for task in state["tasks"]:
        ours = tasks[task["id"]]
        assert ours["status"] == task["status"], task["id"]
        assert ours["revision"] == task["revision"], task["id"]
        assert ours["ownerId"] == task.get("ownerId"), task["id"]
        assert ours["blockedBy"] == task["blockedBy"], task["id"]
    delivered = set(state["delivered"])
    for message in state["messages"]:
        for end in (message["senderId"], message["targetId"]):
            lane = by_session.get(end)
            if lane is None:
                continue  # an end off the roster gets no lane (docs/host-contract.md §7)
            marks = [
                s for s in lane["spans"] if s["kind"] == "message" and s["id"] == message["id"]
            ]
            assert len(marks) == 1, (message["id"], lane["name"])
            assert (marks[0]["deliveredAt"] is not None) == (message["id"] in delivered)
        assert by_session.get(message["senderId"]) is not None, message["id"]


def _spec(name: str) -> TeamSpec:
    return TeamSpec.load(SESSIONS.parent / "specs" / f"{name}.json")


def _bundled() -> list[Path]:
    return sorted(p for p in SESSIONS.iterdir() if p.is_dir()) if SESSIONS.is_dir() else []


@pytest.mark.skipif(not _bundled(), reason="fixtures/sessions is not in this checkout")
@pytest.mark.parametrize("project_dir", _bundled(), ids=lambda p: p.name[:24])
def test_dsh_projection_agrees_with_the_bundled_teams(dsh: Path, project_dir: Path) -> None:
    root, events, timeline = _team(project_dir)
    state = project(dsh, root, events)
    if "alpha" in project_dir.name:
        _refused_as_meant(state, timeline, _spec("alpha"))
        return
    assert state.get("failure") is None, state.get("failure")
    assert not any("DSH's own team projection would refuse" in n for n in timeline["notes"])
    _agrees(state, timeline)


def _generated(tmp: Path, shape: str, seed: int, live: bool) -> tuple[TeamSpec, Path]:
    spec = generate_team(tmp, seed=seed, shape=shape, live=live, name=f"{shape}-{seed}")
    lead = next(m for m in spec.members if m.role == "lead")
    assert lead.rel_path is not None
    return spec, (tmp / lead.rel_path).parent.parent


@pytest.mark.parametrize(
    ("shape", "seed", "live"),
    [("story", 5, False), ("story", 6, True), ("pair", 7, False), ("lone", 8, True),
     ("full", 9, False), ("story", 10, False)],
)  # fmt: skip
def test_dsh_projection_agrees_with_generated_teams(
    dsh: Path, tmp_path: Path, shape: str, seed: int, live: bool
) -> None:
    spec, project_dir = _generated(tmp_path, shape, seed, live)
    root, events, timeline = _team(project_dir)
    state = project(dsh, root, events)
    if shape == "full":  # the edge-case shape: refused on purpose, drawn anyway
        _refused_as_meant(state, timeline, spec)
        return
    assert state.get("failure") is None, state.get("failure")
    _agrees(state, timeline)
