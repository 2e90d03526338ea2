"""The boards the server remembers by token: bounded however many answers it gives."""

from __future__ import annotations

from dsh_task_gantt.board.pieces import Shown, ShownBoards


def _shown(n: int) -> Shown:
    return Shown(skeleton=(False, True), tasks=(), lanes=(), digests={"axis": n.to_bytes(4)})


def test_the_shown_boards_keep_their_size_the_last_used_kept() -> None:
    """Every answer to a poll after an append remembers a new board: the oldest unused
    ones go, the one a live browser holds (it asks with it every poll) stays."""
    boards = ShownBoards(size=8)
    held = boards.remember(_shown(0))
    for n in range(1, 100):
        token = boards.remember(_shown(n))
        assert boards.get(held) is not None  # the live browser's poll uses it
        assert len(boards._boards) <= 8
    assert boards.get(token) == _shown(99)
    assert boards.get(boards.remember(_shown(1)) + "x") is None
