"""The browser benchmark still runs: a few seconds of it on a small live team.

It prints figures and asserts no time; this only checks that it measured something
(polls seen, a board found, a first load timed), so the script cannot rot unnoticed.
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


def test_the_panel_benchmark_measures_a_small_live_team() -> None:
    pytest.importorskip("playwright.sync_api", reason="the playwright package is missing")
    out = run_benchmark(
        "bench_panel.py",
        *("--team", "small", "--seconds", "5"),
        *("--cold-runs", "1", "--widths", "400x900"),
    )

    load = re.search(r"first load of a truly cold server .*: (\d+) ms", out)
    assert load is not None and int(load.group(1)) > 0, out
    restarted = re.search(r"first load of a restarted server .*\): (\d+) ms", out)
    assert restarted is not None and int(restarted.group(1)) > 0, out
    again = re.search(
        r"first load after a restart \(.* ([\d.]+) s, then the panel .*\): (\d+) ms", out
    )
    assert again is not None and int(again.group(2)) > 0, out
    warm = re.search(r"first load after start \(.* ([\d.]+) s, then the panel .*\): (\d+) ms", out)
    assert warm is not None and int(warm.group(2)) > 0, out
    zooms = re.search(r"x2 [\d,]+ \([\d,]+\); x4 .* most at any zoom ([\d,]+)", out)
    assert zooms is not None, out

    dom = re.search(
        r"DOM elements at 400x900, document \(board\): default ([\d,]+) \(([\d,]+)\)", out
    )
    assert dom is not None, out
    document, board = (int(g.replace(",", "")) for g in dom.groups())
    assert 0 < board < document, out  # the board was found, and it is part of the page

    polls = re.search(r"(\d+) polls, (\d+) with a new board; body after an append: median ", out)
    assert polls is not None and int(polls.group(2)) >= 1, out  # the appends reached the page
    assert re.search(r"unchanged polls: [1-9]\d*, statuses \[204\], bodies 0 B", out), out
    busy = re.search(r"main thread busy while live at 400x900: ([\d.]+) % of one core", out)
    assert busy is not None and float(busy.group(1)) > 0, out
