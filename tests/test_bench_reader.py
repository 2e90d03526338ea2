"""The reader benchmark's team mode still runs: a small team, one run.

It prints figures and asserts no time; this checks that it read every log of the team
(the same events one log at a time and two side by side) and that the figures it
prints are measured, so it cannot rot unnoticed.
"""

from __future__ import annotations

import re

import pytest

from tests.kit.benchmarks import run_benchmark

pytestmark = [pytest.mark.slow]


def test_the_reader_benchmark_reads_a_whole_small_team_cold() -> None:
    out = run_benchmark("bench_reader.py", "--team", "small", "--runs", "1")
    team = re.search(r"team: (\d+) logs, .* (\d+) events", out)
    assert team is not None and int(team.group(1)) > 1 and int(team.group(2)) > 0, out
    one = re.search(r"one log at a time .*? (\d+) ms  reading threads' CPU (\d+) ms, waited", out)
    two = re.search(r"two logs side by side .*? (\d+) ms  reading threads' CPU (\d+) ms", out)
    assert one is not None and two is not None, out
    assert int(one.group(2)) > 0 and int(two.group(2)) > 0, out
