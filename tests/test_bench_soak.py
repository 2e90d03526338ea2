"""The soak benchmark still runs: a few seconds of it on a small live team, with the
server's memory accounts and a profile of its event loop.

It prints figures and asserts no slope; this checks that it measured something (polls
answered, no error, an RSS slope, and the server's own accounts read back: pymalloc,
the C heap and the tracked objects per append), so the script cannot rot unnoticed.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import pstats
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.kit.benchmarks import ROOT, run_benchmark
from tests.kit.processes import is_panel_server

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not hasattr(ctypes.CDLL(None), "mallinfo2"),
        reason="the C heap's accounts need glibc's mallinfo2 (glibc 2.33 or later)",
    ),
]


def test_the_soak_benchmark_reads_the_servers_memory_accounts(tmp_path: Path) -> None:
    out_json = tmp_path / "soak.json"
    profile = tmp_path / "server.pstats"
    out = run_benchmark(
        "bench_soak.py",
        *("--team", "small", "--minutes", "0.4", "--pollers", "2", "--api-clients", "1"),
        *("--report-every", "4", "--warm-up", "4", "--probes", "2", "--accounts"),
        *("--json", str(out_json), "--profile-out", str(profile), "--profile-from", "probes"),
    )
    assert re.search(r"errors \{\}|errors 0", out), out
    assert "board 200" in out, out
    summary = json.loads(out_json.read_text())
    assert summary["requests"] > 0 and not summary["errors"], summary["errors"]
    # Each lone probe says what the append before it did (the writer's word for it).
    delta = summary["probe"]["board delta"]
    words = {"step", "message", "turn", "task"}
    assert len(delta["dids"]) == 2 and all(d.split("+")[0] in words for d in delta["dids"])
    assert sum(f["n"] for f in delta["by_did"].values()) == 2, delta["by_did"]
    assert "by what the append did:" in out, out
    lines = summary["account_lines"]
    assert len(lines) >= 3, out
    # Each line is the server's own: its RSS, pymalloc's and the C heap's figures, and
    # the objects it tracks (the plugin's own types among them, once it has read a team).
    for key in ("rss", "py_allocated", "py_free", "c_in_use", "tracked"):
        assert all(line[key] > 0 for line in lines), (key, lines[-1])
    assert "LaneFold" in lines[-1]["types"], sorted(lines[-1]["types"])
    assert any(shape.startswith("tuple") for shape in lines[-1]["shapes"]), lines[-1]["shapes"]
    growth = summary["accounts"]
    assert growth["appends"] > 0
    assert set(growth["per_append"]) >= {"rss", "py_allocated", "c_in_use", "tracked"}
    assert "server accounts per append" in out, out
    # The server's event loop was profiled from the lone probes on: their board poll's
    # work is in it, and the collector's passes while profiling were counted.
    stats = pstats.Stats(str(profile))
    functions = {name for _file, _line, name in stats.stats}  # type: ignore[attr-defined]
    assert any("board" in name for name in functions), sorted(functions)
    gc_passes = json.loads(Path(str(profile) + ".gc.json").read_text())
    assert gc_passes["profiled_s"] > 0, gc_passes  # the signal switched the counting on
    generations = gc_passes["generations"]
    assert set(generations) <= {"0", "1", "2"}, generations
    assert all(set(p) == {"passes", "total_ms", "max_ms"} for p in generations.values())


def _children(pid: int) -> list[int]:
    """A process's children, and theirs (from /proc)."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            kids = (task / "children").read_text().split()
        except OSError:
            continue
        for kid in map(int, kids):
            found += [kid, *_children(kid)]
    return found


def test_the_soak_stops_within_seconds_when_its_server_dies() -> None:
    # Reports a minute apart: a dead server must be noticed long before the next one.
    bench = subprocess.Popen(
        [
            *(sys.executable, str(ROOT / "benchmarks" / "bench_soak.py")),
            *("--team", "small", "--minutes", "3", "--pollers", "2", "--api-clients", "1"),
            *("--report-every", "60", "--probes", "0"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        start_new_session=True,  # its writer and server go with it, whatever happens
    )
    try:
        assert bench.stdout is not None
        for line in bench.stdout:  # the header comes just before the server starts
            if " pollers, " in line:
                break
        deadline = time.monotonic() + 60
        while not (servers := [p for p in _children(bench.pid) if is_panel_server(p)]):
            assert bench.poll() is None and time.monotonic() < deadline, "no server started"
            time.sleep(0.2)
        time.sleep(2)  # the pollers are polling
        killed_at = time.monotonic()
        os.kill(servers[0], signal.SIGKILL)
        _, err = bench.communicate(timeout=30)
        took = time.monotonic() - killed_at
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(bench.pid, signal.SIGKILL)
        bench.wait()
    assert bench.returncode == 1, err[-2000:]
    assert "the server stopped (signal SIGKILL)" in err, err[-2000:]
    assert took < 10, f"the soak noticed its dead server after {took:.0f} s"
