"""The boards the server remembers by token: bounded however many answers it gives; and
what a delta from one board to the next sends for a lane's name cell and its figure."""

from __future__ import annotations

from markupsafe import Markup

from dsh_task_gantt.board.pieces import (
    BoardPieces,
    Delta,
    LaneShape,
    Piece,
    Shown,
    ShownBoards,
    board_delta,
)


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
        assert len(boards) <= 8
    assert boards.get(token) == _shown(99)
    assert boards.get(boards.remember(_shown(1)) + "x") is None


def test_the_shown_boards_keep_the_last_few_of_each_view() -> None:
    """A live view gets a new board every append; the boards its browsers left behind
    go first, so a day of appends keeps a few boards per view, not the last 256 (each
    grows with the history), and another view's browser still gets its delta."""
    boards = ShownBoards(size=256, per_view=3)
    other = boards.remember(_shown(10_000), view=("team", 1280))
    tokens = [boards.remember(_shown(n), view=("team", 400)) for n in range(200)]
    assert len(boards) == 4
    assert [boards.get(t) for t in tokens[-3:]] == [_shown(n) for n in (197, 198, 199)]
    assert boards.get(tokens[-4]) is None
    assert boards.get(other) == _shown(10_000)


def _board(state: str, figure: str) -> BoardPieces:
    name = Piece.of("lane-0-name", f'<div class="name" id="lane-0-name">{state}</div>')
    tokens = Piece.of("lane-0-tokens", f'<div class="tokens" id="lane-0-tokens">{figure}</div>')
    chunk = Piece.of("lane-0-k0", '<div class="chunk" id="lane-0-k0"></div>')
    lane = LaneShape("lane-0", "lead", 1, name, (chunk,), ("", "", ""), Markup(""), tokens=tokens)
    piece = Piece.of("x", '<div id="x"></div>')
    return BoardPieces(piece, piece, (lane,), (), piece, piece, piece, empty=False)


def test_a_changed_token_figure_is_sent_alone_and_again_with_its_name_cell() -> None:
    held = Shown.of(_board("idle", "1.2M in"))
    delta = board_delta(held, _board("idle", "1.3M in"))
    assert delta is not None
    sent = "".join(delta.replaced)
    assert 'id="lane-0-tokens">1.3M in<' in sent and "lane-0-name" not in sent
    # A name cell swapped anew holds an empty placeholder: the figure goes with it.
    delta = board_delta(held, _board("in a turn", "1.2M in"))
    assert delta is not None
    sent = "".join(delta.replaced)
    assert 'id="lane-0-name">in a turn<' in sent and 'id="lane-0-tokens">1.2M in<' in sent
    assert board_delta(held, _board("idle", "1.2M in")) == Delta((), ())  # nothing changed


def _listed(*items: str) -> BoardPieces:
    frame = Piece.of("list", '<div class="list" id="list"><ol id="list-items"></ol></div>')
    lis = tuple(Piece.of(i, f'<li class="item" id="{i}">{i}</li>') for i in items)
    piece = Piece.of("x", '<div id="x"></div>')
    return BoardPieces(piece, piece, (), (), piece, piece, frame, empty=False, list_items=lis)


def test_the_list_slides_by_its_items_and_is_redrawn_when_one_comes_between() -> None:
    held = Shown.of(_listed("li-a", "li-b", "li-c"))
    slid = board_delta(held, _listed("li-b", "li-c", "li-d"))
    assert slid is not None
    assert slid.replaced == (Markup('<div id="li-a" hx-swap-oob="delete"></div>'),)
    assert slid.appended == (
        ("beforeend:#list-items", Markup('<li class="item" id="li-d">li-d</li>')),
    )
    # An item new before one already shown cannot be appended: the list goes whole.
    between = board_delta(held, _listed("li-a", "li-x", "li-b", "li-c"))
    assert between is not None and between.appended == ()
    (whole,) = between.replaced
    assert whole.startswith('<div hx-swap-oob="true" class="list" id="list">')
    assert '<ol id="list-items"><li class="item" id="li-a">' in whole and "li-x" in whole
