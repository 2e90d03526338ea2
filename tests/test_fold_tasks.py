"""Task replay helpers: every action from two consecutive snapshots, natural order."""

from __future__ import annotations

import pytest

from dsh_task_gantt.fold.records import TaskRec
from dsh_task_gantt.fold.tasks import ACTIONS, derive_action, natural_key

LEAD, ANA, BO = "lead-session", "ana", "bo"


def _snap(
    revision: int,
    status: str,
    owner: str | None = None,
    blocked: tuple[str, ...] = (),
    subject: str = "Parse logs",
    scopes: tuple[str, ...] = ("src",),
) -> TaskRec:
    return TaskRec("task-1", revision, subject, "Do it.", status, blocked, scopes, owner, 1)


@pytest.mark.parametrize(
    ("before", "after", "maker", "action"),
    [
        (None, _snap(1, "pending"), LEAD, "created"),
        (None, _snap(4, "in_progress", ANA), None, "claimed"),
        (None, _snap(4, "completed", ANA), None, "completed"),
        (None, _snap(4, "deleted"), None, "deleted"),
        (None, _snap(4, "pending"), None, "updated"),
        (_snap(1, "pending"), _snap(2, "in_progress", ANA), ANA, "claimed"),
        (_snap(1, "pending"), _snap(2, "in_progress", ANA), None, "claimed"),
        (_snap(1, "pending"), _snap(2, "in_progress", ANA), LEAD, "assigned"),
        (_snap(2, "in_progress", ANA), _snap(3, "pending"), ANA, "released"),
        (_snap(2, "in_progress", LEAD), _snap(3, "pending"), LEAD, "released"),
        (_snap(2, "in_progress", ANA), _snap(3, "pending"), LEAD, "unassigned"),
        (_snap(2, "in_progress", ANA), _snap(3, "in_progress", BO), LEAD, "reassigned"),
        (_snap(2, "in_progress", ANA), _snap(3, "completed", ANA), ANA, "completed"),
        (_snap(3, "completed", ANA), _snap(4, "pending"), LEAD, "reopened"),
        (_snap(1, "pending"), _snap(2, "deleted"), LEAD, "deleted"),
        (
            _snap(1, "pending"),
            _snap(2, "pending", blocked=("task-2",)),
            LEAD,
            "dependencies-changed",
        ),
        (_snap(1, "pending"), _snap(2, "pending", subject="Parse all logs"), LEAD, "edited"),
        (_snap(1, "pending"), _snap(2, "pending", scopes=("src", "docs")), LEAD, "edited"),
        (_snap(1, "pending"), _snap(2, "pending"), LEAD, "updated"),
    ],
)
def test_the_action_of_two_consecutive_snapshots(
    before: TaskRec | None, after: TaskRec, maker: str | None, action: str
) -> None:
    got = derive_action(before, after, maker, LEAD)
    assert got == action and got in ACTIONS


def test_natural_order_of_task_ids() -> None:
    ids = ["task-10", "task-2", "task-1", "b", "task-" + "9" * 30]
    assert sorted(ids, key=natural_key) == ["b", "task-1", "task-2", "task-10", "task-" + "9" * 30]
