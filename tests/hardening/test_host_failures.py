"""Broken host services: each of ``agents``, ``sessionPersistence``,
``agentTeams`` and ``connection`` raising, hanging past the bound, or answering with
the wrong shape. Every request ends quickly with a timeline carrying a note, or a
clear status with a short JSON reason; never a hang, a traceback or a path.

Hangs are awaitables that never finish (a real host's I/O is a coroutine). A
*synchronous* host method that blocks cannot be bounded in-thread; ``host.call_host``
documents why the plugin still calls those inline.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from starlette.testclient import TestClient

from dsh_task_gantt import host, web
from dsh_task_gantt.plugin import apply
from tests.kit.fakehost import (
    FakeAgent,
    FakeAgents,
    FakeConnection,
    FakeContext,
    FakePersistence,
    FakeSession,
    FakeWebServer,
    SlowAwaitable,
    header,
)
from tests.kit.teams import LEAD, MATE, team_logs

PREFIX = "/plugins/dsh-task-gantt"

#: Each hang costs one bound; short so the matrix runs in seconds.
BOUND_S = 0.2
#: Far below the 5 s default bound: a request that waited on a hang unbounded fails this.
REQUEST_BUDGET_S = 3.0
WRONG_SHAPES: list[Any] = [42, "lead-1", {"weird": True}, [1, 2, 3], b"\x00", object()]
LEAKS = ("Traceback", "/secret", "boom-detail", 'File "')


@pytest.fixture(autouse=True)
def short_bounds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(host, "HOST_CALL_TIMEOUT_S", BOUND_S)


class Broken:
    """Wraps a service: every method raises, hangs or answers ``shape``."""

    def __init__(self, inner: Any, mode: str, shape: Any = None) -> None:
        self._inner, self._mode, self._shape = inner, mode, shape
        self.calls = 0

    def __getattr__(self, name: str) -> Any:
        if not callable(getattr(self._inner, name, None)):
            raise AttributeError(name)

        def method(*args: Any, **kwargs: Any) -> Any:
            self.calls += 1
            if self._mode == "raise":
                raise RuntimeError("/secret/path boom-detail")
            if self._mode == "hang":
                return SlowAwaitable()
            return self._shape

        return method


class FakeTeams:
    """``agentTeams`` that knows the team (membership, members, tasks)."""

    def try_membership(self, agent: Any) -> dict[str, Any]:
        return {"root": LEAD, "id": agent.id, "role": "lead", "name": "lead"}

    def list_members(self, agent: Any) -> list[dict[str, Any]]:
        return [
            {"id": LEAD, "name": "lead", "role": "lead", "status": "idle", "diagnostics": []},
            {"id": MATE, "name": "verify", "role": "teammate", "status": "idle"},
        ]

    def list_tasks(self, agent: Any) -> list[dict[str, Any]]:
        return []


def healthy_services() -> dict[str, Any]:
    persistence = FakePersistence()
    lead, mate = team_logs()
    persistence.put(LEAD, header(LEAD), lead)
    persistence.put(MATE, header(MATE, parent=LEAD), mate)
    agents = FakeAgents()
    # Live agents with empty snapshots: the disk answers, the live services are asked.
    agents.add(FakeAgent(LEAD, FakeSession(header(LEAD)), status="idle"))
    return {
        "webServer": FakeWebServer(),
        "sessionPersistence": persistence,
        "agents": agents,
        "agentTeams": FakeTeams(),
        "connection": FakeConnection(),
    }


def client_with(**services: Any) -> TestClient:
    ctx = FakeContext(**services)
    apply(ctx)
    return TestClient(ctx.get("webServer"), raise_server_exceptions=False)


def timed_get(client: TestClient, path: str, **params: str) -> tuple[Any, float]:
    started = time.perf_counter()
    response = client.get(PREFIX + path, params=params)
    elapsed = time.perf_counter() - started
    for leak in LEAKS:
        assert leak not in response.text
    return response, elapsed


MODES = [("raise", None), ("hang", None)] + [("shape", s) for s in WRONG_SHAPES]
MODE_IDS = ["raise", "hang"] + [f"shape-{type(s).__name__}" for s in WRONG_SHAPES]


def test_healthy_baseline_shows_both_lanes_and_no_service_note() -> None:
    response, _ = timed_get(client_with(**healthy_services()), "/api/timeline", session=LEAD)
    assert response.status_code == 200
    data = response.json()
    assert [lane["id"] for lane in data["lanes"]][:2] == ["lead", MATE]
    assert not any("agents" in note or "agentTeams" in note for note in data["notes"])


@pytest.mark.parametrize(("mode", "shape"), MODES, ids=MODE_IDS)
@pytest.mark.parametrize("service", ["agents", "agentTeams"])
def test_a_broken_live_service_is_a_note_and_the_logs_still_show(
    service: str, mode: str, shape: Any
) -> None:
    services = healthy_services()
    broken = Broken(services[service], mode, shape)
    services[service] = broken
    client = client_with(**services)
    for path in ("/api/timeline", "/panel", "/panel/board"):
        response, elapsed = timed_get(client, path, session=LEAD)
        assert response.status_code in (200, 286), (path, response.text[:300])
        assert elapsed < REQUEST_BUDGET_S
    data = client.get(f"{PREFIX}/api/timeline", params={"session": LEAD}).json()
    assert broken.calls > 0
    if mode == "hang":  # a hung service is asked once per request, not once per lane
        assert broken.calls == 4
    mate = next(lane for lane in data["lanes"] if lane["id"] == MATE)
    assert mate["channel"] == "persisted" and mate["spans"]
    if mode != "shape":  # a failure is named in the notes (a junk answer may just be empty)
        assert any(service in note or "live" in note for note in data["notes"]), data["notes"]


@pytest.mark.parametrize(("mode", "shape"), MODES, ids=MODE_IDS)
def test_broken_persistence_is_a_503_with_a_reason_or_a_degraded_lane(
    mode: str, shape: Any
) -> None:
    services = healthy_services()
    del services["agents"]  # nothing live: the persisted logs are all there is
    services["sessionPersistence"] = Broken(services["sessionPersistence"], mode, shape)
    client = client_with(**services)
    response, elapsed = timed_get(client, "/api/timeline", session=LEAD)
    assert elapsed < REQUEST_BUDGET_S
    if shape is None:  # it cannot say whether the session exists: no false 404
        assert response.status_code == 503
        reason = response.json()["error"]
        assert "sessionPersistence" in reason and len(reason) < 120
    elif isinstance(shape, dict):  # looks like a stat: the session "exists", reads fail
        assert response.status_code == 200
        lead = response.json()["lanes"][0]
        assert lead["channel"] == "unreadable" and lead["error"]
    else:
        assert response.status_code == 503
        assert "answered with a" in response.json()["error"]


def test_one_member_log_hanging_degrades_only_that_lane() -> None:
    services = healthy_services()
    persistence = services["sessionPersistence"]
    real_open = persistence.open

    def open_(session_id: str, mode: str = "read") -> Any:
        return SlowAwaitable() if session_id == MATE else real_open(session_id, mode)

    persistence.open = open_
    response, elapsed = timed_get(client_with(**services), "/api/timeline", session=LEAD)
    assert response.status_code == 200 and elapsed < REQUEST_BUDGET_S
    data = response.json()
    lanes = {lane["id"]: lane for lane in data["lanes"]}
    assert lanes["lead"]["channel"] == "persisted" and lanes["lead"]["spans"]
    assert lanes[MATE]["channel"] == "unreadable"
    assert "did not answer" in (lanes[MATE]["error"] or "")
    assert data["source"] == "partial"


@pytest.mark.parametrize(
    ("connection", "status"),
    [
        (Broken(FakeConnection(), "raise"), 503),
        (Broken(FakeConnection(), "hang"), 503),
        (FakeConnection(verdict=200), 403),  # an unreadable verdict fails closed
        (FakeConnection(verdict="401"), 403),  # type: ignore[arg-type]
        (FakeConnection(verdict=True), 403),  # type: ignore[arg-type]
        (Broken(FakeConnection(), "shape", [401]), 403),
        (object(), 503),  # no requestRejection at all
    ],
    ids=["raise", "hang", "200", "str-401", "true", "list", "no-method"],
)
def test_a_broken_connection_guard_refuses_quickly(connection: Any, status: int) -> None:
    services = healthy_services()
    services["connection"] = connection
    response, elapsed = timed_get(client_with(**services), "/api/timeline", session=LEAD)
    assert response.status_code == status
    assert elapsed < REQUEST_BUDGET_S
    assert response.headers["content-type"] == "application/json"
    assert response.json()["status"] == status


def test_ctx_get_raising_for_every_service_is_a_note_not_a_500() -> None:
    services = healthy_services()
    ctx = FakeContext(**services)
    real_get = ctx.get

    def get(name: str) -> Any:
        if name in ("agents", "agentTeams"):
            raise RuntimeError("/secret/path boom-detail")
        return real_get(name)

    ctx.get = get  # type: ignore[method-assign]
    apply(ctx)
    client = TestClient(services["webServer"], raise_server_exceptions=False)
    response, _ = timed_get(client, "/api/timeline", session=LEAD)
    assert response.status_code == 200
    assert any("could not be reached" in note for note in response.json()["notes"])


def test_a_whole_request_is_bounded_even_when_every_call_stays_under_its_bound(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Many slow-but-in-bound calls add up; the request as a whole has its own bound."""
    monkeypatch.setattr(web, "REQUEST_TIMEOUT_S", 0.25)  # two 0.15 s stats exceed it

    class Sluggish(FakePersistence):
        async def stat(self, session_id: str) -> dict[str, Any] | None:
            await asyncio.sleep(0.15)  # under the 0.2 s per-call bound
            return await super().stat(session_id)

    services = healthy_services()
    slow = Sluggish()
    lead, mate = team_logs()
    slow.put(LEAD, header(LEAD), lead)
    slow.put(MATE, header(MATE, parent=LEAD), mate)
    services["sessionPersistence"] = slow
    del services["agents"]
    response, elapsed = timed_get(client_with(**services), "/api/timeline", session=LEAD)
    assert response.status_code == 504
    assert response.json()["error"] == "the host did not answer in time"
    assert elapsed < REQUEST_BUDGET_S


def _nested(depth: int) -> Any:
    value: Any = None
    for _ in range(depth):
        value = [value]
    return value


class Unprintable:
    def __str__(self) -> str:
        raise RuntimeError("/secret/path boom-detail")

    __repr__ = __str__


def test_deeply_nested_or_unprintable_team_rows_are_skipped_and_counted() -> None:
    """Rows nested past any parser's depth, or that break when printed, never reach
    the fold or the change key (a repr of 100k nested lists raised RecursionError)."""
    deep = _nested(100_000)

    class OddTeams(FakeTeams):
        def list_members(self, agent: Any) -> list[Any]:
            good = super().list_members(agent)
            return [*good, {"id": "x", "extra": deep}, deep, {"id": Unprintable()}]

        def list_tasks(self, agent: Any) -> list[Any]:
            return [{"id": "t-9", "subject": deep, "status": "pending", "revision": 1}]

    services = healthy_services()
    services["agentTeams"] = OddTeams()
    client = client_with(**services)
    for path in ("/api/timeline", "/panel", "/panel/board"):
        response, _ = timed_get(client, path, session=LEAD)
        assert response.status_code in (200, 286), response.text[:300]
    data = client.get(f"{PREFIX}/api/timeline", params={"session": LEAD}).json()
    assert MATE in [lane["id"] for lane in data["lanes"]]
    assert (
        "agentTeams.list_members: skipped 3 of 5 rows that are not plain objects" in (data["notes"])
    )
    assert (
        "agentTeams.list_tasks: skipped 1 of 1 rows that are not plain objects" in (data["notes"])
    )
