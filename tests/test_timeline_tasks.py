"""The team's tasks placed (timeline/tasks.py): a placement carried on from the team's
last one, keeping the tasks a move did not touch, is the placement made from scratch."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from dsh_task_gantt.memo import clear_memos
from dsh_task_gantt.timeline import build_timeline
from tests.kit.foldkit import LEAD, Log, source, team


def _task(
    log: Log,
    task_id: str,
    revision: int,
    status: str,
    at: int,
    owner: str | None = None,
    blocked_by: tuple[str, ...] = (),
) -> None:
    task: dict[str, Any] = {
        "id": task_id,
        "revision": revision,
        "subject": f"subject of {task_id}",
        "description": "d",
        "status": status,
        "blockedBy": list(blocked_by),
        "writeScopes": ["src"],
    }
    if owner is not None:
        task["ownerId"] = owner
    log.add("team/task", {"version": 2, "teamId": LEAD, "task": task}, at)


def _snapshot(lead: Log, members: dict[str, Log], order: tuple[str, ...]) -> Any:
    lead_source = dataclasses.replace(source(LEAD), fold=lead.fold())
    sources = {m: dataclasses.replace(source(m), fold=log.fold()) for m, log in members.items()}
    live = [{"id": m, "name": f"name of {m}"} for m in order]
    return team(lead_source, sources, live_members=live)


def _cold(snapshot: Any) -> dict[str, Any]:
    clear_memos()
    return build_timeline(snapshot)


def _team() -> tuple[Log, dict[str, Log]]:
    lead = Log()
    members = {"m1": Log(), "m2": Log()}
    _task(lead, "task-a", 1, "in_progress", 10, owner="m1")
    _task(lead, "task-b", 1, "pending", 11, blocked_by=("task-a",))
    _task(lead, "task-c", 1, "in_progress", 12, owner="m2")
    _task(lead, "task-d", 1, "pending", 13, owner="m2", blocked_by=("task-b",))
    return lead, members


def test_a_task_whose_blocker_moved_is_placed_again_and_the_others_kept() -> None:
    lead, members = _team()
    clear_memos()
    first = build_timeline(_snapshot(lead, members, ("m1", "m2")))
    # task-a completes: task-b's own record is unchanged, its phases are not.
    _task(lead, "task-a", 2, "completed", 20, owner="m1")
    second = _snapshot(lead, members, ("m1", "m2"))
    warm = build_timeline(second)
    assert json.dumps(warm, sort_keys=True) == json.dumps(_cold(second), sort_keys=True)
    by_id = {t["id"]: t for t in warm["tasks"]}
    was = {t["id"]: t for t in first["tasks"]}
    assert by_id["task-d"] is was["task-d"]  # not touched by the move: the very JSON
    assert by_id["task-a"] is not was["task-a"]


def test_a_placement_for_the_same_members_in_another_order_places_them_anew() -> None:
    lead, members = _team()
    clear_memos()
    build_timeline(_snapshot(lead, members, ("m1", "m2")))
    _task(lead, "task-c", 2, "completed", 20, owner="m2")
    # The same members (the same roster token), their lanes in the other order.
    second = _snapshot(lead, members, ("m2", "m1"))
    warm = build_timeline(second)
    assert json.dumps(warm, sort_keys=True) == json.dumps(_cold(second), sort_keys=True)


def test_a_held_placement_is_not_carried_onto_the_same_members_in_another_order() -> None:
    # The roster's token is blind to the lanes' order; a task's place is its lane's
    # position, so a placement held for one order is no start for the other.
    from dsh_task_gantt.timeline import tasks
    from dsh_task_gantt.timeline.roster import Roster

    lead, members = _team()
    clear_memos()
    one, other = (_snapshot(lead, members, order) for order in (("m1", "m2"), ("m2", "m1")))
    first, second = Roster(one, {}), Roster(other, {})
    assert first.token() == second.token()
    held = tasks._place(first, None)
    fresh = tasks._place(second, None)
    assert fresh.owned != held.owned
    # Held as if its tasks were these very views (as they are after an append that
    # left them alone): only the lanes' order tells the placements apart.
    held = dataclasses.replace(
        held, replay=fresh.replay, phases=fresh.phases, overlaps=fresh.overlaps
    )
    assert tasks._place(second, None, held).owned == fresh.owned
