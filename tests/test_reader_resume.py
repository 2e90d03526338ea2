"""A reader's state carried to another process: resumed only on the same file."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest

from dsh_task_gantt.lane_cache.codec import decode, encode
from dsh_task_gantt.logs.reader import LogReader
from dsh_task_gantt.logs.reader.line_decoder import LineDecoder
from dsh_task_gantt.logs.reader.log_reader import Checkpoint, ReaderState
from tests.kit.logwriting import event, frame, line, record_decoded_frames, write_session


def written(tmp_path: Path, n: int = 600) -> Path:
    """About 270 KB of lines: several decoding units, so several checkpoints."""
    events = [event(i, "assistant/message", {"text": "x" * 400}) for i in range(n)]
    return write_session(tmp_path, "s-1", events, per_frame=10)


def read_fully(tmp_path: Path, n: int) -> tuple[Path, ReaderState]:
    """A log of ``n`` events and the state of a reader that read all of it."""
    path = written(tmp_path, n)
    reader = LogReader(path)
    reader.read_new()
    state = reader.state()
    assert state is not None
    return path, state


def test_a_resumed_reader_decodes_only_what_was_appended(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = written(tmp_path)
    first = LogReader(path, checkpoint_every=64)
    first.read_new()
    state = first.state()
    assert state is not None and state.event_count == 600
    assert len(state.checkpoints) > 2
    size = path.stat().st_size
    with open(path, "ab") as f:
        f.write(frame(line(event(600)) + line(event(601))))
    decoded = record_decoded_frames(monkeypatch)
    second = LogReader(path, checkpoint_every=64)
    assert second.resume(state)
    batch = second.read_new()
    assert [e.seq for e in batch.events] == [600, 601] and batch.first_index == 600
    assert decoded and min(decoded) >= size  # not one frame of the old bytes
    assert second.header == first.header and second.event_count == 602
    # The checkpoints came along: older events decode from the nearest one.
    decoded.clear()
    assert [e.seq for e in second.read_range(300, 303)] == [300, 301, 302]
    assert decoded and min(decoded) > 0


def test_a_state_is_refused_on_another_file_a_shorter_one_or_other_bytes(
    tmp_path: Path,
) -> None:
    path = written(tmp_path)
    reader = LogReader(path)
    reader.read_new()
    state = reader.state()
    assert state is not None
    data = path.read_bytes()

    copy = path.with_name("copy")
    copy.write_bytes(data)
    os.replace(copy, path)  # same bytes, another inode
    assert not LogReader(path).resume(state)

    fresh = LogReader(path)
    fresh.read_new()
    state = fresh.state()
    assert state is not None
    os.truncate(path, len(data) - 1)
    assert not LogReader(path).resume(state)
    with open(path, "ab") as f:
        f.write(b"\x00")  # the last byte written again, otherwise
    assert not LogReader(path).resume(state)
    with open(path, "r+b") as f:
        f.write(data[-1:] * 1)  # a byte of the header rewritten, the end as it was
        f.seek(len(data) - 1)
        f.write(data[-1:])
    assert not LogReader(path).resume(state)

    path.write_bytes(data)  # same inode, the original bytes: fine again
    assert LogReader(path).resume(dataclasses.replace(state))


@pytest.mark.parametrize(
    "change",
    [
        {"offset": -1},
        {"fingerprint": b"short"},
        {"checkpoints": ()},
        {"event_count": -5},
    ],
)
def test_an_implausible_state_is_refused(tmp_path: Path, change: dict[str, object]) -> None:
    path = written(tmp_path)
    reader = LogReader(path)
    reader.read_new()
    state = reader.state()
    assert state is not None
    other = LogReader(path)
    assert not other.resume(dataclasses.replace(state, **change))  # type: ignore[arg-type]
    assert other.state() is None  # nothing of it was taken


def test_a_reader_that_read_nothing_has_no_state(tmp_path: Path) -> None:
    assert LogReader(tmp_path / "missing.jsonl").state() is None


@pytest.mark.parametrize(
    "change",
    [
        {"carry": "a str carry"},
        {"fingerprint": "x" * 32},
        {"head_digest": "not bytes"},
        {"identity": ["1", "2"]},
        {"identity": (1, 2, 3)},
        {"header": {"id": "s-1"}},
        {"event_count": 600.0},
        {"lines_seen": True},
        {"checkpoints": [Checkpoint(0, 0, 0)]},
        {"checkpoints": (Checkpoint(0, 0, 0), Checkpoint(1, "5", 2))},  # type: ignore[arg-type]
    ],
)
def test_a_state_of_the_wrong_types_is_refused_and_the_log_still_reads(
    tmp_path: Path, change: dict[str, object]
) -> None:
    path, state = read_fully(tmp_path, 50)
    # Through the cache's codec: a forged entry has a valid digest.
    meta = {"format": "f"}
    forged = decode(encode(meta, dataclasses.replace(state, **change)), meta)  # type: ignore[arg-type]
    assert forged is not None
    reader = LogReader(path)
    assert not reader.resume(forged[1])  # type: ignore[arg-type]
    assert reader.state() is None
    batch = reader.read_new()
    assert batch.error is None and reader.event_count == 50


def test_a_resumed_reader_that_cannot_continue_reads_the_log_from_its_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path, state = read_fully(tmp_path, 50)
    with open(path, "ab") as f:
        f.write(frame(line(event(50))))
    reader = LogReader(path)
    assert reader.resume(state)
    real_feed = LineDecoder.feed
    failures = []

    def feed_failing_once(self: LineDecoder, text: bytes) -> None:
        if not failures:
            failures.append(1)
            raise TypeError("a state that passed every check but cannot be continued")
        real_feed(self, text)

    monkeypatch.setattr(LineDecoder, "feed", feed_failing_once)
    batch = reader.read_new()
    assert failures and batch.error is None
    assert batch.restarted and batch.first_index == 0  # read cold, from the start
    assert [e.seq for e in batch.events] == list(range(51))


def test_starting_over_changes_the_generation(tmp_path: Path) -> None:
    path = written(tmp_path, 50)
    reader = LogReader(path)
    reader.read_new()
    generation = reader.generation
    with open(path, "ab") as f:
        f.write(frame(line(event(50))))
    reader.read_new()
    assert reader.generation == generation  # grew: the same run of the reader
    copy = path.with_name("copy")
    copy.write_bytes(path.read_bytes())
    os.replace(copy, path)
    reader.read_new()
    assert reader.generation != generation  # another file, as many events


def test_a_head_written_over_after_the_read_gives_no_state(tmp_path: Path) -> None:
    path = written(tmp_path, 50)
    reader = LogReader(path)
    reader.read_new()
    data = path.read_bytes()
    with open(path, "r+b") as f:  # the same file and end; its first bytes are not
        f.write(bytes([data[0] ^ 0xFF]))
    assert reader.state() is None  # the counts describe bytes no longer there
