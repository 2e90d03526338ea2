"""Pure folding of session logs into compact per-lane state (no I/O, never raises)."""

from .lane import BULK_TYPES, EVENT_RULES, RUN_MARKS, UNREAD_DATA, EventRule, fold_lane
from .records import EMPTY_FOLD, LaneFold, last_event_time, seqs_below
from .roster import MemberHint, member_hints, roster_hints
from .text import MESSAGE_BODY_CAP, PREVIEW_CAP

__all__ = [
    "BULK_TYPES",
    "EMPTY_FOLD",
    "EVENT_RULES",
    "MESSAGE_BODY_CAP",
    "PREVIEW_CAP",
    "RUN_MARKS",
    "UNREAD_DATA",
    "EventRule",
    "LaneFold",
    "MemberHint",
    "fold_lane",
    "last_event_time",
    "member_hints",
    "roster_hints",
    "seqs_below",
]
