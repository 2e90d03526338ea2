"""The first-load benchmark still runs: two loads of a small team's panel, traced.

It prints figures and asserts no time; this only checks that it measured something
(a load timed, the main thread's work split by kind, the page's bytes and DOM), so the
script cannot rot unnoticed.
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


def test_the_first_load_benchmark_splits_a_small_teams_load_by_kind() -> None:
    pytest.importorskip("playwright.sync_api", reason="the playwright package is missing")
    out = run_benchmark("bench_first_load.py", "--team", "small", "--runs", "2")

    load = re.search(r"navigation start to load event: median (\d+) ms \(runs: (\d+), (\d+)\)", out)
    assert load is not None and int(load.group(1)) > 0, out
    busy = re.search(
        r"main thread busy until load \(the median run, \d+ ms\): (\d+) ms: (.*);", out
    )
    assert busy is not None, out
    kinds = dict(re.findall(r"([a-zA-Z ]+?) (\d+)(?:, |$)", busy.group(2)))
    assert {"parse HTML", "style", "layout", "script", "paint", "other"} <= kinds.keys(), out
    # The kinds are the busy time split, not figures of their own.
    assert abs(sum(int(v) for v in kinds.values()) - int(busy.group(1))) <= len(kinds), out
    assert int(kinds["script"]) > 0 and int(kinds["layout"]) > 0, out
    page = re.search(r"bytes: page ([\d.]+) KB, static ([\d.]+) KB \(.*panel\.js", out)
    assert page is not None and float(page.group(1)) > 0, out
    dom = re.search(r"DOM: ([\d,]+) elements \(([\d,]+) in the board\), ([\d,]+) text nodes", out)
    assert dom is not None, out
    elements, board = (int(g.replace(",", "")) for g in dom.groups()[:2])
    assert 0 < board < elements, out
