"""Text from a log is shown as text in every template, under a strict CSP.

One team whose every log-controlled string (message body, human prompt, member
name, task subject and description, workspace, the notes they end up in, message and
task ids) is hostile HTML, rendered through the real routes of the embedded host:
panel page, board, message fragment, task fragment, not-found pages and start page.
Each HTML answer is parsed: no element, attribute, inline script or ``javascript:``
URL may come from the log, and the hostile text must still be there, escaped.
"""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from dsh_task_gantt.embedded import EmbeddedHost
from dsh_task_gantt.panel import PANEL_CSP
from dsh_task_gantt.provider import TimelineResult
from dsh_task_gantt.resources import resource_path
from dsh_task_gantt.web import GanttApp
from tests.kit.teams import EVIL, hostile_team
from tests.kit.teams import HOSTILE_LEAD as LEAD

PREFIX = "/plugins/dsh-task-gantt"


class Audit(HTMLParser):
    """Collects what a browser would execute or follow."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.problems: list[str] = []
        self.text: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        for name, value in attrs:
            if name.startswith("on"):
                self.problems.append(f"event handler attribute {name} on <{tag}>")
            if value and value.strip().lower().startswith("javascript:"):
                self.problems.append(f"javascript: URL in {name} of <{tag}>")
        if tag == "script":
            src = dict(attrs).get("src") or ""
            if not src.startswith(f"{PREFIX}/static/"):
                self.problems.append(f"script not from the plugin's static files: {src!r}")
            self._in_script = True
        if tag in ("img", "style", "iframe", "object", "embed", "base"):
            self.problems.append(f"unexpected <{tag}>")

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script and data.strip():
            self.problems.append("inline script content")
        self.text.append(data)


def audit(html: str) -> Audit:
    parser = Audit()
    parser.feed(html)
    parser.close()
    return parser


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> TestClient:
    root = tmp_path_factory.mktemp("sessions")
    hostile_team(root)
    return TestClient(
        EmbeddedHost(root), base_url="http://127.0.0.1:8765", client=("127.0.0.1", 50000)
    )


HX = {"HX-Request": "true"}
PAGES: list[tuple[str, str, dict[str, str], tuple[str, ...]]] = [
    # (name, url, headers, hostile texts that must be visible as text)
    ("start", "/", {}, ("/w/",)),
    ("start-card", f"{PREFIX}/start/card?session={LEAD}", {}, ("prompt ", "name ")),
    ("panel", f"{PREFIX}/panel?session={LEAD}", {}, ("name ", "subject ")),
    ("panel-msg", f"{PREFIX}/panel?session={LEAD}&msg=m-1", {}, ("body ",)),
    ("board", f"{PREFIX}/panel/board?session={LEAD}", HX, ("name ",)),
    # the list view is drawn only when asked for (a page at a time)
    ("list", f"{PREFIX}/panel/board?session={LEAD}&list=1", HX, ("subject ", "prompt ")),
    ("message", f"{PREFIX}/api/messages/m-1?session={LEAD}", HX, ("body ", "name ")),
    ("task", f"{PREFIX}/panel/tasks/t-1?session={LEAD}", HX, ("subject ", "description ")),
    ("missing-page", f"{PREFIX}/panel?session=nobody", {}, ()),
    ("missing-fragment", f"{PREFIX}/panel/tasks/none?session={LEAD}", HX, ()),
]


@pytest.mark.parametrize(
    ("url", "headers", "visible"), [p[1:] for p in PAGES], ids=[p[0] for p in PAGES]
)
def test_log_text_is_shown_as_text_never_as_markup(
    client: TestClient, url: str, headers: dict[str, str], visible: tuple[str, ...]
) -> None:
    response = client.get(url, headers=headers)
    assert response.status_code in (200, 286, 404), response.text[:300]
    assert response.headers["content-type"].startswith("text/html")
    html = response.text
    assert "<script>alert" not in html and "<img src=x" not in html
    assert 'href="javascript:' not in html
    parsed = audit(html)
    assert parsed.problems == []
    shown = "".join(parsed.text)
    for prefix in visible:  # the hostile text is there, as text, after its label
        assert prefix + EVIL in shown, (prefix, shown[:2000])


def test_the_evil_message_id_is_carried_as_an_escaped_attribute(client: TestClient) -> None:
    # The mark carries its id only as data; panel.js quotes it into one path part when
    # it is clicked (checked in real Chromium: test_browser_panel's evil-ids test).
    board = client.get(f"{PREFIX}/panel/board?session={LEAD}", headers=HX).text
    assert 'data-msg="m-&#34;&gt;&lt;b&gt;x"' in board
    assert 'm-"><b>x' not in board


def test_hostile_json_is_data_not_markup(client: TestClient) -> None:
    response = client.get(f"{PREFIX}/api/messages/m-1", params={"session": LEAD})
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.json()["body"] == "body " + EVIL


@pytest.mark.parametrize(
    ("url", "headers"), [(p[1], p[2]) for p in PAGES], ids=[p[0] for p in PAGES]
)
def test_every_html_answer_has_the_csp_and_nosniff(
    client: TestClient, url: str, headers: dict[str, str]
) -> None:
    response = client.get(url, headers=headers)
    start_page = url == "/" or url.startswith(f"{PREFIX}/start/")
    assert response.headers["content-security-policy"] == PANEL_CSP or (
        start_page and "script-src 'self'" in response.headers["content-security-policy"]
    )
    assert response.headers["x-content-type-options"] == "nosniff"


def test_the_csp_allows_only_own_scripts_and_styles() -> None:
    directives = dict(
        [*part.strip().split(" ", 1), ""][:2] for part in PANEL_CSP.split(";") if part.strip()
    )
    assert directives["default-src"] == "'none'"
    assert directives["script-src"] == "'self'"  # no 'unsafe-inline', no 'unsafe-eval'
    assert directives["style-src"] == "'self'"
    assert directives["object-src"] == "'none'" and directives["base-uri"] == "'none'"
    assert "unsafe" not in directives["script-src"] + directives["style-src"]


@pytest.mark.parametrize(
    "url",
    [
        "/nothing-here",
        f"{PREFIX}/api/nothing?session={LEAD}",
        f"{PREFIX}/static/htmx-2.0.11.min.js",
        f"{PREFIX}/static/panel.css",
        f"{PREFIX}/api/timeline?session={LEAD}",
        f"{PREFIX}/api/timeline?session=..",
    ],
)
def test_nosniff_on_every_other_answer(client: TestClient, url: str) -> None:
    response = client.get(url)
    assert response.headers["x-content-type-options"] == "nosniff"
    if response.headers.get("content-type", "").startswith("text/html"):
        assert "content-security-policy" in response.headers


class HostileNotes:
    """The real service's timeline with notes and a lane error made of hostile text
    (today's notes hold counts and service names; this keeps the template honest)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    async def timeline(self, session_id: str) -> TimelineResult | None:
        result = await self.inner.timeline(session_id)
        if result is None:
            return None
        data = dict(result.data)
        data["notes"] = ["note " + EVIL]
        data["lanes"] = [dict(lane, error="error " + EVIL) for lane in data["lanes"]]
        return TimelineResult(data=data, encoded=result.body, etag=result.etag, live=result.live)

    async def message(self, session_id: str, message_id: str) -> Any:
        return await self.inner.message(session_id, message_id)

    async def current_etag(self, session_id: str) -> str | None:
        return await self.inner.current_etag(session_id)


async def _allow(request: Any) -> None:
    return None


def test_notes_and_lane_errors_are_shown_as_text(tmp_path: Path) -> None:
    hostile_team(tmp_path)
    service = EmbeddedHost(tmp_path).plugin.service
    app = GanttApp(HostileNotes(service), _allow, prefix=PREFIX, static_dir=resource_path("static"))
    client = TestClient(app, base_url="http://127.0.0.1:8765")
    for url in (f"{PREFIX}/panel?session={LEAD}", f"{PREFIX}/panel/board?session={LEAD}"):
        response = client.get(url, headers=HX)
        parsed = audit(response.text)
        assert parsed.problems == []
        shown = "".join(parsed.text)
        assert "note " + EVIL in shown
        assert 'title="error &lt;script&gt;' in response.text or "error &lt;script&gt;" in (
            response.text
        )
        assert response.headers["content-security-policy"] == PANEL_CSP
