"""End to end on the committed fixture teams (real zstd files in the real layout)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import orjson
import pytest
import zstandard

from dsh_task_gantt.events import LogEvent, SessionHeader, coerce_header, parse_line
from dsh_task_gantt.fold import (
    BULK_TYPES,
    EVENT_RULES,
    RUN_MARKS,
    UNREAD_DATA,
    fold_lane,
    roster_hints,
)
from dsh_task_gantt.logs.persistence import LOG_NAMES
from dsh_task_gantt.logs.reader import LogReader
from dsh_task_gantt.logs.reader.line_ends import LINE_ENDS
from dsh_task_gantt.timeline import LaneSource, TeamSnapshot, build_timeline, seed_cut

SESSIONS = Path(__file__).resolve().parent.parent / "fixtures" / "sessions"


def _log(folder: Path) -> Path:
    """The session's log, whichever format generation it was written in."""
    return next(folder / name for name in LOG_NAMES if (folder / name).is_file())


def _read(path: Path) -> tuple[SessionHeader | None, list[LogEvent]]:
    raw = path.read_bytes()
    if path.suffix == ".zstd":
        raw = zstandard.ZstdDecompressor().decompressobj(read_across_frames=True).decompress(raw)
    lines = raw.splitlines()
    events = [e for i, line in enumerate(lines[1:]) if (e := parse_line(line, i)) is not None]
    return coerce_header(orjson.loads(lines[0])), events


def _teams() -> list[Path]:
    return sorted(p for p in SESSIONS.iterdir() if p.is_dir()) if SESSIONS.is_dir() else []


def _build(project: Path) -> tuple[dict[str, Any], dict[str, LaneSource], LaneSource]:
    logs = {d.name: _read(_log(d)) for d in project.iterdir() if d.is_dir()}
    parents = {h.parent_session for h, _ in logs.values() if h}
    leads = [
        sid for sid, (h, _) in logs.items()
        if h and not h.parent_session
        and (sid in parents or any(e.type.startswith("team/") for e in _))
    ]  # fmt: skip
    assert len(leads) == 1, leads
    root = leads[0]
    # Children known only by their header's parentSession (older logs have no catalog).
    children = tuple(sid for sid, (h, _) in logs.items() if h and h.parent_session == root)

    def src(sid: str) -> LaneSource:
        h, events = logs[sid]
        return LaneSource(sid, "persisted", None, h, None, None, fold_lane(events))

    lead = src(root)
    members = {sid: src(sid) for sid in logs if sid != root}
    snap = TeamSnapshot(root, root, lead, members, None, None, (), 0, (), children)
    return build_timeline(snap), members, lead


@pytest.mark.skipif(not _teams(), reason="fixtures/sessions is not in this checkout")
@pytest.mark.parametrize("project", _teams(), ids=lambda p: p.name[:24])
def test_fixture_team_obeys_the_major_rules(project: Path) -> None:
    out, members, lead = _build(project)
    orjson.dumps(out)
    lanes = out["lanes"]
    assert lanes[0]["id"] == "lead"
    hinted = [h.id for h in roster_hints(lead.fold, team_id=out["rootSessionId"])]
    cold = [
        sid
        for sid, m in members.items()
        if m.header and m.header.parent_session == out["rootSessionId"]
    ]
    assert [x["id"] for x in lanes[1:] if x["id"] != "unassigned"] == [
        *hinted,
        *sorted(c for c in cold if c not in hinted),
    ]
    placements: Counter[str] = Counter()
    prompts: Counter[str] = Counter()
    for item in lanes:
        keys = [(s["time"], s["kind"], s["id"]) for s in item["spans"]]
        assert [k[0] for k in keys] == sorted(k[0] for k in keys)
        source = members.get(item["id"])
        for span in item["spans"]:
            assert span["end"] is None or span["end"] >= span["time"]
            if span["kind"] == "message":
                placements[span["id"]] += 1
            if span["kind"] == "user-prompt":
                prompts[span["id"]] += 1
        if source is not None and seed_cut(source) > 0:
            cut_seq = seed_cut(source)
            first_own = min(
                (m.time for s, m in source.fold.turn_starts.items() if s >= cut_seq and m.time),
                default=None,
            )
            turns = [s["time"] for s in item["spans"] if s["kind"] == "turn"]
            assert not turns or (first_own is not None and min(turns) >= first_own)
    assert set(placements.values()) <= {1, 2}
    assert set(prompts.values()) <= {1}
    d = out["diagnostics"]
    assert d["messageMarks"] == sum(placements.values())
    parts = ("messagesOnTwoLanes", "messagesToSelf", "messagesTargetOutsideTeam",
             "messagesSenderOutsideTeam", "unpairedDeliveries", "messagesNotDrawn")  # fmt: skip
    assert sum(d[k] for k in parts) == d["uniqueMessages"]
    assert out["live"] is False and out["range"]["end"] is not None
    for task in out["tasks"]:
        assert task["laneId"] in {x["id"] for x in lanes} or task["status"] == "deleted"
        assert [h["revision"] for h in task["history"]] == sorted(
            h["revision"] for h in task["history"]
        )


@pytest.mark.skipif(not _teams(), reason="fixtures/sessions is not in this checkout")
@pytest.mark.parametrize(
    "log", sorted(p for name in LOG_NAMES for p in SESSIONS.rglob(name)), ids=str
)
def test_what_the_reader_leaves_unparsed_never_changes_the_fold(log: Path) -> None:
    """UNREAD_DATA (types whose data the fold never reads, and tool calls parsed only
    when they create or update a task) folds exactly like parsing every line, in
    every format the fixtures hold (the subagent teams' splices, descriptors, relays
    and reload markers included)."""
    skipped = LogReader(log, skip_types=UNREAD_DATA, run_marks=RUN_MARKS).read_new(runs=True)
    everything = LogReader(log).read_new()
    assert fold_lane(skipped.events) == fold_lane(everything.events)
    assert fold_lane(skipped.events) != fold_lane([])
    if log.name == "session.v4.jsonl.zstd":  # the generated teams' logs all make tool calls
        assert any(e.data is not None for e in everything.events if e.type == "tool/call")


_DATA = {"turn": 1, "step": 1, "name": "read_file", "arguments": "{}", "inherited": True,
         "message": {"id": "m"}, "label": "x", "source": {"kind": "user"}}  # fmt: skip


@pytest.mark.parametrize("etype", sorted(UNREAD_DATA))
def test_a_type_a_reader_may_skip_folds_the_same_without_its_data(etype: str) -> None:
    """Each registration's leeway is true: what a reader may leave unparsed (all the
    data, or a line without the markers) changes nothing in the fold."""
    with_data = LogEvent(etype, 3, 1_000, dict(_DATA), 3)
    without = LogEvent(etype, 3, 1_000, None, 3)
    markers = UNREAD_DATA[etype]
    if markers == LINE_ENDS:
        # The reader hands over the fields at the line's ends: they fold like the whole.
        whole = {**_DATA, "usage": {"inputTokens": 3}, "message": {"source": {"model": "m"}}}
        ends = {"turn": 1, "step": 1, "usage": {"inputTokens": 3}}
        ends["message"] = {"source": {"model": "m"}}
        assert fold_lane([with_data._replace(data=whole)]) == fold_lane(
            [with_data._replace(data=ends)]
        )
        assert EVENT_RULES[etype].ends
        return
    assert fold_lane([with_data]) == fold_lane([without])
    assert markers is None or EVENT_RULES[etype].markers == markers


def test_the_skip_lists_let_every_folded_type_through() -> None:
    """A type the fold reads the data of may never be left unparsed by a reader."""
    folded = {
        "turn/start", "turn/end", "user/message", "team/member", "team/task",
        "team/message/queued", "team/message/delivered", "subagent/catalog",
        "subagent/descriptor", "session/end-seed", "agent/inbox/spliced",
    }  # fmt: skip
    assert folded.isdisjoint(UNREAD_DATA)
    assert folded.isdisjoint(BULK_TYPES)
