"""How the full ``/api/timeline`` and its ``since`` form grow with a day's history.

For each of ``--hours`` (default 1, 6, 12, 24) it writes the big team of ``teams.py``
with that many hours of appends at the real rate before now (``bench_soak.prewrite``:
each tick timestamped as it would have been), then, in this process, serves it with
the embedded host (``EmbeddedHost`` through starlette's TestClient, with the young
generation and the allocator set as ``serve`` sets them) and measures, over
``--ticks`` appends each:

- ``full``: a plain ``/api/timeline`` just after an append (the build of what changed
  and the whole body, assembled from the lanes' and tasks' kept bytes);
- ``since``: ``/api/timeline?since=<the etag before the append>`` (the changed lanes
  and tasks only: a changed lane is sent whole);
- each answer's bytes, and the process CPU (``time.process_time``) and wall per request.

It prints a row per history with p50 / max of each and the ratio of the full body's CPU
to the history's turns: a full answer may grow with the history, linearly, and this is
where it is measured. Nothing here asserts a figure; the machine is shared, so the CPU
column is the one to read.

Run: ``python benchmarks/bench_history.py [--hours 1 6 12 24] [--ticks 8]``.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_soak import PREFIX, prewrite, raw_log_bytes
from starlette.testclient import TestClient
from teams import TEAMS, generate_recent_team

from dsh_task_gantt import collector
from dsh_task_gantt.allocator import map_large_blocks
from dsh_task_gantt.embedded import EmbeddedHost
from dsh_task_gantt.fixturegen import LiveTeam, TeamSpec
from dsh_task_gantt.memo import clear_memos

HOUR_MS = 3_600_000


def measure(hours: float, ticks: int) -> dict[str, float]:
    work = Path(tempfile.mkdtemp(prefix="dsh-gantt-history-"))
    try:
        root = work / "sessions"
        root.mkdir()
        span = round(hours * HOUR_MS)
        spec = generate_recent_team(root, TEAMS["big"], ends_ms=int(time.time() * 1000) - span)
        spec.dump(work / "spec.json")
        live = LiveTeam(root, TeamSpec.load(work / "spec.json", root=str(root)))
        prewrite(live, spec.last_event_time, span)
        raw = raw_log_bytes(root)
        clear_memos()
        client = TestClient(
            EmbeddedHost(root), base_url="http://127.0.0.1:8765", client=("127.0.0.1", 1)
        )
        url = PREFIX + "/api/timeline"
        params = {"session": spec.lead_id}
        cpu0, wall0 = time.process_time(), time.perf_counter()
        first = client.get(url, params=params)
        cold_cpu, cold_wall = time.process_time() - cpu0, time.perf_counter() - wall0
        first.raise_for_status()
        turns = sum(
            1 for lane in first.json()["lanes"] for s in lane["spans"] if s.get("kind") == "turn"
        )
        etag = first.headers["etag"]
        full: list[tuple[float, float, int]] = []
        since: list[tuple[float, float, int]] = []
        now = int(time.time() * 1000)
        for n in range(ticks):
            live.tick(now + 2000 * (n + 1))
            for into, extra in ((since, {"since": etag}), (full, {})):
                cpu0, wall0 = time.process_time(), time.perf_counter()
                r = client.get(url, params={**params, **extra})
                into.append(
                    (time.process_time() - cpu0, time.perf_counter() - wall0, len(r.content))
                )
            etag = r.headers["etag"]
        client.close()
        clear_memos()
        return {
            "hours": hours,
            "raw_mb": raw / 1e6,
            "turns": turns,
            "cold_cpu_ms": cold_cpu * 1000,
            "cold_wall_ms": cold_wall * 1000,
            **_stats("full", full),
            **_stats("since", since),
        }
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _stats(name: str, rows: list[tuple[float, float, int]]) -> dict[str, float]:
    cpu = [c * 1000 for c, _, _ in rows]
    wall = [w * 1000 for _, w, _ in rows]
    return {
        f"{name}_cpu_p50_ms": statistics.median(cpu),
        f"{name}_cpu_max_ms": max(cpu),
        f"{name}_wall_p50_ms": statistics.median(wall),
        f"{name}_kb_p50": statistics.median(b for _, _, b in rows) / 1024,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hours", type=float, nargs="+", default=[1, 6, 12, 24])
    ap.add_argument("--ticks", type=int, default=8)
    args = ap.parse_args()
    collector.pace_for_serving()
    map_large_blocks()
    rows = []
    for hours in args.hours:
        row = measure(hours, args.ticks)
        rows.append(row)
        print(
            f"{hours:g} h: raw {row['raw_mb']:.0f} MB, {row['turns']:,} turns; cold "
            f"{row['cold_cpu_ms']:.0f} ms CPU; after an append: full "
            f"{row['full_cpu_p50_ms']:.1f} / {row['full_cpu_max_ms']:.1f} ms CPU p50/max "
            f"({row['full_kb_p50']:,.0f} KB), since {row['since_cpu_p50_ms']:.1f} / "
            f"{row['since_cpu_max_ms']:.1f} ms ({row['since_kb_p50']:,.0f} KB); full CPU per "
            f"1k turns {row['full_cpu_p50_ms'] * 1000 / max(row['turns'], 1):.2f} ms",
            flush=True,
        )


if __name__ == "__main__":
    main()
