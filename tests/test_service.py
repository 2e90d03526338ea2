"""The I/O shell: team root, roster, the two channels, and change-keyed caching.

Every fake here keeps its live snapshot and its persisted log apart, so the tests
see which channel answered.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dsh_task_gantt import host
from dsh_task_gantt.events import EventRun, event_count
from dsh_task_gantt.fixturegen import generate_team
from dsh_task_gantt.fold import RUN_MARKS, UNREAD_DATA
from dsh_task_gantt.logs.persistence import DirectorySessionPersistence
from dsh_task_gantt.service import TimelineService
from tests.kit.fakehost import (
    FakeAgent,
    FakeAgents,
    FakeContext,
    FakePersistence,
    FakeSession,
    ev,
    header,
)

LEAD, MATE, OTHER = "lead-1", "mate-1", "mate-2"


class IdentityTeams:
    """``agentTeams`` as the host has it: it takes the very Agent object ``agents.get``
    returned (a look-alike is refused), and raises for a non-member."""

    def __init__(self, agents: FakeAgents, members: list[dict[str, Any]]) -> None:
        self.agents = agents
        self.members = members
        self.tasks: list[dict[str, Any]] = []

    def _check(self, agent: Any) -> None:
        if self.agents.get(getattr(agent, "id", "")) is not agent:
            raise TypeError("not the live agent")

    def try_membership(self, agent: Any) -> dict[str, Any] | None:
        self._check(agent)
        ids = {m["id"] for m in self.members}
        if agent.id not in ids:
            return None
        role = "lead" if agent.id == LEAD else "teammate"
        return {"root": LEAD, "id": agent.id, "role": role, "name": agent.id}

    def list_members(self, agent: Any) -> list[dict[str, Any]]:
        self._check(agent)
        return list(self.members)

    def list_tasks(self, agent: Any) -> list[dict[str, Any]]:
        self._check(agent)
        return list(self.tasks)


def member_event(seq: int, time: int, member_id: str, name: str) -> dict[str, Any]:
    member = {"id": member_id, "name": name, "provider": "spawn", "context": "fresh"}
    return ev("team/member", seq, time, {"version": 2, "teamId": LEAD, "member": member})


def lead_log() -> list[dict[str, Any]]:
    return [
        ev("turn/start", 0, 10_000, {"turn": "t1"}),
        member_event(1, 10_100, MATE, "verify"),
        member_event(2, 10_200, OTHER, "docs"),
        ev("turn/end", 3, 11_000, {"turn": "t1", "reason": {"kind": "completed"}}),
    ]


def mate_log(n: int = 2) -> list[dict[str, Any]]:
    events = []
    for i in range(n):
        events.append(ev("turn/start", 2 * i, 10_400 + 100 * i, {"turn": f"x{i}"}))
        events.append(ev("turn/end", 2 * i + 1, 10_450 + 100 * i, {"turn": f"x{i}"}))
    return events


def persisted_team() -> FakePersistence:
    persistence = FakePersistence()
    persistence.put(LEAD, header(LEAD), lead_log())
    persistence.put(MATE, header(MATE, parent=LEAD), mate_log())
    persistence.put(OTHER, header(OTHER, parent=LEAD), mate_log(1))
    return persistence


def service(**services: Any) -> TimelineService:
    return TimelineService(FakeContext(**services).get, clock=lambda: 99_000)


def timeline(svc: TimelineService, session: str = LEAD) -> dict[str, Any]:
    result = asyncio.run(svc.timeline(session))
    assert result is not None
    assert orjson.loads(result.body) == dict(result.data)
    return dict(result.data)


def turns(data: dict[str, Any], lane_id: str) -> list[str]:
    lane = next(lane for lane in data["lanes"] if lane["id"] == lane_id)
    return [span["id"] for span in lane["spans"] if span["kind"] == "turn"]


def test_an_unchanged_team_costs_stats_only_and_keeps_its_etag() -> None:
    persistence = persisted_team()
    svc = service(sessionPersistence=persistence)
    first = asyncio.run(svc.timeline(LEAD))
    opened, stats = persistence.read_calls, persistence.stat_calls
    again = asyncio.run(svc.timeline(LEAD))
    assert first is not None and again is not None
    assert persistence.read_calls == opened  # no log opened, nothing decoded
    assert persistence.stat_calls - stats == 3  # one stat per log, the lead's included
    stats = persistence.stat_calls
    assert asyncio.run(svc.timeline(MATE)) is not None  # via a teammate: the same
    assert persistence.stat_calls - stats == 3
    assert again.etag == first.etag and again.body == first.body
    assert asyncio.run(svc.current_etag(LEAD)) == first.etag


def test_an_append_is_read_from_where_the_last_read_stopped() -> None:
    persistence = persisted_team()
    svc = service(sessionPersistence=persistence)
    before = timeline(svc)
    persistence.append(MATE, [ev("turn/start", 4, 12_000, {"turn": "x9"})])
    handles_before = len(persistence.handles)
    after = timeline(svc)
    new_handles = persistence.handles[handles_before:]
    assert [h.id for h in new_handles] == [MATE]  # only the grown lane was opened
    assert turns(after, MATE) == [*turns(before, MATE), "x9"]
    fresh = timeline(service(sessionPersistence=persistence))
    assert fresh["lanes"] == after["lanes"]  # incremental equals a cold read


def test_a_shrunk_log_is_folded_from_scratch_not_onto_the_old_one() -> None:
    persistence = persisted_team()
    svc = service(sessionPersistence=persistence)
    timeline(svc)
    replacement = [ev("turn/start", 0, 20_000, {"turn": "new"})]
    persistence.put(MATE, header(MATE, parent=LEAD), replacement)  # shorter than what was read
    after = timeline(svc)
    assert turns(after, MATE) == ["new"]


def test_a_running_live_agent_is_read_live_and_makes_the_team_live() -> None:
    persistence = persisted_team()
    agents = FakeAgents()
    live_events = [*mate_log(), ev("turn/start", 4, 13_000, {"turn": "live-only"})]
    agents.add(FakeAgent(MATE, FakeSession(header(MATE, parent=LEAD), live_events), "running"))
    svc = service(sessionPersistence=persistence, agents=agents)
    data = timeline(svc)
    lane = next(lane for lane in data["lanes"] if lane["id"] == MATE)
    assert lane["channel"] == "snapshot" and lane["status"] == "running"
    assert "live-only" in turns(data, MATE)
    assert data["live"] is True and data["range"]["end"] is None
    # The agent goes away: the lane falls back to the disk, the team freezes.
    del agents.agents[MATE]
    frozen = timeline(svc)
    lane = next(lane for lane in frozen["lanes"] if lane["id"] == MATE)
    assert lane["channel"] == "persisted" and "live-only" not in turns(frozen, MATE)
    assert frozen["live"] is False and frozen["range"]["end"] == 11_000


def test_root_from_agent_teams_needs_the_live_agent_object() -> None:
    persistence = persisted_team()
    agents = FakeAgents()
    for sid, parent in ((LEAD, None), (MATE, LEAD)):
        agents.add(FakeAgent(sid, FakeSession(header(sid, parent=parent), [])))
    members = [{"id": LEAD, "name": "lead", "role": "lead"},
               {"id": OTHER, "name": "docs", "role": "teammate"},
               {"id": MATE, "name": "verify", "role": "teammate"}]  # fmt: skip
    teams = IdentityTeams(agents, members)
    svc = service(sessionPersistence=persistence, agents=agents, agentTeams=teams)
    data = timeline(svc, MATE)
    assert data["rootSessionId"] == LEAD
    # The live roster's order wins over the order of the lead's log.
    assert [lane["id"] for lane in data["lanes"]] == ["lead", OTHER, MATE]
    assert not any("agentTeams" in note for note in data["notes"])


def test_without_services_the_parent_walk_finds_the_root() -> None:
    persistence = persisted_team()
    persistence.put("grandchild", header("grandchild", parent=MATE), [])
    data = timeline(service(sessionPersistence=persistence), "grandchild")
    assert data["rootSessionId"] == LEAD and data["sessionId"] == "grandchild"


def test_a_parent_cycle_ends_the_walk() -> None:
    persistence = FakePersistence()
    persistence.put("a", header("a", parent="b"), [])
    persistence.put("b", header("b", parent="a"), [])
    data = timeline(service(sessionPersistence=persistence), "a")
    assert data["rootSessionId"] in {"a", "b"}


def test_a_running_child_missing_from_the_log_still_gets_a_lane() -> None:
    persistence = persisted_team()
    agents = FakeAgents()
    late = "late-1"
    agents.add(
        FakeAgent(late, FakeSession(header(late, parent=LEAD), mate_log(1)), status="running")
    )
    data = timeline(service(sessionPersistence=persistence, agents=agents))
    assert late in [lane["id"] for lane in data["lanes"]]
    assert data["live"] is True


def test_a_task_only_the_live_board_knows_is_dated_from_tool_calls() -> None:
    persistence = persisted_team()
    call = {
        "turn": "x0",
        "step": 1,
        "callId": "c1",
        "name": "team_task_update",
        "arguments": orjson.dumps(
            {"task_id": "task-9", "expected_revision": 1, "action": "claim"}
        ).decode(),
    }
    persistence.append(MATE, [ev("tool/call", 4, 12_345, call)])
    agents = FakeAgents()
    agents.add(FakeAgent(LEAD, FakeSession(header(LEAD), [])))
    teams = IdentityTeams(agents, [{"id": LEAD, "name": "lead", "role": "lead"}])
    teams.tasks = [
        {"id": "task-9", "revision": 2, "subject": "s", "description": "", "status": "in_progress",
         "blockedBy": [], "writeScopes": [], "ownerName": "verify"},
    ]  # fmt: skip
    data = timeline(service(sessionPersistence=persistence, agents=agents, agentTeams=teams))
    task = next(t for t in data["tasks"] if t["id"] == "task-9")
    assert [(h["time"], h["revision"]) for h in task["history"]] == [(12_345, 2)]
    assert task["history"][0]["sessionId"] == MATE
    assert any("task-9" in note or "tool call" in note for note in data["notes"])


# -- the fast path (skipped data, runs) builds what one parsed event per line builds ---


def _dir_service(persistence: DirectorySessionPersistence) -> TimelineService:
    services = {host.SESSION_PERSISTENCE: persistence}
    return TimelineService(services.get, clock=lambda: 1_800_000_000_000)


def _fast(root: Path) -> DirectorySessionPersistence:
    return DirectorySessionPersistence(root, skip_types=UNREAD_DATA, run_marks=RUN_MARKS)


class _PlainPersistence(DirectorySessionPersistence):
    """Parses every line: it turns down the fold's offer of skip rules."""

    def use_skip_rules(self, skip_types: Any, run_marks: Any) -> None:
        return None


def test_the_service_offers_the_folds_skip_rules_to_a_persistence_that_takes_them(
    tmp_path: Path,
) -> None:
    """A host builds its persistence without knowing the fold; the service, which
    folds, tells it which lines need no parsing, and the lead comes back as runs."""
    spec = generate_team(tmp_path, seed=1, scale="small")
    persistence = DirectorySessionPersistence(tmp_path)
    assert _timeline_json(_dir_service(persistence), spec.lead_id)
    assert persistence.skip_types == UNREAD_DATA and persistence.run_marks == RUN_MARKS
    # Those rules make a reader hand back runs instead of one parsed event per line.
    fresh = DirectorySessionPersistence(tmp_path)
    fresh.use_skip_rules(persistence.skip_types, persistence.run_marks)
    items = asyncio.run(asyncio.run(fresh.open(spec.lead_id)).read_runs())
    assert any(type(i) is EventRun for i in items) and event_count(items) > len(items)
    # A persistence that turns the offer down reads every line, and still answers.
    plain = _PlainPersistence(tmp_path)
    assert _timeline_json(_dir_service(plain), spec.lead_id)
    assert plain.skip_types == ()


def _timeline_json(service: TimelineService, session_id: str) -> bytes:
    result = asyncio.run(service.timeline(session_id))
    assert result is not None
    return orjson.dumps(result.data)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_fast_path_builds_the_timeline_of_the_plain_path(tmp_path: Path, seed: int) -> None:
    spec = generate_team(tmp_path, seed=seed, scale="small")
    plain = _timeline_json(_dir_service(_PlainPersistence(tmp_path)), spec.lead_id)
    assert _timeline_json(_dir_service(_fast(tmp_path)), spec.lead_id) == plain
    # The reader's fast path is on: the lead came back as runs, not one event per line.
    handle = asyncio.run(_fast(tmp_path).open(spec.lead_id))
    items = asyncio.run(handle.read_runs())
    assert any(type(i) is EventRun for i in items) and event_count(items) > len(items)


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(seed=st.sampled_from([1, 2]), data=st.data())
def test_the_fast_path_after_random_appends_equals_a_cold_plain_read(
    tmp_path_factory: pytest.TempPathFactory, seed: int, data: st.DataObject
) -> None:
    """Every log grows by arbitrary byte cuts (torn frames included) and the team is
    polled after each growth; the last timeline equals a cold plain read's."""
    source = tmp_path_factory.mktemp("team")
    spec = generate_team(source, seed=seed, scale="small")
    target = tmp_path_factory.mktemp("live")
    blobs = {p.relative_to(source): p.read_bytes() for p in source.rglob("session.v4.*")}
    for rel in blobs:
        (target / rel).parent.mkdir(parents=True, exist_ok=True)
        (target / rel).write_bytes(b"")
    fast = _dir_service(_fast(target))
    steps = data.draw(st.integers(1, 4))
    for step in range(1, steps + 1):
        for rel, blob in blobs.items():
            written = (target / rel).stat().st_size
            cut = len(blob) if step == steps else data.draw(st.integers(written, len(blob)))
            with (target / rel).open("ab") as f:
                f.write(blob[written:cut])
        asyncio.run(fast.timeline(spec.lead_id))
    plain = _dir_service(_PlainPersistence(target))
    assert _timeline_json(fast, spec.lead_id) == _timeline_json(plain, spec.lead_id)


def test_a_hosts_list_rows_name_the_cold_children() -> None:
    """A host's persistence without our children_of: its list() rows carry headers."""
    persistence = FakePersistence()
    persistence.put(LEAD, header(LEAD), [ev("turn/start", 0, 10_000, {"turn": "t1"})])
    persistence.put(
        "kid-cold", header("kid-cold", parent=LEAD), [ev("turn/start", 0, 10_500, {"turn": "k"})]
    )
    persistence.put("stranger", header("stranger"), [ev("turn/start", 0, 10_600, {"turn": "s"})])
    svc = TimelineService({host.SESSION_PERSISTENCE: persistence}.get, clock=lambda: 1)
    for asked in (LEAD, "kid-cold"):
        result = asyncio.run(svc.timeline(asked))
        assert result is not None
        ids = [lane["sessionId"] for lane in result.data["lanes"]]
        assert ids == [LEAD, "kid-cold"] and result.data["rootSessionId"] == LEAD


def test_the_service_reads_the_logs_of_exactly_the_members_the_timeline_draws() -> None:
    """The members of a forked lead's inherited prefix are its parent's team, not this
    one: the timeline draws no lane for them, so their logs are not read either (a
    damaged one would otherwise add a note about a lane nobody sees)."""
    persistence = persisted_team()
    inherited = [
        ev("team/member", 0, 9_000, {"version": 1, "member": {"id": "old-1", "name": "old"}}),
        ev("turn/start", 1, 9_100, {"turn": "t0"}),
    ]
    own = [{**event, "seq": event["seq"] + 2} for event in lead_log()]
    forked = {**header(LEAD), "isSeeded": True, "inheritedEventCount": 2}
    persistence.put(LEAD, forked, inherited + own)
    persistence.put("old-1", header("old-1"), mate_log())
    persistence.fail_read.add("old-1")
    data = timeline(service(sessionPersistence=persistence))
    assert [lane["id"] for lane in data["lanes"]] == ["lead", MATE, OTHER]
    assert {handle.id for handle in persistence.handles} == {LEAD, MATE, OTHER}
    assert not [note for note in data["notes"] if "old-1" in note]


def test_opening_team_after_team_keeps_only_the_last_few_and_their_lanes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A user clicking through the start page opens one team after another: the service
    keeps TEAMS_KEPT built teams, the lanes only they hold and their bytes, not every
    team ever opened; a forgotten team opened again is read again, the same."""
    import dsh_task_gantt.service as service_module

    monkeypatch.setattr(service_module, "TEAMS_KEPT", 2)
    specs = [generate_team(tmp_path, seed=20 + i, scale="small") for i in range(5)]
    assert len({s.lead_id for s in specs}) == 5
    svc = _dir_service(_fast(tmp_path))
    first = _timeline_json(svc, specs[0].lead_id)
    lanes_per_team = len(svc._lanes)
    for spec in specs[1:]:
        assert _timeline_json(svc, spec.lead_id)
        assert len(svc._teams) <= 2
        assert len(svc._wire._teams) <= 2
        assert len(svc._lanes) <= 2 * lanes_per_team + 2
    kept = {t.snapshot.root_session_id for t in svc._teams.values()}
    assert kept == {specs[3].lead_id, specs[4].lead_id}
    assert specs[0].lead_id not in svc._lanes
    assert not svc.is_built(specs[0].lead_id)
    assert _timeline_json(svc, specs[0].lead_id) == first


class _NoReleasePersistence(DirectorySessionPersistence):
    """A persistence without the extra that drops a forgotten team's readers."""

    forget_sessions = None  # type: ignore[assignment]


@pytest.mark.parametrize("releases", [True, False], ids=["ours", "without forget_sessions"])
def test_teams_opened_one_after_another_leave_only_the_kept_teams_in_memos_and_readers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, releases: bool
) -> None:
    """Past TEAMS_KEPT, a forgotten team's lanes leave every memo of the process (and,
    from our persistence, their readers): what is held is the kept teams', however many
    were opened; a forgotten team opened again is byte for byte its cold read."""
    import dsh_task_gantt.service as service_module
    from dsh_task_gantt import memo

    monkeypatch.setattr(service_module, "TEAMS_KEPT", 2)
    specs = [generate_team(tmp_path, seed=40 + i, scale="small") for i in range(5)]
    kind = DirectorySessionPersistence if releases else _NoReleasePersistence
    persistence = kind(tmp_path, skip_types=UNREAD_DATA, run_marks=RUN_MARKS)
    memo.clear_memos()
    try:
        svc = _dir_service(persistence)
        for spec in specs:
            assert _timeline_json(svc, spec.lead_id)
        kept = {t.snapshot.root_session_id for t in svc._teams.values()}
        assert kept == {specs[3].lead_id, specs[4].lead_id}
        live = {
            m
            for t in svc._teams.values()
            for m in (t.snapshot.lead.session_id, *t.snapshot.members)
        }
        owners = {o for m in list(memo._ALL) for o in m._owned}
        assert owners and owners <= live
        read = {path.parent.name for path in persistence._entries}
        assert (read <= live) == releases  # without the extra, bounded by READERS_KEPT
        again = _timeline_json(svc, specs[0].lead_id)
        memo.clear_memos()
        assert again == _timeline_json(_dir_service(_fast(tmp_path)), specs[0].lead_id)
    finally:
        memo.clear_memos()
