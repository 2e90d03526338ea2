"""Token use per lane, per turn and for the team (HOST §8; pure, memoised per fold).

Per step (a lane's ``turn``/``step`` pair): its ``usage`` chunk, else its assistant
message's ``usage`` — never both (the fold keeps a message only for a step without a
chunk). Several chunks (or messages) for one step: the
latest seq wins. A record without a turn or a step is a step of its own. Records
before the seed cut are the parent's (inherited), not this lane's. The counts are
disjoint (``fold.usage``), so every total is a plain sum.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import accumulate, compress, repeat
from operator import lt, ne, sub
from typing import Any

from ..fold.appends import appended
from ..fold.records import (
    PACKED_SUM_BOUND,
    LaneFold,
    UsageRec,
    counts_and_skipped,
    head_columns,
    packed_counts,
    spelled_ids,
    spelled_turns,
    step_of,
    unpacked_counts,
    without_counts,
)
from ..fold.usage import ZERO, Counts, add
from ..memo import HISTORY_ITEMS_KEPT, Memo, Same

#: Counts, steps with usage, steps without (a turn's or a lane's totals).
Totals = tuple[Counts, int, int]
_NONE: Totals = (ZERO, 0, 0)


class TurnTotals(dict[str, Totals]):
    """Each turn's totals (a plain dict that can be weakly referred to: a count
    carried on names the one it was carried from, see ``LaneTokens.since``)."""

    __slots__ = ("__weakref__",)


#: ``(the map counted on, weakly; the turns whose totals changed)``.
Since = tuple[Callable[[], Mapping[str, Totals] | None], frozenset[str]]


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
    #: ``(base, turn ids)``: ``by_turn`` is ``base()`` (the lane's count before, counted
    #: on by an append; weakly held, so a count keeps no older map alive) but at these
    #: turns, so a reader that used that map reads these again, not every turn
    #: (``None``: counted whole). Not part of the count.
    since: Since | None = field(default=None, compare=False, repr=False)


#: By fold identity. Its key holds the fold, and a lead's fold is its whole history:
#: after an append the old one is never asked for again, so each lane keeps its last
#: version only (bounded by lanes, not by appends; a second version held the fold
#: before the append, and with it that fold's copies of the maps the append changed).
_LANE_TOKENS: Memo[tuple[Same[LaneFold], int], LaneTokens] = Memo(256, per_slot=1)


def lane_tokens(
    fold: LaneFold, cut: int = 0, lane: Hashable | None = None, owner: str | None = None
) -> LaneTokens:
    """The lane's token use from ``cut`` on (memoised: a fold never changes). ``lane``:
    which lane the fold is (see ``_LANE_TOKENS``; a fold that only grew by appended
    usage records is counted on from the lane's last one); ``owner``: its session (see
    ``memo.forget_owners``)."""
    key = (Same(fold), cut)
    hit = _LANE_TOKENS.get(key)
    if hit is not None:
        return hit
    held = _COUNTED.get(lane) if lane is not None else None
    counted = None
    if held is not None and held.cut == cut:
        if held.summed:
            summed_on = _counted_on(held, fold, cut)
            if summed_on is not None:
                counted = _Counted(fold, cut, summed_on, True)
        elif held.latest is not None and not _summed(fold, cut):
            # (A fold that became the plain-sum kind is counted that way, which reads
            # a step's every message: what the whole pass gives is what counts.)
            counted = _stepped_on(held, fold, cut)
    if counted is None:
        if _summed(fold, cut):
            counted = _Counted(fold, cut, _lane_tokens(fold, cut), True)
        else:
            tokens, latest = _by_steps(fold, cut)
            counted = _Counted(fold, cut, tokens, False, latest)
    if lane is not None:
        _COUNTED.put(lane, counted, owner=owner)
    # A slot per lane and cut: a lane seen from two cuts keeps each one's count.
    slot = (lane, cut) if lane is not None else None
    return _LANE_TOKENS.put(key, counted.tokens, slot=slot, owner=owner)


@dataclass(frozen=True, slots=True)
class _Counted:
    fold: LaneFold
    cut: int
    tokens: LaneTokens
    #: Counted by plain sums (``_bulk_chunk_totals``), so an append can be added on.
    summed: bool
    #: Else each step's latest chunk and message (by step key, with its seq), so an
    #: append recounts the steps it touched.
    latest: tuple[_Latest, _Latest] | None = None


def _weight(held: _Counted) -> int:
    steps = len(held.latest[0]) + len(held.latest[1]) if held.latest is not None else 0
    return len(held.tokens.by_turn) + steps + 1


#: Each lane's last count, by lane: the next append counts on from it. One entry per
#: lane (its last version), bounded by lanes and by the turns and steps they hold,
#: sized for the kept teams' days (a big team's day is ~66k turns: a smaller bound
#: evicts its lanes, and each append then recounts a lane's whole history).
_COUNTED: Memo[Hashable, _Counted] = Memo(256, max_weight=HISTORY_ITEMS_KEPT, weight=_weight)


def _summed(fold: LaneFold, cut: int) -> bool:
    """Whether ``_lane_tokens`` counts ``fold`` by plain sums (the bulk way); the cheap
    tests first (a fork's lane fails the first two at once)."""
    chunks = fold.usage_chunks
    return bool(
        chunks
        and len(fold.usage_chunk_steps) == len(chunks)
        and not (cut and min(chunks) < cut)
        and not without_counts(chunks.values())
    )


def _counted_on(held: _Counted, fold: LaneFold, cut: int) -> LaneTokens | None:
    """``held``'s count plus the usage records ``fold`` appended to its fold, when it
    is still counted by plain sums and nothing was dropped or replaced (a message whose
    step got a chunk is dropped); ``None``: count the fold whole. Sums of integers, so
    the order they are added in changes nothing."""
    old, was = held.fold, held.tokens
    if held.cut != cut:
        return None
    chunks = appended(old.usage_chunks, fold.usage_chunks)
    messages = appended(old.usage_messages, fold.usage_messages)
    if chunks is None or messages is None:
        return None
    if len(fold.usage_chunk_steps) != len(fold.usage_chunks):
        return None  # not one chunk per step: the record by record way
    if not chunks and not messages and _source(fold, cut) == (was.provider, was.model):
        return was  # the very same count: what is memoised by its identity holds
    by_turn = TurnTotals(was.by_turn)
    touched: set[str] = set()
    total, skipped = was.total, was.skipped
    for seq, rec in chunks:
        turn_id, step_id, _time, counts, rec_skipped, _p, _m = rec.fields()
        if seq < cut or counts is None or not turn_id or step_id is None:
            return None  # not the plain-sum kind: see _summed
        step: Totals = (counts, 1, 0)
        by_turn[turn_id] = plus(by_turn.get(turn_id, _NONE), step)
        touched.add(turn_id)
        total = plus(total, step)
        skipped += rec_skipped
    for seq, rec in messages:
        if seq < cut:
            continue
        turn_id, step_id, _time, counts, rec_skipped, _p, _m = rec.fields()
        skipped += rec_skipped
        step = (counts, 1, 0) if counts is not None else (ZERO, 0, 1)
        if turn_id is not None and step_id is not None:
            if not turn_id:
                return None  # "" is the loose steps' key in _with_messages
            by_turn[turn_id] = plus(by_turn.get(turn_id, _NONE), step)
            touched.add(turn_id)
        total = plus(total, step)
    provider, model = _source(fold, cut)
    since = _since(was.by_turn, touched)
    return LaneTokens(total, by_turn, skipped, 0, provider, model, since)


def _since(base: Mapping[str, Totals], touched: set[str]) -> Since | None:
    """What a count carried on from ``base`` says of it (``None``: ``base`` cannot be
    weakly referred to, e.g. a plain dict handed in)."""
    try:
        return (weakref.ref(base), frozenset(touched))
    except TypeError:
        return None


def _step_key(seq: int, rec: UsageRec) -> tuple[str, ...]:
    step = step_of(rec)  # the ids read at once, not one property each
    return ("@", str(seq)) if step is None else step


_Latest = dict[tuple[str, ...], tuple[int, UsageRec]]


def _latest(records: Mapping[int, UsageRec], cut: int) -> _Latest:
    """Each step's record with the highest seq (at or after ``cut``), with its seq."""
    best: _Latest = {}
    _keep_latest(best, records.items(), cut)
    return best


def _keep_latest(
    best: _Latest, records: Iterable[tuple[int, UsageRec]], cut: int
) -> set[tuple[str, ...]]:
    """``best`` with each of ``records`` (at or after ``cut``) that is its step's latest;
    returns the steps whose record changed."""
    touched: set[tuple[str, ...]] = set()
    for seq, rec in records:
        if seq < cut:
            continue
        k = _step_key(seq, rec)
        held = best.get(k)
        if held is None or seq > held[0]:
            best[k] = (seq, rec)
            touched.add(k)
    return touched


def _step(
    chunk: tuple[int, UsageRec] | None, message: tuple[int, UsageRec] | None
) -> tuple[Totals, int, int]:
    """One step's totals, skipped values and bad chunks (0 or 1), from its latest chunk
    and message: the chunk's counts, else the message's."""
    skipped = bad = 0
    step: Totals = (ZERO, 0, 1)  # a step seen, but no usage for it
    if chunk is not None:
        counts, chunk_skipped = counts_and_skipped(chunk[1])
        if counts is not None:
            return (counts, 1, 0), chunk_skipped, 0
        bad = 1
        skipped += chunk_skipped
    if message is not None:
        counts, message_skipped = counts_and_skipped(message[1])
        skipped += message_skipped
        if counts is not None:
            step = (counts, 1, 0)
    return step, skipped, bad


def _step_turn(k: tuple[str, ...]) -> str | None:
    return k[0] if len(k) == 2 and k[0] != "@" else None


def _by_steps(fold: LaneFold, cut: int) -> tuple[LaneTokens, tuple[_Latest, _Latest]]:
    """The record by record count, and each step's latest records it was made from."""
    chunks = _latest(fold.usage_chunks, cut)
    messages = _latest(fold.usage_messages, cut)
    by_turn: dict[str, Totals] = TurnTotals()
    total = _NONE
    skipped = bad_chunks = 0
    for k in chunks.keys() | messages.keys():
        step, step_skipped, bad = _step(chunks.get(k), messages.get(k))
        skipped += step_skipped
        bad_chunks += bad
        turn_id = _step_turn(k)
        total = plus(total, step)
        if turn_id is not None:
            by_turn[turn_id] = plus(by_turn.get(turn_id, _NONE), step)
    provider, model = _source(fold, cut)
    return LaneTokens(total, by_turn, skipped, bad_chunks, provider, model), (chunks, messages)


def _source(fold: LaneFold, cut: int) -> tuple[str | None, str | None]:
    if fold.usage_source is not None and fold.usage_source[0] >= cut:
        return fold.usage_source[1], fold.usage_source[2]
    return None, None


def _stepped_on(held: _Counted, fold: LaneFold, cut: int) -> _Counted | None:
    """``held``'s record by record count with the steps ``fold`` appended records for
    counted again (their old totals out, their new ones in: sums of integers, so
    exact); ``None`` when records were dropped or replaced (count the fold whole)."""
    assert held.latest is not None
    old_chunks, old_messages = held.latest
    new_chunks = appended(held.fold.usage_chunks, fold.usage_chunks)
    new_messages = appended(held.fold.usage_messages, fold.usage_messages)
    if new_chunks is None or new_messages is None:
        return None
    if not new_chunks and not new_messages:
        tokens = held.tokens  # the very same count, unless the model changed
        provider, model = _source(fold, cut)
        if (provider, model) != (tokens.provider, tokens.model):
            tokens = replace(tokens, provider=provider, model=model)
        return _Counted(fold, cut, tokens, False, held.latest)
    chunks, messages = dict(old_chunks), dict(old_messages)
    touched = _keep_latest(chunks, new_chunks, cut) | _keep_latest(messages, new_messages, cut)
    t = held.tokens
    by_turn = TurnTotals(t.by_turn)
    turns: set[str] = set()
    total, skipped, bad_chunks = t.total, t.skipped, t.bad_chunks
    for k in touched:
        turn_id = _step_turn(k)
        if k in old_chunks or k in old_messages:
            step, step_skipped, bad = _step(old_chunks.get(k), old_messages.get(k))
            total = minus(total, step)
            skipped -= step_skipped
            bad_chunks -= bad
            if turn_id is not None:
                by_turn[turn_id] = minus(by_turn[turn_id], step)
        step, step_skipped, bad = _step(chunks.get(k), messages.get(k))
        total = plus(total, step)
        skipped += step_skipped
        bad_chunks += bad
        if turn_id is not None:
            by_turn[turn_id] = plus(by_turn.get(turn_id, _NONE), step)
            turns.add(turn_id)
    provider, model = _source(fold, cut)
    since = _since(t.by_turn, turns)
    tokens = LaneTokens(total, by_turn, skipped, bad_chunks, provider, model, since)
    return _Counted(fold, cut, tokens, False, (chunks, messages))


def _bulk_chunk_totals(fold: LaneFold, cut: int) -> tuple[dict[str, Totals], int] | None:
    """Each turn's totals from its chunks in C-level passes, and their skipped values,
    when every chunk is the usual kind (after the cut, its own step, counts read): a
    poll after an append recounts the lanes that grew, and a lead has thousands of
    steps. ``None``: the record by record way below. The records are read as columns
    (``records.head_columns``) and grouped by their turn ids' bytes: no record is
    decoded, each turn's id once."""
    chunks = fold.usage_chunks
    if not chunks or (cut and min(chunks) < cut):
        return None
    recs = list(chunks.values())
    if len(fold.usage_chunk_steps) != len(recs):
        return None
    _t, i, cr, cw, o, r, skipped, turn_lengths, step_lengths = head_columns(recs)
    if min(i) < 0 or min(step_lengths) < 0:
        return None
    if min(turn_lengths) < 0:  # a chunk without a turn: the record by record way
        return None
    return _turn_sums(recs, spelled_turns(recs, turn_lengths), (i, cr, cw, o, r)), sum(skipped)


def _turn_sums(
    recs: list[UsageRec], turns: list[bytes], columns: tuple[Sequence[int], ...]
) -> dict[str, Totals]:
    """Each turn's totals (in the order of its id, as sorting by ``turn_id`` gave) from
    the records (all with counts), each one's turn id (as spelled) and their five count
    columns: sums of runs, in C (no object made a record but the running sums)."""
    size = len(turns)
    starts = [0, *compress(range(1, size), map(ne, turns[1:], turns))]
    if len(starts) != len(set(turns)):  # a turn's records not all in one run: sort them
        order = sorted(range(size), key=turns.__getitem__)
        turns, recs = list(map(turns.__getitem__, order)), list(map(recs.__getitem__, order))
        columns = tuple([list(map(column.__getitem__, order)) for column in columns])
        starts = [0, *compress(range(1, size), map(ne, turns[1:], turns))]
    ends = [*starts[1:], size]
    steps = list(map(sub, ends, starts))
    sums: Iterable[tuple[int, ...]]
    if max(map(max, columns)) * max(steps) < PACKED_SUM_BOUND:  # (any real log's)
        ran = list(accumulate(packed_counts(recs), initial=0))
        sums = unpacked_counts(map(sub, map(ran.__getitem__, ends), map(ran.__getitem__, starts)))
    else:
        each = []
        for column in columns:
            ran = list(accumulate(column, initial=0))
            each.append(map(sub, map(ran.__getitem__, ends), map(ran.__getitem__, starts)))
        sums = zip(*each, strict=True)
    rows: Iterable[Totals] = zip(sums, steps, repeat(0))  # type: ignore[arg-type]
    spelled = list(map(turns.__getitem__, starts))
    if not all(map(lt, spelled, spelled[1:])):  # the turns in the order of their ids
        # (Summed in the records' order first: read in order, the sums are cheaper.)
        by_id = sorted(range(len(spelled)), key=spelled.__getitem__)
        spelled, rows = list(map(spelled.__getitem__, by_id)), map(list(rows).__getitem__, by_id)
    return TurnTotals(zip(spelled_ids(spelled), rows, strict=True))


def _lane_tokens(fold: LaneFold, cut: int) -> LaneTokens:
    by_chunks = _bulk_chunk_totals(fold, cut)
    if by_chunks is not None:
        return _with_messages(fold, cut, *by_chunks)
    return _by_steps(fold, cut)[0]


def _with_messages(
    fold: LaneFold, cut: int, by_turn: dict[str, Totals], skipped: int
) -> LaneTokens:
    """The chunks' totals (and skipped values) plus the messages (only steps without a
    chunk are kept)."""
    for seq, rec in fold.usage_messages.items():
        if seq < cut:
            continue
        turn_id, step_id, _time, counts, rec_skipped, _p, _m = rec.fields()
        skipped += rec_skipped
        step: Totals = (counts, 1, 0) if counts is not None else (ZERO, 0, 1)
        if turn_id is not None and step_id is not None:
            by_turn[turn_id] = plus(by_turn.get(turn_id, _NONE), step)
        else:
            by_turn.setdefault("", _NONE)  # a step of its own: in the lane's total only
            by_turn[""] = plus(by_turn[""], step)
    loose = by_turn.pop("", None)
    total = _NONE
    for totals in by_turn.values():
        total = plus(total, totals)
    if loose is not None:
        total = plus(total, loose)
    provider = model = None
    if fold.usage_source is not None and fold.usage_source[0] >= cut:
        _seq, provider, model = fold.usage_source
    return LaneTokens(total, by_turn, skipped, 0, provider, model)


def plus(a: Totals, b: Totals) -> Totals:
    return (add(a[0], b[0]), a[1] + b[1], a[2] + b[2])


def minus(a: Totals, b: Totals) -> Totals:
    (ai, acr, acw, ao, ar), (bi, bcr, bcw, bo, br) = a[0], b[0]
    return ((ai - bi, acr - bcr, acw - bcw, ao - bo, ar - br), a[1] - b[1], a[2] - b[2])


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
