"""The timeline: the honest model of what a team did (pure, total, order-free).

Input is a :class:`TeamSnapshot` (the folds of the lead's and each member's log plus
what the live services said); output is the timeline JSON of docs/interfaces.md. The
rules it follows are docs/host-contract.md's ("Rules the picture follows"); the
decisions this package adds are:

- the inherited prefix of a forked log is cut here (the cut is only known after
  folding): turns, prompts, tool calls and ``team/*`` records with ``seq < cut`` are
  not used for that lane;
- ``team/*`` records are only taken from the lead's log;
- a roster member whose log the shell did not hand over is ``unreadable``;
- a deleted task stays in ``tasks`` (status ``deleted``, full history) but is on no
  lane's ``taskIds`` and never calls the ``unassigned`` lane into being;
- a message whose sender is outside the team is drawn on the recipient's lane only;
  one with neither end on the roster, or without any time, is not drawn (counted);
- a human prompt's detail has ``queuedAt = null`` and ``deliveredAt`` = its time
  (the log records when it reached the agent, not when it was typed);
- ``range.start`` is the earliest span or task-history time; when nothing at all
  was dated, a frozen timeline falls back to the headers' ``createdAt`` for
  ``range.end`` and otherwise leaves it null (with a note).

One module per concept: ``inputs`` (the snapshot, the seed cut), ``colours`` (the
lane palette), ``roster`` (members in lane order, names to lanes), ``spans`` (turns,
prompts, a lane's order), ``briefs`` (a child's "user" messages that are its parent's
brief), ``messages`` (team messages, relays, briefs), ``tasks``,
``liveness`` (live or frozen, the range), ``notes`` (the wording), ``shaping`` (the
JSON). What it reuses between builds lives in :mod:`dsh_task_gantt.memo` memos keyed
by identity or value, never by time; ``clear_memos`` empties them.
"""

from __future__ import annotations

from ..fold.text import MESSAGE_BODY_CAP
from ..memo import clear_memos
from .colours import ON_COLOR, PALETTE, UNASSIGNED_COLOR
from .inputs import LaneSource, TeamSnapshot, descriptor_count, seed_cut
from .roster import MemberOrder, member_order
from .shaping import build_timeline, message_detail

__all__ = [
    "MESSAGE_BODY_CAP",
    "ON_COLOR",
    "PALETTE",
    "UNASSIGNED_COLOR",
    "LaneSource",
    "MemberOrder",
    "TeamSnapshot",
    "build_timeline",
    "clear_memos",
    "descriptor_count",
    "member_order",
    "message_detail",
    "seed_cut",
]
