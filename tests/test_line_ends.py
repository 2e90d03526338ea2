"""The small fields at a long line's two ends (logs/reader/line_ends.py): found without
parsing the body, never mistaken for a ``usage`` nested deeper."""

from __future__ import annotations

import json
from typing import Any

import pytest

from dsh_task_gantt.fold.lane import LINE_ENDS as FOLD_LINE_ENDS
from dsh_task_gantt.logs.reader import line_ends
from dsh_task_gantt.logs.reader.line_ends import LINE_ENDS, PARSE, probe

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


def test_the_bulk_rows_of_dsh_spelling() -> None:
    chunk = json.dumps(
        {"type": "assistant/chunk", "seq": 3, "time": 900,
         "data": {"turn": 2, "step": 1, "chunk": {"type": "usage", "usage": USAGE}}},
        separators=(",", ":"),
    ).encode()  # fmt: skip
    found = line_ends.match_chunk(chunk)
    assert found is not None and found.group(3) == b'"turn":2,"step":1'
    batch = line_ends.chunk_batch([found])
    assert batch == ("assistant/chunk", (3,), (900,), (2,), (1,), (USAGE,), None)
    message = line({"turn": 2, "step": 1, "message": BODY, "usage": USAGE})
    head = line_ends.match_message_last(message)
    assert head is not None and head.group(3) == found.group(3)  # the same step, byte for byte
    tail = line_ends.message_tail(message, head.end(), len(message))
    assert line_ends.last_batch([(head, tail)]) == (
        "assistant/message", (4,), (1000,), (2,), (1,), (USAGE,), (None,)
    )  # fmt: skip


def test_a_batch_that_does_not_decode_says_so() -> None:
    message = line({"turn": 2, "step": 1, "message": BODY}) + b"junk"
    head = line_ends.match_message_last(message)
    assert head is not None
    tail = b'{"data":{"usage":{]'
    assert line_ends.last_batch([(head, tail)]) is None


def test_a_usage_chunk_with_a_nested_usage_is_not_a_bulk_row() -> None:
    usage = {"inputTokens": {"deep": 1}}
    chunk = json.dumps(
        {"type": "assistant/chunk", "seq": 3, "time": 900,
         "data": {"turn": 2, "step": 1, "chunk": {"type": "usage", "usage": usage}}},
        separators=(",", ":"),
    ).encode()  # fmt: skip
    assert line_ends.match_chunk(chunk) is None  # read in full instead: the value is counted
    broken = chunk[:-1]  # one brace short: not JSON, whatever the pattern takes of it
    found = line_ends.match_chunk(broken)
    assert found is None or line_ends.chunk_batch([found]) is None
