"""Token use in words: "1.2M in · 84k out · 93 % cached" (pure, total).

'in' is every input token billed: uncached input, cache reads and cache writes (the
log's counts are disjoint, HOST §8); 'cached' is the share of it read from cache.
Nothing at all (``None``, not an object, no step with usage) gives ``None``: a lane
whose log has no usage says nothing rather than "0".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: The timeline's ``Tokens`` keys.
TOKEN_KEYS = (
    "input",
    "cacheRead",
    "cacheWrite",
    "output",
    "reasoning",
    "steps",
    "stepsWithoutUsage",
)
_UNITS = ((1_000_000_000, "G"), (1_000_000, "M"), (1_000, "k"))


def _count(value: Any) -> int:
    return value if type(value) is int and value >= 0 else 0


def compact(n: int) -> str:
    """950, 1.2k, 84k, 1.2M: three significant figures at most, never rounded up
    past what was spent (9,999 is "9.9k", not "10k")."""
    for size, unit in _UNITS:
        if n >= size:
            scaled = n / size
            if scaled < 10:
                return f"{int(scaled * 10) / 10:g}{unit}"
            return f"{int(scaled)}{unit}"
    return str(n)


def billed_input(tokens: Mapping[str, Any]) -> int:
    return (
        _count(tokens.get("input"))
        + _count(tokens.get("cacheRead"))
        + _count(tokens.get("cacheWrite"))
    )


_NBSP = "\u00a0"


def tokens_text(tokens: Any) -> str | None:
    """The compact form, or ``None`` when there is nothing to say."""
    if not isinstance(tokens, Mapping) or _count(tokens.get("steps")) == 0:
        return None
    spent_in = billed_input(tokens)
    # Each part keeps its words together (no-break spaces): a narrow name cell wraps the
    # figure only between its parts, never as "1.8k / out".
    parts = [f"{compact(spent_in)}{_NBSP}in", f"{compact(_count(tokens.get('output')))}{_NBSP}out"]
    if spent_in:
        cached = _count(tokens.get("cacheRead")) * 100 // spent_in
        parts.append(f"{cached}{_NBSP}%{_NBSP}cached")
    return " · ".join(parts)


def tokens_title(tokens: Any) -> str | None:
    """Every count in full, for a tooltip."""
    if not isinstance(tokens, Mapping) or _count(tokens.get("steps")) == 0:
        return None
    steps = _count(tokens.get("steps"))
    without = _count(tokens.get("stepsWithoutUsage"))
    parts = [
        f"input {_count(tokens.get('input')):,}",
        f"cache read {_count(tokens.get('cacheRead')):,}",
        f"cache write {_count(tokens.get('cacheWrite')):,}",
        f"output {_count(tokens.get('output')):,}",
    ]
    reasoning = _count(tokens.get("reasoning"))
    if reasoning:
        parts.append(f"of it reasoning {reasoning:,}")
    title = ", ".join(parts) + f" tokens over {steps:,} model call{'s' if steps != 1 else ''}"
    if without:
        title += f" ({without:,} more without usage)"
    return title


def add_tokens(a: Mapping[str, Any] | None, b: Any) -> dict[str, int] | None:
    """The sum of two token objects (``None`` when neither has any)."""
    if not isinstance(b, Mapping):
        return dict(a) if a is not None else None
    base = a or {}
    return {k: _count(base.get(k)) + _count(b.get(k)) for k in TOKEN_KEYS}
