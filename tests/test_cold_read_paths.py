"""The cold read's cheaper paths give what the plain ways gave.

A run line's fields decoded without its type (the run marks told by their own pattern
branches), the step names deleted byte by byte rather than replaced, one seq range
found without sorting: each checked against the obvious way.
"""

from __future__ import annotations

import re
from operator import itemgetter
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from dsh_task_gantt.collector import YOUNG_THRESHOLD
from dsh_task_gantt.events import EventRun, LogEvent
from dsh_task_gantt.fold import fold_lane
from dsh_task_gantt.fold.lane import _runs_of
from dsh_task_gantt.logs.reader import line_ends
from dsh_task_gantt.logs.reader.line_decoder import LineDecoder
from dsh_task_gantt.logs.reader.skip_rules import runs_pattern, skip_rule

T0 = 1_796_000_000_000

#: Skipped types of every kind a run mark can be: without markers, with markers, and
#: a mark no reader skips (``e/parsed``).
_SKIP = {"a/plain": None, "b/mark": None, "c/marked": (b"zz",), "d/marked-mark": (b"yy",)}
_MARKS = (b"b/mark", b"d/marked-mark", b"e/parsed")
_MARKERS = {"c/marked": b"zz", "d/marked-mark": b"yy"}


def _naive_runs(seqs: list[int]) -> list[tuple[int, int]]:
    runs: list[tuple[int, int]] = []
    for seq in sorted(set(seqs)):
        if runs and runs[-1][1] + 1 == seq:
            runs[-1] = (runs[-1][0], seq)
        else:
            runs.append((seq, seq))
    return runs


@given(
    st.one_of(
        st.lists(st.integers(0, 60), max_size=40),
        # A whole span, shuffled, maybe with a duplicate (then a seq is missing).
        st.integers(0, 30).flatmap(
            lambda n: (
                st.permutations(list(range(5, 5 + n))).map(list)
                | st.lists(st.integers(5, 5 + n), min_size=n, max_size=n)
            )
        ),
    )
)
def test_seq_runs_are_the_consecutive_runs_of_the_distinct_seqs(seqs: list[int]) -> None:
    assert _runs_of(seqs) == _naive_runs(seqs)


_LINE = st.tuples(
    st.sampled_from([*_SKIP, "e/parsed"]),
    st.integers(0, 10**15 - 1),
    st.integers(0, 10**15 - 1),
    st.booleans(),  # with its type's marker (read in full)
)


@given(st.lists(st.lists(_LINE, max_size=12), max_size=4))
def test_run_marks_are_the_latest_seq_of_each_marked_type_among_the_run_lines(
    units: list[list[tuple[str, int, int, bool]]],
) -> None:
    rule = skip_rule(_SKIP)
    assert rule is not None
    decoder = LineDecoder(rule, 1, 0, marks=_MARKS)  # the header already seen
    in_run: list[tuple[str, int, int]] = []
    for unit in units:
        text = b""
        for name, seq, time, marked in unit:
            extra = _MARKERS.get(name, b"") if marked else b""
            text += b'{"type":"%s","seq":%d,"time":%d,"data":{"x":"%s"}}\n' % (
                name.encode(),
                seq,
                time,
                extra,
            )
            if name != "e/parsed" and not extra:
                in_run.append((name, seq, time))
        decoder.feed_runs(text)
    run = decoder.take_run()
    if not in_run:
        assert run is None
        return
    assert run is not None
    assert sorted(run.seqs) == sorted(seq for _, seq, _ in in_run)
    assert run.last_time == max(time for _, _, time in in_run)
    latest = {}
    for name, seq, _ in in_run:
        if name.encode() in _MARKS:
            latest[name] = max(seq, latest.get(name, -1))
    assert dict(run.marks) == latest
    # The parsed lines came as events, each once.
    assert len(decoder.events) == sum(len(u) for u in units) - len(in_run)


def test_each_run_mark_has_a_branch_of_its_own() -> None:
    rule = skip_rule(_SKIP)
    assert rule is not None
    runs = runs_pattern(rule, _MARKS)
    line = b'{"type":"%s","seq":7,"time":9,'
    codes = {}
    for name in ("a/plain", "b/mark", "c/marked", "d/marked-mark"):
        found = runs.pattern.match(line % name.encode())
        assert found is not None and found.lastindex is not None
        assert found.group(found.lastindex) == b',"seq":7,"time":9'
        codes[name] = found.lastindex
    assert codes["a/plain"] == 1 and codes["b/mark"] <= runs.plain_last
    assert codes["c/marked"] > runs.plain_last and codes["d/marked-mark"] > runs.plain_last
    assert runs.mark_codes == (codes["b/mark"], codes["d/marked-mark"], 0)
    assert runs.pattern.match(line % b"e/parsed") is None


_NUMBER = st.integers(0, 10**15 - 1).map(str)
_STEP = st.tuples(_NUMBER, _NUMBER).map(lambda t: f'"turn":{t[0]},"step":{t[1]}')


@given(st.lists(st.one_of(_NUMBER, _STEP), min_size=1, max_size=12))
def test_unnamed_drops_exactly_the_step_names(parts: list[str]) -> None:
    row = ",".join(parts).encode()
    assert line_ends.unnamed(row) == row.replace(b'"turn":', b"").replace(b'"step":', b"")


@given(st.lists(st.tuples(_NUMBER, _NUMBER, _STEP), max_size=8))
def test_message_rows_are_seq_time_turn_step_each(rows: list[tuple[str, str, str]]) -> None:
    pattern = re.compile(rb"(\d+),(\d+),(.*)")
    matches = [pattern.fullmatch(",".join(r).encode()) for r in rows]
    found = [m for m in matches if m is not None]
    assert len(found) == len(rows)
    expected = [",".join(r).replace('"turn":', "").replace('"step":', "").encode() for r in rows]
    assert line_ends._rows(found, 3) == expected
    assert list(map(itemgetter(0), rows)) == [e.split(b",")[0].decode() for e in expected]


def test_the_cost_benchmark_paces_the_collector_as_serve_does() -> None:
    # Spelled in the benchmark (its plugin before token use had no collector module).
    path = Path(__file__).resolve().parent.parent / "benchmarks" / "bench_tokens_cost.py"
    found = re.search(r"^SERVE_YOUNG = ([\d_]+)$", path.read_text(), re.MULTILINE)
    assert found is not None
    assert int(found.group(1)) == YOUNG_THRESHOLD


_USAGE = st.one_of(
    st.none(),
    st.fixed_dictionaries(
        {"inputTokens": st.integers(0, 10**6)},
        optional={"outputTokens": st.integers(0, 10**6), "cacheReadTokens": st.integers(0, 9)},
    ),
)
_SOURCE_OBJ = st.one_of(
    st.none(),
    st.fixed_dictionaries({"provider": st.sampled_from(["p", "q"]), "model": st.just("m")}),
)


@given(
    chunk_steps=st.lists(st.tuples(st.integers(0, 3), st.integers(0, 2)), max_size=5),
    messages=st.lists(
        st.tuples(
            st.integers(0, 3),
            st.integers(0, 2),
            _USAGE,
            _SOURCE_OBJ,
            st.one_of(st.integers(0, 10**6), st.just(-1), st.text(max_size=2)),
        ),
        min_size=1,
        max_size=12,
    ),
    with_sources=st.booleans(),
)
def test_a_message_batch_folds_like_its_messages_one_by_one(
    chunk_steps: list[tuple[int, int]],
    messages: list[tuple[int, int, Any, Any, Any]],
    with_sources: bool,
) -> None:
    """Messages without usage among a run's message batch (each step's chunk before
    them, or none; odd turn values) fold as their events do, one by one."""
    chunk_seqs = tuple(range(len(chunk_steps)))
    chunk_batch = (
        "assistant/chunk",
        chunk_seqs,
        tuple(T0 + s for s in chunk_seqs),
        tuple(t for t, _ in chunk_steps),
        tuple(s for _, s in chunk_steps),
        tuple({"inputTokens": 1, "outputTokens": 2} for _ in chunk_steps),
        None,
    )
    seqs = tuple(range(len(chunk_steps), len(chunk_steps) + len(messages)))
    turns = tuple(
        odd if odd != 0 and n % 3 == 2 else t for n, (t, _, _, _, odd) in enumerate(messages)
    )
    message_batch = (
        "assistant/message",
        seqs,
        tuple(T0 + s for s in seqs),
        turns,
        tuple(s for _, s, _, _, _ in messages),
        tuple(u for _, _, u, _, _ in messages),
        tuple(src for _, _, _, src, _ in messages) if with_sources else None,
    )
    every = chunk_seqs + seqs
    run = EventRun(len(every), every, T0 + every[-1], (), (chunk_batch, message_batch))
    events = [
        LogEvent(
            "assistant/chunk",
            seq,
            T0 + seq,
            {"turn": t, "step": s, "chunk": {"type": "usage", "usage": usage}},
            seq,
        )
        for seq, t, s, usage in zip(
            chunk_seqs, chunk_batch[3], chunk_batch[4], chunk_batch[5], strict=True
        )
    ] + [
        LogEvent(
            "assistant/message",
            seq,
            T0 + seq,
            {
                "turn": turn,
                "step": step,
                "usage": usage,
                "message": {"source": source if with_sources else None},
            },
            seq,
        )
        for seq, turn, (_, step, usage, source, _) in zip(seqs, turns, messages, strict=True)
    ]
    assert fold_lane([run]) == fold_lane(events)
