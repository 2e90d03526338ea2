"""The in-process memory benchmark still runs: a few ticks of a small live team, in its
``--shapes`` and ``--floor`` modes. It prints figures and asserts none; this checks that
it measured something, so the script cannot rot unnoticed."""

from __future__ import annotations

import re

import pytest

from tests.kit.benchmarks import run_benchmark

pytestmark = pytest.mark.slow


def test_shapes_tell_what_a_tick_holds_and_who_holds_each_turn() -> None:
    out = run_benchmark(
        "bench_mem_growth.py", *("--team", "small", "--from", "2", "--to", "5", "--shapes")
    )
    assert re.search(r"caches as they are: heap in use -?[\d.]+ KB, of which counted", out), out
    by_shape = out.split("by shape, per tick", 1)[1].split("strings and bytes", 1)[0]
    assert re.search(r"^\s+-?\d+ B\s+-?[\d.]+\s+\S", by_shape, re.M), out
    # A drawn turn's span is held by its lane's lists: at least one holder each.
    turns = re.search(r"dict\[turn\]: ([\d,]+) alive, ([\d.]+) holders each", out)
    assert turns is not None, out
    assert int(turns[1].replace(",", "")) > 0 and float(turns[2]) >= 1.0, out


def test_the_floor_names_each_caches_heap_bytes() -> None:
    out = run_benchmark(
        "bench_mem_growth.py", *("--team", "small", "--from", "2", "--to", "4", "--floor")
    )
    assert "the floor (data)" in out, out
    held = out.split("heap bytes and blocks each cache held alone", 1)[1]
    assert re.search(r"^\s+-?[\d.]+ MB\s+-?[\d,]+ blocks\s+[\d,]+ entries\s+\S", held, re.M), out
