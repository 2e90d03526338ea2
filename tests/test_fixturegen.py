"""The fixture generator writes real-format logs, deterministically, and its spec tells
the truth about them. Logs are decoded with the system ``zstd`` binary, not our code."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from dsh_task_gantt.fixturegen import (
    LiveTeam,
    SessionLogWriter,
    TeamSpec,
    compress_frame,
    encode_event,
    generate_fixture_set,
    generate_team,
    header_record,
)
from dsh_task_gantt.fixturegen import spec as S
from dsh_task_gantt.fixturegen.writer import Event
from dsh_task_gantt.logs.project_key import project_key

REPO = Path(__file__).resolve().parent.parent
COMMITTED = REPO / "fixtures" / "sessions"
ZSTD = shutil.which("zstd") or "/usr/bin/zstd"
HEADER_KEYS = {
    "type",
    "version",
    "id",
    "createdAt",
    "cwd",
    "isSeeded",
    "delegationDepth",
    "agentPreset",
}


def decode(path: Path) -> list[dict[str, Any]]:
    """Every line of a log, via the system zstd (reads across all frames)."""
    raw = subprocess.run([ZSTD, "-dc", str(path)], check=True, capture_output=True).stdout
    assert raw.endswith(b"\n")
    return [json.loads(line) for line in raw.split(b"\n")[:-1]]


def frame_count(path: Path) -> int:
    """Count zstd frames by their magic numbers at frame boundaries (zstd -lv)."""
    out = subprocess.run([ZSTD, "-lv", str(path)], check=True, capture_output=True, text=True)
    for line in out.stdout.splitlines():
        if line.strip().startswith("# Zstandard Frames:"):
            return int(line.split(":")[1])
    raise AssertionError(out.stdout)


def tree_bytes(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


@pytest.fixture(scope="module")
def fixture_set(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, TeamSpec]]:
    root = tmp_path_factory.mktemp("sessions")
    return root, generate_fixture_set(root)


@pytest.fixture(scope="module")
def alpha_lines(fixture_set: tuple[Path, dict[str, TeamSpec]]) -> dict[str, list[dict[str, Any]]]:
    root, specs = fixture_set
    alpha = specs["alpha"]
    return {m.id: decode(alpha.log_path(m.id, root)) for m in alpha.members if m.rel_path}


# -- the writer ----------------------------------------------------------------


def test_writer_layout_frames_and_key_order(tmp_path: Path) -> None:
    cwd = "/w/a b"
    header = header_record(session_id="s1", created_at=5, cwd=cwd, parent_session="lead")
    writer = SessionLogWriter(tmp_path, header)
    writer.append(
        [
            Event("turn/start", 0, 10, {"turn": 1}),
            Event("turn/end", 1, 11, {"turn": 1, "reason": {"kind": "completed"}}),
        ]
    )
    writer.append([Event("x", 2, 12, {})])
    assert writer.path == tmp_path / project_key(cwd) / "s1" / "session.v4.jsonl.zstd"
    assert frame_count(writer.path) == 3  # header + two appends
    lines = decode(writer.path)
    assert list(lines[0]) == [
        "type",
        "version",
        "id",
        "createdAt",
        "cwd",
        "parentSession",
        "isSeeded",
        "origin",
        "delegationDepth",
        "agentPreset",
    ]
    assert lines[0]["origin"] == "subagent" and lines[0]["delegationDepth"] == 1
    assert [list(x) for x in lines[1:]] == [["type", "seq", "time", "data"]] * 3
    assert encode_event(Event("t", 0, 1, None)).startswith(b'{"type":"t","seq":0,"time":1,')


def test_writer_plain_and_raw_tail(tmp_path: Path) -> None:
    header = header_record(session_id="s2", created_at=1, cwd=None)
    plain = SessionLogWriter(tmp_path, header, compress=False)
    plain.append([Event("a", 0, 2, {})])
    assert plain.path.name == "session.v4.jsonl"
    assert plain.path.parent.parent.name == "_no-cwd"
    assert [json.loads(x)["type"] for x in plain.path.read_bytes().splitlines()] == ["session", "a"]
    zipped = SessionLogWriter(tmp_path, {**header, "id": "s3"})
    whole = compress_frame([b'{"type":"b","seq":0,"time":3,"data":{}}\n'])
    zipped.append_raw(whole + whole[: len(whole) // 2])  # a torn last frame
    result = subprocess.run([ZSTD, "-dc", str(zipped.path)], capture_output=True)
    assert result.returncode != 0  # the tail is torn: zstd complains...
    assert result.stdout.count(b"\n") == 2  # ...after the two whole lines


# -- determinism ----------------------------------------------------------------


def test_same_seed_same_bytes_and_other_seed_differs(tmp_path: Path) -> None:
    a = generate_team(tmp_path / "a", seed=7)
    b = generate_team(tmp_path / "b", seed=7)
    c = generate_team(tmp_path / "c", seed=8)
    assert tree_bytes(tmp_path / "a") == tree_bytes(tmp_path / "b")
    assert a.to_dict(include_root=False) == b.to_dict(include_root=False)
    assert tree_bytes(tmp_path / "a") != tree_bytes(tmp_path / "c")
    assert a.lead_id != c.lead_id


def test_committed_fixtures_equal_a_fresh_regeneration(
    fixture_set: tuple[Path, dict[str, TeamSpec]],
) -> None:
    root, specs = fixture_set
    assert COMMITTED.is_dir(), "fixtures/sessions is missing: see fixtures/README.md"
    assert tree_bytes(COMMITTED) == tree_bytes(root)
    for name, spec in specs.items():
        committed = TeamSpec.load(REPO / "fixtures" / "specs" / f"{name}.json", root=str(root))
        assert committed == spec


def test_fixture_dir_stays_small() -> None:
    total = sum(p.stat().st_size for p in (REPO / "fixtures").rglob("*") if p.is_file())
    assert total < 1_000_000


# -- the logs are real-format ------------------------------------------------------


def test_every_log_decodes_with_flat_header_and_contiguous_seq(
    fixture_set: tuple[Path, dict[str, TeamSpec]],
) -> None:
    root, specs = fixture_set
    for spec in specs.values():
        for m in spec.members:
            if m.rel_path is None:
                assert S.FAILED in m.traits
                continue
            path = root / m.rel_path
            lines = decode(path)
            head = lines[0]
            assert set(head) >= HEADER_KEYS and "data" not in head and "seq" not in head
            assert head["id"] == m.id == path.parent.name
            assert path.parent.parent.name == project_key(head["cwd"]) == spec.project_key
            events = lines[1:]
            assert [e["seq"] for e in events] == list(range(len(events)))
            assert len(events) == m.event_count and len(lines) == m.line_count
            assert frame_count(path) == m.frame_count
            times = [e["time"] for e in events]
            assert times == sorted(times)
            assert (times[-1] if times else None) == m.last_time
            if m.role == "lead":
                assert "parentSession" not in head and head["delegationDepth"] == 0
            else:
                assert head["parentSession"] == spec.lead_id and head["delegationDepth"] == 1
                assert head["origin"] == "subagent"
            assert head["isSeeded"] is (S.FORKED in m.traits)
            for e in events:
                if e["type"] == "tool/call":
                    assert isinstance(e["data"]["arguments"], str)
                    json.loads(e["data"]["arguments"])
                if e["type"] == "user/message":
                    assert set(e["data"]) == {"id", "role", "content", "source"}
            last = max((mm.last_time or 0) for mm in spec.members)
            assert spec.last_event_time == last


def test_team_events_only_in_the_lead_log(
    alpha_lines: dict[str, list[dict[str, Any]]], fixture_set: tuple[Path, dict[str, TeamSpec]]
) -> None:
    alpha = fixture_set[1]["alpha"]
    for member_id, lines in alpha_lines.items():
        team = [
            e for e in lines[1:] if e["type"].startswith("team/") or e["type"] == "subagent/catalog"
        ]
        if member_id == alpha.lead_id:
            assert team and all(
                e["data"]["teamId"] == alpha.team_id
                for e in team
                if e["type"] != "subagent/catalog"
            )
        else:
            assert team == []


def test_forked_member_copies_the_lead_prefix(
    alpha_lines: dict[str, list[dict[str, Any]]], fixture_set: tuple[Path, dict[str, TeamSpec]]
) -> None:
    alpha = fixture_set[1]["alpha"]
    (forked,) = alpha.with_trait(S.FORKED)
    child = alpha_lines[forked.id][1:]
    lead = alpha_lines[alpha.lead_id][1:]
    k = forked.inherited_count
    assert k > 0 and child[:k] == lead[:k]
    assert child[k]["type"] == "session/end-seed" and child[k]["seq"] == k
    assert child[k]["data"] == {"inherited": True}
    # The prefix holds the lead's human prompt(s) and an open lead turn.
    copied = [p for p in alpha.human_prompts if forked.id in p.copied_into]
    assert copied and all(
        any(e["type"] == "user/message" and e["data"]["id"] == p.id for e in child[:k])
        for p in copied
    )
    # A non-seeded log carries a session/end-seed that means nothing.
    assert alpha.stray_end_seed is not None
    sid, seq = alpha.stray_end_seed
    stray = alpha_lines[sid]
    assert stray[0]["isSeeded"] is False and stray[1 + seq]["type"] == "session/end-seed"


def test_task_revisions_grow_by_one_except_the_rewind_and_the_skip(
    alpha_lines: dict[str, list[dict[str, Any]]], fixture_set: tuple[Path, dict[str, TeamSpec]]
) -> None:
    alpha = fixture_set[1]["alpha"]
    seen: dict[str, list[int]] = defaultdict(list)
    for e in alpha_lines[alpha.lead_id][1:]:
        if e["type"] == "team/task":
            seen[e["data"]["task"]["id"]].append(e["data"]["task"]["revision"])
    assert len(alpha.rewinds) == 1
    for task in alpha.tasks:
        firsts: list[int] = []
        repeats: list[int] = []
        for rev in seen[task.id]:
            (repeats if rev in firsts else firsts).append(rev)
        if "skipped-revision" in task.traits:  # written one revision too far, once
            assert firsts == [1, 3]
        else:
            assert firsts == list(range(1, len(firsts) + 1))
        assert firsts == [r.revision for r in task.revisions]
        assert repeats == [r.revision for r in alpha.rewinds if r.task_id == task.id]


def test_every_transition_has_its_cas_tool_call(
    alpha_lines: dict[str, list[dict[str, Any]]], fixture_set: tuple[Path, dict[str, TeamSpec]]
) -> None:
    alpha = fixture_set[1]["alpha"]
    for task in alpha.tasks:
        for before, rev in zip((None, *task.revisions), task.revisions, strict=False):
            lines = alpha_lines[rev.actor_id]
            call = lines[1 + rev.call_seq]
            assert call["type"] == "tool/call" and call["time"] == rev.call_time
            args = json.loads(call["data"]["arguments"])
            if rev.revision == 1:
                assert call["data"]["name"] == "team_task_create"
                assert args["subject"] == task.subject
            else:
                assert call["data"]["name"] == "team_task_update"
                assert before is not None
                assert {k: args[k] for k in ("task_id", "expected_revision", "action")} == {
                    "task_id": task.id,
                    "expected_revision": before.revision,
                    "action": rev.tool_action,
                }
            assert rev.call_time <= rev.time  # the call precedes the board event
            snap = alpha_lines[alpha.lead_id][1 + rev.lead_seq]["data"]["task"]
            assert (snap["revision"], snap["status"], snap.get("ownerId")) == (
                rev.revision,
                rev.status,
                rev.owner_id,
            )


def test_alpha_covers_the_promised_shapes(fixture_set: tuple[Path, dict[str, TeamSpec]]) -> None:
    alpha = fixture_set[1]["alpha"]
    for trait in (S.FORKED, S.RENAMED, S.CATALOG_FIRST, S.FAILED, S.COLD_OPEN_STEP):
        assert len(alpha.with_trait(trait)) == 1, trait
    assert len(alpha.member_named("frontend").aliases) == 2
    (cold,) = alpha.with_trait(S.COLD_OPEN_STEP)
    assert cold.open_step is not None and cold.open_turn is not None
    assert not alpha.live and alpha.lead.open_turn is None
    for kind in S.MESSAGE_KINDS:
        assert alpha.messages_of_kind(kind), kind
    (long_msg,) = alpha.messages_of_kind(S.LONG)
    assert len(long_msg.text) > 16_384 and "\n" in long_msg.text
    (hostile,) = alpha.messages_of_kind(S.HOSTILE)
    assert "<script>alert(1)</script>" in hostile.text and "javascript:" in hostile.text
    roster = {m.id for m in alpha.members}
    assert all(m.target_id not in roster for m in alpha.messages_of_kind(S.OFF_ROSTER))
    assert all(m.queued_seq is None for m in alpha.messages_of_kind(S.ORPHAN_DELIVERY))
    assert all(m.delivered_seq is None for m in alpha.messages_of_kind(S.UNDELIVERED))
    actions = {r.expected_action for t in alpha.tasks for r in t.revisions}
    assert actions == {
        "created", "claimed", "completed", "reopened", "released", "deleted",
        "dependencies-changed", "edited",
    }  # fmt: skip
    for trait in ("missing-blocker", "cycle", "on-deleted", "skipped-revision"):
        assert [t for t in alpha.tasks if trait in t.traits], trait
    handoff = alpha.task("task-1")
    claimers = [r.actor_id for r in handoff.revisions if r.tool_action == "claim"]
    assert len(set(claimers)) == 2
    assert any(t.final.owner_id == alpha.lead_id for t in alpha.tasks)
    assert any(t.final.status == "deleted" for t in alpha.tasks)
    assert any(len(t.revisions) == 1 and t.final.owner_id is None for t in alpha.tasks)
    assert any(len(p.seqs) == 2 for p in alpha.human_prompts)


def test_the_story_team_uses_every_graph_action(
    fixture_set: tuple[Path, dict[str, TeamSpec]],
) -> None:
    """The demo's team: a chain and a fan-in, a release, an assignment by the lead, an
    edit, a dependency change, a deletion and two tasks at once on overlapping scopes."""
    story = fixture_set[1]["invoices"]
    actions = [r.expected_action for t in story.tasks for r in t.revisions]
    for action in ("released", "assigned", "edited", "dependencies-changed", "deleted"):
        assert action in actions, action
    assert any(len(t.blocked_by) >= 2 for t in story.tasks)  # a fan-in
    assert sum(1 for t in story.tasks if t.blocked_by) >= 2  # and a chain beside it


def test_team_message_prompts_in_recipient_logs(
    alpha_lines: dict[str, list[dict[str, Any]]], fixture_set: tuple[Path, dict[str, TeamSpec]]
) -> None:
    alpha = fixture_set[1]["alpha"]
    for msg in alpha.messages:
        if msg.recipient_id is None:
            continue
        assert msg.recipient_seq is not None
        event = alpha_lines[msg.recipient_id][1 + msg.recipient_seq]
        assert event["data"]["source"]["kind"] == "team-message"
        first = event["data"]["content"][0]["text"].split("\n", 1)[0]
        assert first == f"Team message {msg.id} from {msg.sender_name}:"


# -- live ---------------------------------------------------------------------------


def test_live_team_appends_decodable_contiguous_frames(tmp_path: Path) -> None:
    spec = generate_team(tmp_path, seed=3)
    live = LiveTeam(tmp_path, spec)
    now = spec.last_event_time + 60_000
    for _ in range(12):
        live.tick(now)
        now += 2_000
    after = live.spec()
    assert after.live and after.lead.open_turn is not None
    assert sum(m.event_count for m in after.members) > sum(m.event_count for m in spec.members)
    for m in after.members:
        if m.rel_path is None:
            continue
        events = decode(tmp_path / m.rel_path)[1:]
        assert [e["seq"] for e in events] == list(range(len(events))) == list(range(m.next_seq))
        times = [e["time"] for e in events]
        assert times == sorted(times) and times[-1] <= now
    for task in after.tasks:
        if "skipped-revision" in task.traits:  # alpha's odd case, written so on purpose
            continue
        assert [r.revision for r in task.revisions] == list(range(1, len(task.revisions) + 1))


def test_live_flag_leaves_the_lead_on_an_open_turn(tmp_path: Path) -> None:
    spec = generate_team(tmp_path, seed=4, shape="pair", live=True)
    lines = decode(spec.log_path(spec.lead_id))
    assert spec.live and spec.lead.open_turn is not None
    assert lines[-1]["type"] in {"step/start", "assistant/message", "request/header"}


# -- scale ---------------------------------------------------------------------------


@pytest.mark.slow
def test_large_scale_reaches_real_sizes(tmp_path: Path) -> None:
    started = time.monotonic()
    spec = generate_team(tmp_path, seed=1, scale="large")
    elapsed = time.monotonic() - started
    lead = spec.lead
    assert lead.frame_count >= 1_900 and lead.line_count >= 18_000
    mates = [m for m in spec.members if m.role == "teammate" and m.rel_path]
    assert len(mates) == 8 and all(m.line_count >= 3_000 for m in mates)
    assert frame_count(spec.log_path(lead.id)) == lead.frame_count
    assert elapsed < 30, f"large generation took {elapsed:.1f}s"


def test_live_team_on_a_copy_of_the_committed_alpha(tmp_path: Path) -> None:
    """What `serve --demo` does: copy the bundled fixtures, load the spec, keep ticking."""
    root = tmp_path / "sessions"
    shutil.copytree(COMMITTED, root)
    spec = TeamSpec.load(REPO / "fixtures" / "specs" / "alpha.json", root=str(root))
    live = LiveTeam(root, spec, seed=5)
    now = spec.last_event_time + 5_000
    reports = [live.tick(now + 2_000 * i) for i in range(6)]
    assert all(r.appended.get(spec.lead_id, 0) > 0 for r in reports)
    after = live.spec()
    (cold,) = after.with_trait(S.COLD_OPEN_STEP)
    assert cold.event_count == spec.member(cold.id).event_count  # the dead stay dead
    for m in after.members:
        if m.rel_path:
            lines = decode(root / m.rel_path)
            assert len(lines) == m.line_count and frame_count(root / m.rel_path) == m.frame_count
            assert [e["seq"] for e in lines[1:]] == list(range(m.event_count))
    assert tree_bytes(COMMITTED) != tree_bytes(root)


# -- the subagent families in older formats ------------------------------------------


def test_subagent_teams_are_written_in_their_formats(tmp_path: Path) -> None:
    from dsh_task_gantt.fixturegen import subagents as G

    teams = {team.name: team for team in G.write_subagent_teams(tmp_path)}
    names = {
        G.GAMMA_PARENT: "session.v3.jsonl.zstd",
        G.GAMMA_CHILD: "session.v3.jsonl",
        G.GAMMA_COLD_CHILD: "session.jsonl.zstd",
        G.DELTA_PARENT: "session.jsonl.zstd",
        G.DELTA_CHILD: "session.jsonl",
    }
    for team in teams.values():
        for session_id, rel in team.paths.items():
            path = tmp_path / rel
            assert path.name == names[session_id] and path.parent.name == session_id
            if path.suffix == ".zstd":
                lines = decode(path)
            else:
                lines = [json.loads(line) for line in path.read_bytes().splitlines()]
            head, events = lines[0], lines[1:]
            assert head["id"] == session_id and "data" not in head and "seq" not in head
            fmt = 3 if ".v3." in path.name else 0
            assert head.get("version") == (fmt or None)
            assert ("isSeeded" in head) is (fmt == 3)
            parent = head.get("parentSession")
            assert parent == (None if session_id == team.parent else team.parent)
            seqs = [e["seq"] for e in events]
            assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))
            assert seqs[0] == (1 if fmt == 0 else 0)
    assert decode(tmp_path / teams["gamma"].paths[G.GAMMA_COLD_CHILD])[0]["seedLength"] == 2
