"""Seeded values for generated logs: bulk text, sizes, ids, tool arguments.

Deterministic: every choice comes from the ``random.Random`` it is given.
"""

from __future__ import annotations

import math
import random
import uuid
from typing import Any

import orjson

_SENTENCE = (
    "the lead asked for a timeline of every task and message in the team so we "
    "read each session log frame by frame decode zstd parse json lines fold "
    "snapshots into history attribute revisions to members by expected_revision "
    "and draw lanes with spans marks colours tests pass ruff mypy strict fixtures "
    "deterministic seed replay reader writer offset torn tail header seq time data "
    "source kind turn step tool call result usage tokens "
    "任务 时间线 泳道 消息 队友 日志 帧 解析 😀 café naïve"
)
WORDS = tuple(_SENTENCE.split())


class TextSource:
    """Bulk text: slices of a seeded corpus (fast enough for tens of MB)."""

    def __init__(self, rng: random.Random, size: int = 1 << 16) -> None:
        self._rng = rng
        parts: list[str] = []
        length = 0
        while length < size:
            line = " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 18)))
            parts.append(line)
            length += len(line) + 1
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
