"""A generated task's state and the actions a reader derives from its snapshots."""

from __future__ import annotations

from dataclasses import dataclass

from dsh_task_gantt.fixturegen.spec import TaskRevisionSpec


@dataclass(slots=True)
class TaskState:
    id: str
    subject: str
    description: str
    blocked_by: list[str]
    write_scopes: list[str]
    traits: list[str]
    revisions: list[TaskRevisionSpec]
    status: str = "pending"
    owner_id: str | None = None
    revision: int = 0


def derived_action(prev_status: str | None, status: str, revision: int) -> str:
    """What a reader derives from consecutive snapshots (docs/host-contract.md, Rules
    the picture follows: Tasks).

    Written again here on purpose rather than imported from ``fold.tasks``: the spec's
    ``expected_action`` is the tests' independent oracle for the fold, and an oracle
    that called the code under test could not catch its mistakes."""
    if prev_status is None:
        if revision == 1:
            return "created"
        return {"in_progress": "claimed", "completed": "completed"}.get(status, "updated")
    if prev_status != "completed" and status == "completed":
        return "completed"
    if prev_status == "completed" and status != "completed":
        return "reopened"
    if prev_status != "in_progress" and status == "in_progress":
        return "claimed"
    return "updated"


STATUS_AFTER = {
    "claim": "in_progress",
    "release": "pending",
    "complete": "completed",
    "reopen": "pending",
    "delete": "deleted",
}


def tool_action_name(
    tool: str, actor: str, owner_before: str | None, owner_after: str | None, status_before: str
) -> str:
    """The history action a tool call stands for, from what the generator *did* (the
    tool's action and who called it), not from the snapshots: the fold's independent
    oracle (docs/host-contract.md §7, Tasks; the action names of docs/interfaces.md)."""
    if tool == "release":
        # DSH lets the owner or the lead release; the lead taking another off unassigns.
        return "released" if owner_before in (None, actor) else "unassigned"
    if tool == "reassign":
        if owner_after is None:
            return "unassigned"
        if status_before == "in_progress" and owner_before is not None:
            return "reassigned"
        return "assigned" if owner_after != actor else "claimed"
    return {
        "claim": "claimed",
        "complete": "completed",
        "reopen": "reopened",
        "delete": "deleted",
        "edit": "edited",
        "set_dependencies": "dependencies-changed",
    }.get(tool, "updated")
