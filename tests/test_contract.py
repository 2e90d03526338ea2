"""The wire contract: every field of the timeline JSON and of a message, with its type,
on a real-format team (docs/interfaces.md, The timeline JSON). Scripts and the panel
rely on these names."""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path
from typing import Any

import pytest

from dsh_task_gantt.embedded import EmbeddedHost
from dsh_task_gantt.fixturegen import TeamSpec

ROOT = Path(__file__).resolve().parent.parent
SESSIONS = ROOT / "fixtures" / "sessions"
ALPHA = TeamSpec.load(ROOT / "fixtures" / "specs" / "alpha.json", root=str(SESSIONS))

TIMELINE_KEYS = {
    "version", "generatedAt", "sessionId", "rootSessionId", "source", "live", "range",
    "lanes", "tasks", "tokens", "notes", "diagnostics", "criticalPath",
}  # fmt: skip
LANE_KEYS = {
    "id", "kind", "name", "sessionId", "index", "label", "color", "phase", "status", "createdAt",
    "channel", "error", "spans", "taskIds", "now", "tokens", "model",
}  # fmt: skip
SPAN_KEYS = {"kind", "id", "time", "end", "from", "to", "direction", "preview", "sessionId"}
#: Added beyond the documented contract (adding fields is allowed): a message's delivery time.
MESSAGE_SPAN_EXTRAS = {"deliveredAt"}
#: A turn's own token use (docs/interfaces.md, Tokens).
TURN_SPAN_EXTRAS = {"tokens"}
TOKENS_KEYS = {
    "input", "cacheRead", "cacheWrite", "output", "reasoning", "steps", "stepsWithoutUsage",
}  # fmt: skip
TASK_KEYS = {
    "id", "revision", "subject", "description", "status", "blockedBy", "writeScopes",
    "ownerId", "ownerName", "laneId", "history", "phases", "overlaps",
}  # fmt: skip
HISTORY_KEYS = {
    "time", "action", "revision", "status", "sessionId", "actor", "ownerId", "ownerName",
}  # fmt: skip
ACTIONS = {
    "created", "claimed", "assigned", "released", "unassigned", "reassigned", "completed",
    "reopened", "deleted", "dependencies-changed", "edited", "updated",
}  # fmt: skip
PHASE_KINDS = {"blocked", "ready", "in-progress", "completed", "deleted"}
PARTY_KINDS = {"user", "lead", "teammate", "system"}
MESSAGE_KEYS = {"id", "from", "to", "queuedAt", "deliveredAt", "body", "length", "truncated"}


def _nullable(value: Any, kind: type | tuple[type, ...]) -> bool:
    return value is None or isinstance(value, kind)


def _party(party: Any) -> None:
    assert set(party) == {"kind", "id", "name"}
    assert party["kind"] in PARTY_KINDS
    assert isinstance(party["id"], str) and isinstance(party["name"], str)


@pytest.fixture(scope="module")
def host() -> EmbeddedHost:
    return EmbeddedHost(SESSIONS)


@pytest.fixture(scope="module")
def timeline(host: EmbeddedHost) -> dict[str, Any]:
    result = asyncio.run(host.plugin.service.timeline(ALPHA.lead_id))
    assert result is not None
    return dict(result.data)


def test_the_timeline_has_exactly_the_documented_fields(timeline: dict[str, Any]) -> None:
    assert set(timeline) == TIMELINE_KEYS
    assert timeline["version"] == 1 and isinstance(timeline["generatedAt"], int)
    assert timeline["sessionId"] == timeline["rootSessionId"] == ALPHA.lead_id
    assert timeline["source"] in {"log", "partial"}
    assert set(timeline["range"]) == {"start", "end"}
    assert (timeline["range"]["end"] is None) == timeline["live"]
    assert all(isinstance(note, str) for note in timeline["notes"])
    assert isinstance(timeline["diagnostics"], dict)
    _tokens(timeline["tokens"])
    assert timeline["tokens"] is not None  # the fixture's logs carry usage


def _tokens(tokens: Any) -> None:
    if tokens is None:
        return
    assert set(tokens) == TOKENS_KEYS
    assert all(type(v) is int and v >= 0 for v in tokens.values())
    assert tokens["steps"] > 0 and tokens["reasoning"] <= tokens["output"]


def test_lanes_and_spans(timeline: dict[str, Any]) -> None:
    lanes = timeline["lanes"]
    assert lanes[0]["id"] == "lead" and lanes[0]["kind"] == "lead"
    assert [lane["index"] for lane in lanes] == list(range(len(lanes)))
    for lane in lanes:
        assert set(lane) == LANE_KEYS
        assert lane["kind"] in {"lead", "teammate", "unassigned"}
        assert set(lane["color"]) == {"fill", "on", "slot"}
        assert lane["color"]["fill"].startswith("--") and lane["color"]["on"].startswith("--")
        assert lane["status"] in {"running", "idle", None}
        assert lane["channel"] in {"snapshot", "persisted", "empty", "unreadable"}
        assert _nullable(lane["createdAt"], int) and _nullable(lane["error"], str)
        now = lane["now"]
        # null when frozen; else a state and since (ms or null)
        assert (
            now is None
            if not timeline["live"]
            else now is None
            or (
                set(now) == {"state", "since"}
                and now["state"] in {"in-turn", "idle", "provisioning", "failed"}
                and _nullable(now["since"], int)
            )
        )
        _tokens(lane["tokens"])
        if lane["model"] is not None:
            assert set(lane["model"]) == {"provider", "model"}
            assert _nullable(lane["model"]["provider"], str)
            assert _nullable(lane["model"]["model"], str)
        times = [span["time"] for span in lane["spans"]]
        assert times == sorted(times)
        for span in lane["spans"]:
            extras = {"message": MESSAGE_SPAN_EXTRAS, "turn": TURN_SPAN_EXTRAS}.get(
                span["kind"], set()
            )
            assert set(span) == SPAN_KEYS | extras
            assert span["kind"] in {"turn", "message", "user-prompt"}
            assert isinstance(span["time"], int) and _nullable(span["end"], int)
            assert span["end"] is None or span["end"] >= span["time"]
            _party(span["from"])
            if span["kind"] == "turn":
                assert span["to"] is None and span["direction"] is None
                _tokens(span["tokens"])
            else:
                assert span["direction"] in {"outgoing", "incoming"}
                if span["to"] is not None:
                    _party(span["to"])
            assert isinstance(span["preview"], str) and len(span["preview"]) <= 140
            assert "\n" not in span["preview"]
            assert isinstance(span["sessionId"], str)
        for task_id in lane["taskIds"]:
            assert any(task["id"] == task_id for task in timeline["tasks"])


def test_tasks_and_their_history(timeline: dict[str, Any]) -> None:
    lane_ids = {lane["id"] for lane in timeline["lanes"]}
    assert {task["id"] for task in timeline["tasks"]} == {task.id for task in ALPHA.tasks}
    for task in timeline["tasks"]:
        assert set(task) == TASK_KEYS
        assert task["status"] in {"pending", "in_progress", "completed", "deleted"}
        assert task["laneId"] in lane_ids
        for entry in task["history"]:
            assert set(entry) == HISTORY_KEYS
            assert entry["action"] in ACTIONS
            assert isinstance(entry["time"], int) and isinstance(entry["revision"], int)
        # A task's life in phases: documented kinds, one after another, no gap, no overlap.
        phases = task["phases"]
        assert all(phase["kind"] in PHASE_KINDS for phase in phases)
        assert all(a["end"] == b["start"] for a, b in itertools.pairwise(phases))
        assert all(p["end"] is None or p["start"] <= p["end"] for p in phases)
        assert all(isinstance(overlap, dict) for overlap in task["overlaps"])
    critical = timeline["criticalPath"]
    task_ids = {task["id"] for task in timeline["tasks"]}
    assert critical is None or set(critical["taskIds"]) <= task_ids


def test_a_message_in_full(host: EmbeddedHost) -> None:
    (long,) = ALPHA.messages_of_kind("long")
    detail = asyncio.run(host.plugin.service.message(ALPHA.lead_id, long.id))
    assert detail is not None and set(detail) == MESSAGE_KEYS
    _party(detail["from"])
    _party(detail["to"])
    assert detail["truncated"] is True and detail["length"] == len(long.text)
    assert len(detail["body"]) <= 16_384 and "\n" in detail["body"]
    assert isinstance(detail["queuedAt"], int) and isinstance(detail["deliveredAt"], int)
