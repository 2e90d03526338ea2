"""The DSH package inside DSH itself: ``@deepseek-ai/dsh@0.1.0-rc.8`` from npm, ``dsh web``
(and a DSH built from its repository, e.g. 0.1.1-rc.2, when $DSH_TASK_GANTT_DSH_TREE names one).

The package is added the way a user adds it (``dsh plugin --profile web add link:plugin/dsh``)
to a fresh DSH_HOME; its row's settings (the Python to run, a copy of the fixtures as the
sessions root) go into that profile's own patch layer, as the package README says. DSH is
then started, and its window and the panel are opened in Chromium through DSH's own port.

The web profile of rc.8 does not boot as published: its bundle layer turns Cordis HMR off
("TODO: Re-enable shared HMR for Web"), while the profile's user-patch watcher needs the HMR
service (``dsh: user patch-layer watching requires the Cordis HMR service``, then exit 1).
The supported way round it is a ``--patch`` overlay, DSH's own flag for extra patch layers
applied after the bundles and the profile's layer: ``enable-hmr.yml`` = ``- id: hmr`` /
``disabled: false``. No file of DSH is edited. A built 0.1.1-rc.2 boots without it.

Skipped (saying why) only when npm or its registry is unavailable; the install is cached
(tests/kit/dsh_npm.py).
"""

from __future__ import annotations

import dataclasses
import http.client
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.kit.browser import CHROMIUM, WIDE, Watched, browser
from tests.kit.chromium import free_port
from tests.kit.dsh_npm import (
    BOOT_TIMEOUT_S,
    DSH_VERSION,
    ENABLE_HMR,
    STOP_TIMEOUT_S,
    TREE_ENV,
    URL_LINE,
    DshInstall,
    RegistryUnavailable,
    add_package,
    built_tree,
    copy_sessions_written_last_by,
    install_dsh,
)
from tests.kit.processes import is_panel_server

__all__ = ["browser"]  # the module-scoped Chromium fixture, shared

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "plugin" / "dsh"
FIXTURES = ROOT / "fixtures" / "sessions"
PREFIX = "/plugins/dsh-task-gantt"
#: A frozen team of the fixtures (its lead's session): made the team written last.
LEAD = "session-bbea4661-0acc-4317-8d18-889da97edfab"
#: The Python server says when its start-up read is over, and the package relays that
#: line into DSH's output: from then on the first panel opened is warm. A bound, not a
#: guess at how long it takes (1-2 s on an idle 2-core machine, more when it is shared).
READY_LINE_TIMEOUT_S = 60
READY_LINE = re.compile(
    r"dsh-team-timeline: dsh-task-gantt: ready; read the team (\S+) at start-up in (\d+) ms"
)
DSH_WINDOW_TIMEOUT_MS = 60_000

in_chromium = pytest.mark.skipif(
    not CHROMIUM.exists(), reason="Debian's /usr/bin/chromium is not installed"
)


@dataclass
class RunningDsh:
    proc: subprocess.Popen[str]
    base: str
    port: int
    home: Path
    started_at: float
    #: When DSH printed its URL.
    ready_at: float
    #: When the package relayed the server's line saying its start-up read was over.
    warm_at: float
    #: What that line said: the team read, and how long the read took (ms).
    warm_line: tuple[str, int]
    #: The first panel request, made as soon as that line was in DSH's output.
    first_panel: tuple[int, dict[str, str], bytes, float]

    def output(self) -> str:
        log = self.home / "dsh.log"
        return log.read_text(errors="replace") if log.exists() else ""


def _request(
    port: int, path: str, headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str], bytes]:
    """A GET to DSH's port with exactly these headers (Host included, when given)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.putrequest("GET", path, skip_host=headers is not None and "Host" in headers)
        for name, value in (headers or {}).items():
            conn.putheader(name, value)
        conn.endheaders()
        answer = conn.getresponse()
        return answer.status, {k.lower(): v for k, v in answer.getheaders()}, answer.read()
    finally:
        conn.close()


def _descendants(pid: int) -> list[int]:
    """Every live process below ``pid`` (Linux: /proc)."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        parents[int(entry)] = int(stat[stat.rindex(")") + 2 :].split()[1])
    found: list[int] = []
    frontier = [pid]
    while frontier:
        parent = frontier.pop()
        children = [child for child, ppid in parents.items() if ppid == parent]
        found += children
        frontier += children
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.fixture(scope="module")
def dsh_install() -> DshInstall:
    try:
        return install_dsh()
    except RegistryUnavailable as why:
        pytest.skip(f"DSH {DSH_VERSION} cannot be installed from npm: {why}")


@pytest.fixture(scope="module", params=["npm", "tree"], ids=[f"npm-{DSH_VERSION}", "built-tree"])
def dsh(
    request: pytest.FixtureRequest,
    dsh_install: DshInstall,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[RunningDsh]:
    """DSH web with the package added: the npm one, and a built checkout when one is named."""
    overlays: list[str] = []
    if request.param == "tree":
        tree = built_tree()
        if tree is None:
            pytest.skip(
                f"no DSH built from its repository is pointed to ({TREE_ENV}=<a checkout of "
                "DSH 0.1.1-rc.2 or later after pnpm install && pnpm run build>)"
            )
        dsh_install = dataclasses.replace(dsh_install, tree=tree)
        assert dsh_install.cli.is_file(), f"{tree} has no built CLI (apps/cli/lib/bin.js)"
    home = tmp_path_factory.mktemp("dsh-home")
    sessions = tmp_path_factory.mktemp("dsh-sessions") / "sessions"
    copy_sessions_written_last_by(FIXTURES, LEAD, sessions)
    add_package(
        dsh_install, home, PACKAGE, {"python": sys.executable, "sessionsRoot": str(sessions)}
    )
    if request.param == "npm":
        overlay = home / "enable-hmr.yml"
        overlay.write_text(ENABLE_HMR)
        overlays = ["--patch", str(overlay)]
    port = free_port()
    command = [str(dsh_install.node), str(dsh_install.cli), "--profile", "web", *overlays]
    command += ["--port", str(port), "--no-open"]
    log = (home / "dsh.log").open("w")
    started_at = time.monotonic()
    proc = subprocess.Popen(
        command,
        env=dsh_install.env(DSH_HOME=str(home)),
        stdout=log,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        deadline = started_at + BOOT_TIMEOUT_S
        base = None
        while base is None:
            said = (home / "dsh.log").read_text(errors="replace")
            match = URL_LINE.search(said)
            if match:
                base = match.group(1)
            elif proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"DSH did not start (exit {proc.returncode}):\n{said[-3000:]}")
            else:
                time.sleep(0.1)
        ready_at = time.monotonic()
        # The first panel anyone opens, as soon as DSH's output says it will be warm.
        deadline = ready_at + READY_LINE_TIMEOUT_S
        warm = None
        while warm is None:
            said = (home / "dsh.log").read_text(errors="replace")
            warm = READY_LINE.search(said)
            if warm is None and (proc.poll() is not None or time.monotonic() > deadline):
                pytest.fail(
                    f"no ready line from the package within {READY_LINE_TIMEOUT_S} s of DSH's "
                    f"URL (exit {proc.returncode}):\n{said[-3000:]}"
                )
            if warm is None:
                time.sleep(0.05)
        warm_at = time.monotonic()
        asked = time.monotonic()
        status, headers, body = _request(port, f"{PREFIX}/panel?session={LEAD}")
        first = (status, headers, body, time.monotonic() - asked)
        line = (warm.group(1), int(warm.group(2)))
        yield RunningDsh(proc, base, port, home, started_at, ready_at, warm_at, line, first)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        log.close()


def test_dsh_says_when_the_first_panel_will_be_warm_and_it_is(dsh: RunningDsh) -> None:
    """The server's ready line reaches `dsh web`'s output (DSH 0.1.0's logger only buffers:
    the package echoes it to stderr) once, naming the team written last; the panel asked
    for at that moment is rendered whole, not streamed under a reading status."""
    root, read_ms = dsh.warm_line
    assert root == LEAD
    assert len(READY_LINE.findall(dsh.output())) == 1
    status, headers, body, seconds = dsh.first_panel
    assert status == 200, body[:500]
    load = os.getloadavg()[0]
    assert "content-length" in headers, (
        f"the first panel was read cold ({seconds:.3f} s, load {load})"
    )
    assert b"Reading the team" not in body
    assert LEAD.encode() in body
    print(
        f"\nready line {dsh.warm_at - dsh.started_at:.1f} s after DSH's start "
        f"({dsh.warm_at - dsh.ready_at:.1f} s after its URL; start-up read {read_ms} ms); "
        f"first panel {seconds * 1000:.0f} ms, load {load:.1f}"
    )


def test_the_routes_answer_trusted_requests_and_refuse_a_foreign_host_or_origin(
    dsh: RunningDsh,
) -> None:
    authority = f"127.0.0.1:{dsh.port}"
    for path in (f"{PREFIX}/", f"{PREFIX}/panel?session={LEAD}", f"{PREFIX}/static/panel.css"):
        assert _request(dsh.port, path)[0] == 200, path
        assert _request(dsh.port, path, {"Host": f"localhost:{dsh.port}"})[0] == 200, path
        same_origin = {"Host": authority, "Origin": f"http://{authority}"}
        assert _request(dsh.port, path, same_origin)[0] == 200, path
    refused = [
        {"Host": f"evil.example:{dsh.port}"},  # DNS rebinding: a name DSH does not serve
        {"Host": authority, "Origin": "http://evil.example"},
        {"Host": authority, "Origin": f"http://localhost:{dsh.port}"},
        {"Host": authority, "Sec-Fetch-Site": "cross-site"},
    ]
    for headers in refused:
        status, _, body = _request(dsh.port, f"{PREFIX}/panel?session={LEAD}", headers)
        assert status == 403, (headers, body[:300])
    # DSH refuses the same requests on its own /api: the fence is the same.
    assert _request(dsh.port, "/api/x", {"Host": f"evil.example:{dsh.port}"})[0] == 403


@pytest.mark.browser
@in_chromium
def test_dsh_window_renders_with_the_package_and_the_panel_loads_through_its_port(
    dsh: RunningDsh, browser: Any
) -> None:
    watched = Watched(browser, WIDE)
    try:
        page = watched.page
        # DSH's own bundle is several megabytes: on a busy machine it takes its time.
        page.set_default_timeout(DSH_WINDOW_TIMEOUT_MS)
        answer = page.goto(f"{dsh.base}/")
        assert answer is not None and answer.status == 200
        page.get_by_text("New Session").first.wait_for()
        page.locator("textarea").first.wait_for()
        assert "Failed to load plugins" not in page.inner_text("body")
        client = page.evaluate("fetch('/plugins/dsh-team-timeline/client.js').then(r => r.status)")
        assert client == 200

        start = page.goto(f"{dsh.base}{PREFIX}/")
        assert start is not None and start.status == 200
        page.locator(f'a[href*="{LEAD}"]').first.wait_for()
        panel = page.goto(f"{dsh.base}{PREFIX}/panel?session={LEAD}")
        assert panel is not None and panel.status == 200
        assert page.locator(".lane").count() >= 2
        errors = [e for e in watched.errors if "favicon" not in e]
        assert errors == [], errors
    finally:
        watched.close()


def test_the_python_child_stops_with_dsh(dsh: RunningDsh) -> None:
    """Last in this file: it stops DSH."""
    children = [pid for pid in _descendants(dsh.proc.pid) if is_panel_server(pid)]
    assert len(children) == 1, (children, dsh.output()[-2000:])
    # SIGINT to DSH alone (a terminal's Ctrl-C would signal the child too): DSH's own stop
    # must end it.
    dsh.proc.send_signal(signal.SIGINT)
    dsh.proc.wait(timeout=STOP_TIMEOUT_S)
    deadline = time.monotonic() + 10
    while _alive(children[0]) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(children[0]), "the dsh-task-gantt server outlived DSH"
