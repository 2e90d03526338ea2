"""Token use per lane, per turn and for the team (HOST §8; pure, memoised per fold).

Per step (a lane's ``turn``/``step`` pair): its ``usage`` chunk, else its assistant
message's ``usage`` — never both (the fold keeps a message only for a step without a
chunk). Several chunks (or messages) for one step: the
latest seq wins. A record without a turn or a step is a step of its own. Records
before the seed cut are the parent's (inherited), not this lane's. The counts are
disjoint (``fold.usage``), so every total is a plain sum.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..fold.records import LaneFold, UsageRec
from ..fold.usage import ZERO, Counts, add
from ..memo import Memo, Same

#: Counts, steps with usage, steps without (a turn's or a lane's totals).
Totals = tuple[Counts, int, int]
_NONE: Totals = (ZERO, 0, 0)


@dataclass(frozen=True, slots=True)
class LaneTokens:
    total: Totals
    #: turn id -> that turn's totals (turns with at least one step seen).
    by_turn: Mapping[str, Totals]
    #: Values that were not non-negative integers (skipped), in the records used.
    skipped: int
    #: Steps whose usage chunk was not an object (their message's usage counted).
    bad_chunks: int
    provider: str | None
    model: str | None


_LANE_TOKENS: Memo[tuple[Same[LaneFold], int], LaneTokens] = Memo(256)


def lane_tokens(fold: LaneFold, cut: int = 0) -> LaneTokens:
    """The lane's token use from ``cut`` on (memoised: a fold never changes)."""
    key = (Same(fold), cut)
    hit = _LANE_TOKENS.get(key)
    if hit is not None:
        return hit
    return _LANE_TOKENS.put(key, _lane_tokens(fold, cut))


def _step_key(seq: int, rec: UsageRec) -> tuple[str, ...]:
    if rec.turn_id is None or rec.step_id is None:
        return ("@", str(seq))
    return (rec.turn_id, rec.step_id)


def _latest(records: Mapping[int, UsageRec], cut: int) -> dict[tuple[str, ...], UsageRec]:
    """Each step's record with the highest seq (at or after ``cut``)."""
    best: dict[tuple[str, ...], tuple[int, UsageRec]] = {}
    for seq, rec in records.items():
        if seq < cut:
            continue
        k = _step_key(seq, rec)
        held = best.get(k)
        if held is None or seq > held[0]:
            best[k] = (seq, rec)
    return {k: rec for k, (_seq, rec) in best.items()}


def _lane_tokens(fold: LaneFold, cut: int) -> LaneTokens:
    chunks = _latest(fold.usage_chunks, cut)
    messages = _latest(fold.usage_messages, cut)
    by_turn: dict[str, Totals] = {}
    total = _NONE
    skipped = bad_chunks = 0
    for k in chunks.keys() | messages.keys():
        chunk = chunks.get(k)
        rec = chunk if chunk is not None and chunk.counts is not None else messages.get(k)
        if chunk is not None and chunk.counts is None:
            bad_chunks += 1
            skipped += chunk.skipped
        step: Totals = (ZERO, 0, 1)  # a step seen, but no usage for it
        if rec is not None:
            skipped += rec.skipped
            if rec.counts is not None:
                step = (rec.counts, 1, 0)
        turn_id = k[0] if len(k) == 2 and k[0] != "@" else None
        total = plus(total, step)
        if turn_id is not None:
            by_turn[turn_id] = plus(by_turn.get(turn_id, _NONE), step)
    provider = model = None
    if fold.usage_source is not None and fold.usage_source[0] >= cut:
        _seq, provider, model = fold.usage_source
    return LaneTokens(total, by_turn, skipped, bad_chunks, provider, model)


def plus(a: Totals, b: Totals) -> Totals:
    return (add(a[0], b[0]), a[1] + b[1], a[2] + b[2])


def tokens_json(totals: Totals | None) -> dict[str, int] | None:
    """The JSON ``Tokens`` object; ``None`` when no step had any usage."""
    if totals is None or totals[1] == 0:
        return None
    (i, cr, cw, o, r), steps, without = totals
    return {
        "input": i,
        "cacheRead": cr,
        "cacheWrite": cw,
        "output": o,
        "reasoning": r,
        "steps": steps,
        "stepsWithoutUsage": without,
    }


def model_json(tokens: LaneTokens) -> dict[str, Any] | None:
    if tokens.provider is None and tokens.model is None:
        return None
    return {"provider": tokens.provider, "model": tokens.model}
