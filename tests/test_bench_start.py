"""The start page's benchmark still runs: a tiny root, one run.

It prints figures and asserts no time; this only checks that it measured something
(every card on the first answer, each filled, none left waiting), so it cannot rot.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.kit.benchmarks import run_benchmark

pytestmark = [pytest.mark.slow]


def test_the_start_page_benchmark_measures_a_tiny_root(tmp_path: Path) -> None:
    out = run_benchmark(
        "bench_start.py",
        *("--root", str(tmp_path / "sessions"), "--runs", "1"),
        *("--teams", "2", "--singles", "3", "--workspaces", "2"),
    )
    assert "2 teams, 3 single sessions, 2 workspaces" in out
    assert "cards on the first answer: 5" in out
    assert "first answer: median" in out and "all cards filled: median" in out
    assert "placeholders left: 0" in out
    assert "live poll, nothing changed: median" in out
    assert "live poll, one log changed: median" in out
    assert "live poll, a new session appeared: median" in out
