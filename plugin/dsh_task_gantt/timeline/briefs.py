"""Which ``kind: "user"`` messages in a child's log are its parent agent's brief.

DSH logs the brief a parent gives a child (a subagent's task, a teammate's
``spawn_teammate`` prompt) as the child's first ``user/message`` with
``source.kind == "user"``, the kind the human's prompts have. These rules tell them
apart (HOST §6); they need the parent's lane, so they live here and not in the fold:

- the older one: the message ends "Your parent agent id is <id>" (the fold keeps the id
  as ``PromptRec.brief_from``); only a child's first such message counts;
- DSH 0.1.1's teams: the message's text equals the ``prompt`` of a ``spawn_teammate``
  call in the parent's log whose ``name`` is this lane's member (its ``team/member``
  record's name or alias);
- DSH 0.1.1's subagents: the text equals the ``prompt`` of a subagent tool call in the
  parent's log whose ``description`` is the child's label (its descriptor's).

Each call is one brief. DSH logs a brief twice (spliced into the inbox, then as a
``user/message``, with one id): every record with a brief's id is that brief.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from ..fold.records import PromptRec, SpawnRec
from .roster import Lane, Roster


@dataclass(frozen=True, slots=True)
class ChildBriefs:
    """A child lane's briefs: one record per brief (``brief_from`` = the sender), and
    the seqs of every record that is one of them (copies included)."""

    briefs: dict[int, PromptRec]
    seqs: frozenset[int]


_NONE = ChildBriefs({}, frozenset())


def _parent(roster: Roster, lane: Lane) -> Lane | None:
    header = lane.source.header if lane.source else None
    parent = header.parent_session if header is not None else None
    return roster.resolve(parent) if parent is not None else None


def _for_lane(roster: Roster, lane: Lane, call: SpawnRec) -> bool:
    if call.name is not None:
        return roster.resolve(call.name) is lane
    return call.description is not None and call.description == lane.label


def child_briefs(roster: Roster, lane: Lane, own: Sequence[tuple[int, PromptRec]]) -> ChildBriefs:
    """The briefs among the lane's own ``kind: "user"`` messages ``own`` (sorted by
    seq, after the seed cut)."""
    if not own or not lane.is_child_session():
        return _NONE
    briefs: dict[int, PromptRec] = {}
    first_seq, first = own[0]
    if first.brief_from is not None:
        briefs[first_seq] = first
    parent = _parent(roster, lane)
    if parent is not None and parent is not lane:
        sender = parent.session_id or roster.lead_session
        calls = [
            c
            for seq, c in sorted(parent.fold.spawns.items())
            if seq >= parent.cut and _for_lane(roster, lane, c)
        ]
        ids = {p.id for p in briefs.values() if p.id}
        for seq, prompt in own:
            if seq in briefs or (prompt.id and prompt.id in ids):
                continue
            match = next(
                (c for c in calls if c.body == prompt.body and c.length == prompt.length), None
            )
            if match is not None:
                calls.remove(match)  # one brief per call
                briefs[seq] = replace(prompt, brief_from=sender)
                if prompt.id:
                    ids.add(prompt.id)
    if not briefs:
        return _NONE
    ids = {p.id for p in briefs.values() if p.id}
    seqs = frozenset(seq for seq, p in own if seq in briefs or (p.id and p.id in ids))
    return ChildBriefs(briefs, seqs)
