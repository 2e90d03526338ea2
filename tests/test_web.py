"""The routes through ``apply(ctx)`` with a fake host: every status code, in order."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from starlette.testclient import TestClient

from dsh_task_gantt.plugin import apply
from tests.kit.boardteams import FakeProvider, demo_team, make_app
from tests.kit.fakehost import (
    FakeAgent,
    FakeAgents,
    FakeConnection,
    FakeContext,
    FakePersistence,
    FakeSession,
    FakeWebServer,
    ev,
    header,
)
from tests.kit.teams import LEAD, MATE, team_logs

PREFIX = "/plugins/dsh-task-gantt"


def make_host(connection: Any = None, **overrides: Any) -> tuple[FakeContext, FakePersistence]:
    persistence = FakePersistence()
    lead, mate = team_logs()
    persistence.put(LEAD, header(LEAD), lead)
    persistence.put(MATE, header(MATE, parent=LEAD), mate)
    services: dict[str, Any] = {
        "webServer": FakeWebServer(),
        "sessionPersistence": persistence,
        "connection": FakeConnection() if connection is None else connection,
    }
    services.update(overrides)
    return FakeContext(**services), persistence


def client_for(ctx: FakeContext) -> TestClient:
    apply(ctx)
    return TestClient(ctx.get("webServer"), raise_server_exceptions=False)


def test_timeline_200_with_lanes_from_the_persisted_logs() -> None:
    ctx, _ = make_host()
    response = client_for(ctx).get(f"{PREFIX}/api/timeline", params={"session": LEAD})
    assert response.status_code == 200
    data = response.json()
    assert data["rootSessionId"] == LEAD
    assert [lane["id"] for lane in data["lanes"]][:2] == ["lead", MATE]
    assert response.headers["etag"]
    assert response.headers["x-content-type-options"] == "nosniff"


def test_matching_etag_answers_304_and_a_change_answers_200() -> None:
    ctx, persistence = make_host()
    client = client_for(ctx)
    first = client.get(f"{PREFIX}/api/timeline", params={"session": LEAD})
    etag = first.headers["etag"]
    again = client.get(
        f"{PREFIX}/api/timeline", params={"session": LEAD}, headers={"If-None-Match": etag}
    )
    assert again.status_code == 304
    assert again.content == b""
    persistence.append(MATE, [ev("turn/start", 2, 12_000, {"turn": "x2"})])
    changed = client.get(
        f"{PREFIX}/api/timeline", params={"session": LEAD}, headers={"If-None-Match": etag}
    )
    assert changed.status_code == 200
    assert changed.headers["etag"] != etag


def test_a_teammate_session_shows_its_leads_team() -> None:
    ctx, _ = make_host()
    data = client_for(ctx).get(f"{PREFIX}/api/timeline", params={"session": MATE}).json()
    assert data["sessionId"] == MATE
    assert data["rootSessionId"] == LEAD


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH", "OPTIONS"])
def test_other_methods_are_405_before_anything_else(method: str) -> None:
    connection = FakeConnection(verdict=403)
    ctx, _ = make_host(connection)
    response = client_for(ctx).request(method, f"{PREFIX}/api/timeline?session=bad id")
    assert response.status_code == 405
    assert response.headers["allow"] == "GET"
    assert connection.calls == 0


@pytest.mark.parametrize("verdict", [401, 403])
def test_connection_refusal_comes_before_parameters(verdict: int) -> None:
    ctx, _ = make_host(FakeConnection(verdict=verdict))
    response = client_for(ctx).get(f"{PREFIX}/api/timeline?session=..")
    assert response.status_code == verdict


def test_no_connection_service_is_503() -> None:
    ctx, _ = make_host()
    del ctx.services["connection"]
    response = client_for(ctx).get(f"{PREFIX}/api/timeline", params={"session": LEAD})
    assert response.status_code == 503
    assert "connection" in response.json()["error"]


def test_a_failing_guard_is_503_without_a_traceback() -> None:
    ctx, _ = make_host(FakeConnection(fail=True))
    response = client_for(ctx).get(f"{PREFIX}/api/timeline", params={"session": LEAD})
    assert response.status_code == 503
    assert "Traceback" not in response.text and "guard broke" not in response.text


@pytest.mark.parametrize(
    "session", ["", "..", "a/b", "a b", "ü", "x" * 129, "a..b", "%2e%2e", "a\x00b"]
)
def test_bad_session_ids_are_400(session: str) -> None:
    ctx, _ = make_host()
    response = client_for(ctx).get(f"{PREFIX}/api/timeline", params={"session": session})
    assert response.status_code == 400


def test_missing_session_parameter_is_400() -> None:
    ctx, _ = make_host()
    assert client_for(ctx).get(f"{PREFIX}/api/timeline").status_code == 400


def test_unknown_session_is_404() -> None:
    ctx, _ = make_host()
    response = client_for(ctx).get(f"{PREFIX}/api/timeline", params={"session": "nobody"})
    assert response.status_code == 404
    assert response.json()["status"] == 404


def test_message_in_full_keeps_line_breaks_and_names_both_ends() -> None:
    ctx, _ = make_host()
    client = client_for(ctx)
    response = client.get(f"{PREFIX}/api/messages/m1", params={"session": LEAD})
    assert response.status_code == 200
    message = response.json()
    assert message["body"] == "line one\nline <b>two</b>"
    assert message["from"]["id"] == "lead" or message["from"]["name"] == "lead"
    assert message["to"]["name"] == "verify"
    assert message["queuedAt"] == 10_200 and message["deliveredAt"] == 10_300
    assert message["truncated"] is False
    missing = client.get(f"{PREFIX}/api/messages/nope", params={"session": LEAD})
    assert missing.status_code == 404


def test_unknown_path_under_the_prefix_is_404_json() -> None:
    ctx, _ = make_host()
    response = client_for(ctx).get(f"{PREFIX}/api/nothing", params={"session": LEAD})
    assert response.status_code == 404
    assert orjson.loads(response.content)["error"]


def test_live_snapshot_empty_falls_through_to_the_disk_log() -> None:
    agents = FakeAgents()
    agents.add(FakeAgent(LEAD, FakeSession(header(LEAD), events=[]), status="idle"))
    ctx, _ = make_host(agents=agents)
    data = client_for(ctx).get(f"{PREFIX}/api/timeline", params={"session": LEAD}).json()
    lead_lane = data["lanes"][0]
    assert lead_lane["channel"] == "persisted"
    assert any(span["kind"] == "turn" for span in lead_lane["spans"])
    assert data["source"] == "log"


def test_a_broken_persistence_read_is_a_partial_timeline_not_a_500() -> None:
    ctx, persistence = make_host()
    persistence.fail_read.add(MATE)
    response = client_for(ctx).get(f"{PREFIX}/api/timeline", params={"session": LEAD})
    assert response.status_code == 200
    data = response.json()
    assert data["source"] == "partial"
    mate_lane = next(lane for lane in data["lanes"] if lane["id"] == MATE)
    assert mate_lane["channel"] == "unreadable"
    assert any("verify" in note for note in data["notes"])
    assert all(handle.closed for handle in persistence.handles)


class StarletteWebServer:
    """A host web server built on Starlette: each prefix route becomes a ``Mount``."""

    def __init__(self) -> None:
        from starlette.applications import Starlette

        self.app = Starlette()

    def register(self, route: dict[str, Any]) -> Any:
        from starlette.routing import Mount

        mount = Mount(route["path"], app=route["handler"])
        self.app.router.routes.append(mount)
        return lambda: self.app.router.routes.remove(mount)


def test_mounted_in_a_starlette_app_the_routes_and_checks_hold() -> None:
    web = StarletteWebServer()
    ctx, _ = make_host(webServer=web)
    mounted = apply(ctx)
    client = TestClient(web.app, raise_server_exceptions=False)
    ok = client.get(f"{PREFIX}/api/timeline", params={"session": LEAD})
    assert ok.status_code == 200 and ok.json()["rootSessionId"] == LEAD
    assert client.get(f"{PREFIX}/api/timeline", params={"session": "a/b"}).status_code == 400
    assert client.post(f"{PREFIX}/api/timeline", params={"session": LEAD}).status_code == 405
    panel = client.get(f"{PREFIX}/panel", params={"session": LEAD})
    assert panel.status_code == 200 and "text/html" in panel.headers["content-type"]
    mounted.dispose()
    assert client.get(f"{PREFIX}/api/timeline", params={"session": LEAD}).status_code == 404


def _task_event(seq: int, at: int, task_id: str, revision: int, status: str) -> dict[str, Any]:
    task = {
        "id": task_id,
        "revision": revision,
        "subject": f"subject of {task_id}",
        "description": "<b>not markup</b>",
        "status": status,
        "blockedBy": [],
        "writeScopes": ["src"],
        "ownerId": MATE,
    }
    return ev("team/task", seq, at, {"version": 2, "teamId": LEAD, "task": task})


def test_tasks_route_answers_the_timelines_tasks_with_its_own_etag() -> None:
    ctx, persistence = make_host()
    persistence.append(LEAD, [_task_event(6, 11_100, "task-1", 1, "pending")])
    client = client_for(ctx)
    timeline = client.get(f"{PREFIX}/api/timeline", params={"session": MATE})
    response = client.get(f"{PREFIX}/api/tasks", params={"session": MATE})
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert response.headers["x-content-type-options"] == "nosniff"
    body = response.json()
    assert body == {
        "sessionId": MATE,
        "rootSessionId": LEAD,
        "tasks": timeline.json()["tasks"],
    }
    assert [task["id"] for task in body["tasks"]] == ["task-1"]
    etag = response.headers["etag"]
    assert etag != timeline.headers["etag"]  # a different body, a different validator
    again = client.get(
        f"{PREFIX}/api/tasks", params={"session": MATE}, headers={"If-None-Match": etag}
    )
    assert again.status_code == 304 and again.content == b""
    persistence.append(LEAD, [_task_event(7, 11_200, "task-1", 2, "completed")])
    changed = client.get(
        f"{PREFIX}/api/tasks", params={"session": MATE}, headers={"If-None-Match": etag}
    )
    assert changed.status_code == 200 and changed.headers["etag"] != etag
    assert changed.json()["tasks"][0]["status"] == "completed"


def test_tasks_route_checks_like_every_route() -> None:
    connection = FakeConnection()
    ctx, _ = make_host(connection)
    client = client_for(ctx)
    url = f"{PREFIX}/api/tasks"
    assert client.post(url, params={"session": LEAD}).status_code == 405
    assert connection.calls == 0
    assert client.get(url, params={"session": "a/b"}).status_code == 400
    assert client.get(url).status_code == 400
    assert client.get(url, params={"session": "nobody"}).status_code == 404
    assert client.get(f"{url}/", params={"session": LEAD}).status_code == 200
    ctx, _ = make_host(FakeConnection(verdict=401))
    assert client_for(ctx).get(url, params={"session": "a/b"}).status_code == 401


def test_head_is_refused_like_every_method_but_get() -> None:
    """Starlette would answer HEAD on a GET route; this app refuses it (405) before the
    guard runs, on known and unknown paths alike."""
    connection = FakeConnection()
    ctx, _ = make_host(connection)
    client = client_for(ctx)
    for path in ("/api/timeline", "/api/tasks", "/panel", "/static/panel.css", "/nothing"):
        response = client.head(f"{PREFIX}{path}", params={"session": LEAD})
        assert response.status_code == 405, path
        assert response.headers["allow"] == "GET"
    assert connection.calls == 0


def test_routes_are_addressed_by_name() -> None:
    ctx, _ = make_host()
    mounted = apply(ctx)
    app = mounted.app
    assert app.url_path_for("tasks") == f"{PREFIX}/api/tasks"
    assert app.url_path_for("message", message_id="a/b c") == f"{PREFIX}/api/messages/a%2Fb%20c"
    assert app.url_path_for("static", name="panel.css") == f"{PREFIX}/static/panel.css"
    client = TestClient(ctx.get("webServer"), raise_server_exceptions=False)
    # What the name builds is what the route answers.
    url = app.url_path_for("message", message_id="m1")
    assert client.get(url, params={"session": LEAD}).json()["id"] == "m1"


def test_path_steps_are_decoded_one_by_one_before_routing() -> None:
    ctx, _ = make_host()
    client = client_for(ctx)
    q = f"?session={LEAD}"
    assert client.get(f"{PREFIX}/p%61nel{q}").status_code == 200  # one step, decoded
    assert client.get(f"{PREFIX}/panel/{q}").status_code == 200  # a trailing slash
    assert client.get(f"{PREFIX}/panel%2Fboard{q}").status_code == 404  # one step, not two
    assert client.get(f"{PREFIX}/panel%0A{q}").status_code == 404  # no literal route match
    assert client.get(f"{PREFIX}/api/messages/{q}").status_code == 400  # an empty id
    assert client.get(f"{PREFIX}/api/messages/m1/{q}").status_code == 400  # "m1/"
    assert client.get(f"{PREFIX}/api/messages/m%31{q}").json()["id"] == "m1"
    assert client.get(f"{PREFIX}/api/messages{q}").status_code == 404


def test_since_from_a_provider_that_keeps_no_parts_is_the_whole_timeline_saying_so() -> None:
    """A provider other than ours has no lanes' parts to diff: ``?since=`` still
    answers, with every lane and task and ``delta.known`` false (a client merging it
    the documented way ends up with the whole timeline)."""
    provider = FakeProvider(demo_team())
    client = TestClient(make_app(provider))
    whole = client.get(f"{PREFIX}/api/timeline", params={"session": "s-lead"})
    etag = whole.headers["etag"]
    answer = client.get(f"{PREFIX}/api/timeline", params={"session": "s-lead", "since": etag})
    assert answer.status_code == 200 and answer.headers["etag"] == etag
    body = answer.json()
    delta = body.pop("delta")
    expected = whole.json()
    assert delta == {
        "since": etag,
        "known": False,
        "laneIds": [lane["id"] for lane in expected["lanes"]],
        "taskIds": [task["id"] for task in expected["tasks"]],
    }
    assert len(delta["laneIds"]) > 1 and delta["taskIds"]
    assert body == expected
    # With the version it holds, the same question is a 304 like any other.
    unchanged = client.get(
        f"{PREFIX}/api/timeline",
        params={"session": "s-lead", "since": etag},
        headers={"If-None-Match": etag},
    )
    assert unchanged.status_code == 304 and unchanged.content == b""
