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
