"""Seeded values for generated logs: bulk text, sizes, ids, tool arguments.

Deterministic: every choice comes from the ``random.Random`` it is given.
"""

from __future__ import annotations

import math
import random
import uuid
from collections.abc import Callable
from typing import Any

import orjson


class TextSource:
    """Bulk text: slices of a seeded corpus of ``line()`` results (fast enough for tens
    of MB of tool results and assistant turns)."""

    def __init__(self, rng: random.Random, line: Callable[[], str], size: int = 1 << 16) -> None:
        self._rng = rng
        parts: list[str] = []
        length = 0
        while length < size:
            line_text = line()
            parts.append(line_text)
            length += len(line_text) + 1
        self._corpus = "\n".join(parts)

    def take(self, n: int) -> str:
        if n <= 0:
            return ""
        corpus = self._corpus
        out: list[str] = []
        while n > 0:
            start = self._rng.randrange(len(corpus))
            piece = corpus[start : start + n]
            out.append(piece)
            n -= len(piece)
        return "".join(out)


def lognormal(rng: random.Random, median: int, sigma: float, lo: int, hi: int) -> int:
    return max(lo, min(hi, int(median * math.exp(rng.gauss(0.0, sigma)))))


def new_uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def json_args(args: dict[str, Any]) -> str:
    """Tool arguments are a JSON *string* in the real log."""
    return orjson.dumps(args).decode()
