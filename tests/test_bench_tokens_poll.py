"""The token poll benchmark still runs: a few appends on a small live team.

It prints figures and asserts no size; this checks that it measured something (an
answer after each append for every kind of poll, with some token markup in it: the
team's figure in the status line; unchanged polls answered 204 with no body), so the
script cannot rot unnoticed.
"""

from __future__ import annotations

import re

import pytest

from tests.kit.benchmarks import run_benchmark

pytestmark = [pytest.mark.slow]


def test_the_token_poll_benchmark_measures_a_small_live_team() -> None:
    out = run_benchmark("bench_tokens_poll.py", "--team", "small", "--ticks", "3")
    answers = re.findall(r"answers after an append \((\d+)\): median ([\d,]+) B", out)
    assert len(answers) == 4 and all(int(n) >= 1 for n, _ in answers), out
    tokens = re.findall(r"of them token markup: median ([\d,]+) B", out)
    assert len(tokens) == 4 and all(int(t.replace(",", "")) > 0 for t in tokens), out
    assert re.search(r"unchanged polls: statuses \{'204': \d+\}, 0 bytes", out), out
