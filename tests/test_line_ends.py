"""The small fields at a long line's two ends (logs/reader/line_ends.py): found without
parsing the body, never mistaken for a ``usage`` nested deeper."""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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


def _source_left_to_right(text: bytes, lo: int, hi: int) -> dict[str, Any] | None:
    """What ``_source`` finds, as every match from the left would (the last one wins)."""
    found = None
    for match in line_ends._SOURCE.finditer(text, lo, hi):
        try:
            obj = orjson.loads(match.group(1))
        except orjson.JSONDecodeError:
            continue
        if type(obj) is dict and ("model" in obj or "provider" in obj):
            found = obj
    return found


_SOURCE_PIECES = st.sampled_from(
    [
        b'"source":{"provider":"p","model":"m"}',
        b'"source":{"model":"n"}',
        b'"source":{"name":"x"}',  # names no model
        b'"source":{"model":}',  # does not decode
        b'"source":{"a":{"model":"deeper"}}',  # not a flat object
        b'"source":{',
        b'"source":',
        b"{",
        b"}",
        b",",
        b'"x"',
        b"\n",
    ]
)


@settings(max_examples=400)
@given(pieces=st.lists(_SOURCE_PIECES, max_size=12), data=st.data())
def test_the_source_looked_for_from_the_end_is_the_last_from_the_start(
    pieces: list[bytes], data: st.DataObject
) -> None:
    text = b"".join(pieces)
    lo = data.draw(st.integers(0, len(text)))
    hi = data.draw(st.integers(lo, len(text)))
    assert line_ends._source(text, lo, hi) == _source_left_to_right(text, lo, hi)


def test_the_last_source_naming_a_model_wins() -> None:
    first, last = b'"source":{"model":"a"}', b'"source":{"provider":"b"}'
    text = first + b"," + last + b',"source":{"name":"c"},"source":{"model":}'
    assert line_ends._source(text, 0, len(text)) == {"provider": "b"}
    assert line_ends._source(text, 0, len(first) + 1) == {"model": "a"}  # the window's
    assert line_ends._source(text, 1, len(text)) == {"provider": "b"}
