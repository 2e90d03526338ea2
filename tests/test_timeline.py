"""build_timeline / message_detail: every rule of docs/host-contract.md §2–§5, end to end."""

from __future__ import annotations

import re
from typing import Any

import orjson
import pytest

from dsh_task_gantt.timeline import (
    MESSAGE_BODY_CAP,
    ON_COLOR,
    PALETTE,
    UNASSIGNED_COLOR,
    build_timeline,
    message_detail,
)
from tests.kit.foldkit import LEAD, T0, Log, header, lane, source, spans, team, user_message

A, B, C = "m-a", "m-b", "m-c"


def _roster(log: Log, *ids: str) -> Log:
    for i, member in enumerate(ids):
        log.member(member, f"name-{member}", at=i)
    return log


def _build(lead_log: Log, members: dict[str, Any] | None = None, **kw: Any) -> dict[str, Any]:
    built = build_timeline(team(source(LEAD, lead_log), members, **kw))
    orjson.dumps(built)  # always serialisable
    return built


def _note(timeline: dict[str, Any], pattern: str) -> str:
    found = [n for n in timeline["notes"] if re.search(pattern, n)]
    assert found, f"no note matching {pattern!r} in {timeline['notes']}"
    return found[0]


# -- top level --------------------------------------------------------------------------


def test_top_level_fields_echo_the_request() -> None:
    out = build_timeline(team(source(LEAD, Log().turn("t", 1, 2)), requested=LEAD))
    assert out["version"] == 1
    assert out["generatedAt"] == T0 + 10**9
    assert out["sessionId"] == LEAD and out["rootSessionId"] == LEAD
    assert out["source"] == "log"
    assert [x["id"] for x in out["lanes"]] == ["lead"]


# -- turns -------------------------------------------------------------------------------


def test_turns_pair_by_id_and_an_unclosed_turn_has_no_end() -> None:
    log = Log().turn("t2", 30).turn("t1", 10, 20, reason="aborted")
    out = _build(log)
    turns = spans(out, "lead", "turn")
    assert [(s["id"], s["time"] - T0, s["end"]) for s in turns] == [
        ("t1", 10, T0 + 20),
        ("t2", 30, None),
    ]
    assert "aborted" in turns[0]["preview"]
    assert all(s["to"] is None and s["direction"] is None for s in turns)


def test_spans_name_their_parties_with_one_shared_object_each() -> None:
    """Every turn of a lane and every mark of a message name their member with one
    object (a day holds tens of thousands of spans, each naming one or two members),
    equal to what a copy would say."""
    log = _roster(Log(), A).turn("t1", 10, 20).turn("t2", 30, 40)
    log.queued("q1", LEAD, A, "hello", at=35).delivered("q1", A, 36)
    out = _build(log, {A: source(A, Log().turn("a1", 37, 38), hdr=header(A, parent=LEAD))})
    t1, t2 = spans(out, "lead", "turn")
    assert t1["from"] == {"kind": "lead", "id": "lead", "name": "lead"}
    assert t1["from"] is t2["from"]
    (sent,) = spans(out, "lead", "message")
    (received,) = spans(out, A, "message")
    assert sent["from"] is received["from"] is t1["from"]
    assert sent["to"] is received["to"] is spans(out, A, "turn")[0]["from"]


def test_orphan_turn_end_is_counted_not_drawn() -> None:
    log = Log().add("turn/end", {"turn": "ghost", "reason": {"kind": "completed"}}, 5)
    out = _build(log)
    assert spans(out, "lead") == []
    assert out["diagnostics"]["orphanTurnEnds"] == 1
    _note(out, r"^1 turn end without a start")


def test_end_before_start_is_drawn_with_zero_length_and_counted() -> None:
    out = _build(Log().turn("t", 50, 10))
    (turn,) = spans(out, "lead", "turn")
    assert turn["end"] == turn["time"] == T0 + 50
    assert out["diagnostics"]["turnEndsBeforeStart"] == 1
    _note(out, "dated before the turn's start")


def test_a_turn_without_time_yields_no_span() -> None:
    out = _build(Log().turn("t", None, 10))
    assert spans(out, "lead") == []
    assert out["diagnostics"]["undatedTurns"] == 1


def test_duplicate_turn_start_keeps_the_earliest() -> None:
    log = Log().add("turn/start", {"turn": "t"}, 40).add("turn/start", {"turn": "t"}, 10)
    out = _build(log)
    (turn,) = spans(out, "lead", "turn")
    assert turn["time"] == T0 + 10
    assert out["diagnostics"]["duplicateTurnStarts"] == 1


def test_equal_times_are_ordered_by_seq() -> None:
    log = Log().add("turn/start", {"turn": "t"}, 5)
    log.add("turn/end", {"turn": "t", "reason": {"kind": "first"}}, 9)
    log.add("turn/end", {"turn": "t", "reason": {"kind": "second"}}, 9)
    (turn,) = spans(_build(log), "lead", "turn")
    assert "first" in turn["preview"]


# -- forked lanes ---------------------------------------------------------------------------


def _forked_member_log() -> Log:
    """A fork: 4 events copied from the lead (a prompt, a turn, a create call), then its own."""
    log = Log()
    log.prompt("lead's prompt", 1, "p-lead").turn("lead-turn", 2).create_call("shared", 3)
    log.add("session/end-seed", {"inherited": True}, 4)
    log.turn("own", 10, 20).prompt("own prompt", 11, "p-own")
    return log


def _lead_with_fork() -> Log:
    log = _roster(Log(), A)
    log.prompt("lead's prompt", 1, "p-lead").turn("lead-turn", 2).create_call("shared", 3)
    log.task("task-1", 1, at=4, subject="shared")
    return log


@pytest.mark.parametrize(
    ("hdr", "inherited", "cut_by"),
    [
        (header(A, parent=LEAD, seeded=True), None, "end-seed"),
        (header(A, parent=LEAD, seeded=False, inherited=3), None, "header count"),
        (header(A, parent=LEAD, seeded=True, inherited=0), 3, "host count"),
    ],
)
def test_the_inherited_prefix_of_a_fork_is_not_drawn(
    hdr: Any, inherited: int | None, cut_by: str
) -> None:
    member = source(A, _forked_member_log(), hdr=hdr, inherited=inherited)
    out = _build(_lead_with_fork(), {A: member})
    mine = spans(out, A)
    assert {s["id"] for s in mine} == {"own", "p-own"}, cut_by
    assert [s["id"] for s in spans(out, "lead", "user-prompt")] == ["p-lead"]
    # the copied create call does not make the create ambiguous
    (task,) = out["tasks"]
    assert task["history"][0]["actor"] == "lead"
    assert out["diagnostics"]["inheritedEventsSkipped"][A] >= 3
    _note(out, rf"skipped \d+ events inherited from the lead in name-{A}'s log")


def test_host_count_wins_over_header_and_end_seed() -> None:
    hdr = header(A, parent=LEAD, seeded=True, inherited=1)
    member = source(A, _forked_member_log(), hdr=hdr, inherited=0)
    out = _build(_lead_with_fork(), {A: member})
    assert "lead-turn" in {s["id"] for s in spans(out, A)}


def test_a_non_seeded_log_inherits_nothing_even_with_an_end_seed() -> None:
    member = source(A, _forked_member_log(), hdr=header(A, parent=LEAD, seeded=False))
    out = _build(_lead_with_fork(), {A: member})
    assert {"lead-turn", "own"} <= {s["id"] for s in spans(out, A)}
    assert out["diagnostics"]["inheritedEventsSkipped"] == {}


def test_team_events_are_taken_from_the_lead_log_only() -> None:
    member_log = Log().member("intruder", "x").task("task-9", 1).queued("mx", A, LEAD, "hi")
    out = _build(_roster(Log(), A), {A: source(A, member_log)})
    assert [x["id"] for x in out["lanes"]] == ["lead", A]
    assert out["tasks"] == []
    assert out["diagnostics"]["uniqueMessages"] == 0


# -- roster --------------------------------------------------------------------------------


def test_live_roster_order_wins_then_first_appearance_then_running_children() -> None:
    log = _roster(Log(), A, B, C)
    live = [{"id": LEAD, "name": "lead", "role": "lead"}, {"id": C, "name": "gamma"}]
    out = _build(log, live_members=live, running=["m-run"])
    assert [x["id"] for x in out["lanes"]] == ["lead", C, A, B, "m-run"]
    assert lane(out, C)["name"] == "gamma"
    assert lane(out, "m-run")["name"] == "m-run"


def test_catalog_before_member_still_indexes_the_name() -> None:
    log = Log().catalog(A, 5, at=1).member(A, "alpha", at=2).queued("q", LEAD, "alpha", "hey")
    out = _build(log)
    assert lane(out, A)["name"] == "alpha"
    assert lane(out, A)["createdAt"] == T0 + 5
    assert [s["direction"] for s in spans(out, A, "message")] == ["incoming"]


def test_a_catalog_only_member_shows_its_id() -> None:
    out = _build(Log().catalog(A, 5))
    assert lane(out, A)["name"] == A


def test_a_renamed_member_keeps_both_names() -> None:
    log = Log().member(A, "old", at=1).member(A, "new", at=2).queued("q", LEAD, "old", "hi")
    out = _build(log)
    assert lane(out, A)["name"] == "new"
    (mark,) = spans(out, A, "message")
    assert mark["to"] == {"kind": "teammate", "id": A, "name": "new"}


def test_created_at_falls_back_to_the_header_then_null() -> None:
    log = _roster(Log(), A, B)
    out = _build(log, {A: source(A, hdr=header(A, created=7)), B: source(B, hdr=None)})
    assert lane(out, A)["createdAt"] == T0 + 7
    assert lane(out, B)["createdAt"] is None


def test_phase_is_the_latest_and_status_comes_from_the_agent() -> None:
    log = Log().member(A, "a", phase="provisioning").member(A, "a", phase="failed", at=3)
    out = _build(log, {A: source(A, status="idle")})
    assert lane(out, A)["phase"] == "failed"
    assert lane(out, A)["status"] == "idle"
    assert lane(out, "lead")["status"] is None


def test_colours_are_positional_and_unassigned_is_neutral() -> None:
    ids = [f"m-{i}" for i in range(7)]
    log = _roster(Log(), *ids).task("task-1", 1)
    out = _build(log)
    lanes = out["lanes"]
    assert [x["color"]["slot"] for x in lanes] == [0, 1, 2, 3, 4, 0, 1, 2, None]
    assert [x["color"]["fill"] for x in lanes[:5]] == [t for t, _ in PALETTE]
    assert lanes[-1]["id"] == "unassigned"
    assert lanes[-1]["color"]["fill"] == UNASSIGNED_COLOR[0]
    assert all(x["color"]["on"] == ON_COLOR[0] for x in lanes)
    assert [x["index"] for x in lanes] == list(range(len(lanes)))
    assert PALETTE[0][1] == "rgb(65,118,230)" and ON_COLOR[1] == "rgb(255,255,255)"


def test_a_member_without_a_log_is_an_unreadable_lane() -> None:
    out = _build(_roster(Log(), A))
    assert lane(out, A)["channel"] == "unreadable"
    assert out["source"] == "partial"


def test_a_failed_member_without_a_log_is_not_a_loss() -> None:
    roster = Log().member(A, "ghost", phase="provisioning").member(A, "ghost", phase="failed")
    out = _build(roster, {A: source(A, channel="unreadable", error="no persisted log")})
    assert lane(out, A)["channel"] == "unreadable" and lane(out, A)["phase"] == "failed"
    assert out["source"] == "log" and out["diagnostics"]["unreadableLanes"] == 0
    _note(out, r"ghost failed to start and has no log to read; its lane is empty")
    active = _build(Log().member(A, "ghost"), {A: source(A, channel="unreadable")})
    assert active["source"] == "partial"


# -- tasks ---------------------------------------------------------------------------------


def _actions(task: dict[str, Any]) -> list[tuple[int, str, str]]:
    return [(h["revision"], h["action"], h["status"]) for h in task["history"]]


def test_task_actions_follow_the_state_machine() -> None:
    log = _roster(Log(), A).task("task-1", 1, at=1).task("task-1", 2, "in_progress", 2, A)
    log.task("task-1", 3, "completed", 3, A).task("task-1", 4, "pending", 4)
    log.task("task-1", 5, "pending", 5).task("task-2", 3, "completed", 6)
    log.task("task-3", 7, "in_progress", 7).task("task-4", 2, "pending", 8)
    out = _build(log)
    by_id = {t["id"]: t for t in out["tasks"]}
    assert _actions(by_id["task-1"]) == [
        (1, "created", "pending"),
        (2, "claimed", "in_progress"),
        (3, "completed", "completed"),
        (4, "reopened", "pending"),
        (5, "updated", "pending"),
    ]
    assert _actions(by_id["task-2"]) == [(3, "completed", "completed")]
    assert _actions(by_id["task-3"]) == [(7, "claimed", "in_progress")]
    assert _actions(by_id["task-4"]) == [(2, "updated", "pending")]
    assert [t["id"] for t in out["tasks"]] == ["task-1", "task-2", "task-3", "task-4"]


def test_duplicate_and_rewound_revisions_never_rewind_the_state() -> None:
    log = _roster(Log(), A).task("task-1", 1, at=1).task("task-1", 2, "in_progress", 2, A)
    log.task("task-1", 3, "completed", 3, A).task("task-1", 3, "pending", 4)
    log.task("task-1", 2, "pending", 5)
    out = _build(log)
    (task,) = out["tasks"]
    assert task["status"] == "completed" and task["revision"] == 3
    assert [h["revision"] for h in task["history"]] == [1, 2, 3]
    assert out["diagnostics"]["duplicateTaskRevisions"] == 1
    assert out["diagnostics"]["rewoundTaskRevisions"] == 1
    _note(out, r"2 task revisions skipped \(1 duplicate, 1 rewound\)")


def test_each_revision_is_attributed_by_the_unique_cas_call() -> None:
    lead = _roster(Log(), A, B).task("task-1", 1, at=1, subject="build it")
    lead.task("task-1", 2, "in_progress", 5, A).task("task-1", 3, "completed", 9, A)
    lead.task("task-1", 4, "pending", 12)
    lead.create_call("build it", 0)
    a = Log().update_call("task-1", 1, "claim", 4).update_call("task-1", 3, "reopen", 11)
    b = Log().update_call("task-1", 2, "complete", 8).update_call("task-1", 3, "reopen", 11)
    out = _build(lead, {A: source(A, a), B: source(B, b)})
    (task,) = out["tasks"]
    who = [(h["revision"], h["sessionId"], h["actor"]) for h in task["history"]]
    assert who == [
        (1, LEAD, "lead"),
        (2, A, f"name-{A}"),
        (3, B, f"name-{B}"),
        (4, None, None),  # two calls expected revision 3: refused, not guessed
    ]
    assert out["diagnostics"]["ambiguousTaskRevisions"] == 1


def test_a_create_is_matched_by_subject_only_when_one_create_has_it() -> None:
    lead = _roster(Log(), A).task("task-1", 1, at=1, subject="dup").task("task-2", 1, subject="u")
    lead.create_call("dup").create_call("u")
    a = Log().create_call("dup")
    out = _build(lead, {A: source(A, a)})
    by_id = {t["id"]: t for t in out["tasks"]}
    assert by_id["task-1"]["history"][0]["actor"] is None
    assert by_id["task-2"]["history"][0]["actor"] == "lead"


def test_a_task_only_the_live_board_knows_is_dated_by_tool_calls() -> None:
    lead = _roster(Log(), A).create_call("from board", 2)
    a = Log().update_call("task-7", 1, "claim", 6)
    live = [
        {"id": "task-7", "revision": 2, "subject": "from board", "status": "in_progress",
         "ownerName": f"name-{A}", "blockedBy": [], "writeScopes": []},
        {"id": "task-8", "revision": 1, "subject": "nothing known", "status": "pending",
         "ownerName": "lead", "blockedBy": [], "writeScopes": []},
    ]  # fmt: skip
    out = _build(lead, {A: source(A, a)}, live_tasks=live)
    by_id = {t["id"]: t for t in out["tasks"]}
    assert [(h["time"] - T0, h["action"], h["actor"]) for h in by_id["task-7"]["history"]] == [
        (2, "created", "lead"),
        (6, "claimed", f"name-{A}"),
    ]
    assert by_id["task-7"]["laneId"] == A
    assert by_id["task-8"]["history"] == []
    assert by_id["task-8"]["laneId"] == "lead" and by_id["task-8"]["ownerName"] == "lead"
    _note(out, "task task-7 is on the live board but not in the lead's log")


def test_task_owner_lanes_unassigned_and_deleted() -> None:
    log = _roster(Log(), A).task("task-1", 1, "in_progress", owner=LEAD)
    log.task("task-2", 1, "in_progress", owner=A).task("task-3", 1)
    log.task("task-4", 1, "deleted")
    out = _build(log)
    by_id = {t["id"]: t for t in out["tasks"]}
    assert by_id["task-1"]["laneId"] == "lead" and by_id["task-1"]["ownerName"] == "lead"
    assert lane(out, "lead")["taskIds"] == ["task-1"]
    assert lane(out, A)["taskIds"] == ["task-2"]
    assert out["lanes"][-1]["id"] == "unassigned"
    assert out["lanes"][-1]["taskIds"] == ["task-3"]
    assert by_id["task-4"]["status"] == "deleted"
    assert all("task-4" not in x["taskIds"] for x in out["lanes"])
    _note(out, "1 deleted task listed with its history but on no lane")


def test_no_unassigned_lane_when_every_live_task_has_an_owner() -> None:
    log = Log().task("task-1", 1, "in_progress", owner=LEAD).task("task-2", 1, "deleted")
    assert [x["id"] for x in _build(log)["lanes"]] == ["lead"]


def test_a_revision_without_a_time_takes_its_calls_time_never_now() -> None:
    lead = _roster(Log(), A).task("task-1", 1, at=1).task("task-1", 2, "in_progress", None, A)
    lead.task("task-1", 3, "completed", None, A)
    a = Log().update_call("task-1", 1, "claim", 4)
    out = _build(lead, {A: source(A, a)})
    (task,) = out["tasks"]
    assert [(h["revision"], h["time"] - T0) for h in task["history"]] == [(1, 1), (2, 4)]
    assert out["diagnostics"]["undatedTaskRevisions"] == 1


# -- messages ------------------------------------------------------------------------------


def test_messages_pair_by_id_not_by_position_or_time() -> None:
    log = _roster(Log(), A, B).delivered("m2", A, 30).queued("m1", A, B, "one", 10)
    log.queued("m2", B, A, "two", 5).delivered("m1", B, 40)
    out = _build(log)
    details = {m: message_detail(team(source(LEAD, log)), m) for m in ("m1", "m2")}
    assert details["m1"] is not None and details["m1"]["deliveredAt"] == T0 + 40
    assert details["m2"] is not None and details["m2"]["deliveredAt"] == T0 + 30
    assert [s["id"] for s in spans(out, A, "message")] == ["m2", "m1"]


def test_message_between_members_is_drawn_on_both_lanes_with_per_lane_direction() -> None:
    log = _roster(Log(), A, B).queued("m1", A, B, "hello\n  world", 10).delivered("m1", B, 11)
    out = _build(log)
    (sent,) = spans(out, A, "message")
    (got,) = spans(out, B, "message")
    assert sent["direction"] == "outgoing" and got["direction"] == "incoming"
    assert sent["from"] == got["from"] == {"kind": "teammate", "id": A, "name": f"name-{A}"}
    assert sent["to"] == {"kind": "teammate", "id": B, "name": f"name-{B}"}
    assert sent["time"] == T0 + 10 and sent["end"] is None
    assert sent["preview"] == "hello world"
    assert sent["sessionId"] == LEAD
    assert spans(out, "lead", "message") == []


def test_a_wake_up_spliced_twice_into_the_targets_inbox_is_one_message() -> None:
    """DSH 0.1.1 (HOST §6): the lead's log holds one queued and one delivered record
    while the target's inbox got the message twice (two inbox records, one message id,
    a third turn on it). One message: once on each lane."""
    log = _roster(Log(), A).queued("tm-1", LEAD, A, "claim it", 3).delivered("tm-1", A, 4)
    wake = {"kind": "team-message", "teamId": LEAD, "messageId": "tm-1", "senderId": LEAD}
    member = Log()
    for n, at in ((1, 5), (2, 9)):
        member.add("agent/inbox/spliced", {"inserted": [user_message("x", f"in-{n}", wake)]}, at)
        member.turn(f"t{n}", at).add("user/message", user_message("x", f"in-{n}", wake), at)
    out = _build(log, {A: source(A, member, hdr=header(A, parent=LEAD))})
    assert [m["id"] for m in spans(out, "lead", "message")] == ["tm-1"]
    assert [m["id"] for m in spans(out, A, "message")] == ["tm-1"]
    assert out["diagnostics"]["uniqueMessages"] == 1
    assert out["diagnostics"]["humanPrompts"] == 0


def test_sender_comes_from_the_payload_and_the_lead_id_is_the_lead() -> None:
    log = _roster(Log(), A).queued("m1", LEAD, A, "do it", 3)
    member = Log().queued("m9", A, LEAD, "copy in a member log", 4)
    out = _build(log, {A: source(A, member)})
    (mark,) = spans(out, "lead", "message")
    assert mark["from"]["kind"] == "lead" and mark["direction"] == "outgoing"
    assert [s["id"] for s in spans(out, A, "message")] == ["m1"]


def test_a_target_off_the_roster_is_drawn_on_the_sender_only_and_noted() -> None:
    out = _build(_roster(Log(), A).queued("m1", A, "stranger", "psst", 3))
    assert [x["id"] for x in out["lanes"]] == ["lead", A]  # no invented lane
    (mark,) = spans(out, A, "message")
    assert mark["direction"] == "outgoing"
    assert mark["to"] == {"kind": "system", "id": "stranger", "name": "stranger"}
    _note(out, "1 to a target outside the team, drawn on the sender's lane only")


def test_a_delivery_without_queue_record_has_an_unknown_sender() -> None:
    out = _build(_roster(Log(), A).delivered("m1", A, 7))
    (mark,) = spans(out, A, "message")
    assert mark["from"] == {"kind": "system", "id": "system", "name": "unknown sender"}
    assert mark["time"] == T0 + 7 and mark["direction"] == "incoming"
    assert out["diagnostics"]["unpairedDeliveries"] == 1
    _note(out, "1 delivered without a queue record")


def test_a_queued_message_not_yet_delivered_is_drawn_at_its_queued_time() -> None:
    out = _build(_roster(Log(), A, B).queued("m1", A, B, "soon", 4))
    assert [s["time"] for s in spans(out, B, "message")] == [T0 + 4]
    assert out["diagnostics"]["pendingDeliveries"] == 1
    _note(out, "1 message queued but not yet delivered")


def test_duplicates_first_queue_record_and_last_delivery_win() -> None:
    log = _roster(Log(), A, B).queued("m1", A, None, "first", 1).queued("m1", B, A, "second", 2)
    log.delivered("m1", B, 5).delivered("m1", B, 9)
    out = _build(log)
    (mark,) = spans(out, A, "message")
    assert mark["preview"] == "first" and mark["direction"] == "outgoing"
    assert mark["to"]["id"] == B  # the queue record's missing target comes from the delivery
    detail = message_detail(team(source(LEAD, log)), "m1")
    assert detail is not None and detail["deliveredAt"] == T0 + 9
    assert out["diagnostics"]["duplicateQueued"] == 1
    assert out["diagnostics"]["duplicateDelivered"] == 1


def test_preview_is_one_line_of_at_most_140_characters() -> None:
    body = "word\n\t" * 100
    (mark,) = spans(_build(_roster(Log(), A).queued("m1", LEAD, A, body, 1)), A, "message")
    assert len(mark["preview"]) <= 140 and "\n" not in mark["preview"]
    assert mark["preview"].startswith("word word")


def _numbers(note: str) -> list[int]:
    return [int(n) for n in re.findall(r"\b(\d+) ", note)]


def test_message_note_counts_add_up_and_match_the_lanes() -> None:
    log = _roster(Log(), A, B)
    log.queued("m1", A, B, "x", 1).queued("m2", B, A, "x", 2).queued("m3", A, "far", "x", 3)
    log.delivered("m4", B, 4).queued("m5", "nobody", B, "x", 5).queued("m6", A, A, "x", 6)
    log.queued("m7", "nobody", "far", "x", 7).queued("m8", A, B, "undated", None)
    out = _build(log)
    note = _note(out, r"^\d+ unique messages:")
    total, *parts, marks = _numbers(note)
    assert total == 8 and sum(parts) == total
    recount = [s for x in out["lanes"] for s in x["spans"] if s["kind"] == "message"]
    assert marks == len(recount) == out["diagnostics"]["messageMarks"] == 2 * 2 + 4
    assert len({s["id"] for s in recount}) == 6
    d = out["diagnostics"]
    assert (d["messagesOnTwoLanes"], d["messagesNotDrawn"], d["messagesToSelf"]) == (2, 2, 1)


# -- human prompts -----------------------------------------------------------------------


def test_only_user_source_is_a_human_prompt_and_injected_kinds_are_counted() -> None:
    log = Log().prompt("hi", 1, "p1").prompt("t", 2, "i1", "time-context")
    log.prompt("t", 3, "i2", "time-context").prompt("msg", 4, "i3", "team-message")
    out = _build(log)
    assert [s["id"] for s in spans(out, "lead", "user-prompt")] == ["p1"]
    assert out["diagnostics"]["injectedUserMessages"] == {"team-message": 1, "time-context": 2}
    _note(out, r"3 runtime-injected user messages not drawn .*time-context 2, team-message 1")


def test_a_prompt_is_drawn_once_on_the_first_lane_that_carries_it() -> None:
    lead = _roster(Log(), A, B).prompt("shared", 5, "p1")
    a = Log().prompt("shared", 4, "p1").prompt("only mine", 6, "p2")
    b = Log().prompt("only mine", 6, "p2")
    out = _build(lead, {A: source(A, a), B: source(B, b)})
    assert [s["id"] for s in spans(out, "lead", "user-prompt")] == ["p1"]
    assert [s["id"] for s in spans(out, A, "user-prompt")] == ["p2"]
    assert spans(out, B, "user-prompt") == []
    (p2,) = spans(out, A, "user-prompt")
    assert p2["from"] == {"kind": "user", "id": "user", "name": "you"}
    assert p2["to"] == {"kind": "teammate", "id": A, "name": f"name-{A}"}
    assert p2["sessionId"] == A
    assert out["diagnostics"]["humanPromptCopiesSkipped"] == 2


def test_prompts_without_id_dedupe_by_time_and_text() -> None:
    lead = _roster(Log(), A).prompt("same", 5).prompt("same", 6)
    a = Log().prompt("same", 5).prompt("other", 5)
    out = _build(lead, {A: source(A, a)})
    assert [s["time"] - T0 for s in spans(out, "lead", "user-prompt")] == [5, 6]
    assert [s["preview"] for s in spans(out, A, "user-prompt")] == ["other"]


# -- live / frozen -------------------------------------------------------------------------


def test_frozen_range_ends_at_the_last_observed_event_of_any_lane() -> None:
    lead = _roster(Log(), A).turn("t", 5, 10)
    a = Log().turn("x", 6, 8).bulk(99)  # a bulk event without data still has its time
    out = _build(lead, {A: source(A, a)})
    assert out["live"] is False
    assert out["range"] == {"start": T0 + 5, "end": T0 + 99}
    assert out["range"]["end"] != out["generatedAt"]


def test_a_running_agent_or_running_child_makes_it_live() -> None:
    lead = _roster(Log(), A).turn("t", 5, 10)
    assert _build(lead, {A: source(A, status="running")})["live"] is True
    out = _build(lead, {A: source(A)}, running=["m-new"])
    assert out["live"] is True and out["range"]["end"] is None


def test_live_is_the_teams_whichever_member_is_asked_for() -> None:
    # An open turn in a cold teammate's log is history, even when that teammate is
    # the session asked for; the root's own open turn is evidence from every member.
    lead = _roster(Log(), A).turn("t", 5, 10)
    cold = Log().turn("x", 6).step("x", 1, 7, closed=False)
    assert _build(lead, {A: source(A, cold)})["live"] is False
    out = build_timeline(team(source(LEAD, lead), {A: source(A, cold)}, requested=A))
    assert out["live"] is False and out["range"]["end"] is not None
    open_lead = _roster(Log(), A).turn("t", 5)
    for asked in (LEAD, A):
        out = build_timeline(team(source(LEAD, open_lead), {A: source(A, cold)}, requested=asked))
        assert out["live"] is True and out["range"]["end"] is None


def test_an_open_span_in_the_inherited_prefix_is_not_evidence() -> None:
    fork = Log().step("lead-turn", 1, 1, closed=False).add("session/end-seed", {"inherited": True})
    fork.turn("own", 5, 9)
    member = source(A, fork, hdr=header(A, parent=LEAD, seeded=True))
    out = build_timeline(team(source(LEAD, _roster(Log(), A)), {A: member}, requested=A))
    assert out["live"] is False


def test_range_start_is_the_earliest_drawn_time_and_null_when_nothing() -> None:
    out = _build(Log().bulk(3).turn("t", 7, 9))
    assert out["range"]["start"] == T0 + 7
    empty = _build(Log())  # nothing dated: both ends fall back to the header's creation
    assert empty["range"]["start"] == empty["range"]["end"] is not None


# -- sources and notes ---------------------------------------------------------------------


def test_an_unreadable_lane_makes_the_source_partial_and_is_named() -> None:
    members = {
        A: source(A, channel="unreadable", error="torn frame"),
        B: source(B, channel="empty"),
    }
    out = _build(_roster(Log(), A, B), members, notes=["agents service timed out"])
    assert out["source"] == "partial"
    assert lane(out, A)["channel"] == "unreadable" and lane(out, A)["error"] == "torn frame"
    assert lane(out, B)["channel"] == "empty"
    _note(out, rf"could not read the log of name-{A} \(torn frame\); its lane is empty")
    assert "agents service timed out" in out["notes"]
    only_empty = _build(_roster(Log(), B), {B: source(B, channel="empty")})
    assert only_empty["source"] == "log"


def test_turn_note_counts_add_up() -> None:
    log = Log().turn("a", 1, 2).turn("b", 3).turn("c", 4, 6)
    note = _note(_build(log), r"turns drawn")
    total, closed, open_ = _numbers(note)
    assert (total, closed, open_) == (3, 2, 1)


def test_spans_are_sorted_by_time_kind_and_id() -> None:
    log = _roster(Log(), A).prompt("p", 5, "z").turn("b", 5).turn("a", 5)
    log.queued("m", LEAD, A, "x", 5)
    out = _build(log)
    assert [(s["kind"], s["id"]) for s in spans(out, "lead")] == [
        ("turn", "a"),
        ("turn", "b"),
        ("message", "m"),
        ("user-prompt", "z"),
    ]


# -- message detail ------------------------------------------------------------------------


def test_message_detail_keeps_line_breaks_and_says_when_cut() -> None:
    long = "line one\nline two\n" + "y" * (MESSAGE_BODY_CAP + 50)
    log = _roster(Log(), A).queued("m1", LEAD, A, long, 3).queued("m2", A, LEAD, "a\nb", 4)
    snap = team(source(LEAD, log))
    cut = message_detail(snap, "m1")
    assert cut is not None
    assert cut["truncated"] is True and cut["length"] == len(long)
    assert len(cut["body"]) == MESSAGE_BODY_CAP and cut["body"].startswith("line one\nline two")
    whole = message_detail(snap, "m2")
    assert whole == {
        "id": "m2",
        "from": {"kind": "teammate", "id": A, "name": f"name-{A}"},
        "to": {"kind": "lead", "id": "lead", "name": "lead"},
        "queuedAt": T0 + 4,
        "deliveredAt": None,
        "body": "a\nb",
        "length": 3,
        "truncated": False,
    }
    assert message_detail(snap, "nope") is None


def test_message_detail_opens_a_human_prompt() -> None:
    snap = team(source(LEAD, Log().prompt("please\nbuild", 2, "p1")))
    detail = message_detail(snap, "p1")
    assert detail is not None
    assert detail["from"]["kind"] == "user" and detail["to"]["id"] == "lead"
    assert detail["body"] == "please\nbuild" and detail["deliveredAt"] == T0 + 2
