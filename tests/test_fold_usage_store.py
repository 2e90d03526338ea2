"""How a fold keeps each model step's token use: one bytes object a step.

A lead's log has a usage record per model step (tens of thousands a day, ~2.5 an
append), kept for the whole run. Each record is one bytes object (its seven numbers,
time, five counts and skipped values, packed; then its turn and step ids), and it
reads as the named tuple it replaced: same fields, same ``repr`` (a collision on one
seq keeps the smallest), same equality, and the lane cache round-trips it.
"""

from __future__ import annotations

import gc
import pickle
import sys
import tracemalloc
from typing import Any, NamedTuple

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from dsh_task_gantt.events import LogEvent
from dsh_task_gantt.fold import fold_lane
from dsh_task_gantt.fold.records import LaneFold, UsageRec
from dsh_task_gantt.fold.usage import read_usage
from dsh_task_gantt.lane_cache import codec
from dsh_task_gantt.memo import clear_memos
from dsh_task_gantt.timeline import tokens

T0 = 1_791_648_700_000


class _NamedUsageRec(NamedTuple):
    """The record as it was (a named tuple): what the packed one must read as."""

    turn_id: str | None
    step_id: str | None
    time: int | None
    counts: tuple[int, int, int, int, int] | None
    skipped: int = 0
    provider: str | None = None
    model: str | None = None


_SAFE = st.integers(0, 2**53 - 1)
_COUNTS = st.one_of(st.none(), st.tuples(_SAFE, _SAFE, _SAFE, _SAFE, _SAFE))
_ID = st.one_of(st.none(), st.text(max_size=4), st.just("\ud800"))


@settings(max_examples=300, deadline=None)
@given(_ID, _ID, st.one_of(st.none(), _SAFE), _COUNTS, st.integers(0, 5))
def test_a_packed_record_reads_as_the_named_tuple_did(
    turn: str | None, step: str | None, time: int | None, counts: Any, skipped: int
) -> None:
    rec = UsageRec(turn, step, time, counts, skipped)
    was = _NamedUsageRec(turn, step, time, counts, skipped)
    assert (rec.turn_id, rec.step_id, rec.time, rec.counts, rec.skipped) == was[:5]
    assert rec.provider is None and rec.model is None
    assert rec.fields() == tuple(was)
    assert repr(rec) == repr(was).replace("_NamedUsageRec", "UsageRec")
    assert pickle.loads(pickle.dumps(rec, protocol=pickle.HIGHEST_PROTOCOL)) == rec


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(_ID, _ID, st.one_of(st.none(), _SAFE), _COUNTS, st.integers(0, 5)),
        min_size=2,
        max_size=2,
    )
)
def test_records_are_equal_and_ordered_by_repr_exactly_when_the_named_tuples_are(
    pair: list[tuple[Any, ...]],
) -> None:
    (a, b), (was_a, was_b) = ([UsageRec(*r) for r in pair], [_NamedUsageRec(*r) for r in pair])
    assert (a == b) == (was_a == was_b)
    assert len({a, b}) == (1 if was_a == was_b else 2)  # as set and dict keys too
    assert (repr(a) < repr(b)) == (
        repr(was_a).replace("_Named", "") < repr(was_b).replace("_Named", "")
    )


def _chunk(seq: int, turn: Any, step: Any, usage: Any, at: int | None = 0) -> LogEvent:
    data = {"turn": turn, "step": step, "chunk": {"type": "usage", "usage": usage}}
    return LogEvent("assistant/chunk", seq, None if at is None else T0 + at, data, seq)


def _message(seq: int, turn: Any, step: Any, usage: Any) -> LogEvent:
    return LogEvent(
        "assistant/message", seq, T0 + seq, {"turn": turn, "step": step, "usage": usage}, seq
    )


_USAGE = st.one_of(
    st.none(),
    st.just("not an object"),
    st.dictionaries(
        st.sampled_from(["inputTokens", "cacheReadTokens", "outputTokens", "reasoningTokens"]),
        st.one_of(st.integers(0, 10**12), st.sampled_from([-1, 1.5, "7", 2**70])),
        max_size=4,
    ),
)
#: (seq, chunk or message, turn, step, usage, time): few seqs, so some repeat (a record
#: replaced at an old seq), few turns and steps.
_ROW = st.tuples(
    st.integers(0, 12),
    st.booleans(),
    st.sampled_from([1, 2, None]),
    st.sampled_from([1, 2, 3, None]),
    _USAGE,
    st.one_of(st.none(), st.integers(0, 50)),
)


def _events(rows: list[tuple[Any, ...]]) -> list[LogEvent]:
    """Chunks at the drawn seqs (some repeat); each message at a seq of its own (two
    messages on one seq whose steps a chunk counts fold by order: not what is tested)."""
    return [
        _chunk(seq, turn, step, usage, at) if is_chunk else _message(100 + n, turn, step, usage)
        for n, (seq, is_chunk, turn, step, usage, at) in enumerate(rows)
    ]


def _key(value: Any) -> str | None:
    return None if value is None else str(value)


def _expected_chunks(rows: list[tuple[Any, ...]]) -> dict[int, tuple[Any, ...]]:
    """Each seq's chunk as the named-tuple fold kept it: one per seq, the smallest
    ``repr`` on a collision, whatever the order."""
    best: dict[int, _NamedUsageRec] = {}
    for seq, is_chunk, turn, step, usage, at in rows:
        if not is_chunk:
            continue
        counts, skipped = read_usage(usage)
        rec = _NamedUsageRec(
            _key(turn), _key(step), None if at is None else T0 + at, counts, skipped
        )
        held = best.get(seq)
        if held is None or repr(rec) < repr(held):
            best[seq] = rec
    return {seq: tuple(rec) for seq, rec in best.items()}


@settings(max_examples=200, deadline=None)
@given(st.lists(_ROW, max_size=24), st.data())
def test_the_fold_keeps_what_it_kept_in_any_order_split_and_with_records_replaced(
    rows: list[tuple[Any, ...]], data: st.DataObject
) -> None:
    """Order of input, duplicates, a record replaced at an old seq in a later append:
    the same records (as the named tuples were), the same fold, the same count (carried
    on from append to append or counted whole)."""
    events = _events(rows)
    whole = fold_lane(events)
    assert {s: r.fields() for s, r in whole.usage_chunks.items()} == _expected_chunks(rows)
    perm = data.draw(st.permutations(events))
    splits = sorted(data.draw(st.lists(st.integers(0, len(perm)), max_size=4)))
    clear_memos()
    fold: LaneFold | None = None
    done = 0
    for at in [*splits, len(perm)]:
        fold = fold_lane(perm[done:at], start=fold)
        done = at
        assert tokens.lane_tokens(fold, 0, lane="lane") == tokens._lane_tokens(fold, 0)
    assert fold == whole
    assert tokens.lane_tokens(fold, 0, lane="lane") == tokens._lane_tokens(whole, 0)
    clear_memos()


def test_a_cached_fold_round_trips_its_usage_records() -> None:
    usage = {"inputTokens": 12, "cacheReadTokens": 40_000, "outputTokens": 900}
    events = [_chunk(2 * n, n // 3, n, usage, n) for n in range(20)]
    events += [_message(2 * n + 1, 99, n, None if n % 2 else usage) for n in range(5)]
    fold = fold_lane(events)
    meta = {"format": "test"}
    got = codec.decode(codec.encode(meta, fold), meta)
    assert got is not None
    assert got[1] == fold
    assert type(next(iter(got[1].usage_chunks.values()))) is UsageRec  # type: ignore[attr-defined]


def test_a_chunk_without_a_turn_beside_two_steps_on_one_seq_is_counted_not_raised() -> None:
    """A hostile log: two chunks on one seq for two steps (the fold keeps one record and
    both steps) and a chunk with no turn id. The count is the record by record one; it
    raised a ``TypeError`` sorting ``None`` among turn ids."""
    usage = {"input_tokens": 3, "output_tokens": 2, "inputTokens": 3, "outputTokens": 2}
    events = [_chunk(5, "1", "1", usage), _chunk(5, "1", "2", usage), _chunk(6, None, "1", usage)]
    fold = fold_lane(events)
    clear_memos()
    # The bulk count declines such a lane (the branch this test is for); the count is
    # the fold's two records (seq 5, kept once for its two steps, and seq 6), 3 input and
    # 2 output tokens each, over the two steps with a record; turn "1" holds the one on
    # seq 5 (the turnless chunk counts for the lane, not for a turn).
    assert tokens._bulk_chunk_totals(fold, 0) is None
    counted = tokens.lane_tokens(fold, 0, lane="lane")
    assert counted.total == ((6, 0, 0, 4, 0), 2, 0)
    assert dict(counted.by_turn) == {"1": ((3, 0, 0, 2, 0), 1, 0)}
    assert counted.total[1] == len(fold.usage_chunk_steps)
    clear_memos()


def test_a_lane_cache_of_another_format_is_refused_cleanly() -> None:
    """Entries name their format (``codec.FORMAT``, bumped for the packed records) and
    their code: one of the named-tuple shape is refused, never decoded into a fold."""
    data = codec.encode({"format": codec.format_key("old")}, {"anything": 1})
    assert codec.decode(data, {"format": codec.format_key("new")}) is None
    assert codec.decode(data[:-3], {"format": codec.format_key("old")}) is None


def test_a_record_pickled_in_the_named_tuple_shape_reads_as_the_same_record() -> None:
    """An entry written before the packed records holds each as the named tuple
    pickled it (``NEWOBJ`` of ``UsageRec`` with its seven fields): it reads as the same
    record (entries of another format are refused before that, see above)."""
    fields = ("4", "1", T0, (5, 90_000, 0, 700, 30), 1, None, None)
    args = pickle.dumps(fields, protocol=2)[2:-1]
    payload = b"\x80\x02cdsh_task_gantt.fold.records\nUsageRec\n" + args + pickle.NEWOBJ + b"."
    meta = {"format": "test"}
    data = codec.encode(meta, None)
    head = data[: data.index(b"\n", len(codec.MAGIC)) + 1]
    entry = orjson.loads(head[len(codec.MAGIC) :])
    entry.update(digest=codec._digest(payload), bytes=len(payload))
    got = codec.decode(codec.MAGIC + orjson.dumps(entry) + b"\n" + payload, meta)
    assert got is not None
    rec = got[1]
    assert type(rec) is UsageRec and rec.fields() == fields


def _usage_lines(steps: int) -> list[bytes]:
    """A lead's usage chunks as DSH writes them (big counts, distinct times)."""
    lines = []
    for n in range(steps):
        usage = {
            "inputTokens": 1_000 + n,
            "cacheReadTokens": 90_000 + n,
            "cacheWriteTokens": 500 + n,
            "outputTokens": 700 + n,
            "reasoningTokens": 300 + n,
        }
        data = {"turn": str(n // 4), "step": str(n % 4), "chunk": {"type": "usage", "usage": usage}}
        lines.append(orjson.dumps({"seq": 1_000 + n, "time": T0 + 997 * n, "data": data}))
    return lines


def test_a_step_keeps_few_objects_and_few_bytes() -> None:
    """What a fold holds per model step, counted with tracemalloc (the events parsed
    and dropped inside the count, as a reader's are): the record (one bytes object),
    its seq key and its step's entry. As a named tuple it was 527 B (291 B as one bytes object)
    (the tuple, its counts tuple and six integers besides)."""
    steps = 2_000
    lines = _usage_lines(steps)
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.take_snapshot()
        events = []
        for line in lines:
            row = orjson.loads(line)
            events.append(LogEvent("assistant/chunk", row["seq"], row["time"], row["data"], 0))
        fold = fold_lane(events)
        del events, row
        gc.collect()
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    diff = after.compare_to(before, "filename")
    size = sum(d.size_diff for d in diff)
    blocks = sum(d.count_diff for d in diff)
    assert len(fold.usage_chunks) == steps
    assert size / steps < 320, f"{size / steps:.0f} B a step"
    assert blocks / steps < 4.5, f"{blocks / steps:.1f} blocks a step"
    for rec in fold.usage_chunks.values():
        assert gc.get_referents(rec) == [UsageRec]  # one object: nothing but its class


#: (turn, step, counts): turns out of order and split in runs, ids with non-ASCII and
#: lone surrogates (their bytes order as the strings do), counts up to the safe bound.
_BULK_ROW = st.tuples(
    st.sampled_from(["1", "10", "2", "é", "\ud800", "\ue000", "z"]),
    st.sampled_from(["1", "2", "3", "4"]),
    st.tuples(_SAFE, _SAFE, _SAFE, _SAFE, _SAFE),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(_BULK_ROW, min_size=1, max_size=30), st.booleans())
def test_the_bulk_count_reads_records_once_and_counts_as_record_by_record(
    rows: list[tuple[Any, ...]], wide: bool
) -> None:
    """The plain-sum count reads the records as columns and groups them by their turn
    ids' bytes (sums of packed counts, or of each count when they could overflow): the
    same turns, in the same order, and the same totals as the record by record count."""
    events = [
        _chunk(n, turn, step, dict(zip(_KEYS, counts, strict=True)), n)
        for n, (turn, step, counts) in enumerate(rows)
    ]
    fold = fold_lane(events)
    if len(fold.usage_chunk_steps) != len(fold.usage_chunks):
        return  # a step twice: not the plain-sum kind
    bound = tokens.PACKED_SUM_BOUND
    try:
        if wide:  # the sums that could overflow a packed count: each count summed
            tokens.PACKED_SUM_BOUND = 0  # type: ignore[misc]
        by_chunks = tokens._bulk_chunk_totals(fold, 0)
    finally:
        tokens.PACKED_SUM_BOUND = bound  # type: ignore[misc]
    assert by_chunks is not None
    by_turn, skipped = by_chunks
    slow = tokens._by_steps(fold, 0)[0]
    assert list(by_turn) == sorted(slow.by_turn)
    assert by_turn == slow.by_turn and skipped == slow.skipped == 0
    assert all(type(t) is str and t is sys.intern(t) for t in by_turn)


_KEYS = ("inputTokens", "cacheReadTokens", "cacheWriteTokens", "outputTokens", "reasoningTokens")
