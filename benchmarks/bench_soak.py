"""Hours, not minutes: the server's memory and latency while a team runs all day.

A real server (``dsh-task-gantt serve``: the embedded host, uvicorn on loopback, in a
child process), a writer in another child process (``LiveTeam``: each tick a lead step
and a message, a task move or a teammate's turn, every 2 s; ``--compression`` times
faster with ``--compressed`` until ``--history-hours`` of appends are in, each
timestamped as at the real rate, so the server reads a working day written in minutes;
``--dense`` timestamps them by the wall clock instead), and in this process asyncio
httpx clients doing what the panel and an API client really do, each every 2 s:

- panel pollers (``--pollers``): open ``/panel`` once, then poll ``/panel/board`` with
  what ``panel.js`` sends (the view form ``from, to, follow, w, list, lp, turns, tp, at`` and
  the ``v``, ``drawn`` and ``b`` the last answer carried, with ``HX-Request``), taking
  the new ``v``/``drawn``/``b`` from each 200. They cycle through four kinds: 400 px
  following now, 1280 px following now, 400 px with a replay cursor (``at=`` a moment in
  the middle of the history), 1280 px with the list open;
- API clients (``--api-clients``): ``/api/timeline`` with ``If-None-Match``; half of
  them also send ``since=<etag>`` (the delta form).

It prints, every ``--report-every`` seconds, the server's RSS, the appends so far and
p50/p99 per route (a board poll that answered a change, ``board 200``, is the delta
poll after an append; ``board 204`` is an unchanged one), and errors; at the end the
growth after ``--warm-up`` (a least-squares slope over the samples after it, in MB per
hour), and the RSS next to the raw bytes of the logs the server read (every session log
decompressed, counted at the end).

``--teams 40`` instead measures "many teams over a day": it generates that many teams
under one root and opens each one's panel after the other (as a user clicking through
the start page does), printing RSS after each: bounded by the caches' limits, not by the
number of teams opened.

The machine this runs on in the project is shared (2 cores, other jobs): latency figures
are noisy, memory figures are the evidence. Nothing here asserts a figure.

Run: ``python benchmarks/bench_soak.py [--team real|big|small] [--minutes 5]
[--compressed] [--pollers 20] [--api-clients 4] [--json out.json]`` or
``python benchmarks/bench_soak.py --teams 40 [--root DIR]`` (``--root``: generate
the teams there once and reuse them on later runs).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import math
import multiprocessing as mp
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import zstandard

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_timeline import Server, cpu_s  # the same child-process host
from process_memory import rss_kib
from teams import TEAMS, generate_recent_team

from dsh_task_gantt.clock import now_ms
from dsh_task_gantt.fixturegen import LiveTeam, TeamSpec

PREFIX = "/plugins/dsh-task-gantt"
POLL_EVERY_S = 2.0
#: The writer's period at the real rate; ``--compressed`` divides it by this.
APPEND_EVERY_S = 2.0
APPEND_EVERY_MS = round(APPEND_EVERY_S * 1000)
COMPRESSION = 10
#: The panel's track is its width less the names column and margins (about).
NAMES_PX = 120
_INPUT = re.compile(
    r'<input type="hidden" id="board-(version|drawn|token)" name="\w+" value="([^"]*)"'
)
_ENTITIES = {"&#34;": '"', "&quot;": '"', "&amp;": "&", "&#39;": "'", "&lt;": "<", "&gt;": ">"}


def unescape(text: str) -> str:
    for entity, char in _ENTITIES.items():
        text = text.replace(entity, char)
    return text


# ---------------------------------------------------------------------------
# the writer (its own process: its compression must not share this one's GIL)


def tick_kind(activities: tuple[str, ...]) -> str:
    """What a ``LiveTeam`` tick did, in a word: ``task`` (a task claimed or completed,
    or a phase filed), ``message``, ``turn`` (a teammate's), else ``step`` (the lead's
    step alone); ``+prompt`` when the human asked too."""
    words = " ".join(activities)
    kind = "step"
    if any(w in words for w in ("claim ", "complete ", "phase")):
        kind = "task"
    elif "message " in words:
        kind = "message"
    elif "turn " in words:
        kind = "turn"
    return kind + ("+prompt" if "human-prompt" in activities else "")


def _write(
    root: str,
    spec_path: str,
    every_s: float,
    fast_ticks: int,
    stop: Any,
    ticks: Any,
    prewrite_ms: int = 0,
    ready: Any = None,
    dense: bool = False,
    did: Any = None,
) -> None:
    """``prewrite_ms`` of history first (see :func:`prewrite`), then a tick every
    ``every_s`` for ``fast_ticks`` ticks, then at the real rate.

    The fast ticks are timestamped as a day at the real rate would have been (each
    ``APPEND_EVERY_S`` after the one before, from where the team's history ends, which
    :func:`run_soak` places so that they reach now as the fast ticks end): the log the
    server reads is a working day, written in minutes. ``dense``: timestamped by the wall
    clock instead (``--compressed`` before this option: a day's appends inside the
    run's own minutes, 20 a second, which no team writes: a chunk of the board then
    holds thousands of turns). ``did``: a shared byte array, set to what each tick did
    (:func:`tick_kind`) before the tick is counted."""
    spec = TeamSpec.load(Path(spec_path), root=root)
    live = LiveTeam(Path(root), spec)
    at_ms = spec.last_event_time
    if prewrite_ms:
        at_ms = prewrite(live, at_ms, prewrite_ms)
    if ready is not None:
        ready.set()
    next_at = time.monotonic()
    while not stop.is_set():
        fast = ticks.value < fast_ticks
        at_ms = at_ms + APPEND_EVERY_MS if fast and not dense else now_ms()
        report = live.tick(at_ms)
        with ticks.get_lock():
            if did is not None:
                did.value = tick_kind(report.activities).encode()[:31]
            ticks.value += 1
            done = ticks.value
        next_at += every_s if done < fast_ticks else APPEND_EVERY_S
        if done == fast_ticks:
            next_at = time.monotonic() + APPEND_EVERY_S
            if not dense:  # the writer may have fallen behind the wall clock
                print(
                    f"the compressed history's last tick is {(now_ms() - at_ms) / 1000:.0f} s "
                    "before now; the real rate goes on from now",
                    flush=True,
                )
        stop.wait(max(next_at - time.monotonic(), 0.0))


def prewrite(live: LiveTeam, after_ms: int, span_ms: int) -> int:
    """The appends the writer would have made over the ``span_ms`` after ``after_ms``
    (where the team's history ends) at the real rate, each tick timestamped as it would
    have been, written as fast as the writer can, before the server starts: a day of
    history in a minute. Returns the last tick's time."""
    t0 = time.monotonic()
    step = APPEND_EVERY_MS
    at = after_ms
    ticks = 0
    for at in range(after_ms + step, after_ms + span_ms + 1, step):
        live.tick(at)
        ticks += 1
    print(
        f"prewritten: {ticks} appends ({span_ms / 3_600_000:g} h at the real rate) in "
        f"{time.monotonic() - t0:.0f} s",
        flush=True,
    )
    return at


# ---------------------------------------------------------------------------
# the clients


@dataclass
class Stats:
    """Latencies (ms) per route and window, and the errors."""

    window_s: float
    started: float = field(default_factory=time.monotonic)
    samples: dict[tuple[int, str], list[float]] = field(default_factory=lambda: defaultdict(list))
    errors: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    requests: int = 0

    def add(self, route: str, ms: float) -> None:
        window = int((time.monotonic() - self.started) // self.window_s)
        self.samples[(window, route)].append(ms)
        self.requests += 1

    def error(self, what: str) -> None:
        self.errors[what] += 1


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


@dataclass(frozen=True)
class PollerKind:
    name: str
    width: int
    follow: bool
    replay: bool
    list_open: bool


KINDS = (
    PollerKind("400px", 400, True, False, False),
    PollerKind("1280px", 1280, True, False, False),
    PollerKind("400px replay", 400, False, True, False),
    PollerKind("1280px list", 1280, True, False, True),
)


def board_params(
    session: str, kind: PollerKind, at_ms: int, held: dict[str, str]
) -> dict[str, str]:
    """The board poll a panel of ``kind`` sends: its view form, and the version, drawn
    extent and token it holds from its last answer (``held``)."""
    return {
        "session": session,
        "from": "",
        "to": "",
        "follow": "1" if kind.follow else "",
        "w": str(kind.width - NAMES_PX),
        "list": "1" if kind.list_open else "",
        "lp": "",
        "turns": "",
        "tp": "",
        **({"at": str(at_ms)} if kind.replay else {}),
        "v": held["version"],
        "drawn": held["drawn"],
        "b": held["token"],
    }


async def panel_poller(
    base: str,
    session: str,
    kind: PollerKind,
    at_ms: int,
    stats: Stats,
    stop_at: float,
    delay: float,
) -> None:
    await asyncio.sleep(delay)
    held = {"version": "", "drawn": "", "token": ""}
    page_params = {"session": session, **({"list": "1"} if kind.list_open else {})}
    if kind.replay:
        page_params["at"] = str(at_ms)
    if kind.follow:
        page_params["follow"] = "1"
    async with httpx.AsyncClient(base_url=base, timeout=60) as client:
        try:
            t0 = time.perf_counter()
            r = await client.get(PREFIX + "/panel", params=page_params)
            stats.add("panel page", (time.perf_counter() - t0) * 1000)
            held.update({k: unescape(v) for k, v in _INPUT.findall(r.text)})
        except httpx.HTTPError as exc:
            stats.error(f"panel page: {type(exc).__name__}")
        while time.monotonic() < stop_at:
            started = time.monotonic()
            params = board_params(session, kind, at_ms, held)
            try:
                t0 = time.perf_counter()
                r = await client.get(
                    PREFIX + "/panel/board", params=params, headers={"HX-Request": "true"}
                )
                ms = (time.perf_counter() - t0) * 1000
                if r.status_code in (200, 286):
                    held.update({k: unescape(v) for k, v in _INPUT.findall(r.text)})
                    stats.add(f"board {r.status_code}", ms)
                elif r.status_code == 204:
                    stats.add("board 204", ms)
                else:
                    stats.error(f"board {r.status_code}")
            except httpx.HTTPError as exc:
                stats.error(f"board: {type(exc).__name__}")
            await asyncio.sleep(max(POLL_EVERY_S - (time.monotonic() - started), 0.05))


async def api_client(
    base: str, session: str, delta: bool, stats: Stats, stop_at: float, delay: float
) -> None:
    await asyncio.sleep(delay)
    etag: str | None = None
    async with httpx.AsyncClient(base_url=base, timeout=60) as client:
        while time.monotonic() < stop_at:
            started = time.monotonic()
            params = {"session": session}
            if delta and etag:
                params["since"] = etag
            headers = {"If-None-Match": etag} if etag else {}
            route = "api since" if delta and etag else "api full"
            try:
                t0 = time.perf_counter()
                r = await client.get(PREFIX + "/api/timeline", params=params, headers=headers)
                ms = (time.perf_counter() - t0) * 1000
                if r.status_code == 200:
                    etag = r.headers.get("etag")
                    stats.add(route, ms)
                elif r.status_code == 304:
                    stats.add("api 304", ms)
                else:
                    stats.error(f"api {r.status_code}")
            except httpx.HTTPError as exc:
                stats.error(f"api: {type(exc).__name__}")
            await asyncio.sleep(max(POLL_EVERY_S - (time.monotonic() - started), 0.05))


def _stop_if_dead(proc: subprocess.Popen[bytes], started: float, appends: int) -> None:
    """Ends the run, saying how, when the server process is gone."""
    if (code := proc.poll()) is not None:
        # A dead server answers nothing: the run's figures end here, said so.
        how = f"signal {signal.Signals(-code).name}" if code < 0 else f"exit code {code}"
        raise SystemExit(
            f"the server stopped ({how}) after {time.monotonic() - started:.0f} s and "
            f"{appends} appends (its stderr: set DSH_GANTT_BENCH_SERVER_LOG)"
        )


async def probe(
    base: str, session: str, ticks: Any, pid: int, count: int, did: Any = None
) -> dict[str, dict[str, Any]]:
    """With the pollers stopped and the writer at the real rate: ``count`` times, just
    after an append, one panel delta poll (400 px, following), then ``since`` and full
    ``/api/timeline`` answers, each timed on the wall and in the server's CPU; ``did``:
    the writer's word for what each tick did (see :func:`_write`), kept per probe."""
    kinds = ("board delta", "api since", "api full")
    dids: list[str] = []
    walls: dict[str, list[float]] = {k: [] for k in kinds}
    cpus: dict[str, float] = dict.fromkeys(kinds, 0.0)
    cpu_each: dict[str, list[float]] = {k: [] for k in kinds}
    sizes: dict[str, list[int]] = {k: [] for k in kinds}
    held = {"version": "", "drawn": "", "token": ""}
    etag = ""
    async with httpx.AsyncClient(base_url=base, timeout=120) as client:
        page = await client.get(PREFIX + "/panel", params={"session": session, "follow": "1"})
        held.update({k: unescape(v) for k, v in _INPUT.findall(page.text)})
        etag = (await client.get(PREFIX + "/api/timeline", params={"session": session})).headers[
            "etag"
        ]
        for _ in range(count):
            seen = ticks.value
            while ticks.value == seen:
                await asyncio.sleep(0.05)
            dids.append(did.value.decode() if did is not None else "")
            board_params = {
                "session": session, "from": "", "to": "", "follow": "1",
                "w": str(400 - NAMES_PX), "list": "", "lp": "", "turns": "", "tp": "",
                "v": held["version"], "drawn": held["drawn"], "b": held["token"],
            }  # fmt: skip
            requests = (
                ("board delta", "/panel/board", board_params, {"HX-Request": "true"}),
                ("api since", "/api/timeline", {"session": session, "since": etag}, {}),
                ("api full", "/api/timeline", {"session": session}, {}),
            )
            for kind, path, params, headers in requests:
                cpu0, t0 = cpu_s(pid), time.perf_counter()
                r = await client.get(PREFIX + path, params=params, headers=headers)
                walls[kind].append((time.perf_counter() - t0) * 1000)
                spent = cpu_s(pid) - cpu0
                cpus[kind] += spent
                cpu_each[kind].append(spent)
                sizes[kind].append(len(r.content))
                if kind == "board delta" and r.status_code == 200:
                    held.update({k: unescape(v) for k, v in _INPUT.findall(r.text)})
                if kind == "api full":
                    etag = r.headers.get("etag", etag)
    return {
        k: {
            "n": len(walls[k]),
            "p50_ms": round(pct(walls[k], 0.5), 1),
            "p99_ms": round(pct(walls[k], 0.99), 1),
            "cpu_ms_mean": round(cpus[k] * 1000 / max(len(walls[k]), 1), 1),
            "bytes_median": statistics.median(sizes[k]) if sizes[k] else 0,
            # Each probe's wall time in order: a tail is told apart from a trend.
            "walls_ms": [round(w, 1) for w in walls[k]],
            "cpus_ms": [round(c * 1000, 1) for c in cpu_each[k]],
            # What the append before each probe did (a message, a task moved, ...).
            "dids": dids,
            "by_did": _by_did(walls[k], dids),
        }
        for k in kinds
    }


def _by_did(walls: list[float], dids: list[str]) -> dict[str, dict[str, float]]:
    """The probes' wall times by what the append before each did: how many, mean, max."""
    grouped: dict[str, list[float]] = defaultdict(list)
    for wall, did in zip(walls, dids, strict=False):
        grouped[did or "?"].append(wall)
    return {
        did: {"n": len(v), "mean_ms": round(sum(v) / len(v), 1), "max_ms": round(max(v), 1)}
        for did, v in sorted(grouped.items())
    }


def raw_log_bytes(root: Path) -> int:
    """Every session log under ``root``, decompressed."""
    total = 0
    for path in root.rglob("*.zstd"):
        reader = zstandard.ZstdDecompressor().stream_reader(
            path.open("rb"), read_across_frames=True
        )
        while chunk := reader.read(1 << 20):
            total += len(chunk)
    return total


def _slope_text(slope: float | None) -> str:
    if slope is None:
        return "n/a (fewer than two RSS samples after the warm-up: run longer or shorten --warm-up)"
    return f"{slope} MB/h"


def slope_mb_per_h(points: list[tuple[float, float]]) -> float:
    """Least-squares slope of (seconds, MB) points, in MB per hour."""
    if len(points) < 2:
        return float("nan")
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    den = sum((x - mx) ** 2 for x in xs)
    if den == 0:
        return float("nan")
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / den * 3600


# ---------------------------------------------------------------------------
# the soak


async def soak(
    args: argparse.Namespace, server: Server, spec: TeamSpec, ticks: Any, did: Any = None
) -> dict[str, Any]:
    seconds = args.minutes * 60
    stats = Stats(window_s=args.report_every)
    stop_at = time.monotonic() + seconds
    at_ms = (spec.start_ms + spec.last_event_time) // 2
    session = spec.lead_id
    tasks = [
        asyncio.create_task(
            panel_poller(
                server.base,
                session,
                KINDS[i % len(KINDS)],
                at_ms,
                stats,
                stop_at,
                POLL_EVERY_S * i / max(args.pollers, 1),
            )
        )
        for i in range(args.pollers)
    ]
    tasks += [
        asyncio.create_task(
            api_client(
                server.base,
                session,
                i % 2 == 1,
                stats,
                stop_at,
                POLL_EVERY_S * (i + 0.5) / max(args.api_clients, 1),
            )
        )
        for i in range(args.api_clients)
    ]
    pid = server.proc.pid
    rows: list[dict[str, Any]] = []
    window = 0
    cpu0 = cpu_s(pid)
    while time.monotonic() < stop_at:
        report_at = min(time.monotonic() + args.report_every, stop_at)
        # Checked each second, not only at a report: a dead server answers nothing, and
        # the pollers would count refused connections until the next report.
        while (left := report_at - time.monotonic()) > 0:
            await asyncio.sleep(min(left, 1.0))
            _stop_if_dead(server.proc, stats.started, ticks.value)
        elapsed = time.monotonic() - stats.started
        routes = {
            route: {"n": len(v), "p50": round(pct(v, 0.5), 1), "p99": round(pct(v, 0.99), 1)}
            for (w, route), v in sorted(stats.samples.items())
            if w == window
        }
        row = {
            "t_s": round(elapsed),
            "appends": ticks.value,
            "rss_mb": round(rss_kib(pid) / 1024, 1),
            "cpu_s": round(cpu_s(pid) - cpu0, 1),
            "errors": sum(stats.errors.values()),
            "routes": routes,
        }
        rows.append(row)
        window += 1
        shown = "  ".join(
            f"{r} {v['p50']:.0f}/{v['p99']:.0f} ms (n={v['n']})" for r, v in routes.items()
        )
        print(
            f"{row['t_s']:6d} s  appends {row['appends']:6d}  RSS {row['rss_mb']:6.1f} MB  "
            f"cpu {row['cpu_s']:7.1f} s  errors {row['errors']}  | {shown}",
            flush=True,
        )
    await asyncio.gather(*tasks)
    if args.profile_out and args.profile_from == "probes":
        os.kill(pid, signal.SIGUSR2)  # the server's profile begins (server_accounts/)
    probed = await probe(server.base, session, ticks, pid, args.probes, did) if args.probes else {}
    for kind, figures in probed.items():
        by_did = ", ".join(
            f"{d} {f['n']}x mean {f['mean_ms']} max {f['max_ms']}"
            for d, f in figures["by_did"].items()
        )
        print(
            f"probe after an append, alone: {kind}: p50 {figures['p50_ms']} ms, p99 "
            f"{figures['p99_ms']} ms, server CPU {figures['cpu_ms_mean']} ms each, "
            f"{figures['bytes_median'] / 1024:.1f} KB (n={figures['n']}); by what the append "
            f"did: {by_did}",
            flush=True,
        )
    return {
        "rows": rows,
        "errors": dict(stats.errors),
        "requests": stats.requests,
        "probe": probed,
    }


def run_soak(args: argparse.Namespace) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="dsh-gantt-soak-"))
    try:
        root = work / "sessions"
        root.mkdir()
        prewritten = round(args.prewritten_hours * 3_600_000)
        every = APPEND_EVERY_S / (args.compression if args.compressed else 1)
        # Compressed: the appends of ``--history-hours`` at the real rate, as fast as
        # that, then the real rate (the latency after a day is measured there). Their
        # times are a day's (see ``_write``), so the team's own history ends that day
        # less the minutes the fast ticks take before now.
        fast = round(args.history_hours * 3600 / APPEND_EVERY_S) if args.compressed else 0
        ahead = 0 if args.dense else round(fast * (APPEND_EVERY_S - every) * 1000)
        spec = generate_recent_team(root, TEAMS[args.team], ends_ms=now_ms() - prewritten - ahead)
        spec.dump(work / "spec.json")
        ctx = mp.get_context("spawn")
        stop, ticks, ready = ctx.Event(), ctx.Value("i", 0), ctx.Event()
        did = ctx.Array("c", 32)
        writer = ctx.Process(
            target=_write,
            args=(str(root), str(work / "spec.json"), every, fast, stop, ticks, prewritten),
            kwargs={"ready": ready, "dense": args.dense, "did": did},
        )
        writer.start()
        while not ready.wait(1.0):  # the history written before the server starts
            if not writer.is_alive():
                raise SystemExit("the writer stopped before its history was written")
        raw_start = raw_log_bytes(root)
        print(
            f"team {args.team}: {len(spec.members)} lanes, {len(spec.messages)} messages, "
            f"{len(spec.tasks)} tasks, {raw_start / 1e6:.1f} MB of raw logs; an append every "
            f"{every:g} s; {args.pollers} panel pollers, {args.api_clients} API clients, "
            f"{args.minutes:g} min",
            flush=True,
        )
        accounts = work / "accounts.jsonl"
        env = dict(os.environ)  # the server's: this process's, and what it is told below
        if args.accounts or args.profile_out:
            env["PYTHONPATH"] = os.pathsep.join(
                filter(None, [str(ACCOUNTS_DIR), os.environ.get("PYTHONPATH")])
            )
        if args.profile_out:  # the server profiles its event loop (server_accounts/)
            env["DSH_GANTT_PROFILE"] = str(args.profile_out.resolve())
            env["DSH_GANTT_PROFILE_FROM"] = str(args.profile_from)
        if args.accounts:  # the server writes its memory accounts (server_accounts/)
            env["DSH_GANTT_ACCOUNTS"] = str(accounts)
            env["DSH_GANTT_ACCOUNTS_EVERY"] = str(args.report_every)
        server = Server(root, env=env)
        try:
            result = asyncio.run(soak(args, server, spec, ticks, did))
        finally:
            stop.set()
            writer.join(timeout=30)
            final_rss = rss_kib(server.proc.pid) / 1024
            server.stop()
        raw_end = raw_log_bytes(root)
        account_lines = read_accounts(accounts) if args.accounts else []
    finally:
        shutil.rmtree(work, ignore_errors=True)
    rows = result["rows"]
    after = [(r["t_s"], r["rss_mb"]) for r in rows if r["t_s"] >= args.warm_up]
    warm = after[0][1] if after else float("nan")
    summary = {
        "team": args.team,
        "compressed": args.compressed,
        "dense": args.dense,
        "minutes": args.minutes,
        "append_every_s": every,
        "appends": rows[-1]["appends"] if rows else 0,
        "pollers": args.pollers,
        "api_clients": args.api_clients,
        "requests": result["requests"],
        "errors": result["errors"],
        "rss_after_warm_up_mb": warm,
        "rss_final_mb": round(final_rss, 1),
        "growth_after_warm_up_mb": round(final_rss - warm, 1),
        # None (JSON's null, not NaN): fewer than two samples after the warm-up.
        "slope_mb_per_h": None if math.isnan(slope := slope_mb_per_h(after)) else round(slope, 1),
        "raw_log_bytes_start": raw_start,
        "raw_log_bytes_end": raw_end,
        "rss_to_raw": round(final_rss * 1e6 / raw_end, 2) if raw_end else None,
        "probe": result["probe"],
        "rows": rows,
    }
    if args.accounts:
        summary["accounts"] = account_growth(account_lines, rows, args.warm_up)
        summary["account_lines"] = account_lines
    print(
        f"\nappends {summary['appends']} (one every {every:g} s = "
        f"{summary['appends'] * APPEND_EVERY_S / 3600:.2f} h of appends at the real rate); "
        f"requests {summary['requests']}; errors {summary['errors'] or 0}\n"
        f"RSS after warm-up ({args.warm_up:g} s) {warm} MB, at the end {final_rss:.1f} MB: "
        f"growth {summary['growth_after_warm_up_mb']} MB, slope "
        f"{_slope_text(summary['slope_mb_per_h'])}\nraw logs read {raw_start / 1e6:.1f} MB at "
        f"the start, {raw_end / 1e6:.1f} MB at the end; RSS / raw = {summary['rss_to_raw']}",
        flush=True,
    )
    if args.accounts:
        print(accounts_text(summary["accounts"]), flush=True)
    return summary


# ---------------------------------------------------------------------------
# the server's memory accounts (--accounts)

ACCOUNTS_DIR = Path(__file__).resolve().parent / "server_accounts"
#: The accounts compared, in the order printed (see server_accounts/sitecustomize.py).
ACCOUNTS = ("rss", "py_allocated", "py_free", "c_in_use", "c_free", "c_mapped", "tracked")


def read_accounts(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _appends_at(rows: list[dict[str, Any]], t_s: float) -> float:
    """The appends at ``t_s`` (linear between the soak's report rows)."""
    points = [(0.0, 0.0)] + [(float(r["t_s"]), float(r["appends"])) for r in rows]
    for (t0, a0), (t1, a1) in itertools.pairwise(points):
        if t0 <= t_s <= t1 and t1 > t0:
            return a0 + (a1 - a0) * (t_s - t0) / (t1 - t0)
    return points[-1][1]


def account_growth(
    lines: list[dict[str, Any]], rows: list[dict[str, Any]], warm_up: float
) -> dict[str, Any]:
    """Each account's growth per append between the first line after the warm-up and
    the last, and the tracked types that grew most."""
    after = [line for line in lines if line["t_s"] >= warm_up]
    if len(after) < 2:
        return {}
    first, last = after[0], after[-1]
    appends = _appends_at(rows, last["t_s"]) - _appends_at(rows, first["t_s"])
    if appends <= 0:
        return {}
    types = {
        name: (last["types"].get(name, 0) - first["types"].get(name, 0)) / appends
        for name in set(first["types"]) | set(last["types"])
    }
    first_shapes, last_shapes = first.get("shapes", {}), last.get("shapes", {})
    shapes = {
        name: (last_shapes.get(name, 0) - first_shapes.get(name, 0)) / appends
        for name in set(first_shapes) | set(last_shapes)
    }
    return {
        "from_s": first["t_s"],
        "to_s": last["t_s"],
        "appends": round(appends),
        "per_append": {k: round((last[k] - first[k]) / appends, 1) for k in ACCOUNTS},
        "types_per_append": dict(sorted(types.items(), key=lambda kv: -kv[1])[:15]),
        # Of the most common shapes in both lines (a shape that left the top 80 in one
        # of them counts as none there).
        "shapes_per_append": dict(sorted(shapes.items(), key=lambda kv: -kv[1])[:15]),
    }


def accounts_text(growth: dict[str, Any]) -> str:
    if not growth:
        return "server accounts: fewer than two lines after the warm-up"
    per = growth["per_append"]
    units = {k: (f"{v / 1024:.2f} KB" if k != "tracked" else f"{v:.1f}") for k, v in per.items()}
    types = ", ".join(f"{k} {v:.2f}" for k, v in growth["types_per_append"].items())
    shapes = ", ".join(f"{k} {v:.2f}" for k, v in growth.get("shapes_per_append", {}).items())
    return (
        f"server accounts per append ({growth['appends']} appends, {growth['from_s']:.0f}-"
        f"{growth['to_s']:.0f} s): "
        + ", ".join(f"{k} {units[k]}" for k in ACCOUNTS)
        + f"\n  tracked objects by type per append: {types}"
        + f"\n  tracked tuples and dicts by shape per append: {shapes}"
    )


# ---------------------------------------------------------------------------
# many teams


def generated_teams(root: Path, shape: str, count: int) -> list[str]:
    """``count`` teams of ``shape`` under ``root`` (their leads), generated once: a root
    that already holds them (``leads.json`` names them) is reused, as generating
    ``real`` teams takes minutes. Their histories then end when they were generated,
    which a memory figure does not mind."""
    index = root / "leads.json"
    known: dict[str, list[str]] = json.loads(index.read_text()) if index.exists() else {}
    leads = known.get(shape, [])
    sessions = root / shape
    sessions.mkdir(parents=True, exist_ok=True)
    for i in range(len(leads), count):
        leads.append(generate_recent_team(sessions, TEAMS[shape], seed=1000 + i).lead_id)
        index.write_text(json.dumps({**known, shape: leads}))
    return leads[:count]


def run_teams(args: argparse.Namespace) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="dsh-gantt-soak-teams-"))
    try:
        base = args.root or work
        leads = generated_teams(base, args.team, args.teams)
        root = base / args.team  # a reused root may hold more teams: the first are opened
        raw = raw_log_bytes(root)
        print(f"{args.teams} {args.team} teams, {raw / 1e6:.1f} MB of raw logs", flush=True)
        server = Server(root)
        pid = server.proc.pid
        rows = []
        try:
            with httpx.Client(base_url=server.base, timeout=120) as client:
                client.get(PREFIX + "/")  # the start page, as a user begins
                for i, lead in enumerate(leads, 1):
                    t0 = time.perf_counter()
                    r = client.get(PREFIX + "/panel", params={"session": lead})
                    ms = (time.perf_counter() - t0) * 1000
                    for _ in range(3):  # a few polls, as the open panel does
                        client.get(PREFIX + "/api/timeline", params={"session": lead})
                    row = {
                        "teams": i,
                        "status": r.status_code,
                        "ms": round(ms),
                        "rss_mb": round(rss_kib(pid) / 1024, 1),
                    }
                    rows.append(row)
                    print(
                        f"team {i:3d}: panel {r.status_code} in {ms:6.0f} ms, "
                        f"RSS {row['rss_mb']} MB",
                        flush=True,
                    )
        finally:
            server.stop()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return {"team": args.team, "teams": args.teams, "raw_log_bytes": raw, "rows": rows}


def _profile_from(text: str) -> str:
    if text != "probes":
        float(text)  # argparse says which argument was not a number
    return text


def _stop(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--team", choices=sorted(TEAMS), default="real")
    parser.add_argument("--minutes", type=float, default=5)
    parser.add_argument(
        "--compressed",
        action="store_true",
        help="append --compression times faster until --history-hours of appends are in, "
        "then at the real rate",
    )
    parser.add_argument("--compression", type=float, default=COMPRESSION)
    parser.add_argument(
        "--dense",
        action="store_true",
        help="with --compressed: timestamp the fast appends by the wall clock (a day's "
        "appends inside the run's minutes), not as a day at the real rate would have been",
    )
    parser.add_argument("--history-hours", type=float, default=24)
    parser.add_argument(
        "--prewritten-hours",
        type=float,
        default=0,
        help="before the server starts, write this many hours of appends at the real "
        "rate (timestamped in the past) as fast as the writer can",
    )
    parser.add_argument("--pollers", type=int, default=20)
    parser.add_argument("--api-clients", type=int, default=4)
    parser.add_argument("--report-every", type=float, default=60)
    parser.add_argument("--warm-up", type=float, default=300, help="seconds before growth counts")
    parser.add_argument("--teams", type=int, default=0, help="open this many teams one by one")
    parser.add_argument(
        "--probes", type=int, default=20, help="lone requests after appends, at the end"
    )
    parser.add_argument(
        "--root",
        type=Path,
        help="with --teams: generate the teams here once and reuse them on later runs",
    )
    parser.add_argument(
        "--accounts",
        action="store_true",
        help="the server writes its memory accounts each report (pymalloc, the C heap, "
        "tracked objects by type) and the growth of each per append is printed",
    )
    parser.add_argument(
        "--profile-out",
        type=Path,
        help="the server writes cProfile stats of its event loop here when it stops",
    )
    parser.add_argument(
        "--profile-from",
        type=_profile_from,
        default="0",
        help="seconds after the server starts when --profile-out's profile begins, or "
        "'probes': when the lone probes begin (the profile is then theirs alone, with "
        "the garbage collector's passes in PROFILE_OUT.gc.json; cProfile's own cost "
        "makes each probe ~1.5x slower, so take the probes' figures from a run without it)",
    )
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    # Stopped by a signal (a background job ignores SIGINT): still stop the server.
    signal.signal(signal.SIGTERM, _stop)
    summary = run_teams(args) if args.teams else run_soak(args)
    if args.json:
        args.json.write_text(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
