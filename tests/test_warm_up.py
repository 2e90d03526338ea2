"""Reading the most recently written team when the server starts, and one read per team.

Behind DSH the server starts with DSH, long before the panel is opened on the team that
is working: the start-up read makes that first load a warm one. A request that arrives
while the same team is being read waits for that read instead of decoding every log a
second time.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from dsh_task_gantt.embedded import EmbeddedHost
from dsh_task_gantt.logs.persistence import DirectorySessionPersistence
from dsh_task_gantt.service import TimelineService
from dsh_task_gantt.warm_up import READY_PREFIX, ready_line, warm_up
from tests.kit.fakehost import FakeContext, FakePersistence, ev, header
from tests.kit.start_root import start_root

PREFIX = "/plugins/dsh-task-gantt"


def _touch_newest(path: Path) -> None:
    """Make ``path`` the log written last (a second after every other)."""
    newest = max(p.stat().st_mtime for p in path.parents[2].rglob("session.v4.jsonl*"))
    os.utime(path, (newest + 1, newest + 1))


def _log_of(root: Path, session_id: str) -> Path:
    return next(root.rglob(f"{session_id}/session.v4.jsonl*"))


def _last_with_a_log(spec: Any) -> str:
    """The team's last member that has a log of its own."""
    return str([m.id for m in spec.members if m.rel_path is not None][-1])


def test_the_latest_session_is_the_one_whose_log_was_written_last(tmp_path: Path) -> None:
    made = start_root(tmp_path)
    persistence = DirectorySessionPersistence(made.root)
    for spec in (made.teams[2], made.singles[0], made.teams[0]):
        member = _last_with_a_log(spec)
        _touch_newest(_log_of(made.root, member))
        assert asyncio.run(persistence.latest_session()) == member
    empty = DirectorySessionPersistence(tmp_path / "nowhere")
    assert asyncio.run(empty.latest_session()) is None


def test_the_server_reads_the_latest_team_at_start_up_and_the_first_panel_reuses_it(
    tmp_path: Path,
) -> None:
    made = start_root(tmp_path)
    team = made.teams[1]  # a "full" team: a lead and several teammates
    teammate = _last_with_a_log(team)
    assert teammate != team.lead_id
    _touch_newest(_log_of(made.root, teammate))  # a teammate wrote last
    host = EmbeddedHost(made.root, warm=True)
    with TestClient(host, base_url="http://127.0.0.1:8765", client=("127.0.0.1", 5)) as client:
        deadline = time.monotonic() + 60
        while (host.warmed is None or not host.warmed.done()) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert host.warmed is not None and host.warmed.result() == team.lead_id  # its root
        panel = host.plugin.app.panel
        drawn = dict(panel._lanes.items())  # each lane's markup, by what it depends on
        assert len(drawn) >= len([m for m in team.members if m.rel_path is not None])
        page = client.get(f"{PREFIX}/panel", params={"session": team.lead_id})
        assert page.status_code == 200 and page.text.count('class="row lane') == len(drawn)
        assert dict(panel._lanes.items()) == drawn  # the first page laid out no lane again


def test_the_server_says_on_stderr_when_the_start_up_read_ended_and_which_team_it_read(
    tmp_path: Path,
) -> None:
    """The line DSH's log relays: a user (and the real-DSH test) knows the first panel
    opened from then on is warm."""
    made = start_root(tmp_path)
    team = made.teams[1]
    _touch_newest(_log_of(made.root, _last_with_a_log(team)))
    said: list[str] = []
    host = EmbeddedHost(made.root, warm=True, announce=said.append)
    with TestClient(host, base_url="http://127.0.0.1:8765", client=("127.0.0.1", 5)) as client:
        deadline = time.monotonic() + 60
        while not said and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(said) == 1, said
        line = said[0]
        assert line.startswith(READY_PREFIX) and "\n" not in line
        assert f"read the team {team.lead_id} at start-up in " in line
        elapsed_ms = int(line.rsplit(" in ", 1)[1].removesuffix(" ms"))
        assert 0 <= elapsed_ms < 60_000
        # said once the read is over: the first panel now renders whole, not streamed
        page = client.get(f"{PREFIX}/panel", params={"session": team.lead_id})
        assert page.status_code == 200 and "content-length" in page.headers
        assert "Reading the team" not in page.text
    assert said == [line]  # once per start, nothing more at shut-down


def test_with_no_team_to_read_it_says_so_and_without_the_read_it_says_nothing(
    tmp_path: Path,
) -> None:
    said: list[str] = []
    with TestClient(EmbeddedHost(tmp_path / "none", warm=True, announce=said.append)):
        deadline = time.monotonic() + 30
        while not said and time.monotonic() < deadline:
            time.sleep(0.05)
    assert len(said) == 1 and said[0].startswith(f"{READY_PREFIX}no team read at start-up (")
    quiet: list[str] = []
    made = start_root(tmp_path / "teams")
    with TestClient(EmbeddedHost(made.root, announce=quiet.append)):
        time.sleep(0.5)
    assert quiet == []


def test_the_ready_line_is_one_line_whatever_the_folder_is_called() -> None:
    line = ready_line("team\n\x1b[2Jgone\u202e", 12)
    assert line == f"{READY_PREFIX}read the team team\\n\\x1b[2Jgone\\u202e at start-up in 12 ms"
    assert line.isprintable()


def test_the_server_prints_the_ready_line_on_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    made = start_root(tmp_path)
    host = EmbeddedHost(made.root, warm=True)  # no announce given: stderr, as `serve` has it
    with TestClient(host, base_url="http://127.0.0.1:8765", client=("127.0.0.1", 5)):
        deadline = time.monotonic() + 60
        while (host.warmed is None or not host.warmed.done()) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert host.warmed is not None
        root = host.warmed.result()
    err = capsys.readouterr().err
    ready = [line for line in err.splitlines() if line.startswith(READY_PREFIX)]
    assert len(ready) == 1 and ready[0].startswith(f"{READY_PREFIX}read the team {root} "), err


def test_a_server_started_without_it_reads_nothing_until_asked(tmp_path: Path) -> None:
    made = start_root(tmp_path)
    host = EmbeddedHost(made.root)
    with TestClient(host, base_url="http://127.0.0.1:8765", client=("127.0.0.1", 5)):
        assert host.warmed is None and len(host.plugin.app.panel._lanes) == 0


class _Broken:
    async def latest_session(self) -> str:
        raise OSError("the disk went away")


def test_a_failing_warm_up_is_logged_and_never_raised(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    host = EmbeddedHost(tmp_path)
    service, panel = host.plugin.service, host.plugin.app.panel
    log = logging.getLogger("test-warm-up")
    with caplog.at_level(logging.WARNING):
        assert asyncio.run(warm_up(_Broken(), service, panel, log)) is None
    assert "the disk went away" in caplog.text
    # a host whose persistence cannot say which session was written last: nothing read
    assert asyncio.run(warm_up(object(), service, panel, log)) is None
    assert asyncio.run(warm_up(host.persistence, service, panel, log)) is None  # no logs


def _team(persistence: FakePersistence) -> list[str]:
    lead, mates = "lead-1", ["mate-1", "mate-2", "mate-3"]
    persistence.put(lead, header(lead), [ev("turn/start", 0, 10_000, {"turn": "t1"})])
    for n, mate in enumerate(mates):
        turn = [ev("turn/start", 0, 10_100 + n, {"turn": "x"})]
        persistence.put(mate, header(mate, parent=lead), turn)
    return [lead, *mates]


def test_requests_that_arrive_together_read_each_log_once() -> None:
    persistence = FakePersistence()
    sessions = _team(persistence)
    service = TimelineService(FakeContext(sessionPersistence=persistence).get, clock=lambda: 1)

    async def together() -> list[Any]:
        return await asyncio.gather(*(service.timeline(sessions[0]) for _ in range(3)))

    first, second, third = asyncio.run(together())
    assert first is not None and second is first and third is first
    assert persistence.read_calls == len(sessions)  # one read of each log, not three
    # and a later request, on another event loop, still works
    assert asyncio.run(service.timeline(sessions[0])) is first


def test_a_request_arriving_while_the_second_build_runs_still_waits_its_turn(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Staggered requests: the first build ends while the second waits, then a third
    arrives while the second reads. It must queue behind the second, not start a read
    of its own next to it."""
    persistence = FakePersistence()
    sessions = _team(persistence)
    service = TimelineService(FakeContext(sessionPersistence=persistence).get, clock=lambda: 1)
    build_now = service._build_now
    gates: list[asyncio.Event] = []
    running = peak = 0

    async def held_build(session_id: str) -> Any:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        try:
            gate = asyncio.Event()
            gates.append(gate)
            await gate.wait()
            return await build_now(session_id)
        finally:
            running -= 1

    monkeypatch.setattr(service, "_build_now", held_build)

    async def settle() -> None:
        for _ in range(20):
            await asyncio.sleep(0)

    async def staggered() -> list[Any]:
        tasks = [asyncio.create_task(service.timeline(sessions[0]))]
        await settle()
        tasks.append(asyncio.create_task(service.timeline(sessions[0])))
        await settle()
        gates[0].set()  # the first build ends while the second request waits
        await asyncio.wait_for(tasks[0], 30)  # its reads run in threads
        await settle()
        for _ in range(3):  # more requests while the second build is held open
            tasks.append(asyncio.create_task(service.timeline(sessions[0])))
            await settle()
        while not all(task.done() for task in tasks):
            for gate in gates:
                gate.set()
            await asyncio.sleep(0.01)
        return [task.result() for task in tasks]

    results = asyncio.run(staggered())
    assert peak == 1  # never two builds of one team at once
    assert len(gates) == len(results) == 5
    assert all(result is results[0] for result in results)  # later ones found it cached
    assert persistence.read_calls == len(sessions)  # each log read once
    assert service._building and not any(service._building.values())  # nothing kept
