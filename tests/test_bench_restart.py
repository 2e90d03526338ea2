"""The restart benchmark still runs: a small team, one run.

It prints figures and asserts no time; this only checks that it measured what it
says (a cold request that read every lane, a restarted one that took every lane
from the cache), so it cannot rot unnoticed.
"""

from __future__ import annotations

import re

import pytest

from tests.kit.benchmarks import run_benchmark

pytestmark = [pytest.mark.slow]


def test_the_restart_benchmark_measures_a_small_team() -> None:
    out = run_benchmark("bench_restart.py", "--team", "small", "--runs", "1")
    cold = re.search(r"cold \(empty cache\): CPU (\d+) ms.* from the cache 0 of (\d+)", out)
    assert cold is not None and int(cold.group(1)) > 0, out
    lanes = cold.group(2)
    restarted = re.search(rf"restarted \(cache\): CPU (\d+) ms.* from the cache {lanes} of", out)
    assert restarted is not None and int(restarted.group(1)) > 0, out
