"""The RFC 8878 frame walker: complete frames, torn tails and garbage."""

from __future__ import annotations

import os

import pytest
import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st

from dsh_task_gantt.logs import frames as frames_module
from dsh_task_gantt.logs.frames import walk_frames
from tests.kit.logwriting import frame, skippable, stream_frame

PAYLOADS = [b"", b"x\n", b"hello\n" * 50, os.urandom(200_000), b"a" * 300_000]


def frames_of_every_kind() -> list[bytes]:
    out = []
    for p in PAYLOADS:
        out += [frame(p), frame(p, content_size=False), frame(p, checksum=True), stream_frame(p)]
    out.append(skippable(b"meta"))
    out.append(skippable(b"", nibble=15))
    return out


def test_every_frame_is_found_with_its_exact_extent() -> None:
    parts = frames_of_every_kind()
    buf = b"".join(parts)
    walk = walk_frames(buf)
    assert walk.stop == "end" and walk.end == len(buf)
    assert [f.end - f.start for f in walk.frames] == [len(p) for p in parts]
    for f in walk.frames:
        if not f.skippable:
            assert (
                zstandard.ZstdDecompressor().decompressobj().decompress(buf[f.start : f.end])
                in PAYLOADS
            )


def test_content_size_is_read_from_the_header() -> None:
    sizes = [0, 1, 255, 256, 300, 65_791, 65_792, 300_000]
    buf = b"".join(frame(b"z" * n) for n in sizes)
    assert [f.content_size for f in walk_frames(buf).frames] == sizes
    assert walk_frames(frame(b"abc", content_size=False)).frames[0].content_size is None


def test_a_torn_last_frame_stops_at_its_start_for_every_cut() -> None:
    first = frame(b'{"type":"session"}\n')
    last = frame(os.urandom(5000) + b"\n", checksum=True)
    for cut in range(1, len(last)):
        walk = walk_frames(first + last[:cut])
        assert walk.stop == "torn", cut
        assert walk.end == len(first)
        assert len(walk.frames) == 1


def test_a_torn_skippable_frame() -> None:
    s = skippable(b"payload")
    for cut in range(1, len(s)):
        assert walk_frames(s[:cut]).stop == "torn"


@pytest.mark.parametrize(
    "junk",
    [b"\x00\x00\x00\x00", b'{"type":', b"\x28\xb5\x2f\xfc", b"\x99"],
)
def test_bad_magic_is_garbage_not_a_torn_tail(junk: bytes) -> None:
    good = frame(b"ok\n")
    walk = walk_frames(good + junk + frame(b"later\n"))
    assert walk.stop == "garbage"
    assert walk.end == len(good)
    assert walk.reason is not None and "magic" in walk.reason


def test_reserved_block_type_is_garbage() -> None:
    f = bytearray(frame(b"raw block\n", content_size=False))
    # Single-block frame: descriptor, window byte, then the 3-byte block header.
    f[6] |= 0b110
    walk = walk_frames(bytes(f))
    assert walk.stop == "garbage" and walk.end == 0
    assert walk.reason is not None and "reserved block type" in walk.reason


def test_reserved_header_bit_is_garbage() -> None:
    f = bytearray(frame(b"x\n"))
    f[4] |= 0x08
    assert walk_frames(bytes(f)).stop == "garbage"


def test_walk_from_an_offset() -> None:
    a, b = frame(b"a\n"), frame(b"b\n")
    walk = walk_frames(a + b, len(a))
    assert [(f.start, f.end) for f in walk.frames] == [(len(a), len(a) + len(b))]


@settings(max_examples=100)
@given(st.lists(st.binary(max_size=3000), min_size=1, max_size=8), st.data())
def test_any_prefix_is_complete_frames_then_a_torn_tail(
    payloads: list[bytes], data: st.DataObject
) -> None:
    parts = [frame(p, content_size=i % 2 == 0) for i, p in enumerate(payloads)]
    buf = b"".join(parts)
    cut = data.draw(st.integers(0, len(buf)))
    walk = walk_frames(buf[:cut])
    ends = [sum(len(p) for p in parts[: i + 1]) for i in range(len(parts))]
    expected_end = max([0, *[e for e in ends if e <= cut]])
    assert walk.end == expected_end
    assert walk.stop == ("end" if cut == expected_end else "torn")


@settings(max_examples=200)
@given(st.integers(0, len(PAYLOADS) * 4 + 1), st.data())
def test_the_fast_path_agrees_with_the_careful_walker_on_damaged_frames(
    kind: int, data: st.DataObject
) -> None:
    """``_common_frame_at`` (the hot path) either declines or finds exactly the frame
    the RFC-following ``_frame_at`` finds, however the header bytes are damaged."""
    buf = bytearray(frames_of_every_kind()[kind])
    for _ in range(data.draw(st.integers(0, 3))):
        at = data.draw(st.integers(0, min(len(buf) - 1, 24)))
        buf[at] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(0, len(buf)))
    damaged = bytes(buf[:cut])
    fast = frames_module._common_frame_at(damaged, 0, len(damaged))
    if fast is not None:
        assert fast == frames_module._frame_at(damaged, 0)


def test_the_fast_path_takes_the_frames_writers_write() -> None:
    for payload in PAYLOADS:
        for blob in (
            frame(payload),
            frame(payload, content_size=False),
            frame(payload, checksum=True),
            stream_frame(payload),
        ):
            found = frames_module._common_frame_at(blob, 0, len(blob))
            assert found is not None and found.end == len(blob)
