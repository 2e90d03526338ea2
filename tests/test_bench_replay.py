"""The replay benchmark still runs: a few seconds of it on a small live team.

It prints figures and asserts no time; this checks that it measured something (a
moment timed, cursor requests answered as changed pieces, a drag that sent requests
and ended on the rows of its last position, polls that kept the moment), so the script
cannot rot unnoticed.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.kit.benchmarks import run_benchmark

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.skipif(
        not Path("/usr/bin/chromium").exists(), reason="Debian's /usr/bin/chromium is not installed"
    ),
]


def test_the_replay_benchmark_measures_a_small_live_team() -> None:
    pytest.importorskip("playwright.sync_api", reason="the playwright package is missing")
    out = run_benchmark(
        "bench_replay.py",
        *("--team", "small", "--seconds", "5", "--moments", "3", "--drag-seconds", "1"),
    )
    assert re.search(r"moment in process: moment_at median [\d.]+ ms", out), out
    assert "a whole board, not the changed pieces" not in out, out
    first = re.search(r"cursor request from the present .*answer median ([\d.]+) (KB|B)", out)
    assert first is not None and float(first.group(1)) > 0, out
    drag = re.search(r"drag at 400x900: \d+ pointer moves .*?, (\d+) moment requests", out)
    assert drag is not None and int(drag.group(1)) >= 1, out
    assert "rows at the end are those of the cursor: True" in out, out
    assert "the cursor stayed at its moment: True" in out, out
