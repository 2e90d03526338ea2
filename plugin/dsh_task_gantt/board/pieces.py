"""The board as pieces with ids, and what changed since the board a browser holds.

A full answer draws every piece; a poll from a browser whose board the server knows
(by the token of its last answer) gets only the pieces whose content changed, each as
an htmx out-of-band swap by id, and the chunks new at a lane's end appended to its
track. A board of another shape (a lane or task more or fewer, a lane's height or its
chunks other than grown at the end) is redrawn whole: the lane, or the board.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from dataclasses import dataclass

from markupsafe import Markup

#: Boards remembered (a few views of a few teams, each a few polls back).
SHOWN_BOARDS = 256


@dataclass(frozen=True, slots=True)
class Piece:
    """One element of the board by its id, its markup, and a digest of that markup."""

    id: str
    html: Markup
    digest: bytes

    @classmethod
    def of(cls, piece_id: str, html: str) -> Piece:
        return cls(piece_id, Markup(html), hashlib.blake2b(html.encode(), digest_size=12).digest())

    def out_of_band(self) -> Markup:
        """The piece swapped in place of the element with its id."""
        html = str(self.html)
        head = html.lstrip()
        if not head.startswith("<div "):
            raise ValueError(f"a piece must be one <div>: {self.id}")
        return Markup('<div hx-swap-oob="true" ' + head[len("<div ") :])


@dataclass(frozen=True, slots=True)
class LaneShape:
    """One lane's markup: its name cell and chunks by id, and the whole row."""

    dom_id: str
    rows: int
    name: Piece
    chunks: tuple[Piece, ...]
    whole: Markup

    @property
    def track_id(self) -> str:
        return f"{self.dom_id}-track"


@dataclass(frozen=True, slots=True)
class BoardPieces:
    axis: Piece
    grid: Piece
    lanes: tuple[LaneShape, ...]
    tasks: tuple[Piece, ...]
    listing: Piece
    empty: bool


@dataclass(frozen=True, slots=True)
class Shown:
    """What a browser holds after an answer: the board's shape and each piece's digest."""

    skeleton: tuple[object, ...]
    lanes: dict[str, tuple[int, tuple[str, ...]]]
    digests: dict[str, bytes]

    @classmethod
    def of(cls, pieces: BoardPieces) -> Shown:
        digests = {
            p.id: p.digest for p in (pieces.axis, pieces.grid, pieces.listing, *pieces.tasks)
        }
        for lane in pieces.lanes:
            digests[lane.name.id] = lane.name.digest
            digests.update((c.id, c.digest) for c in lane.chunks)
        return cls(
            skeleton=(
                pieces.empty,
                tuple(lane.dom_id for lane in pieces.lanes),
                tuple(task.id for task in pieces.tasks),
            ),
            lanes={
                lane.dom_id: (lane.rows, tuple(c.id for c in lane.chunks)) for lane in pieces.lanes
            },
            digests=digests,
        )

    @property
    def token(self) -> str:
        """Equal boards, equal tokens (two browsers on one view share what they hold)."""
        h = hashlib.blake2b(repr(self.skeleton).encode(), digest_size=12)
        for dom_id, (rows, ids) in sorted(self.lanes.items()):
            h.update(f"|{dom_id}:{rows}:{','.join(ids)}".encode())
        for piece_id, digest in sorted(self.digests.items()):
            h.update(piece_id.encode() + b"=" + digest)
        return h.hexdigest()


@dataclass(frozen=True, slots=True)
class Delta:
    """The pieces to swap by id, and the chunks to append to a lane's track."""

    replaced: tuple[Markup, ...]
    appended: tuple[tuple[str, Markup], ...]


def board_delta(old: Shown, pieces: BoardPieces) -> Delta | None:
    """What turns the board ``old`` into ``pieces``, or ``None`` when only a whole board will."""
    new = Shown.of(pieces)
    if old.skeleton != new.skeleton:
        return None
    replaced: list[Markup] = []
    appended: list[tuple[str, Markup]] = []

    def changed(piece: Piece) -> bool:
        return old.digests.get(piece.id) != piece.digest

    for lane in pieces.lanes:
        old_rows, old_ids = old.lanes[lane.dom_id]
        kept = lane.chunks[: len(old_ids)]
        if old_rows != lane.rows or tuple(c.id for c in kept) != old_ids:
            replaced.append(Piece.of(lane.dom_id, str(lane.whole)).out_of_band())
            continue
        replaced.extend(p.out_of_band() for p in (lane.name, *kept) if changed(p))
        appended.extend((lane.track_id, c.html) for c in lane.chunks[len(old_ids) :])
    for piece in (pieces.axis, pieces.grid, *pieces.tasks, pieces.listing):
        if changed(piece):
            replaced.append(piece.out_of_band())
    return Delta(tuple(replaced), tuple(appended))


class ShownBoards:
    """The boards answered lately, by token (least recently used forgotten first)."""

    def __init__(self, size: int = SHOWN_BOARDS) -> None:
        self._size = size
        self._boards: OrderedDict[str, Shown] = OrderedDict()

    def remember(self, shown: Shown) -> str:
        token = shown.token
        self._boards[token] = shown
        self._boards.move_to_end(token)
        if len(self._boards) > self._size:
            self._boards.popitem(last=False)
        return token

    def get(self, token: str | None) -> Shown | None:
        if not token:
            return None
        shown = self._boards.get(token)
        if shown is not None:
            self._boards.move_to_end(token)
        return shown
