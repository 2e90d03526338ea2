"""What an append added to one of a fold's seq-keyed record maps.

A fold shares the maps an append left alone and copies the others in insertion order
(:class:`SeqMap`), noting whether it replaced or removed a record its start held. Maps
copied that way, one from the other, form a line: each holds the one before it, the
very same records in the same order, and adds after them. Between two maps of a line
what an append added is the longer one's last entries (no pass over a day's history);
between any others it is found by a few C-level passes. Callers that keep a result
built from ``old`` use it to carry that result on.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from itertools import islice
from typing import Any, TypeVar

_K = TypeVar("_K", bound=Hashable)
_V = TypeVar("_V")


class SeqMap(dict[_K, _V]):
    """A fold's record map (a plain ``dict`` to everyone else) that knows its line.

    Built by :func:`copied` while a fold runs (``source`` is the map it copied then)
    and closed by :func:`settle` when the fold is done; never mutated afterwards. A
    fold that replaced or removed a key ``source`` held calls :func:`rewrote`: the map
    then starts a line of its own."""

    __slots__ = ("heir", "line", "rewritten", "source", "top")

    #: Shared by every map of one line (``None``: in no line yet, e.g. unpickled).
    line: object | None
    #: The highest key, once someone needed it (carried along the line).
    top: Any
    #: A map already continued this one's line (a second one starts its own: a line
    #: never forks, so of two of its maps the shorter is the longer's head).
    heir: bool
    #: While a fold builds this map: the map it copied.
    source: Mapping[_K, _V] | None
    #: The fold replaced or removed a key of ``source``.
    rewritten: bool

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.line = None
        self.top = None
        self.heir = False
        self.source = None
        self.rewritten = False

    def __reduce__(self) -> tuple[Any, ...]:
        # A cached fold's maps are pickled as bare maps: a line lives in one process.
        return (SeqMap, (), None, None, iter(self.items()))


def copied(source: Mapping[_K, _V]) -> SeqMap[_K, _V]:
    """A fold's working copy of ``source`` (close it with :func:`settle`)."""
    child: SeqMap[_K, _V] = SeqMap(source)
    child.source = source
    return child


def rewrote(records: Mapping[Any, Any], key: Any) -> None:
    """A fold is about to replace or remove ``key`` in its working copy ``records``."""
    if type(records) is SeqMap and records.source is not None and key in records.source:
        records.rewritten = True


def settle(child: SeqMap[Any, Any]) -> None:
    """The fold is done with ``child``: it continues its source's line when it only
    added keys to it (and its source was not continued already), else starts one."""
    source, child.source = child.source, None
    if (
        type(source) is SeqMap
        and not child.rewritten
        and source.line is not None
        and not source.heir
    ):
        source.heir = True
        child.line = source.line
        if source.top is not None:
            child.top = _top_after(source.top, child, len(child) - len(source))
    else:
        child.line = object()


def last_keys(records: Mapping[_K, Any], n: int) -> list[_K]:
    """The last ``n`` keys of ``records`` in insertion order, newest first (a ``dict``
    walks its keys backwards from the end: no pass over the others)."""
    backwards: Any = reversed(records.keys())  # type: ignore[call-overload]
    return list(islice(backwards, n))


def _top_after(top: Any, new: Mapping[Any, Any], grown: int) -> Any:
    return max(top, max(last_keys(new, grown))) if grown else top


def _same_line(old: Mapping[Any, Any], new: Mapping[Any, Any]) -> bool:
    return (
        type(new) is SeqMap
        and type(old) is SeqMap
        and new.line is not None
        and new.line is old.line
        and new.source is None
        and old.source is None
    )


def appended_seqs(
    old: Mapping[int, _V], new: Mapping[int, _V], top: int | None = None
) -> list[int] | None:
    """The seqs ``new`` added to ``old``, or ``None`` unless ``new`` kept every entry of
    ``old`` and only added seqs above ``top`` (by default, ``old``'s highest seq)."""
    if new is old:
        return []
    if _same_line(old, new):
        assert isinstance(old, SeqMap) and isinstance(new, SeqMap)
        # ``old`` is ``new``'s head or the other way round: the entries after the
        # shorter one's are what was added (none of its own was changed or dropped).
        grown = len(new) - len(old)
        if grown < 0:
            return None
        added = last_keys(new, grown)
        added.reverse()
        if top is None:
            if old.top is None:
                old.top = max(old, default=-1)  # once per line: carried on from here
            floor = old.top
            if new.top is None:
                new.top = _top_after(floor, new, grown)
        else:
            floor = top
        return None if added and min(added) <= floor else added
    return scanned_appended_seqs(old, new, top)


def scanned_appended_seqs(
    old: Mapping[int, _V], new: Mapping[int, _V], top: int | None = None
) -> list[int] | None:
    """:func:`appended_seqs` by passes over both maps, whatever their history."""
    if new is old:
        return []
    grown = len(new) - len(old)
    if grown < 0 or not old.items() <= new.items():
        return None
    added = list(islice(new, len(old), None))
    if len(added) != grown:
        return None
    floor = max(old, default=-1) if top is None else top
    if added and min(added) <= floor:
        return None
    return added


def appended(old: Mapping[int, _V], new: Mapping[int, _V]) -> list[tuple[int, _V]] | None:
    """:func:`appended_seqs` with their records."""
    seqs = appended_seqs(old, new)
    return None if seqs is None else [(seq, new[seq]) for seq in seqs]
