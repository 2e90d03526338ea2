"""A ``TokenUsage`` object as counts (pure, total; HOST §8).

The counts are disjoint: ``inputTokens`` is uncached input only, cache reads and
writes are counted apart, and ``reasoningTokens`` is already inside ``outputTokens``.
A value that is not a non-negative safe integer (negative, a string, a float, a
boolean, 10^30, an object) is skipped and counted; an absent or ``null`` one is 0.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..events import MAX_SAFE_INT

#: ``TokenUsage``'s keys, in the order of :data:`Counts`.
USAGE_KEYS = (
    "inputTokens",
    "cacheReadTokens",
    "cacheWriteTokens",
    "outputTokens",
    "reasoningTokens",
)
#: (input, cache read, cache write, output, reasoning).
Counts = tuple[int, int, int, int, int]
ZERO: Counts = (0, 0, 0, 0, 0)


def read_usage(value: Any) -> tuple[Counts | None, int]:
    """``(counts, skipped)``: ``counts`` is ``None`` when ``value`` is no usage object
    at all (then ``skipped`` is 1 unless ``value`` is absent)."""
    if value is None:
        return None, 0
    if not isinstance(value, Mapping):
        return None, 1
    skipped = 0
    counts = []
    for name in USAGE_KEYS:
        v = value.get(name)
        if v is None:
            counts.append(0)
        elif type(v) is int and 0 <= v <= MAX_SAFE_INT:
            counts.append(v)
        else:
            counts.append(0)
            skipped += 1
    return (counts[0], counts[1], counts[2], counts[3], counts[4]), skipped


def add(a: Counts, b: Counts) -> Counts:
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3], a[4] + b[4])
