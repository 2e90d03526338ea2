"""The timeline JSON: lanes, tasks, range, notes and diagnostics of a snapshot."""

from __future__ import annotations

from typing import Any

from ..events import as_int
from ..fold.text import key, text
from .activity import lane_now
from .colours import ON_COLOR, PALETTE, UNASSIGNED_COLOR
from .inputs import TeamSnapshot
from .liveness import is_live, time_range
from .model import Model
from .notes import degraded_lanes, format_notes, notes_of
from .roster import Lane
from .spans import sorted_spans
from .tokens import Totals, model_json, plus, tokens_json


def _lane_json(model: Model, lane: Lane, index: int, live: bool) -> dict[str, Any]:
    source = lane.source
    fill = UNASSIGNED_COLOR[0] if lane.slot is None else PALETTE[lane.slot][0]
    status = source.agent_status if source else None
    lane_json: dict[str, Any] = {
        "id": lane.id,
        "kind": lane.kind,
        "name": lane.name,
        "sessionId": lane.session_id,
        "index": index,
        "label": text(lane.label, 1024),
        "color": {"fill": fill, "on": ON_COLOR[0], "slot": lane.slot},
        "phase": lane.phase,
        "status": status if status in ("running", "idle") else None,
        "createdAt": lane.created_at,
        "channel": source.channel if source else "empty",
        "error": text(source.error, 1024) if source else None,
        "spans": sorted_spans(lane),
        "taskIds": list(lane.task_ids),
        "tokens": tokens_json(model.tokens[lane.id].total),
        "model": model_json(model.tokens[lane.id]),
    }
    lane_json["now"] = lane_now(lane_json, live)
    return lane_json


def _team_tokens(model: Model) -> dict[str, int] | None:
    total: Totals | None = None
    for lane in model.lanes:
        lane_total = model.tokens[lane.id].total
        total = lane_total if total is None else plus(total, lane_total)
    return tokens_json(total)


def _diagnostics(model: Model, unreadable: list[Lane]) -> dict[str, Any]:
    c = model.counts
    r = model.replay
    return {
        "lanes": len(model.lanes),
        "unreadableLanes": len(unreadable),
        "eventsSeen": sum(lane.fold.events_seen for lane in model.lanes),
        "unknownEvents": sum(lane.fold.unknown_events for lane in model.lanes),
        "malformedEvents": sum(lane.fold.malformed_events for lane in model.lanes),
        "inheritedEventsSkipped": dict(c.skipped_inherited),
        "turns": c.turns,
        "openTurns": c.open_turns,
        "orphanTurnEnds": c.orphan_ends,
        "turnEndsBeforeStart": c.ends_before_start,
        "undatedTurns": c.undated_turns,
        "duplicateTurnStarts": c.duplicate_starts,
        "uniqueMessages": sum(c.messages.values()),
        "messagesOnTwoLanes": c.messages["two lanes"],
        "messagesToSelf": c.messages["to itself"],
        "messagesTargetOutsideTeam": c.messages["target outside"],
        "messagesSenderOutsideTeam": c.messages["sender outside"],
        "unpairedDeliveries": c.messages["no queue record"],
        "messagesNotDrawn": c.messages["not drawn"],
        "messageMarks": c.message_marks,
        "pendingDeliveries": c.pending,
        "duplicateQueued": model.duplicate_queued,
        "duplicateDelivered": model.duplicate_delivered,
        "humanPrompts": c.prompts,
        "humanPromptCopiesSkipped": c.prompt_copies,
        "undatedPrompts": c.undated_prompts,
        "injectedUserMessages": dict(sorted(c.injected.items())),
        "tasks": len(model.tasks),
        "taskRevisions": r.applied_revisions,
        "duplicateTaskRevisions": r.duplicate_revisions,
        "rewoundTaskRevisions": r.rewound_revisions,
        "undatedTaskRevisions": r.undated_revisions,
        "invalidTaskSnapshots": r.invalid_snapshots,
        "ambiguousTaskRevisions": r.ambiguous_revisions,
        "unattributedTaskRevisions": r.unattributed_revisions,
        "liveOnlyTasks": len(r.live_only_tasks),
        "deletedTasks": model.deleted,
        "tasksOwnedOutsideTeam": model.orphaned_owner,
        "missingBlockers": len(model.graph.missing_blockers),
        "tasksOnCycle": len(model.graph.cyclic),
        "taskOverlaps": sum(len(o) for o in model.graph.overlaps.values()) // 2,
        "serviceNotes": len(model.team.service_notes or ()),
        "tokenValuesSkipped": sum(t.skipped for t in model.tokens.values()),
    }


def build_timeline(team: TeamSnapshot) -> dict[str, Any]:
    """The timeline JSON for ``team`` (pure; ``generated_at`` is only echoed)."""
    model = Model(team)
    live = is_live(model)
    start, end = time_range(model, live)
    unreadable, cut_short = degraded_lanes(model)
    model.notes.extend(format_notes(model))
    notes = notes_of(model, unreadable)
    return {
        "version": 1,
        "generatedAt": as_int(team.generated_at),
        "sessionId": key(team.requested_session_id),
        "rootSessionId": key(team.root_session_id),
        "source": "partial" if unreadable or cut_short else "log",
        "live": live,
        "range": {"start": start, "end": end},
        "lanes": [_lane_json(model, lane, i, live) for i, lane in enumerate(model.lanes)],
        "tasks": model.tasks,
        "criticalPath": model.graph.critical_path.json() if model.graph.critical_path else None,
        "tokens": _team_tokens(model),
        "notes": notes,
        "diagnostics": _diagnostics(model, unreadable),
    }


def message_detail(team: TeamSnapshot, message_id: str) -> dict[str, Any] | None:
    """One message (or human prompt) in full, or ``None`` when unknown."""
    wanted = key(message_id)
    if wanted is None:
        return None
    detail = Model(team).message_details.get(wanted)
    return dict(detail) if detail is not None else None
