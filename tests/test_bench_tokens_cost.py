"""The token-use cost benchmark still runs: a small team, CPU time, one run.

It prints figures and asserts no time; this checks that it read the same events before
and after (the old plugin checked out in a temporary worktree, removed again) and that
it prints a ratio for the lead and for the members, so it cannot rot unnoticed.
"""

from __future__ import annotations

import re
import subprocess

import pytest

from tests.kit.benchmarks import ROOT, run_benchmark

pytestmark = [pytest.mark.slow]


def _has_commit(rev: str) -> bool:
    try:
        found = subprocess.run(
            ["git", "-C", str(ROOT), "cat-file", "-e", f"{rev}^{{commit}}"],
            capture_output=True,
            check=False,
        )
    except OSError:
        return False
    return found.returncode == 0


def _bench_worktrees() -> set[str]:
    listed = subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "list"], capture_output=True, text=True, check=True
    ).stdout
    return {line.split()[0] for line in listed.splitlines() if "bench-tokens-before-" in line}


def test_the_token_cost_benchmark_compares_a_small_team_before_and_after() -> None:
    if not _has_commit("8bce648"):
        pytest.skip("not a git checkout holding the commit before token use")
    worktrees = _bench_worktrees()
    out = run_benchmark("bench_tokens_cost.py", "--team", "small", "--timer", "cpu", "--runs", "1")
    assert "measured: process CPU of reader + lane fold of every log" in out, out
    for group in ("lead", "members", "team"):
        row = re.search(
            rf"^{group} +before \(8bce648\) +([\d,]+) ms CPU +after +([\d,]+) ms CPU +ratio "
            rf"(\d+\.\d+) .* (\d+) events$",
            out,
            re.MULTILINE,
        )
        assert row is not None, out
        assert int(row.group(4)) > 0 and float(row.group(3)) > 0, out
    assert _bench_worktrees() <= worktrees  # its temporary worktree is gone again
