"""A lane's turns and the human's prompts as spans, and a lane's spans in order.

Span dicts are never mutated once built: an unchanged lane holds the very same span
objects from one build to the next, which the wire uses to reuse its bytes.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain, compress, count
from operator import attrgetter, is_not
from typing import Any, NamedTuple

from ..fold import seqs_below
from ..fold.appends import appended
from ..fold.records import PromptRec, unpack_body
from ..fold.text import MESSAGE_BODY_CAP, label_preview, preview
from ..fold.turns import TurnPairing, TurnSpan, pair_turns
from ..memo import HISTORY_ITEMS_KEPT, Memo, Same
from .briefs import child_briefs
from .counts import Counts
from .details import MessageDetails
from .identity import identity_changes, note_head, parts_changes
from .roster import Lane, Roster, shared_party
from .tokens import Since, Totals, lane_tokens, tokens_json

#: The human, as the sender of a prompt.
USER = {"kind": "user", "id": "user", "name": "you"}
#: No turn's tokens (one object, so the memo below still hits).
_NO_TOKENS: Mapping[str, Totals] = {}
_KIND_ORDER = {"turn": 0, "message": 1, "user-prompt": 2}

_LaneKey = tuple[str, str, str, str]
#: A lane's spans as last sorted, and the parts they were sorted from (see
#: ``Lane.parts``; each held as it was: a part of single spans is the build's own).
_Sorted = tuple[list[dict[str, Any]], tuple[Sequence[dict[str, Any]], ...]]
#: Spans the lane-sized memos below hold in all (a lane's list grows with its history;
#: the spans themselves are shared with the timeline).
SPANS_KEPT = HISTORY_ITEMS_KEPT
#: Turn spans drawn recently, by pairing identity and the lane they are drawn for. A
#: poll after an append redraws every lane; unchanged lanes reuse their spans. Bounded
#: by entries and by spans (an old pairing is never asked for again after an append:
#: one version per lane; a second held the old pairing, token map, span list and keys,
#: each as long as the lane's history).
_TURN_SPANS: Memo[
    tuple[Same[TurnPairing], Same[Mapping[str, Totals]], _LaneKey], list[dict[str, Any]]
] = Memo(256, max_weight=SPANS_KEPT, weight=lambda drawn: len(drawn) + 1, per_slot=1)
#: Each lane's turns as last drawn (the pairing's turns, their totals, their spans, and
#: the token map the totals were read from): the next pairing of the lane
#: keeps the spans of the turns that did not change, found at their place or, when a
#: turn came in before others, by value among the last version's. One entry per lane
#: (its last version), bounded by lanes and by spans. (No memo of each turn's span by
#: value: it held every closed turn of the day, ~4 blocks each, and filled for hours,
#: while a span is only ever asked for again by the lane's next version, from this.)
_LAST_TURNS: Memo[
    _LaneKey,
    tuple[
        tuple[TurnSpan, ...],
        list[Totals | None],
        list[dict[str, Any]],
        Mapping[str, Totals],
    ],
] = Memo(256, max_weight=SPANS_KEPT, weight=lambda held: len(held[2]) + 1)
#: Each lane's spans as last sorted, with the list they were sorted from: a poll after
#: an append changes a lane or two, and an unchanged lane holds the same span objects
#: in the same order (so comparing is mostly identity checks). One entry per lane (its
#: last version), bounded by lanes and by spans.
_SORTED_SPANS: Memo[tuple[str, str | None], _Sorted] = Memo(
    256, max_weight=SPANS_KEPT, weight=lambda held: len(held[0]) + 1
)


def message_detail_json(
    ident: str,
    src: dict[str, str],
    dst: dict[str, str] | None,
    queued_at: int | None,
    delivered_at: int | None,
    body: str | bytes,
    length: int,
) -> Mapping[str, Any]:
    """One message (or prompt) in full, as ``/api/messages/{id}`` answers it; ``body``
    as a record holds it (``fold.records.pack_body``): a packed one is unpacked when the
    detail is read, not kept unpacked beside the record for the day."""
    detail = {
        "id": ident,
        "from": shared_party(src),
        "to": shared_party(dst) if dst else None,
        "queuedAt": queued_at,
        "deliveredAt": delivered_at,
        "body": body,
        "length": length,
        "truncated": length > MESSAGE_BODY_CAP,
    }
    return detail if type(body) is str else PackedDetail(detail)


class PackedDetail(Mapping[str, Any]):
    """A message detail whose body is held packed: a mapping like the plain one, its
    body unpacked at each read (``dict(detail)`` is the plain one)."""

    __slots__ = ("_fields",)

    def __init__(self, fields: dict[str, Any]) -> None:
        self._fields = fields

    def __getitem__(self, name: str) -> Any:
        value = self._fields[name]
        return unpack_body(value) if name == "body" else value

    def __iter__(self) -> Iterator[str]:
        return iter(self._fields)

    def __len__(self) -> int:
        return len(self._fields)


def draw_turns(roster: Roster, counts: Counts) -> None:
    c = counts
    for lane in roster.lanes:
        skipped = seqs_below(lane.fold, lane.cut) if lane.cut > 0 else 0
        if skipped:
            c.skipped_inherited[lane.id] = skipped
        which = (lane.id, lane.session_id)
        pairing = pair_turns(lane.fold, lane.cut, lane.restores(), which, lane.session_id)
        session = lane.session_id or roster.lead_session
        tokens = lane_tokens(lane.fold, lane.cut, which, lane.session_id)
        lane.add_turns(turn_spans(pairing, lane.party(), session, tokens.by_turn, tokens.since))
        c.turns += len(pairing.spans)
        c.open_turns += pairing.open_turns
        c.orphan_ends += pairing.orphan_ends
        c.duplicate_starts += pairing.duplicate_starts
        c.ends_before_start += pairing.ends_before_start
        c.undated_turns += pairing.undated_starts
        c.idless_turn_events += pairing.idless_events
        c.closed_by_idless_end += pairing.closed_by_idless_end
        c.closed_by_restore += pairing.closed_by_restore
        for kind, n in _injected_kinds(lane, which).items():
            c.injected[kind] = c.injected.get(kind, 0) + n


#: Each lane's count of runtime-injected messages by kind, with the map and cut it
#: was counted from: a lane's map grows by an append's few (a day holds thousands).
#: One entry per lane (its last version), bounded by lanes.
_INJECTED: Memo[tuple[str, str | None], tuple[Mapping[int, str], int, dict[str, int]]] = Memo(256)


def _injected_kinds(lane: Lane, which: tuple[str, str | None]) -> Mapping[str, int]:
    """The lane's injected messages at or after its cut, by kind (first seen first)."""
    injected, cut = lane.fold.injected, lane.cut
    held = _INJECTED.get(which)
    if held is not None and held[1] == cut:
        if held[0] is injected:
            return held[2]
        new = appended(held[0], injected)
        if new is not None:
            kinds = dict(held[2])
            for seq, kind in new:
                if seq >= cut:
                    kinds[kind] = kinds.get(kind, 0) + 1
            _INJECTED.put(which, (injected, cut, kinds), owner=which[1])
            return kinds
    # Counted in C (Counter of the kinds at or after the cut): a lane has thousands.
    kinds = dict(Counter(compress(injected.values(), map(cut.__le__, injected))))
    _INJECTED.put(which, (injected, cut, kinds), owner=which[1])
    return kinds


def turn_spans(
    pairing: TurnPairing,
    party: dict[str, str],
    session: str,
    by_turn: Mapping[str, Totals] | None = None,
    since: Since | None = None,
) -> list[dict[str, Any]]:
    """The lane's turn spans; ``by_turn``: each turn's token totals; ``since``:
    ``by_turn`` is this map but at these turns (see ``LaneTokens.since``), so only those
    are looked up again."""
    by_turn = _NO_TOKENS if by_turn is None else by_turn
    lane_key = (party["kind"], party["id"], party["name"], session)
    memo_key = (Same(pairing), Same(by_turn), lane_key)
    hit = _TURN_SPANS.get(memo_key)
    if hit is not None:
        return hit
    turns = pairing.spans
    held = _LAST_TURNS.get(lane_key)
    if held is None:
        totals = list(map(by_turn.get, map(_TURN_ID, turns)))
        spans = [_turn_span(t, n, party, session) for t, n in zip(turns, totals, strict=True)]
    else:
        # After an append most turns are the ones drawn last time with the same totals:
        # their spans are kept, found in C-level passes; the others are drawn.
        old_turns, old_totals, old_spans, old_by_turn = held
        # By identity first (C-level passes of pointer tests: an append keeps the
        # pairing's turns and the count's totals as the very same objects), then by
        # value at the few places that are not the same object.
        moved = list(compress(count(), map(is_not, turns, old_turns)))
        totals = _totals_after(turns, by_turn, since, old_turns, old_totals, old_by_turn, moved)
        spans = old_spans[: len(turns)]
        places = set(moved)
        places.update(compress(count(), map(is_not, totals, old_totals)))
        changed = [
            i for i in sorted(places) if turns[i] != old_turns[i] or totals[i] != old_totals[i]
        ]
        kept = _KeptSpans(old_turns, old_totals, old_spans)
        for i in changed:
            spans[i] = kept.span(i, turns[i], totals[i], party, session)
        for i in range(len(spans), len(turns)):
            spans.append(kept.span(i, turns[i], totals[i], party, session))
        # The spans before the first change are the very ones: said to the lane's readers
        # (its sorted spans compare this part with the last), so none passes over them.
        head = min(len(spans), len(old_spans), *changed[:1])
        note_head(old_spans, spans, head, slot=("turn spans", lane_key))
    _LAST_TURNS.put(lane_key, (turns, totals, spans, by_turn), owner=session)
    return _TURN_SPANS.put(memo_key, spans, slot=lane_key, owner=session)


#: How far from a lane's newest turn a turn whose totals changed is looked for (an
#: append counts the live turn, or one just ended); further, every turn is looked up.
_TOUCHED_WITHIN = 64


def _totals_after(
    turns: tuple[TurnSpan, ...],
    by_turn: Mapping[str, Totals],
    since: Since | None,
    old_turns: tuple[TurnSpan, ...],
    old_totals: list[Totals | None],
    old_by_turn: Mapping[str, Totals],
    moved: list[int],
) -> list[Totals | None]:
    """Each turn's totals in ``by_turn`` (``list(map(by_turn.get, turn ids))``), from the
    ones last read (``old_totals``, of ``old_turns`` in ``old_by_turn``) when ``by_turn``
    is ``old_by_turn`` but at a few turns near the end: only the turns that are not the
    very same objects as before, and those few, are looked up (a day holds tens of
    thousands). ``moved``: where ``turns`` and ``old_turns`` are not the same objects."""
    if by_turn is old_by_turn:
        touched: frozenset[str] = frozenset()
    elif since is not None and since[0]() is old_by_turn:
        touched = since[1]
    else:
        return list(map(by_turn.get, map(_TURN_ID, turns)))
    totals = old_totals[: len(turns)]
    get = by_turn.get
    for i in moved:
        totals[i] = get(turns[i].turn_id)
    for i in range(len(totals), len(turns)):
        totals.append(get(turns[i].turn_id))
    if touched:
        left = set(touched)
        for i in range(len(turns) - 1, max(len(turns) - _TOUCHED_WITHIN, 0) - 1, -1):
            turn_id = turns[i].turn_id
            if turn_id in left:
                totals[i] = get(turn_id)
                left.discard(turn_id)
                if not left:
                    break
        if left and len(turns) > _TOUCHED_WITHIN:
            return list(map(by_turn.get, map(_TURN_ID, turns)))
    return totals


_TURN_ID = attrgetter("turn_id")


class _KeptSpans:
    """A lane's last drawn turns, asked for the span of a turn of its next version: the
    one drawn for an equal turn with equal totals, else a new one. A turn at its old
    place is compared there; one that moved (a turn came in before it) is found by
    value among the old turns from the first place asked on (an append's changes are
    near the end, so that is a few turns, not the day's)."""

    __slots__ = ("_places", "_spans", "_totals", "_turns")

    def __init__(
        self,
        turns: tuple[TurnSpan, ...],
        totals: list[Totals | None],
        spans: list[dict[str, Any]],
    ) -> None:
        self._turns = turns
        self._totals = totals
        self._spans = spans
        self._places: dict[TurnSpan, int] | None = None

    def span(
        self, at: int, turn: TurnSpan, totals: Totals | None, party: dict[str, str], session: str
    ) -> dict[str, Any]:
        old = self._turns
        was = at if at < len(old) and old[at] == turn else self._place(at, turn)
        if was is not None and self._totals[was] == totals:
            return self._spans[was]
        return _turn_span(turn, totals, party, session)

    def _place(self, at: int, turn: TurnSpan) -> int | None:
        if self._places is None:
            # Built once, from the first place asked on (places are asked ascending).
            old = self._turns
            self._places = dict(zip(old[at:], range(at, len(old)), strict=False))
        return self._places.get(turn)


def _turn_span(
    turn: TurnSpan, totals: Totals | None, party: dict[str, str], session: str
) -> dict[str, Any]:
    """One turn's span."""
    label = turn.reason if turn.closed else "no end recorded"
    return {
        "kind": "turn",
        "id": turn.turn_id,
        "time": turn.time,
        "end": turn.end,
        "from": shared_party(party),
        "to": None,
        "direction": None,
        "preview": label_preview(f"turn {turn.turn_id} · {label}"),
        "sessionId": session,
        "tokens": tokens_json(totals),
    }


#: A prompt's identity across the team's logs: its id, else its time and text.
_Ident = tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class _DrawnPrompts:
    """A team's prompts as drawn, with what drawing them read and found: the next
    poll holds the same records (often the same maps' contents), and a new prompt on
    a lane is drawn onto this (see ``_drawn_on``)."""

    token: int
    #: Per lane, in roster order: what its prompts and briefs are read from.
    inputs: tuple[_PromptInputs, ...]
    #: Per lane: its prompt spans in the order drawn, and their keys.
    spans: tuple[tuple[tuple[dict[str, Any], ...], frozenset[tuple[str, str]]], ...]
    details: dict[str, Mapping[str, Any]]
    #: The briefs: (lane position, seq, brief).
    briefs: tuple[tuple[int, int, PromptRec], ...]
    #: Each drawn prompt's lane position; the undated ones not drawn.
    drawn_at: dict[_Ident, int]
    undated: frozenset[_Ident]
    copies: int
    prompts: int
    undated_count: int

    @property
    def weight(self) -> int:
        return len(self.drawn_at) + len(self.details) + 1


#: Each team's prompts as last drawn, by lead session: most polls find the same
#: records, and comparing them (the very same objects) costs far less than sorting and
#: drawing a day's thousands again. One entry per team (its last version), bounded by
#: teams and by prompts.
_LAST_PROMPTS: Memo[str, _DrawnPrompts] = Memo(
    64, max_weight=HISTORY_ITEMS_KEPT, weight=lambda held: held.weight
)


class _PromptInputs(NamedTuple):
    """Everything of a lane that drawing its prompts and briefs reads (its parent's
    spawns are in the parent's own inputs; the roster's names in its token)."""

    lane_id: str
    kind: str
    name: str
    session_id: str | None
    cut: int
    label: str | None
    is_child: bool
    parent: str | None
    prompts: Mapping[int, PromptRec]
    spawns: Any


def _prompt_inputs(lane: Lane) -> _PromptInputs:
    header = lane.source.header if lane.source else None
    fold = lane.fold
    return _PromptInputs(
        lane.id,
        lane.kind,
        lane.name,
        lane.session_id,
        lane.cut,
        lane.label,
        lane.is_child_session(),
        header.parent_session if header is not None else None,
        fold.prompts,
        fold.spawns,
    )


def draw_prompts(
    roster: Roster, counts: Counts, details: MessageDetails
) -> list[tuple[Lane, int, PromptRec]]:
    """Each human prompt once, on the first lane whose log carries it; returns the
    parent agents' briefs (lane, seq, prompt), which are drawn as messages."""
    token = roster.token()
    inputs = tuple(map(_prompt_inputs, roster.lanes))
    held = _LAST_PROMPTS.get(roster.lead_session)
    drawn = None
    if held is not None and held.token == token:
        drawn = held if held.inputs == inputs else _drawn_on(held, inputs, roster)
    if drawn is None:
        drawn = _drawn_afresh(roster, token, inputs)
    if drawn is not held:
        _LAST_PROMPTS.put(roster.lead_session, drawn, owner=roster.lead_session)
    for lane, (spans, keys) in zip(roster.lanes, drawn.spans, strict=True):
        # A lane holds its turns only (another kind of key): its prompts all go in.
        if lane.span_keys.isdisjoint(keys):
            lane.add_unique(spans, keys, "user-prompt")
        else:
            for span in spans:
                lane.add(span)
    details.update(drawn.details)
    c = counts
    c.prompt_copies += drawn.copies
    c.prompts += drawn.prompts
    c.undated_prompts = drawn.undated_count
    lanes = roster.lanes
    return [(lanes[n], seq, brief) for n, seq, brief in drawn.briefs]


def _ident(prompt: PromptRec) -> _Ident:
    return ("id", prompt.id) if prompt.id else ("text", prompt.time, prompt.body)


def _drawn_afresh(roster: Roster, token: int, inputs: tuple[_PromptInputs, ...]) -> _DrawnPrompts:
    drawn: dict[_Ident, int] = {}
    undated: set[_Ident] = set()
    briefs: list[tuple[int, int, PromptRec]] = []
    details: dict[str, Mapping[str, Any]] = {}
    per_lane: list[tuple[tuple[dict[str, Any], ...], frozenset[tuple[str, str]]]] = []
    copies = prompts = 0
    for n, lane in enumerate(roster.lanes):
        session = lane.session_id or roster.lead_session
        own = sorted(item for item in lane.fold.prompts.items() if item[0] >= lane.cut)
        # A child's parent's brief is logged as a "user" message: a message, not a prompt.
        from_parent = child_briefs(roster, lane, own)
        briefs.extend((n, seq, brief) for seq, brief in sorted(from_parent.briefs.items()))
        spans: list[dict[str, Any]] = []
        keys: set[tuple[str, str]] = set()
        for seq, prompt in own:
            if seq in from_parent.seqs:
                continue
            ident = _ident(prompt)
            if ident in drawn:
                copies += 1
                continue
            if prompt.time is None:
                undated.add(ident)
                continue
            drawn[ident] = n
            prompt_id = prompt.id or f"prompt-{seq}@{session}"
            span, detail = _prompt_span(lane, prompt_id, prompt, session)
            mark = (span["kind"], span["id"])
            if mark not in keys:  # as Lane.add: one span per key
                keys.add(mark)
                spans.append(span)
            prompts += 1
            details.setdefault(prompt_id, detail)
        per_lane.append((tuple(spans), frozenset(keys)))
    return _DrawnPrompts(
        token,
        inputs,
        tuple(per_lane),
        details,
        tuple(briefs),
        drawn,
        frozenset(undated),
        copies,
        prompts,
        len(undated - drawn.keys()),
    )


def _drawn_on(
    held: _DrawnPrompts, inputs: tuple[_PromptInputs, ...], roster: Roster
) -> _DrawnPrompts | None:
    """``held`` with the prompts appended to some lanes' logs drawn on, or ``None``
    (draw them all) when anything else changed. A new prompt is later than its lane's
    others, so it is drawn after them, as a fresh drawing would: a copy when an
    earlier-or-same lane drew its identity, else drawn; when a later lane drew it (it
    moves) or it was seen undated, or a child's prompts changed (briefs), redraw."""
    if len(inputs) != len(held.inputs):
        return None
    added: list[tuple[int, list[tuple[int, PromptRec]]]] = []
    for n, (now, was) in enumerate(zip(inputs, held.inputs, strict=True)):
        if now == was:
            continue
        if now._replace(prompts=was.prompts) != was or now.is_child:
            return None  # not only its prompts changed, or a child's (briefs)
        new = appended(was.prompts, now.prompts)
        if new is None:
            return None
        cut = now.cut
        added.append((n, [(seq, p) for seq, p in new if seq >= cut]))
    drawn_at = dict(held.drawn_at)
    undated = set(held.undated)
    details = dict(held.details)
    spans = list(held.spans)
    copies, prompts, undated_count = held.copies, held.prompts, held.undated_count
    for n, new_prompts in added:
        lane = roster.lanes[n]
        session = lane.session_id or roster.lead_session
        lane_spans, keys = list(spans[n][0]), set(spans[n][1])
        for seq, prompt in new_prompts:
            ident = _ident(prompt)
            at = drawn_at.get(ident)
            if at is not None and at <= n:
                copies += 1
                continue
            if at is not None or ident in undated:
                return None
            if prompt.time is None:
                undated.add(ident)
                undated_count += 1
                continue
            prompt_id = prompt.id or f"prompt-{seq}@{session}"
            if prompt_id in details:
                return None  # the first prompt of an id gives its detail: maybe this one
            drawn_at[ident] = n
            span, detail = _prompt_span(lane, prompt_id, prompt, session)
            mark = (span["kind"], span["id"])
            if mark not in keys:
                keys.add(mark)
                lane_spans.append(span)
            prompts += 1
            details[prompt_id] = detail
        spans[n] = (tuple(lane_spans), frozenset(keys))
    return _DrawnPrompts(
        held.token,
        inputs,
        tuple(spans),
        details,
        held.briefs,
        drawn_at,
        frozenset(undated),
        copies,
        prompts,
        undated_count,
    )


#: Each prompt's span and detail, by value and lane: a poll draws every prompt again,
#: and an unchanged one keeps its very span (so a lane's list changes only by what
#: changed). Bounded by entries (each one prompt, its preview capped; its key holds
#: the body, which the fold holds anyway).
_PROMPT_SPAN: Memo[
    tuple[str, int | None, str, int, str, str, str, str], tuple[dict[str, Any], Mapping[str, Any]]
] = Memo(1 << 13)


def _prompt_span(
    lane: Lane, prompt_id: str, prompt: PromptRec, session: str
) -> tuple[dict[str, Any], Mapping[str, Any]]:
    key = (
        prompt_id,
        prompt.time,
        prompt.body,
        prompt.length,
        lane.kind,
        lane.id,
        lane.name,
        session,
    )
    held = _PROMPT_SPAN.get(key)
    if held is not None:
        return held
    span = {
        "kind": "user-prompt",
        "id": prompt_id,
        "time": prompt.time,
        "end": None,
        "from": shared_party(USER),
        "to": lane.party(),
        "direction": "incoming",
        "preview": preview(prompt.body),
        "sessionId": session,
    }
    detail = message_detail_json(
        prompt_id, USER, lane.party(), None, prompt.time, prompt.body, prompt.length
    )
    return _PROMPT_SPAN.put(key, (span, detail), owner=session)


def sorted_spans(lane: Lane) -> list[dict[str, Any]]:
    """The lane's spans by time (turns, then messages, then prompts at one time)."""
    lane_key = (lane.id, lane.session_id)
    held = _SORTED_SPANS.get(lane_key)
    if held is not None and _equal_parts(held[1], lane.parts):
        return held[0]
    ordered = _resorted(held, lane) if held is not None else None
    if ordered is None:
        ordered = sorted(chain.from_iterable(lane.parts), key=_span_order)
    _SORTED_SPANS.put(lane_key, (ordered, tuple(lane.parts)), owner=lane.session_id)
    return ordered


def _span_order(span: dict[str, Any]) -> tuple[int, int, str]:
    return (span["time"], _KIND_ORDER[span["kind"]], span["id"])


def _equal_parts(
    was: Sequence[Sequence[dict[str, Any]]], now: Sequence[Sequence[dict[str, Any]]]
) -> bool:
    """Whether a lane's parts hold the very spans they held, part by part (a part drawn
    whole is mostly the very sequence again: no pass over it)."""
    return len(was) == len(now) and all(a is b or a == b for a, b in zip(was, now, strict=True))


#: Past this many new spans a lane is sorted afresh, not patched.
_INSERTED_AT_MOST = 256


def _resorted(held: _Sorted, lane: Lane) -> list[dict[str, Any]] | None:
    """The last sorted list with the spans gone taken out and the new ones put in (by
    identity: an unchanged span is the very same dict), or ``None`` when most are new.
    A lane's ``(kind, id)`` are distinct, so the order is total and this is ``sorted``'s."""
    ordered, was_parts = held
    changes = parts_changes(was_parts, lane.parts)
    if changes is None:
        changes = identity_changes(list(chain.from_iterable(was_parts)), lane.spans)
    if changes is None:
        return None  # a span twice: not a lane's list
    gone, added = changes
    if len(gone) + len(added) > _INSERTED_AT_MOST:
        return None
    was_ordered, ordered = ordered, list(ordered)
    kept = len(ordered)  # the head no change reached (said to common_head's readers)
    for span in gone:
        at = bisect_left(ordered, _span_order(span), key=_span_order)
        if at == len(ordered) or ordered[at] is not span:
            return None
        del ordered[at]
        kept = min(kept, at)
    for span in added:
        at = bisect_right(ordered, _span_order(span), key=_span_order)  # insort's place
        ordered.insert(at, span)
        kept = min(kept, at)
    note_head(was_ordered, ordered, kept, slot=("sorted spans", lane.id, lane.session_id))
    return ordered
