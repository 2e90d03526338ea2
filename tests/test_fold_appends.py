"""What an append added to a fold's seq-keyed map: found, or refused when it is no append;
the same whether the fold's lines find it or the passes over both maps do."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from itertools import pairwise

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dsh_task_gantt.events import EventRun, LogEvent
from dsh_task_gantt.fold import LaneFold, fold_lane
from dsh_task_gantt.fold.appends import appended, appended_seqs, scanned_appended_seqs
from tests.kit.foldkit import T0


def test_records_added_at_higher_seqs_are_the_append() -> None:
    old = {1: "a", 4: "b"}
    new = {**old, 7: "c", 9: "d"}
    assert appended_seqs(old, new) == [7, 9]
    assert appended(old, new) == [(7, "c"), (9, "d")]
    assert appended(old, old) == []


def test_a_changed_dropped_or_earlier_record_is_no_append() -> None:
    old = {1: "a", 4: "b"}
    assert appended_seqs(old, {1: "a", 4: "B", 7: "c"}) is None  # a record changed
    assert appended_seqs(old, {1: "a"}) is None  # one dropped
    assert appended_seqs(old, {**old, 3: "c"}) is None  # below the last seq


def test_a_given_top_bounds_the_new_seqs_instead_of_the_maps_own() -> None:
    assert appended_seqs({1: "a"}, {1: "a", 5: "b"}, top=6) is None
    assert appended_seqs({1: "a"}, {1: "a", 5: "b"}, top=4) == [5]


# A log folded in random splits: the fold records which of its start's seqs it replaced
# or removed, so what each version added is found without a pass over the history.
# It must be what the passes over both maps find, between any two versions, whatever
# the events replaced (a record at an old seq, a later chunk for a step) or removed
# (the messages of a step whose chunk came later).

_MAP_FIELDS = [f.name for f in fields(LaneFold) if isinstance(getattr(LaneFold(), f.name), Mapping)]


@st.composite
def _event(draw: st.DrawFn) -> LogEvent:
    seq = draw(st.integers(0, 40))
    time = draw(st.none() | st.integers(T0, T0 + 99))
    turn = draw(st.sampled_from(["1", "2", "3", None]))
    step = draw(st.integers(0, 3))
    usage = draw(st.none() | st.fixed_dictionaries({"inputTokens": st.integers(0, 9)}))
    kind = draw(st.integers(0, 7))
    if kind == 0:
        return LogEvent("turn/start", seq, time, {"turn": turn}, seq)
    if kind == 1:
        reason = draw(st.sampled_from(["completed", "aborted"]))
        return LogEvent("turn/end", seq, time, {"turn": turn, "reason": reason}, seq)
    if kind == 2:
        inherited = draw(st.booleans())
        return LogEvent("session/end-seed", seq, time, {"inherited": inherited}, seq)
    if kind == 3:
        chunk = {"type": "usage", "usage": usage or {"outputTokens": 1}}
        return LogEvent(
            "assistant/chunk", seq, time, {"turn": turn, "step": step, "chunk": chunk}, seq
        )
    if kind == 4:
        data = {"turn": turn, "step": step, "usage": usage, "message": {}}
        return LogEvent("assistant/message", seq, time, data, seq)
    if kind == 5:
        message = {"id": draw(st.sampled_from(["a", "b", "c"])), "content": "x", "senderId": "m"}
        return LogEvent("team/message/queued", seq, time, {"message": message}, seq)
    if kind == 6:
        data = {"messageId": draw(st.sampled_from(["a", "b", "c"])), "targetId": "m"}
        return LogEvent("team/message/delivered", seq, time, data, seq)
    return LogEvent("step/start", seq, time, None, seq)


def _batch(events: list[LogEvent], as_run: bool) -> list[LogEvent | EventRun]:
    """The events, or (``as_run``) their usage rows as a reader's run of batches."""
    usage = [e for e in events if e.type in ("assistant/chunk", "assistant/message")]
    if (
        not as_run
        or not usage
        or len({e.seq for e in usage}) != len(usage)
        or any(e.time is None for e in usage)
    ):
        return list(events)
    batches = []
    for kind in ("assistant/chunk", "assistant/message"):
        rows = [e for e in usage if e.type == kind]
        if not rows:
            continue
        seqs = tuple(e.seq for e in rows)
        times = tuple(e.time for e in rows)
        turns = tuple(e.data["turn"] for e in rows)
        steps = tuple(e.data["step"] for e in rows)
        if kind == "assistant/chunk":
            usages = tuple(e.data["chunk"]["usage"] for e in rows)
            batches.append((kind, seqs, times, turns, steps, usages, None))
        else:
            usages = tuple(e.data["usage"] for e in rows)
            batches.append((kind, seqs, times, turns, steps, usages, tuple({} for _ in rows)))
    seqs = tuple(e.seq for e in usage)
    run = EventRun(len(usage), seqs, max(e.time for e in usage), (), tuple(batches))
    rest: list[LogEvent | EventRun] = [e for e in events if e not in usage]
    return [*rest, run]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_event(), max_size=40), st.data())
def test_what_a_fold_added_is_what_the_passes_over_both_maps_find(
    events: list[LogEvent], data: st.DataObject
) -> None:
    cuts = sorted(data.draw(st.lists(st.integers(0, len(events)), max_size=6)))
    bounds = [0, *cuts, len(events)]
    versions = [fold_lane([])]
    for a, b in pairwise(bounds):
        start = versions[-1]
        before = repr(start)
        runs = _batch(events[a:b], data.draw(st.booleans()))
        versions.append(fold_lane(runs, start=start))
        assert repr(start) == before  # the start is not mutated
        # The incremental fold is the fold of the whole prefix.
        assert versions[-1] == fold_lane(events[:b])
    # A fork: another batch folded onto one version (its maps start a line of their own).
    at = data.draw(st.integers(0, len(versions) - 1))
    versions.append(fold_lane(data.draw(st.lists(_event(), max_size=5)), start=versions[at]))
    pairs = [(i, j) for i in range(len(versions)) for j in range(len(versions))]
    for i, j in data.draw(st.permutations(pairs)):
        for name in _MAP_FIELDS:
            old, new = getattr(versions[i], name), getattr(versions[j], name)
            if name == "usage_chunk_steps":
                continue  # keyed by step, not seq
            assert appended_seqs(old, new) == scanned_appended_seqs(old, new), (i, j, name)
            top = data.draw(st.integers(-1, 42))
            assert appended_seqs(old, new, top) == scanned_appended_seqs(old, new, top)
            assert appended(old, new) == (
                None
                if (seqs := scanned_appended_seqs(old, new)) is None
                else [(s, new[s]) for s in seqs]
            )


def test_a_map_an_append_left_alone_is_shared_and_added_nothing() -> None:
    first = fold_lane([LogEvent("turn/start", 1, T0, {"turn": "1"}, 0)])
    second = fold_lane([LogEvent("step/start", 2, T0, None, 1)], start=first)
    assert second.turn_starts is first.turn_starts
    assert appended_seqs(first.turn_starts, second.turn_starts) == []


def test_a_map_an_append_only_looked_at_is_shared() -> None:
    # A message looks its step up among the chunks' steps, and a chunk looks for its
    # step's messages: neither copies a map it does not change (after a day, each copy
    # is tens of thousands of entries, on every append).
    def chunk(seq: int, step: int) -> LogEvent:
        data = {"turn": "1", "step": step, "chunk": {"type": "usage", "usage": {"inputTokens": 1}}}
        return LogEvent("assistant/chunk", seq, T0, data, seq)

    def message(seq: int, step: int) -> LogEvent:
        data = {"turn": "1", "step": step, "usage": {"inputTokens": 1}, "message": {}}
        return LogEvent("assistant/message", seq, T0, data, seq)

    first = fold_lane([chunk(1, 0), message(2, 1)])
    second = fold_lane([message(3, 2)], start=first)
    assert second.usage_chunk_steps is first.usage_chunk_steps
    assert list(second.usage_messages) == [2, 3]
    third = fold_lane([chunk(4, 3)], start=second)
    assert third.usage_messages is second.usage_messages  # no message of step 3 to drop
    fourth = fold_lane([chunk(5, 2)], start=third)
    assert list(fourth.usage_messages) == [2]  # step 2's message goes: now copied
    assert list(third.usage_messages) == [2, 3]
    assert fourth == fold_lane(
        [chunk(1, 0), message(2, 1), message(3, 2), chunk(4, 3), chunk(5, 2)]
    )


def test_a_record_replaced_or_removed_at_an_old_seq_is_no_append() -> None:
    message = {"turn": "1", "step": 0, "usage": {"inputTokens": 1}, "message": {}}
    first = fold_lane(
        [
            LogEvent("turn/start", 5, T0 + 9, {"turn": "1"}, 0),
            LogEvent("assistant/message", 6, T0, message, 1),
        ]
    )
    chunk = {"turn": "1", "step": 0, "chunk": {"type": "usage", "usage": {"inputTokens": 2}}}
    second = fold_lane(
        [
            LogEvent("turn/start", 5, T0, {"turn": "1"}, 2),  # the same seq, a smaller repr
            LogEvent("assistant/chunk", 7, T0, chunk, 3),  # its step's message goes
            LogEvent("turn/start", 8, T0, {"turn": "2"}, 4),
        ],
        start=first,
    )
    assert list(second.usage_messages) == []
    assert appended_seqs(first.usage_messages, second.usage_messages) is None
    assert appended_seqs(first.turn_starts, second.turn_starts) is None
    assert appended_seqs(first.usage_chunks, second.usage_chunks) == [7]
    third = fold_lane([LogEvent("turn/start", 9, T0, {"turn": "3"}, 5)], start=second)
    assert appended_seqs(second.turn_starts, third.turn_starts) == [9]
    assert appended_seqs(first.turn_starts, third.turn_starts) is None
