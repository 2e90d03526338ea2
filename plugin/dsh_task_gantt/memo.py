"""Bounded memos of recent results, keyed by value or by object identity, never by time.

A poll after an append rebuilds the timeline of a team in which most lanes did not
change; their pairings, spans and sorted lists are reused from a memo. Every memo
registers itself, so :func:`clear_memos` empties them all (a test comparing a cold
build with a warm one, or a process that wants its memory back).
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar

_K = TypeVar("_K")
_V = TypeVar("_V")
_T = TypeVar("_T")

_ALL: list[Memo[Any, Any]] = []


class Memo(Generic[_K, _V]):
    """At most ``max_entries`` results; a new key evicts the oldest one.

    Values are shared with every caller, so they must never be mutated once put.
    """

    __slots__ = ("_entries", "_max_entries")

    def __init__(self, max_entries: int) -> None:
        self._entries: dict[_K, _V] = {}
        self._max_entries = max(1, max_entries)
        _ALL.append(self)

    def get(self, key: _K) -> _V | None:
        return self._entries.get(key)

    def put(self, key: _K, value: _V) -> _V:
        """Keep ``value`` under ``key`` (as the newest entry); returns ``value``."""
        entries = self._entries
        entries.pop(key, None)
        if len(entries) >= self._max_entries:
            entries.pop(next(iter(entries)))
        entries[key] = value
        return value

    def clear(self) -> None:
        self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)


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


__all__ = ["Memo", "Same", "clear_memos"]
