"""Debian's Chromium and a uvicorn server on loopback: the facts the browser tests, the
screenshot scripts and the panel benchmark share (no pytest here, so a script can
import it: ``sys.path`` holds the repository root, then ``tests.kit.chromium``).
"""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path
from typing import Any

import uvicorn

#: Where the plugin's routes are mounted.
PREFIX = "/plugins/dsh-task-gantt"
#: Debian's Chromium: never a downloaded browser.
CHROMIUM = Path("/usr/bin/chromium")
#: Headless in a container, quiet: no sandbox (root), no GPU, no background traffic.
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]  # fmt: skip
SIDEBAR = {"width": 400, "height": 900}
WIDE = {"width": 1280, "height": 800}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Server:
    """An ASGI app under uvicorn on a free loopback port, in a thread, while entered."""

    def __init__(self, app: Any) -> None:
        self.port = free_port()
        self._server = uvicorn.Server(
            uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning")
        )
        self._thread = threading.Thread(target=self._server.run, daemon=True)

    def __enter__(self) -> Server:
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *_: object) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=5)

    def url(self, query: str = "session=s-lead") -> str:
        return f"http://127.0.0.1:{self.port}{PREFIX}/panel?{query}"
