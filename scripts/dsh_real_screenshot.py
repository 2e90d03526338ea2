"""The README's pictures of the package in DSH itself: ``python scripts/dsh_real_screenshot.py``.

Needs: the package installed (``pip install -e '.[test]'``), npm (it installs DSH
0.1.0-rc.8 into the test cache, as tests/test_dsh_real.py does) and Debian's Chromium at
``/usr/bin/chromium``. Writes ``docs/screenshots/dsh-real-window.png`` (DSH's window with
the package installed: as before, plus the package's "Agent teams" link at the foot of
the left sidebar), ``dsh-real-teams-link.png`` (that corner, at twice the scale),
``dsh-real-start.png`` (the start page through DSH's port, where the link leads) and
``dsh-real-panel.png`` (a fixture team's panel through DSH's port); ``--out`` to change
the folder. Everything on them is real: DSH from npm, the package added with ``dsh plugin
add link:``, the repository's fixture teams.
"""

from __future__ import annotations

import argparse
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from playwright.sync_api import Page, sync_playwright

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the kit the tests use: one source
from tests.kit.chromium import CHROMIUM, CHROMIUM_ARGS, free_port  # noqa: E402
from tests.kit.dsh_npm import (  # noqa: E402
    ENABLE_HMR,
    add_package,
    copy_sessions_written_last_by,
    install_dsh,
)

LEAD = "session-bbea4661-0acc-4317-8d18-889da97edfab"
PREFIX = "/plugins/dsh-task-gantt"
WINDOW = {"width": 1280, "height": 800}
#: The foot of the left sidebar (CSS pixels): the package's link above DSH's Settings.
LINK_CORNER = {"x": 0, "y": 680, "width": 280, "height": 120}
#: The corner is taken at this device scale, so its text is as sharp as on a HiDPI screen.
CORNER_SCALE = 2
#: The package's link in DSH's sidebar footer (client.js).
TEAMS_LINK = 'a[data-dsh-team-timeline="teams-link"]'
NAMES = (
    "dsh-real-window.png",
    "dsh-real-teams-link.png",
    "dsh-real-start.png",
    "dsh-real-panel.png",
)


def _open_dsh_window(page: Page, base: str) -> None:
    """DSH's window, its first dialogs answered, once the package's link is drawn."""
    page.goto(f"{base}/")
    page.get_by_text("New Session").first.wait_for(timeout=20_000)
    # A fresh DSH_HOME greets with a testing notice, then asks for an API key.
    for button in ("Continue", "Configure later"):
        page.wait_for_timeout(1000)
        found = page.get_by_role("button", name=button, exact=True)
        if found.count():
            found.first.click()
    page.locator(TEAMS_LINK).wait_for(timeout=20_000)
    page.wait_for_timeout(1500)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    out = parser.parse_args().out
    dsh = install_dsh()
    with tempfile.TemporaryDirectory() as tmp:
        home, sessions = Path(tmp) / "home", Path(tmp) / "sessions"
        home.mkdir()
        copy_sessions_written_last_by(ROOT / "fixtures" / "sessions", LEAD, sessions)
        settings = {"python": sys.executable, "sessionsRoot": str(sessions)}
        add_package(dsh, home, ROOT / "plugin" / "dsh", settings)
        overlay = home / "enable-hmr.yml"
        overlay.write_text(ENABLE_HMR)
        port = free_port()
        command = [str(dsh.node), str(dsh.cli), "--profile", "web", "--patch", str(overlay)]
        command += ["--port", str(port), "--no-open"]
        log = home / "dsh.log"
        with log.open("w") as sink:
            proc = subprocess.Popen(
                command,
                env=dsh.env(DSH_HOME=str(home)),
                stdout=sink,
                stderr=subprocess.STDOUT,
            )
            try:
                while "dsh web:" not in log.read_text():
                    if proc.poll() is not None:
                        print(log.read_text(), file=sys.stderr)
                        return 1
                    time.sleep(0.1)
                base = f"http://127.0.0.1:{port}"
                with sync_playwright() as pw:
                    browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
                    corner = browser.new_page(viewport=WINDOW, device_scale_factor=CORNER_SCALE)
                    _open_dsh_window(corner, base)
                    corner.screenshot(path=str(out / "dsh-real-teams-link.png"), clip=LINK_CORNER)
                    corner.close()
                    page = browser.new_page(viewport=WINDOW)
                    _open_dsh_window(page, base)
                    page.screenshot(path=str(out / "dsh-real-window.png"))
                    page.goto(f"{base}{PREFIX}/")
                    page.locator(f'a[href*="{LEAD}"]').first.wait_for()
                    page.screenshot(path=str(out / "dsh-real-start.png"))
                    page.goto(f"{base}{PREFIX}/panel?session={LEAD}")
                    page.locator(".lane").first.wait_for()
                    page.wait_for_timeout(500)
                    page.screenshot(path=str(out / "dsh-real-panel.png"))
                    browser.close()
            finally:
                proc.send_signal(signal.SIGINT)
                proc.wait(timeout=20)
    print(f"wrote {', '.join(NAMES)} to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
