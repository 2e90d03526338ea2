"""Type names as one regex alternation shaped as a trie (pure).

A writer prefix matches every line of a log against the names it may skip: as a flat
``a|b|c|…`` the regex engine tries the names one after another (most lines' type is
far down a list of twenty-odd names), as a trie it follows one branch per byte.
Same language, same groups.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

#: Where a name ends in the trie (a byte is never ``-1``).
_END = -1


def name_alternation(names: Iterable[bytes], leaves: Mapping[bytes, bytes] | None = None) -> bytes:
    """A regex matching exactly ``names`` (``(?!)`` for none); ``leaves``: a pattern to
    append where a name ends (an empty group that says which name matched)."""
    ends = leaves or {}
    tree: dict[int, Any] = {}
    for name in names:
        node = tree
        for byte in name:
            node = node.setdefault(byte, {})
        node[_END] = ends.get(name, b"")
    return _branches(tree) if tree else b"(?!)"


def _branches(node: dict[int, Any]) -> bytes:
    alternatives = [
        re.escape(bytes([byte])) + _branches(child)
        for byte, child in sorted(node.items())
        if byte != _END
    ]
    if _END in node:  # the name ends here: after the longer names (the quote decides)
        alternatives.append(node[_END])
    if len(alternatives) == 1:
        return alternatives[0]
    return b"(?:" + b"|".join(alternatives) + b")"
