"""Token use per step, turn, lane and team, read from real log files the way the
service reads them (the reader's skip rules and runs mode, then the fold)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from dsh_task_gantt.fold import RUN_MARKS, UNREAD_DATA, fold_lane
from dsh_task_gantt.logs.reader import LogReader
from dsh_task_gantt.timeline import build_timeline
from dsh_task_gantt.timeline.tokens import lane_tokens, tokens_json
from tests.kit.foldkit import LEAD, lane, source, team
from tests.kit.logwriting import event, frame, write_session

#: A message body long enough that the reader never parses the line whole.
BODY = "word " * 3000
U1 = {"inputTokens": 10, "outputTokens": 20, "cacheReadTokens": 200_000, "cacheWriteTokens": 90}
U2 = {"inputTokens": 7, "outputTokens": 300, "cacheReadTokens": 5_000, "reasoningTokens": 120}


def chunk(seq: int, turn: int, step: int, usage: Any) -> dict[str, Any]:
    data = {"turn": turn, "step": step, "chunk": {"type": "usage", "usage": usage}}
    return event(seq, "assistant/chunk", data)


def message(
    seq: int, turn: int, step: int, usage: Any = None, *, first: bool = False, **extra: Any
) -> dict[str, Any]:
    """An assistant message with ``usage`` after its long body (DSH's writer) or
    before it (``first``: other writers)."""
    body = {"role": "assistant", "content": [{"type": "text", "text": BODY}]}
    data: dict[str, Any] = {"turn": turn, "step": step}
    if usage is not None and first:
        data = {"usage": usage, **data}
    data["message"] = body
    if usage is not None and not first:
        data["usage"] = usage
    data.update(extra)
    return event(seq, "assistant/message", data)


def turn(seq: int, turn_id: int) -> dict[str, Any]:
    return event(seq, "turn/start", {"turn": turn_id})


def json_line(obj: Any) -> bytes:
    """One line as DSH's writer spells it (stdlib json: 10^30 stays an integer)."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


def write_log(tmp_path: Path, objs: list[dict[str, Any]], per_frame: int = 3) -> Path:
    """A lead's log in the real layout: a header frame, then frames of lines."""
    path = write_session(tmp_path, LEAD, [])
    lines = [json_line(o) for o in objs]
    with path.open("ab") as f:
        for i in range(0, len(lines), per_frame):
            f.write(frame(b"".join(lines[i : i + per_frame])))
    return path


def read_fold(tmp_path: Path, objs: list[dict[str, Any]], *, runs: bool = True) -> Any:
    path = write_log(tmp_path, objs)
    reader = LogReader(path, skip_types=UNREAD_DATA, run_marks=RUN_MARKS)
    return fold_lane(reader.read_new(runs=runs).events)


def timeline_of(fold: Any) -> dict[str, Any]:
    return build_timeline(team(dataclasses.replace(source(LEAD), fold=fold)))


def tokens(
    i: int = 0, cr: int = 0, cw: int = 0, o: int = 0, r: int = 0, steps: int = 0, without: int = 0
) -> dict[str, int]:
    return {
        "input": i,
        "cacheRead": cr,
        "cacheWrite": cw,
        "output": o,
        "reasoning": r,
        "steps": steps,
        "stepsWithoutUsage": without,
    }


@pytest.mark.parametrize("runs", [True, False], ids=["runs", "events"])
@pytest.mark.parametrize("first", [False, True], ids=["usage-last", "usage-first"])
def test_a_step_with_a_chunk_and_a_message_usage_counts_once(
    tmp_path: Path, runs: bool, first: bool
) -> None:
    objs = [
        turn(0, 1),
        chunk(1, 1, 1, U1),
        message(2, 1, 1, U1, first=first),
        # Only the message's usage: the fallback.
        message(3, 1, 2, U2, first=first),
        # Neither: a step without usage.
        message(4, 1, 3, first=first),
    ]
    out = timeline_of(read_fold(tmp_path, objs, runs=runs))
    # Disjoint sums: cache reads and writes apart from input, reasoning inside output.
    want = tokens(17, 205_000, 90, 320, 120, steps=2, without=1)
    assert lane(out, "lead")["tokens"] == want
    assert out["tokens"] == want
    (span,) = [s for s in lane(out, "lead")["spans"] if s["kind"] == "turn"]
    assert span["tokens"] == want


def test_the_chunk_wins_over_a_different_message_usage(tmp_path: Path) -> None:
    objs = [turn(0, 1), message(1, 1, 1, U2), chunk(2, 1, 1, U1)]
    out = timeline_of(read_fold(tmp_path, objs))
    assert out["tokens"] == tokens(10, 200_000, 90, 20, steps=1)


def test_an_interrupted_message_is_counted_by_its_usage_or_as_a_step_without(
    tmp_path: Path,
) -> None:
    objs = [
        turn(0, 1),
        # DSH's order: usage after the body, ``interrupted`` after the usage.
        message(1, 1, 1, U1, interrupted=True),
        message(2, 1, 2, interrupted=True),
    ]
    fold = read_fold(tmp_path, objs)
    assert timeline_of(fold)["tokens"] == tokens(10, 200_000, 90, 20, steps=1, without=1)


def test_a_lane_without_usage_says_nothing(tmp_path: Path) -> None:
    out = timeline_of(read_fold(tmp_path, [turn(0, 1), message(1, 1, 1)]))
    assert lane(out, "lead")["tokens"] is None and out["tokens"] is None
    assert lane(out, "lead")["model"] is None
    (span,) = [s for s in lane(out, "lead")["spans"] if s["kind"] == "turn"]
    assert span["tokens"] is None


@pytest.mark.parametrize(
    "bad",
    [-5, "12", 3.5, 10**30, True, {"n": 1}, [1, 2]],
    ids=["negative", "string", "float", "huge", "bool", "object", "list"],
)
@pytest.mark.parametrize("where", ["chunk", "message-last", "message-first"])
def test_hostile_values_are_skipped_and_counted(tmp_path: Path, bad: Any, where: str) -> None:
    usage = {**U1, "outputTokens": bad, "cacheWriteTokens": bad}
    step = (
        [chunk(1, 1, 1, usage)]
        if where == "chunk"
        else [message(1, 1, 1, usage, first=where == "message-first")]
    )
    out = timeline_of(read_fold(tmp_path, [turn(0, 1), *step]))
    assert out["tokens"] == tokens(10, 200_000, 0, 0, steps=1)
    assert out["diagnostics"]["tokenValuesSkipped"] == 2
    assert "2 token counts not a non-negative integer, skipped" in out["notes"]


@pytest.mark.parametrize("junk", ["nope", 7, [U1], None], ids=["string", "int", "list", "null"])
def test_a_usage_that_is_no_object_falls_back_or_counts_as_a_step_without(
    tmp_path: Path, junk: Any
) -> None:
    objs = [turn(0, 1), chunk(1, 1, 1, junk), message(2, 1, 1, U2), chunk(3, 1, 2, junk)]
    out = timeline_of(read_fold(tmp_path, objs))
    assert out["tokens"] == tokens(7, 5_000, 0, 300, 120, steps=1, without=1)
    skipped = 0 if junk is None else 2
    assert out["diagnostics"]["tokenValuesSkipped"] == skipped


def test_a_usage_nested_deeper_in_the_message_is_not_the_steps(tmp_path: Path) -> None:
    inner = {"role": "assistant", "content": [{"type": "text", "text": BODY}], "usage": U1}
    objs = [turn(0, 1), event(1, "assistant/message", {"turn": 1, "step": 1, "message": inner})]
    out = timeline_of(read_fold(tmp_path, objs))
    assert out["tokens"] is None
    # Parsed in full it reads the same: the probe never finds more than the data has.
    whole = fold_lane(LogReader(write_log(tmp_path / "b", objs)).read_new().events)
    assert timeline_of(whole)["tokens"] is None


def test_the_message_source_names_the_lanes_model(tmp_path: Path) -> None:
    body = {"source": {"provider": "deepseek", "model": "deepseek-chat"}, "role": "assistant"}
    body["content"] = [{"type": "text", "text": BODY}]
    data = {"usage": U1, "turn": 1, "step": 1, "message": body}
    out = timeline_of(read_fold(tmp_path, [turn(0, 1), event(1, "assistant/message", data)]))
    assert lane(out, "lead")["model"] == {"provider": "deepseek", "model": "deepseek-chat"}


@pytest.mark.parametrize("runs", [True, False], ids=["runs", "events"])
@pytest.mark.parametrize("with_chunk", [True, False], ids=["chunk", "no-chunk"])
def test_dsh_spelling_names_the_model_at_the_messages_end(
    tmp_path: Path, runs: bool, with_chunk: bool
) -> None:
    """DSH's own writer: the message's ``source`` last in the message, then its id, then
    ``usage``, then the envelope's ``sourceEventSeqs`` (seen in DSH 0.1.0-rc.8's logs);
    the step's usage chunk, where there is one, counts and the message still names the
    model. The older message's model gives way to the latest's."""

    def dsh_message(seq: int, step: int, model: str) -> dict[str, Any]:
        body = {"role": "assistant", "content": [{"type": "text", "text": BODY}]}
        body["source"] = {"kind": "model", "provider": "deepseek-official", "model": model}
        body["id"] = f"m-{seq}"
        obj = event(seq, "assistant/message", {"turn": 1, "step": step, "message": body})
        obj["data"]["usage"] = U2
        obj["sourceEventSeqs"] = list(range(seq - 4, seq))
        obj["surfaceOp"] = "append"
        return obj

    objs = [turn(0, 1)]
    objs += [chunk(1, 1, 1, U2)] if with_chunk else []
    objs += [dsh_message(2, 1, "deepseek-old")]
    objs += [chunk(3, 1, 2, U2)] if with_chunk else []
    objs += [dsh_message(4, 1 + 1, "deepseek-v4-flash")]
    out = timeline_of(read_fold(tmp_path, objs, runs=runs))
    lead = lane(out, "lead")
    assert lead["model"] == {"provider": "deepseek-official", "model": "deepseek-v4-flash"}
    assert lead["tokens"] == tokens(i=14, cr=10_000, o=600, r=240, steps=2)


def _long_log(steps: int) -> list[dict[str, Any]]:
    objs: list[dict[str, Any]] = []
    seq = 0
    for n in range(steps):
        if n % 5 == 0:
            objs.append(turn(seq, n // 5 + 1))
            seq += 1
        usage = {**U1, "cacheReadTokens": 1_000 * n}
        if n % 7 != 3:
            objs.append(chunk(seq, n // 5 + 1, n, usage))
            seq += 1
        if n % 11 != 5:
            objs.append(message(seq, n // 5 + 1, n, usage, first=n % 2 == 0))
            seq += 1
    return objs


def test_a_log_read_in_two_halves_gives_the_totals_read_whole(tmp_path: Path) -> None:
    objs = _long_log(60)
    path = write_session(tmp_path, LEAD, [], per_frame=1)
    half = len(objs) // 2
    reader = LogReader(path, skip_types=UNREAD_DATA, run_marks=RUN_MARKS)
    with path.open("ab") as f:
        f.write(b"".join(frame(json_line(o)) for o in objs[:half]))
    first = fold_lane(reader.read_new(runs=True).events)
    with path.open("ab") as f:
        f.write(b"".join(frame(json_line(o)) for o in objs[half:]))
    both = fold_lane(reader.read_new(runs=True).events, start=first)
    whole = read_fold(tmp_path / "whole", objs)
    assert both == whole
    assert timeline_of(both)["tokens"] == timeline_of(whole)["tokens"]
    # Step 38 has neither a chunk nor a message: it leaves no trace.
    assert timeline_of(whole)["tokens"]["steps"] == 59
    # The first half's totals are a part of the whole's (an appended step adds).
    assert timeline_of(first)["tokens"]["steps"] < 60


def test_probing_the_line_ends_reads_what_parsing_every_line_reads(tmp_path: Path) -> None:
    objs = _long_log(40)
    probed = read_fold(tmp_path, objs)
    path = write_log(tmp_path / "full", objs)
    parsed = fold_lane(LogReader(path).read_new().events)
    assert probed == parsed


def test_the_inherited_prefix_of_a_fork_is_not_the_childs_spending(tmp_path: Path) -> None:
    objs = [turn(0, 1), chunk(1, 1, 1, U1), event(2, "session/end-seed", {"inherited": True})]
    objs += [turn(3, 2), chunk(4, 2, 1, U2)]
    fold = read_fold(tmp_path, objs)
    own = lane_tokens(fold, cut=3)
    assert tokens_json(own.total) == tokens(7, 5_000, 0, 300, 120, steps=1)
    assert set(own.by_turn) == {"2"}
    assert tokens_json(lane_tokens(fold).total) == tokens(17, 205_000, 90, 320, 120, steps=2)


def test_the_bulk_count_equals_the_record_by_record_one(tmp_path: Path) -> None:
    """A lane of the usual kind is counted in C-level passes; the same fold counted
    record by record (the way every other lane is) gives the same totals."""
    from dsh_task_gantt.timeline import tokens as tokens_module

    fold = read_fold(tmp_path, _long_log(80))
    assert tokens_module._bulk_chunk_totals(fold, 0) is not None  # the fast way is taken
    fast = tokens_module._lane_tokens(fold, 0)
    slow_fold = dataclasses.replace(fold, usage_chunk_steps={})  # forces the other way
    assert tokens_module._bulk_chunk_totals(slow_fold, 0) is None
    slow = tokens_module._lane_tokens(slow_fold, 0)
    assert (fast.total, dict(fast.by_turn), fast.skipped) == (
        slow.total,
        dict(slow.by_turn),
        slow.skipped,
    )


def test_a_usage_chunk_that_does_not_decode_leaves_its_steps_message_counted(
    tmp_path: Path,
) -> None:
    """A usage chunk (in another writer's spelling) whose usage is no JSON is a bad
    line, as a line-by-line read finds it: its step is then counted by its message's
    usage, not left without any (the bulk read had marked the step as the chunk's)."""
    bad = json_line(chunk(1, 1, 1, {"outputTokens": 20, "inputTokens": 10}))
    bad = bad.replace(b'"inputTokens":10', b'"inputTokens":010')  # no JSON number
    lines = [json_line(turn(0, 1)), bad, json_line(message(2, 1, 1, U2))]
    path = write_session(tmp_path, LEAD, [])
    with path.open("ab") as f:
        f.write(frame(b"".join(lines)))
    bulk = fold_lane(
        LogReader(path, skip_types=UNREAD_DATA, run_marks=RUN_MARKS).read_new(runs=True).events
    )
    whole = fold_lane(LogReader(path).read_new().events)
    assert tokens_json(lane_tokens(bulk).total) == tokens_json(lane_tokens(whole).total)
    assert tokens_json(lane_tokens(bulk).total) == tokens(7, 5_000, 0, 300, 120, steps=1)
