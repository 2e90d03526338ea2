"""A lane's token count carried on after an append equals the count made from scratch."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from dsh_task_gantt.events import LogEvent
from dsh_task_gantt.fold import fold_lane
from dsh_task_gantt.fold.records import LaneFold
from dsh_task_gantt.memo import clear_memos
from dsh_task_gantt.timeline import tokens

_USAGE = st.one_of(
    st.fixed_dictionaries(
        {"inputTokens": st.integers(0, 9), "outputTokens": st.integers(0, 9)},
        optional={"cacheReadTokens": st.integers(0, 9), "reasoningTokens": st.just(-1)},
    ),
    st.just("not an object"),
    st.none(),
)
#: (chunk or message, turn, step, usage): few turns and steps, so steps repeat.
_RECORD = st.tuples(
    st.sampled_from(["assistant/chunk", "assistant/message"]),
    st.sampled_from([1, 2, 3, None]),
    st.sampled_from([1, 2, 3, 4, None]),
    _USAGE,
)


def _event(seq: int, record: tuple[Any, ...]) -> LogEvent:
    etype, turn, step, usage = record
    data: dict[str, Any] = {"turn": turn, "step": step}
    if etype == "assistant/chunk":
        data["chunk"] = {"type": "usage", "usage": usage}
    elif usage is not None:
        data["usage"] = usage
    return LogEvent(etype, seq, 1_000 + seq, data, seq)


def _fresh_steps(records: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """Each chunk for a step of its own (the usual kind, which is counted on), and
    now and then one without counts (which is not)."""
    out = []
    for n, (etype, turn, _step, usage) in enumerate(records):
        if etype == "assistant/chunk":
            chunk_usage = usage if isinstance(usage, dict) or n % 7 == 6 else {"inputTokens": n}
            out.append((etype, turn or 1, 100 + n, chunk_usage))
        else:
            out.append((etype, turn, n % 3, usage))
    return out


@example(  # a lane that becomes the plain-sum kind is counted that way
    [
        ("assistant/message", 1, 1, "not an object"),
        ("assistant/chunk", 1, 1, {"inputTokens": 0, "outputTokens": 0}),
        ("assistant/chunk", 1, 1, "not an object"),
        ("assistant/message", 1, 1, "not an object"),
    ],
    [0],
    0,
    True,
)
@settings(max_examples=300, deadline=None)
@given(
    st.lists(_RECORD, max_size=30),
    st.lists(st.integers(0, 30), min_size=1, max_size=8),
    st.sampled_from([0, 0, 0, 2, 8]),
    st.booleans(),
)
def test_a_count_carried_on_equals_one_from_scratch(
    records: list[tuple[Any, ...]], splits: list[int], cut: int, usual: bool
) -> None:
    """Each version of the lane folds more events onto the last; ``usual`` makes every
    chunk its own step with counts (mostly), the kind that is carried on."""
    clear_memos()
    if usual:
        records = _fresh_steps(records)
    events = [_event(seq, record) for seq, record in enumerate(records)]
    fold: LaneFold | None = None
    done = 0
    for at in sorted({min(s, len(events)) for s in splits} | {len(events)}):
        fold = fold_lane(events[done:at], start=fold)
        done = at
        got = tokens.lane_tokens(fold, cut, lane="lane")
        want = tokens._lane_tokens(fold, cut)
        assert got == want
    clear_memos()


def test_appends_are_counted_on_not_counted_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    clear_memos()
    whole: list[int] = []
    real = tokens._lane_tokens

    def counted(fold: LaneFold, cut: int) -> Any:
        whole.append(len(fold.usage_chunks))
        return real(fold, cut)

    monkeypatch.setattr(tokens, "_lane_tokens", counted)
    fold = None
    usage = {"inputTokens": 3, "outputTokens": 4}
    for n in range(100):
        batch = [_event(2 * n, ("assistant/chunk", n // 10, n, usage))]
        batch.append(_event(2 * n + 1, ("turn/start", None, None, None)))
        fold = fold_lane(batch, start=fold)
        got = tokens.lane_tokens(fold, 0, lane="lead")
        assert got == real(fold, 0)
    assert whole == [1]
    clear_memos()


def test_a_lane_counted_record_by_record_recounts_only_the_steps_appended(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A fork's inherited chunks (before its cut) keep it off the plain-sum way: an
    append recounts the steps it touched, not every step."""
    clear_memos()
    whole: list[int] = []
    real = tokens._by_steps

    def counted(fold: LaneFold, cut: int) -> Any:
        whole.append(len(fold.usage_chunks))
        return real(fold, cut)

    monkeypatch.setattr(tokens, "_by_steps", counted)
    usage = {"inputTokens": 3, "outputTokens": 4}
    fold = fold_lane([_event(n, ("assistant/chunk", 9, n, usage)) for n in range(5)])
    for n in range(5, 100):
        records = [("assistant/chunk", n // 10, n, usage), ("assistant/message", 1, n, usage)]
        fold = fold_lane([_event(2 * n + i, r) for i, r in enumerate(records)], start=fold)
        got = tokens.lane_tokens(fold, 3, lane="fork")
        assert got == real(fold, 3)[0]
    assert whole == [6]
    clear_memos()


def test_the_carried_counts_keep_their_weight_when_filled_past_it() -> None:
    clear_memos()
    try:
        m = tokens._COUNTED
        assert m._max_weight is not None
        by_turn = {str(n): tokens._NONE for n in range(m._max_weight // 8)}
        count = tokens.LaneTokens(tokens._NONE, by_turn, 0, 0, None, None)
        for n in range(m._max_entries + 20):
            m.put(("lane", n), tokens._Counted(LaneFold(), 0, count, True))
            assert m.weight <= m._max_weight and len(m) <= m._max_entries
        assert len(m) <= 8
    finally:
        clear_memos()
