"""The board as pieces with ids, and what changed since the board a browser holds.

A full answer draws every piece; a poll from a browser whose board the server knows
(by the token of its last answer) gets only the pieces whose content changed, each as
an htmx out-of-band swap by id, and the chunks new at a lane's end appended to its
track. New tasks at the end are appended too, and so are the list view's new items (those
that left its page deleted). A board of another shape (a lane more or fewer,
tasks other than grown at the end, a lane's height or its chunks other than grown at
the end) is redrawn whole: the lane, or the board.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

from markupsafe import Markup

from ..memo import Memo

#: The element the task rows end, and the row the task rows follow.
CHART_ID = "chart"
TASKS_HEAD_ID = "tasks-head"
TASKS_FOOT_ID = "tasks-foot"
#: The list view's items are the children of this element (list.html).
LIST_ITEMS_ID = "list-items"
_EMPTY_LIST_ITEMS = f'<ol id="{LIST_ITEMS_ID}"></ol>'
_OPENING_TAG = re.compile(r"<([a-z]+) ")
#: Boards remembered (a few views of a few teams, each a few polls back). A live
#: browser needs only the board of its last answer, so this bounds the versions still
#: reachable by live clients (each entry one digest per drawn piece, not the markup).
SHOWN_BOARDS = 256
#: Boards remembered per view (one team at one width, list, page and replay or not):
#: the browsers on it hold its last board or the one before (a browser a poll behind);
#: older ones are dead, and each holds a digest per drawn piece, which grows with the
#: history. Without this bound 256 dead boards of the live views filled the entries.
SHOWN_PER_VIEW = 3


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
        head = str(self.html).lstrip()
        tag = _OPENING_TAG.match(head)
        if tag is None or tag.group(1) not in {"div", "li"}:
            raise ValueError(f"a piece must be one <div> or <li>: {self.id}")
        return Markup(f'<{tag.group(1)} hx-swap-oob="true" ' + head[tag.end() :])


@dataclass(frozen=True, slots=True)
class LaneShape:
    """One lane's markup: its name cell and chunks by id, and the whole row (assembled
    when asked for: held whole, each version a lane memo keeps held a second copy of
    every chunk's markup, which grew with the lane's history)."""

    dom_id: str
    lane_id: str
    rows: int
    name: Piece
    chunks: tuple[Piece, ...]
    #: The row's markup around its name cell and its chunks: before the cell, between
    #: the cell and the chunks, after them.
    frame: tuple[str, str, str]
    #: The name cell as drawn in the row (its now-state and token figure filled in).
    cell: Markup
    #: What the member is doing now (live; empty otherwise), inside the name cell but
    #: kept apart: it changes with the clock, the name cell with the lane.
    now: Piece | None = None
    #: The lane's token figure, also inside the name cell but apart: it changes with
    #: every model call, and an append then re-sends only the figure.
    tokens: Piece | None = None

    @property
    def track_id(self) -> str:
        return f"{self.dom_id}-track"

    @property
    def whole(self) -> Markup:
        """The lane's row: what ``lane.html`` renders for it."""
        before, between, after = self.frame
        chunks = "".join([piece.html for piece in self.chunks])
        return Markup(f"{before}{self.cell}{between}{chunks}{after}")


@dataclass(frozen=True, slots=True)
class BoardPieces:
    axis: Piece
    grid: Piece
    lanes: tuple[LaneShape, ...]
    tasks: tuple[Piece, ...]
    #: The rows before and after the task rows (they page to the tasks not drawn).
    tasks_head: Piece
    tasks_foot: Piece
    #: The list's frame (its switch and pager; its items' element left empty) and the
    #: items on its page, each a piece with an id.
    listing: Piece
    empty: bool
    #: The status line's "2 of 4 working" (live, in the present; else empty).
    working: str = ""
    list_items: tuple[Piece, ...] = ()

    @property
    def listing_html(self) -> Markup:
        """The list as drawn: its frame holding its items."""
        if not self.list_items:
            return self.listing.html
        filled = f'<ol id="{LIST_ITEMS_ID}">' + "".join(p.html for p in self.list_items) + "</ol>"
        return Markup(str(self.listing.html).replace(_EMPTY_LIST_ITEMS, filled, 1))


@dataclass(frozen=True, slots=True)
class Shown:
    """What a browser holds after an answer: the board's shape and each piece's digest."""

    skeleton: tuple[object, ...]
    tasks: tuple[str, ...]
    #: The lanes in order: element id, lane id, mark rows, chunk ids.
    lanes: tuple[tuple[str, str, int, tuple[str, ...]], ...]
    digests: dict[str, bytes]
    #: The list's items in order, by element id.
    list_items: tuple[str, ...] = ()

    @classmethod
    def of(cls, pieces: BoardPieces) -> Shown:
        digests = {
            p.id: p.digest
            for p in (
                pieces.axis,
                pieces.grid,
                pieces.listing,
                pieces.tasks_head,
                pieces.tasks_foot,
            )
        }
        digests.update((task.id, task.digest) for task in pieces.tasks)
        digests.update((item.id, item.digest) for item in pieces.list_items)
        for lane in pieces.lanes:
            digests[lane.name.id] = lane.name.digest
            for inner in (lane.now, lane.tokens):
                if inner is not None:
                    digests[inner.id] = inner.digest
            digests.update((c.id, c.digest) for c in lane.chunks)
        return cls(
            skeleton=(pieces.empty, bool(pieces.tasks)),
            tasks=tuple(task.id for task in pieces.tasks),
            lanes=tuple(
                (lane.dom_id, lane.lane_id, lane.rows, tuple(c.id for c in lane.chunks))
                for lane in pieces.lanes
            ),
            digests=digests,
            list_items=tuple(item.id for item in pieces.list_items),
        )

    @property
    def token(self) -> str:
        """Equal boards, equal tokens (two browsers on one view share what they hold)."""
        shape = (self.skeleton, self.tasks, self.lanes, self.list_items)
        h = hashlib.blake2b(repr(shape).encode(), digest_size=12)
        for piece_id, digest in sorted(self.digests.items()):
            h.update(piece_id.encode() + b"=" + digest)
        return h.hexdigest()


@dataclass(frozen=True, slots=True)
class Delta:
    """The pieces to swap by id (or delete), and what to insert where (an htmx swap
    spec such as ``beforeend:#lane-0-track``, and the markup)."""

    replaced: tuple[Markup, ...]
    appended: tuple[tuple[str, Markup], ...]


def board_delta(old: Shown, pieces: BoardPieces, new: Shown | None = None) -> Delta | None:
    """What turns the board ``old`` into ``pieces`` (``new``: their ``Shown``, when the
    caller has it), or ``None`` when only a whole board will."""
    new = new if new is not None else Shown.of(pieces)
    if old.skeleton != new.skeleton or new.tasks[: len(old.tasks)] != old.tasks:
        return None
    replaced: list[Markup] = []
    appended: list[tuple[str, Markup]] = []

    def changed(piece: Piece) -> bool:
        return old.digests.get(piece.id) != piece.digest

    for lane, (_, old_lane_id, old_rows, old_ids) in zip(pieces.lanes, old.lanes, strict=False):
        was = set(old_ids)
        kept = [c for c in lane.chunks if c.id in was]
        added = lane.chunks[len(kept) :]
        # A new chunk amid the kept ones could not be appended: the lane is redrawn.
        if (old_lane_id, old_rows) != (lane.lane_id, lane.rows) or lane.chunks[
            : len(kept)
        ] != tuple(kept):
            replaced.append(Piece.of(lane.dom_id, str(lane.whole)).out_of_band())
            continue
        # Chunks that left the drawn range (a window that follows now) are deleted.
        drawn = {c.id for c in kept}
        replaced.extend(_deleted(chunk_id) for chunk_id in old_ids if chunk_id not in drawn)
        replaced.extend(p.out_of_band() for p in (lane.name, *kept) if changed(p))
        # A name cell swapped anew holds an empty now-state and token figure: send them
        # again too.
        for inner in (lane.now, lane.tokens):
            if inner is not None and (changed(inner) or changed(lane.name)):
                replaced.append(inner.out_of_band())
        appended.extend((f"beforeend:#{lane.track_id}", c.html) for c in added)
    # A lane more (the "unassigned" lane comes and goes with ownerless tasks) goes before
    # the tasks; a lane fewer is deleted.
    place = f"beforebegin:#{TASKS_HEAD_ID}" if pieces.tasks else f"beforeend:#{CHART_ID}"
    appended.extend((place, lane.whole) for lane in pieces.lanes[len(old.lanes) :])
    replaced.extend(_deleted(dom_id) for dom_id, *_ in old.lanes[len(pieces.lanes) :])
    kept_tasks = pieces.tasks[: len(old.tasks)]
    for piece in (pieces.axis, pieces.grid, pieces.tasks_head, *kept_tasks):
        if changed(piece):
            replaced.append(piece.out_of_band())
    _list_delta(old, pieces, changed(pieces.listing), replaced, appended)
    # New tasks come last in the chart (the task rows end it).
    appended.extend(
        (f"beforebegin:#{TASKS_FOOT_ID}", t.html) for t in pieces.tasks[len(old.tasks) :]
    )
    if changed(pieces.tasks_foot):
        replaced.append(pieces.tasks_foot.out_of_band())
    return Delta(tuple(replaced), tuple(appended))


def _list_delta(
    old: Shown,
    pieces: BoardPieces,
    frame_changed: bool,
    replaced: list[Markup],
    appended: list[tuple[str, Markup]],
) -> None:
    """The list's items that left its page deleted, those changed swapped, the new ones
    appended; the whole list when its frame changed (the switch, the pager, empty or
    not) or a new item came before one already shown."""
    items = pieces.list_items
    now = {item.id for item in items}
    kept = tuple(item_id for item_id in old.list_items if item_id in now)
    if frame_changed or tuple(item.id for item in items[: len(kept)]) != kept:
        replaced.append(Piece.of(pieces.listing.id, pieces.listing_html).out_of_band())
        return
    replaced.extend(_deleted(item_id) for item_id in old.list_items if item_id not in now)
    replaced.extend(
        item.out_of_band() for item in items[: len(kept)] if old.digests.get(item.id) != item.digest
    )
    appended.extend((f"beforeend:#{LIST_ITEMS_ID}", item.html) for item in items[len(kept) :])


def list_item_ids(keys: Sequence[str]) -> tuple[str, ...]:
    """Element ids for the list's items, from what each stands for (a message id, a
    task's move, a lane's turn): the same item keeps its id while the list grows, and a
    log's text never reaches an id. Two items with one key are told apart by order."""
    ids: list[str] = []
    taken: set[str] = set()
    for key in keys:
        digest = hashlib.blake2b(key.encode(errors="surrogatepass"), digest_size=6)
        base = "li-" + digest.hexdigest()
        found, n = base, 1
        while found in taken:
            n += 1
            found = f"{base}-{n}"
        taken.add(found)
        ids.append(found)
    return tuple(ids)


def _deleted(element_id: str) -> Markup:
    return Markup('<div id="{}" hx-swap-oob="delete"></div>').format(element_id)


class ShownBoards:
    """The boards answered lately, by token (least recently used forgotten first, and
    past :data:`SHOWN_PER_VIEW` of one view its oldest)."""

    def __init__(self, size: int = SHOWN_BOARDS, per_view: int = SHOWN_PER_VIEW) -> None:
        self._boards: Memo[str, Shown] = Memo(size, lru=True, per_slot=per_view)

    def remember(self, shown: Shown, view: Hashable | None = None) -> str:
        """Keep ``shown``; ``view``: what the browser looks at (see ``SHOWN_PER_VIEW``).
        Two views with equal boards share one token, kept under the latest view."""
        token = shown.token
        self._boards.put(token, shown, slot=view)
        return token

    def get(self, token: str | None) -> Shown | None:
        if not token:
            return None
        return self._boards.get(token)

    def __len__(self) -> int:
        return len(self._boards)
