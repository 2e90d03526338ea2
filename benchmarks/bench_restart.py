"""What the lane cache saves a restarted server: the CPU of its first panel request.

Generates a team (``--team real|big``, as ``teams.py`` does), then runs each request
in a fresh Python process (imports and start-up are outside the figure), in turn:

- cold: an empty cache folder, the panel page of the team's lead (every log decoded
  and folded); stopping writes the cache, as a server does at shut-down;
- restarted: a new process over the cache the cold one wrote (the readers resumed
  where it stopped, the folds loaded; nothing decoded).

It prints the wall and CPU time of that one request (``getrusage``, all threads) and
how many lanes came from the cache (that a cached read shows exactly what a cold one
does is the tests' business: ``tests/test_lane_cache_identity.py``).
Figures only, medians of ``--runs``; this machine is shared, so run it more than once.

Run: ``python benchmarks/bench_restart.py [--team real|big|both] [--runs 5]``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from teams import TEAMS, generate_recent_team

#: One request in a fresh process; prints its figures as JSON.
_CHILD = r"""
import json, resource, sys, time
from pathlib import Path
from starlette.testclient import TestClient
from dsh_task_gantt.embedded import EmbeddedHost
root, lead, cache = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
host = EmbeddedHost(root, cache_dir=cache)
with TestClient(host, base_url="http://127.0.0.1:8765", client=("127.0.0.1", 50000)) as c:
    c.get("/plugins/dsh-task-gantt/static/colors.css")  # the app's own first-request set-up
    before = resource.getrusage(resource.RUSAGE_SELF)
    started = time.perf_counter()
    page = c.get(f"/plugins/dsh-task-gantt/panel?session={lead}")
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_SELF)
cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
print(json.dumps({"status": page.status_code, "wall_ms": wall * 1000, "cpu_ms": cpu * 1000,
                  "resumed": host.persistence.resumed, "bytes": len(page.content)}))
"""


def one_request(root: Path, lead: str, cache: Path) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, str(root), lead, str(cache)],
        capture_output=True,
        text=True,
        check=True,
    )
    figures: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    if figures["status"] != 200:
        raise RuntimeError(f"the panel answered {figures['status']}")
    return figures


def measure(name: str, runs: int) -> None:
    work = Path(tempfile.mkdtemp(prefix="dsh-gantt-restart-bench-"))
    try:
        root = work / "sessions"
        spec = generate_recent_team(root, TEAMS[name])
        lanes = sum(1 for m in spec.members if m.rel_path is not None)
        cold, restarted = [], []
        for run in range(runs):
            cache = work / f"cache-{run}"
            cold.append(one_request(root, spec.lead_id, cache))
            restarted.append(one_request(root, spec.lead_id, cache))
            if cold[-1]["resumed"] != 0:
                raise RuntimeError("the cold request was not cold")
        for label, rows in (("cold (empty cache)", cold), ("restarted (cache)", restarted)):
            each = ", ".join(f"{r['cpu_ms']:.0f}" for r in rows)
            print(
                f"[{name}] {label}: CPU {statistics.median(r['cpu_ms'] for r in rows):.0f} ms, "
                f"wall {statistics.median(r['wall_ms'] for r in rows):.0f} ms (median of "
                f"{runs}; CPU runs {each}); lanes "
                f"from the cache {statistics.median(r['resumed'] for r in rows):.0f} of {lanes}",
                flush=True,
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--team", choices=("real", "big", "both", "small"), default="real")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    for name in ["real", "big"] if args.team == "both" else [args.team]:
        measure(name, args.runs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
