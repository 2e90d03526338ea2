"""The browser half (plugin/dsh/client.js) against DSH itself: ``@deepseek-ai/dsh@0.1.0-rc.8``.

Two checks the fake client context cannot make on its own:

- ``plugin/dsh/realdsh/cordis.test.js`` runs the client half under the ``@deepseek-ai/cordis``
  that DSH installs (a plugin with an empty ``inject`` is active with no service; each
  feature's child fiber starts when its services appear and stops when they go; a plugin
  requiring a missing service stays pending);
- DSH's own window, in Chromium, with the package added as a user adds it: it renders
  (0.1.0-rc.8 has no ``sidebarRightTabs``, which the earlier client required), the client
  says once in the console what this DSH lacks, its "Agent teams" link at the foot of DSH's
  sidebar opens the start page through DSH's port, and DSH writes the dark-theme attribute
  the client follows.

DSH 0.1.0-rc.8 has no right-sidebar tab API, so the tab itself cannot be opened here (the
package README says why no DSH that has one can run on this machine). Skipped, saying
why, only when npm or its registry is unavailable (the install is tests/kit/dsh_npm.py's).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.kit.browser import CHROMIUM, WIDE, Watched, browser, sync_api
from tests.kit.chromium import free_port
from tests.kit.dsh_npm import (
    BOOT_TIMEOUT_S,
    DSH_VERSION,
    ENABLE_HMR,
    STOP_TIMEOUT_S,
    URL_LINE,
    DshInstall,
    RegistryUnavailable,
    add_package,
    install_dsh,
)

__all__ = ["browser"]  # the module-scoped Chromium fixture, shared

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "plugin" / "dsh"
FIXTURES = ROOT / "fixtures" / "sessions"
#: A fixture team's lead: the start page lists it.
LEAD = "session-bbea4661-0acc-4317-8d18-889da97edfab"
NODE = shutil.which("node")
#: How long DSH's window may take to boot its plugins and render.
WINDOW_MS = 20_000
NOTICE = "[dsh-team-timeline]"
DIALOG_MS = 5_000
#: What DSH 0.1.0-rc.8 asks on a fresh DSH_HOME before its window takes clicks.
FIRST_DIALOGS = [
    ("Internal Testing Notice", "Continue"),
    ("Add an API key to get started", "Configure later"),
]

in_chromium = pytest.mark.skipif(
    not CHROMIUM.exists(), reason="Debian's /usr/bin/chromium is not installed"
)


@pytest.fixture(scope="module")
def dsh_install() -> DshInstall:
    try:
        return install_dsh()
    except RegistryUnavailable as why:
        pytest.skip(f"DSH {DSH_VERSION} cannot be installed from npm: {why}")


@pytest.fixture(scope="module")
def dsh_web(dsh_install: DshInstall, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``dsh web`` on a fresh DSH_HOME with this package added; yields its base URL."""
    home = tmp_path_factory.mktemp("dsh-client-home")
    sessions = tmp_path_factory.mktemp("dsh-client-sessions") / "sessions"
    shutil.copytree(FIXTURES, sessions)
    add_package(
        dsh_install, home, PACKAGE, {"python": sys.executable, "sessionsRoot": str(sessions)}
    )
    env = dsh_install.env(DSH_HOME=str(home))
    overlay = home / "enable-hmr.yml"
    overlay.write_text(ENABLE_HMR)
    command = [str(dsh_install.node), str(dsh_install.cli), "--profile", "web", "--patch"]
    command += [str(overlay), "--port", str(free_port()), "--no-open"]
    log_path = home / "dsh.log"
    with log_path.open("w") as log:
        proc = subprocess.Popen(
            command, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        try:
            deadline = time.monotonic() + BOOT_TIMEOUT_S
            while (match := URL_LINE.search(log_path.read_text(errors="replace"))) is None:
                if proc.poll() is not None or time.monotonic() > deadline:
                    said = log_path.read_text(errors="replace")[-3000:]
                    pytest.fail(f"DSH did not start (exit {proc.returncode}):\n{said}")
                time.sleep(0.1)
            yield match.group(1)
        finally:
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)
                try:
                    proc.wait(timeout=STOP_TIMEOUT_S)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()


def _answer_first_dialogs(page: Any) -> None:
    """Answer the dialogs DSH opens with until its window takes clicks (``#root`` not inert)."""
    first = page.get_by_role("dialog", name=FIRST_DIALOGS[0][0])
    # A fresh DSH_HOME opens with it, a moment after the window renders.
    with contextlib.suppress(sync_api.TimeoutError):
        first.wait_for(timeout=DIALOG_MS)
    deadline = time.monotonic() + WINDOW_MS / 1000
    while page.evaluate("() => document.getElementById('root').inert"):
        assert time.monotonic() < deadline, "DSH's window stayed behind a dialog"
        for dialog, answer in FIRST_DIALOGS:
            if page.get_by_role("dialog", name=dialog).is_visible():
                page.get_by_role("button", name=answer).click()
        page.wait_for_timeout(200)


@pytest.mark.skipif(NODE is None, reason="Node is not installed (apt-get install nodejs)")
def test_the_client_half_under_the_cordis_dsh_installs(dsh_install: DshInstall) -> None:
    cordis = dsh_install.root / "node_modules" / "@deepseek-ai" / "cordis"
    assert (cordis / "lib" / "index.js").is_file(), f"DSH {DSH_VERSION} came without cordis"
    run = subprocess.run(
        [str(NODE), "--test", "realdsh/cordis.test.js"],
        cwd=PACKAGE,
        env={**os.environ, "DSH_TASK_GANTT_CORDIS": str(cordis)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert re.search(r"^# pass 2$", run.stdout, re.M), run.stdout[-2000:]
    assert re.search(r"^# skipped 0$", run.stdout, re.M), "the real-cordis checks were skipped"


@pytest.mark.browser
@in_chromium
def test_dsh_window_renders_and_the_client_says_once_what_this_dsh_lacks(
    dsh_web: str, browser: Any
) -> None:
    watched = Watched(browser, WIDE)
    said: list[tuple[str, str]] = []
    watched.page.on("console", lambda msg: said.append((msg.type, msg.text)))
    try:
        page = watched.page
        page.emulate_media(color_scheme="dark")
        answer = page.goto(f"{dsh_web}/")
        assert answer is not None and answer.status == 200
        page.get_by_text("New Session").first.wait_for(timeout=WINDOW_MS)
        page.locator("textarea").first.wait_for(timeout=WINDOW_MS)
        assert "Failed to load plugins" not in page.inner_text("body")

        deadline = time.monotonic() + WINDOW_MS / 1000
        while not any(text.startswith(NOTICE) for _, text in said):
            assert time.monotonic() < deadline, f"no {NOTICE} line in the console: {said}"
            page.wait_for_timeout(100)
        page.wait_for_timeout(1_000)  # a second line would come now, if one were coming
        ours = [(kind, text) for kind, text in said if NOTICE in text]
        assert len(ours) == 1, ours
        kind, text = ours[0]
        assert kind == "info"
        assert 'no right-sidebar tab API (service "sidebarRightTabs"' in text
        assert 'no "sidebar.panellist" and "main" seat either' in text
        assert 'an "Agent teams" link at the foot of the left sidebar' in text

        # That link, in DSH's own sidebar, opens the start page in a new tab (once the two
        # dialogs a fresh DSH_HOME opens with are answered, as a user would).
        _answer_first_dialogs(page)
        link = page.locator('a[data-dsh-team-timeline="teams-link"]')
        assert link.count() == 1
        assert link.get_attribute("target") == "_blank"
        assert link.inner_text().strip() == "Agent teams"
        with page.context.expect_page() as opened:
            link.click()
        start = opened.value
        start.wait_for_load_state()
        assert start.url.startswith(f"{dsh_web}/plugins/dsh-task-gantt/?theme=dark&lang=en")
        start.locator(f'a[href*="{LEAD}"]').first.wait_for(timeout=WINDOW_MS)
        start.close()

        # DSH follows the system's dark scheme by default and marks <body> the way the
        # client watches for (`data-ds-dark-theme`).
        page.wait_for_function("() => document.body.hasAttribute('data-ds-dark-theme')")
        errors = [e for e in watched.errors if "favicon" not in e]
        assert errors == [], errors
    finally:
        watched.close()
