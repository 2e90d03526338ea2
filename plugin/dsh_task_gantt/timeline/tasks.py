"""The team's tasks: replayed from the lead's snapshots and the members' tool calls,
each on its owner's lane (or the ``unassigned`` lane)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..fold.records import TaskCallRec
from ..fold.tasks import CallIndex, TaskReplay, TaskView, replay_tasks
from .inputs import TeamSnapshot
from .roster import Lane, Roster
from .task_graph import TaskGraph, analyse


@dataclass(frozen=True, slots=True)
class TeamTasks:
    replay: TaskReplay
    #: The tasks' JSON, in the replay's order.
    tasks: list[dict[str, Any]]
    deleted: int
    #: Tasks whose owner is not on the team (shown as unassigned).
    orphaned_owner: int
    #: Phases, overlaps, critical path and rule breaks of the tasks.
    graph: TaskGraph


def place_tasks(roster: Roster, team: TeamSnapshot) -> TeamTasks:
    """Replay the tasks and put each on its owner's lane; adds the ``unassigned`` lane
    when an open task has no owner on the team."""
    calls: list[tuple[str, int, TaskCallRec]] = []
    for lane in roster.lanes:
        session = lane.session_id or roster.lead_session
        calls.extend(
            (session, s, call) for s, call in lane.fold.task_calls.items() if s >= lane.cut
        )
    lead = roster.lead
    snapshots = [
        (s, t) for s, t in lead.fold.tasks.items() if s >= lead.cut and roster.ours(t.team_id)
    ]
    live = team.live_tasks if isinstance(team.live_tasks, Sequence) else None
    replay = replay_tasks(
        snapshots, CallIndex.build(calls), roster.actor_of, live, roster.lead_session
    )
    graph = analyse(replay.tasks)
    tasks: list[dict[str, Any]] = []
    orphaned_owner = 0
    deleted = 0
    needs_unassigned = False
    for view in replay.tasks:
        owner = roster.resolve(view.owner_id) if view.owner_id else None
        if owner is None and view.owner_name:
            owner = roster.resolve(view.owner_name)
        if view.owner_id and owner is None:
            orphaned_owner += 1
        lane_id = owner.id if owner else "unassigned"
        if view.status == "deleted":
            deleted += 1
        elif owner is not None:
            owner.task_ids.append(view.id)
        else:
            needs_unassigned = True
        tasks.append(_task_json(view, owner, lane_id, graph, roster))
    if needs_unassigned:
        lane = Lane("unassigned", "unassigned", "unassigned", None, None, None)
        lane.task_ids = [
            t["id"] for t in tasks if t["laneId"] == "unassigned" and t["status"] != "deleted"
        ]
        roster.lanes.append(lane)
    return TeamTasks(replay, tasks, deleted, orphaned_owner, graph)


def _name_of(roster: Roster, owner_id: str | None) -> str | None:
    lane = roster.resolve(owner_id) if owner_id else None
    return lane.name if lane else None


def _task_json(
    view: TaskView, owner: Lane | None, lane_id: str, graph: TaskGraph, roster: Roster
) -> dict[str, Any]:
    owner_id = view.owner_id
    if owner_id is None and owner is not None:
        owner_id = owner.session_id
    return {
        "id": view.id,
        "revision": view.revision,
        "subject": view.subject,
        "description": view.description,
        "status": view.status,
        "blockedBy": list(view.blocked_by),
        "writeScopes": list(view.write_scopes),
        "ownerId": owner_id,
        "ownerName": owner.name if owner else None,
        "laneId": lane_id,
        "history": [
            {
                "time": h.time,
                "action": h.action,
                "revision": h.revision,
                "status": h.status,
                "sessionId": h.session_id,
                "actor": h.actor,
                # The owner after this move (the lead may assign: not always the actor).
                "ownerId": h.owner_id,
                "ownerName": _name_of(roster, h.owner_id),
            }
            for h in view.history
        ],
        "phases": [p.json() for p in graph.phases.get(view.id, ())],
        "overlaps": [o.json() for o in graph.overlaps.get(view.id, ())],
    }
