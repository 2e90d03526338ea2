"""Token use in words (board/tokens.py): the compact form under a lane's name and in
the status line, the full counts of a tooltip, and sums."""

from __future__ import annotations

from typing import Any

import pytest

from dsh_task_gantt.board.tokens import add_tokens, compact, tokens_text, tokens_title


def tokens(**kw: int) -> dict[str, int]:
    base = dict.fromkeys(
        ("input", "cacheRead", "cacheWrite", "output", "reasoning", "steps", "stepsWithoutUsage"),
        0,
    )
    return {**base, "steps": 1, **kw}


@pytest.mark.parametrize(
    ("n", "shown"),
    [(0, "0"), (950, "950"), (1_000, "1k"), (1_250, "1.2k"), (9_999, "9.9k"), (84_321, "84k"),
     (1_234_567, "1.2M"), (93_000_000, "93M"), (2_500_000_000, "2.5G")],
)  # fmt: skip
def test_compact_never_rounds_up_past_what_was_spent(n: int, shown: str) -> None:
    assert compact(n) == shown


def test_in_is_uncached_input_plus_cache_reads_and_writes() -> None:
    spent = tokens(input=100_000, cacheRead=1_116_000, cacheWrite=84_000, output=84_000)
    # 1.3M billed input, 1,116k of it read from cache: 85 %.
    assert tokens_text(spent) == "1.3M\u00a0in · 84k\u00a0out · 85\u00a0%\u00a0cached"


def test_reasoning_is_not_added_to_output_again() -> None:
    assert (
        tokens_text(tokens(input=10, output=500, reasoning=400))
        == "10\u00a0in · 500\u00a0out · 0\u00a0%\u00a0cached"
    )


@pytest.mark.parametrize("nothing", [None, {}, "junk", 7, tokens(steps=0)])
def test_nothing_spent_says_nothing(nothing: Any) -> None:
    assert tokens_text(nothing) is None and tokens_title(nothing) is None


def test_no_input_at_all_has_no_cached_share() -> None:
    assert tokens_text(tokens(output=12)) == "0\u00a0in · 12\u00a0out"


def test_the_tooltip_has_every_count_in_full() -> None:
    title = tokens_title(
        tokens(input=5, cacheRead=200_000, cacheWrite=90, output=20, reasoning=7, steps=3,
               stepsWithoutUsage=1)
    )  # fmt: skip
    assert title == (
        "input 5, cache read 200,000, cache write 90, output 20, of it reasoning 7 tokens "
        "over 3 model calls (1 more without usage)"
    )


def test_sums_skip_what_is_not_a_count() -> None:
    total = add_tokens(None, tokens(input=3, output=4))
    total = add_tokens(total, {"input": -5, "output": "x", "steps": 2})
    total = add_tokens(total, None)
    assert total is not None and (total["input"], total["output"], total["steps"]) == (3, 4, 3)
