"""Which identifiers a request may name (docs/interfaces.md, HTTP), checked before any lookup."""

from __future__ import annotations

import re

SESSION_ID_RE = re.compile(r"[A-Za-z0-9._-]{1,128}")
#: Message and task ids as the host writes them (``msg-…``, ``task-3``, uuids).
ITEM_ID_RE = re.compile(r"[A-Za-z0-9._:-]{1,128}")


def valid_session_id(value: str) -> bool:
    """The documented session id pattern, and never a path step (``..``)."""
    return bool(SESSION_ID_RE.fullmatch(value)) and ".." not in value


def valid_item_id(value: str) -> bool:
    return bool(ITEM_ID_RE.fullmatch(value)) and ".." not in value
