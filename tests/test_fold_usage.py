"""A ``TokenUsage`` as counts (fold/usage.py): disjoint, hostile values skipped and
counted, absent or null ones zero."""

from __future__ import annotations

from typing import Any

import pytest

from dsh_task_gantt.fold.usage import read_usage


def test_the_counts_in_their_order() -> None:
    usage = {"inputTokens": 1, "cacheReadTokens": 2, "cacheWriteTokens": 3, "outputTokens": 4,
             "reasoningTokens": 2}  # fmt: skip
    assert read_usage(usage) == ((1, 2, 3, 4, 2), 0)


def test_absent_and_null_counts_are_zero_and_not_counted() -> None:
    assert read_usage({"inputTokens": 5, "cacheReadTokens": None}) == ((5, 0, 0, 0, 0), 0)


@pytest.mark.parametrize(
    "bad", [-1, "7", 7.0, 10**30, True, None.__class__, {"a": 1}, [1]], ids=repr
)
def test_a_value_that_is_not_a_non_negative_integer_is_skipped_and_counted(bad: Any) -> None:
    assert read_usage({"inputTokens": bad, "outputTokens": 9}) == ((0, 0, 0, 9, 0), 1)


@pytest.mark.parametrize("junk", ["usage", 12, [1, 2], ("a",)])
def test_a_usage_that_is_no_object_is_none_and_counted(junk: Any) -> None:
    assert read_usage(junk) == (None, 1)


def test_no_usage_is_none_and_not_counted() -> None:
    assert read_usage(None) == (None, 0)
