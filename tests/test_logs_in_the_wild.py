"""Logs written by other DSH versions and writers, end to end on real-format files.

Every team here is written by the fixture generator (or its writer) in the host's
layout and read back through the standalone persistence and the timeline service,
with the reader's fast path on, as the product runs.
"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import pytest

from dsh_task_gantt import host
from dsh_task_gantt.fixturegen import Event, SessionLogWriter, compress_frame, header_record
from dsh_task_gantt.fixturegen import subagents as G
from dsh_task_gantt.fold import RUN_MARKS, UNREAD_DATA
from dsh_task_gantt.logs.persistence import LOG_NAMES, DirectorySessionPersistence
from dsh_task_gantt.logs.project_key import encode_segment
from dsh_task_gantt.service import TimelineService

T0 = 1_800_000_000_000
CWD = "/work/wild"


@pytest.fixture(scope="module")
def wild(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, G.SubagentTeam]]:
    root = tmp_path_factory.mktemp("sessions")
    return root, {team.name: team for team in G.write_subagent_teams(root)}


@pytest.fixture(scope="module")
def written(wild: tuple[Path, dict[str, G.SubagentTeam]]) -> Path:
    return wild[0]


def service(root: Path) -> TimelineService:
    persistence = DirectorySessionPersistence(root, skip_types=UNREAD_DATA, run_marks=RUN_MARKS)
    return TimelineService({host.SESSION_PERSISTENCE: persistence}.get, clock=lambda: T0 * 2)


def timeline(root: Path, session_id: str, svc: TimelineService | None = None) -> dict[str, Any]:
    result = asyncio.run((svc or service(root)).timeline(session_id))
    assert result is not None, session_id
    return dict(result.data)


def lanes(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {lane["sessionId"] or lane["id"]: lane for lane in data["lanes"]}


def marks(data: dict[str, Any], kind: str) -> list[tuple[str, str, str | None]]:
    """``(lane session, span id, direction)`` of every span of ``kind``."""
    return sorted(
        (lane["sessionId"], span["id"], span["direction"])
        for lane in data["lanes"]
        for span in lane["spans"]
        if span["kind"] == kind
    )


def turns(data: dict[str, Any], session_id: str) -> dict[str, tuple[int, int | None, str]]:
    return {
        s["id"]: (s["time"], s["end"], s["preview"])
        for s in lanes(data)[session_id]["spans"]
        if s["kind"] == "turn"
    }


def note(data: dict[str, Any], *words: str) -> str:
    found = [n for n in data["notes"] if all(w in n for w in words)]
    assert found, (words, data["notes"])
    return found[0]


def write(
    root: Path,
    session_id: str,
    events: list[Event],
    *,
    fmt: int = 4,
    compress: bool = True,
    parent: str | None = None,
    seeded: bool = False,
) -> Path:
    head = header_record(
        session_id=session_id, created_at=T0, cwd=CWD, parent_session=parent, is_seeded=seeded,
        fmt=fmt,
    )  # fmt: skip
    writer = SessionLogWriter(root, head, compress=compress, fmt=fmt)
    for i in range(0, len(events), 3):
        writer.append(events[i : i + 3])
    return writer.path


def turn_events(turn_ids: list[str], first_seq: int = 0, at: int = 0) -> list[Event]:
    out: list[Event] = []
    seq = first_seq
    for n, turn_id in enumerate(turn_ids):
        t = T0 + at + 100 * n
        out.append(Event("turn/start", seq, t, {"turn": turn_id}))
        out.append(
            Event("turn/end", seq + 1, t + 50, {"turn": turn_id, "reason": {"kind": "completed"}})
        )
        seq += 2
    return out


# -- file names across formats ---------------------------------------------------------


@pytest.mark.parametrize("name", LOG_NAMES)
def test_every_format_and_compression_is_opened_and_named(tmp_path: Path, name: str) -> None:
    fmt = 4 if ".v4." in name else 3 if ".v3." in name else 0
    path = write(
        tmp_path, "s-one", turn_events(["a", "b"]), fmt=fmt, compress=name.endswith(".zstd")
    )
    assert path.name == name
    data = timeline(tmp_path, "s-one")
    assert lanes(data)["s-one"]["channel"] == "persisted"
    assert set(turns(data, "s-one")) == {"a", "b"}
    assert note(data, f"from {name} (format {fmt})")


def test_the_newest_generation_wins_and_zstd_before_plain(tmp_path: Path) -> None:
    """One service polls while newer generations appear beside the log it reads: each
    takes over, and nothing read from the older file is folded into the newer one."""
    write(tmp_path, "s-gen", turn_events(["v0"]), fmt=0)
    svc = service(tmp_path)
    assert set(turns(timeline(tmp_path, "s-gen", svc), "s-gen")) == {"v0"}
    write(tmp_path, "s-gen", turn_events(["v3-plain"]), fmt=3, compress=False)
    assert set(turns(timeline(tmp_path, "s-gen", svc), "s-gen")) == {"v3-plain"}
    write(tmp_path, "s-gen", turn_events(["v3-zstd"]), fmt=3)
    assert set(turns(timeline(tmp_path, "s-gen", svc), "s-gen")) == {"v3-zstd"}
    write(tmp_path, "s-gen", turn_events(["v4"]), fmt=4, compress=False)
    data = timeline(tmp_path, "s-gen", svc)
    assert set(turns(data, "s-gen")) == {"v4"} and note(data, "session.v4.jsonl (format 4)")
    # A fresh service over the same root agrees with the one that lived through it.
    assert set(turns(timeline(tmp_path, "s-gen"), "s-gen")) == {"v4"}


def test_a_session_folder_is_the_encoded_id(tmp_path: Path) -> None:
    session_id = "agent.7"
    folder = tmp_path / "--work-wild--" / encode_segment(session_id)
    assert folder.name == "agent~002E7"
    folder.mkdir(parents=True)
    path = write(tmp_path, "placeholder", turn_events(["x"]))
    shutil.move(path, folder / path.name)
    data = timeline(tmp_path, session_id)
    assert set(turns(data, session_id)) == {"x"}


# -- roots and rosters -----------------------------------------------------------------


def test_a_child_asked_for_by_itself_is_a_lane_of_its_parents_team(written: Path) -> None:
    data = timeline(written, G.GAMMA_CHILD)
    assert data["sessionId"] == G.GAMMA_CHILD and data["rootSessionId"] == G.GAMMA_PARENT
    by_session = lanes(data)
    assert by_session[G.GAMMA_PARENT]["kind"] == "lead"
    child = by_session[G.GAMMA_CHILD]
    assert child["kind"] == "teammate" and set(turns(data, G.GAMMA_CHILD)) == {"1", "2"}
    # A catalog-only child is named by its id; the catalog's label is shown beside it.
    assert child["name"] == G.GAMMA_CHILD and child["label"] == G.CHILD_LABEL


def test_cold_children_known_only_by_parent_session_are_lanes(written: Path) -> None:
    for parent, children in ((G.GAMMA_PARENT, G.GAMMA_CHILD), (G.DELTA_PARENT, G.DELTA_CHILD)):
        data = timeline(written, parent)
        assert data["rootSessionId"] == parent
        ids = [lane["sessionId"] for lane in data["lanes"]]
        assert ids[0] == parent and children in ids
    gamma = timeline(written, G.GAMMA_PARENT)
    cold = lanes(gamma)[G.GAMMA_COLD_CHILD]  # no catalog entry: its header only
    assert cold["name"] == G.GAMMA_COLD_CHILD and cold["label"] is None
    assert cold["channel"] == "persisted"


def test_a_parent_with_no_log_roots_the_team_at_the_child(tmp_path: Path) -> None:
    write(tmp_path, "orphan", turn_events(["o1"]), parent="gone-parent")
    data = timeline(tmp_path, "orphan")
    assert data["rootSessionId"] == "orphan" and data["source"] == "log"
    assert [lane["sessionId"] for lane in data["lanes"]] == ["orphan"]
    assert set(turns(data, "orphan")) == {"o1"}


def test_the_requested_session_is_always_a_lane(tmp_path: Path) -> None:
    write(tmp_path, "top", turn_events(["t"]))
    write(tmp_path, "mid", turn_events(["m"]), parent="top")
    write(tmp_path, "leaf", turn_events(["l"]), parent="mid")  # a grandchild
    data = timeline(tmp_path, "leaf")
    assert data["rootSessionId"] == "top"
    assert {"top", "mid", "leaf"} <= set(lanes(data))
    assert set(turns(data, "leaf")) == {"l"}


def test_child_discovery_reads_each_header_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dsh_task_gantt.logs import persistence as P

    write(tmp_path, "root", turn_events(["r"]))
    for n in range(4):
        write(tmp_path, f"kid-{n}", turn_events([f"k{n}"]), parent="root")
    reads: list[Path] = []
    original = P.read_header_fast
    monkeypatch.setattr(P, "read_header_fast", lambda path: reads.append(path) or original(path))
    svc = service(tmp_path)
    first = timeline(tmp_path, "root", svc)
    assert {f"kid-{n}" for n in range(4)} <= set(lanes(first))
    once = sorted(reads)
    for _ in range(3):
        assert timeline(tmp_path, "root", svc) == first
    assert sorted(reads) == once and len(set(once)) == len(once)
    write(tmp_path, "kid-late", turn_events(["late"]), parent="root")
    assert "kid-late" in lanes(timeline(tmp_path, "root", svc))


# -- turns -----------------------------------------------------------------------------


def test_a_v0_pair_whose_turn_ends_have_no_turn_is_closed_and_frozen(
    wild: tuple[Path, dict[str, G.SubagentTeam]],
) -> None:
    root, teams = wild
    delta = teams["delta"]
    assert all(".v" not in path for path in delta.paths.values())  # format 0 file names
    for asked in (G.DELTA_PARENT, G.DELTA_CHILD):
        data = timeline(root, asked)
        assert data["live"] is False
        assert data["range"]["start"] is not None and data["range"]["end"] is not None
        for session_id, expected in delta.turns.items():
            got = turns(data, session_id)
            assert set(got) == set(expected)
            for turn_id, reason in expected.items():
                start, end, label = got[turn_id]
                assert end is not None and end >= start and label.endswith(str(reason))
        assert note(data, "closed by a turn end without a turn id")


def test_a_reload_marker_closes_the_turn_left_open_as_interrupted(written: Path) -> None:
    data = timeline(written, G.GAMMA_PARENT)
    got = turns(data, G.GAMMA_PARENT)
    assert got["2"][1] is not None and got["2"][2].endswith("interrupted")
    assert got["3"][1] is not None and got["3"][2].endswith("error")
    assert data["live"] is False
    assert note(data, "reloaded", "interrupted")


def test_a_reload_marker_in_a_seeded_log_is_its_seed_cut_not_a_close(tmp_path: Path) -> None:
    inherited = [
        Event("turn/start", 0, T0, {"turn": "p"}),
        Event("session/end-seed", 1, T0 + 5, {"inherited": True}),
    ]
    own = [Event("turn/start", 2, T0 + 10, {"turn": "own"})]
    write(tmp_path, "lead", turn_events(["l"]))
    write(tmp_path, "fork", inherited + own, parent="lead", seeded=True)
    data = timeline(tmp_path, "fork")
    assert set(turns(data, "fork")) == {"own"} and turns(data, "fork")["own"][1] is None


def test_format_0_seed_length_counts_events_not_seqs(written: Path) -> None:
    # The cold child's first two events (seqs 1 and 2) are copied from its parent.
    data = timeline(written, G.GAMMA_PARENT)
    assert set(turns(data, G.GAMMA_COLD_CHILD)) == {"2"}
    assert note(data, "skipped 2 events inherited")


def test_a_descriptor_count_cuts_the_inherited_prefix(tmp_path: Path) -> None:
    write(tmp_path, "lead", turn_events(["l"]))
    events = [
        Event("subagent/descriptor", 0, T0, {"label": "audit", "inheritedEventCount": 3}),
        *turn_events(["copied"], first_seq=1),
        *turn_events(["own"], first_seq=3, at=500),
    ]
    write(tmp_path, "kid", events, parent="lead")
    data = timeline(tmp_path, "lead")
    assert set(turns(data, "kid")) == {"own"} and lanes(data)["kid"]["label"] == "audit"


# -- prompts, briefs, summaries, relays --------------------------------------------------


def test_a_brief_a_summary_and_an_inbox_splice_of_the_same_prompt(written: Path) -> None:
    data = timeline(written, G.GAMMA_PARENT)
    # The splice and the user/message with the same id: one prompt. The summary is none.
    assert marks(data, "user-prompt") == [(G.GAMMA_PARENT, G.GAMMA_PROMPT_ID, "incoming")]
    assert data["diagnostics"]["humanPrompts"] == 1
    assert data["diagnostics"]["injectedUserMessages"].get("summary") == 1
    # The brief is a message from the parent's lane to the child's, not the human's.
    brief = [m for m in marks(data, "message") if m[1] == G.GAMMA_BRIEF_ID]
    assert brief == [
        (G.GAMMA_PARENT, G.GAMMA_BRIEF_ID, "outgoing"),
        (G.GAMMA_CHILD, G.GAMMA_BRIEF_ID, "incoming"),
    ]
    detail = asyncio.run(service(written).message(G.GAMMA_PARENT, G.GAMMA_BRIEF_ID))
    assert detail is not None and detail["from"]["id"] == "lead"
    assert detail["to"]["id"] == G.GAMMA_CHILD and "Your parent agent id is" in detail["body"]


def test_a_brief_in_a_session_that_is_not_a_child_stays_a_prompt(tmp_path: Path) -> None:
    text = [{"type": "text", "text": "Do it.\nYour parent agent id is someone"}]
    message = {"id": "m-1", "role": "user", "content": text, "source": {"kind": "user"}}
    write(tmp_path, "solo", [Event("user/message", 0, T0, message)])
    assert marks(timeline(tmp_path, "solo"), "user-prompt") == [("solo", "m-1", "incoming")]


def test_relays_both_ways_are_messages_on_both_lanes(written: Path) -> None:
    for asked in (G.GAMMA_PARENT, G.GAMMA_CHILD):
        data = timeline(written, asked)
        got = marks(data, "message")
        assert (G.GAMMA_PARENT, G.GAMMA_COORDINATOR_ID, "outgoing") in got
        assert (G.GAMMA_CHILD, G.GAMMA_COORDINATOR_ID, "incoming") in got
        for report in (G.GAMMA_REPORT_ID, G.GAMMA_SETTLED_ID):
            assert (G.GAMMA_CHILD, report, "outgoing") in got
            assert (G.GAMMA_PARENT, report, "incoming") in got
        relayed = [
            m
            for m in got
            if m[1] in G.GAMMA_REPORT_ID + G.GAMMA_SETTLED_ID + G.GAMMA_COORDINATOR_ID
        ]
        assert len(relayed) == 6  # each of the three once on each lane
        assert data["diagnostics"]["messagesOnTwoLanes"] == 4  # three relays and the brief
        assert note(data, "3 messages relayed", "1 brief")


def test_a_relay_logged_in_both_logs_is_drawn_once_per_lane(tmp_path: Path) -> None:
    source = {"kind": "subagent-report", "form": "relay", "senderSessionId": "kid"}
    message = {"id": "rep-1", "role": "user", "content": "done", "source": source}
    write(tmp_path, "lead", [*turn_events(["l"]), Event("user/message", 2, T0 + 60, message)])
    coord = {"kind": "coordinator", "form": "relay", "senderSessionId": "lead"}
    again = {**message, "source": coord}  # the same id seen in the child's log too
    write(tmp_path, "kid", [Event("user/message", 0, T0 + 70, again)], parent="lead")
    data = timeline(tmp_path, "lead")
    got = [m for m in marks(data, "message") if m[1] == "rep-1"]
    assert got == [("kid", "rep-1", "outgoing"), ("lead", "rep-1", "incoming")]
    assert data["diagnostics"]["uniqueMessages"] == 1 and note(data, "1 copy in other logs")


# -- team records, live, range ---------------------------------------------------------


def test_another_teams_records_are_counted_not_merged(written: Path) -> None:
    data = timeline(written, G.GAMMA_PARENT)
    assert "session-elsewhere-1" not in lanes(data)
    assert all(m[1] != "msg-ancestor-1" for m in marks(data, "message"))
    assert note(data, "2 team records of another team", G.GAMMA_ANCESTOR)


def test_version_1_team_records_of_this_team_are_read(tmp_path: Path) -> None:
    member = {
        "version": 1,
        "teamId": "lead",
        "member": {"id": "mate", "name": "mate", "phase": "active"},
    }
    queued = {
        "version": 1, "teamId": "lead", "message": {
            "id": "q1", "senderId": "lead", "senderName": "lead", "targetId": "mate",
            "content": [{"type": "text", "text": "hi"}], "delivery": "wakeup",
        },
    }  # fmt: skip
    write(
        tmp_path,
        "lead",
        [Event("team/member", 0, T0, member), Event("team/message/queued", 1, T0 + 5, queued)],
    )
    write(tmp_path, "mate", turn_events(["m"]), parent="lead")
    data = timeline(tmp_path, "lead")
    assert lanes(data)["mate"]["name"] == "mate"
    assert [m[1:] for m in marks(data, "message")] == [("q1", "outgoing"), ("q1", "incoming")]


def test_live_is_the_same_whichever_member_is_asked(written: Path, tmp_path: Path) -> None:
    shutil.copytree(written, tmp_path, dirs_exist_ok=True)
    members = (G.GAMMA_PARENT, G.GAMMA_CHILD, G.GAMMA_COLD_CHILD)
    frozen = [timeline(tmp_path, m) for m in members]
    assert {(d["live"], d["range"]["start"], d["range"]["end"]) for d in frozen} == {
        (False, frozen[0]["range"]["start"], frozen[0]["range"]["end"])
    }
    # The root opens a turn: the team is live from every member's point of view.
    path = next(tmp_path.rglob(f"{G.GAMMA_PARENT}/session.v3.jsonl.zstd"))
    with path.open("ab") as f:
        f.write(
            compress_frame(
                [b'{"type":"turn/start","seq":99,"time":1791666099000,"data":{"turn":4}}\n']
            )
        )
    live = [timeline(tmp_path, m) for m in members]
    assert [d["live"] for d in live] == [True, True, True]
    assert {d["range"]["end"] for d in live} == {None}
    # An open turn in a cold child's log is history: the team stays as it was.
    shutil.rmtree(tmp_path)
    shutil.copytree(written, tmp_path)
    child = next(tmp_path.rglob(f"{G.GAMMA_COLD_CHILD}/session.jsonl.zstd"))
    with child.open("ab") as f:
        f.write(
            compress_frame(
                [b'{"type":"turn/start","seq":99,"time":1791666099000,"data":{"turn":9}}\n']
            )
        )
    assert [timeline(tmp_path, m)["live"] for m in members] == [False, False, False]


def test_range_is_both_set_or_both_null(tmp_path: Path, written: Path) -> None:
    bulk = [Event("assistant/message", 0, T0 + 5, {"turn": 1}), Event("tool/result", 1, T0 + 9, {})]
    write(tmp_path, "bulk-only", bulk)
    data = timeline(tmp_path, "bulk-only")
    assert data["range"]["start"] is not None and data["range"]["end"] == T0 + 9
    assert data["range"]["start"] <= data["range"]["end"]
    for session_id in (G.GAMMA_PARENT, G.GAMMA_CHILD, G.DELTA_PARENT, G.DELTA_CHILD):
        r = timeline(written, session_id)["range"]
        assert r["start"] is not None and r["end"] is not None and r["start"] <= r["end"]


# -- unreadable means unreadable --------------------------------------------------------


@pytest.mark.parametrize("compress", [True, False])
def test_a_log_that_is_garbage_from_byte_0_is_unreadable_and_partial(
    tmp_path: Path, compress: bool
) -> None:
    # The lead's catalog names the child: its own header cannot be read.
    catalog = {"version": 1, "childId": "junk", "childCreatedAt": T0, "mode": "fresh"}
    write(tmp_path, "lead", [*turn_events(["l"]), Event("subagent/catalog", 2, T0 + 1, catalog)])
    path = write(tmp_path, "junk", [], parent="lead", compress=compress)
    path.write_bytes(b"\x00garbage, not a log at all\n" * 3)
    data = timeline(tmp_path, "lead")
    junk = lanes(data)["junk"]
    assert junk["channel"] == "unreadable" and junk["spans"] == []
    assert "not a log" in junk["error"]
    assert data["source"] == "partial"
    assert note(data, "could not read the log", "junk")
    asked = timeline(tmp_path, "junk")  # asked for by itself: still no claim it was read
    assert lanes(asked)["junk"]["channel"] == "unreadable" and asked["source"] == "partial"


def test_garbage_after_readable_frames_keeps_what_was_read(tmp_path: Path) -> None:
    write(tmp_path, "lead", turn_events(["l"]))
    path = write(tmp_path, "torn", turn_events(["a", "b"]), parent="lead")
    with path.open("ab") as f:
        f.write(b"\xde\xad\xbe\xef" * 8)
    data = timeline(tmp_path, "lead")
    assert set(turns(data, "torn")) == {"a", "b"}
    assert lanes(data)["torn"]["channel"] == "persisted"
    assert data["source"] == "partial"
    assert note(data, "stops being readable", "byte")


def test_a_prompt_seen_only_in_its_inbox_splice_is_drawn_once(tmp_path: Path) -> None:
    # The splice is logged first; the user/message with the same id follows a few ms
    # later (a read in between sees only the splice).
    text = [{"type": "text", "text": "Ship it."}]
    prompt = {"id": "p-1", "role": "user", "content": text, "source": {"kind": "user"}}
    splice = {"target": "s", "start": 0, "removedCount": 0, "inserted": [prompt]}
    write(tmp_path, "s", [Event("agent/inbox/spliced", 0, T0, splice)])
    assert marks(timeline(tmp_path, "s"), "user-prompt") == [("s", "p-1", "incoming")]
    write(
        tmp_path,
        "s",
        [Event("agent/inbox/spliced", 0, T0, splice), Event("user/message", 1, T0 + 4, prompt)],
    )
    data = timeline(tmp_path, "s")
    assert marks(data, "user-prompt") == [("s", "p-1", "incoming")]
    assert data["diagnostics"]["humanPrompts"] == 1


def test_a_descriptor_in_the_parents_log_naming_its_child_is_a_catalog_entry(
    tmp_path: Path,
) -> None:
    descriptor = {"version": 2, "mode": "one-shot", "provider": "spawn", "label": "list files",
                  "childSessionId": "kid"}  # fmt: skip
    write(
        tmp_path,
        "lead",
        [*turn_events(["l"]), Event("subagent/descriptor", 2, T0 + 60, descriptor)],
    )
    data = timeline(tmp_path, "lead")
    assert lanes(data)["lead"]["label"] is None  # not the parent's own description
    kid = lanes(data)["kid"]
    assert kid["name"] == "kid" and kid["label"] == "list files" and kid["channel"] == "unreadable"


def test_types_seen_in_real_logs_are_skipped_without_being_unknown(tmp_path: Path) -> None:
    seen = ["permission/preset", "sandbox/mode", "approval/asked", "model/selection",
            "llm/retry", "assistant/chunk", "developer/message"]  # fmt: skip
    events = [Event(t, i, T0 + i, {"x": 1}) for i, t in enumerate(seen)]
    events.append(Event("quorum/binding", len(seen), T0 + 50, {}))  # a plugin's own type
    write(tmp_path, "s", events)
    data = timeline(tmp_path, "s")
    assert data["diagnostics"]["unknownEvents"] == 1
    assert data["range"]["end"] == T0 + 50


def test_a_newer_generation_written_later_replaces_the_one_being_polled(tmp_path: Path) -> None:
    # DSH 0.2 reopening a 0.1.x session writes session.v4.* beside session.v3.*.
    write(tmp_path, "s-up", turn_events(["a", "b"]), fmt=3)
    svc = service(tmp_path)
    assert set(turns(timeline(tmp_path, "s-up", svc), "s-up")) == {"a", "b"}
    # Longer than the old file: its events are not a continuation of what was read.
    write(tmp_path, "s-up", turn_events(["a", "x", "y"]), fmt=4)
    data = timeline(tmp_path, "s-up", svc)
    assert set(turns(data, "s-up")) == {"a", "x", "y"}
    assert note(data, "session.v4.jsonl.zstd (format 4)")
