"""Messages between members as marks on the sender's and the recipient's lanes.

Team messages come from the lead's ``team/message/*`` records (paired by id); relays
between a parent agent and its child, and a child's brief, from the recipient's log.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..fold import LaneFold
from ..fold.messages import MessagePairing, PairedMessage, pair_messages
from ..fold.records import PromptRec
from ..fold.text import preview
from ..memo import Memo
from .counts import Counts
from .roster import Lane, Roster, is_ours
from .spans import message_detail_json

_UNKNOWN_SENDER = {"kind": "system", "id": "system", "name": "unknown sender"}

#: Messages the per-team memos hold in all (a team's pairing grows with its history).
MESSAGES_KEPT = 1 << 15
#: The last pairing of each lead's messages, with the records it was made from: most
#: appends add no message, and comparing the records (the same objects from one fold
#: to the next) costs far less than pairing a long run's thousands again. One entry per
#: team (its last version), bounded by teams and by messages.
_PAIRINGS: Memo[str, tuple[tuple[Any, ...], MessagePairing, Mapping[str, int]]] = Memo(
    64, max_weight=MESSAGES_KEPT, weight=lambda held: len(held[1].messages) + 1
)


@dataclass(frozen=True, slots=True)
class _DrawnMessage:
    detail: dict[str, Any]
    category: str
    pending: bool
    #: (lane id, span) for each lane the message is drawn on.
    marks: tuple[tuple[str, dict[str, Any]], ...]


#: Messages drawn recently, by value and roster: a poll after an append draws every
#: message again and all but the new ones come out as before, so they keep their
#: detail and spans (an unchanged lane then holds the very same spans). Bounded by
#: entries (each one message, its preview capped).
_DRAWN_MESSAGES: Memo[tuple[PairedMessage, int], _DrawnMessage] = Memo(1 << 13)
#: Each lead's last pairing drawn whole, with the roster token it was drawn for: most
#: appends add no message and keep the pairing, so the whole drawing is reused. One
#: entry per team, bounded by teams and by messages.
_LAST_DRAWN: Memo[str, tuple[MessagePairing, int, tuple[_DrawnMessage, ...]]] = Memo(
    64, max_weight=MESSAGES_KEPT, weight=lambda held: len(held[2]) + 1
)

#: The tally of how each message was drawn, in the notes' order.
CATEGORIES = (
    "two lanes",
    "target outside",
    "sender outside",
    "no queue record",
    "to itself",
    "not drawn",
)


def message_mark(
    ident: str,
    when: int | None,
    src: dict[str, str],
    dst: dict[str, str] | None,
    direction: str,
    body_preview: str,
    session: str,
    delivered_at: int | None,
) -> dict[str, Any]:
    """A message's mark on one lane."""
    return {
        "kind": "message",
        "id": ident,
        "time": when,
        "end": None,
        "from": dict(src),
        "to": dict(dst) if dst else None,
        "direction": direction,
        "preview": body_preview,
        "sessionId": session,
        # Beyond the documented Span: lets the panel show "delivery pending".
        "deliveredAt": delivered_at,
    }


def paired_messages(
    lead_session: str, fold: LaneFold, cut: int, lead_ids: Iterable[str]
) -> tuple[MessagePairing, Mapping[str, int]]:
    """The team's messages paired, and how many records of other teams were left out
    (by team id): a ``team/*`` record is the team's when its teamId is the root's or
    it has none."""
    ids = frozenset(lead_ids)
    made_from = (fold.queued, fold.delivered, cut, ids)
    held = _PAIRINGS.get(lead_session)
    if held is not None and held[0] == made_from:
        return held[1], held[2]
    foreign: dict[str, int] = {}
    pairing = pair_messages(
        ((s, q) for s, q in fold.queued.items() if s >= cut and is_ours(q.team_id, ids, foreign)),
        (
            (s, d)
            for s, d in fold.delivered.items()
            if s >= cut and is_ours(d.team_id, ids, foreign)
        ),
    )
    _PAIRINGS.put(lead_session, (made_from, pairing, foreign), owner=lead_session)
    return pairing, foreign


def draw_messages(
    roster: Roster,
    counts: Counts,
    details: dict[str, dict[str, Any]],
    briefs: list[tuple[Lane, int, PromptRec]],
) -> MessagePairing:
    """Draw the team's messages, then the relays and briefs; returns the pairing."""
    c = counts
    lead = roster.lead
    pairing, foreign = paired_messages(roster.lead_session, lead.fold, lead.cut, roster.lead_ids)
    for team_id, n in foreign.items():  # another team's records: counted, not used
        c.foreign[team_id] = c.foreign.get(team_id, 0) + n
    tally = dict.fromkeys(CATEGORIES, 0)
    for msg, drawn in zip(pairing.messages, _drawn(roster, pairing), strict=True):
        details[msg.id] = drawn.detail
        c.pending += drawn.pending
        tally[drawn.category] += 1
        for lane_id, span in drawn.marks:
            if roster.by_id[lane_id].add(span):
                c.message_marks += 1
    _draw_relays(roster, counts, details, briefs, tally)
    c.messages = tally
    return pairing


def _drawn(roster: Roster, pairing: MessagePairing) -> tuple[_DrawnMessage, ...]:
    """Each paired message drawn for this roster."""
    token = roster.token()
    held = _LAST_DRAWN.get(roster.lead_session)
    if held is not None and held[0] is pairing and held[1] == token:
        return held[2]
    drawn_all = []
    for msg in pairing.messages:
        drawn_key = (msg, token)
        drawn = _DRAWN_MESSAGES.get(drawn_key)
        if drawn is None:
            drawn = _DRAWN_MESSAGES.put(
                drawn_key, _draw_message(roster, msg), owner=roster.lead_session
            )
        drawn_all.append(drawn)
    drawing = tuple(drawn_all)
    _LAST_DRAWN.put(roster.lead_session, (pairing, token, drawing), owner=roster.lead_session)
    return drawing


def _draw_message(roster: Roster, msg: PairedMessage) -> _DrawnMessage:
    """One message's detail, its category for the notes, and its marks by lane."""
    q = msg.queued
    sender = roster.resolve(q.sender_id) or roster.resolve(q.sender_name) if q else None
    target = roster.resolve(msg.target_id)
    if q is None:
        src = dict(_UNKNOWN_SENDER)
    elif sender is not None:
        src = sender.party()
    else:
        src = {
            "kind": "system",
            "id": q.sender_id or "unknown",
            "name": q.sender_name or q.sender_id or "unknown sender",
        }
    dst: dict[str, str] | None
    if target is not None:
        dst = target.party()
    elif msg.target_id is not None:
        dst = {"kind": "system", "id": msg.target_id, "name": msg.target_id}
    else:
        dst = None
    when = msg.time
    places: list[Lane] = []
    if when is not None:
        if q is None:
            category = "no queue record" if target else "not drawn"
            places = [target] if target else []
        elif sender is not None and target is not None:
            category = "to itself" if sender is target else "two lanes"
            places = [sender] if sender is target else [sender, target]
        elif sender is not None:
            category, places = "target outside", [sender]
        elif target is not None:
            category, places = "sender outside", [target]
        else:
            category = "not drawn"
    else:
        category = "not drawn"
    body_preview = preview(q.body) if q else "(delivered; its queue record is not in the log)"
    delivered_at = msg.delivered.time if msg.delivered else None
    marks = tuple(
        (
            lane.id,
            message_mark(
                msg.id,
                when,
                src,
                dst,
                "outgoing" if lane is sender and lane is not target else "incoming",
                body_preview,
                roster.lead_session,
                delivered_at,
            ),
        )
        for lane in places
    )
    detail = message_detail_json(
        msg.id,
        src,
        dst,
        q.time if q else None,
        delivered_at,
        q.body if q else "",
        q.length if q else 0,
    )
    return _DrawnMessage(detail, category, q is not None and msg.delivered is None, marks)


@dataclass(frozen=True, slots=True)
class _Relay:
    recipient: Lane
    seq: int
    message_id: str | None
    sender_id: str
    when: int | None
    body: str
    length: int
    brief: bool


def _relays(roster: Roster, briefs: list[tuple[Lane, int, PromptRec]]) -> list[_Relay]:
    """Relays from each lane's log (after its cut), then the children's briefs."""
    items: list[_Relay] = []
    for lane in roster.lanes:
        for seq, relay in sorted(lane.fold.relays.items()):
            if seq >= lane.cut:
                items.append(
                    _Relay(
                        lane,
                        seq,
                        relay.id,
                        relay.sender_session,
                        relay.time,
                        relay.body,
                        relay.length,
                        False,
                    )
                )
    for lane, seq, prompt in briefs:
        header = lane.source.header if lane.source else None
        parent = prompt.brief_from or (header.parent_session if header else None)
        if roster.resolve(parent) is None and header is not None and header.parent_session:
            parent = header.parent_session
        items.append(
            _Relay(
                lane,
                seq,
                prompt.id,
                parent or "unknown",
                prompt.time,
                prompt.body,
                prompt.length,
                True,
            )
        )
    return items


def _draw_relays(
    roster: Roster,
    counts: Counts,
    details: dict[str, dict[str, Any]],
    briefs: list[tuple[Lane, int, PromptRec]],
    tally: dict[str, int],
) -> None:
    """Messages between a parent agent and its child, read from the recipient's
    log: relays (``senderSessionId``) and a child's brief. Drawn on both lanes
    like team messages, each message id once across all logs."""
    c = counts
    seen: set[str] = set()
    for item in _relays(roster, briefs):
        recipient = item.recipient
        session = recipient.session_id or roster.lead_session
        ident = item.message_id or f"relay-{item.seq}@{session}"
        if ident in seen:
            c.relay_copies += 1
            continue
        seen.add(ident)
        sender = roster.resolve(item.sender_id)
        src = (
            sender.party()
            if sender is not None
            else {"kind": "system", "id": item.sender_id, "name": item.sender_id}
        )
        dst = recipient.party()
        c.briefs += item.brief
        c.relays += not item.brief
        details[ident] = message_detail_json(
            ident, src, dst, None, item.when, item.body, item.length
        )
        if item.when is None:
            tally["not drawn"] += 1
            continue
        if sender is recipient:
            tally["to itself"] += 1
            places = [recipient]
        elif sender is not None:
            tally["two lanes"] += 1
            places = [sender, recipient]
        else:
            tally["sender outside"] += 1
            places = [recipient]
        for lane in places:
            direction = "outgoing" if lane is sender and lane is not recipient else "incoming"
            span = message_mark(
                ident, item.when, src, dst, direction, preview(item.body), session, item.when
            )
            if lane.add(span):
                c.message_marks += 1
