"""``dsh-task-gantt serve``: the embedded host under uvicorn."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import FrameType

import uvicorn
from uvicorn.lifespan.on import LifespanOn

from .allocator import give_back_now_and_then, map_large_blocks
from .collector import pace_for_serving
from .embedded import (
    PROXY_SECRET_ENV,
    PROXY_SECRET_MIN_CHARS,
    TOKEN_ENV,
    EmbeddedHost,
    default_sessions_root,
    is_loopback_host,
)
from .lane_cache import default_cache_dir

#: The signals that end the server; each one still runs the demo's cleanup.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
#: How often a server behind a proxy checks that the proxy (its parent process) still runs.
PARENT_CHECK_SECONDS = 1.0


class Stopped(Exception):
    """A stop signal arrived while setting up: unwind (and clean up) instead of dying on
    the spot. Never raised while uvicorn runs (:class:`_Server` records the signal)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _raise_stopped(signum: int, frame: FrameType | None) -> None:
    raise Stopped(signum)


def run_server(
    *,
    sessions_root: Path | None,
    host: str,
    port: int,
    demo: bool,
    token: str | None,
    behind_proxy: bool = False,
    warm_up: bool = True,
    cache_dir: Path | None = None,
    use_cache: bool = True,
) -> int:
    proxy_secret: str | None = None
    if behind_proxy:
        proxy_secret = _proxy_secret(host, token)
        if proxy_secret is None:
            return 2
    else:
        token = token or os.environ.get(TOKEN_ENV) or None
    if not is_loopback_host(host) and not token:
        print(
            f"dsh-task-gantt: refusing to serve on {host} without an access token: the logs "
            f"show everything your agents did. Pass --token SECRET (or set {TOKEN_ENV}), "
            "or bind 127.0.0.1.",
            file=sys.stderr,
        )
        return 2
    # Until uvicorn runs, a stop signal raises Stopped: the set-up (the demo's copy) unwinds.
    # With the default SIGTERM handler the process would die before the copy is removed.
    in_main = threading.current_thread() is threading.main_thread()
    previous = {sig: signal.signal(sig, _raise_stopped) for sig in STOP_SIGNALS if in_main}
    try:
        with _sessions(sessions_root, demo) as (root, title):
            app = EmbeddedHost(
                root,
                bind_host=host,
                port=port,
                token=token,
                proxy_secret=proxy_secret,
                title=title,
                warm=warm_up,
                cache_dir=(cache_dir or default_cache_dir()) if use_cache else None,
            )
            url = f"http://{host if ':' not in host else f'[{host}]'}:{port}/"
            print(f"dsh-task-gantt: serving {root}", file=sys.stderr)
            if proxy_secret is not None:
                print(f"dsh-task-gantt: behind a proxy at {url}", file=sys.stderr)
            else:
                print(
                    f"dsh-task-gantt: open {url}{'?token=' + token if token else ''}",
                    file=sys.stderr,
                )
            pace_for_serving()
            map_large_blocks()
            give_back = give_back_now_and_then()
            config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
            server = _Server(config)
            if proxy_secret is not None:
                _stop_with_parent(server)
            # From here on a stop signal only asks the server to stop (and is remembered for
            # the exit code): uvicorn, once it has shut down, restores this handler and raises
            # the signals it caught again, inside its event loop. An exception raised there
            # would leave the lifespan's task waiting, and its cancellation would be logged as
            # an ERROR with both tracebacks. A signal during the clean-up below is remembered
            # too: the clean-up finishes.
            for sig in previous:
                signal.signal(sig, server.stop)
            try:
                server.run()
            finally:
                if give_back is not None:
                    give_back.set()
            if server.stopped_by is not None:
                return 128 + server.stopped_by
            return 0 if server.started else 1
    except Stopped as stop:
        return 128 + stop.signum
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


class _Server(uvicorn.Server):
    """uvicorn's server, stopped by a signal without a traceback.

    It remembers the first stop signal (:attr:`stopped_by`), whether uvicorn's own handler
    caught it or :meth:`stop` did (installed around uvicorn's). A second Ctrl-C while the
    shutdown waits for open connections is uvicorn's "force quit": it stops that wait but
    here no longer skips the lifespan's shutdown (the app's: the warm-up ended, the lane
    cache written), which would otherwise be left waiting, then cancelled and logged as a
    failed shutdown.
    """

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.stopped_by: int | None = None

    def stop(self, signum: int, frame: FrameType | None = None) -> None:
        """A signal handler: stop the server (or keep it from starting), nothing raised."""
        if self.stopped_by is None:
            self.stopped_by = signum
        self.should_exit = True

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        if self.stopped_by is None:
            self.stopped_by = sig
        super().handle_exit(sig, frame)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        await super().shutdown(sockets=sockets)
        lifespan = self.lifespan
        if isinstance(lifespan, LifespanOn) and not lifespan.shutdown_event.is_set():
            await lifespan.shutdown()  # skipped by a forced quit


def _stop_with_parent(server: uvicorn.Server, interval: float = PARENT_CHECK_SECONDS) -> None:
    """Behind a proxy the server exists for its parent: once that process is gone (this
    one was re-parented), shut down rather than hold a port nobody can use."""
    parent = os.getppid()
    if parent <= 1:
        return  # no parent to watch

    def watch() -> None:
        while os.getppid() == parent and not server.should_exit:
            time.sleep(interval)
        server.should_exit = True

    threading.Thread(target=watch, name="dsh-task-gantt parent watch", daemon=True).start()


def _proxy_secret(host: str, token: str | None) -> str | None:
    """The proxy's secret from the environment, or None (and why, on stderr)."""
    # Taken out of the environment: nothing this process starts should inherit it.
    secret = os.environ.pop(PROXY_SECRET_ENV, "")
    if token or os.environ.get(TOKEN_ENV):
        problem = "--behind-proxy and an access token are two different guards; pass one"
    elif not is_loopback_host(host):
        problem = "--behind-proxy binds a loopback address only: the proxy runs on this machine"
    elif len(secret) < PROXY_SECRET_MIN_CHARS:
        problem = (
            f"--behind-proxy needs the proxy's secret in {PROXY_SECRET_ENV} "
            f"(at least {PROXY_SECRET_MIN_CHARS} characters)"
        )
    else:
        return secret
    print(f"dsh-task-gantt: {problem}", file=sys.stderr)
    return None


@contextlib.contextmanager
def _sessions(sessions_root: Path | None, demo: bool) -> Iterator[tuple[Path, str]]:
    if demo and sessions_root is not None:
        print(
            "dsh-task-gantt: --demo serves the bundled teams; --sessions-root is ignored",
            file=sys.stderr,
        )
    if not demo:
        root = sessions_root or default_sessions_root()
        yield root, "dsh-task-gantt"
        return
    from .demo import DemoTeams

    with DemoTeams.start() as teams:
        print(
            f"dsh-task-gantt: demo teams copied to {teams.root.parent} (removed on exit)",
            file=sys.stderr,
        )
        yield teams.root, "dsh-task-gantt demo"
