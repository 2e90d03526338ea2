"""``dsh-task-gantt serve``: the embedded host under uvicorn."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import uvicorn

from .embedded import TOKEN_ENV, EmbeddedHost, default_sessions_root, is_loopback_host


def run_server(
    *,
    sessions_root: Path | None,
    host: str,
    port: int,
    demo: bool,
    token: str | None,
) -> int:
    token = token or os.environ.get(TOKEN_ENV) or None
    if not is_loopback_host(host) and not token:
        print(
            f"dsh-task-gantt: refusing to serve on {host} without an access token: the logs "
            f"show everything your agents did. Pass --token SECRET (or set {TOKEN_ENV}), "
            "or bind 127.0.0.1.",
            file=sys.stderr,
        )
        return 2
    with _sessions(sessions_root, demo) as (root, title):
        app = EmbeddedHost(root, bind_host=host, port=port, token=token, title=title)
        url = f"http://{host if ':' not in host else f'[{host}]'}:{port}/"
        print(f"dsh-task-gantt: serving {root}", file=sys.stderr)
        print(f"dsh-task-gantt: open {url}{'?token=' + token if token else ''}", file=sys.stderr)
        config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
        server = uvicorn.Server(config)
        server.run()
    return 0


@contextlib.contextmanager
def _sessions(sessions_root: Path | None, demo: bool) -> Iterator[tuple[Path, str]]:
    if not demo:
        root = sessions_root or default_sessions_root()
        yield root, "dsh-task-gantt"
        return
    from .demo import DemoTeams

    with DemoTeams.start() as teams:
        yield teams.root, "dsh-task-gantt demo"
