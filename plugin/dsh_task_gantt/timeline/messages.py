"""Messages between members as marks on the sender's and the recipient's lanes.

Team messages come from the lead's ``team/message/*`` records (paired by id); relays
between a parent agent and its child, and a child's brief, from the recipient's log.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from itertools import compress, count, repeat
from operator import attrgetter, is_, not_
from typing import Any, cast

from ..fold import LaneFold
from ..fold.appends import appended
from ..fold.messages import MessagePairing, PairedMessage, pair_messages
from ..fold.records import PromptRec
from ..fold.text import preview
from ..memo import HISTORY_ITEMS_KEPT, Memo, Same
from .counts import Counts
from .details import MessageDetails
from .identity import changed_window
from .roster import Lane, Roster, is_ours, shared_party
from .spans import message_detail_json

_UNKNOWN_SENDER = {"kind": "system", "id": "system", "name": "unknown sender"}

#: Messages the per-team memos hold in all (a team's pairing grows with its history).
MESSAGES_KEPT = HISTORY_ITEMS_KEPT
#: The last pairing of each lead's messages, with the records it was made from: most
#: appends add no message, and comparing the records (the same objects from one fold
#: to the next) costs far less than pairing a long run's thousands again. One entry per
#: team (its last version), bounded by teams and by messages.
_PAIRINGS: Memo[str, tuple[tuple[Any, ...], MessagePairing, Mapping[str, int]]] = Memo(
    64, max_weight=MESSAGES_KEPT, weight=lambda held: len(held[1].messages) + 1
)


@dataclass(frozen=True, slots=True)
class _DrawnMessage:
    detail: Mapping[str, Any]
    category: str
    pending: bool
    #: (lane id, span) for each lane the message is drawn on.
    marks: tuple[tuple[str, dict[str, Any]], ...]


#: Messages drawn recently, by value and roster: a poll after an append draws every
#: message again and all but the new ones come out as before, so they keep their
#: detail and spans (an unchanged lane then holds the very same spans). Bounded by
#: entries (each one message, its preview capped).
_DRAWN_MESSAGES: Memo[tuple[PairedMessage, int], _DrawnMessage] = Memo(1 << 13)
#: A lane's message marks: their ids (sorted, distinct: the lane's keys, looked up by
#: bisection) and their spans, in that order.
_LaneMarks = tuple[list[str], list[dict[str, Any]]]


@dataclass(frozen=True, slots=True)
class _Drawing:
    """A pairing drawn for one roster, and what drawing it adds up to: a poll puts the
    lanes' marks in whole lists and the details in one update (C-level), so a team's
    thousands of messages cost nothing per message when they did not change."""

    pairing: MessagePairing
    token: int
    #: Each message drawn, in the pairing's order.
    drawn: tuple[_DrawnMessage, ...]
    details: Mapping[str, Mapping[str, Any]]
    pending: int
    tally: Mapping[str, int]
    #: Each lane's marks (in the pairing's order, so by message id): the ids and the
    #: spans.
    lanes: Mapping[str, _LaneMarks]


#: Each lead's last pairing drawn, with the roster token it was drawn for: most appends
#: add no message and keep the pairing, so the whole drawing is reused; one that adds a
#: few redraws those. One entry per team, bounded by teams and by messages.
_LAST_DRAWN: Memo[str, _Drawing] = Memo(
    64, max_weight=MESSAGES_KEPT, weight=lambda held: len(held.drawn) + 1
)
#: Past this many new or changed messages a drawing is made afresh, not patched.
_PATCHED_AT_MOST = 256

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
        "from": shared_party(src),
        "to": shared_party(dst) if dst else None,
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
    paired = _paired_on(held, fold, cut, ids, lead_session) if held is not None else None
    if paired is None:
        foreign: dict[str, int] = {}
        pairing = pair_messages(
            (
                (s, q)
                for s, q in fold.queued.items()
                if s >= cut and is_ours(q.team_id, ids, foreign)
            ),
            (
                (s, d)
                for s, d in fold.delivered.items()
                if s >= cut and is_ours(d.team_id, ids, foreign)
            ),
        )
        paired = (pairing, foreign)
    _PAIRINGS.put(lead_session, (made_from, *paired), owner=lead_session)
    return paired


def _paired_on(
    held: tuple[tuple[Any, ...], MessagePairing, Mapping[str, int]],
    fold: LaneFold,
    cut: int,
    ids: frozenset[str],
    owner: str,
) -> tuple[MessagePairing, Mapping[str, int]] | None:
    """``held``'s pairing with the records ``fold`` appended to its fold, or ``None``
    (pair them all). Every new queue record is later than the held one of its id
    (which stays first) and every new delivery later than the held one (which it
    replaces), so pairing the touched ids' held records with their new ones is
    what pairing every record gives; the other messages are the very same objects."""
    (old_queued, old_delivered, old_cut, old_ids), was, was_foreign = held
    if old_cut != cut or old_ids != ids:
        return None
    queued = appended(old_queued, fold.queued)
    delivered = appended(old_delivered, fold.delivered)
    if queued is None or delivered is None:
        return None
    foreign = dict(was_foreign)
    queued = [(s, q) for s, q in queued if s >= cut and is_ours(q.team_id, ids, foreign)]
    delivered = [(s, d) for s, d in delivered if s >= cut and is_ours(d.team_id, ids, foreign)]
    if not queued and not delivered:
        return was, foreign
    touched = {q.id for _s, q in queued} | {d.id for _s, d in delivered}
    by_id = _message_ids(was, owner)
    held_msgs = []
    for message_id in touched:
        i = bisect_left(by_id, message_id)
        if i < len(by_id) and by_id[i] == message_id:
            held_msgs.append(was.messages[i])
    again = pair_messages(
        [*((-1, m.queued) for m in held_msgs if m.queued is not None), *queued],
        [*((-1, m.delivered) for m in held_msgs if m.delivered is not None), *delivered],
    )
    messages = list(was.messages)
    message_ids = list(by_id)
    for msg in again.messages:
        i = bisect_left(message_ids, msg.id)
        if i < len(message_ids) and message_ids[i] == msg.id:
            messages[i] = msg
        else:
            messages.insert(i, msg)
            message_ids.insert(i, msg.id)
    pairing = MessagePairing(
        tuple(messages),
        was.duplicate_queued + again.duplicate_queued,
        was.duplicate_delivered + again.duplicate_delivered,
    )
    _MESSAGE_IDS.put(Same(pairing), message_ids, slot=owner, owner=owner)
    return pairing, foreign


#: Each recent pairing's message ids, in its (sorted) order: only a team's last
#: pairing is asked for again, so a team (its lead's session, the slot) keeps its last
#: two; bounded by entries and ids too. (By entries alone it held 64 dead pairings,
#: each with every message of its version.)
_MESSAGE_IDS: Memo[Same[MessagePairing], list[str]] = Memo(
    64, max_weight=MESSAGES_KEPT, weight=lambda ids: len(ids) + 1, per_slot=2
)


def _message_ids(pairing: MessagePairing, owner: str) -> list[str]:
    """The pairing's message ids in order (sorted: ``pair_messages`` sorts by id)."""
    held = _MESSAGE_IDS.get(Same(pairing))
    if held is None:
        ids = list(map(_ID, pairing.messages))
        held = _MESSAGE_IDS.put(Same(pairing), ids, slot=owner, owner=owner)
    return held


_ID = attrgetter("id")


def draw_messages(
    roster: Roster,
    counts: Counts,
    details: MessageDetails,
    briefs: list[tuple[Lane, int, PromptRec]],
) -> MessagePairing:
    """Draw the team's messages, then the relays and briefs; returns the pairing."""
    c = counts
    lead = roster.lead
    pairing, foreign = paired_messages(roster.lead_session, lead.fold, lead.cut, roster.lead_ids)
    for team_id, n in foreign.items():  # another team's records: counted, not used
        c.foreign[team_id] = c.foreign.get(team_id, 0) + n
    drawing = _drawing(roster, pairing)
    details.update(drawing.details)
    c.pending += drawing.pending
    tally = dict(drawing.tally)
    for lane_id, (ids, spans) in drawing.lanes.items():
        lane = roster.by_id[lane_id]
        # A lane holds no message mark yet, so they all go in, as one by one would.
        if lane.span_keys.isdisjoint_ids("message", ids):
            lane.add_unique_ids(spans, "message", ids)
            c.message_marks += len(spans)
            continue
        for span in spans:
            if lane.add(span):
                c.message_marks += 1
    _draw_relays(roster, counts, details, briefs, tally)
    c.messages = tally
    return pairing


def _drawing(roster: Roster, pairing: MessagePairing) -> _Drawing:
    """The pairing drawn for this roster: the held drawing when it is the same, the
    held one patched when only a few messages are new, else drawn afresh."""
    token = roster.token()
    held = _LAST_DRAWN.get(roster.lead_session)
    if held is not None and held.token == token:
        if held.pairing is pairing:
            return held
        drawing = _patched(held, pairing, roster)
        if drawing is not None:
            return _LAST_DRAWN.put(roster.lead_session, drawing, owner=roster.lead_session)
    drawn = tuple(_drawn_message(roster, msg, token) for msg in pairing.messages)
    drawing = _summed_up(pairing, token, drawn)
    return _LAST_DRAWN.put(roster.lead_session, drawing, owner=roster.lead_session)


def _drawn_message(roster: Roster, msg: PairedMessage, token: int) -> _DrawnMessage:
    drawn_key = (msg, token)
    drawn = _DRAWN_MESSAGES.get(drawn_key)
    if drawn is None:
        drawn = _DRAWN_MESSAGES.put(
            drawn_key, _draw_message(roster, msg), owner=roster.lead_session
        )
    return drawn


def _summed_up(pairing: MessagePairing, token: int, drawn: tuple[_DrawnMessage, ...]) -> _Drawing:
    details: dict[str, Mapping[str, Any]] = {}
    tally = dict.fromkeys(CATEGORIES, 0)
    pending = 0
    lanes: dict[str, tuple[list[str], list[dict[str, Any]]]] = {}
    for msg, one in zip(pairing.messages, drawn, strict=True):
        details[msg.id] = one.detail
        pending += one.pending
        tally[one.category] += 1
        for lane_id, span in one.marks:
            ids, spans = lanes.setdefault(lane_id, ([], []))
            ids.append(msg.id)
            spans.append(span)
    return _Drawing(
        pairing,
        token,
        drawn,
        details,
        pending,
        tally,
        lanes,
    )


def _patched(held: _Drawing, pairing: MessagePairing, roster: Roster) -> _Drawing | None:
    """``held`` with the messages ``pairing`` has that it had not (by identity: a
    resumed pairing keeps every unchanged message object) drawn and put in, and the
    ones it no longer has taken out; ``None`` when that is most of them."""
    old_msgs, new_msgs = held.pairing.messages, pairing.messages
    # Only between the common head and tail (the very same messages) can they differ.
    head, old_end, new_end = changed_window(old_msgs, new_msgs)
    old_mid, new_mid = old_msgs[head:old_end], new_msgs[head:new_end]
    by_object = dict(zip(map(id, old_mid), held.drawn[head:old_end], strict=True))
    mid_drawn = list(map(by_object.get, map(id, new_mid)))
    drawn = [*held.drawn[:head], *mid_drawn, *held.drawn[old_end:]]
    fresh = list(compress(count(head), map(is_, mid_drawn, repeat(None))))
    if len(fresh) > _PATCHED_AT_MOST:
        return None
    kept = set(map(id, new_mid))
    gone = list(compress(count(head), map(not_, map(kept.__contains__, map(id, old_mid)))))
    if len(gone) > _PATCHED_AT_MOST:
        return None
    details = dict(held.details)
    tally = dict(held.tally)
    pending = held.pending
    lanes = dict(held.lanes)
    #: The changed lanes.
    copied: set[str] = set()

    def lane_lists(lane_id: str) -> tuple[list[str], list[dict[str, Any]]]:
        if lane_id not in copied:  # copied once, then changed in place
            ids, spans = lanes.get(lane_id, ([], []))
            lanes[lane_id] = (list(ids), list(spans))
            copied.add(lane_id)
        return lanes[lane_id]

    for i in gone:
        msg, one = old_msgs[i], held.drawn[i]
        del details[msg.id]
        pending -= one.pending
        tally[one.category] -= 1
        for lane_id, _span in one.marks:
            ids, spans = lane_lists(lane_id)
            at = bisect_left(ids, msg.id)
            del ids[at], spans[at]
    token = held.token
    for i in fresh:
        msg = new_msgs[i]
        one = drawn[i] = _drawn_message(roster, msg, token)
        details[msg.id] = one.detail
        pending += one.pending
        tally[one.category] += 1
        for lane_id, span in one.marks:
            ids, spans = lane_lists(lane_id)
            at = bisect_left(ids, msg.id)
            ids.insert(at, msg.id)
            spans.insert(at, span)
    for lane_id in copied:
        if not lanes[lane_id][0]:
            del lanes[lane_id]
    complete = cast("tuple[_DrawnMessage, ...]", tuple(drawn))  # every fresh one drawn now
    return _Drawing(pairing, token, complete, details, pending, tally, lanes)


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
        q.packed_body if q else "",
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
    details: MessageDetails,
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
        shown = preview(item.body)  # one preview for both its marks
        for lane in places:
            direction = "outgoing" if lane is sender and lane is not recipient else "incoming"
            span = message_mark(ident, item.when, src, dst, direction, shown, session, item.when)
            if lane.add(span):
                c.message_marks += 1
