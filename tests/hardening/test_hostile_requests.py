"""Hostile requests: malformed ids are 400, other methods 405, oversized
query strings a 4xx, and no answer ever carries a traceback or a file system path.

Requests go to the embedded host over a real sessions root (so a leaked path would
be the test's own temporary directory), through the same routes a host mounts.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from dsh_task_gantt.embedded import EmbeddedHost
from dsh_task_gantt.ids import valid_item_id, valid_session_id
from tests.kit.logwriting import T0, event, write_session

PREFIX = "/plugins/dsh-task-gantt"
LEAD = "lead-r"

BAD_IDS = {
    "dotdot": "..",
    "dotdot-in": "a..b",
    "slash": "a/b",
    "backslash": "a\\b",
    "encoded-dot": "%2e%2e",
    "nul": "a\x00b",
    "space": "a b",
    "tab": "a\tb",
    "newline": "a\nb",
    "non-ascii": "ü",
    "emoji": "\U0001f600",
    "long": "x" * 500,
    "129": "y" * 129,
    "empty": "",
    "query": "a?b",
    "hash": "a#b",
    "semicolon": "a;b",
}
#: What each bad id looks like in a path segment, percent-encoded (raw ``/`` too).
BAD_PATH_IDS = {
    "dotdot": "%2e%2e",
    "dotdot-raw-in": "a..b",
    "encoded-slash": "a%2Fb",
    "raw-slash": "a/b",
    "encoded-backslash": "a%5Cb",
    "nul": "a%00b",
    "space": "a%20b",
    "non-ascii": "%C3%BC",
    "bad-utf8": "%FF%FE",
    "long": "x" * 500,
    "empty": "",
    "semicolon": "a;b",
    "percent": "a%b",
}
ROUTES = ["/api/timeline", "/api/messages/m-1", "/panel", "/panel/board", "/panel/tasks/t-1"]
LEAKS = ("Traceback", 'File "', "site-packages", "/home/", "/root/", "/tmp/", "/work/")


def ev(seq: int, etype: str, data: object) -> dict[str, object]:
    """One event a millisecond."""
    return event(seq, etype, data, time=T0 + seq)


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("sessions")
    task = {"id": "t-1", "revision": 1, "subject": "s", "status": "pending"}
    message = {"id": "m-1", "senderId": LEAD, "targetId": LEAD, "content": "hi"}
    write_session(
        root,
        LEAD,
        [
            ev(0, "turn/start", {"turn": "t"}),
            ev(1, "team/task", {"version": 2, "teamId": LEAD, "task": task}),
            ev(2, "team/message/queued", {"teamId": LEAD, "message": message}),
        ],
    )
    return root


@pytest.fixture(scope="module")
def client(root: Path) -> TestClient:
    return TestClient(
        EmbeddedHost(root),
        base_url="http://127.0.0.1:8765",
        client=("127.0.0.1", 50000),
        raise_server_exceptions=False,
    )


def clean(response: object, root: Path) -> None:
    """No traceback, no path of this machine, nosniff — on every answer."""
    text = response.text  # type: ignore[attr-defined]
    headers = response.headers  # type: ignore[attr-defined]
    for leak in (*LEAKS, str(root), str(Path(__file__).resolve().parents[2])):
        assert leak not in text, (leak, text[:300])
    assert headers.get("x-content-type-options") == "nosniff"
    assert response.status_code < 500, text[:300]  # type: ignore[attr-defined]


def test_good_requests_answer_200_and_leak_nothing(client: TestClient, root: Path) -> None:
    for route in ROUTES:
        headers = {"HX-Request": "true"} if "messages" in route else {}
        response = client.get(PREFIX + route, params={"session": LEAD}, headers=headers)
        assert response.status_code in (200, 286), (route, response.text[:300])
        clean(response, root)


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("bad", list(BAD_IDS.values()), ids=list(BAD_IDS))
def test_malformed_session_ids_are_400(
    client: TestClient, root: Path, route: str, bad: str
) -> None:
    response = client.get(PREFIX + route, params={"session": bad})
    assert response.status_code == 400
    assert response.json()["status"] == 400
    clean(response, root)


@pytest.mark.parametrize("base", ["/api/messages/", "/panel/tasks/"])
@pytest.mark.parametrize("bad", list(BAD_PATH_IDS.values()), ids=list(BAD_PATH_IDS))
def test_malformed_message_and_task_ids_are_400(
    client: TestClient, root: Path, base: str, bad: str
) -> None:
    response = client.get(f"{PREFIX}{base}{bad}?session={LEAD}")
    assert response.status_code == 400, (bad, response.status_code)
    clean(response, root)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=st.text(max_size=200))
def test_any_session_id_is_400_unless_it_is_valid_and_never_5xx(
    client: TestClient, root: Path, text: str
) -> None:
    response = client.get(f"{PREFIX}/api/timeline", params={"session": text})
    clean(response, root)
    if valid_session_id(text):
        assert response.status_code in (200, 404)
    else:
        assert response.status_code == 400


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(raw=st.binary(max_size=120))
def test_any_raw_message_path_is_400_404_or_200_never_5xx(
    client: TestClient, root: Path, raw: bytes
) -> None:
    """Arbitrary bytes, percent-encoded into the path: the decoded id decides."""
    encoded = "".join(f"%{b:02X}" for b in raw)
    response = client.get(f"{PREFIX}/api/messages/{encoded}?session={LEAD}")
    clean(response, root)
    decoded = raw.decode("utf-8", errors="replace")
    if valid_item_id(decoded):
        assert response.status_code in (200, 404)
    else:
        assert response.status_code == 400


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD", "TRACE"])
@pytest.mark.parametrize("route", [*ROUTES, "/static/panel.css", "/nothing"])
def test_other_methods_are_405(client: TestClient, root: Path, method: str, route: str) -> None:
    response = client.request(method, f"{PREFIX}{route}?session={LEAD}", content=b"x" * 100)
    assert response.status_code == 405
    assert response.headers["allow"] == "GET"
    if method != "HEAD":
        clean(response, root)


@pytest.mark.parametrize("method", ["POST", "DELETE", "PUT", "HEAD"])
def test_the_start_page_is_get_only(client: TestClient, method: str) -> None:
    response = client.request(method, "/")
    assert response.status_code == 405
    assert response.headers["allow"] == "GET"


@pytest.mark.parametrize("size", [4_097, 20_000, 60_000])
@pytest.mark.parametrize("route", ROUTES)
def test_oversized_query_strings_are_a_4xx(
    client: TestClient, root: Path, route: str, size: int
) -> None:
    padding = "p=" + "a" * size
    response = client.get(f"{PREFIX}{route}?session={LEAD}&{padding}")
    assert 400 <= response.status_code < 500
    clean(response, root)


@pytest.mark.parametrize(
    "query",
    [
        f"session={LEAD}&session=..",  # the last one wins, and is checked
        "session=%ZZ",
        "session=%FF%FE",
        "session=" + "%00" * 10,
        "session",
        "=&&&=",
        f"session={LEAD}&msg=%00&list=%FF&from=-1&to=1e999&w=NaN&drawn=99999999999999999999",
        f"session={LEAD}&v=" + "x" * 3000,
    ],
)
def test_odd_query_strings_never_5xx(client: TestClient, root: Path, query: str) -> None:
    for route in ROUTES:
        clean(client.get(f"{PREFIX}{route}?{query}"), root)


#: Numbers ``str.isdigit`` takes and ``int`` refuses, and signs ``int`` refuses.
NOT_QUITE_NUMBERS = ["--5", "-+5", "%C2%B2", "%D9%A3", "%EF%BC%95", "5%C2%B2", "-"]
VIEW_PARAMS = ["from", "to", "t", "w", "lp", "tp", "drawn"]


@pytest.mark.parametrize("route", [*ROUTES, "/panel/moment"])
@pytest.mark.parametrize("value", NOT_QUITE_NUMBERS)
def test_view_numbers_that_are_not_ascii_digits_are_ignored_never_5xx(
    client: TestClient, root: Path, route: str, value: str
) -> None:
    for param in VIEW_PARAMS:
        response = client.get(f"{PREFIX}{route}?session={LEAD}&list=1&at={T0}&{param}={value}")
        clean(response, root)
        assert response.status_code in (200, 286), (param, response.status_code)


@pytest.mark.parametrize("route", ["/panel", "/panel/board", "/panel/moment"])
@pytest.mark.parametrize("value", NOT_QUITE_NUMBERS)
def test_a_moment_that_is_not_ascii_digits_is_a_400(
    client: TestClient, root: Path, route: str, value: str
) -> None:
    response = client.get(f"{PREFIX}{route}?session={LEAD}&at={value}")
    clean(response, root)
    assert response.status_code == 400


def test_static_files_cannot_be_escaped(client: TestClient, root: Path) -> None:
    for name in ("..%2F..%2Fpyproject.toml", "%2e%2e", "panel.css%00.js", "..", "VENDORED.md/x"):
        response = client.get(f"{PREFIX}/static/{name}")
        assert response.status_code == 404, name
        clean(response, root)
