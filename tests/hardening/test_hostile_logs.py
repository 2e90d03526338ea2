"""Hostile logs through the whole pipeline: reader → channels → fold →
timeline → routes, over real zstd files in the real layout.

A team of three (lead, ``alpha``, ``beta``): ``beta``'s log (or the lead's, where
the fold is the target) is replaced by hostile bytes. The API always answers 200;
the damaged lane degrades with a note that names it; the rest of the team still
shows. The reader's own byte-level properties (every torn position, incremental ==
full read) live in tests/test_reader.py; the fold's hostile payloads in tests/test_fold_lane.py.
"""

from __future__ import annotations

import io
import os
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from dsh_task_gantt import host
from dsh_task_gantt.embedded import EmbeddedHost
from dsh_task_gantt.logs.reader import MAX_FRAME_BYTES
from dsh_task_gantt.plugin import apply
from tests.kit.fakehost import (
    FakeAgent,
    FakeAgents,
    FakeConnection,
    FakeContext,
    FakePersistence,
    FakeSession,
    FakeWebServer,
)
from tests.kit.fakehost import header as fake_header
from tests.kit.logwriting import T0, event, frame, header, line, session_dir, write_session

PREFIX = "/plugins/dsh-task-gantt"
LEAD, ALPHA, BETA = "lead-h", "mate-alpha", "mate-beta"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
DEEP = 100_000


def member(seq: int, member_id: str, name: str) -> dict[str, Any]:
    data = {"version": 2, "teamId": LEAD, "member": {"id": member_id, "name": name}}
    return event(seq, "team/member", data)


def turn(seq: int, turn_id: str, end: bool = False) -> dict[str, Any]:
    return event(seq, "turn/end" if end else "turn/start", {"turn": turn_id})


def lead_events() -> list[dict[str, Any]]:
    return [
        turn(0, "t0"),
        member(1, ALPHA, "alpha"),
        member(2, BETA, "beta"),
        turn(3, "t0", end=True),
    ]


def build_team(root: Path, lead_extra: list[bytes] | None = None) -> Path:
    """The team; returns the path of beta's log (the usual victim)."""
    lead_frames = [line(header(LEAD)), *(line(e) for e in lead_events()), *(lead_extra or [])]
    lead_dir = session_dir(root, LEAD)
    (lead_dir / "session.v4.jsonl.zstd").write_bytes(b"".join(frame(f) for f in lead_frames))
    write_session(
        root,
        ALPHA,
        [turn(0, "a1"), turn(1, "a1", end=True)],
        head=header(ALPHA, parentSession=LEAD),
    )
    return write_session(
        root, BETA, [turn(0, "b1"), turn(1, "b1", end=True)], head=header(BETA, parentSession=LEAD)
    )


def client_for(root: Path) -> TestClient:
    return TestClient(
        EmbeddedHost(root),
        base_url="http://127.0.0.1:8765",
        client=("127.0.0.1", 50000),
        raise_server_exceptions=False,
    )


def replace(path: Path, data: bytes) -> None:
    """A new file under the same name (new inode), as a log rotated or rewritten."""
    tmp = path.with_name(path.name + ".new")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def timeline(client: TestClient, session: str = LEAD) -> dict[str, Any]:
    response = client.get(f"{PREFIX}/api/timeline", params={"session": session})
    assert response.status_code == 200, response.text[:500]
    data: dict[str, Any] = response.json()
    return data


def lanes(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {lane["id"]: lane for lane in data["lanes"]}


def assert_rest_of_team_shows(data: dict[str, Any]) -> None:
    by_id = lanes(data)
    assert [s["id"] for s in by_id["lead"]["spans"] if s["kind"] == "turn"] == ["t0"]
    assert [s["id"] for s in by_id[ALPHA]["spans"] if s["kind"] == "turn"] == ["a1"]
    assert by_id[ALPHA]["name"] == "alpha" and by_id[BETA]["name"] == "beta"
    assert all(isinstance(note, str) for note in data["notes"])


def beta_notes(data: dict[str, Any]) -> list[str]:
    return [note for note in data["notes"] if BETA in note]


def beta_turns(data: dict[str, Any]) -> list[tuple[str, int | None]]:
    spans = lanes(data)[BETA]["spans"]
    return [(s["id"], s["end"]) for s in spans if s["kind"] == "turn"]


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> tuple[TestClient, Path]:
    """One host over one team for the properties: each example replaces beta's log,
    so each read after the first is also "a log replaced between two reads"."""
    root = tmp_path_factory.mktemp("sessions")
    victim = build_team(root)
    return client_for(root), victim


def _not_a_frame_start(data: bytes) -> bool:
    magic = int.from_bytes(data[:4], "little")
    return data[:4] != ZSTD_MAGIC and not 0x184D2A50 <= magic <= 0x184D2A5F


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    data=st.one_of(
        st.binary(max_size=600),
        st.binary(max_size=600).map(lambda b: ZSTD_MAGIC + b),  # a frame header of junk
        st.binary(max_size=300).map(lambda b: frame(line(header(BETA))) + b),
    )
)
def test_random_bytes_as_a_log_never_break_the_team(
    shared: tuple[TestClient, Path], data: bytes
) -> None:
    client, victim = shared
    replace(victim, data)
    result = timeline(client)
    assert_rest_of_team_shows(result)
    assert lanes(result)[BETA]["channel"] in ("persisted", "empty", "unreadable")
    if len(data) >= 8 and _not_a_frame_start(data):
        # Bytes that can never be a log are named, never passed off as an empty log.
        assert any("not a log" in note for note in beta_notes(result)), result["notes"]


def test_a_frame_cut_at_every_position_never_shows_half_of_it(tmp_path: Path) -> None:
    victim = build_team(tmp_path)
    client = client_for(tmp_path)
    head = frame(line(header(BETA, parentSession=LEAD))) + frame(line(turn(0, "b1")))
    last = frame(line(turn(1, "b1", end=True)) + line(turn(2, "b2")))
    for cut in range(len(last)):
        victim.write_bytes(head + last[:cut])  # in place: the same file, rewritten
        result = timeline(client)
        assert beta_turns(result) == [("b1", None)], cut
        assert_rest_of_team_shows(result)
        assert not beta_notes(result), (cut, result["notes"])  # a torn tail is normal
    victim.write_bytes(head + last)
    assert beta_turns(timeline(client)) == [("b1", T0 + 10), ("b2", None)]


DEEP_ARRAY = b"[" * DEEP + b"]" * DEEP
NOT_EVENTS: list[bytes] = [
    b"[1,2]",
    b'"a string"',
    b"42",
    b"null",
    b"true",
    b'{"type":null,"seq":1}',
    b'{"type":5}',
    b'{"type":["turn/start"]}',
    b'{"no":"type"}',
    b'{"type":"turn/start","seq":',  # cut JSON
    b"\xff\xfe not utf-8",
    b"{'type': 'single quotes'}",
    DEEP_ARRAY,  # orjson refuses deep nesting: a bad line, not a crash
    b'{"type":"turn/start","seq":7,"time":1,"data":' + DEEP_ARRAY + b"}",
    b'{"type":"turn/start","seq":1e999}',
    b"9" * 5_000,
]
ODD_EVENTS: list[bytes] = [
    b'{"type":"turn/start","seq":null,"time":null,"data":null}',
    b'{"type":"turn/start","seq":"x","time":"yesterday","data":{"turn":null}}',
    b'{"type":"turn/end","seq":-5,"time":-1,"data":{"turn":{"nested":[null,[null]]}}}',
    b'{"type":"turn/start","seq":18446744073709551615,"time":18446744073709551615,"data":{}}',
    b'{"type":"turn/start","seq":1.5,"time":1e300,"data":{"turn":1e300}}',
    b'{"type":"x/unknown-kind","seq":3,"time":3,"data":{"anything":[1,{"a":null}]}}',
    b'{"type":"","seq":3,"time":3}',
    b'{"type":"turn/start","seq":3,"time":3,"data":[1,2,3]}',
    b'{"type":"turn/start","seq":3,"time":3,"data":"text"}',
    b'{"type":"team/member","seq":3,"time":3,"data":{"member":null}}',
]


def _is_event(raw: bytes) -> bool:
    """The reader's rule: a JSON object with a string ``type`` (orjson decides JSON)."""
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return False
    return isinstance(obj, dict) and isinstance(obj.get("type"), str)


def test_valid_zstd_around_invalid_json_and_wrong_shapes(tmp_path: Path) -> None:
    victim = build_team(tmp_path)
    bad = [raw for raw in NOT_EVENTS if not _is_event(raw)]
    assert len(bad) >= 14  # the oracle agrees these are not events
    frames = [frame(line(header(BETA, parentSession=LEAD))), frame(line(turn(0, "b1")))]
    frames += [frame(raw + b"\n") for raw in NOT_EVENTS + ODD_EVENTS]
    frames += [frame(line(turn(99, "b1", end=True)) + line(turn(100, "b9")))]
    victim.write_bytes(b"".join(frames))
    started = time.perf_counter()
    result = timeline(client_for(tmp_path))
    assert time.perf_counter() - started < 10
    assert_rest_of_team_shows(result)
    turns = dict(beta_turns(result))
    assert turns["b1"] is not None and "b9" in turns  # events after the junk still count
    assert f"{BETA}: skipped {len(bad)} log lines that are not events" in result["notes"]
    assert result["diagnostics"]["unknownEvents"] >= 1


def test_garbage_after_good_frames_keeps_them_and_says_so(tmp_path: Path) -> None:
    victim = build_team(tmp_path)
    good = victim.read_bytes()
    victim.write_bytes(good + b"not a zstd frame at all" * 4 + frame(line(turn(9, "never"))))
    result = timeline(client_for(tmp_path))
    assert_rest_of_team_shows(result)
    assert beta_turns(result) == [("b1", T0 + 10)]
    assert any("not a log" in note and f"byte {len(good)}" in note for note in beta_notes(result))


def test_hostile_team_events_in_the_lead_log_keep_the_team(tmp_path: Path) -> None:
    """Wrong shapes where the fold trusts most: team/* events in the lead's log."""
    junk = [
        {"type": "team/member", "seq": 10, "time": T0 + 100, "data": {"member": None}},
        {"type": "team/member", "seq": 11, "time": T0 + 101, "data": {"member": {"id": 5}}},
        {"type": "team/member", "seq": 12, "time": T0 + 102, "data": {"member": {"id": "../x"}}},
        {"type": "team/task", "seq": 13, "time": T0 + 103, "data": {"task": []}},
        {"type": "team/task", "seq": 14, "time": T0 + 104, "data": {"task": {"id": None}}},
        {"type": "team/message/queued", "seq": 16, "time": T0 + 106, "data": {"message": "x"}},
        {
            "type": "team/message/queued",
            "seq": 17,
            "time": T0 + 107,
            "data": {"message": {"id": ["m"]}},
        },
        {"type": "team/message/delivered", "seq": 18, "time": T0 + 108, "data": None},
        {"type": "subagent/catalog", "seq": 19, "time": T0 + 109, "data": {"childId": {"a": 1}}},
        {"type": "user/message", "seq": 20, "time": T0 + 110, "data": {"content": [[[None]]]}},
        {"type": "tool/call", "seq": 21, "time": T0 + 111, "data": {"arguments": "{not json"}},
    ]
    huge = b'{"type":"team/task","seq":15,"time":1,"data":{"task":{"id":"t","revision":1%s}}}\n'
    build_team(tmp_path, lead_extra=[line(e) for e in junk] + [huge % (b"0" * 40)])
    client = client_for(tmp_path)
    result = timeline(client)
    assert_rest_of_team_shows(result)
    assert [lane["id"] for lane in result["lanes"]][:3] == ["lead", ALPHA, BETA]
    for url in ("/panel", "/panel/board"):
        assert client.get(PREFIX + url, params={"session": LEAD}).status_code in (200, 286)


def test_ten_megabyte_lines(tmp_path: Path) -> None:
    """A 10 MB message body, a 10 MB bulk line and a 10 MB line that is not JSON."""
    big = "x<" * 5_000_000
    message = {
        "teamId": LEAD,
        "message": {"id": "m-big", "senderId": LEAD, "targetId": ALPHA, "content": big},
    }
    extra = [
        line(event(10, "team/message/queued", message)),
        line(event(11, "tool/result", {"message": {"content": big}})),
        b"{" + b"a" * 10_000_000 + b"\n",
        line(event(12, "team/message/delivered", {"messageId": "m-big", "targetId": ALPHA})),
    ]
    build_team(tmp_path, lead_extra=extra)
    client = client_for(tmp_path)
    started = time.perf_counter()
    result = timeline(client)
    assert_rest_of_team_shows(result)
    assert f"{LEAD}: skipped 1 log line that is not events" in result["notes"]
    detail = client.get(f"{PREFIX}/api/messages/m-big", params={"session": LEAD}).json()
    assert detail["truncated"] is True and detail["length"] == len(big)
    assert len(detail["body"]) <= 16_384 + 200
    fragment = client.get(
        f"{PREFIX}/api/messages/m-big", params={"session": LEAD}, headers={"HX-Request": "true"}
    )
    assert fragment.status_code == 200 and len(fragment.content) < 200_000
    assert "<" not in fragment.text.split('class="body">', 1)[1][:500].replace("&lt;", "")
    assert time.perf_counter() - started < 15


def test_a_log_that_shrinks_or_is_replaced_between_two_reads(tmp_path: Path) -> None:
    victim = build_team(tmp_path)
    client = client_for(tmp_path)
    assert beta_turns(timeline(client)) == [("b1", T0 + 10)]
    full = victim.read_bytes()

    head_only = frame(line(header(BETA, parentSession=LEAD)))
    other = [turn(0, "o1"), turn(1, "o1", end=True), turn(2, "o2"), turn(3, "o3")]
    replace(victim, frame(line(header(BETA, parentSession=LEAD))) + frame(_lines(other)))
    # More events than before, but another file: never folded onto the old one.
    assert beta_turns(timeline(client)) == [("o1", T0 + 10), ("o2", None), ("o3", None)]

    victim.write_bytes(head_only)  # shrinks in place
    assert beta_turns(timeline(client)) == []

    grown = head_only + frame(line(turn(0, "new")))
    replace(victim, grown)  # replaced by another file
    result = timeline(client)
    assert beta_turns(result) == [("new", None)]
    assert_rest_of_team_shows(result)

    replace(victim, b"\x00" * 64)  # replaced by junk
    assert "not a log" in " ".join(beta_notes(timeline(client)))

    other = [turn(0, "o1"), turn(1, "o1", end=True), turn(2, "o2"), turn(3, "o3")]
    replace(victim, frame(line(header(BETA, parentSession=LEAD))) + frame(_lines(other)))
    assert beta_turns(timeline(client)) == [("o1", T0 + 10), ("o2", None), ("o3", None)]

    victim.unlink()  # removed
    result = timeline(client)
    assert_rest_of_team_shows(result)
    assert lanes(result)[BETA]["channel"] in ("unreadable", "empty")

    victim.write_bytes(full)  # back
    result = timeline(client)
    assert beta_turns(result) == [("b1", T0 + 10)] and not beta_notes(result)


def _lines(events: list[dict[str, Any]]) -> bytes:
    return b"".join(line(e) for e in events)


def test_a_fifo_directory_or_outside_link_is_never_opened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not a regular file under the root: skipped without blocking (a FIFO would)."""
    monkeypatch.setattr(host, "HOST_CALL_TIMEOUT_S", 1.0)
    root = tmp_path / "root"
    victim = build_team(root)
    outside = tmp_path / "outside.zstd"
    outside.write_bytes(victim.read_bytes())
    client = client_for(root)
    for make in (
        lambda: os.mkfifo(victim),
        lambda: victim.mkdir(),
        lambda: victim.symlink_to(outside),
        lambda: victim.symlink_to("/dev/zero"),
    ):
        if victim.is_dir() and not victim.is_symlink():
            victim.rmdir()
        else:
            victim.unlink(missing_ok=True)
        make()
        started = time.perf_counter()
        result = timeline(client)
        assert time.perf_counter() - started < 5
        assert_rest_of_team_shows(result)
        assert beta_turns(result) == []


def _nested(depth: int) -> Any:
    value: Any = None
    for _ in range(depth):
        value = [value]
    return value


@pytest.fixture
def live_host() -> Iterator[tuple[FakeContext, FakeAgents]]:
    agents = FakeAgents()
    persistence = FakePersistence()
    persistence.put(LEAD, fake_header(LEAD), lead_events())
    ctx = FakeContext(
        webServer=FakeWebServer(),
        sessionPersistence=persistence,
        agents=agents,
        connection=FakeConnection(),
    )
    yield ctx, agents


def test_deep_nesting_from_the_live_channel(live_host: tuple[FakeContext, FakeAgents]) -> None:
    """A host's in-memory events are not parsed by orjson: deep nesting must not
    reach a recursive walk (or repr) anywhere in the fold, the keys or the panel."""
    ctx, agents = live_host
    deep = _nested(DEEP)
    events = [
        turn(0, "a1"),
        {"type": "user/message", "seq": 1, "time": T0 + 5, "data": {"content": deep}},
        {"type": "team/member", "seq": 2, "time": T0 + 6, "data": {"member": deep}},
        {"type": "turn/start", "seq": 3, "time": T0 + 7, "data": {"turn": deep}},
        {"type": "x/unknown", "seq": 4, "time": T0 + 8, "data": deep},
    ]
    session = FakeSession(fake_header(ALPHA, parent=LEAD), events=events)
    agents.add(FakeAgent(ALPHA, session, status="running"))
    apply(ctx)
    client = TestClient(ctx.get("webServer"), raise_server_exceptions=False)
    for path in ("/api/timeline", "/panel", "/panel/board"):
        response = client.get(PREFIX + path, params={"session": LEAD})
        assert response.status_code in (200, 286), response.text[:300]
    data = timeline(client)
    assert ("a1", None) in [(s["id"], s["end"]) for s in lanes(data)[ALPHA]["spans"]]


def _bomb(size: int) -> bytes:
    """One frame of ``size`` zero bytes, written by a stream writer (no content size):
    a few KB on disk."""
    out = io.BytesIO()
    chunk = b"\0" * (1 << 20)
    with zstandard.ZstdCompressor(level=1).stream_writer(out, closefd=False) as writer:
        for _ in range(size // len(chunk)):
            writer.write(chunk)
    return out.getvalue()


def test_a_decompression_bomb_is_garbage_not_gigabytes(tmp_path: Path) -> None:
    bomb = _bomb(2 * MAX_FRAME_BYTES)
    assert len(bomb) < 64 * 1024
    victim = build_team(tmp_path)
    good = victim.read_bytes()
    victim.write_bytes(good + bomb + frame(line(turn(9, "after"))))
    lone = session_dir(tmp_path, "bomb-first") / "session.v4.jsonl.zstd"
    lone.write_bytes(bomb)  # where the header is probed
    client = client_for(tmp_path)
    tracemalloc.start()
    try:
        result = timeline(client)
        lone_answer = client.get(f"{PREFIX}/api/timeline", params={"session": "bomb-first"})
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < MAX_FRAME_BYTES + (32 << 20), peak  # never the whole expansion
    assert_rest_of_team_shows(result)
    assert beta_turns(result) == [("b1", T0 + 10)]
    assert any(f"byte {len(good)} holds more than" in note for note in beta_notes(result))
    assert lone_answer.status_code == 200
    assert any("holds more than" in note for note in lone_answer.json()["notes"])
