"""The README's picture of the panel inside DSH: ``python scripts/dsh_tab_screenshot.py``.

Needs: the package installed (``pip install -e '.[test]'``), Node ≥ 18 on PATH and
Debian's Chromium at ``/usr/bin/chromium``. Writes ``docs/screenshots/dsh-tab.png``
and ``dsh-tab-dark.png`` (``--out`` to change the folder).

What is on it is real except DSH itself: the live demo team (a temporary copy that
grows while the picture is taken), served by ``dsh-task-gantt serve --behind-proxy``
behind the DSH package's host half (``plugin/dsh/index.js`` on a Node HTTP server
with DSH's routing rules), shown by the package's client half (``plugin/dsh/client.js``)
mounted with a fake DSH client context on a page shaped like DSH's window
(``plugin/dsh/testing/demo/``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

from dsh_task_gantt.demo import DemoTeams

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the browser facts the tests use: one source
from tests.kit.chromium import CHROMIUM, CHROMIUM_ARGS  # noqa: E402

DEMO_HOST = ROOT / "plugin" / "dsh" / "testing" / "demo-host.js"
WINDOW = {"width": 1280, "height": 760}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    args = parser.parse_args()
    node = shutil.which("node")
    if node is None:
        print("node is not on PATH", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        teams = DemoTeams.prepare(Path(tmp) / "sessions", interval=1.0)
        teams.run_in_background()
        host = subprocess.Popen(
            [node, str(DEMO_HOST), str(teams.root)],
            env={**os.environ, "DSH_TASK_GANTT_TEST_PYTHON": sys.executable},
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert host.stdout is not None
            url = json.loads(host.stdout.readline())["url"]
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                for theme, name in (("light", "dsh-tab.png"), ("dark", "dsh-tab-dark.png")):
                    page = browser.new_page(viewport=WINDOW)
                    page.goto(f"{url}/?session={teams.live_spec.lead_id}&theme={theme}")
                    page.wait_for_function(
                        "() => { const f = document.querySelector('#pane iframe');"
                        " return f && f.contentDocument"
                        " && f.contentDocument.querySelectorAll('.lane').length > 2 }"
                    )
                    page.wait_for_timeout(800)  # the panel's first re-measure
                    page.screenshot(path=str(args.out / name))
                    print(args.out / name)
                    page.close()
                browser.close()
        finally:
            host.send_signal(signal.SIGTERM)
            host.wait(timeout=15)
            teams.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
