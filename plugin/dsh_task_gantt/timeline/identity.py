"""What changed between two versions of a lane's list, by identity.

After an append a lane's list holds the very same span dicts as before except the few
that changed: finding them takes C-level passes over the lists, not a Python loop over
a day of spans. Even those passes are a day long, so the head two versions share is
remembered: several readers compare the same two versions (the board's bounds and its
reads, the lane's sorted spans and its tally), and the one that made a version from
the last may say how much of it it kept (:func:`note_head`): the pass then starts there.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import compress, count
from operator import is_not, not_
from typing import Any

from ..memo import DAY_OF_SPANS, Memo, Same

#: The lists the remembered heads hold in all (their items; most are a lane's current
#: and last versions, held by the memos that compare them anyway).
HEAD_ITEMS_KEPT = 4 * DAY_OF_SPANS
#: The common head of two lists (by identity), and whether it is the whole answer (a
#: pass found it) or where a pass may start (a maker said so); weighed by their items.
_HEADS: Memo[tuple[Same[Sequence[Any]], Same[Sequence[Any]]], tuple[int, bool, int]] = Memo(
    64, max_weight=HEAD_ITEMS_KEPT, weight=lambda held: held[2]
)


def note_head(was: Sequence[Any], now: Sequence[Any], head: int) -> None:
    """``now`` was made from ``was`` keeping its first ``head`` items in place (the very
    same objects): :func:`common_head` of the two starts its pass there."""
    _HEADS.put((Same(was), Same(now)), (max(0, head), False, len(was) + len(now)))


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
    if start:
        head = next(compress(count(start), map(is_not, was[start:], now[start:])), short)
    else:
        head = next(compress(count(), map(is_not, was, now)), short)
    _HEADS.put(key, (head, True, len(was) + len(now)))
    return head


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
