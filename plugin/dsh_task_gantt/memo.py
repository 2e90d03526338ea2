"""Bounded memos of recent results, keyed by value or by object identity, never by time.

A poll after an append rebuilds the timeline of a team in which most lanes did not
change; their pairings, spans and sorted lists are reused from a memo. Every memo
registers itself, so :func:`clear_memos` empties them all (a test comparing a cold
build with a warm one, or a process that wants its memory back).

Every memo is bounded by its entries and, when its values grow with a team's history
(a lane's pairing holds every turn), by their total weight too: after an append the
old version of a lane is never asked for again, and a day of appends must not leave
hundreds of full-history versions behind (benchmarks/bench_soak.py). The newest entry is always
kept, however heavy, so the current version of a big lane is still memoised.

An entry made for one session's lane (or one lead's team) names it as its ``owner``:
when the service forgets a team it calls :func:`forget_owners` with the lanes it
dropped, so a memo holds the teams still kept, not every team opened since the process
started (a user clicking through the start page opens dozens). The entry bounds still
hold whatever the owners.
"""

from __future__ import annotations

import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable
from typing import Any, Generic, TypeVar

_K = TypeVar("_K")
_V = TypeVar("_V")
_T = TypeVar("_T")

#: What the history-sized bounds are sized for: the teams the service keeps built, each
#: with a working day of the biggest real team's history. A day at the real rate (a step
#: and a message every 2 s, bench_soak.py --prewritten-hours 24) is about 66k turns,
#: 34k message marks, 3k prompts and 1.4k tasks. A bound below what the teams in use
#: hold evicts their current versions, and then every poll rebuilds the whole history
#: (measured: 4 s of CPU per delta poll after a day, with bounds sized for an hour).
TEAMS_SIZED_FOR = 4
#: A day of one team's spans (turns, message marks and prompts), rounded up.
DAY_OF_SPANS = 1 << 17
#: A day of one team's tasks, rounded up.
DAY_OF_TASKS = 1 << 11
#: The items (spans, marks, turns) a history-sized memo holds in all: every kept team's
#: day, at its current version and the one before (a per-lane memo keeps two).
HISTORY_ITEMS_KEPT = 2 * TEAMS_SIZED_FOR * DAY_OF_SPANS
#: The entries of a per-task memo: every kept team's day of tasks.
TASK_ENTRIES_KEPT = TEAMS_SIZED_FOR * DAY_OF_TASKS

#: Every memo alive (weakly: a panel's own memos go with it).
_ALL: weakref.WeakSet[Memo[Any, Any]] = weakref.WeakSet()


class Memo(Generic[_K, _V]):
    """At most ``max_entries`` results; a new key evicts the oldest one. With a
    ``weight`` (a value's cost in some unit, e.g. the spans it holds), also at most
    ``max_weight`` of them in all, the newest entry excepted. ``lru``: a hit counts as
    a use (the least recently used goes first), else the oldest put goes first. With
    ``per_slot``, an entry put with a ``slot`` (say, its lane) evicts the oldest of
    that slot past ``per_slot``: the versions of a lane still reachable are its last
    one or two, so the dead ones go first, whatever else the memo holds. With
    ``slot_lru`` (and ``lru``), the least recently used of the slot goes instead: a
    version asked for at every poll (a replay cursor's task row) stays while newer ones
    come and go. With
    ``family`` (a slot's family and its member in it: say, a lane and the scale it is
    drawn at) and ``per_family``, a family keeps the slots of its ``per_family`` members
    last put or hit, and drops a member's slots whole when one more comes: a live
    board's scale changes when its extent doubles, and the old scale's layouts are
    never asked for again, yet filled the entry bound for hours.

    Values are shared with every caller, so they must never be mutated once put.
    """

    __slots__ = (
        "__weakref__",
        "_entries",
        "_family",
        "_lru",
        "_max_entries",
        "_max_weight",
        "_members",
        "_owned",
        "_owner_of",
        "_per_family",
        "_per_slot",
        "_slot_lru",
        "_slot_of",
        "_slots",
        "_total",
        "_weight",
        "_weights",
    )

    def __init__(
        self,
        max_entries: int,
        *,
        max_weight: int | None = None,
        weight: Callable[[_V], int] | None = None,
        lru: bool = False,
        per_slot: int | None = None,
        family: Callable[[Any], tuple[Hashable, Hashable]] | None = None,
        per_family: int | None = None,
        slot_lru: bool = False,
    ) -> None:
        if (max_weight is None) != (weight is None):
            raise ValueError("max_weight and weight go together")
        if (family is None) != (per_family is None):
            raise ValueError("family and per_family go together")
        #: Oldest put (or least recently used) first. An ordered dict, not a dict: the
        #: oldest is found in O(1) (a dict's first live entry lies past the slots its
        #: evicted and moved entries left, until it is resized: a full memo of 8k
        #: entries spent ~20 us finding it at each put).
        self._entries: OrderedDict[_K, _V] = OrderedDict()
        self._max_entries = max(1, max_entries)
        self._max_weight = max_weight
        self._weight = weight
        self._weights: dict[_K, int] = {}
        self._total = 0
        self._lru = lru
        self._per_slot = per_slot
        #: A hit moves its key last in its slot too (a slot then drops its least
        #: recently used version, not its oldest put; see the class's docstring).
        self._slot_lru = slot_lru and lru and per_slot is not None and per_slot > 1
        #: Each slot's keys, oldest put (or, with slot_lru, least recently used) first,
        #: and each key's slot.
        self._slots: dict[Hashable, list[_K]] = {}
        self._slot_of: dict[_K, Hashable] = {}
        self._family = family
        self._per_family = max(1, per_family) if per_family is not None else None
        #: Each family's members, least recently used first, with their slots.
        self._members: dict[Hashable, dict[Hashable, set[Hashable]]] = {}
        #: Each owner's keys (insertion-ordered, as a set) and each key's owner.
        self._owned: dict[Hashable, dict[_K, None]] = {}
        self._owner_of: dict[_K, Hashable] = {}
        _ALL.add(self)

    def get(self, key: _K) -> _V | None:
        if not self._lru:
            return self._entries.get(key)
        value = self._entries.get(key, _MISSING)
        if value is _MISSING:
            return None
        self._entries.move_to_end(key)  # now the most recently used
        if self._slot_lru or self._family is not None:
            slot = self._slot_of.get(key)
            if slot is not None:
                if self._slot_lru:  # the slot's most recently used too
                    keys = self._slots[slot]
                    keys.remove(key)
                    keys.append(key)
                if self._family is not None:
                    self._use_member(slot)
        return value  # type: ignore[no-any-return]

    def put(
        self, key: _K, value: _V, slot: Hashable | None = None, owner: Hashable | None = None
    ) -> _V:
        """Keep ``value`` under ``key`` (as the newest entry); returns ``value``.
        ``owner``: the session whose lane (or team) it was made for, forgotten with it
        (:meth:`forget`)."""
        entries = self._entries
        self._drop(key)
        while entries and len(entries) >= self._max_entries:
            self._drop(next(iter(entries)))
        if slot is not None and (self._per_slot is not None or self._family is not None):
            while self._per_slot is not None and len(self._slots.get(slot, ())) >= self._per_slot:
                self._drop(self._slots[slot][0])  # may empty the slot: looked up again
            self._slots.setdefault(slot, []).append(key)
            self._slot_of[key] = slot
            if self._family is not None:
                self._use_member(slot)
        if owner is not None:
            self._owned.setdefault(owner, {})[key] = None
            self._owner_of[key] = owner
        entries[key] = value
        if self._weight is not None and self._max_weight is not None:
            cost = max(0, self._weight(value))
            self._weights[key] = cost
            self._total += cost
            while self._total > self._max_weight and len(entries) > 1:
                self._drop(next(iter(entries)))
        return value

    def _drop(self, key: _K) -> None:
        if self._entries.pop(key, _MISSING) is not _MISSING:
            self._total -= self._weights.pop(key, 0)
            slot = self._slot_of.pop(key, None)
            if slot is not None:
                keys = self._slots[slot]
                keys.remove(key)
                if not keys:
                    del self._slots[slot]
                    if self._family is not None:
                        self._leave_member(slot)
            owner = self._owner_of.pop(key, None)
            if owner is not None:
                owned = self._owned[owner]
                del owned[key]
                if not owned:
                    del self._owned[owner]

    def _use_member(self, slot: Hashable) -> None:
        """``slot``'s member is its family's most recently used; the least recently used
        members past ``per_family`` go, with every entry of their slots."""
        assert self._family is not None and self._per_family is not None
        family, member = self._family(slot)
        members = self._members.setdefault(family, {})
        slots = members.pop(member, None) or set()
        slots.add(slot)
        members[member] = slots
        while len(members) > self._per_family:
            oldest = next(iter(members))
            for gone in list(members[oldest]):
                for key in list(self._slots.get(gone, ())):
                    self._drop(key)
            members.pop(oldest, None)

    def _leave_member(self, slot: Hashable) -> None:
        assert self._family is not None
        family, member = self._family(slot)
        members = self._members.get(family)
        if members is None or member not in members:
            return
        members[member].discard(slot)
        if not members[member]:
            del members[member]
            if not members:
                del self._members[family]

    def forget_members(self, dead: Callable[[Hashable, Hashable], bool]) -> int:
        """Drop every slot (with all its entries) of each family member for which
        ``dead(family, member)`` holds (say, a scale no live view draws at any more);
        returns the entries dropped. Costs a look at every family's members: for a
        rare event (a view's scale changed), not for each put."""
        dropped = 0
        for family, members in list(self._members.items()):
            for member, slots in list(members.items()):
                if dead(family, member):
                    for gone in list(slots):
                        for key in list(self._slots.get(gone, ())):
                            self._drop(key)
                            dropped += 1
        return dropped

    def forget(self, owners: Iterable[Hashable]) -> None:
        """Drop every entry these owners' lanes made (see ``put``)."""
        for owner in owners:
            for key in list(self._owned.get(owner, ())):
                self._drop(key)

    def clear(self) -> None:
        self._members.clear()
        self._slots.clear()
        self._slot_of.clear()
        self._owned.clear()
        self._owner_of.clear()
        self._entries.clear()
        self._weights.clear()
        self._total = 0

    @property
    def weight(self) -> int:
        """The total weight of the entries (0 without a weight)."""
        return self._total

    def newest_in(self, slot: Hashable) -> _V | None:
        """The value last put with ``slot`` (with ``slot_lru``: last put or hit; ``None``:
        none kept)."""
        keys = self._slots.get(slot)
        return self._entries.get(keys[-1]) if keys else None

    def items(self) -> list[tuple[_K, _V]]:
        """The entries, oldest first (a copy: for tests and benchmarks)."""
        return list(self._entries.items())

    def __len__(self) -> int:
        return len(self._entries)


_MISSING: Any = object()


class Carried(Generic[_T, _V]):
    """What was made of each item of a lane's versions (say, a list entry per mark), by
    the very tuple of items, carried from the lane's previous version to the next by
    each item's identity: an append changes a few items of a lane and keeps the others
    as the same objects, so only the new ones are made.

    Bounded by the versions still reachable: per lane (``slot``) its last ``versions``
    (the live one and the one before it, for a browser a poll behind), and at most
    ``lanes`` slots' worth of entries in all. An older version's items are no lane's
    any more, so they go with it instead of filling an entry bound for hours (a memo by
    item identity held every replaced mark until its 16,384 entries were full)."""

    __slots__ = ("_memo", "lanes", "versions")

    def __init__(self, lanes: int, versions: int = 2) -> None:
        self.lanes = lanes
        self.versions = versions
        self._memo: Memo[Same[tuple[_T, ...]], _CarriedVersion[_T, _V]] = Memo(
            lanes * versions, lru=True, per_slot=versions
        )

    def made(
        self,
        slot: Hashable,
        items: tuple[_T, ...],
        make: Callable[[_T], _V],
        context: Hashable = None,
        owner: Hashable | None = None,
    ) -> tuple[_V, ...]:
        """``make(item)`` for each item, reusing what the slot's newest version made of
        the very same items when its ``context`` (whatever else ``make`` reads) is equal."""
        key = Same(items)
        hit = self._memo.get(key)
        if hit is not None and hit.context == context:
            return hit.made
        last = self._memo.newest_in(slot)
        # The last version's items by identity, for this call only: kept in each version,
        # an int object per item (its id) was held twice per lane, growing with history.
        # (The last version holds its items, so their ids stay theirs meanwhile.)
        by_id = (
            dict(zip(map(id, last.items), last.made, strict=True))
            if last is not None and last.context == context
            else {}
        )
        made = tuple(
            found if (found := by_id.get(id(item), _MISSING)) is not _MISSING else make(item)
            for item in items
        )
        self._memo.put(key, _CarriedVersion(context, items, made), slot=slot, owner=owner)
        return made

    def __len__(self) -> int:
        """Versions kept."""
        return len(self._memo)

    def clear(self) -> None:
        self._memo.clear()


class _CarriedVersion(Generic[_T, _V]):
    __slots__ = ("context", "items", "made")

    def __init__(self, context: Hashable, items: tuple[_T, ...], made: tuple[_V, ...]) -> None:
        self.context = context
        #: The very items (the key's), and what was made of each, in their order.
        self.items = items
        self.made = made


class Same(Generic[_T]):
    """A key part that matches only the very same object (not an equal one).

    It holds the object, so the object's ``id`` cannot be reused by another while the
    memo entry lives; cheap to hash however big the object is.
    """

    __slots__ = ("obj",)

    def __init__(self, obj: _T) -> None:
        self.obj = obj

    def __hash__(self) -> int:
        return id(self.obj)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Same) and other.obj is self.obj


def clear_memos() -> None:
    """Empty every memo of the process."""
    for memo in _ALL:
        memo.clear()


def forget_owners(owners: Iterable[Hashable]) -> None:
    """Drop, in every memo of the process, the entries made for these sessions' lanes
    (the service calls this with the lanes of the teams it forgot). Memos are pure, so
    this only costs a later rebuild of what another service in the process still used."""
    gone = frozenset(owners)
    if gone:
        for memo in list(_ALL):
            memo.forget(gone)


__all__ = ["Carried", "Memo", "Same", "clear_memos", "forget_owners"]
