"""The small fields at a long line's two ends (logs/reader/line_ends.py): found without
parsing the body, never mistaken for a ``usage`` nested deeper."""

from __future__ import annotations

import json
from typing import Any

import pytest

from dsh_task_gantt.fold.lane import LINE_ENDS as FOLD_LINE_ENDS
from dsh_task_gantt.logs.reader import line_ends
from dsh_task_gantt.logs.reader.line_ends import LINE_ENDS, PARSE, probe
from dsh_task_gantt.logs.reader.skip_rules import skip_rule

BODY = {"role": "assistant", "content": [{"type": "text", "text": "x" * 6000}]}
USAGE = {"inputTokens": 10, "outputTokens": 20, "cacheReadTokens": 200_000}


def line(data: dict[str, Any], **envelope: Any) -> bytes:
    obj = {"type": "assistant/message", "seq": 4, "time": 1000, "data": data, **envelope}
    return json.dumps(obj, separators=(",", ":")).encode()


def probed(raw: bytes) -> Any:
    start = raw.index(b',"data"') + 1
    return probe(raw, start, len(raw))


def test_the_fold_and_the_reader_name_the_probe_alike() -> None:
    assert FOLD_LINE_ENDS == LINE_ENDS


def test_usage_after_the_body_with_fields_after_it() -> None:
    raw = line({"turn": 2, "step": 1, "message": BODY, "usage": USAGE, "interrupted": True})
    assert probed(raw) == {"turn": 2, "step": 1, "usage": USAGE, "interrupted": True}


def test_usage_before_the_body_and_the_messages_source() -> None:
    body = {"source": {"provider": "p", "model": "m"}, **BODY}
    raw = line({"usage": USAGE, "turn": 2, "step": 1, "message": body})
    got = probed(raw)
    assert got["usage"] == USAGE and (got["turn"], got["step"]) == (2, 1)
    assert got["message"] == {"source": {"provider": "p", "model": "m"}}


@pytest.mark.parametrize(
    "data",
    [
        {"turn": 1, "step": 1, "message": {**BODY, "usage": USAGE}},  # inside the message
        {"turn": 1, "step": 1, "message": BODY, "meta": [{"usage": USAGE}]},  # in a list
    ],
)
def test_a_usage_nested_deeper_is_not_the_steps(data: dict[str, Any]) -> None:
    assert "usage" not in probed(line(data))


def test_a_usage_at_the_envelopes_level_is_not_datas() -> None:
    assert "usage" not in probed(line({"turn": 1, "step": 1, "message": BODY}, usage=USAGE))


def test_a_usage_first_that_is_no_flat_object_is_read_whole() -> None:
    raw = line({"usage": {"inputTokens": {"deep": [1, 2]}}, "turn": 1, "message": BODY})
    assert probed(raw) is PARSE


def test_a_short_line_is_parsed_whole() -> None:
    assert probed(line({"turn": 1, "step": 1, "usage": USAGE})) is PARSE


RULE = skip_rule({"assistant/chunk": (b'"usage"',), "assistant/message": LINE_ENDS})


def rows(*lines: bytes, seen: set[bytes] | None = None) -> line_ends.TokenRows:
    """The token rows of one unit of these lines, as the runs mode reads them."""
    text = b"\n".join(lines)
    assert RULE is not None and RULE.bulk_prefix is not None
    heads, pos = [], 0
    for raw in lines:
        head = RULE.bulk_prefix.match(text, pos, pos + len(raw))
        assert head is not None
        heads.append(head)
        pos += len(raw) + 1
    chunks = [h for h in heads if h.group(1) == b"assistant/chunk"]
    messages = [h for h in heads if h.group(1) == b"assistant/message"]
    steps = set() if seen is None else seen
    return line_ends.token_rows(text, chunks, messages, steps, RULE.chunk_markers)


def chunk_line(seq: int, chunk: dict[str, Any], turn: int = 2, step: int = 1) -> bytes:
    obj = {"type": "assistant/chunk", "seq": seq, "time": 900,
           "data": {"turn": turn, "step": step, "chunk": chunk}}  # fmt: skip
    return json.dumps(obj, separators=(",", ":")).encode()


def test_the_bulk_rows_of_dsh_spelling() -> None:
    chunk = chunk_line(3, {"type": "usage", "usage": USAGE})
    message = line({"turn": 2, "step": 1, "message": BODY, "usage": USAGE})
    steps: set[bytes] = set()
    got = rows(chunk, message, seen=steps)
    # The step's chunk counts: its message is a plain run line (no source to name).
    assert got.batches == [("assistant/chunk", (3,), (900,), (2,), (1,), (USAGE,), None)]
    assert got.alone == [] and steps == {b'"turn":2,"step":1'}
    other = line({"turn": 2, "step": 5, "message": BODY, "usage": USAGE})
    assert rows(other).batches == [
        ("assistant/message", (4,), (1000,), (2,), (5,), (USAGE,), (None,))
    ]  # fmt: skip


def test_a_text_chunk_is_a_run_line_and_a_usage_chunk_spelled_otherwise_is_read_alone() -> None:
    text = chunk_line(3, {"type": "text-delta", "delta": "hello"})
    odd = chunk_line(5, {"usage": USAGE, "type": "usage"})
    got = rows(text, odd)
    assert got.batches == [] and [h.group(2) for h in got.alone] == [b"5"]


def test_a_batch_that_does_not_decode_is_read_alone() -> None:
    got = rows(line({"turn": 2, "step": 1, "message": BODY}) + b'"usage":{]')
    assert got.batches == [] and len(got.alone) == 1
