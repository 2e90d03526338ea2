"""Screenshots of the panel for the README: ``python scripts/screenshots.py``.

Serves the panel on 127.0.0.1 (a free port) from the hand-made demo team of
``tests/test_panel.py`` (a fake provider, so the picture does not depend on the
clock or on other parts of the stack) and drives Debian's Chromium through
Playwright. Writes PNGs into ``docs/screenshots/``.
"""

from __future__ import annotations

import argparse
import socket
import sys
import threading
import time
from pathlib import Path

import uvicorn
from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.test_panel import PREFIX, FakeProvider, demo_team, make_app  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]  # fmt: skip


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def serve(app: object) -> tuple[uvicorn.Server, int]:
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))  # type: ignore[arg-type]
    threading.Thread(target=server.run, daemon=True).start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline:
            raise RuntimeError("the panel server did not start")
        time.sleep(0.05)
    return server, port


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    parser.add_argument("--dark", action="store_true", help="also shoot the dark scheme")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    team = demo_team(live=True)
    server, port = serve(make_app(FakeProvider(team)))
    base = f"http://127.0.0.1:{port}{PREFIX}/panel?session=s-lead"
    verify_msg = next(m for m in team.messages.values() if m["from"]["name"] == "verify")
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            schemes = ["light", "dark"] if args.dark else ["light"]
            for scheme in schemes:
                suffix = "" if scheme == "light" else "-dark"
                page = browser.new_page(viewport={"width": 400, "height": 900}, color_scheme=scheme)
                page.goto(base)
                page.locator(f'.mark.sent[data-msg="{verify_msg["id"]}"]').click()
                page.locator("#detail .message-card").wait_for()
                page.screenshot(path=str(args.out / f"sidebar-live-detail{suffix}.png"))
                page.close()
                page = browser.new_page(
                    viewport={"width": 1280, "height": 800}, color_scheme=scheme
                )
                page.goto(base)
                page.locator(".task-name").first.click()
                page.locator("#detail .task-card").wait_for()
                page.screenshot(path=str(args.out / f"wide{suffix}.png"))
                page.close()
                page = browser.new_page(viewport={"width": 400, "height": 900}, color_scheme=scheme)
                page.goto(base + "&list=1")
                page.screenshot(path=str(args.out / f"sidebar-list{suffix}.png"))
                page.close()
            browser.close()
    finally:
        server.should_exit = True
    for png in sorted(args.out.glob("*.png")):
        print(png.relative_to(ROOT))


if __name__ == "__main__":
    main()
