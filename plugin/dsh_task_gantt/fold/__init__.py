"""Pure folding of session logs into compact per-lane state (no I/O, never raises)."""

from .lane import BULK_TYPES, RUN_MARKS, UNREAD_DATA, fold_lane
from .records import EMPTY_FOLD, LaneFold, last_event_time, seqs_below
from .roster import MemberHint, member_hints, roster_hints
from .text import MESSAGE_BODY_CAP, PREVIEW_CAP

__all__ = [
    "BULK_TYPES",
    "EMPTY_FOLD",
    "MESSAGE_BODY_CAP",
    "PREVIEW_CAP",
    "RUN_MARKS",
    "UNREAD_DATA",
    "LaneFold",
    "MemberHint",
    "fold_lane",
    "last_event_time",
    "member_hints",
    "roster_hints",
    "seqs_below",
]
