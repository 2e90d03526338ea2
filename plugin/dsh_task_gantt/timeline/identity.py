"""What changed between two versions of a lane's list, by identity.

After an append a lane's list holds the very same span dicts as before except the few
that changed: finding them takes C-level passes over the lists, not a Python loop over
a day of spans.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import compress, count
from operator import is_not, not_
from typing import Any


def common_head(was: Sequence[Any], now: Sequence[Any]) -> int:
    """How many items ``was`` and ``now`` share at their start: the very same objects."""
    return next(compress(count(), map(is_not, was, now)), min(len(was), len(now)))


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
