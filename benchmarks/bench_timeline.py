"""End-to-end speed and memory of the timeline, through the real embedded host.

Generates a team the size of the biggest real one (a lead of ~19,000 lines in ~2,000
frames plus eight teammates of ~4,000 lines), serves it with ``dsh-task-gantt serve``
(uvicorn, loopback) in a child process, and prints:

- the decode floor: python-zstandard alone decompressing every log
  (``decompressobj(read_across_frames=True)``), measured in the same run;
- cold: the first ``/api/timeline`` request of a fresh server;
- unchanged: a poll with ``If-None-Match`` (304) when no log changed;
- after an append of a few frames (a real-format activity tick), and the same with
  ``?since=<etag>`` (only the lanes and tasks that changed);
- the server's RSS growth over the cold open, against the decompressed bytes;
- optionally (``--load``) 20 concurrent pollers every 2 s for 60 s while the team is
  appended to: p50/p99 latency and errors.

``--team`` picks the team: ``large`` (default; the generator's large "full" team, 17
hours of history with few messages), ``real`` or ``big`` (the same lead with ~360
messages and ~30 tasks, or 5x the messages and 8x the tasks, its history the hour
before now; see ``teams.py``).

Run: ``python benchmarks/bench_timeline.py [--team large|real|big] [--runs 3] [--load]
[--load-seconds 60]``.
Figures only: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import httpx
import zstandard

from dsh_task_gantt.fixturegen import LiveTeam, TeamSpec, generate_team

sys.path.insert(0, str(Path(__file__).resolve().parent))
from process_memory import rss_kib
from teams import TEAMS, generate_recent_team

API = "/plugins/dsh-task-gantt/api/timeline"
BOARD = "/plugins/dsh-task-gantt/panel/board"


def _board_version(html: str) -> str | None:
    """The version a board says it shows (the panel sends it back on its next poll)."""
    found = re.search(r'id="board-version" name="v" value="([^"]*)"', html)
    return found.group(1).replace("&#34;", '"') if found else None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def cpu_s(pid: int) -> float:
    """CPU seconds a process has used (all its threads). On a shared machine this moves
    far less than wall time; the kernel counts it in ticks (10 ms), so it is summed over
    many requests."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def decode_floor(root: Path) -> tuple[float, int]:
    """Seconds python-zstandard alone needs for every log, and the decompressed bytes."""
    blobs = [p.read_bytes() for p in root.rglob("session.v4.jsonl.zstd")]
    start = time.perf_counter()
    size = 0
    for blob in blobs:
        out = zstandard.ZstdDecompressor().decompressobj(read_across_frames=True).decompress(blob)
        size += len(out)
    return time.perf_counter() - start, size


_DECODE_CHILD = """
import sys, time, zstandard
from pathlib import Path
blobs = [p.read_bytes() for p in Path(sys.argv[1]).rglob("session.v4.jsonl.zstd")]
sys.stdin.readline()  # start together
start = time.perf_counter()
for blob in blobs:
    zstandard.ZstdDecompressor().decompressobj(read_across_frames=True).decompress(blob)
print(time.perf_counter() - start)
"""


def side_by_side_speed(root: Path, rounds: int = 3) -> float:
    """How fast one floor decode runs while another runs beside it, in another process
    (1.0: the cores are independent; 0.5: the two share one). A ratio to the
    single-threaded floor says more once this is known."""
    speeds = []
    for _ in range(rounds):
        alone = statistics.median(decode_floor(root)[0] for _ in range(3))
        children = [
            subprocess.Popen(
                [sys.executable, "-c", _DECODE_CHILD, str(root)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
            )
            for _ in range(2)
        ]
        time.sleep(0.5)  # both have read their files
        for child in children:
            assert child.stdin is not None
            child.stdin.write("go\n")
            child.stdin.flush()
        together = [float(child.communicate()[0]) for child in children]
        speeds.append(alone / statistics.mean(together))
    return statistics.median(speeds)


def _can_skip_warm_up() -> bool:
    """Whether the code under test reads the latest team at start-up (and so has the
    switch that keeps it cold): an older checkout is cold anyway."""
    from dsh_task_gantt.serve import run_server

    return "warm_up" in inspect.signature(run_server).parameters


def _has_lane_cache() -> bool:
    """Whether the code under test keeps a lane cache across restarts (and so has the
    switches that choose its folder or turn it off)."""
    from dsh_task_gantt.serve import run_server

    return "use_cache" in inspect.signature(run_server).parameters


def _cache_flags(cache_dir: Path | None) -> tuple[str, ...]:
    if not _has_lane_cache():
        return ()
    return ("--no-cache",) if cache_dir is None else ("--cache-dir", str(cache_dir))


class Server:
    """``dsh-task-gantt serve`` in a child process; ``warm_up=False`` (the default here:
    the cold figures must be cold) keeps it from reading the latest team at start-up,
    and without a ``cache_dir`` it neither reads nor writes a lane cache (nor touches
    the user's own). ``stop()`` ends it as DSH does (SIGTERM: it writes its cache)."""

    def __init__(
        self,
        root: Path,
        *,
        warm_up: bool = False,
        cache_dir: Path | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        """``env``: the server's environment (default: this process's)."""
        self.port = free_port()
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "dsh_task_gantt.cli",
                "serve",
                "--sessions-root",
                str(root),
                "--port",
                str(self.port),
                *(() if warm_up or not _can_skip_warm_up() else ("--no-warm-up",)),
                *_cache_flags(cache_dir),
            ],
            stdout=subprocess.DEVNULL,
            stderr=_server_log(),
            env=None if env is None else dict(env),
        )
        self.base = f"http://127.0.0.1:{self.port}"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if httpx.get(self.base + "/plugins/dsh-task-gantt/api/timeline").status_code:
                    return
            except httpx.HTTPError:
                time.sleep(0.1)
        raise RuntimeError("the server did not come up")

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)


def _server_log() -> Any:
    """Where the server's own log goes: ``$DSH_GANTT_BENCH_SERVER_LOG`` (a file, appended
    to: its tracebacks are how a benchmark's 5xx is explained), else nowhere."""
    path = os.environ.get("DSH_GANTT_BENCH_SERVER_LOG")
    return open(path, "ab") if path else subprocess.DEVNULL


def timed_get(client: httpx.Client, url: str, **kw: object) -> tuple[float, httpx.Response]:
    start = time.perf_counter()
    response = client.get(url, **kw)  # type: ignore[arg-type]
    return time.perf_counter() - start, response


def ms(seconds: float) -> str:
    return f"{seconds * 1000:8.1f} ms"


async def load_run(
    base: str, lead: str, live: LiveTeam, seconds: float, pollers: int = 20, interval: float = 2.0
) -> None:
    latencies: list[float] = []
    statuses: Counter[int] = Counter()
    errors = 0
    stop_at = time.monotonic() + seconds

    async def poller(i: int) -> None:
        nonlocal errors
        etag: str | None = None
        async with httpx.AsyncClient(base_url=base, timeout=30) as client:
            await asyncio.sleep(interval * i / pollers)  # spread the pollers out
            while time.monotonic() < stop_at:
                headers = {"If-None-Match": etag} if etag else {}
                start = time.perf_counter()
                try:
                    r = await client.get(API, params={"session": lead}, headers=headers)
                    latencies.append(time.perf_counter() - start)
                    statuses[r.status_code] += 1
                    if r.status_code == 200:
                        etag = r.headers.get("etag")
                    elif r.status_code != 304:
                        errors += 1
                except httpx.HTTPError:
                    errors += 1
                await asyncio.sleep(interval)

    async def appender() -> None:
        now = live.spec().last_event_time
        while time.monotonic() < stop_at:
            now += 2000
            await asyncio.to_thread(live.tick, now)
            await asyncio.sleep(interval)

    await asyncio.gather(appender(), *(poller(i) for i in range(pollers)))
    latencies.sort()
    p50 = latencies[len(latencies) // 2]
    p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]
    print(
        f"load: {pollers} pollers every {interval:g} s for {seconds:g} s with appends: "
        f"{len(latencies)} requests, p50 {p50 * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms, "
        f"errors {errors}, statuses {dict(sorted(statuses.items()))}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="fresh servers for the cold figure")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--load", action="store_true", help="also run the 20-poller load test")
    parser.add_argument("--load-seconds", type=float, default=60)
    parser.add_argument("--team", choices=("large", "real", "big"), default="large")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="dsh-gantt-bench-"))
    try:
        root = work / "sessions"
        if args.team == "large":
            spec = generate_team(root, seed=args.seed, scale="large", shape="full", name="bench")
        else:
            spec = generate_recent_team(root, TEAMS[args.team], seed=args.seed)
        lead = spec.lead
        print(
            f"team ({args.team}): lead {lead.line_count} lines in {lead.frame_count} frames, "
            f"{len(spec.members) - 1} teammates, "
            f"{sum(m.line_count for m in spec.members)} lines in all, "
            f"{len(spec.messages)} messages, {len(spec.tasks)} tasks"
        )

        # The floor moves with the machine's state (seen: 98 to 152 ms on one box), so
        # it is measured again right before each cold run and each ratio is a pair.
        decompressed = decode_floor(root)[1]
        floors: list[float] = []
        colds: list[float] = []
        growths: list[int] = []
        cold_cpus: list[float] = []
        for _ in range(args.runs):
            floors.append(statistics.median(decode_floor(root)[0] for _ in range(3)))
            server = Server(root)
            try:
                with httpx.Client(base_url=server.base, timeout=60) as client:
                    before = rss_kib(server.proc.pid)
                    cpu_before = cpu_s(server.proc.pid)
                    cold, r = timed_get(client, API, params={"session": spec.lead_id})
                    assert r.status_code == 200, r.status_code
                    cold_cpus.append(cpu_s(server.proc.pid) - cpu_before)
                    colds.append(cold)
                    growths.append(rss_kib(server.proc.pid) - before)
            finally:
                server.stop()
        floor = statistics.median(floors)
        cold = statistics.median(colds)
        ratios = sorted(c / f for c, f in zip(colds, floors, strict=True))
        ratio = statistics.median(ratios)
        growth = statistics.median(growths) * 1024
        print(
            f"decompressed {decompressed / 1e6:.1f} MB; floor (python-zstandard alone, "
            f"median over the runs): {ms(floor)}"
        )
        print(
            f"cold first request (median of {args.runs} fresh servers): {ms(cold)}"
            f"  = {ratio:.2f}x the floor measured just before it (median; "
            f"{ratios[0]:.2f}-{ratios[-1]:.2f} over the runs; target <= 2x)"
        )
        cold_cpu = statistics.median(cold_cpus)
        print(f"cold first request, the server's CPU time (median): {ms(cold_cpu)}")
        print(
            f"RSS growth over the cold open: {growth / 1e6:.1f} MB"
            f"  = {growth / decompressed:.2f}x the decompressed bytes (target <= 0.5x)"
        )

        live_root = work / "live"
        shutil.copytree(root, live_root)
        spec.dump(work / "spec.json")
        live = LiveTeam(live_root, TeamSpec.load(work / "spec.json", root=str(live_root)))
        server = Server(live_root)
        try:
            with httpx.Client(base_url=server.base, timeout=60) as client:
                _, r = timed_get(client, API, params={"session": spec.lead_id})
                etag = r.headers["etag"]
                unchanged = []
                for _ in range(50):
                    t, r = timed_get(
                        client,
                        API,
                        params={"session": spec.lead_id},
                        headers={"If-None-Match": etag},
                    )
                    assert r.status_code == 304, r.status_code
                    unchanged.append(t)
                u = statistics.median(unchanged)
                print(
                    f"unchanged poll (304, median of 50): {ms(u)}"
                    f"  = {u / cold * 100:.2f}% of cold (target <= 1%)"
                )
                # After each append one request: in full and with ?since=<etag> in turn,
                # so that both meet the same kinds of append on the same machine state.
                probe = client.get(API, params={"session": spec.lead_id, "since": etag})
                supported = "delta" in probe.json()
                walls: dict[bool, list[float]] = {False: [], True: []}
                cpus: dict[bool, float] = {False: 0.0, True: 0.0}
                sizes: dict[bool, list[int]] = {False: [], True: []}
                now = spec.last_event_time
                frames = 0
                for i in range(30 if supported else 15):
                    with_since = supported and i % 2 == 1
                    now += 2500
                    report = live.tick(now)
                    frames = sum(report.appended.values())
                    params = {"session": spec.lead_id}
                    if with_since:
                        params["since"] = etag
                    cpu_before = cpu_s(server.proc.pid)
                    t, r = timed_get(client, API, params=params, headers={"If-None-Match": etag})
                    cpus[with_since] += cpu_s(server.proc.pid) - cpu_before
                    assert r.status_code == 200, r.status_code
                    if with_since:
                        assert r.json()["delta"]["known"], "the version was forgotten"
                    etag = r.headers["etag"]
                    walls[with_since].append(t)
                    sizes[with_since].append(len(r.content))
                for with_since in (False, True) if supported else (False,):
                    n = len(walls[with_since])
                    wall = statistics.median(walls[with_since])
                    cpu = cpus[with_since] / n
                    what = "with ?since=" if with_since else "in full"
                    print(
                        f"after an append (~{frames} events), {what} "
                        f"({statistics.median(sizes[with_since]) / 1024:.0f} KB; median of {n}): "
                        f"{ms(wall)}  = {wall / cold * 100:.2f}% of cold (target <= 5%); "
                        f"the server's CPU time (mean) {ms(cpu)} = "
                        f"{cpu / cold_cpu * 100:.2f}% of cold's"
                    )
                if not supported:
                    print("after an append with ?since=: this server answers in full")
                # The panel's poll after an append: the timeline, then the whole board
                # laid out and rendered again (what a live panel pays every 2 s).
                boards = []
                for _ in range(15):
                    now += 2500
                    live.tick(now)
                    t, r = timed_get(client, BOARD, params={"session": spec.lead_id, "v": etag})
                    assert r.status_code == 200, r.status_code
                    etag = r.headers.get("x-board-version") or _board_version(r.text) or etag
                    boards.append(t)
                b = statistics.median(boards)
                print(
                    f"panel board after an append (median of 15, {len(r.content) // 1024} KB): "
                    f"{ms(b)}  = {b / cold * 100:.2f}% of cold"
                )
            if args.load:
                asyncio.run(load_run(server.base, spec.lead_id, live, args.load_seconds))
        finally:
            server.stop()
        speed = side_by_side_speed(root)
        print(
            f"(machine: {os.cpu_count()} cores; a floor decode runs at {speed:.2f}x its speed "
            f"while another process decodes beside it; load average {os.getloadavg()[0]:.2f})"
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
