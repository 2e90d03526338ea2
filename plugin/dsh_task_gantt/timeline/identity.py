"""What changed between two versions of a lane's list, by identity.

After an append a lane's list holds the very same span dicts as before except the few
that changed: finding them takes C-level passes over the lists, not a Python loop over
a day of spans. Even those passes are a day long, so the head two versions share is
remembered: several readers compare the same two versions (the board's bounds and its
reads, the lane's sorted spans and its tally), and the one that made a version from
the last may say how much of it it kept (:func:`note_head`): the pass then starts there.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from itertools import compress, count
from operator import is_not, not_
from typing import Any

from ..memo import DAY_OF_SPANS, Memo, Same

#: The lists the remembered heads hold in all (their items; most are a lane's current
#: and last versions, held by the memos that compare them anyway).
HEAD_ITEMS_KEPT = 4 * DAY_OF_SPANS
#: The common head of two lists (by identity), and whether it is the whole answer (a
#: pass found it) or where a pass may start (a maker said so); weighed by their items;
#: and the slot its maker named (one pair per slot: a lane's next version replaces it).
_HEADS: Memo[
    tuple[Same[Sequence[Any]], Same[Sequence[Any]]], tuple[int, bool, int, Hashable | None]
] = Memo(64, max_weight=HEAD_ITEMS_KEPT, weight=lambda held: held[2], per_slot=1)


def note_head(
    was: Sequence[Any], now: Sequence[Any], head: int, slot: Hashable | None = None
) -> None:
    """``now`` was made from ``was`` keeping its first ``head`` items in place (the very
    same objects): :func:`common_head` of the two starts its pass there. ``slot``: what
    ``now`` is a version of (a lane's part): the pair noted for its last version goes
    (never compared again, it held two lists alive)."""
    _HEADS.put((Same(was), Same(now)), (max(0, head), False, len(was) + len(now), slot), slot=slot)


def common_head(was: Sequence[Any], now: Sequence[Any]) -> int:
    """How many items ``was`` and ``now`` share at their start: the very same objects."""
    short = min(len(was), len(now))
    if was is now:
        return short
    key = (Same(was), Same(now))
    held = _HEADS.get(key)
    start = 0
    if held is not None and held[2] == len(was) + len(now):  # (a list never grows once
        # compared: the lengths only guard against one that did)
        if not held[1]:
            start = min(held[0], short)
        elif _ends_head(was, now, held[0], short):
            return held[0]
    head = passed_head(was, now, start)
    slot = held[3] if held is not None else None
    _HEADS.put(key, (head, True, len(was) + len(now), slot), slot=slot)
    return head


def passed_head(was: Sequence[Any], now: Sequence[Any], start: int = 0) -> int:
    """:func:`common_head` found by one pass from ``start`` (up to which both are known
    to agree), nothing remembered: for two lists compared once."""
    short = min(len(was), len(now))
    if start:
        return next(compress(count(start), map(is_not, was[start:], now[start:])), short)
    return next(compress(count(), map(is_not, was, now)), short)


def _ends_head(was: Sequence[Any], now: Sequence[Any], head: int, short: int) -> bool:
    """``head`` is where the shared head of ``was`` and ``now`` ends, at its edge."""
    return (head == 0 or was[head - 1] is now[head - 1]) and (
        head == short or was[head] is not now[head]
    )


def changed_window(was: Sequence[Any], now: Sequence[Any]) -> tuple[int, int, int]:
    """Where ``now`` differs from ``was`` by identity: the length of their common head,
    and where their common tail starts in each (``was[head:was_end]`` became
    ``now[head:now_end]``)."""
    short = min(len(was), len(now))
    head = common_head(was, now)
    tail = next(compress(count(), map(is_not, reversed(was), reversed(now))), short)
    tail = min(tail, short - head)
    return head, len(was) - tail, len(now) - tail


def identity_changes(was: Sequence[Any], now: Sequence[Any]) -> tuple[list[Any], list[Any]] | None:
    """The items of ``was`` not in ``now`` and those of ``now`` not in ``was`` (by
    identity, in list order). Each list holds an item once (a lane's spans have
    distinct keys); ``None`` when the changed parts show otherwise."""
    head, was_end, now_end = changed_window(was, now)
    old = was[head:was_end]
    new = now[head:now_end]
    old_ids = set(map(id, old))
    new_ids = set(map(id, new))
    if len(old_ids) != len(old) or len(new_ids) != len(new):
        return None
    gone = list(compress(old, map(not_, map(new_ids.__contains__, map(id, old)))))
    came = list(compress(new, map(not_, map(old_ids.__contains__, map(id, new)))))
    return gone, came


def parts_changes(
    was: Sequence[Sequence[Any]], now: Sequence[Sequence[Any]]
) -> tuple[list[Any], list[Any]] | None:
    """:func:`identity_changes` of two lists made of these parts, in order: a part that
    is the very same object at its place (and as long) changed nothing, so only the
    others are compared (an append changes a part or two of a lane, not its day of
    spans). ``None`` when the parts do not line up or a changed one shows an item
    twice."""
    if len(was) != len(now):
        return None
    gone: list[Any] = []
    came: list[Any] = []
    for old, new in zip(was, now, strict=True):
        if old is new and len(old) == len(new):
            continue
        changes = identity_changes(old, new)
        if changes is None:
            return None
        gone += changes[0]
        came += changes[1]
    return gone, came
