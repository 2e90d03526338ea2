"""What an append added to one of a fold's seq-keyed record maps.

A fold copies its maps in insertion order and shares the records an append left
alone, so "``new`` is ``old`` plus records at higher seqs" is a few C-level passes.
Callers that keep a result built from ``old`` use it to carry that result on.
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import islice
from typing import TypeVar

_V = TypeVar("_V")


def appended_seqs(
    old: Mapping[int, _V], new: Mapping[int, _V], top: int | None = None
) -> list[int] | None:
    """The seqs ``new`` added to ``old``, or ``None`` unless ``new`` kept every entry of
    ``old`` and only added seqs above ``top`` (by default, ``old``'s highest seq)."""
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
