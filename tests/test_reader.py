"""LogReader: incremental, read-only decoding of real multi-frame zstd and plain logs."""

from __future__ import annotations

import builtins
import contextlib
import json
import os
import stat
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dsh_task_gantt.events import EventRun, LogEvent, event_count
from dsh_task_gantt.fold import BULK_TYPES, RUN_MARKS, UNREAD_DATA, fold_lane
from dsh_task_gantt.logs.frames import walk_frames
from dsh_task_gantt.logs.reader import (
    LogReader,
    ReadBatch,
    line_decoder,
    log_reader,
    read_header,
    zstd_batches,
)
from dsh_task_gantt.logs.reader import ahead as ahead_thread
from tests.kit.logwriting import (
    T0,
    batch,
    event,
    frame,
    header,
    line,
    record_decoded_frames,
    skippable,
    stream_frame,
    write_session,
    zstd_log,
)


def events_of(n: int, start: int = 0) -> list[dict[str, Any]]:
    kinds = ["turn/start", "assistant/message", "tool/call", "tool/result", "turn/end"]
    return [
        event(i, kinds[i % len(kinds)], {"turn": i, "text": "x" * (i % 50)})
        for i in range(start, start + n)
    ]


def as_tuples(events: list[LogEvent]) -> list[tuple[str, int, int | None, Any, int]]:
    return [(e.type, e.seq, e.time, e.data, e.position) for e in events]


def full_read(path: Path, **kw: Any) -> ReadBatch:
    return LogReader(path, **kw).read_new()


def test_every_frame_of_a_500_frame_log_is_decoded(tmp_path: Path) -> None:
    evs = events_of(1500)
    path = write_session(tmp_path, "s-lead", evs, per_frame=3)
    # The reference: python-zstandard reading across all frames.
    reference = (
        zstandard.ZstdDecompressor()
        .decompressobj(read_across_frames=True)
        .decompress(path.read_bytes())
        .splitlines()
    )
    assert len(walk_frames(path.read_bytes()).frames) == 501
    assert len(reference) == 1501

    result = full_read(path)
    assert result.error is None and result.garbage is None and result.torn_tail_bytes == 0
    assert result.header is not None and result.header.id == "s-lead"
    assert result.header.created_at == T0
    assert result.total_events == len(result.events) == 1500
    assert [e.seq for e in result.events] == list(range(1500))
    assert result.events[-1].data == evs[-1]["data"]
    assert [orjson.loads(r) for r in reference[1:]] == [
        {"type": e.type, "seq": e.seq, "time": e.time, "data": e.data} for e in result.events
    ]


@pytest.mark.parametrize("kind", ["content-size", "no-content-size", "stream", "checksum"])
def test_frames_with_and_without_content_size(tmp_path: Path, kind: str) -> None:
    makers = {
        "content-size": frame,
        "no-content-size": lambda b: frame(b, content_size=False),
        "stream": stream_frame,
        "checksum": lambda b: frame(b, checksum=True),
    }
    make = makers[kind]
    evs = events_of(40)
    data = make(line(header())) + b"".join(make(batch(evs[i : i + 7])) for i in range(0, 40, 7))
    path = tmp_path / "session.v4.jsonl.zstd"
    path.write_bytes(data)
    result = full_read(path)
    assert [e.seq for e in result.events] == list(range(40))
    assert result.torn_tail_bytes == 0 and result.garbage is None


def test_a_torn_last_frame_at_every_byte_is_never_half_read(tmp_path: Path) -> None:
    first = [line(header()), batch(events_of(3))]
    last = frame(batch(events_of(4, start=3)), checksum=True)
    body = zstd_log(first)
    path = tmp_path / "session.v4.jsonl.zstd"
    for cut in range(len(last)):
        path.write_bytes(body + last[:cut])
        reader = LogReader(path)
        before = reader.read_new()
        assert [e.seq for e in before.events] == [0, 1, 2], cut
        assert before.torn_tail_bytes == cut and before.garbage is None
        with path.open("ab") as f:  # the writer finishes its append
            f.write(last[cut:])
        after = reader.read_new()
        assert not after.restarted
        assert after.first_index == 3
        assert [e.seq for e in after.events] == [3, 4, 5, 6], cut
        assert after.torn_tail_bytes == 0


def test_read_new_returns_only_new_events(tmp_path: Path) -> None:
    path = write_session(tmp_path, "s", events_of(10), per_frame=2)
    reader = LogReader(path)
    assert reader.read_new().total_events == 10
    again = reader.read_new()
    assert again.events == [] and again.first_index == 10 and again.total_events == 10
    with path.open("ab") as f:
        f.write(frame(batch(events_of(2, start=10))))
    new = reader.read_new()
    assert [e.seq for e in new.events] == [10, 11]
    assert [e.position for e in new.events] == [10, 11]
    assert new.header is not None and new.header.id == "s"


def test_only_new_frames_are_decoded(tmp_path: Path) -> None:
    path = write_session(tmp_path, "s", events_of(50), per_frame=5)
    reader = LogReader(path)
    reader.read_new()
    # Spoil the header frame in place (same size, same inode): a reader that decoded
    # the old frames again would see garbage there.
    raw = bytearray(path.read_bytes())
    raw[0:4] = b"\0\0\0\0"
    with path.open("r+b") as f:
        f.write(raw)
        f.seek(0, os.SEEK_END)
        f.write(frame(batch(events_of(1, start=50))))
    new = reader.read_new()
    assert new.garbage is None and not new.restarted
    assert [e.seq for e in new.events] == [50]


lines_strategy = st.lists(
    st.one_of(
        st.builds(
            lambda t, d: {"type": t, "seq": 0, "time": T0, "data": d},
            st.sampled_from(["turn/start", "assistant/message", "tool/result", "user/message"]),
            st.one_of(
                st.none(),
                st.text(max_size=30),
                st.dictionaries(st.text(max_size=5), st.integers(-(2**60), 2**60)),
            ),
        ),
        st.just("not json"),
    ),
    min_size=1,
    max_size=25,
)


@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(objs=lines_strategy, data=st.data(), lazy=st.booleans())
def test_incremental_reads_after_arbitrary_appends_equal_a_full_read(
    tmp_path_factory: pytest.TempPathFactory, objs: list[Any], data: st.DataObject, lazy: bool
) -> None:
    text = line(header()) + b"".join(
        (o.encode() + b"\n") if isinstance(o, str) else line({**o, "seq": i})
        for i, o in enumerate(objs)
    )
    # Writer batches: arbitrary splits of the text, even inside a line.
    splits = sorted(data.draw(st.sets(st.integers(1, len(text) - 1), max_size=6)))
    payloads = [text[a:b] for a, b in zip([0, *splits], [*splits, len(text)], strict=True)]
    kinds = data.draw(st.lists(st.booleans(), min_size=len(payloads), max_size=len(payloads)))
    blob = b"".join(frame(p, content_size=k) for p, k in zip(payloads, kinds, strict=True))
    # Reads happen at arbitrary byte positions, often inside a frame.
    read_points = [*sorted(data.draw(st.sets(st.integers(0, len(blob)), max_size=6))), len(blob)]

    path = tmp_path_factory.mktemp("inc") / "session.v4.jsonl.zstd"
    path.write_bytes(b"")
    skip = BULK_TYPES if lazy else frozenset()
    reader = LogReader(path, skip_types=skip, checkpoint_every=2)
    ahead = data.draw(st.booleans())  # decompress in the second thread, or in line
    got: list[LogEvent] = []
    bad = 0
    written = 0
    for point in read_points:
        with path.open("ab") as f:
            f.write(blob[written:point])
        written = point
        with _ahead_from(0 if ahead else None):
            result = reader.read_new()
        assert result.first_index == len(got) and not result.restarted
        got += result.events
        bad += result.bad_lines
    whole = full_read(path, skip_types=skip)
    assert as_tuples(got) == as_tuples(whole.events)
    assert bad == whole.bad_lines == sum(1 for o in objs if isinstance(o, str))
    assert len(whole.events) == len(objs) - bad
    # And any range equals the slice of the full read, from any checkpoint.
    lo = data.draw(st.integers(0, len(got)))
    hi = data.draw(st.integers(lo, len(got)))
    assert as_tuples(reader.read_range(lo, hi)) == as_tuples(whole.events[lo:hi])


def test_a_replaced_file_is_read_again_from_the_start(tmp_path: Path) -> None:
    path = write_session(tmp_path, "s", events_of(10))
    reader = LogReader(path)
    reader.read_new()
    other = tmp_path / "other.zstd"
    other.write_bytes(zstd_log([line(header("s")), batch(events_of(12, start=100))]))
    os.replace(other, path)  # new inode, bigger file
    result = reader.read_new()
    assert result.restarted and result.first_index == 0
    assert [e.seq for e in result.events] == list(range(100, 112))
    assert reader.read_new().restarted is False


def test_a_shrunk_file_is_read_again_from_the_start(tmp_path: Path) -> None:
    path = write_session(tmp_path, "s", events_of(10))
    reader = LogReader(path)
    reader.read_new()
    with path.open("r+b") as f:  # same inode, truncated to the first two events
        f.truncate(len(zstd_log([line(header("s")), batch(events_of(1)), batch(events_of(1, 1))])))
    result = reader.read_new()
    assert result.restarted and [e.seq for e in result.events] == [0, 1]


def test_a_file_rewritten_in_place_is_read_again(tmp_path: Path) -> None:
    path = write_session(tmp_path, "s", events_of(10))
    reader = LogReader(path)
    reader.read_new()
    # Same inode, bigger, but different bytes before the remembered offset.
    old_size = path.stat().st_size
    new = zstd_log([line(header("s")), *(batch([e]) for e in events_of(40, start=500))])
    assert len(new) > old_size
    with path.open("r+b") as f:
        f.write(new)
    result = reader.read_new()
    assert result.restarted
    assert [e.seq for e in result.events] == list(range(500, 540))


def test_bad_lines_are_skipped_and_counted_and_positions_stay_dense(tmp_path: Path) -> None:
    lines = [
        line(header()),
        line(event(0)),
        b"not json\n",
        b"[1, 2]\n",
        b'{"type": 1}\n',
        b'{"no": "type"}\n',
        b"\n",  # blank: nothing lost, not counted
        b'{"type":"turn/end","time":5}\n',  # no seq: its position stands in
        line(event(7)),
    ]
    path = tmp_path / "session.v4.jsonl.zstd"
    path.write_bytes(zstd_log([b"".join(lines[:4]), b"".join(lines[4:])]))
    result = full_read(path)
    assert result.bad_lines == result.total_bad_lines == 4
    assert [(e.type, e.seq, e.position) for e in result.events] == [
        ("turn/start", 0, 0),
        ("turn/end", 1, 1),
        ("turn/start", 7, 2),
    ]


def test_a_first_line_that_is_not_a_header_is_an_event(tmp_path: Path) -> None:
    path = tmp_path / "session.v4.jsonl"
    path.write_bytes(batch(events_of(2)))
    result = full_read(path)
    assert result.header is None and [e.seq for e in result.events] == [0, 1]
    assert read_header(path) is None


def test_plain_jsonl_stops_before_a_line_without_newline(tmp_path: Path) -> None:
    path = write_session(tmp_path, "s", events_of(5), plain=True)
    reader = LogReader(path)
    assert reader.read_new().total_events == 5
    partial = line(event(5))
    with path.open("ab") as f:
        f.write(partial[:-1])  # the writer has not written the newline yet
    torn = reader.read_new()
    assert torn.events == [] and torn.torn_tail_bytes == len(partial) - 1
    with path.open("ab") as f:
        f.write(b"\n")
    assert [e.seq for e in reader.read_new().events] == [5]


def test_plain_jsonl_bigger_than_a_read_chunk(tmp_path: Path) -> None:
    big = [event(i, "assistant/message", {"text": "y" * 9000}) for i in range(1000)]
    path = write_session(tmp_path, "s", big, plain=True)
    reader = LogReader(path, checkpoint_every=50)
    result = reader.read_new()
    assert [e.seq for e in result.events] == list(range(1000))
    assert len(reader.checkpoints) > 10
    assert as_tuples(reader.read_range(777, 790)) == as_tuples(result.events[777:790])


def test_skippable_frames_are_passed_over(tmp_path: Path) -> None:
    path = tmp_path / "session.v4.jsonl.zstd"
    path.write_bytes(
        skippable(b"index")
        + frame(line(header()))
        + skippable(b"", nibble=7)
        + frame(batch(events_of(2)))
        + skippable(b'{"type":"turn/start","seq":99}\n')
    )
    result = full_read(path)
    assert result.header is not None
    assert [e.seq for e in result.events] == [0, 1]
    assert result.garbage is None and result.torn_tail_bytes == 0


def test_garbage_is_reported_and_nothing_after_it_is_guessed(tmp_path: Path) -> None:
    good = zstd_log([line(header()), batch(events_of(3))])
    path = tmp_path / "session.v4.jsonl.zstd"
    path.write_bytes(good + b"GARBAGE!" + frame(batch(events_of(1, start=3))))
    reader = LogReader(path)
    result = reader.read_new()
    assert [e.seq for e in result.events] == [0, 1, 2]
    assert result.garbage is not None and f"at byte {len(good)}" in result.garbage
    assert result.torn_tail_bytes == 0
    again = reader.read_new()  # still stuck there, still said
    assert again.events == [] and again.garbage == result.garbage


def test_a_frame_that_does_not_decompress_is_garbage(tmp_path: Path) -> None:
    head = frame(line(header()))
    spoilt = bytearray(frame(batch(events_of(20)), checksum=True))
    spoilt[-1] ^= 0xFF  # wrong content checksum
    path = tmp_path / "session.v4.jsonl.zstd"
    path.write_bytes(head + bytes(spoilt))
    result = full_read(path)
    assert result.events == []
    assert result.garbage is not None and "does not decompress" in result.garbage


def test_a_line_split_across_frames_is_joined(tmp_path: Path) -> None:
    text = line(header()) + batch(events_of(3))
    cut = len(text) - 20
    path = tmp_path / "session.v4.jsonl.zstd"
    path.write_bytes(frame(text[:cut]) + frame(text[cut:]))
    assert [e.seq for e in full_read(path).events] == [0, 1, 2]


def test_a_finished_frame_without_final_newline_is_complete(tmp_path: Path) -> None:
    path = tmp_path / "session.v4.jsonl.zstd"
    path.write_bytes(frame(line(header())) + frame(line(event(0))[:-1]))
    assert [e.seq for e in full_read(path).events] == [0]


def test_the_reader_never_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_session(tmp_path, "s", events_of(30), per_frame=4)
    with path.open("ab") as f:
        f.write(frame(batch(events_of(2, start=30)))[:-3])  # a torn tail for good measure
    d = path.parent
    modes: list[str] = []
    real_open = builtins.open

    def spying_open(file: Any, mode: str = "r", *a: Any, **kw: Any) -> Any:
        modes.append(mode)
        return real_open(file, mode, *a, **kw)

    monkeypatch.setattr(builtins, "open", spying_open)
    before = sorted(p.name for p in d.iterdir())
    content = path.read_bytes()
    mtime = path.stat().st_mtime_ns
    os.chmod(path, 0o444)
    os.chmod(d, 0o555)
    try:
        modes.clear()
        reader = LogReader(path)
        assert reader.read_new().total_events == 30
        assert len(reader.read_range(5, 9)) == 4
        assert read_header(path) is not None
        assert modes and set(modes) == {"rb"}
    finally:
        os.chmod(d, 0o755)
        os.chmod(path, 0o644)
    assert sorted(p.name for p in d.iterdir()) == before
    assert path.read_bytes() == content and path.stat().st_mtime_ns == mtime


def test_read_range_from_a_checkpoint_equals_the_slice_of_a_full_read(tmp_path: Path) -> None:
    path = write_session(tmp_path, "s", events_of(600), per_frame=3)
    reader = LogReader(path, checkpoint_every=32)
    full = reader.read_new().events
    # A checkpoint goes at the start of a batch of frames decompressed together (at
    # most BATCH_FRAMES frames), at least checkpoint_every events after the last one.
    per_batch = max(32, 3 * zstd_batches.BATCH_FRAMES)
    assert len(reader.checkpoints) >= 600 // per_batch
    for lo, hi in [(0, 5), (31, 33), (500, 600), (599, None), (250, 251)]:
        assert as_tuples(reader.read_range(lo, hi)) == as_tuples(full[lo:hi])
    assert reader.read_range(600) == [] and reader.read_range(10, 5) == []


def test_a_log_read_after_each_append_keeps_sparse_checkpoints(tmp_path: Path) -> None:
    # A live log is read after each append, one frame at a time: a checkpoint per
    # read would grow with the day; the reader keeps them sparse, and every older
    # range (from the last read's count or any other) still reads as in a full read.
    path = write_session(tmp_path, "s", events_of(5), per_frame=5)
    reader = LogReader(path, checkpoint_every=32)
    reader.read_new()
    counts = [reader.event_count]
    for start in range(5, 600, 3):
        with path.open("ab") as f:
            f.write(frame(batch(events_of(3, start))))
        assert reader.read_new().first_index == counts[-1]
        counts.append(reader.event_count)
    assert counts[-1] == 602
    points = reader.checkpoints
    assert len(points) <= 2 * 602 // 32 + 2
    assert all(
        b.event_index - a.event_index >= 32 for a, b in zip(points, points[2:], strict=False)
    )
    # The last read's start is still a checkpoint: resuming there decodes only new frames.
    assert points[-1].event_index == counts[-2]
    full = full_read(path).events
    for lo in [0, 7, 100, 333, counts[-3], counts[-2], 601]:
        assert as_tuples(reader.read_range(lo)) == as_tuples(full[lo:])


def test_read_range_starts_at_a_checkpoint_not_at_the_file_start(tmp_path: Path) -> None:
    path = write_session(tmp_path, "s", events_of(600), per_frame=3)
    reader = LogReader(path, checkpoint_every=32)
    full = reader.read_new().events
    late = reader.checkpoints[-1]
    # Spoil everything before the last checkpoint (in place, same size): only a
    # reader that starts at the checkpoint still gets the right events.
    with path.open("r+b") as f:
        f.write(b"\0" * late.offset)
    assert as_tuples(reader.read_range(late.event_index, 600)) == as_tuples(
        full[late.event_index :]
    )


def test_bulk_skip_mode_keeps_type_seq_and_time(tmp_path: Path) -> None:
    evs = events_of(50)
    path = write_session(tmp_path, "s", evs, per_frame=5)
    full = full_read(path).events
    lazy = full_read(path, skip_types=BULK_TYPES).events
    assert [(e.type, e.seq, e.time) for e in lazy] == [(e.type, e.seq, e.time) for e in full]
    for f, z in zip(full, lazy, strict=True):
        if f.type in BULK_TYPES:
            assert z.data is None
        else:
            assert z.data == f.data
    # A bulk type written another way is parsed in full; the data is kept.
    odd = tmp_path / "odd.jsonl"
    odd.write_bytes(
        line(header()) + b'{"seq": 3, "type": "tool/result", "time": 9, "data": {"a": 1}}\n'
    )
    (only,) = full_read(odd, skip_types=BULK_TYPES).events
    assert (only.type, only.seq, only.time, only.data) == ("tool/result", 3, 9, {"a": 1})


def test_errors_become_reasons_without_the_path(tmp_path: Path) -> None:
    missing = tmp_path / "secret-dir" / "session.v4.jsonl.zstd"
    result = LogReader(missing).read_new()
    assert result.error is not None and "secret-dir" not in result.error
    assert result.events == [] and result.total_events == 0
    assert LogReader(tmp_path).read_new().error is not None  # a directory
    assert LogReader(missing).read_range(0, 5) == []


def test_a_file_that_vanishes_keeps_what_was_known(tmp_path: Path) -> None:
    path = write_session(tmp_path, "s", events_of(4))
    reader = LogReader(path)
    reader.read_new()
    path.unlink()
    result = reader.read_new()
    assert result.error is not None and result.total_events == 4 and result.events == []


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_permission_denied_is_a_reason(tmp_path: Path) -> None:
    path = write_session(tmp_path, "s", events_of(4))
    path.chmod(0)
    try:
        result = LogReader(path).read_new()
    finally:
        path.chmod(stat.S_IRUSR | stat.S_IWUSR)
    assert result.error == "permission denied reading the log file"


def test_header_accepts_fields_under_data(tmp_path: Path) -> None:
    path = tmp_path / "session.v4.jsonl"
    path.write_bytes(
        line({"type": "session", "data": {"id": "x", "isSeeded": True, "inheritedEventCount": 3}})
    )
    h = full_read(path).header
    assert h is not None and h.id == "x" and h.is_seeded and h.inherited_event_count == 3


def test_reading_from_the_last_count_decodes_only_the_new_frames(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_session(tmp_path, "s", events_of(100), per_frame=1)
    reader = LogReader(path)  # one checkpoint per 256 events by default
    reader.read_new()
    with path.open("ab") as f:
        f.write(frame(batch(events_of(2, start=100))))
    reader.read_new()
    decoded = record_decoded_frames(monkeypatch)
    assert [e.seq for e in reader.read_range(100)] == [100, 101]
    assert len(decoded) == 1


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**60), 2**60)
    | st.floats(allow_nan=False)
    | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=6,
)


@settings(max_examples=200)
@given(
    obj=st.one_of(
        json_values,
        st.fixed_dictionaries(
            {},
            optional={
                "type": json_values | st.text(max_size=8),
                "seq": json_values,
                "time": json_values,
                "data": json_values,
            },
        ),
    ),
    position=st.integers(0, 1000),
)
def test_the_fast_line_decoder_agrees_with_the_event_model(obj: Any, position: int) -> None:
    from dsh_task_gantt.events import parse_line

    raw = orjson.dumps(obj)
    assert line_decoder.parse_event_line(raw, position) == parse_line(raw, position)


# -- runs mode (read_new(runs=True)): the fold's fast path ---------------------------

RUN_TYPES = [
    "turn/start",
    "step/start",
    "step/end",
    "assistant/message",
    "tool/result",
    "tool/call",
    "user/message",
]

run_lines_strategy = st.lists(
    st.one_of(
        st.builds(
            lambda t, d, big: {"type": t, "seq": 2**53 + 5 if big else 0, "time": T0, "data": d},
            st.sampled_from(RUN_TYPES),
            st.one_of(
                st.none(),
                st.text(max_size=20),
                st.builds(
                    lambda n: {"name": n, "arguments": "{}"},
                    st.sampled_from(["team_task_update", "team_task_create", "read_file"]),
                ),
            ),
            st.booleans(),
        ),
        st.just("not json"),
        st.just("   "),
        st.just('{"type":"tool/result","seq":1,"time":2,'),  # a skippable prefix, junk after
    ),
    min_size=1,
    max_size=30,
)


@contextlib.contextmanager
def _ahead_from(min_bytes: int | None) -> Iterator[None]:
    """Decompress ahead for reads of more than ``min_bytes`` new bytes (``None``: never)."""
    saved = log_reader.AHEAD_MIN_BYTES
    log_reader.AHEAD_MIN_BYTES = 1 << 62 if min_bytes is None else min_bytes
    try:
        yield
    finally:
        log_reader.AHEAD_MIN_BYTES = saved


def _runs_read(path: Path, **kw: Any) -> LogReader:
    return LogReader(path, skip_types=UNREAD_DATA, run_marks=RUN_MARKS, **kw)


@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(objs=run_lines_strategy, data=st.data())
def test_runs_mode_folds_like_one_event_per_line_after_arbitrary_appends(
    tmp_path_factory: pytest.TempPathFactory, objs: list[Any], data: st.DataObject
) -> None:
    """Reads in runs mode, at arbitrary byte positions, fold to what a plain full read
    folds to, with the same counts, bad lines, offsets and checkpoints."""
    text = line(header()) + b"".join(
        (o.encode() + b"\n")
        if isinstance(o, str)
        else line({**o, "seq": o["seq"] or i, "time": T0 + i})
        for i, o in enumerate(objs)
    )
    splits = sorted(data.draw(st.sets(st.integers(1, len(text) - 1), max_size=5)))
    payloads = [text[a:b] for a, b in zip([0, *splits], [*splits, len(text)], strict=True)]
    blob = b"".join(frame(p) for p in payloads)
    read_points = [*sorted(data.draw(st.sets(st.integers(0, len(blob)), max_size=5))), len(blob)]

    path = tmp_path_factory.mktemp("runs") / "session.v4.jsonl.zstd"
    path.write_bytes(b"")
    runs_reader = _runs_read(path, checkpoint_every=2)
    plain_reader = LogReader(path, skip_types=UNREAD_DATA, checkpoint_every=2)
    # The runs reader sometimes decompresses ahead in its second thread, the plain one never.
    ahead = data.draw(st.booleans())
    items: list[Any] = []
    written = 0
    for point in read_points:
        with path.open("ab") as f:
            f.write(blob[written:point])
        written = point
        with _ahead_from(0 if ahead else None):
            got = runs_reader.read_new(runs=True)
        with _ahead_from(None):
            plain = plain_reader.read_new()
        assert got.first_index == plain.first_index == event_count(items)
        assert (got.total_events, got.bad_lines, got.offset) == (
            plain.total_events,
            plain.bad_lines,
            plain.offset,
        )
        assert event_count(got.events) == len(plain.events)
        assert runs_reader.checkpoints == plain_reader.checkpoints
        items += got.events
    # One event per line, the same lines skipped (a skipped line is not validated
    # beyond its prefix, in either mode).
    whole = LogReader(path, skip_types=UNREAD_DATA).read_new()
    assert fold_lane(items) == fold_lane(whole.events)
    assert fold_lane(items).events_seen == whole.total_events


def test_runs_keep_task_calls_and_unsafe_numbers_as_events(tmp_path: Path) -> None:
    objs = [
        event(1, "tool/call", {"name": "team_task_update", "arguments": "{}"}),
        event(2, "tool/call", {"name": "read_file"}),
        event(3, "step/start"),
        event(2**53 + 1, "step/end"),  # past the safe range: parsed, seq falls back
        event(5, "assistant/message", {"text": "team_task_ in the text"}),
        event(6, "step/end"),
    ]
    path = write_session(tmp_path, "s", objs)
    batch_ = _runs_read(path).read_new(runs=True)
    *plain, run = batch_.events
    # An assistant message is never part of a run: its token use is read (a short
    # line whole, a long one at its ends).
    assert [(e.type, e.seq) for e in plain] == [
        ("tool/call", 1),
        ("step/end", 3),
        ("assistant/message", 5),
    ]
    assert plain[0].data == objs[0]["data"]
    assert run == EventRun(3, (2, 3, 6), T0 + 60, (("step/end", 6), ("step/start", 3)))
    assert batch_.total_events == 6


def test_runs_keep_every_spelling_of_a_marker_and_skip_near_misses(tmp_path: Path) -> None:
    """A line of a marker type is an event exactly when it holds one of its markers
    (found through shared needles: ``team_task_``, ``prompt``)."""
    brief = orjson.dumps({"name": "scout", "prompt": "look"}).decode()
    objs = [
        event(1, "tool/call", {"name": "team_task_create", "arguments": "{}"}),
        event(2, "tool/call", {"name": "team_task_list", "arguments": "{}"}),  # no marker
        event(3, "tool/call", {"name": "spawn_teammate", "arguments": brief}),  # \"prompt\"
        event(4, "tool/call", {"name": "task", "arguments": {"prompt": "go"}}),  # "prompt"
        event(5, "tool/call", {"name": "read_file", "arguments": '{"prompts":1}'}),
        event(6, "assistant/chunk", {"chunk": {"type": "text", "text": "the usage"}}),
        event(7, "assistant/chunk", {"chunk": {"type": "usage", "usage": "junk"}}),
    ]
    path = write_session(tmp_path, "s", objs)
    *plain, run = _runs_read(path).read_new(runs=True).events
    assert [e.seq for e in plain] == [1, 3, 4, 7]
    assert [e.data for e in plain] == [objs[i]["data"] for i in (0, 2, 3, 6)]
    assert run.seqs == (2, 5, 6)


def _big_log(tmp_path: Path, frames: int = 60) -> tuple[Path, list[dict[str, Any]]]:
    objs = [
        event(i, ("assistant/message", "step/start", "turn/start")[i % 3], {"text": "y" * 6000})
        for i in range(frames * 10)
    ]
    return write_session(tmp_path, "s", objs, per_frame=10), objs


def test_decompressing_ahead_gives_what_reading_in_line_gives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path, objs = _big_log(tmp_path)
    assert path.stat().st_size < log_reader.AHEAD_MIN_BYTES  # compresses well
    in_line = _runs_read(path).read_new(runs=True)
    monkeypatch.setattr(log_reader, "AHEAD_MIN_BYTES", 0)
    reader = _runs_read(path)
    ahead = reader.read_new(runs=True)
    assert ahead == in_line and ahead.total_events == len(objs)
    assert reader.read_range(7, 9) == LogReader(path, skip_types=UNREAD_DATA).read_new().events[7:9]


def test_a_bad_frame_inside_a_batch_is_garbage_at_that_frame(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    objs = [event(i, "turn/start") for i in range(40)]
    frames_ = [frame(line(header()))] + [frame(batch(objs[i : i + 4])) for i in range(0, 40, 4)]
    broken = bytearray(frames_[6])
    broken[-3] ^= 0xFF  # the content size still says how much: a batch is tried, then fails
    frames_[6] = bytes(broken)
    path = tmp_path / "session.v4.jsonl.zstd"
    path.write_bytes(b"".join(frames_))
    bad_at = sum(map(len, frames_[:6]))
    for ahead_min in (0, 1 << 40):
        monkeypatch.setattr(log_reader, "AHEAD_MIN_BYTES", ahead_min)
        got = LogReader(path).read_new()
        assert got.garbage == f"the zstd frame at byte {bad_at} does not decompress"
        assert [e.seq for e in got.events] == list(range(20)) and got.offset == bad_at


def test_a_reader_stopped_early_stops_its_decompressing_thread() -> None:
    produced: list[int] = []
    worked: list[int] = []

    def items() -> Any:
        for i in range(1000):
            produced.append(i)
            yield i

    def work(i: int) -> int:
        worked.append(i)
        return i * 10

    ahead = ahead_thread.run_ahead(items(), work)
    assert next(ahead) == (0, 0)
    ahead.close()  # the consumer leaves: the worker must not run on
    assert len(produced) <= 3 and len(worked) <= 2
    assert not any(t.name == "dsh-gantt-zstd" for t in threading.enumerate())


def test_decompressing_ahead_keeps_the_order_of_the_jobs() -> None:
    assert list(ahead_thread.run_ahead(iter(range(50)), lambda i: -i)) == [
        (i, -i) for i in range(50)
    ]


def test_an_error_while_decompressing_ahead_is_raised_to_the_reader() -> None:
    def items() -> Any:
        yield 1
        raise OSError(5, "boom")

    with pytest.raises(OSError):
        list(ahead_thread.run_ahead(items(), lambda i: i))

    def failing(i: int) -> int:
        raise ValueError(f"job {i}")

    with pytest.raises(ValueError, match="job 0"):
        list(ahead_thread.run_ahead(iter(range(3)), failing))


def test_reading_knows_no_fold() -> None:
    """The reader is a floor below the fold: no module of ``logs`` imports it, and the
    reader re-exports none of its names (the fold's BULK_TYPES is imported from the
    fold by whoever needs it)."""
    import ast

    import dsh_task_gantt.logs as logs_package
    from dsh_task_gantt.logs import reader

    root = Path(logs_package.__file__).parent
    importing = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                module = "." * node.level + (node.module or "")
                if "fold" in module.split("."):
                    importing.append(f"{path.relative_to(root)}: {module}")
    assert importing == []
    assert not hasattr(reader, "BULK_TYPES") and "BULK_TYPES" not in reader.__all__


@pytest.mark.parametrize("runs", [True, False], ids=["runs", "events"])
def test_a_seq_or_time_with_a_leading_zero_is_a_bad_line_not_a_failed_read(
    tmp_path: Path, runs: bool
) -> None:
    """JSON has no leading zeros: such a line is malformed, counted as a bad line, and the
    rest of the log is read (the fast paths once matched it and then failed the whole
    read in the decode of its digits)."""
    path = write_session(tmp_path, "s", [])
    lines = [
        b'{"type":"turn/start","seq":0,"time":1000,"data":{"turn":1}}\n',
        b'{"type":"step/start","seq":01,"time":1001,"data":{"turn":1,"step":1}}\n',
        b'{"type":"assistant/chunk","seq":002,"time":1002,"data":{"turn":1,"step":1,'
        b'"chunk":{"type":"usage","usage":{"inputTokens":1,"outputTokens":2}}}}\n',
        b'{"type":"assistant/chunk","seq":3,"time":01003,"data":{"turn":1,"step":1,'
        b'"chunk":{"type":"text","text":"x"}}}\n',
        b'{"type":"turn/end","seq":4,"time":1004,"data":{"turn":1}}\n',
    ]
    with path.open("ab") as f:
        f.write(frame(b"".join(lines)))
    reader = LogReader(path, skip_types=UNREAD_DATA, run_marks=RUN_MARKS)
    got = reader.read_new(runs=runs)
    assert got.bad_lines == 3
    fold = fold_lane(got.events)
    assert fold.events_seen == 2


# -- token use in bulk: the runs mode against the line-by-line read ------------------

_USAGE_KEYS = ["inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens"]
_TOKEN_COUNT = st.one_of(
    st.integers(0, 10**6),
    st.integers(0, 10**6),
    st.sampled_from([-1, 2**53, 10**30, 1.5, "7", None, True, [3], {"n": 1}, 0]),
)
#: Usage objects: DSH's key order (the bulk's), other orders, odd values, not objects.
_TOKEN_USAGE = st.one_of(
    st.lists(st.sampled_from([*_USAGE_KEYS, "reasoningTokens"]), unique=True).flatmap(
        lambda keys: st.fixed_dictionaries({k: _TOKEN_COUNT for k in keys})
    ),
    st.lists(st.sampled_from([*_USAGE_KEYS, "reasoningTokens"]), unique=True).flatmap(
        lambda keys: st.fixed_dictionaries(
            {
                k: st.integers(0, 10**9)
                for k in sorted(keys, key=[*_USAGE_KEYS, "reasoningTokens"].index)
            }
        )
    ),
    st.builds(
        lambda i, o, r: {"inputTokens": i, "outputTokens": o, "cacheReadTokens": r},
        st.integers(0, 10**6),
        st.integers(0, 10**6),
        st.integers(0, 10**9),
    ),
    st.sampled_from([None, "junk", [1, 2]]),
)
_SOURCE = st.sampled_from([None, {"provider": "p", "model": "m"}, {"model": "n"}, {"x": 1}])


def _token_line(kind: str, turn: int, step: int, usage: Any, source: Any, long: bool) -> Any:
    body = {
        "role": "assistant",
        "content": [{"type": "text", "text": "usage " * (900 if long else 3)}],
    }
    if kind == "chunk":
        return {"turn": turn, "step": step, "chunk": {"type": "usage", "usage": usage}}
    if kind == "text chunk":
        return {"turn": turn, "step": step, "chunk": {"type": "text", "text": '"usage"'}}
    message = {**body, "source": source} if source is not None else body
    if kind == "message, usage first":
        data = {"usage": usage, "turn": turn, "step": step, "message": message}
        if source is not None:
            data["message"] = {"source": source, **body}
        return data
    data = {"turn": turn, "step": step, "message": message}
    if usage is not None:
        data["usage"] = usage
    return data


_token_lines = st.lists(
    st.one_of(
        st.tuples(
            st.sampled_from(["chunk", "text chunk", "message", "message, usage first"]),
            st.integers(0, 3),
            st.integers(0, 2),
            _TOKEN_USAGE,
            st.booleans(),
        ),
        st.sampled_from(["step/start", "junk", "cut"]),
    ),
    min_size=1,
    max_size=40,
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(rows=_token_lines, data=st.data())
def test_token_use_in_bulk_folds_like_the_line_by_line_read(
    tmp_path_factory: pytest.TempPathFactory, rows: list[Any], data: st.DataObject
) -> None:
    """DSH's usage chunks and messages read in bulk (runs mode) fold to what reading them
    line by line folds to: hostile counts, other spellings and key orders, repeated
    steps, a chunk and a message for one step, lines cut short, frames cut anywhere."""
    # One source (or none) for all the log's messages: the bulk looks for the lane's
    # model in a unit's last message only, so a log whose later messages name none,
    # or another, can differ there (not its token counts).
    named = data.draw(_SOURCE)
    lines: list[bytes] = [line(header())]
    for i, row in enumerate(rows):
        seq = i  # two token lines of one seq: see the fold's own tests
        if row == "step/start":
            again = data.draw(st.integers(0, 60))  # a repeated seq, or not
            lines.append(line(event(again, "step/start", {"turn": 1, "step": 1}, T0 + i)))
        elif row == "junk":
            lines.append(b"not json\n")
        elif row == "cut":  # a token line's prefix, then junk
            lines.append(
                b'{"type":"assistant/chunk","seq":%d,"time":%d,"data":{"turn":1,' % (seq, T0)
            )
            lines[-1] += b'"step":1,"chunk":{"type":"usage","usage":{"inputTokens":1}\n'
        else:
            kind, turn, step, usage, long = row
            etype = "assistant/chunk" if "chunk" in kind else "assistant/message"
            obj = event(seq, etype, _token_line(kind, turn, step, usage, named, long), T0 + i)
            # As DSH's writer spells it (and 10^30 is no 64-bit integer for orjson).
            lines.append(json.dumps(obj, separators=(",", ":")).encode() + b"\n")
    text = b"".join(lines)
    splits = sorted(data.draw(st.sets(st.integers(1, len(text) - 1), max_size=4)))
    blob = b"".join(
        frame(text[a:b]) for a, b in zip([0, *splits], [*splits, len(text)], strict=True)
    )
    path = tmp_path_factory.mktemp("tokens") / "session.v4.jsonl.zstd"
    path.write_bytes(blob)
    runs = _runs_read(path).read_new(runs=True)
    plain = LogReader(path, skip_types=UNREAD_DATA).read_new()
    assert (runs.total_events, runs.bad_lines) == (plain.total_events, plain.bad_lines)
    assert event_count(runs.events) == len(plain.events)
    # The events the runs mode returns sit where the line-by-line read has them.
    by_position = {e.position: e for e in plain.events}
    assert all(by_position.get(e.position) == e for e in runs.events if type(e) is LogEvent)
    assert fold_lane(runs.events) == fold_lane(plain.events)
