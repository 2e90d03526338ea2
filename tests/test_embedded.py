"""The standalone host: its router, its guard, its start page, its command line."""

from __future__ import annotations

import asyncio
import html
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from starlette.responses import PlainTextResponse
from starlette.testclient import TestClient

from dsh_task_gantt.embedded import (
    PROXY_HEADER,
    PROXY_SECRET_ENV,
    TOKEN_COOKIE,
    TOKEN_ENV,
    EmbeddedHost,
    EmbeddedWebServer,
    default_sessions_root,
    guard,
    is_loopback_host,
)
from dsh_task_gantt.fixturegen import LiveTeam, generate_team
from tests.kit.start_root import API, HOUR_MS, start_root, title_of

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures" / "sessions"
PREFIX = "/plugins/dsh-task-gantt"


def _answering(name: str) -> Any:
    """An ASGI app that answers with its own name (which handler a request reached)."""

    async def app(scope: Any, receive: Any, send: Any) -> None:
        await PlainTextResponse(name)(scope, receive, send)

    return app


def test_router_prefers_exact_then_longest_prefix_and_refuses_duplicates() -> None:
    web = EmbeddedWebServer()
    web.register({"kind": "prefix", "path": "/plugins/x", "handler": _answering("a")})
    web.register({"kind": "prefix", "path": "/plugins/x/deep", "handler": _answering("b")})
    web.register({"kind": "exact", "path": "/plugins/x/deep/one", "handler": _answering("c")})
    client = TestClient(web)
    reached = {
        path: (answer.status_code, answer.text)
        for path in ("/plugins/x/deep/two", "/plugins/x/other", "/plugins/x/deep/one")
        for answer in [client.get(path)]
    }
    assert reached == {
        "/plugins/x/deep/two": (200, "b"),
        "/plugins/x/other": (200, "a"),
        "/plugins/x/deep/one": (200, "c"),
    }
    assert client.get("/plugins/xy").status_code == 404  # a prefix is a whole path segment
    with pytest.raises(ValueError):
        web.register({"kind": "prefix", "path": "/plugins/x", "handler": _answering("d")})
    with pytest.raises(ValueError):
        web.register({"kind": "prefix", "path": "/plugins", "handler": _answering("d")})


def test_loopback_names() -> None:
    assert is_loopback_host("127.0.0.1") and is_loopback_host("::1")
    assert is_loopback_host("localhost") and is_loopback_host("127.5.0.1")
    assert not is_loopback_host("0.0.0.0") and not is_loopback_host("10.0.0.1")


def test_default_root_follows_dsh_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("DSH_HOME", str(tmp_path))
    assert default_sessions_root() == tmp_path / "sessions"
    monkeypatch.delenv("DSH_HOME")
    assert default_sessions_root() == Path.home() / ".dsh" / "sessions"


def test_foreign_host_header_is_refused(tmp_path: Path) -> None:
    client = TestClient(
        EmbeddedHost(tmp_path), base_url="http://evil.example:8765", client=("127.0.0.1", 50000)
    )
    assert client.get("/").status_code == 403
    assert client.get("/plugins/dsh-task-gantt/api/timeline?session=x").status_code == 403


def test_empty_root_says_where_it_looked(tmp_path: Path) -> None:
    client = TestClient(
        EmbeddedHost(tmp_path), base_url="http://127.0.0.1:8765", client=("127.0.0.1", 50000)
    )
    page = client.get("/")
    assert page.status_code == 200
    assert str(tmp_path) in page.text and "--sessions-root" in page.text


def _cards(html: str) -> list[str]:
    """Each card's ``data-lead``, in page order."""
    return re.findall(r'<li class="team[^"]*"\s+data-lead="([^"]+)"', html)


class CountingTimelines:
    """The plugin's service, counting the timelines asked of it."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.asked: list[str] = []

    async def timeline(self, session_id: str) -> Any:
        self.asked.append(session_id)
        return await self.inner.timeline(session_id)


def _start_host(root: Path) -> tuple[TestClient, EmbeddedHost, CountingTimelines]:
    host = EmbeddedHost(root)
    counting = CountingTimelines(host.start_page.timelines)
    host.start_page.timelines = counting  # type: ignore[assignment]
    client = TestClient(host, base_url="http://127.0.0.1:8765", client=("127.0.0.1", 50000))
    return client, host, counting


def test_first_answer_lists_every_team_from_headers_and_builds_no_timeline(
    tmp_path: Path,
) -> None:
    made = start_root(tmp_path)
    client, _, counting = _start_host(made.root)
    page = client.get("/")
    assert page.status_code == 200
    assert counting.asked == []
    teams, singles = page.text.split('<details class="singles"')
    # Teams first (by workspace, newest first), the single sessions in their own
    # collapsed section after them, with a count.
    assert _cards(teams) == [made.teams[0].lead_id, made.teams[2].lead_id, made.teams[1].lead_id]
    assert _cards(singles) == [s.lead_id for s in made.singles]
    assert '<span class="count">2</span>' in singles and " open" not in singles.split(">")[0]
    assert "3 teams in 2 workspaces · 2 single sessions" in page.text
    # Each card says what the headers say and where its summary comes from.
    assert page.text.count('aria-busy="true"') == 5
    assert f"/plugins/dsh-task-gantt/panel?session={made.teams[1].lead_id}" in page.text
    full_members = len([m for m in made.teams[1].members if m.rel_path]) - 1
    assert f"lead and {full_members} member sessions" in page.text
    assert f'data-card-url="{PREFIX}/start/card?session={made.teams[1].lead_id}"' in page.text


def test_each_card_fills_from_the_plugins_service_which_is_then_warm(tmp_path: Path) -> None:
    made = start_root(tmp_path)
    client, host, counting = _start_host(made.root)
    assert client.get("/").status_code == 200
    for spec in (*made.teams, *made.singles):
        card = client.get(f"{PREFIX}/start/card?session={spec.lead_id}")
        assert card.status_code == 200
        assert card.headers["content-security-policy"].startswith("default-src 'none'")
        assert 'aria-busy="false"' in card.text and "Reading the team" not in card.text
        assert html.escape(title_of(spec)) in card.text
        assert ("badge live" in card.text) == spec.live
        chips = re.findall(r'<span class="chip[^"]*"[^>]*>([^<]*)</span>', card.text)
        assert chips[1:] == [html.escape(m.aliases[-1]) for m in spec.members[1:]]
    assert counting.asked == [s.lead_id for s in (*made.teams, *made.singles)]
    # The panel opened afterwards answers from the caches the card filled.
    team = made.teams[1].lead_id
    built = asyncio.run(host.plugin.service.timeline(team))
    again = asyncio.run(host.plugin.service.timeline(team))
    assert built is not None and again is built


def test_live_states_are_answered_from_a_listing_until_a_log_changes(tmp_path: Path) -> None:
    made = start_root(tmp_path)
    client, _, counting = _start_host(made.root)
    assert client.get(f"{PREFIX}/start/live").json()["live"] == {}  # nothing summarised yet
    for spec in made.teams:
        client.get(f"{PREFIX}/start/card?session={spec.lead_id}")
    first = client.get(f"{PREFIX}/start/live").json()["live"]
    assert first == {spec.lead_id: spec.live for spec in made.teams}
    counting.asked.clear()
    assert client.get(f"{PREFIX}/start/live").json()["live"] == first
    assert counting.asked == []  # no log changed: no timeline asked
    # A live team's lead writes: only that team is asked again.
    lead_log = made.root / made.live_team.member(made.live_team.lead_id).rel_path  # type: ignore[operator]
    with lead_log.open("ab") as log_file:
        log_file.write(b"")
    os.utime(lead_log, ns=(time.time_ns(), time.time_ns()))
    assert client.get(f"{PREFIX}/start/live").json()["live"] == first
    assert counting.asked == [made.live_team.lead_id]


def _count_lists(host: EmbeddedHost) -> list[int]:
    """A list that grows by one at each listing of the root the start page makes."""
    persistence = host.start_page.persistence
    lists: list[int] = []
    real_list = persistence.list

    async def counted_list() -> list[dict[str, Any]]:
        lists.append(1)
        return await real_list()

    persistence.list = counted_list  # type: ignore[method-assign]
    return lists


def test_an_unchanged_live_poll_lists_nothing_and_a_new_session_is_placed(
    tmp_path: Path,
) -> None:
    made = start_root(tmp_path)
    client, host, _ = _start_host(made.root)
    lists = _count_lists(host)
    page = client.get("/")
    answer = client.get(f"{PREFIX}/start/live").json()
    assert len(lists) == 1  # the page's listing, kept for the poll
    teams, singles = page.text.split('<details class="singles"')
    assert [lead for group in answer["groups"] for lead in group["leads"]] == _cards(teams)
    assert answer["singles"] == _cards(singles)
    assert answer["summary"] == "3 teams in 2 workspaces · 2 single sessions"
    for _ in range(3):
        assert client.get(f"{PREFIX}/start/live").json() == answer
    assert len(lists) == 1
    # A new single session, the newest: listed once, placed first among the singles.
    newest = generate_team(
        made.root, seed=76, shape="lone", name="l3", cwd=API, start_ms=made.teams[0].start_ms
    )
    answer = client.get(f"{PREFIX}/start/live").json()
    assert answer["singles"][0] == newest.lead_id and len(lists) == 2
    assert answer["summary"].endswith("3 single sessions")
    client.get(f"{PREFIX}/start/live")
    assert len(lists) == 2


def test_a_summarised_team_that_comes_alive_last_moves_first_with_a_new_version(
    tmp_path: Path,
) -> None:
    made = start_root(tmp_path)
    client, _, _ = _start_host(made.root)
    older = made.teams[2]
    for spec in made.teams:
        client.get(f"{PREFIX}/start/card?session={spec.lead_id}")
    before = client.get(f"{PREFIX}/start/live").json()
    assert before["groups"][0]["leads"] == [made.teams[0].lead_id, older.lead_id]
    assert before["live"][older.lead_id] is False
    LiveTeam(made.root, older).tick(made.teams[0].last_event_time + HOUR_MS)
    after = client.get(f"{PREFIX}/start/live").json()
    assert after["groups"][0]["leads"] == [older.lead_id, made.teams[0].lead_id]
    assert after["live"][older.lead_id] is True
    # Its summary's version changed (the page fetches its card again); the others' not.
    assert after["stamps"][older.lead_id] != before["stamps"][older.lead_id]
    assert after["stamps"][made.teams[1].lead_id] == before["stamps"][made.teams[1].lead_id]


def test_a_card_for_a_missing_or_bad_session_says_so(tmp_path: Path) -> None:
    made = start_root(tmp_path)
    client, _, _ = _start_host(made.root)
    gone = client.get(f"{PREFIX}/start/card?session=session-gone")
    assert gone.status_code == 200 and 'aria-busy="false"' in gone.text
    assert "no summary: its logs are no longer there" in gone.text
    assert client.get(f"{PREFIX}/start/card?session=../etc").status_code == 400
    assert client.post(f"{PREFIX}/start/card?session=x").status_code == 405
    foreign = TestClient(
        EmbeddedHost(made.root), base_url="http://evil.example:8765", client=("127.0.0.1", 50000)
    )
    assert foreign.get(f"{PREFIX}/start/card?session={made.teams[0].lead_id}").status_code == 403
    assert foreign.get(f"{PREFIX}/start/live").status_code == 403


@pytest.mark.skipif(not FIXTURES.is_dir(), reason="fixtures/sessions is generated by fixturegen")
def test_start_page_lists_teams_and_links_to_panels() -> None:
    client = TestClient(
        EmbeddedHost(FIXTURES), base_url="http://127.0.0.1:8765", client=("127.0.0.1", 50000)
    )
    page = client.get("/")
    assert page.status_code == 200
    assert "/plugins/dsh-task-gantt/panel?session=" in page.text
    cards = [client.get(f"{PREFIX}/start/card?session={lead}") for lead in _cards(page.text)]
    assert cards and all("frozen" in card.text for card in cards)


def test_token_is_required_when_given(tmp_path: Path) -> None:
    client = TestClient(
        EmbeddedHost(tmp_path, token="s3cret"),
        base_url="http://127.0.0.1:8765",
        client=("127.0.0.1", 50000),
    )
    assert client.get("/plugins/dsh-task-gantt/api/timeline?session=x").status_code == 401
    landing = client.get("/?token=s3cret", follow_redirects=False)
    assert landing.status_code == 303
    assert client.get("/plugins/dsh-task-gantt/api/timeline?session=x").status_code == 404


def test_serve_refuses_a_public_bind_without_a_token(tmp_path: Path) -> None:
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "dsh_task_gantt.cli",
            "serve",
            "--host",
            "0.0.0.0",
            "--sessions-root",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=30,
        env={"PATH": "/usr/bin:/bin"},
    )
    assert run.returncode == 2
    assert "--token" in run.stderr and "Traceback" not in run.stderr


@pytest.mark.skipif(not FIXTURES.is_dir(), reason="fixtures/sessions is generated by fixturegen")
def test_timeline_command_prints_the_api_json() -> None:
    exe = shutil.which("dsh-task-gantt") or ""
    lead = next(p.name for p in sorted(FIXTURES.glob("*/*")) if p.is_dir())
    cmd = [exe] if exe else [sys.executable, "-m", "dsh_task_gantt.cli"]
    run = subprocess.run(
        [*cmd, "timeline", "--sessions-root", str(FIXTURES), "--session", lead],
        capture_output=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith(b'{"version":1')
    missing = subprocess.run(
        [*cmd, "timeline", "--sessions-root", str(FIXTURES), "--session", "nobody"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert missing.returncode == 2 and "Traceback" not in missing.stderr


# -- the embedded host's guard, reviewed -----------------------------------------------

TOKEN = "Tok-3x4mple-secret"
PUBLIC = {"base_url": "http://192.0.2.10:8765", "client": ("192.0.2.99", 40000)}


@pytest.mark.parametrize(
    "host_header",
    ["127.0.0.1:8765", "localhost", "LOCALHOST:8765", "[::1]:8765", "[::1]", "127.0.0.1"],
)
def test_loopback_host_headers_are_let_in(tmp_path: Path, host_header: str) -> None:
    client = TestClient(EmbeddedHost(tmp_path), client=("127.0.0.1", 50000))
    assert client.get("/", headers={"Host": host_header}).status_code == 200


@pytest.mark.parametrize(
    "host_header",
    [
        "evil.example",
        "evil.example:8765",
        "127.0.0.1.evil.example",
        "localhost.evil.example:8765",
        "127.0.0.1:8765@evil.example",
        "localhost:http",
        "[::1]evil",
        "[::1]:x",
        "",
        "0.0.0.0:8765",
        "192.168.1.5:8765",
    ],
)
def test_foreign_host_headers_are_403_on_every_route(tmp_path: Path, host_header: str) -> None:
    client = TestClient(EmbeddedHost(tmp_path), client=("127.0.0.1", 50000))
    for url in ("/", f"{PREFIX}/api/timeline?session=x", f"{PREFIX}/static/panel.css"):
        response = client.get(url, headers={"Host": host_header})
        assert response.status_code == 403, (host_header, url)
        assert response.headers["x-content-type-options"] == "nosniff"


def test_a_non_loopback_client_is_403_without_a_token(tmp_path: Path) -> None:
    client = TestClient(
        EmbeddedHost(tmp_path), base_url="http://127.0.0.1:8765", client=("10.0.0.7", 40000)
    )
    assert client.get("/").status_code == 403
    assert client.get(f"{PREFIX}/panel?session=x").status_code == 403


def test_with_a_token_every_request_needs_it_and_it_is_never_echoed(tmp_path: Path) -> None:
    client = TestClient(EmbeddedHost(tmp_path, bind_host="0.0.0.0", token=TOKEN), **PUBLIC)
    urls = [
        "/",
        f"{PREFIX}/api/timeline?session=x",
        f"{PREFIX}/api/messages/m?session=x",
        f"{PREFIX}/panel?session=x",
        f"{PREFIX}/panel/board?session=x",
        f"{PREFIX}/static/panel.css",
        f"{PREFIX}/static/htmx-2.0.11.min.js",
    ]
    wrong = [TOKEN[:-1], TOKEN + "x", TOKEN.lower(), TOKEN.upper(), "", "null"]
    for url in urls:
        assert client.get(url).status_code == 401, url
        for guess in wrong:
            sep = "&" if "?" in url else "?"
            assert client.get(f"{url}{sep}token={guess}").status_code == 401, (url, guess)
            client.cookies.set(TOKEN_COOKIE, guess)
            assert client.get(url).status_code == 401, (url, guess)
            client.cookies.clear()

    landing = client.get(f"/?token={TOKEN}", follow_redirects=False)
    assert landing.status_code == 303 and landing.headers["location"] == "/"
    cookie = landing.headers["set-cookie"]
    assert "httponly" in cookie.lower() and "samesite=strict" in cookie.lower()
    assert TOKEN not in landing.text
    for url in urls:  # the cookie now opens every route, and no page repeats the token
        response = client.get(url)
        assert response.status_code in (200, 400, 404), url
        assert TOKEN not in response.text, url
    page = client.get(f"{PREFIX}/panel?session=x&token={TOKEN}")
    assert TOKEN not in page.text


def test_token_cookie_does_not_work_across_a_different_token(tmp_path: Path) -> None:
    first = TestClient(EmbeddedHost(tmp_path, bind_host="0.0.0.0", token=TOKEN), **PUBLIC)
    first.get(f"/?token={TOKEN}")
    stolen = dict(first.cookies)
    second = TestClient(EmbeddedHost(tmp_path, bind_host="0.0.0.0", token="other"), **PUBLIC)
    second.cookies.update(stolen)
    assert second.get("/").status_code == 401


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _first_answer(proc: subprocess.Popen[bytes], url: str) -> Any:
    """GET ``url`` as soon as the server started by ``proc`` answers (it must not exit first)."""
    import time

    import httpx

    deadline = time.monotonic() + 20
    while True:
        try:
            return httpx.get(url, timeout=1)
        except httpx.TransportError:
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)


def test_serve_on_a_public_address_takes_the_token_from_the_environment(tmp_path: Path) -> None:
    import os

    import httpx

    port = _free_port()
    env = {**os.environ, TOKEN_ENV: TOKEN}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "dsh_task_gantt.cli",
            "serve",
            "--host",
            "0.0.0.0",
            "--port",
            str(port),
            "--sessions-root",
            str(tmp_path),
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        first = _first_answer(proc, base + "/")
        assert first.status_code == 401 and TOKEN not in first.text
        with httpx.Client(base_url=base, timeout=5, follow_redirects=True) as client:
            assert client.get(f"/?token={TOKEN}").status_code == 200  # redirected, cookie set
            assert client.get(f"{PREFIX}/api/timeline?session=nobody").status_code == 404
            client.cookies.clear()
            assert client.get(f"{PREFIX}/api/timeline?session=nobody").status_code == 401
    finally:
        proc.terminate()
        _, stderr = proc.communicate(timeout=10)
    # The one-time URL is printed once, to the operator's terminal, and nothing else is.
    assert stderr.decode().count(TOKEN) == 1 and "Traceback" not in stderr.decode()


def test_serve_binds_loopback_by_default() -> None:
    from dsh_task_gantt.cli import build_parser

    args = build_parser().parse_args(["serve"])
    assert args.host == "127.0.0.1"


# -- behind the DSH package's proxy: a per-boot secret instead of the Host check ---------

SECRET = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
#: What the proxy forwards: DSH's own Host (not a loopback name) from a loopback client.
DSH_HOST = {"base_url": "http://dsh.example:3080", "client": ("127.0.0.1", 50000)}
PROXIED_URLS = [
    "/",
    f"{PREFIX}/panel?session=x",
    f"{PREFIX}/api/timeline?session=x",
    f"{PREFIX}/api/messages/m?session=x",
    f"{PREFIX}/static/panel.css",
]


def test_behind_a_proxy_a_request_without_the_secret_is_401_and_a_wrong_one_403(
    tmp_path: Path,
) -> None:
    client = TestClient(EmbeddedHost(tmp_path, proxy_secret=SECRET), **DSH_HOST)
    wrong = [SECRET[:-1], SECRET + "0", SECRET.upper(), "x", " " + SECRET]
    for url in PROXIED_URLS:
        assert client.get(url).status_code == 401, url
        assert client.get(url, headers={PROXY_HEADER: ""}).status_code == 401, url
        for guess in wrong:
            response = client.get(url, headers={PROXY_HEADER: guess})
            assert response.status_code == 403, (url, guess)
            assert SECRET not in response.text
        # Loopback Host, token and cookie do not stand in for the secret either.
        local = client.get(url, headers={"Host": "127.0.0.1:8765"}, params={"token": SECRET})
        assert local.status_code == 401, url


def test_behind_a_proxy_the_secret_lets_in_dsh_host_and_is_never_echoed(tmp_path: Path) -> None:
    client = TestClient(EmbeddedHost(tmp_path, proxy_secret=SECRET), **DSH_HOST)
    for url in PROXIED_URLS:
        response = client.get(url, headers={PROXY_HEADER: SECRET})
        assert response.status_code in (200, 404), url  # 404: no session "x" under tmp_path
        assert SECRET not in response.text and SECRET not in str(response.headers)
    start = client.get("/", headers={PROXY_HEADER: SECRET})
    assert start.status_code == 200 and "No agent teams found" in start.text


def test_the_proxy_secret_is_compared_in_constant_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    compared: list[tuple[bytes, bytes]] = []
    real = guard.hmac.compare_digest

    def spy(a: bytes, b: bytes) -> bool:
        compared.append((a, b))
        return real(a, b)

    monkeypatch.setattr(guard.hmac, "compare_digest", spy)
    client = TestClient(EmbeddedHost(tmp_path, proxy_secret=SECRET), **DSH_HOST)
    assert (
        client.get(f"{PREFIX}/static/panel.css", headers={PROXY_HEADER: "guess"}).status_code == 403
    )
    assert compared == [(b"guess", SECRET.encode())]


def test_without_proxy_mode_the_header_opens_nothing(tmp_path: Path) -> None:
    client = TestClient(EmbeddedHost(tmp_path), **DSH_HOST)  # standalone: Host check as before
    for url in PROXIED_URLS:
        assert client.get(url, headers={PROXY_HEADER: SECRET}).status_code == 403, url


def test_serve_behind_a_proxy_takes_the_secret_from_the_environment_not_the_command_line() -> None:
    import os

    import httpx

    port = _free_port()
    env = {**os.environ, PROXY_SECRET_ENV: SECRET}
    env.pop(TOKEN_ENV, None)
    proc = subprocess.Popen(
        [
            *(sys.executable, "-m", "dsh_task_gantt.cli", "serve", "--behind-proxy"),
            *("--port", str(port), "--sessions-root", str(FIXTURES)),
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        bare = _first_answer(proc, f"{base}{PREFIX}/static/panel.css")
        assert bare.status_code == 401
        with_secret = httpx.get(
            f"{base}/", headers={PROXY_HEADER: SECRET, "Host": "dsh.example:3080"}, timeout=10
        )
        assert with_secret.status_code == 200 and "/plugins/dsh-task-gantt/panel?session=" in (
            with_secret.text
        )
        cmdline = Path(f"/proc/{proc.pid}/cmdline")
        if cmdline.exists():  # what ps shows
            assert SECRET.encode() not in cmdline.read_bytes()
    finally:
        proc.terminate()
        _, stderr = proc.communicate(timeout=10)
    assert SECRET not in stderr.decode() and "Traceback" not in stderr.decode()


def test_behind_a_proxy_the_server_stops_when_its_parent_dies(tmp_path: Path) -> None:
    import os

    port = _free_port()
    # A parent that starts the server, waits until it answers, then dies without a word
    # (as a proxy killed with SIGKILL would).
    parent = f"""
import os, subprocess, sys, time, httpx
child = subprocess.Popen([sys.executable, "-m", "dsh_task_gantt.cli", "serve", "--behind-proxy",
                          "--port", "{port}", "--sessions-root", {str(tmp_path)!r}],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
deadline = time.monotonic() + 20
while time.monotonic() < deadline:
    try:
        httpx.get("http://127.0.0.1:{port}/", timeout=1)
        break
    except httpx.TransportError:
        time.sleep(0.05)
print(child.pid, flush=True)
os._exit(0)
"""
    env = {**os.environ, PROXY_SECRET_ENV: SECRET}
    env.pop(TOKEN_ENV, None)
    launched = subprocess.run(
        [sys.executable, "-c", parent], env=env, capture_output=True, text=True, timeout=60
    )
    pid = int(launched.stdout.strip())
    gone = _gone_within(pid, seconds=15)
    if not gone:
        os.kill(pid, signal.SIGKILL)
    assert gone, "the orphaned server kept running"


def _gone_within(pid: int, seconds: float) -> bool:
    import os
    import time

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
            if state == "Z":  # exited; waiting for whoever adopted it to reap it
                return True
        except (ProcessLookupError, FileNotFoundError):
            return True
        time.sleep(0.1)
    return False


# -- the start page's view model --------------------------------------------------------


def test_start_page_cards_say_their_counts_in_words() -> None:
    from dsh_task_gantt.embedded.teams import TeamStub, by_workspace, summary_text, team_card

    stub = TeamStub("s-lead", "/w/alpha/", 5)
    timeline = {
        "live": False,
        "range": {"start": 0, "end": 9_000},
        "source": "partial",
        "lanes": [
            {
                "kind": "lead",
                "name": "boss",
                "spans": [
                    {"kind": "user-prompt", "preview": "build it", "time": 1},
                    {"kind": "turn", "time": 1, "end": 2},
                    {"kind": "message", "id": "m1", "time": 3},
                ],
            },
            {"kind": "teammate", "name": "verify", "channel": "unreadable", "spans": []},
        ],
        "tasks": [{"status": "completed"}, {"status": "pending"}, {"status": "deleted"}],
    }
    card = team_card(stub, "/panel?session=s-lead", timeline)
    assert (card.title, card.state, card.last_activity) == ("build it", "frozen", 9_000)
    assert (card.turns_text, card.messages_text) == ("1 turn", "1 message")
    assert card.tasks_text == "tasks 1/2 done" and card.tasks_tooltip == "1 of 2 tasks completed"
    assert card.partial and card.members[0].unreadable
    many = team_card(stub, "", {**timeline, "lanes": [{"kind": "lead", "spans": []}]})
    assert many.title == "Team of lead" and many.turns_text == "0 turns"
    bare = team_card(TeamStub("s-old", "/w/beta", 1), "", None)
    assert not bare.summarised and bare.title == "Team of lead"
    groups = by_workspace([bare, card, team_card(TeamStub("s-2", "/w/beta", 2), "", None)])
    assert [g.name for g in groups] == ["alpha", "beta"]
    assert [c.lead for c in groups[1].teams] == ["s-2", "s-old"]
    assert summary_text(3, 2) == "3 teams in 2 workspaces"
    assert summary_text(1, 1, 1_204) == "1 team in 1 workspace · 1,204 single sessions"


def _row(
    session_id: Any, parent: Any = None, created: Any = 1, cwd: Any = "/w/a"
) -> dict[str, Any]:
    header = {"type": "session", "id": session_id, "createdAt": created, "cwd": cwd}
    if parent is not None:
        header["parentSession"] = parent
    return {"id": session_id, "header": header, "revision": f"r-{session_id}"}


LISTING_ROWS = [
    _row("lead", created=10),
    _row("mate", "lead", created=12),
    _row("sub", "mate", created=30),  # a teammate's subagent belongs to the same team
    _row("orphan", "gone", created=20),  # its lead has no log here: a lead itself
    _row("solo", created=25),
    _row("c1", "c2"),  # a parent cycle has no lead: listed nowhere
    _row("c2", "c1"),
    {"id": "junk", "header": "<b>not a header</b>"},
    {"id": 7, "header": {"id": 7}},
    {"header": {"id": "no-row-id"}},
]


def test_listing_finds_teams_by_parent_session_and_keeps_singles_apart() -> None:
    from dsh_task_gantt.embedded.teams import listing

    found = listing(LISTING_ROWS)
    assert [(t.lead, t.members, t.newest_at) for t in found.teams] == [
        ("lead", ("mate", "sub"), 30)
    ]
    assert [s.lead for s in found.singles] == ["solo", "orphan"]
    assert found.stub("sub") is None and found.stub("lead") == found.teams[0]
    assert found.stub("solo") == found.singles[0]


@given(st.permutations(LISTING_ROWS + LISTING_ROWS[:3]))
def test_listing_does_not_depend_on_the_order_or_repeats_of_rows(
    rows: list[dict[str, Any]],
) -> None:
    from dsh_task_gantt.embedded.teams import listing

    assert listing(rows) == listing(LISTING_ROWS)


def test_counts_are_formatted_for_reading() -> None:
    from dsh_task_gantt.embedded.teams import counted

    assert counted(1_204, "message") == "1,204 messages"
    assert counted(1, "turn") == "1 turn"


def test_a_log_without_its_header_yet_is_not_listed_and_joins_its_team_once_written(
    tmp_path: Path,
) -> None:
    """A member's log is created empty (or its first zstd frame is not flushed yet):
    it is no single session of its own, and once the header is written (an append,
    which changes no folder) the next poll puts it in its lead's team."""
    made = start_root(tmp_path)
    client, host, _ = _start_host(made.root)
    lists = _count_lists(host)
    before = client.get(f"{PREFIX}/start/live").json()
    lone = made.singles[0]
    lead_header = asyncio.run(host.start_page.persistence.stat(lone.lead_id))["header"]
    lead_log = made.root / lone.member(lone.lead_id).rel_path  # type: ignore[operator]
    folder = lead_log.parent.parent / "session-joining"
    folder.mkdir()
    log_file = folder / "session.v4.jsonl"
    log_file.write_bytes(b"")
    assert client.get(f"{PREFIX}/start/live").json() == before  # nothing to place yet
    assert client.get(f"{PREFIX}/start/live").json() == before
    assert len(lists) == 2  # a log that stays as it was is not listed again
    # not silently: the page says which log it leaves out, and why
    note = re.search(r'<p class="headerless"[^>]*>(.*?)</p>', client.get("/").text, re.S)
    assert note is not None and "1 log is not listed: no session header was read" in note[1]
    assert str(log_file.relative_to(made.root)) in note[1]
    header = {
        "type": "session",
        "id": "session-joining",
        "createdAt": lead_header["createdAt"] + 1,
        "cwd": lead_header["cwd"],
        "parentSession": lone.lead_id,
    }
    log_file.write_text(json.dumps(header) + "\n")
    after = client.get(f"{PREFIX}/start/live").json()
    assert len(lists) == 3
    assert lone.lead_id not in after["singles"]
    assert lone.lead_id in [lead for group in after["groups"] for lead in group["leads"]]
    assert "session-joining" not in after["singles"]
    assert after["summary"] == "4 teams in 2 workspaces · 1 single session"
    assert 'class="headerless"' not in client.get("/").text


def test_the_start_pages_summaries_are_one_per_team_listed_however_often_asked(
    tmp_path: Path,
) -> None:
    """The start page remembers one small summary per team under the root: cards and
    live polls asked again and again, and cards for sessions that are not there, add
    nothing (the timelines themselves are the service's, which keeps a few)."""
    made = start_root(tmp_path)
    client, host, _ = _start_host(made.root)
    for _ in range(3):
        for spec in (*made.teams, *made.singles):
            client.get(f"{PREFIX}/start/card?session={spec.lead_id}")
        for n in range(20):
            client.get(f"{PREFIX}/start/card?session=session-missing-{n}")
        client.get(f"{PREFIX}/start/live")
    listed = {s.lead_id for s in (*made.teams, *made.singles)}
    assert set(host.start_page._summarised) == listed


def test_panels_of_teams_opened_one_after_another_keep_only_the_kept_teams(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A user clicking through the start page opens team after team: the panels' memos
    and the readers end up holding the last TEAMS_KEPT teams, not all of them."""
    import dsh_task_gantt.service as service_module
    from dsh_task_gantt import memo

    monkeypatch.setattr(service_module, "TEAMS_KEPT", 2)
    specs = [generate_team(tmp_path, seed=60 + i, scale="small") for i in range(5)]
    host = EmbeddedHost(tmp_path)
    memo.clear_memos()
    try:
        with TestClient(host, base_url="http://127.0.0.1:8765", client=("127.0.0.1", 50000)) as c:
            for spec in specs:
                page = c.get("/plugins/dsh-task-gantt/panel", params={"session": spec.lead_id})
                assert page.status_code == 200
        teams = host.plugin.service._teams.values()
        kept = {m for t in teams for m in (t.snapshot.lead.session_id, *t.snapshot.members)}
        assert {s.lead_id for s in specs[3:]} <= kept
        panel = host.plugin.app.panel
        owners = {o for m in (panel._lanes, panel._tasks) for o in m._owned}
        assert owners and owners <= kept
        assert {path.parent.name for path in host.persistence._entries} <= kept
    finally:
        memo.clear_memos()
