"""How many messages the board's list holds, counted without building the list (pure,
memoised by the lanes' very marks).

A message drawn on two lanes is one; prompts are not messages. A key (a mark's message
id, else its element id) counts as its sent mark's kind when it has one, else as its
first mark's (the first lane's that draws it). After a day a lead's lane holds tens of
thousands of marks, and an append changes the last few: a lane's count is carried on
from its previous version (what its marks before the first changed one said is kept,
the rest read again), and the team's is made of the lanes' with set operations in C.
"""

from __future__ import annotations

import weakref
from array import array
from bisect import bisect_left
from collections.abc import Hashable, Sequence
from itertools import islice
from typing import Protocol, TypeVar

from ..memo import HISTORY_ITEMS_KEPT, TEAMS_SIZED_FOR, Memo, Same
from ..timeline.identity import common_head
from .model import LaneMessages, Mark

_V = TypeVar("_V")


def _kept(keys: dict[str, _V], places: array[int], upto: int) -> tuple[dict[str, _V], array[int]]:
    """The ``keys`` (in the order of their ``places``) placed before the mark ``upto``."""
    n = bisect_left(places, upto)
    if n == len(keys):  # all of them (an append after the last mark): a plain copy
        return keys.copy(), places[:n]
    return dict(islice(keys.items(), n)), places[:n]


def read_marks(marks: Sequence[Mark], last: LaneMessages | None = None) -> LaneMessages:
    """What ``marks`` say, carried on from ``last`` (an earlier version of the lane):
    what its marks before the first one ``marks`` does not share said is kept."""
    head = common_head(last.marks, marks) if last is not None else 0
    grew = last is not None and head > 0 and not _cut(last, head)
    if last is not None and head:
        first, first_at = _kept(last.first, last.first_at, head)
        sent, sent_at = _kept(last.sent, last.sent_at, head)
        prompts, prompts_at = _kept(last.prompts, last.prompts_at, head)
    else:
        head = 0
        first, sent, prompts = {}, {}, {}
        first_at, sent_at, prompts_at = array("q"), array("q"), array("q")
    for place in range(head, len(marks)):
        mark = marks[place]
        found = mark.msg_id or mark.dom_id
        kind = mark.kind
        if found not in first:
            first[found] = kind
            first_at.append(place)
            if kind == "prompt":
                prompts[found] = None
                prompts_at.append(place)
        if kind == "sent" and found not in sent:
            sent[found] = None
            sent_at.append(place)
    if last is None or not grew:
        return LaneMessages(marks, first, first_at, sent, sent_at, prompts, prompts_at)
    return LaneMessages(
        marks,
        first,
        first_at,
        sent,
        sent_at,
        prompts,
        prompts_at,
        weakref.ref(last),
        len(last.first),
        len(last.sent),
    )


def _cut(last: LaneMessages, head: int) -> bool:
    """Whether a key ``last`` holds was first said at or after the mark ``head``."""
    return any(places and places[-1] >= head for places in (last.first_at, last.sent_at))


#: Each lane's messages by its very marks (an unchanged lane's marks are the same
#: objects from one poll to the next, and every width reads the same ones), carried on
#: from the slot's newest version. Bounded by entries, by the marks they name in all,
#: and per lane by its last two versions (the key holds the marks: a dead version held
#: a whole lane's replaced marks).
LANE_MESSAGES_KEPT = 256
LANE_MESSAGE_MARKS = HISTORY_ITEMS_KEPT
LANE_MESSAGES: Memo[Same[Sequence[Mark]], LaneMessages] = Memo(
    LANE_MESSAGES_KEPT,
    max_weight=LANE_MESSAGE_MARKS,
    weight=lambda held: len(held.first) + 1,
    lru=True,
    per_slot=2,
)


def lane_messages(
    marks: Sequence[Mark], slot: Hashable, owner: Hashable | None = None
) -> LaneMessages:
    """What a lane's ``marks`` (in its list's order) say; ``slot``: the lane's."""
    key = Same(marks)
    hit = LANE_MESSAGES.get(key)
    if hit is not None:
        return hit
    return LANE_MESSAGES.put(
        key, read_marks(marks, LANE_MESSAGES.newest_in(slot)), slot=slot, owner=owner
    )


class _Row(Protocol):
    @property
    def marks(self) -> Sequence[Mark]: ...
    @property
    def lane_id(self) -> str: ...
    @property
    def dom_id(self) -> str: ...
    @property
    def messages(self) -> LaneMessages | None: ...


#: The count by the very lanes' messages (the 1280 px poll after the 400 px one reads
#: the same). Bounded by entries and per team (its lanes' ids) by its last two versions:
#: a key holds its lanes' messages, which a dead version would keep alive.
COUNTS_KEPT = 2 * TEAMS_SIZED_FOR
_COUNTS: Memo[tuple[Same[LaneMessages], ...], int] = Memo(COUNTS_KEPT, lru=True, per_slot=2)


class _TeamCount:
    """A team's count as last made, with the sets it was made of: the next version's,
    when its lanes only added keys (an append), is these very sets with the added keys
    (a day of keys is not copied at each append): this one is then ``spent`` and never
    carried on again (it is no longer the team's last; an older build's count is in
    _COUNTS, or counted afresh)."""

    __slots__ = ("keys", "lanes", "only_prompts", "sent", "spent")

    def __init__(
        self,
        lanes: tuple[LaneMessages, ...],
        keys: set[str],
        sent: set[str],
        only_prompts: set[str],
    ) -> None:
        #: The lanes' messages counted (held: their ids name them while this lives).
        self.lanes = lanes
        self.keys = keys
        self.sent = sent
        #: The keys that count as their first lane's first mark, a prompt.
        self.only_prompts = only_prompts
        #: The sets went on to the next version (see _carried_on).
        self.spent = False

    @property
    def count(self) -> int:
        return len(self.keys) - len(self.only_prompts)


#: Each team's last count (by its lanes' ids), with its sets: bounded by teams (each a
#: few sets of the team's message keys).
_TEAM_COUNTS: Memo[tuple[str, ...], _TeamCount] = Memo(COUNTS_KEPT)


def _counted_afresh(read: tuple[LaneMessages, ...]) -> _TeamCount:
    # Set operations in C (a day-long team's lanes name tens of thousands of keys).
    keys: set[str] = set().union(*(lane.first for lane in read))
    sent: set[str] = set().union(*(lane.sent for lane in read))
    # The keys no lane sent and some lane's first mark says is a prompt: each one counts
    # as its first lane's first mark, found lane by lane in their order.
    left = set().union(*(lane.prompts for lane in read)) - sent
    only_prompts: set[str] = set()
    for lane in read:
        if not left:
            break
        here = left.intersection(lane.first)
        only_prompts |= here.intersection(lane.prompts)
        left -= here
    return _TeamCount(read, keys, sent, only_prompts)


def _carried_on(last: _TeamCount, read: tuple[LaneMessages, ...]) -> _TeamCount | None:
    """``last`` with the keys each lane added since (``None``: a lane did more than add
    keys, or the lanes are not ``last``'s)."""
    if last.spent or len(read) != len(last.lanes):
        return None
    added: list[str] = []
    added_sent: list[str] = []
    for now, was in zip(read, last.lanes, strict=True):
        if now is was:
            continue
        if now.grew_from is None or now.grew_from() is not was:
            return None
        added += islice(now.first, now.grown_first, None)
        added_sent += islice(now.sent, now.grown_sent, None)
    # The last count's sets, carried on in place: it is spent (the caller keeps this
    # one as the team's last instead).
    keys, sent, only_prompts = last.keys, last.sent, last.only_prompts
    last.spent = True
    keys.update(added)
    sent.update(added_sent)
    only_prompts.difference_update(added_sent)
    # A key a lane added may now have an earlier first lane (or be new): said again.
    for key in added:
        if key in sent:
            only_prompts.discard(key)
            continue
        kind = next(kind for lane in read if (kind := lane.first.get(key)) is not None)
        if kind == "prompt":
            only_prompts.add(key)
        else:
            only_prompts.discard(key)
    return _TeamCount(read, keys, sent, only_prompts)


def message_count(lanes: Sequence[_Row]) -> int:
    """The messages the list holds (a message drawn on two lanes is one; prompts are not
    messages), without building the list. A key counts as its sent mark's kind when it
    has one, else as its first mark's (the first lane's that draws it)."""
    read = tuple(
        lane.messages
        if lane.messages is not None
        else lane_messages(lane.marks, ("marks", lane.lane_id, lane.dom_id))
        for lane in lanes
    )
    key = tuple(map(Same, read))
    hit = _COUNTS.get(key)
    if hit is not None:
        return hit
    team = tuple(lane.lane_id for lane in lanes)
    last = _TEAM_COUNTS.get(team)
    counted = _carried_on(last, read) if last is not None else None
    if counted is None:
        counted = _counted_afresh(read)
    _TEAM_COUNTS.put(team, counted)
    return _COUNTS.put(key, counted.count, slot=team)
