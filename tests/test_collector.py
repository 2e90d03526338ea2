"""The collector's pace in the server's process: fewer young collections, none lost."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from dsh_task_gantt.collector import YOUNG_THRESHOLD, pace_for_serving


@pytest.fixture
def thresholds() -> Iterator[None]:
    before = gc.get_threshold()
    yield
    gc.set_threshold(*before)


def test_the_young_generation_is_raised_and_the_older_ones_kept(thresholds: None) -> None:
    gc.set_threshold(700, 10, 10)
    assert pace_for_serving() == (700, 10, 10)
    assert gc.get_threshold() == (YOUNG_THRESHOLD, 10, 10)


def test_a_larger_threshold_set_by_the_user_is_not_lowered(thresholds: None) -> None:
    gc.set_threshold(YOUNG_THRESHOLD * 5, 20, 30)
    pace_for_serving()
    assert gc.get_threshold() == (YOUNG_THRESHOLD * 5, 20, 30)


def test_a_poll_sized_burst_of_allocations_runs_far_fewer_young_collections(
    thresholds: None,
) -> None:
    def young_collections(burst: int) -> int:
        gc.collect()
        before = gc.get_stats()[0]["collections"]
        kept = [[i] for i in range(burst)]  # containers that live across collections
        del kept
        return int(gc.get_stats()[0]["collections"] - before)

    gc.set_threshold(700, 10, 10)
    default = young_collections(60_000)
    pace_for_serving()
    paced = young_collections(60_000)
    assert default >= 60 and paced <= default // 10
