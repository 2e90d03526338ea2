"""Task replay helpers: the action table and natural ordering."""

from __future__ import annotations

import pytest

from dsh_task_gantt.fold.tasks import derive_action, natural_key


@pytest.mark.parametrize(
    ("previous", "first", "revision", "status", "action"),
    [
        (None, True, 1, "pending", "created"),
        (None, True, 1, "completed", "created"),
        (None, True, 4, "in_progress", "claimed"),
        (None, True, 4, "completed", "completed"),
        (None, True, 4, "pending", "updated"),
        (None, True, 4, "deleted", "updated"),
        ("in_progress", False, 3, "completed", "completed"),
        ("pending", False, 3, "completed", "completed"),
        ("completed", False, 4, "pending", "reopened"),
        ("completed", False, 4, "in_progress", "reopened"),
        ("pending", False, 2, "in_progress", "claimed"),
        ("in_progress", False, 3, "in_progress", "updated"),
        ("in_progress", False, 3, "pending", "updated"),
        ("pending", False, 3, "deleted", "updated"),
    ],
)
def test_derive_action(
    previous: str | None, first: bool, revision: int, status: str, action: str
) -> None:
    assert derive_action(previous, first, revision, status) == action


def test_natural_order_of_task_ids() -> None:
    ids = ["task-10", "task-2", "task-1", "b", "task-" + "9" * 30]
    assert sorted(ids, key=natural_key) == ["b", "task-1", "task-2", "task-10", "task-" + "9" * 30]
