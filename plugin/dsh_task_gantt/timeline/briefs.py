"""Which ``kind: "user"`` messages in a child's log are its parent agent's brief.

DSH logs the brief a parent gives a child (a subagent's task, a teammate's
``spawn_teammate`` prompt) as the child's first ``user/message`` with
``source.kind == "user"``, the kind the human's prompts have. Two rules tell them apart
(HOST §6), both needing a lane of the team, so they live here and not in the fold:

- the older one: the message ends "Your parent agent id is <id>" (the fold keeps the id
  as ``PromptRec.brief_from``); only a child's first such message counts;
- DSH 0.1.1's teams: the message's text equals the ``prompt`` of a ``spawn_teammate``
  call in the parent's log whose ``name`` is this lane's member (its ``team/member``
  record's name or alias). Each spawn call is one brief.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from ..fold.records import PromptRec
from .roster import Lane, Roster


def _parent(roster: Roster, lane: Lane) -> Lane | None:
    header = lane.source.header if lane.source else None
    parent = header.parent_session if header is not None else None
    return roster.resolve(parent) if parent is not None else None


def child_briefs(
    roster: Roster, lane: Lane, own: Sequence[tuple[int, PromptRec]]
) -> dict[int, PromptRec]:
    """seq -> the brief (``brief_from`` set to its sender's id) among the lane's own
    ``kind: "user"`` messages ``own`` (sorted by seq, after the seed cut)."""
    if not own or not lane.is_child_session():
        return {}
    briefs: dict[int, PromptRec] = {}
    first_seq, first = own[0]
    if first.brief_from is not None:
        briefs[first_seq] = first
    parent = _parent(roster, lane)
    if parent is None or parent is lane:
        return briefs
    sender = parent.session_id or roster.lead_session
    spawns = [
        s
        for seq, s in sorted(parent.fold.spawns.items())
        if seq >= parent.cut and roster.resolve(s.name) is lane
    ]
    for seq, prompt in own:
        if seq in briefs:
            continue
        match = next(
            (s for s in spawns if s.body == prompt.body and s.length == prompt.length), None
        )
        if match is not None:
            spawns.remove(match)  # one brief per spawn call
            briefs[seq] = replace(prompt, brief_from=sender)
    return briefs
