"""A count with its noun in the right number: ``1 turn``, ``3 turns``, ``2 copies``."""

from __future__ import annotations


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """``count`` and ``noun``, or ``plural`` (default ``noun + "s"``) unless it is 1."""
    return _counted(str(count), count, noun, plural)


def counted_thousands(count: int, noun: str, plural: str | None = None) -> str:
    """:func:`counted` with thousands grouped (``1,204 messages``), for the start page."""
    return _counted(f"{count:,}", count, noun, plural)


def _counted(number: str, count: int, noun: str, plural: str | None) -> str:
    return f"{number} {noun if count == 1 else (plural or noun + 's')}"


__all__ = ["counted", "counted_thousands"]
