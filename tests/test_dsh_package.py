"""The DSH package (plugin/dsh): its Node tests, and the whole chain in real Chromium.

The chain: a DSH-like page mounts the real client half (plugin/dsh/client.js) with a
fake client context; its iframe loads the panel through the real host half's proxy
(plugin/dsh/index.js on a real Node HTTP server) from a real ``dsh-task-gantt serve
--behind-proxy`` child over the repository's fixtures.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.kit.browser import CHROMIUM, WIDE, Watched, browser

__all__ = ["browser"]  # the module-scoped Chromium fixture, shared

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "plugin" / "dsh"
NODE = shutil.which("node")
PREFIX = "/plugins/dsh-task-gantt"
#: A frozen team of the fixtures: a lead and its teammates.
LEAD = "session-bbea4661-0acc-4317-8d18-889da97edfab"
#: The demo page's own files (everything else must come from under the prefix).
DEMO_FILES = {"/", "/demo/page.js", "/demo/page.css", "/demo/mini-dsh.js", "/demo/loader.js"} | {
    "/demo/client.js"
}

in_chromium = pytest.mark.skipif(
    not CHROMIUM.exists(), reason="Debian's /usr/bin/chromium is not installed"
)
needs_node = pytest.mark.skipif(
    NODE is None, reason="node is not installed (apt-get install nodejs)"
)


def _node_env() -> dict[str, str]:
    # The Node tests start this interpreter's dsh-task-gantt (the one pytest imports).
    return {**os.environ, "DSH_TASK_GANTT_TEST_PYTHON": sys.executable}


@needs_node
def test_the_node_tests_of_the_dsh_package_pass() -> None:
    assert NODE is not None
    run = subprocess.run(
        [NODE, "--test", "test/"],
        cwd=PACKAGE,
        env=_node_env(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    summary = dict(re.findall(r"^# (pass|fail|skipped|cancelled) (\d+)$", run.stdout, re.M))
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]
    assert summary.get("fail") == "0" and summary.get("cancelled") == "0", summary
    # With this interpreter handed over, the host tests run against the real server.
    if sys.platform == "linux":
        assert summary.get("skipped") == "0", run.stdout[-4000:]
    assert int(summary.get("pass", "0")) >= 18, summary


@pytest.fixture(scope="module")
def dsh_page() -> Iterator[str]:
    if NODE is None:
        pytest.skip("node is not installed (apt-get install nodejs)")
    proc = subprocess.Popen(
        [NODE, str(PACKAGE / "testing" / "demo-host.js")],
        env=_node_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line, proc.stderr.read() if proc.stderr else "the demo host said nothing"
        yield str(json.loads(line)["url"])
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.fixture
def tab(browser: Any, dsh_page: str) -> Iterator[tuple[Watched, Any, Any]]:
    """The DSH-like page showing the lead's tab: the watched page, its panel frame (and locator)."""
    watched = Watched(browser, WIDE)
    try:
        page = watched.page
        page.goto(f"{dsh_page}/?session={LEAD}")
        page.wait_for_function(
            "() => { const f = document.querySelector('#pane iframe');"
            " return f && f.contentDocument && f.contentDocument.querySelector('.lane') }"
        )
        frame = next(f for f in page.frames if urlsplit(f.url).path == f"{PREFIX}/panel")
        yield watched, frame, page.frame_locator("#pane iframe")
    finally:
        watched.close()


def _outside_the_prefix(requests: list[str], base: str) -> list[str]:
    return [
        url
        for url in requests
        if url.startswith(base)
        and urlsplit(url).path not in DEMO_FILES
        and not urlsplit(url).path.startswith(PREFIX + "/")
    ]


@pytest.mark.browser
@in_chromium
def test_the_tab_shows_the_panel_and_follows_dsh_theme_and_language(
    tab: tuple[Watched, Any, Any], dsh_page: str
) -> None:
    watched, frame, _ = tab
    page = watched.page
    assert page.locator("#tab-title").inner_text() == "Team timeline"
    background = "getComputedStyle(document.body).backgroundColor"
    assert frame.evaluate(background) == "rgb(255, 255, 255)"
    assert frame.evaluate("document.documentElement.lang") == "en"

    page.evaluate("document.body.setAttribute('data-ds-dark-theme', '')")
    frame.wait_for_function(f"{background} === 'rgb(20, 23, 28)'")
    page.evaluate("document.body.removeAttribute('data-ds-dark-theme')")
    frame.wait_for_function(f"{background} === 'rgb(255, 255, 255)'")

    page.evaluate("window.setLocale('zh-CN')")
    frame.wait_for_function("() => document.documentElement.lang === 'zh-CN'")

    assert _outside_the_prefix(watched.requests, dsh_page) == []
    assert watched.errors == [], watched.errors


@pytest.mark.browser
@in_chromium
def test_a_member_click_opens_that_conversation_and_a_forged_message_does_not(
    tab: tuple[Watched, Any, Any],
) -> None:
    watched, frame, frame_locator = tab
    page = watched.page
    lanes = frame.evaluate(
        "fetch(document.body.dataset.prefix + '/api/timeline?session=' +"
        " document.body.dataset.session).then(r => r.json()).then(t => t.lanes)"
    )
    member = next(lane for lane in lanes if lane["kind"] == "teammate" and lane["sessionId"])
    opened = "window.openedSessions.length"

    chip = frame_locator.locator(f'[data-lane="{member["id"]}"] .name .chip')
    assert chip.get_attribute("role") == "button"
    chip.click()
    page.wait_for_function(f"{opened} === 1")
    lead_chip = frame_locator.locator('[data-lane="lead"] .name .chip')
    lead_chip.focus()
    lead_chip.press("Enter")
    page.wait_for_function(f"{opened} === 2")
    assert page.evaluate("window.openedSessions") == [member["sessionId"], LEAD]

    # Another same-origin frame, the page itself, and the right frame with a bad id.
    page.evaluate(
        """() => new Promise((done) => {
             const other = document.createElement('iframe');
             other.src = '/demo/page.css';
             other.onload = () => {
               const message = {type: 'dsh-task-gantt:open-session', sessionId: 'forged'};
               other.contentWindow.parent.postMessage(message, '*');
               window.postMessage(message, '*');
               done();
             };
             document.body.appendChild(other);
           })"""
    )
    frame.evaluate(
        "parent.postMessage({type: 'dsh-task-gantt:open-session', sessionId: '../../x'}, '*')"
    )
    page.wait_for_timeout(300)
    assert page.evaluate("window.openedSessions") == [member["sessionId"], LEAD]
    assert watched.errors == [], watched.errors


@pytest.mark.browser
@in_chromium
def test_the_teams_page_and_every_url_in_it_resolve_under_the_prefix(
    browser: Any, dsh_page: str
) -> None:
    watched = Watched(browser, WIDE)
    try:
        page = watched.page
        page.goto(f"{dsh_page}/?view=teams&session={LEAD}")
        teams = page.frame_locator(".conversation iframe")
        assert teams.locator(".team").count() >= 2
        start = next(f for f in page.frames if urlsplit(f.url).path == f"{PREFIX}/")
        background = "getComputedStyle(document.body).backgroundColor"
        light = start.evaluate(background)
        page.evaluate("document.body.setAttribute('data-ds-dark-theme', '')")
        start.wait_for_function(f"{background} !== {json.dumps(light)}")
        assert start.evaluate("document.documentElement.dataset.theme") == "dark"
        teams.locator(f'a[href*="{LEAD}"]').first.click()
        teams.locator(".lane").first.wait_for()
        paths = {urlsplit(f.url).path for f in page.frames}
        assert f"{PREFIX}/panel" in paths
        assert _outside_the_prefix(watched.requests, dsh_page) == []
        assert watched.errors == [], watched.errors
    finally:
        watched.close()
