"""``dsh-task-gantt``: serve the panel, print a timeline, or decode a log."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence
from pathlib import Path

from . import __version__

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765


def _root_arg(value: str) -> Path:
    return Path(value).expanduser()


def build_parser() -> argparse.ArgumentParser:
    from .embedded import PROXY_HEADER, PROXY_SECRET_ENV, TOKEN_ENV, default_sessions_root
    from .lane_cache import CACHE_DIR_ENV

    parser = argparse.ArgumentParser(
        prog="dsh-task-gantt",
        description="A live Gantt chart of a DSH agent team: who works, on which task, "
        "who told whom what, and what you asked.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    serve = sub.add_parser(
        "serve",
        help="run the standalone viewer (start page + panels) over a sessions root",
        description="Serve the start page and team panels over a sessions root, with the host "
        "services implemented here (persisted logs only; no live agents).",
    )
    serve.add_argument(
        "--sessions-root",
        type=_root_arg,
        default=None,
        help=f"where the session logs are (default: $DSH_HOME/sessions or "
        f"~/.dsh/sessions; now {default_sessions_root()})",
    )
    serve.add_argument(
        "--host", default=DEFAULT_HOST, help="address to bind (default: %(default)s)"
    )
    serve.add_argument("--port", type=int, default=DEFAULT_PORT, help="port (default: %(default)s)")
    serve.add_argument(
        "--demo",
        action="store_true",
        help="serve the bundled example teams and keep one of them live (a temporary copy "
        "that grows every few seconds)",
    )
    serve.add_argument(
        "--token",
        default=None,
        help=f"access token, required when binding a non-loopback address (or set {TOKEN_ENV})",
    )
    serve.add_argument(
        "--behind-proxy",
        action="store_true",
        help=f"answer only requests carrying the {PROXY_HEADER} header with the secret in "
        f"${PROXY_SECRET_ENV} (how the DSH package's proxy runs it), instead of checking "
        "for a loopback Host",
    )
    serve.add_argument(
        "--no-warm-up",
        dest="warm_up",
        action="store_false",
        help="do not read the most recently written team at start-up (by default it is "
        "read then, so that the first panel opened on it loads warm)",
    )
    serve.add_argument(
        "--cache-dir",
        type=_root_arg,
        default=None,
        help=f"where to keep what reading each log produced, so that a restarted server "
        f"opens a team it read before warm (default: ${CACHE_DIR_ENV}, else "
        f"$XDG_CACHE_HOME/dsh-task-gantt, else ~/.cache/dsh-task-gantt)",
    )
    serve.add_argument(
        "--no-cache",
        dest="use_cache",
        action="store_false",
        help="neither read nor write the lane cache (nothing is written to disk). Its "
        "entries hold copies of the logs' message texts; deleting a session's log removes "
        "its entry at the next server start; to clear the cache, delete its folder",
    )

    timeline = sub.add_parser(
        "timeline",
        help="print a team's timeline JSON (the same as /api/timeline)",
        description="Print the timeline JSON of the team the session belongs to.",
    )
    timeline.add_argument("--sessions-root", type=_root_arg, required=True)
    timeline.add_argument("--session", required=True, help="a session id (lead or teammate)")

    events = sub.add_parser(
        "events",
        help="print a session's decoded log as JSON lines, header first",
        description="Decode a session log (all zstd frames; stops before a torn tail) and print "
        "it as JSON lines, header first. Skipped lines and a torn tail go to stderr.",
    )
    events.add_argument("--sessions-root", type=_root_arg, required=True)
    events.add_argument("--session", required=True, help="a session id")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "events":
        from .logs.dump import dump_events

        return dump_events(args.sessions_root, args.session, sys.stdout.buffer, sys.stderr)
    if args.command == "timeline":
        return asyncio.run(_print_timeline(args.sessions_root, args.session))
    from .serve import run_server

    return run_server(
        sessions_root=args.sessions_root,
        host=args.host,
        port=args.port,
        demo=args.demo,
        token=args.token,
        behind_proxy=args.behind_proxy,
        warm_up=args.warm_up,
        cache_dir=args.cache_dir,
        use_cache=args.use_cache,
    )


async def _print_timeline(root: Path, session_id: str) -> int:
    from .embedded import EmbeddedHost
    from .ids import valid_session_id

    if not valid_session_id(session_id):
        print(f"dsh-task-gantt: not a session id: {session_id!r}", file=sys.stderr)
        return 2
    if not root.is_dir():
        print(f"dsh-task-gantt: no sessions root at {root}", file=sys.stderr)
        return 2
    embedded = EmbeddedHost(root)
    result = await embedded.plugin.service.timeline(session_id)
    if result is None:
        print(f"dsh-task-gantt: no session {session_id} under {root}", file=sys.stderr)
        return 2
    sys.stdout.buffer.write(result.body + b"\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
