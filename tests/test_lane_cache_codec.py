"""One cache entry's bytes: what is refused, and that nothing in them runs."""

from __future__ import annotations

import hashlib
import os
import pickle
from pathlib import Path

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dsh_task_gantt.events import SessionHeader
from dsh_task_gantt.fold.records import LaneFold, QueuedRec, TurnMark
from dsh_task_gantt.lane_cache import decode, encode, format_key, read_meta
from dsh_task_gantt.lane_cache.codec import MAGIC

META = {"format": "f1", "session": "s-1", "log": "/x/session.v4.jsonl.zstd"}
FOLD = LaneFold(
    events_seen=3,
    turn_starts={1: TurnMark("t1", 10)},
    queued={2: QueuedRec("m1", "a", "A", "b", "hello\n<b>", 9, 20)},
)
VALUE = (SessionHeader(id="s-1", raw={"id": "s-1", "n": 1.5, "x": [None, True]}), FOLD)


def test_an_entry_decodes_to_what_was_encoded() -> None:
    meta, value = decode(encode(META, VALUE), META) or ({}, None)
    assert value == VALUE
    assert {k: meta[k] for k in META} == META


def test_a_long_message_body_held_packed_comes_back_whole_from_an_entry() -> None:
    """A queue record holds a long body packed (bytes): the restricted unpickler reads
    it back, and the body is the one folded."""
    body = "A report on the folder, line by line.\n" * 60
    fold = LaneFold(queued={2: QueuedRec("m1", "a", "A", "b", body, len(body), 20)})
    assert isinstance(fold.queued[2].packed_body, bytes)
    _meta, value = decode(encode(META, fold), META) or ({}, None)
    assert isinstance(value, LaneFold) and value == fold
    assert value.queued[2].body == body


@pytest.mark.parametrize("field", ["format", "session", "log"])
def test_an_entry_for_something_else_is_refused(field: str) -> None:
    assert decode(encode(META, VALUE), {**META, field: "other"}) is None


def test_every_truncation_and_every_flipped_byte_is_refused() -> None:
    data = encode(META, VALUE)
    for cut in range(len(data)):
        assert decode(data[:cut], META) is None
    for at in range(len(MAGIC), len(data), 7):
        flipped = data[:at] + bytes([data[at] ^ 0x01]) + data[at + 1 :]
        assert decode(flipped, META) is None, at


@given(st.binary(max_size=2048))
def test_garbage_is_refused_without_raising(data: bytes) -> None:
    assert decode(data, META) is None
    assert decode(MAGIC + data, META) is None
    read_meta(data)


class _Runs:
    """Unpickled by a plain ``pickle.loads``, this would create a file."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, ...]:
        return (os.system, (f"touch {self.marker}",))


def test_a_forged_entry_runs_nothing(tmp_path: Path) -> None:
    """A well-formed header and digest over a pickle that calls ``os.system``: the
    unpickler refuses the global, so no code runs and decode says ``None``."""
    marker = tmp_path / "ran"
    payload = pickle.dumps(_Runs(str(marker)))
    good = encode(META, None)
    head = read_meta(good)
    assert head is not None
    head.update(digest=hashlib.blake2b(payload, digest_size=16).hexdigest(), bytes=len(payload))
    forged = MAGIC + orjson.dumps(head) + b"\n" + payload
    assert decode(forged, META) is None
    assert not marker.exists()
    pickle.loads(payload)  # the control: the same bytes do run code when not restricted
    assert marker.exists()


def test_the_format_key_depends_on_its_parts() -> None:
    assert format_key("a") == format_key("a")
    assert format_key("a") != format_key("b")
    assert format_key("a", "b") != format_key("ab")
